/* pprof.c - see pprof.h. The protobuf-c message structs are built over
 * arrays owned by struct pprof_build (strings point into the export, not
 * copied), packed through a ProtobufCBuffer that feeds zlib. */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__ValueType pb_value_type;

/* A set of keys (strings, or arrays of frame indexes) with dense ids, by
 * open addressing over key index + 1. */
struct pprof_set {
	uint32_t *slots;
	size_t mask, n;
};

struct pprof_build {
	const struct export *x;
	/* string table: pointers into x or literals; strmap[i] = mapping id */
	const char **str;
	size_t nstr, str_cap;
	struct pprof_set strset;
	uint64_t *strmap;
	/* locations: frames of location i are locfr[locoff[i] .. locoff[i + 1]) */
	uint32_t *locfr;
	size_t nlocfr, locfr_cap;
	size_t *locoff;
	size_t nloc, loc_cap;
	struct pprof_set locset;
	/* mappings, in order of first use: their filename and build id
	 * string indexes */
	int64_t *mapfile, *mapbuild;
	size_t nmap;
	/* per sample: label arrays shared per (pid, root frame, tid, thread) */
	struct pprof_labels {
		uint64_t key, key2;
		size_t n;
		pb_label **arr;
		pb_label *lab;
		char *process; /* the process label's value */
	} * labsets;
	size_t nlabsets, labsets_cap;
	struct pprof_set labset;
};

static uint64_t pprof_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

static int pprof_set_init(struct pprof_set *s)
{
	s->slots = calloc(1024, sizeof(*s->slots));
	s->mask = 1023;
	s->n = 0;
	return s->slots ? 0 : -ENOMEM;
}

/* Double the set; hash_of(b, i) is the hash of key i. */
static int pprof_set_grow(struct pprof_set *s, struct pprof_build *b,
			  uint64_t (*hash_of)(struct pprof_build *, size_t))
{
	size_t n = (s->mask + 1) * 2;
	uint32_t *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = hash_of(b, i) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->mask = n - 1;
	return 0;
}

static uint64_t pprof_str_hash(struct pprof_build *b, size_t i)
{
	return pprof_hash(b->str[i], strlen(b->str[i]));
}

