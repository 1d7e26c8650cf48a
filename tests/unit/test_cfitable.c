/* test_cfitable.c - container CFI walked in the sandboxed child (cfiflat,
 * elfjail_cfi) and the parent's validation and lookups (cfitable).
 *
 * The validator must refuse every malformed field and every truncation;
 * lookups and steps must follow the rules exactly; real libc must come
 * back with the rules its functions have; crafted .eh_frame files (a huge
 * FDE count, CIE pointers that loop, an unsorted table) must cost only
 * that file: the child answers within its deadline and the next file is
 * right. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfiflat.h"
#include "cfitable.h"
#include "cleanup.h"
#include "elfjail.h"
#include "tap.h"
#include "timeutil.h"

/* ---- a valid table, built by hand ---------------------------------------- */

struct fx {
	struct cfiflat_hdr h;
	struct cfiflat_load loads[2];
	struct cfiflat_rule rules[3];
	struct cfiflat_row rows[4];
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->h.magic, CFIFLAT_MAGIC, 8);
	f->h.nloads = 2;
	f->h.nrules = 3;
	f->h.nrows = 4;
	f->loads[0] = (struct cfiflat_load){0, 0, 0x1000};
	f->loads[1] = (struct cfiflat_load){0x1000, 0x201000, 0x1000};
	f->rules[0] = (struct cfiflat_rule){
	    .kind = CFIFLAT_STEP, .cfa_reg = CFIFLAT_REG_RSP, .cfa_off = 8, .ra_off = -8};
	f->rules[1] = (struct cfiflat_rule){.kind = CFIFLAT_STEP,
					    .cfa_reg = CFIFLAT_REG_RBP,
					    .cfa_off = 16,
					    .ra_off = -8,
					    .bp = CFIFLAT_BP_SAVED,
					    .bp_off = -16};
	f->rules[2] = (struct cfiflat_rule){.kind = CFIFLAT_OUTERMOST};
	f->rows[0] = (struct cfiflat_row){0x201000, 4, 0};
	f->rows[1] = (struct cfiflat_row){0x201004, 0x20, 1};
	f->rows[2] = (struct cfiflat_row){0x201100, 0x10, 0}; /* a gap before */
	f->rows[3] = (struct cfiflat_row){0x201200, 0x10, 2};
}

static int fx_decode(const void *buf, size_t len)
{
	struct cfitable *t = NULL;
	struct fs_error err = {0};
	int r = cfitable_decode(buf, len, &t, &err);
	cfitable_free(t);
	return r;
}

/* Malformed case i of the fixture (one field wrong each). */
static const char *const fx_cases[] = {
    "magic",
    "reserved header",
    "nloads over the cap",
    "nrules over the cap",
    "nrows over the cap",
    "nrows not adding up",
    "load size 0",
    "load offset wraps",
    "load vaddr wraps",
    "rule kind 0",
    "rule kind 4",
    "rule reserved",
    "cfa register rax",
    "cfa register ra",
    "cfa offset too large",
    "cfa offset too small",
    "ra offset too large",
    "bp kind 2",
    "bp offset too large",
    "bp offset without bp saved",
    "outermost with a register",
    "outermost with an offset",
    "row of length 0",
    "row wraps",
    "row names no rule",
    "rows overlap",
    "rows unsorted",
    "rows duplicated",
};

