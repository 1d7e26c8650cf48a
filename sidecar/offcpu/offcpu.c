/* offcpu.c - the thread-state poller behind `run --event offcpu|wall`:
 * see offcpu.h. */
#include "offcpu.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "cfi.h"
#include "cleanup.h"
#include "ctprocs.h"
#include "offcpu_native.h"
#include "proc.h"
#include "procmem.h"
#include "timeutil.h"

struct offcpu_proc {
	pid_t pid; /* 0: free */
	uint64_t start;
	int pidfd, dirfd; /* /proc/<pid>: its files stay this process's */
	int jvm;
	uint64_t seen; /* refresh round it was last found in */
	struct offcpu_native *native;
	/* executable mappings (for the frame-pointer guess), read at each
	 * refresh: at most OFFCPU_EXEC_MAX */
	uint64_t (*exec)[2];
	size_t nexec;
	/* its threads, from /proc/<pid>/task every OFFCPU_TIDS_REFRESH_MS */
	pid_t *tids;
	size_t ntids, tids_cap;
	uint64_t tids_ns; /* when read; 0 never */
};

/* The /proc/<pid>/task/<tid> files read at a look, kept open per thread
 * while the fd budget allows (one pread per read, no path walk). */
enum offcpu_file {
	OFFCPU_F_SCHEDSTAT = 0,
	OFFCPU_F_STAT,
	OFFCPU_F_SYSCALL,
	OFFCPU_F_STACK,
	OFFCPU_FILES
};
static const char *const offcpu_file_names[OFFCPU_FILES] = {"schedstat", "stat", "syscall",
							    "stack"};

/* The last chain counted for a thread (direct-mapped by tid). */
struct offcpu_slot {
	pid_t tid, pid;
	char state;
	uint64_t start, slices, wait_ns;
	uint64_t run_ns, run_total_ns; /* schedstat's, and its growth in the window */
	int fd1[OFFCPU_FILES];	       /* kept open (fd + 1; 0 none) */
	uint32_t nr;		       /* 0: no chain kept */
	uint8_t blocked;	       /* the chain is where it was at its last look */
	uint8_t idle_looks;	       /* looks in a row with schedstat unchanged */
	uint64_t pending_us;	       /* ticks not looked at (idle), for the chain */
	/* where the chain was walked (wp_state 0: nowhere), and how often it
	 * was counted again since because the thread blocked there again */
	char wp_state;
	uint8_t wp_reuses;
	struct offcpu_wait_point wp;
	uint64_t words[OFFCPU_CHAIN_MAX];
};

struct offcpu {
	struct offcpu_opts o;
	struct profile *p;
	struct offcpu_proc procs[OFFCPU_MAX_PROCS];
	uint64_t round;
	uint64_t refreshed_ns;
	uint64_t interval_ns, last_ns, next_ns;
	struct offcpu_slot *cache;
	uint8_t *stack; /* one copy buffer */
	size_t stack_size;
	struct cfi *cfi;
	unsigned nfds, fd_budget; /* /proc fds kept open, and how many may be */
	int final;		  /* the last tick of a window: every thread looked at */
	struct offcpu_stats st;
	uint64_t words[OFFCPU_CHAIN_MAX + 2 + OFFCPU_KERNEL_FRAMES + 1];
};

/* ---- processes ------------------------------------------------------------ */

static void offcpu_proc_drop(struct offcpu_proc *pr)
{
	if (pr->pidfd >= 0)
		close(pr->pidfd);
	if (pr->dirfd >= 0)
		close(pr->dirfd);
	offcpu_native_free(pr->native);
	free(pr->exec);
	free(pr->tids);
	memset(pr, 0, sizeof(*pr));
	pr->pidfd = pr->dirfd = -1;
}

static struct offcpu_proc *offcpu_proc_find(struct offcpu *oc, pid_t pid)
{
	for (size_t i = 0; i < OFFCPU_MAX_PROCS; i++)
		if (oc->procs[i].pid == pid)
			return &oc->procs[i];
	return NULL;
}

/* pr's executable mappings from /proc/<pid>/maps (through its directory
 * fd), the first OFFCPU_EXEC_MAX of them. */
