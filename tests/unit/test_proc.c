/* test_proc.c - lib/proc.c's re-check of facts read by pid string after
 * the process was pinned with a pidfd (the hook's registry entry). */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "tap.h"

int main(void)
{
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
