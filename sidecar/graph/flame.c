/* flame.c - the frame tree: interned names, child look-up, walking. See
 * flame.h (the folded-text reader is flame_folded.c).
 *
 * Nodes live in one mmap'd array and refer to each other by index, so
 * growing it is an mremap. A node's children form a linked list; a node
 * with more than FLAME_WIDE children also has them in a (parent, name) hash
 * table. flame_add remembers the node path of the previous stack: folded
 * input is usually sorted, so most of a stack's frames are the previous
 * stack's and are found by one memcmp instead of look-ups.
 */
#include "flame.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cleanup.h"

/* A node is 32 bytes: the name index shares a word with a small child
 * count (saturating at 7; only "more than FLAME_WIDE" matters). */
#define FLAME_NAME_BITS 29
#define FLAME_NAME_MASK ((1u << FLAME_NAME_BITS) - 1)
#define FLAME_KIDS_MAX	7u

struct flame_node {
	uint32_t name_kids; /* name index (low 29 bits) | children (top 3) */
	uint32_t parent;
	uint32_t child;	  /* first child, FLAME_NONE if a leaf */
	uint32_t sibling; /* next sibling */
	uint64_t total;	  /* column B, inclusive */
	uint64_t self;	  /* column B, exclusive */
};
_Static_assert(sizeof(struct flame_node) == 32, "flame_node grew");

/* Column A, allocated in parallel to nodes[] once the tree is differential. */
struct flame_acount {
	uint64_t total;
	uint64_t self;
};

/* Children of a node with up to this many are found by scanning its list
 * (recently added, so usually cached); wider nodes use the hash table. */
#define FLAME_WIDE 4

struct flame_slot {
	uint32_t id; /* node, FLAME_NONE when empty */
	uint32_t hash;
};

struct flame_name {
	size_t off; /* into pool */
	uint32_t len;
	uint32_t hash;
};

struct flame {
	struct flame_node *nodes;
	struct flame_acount *acounts;
	uint32_t n, cap;

	/* (parent, name) -> node for the children of wide nodes (more than
	 * FLAME_WIDE children); narrower nodes' child lists are scanned. */
	struct flame_slot *child_tab;
	size_t child_mask, child_used;

	char *pool;
	size_t pool_len, pool_cap;
	struct flame_name *names;
	uint32_t nnames, names_cap;
	struct flame_slot *name_tab; /* open addressing; name index or FLAME_NONE */
	size_t name_mask;

	/* the previous stack and its node path (flame_add's prefix cache) */
	char *prev;
	size_t prev_len, prev_cap;
	uint32_t prev_depth;
	uint32_t prev_nodes[FLAME_DEPTH_MAX];
	size_t prev_ends[FLAME_DEPTH_MAX]; /* end offset of each frame in prev */

	struct flame_stats stats;
	bool diff;
};

static inline uint32_t flame_nname(const struct flame_node *n)
{
	return n->name_kids & FLAME_NAME_MASK;
}

static inline uint32_t flame_nkids(const struct flame_node *n)
{
	return n->name_kids >> FLAME_NAME_BITS;
}

static uint64_t flame_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint32_t flame_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w = 0;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	if (i < len) {
		if (len >= 8) { /* the last 8 bytes, overlapping what was hashed */
			memcpy(&w, s + len - 8, 8);
		} else {
			w = 0;
			for (size_t k = 0; k < len; k++)
				w = (w << 8) | (unsigned char)s[k];
		}
		h = (h ^ w) * 0x100000001b3ULL;
	}
	return (uint32_t)flame_mix(h);
}

static uint32_t flame_child_hash(uint32_t parent, uint32_t name)
{
	return (uint32_t)flame_mix(((uint64_t)parent << 32) | name);
}

static uint64_t flame_sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* ---- names ---- */

