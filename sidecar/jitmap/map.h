/* map.h - get the JIT symbol map of a JVM in a registered container: attach
 * from a sandboxed child (sandbox.h, attach.h), make the JVM write
 * /tmp/perf-<ns pid>.map (our agent, or jcmd Compiler.perfmap), read it
 * safely and parse it (perfmap.h); optionally write /tmp/perf-<host pid>.map
 * on the host for perf. Used by the `map` verb and by `run` at the end of a
 * sampling window. When the JVM cannot be attached to, the map is read from
 * the host through its VMStructs instead (MAP_MODE_VMSTRUCTS, hsmap.h). */
#ifndef FS_MAP_H
#define FS_MAP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "jitlog.h"
#include "perfmap.h"
#include "registry.h"
#include "cleanup.h"

#define MAP_AGENT_NAME	       "libflameagent.so"
#define MAP_DEFAULT_TIMEOUT_MS 5000

enum map_mode {
	MAP_MODE_AUTO = 0,  /* the agent when the bundle is mounted and has it, else jcmd */
	MAP_MODE_AGENT,	    /* load <mount_point>/libflameagent.so */
	MAP_MODE_JCMD,	    /* jcmd Compiler.perfmap (JDK 17+) */
	MAP_MODE_VMSTRUCTS, /* read the code cache from the host (hsmap.h): no attach */
};

struct map_opts {
	enum map_mode mode;
	int continuous;	       /* agent option mode=continuous instead of oneshot */
	unsigned timeout_ms;   /* per JVM; 0 = MAP_DEFAULT_TIMEOUT_MS */
	int write_host;	       /* also write /tmp/perf-<host pid>.map */
	const char *host_tmp;  /* where that goes; NULL = "/tmp" */
	unsigned window_ttl_s; /* windows: the agent ends its session by itself after
				  this, should we never stop it (0: never) */
	int fallback;	       /* AUTO: use VMSTRUCTS when attach is impossible or fails
				* (run, top); 0 = report the attach error (map) */
	/* windows: bytes the JIT log may hold at open (what the caller's
	 * budget leaves; 0 = BUDGET_JIT_BYTES), and a flag that, once set,
	 * stops parsing the log (NULL: none) */
	size_t jit_budget;
	const volatile sig_atomic_t *stop;
};

struct map_result {
	pid_t host_pid, ns_pid;
	uid_t uid;
	enum map_mode mode; /* the one used (AGENT, JCMD or VMSTRUCTS) */
	int signalled;	    /* we started the attach listener with SIGQUIT */
	size_t entries;	    /* in the parsed map */
	size_t loads;	    /* window: code load events (compiled methods, stubs) */
	size_t bytes;	    /* of map text read */
	size_t dropped;	    /* window: log lines, loads and bytes not kept (budgets) */
	uint64_t elapsed_us;
	char nonsafepoints[160]; /* window: the agent's -XX:+DebugNonSafepoints state, or "" */
	char cut[24];		 /* vmstructs: "" or the budget that cut the code cache walk */
};

/* Map one JVM (host pid) of container e. *out (may be NULL if unwanted) is
 * freed with perfmap_free; res (may be NULL) says what was done. 0 or
 * -errno with a message. */
int map_jvm(const struct registry_entry *e, pid_t host_pid, const struct map_opts *o,
	    struct perfmap **out, struct map_result *res, struct fs_error *err);

/* Host pids of the JVMs (processes that map libjvm.so) in e's pid
 * namespace, ascending. *pids is malloc'd. 0 or -errno. */
int map_find_jvms(const struct registry_entry *e, pid_t **pids, size_t *n, struct fs_error *err);

const char *map_mode_name(enum map_mode m);

/* A profiling window over one JVM: the agent runs a timed continuous
 * session (agent/agentmap.h) from map_window_open to map_window_stop, and
 * its log is read in increments into a jitlog (jitlog.h) that names code
 * by address and time. Nothing stays in the JVM after the stop: the agent
 * disables its events and removes its log. Open and stop are each one
 * sandboxed child (map_jvm's), bounded by opts->timeout_ms; the open's
 * child hands the log's fd over, and reads pread it after re-checking it
 * (perfmap_check_fd; docs/security.md). A refused fd leaves every read to
 * a sandboxed child. */
#define MAP_TIMED_NAME "flamesidecar-%d.jit" /* AGENTMAP_TIMED_NAME */

struct map_window;

/* Start the session and read what it dumped (the code that exists now).
 * -EOPNOTSUPP when no agent can be used (jcmd mode, no bundle). */
int map_window_open(const struct registry_entry *e, pid_t host_pid, const struct map_opts *o,
		    struct map_window **out, struct fs_error *err);
/* Read what was appended since the last read. */
int map_window_read(struct map_window *w, struct fs_error *err);
/* Stop the session and read the rest (idempotent); with opts->write_host
 * also write /tmp/perf-<host pid>.map of the code present at the end. */
int map_window_stop(struct map_window *w, struct fs_error *err);
const struct jitlog *map_window_log(const struct map_window *w);
/* The bytes w's log may hold from now on (the caller's budget): the next
 * reads take no more text than that leaves, and what does not fit is
 * dropped and counted in the result. */
void map_window_set_budget(struct map_window *w, size_t bytes);
const struct map_result *map_window_result(const struct map_window *w);
/* Stops the session if still running, then frees. */
void map_window_free(struct map_window *w);
FS_DEFINE_CLEANUP(struct map_window, map_window_free)
#define cleanup_map_window __attribute__((cleanup(map_window_free_cleanup)))

/* The JVM's CLOCK_MONOTONIC minus ours in ns, from the text of its
 * /proc/<pid>/timens_offsets; 0 when the text says nothing usable. Fuzzed
 * (tests/fuzz/fuzz_procfiles.c). */
int64_t map_parse_clock_offset(const char *text);

#endif
