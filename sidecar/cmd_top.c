/* top.c - `flamesidecar top <id>`: the hottest frames of a container, live,
 * like perf top: sampled and aggregated by profile.h, shown every interval.
 * JVMs are mapped at the start and their maps refreshed every few seconds
 * (a oneshot map_jvm costs ~10 ms), so code compiled since is named. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
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

static void top_usage(FILE *out)
{
	fprintf(out,
		"Usage: flamesidecar top CONTAINER [OPTIONS]\n\n"
		"CONTAINER: an id, a name (docker/podman ps), a unique id prefix, or\n"
		"--pod NAME [--namespace NS] [--container NAME] for a Kubernetes pod.\n\n"
		"Show the hottest frames of a registered container (every thread of every\n"
		"process) live, by self and total share of the CPU samples: like perf top,\n"
		"with Java frames named from the JVMs' JIT maps. Press q or Ctrl-C to quit.\n"
		"Must run as root.\n\n"
		"Options:\n"
		"  -i, --interval TIME  refresh every TIME (default 1s): 500ms, 2s, 1m\n"
		"      --once           sample once for -d TIME, print one table and exit\n"
		"  -d, --duration TIME  the --once window (default 2s)\n"
		"  -n, --rows N         frames shown (default %d; 0 = all)\n"
		"  -c, --cumulative     shares since the start instead of over the last\n"
		"                       interval\n"
		"  -s, --sort KEY       self (default) or total\n"
		"  -F, --frequency HZ   samples per second per CPU (default 99, max 10000)\n"
		"      --event EVENT    cpu (default), offcpu or wall, as for run: SAMPLES\n"
		"                       are then microseconds of thread time\n"
		"  -p, --pid PID        only this process of the container (host pid)\n"
		"      --no-map         do not attach to JVMs (Java frames stay [unknown])\n"
		"      --map-mode MODE  agent (default when the bundle is mounted), jcmd, or\n"
		"                       vmstructs (read from the host, no attach; the fallback\n"
		"                       when attach is impossible or fails)\n"
		"      --map-every TIME refresh the JVMs' JIT maps this often (default 5s)\n"
		"      --user-only      no kernel frames\n"
		"      --kernel-filter MODE  auto (default), on or off, as for run: how\n"
		"                       samples are kept to the container (the header says\n"
		"                       which ran: kernel filter or cgroup events)\n"
		"  -h, --help           this text\n\n"
		"Columns: SELF%% is the share of samples with the frame as the leaf (where the\n"
		"CPU was), TOTAL%% the share with the frame anywhere on the stack (the frame\n"
		"and what it called), SAMPLES the self samples.\n\n"
		"Examples:\n"
		"  flamesidecar top 3f2a9c\n"
		"  flamesidecar top 3f2a9c --once -d 5s -n 10\n"
		"  flamesidecar top 3f2a9c --sort total --cumulative -F 499\n\n"
		"Exit codes: 0 ok, 1 failed, 2 usage, 3 container or process not found (or not\n"
		"running), 4 not permitted (run as root).\n",
		TOP_DEFAULT_ROWS);
}

enum {
	TOP_OPT_ONCE = 0x200,
	TOP_OPT_NO_MAP,
	TOP_OPT_MAP_MODE,
	TOP_OPT_MAP_EVERY,
	TOP_OPT_USER_ONLY,
	TOP_OPT_KERNEL_FILTER,
	TOP_OPT_EVENT,
};

struct top_args {
	unsigned long long interval_ms, duration_ms, map_every_ms;
	int once, cumulative, by_total;
	unsigned rows;
	struct profile_opts prof;
	const char *id;
	int help; /* --help: print the usage and exit 0 */
	enum offcpu_event event;
};

static int top_parse_time(const char *opt, const char *arg, unsigned long long *ms)
{
	if (timeutil_parse_duration_ms(arg, ms) < 0 || *ms < 10 || *ms > 24ull * 3600 * 1000) {
		cli_usage_error("top",
				"%s takes a time from 10ms to 24h such as 1s, 500ms, 2m; not '%s'",
				opt, arg);
		return -EINVAL;
	}
	return 0;
}

