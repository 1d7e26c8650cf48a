/* registry_index.c - the name index beside the registry entries (see
 * registry.h): dir/names/<kind>.<name>/<id>, one empty file per container
 * carrying that name. Every operation works through the registry
 * directory's fd (the hook's may be in another mount namespace by then)
 * and follows no symlink. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "registry_int.h"

/* Tries of one add when a pruner removes the name's directory in between. */
#define INDEX_ADD_TRIES 3

static int index_key(char kind, const char *name, char key[REGISTRY_INDEX_KEY_MAX + 1])
{
	if (!name[0] || strlen(name) > REGISTRY_NAME_MAX)
		return -EINVAL;
	snprintf(key, REGISTRY_INDEX_KEY_MAX + 1, "%c.%s", kind, name);
	return 0;
}

/* The name e carries for kind ("" when none). */
static const char *index_name_of(const struct registry_entry *e, char kind)
{
	return kind == REGISTRY_INDEX_NAME ? e->name : kind == REGISTRY_INDEX_POD ? e->pod : "";
}

static const char index_kinds[] = {REGISTRY_INDEX_NAME, REGISTRY_INDEX_POD};

static int index_open(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* root/key/id, the directory made when missing. 0 or -errno. One openat2
 * when the name's directory exists (a pod's second container), else three
 * (a Docker name): this runs on the container-start path. */
static int index_link(int root, const char *key, const char *id)
{
	char path[REGISTRY_INDEX_KEY_MAX + REGISTRY_ID_MAX + 2];
	struct open_how how = {
	    .flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    .mode = 0600,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	snprintf(path, sizeof(path), "%s/%s", key, id);
	for (int i = 0; i < INDEX_ADD_TRIES; i++) {
		int fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno == EEXIST)
			return 0;
		if (errno != ENOENT)
			return -errno;
		/* the name's directory is missing (or was removed as empty) */
		if (mkdirat(root, key, 0700) < 0 && errno != EEXIST)
			return -errno;
	}
	return -EAGAIN;
}

/* e's names into the index root (an fd of names/ or of a build's copy). */
static int index_link_entry(int root, const struct registry_entry *e)
{
	for (size_t k = 0; k < FS_ARRAY_SIZE(index_kinds); k++) {
		char key[REGISTRY_INDEX_KEY_MAX + 1];
		if (index_key(index_kinds[k], index_name_of(e, index_kinds[k]), key) < 0)
			continue;
		int r = index_link(root, key, e->id);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Remove a directory of depth <= 2 made of directories and regular files
 * (a set-aside or abandoned index). Best effort. */
static void index_remove_tree(int dfd, const char *name, int depth)
{
	cleanup_close int fd = index_open(dfd, name);
	if (fd < 0)
		return;
	int fd2 = dup(fd);
	cleanup_closedir DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
	if (!d) {
		if (fd2 >= 0)
			close(fd2);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) < 0 && errno == EISDIR && depth > 0)
			index_remove_tree(fd, de->d_name, depth - 1);
	}
	unlinkat(dfd, name, AT_REMOVEDIR);
}

int registry_index_add(int dfd, const struct registry_entry *e, struct fs_error *err)
{
	if (!e->name[0] && !e->pod[0])
		return 0;
	cleanup_close int root = index_open(dfd, REGISTRY_INDEX_DIR);
	if (root == -ENOENT)
		return 0; /* not built yet: the first lookup by name builds it */
	int r = root < 0 ? root : index_link_entry(root, e);
	if (r == 0)
		return 0;
	/* An index without this entry's names would hide it from lookups by
	 * name: set the index aside whole; the next lookup rebuilds it. */
	char aside[64];
	snprintf(aside, sizeof(aside), ".%s.aside.%d", REGISTRY_INDEX_DIR, (int)getpid());
	if (renameat(dfd, REGISTRY_INDEX_DIR, dfd, aside) < 0)
		return fs_error_set(err, -r,
				    "adding %s to the name index; and setting it aside: %s", e->id,
				    strerror(errno));
	return fs_error_set(err, -r, "adding %s to the name index (set aside for a rebuild)",
			    e->id);
}

