/* localfs.c - what localfs_check_fd (lib/localfs.c) costs per file checked
 * with its mount table cache (lib/mntcache.c) against the read of the
 * whole table it did before every check (the baseline, the same lookup on
 * a fresh read of /proc/<pid>/mountinfo), alternating in 20 slices of
 * SECONDS / 20 each way in one run. Prints CPU ns (user + system of this
 * process) per check for both, their ratio and the table's size.
 *   localfs [SECONDS]  (default 2) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "localfs.h"
#include "mntcache.h"
#include "proc.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The check as it was: the whole table read for each file. */
static int check_uncached(int fd, pid_t pid)
{
	struct statx stx;
	char path[64], type[64];
	char *buf = NULL;
	size_t len = 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if (proc_read_file(path, LOCALFS_MOUNTINFO_MAX, &buf, &len, NULL) < 0)
		return -1;
	int r = localfs_mountinfo_type(buf, len, stx.stx_mnt_id, type, sizeof(type)) == 1 &&
		localfs_type_local(type);
	free(buf);
	return r ? 0 : -1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	int fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	pid_t pid = getpid();
	char *buf = NULL;
	size_t len = 0, lines = 0;
	proc_read_file("/proc/self/mountinfo", LOCALFS_MOUNTINFO_MAX, &buf, &len, NULL);
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	free(buf);
	if (fd < 0 || localfs_check_fd(fd, pid, "exe", NULL) < 0 || check_uncached(fd, pid) < 0) {
		fprintf(stderr, "localfs: our own executable is not on a local file system\n");
		return 1;
	}
	double t[2] = {0, 0};
	unsigned long n[2] = {0, 0};
	for (int slice = 0; slice < 40; slice++) {
		int way = slice % 2;
		double t0 = now_s(), end = t0 + secs / 20;
		unsigned long k = 0;
		do {
			for (int i = 0; i < 16; i++, k++)
				if ((way ? check_uncached(fd, pid)
					 : localfs_check_fd(fd, pid, "exe", NULL)) < 0)
					return 1;
		} while (now_s() < end);
		t[way] += now_s() - t0;
		n[way] += k;
	}
	double cached = t[0] / (double)n[0] * 1e9, uncached = t[1] / (double)n[1] * 1e9;
	unsigned long reads, hits;
	mntcache_counts(&reads, &hits);
	printf("mount table %zu lines, %zu bytes: cached %.0f ns/check, read each time %.0f "
	       "ns/check, %.1fx (table reads %lu for %lu cached checks)\n",
	       lines, len, cached, uncached, uncached / cached, reads, n[0]);
	return 0;
}
