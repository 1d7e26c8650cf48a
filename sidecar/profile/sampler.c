/* sampler.c - see sampler.h */
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <asm/perf_regs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "kfilter.h"

#define SAMPLER_RECORD_MAX 65536 /* perf_event_header.size is 16 bits */

/* The user registers the unwinder needs, x86_64 numbering; the kernel
 * writes them in ascending bit order: bp, sp, ip. */
#define SAMPLER_REGS_MASK                                                                          \
	((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))
#define SAMPLER_NREGS 3

enum sampler_scope { SCOPE_ALL, SCOPE_CGROUP, SCOPE_PIDNS, SCOPE_PID };
static const char *const sampler_scope_names[] = {"all", "cgroup", "pid_ns", "pid"};

enum pid_state { PID_UNKNOWN = 0, PID_IN, PID_OUT };

struct sampler_ring {
	int fd;
	int cpu;
	void *base;
	size_t mmap_len;
	char *data;
	uint64_t data_size;
};

struct sampler_pident {
	pid_t pid;
	int state;
};

struct sampler {
	enum sampler_scope scope;
	int prog_fd; /* the kernel filter (kfilter.h), -1 without */
	pid_t pid;
	uint64_t pid_ns;
	unsigned max_stack;
	unsigned stack_copy; /* bytes per sample, 0 off */
	char proc_root[256];
	struct sampler_ring *rings;
	struct pollfd *pfds;
	unsigned nrings;
	struct sampler_stats st;
	void (*on_task)(const struct sampler_task *, void *);
	void *task_ctx;
	struct sampler_pident pids[SAMPLER_PID_CACHE]; /* direct-mapped */
	uint64_t copy[SAMPLER_RECORD_MAX / 8];	       /* a record that wraps the ring */
};

static long sampler_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
				    unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

int sampler_parse_cpulist(const char *list, int *cpus, int max)
{
	int n = 0;
	const char *p = list;
	while (*p && *p != '\n') {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || errno || a < 0 || a >= SAMPLER_MAX_CPUS)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b >= SAMPLER_MAX_CPUS)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return n;
}

static int sampler_online_cpus(int *cpus, int max, struct fs_error *err)
{
	const char *path = "/sys/devices/system/cpu/online";
	char buf[4096];
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (r <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN); /* no sysfs: assume 0..n-1 */
		if (n <= 0)
			return fs_error_set(err, errno ? errno : EIO, "reading %s", path);
		for (long i = 0; i < n && i < max; i++)
			cpus[i] = (int)i;
		return n < max ? (int)n : max;
	}
	buf[r] = '\0';
	int n = sampler_parse_cpulist(buf, cpus, max);
	if (n <= 0)
		return fs_error_set(err, EINVAL, "parsing %s ('%s')", path, buf);
	return n;
}

static unsigned sampler_read_sysctl(const char *name, unsigned dflt)
{
	char path[128], buf[32];
	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (r <= 0)
		return dflt;
	buf[r] = '\0';
	long v = strtol(buf, NULL, 10);
	return v > 0 ? (unsigned)v : dflt;
}

static int sampler_perm_error(struct fs_error *err, int e, int cpu)
{
	unsigned paranoid = sampler_read_sysctl("perf_event_paranoid", 2);
	return fs_error_set(err, e,
			    "perf_event_open on CPU %d: not permitted (system-wide sampling needs "
			    "root or CAP_PERFMON; kernel.perf_event_paranoid is %u; in a "
			    "container, the seccomp profile must allow perf_event_open)",
			    cpu, paranoid);
}

