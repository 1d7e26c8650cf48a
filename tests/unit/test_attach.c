/* test_attach.c - the HotSpot attach protocol against fake listeners and
 * reply parsing for JDK 8..25 (the sandbox it runs in: test_sandbox.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "cleanup.h"
#include "proc.h"
#include "sandbox.h"
#include "tap.h"
#include "timeutil.h"

/* ---- pure protocol ------------------------------------------------------- */

static void test_encode(void)
{
	char buf[4096];
	size_t len = 0;
	struct fs_error err = {0};
	const char *args[3] = {"/opt/flamesidecar/libflameagent.so", "true", "mode=oneshot"};
	static const char want[] =
	    "1\0load\0/opt/flamesidecar/libflameagent.so\0true\0mode=oneshot";
	ok(attach_encode_request("load", args, buf, sizeof(buf), &len, &err) == 0, "encode load");
	ok(len == sizeof(want) && !memcmp(buf, want, len), "load request bytes are protocol 1");

	static const char want2[] = "1\0jcmd\0Compiler.perfmap\0\0";
	const char *jargs[3] = {"Compiler.perfmap", NULL, NULL};
	ok(attach_encode_request("jcmd", jargs, buf, sizeof(buf), &len, &err) == 0 &&
	       len == sizeof(want2) && !memcmp(buf, want2, len),
	   "missing arguments are sent empty (HotSpot always reads three)");

	ok(attach_encode_request("a_command_name_too_long", jargs, buf, sizeof(buf), &len, &err) ==
	       -EINVAL,
	   "a command name over 16 bytes is refused");
	char big[ATTACH_ARG_MAX + 2];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	const char *bargs[3] = {big, NULL, NULL};
	ok(attach_encode_request("jcmd", bargs, buf, sizeof(buf), &len, &err) == -EINVAL,
	   "an argument over 1024 bytes is refused: %s", err.msg);
	ok(attach_encode_request("jcmd", jargs, buf, 8, &len, &err) == -EINVAL,
	   "a small buffer is refused, not overrun");
}

static int parse(const char *s, struct attach_reply *r, struct fs_error *err)
{
	return attach_parse_reply(s, strlen(s), r, err);
}

static void test_parse(void)
{
	struct attach_reply r;
	struct fs_error err = {0};
	ok(parse("0\n", &r, &err) == 0 && r.code == 0 && r.len == 0, "'0\\n'");
	attach_reply_free(&r);
	ok(parse("0", &r, &err) == 0 && r.code == 0, "a bare code without newline");
	attach_reply_free(&r);
	ok(parse("-1\nsome text\nmore\n", &r, &err) == 0 && r.code == -1 &&
	       !strcmp(r.text, "some text\nmore\n"),
	   "negative code and the text after it");
	attach_reply_free(&r);
	ok(parse("101\r\n", &r, &err) == 0 && r.code == 101, "CRLF after the code");
	attach_reply_free(&r);
	ok(parse("", &r, &err) == -EPROTO, "empty reply: %s", err.msg);
	ok(parse("HTTP/1.1 200 OK\n\x1b[31m", &r, &err) == -EPROTO && !strchr(err.msg, '\x1b'),
	   "garbage is refused, control characters not echoed: %s", err.msg);
	ok(parse("12345678901234\n", &r, &err) == -EPROTO, "an over-long code is refused");
	ok(parse("-\n", &r, &err) == -EPROTO, "a lone minus is refused");
	ok(parse("0 \n", &r, &err) == -EPROTO, "trailing junk on the code line is refused");
}

static int load(const char *s, int *rc, struct fs_error *err)
{
	struct attach_reply r;
	int x = parse(s, &r, err);
	if (x == 0) {
		x = attach_load_result(&r, "/a/lib.so", rc, err);
		attach_reply_free(&r);
	}
	return x;
}

static void test_load_result(void)
{
	int rc = 99;
	struct fs_error err = {0};
	ok(load("0\nreturn code: 0\n", &rc, &err) == 0 && rc == 0, "JDK 9-25: loaded");
	ok(load("0\nreturn code: -1\n", &rc, &err) == -EIO && rc == -1,
	   "JDK 9-25: Agent_OnAttach failed: %s", err.msg);
	ok(load("0\n0\n", &rc, &err) == 0 && rc == 0, "JDK 8: loaded");
	ok(load("0\n3\n", &rc, &err) == -EIO && rc == 3, "JDK 8: Agent_OnAttach returned 3");
	ok(load("0\n", &rc, &err) == 0, "loaded, nothing reported");
	ok(load("-1\n/a/lib.so was not loaded.\n/a/lib.so: cannot open shared object file: "
		"No such file or directory\n",
		&rc, &err) == -ENOENT,
	   "JDK 11-17: missing library: %s", err.msg);
	ok(load("0\n/a/lib.so was not loaded.\n/a/lib.so: cannot open shared object file: "
		"No such file or directory\n",
		&rc, &err) == -ENOENT,
	   "JDK 21-25: missing library with code 0");
	ok(load("-1\nAgent_OnAttach is not available in /a/lib.so\n", &rc, &err) == -ENOEXEC,
	   "JDK 17: not an agent");
	ok(load("0\nAgent_OnAttach is not available in /a/lib.so\n", &rc, &err) == -ENOEXEC,
	   "JDK 25: not an agent");
	ok(load("100\n", &rc, &err) == -EIO, "JDK 8 error code without text: %s", err.msg);
	ok(load("0\nreturn code: 99999999999999\n", &rc, &err) < 0, "absurd return code");
}