/* The string table index of s (added if new), or -ENOMEM. */
static int64_t pprof_str(struct pprof_build *b, const char *s)
{
	size_t n = strlen(s), j = pprof_hash(s, n) & b->strset.mask;
	for (; b->strset.slots[j]; j = (j + 1) & b->strset.mask)
		if (!strcmp(b->str[b->strset.slots[j] - 1], s))
			return b->strset.slots[j] - 1;
	if (export_grow((void **)&b->str, &b->str_cap, b->nstr + 1, sizeof(*b->str)) < 0)
		return -ENOMEM;
	uint64_t *m = realloc(b->strmap, b->str_cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	b->strmap = m;
	b->strmap[b->nstr] = 0;
	b->str[b->nstr] = s;
	b->strset.slots[j] = (uint32_t)b->nstr + 1;
	b->strset.n = ++b->nstr;
	if (b->nstr * 2 > b->strset.mask + 1 && pprof_set_grow(&b->strset, b, pprof_str_hash) < 0)
		return -ENOMEM;
	return (int64_t)b->nstr - 1;
}

/* The mapping id of a frame (0 = none), adding the mapping if new. */
static int pprof_mapping(struct pprof_build *b, const struct export_frame *f, uint64_t *id)
{
	/* the physical frame of a location: an inlined one only when a stack
	 * starts with it, then its mapping says so ("[inlined]") */
	const char *bucket = export_frame_file(f);
	*id = 0;
	if (!bucket)
		return 0;
	int64_t s = pprof_str(b, bucket);
	if (s < 0)
		return -ENOMEM;
	if (!b->strmap[s]) {
		/* mapping 1 is the "main binary" of readers: keep it nameless */
		int64_t *m = realloc(b->mapfile, (b->nmap + 2) * sizeof(*m));
		if (m)
			b->mapfile = m;
		int64_t *mb = m ? realloc(b->mapbuild, (b->nmap + 2) * sizeof(*mb)) : NULL;
		if (!mb)
			return -ENOMEM;
		b->mapbuild = mb;
		int64_t build = f->build_id ? pprof_str(b, f->build_id) : 0;
		if (build < 0)
			return -ENOMEM;
		if (!b->nmap) {
			b->mapbuild[b->nmap] = 0;
			b->mapfile[b->nmap++] = 0;
		}
		b->mapbuild[b->nmap] = build;
		b->mapfile[b->nmap++] = s;
		b->strmap[s] = b->nmap;
	}
	*id = b->strmap[s];
	return 0;
}

static uint64_t pprof_loc_hash(struct pprof_build *b, size_t i)
{
	return pprof_hash(b->locfr + b->locoff[i],
			  (b->locoff[i + 1] - b->locoff[i]) * sizeof(*b->locfr));
}

/* The location id (1-based) of frames fr[0..n) (a physical frame, then the
 * frames inlined into it, outermost first), added if new. */
static int pprof_location(struct pprof_build *b, const uint32_t *fr, size_t n, uint64_t *id)
{
	size_t bytes = n * sizeof(*fr), j = pprof_hash(fr, bytes) & b->locset.mask;
	for (; b->locset.slots[j]; j = (j + 1) & b->locset.mask) {
		size_t i = b->locset.slots[j] - 1;
		if (b->locoff[i + 1] - b->locoff[i] == n &&
		    !memcmp(b->locfr + b->locoff[i], fr, bytes)) {
			*id = i + 1;
			return 0;
		}
	}
	if (export_grow((void **)&b->locoff, &b->loc_cap, b->nloc + 2, sizeof(*b->locoff)) < 0 ||
	    export_grow((void **)&b->locfr, &b->locfr_cap, b->nlocfr + n, sizeof(*b->locfr)) < 0)
		return -ENOMEM;
	memcpy(b->locfr + b->nlocfr, fr, bytes);
	b->locoff[b->nloc] = b->nlocfr;
	b->nlocfr += n;
	b->locoff[b->nloc + 1] = b->nlocfr;
	b->locset.slots[j] = (uint32_t)b->nloc + 1;
	b->locset.n = ++b->nloc;
	*id = b->nloc;
	if (b->nloc * 2 > b->locset.mask + 1 && pprof_set_grow(&b->locset, b, pprof_loc_hash) < 0)
		return -ENOMEM;
	return 0;
}

static uint64_t pprof_labset_hash(struct pprof_build *b, size_t i)
{
	uint64_t k[2] = {b->labsets[i].key, b->labsets[i].key2};
	return pprof_hash(k, sizeof(k));
}

/* Add numeric label key = num to lab[*k]. 0 or -ENOMEM. */
static int pprof_label_num(struct pprof_build *b, pb_label *lab, size_t *k, const char *key,
			   int64_t num)
{
	int64_t key_s = pprof_str(b, key);
	if (key_s < 0)
		return -ENOMEM;
	perftools__profiles__label__init(&lab[*k]);
	lab[*k].key = key_s;
	lab[(*k)++].num = num;
	return 0;
}

/* Add string label key = value to lab[*k]. 0 or -ENOMEM. */
static int pprof_label_str(struct pprof_build *b, pb_label *lab, size_t *k, const char *key,
			   const char *value)
{
	int64_t key_s = pprof_str(b, key), val_s = pprof_str(b, value);
	if (key_s < 0 || val_s < 0)
		return -ENOMEM;
	perftools__profiles__label__init(&lab[*k]);
	lab[*k].key = key_s;
	lab[(*k)++].str = val_s;
	return 0;
}

/* The label array of samples like es (*n labels): same pid, root frame,
 * tid and thread name (cached). */
static pb_label **pprof_labels(struct pprof_build *b, const struct export_sample *es, size_t *n)
{
	const struct export *x = b->x;
	pid_t pid = es->pid;
	uint32_t root = x->stack[es->off];
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (x->root_is_process ? root : 0);
	uint64_t key2 = (uint64_t)(uint32_t)es->tid << 32 | es->thread;
	uint64_t k2[2] = {key, key2};
	size_t j = pprof_hash(k2, sizeof(k2)) & b->labset.mask;
	for (; b->labset.slots[j]; j = (j + 1) & b->labset.mask) {
		const struct pprof_labels *ls = &b->labsets[b->labset.slots[j] - 1];
		if (ls->key == key && ls->key2 == key2) {
			*n = ls->n;
			return ls->arr;
		}
	}
	if (export_grow((void **)&b->labsets, &b->labsets_cap, b->nlabsets + 1,
			sizeof(*b->labsets)) < 0)
		return NULL;
	*n = x->nlabels + (pid > 0) + (x->root_is_process != 0) + (es->tid > 0) + (es->thread > 0);
	pb_label **arr = calloc(*n + 1, sizeof(*arr));
	pb_label *lab = calloc(*n + 1, sizeof(*lab));
	char *process = NULL;
	if (x->root_is_process) {
		const char *name;
		size_t len = export_process_name(x, es, &name);
		process = strndup(name, len);
	}
	if (!arr || !lab || (x->root_is_process && !process))
		goto fail;
	size_t k = 0;
	for (size_t i = 0; i < x->nlabels; i++)
		if (pprof_label_str(b, lab, &k, x->labels[i].key, x->labels[i].value) < 0)
			goto fail;
	if ((pid > 0 && pprof_label_num(b, lab, &k, "pid", pid) < 0) ||
	    (x->root_is_process && pprof_label_str(b, lab, &k, "process", process) < 0) ||
	    (es->tid > 0 && pprof_label_num(b, lab, &k, "tid", es->tid) < 0) ||
	    (es->thread > 0 &&
	     pprof_label_str(b, lab, &k, "thread", x->threads[es->thread - 1]) < 0))
		goto fail;
	for (size_t i = 0; i < k; i++)
		arr[i] = &lab[i];
	b->labsets[b->nlabsets++] = (struct pprof_labels){
	    .key = key, .key2 = key2, .n = k, .arr = arr, .lab = lab, .process = process};
	b->labset.slots[j] = (uint32_t)b->nlabsets;
	b->labset.n = b->nlabsets;
	if (b->nlabsets * 2 > b->labset.mask + 1 &&
	    pprof_set_grow(&b->labset, b, pprof_labset_hash) < 0)
		return NULL;
	return arr;
fail:
	free(arr);
	free(lab);
	free(process);
	return NULL;
}

/* Fill s from export sample es: location ids (leaf first) into locs (room
 * for es->depth), values into vals[2]. */
static int pprof_sample(struct pprof_build *b, const struct export_sample *es, pb_sample *s,
			uint64_t *locs, int64_t *vals)
{
	const struct export *x = b->x;
	const uint32_t *fr = x->stack + es->off;
	size_t n = 0;
	perftools__profiles__sample__init(s);
	/* group root-first frames: a physical frame and the _[i] frames after it */
	for (size_t i = 0; i < es->depth;) {
		size_t k = i + 1;
		while (k < es->depth && x->frames[fr[k]].kind == EXPORT_KIND_INLINED)
			k++;
		if (pprof_location(b, fr + i, k - i, &locs[n++]) < 0)
			return -ENOMEM;
		i = k;
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint64_t t = locs[i];
		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	s->n_location_id = n;
	s->location_id = locs;
	uint64_t c = es->count > INT64_MAX ? INT64_MAX : es->count;
	vals[0] = (int64_t)c;
	vals[1] = x->period_ns && c <= (uint64_t)INT64_MAX / x->period_ns
		      ? (int64_t)(c * x->period_ns)
		      : (x->period_ns ? INT64_MAX : 0);
	s->n_value = 2;
	s->value = vals;
	size_t nl = 0;
	if (!(s->label = pprof_labels(b, es, &nl)))
		return -ENOMEM;
	s->n_label = nl;
	return 0;
}

/* Everything but the samples: string table, functions, mappings,
 * locations (already collected), value types. Arrays go into *m (freed
 * by pprof_message_free). */
struct pprof_message {
	pb_profile prof;
	pb_sample *samples;
	pb_sample **sample_ptrs;
	uint64_t *locs;
	int64_t *vals;
	pb_function *fns;
	pb_function **fn_ptrs;
	pb_location *locations;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	pb_mapping *maps;
	pb_mapping **map_ptrs;
	pb_value_type vt[3];
	pb_value_type *vt_ptrs[2];
};

static void pprof_message_free(struct pprof_message *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->locs);
	free(m->vals);
	free(m->fns);
	free(m->fn_ptrs);
	free(m->locations);
	free(m->loc_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->maps);
	free(m->map_ptrs);
}

static void pprof_build_free(struct pprof_build *b)
{
	free(b->str);
	free(b->strset.slots);
	free(b->strmap);
	free(b->locfr);
	free(b->locoff);
	free(b->locset.slots);
	free(b->mapfile);
	free(b->mapbuild);
	for (size_t i = 0; i < b->nlabsets; i++) {
		free(b->labsets[i].lab);
		free(b->labsets[i].process);
		free(b->labsets[i].arr);
	}
	free(b->labsets);
	free(b->labset.slots);
}

static int pprof_samples(struct pprof_build *b, struct pprof_message *m)
{
	const struct export *x = b->x;
	m->samples = calloc(x->nsamples ? x->nsamples : 1, sizeof(*m->samples));
	m->sample_ptrs = calloc(x->nsamples ? x->nsamples : 1, sizeof(*m->sample_ptrs));
	m->locs = calloc(x->nstack ? x->nstack : 1, sizeof(*m->locs));
	m->vals = calloc(x->nsamples ? 2 * x->nsamples : 1, sizeof(*m->vals));
	if (!m->samples || !m->sample_ptrs || !m->locs || !m->vals)
		return -ENOMEM;
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct export_sample *es = &x->samples[i];
		if (pprof_sample(b, es, &m->samples[i], m->locs + es->off, m->vals + 2 * i) < 0)
			return -ENOMEM;
		m->sample_ptrs[i] = &m->samples[i];
	}
	m->prof.n_sample = x->nsamples;
	m->prof.sample = m->sample_ptrs;
	return 0;
}

