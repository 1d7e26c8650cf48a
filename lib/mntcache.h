/* mntcache.h - a process's mount table (/proc/<pid>/mountinfo, up to
 * LOCALFS_MOUNTINFO_MAX bytes), read once and then again only when it
 * changed, for lib/localfs.c, which checks it for every file it is asked
 * about.
 *
 * A table is kept per (pid and its start time, mount namespace inode)
 * with its /proc/<pid>/mountinfo fd left open. It is read again when:
 * poll() on that fd reports POLLPRI|POLLERR (the kernel's mark of a mount
 * or unmount in that namespace since the last poll; proc(5)), it is older
 * than MNTCACHE_MAX_AGE_MS, the process's mount namespace or start time is
 * not the recorded one, or the caller asks for a fresh read (localfs does
 * when a mount id is missing from the table). The poll comes before the
 * read, so a mount made while the table is read is reported by the next
 * poll: a mount made after a table was cached is always seen by the next
 * check that starts after it. */
#ifndef FS_MNTCACHE_H
#define FS_MNTCACHE_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

#define MNTCACHE_SLOTS	    8u
#define MNTCACHE_MAX_AGE_MS 1000u

#define MNTCACHE_FRESH 1u /* read the table again, whatever the cache holds */

/* Call fn on pid's mount table (pid 0: ours) with the cache held (fn must
 * not call back into the cache); fn's result, or -errno when the table
 * cannot be read. flags: 0 or MNTCACHE_FRESH. Thread-safe. */
int mntcache_with(pid_t pid, unsigned flags, int (*fn)(const char *buf, size_t len, void *arg),
		  void *arg, struct fs_error *err);

/* Tables read and calls answered from the cache, in this process. */
void mntcache_counts(unsigned long *reads, unsigned long *hits);

/* Drop every table (close the fds). */
void mntcache_flush(void);

#endif
