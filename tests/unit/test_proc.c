/* test_proc.c - lib/proc.c's re-check of facts read by pid string after
 * the process was pinned with a pidfd (the hook's registry entry), and
 * reads of a process's memory that never reach a process that reused its
 * pid. */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "procmem.h"
#include "tap.h"

static volatile uint64_t marker;

/* A child that sets marker to value, says so on a pipe and waits; with
 * want, it gets exactly that pid (clone3 set_tid: root), else any. */
static pid_t spawn_marked(uint64_t value, pid_t want)
{
	int p[2];
	char c;
	if (pipe(p) < 0)
		return -1;
	pid_t pid;
	if (want) {
		struct clone_args args;
		memset(&args, 0, sizeof(args));
		args.exit_signal = SIGCHLD;
		args.set_tid = (uint64_t)(uintptr_t)&want;
		args.set_tid_size = 1;
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	} else {
		pid = fork();
	}
	if (pid == 0) {
		marker = value;
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

/* The JVM exits and its pid is reused: a read through procmem_read_some with
 * the old pidfd gets nothing, where a bare process_vm_readv reads the new
 * process. */
static void test_recycled_pid(void)
{
	struct fs_error err = {0};
	uint64_t st, got = 0;
	pid_t a = spawn_marked(0xaaaa, 0);
	ok(a > 0, "first process %d", (int)a);
	ok(proc_start_time(a, &st, &err) == 0, "its start time");
	int pidfd = proc_pidfd_open_checked(a, st, &err);
	ok(pidfd >= 0, "pinned with a pidfd: %s", err.msg);
	is_int(procmem_read_some(a, pidfd, (uint64_t)(uintptr_t)&marker, &got, sizeof(got)),
	       (int)sizeof(got), "its memory is read");
	ok(got == 0xaaaa, "its own marker (%#llx)", (unsigned long long)got);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);

	pid_t b = spawn_marked(0xbbbb, a);
	if (b == a) {
		struct iovec local = {.iov_base = &got, .iov_len = sizeof(got)};
		struct iovec remote = {.iov_base = (void *)&marker, .iov_len = sizeof(got)};
		got = 0;
		ok(process_vm_readv(a, &local, 1, &remote, 1, 0) == sizeof(got) && got == 0xbbbb,
		   "pid %d reused: a bare read gets the new process's memory", (int)a);
	} else {
		tap_diag("pid %d not reused (clone3 set_tid: %s)", (int)a, strerror(errno));
		tap_skip(1, "the pid was not reused");
	}
	got = 0;
	is_int(procmem_read_some(a, pidfd, (uint64_t)(uintptr_t)&marker, &got, sizeof(got)), -ESRCH,
	       "through the old pidfd: refused");
	ok(got == 0, "and nothing of the new process was returned");
	/* (A new pidfd checked against the start time could be fooled: a pid
	 * reused within the same clock tick has the same start time. The
	 * pidfd held from before is not.) */
	is_int(procmem_read_some(a, -1, (uint64_t)(uintptr_t)&marker, &got, sizeof(got)), -EBADF,
	       "no pidfd: no read");
	close(pidfd);
	if (b > 0) {
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
	}
}

static void test_maps_scan(void)
{
	static const char *const needles[] = {"[stack]\n", "/no-such-library.so\n"};
	struct fs_error err = {0};
	unsigned found = 0;
	is_int(proc_maps_scan(getpid(), needles, 2, &found, &err), 0, "maps scanned");
	is_int((int)found, 1, "our stack found, no such library");
	is_int(proc_maps_scan(0x3fffffff, needles, 2, &found, &err), -ESRCH, "no such process");
}

int main(void)
{
	tap_plan(17);
	test_recycled_pid();
	test_maps_scan();
	struct fs_error err = {0};
	uint64_t st;
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	int pidfd = proc_pidfd_open_checked(child, 0, &err);
	ok(pidfd >= 0, "pidfd of a child: %s", err.msg);
	ok(proc_start_time(child, &st, &err) == 0, "its start time");
	is_int(proc_pidfd_recheck(pidfd, child, st, &err), 0, "alive, same start: the facts hold");
	is_int(proc_pidfd_recheck(pidfd, child, st + 1, &err), -ESRCH,
	       "another start time: refused (%s)", err.msg);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	is_int(proc_pidfd_recheck(pidfd, child, st, &err), -ESRCH,
	       "exited and reaped: refused (%s)", err.msg);
	close(pidfd);
	return tap_done();
}
