/* test_perfmap_tail.c - a growing perf map read in increments: lines split
 * anywhere, newer lines replacing older ones, control bytes, overlong
 * lines, the entry cap, and a file that is replaced, truncated or capped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "perfmap_tail.h"
#include "tap.h"

static const char *name_at(const struct perfmap_tail *t, uint64_t addr)
{
	const struct perfmap_entry *e = t->map ? perfmap_lookup(t->map, addr) : NULL;
	return e ? e->name : NULL;
}

static void feed(struct perfmap_tail *t, const char *s)
{
	struct fs_error err = {0};
	if (perfmap_tail_feed(t, s, strlen(s), &err) < 0)
		tap_diag("feed failed: %s", err.msg);
}

static void test_split_lines(void)
{
	static const char text[] = "1000 10 JS:*fib /app/fib.js:1:13\n"
				   "2000 20 JS:~loop /app/fib.js:3:1\n"
				   "3000 8 py::main:/app/x.py\n";
	/* every split point gives the same map as one feed */
	int same = 1;
	for (size_t cut = 0; cut <= sizeof(text) - 1; cut++) {
		struct perfmap_tail t;
		struct fs_error err = {0};
		perfmap_tail_init(&t);
		perfmap_tail_feed(&t, text, cut, &err);
		perfmap_tail_feed(&t, text + cut, sizeof(text) - 1 - cut, &err);
		const char *a = name_at(&t, 0x1005), *b = name_at(&t, 0x201f),
			   *c = name_at(&t, 0x3000);
		if (!a || strcmp(a, "JS:*fib /app/fib.js:1:13") || !b ||
		    strcmp(b, "JS:~loop /app/fib.js:3:1") || !c ||
		    strcmp(c, "py::main:/app/x.py") || t.lines != 3 || t.npartial != 0)
			same = 0;
		perfmap_free(t.map);
	}
	ok(same, "a map fed in two pieces, split anywhere, is the same map");

	struct perfmap_tail t;
	perfmap_tail_init(&t);
	feed(&t, "1000 10 first\n4000 10 unfin");
	ok(name_at(&t, 0x1000) && !name_at(&t, 0x4000), "an unfinished last line waits");
	is_int((int)t.npartial, 13, "its bytes are kept");
	feed(&t, "ished\n");
	ok(name_at(&t, 0x4000) && !strcmp(name_at(&t, 0x4000), "unfinished"),
	   "and is parsed once its newline comes");
	perfmap_free(t.map);
}

static void test_newer_wins(void)
{
	struct perfmap_tail t;
	perfmap_tail_init(&t);
	feed(&t, "1000 100 old_big\n2000 10 old_far\n");
	feed(&t, "1080 10 new_inside\n");
	ok(!name_at(&t, 0x1000), "an older entry overlapped by a newer one is dropped whole");
	ok(name_at(&t, 0x1085) && !strcmp(name_at(&t, 0x1085), "new_inside"),
	   "the newer one names");
	ok(name_at(&t, 0x2000) && !strcmp(name_at(&t, 0x2000), "old_far"), "others stay");
	is_int((int)perfmap_tail_count(&t), 2, "two entries");
	ok(perfmap_tail_memory(&t) >= t.map->memory, "memory counts the map");
	perfmap_free(t.map);
}