static void fx_mutate(struct fx *x, size_t i)
{
	switch (i) {
	case 0: x->h.magic[0] = 'X'; break;			    /* magic */
	case 1: x->h.reserved = 1; break;			    /* reserved header */
	case 2: x->h.nloads = CFIFLAT_MAX_LOADS + 1; break;	    /* nloads over the cap */
	case 3: x->h.nrules = CFIFLAT_MAX_RULES + 1; break;	    /* nrules over the cap */
	case 4: x->h.nrows = CFIFLAT_MAX_ROWS + 1; break;	    /* nrows over the cap */
	case 5: x->h.nrows = 3; break;				    /* nrows not adding up */
	case 6: x->loads[0].filesz = 0; break;			    /* load size 0 */
	case 7: x->loads[1].offset = UINT64_MAX - 10; break;	    /* load offset wraps */
	case 8: x->loads[1].vaddr = UINT64_MAX - 10; break;	    /* load vaddr wraps */
	case 9: x->rules[0].kind = 0; break;			    /* rule kind 0 */
	case 10: x->rules[0].kind = 4; break;			    /* rule kind 4 */
	case 11: x->rules[0].reserved = 1; break;		    /* rule reserved */
	case 12: x->rules[0].cfa_reg = 0; break;		    /* cfa register rax */
	case 13: x->rules[0].cfa_reg = CFIFLAT_REG_RA; break;	    /* cfa register ra */
	case 14: x->rules[0].cfa_off = CFIFLAT_MAX_OFF + 1; break;  /* cfa offset too large */
	case 15: x->rules[0].cfa_off = -CFIFLAT_MAX_OFF - 1; break; /* cfa offset too small */
	case 16: x->rules[0].ra_off = INT32_MAX; break;		    /* ra offset too large */
	case 17: x->rules[1].bp = 2; break;			    /* bp kind 2 */
	case 18: x->rules[1].bp_off = INT32_MIN; break;		    /* bp offset too large */
	case 19: x->rules[0].bp_off = -16; break;		    /* bp offset without bp saved */
	case 20: x->rules[2].cfa_reg = CFIFLAT_REG_RSP; break;	    /* outermost with a register */
	case 21: x->rules[2].ra_off = 8; break;			    /* outermost with an offset */
	case 22: x->rows[2].len = 0; break;			    /* row of length 0 */
	case 23: x->rows[3].start = UINT64_MAX - 4; break;	    /* row wraps */
	case 24: x->rows[1].rule = 3; break;			    /* row names no rule */
	case 25: x->rows[1].start = 0x201003; break;		    /* rows overlap */
	case 26: x->rows[3].start = 0x201000; break;		    /* rows unsorted */
	case 27: x->rows[3] = x->rows[2]; break;		    /* rows duplicated */
	}
}

static void test_validator(void)
{
	struct fx f;
	fx_init(&f);
	is_int(fx_decode(&f, sizeof(f)), 0, "valid table accepted");
	/* every truncation, and one byte more */
	int bad = 0;
	for (size_t l = 0; l < sizeof(f); l++)
		bad += fx_decode(&f, l) == -EBADMSG;
	is_int(bad, (int)sizeof(f), "every truncation refused");
	char *big = calloc(1, sizeof(f) + 1);
	memcpy(big, &f, sizeof(f));
	is_int(fx_decode(big, sizeof(f) + 1), -EBADMSG, "a trailing byte refused");
	free(big);
	for (size_t i = 0; i < FS_ARRAY_SIZE(fx_cases); i++) {
		fx_init(&f);
		fx_mutate(&f, i);
		is_int(fx_decode(&f, sizeof(f)), -EBADMSG, "refused: %s", fx_cases[i]);
	}
	struct cfiflat_hdr h = {.magic = CFIFLAT_MAGIC, .nrows = 1};
	char rowonly[sizeof(h) + sizeof(struct cfiflat_row)];
	memcpy(rowonly, &h, sizeof(h));
	memset(rowonly + sizeof(h), 0, sizeof(struct cfiflat_row));
	is_int(fx_decode(rowonly, sizeof(rowonly)), -EBADMSG, "refused: rows without rules");
	struct cfiflat_hdr empty = {.magic = CFIFLAT_MAGIC};
	is_int(fx_decode(&empty, sizeof(empty)), 0, "an empty table is valid");
}

/* ---- lookups and steps ---------------------------------------------------- */

static uint64_t stack[16];
#define AT(i) ((uint64_t)(uintptr_t)&stack[i])

