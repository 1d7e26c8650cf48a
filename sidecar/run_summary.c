/* run_summary.c - see run_summary.h */
#include "run_summary.h"

#include <stdio.h>

#include "budget.h"
#include "cleanup.h"
#include "common.h"
#include "fold.h"
#include "hot.h"
#include "jail.h"
#include "localfs.h"
#include "procmem_guard.h"
#include "textsafe.h"

#define RUN_HOT_FRAMES 5 /* the hottest frames listed */

static double run_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static double run_per(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* The HotSpot unwinder's work per sample, counted: what its CPU figure
 * (thread CPU time, noisy on a loaded machine) is made of. */
static void run_summary_unwind_work(const struct profile_unwinder *u)
{
	if (!u->samples)
		return;
	printf("unwind work pid %d: per sample %.1f frames (%.1f compiled, %.1f interpreted, "
	       "%.1f native by CFI, %.1f by frame pointer), %.2f blob lookups (%.1f%% cached; "
	       "%.3f new pcs, %.3f expired, %.1f%% of them renewed, one read at most), %.3f reads "
	       "of the JVM's memory (%.0f bytes; %.3f of a leaf's code, %.3f of method names); "
	       "short walks: %.1f%% "
	       "past the stack copy, %.1f%% at a bad frame, %.1f%% at an unknown pc (%.1f%% of "
	       "samples went on by the kernel's frame-pointer chain)\n",
	       (int)u->pid, run_per(u->frames, u->samples), run_per(u->compiled, u->samples),
	       run_per(u->interpreted, u->samples), run_per(u->native_cfi, u->samples),
	       run_per(u->native_fp, u->samples), run_per(u->blob_lookups, u->samples),
	       run_pct(u->blob_hits, u->blob_lookups), run_per(u->blob_new, u->samples),
	       run_per(u->blob_expired, u->samples), run_pct(u->blob_revalidated, u->blob_expired),
	       run_per(u->reads, u->samples), run_per(u->read_bytes, u->samples),
	       run_per(u->leaf_reads, u->samples), run_per(u->name_reads, u->samples),
	       run_pct(u->end_stack, u->samples), run_pct(u->end_bad, u->samples),
	       run_pct(u->end_unknown, u->samples), run_pct(u->spliced, u->samples));
}

/* One line per JVM: which unwinder it got, and how deep it went. */
static void run_summary_unwind(const struct profile_stats *st)
{
	if (st->stack_copy)
		printf("unwind     stack copies of %u bytes with %llu samples\n", st->stack_copy,
		       (unsigned long long)st->stack_copies);
	for (size_t i = 0; i < st->nunwinder; i++) {
		const struct profile_unwinder *u = &st->unwinder[i];
		const char *fp = u->fp_missing ? "without frame pointers" : "with frame pointers";
		if (u->hotspot)
			printf(
			    "unwinder   pid %d (%s): hotspot, %llu samples, %.1f%% reached the "
			    "thread's base (stack used p50 %u KiB, p99 %u KiB, max %u KiB), "
			    "%llu interpreted frames, %.1f us CPU per sample\n",
			    (int)u->pid, fp, (unsigned long long)u->samples,
			    run_pct(u->reached_root, u->samples), u->depth_p50_kib,
			    u->depth_p99_kib, u->depth_max_kib, (unsigned long long)u->interpreted,
			    u->samples ? (double)u->unwind_ns / 1000.0 / (double)u->samples : 0.0);
		if (u->hotspot && u->reached_root)
			printf("stack use  pid %d: whole walks within 4 KiB %.1f%%, 8 KiB %.1f%%, "
			       "16 KiB %.1f%%, 32 KiB %.1f%% (--stack-copy)\n",
			       (int)u->pid, run_pct(u->within_kib[0], u->reached_root),
			       run_pct(u->within_kib[1], u->reached_root),
			       run_pct(u->within_kib[2], u->reached_root),
			       run_pct(u->within_kib[3], u->reached_root));
		if (u->hotspot) {
			run_summary_unwind_work(u);
			continue;
		}
		if (u->why[0])
			printf("unwinder   pid %d (%s): frame pointers (no hotspot unwinder: %s)\n",
			       (int)u->pid, fp, u->why);
		else
			printf("unwinder   pid %d (%s): frame pointers\n", (int)u->pid, fp);
	}
}

/* One line per process that got the native unwinder (most samples first),
 * one for the rest. */
static void run_summary_native(const struct profile_stats *st)
{
	if (st->native_wanted && !st->nnative)
		printf("native     %llu processes without frame pointers keep the kernel's "
		       "chains (%s)\n",
		       (unsigned long long)st->native_wanted,
		       st->stack_copy ? "no room in the unwinder" : "no stack copies");
	for (size_t i = 0; i < st->nnative; i++) {
		const struct profile_unwinder *u = &st->native[i];
		printf("unwinder   pid %d (without frame pointers: %s): native, %llu samples, "
		       "%.1f%% reached the thread's base, %llu frames by CFI, %llu by frame "
		       "pointer, %.1f us CPU per sample\n",
		       (int)u->pid, u->why, (unsigned long long)u->samples,
		       run_pct(u->reached_root, u->samples), (unsigned long long)u->native_cfi,
		       (unsigned long long)u->native_fp,
		       u->samples ? (double)u->unwind_ns / 1000.0 / (double)u->samples : 0.0);
	}
	if (st->native_more)
		printf("unwinder   %zu more processes: native, %llu samples, %.1f%% reached the "
		       "thread's base\n",
		       st->native_more, (unsigned long long)st->native_rest.samples,
		       run_pct(st->native_rest.reached_root, st->native_rest.samples));
}

/* How many files got names from separate debug info, and from where. */
static void run_summary_debuginfo(const struct debuginfo_stats *d)
{
	uint64_t all = 0;
	if (!d->enabled) {
		printf("debuginfo  off (config \"debuginfo\": false)\n");
		return;
	}
	for (int i = 1; i < DEBUGINFO_SOURCE_COUNT; i++)
		all += d->files[i];
	printf("debuginfo  %llu files named from separate debug info", (unsigned long long)all);
	const char *sep = ": ";
	for (int i = 1; i < DEBUGINFO_SOURCE_COUNT; i++) {
		if (!d->files[i])
			continue;
		printf("%s%llu %s", sep, (unsigned long long)d->files[i],
		       debuginfo_source_name((enum debuginfo_source)i));
		sep = ", ";
	}
	if (d->refused)
		printf("; %llu debug files refused (see the warnings)",
		       (unsigned long long)d->refused);
	if (d->debuginfod)
		printf("; debuginfod asked %llu times, %llu answered\n",
		       (unsigned long long)d->queries, (unsigned long long)d->fetched);
	else
		printf("; debuginfod off (no debuginfod_urls, no DEBUGINFOD_URLS)\n");
}

/* What the deadlines cut: files the container could stall, children the
 * kernel held past their kill (docs/security.md, "Hangs"). */
static void run_summary_stalls(void)
{
	if (localfs_refused())
		printf("stalls     %u files skipped: on FUSE, a network or an unknown file "
		       "system, whose reads the container could stall (see the warnings)\n",
		       localfs_refused());
	unsigned long refused = procmem_guard_refused(), errs = procmem_guard_query_errors();
	if (refused || errs)
		printf("stalls     %lu memory reads cut short or refused: mapped from a file a "
		       "daemon serves (%lu caught only by the query just before the read), %lu "
		       "queries failed\n",
		       refused, procmem_guard_query_refused(), errs);
	if (jail_abandoned())
		printf("stalls     %u confined children did not die when killed at their deadline "
		       "(held in the kernel): abandoned\n",
		       jail_abandoned());
}

/* The share of frames named per kind. */
static void run_summary_resolved(const struct profile_stats *st)
{
	static const struct {
		enum symbolizer_kind k;
		const char *name;
	} kinds[] = {{SYMBOLIZER_KIND_JIT, "java"},
		     {SYMBOLIZER_KIND_NATIVE, "native"},
		     {SYMBOLIZER_KIND_KERNEL, "kernel"}};
	uint64_t all = 0, named = 0;
	for (int k = 0; k < SYMBOLIZER_KIND_COUNT; k++) {
		all += st->frames[k];
		named += st->resolved[k];
	}
	printf("resolved  ");
	for (size_t i = 0; i < FS_ARRAY_SIZE(kinds); i++)
		printf(" %s %.1f%% of %llu,", kinds[i].name,
		       run_pct(st->resolved[kinds[i].k], st->frames[kinds[i].k]),
		       (unsigned long long)st->frames[kinds[i].k]);
	printf(" unknown address %llu; unresolved %.1f%% of %llu frames\n",
	       (unsigned long long)st->frames[SYMBOLIZER_KIND_UNKNOWN], run_pct(all - named, all),
	       (unsigned long long)all);
}

/* The JVMs' maps, the runtimes' perf maps, inlining and JIT notes. */
static void run_summary_jvms(const struct profile_stats *st)
{
	for (size_t i = 0; i < st->njvm; i++) {
		const struct profile_jvm_result *j = &st->jvm[i];
		if (j->ok && j->windowed) {
			printf(
			    "jvm        pid %d (pid %d in the container): %zu JIT symbols of %zu "
			    "code loads over the window (agent JIT log, %zu KiB; last read %.1f "
			    "ms)\n",
			    (int)j->pid, (int)j->res.ns_pid, j->res.entries, j->res.loads,
			    j->res.bytes >> 10, (double)j->res.elapsed_us / 1000.0);
			if (j->res.dropped)
				printf(
				    "jvm        pid %d: %zu JIT log lines, loads or bytes dropped "
				    "(the JIT memory or work budget, or an interrupt): their "
				    "code may show as [unknown]\n",
				    (int)j->pid, j->res.dropped);
		} else if (j->ok)
			printf("jvm        pid %d (pid %d in the container): %zu JIT symbols (%s, "
			       "%.1f ms%s%s)\n",
			       (int)j->pid, (int)j->res.ns_pid, j->res.entries,
			       map_mode_name(j->res.mode), (double)j->res.elapsed_us / 1000.0,
			       j->res.cut[0] ? "; code cache walk stopped at its " : "",
			       j->res.cut);
		else
			printf("jvm        pid %d: not mapped (see the warning above)\n",
			       (int)j->pid);
	}
	for (size_t i = 0; i < st->nrtmap; i++) {
		const struct profile_rtmap_result *r = &st->rtmap[i];
		char comm[sizeof(r->comm) * 4];
		printf("perf map   pid %d (%s, pid %d in the container): %zu JIT symbols from "
		       "/tmp/perf-%d.map (%llu KiB), named %.1f%% of its %llu JIT frames",
		       (int)r->pid, textsafe(r->comm, comm, sizeof(comm), 0), (int)r->ns_pid,
		       r->entries, (int)r->ns_pid, (unsigned long long)(r->bytes >> 10),
		       run_pct(r->named, r->jit), (unsigned long long)r->jit);
		if (r->skipped)
			printf(", %zu lines skipped", r->skipped);
		if (r->restarts)
			printf(", read again %u times (replaced or truncated)", r->restarts);
		if (r->capped)
			printf(", only its first %lu MiB read", PERFMAP_MAX_CONTAINER_FILE >> 20);
		if (r->stopped)
			printf(", reading stopped (see the warning)");
		printf("\n");
	}
	for (size_t i = 0; i < st->njvm; i++)
		if (st->jvm[i].ok && st->jvm[i].windowed && st->jvm[i].res.nonsafepoints[0])
			printf("inlining   pid %d: -XX:+DebugNonSafepoints %s\n",
			       (int)st->jvm[i].pid, st->jvm[i].res.nonsafepoints);
	if (st->jit_leaves)
		printf("inlining   %llu of %llu leaf frames from safepoint-only debug info (code "
		       "compiled before -XX:+DebugNonSafepoints: self time may sit on a caller)\n",
		       (unsigned long long)st->sp_only_leaves, (unsigned long long)st->jit_leaves);
	if (st->time_approx)
		printf("jit        %llu samples in stacks whose code changed owner while they were "
		       "sampled: named by the later owner\n",
		       (unsigned long long)st->time_approx);
}

/* The hottest frames by self samples. */
static void run_summary_hot(struct profile *p)
{
	struct hot_frame *hot = NULL;
	size_t n = 0;
	uint64_t total = fold_total(profile_table(p));
	if (hot_frames(profile_table(p), 0, RUN_HOT_FRAMES, &hot, &n) == 0 && n) {
		printf("hottest    (self samples)\n");
		for (size_t i = 0; i < n; i++) {
			char safe[2048]; /* frame names come from the container */
			printf("  %5.1f%% %8llu  %s\n", run_pct(hot[i].self, total),
			       (unsigned long long)hot[i].self,
			       textsafe(hot[i].name, safe, sizeof(safe), 0));
		}
	}
	hot_frames_free(hot, n);
	if (!total)
		printf("note       no samples: was the container idle (or its processes gone)?\n");
}

/* Where the files are and how long they took. */
static void run_summary_files(const struct run_summary_in *in, const struct profile_stats *st)
{
	printf("svg        %s\n", in->svg);
	if (in->folded)
		printf("folded     %s\n", in->folded);
	if (in->pprof)
		printf("pprof      %s\n", in->pprof);
	if (in->speedscope)
		printf("speedscope %s\n", in->speedscope);
	printf("graph      written %llu ms after the window closed (JIT maps %.1f ms, "
	       "symbols %.1f ms, CPU %.1f ms)\n",
	       (unsigned long long)in->after_ms, (double)st->map_us / 1000.0,
	       (double)st->symbolize_us / 1000.0, (double)in->after_cpu_us / 1000.0);
	fflush(stdout);
}

void run_summary_print(struct profile *p, const struct run_summary_in *in)
{
	struct profile_stats st;
	profile_stats(p, &st);
	/* The name and where it came from: an annotation's is only a claim. */
	char label[REGISTRY_LABEL_MAX + 48];
	const char *src = registry_entry_label_source(in->entry);
	label[0] = '\0';
	if (src) {
		char name[REGISTRY_LABEL_MAX + 1];
		registry_entry_label(in->entry, name, sizeof(name));
		snprintf(label, sizeof(label), " %s (name from %s)", name, src);
	}
	printf("container  %.*s%s  scope %s (%s), %u CPUs, %u Hz, %llu.%01llu s%s\n",
	       common_id_width(in->entry->id), in->entry->id, label, st.scope, st.events, st.cpus,
	       in->frequency ? in->frequency : 99, (unsigned long long)(in->window_ms / 1000),
	       (unsigned long long)(in->window_ms % 1000 / 100),
	       in->ended_early ? " (ended early by a signal)" : "");
	if (st.filter_why[0])
		printf("filter     no kernel filter (%s): %s instead\n", st.filter_why, st.events);
	printf("samples    %llu (lost %llu, truncated stacks %llu, leaf callers from the stack "
	       "%llu)\n",
	       (unsigned long long)st.samples, (unsigned long long)st.lost,
	       (unsigned long long)st.truncated, (unsigned long long)st.leaf_callers);
	if (st.early_folds || st.dropped)
		printf("memory     raw stacks folded early %llu times (table full), %llu samples "
		       "dropped (out of memory)\n",
		       (unsigned long long)st.early_folds, (unsigned long long)st.dropped);
	if (st.table_dropped)
		printf(
		    "memory     stack table full (%zu MiB, max_stack_table_mib): %llu samples of "
		    "new stacks counted as \"" BUDGET_DROPPED_FRAME "\"\n",
		    st.table_bytes >> 20, (unsigned long long)st.table_dropped);
	if (st.cut)
		printf("stacks     %llu samples cut at the root end (deeper than --max-stack, "
		       "at most %u frames): \"" BUDGET_TRUNCATED_FRAME "\" under the process\n",
		       (unsigned long long)st.cut, SYMBOLIZER_MAX_FRAMES);
	run_summary_resolved(&st);
	run_summary_jvms(&st);
	run_summary_unwind(&st);
	run_summary_native(&st);
	run_summary_debuginfo(&st.debug);
	run_summary_stalls();
	run_summary_hot(p);
	run_summary_files(in, &st);
}

void run_summary_offcpu(const struct offcpu *oc, uint64_t window_ms)
{
	struct offcpu_stats st;
	offcpu_stats(oc, &st);
	printf("threads    %llu ticks over %u processes, %llu thread looks, %llu blocked "
	       "(%llu stacks copied, %llu unchanged since the last tick, %llu woken and blocked "
	       "at the same wait point, %llu idle ticks between looks, %llu without a user "
	       "stack), %llu looks lost to the cap (%llu ms), %.1f ms CPU (%.2f%% of the window)\n",
	       (unsigned long long)st.ticks, st.procs, (unsigned long long)st.thread_ticks,
	       (unsigned long long)st.blocked, (unsigned long long)st.copies,
	       (unsigned long long)st.reused, (unsigned long long)st.same_point,
	       (unsigned long long)st.idle_skips, (unsigned long long)st.no_stack,
	       (unsigned long long)st.capped, (unsigned long long)(st.capped_us / 1000),
	       (double)st.cpu_ns / 1e6,
	       window_ms ? (double)st.cpu_ns / 1e4 / (double)window_ms : 0.0);
	fflush(stdout);
}
