/* cfibench - what the CFI table walked in the sandbox (cfitable.h) costs
 * next to libdw in the sidecar itself, as cfi.c did before. Used by
 * bench/cfi.sh.
 *
 *   cfibench LOOKUPS FILE...
 *
 * For each file:
 *   build_ms   elfjail_cfi with a warm child + cfitable_decode: the whole
 *              .eh_frame walked once (paid once per file and run)
 *   libdw_ns   per lookup, the old path: dwarf_cfi_addrframe on the file's
 *              own Dwarf_CFI, dwarf_frame_cfa and the return address
 *              register (no evaluation: a lower bound of the old cost)
 *   table_ns   per lookup, the new path: cfitable_lookup + cfitable_step
 *              over a stack copy
 * over the same LOOKUPS pcs spread over the file's rows.
 * Prints "file rows bytes build_ms libdw_ns table_ns ratio". */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfitable.h"
#include "elfjail.h"

static double cfibench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t stk[64];

/* The pcs: vaddrs of the rows, LOOKUPS of them picked evenly. */
static size_t cfibench_pcs(const struct cfitable *t, const char *buf, uint64_t *pcs, size_t n)
{
	struct cfiflat_hdr h;
	memcpy(&h, buf, sizeof(h));
	const char *rows = buf + sizeof(h) + h.nloads * sizeof(struct cfiflat_load) +
			   h.nrules * sizeof(struct cfiflat_rule);
	if (!h.nrows)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct cfiflat_row w;
		memcpy(&w, rows + (i * 7919 % h.nrows) * sizeof(w), sizeof(w));
		pcs[i] = w.start + (i % w.len);
	}
	(void)t;
	return n;
}

static void cfibench_file(struct elfjail *j, const char *path, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len = 0;
	struct cfitable *t = NULL;
	if (fd < 0)
		return;
	elfjail_cfi(j, fd, &buf, &len, NULL); /* warm the child and the page cache */
	free(buf);
	double a = cfibench_now_ns();
	if (elfjail_cfi(j, fd, &buf, &len, NULL) < 0 || cfitable_decode(buf, len, &t, NULL) < 0) {
		fprintf(stderr, "%s: no table\n", path);
		close(fd);
		return;
	}
	double build = (cfibench_now_ns() - a) / 1e6;
	uint64_t *pcs = calloc(n, sizeof(*pcs));
	n = cfibench_pcs(t, buf, pcs, n);
	/* old: libdw in this process */
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	double old_ns = 0, new_ns = 0;
	volatile uint64_t sink = 0;
	if (cfi) {
		a = cfibench_now_ns();
		for (size_t i = 0; i < n; i++) {
			Dwarf_Frame *fr = NULL;
			Dwarf_Op mem[3], *ops;
			size_t nops;
			if (dwarf_cfi_addrframe(cfi, pcs[i], &fr) == 0 && fr) {
				dwarf_frame_cfa(fr, &ops, &nops);
				dwarf_frame_register(fr, 16, mem, &ops, &nops);
				sink += nops;
				free(fr);
			}
		}
		old_ns = (cfibench_now_ns() - a) / (double)n;
		dwarf_cfi_end(cfi);
	}
	if (elf)
		elf_end(elf);
	struct unwind_stack st = {
	    .sp = (uint64_t)(uintptr_t)stk, .data = (const uint8_t *)stk, .size = sizeof(stk)};
	a = cfibench_now_ns();
	for (size_t i = 0; i < n; i++) {
		const struct cfiflat_rule *u = cfitable_lookup(t, pcs[i]);
		struct unwind_regs r = {.ip = pcs[i], .sp = st.sp, .bp = st.sp + 128};
		if (u)
			sink += (uint64_t)cfitable_step(u, &r, &st);
	}
	new_ns = (cfibench_now_ns() - a) / (double)n;
	printf("%s %zu %zu %.1f %.0f %.0f %.1f\n", path, cfitable_rows(t), len, build, old_ns,
	       new_ns, new_ns > 0 ? old_ns / new_ns : 0);
	free(pcs);
	free(buf);
	cfitable_free(t);
	close(fd);
}

int main(int argc, char **argv)
{
	struct elfjail *j = NULL;
	if (argc < 3 || elf_version(EV_CURRENT) == EV_NONE || elfjail_open(NULL, &j, NULL) < 0) {
		fprintf(stderr, "usage: cfibench LOOKUPS FILE...\n");
		return 2;
	}
	size_t n = strtoul(argv[1], NULL, 10);
	for (int i = 2; i < argc; i++)
		cfibench_file(j, argv[i], n ? n : 1);
	elfjail_close(j);
	return 0;
}
