/* jvmunwind.c - JVMs unwound by the HotSpot-aware unwinder: see jvmunwind.h */
#include "jvmunwind.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfi.h"
#include "hotspot.h"
#include "jvmflags.h"
#include "leafcall.h"
#include "procmem.h"
#include "timeutil.h"

struct jvmunwind_blob {
	uint64_t pc;	  /* 0: empty */
	uint64_t expires; /* ms */
	struct hotspot_blob b;
	int found;
	int frame;    /* leaf_frame's answer at pc; JVMUNWIND_FRAME_UNKNOWN until read */
	int bp_saved; /* and its *bp_saved */
};

#define JVMUNWIND_FRAME_UNKNOWN (-2)

/* Code of a compilation, read JVMUNWIND_CODE_CHUNK bytes at a time for the
 * leaf's analysis (a hot loop's leaf pcs are many, and close together). */
struct jvmunwind_code {
	uint64_t chunk; /* its aligned start; 0: empty */
	uint64_t blob;	/* the nmethod it was read for, and its compile id */
	int32_t compile_id;
	uint32_t len; /* bytes held */
	uint8_t bytes[JVMUNWIND_CODE_CHUNK + LEAFCALL_CODE_BYTES];
};

/* A compiled method the walk found, by its code's start (open addressing,
 * JVMUNWIND_SEEN_SLOTS slots, filled to half at most). Code freed during
 * the window and its addresses reused keeps its entry: one entry per
 * owner of a start, each with the time it was first seen, so that a
 * sample is named by the owner of its time (jvmunwind_code_name). */
struct jvmunwind_seen {
	uint64_t begin; /* 0: empty */
	uint64_t end;
	uint64_t method;
	uint64_t since; /* the sample time (CLOCK_MONOTONIC ns) it was first found at */
	char *name; /* read when first seen (its class may be unloaded by the end); NULL: later */
};

/* How many entries below an address a lookup looks at for the ones that
 * cover it (code of different owners overlapping at different starts). */
#define JVMUNWIND_SEEN_SCAN 32

#define JVMUNWIND_SEEN_SLOTS (2 * JVMUNWIND_SEEN_MAX)

struct jvmunwind_jvm {
	pid_t pid;
	struct hotspot *hs;
	struct cfi_proc *maps;
	struct unwind_ops ops;
	struct jvmunwind_blob *blobs;	/* JVMUNWIND_BLOB_CACHE */
	struct jvmunwind_code *code;	/* JVMUNWIND_CODE_SLOTS, allocated on first use */
	struct jvmunwind_seen *seen;	/* JVMUNWIND_SEEN_SLOTS, allocated on first use */
	struct jvmunwind_seen *by_addr; /* the seen ones sorted by begin (lookups) */
	size_t nseen, nsorted;		/* nsorted != nseen: by_addr is stale */
	size_t seen_bytes;		/* of names, at most JVMUNWIND_SEEN_NAME_BYTES */
	uint64_t now_ms;		/* of the sample being unwound */
	uint64_t sample_ns;		/* its sample time */
	uint64_t libjvm_text;		/* start of libjvm.so's text, 0 unknown */
	int names_later;		/* jvmunwind_names_at_sight off */
	int fp_kept;			/* started with -XX:+PreserveFramePointer */
	struct jvmunwind_jvm_stats st;
};

struct jvmunwind {
	struct cfi *cfi;
	int own_cfi;
	struct jvmunwind_jvm *jvms[JVMUNWIND_MAX_JVMS];
	size_t n;
	pid_t later[JVMUNWIND_MAX_JVMS]; /* names_at_sight off before their add */
	size_t nlater;
};

int jvmunwind_new(struct cfi *shared, struct jvmunwind **out)
{
	struct jvmunwind *ju = calloc(1, sizeof(*ju));
	if (!ju)
		return -ENOMEM;
	ju->cfi = shared;
	ju->own_cfi = !shared;
	int r = shared ? 0 : cfi_new(NULL, &ju->cfi);
	if (r < 0) {
		free(ju);
		return r;
	}
	*out = ju;
	return 0;
}

