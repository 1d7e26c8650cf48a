/* procmem.h - read another process's memory (process_vm_readv), with one
 * contract for a short read.
 *
 * The memory of a profiled process is container input: callers bound and
 * check what they read. The pid must be one the caller has just checked
 * (start time or pidfd): a bare pid may have been reused.
 */
#ifndef FS_PROCMEM_H
#define FS_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exactly len bytes at addr in pid's memory into buf. 0; -EFAULT when
 * fewer bytes could be read (an unmapped or unreadable page in the range:
 * buf then holds the readable prefix); -ESRCH the process is gone;
 * -EPERM not allowed; another -errno. len 0 reads nothing and returns 0. */
int procmem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* As many bytes as can be read at addr, up to len: the count (0 when the
 * first page is not readable), or -errno as procmem_read other than
 * -EFAULT. For readers that can use a prefix (code bytes before a page
 * boundary). */
ssize_t procmem_read_some(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif
