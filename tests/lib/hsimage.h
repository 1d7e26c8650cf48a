/* hsimage.h - a fake HotSpot JVM as a flat memory image, for the unit test
 * and the fuzzer of sidecar/hotspot (header-only: both include it).
 *
 * The image holds what hotspot_open_reader reads: the exported symbol
 * variables, the four VMStructs tables and their strings, CodeCache::_heaps
 * with one code heap (segment map, 64 segments of 128 bytes), three blobs
 * (the interpreter, an nmethod of pkg.Foo.bar at C2, a stub named
 * "StubRoutines (1)") followed by free space, and the Method ->
 * ConstMethod -> ConstantPool -> Klass -> Symbol chain of the nmethod.
 * style 17 lays CodeBlob out as JDK 11-21 do (code range as pointers, kind
 * by name), style 25 as JDK 23+ (offsets, a _kind byte, int16 frame
 * complete offset, u1 comp level, uint32 block length). The field offsets
 * are made up: the reader must take them from the tables.
 *
 * Universe::_collectedHeap points at a CollectedHeap whose
 * _total_collections (HSI_COLLECTIONS) is 5.
 *
 * The nmethod carries debug info (inside it for style 17, in immutable and
 * mutable data for 25): PcDescs at code offsets 0x20 (scope pkg.Foo.bar @5),
 * 0x40 (pkg.Foo.bar @5 -> pkg.Foo.baz @300, a two-byte int) and 0x100 (no
 * scope), its code ending at offset 0x200. */
#ifndef FS_TESTS_HSIMAGE_H
#define FS_TESTS_HSIMAGE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "hotspot_int.h"

#define HSI_BASE     0x10000000ull
#define HSI_SIZE     0x10000u
#define HSI_STRINGS  0x0200u
#define HSI_STRUCTS  0x2000u
#define HSI_TYPES    0x3000u
#define HSI_INTS     0x3800u
#define HSI_LONGS    0x3a00u
#define HSI_STATICS  0x4000u
#define HSI_SEGMAP   0x5000u
#define HSI_META     0x6000u
#define HSI_HEAP     0x8000u
#define HSI_SEGS     64u
#define HSI_LOG2     7
#define HSI_HB	     16u /* sizeof(HeapBlock) */
#define HSI_CP_SIZE  72u
#define HSI_NAME_IDX 3u
/* blocks: interpreter at segment 0 (16 segments), nmethod at 16 (8), stub
 * at 24 (4); 28.. free */
#define HSI_INTERP_SEG	0u
#define HSI_NM_SEG	16u
#define HSI_STUB_SEG	24u
#define HSI_FREE_SEG	28u
#define HSI_SEG_ADDR(s) (HSI_BASE + HSI_HEAP + ((uint64_t)(s) << HSI_LOG2))
#define HSI_BLOB(s)	(HSI_SEG_ADDR(s) + HSI_HB)
#define HSI_CODE_OFF	0x60u /* code starts this far into a blob */
#define HSI_METHOD	(HSI_BASE + HSI_META)
#define HSI_METHOD2	(HSI_BASE + HSI_META + 0x300)
#define HSI_NM_CODE_END 0x200u			   /* the nmethod's code: [HSI_CODE_OFF, this) */
#define HSI_COMPILE_ID	77u			   /* the nmethod's compile id */
#define HSI_COLLECTIONS (HSI_STATICS + 0x180 + 16) /* CollectedHeap::_total_collections */

struct hsi {
	uint8_t mem[HSI_SIZE];
	uint32_t str;	 /* next free byte of the string area */
	uint32_t nrows;	 /* struct rows written */
	uint32_t ntypes; /* type rows written */
	struct hs_syms syms;
};

static inline int hsi_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct hsi *im = ctx;
	if (addr < HSI_BASE || addr - HSI_BASE > HSI_SIZE || len > HSI_SIZE - (addr - HSI_BASE))
		return -EFAULT;
	memcpy(buf, im->mem + (addr - HSI_BASE), len);
	return 0;
}

static inline void hsi_put(struct hsi *im, uint32_t off, uint64_t v, int width)
{
	memcpy(im->mem + off, &v, (size_t)width); /* little-endian host */
}

static inline uint64_t hsi_string(struct hsi *im, const char *s)
{
	size_t n = strlen(s) + 1;
	uint64_t a = HSI_BASE + im->str;
	memcpy(im->mem + im->str, s, n);
	im->str += (uint32_t)n;
	return a;
}

