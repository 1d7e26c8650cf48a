/* test_sampler.c - the perf_event sampler on real busy processes, driven
 * through the API (needs root: system-wide per-CPU events). Skips when
 * perf_event_open is not permitted.
 *
 *   pid scope     a process's threads, including one started after the
 *                 events were opened; kernel frames under a syscall loop
 *   pid_ns scope  every process of a new pid namespace, including one
 *                 forked during the recording; nothing from outside
 *   cgroup scope  PERF_FLAG_PID_CGROUP on a cgroup v2 directory
 *   lost          a one-page ring that is not drained loses records */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "proc.h"
#include "profile.h"
#include "tap.h"
#include "sampler.h"
#include "symbols.h"
#include "timeutil.h"

#define CGROUP2_MAGIC 0x63677270

static volatile unsigned long sink;

/* Busy functions with names the test looks for (leaves: the sampled IP
 * is in them whatever the frame pointers). */
#define SPIN_FN(name)                                                                              \
	__attribute__((noinline, used)) static void *name(void *arg)                               \
	{                                                                                          \
		(void)arg;                                                                         \
		for (;;)                                                                           \
			for (unsigned long i = 0; i < 100000; i++)                                 \
				sink += i ^ (sink >> 3);                                           \
		return NULL;                                                                       \
	}
SPIN_FN(hot_spin)
SPIN_FN(late_spin)
SPIN_FN(ns_spin)
SPIN_FN(ns_late_spin)
SPIN_FN(cg_spin)
SPIN_FN(cg_late_spin)
SPIN_FN(outside_spin)

/* A syscall-heavy loop: the syscall instruction is inline, so the user
 * part of each kernel callchain starts in this function. */
__attribute__((noinline, used)) static void *syscall_loop(void *arg)
{
	static char buf[1 << 16];
	int fd = open("/dev/zero", O_RDONLY);
	(void)arg;
	for (;;) {
		long ret;
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(sizeof(buf))
				 : "rcx", "r11", "memory");
		sink += (unsigned long)ret;
	}
	return NULL;
}

static void start_thread(void *(*fn)(void *))
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, NULL) != 0)
		_exit(3);
}