/* One function per frame (id = frame index + 1). */
static int pprof_functions(struct pprof_build *b, struct pprof_message *m)
{
	const struct export *x = b->x;
	size_t n = x->nframes ? x->nframes : 1;
	m->fns = calloc(n, sizeof(*m->fns));
	m->fn_ptrs = calloc(n, sizeof(*m->fn_ptrs));
	if (!m->fns || !m->fn_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < x->nframes; i++) {
		pb_function *f = &m->fns[i];
		perftools__profiles__function__init(f);
		int64_t name = pprof_str(b, x->frames[i].name),
			sys = pprof_str(b, x->frames[i].text);
		if (name < 0 || sys < 0)
			return -ENOMEM;
		f->id = i + 1;
		f->name = name;
		f->system_name = sys;
		m->fn_ptrs[i] = f;
	}
	m->prof.n_function = x->nframes;
	m->prof.function = m->fn_ptrs;
	return 0;
}

/* The collected locations: lines innermost first; the mapping of the
 * physical (outermost) frame. */
static int pprof_locations(struct pprof_build *b, struct pprof_message *m)
{
	const struct export *x = b->x;
	m->locations = calloc(b->nloc ? b->nloc : 1, sizeof(*m->locations));
	m->loc_ptrs = calloc(b->nloc ? b->nloc : 1, sizeof(*m->loc_ptrs));
	m->lines = calloc(b->nlocfr ? b->nlocfr : 1, sizeof(*m->lines));
	m->line_ptrs = calloc(b->nlocfr ? b->nlocfr : 1, sizeof(*m->line_ptrs));
	if (!m->locations || !m->loc_ptrs || !m->lines || !m->line_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->nloc; i++) {
		pb_location *l = &m->locations[i];
		size_t off = b->locoff[i], n = b->locoff[i + 1] - off;
		perftools__profiles__location__init(l);
		l->id = i + 1;
		if (pprof_mapping(b, &x->frames[b->locfr[off]], &l->mapping_id) < 0)
			return -ENOMEM;
		for (size_t k = 0; k < n; k++) {
			pb_line *ln = &m->lines[off + k];
			perftools__profiles__line__init(ln);
			ln->function_id = (uint64_t)b->locfr[off + n - 1 - k] + 1;
			m->line_ptrs[off + k] = ln;
		}
		l->n_line = n;
		l->line = m->line_ptrs + off;
		m->loc_ptrs[i] = l;
	}
	m->prof.n_location = b->nloc;
	m->prof.location = m->loc_ptrs;
	return 0;
}

