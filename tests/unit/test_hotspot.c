/* test_hotspot.c - sidecar/hotspot over a fake JVM memory image (hsimage.h):
 * both CodeBlob layouts (JDK 11-21 and 23+), the segment-map walk, kinds,
 * names and their cache, and images that lie (missing fields, bad pointers,
 * a segment map that loops, unterminated tables). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_int.h"
#include "hsimage.h"
#include "tap.h"

static struct hsi img;

static struct hotspot *open_img(struct fs_error *err, int *rc)
{
	struct hs_reader r = {.read = hsi_read, .ctx = &img};
	struct hotspot *hs = NULL;
	*rc = hotspot_open_reader(&r, &img.syms, &hs, err);
	return *rc == 0 ? hs : NULL;
}

static int fail_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return -EIO;
}

static int count_blob(void *ctx, const struct hotspot_blob *b)
{
	int *n = ctx;
	n[b->kind]++;
	return 0;
}

static void test_style(int style)
{
	struct fs_error err = {0};
	struct hotspot_blob b;
	char name[128];
	int rc;
	hsi_build(&img, style);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "style %d: opens", style)) {
		tap_diag("%s", err.msg);
		return;
	}
	is_int(hotspot_major_version(hs), style, "style %d: major version", style);
	is_int(hs->nheaps, 1, "style %d: one code heap", style);

	uint64_t nm_pc = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF + 0x100; /* in its 5th segment */
	is_int(hotspot_find_blob(hs, nm_pc, &b), 1, "style %d: nmethod found", style);
	is_int(b.kind, HOTSPOT_BLOB_NMETHOD, "style %d: kind nmethod", style);
	is_int(b.blob, HSI_BLOB(HSI_NM_SEG), "style %d: blob address", style);
	is_int(b.code_begin, HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF, "style %d: code begin", style);
	is_int(b.frame_size, 48, "style %d: frame size in bytes", style);
	is_int(b.frame_complete, 0x10, "style %d: frame complete offset", style);
	is_int(b.method, HSI_METHOD, "style %d: Method*", style);
	is_int(b.comp_level, 4, "style %d: C2", style);
	is_int(hotspot_method_name(hs, b.method, name, sizeof(name)), 1, "style %d: named", style);
	is_str(name, "pkg.Foo.bar", "style %d: dotted class, '.', method", style);
	/* cached: the image can change, the name does not */
	img.mem[HSI_META + 0x180 + 6] = 'X';
	hotspot_method_name(hs, b.method, name, sizeof(name));
	is_str(name, "pkg.Foo.bar", "style %d: name cached per Method*", style);
	hotspot_method_name(hs, b.method, name, 6);
	is_str(name, "pkg.F", "style %d: truncated to the buffer", style);

	uint64_t ipc = HSI_BLOB(HSI_INTERP_SEG) + HSI_CODE_OFF + 0x20;
	is_int(hotspot_find_blob(hs, ipc, &b), 1, "style %d: interpreter pc found", style);
	is_int(b.kind, HOTSPOT_BLOB_INTERPRETER, "style %d: kind interpreter", style);
	uint64_t spc = HSI_BLOB(HSI_STUB_SEG) + HSI_CODE_OFF + 4;
	is_int(hotspot_find_blob(hs, spc, &b), 1, "style %d: stub found", style);
	is_int(b.kind, HOTSPOT_BLOB_STUB, "style %d: kind stub", style);
	is_str(b.name, "StubRoutines (1)", "style %d: stub name", style);

	is_int(hotspot_find_blob(hs, HSI_SEG_ADDR(HSI_FREE_SEG + 3), &b), 0,
	       "style %d: free segment: not found", style);
	is_int(b.kind, HOTSPOT_BLOB_NONE, "style %d: kind none", style);
	is_int(hotspot_find_blob(hs, 0x1234, &b), 0, "style %d: outside: not found", style);
	ok(hotspot_in_code_cache(hs, nm_pc), "style %d: in code cache", style);
	ok(!hotspot_in_code_cache(hs, HSI_SEG_ADDR(HSI_SEGS)), "style %d: end excluded", style);

	int n[4] = {0};
	is_int(codecache_each_blob(hs, 100, count_blob, n), 0, "style %d: walk", style);
	ok(n[HOTSPOT_BLOB_NMETHOD] == 1 && n[HOTSPOT_BLOB_STUB] == 1 &&
	       n[HOTSPOT_BLOB_INTERPRETER] == 1,
	   "style %d: walk sees 1 interpreter, 1 nmethod, 1 stub", style);
	memset(n, 0, sizeof(n));
	codecache_each_blob(hs, 2, count_blob, n);
	is_int(n[1] + n[2] + n[3], 2, "style %d: walk bounded by max_blobs", style);

	struct hotspot_frame_layout fl;
	hotspot_frame_layout(hs, &fl);
	ok(fl.interp_method_off == -24 && fl.interp_sender_sp_off == -8 &&
	       fl.interp_bcp_off == -64 && fl.saved_fp_off == 0 && fl.return_addr_off == 8,
	   "style %d: x86_64 frame layout", style);
	uint64_t v = 0;
	is_int(hotspot_read(hs, HSI_BASE + HSI_STATICS + 16, &v, 4), 0, "hotspot_read");
	is_int(v, style, "hotspot_read reads the image");
	is_int(hotspot_read(hs, HSI_BASE, &v, (64u << 10) + 1), -E2BIG, "hotspot_read bounded");
	is_int(hotspot_read(hs, 0, &v, 8), -EFAULT, "hotspot_read: NULL page refused");
	hotspot_close(hs);
}

