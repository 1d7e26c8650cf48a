/* sandbox.c - see sandbox.h */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "proc.h"
#include "timeutil.h"

enum {
	SB_DATA = 1,	/* child -> parent: output bytes */
	SB_ERROR = 2,	/* child -> parent: int32 code, message */
	SB_REQUEST = 3, /* child -> parent: request string */
	SB_STATUS = 4,	/* child -> parent: /proc/self/status (test hook) */
	SB_REPLY = 5,	/* parent -> child: int32 code, message */
};

#define SB_CHUNK      (256u * 1024) /* largest data record the child sends */
#define SB_MSG_MAX    (64u * 1024)  /* largest non-data record */
#define SB_STATUS_ENV "FS_TEST_SANDBOX_STATUS"

struct sb_hdr {
	uint32_t type;
	uint32_t len;
};

struct sandbox_child {
	int fd;
	uint64_t deadline;
	int fd_dir; /* the host's /proc/self/fd of the child, opened before setns */
};

static int sb_remaining(uint64_t deadline)
{
	uint64_t now = timeutil_now_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

/* Read exactly len bytes before deadline. 0, -EPIPE on EOF after part of a
 * record, 1 on EOF before any byte, -ETIMEDOUT, or -errno. */
static int sb_read_full(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;
	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = sb_remaining(deadline);
		if (ms == 0)
			return -ETIMEDOUT;
		int r = poll(&p, 1, ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ETIMEDOUT;
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return got ? -EPIPE : 1;
		got += (size_t)n;
	}
	return 0;
}

static int sb_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	struct sb_hdr h = {type, (uint32_t)(alen + blen)};
	struct iovec iov[3] = {{&h, sizeof(h)}, {(void *)a, alen}, {(void *)b, blen}};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 3};
	size_t total = sizeof(h) + alen + blen;
	while (total) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		total -= (size_t)n;
		while (n > 0 && msg.msg_iovlen) {
			if ((size_t)n >= msg.msg_iov->iov_len) {
				n -= (ssize_t)msg.msg_iov->iov_len;
				msg.msg_iov++;
				msg.msg_iovlen--;
			} else {
				msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + n;
				msg.msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return 0;
}

static int sb_send_error(int fd, uint32_t type, const struct fs_error *e, int code)
{
	int32_t c = code < 0 ? -code : code;
	const char *msg = e && e->msg[0] ? e->msg : "unknown error";
	return sb_send(fd, type, &c, sizeof(c), msg, strnlen(msg, FS_ERROR_MSG_MAX - 1));
}

/* ---- child side ---------------------------------------------------------- */

int sandbox_child_write(struct sandbox_child *c, const void *buf, size_t len, struct fs_error *err)
{
	const char *p = buf;
	while (len) {
		size_t n = len < SB_CHUNK ? len : SB_CHUNK;
		int r = sb_send(c->fd, SB_DATA, p, n, NULL, 0);
		if (r < 0)
			return fs_error_set(err, r, "sending data to the sidecar");
		p += n;
		len -= n;
	}
	return 0;
}

int sandbox_child_fd_dir(const struct sandbox_child *c)
{
	return c->fd_dir;
}

uint64_t sandbox_child_deadline(const struct sandbox_child *c)
{
	return c->deadline;
}

int sandbox_child_request(struct sandbox_child *c, const char *req, struct fs_error *err)
{
	struct sb_hdr h;
	char buf[FS_ERROR_MSG_MAX + sizeof(int32_t)];
	int r = sb_send(c->fd, SB_REQUEST, req, strlen(req), NULL, 0);
	if (r < 0)
		return fs_error_set(err, r, "asking the sidecar to '%s'", req);
	r = sb_read_full(c->fd, &h, sizeof(h), c->deadline);
	if (r == 0 && (h.type != SB_REPLY || h.len < sizeof(int32_t) || h.len > sizeof(buf)))
		r = -EPROTO;
	if (r == 0)
		r = sb_read_full(c->fd, buf, h.len, c->deadline);
	if (r != 0)
		return fs_error_set(err, r > 0 ? EPIPE : -r, "waiting for the sidecar to '%s'",
				    req);
	int32_t code;
	memcpy(&code, buf, sizeof(code));
	if (code == 0)
		return 0;
	if (err) {
		size_t ml = h.len - sizeof(code);
		if (ml >= sizeof(err->msg))
			ml = sizeof(err->msg) - 1;
		memcpy(err->msg, buf + sizeof(code), ml);
		err->msg[ml] = '\0';
		err->code = code > 0 ? code : EIO;
	}
	return code > 0 ? -code : -EIO;
}

static __attribute__((noreturn)) void sb_child_die(int fd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void sb_child_die(int fd, int code, const char *fmt, ...)
{
	struct fs_error e;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	size_t l = strlen(e.msg);
	if (code)
		snprintf(e.msg + l, sizeof(e.msg) - l, ": %s", strerror(code));
	sb_send_error(fd, SB_ERROR, &e, code ? code : EIO);
	_exit(1);
}

/* Close every fd except those in keep[] (sorted ascending, n entries). */
static void sb_close_others(const int *keep, size_t n)
{
	unsigned lo = 0;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0u, 0);
}

static int sb_int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* libcap and libseccomp objects, released at scope exit (cleanup.h). */
static inline void sb_cap_freep(cap_t *c)
{
	if (*c) {
		int saved = errno;
		cap_free(*c);
		errno = saved;
	}
}
static inline void sb_seccomp_releasep(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}
#define cleanup_cap	__attribute__((cleanup(sb_cap_freep)))
#define cleanup_seccomp __attribute__((cleanup(sb_seccomp_releasep)))

static int sb_drop_privileges(const struct sandbox_target *t)
{
	/* The bounding set can only shrink while we still hold CAP_SETPCAP. */
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (cap_drop_bound(cap) < 0 && errno != EINVAL && errno != EPERM)
			return -errno;
	if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0)
		return -errno;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return -errno;
	if (setgroups(0, NULL) < 0)
		return -errno;
	if (setresgid(t->gid, t->gid, t->gid) < 0)
		return -errno;
	if (setresuid(t->uid, t->uid, t->uid) < 0)
		return -errno;
	/* setresuid to a non-zero uid cleared the sets already; uid 0 keeps
	 * them, so clear explicitly in every case. */
	cleanup_cap cap_t caps = cap_init();
	if (!caps || cap_set_proc(caps) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The syscalls an attach client and a file reader need, and nothing else:
 * no exec, no ptrace, no mount, no namespace calls, no signals to others,
 * sockets only of AF_UNIX. Everything else fails with EPERM. */
/* clang-format off */
static const char *const sb_allowed[] = {
	"read", "write", "readv", "writev", "pread64", "close", "openat", "openat2",
	"fstat", "newfstatat", "statx", "lseek", "fcntl", "unlinkat", "unlink",
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise",
	"connect", "getsockopt", "sendto", "sendmsg", "recvfrom", "recvmsg",
	"poll", "ppoll", "nanosleep", "clock_nanosleep", "clock_gettime", "gettimeofday",
	"exit", "exit_group", "rt_sigreturn", "rt_sigprocmask", "restart_syscall",
	"getpid", "gettid", "tgkill", "getuid", "geteuid", "getgid", "getegid",
	"futex", "getrandom", "sched_yield",
	"sigaltstack", /* AddressSanitizer checks it on _exit and exec */
};
/* clang-format on */

static int sb_seccomp_load(void)
{
	cleanup_seccomp scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = 0;
	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; i < FS_ARRAY_SIZE(sb_allowed) && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(sb_allowed[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	if (r == 0)
		r = seccomp_load(ctx);
	return r;
}

static __attribute__((noreturn)) void sb_child(const struct sandbox_target *t,
					       const struct sandbox_job *job, int fd, int nsfd,
					       int rootfd, pid_t parent, uint64_t deadline)
{
	struct sandbox_child c = {.fd = fd, .deadline = deadline, .fd_dir = -1};
	struct fs_error err = {0};
	sigset_t all;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	/* Not dumpable before it joins anything of the target's: a root
	 * process in the container must not ptrace it (it still holds
	 * capabilities and host fds until the drop below), nor read its
	 * /proc/<pid>/mem, environ or fds. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		sb_child_die(fd, errno, "making the sandboxed child non-dumpable");
	/* While the host's /proc is still ours to read: the perf ring buffers
	 * (every profiled container's samples) must not be readable by a
	 * child that talks to a container's JVM. */
	int unmapped = proc_unmap_shared();
	if (unmapped < 0)
		sb_child_die(fd, -unmapped, "unmapping the sidecar's shared memory");
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* Handlers the sidecar may have installed; nothing else is caught. */
	static const int caught[] = {SIGINT,  SIGTERM, SIGHUP,	SIGQUIT, SIGPIPE,
				     SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2, SIGWINCH};
	for (size_t i = 0; i < FS_ARRAY_SIZE(caught); i++)
		signal(caught[i], SIG_DFL);

	int statusfd = -1;
	if (getenv(SB_STATUS_ENV))
		statusfd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	/* Its own fd table in the host's /proc, for fileio_reopen: the
	 * container's /proc is the container's to fake. */
	c.fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.fd_dir < 0)
		sb_child_die(fd, errno, "opening /proc/self/fd");
	/* Nothing of the operator's terminal: messages go over the socket. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		sb_child_die(fd, errno, "redirecting stdin/stdout/stderr of the sandboxed child");
	int keep[] = {0, 1, 2, fd, nsfd, rootfd, c.fd_dir, statusfd};
	qsort(keep, FS_ARRAY_SIZE(keep), sizeof(int), sb_int_cmp);
	sb_close_others(keep[0] < 0 ? keep + 1 : keep, keep[0] < 0 ? 7 : 8);

	if (setns(nsfd, CLONE_NEWNS) < 0)
		sb_child_die(fd, errno, "joining the mount namespace of pid %d", (int)t->pid);
	close(nsfd);
	/* Paths resolve from the target's root, not the namespace's "/". */
	if (fchdir(rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		sb_child_die(fd, errno, "entering the root of pid %d", (int)t->pid);
	close(rootfd);
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);
	int r = sb_drop_privileges(t);
	if (r < 0)
		sb_child_die(fd, -r, "dropping to uid %u gid %u without capabilities",
			     (unsigned)t->uid, (unsigned)t->gid);
	/* For the tests' status record: what seccomp will no longer let us ask. */
	char extra[PATH_MAX + 64] = "";
	if (statusfd >= 0) {
		char err2[PATH_MAX] = "";
		ssize_t l = readlinkat(c.fd_dir, "2", err2, sizeof(err2) - 1);
		err2[l > 0 ? l : 0] = '\0';
		snprintf(extra, sizeof(extra), "Dumpable:\t%d\nStderr:\t%s\n",
			 prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), err2);
	}
	r = sb_seccomp_load();
	if (r < 0)
		sb_child_die(fd, -r, "installing the seccomp filter");

	if (statusfd >= 0) {
		char buf[8192 + sizeof(extra)];
		ssize_t n = pread(statusfd, buf, 8192, 0);
		if (n > 0) {
			size_t el = strlen(extra);
			memcpy(buf + n, extra, el);
			sb_send(fd, SB_STATUS, buf, (size_t)n + el, NULL, 0);
		}
		close(statusfd);
	}

	r = job->fn(&c, job->arg, &err);
	if (r < 0) {
		sb_send_error(fd, SB_ERROR, &err, r);
		_exit(1);
	}
	_exit(0);
}

/* ---- parent side --------------------------------------------------------- */

static int sb_check_target(const struct sandbox_target *t, int *pidfd_out, int *nsfd_out,
			   int *rootfd_out, struct fs_error *err)
{
	char path[64];
	struct stat st;
	uint64_t ino;
	cleanup_close int pidfd = proc_pidfd_open_checked(t->pid, t->start_time, err);
	if (pidfd < 0)
		return pidfd;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)t->pid);
	cleanup_close int nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	if (fstat(nsfd, &st) < 0)
		return fs_error_set(err, errno, "stat %s", path);
	if (t->mnt_ns && (uint64_t)st.st_ino != t->mnt_ns)
		return fs_error_set(
		    err, ESTALE, "pid %d is in mount namespace %llu, not %llu as registered",
		    (int)t->pid, (unsigned long long)st.st_ino, (unsigned long long)t->mnt_ns);
	if (t->pid_ns) {
		int r = proc_ns_inode(t->pid, "pid", &ino, err);
		if (r < 0)
			return r;
		if (ino != t->pid_ns)
			return fs_error_set(
			    err, ESTALE, "pid %d is in pid namespace %llu, not %llu as registered",
			    (int)t->pid, (unsigned long long)ino, (unsigned long long)t->pid_ns);
	}
	/* Its root directory (a chroot inside the container is honoured):
	 * the kernel resolves this magic link, no string is followed. */
	snprintf(path, sizeof(path), "/proc/%d/root", (int)t->pid);
	cleanup_close int rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	/* Still the process the pidfd names, so the ns and root fds are its. */
	if (pidfd_send_signal(pidfd, 0, NULL, 0) < 0)
		return fs_error_set(err, ESRCH, "pid %d exited", (int)t->pid);
	*pidfd_out = steal_fd(&pidfd);
	*nsfd_out = steal_fd(&nsfd);
	*rootfd_out = steal_fd(&rootfd);
	return 0;
}

static void sb_write_status(const char *dir, pid_t pid, const char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/status.%d", dir, (int)pid);
	cleanup_close int fd =
	    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0 && write(fd, buf, len) < 0)
		return;
}