static int pprof_mappings(struct pprof_build *b, struct pprof_message *m)
{
	m->maps = calloc(b->nmap ? b->nmap : 1, sizeof(*m->maps));
	m->map_ptrs = calloc(b->nmap ? b->nmap : 1, sizeof(*m->map_ptrs));
	if (!m->maps || !m->map_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->nmap; i++) {
		pb_mapping *mp = &m->maps[i];
		perftools__profiles__mapping__init(mp);
		mp->id = i + 1;
		mp->filename = b->mapfile[i];
		mp->build_id = b->mapbuild[i];
		mp->has_functions = 1;
		mp->has_inline_frames = 1;
		m->map_ptrs[i] = mp;
	}
	m->prof.n_mapping = b->nmap;
	m->prof.mapping = m->map_ptrs;
	return 0;
}

static int pprof_value_types(struct pprof_build *b, struct pprof_message *m)
{
	int64_t samples = pprof_str(b, "samples"), count = pprof_str(b, "count");
	int64_t cpu = pprof_str(b, "cpu"), ns = pprof_str(b, "nanoseconds");
	if (b->x->time_type) { /* counts are microseconds of that time */
		samples = cpu = pprof_str(b, b->x->time_type);
		count = pprof_str(b, "microseconds");
	}
	if (samples < 0 || count < 0 || cpu < 0 || ns < 0)
		return -ENOMEM;
	for (int i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&m->vt[i]);
	m->vt[0].type = samples;
	m->vt[0].unit = count;
	m->vt[1].type = cpu;
	m->vt[1].unit = ns;
	m->vt[2] = m->vt[1];
	m->vt_ptrs[0] = &m->vt[0];
	m->vt_ptrs[1] = &m->vt[1];
	m->prof.n_sample_type = 2;
	m->prof.sample_type = m->vt_ptrs;
	m->prof.period_type = &m->vt[2];
	m->prof.period = (int64_t)(b->x->period_ns > INT64_MAX ? INT64_MAX : b->x->period_ns);
	m->prof.time_nanos = b->x->time_ns;
	m->prof.duration_nanos = b->x->duration_ns;
	m->prof.default_sample_type = cpu;
	return 0;
}

