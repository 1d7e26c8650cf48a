/* hook.h - flamehook, the OCI runtime hook. */
#ifndef FS_HOOK_H
#define FS_HOOK_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "registry.h"

#define HOOK_STATE_MAX	       (1024 * 1024) /* bytes of state JSON we read */
#define HOOK_BUNDLE_CONFIG_MAX (4 * 1024 * 1024)

#define ANNOTATION_ENABLE    "flamesidecar.io/enable"
#define ANNOTATION_PROFILE   "flamesidecar.io/profile"
#define ANNOTATION_DELAY     "flamesidecar.io/delay"
#define ANNOTATION_FREQUENCY "flamesidecar.io/frequency"

enum hook_stage {
	HOOK_STAGE_CREATE = 0, /* createRuntime and prestart: the same work */
	HOOK_STAGE_POSTSTART,
	HOOK_STAGE_POSTSTOP,
};

/* The OCI state (runtime-spec state.md), the parts we use. */
struct hook_state {
	char id[REGISTRY_ID_MAX + 1];
	pid_t pid; /* 0 when absent (poststop) */
	char bundle[PATH_MAX];
	char status[32];
	int enable; /* annotation flamesidecar.io/enable == "true" */
	char profile[REGISTRY_ANNOTATION_MAX];
	char delay[REGISTRY_ANNOTATION_MAX];
	char frequency[REGISTRY_ANNOTATION_MAX];
};

/* From the bundle's config.json. */
struct hook_bundle {
	char rootfs[PATH_MAX]; /* absolute */
	uid_t uid;	       /* process.user, mapped to the host view */
	gid_t gid;
};

/* state.c: parse and validate. The id is validated for use as a file
 * name; the pid range checked (1..2^22); annotations kept verbatim but
 * bounded. 0 or -EINVAL with a reason. */
int hook_state_parse(const char *buf, size_t len, struct hook_state *st, struct fs_error *err);
int hook_stage_parse(const char *s, enum hook_stage *stage);

/* bundle.c */
int hook_bundle_read(const char *bundle_dir, struct hook_bundle *b, struct fs_error *err);
/* Map an id through an OCI idMappings array text form (exposed for tests). */

/* mount.c: bind-mount cfg->bundle_dir read-only, nosuid, nodev at
 * cfg->mount_point inside the rootfs, in the mount namespace of the process
 * behind pidfd. Refuses symlinks, non-directories and escapes. A mount that
 * cannot be made read-only is detached; -EROFS... see mount.c. Returns 0,
 * -errno (refused/failed, nothing left mounted), or -ENOTRECOVERABLE when a
 * writable mount could not be detached (the hook must fail). */
int hook_mount_bundle(const struct fs_config *cfg, int pidfd, const char *rootfs,
		      unsigned timeout_ms, struct fs_error *err);

/* mount.c helper, exposed for tests: open (creating missing directories)
 * path under root_fd without following any symlink. */
int hook_open_mount_point(int root_fd, const char *path, struct fs_error *err);

/* log.c */
void hook_log_open(const struct fs_config *cfg);
void hook_log(const char *stage, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like hook_log, and also to stderr (for refusals and failures). */
void hook_warn(const char *stage, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* trigger.c: annotation-triggered profiling. */
struct trigger_plan {
	unsigned duration_s, delay_s, frequency;
};
/* Validate and cap the entry's profile annotations against the config;
 * note says what was capped. -EINVAL/-EPERM with a reason when refused. */
int trigger_plan(const struct fs_config *cfg, const struct registry_entry *e,
		 struct trigger_plan *p, char *note, size_t note_len, struct fs_error *err);
/* Start the detached profiler if e asks for it; returns at once. */
int hook_trigger(const struct fs_config *cfg, const char *config_path,
		 const struct registry_entry *e, const char *stage);

/* precreate.c: the config filter stage (Podman/CRI-O hooks.d "precreate").
 * hook_precreate_filter decides on a config text: 1 with *out the new
 * config (malloc'd), 0 to keep it (not opted in, nothing to add), -errno
 * to keep it because of a problem; note says what was done or why not.
 * hook_precreate reads the config from in_fd and always prints a config
 * on stdout; it returns the exit status (always 0). */
int hook_precreate_filter(const struct fs_config *cfg, const char *in, size_t len, char **out,
			  size_t *out_len, char *note, size_t note_len);
int hook_precreate(const char *config_path, int in_fd);

/* hook.c: the whole hook; always returns the exit status. */
int hook_main(int argc, char **argv, int stdin_fd);

#endif
