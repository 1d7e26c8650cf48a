/* profile_rtmaps.c - other runtimes' perf maps over a window: see
 * profile_rtmaps.h. */
#include "profile_rtmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "localfs.h"
#include "perfmap.h"
#include "perfmap_tail.h"
#include "proc.h"
#include "profile_int.h"
#include "timeutil.h"

/* What is known of the process in each slot of p->pids (its index). */
enum {
	RTMAP_LOOK = 0, /* look for its map (again) at the next read */
	RTMAP_READ,	/* its map is in the table: read what it appends */
	RTMAP_DONE,	/* gone, refused, or no room: not looked at again */
};

struct profile_rtmap {
	pid_t pid, ns_pid;
	uint64_t start_time;
	char comm[32];
	struct perfmap_tail tail;
	int gone;	/* the process exited: what was read stays */
	int stopped;	/* reading stopped (warned) */
	int warned_cap; /* said the file is over the cap */
	uint64_t jit;	/* frames in anonymous code, weighted by samples */
	uint64_t named; /* of those, named from the map */
};

struct profile_rtmaps {
	uint8_t state[PROFILE_PID_SLOTS];
	struct profile_rtmap *v[PROFILE_MAX_RTMAPS];
	size_t n;
	size_t last; /* index of the last pid found (lookups come in runs) */
	uint64_t read_us;
	int registered; /* the symbolizer's fallback JIT lookup is ours */
	int warned_full;
};

static struct profile_rtmap *profile_rtmaps_find(const struct profile *p, pid_t pid)
{
	struct profile_rtmaps *rt = p->rt;
	if (!rt || !rt->n)
		return NULL;
	if (rt->last < rt->n && rt->v[rt->last]->pid == pid)
		return rt->v[rt->last];
	for (size_t i = 0; i < rt->n; i++)
		if (rt->v[i]->pid == pid) {
			rt->last = i;
			return rt->v[i];
		}
	return NULL;
}

/* Is pid a process named by our maps (not a JVM, by now)? */
static struct profile_rtmap *profile_rtmaps_named(const struct profile *p, pid_t pid)
{
	struct profile_rtmap *r = profile_rtmaps_find(p, pid);
	if (!r || !r->tail.map)
		return NULL;
	const struct profile_pid *pp = profile_pid_slot((struct profile *)p, pid);
	return pp->pid == pid && pp->jvm ? NULL : r;
}

/* The symbolizer's fallback JIT lookup (pid 0: every process without its
 * own, i.e. every process that is not a JVM being mapped). The symbolizer
 * asks a leaf at pc + 1 and a caller at its return address - 1
 * (symbols.h); a runtime's map gives each function its whole code, so the
 * lookup is at addr - 1: the pc itself, or inside the call instruction. */
static int profile_rtmaps_name(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf,
			       size_t len)
{
	(void)time;
	const struct profile_rtmap *r = profile_rtmaps_named(ctx, pid);
	const struct perfmap_entry *e = r && addr ? perfmap_lookup(r->tail.map, addr - 1) : NULL;
	static const char mark[] = "_[j]";
	if (!e || len < sizeof(mark) + 1)
		return 0;
	/* the mark survives a name cut to the buffer */
	size_t room = len - sizeof(mark), n = strnlen(e->name, room);
	memcpy(buf, e->name, n);
	memcpy(buf + n, mark, sizeof(mark));
	return 1;
}

/* pid's root and the facts its map is checked against, then the map
 * opened by perfmap_open_checked. The fd, or -errno (-ESRCH: gone). */
static int profile_rtmaps_open(struct profile_rtmap *r, struct fs_error *err)
{
	struct proc_status st;
	char path[64];
	cleanup_close int pidfd = proc_pidfd_open_checked(r->pid, r->start_time, err);
	if (pidfd < 0)
		return pidfd;
	int e = proc_status_read(r->pid, &st, err);
	if (e < 0)
		return e == -ENOENT ? -ESRCH : e;
	/* Its own root (a chroot in the container is honoured): the kernel
	 * resolves the magic link, and the map is resolved beneath it. */
	snprintf(path, sizeof(path), "/proc/%d/root", (int)r->pid);
	cleanup_close int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	if ((e = proc_pidfd_recheck(pidfd, r->pid, r->start_time, err)) < 0)
		return e;
	r->ns_pid = proc_status_ns_pid(&st);
	if (r->ns_pid <= 0)
		return fs_error_set(err, ESRCH, "pid %d has no pid in its namespace", (int)r->pid);
	/* No lookup on a file system the container could stall: its root
	 * (where "tmp" is looked up), then its /tmp (where the map is). */
	if ((e = localfs_check_fd(root, r->pid, "its root directory", err)) < 0)
		return e;
	struct open_how how = {
	    .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
	};
	cleanup_close int tmp = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	if (tmp < 0 && errno == ELOOP)
		return fs_error_set(err, ELOOP, "refusing /tmp: it is a symbolic link");
	if (tmp < 0)
		return fs_error_set(err, errno, "opening /tmp");
	if ((e = localfs_check_fd(tmp, r->pid, "its /tmp", err)) < 0)
		return e;
	snprintf(path, sizeof(path), "tmp/perf-%d.map", (int)r->ns_pid);
	/* A mount of its own on the map itself, of a kind that could stall. */
	if ((e = localfs_path_ok(r->pid, path, "its perf map", err)) < 0)
		return e;
	/* Any size opens: at most PERFMAP_MAX_CONTAINER_FILE bytes are read. */
	return perfmap_open_checked(root, path, st.uid[1], SIZE_MAX, NULL, -1, err);
}

