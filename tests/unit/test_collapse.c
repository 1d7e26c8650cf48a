/* test_collapse.c - the collapser's in-memory API: each perl rule on a
 * one-sample input, state across calls, and the bounds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"
#include "tap.h"

/* Collapse text with opts and return the folded output (static buffer). */
static const char *run(const char *text, const struct collapse_opts *opts)
{
	static char out[8192];
	static const struct collapse_opts none;
	struct fold *f = fold_new();
	struct fs_error err = {0};
	char *buf = NULL;
	size_t len = 0;
	if (collapse_buffer(text, strlen(text), opts ? opts : &none, f, &err) < 0) {
		snprintf(out, sizeof(out), "ERROR %s", err.msg);
		fold_free(f);
		return out;
	}
	FILE *m = open_memstream(&buf, &len);
	fold_write(f, m);
	fclose(m);
	snprintf(out, sizeof(out), "%s", buf);
	free(buf);
	fold_free(f);
	return out;
}

#define EV "app 10/11 [000] 1.000: 5 cpu-clock:\n"

struct collect_big {
	uint64_t count;
	size_t len;
};

static int find_big(const char *stack, size_t len, uint64_t count, void *arg)
{
	static const char want[] = "big;[truncated: deeper stack];";
	struct collect_big *b = arg;
	if (len > sizeof(want) && !memcmp(stack, want, sizeof(want) - 1)) {
		b->count += count;
		b->len = len;
	}
	return 0;
}

static void test_frames(void)
{
	is_str(run(EV "\tffff main (/bin/app)\n\tffff start (/bin/app)\n\n", NULL),
	       "app;start;main 5\n", "frames are reversed, root first, weighted by the period");
	is_str(run(EV "\tffff f+0x1a (/bin/app)\n\n", NULL), "app;f 5\n", "+0x offset stripped");
	is_str(run(EV "\tffff f+0x1A (/bin/app)\n\n", NULL), "app;f+0x1A 5\n",
	       "upper-case hex is not an offset (perl's [\\da-f])");
	is_str(run(EV "\tffff ns::f(int, char)+0x1 (/bin/app)\n\n", NULL), "app;ns::f 5\n",
	       "arguments dropped");
	is_str(run(EV "\tffff ns::(anonymous namespace)::f(int) (/bin/app)\n\n", NULL),
	       "app;ns::(anonymous namespace)::f 5\n", "(anonymous namespace) kept");
	is_str(run(EV "\tffff (anonymous namespace)::f (/bin/app)\n\n", NULL), "app 5\n",
	       "a frame starting with '(' is skipped, as perl does");
	is_str(run(EV "\tffff main.(*T).Run (/bin/app)\n\n", NULL), "app;main.(*T).Run 5\n",
	       "Go method parentheses kept");
	is_str(run(EV "\tffff a;b\"c'd (/bin/app)\n\n", NULL), "app;a:bcd 5\n",
	       "';' becomes ':', quotes removed");
	is_str(run(EV "\tffff a->b->c (/bin/app)\n\n", NULL), "app;a;b_[i];c_[i] 5\n",
	       "inlined chain: later functions get _[i]");
	is_str(run(EV "\tffff a->b_[i] (/bin/app)\n\n", NULL), "app;a;b_[i] 5\n",
	       "_[i] not doubled");
	is_str(run(EV "\tffff [unknown] (/usr/lib/libz.so.1)\n\n", NULL), "app;[libz.so.1] 5\n",
	       "[unknown] takes the module's base name");
	is_str(run(EV "\tffff [unknown] ([unknown])\n\n", NULL), "app;[unknown] 5\n",
	       "unknown module stays [unknown]");
	struct collapse_opts addrs = {.include_addrs = true};
	is_str(run(EV "\t7f12 [unknown] (/usr/lib/libz.so.1)\n\n", &addrs),
	       "app;[libz.so.1 <7f12>] 5\n", "--addrs shows the address");
	struct collapse_opts all = {.annotate_kernel = true, .annotate_jit = true};
	is_str(run(EV "\tffff k ([kernel.kallsyms])\n\tffff v (/boot/vmlinux)\n"
		      "\tffff j (/tmp/perf-10.map)\n\tffff u ([unknown])\n\n",
		   &all),
	       "app;u;j_[j];v_[k];k_[k] 5\n", "--all: _[k] and _[j], nothing on [unknown]");
	is_str(run(EV "\tffff x_[j] (/tmp/perf-10.map)\n\n", &all), "app;x_[j] 5\n",
	       "_[j] not doubled");
	is_str(run("java 10 1.0: cpu-clock:\n\tffff Lcom/x/Y;::m (/tmp/perf-10.map)\n\n", NULL),
	       "java;com/x/Y:::m 1\n", "Java L...; types tidied for process 'java'");
	struct collapse_opts pid = {.include_pid = true};
	is_str(run("java 10 1.0: cpu-clock:\n\tffff Lcom/x/Y;::m (/tmp/perf-10.map)\n\n", &pid),
	       "java-?;Lcom/x/Y:::m 1\n", "but not for 'java-?' (--pid), as in perl");
}

