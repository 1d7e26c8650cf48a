/* deadmark.c - see deadmark.h */
#include "deadmark.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "logfile.h"
#include "marker.h"

void deadmark_slot(const char *id, char *name, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 16777619u;
	snprintf(name, len, "d-%02x", (unsigned)(h % DEADMARK_SLOTS));
}

void deadmark_prepare(struct deadmark *d, int log_fd, const char *run_dir, int with_marker,
		      const char *stage, const char *id, pid_t pid, uint64_t start_time,
		      unsigned timeout_ms)
{
	char msg[256], eid[REGISTRY_ID_MAX * 4 + 1], estage[64];
	memset(d, 0, sizeof(*d));
	d->log_fd = log_fd;
	d->dir_fd = -1;
	d->phase = "start";
	snprintf(msg, sizeof(msg), "deadline of %u ms reached after phase ", timeout_ms);
	size_t n = log_format(d->line, sizeof(d->line), FS_LOG_ERROR, "flamehook", stage, id, msg);
	if (n && d->line[n - 1] == '\n')
		n--;
	d->line_len = n;
	d->tail_len = (size_t)snprintf(
	    d->tail, sizeof(d->tail), "; gave up%s\n",
	    with_marker ? ", the container runs on: opted in, not registered or bundle not mounted"
			: " (container not affected)");
	if (!with_marker)
		return;
	/* run_dir, not its unregistered/: that is made only when a deadline
	 * needs it (a hook that finishes in time changes nothing there). */
	d->dir_fd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	deadmark_slot(id, d->name, sizeof(d->name));
	snprintf(d->tmp, sizeof(d->tmp), ".t-%d", (int)getpid());
	logfile_escape(id, eid, sizeof(eid), 1);
	logfile_escape(stage, estage, sizeof(estage), 1);
	int c =
	    snprintf(d->content, sizeof(d->content),
		     "{\"id\":\"%s\",\"pid\":%d,\"start_time\":%llu,\"stage\":\"%s\",\"time\":%lld,"
		     "\"phase\":\"",
		     eid, (int)pid, (unsigned long long)start_time, estage, (long long)time(NULL));
	d->content_len = c > 0 && (size_t)c < sizeof(d->content) ? (size_t)c : 0;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" (24 bytes, as log_format starts a line)
 * with nothing but arithmetic: no stdio in a signal handler. */
static void deadmark_stamp(char *out)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	long long secs = now.tv_sec, days = secs / 86400, rem = secs % 86400;
	long long z = days + 719468, era = z / 146097, doe = z - era * 146097;
	long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	long long dd = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
	long long y = yoe + era * 400 + (m <= 2), ms = now.tv_nsec / 1000000;
	long long f[] = {y, m, dd, rem / 3600, rem / 60 % 60, rem % 60, ms};
	static const int width[] = {4, 2, 2, 2, 2, 2, 3};
	char *p = out;
	for (int k = 0; k < 7; k++) {
		for (int w = width[k] - 1; w >= 0; w--) {
			p[w] = (char)('0' + f[k] % 10);
			f[k] /= 10;
		}
		p += width[k];
		*p++ = k == 2 ? 'T' : k < 2 ? '-' : k < 5 ? ':' : k == 5 ? '.' : 'Z';
	}
}

static void deadmark_put(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

void deadmark_fire(const struct deadmark *d)
{
	const char *phase = d->phase ? d->phase : "?";
	if (d->log_fd >= 0 && d->line_len >= 24) {
		/* One write: lines of concurrent hooks must not interleave. */
		char buf[sizeof(d->line) + sizeof(d->tail) + 64];
		size_t pl = strlen(phase), n = 0;
		if (pl > 63)
			pl = 63;
		memcpy(buf, d->line, d->line_len);
		deadmark_stamp(buf);
		n = d->line_len;
		memcpy(buf + n, phase, pl);
		n += pl;
		memcpy(buf + n, d->tail, d->tail_len);
		n += d->tail_len;
		deadmark_put(d->log_fd, buf, n);
	}
	if (d->dir_fd >= 0 && d->content_len) {
		/* Whole or not at all: two ids of one slot may fire at once. */
		if (mkdirat(d->dir_fd, DEADMARK_DIR, 0700) < 0 && errno != EEXIST)
			return;
		int dfd = openat(d->dir_fd, DEADMARK_DIR,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return;
		int fd = openat(dfd, d->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd >= 0) {
			deadmark_put(fd, d->content, d->content_len);
			deadmark_put(fd, phase, strlen(phase));
			deadmark_put(fd, "\"}\n", 3);
			close(fd);
			if (renameat(dfd, d->tmp, dfd, d->name) < 0)
				unlinkat(dfd, d->tmp, 0);
		}
		close(dfd);
	}
}

static int deadmark_read_at(int dfd, const char *name, struct deadmark_info *m)
{
	memset(m, 0, sizeof(*m));
	cleanup_json yajl_val v = NULL;
	int r = json_read_at(dfd, name, DEADMARK_MAX, 2, &v, NULL);
	if (r < 0)
		return r;
	const char *id, *st = json_get_string(v, "stage"), *ph = json_get_string(v, "phase");
	long long t = 0;
	if (marker_json_process(v, &id, &m->pid, &m->start_time) < 0)
		return -EINVAL;
	json_get_int(v, "time", &t);
	snprintf(m->id, sizeof(m->id), "%s", id);
	snprintf(m->stage, sizeof(m->stage), "%s", st ? st : "");
	snprintf(m->phase, sizeof(m->phase), "%s", ph ? ph : "");
	m->time = t;
	return 0;
}

static int deadmark_cmp(const void *a, const void *b)
{
	const struct deadmark_info *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

int deadmark_list(const char *run_dir, struct deadmark_info **out, size_t *n)
{
	char dir[PATH_MAX];
	*out = NULL;
	*n = 0;
	snprintf(dir, sizeof(dir), "%s/" DEADMARK_DIR, run_dir);
	cleanup_closedir DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct deadmark_info *arr = calloc(DEADMARK_SLOTS, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	struct dirent *de;
	while ((de = readdir(d)) && *n < DEADMARK_SLOTS)
		if (!strncmp(de->d_name, "d-", 2) &&
		    deadmark_read_at(dirfd(d), de->d_name, &arr[*n]) == 0)
			(*n)++;
	if (*n)
		qsort(arr, *n, sizeof(*arr), deadmark_cmp);
	*out = arr;
	return 0;
}

void deadmark_remove(const char *run_dir, const char *id)
{
	char dir[PATH_MAX], name[16];
	struct deadmark_info m;
	snprintf(dir, sizeof(dir), "%s/" DEADMARK_DIR, run_dir);
	deadmark_slot(id, name, sizeof(name));
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && deadmark_read_at(dfd, name, &m) == 0 && !strcmp(m.id, id))
		unlinkat(dfd, name, 0);
}

size_t deadmark_sweep_junk(const char *run_dir)
{
	char dir[PATH_MAX];
	size_t removed = 0;
	snprintf(dir, sizeof(dir), "%s/" DEADMARK_DIR, run_dir);
	cleanup_closedir DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct deadmark_info m;
		struct stat sb;
		int junk = 0;
		if (!strncmp(de->d_name, "d-", 2)) {
			int r = deadmark_read_at(dirfd(d), de->d_name, &m);
			junk = r < 0 && r != -ENOENT;
		} else if (!strncmp(de->d_name, ".t-", 3))
			/* a hook's half-written marker: left only if it died
			 * between write and rename; a minute is plenty */
			junk = fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
			       time(NULL) - sb.st_mtime > 60;
		if (junk && unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
	}
	return removed;
}
