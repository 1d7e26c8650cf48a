/* test_triggerwait.c - the trigger monitor never waits for `run` without a
 * deadline (hook/trigger.c, trigger_wait): a child that ends is reaped
 * with its status, one that outlives the deadline is killed and reaped in
 * bounded time. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook.h"
#include "tap.h"
#include "timeutil.h"

int main(void)
{
	tap_plan(5);
	int status = -1;
	pid_t pid = fork();
	if (pid == 0)
		_exit(3);
	int w = trigger_wait(pid, timeutil_now_ms() + 5000, &status);
	ok(w == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 3,
	   "a child that ends is reaped with its status (%d)", status);
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	uint64_t t0 = timeutil_now_ms();
	int r = trigger_wait(pid, t0 + 200, &status);
	uint64_t took = timeutil_now_ms() - t0;
	ok(r == 1, "a child past its deadline is killed (%d)", r);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "by SIGKILL");
	ok(took < 200 + TRIGGER_KILL_GRACE_MS, "in bounded time (%llu ms)",
	   (unsigned long long)took);
	ok(waitpid(pid, NULL, WNOHANG) < 0, "and reaped");
	return tap_done();
}