/* Remove the row of a field by renaming it. */
static void rename_field(const char *field, const char *to)
{
	for (uint32_t i = 0; i < img.nrows; i++) {
		uint64_t a;
		memcpy(&a, img.mem + HSI_STRUCTS + i * 48 + 8, 8);
		char *s = (char *)img.mem + (a - HSI_BASE);
		if (strcmp(s, field) == 0 && strlen(to) <= strlen(s))
			strcpy(s, to);
	}
}

/* Set the offset of type::field in the image's struct table. */
static void set_field_offset(const char *type, const char *field, uint64_t off)
{
	for (uint32_t i = 0; i < img.nrows; i++) {
		uint64_t t, f;
		uint32_t row = HSI_STRUCTS + i * 48;
		memcpy(&t, img.mem + row, 8);
		memcpy(&f, img.mem + row + 8, 8);
		if (strcmp((char *)img.mem + (t - HSI_BASE), type) == 0 &&
		    strcmp((char *)img.mem + (f - HSI_BASE), field) == 0)
			hsi_put(&img, row + 32, off, 8);
	}
}

/* Offsets and sizes near 2^64 (issue 19): offset + width wrapped around
 * the bounds checks and the reader read before its own buffers. Every
 * such image is refused, or read without a byte out of bounds (run under
 * ASan). */
