/* symbols.c - see symbols.h */
#include "symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>

#include "cleanup.h"
#include "elfsource.h"
#include "elfsyms.h"
#include "kallsyms.h"
#include "jitlog.h"
#include "perfmap.h"
#include "procmaps.h"
#include "symcache.h"
#include "timeutil.h"
#include "utf8.h"

#define SYMBOLIZER_BUCKETS    1024
#define SYMBOLIZER_JIT_MAX    BUDGET_MAX_JVMS
#define SYMBOLIZER_ARENA      (SYMBOLIZER_MAX_FRAMES * 1024)
#define SYMBOLIZER_KERNEL_MIN 0xffff800000000000ull

struct symfile {
	struct procmaps_file_id id;
	unsigned char build_id[ELFSYMS_BUILD_ID_MAX];
	size_t build_id_len;
	struct elfsyms *es; /* NULL: could not be read (negative cache) */
	int shared;	    /* es belongs to another entry (same build-id) */
};

/* A mapping's procmaps `user` word: 0 not looked at yet, SYMMAP_TRIED no
 * file (negative cache), else its struct symfile *. */
#define SYMMAP_TRIED ((uintptr_t)1)
static inline struct symfile *symmap_file(const struct procmaps_map *m)
{
	return m->user > SYMMAP_TRIED ? (struct symfile *)m->user : NULL;
}

struct sympid {
	pid_t pid;
	struct sympid *next;
	struct procmaps pm; /* executable mappings (procmaps.h) */
	uint64_t loaded_ms;
	int gone;
	uint32_t serial; /* its key in the frame cache (symcache.h): new for each sympid */
	char comm[17];
};

struct symjit {
	pid_t pid;
	symbolizer_jit_fn fn;
	void *ctx;
};

struct symbolizer {
	struct symbolizer_opts opts;
	char proc_root[256];
	int fake_proc; /* opts.proc_root was given (tests) */
	struct kallsyms *ks;
	int ks_tried;
	struct elfsyms *vdso;
	int vdso_tried;
	struct sympid *buckets[SYMBOLIZER_BUCKETS];
	size_t npids;
	struct symfile **files;
	size_t nfiles;
	size_t elf_memory;
	struct symjit jit[SYMBOLIZER_JIT_MAX];
	size_t njit;
	symbolizer_method_fn method_fn;
	void *method_ctx;
	struct symbolizer_stats st;
	struct elfsource *elf;	/* container ELF files are parsed through it, never here */
	uint64_t time;		/* of the callchains being symbolized */
	struct symcache *cache; /* frames other than JIT code (NULL: none) */
	uint32_t serials;	/* the last sympid serial given */
	/* the mapping and file of the last native frame looked up (valid
	 * until the maps are read again): its module and build id */
	const char *last_module;
	const struct symfile *last_file;
	char arena[SYMBOLIZER_ARENA];
	size_t arena_len;
};

/* Copy s (n bytes) into the per-call arena, or NULL when it is full. */
static const char *symbolizer_keep_n(struct symbolizer *sym, const char *s, size_t n)
{
	if (sym->arena_len + n + 1 > sizeof(sym->arena))
		return NULL;
	char *p = sym->arena + sym->arena_len;
	memcpy(p, s, n);
	p[n] = '\0';
	sym->arena_len += n + 1;
	return p;
}

/* Copy into the per-call arena; a full arena gives a fixed label. */
static const char *symbolizer_keep(struct symbolizer *sym, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	if (sym->arena_len + la + lb + 1 > sizeof(sym->arena))
		return "[truncated]";
	char *p = sym->arena + sym->arena_len;
	memcpy(p, a, la);
	if (lb)
		memcpy(p + la, b, lb);
	p[la + lb] = '\0';
	sym->arena_len += la + lb + 1;
	return p;
}

