/* hsmem.c - the bounded reader of the target's memory: see hotspot_int.h */
#include <errno.h>
#include <string.h>

#include "hotspot_int.h"
#include "procmem.h"

#define HS_PAGE 4096u

int hsmem_read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct hs_proc *p = ctx;
	return procmem_read(p->pid, p->pidfd, addr, buf, len);
}

int hsmem_ptr_ok(uint64_t p, uint64_t align)
{
	return p >= HS_PAGE && p < HS_USER_TOP && (p & (align - 1)) == 0;
}

int hsmem_read(const struct hs_reader *r, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (len > HS_MAX_READ)
		return -E2BIG;
	if (addr < HS_PAGE || addr >= HS_USER_TOP || len > HS_USER_TOP - addr)
		return -EFAULT;
	if (r->counts) {
		r->counts->calls++;
		r->counts->bytes += len;
	}
	return r->read(r->ctx, addr, buf, len);
}

int hsmem_read_u64(const struct hs_reader *r, uint64_t addr, uint64_t *v)
{
	return hsmem_read(r, addr, v, sizeof(*v));
}

int hsmem_read_uint(const struct hs_reader *r, uint64_t addr, int width, uint64_t *v)
{
	uint8_t b[8] = {0};
	if (width != 1 && width != 2 && width != 4 && width != 8)
		return -EINVAL;
	int rc = hsmem_read(r, addr, b, (size_t)width);
	if (rc < 0)
		return rc;
	uint64_t x = 0;
	for (int i = width - 1; i >= 0; i--) /* x86_64: little-endian */
		x = (x << 8) | b[i];
	*v = x;
	return 0;
}

int hsmem_read_cstr(const struct hs_reader *r, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0;
	if (max == 0)
		return -EINVAL;
	/* Page by page: a short string at the end of a mapping must not fail
	 * because we asked for bytes past it. */
	while (got < max - 1) {
		uint64_t a = addr + got;
		size_t chunk = HS_PAGE - (size_t)(a & (HS_PAGE - 1));
		if (chunk > max - 1 - got)
			chunk = max - 1 - got;
		int rc = hsmem_read(r, a, buf + got, chunk);
		if (rc < 0)
			return rc;
		char *nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return 0;
		got += chunk;
	}
	buf[max - 1] = '\0';
	return -ENAMETOOLONG;
}