static void sampler_attr(struct perf_event_attr *a, const struct sampler_opts *o, int hw,
			 unsigned freq, unsigned max_stack, size_t ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a->config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	a->disabled = 1;
	/* Sample times on CLOCK_MONOTONIC: the JIT log's clock (jitlog.h). */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_kernel = o->user_only ? 1 : 0;
	a->exclude_hv = 1;
	a->exclude_idle = 1; /* the idle task is never in scope */
	a->sample_max_stack = (uint16_t)max_stack;
	if (o->stack_copy) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = SAMPLER_REGS_MASK;
		a->sample_stack_user = o->stack_copy;
	}
	a->task = 1; /* PERF_RECORD_FORK / EXIT: scope inheritance */
	a->comm = 1;
	a->comm_exec = 1; /* PERF_RECORD_COMM marks exec: symbol caches go stale */
	/* Woken when half the ring is full: the other half is the headroom
	 * for a busy host (4 MiB with 32 KiB copies, 256 KiB without); each wakeup
	 * costs the reader ~75 us on these machines (docs/perf-run.md). */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(ring_bytes / 2);
}

static int sampler_open_ring(struct sampler_ring *ring, size_t pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	ring->mmap_len = (pages + 1) * (size_t)psz;
	ring->base = mmap(NULL, ring->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
	if (ring->base == MAP_FAILED) {
		ring->base = NULL;
		return -errno;
	}
	struct perf_event_mmap_page *pg = ring->base;
	uint64_t off = pg->data_offset ? pg->data_offset : (uint64_t)psz;
	ring->data_size = pg->data_size ? pg->data_size : pages * (uint64_t)psz;
	ring->data = (char *)ring->base + off;
	return 0;
}

/* One CPU's event: cycles when the machine has a PMU (*hw), else
 * cpu-clock (and *hw becomes 0). The fd, -ENODEV when the CPU went
 * offline, or -errno with a message. */
static long sampler_open_event(const struct sampler_opts *o, int *hw, unsigned freq,
			       unsigned max_stack, size_t ring_bytes, pid_t target,
			       unsigned long flags, int cpu, struct fs_error *err)
{
	struct perf_event_attr attr;
	long fd;
	for (;;) {
		sampler_attr(&attr, o, *hw, freq, max_stack, ring_bytes);
		fd = sampler_perf_event_open(&attr, target, cpu, -1, flags);
		if (fd >= 0 || !*hw)
			break;
		/* No PMU (VMs, these machines): cpu-clock instead. */
		if (errno != ENOENT && errno != EOPNOTSUPP && errno != ENODEV && errno != EINVAL)
			break;
		*hw = 0;
	}
	if (fd >= 0)
		return fd;
	int e = errno;
	if (e == ENODEV || e == ENXIO)
		return -ENODEV;
	if (e == EACCES || e == EPERM)
		return sampler_perm_error(err, e, cpu);
	if (target >= 0 && (e == EBADF || e == EINVAL || e == ENOENT))
		return fs_error_set(err, e,
				    "perf_event_open for cgroup %s on CPU %d (is it a "
				    "cgroup v2 directory, or is the v1 perf_event "
				    "controller mounted there?)",
				    o->cgroup_path, cpu);
	return fs_error_set(err, e, "perf_event_open (%s, %u Hz) on CPU %d",
			    *hw ? "cycles" : "cpu-clock", freq, cpu);
}

/* Validate and complete the options: frequency, stack depth, stack copy
 * (rounded up to 8 bytes), ring pages. 0 or -EINVAL with a message. */
static int sampler_check_opts(struct sampler_opts *o, unsigned *freq, unsigned *max_stack,
			      size_t *pages, struct fs_error *err)
{
	*freq = o->frequency ? o->frequency : SAMPLER_DEFAULT_FREQUENCY;
	unsigned max_rate = sampler_read_sysctl("perf_event_max_sample_rate", 100000);
	if (*freq > SAMPLER_MAX_FREQUENCY || *freq > max_rate)
		return fs_error_set(err, EINVAL,
				    "sampling frequency %u Hz: over the limit (%u Hz; "
				    "kernel.perf_event_max_sample_rate is %u)",
				    *freq, SAMPLER_MAX_FREQUENCY, max_rate);
	*max_stack = o->max_stack ? o->max_stack : SAMPLER_DEFAULT_MAX_STACK;
	unsigned sys_stack = sampler_read_sysctl("perf_event_max_stack", 127);
	if (*max_stack > sys_stack)
		*max_stack = sys_stack;
	if (o->stack_copy > SAMPLER_MAX_STACK_COPY)
		return fs_error_set(err, EINVAL, "stack copy of %u bytes: over the limit (%u)",
				    o->stack_copy, SAMPLER_MAX_STACK_COPY);
	o->stack_copy = (o->stack_copy + 7) & ~7u;
	*pages = o->ring_pages ? o->ring_pages : SAMPLER_DEFAULT_RING_PAGES;
	if (*pages & (*pages - 1) || *pages > 4096)
		return fs_error_set(err, EINVAL,
				    "ring of %zu pages: must be a power of two <= 4096", *pages);
	return 0;
}

/* Ring pages with stack copies: room for SAMPLER_STACK_RING_SAMPLES copies
 * per CPU (256 x 32 KiB = 8 MiB: woken at half of it, 128 copies, about
 * 130 ms of one busy CPU at 999 Hz, with as much again of headroom), but
 * at most SAMPLER_STACK_RING_TOTAL locked in all (many CPUs); lost records
 * are counted either way. */
static size_t sampler_copy_ring_pages(unsigned stack_copy, size_t pages, int ncpu)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	size_t want = (size_t)stack_copy * SAMPLER_STACK_RING_SAMPLES / psz;
	size_t cap = SAMPLER_STACK_RING_TOTAL / psz / (size_t)ncpu;
	while (pages < want && pages * 2 <= cap && pages < 4096)
		pages *= 2;
	return pages;
}