/* Build the whole message over b and m. 0 or -ENOMEM. */
static int pprof_build_message(const struct export *x, struct pprof_build *b,
			       struct pprof_message *m)
{
	memset(b, 0, sizeof(*b));
	memset(m, 0, sizeof(*m));
	b->x = x;
	perftools__profiles__profile__init(&m->prof);
	if (pprof_set_init(&b->strset) < 0 || pprof_set_init(&b->locset) < 0 ||
	    pprof_set_init(&b->labset) < 0 || pprof_str(b, "") != 0 ||
	    pprof_value_types(b, m) < 0 || pprof_samples(b, m) < 0 || pprof_functions(b, m) < 0 ||
	    pprof_locations(b, m) < 0 || pprof_mappings(b, m) < 0)
		return -ENOMEM;
	m->prof.n_string_table = b->nstr;
	m->prof.string_table = (char **)b->str;
	return 0;
}

/* A ProtobufCBuffer that deflates into a FILE (gzip framing). */
struct pprof_gz {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int failed;
	unsigned char buf[1 << 16];
};

static void pprof_gz_run(struct pprof_gz *g, const uint8_t *data, size_t len, int flush)
{
	g->z.next_in = (Bytef *)data;
	g->z.avail_in = (uInt)len;
	do {
		g->z.next_out = g->buf;
		g->z.avail_out = sizeof(g->buf);
		int zr = deflate(&g->z, flush);
		if (zr == Z_STREAM_ERROR) {
			g->failed = EIO;
			return;
		}
		size_t have = sizeof(g->buf) - g->z.avail_out;
		if (have && fwrite(g->buf, 1, have, g->out) != have) {
			g->failed = errno ? errno : EIO;
			return;
		}
		if (flush == Z_FINISH && zr == Z_STREAM_END)
			return;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH));
}

static void pprof_gz_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct pprof_gz *g = (struct pprof_gz *)buffer;
	/* avail_in is 32 bits: feed large runs in pieces */
	while (len && !g->failed) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		pprof_gz_run(g, data, n, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

int pprof_write(const struct export *x, FILE *out, struct fs_error *err)
{
	struct pprof_build b;
	struct pprof_message m;
	int r = pprof_build_message(x, &b, &m);
	if (r < 0) {
		pprof_message_free(&m);
		pprof_build_free(&b);
		return fs_error_set(err, ENOMEM, "building the pprof profile");
	}
	struct pprof_gz *g = calloc(1, sizeof(*g));
	/* windowBits 15 + 16: gzip framing; level 1 like Go's runtime/pprof */
	if (!g ||
	    deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		pprof_message_free(&m);
		pprof_build_free(&b);
		return fs_error_set(err, ENOMEM, "starting gzip");
	}
	g->base.append = pprof_gz_append;
	g->out = out;
	perftools__profiles__profile__pack_to_buffer(&m.prof, &g->base);
	if (!g->failed)
		pprof_gz_run(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->z);
	r = g->failed ? fs_error_set(err, g->failed, "writing the pprof profile") : 0;
	free(g);
	pprof_message_free(&m);
	pprof_build_free(&b);
	return r;
}

int pprof_encode(const struct export *x, unsigned char **buf, size_t *len, struct fs_error *err)
{
	struct pprof_build b;
	struct pprof_message m;
	int r = pprof_build_message(x, &b, &m);
	*buf = NULL;
	*len = 0;
	if (r == 0) {
		size_t n = perftools__profiles__profile__get_packed_size(&m.prof);
		if ((*buf = malloc(n ? n : 1))) {
			*len = perftools__profiles__profile__pack(&m.prof, *buf);
		} else
			r = -ENOMEM;
	}
	pprof_message_free(&m);
	pprof_build_free(&b);
	return r < 0 ? fs_error_set(err, ENOMEM, "building the pprof profile") : 0;
}
