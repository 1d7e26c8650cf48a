/* elfsource.h - the symbolizer's side of the ELF sandbox: open a mapped
 * file without trusting its path, have it parsed in the sandboxed child
 * (elfjail.h, never in this process), demangle its C++ names there on first
 * lookup, and say why a file got no symbols (the first few files).
 *
 * A child that misses its deadline SOURCE_MAX_KILLS times in one source
 * gets no more work: further files get no symbols and names stay mangled,
 * so a container full of crafted files cannot stretch a run for long.
 *
 * Not thread-safe: one per symbolizer. */
#ifndef FS_ELFSOURCE_H
#define FS_ELFSOURCE_H

#include <sys/stat.h>
#include <sys/types.h>

#include "elfdebug.h"
#include "elfsyms.h"
#include "error.h"
#include "cleanup.h"

#define ELFSOURCE_WARN_FILES 16 /* files whose refusal is logged, then one summary */
#define ELFSOURCE_MAX_KILLS  4	/* missed deadlines before the child gets no more work */

struct elfsource_opts {
	void (*warn)(void *ctx, const char *msg); /* NULL = not told */
	void *warn_ctx;
};

struct elfsource;

/* opts may be NULL. No child is started yet. 0 or -ENOMEM. */
int elfsource_new(const struct elfsource_opts *opts, struct elfsource **out, struct fs_error *err);
void elfsource_free(struct elfsource *s);
FS_DEFINE_CLEANUP(struct elfsource, elfsource_free)
#define cleanup_elfsource __attribute__((cleanup(elfsource_free_cleanup)))

/* Open path (a /proc/<pid>/map_files link) as O_PATH, refuse a file on a
 * file system the container could stall (lib/localfs.h; pid's mount table,
 * 0: ours only; warned), fstat it into *st, refuse anything but a regular
 * file, and reopen that very inode by fd. The fd, or -1. */
int elfsource_open(struct elfsource *s, pid_t pid, const char *path, struct stat *st);

/* The function symbols of fd (a file of size bytes, label "[libfoo.so]"
 * for warnings), parsed in the sandbox; C++ names are demangled there on
 * their first lookup. 0 with *es, or -errno (the reason warned, except for
 * files that are not ELF at all). */
int elfsource_load(struct elfsource *s, int fd, off_t size, const char *label, struct elfsyms **es);

/* For separate debug info (sidecar/debuginfo/): the debug links of fd
 * (elfjail_links), the symbols of its MiniDebugInfo (ELFJAIL_DEBUGDATA;
 * -ENOENT when it has none), both read in the sandbox, and a table built
 * from sandbox tables (a merge) made to demangle its C++ names there as
 * elfsource_load's do. 0 or -errno with the reason in err (not warned:
 * the caller says what a debug file it refused was). */
int elfsource_links(struct elfsource *s, int fd, struct elfdebug_links *out, struct fs_error *err);
int elfsource_load_debugdata(struct elfsource *s, int fd, struct elfsyms **es,
			     struct fs_error *err);
/* As elfsource_load, without warning: the reason is in err. */
int elfsource_load_quiet(struct elfsource *s, int fd, off_t size, struct elfsyms **es,
			 struct fs_error *err);
void elfsource_adopt(struct elfsource *s, struct elfsyms *es);

#endif