static void jvmunwind_jvm_free(struct jvmunwind_jvm *j)
{
	if (!j)
		return;
	hotspot_close(j->hs);
	cfi_proc_free(j->maps);
	free(j->blobs);
	free(j->code);
	for (size_t i = 0; j->seen && i < JVMUNWIND_SEEN_SLOTS; i++)
		free(j->seen[i].name);
	free(j->seen);
	free(j->by_addr);
	free(j);
}

void jvmunwind_free(struct jvmunwind *ju)
{
	if (!ju)
		return;
	for (size_t i = 0; i < ju->n; i++)
		jvmunwind_jvm_free(ju->jvms[i]);
	if (ju->own_cfi)
		cfi_free(ju->cfi);
	free(ju);
}

static struct jvmunwind_jvm *jvmunwind_find(const struct jvmunwind *ju, pid_t pid)
{
	for (size_t i = 0; i < ju->n; i++)
		if (ju->jvms[i]->pid == pid)
			return ju->jvms[i];
	return NULL;
}

int jvmunwind_has(const struct jvmunwind *ju, pid_t pid)
{
	return jvmunwind_find(ju, pid) != NULL;
}

/* ---- the unwinder's view of one JVM ---------------------------------------- */

static int jvmunwind_in_code_cache(void *ctx, uint64_t pc)
{
	struct jvmunwind_jvm *j = ctx;
	return hotspot_in_code_cache(j->hs, pc);
}

/* Remember a compiled method the walk found (latest wins at one address). */
static void jvmunwind_seen_note(struct jvmunwind_jvm *j, const struct hotspot_blob *b)
{
	if (b->kind != HOTSPOT_BLOB_NMETHOD || !b->method || !b->code_begin ||
	    b->code_end <= b->code_begin)
		return;
	if (!j->seen && !(j->seen = calloc(JVMUNWIND_SEEN_SLOTS, sizeof(*j->seen))))
		return;
	size_t i = (size_t)(b->code_begin >> 4) % JVMUNWIND_SEEN_SLOTS;
	for (; j->seen[i].begin; i = (i + 1) % JVMUNWIND_SEEN_SLOTS)
		if (j->seen[i].begin == b->code_begin && j->seen[i].method == b->method &&
		    j->seen[i].end == b->code_end)
			return; /* this owner of the start is known */
	if (j->nseen == JVMUNWIND_SEEN_MAX)
		return; /* full: the map taken at the end names the rest */
	j->nseen++;
	struct jvmunwind_seen *e = &j->seen[i];
	*e = (struct jvmunwind_seen){b->code_begin, b->code_end, b->method, j->sample_ns, NULL};
	j->nsorted = (size_t)-1; /* by_addr is stale */
	if (j->names_later)
		return; /* named by jvmunwind_code_name if it is ever asked */
	char name[512];
	uint64_t calls0, calls1, bytes;
	hotspot_read_counts(j->hs, &calls0, &bytes);
	if (j->seen_bytes < JVMUNWIND_SEEN_NAME_BYTES &&
	    hotspot_method_name(j->hs, b->method, name, sizeof(name)) == 1 &&
	    (e->name = strdup(name)))
		j->seen_bytes += strlen(name) + 1;
	hotspot_read_counts(j->hs, &calls1, &bytes);
	j->st.name_reads += calls1 - calls0;
}

/* The cache's set of pc: JVMUNWIND_BLOB_WAYS entries, most recent first
 * (a big application's hot return addresses collide in a direct-mapped
 * table: every collision costs two reads of the JVM's memory). */
static struct jvmunwind_blob *jvmunwind_set(struct jvmunwind_jvm *j, uint64_t pc)
{
	size_t sets = JVMUNWIND_BLOB_CACHE / JVMUNWIND_BLOB_WAYS;
	return &j->blobs[(size_t)(pc >> 2) % sets * JVMUNWIND_BLOB_WAYS];
}

/* The entry holding pc (fresh or not), NULL when none. */
static struct jvmunwind_blob *jvmunwind_entry(struct jvmunwind_jvm *j, uint64_t pc)
{
	struct jvmunwind_blob *set = jvmunwind_set(j, pc);
	for (int w = 0; w < JVMUNWIND_BLOB_WAYS; w++)
		if (set[w].pc == pc)
			return &set[w];
	return NULL;
}

