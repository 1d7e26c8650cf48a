/* jail.c - see jail.h */
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "proc.h"
#include "timeutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define JAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JAIL_ASAN 1
#endif
#endif

#define JAIL_STATUS_MAX 8192 /* bytes of /proc/self/status sent */

struct jail_hdr {
	uint32_t type;
	uint32_t len;
};

/* ---- records ------------------------------------------------------------- */

int jail_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	struct jail_hdr h = {type, (uint32_t)(alen + blen)};
	struct iovec iov[3] = {{&h, sizeof(h)}, {(void *)a, alen}, {(void *)b, blen}};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 3};
	size_t total = sizeof(h) + alen + blen;
	if (alen + blen > UINT32_MAX)
		return -EMSGSIZE;
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

int jail_wait_readable(int fd, uint64_t deadline)
{
	/* No deadline: a blocking read (a child's filter may lack poll). */
	if (deadline == UINT64_MAX)
		return 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = timeutil_remaining_ms(deadline);
		if (ms == 0)
			return -ETIMEDOUT;
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		return r == 0 ? -ETIMEDOUT : 0;
	}
}

int jail_read_full(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;
	while (got < len) {
		int r = jail_wait_readable(fd, deadline);
		if (r < 0)
			return r;
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return got ? -EPIPE : 1;
		got += (size_t)n;
	}
	return 0;
}

/* ---- the child: each step of the confinement ----------------------------- */

/* Close every fd except those in keep[] (n entries, -1 ignored). */
static void jail_close_others(int *keep, size_t n)
{
	unsigned lo = 0;
	for (size_t i = 1; i < n; i++) /* few entries: insertion sort */
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < lo)
			continue;
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0u, 0);
}

/* An fd of the parent moved above the low numbers, or -1. */
static int jail_lift(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 16);
}

