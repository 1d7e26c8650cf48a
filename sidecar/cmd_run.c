/* run.c - `flamesidecar run <id>`: sample a registered container for a
 * while, then map its JVMs, symbolize, and write a folded profile and an
 * SVG flame graph (profile.h does the work; this file is the verb). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "textsafe.h"
#include "cleanup.h"
#include "cli.h"
#include "jail.h"
#include "localfs.h"
#include "common.h"
#include "export_cli.h"
#include "flame.h"
#include "fold.h"
#include "hot.h"
#include "offcpu.h"
#include "profile.h"
#include "outfile.h"
#include "render.h"
#include "render_cli.h"
#include "sampler.h"

#define RUN_DEFAULT_MS 30000ull
#define RUN_MAX_MS     (24ull * 3600 * 1000)
#define RUN_HOT_FRAMES 5

static volatile sig_atomic_t run_stop_signal;
static volatile sig_atomic_t run_abort; /* a second signal: stop reading JIT logs */

static void run_on_signal(int sig)
{
	if (run_stop_signal)
		run_abort = 1;
	run_stop_signal = sig;
}

/* SIGINT/SIGTERM end the window (interrupting the wait, no SA_RESTART);
 * the graph is still written. A second one also stops reading the JVMs'
 * JIT logs (what was read names the frames; the rest is counted dropped). */
static void run_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = run_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void run_usage(FILE *out)
{
	fprintf(out,
		"Usage: flamesidecar run CONTAINER [OPTIONS]\n\n"
		"CONTAINER: an id, a name (docker/podman ps), a unique id prefix, or\n"
		"--pod NAME [--namespace NS] [--container NAME] for a Kubernetes pod.\n\n"
		"Sample the CPU stacks of every thread of every process of a registered\n"
		"container (see `flamesidecar list`) for a while, then name Java frames with\n"
		"the JVMs' JIT maps taken at the end of the window, and write a folded\n"
		"profile and an interactive SVG flame graph. Ctrl-C ends the window early\n"
		"and still writes the graph. Must run as root.\n\n"
		"Options:\n"
		"  -d, --duration TIME  length of the window: 30s (default), 500ms, 2m, 1h\n"
		"  -F, --frequency HZ   samples per second per CPU (default 99, max 10000);\n"
		"                       with --event offcpu|wall, thread-state reads per second\n"
		"      --event EVENT    cpu (default: CPU samples), offcpu (the time threads\n"
		"                       are blocked, under the stack they block at, kernel\n"
		"                       frames and the thread state as the leaf) or wall\n"
		"                       (offcpu plus on-CPU and runnable time: each thread's\n"
		"                       total is the window); counts are microseconds\n"
		"      --threads        the thread's name as a frame under the process\n"
		"  -p, --pid PID        only this process of the container (host pid)\n"
		"  -o, --output FILE    the SVG (default flamesidecar-<id>-<UTC time>.svg in\n"
		"                       the current directory; - for standard output)\n"
		"      --folded FILE    the folded stacks (default: the SVG's name with\n"
		"                       .folded; none when the SVG goes to standard output)\n"
		"      --no-folded      do not write the folded stacks\n"
		"      --pprof FILE     also write a gzip-compressed pprof profile (go tool\n"
		"                       pprof, Pyroscope, Parca) with container, pod,\n"
		"                       process and thread labels, native frames in their\n"
		"                       modules\n"
		"      --speedscope FILE also write a speedscope JSON file (one profile per\n"
		"                       process)\n"
		"  -q, --quiet          no progress line and no summary (warnings and errors\n"
		"                       still go to stderr)\n"
		"      --no-map         do not attach to JVMs (Java frames stay [unknown])\n"
		"      --map-mode MODE  agent (default when the bundle is mounted), jcmd, or\n"
		"                       vmstructs (read from the host, no attach; the fallback\n"
		"                       when attach is impossible or fails)\n"
		"      --map-timeout MS deadline per JVM for the map (default %d)\n"
		"      --perf-map       also write /tmp/perf-<host pid>.map for perf\n"
		"      --max-stack N    deepest callchain kept (default 127)\n"
		"      --user-only      no kernel frames\n"
		"      --with-pid       root frame \"comm-PID\" (one tower per process)\n"
		"      --unwind MODE    auto (default: when the container runs a JVM or a\n"
		"                       process without frame pointers, stack copies, the\n"
		"                       HotSpot unwinder for JVMs and .eh_frame CFI for the\n"
		"                       others: whole stacks, interpreted frames named), fp\n"
		"                       (frame pointers only: cheapest, interpreted frames\n"
		"                       anonymous), hotspot (copies even when no such process\n"
		"                       is seen at open)\n"
		"      --stack-copy BYTES  user stack copied per sample for the HotSpot\n"
		"                       unwinder (default %u, at most %u)\n"
		"      --kernel-filter MODE  how samples are kept to the container (or\n"
		"                       --pid): auto (default: a tiny BPF program on\n"
		"                       system-wide events drops other tasks' samples in the\n"
		"                       kernel; where it cannot load, per-cgroup events, or\n"
		"                       the pid checked here, and the summary says why), on\n"
		"                       (the BPF filter or fail), off (per-cgroup events,\n"
		"                       whose cost the kernel pays at every context switch\n"
		"                       into or out of the container; with --pid, every\n"
		"                       host sample read and checked here)\n"
		"%s"
		"  -h, --help           this text\n\n"
		"The summary (stdout) gives the samples taken and lost, the share of frames\n"
		"named per kind (java, native, kernel), the five hottest frames by self\n"
		"samples, where the files are and how long the graph took after the window.\n\n"
		"Examples:\n"
		"  flamesidecar run 3f2a9c\n"
		"  flamesidecar run 3f2a9c -d 10s -F 499 -o checkout.svg\n"
		"  flamesidecar run 3f2a9c --pid 41236 --title 'checkout, peak' --minwidth 0.5%%\n"
		"  flamesidecar run 3f2a9c -d 60s -o - --no-folded > cpu.svg\n"
		"  flamesidecar run 3f2a9c --pprof cpu.pb.gz --speedscope cpu.speedscope.json\n\n"
		"Exit codes: 0 graph written, 1 failed, 2 usage, 3 container or process not\n"
		"found (or not running), 4 not permitted (run as root).\n",
		MAP_DEFAULT_TIMEOUT_MS, SAMPLER_DEFAULT_STACK_COPY, SAMPLER_MAX_STACK_COPY,
		render_opts_help);
}

