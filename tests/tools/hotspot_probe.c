/* hotspot_probe - a test driver for sidecar/hotspot against a live JVM.
 *
 *   hotspot_probe PID info           version, code heaps, interpreter range
 *   hotspot_probe PID blob ADDR...   the blob at each address (hex)
 *   hotspot_probe PID check MAPFILE  compare with the JVM's own
 *                                    `jcmd PID Compiler.perfmap` output
 *   hotspot_probe PID nmethods       every nmethod: "START SIZE name"
 *   hotspot_probe PID mapcheck MAPFILE
 *                                    our vmstructs map (hsmap.h) against our
 *                                    agent's map: the name at the start of
 *                                    each of the agent's Java ranges
 *   hotspot_probe PID inline MAPFILE compare the inline chains with our
 *                                    agent's map (unfoldall: "outer->inner"):
 *                                    at the start of each of its ranges,
 *                                    hotspot_scopes must give the same chain
 *   hotspot_probe PID bench N        time N opens, then N rounds of
 *                                    find_blob + method_name over every blob
 *
 * check: for every line of MAPFILE, find the blob at its start address and
 * compare: a Java method line ("ret pkg.Class.m(args)") must be found as an
 * NMETHOD whose name is "pkg.Class.m"; an "Interpreter" line must be found
 * as INTERPRETER. Prints counts and mismatches; exit 0 when every Java
 * line matched and the interpreter was found, 1 otherwise. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotspot.h"
#include "hotspot_int.h"
#include "hsmap.h"

static const char *kind_name(enum hotspot_blob_kind k)
{
	switch (k) {
	case HOTSPOT_BLOB_INTERPRETER: return "interpreter";
	case HOTSPOT_BLOB_NMETHOD: return "nmethod";
	case HOTSPOT_BLOB_STUB: return "stub";
	default: return "none";
	}
}

static int cmd_info(struct hotspot *hs)
{
	size_t nt, nc, nf = vmstructs_count(hs->vs, &nt, &nc);
	printf("major %d\n", hotspot_major_version(hs));
	printf("vmstructs fields %zu types %zu constants %zu\n", nf, nt, nc);
	printf("interpreter 0x%" PRIx64 "-0x%" PRIx64 "\n", hs->interp_begin, hs->interp_end);
	for (size_t i = 0; i < hs->nheaps; i++)
		printf("heap 0x%" PRIx64 "-0x%" PRIx64 " committed 0x%" PRIx64 " segment %d\n",
		       hs->heaps[i].low, hs->heaps[i].high, hs->heaps[i].committed,
		       1 << hs->heaps[i].log2_segment);
	return 0;
}

static void print_blob(struct hotspot *hs, uint64_t pc)
{
	struct hotspot_blob b;
	char name[512] = "";
	int rc = hotspot_find_blob(hs, pc, &b);
	if (rc < 0) {
		printf("0x%" PRIx64 " error %s\n", pc, strerror(-rc));
		return;
	}
	if (b.kind == HOTSPOT_BLOB_NMETHOD)
		hotspot_method_name(hs, b.method, name, sizeof(name));
	printf("0x%" PRIx64 " %s blob 0x%" PRIx64 " code 0x%" PRIx64 "-0x%" PRIx64
	       " frame %u complete %d level %d name %s\n",
	       pc, kind_name(b.kind), b.blob, b.code_begin, b.code_end, b.frame_size,
	       b.frame_complete, b.comp_level, b.kind == HOTSPOT_BLOB_NMETHOD ? name : b.name);
}

/* "ret pkg.Class.m(args)" -> "pkg.Class.m"; 0 when not a Java method. */
static int java_name(const char *line, char *out, size_t len)
{
	const char *paren = strchr(line, '(');
	if (!paren)
		return 0;
	const char *start = paren;
	while (start > line && start[-1] != ' ')
		start--;
	if (start == line || !strchr(start, '.') || (size_t)(paren - start) >= len)
		return 0;
	memcpy(out, start, (size_t)(paren - start));
	out[paren - start] = '\0';
	return 1;
}

