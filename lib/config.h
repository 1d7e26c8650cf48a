/* config.h - the host configuration, /etc/flamesidecar/config.json.
 * Every key is optional; see docs/configuration.md for the defaults. */
#ifndef FS_CONFIG_H
#define FS_CONFIG_H

#include <limits.h>
#include <stdint.h>

#include "error.h"

#define CONFIG_DEFAULT_PATH "/etc/flamesidecar/config.json"

enum config_enable {
	CONFIG_ENABLE_ANNOTATION = 0, /* only containers annotated flamesidecar.io/enable=true */
	CONFIG_ENABLE_ALWAYS,	      /* every container */
	CONFIG_ENABLE_NEVER,	      /* hook does nothing */
};

struct fs_config {
	enum config_enable enable;
	char bundle_dir[PATH_MAX];  /* host dir mounted into containers */
	char mount_point[PATH_MAX]; /* where it appears inside the container */
	char run_dir[PATH_MAX];	    /* registry root: <run_dir>/containers/<id>.json */
	char log_file[PATH_MAX];    /* hook log ("" = none); also syslog */
	int log_level;		    /* enum fs_log_level (lib/log.h), default info */
	char profile_dir[PATH_MAX]; /* triggered profiles: <profile_dir>/<id>/<ts>.svg */
	unsigned hook_timeout_ms;   /* hook's own deadline */
	unsigned max_profile_seconds;
	unsigned max_frequency;
	unsigned default_delay_seconds;
	unsigned max_concurrent_profiles;
	/* triggered profiles' quotas and retention (lib/profquota.h) */
	unsigned max_concurrent_profiles_per_container; /* fair share of the slots */
	unsigned max_profiles_per_container;		/* per quota key (pod or name) */
	unsigned max_profile_mib_per_container;
	unsigned max_profiles_total;
	unsigned max_profile_mib_total;
	unsigned profile_retention_seconds; /* 0 = kept until a quota needs room */
	int profile_quota_refuse;	    /* full: refuse the new one (1), or remove oldest */
	char sidecar_path[PATH_MAX];	    /* flamesidecar binary the hook starts */
	int preserve_frame_pointer;   /* add -XX:+PreserveFramePointer at creation (default 1) */
	unsigned max_stack_table_mib; /* run/top: memory for distinct stacks (budget.h) */
	/* run/top: debuginfod servers for native names ("" = none; then
	 * DEBUGINFOD_URLS of the environment, if set), docs/debuginfo.md */
	char debuginfod_urls[1024];
	int debuginfo; /* separate debug info for native names (default 1) */
	/* add -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints at creation (default 1) */
	int debug_nonsafepoints;
};

/* Fill cfg with defaults. */
void config_defaults(struct fs_config *cfg);

/* Defaults, then the file at path (NULL = CONFIG_DEFAULT_PATH). A missing
 * default file is not an error; a missing explicit file is. Unknown keys are
 * ignored; a bad value is an error naming the key. 0 or -errno. */
int config_load(const char *path, struct fs_config *cfg, struct fs_error *err);

/* "<run_dir>/containers" into buf. */
void config_registry_dir(const struct fs_config *cfg, char *buf, size_t len);

#endif
