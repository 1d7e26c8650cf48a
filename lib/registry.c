/* registry.c - see registry.h */
#include "registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "json.h"
#include "proc.h"
#include "registry_int.h"

#define REGISTRY_FILE_MAX (64 * 1024)

int registry_validate_id(const char *id, struct fs_error *err)
{
	size_t n = strlen(id);
	if (n == 0 || n > REGISTRY_ID_MAX)
		return fs_error_set(err, EINVAL, "container id must be 1 to %d characters",
				    REGISTRY_ID_MAX);
	if (id[0] == '.' || id[0] == '-')
		return fs_error_set(err, EINVAL, "container id may not start with '.' or '-'");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return fs_error_set(
			    err, EINVAL,
			    "container id has a character outside [A-Za-z0-9_.-] at offset %zu", i);
	}
	return 0;
}

int registry_validate_name(const char *name, struct fs_error *err)
{
	size_t n = strlen(name);
	if (n == 0 || n > REGISTRY_NAME_MAX)
		return fs_error_set(err, EINVAL, "name must be 1 to %d characters",
				    REGISTRY_NAME_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		int alnum =
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return fs_error_set(err, EINVAL,
					    "name has a character outside [A-Za-z0-9_.-] (or does "
					    "not start with a letter or digit) at offset %zu",
					    i);
	}
	return 0;
}

/* Make dir (mode 0700) if missing and open it; refuse symlinks,
 * non-directories, and a dir or parent (run_dir) that is not ours alone.
 * Parents of dir must exist except run_dir's own. */
static int registry_open_checked(const char *dir, struct fs_error *err);

int registry_open_dir(const char *dir, int create, struct fs_error *err)
{
	/* The common case first: it exists (no mkdir walk of every parent). */
	int fd = registry_open_checked(dir, err);
	if (fd != -ENOENT || !create)
		return fd;
	{
		/* run_dir and its containers/: both 0700 when we create them */
		int r = fileio_mkdir_p(dir, 0700, 0700);
		/* Not a directory (a symlink?): the checks below say which. */
		if (r < 0 && r != -ENOTDIR)
			return fs_error_set(err, -r, "creating %s", dir);
	}
	return registry_open_checked(dir, err);
}