/* Address space in use now (the fork's copy of the sidecar's). */
static __attribute__((unused)) uint64_t jail_vm_bytes(void)
{
	unsigned long long pages = 0;
	cleanup_fclose FILE *f = fopen("/proc/self/statm", "re");
	if (f && fscanf(f, "%llu", &pages) != 1)
		pages = 0;
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* No core file, no file written, and the caller's bounds. */
static int jail_limits(const struct jail_spec *s, struct fs_error *err)
{
	struct rlimit zero = {0, 0};
	if (setrlimit(RLIMIT_CORE, &zero) < 0 || setrlimit(RLIMIT_FSIZE, &zero) < 0)
		return fs_error_set(err, errno, "%s: setting resource limits", s->what);
#ifndef JAIL_ASAN /* AddressSanitizer reserves terabytes of shadow */
	if (s->memory) {
		uint64_t vm = jail_vm_bytes();
		struct rlimit as = {vm + s->memory, vm + s->memory};
		if (vm == 0 || setrlimit(RLIMIT_AS, &as) < 0)
			return fs_error_set(err, vm ? errno : EIO, "%s: limiting its memory",
					    s->what);
	}
#endif
	struct rlimit nofile = {s->nofile, s->nofile};
	if (s->nofile && setrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return fs_error_set(err, errno, "%s: limiting its fds", s->what);
	return 0;
}

/* Is the mount holding path writable now? */
static int jail_is_rw(const char *path)
{
	struct statvfs sv;
	return statvfs(path, &sv) == 0 && !(sv.f_flag & ST_RDONLY);
}

/* The mount id of path, and whether path is that mount's root. */
static int jail_mount_of(const char *path, uint64_t *id, int *is_root)
{
	struct statx stx;
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return -errno;
	*id = stx.stx_mnt_id;
	*is_root = !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return 0;
}

/* Where to clear MOUNT_ATTR_RDONLY so that w stays writable: w itself when
 * it is a mount, else the root's or the namespace root's mount ("." here)
 * when that is the one holding it. NULL when none is. */
static const char *jail_writable_mount(const char *w)
{
	static const char *const at[] = {"/", "."};
	uint64_t id, other;
	int is_root;
	if (jail_mount_of(w, &id, &is_root) < 0)
		return NULL;
	if (is_root)
		return w;
	for (size_t i = 0; i < FS_ARRAY_SIZE(at); i++)
		if (jail_mount_of(at[i], &other, &is_root) == 0 && is_root && other == id)
			return at[i];
	return NULL;
}

/* The private copy of the target's mounts, changed from "." (the root of
 * the copied namespace; "/" is the target's root, maybe below it): no
 * device opens, no set-id bit counts, nothing executes, nothing
 * propagates, and every mount is read-only but the one holding
 * s->writable (when it was writable: a mount the container has read-only
 * stays so), so /proc/sys, /proc/sysrq-trigger or /sys, host-global
 * whatever the container's view, cannot be written. */
static int jail_lock_mounts(const struct jail_spec *s, struct fs_error *err)
{
	struct mount_attr attr = {
	    .attr_set =
		MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_RDONLY,
	    .propagation = MS_PRIVATE,
	};
	struct mount_attr rw = {.attr_clr = MOUNT_ATTR_RDONLY};
	const char *keep =
	    s->writable && jail_is_rw(s->writable) ? jail_writable_mount(s->writable) : NULL;
	if (s->writable && jail_is_rw(s->writable) && !keep)
		return fs_error_set(err, ENOTSUP, "%s: no mount of its own holds %s", s->what,
				    s->writable);
	if (mount_setattr(AT_FDCWD, ".", AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return fs_error_set(err, errno,
				    "%s: making the target's mounts read-only, nodev, "
				    "nosuid, noexec",
				    s->what);
	if (keep && mount_setattr(AT_FDCWD, keep, AT_SYMLINK_NOFOLLOW, &rw, sizeof(rw)) < 0)
		return fs_error_set(err, errno, "%s: keeping %s writable", s->what, s->writable);
	return 0;
}

/* Join the target's namespaces, then its root in a private copy of its
 * mounts (jail_lock_mounts). */
static int jail_enter(const struct jail_spec *s, int net, int mnt, int root, struct fs_error *err)
{
	if (net >= 0 && setns(net, CLONE_NEWNET) < 0)
		return fs_error_set(err, errno, "%s: joining the target's network namespace",
				    s->what);
	if (mnt < 0)
		return 0;
	if (setns(mnt, CLONE_NEWNS) < 0)
		return fs_error_set(err, errno, "%s: joining the target's mount namespace",
				    s->what);
	/* Paths resolve from the target's root, not the namespace's "/";
	 * the working directory stays at the namespace's root until the
	 * mounts are locked from there. */
	cleanup_close int nsroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (nsroot < 0 || (root >= 0 && (fchdir(root) < 0 || chroot(".") < 0)) ||
	    fchdir(nsroot) < 0)
		return fs_error_set(err, errno, "%s: entering the target's root", s->what);
	/* Our copy: root and working directory move into it. */
	if (unshare(CLONE_NEWNS) < 0)
		return fs_error_set(err, errno, "%s: a private copy of the target's mounts",
				    s->what);
	int r = jail_lock_mounts(s, err);
	if (r < 0)
		return r;
	if (chdir("/") < 0)
		return fs_error_set(err, errno, "%s: chdir /", s->what);
	return 0;
}

/* No capability left in any set, then uid:gid if asked, NO_NEW_PRIVS. */
static int jail_drop_privileges(const struct jail_spec *s, struct fs_error *err)
{
	/* The bounding set can only shrink while we still hold CAP_SETPCAP. */
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (cap_drop_bound(cap) < 0 && errno != EINVAL && errno != EPERM)
			return fs_error_set(err, errno, "%s: dropping the bounding set", s->what);
	if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0)
		return fs_error_set(err, errno, "%s: clearing ambient capabilities", s->what);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return fs_error_set(err, errno, "%s: PR_SET_KEEPCAPS", s->what);
	if (s->set_ids && (setgroups(0, NULL) < 0 || setresgid(s->gid, s->gid, s->gid) < 0 ||
			   setresuid(s->uid, s->uid, s->uid) < 0))
		return fs_error_set(err, errno, "%s: dropping to uid %u gid %u", s->what,
				    (unsigned)s->uid, (unsigned)s->gid);
	/* A non-zero uid cleared the sets already; uid 0 keeps them. */
	cleanup_cap cap_t caps = cap_init();
	if (!caps || cap_set_proc(caps) < 0)
		return fs_error_set(err, errno, "%s: clearing its capabilities", s->what);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fs_error_set(err, errno, "%s: PR_SET_NO_NEW_PRIVS", s->what);
	return 0;
}

static int jail_seccomp(const struct jail_spec *s, struct fs_error *err)
{
	cleanup_seccomp scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	scmp_datum_t self = (scmp_datum_t)getpid();
	int r = ctx ? 0 : -ENOMEM;
	for (size_t i = 0; i < s->nallow && r == 0; i++) {
		const struct jail_rule *rule = &s->allow[i];
		struct scmp_arg_cmp c[3];
		int nr = seccomp_syscall_resolve_name(rule->syscall);
		if (nr == __NR_SCMP_ERROR)
			continue;
		for (unsigned k = 0; k < rule->nchecks && k < 3; k++) {
			c[k] = rule->check[k];
			if (c[k].datum_a == JAIL_SELF)
				c[k].datum_a = self;
		}
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr,
					   rule->nchecks < 3 ? rule->nchecks : 3, c);
		if (r < 0)
			return fs_error_set(err, -r, "%s: seccomp rule for %s", s->what,
					    rule->syscall);
	}
	if (r == 0)
		r = seccomp_load(ctx);
	return r < 0 ? fs_error_set(err, -r, "%s: loading the seccomp filter", s->what) : 0;
}

/* The test hook's record: /proc/self/status once confined, and what the
 * filter will no longer let it ask. */
static void jail_send_status(int statusfd, int dumpable, const char *stderr_path)
{
	char buf[JAIL_STATUS_MAX + PATH_MAX + 64];
	ssize_t n = pread(statusfd, buf, JAIL_STATUS_MAX, 0);
	if (n <= 0)
		return;
	snprintf(buf + n, sizeof(buf) - (size_t)n, "Dumpable:\t%d\nStderr:\t%s\n", dumpable,
		 stderr_path);
	jail_send(JAIL_FD, JAIL_STATUS, buf, strlen(buf), NULL, 0);
}

/* fds 0-2 on /dev/null (nothing of the operator's terminal: messages go
 * over the channel), the channel at JAIL_FD, the other kept fds lifted
 * above 15, every other fd closed. Until this is done the channel is not
 * there to report on: a failure ends the child. */
static void jail_fds(int sock, int *fds, size_t nfds, int *statusfd, char *stderr_path,
		     int want_status)
{
	int keep[8] = {0, 1, 2, JAIL_FD, -1, -1, -1, -1};
	if (want_status)
		*statusfd = keep[4] = jail_lift(open("/proc/self/status", O_RDONLY | O_CLOEXEC));
	for (size_t i = 0; i < nfds && i < 3; i++)
		fds[i] = keep[5 + i] = jail_lift(fds[i]);
	int high = jail_lift(sock);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (high < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(high, JAIL_FD) < 0)
		_exit(1);
	if (want_status) {
		ssize_t l = readlink("/proc/self/fd/2", stderr_path, PATH_MAX - 1);
		stderr_path[l > 0 ? l : 0] = '\0';
	}
	jail_close_others(keep, 8);
}

/* Before anything of the target is joined: nothing of the sidecar's state
 * stays but what the client named. */
static int jail_isolate(const struct jail_spec *s, int sock, int *fds, size_t nfds, int *statusfd,
			char *stderr_path, struct fs_error *err)
{
	sigset_t none;
	/* Not ptrace-able nor readable through /proc by the container's
	 * processes: it holds capabilities and host fds until the drop. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(1);
	jail_fds(sock, fds, nfds, statusfd, stderr_path, s->send_status);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	/* The perf ring buffers (every profiled container's samples). */
	int r = proc_unmap_shared();
	if (r < 0)
		return fs_error_set(err, -r, "%s: unmapping the sidecar's shared memory", s->what);
	return 0;
}

static __attribute__((noreturn)) void jail_child(const struct jail_spec *s, int sock, pid_t parent)
{
	struct fs_error e = {0};
	char stderr_path[PATH_MAX] = "";
	int statusfd = -1;
	int fds[3] = {s->net_ns_fd, s->mnt_ns_fd, s->root_fd};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	int r = jail_isolate(s, sock, fds, 3, &statusfd, stderr_path, &e);
	if (r == 0)
		r = jail_limits(s, &e);
	if (r == 0)
		r = jail_enter(s, fds[0], fds[1], fds[2], &e);
	for (size_t i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (r == 0)
		r = jail_drop_privileges(s, &e);
	/* What the filter will no longer let it ask, for the test hook. */
	int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (r == 0)
		r = jail_seccomp(s, &e);
	if (r == 0 && statusfd >= 0)
		jail_send_status(statusfd, dumpable, stderr_path);
	if (statusfd >= 0)
		close(statusfd);
	s->main(r < 0 ? &e : NULL, s->arg);
	_exit(1);
}

/* ---- the parent ---------------------------------------------------------- */

int jail_spawn(const struct jail_spec *s, struct jail_child *c, struct fs_error *err)
{
	int sv[2];
	jail_reap_abandoned();
	c->pid = 0;
	c->pidfd = c->sock = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fs_error_set(err, errno, "%s: socketpair", s->what);
	/* A whole answer in one go where allowed: each refill of a small
	 * socket buffer is a round of scheduling on a busy host. */
	if (s->sndbuf &&
	    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &s->sndbuf, sizeof(s->sndbuf)) < 0)
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &s->sndbuf, sizeof(s->sndbuf));
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return fs_error_set(err, e, "%s: fork", s->what);
	}
	if (pid == 0) {
		close(sv[0]);
		jail_child(s, sv[1], parent);
	}
	close(sv[1]);
	int pidfd = pidfd_open(pid, 0);
	if (pidfd < 0) {
		/* Cannot happen for our own unreaped child; be safe anyway. */
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(sv[0]);
		return fs_error_set(err, e, "%s: pidfd_open", s->what);
	}
	c->pid = pid;
	c->pidfd = pidfd;
	c->sock = sv[0];
	return 0;
}