static inline void hsi_field(struct hsi *im, const char *type, const char *field, const char *ts,
			     int is_static, uint64_t value)
{
	uint32_t row = HSI_STRUCTS + im->nrows++ * 48;
	hsi_put(im, row + 0, hsi_string(im, type), 8);
	hsi_put(im, row + 8, hsi_string(im, field), 8);
	hsi_put(im, row + 16, hsi_string(im, ts), 8);
	hsi_put(im, row + 24, (uint64_t)is_static, 4);
	hsi_put(im, row + (is_static ? 40 : 32), value, 8);
}

static inline void hsi_type(struct hsi *im, const char *name, uint64_t size)
{
	uint32_t row = HSI_TYPES + im->ntypes++ * 40;
	hsi_put(im, row + 0, hsi_string(im, name), 8);
	hsi_put(im, row + 32, size, 8);
}

/* A Symbol at off: u2 length at 4, bytes at 6. */
static inline uint64_t hsi_symbol(struct hsi *im, uint32_t off, const char *s)
{
	hsi_put(im, off + 4, strlen(s), 2);
	memcpy(im->mem + off + 6, s, strlen(s));
	return HSI_BASE + off;
}

/* A used block of len segments at segment seg, its segment map and its blob. */
static inline void hsi_block(struct hsi *im, int style, uint32_t seg, uint32_t len,
			     const char *name, int frame_words, int nmethod)
{
	uint32_t b = HSI_HEAP + (seg << HSI_LOG2), blob = b + HSI_HB;
	uint32_t size = (len << HSI_LOG2) - HSI_HB;
	for (uint32_t i = 0; i < len; i++)
		im->mem[HSI_SEGMAP + seg + i] = (uint8_t)(i > 5 ? i % 5 + 1 : i); /* hops back */
	hsi_put(im, b + 0, len, style == 25 ? 4 : 8);
	im->mem[b + 8] = 1;
	hsi_put(im, blob + 0, hsi_string(im, name), 8);
	hsi_put(im, blob + 8, size, 4);
	hsi_put(im, blob + 12, (uint64_t)frame_words, 4);
	hsi_put(im, blob + 16, 0x10, style == 25 ? 2 : 4);
	uint32_t code_end = nmethod ? HSI_NM_CODE_END : size - 8;
	if (style == 25) {
		hsi_put(im, blob + 24, HSI_CODE_OFF, 4);
		hsi_put(im, blob + 28, code_end, 4);
		im->mem[blob + 40] = nmethod ? 1 : 6;
		im->mem[blob + 56] = 4;
	} else {
		hsi_put(im, blob + 24, HSI_BASE + blob + HSI_CODE_OFF, 8);
		hsi_put(im, blob + 32, HSI_BASE + blob + code_end, 8);
		hsi_put(im, blob + 56, 4, 4);
	}
	if (nmethod) {
		hsi_put(im, blob + 48, HSI_METHOD, 8);
		hsi_put(im, blob + 60, HSI_COMPILE_ID, 4);
	}
}

static inline void hsi_tables(struct hsi *im, int style)
{
	hsi_field(im, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1,
		  HSI_BASE + HSI_STATICS);
	hsi_field(im, "AbstractInterpreter", "_code", "StubQueue*", 1, HSI_BASE + HSI_STATICS + 8);
	hsi_field(im, "Abstract_VM_Version", "_vm_major_version", "int", 1,
		  HSI_BASE + HSI_STATICS + 16);
	hsi_field(im, "Universe", "_collectedHeap", "CollectedHeap*", 1,
		  HSI_BASE + HSI_STATICS + 24);
	hsi_field(im, "CollectedHeap", "_total_collections", "unsigned int", 0, 16);
	hsi_field(im, "CollectedHeap", style == 25 ? "_is_stw_gc_active" : "_is_gc_active", "bool",
		  0, 20);
	hsi_field(im, style == 25 ? "GrowableArrayBase" : "GenericGrowableArray", "_len", "int", 0,
		  0);
	hsi_field(im, "GrowableArray<int>", "_data", "int*", 0, 8);
	hsi_field(im, "CodeHeap", "_memory", "VirtualSpace", 0, 0);
	hsi_field(im, "CodeHeap", "_segmap", "VirtualSpace", 0, 64);
	hsi_field(im, "CodeHeap", "_log2_segment_size", "int", 0, 128);
	hsi_field(im, "VirtualSpace", "_low_boundary", "char*", 0, 0);
	hsi_field(im, "VirtualSpace", "_high_boundary", "char*", 0, 8);
	hsi_field(im, "VirtualSpace", "_low", "char*", 0, 16);
	hsi_field(im, "VirtualSpace", "_high", "char*", 0, 24);
	hsi_field(im, "HeapBlock", "_header", "HeapBlock::Header", 0, 0);
	hsi_field(im, "HeapBlock::Header", "_length", style == 25 ? "uint32_t" : "size_t", 0, 0);
	hsi_field(im, "HeapBlock::Header", "_used", "bool", 0, 8);
	hsi_field(im, "StubQueue", "_stub_buffer", "address", 0, 8);
	hsi_field(im, "StubQueue", "_buffer_limit", "int", 0, 20);
	hsi_field(im, "CodeBlob", "_name", "const char*", 0, 0);
	hsi_field(im, "CodeBlob", "_size", "int", 0, 8);
	hsi_field(im, "CodeBlob", "_frame_size", "int", 0, 12);
	hsi_field(im, "CodeBlob", "_frame_complete_offset", style == 25 ? "int16_t" : "int", 0, 16);
	if (style == 25) {
		hsi_field(im, "CodeBlob", "_code_offset", "int", 0, 24);
		hsi_field(im, "CodeBlob", "_data_offset", "int", 0, 28);
		hsi_field(im, "CodeBlob", "_kind", "CodeBlobKind", 0, 40);
		hsi_field(im, "nmethod", "_method", "Method*", 0, 48);
		hsi_field(im, "nmethod", "_comp_level", "CompLevel", 0, 56);
	} else {
		hsi_field(im, "CodeBlob", "_code_begin", "address", 0, 24);
		hsi_field(im, "CodeBlob", "_code_end", "address", 0, 32);
		hsi_field(im, "CompiledMethod", "_method", "Method*", 0, 48);
		hsi_field(im, "nmethod", "_comp_level", "int", 0, 56);
	}
	hsi_field(im, "nmethod", "_compile_id", "int", 0, 60);
	hsi_field(im, "PcDesc", "_pc_offset", "int", 0, 0);
	hsi_field(im, "PcDesc", "_scope_decode_offset", "int", 0, 4);
	hsi_field(im, "nmethod", "_scopes_pcs_offset", "int", 0, 64);
	if (style == 25) {
		hsi_field(im, "nmethod", "_scopes_data_offset", "int", 0, 68);
		hsi_field(im, "nmethod", "_immutable_data_size", "int", 0, 72);
		hsi_field(im, "nmethod", "_immutable_data", "address", 0, 80);
		hsi_field(im, "CodeBlob", "_mutable_data", "address", 0, 88);
		hsi_field(im, "CodeBlob", "_mutable_data_size", "int", 0, 96);
		hsi_field(im, "CodeBlob", "_relocation_size", "int", 0, 100);
	} else {
		hsi_field(im, "nmethod", "_dependencies_offset", "int", 0, 68);
		hsi_field(im, "nmethod", "_metadata_offset", "int", 0, 72);
		hsi_field(im, "CompiledMethod", "_scopes_data_begin", "address", 0, 80);
	}
	hsi_field(im, "Method", "_constMethod", "ConstMethod*", 0, 8);
	hsi_field(im, "ConstMethod", "_code_size", "u2", 0, 32);
	hsi_field(im, "ConstMethod", "_constants", "ConstantPool*", 0, 8);
	hsi_field(im, "ConstMethod", "_name_index", "u2", 0, 34);
	hsi_field(im, "ConstantPool", "_pool_holder", "InstanceKlass*", 0, 24);
	hsi_field(im, "Klass", "_name", "Symbol*", 0, 24);
	hsi_field(im, "Symbol", "_length", "u2", 0, 4);
	hsi_field(im, "Symbol", "_body[0]", "u1", 0, 6);
	static const struct {
		const char *n;
		uint64_t s;
	} types[] = {{"int", 4},
		     {"u1", 1},
		     {"u2", 2},
		     {"bool", 1},
		     {"size_t", 8},
		     {"uint32_t", 4},
		     {"int16_t", 2},
		     {"address", 8},
		     {"CompLevel", 1},
		     {"CodeBlobKind", 1},
		     {"HeapBlock", HSI_HB},
		     {"ConstantPool", HSI_CP_SIZE},
		     {"PcDesc", 16},
		     {"ConstMethod", 48}};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		hsi_type(im, types[i].n, types[i].s);
	if (style == 25) {
		hsi_put(im, HSI_INTS + 0, hsi_string(im, "CodeBlobKind::Nmethod"), 8);
		hsi_put(im, HSI_INTS + 8, 1, 4);
	}
}