static void test_wraparound(void)
{
	static const struct {
		const char *type, *field;
		uint64_t off;
		int required; /* the reader cannot work without it: refused */
	} lies[] = {
	    {"HeapBlock::Header", "_length", UINT64_MAX - 3, 1},
	    {"HeapBlock::Header", "_length", UINT64_MAX - 7, 1},
	    {"HeapBlock::Header", "_length", HS_MAX_FIELD_OFFSET - 4, 1},
	    {"HeapBlock::Header", "_used", UINT64_MAX, 1},
	    {"HeapBlock", "_header", UINT64_MAX - 7, 1},
	    {"PcDesc", "_pc_offset", UINT64_MAX - 1, 0},
	    {"PcDesc", "_pc_offset", HS_MAX_FIELD_OFFSET - 2, 0},
	    {"PcDesc", "_scope_decode_offset", UINT64_MAX - 3, 0},
	    {"nmethod", "_scopes_pcs_offset", UINT64_MAX - 2, 0},
	    {"nmethod", "_scopes_pcs_offset", HS_MAX_FIELD_OFFSET, 0},
	    {"CodeBlob", "_name", UINT64_MAX - 7, 1},
	    {"CodeBlob", "_name", HS_MAX_FIELD_OFFSET - 8, 1},
	    {"CodeBlob", "_kind", UINT64_MAX, 0},
	    {"Symbol", "_length", UINT64_MAX - 1, 1},
	    {"ConstMethod", "_constants", UINT64_MAX - 7, 1},
	    {"ConstMethod", "_name_index", UINT64_MAX - 1, 1},
	};
	for (int style = 17; style <= 25; style += 8) {
		for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
			struct fs_error err = {0};
			struct hotspot_blob b;
			struct hotspot_scope sc[8];
			char name[64];
			int rc, n[8] = {0};
			hsi_build(&img, style);
			set_field_offset(lies[i].type, lies[i].field, lies[i].off);
			struct hotspot *hs = open_img(&err, &rc);
			if (hs) {
				uint64_t cb = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF;
				if (hotspot_find_blob(hs, cb + 0x10, &b) == 1) {
					hotspot_scopes(hs, &b, cb + 0x10, sc, 8);
					hotspot_scopes(hs, &b, cb + 0x40, sc, 8);
				}
				codecache_each_blob(hs, 100, count_blob, n);
				hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
				hotspot_close(hs);
			}
			/* a field every read needs is refused at open; any other
			 * opens, and its reads stay in bounds (ASan) */
			ok(lies[i].required ? !hs && rc == -ENOTSUP : hs && rc == 0,
			   "style %d, %s::%s = %#llx: %s, nothing read out of bounds", style,
			   lies[i].type, lies[i].field, (unsigned long long)lies[i].off,
			   hs ? "read" : "refused");
		}
	}
}

static void test_lies(void)
{
	struct fs_error err = {0};
	struct hotspot_blob b;
	char name[64];
	int rc;

	hsi_build(&img, 17);
	rename_field("_segmap", "_nomap");
	ok(!open_img(&err, &rc) && rc == -ENOTSUP, "missing field: -ENOTSUP");
	ok(strstr(err.msg, "CodeHeap::_segmap") != NULL, "  and the message names it: %s", err.msg);

	hsi_build(&img, 17);
	uint64_t huge = 1 << 20;
	memcpy(img.mem + 8 * HS_SYM_STRUCT_STRIDE, &huge, 8);
	ok(!open_img(&err, &rc) && rc < 0, "absurd stride refused");

	/* a table without its NULL row: it runs into unmapped memory */
	hsi_build(&img, 17);
	for (uint32_t i = img.ntypes; i < 200; i++)
		memcpy(img.mem + HSI_TYPES + i * 40, img.mem + HSI_TYPES, 8);
	struct hotspot *hs = open_img(&err, &rc);
	ok(!hs && rc == -EINVAL, "unterminated table: refused (rc %d)", rc);
	hotspot_close(hs);

	/* a segment map whose hops never reach a block start */
	hsi_build(&img, 17);
	hs = open_img(&err, &rc);
	ok(hs != NULL, "opens");
	if (!hs)
		return;
	memset(img.mem + HSI_SEGMAP, 1, HSI_SEGS);
	is_int(hotspot_find_blob(hs, HSI_SEG_ADDR(40), &b), 0, "all-1 segment map: not found");
	/* a block that is not in use */
	hsi_build(&img, 17);
	img.mem[HSI_HEAP + (HSI_NM_SEG << HSI_LOG2) + 8] = 0;
	is_int(hotspot_find_blob(hs, HSI_SEG_ADDR(HSI_NM_SEG + 1), &b), 0, "unused block: none");
	/* code range outside the blob */
	hsi_build(&img, 17);
	hsi_put(&img, HSI_HEAP + (HSI_NM_SEG << HSI_LOG2) + HSI_HB + 32, HSI_BASE + HSI_SIZE, 8);
	is_int(hotspot_find_blob(hs, HSI_SEG_ADDR(HSI_NM_SEG + 1), &b), 0, "code end past blob");
	/* a Method* chain with a bad pointer, an over-long symbol, a NUL in it */
	hsi_build(&img, 17);
	hsi_put(&img, HSI_META + 0x40 + 8, 0x7, 8);
	is_int(hotspot_method_name(hs, HSI_METHOD + 8, name, sizeof(name)), 0,
	       "misaligned ConstantPool*: not a Method");
	is_int(hotspot_method_name(hs, 3, name, sizeof(name)), 0, "Method* 3: not a Method");
	hsi_build(&img, 17);
	hsi_put(&img, HSI_META + 0x200 + 4, 0xffff, 2);
	is_int(hotspot_method_name(hs, HSI_METHOD + 16, name, sizeof(name)), 0,
	       "symbol longer than the image: not named");
	hsi_build(&img, 17);
	img.mem[HSI_META + 0x200 + 7] = 0;
	is_int(hotspot_method_name(hs, HSI_METHOD + 24, name, sizeof(name)), 0,
	       "NUL inside a symbol: not named");
	hotspot_close(hs);

	/* no heaps */
	hsi_build(&img, 25);
	hsi_put(&img, HSI_STATICS + 0x40, 0, 4);
	ok(!open_img(&err, &rc) && rc < 0, "zero code heaps refused");
}