/* The kernel filter for the scope (kfilter.h): loads it into s->prog_fd.
 * 0, or -errno with why in err. */
static int sampler_filter_load(struct sampler *s, const struct sampler_opts *o,
			       struct fs_error *err)
{
	struct bpf_insn insns[KFILTER_MAX_INSNS];
	int n;
	if (s->scope == SCOPE_CGROUP) {
		uint64_t id = 0;
		unsigned level = 0;
		int r = kfilter_cgroup_of(o->cgroup_path, &id, &level, err);
		if (r < 0)
			return r;
		n = kfilter_build_cgroup(insns, KFILTER_MAX_INSNS, id, level);
	} else if (s->scope == SCOPE_PID) {
		n = kfilter_build_pid(insns, KFILTER_MAX_INSNS, s->pid);
	} else {
		return fs_error_set(err, ENOTSUP,
				    "the kernel filter needs a cgroup v2 directory or one pid");
	}
	if (n < 0)
		return fs_error_set(err, -n, "building the sample filter");
	int fd = kfilter_load(insns, (size_t)n, err);
	if (fd < 0)
		return fd;
	s->prog_fd = fd;
	return 0;
}

static void sampler_close_events(struct sampler *s)
{
	for (unsigned i = 0; i < s->nrings; i++) {
		struct sampler_ring *ring = &s->rings[i];
		if (ring->fd >= 0)
			ioctl(ring->fd, PERF_EVENT_IOC_DISABLE, 0);
		if (ring->base)
			munmap(ring->base, ring->mmap_len);
		if (ring->fd >= 0)
			close(ring->fd);
	}
	s->nrings = 0;
}

/* One event and ring per CPU in cpus: with the kernel filter attached when
 * s->prog_fd >= 0, else per cgroup (cgfd >= 0) or system-wide. 0 or
 * -errno (the events opened so far stay for sampler_close_events). */