static void test_lookup(void)
{
	struct fx f;
	struct cfitable *t = NULL;
	fx_init(&f);
	if (cfitable_decode(&f, sizeof(f), &t, NULL) < 0) {
		tap_ok(0, "decode the fixture");
		return;
	}
	uint64_t v = 0;
	ok(cfitable_vaddr(t, 0x1010, &v) == 0 && v == 0x201010, "offset -> vaddr by PT_LOAD");
	ok(cfitable_vaddr(t, 0x2000, &v) < 0, "offset past every PT_LOAD");
	ok(cfitable_lookup(t, 0x201000) == cfitable_lookup(t, 0x201003) &&
	       cfitable_lookup(t, 0x201000)->cfa_off == 8,
	   "first row, first and last byte");
	ok(cfitable_lookup(t, 0x201004)->cfa_reg == CFIFLAT_REG_RBP,
	   "second row starts at its start");
	ok(!cfitable_lookup(t, 0x200fff), "before the first row");
	ok(!cfitable_lookup(t, 0x201024) && !cfitable_lookup(t, 0x2010ff), "in the gap");
	ok(cfitable_lookup(t, 0x20110f) && !cfitable_lookup(t, 0x201110), "end is exclusive");
	ok(!cfitable_lookup(t, UINT64_MAX), "far past the last row");
	is_int((int)cfitable_rows(t), 4, "rows counted");
	/* 0x20 rbp-based bytes; the rsp + 8 rows (frameless) and the
	 * outermost row count for neither side */
	is_int((int)cfitable_fp_permille(t), 1000, "frame-pointer share: rbp rows only");
	f.rules[0].cfa_off = 24; /* now a frame on the stack: 4 + 0x10 bytes */
	struct cfitable *t2 = NULL;
	ok(cfitable_decode(&f, sizeof(f), &t2, NULL) == 0 &&
	       cfitable_fp_permille(t2) == 0x20 * 1000 / (0x20 + 4 + 0x10),
	   "frame-pointer share against rsp-based frames");
	cfitable_free(t2);
	f.rules[0].cfa_off = 8;

	struct unwind_stack st = {
	    .sp = AT(0), .data = (const uint8_t *)stack, .size = sizeof(stack)};
	memset(stack, 0, sizeof(stack));
	stack[0] = 0xabc;
	struct unwind_regs r = {.ip = 0x201000, .sp = AT(0), .bp = 0x77};
	is_int(cfitable_step(cfitable_lookup(t, 0x201000), &r, &st), 1, "step by rsp+8");
	ok(r.ip == 0xabc && r.sp == AT(1) && r.bp == 0x77, "ra at CFA-8, rbp unchanged");
	stack[2] = AT(8); /* saved rbp */
	stack[3] = 0xdef; /* ra */
	r = (struct unwind_regs){.ip = 0x201010, .sp = AT(0), .bp = AT(2)};
	is_int(cfitable_step(cfitable_lookup(t, 0x201010), &r, &st), 1, "step by rbp+16");
	ok(r.ip == 0xdef && r.sp == AT(4) && r.bp == AT(8), "ra and saved rbp read");
	r = (struct unwind_regs){.ip = 0x201010, .sp = AT(0), .bp = AT(15)};
	is_int(cfitable_step(cfitable_lookup(t, 0x201010), &r, &st), -1,
	       "a read outside the copy fails");
	ok(r.bp == AT(15), "a failed step leaves the registers");
	/* glibc's free at its `ret`: CFA = rsp + 8, rbp still "saved at CFA -
	 * 16", a slot the `pop %rbp` before it released (below sp) */
	struct cfiflat_rule ep = {.kind = CFIFLAT_STEP,
				  .cfa_reg = CFIFLAT_REG_RSP,
				  .cfa_off = 8,
				  .ra_off = -8,
				  .bp = CFIFLAT_BP_SAVED,
				  .bp_off = -16};
	r = (struct unwind_regs){.ip = 0x201010, .sp = AT(0), .bp = 0x1234};
	is_int(cfitable_step(&ep, &r, &st), 1, "epilogue after pop %%rbp: stepped");
	ok(r.ip == 0xabc && r.sp == AT(1) && r.bp == 0x1234, "rbp (already popped) kept");
	is_int(cfitable_step(cfitable_lookup(t, 0x201200), &r, &st), 2, "outermost");
	struct cfiflat_rule u = {.kind = CFIFLAT_UNSUPPORTED};
	is_int(cfitable_step(&u, &r, &st), -1, "unsupported fails");
	cfitable_free(t);
}

/* ---- real files ----------------------------------------------------------- */

/* The table of the file open as fd, through the jail (j) or in-process. */
static struct cfitable *table_of(struct elfjail *j, int fd, int *rc)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	struct cfitable *t = NULL;
	struct fs_error err = {0};
	*rc = j ? elfjail_cfi(j, fd, &buf, &len, &err) : cfiflat_encode_fd(fd, &buf, &len, &err);
	if (*rc == 0 && (*rc = cfitable_decode(buf, len, &t, &err)) < 0)
		tap_diag("decode: %s", err.msg);
	else if (*rc < 0)
		tap_diag("cfi: %s", err.msg);
	return t;
}

static Dl_info libc_info;

/* getpid's rule in libc's table: at its entry CFA = rsp + 8, ra at CFA - 8. */
static int libc_ok(const struct cfitable *t)
{
	uint64_t v = (uint64_t)(uintptr_t)&getpid - (uint64_t)(uintptr_t)libc_info.dli_fbase;
	const struct cfiflat_rule *u = t ? cfitable_lookup(t, v) : NULL;
	return u && u->kind == CFIFLAT_STEP && u->cfa_reg == CFIFLAT_REG_RSP && u->cfa_off == 8 &&
	       u->ra_off == -8 && u->bp == CFIFLAT_BP_SAME;
}