static void wait_byte(int fd)
{
	char c;
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

struct found {
	struct symbolizer *sym;
	pid_t want_pid;	      /* pid scope */
	uint64_t want_ns;     /* pid_ns scope: inode */
	const char *names[4]; /* functions to find */
	unsigned hits[4];
	unsigned kernel_under_syscall; /* kernel frames with syscall_loop below */
	unsigned foreign;	       /* samples from outside the scope */
	unsigned samples;
	unsigned other_tids;
	pid_t tids[8];
	unsigned ntids;
};

static uint64_t ns_of(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static int on_sample(const struct sample *smp, void *ctx)
{
	struct found *f = ctx;
	f->samples++;
	if (f->want_pid && smp->pid != f->want_pid)
		f->foreign++;
	if (f->want_ns && ns_of(smp->pid) != f->want_ns && ns_of(smp->pid) != 0)
		f->foreign++;
	int seen = 0;
	for (unsigned i = 0; i < f->ntids; i++)
		seen |= f->tids[i] == smp->tid;
	if (!seen && f->ntids < FS_ARRAY_SIZE(f->tids))
		f->tids[f->ntids++] = smp->tid;
	struct symbolizer_frame fr[SYMBOLIZER_MAX_FRAMES];
	size_t n = 0;
	symbolizer_symbolize(f->sym, smp->pid, smp->ips, smp->nr, fr, SYMBOLIZER_MAX_FRAMES, &n);
	int kernel = 0;
	for (size_t i = 0; i < n; i++) {
		if (fr[i].kind == SYMBOLIZER_KIND_KERNEL && fr[i].resolved)
			kernel = 1;
		for (unsigned k = 0; k < FS_ARRAY_SIZE(f->names); k++)
			if (f->names[k] && !strcmp(fr[i].name, f->names[k]))
				f->hits[k]++;
		if (kernel && !strcmp(fr[i].name, "syscall_loop"))
			f->kernel_under_syscall++;
	}
	return 0;
}

static int all_found(const struct found *f, int need_kernel)
{
	for (unsigned k = 0; k < FS_ARRAY_SIZE(f->names); k++)
		if (f->names[k] && f->hits[k] < 3)
			return 0;
	return !need_kernel || f->kernel_under_syscall >= 3;
}

/* Poll until every name was seen (or the deadline). */
static void sample_until(struct sampler *s, struct found *f, int need_kernel, unsigned deadline_ms)
{
	uint64_t end = timeutil_now_ms() + deadline_ms;
	while (timeutil_now_ms() < end) {
		int r = sampler_poll(s, 100, on_sample, f);
		if (r < 0 && r != -EINTR) {
			tap_diag("sampler_poll: %s", strerror(-r));
			break;
		}
		if (all_found(f, need_kernel))
			break;
	}
	sampler_poll(s, 0, on_sample, f);
}

static void diag_stats(struct sampler *s)
{
	struct sampler_stats st;
	sampler_stats(s, &st);
	tap_diag("scope %s, %u CPUs, %s: samples %llu filtered %llu lost %llu throttled %llu "
		 "truncated %llu malformed %llu tasks %llu",
		 st.scope, st.cpus, st.hardware ? "cycles" : "cpu-clock",
		 (unsigned long long)st.samples, (unsigned long long)st.filtered,
		 (unsigned long long)st.lost, (unsigned long long)st.throttled,
		 (unsigned long long)st.truncated, (unsigned long long)st.malformed,
		 (unsigned long long)st.tasks);
}

static void test_pid_scope(struct symbolizer *sym)
{
	int go[2];
	if (pipe(go) < 0) {
		ok(0, "pipe");
		return;
	}
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		start_thread(syscall_loop);
		wait_byte(go[0]);
		start_thread(late_spin); /* a thread born during the recording */
		hot_spin(NULL);
		_exit(0);
	}
	close(go[0]);
	/* The user-space check (the kernel filter: test_kfilter.c) */
	struct sampler_opts o = {
	    .frequency = 499, .pid = child, .kernel_filter = SAMPLER_KFILTER_OFF};
	struct sampler *s = NULL;
	struct fs_error err = {0};
	int r = sampler_open(&o, &s, &err);
	ok(r == 0, "sampler_open pid scope: %s", r ? err.msg : "ok");
	if (r < 0) {
		reap(child);
		return;
	}
	symbolizer_load_pid(sym, child, NULL);
	if (write(go[1], "g", 1) != 1)
		tap_diag("write go: %s", strerror(errno));
	struct found f = {
	    .sym = sym, .want_pid = child, .names = {"hot_spin", "late_spin", "syscall_loop"}};
	sample_until(s, &f, 1, 10000);
	diag_stats(s);
	struct sampler_stats st;
	sampler_stats(s, &st);
	ok(f.samples > 0 && st.samples == f.samples, "samples delivered (%u)", f.samples);
	is_int(f.foreign, 0, "only samples of the target process");
	ok(f.hits[0] >= 3, "hot function found (%u samples)", f.hits[0]);
	ok(f.hits[1] >= 3, "thread started during the recording found (%u)", f.hits[1]);
	ok(f.kernel_under_syscall >= 3, "kernel frames under the syscall loop (%u)",
	   f.kernel_under_syscall);
	ok(f.ntids >= 3, "samples from %u threads", f.ntids);
	ok(st.filtered > 0 || st.cpus == 1, "other processes' samples filtered (%llu)",
	   (unsigned long long)st.filtered);
	sampler_close(s);
	close(go[1]);
	reap(child);
}

/* Parent side of the pid namespace test: A unshares, forks B (ns init). */
static void test_pidns_scope(struct symbolizer *sym)
{
	int go[2], info[2];
	if (pipe(go) < 0 || pipe(info) < 0) {
		ok(0, "pipe");
		return;
	}
	pid_t a = fork();
	if (a == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWPID) < 0)
			_exit(2);
		pid_t b = fork();
		if (b == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			wait_byte(go[0]);
			if (fork() == 0) /* a process born during the recording */
				ns_late_spin(NULL);
			ns_spin(NULL);
			_exit(0);
		}
		if (write(info[1], &b, sizeof(b)) != sizeof(b))
			_exit(2);
		waitpid(b, NULL, 0);
		_exit(0);
	}
	close(go[0]);
	close(info[1]);
	pid_t b = 0;
	if (read(info[0], &b, sizeof(b)) != sizeof(b) || b <= 0) {
		tap_skip(5, "cannot create a pid namespace");
		reap(a);
		return;
	}
	pid_t outside = fork();
	if (outside == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		outside_spin(NULL);
	}
	uint64_t ns = ns_of(b);
	struct sampler_opts o = {.frequency = 499, .pid_ns = ns};
	struct sampler *s = NULL;
	struct fs_error err = {0};
	int r = sampler_open(&o, &s, &err);
	if (!ok(r == 0, "sampler_open pid_ns scope: %s", r ? err.msg : "ok"))
		tap_skip(4, "no sampler");
	if (r == 0) {
		if (write(go[1], "g", 1) != 1)
			tap_diag("write go: %s", strerror(errno));
		struct found f = {.sym = sym,
				  .want_ns = ns,
				  .names = {"ns_spin", "ns_late_spin", "outside_spin"}};
		/* outside_spin must never show up: wait for the other two */
		f.names[2] = NULL;
		sample_until(s, &f, 0, 10000);
		f.names[2] = "outside_spin";
		diag_stats(s);
		ok(f.hits[0] >= 3, "the namespace's init found (%u)", f.hits[0]);
		ok(f.hits[1] >= 3, "a process forked during the recording found (%u)", f.hits[1]);
		is_int(f.foreign, 0, "no sample from another pid namespace");
		is_int(f.hits[2], 0, "the busy process outside the namespace is not sampled");
		sampler_close(s);
	}
	close(go[1]);
	reap(outside);
	kill(b, SIGKILL); /* init of the namespace: takes the rest with it */
	reap(a);
}

