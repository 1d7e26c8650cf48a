/* run.c - `flamesidecar run <id>`: sample a registered container for a
 * while, then map its JVMs, symbolize, and write a folded profile and an
 * SVG flame graph (profile.h does the work; this file is the verb). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct run_args {
	struct common_session s; /* the container, sampling and JVM mapping */
	unsigned long long duration_ms;
	const char *output, *folded;
	const char *pprof, *speedscope;
	int no_folded, quiet, threads;
	struct render_opts render;
};

#define RA(field) offsetof(struct run_args, field)
_Static_assert(sizeof(enum profile_unwind) == sizeof(int), "OPT_ENUM stores an int");

static const struct opt_choice run_unwinds[] = {{"auto", PROFILE_UNWIND_AUTO},
						{"fp", PROFILE_UNWIND_FP},
						{"hotspot", PROFILE_UNWIND_HOTSPOT},
						{0}};

static const struct opt run_opts[] = {
    {.name = "duration",
     .key = 'd',
     .arg = "TIME",
     .help = "length of the window: 30s (default), 500ms, 2m, 1h ({lo} to {hi})",
     .kind = OPT_DURATION,
     .off = RA(duration_ms),
     .lo = 1,
     .hi = RUN_MAX_MS},
    {.name = "threads",
     .help = "the thread's name as a frame under the process",
     .kind = OPT_FLAG,
     .off = RA(threads)},
    {.name = "output",
     .key = 'o',
     .arg = "FILE",
     .help = "the SVG (default flamesidecar-<id>-<UTC time>.svg in the current directory; - "
	     "for standard output)",
     .more = "The default name holds the first 12 characters of the id and the UTC start "
	     "time (YYYYMMDDTHHMMSSZ). With -, no summary is printed, and no folded file "
	     "unless --folded names one.",
     .kind = OPT_STRING,
     .off = RA(output)},
    {.name = "folded",
     .arg = "FILE",
     .help = "the folded stacks (default: the SVG's name with .folded; none when the SVG "
	     "goes to standard output)",
     .kind = OPT_STRING,
     .off = RA(folded)},
    {.name = "no-folded",
     .help = "do not write the folded stacks",
     .kind = OPT_FLAG,
     .off = RA(no_folded)},
    {.name = "pprof",
     .arg = "FILE",
     .help = "also write a gzip-compressed pprof profile (go tool pprof, Pyroscope, Parca) "
	     "with container, pod, process and thread labels, native frames in their modules",
     .more = "Sample types samples/count and cpu/nanoseconds; labels container_id (and "
	     "container_name, pod, namespace, engine where known), pid, process, thread (the "
	     "thread's name, its comm), tid (host thread id); the time window; frame kinds as "
	     "mappings, native frames in the mapping of their file (path as the container "
	     "sees it, build id), inlined frames as extra lines of their caller's location.",
     .kind = OPT_STRING,
     .off = RA(pprof)},
    {.name = "speedscope",
     .arg = "FILE",
     .help = "also write a speedscope JSON file (one profile per process)",
     .kind = OPT_STRING,
     .off = RA(speedscope)},
    {.name = "quiet",
     .key = 'q',
     .help = "no progress line and no summary (warnings and errors still go to stderr)",
     .more = "The hook's annotation-triggered profiles use it.",
     .kind = OPT_FLAG,
     .off = RA(quiet)},
    {.name = "map-timeout",
     .arg = "MS",
     .help = "deadline per JVM for the map (default " OPT_XSTR(MAP_DEFAULT_TIMEOUT_MS) ")",
     .kind = OPT_UINT,
     .off = RA(s.prof.map.timeout_ms),
     .lo = 1,
     .hi = 600000},
    {.name = "perf-map",
     .help = "also write /tmp/perf-<host pid>.map for perf",
     .kind = OPT_FLAG,
     .off = RA(s.prof.map.write_host)},
    {.name = "max-stack",
     .arg = "N",
     .help = "deepest callchain kept (default 127, at most {hi})",
     .kind = OPT_UINT,
     .off = RA(s.prof.max_stack),
     .lo = 1,
     .hi = SYMBOLIZER_MAX_FRAMES},
    {.name = "with-pid",
     .help = "root frame \"comm-PID\" (one tower per process, like stackcollapse-perf.pl "
	     "--pid)",
     .kind = OPT_FLAG,
     .off = RA(s.prof.with_pid)},
    {.name = "unwind",
     .arg = "MODE",
     .help = "auto (default: when the container runs a JVM or a process without frame "
	     "pointers, stack copies, the HotSpot unwinder for JVMs and .eh_frame CFI for the "
	     "others: whole stacks, interpreted frames named), fp (frame pointers only: "
	     "cheapest, interpreted frames anonymous), hotspot (copies even when no such "
	     "process is seen at open)",
     .more = "The native unwinder walks each frame by its file's .eh_frame CFI, else by its "
	     "frame pointer, as perf record --call-graph dwarf does; the summary's unwinder "
	     "lines name the processes that got it. A container whose processes all keep "
	     "frame pointers gets no copies (docs/unwind.md).",
     .kind = OPT_ENUM,
     .off = RA(s.prof.unwind),
     .choices = run_unwinds},
    {.name = "stack-copy",
     .arg = "BYTES",
     .help = "user stack copied per sample for the unwinders (default " OPT_XSTR(
	 SAMPLER_DEFAULT_STACK_COPY) ", {lo} to {hi})",
     .more = "The summary's stack use line gives, per JVM, the share of whole walks that "
	     "needed at most 4, 8, 16 and 32 KiB: a smaller copy costs less kernel work per "
	     "sample (docs/unwind.md).",
     .kind = OPT_UINT,
     .off = RA(s.prof.stack_copy),
     .lo = 512,
     .hi = SAMPLER_MAX_STACK_COPY},
};
static const struct opt_group run_group = OPT_GROUP(NULL, run_opts);
static const struct opt_use run_uses[] = {
    {&run_group, 0},
    {&common_session_group, RA(s)},
    {&common_target_group, RA(s.target)},
    {&render_cli_group, RA(render)},
};

