/* jail.h - a forked child that can do no more than its client allows.
 *
 * Every piece of work on container input that the sidecar cannot bound by
 * reading it carefully (talking to a JVM's attach socket, parsing a
 * container's ELF files) runs in a child made here, so each security step
 * exists once:
 *
 *   Parent (root)                      Child (jail_spawn, before main runs)
 *     socketpair, fork ------------->  PDEATHSIG, not dumpable, default signals,
 *     pidfd of the child               the sidecar's shared memory unmapped,
 *                                      0-2 /dev/null, the channel at fd 3,
 *                                      every other fd closed (close_range),
 *                                      core and file size limits (memory, fds),
 *                                      [setns net, setns mnt, chroot target root,
 *                                       a private copy of the joined mounts,
 *                                       nodev, nosuid, noexec, read-only but
 *                                       one; the ns and root fds closed],
 *                                      bounding/ambient caps, setgroups/setresgid/
 *                                      setresuid, no capabilities, NO_NEW_PRIVS,
 *                                      the client's seccomp allowlist
 *     records {u32 type, u32 len}  <-> main(fd 3)
 *     with deadlines (jail_read_full)
 *     jail_reap: wait until a deadline, SIGKILL through the pidfd, reap
 *     (or abandon a child the kernel will not let die: never block)
 *
 * The child holds no fd of the host's filesystem when main runs: the only
 * fds are /dev/null and the channel. A step that fails does not run main
 * unconfined: main gets the error and must only report it.
 */
#ifndef FS_JAIL_H
#define FS_JAIL_H

#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define JAIL_FD 3 /* the child's end of the channel, in the child */

/* One entry of a client's seccomp allowlist: the syscall (by name; one the
 * kernel lacks is skipped) is allowed when all of its argument checks hold
 * (none: always). Several entries for one syscall: any of them. A datum of
 * JAIL_SELF stands for the child's own pid. */
struct jail_rule {
	const char *syscall;
	unsigned nchecks;
	struct scmp_arg_cmp check[3];
};
#define JAIL_SELF ((scmp_datum_t)-2)
/* Table entries: JAIL_ALLOW("read"),
 * JAIL_ALLOW_IF("socket", 1, {0, SCMP_CMP_EQ, AF_UNIX, 0}). */
#define JAIL_ALLOW(name)                                                                           \
	{                                                                                          \
		.syscall = (name)                                                                  \
	}
#define JAIL_ALLOW_IF(name, n, ...)                                                                \
	{                                                                                          \
		.syscall = (name), .nchecks = (n), .check = { __VA_ARGS__ }                        \
	}

struct jail_spec {
	const char *what; /* "the ELF sandbox": the start of setup errors */
	/* The allowlist; everything else fails with EPERM. */
	const struct jail_rule *allow;
	size_t nallow;
	/* Namespaces and root, fds of the parent (-1: stay in the host's).
	 * Joined in this order; the child then works in a private copy of
	 * the mount namespace whose mounts are nodev, nosuid and noexec (a
	 * device node planted in the container opens nothing), and root_fd,
	 * a directory of that namespace, becomes its root and cwd. */
	int net_ns_fd, mnt_ns_fd, root_fd;
	/* The directory whose mount stays writable in that copy ("/tmp");
	 * every other mount is read-only there. NULL: all read-only. */
	const char *writable;
	/* Become uid:gid with no supplementary groups (needs root). */
	int set_ids;
	uid_t uid;
	gid_t gid;
	size_t memory;	 /* address space the child may add; 0 = no limit */
	unsigned nofile; /* RLIMIT_NOFILE; 0 = unchanged */
	int sndbuf;	 /* the child's socket send buffer; 0 = default */
	int send_status; /* test builds: send JAIL_STATUS before main */
	/* Runs in the child, confined, with the channel at fd JAIL_FD.
	 * setup_err is NULL, or why the child could not confine itself: main
	 * must then only report it. Must not return (_exit). */
	void (*main)(const struct fs_error *setup_err, void *arg);
	void *arg;
};

/* The child's /proc/self/status once confined, with "Dumpable:" and
 * "Stderr:" lines added (record type, from jail_spec.send_status). */
#define JAIL_STATUS 0x4a53u

struct jail_child {
	pid_t pid; /* 0: none */
	int pidfd, sock;
};

/* Start s->main in a confined child; c gets its pid, pidfd and the
 * parent's end of the channel. 0 or -errno (socketpair, fork, pidfd). */
int jail_spawn(const struct jail_spec *s, struct jail_child *c, struct fs_error *err);

/* Wait for the child until deadline (CLOCK_MONOTONIC ms; 0: do not wait),
 * SIGKILL it through its pidfd if it still runs, reap it and close both
 * fds. Its wait status (exit code << 8, or the terminating signal), or
 * -ETIMEDOUT when it had to be killed. No-op (-ECHILD) without a child.
 * Never blocks past deadline + JAIL_KILL_GRACE_MS: a killed child that
 * does not die (blocked in the kernel, e.g. on a FUSE request its daemon
 * holds) is abandoned, counted in jail_abandoned(), and reaped without
 * blocking by later jail_spawn/jail_reap/jail_reap_abandoned calls. */
#define JAIL_KILL_GRACE_MS 200
int jail_reap(struct jail_child *c, uint64_t deadline);
/* cleanup_jail_child struct jail_child c = {0}: a child still there at
 * scope exit is killed and reaped at once (jail_reap, no wait), as crun's
 * cleanup_pid does; hand it on by copying it and zeroing c.pid. */
static inline void jail_child_cleanup(struct jail_child *c)
{
	if (c->pid > 0)
		(void)jail_reap(c, 0);
}
#define cleanup_jail_child __attribute__((cleanup(jail_child_cleanup)))

/* Reap what abandoned children have died since; how many are still stuck
 * (at most the 256 that are remembered; more are only counted). */
unsigned jail_reap_abandoned(void);

/* How many children this process has abandoned so far (stuck when killed). */
unsigned jail_abandoned(void);

/* Framed records: {u32 type, u32 len} then a then b. 0 or -errno. */
int jail_send(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen);

/* Wait until fd is readable, before deadline (UINT64_MAX: do not wait,
 * the read that follows blocks). 0, -ETIMEDOUT or -errno. */
int jail_wait_readable(int fd, uint64_t deadline);

/* Read exactly len bytes before deadline (UINT64_MAX: none, and no poll
 * either: plain blocking reads). 0; 1 at EOF
 * before any byte; -EPIPE at EOF inside; -ETIMEDOUT; or -errno. */
int jail_read_full(int fd, void *buf, size_t len, uint64_t deadline);

#endif
