/* attach.c - see attach.h */
#include "attach.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "cleanup.h"
#include "proc.h"
#include "rootfs.h"
#include "timeutil.h"

#define ATTACH_SIGQUIT_BIT (1ULL << (SIGQUIT - 1))

/* Copy at most max bytes of untrusted text for a message: control
 * characters become '?', newlines "; ", trailing blanks go. */
static void attach_sanitize(const char *in, size_t len, char *out, size_t max)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 3 < max; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '\n') {
			if (o && i + 1 < len) {
				out[o++] = ';';
				out[o++] = ' ';
			}
		} else if (c == '\r') {
			continue;
		} else {
			out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
		}
	}
	while (o && (out[o - 1] == ' ' || out[o - 1] == ';'))
		o--;
	out[o] = '\0';
}

/* ---- child side: finding and connecting to the listener ------------------ */

/* Paths resolve from the working directory, the root of the target in the
 * sandboxed child (which may open nothing through another dirfd): /tmp
 * must be a directory there, not a symlink. 0 or -errno. */
static int attach_check_tmp(struct fs_error *err)
{
	cleanup_close int fd = rootfs_open(AT_FDCWD, "tmp", O_PATH | O_DIRECTORY, 0);
	if (fd == -ELOOP)
		return fs_error_set(err, EPERM,
				    "refusing to attach: /tmp in the container is a symbolic link");
	if (fd < 0)
		return fs_error_set(err, -fd, "opening /tmp in the container");
	return 0;
}

/* 1 if there is a socket owned by uid, 0 if there is nothing, -EPERM if
 * something else sits there. */
static int attach_check_socket(const char *name, uid_t uid, struct fs_error *err)
{
	struct stat st;
	char path[80];
	snprintf(path, sizeof(path), "tmp/%s", name);
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return fs_error_set(err, errno, "stat /tmp/%s", name);
	}
	if (!S_ISSOCK(st.st_mode))
		return fs_error_set(err, EPERM, "refusing to attach: /tmp/%s is not a socket",
				    name);
	if (st.st_uid != uid)
		return fs_error_set(err, EPERM,
				    "refusing to attach: /tmp/%s is owned by uid %u, not by the "
				    "JVM's uid %u",
				    name, (unsigned)st.st_uid, (unsigned)uid);
	return 1;
}

/* Connect to /tmp/<name>. The fd, -ECONNREFUSED/-ENOENT (stale or gone),
 * or -EPERM when the listener is not the JVM. */
