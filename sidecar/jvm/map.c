/* map.c - `flamesidecar map` and map_jvm(): see map.h */
#include "map.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "cleanup.h"
#include "proc.h"
#include "sandbox.h"

const char *map_mode_name(enum map_mode m)
{
	switch (m) {
	case MAP_MODE_AGENT: return "agent";
	case MAP_MODE_JCMD: return "jcmd";
	default: return "auto";
	}
}

/* ---- the sandboxed child ------------------------------------------------- */

struct map_child_arg {
	struct attach_target t;
	enum map_mode mode;
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
	struct open_how how = {
	    .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
	};
	struct stat st;
	if (!path[0])
		return 0;
	cleanup_close int fd = (int)syscall(SYS_openat2, root, path + 1, &how, sizeof(how));
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

static int map_child(struct sandbox_child *c, void *argp, struct fs_error *err)
{
	struct map_child_arg *a = argp;
	uint64_t deadline = sandbox_child_deadline(c);
	cleanup_close int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return fs_error_set(err, errno, "opening / in the container");

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
	char path[64], head[32];
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
	    root, path, a->t.uid, PERFMAP_MAX_CONTAINER_FILE, &size, sandbox_child_fd_dir(c), err);
	if (mfd < 0)
		return mfd;
	int hl = snprintf(head, sizeof(head), "%d %d\n", (int)mode, signalled);
	if ((r = sandbox_child_write(c, head, (size_t)hl, err)) < 0)
		return r;
	cleanup_free char *buf = malloc(256 * 1024);
	if (!buf)
		return fs_error_set(err, ENOMEM, "reading the perf map");
	while (size) {
		ssize_t n = read(mfd, buf, size < 256 * 1024 ? size : 256 * 1024);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fs_error_set(err, errno, "reading /%s", path);
		if (n == 0)
			break; /* truncated meanwhile */
		if ((r = sandbox_child_write(c, buf, (size_t)n, err)) < 0)
			return r;
		size -= (size_t)n;
	}
	return 0;
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
	char path[64];
	cleanup_free char *maps = NULL;
	struct fs_error ignored;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (proc_read_file(path, 64u << 20, &maps, NULL, &ignored) < 0)
		return 0;
	return strstr(maps, "/" MAP_AGENT_NAME "\n") != NULL;
}

int map_find_jvms(const struct registry_entry *e, pid_t **pids, size_t *n, struct fs_error *err)
{
	cleanup_free pid_t *v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return fs_error_set(err, errno, "opening /proc");
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
		if (stat(path, &st) < 0 || (uint64_t)st.st_ino != e->pid_ns)
			continue;
		struct fs_error ignored;
		int r = attach_check_hotspot((pid_t)pid, &ignored);
		if (r != 0 && r != -EOPNOTSUPP)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 8;
			pid_t *nv = reallocarray(v, cap, sizeof(*v));
			if (!nv) {
				closedir(d);
				return fs_error_set(err, ENOMEM, "listing JVMs");
			}
			v = nv;
		}
		v[cnt++] = (pid_t)pid;
	}
	closedir(d);
	for (size_t i = 1; i < cnt; i++) /* few entries: insertion sort */
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			pid_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*pids = steal_pointer(&v);
	*n = cnt;
	return 0;
}

int map_jvm(const struct registry_entry *e, pid_t host_pid, const struct map_opts *o,
	    struct perfmap **out, struct map_result *res, struct fs_error *err)
{
	struct map_result local;
	struct proc_status st;
	uint64_t start_time, ino;
	struct timespec ts0;
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (out)
		*out = NULL;
	res->host_pid = host_pid;

	int r = proc_start_time(host_pid, &start_time, err);
	if (r == 0)
		r = proc_status_read(host_pid, &st, err);
	if (r < 0)
		return fs_error_wrap(err, "pid %d", (int)host_pid);
	if ((r = proc_ns_inode(host_pid, "pid", &ino, err)) < 0)
		return r;
	if (ino != e->pid_ns)
		return fs_error_set(err, ESRCH, "pid %d is not in container %s", (int)host_pid,
				    e->id);
	if ((r = attach_check_hotspot(host_pid, err)) < 0)
		return r;
	res->ns_pid = proc_status_ns_pid(&st);
	res->uid = st.uid[1];

	cleanup_free struct map_child_arg *ca = calloc(1, sizeof(*ca));
	if (!ca)
		return fs_error_set(err, ENOMEM, "map");
	ca->t.host_pid = host_pid;
	ca->t.ns_pid = res->ns_pid;
	ca->t.uid = st.uid[1];
	ca->mode = o->mode;
	ca->continuous = o->continuous;
	if (o->continuous)
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
	struct sandbox_job job = {.fn = map_child,
				  .arg = ca,
				  .on_request = map_on_request,
				  .request_arg = &pa,
				  .max_out = PERFMAP_MAX_CONTAINER_FILE + 64,
				  .timeout_ms =
				      o->timeout_ms ? o->timeout_ms : MAP_DEFAULT_TIMEOUT_MS};
	cleanup_free char *data = NULL;
	size_t len = 0;
	r = sandbox_run(&t, &job, &data, &len, err);
	if (r < 0) {
		if (r == -ETIMEDOUT)
			attach_explain_failure(host_pid, start_time, err);
		return fs_error_wrap(err, "pid %d (ns pid %d)", (int)host_pid, (int)res->ns_pid);
	}

	int mode = 0, sig = 0, hl = 0;
	if (sscanf(data, "%d %d\n%n", &mode, &sig, &hl) != 2 || hl <= 0)
		return fs_error_set(err, EPROTO, "pid %d: malformed answer from the sandbox",
				    (int)host_pid);
	res->mode = mode == MAP_MODE_AGENT ? MAP_MODE_AGENT : MAP_MODE_JCMD;
	res->signalled = sig;
	res->bytes = len - (size_t)hl;
	struct perfmap *m = NULL;
	r = perfmap_parse(data + hl, len - (size_t)hl, 1, &m, err);
	if (r < 0)
		return fs_error_wrap(err, "pid %d", (int)host_pid);
	res->entries = m->count;
	if (o->write_host && (r = perfmap_write_host(o->host_tmp, host_pid, m, err)) < 0) {
		perfmap_free(m);
		return r;
	}
	struct timespec ts1;
	clock_gettime(CLOCK_MONOTONIC, &ts1);
	res->elapsed_us = (uint64_t)(ts1.tv_sec - ts0.tv_sec) * 1000000 +
			  (uint64_t)((ts1.tv_nsec - ts0.tv_nsec) / 1000);
	if (out)
		*out = m;
	else
		perfmap_free(m);
	return 0;
}