static int cgroup2_root(char *out, size_t len)
{
	static const char *const roots[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
	for (size_t i = 0; i < FS_ARRAY_SIZE(roots); i++) {
		struct statfs sf;
		if (statfs(roots[i], &sf) == 0 && sf.f_type == CGROUP2_MAGIC) {
			snprintf(out, len, "%s", roots[i]);
			return 0;
		}
	}
	return -ENOENT;
}

/* Task records the callback got: of the cgroup's processes, of others. */
struct task_seen {
	pid_t cg; /* the cgroup's first process */
	pid_t host[64];
	unsigned nhost, in, out;
};

static void count_task(const struct sampler_task *t, void *ctx)
{
	struct task_seen *ts = ctx;
	int host = 0;
	for (unsigned i = 0; i < ts->nhost; i++)
		host |= ts->host[i] == t->pid;
	if (host)
		ts->out++;
	else
		ts->in++;
}

/* Host processes (outside the cgroup) that fork and exit: their fork,
 * exit and exec records must not reach the profile. */
static void host_churn(struct task_seen *ts)
{
	while (ts->nhost < 64) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		if (c < 0)
			break;
		ts->host[ts->nhost++] = c;
		waitpid(c, NULL, 0);
	}
}

static void test_cgroup_scope(struct symbolizer *sym)
{
	char root[128], dir[256], procs[300];
	if (cgroup2_root(root, sizeof(root)) < 0) {
		tap_skip(4, "no cgroup v2 hierarchy mounted");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/fs-test-sampler.%d", root, (int)getpid());
	if (mkdir(dir, 0755) < 0) {
		tap_diag("cannot create %s: %s", dir, strerror(errno));
		tap_skip(4, "cannot create a cgroup");
		return;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	int go[2], ready[2];
	if (pipe(go) < 0 || pipe(ready) < 0) {
		ok(0, "pipe");
		rmdir(dir);
		return;
	}
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpgid(0, 0);
		int fd = open(procs, O_WRONLY);
		char ok_byte = (fd >= 0 && write(fd, "0", 1) == 1) ? 'y' : 'n';
		if (write(ready[1], &ok_byte, 1) != 1)
			_exit(2);
		wait_byte(go[0]);
		if (fork() == 0)
			cg_late_spin(NULL);
		cg_spin(NULL);
	}
	close(go[0]);
	close(ready[1]);
	char c = 'n';
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		tap_skip(4, "cannot move a process into the cgroup");
	} else {
		struct sampler_opts o = {.frequency = 499, .cgroup_path = dir};
		struct sampler *s = NULL;
		struct fs_error err = {0};
		int r = sampler_open(&o, &s, &err);
		if (r < 0) {
			tap_diag("%s", err.msg);
			tap_skip(4, "perf cgroup events unavailable here");
		} else {
			if (write(go[1], "g", 1) != 1)
				tap_diag("write go: %s", strerror(errno));
			struct found f = {.sym = sym, .names = {"cg_spin", "cg_late_spin"}};
			struct task_seen ts = {.cg = child};
			sampler_set_task_cb(s, count_task, &ts);
			host_churn(&ts);
			sample_until(s, &f, 0, 10000);
			diag_stats(s);
			struct sampler_stats st;
			sampler_stats(s, &st);
			is_str(st.scope, "cgroup", "cgroup scope in use");
			ok(ts.out == 0 &&
			       (strcmp(st.events, "kernel filter") || st.tasks_dropped >= 64),
			   "no fork/exit record of %u host processes reached the profile (%u; %s, "
			   "%llu dropped, %u of the cgroup kept)",
			   ts.nhost, ts.out, st.events, (unsigned long long)st.tasks_dropped,
			   ts.in);
			ok(f.hits[0] >= 3, "process in the cgroup found (%u)", f.hits[0]);
			ok(f.hits[1] >= 3, "its child forked during the recording found (%u)",
			   f.hits[1]);
			sampler_close(s);
		}
	}
	close(go[1]);
	kill(-child, SIGKILL);
	reap(child);
	/* the grandchild is ours (subreaper): reap it, then the cgroup is empty */
	uint64_t end = timeutil_now_ms() + 5000;
	while (rmdir(dir) < 0 && errno == EBUSY && timeutil_now_ms() < end)
		waitpid(-1, NULL, WNOHANG) > 0 ? (void)0 : (void)poll(NULL, 0, 20);
	if (access(dir, F_OK) == 0)
		tap_diag("could not remove %s", dir);
}

