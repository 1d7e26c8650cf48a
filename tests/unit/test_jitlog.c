/* test_jitlog.c - the agent's timed JIT log: parsing in chunks, names by
 * address and time (reuse, late unloads, the initial dump), bounds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitlog.h"
#include "tap.h"

static void feed(struct jitlog *l, const char *text)
{
	struct fs_error err = {0};
	if (jitlog_feed(l, text, strlen(text), &err) < 0)
		tap_diag("feed: %s", err.msg);
}

static void is_at(const struct jitlog *l, uint64_t addr, uint64_t t, const char *want,
		  const char *what)
{
	const char *got = jitlog_lookup(l, addr, t);
	if (!ok(want ? got && !strcmp(got, want) : !got, "%s", what))
		tap_diag("0x%llx at %llu: got '%s', want '%s'", (unsigned long long)addr,
			 (unsigned long long)t, got ? got : "(none)", want ? want : "(none)");
}

static void test_window(void)
{
	struct jitlog l;
	jitlog_init(&l, 0);
	/* The dump at the start (t 0), split mid-line across two chunks. */
	feed(&l, "@0 1000 100 aa\n1000 11 A.run\n1011 ef A.r");
	feed(&l, "un->B.inl\n@0 5000 40 0\n5000 40 Interpreter\n");
	/* C compiled at 300; A unloaded at 500, D reuses its start at 600. */
	feed(&l, "@300 2000 80 cc\n2000 80 C.work\n-500 1000 aa\n@600 1000 80 dd\n1000 80 D.new\n");
	is_int(jitlog_index(&l), 0, "index");
	is_int((int)jitlog_entries(&l), 5, "5 entries");
	is_int((int)jitlog_loads(&l), 4, "4 loads");
	is_at(&l, 0x1005, 100, "A.run", "before the unload: A");
	is_at(&l, 0x1020, 499, "A.run->B.inl", "A's inlined range, a chunk boundary inside");
	is_at(&l, 0x1005, 700, "D.new", "after the reuse: D, not the last owner by accident");
	is_at(&l, 0x10f0, 700, "A.run->B.inl", "only A ever covered 0x10f0: the nearest in time");
	is_at(&l, 0x2010, 400, "C.work", "compiled during the window");
	is_at(&l, 0x2010, 100, "C.work", "a sample before its load: still the only candidate");
	is_at(&l, 0x5010, 900, "Interpreter", "a stub from the dump");
	is_at(&l, 0x4000, 100, NULL, "no code there");

	/* More after the index: a late unload (HotSpot posts them from its
	 * service thread) after newer code took the address. */
	feed(&l, "@1000 3000 100 e1\n3000 100 E.old\n@1100 3000 100 e2\n3000 100 E.new\n"
		 "-1200 3000 e1\n");
	is_at(&l, 0x3010, 1050, NULL, "not indexed yet");
	jitlog_index(&l);
	is_at(&l, 0x3010, 1050, "E.old", "incremental index: E.old at 1050");
	is_at(&l, 0x3010, 1150, "E.new", "newer overlapping code ends the old at its load");
	is_at(&l, 0x3010, 5000, "E.new", "the late unload of E.old does not end E.new");

	char *text = NULL;
	size_t len = 0;
	jitlog_perfmap_text(&l, &text, &len);
	ok(text && strstr(text, "1000 80 D.new\n") && !strstr(text, "A.run") &&
	       strstr(text, "3000 100 E.new\n"),
	   "perf map of the code present at the end");
	free(text);
	jitlog_release(&l);
}

static void test_garbage(void)
{
	struct jitlog l;
	jitlog_init(&l, 1000);
	feed(&l, "@x 1 2 3\n-5\n@5 ffffffffffffffff 2 0\nzz 10 n\n10 0 zero\n\n@2000 10 10 1\n"
		 "10 10 ok\n99999999999999999999999 1 x\n");
	char longline[5000];
	memset(longline, 'a', sizeof(longline) - 2);
	memcpy(longline, "20 1 ", 5);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	feed(&l, longline);
	jitlog_index(&l);
	is_int((int)jitlog_entries(&l), 1, "only the good line is kept");
	is_int((int)l.skipped, 8, "the others are skipped (%zu)", l.skipped);
	is_at(&l, 0x15, 1000, "ok", "clock offset 1000: logged 2000 is 1000 here");
	ok(l.e[0].t_load == 1000, "load time shifted by the time namespace offset");
	struct fs_error err;
	static char big[1 << 16];
	int r = 0;
	for (int i = 0; i < 2000 && r == 0; i++)
		r = jitlog_feed(&l, big, sizeof(big), &err);
	is_int(r, -E2BIG, "bounded: %s", err.msg);
	jitlog_release(&l);
}

/* The agent's marks: "!s" after a load (its debug info is safepoint-only)
 * and "!nonsafepoints TEXT" (the flag's state). */
static void test_marks(void)
{
	struct jitlog l;
	jitlog_init(&l, 0);
	feed(&l, "!s\n!nonsafepoints set (by the agent; 2 methods\x01)\n@0 1000 100 aa\n!s\n"
		 "1000 80 A.old\n1080 20 A.old->B.inl\n@0 2000 100 bb\n2000 100 C.new\n"
		 "@500 3000 10 cc\n!s\n3000 10 D.fresh\n!x\n");
	is_int(jitlog_index(&l), 0, "index");
	const struct jitlog_entry *e = jitlog_lookup_entry(&l, 0x1090, 100);
	ok(e && e->sp_only && !strcmp(l.names + e->name, "A.old->B.inl"),
	   "a marked load: every line of it safepoint-only");
	e = jitlog_lookup_entry(&l, 0x2010, 100);
	ok(e && !e->sp_only, "the next load is not");
	e = jitlog_lookup_entry(&l, 0x3000, 600);
	ok(e && e->sp_only, "a live load marked");
	is_str(l.nonsafepoints, "set (by the agent; 2 methods?)", "the status, printable");
	is_int((int)l.skipped, 1, "an unknown mark is skipped; a stray !s is not an error");
	jitlog_release(&l);
}

int main(void)
{
	test_window();
	test_garbage();
	test_marks();
	return tap_done();
}
