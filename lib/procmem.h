/* procmem.h - read another process's memory (process_vm_readv), with one
 * contract for a short read and one guard against a reused pid.
 *
 * The memory of a profiled process is container input: callers bound and
 * check what they read. A pid alone is never trusted: every read names the
 * pidfd the caller opened when it checked the process (its start time,
 * proc_pidfd_open_checked), and the bytes are kept only when that process
 * is still alive after the read. A pid that was reused meanwhile belongs to
 * another process while the pidfd's own has exited, so the read is
 * refused (-ESRCH) and the buffer zeroed.
 *
 * No byte of a mapping of a file that a daemon serves (FUSE, a network
 * file system) is read: such bytes count as unreadable (procmem_guard.h).
 */
#ifndef FS_PROCMEM_H
#define FS_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exactly len bytes at addr in pid's memory into buf. 0; -EFAULT when
 * fewer bytes could be read (an unmapped or unreadable page in the range:
 * buf then holds the readable prefix); -ESRCH the process is gone (or
 * pidfd's process is no longer alive: nothing kept); -EBADF pidfd < 0;
 * -EPERM not allowed; another -errno. len 0 reads nothing and returns 0. */
int procmem_read(pid_t pid, int pidfd, uint64_t addr, void *buf, size_t len);

/* As many bytes as can be read at addr, up to len: the count (0 when the
 * first page is not readable), or -errno as procmem_read other than
 * -EFAULT. For readers that can use a prefix (code bytes before a page
 * boundary). */
ssize_t procmem_read_some(pid_t pid, int pidfd, uint64_t addr, void *buf, size_t len);

/* A read in progress, for a watchdog in another process (watchdog.h):
 * since_ms (CLOCK_MONOTONIC, timeutil_now_ms) is set just before
 * process_vm_readv and 0 again after it, pid/addr/len name the read. In
 * memory shared with the watchdog (MAP_SHARED); one reader thread. */
struct procmem_busy {
	volatile uint64_t since_ms;
	volatile uint64_t addr, len;
	volatile int32_t pid;
};

/* Publish every read from now on in *b (NULL: stop). */
void procmem_publish(struct procmem_busy *b);

#endif