/* The nmethod's debug info: metadata {bar, baz}, scopes data (offset 0 is
 * never a record), PcDescs. */
static inline void hsi_debug_info(struct hsi *im, int style)
{
	uint32_t blob = HSI_HEAP + (HSI_NM_SEG << HSI_LOG2) + HSI_HB;
	/* X = 1 (JDK 20+) adds 1 to every byte; 301 takes two bytes */
	static const uint8_t data17[] = {0xAA, 0, 1, 6, 1, 2, 237, 1};
	static const uint8_t data25[] = {0xAA, 1, 2, 7, 2, 3, 238, 2};
	const uint8_t *data = style == 25 ? data25 : data17;
	const int32_t pcs[4][2] = {{-1, 0}, {0x20, 1}, {0x40, 4}, {0x100, 0}};
	uint32_t meta, sdata, spcs, base;
	if (style == 25) {
		base = HSI_META + 0x400; /* immutable: PcDescs, then scopes data */
		spcs = base;
		sdata = base + 0x40;
		meta = HSI_META + 0x500 + 8; /* mutable: 8 bytes of relocations first */
		hsi_put(im, blob + 64, 0, 4);
		hsi_put(im, blob + 68, 0x40, 4);
		hsi_put(im, blob + 72, 0x40 + sizeof(data17), 4);
		hsi_put(im, blob + 80, HSI_BASE + base, 8);
		hsi_put(im, blob + 88, HSI_BASE + HSI_META + 0x500, 8);
		hsi_put(im, blob + 96, 8 + 16, 4);
		hsi_put(im, blob + 100, 8, 4);
	} else {
		meta = blob + HSI_NM_CODE_END; /* inside the nmethod */
		sdata = meta + 16;
		spcs = sdata + 0x10;
		hsi_put(im, blob + 64, spcs - blob, 4);
		hsi_put(im, blob + 68, spcs - blob + 64, 4);
		hsi_put(im, blob + 72, meta - blob, 4);
		hsi_put(im, blob + 80, HSI_BASE + sdata, 8);
	}
	hsi_put(im, meta, HSI_METHOD, 8);
	hsi_put(im, meta + 8, HSI_METHOD2, 8);
	memcpy(im->mem + sdata, data, sizeof(data17));
	for (uint32_t i = 0; i < 4; i++) {
		hsi_put(im, spcs + i * 16, (uint32_t)pcs[i][0], 4);
		hsi_put(im, spcs + i * 16 + 4, (uint32_t)pcs[i][1], 4);
	}
	/* pkg.Foo.baz: a second Method in the same class, name index 4 */
	uint32_t m2 = HSI_META + 0x300, cm2 = m2 + 0x40, cp = HSI_META + 0x80;
	hsi_put(im, m2 + 8, HSI_BASE + cm2, 8);
	hsi_put(im, cm2 + 8, HSI_BASE + cp, 8);
	hsi_put(im, cm2 + 34, 4, 2);
	hsi_put(im, cp + HSI_CP_SIZE + 4 * 8, hsi_symbol(im, HSI_META + 0x280, "baz"), 8);
}

