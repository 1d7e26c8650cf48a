/* procmem-guard.c - what the FUSE guard of procmem_read (lib/procmem_guard.c)
 * costs per read: a child with MAPS mappings (alternating protections, so
 * that none merge: a JVM has a few thousand), then reads of 64 bytes of
 * its memory for SECONDS each way, in one run, alternating in 20 slices:
 * the bare process_vm_readv + pidfd check (the baseline), procmem_read
 * with the table alone (the child's ranges rebuilt every 250 ms) and
 * procmem_read with the table and a PROCMAP_QUERY just before each read
 * (when the kernel has it). Prints CPU ns (user + system, of this
 * process: the time the machine's other load takes is not counted) per
 * read for each and the ratios to the bare read and to the table.
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
#include "procmem_guard.h"

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
	int ways = procmem_guard_query_active() ? 3 : 2;
	double spent[3] = {0, 0, 0}, ns[3] = {0, 0, 0};
	unsigned long count[3] = {0, 0, 0};
	for (int slice = 0; slice < 20 * ways; slice++) {
		int way = slice % ways;
		if (way)
			procmem_guard_set_query(way == 2);
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
	for (int way = 0; way < ways; way++)
		ns[way] = spent[way] * 1e9 / (double)count[way];
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	printf("maps %d: bare %.0f CPU ns/read, table %.0f (x%.2f)", maps, ns[0], ns[1],
	       ns[1] / ns[0]);
	if (ways == 3)
		printf(", table+query %.0f (x%.2f bare, x%.2f table)", ns[2], ns[2] / ns[0],
		       ns[2] / ns[1]);
	else
		printf(", no PROCMAP_QUERY on this kernel");
	printf("\n");
	return 0;
}
