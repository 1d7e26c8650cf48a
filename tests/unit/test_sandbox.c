/* test_sandbox.c - the forked, namespace-joining, privilege-dropping child
 * that attach and map run in (sidecar/jvm/sandbox.c); needs root for setns. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "proc.h"
#include "sandbox.h"
#include "tap.h"
#include "timeutil.h"

static int sb_hello(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "uid=%u gid=%u", (unsigned)getuid(), (unsigned)getgid());
	return sandbox_child_write(c, buf, (size_t)n, err);
}

static int sb_fail(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	return fs_error_set(err, ENOTSUP, "the callback failed on purpose");
}

static int sb_hang(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	for (;;)
		pause();
	return 0;
}

static int sb_flood(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	static char block[65536];
	for (int i = 0; i < 64; i++) {
		int r = sandbox_child_write(c, block, sizeof(block), err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int sb_forbidden(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	char buf[128];
	int inet = socket(AF_INET, SOCK_STREAM, 0);
	int inet_errno = errno;
	char *const argv[] = {"/bin/true", NULL};
	execv("/bin/true", argv);
	int exec_errno = errno;
	int n = snprintf(buf, sizeof(buf), "inet=%d/%d exec=%d", inet, inet_errno, exec_errno);
	return sandbox_child_write(c, buf, (size_t)n, err);
}

/* Whether the page at arg is still mapped in the child (its maps line). */
static int sb_shared(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	char want[32], line[512];
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)arg);
	FILE *f = fopen("/proc/self/maps", "re");
	const char *res = f ? "unmapped" : "no maps";
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			res = "mapped";
	if (f)
		fclose(f);
	return sandbox_child_write(c, res, strlen(res), err);
}

static int sb_ask(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	int r = sandbox_child_request(c, "ping", err);
	if (r < 0)
		return r;
	r = sandbox_child_request(c, "deny", err);
	return r < 0 ? r : fs_error_set(err, EINVAL, "deny was not denied");
}

static int on_request(const char *req, int pidfd, void *arg, struct fs_error *err)
{
	int *pings = arg;
	if (!strcmp(req, "ping") && pidfd >= 0) {
		(*pings)++;
		return 0;
	}
	return fs_error_set(err, EACCES, "request %s denied by the test", req);
}

/* Open a file the jail can read ("etc/hostname" beneath the root, or
 * "." as a directory) and hand its fd over. */
static int sb_send_fd(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	int fd = openat(AT_FDCWD, arg, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "open %s", (const char *)arg);
	int r = sandbox_child_send_fd(c, fd, err);
	close(fd);
	if (r == 0)
		r = sandbox_child_write(c, "sent", 4, err);
	return r;
}

/* Open fds of this process. */
static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* One record {type, len, data} down sock, with fd (when >= 0) attached. */
static void send_rec(int sock, uint32_t type, const char *data, uint32_t len, int fd)
{
	uint32_t h[2] = {type, len};
	struct iovec iov[2] = {{h, sizeof(h)}, {(void *)data, len}};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	if (fd >= 0) {
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(sock, &m, 0) < 0)
		tap_diag("sendmsg: %s", strerror(errno));
}

/* The parent's side of an fd handover, on a socketpair as the child's
 * stream (sandbox_parent_records): the fd arrives with its own record
 * only to a job that takes one, once; every other fd is closed. steps:
 * the records to send, as "F" (an fd record), "f" (an fd record without
 * its fd), "D" (a data record), "d" (a data record carrying an fd). */
