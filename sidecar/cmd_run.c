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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "proc.h"
#include "procmem.h"
#include "watchdog.h"
#include "common.h"
#include "export_cli.h"
#include "flame.h"
#include "fold.h"
#include "offcpu.h"
#include "profile.h"
#include "outfile.h"
#include "render.h"
#include "render_cli.h"
#include "run_summary.h"
#include "sampler.h"

#define RUN_DEFAULT_MS 30000ull
#define RUN_MAX_MS     (24ull * 3600 * 1000)

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

/* Test builds: one read of the container's first process, which procmem.c
 * makes unchecked when FS_TEST_PROCMEM_UNGUARDED names an address
 * (stall.bats), at the window's start or, with
 * FS_TEST_PROCMEM_UNGUARDED_AT=output, while the SVG is being written
 * (the folded file renamed into place, the SVG's temporary file open):
 * the address is then hidden from procmem.c until that moment. */
#ifdef FS_TEST_BUILD
static char *run_test_held;
#endif

static void run_test_arm(void)
{
#ifdef FS_TEST_BUILD
	const char *at = getenv("FS_TEST_PROCMEM_UNGUARDED_AT");
	const char *addr = getenv("FS_TEST_PROCMEM_UNGUARDED");
	if (addr && at && !strcmp(at, "output")) {
		run_test_held = strdup(addr);
		unsetenv("FS_TEST_PROCMEM_UNGUARDED");
	}
#endif
}

static void run_test_read(const struct registry_entry *e, const char *when)
{
#ifdef FS_TEST_BUILD
	if (!strcmp(when, "output")) {
		if (!run_test_held)
			return;
		setenv("FS_TEST_PROCMEM_UNGUARDED", run_test_held, 1);
	}
	if (!getenv("FS_TEST_PROCMEM_UNGUARDED"))
		return;
	char b[64];
	int fd = proc_pidfd_open_checked(e->pid, e->start_time, NULL);
	if (fd >= 0) {
		(void)procmem_read(e->pid, fd, 0, b, sizeof(b));
		close(fd);
	}
#else
	(void)e;
	(void)when;
#endif
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
			 const struct registry_entry *e, struct fs_error *err)
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
	run_test_read(e, "output");
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

/* What a run holds open; run_close frees what is set. */
struct run_session {
	struct profile *p;
	struct offcpu *oc;
	struct export *x;
	uint64_t window_ms, closed_ms; /* the window's length, when it closed */
	uint64_t closed_cpu_us;	       /* run_cpu_us() when it closed */
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
	run_test_read(e, "window");
	int r = run_window(rs->p, rs->oc, a->duration_ms, tty, &rs->window_ms, &err);
	rs->closed_ms = timeutil_now_ms();
	rs->closed_cpu_us = run_cpu_us();
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
	if (run_write_svg(rs->p, svg_stdout ? NULL : svg, &a->render, e, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	if (rs->x &&
	    run_write_exports(a, rs->x, a->render.title, rs->start_ns, rs->window_ms, &err) < 0)
		exit_code = cli_fail_file("run", &err);
	uint64_t after = timeutil_now_ms() - rs->closed_ms;
	uint64_t after_cpu = run_cpu_us() - rs->closed_cpu_us;
	if (exit_code != FS_EXIT_OK || a->quiet)
		return exit_code;
	if (!svg_stdout) {
		struct run_summary_in in = {.entry = e,
					    .frequency = a->s.prof.frequency,
					    .ended_early = run_stop_signal != 0,
					    .window_ms = rs->window_ms,
					    .after_ms = after,
					    .after_cpu_us = after_cpu,
					    .svg = svg,
					    .folded = folded,
					    .pprof = a->pprof,
					    .speedscope = a->speedscope};
		run_summary_print(rs->p, &in);
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
	/* from here on, memory reads: a held one cannot hold the user (watchdog.h) */
	if ((rc = watchdog_start("run")) != WATCHDOG_CHILD)
		return rc;
	run_test_arm();
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