struct range {
	uint64_t start, end;
	int n;
	uint64_t inner;
};

static int collect_range(void *ctx, uint64_t start, uint64_t end, const struct hotspot_scope *sc,
			 int n)
{
	struct range *r = ctx;
	while (r->end)
		r++;
	r->start = start;
	r->end = end;
	r->n = n;
	r->inner = n ? sc[0].method : 0;
	return 0;
}

static void test_scopes(int style)
{
	struct fs_error err = {0};
	struct hotspot_blob b;
	struct hotspot_scope sc[8];
	int rc;
	hsi_build(&img, style);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "style %d: opens", style))
		return;
	uint64_t cb = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF;
	is_int(hotspot_find_blob(hs, cb + 0x10, &b), 1, "style %d: nmethod", style);
	is_int(hotspot_scopes(hs, &b, cb + 0x10, sc, 8), 1, "style %d: before 1st PcDesc", style);
	ok(sc[0].method == HSI_METHOD && sc[0].bci == 5, "style %d: bar @5", style);
	is_int(hotspot_scopes(hs, &b, cb + 0x40, sc, 8), 2, "style %d: return address", style);
	ok(sc[0].method == HSI_METHOD2 && sc[0].bci == 300 && sc[1].method == HSI_METHOD &&
	       sc[1].bci == 5,
	   "style %d: baz @300 (two-byte int) inlined into bar @5", style);
	is_int(hotspot_scopes(hs, &b, cb + 0x3f, sc, 8), 2, "style %d: return address - 1", style);
	is_int(hotspot_scopes(hs, &b, cb + 0x40, sc, 1), 1, "style %d: bounded by max", style);
	is_int(hotspot_scopes(hs, &b, cb + 0x41, sc, 8), 1, "style %d: next PcDesc", style);
	ok(sc[0].method == HSI_METHOD && sc[0].bci == -1, "style %d: no scope: own method", style);
	is_int(hotspot_scopes(hs, &b, cb + 0x150, sc, 8), 0, "style %d: after the last", style);
	char name[64];
	hotspot_method_name(hs, HSI_METHOD2, name, sizeof(name));
	is_str(name, "pkg.Foo.baz", "style %d: the inlined method's name", style);

	struct range r[8] = {{0}};
	is_int(hsscopes_ranges(hs, &b, collect_range, r), 0, "style %d: ranges", style);
	ok(r[0].start == cb && r[0].end == cb + 0x21 && r[0].n == 1 && r[1].start == cb + 0x21 &&
	       r[1].end == cb + 0x41 && r[1].n == 2 && r[1].inner == HSI_METHOD2 &&
	       r[2].end == cb + 0x101 && r[3].start == cb + 0x101 &&
	       r[3].end == HSI_BLOB(HSI_NM_SEG) + HSI_NM_CODE_END && r[3].n == 0 && !r[4].end,
	   "style %d: ranges (prev, pc] cover the code in order", style);

	/* lies: a sender after its callee, a method index past the metadata */
	hotspot_forget(hs);
	uint32_t off =
	    style == 25 ? HSI_META + 0x440 : HSI_HEAP + (HSI_NM_SEG << HSI_LOG2) + HSI_HB + 0x210;
	img.mem[off + 4] = (uint8_t)(style == 25 ? 8 : 7); /* sender 7 > 4 */
	is_int(hotspot_scopes(hs, &b, cb + 0x40, sc, 8), 0, "style %d: sender loop refused", style);
	hsi_build(&img, style);
	hotspot_forget(hs);
	img.mem[off + 5] = 9;
	is_int(hotspot_scopes(hs, &b, cb + 0x40, sc, 8), 0, "style %d: bad method index", style);
	hsi_build(&img, style);
	hotspot_forget(hs);
	img.mem[off + 6] = 0xFF; /* a long int running towards the section's end */
	img.mem[off + 7] = 0xFF;
	rc = hotspot_scopes(hs, &b, cb + 0x40, sc, 8);
	ok(rc >= 0 && rc <= 2, "style %d: long int: bounded (%d)", style, rc);
	hotspot_close(hs);
}

