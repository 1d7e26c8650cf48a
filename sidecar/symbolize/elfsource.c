/* elfsource.c - see elfsource.h */
#include "elfsource.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cleanup.h"
#include "localfs.h"
#include "elfjail.h"
#include "fileio.h"

struct elfsource {
	struct elfsource_opts o;
	struct elfjail *jail;
	int self_fd_dir; /* our /proc/self/fd, for fileio_reopen; -1 until used */
	unsigned warned; /* refusals logged */
	unsigned kills;	 /* deadlines the child missed */
};

int elfsource_new(const struct elfsource_opts *opts, struct elfsource **out, struct fs_error *err)
{
	struct elfsource *s = calloc(1, sizeof(*s));
	if (!s)
		return fs_error_set(err, ENOMEM, "allocating the ELF source");
	if (opts)
		s->o = *opts;
	s->self_fd_dir = -1;
	int r = elfjail_open(NULL, &s->jail, err);
	if (r < 0) {
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

void elfsource_free(struct elfsource *s)
{
	if (!s)
		return;
	elfjail_close(s->jail);
	if (s->self_fd_dir >= 0)
		close(s->self_fd_dir);
	free(s);
}

/* Say what frames lost and why ("no symbols for [libx.so]: ..."), for the
 * first few. */
static void elfsource_note(struct elfsource *s, const char *what, const char *why)
{
	if (!s->o.warn || s->warned > ELFSOURCE_WARN_FILES)
		return;
	char msg[FS_ERROR_MSG_MAX + 256];
	if (s->warned++ == ELFSOURCE_WARN_FILES)
		snprintf(msg, sizeof(msg), "more ELF files refused; not logged");
	else
		snprintf(msg, sizeof(msg), "%s: %s", what, why);
	s->o.warn(s->o.warn_ctx, msg);
}

static void elfsource_refused(struct elfsource *s, const char *label, const char *why)
{
	char what[256];
	snprintf(what, sizeof(what), "no symbols for %s", label ? label : "[unknown]");
	elfsource_note(s, what, why);
}

/* elfsyms_demangle_fn of the tables from the sandbox: the name is
 * demangled there. One that takes too long stays mangled (and costs the
 * child, restarted on the next request). */
static int elfsource_demangle(void *ctx, const char *name, char *out, size_t len)
{
	struct elfsource *s = ctx;
	struct fs_error e = {0};
	if (s->kills >= ELFSOURCE_MAX_KILLS)
		return 0;
	int r = elfjail_demangle(s->jail, name, out, len, &e);
	if (r == 0)
		return 1;
	if (r != -ENOENT) {
		char what[96], head[41];
		size_t i = 0;
		if (r == -ETIMEDOUT)
			s->kills++;
		for (; name[i] && i < sizeof(head) - 1; i++) /* the container's bytes */
			head[i] = name[i] > 0x20 && name[i] < 0x7f ? name[i] : '?';
		head[i] = '\0';
		snprintf(what, sizeof(what), "C++ name left mangled (%s...)", head);
		elfsource_note(s, what, e.msg);
	}
	return 0;
}

int elfsource_open(struct elfsource *s, pid_t pid, const char *path, struct stat *st)
{
	cleanup_close int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	/* Nothing a container's FUSE daemon answers (docs/security.md). */
	struct fs_error e = {0};
	if (localfs_check_fd(pfd, pid, path, &e) < 0) {
		elfsource_note(s, "file skipped", e.msg);
		return -1;
	}
	if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode))
		return -1;
	if (s->self_fd_dir < 0)
		s->self_fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return s->self_fd_dir < 0 ? -1 : fileio_reopen(pfd, s->self_fd_dir, NULL);
}

int elfsource_load(struct elfsource *s, int fd, off_t size, const char *label, struct elfsyms **es)
{
	struct fs_error e = {0};
	*es = NULL;
	if ((unsigned long long)size > ELFSYMS_MAX_FILE) {
		fs_error_set(&e, EFBIG, "%lld bytes, over the %llu MiB limit", (long long)size,
			     ELFSYMS_MAX_FILE >> 20);
		elfsource_refused(s, label, e.msg);
		return -EFBIG;
	}
	if (s->kills >= ELFSOURCE_MAX_KILLS) {
		elfsource_refused(s, label, "the ELF sandbox missed its deadline too often");
		return -ETIMEDOUT;
	}
	/* Names come back mangled; those the samples hit are demangled there
	 * too, one by one (elfsource_demangle). */
	int r = elfjail_parse(s->jail, fd, 0, es, &e);
	if (r == -ETIMEDOUT)
		s->kills++;
	if (r < 0) {
		*es = NULL;
		if (e.code != ENOEXEC) /* not ELF (a JIT's file, a data mapping): no news */
			elfsource_refused(s, label, e.msg);
		return r;
	}
	elfsyms_set_demangler(*es, elfsource_demangle, s);
	return 0;
}

int elfsource_links(struct elfsource *s, int fd, struct elfdebug_links *out, struct fs_error *err)
{
	if (s->kills >= ELFSOURCE_MAX_KILLS)
		return fs_error_set(err, ETIMEDOUT,
				    "the ELF sandbox missed its deadline too often");
	int r = elfjail_links(s->jail, fd, out, err);
	if (r == -ETIMEDOUT)
		s->kills++;
	return r;
}

int elfsource_load_debugdata(struct elfsource *s, int fd, struct elfsyms **es, struct fs_error *err)
{
	*es = NULL;
	if (s->kills >= ELFSOURCE_MAX_KILLS)
		return fs_error_set(err, ETIMEDOUT,
				    "the ELF sandbox missed its deadline too often");
	int r = elfjail_parse(s->jail, fd, ELFJAIL_DEBUGDATA, es, err);
	if (r == -ETIMEDOUT)
		s->kills++;
	if (r < 0) {
		*es = NULL;
		return r;
	}
	elfsyms_set_demangler(*es, elfsource_demangle, s);
	return 0;
}

int elfsource_load_quiet(struct elfsource *s, int fd, off_t size, struct elfsyms **es,
			 struct fs_error *err)
{
	*es = NULL;
	if ((unsigned long long)size > ELFSYMS_MAX_FILE)
		return fs_error_set(err, EFBIG, "%lld bytes, over the %llu MiB limit",
				    (long long)size, ELFSYMS_MAX_FILE >> 20);
	if (s->kills >= ELFSOURCE_MAX_KILLS)
		return fs_error_set(err, ETIMEDOUT,
				    "the ELF sandbox missed its deadline too often");
	int r = elfjail_parse(s->jail, fd, 0, es, err);
	if (r == -ETIMEDOUT)
		s->kills++;
	if (r < 0) {
		*es = NULL;
		return r;
	}
	elfsyms_set_demangler(*es, elfsource_demangle, s);
	return 0;
}

void elfsource_adopt(struct elfsource *s, struct elfsyms *es)
{
	elfsyms_set_demangler(es, elfsource_demangle, s);
}