static int cmd_check(struct hotspot *hs, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		perror(path);
		return 2;
	}
	char line[8192], want[4096], got[4096];
	size_t java = 0, ok = 0, bad = 0, missing = 0, interp = 0, interp_ok = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, size;
		int n = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &n) < 2 || !n)
			continue;
		const char *name = line + n;
		struct hotspot_blob b;
		int rc = hotspot_find_blob(hs, start, &b);
		if (strcmp(name, "Interpreter") == 0) {
			interp++;
			if (rc > 0 && b.kind == HOTSPOT_BLOB_INTERPRETER &&
			    start + size - 1 < hs->interp_end + 4096 &&
			    start + 1 > hs->interp_begin)
				interp_ok++;
			continue;
		}
		if (!java_name(name, want, sizeof(want)))
			continue;
		java++;
		if (rc <= 0 || b.kind != HOTSPOT_BLOB_NMETHOD) {
			missing++;
			printf("missing 0x%" PRIx64 " %s (kind %s)\n", start, want,
			       kind_name(b.kind));
			continue;
		}
		if (hotspot_method_name(hs, b.method, got, sizeof(got)) > 0 &&
		    strcmp(got, want) == 0 && b.code_begin <= start && start < b.code_end) {
			ok++;
		} else {
			bad++;
			printf("mismatch 0x%" PRIx64 " want %s got %s\n", start, want, got);
		}
	}
	fclose(f);
	printf("java %zu ok %zu mismatch %zu missing %zu interpreter %zu/%zu\n", java, ok, bad,
	       missing, interp_ok, interp);
	return java > 0 && ok == java && interp > 0 && interp_ok == interp ? 0 : 1;
}

/* The chain at pc, outermost first, joined by "->"; 0 when none. */
static int chain_name(struct hotspot *hs, const struct hotspot_blob *b, uint64_t pc, char *out,
		      size_t len)
{
	struct hotspot_scope sc[32];
	int n = hotspot_scopes(hs, b, pc, sc, 32);
	size_t at = 0;
	out[0] = '\0';
	for (int i = n - 1; i >= 0; i--) {
		char m[1024];
		if (hotspot_method_name(hs, sc[i].method, m, sizeof(m)) <= 0)
			snprintf(m, sizeof(m), "?");
		at += (size_t)snprintf(out + at, at < len ? len - at : 0, "%s%s",
				       i == n - 1 ? "" : "->", m);
		if (at >= len)
			break;
	}
	return n > 0;
}

static int cmd_inline(struct hotspot *hs, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		perror(path);
		return 2;
	}
	char line[8192], got[8192];
	size_t all = 0, ok = 0, bad = 0, none = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, size;
		int n = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &n) < 2 || !n)
			continue;
		const char *want = line + n;
		if (!strstr(want, "->"))
			continue;
		struct hotspot_blob b;
		all++;
		if (hotspot_find_blob(hs, start, &b) <= 0 || b.kind != HOTSPOT_BLOB_NMETHOD ||
		    !chain_name(hs, &b, start, got, sizeof(got))) {
			none++;
			printf("none 0x%" PRIx64 " %s\n", start, want);
		} else if (strcmp(got, want) == 0) {
			ok++;
		} else {
			bad++;
			printf("mismatch 0x%" PRIx64 " want %s got %s\n", start, want, got);
		}
	}
	fclose(f);
	printf("inlined ranges %zu ok %zu mismatch %zu none %zu\n", all, ok, bad, none);
	return all > 0 && ok == all ? 0 : 1;
}

static int cmd_mapcheck(pid_t pid, const char *path)
{
	struct fs_error err = {0};
	struct perfmap *m;
	struct hsmap_stats st;
	if (hsmap_build(pid, &m, &st, &err) < 0) {
		fprintf(stderr, "hsmap_build: %s\n", err.msg);
		return 3;
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		perror(path);
		perfmap_free(m);
		return 2;
	}
	char line[8192];
	size_t all = 0, ok = 0, inl = 0, inl_ok = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, size;
		int n = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &n) < 2 || !n)
			continue;
		const char *want = line + n;
		if (!strchr(want, '.') || strchr(want, ' '))
			continue; /* stubs */
		const struct perfmap_entry *e = perfmap_lookup(m, start);
		int same = e && strcmp(e->name, want) == 0;
		all++;
		ok += same;
		if (strstr(want, "->")) {
			inl++;
			inl_ok += same;
		}
		if (!same)
			printf("differs 0x%" PRIx64 " agent %s vmstructs %s\n", start, want,
			       e ? e->name : "(none)");
	}
	fclose(f);
	printf(
	    "map entries %zu (nmethods %zu, inlined ranges %zu); agent Java ranges %zu same %zu; "
	    "inlined %zu same %zu\n",
	    m->count, st.nmethods, st.inlined, all, ok, inl, inl_ok);
	perfmap_free(m);
	return 0;
}

