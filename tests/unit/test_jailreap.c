/* test_jailreap.c - jail_reap never blocks past its deadline (lib/jail.h).
 *
 * A child that runs past its deadline is killed and reaped. A child that
 * cannot die is the real case: a FUSE daemon (what a container with
 * /dev/fuse runs) that answers INIT and then reads a request without ever
 * answering it keeps the task that waits on it in D state, SIGKILL or not.
 * This test mounts such a file system itself (through /dev/fuse, no
 * library), has a jailed child stat a file there, and asserts that
 * jail_reap returns within its deadline plus the kill grace, counts the
 * child as abandoned, and reaps it later once the daemon is gone. The
 * FUSE part needs root and /dev/fuse (skipped otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "fusetest.h"
#include "tap.h"
#include "timeutil.h"

static const struct jail_rule allow[] = {
    JAIL_ALLOW("newfstatat"), JAIL_ALLOW("statx"),	     JAIL_ALLOW("stat"),
    JAIL_ALLOW("lstat"),      JAIL_ALLOW("clock_nanosleep"), JAIL_ALLOW("nanosleep"),
    JAIL_ALLOW("pause"),      JAIL_ALLOW("exit_group"),	     JAIL_ALLOW("exit"),
};

static const char *stat_path;

static __attribute__((noreturn)) void child_main(const struct fs_error *setup_err, void *arg)
{
	(void)arg;
	if (setup_err)
		_exit(1);
	if (stat_path) {
		struct stat st;
		stat(stat_path, &st); /* held by the daemon */
	} else {
		for (;;)
			pause();
	}
	_exit(0);
}

static int spawn(struct jail_child *c)
{
	struct fs_error err = {0};
	struct jail_spec spec = {.what = "the test child",
				 .allow = allow,
				 .nallow = sizeof(allow) / sizeof(allow[0]),
				 .net_ns_fd = -1,
				 .mnt_ns_fd = -1,
				 .root_fd = -1,
				 .main = child_main};
	int r = jail_spawn(&spec, c, &err);
	if (r < 0)
		tap_diag("jail_spawn: %s", err.msg);
	return r;
}

static void test_deadline_kills(void)
{
	struct jail_child c;
	stat_path = NULL;
	unsigned before = jail_abandoned();
	if (!ok(spawn(&c) == 0, "a child that never ends starts"))
		return;
	uint64_t t0 = timeutil_now_ms();
	int r = jail_reap(&c, t0 + 100);
	uint64_t took = timeutil_now_ms() - t0;
	ok(r == -ETIMEDOUT, "jail_reap kills it at the deadline (%d)", r);
	ok(took < 1000, "and returns in %llu ms", (unsigned long long)took);
	ok(jail_abandoned() == before, "a child that dies when killed is not abandoned");
}

/* cleanup_jail_child: a child left at scope exit is killed and reaped. */
static void test_cleanup_kills(void)
{
	pid_t pid = 0;
	stat_path = NULL;
	{
		cleanup_jail_child struct jail_child c = {0};
		if (!ok(spawn(&c) == 0, "cleanup: a child that never ends starts"))
			return;
		pid = c.pid;
	}
	/* Reaped: the pid is no child of ours any more. */
	errno = 0;
	ok(waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD,
	   "cleanup_jail_child killed and reaped it at scope exit");
}

static void test_stuck_child(void)
{
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		tap_skip(6, "needs root and /dev/fuse (a FUSE daemon that holds a request)");
		return;
	}
	char mnt[] = "/tmp/fs-jailreap-XXXXXX";
	char path[64];
	int tell[2];
	if (!mkdtemp(mnt) || pipe2(tell, O_CLOEXEC) < 0) {
		tap_skip(6, "no temporary directory or pipe");
		return;
	}
	int fd = fusetest_mount(mnt, "fs-jailreap", 0, 0);
	if (fd < 0) {
		tap_diag("mount: %s", strerror(-fd));
		tap_skip(6, "cannot mount a FUSE file system here");
		rmdir(mnt);
		return;
	}
	pid_t daemon = fork();
	if (daemon == 0)
		_exit(fusetest_hold(fd, tell[1]));
	close(fd);
	close(tell[1]);
	snprintf(path, sizeof(path), "%s/x", mnt);
	stat_path = path;
	struct jail_child c;
	unsigned before = jail_abandoned();
	if (ok(spawn(&c) == 0, "a child that stats a file of the stalled mount starts")) {
		/* The daemon has read the child's LOOKUP: the child waits on it. */
		struct pollfd p = {.fd = tell[0], .events = POLLIN};
		int held = poll(&p, 1, 5000) == 1;
		ok(held, "the daemon holds the child's request");
		uint64_t t0 = timeutil_now_ms();
		int r = jail_reap(&c, t0 + 300);
		uint64_t took = timeutil_now_ms() - t0;
		ok(r == -ETIMEDOUT, "jail_reap gives up on it (%d)", r);
		ok(took < 300 + JAIL_KILL_GRACE_MS + 700,
		   "within its deadline and the kill grace (%llu ms)", (unsigned long long)took);
		ok(jail_abandoned() == before + 1 && jail_reap_abandoned() == 1,
		   "the child is counted as abandoned and still there (%u, %u)", jail_abandoned(),
		   jail_reap_abandoned());
	} else {
		tap_skip(4, "no child");
	}
	/* The daemon goes: the connection is aborted, the request fails, the
	 * killed child dies and is reaped without blocking. */
	kill(daemon, SIGKILL);
	waitpid(daemon, NULL, 0);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
	close(tell[0]);
	uint64_t until = timeutil_now_ms() + 5000;
	unsigned left;
	while ((left = jail_reap_abandoned()) != 0 && timeutil_now_ms() < until)
		usleep(10 * 1000);
	ok(left == 0, "once the daemon is gone the abandoned child is reaped");
	stat_path = NULL;
}

int main(void)
{
	tap_plan(4 + 2 + 6);
	test_deadline_kills();
	test_cleanup_kills();
	test_stuck_child();
	return tap_done();
}