static int parent_fd_case(const char *steps, int take, int *got)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	int file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	for (const char *s = steps; *s; s++) {
		if (*s == 'F' || *s == 'f')
			send_rec(sv[1], 6, NULL, 0, *s == 'F' ? file : -1);
		else
			send_rec(sv[1], 1, "abc", 3, *s == 'd' ? file : -1);
	}
	close(file);
	shutdown(sv[1], SHUT_WR);
	struct sandbox_job job = {
	    .max_out = 1 << 20, .timeout_ms = 1000, .fd_out = take ? got : NULL};
	cleanup_free char *out = NULL;
	size_t len;
	struct fs_error err = {0};
	*got = -1;
	int r = sandbox_parent_records(sv[0], &job, timeutil_now_ms() + 1000, &out, &len, &err);
	close(sv[0]);
	close(sv[1]);
	return r;
}

static void test_fd_records(void)
{
	int got = -1, before = count_fds();
	struct stat a, b;
	ok(parent_fd_case("DFD", 1, &got) == 0 && got >= 0 && fstat(got, &a) == 0 &&
	       stat("/proc/self/exe", &b) == 0 && a.st_ino == b.st_ino &&
	       (fcntl(got, F_GETFD) & FD_CLOEXEC),
	   "an fd record hands the fd over (close-on-exec)");
	if (got >= 0)
		close(got);
	ok(parent_fd_case("F", 0, &got) == -EPROTO && got == -1,
	   "refused to a job that takes none");
	ok(parent_fd_case("FF", 1, &got) == -EPROTO && got == -1, "a second fd is refused");
	ok(parent_fd_case("dD", 1, &got) == -EPROTO && got == -1,
	   "an fd on a data record is refused");
	ok(parent_fd_case("f", 1, &got) == -EPROTO && got == -1,
	   "an fd record without an fd is refused");
	ok(count_fds() == before, "no fd left open (%d, %d before)", count_fds(), before);
}