/* hotspot_find_blob through the cache: code blobs live long, a lookup
 * reads the JVM's memory twice (segment map, block). An entry past its
 * time is renewed by one read when its blob is still the one at pc. */
static int jvmunwind_find_blob(void *ctx, uint64_t pc, struct hotspot_blob *out)
{
	struct jvmunwind_jvm *j = ctx;
	struct jvmunwind_blob *e = jvmunwind_entry(j, pc);
	j->st.blob_lookups++;
	if (e && e->expires > j->now_ms) {
		j->st.blob_hits++;
		*out = e->b;
		return e->found;
	}
	if (!e) {
		j->st.blob_new++;
	} else {
		j->st.blob_expired++;
		int c = e->found == 1 ? hotspot_blob_check(j->hs, pc, &e->b) : 0;
		if (c < 0)
			return c;
		if (c == 1) {
			j->st.blob_revalidated++;
			e->expires = j->now_ms + JVMUNWIND_BLOB_TTL_MS;
			/* the same compilation: the same code at pc (without
			 * a compile id, the code is read again) */
			if (e->b.kind == HOTSPOT_BLOB_NMETHOD && e->b.compile_id < 0)
				e->frame = JVMUNWIND_FRAME_UNKNOWN;
			*out = e->b;
			return 1;
		}
	}
	int r = hotspot_find_blob(j->hs, pc, out);
	if (r < 0)
		return r;
	if (r == 1)
		jvmunwind_seen_note(j, out);
	if (!e) { /* the least recent way goes, the others move down */
		struct jvmunwind_blob *set = jvmunwind_set(j, pc);
		memmove(&set[1], &set[0], (JVMUNWIND_BLOB_WAYS - 1) * sizeof(*set));
		e = &set[0];
	}
	e->pc = pc;
	e->expires = j->now_ms + JVMUNWIND_BLOB_TTL_MS;
	e->b = *out;
	e->found = r;
	e->frame = JVMUNWIND_FRAME_UNKNOWN;
	return r;
}

/* The LEAFCALL_CODE_BYTES of code at pc of nmethod b (NULL: unknown)
 * into code: from the chunk cache when b's compilation was read there
 * (its code does not change while it lives: another compilation has
 * another compile id), else read. Returns the bytes got, or -errno. */
static ssize_t jvmunwind_code_at(struct jvmunwind_jvm *j, const struct hotspot_blob *b, uint64_t pc,
				 uint8_t *code)
{
	uint64_t chunk = pc & ~(uint64_t)(JVMUNWIND_CODE_CHUNK - 1);
	struct jvmunwind_code *c = NULL;
	if (b && b->kind == HOTSPOT_BLOB_NMETHOD && b->compile_id >= 0 && pc >= b->code_begin &&
	    pc < b->code_end &&
	    (j->code || (j->code = calloc(JVMUNWIND_CODE_SLOTS, sizeof(*j->code)))))
		c = &j->code[(chunk / JVMUNWIND_CODE_CHUNK) % JVMUNWIND_CODE_SLOTS];
	if (c && (c->chunk != chunk || c->blob != b->blob || c->compile_id != b->compile_id)) {
		c->chunk = 0;
		ssize_t n = procmem_read_some(j->pid, hotspot_pidfd(j->hs), chunk, c->bytes,
					      sizeof(c->bytes));
		j->st.leaf_reads++;
		j->st.read_bytes += sizeof(c->bytes);
		if (n < 0)
			return n;
		c->chunk = chunk;
		c->blob = b->blob;
		c->compile_id = b->compile_id;
		c->len = (uint32_t)n;
	}
	if (c) {
		size_t at = (size_t)(pc - chunk), n = 0;
		if (at < c->len)
			n = c->len - at < LEAFCALL_CODE_BYTES ? c->len - at : LEAFCALL_CODE_BYTES;
		memcpy(code, c->bytes + at, n);
		return (ssize_t)n;
	}
	j->st.leaf_reads++;
	j->st.read_bytes += LEAFCALL_CODE_BYTES;
	return procmem_read_some(j->pid, hotspot_pidfd(j->hs), pc, code, LEAFCALL_CODE_BYTES);
}

