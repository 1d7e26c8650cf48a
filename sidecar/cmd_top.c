/* top.c - `flamesidecar top <id>`: the hottest frames of a container, live,
 * like perf top: sampled and aggregated by profile.h, shown every interval.
 * JVMs are mapped at the start and their maps refreshed every few seconds
 * (a oneshot map_jvm costs ~10 ms), so code compiled since is named. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "textsafe.h"
#include "cleanup.h"
#include "cli.h"
#include "watchdog.h"
#include "common.h"
#include "fold.h"
#include "hot.h"
#include "offcpu.h"
#include "profile.h"
#include "sampler.h"

#define TOP_DEFAULT_INTERVAL_MS	 1000ull
#define TOP_DEFAULT_ONCE_MS	 2000ull
#define TOP_DEFAULT_MAP_EVERY_MS 5000ull
#define TOP_DEFAULT_ROWS	 20

static volatile sig_atomic_t top_stop_signal;

static void top_on_signal(int sig)
{
	top_stop_signal = sig;
}

struct top_args {
	struct common_session s; /* the container, sampling and JVM mapping */
	unsigned long long interval_ms, duration_ms, map_every_ms;
	int once, cumulative, by_total;
	unsigned rows;
};

#define TA(field)  offsetof(struct top_args, field)
#define TOP_MIN_MS 10ull
#define TOP_MAX_MS (24ull * 3600 * 1000)

static const struct opt_choice top_sorts[] = {{"self", 0}, {"total", 1}, {0}};

static const struct opt top_opts[] = {
    {.name = "interval",
     .key = 'i',
     .arg = "TIME",
     .help = "refresh every TIME (default 1s): 500ms, 2s, 1m",
     .kind = OPT_DURATION,
     .off = TA(interval_ms),
     .lo = TOP_MIN_MS,
     .hi = TOP_MAX_MS},
    {.name = "once",
     .help = "sample once for -d TIME, print one table and exit",
     .kind = OPT_FLAG,
     .off = TA(once)},
    {.name = "duration",
     .key = 'd',
     .arg = "TIME",
     .help = "the --once window (default 2s)",
     .kind = OPT_DURATION,
     .off = TA(duration_ms),
     .lo = TOP_MIN_MS,
     .hi = TOP_MAX_MS},
    {.name = "rows",
     .key = 'n',
     .arg = "N",
     .help = "frames shown (default " OPT_XSTR(TOP_DEFAULT_ROWS) "; 0 = all)",
     .kind = OPT_UINT,
     .off = TA(rows),
     .lo = 0,
     .hi = 100000},
    {.name = "cumulative",
     .key = 'c',
     .help = "shares since the start instead of over the last interval",
     .kind = OPT_FLAG,
     .off = TA(cumulative)},
    {.name = "sort",
     .key = 's',
     .arg = "KEY",
     .help = "self (default) or total",
     .kind = OPT_ENUM,
     .off = TA(by_total),
     .choices = top_sorts},
    {.name = "map-every",
     .arg = "TIME",
     .help = "refresh the JVMs' JIT maps this often (default 5s)",
     .more = "JVMs running the agent's timed session are read from their JIT log instead.",
     .kind = OPT_DURATION,
     .off = TA(map_every_ms),
     .lo = TOP_MIN_MS,
     .hi = TOP_MAX_MS},
};
static const struct opt_group top_group = OPT_GROUP(NULL, top_opts);
static const struct opt_use top_uses[] = {
    {&top_group, 0},
    {&common_session_group, TA(s)},
    {&common_target_group, TA(s.target)},
};

const struct opt_verb cmd_top_opts = {
    .name = "top",
    .summary = "live view of the hottest frames in a container",
    .synopsis = "CONTAINER [OPTIONS]",
    .intro = "CONTAINER: an id, a name (docker/podman ps), a unique id prefix, or\n"
	     "--pod NAME [--namespace NS] [--container NAME] for a Kubernetes pod.\n\n"
	     "Show the hottest frames of a registered container (every thread of every\n"
	     "process) live, by self and total share of the CPU samples: like perf top,\n"
	     "with Java frames named from the JVMs' JIT maps. Press q or Ctrl-C to quit.\n"
	     "Must run as root.\n",
    .outro = "Columns: SELF% is the share of samples with the frame as the leaf (where the\n"
	     "CPU was), TOTAL% the share with the frame anywhere on the stack (the frame\n"
	     "and what it called), SAMPLES the self samples (US, microseconds of thread\n"
	     "time, with --event offcpu or wall). The header says which scope ran: kernel\n"
	     "filter or cgroup events.\n\n"
	     "Examples:\n"
	     "  flamesidecar top 3f2a9c\n"
	     "  flamesidecar top 3f2a9c --once -d 5s -n 10\n"
	     "  flamesidecar top 3f2a9c --sort total --cumulative -F 499\n\n"
	     "Exit codes: 0 ok, 1 failed, 2 usage, 3 container or process not found (or not\n"
	     "running, or gone), 4 not permitted (run as root).\n",
    .uses = OPT_USES(top_uses),
};

