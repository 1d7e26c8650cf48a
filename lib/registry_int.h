/* registry_int.h - what registry.c (entry files) shares with
 * registry_index.c, registry_remove.c and registry_lookup.c; not for other
 * callers (use registry.h). */
#ifndef FS_REGISTRY_INT_H
#define FS_REGISTRY_INT_H

#include "registry.h"

/* The registry directory, checked (registry_open_checked: no symlink, ours
 * alone), created 0700 when create. The fd, or -errno (-ENOENT: missing). */
int registry_open_dir(const char *dir, int create, struct fs_error *err);

/* Read and parse the entry file name ("<id>.json", or a private name) of
 * the directory dfd (dir names it in messages): O_NOFOLLOW, a regular file,
 * at most 64 KiB. 0, or -errno (-ENOENT, -ELOOP, -EINVAL ...). */
int registry_read_at(int dfd, const char *dir, const char *name, struct registry_entry *e,
		     struct fs_error *err);

/* The registry directory (returned, an fd) and the entry's file name for
 * id, after validating id. The fd, or -errno. */
int registry_entry_at(const char *dir, const char *id, char name[REGISTRY_ID_MAX + 16],
		      struct fs_error *err);

/* "<id>.json" into name (room for REGISTRY_ID_MAX + 6), without validating id. */
void registry_file_name(const char *id, char *name, size_t len);

/* Remove name from dfd if it is still the file grab is a hard link to
 * (taken by the caller), and grab with it; when name is another file now
 * (a writer renamed a new one over it), it is put back (unless a newer
 * one took the name again). aside: a private name for the moment between.
 * 1 removed, 0 not. grab is gone either way. */
int registry_unlink_same(int dfd, const char *name, const char *grab, const char *aside);

#endif
