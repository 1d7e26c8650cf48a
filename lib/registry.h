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
#define REGISTRY_NAME_MAX	253 /* a Kubernetes object name (DNS subdomain) */
#define REGISTRY_ENGINE_MAX	15

/* Where a name came from. Set by the hook from which code path found the
 * name, never from a value the name's source could choose: an annotation
 * can spell "docker" as engine, never make its name an engine record. */
enum registry_name_source {
	REGISTRY_NAME_NONE = 0,	      /* no name */
	REGISTRY_NAME_ANNOTATION = 1, /* an OCI annotation: a claim anyone who can
				       * annotate a container can make */
	REGISTRY_NAME_ENGINE = 2,     /* the engine's own record on disk (Docker's
				       * config.v2.json, c/storage's containers.json) */
};

struct registry_entry {
	char id[REGISTRY_ID_MAX + 1];
	pid_t pid;		 /* host pid of the container's init */
	uint64_t start_time;	 /* its start time (proc_start_time) */
	pid_t ns_pid;		 /* the same process as the container sees it */
	uint64_t pid_ns, mnt_ns; /* namespace inodes */
	/* The pid namespace the hook ran in, where pid is valid: a reader in
	 * another one (a sidecar without hostPID) cannot prove the process
	 * gone. 0 = not recorded (entries of older hooks). */
	uint64_t host_pid_ns;
	uid_t uid; /* the process user, host view */
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
	char event[REGISTRY_ANNOTATION_MAX]; /* "" in entries of older hooks */
	/* Names the engine gave the container, "" when it gave none. Each is
	 * registry_validate_name()d before it is stored or read back. */
	char engine[REGISTRY_ENGINE_MAX + 1];	   /* "docker", "podman", "kubernetes", ... */
	char name[REGISTRY_NAME_MAX + 1];	   /* Docker/Podman/nerdctl container name */
	char pod[REGISTRY_NAME_MAX + 1];	   /* Kubernetes pod name */
	char pod_namespace[REGISTRY_NAME_MAX + 1]; /* its namespace */
	char container[REGISTRY_NAME_MAX + 1];	   /* the container's name in the pod */
	/* Where name came from (NONE when name is ""). The pod, namespace and
	 * container names only ever come from annotations. Written as
	 * names.name_source; an entry of an older hook without it is read as
	 * ENGINE for engine "docker" and "podman" (the only names those hooks
	 * took from engine state), else ANNOTATION. */
	enum registry_name_source name_source;
};

/* Container ids become file names: 1..128 chars of [A-Za-z0-9_.-], not
 * starting with '.' or '-'. 0 or -EINVAL with a message. */
int registry_validate_id(const char *id, struct fs_error *err);

/* Engine-given names: 1..253 chars of [A-Za-z0-9_.-], starting with a
 * letter or digit (Docker's and Kubernetes' rules both fit). 0 or -EINVAL. */
int registry_validate_name(const char *name, struct fs_error *err);

/* dir is the registry directory (config_registry_dir); created 0700 if needed. */
int registry_write(const char *dir, const struct registry_entry *e, struct fs_error *err);
/* The same in two steps, for a caller that changes its mount namespace in
 * between: open (creating) the directory, returning its fd; write the entry
 * through it later (dir only names it in messages). */
int registry_dir_open(const char *dir, struct fs_error *err);
int registry_write_at(int dfd, const char *dir, const struct registry_entry *e,
		      struct fs_error *err);
int registry_read(const char *dir, const char *id, struct registry_entry *e, struct fs_error *err);
/* -ENOENT when there is no entry. */
int registry_remove(const char *dir, const char *id, struct fs_error *err);
/* The same through the directory's fd (registry_dir_open); 0 or -errno. */
int registry_remove_at(int dfd, const char *id);

/* All entries (an unreadable one is skipped and, if warn is not NULL,
 * reported through warn(warn_ctx, message)), sorted by
 * id. *out is malloc'd; free() it. A missing dir gives 0 entries. */