static void test_event_lines(void)
{
	struct collapse_opts tid = {.include_tid = true};
	is_str(run("V8 Worker 10/11 [000] 1.0: cycles:\n\n", &tid), "V8_Worker-10/11 1\n",
	       "comm with a space; pid/tid");
	is_str(run("app 11 [000] 1.0: cycles:\n\n", &tid), "app-?/11 1\n", "tid only: pid '?'");
	is_str(run("app 11/0 1.0: cycles:\n\n", &tid), "app-?/11 1\n", "tid 0 is false in perl");
	is_str(run("app 11 1.0: 0 cycles:\n\n", NULL), "app 1\n", "period 0 counts as 1");
	is_str(run("app 11 1.0: 00 cycles:\n\n", NULL), "app 0\n", "period 00 counts as 0 (perl)");
	is_str(run("app 11 cycles:u:\n\n", NULL), "app 1\n", "no period, event with a modifier");
	is_str(run("app 11 1.0: 99999999999999999999999 cycles:\n\n", NULL),
	       "app 18446744073709551615\n", "huge period saturates");
	is_str(run("app 1 1.0: 3 cycles:\n\nbb 2 1.0: 4 instructions:\n\ncc 3 1.0: 5 cycles:\n\n",
		   NULL),
	       "app 3\ncc 5\n", "only the first event type by default");
	is_str(run("c 3 1.0: 5 cycles:\n\n", NULL), "c_3_1.0: 5\n",
	       "a one-letter comm: perl's (\\S.+?) needs two characters and grows");
	struct collapse_opts ins = {.event_filter = "instructions"};
	is_str(run("app 1 1.0: 3 cycles:\n\nbb 2 1.0: 4 instructions:\n\n", &ins), "bb 4\n",
	       "--event-filter");
	is_str(run("# comment\napp 1 1.0: cycles:\n\tffff main (/bin/app)\n", NULL), "",
	       "a sample without its empty line is dropped");
	is_str(run("\tffff main (/bin/app)\n\n", NULL), "",
	       "frames before any event line are ignored");
	is_str(run("app 1 1.0: cycles:\n\n\n\n", NULL), "app 1\n",
	       "extra empty lines are harmless");
	is_str(run("app 1 1.0: cycles:\r\n\r\n", NULL), "",
	       "CRLF: the \\r line is not empty (perl)");
}

