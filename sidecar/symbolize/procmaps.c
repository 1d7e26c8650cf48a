/* procmaps.c - see procmaps.h */
#include "procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

static size_t procmaps_total; /* procmaps_held() */

size_t procmaps_held(void)
{
	return procmaps_total;
}

void procmaps_release(struct procmaps *m)
{
	procmaps_total -= m->bytes < procmaps_total ? m->bytes : procmaps_total;
	free(m->v);
	free(m->labels);
	memset(m, 0, sizeof(*m));
}

/* len bytes of s, in brackets or not, into the label arena. Offset, or 0
 * on ENOMEM. */
static uint32_t procmaps_add_text(struct procmaps *m, size_t *cap, const char *s, size_t len,
				  int brackets)
{
	size_t need = len + 3;
	if (m->labels_len + need > *cap) {
		size_t nc = *cap ? *cap * 2 : 4096;
		while (nc < m->labels_len + need)
			nc *= 2;
		char *nl = realloc(m->labels, nc);
		if (!nl)
			return 0;
		m->labels = nl;
		*cap = nc;
	}
	uint32_t off = (uint32_t)m->labels_len;
	char *p = m->labels + off;
	if (brackets)
		*p++ = '[';
	memcpy(p, s, len);
	p += len;
	if (brackets)
		*p++ = ']';
	*p++ = '\0';
	m->labels_len = (size_t)(p - m->labels);
	return off;
}

/* The length of path without a trailing " (deleted)". */
static size_t procmaps_undeleted(const char *path, size_t len)
{
	static const char del[] = " (deleted)";
	if (len > sizeof(del) - 1 && !strcmp(path + len - (sizeof(del) - 1), del))
		len -= sizeof(del) - 1;
	return len;
}

/* "[base name]" of path (" (deleted)" dropped) into the label arena, or
 * the path itself for "[vdso]"-like names. Offset, or 0 on ENOMEM. */
static uint32_t procmaps_add_label(struct procmaps *m, size_t *cap, const char *path,
				   enum procmaps_type type)
{
	const char *base = path;
	size_t len = strlen(path);
	int brackets = type == PROCMAPS_FILE;
	if (brackets) {
		const char *slash = strrchr(path, '/');
		base = slash ? slash + 1 : path;
		len = procmaps_undeleted(base, strlen(base));
	}
	if (len > PROCMAPS_LABEL_MAX)
		len = PROCMAPS_LABEL_MAX;
	return procmaps_add_text(m, cap, base, len, brackets);
}

/* A file mapping's path as the process sees it (" (deleted)" dropped, at
 * most PROCMAPS_PATH_MAX bytes) into the label arena. Offset, or 0. */
static uint32_t procmaps_add_path(struct procmaps *m, size_t *cap, const char *path)
{
	size_t len = procmaps_undeleted(path, strlen(path));
	return procmaps_add_text(m, cap, path, len > PROCMAPS_PATH_MAX ? PROCMAPS_PATH_MAX : len,
				 0);
}

static enum procmaps_type procmaps_type_of(const char *path, unsigned long long ino)
{
	if (!*path)
		return PROCMAPS_ANON;
	if (!strcmp(path, "[vdso]"))
		return PROCMAPS_VDSO;
	if (path[0] == '[')
		return strncmp(path, "[anon", 5) ? PROCMAPS_SPECIAL : PROCMAPS_ANON;
	if (ino == 0 && path[0] != '/')
		return PROCMAPS_ANON; /* e.g. "//anon"; memfd names are files though */
	return PROCMAPS_FILE;
}

/* One line (NUL-terminated, no '\n') into m: 1 kept, 0 not executable,
 * -1 malformed, -ENOMEM. */
static int procmaps_line(struct procmaps *m, size_t *vcap, size_t *lcap, char *line)
{
	unsigned long long start, end, pgoff, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &ino, &pos) < 7 ||
	    pos == 0 || end <= start)
		return -1;
	if (!strchr(perms, 'x'))
		return 0;
	if (m->n && start < m->v[m->n - 1].end)
		return -1; /* the kernel prints them sorted, without overlaps */
	const char *path = line + pos;
	enum procmaps_type type = procmaps_type_of(path, ino);
	if (m->n == *vcap) {
		size_t nc = *vcap ? *vcap * 2 : 64;
		struct procmaps_map *nv = reallocarray(m->v, nc, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		m->v = nv;
		*vcap = nc;
	}
	uint32_t label = 0;
	if (type != PROCMAPS_ANON && !(label = procmaps_add_label(m, lcap, path, type)))
		return -ENOMEM;
	uint32_t fpath = 0;
	if (type == PROCMAPS_FILE && !(fpath = procmaps_add_path(m, lcap, path)))
		return -ENOMEM;
	m->v[m->n++] = (struct procmaps_map){
	    .start = start,
	    .end = end,
	    .pgoff = pgoff,
	    .type = (uint8_t)type,
	    .flags = (uint8_t)((ino ? PROCMAPS_F_INODE : 0) |
			       (path[0] == '/' ? PROCMAPS_F_ABSOLUTE : 0)),
	    .label = label,
	    .path = fpath,
	};
	return 1;
}

