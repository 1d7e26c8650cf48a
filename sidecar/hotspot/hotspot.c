/* hotspot.c - open/close a HotSpot JVM through its VMStructs: see hotspot.h.
 *
 * hotspot_open_reader resolves, once, every offset and address the reader
 * needs into struct hs_layout; a JVM whose tables lack one of them is
 * refused with -ENOTSUP and the name of what is missing. Where JDK versions
 * differ, both spellings are tried (docs/hotspot.md lists them). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hotspot_int.h"
#include "proc.h"

/* x86_64 interpreter frame, in words from rbp: hotspot/cpu/x86/frame_x86.hpp
 * (interpreter_frame_sender_sp_offset = -1, interpreter_frame_method_offset
 * = -3, interpreter_frame_bcp_offset = -8, link_offset = 0,
 * return_addr_offset = 1). The same in JDK 11, 17, 21 and 25. */
#define HS_X86_INTERP_SENDER_SP (-1)
#define HS_X86_INTERP_METHOD	(-3)
#define HS_X86_INTERP_BCP	(-8)
#define HS_X86_LINK		0
#define HS_X86_RETURN_ADDR	1
#define HS_WORD			8

struct hs_resolve {
	const struct vmstructs *vs;
	struct fs_error *err;
	int rc;
};

/* The first of the (type, field) pairs that exists; a NULL-terminated list
 * of alternatives, because names moved between JDK versions. */
static uint64_t hs_need(struct hs_resolve *x, int *width, const char *type, const char *field,
			const char *type2, const char *field2)
{
	uint64_t off = 0;
	if (x->rc < 0)
		return 0;
	if (vmstructs_field(x->vs, type, field, &off, width) == 0)
		return off;
	if (type2 && vmstructs_field(x->vs, type2, field2, &off, width) == 0)
		return off;
	x->rc = fs_error_set(x->err, ENOTSUP, "VMStructs has no %s::%s (or an absurd offset)", type,
			     field);
	return 0;
}

static uint64_t hs_need_static(struct hs_resolve *x, const char *type, const char *field)
{
	uint64_t addr = 0;
	if (x->rc < 0)
		return 0;
	if (vmstructs_static(x->vs, type, field, &addr) == 0 && hsmem_ptr_ok(addr, 4))
		return addr;
	x->rc = fs_error_set(x->err, ENOTSUP, "VMStructs has no static %s::%s", type, field);
	return 0;
}

static uint64_t hs_need_size(struct hs_resolve *x, const char *type)
{
	uint64_t size = 0;
	if (x->rc < 0)
		return 0;
	if (vmstructs_type_size(x->vs, type, &size) == 0 && size <= HS_MAX_BLOB_HEADER)
		return size;
	x->rc = fs_error_set(x->err, ENOTSUP, "VMStructs has no type %s", type);
	return 0;
}

/* *end grows to cover [off, off + width); a sum that wraps saturates (and
 * is then refused as past the header). */
static void hs_bump(uint64_t *end, uint64_t off, int width)
{
	uint64_t e;
	if (__builtin_add_overflow(off, (uint64_t)(width > 0 ? width : 8), &e))
		e = UINT64_MAX;
	if (e > *end)
		*end = e;
}

