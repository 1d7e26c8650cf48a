/* perfmap.c - see perfmap.h */
#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "localfs.h"
#include "rootfs.h"
#include "textsafe.h"

struct perfmap_raw {
	uint64_t start, size;
	size_t name; /* offset in the arena */
	size_t seq;  /* line order: larger is newer */
};

/* The value of hex digit c, or -1 when c is not one. */
static int perfmap_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse a hex number at *p (optional 0x, 1..16 digits) up to end: 0, *v
 * set and *p past it; or -1 (nothing moved) for no digits or too many. */
static int perfmap_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t x = 0;
	int digits = 0;
	for (; s < end; s++) {
		int d = perfmap_hexval(*s);
		if (d < 0)
			break;
		if (++digits > 16)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (!digits)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static const char *perfmap_skip_blanks(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* One line of len bytes without its '\n'. 0 and fills r, or -1 to skip it. */
static int perfmap_parse_line(const char *s, size_t len, struct perfmap_raw *r, const char **name,
			      size_t *name_len)
{
	if (len && s[len - 1] == '\r')
		len--;
	if (memchr(s, '\0', len))
		return -1;
	const char *end = s + len;
	s = perfmap_skip_blanks(s, end);
	if (perfmap_hex(&s, end, &r->start) < 0)
		return -1;
	const char *t = perfmap_skip_blanks(s, end);
	if (t == s)
		return -1;
	s = t;
	if (perfmap_hex(&s, end, &r->size) < 0)
		return -1;
	t = perfmap_skip_blanks(s, end);
	if (t == s || t == end)
		return -1;
	if (r->size == 0 || r->start > UINT64_MAX - r->size)
		return -1;
	*name = t;
	*name_len = (size_t)(end - t);
	return 0;
}

static int perfmap_raw_cmp(const void *a, const void *b)
{
	const struct perfmap_raw *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void perfmap_free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->entries);
	free(m->names);
	free(m);
}

int perfmap_parse(const char *buf, size_t len, int partial_tail, struct perfmap **out,
		  struct fs_error *err)
{
	*out = NULL;
	if (len > PERFMAP_MAX_INPUT)
		return fs_error_set(err, E2BIG, "perf map of %zu bytes exceeds the %lu MiB limit",
				    len, PERFMAP_MAX_INPUT >> 20);
	cleanup_free struct perfmap *m = calloc(1, sizeof(*m));
	/* Each name plus its NUL is shorter than its line: len + 1 is enough. */
	cleanup_free char *names = malloc(len + 1);
	cleanup_free struct perfmap_raw *raw = NULL;
	size_t raw_cap = 0, n = 0, used = 0;
	if (!m || !names)
		return fs_error_set(err, ENOMEM, "parsing perf map");

	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl && partial_tail)
			break;
		const char *eol = nl ? nl : end;
		m->lines++;
		struct perfmap_raw r;
		const char *name;
		size_t name_len;
		if ((size_t)(eol - p) > PERFMAP_MAX_LINE || n >= PERFMAP_MAX_ENTRIES ||
		    perfmap_parse_line(p, (size_t)(eol - p), &r, &name, &name_len) < 0) {
			m->skipped++;
			p = nl ? nl + 1 : end;
			continue;
		}
		if (n == raw_cap) {
			size_t ncap = raw_cap ? raw_cap * 2 : 1024;
			struct perfmap_raw *nr = reallocarray(raw, ncap, sizeof(*raw));
			if (!nr)
				return fs_error_set(err, ENOMEM, "parsing perf map");
			raw = nr;
			raw_cap = ncap;
		}
		r.name = used;
		r.seq = n;
		memcpy(names + used, name, name_len);
		used += name_len;
		names[used++] = '\0';
		raw[n++] = r;
		p = nl ? nl + 1 : end;
	}

	if (n)
		qsort(raw, n, sizeof(*raw), perfmap_raw_cmp);
	/* Sweep by start: an overlap keeps the newer of the two entries. The
	 * kept entries stay sorted and disjoint. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && raw[i].start < raw[k - 1].start + raw[k - 1].size) {
			if (raw[i].seq > raw[k - 1].seq)
				raw[k - 1] = raw[i];
			m->replaced++;
			continue;
		}
		raw[k++] = raw[i];
	}

	char *shrunk = realloc(names, used ? used : 1);
	if (shrunk)
		names = shrunk;
	m->entries = calloc(k ? k : 1, sizeof(*m->entries));
	if (!m->entries)
		return fs_error_set(err, ENOMEM, "parsing perf map");
	for (size_t i = 0; i < k; i++) {
		m->entries[i].start = raw[i].start;
		m->entries[i].size = raw[i].size;
		m->entries[i].name = names + raw[i].name;
	}
	m->count = k;
	m->memory = used + k * sizeof(*m->entries) + sizeof(*m);
	m->names = steal_pointer(&names);
	*out = steal_pointer(&m);
	return 0;
}

const struct perfmap_entry *perfmap_lookup(const struct perfmap *m, uint64_t addr)
{
	if (!m || !m->count || addr < m->entries[0].start)
		return NULL;
	size_t lo = 0, hi = m->count; /* answer in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->entries[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct perfmap_entry *e = &m->entries[lo];
	return addr - e->start < e->size ? e : NULL;
}

/* Names came from the container and end up on an operator's terminal
 * (perf report): every control byte, and what else a terminal acts on, is
 * written escaped (textsafe.h), never raw. */