/* Where a leaf compiled method's frame stands at pc (unwind_ops.leaf_frame):
 * its exit (leafcall_exit), else its entry (leafcall_locate). The code at pc
 * is read once per cached pc (the walk looked its blob up just before). */
static int jvmunwind_leaf_frame(void *ctx, uint64_t pc, int *bp_saved)
{
	struct jvmunwind_jvm *j = ctx;
	struct jvmunwind_blob *e = jvmunwind_entry(j, pc);
	if (e && e->frame != JVMUNWIND_FRAME_UNKNOWN) {
		*bp_saved = e->bp_saved;
		return e->frame;
	}
	uint8_t code[LEAFCALL_CODE_BYTES];
	ssize_t got = jvmunwind_code_at(j, e ? &e->b : NULL, pc, code);
	int x = -1, saved = 0;
	if (got > 0) {
		x = leafcall_exit(code, (size_t)got);
		if (x >= 0)
			saved = x == 8; /* at pop %rbp */
		else if ((x = leafcall_locate(code, (size_t)got)) == 8 && code[0] != 0x55)
			saved = 1; /* after push %rbp: at mov %rsp,%rbp */
		else if (x < 0 && leafcall_entry_barrier(code, (size_t)got))
			x = UNWIND_LEAF_BUILT;
	}
	if (e) {
		e->frame = x;
		e->bp_saved = saved;
	}
	*bp_saved = saved;
	return x;
}

static int jvmunwind_is_text(void *ctx, uint64_t pc)
{
	struct jvmunwind_jvm *j = ctx;
	return cfi_proc_is_text(j->maps, pc);
}

static int jvmunwind_cfi_step(void *ctx, struct unwind_regs *r, const struct unwind_stack *st,
			      int leaf)
{
	struct jvmunwind_jvm *j = ctx;
	return cfi_proc_step(j->maps, r, st, leaf);
}

int jvmunwind_add(struct jvmunwind *ju, pid_t pid, struct fs_error *err)
{
	if (jvmunwind_find(ju, pid))
		return 0;
	if (ju->n == JVMUNWIND_MAX_JVMS)
		return fs_error_set(err, ENOSPC, "more than %d JVMs to unwind", JVMUNWIND_MAX_JVMS);
	struct jvmunwind_jvm *j = calloc(1, sizeof(*j));
	if (!j || !(j->blobs = calloc(JVMUNWIND_BLOB_CACHE, sizeof(*j->blobs)))) {
		free(j);
		return fs_error_set(err, ENOMEM, "allocating the unwinder of pid %d", (int)pid);
	}
	j->pid = pid;
	int r = hotspot_open(pid, &j->hs, err);
	if (r == 0)
		r = cfi_proc_open(ju->cfi, pid, &j->maps, err);
	if (r < 0) {
		jvmunwind_jvm_free(j);
		return r;
	}
	j->ops = (struct unwind_ops){.ctx = j,
				     .in_code_cache = jvmunwind_in_code_cache,
				     .find_blob = jvmunwind_find_blob,
				     .is_text = jvmunwind_is_text,
				     .cfi_step = jvmunwind_cfi_step,
				     .leaf_frame = jvmunwind_leaf_frame};
	hotspot_frame_layout(j->hs, &j->ops.layout);
	j->libjvm_text = cfi_proc_preload(j->maps, "libjvm.so");
	j->fp_kept = jvmflags_fp_missing(pid, NULL) == 0;
	j->st.pid = pid;
	j->st.major = hotspot_major_version(j->hs);
	for (size_t i = 0; i < ju->nlater; i++)
		if (ju->later[i] == pid)
			j->names_later = 1;
	ju->jvms[ju->n++] = j;
	return 0;
}

uint64_t jvmunwind_libjvm_text(const struct jvmunwind *ju, pid_t pid)
{
	const struct jvmunwind_jvm *j = jvmunwind_find(ju, pid);
	return j ? j->libjvm_text : 0;
}