/* CodeBlob and nmethod: where the code range, frame and kind are. */
static void hs_resolve_blob(struct hs_resolve *x, struct hs_layout *l)
{
	int w = 0;
	l->cb_name_off = hs_need(x, NULL, "CodeBlob", "_name", NULL, NULL);
	l->cb_size_off = hs_need(x, NULL, "CodeBlob", "_size", NULL, NULL);
	l->cb_frame_size_off = hs_need(x, NULL, "CodeBlob", "_frame_size", NULL, NULL);
	l->cb_fco_off =
	    hs_need(x, &l->cb_fco_width, "CodeBlob", "_frame_complete_offset", NULL, NULL);
	if (x->rc == 0 &&
	    vmstructs_field(x->vs, "CodeBlob", "_code_begin", &l->cb_code_begin_off, NULL) == 0) {
		l->code_is_offset = 0; /* JDK 11-21: pointers */
		l->cb_code_end_off = hs_need(x, NULL, "CodeBlob", "_code_end", NULL, NULL);
	} else {
		l->code_is_offset = 1; /* JDK 23+: offsets from the blob */
		l->cb_code_begin_off = hs_need(x, NULL, "CodeBlob", "_code_offset", NULL, NULL);
		l->cb_code_end_off = hs_need(x, NULL, "CodeBlob", "_data_offset", NULL, NULL);
	}
	if (x->rc == 0 && vmstructs_field(x->vs, "CodeBlob", "_kind", &l->cb_kind_off, &w) == 0 &&
	    (w == 1 || w == 2 || w == 4) &&
	    vmstructs_constant(x->vs, "CodeBlobKind::Nmethod", &l->kind_nmethod) == 0)
		l->cb_kind_width = w;
	l->nm_method_off = hs_need(x, NULL, "nmethod", "_method", "CompiledMethod", "_method");
	l->nm_comp_level_off =
	    hs_need(x, &l->nm_comp_level_width, "nmethod", "_comp_level", NULL, NULL);
	/* optional: what tells a new nmethod at the same address from the old */
	int cw = 0;
	if (x->rc == 0 &&
	    (vmstructs_field(x->vs, "nmethod", "_compile_id", &l->nm_compile_id_off, &cw) < 0 ||
	     (cw != 0 && cw != 4)))
		l->nm_compile_id_off = 0;
	if (x->rc < 0)
		return;
	if (l->cb_fco_width != 2 && l->cb_fco_width != 4)
		l->cb_fco_width = 4;
	if (l->nm_comp_level_width != 1 && l->nm_comp_level_width != 4)
		l->nm_comp_level_width = 4;
	uint64_t end = 0;
	hs_bump(&end, l->cb_name_off, 8);
	hs_bump(&end, l->cb_size_off, 4);
	hs_bump(&end, l->cb_frame_size_off, 4);
	hs_bump(&end, l->cb_fco_off, l->cb_fco_width);
	hs_bump(&end, l->cb_code_begin_off, l->code_is_offset ? 4 : 8);
	hs_bump(&end, l->cb_code_end_off, l->code_is_offset ? 4 : 8);
	if (l->cb_kind_width)
		hs_bump(&end, l->cb_kind_off, l->cb_kind_width);
	hs_bump(&end, l->nm_method_off, 8);
	hs_bump(&end, l->nm_comp_level_off, l->nm_comp_level_width);
	if (l->nm_compile_id_off)
		hs_bump(&end, l->nm_compile_id_off, 4);
	if (end > HS_MAX_BLOB_HEADER)
		x->rc = fs_error_set(x->err, ENOTSUP, "nmethod fields beyond %d bytes",
				     HS_MAX_BLOB_HEADER);
	l->blob_read = end;
}

/* The nmethod debug info, optional: without it nmethods are named by their
 * outer method only. */
static void hs_resolve_scopes(const struct vmstructs *vs, struct hs_layout *l)
{
	uint64_t end = 0;
	int ok =
	    vmstructs_type_size(vs, "PcDesc", &l->pcdesc_size) == 0 &&
	    vmstructs_field(vs, "PcDesc", "_pc_offset", &l->pcd_pc_off, NULL) == 0 &&
	    vmstructs_field(vs, "PcDesc", "_scope_decode_offset", &l->pcd_decode_off, NULL) == 0 &&
	    vmstructs_field(vs, "nmethod", "_scopes_pcs_offset", &l->nm_pcs_off, NULL) == 0;
	if (!ok || l->pcdesc_size < 8 || l->pcdesc_size > 64 ||
	    !hs_fits(l->pcd_pc_off, 4, l->pcdesc_size) ||
	    !hs_fits(l->pcd_decode_off, 4, l->pcdesc_size))
		return;
	if (vmstructs_field(vs, "nmethod", "_immutable_data", &l->nm_imm_off, NULL) == 0 &&
	    vmstructs_field(vs, "nmethod", "_immutable_data_size", &l->nm_imm_size_off, NULL) ==
		0 &&
	    vmstructs_field(vs, "nmethod", "_scopes_data_offset", &l->nm_data_off, NULL) == 0 &&
	    vmstructs_field(vs, "CodeBlob", "_mutable_data", &l->cb_mut_off, NULL) == 0 &&
	    vmstructs_field(vs, "CodeBlob", "_mutable_data_size", &l->cb_mut_size_off, NULL) == 0 &&
	    vmstructs_field(vs, "CodeBlob", "_relocation_size", &l->cb_reloc_size_off, NULL) == 0) {
		l->dbg_style = 2;
		hs_bump(&end, l->nm_imm_off, 8);
		hs_bump(&end, l->nm_imm_size_off, 4);
		hs_bump(&end, l->nm_data_off, 4);
		hs_bump(&end, l->cb_mut_off, 8);
		hs_bump(&end, l->cb_mut_size_off, 4);
		hs_bump(&end, l->cb_reloc_size_off, 4);
	} else if (vmstructs_field(vs, "nmethod", "_metadata_offset", &l->nm_meta_off, NULL) == 0 &&
		   vmstructs_field(vs, "nmethod", "_dependencies_offset", &l->nm_deps_off, NULL) ==
		       0 &&
		   (vmstructs_field(vs, "CompiledMethod", "_scopes_data_begin", &l->nm_data_off,
				    NULL) == 0 ||
		    vmstructs_field(vs, "nmethod", "_scopes_data_begin", &l->nm_data_off, NULL) ==
			0)) {
		l->dbg_style = 1;
		hs_bump(&end, l->nm_meta_off, 4);
		hs_bump(&end, l->nm_deps_off, 4);
		hs_bump(&end, l->nm_data_off, 8);
	} else {
		return;
	}
	hs_bump(&end, l->nm_pcs_off, 4);
	if (end > HS_MAX_BLOB_HEADER) {
		l->dbg_style = 0;
		return;
	}
	l->dbg_read = end;
}

