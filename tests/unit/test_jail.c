/* test_jail.c - what code running INSIDE each jailed child (lib/jail.h)
 * can still reach: the attach sandbox's child (sidecar/jvm/sandbox.c, run
 * as uid 0 against a target in a network namespace of its own) and the ELF
 * child (sidecar/symbolize/elfjail.c, its own spec with this file's main).
 *
 * The probe acts as a hostile reply would once it runs code there: it
 * lists its fds (0..1024), opens "../../sys/kernel/core_pattern" for
 * writing through every one of them and through a /proc/self/fd it opens
 * itself, opens host paths from its root, signals the test (its
 * grandparent's process) and pid 1, and connects to an abstract socket of
 * the host's network namespace. Every one must fail; the work each child
 * exists for must still succeed. Nothing is written: an open that wrongly
 * succeeds is closed at once. Needs root (setns, and a uid 0 child). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "elfjail.h"
#include "jail.h"
#include "sandbox.h"
#include "tap.h"
#include "timeutil.h"

#define PROBE_MAX_FD 1024
#define CORE_PATTERN "../../sys/kernel/core_pattern"

struct probe {
	char buf[16384];
	size_t len;
	pid_t host_pid;	      /* a host process to signal (the test) */
	const char *abstract; /* an abstract socket of the host's network ns */
	const char *readable; /* a file the child may read ("" none) */
};

static void probe_say(struct probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void probe_say(struct probe *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p->buf + p->len, sizeof(p->buf) - p->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(p->buf) - p->len)
		p->len += (size_t)n;
}