int registry_index_drop(int dfd, const char *dir, char kind, const char *name, const char *id)
{
	char key[REGISTRY_INDEX_KEY_MAX + 1], grab[REGISTRY_ID_MAX + 32],
	    aside[REGISTRY_ID_MAX + 32], file[REGISTRY_ID_MAX + 16];
	if (index_key(kind, name, key) < 0 || registry_validate_id(id, NULL) < 0)
		return 0;
	cleanup_close int root = index_open(dfd, REGISTRY_INDEX_DIR);
	if (root < 0)
		return 0;
	cleanup_close int kfd = index_open(root, key);
	if (kfd < 0)
		return 0;
	/* Link the index file first (it stays visible to lookups meanwhile),
	 * then judge the entry: a hook writes the entry before its index
	 * file, so an entry that carries the name now is seen and the index
	 * file kept; a stale one is removed only if it is still the file
	 * linked (registry_unlink_same). */
	snprintf(grab, sizeof(grab), ".drop.%d.%s", (int)getpid(), id);
	snprintf(aside, sizeof(aside), ".dropped.%d.%s", (int)getpid(), id);
	unlinkat(kfd, grab, 0);
	if (linkat(kfd, id, kfd, grab, 0) < 0)
		return 0;
	struct registry_entry e;
	struct fs_error ignored;
	registry_file_name(id, file, sizeof(file));
	int r = registry_read_at(dfd, dir, file, &e, &ignored);
	int carries = r == 0 && !strcmp(e.id, id) && !strcmp(index_name_of(&e, kind), name);
	/* Unreadable for another reason than absence: not proven stale. */
	int keep = carries || (r < 0 && r != -ENOENT && r != -EINVAL);
	if (keep) {
		unlinkat(kfd, grab, 0);
		return 0;
	}
	int removed = registry_unlink_same(kfd, id, grab, aside);
	unlinkat(root, key, AT_REMOVEDIR); /* fails unless empty */
	return removed;
}

void registry_index_remove(int dfd, const char *dir, const struct registry_entry *e)
{
	for (size_t k = 0; k < FS_ARRAY_SIZE(index_kinds); k++) {
		const char *name = index_name_of(e, index_kinds[k]);
		if (name[0])
			registry_index_drop(dfd, dir, index_kinds[k], name, e->id);
	}
}

int registry_index_ids(int dfd, char kind, const char *name, char (**ids)[REGISTRY_ID_MAX + 1],
		       size_t *n)
{
	char key[REGISTRY_INDEX_KEY_MAX + 1];
	*ids = NULL;
	*n = 0;
	cleanup_close int root = index_open(dfd, REGISTRY_INDEX_DIR);
	/* Missing, or not a directory (gc replaces it): every entry is read. */
	if (root == -ENOENT || root == -ENOTDIR || root == -ELOOP)
		return -ENODATA;
	if (root < 0)
		return root;
	if (index_key(kind, name, key) < 0)
		return 0;
	int kfd = index_open(root, key);
	if (kfd == -ENOENT || kfd == -ENOTDIR || kfd == -ELOOP)
		return 0;
	if (kfd < 0)
		return kfd;
	cleanup_closedir DIR *d = fdopendir(kfd);
	if (!d) {
		close(kfd);
		return -errno;
	}
	cleanup_free char(*v)[REGISTRY_ID_MAX + 1] = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) && cnt < REGISTRY_INDEX_IDS_MAX) {
		/* dot names: ".", "..", a dropper's private grab */
		if (de->d_name[0] == '.' || registry_validate_id(de->d_name, NULL) < 0)
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			void *nv = reallocarray(v, ncap, sizeof(*v));
			if (!nv)
				return -ENOMEM;
			v = nv;
			cap = ncap;
		}
		snprintf(v[cnt++], sizeof(*v), "%s", de->d_name);
	}
	*ids = steal_pointer(&v);
	*n = cnt;
	return 0;
}