static void test_lost(void)
{
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		start_thread(hot_spin);
		hot_spin(NULL);
	}
	struct sampler_opts o = {.frequency = 2000, .ring_pages = 1, .pid = child};
	struct sampler *s = NULL;
	struct fs_error err = {0};
	int r = sampler_open(&o, &s, &err);
	ok(r == 0, "sampler_open with a one-page ring: %s", r ? err.msg : "ok");
	if (r == 0) {
		struct sampler_stats st = {0};
		uint64_t end = timeutil_now_ms() + 5000;
		while (timeutil_now_ms() < end && st.lost == 0) {
			poll(NULL, 0, 100); /* let the ring overflow, then look */
			sampler_poll(s, 0, NULL, NULL);
			sampler_stats(s, &st);
		}
		diag_stats(s);
		ok(st.lost > 0, "lost records counted (%llu)", (unsigned long long)st.lost);
		sampler_close(s);
	}
	reap(child);
}

struct copies {
	unsigned samples, with_regs, ip_match, sizes_ok;
};

static int on_copy(const struct sample *smp, void *ctx)
{
	struct copies *c = ctx;
	c->samples++;
	if (!smp->has_regs)
		return 0;
	c->with_regs++;
	if (smp->ip == smp->user_ip)
		c->ip_match++; /* a sample taken in user mode */
	if (smp->stack && smp->stack_size > 0 && smp->stack_size <= 8192)
		c->sizes_ok++;
	return 0;
}

/* PERF_SAMPLE_REGS_USER + STACK_USER: registers and a stack copy with
 * each sample, rings grown to hold them. */