static int run_check(void *args, struct fs_error *err)
{
	const struct run_args *a = args;
	int to_stdout = (a->output && !strcmp(a->output, "-")) +
			(a->pprof && !strcmp(a->pprof, "-")) +
			(a->speedscope && !strcmp(a->speedscope, "-"));
	if (to_stdout > 1)
		return fs_error_set(err, 0,
				    "only one output can be standard output (-o, --pprof, "
				    "--speedscope)");
	return 0;
}

const struct opt_verb cmd_run_opts = {
    .name = "run",
    .summary = "profile a registered container and write a flame graph",
    .synopsis = "CONTAINER [OPTIONS]",
    .intro = "CONTAINER: an id, a name (docker/podman ps), a unique id prefix, or\n"
	     "--pod NAME [--namespace NS] [--container NAME] for a Kubernetes pod.\n\n"
	     "Sample the CPU stacks of every thread of every process of a registered\n"
	     "container (see `flamesidecar list`) for a while, then name Java frames with\n"
	     "the JVMs' JIT maps taken at the end of the window, and write a folded\n"
	     "profile and an interactive SVG flame graph. Ctrl-C ends the window early\n"
	     "and still writes the graph. Must run as root.\n",
    .outro = "The summary (stdout) gives the samples taken and lost, the share of frames\n"
	     "named per kind (java, native, kernel), the five hottest frames by self\n"
	     "samples, where the files are and how long the graph took after the window.\n\n"
	     "Examples:\n"
	     "  flamesidecar run 3f2a9c\n"
	     "  flamesidecar run 3f2a9c -d 10s -F 499 -o checkout.svg\n"
	     "  flamesidecar run 3f2a9c --pid 41236 --title 'checkout, peak' --minwidth 0.5%\n"
	     "  flamesidecar run 3f2a9c -d 60s -o - --no-folded > cpu.svg\n"
	     "  flamesidecar run 3f2a9c --pprof cpu.pb.gz --speedscope cpu.speedscope.json\n"
	     "  flamesidecar run --pod checkout-7d9f --namespace shop -d 30s\n\n"
	     "Exit codes: 0 graph written, 1 failed, 2 usage, 3 container or process not\n"
	     "found (or not running, or gone during the window), 4 not permitted (run as\n"
	     "root).\n",
    .uses = OPT_USES(run_uses),
    .check = run_check,
};

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
	unsigned hz = a->s.prof.frequency ? a->s.prof.frequency : 99;
	x->period_ns = 1000000000ull / hz;
	x->time_ns = start_ns;
	x->duration_ns = (int64_t)window_ms * 1000000;
	x->root_is_process = 1;
	if (a->s.event != OFFCPU_EVENT_CPU) { /* counts are microseconds */
		x->period_ns = 1000;
		x->time_type = a->s.event == OFFCPU_EVENT_WALL ? "wall" : "offcpu";
	}
	if (export_set_name(x, title) < 0 || export_cli_container_labels(x, a->s.prof.entry) < 0)
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