int symbolizer_open(const struct symbolizer_opts *opts, struct symbolizer **out,
		    struct fs_error *err)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));
	if (!sym)
		return fs_error_set(err, ENOMEM, "allocating the symbolizer");
	if (opts)
		sym->opts = *opts;
	const char *root = sym->opts.proc_root ? sym->opts.proc_root : "/proc";
	if (strlen(root) >= sizeof(sym->proc_root)) {
		free(sym);
		return fs_error_set(err, ENAMETOOLONG, "symbolizer: proc root '%s'", root);
	}
	strcpy(sym->proc_root, root);
	sym->cache = symcache_new(); /* none on ENOMEM: slower, not wrong */
	sym->fake_proc = sym->opts.proc_root != NULL;
	sym->opts.proc_root = NULL;
	struct elfsource_opts eo = {sym->opts.warn, sym->opts.warn_ctx};
	int r = elfsource_new(&eo, &sym->elf, err);
	if (r < 0) {
		free(sym);
		return r;
	}
	*out = sym;
	return 0;
}

static void symbolizer_free_pid(struct sympid *sp)
{
	procmaps_release(&sp->pm);
	free(sp);
}

static void symbolizer_drop_pids(struct symbolizer *sym)
{
	for (size_t b = 0; b < SYMBOLIZER_BUCKETS; b++) {
		struct sympid *sp = sym->buckets[b];
		while (sp) {
			struct sympid *next = sp->next;
			symbolizer_free_pid(sp);
			sp = next;
		}
		sym->buckets[b] = NULL;
	}
	sym->npids = 0;
}

void symbolizer_close(struct symbolizer *sym)
{
	if (!sym)
		return;
	symbolizer_drop_pids(sym);
	for (size_t i = 0; i < sym->nfiles; i++) {
		if (!sym->files[i]->shared)
			elfsyms_free(sym->files[i]->es);
		free(sym->files[i]);
	}
	free(sym->files);
	kallsyms_free(sym->ks);
	elfsyms_free(sym->vdso);
	elfsource_free(sym->elf);
	symcache_free(sym->cache);
	free(sym);
}

int symbolizer_set_jit(struct symbolizer *sym, pid_t pid, symbolizer_jit_fn fn, void *ctx)
{
	for (size_t i = 0; i < sym->njit; i++) {
		if (sym->jit[i].pid != pid)
			continue;
		if (fn) {
			sym->jit[i].fn = fn;
			sym->jit[i].ctx = ctx;
		} else {
			sym->jit[i] = sym->jit[--sym->njit];
		}
		return 0;
	}
	if (!fn)
		return 0;
	if (sym->njit == SYMBOLIZER_JIT_MAX)
		return -ENOSPC;
	sym->jit[sym->njit++] = (struct symjit){pid, fn, ctx};
	return 0;
}

void symbolizer_set_method(struct symbolizer *sym, symbolizer_method_fn fn, void *ctx)
{
	sym->method_fn = fn;
	sym->method_ctx = ctx;
}

/* snprintf(buf, len, "%s", s) without printf's machinery: the end of
 * the window copies one name per JIT frame. len > 0. */
static void symbolizer_copy(char *buf, size_t len, const char *s)
{
	size_t n = strnlen(s, len - 1);
	memcpy(buf, s, n);
	buf[n] = '\0';
}

int symbolizer_jit_jitlog(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf, size_t len)
{
	const char *name = jitlog_lookup(ctx, addr, time);
	if (!name || len == 0)
		return 0;
	symbolizer_copy(buf, len, name);
	return 1;
}

void symbolizer_set_time(struct symbolizer *sym, uint64_t time)
{
	sym->time = time;
}

int symbolizer_jit_perfmap(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf,
			   size_t len)
{
	const struct perfmap_entry *e = perfmap_lookup(ctx, addr);
	if (!e || len == 0)
		return 0;
	symbolizer_copy(buf, len, e->name);
	return 1;
}