static int registry_open_checked(const char *dir, struct fs_error *err)
{
	/* The registry decides what root mounts into, signals and profiles:
	 * the directory and run_dir above it must be ours alone. Each is
	 * opened without following a symlink and checked on its fd; the
	 * registry is opened relative to the checked run_dir. */
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", dir);
	char *slash = strrchr(parent, '/');
	const char *base = dir;
	cleanup_close int pfd = -1;
	if (slash) {
		base = dir + (slash - parent) + 1;
		if (slash == parent)
			slash[1] = '\0';
		else
			*slash = '\0';
		pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			return fs_error_set(err, errno, "opening %s", parent);
		int r = fileio_check_private_dir(pfd, parent, err);
		if (r < 0)
			return r;
	}
	int at = slash ? pfd : AT_FDCWD;
	int fd = openat(at, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		struct stat sb;
		if ((e == ENOTDIR || e == ELOOP) &&
		    fstatat(at, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
			return fs_error_set(err, ENOTDIR,
					    "refusing registry %s: it is a symlink (make it a "
					    "directory owned by root, mode 0700)",
					    dir);
		return fs_error_set(err, e, "opening registry %s", dir);
	}
	int r = fileio_check_private_dir(fd, dir, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int registry_to_json(const struct registry_entry *e, char **out, size_t *len, struct fs_error *err)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return fs_error_set(err, errno, "serialising registry entry");
	fputs("{\"id\":", f);
	json_write_string(f, e->id);
	fprintf(f,
		",\"pid\":%d,\"start_time\":%" PRIu64 ",\"ns_pid\":%d,\"pid_ns\":%" PRIu64
		",\"mnt_ns\":%" PRIu64 ",\"host_pid_ns\":%" PRIu64
		",\"uid\":%u,\"gid\":%u,\"rootfs\":",
		(int)e->pid, e->start_time, (int)e->ns_pid, e->pid_ns, e->mnt_ns, e->host_pid_ns,
		(unsigned)e->uid, (unsigned)e->gid);
	json_write_string(f, e->rootfs);
	fputs(",\"bundle\":", f);
	json_write_string(f, e->bundle);
	fputs(",\"mount_point\":", f);
	json_write_string(f, e->mount_point);
	fprintf(f, ",\"created\":%" PRId64 ",\"hook_version\":", e->created);
	json_write_string(f, e->hook_version);
	fputs(",\"annotations\":{\"profile\":", f);
	json_write_string(f, e->profile);
	fputs(",\"delay\":", f);
	json_write_string(f, e->delay);
	fputs(",\"frequency\":", f);
	json_write_string(f, e->frequency);
	fputs(",\"event\":", f);
	json_write_string(f, e->event);
	fputs("},\"names\":{\"engine\":", f);
	json_write_string(f, e->engine);
	fputs(",\"name\":", f);
	json_write_string(f, e->name);
	fputs(",\"pod\":", f);
	json_write_string(f, e->pod);
	fputs(",\"namespace\":", f);
	json_write_string(f, e->pod_namespace);
	fputs(",\"container\":", f);
	json_write_string(f, e->container);
	if (e->name[0] && e->name_source != REGISTRY_NAME_NONE)
		fprintf(f, ",\"name_source\":\"%s\"",
			e->name_source == REGISTRY_NAME_ENGINE ? "engine" : "annotation");
	fputs("}}\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return fs_error_set(err, ENOMEM, "serialising registry entry");
	}
	*out = buf;
	*len = n;
	return 0;
}

static int registry_copy_str(yajl_val root, const char *key, char *dst, size_t len, int required,
			     struct fs_error *err)
{
	const char *s = json_get_string(root, key);
	if (!s) {
		if (required)
			return fs_error_set(err, EINVAL, "registry entry lacks \"%s\"", key);
		dst[0] = '\0';
		return 0;
	}
	if (strlen(s) >= len)
		return fs_error_set(err, ENAMETOOLONG, "registry entry \"%s\"", key);
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int registry_get_num(yajl_val root, const char *key, long long lo, long long hi,
			    long long *out, struct fs_error *err)
{
	if (json_get_int(root, key, out) < 0 || *out < lo || *out > hi)
		return fs_error_set(err, EINVAL, "registry entry \"%s\" missing or out of range",
				    key);
	return 0;
}

/* The "names" object: each name optional, and valid when present. */
static int registry_names_from_json(yajl_val names, struct registry_entry *e, struct fs_error *err)
{
	const struct {
		const char *key;
		char *dst;
		size_t len;
	} f[] = {
	    {"engine", e->engine, sizeof(e->engine)},
	    {"name", e->name, sizeof(e->name)},
	    {"pod", e->pod, sizeof(e->pod)},
	    {"namespace", e->pod_namespace, sizeof(e->pod_namespace)},
	    {"container", e->container, sizeof(e->container)},
	};
	for (size_t i = 0; i < FS_ARRAY_SIZE(f); i++) {
		int r = registry_copy_str(names, f[i].key, f[i].dst, f[i].len, 0, err);
		if (r == 0 && f[i].dst[0])
			r = registry_validate_name(f[i].dst, err);
		if (r < 0)
			return fs_error_wrap(err, "registry entry names.%s", f[i].key);
	}
	e->name_source = REGISTRY_NAME_NONE;
	if (!e->name[0])
		return 0;
	/* Only "engine" makes a name the engine's record; anything else is
	 * the weaker claim. Without the key (an older hook's entry), those
	 * hooks took only Docker's and Podman's names from engine state. */
	const char *src = names ? json_get_string(names, "name_source") : NULL;
	if (src)
		e->name_source =
		    !strcmp(src, "engine") ? REGISTRY_NAME_ENGINE : REGISTRY_NAME_ANNOTATION;
	else
		e->name_source = !strcmp(e->engine, "docker") || !strcmp(e->engine, "podman")
				     ? REGISTRY_NAME_ENGINE
				     : REGISTRY_NAME_ANNOTATION;
	return 0;
}

const char *registry_name_source_str(enum registry_name_source s)
{
	switch (s) {
	case REGISTRY_NAME_ENGINE: return "engine state";
	case REGISTRY_NAME_ANNOTATION: return "annotation";
	default: return NULL;
	}
}

void registry_entry_label(const struct registry_entry *e, char *buf, size_t len)
{
	if (e->pod[0])
		snprintf(buf, len, "%s/%s%s%s", e->pod_namespace[0] ? e->pod_namespace : "?",
			 e->pod, e->container[0] ? "/" : "", e->container);
	else
		snprintf(buf, len, "%s", e->name[0] ? e->name : "-");
}

const char *registry_entry_label_source(const struct registry_entry *e)
{
	if (e->pod[0])
		return registry_name_source_str(REGISTRY_NAME_ANNOTATION);
	return e->name[0] ? registry_name_source_str(e->name_source) : NULL;
}

int registry_from_json(const char *buf, size_t len, struct registry_entry *e, struct fs_error *err)
{
	cleanup_json yajl_val root = NULL;
	int r = json_parse(buf, len, 8, &root, err);
	if (r < 0)
		return r;
	if (!YAJL_IS_OBJECT(root))
		return fs_error_set(err, EINVAL, "registry entry is not a JSON object");
	memset(e, 0, sizeof(*e));
	if ((r = registry_copy_str(root, "id", e->id, sizeof(e->id), 1, err)) ||
	    (r = registry_validate_id(e->id, err)))
		return r;
	long long pid, start_time, ns_pid, pid_ns, mnt_ns, uid, gid, created;
	const struct {
		const char *key;
		long long lo, hi, *dst;
	} nums[] = {
	    {"pid", 1, INT32_MAX, &pid},       {"start_time", 0, INT64_MAX, &start_time},
	    {"ns_pid", 0, INT32_MAX, &ns_pid}, {"pid_ns", 0, INT64_MAX, &pid_ns},
	    {"mnt_ns", 0, INT64_MAX, &mnt_ns}, {"uid", 0, UINT32_MAX, &uid},
	    {"gid", 0, UINT32_MAX, &gid},      {"created", 0, INT64_MAX, &created},
	};
	for (size_t i = 0; i < FS_ARRAY_SIZE(nums); i++)
		if ((r = registry_get_num(root, nums[i].key, nums[i].lo, nums[i].hi, nums[i].dst,
					  err)))
			return r;
	e->pid = (pid_t)pid;
	e->start_time = (uint64_t)start_time;
	e->ns_pid = (pid_t)ns_pid;
	e->pid_ns = (uint64_t)pid_ns;
	e->mnt_ns = (uint64_t)mnt_ns;
	e->uid = (uid_t)uid;
	e->gid = (gid_t)gid;
	e->created = created;
	long long host_pid_ns; /* optional: older hooks did not write it */
	if (json_get_int(root, "host_pid_ns", &host_pid_ns) == 0 && host_pid_ns > 0)
		e->host_pid_ns = (uint64_t)host_pid_ns;
	yajl_val ann = json_get_object(root, "annotations");
	if ((r = registry_copy_str(root, "rootfs", e->rootfs, sizeof(e->rootfs), 0, err)) ||
	    (r = registry_copy_str(root, "bundle", e->bundle, sizeof(e->bundle), 0, err)) ||
	    (r = registry_copy_str(root, "mount_point", e->mount_point, sizeof(e->mount_point), 0,
				   err)) ||
	    (r = registry_copy_str(root, "hook_version", e->hook_version, sizeof(e->hook_version),
				   0, err)) ||
	    (r = registry_copy_str(ann, "profile", e->profile, sizeof(e->profile), 0, err)) ||
	    (r = registry_copy_str(ann, "delay", e->delay, sizeof(e->delay), 0, err)) ||
	    (r = registry_copy_str(ann, "frequency", e->frequency, sizeof(e->frequency), 0, err)) ||
	    (r = registry_copy_str(ann, "event", e->event, sizeof(e->event), 0, err)))
		return r;
	return registry_names_from_json(json_get_object(root, "names"), e, err);
}

int registry_dir_open(const char *dir, struct fs_error *err)
{
	return registry_open_dir(dir, 1, err);
}

int registry_write_at(int dfd, const char *dir, const struct registry_entry *e,
		      struct fs_error *err)
{
	int r = registry_validate_id(e->id, err);
	if (r < 0)
		return r;
	cleanup_free char *json = NULL;
	size_t len;
	if ((r = registry_to_json(e, &json, &len, err)) < 0)
		return r;
	char name[REGISTRY_ID_MAX + 16];
	snprintf(name, sizeof(name), "%s.json", e->id);
	return fileio_replace_buf(dfd, dir, name, 0600, json, len, err);
}

int registry_write(const char *dir, const struct registry_entry *e, struct fs_error *err)
{
	int r = registry_validate_id(e->id, err);
	if (r < 0)
		return r;
	cleanup_close int dfd = registry_open_dir(dir, 1, err);
	if (dfd < 0)
		return dfd;
	return registry_write_at(dfd, dir, e, err);
}

void registry_file_name(const char *id, char *name, size_t len)
{
	snprintf(name, len, "%s.json", id);
}

int registry_read_at(int dfd, const char *dir, const char *name, struct registry_entry *e,
		     struct fs_error *err)
{
	cleanup_close int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s/%s", dir, name);
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return fs_error_set(err, errno, "stat %s/%s", dir, name);
	if (!S_ISREG(sb.st_mode))
		return fs_error_set(err, EINVAL, "%s/%s is not a regular file", dir, name);
	cleanup_free char *buf = NULL;
	size_t len;
	int r = json_read_fd(fd, REGISTRY_FILE_MAX, &buf, &len, err);
	if (r == 0)
		r = registry_from_json(buf, len, e, err);
	if (r < 0)
		return fs_error_wrap(err, "%s/%s", dir, name);
	return 0;
}

int registry_entry_at(const char *dir, const char *id, char name[REGISTRY_ID_MAX + 16],
		      struct fs_error *err)
{
	int r = registry_validate_id(id, err);
	if (r < 0)
		return r;
	snprintf(name, REGISTRY_ID_MAX + 16, "%s.json", id);
	return registry_open_dir(dir, 0, err);
}

int registry_read(const char *dir, const char *id, struct registry_entry *e, struct fs_error *err)
{
	char name[REGISTRY_ID_MAX + 16];
	cleanup_close int dfd = registry_entry_at(dir, id, name, err);
	if (dfd < 0)
		return dfd;
	return registry_read_at(dfd, dir, name, e, err);
}

static int registry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct registry_entry *)a)->id,
		      ((const struct registry_entry *)b)->id);
}