/* Reap the child within the deadline, killing it if needed. Returns its
 * wait status, or -ETIMEDOUT if it had to be killed. */
static int sb_reap(int child_pidfd, uint64_t deadline, int *killed)
{
	siginfo_t si;
	struct pollfd p = {.fd = child_pidfd, .events = POLLIN};
	*killed = 0;
	for (;;) {
		int ms = sb_remaining(deadline);
		int r = ms ? poll(&p, 1, ms) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			pidfd_send_signal(child_pidfd, SIGKILL, NULL, 0);
			*killed = 1;
		}
		break;
	}
	memset(&si, 0, sizeof(si));
	while (waitid(P_PIDFD, (id_t)child_pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	if (si.si_code == CLD_EXITED)
		return si.si_status << 8;
	return si.si_status & 0x7f; /* terminating signal */
}

struct sb_parent {
	const struct sandbox_target *t;
	const struct sandbox_job *job;
	int fd, target_pidfd;
	uint64_t deadline;
	char *out;
	size_t len, cap;
	int child_error; /* an SB_ERROR record arrived */
};

static int sb_handle_request(struct sb_parent *p, const char *req, struct fs_error *err)
{
	struct fs_error rerr = {0};
	int r = -EPERM;
	if (p->job->on_request)
		r = p->job->on_request(req, p->target_pidfd, p->job->request_arg, &rerr);
	else
		fs_error_set(&rerr, EPERM, "request '%s' refused", req);
	if (r == 0) {
		int32_t zero = 0;
		r = sb_send(p->fd, SB_REPLY, &zero, sizeof(zero), NULL, 0);
	} else {
		r = sb_send_error(p->fd, SB_REPLY, &rerr, r);
	}
	return r < 0 ? fs_error_set(err, r, "answering the sandboxed child") : 0;
}

/* Read records until EOF. 0, or -errno (the child's error included). */
static int sb_parent_loop(struct sb_parent *p, struct fs_error *err)
{
	for (;;) {
		struct sb_hdr h;
		int r = sb_read_full(p->fd, &h, sizeof(h), p->deadline);
		if (r == 1)
			return 0;
		if (r < 0)
			return fs_error_set(err, -r, "reading from the sandboxed child");
		if (h.type == SB_DATA) {
			if (h.len > p->job->max_out - p->len || p->len + h.len > p->job->max_out)
				return fs_error_set(err, E2BIG,
						    "the sandboxed child sent more than %zu bytes",
						    p->job->max_out);
			if (p->len + h.len + 1 > p->cap) {
				size_t ncap = p->cap ? p->cap : 64 * 1024;
				while (ncap < p->len + h.len + 1)
					ncap *= 2;
				if (ncap > p->job->max_out + 1)
					ncap = p->job->max_out + 1;
				char *nb = realloc(p->out, ncap);
				if (!nb)
					return fs_error_set(err, ENOMEM, "reading sandbox output");
				p->out = nb;
				p->cap = ncap;
			}
			r = sb_read_full(p->fd, p->out + p->len, h.len, p->deadline);
			if (r != 0)
				return fs_error_set(err, r > 0 ? EPIPE : -r,
						    "reading from the sandboxed child");
			p->len += h.len;
			continue;
		}
		if (h.len > SB_MSG_MAX)
			return fs_error_set(err, EPROTO, "sandboxed child sent a %u-byte message",
					    h.len);
		char buf[SB_MSG_MAX + 1];
		r = sb_read_full(p->fd, buf, h.len, p->deadline);
		if (r != 0)
			return fs_error_set(err, r > 0 ? EPIPE : -r,
					    "reading from the sandboxed child");
		buf[h.len] = '\0';
		switch (h.type) {
		case SB_ERROR: {
			int32_t code = EIO;
			if (h.len >= sizeof(code))
				memcpy(&code, buf, sizeof(code));
			if (code <= 0)
				code = EIO;
			if (err) {
				snprintf(err->msg, sizeof(err->msg), "%s",
					 h.len >= sizeof(code) ? buf + sizeof(code) : "");
				err->code = code;
			}
			p->child_error = code;
			break;
		}
		case SB_REQUEST:
			r = sb_handle_request(p, buf, err);
			if (r < 0)
				return r;
			break;
		case SB_STATUS: {
			const char *dir = getenv(SB_STATUS_ENV);
			if (dir)
				sb_write_status(dir, p->t->pid, buf, h.len);
			break;
		}
		default:
			return fs_error_set(err, EPROTO, "sandboxed child sent record type %u",
					    h.type);
		}
	}
}

int sandbox_run(const struct sandbox_target *t, const struct sandbox_job *job, char **out,
		size_t *out_len, struct fs_error *err)
{
	int sv[2];
	cleanup_close int target_pidfd = -1, nsfd = -1, rootfd = -1, child_pidfd = -1, fd = -1;
	uint64_t start = timeutil_now_ms();
	uint64_t deadline = start + job->timeout_ms;
	/* The child gives up a little earlier so that it can still clean up
	 * and say why; the parent's deadline is the hard one. */
	uint64_t margin = job->timeout_ms / 10;
	if (margin < 5)
		margin = job->timeout_ms / 2;
	if (margin > 200)
		margin = 200;

	*out = NULL;
	*out_len = 0;
	int r = sb_check_target(t, &target_pidfd, &nsfd, &rootfd, err);
	if (r < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fs_error_set(err, errno, "socketpair");
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return fs_error_set(err, e, "fork");
	}
	if (pid == 0) {
		close(sv[0]);
		sb_child(t, job, sv[1], nsfd, rootfd, parent, deadline - margin);
	}
	close(sv[1]);
	fd = sv[0];
	child_pidfd = pidfd_open(pid, 0);
	if (child_pidfd < 0) {
		/* Cannot happen for our own unreaped child; be safe anyway. */
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return fs_error_set(err, e, "pidfd_open of the sandboxed child");
	}

	struct sb_parent p = {
	    .t = t, .job = job, .fd = fd, .target_pidfd = target_pidfd, .deadline = deadline};
	struct fs_error lerr = {0};
	r = sb_parent_loop(&p, &lerr);
	if (r < 0)
		pidfd_send_signal(child_pidfd, SIGKILL, NULL, 0);
	int killed;
	int status = sb_reap(child_pidfd, deadline, &killed);
	cleanup_free char *data = p.out;

	if (p.child_error) {
		/* The child said what went wrong; that is the best message. */
		if (err)
			*err = lerr;
		return -p.child_error;
	}
	if (r == -ETIMEDOUT || killed)
		return fs_error_set(err, ETIMEDOUT,
				    "the sandboxed child did not finish within %u ms (killed)",
				    job->timeout_ms);
	if (r < 0) {
		if (err)
			*err = lerr;
		return r;
	}
	if (status & 0x7f)
		return fs_error_set(err, ECHILD, "the sandboxed child was killed by signal %d (%s)",
				    status & 0x7f, strsignal(status & 0x7f));
	if (status >> 8)
		return fs_error_set(err, EIO, "the sandboxed child exited with status %d",
				    status >> 8);
	if (!data) {
		data = calloc(1, 1);
		if (!data)
			return fs_error_set(err, ENOMEM, "sandbox output");
	}
	data[p.len] = '\0';
	*out_len = p.len;
	*out = steal_pointer(&data);
	return 0;
}