enum {
	RUN_OPT_FOLDED = 0x200,
	RUN_OPT_NO_FOLDED,
	RUN_OPT_NO_MAP,
	RUN_OPT_MAP_MODE,
	RUN_OPT_MAP_TIMEOUT,
	RUN_OPT_PERF_MAP,
	RUN_OPT_MAX_STACK,
	RUN_OPT_USER_ONLY,
	RUN_OPT_WITH_PID,
	RUN_OPT_UNWIND,
	RUN_OPT_STACK_COPY,
	RUN_OPT_PPROF,
	RUN_OPT_SPEEDSCOPE,
	RUN_OPT_KERNEL_FILTER,
	RUN_OPT_EVENT,
	RUN_OPT_THREADS,
};

struct run_args {
	unsigned long long duration_ms;
	const char *output, *folded;
	const char *pprof, *speedscope;
	int no_folded, quiet;
	struct render_opts render;
	struct profile_opts prof;
	const char *id;
	int help; /* --help: print the usage and exit 0 */
	enum offcpu_event event;
};

static int run_parse_pid(const char *verb, const char *arg, pid_t *out)
{
	unsigned v;
	if (common_parse_uint(verb, "--pid", arg, 1, INT32_MAX, &v) < 0)
		return -EINVAL;
	*out = (pid_t)v;
	return 0;
}

/* Over 100 lines on purpose: one getopt_long switch with a case per option,
 * read top to bottom beside the option table above. */