static const struct symjit *symbolizer_jit_for(const struct symbolizer *sym, pid_t pid)
{
	const struct symjit *any = NULL;
	for (size_t i = 0; i < sym->njit; i++) {
		if (sym->jit[i].pid == pid)
			return &sym->jit[i];
		if (sym->jit[i].pid == 0)
			any = &sym->jit[i];
	}
	return any;
}

/* ---- /proc/<pid>/maps --------------------------------------------------- */

static struct sympid *symbolizer_find_pid(struct symbolizer *sym, pid_t pid)
{
	for (struct sympid *sp = sym->buckets[(unsigned)pid % SYMBOLIZER_BUCKETS]; sp;
	     sp = sp->next)
		if (sp->pid == pid)
			return sp;
	return NULL;
}

static void symbolizer_read_comm(struct symbolizer *sym, struct sympid *sp)
{
	char path[320];
	snprintf(path, sizeof(path), "%s/%d/comm", sym->proc_root, (int)sp->pid);
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t r = read(fd, sp->comm, sizeof(sp->comm) - 1);
	if (r <= 0)
		return;
	sp->comm[r] = '\0';
	char *nl = strchr(sp->comm, '\n');
	if (nl)
		*nl = '\0';
}

/* Drop the maps of every process (over the budget): each is read again
 * on its next lookup. */
static void symbolizer_release_maps(struct symbolizer *sym)
{
	for (size_t b = 0; b < SYMBOLIZER_BUCKETS; b++)
		for (struct sympid *sp = sym->buckets[b]; sp; sp = sp->next) {
			procmaps_release(&sp->pm);
			sp->loaded_ms = 0;
		}
}

/* (Re)read pid's maps into sp. The maps of all processes share one
 * budget (procmaps.h): past it, every other process's maps are dropped
 * (read again when next needed) and this one is tried once more. */
static int symbolizer_read_maps(struct symbolizer *sym, struct sympid *sp, struct fs_error *err)
{
	sp->loaded_ms = timeutil_now_ms();
	sym->st.maps_reads++;
	struct procmaps fresh;
	int r = procmaps_read(sym->fake_proc ? sym->proc_root : NULL, sp->pid, &fresh, err);
	if (r == -ENOSPC) {
		procmaps_release(&sp->pm); /* its own old maps first */
		symbolizer_release_maps(sym);
		fs_error_clear(err);
		r = procmaps_read(sym->fake_proc ? sym->proc_root : NULL, sp->pid, &fresh, err);
	}
	if (r < 0) {
		if (r != -ENOSPC && r != -ENOMEM)
			sp->gone = 1;
		return r;
	}
	if (fresh.n == 0) {
		procmaps_release(&fresh);
		sp->gone = 1; /* a zombie or kernel thread: nothing mapped */
		return 0;
	}
	/* Keep resolved files of mappings that did not change. */
	procmaps_carry(&fresh, &sp->pm);
	procmaps_release(&sp->pm);
	sp->pm = fresh;
	sp->gone = 0;
	return 0;
}

static struct sympid *symbolizer_get_pid(struct symbolizer *sym, pid_t pid, struct fs_error *err)
{
	struct sympid *sp = symbolizer_find_pid(sym, pid);
	if (sp)
		return sp;
	if (sym->npids >= SYMBOLIZER_MAX_PIDS)
		symbolizer_drop_pids(sym); /* bounded: start over (ELF tables stay) */
	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		fs_error_set(err, ENOMEM, "caching pid %d", (int)pid);
		return NULL;
	}
	sp->pid = pid;
	sp->serial = ++sym->serials ? sym->serials : ++sym->serials; /* 0 is the kernel's */
	unsigned b = (unsigned)pid % SYMBOLIZER_BUCKETS;
	sp->next = sym->buckets[b];
	sym->buckets[b] = sp;
	sym->npids++;
	symbolizer_read_comm(sym, sp);
	symbolizer_read_maps(sym, sp, err);
	return sp;
}

