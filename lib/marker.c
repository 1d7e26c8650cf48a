/* marker.c - see marker.h */
#include "marker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "json.h"
#include "proc.h"

int marker_write(const char *path, const struct marker *m)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		return -e;
	}
	fprintf(f, "{\"id\":");
	json_write_string(f, m->id);
	fprintf(f,
		",\"pid\":%d,\"start_time\":%" PRIu64 ",\"started\":%" PRId64
		",\"delay\":%u,\"duration\":%u,\"frequency\":%u,\"output\":",
		(int)m->pid, m->start_time, m->started, m->delay, m->duration, m->frequency);
	json_write_string(f, m->output);
	fputs("}\n", f);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return -EIO;
	return 0;
}

static unsigned marker_uint(yajl_val v, const char *key)
{
	long long x = 0;
	if (json_get_int(v, key, &x) < 0 || x < 0 || x > UINT32_MAX)
		return 0;
	return (unsigned)x;
}

int marker_json_process(yajl_val v, const char **id, pid_t *pid, uint64_t *start_time)
{
	const char *s = json_get_string(v, "id");
	long long p = 0, st = 0;
	if (!s || registry_validate_id(s, NULL) < 0 || json_get_int(v, "pid", &p) < 0 ||
	    json_get_int(v, "start_time", &st) < 0 || p <= 0 || p > INT32_MAX || st < 0)
		return -EINVAL;
	*id = s;
	*pid = (pid_t)p;
	*start_time = (uint64_t)st;
	return 0;
}

int marker_read_at(int dir_fd, const char *name, struct marker *m)
{
	memset(m, 0, sizeof(*m));
	cleanup_json yajl_val v = NULL;
	int r = json_read_at(dir_fd, name, MARKER_FILE_MAX, 4, &v, NULL);
	if (r < 0)
		return r;
	const char *id, *out = json_get_string(v, "output");
	long long started = 0;
	if (marker_json_process(v, &id, &m->pid, &m->start_time) < 0)
		return -EINVAL;
	json_get_int(v, "started", &started);
	snprintf(m->id, sizeof(m->id), "%s", id);
	snprintf(m->output, sizeof(m->output), "%s", out ? out : "");
	m->started = started;
	m->delay = marker_uint(v, "delay");
	m->duration = marker_uint(v, "duration");
	m->frequency = marker_uint(v, "frequency");
	return 0;
}

int marker_alive(const struct marker *m)
{
	return proc_alive(m->pid, m->start_time);
}