static int run_parse(int argc, char **argv, struct run_args *a)
{
	static const struct option longopts[] = {
	    {"duration", required_argument, NULL, 'd'},
	    {"frequency", required_argument, NULL, 'F'},
	    {"pid", required_argument, NULL, 'p'},
	    {"output", required_argument, NULL, 'o'},
	    {"folded", required_argument, NULL, RUN_OPT_FOLDED},
	    {"no-folded", no_argument, NULL, RUN_OPT_NO_FOLDED},
	    {"quiet", no_argument, NULL, 'q'},
	    {"no-map", no_argument, NULL, RUN_OPT_NO_MAP},
	    {"map-mode", required_argument, NULL, RUN_OPT_MAP_MODE},
	    {"map-timeout", required_argument, NULL, RUN_OPT_MAP_TIMEOUT},
	    {"perf-map", no_argument, NULL, RUN_OPT_PERF_MAP},
	    {"max-stack", required_argument, NULL, RUN_OPT_MAX_STACK},
	    {"user-only", no_argument, NULL, RUN_OPT_USER_ONLY},
	    {"with-pid", no_argument, NULL, RUN_OPT_WITH_PID},
	    {"unwind", required_argument, NULL, RUN_OPT_UNWIND},
	    {"stack-copy", required_argument, NULL, RUN_OPT_STACK_COPY},
	    {"pprof", required_argument, NULL, RUN_OPT_PPROF},
	    {"speedscope", required_argument, NULL, RUN_OPT_SPEEDSCOPE},
	    {"kernel-filter", required_argument, NULL, RUN_OPT_KERNEL_FILTER},
	    {"event", required_argument, NULL, RUN_OPT_EVENT},
	    {"threads", no_argument, NULL, RUN_OPT_THREADS},
	    {"help", no_argument, NULL, 'h'},
	    RENDER_LONG_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	struct fs_error err = {0};
	int c, r;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:F:p:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (timeutil_parse_duration_ms(optarg, &a->duration_ms) < 0 ||
			    a->duration_ms == 0 || a->duration_ms > RUN_MAX_MS)
				return cli_usage_error("run",
						       "--duration takes a time from 1ms to 24h "
						       "such as 30s, 500ms, 2m; not '%s'",
						       optarg);
			break;
		case 'F':
			if (common_parse_uint("run", "--frequency", optarg, 1,
					      SAMPLER_MAX_FREQUENCY, &a->prof.frequency) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'p':
			if (run_parse_pid("run", optarg, &a->prof.pid) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'o': a->output = optarg; break;
		case RUN_OPT_FOLDED: a->folded = optarg; break;
		case RUN_OPT_NO_FOLDED: a->no_folded = 1; break;
		case 'q': a->quiet = 1; break;
		case RUN_OPT_NO_MAP: a->prof.no_map = 1; break;
		case RUN_OPT_MAP_MODE:
			if (common_parse_map_mode("run", "--map-mode", optarg, &a->prof.map.mode) <
			    0)
				return FS_EXIT_USAGE;
			break;
		case RUN_OPT_MAP_TIMEOUT:
			if (common_parse_uint("run", "--map-timeout", optarg, 1, 600000,
					      &a->prof.map.timeout_ms) < 0)
				return FS_EXIT_USAGE;
			break;
		case RUN_OPT_PERF_MAP: a->prof.map.write_host = 1; break;
		case RUN_OPT_MAX_STACK:
			if (common_parse_uint("run", "--max-stack", optarg, 1,
					      SYMBOLIZER_MAX_FRAMES, &a->prof.max_stack) < 0)
				return FS_EXIT_USAGE;
			break;
		case RUN_OPT_USER_ONLY: a->prof.user_only = 1; break;
		case RUN_OPT_WITH_PID: a->prof.with_pid = 1; break;
		case RUN_OPT_STACK_COPY:
			if (common_parse_uint("run", "--stack-copy", optarg, 512,
					      SAMPLER_MAX_STACK_COPY, &a->prof.stack_copy) < 0)
				return FS_EXIT_USAGE;
			break;
		case RUN_OPT_UNWIND:
			if (!strcmp(optarg, "auto"))
				a->prof.unwind = PROFILE_UNWIND_AUTO;
			else if (!strcmp(optarg, "fp"))
				a->prof.unwind = PROFILE_UNWIND_FP;
			else if (!strcmp(optarg, "hotspot"))
				a->prof.unwind = PROFILE_UNWIND_HOTSPOT;
			else
				return cli_failf("run", FS_EXIT_USAGE,
						 "--unwind takes auto, fp or hotspot; not '%s'",
						 optarg);
			break;
		case RUN_OPT_KERNEL_FILTER:
			if (common_parse_kernel_filter("run", optarg, &a->prof.kernel_filter) < 0)
				return FS_EXIT_USAGE;
			break;
		case RUN_OPT_EVENT:
			if (offcpu_parse_event(optarg, &a->event) < 0)
				return cli_failf("run", FS_EXIT_USAGE,
						 "--event takes cpu, offcpu or wall; not '%s'",
						 optarg);
			break;
		case RUN_OPT_THREADS: a->prof.per_thread = a->prof.thread_frames = 1; break;
		case RUN_OPT_PPROF: a->pprof = optarg; break;
		case RUN_OPT_SPEEDSCOPE: a->speedscope = optarg; break;
		case 'h': a->help = 1; return 0;
		default:
			r = render_opts_option(&a->render, c, optarg, &err);
			if (r > 0)
				break;
			return cli_usage_error("run", r < 0 ? "%s" : NULL, err.msg);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error(
		    "run", "expected one container id or unique prefix (see `flamesidecar list`)");
	a->id = argv[optind];
	int to_stdout = (!a->output || strcmp(a->output, "-") ? 0 : 1) +
			(a->pprof && !strcmp(a->pprof, "-")) +
			(a->speedscope && !strcmp(a->speedscope, "-"));
	if (to_stdout > 1)
		return cli_usage_error("run", "only one output can be standard output");
	return 0;
}

/* ---- the window ---------------------------------------------------------- */

static void run_progress(const struct profile *p, uint64_t left_ms, bool tty)
{
	struct profile_stats st;
	if (!tty)
		return;
	profile_stats(p, &st);
	fprintf(stderr, "\r\033[Krecording: %llu.%llu s left, %llu samples (lost %llu)",
		(unsigned long long)(left_ms / 1000), (unsigned long long)(left_ms % 1000 / 100),
		(unsigned long long)st.samples, (unsigned long long)st.lost);
	fflush(stderr);
}

/* Sample until the deadline or a signal. Returns the window's real length. */
static int run_window(struct profile *p, struct offcpu *oc, uint64_t duration_ms, bool tty,
		      uint64_t *elapsed_ms, struct fs_error *err)
{
	uint64_t start = timeutil_now_ms(), end = start + duration_ms, last = 0;
	int r = 0;
	for (;;) {
		uint64_t now = timeutil_now_ms();
		if (now >= end || run_stop_signal)
			break;
		if (now - last >= 200) {
			run_progress(p, end - now, tty);
			last = now;
		}
		/* Without a progress line the loop only needs the kernel's
		 * watermark wakeups (sampler.c) and the deadline (a poll every
		 * 100 ms cost ~7 ms of CPU per 10 s window), unless samples
		 * must be unwound while their code is still in place. */
		uint64_t step = tty ? 100 : profile_max_latency_ms(p);
		uint64_t wait = end - now < step ? end - now : step;
		r = oc ? offcpu_poll(oc, (int)wait, err) : profile_poll(p, (int)wait, err);
		if (r < 0 && r != -EINTR)
			break;
		r = 0;
	}
	*elapsed_ms = timeutil_now_ms() - start;
	if (tty)
		fprintf(stderr, "\r\033[K");
	return r;
}

/* ---- output --------------------------------------------------------------- */

static int run_tree_add(const char *stack, size_t len, uint64_t count, void *arg)
{
	return flame_add(arg, stack, len, count);
}

static int run_write_folded(struct profile *p, const char *path, struct fs_error *err)
{
	struct outfile d;
	int r = outfile_open(&d, path, err);
	if (r < 0)
		return r;
	r = fold_write(profile_table(p), d.f);
	if (r < 0)
		r = fs_error_set(err, -r, "writing %s", path);
	return outfile_finish(&d, r, err);
}

static int run_write_svg(struct profile *p, const char *path, const struct render_opts *ro,
			 struct fs_error *err)
{
	struct flame *tree = flame_new();
	if (!tree)
		return fs_error_set(err, ENOMEM, "building the frame tree");
	int r = fold_foreach(profile_table(p), run_tree_add, tree);
	if (r < 0) {
		flame_free(tree);
		return fs_error_set(err, -r, "building the frame tree");
	}
	struct outfile d;
	if ((r = outfile_open(&d, path, err)) < 0) {
		flame_free(tree);
		return r;
	}
	r = render_svg(tree, d.f, ro, err);
	flame_free(tree);
	return outfile_finish(&d, r, err);
}

/* The pprof and speedscope files: the stacks profile_fold handed to x,
 * with the window and the container's labels. */
static int run_write_exports(const struct run_args *a, struct export *x, const char *title,
			     int64_t start_ns, uint64_t window_ms, struct fs_error *err)
{
	unsigned hz = a->prof.frequency ? a->prof.frequency : 99;
	x->period_ns = 1000000000ull / hz;
	x->time_ns = start_ns;
	x->duration_ns = (int64_t)window_ms * 1000000;
	x->root_is_process = 1;
	if (a->event != OFFCPU_EVENT_CPU) { /* counts are microseconds */
		x->period_ns = 1000;
		x->time_type = a->event == OFFCPU_EVENT_WALL ? "wall" : "offcpu";
	}
	if (export_set_name(x, title) < 0 || export_cli_container_labels(x, a->prof.entry) < 0)
		return fs_error_set(err, ENOMEM, "labelling the profile");
	int r = 0;
	if (a->pprof)
		r = export_cli_write_pprof(x, a->pprof, err);
	if (r == 0 && a->speedscope)
		r = export_cli_write_speedscope(x, a->speedscope, err);
	return r;
}

static int64_t run_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double run_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* One line per JVM: which unwinder it got, and how deep it went. */
static void run_summary_unwind(const struct profile_stats *st)
{
	if (st->stack_copy)
		printf("unwind     stack copies of %u bytes with %llu samples\n", st->stack_copy,
		       (unsigned long long)st->stack_copies);
	for (size_t i = 0; i < st->nunwinder; i++) {
		const struct profile_unwinder *u = &st->unwinder[i];
		const char *fp = u->fp_missing ? "without frame pointers" : "with frame pointers";
		if (u->hotspot)
			printf(
			    "unwinder   pid %d (%s): hotspot, %llu samples, %.1f%% reached the "
			    "thread's base (stack used p50 %u KiB, p99 %u KiB, max %u KiB), "
			    "%llu interpreted frames, %.1f us CPU per sample\n",
			    (int)u->pid, fp, (unsigned long long)u->samples,
			    run_pct(u->reached_root, u->samples), u->depth_p50_kib,
			    u->depth_p99_kib, u->depth_max_kib, (unsigned long long)u->interpreted,
			    u->samples ? (double)u->unwind_ns / 1000.0 / (double)u->samples : 0.0);
		if (u->hotspot && u->reached_root)
			printf("stack use  pid %d: whole walks within 4 KiB %.1f%%, 8 KiB %.1f%%, "
			       "16 KiB %.1f%%, 32 KiB %.1f%% (--stack-copy)\n",
			       (int)u->pid, run_pct(u->within_kib[0], u->reached_root),
			       run_pct(u->within_kib[1], u->reached_root),
			       run_pct(u->within_kib[2], u->reached_root),
			       run_pct(u->within_kib[3], u->reached_root));
		if (u->hotspot)
			continue;
		if (u->why[0])
			printf("unwinder   pid %d (%s): frame pointers (no hotspot unwinder: %s)\n",
			       (int)u->pid, fp, u->why);
		else
			printf("unwinder   pid %d (%s): frame pointers\n", (int)u->pid, fp);
	}
}

/* One line per process that got the native unwinder (most samples first),
 * one for the rest. */
static void run_summary_native(const struct profile_stats *st)
{
	if (st->native_wanted && !st->nnative)
		printf("native     %llu processes without frame pointers keep the kernel's "
		       "chains (%s)\n",
		       (unsigned long long)st->native_wanted,
		       st->stack_copy ? "no room in the unwinder" : "no stack copies");
	for (size_t i = 0; i < st->nnative; i++) {
		const struct profile_unwinder *u = &st->native[i];
		printf("unwinder   pid %d (without frame pointers: %s): native, %llu samples, "
		       "%.1f%% reached the thread's base, %llu frames by CFI, %llu by frame "
		       "pointer, %.1f us CPU per sample\n",
		       (int)u->pid, u->why, (unsigned long long)u->samples,
		       run_pct(u->reached_root, u->samples), (unsigned long long)u->native_cfi,
		       (unsigned long long)u->native_fp,
		       u->samples ? (double)u->unwind_ns / 1000.0 / (double)u->samples : 0.0);
	}
	if (st->native_more)
		printf("unwinder   %zu more processes: native, %llu samples, %.1f%% reached the "
		       "thread's base\n",
		       st->native_more, (unsigned long long)st->native_rest.samples,
		       run_pct(st->native_rest.reached_root, st->native_rest.samples));
}

/* How many files got names from separate debug info, and from where. */
static void run_summary_debuginfo(const struct debuginfo_stats *d)
{
	uint64_t all = 0;
	if (!d->enabled) {
		printf("debuginfo  off (config \"debuginfo\": false)\n");
		return;
	}
	for (int i = 1; i < DEBUGINFO_SOURCE_COUNT; i++)
		all += d->files[i];
	printf("debuginfo  %llu files named from separate debug info", (unsigned long long)all);
	const char *sep = ": ";
	for (int i = 1; i < DEBUGINFO_SOURCE_COUNT; i++) {
		if (!d->files[i])
			continue;
		printf("%s%llu %s", sep, (unsigned long long)d->files[i],
		       debuginfo_source_name((enum debuginfo_source)i));
		sep = ", ";
	}
	if (d->refused)
		printf("; %llu debug files refused (see the warnings)",
		       (unsigned long long)d->refused);
	if (d->debuginfod)
		printf("; debuginfod asked %llu times, %llu answered\n",
		       (unsigned long long)d->queries, (unsigned long long)d->fetched);
	else
		printf("; debuginfod off (no debuginfod_urls, no DEBUGINFOD_URLS)\n");
}

/* What the deadlines cut: files the container could stall, children the
 * kernel held past their kill (docs/security.md, "Hangs"). */
static void run_summary_stalls(void)
{
	if (localfs_refused())
		printf("stalls     %u files skipped: on FUSE, a network or an unknown file "
		       "system, whose reads the container could stall (see the warnings)\n",
		       localfs_refused());
	if (jail_abandoned())
		printf("stalls     %u confined children did not die when killed at their deadline "
		       "(held in the kernel): abandoned\n",
		       jail_abandoned());
}

/* CPU time (us) of this process and of its children reaped so far (the
 * sandboxed readers of the JIT logs): the end of the window's own cost,
 * which waiting for a CPU on a loaded machine does not inflate. */
static uint64_t run_cpu_us(void)
{
	struct timespec ts;
	struct rusage ru;
	uint64_t us = 0;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		us += (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
		      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return us;
}

static void run_summary(struct profile *p, const struct run_args *a, uint64_t window_ms,
			const char *svg, const char *folded, uint64_t after_ms,
			uint64_t after_cpu_us)
{
	struct profile_stats st;
	profile_stats(p, &st);
	printf("container  %.*s  scope %s (%s), %u CPUs, %u Hz, %llu.%01llu s%s\n",
	       common_id_width(a->prof.entry->id), a->prof.entry->id, st.scope, st.events, st.cpus,
	       a->prof.frequency ? a->prof.frequency : 99, (unsigned long long)(window_ms / 1000),
	       (unsigned long long)(window_ms % 1000 / 100),
	       run_stop_signal ? " (ended early by a signal)" : "");
	if (st.filter_why[0])
		printf("filter     no kernel filter (%s): %s instead\n", st.filter_why, st.events);
	printf("samples    %llu (lost %llu, truncated stacks %llu, leaf callers from the stack "
	       "%llu)\n",
	       (unsigned long long)st.samples, (unsigned long long)st.lost,
	       (unsigned long long)st.truncated, (unsigned long long)st.leaf_callers);
	if (st.early_folds || st.dropped)
		printf("memory     raw stacks folded early %llu times (table full), %llu samples "
		       "dropped (out of memory)\n",
		       (unsigned long long)st.early_folds, (unsigned long long)st.dropped);
	if (st.table_dropped)
		printf(
		    "memory     stack table full (%zu MiB, max_stack_table_mib): %llu samples of "
		    "new stacks counted as \"" BUDGET_DROPPED_FRAME "\"\n",
		    st.table_bytes >> 20, (unsigned long long)st.table_dropped);
	if (st.cut)
		printf("stacks     %llu samples cut at the root end (deeper than --max-stack, "
		       "at most %u frames): \"" BUDGET_TRUNCATED_FRAME "\" under the process\n",
		       (unsigned long long)st.cut, SYMBOLIZER_MAX_FRAMES);
	static const struct {
		enum symbolizer_kind k;
		const char *name;
	} kinds[] = {{SYMBOLIZER_KIND_JIT, "java"},
		     {SYMBOLIZER_KIND_NATIVE, "native"},
		     {SYMBOLIZER_KIND_KERNEL, "kernel"}};
	uint64_t all = 0, named = 0;
	for (int k = 0; k < SYMBOLIZER_KIND_COUNT; k++) {
		all += st.frames[k];
		named += st.resolved[k];
	}
	printf("resolved  ");
	for (size_t i = 0; i < FS_ARRAY_SIZE(kinds); i++)
		printf(" %s %.1f%% of %llu,", kinds[i].name,
		       run_pct(st.resolved[kinds[i].k], st.frames[kinds[i].k]),
		       (unsigned long long)st.frames[kinds[i].k]);
	printf(" unknown address %llu; unresolved %.1f%% of %llu frames\n",
	       (unsigned long long)st.frames[SYMBOLIZER_KIND_UNKNOWN], run_pct(all - named, all),
	       (unsigned long long)all);
	for (size_t i = 0; i < st.njvm; i++) {
		const struct profile_jvm_result *j = &st.jvm[i];
		if (j->ok && j->windowed) {
			printf(
			    "jvm        pid %d (pid %d in the container): %zu JIT symbols of %zu "
			    "code loads over the window (agent JIT log, %zu KiB; last read %.1f "
			    "ms)\n",
			    (int)j->pid, (int)j->res.ns_pid, j->res.entries, j->res.loads,
			    j->res.bytes >> 10, (double)j->res.elapsed_us / 1000.0);
			if (j->res.dropped)
				printf(
				    "jvm        pid %d: %zu JIT log lines, loads or bytes dropped "
				    "(the JIT memory or work budget, or an interrupt): their "
				    "code may show as [unknown]\n",
				    (int)j->pid, j->res.dropped);
		} else if (j->ok)
			printf("jvm        pid %d (pid %d in the container): %zu JIT symbols (%s, "
			       "%.1f ms%s%s)\n",
			       (int)j->pid, (int)j->res.ns_pid, j->res.entries,
			       map_mode_name(j->res.mode), (double)j->res.elapsed_us / 1000.0,
			       j->res.cut[0] ? "; code cache walk stopped at its " : "",
			       j->res.cut);
		else
			printf("jvm        pid %d: not mapped (see the warning above)\n",
			       (int)j->pid);
	}
	for (size_t i = 0; i < st.nrtmap; i++) {
		const struct profile_rtmap_result *r = &st.rtmap[i];
		char comm[sizeof(r->comm) * 4];
		printf("perf map   pid %d (%s, pid %d in the container): %zu JIT symbols from "
		       "/tmp/perf-%d.map (%llu KiB), named %.1f%% of its %llu JIT frames",
		       (int)r->pid, textsafe(r->comm, comm, sizeof(comm), 0), (int)r->ns_pid,
		       r->entries, (int)r->ns_pid, (unsigned long long)(r->bytes >> 10),
		       run_pct(r->named, r->jit), (unsigned long long)r->jit);
		if (r->skipped)
			printf(", %zu lines skipped", r->skipped);
		if (r->restarts)
			printf(", read again %u times (replaced or truncated)", r->restarts);
		if (r->capped)
			printf(", only its first %lu MiB read", PERFMAP_MAX_CONTAINER_FILE >> 20);
		if (r->stopped)
			printf(", reading stopped (see the warning)");
		printf("\n");
	}
	for (size_t i = 0; i < st.njvm; i++)
		if (st.jvm[i].ok && st.jvm[i].windowed && st.jvm[i].res.nonsafepoints[0])
			printf("inlining   pid %d: -XX:+DebugNonSafepoints %s\n",
			       (int)st.jvm[i].pid, st.jvm[i].res.nonsafepoints);
	if (st.jit_leaves)
		printf("inlining   %llu of %llu leaf frames from safepoint-only debug info (code "
		       "compiled before -XX:+DebugNonSafepoints: self time may sit on a caller)\n",
		       (unsigned long long)st.sp_only_leaves, (unsigned long long)st.jit_leaves);
	if (st.time_approx)
		printf("jit        %llu samples in stacks whose code changed owner while they were "
		       "sampled: named by the later owner\n",
		       (unsigned long long)st.time_approx);
	run_summary_unwind(&st);
	run_summary_native(&st);
	run_summary_debuginfo(&st.debug);
	run_summary_stalls();
	struct hot_frame *hot = NULL;
	size_t n = 0;
	uint64_t total = fold_total(profile_table(p));
	if (hot_frames(profile_table(p), 0, RUN_HOT_FRAMES, &hot, &n) == 0 && n) {
		printf("hottest    (self samples)\n");
		for (size_t i = 0; i < n; i++) {
			char safe[2048]; /* frame names come from the container */
			printf("  %5.1f%% %8llu  %s\n", run_pct(hot[i].self, total),
			       (unsigned long long)hot[i].self,
			       textsafe(hot[i].name, safe, sizeof(safe), 0));
		}
	}
	hot_frames_free(hot, n);
	if (!total)
		printf("note       no samples: was the container idle (or its processes gone)?\n");
	printf("svg        %s\n", svg);
	if (folded)
		printf("folded     %s\n", folded);
	if (a->pprof)
		printf("pprof      %s\n", a->pprof);
	if (a->speedscope)
		printf("speedscope %s\n", a->speedscope);
	printf("graph      written %llu ms after the window closed (JIT maps %.1f ms, "
	       "symbols %.1f ms, CPU %.1f ms)\n",
	       (unsigned long long)after_ms, (double)st.map_us / 1000.0,
	       (double)st.symbolize_us / 1000.0, (double)after_cpu_us / 1000.0);
	fflush(stdout);
}

/* The thread-state poller's line (--event offcpu|wall). */
static void run_summary_offcpu(const struct offcpu *oc, uint64_t window_ms)
{
	struct offcpu_stats st;
	offcpu_stats(oc, &st);
	printf("threads    %llu ticks over %u processes, %llu thread looks, %llu blocked "
	       "(%llu stacks copied, %llu unchanged since the last tick, %llu without a user "
	       "stack), %llu looks lost to the cap (%llu ms), %.1f ms CPU (%.2f%% of the window)\n",
	       (unsigned long long)st.ticks, st.procs, (unsigned long long)st.thread_ticks,
	       (unsigned long long)st.blocked, (unsigned long long)st.copies,
	       (unsigned long long)st.reused, (unsigned long long)st.no_stack,
	       (unsigned long long)st.capped, (unsigned long long)(st.capped_us / 1000),
	       (double)st.cpu_ns / 1e6,
	       window_ms ? (double)st.cpu_ns / 1e4 / (double)window_ms : 0.0);
	fflush(stdout);
}

/* flamesidecar-<id12>-<UTC time>.<ext> */
static void run_default_name(char *buf, size_t len, const char *id, time_t t, const char *ext)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(buf, len, "flamesidecar-%.12s-%04d%02d%02dT%02d%02d%02dZ.%s", id,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ext);
}

/* The SVG's and the folded file's names (defaults beside the SVG, in the
 * current directory), into the buffers (PATH_MAX each). 0 or an exit code. */
static int run_file_names(const struct run_args *a, const struct registry_entry *e, time_t started,
			  char *svg_name, char *folded_name, const char **svg, const char **folded)
{
	*svg = a->output;
	*folded = a->folded;
	if (!*svg) {
		run_default_name(svg_name, PATH_MAX, e->id, started, "svg");
		*svg = svg_name;
	}
	if (!*folded && !a->no_folded && strcmp(*svg, "-")) {
		size_t l = strlen(*svg);
		if (l > 4 && !strcmp(*svg + l - 4, ".svg"))
			l -= 4;
		if (snprintf(folded_name, PATH_MAX, "%.*s.folded", (int)l, *svg) >= PATH_MAX)
			return cli_usage_error("run", "the output name is too long");
		*folded = folded_name;
	}
	if (a->no_folded)
		*folded = NULL;
	return 0;
}

/* The SVG's title and subtitle, unless given (buffers of 256). */
static void run_titles(struct run_args *a, const struct registry_entry *e, struct profile *p,
		       time_t started, uint64_t window_ms, char *title, char *subtitle)
{
	struct tm tm;
	gmtime_r(&started, &tm);
	static const char *const what[] = {"CPU", "Off-CPU time", "Wall-clock time"};
	if (!a->render.title) {
		snprintf(title, 256, "%s of container %.*s", what[a->event], common_id_width(e->id),
			 e->id);
		a->render.title = title;
	}
	if (a->render.subtitle)
		return;
	snprintf(
	    subtitle, 256,
	    a->event ? "%04d-%02d-%02d %02d:%02d:%02d UTC, %llu.%01llu s at %u Hz, %llu us"
		     : "%04d-%02d-%02d %02d:%02d:%02d UTC, %llu.%01llu s at %u Hz, %llu samples",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (unsigned long long)(window_ms / 1000), (unsigned long long)(window_ms % 1000 / 100),
	    a->prof.frequency ? a->prof.frequency : 99,
	    (unsigned long long)fold_total(profile_table(p)));
	if (a->prof.pid)
		snprintf(subtitle + strlen(subtitle), 256 - strlen(subtitle), ", pid %d",
			 (int)a->prof.pid);
	a->render.subtitle = subtitle;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {.duration_ms = RUN_DEFAULT_MS};
	render_opts_init(&a.render);
	a.prof.map.mode = MAP_MODE_AUTO;
	a.prof.map.fallback = 1; /* JVMs that cannot be attached to: vmstructs */
	a.prof.map.timeout_ms = MAP_DEFAULT_TIMEOUT_MS;
	int rc = run_parse(argc, argv, &a);
	if (rc)
		return rc;
	if (a.help) {
		run_usage(stdout);
		return FS_EXIT_OK;
	}
	struct fs_config cfg;
	struct registry_entry e;
	if ((rc = common_open_container("run", COMMON_WHY_PROFILE, a.id, &cfg, &e)))
		return rc;

	/* file names, decided before the window so a bad one fails early */
	time_t started = time(NULL);
	char svg_name[PATH_MAX], folded_name[PATH_MAX];
	const char *svg, *folded;
	if ((rc = run_file_names(&a, &e, started, svg_name, folded_name, &svg, &folded)))
		return rc;
	bool svg_stdout = !strcmp(svg, "-");

	struct fs_error err = {0};
	struct profile *p = NULL;
	a.prof.entry = &e;
	a.prof.warn = common_warn;
	a.prof.warn_ctx = "run";
	if (a.event != OFFCPU_EVENT_CPU) /* off-CPU and wall: microseconds */
		a.render.count_name = "us";
	a.prof.table_bytes = (size_t)cfg.max_stack_table_mib << 20;
	common_debuginfo(&cfg, &a.prof);
#ifdef FS_TEST_BUILD
	/* test builds: a tiny raw table, to exercise early folding */
	const char *raw = getenv("FS_TEST_PROFILE_RAW_WORDS");
	if (raw)
		a.prof.raw_max_words = strtoul(raw, NULL, 10);
#endif
	struct export *x = NULL;
	if (a.pprof || a.speedscope) {
		if (!(x = export_new()))
			return cli_failf("run", FS_EXIT_FAIL, "out of memory");
		/* per thread: pprof's thread labels (the folded file is the same) */
		a.prof.on_stack = export_cli_on_stack;
		a.prof.on_module = export_cli_on_module;
		a.prof.on_stack_ctx = x;
		a.prof.per_thread = 1;
	}
	/* Should this process die without stopping them, the JVMs' timed
	 * sessions end by themselves a while after the window. */
	a.prof.map.window_ttl_s = (unsigned)(a.duration_ms / 1000) + 300;
	a.prof.map.stop = &run_abort;
	run_stop_signal = 0;
	run_abort = 0;
	run_catch_signals();
	struct offcpu *oc = NULL;
	int r = common_profile_open(&a.prof, a.event, &p, &oc, &err);
	if (r < 0) {
		export_free(x);
		return cli_fail("run", &err);
	}
	bool tty = !a.quiet && isatty(STDERR_FILENO);
	if (!a.quiet && !tty)
		fprintf(stderr, "flamesidecar run: recording %.*s for %llu ms\n",
			common_id_width(e.id), e.id, a.duration_ms);

	uint64_t window_ms = 0;
	int64_t start_ns = run_realtime_ns();
	r = run_window(p, oc, a.duration_ms, tty, &window_ms, &err);
	uint64_t closed = timeutil_now_ms(), closed_cpu = run_cpu_us();
	if (oc)
		offcpu_stop(oc);
	profile_stop(p);
	if (r < 0 || (r = profile_fold(p, 1, &err)) < 0) {
		offcpu_free(oc);
		profile_close(p);
		export_free(x);
		return cli_failf("run", FS_EXIT_FAIL, "%s", err.msg);
	}

	/* the graph */
	char title[256], subtitle[256];
	run_titles(&a, &e, p, started, window_ms, title, subtitle);
	int exit_code = FS_EXIT_OK;
	if (folded && run_write_folded(p, folded, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	if (run_write_svg(p, svg_stdout ? NULL : svg, &a.render, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	if (x && run_write_exports(&a, x, a.render.title, start_ns, window_ms, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	export_free(x);
	uint64_t after = timeutil_now_ms() - closed, after_cpu = run_cpu_us() - closed_cpu;
	if (exit_code == FS_EXIT_OK && !a.quiet && !svg_stdout) {
		run_summary(p, &a, window_ms, svg, folded, after, after_cpu);
		if (oc)
			run_summary_offcpu(oc, window_ms);
	} else if (exit_code == FS_EXIT_OK && !a.quiet)
		fprintf(stderr,
			"flamesidecar run: %llu samples, graph written %llu ms after the "
			"window closed\n",
			(unsigned long long)fold_total(profile_table(p)),
			(unsigned long long)after);
	offcpu_free(oc);
	profile_close(p);
	return exit_code;
}
