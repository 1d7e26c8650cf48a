/* debuginfo.c - see debuginfo.h */
#include "debuginfo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "budget.h"
#include "cleanup.h"
#include "localfs.h"
#include "dbgfetch.h"
#include "perfmap.h"
#include "timeutil.h"

struct debuginfo {
	char host_dir[PATH_MAX];
	char proc_root[256];
	char *urls;	       /* NULL: debuginfod off */
	char helper[PATH_MAX]; /* "" until looked up */
	int helper_missing;    /* looked up and not found */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	unsigned warned;
	uint64_t debuginfod_ms; /* spent on queries so far */
	unsigned exhausted;	/* queries refused past the budget */
	struct debuginfo_stats st;
	pid_t pid; /* whose root the container's files are looked up beneath */
};

/* What one debug file must be to be taken. */
struct debuginfo_want {
	const unsigned char *build_id; /* the mapped file's, or NULL */
	size_t build_id_len;
	int check_crc; /* no build-id: the debug link's CRC instead */
	uint32_t crc;
	const char *label;
};

int debuginfo_new(const struct debuginfo_opts *opts, struct debuginfo **out, struct fs_error *err)
{
	struct debuginfo_opts o = {0};
	if (opts)
		o = *opts;
	struct debuginfo *d = calloc(1, sizeof(*d));
	if (!d)
		return fs_error_set(err, ENOMEM, "allocating the debug info finder");
	snprintf(d->host_dir, sizeof(d->host_dir), "%s",
		 o.host_dir ? o.host_dir : DEBUGINFO_HOST_DIR);
	snprintf(d->proc_root, sizeof(d->proc_root), "%s", o.proc_root ? o.proc_root : "/proc");
	if (o.urls && o.urls[0] && !(d->urls = strdup(o.urls))) {
		free(d);
		return fs_error_set(err, ENOMEM, "allocating the debug info finder");
	}
	if (o.helper)
		snprintf(d->helper, sizeof(d->helper), "%s", o.helper);
	d->warn = o.warn;
	d->warn_ctx = o.warn_ctx;
	d->st.debuginfod = d->urls != NULL;
	*out = d;
	return 0;
}

void debuginfo_free(struct debuginfo *d)
{
	if (!d)
		return;
	free(d->urls);
	free(d);
}

void debuginfo_stats(const struct debuginfo *d, struct debuginfo_stats *st)
{
	*st = d->st;
	st->enabled = 1;
}

const char *debuginfo_source_name(enum debuginfo_source s)
{
	switch (s) {
	case DEBUGINFO_HOST_BUILD_ID: return "host build-id";
	case DEBUGINFO_CONTAINER_BUILD_ID: return "container build-id";
	case DEBUGINFO_HOST_LINK: return "host debuglink";
	case DEBUGINFO_CONTAINER_LINK: return "container debuglink";
	case DEBUGINFO_DEBUGDATA: return "MiniDebugInfo";
	case DEBUGINFO_DEBUGINFOD: return "debuginfod";
	default: return "none";
	}
}

