/* procmem.c - see procmem.h */
#include "procmem.h"

#include <errno.h>
#include <sys/uio.h>

ssize_t procmem_read_some(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == EFAULT ? 0 : -errno;
	return n;
}

int procmem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = procmem_read_some(pid, addr, buf, len);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}