int perfmap_write_fd(const struct perfmap *m, int fd, struct fs_error *err)
{
	enum { CHUNK = 256 * 1024, SAFE = 4 * PERFMAP_MAX_LINE + 1 };
	cleanup_free char *buf = malloc(CHUNK);
	cleanup_free char *safe = malloc(SAFE);
	size_t used = 0;
	if (!buf || !safe)
		return fs_error_set(err, ENOMEM, "writing perf map");
	for (size_t i = 0; i < m->count; i++) {
		const struct perfmap_entry *e = &m->entries[i];
		const char *name = textsafe(e->name, safe, SAFE, 0);
		size_t need = strlen(name) + 2 * 16 + 4;
		if (used + need > CHUNK) {
			int r = fileio_write_all(fd, buf, used);
			if (r < 0)
				return fs_error_set(err, r, "writing perf map");
			used = 0;
		}
		int w = snprintf(buf + used, CHUNK - used, "%" PRIx64 " %" PRIx64 " %s\n", e->start,
				 e->size, name);
		if (w < 0 || (size_t)w >= CHUNK - used)
			return fs_error_set(err, EOVERFLOW, "formatting perf map entry %zu", i);
		used += (size_t)w;
	}
	int r = fileio_write_all(fd, buf, used);
	return r < 0 ? fs_error_set(err, r, "writing perf map") : 0;
}

static int perfmap_fill(int fd, void *arg, struct fs_error *err)
{
	return perfmap_write_fd(arg, fd, err);
}

int perfmap_write_host(const char *tmp_dir, pid_t pid, const struct perfmap *m,
		       struct fs_error *err)
{
	char name[64];
	struct stat st;
	if (!tmp_dir)
		tmp_dir = "/tmp";
	cleanup_close int dfd = open(tmp_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return fs_error_set(err, errno, "opening %s", tmp_dir);
	snprintf(name, sizeof(name), "perf-%d.map", (int)pid);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			return fs_error_set(err, EEXIST,
					    "refusing to replace %s/%s: it is not a regular file "
					    "owned by uid %u (remove it if it is stale)",
					    tmp_dir, name, (unsigned)geteuid());
	} else if (errno != ENOENT) {
		return fs_error_set(err, errno, "checking %s/%s", tmp_dir, name);
	}
	return fileio_replace(dfd, tmp_dir, name, 0644, perfmap_fill, (void *)m, err);
}

static const char *perfmap_type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "FIFO";
	case S_IFSOCK: return "socket";
	case S_IFDIR: return "directory";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFLNK: return "symbolic link";
	default: return "special file";
	}
}

/* The checks both functions below apply to what fd refers to. */
static int perfmap_check_stat_links(int fd, const char *path, uid_t owner, size_t max_size,
				    size_t *size, nlink_t min_links, struct fs_error *err);

static int perfmap_check_stat(int fd, const char *path, uid_t owner, size_t max_size, size_t *size,
			      struct fs_error *err)
{
	return perfmap_check_stat_links(fd, path, owner, max_size, size, 1, err);
}

/* min_links 0: a file removed since it was opened (no name: no alias of
 * another path either) passes too. */
