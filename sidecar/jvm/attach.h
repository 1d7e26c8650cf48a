/* attach.h - the HotSpot dynamic attach protocol, for a JVM in a container.
 *
 * The client half runs in a sandboxed child (sandbox.h) that has joined the
 * JVM's mount namespace as the JVM's own uid/gid:
 *   1. /tmp/.java_pid<ns pid> is a socket owned by the JVM's uid: connect.
 *   2. Otherwise create /tmp/.attach_pid<ns pid> (O_EXCL|O_NOFOLLOW) and ask
 *      the host side to send SIGQUIT (the trigger callback); poll for the
 *      socket with a deadline (1 ms, doubling to 20 ms); remove the file.
 *   3. The peer must be the JVM: SO_PEERCRED pid == host pid, uid == uid.
 *   4. Send "1\0<cmd>\0<arg1>\0<arg2>\0<arg3>\0"; the reply is a completion
 *      code line, then text; the JVM closes the connection.
 * The host half checks that a signal is safe and sends it through a pidfd.
 */
#ifndef FS_ATTACH_H
#define FS_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "cleanup.h"

#define ATTACH_REPLY_MAX (1u << 20) /* bytes of reply read at most */
#define ATTACH_CMD_MAX	 16	    /* HotSpot's limits on a request */
#define ATTACH_ARG_MAX	 1024

struct attach_target {
	pid_t host_pid; /* the JVM as the host sees it (SO_PEERCRED check) */
	pid_t ns_pid;	/* the JVM in its own pid namespace (socket name) */
	uid_t uid;	/* the JVM's effective uid: owner of socket and files */
};

struct attach_reply {
	int code;   /* the completion code on the first line */
	char *text; /* the rest, NUL-terminated (malloc'd) */
	size_t len;
};

/* ---- in the sandboxed child ---------------------------------------------- */

/* Connect to the JVM's attach listener, starting it if needed: trigger is
 * called (once) after .attach_pid was created and must get SIGQUIT sent.
 * Returns the connected fd or -errno: -ETIMEDOUT (no socket before
 * deadline_ms, CLOCK_MONOTONIC ms), -EPERM (a socket or file that is not the
 * JVM's, a symlinked /tmp), -ECONNREFUSED. *signalled tells whether the
 * trigger ran. /tmp is looked up from the working directory taken as the
 * root (in the sandboxed child: the target's root), never through a dirfd. */
int attach_connect(const struct attach_target *t, int (*trigger)(void *arg, struct fs_error *err),
		   void *arg, uint64_t deadline_ms, int *signalled, struct fs_error *err);

/* Build a protocol-1 request. args may hold NULLs (sent empty). 0, or
 * -EINVAL when a name or argument is over HotSpot's limits or buf too small. */
int attach_encode_request(const char *cmd, const char *const args[3], char *buf, size_t cap,
			  size_t *len, struct fs_error *err);

/* Send one request on fd and read the whole reply (until EOF, at most
 * ATTACH_REPLY_MAX bytes, before deadline_ms). 0 or -errno. */
int attach_execute(int fd, const char *cmd, const char *const args[3], uint64_t deadline_ms,
		   struct attach_reply *r, struct fs_error *err);

/* Parse a reply: "<code>\n<text>" (a bare "<code>" too). -EPROTO when the
 * first line is not a number. r->text must be freed (attach_reply_free). */
int attach_parse_reply(const char *buf, size_t len, struct attach_reply *r, struct fs_error *err);
void attach_reply_free(struct attach_reply *r);
FS_DEFINE_CLEANUP_VALUE(struct attach_reply, attach_reply_free)
#define cleanup_attach_reply __attribute__((cleanup(attach_reply_free_cleanup)))

/* Interpret the reply to `load <agent> true <options>`. JDK 9+ answers
 * "0\nreturn code: N", JDK 8 "0\nN"; N is Agent_OnAttach's result. A
 * non-zero completion code means the library was not loaded. 0, -ENOENT
 * (library not found), -ENOEXEC (not loadable / no Agent_OnAttach), -EIO
 * (Agent_OnAttach returned non-zero; *agent_rc holds it). */
int attach_load_result(const struct attach_reply *r, const char *agent, int *agent_rc,
		       struct fs_error *err);

/* Interpret the reply to `jcmd <command>`. 0, -EOPNOTSUPP (the JVM has no
 * such command), -EIO (it failed; the JVM's text is in the message). */
int attach_jcmd_result(const struct attach_reply *r, const char *command, struct fs_error *err);

/* ---- on the host --------------------------------------------------------- */

/* 0 if pid maps HotSpot's libjvm.so; -EOPNOTSUPP for OpenJ9 (libj9vm);
 * -ENOEXEC when no JVM is mapped. */
int attach_check_hotspot(pid_t pid, struct fs_error *err);

/* 0 if sending SIGQUIT to start the attach listener is safe and useful:
 * SIGQUIT neither ignored nor left to its default action (which would kill
 * the JVM), and attach not disabled on the command line or in
 * JAVA_TOOL_OPTIONS / JDK_JAVA_OPTIONS / _JAVA_OPTIONS. -EPERM / -EOPNOTSUPP
 * with a message that says what to change. */
int attach_check_signal(pid_t pid, struct fs_error *err);

/* The option that disables attach or SIGQUIT handling in a NUL-separated
 * block of len bytes (/proc/<pid>/cmdline; environ when environ is set:
 * only its *JAVA*_OPTIONS variables count, and buf, len + 1 bytes as
 * proc_read_file gives, is compacted in place), or NULL. Fuzzed (tests/fuzz/fuzz_procfiles.c). */
const char *attach_options_disable(char *buf, size_t len, int environ);

/* Send SIGQUIT through pidfd after re-checking that pid still has
 * start_time. 0 or -errno (-ESRCH when gone). */
int attach_send_sigquit(int pidfd, pid_t pid, uint64_t start_time, struct fs_error *err);

/* After a failed attach: add what is known about why (attach disabled,
 * SIGQUIT blocked in every thread, process gone) to err's message. */
void attach_explain_failure(pid_t pid, uint64_t start_time, struct fs_error *err);

#endif