int symbolizer_load_pid(struct symbolizer *sym, pid_t pid, struct fs_error *err)
{
	struct sympid *sp = symbolizer_find_pid(sym, pid);
	if (sp)
		return symbolizer_read_maps(sym, sp, err);
	fs_error_clear(err);
	sp = symbolizer_get_pid(sym, pid, err);
	if (!sp)
		return -ENOMEM;
	return sp->gone && err && err->code ? -err->code : 0;
}

void symbolizer_forget_pid(struct symbolizer *sym, pid_t pid)
{
	struct sympid **pp = &sym->buckets[(unsigned)pid % SYMBOLIZER_BUCKETS];
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct sympid *sp = *pp;
			*pp = sp->next;
			symbolizer_free_pid(sp);
			sym->npids--;
			return;
		}
	}
}

const char *symbolizer_comm(struct symbolizer *sym, pid_t pid)
{
	struct sympid *sp = symbolizer_get_pid(sym, pid, NULL);
	return sp && sp->comm[0] ? sp->comm : NULL;
}

/* ---- ELF files ---------------------------------------------------------- */

static int symbolizer_add_file(struct symbolizer *sym, struct symfile *f)
{
	if (sym->nfiles % 64 == 0) {
		struct symfile **p = realloc(sym->files, (sym->nfiles + 64) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		sym->files = p;
	}
	sym->files[sym->nfiles++] = f;
	return 0;
}

/* The file's symbols, parsed in the ELF sandbox (elfsource.h); identical
 * files (same build-id) then share one table. */
static void symbolizer_parse_file(struct symbolizer *sym, pid_t pid, const char *path,
				  const char *label, int fd, struct symfile *f)
{
	if (elfsource_load(sym->elf, fd, f->id.size, label, &f->es) < 0) {
		sym->st.elf_failed++;
		return;
	}
	sym->st.elf_loaded++;
	const unsigned char *id = elfsyms_build_id(f->es, &f->build_id_len);
	if (f->build_id_len)
		memcpy(f->build_id, id, f->build_id_len);
	for (size_t i = 0; f->build_id_len && i < sym->nfiles; i++) {
		struct symfile *o = sym->files[i];
		if (o->es && !o->shared && o->build_id_len == f->build_id_len &&
		    !memcmp(o->build_id, f->build_id, f->build_id_len)) {
			elfsyms_free(f->es);
			f->es = o->es;
			f->shared = 1;
			sym->st.elf_shared++;
			return;
		}
	}
	if (sym->opts.debug)
		sym->opts.debug(sym->opts.debug_ctx, pid, fd, path, label, sym->elf, &f->es);
	sym->elf_memory += elfsyms_memory(f->es);
}

/* The symbols of mapping m (label: its "[name]") of pid, parsed once. */
static struct symfile *symbolizer_file(struct symbolizer *sym, pid_t pid, struct procmaps_map *m,
				       const char *label, const char *mapped)
{
	if (m->user)
		return symmap_file(m);
	m->user = SYMMAP_TRIED;
	char link[320];
	procmaps_map_file(sym->proc_root, pid, m, link, sizeof(link));
	struct stat st;
	cleanup_close int fd = elfsource_open(sym->elf, sym->opts.proc_root ? 0 : pid, link, &st);
	if (fd < 0)
		return NULL;
	for (size_t i = 0; i < sym->nfiles; i++) {
		struct symfile *f = sym->files[i];
		if (procmaps_file_id_same(&f->id, &st)) {
			m->user = (uintptr_t)f;
			return f;
		}
	}
	if (sym->nfiles >= SYMBOLIZER_MAX_FILES || sym->elf_memory >= SYMBOLIZER_MAX_ELF_MEMORY)
		return NULL;
	struct symfile *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	procmaps_file_id_set(&f->id, &st);
	symbolizer_parse_file(sym, pid, mapped, label, fd, f);
	if (symbolizer_add_file(sym, f) < 0) {
		if (!f->shared)
			elfsyms_free(f->es);
		free(f);
		return NULL;
	}
	m->user = (uintptr_t)f;
	return f;
}

/* Our own vDSO: the kernel maps the same image into every process. */
static struct elfsyms *symbolizer_vdso(struct symbolizer *sym)
{
	if (sym->vdso_tried)
		return sym->vdso;
	sym->vdso_tried = 1;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	cleanup_fclose FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	cleanup_free char *line = NULL;
	size_t cap = 0;
	unsigned long long start, end;
	while (getline(&line, &cap, f) > 0) {
		if (!strstr(line, "[vdso]"))
			continue;
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && start == base && end > start &&
		    end - start <= (1u << 20))
			elfsyms_load_mem((const void *)(uintptr_t)start, end - start, &sym->vdso,
					 NULL);
		break;
	}
	return sym->vdso;
}

