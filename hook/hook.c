/* hook.c - flamehook: what each OCI hook stage does.
 *
 * Fail-open: whatever goes wrong is logged with the container id and the
 * hook exits 0, so a profiler never stops a workload from starting. The
 * one exception is a mount that is attached writable and cannot be taken
 * away again (exit 1). An alarm bounds the whole run. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "deadmark.h"
#include "hook.h"
#include "logfile.h"
#include "json.h"
#include "proc.h"

/* What the deadline leaves (lib/deadmark.h), once the container is known. */
static struct deadmark hook_dead;
static volatile sig_atomic_t hook_dead_armed;
/* Between the config and the state, the container is not known yet: a
 * deadline then is noted (hook_dead_missed), given a last second to read
 * the state, and reported for the container once it is known. */
static volatile sig_atomic_t hook_dead_pending, hook_dead_missed;

static void hook_alarm(int sig)
{
	static const char msg[] =
	    "flamehook: deadline reached; giving up (container not affected)\n";
	(void)sig;
	if (hook_dead_pending && !hook_dead_missed) {
		hook_dead_missed = 1;
		alarm(1);
		return;
	}
	if (hook_dead_armed)
		hook_dead.phase = hook_phase_last();
	deadmark_fire(&hook_dead);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* exiting anyway */
	}
	_exit(0);
}