int registry_list(const char *dir, struct registry_entry **out, size_t *n,
		  void (*warn)(void *ctx, const char *msg), void *warn_ctx, struct fs_error *err);

/* What a user names a container by (registry_lookup.c). Either ref, or
 * pod with optional pod_namespace and container; NULL = not given. */
struct registry_query {
	const char *ref;	   /* id, name, or unique id prefix */
	const char *pod;	   /* --pod NAME */
	const char *pod_namespace; /* --namespace NS */
	const char *container;	   /* --container NAME */
	/* --exact-process PID:START (a triggered profile): ref is an exact id,
	 * never a name or prefix, and the entry must still be this very
	 * process; 0 when not given. */
	pid_t exact_pid;
	uint64_t exact_start;
};

/* Pick the entry q names among entries[0..n): for ref, an exact id, else
 * an exact name, else a unique id prefix (Docker's order); for pod, the
 * entries of that pod (and namespace, and container name). When a name or
 * pod matches several and exactly one of them is alive, that one; when
 * several are alive and exactly one of them has the name from its engine's
 * record (REGISTRY_NAME_ENGINE; the others claim it), that one (an id
 * prefix must be unique). Returns its index, or
 * -ENOENT (nothing matches) / -EEXIST (ambiguous: the message lists the
 * candidates and what to add) / -EINVAL (bad query). */
int registry_lookup(const struct registry_entry *entries, size_t n, const struct registry_query *q,
		    struct fs_error *err);

/* registry_lookup over the entries of dir that can match, read in stages
 * that do not grow with the registry: <ref>.json; the name index and the
 * entries it names (every entry, once, when there is no index: it is built
 * then); the file names starting with ref, then those entries. Candidates
 * proven dead are removed and never returned. 0 and *e filled, or as
 * registry_lookup. */
int registry_find_query(const char *dir, const struct registry_query *q, struct registry_entry *e,
			struct fs_error *err);

/* Find by exact id, name or unique id prefix (registry_find_query with
 * only ref). */
int registry_find(const char *dir, const char *ref, struct registry_entry *e, struct fs_error *err);

/* The name a user knows the container by, as list shows it: the pod as
 * NAMESPACE/POD[/CONTAINER] when there is one, else the engine's name, else
 * "-". */
#define REGISTRY_LABEL_MAX (3 * REGISTRY_NAME_MAX + 3) /* its length at most */
void registry_entry_label(const struct registry_entry *e, char *buf, size_t len);
/* Where that label came from: "engine state", "annotation", or NULL when
 * there is none. A pod is always "annotation". */
const char *registry_entry_label_source(const struct registry_entry *e);
/* The words for one source: "engine state", "annotation", NULL for NONE. */
const char *registry_name_source_str(enum registry_name_source s);

/* 1 when the process still runs with the recorded start time. */
int registry_entry_alive(const struct registry_entry *e);

/* 1 when the process is proven gone: no such pid, or the pid is now a
 * process with another start time, as seen from the pid namespace the hook
 * recorded (host_pid_ns; the caller's must be that one). 0 when alive or
 * when that cannot be told (another pid namespace, any other error reading
 * /proc): registry_sweep and gc remove only proven ones. */
int registry_entry_dead(const struct registry_entry *e);

/* Entries disappear by themselves once their container is gone, without a
 * poststop hook: list and gc call this on what registry_list gave them, a
 * lookup (registry_find_query) on the few candidates it read. Each entry
 * of all[0..*n) whose
 * process is registry_entry_dead is removed from dir (each file judged
 * again by its own content after an atomic rename, so a new container's
 * entry of the same id is never removed; no symlink followed) and from the
 * array (compacted, order kept; *n updated). A live entry is never out of
 * sight of a concurrent reader while it is judged (it is linked, not
 * moved). At most REGISTRY_SWEEP_MAX
 * removals per call; errors leave the entry (best effort, never fatal).
 * Returns the number removed. */