/* ---- lookups ------------------------------------------------------------ */

static const char *symbolizer_kernel(struct symbolizer *sym, uint64_t addr, int *resolved)
{
	if (!sym->ks_tried) {
		sym->ks_tried = 1;
		if (kallsyms_load(sym->opts.kallsyms_path, &sym->ks, NULL) < 0)
			sym->ks = NULL;
	}
	const char *suffix = (sym->opts.flags & SYMBOLIZER_NO_KERNEL_SUFFIX) ? NULL : "_[k]";
	const char *name = kallsyms_lookup(sym->ks, addr, NULL, NULL);
	*resolved = name != NULL;
	return symbolizer_keep(sym, name ? name : "[kernel.kallsyms]", suffix);
}

static const char *symbolizer_jit(struct symbolizer *sym, pid_t pid, uint64_t addr, int *resolved)
{
	const struct symjit *j = symbolizer_jit_for(sym, pid);
	char buf[SYMBOLIZER_NAME_MAX];
	if (j && j->fn(j->ctx, pid, addr, sym->time, buf, sizeof(buf)) == 1) {
		buf[sizeof(buf) - 1] = '\0';
		*resolved = 1;
		return symbolizer_keep(sym, buf,
				       (sym->opts.flags & SYMBOLIZER_JIT_SUFFIX) ? "_[j]" : NULL);
	}
	return NULL;
}

/* leaf: addr is the interrupted pc, not a return address. A JIT map in
 * HotSpot's layout (agentmap.h) gives a range the code leading up to its
 * pc, so the JIT lookup of a leaf is at addr + 1, as JFR's
 * pc_desc_near(pc + 1); return addresses come here already as ret - 1. */
static const char *symbolizer_user(struct symbolizer *sym, struct sympid *sp, uint64_t addr,
				   int leaf, enum symbolizer_kind *kind, int *resolved)
{
	struct procmaps_map *m = procmaps_find(&sp->pm, addr);
	if (!m && !sp->gone && timeutil_now_ms() - sp->loaded_ms >= SYMBOLIZER_REFRESH_MS) {
		symbolizer_read_maps(sym, sp, NULL); /* new mapping since (dlopen, JIT) */
		m = procmaps_find(&sp->pm, addr);
	}
	if (!m || m->type == PROCMAPS_ANON) {
		*kind = m ? SYMBOLIZER_KIND_JIT : SYMBOLIZER_KIND_UNKNOWN;
		const char *name = symbolizer_jit(sym, sp->pid, addr + (leaf ? 1 : 0), resolved);
		if (name) {
			*kind = SYMBOLIZER_KIND_JIT;
			return name;
		}
		return "[unknown]";
	}
	*kind = SYMBOLIZER_KIND_NATIVE;
	struct elfsyms *es = NULL;
	uint64_t off = addr - m->start + m->pgoff;
	/* its module: the path as the process sees it, or "[vdso]" */
	uint32_t mod = m->path ? m->path : m->label;
	sym->last_module = mod ? sp->pm.labels + mod : NULL;
	if (m->type == PROCMAPS_VDSO) {
		es = symbolizer_vdso(sym);
		off = addr - m->start;
	} else if (m->type == PROCMAPS_FILE) {
		struct symfile *f = symbolizer_file(sym, sp->pid, m, sp->pm.labels + m->label,
						    m->path ? sp->pm.labels + m->path : NULL);
		es = f ? f->es : NULL;
		sym->last_file = f;
	}
	uint64_t vaddr;
	const char *name = NULL;
	if (es && elfsyms_offset_to_vaddr(es, off, &vaddr) == 0)
		name = elfsyms_lookup(es, vaddr, NULL);
	*resolved = name != NULL;
	/* The label is copied: a later frame of the same chain may re-read
	 * the maps (a miss), which frees every label of the old ones. Handing
	 * out m->label itself left a dangling name in the chain: the garbage
	 * frame seen between libjvm and the kernel (an unresolved libc frame,
	 * then a JIT address newer than the cached maps). */
	return name ? name : symbolizer_keep(sym, procmaps_label(&sp->pm, m), NULL);
}

