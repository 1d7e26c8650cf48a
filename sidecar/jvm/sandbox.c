/* sandbox.c - see sandbox.h */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "jail.h"
#include "proc.h"
#include "textsafe.h"
#include "timeutil.h"

enum {
	SB_DATA = 1,		 /* child -> parent: output bytes */
	SB_ERROR = 2,		 /* child -> parent: int32 code, message */
	SB_REQUEST = 3,		 /* child -> parent: request string */
	SB_STATUS = JAIL_STATUS, /* child -> parent: /proc/self/status (test hook) */
	SB_REPLY = 5,		 /* parent -> child: int32 code, message */
	SB_FD = 6,		 /* child -> parent: no data, one fd (SCM_RIGHTS) */
};

#define SB_CHUNK   (256u * 1024) /* largest data record the child sends */
#define SB_MSG_MAX (64u * 1024)	 /* largest non-data record */
#ifdef FS_TEST_BUILD
/* The test build's hook (sandbox.h); the installed binary has none and
 * writes no file the environment names. */
#define SB_STATUS_ENV "FS_TEST_SANDBOX_STATUS"
#endif

struct sb_hdr {
	uint32_t type;
	uint32_t len;
};

struct sandbox_child {
	int fd;
	uint64_t deadline;
};

static int sb_send_error(int fd, uint32_t type, const struct fs_error *e, int code)
{
	int32_t c = code < 0 ? -code : code;
	const char *msg = e && e->msg[0] ? e->msg : "unknown error";
	return jail_send(fd, type, &c, sizeof(c), msg, strnlen(msg, FS_ERROR_MSG_MAX - 1));
}

/* ---- child side ---------------------------------------------------------- */

int sandbox_child_write(struct sandbox_child *c, const void *buf, size_t len, struct fs_error *err)
{
	const char *p = buf;
	while (len) {
		size_t n = len < SB_CHUNK ? len : SB_CHUNK;
		int r = jail_send(c->fd, SB_DATA, p, n, NULL, 0);
		if (r < 0)
			return fs_error_set(err, r, "sending data to the sidecar");
		p += n;
		len -= n;
	}
	return 0;
}