static void test_cache(void)
{
	struct fs_error err = {0};
	struct hotspot_blob b;
	char name[64];
	int rc;
	hsi_build(&img, 25);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "opens"))
		return;
	uint64_t pc = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF + 8;
	is_int(hotspot_find_blob(hs, pc, &b), 1, "found");
	hotspot_method_name(hs, b.method, name, sizeof(name));
	memset(img.mem + HSI_SEGMAP, 0xFF, HSI_SEGS); /* the JVM frees everything */
	is_int(hotspot_find_blob(hs, pc, &b), 1, "cached blob: found without a read");
	is_int(hotspot_find_blob(hs, pc + 0x80, &b), 1,
	       "another pc of the block: cached too (the block, within its time)");
	hotspot_forget(hs);
	is_int(hotspot_find_blob(hs, pc, &b), 0, "after hotspot_forget: read again, free");
	is_int(hotspot_method_name(hs, HSI_METHOD, name, sizeof(name)), 1, "name read again");
	hs->blob_ttl_ms = 0;
	hsi_build(&img, 25);
	is_int(hotspot_find_blob(hs, pc, &b), 1, "no cache: found");
	img.mem[HSI_HEAP + (HSI_NM_SEG << HSI_LOG2) + 8] = 0;
	is_int(hotspot_find_blob(hs, pc, &b), 0, "no cache: the change is seen");
	hotspot_close(hs);
}

/* Class unloading frees a Method and its Klass, and metaspace reuses the
 * addresses: a cached name holds while the heap's collection count stays,
 * and is checked against the Method's ConstMethod* and the Klass's name
 * Symbol* once it moved (or always where the count is not exported). */
