/* trigger.c - annotation-triggered profiling (poststart).
 *
 * flamesidecar.io/profile=30s [flamesidecar.io/delay=5s]
 * [flamesidecar.io/frequency=99] [flamesidecar.io/event=cpu|offcpu|wall]
 * on an enabled container makes the hook
 * start a detached monitor (double fork, setsid, no inherited descriptors,
 * a minimal environment) and return at once. The monitor waits the delay,
 * runs `flamesidecar run <id>` writing to the host profile directory set
 * by the config (never a path from an annotation), waits for it, and
 * removes its in-progress marker <run_dir>/profiling/<id>.json.
 * Durations and frequency are capped by config; values that are not plain
 * numbers with a unit are refused; so is a trigger beyond
 * max_concurrent_profiles. An event that is not one of the three is
 * logged and the profile is a CPU one (the annotation asks for a kind of
 * graph, not whether to profile). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "hook.h"
#include "logfile.h"
#include "marker.h"
#include "proc.h"
#include "profquota.h"
#include "timeutil.h"

/* flamesidecar.io/event: exactly "cpu", "offcpu" or "wall" (no case
 * folding, no spaces, no prefixes: the value becomes an argument of
 * `run`); anything else is noted and gives "cpu". */
static void trigger_plan_event(const char *ev, struct trigger_plan *p, char *note, size_t note_len)
{
	static const char *const events[] = {"cpu", "offcpu", "wall"};
	p->event = events[0];
	if (!ev[0])
		return;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(ev, events[i])) {
			p->event = events[i];
			return;
		}
	size_t l = strlen(note);
	/* the log line escapes what is not printable (logfile_format) */
	snprintf(note + l, note_len - l,
		 "%sflamesidecar.io/event \"%s\" is not cpu, offcpu or wall: a cpu profile",
		 l ? "; " : "", ev);
}

int trigger_plan(const struct fs_config *cfg, const struct registry_entry *e,
		 struct trigger_plan *p, char *note, size_t note_len, struct fs_error *err)
{
	unsigned long long ms;
	note[0] = '\0';
	memset(p, 0, sizeof(*p));
	if (cfg->max_concurrent_profiles == 0)
		return fs_error_set(
		    err, EPERM, "triggered profiling is disabled (max_concurrent_profiles is 0)");
	if (timeutil_parse_duration_ms(e->profile, &ms) < 0 || ms < 1000)
		return fs_error_set(
		    err, EINVAL,
		    "flamesidecar.io/profile must be a duration like 30s, 2m or 1h of at least 1s");
	/* Compared in 64 bits before narrowing: 1193047h is 2^32 s and a
	 * few, which an unsigned would wrap to half an hour. */
	unsigned long long secs = (ms + 999) / 1000;
	p->duration_s = (unsigned)secs;
	if (secs > cfg->max_profile_seconds) {
		snprintf(note, note_len, "duration capped from %llus to %us (max_profile_seconds)",
			 secs, cfg->max_profile_seconds);
		p->duration_s = cfg->max_profile_seconds;
	}
	p->delay_s = cfg->default_delay_seconds;
	if (e->delay[0]) {
		if (timeutil_parse_duration_ms(e->delay, &ms) < 0)
			return fs_error_set(err, EINVAL,
					    "flamesidecar.io/delay must be a duration like 10s");
		secs = (ms + 999) / 1000;
	} else {
		secs = p->delay_s;
	}
	p->delay_s = (unsigned)secs;
	if (secs > cfg->max_profile_seconds) {
		size_t l = strlen(note);
		snprintf(note + l, note_len - l, "%sdelay capped from %llus to %us", l ? "; " : "",
			 secs, cfg->max_profile_seconds);
		p->delay_s = cfg->max_profile_seconds;
	}
	p->frequency = 99;
	if (e->frequency[0]) {
		char *end;
		errno = 0;
		unsigned long f = strtoul(e->frequency, &end, 10);
		if (errno || end == e->frequency || (strcmp(end, "") && strcmp(end, "Hz")) ||
		    e->frequency[0] < '1' || e->frequency[0] > '9')
			return fs_error_set(
			    err, EINVAL,
			    "flamesidecar.io/frequency must be a number of Hz like 99");
		if (f > cfg->max_frequency) {
			size_t l = strlen(note);
			snprintf(note + l, note_len - l, "%sfrequency capped from %lu to %u Hz",
				 l ? "; " : "", f, cfg->max_frequency);
			f = cfg->max_frequency;
		}
		p->frequency = (unsigned)f;
	}
	trigger_plan_event(e->event, p, note, note_len);
	return 0;
}