static void test_streaming(void)
{
	struct fold *f = fold_new();
	struct collapse_opts o = {0};
	struct collapse *c = collapse_new(&o, f);
	struct fs_error err = {0};
	const char *l1 = "app 1 1.0: 2 cycles:", *l2 = "\tffff main (/bin/app)";
	is_int(collapse_line(c, l1, strlen(l1), &err), 0, "collapse_line event");
	is_int(collapse_line(c, l2, strlen(l2), &err), 0, "collapse_line frame");
	is_int(collapse_feed(c, "\n", 1, &err), 0, "the empty line via feed");
	is_int(collapse_feed(c, "junk line\n", 10, &err), 0, "junk");
	struct collapse_stats st;
	collapse_get_stats(c, &st);
	is_int(st.samples, 1, "one sample");
	is_int(st.unrecognized, 1, "one unrecognized line");
	is_int(st.first_unrecognized, 4, "at line 4");
	is_str(st.event, "cycles", "event recorded");
	ok(st.event_defaulted, "event defaulted");
	is_int(fold_get(f, "app;main", 8), 2, "stack added");
	collapse_free(c);

	/* a stack over FOLD_STACK_MAX is dropped and counted */
	c = collapse_new(&o, f);
	collapse_feed(c, "big 1 1.0: cycles:\n", 19, &err);
	char line[1100];
	memset(line, 'x', sizeof(line));
	memcpy(line, "\tff ", 4);
	memcpy(line + sizeof(line) - 9, " (/b/ap)\n", 9);
	int bad = 0;
	for (int i = 0; i < 1100; i++)
		if (collapse_feed(c, line, sizeof(line), &err) < 0)
			bad++;
	collapse_feed(c, "\nsmall 2 1.0: cycles:\n\n", 23, &err);
	collapse_get_stats(c, &st);
	is_int(bad, 0, "feeding a huge stack is not an error");
	is_int(st.oversized, 1, "it is cut and counted");
	is_int(fold_total(f), 4, "its sample is still in the table");
	struct collect_big big = {0};
	fold_foreach(f, find_big, &big);
	ok(big.count == 1 && big.len <= FOLD_STACK_MAX && big.len > FOLD_STACK_MAX - 1100,
	   "as big;[truncated: deeper stack];<leaf-side frames> (%zu bytes)", big.len);
	is_int(fold_get(f, "small", 5), 1, "the next sample is fine");
	collapse_free(c);
	fold_free(f);
}

/* A full stack table: new stacks of each process go to its one
 * "[dropped: stack table full]" stack (every sample counted), and a
 * short stack has room for that name in the key buffer. */
static void test_table_full(void)
{
	struct fold *f = fold_new();
	fold_set_budget(f, 64 * 1024);
	static const struct collapse_opts pid = {.include_pid = true};
	struct collapse *c = collapse_new(&pid, f);
	struct fs_error err = {0};
	char text[256];
	int failed = 0;
	for (unsigned i = 0; i < 20000 && !failed; i++) {
		int n = snprintf(text, sizeof(text),
				 "pr 1%u/1 [000] 1.000: 1 cpu-clock:\n\t1 f%u (/x)\n\t2 g (/x)\n\n",
				 i % 2, i);
		failed = collapse_feed(c, text, (size_t)n, &err) < 0;
	}
	ok(!failed, "20000 distinct stacks fed into a 64 KiB table");
	struct collapse_stats st;
	collapse_get_stats(c, &st);
	ok(st.dropped > 0 && st.dropped < 20000, "%llu samples dropped",
	   (unsigned long long)st.dropped);
	is_int(st.samples, 20000, "every sample counted");
	is_int(fold_total(f), 20000, "and in the table");
	uint64_t d0 = fold_get(f, "pr-10;[dropped: stack table full]", 33);
	uint64_t d1 = fold_get(f, "pr-11;[dropped: stack table full]", 33);
	ok(d0 > 0 && d1 > 0, "one dropped stack per process");
	is_int(d0 + d1, st.dropped, "holding the dropped samples");
	ok(fold_memory(f) <= 64 * 1024 + 4096, "memory %zu stays at the budget", fold_memory(f));
	collapse_free(c);
	fold_free(f);
}

int main(void)
{
	tap_plan(53);
	test_frames();
	test_event_lines();
	test_streaming();
	test_table_full();
	return tap_done();
}
