/* perfmap.h - perf map files (/tmp/perf-<pid>.map): "START SIZE name" per
 * line, START and SIZE in hex. Parsing is bounded (input size, line length,
 * entry count) because the text comes from inside a container.
 *
 * Overlaps: JIT code is freed and its address reused, so a later line
 * describes what is at an address now. A newer entry replaces every older
 * entry it overlaps; the parsed map is sorted by start address and has no
 * overlaps, so a lookup is one binary search.
 */
#ifndef FS_PERFMAP_H
#define FS_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "error.h"
#include "cleanup.h"

/* What one JVM's map may cost; what all JVMs' maps together may cost is
 * BUDGET_JIT_BYTES (lib/budget.h), enforced where maps are kept (profile). */
#define PERFMAP_MAX_INPUT	   (256UL << 20)	 /* bytes of map text parsed at most */
#define PERFMAP_MAX_CONTAINER_FILE BUDGET_JIT_FILE_BYTES /* a container's map we read */
#define PERFMAP_MAX_LINE	   4096			 /* longer lines are skipped */
#define PERFMAP_MAX_ENTRIES	   BUDGET_JIT_ENTRIES

struct perfmap_entry {
	uint64_t start;
	uint64_t size;	  /* > 0; start + size does not overflow */
	const char *name; /* NUL-terminated, points into the map's name arena */
};

struct perfmap {
	struct perfmap_entry *entries; /* sorted by start, non-overlapping */
	size_t count;
	char *names;	 /* arena holding every name */
	size_t lines;	 /* lines seen */
	size_t skipped;	 /* malformed, too long, empty, or over the entry cap */
	size_t replaced; /* dropped because a newer entry overlapped them */
	size_t memory;	 /* bytes held (entries and names), for budgets */
};

/* Parse len bytes of map text (need not be NUL-terminated). A final line
 * without '\n' is parsed too unless partial_tail is set (a file that is still
 * being appended to). -E2BIG when len > PERFMAP_MAX_INPUT; malformed lines
 * are counted in skipped, not errors. *out is freed with perfmap_free(). */
int perfmap_parse(const char *buf, size_t len, int partial_tail, struct perfmap **out,
		  struct fs_error *err);

void perfmap_free(struct perfmap *m);
FS_DEFINE_CLEANUP(struct perfmap, perfmap_free)
#define cleanup_perfmap __attribute__((cleanup(perfmap_free_cleanup)))

/* The entry containing addr, or NULL. */
const struct perfmap_entry *perfmap_lookup(const struct perfmap *m, uint64_t addr);

/* Write the map as text to fd, each name escaped with textsafe (no
 * control byte of a container reaches a host file or a terminal raw).
 * 0 or -errno. */
int perfmap_write_fd(const struct perfmap *m, int fd, struct fs_error *err);

/* Write /tmp/perf-<pid>.map on this host: a new file created with
 * O_CREAT|O_EXCL|O_NOFOLLOW in tmp_dir (NULL = "/tmp") then renamed into
 * place. An existing map is replaced only if it is ours (a regular file owned
 * by our euid); otherwise -EEXIST with a message. */
int perfmap_write_host(const char *tmp_dir, pid_t pid, const struct perfmap *m,
		       struct fs_error *err);

/* Open <tmp_dir_fd>/perf-<pid>.map the way a container's map must be opened:
 * openat2(RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_SYMLINKS) relative
 * to root_fd as O_PATH (nothing is opened), then fstat: a regular file owned
 * by owner, one link, at most max_size bytes; only then reopened for reading
 * by fd (fileio_reopen through fd_dir, the caller's /proc/self/fd in a
 * procfs it trusts; -1 opens the current /proc/self/fd; PERFMAP_NO_PROC in
 * a jail, whose mounts are nodev: fileio_reopen_beneath). path is relative to
 * root_fd (e.g. "tmp/perf-42.map"). Returns the fd and *size, or -errno with
 * a message that says why the file was refused. */
/* owner PERFMAP_ANY_OWNER: any owner (a file whose content the caller
 * verifies otherwise, e.g. a debug file by its build-id). */
#define PERFMAP_ANY_OWNER ((uid_t)-1)
#define PERFMAP_NO_PROC	  (-2)
int perfmap_open_checked(int root_fd, const char *path, uid_t owner, size_t max_size, size_t *size,
			 int fd_dir, struct fs_error *err);

/* The same rules for an fd that was opened elsewhere (a sandboxed child
 * hands its open JIT log over, sandbox.h): what refers to it is the
 * child's choice, so container input. In this order, so that nothing a
 * daemon answers is touched before the file system is known: on a local
 * file system (localfs_check_fd_sb, by its device: the child's mounts are
 * a private copy; no FUSE, no network; pid's mount table first), open for reading (not O_PATH, not
 * write-only), then fstat as perfmap_open_checked: a regular file owned by owner, one link, at most
 * max_size bytes (*size). what names it in messages. 0 or -errno. */
int perfmap_check_fd(int fd, pid_t pid, uid_t owner, size_t max_size, size_t *size,
		     const char *what, struct fs_error *err);
/* Only the fstat part of perfmap_check_fd (for re-checks of an fd that
 * passed it: its file system and open mode cannot change, its owner,
 * links and size can). Both accept 0 links as well as 1: a file removed
 * or renamed over since it was opened has no name to alias; the fd still
 * reads the inode it was opened on. */
int perfmap_recheck_fd(int fd, uid_t owner, size_t max_size, size_t *size, const char *what,
		       struct fs_error *err);

/* Before asking a JVM to write path: 0 if it does not exist or would pass
 * perfmap_open_checked (a symlink, FIFO, hard link, foreign or huge file
 * fails here, so the JVM is never made to write through it or block on it).
 * Nothing is opened for reading or writing. */
int perfmap_precheck(int root_fd, const char *path, uid_t owner, size_t max_size,
		     struct fs_error *err);

#endif
