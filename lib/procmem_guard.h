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
 * On kernels with PROCMAP_QUERY (Linux 6.11+, vmaquery.h) the table is
 * not the last word: immediately before each read, the file-backed VMAs
 * covering the range are asked of the kernel (at most 16 of
 * them; a device's verdict cached per process, a device not known looked
 * up in the mount tables at most a few times per build period, then
 * unsafe), through a /proc/<pid>/maps fd kept per process, opened when
 * the table is built and kept only when the caller's pidfd is alive
 * after the open (reopened once when its address space is gone; a query
 * that fails otherwise refuses what it did not check). A
 * mapping made after a build is then caught unless it is made in the
 * microseconds between the query and process_vm_readv, or by a process
 * that exec'd since the build while another task keeps its old address
 * space (the fd answers about that one until the next build). On older
 * kernels (ENOTTY/EINVAL) the table alone decides, and a mapping made
 * within PROCMEM_GUARD_MS of a read can stall it. What remains is bounded
 * by the watchdog of the verbs that read memory (watchdog.h,
 * docs/security.md). */
#ifndef FS_PROCMEM_GUARD_H
#define FS_PROCMEM_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCMEM_GUARD_PIDS   64
#define PROCMEM_GUARD_RANGES 256
#define PROCMEM_GUARD_MS     250

/* How many bytes at addr (up to len) lie before the first unsafe byte of
 * pid's memory: len when none of them is unsafe. pidfd: the caller's
 * checked pidfd of pid (procmem.h), which vouches for the maps fd. */
size_t procmem_guard_safe(pid_t pid, int pidfd, uint64_t addr, size_t len);

/* Reads cut short or refused so far because of it; of those, the ones
 * that only the query immediately before the read caught. */
unsigned long procmem_guard_refused(void);
unsigned long procmem_guard_query_refused(void);
/* Queries that failed (other than no PROCMAP_QUERY, or an address space
 * gone): the range from the failure on was refused. */
unsigned long procmem_guard_query_errors(void);

/* 1 when reads are checked with PROCMAP_QUERY (the kernel has it and it
 * was not switched off). */
int procmem_guard_query_active(void);

/* Switch the query off (0) or on (1): benches and tests comparing with
 * the table alone. */
void procmem_guard_set_query(int on);

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
