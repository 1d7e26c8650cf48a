/* profile_fold.c - the end of a window (or an early fold): map the JVMs
 * (their timed JIT logs, or a map taken now), symbolize every distinct
 * chain once and add it to the fold table. See profile.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "proc.h"
#include "profile_int.h"
#include "profile_rtmaps.h"
#include "timeutil.h"
#include "utf8.h"

/* A symbolizer_jit_fn for JVMs named by a map taken at the end (ctx: the
 * profile): that map, else the compiled methods the HotSpot unwinder found
 * during the window (code freed or replaced before the end). */
static int profile_jit_end_map(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf,
			       size_t len)
{
	struct profile *p = ctx;
	const struct profile_jit *j = NULL;
	for (size_t i = 0; i < p->njit && !j; i++)
		if (p->jit[i].pid == pid && p->jit[i].map)
			j = &p->jit[i];
	int in_map = j && symbolizer_jit_perfmap(j->map, pid, addr, time, buf, len);
	/* The unwinder's view is asked only when it can change the answer: no
	 * name in the map, or a vmstructs map (named as the unwinder names
	 * methods) whose method there may have replaced the one sampled. */
	if (in_map && !j->map_vmstructs)
		return 1;
	char seen[1024];
	if (!p->ju || !jvmunwind_code_name(p->ju, pid, addr, time, seen, sizeof(seen)))
		return in_map;
	if (in_map) {
		const char *arrow = strstr(buf, "->");
		size_t outer = arrow ? (size_t)(arrow - buf) : strlen(buf);
		if (strlen(seen) == outer && strncmp(seen, buf, outer) == 0)
			return 1; /* the same method: keep the map's inline chain */
	}
	snprintf(buf, len, "%s", seen);
	return 1;
}

/* No map of pid: what the unwinder found still names its compiled code. */
static void profile_set_unwinder_names(struct profile *p, pid_t pid)
{
	if (p->ju && jvmunwind_has(p->ju, pid))
		(void)symbolizer_set_jit(p->sym, pid, profile_jit_end_map, p);
}

static void profile_set_map(struct profile *p, pid_t pid, struct perfmap *m, int vmstructs)
{
	struct profile_jit *j = profile_jit_slot(p, pid);
	if (!j || j->win || profile_jit_full(p, pid, m->memory) ||
	    symbolizer_set_jit(p->sym, pid, profile_jit_end_map, p) < 0) {
		perfmap_free(m);
		return;
	}
	perfmap_free(j->map);
	j->map = m;
	j->map_vmstructs = vmstructs;
}

/* pid's window, if it has one: read its log (the tail, and stop the agent,
 * once the sampler is closed). Fills jr; 1 when the JVM is named by it. */
static int profile_map_window(struct profile *p, pid_t pid, struct profile_jvm_result *jr)
{
	struct profile_jit *j = NULL;
	struct fs_error err = {0};
	for (size_t i = 0; i < p->njit && !j; i++)
		if (p->jit[i].pid == pid && p->jit[i].win)
			j = &p->jit[i];
	if (!j)
		return 0;
	/* A read even at the end of the window: the agent is stopped in
	 * profile_close, after the graph is written, so its attach round trip
	 * is not part of the end-of-window latency. */
	int r = 0;
	if (!j->win_failed && profile_jit_full(p, pid, 0))
		j->win_failed = 1; /* the budget: keep what was read */
	if (!j->win_failed) {
		map_window_set_budget(j->win, profile_jit_room(p, pid));
		r = map_window_read(j->win, &err);
	}
	if (r < 0) {
		j->win_failed = 1;
		profile_window_warn(p, pid, r, err.msg);
	}
	jr->ok = 1;
	jr->res = *map_window_result(j->win);
	jr->windowed = 1;
	return 1;
}

