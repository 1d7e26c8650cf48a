/* cfiflat.h - the flat form of one ELF file's call frame information
 * (.eh_frame, through .eh_frame_hdr's table) that the sandboxed ELF child
 * (elfjail.h) sends back to the unwinder, which decodes and validates it
 * (sidecar/unwind/cfitable.h) and never hands container ELF bytes to
 * libelf or libdw itself.
 *
 * The child runs libdw's CFA programs (dwarf_cfi_addrframe) for every row
 * of every FDE and reduces each row to the few rules the unwinder can
 * follow with three registers (ip, sp, bp):
 *
 *   STEP         CFA = rsp|rbp + cfa_off; return address at CFA + ra_off;
 *                rbp saved at CFA + bp_off (BP_SAVED) or unchanged
 *   OUTERMOST    the return address is undefined (_start, clone)
 *   UNSUPPORTED  anything else (DWARF expressions, other registers)
 *
 * Rules are deduplicated (a file has a few hundred distinct ones); a row is
 * a pc range and a rule index, and adjacent rows with one rule are merged.
 *
 * Layout (host byte order: both ends are the same binary on one host):
 *
 *   struct cfiflat_hdr                 magic "FSCFIv1", counts
 *   struct cfiflat_load  [nloads]      file offset -> vaddr (PT_LOAD)
 *   struct cfiflat_rule  [nrules]      distinct rules
 *   struct cfiflat_row   [nrows]       sorted, non-overlapping pc ranges
 *
 * and nothing after it: the length must add up exactly. */
#ifndef FS_CFIFLAT_H
#define FS_CFIFLAT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CFIFLAT_MAGIC	  "FSCFIv1"
#define CFIFLAT_MAX_LOADS 16
#define CFIFLAT_MAX_RULES (1u << 16)
#define CFIFLAT_MAX_ROWS  (1u << 20) /* rows per file (the rest is dropped) */
#define CFIFLAT_MAX_OFF	  (1 << 24)  /* |offset| of any rule */
#define CFIFLAT_MAX_FDES  (1u << 20) /* .eh_frame_hdr entries walked */
/* The largest valid encoding: what the parent accepts from the child. */
#define CFIFLAT_MAX_BYTES                                                                          \
	(sizeof(struct cfiflat_hdr) + CFIFLAT_MAX_LOADS * sizeof(struct cfiflat_load) +            \
	 (size_t)CFIFLAT_MAX_RULES * sizeof(struct cfiflat_rule) +                                 \
	 (size_t)CFIFLAT_MAX_ROWS * sizeof(struct cfiflat_row))

/* DWARF register numbers on x86_64. */
#define CFIFLAT_REG_RBP 6
#define CFIFLAT_REG_RSP 7
#define CFIFLAT_REG_RA	16

enum cfiflat_kind {
	CFIFLAT_STEP = 1,
	CFIFLAT_OUTERMOST = 2,
	CFIFLAT_UNSUPPORTED = 3,
};

enum cfiflat_bp {
	CFIFLAT_BP_SAME = 0,  /* unchanged (or undefined: kept, harmless) */
	CFIFLAT_BP_SAVED = 1, /* at CFA + bp_off */
};

struct cfiflat_hdr {
	char magic[8];
	uint32_t nloads, nrules, nrows, reserved; /* reserved: 0 */
};

struct cfiflat_load {
	uint64_t offset, vaddr, filesz;
};

/* Every field not used by its kind is 0 (one encoding per rule). */
struct cfiflat_rule {
	int32_t cfa_off, ra_off, bp_off;
	uint8_t kind, cfa_reg, bp, reserved;
};

struct cfiflat_row {
	uint64_t start; /* link-time vaddr */
	uint32_t len;	/* > 0 */
	uint32_t rule;	/* < nrules */
};

/* Child side: the CFI of the ELF file open as fd, read with libelf
 * (ELF_C_READ) and libdw. A file without .eh_frame_hdr (or with a table
 * encoding other than the datarel sdata4 every linker writes) has no
 * rows. Past CFIFLAT_MAX_ROWS rows or CFIFLAT_MAX_RULES rules the rest is
 * dropped. *out is malloc'd. 0, or -errno with the reason in err
 * (-ENOEXEC not an x86_64 ELF file, -ENOMEM). */
int cfiflat_encode_fd(int fd, char **out, size_t *len, struct fs_error *err);

#endif