/* "a->b->c" of a C1 frame: "a_[1]->b->c" (the compiled method is the
 * first of an inline chain). */
static const char *symbolizer_mark_c1(struct symbolizer *sym, const char *name)
{
	char buf[SYMBOLIZER_NAME_MAX];
	const char *arrow = strstr(name, "->");
	size_t head = arrow ? (size_t)(arrow - name) : strlen(name);
	if (head + 5 > sizeof(buf) || (head >= 4 && !memcmp(name + head - 4, "_[", 2)))
		return name; /* too long, or already marked */
	memcpy(buf, name, head);
	memcpy(buf + head, "_[1]", 5);
	return symbolizer_keep(sym, buf, arrow);
}

/* An interpreted frame (a tagged Method*, see symbols.h): "class.method_[0]". */
static const char *symbolizer_method(struct symbolizer *sym, pid_t pid, uint64_t word,
				     int *resolved)
{
	char buf[SYMBOLIZER_NAME_MAX];
	uint64_t method = word & SYMBOLIZER_METHOD_MASK;
	if (sym->method_fn &&
	    sym->method_fn(sym->method_ctx, pid, method, sym->time, buf, sizeof(buf)) == 1) {
		buf[sizeof(buf) - 1] = '\0';
		*resolved = 1;
		return symbolizer_keep(sym, buf, "_[0]");
	}
	return "Interpreter_[0]";
}

static const char *symbolizer_one(struct symbolizer *sym, struct sympid *sp, uint64_t addr,
				  int kernel, int leaf, enum symbolizer_kind *kind, int *resolved)
{
	const char *name;
	*resolved = 0;
	sym->last_module = NULL;
	sym->last_file = NULL;
	if (!kernel && sp && symbolizer_is_method(addr)) {
		*kind = SYMBOLIZER_KIND_JIT;
		name = symbolizer_method(sym, sp->pid, addr, resolved);
	} else if (kernel) {
		*kind = SYMBOLIZER_KIND_KERNEL;
		name = symbolizer_kernel(sym, addr, resolved);
	} else if (sp) {
		name = symbolizer_user(sym, sp, addr, leaf, kind, resolved);
	} else {
		*kind = SYMBOLIZER_KIND_UNKNOWN;
		name = "[unknown]";
	}
	sym->st.frames[*kind]++;
	if (*resolved)
		sym->st.resolved[*kind]++;
	return name;
}

const char *symbolizer_addr(struct symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			    enum symbolizer_kind *kind, int *resolved)
{
	enum symbolizer_kind k;
	int r;
	sym->arena_len = 0;
	struct sympid *sp = kernel ? NULL : symbolizer_get_pid(sym, pid, NULL);
	const char *name = symbolizer_one(sym, sp, addr, kernel, 0, &k, &r);
	if (kind)
		*kind = k;
	if (resolved)
		*resolved = r;
	return name;
}

