/* vmflag.c - see vmflag.h */
#include "vmflag.h"
#include "selfmem.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int vmflag_why(char *why, size_t len, int r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int vmflag_why(char *why, size_t len, int r, const char *fmt, ...)
{
	va_list ap;
	if (len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return r;
}

static int vmflag_u64(uint64_t addr, uint64_t *v)
{
	return selfmem_read(addr, v, sizeof(*v));
}

/* The C string at the pointer stored at addr, into out (NUL-terminated).
 * 0, -ENOENT for a NULL pointer (the tables' end marker), -EFAULT, or
 * -ENAMETOOLONG past len - 1 bytes. Reads in small steps so that a string
 * near the end of a mapping is not refused. */
static int vmflag_str(uint64_t addr, char *out, size_t len)
{
	uint64_t p = 0;
	int r = vmflag_u64(addr, &p);
	if (r < 0)
		return r;
	if (!p)
		return -ENOENT;
	size_t got = 0;
	while (got + 1 < len) {
		size_t step = 16 - (size_t)((p + got) & 15); /* never across a 16-byte line */
		if (step > len - 1 - got)
			step = len - 1 - got;
		if ((r = selfmem_read(p + got, out + got, step)) < 0)
			return r;
		void *nul = memchr(out + got, '\0', step);
		if (nul)
			return 0;
		got += step;
	}
	out[len - 1] = '\0';
	return -ENAMETOOLONG;
}

static uint64_t vmflag_sym(const char *name, int *fail)
{
	const uint64_t *p = dlsym(RTLD_DEFAULT, name);
	uint64_t v = 0;
	if (!p || vmflag_u64((uint64_t)(uintptr_t)p, &v) < 0) {
		*fail = 1;
		return 0;
	}
	return v;
}

int vmflag_tables_find(struct vmflag_tables *t, char *why, size_t why_len)
{
	int fail = 0;
	memset(t, 0, sizeof(*t));
	t->structs = vmflag_sym("gHotSpotVMStructs", &fail);
	t->s_type = vmflag_sym("gHotSpotVMStructEntryTypeNameOffset", &fail);
	t->s_field = vmflag_sym("gHotSpotVMStructEntryFieldNameOffset", &fail);
	t->s_static = vmflag_sym("gHotSpotVMStructEntryIsStaticOffset", &fail);
	t->s_offset = vmflag_sym("gHotSpotVMStructEntryOffsetOffset", &fail);
	t->s_address = vmflag_sym("gHotSpotVMStructEntryAddressOffset", &fail);
	t->s_stride = vmflag_sym("gHotSpotVMStructEntryArrayStride", &fail);
	t->types = vmflag_sym("gHotSpotVMTypes", &fail);
	t->t_type = vmflag_sym("gHotSpotVMTypeEntryTypeNameOffset", &fail);
	t->t_size = vmflag_sym("gHotSpotVMTypeEntrySizeOffset", &fail);
	t->t_stride = vmflag_sym("gHotSpotVMTypeEntryArrayStride", &fail);
	if (fail || !t->structs || !t->types)
		return vmflag_why(why, why_len, -ENOENT,
				  "libjvm.so exports no VMStructs tables (gHotSpotVMStructs)");
	return 0;
}

/* Is a field at off of size len inside an entry of stride bytes? */
static bool vmflag_fits(uint64_t off, uint64_t len, uint64_t stride)
{
	return off <= stride && len <= stride - off;
}

/* The JVMFlag facts gathered from the VMStructs table. */
struct vmflag_layout {
	uint64_t flags_at, num_at; /* addresses of JVMFlag::flags and ::numFlags */
	uint64_t name_off, addr_off, size;
	int have; /* bits: 1 flags, 2 numFlags, 4 _name, 8 _addr */
};

static int vmflag_walk_structs(const struct vmflag_tables *t, struct vmflag_layout *l, char *why,
			       size_t why_len)
{
	uint64_t stride = t->s_stride;
	if (stride == 0 || stride > VMFLAG_MAX_STRIDE || !vmflag_fits(t->s_type, 8, stride) ||
	    !vmflag_fits(t->s_field, 8, stride) || !vmflag_fits(t->s_static, 4, stride) ||
	    !vmflag_fits(t->s_offset, 8, stride) || !vmflag_fits(t->s_address, 8, stride))
		return vmflag_why(why, why_len, -ENOENT,
				  "the VMStructs entry layout is implausible (stride %llu)",
				  (unsigned long long)stride);
	char type[VMFLAG_NAME_MAX], field[VMFLAG_NAME_MAX];
	for (uint64_t i = 0; i < VMFLAG_MAX_ENTRIES && l->have != 15; i++) {
		uint64_t e = t->structs + i * stride;
		int r = vmflag_str(e + t->s_type, type, sizeof(type));
		if (r == -ENOENT)
			break; /* the end marker */
		if (r < 0 && r != -ENAMETOOLONG)
			return vmflag_why(why, why_len, -ENOENT,
					  "VMStructs entry %llu cannot be read",
					  (unsigned long long)i);
		/* "Flag" before JDK 11 (JDK-8203188 renamed it) */
		if (r < 0 || (strcmp(type, "JVMFlag") != 0 && strcmp(type, "Flag") != 0) ||
		    vmflag_str(e + t->s_field, field, sizeof(field)) < 0)
			continue;
		int32_t is_static = 0;
		uint64_t v = 0;
		if (selfmem_read(e + t->s_static, &is_static, sizeof(is_static)) < 0 ||
		    vmflag_u64(e + (is_static ? t->s_address : t->s_offset), &v) < 0)
			continue;
		if (is_static && strcmp(field, "flags") == 0) {
			l->flags_at = v;
			l->have |= 1;
		} else if (is_static && strcmp(field, "numFlags") == 0) {
			l->num_at = v;
			l->have |= 2;
		} else if (!is_static && strcmp(field, "_name") == 0) {
			l->name_off = v;
			l->have |= 4;
		} else if (!is_static && strcmp(field, "_addr") == 0) {
			l->addr_off = v;
			l->have |= 8;
		}
	}
	if (l->have != 15)
		return vmflag_why(why, why_len, -ENOENT,
				  "VMStructs has no JVMFlag::flags, numFlags, _name and _addr");
	return 0;
}

static int vmflag_type_size(const struct vmflag_tables *t, const char *name, uint64_t *size)
{
	uint64_t stride = t->t_stride;
	char type[VMFLAG_NAME_MAX];
	if (stride == 0 || stride > VMFLAG_MAX_STRIDE || !vmflag_fits(t->t_type, 8, stride) ||
	    !vmflag_fits(t->t_size, 8, stride))
		return -ENOENT;
	for (uint64_t i = 0; i < VMFLAG_MAX_ENTRIES; i++) {
		uint64_t e = t->types + i * stride;
		int r = vmflag_str(e + t->t_type, type, sizeof(type));
		if (r == -ENOENT || (r < 0 && r != -ENAMETOOLONG))
			return -ENOENT;
		if (r == 0 && strcmp(type, name) == 0)
			return vmflag_u64(e + t->t_size, size) < 0 ? -ENOENT : 0;
	}
	return -ENOENT;
}

int vmflag_find(const struct vmflag_tables *t, const char *name, struct vmflag *f, char *why,
		size_t why_len)
{
	struct vmflag_layout l = {0};
	int r = vmflag_walk_structs(t, &l, why, why_len);
	if (r < 0)
		return r;
	if (vmflag_type_size(t, "JVMFlag", &l.size) < 0 && vmflag_type_size(t, "Flag", &l.size) < 0)
		return vmflag_why(why, why_len, -ENOENT, "VMTypes has no JVMFlag");
	if (l.size < 16 || l.size > VMFLAG_MAX_STRIDE || !vmflag_fits(l.name_off, 8, l.size) ||
	    !vmflag_fits(l.addr_off, 8, l.size))
		return vmflag_why(why, why_len, -ENOENT,
				  "implausible JVMFlag layout (size %llu, _name at %llu, _addr "
				  "at %llu)",
				  (unsigned long long)l.size, (unsigned long long)l.name_off,
				  (unsigned long long)l.addr_off);
	uint64_t table = 0, n = 0;
	if (vmflag_u64(l.flags_at, &table) < 0 || vmflag_u64(l.num_at, &n) < 0 || !table)
		return vmflag_why(why, why_len, -ENOENT, "JVMFlag::flags cannot be read");
	if (n == 0 || n > VMFLAG_MAX_FLAGS)
		return vmflag_why(why, why_len, -ENOENT, "implausible JVMFlag::numFlags %llu",
				  (unsigned long long)n);
	char fname[VMFLAG_NAME_MAX];
	for (uint64_t i = 0; i < n; i++) {
		uint64_t e = table + i * l.size;
		r = vmflag_str(e + l.name_off, fname, sizeof(fname));
		if (r == -ENOENT)
			break; /* JDK 17's table ends with an empty entry */
		if (r == -EFAULT)
			return vmflag_why(why, why_len, -ENOENT,
					  "flag %llu of the JVMFlag table cannot be read",
					  (unsigned long long)i);
		if (r < 0 || strcmp(fname, name) != 0)
			continue;
		uint64_t addr = 0;
		uint8_t v = 0;
		if (vmflag_u64(e + l.addr_off, &addr) < 0 || selfmem_read(addr, &v, 1) < 0)
			return vmflag_why(why, why_len, -ENOENT, "the value of %s cannot be read",
					  name);
		if (v > 1)
			return vmflag_why(why, why_len, -EINVAL,
					  "%s holds %u: not a bool, left alone", name, v);
		f->addr = addr;
		f->value = v;
		return 0;
	}
	return vmflag_why(why, why_len, -ENOENT, "no flag %s in the JVMFlag table", name);
}

int vmflag_set(struct vmflag *f, bool value)
{
	uint8_t v = value ? 1 : 0, back = 2;
	struct iovec local = {.iov_base = &v, .iov_len = 1};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)f->addr, .iov_len = 1};
	if (f->addr < 4096)
		return -EFAULT;
	long n = syscall(SYS_process_vm_writev, (long)getpid(), &local, 1L, &remote, 1L, 0L);
	if (n < 0)
		return -errno;
	if (n != 1 || selfmem_read(f->addr, &back, 1) < 0 || back != v)
		return -EFAULT;
	f->value = value;
	return 0;
}
