/* procmem.c - see procmem.h */
#include "procmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procmem_guard.h"
#include "timeutil.h"

static struct procmem_busy *pm_busy;

void procmem_publish(struct procmem_busy *b)
{
	pm_busy = b;
}

ssize_t procmem_read_some(pid_t pid, int pidfd, uint64_t addr, void *buf, size_t len)
{
	if (pidfd < 0)
		return -EBADF;
	if (len == 0)
		return 0;
		/* Never a byte a daemon serves: the read would wait on it, unkillable. */
#ifdef FS_TEST_BUILD
	/* FS_TEST_PROCMEM_UNGUARDED=ADDR (hex): the first read of the run
	 * reads ADDR of the same process with no check: the race between the
	 * check and the read, won by the container (tests/integration/
	 * stall.bats; the watchdog must end the run). */
	static int pm_test_done;
	const char *unguarded = getenv("FS_TEST_PROCMEM_UNGUARDED");
	if (unguarded && !pm_test_done) {
		pm_test_done = 1;
		addr = strtoull(unguarded, NULL, 16);
	} else
#endif
		len = procmem_guard_safe(pid, pidfd, addr, len);
	if (len == 0)
		return 0;
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	struct procmem_busy *b = pm_busy;
	if (b) {
		b->pid = (int32_t)pid;
		b->addr = addr;
		b->len = len;
		__atomic_store_n(&b->since_ms, timeutil_now_ms(), __ATOMIC_RELEASE);
	}
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	int saved = errno;
	if (b)
		__atomic_store_n(&b->since_ms, 0, __ATOMIC_RELEASE);
	/* signal 0 through the pidfd: fails once its process has exited, so
	 * a pid reused during the read is never believed */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		if (n > 0)
			memset(buf, 0, (size_t)n);
		return -ESRCH;
	}
	if (n < 0)
		return saved == EFAULT ? 0 : -saved;
	return n;
}

int procmem_read(pid_t pid, int pidfd, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = procmem_read_some(pid, pidfd, addr, buf, len);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}