/* The deadline in milliseconds (0: none). */
static void hook_deadline(unsigned ms)
{
	struct itimerval it = {.it_value = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

/* From here a deadline leaves a log line (and, for a container being
 * registered, a marker `list` shows). */
static void hook_arm_deadline(const struct fs_config *cfg, const struct hook_state *st,
			      const char *stage, int registering)
{
	uint64_t start_time = 0;
	if (registering && st->pid > 1)
		proc_start_time(st->pid, &start_time, NULL);
	deadmark_prepare(&hook_dead, log_get_fd(), cfg->run_dir, registering && st->pid > 1, stage,
			 st->id, st->pid, start_time, cfg->hook_timeout_ms);
	hook_dead_armed = 1;
}

static void hook_usage(FILE *out)
{
	fprintf(out,
		"Usage: flamehook [--config FILE] STAGE < state.json\n\n"
		"OCI runtime hook of flamesidecar. The runtime passes the container state\n"
		"JSON on stdin. STAGE is createRuntime or prestart (bind-mount the agent\n"
		"bundle read-only and register the container), poststart (check the entry),\n"
		"or poststop (remove the entry). STAGE precreate (Podman/CRI-O hooks.d)\n"
		"reads the proposed OCI config on stdin instead and prints it, with\n"
		"-XX:+PreserveFramePointer appended to JAVA_TOOL_OPTIONS for an opted-in\n"
		"container, unchanged otherwise. Always exits 0 unless a writable mount\n"
		"could not be removed.\n\n"
		"Options:\n"
		"  --config FILE  host configuration (default %s)\n"
		"  --timing       log how long each phase took (for benchmarks)\n"
		"  --opt-in       the container opted in (added by flamesidecar-runtime for\n"
		"                 --opt-in runtimes and FLAMESIDECAR_ENABLE=1 containers)\n"
		"  --version      print the version\n"
		"  -h, --help     this text\n\n"
		"Examples:\n"
		"  flamehook createRuntime < state.json\n"
		"  flamehook precreate < config.json > config.new.json\n"
		"  hooks.d entry: {\"path\": \"/usr/bin/flamehook\", \"args\": [\"flamehook\", "
		"\"prestart\"]}\n",
		CONFIG_DEFAULT_PATH);
}

/* opt_in: the wrapper put --opt-in in our arguments (its own --opt-in, or
 * FLAMESIDECAR_ENABLE=1 in the container's environment). "never" wins. */
static int hook_opted_in(const struct fs_config *cfg, const struct hook_state *st, int opt_in)
{
	switch (cfg->enable) {
	case CONFIG_ENABLE_ALWAYS: return 1;
	case CONFIG_ENABLE_NEVER: return 0;
	default: return st->enable || opt_in;
	}
}

/* The names the engine gave, into the entry: the engine's record on disk
 * wins over an annotation's claim (names.c), and the entry says which one
 * it got. A failure costs the engine's name, not the entry. */
static void hook_entry_names(struct hook_state *st, const struct hook_bundle *b,
			     struct registry_entry *e, const char *stage)
{
	struct fs_error err;
	if (hook_names_from_engine_state(st->bundle, b->hostname_src, st, &err) < 0)
		log_warn(stage, st->id, "engine's record of the name unreadable%s: %s",
			 st->name[0] ? " (keeping the annotation's)" : "", err.msg);
	e->name_source = st->name_source;
	snprintf(e->engine, sizeof(e->engine), "%s", st->engine);
	snprintf(e->name, sizeof(e->name), "%s", st->name);
	snprintf(e->pod, sizeof(e->pod), "%s", st->pod);
	snprintf(e->pod_namespace, sizeof(e->pod_namespace), "%s", st->pod_namespace);
	snprintf(e->container, sizeof(e->container), "%s", st->container);
}

/* The entry's facts about the container's init process (the caller has
 * pinned it with a pidfd). -1 after a warning when it is not registrable. */
static int hook_entry_process(const struct hook_state *st, int pidfd, struct registry_entry *e,
			      const char *stage)
{
	struct fs_error err;
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", st->id);
	e->pid = st->pid;
	struct proc_status ps;
	uint64_t self_pid_ns, self_mnt_ns;
	if (proc_start_time(st->pid, &e->start_time, &err) < 0 ||
	    proc_status_read(st->pid, &ps, &err) < 0 ||
	    proc_ns_inode(st->pid, "pid", &e->pid_ns, &err) < 0 ||
	    proc_ns_inode(st->pid, "mnt", &e->mnt_ns, &err) < 0 ||
	    proc_ns_inode(getpid(), "pid", &self_pid_ns, &err) < 0 ||
	    proc_ns_inode(getpid(), "mnt", &self_mnt_ns, &err) < 0) {
		log_warn(stage, st->id, "not registered: %s", err.msg);
		return -1;
	}
	/* A container has its own mount and pid namespaces; a state that
	 * points at a host process would have us mount on the host. */
	if (e->mnt_ns == self_mnt_ns || e->pid_ns == self_pid_ns) {
		log_warn(
		    stage, st->id,
		    "refusing: pid %d shares the hook's %s namespace (not a container process)",
		    (int)st->pid, e->mnt_ns == self_mnt_ns ? "mount" : "pid");
		return -1;
	}
	/* Everything above was read by pid string: still the pidfd's
	 * process, started when we first read it? */
	if (proc_pidfd_recheck(pidfd, st->pid, e->start_time, &err) < 0) {
		log_warn(stage, st->id, "not registered: %s", err.msg);
		return -1;
	}
	e->ns_pid = proc_status_ns_pid(&ps);
	e->host_pid_ns = self_pid_ns;
	return 0;
}

/* Whether the state names a container to register: 1, or 0 after logging
 * why not. */
static int hook_create_wanted(const struct hook_state *st, const char *stage)
{
	if (st->pid <= 1) {
		log_warn(stage, st->id, "refusing: state has pid %d", (int)st->pid);
		return 0;
	}
	if (!st->bundle[0]) {
		log_warn(stage, st->id, "refusing: state has no bundle path");
		return 0;
	}
	if (st->sandbox) {
		/* The pod's "pause" process: nothing to profile, and a pod
		 * annotation reaches it like every container of the pod. */
		log_info(stage, st->id, "pod sandbox %s/%s: not registered", st->pod_namespace,
			 st->pod);
		return 0;
	}
	return 1;
}

/* The entry's facts from the bundle and the state's annotations. */
static void hook_entry_bundle(struct registry_entry *e, const struct hook_state *st,
			      const struct hook_bundle *b)
{
	e->uid = b->uid;
	e->gid = b->gid;
	snprintf(e->rootfs, sizeof(e->rootfs), "%s", b->rootfs);
	snprintf(e->bundle, sizeof(e->bundle), "%s", st->bundle);
	snprintf(e->hook_version, sizeof(e->hook_version), "%s", FS_VERSION);
	snprintf(e->profile, sizeof(e->profile), "%s", st->profile);
	snprintf(e->delay, sizeof(e->delay), "%s", st->delay);
	snprintf(e->frequency, sizeof(e->frequency), "%s", st->frequency);
	snprintf(e->event, sizeof(e->event), "%s", st->event);
	e->created = (int64_t)time(NULL);
}

static void hook_log_registered(const char *stage, const struct registry_entry *e)
{
	log_info(stage, e->id, "registered pid %d (ns pid %d, uid %u)%s%s%s%s%s%s%s%s", (int)e->pid,
		 (int)e->ns_pid, (unsigned)e->uid,
		 e->mount_point[0] ? ", bundle at " : ", no bundle", e->mount_point,
		 e->name[0] ? ", name " : "", e->name, e->pod[0] ? ", pod " : "", e->pod_namespace,
		 e->pod[0] ? "/" : "", e->pod);
}

static int hook_create(const struct fs_config *cfg, struct hook_state *st, const char *stage)
{
	struct fs_error err;
	char regdir[PATH_MAX];
	config_registry_dir(cfg, regdir, sizeof(regdir));
	if (!hook_create_wanted(st, stage))
		return 0;
	/* Pin the process first, then read its facts: they are then its. */
	hook_mark("config+state");
	cleanup_close int pidfd = proc_pidfd_open_checked(st->pid, 0, &err);
	if (pidfd < 0) {
		log_warn(stage, st->id, "not registered: %s", err.msg);
		return 0;
	}
	struct registry_entry e;
	if (hook_entry_process(st, pidfd, &e, stage) < 0)
		return 0;

	hook_mark("proc");
	struct hook_bundle b;
	if (hook_bundle_read(st->bundle, &b, &err) < 0) {
		log_warn(stage, st->id, "not registered: %s", err.msg);
		return 0;
	}
	hook_entry_bundle(&e, st, &b);
	hook_mark("bundle");
	hook_entry_names(st, &b, &e, stage);
	hook_mark("names");

	/* Opened before the mount: that moves the hook into the container's
	 * mount namespace, where no path of ours may be looked up again. */
	cleanup_close int regfd = registry_dir_open(regdir, &err);
	if (regfd < 0) {
		log_warn(stage, st->id, "not registered: %s", err.msg);
		return 0;
	}
	/* The entry first, naming the mount point it is about to get: a full
	 * or fd-starved /run then costs the mount too, and a mount never
	 * exists without its entry (nothing half-done). */
	struct stat sb;
	int want_mount = stat(cfg->bundle_dir, &sb) == 0 && S_ISDIR(sb.st_mode);
	if (!want_mount)
		log_warn(stage, st->id, "agent bundle %s is missing; registering without a mount",
			 cfg->bundle_dir);
	else
		snprintf(e.mount_point, sizeof(e.mount_point), "%s", cfg->mount_point);
	if (registry_write_at(regfd, regdir, &e, &err) < 0) {
		log_warn(stage, st->id, "not registered, bundle not mounted: %s", err.msg);
		return 0;
	}
	/* After the entry: a lookup by name never finds an index file
	 * before the entry it names. A failure costs the index (set aside,
	 * rebuilt by the next lookup), not the entry. */
	if (registry_index_add(regfd, &e, &err) < 0)
		log_warn(stage, st->id, "%s", err.msg);
	hook_mark("registry");
	if (want_mount) {
		int r = hook_mount_bundle(cfg, pidfd, st->pid, b.rootfs, &err);
		if (r == -ENOTRECOVERABLE) {
			log_error(stage, st->id, "FATAL: %s", err.msg);
			registry_remove_at(regfd, e.id);
			return 1;
		}
		if (r < 0) {
			log_warn(stage, st->id, "agent bundle not mounted: %s", err.msg);
			e.mount_point[0] = '\0';
			if (registry_write_at(regfd, regdir, &e, &err) < 0) {
				log_warn(stage, st->id, "not registered: %s", err.msg);
				registry_remove_at(regfd, e.id);
				return 0;
			}
		}
	}
	hook_mark("attach");
	hook_log_registered(stage, &e);
	hook_mark("log");
	hook_timing_log(stage, st->id);
	return 0;
}

static int hook_poststart(const struct fs_config *cfg, const char *config_path,
			  const struct hook_state *st, const char *stage)
{
	struct fs_error err;
	char regdir[PATH_MAX];
	struct registry_entry e;
	config_registry_dir(cfg, regdir, sizeof(regdir));
	if (registry_read(regdir, st->id, &e, &err) < 0) {
		log_warn(stage, st->id, "no registry entry: %s", err.msg);
		return 0;
	}
	if (!registry_entry_alive(&e) || (st->pid && st->pid != e.pid)) {
		log_warn(stage, st->id,
			 "registry entry does not match the running container (pid %d)",
			 (int)st->pid);
		return 0;
	}
	if (e.profile[0])
		return hook_trigger(cfg, config_path, &e, stage);
	return 0;
}

static int hook_poststop(const struct fs_config *cfg, const struct hook_state *st,
			 const char *stage)
{
	struct fs_error err;
	char regdir[PATH_MAX];
	config_registry_dir(cfg, regdir, sizeof(regdir));
	int r = registry_remove(regdir, st->id, &err);
	if (r < 0 && r != -ENOENT)
		log_warn(stage, st->id, "removing the registry entry: %s", err.msg);
	else if (r == 0)
		log_info(stage, st->id, "unregistered");
	return 0;
}

/* The container's state from stdin (bounded, container input): 0, or -1
 * after logging why it is unusable. */
static int hook_read_state(const struct fs_config *cfg, int stdin_fd, const char *stage,
			   struct hook_state *st)
{
	struct fs_error err;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	if (json_read_fd(stdin_fd, HOOK_STATE_MAX, &buf, &len, &err) < 0) {
		hook_log_open(cfg);
		log_error(stage, NULL, "state unreadable, nothing done: %s", err.msg);
		return -1;
	}
	if (hook_state_parse(buf, len, st, &err) < 0) {
		hook_log_open(cfg);
		log_warn(stage, NULL, "state rejected, nothing done: %s", err.msg);
		return -1;
	}
	return 0;
}

int hook_main(int argc, char **argv, int stdin_fd)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {"opt-in", no_argument, NULL, 'o'},
	    {"timing", no_argument, NULL, 't'},	      {NULL, 0, NULL, 0},
	};
	const char *config_path = NULL;
	int c, opt_in = 0;
	/* A hard bound before anything else; tightened once the config is read. */
	signal(SIGALRM, hook_alarm);
	alarm(5);
	int timing = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'o': opt_in = 1; break;
		case 't': timing = 1; break;
		case 'h': hook_usage(stdout); return 0;
		case 'V': printf("flamehook %s\n", FS_VERSION); return 0;
		default: hook_usage(stderr); return 0;
		}
	}
	hook_log_start();
	hook_phase_start(timing);
	if (optind >= argc) {
		log_warn("?", NULL, "no stage given; nothing done");
		return 0;
	}
	const char *stage = argv[optind];
	if (!strcmp(stage, "precreate"))
		return hook_precreate(config_path, stdin_fd);
	char estage[64];
	logfile_escape(stage, estage, sizeof(estage), 0);
	enum hook_stage st_kind;
	if (hook_stage_parse(stage, &st_kind) < 0) {
		log_warn(estage, NULL, "unknown stage; nothing done");
		return 0;
	}

	struct fs_config cfg;
	struct fs_error err;
	if (config_load(config_path, &cfg, &err) < 0) {
		log_error(stage, NULL, "configuration unusable, nothing done: %s", err.msg);
		return 0;
	}
	hook_dead_pending = 1;
	hook_deadline(cfg.hook_timeout_ms);

	struct hook_state st;
	if (hook_read_state(&cfg, stdin_fd, stage, &st) < 0)
		return 0;
	if (!hook_opted_in(&cfg, &st, opt_in))
		return 0;
	/* A pod sandbox is never registered (hook_create says so once). */
	if (st.sandbox && st_kind != HOOK_STAGE_CREATE)
		return 0;
	hook_log_open(&cfg);
	hook_arm_deadline(&cfg, &st, stage, st_kind == HOOK_STAGE_CREATE && !st.sandbox);
	hook_dead_pending = 0;
	if (hook_dead_missed) {
		/* The deadline passed while the state was read: said now. */
		hook_dead.phase = hook_phase_last();
		deadmark_fire(&hook_dead);
		return 0;
	}
	int rc = 0;
	switch (st_kind) {
	case HOOK_STAGE_CREATE: rc = hook_create(&cfg, &st, stage); break;
	case HOOK_STAGE_POSTSTART: rc = hook_poststart(&cfg, config_path, &st, stage); break;
	case HOOK_STAGE_POSTSTOP: rc = hook_poststop(&cfg, &st, stage); break;
	}
	/* Done in time: no deadline line after the last word. */
	hook_deadline(0);
	hook_dead_armed = 0;
	return rc;
}
