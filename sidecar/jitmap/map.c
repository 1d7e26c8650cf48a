/* map.c - `flamesidecar map` and map_jvm(): see map.h */
#include "map.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "cleanup.h"
#include "ctprocs.h"
#include "hsmap.h"
#include "proc.h"
#include "rootfs.h"
#include "sandbox.h"

const char *map_mode_name(enum map_mode m)
{
	switch (m) {
	case MAP_MODE_AGENT: return "agent";
	case MAP_MODE_JCMD: return "jcmd";
	case MAP_MODE_VMSTRUCTS: return "vmstructs";
	default: return "auto";
	}
}

/* ---- the sandboxed child ------------------------------------------------- */

/* What the sandboxed child does. */
enum map_job {
	MAP_JOB_MAP = 0,      /* load the agent (or jcmd), return the perf map */
	MAP_JOB_WINDOW_START, /* start a timed session, return its log so far */
	MAP_JOB_WINDOW_READ,  /* return the log from offset on */
	MAP_JOB_WINDOW_STOP,  /* stop the session, return the rest of its log */
};

struct map_child_arg {
	struct attach_target t;
	enum map_mode mode;
	enum map_job job;
	uint64_t offset;  /* window jobs: bytes of the log read already */
	uint64_t max_len; /* bytes sent at most (the parent's budget) */
	unsigned ttl_s;	  /* window start: the session's own time limit */
	int continuous;
	int agent_loaded;     /* a libflameagent.so is mapped in the JVM already */
	char agent[PATH_MAX]; /* absolute, inside the container; "" = none */
};

static int map_trigger(void *arg, struct fs_error *err)
{
	return sandbox_child_request(arg, "sigquit", err);
}