/* The share of frames named per kind. */
static void run_summary_resolved(const struct profile_stats *st)
{
	static const struct {
		enum symbolizer_kind k;
		const char *name;
	} kinds[] = {{SYMBOLIZER_KIND_JIT, "java"},
		     {SYMBOLIZER_KIND_NATIVE, "native"},
		     {SYMBOLIZER_KIND_KERNEL, "kernel"}};
	uint64_t all = 0, named = 0;
	for (int k = 0; k < SYMBOLIZER_KIND_COUNT; k++) {
		all += st->frames[k];
		named += st->resolved[k];
	}
	printf("resolved  ");
	for (size_t i = 0; i < FS_ARRAY_SIZE(kinds); i++)
		printf(" %s %.1f%% of %llu,", kinds[i].name,
		       run_pct(st->resolved[kinds[i].k], st->frames[kinds[i].k]),
		       (unsigned long long)st->frames[kinds[i].k]);
	printf(" unknown address %llu; unresolved %.1f%% of %llu frames\n",
	       (unsigned long long)st->frames[SYMBOLIZER_KIND_UNKNOWN], run_pct(all - named, all),
	       (unsigned long long)all);
}

/* The JVMs' maps, the runtimes' perf maps, inlining and JIT notes. */
static void run_summary_jvms(const struct profile_stats *st)
{
	for (size_t i = 0; i < st->njvm; i++) {
		const struct profile_jvm_result *j = &st->jvm[i];
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
	for (size_t i = 0; i < st->nrtmap; i++) {
		const struct profile_rtmap_result *r = &st->rtmap[i];
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
	for (size_t i = 0; i < st->njvm; i++)
		if (st->jvm[i].ok && st->jvm[i].windowed && st->jvm[i].res.nonsafepoints[0])
			printf("inlining   pid %d: -XX:+DebugNonSafepoints %s\n",
			       (int)st->jvm[i].pid, st->jvm[i].res.nonsafepoints);
	if (st->jit_leaves)
		printf("inlining   %llu of %llu leaf frames from safepoint-only debug info (code "
		       "compiled before -XX:+DebugNonSafepoints: self time may sit on a caller)\n",
		       (unsigned long long)st->sp_only_leaves, (unsigned long long)st->jit_leaves);
	if (st->time_approx)
		printf("jit        %llu samples in stacks whose code changed owner while they were "
		       "sampled: named by the later owner\n",
		       (unsigned long long)st->time_approx);
}

/* The hottest frames by self samples. */
static void run_summary_hot(struct profile *p)
{
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
}

/* Where the files are and how long they took. */
static void run_summary_files(const struct run_args *a, const char *svg, const char *folded,
			      uint64_t after_ms, const struct profile_stats *st)
{
	printf("svg        %s\n", svg);
	if (folded)
		printf("folded     %s\n", folded);
	if (a->pprof)
		printf("pprof      %s\n", a->pprof);
	if (a->speedscope)
		printf("speedscope %s\n", a->speedscope);
	printf("graph      written %llu ms after the window closed (JIT maps %.1f ms, "
	       "symbols %.1f ms)\n",
	       (unsigned long long)after_ms, (double)st->map_us / 1000.0,
	       (double)st->symbolize_us / 1000.0);
	fflush(stdout);
}

static void run_summary(struct profile *p, const struct run_args *a, uint64_t window_ms,
			const char *svg, const char *folded, uint64_t after_ms)
{
	struct profile_stats st;
	profile_stats(p, &st);
	printf("container  %.*s  scope %s (%s), %u CPUs, %u Hz, %llu.%01llu s%s\n",
	       common_id_width(a->s.prof.entry->id), a->s.prof.entry->id, st.scope, st.events,
	       st.cpus, a->s.prof.frequency ? a->s.prof.frequency : 99,
	       (unsigned long long)(window_ms / 1000), (unsigned long long)(window_ms % 1000 / 100),
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
	run_summary_resolved(&st);
	run_summary_jvms(&st);
	run_summary_unwind(&st);
	run_summary_native(&st);
	run_summary_debuginfo(&st.debug);
	run_summary_stalls();
	run_summary_hot(p);
	run_summary_files(a, svg, folded, after_ms, &st);
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
		snprintf(title, 256, "%s of container %.*s", what[a->s.event],
			 common_id_width(e->id), e->id);
		a->render.title = title;
	}
	if (a->render.subtitle)
		return;
	snprintf(
	    subtitle, 256,
	    a->s.event ? "%04d-%02d-%02d %02d:%02d:%02d UTC, %llu.%01llu s at %u Hz, %llu us"
		       : "%04d-%02d-%02d %02d:%02d:%02d UTC, %llu.%01llu s at %u Hz, %llu samples",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (unsigned long long)(window_ms / 1000), (unsigned long long)(window_ms % 1000 / 100),
	    a->s.prof.frequency ? a->s.prof.frequency : 99,
	    (unsigned long long)fold_total(profile_table(p)));
	if (a->s.prof.pid)
		snprintf(subtitle + strlen(subtitle), 256 - strlen(subtitle), ", pid %d",
			 (int)a->s.prof.pid);
	a->render.subtitle = subtitle;
}

/* What a run holds open; run_close frees what is set. */
struct run_session {
	struct profile *p;
	struct offcpu *oc;
	struct export *x;
	uint64_t window_ms, closed_ms; /* the window's length, when it closed */
	int64_t start_ns;	       /* when it opened (CLOCK_REALTIME) */
};

static void run_close(struct run_session *rs)
{
	offcpu_free(rs->oc);
	profile_close(rs->p);
	export_free(rs->x);
}

/* The profile options the command line does not give: the container, the
 * config's budgets, the export's callbacks. 0 or an exit code. */
static int run_prepare(struct run_args *a, const struct fs_config *cfg, struct registry_entry *e,
		       struct run_session *rs)
{
	struct profile_opts *o = &a->s.prof;
	o->entry = e;
	o->warn = common_warn;
	o->warn_ctx = "run";
	if (a->threads)
		o->per_thread = o->thread_frames = 1;
	if (a->s.event != OFFCPU_EVENT_CPU) /* off-CPU and wall: microseconds */
		a->render.count_name = "us";
	o->table_bytes = (size_t)cfg->max_stack_table_mib << 20;
	common_debuginfo(cfg, o);
#ifdef FS_TEST_BUILD
	/* test builds: a tiny raw table, to exercise early folding */
	const char *raw = getenv("FS_TEST_PROFILE_RAW_WORDS");
	if (raw)
		o->raw_max_words = strtoul(raw, NULL, 10);
#endif
	if (a->pprof || a->speedscope) {
		if (!(rs->x = export_new()))
			return cli_failf("run", FS_EXIT_FAIL, "out of memory");
		/* per thread: pprof's thread labels (the folded file is the same) */
		o->on_stack = export_cli_on_stack;
		o->on_module = export_cli_on_module;
		o->on_stack_ctx = rs->x;
		o->per_thread = 1;
	}
	/* Should this process die without stopping them, the JVMs' timed
	 * sessions end by themselves a while after the window. */
	o->map.window_ttl_s = (unsigned)(a->duration_ms / 1000) + 300;
	o->map.stop = &run_abort;
	return 0;
}

/* Open the profile, sample for the window, fold. 0 or an exit code: a
 * container or process gone is FS_EXIT_NOTFOUND (cli_fail). */
static int run_record(struct run_args *a, const struct registry_entry *e, struct run_session *rs)
{
	struct fs_error err = {0};
	run_stop_signal = 0;
	run_abort = 0;
	run_catch_signals();
	if (common_profile_open(&a->s.prof, a->s.event, &rs->p, &rs->oc, &err) < 0)
		return cli_fail("run", &err);
	bool tty = !a->quiet && isatty(STDERR_FILENO);
	if (!a->quiet && !tty)
		fprintf(stderr, "flamesidecar run: recording %.*s for %llu ms\n",
			common_id_width(e->id), e->id, a->duration_ms);
	rs->start_ns = run_realtime_ns();
	int r = run_window(rs->p, rs->oc, a->duration_ms, tty, &rs->window_ms, &err);
	rs->closed_ms = timeutil_now_ms();
	if (rs->oc)
		offcpu_stop(rs->oc);
	profile_stop(rs->p);
	if (r < 0 || profile_fold(rs->p, 1, &err) < 0)
		return cli_fail("run", &err);
	return 0;
}

/* The files, then the summary. The exit code. */
static int run_output(struct run_args *a, const struct registry_entry *e, struct run_session *rs,
		      time_t started, const char *svg, const char *folded)
{
	struct fs_error err = {0};
	char title[256], subtitle[256];
	bool svg_stdout = !strcmp(svg, "-");
	run_titles(a, e, rs->p, started, rs->window_ms, title, subtitle);
	int exit_code = FS_EXIT_OK;
	if (folded && run_write_folded(rs->p, folded, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	if (run_write_svg(rs->p, svg_stdout ? NULL : svg, &a->render, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	if (rs->x &&
	    run_write_exports(a, rs->x, a->render.title, rs->start_ns, rs->window_ms, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	uint64_t after = timeutil_now_ms() - rs->closed_ms;
	if (exit_code != FS_EXIT_OK || a->quiet)
		return exit_code;
	if (!svg_stdout) {
		run_summary(rs->p, a, rs->window_ms, svg, folded, after);
		if (rs->oc)
			run_summary_offcpu(rs->oc, rs->window_ms);
	} else
		fprintf(stderr,
			"flamesidecar run: %llu samples, graph written %llu ms after the "
			"window closed\n",
			(unsigned long long)fold_total(profile_table(rs->p)),
			(unsigned long long)after);
	return exit_code;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {.duration_ms = RUN_DEFAULT_MS};
	int first;
	render_opts_init(&a.render);
	common_session_init(&a.s);
	int rc = cli_parse(&cmd_run_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if ((rc = common_target_operand("run", &a.s.target, argc, argv, first)))
		return rc;
	struct fs_config cfg;
	struct registry_entry e;
	if ((rc = common_open_container("run", COMMON_WHY_PROFILE, &a.s.target, &cfg, &e)))
		return rc;

	/* file names, decided before the window so a bad one fails early */
	time_t started = time(NULL);
	char svg_name[PATH_MAX], folded_name[PATH_MAX];
	const char *svg, *folded;
	if ((rc = run_file_names(&a, &e, started, svg_name, folded_name, &svg, &folded)))
		return rc;
	struct run_session rs = {0};
	if (!(rc = run_prepare(&a, &cfg, &e, &rs)) && !(rc = run_record(&a, &e, &rs)))
		rc = run_output(&a, &e, &rs, started, svg, folded);
	run_close(&rs);
	return rc;
}
