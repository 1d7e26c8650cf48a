/* profile.c - the record -> symbolize -> aggregate loop: see profile.h */
#include "profile.h"
#include "profile_int.h"
#include "profile_rtmaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "cgroup.h"
#include "cleanup.h"
#include "cfi.h"
#include "jvmunwind.h"
#include "leafcall.h"
#include "nativeunwind.h"
#include "proc.h"
#include "procmem.h"
#include "sampler.h"
#include "timeutil.h"
#include "utf8.h"

static void profile_on_task(const struct sampler_task *t, void *ctx)
{
	struct profile *p = ctx;
	if (p->threads && t->kind != SAMPLER_TASK_FORK)
		threadnames_exit(p->threads, t->tid); /* a new name, or a new thread */
	if (t->kind == SAMPLER_TASK_EXIT && t->pid == t->tid && p->nu)
		nativeunwind_remove(p->nu, t->pid); /* its mappings; its counts stay */
	if (t->kind != SAMPLER_TASK_EXEC || t->pid != t->tid)
		return;
	/* a new image: what we knew about the pid is wrong now */
	symbolizer_forget_pid(p->sym, t->pid);
	struct profile_pid *pp = profile_pid_slot(p, t->pid);
	if (pp->pid == t->pid) {
		if (pp->jvm)
			p->st.jvms--;
		pp->jvm = 0;
		pp->warned_map = 0;
		pp->unwinder = 0;
		if (p->ju)
			jvmunwind_remove(p->ju, t->pid);
		profile_native_forget(p, pp);
		symbolizer_load_pid(p->sym, t->pid, NULL);
		if (attach_check_hotspot(t->pid, NULL) == 0)
			profile_pid_jvm(p, pp);
		else
			profile_pid_native(p, pp);
	}
}

/* ---- raw table ----------------------------------------------------------- */

