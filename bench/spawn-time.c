/* spawn-time.c - run a command N times with stdin from a file and print
 * the median, min and p90 wall time in microseconds. Used by bench/hook.sh.
 *   spawn-time N STDIN_FILE CMD [ARGS...] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: spawn-time N STDIN_FILE CMD [ARGS...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	double *t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		int fd = open(argv[2], O_RDONLY);
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fd, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		struct timespec a, b;
		pid_t pid;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (posix_spawn(&pid, argv[3], &fa, NULL, argv + 3, environ) != 0) {
			perror("posix_spawn");
			return 1;
		}
		int st;
		waitpid(pid, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		close(fd);
		posix_spawn_file_actions_destroy(&fa);
		t[i] = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("median_us=%.1f min_us=%.1f p90_us=%.1f\n", t[n / 2], t[0], t[(n * 9) / 10]);
	return 0;
}
