/* registry.h - one JSON file per container under <run_dir>/containers/,
 * written by the hook, read by the sidecar. Directory 0700, files 0600,
 * written to a temporary file and renamed into place. */
#ifndef FS_REGISTRY_H
#define FS_REGISTRY_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define REGISTRY_ID_MAX		128
#define REGISTRY_ANNOTATION_MAX 64

struct registry_entry {
	char id[REGISTRY_ID_MAX + 1];
	pid_t pid;		 /* host pid of the container's init */
	uint64_t start_time;	 /* its start time (proc_start_time) */
	pid_t ns_pid;		 /* the same process as the container sees it */
	uint64_t pid_ns, mnt_ns; /* namespace inodes */
	uid_t uid;		 /* the process user, host view */
	gid_t gid;
	char rootfs[PATH_MAX];	    /* host path of the rootfs (as the runtime gave it) */
	char bundle[PATH_MAX];	    /* OCI bundle directory */
	char mount_point[PATH_MAX]; /* agent bundle inside the container; "" = not mounted */
	int64_t created;	    /* unix seconds */
	char hook_version[32];
	/* Our own annotations (flamesidecar.io/...), verbatim, validated later. */
	char profile[REGISTRY_ANNOTATION_MAX];
	char delay[REGISTRY_ANNOTATION_MAX];
	char frequency[REGISTRY_ANNOTATION_MAX];
};

/* Container ids become file names: 1..128 chars of [A-Za-z0-9_.-], not
 * starting with '.' or '-'. 0 or -EINVAL with a message. */
int registry_validate_id(const char *id, struct fs_error *err);

/* dir is the registry directory (config_registry_dir); created 0700 if needed. */
int registry_write(const char *dir, const struct registry_entry *e, struct fs_error *err);
int registry_read(const char *dir, const char *id, struct registry_entry *e, struct fs_error *err);
/* -ENOENT when there is no entry. */
int registry_remove(const char *dir, const char *id, struct fs_error *err);

/* All entries (an unreadable one is skipped and, if warn is not NULL,
 * reported through warn(warn_ctx, message)), sorted by
 * id. *out is malloc'd; free() it. A missing dir gives 0 entries. */
int registry_list(const char *dir, struct registry_entry **out, size_t *n,
		  void (*warn)(void *ctx, const char *msg), void *warn_ctx, struct fs_error *err);

/* Find by exact id or unique prefix (like docker). -ENOENT (not registered)
 * or -EEXIST (ambiguous prefix), with a message saying what to do. */
int registry_find(const char *dir, const char *id_or_prefix, struct registry_entry *e,
		  struct fs_error *err);

/* 1 when the process still runs with the recorded start time. */
int registry_entry_alive(const struct registry_entry *e);

/* Serialise/parse (exposed for tests and the fuzzer). */
int registry_to_json(const struct registry_entry *e, char **out, size_t *len, struct fs_error *err);
int registry_from_json(const char *buf, size_t len, struct registry_entry *e, struct fs_error *err);

#endif
