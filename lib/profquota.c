/* profquota.c - see profquota.h */
#include "profquota.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "marker.h"

static const char *const profquota_suffixes[] = {".svg", ".folded", ".pb.gz", ".log"};
#define PROFQUOTA_NSUFFIX (sizeof(profquota_suffixes) / sizeof(profquota_suffixes[0]))

void profquota_limits_from_config(const struct fs_config *cfg, struct profquota_limits *lim)
{
	lim->per_key_count = cfg->max_profiles_per_container ? cfg->max_profiles_per_container : 1;
	lim->per_key_bytes = (unsigned long long)cfg->max_profile_mib_per_container << 20;
	lim->total_count = cfg->max_profiles_total ? cfg->max_profiles_total : 1;
	lim->total_bytes = (unsigned long long)cfg->max_profile_mib_total << 20;
	lim->max_age_s = cfg->profile_retention_seconds;
}

/* The containerd namespace of a container run by containerd's shims, from
 * its bundle path: <state>/io.containerd.runtime.v2.task/<ns>/<id> (v1:
 * io.containerd.runtime.v1.linux). The runtime gave the path, which the
 * container's annotations cannot choose. 1 and ns, or 0. */
static int profquota_containerd_ns(const struct registry_entry *e, char *ns, size_t len)
{
	static const char *const tasks[] = {"/io.containerd.runtime.v2.task/",
					    "/io.containerd.runtime.v1.linux/"};
	size_t bl = strlen(e->bundle), il = strlen(e->id);
	if (!il || bl < il + 2 || strcmp(e->bundle + bl - il, e->id) ||
	    e->bundle[bl - il - 1] != '/')
		return 0;
	const char *end = e->bundle + bl - il - 1; /* the '/' before the id */
	const char *start = end;
	while (start > e->bundle && start[-1] != '/')
		start--;
	size_t nl = (size_t)(end - start);
	if (nl == 0 || nl >= len)
		return 0;
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		size_t tl = strlen(tasks[i]);
		if ((size_t)(start - e->bundle) < tl || strncmp(start - tl, tasks[i], tl))
			continue;
		snprintf(ns, len, "%.*s", (int)nl, start);
		return registry_validate_name(ns, NULL) == 0;
	}
	return 0;
}

void profquota_key(const struct registry_entry *e, char *key, size_t len)
{
	int engine = e->name[0] && e->name_source == REGISTRY_NAME_ENGINE;
	char ns[REGISTRY_NAME_MAX + 1], in[REGISTRY_NAME_MAX + 32] = "";
	/* A claim names containerd's namespace when it ran there: tenants of
	 * one namespace can already stop each other's containers; across
	 * namespaces (Kubernetes' k8s.io, nerdctl's default, Docker's moby)
	 * the same claimed words are keyed apart. */
	if (profquota_containerd_ns(e, ns, sizeof(ns)))
		snprintf(in, sizeof(in), " in containerd/%s", ns);
	if (e->pod[0])
		snprintf(key, len, "claim pod %s/%s/%s%s%s%s", e->pod_namespace, e->pod,
			 e->container, engine ? " via " : "", engine ? e->engine : "", in);
	else if (engine)
		snprintf(key, len, "name %s/%s", e->engine, e->name);
	else if (e->name[0])
		snprintf(key, len, "claim name %s/%s%s", e->engine, e->name, in);
	else
		snprintf(key, len, "id %s", e->id);
}

static int profquota_cmp_time(const void *a, const void *b)
{
	const struct profquota_item *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	int c = strcmp(x->id, y->id);
	return c ? c : strcmp(x->base, y->base);
}

static int profquota_cmp_key(const void *a, const void *b)
{
	const struct profquota_item *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : profquota_cmp_time(a, b);
}

/* Within items[s, e) (oldest first), mark the oldest idle ones until the
 * limits hold with `extra` more profiles to come. 1 when they do, 0 when
 * the idle ones ran out first. */
static int profquota_trim(struct profquota_item *items, size_t s, size_t e, unsigned max_count,
			  unsigned long long max_bytes, unsigned extra, const char *why)
{
	unsigned long long cnt = 0, bytes = 0;
	for (size_t i = s; i < e; i++)
		if (!items[i].remove) {
			cnt++;
			bytes += items[i].bytes;
		}
	size_t i = s;
	/* With a profile to come, its bytes are unknown: there must be room
	 * left (bytes below the limit); in a sweep, the limit itself holds. */
	while (cnt + extra > max_count || (extra ? bytes >= max_bytes : bytes > max_bytes)) {
		while (i < e && (items[i].remove || items[i].busy))
			i++;
		if (i == e)
			return 0;
		items[i].remove = 1;
		items[i].why = why;
		cnt--;
		bytes -= items[i].bytes;
	}
	return 1;
}

int profquota_plan(struct profquota_item *items, size_t n, const char *key,
		   const struct profquota_limits *lim, int64_t now)
{
	int room = 1;
	unsigned extra = key ? 1 : 0;
	for (size_t i = 0; i < n; i++)
		if (lim->max_age_s > 0 && !items[i].busy && now - items[i].time > lim->max_age_s) {
			items[i].remove = 1;
			items[i].why = "age";
		}
	if (n)
		qsort(items, n, sizeof(*items), profquota_cmp_key);
	for (size_t s = 0; s < n;) {
		size_t e = s + 1;
		while (e < n && !strcmp(items[e].key, items[s].key))
			e++;
		if (!key || !strcmp(items[s].key, key))
			if (!profquota_trim(items, s, e, lim->per_key_count, lim->per_key_bytes,
					    extra, "container quota"))
				room = 0;
		s = e;
	}
	if (n)
		qsort(items, n, sizeof(*items), profquota_cmp_time);
	if (!profquota_trim(items, 0, n, lim->total_count, lim->total_bytes, extra, "total quota"))
		room = 0;
	return room;
}