static int top_parse(int argc, char **argv, struct top_args *a)
{
	static const struct option longopts[] = {
	    {"interval", required_argument, NULL, 'i'},
	    {"once", no_argument, NULL, TOP_OPT_ONCE},
	    {"duration", required_argument, NULL, 'd'},
	    {"rows", required_argument, NULL, 'n'},
	    {"cumulative", no_argument, NULL, 'c'},
	    {"sort", required_argument, NULL, 's'},
	    {"frequency", required_argument, NULL, 'F'},
	    {"pid", required_argument, NULL, 'p'},
	    {"no-map", no_argument, NULL, TOP_OPT_NO_MAP},
	    {"map-mode", required_argument, NULL, TOP_OPT_MAP_MODE},
	    {"map-every", required_argument, NULL, TOP_OPT_MAP_EVERY},
	    {"user-only", no_argument, NULL, TOP_OPT_USER_ONLY},
	    {"kernel-filter", required_argument, NULL, TOP_OPT_KERNEL_FILTER},
	    {"event", required_argument, NULL, TOP_OPT_EVENT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	unsigned v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:d:n:cs:F:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (top_parse_time("--interval", optarg, &a->interval_ms) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'd':
			if (top_parse_time("--duration", optarg, &a->duration_ms) < 0)
				return FS_EXIT_USAGE;
			break;
		case TOP_OPT_MAP_EVERY:
			if (top_parse_time("--map-every", optarg, &a->map_every_ms) < 0)
				return FS_EXIT_USAGE;
			break;
		case TOP_OPT_ONCE: a->once = 1; break;
		case 'n':
			if (common_parse_uint("top", "--rows", optarg, 0, 100000, &a->rows) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'c': a->cumulative = 1; break;
		case 's':
			if (!strcmp(optarg, "self") || !strcmp(optarg, "total")) {
				a->by_total = !strcmp(optarg, "total");
				break;
			}
			return cli_usage_error("top", "--sort takes self or total, not '%s'",
					       optarg);
		case 'F':
			if (common_parse_uint("top", "--frequency", optarg, 1,
					      SAMPLER_MAX_FREQUENCY, &a->prof.frequency) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'p':
			if (common_parse_uint("top", "--pid", optarg, 1, INT32_MAX, &v) < 0)
				return FS_EXIT_USAGE;
			a->prof.pid = (pid_t)v;
			break;
		case TOP_OPT_NO_MAP: a->prof.no_map = 1; break;
		case TOP_OPT_MAP_MODE:
			if (common_parse_map_mode("top", "--map-mode", optarg, &a->prof.map.mode) <
			    0)
				return FS_EXIT_USAGE;
			break;
		case TOP_OPT_USER_ONLY: a->prof.user_only = 1; break;
		case TOP_OPT_KERNEL_FILTER:
			if (common_parse_kernel_filter("top", optarg, &a->prof.kernel_filter) < 0)
				return FS_EXIT_USAGE;
			break;
		case TOP_OPT_EVENT:
			if (offcpu_parse_event(optarg, &a->event) < 0)
				return cli_failf("top", FS_EXIT_USAGE,
						 "--event takes cpu, offcpu or wall; not '%s'",
						 optarg);
			break;
		case 'h': a->help = 1; return 0;
		default: return cli_usage_error("top", NULL);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error(
		    "top", "expected one container id or unique prefix (see `flamesidecar list`)");
	a->id = argv[optind];
	return 0;
}

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
	       common_id_width(a->prof.entry->id), a->prof.entry->id, tm.tm_hour, tm.tm_min,
	       tm.tm_sec, st.scope, st.events ? st.events : "?",
	       a->prof.frequency ? a->prof.frequency : 99, a->cumulative ? "since start" : "last",
	       (unsigned long long)(span_ms / 1000), (unsigned long long)(span_ms % 1000 / 100),
	       (unsigned long long)total, (unsigned long long)st.lost,
	       all ? 100.0 * (double)named / (double)all : 0.0);
	if (st.filter_why[0])
		printf("filter: no kernel filter (%s): %s instead\n", st.filter_why, st.events);
	if (st.table_dropped)
		printf("stack table full (max_stack_table_mib): %llu samples of new stacks counted "
		       "as " BUDGET_DROPPED_FRAME "\n",
		       (unsigned long long)st.table_dropped);
	printf("%7s %7s %8s  %s\n", "SELF%", "TOTAL%", a->event ? "US" : "SAMPLES", "FRAME");
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

int cmd_top(int argc, char **argv)
{
	struct top_args a = {.interval_ms = TOP_DEFAULT_INTERVAL_MS,
			     .duration_ms = TOP_DEFAULT_ONCE_MS,
			     .map_every_ms = TOP_DEFAULT_MAP_EVERY_MS,
			     .rows = TOP_DEFAULT_ROWS};
	a.prof.map.mode = MAP_MODE_AUTO;
	a.prof.map.fallback = 1; /* JVMs that cannot be attached to: vmstructs */
	a.prof.map.timeout_ms = MAP_DEFAULT_TIMEOUT_MS;
	int rc = top_parse(argc, argv, &a);
	if (rc)
		return rc;
	if (a.help) {
		top_usage(stdout);
		return FS_EXIT_OK;
	}
	struct fs_config cfg;
	struct registry_entry e;
	if ((rc = common_open_container("top", COMMON_WHY_PROFILE, a.id, &cfg, &e)))
		return rc;

	struct sigaction sa = {.sa_handler = top_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	top_stop_signal = 0;

	struct fs_error err = {0};
	struct profile *p = NULL;
	a.prof.entry = &e;
	a.prof.warn = common_warn;
	a.prof.warn_ctx = "top";
	a.prof.table_bytes = (size_t)cfg.max_stack_table_mib << 20;
	common_debuginfo(&cfg, &a.prof);
	struct offcpu *oc = NULL;
	int r = common_profile_open(&a.prof, a.event, &p, &oc, &err);
	if (r < 0)
		return cli_fail("top", &err);
	struct top_term t;
	top_term_open(&t, !a.once);
	int perr = 0, code = FS_EXIT_OK;

	if (a.once) {
		/* one window; the JIT maps taken at its end, as `run` does */
		uint64_t start = timeutil_now_ms();
		top_sample(p, oc, a.duration_ms, &t, &perr, &err);
		uint64_t span = timeutil_now_ms() - start;
		if (oc)
			offcpu_stop(oc);
		profile_stop(p);
		if (!perr && (perr = profile_fold(p, 1, &err)) == 0)
			top_show(p, &a, &t, span);
	} else {
		profile_map_jvms(p);
		uint64_t mapped = timeutil_now_ms(), start = mapped;
		for (;;) {
			uint64_t t0 = timeutil_now_ms();
			int quit = top_sample(p, oc, a.interval_ms, &t, &perr, &err);
			if (perr)
				break;
			if (oc)
				offcpu_stop(oc);
			uint64_t now = timeutil_now_ms();
			int remap = now - mapped >= a.map_every_ms;
			if ((perr = profile_fold(p, remap, &err)) < 0)
				break;
			if (remap)
				mapped = timeutil_now_ms();
			if (!quit || top_stop_signal)
				top_show(p, &a, &t, a.cumulative ? now - start : now - t0);
			if (quit)
				break;
			if (!a.cumulative && (perr = profile_reset_table(p)) < 0) {
				fs_error_set(&err, -perr, "starting the next interval");
				break;
			}
		}
	}
	top_term_close(&t);
	if (perr)
		code = cli_failf("top", FS_EXIT_FAIL, "%s", err.msg);
	offcpu_free(oc);
	profile_close(p);
	return code;
}