static int sampler_open_events(struct sampler *s, const struct sampler_opts *o, const int *cpus,
			       int ncpu, size_t pages, int cgfd, struct fs_error *err)
{
	long psz = sysconf(_SC_PAGESIZE);
	int hw = !o->software_only;
	int by_cgroup = cgfd >= 0 && s->prog_fd < 0;
	pid_t target = by_cgroup ? cgfd : -1;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (by_cgroup ? PERF_FLAG_PID_CGROUP : 0);
	for (int i = 0; i < ncpu; i++) {
		long fd = sampler_open_event(o, &hw, o->frequency, o->max_stack,
					     pages * (size_t)psz, target, flags, cpus[i], err);
		if (fd == -ENODEV)
			continue; /* went offline meanwhile */
		if (fd < 0)
			return (int)fd;
		struct sampler_ring *ring = &s->rings[s->nrings];
		ring->fd = (int)fd;
		ring->cpu = cpus[i];
		s->nrings++;
		int r = sampler_open_ring(ring, pages);
		if (r < 0)
			return fs_error_set(err, -r,
					    "mapping the %zu KiB ring buffer of CPU %d (see "
					    "kernel.perf_event_mlock_kb)",
					    (pages + 1) * (size_t)psz / 1024, cpus[i]);
		s->pfds[s->nrings - 1] = (struct pollfd){.fd = (int)fd, .events = POLLIN};
		if (s->prog_fd >= 0 && (r = kfilter_attach((int)fd, s->prog_fd, err)) < 0)
			return r;
	}
	if (s->nrings == 0)
		return fs_error_set(err, ENODEV,
				    "perf_event_open: no online CPU accepted an event");
	s->st.hardware = hw;
	return 0;
}

/* Open the events with the kernel filter when opts ask for it and it
 * works, else as before (cgroup events, or system-wide with the user-space
 * check), saying why in st.filter_why. 0 or -errno. */
static int sampler_open_scoped(struct sampler *s, const struct sampler_opts *o, const int *cpus,
			       int ncpu, size_t pages, int cgfd, struct fs_error *err)
{
	struct fs_error ferr = {0};
	int r;
	if (o->kernel_filter != SAMPLER_KFILTER_OFF &&
	    (s->scope == SCOPE_CGROUP || s->scope == SCOPE_PID)) {
		r = sampler_filter_load(s, o, &ferr);
		if (r == 0)
			r = sampler_open_events(s, o, cpus, ncpu, pages, cgfd, &ferr);
		if (r == 0) {
			s->st.events = "kernel filter";
			return 0;
		}
		sampler_close_events(s);
		if (s->prog_fd >= 0)
			close(s->prog_fd);
		s->prog_fd = -1;
		if (o->kernel_filter == SAMPLER_KFILTER_ON) {
			if (err)
				*err = ferr;
			return r;
		}
		/* AUTO: as without it; if that fails too, its error is the one */
		snprintf(s->st.filter_why, sizeof(s->st.filter_why), "%s", ferr.msg);
	} else if (o->kernel_filter == SAMPLER_KFILTER_ON) {
		return fs_error_set(err, ENOTSUP,
				    "the kernel filter needs a cgroup v2 directory or one pid");
	}
	r = sampler_open_events(s, o, cpus, ncpu, pages, cgfd, err);
	if (r < 0)
		return r;
	s->st.events = s->scope == SCOPE_CGROUP ? "cgroup events"
		       : s->scope == SCOPE_ALL	? "none"
						: "user-space filter";
	return 0;
}

