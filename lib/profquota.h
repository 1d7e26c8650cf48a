/* profquota.h - quotas and retention of triggered profiles.
 *
 * A profile is the group of files <profile_dir>/<id>/<base>.{svg,folded,
 * pb.gz,log} that one trigger writes. Profiles are charged to the
 * container's quota key, which survives restarts (each restart is a new
 * id): its pod (namespace/pod/container) or its engine's name, else the id
 * alone; names that are only claims (annotations) keyed apart from the
 * engines' own records (profquota_key). The hook writes the key to <profile_dir>/<id>/.key when it
 * creates the directory.
 *
 * Limits (config, docs/configuration.md): a maximum age, a count and a
 * size per key and in total. profquota_plan is the pure policy (unit
 * tested); profquota_scan and profquota_apply the directory side. Only
 * the host's root writes under profile_dir, but keys came from container
 * annotations: they are only compared, never used as paths, and escaped
 * when shown. */
#ifndef FS_PROFQUOTA_H
#define FS_PROFQUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "registry.h"

#define PROFQUOTA_KEY_MAX  (4 * REGISTRY_NAME_MAX + REGISTRY_ENGINE_MAX + 64)
#define PROFQUOTA_KEY_FILE ".key"
#define PROFQUOTA_BASE_MAX 64
/* Profiles looked at per scan: beyond it, the rest is not charged (and a
 * warning says so); far above any sane total quota. */
#define PROFQUOTA_SCAN_MAX 100000

struct profquota_limits {
	unsigned per_key_count; /* profiles per key (>= 1) */
	unsigned long long per_key_bytes;
	unsigned total_count;
	unsigned long long total_bytes;
	int64_t max_age_s; /* 0: no age limit */
};

struct profquota_item {
	char key[PROFQUOTA_KEY_MAX + 1];
	char id[REGISTRY_ID_MAX + 1];
	char base[PROFQUOTA_BASE_MAX]; /* the file name without its suffix */
	int64_t time;		       /* newest mtime of its files */
	unsigned long long bytes;      /* all its files */
	int busy;		       /* being written by a live monitor: never removed */
	int remove;		       /* set by profquota_plan */
	const char *why;	       /* "age", "container quota", "total quota" */
};

/* The limits the config sets. */
void profquota_limits_from_config(const struct fs_config *cfg, struct profquota_limits *lim);

/* The quota key of a container. A name the engine recorded (Docker,
 * c/storage: unique in its store) is "name <engine>/<name>". A name only
 * an annotation gave is a claim, keyed apart so that it can never reach an
 * engine-recorded name's profiles or slots: "claim pod <ns>/<pod>/
 * <container>" (with " via <engine>" when the engine recorded a name
 * beside it: the claim then stays among that engine's containers),
 * "claim name <engine>/<name>"; else "id <id>". A claim of a container
 * containerd's shims ran ends with " in containerd/<namespace>" (from the
 * bundle path the runtime gave, never an annotation). Claims of the same
 * words in one containerd namespace (or outside containerd) share a key
 * (docs/security.md). */
void profquota_key(const struct registry_entry *e, char *key, size_t len);

/* Mark items to remove (item->remove, item->why), oldest first within
 * each rule: expired ones; then, when key is not NULL, the oldest of key
 * until one more profile of key fits its count and its bytes are under
 * per_key_bytes; then the oldest of all until one more (key != NULL) or
 * none more (key == NULL, a sweep) fits the totals. Busy items count but
 * are never marked. Returns 1 when there is room (for the new profile of
 * key, or, in a sweep, the limits hold), 0 when not even removing every
 * idle profile makes room. Reorders items (oldest first). */
int profquota_plan(struct profquota_item *items, size_t n, const char *key,
		   const struct profquota_limits *lim, int64_t now);

/* Every profile under profile_dir (busy ones judged by the in-progress
 * markers of run_dir). *items malloc'd. 0 or -errno (a missing
 * profile_dir is no profile). */
int profquota_scan(const struct fs_config *cfg, struct profquota_item **items, size_t *n);

/* Remove the files of every marked item (and its id directory once
 * empty). Returns how many profiles were removed. */
size_t profquota_apply(const struct fs_config *cfg, const struct profquota_item *items, size_t n);

/* Take the quota lock, <profile_dir>/.quota.lock (created 0600), so two
 * triggers do not plan against each other. An fd to close, or -errno. */
int profquota_lock(const struct fs_config *cfg);

#endif
