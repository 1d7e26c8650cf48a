/* tmpreg.h - the files a watched process creates, listed where its
 * watchdog can read them, so that the watchdog removes what a killed
 * process left behind (sidecar/watchdog.h).
 *
 * The child of `run` and `top` writes its outputs through temporary files
 * renamed into place (fileio_atomic_*). Killed while one is open, it leaves
 * the temporary file; killed after some outputs were renamed into place
 * but before the others, it leaves a partial set. Each temporary file is
 * listed in a table in memory shared with the watchdog (MAP_SHARED, made
 * before the fork) once it exists: its directory (the path the kernel
 * gives for the directory fd, and its device and inode), its name and its
 * own device and inode. The entry is dropped when the file is removed or
 * renamed into place, or, for an output (tmpreg_commit with keep), moved to
 * its final name.
 *
 * tmpreg_clean (the watchdog, once the child is killed or died of a signal)
 * removes each file still listed, and only when the directory at that path
 * is the same directory (device, inode) and the name in it is a regular
 * file, not followed if a symlink, with the listed device and inode: it
 * never removes what the run did not create. Names are unlinked, nothing
 * else; the table is only read.
 *
 * Without a published table (every process but the watched child) the
 * calls do nothing. Entries are claimed atomically: threads and forked
 * children of the watched process may list files. */
#ifndef FS_TMPREG_H
#define FS_TMPREG_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define TMPREG_SLOTS 32 /* files listed at once; more are counted in lost */

enum { TMPREG_FREE, TMPREG_CLAIMED, TMPREG_TEMP, TMPREG_OUTPUT };

struct tmpreg_slot {
	uint32_t state; /* TMPREG_*: TEMP and OUTPUT are complete */
	uint64_t dir_dev, dir_ino, dev, ino;
	char dir[PATH_MAX];
	char name[NAME_MAX + 1];
};

struct tmpreg {
	struct tmpreg_slot slot[TMPREG_SLOTS];
	uint32_t lost; /* files that found no free slot */
};

/* In the watched process: list files in r (NULL: stop listing). */
void tmpreg_publish(struct tmpreg *r);

/* The temporary file name, just created in dir_fd and open as fd: its
 * slot, or -1 (no table, table full, or its directory not known). */
int tmpreg_add(int dir_fd, const char *name, int fd);

/* The slot's file was renamed to final: with keep, the file stays listed
 * under final (an output of the run, removed should the run be killed
 * before its end); else it is dropped. slot -1: nothing. */
void tmpreg_commit(int slot, const char *final, int keep);

/* The slot's file is gone (removed): dropped. slot -1: nothing. */
void tmpreg_drop(int slot);

/* In the watchdog: remove what r still lists, as said above. The count of
 * files removed; *kept (when not NULL): listed files left alone because
 * they were no longer what the run created, or lost. */
int tmpreg_clean(const struct tmpreg *r, int *kept);

#endif