int sandbox_child_send_fd(struct sandbox_child *c, int fd, struct fs_error *err)
{
	struct sb_hdr h = {SB_FD, 0};
	struct iovec iov = {&h, sizeof(h)};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	ssize_t n;
	/* The header is 8 bytes: one segment, sent whole or not at all. */
	while ((n = sendmsg(c->fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(h))
		return fs_error_set(err, n < 0 ? errno : EPIPE, "handing an fd to the sidecar");
	return 0;
}

uint64_t sandbox_child_deadline(const struct sandbox_child *c)
{
	return c->deadline;
}

int sandbox_child_request(struct sandbox_child *c, const char *req, struct fs_error *err)
{
	struct sb_hdr h;
	char buf[FS_ERROR_MSG_MAX + sizeof(int32_t)];
	int r = jail_send(c->fd, SB_REQUEST, req, strlen(req), NULL, 0);
	if (r < 0)
		return fs_error_set(err, r, "asking the sidecar to '%s'", req);
	r = jail_read_full(c->fd, &h, sizeof(h), c->deadline);
	if (r == 0 && (h.type != SB_REPLY || h.len < sizeof(int32_t) || h.len > sizeof(buf)))
		r = -EPROTO;
	if (r == 0)
		r = jail_read_full(c->fd, buf, h.len, c->deadline);
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

/* What the attach child may ask of the kernel; everything else fails with
 * EPERM (docs/security.md says why each one is here). Opens resolve from
 * its working directory, the target's root: never through a dirfd, and
 * openat only for reading. */
#define SB_AT_FDCWD(arg)                                                                           \
	{                                                                                          \
		(arg), SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)AT_FDCWD                         \
	}
#define SB_NO_EXEC                                                                                 \
	{                                                                                          \
		2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0                                                \
	}
#define SB_STDIO                                                                                   \
	{                                                                                          \
		0, SCMP_CMP_LE, 2, 0                                                               \
	}
#define SB_READ_ONLY                                                                               \
	{                                                                                          \
		2, SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND, 0                 \
	}
/* clang-format off */
static const struct jail_rule sb_allowed[] = {
	JAIL_ALLOW("read"), JAIL_ALLOW("readv"), JAIL_ALLOW("pread64"), JAIL_ALLOW("close"),
	JAIL_ALLOW("lseek"), JAIL_ALLOW("fstat"),
	JAIL_ALLOW_IF("write", 1, SB_STDIO), JAIL_ALLOW_IF("writev", 1, SB_STDIO),
	JAIL_ALLOW_IF("openat", 2, SB_AT_FDCWD(0), SB_READ_ONLY),
	JAIL_ALLOW_IF("openat2", 1, SB_AT_FDCWD(0)),
	JAIL_ALLOW_IF("newfstatat", 1, SB_AT_FDCWD(0)),
	JAIL_ALLOW_IF("newfstatat", 1, {3, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH}),
	JAIL_ALLOW_IF("statx", 1, SB_AT_FDCWD(0)),
	JAIL_ALLOW_IF("statx", 1, {2, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH}),
	JAIL_ALLOW_IF("unlinkat", 1, SB_AT_FDCWD(0)),
	JAIL_ALLOW_IF("fcntl", 1, {1, SCMP_CMP_LE, F_SETFL, 0}),
	JAIL_ALLOW_IF("mmap", 1, SB_NO_EXEC), JAIL_ALLOW_IF("mprotect", 1, SB_NO_EXEC),
	JAIL_ALLOW("munmap"), JAIL_ALLOW("mremap"), JAIL_ALLOW("brk"), JAIL_ALLOW("madvise"),
	JAIL_ALLOW_IF("socket", 1, {0, SCMP_CMP_EQ, AF_UNIX, 0}),
	JAIL_ALLOW("connect"), JAIL_ALLOW("getsockopt"), JAIL_ALLOW("sendto"), JAIL_ALLOW("sendmsg"),
	JAIL_ALLOW("recvfrom"), JAIL_ALLOW("recvmsg"),
	JAIL_ALLOW("poll"), JAIL_ALLOW("ppoll"), JAIL_ALLOW("nanosleep"), JAIL_ALLOW("clock_nanosleep"),
	JAIL_ALLOW("clock_gettime"), JAIL_ALLOW("gettimeofday"),
	JAIL_ALLOW("exit"), JAIL_ALLOW("exit_group"), JAIL_ALLOW("rt_sigreturn"),
	JAIL_ALLOW("rt_sigprocmask"), JAIL_ALLOW("restart_syscall"),
	JAIL_ALLOW("getpid"), JAIL_ALLOW("gettid"), JAIL_ALLOW("getuid"), JAIL_ALLOW("geteuid"),
	JAIL_ALLOW("getgid"), JAIL_ALLOW("getegid"),
	JAIL_ALLOW_IF("tgkill", 1, {0, SCMP_CMP_EQ, JAIL_SELF, 0}), /* raise/abort: itself only */
	JAIL_ALLOW("futex"), JAIL_ALLOW("getrandom"), JAIL_ALLOW("sched_yield"),
	JAIL_ALLOW("sigaltstack"), /* AddressSanitizer checks it on _exit */
};
/* clang-format on */

struct sb_child_arg {
	const struct sandbox_job *job;
	uint64_t deadline;
};

/* The child, confined by the jail (or told why it is not). */
static __attribute__((noreturn)) void sb_child(const struct fs_error *setup_err, void *argp)
{
	struct sb_child_arg *a = argp;
	struct sandbox_child c = {.fd = JAIL_FD, .deadline = a->deadline};
	struct fs_error err = {0};
	if (setup_err) {
		sb_send_error(JAIL_FD, SB_ERROR, setup_err,
			      setup_err->code ? setup_err->code : EIO);
		_exit(1);
	}
	int r = a->job->fn(&c, a->job->arg, &err);
	if (r < 0) {
		sb_send_error(JAIL_FD, SB_ERROR, &err, r);
		_exit(1);
	}
	_exit(0);
}

/* ---- parent side --------------------------------------------------------- */

/* The target's pidfd, and fds of its namespaces and root (fds[0] network,
 * fds[1] mount, fds[2] root), all of the process the pidfd names. */
static int sb_check_target(const struct sandbox_target *t, int *pidfd_out, int fds[3],
			   struct fs_error *err)
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
	/* Its network namespace: abstract unix sockets are per network
	 * namespace, and the host's (a runtime's shim, a bus) are not the
	 * child's to reach. */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)t->pid);
	cleanup_close int netfd = open(path, O_RDONLY | O_CLOEXEC);
	if (netfd < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	/* Still the process the pidfd names, so the ns and root fds are its. */
	if (pidfd_send_signal(pidfd, 0, NULL, 0) < 0)
		return fs_error_set(err, ESRCH, "pid %d exited", (int)t->pid);
	*pidfd_out = steal_fd(&pidfd);
	fds[0] = steal_fd(&netfd);
	fds[1] = steal_fd(&nsfd);
	fds[2] = steal_fd(&rootfd);
	return 0;
}

#ifdef FS_TEST_BUILD
static void sb_write_status(const char *dir, pid_t pid, const char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/status.%d", dir, (int)pid);
	cleanup_close int fd =
	    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0 && write(fd, buf, len) < 0)
		return;
}
#endif

