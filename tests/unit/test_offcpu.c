/* test_offcpu.c - the /proc texts the off-CPU poller reads
 * (sidecar/offcpu/offcpu_parse.c): a thread's stat (its comm is the
 * container's to choose), syscall and kernel stack lines, and the state
 * frames. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "offcpu.h"
#include "tap.h"

static void test_stat(void)
{
	char state = 0;
	uint64_t start = 0;
	const char *line = "1234 (java) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 "
			   "23 0 987654 1000 100 18446744073709551615\n";
	ok(offcpu_parse_stat(line, &state, &start) == 0 && state == 'S' && start == 987654,
	   "stat: state and start time");
	/* a comm with spaces and parentheses: the last ')' ends it */
	line = "7 (a) R (b) D 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n";
	ok(offcpu_parse_stat(line, &state, &start) == 0 && state == 'D' && start == 42,
	   "stat: a comm holding ') R ('");
	ok(offcpu_parse_stat("7 (x) S 1 2 3\n", &state, &start) < 0, "stat: too few fields");
	ok(offcpu_parse_stat("7 x S 1", &state, &start) < 0, "stat: no comm");
	ok(offcpu_parse_stat("7 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -5 0\n", &state, &start) <
	       0,
	   "stat: a negative start time");
}

static void test_syscall(void)
{
	uint64_t sp = 0, pc = 0;
	ok(offcpu_parse_syscall("0 0x5 0x7f0f480030c0 0x1 0xc 0x0 0x69ec4d9d0 0x7f0fb559e420 "
				"0x7f0fe15fb2ec\n",
				&sp, &pc) == 1 &&
	       sp == 0x7f0fb559e420ull && pc == 0x7f0fe15fb2ecull,
	   "syscall: read(2) with sp and pc");
	ok(offcpu_parse_syscall("-1 0x7ffd0000 0x401000\n", &sp, &pc) == 1 && sp == 0x7ffd0000 &&
	       pc == 0x401000,
	   "syscall: blocked outside a system call");
	ok(offcpu_parse_syscall("running\n", &sp, &pc) == 0, "syscall: running");
	ok(offcpu_parse_syscall("0 0x1 0x2\n", &sp, &pc) == 0, "syscall: too few fields");
	ok(offcpu_parse_syscall("0 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9\n", &sp, &pc) == 0,
	   "syscall: too many fields");
	ok(offcpu_parse_syscall("0 0x1 0x2 0x3 0x4 0x5 0x6 0x0 0x8\n", &sp, &pc) == 0,
	   "syscall: a zero sp");
	ok(offcpu_parse_syscall("", &sp, &pc) == 0, "syscall: empty");

	struct offcpu_wait_point wp;
	ok(offcpu_parse_wait_point("202 0x7f0f480030c0 0x80 0x3b 0x0 0x0 0x0 0x7f0fb559e420 "
				   "0x7f0fe15fb2ec\n",
				   &wp) == 1 &&
	       wp.nr == 202 && wp.arg0 == 0x7f0f480030c0ull && wp.sp == 0x7f0fb559e420ull &&
	       wp.pc == 0x7f0fe15fb2ecull,
	   "wait point: futex, its word, sp, pc");
	ok(offcpu_parse_wait_point("-1 0x7ffd0000 0x401000\n", &wp) == 1 && wp.nr == UINT64_MAX &&
	       wp.arg0 == 0 && wp.sp == 0x7ffd0000,
	   "wait point: outside a system call");
	ok(offcpu_parse_wait_point("running\n", &wp) == 0 && wp.sp == 0, "wait point: running");
	ok(offcpu_parse_wait_point("0 0x1 0x2\n", &wp) == 0, "wait point: too few fields");

	struct offcpu_wait_point a = {.nr = 202, .arg0 = 0x7000, .sp = 0x9000, .pc = 0x4000}, b = a;
	ok(offcpu_same_wait_point(&a, &b), "same: identical");
	b.arg0 = 0x7004;
	ok(offcpu_same_wait_point(&a, &b), "same: the other word of a condition variable");
	b.arg0 = 0x7010;
	ok(!offcpu_same_wait_point(&a, &b), "not: another futex 16 bytes away");
	b = a;
	b.sp += 16;
	ok(!offcpu_same_wait_point(&a, &b), "not: another stack depth");
	b = a;
	b.pc += 1;
	ok(!offcpu_same_wait_point(&a, &b), "not: another pc");
	a.nr = b.nr = 0; /* read(2): the fd must be the same */
	b = a;
	b.arg0 = a.arg0 + 4;
	ok(!offcpu_same_wait_point(&a, &b), "not: a read of another fd");
	b.nr = 202;
	b.arg0 = a.arg0;
	ok(!offcpu_same_wait_point(&a, &b), "not: another system call");
}

static void test_kstack(void)
{
	char names[4][64];
	const char *text =
	    "[<0>] do_nanosleep+0x6b/0x160\n[<0>] hrtimer_nanosleep+0x8d/0x120\n"
	    "garbage\n[<0>] bad;name+0x1/0x2\n[<0>] "
	    "a_name_longer_than_the_buffer_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx+0x1\n"
	    "[<0>] __x64_sys_clock_nanosleep+0xbc/0x130\n[<0>] do_syscall_64+0x5b/0x110\n"
	    "[<0>] one_too_many+0x1/0x2\n";
	size_t n = offcpu_parse_kstack(text, names, 4);
	ok(n == 4, "kstack: bounded by max (%zu)", n);
	ok(!strcmp(names[0], "do_nanosleep_[k]") && !strcmp(names[1], "hrtimer_nanosleep_[k]"),
	   "kstack: leaf first, suffixed");
	ok(!strcmp(names[2], "__x64_sys_clock_nanosleep_[k]") &&
	       !strcmp(names[3], "do_syscall_64_[k]"),
	   "kstack: a ';' or an overlong name is skipped");
	ok(offcpu_parse_kstack("", names, 4) == 0, "kstack: empty");
}

static void test_states(void)
{
	char buf[16];
	ok(!strcmp(offcpu_state_frame('S', buf), "[sleeping]"), "state S");
	ok(!strcmp(offcpu_state_frame('D', buf), "[blocked: io]"), "state D");
	ok(!strcmp(offcpu_state_frame('t', buf), "[stopped]"), "state t");
	ok(!strcmp(offcpu_state_frame('W', buf), "[other: W]"), "state W");
	ok(!strcmp(offcpu_state_frame('\n', buf), "[other: ?]"), "a control character");
}

int main(void)
{
	tap_plan(32);
	test_stat();
	test_syscall();
	test_kstack();
	test_states();
	return tap_done();
}
