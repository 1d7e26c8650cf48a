/* elfjail.c - see elfjail.h */
#include "elfjail.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfiflat.h"
#include "cleanup.h"
#include "elfdebug.h"
#include "elfflat.h"
#include "proc.h"
#include "timeutil.h"

#define ELFJAIL_MSG_MAX 512	  /* an error message from the child */
#define ELFJAIL_SOCKBUF (4 << 20) /* the child's send buffer, when we may */

#if defined(__SANITIZE_ADDRESS__)
#define ELFJAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ELFJAIL_ASAN 1
#endif
#endif

struct elfjail {
	struct elfjail_opts o;
	pid_t pid; /* 0: no child */
	int pidfd, sock;
};

/* A reply: status (positive errno, 0 = ok), then len bytes: the elfflat
 * encoding, or the error message. */
struct elfjail_reply {
	int32_t status;
	uint32_t len;
};

/* ---- the child ---------------------------------------------------------- */

static int elfjail_send_all(int sock, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void elfjail_reply(int sock, int status, const void *data, size_t len)
{
	struct elfjail_reply h = {status < 0 ? -status : status, (uint32_t)len};
	if (elfjail_send_all(sock, &h, sizeof(h)) < 0 || elfjail_send_all(sock, data, len) < 0)
		_exit(1);
}

/* The next request from the parent: its kind ('D' parse and demangle,
 * 'R' parse, 'O' data symbols, 'C' call frame information, 'N' demangle
 * one name, 'L' debug links, 'X' MiniDebugInfo symbols) and the fd it
 * carries (-2 none).
 * -1 when the parent closed the channel. */
static int elfjail_recv(int sock, char *kind, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = {kind, 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return -1;
	*fd = -2;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(*fd));
	return 0;
}

static int elfjail_read_exact(int sock, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(sock, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 'N': a u32 length and the name follow; the answer is its display name. */
static void elfjail_serve_name(int sock)
{
	uint32_t len;
	char name[ELFSYMS_MAX_NAME + 1], out[ELFSYMS_MAX_NAME];
	if (elfjail_read_exact(sock, &len, sizeof(len)) < 0 || len > ELFSYMS_MAX_NAME ||
	    elfjail_read_exact(sock, name, len) < 0)
		_exit(1);
	name[len] = '\0';
	if (elfsyms_demangle(name, out, sizeof(out)) > 0)
		elfjail_reply(sock, 0, out, strlen(out));
	else
		elfjail_reply(sock, ENOENT, "not demangled", 13);
}

/* 'L' the debug links of a file (struct elfdebug_links), 'X' the symbols
 * of its MiniDebugInfo (elfflat, names mangled). liblzma's single-threaded
 * decoder needs nothing but memory: no syscall is added to the allowlist. */
static int elfjail_serve_debug(char kind, int fd, char **buf, size_t *len, struct fs_error *e)
{
	if (kind == 'L') {
		struct elfdebug_links *l = calloc(1, sizeof(*l));
		int r = l ? elfdebug_links_fd(fd, l, e) : fs_error_set(e, ENOMEM, "links");
		if (r < 0) {
			free(l);
			return r;
		}
		*buf = (char *)l;
		*len = sizeof(*l);
		return 0;
	}
	struct elfsyms *es = NULL;
	int r = elfdebug_debugdata_fd(fd, &es, e);
	if (r == 0 && (r = elfflat_encode(es, 0, buf, len)) < 0)
		fs_error_set(e, -r, "encoding the MiniDebugInfo symbols");
	elfsyms_free(es);
	return r;
}

/* Answer every request: parse a file, demangle a name, or say why this
 * child cannot (setup_err set: it failed to sandbox itself). */
static __attribute__((noreturn)) void elfjail_serve(int sock, const struct fs_error *setup_err)
{
	for (;;) {
		char kind = 0;
		int fd = -2;
		if (elfjail_recv(sock, &kind, &fd) < 0)
			_exit(0);
		if (kind == 'N' && !setup_err) {
			if (fd >= 0)
				close(fd);
			elfjail_serve_name(sock);
			continue;
		}
		if (kind == 'N') /* a name is not read by a child that failed its setup */
			_exit(1);
		struct fs_error e = {0};
		struct elfsyms *es = NULL;
		char *buf = NULL;
		size_t len = 0;
		int r = -EPROTO;
		if (setup_err)
			e = *setup_err, r = -(setup_err->code ? setup_err->code : EPERM);
		else if (fd < 0)
			fs_error_set(&e, EPROTO, "no file descriptor in the request");
		else if (kind == 'C')
			r = cfiflat_encode_fd(fd, &buf, &len, &e);
		else if (kind == 'L' || kind == 'X')
			r = elfjail_serve_debug(kind, fd, &buf, &len, &e);
		else if ((r = kind == 'O' ? elfsyms_load_fd_objects(fd, &es, &e)
					  : elfsyms_load_fd(fd, &es, &e)) == 0 &&
			 (r = elfflat_encode(es, kind == 'D', &buf, &len)) < 0)
			fs_error_set(&e, -r, "encoding the symbol table");
		if (fd >= 0)
			close(fd);
		elfsyms_free(es);
		if (r == 0)
			elfjail_reply(sock, 0, buf, len);
		else
			elfjail_reply(sock, r, e.msg, strnlen(e.msg, sizeof(e.msg)));
		free(buf);
	}
}

static int elfjail_drop_privileges(void)
{
	if (geteuid() == 0) {
		for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
			if (cap_drop_bound(cap) < 0 && errno != EINVAL && errno != EPERM)
				return -errno;
		if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0)
			return -errno;
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 || setgroups(0, NULL) < 0 ||
		    setresgid(ELFJAIL_UID, ELFJAIL_UID, ELFJAIL_UID) < 0 ||
		    setresuid(ELFJAIL_UID, ELFJAIL_UID, ELFJAIL_UID) < 0)
			return -errno;
	}
	cap_t caps = cap_init();
	int r = caps && cap_set_proc(caps) == 0 ? 0 : -errno;
	if (caps)
		cap_free(caps);
	if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -errno;
	return r;
}

/* What libelf, the demangler and malloc need on an fd it was given, and
 * nothing else: no open, no exec, no sockets, no signals to others. */
/* clang-format off */
static const char *const elfjail_allowed[] = {
	"read", "pread64", "write", "lseek", "close", "fstat", "recvmsg", "sendto", "sendmsg",
	"mmap", "munmap", "mremap", "mprotect", "brk", "madvise",
	"exit", "exit_group", "rt_sigreturn", "rt_sigprocmask", "restart_syscall",
	"futex", "getrandom", "clock_gettime", "getpid", "gettid",
	"sigaltstack", /* AddressSanitizer checks it on _exit */
};
/* clang-format on */

static int elfjail_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = 0;
	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; i < FS_ARRAY_SIZE(elfjail_allowed) && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(elfjail_allowed[i]);
		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	/* fstat() is fstatat(fd, "", AT_EMPTY_PATH) in glibc: no paths. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
				     SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

/* Address space in use now (the fork's copy of the sidecar's). */
static __attribute__((unused)) uint64_t elfjail_vm_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int elfjail_limits(size_t memory)
{
	struct rlimit zero = {0, 0}, nofile = {16, 16};
	if (setrlimit(RLIMIT_CORE, &zero) < 0 || setrlimit(RLIMIT_FSIZE, &zero) < 0)
		return -errno;
#ifndef ELFJAIL_ASAN /* AddressSanitizer reserves terabytes of shadow */
	uint64_t vm = elfjail_vm_bytes();
	struct rlimit as = {vm + memory, vm + memory};
	if (vm == 0 || setrlimit(RLIMIT_AS, &as) < 0)
		return vm ? -errno : -EIO;
#else
	(void)memory;
#endif
	return setrlimit(RLIMIT_NOFILE, &nofile) < 0 ? -errno : 0;
}

static __attribute__((noreturn)) void elfjail_child(int sock, pid_t parent, size_t memory)
{
	struct fs_error e = {0};
	sigset_t none;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	/* Not ptrace-able nor readable through /proc by anyone but root. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	/* The channel becomes fd 3; 0-2 are /dev/null; nothing else stays. */
	int high = fcntl(sock, F_DUPFD, 10);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (high < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(high, 3) < 0)
		_exit(1);
	close_range(4, ~0u, 0);
	int r = proc_unmap_shared();
	if (r < 0)
		fs_error_set(&e, -r, "ELF sandbox: unmapping the sidecar's shared memory");
	else if ((r = elfjail_limits(memory)) < 0)
		fs_error_set(&e, -r, "ELF sandbox: setting resource limits");
	else if ((r = elfjail_drop_privileges()) < 0)
		fs_error_set(&e, -r, "ELF sandbox: dropping privileges");
	else if ((r = elfjail_seccomp()) < 0)
		fs_error_set(&e, -r, "ELF sandbox: loading the seccomp filter");
	elfjail_serve(3, r < 0 ? &e : NULL);
}

/* ---- the parent --------------------------------------------------------- */

int elfjail_open(const struct elfjail_opts *opts, struct elfjail **out, struct fs_error *err)
{
	struct elfjail *j = calloc(1, sizeof(*j));
	if (!j)
		return fs_error_set(err, ENOMEM, "allocating the ELF sandbox");
	if (opts)
		j->o = *opts;
	if (!j->o.timeout_ms)
		j->o.timeout_ms = ELFJAIL_TIMEOUT_MS;
	if (!j->o.memory)
		j->o.memory = ELFJAIL_MEMORY;
	if (!j->o.name_timeout_ms)
		j->o.name_timeout_ms = ELFJAIL_NAME_TIMEOUT_MS;
	j->pidfd = j->sock = -1;
	*out = j;
	return 0;
}

/* Kill (if still running) and reap the child. Returns its wait status
 * when it ended by itself within wait_ms, or -1 when it had to be killed. */
static int elfjail_stop(struct elfjail *j, int wait_ms)
{
	if (!j->pid)
		return -1;
	struct pollfd p = {.fd = j->pidfd, .events = POLLIN};
	int ended = wait_ms > 0 && poll(&p, 1, wait_ms) == 1;
	if (!ended)
		pidfd_send_signal(j->pidfd, SIGKILL, NULL, 0);
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	while (waitid(P_PIDFD, (id_t)j->pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	close(j->pidfd);
	close(j->sock);
	j->pidfd = j->sock = -1;
	j->pid = 0;
	if (!ended)
		return -1;
	return si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status & 0x7f;
}

void elfjail_close(struct elfjail *j)
{
	if (!j)
		return;
	elfjail_stop(j, 0);
	free(j);
}

int elfjail_child_pid(const struct elfjail *j)
{
	return j ? j->pid : 0;
}

static int elfjail_start(struct elfjail *j, struct fs_error *err)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fs_error_set(err, errno, "ELF sandbox: socketpair");
	/* A whole table in one go where allowed: each refill of a small
	 * socket buffer is a round of scheduling on a busy host. */
	int sndbuf = ELFJAIL_SOCKBUF;
	if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return fs_error_set(err, e, "ELF sandbox: fork");
	}
	if (pid == 0)
		elfjail_child(sv[1], parent, j->o.memory);
	close(sv[1]);
	int pidfd = pidfd_open(pid, 0);
	if (pidfd < 0) {
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(sv[0]);
		return fs_error_set(err, e, "ELF sandbox: pidfd_open");
	}
	j->pid = pid;
	j->pidfd = pidfd;
	j->sock = sv[0];
	return 0;
}

static int elfjail_send_fd(int sock, int fd, char byte)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct iovec iov = {&byte, 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	ssize_t n;
	while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n == 1 ? 0 : -(n < 0 ? errno : EPIPE);
}

/* Exactly len bytes before deadline: 0, -EPIPE at EOF, -ETIMEDOUT or -errno. */
static int elfjail_read_full(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;
	while (got < len) {
		uint64_t now = timeutil_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

/* The channel failed (r): stop the child and say why. */
static int elfjail_fail(struct elfjail *j, int r, struct fs_error *err)
{
	if (r == -ETIMEDOUT) {
		elfjail_stop(j, 0);
		return fs_error_set(err, ETIMEDOUT,
				    "the ELF sandbox did not answer within %u ms "
				    "(killed)",
				    j->o.timeout_ms);
	}
	int st = elfjail_stop(j, 100);
	if (st > 0 && (st & 0x7f))
		return fs_error_set(err, ECHILD, "the ELF sandbox was killed by signal %d (%s)",
				    st & 0x7f, strsignal(st & 0x7f));
	if (st >= 0)
		return fs_error_set(err, ECHILD, "the ELF sandbox exited with status %d", st >> 8);
	return fs_error_set(err, -r, "talking to the ELF sandbox (killed)");
}

/* Read an error reply's message into err and return -status. */
static int elfjail_error_reply(struct elfjail *j, const struct elfjail_reply *h, uint64_t deadline,
			       struct fs_error *err)
{
	char msg[ELFJAIL_MSG_MAX + 1];
	int r;
	if (h->len > ELFJAIL_MSG_MAX || h->status < 0 || h->status > 4095) {
		elfjail_stop(j, 0);
		return fs_error_set(err, EBADMSG, "the ELF sandbox sent a bad error record");
	}
	if ((r = elfjail_read_full(j->sock, msg, h->len, deadline)) < 0)
		return elfjail_fail(j, r, err);
	msg[h->len] = '\0';
	for (size_t i = 0; i < h->len; i++)
		if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f)
			msg[i] = '?';
	fs_error_set(err, 0, "%s", msg);
	if (err)
		err->code = h->status;
	return -h->status;
}

int elfjail_demangle(struct elfjail *j, const char *name, char *out, size_t len,
		     struct fs_error *err)
{
	struct elfjail_reply h;
	size_t nl = strnlen(name, ELFSYMS_MAX_NAME + 1);
	if (nl > ELFSYMS_MAX_NAME || len == 0)
		return fs_error_set(err, ENAMETOOLONG, "a %zu-byte name", nl);
	int r = j->pid ? 0 : elfjail_start(j, err);
	if (r < 0)
		return r;
	/* The timeout is the name's own: elfjail_fail says it in ms. */
	unsigned file_timeout = j->o.timeout_ms;
	j->o.timeout_ms = j->o.name_timeout_ms;
	uint64_t deadline = timeutil_now_ms() + j->o.name_timeout_ms;
	char req[1 + sizeof(uint32_t) + ELFSYMS_MAX_NAME];
	uint32_t l32 = (uint32_t)nl;
	req[0] = 'N';
	memcpy(req + 1, &l32, sizeof(l32));
	memcpy(req + 1 + sizeof(l32), name, nl);
	if (elfjail_send_all(j->sock, req, 1 + sizeof(l32) + nl) < 0)
		r = elfjail_fail(j, -EPIPE, err);
	else if ((r = elfjail_read_full(j->sock, &h, sizeof(h), deadline)) < 0)
		r = elfjail_fail(j, r, err);
	else if (h.status != 0)
		r = elfjail_error_reply(j, &h, deadline, err);
	else if (h.len >= len || h.len >= ELFSYMS_MAX_NAME) {
		elfjail_stop(j, 0);
		r = fs_error_set(err, EBADMSG, "the ELF sandbox sent a %u-byte name", h.len);
	} else if ((r = elfjail_read_full(j->sock, out, h.len, deadline)) < 0) {
		r = elfjail_fail(j, r, err);
	} else {
		out[h.len] = '\0';
		if (memchr(out, '\0', h.len)) {
			elfjail_stop(j, 0);
			r = fs_error_set(err, EBADMSG, "the ELF sandbox sent a name with a NUL");
		}
	}
	j->o.timeout_ms = file_timeout;
	return r;
}

/* Send fd with request kind, read the reply's bytes (at most max) into
 * *buf (malloc'd). 0 or -errno as elfjail_parse. */
static int elfjail_request(struct elfjail *j, int fd, char kind, size_t max, char **buf,
			   size_t *len, struct fs_error *err)
{
	struct elfjail_reply h;
	*buf = NULL;
	*len = 0;
	int r = j->pid ? 0 : elfjail_start(j, err);
	if (r < 0)
		return r;
	uint64_t deadline = timeutil_now_ms() + j->o.timeout_ms;
	if ((r = elfjail_send_fd(j->sock, fd, kind)) < 0 ||
	    (r = elfjail_read_full(j->sock, &h, sizeof(h), deadline)) < 0)
		return elfjail_fail(j, r, err);
	if (h.status != 0)
		return elfjail_error_reply(j, &h, deadline, err);
	if (h.len > max) {
		elfjail_stop(j, 0);
		return fs_error_set(err, E2BIG, "the ELF sandbox sent %u bytes, over %zu (killed)",
				    h.len, max);
	}
	cleanup_free char *b = malloc(h.len ? h.len : 1);
	if (!b)
		return fs_error_set(err, ENOMEM, "reading from the ELF sandbox");
	if ((r = elfjail_read_full(j->sock, b, h.len, deadline)) < 0)
		return elfjail_fail(j, r, err);
	*buf = b;
	b = NULL;
	*len = h.len;
	return 0;
}

int elfjail_parse(struct elfjail *j, int fd, unsigned flags, struct elfsyms **out,
		  struct fs_error *err)
{
	char kind = (flags & ELFJAIL_DEBUGDATA)	 ? 'X'
		    : (flags & ELFJAIL_OBJECTS)	 ? 'O'
		    : (flags & ELFJAIL_DEMANGLE) ? 'D'
						 : 'R';
	cleanup_free char *buf = NULL;
	size_t len;
	*out = NULL;
	int r = elfjail_request(j, fd, kind, ELFFLAT_MAX_BYTES, &buf, &len, err);
	if (r < 0)
		return r;
	r = elfflat_decode(buf, len, out, err);
	if (r == -EBADMSG)
		elfjail_stop(j, 0); /* it lied once: do not trust it again */
	return r;
}

int elfjail_cfi(struct elfjail *j, int fd, char **buf, size_t *len, struct fs_error *err)
{
	return elfjail_request(j, fd, 'C', CFIFLAT_MAX_BYTES, buf, len, err);
}

void elfjail_distrust(struct elfjail *j)
{
	elfjail_stop(j, 0);
}

int elfjail_links(struct elfjail *j, int fd, struct elfdebug_links *out, struct fs_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len;
	memset(out, 0, sizeof(*out));
	int r = elfjail_request(j, fd, 'L', sizeof(*out), &buf, &len, err);
	if (r < 0)
		return r;
	if (len != sizeof(*out)) {
		elfjail_stop(j, 0);
		return fs_error_set(err, EBADMSG, "the ELF sandbox sent %zu bytes of links", len);
	}
	memcpy(out, buf, sizeof(*out));
	out->link[sizeof(out->link) - 1] = '\0';
	if (!elfdebug_links_valid(out)) {
		elfjail_stop(j, 0);
		memset(out, 0, sizeof(*out));
		return fs_error_set(err, EBADMSG, "the ELF sandbox sent a malformed debug link");
	}
	return 0;
}