int sampler_open(const struct sampler_opts *opts, struct sampler **out, struct fs_error *err)
{
	struct sampler_opts o = opts ? *opts : (struct sampler_opts){0};
	unsigned freq = 0, max_stack = 0;
	size_t pages = 0;
	int r = sampler_check_opts(&o, &freq, &max_stack, &pages, err);
	if (r < 0)
		return r;
	o.frequency = freq;
	o.max_stack = max_stack;

	cleanup_sampler struct sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return fs_error_set(err, ENOMEM, "allocating the sampler");
	s->prog_fd = -1;
	const char *root = o.proc_root ? o.proc_root : "/proc";
	snprintf(s->proc_root, sizeof(s->proc_root), "%s", root);
	s->max_stack = max_stack;
	s->stack_copy = o.stack_copy;
	s->st.stack_copy = o.stack_copy;
	s->st.ring_pages = (unsigned)pages;
	cleanup_close int cgfd = -1;
	if (o.cgroup_path && *o.cgroup_path) {
		s->scope = SCOPE_CGROUP;
		cgfd = open(o.cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0)
			return fs_error_set(err, errno, "opening cgroup directory %s",
					    o.cgroup_path);
	} else if (o.pid_ns) {
		s->scope = SCOPE_PIDNS;
		s->pid_ns = o.pid_ns;
	} else if (o.pid > 0) {
		s->scope = SCOPE_PID;
		s->pid = o.pid;
	}
	s->st.scope = sampler_scope_names[s->scope];

	int cpus[SAMPLER_MAX_CPUS];
	int ncpu = sampler_online_cpus(cpus, SAMPLER_MAX_CPUS, err);
	if (ncpu < 0)
		return ncpu;
	if (o.stack_copy && !o.ring_pages) {
		pages = sampler_copy_ring_pages(o.stack_copy, pages, ncpu);
		s->st.ring_pages = (unsigned)pages;
	}
	s->rings = calloc((size_t)ncpu, sizeof(*s->rings));
	s->pfds = calloc((size_t)ncpu, sizeof(*s->pfds));
	if (!s->rings || !s->pfds)
		return fs_error_set(err, ENOMEM, "allocating rings for %d CPUs", ncpu);
	r = sampler_open_scoped(s, &o, cpus, ncpu, pages, cgfd, err);
	if (r < 0)
		return r;
	s->st.cpus = s->nrings;
	for (unsigned i = 0; i < s->nrings; i++) {
		if (ioctl(s->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return fs_error_set(err, errno, "enabling the perf event on CPU %d",
					    s->rings[i].cpu);
	}
	*out = steal_pointer(&s);
	return 0;
}

void sampler_set_task_cb(struct sampler *s, void (*on_task)(const struct sampler_task *, void *),
			 void *ctx)
{
	s->on_task = on_task;
	s->task_ctx = ctx;
}

/* ---- scope -------------------------------------------------------------- */

static struct sampler_pident *sampler_pid_slot(struct sampler *s, pid_t pid)
{
	return &s->pids[(unsigned)pid % SAMPLER_PID_CACHE];
}

static int sampler_pid_state(struct sampler *s, pid_t pid)
{
	struct sampler_pident *e = sampler_pid_slot(s, pid);
	return e->pid == pid ? e->state : PID_UNKNOWN;
}

static void sampler_pid_set(struct sampler *s, pid_t pid, int state)
{
	struct sampler_pident *e = sampler_pid_slot(s, pid);
	e->pid = pid;
	e->state = state;
}

static int sampler_in_scope(struct sampler *s, pid_t pid)
{
	if (pid <= 0)
		return 0; /* idle */
	switch (s->scope) {
	case SCOPE_ALL:
	case SCOPE_CGROUP: /* the kernel filtered */ return 1;
	case SCOPE_PID: return pid == s->pid;
	case SCOPE_PIDNS: break;
	}
	int state = sampler_pid_state(s, pid);
	if (state == PID_UNKNOWN) {
		char path[320];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%d/ns/pid", s->proc_root, (int)pid);
		state = stat(path, &st) == 0 && (uint64_t)st.st_ino == s->pid_ns ? PID_IN : PID_OUT;
		sampler_pid_set(s, pid, state);
	}
	return state == PID_IN;
}

/* Whether a side-band record (fork, exit, exec) is of a task in scope.
 * Cgroup events filter them in the kernel as they do samples; the kernel
 * filter (kfilter.h) does not see them, so every task of the host would
 * reach the profile (its caches, its /proc reads on exec). There a task is
 * in scope once a sample of it came through the filter, or when it was
 * forked by one that is: a task never sampled has nothing to forget. */
static int sampler_task_in_scope(struct sampler *s, const struct sampler_task *t)
{
	switch (s->scope) {
	case SCOPE_ALL: return 1;
	case SCOPE_PID: return t->pid == s->pid;
	case SCOPE_PIDNS:
		return t->kind == SAMPLER_TASK_EXEC ? sampler_in_scope(s, t->pid)
						    : sampler_pid_state(s, t->pid) == PID_IN;
	case SCOPE_CGROUP: break;
	}
	if (s->prog_fd < 0)
		return 1; /* cgroup events: the kernel filtered */
	if (t->kind == SAMPLER_TASK_FORK && sampler_pid_state(s, t->ppid) == PID_IN &&
	    sampler_pid_state(s, t->pid) != PID_IN)
		sampler_pid_set(s, t->pid, PID_IN); /* a cgroup's child starts in it */
	return sampler_pid_state(s, t->pid) == PID_IN;
}

/* ---- records ------------------------------------------------------------ */

struct sampler_task_rec {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

static void sampler_task_record(struct sampler *s, const struct perf_event_header *h)
{
	struct sampler_task t = {0};
	s->st.tasks++;
	if (h->type == PERF_RECORD_COMM) {
		if (h->size < sizeof(*h) + 8 || !(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return;
		const uint32_t *p = (const uint32_t *)(h + 1);
		char comm[17];
		size_t room = h->size - sizeof(*h) - 8;
		size_t cl = strnlen((const char *)(p + 2), room < 16 ? room : 16);
		memcpy(comm, p + 2, cl);
		comm[cl] = '\0';
		t.kind = SAMPLER_TASK_EXEC;
		t.pid = (pid_t)p[0];
		t.tid = (pid_t)p[1];
		t.comm = comm;
		t.in_scope = sampler_task_in_scope(s, &t);
		if (!t.in_scope)
			s->st.tasks_dropped++;
		else if (s->on_task && t.pid == t.tid)
			s->on_task(&t, s->task_ctx);
		return;
	}
	if (h->size < sizeof(*h) + sizeof(struct sampler_task_rec))
		return;
	struct sampler_task_rec r;
	memcpy(&r, h + 1, sizeof(r));
	t.pid = (pid_t)r.pid;
	t.tid = (pid_t)r.tid;
	t.ppid = (pid_t)r.ppid;
	if (h->type == PERF_RECORD_FORK) {
		t.kind = SAMPLER_TASK_FORK;
		if (r.pid != r.ppid && s->scope == SCOPE_PIDNS) {
			/* A new process: it inherits its parent's scope (a
			 * process cannot leave its pid namespace). Known now,
			 * so a short-lived child needs no /proc lookup. */
			int ps = sampler_pid_state(s, t.ppid);
			sampler_pid_set(s, t.pid, ps == PID_IN ? PID_IN : PID_UNKNOWN);
		}
	} else {
		t.kind = SAMPLER_TASK_EXIT;
	}
	t.in_scope = sampler_task_in_scope(s, &t);
	if (!t.in_scope)
		s->st.tasks_dropped++; /* another container's or the host's */
	else if (s->on_task)
		s->on_task(&t, s->task_ctx);
	if (t.kind == SAMPLER_TASK_EXIT && r.pid == r.tid && sampler_pid_state(s, t.pid))
		sampler_pid_set(s, t.pid, PID_UNKNOWN); /* the pid may be reused */
}

/* The tail of a sample with stack copies: abi, regs[abi ? 3 : 0], size,
 * data[size], dyn_size (when size != 0). words: what is left of the record
 * at p. 0 or -1 malformed. */
static int sampler_user_regs(struct sampler *s, const uint64_t *p, size_t words, struct sample *smp)
{
	if (words < 1)
		return -1;
	uint64_t abi = *p++;
	words--;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		if (words < SAMPLER_NREGS)
			return -1;
		smp->user_bp = p[0];
		smp->user_sp = p[1];
		smp->user_ip = p[2];
		p += SAMPLER_NREGS;
		words -= SAMPLER_NREGS;
	}
	if (words < 1)
		return -1;
	uint64_t size = *p++;
	words--;
	if (size == 0)
		return 0; /* a kernel thread: no user stack */
	if (size % 8 || size / 8 + 1 > words)
		return -1;
	uint64_t dyn = p[size / 8];
	if (dyn > size)
		return -1;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	smp->has_regs = 1;
	smp->stack = (const uint8_t *)p;
	smp->stack_size = (size_t)dyn;
	s->st.stack_copies++;
	s->st.stack_bytes += dyn;
	return 0;
}

/* A PERF_RECORD_SAMPLE laid out by our sample_type:
 * ip, pid/tid, time, cpu/res, period, nr, ips[nr], then with stack copies
 * the user registers and stack (sampler_user_regs). */
static int sampler_sample_record(struct sampler *s, const struct perf_event_header *h,
				 sampler_sample_fn fn, void *ctx)
{
	const uint64_t *p = (const uint64_t *)(h + 1);
	size_t words = (h->size - sizeof(*h)) / 8;
	if (words < 6) {
		s->st.malformed++;
		return 0;
	}
	struct sample smp;
	smp.ip = p[0];
	smp.pid = (pid_t)(uint32_t)p[1];
	smp.tid = (pid_t)(uint32_t)(p[1] >> 32);
	smp.time = p[2];
	smp.cpu = (uint32_t)p[3];
	smp.period = p[4];
	smp.nr = p[5];
	if (smp.nr > words - 6) {
		s->st.malformed++;
		return 0;
	}
	smp.ips = p + 6;
	smp.has_regs = 0;
	smp.stack = NULL;
	smp.stack_size = 0;
	smp.user_ip = smp.user_sp = smp.user_bp = 0;
	if (!sampler_in_scope(s, smp.pid)) {
		s->st.filtered++;
		return 0;
	}
	if (s->scope == SCOPE_CGROUP && s->prog_fd >= 0 && sampler_pid_state(s, smp.pid) != PID_IN)
		sampler_pid_set(s, smp.pid, PID_IN); /* the filter let it through */
	if (s->stack_copy && sampler_user_regs(s, p + 6 + smp.nr, words - 6 - smp.nr, &smp) < 0) {
		s->st.malformed++;
		return 0;
	}
	smp.truncated = smp.nr >= s->max_stack;
	if (smp.truncated)
		s->st.truncated++;
	s->st.samples++;
	return fn ? fn(&smp, ctx) : 0;
}

static int sampler_record(struct sampler *s, const struct perf_event_header *h,
			  sampler_sample_fn fn, void *ctx)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE: return sampler_sample_record(s, h, fn, ctx);
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16)
			s->st.lost += ((const uint64_t *)(h + 1))[1];
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= sizeof(*h) + 8)
			s->st.lost += ((const uint64_t *)(h + 1))[0];
		return 0;
	case PERF_RECORD_THROTTLE: s->st.throttled++; return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_COMM: sampler_task_record(s, h); return 0;
	default: return 0;
	}
}