int registry_list(const char *dir, struct registry_entry **out, size_t *n,
		  void (*warn)(void *ctx, const char *msg), void *warn_ctx, struct fs_error *err)
{
	*out = NULL;
	*n = 0;
	cleanup_close int dfd = registry_open_dir(dir, 0, err);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0)
		return dfd;
	int dfd2 = dup(dfd);
	if (dfd2 < 0)
		return fs_error_set(err, errno, "opening registry %s", dir);
	cleanup_closedir DIR *d = fdopendir(dfd2);
	if (!d) {
		close(dfd2);
		return fs_error_set(err, errno, "opening registry %s", dir);
	}
	size_t cap = 0, cnt = 0;
	struct registry_entry *arr = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct registry_entry *na = realloc(arr, ncap * sizeof(*arr));
			if (!na) {
				free(arr);
				return fs_error_set(err, ENOMEM, "listing %s", dir);
			}
			arr = na;
			cap = ncap;
		}
		struct fs_error e2;
		if (registry_read_at(dfd, dir, de->d_name, &arr[cnt], &e2) < 0) {
			if (warn)
				warn(warn_ctx, e2.msg);
			continue;
		}
		cnt++;
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), registry_cmp);
	*out = arr;
	*n = cnt;
	return 0;
}

int registry_entry_alive(const struct registry_entry *e)
{
	return proc_alive(e->pid, e->start_time);
}

