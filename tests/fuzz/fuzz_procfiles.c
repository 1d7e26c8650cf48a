/* fuzz_procfiles.c - arbitrary bytes as the /proc files of a container's
 * process that the sidecar parses on the host: status (proc_status_parse),
 * stat (proc_stat_parse_start), cgroup (cgroup_perf_dir_of), timens_offsets
 * (map_parse_clock_offset), cmdline and environ (the PreserveFramePointer
 * decision and the attach-disabling options), and maps (libjvm discovery,
 * libjvm_scan_maps), and maps with mount tables (the unsafe ranges of
 * procmem_guard_parse). The process chooses its comm, its command line, its
 * environment and the paths of its mappings; the kernel frames them.
 *
 * Byte 0: bits 0-2 pick the file, bit 7 stretches the rest of the input to
 * the size the real reader accepts (repeated), so that work more than
 * linear in the file shows. Each input must finish within fuzz_bound.h's
 * time limit; results must be in range. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cgroup.h"
#include "fuzz_bound.h"
#include "hotspot_int.h"
#include "jvmflags.h"
#include "map.h"
#include "proc.h"
#include "procmem_guard.h"

/* procmem_guard_parse: the first half as maps, the rest as mountinfo. */
static void pf_guard(const char *text, size_t len)
{
	static uint64_t r[64][2];
	size_t half = len / 2;
	size_t n = procmem_guard_parse(text, half, text + half, len - half, NULL, 0, r, 64);
	if (n > 64)
		abort();
	for (size_t i = 0; i < n; i++)
		if (r[i][0] >= r[i][1])
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

enum { PF_STATUS, PF_STAT, PF_CGROUP, PF_TIMENS, PF_CMDLINE, PF_MAPS, PF_GUARD, PF_COUNT };

/* What the real reader of each file accepts at most. */
static const size_t pf_cap[PF_COUNT] = {
    [PF_STATUS] = 64 * 1024, [PF_STAT] = 4096,	   [PF_CGROUP] = 64 * 1024, [PF_TIMENS] = 4096,
    [PF_CMDLINE] = 1u << 20, [PF_MAPS] = 1u << 20, [PF_GUARD] = 1u << 20,
};
static const char *const pf_name[PF_COUNT] = {"status",	 "stat", "cgroup",	  "timens_offsets",
					      "cmdline", "maps", "maps+mountinfo"};

static void pf_status(char *text)
{
	struct proc_status st;
	proc_status_parse(text, &st);
	if (st.nspid_count < 0 || st.nspid_count > PROC_NSPID_MAX ||
	    !memchr(st.name, '\0', sizeof(st.name)))
		abort();
}

static void pf_stat(const char *text)
{
	uint64_t v = 0;
	if (proc_stat_parse_start(text, &v) == 0 && !strrchr(text, ')'))
		abort();
}

static void pf_cgroup(char *text)
{
	char buf[4096];
	/* Under a root that does not exist nothing can be found, whatever
	 * the paths say ("/../.." included). */
	if (cgroup_perf_dir_of(text, "/nonexistent-fuzz-cgroup-root", buf, sizeof(buf)) != -ENOENT)
		abort();
}

static void pf_timens(const char *text)
{
	int64_t off = map_parse_clock_offset(text);
	const int64_t max = ((1ll << 32) + 1) * 1000000000ll;
	if (off > max || off < -max)
		abort();
}

/* The first half as cmdline, the rest as environ, as read (NUL after). */
static void pf_cmdline(const char *text, size_t len)
{
	size_t half = len / 2;
	char *cmd = malloc(half + 1), *env = malloc(len - half + 1);
	if (!cmd || !env)
		goto out;
	memcpy(cmd, text, half);
	cmd[half] = '\0';
	memcpy(env, text + half, len - half);
	env[len - half] = '\0';
	int d = jvmflags_decide_blocks(cmd, half, env, len - half);
	if (d != 0 && d != 1)
		abort();
	const char *f = attach_options_disable(cmd, half, 0);
	if (f && !strstr(f, "-X"))
		abort();
	f = attach_options_disable(env, len - half, 1);
	if (f && !strstr(f, "-X"))
		abort();
out:
	free(cmd);
	free(env);
}

static void pf_maps(char *text, size_t len)
{
	FILE *f = fmemopen(text, len ? len : 1, "r");
	if (!f)
		return;
	struct libjvm_map m;
	uint64_t lo, hi;
	if (libjvm_scan_maps(f, &m, &lo, &hi) == 0 && (m.pgoff != 0 || m.start < lo || m.end > hi))
		abort();
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = (data[0] & 7) % PF_COUNT;
	size_t len = size - 1;
	char *text = (data[0] & 0x80) ? fuzz_bound_grow(data + 1, len, pf_cap[which]) : NULL;
	if (text) {
		len = pf_cap[which];
	} else {
		if (len > pf_cap[which])
			len = pf_cap[which];
		text = malloc(len + 1);
		if (!text)
			return 0;
		memcpy(text, data + 1, len);
		text[len] = '\0';
	}
	struct fuzz_bound t0 = fuzz_bound_start();
	switch (which) {
	case PF_STATUS: pf_status(text); break;
	case PF_STAT: pf_stat(text); break;
	case PF_CGROUP: pf_cgroup(text); break;
	case PF_TIMENS: pf_timens(text); break;
	case PF_CMDLINE: pf_cmdline(text, len); break;
	case PF_MAPS: pf_maps(text, len); break;
	}
	fuzz_bound_end(t0, pf_name[which], len);
	free(text);
	return 0;
}