static int jcmd(const char *s, struct fs_error *err)
{
	struct attach_reply r;
	int x = parse(s, &r, err);
	if (x == 0) {
		x = attach_jcmd_result(&r, "Compiler.perfmap", err);
		attach_reply_free(&r);
	}
	return x;
}

static void test_jcmd_result(void)
{
	struct fs_error err = {0};
	ok(jcmd("0\n", &err) == 0, "Compiler.perfmap succeeded");
	ok(jcmd("-1\njava.lang.IllegalArgumentException: Unknown diagnostic command\n", &err) ==
	       -EOPNOTSUPP,
	   "JDK 8/11: no Compiler.perfmap: %s", err.msg);
	ok(jcmd("1\nsomething broke\n", &err) == -EIO && strstr(err.msg, "something broke"),
	   "a failure carries the JVM's text");
}

/* ---- fake listeners ------------------------------------------------------ */

enum fake_kind { FAKE_OK, FAKE_GARBAGE, FAKE_SILENT, FAKE_FLOOD };

/* A process that listens on path, accepts one connection, checks the
 * request and answers per kind. Returns its pid once it is listening. */
static pid_t fake_listener(const char *path, enum fake_kind kind, uid_t owner)
{
	int ready[2];
	if (pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid != 0) {
		char c;
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1)
			pid = -1;
		close(ready[0]);
		return pid;
	}
	close(ready[0]);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 1) < 0)
		_exit(1);
	if (owner != (uid_t)-1 && chown(path, owner, owner) < 0)
		_exit(1);
	if (write(ready[1], "r", 1) != 1)
		_exit(1);
	int c = accept(s, NULL, NULL);
	if (c < 0)
		_exit(1);
	if (kind == FAKE_SILENT) {
		pause();
		_exit(0);
	}
	char req[4096];
	ssize_t n = read(c, req, sizeof(req));
	(void)n;
	if (kind == FAKE_GARBAGE) {
		if (write(c, "SSH-2.0-OpenSSH\r\n", 17) < 0)
			_exit(1);
	} else if (kind == FAKE_FLOOD) {
		char block[65536];
		memset(block, '7', sizeof(block));
		for (int i = 0; i < 40; i++)
			if (write(c, block, sizeof(block)) < 0)
				break;
	} else {
		/* Echo the command so the client can see it arrived intact. */
		static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0";
		const char *reply = n == (ssize_t)sizeof(want) && !memcmp(req, want, sizeof(want))
					? "0\nrequest ok\n"
					: "1\nbad request\n";
		if (write(c, reply, strlen(reply)) < 0)
			_exit(1);
	}
	close(c);
	_exit(0);
}

static void reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

struct trig {
	pid_t listener;
	char sock[128], attach_file[128];
	int saw_attach_file;
	int start_listener;
	struct attach_target *target; /* learns the listener's pid */
};

static int trigger(void *arg, struct fs_error *err)
{
	struct trig *t = arg;
	struct stat st;
	t->saw_attach_file = lstat(t->attach_file, &st) == 0 && S_ISREG(st.st_mode);
	if (t->start_listener) {
		t->listener = fake_listener(t->sock, FAKE_OK, (uid_t)-1);
		t->target->host_pid = t->listener;
	}
	return 0;
}

static const char *const perfmap_args[3] = {"Compiler.perfmap", NULL, NULL};

/* test_fake_jvm, case 7: listeners that answer garbage, nothing, or too
 * much. */
static void test_fake_bad_replies(struct attach_target t, struct trig *tr)
{
	struct fs_error err = {0};
	struct attach_reply r;
	int sig = 0, fd;
	pid_t l;
	static const struct {
		enum fake_kind kind;
		int want;
		const char *what;
	} bad[] = {
	    {FAKE_GARBAGE, -EPROTO, "garbage"},
	    {FAKE_SILENT, -ETIMEDOUT, "nothing"},
	    {FAKE_FLOOD, -E2BIG, "over 1 MiB"},
	};
	for (size_t i = 0; i < FS_ARRAY_SIZE(bad); i++) {
		l = fake_listener(tr->sock, bad[i].kind, (uid_t)-1);
		t.host_pid = l;
		fd = attach_connect(&t, trigger, tr, timeutil_now_ms() + 2000, &sig, &err);
		int x = fd < 0 ? fd
			       : attach_execute(fd, "jcmd", perfmap_args, timeutil_now_ms() + 300,
						&r, &err);
		ok(x == bad[i].want, "a listener answering %s: %s", bad[i].what, err.msg);
		if (x == 0)
			attach_reply_free(&r);
		if (fd >= 0)
			close(fd);
		reap(l);
	}
}