static int index_cmp_id(const void *key, const void *elem)
{
	return strcmp(key, ((const struct registry_entry *)elem)->id);
}

static int index_listed(const struct registry_entry *all, size_t n, const char *id)
{
	return n && bsearch(id, all, n, sizeof(*all), index_cmp_id) != NULL;
}

/* The entries of dfd that are not in all[0..n) (written since the
 * listing) into the index root. */
static int index_add_new(int dfd, const char *dir, int root, const struct registry_entry *all,
			 size_t n)
{
	int fd2 = dup(dfd);
	cleanup_closedir DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
	if (!d) {
		int e = errno;
		if (fd2 >= 0)
			close(fd2);
		return -e;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		char id[REGISTRY_ID_MAX + 1];
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || l - 5 > REGISTRY_ID_MAX ||
		    strcmp(de->d_name + l - 5, ".json"))
			continue;
		memcpy(id, de->d_name, l - 5);
		id[l - 5] = '\0';
		struct registry_entry e;
		struct fs_error ignored;
		if (index_listed(all, n, id) ||
		    registry_read_at(dfd, dir, de->d_name, &e, &ignored) < 0 || strcmp(e.id, id))
			continue;
		int r = index_link_entry(root, &e);
		if (r < 0)
			return r;
	}
	return 0;
}

int registry_index_build(int dfd, const char *dir, const struct registry_entry *all, size_t n,
			 struct fs_error *err)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".%s.new.%d", REGISTRY_INDEX_DIR, (int)getpid());
	index_remove_tree(dfd, tmp, 1); /* a crashed build of a former process of our pid */
	if (mkdirat(dfd, tmp, 0700) < 0)
		return fs_error_set(err, errno, "building the name index in %s", dir);
	int r;
	{
		cleanup_close int t = index_open(dfd, tmp);
		r = t;
		for (size_t i = 0; t >= 0 && i < n; i++)
			if ((r = index_link_entry(t, &all[i])) < 0)
				break;
	}
	if (r >= 0 && renameat2(dfd, tmp, dfd, REGISTRY_INDEX_DIR, RENAME_NOREPLACE) < 0)
		r = errno == EEXIST ? 1 : -errno; /* another builder's is there: ours goes */
	if (r != 0) {
		index_remove_tree(dfd, tmp, 1);
		return r > 0 ? 0 : fs_error_set(err, -r, "building the name index in %s", dir);
	}
	/* A hook that looked for names/ before the rename skipped its names;
	 * it wrote its entry before looking, so a listing started now has it. */
	cleanup_close int root = index_open(dfd, REGISTRY_INDEX_DIR);
	r = root < 0 ? root : index_add_new(dfd, dir, root, all, n);
	if (r < 0) {
		/* incomplete: set aside; the next lookup tries again */
		char aside[64];
		snprintf(aside, sizeof(aside), ".%s.aside.%d", REGISTRY_INDEX_DIR, (int)getpid());
		renameat(dfd, REGISTRY_INDEX_DIR, dfd, aside);
		return fs_error_set(err, -r, "completing the name index in %s", dir);
	}
	return 0;
}

/* A private name another registry process made (".<what>.<pid>.<rest>":
 * a dropper's grab, a sweeper's link) whose maker is gone: it dies with
 * that process's work, so gc may remove it. */
