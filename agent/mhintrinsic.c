/* mhintrinsic.c - name a method handle intrinsic by its nmethod's Method
 * (contract in mhintrinsic.h). The JVM's VMStructs tables are found with
 * dlsym in the process the agent lives in; memory is read with
 * process_vm_readv on ourselves, which fails with EFAULT instead of faulting. */
#include "mhintrinsic.h"
#include "selfmem.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* How far before its code an nmethod header may start: the header plus the
 * relocations and constants of a native wrapper (a few hundred bytes). */
#define MH_SCAN_BACK   4096
#define MH_MAX_BLOB    (1u << 20)
#define MH_MAX_ENTRIES 20000 /* VMStructs entries walked (JDK 25: ~1,500) */

struct mh_layout {
	int ok;					/* 1 resolved, -1 unusable */
	int code_is_offset;			/* JDK 23+: CodeBlob::_code_offset (int) */
	uint64_t cb_code, cb_size;		/* CodeBlob::_code_begin|_code_offset, _size */
	uint64_t nm_method;			/* nmethod|CompiledMethod::_method */
	uint64_t m_const;			/* Method::_constMethod */
	uint64_t cm_constants, cm_name, cm_sig; /* ConstMethod::... (cm_sig 0: none) */
	int has_sig;
	uint64_t cp_size;	    /* sizeof(ConstantPool): slots follow it */
	uint64_t sym_len, sym_body; /* Symbol::_length (u2), _body */
};

static struct mh_layout layout;
static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;

static int mh_u64(uint64_t addr, uint64_t *v)
{
	return selfmem_read(addr, v, sizeof(*v));
}

static uint64_t sym_u64(const char *name, int *fail)
{
	const uint64_t *p = dlsym(RTLD_DEFAULT, name);
	if (!p) {
		*fail = 1;
		return 0;
	}
	return *p;
}

/* The C string at a VMStructs entry field: entries are the JVM's own static
 * tables, so the pointers are read directly. */
static const char *entry_str(const char *e, uint64_t off)
{
	const char *s;
	memcpy(&s, e + off, sizeof(s));
	return s;
}

static int field(const char *type, const char *name, uint64_t *off)
{
	int fail = 0;
	const char *const *tab = dlsym(RTLD_DEFAULT, "gHotSpotVMStructs");
	uint64_t t_off = sym_u64("gHotSpotVMStructEntryTypeNameOffset", &fail);
	uint64_t f_off = sym_u64("gHotSpotVMStructEntryFieldNameOffset", &fail);
	uint64_t o_off = sym_u64("gHotSpotVMStructEntryOffsetOffset", &fail);
	uint64_t stride = sym_u64("gHotSpotVMStructEntryArrayStride", &fail);
	if (fail || !tab || !*tab || stride == 0 || stride > 256)
		return -ENOENT;
	const char *e = *tab;
	for (int i = 0; i < MH_MAX_ENTRIES; i++, e += stride) {
		const char *t = entry_str(e, t_off);
		if (!t)
			break;
		const char *f = entry_str(e, f_off);
		if (f && strcmp(t, type) == 0 && strcmp(f, name) == 0) {
			memcpy(off, e + o_off, sizeof(*off));
			return 0;
		}
	}
	return -ENOENT;
}

static int type_size(const char *type, uint64_t *size)
{
	int fail = 0;
	const char *const *tab = dlsym(RTLD_DEFAULT, "gHotSpotVMTypes");
	uint64_t t_off = sym_u64("gHotSpotVMTypeEntryTypeNameOffset", &fail);
	uint64_t s_off = sym_u64("gHotSpotVMTypeEntrySizeOffset", &fail);
	uint64_t stride = sym_u64("gHotSpotVMTypeEntryArrayStride", &fail);
	if (fail || !tab || !*tab || stride == 0 || stride > 256)
		return -ENOENT;
	const char *e = *tab;
	for (int i = 0; i < MH_MAX_ENTRIES; i++, e += stride) {
		const char *t = entry_str(e, t_off);
		if (!t)
			break;
		if (strcmp(t, type) == 0) {
			memcpy(size, e + s_off, sizeof(*size));
			return 0;
		}
	}
	return -ENOENT;
}

