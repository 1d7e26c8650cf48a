/* test_procfiles.c - the parsers of a container process's /proc files and
 * of the attach sandbox's records, on the inputs their fuzz targets
 * (tests/fuzz/fuzz_procfiles.c, fuzz_sandbox.c) showed to be wrong:
 * a stat line ending at ')' (read past the NUL), a timens_offsets nsec
 * that overflows the sum, the tail of an over-long maps line read as a
 * line of its own (a path that forges a libjvm.so mapping), and a
 * sandboxed child's error text with terminal escapes in it. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attach.h"
#include "hotspot_int.h"
#include "jail.h"
#include "map.h"
#include "proc.h"
#include "sandbox.h"
#include "tap.h"
#include "timeutil.h"

/* Defined by sidecar/main.c, which tests are not linked with. */
__attribute__((weak)) const char *cli_config_path;

static void test_stat(void)
{
	uint64_t v = 7;
	char line[512] = "42 (a) b) S";
	for (int f = 4; f <= 21; f++)
		strcat(line, " 1");
	strcat(line, " 123456 0 0\n");
	is_int(proc_stat_parse_start(line, &v), 0, "stat: comm with ') ' in it parsed");
	ok(v == 123456, "stat: field 22 after the last ')' (%llu)", (unsigned long long)v);
	/* The process names itself: a comm that ends the text at ')'. */
	char *end = strdup("1 (x)");
	is_int(proc_stat_parse_start(end, &v), -EINVAL, "stat: nothing after ')': refused");
	free(end);
	is_int(proc_stat_parse_start("1 (x) S 1 2", &v), -EINVAL, "stat: too few fields: refused");

	struct proc_status st;
	char status[] = "Name:\tjava\nNSpid:\t9 8 7 6 5 4 3 2 1 0 -1\nSigIgn:\t1000\nbogus\n";
	proc_status_parse(status, &st);
	is_str(st.name, "java", "status: name");
	is_int(st.nspid_count, PROC_NSPID_MAX, "status: NSpid capped at %d", PROC_NSPID_MAX);
	ok(st.sigign == 0x1000, "status: SigIgn");
}

static void test_timens(void)
{
	ok(map_parse_clock_offset("monotonic 2 5\nboottime 0 0\n") == 2000000005ll,
	   "timens: monotonic offset");
	is_int((int)map_parse_clock_offset("monotonic 4294967296 9223372036854775807\n"), 0,
	       "timens: nsec out of [0, 1e9): ignored, no overflow");
	is_int((int)map_parse_clock_offset("monotonic 1 -1\n"), 0, "timens: negative nsec ignored");
}

static void test_maps_tail(void)
{
	/* One maps line whose path (the process's to choose) is longer than
	 * one read, its tail shaped like a libjvm.so maps line. */
	static const char forged[] = "20000-21000 r-xp 00000000 08:01 1 /x/libjvm.so\n";
	char text[8192];
	int n = snprintf(text, sizeof(text), "10000-11000 r-xp 00000000 08:01 1 /");
	memset(text + n, 'b', 4095 - (size_t)n); /* one fgets of 4096 ends here */
	memcpy(text + 4095, forged, sizeof(forged) - 1);
	FILE *f = fmemopen(text, 4095 + sizeof(forged) - 1, "r");
	struct libjvm_map jm;
	uint64_t lo, hi;
	is_int(libjvm_scan_maps(f, &jm, &lo, &hi), -ENOENT,
	       "maps: the tail of a long path is not read as a libjvm.so mapping");
	fclose(f);
	f = fmemopen((void *)forged, sizeof(forged) - 1, "r");
	is_int(libjvm_scan_maps(f, &jm, &lo, &hi), 0, "maps: the same line on its own is found");
	ok(jm.start == 0x20000 && jm.end == 0x21000, "maps: its range");
	fclose(f);
}

static void test_attach_options(void)
{
	char env[] = "PATH=/bin\0JAVA_TOOL_OPTIONS=-Xmx1g -Xrs\0X=-XX:+DisableAttachMechanism";
	const char *f = attach_options_disable(env, sizeof(env) - 1, 1);
	is_str(f ? f : "(none)", "-Xrs", "environ: -Xrs in JAVA_TOOL_OPTIONS counts");
	char env2[] = "X=-XX:+DisableAttachMechanism\0";
	ok(!attach_options_disable(env2, sizeof(env2) - 1, 1), "environ: other variables do not");
}

static void test_sandbox_error(void)
{
	int sv[2];
	ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	/* What a taken-over child may say: ESC ] to retitle the terminal,
	 * a newline to forge a log line. */
	const char msg[] = "boom\x1b]0;owned\x07\nroot: fine";
	int32_t code = EIO;
	jail_send(sv[1], 2 /* SB_ERROR */, &code, sizeof(code), msg, sizeof(msg) - 1);
	shutdown(sv[1], SHUT_WR);
	struct sandbox_job job = {.max_out = 4096, .timeout_ms = 1000};
	char *out = NULL;
	size_t len = 0;
	struct fs_error err = {0};
	int r = sandbox_parent_records(sv[0], &job, timeutil_now_ms() + 1000, &out, &len, &err);
	is_int(r, -EIO, "the child's error comes back");
	int clean = 1;
	for (const char *p = err.msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			clean = 0;
	ok(clean && strstr(err.msg, "boom"), "its text is escaped: %s", err.msg);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	tap_plan(18);
	test_stat();
	test_timens();
	test_maps_tail();
	test_attach_options();
	test_sandbox_error();
	return tap_done();
}
