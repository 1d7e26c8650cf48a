/* procmaps.h - a process's executable mappings from /proc/<pid>/maps, for
 * the symbolizer (symbols.c) and the CFI unwinder (unwind/cfi.c): one
 * reader, one parser, one memory budget.
 *
 * Reading: /proc/<pid>/maps is opened O_PATH|O_NOFOLLOW (which opens
 * nothing), checked (a regular file, on procfs when the root is /proc),
 * then reopened through our own /proc/self/fd; at most
 * PROCMAPS_MAX_FILE bytes are read (a longer file is cut: `cut` is set).
 *
 * Parsing: the text is what the kernel prints, but the path field of a
 * mapping is chosen by the process (file names, memfd and prctl
 * PR_SET_VMA names), so every line is bounded (PROCMAPS_LINE_MAX) and
 * checked; malformed lines are skipped and counted. Only executable
 * mappings are kept, sorted by start address (the kernel's order; an
 * unsorted line is skipped), at most PROCMAPS_MAX_ENTRIES of them.
 *
 * Budget: every struct procmaps counts its bytes into one total for the
 * whole process (procmaps_held), shared by every user; procmaps_read
 * refuses with -ENOSPC when a new table would take the total past
 * PROCMAPS_MAX_HELD (lib/budget.h), and the caller drops what it caches.
 * Not thread-safe (like its users).
 */
#ifndef FS_PROCMAPS_H
#define FS_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "budget.h"
#include "error.h"
#include "cleanup.h"

#define PROCMAPS_MAX_FILE    BUDGET_MAPS_FILE_BYTES
#define PROCMAPS_MAX_ENTRIES BUDGET_MAPS_PER_PID
#define PROCMAPS_MAX_HELD    BUDGET_MAPS_BYTES
#define PROCMAPS_LINE_MAX    4352 /* a PATH_MAX path and the fields before it */
#define PROCMAPS_LABEL_MAX   200  /* bytes of a file's base name kept in its label */
#define PROCMAPS_PATH_MAX    1024 /* bytes of a file mapping's path kept (its module) */

enum procmaps_type {
	PROCMAPS_FILE,	  /* a file (path, or an inode) */
	PROCMAPS_ANON,	  /* anonymous memory: JIT code */
	PROCMAPS_VDSO,	  /* [vdso] */
	PROCMAPS_SPECIAL, /* [vsyscall] and other [names] */
};

#define PROCMAPS_F_INODE    0x1 /* inode != 0 */
#define PROCMAPS_F_ABSOLUTE 0x2 /* the path starts with '/' */

struct procmaps_map {
	uint64_t start, end, pgoff; /* start < end */
	uint8_t type;		    /* enum procmaps_type */
	uint8_t flags;		    /* PROCMAPS_F_* */
	uint32_t label;		    /* offset in labels: "[libc.so.6]", "[vdso]"; 0 = none ("") */
	uint32_t path;		    /* PROCMAPS_FILE: offset in labels of its path; 0 = none */
	uintptr_t user;		    /* the caller's (0 when parsed; kept by procmaps_carry) */
};

struct procmaps {
	struct procmaps_map *v; /* sorted by start, not overlapping */
	size_t n;
	char *labels; /* labels[0] == '\0' */
	size_t labels_len;
	size_t bytes;	       /* counted into procmaps_held() */
	size_t lines, skipped; /* lines seen, malformed or unsorted */
	int cut;	       /* the file or the entry count hit its cap */
};

/* Parse maps text (need not be NUL-terminated) into out (zeroed first).
 * 0 or -ENOMEM; -ENOSPC (nothing kept) past the process-wide budget. */
int procmaps_parse(const char *buf, size_t len, struct procmaps *out);

/* Read and parse <proc_root>/<pid>/maps (proc_root NULL = "/proc") as
 * described above. 0, -ESRCH (gone), -ENOSPC (budget) or -errno. */
int procmaps_read(const char *proc_root, pid_t pid, struct procmaps *out, struct fs_error *err);

/* Free what out holds (and uncount it); out is zeroed. */
void procmaps_release(struct procmaps *m);
FS_DEFINE_CLEANUP_VALUE(struct procmaps, procmaps_release)
#define cleanup_procmaps __attribute__((cleanup(procmaps_release_cleanup)))

/* The mapping containing addr, or NULL. */
struct procmaps_map *procmaps_find(const struct procmaps *m, uint64_t addr);

/* "<proc_root>/<pid>/map_files/<start>-<end>": the very file mapped at m,
 * never a path inside the process's root. proc_root NULL = "/proc". */
void procmaps_map_file(const char *proc_root, pid_t pid, const struct procmaps_map *m, char *buf,
		       size_t len);

/* A mapped file's identity, for caches shared by every process: the same
 * device, inode, size and mtime is the same file. */
struct procmaps_file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

static inline void procmaps_file_id_set(struct procmaps_file_id *id, const struct stat *st)
{
	*id = (struct procmaps_file_id){st->st_dev, st->st_ino, st->st_size, st->st_mtim};
}

static inline int procmaps_file_id_same(const struct procmaps_file_id *id, const struct stat *st)
{
	return id->dev == st->st_dev && id->ino == st->st_ino && id->size == st->st_size &&
	       id->mtime.tv_sec == st->st_mtim.tv_sec && id->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The label of a mapping ("" for none). */
static inline const char *procmaps_label(const struct procmaps *m, const struct procmaps_map *e)
{
	return m->labels + e->label;
}

/* Copy `user` of every mapping of old that is unchanged in fresh (same
 * start, end, offset and type): what a caller resolved for it stays. */
void procmaps_carry(struct procmaps *fresh, const struct procmaps *old);

/* Bytes held by every struct procmaps of this process. */
size_t procmaps_held(void);

#endif