static void test_unloaded(void)
{
	struct fs_error err = {0};
	char name[64];
	int rc;
	uint64_t calls0, calls1, bytes;
	hsi_build(&img, 25);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "opens"))
		return;
	ok(hs->epoch_addr == HSI_BASE + HSI_COLLECTIONS, "the collection count is found");
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	is_str(name, "pkg.Foo.bar", "named");
	hotspot_read_counts(hs, &calls0, &bytes);
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	hotspot_read_counts(hs, &calls1, &bytes);
	ok(calls1 - calls0 <= 1, "a hit in the same collection epoch: no read but the count's (%d)",
	   (int)(calls1 - calls0));
	/* a collection unloads pkg.Foo; pkg.Other takes its Klass* */
	uint32_t k = HSI_META + 0x100;
	hsi_put(&img, k + 24, hsi_symbol(&img, HSI_META + 0x280, "pkg/Other"), 8);
	hsi_put(&img, HSI_COLLECTIONS, 6, 4);
	hs->epoch = 0; /* as if HS_EPOCH_MS had passed */
	hotspot_method_name_at(hs, HSI_METHOD, 1, name, sizeof(name));
	is_str(name, "pkg.Foo.bar", "a frame sampled before the name was read: the name then");
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	is_str(name, "pkg.Other.bar", "after a collection: the Klass's new name");
	/* and a method of another name takes the Method* (a new ConstMethod) */
	uint32_t cm2 = HSI_META + 0x2c0;
	memcpy(img.mem + cm2, img.mem + HSI_META + 0x40, 48);
	hsi_put(&img, cm2 + 34, HSI_NAME_IDX + 1, 2);
	hsi_put(&img, HSI_META + 0x80 + HSI_CP_SIZE + (HSI_NAME_IDX + 1) * 8,
		hsi_symbol(&img, HSI_META + 0x340, "qux"), 8);
	hsi_put(&img, HSI_META + 8, HSI_BASE + cm2, 8);
	hsi_put(&img, HSI_COLLECTIONS, 7, 4);
	hs->epoch = 0;
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	is_str(name, "pkg.Other.qux", "after a collection: the Method's new ConstMethod");
	/* no count exported: every hit is checked */
	hs->epoch_addr = 0;
	hsi_put(&img, HSI_META + 8, HSI_BASE + HSI_META + 0x40, 8);
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	is_str(name, "pkg.Other.bar", "no collection count: the change is seen at once");
	/* a collection in progress (the count moved when it began): what is
	 * read now is not trusted past it */
	hs->epoch_addr = HSI_BASE + HSI_COLLECTIONS;
	hsi_put(&img, HSI_COLLECTIONS + 4, 1, 1);
	hs->epoch = 0;
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	hsi_put(&img, k + 24, hsi_symbol(&img, HSI_META + 0x380, "pkg/Third"), 8);
	hs->epoch = 0;
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	is_str(name, "pkg.Third.bar", "a name read during a collection is read again");
	hotspot_close(hs);
}

static void test_interp_bci(void)
{
	struct fs_error err = {0};
	int rc, bci = 0;
	hsi_build(&img, 17);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "opens"))
		return;
	uint64_t code = HSI_BASE + HSI_META + 0x40 + 48; /* after bar's ConstMethod */
	is_int(hotspot_interp_bci(hs, HSI_METHOD, code + 7, &bci), 1, "bcp in the bytecodes");
	is_int(bci, 7, "bci 7");
	is_int(hotspot_interp_bci(hs, HSI_METHOD, code + 10, &bci), 0, "bcp past the bytecodes");
	is_int(bci, -1, "  bci -1");
	is_int(hotspot_interp_bci(hs, HSI_METHOD, code - 1, &bci), 0, "bcp before them");
	is_int(hotspot_interp_bci(hs, 0x1234567, code, &bci), 0, "not a Method*");
	hotspot_close(hs);
}

static void test_hidden_class(void)
{
	struct fs_error err = {0};
	char name[128];
	int rc;
	hsi_build(&img, 25);
	hsi_symbol(&img, HSI_META + 0x180, "a/B$$Lambda+0x0000000801001234");
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "opens"))
		return;
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	is_str(name, "a.B$$Lambda.0x0000000801001234.bar", "hidden class named as JVMTI does");
	hotspot_close(hs);
}

