/* hook.h - flamehook, the OCI runtime hook. */
#ifndef FS_HOOK_H
#define FS_HOOK_H

#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "json.h"
#include "log.h"
#include "registry.h"

#define HOOK_STATE_MAX	       (1024 * 1024) /* bytes of state JSON we read */
#define HOOK_BUNDLE_CONFIG_MAX (4 * 1024 * 1024)

#define ANNOTATION_ENABLE    "flamesidecar.io/enable"
#define ANNOTATION_PROFILE   "flamesidecar.io/profile"
#define ANNOTATION_DELAY     "flamesidecar.io/delay"
#define ANNOTATION_FREQUENCY "flamesidecar.io/frequency"
#define ANNOTATION_EVENT     "flamesidecar.io/event" /* cpu, offcpu or wall */
/* Set by the wrapper (flamesidecar-runtime --opt-in, FLAMESIDECAR_ENABLE=1
 * in the container's environment): the hook's argv says opted in. */
#define HOOK_OPT_IN_ARG "--opt-in"

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
	/* flamesidecar.io/event, cut to fit: a longer value is never a valid
	 * event, so cutting it only shortens the log line that refuses it */
	char event[REGISTRY_ANNOTATION_MAX];
	/* Names from the engine's annotations (names.c), "" when absent or
	 * not a valid name. */
	char engine[REGISTRY_ENGINE_MAX + 1];
	char name[REGISTRY_NAME_MAX + 1];
	char pod[REGISTRY_NAME_MAX + 1];
	char pod_namespace[REGISTRY_NAME_MAX + 1];
	char container[REGISTRY_NAME_MAX + 1];
	/* Where name came from: set with it, by the code that found it. */
	enum registry_name_source name_source;
	int sandbox; /* a Kubernetes pod sandbox ("pause") container */
};

/* From the bundle's config.json. */
struct hook_bundle {
	char rootfs[PATH_MAX]; /* absolute */
	uid_t uid;	       /* process.user, mapped to the host view */
	gid_t gid;
	/* The source of the mount on /etc/hostname, "" if none: Docker and
	 * Podman keep it in their per-container state directory. */
	char hostname_src[PATH_MAX];
};

/* state.c: parse and validate. The id is validated for use as a file
 * name; the pid range checked (1..2^22); annotations kept verbatim but
 * bounded. 0 or -EINVAL with a reason. */
int hook_state_parse(const char *buf, size_t len, struct hook_state *st, struct fs_error *err);
int hook_stage_parse(const char *s, enum hook_stage *stage);

/* names.c: the names an engine gave the container, from the state's
 * annotations (Kubernetes through containerd's CRI or CRI-O, nerdctl,
 * Podman). Names that are not valid registry names are dropped. */
void hook_names_from_annotations(yajl_val annotations, struct hook_state *st);

/* names.c: the name an engine keeps in its own state on disk, found from
 * the paths it gave the runtime: Docker's config.v2.json beside the
 * /etc/hostname it mounts (<data-root>/containers/<id>/), Podman's
 * c/storage containers.json above the bundle (<graphroot>/<driver>-
 * containers/<id>/userdata). Read whatever the annotations said: a record
 * of this very id replaces an annotation's name and engine (name_source
 * REGISTRY_NAME_ENGINE); the pod names of annotations stay beside it.
 * Without one, the annotation's name stays (REGISTRY_NAME_ANNOTATION).
 * 0 (also when there is no record), or -errno with a reason (then only the
 * annotations' names). Regular files only, no symlinks, bounded. */
int hook_names_from_engine_state(const char *bundle, const char *hostname_src,
				 struct hook_state *st, struct fs_error *err);

/* bundle.c */
int hook_bundle_read(const char *bundle_dir, struct hook_bundle *b, struct fs_error *err);

/* mount.c: whether mount mnt_id is shared (in a peer group) according to
 * the mountinfo text f (container input: fuzzed); 1 also when it is not
 * listed or f cannot be read (fail closed), with a reason in err. */