static void debuginfo_note(struct debuginfo *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void debuginfo_note(struct debuginfo *d, const char *fmt, ...)
{
	if (!d->warn || d->warned > DEBUGINFO_WARN_FILES)
		return;
	char msg[FS_ERROR_MSG_MAX + 512];
	if (d->warned++ == DEBUGINFO_WARN_FILES) {
		snprintf(msg, sizeof(msg), "more debug files refused; not logged");
	} else {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	d->warn(d->warn_ctx, msg);
}

static void debuginfo_hex(const unsigned char *id, size_t len, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < len && 2 * i + 2 < cap; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* ---- merging ------------------------------------------------------------ */

int debuginfo_merge(const struct elfsyms *a, const struct elfsyms *b, struct elfsyms **out)
{
	size_t na = elfsyms_count(a), nb = elfsyms_count(b), pool_len = 0, pool_cap = 1 << 16;
	cleanup_free struct elfsyms_sym *syms = calloc(na + nb ? na + nb : 1, sizeof(*syms));
	cleanup_free char *pool = malloc(pool_cap);
	size_t n = 0, i = 0, j = 0;
	*out = NULL;
	if (!syms || !pool)
		return -ENOMEM;
	while (i < na || j < nb) {
		struct elfsyms_sym sa, sb, take;
		const char *name_a = NULL, *name_b = NULL, *name;
		if (i < na)
			elfsyms_symbol(a, i, &sa, &name_a);
		if (j < nb)
			elfsyms_symbol(b, j, &sb, &name_b);
		if (name_a && (!name_b || sa.addr < sb.addr)) {
			take = sa, name = name_a, i++;
		} else {
			/* at one address the mapped file's own (exported) name
			 * wins: `write`, not the debug file's `__GI___write` */
			if (name_a && sa.addr == sb.addr)
				i++;
			take = sb, name = name_b, j++;
		}
		size_t l = strnlen(name, ELFSYMS_MAX_NAME - 1);
		if (pool_len + l + 1 > pool_cap) {
			while (pool_len + l + 1 > pool_cap)
				pool_cap *= 2;
			char *p = realloc(pool, pool_cap);
			if (!p)
				return -ENOMEM;
			pool = p;
		}
		memcpy(pool + pool_len, name, l);
		pool[pool_len + l] = '\0';
		take.name = (uint32_t)pool_len;
		pool_len += l + 1;
		if (n && syms[n - 1].addr == take.addr)
			continue; /* cannot happen with sorted, unique inputs */
		syms[n++] = take;
	}
	size_t nloads, idlen;
	const struct elfsyms_load *loads = elfsyms_loads(b, &nloads);
	const unsigned char *id = elfsyms_build_id(b, &idlen);
	int r = elfsyms_adopt(syms, n, pool, pool_len, loads, nloads, id, idlen, out);
	if (r == 0)
		syms = NULL, pool = NULL; /* adopted */
	return r;
}

/* ---- one candidate file ------------------------------------------------- */

/* CRC-32 (zlib's, the one .gnu_debuglink holds) of the whole of fd. */
static int debuginfo_crc(int fd, uint32_t *crc)
{
	uLong c = crc32(0L, Z_NULL, 0);
	cleanup_free unsigned char *buf = malloc(1 << 20);
	off_t off = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = pread(fd, buf, 1 << 20, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
		if ((unsigned long long)off > BUDGET_DEBUG_FILE_BYTES)
			return -EFBIG;
	}
	*crc = (uint32_t)c;
	return 0;
}

/* Take the debug file open as fd (where: how it was found, for warnings)
 * when it is what w asks for: parse it in the sandbox, check it, merge it
 * into *es. 1 taken, 0 not (refusals warned). */
static int debuginfo_try(struct debuginfo *d, struct elfsource *src, int fd, const char *where,
			 const struct debuginfo_want *w, struct elfsyms **es)
{
	struct stat st;
	struct fs_error e = {0};
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		d->st.refused++;
		debuginfo_note(d, "debug file %s for %s refused: not a regular file", where,
			       w->label);
		return 0;
	}
	if ((unsigned long long)st.st_size > BUDGET_DEBUG_FILE_BYTES) {
		d->st.refused++;
		debuginfo_note(d, "debug file %s for %s refused: %lld bytes, over %llu MiB", where,
			       w->label, (long long)st.st_size, BUDGET_DEBUG_FILE_BYTES >> 20);
		return 0;
	}
	uint32_t crc = 0;
	if (w->check_crc) {
		if (debuginfo_crc(fd, &crc) < 0 || crc != w->crc) {
			d->st.refused++;
			debuginfo_note(d,
				       "debug file %s for %s refused: its CRC %08x is not the "
				       "debug link's %08x",
				       where, w->label, crc, w->crc);
			return 0;
		}
	}
	cleanup_elfsyms struct elfsyms *dbg = NULL;
	if (elfsource_load_quiet(src, fd, st.st_size, &dbg, &e) < 0) {
		d->st.refused++;
		debuginfo_note(d, "debug file %s for %s refused: %s", where, w->label, e.msg);
		return 0;
	}
	size_t idlen;
	const unsigned char *id = elfsyms_build_id(dbg, &idlen);
	if (w->build_id_len && (idlen != w->build_id_len || memcmp(id, w->build_id, idlen) != 0)) {
		char have[2 * ELFSYMS_BUILD_ID_MAX + 1], want[2 * ELFSYMS_BUILD_ID_MAX + 1];
		debuginfo_hex(id, idlen, have, sizeof(have));
		debuginfo_hex(w->build_id, w->build_id_len, want, sizeof(want));
		d->st.refused++;
		debuginfo_note(d, "debug file %s for %s refused: build-id %s is not the file's %s",
			       where, w->label, idlen ? have : "(none)", want);
		return 0;
	}
	if (elfsyms_count(dbg) == 0) /* nothing to add: look further */
		return 0;
	struct elfsyms *merged = NULL;
	if (debuginfo_merge(dbg, *es, &merged) < 0)
		return 0;
	elfsource_adopt(src, merged);
	elfsyms_free(*es);
	*es = merged;
	return 1;
}

/* ---- where to look ------------------------------------------------------ */

static int debuginfo_host(struct debuginfo *d, struct elfsource *src, const char *rel,
			  const struct debuginfo_want *w, struct elfsyms **es)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->host_dir, rel) >= sizeof(path))
		return 0;
	/* The host's own debug directory: trusted like /usr itself (its
	 * symlinks are the distribution's). */
	cleanup_close int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	return debuginfo_try(d, src, fd, path, w, es);
}