static const char *profile_rtmaps_comm(const struct profile_rtmap *r)
{
	return r->comm[0] ? r->comm : "?";
}

/* Read what r's map appended since the last read. */
static void profile_rtmaps_read(struct profile *p, struct profile_rtmap *r)
{
	struct fs_error err = {0};
	if (r->gone || r->stopped)
		return;
	cleanup_close int fd = profile_rtmaps_open(r, &err);
	if (fd == -ESRCH) {
		r->gone = 1; /* its names stay */
		return;
	}
	if (fd == -ENOENT)
		return; /* removed for now: keep what was read, look again */
	size_t pending = 0;
	if (fd >= 0 &&
	    perfmap_tail_check(&r->tail, fd, PERFMAP_MAX_CONTAINER_FILE, &pending, &err) == 0) {
		if (r->tail.capped && !r->warned_cap) {
			r->warned_cap = 1;
			profile_warn(
			    p,
			    "pid %d (%s): /tmp/perf-%d.map is over %lu MiB: only its first "
			    "%lu MiB are read, code it names later stays [unknown]",
			    (int)r->pid, profile_rtmaps_comm(r), (int)r->ns_pid,
			    PERFMAP_MAX_CONTAINER_FILE >> 20, PERFMAP_MAX_CONTAINER_FILE >> 20);
		}
		/* parsed, a map holds at most about twice its text */
		if (pending && profile_jit_full(p, r->pid, 2 * pending)) {
			r->stopped = 1;
			return;
		}
		if (perfmap_tail_read(&r->tail, fd, pending, &err) >= 0)
			return;
	}
	r->stopped = 1;
	profile_warn(p,
		     "pid %d (%s): stopped reading its perf map (%s); the names read so far stay",
		     (int)r->pid, profile_rtmaps_comm(r), err.msg);
}

/* First look at pid (slot i of p->pids) for a map. */
static void profile_rtmaps_look(struct profile *p, size_t i)
{
	struct profile_rtmaps *rt = p->rt;
	const struct profile_pid *pp = &p->pids[i];
	struct profile_rtmap probe = {.pid = pp->pid, .start_time = pp->start_time};
	struct fs_error err = {0};
	const char *comm = symbolizer_comm(p->sym, pp->pid);
	cleanup_close int fd = profile_rtmaps_open(&probe, &err);
	if (fd == -ENOENT)
		return; /* none yet: a runtime may write it later */
	if (fd < 0) {
		rt->state[i] = RTMAP_DONE;
		if (fd != -ESRCH)
			profile_warn(p, "pid %d (%s): its perf map is not read: %s", (int)pp->pid,
				     comm ? comm : "?", err.msg);
		return;
	}
	rt->state[i] = RTMAP_DONE;
	if (rt->n == PROFILE_MAX_RTMAPS) {
		if (!rt->warned_full)
			profile_warn(p,
				     "more than %u processes with perf maps: pid %d (%s) and later "
				     "ones keep their JIT frames [unknown]",
				     PROFILE_MAX_RTMAPS, (int)pp->pid, comm ? comm : "?");
		rt->warned_full = 1;
		return;
	}
	struct profile_rtmap *r = calloc(1, sizeof(*r));
	if (!r)
		return;
	*r = probe;
	perfmap_tail_init(&r->tail);
	snprintf(r->comm, sizeof(r->comm), "%s", comm ? comm : "");
	rt->v[rt->n++] = r;
	rt->state[i] = RTMAP_READ;
	if (!rt->registered && symbolizer_set_jit(p->sym, 0, profile_rtmaps_name, p) == 0)
		rt->registered = 1;
	profile_rtmaps_read(p, r);
}