/* .key of an id directory, or "id <id>" when there is none. */
static void profquota_read_key(int dfd, const char *id, char *key, size_t len)
{
	cleanup_close int fd = openat(dfd, PROFQUOTA_KEY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, key, len - 1) : -1;
	if (r > 0) {
		key[r] = '\0';
		key[strcspn(key, "\n")] = '\0';
		if (key[0])
			return;
	}
	snprintf(key, len, "id %s", id);
}

/* The base name of the SVG a live monitor writes for id, or "". */
static void profquota_busy_base(const struct fs_config *cfg, const char *id, char *base, size_t len)
{
	char dir[PATH_MAX], name[REGISTRY_ID_MAX + 8];
	struct marker m;
	base[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/" MARKER_DIR, cfg->run_dir);
	snprintf(name, sizeof(name), "%s.json", id);
	cleanup_close int mfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0 || marker_read_at(mfd, name, &m) < 0 || !marker_alive(&m))
		return;
	const char *slash = strrchr(m.output, '/');
	const char *b = slash ? slash + 1 : m.output;
	size_t l = strlen(b);
	if (l > 4 && !strcmp(b + l - 4, ".svg"))
		l -= 4;
	snprintf(base, len, "%.*s", (int)l, b);
}

static int profquota_push(struct profquota_item **items, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct profquota_item *na = realloc(*items, nc * sizeof(**items));
		if (!na)
			return -ENOMEM;
		*items = na;
		*cap = nc;
	}
	memset(&(*items)[*n], 0, sizeof(**items));
	(*n)++;
	return 0;
}

/* The profiles of one id directory, appended. */
static int profquota_scan_id(const struct fs_config *cfg, int pfd, const char *id,
			     struct profquota_item **items, size_t *n, size_t *cap)
{
	int dfd = openat(pfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	cleanup_closedir DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	char key[PROFQUOTA_KEY_MAX + 1], busy[PROFQUOTA_BASE_MAX];
	profquota_read_key(dirfd(d), id, key, sizeof(key));
	profquota_busy_base(cfg, id, busy, sizeof(busy));
	size_t first = *n;
	struct dirent *de;
	while ((de = readdir(d)) && *n < PROFQUOTA_SCAN_MAX) {
		size_t l = strlen(de->d_name), bl = 0;
		struct stat sb;
		if (de->d_name[0] == '.')
			continue;
		for (size_t k = 0; k < PROFQUOTA_NSUFFIX && !bl; k++) {
			size_t sl = strlen(profquota_suffixes[k]);
			if (l > sl && !strcmp(de->d_name + l - sl, profquota_suffixes[k]))
				bl = l - sl;
		}
		if (!bl || bl >= PROFQUOTA_BASE_MAX ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(sb.st_mode))
			continue;
		size_t i = first;
		while (i < *n && (strlen((*items)[i].base) != bl ||
				  strncmp((*items)[i].base, de->d_name, bl)))
			i++;
		if (i == *n) {
			if (profquota_push(items, n, cap) < 0)
				return -ENOMEM;
			struct profquota_item *it = &(*items)[i];
			snprintf(it->key, sizeof(it->key), "%s", key);
			snprintf(it->id, sizeof(it->id), "%s", id);
			snprintf(it->base, sizeof(it->base), "%.*s", (int)bl, de->d_name);
			it->busy = !strcmp(it->base, busy);
		}
		struct profquota_item *it = &(*items)[i];
		it->bytes += (unsigned long long)sb.st_size;
		if (sb.st_mtime > it->time)
			it->time = sb.st_mtime;
	}
	return 0;
}

int profquota_scan(const struct fs_config *cfg, struct profquota_item **items, size_t *n)
{
	size_t cap = 0;
	*items = NULL;
	*n = 0;
	cleanup_closedir DIR *d = opendir(cfg->profile_dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || registry_validate_id(de->d_name, NULL) < 0)
			continue;
		int r = profquota_scan_id(cfg, dirfd(d), de->d_name, items, n, &cap);
		if (r < 0)
			return r;
	}
	return 0;
}

/* An id directory with nothing left but its .key goes. */
static void profquota_rmdir_if_empty(int pfd, const char *id)
{
	int dfd = openat(pfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	int other = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, PROFQUOTA_KEY_FILE))
			other = 1;
	if (!other)
		unlinkat(dirfd(d), PROFQUOTA_KEY_FILE, 0);
	closedir(d);
	if (!other)
		unlinkat(pfd, id, AT_REMOVEDIR);
}

size_t profquota_apply(const struct fs_config *cfg, const struct profquota_item *items, size_t n)
{
	size_t removed = 0;
	cleanup_close int pfd =
	    open(cfg->profile_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!items[i].remove || items[i].busy)
			continue;
		cleanup_close int dfd =
		    openat(pfd, items[i].id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		for (size_t k = 0; k < PROFQUOTA_NSUFFIX; k++) {
			char name[PROFQUOTA_BASE_MAX + 16];
			snprintf(name, sizeof(name), "%s%s", items[i].base, profquota_suffixes[k]);
			unlinkat(dfd, name, 0);
		}
		removed++;
		profquota_rmdir_if_empty(pfd, items[i].id);
	}
	return removed;
}

int profquota_lock(const struct fs_config *cfg)
{
	char path[PATH_MAX + 16];
	int r = fileio_mkdir_p(cfg->profile_dir, 0755, 0755);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/.quota.lock", cfg->profile_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return -e;
		}
	}
	return fd;
}