static int layout_resolve(struct mh_layout *l)
{
	int r = 0;
	if (field("CodeBlob", "_code_begin", &l->cb_code) < 0) {
		l->code_is_offset = 1; /* JDK 23+: offsets from the blob */
		r |= field("CodeBlob", "_code_offset", &l->cb_code);
	}
	r |= field("CodeBlob", "_size", &l->cb_size);
	if (field("nmethod", "_method", &l->nm_method) < 0)
		r |= field("CompiledMethod", "_method", &l->nm_method); /* JDK 11-21 */
	r |= field("Method", "_constMethod", &l->m_const);
	r |= field("ConstMethod", "_constants", &l->cm_constants);
	r |= field("ConstMethod", "_name_index", &l->cm_name);
	l->has_sig = field("ConstMethod", "_signature_index", &l->cm_sig) == 0;
	r |= type_size("ConstantPool", &l->cp_size);
	r |= field("Symbol", "_length", &l->sym_len);
	if (field("Symbol", "_body[0]", &l->sym_body) < 0)
		r |= field("Symbol", "_body", &l->sym_body);
	if (r || l->cb_code > 512 || l->cb_size > 512 || l->nm_method > 512 || l->cp_size > 4096)
		return -ENOTSUP;
	return 0;
}

static const struct mh_layout *layout_get(void)
{
	pthread_mutex_lock(&layout_lock);
	if (!layout.ok)
		layout.ok = layout_resolve(&layout) == 0 ? 1 : -1;
	pthread_mutex_unlock(&layout_lock);
	return layout.ok == 1 ? &layout : NULL;
}

/* The symbol at constant pool slot idx, as a C string in out. */
static int cp_symbol(const struct mh_layout *l, uint64_t cp, uint16_t idx, char *out, size_t len)
{
	uint64_t sym = 0;
	uint16_t n = 0;
	if (len == 0 || idx == 0 || mh_u64(cp + l->cp_size + (uint64_t)idx * 8, &sym) < 0 ||
	    selfmem_read(sym + l->sym_len, &n, sizeof(n)) < 0 || n >= len)
		return -EFAULT;
	if (selfmem_read(sym + l->sym_body, out, n) < 0)
		return -EFAULT;
	out[n] = '\0';
	return memchr(out, '\0', n) ? -EINVAL : 0;
}

static int method_name(const struct mh_layout *l, uint64_t method, char *name, size_t name_len,
		       char *desc, size_t desc_len)
{
	uint64_t cm = 0, cp = 0;
	uint16_t ni = 0, si = 0;
	if (mh_u64(method + l->m_const, &cm) < 0 || mh_u64(cm + l->cm_constants, &cp) < 0 ||
	    selfmem_read(cm + l->cm_name, &ni, sizeof(ni)) < 0)
		return -EFAULT;
	int r = cp_symbol(l, cp, ni, name, name_len);
	if (r < 0 || !mhintrinsic_is_primitive(name))
		return r < 0 ? r : -ENOENT;
	if (desc_len)
		desc[0] = '\0';
	if (l->has_sig && selfmem_read(cm + l->cm_sig, &si, sizeof(si)) == 0 &&
	    cp_symbol(l, cp, si, desc, desc_len) < 0 && desc_len)
		desc[0] = '\0';
	return 0;
}

/* Is h the header of the blob whose code is [code, code + size)? */
static bool blob_at(const struct mh_layout *l, uint64_t h, uint64_t code, uint64_t size)
{
	int32_t bsize = 0;
	if (l->code_is_offset) {
		int32_t off = 0;
		if (selfmem_read(h + l->cb_code, &off, sizeof(off)) < 0 ||
		    (uint64_t)(int64_t)off != code - h)
			return false;
	} else {
		uint64_t begin = 0;
		if (mh_u64(h + l->cb_code, &begin) < 0 || begin != code)
			return false;
	}
	return selfmem_read(h + l->cb_size, &bsize, sizeof(bsize)) == 0 && bsize > 0 &&
	       (uint64_t)bsize <= MH_MAX_BLOB && code + size <= h + (uint64_t)bsize;
}

bool mhintrinsic_is_primitive(const char *m)
{
	static const char *const names[] = {"invokeBasic",   "linkToStatic",	"linkToSpecial",
					    "linkToVirtual", "linkToInterface", "linkToNative"};
	for (size_t i = 0; m && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(m, names[i]) == 0)
			return true;
	return false;
}

int mhintrinsic_name(const void *code_addr, size_t code_size, char *name, size_t name_len,
		     char *desc, size_t desc_len)
{
	const struct mh_layout *l = layout_get();
	uint64_t code = (uint64_t)(uintptr_t)code_addr;
	if (!l)
		return -ENOTSUP;
	/* Headers are 8-byte aligned and precede their code: walk back to the
	 * first candidate whose code range is ours, then trust only a Method
	 * named like an MH primitive. */
	for (uint64_t back = 8; back <= MH_SCAN_BACK && back < code; back += 8) {
		uint64_t h = (code & ~7ULL) - back;
		uint64_t method = 0;
		if (!blob_at(l, h, code, code_size))
			continue;
		if (mh_u64(h + l->nm_method, &method) < 0 || method == 0)
			return -ENOENT;
		return method_name(l, method, name, name_len, desc, desc_len);
	}
	return -ENOENT;
}