static size_t libc_rows;

/* libc's .plt: [vaddr, vaddr + size), found with libelf (this is a test). */
static int plt_of(int fd, uint64_t *vaddr, uint64_t *size)
{
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstr;
	int r = -1;
	if (e && elf_getshdrstrndx(e, &shstr) == 0)
		for (Elf_Scn *sc = NULL; (sc = elf_nextscn(e, sc)) != NULL;) {
			GElf_Shdr sh;
			const char *n =
			    gelf_getshdr(sc, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
			if (n && !strcmp(n, ".plt")) {
				*vaddr = sh.sh_addr, *size = sh.sh_size, r = 0;
				break;
			}
		}
	if (e)
		elf_end(e);
	return r;
}

/* The PLT expression became plain rows: in entry 1, CFA = rsp + 8 before
 * the push at offset 11 (libdw's threshold, read from the file), rsp + 16
 * from it. */
static void test_plt(const struct cfitable *t, int fd)
{
	uint64_t plt, size;
	if (!t || plt_of(fd, &plt, &size) < 0 || size < 48) {
		tap_skip(2, "libc has no lazy-binding .plt");
		return;
	}
	const struct cfiflat_rule *a = cfitable_lookup(t, plt + 16),
				  *b = cfitable_lookup(t, plt + 31);
	ok(a && a->kind == CFIFLAT_STEP && a->cfa_reg == CFIFLAT_REG_RSP && a->cfa_off == 8,
	   "PLT entry start: CFA = rsp + 8");
	ok(b && b->kind == CFIFLAT_STEP && b->cfa_off == 16 && b->ra_off == a->ra_off,
	   "PLT entry end: CFA = rsp + 16");
}

static void test_libc(struct elfjail *j)
{
	if (!dladdr((void *)&getpid, &libc_info) || !libc_info.dli_fname) {
		tap_ok(0, "libc found");
		return;
	}
	cleanup_close int fd = open(libc_info.dli_fname, O_RDONLY | O_CLOEXEC);
	int rc;
	uint64_t t0 = timeutil_now_ms();
	struct cfitable *t = table_of(NULL, fd, &rc);
	uint64_t t1 = timeutil_now_ms();
	ok(rc == 0 && t && cfitable_rows(t) > 1000, "libc's CFI walked (%zu rows, %llu ms)",
	   t ? cfitable_rows(t) : 0, (unsigned long long)(t1 - t0));
	ok(libc_ok(t), "getpid: CFA = rsp + 8, ra at CFA - 8");
	/* Debian builds glibc without frame pointers: almost no body is
	 * rbp-based (cfi_proc_fp_missing's threshold is CFI_FP_PERMILLE). */
	ok(t && cfitable_fp_permille(t) < 300, "libc: %u per mille of its code rbp-based",
	   t ? cfitable_fp_permille(t) : 0);
	test_plt(t, fd);
	libc_rows = t ? cfitable_rows(t) : 0;
	cfitable_free(t);
	t = table_of(j, fd, &rc);
	ok(rc == 0 && t && cfitable_rows(t) == libc_rows && libc_ok(t),
	   "the same table from the sandboxed child");
	cfitable_free(t);
	cleanup_close int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	t = table_of(j, self, &rc);
	ok(rc == 0 && t, "this test's own CFI (%zu rows)", t ? cfitable_rows(t) : 0);
	cfitable_free(t);
	cleanup_close int txt = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	t = table_of(j, txt, &rc);
	is_int(rc, -ENOEXEC, "not ELF: refused by the child");
	cfitable_free(t);
}

/* ---- crafted .eh_frame ---------------------------------------------------- */

struct image {
	unsigned char *p;
	size_t len;
	Elf64_Phdr *ehf; /* PT_GNU_EH_FRAME */
};

static int image_load(const char *path, struct image *im)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		return -1;
	im->len = (size_t)st.st_size;
	im->p = malloc(im->len);
	if (!im->p || pread(fd, im->p, im->len, 0) != (ssize_t)im->len)
		return -1;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->p;
	im->ehf = NULL;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(im->p + eh->e_phoff + i * sizeof(*ph));
		if (ph->p_type == PT_GNU_EH_FRAME)
			im->ehf = ph;
	}
	return im->ehf && im->ehf->p_offset + im->ehf->p_filesz <= im->len ? 0 : -1;
}

/* The file offset of vaddr, by the PT_LOADs. */
static size_t image_off(const struct image *im, uint64_t vaddr)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->p;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(im->p + eh->e_phoff + i * sizeof(*ph));
		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz)
			return vaddr - ph->p_vaddr + ph->p_offset;
	}
	return SIZE_MAX;
}