static int print_nmethod(void *ctx, const struct hotspot_blob *b)
{
	struct hotspot *hs = ctx;
	char name[4096];
	if (b->kind != HOTSPOT_BLOB_NMETHOD)
		return 0;
	if (hotspot_method_name(hs, b->method, name, sizeof(name)) <= 0)
		snprintf(name, sizeof(name), "[unknown Method* 0x%" PRIx64 "]", b->method);
	printf("%" PRIx64 " %" PRIx64 " %s\n", b->code_begin, b->code_end - b->code_begin, name);
	return 0;
}

struct bench_pcs {
	uint64_t pc[4096];
	size_t n;
};

static int collect_pc(void *ctx, const struct hotspot_blob *b)
{
	struct bench_pcs *p = ctx;
	if (p->n < sizeof(p->pc) / sizeof(p->pc[0]))
		p->pc[p->n++] = b->code_begin + (b->code_end - b->code_begin) / 2;
	return 0;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Open cost, and the per-pc cost of find_blob (+ method_name, cached after
 * the first round) over a pc in the middle of every blob. */
static int cmd_bench(struct hotspot *hs, pid_t pid, int rounds)
{
	struct fs_error err = {0};
	double t0 = now_us();
	for (int i = 0; i < rounds; i++) {
		struct hotspot *h2;
		if (hotspot_open(pid, &h2, &err) < 0)
			return 1;
		hotspot_close(h2);
	}
	double t1 = now_us();
	static struct bench_pcs p;
	p.n = 0;
	codecache_each_blob(hs, 4096, collect_pc, &p);
	double t2 = now_us();
	size_t found = 0;
	char name[512];
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < p.n; i++) {
			struct hotspot_blob b;
			if (hotspot_find_blob(hs, p.pc[i], &b) > 0) {
				found++;
				if (b.kind == HOTSPOT_BLOB_NMETHOD)
					hotspot_method_name(hs, b.method, name, sizeof(name));
			}
		}
	double t3 = now_us();
	hotspot_forget(hs);
	for (size_t i = 0; i < p.n; i++) {
		struct hotspot_blob b;
		hotspot_find_blob(hs, p.pc[i], &b);
	}
	double t4 = now_us();
	printf("open %.1f us; walk of %zu blobs %.1f us; find_blob+name %.2f us per pc "
	       "(%zu of %zu found, %d rounds); uncached find_blob %.2f us per pc\n",
	       (t1 - t0) / rounds, p.n, t2 - t1, (t3 - t2) / ((double)rounds * (double)p.n), found,
	       (size_t)rounds * p.n, rounds, (t4 - t3) / (double)p.n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PID info|blob ADDR...|check MAPFILE|nmethods\n",
			argv[0]);
		return 2;
	}
	struct fs_error err = {0};
	struct hotspot *hs;
	int rc = hotspot_open((pid_t)atoi(argv[1]), &hs, &err);
	if (rc < 0) {
		fprintf(stderr, "hotspot_open: %s\n", err.msg);
		return 3;
	}
	if (strcmp(argv[2], "info") == 0)
		rc = cmd_info(hs);
	else if (strcmp(argv[2], "blob") == 0)
		for (int i = 3; i < argc; i++)
			print_blob(hs, strtoull(argv[i], NULL, 16));
	else if (strcmp(argv[2], "check") == 0 && argc == 4)
		rc = cmd_check(hs, argv[3]);
	else if (strcmp(argv[2], "mapcheck") == 0 && argc == 4)
		rc = cmd_mapcheck((pid_t)atoi(argv[1]), argv[3]);
	else if (strcmp(argv[2], "inline") == 0 && argc == 4)
		rc = cmd_inline(hs, argv[3]);
	else if (strcmp(argv[2], "bench") == 0 && argc == 4)
		rc = cmd_bench(hs, (pid_t)atoi(argv[1]), atoi(argv[3]) > 0 ? atoi(argv[3]) : 1);
	else if (strcmp(argv[2], "nmethods") == 0)
		rc = codecache_each_blob(hs, 1u << 20, print_nmethod, hs) < 0 ? 1 : 0;
	else
		rc = 2;
	hotspot_close(hs);
	return rc;
}