/* The module and build id of native frame f, from the lookup just done
 * (copied: a later frame may re-read the maps). */
static void symbolizer_module(struct symbolizer *sym, struct symbolizer_frame *f)
{
	const struct symfile *file = sym->last_file;
	const char *mod = sym->last_module;
	f->module = f->build_id = NULL;
	if (f->kind != SYMBOLIZER_KIND_NATIVE || !mod)
		return;
	f->module = symbolizer_keep_n(sym, mod, strlen(mod));
	if (file && file->build_id_len && file->build_id_len <= ELFSYMS_BUILD_ID_MAX) {
		char hex[2 * ELFSYMS_BUILD_ID_MAX + 1];
		for (size_t i = 0; i < file->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", file->build_id[i]);
		f->build_id = symbolizer_keep_n(sym, hex, 2 * file->build_id_len);
	}
}

/* ---- the frame cache (symcache.h) ---------------------------------------- */

#define SYMCACHE_F_KERNEL 1u
#define SYMCACHE_F_LEAF	  2u

/* The mapping a native frame was found in, as the cache keeps it. */
static const void *symbolizer_map_file(const struct procmaps_map *m)
{
	return m->type == PROCMAPS_VDSO ? (const void *)m : (const void *)symmap_file(m);
}

/* A frame of the cache into f (its strings copied into the call's arena):
 * kernel frames, and native frames whose
 * mapping is still the one they were found in (same start, same file
 * cached for it, same path). 1 hit, 0 look it up. */
static int symbolizer_cached(struct symbolizer *sym, struct sympid *sp, uint64_t addr, int kernel,
			     int leaf, struct symbolizer_frame *f)
{
	struct symcache_frame c;
	unsigned flags = (kernel ? SYMCACHE_F_KERNEL : 0) | (leaf ? SYMCACHE_F_LEAF : 0);
	if (!sym->cache || (!kernel && !sp) ||
	    !symcache_get(sym->cache, kernel ? 0 : sp->serial, addr, flags, &c))
		return 0;
	if (c.kind == SYMBOLIZER_KIND_NATIVE) {
		const struct procmaps_map *m = procmaps_find(&sp->pm, addr);
		/* m->user 0: a mapping of maps read again, not looked at since */
		uint32_t mod = m ? (m->path ? m->path : m->label) : 0;
		if (!m || m->start != c.map_start || (!m->user && m->type != PROCMAPS_VDSO) ||
		    symbolizer_map_file(m) != c.file || !c.module || !mod ||
		    strcmp(c.module, sp->pm.labels + mod) != 0)
			return 0; /* another mapping there now, or another path */
	}
	size_t mark = sym->arena_len;
	f->name = symbolizer_keep_n(sym, c.name, strlen(c.name));
	f->module = c.module ? symbolizer_keep_n(sym, c.module, strlen(c.module)) : NULL;
	f->build_id = c.build_id ? symbolizer_keep_n(sym, c.build_id, strlen(c.build_id)) : NULL;
	if (!f->name || (c.module && !f->module) || (c.build_id && !f->build_id)) {
		sym->arena_len = mark; /* the arena is full: the slow way labels it */
		return 0;
	}
	f->kind = (enum symbolizer_kind)c.kind;
	f->resolved = c.resolved;
	sym->st.frames[f->kind]++;
	if (f->resolved)
		sym->st.resolved[f->kind]++;
	return 1;
}

/* Keep frame f, just looked up: kernel frames and resolved native ones
 * (the others' names depend on more than their address). */
static void symbolizer_cache_put(struct symbolizer *sym, struct sympid *sp, uint64_t addr,
				 int kernel, int leaf, const struct symbolizer_frame *f)
{
	if (!sym->cache || (!kernel && !sp) || !f->name)
		return;
	struct symcache_frame c = {.name = f->name,
				   .module = f->module,
				   .build_id = f->build_id,
				   .kind = (int)f->kind,
				   .resolved = f->resolved};
	if (f->kind == SYMBOLIZER_KIND_NATIVE) {
		/* unresolved: labelled by the maps of now, cheap to do again */
		const struct procmaps_map *m = procmaps_find(&sp->pm, addr);
		if (!f->resolved || !f->module || !m || (!m->user && m->type != PROCMAPS_VDSO))
			return;
		c.map_start = m->start;
		c.file = symbolizer_map_file(m);
	} else if (f->kind != SYMBOLIZER_KIND_KERNEL) {
		/* JIT code is named by time (its log has its own cache); an
		 * interpreted frame's Method* may be freed and reused by another
		 * method when classes unload: its reader (hotspot.h) caches it */
		return;
	}
	unsigned flags = (kernel ? SYMCACHE_F_KERNEL : 0) | (leaf ? SYMCACHE_F_LEAF : 0);
	symcache_put(sym->cache, kernel ? 0 : sp->serial, addr, flags, &c);
}

int symbolizer_symbolize(struct symbolizer *sym, pid_t pid, const uint64_t *ips, size_t nr,
			 struct symbolizer_frame *frames, size_t max, size_t *n)
{
	sym->arena_len = 0;
	struct sympid *sp = NULL;
	int ctx = -1; /* -1 unknown (by address), 0 user, 1 kernel, 2 other */
	int first = 1;
	size_t out = 0;
	if (nr > SYMBOLIZER_MAX_FRAMES)
		nr = SYMBOLIZER_MAX_FRAMES;
	for (size_t i = 0; i < nr && out < max; i++) {
		uint64_t ip = ips[i];
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
				ctx = 1;
			else if (ip == (uint64_t)PERF_CONTEXT_USER)
				ctx = 0;
			else
				ctx = 2; /* hypervisor / guest: not ours */
			first = 1;
			continue;
		}
		if (ctx == 2)
			continue;
		int kernel = ctx == 1 || (ctx == -1 && ip >= SYMBOLIZER_KERNEL_MIN);
		int c1 = !kernel && symbolizer_is_c1(ip);
		if (c1)
			ip &= ~SYMBOLIZER_C1_TAG;
		uint64_t addr = (first || ip == 0 || symbolizer_is_method(ip)) ? ip : ip - 1;
		int leaf = first;
		first = 0;
		if (!kernel && !sp)
			sp = symbolizer_get_pid(sym, pid, NULL);
		struct symbolizer_frame *f = &frames[out++];
		f->addr = addr;
		if (symbolizer_cached(sym, sp, addr, kernel, leaf, f))
			continue;
		f->name = symbolizer_one(sym, sp, addr, kernel, leaf, &f->kind, &f->resolved);
		symbolizer_module(sym, f);
		symbolizer_cache_put(sym, sp, addr, kernel, leaf, f);
		if (c1 && f->kind == SYMBOLIZER_KIND_JIT && f->resolved)
			f->name = symbolizer_mark_c1(sym, f->name);
	}
	*n = out;
	return 0;
}

void symbolizer_stats(const struct symbolizer *sym, struct symbolizer_stats *st)
{
	*st = sym->st;
	st->pids = sym->npids;
	st->files = sym->nfiles;
	st->memory = sym->elf_memory;
	if (sym->cache) {
		struct symcache_stats cs;
		symcache_stats(sym->cache, &cs);
		st->cache_hits = cs.hits;
		st->cache_misses = cs.misses;
	}
}

const char *symbolizer_kind_name(enum symbolizer_kind kind)
{
	switch (kind) {
	case SYMBOLIZER_KIND_KERNEL: return "kernel";
	case SYMBOLIZER_KIND_NATIVE: return "native";
	case SYMBOLIZER_KIND_JIT: return "jit";
	case SYMBOLIZER_KIND_UNKNOWN:
	default: return "unknown";
	}
}
