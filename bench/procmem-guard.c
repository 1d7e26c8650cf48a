/* procmem-guard.c - what the FUSE guard of procmem_read (lib/procmem_guard.c)
 * costs per read: a child with MAPS mappings (alternating protections, so
 * that none merge: a JVM has a few thousand), then reads of 64 bytes of
 * its memory for SECONDS each way, in one run, alternating in 20 slices:
 * procmem_read (guarded, rebuilding the child's ranges every 250 ms) and
 * the bare process_vm_readv + pidfd check it did before (the baseline).
 * Prints CPU ns (user + system, of this process: the time the machine's
 * other load takes is not counted) per read for both and their ratio.
 *   procmem-guard [MAPS [SECONDS]]  (default 3000, 2) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procmem.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char target[4096] = "target";

static int bare(pid_t pid, int pidfd, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return -1;
	return n == (ssize_t)len ? 0 : -1;
}

int main(int argc, char **argv)
{
	int maps = argc > 1 ? atoi(argv[1]) : 3000;
	double secs = argc > 2 ? atof(argv[2]) : 2;
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t c = fork();
	if (c == 0) {
		for (int i = 0; i < maps; i++)
			mmap(NULL, 4096, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char b;
	if (read(p[0], &b, 1) != 1)
		return 1;
	int pidfd = (int)syscall(SYS_pidfd_open, c, 0);
	char buf[64];
	double spent[2] = {0, 0}, ns[2];
	unsigned long count[2] = {0, 0};
	for (int slice = 0; slice < 40; slice++) {
		int way = slice & 1;
		double t0 = now_s(), t;
		while ((t = now_s()) - t0 < secs / 20) {
			for (int i = 0; i < 1000; i++) {
				int r = way ? procmem_read(c, pidfd, (uintptr_t)target, buf, 64)
					    : bare(c, pidfd, (uintptr_t)target, buf, 64);
				if (r < 0) {
					fprintf(stderr, "read failed\n");
					return 1;
				}
			}
			count[way] += 1000;
		}
		spent[way] += t - t0;
	}
	for (int way = 0; way < 2; way++)
		ns[way] = spent[way] * 1e9 / (double)count[way];
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	printf("maps %d: bare %.0f CPU ns/read, guarded %.0f CPU ns/read, ratio %.2f\n", maps,
	       ns[0], ns[1], ns[1] / ns[0]);
	return 0;
}