static void test_stack_copy(void)
{
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		hot_spin(NULL);
	}
	struct sampler_opts o = {.frequency = 499, .pid = child, .stack_copy = 8190};
	struct sampler *s = NULL;
	struct fs_error err = {0};
	int r = sampler_open(&o, &s, &err);
	ok(r == 0, "sampler_open with stack copies: %s", r ? err.msg : "ok");
	if (r == 0) {
		struct copies c = {0};
		uint64_t end = timeutil_now_ms() + 5000;
		while (timeutil_now_ms() < end && c.with_regs < 20)
			sampler_poll(s, 100, on_copy, &c);
		struct sampler_stats st;
		sampler_stats(s, &st);
		diag_stats(s);
		ok(c.with_regs >= 20 && c.with_regs == c.samples,
		   "every sample has registers (%u of %u)", c.with_regs, c.samples);
		ok(c.ip_match * 2 >= c.with_regs, "user ip = sample ip in user mode (%u)",
		   c.ip_match);
		is_int(c.sizes_ok, c.with_regs, "stack copies of 1..8192 bytes");
		is_int(st.stack_copy, 8192, "copy size rounded up to 8 bytes");
		ok(st.ring_pages >= 256, "ring grown for copies (%u pages)", st.ring_pages);
		ok(st.stack_copies == c.with_regs && st.stack_bytes >= st.stack_copies,
		   "copies counted (%llu, %llu bytes)", (unsigned long long)st.stack_copies,
		   (unsigned long long)st.stack_bytes);
		sampler_close(s);
	}
	reap(child);
	struct sampler_opts big = {.stack_copy = SAMPLER_MAX_STACK_COPY + 8};
	ok(sampler_open(&big, &s, &err) == -EINVAL, "a copy over the record size refused");
}

static void test_cpulist(void)
{
	int cpus[16];
	is_int(sampler_parse_cpulist("0-3,6,8-9\n", cpus, 16), 7, "cpu list with ranges");
	is_int(cpus[4], 6, "single cpu after a range");
	is_int(sampler_parse_cpulist("0", cpus, 16), 1, "one cpu");
	is_int(sampler_parse_cpulist("3-1", cpus, 16), -EINVAL, "reversed range rejected");
	is_int(sampler_parse_cpulist("0-20", cpus, 16), -E2BIG, "too many cpus rejected");
	is_int(sampler_parse_cpulist("x", cpus, 16), -EINVAL, "garbage rejected");
}

static void test_bad_options(void)
{
	struct sampler *s = NULL;
	struct fs_error err = {0};
	struct sampler_opts o = {.frequency = 1000000};
	ok(sampler_open(&o, &s, &err) == -EINVAL && strstr(err.msg, "frequency"),
	   "absurd frequency refused: %s", err.msg);
	struct sampler_opts o2 = {.ring_pages = 3};
	ok(sampler_open(&o2, &s, &err) == -EINVAL, "ring not a power of two refused");
	struct sampler_opts o3 = {.cgroup_path = "/nonexistent/cgroup"};
	ok(sampler_open(&o3, &s, &err) == -ENOENT && strstr(err.msg, "/nonexistent/cgroup"),
	   "missing cgroup: %s", err.msg);
}

/* ---- profile mode: a driver for tests/integration/sampler.bats --------- */

/* A registry entry for a process as the hook would write it for a
 * container whose init it is: pid, start time, namespaces, user. */
static int profile_entry(pid_t pid, struct registry_entry *e)
{
	struct proc_status st;
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "test-sampler-%d", (int)pid);
	e->pid = pid;
	if (proc_start_time(pid, &e->start_time, NULL) < 0 ||
	    proc_ns_inode(pid, "pid", &e->pid_ns, NULL) < 0 ||
	    proc_ns_inode(pid, "mnt", &e->mnt_ns, NULL) < 0 || proc_status_read(pid, &st, NULL) < 0)
		return -1;
	e->ns_pid = proc_status_ns_pid(&st);
	e->uid = st.uid[1];
	e->gid = st.gid[1];
	return 0;
}

static void profile_print_warning(void *ctx, const char *msg)
{
	fprintf(stderr, "warning: %s\n", msg);
}

/* test_sampler.t --profile (--pid PID | --pid-ns-of PID | --cgroup-of PID)
 *                [--seconds S] [--frequency HZ] [--with-pid]
 * The loop `flamesidecar run` ships (profile.h: sampler, raw table, JVMs
 * mapped after the window, profile_fold) on a process treated as a
 * container's init: only PID (--pid), its pid namespace, or its cgroup v2
 * directory. Prints "sampling" on stderr once the events are enabled, the
 * folded stacks on stdout, and the statistics on stderr. */
