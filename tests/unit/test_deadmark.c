/* test_deadmark.c - what the hook's deadline leaves (lib/deadmark.c): the
 * log line with the time of firing and the last phase, the marker that
 * `list` reads, its slot and its removal. */
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deadmark.h"
#include "proc.h"
#include "tap.h"

static void test_fire(const char *tmp)
{
	char logp[512], run[512], buf[2048];
	snprintf(logp, sizeof(logp), "%s/hook.log", tmp);
	snprintf(run, sizeof(run), "%s/run", tmp);
	mkdir(run, 0700);
	int lfd = open(logp, O_WRONLY | O_CREAT | O_APPEND, 0600);
	uint64_t st = 0;
	proc_start_time(getpid(), &st, NULL);
	struct deadmark d;
	deadmark_prepare(&d, lfd, run, 1, "createRuntime", "ctr-1", getpid(), st, 25);
	d.phase = "names";
	deadmark_fire(&d);
	close(lfd);
	int fd = open(logp, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	regex_t re;
	regcomp(
	    &re,
	    "^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\\.[0-9]{3}Z error "
	    "flamehook\\[[0-9]+\\] createRuntime ctr-1: deadline of 25 ms reached after phase "
	    "names; gave up, the container runs on: opted in, not registered or bundle not "
	    "mounted\n$",
	    REG_EXTENDED);
	ok(regexec(&re, buf, 0, NULL, 0) == 0, "one whole log line, stamped");
	regfree(&re);

	struct deadmark_info *m = NULL;
	size_t nm = 0;
	is_int(deadmark_list(run, &m, &nm), 0, "list");
	is_int(nm, 1, "one marker");
	if (nm == 1) {
		is_str(m[0].id, "ctr-1", "its id");
		is_int(m[0].pid, getpid(), "its pid");
		ok(m[0].start_time == st, "its start time");
		is_str(m[0].phase, "names", "its phase");
		is_str(m[0].stage, "createRuntime", "its stage");
	}
	free(m);
	char name[16], p[600];
	deadmark_slot("ctr-1", name, sizeof(name));
	snprintf(p, sizeof(p), "%s/" DEADMARK_DIR "/%s", run, name);
	ok(access(p, F_OK) == 0, "in its slot %s", name);
	deadmark_remove(run, "ctr-2");
	ok(access(p, F_OK) == 0, "another id does not remove it");
	deadmark_remove(run, "ctr-1");
	ok(access(p, F_OK) != 0, "removed");

	/* A file that does not parse is junk for gc. */
	int jfd = open(p, O_WRONLY | O_CREAT, 0600);
	ok(write(jfd, "{\"id\":", 6) == 6, "half a marker");
	close(jfd);
	is_int(deadmark_sweep_junk(run), 1, "swept");
	ok(access(p, F_OK) != 0, "gone");
	snprintf(p, sizeof(p), "%s/" DEADMARK_DIR, run);
	rmdir(p);
	rmdir(run);
	unlink(logp);
}

static void test_slots(void)
{
	char a[16], b[16];
	deadmark_slot("x", a, sizeof(a));
	ok(!strncmp(a, "d-", 2) && strlen(a) == 4, "slot names are d-xx: %s", a);
	int distinct = 0;
	for (int i = 0; i < 64; i++) {
		char id[32];
		snprintf(id, sizeof(id), "c%d", i);
		deadmark_slot(id, b, sizeof(b));
		distinct += strcmp(a, b) != 0;
	}
	ok(distinct >= 60, "ids spread over the slots (%d of 64 differ from x's)", distinct);
}

int main(void)
{
	tap_plan(16);
	test_slots();
	char dir[] = "/tmp/test_deadmark.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	test_fire(dir);
	rmdir(dir);
	return tap_done();
}