static int index_leftover(const char *name, const char *what)
{
	size_t l = strlen(what);
	if (strncmp(name, what, l))
		return 0;
	char *end;
	errno = 0;
	long pid = strtol(name + l, &end, 10);
	if (errno || end == name + l || *end != '.' || pid <= 0 || pid > INT32_MAX)
		return 0;
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* Remove the leftovers of dead droppers (prefix what) in directory fd. */
static size_t index_remove_leftovers(int fd, const char *what)
{
	size_t gone = 0;
	int fd2 = dup(fd);
	cleanup_closedir DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
	if (!d && fd2 >= 0)
		close(fd2);
	if (!d)
		return 0;
	/* The dup shares fd's offset: start at the top, leave it there. */
	rewinddir(d);
	struct dirent *de;
	while ((de = readdir(d)))
		if (index_leftover(de->d_name, what) && unlinkat(fd, de->d_name, 0) == 0)
			gone++;
	rewinddir(d);
	return gone;
}

/* gc: one name directory of the index (key, a name of kind) against the
 * listing: ids nobody listed with that name are dropped (judged again on
 * the entry's file). */
static void index_check_key(int dfd, const char *dir, int root, const char *key,
			    const struct registry_entry *all, size_t n,
			    struct registry_index_stats *st)
{
	char kind = key[0];
	const char *name = key + 2;
	if ((kind != REGISTRY_INDEX_NAME && kind != REGISTRY_INDEX_POD) || key[1] != '.' ||
	    registry_validate_name(name, NULL) < 0) {
		index_remove_tree(root, key, 0); /* not ours */
		return;
	}
	char(*ids)[REGISTRY_ID_MAX + 1] = NULL;
	size_t cnt = 0;
	if (registry_index_ids(dfd, kind, name, &ids, &cnt) < 0)
		return;
	for (size_t i = 0; i < cnt; i++) {
		const struct registry_entry *e =
		    n ? bsearch(ids[i], all, n, sizeof(*all), index_cmp_id) : NULL;
		if (e && !strcmp(index_name_of(e, kind), name))
			continue;
		st->dropped += (size_t)registry_index_drop(dfd, dir, kind, name, ids[i]);
	}
	free(ids);
	cleanup_close int kfd = index_open(root, key);
	if (kfd >= 0)
		st->leftovers += index_remove_leftovers(kfd, ".drop.");
	unlinkat(root, key, AT_REMOVEDIR); /* when empty */
}

int registry_index_check(const char *dir, const struct registry_entry *all, size_t n,
			 struct registry_index_stats *st, struct fs_error *err)
{
	memset(st, 0, sizeof(*st));
	cleanup_close int dfd = registry_open_dir(dir, 0, err);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0)
		return dfd;
	/* A dead sweeper's private links to entry files (registry_remove.c). */
	st->leftovers += index_remove_leftovers(dfd, ".sweep.");
	st->leftovers += index_remove_leftovers(dfd, ".swept.");
	/* Set-aside and abandoned indexes first. */
	{
		int fd2 = dup(dfd);
		cleanup_closedir DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
		if (!d && fd2 >= 0)
			close(fd2);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (!strncmp(de->d_name, "." REGISTRY_INDEX_DIR ".",
				     sizeof(REGISTRY_INDEX_DIR) + 1))
				index_remove_tree(dfd, de->d_name, 1);
	}
	cleanup_close int root = index_open(dfd, REGISTRY_INDEX_DIR);
	if ((root == -ENOTDIR || root == -ELOOP) && unlinkat(dfd, REGISTRY_INDEX_DIR, 0) == 0)
		root = -ENOENT; /* a file or symlink where the index goes */
	if (root == -ENOENT) {
		st->built = 1;
		return registry_index_build(dfd, dir, all, n, err);
	}
	if (root < 0)
		return fs_error_set(err, -root, "opening the name index of %s", dir);
	int fd2 = dup(root);
	cleanup_closedir DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
	if (!d) {
		if (fd2 >= 0)
			close(fd2);
		return fs_error_set(err, errno, "reading the name index of %s", dir);
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			index_check_key(dfd, dir, root, de->d_name, all, n, st);
	/* Entries whose names are missing (a hook stopped by its deadline
	 * between the entry and the index). */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < FS_ARRAY_SIZE(index_kinds); k++) {
			char key[REGISTRY_INDEX_KEY_MAX + 1], path[REGISTRY_INDEX_KEY_MAX + 160];
			struct stat sb;
			if (index_key(index_kinds[k], index_name_of(&all[i], index_kinds[k]), key) <
			    0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", key, all[i].id);
			if (fstatat(root, path, &sb, AT_SYMLINK_NOFOLLOW) == 0)
				continue;
			if (index_link(root, key, all[i].id) == 0)
				st->added++;
		}
	return 0;
}