/* ---- the terminal ---------------------------------------------------------- */

struct top_term {
	bool out_tty, in_tty, raw;
	struct termios saved;
	unsigned width;
};

static void top_term_open(struct top_term *t, bool interactive)
{
	struct winsize ws;
	t->out_tty = isatty(STDOUT_FILENO);
	t->in_tty = interactive && isatty(STDIN_FILENO);
	t->width = 0;
	if (t->out_tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		t->width = ws.ws_col;
	if (t->in_tty && tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		struct termios raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		t->raw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
}

static void top_term_close(struct top_term *t)
{
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->raw = false;
}

/* 1 when q was pressed. */
static int top_key_quit(const struct top_term *t)
{
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	char c;
	if (!t->raw)
		return 0;
	while (poll(&pfd, 1, 0) == 1 && read(STDIN_FILENO, &c, 1) == 1)
		if (c == 'q' || c == 'Q')
			return 1;
	return 0;
}

/* ---- one table ------------------------------------------------------------ */

static void top_show(struct profile *p, const struct top_args *a, const struct top_term *t,
		     uint64_t span_ms)
{
	struct profile_stats st;
	struct hot_frame *fr = NULL;
	size_t n = 0;
	profile_stats(p, &st);
	uint64_t total = fold_total(profile_table(p));
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	if (t->out_tty && !a->once)
		fputs("\033[H\033[2J", stdout);
	uint64_t all = 0, named = 0;
	for (int k = 0; k < SYMBOLIZER_KIND_COUNT; k++) {
		all += st.frames[k];
		named += st.resolved[k];
	}
	printf("flamesidecar top %.*s  %02d:%02d:%02d  scope %s (%s)  %u Hz  %s %llu.%llu s  "
	       "samples %llu  lost %llu  named %.1f%%\n",
	       common_id_width(a->s.prof.entry->id), a->s.prof.entry->id, tm.tm_hour, tm.tm_min,
	       tm.tm_sec, st.scope, st.events ? st.events : "?",
	       a->s.prof.frequency ? a->s.prof.frequency : 99,
	       a->cumulative ? "since start" : "last", (unsigned long long)(span_ms / 1000),
	       (unsigned long long)(span_ms % 1000 / 100), (unsigned long long)total,
	       (unsigned long long)st.lost, all ? 100.0 * (double)named / (double)all : 0.0);
	if (st.filter_why[0])
		printf("filter: no kernel filter (%s): %s instead\n", st.filter_why, st.events);
	if (st.table_dropped)
		printf("stack table full (max_stack_table_mib): %llu samples of new stacks counted "
		       "as " BUDGET_DROPPED_FRAME "\n",
		       (unsigned long long)st.table_dropped);
	printf("%7s %7s %8s  %s\n", "SELF%", "TOTAL%", a->s.event ? "US" : "SAMPLES", "FRAME");
	if (hot_frames(profile_table(p), a->by_total, a->rows, &fr, &n) < 0)
		printf("(out of memory)\n");
	for (size_t i = 0; i < n; i++) {
		int room = t->width ? (int)t->width - 26 : INT_MAX;
		char safe[2048]; /* frame names come from the container */
		printf("%6.1f%% %6.1f%% %8llu  %.*s\n",
		       total ? 100.0 * (double)fr[i].self / (double)total : 0.0,
		       total ? 100.0 * (double)fr[i].total / (double)total : 0.0,
		       (unsigned long long)fr[i].self, room,
		       textsafe(fr[i].name, safe, sizeof(safe), 0));
	}
	if (!total)
		printf("(no samples: the container is idle)\n");
	if (!a->once && !t->out_tty)
		printf("\n");
	fflush(stdout);
	hot_frames_free(fr, n);
}

/* Sample until the deadline, a signal or q. 1 when asked to quit. */
static int top_sample(struct profile *p, struct offcpu *oc, uint64_t ms, const struct top_term *t,
		      int *err_out, struct fs_error *err)
{
	uint64_t end = timeutil_now_ms() + ms;
	for (;;) {
		uint64_t now = timeutil_now_ms();
		if (top_stop_signal || top_key_quit(t))
			return 1;
		if (now >= end)
			return 0;
		int wait = (int)(end - now < 100 ? end - now : 100);
		int r = oc ? offcpu_poll(oc, wait, err) : profile_poll(p, wait, err);
		if (r < 0 && r != -EINTR) {
			*err_out = r;
			return 1;
		}
	}
}

/* --once: one window, the JIT maps taken at its end, as `run` does. 0 or
 * -errno with err. */
static int top_once(struct profile *p, struct offcpu *oc, const struct top_args *a,
		    const struct top_term *t, struct fs_error *err)
{
	int perr = 0;
	uint64_t start = timeutil_now_ms();
	top_sample(p, oc, a->duration_ms, t, &perr, err);
	uint64_t span = timeutil_now_ms() - start;
	if (oc)
		offcpu_stop(oc);
	profile_stop(p);
	if (!perr && (perr = profile_fold(p, 1, err)) == 0)
		top_show(p, a, t, span);
	return perr;
}

/* Whether the container top shows is still there: its process alive and
 * still registered under that id (the poststop hook removes the entry when
 * the engine deletes the container). 0, or -ESRCH with err. */
static int top_still_there(const struct top_args *a, const struct registry_entry *e,
			   const char *regdir, struct fs_error *err)
{
	struct registry_entry now;
	struct fs_error lookup;
	if (registry_entry_alive(e) &&
	    registry_find_query(regdir, &a->s.target, &now, &lookup) == 0 &&
	    !strcmp(now.id, e->id) && now.pid == e->pid)
		return 0;
	return fs_error_set(err, ESRCH,
			    "container %.*s is gone (its process exited, or it was "
			    "removed)",
			    common_id_width(e->id), e->id);
}

/* A table every interval until q, a signal, an error, or the container
 * gone (-ESRCH: exit 3). 0 or -errno with err. */
static int top_live(struct profile *p, struct offcpu *oc, const struct top_args *a,
		    const struct top_term *t, const char *regdir, struct fs_error *err)
{
	int perr = 0;
	profile_map_jvms(p);
	uint64_t mapped = timeutil_now_ms(), start = mapped;
	for (;;) {
		uint64_t t0 = timeutil_now_ms();
		int quit = top_sample(p, oc, a->interval_ms, t, &perr, err);
		if (perr)
			return perr;
		if (oc)
			offcpu_stop(oc);
		uint64_t now = timeutil_now_ms();
		int remap = now - mapped >= a->map_every_ms;
		if ((perr = profile_fold(p, remap, err)) < 0)
			return perr;
		if (remap)
			mapped = timeutil_now_ms();
		if (!quit || top_stop_signal)
			top_show(p, a, t, a->cumulative ? now - start : now - t0);
		if (quit)
			return 0;
		if ((perr = top_still_there(a, a->s.prof.entry, regdir, err)) < 0)
			return perr;
		if (!a->cumulative && (perr = profile_reset_table(p)) < 0)
			return fs_error_set(err, -perr, "starting the next interval");
	}
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = {.interval_ms = TOP_DEFAULT_INTERVAL_MS,
			     .duration_ms = TOP_DEFAULT_ONCE_MS,
			     .map_every_ms = TOP_DEFAULT_MAP_EVERY_MS,
			     .rows = TOP_DEFAULT_ROWS};
	int first;
	common_session_init(&a.s);
	int rc = cli_parse(&cmd_top_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if ((rc = common_target_operand("top", &a.s.target, argc, argv, first)))
		return rc;
	/* from here on, memory reads: a held one cannot hold the user (watchdog.h) */
	if ((rc = watchdog_start("top")) != WATCHDOG_CHILD)
		return rc;
	struct fs_config cfg;
	struct registry_entry e;
	if ((rc = common_open_container("top", COMMON_WHY_PROFILE, &a.s.target, &cfg, &e)))
		return rc;

	struct sigaction sa = {.sa_handler = top_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	top_stop_signal = 0;

	struct fs_error err = {0};
	struct profile *p = NULL;
	struct offcpu *oc = NULL;
	a.s.prof.entry = &e;
	a.s.prof.warn = common_warn;
	a.s.prof.warn_ctx = "top";
	a.s.prof.table_bytes = (size_t)cfg.max_stack_table_mib << 20;
	common_debuginfo(&cfg, &a.s.prof);
	if (common_profile_open(&a.s.prof, a.s.event, &p, &oc, &err) < 0)
		return cli_fail("top", &err);
	struct top_term t;
	char regdir[PATH_MAX];
	config_registry_dir(&cfg, regdir, sizeof(regdir));
	top_term_open(&t, !a.once);
	int perr = a.once ? top_once(p, oc, &a, &t, &err) : top_live(p, oc, &a, &t, regdir, &err);
	top_term_close(&t);
	if (perr)
		rc = cli_fail("top", &err); /* a process gone is FS_EXIT_NOTFOUND */
	offcpu_free(oc);
	profile_close(p);
	return rc;
}