/* rel beneath the container's root (root_fd), through the checked open
 * that perf maps use: no symlink on the way, a regular file, one link. */
static int debuginfo_container(struct debuginfo *d, struct elfsource *src, int root_fd,
			       const char *rel, const struct debuginfo_want *w, struct elfsyms **es)
{
	struct fs_error e = {0};
	size_t size;
	if (root_fd < 0)
		return 0;
	/* No lookup through a mount the container could stall. */
	if (strcmp(d->proc_root, "/proc") == 0 && localfs_path_ok(d->pid, rel, rel, &e) < 0) {
		d->st.refused++;
		debuginfo_note(d, "container debug file for %s refused: %s", w->label, e.msg);
		return 0;
	}
	cleanup_close int fd = perfmap_open_checked(root_fd, rel, PERFMAP_ANY_OWNER,
						    BUDGET_DEBUG_FILE_BYTES, &size, -1, &e);
	if (fd < 0) {
		if (e.code != ENOENT && e.code != ENOTDIR) {
			d->st.refused++;
			debuginfo_note(d, "container debug file for %s refused: %s", w->label,
				       e.msg);
		}
		return 0;
	}
	char where[PATH_MAX + 16];
	snprintf(where, sizeof(where), "/%s (container)", rel);
	return debuginfo_try(d, src, fd, where, w, es);
}

/* The directory of path ("/usr/lib/x86_64-linux-gnu" of ".../libc.so.6")
 * without its leading '/', or -EINVAL for a path that is not absolute and
 * clean (a ".." or "." component, a "(deleted)" mapping). */
static int debuginfo_dir(const char *path, char *out, size_t cap)
{
	if (!path || path[0] != '/' || strstr(path, " (deleted)") || strstr(path, "/../") ||
	    strstr(path, "/./") || strstr(path, "//"))
		return -EINVAL;
	const char *slash = strrchr(path, '/');
	size_t n = (size_t)(slash - path);
	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(out, path + 1, n - 1);
	out[n - 1] = '\0';
	return 0;
}

static int debuginfo_links(struct debuginfo *d, struct elfsource *src, int root_fd,
			   const char *path, const struct elfdebug_links *l,
			   const struct debuginfo_want *w0, struct elfsyms **es)
{
	char dir[PATH_MAX], rel[PATH_MAX * 2];
	struct debuginfo_want w = *w0;
	if (!l->has_link || debuginfo_dir(path, dir, sizeof(dir)) < 0)
		return DEBUGINFO_NONE;
	if (!w.build_id_len) {
		w.check_crc = 1;
		w.crc = l->crc;
	}
	snprintf(rel, sizeof(rel), "%s/%s", dir, l->link);
	if (debuginfo_host(d, src, rel, &w, es))
		return DEBUGINFO_HOST_LINK;
	/* GDB's places: beside the file, in .debug/ beside it, and under
	 * /usr/lib/debug with the file's directory. */
	static const char *const pre[] = {"", "", "usr/lib/debug/"};
	static const char *const mid[] = {"/", "/.debug/", "/"};
	for (size_t i = 0; root_fd >= 0 && i < FS_ARRAY_SIZE(pre); i++) {
		snprintf(rel, sizeof(rel), "%s%s%s%s", pre[i], dir, mid[i], l->link);
		if (debuginfo_container(d, src, root_fd, rel, &w, es))
			return DEBUGINFO_CONTAINER_LINK;
	}
	return DEBUGINFO_NONE;
}

