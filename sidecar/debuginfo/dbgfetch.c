/* dbgfetch.c - see dbgfetch.h */
#include "dbgfetch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budget.h"
#include "cleanup.h"
#include "jail.h"
#include "timeutil.h"

/* How long a helper that closed its output may take to exit. */
#define DBGFETCH_EXIT_MS 2000

int dbgfetch_helper_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(buf, len, "%s/%s", exe, DBGFETCH_HELPER) < len &&
			    access(buf, X_OK) == 0)
				return 0;
		}
	}
#ifdef FS_LIBEXECDIR
	if ((size_t)snprintf(buf, len, "%s/%s", FS_LIBEXECDIR, DBGFETCH_HELPER) < len &&
	    access(buf, X_OK) == 0)
		return 0;
#endif
	return -ENOENT;
}

/* "NAME=value" into env[*n] when the sidecar has NAME set. */
static void dbgfetch_pass(char **env, size_t *n, const char *name)
{
	const char *v = getenv(name);
	if (v && asprintf(&env[*n], "%s=%s", name, v) > 0)
		(*n)++;
}

static __attribute__((noreturn)) void dbgfetch_child(int out, const char *helper, const char *urls,
						     const char *hex, unsigned timeout_ms)
{
	char *env[12] = {0};
	size_t n = 0;
	unsigned secs = timeout_ms / 1000 ? timeout_ms / 1000 : 1;
	if (asprintf(&env[n], "DEBUGINFOD_URLS=%s", urls) > 0)
		n++;
	dbgfetch_pass(env, &n, "DEBUGINFOD_CACHE_PATH");
	dbgfetch_pass(env, &n, "XDG_CACHE_HOME");
	dbgfetch_pass(env, &n, "HOME");
	if (asprintf(&env[n], "DEBUGINFOD_TIMEOUT=%u", secs) > 0)
		n++;
	if (asprintf(&env[n], "DEBUGINFOD_MAXTIME=%u", secs) > 0)
		n++;
	if (asprintf(&env[n], "DEBUGINFOD_MAXSIZE=%llu",
		     (unsigned long long)BUDGET_DEBUG_FILE_BYTES) > 0)
		n++;
	env[n] = NULL;
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(127);
	close_range(3, ~0u, 0);
	char *const argv[] = {(char *)DBGFETCH_HELPER, (char *)hex, NULL};
	execve(helper, argv, env);
	dprintf(2, "ERR cannot run %s: %s\n", helper, strerror(errno));
	_exit(127);
}

/* Read the helper's answer (at most DBGFETCH_OUTPUT_MAX bytes) until EOF or
 * the deadline. 0 or -ETIMEDOUT. */
static int dbgfetch_read(int fd, char *buf, size_t cap, uint64_t deadline)
{
	size_t got = 0;
	for (;;) {
		uint64_t now = timeutil_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ETIMEDOUT;
		char scratch[512];
		char *dst = got < cap - 1 ? buf + got : scratch;
		size_t room = got < cap - 1 ? cap - 1 - got : sizeof(scratch);
		ssize_t n = read(fd, dst, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (dst == buf + got)
			got += (size_t)n;
	}
	buf[got] = '\0';
	return 0;
}

/* Reap the helper through the one jail primitive: wait until deadline (0:
 * not at all), then SIGKILL; never blocks past the kill grace. Its wait
 * status (exit code << 8) or -ETIMEDOUT. */
static int dbgfetch_reap(pid_t pid, int pidfd, uint64_t deadline)
{
	if (pidfd < 0) { /* no pidfd (ENOMEM, EMFILE): the bare pid is our child */
		int status = 0;
		if (!deadline)
			kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!deadline || !WIFEXITED(status))
			return -ETIMEDOUT;
		return WEXITSTATUS(status) << 8;
	}
	struct jail_child c = {.pid = pid, .pidfd = pidfd, .sock = -1};
	return jail_reap(&c, deadline);
}

static int dbgfetch_open(const char *path, struct fs_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "opening debuginfod's file %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fs_error_set(err, EPERM, "debuginfod's %s is not a regular file", path);
	}
	return fd;
}

int dbgfetch_find(const char *helper, const char *urls, const unsigned char *id, size_t len,
		  unsigned timeout_ms, struct fs_error *err)
{
	char hex[2 * 64 + 1];
	if (len == 0 || len > 64)
		return fs_error_set(err, EINVAL, "a %zu-byte build-id", len);
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return fs_error_set(err, errno, "debuginfod: pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pfd[0]);
		close(pfd[1]);
		return fs_error_set(err, e, "debuginfod: fork");
	}
	if (pid == 0)
		dbgfetch_child(pfd[1], helper, urls, hex, timeout_ms);
	close(pfd[1]);
	cleanup_close int rd = pfd[0];
	int pidfd = pidfd_open(pid, 0);
	char out[DBGFETCH_OUTPUT_MAX];
	int r = dbgfetch_read(rd, out, sizeof(out), timeutil_now_ms() + timeout_ms);
	/* The helper talks to host servers: its reaping has a deadline too (a
	 * helper that closed its output is given a moment to exit). */
	int st = dbgfetch_reap(pid, pidfd, r < 0 ? 0 : timeutil_now_ms() + DBGFETCH_EXIT_MS);
	if (r < 0 || st < 0)
		return fs_error_set(err, ETIMEDOUT,
				    "no answer for build-id %s within %u ms (killed)", hex,
				    timeout_ms);
	out[strcspn(out, "\n")] = '\0';
	for (char *p = out; *p; p++) /* a server's words, shown in a warning */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (st == 0 && !strncmp(out, "OK ", 3))
		return dbgfetch_open(out + 3, err);
	if (st == 2 << 8)
		return fs_error_set(err, ENOENT, "no server has build-id %s", hex);
	return fs_error_set(err, EIO, "build-id %s: %s", hex,
			    !strncmp(out, "ERR ", 4) ? out + 4 : "the helper failed");
}