/* Children that did not die when killed: a task blocked in the kernel
 * (a FUSE request the container's daemon never answers holds it in D
 * state, SIGKILL or not) cannot be reaped until the kernel lets it go. Their
 * pids (still our unreaped children, so not reusable) are kept here and
 * reaped without blocking by later calls; past JAIL_ABANDONED_MAX they are
 * only counted and the kernel reparents them to init when we exit. */
#define JAIL_ABANDONED_MAX 256
static pid_t jail_abandoned_pids[JAIL_ABANDONED_MAX];
static size_t jail_abandoned_n;
static unsigned jail_abandoned_total;

unsigned jail_reap_abandoned(void)
{
	size_t k = 0;
	for (size_t i = 0; i < jail_abandoned_n; i++) {
		pid_t p = jail_abandoned_pids[i];
		pid_t r;
		while ((r = waitpid(p, NULL, WNOHANG | __WALL)) < 0 && errno == EINTR)
			;
		if (r == 0)
			jail_abandoned_pids[k++] = p; /* still stuck */
	}
	jail_abandoned_n = k;
	return (unsigned)k;
}

unsigned jail_abandoned(void)
{
	return jail_abandoned_total;
}

/* Wait on the pidfd until deadline (0: just look). 1 when the child ended. */
static int jail_wait_ended(int pidfd, uint64_t deadline)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	for (;;) {
		int ms = deadline ? timeutil_remaining_ms(deadline) : 0;
		int r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		return r > 0;
	}
}

int jail_reap(struct jail_child *c, uint64_t deadline)
{
	if (!c->pid)
		return -ECHILD;
	jail_reap_abandoned();
	int ended = jail_wait_ended(c->pidfd, deadline);
	int dead = ended;
	if (!ended) {
		pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
		/* A killed task dies at once unless the kernel holds it. */
		dead = jail_wait_ended(c->pidfd, timeutil_now_ms() + JAIL_KILL_GRACE_MS);
	}
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (dead) {
		while (waitid(P_PIDFD, (id_t)c->pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
	} else {
		/* Never block on it: abandon it, reap it later or never. */
		jail_abandoned_total++;
		if (jail_abandoned_n < JAIL_ABANDONED_MAX)
			jail_abandoned_pids[jail_abandoned_n++] = c->pid;
	}
	close(c->pidfd);
	if (c->sock >= 0)
		close(c->sock);
	c->pidfd = c->sock = -1;
	c->pid = 0;
	if (!ended)
		return -ETIMEDOUT;
	return si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status & 0x7f;
}
