/* nativeunwind.c - processes without frame pointers unwound by CFI: see
 * nativeunwind.h */
#include "nativeunwind.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nativewalk.h"
#include "timeutil.h"

struct nativeunwind_proc {
	struct cfi_proc *maps; /* NULL once removed */
	struct nativewalk walk;
	struct nativeunwind_stats st;
};

struct nativeunwind {
	struct cfi *cfi;
	struct nativeunwind_proc *procs[NATIVEUNWIND_MAX_PROCS];
	size_t n;
	size_t last; /* index of the last hit: samples come in runs of one process */
};

int nativeunwind_new(struct cfi *c, struct nativeunwind **out)
{
	struct nativeunwind *nu = calloc(1, sizeof(*nu));
	if (!nu)
		return -ENOMEM;
	nu->cfi = c;
	*out = nu;
	return 0;
}

static void nativeunwind_proc_free(struct nativeunwind_proc *np)
{
	if (!np)
		return;
	cfi_proc_free(np->maps);
	free(np);
}

void nativeunwind_free(struct nativeunwind *nu)
{
	if (!nu)
		return;
	for (size_t i = 0; i < nu->n; i++)
		nativeunwind_proc_free(nu->procs[i]);
	free(nu);
}

/* pid's live entry, or NULL. */
static struct nativeunwind_proc *nativeunwind_find(struct nativeunwind *nu, pid_t pid)
{
	if (nu->last < nu->n && nu->procs[nu->last]->st.pid == pid && nu->procs[nu->last]->maps)
		return nu->procs[nu->last];
	for (size_t i = 0; i < nu->n; i++) {
		if (nu->procs[i]->st.pid == pid && nu->procs[i]->maps) {
			nu->last = i;
			return nu->procs[i];
		}
	}
	return NULL;
}

int nativeunwind_has(const struct nativeunwind *nu, pid_t pid)
{
	return nativeunwind_find((struct nativeunwind *)nu, pid) != NULL;
}

/* A slot for a new process: a fresh one, or that of a removed process
 * that had no sample. -1 when full. */
static long nativeunwind_slot(struct nativeunwind *nu)
{
	if (nu->n < NATIVEUNWIND_MAX_PROCS)
		return (long)nu->n++;
	for (size_t i = 0; i < nu->n; i++) {
		if (!nu->procs[i]->maps && !nu->procs[i]->st.samples) {
			nativeunwind_proc_free(nu->procs[i]);
			nu->procs[i] = NULL;
			return (long)i;
		}
	}
	return -1;
}

int nativeunwind_add(struct nativeunwind *nu, pid_t pid, const char *lacks, struct fs_error *err)
{
	if (nativeunwind_find(nu, pid))
		return 0;
	struct nativeunwind_proc *np = calloc(1, sizeof(*np));
	if (!np)
		return fs_error_set(err, ENOMEM, "allocating the native unwinder of pid %d",
				    (int)pid);
	int r = cfi_proc_open(nu->cfi, pid, &np->maps, err);
	if (r < 0) {
		free(np);
		return r;
	}
	long i = nativeunwind_slot(nu);
	if (i < 0) {
		nativeunwind_proc_free(np);
		return fs_error_set(err, ENOSPC, "more than %d processes to unwind",
				    NATIVEUNWIND_MAX_PROCS);
	}
	nativewalk_init(&np->walk, np->maps);
	np->st.pid = pid;
	snprintf(np->st.lacks, sizeof(np->st.lacks), "%s", lacks ? lacks : "?");
	nu->procs[i] = np;
	return 0;
}

void nativeunwind_remove(struct nativeunwind *nu, pid_t pid)
{
	struct nativeunwind_proc *np = nativeunwind_find(nu, pid);
	if (!np)
		return;
	cfi_proc_free(np->maps);
	np->maps = NULL;
}

/* The walk stopped short of the base: when the kernel's frame-pointer
 * chain holds the walk's last return address, go on with the kernel's
 * frames after it (a caller built with frame pointers). The new length. */
static size_t nativeunwind_splice(const struct sample *smp, uint64_t *out, size_t n, size_t max,
				  struct nativeunwind_stats *st)
{
	uint64_t last = out[n - 1];
	size_t i = 0;
	while (i < smp->nr && smp->ips[i] != (uint64_t)PERF_CONTEXT_USER)
		i++;
	for (i++; i < smp->nr; i++)
		if (smp->ips[i] == last)
			break;
	if (i >= smp->nr)
		return n;
	st->spliced++;
	for (i++; i < smp->nr && n < max; i++) {
		if (smp->ips[i] >= (uint64_t)PERF_CONTEXT_MAX)
			break;
		out[n++] = smp->ips[i];
	}
	return n;
}

static void nativeunwind_count_walk(struct nativeunwind_stats *st, size_t got,
				    const struct unwind_result *res)
{
	st->samples++;
	st->frames += got;
	st->native_cfi += res->native_cfi;
	st->native_fp += res->native_fp;
	st->ends[res->end]++;
}

size_t nativeunwind_sample(struct nativeunwind *nu, const struct sample *smp, uint64_t *out,
			   size_t max)
{
	struct nativeunwind_proc *np = nativeunwind_find(nu, smp->pid);
	if (!np)
		return 0;
	if (!smp->has_regs || !smp->user_ip || max < 2) {
		np->st.no_regs++;
		return 0;
	}
	uint64_t t0 = timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	size_t n = 0; /* the kernel's part of the chain, up to its user marker */
	for (size_t i = 0; i < smp->nr && n + 2 < max; i++) {
		if (smp->ips[i] == (uint64_t)PERF_CONTEXT_USER)
			break;
		out[n++] = smp->ips[i];
	}
	out[n++] = (uint64_t)PERF_CONTEXT_USER;
	struct unwind_regs regs = {.ip = smp->user_ip, .sp = smp->user_sp, .bp = smp->user_bp};
	struct unwind_stack st = {.sp = smp->user_sp, .data = smp->stack, .size = smp->stack_size};
	struct unwind_result res;
	size_t got = nativewalk_run(&np->walk, &regs, &st, out + n, max - n, &res);
	nativeunwind_count_walk(&np->st, got, &res);
	if (!got) {
		np->st.unwind_ns += timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		return 0; /* no user pc: the kernel's chain stands */
	}
	n += got;
	if (res.end != UNWIND_END_ROOT)
		n = nativeunwind_splice(smp, out, n, max, &np->st);
	np->st.unwind_ns += timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return n;
}

size_t nativeunwind_count(const struct nativeunwind *nu)
{
	return nu->n;
}

void nativeunwind_stats(const struct nativeunwind *nu, size_t i, struct nativeunwind_stats *st)
{
	*st = nu->procs[i]->st;
}
