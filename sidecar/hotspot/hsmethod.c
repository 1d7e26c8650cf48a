/* hsmethod.c - a Method* as "pkg.Class.method", the way our agent names a
 * frame in dotted mode (agent/agentmap.c: the class signature with '/'
 * turned into '.', then '.', then the method name).
 *
 *   Method::_constMethod -> ConstMethod::_constants (ConstantPool*)
 *                           ConstMethod::_name_index (u2)
 *   ConstantPool::_pool_holder -> Klass::_name (Symbol*)
 *   the method's name: the Symbol* in the constant pool slot _name_index,
 *   right after the ConstantPool header (sizeof(ConstantPool) + i * 8)
 *   Symbol: _length (u2), then the bytes at _body (modified UTF-8)
 *
 * A hidden class's Symbol says "Foo+0x..." where JVMTI (and so the agent)
 * says "Foo.0x...": the last '+' becomes '.'. Names are cached per Method*
 * in a direct-mapped table; a Method* freed by class unloading and reused
 * keeps its old name until its slot is taken (a wrong name, never a fault). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_int.h"

#define HSM_MAX_CP_INDEX 65535

/* The bytes of a Symbol into buf (NUL-terminated): 0 or -errno/-EINVAL. */
static int hsm_symbol(struct hotspot *hs, uint64_t sym, char *buf, size_t len, size_t *outlen)
{
	const struct hs_layout *l = &hs->l;
	uint64_t n;
	if (!hsmem_ptr_ok(sym, 4))
		return -EINVAL;
	int rc = hsmem_read_uint(&hs->r, sym + l->sym_len_off, 2, &n);
	if (rc < 0)
		return rc;
	if (n == 0 || n >= len || n > HS_MAX_SYMBOL)
		return -EINVAL;
	rc = hsmem_read(&hs->r, sym + l->sym_body_off, buf, (size_t)n);
	if (rc < 0)
		return rc;
	buf[n] = '\0';
	if (memchr(buf, '\0', (size_t)n))
		return -EINVAL;
	*outlen = (size_t)n;
	return 0;
}

/* Read the pieces of a name; 1 named, 0 not a Method*, -errno. */
static int hsm_read_name(struct hotspot *hs, uint64_t method, char *out, size_t outlen)
{
	const struct hs_layout *l = &hs->l;
	uint64_t cm, cp, holder, kname, nidx, msym;
	int rc;
	if (!hsmem_ptr_ok(method, 8))
		return 0;
	if ((rc = hsmem_read_u64(&hs->r, method + l->m_const_off, &cm)) < 0)
		return rc == -EFAULT ? 0 : rc;
	if (!hsmem_ptr_ok(cm, 8))
		return 0;
	if ((rc = hsmem_read_u64(&hs->r, cm + l->cm_constants_off, &cp)) < 0 ||
	    (rc = hsmem_read_uint(&hs->r, cm + l->cm_name_index_off, 2, &nidx)) < 0)
		return rc == -EFAULT ? 0 : rc;
	if (!hsmem_ptr_ok(cp, 8) || nidx == 0 || nidx > HSM_MAX_CP_INDEX)
		return 0;
	if ((rc = hsmem_read_u64(&hs->r, cp + l->cp_holder_off, &holder)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, cp + l->cp_size + nidx * 8, &msym)) < 0)
		return rc == -EFAULT ? 0 : rc;
	if (!hsmem_ptr_ok(holder, 8))
		return 0;
	if ((rc = hsmem_read_u64(&hs->r, holder + l->k_name_off, &kname)) < 0)
		return rc == -EFAULT ? 0 : rc;
	char *cls = hs->namebuf, *meth = hs->namebuf + HS_MAX_SYMBOL + 1;
	size_t clen, mlen;
	if ((rc = hsm_symbol(hs, kname, cls, HS_MAX_SYMBOL + 1, &clen)) < 0 ||
	    (rc = hsm_symbol(hs, msym, meth, HS_MAX_SYMBOL + 1, &mlen)) < 0)
		return rc == -EFAULT || rc == -EINVAL ? 0 : rc;
	char *plus = strrchr(cls, '+');
	if (plus)
		*plus = '.';
	for (char *p = cls; *p; p++)
		if (*p == '/')
			*p = '.';
	if (outlen < 2)
		return 0;
	size_t n = clen < outlen - 1 ? clen : outlen - 1;
	memcpy(out, cls, n);
	if (n < outlen - 1)
		out[n++] = '.';
	size_t m = mlen < outlen - 1 - n ? mlen : outlen - 1 - n;
	memcpy(out + n, meth, m);
	out[n + m] = '\0';
	return 1;
}

int hotspot_method_name(struct hotspot *hs, uint64_t method, char *buf, size_t len)
{
	if (len == 0)
		return 0;
	size_t slot = (size_t)((method >> 3) * 0x9E3779B97F4A7C15ull >> 52) % HS_METHOD_CACHE_SIZE;
	struct hs_method_slot *s = &hs->mcache[slot];
	if (method && s->method == method && s->name) {
		size_t n = strlen(s->name);
		if (n >= len)
			n = len - 1;
		memcpy(buf, s->name, n);
		buf[n] = '\0';
		return 1;
	}
	char name[2 * HS_MAX_SYMBOL + 2];
	int rc = hsm_read_name(hs, method, name, sizeof(name));
	if (rc <= 0) {
		buf[0] = '\0';
		return rc;
	}
	char *copy = strdup(name);
	if (copy) {
		free(s->name);
		s->name = copy;
		s->method = method;
	}
	size_t n = strlen(name);
	if (n >= len)
		n = len - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return 1;
}