/* Statics, the heap and the metadata of the nmethod. */
static inline void hsi_objects(struct hsi *im, int style)
{
	uint32_t st = HSI_STATICS, ga = st + 0x40, data = st + 0x60, heap = st + 0x80;
	uint32_t queue = st + 0x200;
	hsi_put(im, st + 0, HSI_BASE + ga, 8);
	hsi_put(im, st + 8, HSI_BASE + queue, 8);
	hsi_put(im, st + 16, (uint64_t)style, 4);
	hsi_put(im, st + 24, HSI_BASE + st + 0x180, 8);
	hsi_put(im, HSI_COLLECTIONS, 5, 4);
	hsi_put(im, ga + 0, 1, 4);
	hsi_put(im, ga + 8, HSI_BASE + data, 8);
	hsi_put(im, data, HSI_BASE + heap, 8);
	uint64_t lo = HSI_SEG_ADDR(0), hi = HSI_SEG_ADDR(HSI_SEGS);
	hsi_put(im, heap + 0, lo, 8);
	hsi_put(im, heap + 8, hi, 8);
	hsi_put(im, heap + 16, lo, 8);
	hsi_put(im, heap + 24, hi, 8);
	hsi_put(im, heap + 64, HSI_BASE + HSI_SEGMAP, 8);
	hsi_put(im, heap + 72, HSI_BASE + HSI_SEGMAP + HSI_SEGS, 8);
	hsi_put(im, heap + 80, HSI_BASE + HSI_SEGMAP, 8);
	hsi_put(im, heap + 88, HSI_BASE + HSI_SEGMAP + HSI_SEGS, 8);
	hsi_put(im, heap + 128, HSI_LOG2, 4);
	memset(im->mem + HSI_SEGMAP, 0xFF, HSI_SEGS);
	hsi_block(im, style, HSI_INTERP_SEG, HSI_NM_SEG - HSI_INTERP_SEG, "Interpreter", 0, 0);
	hsi_block(im, style, HSI_NM_SEG, HSI_STUB_SEG - HSI_NM_SEG, "nmethod", 6, 1);
	hsi_block(im, style, HSI_STUB_SEG, HSI_FREE_SEG - HSI_STUB_SEG, "StubRoutines (1)", 0, 0);
	/* the free rest: one free block */
	hsi_put(im, HSI_HEAP + (HSI_FREE_SEG << HSI_LOG2), HSI_SEGS - HSI_FREE_SEG,
		style == 25 ? 4 : 8);
	/* the interpreter's StubQueue covers its blob's code */
	hsi_put(im, queue + 8, HSI_BLOB(HSI_INTERP_SEG) + HSI_CODE_OFF, 8);
	hsi_put(im, queue + 20, 0x400, 4);
	/* Method -> ConstMethod -> ConstantPool -> Klass, Symbols */
	uint32_t m = HSI_META, cm = m + 0x40, cp = m + 0x80, k = m + 0x100;
	hsi_put(im, m + 8, HSI_BASE + cm, 8);
	hsi_put(im, cm + 8, HSI_BASE + cp, 8);
	hsi_put(im, cm + 34, HSI_NAME_IDX, 2);
	hsi_put(im, cm + 32, 10, 2); /* 10 bytes of bytecode after the 48-byte ConstMethod */
	hsi_put(im, cp + 24, HSI_BASE + k, 8);
	hsi_put(im, cp + HSI_CP_SIZE + HSI_NAME_IDX * 8, hsi_symbol(im, m + 0x200, "bar"), 8);
	hsi_put(im, k + 24, hsi_symbol(im, m + 0x180, "pkg/Foo"), 8);
}

/* Build a fresh image of style 17 or 25. */
static inline void hsi_build(struct hsi *im, int style)
{
	memset(im, 0, sizeof(*im));
	im->str = HSI_STRINGS;
	hsi_tables(im, style);
	hsi_objects(im, style);
	hsi_debug_info(im, style);
	static const uint64_t vals[HS_SYM_COUNT] = {
	    [HS_SYM_STRUCTS] = HSI_BASE + HSI_STRUCTS,
	    [HS_SYM_TYPES] = HSI_BASE + HSI_TYPES,
	    [HS_SYM_INT_CONSTANTS] = HSI_BASE + HSI_INTS,
	    [HS_SYM_LONG_CONSTANTS] = HSI_BASE + HSI_LONGS,
	    [HS_SYM_STRUCT_TYPE_NAME] = 0,
	    [HS_SYM_STRUCT_FIELD_NAME] = 8,
	    [HS_SYM_STRUCT_TYPE_STRING] = 16,
	    [HS_SYM_STRUCT_IS_STATIC] = 24,
	    [HS_SYM_STRUCT_OFFSET] = 32,
	    [HS_SYM_STRUCT_ADDRESS] = 40,
	    [HS_SYM_STRUCT_STRIDE] = 48,
	    [HS_SYM_TYPE_TYPE_NAME] = 0,
	    [HS_SYM_TYPE_SIZE] = 32,
	    [HS_SYM_TYPE_STRIDE] = 40,
	    [HS_SYM_INT_NAME] = 0,
	    [HS_SYM_INT_VALUE] = 8,
	    [HS_SYM_INT_STRIDE] = 16,
	    [HS_SYM_LONG_NAME] = 0,
	    [HS_SYM_LONG_VALUE] = 8,
	    [HS_SYM_LONG_STRIDE] = 16,
	};
	for (int i = 0; i < HS_SYM_COUNT; i++) {
		im->syms.addr[i] = HSI_BASE + 8 * (uint64_t)i;
		hsi_put(im, 8 * (uint32_t)i, vals[i], 8);
	}
}

#endif