/* Take one of the max_concurrent_profiles slots: an exclusive flock on
 * <markdir>/.slot-<k>, held by the monitor for as long as it lives (the
 * kernel drops it when it exits, however it exits). Taking the lock is the
 * count: two hooks started at once cannot both see a free slot, as they
 * could when markers were counted and written afterwards. The fd, or -1
 * when every slot is taken (or on an error, with *why set). */
static int trigger_take_slot(int markdir_fd, unsigned max, const char **why)
{
	*why = NULL;
	for (unsigned k = 0; k < max; k++) {
		char name[32];
		snprintf(name, sizeof(name), ".slot-%u", k);
		int fd = openat(markdir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			*why = strerror(errno);
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != EWOULDBLOCK) {
			*why = strerror(e);
			return -1;
		}
	}
	return -1;
}

/* The fair share: the slot just taken (slot_fd) says whose it is (the
 * quota key, written into it), then the other held slots are read. Each
 * hook writes before it reads, so of two hooks of one key started at once
 * the later reader sees the earlier writer: they cannot both pass. Slots
 * whose lock nobody holds are stale (their monitor is gone) and ignored.
 * The number of slots key holds, this one included. */
static unsigned trigger_slots_of(int markdir_fd, int slot_fd, unsigned max, const char *key)
{
	size_t kl = strlen(key);
	unsigned held = 1;
	if (ftruncate(slot_fd, 0) < 0 || pwrite(slot_fd, key, kl, 0) != (ssize_t)kl)
		return held; /* unknown: counted alone */
	struct stat self;
	if (fstat(slot_fd, &self) < 0)
		return held;
	for (unsigned k = 0; k < max; k++) {
		char name[32], buf[PROFQUOTA_KEY_MAX + 1];
		struct stat sb;
		snprintf(name, sizeof(name), ".slot-%u", k);
		cleanup_close int fd = openat(markdir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_ino == self.st_ino)
			continue;
		if (flock(fd, LOCK_SH | LOCK_NB) == 0)
			continue; /* nobody holds it */
		ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);
		if (r == (ssize_t)kl && !memcmp(buf, key, kl))
			held++;
	}
	return held;
}

/* Make room for one more profile of key under the quotas (removing the
 * oldest, or refusing, as configured), then create its directory with
 * the key beside the files. 0, or -1 after a log line saying why not. */
