/* sandbox.h - run a function inside a container's mount namespace, in a
 * forked single-threaded child that has become the target's uid/gid with no
 * capabilities, no_new_privs and a seccomp allowlist.
 *
 * Parent                                    Child (a jail.h client)
 *   pidfd_open + start time check
 *   open /proc/<pid>/ns/{net,mnt}, root;
 *   inode checks
 *   jail_spawn ------------------------------> close other fds, setns(net, mnt),
 *                                              chroot to the target's root in a
 *                                              private nodev copy of its mounts
 *                                              without /proc and /sys, drop caps,
 *                                              setgroups, setresgid, setresuid,
 *                                              NO_NEW_PRIVS, seccomp (sb_allowed)
 *   read records (size cap, deadline) <------ fn(): sandbox_child_write(),
 *   on_request() -> reply ------------------>      sandbox_child_request()
 *   jail_reap; kill on timeout                error -> message record, _exit
 *
 * fn holds no fd of the host: its opens resolve from its working
 * directory, the target's root (pass AT_FDCWD as a root fd to rootfs.h),
 * and seccomp refuses an open through any other dirfd.
 * The channel is a socketpair carrying records {u32 type, u32 len, data};
 * one record type carries an fd (SCM_RIGHTS) when the job accepts one.
 * Test hook, in the test build of the sidecar only ($(BUILD)/test/, never
 * installed; docs/testing.md): when the variable SB_STATUS_ENV of sandbox.c
 * names a directory, the child sends its /proc/self/status (read after
 * every drop, just before fn runs) and the parent writes it to
 * <dir>/status.<target pid>.
 */
#ifndef FS_SANDBOX_H
#define FS_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct sandbox_target {
	pid_t pid;	     /* host pid whose mount namespace is joined */
	uint64_t start_time; /* proc_start_time of pid; 0 = not checked */
	uint64_t mnt_ns;     /* expected mount namespace inode; 0 = not checked */
	uint64_t pid_ns;     /* expected pid namespace inode; 0 = not checked */
	uid_t uid;	     /* the child runs as uid:gid, no supplementary groups */
	gid_t gid;
};

struct sandbox_child; /* the child's end of the channel */

struct sandbox_job {
	/* Runs in the child, after every drop. 0, or -errno with err filled. */
	int (*fn)(struct sandbox_child *c, void *arg, struct fs_error *err);
	void *arg;
	/* Runs in the parent for each sandbox_child_request(req). target_pidfd
	 * refers to the checked target. 0, or -errno with err filled (the
	 * message goes back to the child). NULL refuses every request. */
	int (*on_request)(const char *req, int target_pidfd, void *arg, struct fs_error *err);
	void *request_arg;
	size_t max_out;	     /* bytes of data accepted from the child */
	unsigned timeout_ms; /* for the whole run, fork to reap */
	/* Non-NULL: the child may hand over one fd (sandbox_child_send_fd);
	 * on success it is stored here (O_CLOEXEC), -1 when none came. The
	 * fd is the child's choice, so container input: the caller checks
	 * what it refers to before any use (type, owner, file system). NULL:
	 * an fd from the child is a protocol error. */
	int *fd_out;
};

/* Run job against t. On success *out (malloc'd, NUL-terminated) and
 * *out_len hold what the child wrote. Errors: the child's own error (code
 * and message), -ETIMEDOUT (child killed), -E2BIG (over max_out, child
 * killed), -ESRCH (target gone or pid reused), -ESTALE (namespace inode
 * differs from the registry). */
int sandbox_run(const struct sandbox_target *t, const struct sandbox_job *job, char **out,
		size_t *out_len, struct fs_error *err);

/* The parent's half of sandbox_run over an open channel fd (the child's
 * records, read until EOF, deadline or a bad record, with the same checks
 * and result), for the fuzzer (tests/fuzz/fuzz_sandbox.c). */
int sandbox_parent_records(int fd, const struct sandbox_job *job, uint64_t deadline, char **out,
			   size_t *out_len, struct fs_error *err);

/* Child side. Append data to the output. 0 or -errno. */
int sandbox_child_write(struct sandbox_child *c, const void *buf, size_t len, struct fs_error *err);
/* Ask the parent to do something (e.g. "sigquit") and wait for its answer
 * until the child's deadline. 0, or the parent's error. */
int sandbox_child_request(struct sandbox_child *c, const char *req, struct fs_error *err);
/* Hand fd over to the parent (job->fd_out; one per run). The parent
 * refuses the run when the job takes none. 0 or -errno. */
int sandbox_child_send_fd(struct sandbox_child *c, int fd, struct fs_error *err);
/* CLOCK_MONOTONIC milliseconds by which fn should give up; a little before
 * the parent's own deadline so that fn can still clean up and report. */
uint64_t sandbox_child_deadline(const struct sandbox_child *c);

#endif