static int perfmap_check_stat_links(int fd, const char *path, uid_t owner, size_t max_size,
				    size_t *size, nlink_t min_links, struct fs_error *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fs_error_set(err, errno, "stat /%s", path);
	if (S_ISLNK(st.st_mode))
		return fs_error_set(err, ELOOP, "refusing /%s: it is a symbolic link", path);
	if (!S_ISREG(st.st_mode))
		return fs_error_set(err, EPERM, "refusing /%s: it is a %s, not a regular file",
				    path, perfmap_type_name(st.st_mode));
	if (owner != PERFMAP_ANY_OWNER && st.st_uid != owner)
		return fs_error_set(err, EPERM, "refusing /%s: owned by uid %u, not by uid %u",
				    path, (unsigned)st.st_uid, (unsigned)owner);
	if (st.st_nlink > 1 || st.st_nlink < min_links)
		return fs_error_set(err, EPERM, "refusing /%s: it has %lu hard links, expected 1",
				    path, (unsigned long)st.st_nlink);
	if (st.st_size < 0 || (uint64_t)st.st_size > max_size)
		return fs_error_set(err, EFBIG,
				    "refusing /%s: %lld bytes is over the %zu-byte limit", path,
				    (long long)st.st_size, max_size);
	if (size)
		*size = (size_t)st.st_size;
	return 0;
}

static int perfmap_openat2(int root_fd, const char *path, uint64_t flags, struct fs_error *err)
{
	int fd = rootfs_open(root_fd, path, flags, 0);
	if (fd >= 0)
		return fd;
	int e = -fd;
	if (e == ELOOP)
		return fs_error_set(
		    err, e, "refusing /%s: it or a directory on its path is a symbolic link", path);
	if (e == ENOENT)
		return fs_error_set(err, e, "/%s does not exist", path);
	return fs_error_set(err, e, "opening /%s", path);
}

int perfmap_open_checked(int root_fd, const char *path, uid_t owner, size_t max_size, size_t *size,
			 int fd_dir, struct fs_error *err)
{
	/* O_PATH first: a device or FIFO swapped in is never opened. */
	cleanup_close int pfd = perfmap_openat2(root_fd, path, O_PATH, err);
	if (pfd < 0)
		return pfd;
	int r = perfmap_check_stat(pfd, path, owner, max_size, size, err);
	if (r < 0)
		return r;
	cleanup_close int own_dir = -1;
	if (fd_dir == PERFMAP_NO_PROC) {
		r = fileio_reopen_beneath(pfd, root_fd, path, err);
		return r < 0 ? fs_error_wrap(err, "/%s", path) : r;
	}
	if (fd_dir < 0) {
		own_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (own_dir < 0)
			return fs_error_set(err, errno, "opening /proc/self/fd");
		fd_dir = own_dir;
	}
	r = fileio_reopen(pfd, fd_dir, err);
	if (r < 0)
		return fs_error_wrap(err, "/%s", path);
	return r;
}

int perfmap_recheck_fd(int fd, uid_t owner, size_t max_size, size_t *size, const char *what,
		       struct fs_error *err)
{
	/* perfmap_check_stat's messages say "/<path>"; an open fd may
	 * outlive the file's name (the agent removes its log at its stop, a
	 * process may rename another file over it): 0 links pass */
	return perfmap_check_stat_links(fd, what[0] == '/' ? what + 1 : what, owner, max_size, size,
					0, err);
}

int perfmap_check_fd(int fd, pid_t pid, uid_t owner, size_t max_size, size_t *size,
		     const char *what, struct fs_error *err)
{
	int r = localfs_check_fd_sb(fd, pid, what, err);
	if (r < 0)
		return r;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return fs_error_set(err, errno, "%s: F_GETFL", what);
	if ((fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY)
		return fs_error_set(err, EBADF, "refusing %s: not open for reading", what);
	return perfmap_recheck_fd(fd, owner, max_size, size, what, err);
}

int perfmap_precheck(int root_fd, const char *path, uid_t owner, size_t max_size,
		     struct fs_error *err)
{
	/* O_PATH opens nothing: a FIFO or device is not touched. */
	cleanup_close int fd = perfmap_openat2(root_fd, path, O_PATH, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	return perfmap_check_stat(fd, path, owner, max_size, NULL, err);
}
