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
 * in a direct-mapped table, and class names per Klass*; but class unloading
 * frees both, and metaspace reuses the addresses for the next class loaded
 * (a class defined again in a new loader, a reflection accessor, a
 * lambda's hidden class). Classes are unloaded only by a collection (a
 * full one, or a concurrent cycle that a young one starts), so a hit is
 * trusted while the heap's collection count (CollectedHeap::
 * _total_collections, read at most every HS_EPOCH_MS) is the one it was
 * read in; after a collection, or where the count is not exported, the
 * name is read again (the same Method* and ConstMethod* may now be another
 * class's method of the same shape: a reflection accessor defined again),
 * a class name only when its Klass* no longer points at the name Symbol*
 * it had (one read).
 * Without the checks a JVM that unloads classes had up to 15% of its
 * frames named by a method or class that had died (a method of one class
 * under the name of another, jit-window.bats); checking every hit instead
 * of once per collection doubled the end of a window on jetty9. A name
 * costs five reads (Method, ConstMethod, the pool's holder and slot, the
 * Symbol), one more for a class seen before and two for a new one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_int.h"
#include "timeutil.h"

#define HSM_SYM_GUESS 128 /* Symbol bytes read in the first read */

/* The bytes of a Symbol into buf (NUL-terminated): 0 or -errno/-EINVAL.
 * One read for the usual short symbol (header and body together), a second
 * when it is longer or the first ran off a mapping. */
static int hsm_symbol(struct hotspot *hs, uint64_t sym, char *buf, size_t len, size_t *outlen)
{
	const struct hs_layout *l = &hs->l;
	uint8_t head[HSM_SYM_GUESS];
	uint64_t n;
	size_t body = (size_t)l->sym_body_off, have = 0;
	if (!hsmem_ptr_ok(sym, 4) || l->sym_body_off > 32 ||
	    !hs_fits(l->sym_len_off, 2, sizeof(head)))
		return -EINVAL;
	int rc = hsmem_read(&hs->r, sym, head, sizeof(head));
	if (rc == 0) {
		n = (uint64_t)head[l->sym_len_off] | (uint64_t)head[l->sym_len_off + 1] << 8;
		have = sizeof(head) - body;
	} else if ((rc = hsmem_read_uint(&hs->r, sym + l->sym_len_off, 2, &n)) < 0) {
		return rc;
	}
	if (n == 0 || n >= len || n > HS_MAX_SYMBOL)
		return -EINVAL;
	if (n <= have)
		memcpy(buf, head + body, (size_t)n);
	else if ((rc = hsmem_read(&hs->r, sym + body, buf, (size_t)n)) < 0)
		return rc;
	buf[n] = '\0';
	if (memchr(buf, '\0', (size_t)n))
		return -EINVAL;
	*outlen = (size_t)n;
	return 0;
}

/* The heap's collection count + 1, read at most every HS_EPOCH_MS; 0 when
 * it cannot be read or a collection is in progress (then every cached name
 * is checked): the count moves when a collection starts, and a name read
 * while it frees classes would be trusted after their metadata is reused. */
static uint64_t hsm_epoch(struct hotspot *hs)
{
	if (!hs->epoch_addr)
		return 0;
	uint64_t now = timeutil_now_ms(), v, active;
	if (hs->epoch && now - hs->epoch_ms < HS_EPOCH_MS)
		return hs->epoch;
	if (hsmem_read_uint(&hs->r, hs->gc_active_addr, 1, &active) < 0 || active ||
	    hsmem_read_uint(&hs->r, hs->epoch_addr, 4, &v) < 0)
		return hs->epoch = 0;
	hs->epoch_ms = now;
	return hs->epoch = v + 1;
}

/* A class's dotted name, through a cache per Klass*: many methods share a
 * class. 0 (cls filled) or -errno/-EINVAL. */
static int hsm_class(struct hotspot *hs, uint64_t klass, char *cls, size_t len, size_t *clen)
{
	struct hs_method_slot *s = &hs->kcache[(size_t)(klass >> 3) % HS_KLASS_CACHE_SIZE];
	uint64_t kname, epoch = hsm_epoch(hs);
	int rc = 0;
	if (s->method == klass && s->name && epoch && s->epoch == epoch)
		kname = s->check; /* no collection since it was checked */
	else if ((rc = hsmem_read_u64(&hs->r, klass + hs->l.k_name_off, &kname)) < 0)
		return rc;
	if (s->method == klass && s->check == kname && s->name) {
		s->epoch = epoch;
		*clen = strlen(s->name);
		memcpy(cls, s->name, *clen + 1);
		return 0;
	}
	if ((rc = hsm_symbol(hs, kname, cls, len, clen)) < 0)
		return rc;
	char *plus = strrchr(cls, '+');
	if (plus)
		*plus = '.'; /* a hidden class, as JVMTI spells it */
	for (char *p = cls; *p; p++)
		if (*p == '/')
			*p = '.';
	char *copy = strdup(cls);
	if (copy) {
		free(s->name);
		s->name = copy;
		s->method = klass;
		s->check = kname;
		s->epoch = epoch;
	}
	return 0;
}

/* Read the pieces of a name, method's ConstMethod* (read already) cm on;
 * 1 named, 0 not a Method*, -errno. */
static int hsm_read_name(struct hotspot *hs, uint64_t cm, char *out, size_t outlen)
{
	const struct hs_layout *l = &hs->l;
	uint64_t cp, holder, msym;
	uint8_t cmb[64];
	int rc;
	if (!hsmem_ptr_ok(cm, 8))
		return 0;
	/* the constants pointer and the name index in one read */
	if (!hs_fits(l->cm_constants_off, 8, HS_MAX_FIELD_OFFSET + 8) ||
	    !hs_fits(l->cm_name_index_off, 2, HS_MAX_FIELD_OFFSET + 8))
		return 0; /* lies: the sums below cannot wrap */
	uint64_t lo =
	    l->cm_constants_off < l->cm_name_index_off ? l->cm_constants_off : l->cm_name_index_off;
	uint64_t hi = l->cm_constants_off + 8 > l->cm_name_index_off + 2 ? l->cm_constants_off + 8
									 : l->cm_name_index_off + 2;
	if (hi - lo > sizeof(cmb))
		return 0;
	if ((rc = hsmem_read(&hs->r, cm + lo, cmb, (size_t)(hi - lo))) < 0)
		return rc == -EFAULT ? 0 : rc;
	uint16_t nidx;
	memcpy(&cp, cmb + (l->cm_constants_off - lo), 8);
	memcpy(&nidx, cmb + (l->cm_name_index_off - lo), 2);
	if (!hsmem_ptr_ok(cp, 8) || nidx == 0)
		return 0;
	if ((rc = hsmem_read_u64(&hs->r, cp + l->cp_holder_off, &holder)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, cp + l->cp_size + (uint64_t)nidx * 8, &msym)) < 0)
		return rc == -EFAULT ? 0 : rc;
	if (!hsmem_ptr_ok(holder, 8))
		return 0;
	char *cls = hs->namebuf, *meth = hs->namebuf + HS_MAX_SYMBOL + 1;
	size_t clen, mlen;
	if ((rc = hsm_class(hs, holder, cls, HS_MAX_SYMBOL + 1, &clen)) < 0 ||
	    (rc = hsm_symbol(hs, msym, meth, HS_MAX_SYMBOL + 1, &mlen)) < 0)
		return rc == -EFAULT || rc == -EINVAL ? 0 : rc;
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

int hotspot_interp_bci(struct hotspot *hs, uint64_t method, uint64_t bcp, int *bci)
{
	const struct hs_layout *l = &hs->l;
	uint64_t cm, size;
	*bci = -1;
	if (!l->cm_size)
		return -ENOTSUP;
	if (!hsmem_ptr_ok(method, 8))
		return 0;
	int rc = hsmem_read_u64(&hs->r, method + l->m_const_off, &cm);
	if (rc == 0 && !hsmem_ptr_ok(cm, 8))
		return 0;
	if (rc == 0)
		rc = hsmem_read_uint(&hs->r, cm + l->cm_code_size_off, 2, &size);
	if (rc < 0)
		return rc == -EFAULT ? 0 : rc;
	uint64_t start = cm + l->cm_size;
	if (bcp < start || bcp - start >= size)
		return 0;
	*bci = (int)(bcp - start);
	return 1;
}

/* name into buf (len > 0), cut to fit: 1 */
static int hsm_copy(char *buf, size_t len, const char *name)
{
	size_t n = strlen(name);
	if (n >= len)
		n = len - 1;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return 1;
}

int hotspot_method_name_at(struct hotspot *hs, uint64_t method, uint64_t time, char *buf,
			   size_t len)
{
	if (len == 0)
		return 0;
	size_t slot = (size_t)((method >> 3) * 0x9E3779B97F4A7C15ull >> 52) % HS_METHOD_CACHE_SIZE;
	struct hs_method_slot *s = &hs->mcache[slot];
	uint64_t cm, epoch = hsm_epoch(hs);
	int rc = 0;
	buf[0] = '\0';
	if (!hsmem_ptr_ok(method, 8))
		return 0;
	/* no collection since it was read, or read after the frame was
	 * sampled: the name holds */
	if (s->method == method && s->name &&
	    ((epoch && s->epoch == epoch) || (time && s->read_ns >= time)))
		return hsm_copy(buf, len, s->name);
	/* else read again (the same ConstMethod* may now be another class's
	 * method of the same shape: a reflection accessor defined again) */
	if ((rc = hsmem_read_u64(&hs->r, method + hs->l.m_const_off, &cm)) < 0)
		return rc == -EFAULT ? 0 : rc;
	char name[2 * HS_MAX_SYMBOL + 2];
	if ((rc = hsm_read_name(hs, cm, name, sizeof(name))) <= 0)
		return rc;
	uint64_t now = timeutil_now_us() * 1000u;
	if (s->method == method && s->name && strcmp(s->name, name) == 0) {
		s->epoch = epoch;
		s->read_ns = now;
		return hsm_copy(buf, len, name);
	}
	char *copy = strdup(name);
	if (copy) {
		free(s->name);
		*s = (struct hs_method_slot){
		    .method = method, .epoch = epoch, .read_ns = now, .name = copy};
	}
	return hsm_copy(buf, len, name);
}

int hotspot_method_name(struct hotspot *hs, uint64_t method, char *buf, size_t len)
{
	return hotspot_method_name_at(hs, method, 0, buf, len);
}