static void hs_resolve(struct hs_resolve *x, struct hs_layout *l)
{
	l->heaps_var = hs_need_static(x, "CodeCache", "_heaps");
	l->ga_len_off =
	    hs_need(x, NULL, "GrowableArrayBase", "_len", "GenericGrowableArray", "_len");
	l->ga_data_off = hs_need(x, NULL, "GrowableArray<int>", "_data", NULL, NULL);
	l->heap_memory_off = hs_need(x, NULL, "CodeHeap", "_memory", NULL, NULL);
	l->heap_segmap_off = hs_need(x, NULL, "CodeHeap", "_segmap", NULL, NULL);
	l->heap_log2_off = hs_need(x, NULL, "CodeHeap", "_log2_segment_size", NULL, NULL);
	l->vs_low_off = hs_need(x, NULL, "VirtualSpace", "_low", NULL, NULL);
	l->vs_high_off = hs_need(x, NULL, "VirtualSpace", "_high", NULL, NULL);
	l->vs_low_bnd_off = hs_need(x, NULL, "VirtualSpace", "_low_boundary", NULL, NULL);
	l->vs_high_bnd_off = hs_need(x, NULL, "VirtualSpace", "_high_boundary", NULL, NULL);
	l->hb_size = hs_need_size(x, "HeapBlock");
	uint64_t hdr = hs_need(x, NULL, "HeapBlock", "_header", NULL, NULL);
	uint64_t used = hs_need(x, NULL, "HeapBlock::Header", "_used", NULL, NULL);
	uint64_t length = hs_need(x, &l->hb_len_width, "HeapBlock::Header", "_length", NULL, NULL);
	if (__builtin_add_overflow(hdr, used, &l->hb_used_off) ||
	    __builtin_add_overflow(hdr, length, &l->hb_len_off))
		l->hb_used_off = l->hb_len_off = UINT64_MAX; /* refused below */
	hs_resolve_blob(x, l);
	l->m_const_off = hs_need(x, NULL, "Method", "_constMethod", NULL, NULL);
	l->cm_constants_off = hs_need(x, NULL, "ConstMethod", "_constants", NULL, NULL);
	l->cm_name_index_off = hs_need(x, NULL, "ConstMethod", "_name_index", NULL, NULL);
	l->cp_holder_off = hs_need(x, NULL, "ConstantPool", "_pool_holder", NULL, NULL);
	l->cp_size = hs_need_size(x, "ConstantPool");
	l->k_name_off = hs_need(x, NULL, "Klass", "_name", NULL, NULL);
	l->sym_len_off = hs_need(x, NULL, "Symbol", "_length", NULL, NULL);
	l->sym_body_off = hs_need(x, NULL, "Symbol", "_body[0]", "Symbol", "_body");
	if (x->rc == 0)
		hs_resolve_scopes(x->vs, l);
	if (x->rc == 0 &&
	    (vmstructs_type_size(x->vs, "ConstMethod", &l->cm_size) < 0 ||
	     vmstructs_field(x->vs, "ConstMethod", "_code_size", &l->cm_code_size_off, NULL) < 0 ||
	     l->cm_size > 4096))
		l->cm_size = 0;
	if (x->rc == 0 && l->hb_len_width != 4 && l->hb_len_width != 8)
		l->hb_len_width = 8;
	if (x->rc == 0 && (!hs_fits(l->hb_used_off, 1, l->hb_size) ||
			   !hs_fits(l->hb_len_off, (uint64_t)l->hb_len_width, l->hb_size)))
		x->rc = fs_error_set(x->err, ENOTSUP, "HeapBlock::_used outside HeapBlock");
}