void jvmunwind_names_at_sight(struct jvmunwind *ju, pid_t pid, int on)
{
	struct jvmunwind_jvm *j = jvmunwind_find(ju, pid);
	if (j)
		j->names_later = !on;
	size_t i = 0;
	while (i < ju->nlater && ju->later[i] != pid)
		i++;
	if (on && i < ju->nlater)
		ju->later[i] = ju->later[--ju->nlater];
	else if (!on && i == ju->nlater && ju->nlater < JVMUNWIND_MAX_JVMS)
		ju->later[ju->nlater++] = pid;
}

void jvmunwind_remove(struct jvmunwind *ju, pid_t pid)
{
	for (size_t i = 0; i < ju->n; i++) {
		if (ju->jvms[i]->pid == pid) {
			jvmunwind_jvm_free(ju->jvms[i]);
			ju->jvms[i] = ju->jvms[--ju->n];
			return;
		}
	}
}

/* The walk stopped short of the base (the copy ended, a frame we cannot
 * step): when the kernel's frame-pointer chain holds the walk's last
 * return address (a JVM with frame pointers), go on with the kernel's
 * frames after it. Returns the new length. */
static size_t jvmunwind_splice(const struct sample *smp, uint64_t *out, size_t n, size_t max,
			       struct jvmunwind_jvm *j)
{
	uint64_t last = out[n - 1] & ~UNWIND_C1_TAG;
	size_t i = 0;
	while (i < smp->nr && smp->ips[i] != (uint64_t)PERF_CONTEXT_USER)
		i++;
	for (i++; i < smp->nr; i++)
		if (smp->ips[i] == last)
			break;
	if (i >= smp->nr)
		return n;
	j->st.spliced++;
	for (i++; i < smp->nr && n < max; i++) {
		if (smp->ips[i] >= (uint64_t)PERF_CONTEXT_MAX)
			break;
		out[n++] = smp->ips[i];
	}
	return n;
}

/* A walk of got words after the kernel's n: spliced with the kernel's
 * chain where it stopped short. A last word that is no code at all (a
 * frame's size misread: its return address is a heap or stack value) is
 * no frame: the splice goes on from the word before it. From the leaf
 * alone (its code freed before the sample was unwound, or its frame not
 * understood) only in a JVM that keeps frame pointers: there the kernel's
 * chain after the leaf is its callers, elsewhere it is noise. Returns
 * the chain's length. */
static size_t jvmunwind_finish(struct jvmunwind_jvm *j, const struct sample *smp,
			       const struct unwind_result *res, uint64_t *out, size_t n, size_t got,
			       size_t max)
{
	if (got == 0 || res->end == UNWIND_END_ROOT || unwind_is_method(out[n + got - 1]))
		return n + got;
	size_t len = n + got;
	uint64_t last = out[len - 1] & ~UNWIND_C1_TAG;
	if (got > 1 && res->end == UNWIND_END_UNKNOWN && !unwind_plausible_pc(&j->ops, last))
		len--;
	if (len - n == 1 && !j->fp_kept)
		return n + got;
	size_t spliced = jvmunwind_splice(smp, out, len, max, j);
	return spliced > len ? spliced : n + got;
}