static int attach_connect_socket(const struct attach_target *t, const char *name,
				 struct fs_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/%s", name);
	cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fs_error_set(err, errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fs_error_set(err, errno, "connecting to %s", sa.sun_path);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		return fs_error_set(err, errno, "SO_PEERCRED on %s", sa.sun_path);
	if (cred.pid != t->host_pid || cred.uid != t->uid)
		return fs_error_set(err, EPERM,
				    "refusing to attach: %s is served by pid %d uid %u, not by the "
				    "JVM (pid %d uid %u)",
				    sa.sun_path, (int)cred.pid, (unsigned)cred.uid,
				    (int)t->host_pid, (unsigned)t->uid);
	return steal_fd(&fd);
}

/* Try the socket once: the fd, 0 when there is none (yet), or -errno. */
static int attach_try(const struct attach_target *t, const char *name, struct fs_error *err)
{
	int r = attach_check_socket(name, t->uid, err);
	if (r <= 0)
		return r;
	r = attach_connect_socket(t, name, err);
	if (r == -ECONNREFUSED || r == -ENOENT)
		return 0; /* stale socket of an earlier JVM with the same pid */
	return r;
}

/* Create /tmp/.attach_pid<pid>, or accept a leftover one that is a regular
 * file of the JVM's uid. */
static int attach_create_trigger(const char *name, uid_t uid, struct fs_error *err)
{
	struct stat st;
	char path[80];
	snprintf(path, sizeof(path), "tmp/%s", name);
	/* Read-only: HotSpot looks only for the file, and nothing is written. */
	int fd = rootfs_open(AT_FDCWD, path, O_RDONLY | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd != -EEXIST)
		return fs_error_set(err, -fd, "creating /tmp/%s in the container", name);
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fs_error_set(err, errno, "stat /tmp/%s", name);
	if (!S_ISREG(st.st_mode) || st.st_uid != uid)
		return fs_error_set(err, EPERM,
				    "refusing to attach: /tmp/%s already exists and is not a "
				    "regular file of the JVM's uid %u (planted?)",
				    name, (unsigned)uid);
	return 0;
}

int attach_connect(const struct attach_target *t, int (*trigger)(void *arg, struct fs_error *err),
		   void *arg, uint64_t deadline_ms, int *signalled, struct fs_error *err)
{
	char sock[64], trig[64];
	*signalled = 0;
	snprintf(sock, sizeof(sock), ".java_pid%d", (int)t->ns_pid);
	snprintf(trig, sizeof(trig), ".attach_pid%d", (int)t->ns_pid);
	int r = attach_check_tmp(err);
	if (r < 0)
		return r;
	r = attach_try(t, sock, err);
	if (r != 0)
		return r;

	r = attach_create_trigger(trig, t->uid, err);
	if (r < 0)
		return r;
	/* Poll for the socket: HotSpot binds it a few ms after the signal, so
	 * start at 0.2 ms and double to 5 ms. (An inotify watch was tried: its
	 * close() waits for an SRCU grace period, ~18 ms, more than it saves.) */
	r = trigger(arg, err);
	if (r == 0) {
		*signalled = 1;
		long wait_us = 200;
		for (;;) {
			r = attach_try(t, sock, err);
			if (r != 0)
				break;
			int left = timeutil_remaining_ms(deadline_ms);
			if (left == 0) {
				r = fs_error_set(err, ETIMEDOUT,
						 "the JVM did not open its attach socket /tmp/%s "
						 "after SIGQUIT",
						 sock);
				break;
			}
			long us = wait_us < (long)left * 1000 ? wait_us : (long)left * 1000;
			struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
			nanosleep(&ts, NULL);
			if (wait_us < 5000)
				wait_us = wait_us * 2 > 5000 ? 5000 : wait_us * 2;
		}
	}
	char trig_path[80];
	snprintf(trig_path, sizeof(trig_path), "tmp/%s", trig);
	unlinkat(AT_FDCWD, trig_path, 0);
	return r;
}

/* ---- the request/reply protocol ------------------------------------------ */

int attach_encode_request(const char *cmd, const char *const args[3], char *buf, size_t cap,
			  size_t *len, struct fs_error *err)
{
	size_t n = 0;
	size_t cl = strlen(cmd);
	if (cl == 0 || cl > ATTACH_CMD_MAX)
		return fs_error_set(err, EINVAL, "attach command name '%.32s' is not 1 to %d bytes",
				    cmd, ATTACH_CMD_MAX);
	if (cap < 2 + cl + 1)
		return fs_error_set(err, EINVAL, "attach request buffer too small");
	memcpy(buf, "1", 2); /* protocol version 1, with its NUL */
	n = 2;
	memcpy(buf + n, cmd, cl + 1);
	n += cl + 1;
	for (int i = 0; i < 3; i++) {
		const char *a = args && args[i] ? args[i] : "";
		size_t al = strlen(a);
		if (al > ATTACH_ARG_MAX)
			return fs_error_set(err, EINVAL,
					    "attach argument %d is %zu bytes, over HotSpot's %d",
					    i + 1, al, ATTACH_ARG_MAX);
		if (n + al + 1 > cap)
			return fs_error_set(err, EINVAL, "attach request buffer too small");
		memcpy(buf + n, a, al + 1);
		n += al + 1;
	}
	*len = n;
	return 0;
}

int attach_parse_reply(const char *buf, size_t len, struct attach_reply *r, struct fs_error *err)
{
	char shown[96];
	memset(r, 0, sizeof(*r));
	if (len == 0)
		return fs_error_set(err, EPROTO,
				    "the JVM closed the attach connection without a "
				    "reply");
	const char *nl = memchr(buf, '\n', len);
	size_t ll = nl ? (size_t)(nl - buf) : len;
	size_t i = 0;
	int neg = 0;
	long v = 0;
	if (ll && buf[0] == '-') {
		neg = 1;
		i = 1;
	}
	size_t digits = 0;
	for (; i < ll && isdigit((unsigned char)buf[i]) && digits < 9; i++, digits++)
		v = v * 10 + (buf[i] - '0');
	while (i < ll && buf[i] == '\r')
		i++;
	if (!digits || i != ll) {
		attach_sanitize(buf, ll < 80 ? ll : 80, shown, sizeof(shown));
		return fs_error_set(err, EPROTO, "unexpected attach reply '%s'", shown);
	}
	size_t tl = nl ? len - ll - 1 : 0;
	r->text = malloc(tl + 1);
	if (!r->text)
		return fs_error_set(err, ENOMEM, "attach reply");
	if (tl)
		memcpy(r->text, nl + 1, tl);
	r->text[tl] = '\0';
	r->len = tl;
	r->code = neg ? -(int)v : (int)v;
	return 0;
}

void attach_reply_free(struct attach_reply *r)
{
	free(r->text);
	r->text = NULL;
	r->len = 0;
}

static int attach_wait(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int ms = timeutil_remaining_ms(deadline);
		if (ms == 0)
			return -ETIMEDOUT;
		int r = poll(&p, 1, ms);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int attach_execute(int fd, const char *cmd, const char *const args[3], uint64_t deadline_ms,
		   struct attach_reply *r, struct fs_error *err)
{
	char req[2 + ATTACH_CMD_MAX + 1 + 3 * (ATTACH_ARG_MAX + 1)];
	size_t len, off = 0;
	int rc = attach_encode_request(cmd, args, req, sizeof(req), &len, err);
	if (rc < 0)
		return rc;
	while (off < len) {
		rc = attach_wait(fd, POLLOUT, deadline_ms);
		if (rc < 0)
			return fs_error_set(err, -rc, "sending '%s' to the JVM", cmd);
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return fs_error_set(err, errno, "sending '%s' to the JVM", cmd);
		}
		off += (size_t)n;
	}

	size_t cap = 4096, got = 0;
	cleanup_free char *buf = malloc(cap);
	if (!buf)
		return fs_error_set(err, ENOMEM, "attach reply");
	for (;;) {
		rc = attach_wait(fd, POLLIN, deadline_ms);
		if (rc == -ETIMEDOUT)
			return fs_error_set(err, ETIMEDOUT, "the JVM did not answer '%s' in time",
					    cmd);
		if (rc < 0)
			return fs_error_set(err, -rc, "reading the JVM's answer to '%s'", cmd);
		if (got == cap) {
			if (cap >= ATTACH_REPLY_MAX)
				return fs_error_set(err, E2BIG,
						    "the JVM's answer to '%s' is over %u bytes",
						    cmd, ATTACH_REPLY_MAX);
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				return fs_error_set(err, ENOMEM, "attach reply");
			buf = nb;
			cap *= 2;
		}
		ssize_t n = recv(fd, buf + got, cap - got, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return fs_error_set(err, errno, "reading the JVM's answer to '%s'", cmd);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	rc = attach_parse_reply(buf, got, r, err);
	return rc < 0 ? fs_error_wrap(err, "answer to '%s'", cmd) : 0;
}

/* ---- interpreting replies ------------------------------------------------ */

static const char *attach_first_line(const char *text, size_t *len)
{
	const char *nl = strchr(text, '\n');
	*len = nl ? (size_t)(nl - text) : strlen(text);
	return text;
}

/* The library was not loaded: say why, from the JVM's text. */
static int attach_load_failed(const struct attach_reply *r, const char *agent, struct fs_error *err)
{
	char shown[256];
	int code = EIO;
	attach_sanitize(r->text, r->len < 400 ? r->len : 400, shown, sizeof(shown));
	if (strstr(r->text, "Agent_OnAttach"))
		code = ENOEXEC; /* "Agent_OnAttach is not available in <lib>" */
	else if (strstr(r->text, "No such file") || strstr(r->text, "Could not find"))
		code = ENOENT;
	else if (strstr(r->text, "was not loaded") || strstr(r->text, "cannot open"))
		code = ENOEXEC;
	return fs_error_set(err, code, "the JVM did not load %s (code %d%s%s)", agent, r->code,
			    shown[0] ? ": " : "", shown);
}

int attach_load_result(const struct attach_reply *r, const char *agent, int *agent_rc,
		       struct fs_error *err)
{
	size_t ll;
	const char *line = attach_first_line(r->text, &ll);
	*agent_rc = 0;
	/* JDK 8..20 report a load failure with a non-zero code; JDK 21+ with
	 * code 0 and only the message. */
	if (r->code != 0)
		return attach_load_failed(r, agent, err);
	if (ll == 0)
		return 0; /* loaded; nothing reported */
	const char *p = line;
	static const char prefix[] = "return code: ";
	if (ll >= sizeof(prefix) - 1 && !strncmp(line, prefix, sizeof(prefix) - 1))
		p = line + sizeof(prefix) - 1; /* JDK 9+ */
	char *end;
	errno = 0;
	long v = strtol(p, &end, 10);
	if (p == line + ll || end != line + ll || errno || v < INT32_MIN || v > INT32_MAX)
		return attach_load_failed(r, agent, err);
	*agent_rc = (int)v;
	if (v != 0)
		return fs_error_set(err, EIO,
				    "%s was loaded but its Agent_OnAttach returned %ld "
				    "(the agent writes why on the JVM's stderr)",
				    agent, v);
	return 0;
}

int attach_jcmd_result(const struct attach_reply *r, const char *command, struct fs_error *err)
{
	char shown[256];
	attach_sanitize(r->text, r->len < 400 ? r->len : 400, shown, sizeof(shown));
	if (strstr(r->text, "Unknown diagnostic command") ||
	    strstr(r->text, "IllegalArgumentException: Unknown"))
		return fs_error_set(err, EOPNOTSUPP,
				    "this JVM has no '%s' diagnostic command (Compiler.perfmap "
				    "needs JDK 17 or later; use the agent instead)",
				    command);
	if (r->code != 0)
		return fs_error_set(err, EIO, "jcmd %s failed in the JVM (code %d%s%s)", command,
				    r->code, shown[0] ? ": " : "", shown);
	return 0;
}

/* ---- host side ----------------------------------------------------------- */

int attach_check_hotspot(pid_t pid, struct fs_error *err)
{
	static const char *const needles[] = {"/libj9vm", "/libjvm.so\n"};
	unsigned found = 0;
	int r = proc_maps_scan(pid, needles, 2, &found, err);
	if (r < 0)
		return r == -ESRCH ? fs_error_set(err, ESRCH, "process %d is gone", (int)pid) : r;
	if (found & 1)
		return fs_error_set(err, EOPNOTSUPP,
				    "pid %d is an OpenJ9 JVM: only HotSpot's attach protocol is "
				    "supported",
				    (int)pid);
	if (!(found & 2))
		return fs_error_set(err, ENOEXEC, "pid %d is not a JVM (no libjvm.so mapped)",
				    (int)pid);
	return 0;
}

/* Does the NUL-separated list (cmdline, or environ values) disable attach? */
static const char *attach_disabled_by(const char *buf, size_t len)
{
	static const char *const flags[] = {"-XX:+DisableAttachMechanism", "-XX:+ReduceSignalUsage",
					    "-Xrs"};
	for (size_t i = 0; i < FS_ARRAY_SIZE(flags); i++) {
		size_t fl = strlen(flags[i]);
		for (const char *p = buf; p + fl <= buf + len; p++) {
			p = memmem(p, (size_t)(buf + len - p), flags[i], fl);
			if (!p)
				break;
			char next = p + fl < buf + len ? p[fl] : '\0';
			if (next == '\0' || next == ' ' || next == '\t' || next == '\n')
				return flags[i];
		}
	}
	return NULL;
}

const char *attach_options_disable(char *buf, size_t len, int environ)
{
	if (environ) {
		/* Only the variables the JVM reads options from. */
		size_t kept = 0, at = 0;
		while (at < len) {
			const char *v = buf + at;
			size_t l = strnlen(v, len - at);
			if (!strncmp(v, "JAVA_TOOL_OPTIONS=", 18) ||
			    !strncmp(v, "JDK_JAVA_OPTIONS=", 17) ||
			    !strncmp(v, "_JAVA_OPTIONS=", 14)) {
				memmove(buf + kept, v, l);
				kept += l;
				buf[kept++] = '\0';
			}
			at += l + 1;
		}
		len = kept;
	}
	return attach_disabled_by(buf, len);
}

static int attach_check_options(pid_t pid, struct fs_error *err)
{
	char path[64];
	static const char *const files[] = {"cmdline", "environ"};
	for (size_t i = 0; i < FS_ARRAY_SIZE(files); i++) {
		cleanup_free char *buf = NULL;
		size_t len = 0;
		struct fs_error ignored;
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files[i]);
		if (proc_read_file(path, 1u << 20, &buf, &len, &ignored) < 0)
			continue;
		const char *flag = attach_options_disable(buf, len, i == 1);
		if (!flag)
			continue;
		if (!strcmp(flag, "-XX:+DisableAttachMechanism"))
			return fs_error_set(
			    err, EOPNOTSUPP,
			    "pid %d was started with -XX:+DisableAttachMechanism (%s): "
			    "restart it without that flag to profile Java frames",
			    (int)pid, i ? "in its environment" : "on its command line");
		return fs_error_set(err, EPERM,
				    "pid %d was started with %s (%s): the JVM does not handle "
				    "SIGQUIT, which would kill it; restart it without that flag",
				    (int)pid, flag,
				    i ? "in its environment" : "on its command line");
	}
	return 0;
}

int attach_check_signal(pid_t pid, struct fs_error *err)
{
	struct proc_status st;
	int r = proc_status_read(pid, &st, err);
	if (r < 0)
		return r;
	if (st.sigign & ATTACH_SIGQUIT_BIT)
		return fs_error_set(err, EPERM,
				    "pid %d ignores SIGQUIT, so its attach listener cannot be "
				    "started (started as a background job of a non-interactive "
				    "shell?); start it with SIGQUIT at default",
				    (int)pid);
	r = attach_check_options(pid, err);
	if (r < 0)
		return r;
	if (!(st.sigcgt & ATTACH_SIGQUIT_BIT))
		return fs_error_set(err, EPERM,
				    "pid %d does not handle SIGQUIT (yet?): sending it would kill "
				    "the JVM; retry once it has started",
				    (int)pid);
	return 0;
}

int attach_send_sigquit(int pidfd, pid_t pid, uint64_t start_time, struct fs_error *err)
{
	if (start_time && !proc_alive(pid, start_time))
		return fs_error_set(err, ESRCH, "pid %d exited before it could be signalled",
				    (int)pid);
	if (pidfd_send_signal(pidfd, SIGQUIT, NULL, 0) < 0)
		return fs_error_set(err, errno == ESRCH ? ESRCH : errno,
				    "sending SIGQUIT to pid %d", (int)pid);
	return 0;
}

/* 1 when every thread of pid blocks SIGQUIT. */
static int attach_all_threads_block(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	cleanup_closedir DIR *d = opendir(path);
	if (!d)
		return 0;
	int seen = 0, blocking = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char file[320];
		cleanup_free char *buf = NULL;
		struct fs_error ignored;
		snprintf(file, sizeof(file), "%s/%s/status", path, de->d_name);
		if (proc_read_file(file, 64 * 1024, &buf, NULL, &ignored) < 0)
			continue;
		const char *b = strstr(buf, "\nSigBlk:");
		seen++;
		if (b && (strtoull(b + 8, NULL, 16) & ATTACH_SIGQUIT_BIT))
			blocking++;
	}
	return seen && seen == blocking;
}

/* 1 when pid is stopped (state T: SIGSTOP, a job-control stop; t: a tracer). */
static int attach_stopped(pid_t pid)
{
	char path[64];
	cleanup_free char *buf = NULL;
	struct fs_error ignored;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (proc_read_file(path, 4096, &buf, NULL, &ignored) < 0)
		return 0;
	const char *r = strrchr(buf, ')');
	return r && r[1] == ' ' && (r[2] == 'T' || r[2] == 't');
}

void attach_explain_failure(pid_t pid, uint64_t start_time, struct fs_error *err)
{
	struct fs_error why = {0};
	if (start_time && !proc_alive(pid, start_time)) {
		fs_error_wrap(err, "pid %d has exited", (int)pid);
		return;
	}
	if (attach_stopped(pid)) {
		fs_error_wrap(err,
			      "pid %d is stopped (SIGSTOP or a debugger), so it cannot answer; "
			      "continue it (kill -CONT %d) or use --mode vmstructs",
			      (int)pid, (int)pid);
		return;
	}
	if (attach_check_options(pid, &why) < 0) {
		fs_error_wrap(err, "%s", why.msg);
		return;
	}
	if (attach_all_threads_block(pid))
		fs_error_wrap(err, "every thread of pid %d blocks SIGQUIT", (int)pid);
}