/* The interpreter's code: AbstractInterpreter::_code (a StubQueue*),
 * [_stub_buffer, _stub_buffer + _buffer_limit). Left 0 when not readable
 * (yet); hotspot_find_blob tries again. */
static void hs_read_interpreter(struct hotspot *hs)
{
	uint64_t code_var, queue, buf, limit, off_buf, off_lim;
	if (vmstructs_static(hs->vs, "AbstractInterpreter", "_code", &code_var) < 0 ||
	    vmstructs_field(hs->vs, "StubQueue", "_stub_buffer", &off_buf, NULL) < 0 ||
	    vmstructs_field(hs->vs, "StubQueue", "_buffer_limit", &off_lim, NULL) < 0)
		return;
	if (hsmem_read_u64(&hs->r, code_var, &queue) < 0 || !hsmem_ptr_ok(queue, 8) ||
	    hsmem_read_u64(&hs->r, queue + off_buf, &buf) < 0 ||
	    hsmem_read_uint(&hs->r, queue + off_lim, 4, &limit) < 0)
		return;
	if (!hsmem_ptr_ok(buf, 8) || limit == 0 || limit > (1u << 30) || (int32_t)limit < 0)
		return;
	hs->interp_begin = buf;
	hs->interp_end = buf + limit;
}

static int hs_read_version(struct hotspot *hs)
{
	uint64_t addr, v;
	if (vmstructs_static(hs->vs, "Abstract_VM_Version", "_vm_major_version", &addr) < 0 &&
	    vmstructs_static(hs->vs, "VM_Version", "_vm_major_version", &addr) < 0)
		return 0;
	if (hsmem_read_uint(&hs->r, addr, 4, &v) < 0 || v > 1000)
		return 0;
	return (int)v;
}

/* Where the heap counts its collections, and says one is in progress:
 * classes are unloaded (and their metadata freed) only in a collection, or
 * after one began (hsmethod.c). The flag is _is_stw_gc_active from JDK 21. */
static void hs_find_epoch(struct hotspot *hs)
{
	uint64_t universe, heap, off, aoff;
	if (vmstructs_static(hs->vs, "Universe", "_collectedHeap", &universe) < 0 ||
	    vmstructs_field(hs->vs, "CollectedHeap", "_total_collections", &off, NULL) < 0 ||
	    (vmstructs_field(hs->vs, "CollectedHeap", "_is_gc_active", &aoff, NULL) < 0 &&
	     vmstructs_field(hs->vs, "CollectedHeap", "_is_stw_gc_active", &aoff, NULL) < 0) ||
	    !hs_fits(off, 4, HS_MAX_FIELD_OFFSET + 4) ||
	    !hs_fits(aoff, 1, HS_MAX_FIELD_OFFSET + 1) ||
	    hsmem_read_u64(&hs->r, universe, &heap) < 0 || !hsmem_ptr_ok(heap, 8))
		return;
	hs->epoch_addr = heap + off;
	hs->gc_active_addr = heap + aoff;
}