/* One entry, by the same rule: 1 removed (its file said dead), 0 kept. */
int registry_remove_dead(const char *dir, const char *id);
#define REGISTRY_SWEEP_MAX 256
int registry_sweep(const char *dir, struct registry_entry *all, size_t *n);

/* ---- the name index (registry_index.c) ------------------------------
 * Beside the entries, dir/names/ says which ids carry a name, so that a
 * lookup by name or pod opens the entries of that name only:
 *   names/n.<engine name>/<id>   an empty file per container of that name
 *   names/p.<pod name>/<id>      the same per pod
 * names/ exists only when it is complete: the CLI builds it from a full
 * listing when it is missing (registry_index_build), a hook adds its entry's
 * names only when it exists (registry_index_add, after the entry) and sets
 * the whole directory aside when it cannot (the next lookup rebuilds it). An
 * index file is only a hint: the entry it points to is read and must carry
 * the name; one that does not (stale, or lying) is dropped. */
#define REGISTRY_INDEX_DIR     "names"
#define REGISTRY_INDEX_NAME    'n' /* Docker/Podman/nerdctl container name */
#define REGISTRY_INDEX_POD     'p' /* Kubernetes pod name */
#define REGISTRY_INDEX_KEY_MAX (REGISTRY_NAME_MAX + 2)

/* Add e's names to the index of the registry directory dfd (the hook, after
 * writing e). 0 (also when there is no index yet: nothing to do), or
 * -errno with a message after setting the index aside. Files are created
 * O_CREAT|O_EXCL|O_NOFOLLOW, directories 0700; an existing file is fine. */
int registry_index_add(int dfd, const struct registry_entry *e, struct fs_error *err);

/* Drop e's names from the index once e's file is gone (best effort; each
 * as registry_index_drop). */
void registry_index_remove(int dfd, const char *dir, const struct registry_entry *e);

/* Drop the index file of (kind, name) -> id unless <id>.json (read again
 * after the index file was linked to a private name; it stays visible
 * meanwhile) carries that name: a hook registering the id again meanwhile
 * keeps its index file. 1 dropped, 0 kept or absent. */
int registry_index_drop(int dfd, const char *dir, char kind, const char *name, const char *id);

/* The ids the index files of (kind, name) name, malloc'd (free *ids), in
 * directory order, at most REGISTRY_INDEX_IDS_MAX. 0 (*n may be 0: nobody
 * has the name), -ENODATA when there is no index (an older hook's registry,
 * or set aside), other -errno. */
#define REGISTRY_INDEX_IDS_MAX 4096
int registry_index_ids(int dfd, char kind, const char *name, char (**ids)[REGISTRY_ID_MAX + 1],
		       size_t *n);

/* Build the missing index from all[0..n) (registry_list's, sorted by id):
 * written under a private name, renamed into place (RENAME_NOREPLACE: a
 * concurrent builder's wins), then the entries that appeared since the
 * listing are added. 0 or -errno. */
int registry_index_build(int dfd, const char *dir, const struct registry_entry *all, size_t n,
			 struct fs_error *err);

/* gc: make the index agree with all[0..n) (sorted by id): built when
 * missing, files of names nobody carries dropped, missing ones added, empty
 * name directories and set-aside indexes removed. */
struct registry_index_stats {
	size_t dropped, added;
	size_t leftovers; /* private files of dead droppers and sweepers removed */
	int built;
};
int registry_index_check(const char *dir, const struct registry_entry *all, size_t n,
			 struct registry_index_stats *st, struct fs_error *err);

/* The query checks registry_lookup makes first: 0, or -EINVAL with why. */
int registry_query_check(const struct registry_query *q, struct fs_error *err);

/* Serialise/parse (exposed for tests and the fuzzer). */
int registry_to_json(const struct registry_entry *e, char **out, size_t *len, struct fs_error *err);
int registry_from_json(const char *buf, size_t len, struct registry_entry *e, struct fs_error *err);

#endif