static int profile_has(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

int profile_map_jvms(struct profile *p)
{
	pid_t todo[PROFILE_MAX_JVMS];
	size_t n = 0;
	p->st.njvm = 0;
	if (p->o.no_map)
		return 0;
	cleanup_free pid_t *found = NULL;
	size_t nfound = 0;
	if (!p->o.pid && map_find_jvms(&p->entry, &found, &nfound, NULL) < 0)
		nfound = 0;
	for (size_t i = 0; i < nfound && n < PROFILE_MAX_JVMS; i++) {
		struct profile_pid *pp = profile_pid_note(p, found[i]);
		if (pp)
			profile_pid_jvm(p, pp); /* seen before it loaded libjvm.so */
		todo[n++] = found[i];
	}
	for (size_t i = 0; i < PROFILE_PID_SLOTS && n < PROFILE_MAX_JVMS; i++) {
		const struct profile_pid *pp = &p->pids[i];
		if (pp->pid && pp->jvm && !profile_has(todo, n, pp->pid))
			todo[n++] = pp->pid;
	}
	int mapped = 0;
	for (size_t i = 0; i < n; i++) {
		struct profile_jvm_result *jr = &p->st.jvm[p->st.njvm++];
		struct profile_pid *pp = profile_pid_slot(p, todo[i]);
		struct fs_error err = {0};
		struct perfmap *m = NULL;
		memset(jr, 0, sizeof(*jr));
		jr->pid = todo[i];
		if (profile_map_window(p, todo[i], jr)) {
			mapped++;
			continue;
		}
		if (pp->pid == todo[i] && pp->start_time && !proc_alive(todo[i], pp->start_time)) {
			snprintf(jr->msg, sizeof(jr->msg),
				 "JVM pid %d exited during the recording: its Java frames stay "
				 "[unknown]",
				 (int)todo[i]);
		} else if (map_jvm(&p->entry, todo[i], &p->o.map, &m, &jr->res, &err) < 0) {
			profile_set_unwinder_names(p, todo[i]);
			snprintf(jr->msg, sizeof(jr->msg),
				 "no JIT map of JVM pid %d (only the compiled code the unwinder "
				 "walked is named, without inlining): %s",
				 (int)todo[i], err.msg);
		} else {
			jr->ok = 1;
			mapped++;
			profile_set_map(p, todo[i], m, jr->res.mode == MAP_MODE_VMSTRUCTS);
			continue;
		}
		if (pp->pid != todo[i] || !pp->warned_map)
			profile_warn(p, "%s", jr->msg);
		if (pp->pid == todo[i])
			pp->warned_map = 1;
	}
	return mapped;
}

/* Append ";name" (n bytes) to p->line at *pos, sanitized for folded text:
 * valid UTF-8 (invalid bytes from a perf map, an ELF symbol or a comm
 * become U+FFFD), no ';' or control characters. */
static void profile_put(struct profile *p, size_t *pos, const char *name, size_t n,
			const char *suffix)
{
	if (*pos + 2 >= PROFILE_LINE_MAX)
		return;
	p->line[(*pos)++] = ';';
	*pos += utf8_sanitize(name, n, p->line + *pos, PROFILE_LINE_MAX - *pos, UTF8_FRAME, NULL);
	for (; suffix && *suffix && *pos + 1 < PROFILE_LINE_MAX; suffix++)
		p->line[(*pos)++] = *suffix;
}

/* A JIT name "a->b->c" is an inlining chain (docs/agent.md): frames a,
 * b_[i], c_[i], as stackcollapse-perf.pl and `flamesidecar collapse` do. */
static void profile_put_jit(struct profile *p, size_t *pos, const char *name)
{
	const char *s = name, *arrow;
	int inlined = 0;
	while ((arrow = strstr(s + (*s ? 1 : 0), "->"))) {
		size_t n = (size_t)(arrow - s);
		profile_put(p, pos, s, n, inlined && !memmem(s, n, "_[i]", 4) ? "_[i]" : NULL);
		inlined = 1;
		s = arrow + 2;
	}
	profile_put(p, pos, s, strlen(s), inlined && !strstr(s, "_[i]") ? "_[i]" : NULL);
}

/* Did a JIT address of chain c change owner between its first and last
 * sample? Then its samples are all named by the later owner: the one case
 * where naming by time is approximate (docs/agent.md, "Windows"). */
static int profile_owner_changed(const struct profile *p, const struct profile_chain *c,
				 const struct symbolizer_frame *frames, size_t n)
{
	const struct jitlog *log = NULL;
	if (c->first == c->last)
		return 0;
	for (size_t i = 0; i < p->njit && !log; i++)
		if (p->jit[i].pid == c->pid && p->jit[i].win)
			log = map_window_log(p->jit[i].win);
	for (size_t k = 0; log && k < n; k++)
		if (frames[k].kind == SYMBOLIZER_KIND_JIT &&
		    jitlog_lookup(log, frames[k].addr, c->first) !=
			jitlog_lookup(log, frames[k].addr, c->last))
			return 1;
	return 0;
}

/* Count c's samples whose leaf is compiled Java code of a window's JIT
 * log, and those of code with safepoint-only debug info. */
static void profile_count_leaf(struct profile *p, const struct profile_chain *c,
			       const struct symbolizer_frame *frames, size_t n)
{
	if (!n || frames[0].kind != SYMBOLIZER_KIND_JIT || !frames[0].resolved)
		return;
	for (size_t i = 0; i < p->njit; i++) {
		if (p->jit[i].pid != c->pid || !p->jit[i].win)
			continue;
		const struct jitlog_entry *e =
		    jitlog_lookup_entry(map_window_log(p->jit[i].win), frames[0].addr, c->last);
		if (!e)
			return;
		p->st.jit_leaves += c->count;
		if (e->sp_only)
			p->st.sp_only_leaves += c->count;
		return;
	}
}

/* Hand native frame f, just put at p->line[start .. pos), with its module
 * to opts.on_module. 0 or the callback's non-zero value. */
static int profile_module(struct profile *p, const struct symbolizer_frame *f, size_t start,
			  size_t pos)
{
	if (!p->o.on_module || f->kind != SYMBOLIZER_KIND_NATIVE || !f->module || pos <= start + 1)
		return 0;
	return p->o.on_module(p->o.on_stack_ctx, p->line + start + 1, pos - start - 1, f->module,
			      f->build_id);
}

/* Frame names into p->line: "comm;root;...;leaf". *merr: the first
 * non-zero value of opts.on_module. */
static size_t profile_line(struct profile *p, const struct profile_chain *c, int *merr)
{
	struct symbolizer_frame frames[SYMBOLIZER_MAX_FRAMES];
	size_t n = 0, pos;
	/* named leaf frames first in the chain (profile.h): after the rest */
	const uint64_t *words = p->words + c->off;
	size_t nr = c->nr, nnamed = 0;
	if (nr >= 2 && words[0] == PROFILE_NAMES_WORD && words[1] <= nr - 2) {
		nnamed = (size_t)words[1];
		words += 2 + nnamed;
		nr -= 2 + nnamed;
	}
	/* JIT code is named as it was at the chain's last sample: exact unless
	 * an address of the chain changed owner between its first and last
	 * sample (docs/agent.md, "Windows"). */
	symbolizer_set_time(p->sym, c->last);
	symbolizer_symbolize(p->sym, c->pid, words, nr, frames, SYMBOLIZER_MAX_FRAMES, &n);
	const char *comm = symbolizer_comm(p->sym, c->pid);
	if (!comm)
		comm = "[unknown]";
	pos = utf8_sanitize(comm, strnlen(comm, 32), p->line, 128, 0, NULL);
	for (size_t i = 0; i < pos; i++) /* ASCII bytes: never inside a sequence */
		if (p->line[i] == ';' || (unsigned char)p->line[i] < 0x20)
			p->line[i] = '_';
	if (p->o.with_pid)
		pos += (size_t)snprintf(p->line + pos, 32, "-%d", (int)c->pid);
	if (p->o.thread_frames && p->threads) {
		const char *t = threadnames_name(p->threads, c->thread, NULL, NULL);
		if (!t || !*t)
			t = "[unknown]";
		profile_put(p, &pos, t, strlen(t), NULL);
	}
	if (c->nr && p->words[c->off + c->nr - 1] == PROFILE_CUT_WORD) {
		/* the root end is missing: say so where the root would be */
		profile_put(p, &pos, BUDGET_TRUNCATED_FRAME, strlen(BUDGET_TRUNCATED_FRAME), NULL);
		p->st.cut += c->count;
	}
	if (profile_owner_changed(p, c, frames, n))
		p->st.time_approx += c->count;
	profile_count_leaf(p, c, frames, n);
	for (size_t k = n; k-- > 0;) {
		const struct symbolizer_frame *f = &frames[k];
		p->st.frames[f->kind] += c->count;
		if (f->resolved)
			p->st.resolved[f->kind] += c->count;
		size_t start = pos;
		/* a runtime's perf map names one frame, not an inline chain */
		int rt = profile_rtmaps_frame(p, c->pid, f, c->count);
		if (f->kind == SYMBOLIZER_KIND_JIT && f->resolved && !rt)
			profile_put_jit(p, &pos, f->name);
		else
			profile_put(p, &pos, f->name, strlen(f->name), NULL);
		if (!*merr)
			*merr = profile_module(p, f, start, pos);
	}
	for (size_t k = nnamed; k-- > 0;) {
		uint64_t idx = p->words[c->off + 2 + k];
		if (idx >= 1 && idx <= p->nnames)
			profile_put(p, &pos, p->names[idx - 1], strlen(p->names[idx - 1]), NULL);
	}
	return pos;
}

/* The fold table is full (its budget): count the chain's samples in its
 * process's "comm;[dropped: stack table full]" stack instead, rewriting
 * p->line to it (so the export gets the same stack). */
static int profile_add_dropped(struct profile *p, size_t *len, uint64_t count)
{
	static const char dropped[] = ";" BUDGET_DROPPED_FRAME;
	const char *semi = memchr(p->line, ';', *len);
	size_t root = semi ? (size_t)(semi - p->line) : *len;
	memcpy(p->line + root, dropped, sizeof(dropped) - 1);
	*len = root + sizeof(dropped) - 1;
	p->st.table_dropped += count;
	return fold_add_over(p->table, p->line, *len, count);
}

int profile_fold(struct profile *p, int map_first, struct fs_error *err)
{
	uint64_t t0 = timeutil_now_us();
	if (map_first) {
		profile_map_jvms(p);
		profile_rtmaps_read_all(p);
	}
	uint64_t t1 = timeutil_now_us();
	int r = 0;
	for (size_t i = 0; i < p->cap; i++) {
		struct profile_chain *c = &p->chains[i];
		if (!c->count)
			continue;
		int e = 0;
		size_t len = profile_line(p, c, &e);
		struct profile_origin o = {.pid = c->pid};
		if (p->threads) {
			/* every sample gets a thread: one whose comm could not be
			 * read (gone before its first sample was read) or beyond
			 * the bound is "[unknown]", so thread counts add up */
			o.thread = threadnames_name(p->threads, c->thread, NULL, &o.tid);
			if (!o.thread || !*o.thread)
				o.thread = "[unknown]";
		}
		int a = r ? 0 : fold_add(p->table, p->line, len, c->count);
		if (a == -ENOSPC)
			a = profile_add_dropped(p, &len, c->count);
		if (a < 0)
			r = fs_error_set(err, ENOMEM, "adding a folded stack");
		if (!r && !e && p->o.on_stack)
			e = p->o.on_stack(p->o.on_stack_ctx, &o, p->line, len, c->count);
		if (e)
			r = fs_error_set(err, e < 0 ? -e : ENOMEM, "adding a stack to the export");
		if (!r)
			p->st.folded += c->count;
		c->count = 0;
	}
	p->count = 0;
	p->nwords = 0;
	p->warm_off = 0;
	p->st.map_us = t1 - t0;
	p->st.symbolize_us = timeutil_now_us() - t1;
	return r;
}

struct fold *profile_table(struct profile *p)
{
	return p->table;
}

int profile_reset_table(struct profile *p)
{
	struct fold *n = fold_new();
	if (!n)
		return -ENOMEM;
	fold_set_budget(n, profile_table_budget(&p->o));
	fold_free(p->table);
	p->table = n;
	memset(p->st.frames, 0, sizeof(p->st.frames));
	p->st.time_approx = 0;
	p->st.jit_leaves = p->st.sp_only_leaves = 0;
	memset(p->st.resolved, 0, sizeof(p->st.resolved));
	p->st.folded = 0;
	p->st.table_dropped = 0;
	p->st.cut = 0;
	return 0;
}
