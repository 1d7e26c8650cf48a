/* elfjail.c - see elfjail.h */
#include "elfjail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cfiflat.h"
#include "cleanup.h"
#include "elfdebug.h"
#include "elfflat.h"
#include "jail.h"
#include "proc.h"
#include "timeutil.h"

#define ELFJAIL_MSG_MAX 512	  /* an error message from the child */
#define ELFJAIL_SOCKBUF (4 << 20) /* the child's send buffer, when we may */

struct elfjail {
	struct elfjail_opts o;
	struct jail_child c; /* c.pid 0: no child */
};

/* A reply: status (positive errno, 0 = ok), then len bytes: the elfflat
 * encoding, or the error message. */
struct elfjail_reply {
	int32_t status;
	uint32_t len;
};

/* ---- the child ---------------------------------------------------------- */

/* All of buf to sock: 0, or -errno (-EPIPE when the peer is gone). */
static int elfjail_send_all(int sock, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A jail.h record whose type is the status. */
static void elfjail_reply(int sock, int status, const void *data, size_t len)
{
	if (jail_send(sock, (uint32_t)(status < 0 ? -status : status), data, len, NULL, 0) < 0)
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
	return jail_read_full(sock, buf, len, UINT64_MAX) == 0 ? 0 : -1;
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
	cleanup_elfsyms struct elfsyms *es = NULL;
	int r = elfdebug_debugdata_fd(fd, &es, e);
	if (r == 0 && (r = elfflat_encode(es, 0, buf, len)) < 0)
		fs_error_set(e, -r, "encoding the MiniDebugInfo symbols");
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

/* What libelf, the demangler and malloc need on the fds they are given,
 * and nothing else: no open or other path, no exec, no sockets, no
 * signals, no executable or shared memory (docs/security.md says why each
 * one is here). */
#define EJ_NO_EXEC                                                                                 \
	{                                                                                          \
		2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0                                                \
	}
#define EJ_ANON                                                                                    \
	{                                                                                          \
		3, SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS | MAP_SHARED, MAP_ANONYMOUS                   \
	}
#define EJ_OWN_FD                                                                                  \
	{                                                                                          \
		0, SCMP_CMP_LE, 15, 0                                                              \
	} /* not AT_FDCWD: RLIMIT_NOFILE is 16 */
#define EJ_NO_PATH                                                                                 \
	{                                                                                          \
		3, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH                                \
	}
/* clang-format off */
static const struct jail_rule elfjail_allowed[] = {
	JAIL_ALLOW("read"), JAIL_ALLOW("pread64"), JAIL_ALLOW("lseek"), JAIL_ALLOW("close"),
	JAIL_ALLOW("fstat"),
	JAIL_ALLOW_IF("write", 1, {0, SCMP_CMP_LE, 2, 0}), /* /dev/null: glibc, ASan */
	JAIL_ALLOW("recvmsg"), JAIL_ALLOW("sendto"), JAIL_ALLOW("sendmsg"),
	JAIL_ALLOW_IF("mmap", 2, EJ_NO_EXEC, EJ_ANON), JAIL_ALLOW_IF("mprotect", 1, EJ_NO_EXEC),
	JAIL_ALLOW("munmap"), JAIL_ALLOW("mremap"), JAIL_ALLOW("brk"), JAIL_ALLOW("madvise"),
	JAIL_ALLOW("exit"), JAIL_ALLOW("exit_group"), JAIL_ALLOW("rt_sigreturn"),
	JAIL_ALLOW("rt_sigprocmask"), JAIL_ALLOW("restart_syscall"),
	JAIL_ALLOW("futex"), JAIL_ALLOW("getrandom"), JAIL_ALLOW("clock_gettime"),
	JAIL_ALLOW("getpid"), JAIL_ALLOW("gettid"),
	JAIL_ALLOW("sigaltstack"), /* AddressSanitizer checks it on _exit */
	/* fstat() is fstatat(fd, "", AT_EMPTY_PATH) in glibc: no path. */
	JAIL_ALLOW_IF("newfstatat", 2, EJ_OWN_FD, EJ_NO_PATH),
};
/* clang-format on */

static __attribute__((noreturn)) void elfjail_main(const struct fs_error *setup_err, void *arg)
{
	elfjail_serve(JAIL_FD, setup_err);
}

void elfjail_spec(const struct elfjail_opts *opts, struct jail_spec *s)
{
	struct elfjail_opts o = {0};
	if (opts)
		o = *opts;
	memset(s, 0, sizeof(*s));
	s->what = "ELF sandbox";
	s->allow = elfjail_allowed;
	s->nallow = FS_ARRAY_SIZE(elfjail_allowed);
	s->net_ns_fd = s->mnt_ns_fd = s->root_fd = -1;
	s->set_ids = geteuid() == 0; /* nobody, when started as root */
	s->uid = ELFJAIL_UID;
	s->gid = ELFJAIL_UID;
	s->memory = o.memory ? o.memory : ELFJAIL_MEMORY;
	s->nofile = 16;
	/* A whole table in one go where allowed: each refill of a small
	 * socket buffer is a round of scheduling on a busy host. */
	s->sndbuf = ELFJAIL_SOCKBUF;
	s->main = elfjail_main;
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
	j->c.pidfd = j->c.sock = -1;
	*out = j;
	return 0;
}

/* Kill (if still running) and reap the child. Returns its wait status
 * when it ended by itself within wait_ms, or -1 when it had to be killed. */
static int elfjail_stop(struct elfjail *j, int wait_ms)
{
	int st = jail_reap(&j->c, wait_ms > 0 ? timeutil_now_ms() + (uint64_t)wait_ms : 0);
	return st < 0 ? -1 : st;
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
	return j ? j->c.pid : 0;
}

static int elfjail_start(struct elfjail *j, struct fs_error *err)
{
	struct jail_spec spec;
	elfjail_spec(&j->o, &spec);
	return jail_spawn(&spec, &j->c, err);
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
	int r = jail_read_full(fd, buf, len, deadline);
	return r > 0 ? -EPIPE : r;
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
	if ((r = elfjail_read_full(j->c.sock, msg, h->len, deadline)) < 0)
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
	int r = j->c.pid ? 0 : elfjail_start(j, err);
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
	if (elfjail_send_all(j->c.sock, req, 1 + sizeof(l32) + nl) < 0)
		r = elfjail_fail(j, -EPIPE, err);
	else if ((r = elfjail_read_full(j->c.sock, &h, sizeof(h), deadline)) < 0)
		r = elfjail_fail(j, r, err);
	else if (h.status != 0)
		r = elfjail_error_reply(j, &h, deadline, err);
	else if (h.len >= len || h.len >= ELFSYMS_MAX_NAME) {
		elfjail_stop(j, 0);
		r = fs_error_set(err, EBADMSG, "the ELF sandbox sent a %u-byte name", h.len);
	} else if ((r = elfjail_read_full(j->c.sock, out, h.len, deadline)) < 0) {
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
	int r = j->c.pid ? 0 : elfjail_start(j, err);
	if (r < 0)
		return r;
	uint64_t deadline = timeutil_now_ms() + j->o.timeout_ms;
	if ((r = elfjail_send_fd(j->c.sock, fd, kind)) < 0 ||
	    (r = elfjail_read_full(j->c.sock, &h, sizeof(h), deadline)) < 0)
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
	if ((r = elfjail_read_full(j->c.sock, b, h.len, deadline)) < 0)
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
