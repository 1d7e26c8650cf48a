/* common.h - small helpers shared by the verbs. */
#ifndef FS_SIDECAR_COMMON_H
#define FS_SIDECAR_COMMON_H

#include <limits.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "map.h"
#include "registry.h"
#include "sampler.h"
#include "timeutil.h"

/* Load the host config named by --config / $FLAMESIDECAR_CONFIG (or the
 * default) and the registry directory; prints the error and returns an
 * exit code != 0 on failure. */
int common_load_config(const char *verb, struct fs_config *cfg, char *regdir, size_t len);

/* Resolve a container id, name or unique id prefix (or common_pod_arg: the
 * --pod options) to its registry entry; prints a message saying what to
 * do and returns an exit code on failure. */
int common_find_container(const char *verb, const char *regdir, const char *id,
			  struct registry_entry *e);

/* --pod NAME [--namespace NS] [--container NAME] name a container for every
 * verb that takes one. main() takes them out of the verb's argv with
 * common_take_target() before the verb parses its options, and puts
 * common_pod_arg where the container id goes; common_open_container()
 * then looks the pod up. Returns 0, or FS_EXIT_USAGE after printing why. */
extern char common_pod_arg[];
int common_take_target(const char *verb, int *argc, char **argv);

/* What every verb that works on one container does first: insist on root
 * (why says what root is needed for), load the config, resolve the id.
 * Prints what went wrong and returns the exit code, or FS_EXIT_OK. */
#define COMMON_WHY_PROFILE                                                                         \
	"system-wide perf events, and attaching to JVMs in the container's namespaces"
int common_open_container(const char *verb, const char *why, const char *id, struct fs_config *cfg,
			  struct registry_entry *e);

/* Option values: print "flamesidecar VERB: OPT takes ..." and return
 * -EINVAL when arg is not a whole number in [lo, hi] / not agent|jcmd|vmstructs. */
int common_parse_uint(const char *verb, const char *opt, const char *arg, unsigned long lo,
		      unsigned long hi, unsigned *out);
int common_parse_map_mode(const char *verb, const char *opt, const char *arg, enum map_mode *mode);

/* --kernel-filter auto|on|off (sampler.h); a usage error and -EINVAL
 * otherwise. */
int common_parse_kernel_filter(const char *verb, const char *arg, enum sampler_kfilter *out);

/* Engines' container ids are 64 hex digits: show 12 like they do; other
 * ids whole. Returns the number of characters to print. */
int common_id_width(const char *id);

/* A warning callback for the profile/map layers: ctx is the verb name. */
void common_warn(void *ctx, const char *msg);

/* Separate debug info for a run or top (docs/debuginfo.md): off when the
 * config says "debuginfo": false; debuginfod servers from the config key
 * "debuginfod_urls", else DEBUGINFOD_URLS of our environment, else none. */
struct profile_opts;
void common_debuginfo(const struct fs_config *cfg, struct profile_opts *prof);

/* The window of run and top for event ev: the profile options ev needs
 * (offcpu: no perf events; wall: on-CPU time per thread as "[running]",
 * offcpu.h), profile_open, then for offcpu and wall the thread-state
 * poller over it (*oc NULL for cpu). 0, or -errno with err and nothing
 * left open. */
struct profile;
struct offcpu;
int common_profile_open(struct profile_opts *o, int ev, struct profile **p, struct offcpu **oc,
			struct fs_error *err);

/* "3m12s"-style age of a unix timestamp. */
void common_format_age(long long seconds, char *buf, size_t len);

#endif