/* Every FDE's CIE pointer made to point at the FDE itself. */
static void craft_loop_cie(struct image *im)
{
	unsigned char *h = im->p + im->ehf->p_offset;
	int32_t rel;
	memcpy(&rel, h + 4, 4); /* eh_frame_ptr, pcrel sdata4 */
	size_t at = image_off(im, im->ehf->p_vaddr + 4 + (int64_t)rel);
	for (int n = 0; at != SIZE_MAX && at + 8 <= im->len && n < 100000; n++) {
		uint32_t len, id;
		memcpy(&len, im->p + at, 4);
		memcpy(&id, im->p + at + 4, 4);
		if (len == 0 || len == 0xffffffff)
			break;
		if (id != 0) {
			id = 4;
			memcpy(im->p + at + 4, &id, 4);
		}
		at += 4 + (size_t)len;
	}
}

static void craft_count(struct image *im)
{
	uint32_t huge = 0xffffffff;
	memcpy(im->p + im->ehf->p_offset + 8, &huge, 4);
}

static void craft_reverse(struct image *im)
{
	unsigned char *h = im->p + im->ehf->p_offset;
	uint32_t n;
	memcpy(&n, h + 8, 4);
	for (uint32_t i = 0; i < n / 2 && 12 + (size_t)n * 8 <= im->ehf->p_filesz; i++) {
		uint64_t a, b;
		memcpy(&a, h + 12 + (size_t)i * 8, 8);
		memcpy(&b, h + 12 + (size_t)(n - 1 - i) * 8, 8);
		memcpy(h + 12 + (size_t)i * 8, &b, 8);
		memcpy(h + 12 + (size_t)(n - 1 - i) * 8, &a, 8);
	}
}

static void craft_same(struct image *im)
{
	unsigned char *h = im->p + im->ehf->p_offset;
	uint32_t n;
	memcpy(&n, h + 8, 4);
	for (uint32_t i = 1; i < n && 12 + (size_t)n * 8 <= im->ehf->p_filesz; i++)
		memcpy(h + 12 + (size_t)i * 8, h + 12, 8);
}

static void test_crafted(struct elfjail *j)
{
	struct {
		const char *what;
		void (*craft)(struct image *);
	} cases[] = {
	    {"an FDE count of 2^32-1", craft_count},
	    {"CIE pointers that point at their own FDE", craft_loop_cie},
	    {"the table in reverse order", craft_reverse},
	    {"every table entry the same FDE", craft_same},
	};
	struct image im = {0};
	if (image_load(libc_info.dli_fname, &im) < 0) {
		tap_ok(0, "libc read for crafting");
		free(im.p);
		return;
	}
	cleanup_free unsigned char *orig = malloc(im.len);
	memcpy(orig, im.p, im.len);
	for (size_t i = 0; i < FS_ARRAY_SIZE(cases); i++) {
		memcpy(im.p, orig, im.len);
		cases[i].craft(&im);
		cleanup_close int fd = memfd_create("crafted", MFD_CLOEXEC);
		if (fd < 0 || write(fd, im.p, im.len) != (ssize_t)im.len) {
			tap_ok(0, "memfd");
			continue;
		}
		int rc;
		uint64_t t0 = timeutil_now_ms();
		struct cfitable *t = table_of(j, fd, &rc);
		uint64_t ms = timeutil_now_ms() - t0;
		ok((rc == 0 && t && cfitable_rows(t) <= libc_rows) || rc < 0,
		   "%s: a valid table or a refusal (%d, %zu rows, %llu ms)", cases[i].what, rc,
		   t ? cfitable_rows(t) : 0, (unsigned long long)ms);
		ok(ms < ELFJAIL_TIMEOUT_MS, "%s: within the deadline", cases[i].what);
		cfitable_free(t);
		cleanup_close int lfd = open(libc_info.dli_fname, O_RDONLY | O_CLOEXEC);
		t = table_of(j, lfd, &rc);
		ok(rc == 0 && libc_ok(t), "%s: the next file is right", cases[i].what);
		cfitable_free(t);
	}
	free(im.p);
}

int main(void)
{
	tap_plan(74);
	struct elfjail *j = NULL;
	test_validator();
	test_lookup();
	if (elfjail_open(NULL, &j, NULL) < 0) {
		tap_ok(0, "elfjail_open");
		return tap_done();
	}
	test_libc(j);
	test_crafted(j);
	elfjail_close(j);
	return tap_done();
}
