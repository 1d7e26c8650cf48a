/* procmem_guard.h - which of a process's memory the root process must not
 * read because a daemon serves it.
 *
 * process_vm_readv faults in what it reads. A page of a file-backed
 * mapping that is not in the page cache is read from the file, and a file
 * on a FUSE mount (or a network file system) is read by its daemon: a
 * container with /dev/fuse maps a file of its own mount, holds the READ,
 * and the root process waits in D state, unkillable, for as long as the
 * daemon lives. procmem_read (procmem.h) therefore reads no byte of a
 * mapping whose file is not on a local file system (localfs.h: the type
 * of the mapping's device in the process's mount table, then ours; a
 * device in neither is local only when it is a block device or the
 * kernel's internal tmpfs of memfds and shared anonymous memory).
 *
 * The unsafe ranges of a process are built from /proc/<pid>/maps (at most
 * BUDGET_MAPS_FILE_BYTES; past that, and past PROCMEM_GUARD_RANGES unsafe
 * ranges, everything above is unsafe) and rebuilt when older than
 * PROCMEM_GUARD_MS (or 20 times what the last build took, for a process
 * with a huge maps file), for at most PROCMEM_GUARD_PIDS processes at a
 * time.
 * A mapping made after a build is not known until the next one: a
 * process that maps a FUSE file and has it read within that window can
 * still stall the reader (docs/security.md). */
#ifndef FS_PROCMEM_GUARD_H
#define FS_PROCMEM_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCMEM_GUARD_PIDS   64
#define PROCMEM_GUARD_RANGES 256
#define PROCMEM_GUARD_MS     250

/* How many bytes at addr (up to len) lie before the first unsafe byte of
 * pid's memory: len when none of them is unsafe. */
size_t procmem_guard_safe(pid_t pid, uint64_t addr, size_t len);

/* Reads cut short or refused so far because of it. */
unsigned long procmem_guard_refused(void);

/* Forget what is known of pid (tests: after it maps something). */
void procmem_guard_forget(pid_t pid);

/* The unsafe ranges of maps text (len bytes) whose devices' types are
 * found in mountinfo text a (then b; either may be NULL; the internal
 * tmpfs is known once a process was guarded): sorted start/end
 * pairs into r (at most max), their count. Exposed for tests and fuzzing:
 * linear in len. */
size_t procmem_guard_parse(const char *maps, size_t len, const char *a, size_t alen, const char *b,
			   size_t blen, uint64_t (*r)[2], size_t max);

#endif