/* The caller's pid namespace inode (read once), 0 when unreadable. */
static uint64_t registry_self_pid_ns(void)
{
	static uint64_t ino;
	static int done;
	if (!done) {
		struct stat sb;
		ino = stat("/proc/self/ns/pid", &sb) == 0 ? (uint64_t)sb.st_ino : 0;
		done = 1;
	}
	return ino;
}

int registry_entry_dead(const struct registry_entry *e)
{
	uint64_t now;
	/* A pid means something only in the namespace it was read in. */
	if (e->host_pid_ns && e->host_pid_ns != registry_self_pid_ns())
		return 0;
	int r = proc_start_time(e->pid, &now, NULL);
	if (r == -ESRCH || r == -ENOENT)
		return 1;
	return r == 0 && now != e->start_time;
}

int registry_unlink_same(int dfd, const char *name, const char *grab, const char *aside)
{
	struct stat a, b;
	if (fstatat(dfd, grab, &a, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	/* Take the name away (whatever file it is now), then compare. */
	if (renameat(dfd, name, dfd, aside) < 0) {
		unlinkat(dfd, grab, 0);
		return 0;
	}
	int same = fstatat(dfd, aside, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
		   a.st_dev == b.st_dev;
	if (same || renameat2(dfd, aside, dfd, name, RENAME_NOREPLACE) < 0)
		unlinkat(dfd, aside, 0); /* ours, or older than the one there now */
	unlinkat(dfd, grab, 0);
	return same;
}