/* hotspot_blob_check: what renews a cached blob with one read. */
static void test_blob_check(int style)
{
	struct fs_error err = {0};
	struct hotspot_blob b, again, stub;
	int rc;
	hsi_build(&img, style);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "style %d: opens", style))
		return;
	hs->blob_ttl_ms = 0; /* every lookup reads */
	uint32_t hdr = HSI_HEAP + (HSI_NM_SEG << HSI_LOG2), blob = hdr + HSI_HB;
	uint64_t pc = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF + 0x100;
	uint64_t spc = HSI_BLOB(HSI_STUB_SEG) + HSI_CODE_OFF;
	uint64_t c0 = hs->reads.calls;
	is_int(hotspot_find_blob(hs, pc, &b), 1, "style %d: nmethod found", style);
	is_int(b.compile_id, HSI_COMPILE_ID, "style %d: its compile id", style);
	ok(hs->reads.calls - c0 >= 2, "style %d: a lookup reads the segment map and the block",
	   style);
	c0 = hs->reads.calls;
	is_int(hotspot_blob_check(hs, pc, &b), 1, "style %d: unchanged", style);
	is_int(hs->reads.calls - c0, 1, "style %d: the check is one read", style);
	is_int(hotspot_find_blob(hs, spc, &stub), 1, "style %d: stub found", style);
	is_int(stub.compile_id, -1, "style %d: a stub has no compile id", style);
	is_int(hotspot_blob_check(hs, spc, &stub), 1, "style %d: stub unchanged", style);
	is_int(hotspot_blob_check(hs, spc, &b), 0, "style %d: another pc's blob: no", style);

	/* the code cache freed the nmethod and compiled the same method into
	 * the same memory: same sizes, same Method*, a new compilation */
	hsi_put(&img, blob + 60, HSI_COMPILE_ID + 1, 4);
	is_int(hotspot_blob_check(hs, pc, &b), 0, "style %d: recompiled in place: changed", style);
	is_int(hotspot_find_blob(hs, pc, &again), 1, "style %d: looked up again", style);
	is_int(again.compile_id, HSI_COMPILE_ID + 1, "style %d: the new compilation", style);
	hsi_build(&img, style);
	/* another method there */
	hsi_put(&img, blob + 48, HSI_METHOD2, 8);
	is_int(hotspot_blob_check(hs, pc, &b), 0, "style %d: another method: changed", style);
	hsi_build(&img, style);
	/* another frame size */
	hsi_put(&img, blob + 12, 8, 4);
	is_int(hotspot_blob_check(hs, pc, &b), 0, "style %d: another frame size: changed", style);
	hsi_build(&img, style);
	/* freed (the header's used flag) */
	img.mem[hdr + 8] = 0;
	is_int(hotspot_blob_check(hs, pc, &b), 0, "style %d: freed: changed", style);
	hsi_build(&img, style);
	/* the block shrank: pc now past its end */
	hsi_put(&img, hdr, 2, style == 25 ? 4 : 8);
	is_int(hotspot_blob_check(hs, pc, &b), 0, "style %d: pc past the block: changed", style);
	hsi_build(&img, style);
	/* a larger block from an earlier segment took the memory: code where
	 * the header was */
	memset(img.mem + hdr, 0x90, 64);
	is_int(hotspot_blob_check(hs, pc, &b), 0, "style %d: header overwritten: changed", style);
	hsi_build(&img, style);
	/* a blob address that is no block's start */
	again = b;
	again.blob += 8;
	is_int(hotspot_blob_check(hs, pc, &again), 0, "style %d: not a block start: no", style);
	again = b;
	again.kind = HOTSPOT_BLOB_NONE;
	is_int(hotspot_blob_check(hs, pc, &again), 0, "style %d: nothing cached: no", style);
	is_int(hotspot_blob_check(hs, 0x1234, &b), 0, "style %d: pc outside the heaps: no", style);
	/* unreadable: the error, not a verdict */
	struct hs_reader keep = hs->r;
	hs->r.read = fail_read;
	is_int(hotspot_blob_check(hs, pc, &b), -EIO, "style %d: a failed read: the error", style);
	hs->r = keep;
	hotspot_close(hs);
}