struct sb_parent {
	const struct sandbox_target *t;
	const struct sandbox_job *job;
	int fd, target_pidfd;
	uint64_t deadline;
	char *out;
	size_t len, cap;
	int child_error; /* an SB_ERROR record arrived */
	int fd_in;	 /* the fd of an SB_FD record, or -1 */
};

/* Close every fd an SCM_RIGHTS message of m carries but *keep (the first
 * one, kept when keep is not NULL and nothing else came). 0, or -EPROTO
 * when more than one fd (or a truncated set) came. */
static int sb_take_fds(struct msghdr *m, int *keep)
{
	int n = 0, r = (m->msg_flags & MSG_CTRUNC) ? -EPROTO : 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < cnt; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (keep && *keep < 0 && n == 0)
				*keep = fd;
			else
				close(fd);
			n++;
		}
	}
	if (n > 1 || (r < 0 && n > 0)) {
		if (keep && *keep >= 0) {
			close(*keep);
			*keep = -1;
		}
		return -EPROTO;
	}
	return r;
}

/* jail_read_full for a record header, by recvmsg: an fd the child sends
 * comes with the header of its SB_FD record and lands in *fd (-1 when
 * none; more than one is -EPROTO). 0, 1 at EOF before any byte, -errno. */
static int sb_read_hdr(int sock, struct sb_hdr *h, uint64_t deadline, int *fd)
{
	size_t got = 0;
	*fd = -1;
	while (got < sizeof(*h)) {
		int r = jail_wait_readable(sock, deadline);
		if (r < 0)
			return r;
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} u;
		struct iovec iov = {(char *)h + got, sizeof(*h) - got};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = u.buf,
				   .msg_controllen = sizeof(u.buf)};
		ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if ((r = sb_take_fds(&m, fd)) < 0)
			return r;
		if (n == 0) {
			if (*fd >= 0) {
				close(*fd);
				*fd = -1;
			}
			return got ? -EPIPE : 1;
		}
		got += (size_t)n;
	}
	return 0;
}

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
		r = jail_send(p->fd, SB_REPLY, &zero, sizeof(zero), NULL, 0);
	} else {
		r = sb_send_error(p->fd, SB_REPLY, &rerr, r);
	}
	return r < 0 ? fs_error_set(err, r, "answering the sandboxed child") : 0;
}

/* An fd came with header h: one fd per run, with its own record, and
 * only to a job that takes one. 0, or -EPROTO (fd closed). */
static int sb_take_fd_record(struct sb_parent *p, const struct sb_hdr *h, int fd,
			     struct fs_error *err)
{
	if (fd < 0 || h->type != SB_FD || h->len || !p->job->fd_out || p->fd_in >= 0) {
		if (fd >= 0)
			close(fd);
		return fs_error_set(err, EPROTO, "the sandboxed child sent an fd unasked");
	}
	p->fd_in = fd;
	return 0;
}

/* The body of an SB_DATA record of header h, appended to p->out within
 * the job's max_out. 0 or -errno. */
static int sb_read_data(struct sb_parent *p, const struct sb_hdr *h, struct fs_error *err)
{
	if (h->len > p->job->max_out - p->len || p->len + h->len > p->job->max_out)
		return fs_error_set(err, E2BIG, "the sandboxed child sent more than %zu bytes",
				    p->job->max_out);
	if (p->len + h->len + 1 > p->cap) {
		size_t ncap = p->cap ? p->cap : 64 * 1024;
		while (ncap < p->len + h->len + 1)
			ncap *= 2;
		if (ncap > p->job->max_out + 1)
			ncap = p->job->max_out + 1;
		char *nb = realloc(p->out, ncap);
		if (!nb)
			return fs_error_set(err, ENOMEM, "reading sandbox output");
		p->out = nb;
		p->cap = ncap;
	}
	int r = jail_read_full(p->fd, p->out + p->len, h->len, p->deadline);
	if (r != 0)
		return fs_error_set(err, r > 0 ? EPIPE : -r, "reading from the sandboxed child");
	p->len += h->len;
	return 0;
}