int hook_mountinfo_shared(FILE *f, uint64_t mnt_id, struct fs_error *err);

/* phase.c: the hook's phases. hook_phase_start: the clock starts now,
 * timing = --timing. hook_mark: the phase running since the last mark,
 * named phase (a string literal), is done: remembered for a deadline
 * (hook_phase_last, async-signal-safe) and, with --timing, timed.
 * hook_timing_log: the timings in one log line (nothing without --timing). */
void hook_phase_start(int timing);
void hook_mark(const char *phase);
const char *hook_phase_last(void);
void hook_timing_log(const char *stage, const char *id);

/* mount.c: mount a copy of cfg->bundle_dir (bundletree.c) read-only,
 * nosuid, nodev at cfg->mount_point inside the rootfs, in the mount
 * namespace of the process behind pidfd. Refuses symlinks, non-directories
 * and escapes, and a mount point on a shared mount (the mount would
 * propagate to its peers, the host's among them). A mount that
 * cannot be made read-only is detached. Returns 0, -errno (refused/failed,
 * nothing left mounted), or -ENOTRECOVERABLE when a writable mount could
 * not be detached (the hook must fail).
 * pid is the pidfd's process (checked alive after its mountinfo is opened:
 * the shared-mount check reads the host's view, never the namespace's
 * /proc). The read-only flags are checked on the tree's fd before and after
 * it is attached, never by path again (a rename race could swap it).
 * The calling process joins the container's mount namespace and stays
 * there (once it got that far, whatever the result): open everything needed
 * by path before, and use only fds after. The hook's alarm bounds it. */
int hook_mount_bundle(const struct fs_config *cfg, int pidfd, pid_t pid, const char *rootfs,
		      struct fs_error *err);

/* bundletree.c: a detached mount (fd) of a new tmpfs holding a copy of
 * bundle_dir's top-level regular files, read-only (superblock and mount),
 * nosuid, nodev, private. -errno with a reason. */
int hook_bundle_tree(const char *bundle_dir, struct fs_error *err);

/* mount.c helper, exposed for tests: open (creating missing directories)
 * path under root_fd without following any symlink. Directories are
 * created only on root_fd's own mount: a missing one under another mount
 * (a host volume) is -EXDEV with a reason, and nothing is created. */
int hook_open_mount_point(int root_fd, const char *path, struct fs_error *err);

/* log.c: lines through lib/log.h as "flamehook". hook_log_start: to stderr
 * (warnings and errors), before the configuration is known; hook_log_open:
 * also to the configuration's log file, at its level. */
void hook_log_start(void);
void hook_log_open(const struct fs_config *cfg);

/* trigger.c: annotation-triggered profiling. */
struct trigger_plan {
	unsigned duration_s, delay_s, frequency;
	const char *event; /* "cpu", "offcpu" or "wall" (static strings) */
};
/* Validate and cap the entry's profile annotations against the config;
 * note says what was capped, and which flamesidecar.io/event value was
 * not cpu, offcpu or wall (the profile is then a CPU one, as without the
 * annotation). -EINVAL/-EPERM with a reason when refused. */
int trigger_plan(const struct fs_config *cfg, const struct registry_entry *e,
		 struct trigger_plan *p, char *note, size_t note_len, struct fs_error *err);
/* The monitor waits for `run` until the window plus this margin (rendering,
 * symbols), then kills it: a run the container stalls does not hold its
 * slot for good. */
#define TRIGGER_RUN_MARGIN_S  120
#define TRIGGER_KILL_GRACE_MS 1000
/* Wait for child pid until deadline (CLOCK_MONOTONIC ms), then SIGKILL it
 * and wait TRIGGER_KILL_GRACE_MS more. 0 when it ended by itself (*status
 * its wait status), 1 when it was killed and reaped, 2 when it did not die
 * (held in the kernel): not reaped, never waited on. */
int trigger_wait(pid_t pid, uint64_t deadline, int *status);
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