size_t jvmunwind_sample(struct jvmunwind *ju, const struct sample *smp, uint64_t *out, size_t max)
{
	struct jvmunwind_jvm *j = jvmunwind_find(ju, smp->pid);
	if (!j)
		return 0;
	if (!smp->has_regs || !smp->user_ip || max < 2) {
		j->st.no_regs++;
		return 0;
	}
	/* The kernel's part of the chain, up to its user marker. */
	size_t n = 0;
	for (size_t i = 0; i < smp->nr && n + 2 < max; i++) {
		if (smp->ips[i] == (uint64_t)PERF_CONTEXT_USER)
			break;
		out[n++] = smp->ips[i];
	}
	out[n++] = (uint64_t)PERF_CONTEXT_USER;
	struct unwind_regs regs = {.ip = smp->user_ip, .sp = smp->user_sp, .bp = smp->user_bp};
	struct unwind_stack st = {.sp = smp->user_sp, .data = smp->stack, .size = smp->stack_size};
	struct unwind_result res;
	j->now_ms = timeutil_now_ms();
	j->sample_ns = smp->time;
	uint64_t calls0, bytes0, calls1, bytes1, leaf0 = j->st.leaf_reads;
	hotspot_read_counts(j->hs, &calls0, &bytes0);
	uint64_t t0 = timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	size_t got = unwind_walk(&j->ops, &regs, &st, out + n, max - n, &res);
	j->st.unwind_ns += timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	hotspot_read_counts(j->hs, &calls1, &bytes1);
	j->st.reads += calls1 - calls0 + (j->st.leaf_reads - leaf0);
	j->st.read_bytes += bytes1 - bytes0;
	j->st.samples++;
	j->st.frames += got;
	j->st.interpreted += res.interpreted;
	j->st.compiled += res.compiled;
	j->st.native_cfi += res.native_cfi;
	j->st.native_fp += res.native_fp;
	j->st.ends[res.end]++;
	if (res.end == UNWIND_END_ROOT) {
		uint64_t kib = res.depth / 1024;
		j->st
		    .depth_kib[kib < JVMUNWIND_DEPTH_BUCKETS ? kib : JVMUNWIND_DEPTH_BUCKETS - 1]++;
	}
	return jvmunwind_finish(j, smp, &res, out, n, got, max);
}

int jvmunwind_method_name(void *ctx, pid_t pid, uint64_t method, uint64_t time, char *buf,
			  size_t len)
{
	struct jvmunwind_jvm *j = jvmunwind_find(ctx, pid);
	if (!j)
		return 0;
	return hotspot_method_name_at(j->hs, method, time, buf, len) == 1;
}

static int jvmunwind_seen_cmp(const void *a, const void *b)
{
	const struct jvmunwind_seen *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->since < y->since ? -1 : x->since > y->since;
}

/* The entry that named addr at time (0: the latest): of the ones covering
 * addr, the last first seen at or before time, else the first seen. NULL
 * when none covers it. by_addr is sorted. */
static const struct jvmunwind_seen *jvmunwind_seen_at(const struct jvmunwind_jvm *j, uint64_t addr,
						      uint64_t time)
{
	size_t lo = 0, hi = j->nsorted;
	while (lo < hi) { /* past the last entry starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;
		if (j->by_addr[mid].begin <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct jvmunwind_seen *best = NULL, *first = NULL;
	for (size_t k = lo; k > 0 && lo - k < JVMUNWIND_SEEN_SCAN; k--) {
		const struct jvmunwind_seen *e = &j->by_addr[k - 1];
		if (addr >= e->end)
			continue;
		if (!first || e->since < first->since)
			first = e;
		if ((!time || e->since <= time) && (!best || e->since > best->since))
			best = e;
	}
	return best ? best : first;
}

int jvmunwind_code_name(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf, size_t len)
{
	struct jvmunwind_jvm *j = jvmunwind_find(ctx, pid);
	if (!j || !j->nseen)
		return 0;
	if (j->nsorted != j->nseen) {
		struct jvmunwind_seen *v = realloc(j->by_addr, j->nseen * sizeof(*v));
		if (!v)
			return 0;
		size_t n = 0;
		for (size_t i = 0; i < JVMUNWIND_SEEN_SLOTS && n < j->nseen; i++)
			if (j->seen[i].begin)
				v[n++] = j->seen[i];
		qsort(v, n, sizeof(*v), jvmunwind_seen_cmp);
		j->by_addr = v;
		j->nsorted = n;
	}
	const struct jvmunwind_seen *e = jvmunwind_seen_at(j, addr, time);
	if (!e)
		return 0;
	if (e->name) {
		snprintf(buf, len, "%s", e->name);
		return 1;
	}
	return hotspot_method_name(j->hs, e->method, buf, len) == 1;
}

size_t jvmunwind_count(const struct jvmunwind *ju)
{
	return ju->n;
}

void jvmunwind_stats(const struct jvmunwind *ju, size_t i, struct jvmunwind_jvm_stats *st)
{
	*st = ju->jvms[i]->st;
}