static int profile_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"profile", no_argument, NULL, 'P'},
	    {"pid", required_argument, NULL, 'p'},
	    {"pid-ns-of", required_argument, NULL, 'n'},
	    {"cgroup-of", required_argument, NULL, 'c'},
	    {"seconds", required_argument, NULL, 's'},
	    {"frequency", required_argument, NULL, 'F'},
	    {"with-pid", no_argument, NULL, 'W'},
	    {NULL, 0, NULL, 0},
	};
	struct profile_opts o = {.warn = profile_print_warning};
	pid_t target = 0;
	double seconds = 2;
	int c, scope = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'P': break;
		case 'p':
		case 'n':
		case 'c':
			target = atoi(optarg);
			scope = c;
			break;
		case 's': seconds = atof(optarg); break;
		case 'F': o.frequency = (unsigned)atoi(optarg); break;
		case 'W': o.with_pid = 1; break;
		default:
			fprintf(stderr,
				"usage: test_sampler.t --profile (--pid PID | --pid-ns-of PID | "
				"--cgroup-of PID) [--seconds S] [--frequency HZ] [--with-pid]\n");
			return 2;
		}
	}
	struct registry_entry e;
	if (target <= 0 || profile_entry(target, &e) < 0) {
		fprintf(stderr, "test_sampler: no such process %d\n", (int)target);
		return 2;
	}
	o.entry = &e;
	if (scope == 'p')
		o.pid = target;
	else if (scope == 'n')
		o.cgroup_root = "/nonexistent"; /* no cgroup found: the pid namespace */
	o.map.mode = MAP_MODE_AUTO;
	struct profile *p = NULL;
	struct fs_error err = {0};
	if (profile_open(&o, &p, &err) < 0) {
		fprintf(stderr, "test_sampler: %s\n", err.msg);
		return err.code == EACCES || err.code == EPERM ? 4 : 1;
	}
	fprintf(stderr, "sampling\n"); /* the events are enabled */
	uint64_t end = timeutil_now_ms() + (uint64_t)(seconds * 1000);
	while (timeutil_now_ms() < end) {
		int r = profile_poll(p, 100, &err);
		if (r < 0 && r != -EINTR)
			break;
	}
	profile_stop(p);
	int r = profile_fold(p, 1, &err);
	if (r == 0)
		r = fold_write(profile_table(p), stdout);
	struct profile_stats st;
	profile_stats(p, &st);
	fprintf(stderr, "scope %s cpus %u samples %llu lost %llu dropped %llu jvms %zu\n", st.scope,
		st.cpus, (unsigned long long)st.samples, (unsigned long long)st.lost,
		(unsigned long long)st.dropped, st.jvms);
	for (int k = 0; k < SYMBOLIZER_KIND_COUNT; k++)
		fprintf(stderr, "%s frames %llu resolved %llu\n", symbolizer_kind_name(k),
			(unsigned long long)st.frames[k], (unsigned long long)st.resolved[k]);
	for (size_t i = 0; i < st.njvm; i++)
		fprintf(stderr, "jvm %d %s\n", (int)st.jvm[i].pid,
			st.jvm[i].ok ? "mapped" : "unmapped");
	profile_close(p);
	if (r < 0) {
		fprintf(stderr, "test_sampler: %s\n", r == -ENOMEM ? "out of memory" : err.msg);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--profile"))
		return profile_main(argc, argv);
	tap_plan(37);
	test_cpulist();
	test_bad_options();
	struct sampler_opts probe = {.frequency = 10, .ring_pages = 1};
	struct sampler *s = NULL;
	struct fs_error err = {0};
	int r = sampler_open(&probe, &s, &err);
	if (r == -EACCES || r == -EPERM) {
		tap_diag("%s", err.msg);
		tap_skip_all("perf_event_open not permitted (run as root)");
	}
	ok(r == 0, "sampler_open system-wide: %s", r ? err.msg : "ok");
	if (r < 0)
		return tap_done();
	diag_stats(s);
	sampler_close(s);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);

	struct symbolizer *sym = NULL;
	if (symbolizer_open(NULL, &sym, &err) < 0) {
		ok(0, "symbolizer_open: %s", err.msg);
		return tap_done();
	}
	test_pid_scope(sym);
	test_pidns_scope(sym);
	test_cgroup_scope(sym);
	test_lost();
	test_stack_copy();
	symbolizer_close(sym);
	return tap_done();
}