static int trigger_quota(const struct fs_config *cfg, const struct registry_entry *e,
			 const char *key, const char *outdir, const char *stage)
{
	cleanup_close int lock = profquota_lock(cfg);
	if (lock < 0) {
		log_warn(stage, e->id, "profile trigger refused: quota lock in %s: %s",
			 cfg->profile_dir, strerror(-lock));
		return -1;
	}
	struct profquota_limits lim;
	profquota_limits_from_config(cfg, &lim);
	cleanup_free struct profquota_item *items = NULL;
	size_t n = 0;
	int r = profquota_scan(cfg, &items, &n);
	if (r < 0) {
		log_warn(stage, e->id, "profile trigger refused: reading %s: %s", cfg->profile_dir,
			 strerror(-r));
		return -1;
	}
	int room = profquota_plan(items, n, key, &lim, (int64_t)time(NULL));
	const char *full = room ? NULL : "quota full of profiles still being written";
	if (cfg->profile_quota_refuse)
		for (size_t i = 0; i < n; i++)
			if (items[i].remove && strcmp(items[i].why, "age")) {
				items[i].remove = 0;
				full = items[i].why;
			}
	for (size_t i = 0; i < n; i++) {
		char ekey[PROFQUOTA_KEY_MAX * 4 + 1];
		if (!items[i].remove)
			continue;
		logfile_escape(items[i].key, ekey, sizeof(ekey), 0);
		log_info(stage, e->id, "profile quota: removing %s/%s/%s (%s, %s)",
			 cfg->profile_dir, items[i].id, items[i].base, items[i].why, ekey);
	}
	profquota_apply(cfg, items, n);
	if (full) {
		char ekey[PROFQUOTA_KEY_MAX * 4 + 1];
		logfile_escape(key, ekey, sizeof(ekey), 0);
		log_warn(stage, e->id,
			 "profile trigger refused: %s (%s; %u profiles, %u MiB per container, "
			 "%u profiles, %u MiB in all)",
			 full, ekey, cfg->max_profiles_per_container,
			 cfg->max_profile_mib_per_container, cfg->max_profiles_total,
			 cfg->max_profile_mib_total);
		return -1;
	}
	if (fileio_mkdir_p(outdir, 0755, 0700) < 0) {
		log_warn(stage, e->id, "profile trigger refused: cannot create %s", outdir);
		return -1;
	}
	cleanup_close int dfd = open(outdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct fs_error err;
	if (dfd < 0 ||
	    fileio_replace_buf(dfd, outdir, PROFQUOTA_KEY_FILE, 0600, key, strlen(key), &err) < 0)
		log_warn(stage, e->id, "profile quota key not written in %s", outdir);
	return 0;
}

/* <run_dir>/profiling/<id>.json (lib/marker.h): who is profiling what,
 * for `list` and for the concurrency cap. Written by the monitor about
 * itself. */
static void trigger_write_marker(const char *marker, const struct registry_entry *e,
				 const struct trigger_plan *p, const char *svg)
{
	struct marker m = {.pid = getpid(),
			   .started = time(NULL),
			   .delay = p->delay_s,
			   .duration = p->duration_s,
			   .frequency = p->frequency};
	snprintf(m.id, sizeof(m.id), "%s", e->id);
	snprintf(m.output, sizeof(m.output), "%s", svg);
	proc_start_time(m.pid, &m.start_time, NULL);
	if (marker_write(marker, &m) < 0) {
		/* best effort: without it the profile runs but is not listed */
	}
}

int trigger_wait(pid_t pid, uint64_t deadline, int *status)
{
	*status = 0;
	int pidfd = pidfd_open(pid, 0);
	if (pidfd >= 0) {
		struct pollfd pf = {.fd = pidfd, .events = POLLIN};
		int r;
		while ((r = poll(&pf, 1, timeutil_remaining_ms(deadline))) < 0 && errno == EINTR)
			;
		if (r == 0) {
			pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
			/* A killed task dies at once unless the kernel holds it. */
			while ((r = poll(&pf, 1, TRIGGER_KILL_GRACE_MS)) < 0 && errno == EINTR)
				;
			close(pidfd);
			if (r <= 0)
				return 2; /* reparented to init when the monitor exits */
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return 1;
		}
		close(pidfd);
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* The monitor: runs in the grandchild, detached. Never returns. */
static void trigger_monitor(const struct fs_config *cfg, const char *config_path,
			    const struct registry_entry *e, const struct trigger_plan *p,
			    const char *marker, const char *base)
{
	char svg[PATH_MAX + 8], folded[PATH_MAX + 8], pprof[PATH_MAX + 8], logp[PATH_MAX + 8];
	char dur[32], freq[32], exact[64];
	snprintf(exact, sizeof(exact), "%d:%llu", (int)e->pid, (unsigned long long)e->start_time);
	snprintf(svg, sizeof(svg), "%s.svg", base);
	snprintf(folded, sizeof(folded), "%s.folded", base);
	snprintf(pprof, sizeof(pprof), "%s.pb.gz", base);
	snprintf(logp, sizeof(logp), "%s.log", base);
	snprintf(dur, sizeof(dur), "%us", p->duration_s);
	snprintf(freq, sizeof(freq), "%u", p->frequency);
	if (p->delay_s) {
		struct timespec ts = {.tv_sec = p->delay_s};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int lfd = open(logp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (lfd >= 0) {
			dup2(lfd, STDOUT_FILENO);
			dup2(lfd, STDERR_FILENO);
		}
		const char *argv[24];
		int a = 0;
		argv[a++] = "flamesidecar";
		if (config_path) {
			argv[a++] = "--config";
			argv[a++] = config_path;
		}
		argv[a++] = "run";
		/* This very container, or nothing: if it exited during the
		 * delay, its id must not resolve to another container by name
		 * or prefix. */
		argv[a++] = "--exact-process";
		argv[a++] = exact;
		argv[a++] = e->id;
		argv[a++] = "-d";
		argv[a++] = dur;
		argv[a++] = "-F";
		argv[a++] = freq;
		argv[a++] = "--event";
		argv[a++] = p->event;
		argv[a++] = "-o";
		argv[a++] = svg;
		argv[a++] = "--folded";
		argv[a++] = folded;
		argv[a++] = "--pprof";
		argv[a++] = pprof;
		argv[a++] = "--quiet";
		argv[a] = NULL;
		char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
		execve(cfg->sidecar_path, (char *const *)argv, envp);
		log_error("profile", e->id, "cannot run %s: %s", cfg->sidecar_path,
			  strerror(errno));
		_exit(127);
	}
	int status = 0, waited = 0;
	if (pid > 0)
		waited = trigger_wait(pid,
				      timeutil_now_ms() +
					  ((uint64_t)p->duration_s + TRIGGER_RUN_MARGIN_S) * 1000,
				      &status);
	unlink(marker);
	if (pid < 0)
		log_error("profile", e->id, "cannot start the profiler: %s", strerror(errno));
	else if (waited > 0)
		log_warn("profile", e->id,
			 "profiler %s at its deadline (%u s window + %u s); see %s",
			 waited == 1 ? "killed" : "killed but stuck in the kernel, abandoned",
			 p->duration_s, TRIGGER_RUN_MARGIN_S, logp);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		log_info("profile", e->id, "profile written: %s", svg);
	else
		log_error("profile", e->id, "profiler failed (status %d); see %s", status, logp);
	_exit(0);
}

/* Make <run_dir>/profiling (private) and take one of its slots for e (key:
 * its quota key). The slot's lock fd, or -1 after logging why not. */
static int trigger_claim_slot(const struct fs_config *cfg, const struct registry_entry *e,
			      const char *key, const char *stage, char *markdir, size_t mlen)
{
	snprintf(markdir, mlen, "%s/" MARKER_DIR, cfg->run_dir);
	if (fileio_mkdir_p(markdir, 0755, 0700) < 0) {
		log_warn(stage, e->id, "profile trigger refused: cannot create %s", markdir);
		return -1;
	}
	cleanup_close int mdfd = open(markdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (mdfd < 0) {
		log_warn(stage, e->id, "profile trigger refused: cannot open %s", markdir);
		return -1;
	}
	struct fs_error derr;
	if (fileio_check_private_dir(mdfd, markdir, &derr) < 0) {
		log_warn(stage, e->id, "profile trigger refused: %s", derr.msg);
		return -1;
	}
	const char *why;
	cleanup_close int slot = trigger_take_slot(mdfd, cfg->max_concurrent_profiles, &why);
	if (slot < 0) {
		if (why)
			log_warn(stage, e->id, "profile trigger refused: slot in %s: %s", markdir,
				 why);
		else
			log_warn(stage, e->id,
				 "profile trigger refused: %u profiles already running "
				 "(max_concurrent_profiles %u)",
				 cfg->max_concurrent_profiles, cfg->max_concurrent_profiles);
		return -1;
	}
	unsigned held = trigger_slots_of(mdfd, slot, cfg->max_concurrent_profiles, key);
	if (held > cfg->max_concurrent_profiles_per_container) {
		char ekey[PROFQUOTA_KEY_MAX * 4 + 1];
		logfile_escape(key, ekey, sizeof(ekey), 0);
		log_warn(stage, e->id,
			 "profile trigger refused: %s already has %u profiles running "
			 "(max_concurrent_profiles_per_container %u)",
			 ekey, held - 1, cfg->max_concurrent_profiles_per_container);
		return -1;
	}
	return steal_fd(&slot);
}

/* How long the hook waits for the monitor's marker (it is written first
 * thing: this bounds a machine too loaded to schedule it). */
#define TRIGGER_MARKER_WAIT_MS 500

/* Until the monitor closes its end of the pipe (its marker is written,
 * or it is gone), at most TRIGGER_MARKER_WAIT_MS. */
static void trigger_wait_marker(int fd)
{
	uint64_t deadline = timeutil_now_ms() + TRIGGER_MARKER_WAIT_MS;
	char c;
	for (;;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int r = poll(&pf, 1, timeutil_remaining_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || read(fd, &c, 1) <= 0)
			return; /* deadline, or EOF: the marker is there */
	}
}

/* Start the monitor of e's profile: a first child in a new session forks
 * it (so that it is reparented, never a runtime's child) with the slot
 * lock as its fd 3 and nothing else of ours. The monitor writes its
 * marker before anything else, and the hook returns once it is there
 * (bounded): whoever looks right after the container started (`list
 * --profiles`, a test waiting for the profile to end) sees it pending.
 * 0 once the first child is reaped, or -errno when it could not be
 * forked. */
static int trigger_spawn(const struct fs_config *cfg, const char *config_path,
			 const struct registry_entry *e, const struct trigger_plan *plan, int slot,
			 const char *marker, const char *base)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		ready[0] = ready[1] = -1;
	pid_t child = fork();
	if (child < 0) {
		int r = -errno;
		if (ready[0] >= 0) {
			close(ready[0]);
			close(ready[1]);
		}
		return r;
	}
	if (child == 0) {
		setsid();
		signal(SIGHUP, SIG_IGN);
		if (fork() != 0)
			_exit(0);
		char svg[PATH_MAX + 8];
		snprintf(svg, sizeof(svg), "%s.svg", base);
		trigger_write_marker(marker, e, plan, svg);
		if (ready[1] >= 0)
			close(ready[1]); /* the hook may return */
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul >= 0) {
			dup2(nul, STDIN_FILENO);
			dup2(nul, STDOUT_FILENO);
			dup2(nul, STDERR_FILENO);
		}
		/* No descriptor of the runtime's reaches the profiler; the
		 * slot lock (fd 3, close-on-exec) stays with the monitor. */
		if (slot != 3 && (dup2(slot, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
			_exit(1);
		closefrom(4);
		hook_log_open(cfg);
		signal(SIGALRM, SIG_DFL);
		alarm(0);
		if (chdir("/") < 0)
			_exit(1);
		trigger_monitor(cfg, config_path, e, plan, marker, base);
	}
	if (ready[1] >= 0)
		close(ready[1]);
	int st;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (ready[0] >= 0) {
		trigger_wait_marker(ready[0]);
		close(ready[0]);
	}
	return 0;
}

int hook_trigger(const struct fs_config *cfg, const char *config_path,
		 const struct registry_entry *e, const char *stage)
{
	struct fs_error err;
	struct trigger_plan plan;
	char note[512];
	if (trigger_plan(cfg, e, &plan, note, sizeof(note), &err) < 0) {
		log_warn(stage, e->id, "profile trigger refused: %s", err.msg);
		return 0;
	}
	if (note[0])
		log_warn(stage, e->id, "profile trigger: %s", note);
	char markdir[PATH_MAX], marker[PATH_MAX + 140], outdir[PATH_MAX + 140],
	    base[PATH_MAX + 180];
	char key[PROFQUOTA_KEY_MAX + 1];
	profquota_key(e, key, sizeof(key));
	cleanup_close int slot = trigger_claim_slot(cfg, e, key, stage, markdir, sizeof(markdir));
	if (slot < 0)
		return 0;
	snprintf(outdir, sizeof(outdir), "%s/%s", cfg->profile_dir, e->id);
	if (trigger_quota(cfg, e, key, outdir, stage) < 0)
		return 0;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(base, sizeof(base), "%s/%s", outdir, ts);
	snprintf(marker, sizeof(marker), "%s/%s.json", markdir, e->id);
	int r = trigger_spawn(cfg, config_path, e, &plan, slot, marker, base);
	if (r < 0) {
		log_error(stage, e->id, "profile trigger failed: fork: %s", strerror(-r));
		return 0;
	}
	log_info(stage, e->id, "profiling: %us at %u Hz after %us -> %s.svg (event %s)",
		 plan.duration_s, plan.frequency, plan.delay_s, base, plan.event);
	return 0;
}