static void offcpu_proc_exec(struct offcpu_proc *pr)
{
	int fd = openat(pr->dirfd, "maps", O_RDONLY | O_CLOEXEC);
	cleanup_fclose FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!pr->exec && !(pr->exec = calloc(OFFCPU_EXEC_MAX, sizeof(*pr->exec))))
		return;
	char line[512];
	size_t n = 0;
	while (n < OFFCPU_EXEC_MAX && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[2] == 'x') {
			pr->exec[n][0] = lo;
			pr->exec[n][1] = hi;
			n++;
		}
		if (!strchr(line, '\n')) /* a long line: skip its rest */
			while (fgets(line, sizeof(line), f) && !strchr(line, '\n'))
				;
	}
	pr->nexec = n;
}

static int offcpu_is_exec(const struct offcpu_proc *pr, uint64_t v)
{
	for (size_t i = 0; i < pr->nexec; i++)
		if (v >= pr->exec[i][0] && v < pr->exec[i][1])
			return 1;
	return 0;
}

/* pid is in scope: keep it (a new one: its pidfd, /proc directory, kind). */
static void offcpu_proc_seen(struct offcpu *oc, pid_t pid)
{
	uint64_t start = 0;
	if (proc_start_time(pid, &start, NULL) < 0)
		return;
	struct offcpu_proc *pr = offcpu_proc_find(oc, pid);
	if (pr && pr->start == start) {
		pr->seen = oc->round;
		offcpu_proc_exec(pr);
		return;
	}
	if (pr)
		offcpu_proc_drop(pr); /* the pid was reused */
	else if (!(pr = offcpu_proc_find(oc, 0)))
		return; /* OFFCPU_MAX_PROCS: the rest is not looked at */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	pr->pidfd = proc_pidfd_open_checked(pid, start, NULL);
	pr->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pr->pidfd < 0 || pr->dirfd < 0 || proc_pidfd_recheck(pr->pidfd, pid, start, NULL) < 0) {
		offcpu_proc_drop(pr);
		return;
	}
	pr->pid = pid;
	pr->start = start;
	pr->seen = oc->round;
	pr->jvm = attach_check_hotspot(pid, NULL) == 0;
	offcpu_proc_exec(pr);
}

/* The processes in scope now: the container's pid namespace (or o.pid). */
static void offcpu_refresh(struct offcpu *oc)
{
	oc->round++;
	if (oc->o.pid) {
		offcpu_proc_seen(oc, oc->o.pid);
	} else {
		/* the container's processes (lib/ctprocs.h): its cgroup, not all of /proc */
		cleanup_free pid_t *v = NULL;
		size_t nv = 0;
		if (ctprocs_list(oc->o.entry, NULL, &v, &nv, NULL, NULL) == 0)
			for (size_t i = 0; i < nv; i++)
				offcpu_proc_seen(oc, v[i]);
	}
	unsigned n = 0;
	for (size_t i = 0; i < OFFCPU_MAX_PROCS; i++) {
		struct offcpu_proc *pr = &oc->procs[i];
		if (pr->pid && pr->seen != oc->round)
			offcpu_proc_drop(pr);
		else if (pr->pid)
			n++;
	}
	oc->st.procs = n;
}

/* ---- one thread ------------------------------------------------------------ */