static void test_fake_jvm(void)
{
	struct fs_error err = {0};
	struct attach_reply r;
	struct trig tr = {0};
	/* A pid number no real process in /tmp will use. */
	pid_t nspid = 900000000 + getpid() % 1000000;
	struct attach_target t = {.ns_pid = nspid, .uid = geteuid()};
	int sig = 0;
	snprintf(tr.sock, sizeof(tr.sock), "/tmp/.java_pid%d", (int)nspid);
	snprintf(tr.attach_file, sizeof(tr.attach_file), "/tmp/.attach_pid%d", (int)nspid);
	unlink(tr.sock);
	unlink(tr.attach_file);
	if (chdir("/") < 0)
		tap_diag("chdir / failed");

	/* 1. a listener that is already there and answers */
	pid_t l = fake_listener(tr.sock, FAKE_OK, (uid_t)-1);
	t.host_pid = l;
	int fd = attach_connect(&t, trigger, &tr, timeutil_now_ms() + 2000, &sig, &err);
	ok(fd >= 0 && !sig, "an existing socket of the JVM is used without a signal: %s", err.msg);
	if (fd >= 0) {
		ok(attach_execute(fd, "jcmd", perfmap_args, timeutil_now_ms() + 2000, &r, &err) ==
			   0 &&
		       r.code == 0 && !strcmp(r.text, "request ok\n"),
		   "request arrives intact and the reply is read: %s", err.msg);
		attach_reply_free(&r);
		close(fd);
	}
	reap(l);

	/* 2. a socket served by another process (pid check) */
	l = fake_listener(tr.sock, FAKE_OK, (uid_t)-1);
	t.host_pid = l + 100000;
	fd = attach_connect(&t, trigger, &tr, timeutil_now_ms() + 2000, &sig, &err);
	ok(fd == -EPERM && strstr(err.msg, "not by the JVM"),
	   "a listener that is not the JVM is refused: %s", err.msg);
	reap(l);

	/* 3. a socket owned by another uid */
	if (geteuid() == 0) {
		l = fake_listener(tr.sock, FAKE_OK, 12345);
		t.host_pid = l;
		fd = attach_connect(&t, trigger, &tr, timeutil_now_ms() + 2000, &sig, &err);
		ok(fd == -EPERM && strstr(err.msg, "owned by uid 12345"),
		   "a socket of another uid is refused: %s", err.msg);
		reap(l);
	} else {
		tap_skip(1, "needs root to listen as another uid");
	}
	unlink(tr.sock);

	/* 4. no socket: .attach_pid is created, the trigger starts the JVM's
	 * listener, the client finds it, the trigger file is removed */
	tr.start_listener = 1;
	struct attach_target t4 = t;
	t4.host_pid = 0;
	tr.target = &t4;
	fd = attach_connect(&t4, trigger, &tr, timeutil_now_ms() + 2000, &sig, &err);
	ok(sig == 1 && tr.saw_attach_file, "no socket: .attach_pid exists when the trigger runs");
	ok(fd >= 0, "and the client connects to the listener that the signal started: %s", err.msg);
	if (fd >= 0) {
		ok(attach_execute(fd, "jcmd", perfmap_args, timeutil_now_ms() + 2000, &r, &err) ==
			   0 &&
		       r.code == 0,
		   "and talks to it: %s", err.msg);
		attach_reply_free(&r);
		close(fd);
	}
	struct stat st;
	ok(lstat(tr.attach_file, &st) < 0 && errno == ENOENT, "the .attach_pid file is removed");
	reap(tr.listener);
	unlink(tr.sock);

	/* 5. no socket and nothing happens: a deadline, no leftovers */
	tr.start_listener = 0;
	uint64_t t0 = timeutil_now_ms();
	fd = attach_connect(&t, trigger, &tr, t0 + 150, &sig, &err);
	ok(fd == -ETIMEDOUT, "no listener appears: -ETIMEDOUT: %s", err.msg);
	ok(timeutil_now_ms() - t0 < 2000, "within the deadline");
	ok(lstat(tr.attach_file, &st) < 0, "the .attach_pid file is removed after a timeout");

	/* 6. a planted .attach_pid symlink */
	if (symlink("/etc/shadow", tr.attach_file) == 0) {
		fd = attach_connect(&t, trigger, &tr, timeutil_now_ms() + 500, &sig, &err);
		ok(fd == -EPERM && strstr(err.msg, "planted"), "a planted .attach_pid symlink: %s",
		   err.msg);
		ok(lstat(tr.attach_file, &st) == 0 && S_ISLNK(st.st_mode),
		   "nothing was written through it");
		unlink(tr.attach_file);
	}

	/* 7. listeners that answer garbage, nothing, or too much */
	test_fake_bad_replies(t, &tr);
	unlink(tr.sock);
}

int main(void)
{
	tap_plan(45);
	test_encode();
	test_parse();
	test_load_result();
	test_jcmd_result();
	test_fake_jvm();
	return tap_done();
}