static uint64_t profile_hash(pid_t pid, uint32_t thread, const uint64_t *ips, size_t nr)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(uint32_t)pid | (uint64_t)thread << 32);
	for (size_t i = 0; i < nr; i++) {
		h = (h ^ ips[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static int profile_grow(struct profile *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 4096;
	struct profile_chain *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		struct profile_chain *c = &p->chains[i];
		if (!c->count)
			continue;
		size_t j = c->hash & (ncap - 1);
		while (n[j].count)
			j = (j + 1) & (ncap - 1);
		n[j] = *c;
	}
	free(p->chains);
	p->chains = n;
	p->cap = ncap;
	return 0;
}

static int profile_add(struct profile *p, pid_t pid, uint32_t thread, const uint64_t *ips,
		       size_t nr, uint64_t time, uint64_t count)
{
	if (nr > SYMBOLIZER_MAX_FRAMES + 1) /* + PROFILE_CUT_WORD */
		nr = SYMBOLIZER_MAX_FRAMES + 1;
	if ((p->count + 1) * 2 > p->cap && profile_grow(p) < 0)
		return -ENOMEM;
	uint64_t h = profile_hash(pid, thread, ips, nr);
	size_t mask = p->cap - 1, i = h & mask;
	for (;; i = (i + 1) & mask) {
		struct profile_chain *c = &p->chains[i];
		if (!c->count)
			break;
		if (c->hash == h && c->pid == pid && c->thread == thread && c->nr == nr &&
		    !memcmp(p->words + c->off, ips, nr * sizeof(*ips))) {
			c->count += count;
			if (time > c->last)
				c->last = time;
			if (time < c->first)
				c->first = time;
			return 0;
		}
	}
	if (p->nwords + nr + 2 > p->wcap) {
		size_t ncap = p->wcap ? p->wcap : 1u << 16;
		while (ncap < p->nwords + nr + 2)
			ncap *= 2;
		uint64_t *nw = realloc(p->words, ncap * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		p->words = nw;
		p->wcap = ncap;
	}
	p->words[p->nwords++] = (uint64_t)(uint32_t)pid | (uint64_t)thread << 32;
	p->words[p->nwords++] = nr;
	memcpy(p->words + p->nwords, ips, nr * sizeof(*ips));
	p->chains[i] = (struct profile_chain){.hash = h,
					      .count = count,
					      .first = time,
					      .last = time,
					      .off = p->nwords,
					      .pid = pid,
					      .nr = (uint32_t)nr,
					      .thread = thread};
	p->nwords += nr;
	p->count++;
	return 0;
}

/* leafcall_read_fn; ctx is the struct profile_pid. Never by bare pid: the
 * process is pinned with a pidfd checked against the start time it was
 * first seen with, and a read after it exited (its pid maybe reused by
 * another process by the time its samples are drained) fails. */
static int profile_read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct profile_pid *pp = ctx;
	if (pp->memfd == 0) {
		int fd =
		    pp->start_time ? proc_pidfd_open_checked(pp->pid, pp->start_time, NULL) : -1;
		pp->memfd = fd >= 0 ? fd + 1 : -1;
	}
	if (pp->memfd < 0)
		return -ESRCH;
	return procmem_read(pp->pid, pp->memfd - 1, addr, buf, len);
}

/* The per-sample path: JVMs with the HotSpot unwinder get their user
 * chain rebuilt from the stack copy (jvmunwind.h); other JVMs keep the
 * kernel's frame-pointer chain, with the caller it skips when the leaf is
 * in a prologue or epilogue put back from the stack (leafcall.h);
 * processes without frame pointers get the native CFI walk (nativeunwind.h);
 * everything else keeps the kernel's chain. */
static int profile_sample(struct profile *p, const struct sample *smp, uint64_t count,
			  uint64_t *out, size_t max, size_t *nout)
{
	struct profile_pid *pp = profile_pid_note(p, smp->pid);
	const uint64_t *ips = smp->ips;
	size_t nr = smp->nr;
	int cut = smp->truncated;
	if (p->ju && smp->has_regs && pp && pp->jvm) {
		size_t n = jvmunwind_sample(p->ju, smp, p->chain, SYMBOLIZER_MAX_FRAMES);
		if (n) {
			ips = p->chain;
			nr = n;
			cut = n >= SYMBOLIZER_MAX_FRAMES; /* the unwinder's own limit */
		}
	} else if (p->nu && smp->has_regs && pp && pp->native) {
		size_t n = nativeunwind_sample(p->nu, smp, p->chain, SYMBOLIZER_MAX_FRAMES);
		if (n) {
			ips = p->chain;
			nr = n;
			cut = n >= SYMBOLIZER_MAX_FRAMES;
		}
	} else if (smp->has_regs && pp && pp->jvm && nr < SYMBOLIZER_MAX_FRAMES) {
		size_t n = leafcall_repair(ips, nr, smp->stack, smp->stack_size, profile_read_mem,
					   pp, p->chain, SYMBOLIZER_MAX_FRAMES);
		if (n) {
			ips = p->chain;
			nr = n;
			p->st.leaf_callers++;
		}
	}
	/* Cut at the root end (by the kernel's max_stack, or the unwinder's
	 * frame limit): mark the chain so its stack says so (budget.h). */
	if (cut || nr > SYMBOLIZER_MAX_FRAMES) {
		if (nr > SYMBOLIZER_MAX_FRAMES)
			nr = SYMBOLIZER_MAX_FRAMES;
		if (ips != p->chain)
			memcpy(p->chain, ips, nr * sizeof(*ips));
		p->chain[nr++] = PROFILE_CUT_WORD;
		ips = p->chain;
	}
	if (out) {
		*nout = nr < max ? nr : max;
		memcpy(out, ips, *nout * sizeof(*ips));
	}
	uint32_t thread =
	    p->threads ? threadnames_get(p->threads, smp->pid, smp->tid, smp->time) : 0;
	if (profile_add(p, smp->pid, thread, ips, nr, smp->time, count) < 0) {
		p->st.dropped++;
		return -ENOMEM;
	}
	return 0;
}

/* A sample of the events: counts 1, or (wall-clock profiles) its period in
 * microseconds under the on-CPU leaf frame. */
static int profile_on_sample(const struct sample *smp, void *ctx)
{
	struct profile *p = ctx;
	if (!p->o.on_cpu_frame) {
		(void)profile_sample(p, smp, 1, NULL, 0, NULL);
		return 0;
	}
	uint64_t words[SYMBOLIZER_MAX_FRAMES + 3];
	uint32_t idx = profile_name_index(p, p->o.on_cpu_frame);
	size_t n = 0;
	if (idx) {
		words[n++] = PROFILE_NAMES_WORD;
		words[n++] = 1;
		words[n++] = idx;
	}
	size_t nr = smp->nr < SYMBOLIZER_MAX_FRAMES ? smp->nr : SYMBOLIZER_MAX_FRAMES;
	memcpy(words + n, smp->ips, nr * sizeof(*words));
	struct sample s = *smp;
	s.ips = words;
	s.nr = n + nr;
	uint64_t us = (smp->period + 500) / 1000;
	(void)profile_sample(p, &s, us ? us : 1, NULL, 0, NULL);
	return 0;
}

int profile_add_sample(struct profile *p, const struct sample *smp, uint64_t count, uint64_t *chain,
		       size_t max, size_t *nr)
{
	if (nr)
		*nr = 0;
	return profile_sample(p, smp, count, chain, max, nr);
}

static int profile_on_cpu_cmp(const void *a, const void *b)
{
	const struct profile_on_cpu *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The entry of v for chain c's thread (per_thread), or NULL. */
static struct profile_on_cpu *profile_on_cpu_of(struct profile *p, const struct profile_chain *c,
						struct profile_on_cpu *v, size_t n, uint32_t idx)
{
	const uint64_t *w = p->words + c->off;
	pid_t tid = 0;
	if (c->nr < 3 || w[0] != PROFILE_NAMES_WORD || w[1] != 1 || w[2] != idx ||
	    !threadnames_name(p->threads, c->thread, NULL, &tid))
		return NULL;
	struct profile_on_cpu key = {.tid = tid};
	struct profile_on_cpu *e = bsearch(&key, v, n, sizeof(*v), profile_on_cpu_cmp);
	return e && e->pid == c->pid ? e : NULL;
}

void profile_scale_on_cpu(struct profile *p, struct profile_on_cpu *v, size_t n)
{
	uint32_t idx = p->o.on_cpu_frame ? profile_name_index(p, p->o.on_cpu_frame) : 0;
	if (!idx || !p->threads || !n)
		return;
	qsort(v, n, sizeof(*v), profile_on_cpu_cmp);
	for (size_t i = 0; i < n; i++)
		v[i].found_us = 0;
	for (size_t i = 0; i < p->cap; i++) {
		struct profile_on_cpu *e;
		if (p->chains[i].count && (e = profile_on_cpu_of(p, &p->chains[i], v, n, idx)))
			e->found_us += p->chains[i].count;
	}
	for (size_t i = 0; i < p->cap; i++) {
		struct profile_chain *c = &p->chains[i];
		struct profile_on_cpu *e;
		if (!c->count || !(e = profile_on_cpu_of(p, c, v, n, idx)) || !e->found_us)
			continue;
		uint64_t scaled =
		    (uint64_t)((double)c->count * (double)e->want_us / (double)e->found_us + 0.5);
		c->count = scaled ? scaled : 1; /* a count of 0 marks a free slot */
	}
}

uint32_t profile_name_index(struct profile *p, const char *name)
{
	size_t len = strnlen(name, 128), slots = 2 * PROFILE_NAMES_MAX;
	if (len >= 128)
		return 0;
	if (!p->name_slots && !(p->name_slots = calloc(slots, sizeof(*p->name_slots))))
		return 0;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	size_t i = h & (slots - 1);
	for (; p->name_slots[i]; i = (i + 1) & (slots - 1))
		if (!strcmp(p->names[p->name_slots[i] - 1], name))
			return p->name_slots[i];
	if (p->nnames >= PROFILE_NAMES_MAX)
		return 0;
	if (!p->names && !(p->names = calloc(PROFILE_NAMES_MAX, sizeof(*p->names))))
		return 0;
	char *d = strndup(name, len);
	if (!d)
		return 0;
	p->names[p->nnames++] = d;
	p->name_slots[i] = (uint32_t)p->nnames;
	return p->name_slots[i];
}

/* Stack copies for this window? Decided before the events open, from
 * the JVMs and the other processes running now (docs/unwind.md). */
static int profile_want_copies(struct profile *p)
{
	const struct profile_opts *o = &p->o;
	if (o->unwind == PROFILE_UNWIND_FP)
		return 0;
	/* Every process in scope noted now: those without frame pointers want
	 * copies, and their files' CFI is walked before the window. */
	int native = profile_pid_scan(p);
	if (o->unwind == PROFILE_UNWIND_HOTSPOT || native)
		return 1;
	cleanup_free pid_t *jvms = NULL;
	size_t n = 0;
	if (o->pid)
		return attach_check_hotspot(o->pid, NULL) == 0;
	/* Any JVM, with frame pointers or not: an interpreted frame's Method*
	 * is in the frame, so only a stack copy names it (an anonymous
	 * "Interpreter" frame hides where the time goes). */
	return map_find_jvms(&p->entry, &jvms, &n, NULL) == 0 && n > 0;
}

/* The unwinders of a window with stack copies: the JVMs' and the native
 * one, over the shared CFI cache. 0 or -ENOMEM (then neither). */
static int profile_unwinders_new(struct profile *p)
{
	if (jvmunwind_new(p->cfi, &p->ju) == 0 && nativeunwind_new(p->cfi, &p->nu) == 0) {
		for (size_t i = 0; i < p->njit; i++) /* their JIT logs name the code found */
			if (p->jit[i].win && !p->jit[i].win_failed)
				jvmunwind_names_at_sight(p->ju, p->jit[i].pid, 0);
		return 0;
	}
	jvmunwind_free(p->ju);
	p->ju = NULL;
	return -ENOMEM;
}

/* ---- open / poll / stop ---------------------------------------------------- */

/* Open the sampler on the scope profile.h describes. */
static int profile_open_sampler(struct profile *p, struct fs_error *err)
{
	const struct profile_opts *o = &p->o;
	const struct registry_entry *e = &p->entry;
	struct sampler_opts so = {.frequency = o->frequency,
				  .max_stack = o->max_stack,
				  .user_only = o->user_only,
				  .kernel_filter = o->kernel_filter};
	/* The CFI cache of every process (the native check, both unwinders). */
	if (o->unwind != PROFILE_UNWIND_FP && cfi_new(NULL, &p->cfi) < 0)
		return fs_error_set(err, ENOMEM, "allocating the CFI cache");
	/* Without the HotSpot unwinder, a few words of stack anyway: the
	 * caller a frame-pointer walk skips in a prologue or epilogue. */
	int leaf_only = !profile_want_copies(p);
	/* no events: the caller copies stacks itself, the unwinder is ready
	 * for any JVM that shows up */
	if (o->no_events && o->unwind != PROFILE_UNWIND_FP)
		leaf_only = 0;
	so.software_only = o->on_cpu_frame != NULL; /* periods in ns of cpu-clock */
	so.stack_copy = leaf_only	? LEAFCALL_STACK_COPY
			: o->stack_copy ? o->stack_copy
					: SAMPLER_DEFAULT_STACK_COPY;
	char cg[PATH_MAX];
	int r;
	/* The unwinder of the JVMs running now, before the events open: its
	 * VMStructs read, libjvm.so's CFI walk and symbol table are one-time
	 * loads (~200 ms of CPU) the workload should not pay inside the
	 * window. */
	if (!leaf_only) {
		if (profile_unwinders_new(p) < 0)
			return fs_error_set(err, ENOMEM, "allocating the unwinder");
		symbolizer_set_method(p->sym, jvmunwind_method_name, p->ju);
		profile_unwind_known(p);
		profile_preload_libjvm(p);
	}
	if (o->no_events) {
		p->st.stack_copy = leaf_only ? 0 : so.stack_copy;
		p->opened = 1;
		profile_unwind_known(p);
		return 0;
	}
	if (o->pid) {
		so.pid = o->pid;
		r = sampler_open(&so, &p->s, err);
	} else if (cgroup_perf_dir(e->pid, o->cgroup_root, cg, sizeof(cg)) == 0) {
		so.cgroup_path = cg;
		r = sampler_open(&so, &p->s, err);
		if (r < 0 && r != -EACCES && r != -EPERM &&
		    o->kernel_filter != SAMPLER_KFILTER_ON) {
			profile_warn(p, "cannot sample by cgroup (%s); sampling by pid namespace",
				     err ? err->msg : "?");
			so.cgroup_path = NULL;
			so.pid_ns = e->pid_ns;
			r = sampler_open(&so, &p->s, err);
		}
	} else {
		so.pid_ns = e->pid_ns;
		r = sampler_open(&so, &p->s, err);
	}
	if (r < 0)
		return r;
	sampler_set_task_cb(p->s, profile_on_task, p);
	p->st.stack_copy = leaf_only ? 0 : so.stack_copy;
	p->so = so;
	if (so.cgroup_path) {
		snprintf(p->cg, sizeof(p->cg), "%s", so.cgroup_path);
		p->so.cgroup_path = p->cg;
	}
	p->opened = 1;
	profile_unwind_known(p); /* without copies: a JVM's warning or a reopen */
	profile_native_known(p);
	return 0;
}

/* Window open: JVM pid's agent starts logging its code with times (the
 * code that exists now first). Before the sampler opens, so that this dump
 * is not in the profile. A JVM where it fails is mapped at the end. */
static void profile_window_open(struct profile *p, pid_t pid)
{
	struct fs_error err = {0};
	struct map_window *w = NULL;
	if (p->o.no_map || p->o.map.mode == MAP_MODE_JCMD || p->o.map.mode == MAP_MODE_VMSTRUCTS)
		return; /* jcmd: no agent; vmstructs: no attach at all */
	struct profile_jit *j = profile_jit_slot(p, pid);
	if (!j || j->win)
		return;
	/* Even the first read, the log written so far, stays within what the
	 * other JVMs left of the budget. */
	struct map_opts mo = p->o.map;
	if (profile_jit_full(p, pid, 0))
		return; /* named at the end, within what is left, or [unknown] */
	mo.jit_budget = profile_jit_room(p, pid);
	int r = map_window_open(&p->entry, pid, &mo, &w, &err);
	if (r == -EOPNOTSUPP || r == -ENOENT)
		return; /* no agent here: the end-of-window map (jcmd) names it */
	if (r < 0) {
		profile_warn(p,
			     "JVM pid %d: no JIT log for the window (%s); its map is taken at "
			     "the end instead",
			     (int)pid, err.msg);
		return;
	}
	j->win = w;
	symbolizer_set_jit(p->sym, pid, symbolizer_jit_jitlog, (void *)map_window_log(w));
	if (p->ju) /* the log names the code the unwinder finds: no reads for it */
		jvmunwind_names_at_sight(p->ju, pid, 0);
}

int profile_open(const struct profile_opts *o, struct profile **out, struct fs_error *err)
{
	const struct registry_entry *e = o->entry;
	if (!e)
		return fs_error_set(err, EINVAL, "profile_open: no container");
	if (!registry_entry_alive(e))
		return fs_error_set(err, ESRCH,
				    "container %s is not running (pid %d is gone); `flamesidecar "
				    "gc` removes stale entries",
				    e->id, (int)e->pid);
	if (o->pid) {
		uint64_t ino = 0;
		if (proc_ns_inode(o->pid, "pid", &ino, NULL) < 0 || ino != e->pid_ns)
			return fs_error_set(
			    err, ESRCH,
			    "pid %d is not a process of container %s (see `runc ps` "
			    "or `flamesidecar map %s`)",
			    (int)o->pid, e->id, e->id);
	}
	cleanup_profile struct profile *p = calloc(1, sizeof(*p));
	if (!p)
		return fs_error_set(err, ENOMEM, "allocating the profile");
	p->o = *o;
	p->entry = *e;
	p->o.entry = &p->entry;
	p->raw_max = o->raw_max_words && o->raw_max_words < PROFILE_RAW_MAX_WORDS
			 ? o->raw_max_words
			 : PROFILE_RAW_MAX_WORDS;

	/* The symbolizer says why an ELF file got no symbols. */
	struct symbolizer_opts yo = {.warn = o->warn, .warn_ctx = o->warn_ctx};
	int r;
	p->pids = calloc(PROFILE_PID_SLOTS, sizeof(*p->pids));
	p->table = fold_new();
	if (p->table)
		fold_set_budget(p->table, profile_table_budget(o));
	p->line = malloc(PROFILE_LINE_MAX);
	if (o->per_thread)
		p->threads = threadnames_new(NULL);
	if (!p->pids || !p->table || !p->line || (o->per_thread && !p->threads))
		return fs_error_set(err, ENOMEM, "allocating the profile");
	struct debuginfo_opts dopts = {
	    .urls = o->debuginfod_urls, .warn = o->warn, .warn_ctx = o->warn_ctx};
	if (!o->no_debuginfo && (r = debuginfo_new(&dopts, &p->dbg, err)) < 0)
		return r;
	yo.debug = p->dbg ? debuginfo_augment : NULL;
	yo.debug_ctx = p->dbg;
	if ((r = symbolizer_open(&yo, &p->sym, err)) < 0)
		return r;
	/* The JVMs running now: warn about frame pointers before the window,
	 * and start their JIT logs. */
	cleanup_free pid_t *jvms = NULL;
	size_t n = 0;
	if (o->pid) {
		struct profile_pid *pp = profile_pid_note(p, o->pid);
		if (pp && pp->jvm)
			profile_window_open(p, o->pid);
	} else if (map_find_jvms(e, &jvms, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++) {
			profile_pid_note(p, jvms[i]);
			profile_window_open(p, jvms[i]);
		}
	}
	/* kallsyms now, before the window: reading /proc/kallsyms is the
	 * biggest one-time load (~50 ms of CPU on these machines, a fifth of
	 * a 15 s run at 999 Hz), and the first kernel frame would otherwise
	 * make profile_warm pay it while the workload is being measured. */
	if (!o->user_only)
		symbolizer_addr(p->sym, 0, PROFILE_KERNEL_PROBE, 1, NULL, NULL);
	if ((r = profile_open_sampler(p, err)) < 0)
		return r;
	p->window_read_us = timeutil_now_us();
	*out = steal_pointer(&p);
	return 0;
}

/* Read what the JVMs' agents logged since the last read (during the
 * window: the end only reads the tail). A failed read keeps what was read. */
static void profile_window_read(struct profile *p)
{
	for (size_t i = 0; i < p->njit; i++) {
		struct profile_jit *j = &p->jit[i];
		struct fs_error err = {0};
		if (!j->win || j->win_failed)
			continue;
		if (profile_jit_full(p, j->pid, 0)) {
			j->win_failed = 1; /* the budget: keep what was read */
			continue;
		}
		map_window_set_budget(j->win, profile_jit_room(p, j->pid));
		int r = map_window_read(j->win, &err);
		if (r < 0) {
			j->win_failed = 1;
			if (p->ju)
				jvmunwind_names_at_sight(p->ju, j->pid, 1);
			profile_window_warn(p, j->pid, r, err.msg);
		}
	}
}

/* Symbolize new chains once while recording (names discarded), for at
 * most budget_us: every address the window sees is resolved while it
 * runs, so that the end of the window finds them in the caches (the
 * symbolizer's frame cache, symcache.h, and each JIT log's address
 * cache, jitlog.h) and only resolves what is new since. ELF symbol
 * tables and kallsyms are loaded now too, instead of after the window
 * when the user waits. A chain whose frames are all cached costs a hash
 * probe per frame (warming every chain without the caches was 38% of
 * `run`'s CPU on jetty9 at 999 Hz; it is why warming used to skip). */
static void profile_warm(struct profile *p, uint64_t budget_us)
{
	struct symbolizer_frame frames[SYMBOLIZER_MAX_FRAMES];
	uint64_t start = timeutil_now_us();
	/* no time: names as they are now, just after the samples (the fold
	 * then takes a Method*'s name read since its chain's time as it is) */
	symbolizer_set_time(p->sym, 0);
	while (p->warm_off + 2 <= p->nwords && timeutil_now_us() - start < budget_us) {
		pid_t pid = (pid_t)(uint32_t)p->words[p->warm_off]; /* thread above */
		size_t nr = p->words[p->warm_off + 1], n;
		symbolizer_symbolize(p->sym, pid, p->words + p->warm_off + 2, nr, frames,
				     SYMBOLIZER_MAX_FRAMES, &n);
		p->warm_off += 2 + nr;
	}
}

static void profile_add_counts(struct sampler_stats *to, const struct sampler_stats *from)
{
	to->samples += from->samples;
	to->lost += from->lost;
	to->throttled += from->throttled;
	to->truncated += from->truncated;
	to->stack_copies += from->stack_copies;
}

/* A JVM without frame pointers appeared in a window opened without stack
 * copies (auto): close the events and open them again with copies (the
 * events are per CPU: copies are for every sample or none), then give every
 * JVM seen so far the HotSpot unwinder. Samples in between are not lost:
 * the old rings are drained first; the gap is one reopen (~1 ms). */
static void profile_reopen(struct profile *p)
{
	p->want_copies = 0;
	struct sampler_stats ss;
	sampler_poll(p->s, 0, profile_on_sample, p);
	sampler_stats(p->s, &ss);
	struct sampler_opts so = p->so;
	so.stack_copy = p->o.stack_copy ? p->o.stack_copy : SAMPLER_DEFAULT_STACK_COPY;
	struct sampler *ns = NULL;
	struct fs_error e2 = {0};
	if (profile_unwinders_new(p) < 0 || sampler_open(&so, &ns, &e2) < 0) {
		jvmunwind_free(p->ju);
		nativeunwind_free(p->nu);
		p->ju = NULL;
		p->nu = NULL;
		profile_warn(p,
			     "cannot reopen the events with stack copies (%s): JVMs and "
			     "processes that started without frame pointers keep shallow "
			     "stacks",
			     e2.msg);
		p->no_reopen = 1;
		profile_unwind_known(p); /* their warnings */
		return;
	}
	profile_add_counts(&p->base, &ss);
	sampler_close(p->s);
	p->s = ns;
	p->so = so;
	sampler_set_task_cb(p->s, profile_on_task, p);
	symbolizer_set_method(p->sym, jvmunwind_method_name, p->ju);
	p->st.stack_copy = so.stack_copy;
	profile_unwind_known(p);
	profile_native_known(p);
}

int profile_poll(struct profile *p, int timeout_ms, struct fs_error *err)
{
	if (!p->s && (!p->o.no_events || p->stopped))
		return 0;
	int r = p->s ? sampler_poll(p->s, timeout_ms, profile_on_sample, p) : 0;
	if (p->want_copies && !p->ju)
		profile_reopen(p);
	profile_warm(p, PROFILE_WARM_US);
	if (p->njit && timeutil_now_us() - p->window_read_us >= PROFILE_WINDOW_READ_US) {
		profile_window_read(p);
		p->window_read_us = timeutil_now_us();
	}
	profile_rtmaps_tick(p);
	if (r < 0 && r != -EINTR)
		return fs_error_set(err, -r, "reading samples");
	if (p->nwords >= p->raw_max || p->count >= PROFILE_RAW_MAX_CHAINS) {
		/* Full: fold what we have with the JIT names of now, go on. */
		p->st.early_folds++;
		int f = profile_fold(p, 1, err);
		if (f < 0)
			return f;
	}
	return r;
}

void profile_stop(struct profile *p)
{
	p->stopped = 1;
	if (!p->s)
		return;
	sampler_poll(p->s, 0, profile_on_sample, p);
	sampler_stats(p->s, &p->sst);
	sampler_close(p->s);
	p->s = NULL;
}

/* Percentiles of the stack used by whole walks (KiB, rounded up). */
static void profile_depths(const struct jvmunwind_jvm_stats *js, struct profile_unwinder *u)
{
	uint64_t all = 0, seen = 0;
	for (unsigned k = 0; k < JVMUNWIND_DEPTH_BUCKETS; k++)
		all += js->depth_kib[k];
	u->depth_p50_kib = u->depth_p99_kib = u->depth_max_kib = 0;
	for (unsigned k = 0; all && k < JVMUNWIND_DEPTH_BUCKETS; k++) {
		if (!js->depth_kib[k])
			continue;
		seen += js->depth_kib[k];
		if (!u->depth_p50_kib && seen * 2 >= all)
			u->depth_p50_kib = k + 1;
		if (!u->depth_p99_kib && seen * 100 >= all * 99)
			u->depth_p99_kib = k + 1;
		u->depth_max_kib = k + 1;
	}
	for (unsigned m = 0; m < PROFILE_DEPTH_MARKS; m++) {
		unsigned lim = 4u << m; /* a depth in [k, k + 1) KiB fits in lim KiB if k < lim */
		u->within_kib[m] = 0;
		for (unsigned k = 0; k < lim && k < JVMUNWIND_DEPTH_BUCKETS; k++)
			u->within_kib[m] += js->depth_kib[k];
	}
}

unsigned profile_max_latency_ms(const struct profile *p)
{
	/* auto without copies yet: a process that needs them is seen (and
	 * the events reopened) at most this late */
	int may_reopen = p->o.unwind == PROFILE_UNWIND_AUTO && !p->no_reopen;
	if (!p->st.stack_copy)
		return may_reopen ? 100 : 1000;
	/* A JVM without a JIT log for the window has its compiled frames
	 * named from its memory as they are unwound: code freed before then
	 * stays [unknown]. Unwinding sooner: 30 more wakeups a second, ~75 us
	 * each (docs/perf-run.md). */
	size_t logged = 0;
	for (size_t i = 0; i < p->njit; i++)
		logged += p->jit[i].win != NULL;
	return logged < p->st.jvms ? 25 : 100;
}

void profile_stats(const struct profile *p, struct profile_stats *st)
{
	*st = p->st;
	struct sampler_stats ss = p->sst;
	if (p->s)
		sampler_stats(p->s, &ss);
	profile_add_counts(&ss, &p->base);
	st->scope = ss.scope ? ss.scope : p->o.no_events ? (p->o.pid ? "pid" : "pid_ns") : "?";
	st->events = ss.events ? ss.events : p->o.no_events ? "thread states" : "?";
	snprintf(st->filter_why, sizeof(st->filter_why), "%s", ss.filter_why);
	st->cpus = ss.cpus;
	st->hardware = ss.hardware;
	st->samples = ss.samples;
	st->lost = ss.lost;
	st->throttled = ss.throttled;
	st->truncated = ss.truncated;
	st->table_bytes = fold_memory(p->table);
	st->chains = p->count;
	st->words = p->nwords;
	st->pids = p->npids;
	st->stack_copies = ss.stack_copies;
	if (p->dbg)
		debuginfo_stats(p->dbg, &st->debug);
	for (size_t i = 0; p->ju && i < jvmunwind_count(p->ju); i++) {
		struct jvmunwind_jvm_stats js;
		jvmunwind_stats(p->ju, i, &js);
		for (size_t k = 0; k < st->nunwinder; k++) {
			struct profile_unwinder *u = &st->unwinder[k];
			if (u->pid != js.pid)
				continue;
			u->samples = js.samples;
			u->reached_root = js.ends[UNWIND_END_ROOT];
			u->interpreted = js.interpreted;
			u->frames = js.frames;
			u->unwind_ns = js.unwind_ns;
			u->blob_lookups = js.blob_lookups;
			u->blob_hits = js.blob_hits;
			u->blob_new = js.blob_new;
			u->blob_expired = js.blob_expired;
			u->blob_revalidated = js.blob_revalidated;
			u->reads = js.reads;
			u->read_bytes = js.read_bytes;
			u->leaf_reads = js.leaf_reads;
			u->name_reads = js.name_reads;
			u->compiled = js.compiled;
			u->native_cfi = js.native_cfi;
			u->native_fp = js.native_fp;
			u->end_stack = js.ends[UNWIND_END_STACK];
			u->end_bad = js.ends[UNWIND_END_BAD];
			u->end_unknown = js.ends[UNWIND_END_UNKNOWN];
			u->spliced = js.spliced;
			profile_depths(&js, u);
		}
	}
	profile_native_stats(p, st);
	profile_rtmaps_stats(p, st);
}

void profile_close(struct profile *p)
{
	if (!p)
		return;
	if (p->s)
		sampler_close(p->s);
	if (p->sym)
		symbolizer_close(p->sym);
	debuginfo_free(p->dbg);
	jvmunwind_free(p->ju);
	nativeunwind_free(p->nu);
	cfi_free(p->cfi); /* after the unwinders that borrow it */
	for (size_t i = 0; i < p->njit; i++) {
		struct profile_jit *j = &p->jit[i];
		struct fs_error err = {0};
		perfmap_free(j->map);
		if (!j->win)
			continue;
		/* Nothing of ours keeps running in the JVM (and --perf-map is
		 * written from the complete log). */
		int r = map_window_stop(j->win, &err);
		if (r < 0 && !j->win_failed)
			profile_window_warn(p, j->pid, r, err.msg);
		map_window_free(j->win);
	}
	profile_rtmaps_free(p);
	fold_free(p->table);
	threadnames_free(p->threads);
	free(p->chains);
	free(p->words);
	for (size_t i = 0; p->pids && i < PROFILE_PID_SLOTS; i++)
		if (p->pids[i].memfd > 0)
			close(p->pids[i].memfd - 1);
	free(p->pids);
	free(p->line);
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	free(p->name_slots);
	free(p);
}
