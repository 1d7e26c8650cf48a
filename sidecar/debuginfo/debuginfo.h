/* debuginfo.h - names for native frames from separate debug info.
 *
 * A distribution strips its libraries and ships their symbols apart
 * (Debian's -dbg and -dbgsym packages, Fedora's debuginfo, a debuginfod
 * server). For each mapped ELF file the symbolizer parsed (its own .symtab
 * and .dynsym, symbols.h), debuginfo_augment looks for more, in this order,
 * and stops at the first that gives symbols:
 *
 *   1. host       <host_dir>/.build-id/xx/rest.debug       (GNU build-id)
 *   2. container  /usr/lib/debug/.build-id/xx/rest.debug   beneath its root
 *   3. host       <host_dir>/<dir of the file>/<debuglink>  (.gnu_debuglink)
 *   4. container  <dir>/<link>, <dir>/.debug/<link>, /usr/lib/debug/<dir>/<link>
 *   5. the file's own .gnu_debugdata (MiniDebugInfo, xz-compressed ELF)
 *   6. debuginfod, only when the operator named servers (config key
 *      "debuginfod_urls" or DEBUGINFOD_URLS): elfutils' libdebuginfod, with
 *      its cache, in a helper process (debuginfod.h). Never otherwise.
 *
 * Trust: a debug file is container input (planted in its /usr/lib/debug,
 * or a debuginfod reply), like the mapped file itself. Container paths are
 * opened beneath its root (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS,
 * perfmap_open_checked: a symlink, FIFO, device, hard link or huge file is
 * refused), every debug file is parsed in the sandboxed ELF child
 * (elfsource.h), is at most BUDGET_DEBUG_FILE_BYTES, and is taken only
 * when its GNU build-id equals the mapped file's (or, for a file without
 * one, the debug link's CRC-32 matches). A refused file is warned (the
 * first few) and the search goes on; the frame keeps the file's own names.
 *
 * The debug file's symbols have the link-time addresses of the mapped file
 * (same build): they are merged with the file's own (the debug file's name
 * wins at one address) and placed through the mapped file's program headers,
 * so the load bias of the mapping applies as for the file's own symbols.
 *
 * Results are cached by build-id through the symbolizer's table sharing (a
 * file whose build-id was seen gets the same merged table, found or not).
 *
 * Not thread-safe: one per symbolizer. */
#ifndef FS_DEBUGINFO_H
#define FS_DEBUGINFO_H

#include <stdint.h>
#include <sys/types.h>

#include "elfsource.h"
#include "elfsyms.h"
#include "error.h"
#include "cleanup.h"

#define DEBUGINFO_HOST_DIR   "/usr/lib/debug"
#define DEBUGINFO_WARN_FILES 16 /* refusals warned, then one line that there are more */

enum debuginfo_source {
	DEBUGINFO_NONE = 0,
	DEBUGINFO_HOST_BUILD_ID,
	DEBUGINFO_CONTAINER_BUILD_ID,
	DEBUGINFO_HOST_LINK,
	DEBUGINFO_CONTAINER_LINK,
	DEBUGINFO_DEBUGDATA,
	DEBUGINFO_DEBUGINFOD,
	DEBUGINFO_SOURCE_COUNT,
};

struct debuginfo_opts {
	const char *host_dir;  /* NULL = DEBUGINFO_HOST_DIR */
	const char *proc_root; /* NULL = "/proc" (the container root: <proc_root>/<pid>/root) */
	/* debuginfod servers (space-separated URLs, as DEBUGINFOD_URLS); NULL
	 * or "" = none: nothing is ever downloaded. */
	const char *urls;
	const char *helper; /* the helper program; NULL = debuginfod_helper_path() */
	void (*warn)(void *ctx, const char *msg); /* NULL = not told */
	void *warn_ctx;
};

struct debuginfo_stats {
	uint64_t files[DEBUGINFO_SOURCE_COUNT]; /* files named from each source */
	uint64_t refused;			/* debug files found but not taken */
	uint64_t queries, fetched;		/* debuginfod: asked, answered with a file */
	int debuginfod;				/* servers configured */
	int enabled;				/* 0: no debuginfo (off by config) */
};

struct debuginfo;

/* opts may be NULL. 0 or -ENOMEM. */
int debuginfo_new(const struct debuginfo_opts *opts, struct debuginfo **out, struct fs_error *err);
void debuginfo_free(struct debuginfo *d);
FS_DEFINE_CLEANUP(struct debuginfo, debuginfo_free)
#define cleanup_debuginfo __attribute__((cleanup(debuginfo_free_cleanup)))

/* The symbolizer's hook (symbolizer_debug_fn): the file open as fd, mapped
 * by pid at path (its path in the process's mount namespace, NULL when
 * unknown), label "[libc.so.6]" for warnings, whose own table is *es (from
 * src; may be NULL). When separate debug info is found, *es is replaced by
 * the merged table (the old one freed). Returns the enum debuginfo_source
 * that gave names, or DEBUGINFO_NONE (*es untouched). */
int debuginfo_augment(void *d, pid_t pid, int fd, const char *path, const char *label,
		      struct elfsource *src, struct elfsyms **es);

void debuginfo_stats(const struct debuginfo *d, struct debuginfo_stats *st);

/* "host build-id", "container build-id", "host debuglink", ... */
const char *debuginfo_source_name(enum debuginfo_source s);

/* A table with the symbols of a (the debug file) and b (the mapped file),
 * b's name preferred at equal addresses (the exported name users know, as
 * `write` over `__GI___write`), and b's program headers and build-id: the
 * debug file's names placed like the mapped file's. Neither is kept. 0 or
 * -ENOMEM. */
int debuginfo_merge(const struct elfsyms *a, const struct elfsyms *b, struct elfsyms **out);

#endif