static int debuginfo_debuginfod(struct debuginfo *d, struct elfsource *src,
				const struct debuginfo_want *w, struct elfsyms **es)
{
	struct fs_error e = {0};
	if (!d->urls || !w->build_id_len || d->helper_missing)
		return DEBUGINFO_NONE;
	if (d->st.queries >= BUDGET_DEBUGINFOD_QUERIES ||
	    d->debuginfod_ms >= BUDGET_DEBUGINFOD_RUN_MS) {
		if (!d->exhausted++)
			debuginfo_note(d, "debuginfod: %u queries or %u ms spent; no more this run",
				       BUDGET_DEBUGINFOD_QUERIES, BUDGET_DEBUGINFOD_RUN_MS);
		return DEBUGINFO_NONE;
	}
	if (!d->helper[0] && dbgfetch_helper_path(d->helper, sizeof(d->helper)) < 0) {
		d->helper[0] = '\0';
		d->helper_missing = 1;
		debuginfo_note(d, "debuginfod: %s is not installed next to flamesidecar; not asked",
			       DBGFETCH_HELPER);
		return DEBUGINFO_NONE;
	}
	unsigned left = BUDGET_DEBUGINFOD_RUN_MS - (unsigned)d->debuginfod_ms;
	uint64_t t0 = timeutil_now_ms();
	d->st.queries++;
	cleanup_close int fd =
	    dbgfetch_find(d->helper, d->urls, w->build_id, w->build_id_len,
			  left < BUDGET_DEBUGINFOD_MS ? left : BUDGET_DEBUGINFOD_MS, &e);
	d->debuginfod_ms += timeutil_now_ms() - t0;
	if (fd < 0) {
		if (e.code != ENOENT)
			debuginfo_note(d, "debuginfod for %s: %s", w->label, e.msg);
		return DEBUGINFO_NONE;
	}
	d->st.fetched++;
	return debuginfo_try(d, src, fd, "from debuginfod", w, es) ? DEBUGINFO_DEBUGINFOD
								   : DEBUGINFO_NONE;
}

/* The process's root directory, or -1 when it is ours (nothing more to
 * find there than on the host) or gone. */
static int debuginfo_root(struct debuginfo *d, pid_t pid)
{
	char path[320];
	struct stat a, b;
	snprintf(path, sizeof(path), "%s/%d/root", d->proc_root, (int)pid);
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Not a root the container could stall (lib/localfs.h). */
	if (fd >= 0 &&
	    localfs_check_fd(fd, strcmp(d->proc_root, "/proc") == 0 ? pid : 0, path, NULL) < 0) {
		close(fd);
		return -1;
	}
	if (fd >= 0 && fstat(fd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		close(fd);
		return -1;
	}
	return fd;
}

int debuginfo_augment(void *ctx, pid_t pid, int fd, const char *path, const char *label,
		      struct elfsource *src, struct elfsyms **es)
{
	struct debuginfo *d = ctx;
	struct debuginfo_want w = {.label = label ? label : "[unknown]"};
	if (!d || !*es)
		return DEBUGINFO_NONE;
	w.build_id = elfsyms_build_id(*es, &w.build_id_len);
	d->pid = pid;
	cleanup_close int root = debuginfo_root(d, pid);
	int got = DEBUGINFO_NONE;
	if (w.build_id_len) {
		char hex[2 * ELFSYMS_BUILD_ID_MAX + 1], rel[2 * ELFSYMS_BUILD_ID_MAX + 64];
		debuginfo_hex(w.build_id, w.build_id_len, hex, sizeof(hex));
		snprintf(rel, sizeof(rel), ".build-id/%.2s/%s.debug", hex, hex + 2);
		if (w.build_id_len >= 2 && debuginfo_host(d, src, rel, &w, es))
			got = DEBUGINFO_HOST_BUILD_ID;
		snprintf(rel, sizeof(rel), "usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		if (!got && w.build_id_len >= 2 && debuginfo_container(d, src, root, rel, &w, es))
			got = DEBUGINFO_CONTAINER_BUILD_ID;
	}
	if (!got) {
		/* *es may have been replaced above only when got is set: the
		 * build-id pointer is still the table's. */
		struct elfdebug_links l;
		struct fs_error e = {0};
		if (elfsource_links(src, fd, &l, &e) == 0) {
			got = debuginfo_links(d, src, root, path, &l, &w, es);
			struct elfsyms *mini = NULL;
			if (!got && l.has_debugdata &&
			    elfsource_load_debugdata(src, fd, &mini, &e) == 0) {
				struct elfsyms *merged = NULL;
				if (elfsyms_count(mini) &&
				    debuginfo_merge(mini, *es, &merged) == 0) {
					elfsource_adopt(src, merged);
					elfsyms_free(*es);
					*es = merged;
					got = DEBUGINFO_DEBUGDATA;
				}
				elfsyms_free(mini);
			} else if (!got && l.has_debugdata) {
				d->st.refused++;
				debuginfo_note(d, "MiniDebugInfo of %s refused: %s", w.label,
					       e.msg);
			}
		}
	}
	if (!got)
		got = debuginfo_debuginfod(d, src, &w, es);
	if (got)
		d->st.files[got]++;
	return got;
}