int hotspot_open_reader(const struct hs_reader *r, const struct hs_syms *syms, struct hotspot **out,
			struct fs_error *err)
{
	struct hotspot *hs = calloc(1, sizeof(*hs));
	if (!hs)
		return fs_error_set(err, ENOMEM, "allocating a HotSpot reader");
	hs->r = *r;
	hs->r.counts = &hs->reads;
	int rc = vmstructs_read(&hs->r, syms, &hs->vs, err);
	if (rc == 0) {
		struct hs_resolve x = {.vs = hs->vs, .err = err, .rc = 0};
		hs_resolve(&x, &hs->l);
		rc = x.rc;
	}
	if (rc == 0) {
		hs->major = hs_read_version(hs);
		hs_read_interpreter(hs);
		hs_find_epoch(hs);
		rc = codecache_read_heaps(hs);
		if (rc < 0)
			fs_error_set(err, -rc, "reading CodeCache::_heaps");
	}
	/* the caches are allocated after the heaps were read: a failure there
	 * leaves them NULL, which hotspot_close handles */
	if (rc == 0) {
		hs->mcache = calloc(HS_METHOD_CACHE_SIZE, sizeof(*hs->mcache));
		hs->bcache = calloc(HS_BLOB_CACHE_SIZE, sizeof(*hs->bcache));
		hs->kcache = calloc(HS_KLASS_CACHE_SIZE, sizeof(*hs->kcache));
		hs->blob_ttl_ms = HS_BLOB_CACHE_TTL_MS;
		if (!hs->mcache || !hs->bcache || !hs->kcache)
			rc = fs_error_set(err, ENOMEM, "allocating the method cache");
	}
	if (rc < 0) {
		hotspot_close(hs);
		return rc;
	}
	*out = hs;
	return 0;
}

int hotspot_open_checked(pid_t pid, uint64_t start_time, struct hotspot **out, struct fs_error *err)
{
	struct hs_syms syms;
	uint64_t lo, hi;
	/* Pinned first: every read after this one is of this very process. */
	if (!start_time && proc_start_time(pid, &start_time, err) < 0)
		return -ESRCH;
	struct hs_proc *p = malloc(sizeof(*p));
	if (!p)
		return fs_error_set(err, ENOMEM, "pid %d", (int)pid);
	p->pid = pid;
	p->pidfd = proc_pidfd_open_checked(pid, start_time, err);
	if (p->pidfd < 0) {
		free(p);
		return -ESRCH;
	}
	int rc = libjvm_find_syms(pid, &syms, &lo, &hi, err);
	struct hs_reader r = {.read = hsmem_read_pid, .ctx = p};
	if (rc == 0)
		rc = hotspot_open_reader(&r, &syms, out, err);
	if (rc == 0 && (rc = proc_pidfd_recheck(p->pidfd, pid, start_time, err)) < 0)
		hotspot_close(*out); /* libjvm.so was found by pid: of another? */
	if (rc < 0) {
		close(p->pidfd);
		free(p);
		if (rc == -EPERM || rc == -ESRCH)
			fs_error_set(err, -rc, "reading the memory of pid %d", (int)pid);
		fs_error_wrap(err, "pid %d", (int)pid);
		return rc;
	}
	(*out)->pid = pid;
	(*out)->proc = p;
	return 0;
}

int hotspot_open(pid_t pid, struct hotspot **out, struct fs_error *err)
{
	return hotspot_open_checked(pid, 0, out, err);
}

int hotspot_pidfd(const struct hotspot *hs)
{
	return hs->proc ? hs->proc->pidfd : -1;
}

void hotspot_close(struct hotspot *hs)
{
	if (!hs)
		return;
	if (hs->mcache) {
		for (size_t i = 0; i < HS_METHOD_CACHE_SIZE; i++)
			free(hs->mcache[i].name);
		free(hs->mcache);
	}
	free(hs->bcache);
	free(hs->scache);
	if (hs->kcache) {
		for (size_t i = 0; i < HS_KLASS_CACHE_SIZE; i++)
			free(hs->kcache[i].name);
		free(hs->kcache);
	}
	hsscopes_forget(hs);
	vmstructs_free(hs->vs);
	if (hs->proc) {
		close(hs->proc->pidfd);
		free(hs->proc);
	}
	free(hs);
}

int hotspot_major_version(const struct hotspot *hs)
{
	return hs->major;
}

void hotspot_frame_layout(const struct hotspot *hs, struct hotspot_frame_layout *out)
{
	out->interp_method_off = HS_X86_INTERP_METHOD * HS_WORD;
	out->interp_sender_sp_off = HS_X86_INTERP_SENDER_SP * HS_WORD;
	out->interp_bcp_off = HS_X86_INTERP_BCP * HS_WORD;
	out->saved_fp_off = HS_X86_LINK * HS_WORD;
	out->return_addr_off = HS_X86_RETURN_ADDR * HS_WORD;
}

void hotspot_read_counts(const struct hotspot *hs, uint64_t *calls, uint64_t *bytes)
{
	*calls = hs->reads.calls;
	*bytes = hs->reads.bytes;
}

int hotspot_read(struct hotspot *hs, uint64_t addr, void *buf, size_t len)
{
	return hsmem_read(&hs->r, addr, buf, len);
}