/* Read records until EOF. 0, or -errno (the child's error included). */
static int sb_parent_loop(struct sb_parent *p, struct fs_error *err)
{
	for (;;) {
		struct sb_hdr h;
		int fd = -1;
		int r = sb_read_hdr(p->fd, &h, p->deadline, &fd);
		if (r == 1)
			return 0;
		if (r < 0)
			return fs_error_set(err, -r, "reading from the sandboxed child");
		if (fd >= 0 || h.type == SB_FD) {
			if ((r = sb_take_fd_record(p, &h, fd, err)) < 0)
				return r;
			continue;
		}
		if (h.type == SB_DATA) {
			if ((r = sb_read_data(p, &h, err)) < 0)
				return r;
			continue;
		}
		if (h.len > SB_MSG_MAX)
			return fs_error_set(err, EPROTO, "sandboxed child sent a %u-byte message",
					    h.len);
		char buf[SB_MSG_MAX + 1];
		r = jail_read_full(p->fd, buf, h.len, p->deadline);
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
				/* The child works for the container and may be
				 * its: its words reach terminals and logs escaped. */
				textsafe_n(buf + sizeof(code),
					   h.len >= sizeof(code) ? h.len - sizeof(code) : 0,
					   err->msg, sizeof(err->msg), 0);
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
#ifdef FS_TEST_BUILD
		case SB_STATUS: {
			const char *dir = getenv(SB_STATUS_ENV);
			if (dir)
				sb_write_status(dir, p->t->pid, buf, h.len);
			break;
		}
#endif
		default:
			return fs_error_set(err, EPROTO, "sandboxed child sent record type %u",
					    h.type);
		}
	}
}

/* What the run came to: the child's own error first, then the parent's
 * (r, lerr), the deadline, how the child ended; else its output. */
static int sb_result(struct sb_parent *p, int r, int status, const struct fs_error *lerr,
		     char **out, size_t *out_len, struct fs_error *err)
{
	const struct sandbox_job *job = p->job;
	cleanup_free char *data = p->out;
	cleanup_close int fd_in = p->fd_in;

	if (p->child_error) {
		/* The child said what went wrong; that is the best message. */
		if (err)
			*err = *lerr;
		return -p->child_error;
	}
	if (r == -ETIMEDOUT || (r == 0 && status == -ETIMEDOUT))
		return fs_error_set(err, ETIMEDOUT,
				    "the sandboxed child did not finish within %u ms (killed)",
				    job->timeout_ms);
	if (r < 0) {
		if (err)
			*err = *lerr;
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
	data[p->len] = '\0';
	*out_len = p->len;
	*out = steal_pointer(&data);
	if (job->fd_out)
		*job->fd_out = steal_fd(&fd_in);
	return 0;
}

int sandbox_parent_records(int fd, const struct sandbox_job *job, uint64_t deadline, char **out,
			   size_t *out_len, struct fs_error *err)
{
	static const struct sandbox_target none = {0};
	struct sb_parent p = {.t = &none,
			      .job = job,
			      .fd = fd,
			      .target_pidfd = -1,
			      .deadline = deadline,
			      .fd_in = -1};
	struct fs_error lerr = {0};
	*out = NULL;
	*out_len = 0;
	if (job->fd_out)
		*job->fd_out = -1;
	int r = sb_parent_loop(&p, &lerr);
	return sb_result(&p, r, 0, &lerr, out, out_len, err);
}

int sandbox_run(const struct sandbox_target *t, const struct sandbox_job *job, char **out,
		size_t *out_len, struct fs_error *err)
{
	cleanup_close int target_pidfd = -1;
	int fds[3] = {-1, -1, -1};
	uint64_t deadline = timeutil_now_ms() + job->timeout_ms;
	/* The child gives up a little earlier so that it can still clean up
	 * and say why; the parent's deadline is the hard one. */
	uint64_t margin = job->timeout_ms / 10;
	if (margin < 5)
		margin = job->timeout_ms / 2;
	if (margin > 200)
		margin = 200;

	*out = NULL;
	*out_len = 0;
	if (job->fd_out)
		*job->fd_out = -1;
	int r = sb_check_target(t, &target_pidfd, fds, err);
	if (r < 0)
		return r;
	struct sb_child_arg ca = {.job = job, .deadline = deadline - margin};
	struct jail_spec spec = {.what = "the sandboxed child",
				 .allow = sb_allowed,
				 .nallow = FS_ARRAY_SIZE(sb_allowed),
				 .net_ns_fd = fds[0],
				 .mnt_ns_fd = fds[1],
				 .root_fd = fds[2],
				 /* HotSpot's attach trigger file and socket */
				 .writable = "/tmp",
				 .set_ids = 1,
				 .uid = t->uid,
				 .gid = t->gid,
#ifdef FS_TEST_BUILD
				 .send_status = getenv(SB_STATUS_ENV) != NULL,
#endif
				 .main = sb_child,
				 .arg = &ca};
	struct jail_child child;
	r = jail_spawn(&spec, &child, err);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (r < 0)
		return r;

	struct sb_parent p = {.t = t,
			      .job = job,
			      .fd = child.sock,
			      .target_pidfd = target_pidfd,
			      .deadline = deadline,
			      .fd_in = -1};
	struct fs_error lerr = {0};
	r = sb_parent_loop(&p, &lerr);
	int status = jail_reap(&child, r < 0 ? 0 : deadline);
	return sb_result(&p, r, status, &lerr, out, out_len, err);
}