/* The errno of an open that must fail; 0 (and the fd closed) if it did not. */
static int probe_open(int dirfd, const char *path, int flags)
{
	int fd = openat(dirfd, path, flags | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static int probe_open2(int dirfd, const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC)};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

/* "fds=0,1,2,3" then one "escape fd N PATH=errno" line per open that did
 * not fail (none expected), then the other checks, one per line. */
static void probe_run(struct probe *p)
{
	probe_say(p, "fds=");
	int leaks = 0, dirs = 0;
	for (int fd = 0; fd <= PROBE_MAX_FD; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
			dirs++;
		leaks += probe_open(fd, CORE_PATTERN, O_WRONLY) == 0;
		leaks += probe_open2(fd, CORE_PATTERN, O_WRONLY) == 0;
		leaks += probe_open(fd, "..", O_RDONLY | O_DIRECTORY) == 0;
		leaks += probe_open2(fd, "..", O_PATH | O_DIRECTORY) == 0;
		/* Was it open? close() tells for every kind of fd (an O_PATH
		 * one fails lseek and fcntl alike); the channel stays. */
		if (fd == JAIL_FD || close(fd) == 0)
			probe_say(p, "%s%d", fd ? "," : "", fd);
	}
	probe_say(p, "\ndirs=%d\nescapes=%d\n", dirs, leaks);
	/* A procfs fd of its own: the way the old child reached the host. */
	int own = openat(AT_FDCWD, "/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = errno;
	probe_say(p, "procfd=%d\n", own >= 0 ? probe_open(own, CORE_PATTERN, O_WRONLY) : e);
	probe_say(p, "procfd2=%d\n", own >= 0 ? probe_open2(own, CORE_PATTERN, O_WRONLY) : e);
	if (own >= 0)
		close(own);
	probe_say(p, "root_core=%d\n",
		  probe_open(AT_FDCWD, "/proc/sys/kernel/core_pattern", O_WRONLY));
	probe_say(p, "root_core2=%d\n",
		  probe_open2(AT_FDCWD, "/proc/sys/kernel/core_pattern", O_WRONLY));
	probe_say(p, "sysrq=%d\n", probe_open2(AT_FDCWD, "/proc/sysrq-trigger", O_WRONLY));
	/* Signal 0: nothing is delivered even if the call were allowed. */
	probe_say(p, "kill=%d\n", kill(p->host_pid, 0) == 0 ? 0 : errno);
	probe_say(p, "kill1=%d\n", kill(1, 0) == 0 ? 0 : errno);
	probe_say(p, "tgkill=%d\n",
		  syscall(SYS_tgkill, p->host_pid, p->host_pid, 0) == 0 ? 0 : errno);
	probe_say(p, "tgkill1=%d\n", syscall(SYS_tgkill, 1, 1, 0) == 0 ? 0 : errno);
	probe_say(p, "setown=%d\n", fcntl(JAIL_FD, F_SETOWN, p->host_pid) == 0 ? 0 : errno);
	void *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	probe_say(p, "mmap_exec=%d\n", x != MAP_FAILED ? 0 : errno);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t al = strlen(p->abstract);
	memcpy(sa.sun_path + 1, p->abstract, al);
	int c = s < 0 ? errno
		      : (connect(s, (struct sockaddr *)&sa,
				 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + al)) == 0
			     ? 0
			     : errno);
	probe_say(p, "abstract=%d\n", c);
	if (s >= 0)
		close(s);
	/* The work: reading a file of the target's (sandbox only). */
	if (p->readable[0]) {
		char b[64];
		int fd = openat(AT_FDCWD, p->readable, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;
		probe_say(p, "read=%d\n", n > 0 ? 0 : errno);
		if (fd >= 0)
			close(fd);
		/* and creating and removing one in its /tmp (the attach trigger) */
		char path[64];
		snprintf(path, sizeof(path), "tmp/test_jail_create.%d", (int)getpid());
		int r = probe_open2(AT_FDCWD, path, O_RDONLY | O_CREAT | O_EXCL);
		probe_say(p, "create=%d\n",
			  r == 0 ? (unlinkat(AT_FDCWD, path, 0) == 0 ? 0 : errno) : r);
	}
	void *m = malloc(1 << 20);
	probe_say(p, "malloc=%d\n", m ? 0 : ENOMEM);
	free(m);
}

/* ---- checks on the probe's report ---------------------------------------- */

static int field(const char *out, const char *name)
{
	char key[32];
	snprintf(key, sizeof(key), "\n%s=", name);
	const char *f = strstr(out, key);
	return f ? atoi(f + strlen(key)) : -1;
}

static void check_denied(const char *who, const char *out, const char *name, const char *what)
{
	int e = field(out, name);
	if (!ok(e > 0, "%s: %s fails", who, what))
		tap_diag("%s=%d (%s)", name, e, e > 0 ? strerror(e) : "allowed");
}

static void check_report(const char *who, const char *out)
{
	tap_diag("%s reported: %s", who, out);
	ok(!strncmp(out, "fds=0,1,2,3\n", 12), "%s: its fds are 0-3 only (/dev/null, the channel)",
	   who);
	is_int(field(out, "dirs"), 0, "%s: none of its fds is a directory", who);
	is_int(field(out, "escapes"), 0,
	       "%s: no openat/openat2 of " CORE_PATTERN " or .. through any fd", who);
	check_denied(who, out, "procfd", "its own /proc/self/fd then " CORE_PATTERN);
	check_denied(who, out, "procfd2", "its own /proc/self/fd then " CORE_PATTERN " (openat2)");
	check_denied(who, out, "root_core", "openat of /proc/sys/kernel/core_pattern for writing");
	check_denied(who, out, "root_core2",
		     "openat2 of /proc/sys/kernel/core_pattern for writing");
	check_denied(who, out, "sysrq", "opening /proc/sysrq-trigger for writing");
	check_denied(who, out, "kill", "kill of the test process");
	check_denied(who, out, "kill1", "kill of pid 1");
	check_denied(who, out, "tgkill", "tgkill of the test process");
	check_denied(who, out, "tgkill1", "tgkill of pid 1");
	check_denied(who, out, "setown", "F_SETOWN (SIGIO to another process)");
	check_denied(who, out, "mmap_exec", "an executable mapping");
	check_denied(who, out, "abstract", "connecting to the host's abstract socket");
	is_int(field(out, "malloc"), 0, "%s: malloc still works", who);
}

/* ---- the attach sandbox's child ----------------------------------------- */

static int sb_probe(struct sandbox_child *c, void *arg, struct fs_error *err)
{
	struct probe *p = arg;
	probe_run(p);
	return sandbox_child_write(c, p->buf, p->len, err);
}

/* A target in a network namespace of its own (and the host's mounts). */
static pid_t start_target(void)
{
	int ready[2];
	if (pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char b = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
		if (write(ready[1], &b, 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	char b = 0;
	if (pid < 0 || read(ready[0], &b, 1) != 1 || b != 'y') {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

static void test_sandbox_child(const char *abstract)
{
	struct fs_error err = {0};
	char readable[] = "/tmp/test_jail.XXXXXX";
	int rfd = mkstemp(readable);
	if (rfd < 0 || write(rfd, "hello\n", 6) != 6) {
		ok(0, "a file for the child to read: %s", strerror(errno));
		return;
	}
	close(rfd);
	pid_t target = start_target();
	if (target < 0) {
		ok(0, "a target process in a network namespace of its own");
		unlink(readable);
		return;
	}
	struct probe *p = calloc(1, sizeof(*p));
	p->host_pid = getpid();
	p->abstract = abstract;
	p->readable = readable;
	/* uid 0: what stops it must be the jail, not file permissions. */
	struct sandbox_target t = {.pid = target, .uid = 0, .gid = 0};
	struct sandbox_job job = {.fn = sb_probe, .arg = p, .max_out = 1 << 20, .timeout_ms = 5000};
	cleanup_free char *out = NULL;
	size_t len;
	int r = sandbox_run(&t, &job, &out, &len, &err);
	ok(r == 0, "the attach sandbox's child runs the probe: %s", err.msg);
	if (r == 0) {
		check_report("attach child", out);
		is_int(field(out, "read"), 0,
		       "attach child: reading a file of the target still works");
		is_int(field(out, "create"), 0,
		       "attach child: creating and removing one in /tmp too");
	}
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	unlink(readable);
	free(p);
}

/* ---- the ELF child ------------------------------------------------------- */

static struct probe elf_probe;

static __attribute__((noreturn)) void elf_probe_main(const struct fs_error *setup_err, void *arg)
{
	struct probe *p = arg;
	if (setup_err) {
		jail_send(JAIL_FD, 1, setup_err->msg, strlen(setup_err->msg), NULL, 0);
		_exit(1);
	}
	probe_run(p);
	jail_send(JAIL_FD, 0, p->buf, p->len, NULL, 0);
	_exit(0);
}

static void test_elf_child(const char *abstract)
{
	struct fs_error err = {0};
	struct jail_spec spec;
	struct jail_child c;
	struct {
		uint32_t type, len;
	} h = {0, 0};
	elfjail_spec(NULL, &spec);
	spec.main = elf_probe_main;
	spec.arg = &elf_probe;
	elf_probe.host_pid = getpid();
	elf_probe.abstract = abstract;
	elf_probe.readable = "";
	if (!ok(jail_spawn(&spec, &c, &err) == 0, "the ELF child starts: %s", err.msg))
		return;
	uint64_t deadline = timeutil_now_ms() + 5000;
	cleanup_free char *out = calloc(1, sizeof(elf_probe.buf) + 2);
	int r = jail_read_full(c.sock, &h, sizeof(h), deadline);
	if (r == 0 && h.len <= sizeof(elf_probe.buf))
		r = jail_read_full(c.sock, out + 1, h.len, deadline);
	ok(r == 0 && h.type == 0, "the ELF child runs the probe (%d, record %u)", r, h.type);
	out[0] = '\n'; /* field() looks for "\nname=" */
	if (r == 0 && h.type == 0)
		check_report("ELF child", out + 1);
	ok(jail_reap(&c, timeutil_now_ms() + 2000) == 0, "the ELF child exits by itself");
}

int main(void)
{
	if (geteuid() != 0) {
		tap_skip_all("needs root (setns, and a uid 0 child)");
		return tap_done();
	}
	/* An abstract socket of the host's network namespace: what a jailed
	 * child must not reach (a runtime's shim listens on such sockets). */
	char abstract[64];
	snprintf(abstract, sizeof(abstract), "flamesidecar-test-jail-%d", (int)getpid());
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path + 1, abstract, strlen(abstract));
	if (ls < 0 ||
	    bind(ls, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract))) < 0 ||
	    listen(ls, 4) < 0) {
		tap_skip_all("cannot listen on an abstract unix socket");
		return tap_done();
	}
	tap_plan(2 * 16 + 3 + 3);
	test_sandbox_child(abstract);
	test_elf_child(abstract);
	close(ls);
	return tap_done();
}
