/* hotspot_int.h - the inside of the VMStructs reader (hotspot.h), shared by
 * its files, the unit tests and the fuzzer. Not for other folders.
 *
 *   hsmem.c      the one bounded reader every byte of the JVM goes through,
 *                and the pointer/string checks built on it
 *   libjvm.c     libjvm.so in /proc/<pid>/maps and its exported symbols
 *   vmstructs.c  the four tables read into lookups (field, type, constant)
 *   hotspot.c    open/close: resolve what the reader needs into struct
 *                hs_layout, the version, the interpreter, frame constants
 *   codecache.c  code heaps, segment-map walk, CodeBlob -> hotspot_blob
 *   hsmethod.c   Method* -> "pkg.Class.method", cached
 *   hsscopes.c   the inline chain at a pc (PcDesc + scopes stream)
 *   hsmap.c      every nmethod of the code heaps as a struct perfmap
 *
 * The reader is a function pointer so the unit tests and the fuzzer run the
 * same code over a fake memory image (hotspot_open_reader).
 */
#ifndef FS_HOTSPOT_INT_H
#define FS_HOTSPOT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"
#include "hotspot.h"

#define HS_MAX_READ	     (64u << 10)       /* one read, bytes */
#define HS_MAX_TABLE_ROWS    16384	       /* rows of one VMStructs table */
#define HS_MAX_TABLE_STRING  160	       /* type/field names longer than this are skipped */
#define HS_MAX_STRIDE	     256	       /* a table row, bytes */
#define HS_MAX_HEAPS	     8		       /* code heaps (JDK 9+: 3, 11-25: <= 3) */
#define HS_MAX_SEGMAP_HOPS   8192	       /* segment-map steps back to a block start */
#define HS_MAX_BLOB_HEADER   1024	       /* bytes of a CodeBlob/nmethod header read */
#define HS_MAX_SYMBOL	     1024	       /* bytes of a Symbol's body read */
#define HS_METHOD_CACHE_SIZE 4096	       /* Method* -> name slots (direct-mapped) */
#define HS_KLASS_CACHE_SIZE  1024	       /* Klass* -> dotted class name */
#define HS_BLOB_CACHE_SIZE   4096	       /* block -> blob entries (2-way sets) */
#define HS_SEGMAP_PAGE	     4096u	       /* bytes of segment map cached together */
#define HS_SEGMAP_CACHE	     64		       /* segment-map pages kept (direct-mapped) */
#define HS_BLOB_CACHE_TTL_MS 1000	       /* a cached blob is trusted this long */
#define HS_EPOCH_MS	     5		       /* the heap's collection count, read this often */
#define HS_NAME_CACHE_SIZE   64		       /* blob name pointer -> name */
#define HS_DBG_CACHE	     16		       /* nmethods whose debug info is kept */
#define HS_USER_TOP	     0x800000000000ull /* x86_64 user addresses are below */
/* A field offset or a type size from VMStructs past this is a lie (HotSpot
 * objects are far smaller): refused where it is read, so that offset +
 * width never wraps. */
#define HS_MAX_FIELD_OFFSET (1u << 20)

/* off + width bytes fit in size: every value untrusted, no overflow. */
static inline int hs_fits(uint64_t off, uint64_t width, uint64_t size)
{
	return off <= size && width <= size - off;
}

/* Read len bytes at addr of the target into buf: 0, or -errno (-EFAULT not
 * mapped or short). Never more than HS_MAX_READ at a time. */