int procmaps_parse(const char *buf, size_t len, struct procmaps *out)
{
	memset(out, 0, sizeof(*out));
	size_t vcap = 0, lcap = 4096;
	if (!(out->labels = malloc(lcap)))
		return -ENOMEM;
	out->labels[0] = '\0';
	out->labels_len = 1;
	char line[PROCMAPS_LINE_MAX + 1];
	const char *p = buf, *end = buf + len;
	int r = 0;
	if (len > PROCMAPS_MAX_FILE) {
		end = buf + PROCMAPS_MAX_FILE;
		out->cut = 1;
	}
	while (p < end && r >= 0) {
		const char *ls = p, *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - ls);
		p = nl ? nl + 1 : end;
		out->lines++;
		if (n > PROCMAPS_LINE_MAX || memchr(ls, '\0', n)) {
			out->skipped++;
			continue;
		}
		memcpy(line, ls, n);
		line[n] = '\0';
		if (out->n >= PROCMAPS_MAX_ENTRIES) {
			out->cut = 1;
			break;
		}
		r = procmaps_line(out, &vcap, &lcap, line);
		if (r == -1) {
			out->skipped++;
			r = 0;
		}
	}
	/* count what is held, then give back the slack */
	if (r >= 0 && out->n && out->n < vcap) {
		struct procmaps_map *nv = reallocarray(out->v, out->n, sizeof(*nv));
		if (nv)
			out->v = nv;
	}
	out->bytes = sizeof(*out->v) * out->n + out->labels_len;
	if (r >= 0 && out->bytes > PROCMAPS_MAX_HELD - procmaps_total)
		r = -ENOSPC;
	procmaps_total += out->bytes;
	if (r < 0)
		procmaps_release(out);
	return r < 0 ? r : 0;
}

/* Read at most PROCMAPS_MAX_FILE bytes of fd; *cut when there was more. */
static int procmaps_slurp(int fd, char **out, size_t *len, int *cut)
{
	size_t cap = 64 * 1024, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= PROCMAPS_MAX_FILE) {
				char probe;
				*cut = read(fd, &probe, 1) > 0;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

int procmaps_read(const char *proc_root, pid_t pid, struct procmaps *out, struct fs_error *err)
{
	char path[320];
	const char *root = proc_root ? proc_root : "/proc";
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%d/maps", root, (int)pid);
	cleanup_close int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	struct stat st;
	struct statfs sfs;
	if (fstat(pfd, &st) < 0)
		return fs_error_set(err, errno, "stat %s", path);
	if (!S_ISREG(st.st_mode))
		return fs_error_set(err, EPERM, "refusing %s: not a regular file", path);
	/* the real /proc only (a test's fake root is a plain directory) */
	if (!proc_root && (fstatfs(pfd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC))
		return fs_error_set(err, EPERM, "refusing %s: not on procfs", path);
	cleanup_close int fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd_dir < 0)
		return fs_error_set(err, errno, "opening /proc/self/fd");
	cleanup_close int fd = fileio_reopen(pfd, fd_dir, err);
	if (fd < 0)
		return fd;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int cut = 0;
	int r = procmaps_slurp(fd, &buf, &len, &cut);
	if (r < 0)
		return fs_error_set(err, -r, "reading %s", path);
	r = procmaps_parse(buf, len, out);
	if (r == -ENOSPC)
		return fs_error_set(err, ENOSPC,
				    "%s: the maps of all processes would take more than %u MiB",
				    path, PROCMAPS_MAX_HELD >> 20);
	if (r < 0)
		return fs_error_set(err, -r, "parsing %s", path);
	out->cut |= cut;
	return 0;
}

struct procmaps_map *procmaps_find(const struct procmaps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

void procmaps_carry(struct procmaps *fresh, const struct procmaps *old)
{
	for (size_t i = 0, j = 0; i < fresh->n; i++) {
		struct procmaps_map *f = &fresh->v[i];
		while (j < old->n && old->v[j].start < f->start)
			j++;
		if (j < old->n && old->v[j].start == f->start && old->v[j].end == f->end &&
		    old->v[j].pgoff == f->pgoff && old->v[j].type == f->type)
			f->user = old->v[j].user;
	}
}

void procmaps_map_file(const char *proc_root, pid_t pid, const struct procmaps_map *m, char *buf,
		       size_t len)
{
	snprintf(buf, len, "%s/%d/map_files/%llx-%llx", proc_root ? proc_root : "/proc", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
}
