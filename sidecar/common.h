/* common.h - what the verbs share: the config and the container lookup,
 * the container and profile session option groups (opt.h) of run, top and
 * map, and small helpers. These are part of the verb layer: where they
 * fail they print through cli.h, as the verbs do, and return the exit code. */
#ifndef FS_SIDECAR_COMMON_H
#define FS_SIDECAR_COMMON_H

#include <limits.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "map.h"
#include "offcpu.h"
#include "opt.h"
#include "profile.h"
#include "registry.h"
#include "sampler.h"
#include "timeutil.h"

/* Load the host config named by --config / $FLAMESIDECAR_CONFIG (or the
 * default) and the registry directory; prints the error and returns an
 * exit code != 0 on failure. */
int common_load_config(const char *verb, struct fs_config *cfg, char *regdir, size_t len);

/* Resolve the container q names (an id, name or unique id prefix, or
 * --pod) to its registry entry; prints a message saying what to do and
 * returns an exit code on failure. */
int common_find_container(const char *verb, const char *regdir, const struct registry_query *q,
			  struct registry_entry *e);

/* The options that name a container, for every verb that takes one (run,
 * top, map), in a struct registry_query: --pod NAME [--namespace NS]
 * [--container NAME], and --exact-process PID:START (a triggered
 * profile). */
extern const struct opt_group common_target_group;

/* The names of --map-mode (run, top) and map's --mode: agent, jcmd,
 * vmstructs, as enum map_mode values. */
extern const struct opt_choice common_map_modes[];

/* The operands of such a verb, argv[first..argc): one container id, name
 * or prefix into q->ref, or none with --pod. Prints a usage error and
 * returns FS_EXIT_USAGE otherwise; 0. */
int common_target_operand(const char *verb, struct registry_query *q, int argc, char **argv,
			  int first);

/* What every verb that works on one container does first: insist on root
 * (why says what root is needed for), load the config, resolve q.
 * Prints what went wrong and returns the exit code, or FS_EXIT_OK. */
#define COMMON_WHY_PROFILE                                                                         \
	"system-wide perf events, and attaching to JVMs in the container's namespaces"
int common_open_container(const char *verb, const char *why, const struct registry_query *q,
			  struct fs_config *cfg, struct registry_entry *e);

/* A profile session, the options run and top share: which container, how
 * it is sampled (-F, --pid, --event, --user-only, --kernel-filter) and how
 * its JVMs are mapped (--no-map, --map-mode). */
struct common_session {
	struct registry_query target;
	struct profile_opts prof;
	enum offcpu_event event;
};
extern const struct opt_group common_session_group;

/* The defaults: map mode auto with the vmstructs fallback, the default map
 * deadline. */
void common_session_init(struct common_session *s);

/* Engines' container ids are 64 hex digits: show 12 like they do; other
 * ids whole. Returns the number of characters to print. */
int common_id_width(const char *id);

/* A warning callback for the profile/map layers: ctx is the verb name. */
void common_warn(void *ctx, const char *msg);

/* Separate debug info for a run or top (docs/debuginfo.md): off when the
 * config says "debuginfo": false; debuginfod servers from the config key
 * "debuginfod_urls", else DEBUGINFOD_URLS of our environment, else none. */
void common_debuginfo(const struct fs_config *cfg, struct profile_opts *prof);

/* The window of run and top for event ev: the profile options ev needs
 * (offcpu: no perf events; wall: on-CPU time per thread as "[running]",
 * offcpu.h), profile_open, then for offcpu and wall the thread-state
 * poller over it (*oc NULL for cpu). 0, or -errno with err and nothing
 * left open. */
int common_profile_open(struct profile_opts *o, int ev, struct profile **p, struct offcpu **oc,
			struct fs_error *err);

/* "3m12s"-style age of a unix timestamp. */
void common_format_age(long long seconds, char *buf, size_t len);

#endif