void profile_rtmaps_read_all(struct profile *p)
{
	if (!p->rt && !(p->rt = calloc(1, sizeof(*p->rt))))
		return;
	struct profile_rtmaps *rt = p->rt;
	for (size_t i = 0; i < PROFILE_PID_SLOTS; i++) {
		const struct profile_pid *pp = &p->pids[i];
		if (!pp->pid || pp->jvm)
			continue;
		if (rt->state[i] == RTMAP_LOOK)
			profile_rtmaps_look(p, i);
		else if (rt->state[i] == RTMAP_READ) {
			struct profile_rtmap *r = profile_rtmaps_find(p, pp->pid);
			if (r)
				profile_rtmaps_read(p, r);
		}
	}
	rt->read_us = timeutil_now_us();
}

void profile_rtmaps_tick(struct profile *p)
{
	if (p->rt && timeutil_now_us() - p->rt->read_us < PROFILE_WINDOW_READ_US)
		return;
	profile_rtmaps_read_all(p);
}

size_t profile_rtmaps_memory(const struct profile *p)
{
	size_t held = 0;
	for (size_t i = 0; p->rt && i < p->rt->n; i++)
		held += perfmap_tail_memory(&p->rt->v[i]->tail);
	return held;
}

int profile_rtmaps_frame(struct profile *p, pid_t pid, const struct symbolizer_frame *f,
			 uint64_t count)
{
	if (f->kind != SYMBOLIZER_KIND_JIT)
		return 0;
	struct profile_rtmap *r = profile_rtmaps_named(p, pid);
	if (!r)
		return 0;
	r->jit += count;
	if (f->resolved)
		r->named += count;
	return f->resolved;
}

void profile_rtmaps_stats(const struct profile *p, struct profile_stats *st)
{
	st->nrtmap = 0;
	for (size_t i = 0; p->rt && i < p->rt->n && st->nrtmap < PROFILE_MAX_RTMAPS; i++) {
		const struct profile_rtmap *r = p->rt->v[i];
		if (!r->tail.map && !r->tail.offset)
			continue; /* an empty map: nothing named */
		struct profile_rtmap_result *o = &st->rtmap[st->nrtmap++];
		memset(o, 0, sizeof(*o));
		o->pid = r->pid;
		o->ns_pid = r->ns_pid;
		snprintf(o->comm, sizeof(o->comm), "%s", r->comm);
		o->entries = perfmap_tail_count(&r->tail);
		o->bytes = r->tail.offset;
		o->skipped = r->tail.skipped;
		o->restarts = r->tail.restarts;
		o->capped = r->tail.capped;
		o->stopped = r->stopped;
		o->jit = r->jit;
		o->named = r->named;
	}
}

void profile_rtmaps_free(struct profile *p)
{
	if (!p->rt)
		return;
	for (size_t i = 0; i < p->rt->n; i++) {
		perfmap_free(p->rt->v[i]->tail.map);
		free(p->rt->v[i]);
	}
	free(p->rt);
	p->rt = NULL;
}

/* The budget of JIT names of the window (profile_int.h): the JVMs' perf
 * maps and JIT logs and the other runtimes' perf maps above, together.
 * Here, beside the other runtimes' share, so that the calls go one way:
 * profile_fold.c -> profile_rtmaps.c -> profile_jvms.c. */
size_t profile_jit_room(const struct profile *p, pid_t pid)
{
	size_t held = 0;
	for (size_t i = 0; i < p->njit; i++) {
		const struct profile_jit *j = &p->jit[i];
		if (j->map && j->pid != pid)
			held += j->map->memory;
		if (j->win && j->pid != pid)
			held += jitlog_memory(map_window_log(j->win));
	}
	return held < PROFILE_JIT_BUDGET ? PROFILE_JIT_BUDGET - held : 0;
}

int profile_jit_full(struct profile *p, pid_t pid, size_t more)
{
	size_t held = 0;
	for (size_t i = 0; i < p->njit; i++) {
		const struct profile_jit *j = &p->jit[i];
		if (j->map && j->pid != pid) /* a new map of pid replaces its old one */
			held += j->map->memory;
		if (j->win)
			held += jitlog_memory(map_window_log(j->win));
	}
	held += profile_rtmaps_memory(p); /* other runtimes' perf maps */
	if (held <= PROFILE_JIT_BUDGET && more <= PROFILE_JIT_BUDGET - held)
		return 0;
	if (!p->jit_full)
		profile_warn(p,
			     "the JIT names of all processes reached %llu MiB (the memory budget): "
			     "pid %d keeps what was read so far, code named later stays [unknown]",
			     (unsigned long long)(PROFILE_JIT_BUDGET >> 20), (int)pid);
	p->jit_full = 1;
	return 1;
}