static void test_hostile_names(void)
{
	struct perfmap_tail t;
	char line[PERFMAP_MAX_LINE * 3];
	perfmap_tail_init(&t);
	feed(&t, "1000 10 evil\033]0;x\007\001\177end\n");
	const char *n = name_at(&t, 0x1000);
	ok(n && !strcmp(n, "evil?]0;x???end"), "control bytes and DEL become '?' (%s)",
	   n ? n : "-");
	feed(&t, "1100 10 c1\xc2\x9b"
		 "31m\xc2\xa0kept\xc2\n");
	n = name_at(&t, 0x1100);
	ok(n && !strcmp(n, "c1?31m\xc2\xa0kept\xc2"), "a C1 control becomes '?', the rest is kept");
	/* an overlong line fed in pieces: skipped, and the next line parses */
	memset(line, 'A', sizeof(line));
	line[0] = '2', line[1] = '0', line[2] = ' ', line[3] = '1', line[4] = ' ';
	struct fs_error err = {0};
	perfmap_tail_feed(&t, line, sizeof(line) / 2, &err);
	ok(t.skipping && t.npartial == 0, "an overlong unfinished line is not kept");
	perfmap_tail_feed(&t, line, sizeof(line) / 2, &err);
	feed(&t, "\n3000 10 after\n");
	ok(!name_at(&t, 0x20), "the overlong line names nothing");
	ok(name_at(&t, 0x3000) && !strcmp(name_at(&t, 0x3000), "after"), "the next line parses");
	is_int((int)t.skipped, 1, "one line skipped");
	perfmap_free(t.map);
}

static void test_file(const char *dir)
{
	char path[512], moved[512];
	struct fs_error err = {0};
	struct perfmap_tail t;
	size_t pending = 0;
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(moved, sizeof(moved), "%s/perf-1.old", dir);
	FILE *f = fopen(path, "w");
	fputs("1000 10 one\n", f);
	fflush(f);
	perfmap_tail_init(&t);
	cleanup_close int fd = open(path, O_RDONLY);
	ok(perfmap_tail_check(&t, fd, 1 << 20, &pending, &err) == 0 && pending == 12,
	   "check: 12 bytes to read");
	is_int((int)perfmap_tail_read(&t, fd, pending, &err), 12, "read them");
	fputs("2000 10 two\n", f);
	fflush(f);
	perfmap_tail_check(&t, fd, 1 << 20, &pending, &err);
	is_int((int)pending, 12, "only what was appended is pending");
	perfmap_tail_read(&t, fd, pending, &err);
	ok(name_at(&t, 0x1000) && name_at(&t, 0x2000), "both lines named");
	/* a file larger than the cap: its start only */
	fputs("3000 10 three\n", f);
	fflush(f);
	perfmap_tail_check(&t, fd, 30, &pending, &err);
	ok(t.capped && pending == 6, "capped: 6 bytes up to the cap");
	perfmap_tail_read(&t, fd, pending, &err);
	ok(!name_at(&t, 0x3000), "nothing past the cap is named");
	/* truncated: read again from the start */
	fclose(f);
	f = fopen(path, "w");
	fputs("5000 10 five\n", f);
	fflush(f);
	perfmap_tail_check(&t, fd, 1 << 20, &pending, &err);
	ok(t.restarts == 1 && t.offset == 0 && !name_at(&t, 0x1000), "truncated: restarted");
	perfmap_tail_read(&t, fd, pending, &err);
	ok(name_at(&t, 0x5000), "the new content named");
	fclose(f);
	/* replaced by another file of the same size: restarted too */
	if (rename(path, moved) < 0)
		tap_diag("rename failed");
	f = fopen(path, "w");
	fputs("6000 10 six!\n", f);
	fclose(f);
	cleanup_close int fd2 = open(path, O_RDONLY);
	perfmap_tail_check(&t, fd2, 1 << 20, &pending, &err);
	perfmap_tail_read(&t, fd2, pending, &err);
	ok(t.restarts == 2 && name_at(&t, 0x6000) && !name_at(&t, 0x5000), "replaced: restarted");
	perfmap_free(t.map);
}

int main(void)
{
	tap_plan(24);
	char dir[] = "/tmp/test_perfmap_tail.XXXXXX";
	test_split_lines();
	test_newer_wins();
	test_hostile_names();
	if (!mkdtemp(dir))
		tap_diag("mkdtemp failed");
	else {
		test_file(dir);
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("cleanup of %s failed", dir);
	}
	return tap_done();
}
