/* registry_remove.c - removing entries (see registry.h): by id, by a
 * runtime's delete, and the dead ones a listing meets. Each removal also
 * drops the entry's names from the index (registry_index.c), so that this
 * file, not registry.c, depends on the index: registry.c (entry files) <-
 * registry_index.c (names) <- registry_remove.c, registry_lookup.c. */
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "registry_int.h"

int registry_remove(const char *dir, const char *id, struct fs_error *err)
{
	char name[REGISTRY_ID_MAX + 16];
	cleanup_close int dfd = registry_entry_at(dir, id, name, err);
	if (dfd < 0)
		return dfd;
	/* Its names, for the index: an unreadable entry's index files go
	 * with the next gc, or with the lookup that meets them. */
	struct registry_entry old;
	struct fs_error ignored;
	int named = registry_read_at(dfd, dir, name, &old, &ignored) == 0 && !strcmp(old.id, id);
	if (unlinkat(dfd, name, 0) < 0)
		return fs_error_set(err, errno, "removing %s/%s", dir, name);
	if (named)
		registry_index_remove(dfd, dir, &old);
	return 0;
}

int registry_remove_at(int dfd, const char *id)
{
	char name[REGISTRY_ID_MAX + 16];
	struct fs_error err;
	if (registry_validate_id(id, &err) < 0)
		return -EINVAL;
	snprintf(name, sizeof(name), "%s.json", id);
	struct registry_entry old;
	int named = registry_read_at(dfd, "registry", name, &old, &err) == 0 && !strcmp(old.id, id);
	if (unlinkat(dfd, name, 0) < 0)
		return -errno;
	if (named)
		registry_index_remove(dfd, "registry", &old);
	return 0;
}

/* Remove the entry file of id if, and only if, the file itself says its
 * process is dead. The entry stays where it is while it is judged, so that
 * a concurrent reader never misses a live entry: the sweeper hard-links
 * the file to a private name (a snapshot of that very file: writers only
 * ever rename a new file over the name), reads and judges the snapshot,
 * and only when it is dead takes the name away and removes it, if it is
 * still that file (registry_unlink_same: a new container's entry that
 * took the name meanwhile is put back at once). A sweeper that dies
 * leaves a private link behind, never a hidden entry. 1 removed, 0 kept. */
static int registry_remove_dead_at(int dfd, const char *dir, const char *id,
				   struct registry_entry *kept)
{
	char name[REGISTRY_ID_MAX + 16], grab[REGISTRY_ID_MAX + 48], aside[REGISTRY_ID_MAX + 48];
	struct registry_entry e;
	struct fs_error err;
	int readable;
	snprintf(name, sizeof(name), "%s.json", id);
	/* Leading '.': registry_list skips it, as it skips the writer's
	 * temporary files. */
	snprintf(grab, sizeof(grab), ".sweep.%d.%s", (int)getpid(), name);
	snprintf(aside, sizeof(aside), ".swept.%d.%s", (int)getpid(), name);
	unlinkat(dfd, grab, 0); /* a link left by an earlier sweep of ours */
	if (linkat(dfd, name, dfd, grab, 0) < 0)
		return 0;
	readable = registry_read_at(dfd, dir, grab, &e, &err) == 0 && !strcmp(e.id, id);
	if (readable && registry_entry_dead(&e)) {
		if (!registry_unlink_same(dfd, name, grab, aside))
			return 0; /* a new entry has the name */
		registry_index_remove(dfd, dir, &e);
		return 1;
	}
	unlinkat(dfd, grab, 0);
	if (readable && kept)
		*kept = e; /* the caller's listing gets the entry that is there now */
	return 0;
}

int registry_remove_dead(const char *dir, const char *id)
{
	struct fs_error err;
	if (registry_validate_id(id, &err) < 0)
		return 0;
	cleanup_close int dfd = registry_open_dir(dir, 0, &err);
	return dfd < 0 ? 0 : registry_remove_dead_at(dfd, dir, id, NULL);
}

int registry_sweep(const char *dir, struct registry_entry *all, size_t *n)
{
	size_t kept = 0, removed = 0;
	int dfd = -1;
	for (size_t i = 0; i < *n; i++) {
		/* Bounded work per call: the rest wait for the next one. */
		int dead = removed < REGISTRY_SWEEP_MAX && registry_entry_dead(&all[i]);
		if (dead && dfd < 0) {
			struct fs_error err;
			dfd = registry_open_dir(dir, 0, &err);
		}
		if (dead && dfd >= 0 && registry_remove_dead_at(dfd, dir, all[i].id, &all[i])) {
			removed++;
			continue;
		}
		if (kept != i)
			all[kept] = all[i];
		kept++;
	}
	if (dfd >= 0)
		close(dfd);
	*n = kept;
	return (int)removed;
}