/* The segment-map pages are cached too: a new pc of a known block costs
 * the block's read at most; a page out of date never hides a block nor
 * names a freed one. */
static void test_segmap_cache(void)
{
	struct fs_error err = {0};
	struct hotspot_blob b;
	int rc;
	hsi_build(&img, 17);
	struct hotspot *hs = open_img(&err, &rc);
	if (!ok(hs, "opens"))
		return;
	uint64_t pc = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF + 8;
	uint64_t pc2 = HSI_BLOB(HSI_NM_SEG) + HSI_CODE_OFF + 0x180;
	uint64_t newpc = HSI_BLOB(30) + HSI_CODE_OFF;
	is_int(hotspot_find_blob(hs, pc, &b), 1, "found");
	memset(hs->bcache, 0, HS_BLOB_CACHE_SIZE * sizeof(*hs->bcache));
	uint64_t c0 = hs->reads.calls;
	is_int(hotspot_find_blob(hs, pc2, &b), 1, "another pc, blob cache empty: found");
	is_int(hs->reads.calls - c0, 1, "  with one read (the block; the map's page is cached)");
	c0 = hs->reads.calls;
	is_int(hotspot_find_blob(hs, newpc, &b), 0, "a free segment: none");
	/* code compiled into the free segments: the cached page says free */
	hsi_block(&img, 17, 30, 4, "StubRoutines (2)", 0, 0);
	is_int(hotspot_find_blob(hs, newpc, &b), 1,
	       "new code where the cached map says free: found");
	is_int(b.blob, HSI_BLOB(30), "  its blob");
	/* the nmethod freed: the cached page still says it is there */
	memset(hs->bcache, 0, HS_BLOB_CACHE_SIZE * sizeof(*hs->bcache));
	img.mem[HSI_HEAP + (HSI_NM_SEG << HSI_LOG2) + 8] = 0;
	memset(img.mem + HSI_SEGMAP + HSI_NM_SEG, 0xFF, HSI_STUB_SEG - HSI_NM_SEG);
	is_int(hotspot_find_blob(hs, pc2, &b), 0, "freed where the cached map says used: none");
	is_int(b.kind, HOTSPOT_BLOB_NONE, "  kind none");
	/* split: the nmethod's block shrank to 2 segments, a new block starts
	 * at segment +2 and holds pc2 */
	hsi_build(&img, 17);
	hotspot_forget(hs);
	is_int(hotspot_find_blob(hs, pc2, &b), 1, "found again");
	memset(hs->bcache, 0, HS_BLOB_CACHE_SIZE * sizeof(*hs->bcache));
	hsi_block(&img, 17, HSI_NM_SEG, 2, "nmethod", 6, 1);
	hsi_block(&img, 17, HSI_NM_SEG + 2, HSI_STUB_SEG - HSI_NM_SEG - 2, "StubRoutines (3)", 0,
		  0);
	is_int(hotspot_find_blob(hs, pc2, &b), 1, "a block split where the cached map says one");
	is_int(b.blob, HSI_BLOB(HSI_NM_SEG + 2), "  the new block's blob, not the old");
	is_int(b.kind, HOTSPOT_BLOB_STUB, "  a stub");
	hotspot_close(hs);
}

int main(void)
{
	tap_plan(228);
	test_style(17);
	test_style(25);
	test_lies();
	test_wraparound();
	test_hidden_class();
	test_cache();
	test_unloaded();
	test_segmap_cache();
	test_interp_bci();
	test_scopes(17);
	test_scopes(25);
	test_blob_check(17);
	test_blob_check(25);
	return tap_done();
}
