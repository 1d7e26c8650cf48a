/* test_registry_sweep.c - a sweep never hides a live entry from a
 * concurrent reader. A sweeper judges entries it read earlier (any
 * `list`, `gc` or lookup sweeps); while one judges a live entry, a reader
 * (another `run`, a trigger) must still find it by id and by name. The
 * sweeper here judges the live entry and its index file over and over
 * (what many concurrent CLI calls do) while the reader looks it up. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "registry.h"
#include "tap.h"
#include "timeutil.h"

int main(void)
{
	tap_plan(6);
	char top[] = "/tmp/fs-regsweep-XXXXXX", dir[128];
	if (!mkdtemp(top)) {
		tap_skip_all("no temporary directory");
		return tap_done();
	}
	snprintf(dir, sizeof(dir), "%s/run/containers", top);
	struct fs_error err = {0};
	struct registry_entry e, got;
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "live");
	e.pid = getpid();
	proc_start_time(getpid(), &e.start_time, NULL);
	snprintf(e.engine, sizeof(e.engine), "docker");
	snprintf(e.name, sizeof(e.name), "web");
	is_int(registry_write(dir, &e, &err), 0, "a live entry named web");
	/* the first lookup by name builds the index */
	err.msg[0] = '\0';
	is_int(registry_find(dir, "web", &got, &err), 0, "found by name %s", err.msg);
	int dfd = registry_dir_open(dir, &err);
	uint64_t until = timeutil_now_ms() + 1500;
	pid_t sweeper = fork();
	if (sweeper == 0) {
		while (timeutil_now_ms() < until) {
			registry_remove_dead(dir, "live");
			registry_index_drop(dfd, dir, REGISTRY_INDEX_NAME, "web", "live");
		}
		_exit(0);
	}
	unsigned reads = 0, missed_id = 0, missed_name = 0;
	while (timeutil_now_ms() < until) {
		reads++;
		if (registry_read(dir, "live", &got, &err) < 0)
			missed_id++;
		if (registry_find(dir, "web", &got, &err) < 0)
			missed_name++;
	}
	int st = 0;
	waitpid(sweeper, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the sweeper ran");
	ok(reads > 100, "%u lookups while it swept", reads);
	is_int((int)missed_id, 0, "the live entry was never missing by id");
	is_int((int)missed_name, 0, "nor by name");
	close(dfd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", top);
	return tap_done();
}
