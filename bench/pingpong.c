/* pingpong.c - bench/cgroup-switch.sh's load: a child task moved into a
 * cgroup and its parent left where it is bounce one byte over two pipes N
 * times on CPU 0, so every round trip is two context switches between
 * tasks of different cgroups.
 *
 *   pingpong CGROUP_PROCS_FILE N   -> "WALL_NS CPU_NS" per round trip
 *
 * CPU is user + system of both tasks (getrusage). Exit status 0, or 1
 * with a message. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double tv_ns(struct timeval t)
{
	return (double)t.tv_sec * 1e9 + (double)t.tv_usec * 1e3;
}

int main(int argc, char **argv)
{
	int a[2], b[2];
	char c = 0;
	long n = argc == 3 ? atol(argv[2]) : 0;
	cpu_set_t set;
	if (n <= 0) {
		fprintf(stderr, "usage: pingpong CGROUP_PROCS_FILE ROUND_TRIPS\n");
		return 1;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || pipe(a) || pipe(b)) {
		perror("pingpong: setup");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (pid == 0) {
		FILE *f = fopen(argv[1], "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			_exit(2);
		if (write(b[1], &c, 1) != 1)
			_exit(3);
		for (long i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(3);
		_exit(0);
	}
	if (read(b[0], &c, 1) != 1) { /* the child is in its cgroup */
		fprintf(stderr, "pingpong: the child could not join %s\n", argv[1]);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int st;
	waitpid(pid, &st, 0);
	struct rusage ru, rc;
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &rc);
	double cpu =
	    tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime) + tv_ns(rc.ru_utime) + tv_ns(rc.ru_stime);
	double wall = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("%.0f %.0f\n", wall / (double)n, cpu / (double)n);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