static int sampler_drain(struct sampler *s, struct sampler_ring *ring, sampler_sample_fn fn,
			 void *ctx, int *delivered)
{
	struct perf_event_mmap_page *pg = ring->base;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	uint64_t mask = ring->data_size - 1;
	int ret = 0;
	while (tail < head) {
		uint64_t off = tail & mask;
		const struct perf_event_header *h = (const void *)(ring->data + off);
		/* Records are 8-byte aligned, so a header never wraps. */
		if (h->size < sizeof(*h) || h->size > head - tail) {
			s->st.malformed++;
			tail = head; /* cannot resynchronise inside a ring */
			break;
		}
		if (off + h->size > ring->data_size) {
			size_t first = ring->data_size - off;
			memcpy(s->copy, h, first);
			memcpy((char *)s->copy + first, ring->data, h->size - first);
			h = (const void *)s->copy;
		}
		uint64_t before = s->st.samples;
		ret = sampler_record(s, h, fn, ctx);
		*delivered += (int)(s->st.samples - before);
		tail += h->size;
		if (ret)
			break;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return ret;
}

int sampler_poll(struct sampler *s, int timeout_ms, sampler_sample_fn on_sample, void *ctx)
{
	if (timeout_ms != 0) {
		int r = poll(s->pfds, s->nrings, timeout_ms);
		if (r < 0)
			return -errno;
	}
	int delivered = 0;
	for (unsigned i = 0; i < s->nrings; i++) {
		int r = sampler_drain(s, &s->rings[i], on_sample, ctx, &delivered);
		if (r)
			return r;
	}
	return delivered;
}

void sampler_stats(const struct sampler *s, struct sampler_stats *st)
{
	*st = s->st;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	sampler_close_events(s);
	if (s->prog_fd >= 0)
		close(s->prog_fd);
	free(s->rings);
	free(s->pfds);
	free(s);
}