static int flame_name_tab_grow(struct flame *f)
{
	size_t size = f->name_tab ? (f->name_mask + 1) * 2 : 1024;
	struct flame_slot *tab = malloc(size * sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	memset(tab, 0xff, size * sizeof(*tab));
	for (uint32_t i = 0; i < f->nnames; i++) {
		size_t s = f->names[i].hash & (size - 1);
		while (tab[s].id != FLAME_NONE)
			s = (s + 1) & (size - 1);
		tab[s] = (struct flame_slot){.id = i, .hash = f->names[i].hash};
	}
	free(f->name_tab);
	f->name_tab = tab;
	f->name_mask = size - 1;
	return 0;
}

static bool flame_eq(const char *a, const char *b, size_t len)
{
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	for (; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

static uint32_t flame_name_lookup(const struct flame *f, const char *s, size_t len, uint32_t hash,
				  size_t *slot)
{
	size_t i = hash & f->name_mask;
	for (;; i = (i + 1) & f->name_mask) {
		uint32_t id = f->name_tab[i].id;
		if (id == FLAME_NONE)
			break;
		if (f->name_tab[i].hash != hash)
			continue;
		const struct flame_name *nm = &f->names[id];
		if (nm->len == len && flame_eq(f->pool + nm->off, s, len))
			return id;
	}
	if (slot)
		*slot = i;
	return FLAME_NONE;
}

/* Intern a name; its index in *id. 0 or -ENOMEM/-E2BIG. */
static int flame_intern(struct flame *f, const char *s, size_t len, uint32_t *id)
{
	uint32_t hash = flame_hash(s, len);
	size_t slot;
	uint32_t found = flame_name_lookup(f, s, len, hash, &slot);
	if (found != FLAME_NONE) {
		*id = found;
		return 0;
	}
	if (len > UINT32_MAX || f->nnames >= FLAME_NAME_MASK)
		return -E2BIG;
	if (f->nnames == f->names_cap) {
		uint32_t cap = f->names_cap ? f->names_cap * 2 : 1024;
		struct flame_name *nn = realloc(f->names, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		f->names = nn;
		f->names_cap = cap;
	}
	if (f->pool_len + len > f->pool_cap) {
		size_t cap = f->pool_cap ? f->pool_cap : 65536;
		while (cap < f->pool_len + len)
			cap *= 2;
		char *np = realloc(f->pool, cap);
		if (!np)
			return -ENOMEM;
		f->pool = np;
		f->pool_cap = cap;
	}
	memcpy(f->pool + f->pool_len, s, len);
	f->names[f->nnames] =
	    (struct flame_name){.off = f->pool_len, .len = (uint32_t)len, .hash = hash};
	f->pool_len += len;
	f->name_tab[slot] = (struct flame_slot){.id = f->nnames, .hash = hash};
	*id = f->nnames++;
	if ((size_t)f->nnames * 2 > f->name_mask + 1)
		return flame_name_tab_grow(f);
	return 0;
}

/* ---- nodes ---- */

static int flame_child_tab_grow(struct flame *f)
{
	size_t size = f->child_tab ? (f->child_mask + 1) * 2 : 1024;
	struct flame_slot *tab = malloc(size * sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	memset(tab, 0xff, size * sizeof(*tab));
	for (size_t i = 0; f->child_tab && i <= f->child_mask; i++) {
		if (f->child_tab[i].id == FLAME_NONE)
			continue;
		size_t j = f->child_tab[i].hash & (size - 1);
		while (tab[j].id != FLAME_NONE)
			j = (j + 1) & (size - 1);
		tab[j] = f->child_tab[i];
	}
	free(f->child_tab);
	f->child_tab = tab;
	f->child_mask = size - 1;
	return 0;
}

/* Index node id (a child of a wide node) in the hash table. */
static int flame_child_tab_add(struct flame *f, uint32_t id)
{
	uint32_t h = flame_child_hash(f->nodes[id].parent, flame_nname(&f->nodes[id]));
	size_t i = h & f->child_mask;
	while (f->child_tab[i].id != FLAME_NONE)
		i = (i + 1) & f->child_mask;
	f->child_tab[i] = (struct flame_slot){.id = id, .hash = h};
	if (++f->child_used * 2 > f->child_mask + 1)
		return flame_child_tab_grow(f);
	return 0;
}

static int flame_nodes_grow(struct flame *f)
{
	if (f->cap >= UINT32_MAX / 2)
		return -E2BIG;
	uint32_t cap = f->cap ? f->cap * 2 : 4096;
	if (f->acounts) { /* first: a failure here leaves nodes[] consistent */
		struct flame_acount *na = realloc(f->acounts, (size_t)cap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		memset(na + f->cap, 0, (size_t)(cap - f->cap) * sizeof(*na));
		f->acounts = na;
	}
	/* mmap'd so that it can ask for transparent huge pages: a profile
	 * of millions of nodes otherwise spends much of its time in page faults */
	size_t old = (size_t)f->cap * sizeof(struct flame_node);
	size_t bytes = (size_t)cap * sizeof(struct flame_node);
	void *nn = f->nodes ? mremap(f->nodes, old, bytes, MREMAP_MAYMOVE)
			    : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
	if (nn == MAP_FAILED)
		return -ENOMEM;
	if (bytes >= (4u << 20))
		madvise(nn, bytes, MADV_HUGEPAGE); /* a hint; failure is harmless */
	f->nodes = nn;
	f->cap = cap;
	return 0;
}

static uint32_t flame_child_lookup(const struct flame *f, uint32_t parent, uint32_t name)
{
	const struct flame_node *p = &f->nodes[parent];
	if (flame_nkids(p) <= FLAME_WIDE) {
		for (uint32_t c = p->child; c != FLAME_NONE; c = f->nodes[c].sibling)
			if (flame_nname(&f->nodes[c]) == name)
				return c;
		return FLAME_NONE;
	}
	uint32_t h = flame_child_hash(parent, name);
	for (size_t i = h & f->child_mask;; i = (i + 1) & f->child_mask) {
		const struct flame_slot *sl = &f->child_tab[i];
		if (sl->id == FLAME_NONE)
			return FLAME_NONE;
		if (sl->hash == h && f->nodes[sl->id].parent == parent &&
		    flame_nname(&f->nodes[sl->id]) == name)
			return sl->id;
	}
}

/* The child of parent called s, created if needed, in *out. */
static int flame_get_child(struct flame *f, uint32_t parent, const char *s, size_t len,
			   uint32_t *out)
{
	uint32_t name;
	int r = flame_intern(f, s, len, &name);
	if (r < 0)
		return r;
	uint32_t id = flame_child_lookup(f, parent, name);
	if (id != FLAME_NONE) {
		*out = id;
		return 0;
	}
	if (f->n == f->cap && (r = flame_nodes_grow(f)) < 0)
		return r;
	id = f->n++;
	struct flame_node *p = &f->nodes[parent];
	f->nodes[id] = (struct flame_node){
	    .name_kids = name,
	    .parent = parent,
	    .child = FLAME_NONE,
	    .sibling = p->child,
	};
	p->child = id;
	*out = id;
	uint32_t kids = flame_nkids(p);
	if (kids < FLAME_KIDS_MAX)
		p->name_kids += 1u << FLAME_NAME_BITS;
	if (kids + 1 == FLAME_WIDE + 1) {
		/* parent just became wide: index all its children */
		for (uint32_t c = p->child; c != FLAME_NONE; c = f->nodes[c].sibling)
			if ((r = flame_child_tab_add(f, c)) < 0)
				return r;
	} else if (kids + 1 > FLAME_WIDE) {
		return flame_child_tab_add(f, id);
	}
	return 0;
}

struct flame *flame_new(void)
{
	cleanup_free struct flame *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	uint32_t all;
	if (flame_name_tab_grow(f) < 0 || flame_child_tab_grow(f) < 0 || flame_nodes_grow(f) < 0 ||
	    flame_intern(f, "all", 3, &all) < 0) {
		free(f->name_tab);
		free(f->child_tab);
		if (f->nodes)
			munmap(f->nodes, (size_t)f->cap * sizeof(struct flame_node));
		free(f->names);
		free(f->pool);
		return NULL;
	}
	f->nodes[0] = (struct flame_node){
	    .name_kids = all, .parent = FLAME_NONE, .child = FLAME_NONE, .sibling = FLAME_NONE};
	f->n = 1;
	return steal_pointer(&f);
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	munmap(f->nodes, (size_t)f->cap * sizeof(struct flame_node));
	free(f->acounts);
	free(f->child_tab);
	free(f->pool);
	free(f->names);
	free(f->name_tab);
	free(f->prev);
	free(f);
}

static int flame_make_diff(struct flame *f)
{
	if (f->acounts)
		return 0;
	f->acounts = calloc(f->cap, sizeof(*f->acounts));
	if (!f->acounts)
		return -ENOMEM;
	f->diff = true;
	return 0;
}

/* Frames shared with the previous stack: whole frames inside the common
 * byte prefix that end at a frame boundary in both. */
static uint32_t flame_shared_depth(const struct flame *f, const char *stack, size_t len)
{
	size_t l = 0, max = len < f->prev_len ? len : f->prev_len;
	for (; l + 8 <= max; l += 8) {
		uint64_t x, y;
		memcpy(&x, stack + l, 8);
		memcpy(&y, f->prev + l, 8);
		if (x != y)
			break;
	}
	while (l < max && stack[l] == f->prev[l])
		l++;
	uint32_t k = 0;
	while (k < f->prev_depth && f->prev_ends[k] <= l) {
		size_t e = f->prev_ends[k];
		if (e == l && e != len && stack[e] != ';')
			break;
		k++;
	}
	return k;
}

/* Keep a copy of stack for the next call (none when out of memory: the
 * next stack is then walked from the root). */
static void flame_remember(struct flame *f, const char *stack, size_t len)
{
	if (len > f->prev_cap) {
		size_t cap = f->prev_cap ? f->prev_cap : 256;
		while (cap < len)
			cap *= 2;
		char *np = realloc(f->prev, cap);
		if (!np) {
			f->prev_depth = 0;
			f->prev_len = 0;
		} else {
			f->prev = np;
			f->prev_cap = cap;
		}
	}
	if (len <= f->prev_cap) {
		if (len)
			memcpy(f->prev, stack, len);
		f->prev_len = len;
	}
}

static int flame_add_counts(struct flame *f, const char *stack, size_t len, uint64_t a, uint64_t b)
{
	uint32_t k = flame_shared_depth(f, stack, len);
	uint32_t depth = k;
	uint32_t parent = k ? f->prev_nodes[k - 1] : FLAME_ROOT;
	size_t pos = k ? f->prev_ends[k - 1] + 1 : 0;
	int r;
	if (len > 0 && pos <= len) {
		while (pos <= len) {
			const char *s = stack + pos;
			const char *semi = memchr(s, ';', len - pos);
			size_t flen = semi ? (size_t)(semi - s) : len - pos;
			if (depth == FLAME_DEPTH_MAX) {
				f->stats.truncated++;
				break;
			}
			if ((r = flame_get_child(f, parent, s, flen, &parent)) < 0) {
				f->prev_depth = 0; /* the cache may be half updated */
				f->prev_len = 0;
				return r;
			}
			f->prev_nodes[depth] = parent;
			f->prev_ends[depth] = pos + flen;
			depth++;
			pos += flen + 1;
		}
	}
	f->prev_depth = depth;
	flame_remember(f, stack, len);

	struct flame_node *nodes = f->nodes;
	nodes[FLAME_ROOT].total = flame_sat_add(nodes[FLAME_ROOT].total, b);
	for (uint32_t i = 0; i < depth; i++)
		nodes[f->prev_nodes[i]].total = flame_sat_add(nodes[f->prev_nodes[i]].total, b);
	uint32_t leaf = depth ? f->prev_nodes[depth - 1] : FLAME_ROOT;
	nodes[leaf].self = flame_sat_add(nodes[leaf].self, b);
	if (f->acounts) {
		struct flame_acount *ac = f->acounts;
		ac[FLAME_ROOT].total = flame_sat_add(ac[FLAME_ROOT].total, a);
		for (uint32_t i = 0; i < depth; i++)
			ac[f->prev_nodes[i]].total = flame_sat_add(ac[f->prev_nodes[i]].total, a);
		ac[leaf].self = flame_sat_add(ac[leaf].self, a);
	}
	return 0;
}

int flame_add(struct flame *f, const char *stack, size_t len, uint64_t count)
{
	return flame_add_counts(f, stack, len, 0, count);
}

int flame_add2(struct flame *f, const char *stack, size_t len, uint64_t count_a, uint64_t count_b)
{
	int r = flame_make_diff(f);
	if (r < 0)
		return r;
	return flame_add_counts(f, stack, len, count_a, count_b);
}

/* ---- walking ---- */

struct flame_walk {
	const struct flame *f;
	int (*fn)(void *, const char *, size_t, uint64_t, uint64_t);
	void *ctx;
	char *path;
	size_t path_cap;
};

static int flame_cmp_nodes(const void *pa, const void *pb, void *arg)
{
	const struct flame *f = arg;
	const struct flame_name *a = &f->names[flame_nname(&f->nodes[*(const uint32_t *)pa])];
	const struct flame_name *b = &f->names[flame_nname(&f->nodes[*(const uint32_t *)pb])];
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(f->pool + a->off, f->pool + b->off, n);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

int flame_children(const struct flame *f, uint32_t node, uint32_t **out, size_t *n)
{
	size_t count = 0;
	for (uint32_t c = f->nodes[node].child; c != FLAME_NONE; c = f->nodes[c].sibling)
		count++;
	*out = NULL;
	*n = count;
	if (!count)
		return 0;
	uint32_t *v = malloc(count * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t i = 0;
	for (uint32_t c = f->nodes[node].child; c != FLAME_NONE; c = f->nodes[c].sibling)
		v[i++] = c;
	qsort_r(v, count, sizeof(*v), flame_cmp_nodes, (void *)f);
	*out = v;
	return 0;
}

static int flame_walk_node(struct flame_walk *w, uint32_t node, size_t plen)
{
	const struct flame *f = w->f;
	if (node != FLAME_ROOT) {
		const struct flame_name *nm = &f->names[flame_nname(&f->nodes[node])];
		size_t need = plen + 1 + nm->len;
		if (need > w->path_cap) {
			size_t cap = w->path_cap ? w->path_cap : 256;
			while (cap < need)
				cap *= 2;
			char *np = realloc(w->path, cap);
			if (!np)
				return -ENOMEM;
			w->path = np;
			w->path_cap = cap;
		}
		if (plen)
			w->path[plen++] = ';';
		memcpy(w->path + plen, f->pool + nm->off, nm->len);
		plen += nm->len;
	}
	uint64_t a = f->acounts ? f->acounts[node].self : 0;
	uint64_t b = f->nodes[node].self;
	int r;
	if ((a || b) && (r = w->fn(w->ctx, w->path ? w->path : "", plen, a, b)))
		return r;
	cleanup_free uint32_t *kids = NULL;
	size_t n;
	if ((r = flame_children(f, node, &kids, &n)) < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if ((r = flame_walk_node(w, kids[i], plen)))
			return r;
	return 0;
}

int flame_foreach_stack(const struct flame *f,
			int (*fn)(void *ctx, const char *stack, size_t len, uint64_t a, uint64_t b),
			void *ctx)
{
	struct flame_walk w = {.f = f, .fn = fn, .ctx = ctx};
	int r = flame_walk_node(&w, FLAME_ROOT, 0);
	free(w.path);
	return r;
}

struct flame_rev {
	struct flame *out;
	char *buf;
	size_t cap;
};

static int flame_reverse_one(void *ctx, const char *stack, size_t len, uint64_t a, uint64_t b)
{
	struct flame_rev *rv = ctx;
	if (len > rv->cap) {
		char *nb = realloc(rv->buf, len);
		if (!nb)
			return -ENOMEM;
		rv->buf = nb;
		rv->cap = len;
	}
	/* copy frames in reverse order */
	size_t o = 0, end = len;
	while (len) {
		size_t s = end;
		while (s > 0 && stack[s - 1] != ';')
			s--;
		memcpy(rv->buf + o, stack + s, end - s);
		o += end - s;
		if (s == 0)
			break;
		rv->buf[o++] = ';';
		end = s - 1;
	}
	if (rv->out->acounts)
		return flame_add2(rv->out, rv->buf, o, a, b);
	return flame_add(rv->out, rv->buf, o, b);
}

struct flame *flame_reverse(const struct flame *f, struct fs_error *err)
{
	struct flame_rev rv = {.out = flame_new()};
	if (!rv.out) {
		fs_error_set(err, ENOMEM, "reversing stacks");
		return NULL;
	}
	int r = f->diff ? flame_make_diff(rv.out) : 0;
	if (r == 0)
		r = flame_foreach_stack(f, flame_reverse_one, &rv);
	free(rv.buf);
	if (r < 0) {
		flame_free(rv.out);
		fs_error_set(err, -r, "reversing stacks");
		return NULL;
	}
	rv.out->stats = f->stats;
	return rv.out;
}

/* ---- accessors ---- */

struct flame_stats *flame_stats_rw(struct flame *f)
{
	return &f->stats;
}

const struct flame_stats *flame_stats(const struct flame *f)
{
	return &f->stats;
}

int flame_is_diff(const struct flame *f)
{
	return f->diff;
}

uint32_t flame_node_count(const struct flame *f)
{
	return f->n;
}

const char *flame_node_name(const struct flame *f, uint32_t node, size_t *len)
{
	const struct flame_name *nm = &f->names[flame_nname(&f->nodes[node])];
	*len = nm->len;
	return f->pool + nm->off;
}

uint32_t flame_node_parent(const struct flame *f, uint32_t node)
{
	return f->nodes[node].parent;
}

uint32_t flame_node_child(const struct flame *f, uint32_t node)
{
	return f->nodes[node].child;
}

uint32_t flame_node_sibling(const struct flame *f, uint32_t node)
{
	return f->nodes[node].sibling;
}

uint64_t flame_node_total(const struct flame *f, uint32_t node)
{
	return f->nodes[node].total;
}

uint64_t flame_node_self(const struct flame *f, uint32_t node)
{
	return f->nodes[node].self;
}

uint64_t flame_node_total_a(const struct flame *f, uint32_t node)
{
	return f->acounts ? f->acounts[node].total : 0;
}

uint64_t flame_node_self_a(const struct flame *f, uint32_t node)
{
	return f->acounts ? f->acounts[node].self : 0;
}

uint32_t flame_find_child(const struct flame *f, uint32_t parent, const char *name, size_t len)
{
	uint32_t id = flame_name_lookup(f, name, len, flame_hash(name, len), NULL);
	if (id == FLAME_NONE)
		return FLAME_NONE;
	return flame_child_lookup(f, parent, id);
}

uint32_t flame_find(const struct flame *f, const char *stack, size_t len)
{
	uint32_t node = FLAME_ROOT;
	size_t pos = 0;
	while (len && pos <= len && node != FLAME_NONE) {
		const char *semi = memchr(stack + pos, ';', len - pos);
		size_t flen = semi ? (size_t)(semi - (stack + pos)) : len - pos;
		node = flame_find_child(f, node, stack + pos, flen);
		pos += flen + 1;
	}
	return node;
}