static void test_sandbox(void)
{
	struct fs_error err = {0};
	struct sandbox_target t = {.pid = getpid(), .uid = 65534, .gid = 65534};
	struct sandbox_job job = {.fn = sb_hello, .max_out = 1 << 20, .timeout_ms = 3000};
	cleanup_free char *out = NULL;
	size_t len;
	if (proc_start_time(t.pid, &t.start_time, &err) < 0 ||
	    proc_ns_inode(t.pid, "mnt", &t.mnt_ns, &err) < 0 ||
	    proc_ns_inode(t.pid, "pid", &t.pid_ns, &err) < 0) {
		ok(0, "reading our own process facts: %s", err.msg);
		return;
	}

	char dir[] = "/tmp/test_attach.XXXXXX";
	if (!mkdtemp(dir))
		return;
	setenv("FS_TEST_SANDBOX_STATUS", dir, 1);
	ok(sandbox_run(&t, &job, &out, &len, &err) == 0, "sandbox runs the callback: %s", err.msg);
	is_str(out, "uid=65534 gid=65534", "as the target uid/gid");
	unsetenv("FS_TEST_SANDBOX_STATUS");
	char path[128];
	cleanup_free char *status = NULL;
	snprintf(path, sizeof(path), "%s/status.%d", dir, (int)t.pid);
	if (proc_read_file(path, 65536, &status, NULL, &err) == 0) {
		ok(strstr(status, "\nUid:\t65534\t65534\t65534\t65534\n") != NULL, "Uid: all four");
		ok(strstr(status, "\nGid:\t65534\t65534\t65534\t65534\n") != NULL, "Gid: all four");
		ok(strstr(status, "\nCapEff:\t0000000000000000\n") != NULL, "CapEff: 0");
		ok(strstr(status, "\nCapPrm:\t0000000000000000\n") != NULL, "CapPrm: 0");
		ok(strstr(status, "\nCapBnd:\t0000000000000000\n") != NULL, "CapBnd: 0");
		ok(strstr(status, "\nCapAmb:\t0000000000000000\n") != NULL, "CapAmb: 0");
		ok(strstr(status, "\nNoNewPrivs:\t1\n") != NULL, "NoNewPrivs: 1");
		ok(strstr(status, "\nSeccomp:\t2\n") != NULL, "Seccomp: 2");
		unlink(path);
	} else {
		ok(0, "the status hook wrote %s: %s", path, err.msg);
	}
	rmdir(dir);
	free(out);
	out = NULL;

	/* Through the jail: the seccomp filter lets SCM_RIGHTS out. */
	int fd = -1;
	job.fn = sb_send_fd;
	job.arg = "etc/hostname";
	job.fd_out = &fd;
	struct stat a, b;
	ok(sandbox_run(&t, &job, &out, &len, &err) == 0 && fd >= 0 && !strcmp(out, "sent") &&
	       fstat(fd, &a) == 0 && stat("/etc/hostname", &b) == 0 && a.st_ino == b.st_ino,
	   "the jailed child hands an fd over: %s", err.msg);
	if (fd >= 0)
		close(fd);
	free(out);
	out = NULL;
	job.fd_out = NULL;
	ok(sandbox_run(&t, &job, &out, &len, &err) == -EPROTO, "not to a job that takes none: %s",
	   err.msg);
	job.arg = NULL;

	job.fn = sb_forbidden;
	ok(sandbox_run(&t, &job, &out, &len, &err) == 0, "forbidden calls return errors");
	is_str(out, "inet=-1/1 exec=1", "AF_INET sockets and exec fail with EPERM");
	free(out);
	out = NULL;

	/* A shared mapping of the parent (as the perf ring buffers are) is
	 * gone in the child, a private one is kept. */
	void *ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	job.fn = sb_shared;
	job.arg = ring;
	ok(ring != MAP_FAILED && sandbox_run(&t, &job, &out, &len, &err) == 0,
	   "the child reports its maps: %s", err.msg);
	is_str(out, "unmapped", "the parent's shared mappings are not in the sandboxed child");
	free(out);
	out = NULL;
	job.arg = NULL;
	if (ring != MAP_FAILED)
		munmap(ring, 4096);

	job.fn = sb_fail;
	ok(sandbox_run(&t, &job, &out, &len, &err) == -ENOTSUP &&
	       strstr(err.msg, "failed on purpose"),
	   "the child's error comes back: %s", err.msg);

	job.fn = sb_hang;
	job.timeout_ms = 200;
	uint64_t t0 = timeutil_now_ms();
	ok(sandbox_run(&t, &job, &out, &len, &err) == -ETIMEDOUT, "a hanging child: %s", err.msg);
	ok(timeutil_now_ms() - t0 < 2000, "is killed at the deadline");
	job.timeout_ms = 3000;

	job.fn = sb_flood;
	job.max_out = 1 << 20;
	ok(sandbox_run(&t, &job, &out, &len, &err) == -E2BIG, "output over the cap: %s", err.msg);

	int pings = 0;
	job.fn = sb_ask;
	job.on_request = on_request;
	job.request_arg = &pings;
	ok(sandbox_run(&t, &job, &out, &len, &err) == -EACCES && pings == 1 &&
	       strstr(err.msg, "denied by the test"),
	   "requests reach the parent and its answers the child: %s", err.msg);
	job.on_request = NULL;

	struct sandbox_target bad = t;
	bad.mnt_ns = 1;
	job.fn = sb_hello;
	ok(sandbox_run(&bad, &job, &out, &len, &err) == -ESTALE,
	   "a mount namespace that differs from the registry: %s", err.msg);
	bad = t;
	bad.start_time = t.start_time + 1;
	ok(sandbox_run(&bad, &job, &out, &len, &err) == -ESRCH,
	   "a recycled pid (start time differs): %s", err.msg);
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	bad.pid = gone;
	bad.start_time = 0;
	ok(sandbox_run(&bad, &job, &out, &len, &err) == -ESRCH, "a process that is gone: %s",
	   err.msg);
}

int main(void)
{
	tap_plan(22 + 2 + 6);
	if (geteuid() != 0) {
		tap_skip_all("not root: the sandbox joins namespaces (setns)");
		return tap_done();
	}
	test_sandbox();
	test_fd_records();
	return tap_done();
}