/* Read the file at dirfd/path into buf (NUL-terminated). Its length or -1. */
static ssize_t offcpu_read_at(int dirfd, const char *path, char *buf, size_t len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* A sample of thread tid of pr with only named frames (words, n). */
static void offcpu_add_named(struct offcpu *oc, const struct offcpu_proc *pr, pid_t tid,
			     const char *name, uint64_t weight_us)
{
	uint32_t idx = profile_name_index(oc->p, name);
	uint64_t w[3] = {PROFILE_NAMES_WORD, 1, idx};
	struct sample s = {.pid = pr->pid, .tid = tid, .time = oc->last_ns, .ips = w, .nr = 3};
	if (idx && weight_us)
		(void)profile_add_sample(oc->p, &s, weight_us, NULL, 0, NULL);
}

/* The named leaf frames of a blocked thread (its state, its kernel
 * frames) as a PROFILE_NAMES_WORD prefix into oc->words. Its length. */
static ssize_t offcpu_slot_read(struct offcpu *oc, const struct offcpu_proc *pr, pid_t tid,
				struct offcpu_slot *slot, enum offcpu_file f, char *buf,
				size_t len);

static size_t offcpu_prefix(struct offcpu *oc, const struct offcpu_proc *pr, pid_t tid, char state,
			    struct offcpu_slot *slot)
{
	char buf[16], path[64], text[4096];
	char kframes[OFFCPU_KERNEL_FRAMES][64];
	size_t nk = 0, n = 2;
	uint64_t *w = oc->words;
	uint32_t idx = profile_name_index(oc->p, offcpu_state_frame(state, buf));
	if (idx)
		w[n++] = idx;
	if (!oc->o.user_only) {
		snprintf(path, sizeof(path), "task/%d/stack", (int)tid);
		if ((slot ? offcpu_slot_read(oc, pr, tid, slot, OFFCPU_F_STACK, text, sizeof(text))
			  : offcpu_read_at(pr->dirfd, path, text, sizeof(text))) > 0)
			nk = offcpu_parse_kstack(text, kframes, OFFCPU_KERNEL_FRAMES);
	}
	for (size_t i = 0; i < nk; i++)
		if ((idx = profile_name_index(oc->p, kframes[i])))
			w[n++] = idx;
	w[0] = PROFILE_NAMES_WORD;
	w[1] = n - 2;
	return n;
}

/* Copy the user stack of pr's blocked thread from sp into oc->stack: the
 * bytes copied (0: none, or the process is not the one found any more). */
static size_t offcpu_copy(struct offcpu *oc, const struct offcpu_proc *pr, uint64_t sp)
{
	/* through the pidfd of the process found (procmem.h): never the
	 * memory of a process that took its pid */
	ssize_t got = procmem_read_some(pr->pid, pr->pidfd, sp, oc->stack, oc->stack_size);
	if (got == -ESRCH)
		oc->st.recycled++;
	if (got <= 0)
		return 0;
	oc->st.copies++;
	return (size_t)got;
}

/* The frame pointer of a blocked thread is not in /proc (only sp and pc):
 * the first frame record above sp, a word pair (saved rbp, return
 * address in an executable mapping) whose saved rbp points further up the
 * copy at a word followed by another address in an executable mapping. Code that keeps its CFA in
 * rbp (a JNI function built with frame pointers, under a libc wrapper that does not touch rbp)
 * needs it; a wrong guess costs only that walk (rbp is taken from the stack at the next frame that
 * saved it). 0: none found. */
static uint64_t offcpu_guess_bp(const struct offcpu_proc *pr, const uint8_t *stack, size_t size,
				uint64_t sp)
{
	for (size_t off = 0; off + 16 <= size && off < 4096; off += 8) {
		uint64_t bp, ret, next = 0, ret2 = 0;
		memcpy(&bp, stack + off, 8);
		memcpy(&ret, stack + off + 8, 8);
		if (bp <= sp + off || bp >= sp + size - 16 || (bp & 7) || !offcpu_is_exec(pr, ret))
			continue;
		memcpy(&next, stack + (bp - sp), 8);
		memcpy(&ret2, stack + (bp - sp) + 8, 8);
		(void)next; /* compiled Java code may keep anything in rbp */
		if (offcpu_is_exec(pr, ret2))
			return sp + off;
	}
	return 0;
}

/* Count the last chain of slot again: tid is still where it was walked. */
static void offcpu_reuse(struct offcpu *oc, const struct offcpu_proc *pr, pid_t tid,
			 const struct offcpu_slot *slot, uint64_t weight_us)
{
	struct sample s = {
	    .pid = pr->pid, .tid = tid, .time = oc->last_ns, .ips = slot->words, .nr = slot->nr};
	(void)profile_add_sample(oc->p, &s, weight_us, NULL, 0, NULL);
}

/* A blocked thread's sample. Blocked again at the wait point of its last
 * walk (the same state, system call, first argument, user sp and pc: the
 * same futex or fd waited on at the same depth of its stack) it is
 * the last chain again, for at most OFFCPU_SAME_POINT_MAX looks in a row;
 * otherwise its prefix, then its user stack (the profile's HotSpot
 * unwinder for JVMs, the native walk otherwise), and the chain as recorded
 * goes to slot. */
static void offcpu_blocked(struct offcpu *oc, struct offcpu_proc *pr, pid_t tid, char state,
			   struct offcpu_slot *slot, uint64_t weight_us)
{
	char path[64], line[512];
	struct offcpu_wait_point wp;
	size_t copied = 0;
	snprintf(path, sizeof(path), "task/%d/syscall", (int)tid);
	int have_wp =
	    (slot ? offcpu_slot_read(oc, pr, tid, slot, OFFCPU_F_SYSCALL, line, sizeof(line))
		  : offcpu_read_at(pr->dirfd, path, line, sizeof(line))) > 0 &&
	    offcpu_parse_wait_point(line, &wp);
	if (slot && have_wp && slot->nr && slot->wp_state == state &&
	    slot->wp_reuses < OFFCPU_SAME_POINT_MAX && offcpu_same_wait_point(&slot->wp, &wp)) {
		slot->wp_reuses++;
		slot->blocked = 1;
		oc->st.same_point++;
		offcpu_reuse(oc, pr, tid, slot, weight_us);
		return;
	}
	size_t n = offcpu_prefix(oc, pr, tid, state, slot);
	struct sample s = {.pid = pr->pid, .tid = tid, .time = oc->last_ns, .ips = oc->words};
	if (have_wp)
		copied = offcpu_copy(oc, pr, wp.sp);
	if (!copied) {
		oc->st.no_stack++;
	} else if (pr->jvm) {
		oc->words[n++] = (uint64_t)PERF_CONTEXT_USER;
		oc->words[n++] = wp.pc;
		s.has_regs = 1;
		s.user_ip = wp.pc;
		s.user_sp = wp.sp;
		s.user_bp = offcpu_guess_bp(pr, oc->stack, copied, wp.sp);
		s.stack = oc->stack;
		s.stack_size = copied;
	} else {
		oc->words[n++] = (uint64_t)PERF_CONTEXT_USER;
		if (!pr->native)
			pr->native = offcpu_native_new(oc->cfi, pr->pid);
		n += offcpu_native_walk(
		    pr->native, wp.pc, wp.sp, offcpu_guess_bp(pr, oc->stack, copied, wp.sp),
		    oc->stack, copied, oc->words + n, sizeof(oc->words) / sizeof(oc->words[0]) - n);
	}
	s.nr = n;
	size_t nr = 0;
	if (profile_add_sample(oc->p, &s, weight_us, slot ? slot->words : NULL, OFFCPU_CHAIN_MAX,
			       &nr) == 0 &&
	    slot) {
		slot->nr = (uint32_t)nr;
		slot->blocked = nr > 0;
		/* a walk without a stack is retried at the next look */
		slot->wp_state = copied && nr ? state : 0;
		slot->wp_reuses = 0;
		slot->wp = wp;
	}
}

static void offcpu_slot_close(struct offcpu *oc, struct offcpu_slot *slot)
{
	for (int f = 0; f < OFFCPU_FILES; f++)
		if (slot->fd1[f]) {
			close(slot->fd1[f] - 1);
			slot->fd1[f] = 0;
			oc->nfds--;
		}
}

/* The slot of tid: when it changes hands, nothing of the other thread's
 * stays (its files, its chain). */
static struct offcpu_slot *offcpu_slot_claim(struct offcpu *oc, pid_t tid)
{
	struct offcpu_slot *slot = &oc->cache[(uint32_t)tid % OFFCPU_CACHE_SLOTS];
	if (slot->tid != tid) {
		offcpu_slot_close(oc, slot);
		slot->tid = tid;
		slot->start = 0; /* no hit until its stat is read */
		slot->nr = 0;
		slot->blocked = 0;
		slot->wp_state = 0;
		slot->run_total_ns = 0;
		slot->idle_looks = 0;
		slot->pending_us = 0;
	}
	return slot;
}

/* File f of thread tid into buf: through the fd its slot keeps open (an fd
 * stays bound to its thread, so a reused tid reads nothing through it), or
 * opened, and kept while the budget allows. A kept fd that reads nothing
 * (the thread is gone) is closed; the file is opened again by its path
 * except schedstat, which decides whether the last chain is reused and so
 * must never be another thread's. Its length, or -1. */
static ssize_t offcpu_slot_read(struct offcpu *oc, const struct offcpu_proc *pr, pid_t tid,
				struct offcpu_slot *slot, enum offcpu_file f, char *buf, size_t len)
{
	if (slot->fd1[f]) {
		ssize_t n = pread(slot->fd1[f] - 1, buf, len - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			return n;
		}
		close(slot->fd1[f] - 1);
		slot->fd1[f] = 0;
		oc->nfds--;
		if (f == OFFCPU_F_SCHEDSTAT)
			return -1;
	}
	char path[64];
	snprintf(path, sizeof(path), "task/%d/%s", (int)tid, offcpu_file_names[f]);
	int fd = openat(pr->dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, len - 1, 0);
	if (n <= 0) {
		close(fd);
		return -1;
	}
	buf[n] = '\0';
	if (oc->nfds < oc->fd_budget) {
		slot->fd1[f] = fd + 1;
		oc->nfds++;
	} else {
		close(fd);
	}
	return n;
}

/* schedstat's three numbers: 0 or -1. */
static int offcpu_parse_schedstat(const char *s, uint64_t *run, uint64_t *wait, uint64_t *slices)
{
	char *end;
	*run = strtoull(s, &end, 10);
	if (end == s || *end != ' ')
		return -1;
	s = end + 1;
	*wait = strtoull(s, &end, 10);
	if (end == s || *end != ' ')
		return -1;
	s = end + 1;
	*slices = strtoull(s, &end, 10);
	return end == s ? -1 : 0;
}

static void offcpu_thread(struct offcpu *oc, struct offcpu_proc *pr, pid_t tid, uint64_t weight_us)
{
	char path[64], buf[1024];
	char state;
	uint64_t start, run_ns = 0, wait_ns = 0, slices = 0;
	struct offcpu_slot *slot = offcpu_slot_claim(oc, tid);
	/* A thread blocked at one place for OFFCPU_IDLE_AFTER looks in a row
	 * is looked at every OFFCPU_IDLE_EVERY ticks only (and at the last
	 * tick of a window); the ticks between are kept for its chain. */
	if (slot->blocked && slot->nr && slot->idle_looks >= OFFCPU_IDLE_AFTER && !oc->final &&
	    (oc->st.ticks + (uint64_t)tid) % OFFCPU_IDLE_EVERY) {
		slot->pending_us += weight_us;
		oc->st.idle_skips++;
		return;
	}
	/* schedstat first: a blocked thread that has not been scheduled since
	 * the last look (the same number of timeslices) is still blocked
	 * where it was, and costs this one read */
	int have_sched =
	    offcpu_slot_read(oc, pr, tid, slot, OFFCPU_F_SCHEDSTAT, buf, sizeof(buf)) > 0 &&
	    offcpu_parse_schedstat(buf, &run_ns, &wait_ns, &slices) == 0;
	if (slot->pending_us && slot->nr) /* where it was when last seen */
		offcpu_reuse(oc, pr, tid, slot, slot->pending_us);
	slot->pending_us = 0;
	if (have_sched && slot->blocked && slot->nr && slot->slices == slices && weight_us) {
		offcpu_reuse(oc, pr, tid, slot, weight_us);
		oc->st.blocked++;
		oc->st.reused++;
		if (slot->idle_looks < UINT8_MAX)
			slot->idle_looks++;
		return;
	}
	slot->idle_looks = 0;
	snprintf(path, sizeof(path), "task/%d/stat", (int)tid);
	if ((have_sched ? offcpu_slot_read(oc, pr, tid, slot, OFFCPU_F_STAT, buf, sizeof(buf))
			: offcpu_read_at(pr->dirfd, path, buf, sizeof(buf))) <= 0 ||
	    offcpu_parse_stat(buf, &state, &start) < 0)
		return; /* gone */
	int hit = have_sched && slot->start == start;
	if (oc->o.event == OFFCPU_EVENT_WALL && hit && wait_ns > slot->wait_ns)
		offcpu_add_named(oc, pr, tid, "[runnable]", (wait_ns - slot->wait_ns) / 1000);
	if (hit && run_ns > slot->run_ns)
		slot->run_total_ns += run_ns - slot->run_ns;
	if (!hit) { /* a new thread, or the tid of a gone one reused */
		slot->pid = pr->pid;
		slot->start = start;
		slot->run_total_ns = 0;
		slot->nr = 0;
		slot->wp_state = 0;
	}
	slot->run_ns = run_ns;
	slot->blocked = 0;
	slot->wait_ns = wait_ns;
	slot->slices = slices;
	slot->state = state;
	if (state == 'R' || state == 'Z' || state == 'X' || !weight_us)
		return;
	oc->st.blocked++;
	offcpu_blocked(oc, pr, tid, state, have_sched ? slot : NULL, weight_us);
}

/* ---- ticks ------------------------------------------------------------------ */

/* pr's threads from /proc/<pid>/task into pr->tids: a directory of threads
 * created as fast as they can be is read up to max entries (the tick
 * counts those beyond its cap as lost). On failure the list is empty. */
static void offcpu_proc_tids(struct offcpu_proc *pr, size_t max)
{
	pr->ntids = 0;
	int fd = openat(pr->dirfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_closedir DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while (pr->ntids < max && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0 || tid > INT32_MAX)
			continue;
		if (pr->ntids == pr->tids_cap) {
			size_t cap = pr->tids_cap ? 2 * pr->tids_cap : 64;
			pid_t *v = realloc(pr->tids, (cap < max ? cap : max) * sizeof(*v));
			if (!v)
				return;
			pr->tids = v;
			pr->tids_cap = cap < max ? cap : max;
		}
		pr->tids[pr->ntids++] = (pid_t)tid;
	}
}

static void offcpu_tick(struct offcpu *oc, uint64_t now)
{
	uint64_t cpu0 = timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t weight_us = (now - oc->last_ns) / 1000;
	uint64_t budget_end = now + oc->interval_ns * OFFCPU_TICK_BUDGET_PCT / 100;
	unsigned max = oc->o.max_threads ? oc->o.max_threads : OFFCPU_MAX_THREADS;
	unsigned looked = 0, skipped = 0;
	oc->last_ns = now;
	oc->st.ticks++;
	if (now - oc->refreshed_ns >= (uint64_t)OFFCPU_PROCS_REFRESH_MS * 1000000) {
		offcpu_refresh(oc);
		oc->refreshed_ns = now;
	}
	int late = 0;
	for (size_t i = 0; i < OFFCPU_MAX_PROCS; i++) {
		struct offcpu_proc *pr = &oc->procs[i];
		if (!pr->pid)
			continue;
		if (!pr->tids_ns ||
		    now - pr->tids_ns >= (uint64_t)OFFCPU_TIDS_REFRESH_MS * 1000000) {
			offcpu_proc_tids(pr, 2 * max);
			pr->tids_ns = now;
		}
		for (size_t k = 0; k < pr->ntids && looked + skipped < 2 * max; k++) {
			pid_t tid = pr->tids[k];
			if (!late && (looked & 15) == 15 &&
			    timeutil_clock_ns(CLOCK_MONOTONIC) > budget_end)
				late = 1;
			if (late || looked >= max) {
				skipped++;
				continue;
			}
			looked++;
			offcpu_thread(oc, pr, tid, weight_us);
		}
	}
	oc->st.late_ticks += late;
	oc->st.thread_ticks += looked;
	oc->st.capped += skipped;
	oc->st.capped_us += skipped * weight_us;
	oc->st.cpu_ns += timeutil_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

int offcpu_poll(struct offcpu *oc, int timeout_ms, struct fs_error *err)
{
	uint64_t now = timeutil_clock_ns(CLOCK_MONOTONIC);
	if (now >= oc->next_ns) {
		offcpu_tick(oc, now);
		oc->next_ns += oc->interval_ns;
		if (oc->next_ns <= now)
			oc->next_ns = now + oc->interval_ns;
		now = timeutil_clock_ns(CLOCK_MONOTONIC);
	}
	uint64_t wait = oc->next_ns > now ? (oc->next_ns - now + 999999) / 1000000 : 0;
	if (timeout_ms >= 0 && wait > (uint64_t)timeout_ms)
		wait = (uint64_t)timeout_ms;
	if (oc->o.event == OFFCPU_EVENT_WALL)
		return profile_poll(oc->p, (int)wait, err); /* the on-CPU samples */
	if (wait && poll(NULL, 0, (int)wait) < 0 && errno == EINTR)
		return -EINTR;
	return profile_poll(oc->p, 0, err);
}

/* Wall: each thread's on-CPU samples scaled to its schedstat run time
 * (profile_scale_on_cpu); a thread that ran without a sample gets its run
 * time as a "[running]" frame without a stack. */
static void offcpu_on_cpu(struct offcpu *oc)
{
	struct profile_on_cpu *v = calloc(OFFCPU_CACHE_SLOTS, sizeof(*v));
	size_t n = 0;
	if (!v)
		return;
	for (size_t i = 0; i < OFFCPU_CACHE_SLOTS; i++) {
		const struct offcpu_slot *s = &oc->cache[i];
		if (s->tid && s->run_total_ns >= 1000)
			v[n++] = (struct profile_on_cpu){
			    .pid = s->pid, .tid = s->tid, .want_us = s->run_total_ns / 1000};
	}
	profile_scale_on_cpu(oc->p, v, n);
	for (size_t i = 0; i < n; i++) {
		struct offcpu_proc *pr = offcpu_proc_find(oc, v[i].pid);
		if (!v[i].found_us && pr)
			offcpu_add_named(oc, pr, v[i].tid, "[running]", v[i].want_us);
	}
	free(v);
	for (size_t i = 0; i < OFFCPU_CACHE_SLOTS; i++)
		oc->cache[i].run_total_ns = 0; /* the next interval (top) starts again */
}

void offcpu_stop(struct offcpu *oc)
{
	oc->final = 1; /* the idle threads' kept ticks are counted now */
	offcpu_tick(oc, timeutil_clock_ns(CLOCK_MONOTONIC));
	oc->final = 0;
	if (oc->o.event == OFFCPU_EVENT_WALL)
		offcpu_on_cpu(oc);
}

int offcpu_new(struct profile *p, const struct offcpu_opts *o, struct offcpu **out,
	       struct fs_error *err)
{
	struct offcpu *oc = calloc(1, sizeof(*oc));
	if (!oc)
		return fs_error_set(err, ENOMEM, "allocating the thread poller");
	oc->o = *o;
	oc->p = p;
	for (size_t i = 0; i < OFFCPU_MAX_PROCS; i++)
		oc->procs[i].pidfd = oc->procs[i].dirfd = -1;
	oc->stack_size = o->stack_copy ? o->stack_copy : OFFCPU_DEFAULT_STACK_COPY;
	oc->cache = calloc(OFFCPU_CACHE_SLOTS, sizeof(*oc->cache));
	oc->stack = malloc(oc->stack_size);
	if (!oc->cache || !oc->stack || cfi_new(NULL, &oc->cfi) < 0) {
		offcpu_free(oc);
		return fs_error_set(err, ENOMEM, "allocating the thread poller");
	}
	oc->interval_ns = 1000000000ull / (o->frequency ? o->frequency : 99);
	/* fds kept open: OFFCPU_FDS_MAX, within the soft limit (raised
	 * towards the hard one) minus OFFCPU_FDS_SPARE for everything else */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t want = OFFCPU_FDS_MAX + OFFCPU_FDS_SPARE;
		if (rl.rlim_cur < want && rl.rlim_max > rl.rlim_cur) {
			rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur > OFFCPU_FDS_SPARE)
			oc->fd_budget = (unsigned)(rl.rlim_cur - OFFCPU_FDS_SPARE < OFFCPU_FDS_MAX
						       ? rl.rlim_cur - OFFCPU_FDS_SPARE
						       : OFFCPU_FDS_MAX);
	}
	offcpu_refresh(oc);
	oc->last_ns = oc->next_ns = oc->refreshed_ns = timeutil_clock_ns(CLOCK_MONOTONIC);
	*out = oc;
	return 0;
}

void offcpu_stats(const struct offcpu *oc, struct offcpu_stats *st)
{
	*st = oc->st;
}

void offcpu_free(struct offcpu *oc)
{
	if (!oc)
		return;
	for (size_t i = 0; i < OFFCPU_MAX_PROCS; i++)
		if (oc->procs[i].pid)
			offcpu_proc_drop(&oc->procs[i]);
	cfi_free(oc->cfi);
	for (size_t i = 0; oc->cache && i < OFFCPU_CACHE_SLOTS; i++)
		offcpu_slot_close(oc, &oc->cache[i]);
	free(oc->cache);
	free(oc->stack);
	free(oc);
}