typedef int (*hs_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Reads that reached the reader (after the bound and range checks). */
struct hs_read_counts {
	uint64_t calls, bytes;
};

struct hs_reader {
	hs_read_fn read;
	void *ctx;
	struct hs_read_counts *counts; /* NULL: not counted */
};

/* Where the exported symbols of libjvm.so are in the target (load bias
 * applied): the addresses of the variables, not their values. */
enum hs_sym {
	HS_SYM_STRUCTS,
	HS_SYM_TYPES,
	HS_SYM_INT_CONSTANTS,
	HS_SYM_LONG_CONSTANTS,
	HS_SYM_STRUCT_TYPE_NAME,
	HS_SYM_STRUCT_FIELD_NAME,
	HS_SYM_STRUCT_TYPE_STRING,
	HS_SYM_STRUCT_IS_STATIC,
	HS_SYM_STRUCT_OFFSET,
	HS_SYM_STRUCT_ADDRESS,
	HS_SYM_STRUCT_STRIDE,
	HS_SYM_TYPE_TYPE_NAME,
	HS_SYM_TYPE_SIZE,
	HS_SYM_TYPE_STRIDE,
	HS_SYM_INT_NAME,
	HS_SYM_INT_VALUE,
	HS_SYM_INT_STRIDE,
	HS_SYM_LONG_NAME,
	HS_SYM_LONG_VALUE,
	HS_SYM_LONG_STRIDE,
	HS_SYM_COUNT
};

extern const char *const hs_sym_names[HS_SYM_COUNT];

struct hs_syms {
	uint64_t addr[HS_SYM_COUNT];
};

/* ---- hsmem.c ------------------------------------------------------------ */

/* The target process: its pid, pinned by a pidfd opened while the pid had
 * the start time it was opened with (a recycled pid is never read). */
struct hs_proc {
	pid_t pid;
	int pidfd;
};

/* The process_vm_readv reader; ctx is a struct hs_proc* (procmem_read: a
 * read of a process that exited, or whose pid was reused, fails). */
int hsmem_read_pid(void *ctx, uint64_t addr, void *buf, size_t len);

/* A plausible user-space address of an object aligned to align (a power of
 * two): not NULL, not in the first page, below HS_USER_TOP. */
int hsmem_ptr_ok(uint64_t p, uint64_t align);

/* Read through r with the bound and the range check applied. */
int hsmem_read(const struct hs_reader *r, uint64_t addr, void *buf, size_t len);
int hsmem_read_u64(const struct hs_reader *r, uint64_t addr, uint64_t *v);
/* An unsigned integer field of width 1, 2, 4 or 8 bytes. */
int hsmem_read_uint(const struct hs_reader *r, uint64_t addr, int width, uint64_t *v);
/* A NUL-terminated string of at most max-1 bytes: reads stay within the
 * page(s) it lies on. 0 (buf NUL-terminated), -ENAMETOOLONG when no NUL in
 * max-1 bytes, or -errno. */
int hsmem_read_cstr(const struct hs_reader *r, uint64_t addr, char *buf, size_t max);

/* ---- libjvm.c ----------------------------------------------------------- */

struct libjvm_map {
	uint64_t start, end, pgoff;
};
/* The first libjvm.so mapping at file offset 0 in maps text f, and the
 * lowest and highest address of any libjvm.so mapping: 0 or -ENOENT.
 * Reads at most LIBJVM_MAX_MAPS_LINES lines. Fuzzed (fuzz_procfiles.c). */
int libjvm_scan_maps(FILE *f, struct libjvm_map *m, uint64_t *lo, uint64_t *hi);

/* Find libjvm.so in /proc/<pid>/maps, open it as /proc/<pid>/map_files/...
 * and resolve the hs_sym symbols from its dynamic symbol table. 0, -ENOENT
 * (no libjvm.so or no VMStructs symbols), -ESRCH, -EPERM, -errno. */
int libjvm_find_syms(pid_t pid, struct hs_syms *out, uint64_t *lo, uint64_t *hi,
		     struct fs_error *err);

/* ---- vmstructs.c -------------------------------------------------------- */

struct vmstructs;

int vmstructs_read(const struct hs_reader *r, const struct hs_syms *syms, struct vmstructs **out,
		   struct fs_error *err);
void vmstructs_free(struct vmstructs *vs);
FS_DEFINE_CLEANUP(struct vmstructs, vmstructs_free)
#define cleanup_vmstructs __attribute__((cleanup(vmstructs_free_cleanup)))

/* A non-static field: 0 with *offset and *width (bytes of its type, 0 when
 * unknown), or -ENOENT; an offset past HS_MAX_FIELD_OFFSET is -ERANGE. */
int vmstructs_field(const struct vmstructs *vs, const char *type, const char *field,
		    uint64_t *offset, int *width);
/* A static field: 0 with *address, or -ENOENT. */
int vmstructs_static(const struct vmstructs *vs, const char *type, const char *field,
		     uint64_t *address);
/* Size of a type, or -ENOENT; past HS_MAX_FIELD_OFFSET -ERANGE. */
int vmstructs_type_size(const struct vmstructs *vs, const char *type, uint64_t *size);
/* An int or long constant, or -ENOENT. */
int vmstructs_constant(const struct vmstructs *vs, const char *name, int64_t *value);
size_t vmstructs_count(const struct vmstructs *vs, size_t *types, size_t *constants);

/* ---- hotspot.c: what was resolved at open ------------------------------- */

struct hs_heap {
	uint64_t low, high;  /* the heap's reserved range (VirtualSpace boundaries) */
	uint64_t committed;  /* _memory._high when last read */
	uint64_t segmap_low; /* its segment map */
	uint64_t segmap_high;
	int log2_segment;
};

struct hs_layout {
	/* GrowableArray<CodeHeap*> */
	uint64_t heaps_var; /* &CodeCache::_heaps */
	uint64_t ga_len_off, ga_data_off;
	/* CodeHeap, VirtualSpace */
	uint64_t heap_memory_off, heap_segmap_off, heap_log2_off;
	uint64_t vs_low_off, vs_high_off, vs_low_bnd_off, vs_high_bnd_off;
	/* HeapBlock */
	uint64_t hb_size, hb_used_off, hb_len_off;
	int hb_len_width; /* size_t (JDK 11-21) or uint32_t (25) */
	/* CodeBlob */
	uint64_t cb_name_off, cb_size_off, cb_frame_size_off;
	uint64_t cb_fco_off;
	int cb_fco_width;
	int code_is_offset; /* 1: _code_offset/_data_offset (JDK 23+), 0: _code_begin/_code_end */
	uint64_t cb_code_begin_off, cb_code_end_off;
	int cb_kind_width; /* 0: no _kind field, use the name */
	uint64_t cb_kind_off;
	int64_t kind_nmethod;
	/* nmethod */
	uint64_t nm_method_off, nm_comp_level_off;
	int nm_comp_level_width;
	uint64_t nm_compile_id_off; /* 0: no _compile_id field (optional) */
	uint64_t blob_read;	    /* bytes of header read per blob (covers all of the above) */
	/* Method -> name */
	uint64_t m_const_off, cm_constants_off, cm_name_index_off, cp_holder_off, cp_size;
	uint64_t k_name_off, sym_len_off, sym_body_off;
	uint64_t cm_size, cm_code_size_off; /* 0: no bci (optional) */
	/* nmethod debug info (hsscopes.c); dbg_style 0: not available,
	 * 1: inside the nmethod (JDK 11-21), 2: immutable/mutable data (23+) */
	int dbg_style;
	uint64_t nm_pcs_off, nm_data_off, nm_meta_off, nm_deps_off;
	uint64_t nm_imm_off, nm_imm_size_off, cb_mut_off, cb_reloc_size_off, cb_mut_size_off;
	uint64_t dbg_read; /* header bytes holding all of them */
	uint64_t pcdesc_size, pcd_pc_off, pcd_decode_off;
};

/* One nmethod's debug info, copied out of the JVM (hsscopes.c). */
struct hs_nm_dbg {
	uint64_t nm;	   /* the nmethod; 0: empty */
	uint64_t stamp_ms; /* when it was copied (trusted for blob_ttl_ms) */
	uint8_t *pcs, *data;
	size_t pcs_len, data_len;
	uint64_t *meta;
	size_t nmeta;
};

struct hs_method_slot {
	uint64_t method;  /* 0: empty */
	uint64_t check;	  /* a Klass's: the name Symbol* it must still point at */
	uint64_t epoch;	  /* the heap epoch it was last read or checked in (0: none) */
	uint64_t read_ns; /* a Method's: when it was read (CLOCK_MONOTONIC ns) */
	char *name;
};

struct hs_blob_slot {
	uint64_t lo, hi; /* the block [lo, hi); hi 0: empty */
	uint64_t stamp_ms;
	struct hotspot_blob b;
};

/* A page of a heap's segment map as read at stamp_ms: [lo, hi) of the
 * map (a page, or less at the map's ends). */
struct hs_segmap_slot {
	uint64_t lo, hi; /* hi 0: empty */
	uint64_t stamp_ms;
	uint64_t seq; /* hs->segmap_seq of the lookup that read it */
	uint8_t data[HS_SEGMAP_PAGE];
};

struct hs_name_slot {
	uint64_t ptr; /* 0: empty */
	char name[64];
};

struct hotspot {
	struct hs_reader r;
	struct hs_read_counts reads; /* every read of the target through r */
	pid_t pid;
	struct hs_proc *proc; /* hotspot_open's target (NULL over a fake image) */
	struct vmstructs *vs;
	struct hs_layout l;
	int major;
	uint64_t interp_begin, interp_end;
	uint64_t cc_low, cc_high; /* union of the heaps' ranges */
	struct hs_heap heaps[HS_MAX_HEAPS];
	size_t nheaps;
	struct hs_method_slot *mcache; /* HS_METHOD_CACHE_SIZE slots */
	struct hs_method_slot *kcache; /* HS_KLASS_CACHE_SIZE slots (Klass* -> class) */
	struct hs_blob_slot *bcache;   /* HS_BLOB_CACHE_SIZE slots */
	uint64_t blob_ttl_ms;	       /* 0: no blob cache (tests) */
	/* segment-map pages (HS_SEGMAP_CACHE, allocated at the first lookup),
	 * trusted blob_ttl_ms to find a block's start, whose header is then
	 * read or found cached; a lookup they mislead is made again from the
	 * map as it is now (segmap_seq numbers the passes) */
	struct hs_segmap_slot *scache;
	uint64_t segmap_seq;
	int segmap_cached_used; /* the pass used a page read before it */
	struct hs_name_slot ncache[HS_NAME_CACHE_SIZE];
	struct hs_nm_dbg dcache[HS_DBG_CACHE];
	char namebuf[HS_MAX_SYMBOL * 2 + 2];
	/* &CollectedHeap::_total_collections (0: not exported), its value + 1
	 * when last read (0: never or in a collection) and when; the address of
	 * its "collection in progress" flag */
	uint64_t epoch_addr, epoch, epoch_ms, gc_active_addr;
};

/* Open through any reader (tests, fuzzer); hotspot_open uses it with
 * hsmem_read_pid. */
int hotspot_open_reader(const struct hs_reader *r, const struct hs_syms *syms, struct hotspot **out,
			struct fs_error *err);

/* ---- hsscopes.c --------------------------------------------------------- */

/* Free the cached debug info. */
void hsscopes_forget(struct hotspot *hs);

#define HS_MAX_CHAIN 16 /* inline frames kept per range */

/* The ranges of nmethod b with one inline chain each, in order, covering
 * [code_begin, code_end): fn(ctx, start, end, chain innermost first, n);
 * n 0 where nothing is recorded (name it by b->method). A non-zero return
 * of fn stops the walk and is returned; -errno when b has no debug info. */
typedef int (*hsscopes_range_fn)(void *ctx, uint64_t start, uint64_t end,
				 const struct hotspot_scope *chain, int n);
int hsscopes_ranges(struct hotspot *hs, const struct hotspot_blob *b, hsscopes_range_fn fn,
		    void *ctx);

/* ---- codecache.c -------------------------------------------------------- */

/* (Re)read CodeCache::_heaps: at open, and when a pc is outside every heap
 * known so far. 0 or -errno. */
int codecache_read_heaps(struct hotspot *hs);
/* Fill out from the CodeBlob at blob (already known to be the start of an
 * allocated block). 1, 0 when it does not look like a blob, -errno. */
int codecache_read_blob(struct hotspot *hs, uint64_t blob, struct hotspot_blob *out);
/* Call fn for each used block (blob) of each heap, at most max_blobs. */
int codecache_each_blob(struct hotspot *hs, size_t max_blobs,
			int (*fn)(void *ctx, const struct hotspot_blob *b), void *ctx);

#endif