/* Is the agent a regular file at a symlink-free path in the container? */
static int map_agent_present(int root, const char *path)
{
	struct stat st;
	if (!path[0])
		return 0;
	cleanup_close int fd = rootfs_open(root, path + 1, O_PATH, 0);
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* One connection, one request: load the agent with option opt. */
static int map_load_agent(struct map_child_arg *a, struct sandbox_child *c, const char *opt,
			  uint64_t deadline, int *signalled, struct fs_error *err)
{
	int sig = 0, rc, r;
	cleanup_close int fd = attach_connect(&a->t, map_trigger, c, deadline, &sig, err);
	if (fd < 0)
		return fd;
	*signalled |= sig;
	const char *args[3] = {a->agent, "true", opt};
	struct attach_reply reply;
	if ((r = attach_execute(fd, "load", args, deadline, &reply, err)) < 0)
		return r;
	r = attach_load_result(&reply, a->agent, &rc, err);
	attach_reply_free(&reply);
	return r;
}

static int map_jcmd_perfmap(struct map_child_arg *a, struct sandbox_child *c, uint64_t deadline,
			    int *signalled, struct fs_error *err)
{
	int r;
	cleanup_close int fd = attach_connect(&a->t, map_trigger, c, deadline, signalled, err);
	if (fd < 0)
		return fd;
	const char *args[3] = {"Compiler.perfmap", NULL, NULL};
	struct attach_reply reply;
	if ((r = attach_execute(fd, "jcmd", args, deadline, &reply, err)) < 0)
		return r;
	r = attach_jcmd_result(&reply, "Compiler.perfmap", err);
	attach_reply_free(&reply);
	return r;
}

/* Send the header and then fd's bytes from offset to its size (at most
 * PERFMAP_MAX_CONTAINER_FILE: the file was checked at open), max_len of
 * them at most. */
static int map_send_file(struct sandbox_child *c, int fd, const char *path, uint64_t offset,
			 size_t size, uint64_t max_len, int mode, int signalled,
			 struct fs_error *err)
{
	char head[32];
	int r;
	int hl = snprintf(head, sizeof(head), "%d %d\n", mode, signalled);
	if ((r = sandbox_child_write(c, head, (size_t)hl, err)) < 0)
		return r;
	if (offset >= size)
		return 0;
	size -= (size_t)offset;
	if (size > max_len)
		size = (size_t)max_len;
	cleanup_free char *buf = malloc(256 * 1024);
	if (!buf)
		return fs_error_set(err, ENOMEM, "reading %s", path);
	while (size) {
		ssize_t n = pread(fd, buf, size < 256 * 1024 ? size : 256 * 1024, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fs_error_set(err, errno, "reading /%s", path);
		if (n == 0)
			break; /* truncated meanwhile */
		if ((r = sandbox_child_write(c, buf, (size_t)n, err)) < 0)
			return r;
		size -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

/* The window jobs: the agent's timed log (agentmap.h), owned by the JVM's
 * user, checked like the perf map before the JVM writes it and when read. */
static int map_child_window(struct map_child_arg *a, struct sandbox_child *c, int root,
			    uint64_t deadline, struct fs_error *err)
{
	char path[64];
	int r, signalled = 0;
	size_t size = 0;
	snprintf(path, sizeof(path), "tmp/" MAP_TIMED_NAME, (int)a->t.ns_pid);
	if (a->job == MAP_JOB_WINDOW_START) {
		if (!map_agent_present(root, a->agent))
			return fs_error_set(err, ENOENT, "the agent %s is not in the container",
					    a->agent[0] ? a->agent : MAP_AGENT_NAME);
		if ((r = perfmap_precheck(root, path, a->t.uid, PERFMAP_MAX_CONTAINER_FILE, err)) <
		    0)
			return r;
		/* One timed session per JVM: end one left running (a user's
		 * continuous perf map session is another one: it is left alone). */
		if (a->agent_loaded &&
		    (r = map_load_agent(a, c, "stop,timed", deadline, &signalled, err)) < 0)
			return r;
		char opt[64];
		snprintf(opt, sizeof(opt), "mode=continuous,timed,ttl=%u", a->ttl_s);
		if ((r = map_load_agent(a, c, opt, deadline, &signalled, err)) < 0)
			return r;
	}
	cleanup_close int fd = perfmap_open_checked(
	    root, path, a->t.uid, PERFMAP_MAX_CONTAINER_FILE, &size, PERFMAP_NO_PROC, err);
	if (fd < 0)
		return fd;
	if (a->job == MAP_JOB_WINDOW_STOP) {
		/* Stop first: the agent closes and removes the file, which our
		 * fd keeps readable; then everything it wrote is read. */
		if ((r = map_load_agent(a, c, "stop,timed", deadline, &signalled, err)) < 0)
			return r;
		struct stat st;
		if (fstat(fd, &st) < 0)
			return fs_error_set(err, errno, "stat /%s", path);
		size = st.st_size < 0 ? 0 : (size_t)st.st_size;
		if (size > PERFMAP_MAX_CONTAINER_FILE)
			size = PERFMAP_MAX_CONTAINER_FILE;
	}
	if ((r = map_send_file(c, fd, path, a->offset, size, a->max_len, MAP_MODE_AGENT, signalled,
			       err)) < 0)
		return r;
	/* The parent reads the rest of the window through this fd, after
	 * checking it again itself (map_window_take_fd). */
	if (a->job == MAP_JOB_WINDOW_START)
		return sandbox_child_send_fd(c, fd, err);
	return 0;
}

static int map_child(struct sandbox_child *c, void *argp, struct fs_error *err)
{
	struct map_child_arg *a = argp;
	uint64_t deadline = sandbox_child_deadline(c);
	/* The jail's working directory is the target's root. */
	int root = AT_FDCWD;
	if (a->job != MAP_JOB_MAP)
		return map_child_window(a, c, root, deadline, err);

	enum map_mode mode = a->mode;
	if (mode != MAP_MODE_JCMD) {
		int present = map_agent_present(root, a->agent);
		if (!present && mode == MAP_MODE_AGENT)
			return fs_error_set(err, ENOENT,
					    "the agent %s is not in the container (is the bundle "
					    "mounted? try --mode jcmd)",
					    a->agent[0] ? a->agent : MAP_AGENT_NAME);
		mode = present ? MAP_MODE_AGENT : MAP_MODE_JCMD;
	}

	/* Never make the JVM write into (or block on) a planted file. */
	char path[64];
	int r;
	snprintf(path, sizeof(path), "tmp/perf-%d.map", (int)a->t.ns_pid);
	if ((r = perfmap_precheck(root, path, a->t.uid, PERFMAP_MAX_CONTAINER_FILE, err)) < 0)
		return r;

	int signalled = 0;
	if (mode == MAP_MODE_AGENT) {
		/* The agent runs one continuous session per JVM and refuses a
		 * second: a repeated --continuous restarts it (stop, then start,
		 * which rewrites the whole map) instead of failing. */
		if (a->continuous && a->agent_loaded &&
		    (r = map_load_agent(a, c, "stop", deadline, &signalled, err)) < 0)
			return r;
		r = map_load_agent(a, c, a->continuous ? "mode=continuous" : "mode=oneshot",
				   deadline, &signalled, err);
	} else {
		r = map_jcmd_perfmap(a, c, deadline, &signalled, err);
	}
	if (r < 0)
		return r;

	size_t size;
	cleanup_close int mfd = perfmap_open_checked(
	    root, path, a->t.uid, PERFMAP_MAX_CONTAINER_FILE, &size, PERFMAP_NO_PROC, err);
	if (mfd < 0)
		return mfd;
	return map_send_file(c, mfd, path, 0, size, a->max_len, (int)mode, signalled, err);
}

/* ---- the parent ---------------------------------------------------------- */

struct map_parent_arg {
	pid_t pid;
	uint64_t start_time;
};

static int map_on_request(const char *req, int target_pidfd, void *argp, struct fs_error *err)
{
	struct map_parent_arg *a = argp;
	if (strcmp(req, "sigquit"))
		return fs_error_set(err, EPERM, "unknown request '%.32s'", req);
	int r = attach_check_signal(a->pid, err);
	if (r < 0)
		return r;
	return attach_send_sigquit(target_pidfd, a->pid, a->start_time, err);
}

/* Has pid loaded a libflameagent.so (from any path)? Only then can a
 * continuous session be running; 0 when unsure. */
static int map_agent_loaded(pid_t pid)
{
	static const char *const needles[] = {"/" MAP_AGENT_NAME "\n"};
	unsigned found = 0;
	struct fs_error ignored;
	return proc_maps_scan(pid, needles, 1, &found, &ignored) == 0 && found;
}

int map_find_jvms(const struct registry_entry *e, pid_t **pids, size_t *n, struct fs_error *err)
{
	cleanup_free pid_t *v = NULL;
	size_t cnt = 0;
	/* the container's processes, ascending (lib/ctprocs.h) */
	int r = ctprocs_list(e, NULL, &v, &cnt, NULL, err);
	if (r < 0)
		return r;
	size_t k = 0;
	for (size_t i = 0; i < cnt; i++) {
		struct fs_error ignored;
		r = attach_check_hotspot(v[i], &ignored);
		if (r == 0 || r == -EOPNOTSUPP)
			v[k++] = v[i];
	}
	*pids = k ? steal_pointer(&v) : NULL;
	*n = k;
	return 0;
}

/* The map from the JVM's code cache, read from the host (hsmap.h). */
static int map_vmstructs(pid_t host_pid, struct perfmap **m, struct map_result *res,
			 struct fs_error *err)
{
	struct hsmap_stats st;
	int r = hsmap_build(host_pid, m, &st, err);
	if (r < 0)
		return fs_error_wrap(err, "pid %d: reading its code cache from the host",
				     (int)host_pid);
	res->mode = MAP_MODE_VMSTRUCTS;
	res->bytes = st.bytes;
	snprintf(res->cut, sizeof(res->cut), "%s", st.cut);
	return 0;
}

static int map_finish(pid_t host_pid, const struct map_opts *o, const struct timespec *ts0,
		      struct perfmap *m, struct perfmap **out, struct map_result *res,
		      struct fs_error *err)
{
	cleanup_perfmap struct perfmap *own = m;
	int r;
	res->entries = m->count;
	if (o->write_host && (r = perfmap_write_host(o->host_tmp, host_pid, m, err)) < 0)
		return r;
	struct timespec ts1;
	clock_gettime(CLOCK_MONOTONIC, &ts1);
	res->elapsed_us = (uint64_t)(ts1.tv_sec - ts0->tv_sec) * 1000000 +
			  (uint64_t)((ts1.tv_nsec - ts0->tv_nsec) / 1000);
	if (out)
		*out = steal_pointer(&own);
	return 0;
}

/* VMSTRUCTS, or AUTO with o->fallback: attach (agent or jcmd) when it can
 * work, else, or when it fails, the code cache read from the host, so
 * nothing is created in the container. 1 when the vmstructs map was taken
 * (*m set), 0 to attach (or to report attach_rc), -errno. */
static int map_fallback(pid_t host_pid, const struct map_opts *o, int attach_rc, struct perfmap **m,
			struct map_result *res, struct fs_error *err)
{
	struct fs_error verr = {0};
	if (o->mode != MAP_MODE_VMSTRUCTS && (o->mode != MAP_MODE_AUTO || !o->fallback))
		return attach_rc;
	if (o->mode == MAP_MODE_AUTO && attach_rc == 0) {
		struct fs_error ignored;
		if (attach_check_signal(host_pid, &ignored) == 0)
			return 0; /* attach looks possible: try it first */
	}
	int r = map_vmstructs(host_pid, m, res, o->mode == MAP_MODE_VMSTRUCTS ? err : &verr);
	if (r == 0)
		return 1;
	if (o->mode == MAP_MODE_VMSTRUCTS)
		return r;
	if (attach_rc < 0) /* both failed: say both */
		fs_error_wrap(err, "%s; and attach", verr.msg);
	return attach_rc < 0 ? attach_rc : 0;
}

/* Is host_pid still the process we mean, in e's pid namespace, and a
 * HotSpot JVM? Fills res's pid, ns pid and uid, *st and *start_time. */
static int map_check_pid(const struct registry_entry *e, pid_t host_pid, struct proc_status *st,
			 uint64_t *start_time, struct map_result *res, struct fs_error *err)
{
	uint64_t ino;
	res->host_pid = host_pid;
	int r = proc_start_time(host_pid, start_time, err);
	if (r == 0)
		r = proc_status_read(host_pid, st, err);
	if (r < 0)
		return fs_error_wrap(err, "pid %d", (int)host_pid);
	if ((r = proc_ns_inode(host_pid, "pid", &ino, err)) < 0)
		return r;
	if (ino != e->pid_ns)
		return fs_error_set(err, ESRCH, "pid %d is not in container %s", (int)host_pid,
				    e->id);
	if ((r = attach_check_hotspot(host_pid, err)) < 0)
		return r;
	res->ns_pid = proc_status_ns_pid(st);
	res->uid = st->uid[1];
	return 0;
}

/* Run one job of the sandboxed child against JVM host_pid of e. On success
 * *data (malloc'd) holds the child's answer, whose payload starts at *hl;
 * res gets pid, uid, mode and bytes. */
static int map_run(const struct registry_entry *e, pid_t host_pid, const struct map_opts *o,
		   enum map_job job, uint64_t offset, uint64_t max_len, char **data, size_t *hl,
		   int *fd_out, struct map_result *res, struct fs_error *err)
{
	struct proc_status st;
	uint64_t start_time;
	size_t len = 0;
	*data = NULL;
	int r = map_check_pid(e, host_pid, &st, &start_time, res, err);
	if (r < 0)
		return r;

	cleanup_free struct map_child_arg *ca = calloc(1, sizeof(*ca));
	if (!ca)
		return fs_error_set(err, ENOMEM, "map");
	ca->t.host_pid = host_pid;
	ca->t.ns_pid = res->ns_pid;
	ca->t.uid = st.uid[1];
	ca->mode = o->mode;
	ca->job = job;
	ca->offset = offset;
	ca->max_len = max_len < PERFMAP_MAX_CONTAINER_FILE ? max_len : PERFMAP_MAX_CONTAINER_FILE;
	ca->ttl_s = o->window_ttl_s;
	ca->continuous = o->continuous;
	if (o->continuous || job == MAP_JOB_WINDOW_START)
		ca->agent_loaded = map_agent_loaded(host_pid);
	if (e->mount_point[0] == '/')
		snprintf(ca->agent, sizeof(ca->agent), "%s/%s", e->mount_point, MAP_AGENT_NAME);
	else if (o->mode == MAP_MODE_AUTO)
		ca->mode = MAP_MODE_JCMD; /* no bundle in this container */

	struct map_parent_arg pa = {host_pid, start_time};
	struct sandbox_target t = {.pid = host_pid,
				   .start_time = start_time,
				   .mnt_ns = e->mnt_ns,
				   .pid_ns = e->pid_ns,
				   .uid = st.uid[1],
				   .gid = st.gid[1]};
	struct sandbox_job sj = {.fn = map_child,
				 .arg = ca,
				 .on_request = map_on_request,
				 .request_arg = &pa,
				 .max_out = (size_t)ca->max_len + 64,
				 .timeout_ms =
				     o->timeout_ms ? o->timeout_ms : MAP_DEFAULT_TIMEOUT_MS,
				 .fd_out = fd_out};
	r = sandbox_run(&t, &sj, data, &len, err);
	if (r < 0) {
		if (r == -ETIMEDOUT)
			attach_explain_failure(host_pid, start_time, err);
		return fs_error_wrap(err, "pid %d (ns pid %d)", (int)host_pid, (int)res->ns_pid);
	}
	int mode = 0, sig = 0, n = 0;
	if (sscanf(*data, "%d %d\n%n", &mode, &sig, &n) != 2 || n <= 0) {
		free(*data);
		*data = NULL;
		if (fd_out && *fd_out >= 0) {
			close(*fd_out);
			*fd_out = -1;
		}
		return fs_error_set(err, EPROTO, "pid %d: malformed answer from the sandbox",
				    (int)host_pid);
	}
	res->mode = mode == MAP_MODE_AGENT ? MAP_MODE_AGENT : MAP_MODE_JCMD;
	res->signalled |= sig;
	*hl = (size_t)n;
	res->bytes += len - (size_t)n;
	return (int)(len - (size_t)n);
}

static uint64_t map_elapsed_us(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (uint64_t)(t1.tv_sec - t0->tv_sec) * 1000000 +
	       (uint64_t)((t1.tv_nsec - t0->tv_nsec) / 1000);
}

int map_jvm(const struct registry_entry *e, pid_t host_pid, const struct map_opts *o,
	    struct perfmap **out, struct map_result *res, struct fs_error *err)
{
	struct map_result local;
	struct timespec ts0;
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (out)
		*out = NULL;
	cleanup_free char *data = NULL;
	size_t hl = 0;
	struct perfmap *vm = NULL;
	int r;
	if (o->mode == MAP_MODE_VMSTRUCTS || (o->mode == MAP_MODE_AUTO && o->fallback)) {
		struct proc_status st;
		uint64_t start_time;
		if ((r = map_check_pid(e, host_pid, &st, &start_time, res, err)) < 0)
			return r;
		if ((r = map_fallback(host_pid, o, 0, &vm, res, err)) != 0)
			return r < 0 ? r : map_finish(host_pid, o, &ts0, vm, out, res, err);
	}
	int len = map_run(e, host_pid, o, MAP_JOB_MAP, 0, PERFMAP_MAX_CONTAINER_FILE, &data, &hl,
			  NULL, res, err);
	if (len < 0) {
		r = map_fallback(host_pid, o, len, &vm, res, err);
		return r == 1 ? map_finish(host_pid, o, &ts0, vm, out, res, err) : r;
	}
	struct perfmap *m = NULL;
	r = perfmap_parse(data + hl, (size_t)len, 1, &m, err);
	if (r < 0)
		return fs_error_wrap(err, "pid %d", (int)host_pid);
	return map_finish(host_pid, o, &ts0, m, out, res, err);
}

/* ---- windows --------------------------------------------------------------- */

struct map_window {
	struct registry_entry entry;
	pid_t host_pid;
	struct map_opts opts;
	uint64_t offset; /* log bytes read */
	int stopped;
	/* The log, opened and checked by the sandboxed child at the start and
	 * handed over, checked again here (map_window_take_fd), read with
	 * pread from then on; -1: every read is a sandboxed child. */
	int log_fd;
	uid_t uid;	   /* the JVM's, the log's owner */
	char log_path[64]; /* its path in the container, for messages */
	struct jitlog log;
	struct map_result res;
};

/* The JVM's CLOCK_MONOTONIC minus ours (its time namespace), in ns. */
static int64_t map_clock_offset(pid_t pid)
{
	char path[64];
	cleanup_free char *text = NULL;
	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", (int)pid);
	if (proc_read_file(path, 4096, &text, NULL, NULL) < 0)
		return 0; /* no time namespaces: the same clock */
	return map_parse_clock_offset(text);
}

int64_t map_parse_clock_offset(const char *text)
{
	long long sec = 0, nsec = 0;
	const char *m = strstr(text, "monotonic");
	/* The kernel keeps nsec in [0, 1e9): anything else (or an offset of
	 * more than 2^32 s) is not its file; the sum cannot overflow. */
	if (!m || sscanf(m, "monotonic %lld %lld", &sec, &nsec) != 2 || sec < -(1ll << 32) ||
	    sec > (1ll << 32) || nsec < 0 || nsec >= 1000000000)
		return 0;
	return (int64_t)sec * 1000000000 + nsec;
}

/* Log text one read may take: what the log's byte cap leaves, and no more
 * than its memory budget leaves (a line costs at least its bytes), so that
 * even the first read, the whole log written so far, stays in the budget. */
static uint64_t map_window_max_read(const struct map_window *w)
{
	const struct jitlog *l = &w->log;
	size_t held = jitlog_memory(l), room = held < l->limit ? l->limit - held : 0;
	uint64_t max =
	    JITLOG_MAX_BYTES - (l->bytes < JITLOG_MAX_BYTES ? l->bytes : JITLOG_MAX_BYTES);
	return room < max ? room : max;
}

/* The fd the child handed over at the start: kept when it passes the
 * checks the child's own open made (perfmap_check_fd), else closed, and
 * every read stays a sandboxed child. */
static void map_window_take_fd(struct map_window *w, int fd)
{
	struct fs_error ignored;
	size_t size;
	if (fd < 0)
		return;
	snprintf(w->log_path, sizeof(w->log_path), "/tmp/" MAP_TIMED_NAME, (int)w->res.ns_pid);
	if (perfmap_check_fd(fd, w->host_pid, w->uid, PERFMAP_MAX_CONTAINER_FILE, &size,
			     w->log_path, &ignored) < 0) {
		close(fd);
		return;
	}
	w->log_fd = fd;
}

/* What was appended to the log since w->offset, read through w->log_fd
 * (re-checked: owner, links, size), at most max_len bytes. Its length,
 * or -errno. */
static int map_window_pread(struct map_window *w, uint64_t max_len, char **data,
			    struct fs_error *err)
{
	size_t size;
	*data = NULL;
	int r = perfmap_recheck_fd(w->log_fd, w->uid, PERFMAP_MAX_CONTAINER_FILE, &size,
				   w->log_path, err);
	if (r < 0)
		return r;
	size_t want = w->offset < size ? size - (size_t)w->offset : 0;
	if (want > max_len)
		want = (size_t)max_len;
	if (want > INT_MAX)
		want = INT_MAX;
	cleanup_free char *buf = malloc(want + 1);
	if (!buf)
		return fs_error_set(err, ENOMEM, "reading the JIT log");
	size_t got = 0;
	while (got < want) {
		ssize_t n = pread(w->log_fd, buf + got, want - got, (off_t)(w->offset + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fs_error_set(err, errno, "reading the JIT log");
		if (n == 0)
			break; /* truncated meanwhile */
		got += (size_t)n;
	}
	buf[got] = '\0';
	w->res.bytes += got;
	*data = steal_pointer(&buf);
	return (int)got;
}

/* Run a window job and feed what it returned into the log. */
static int map_window_job(struct map_window *w, enum map_job job, struct fs_error *err)
{
	struct timespec ts0;
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	cleanup_free char *data = NULL;
	size_t hl = 0;
	int len, fd = -1;
	if (job == MAP_JOB_WINDOW_READ && w->log_fd >= 0) {
		len = map_window_pread(w, map_window_max_read(w), &data, err);
	} else {
		len = map_run(&w->entry, w->host_pid, &w->opts, job, w->offset,
			      map_window_max_read(w), &data, &hl,
			      job == MAP_JOB_WINDOW_START ? &fd : NULL, &w->res, err);
		if (len >= 0)
			w->uid = w->res.uid;
		map_window_take_fd(w, fd);
	}
	if (len < 0)
		return len;
	w->offset += (uint64_t)len;
	int r = jitlog_feed(&w->log, data + hl, (size_t)len, err);
	if (r == 0 && jitlog_index(&w->log) < 0)
		r = fs_error_set(err, ENOMEM, "indexing the JIT log");
	w->res.entries = jitlog_entries(&w->log);
	w->res.loads = jitlog_loads(&w->log);
	snprintf(w->res.nonsafepoints, sizeof(w->res.nonsafepoints), "%s", w->log.nonsafepoints);
	w->res.dropped = jitlog_dropped(&w->log);
	w->res.elapsed_us = map_elapsed_us(&ts0);
	return r < 0 ? fs_error_wrap(err, "pid %d", (int)w->host_pid) : 0;
}

int map_window_open(const struct registry_entry *e, pid_t host_pid, const struct map_opts *o,
		    struct map_window **out, struct fs_error *err)
{
	*out = NULL;
	if (o->mode == MAP_MODE_JCMD || e->mount_point[0] != '/')
		return fs_error_set(err, EOPNOTSUPP,
				    "no agent for a window (jcmd mode, or no "
				    "bundle mounted in the container)");
	struct map_window *w = calloc(1, sizeof(*w));
	if (!w)
		return fs_error_set(err, ENOMEM, "map window");
	w->entry = *e;
	w->host_pid = host_pid;
	w->opts = *o;
	w->log_fd = -1;
	jitlog_init(&w->log, map_clock_offset(host_pid));
	if (o->jit_budget)
		jitlog_set_limit(&w->log, o->jit_budget);
	jitlog_set_stop(&w->log, o->stop);
	int r = map_window_job(w, MAP_JOB_WINDOW_START, err);
	if (r < 0) {
		/* it may have started: never leave a session running */
		struct fs_error ignored;
		if (r != -ENOENT)
			map_window_job(w, MAP_JOB_WINDOW_STOP, &ignored);
		if (w->log_fd >= 0)
			close(w->log_fd);
		jitlog_release(&w->log);
		free(w);
		return r;
	}
	*out = w;
	return 0;
}

int map_window_read(struct map_window *w, struct fs_error *err)
{
	if (w->stopped)
		return 0;
	return map_window_job(w, MAP_JOB_WINDOW_READ, err);
}

int map_window_stop(struct map_window *w, struct fs_error *err)
{
	if (w->stopped)
		return 0;
	w->stopped = 1;
	int r = map_window_job(w, MAP_JOB_WINDOW_STOP, err);
	if (r == 0 && w->opts.write_host) {
		cleanup_free char *text = NULL;
		size_t len = 0;
		cleanup_perfmap struct perfmap *m = NULL;
		if (jitlog_perfmap_text(&w->log, &text, &len) < 0)
			return fs_error_set(err, ENOMEM, "perf map of pid %d", (int)w->host_pid);
		if ((r = perfmap_parse(text, len, 0, &m, err)) == 0)
			r = perfmap_write_host(w->opts.host_tmp, w->host_pid, m, err);
	}
	return r;
}

const struct jitlog *map_window_log(const struct map_window *w)
{
	return &w->log;
}

void map_window_set_budget(struct map_window *w, size_t bytes)
{
	jitlog_set_limit(&w->log, bytes);
}

const struct map_result *map_window_result(const struct map_window *w)
{
	return &w->res;
}

void map_window_free(struct map_window *w)
{
	if (!w)
		return;
	struct fs_error ignored;
	map_window_stop(w, &ignored);
	if (w->log_fd >= 0)
		close(w->log_fd);
	jitlog_release(&w->log);
	free(w);
}
