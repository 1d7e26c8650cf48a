/* procmem_guard.c - see procmem_guard.h */
#include "procmem_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "budget.h"
#include "cleanup.h"
#include "localfs.h"
#include "proc.h"
#include "timeutil.h"

#define PG_DEVS 32 /* devices judged per build */

struct pg_entry {
	pid_t pid;
	uint64_t built_ms;
	uint64_t every_ms; /* rebuilt this often: PROCMEM_GUARD_MS, or 20x what a build took */
	size_t n;
	uint64_t r[PROCMEM_GUARD_RANGES][2];
};

static struct pg_entry pg_table[PROCMEM_GUARD_PIDS];
static unsigned long pg_refused;
/* The kernel's internal tmpfs (memfd, shared anonymous memory, SysV shm):
 * in no mount table, on an anonymous device, read by the kernel alone. */
static int pg_shm_known;
static uint64_t pg_shm_maj, pg_shm_min;
static pthread_mutex_t pg_lock = PTHREAD_MUTEX_INITIALIZER;

/* A number in base 10 or 16 at *p (before end); advances *p. 0 digits: -1. */
static int pg_num(const char **p, const char *end, unsigned base, uint64_t *v)
{
	int digits = 0;
	*v = 0;
	for (; *p < end && digits < 20; (*p)++, digits++) {
		unsigned c = (unsigned char)**p, d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		*v = *v * base + d;
	}
	return digits ? 0 : -1;
}

static int pg_skip(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

/* The type of the first mount on device maj:min in mountinfo text: 1, 0. */
static int pg_dev_type(const char *buf, size_t len, uint64_t maj, uint64_t min, char *type,
		       size_t typelen)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;
		uint64_t id, parent, a, b;
		/* "36 35 98:0 /root /mnt opts [optional...] - fstype source opts" */
		if (pg_num(&q, le, 10, &id) == 0 && pg_skip(&q, le, ' ') == 0 &&
		    pg_num(&q, le, 10, &parent) == 0 && pg_skip(&q, le, ' ') == 0 &&
		    pg_num(&q, le, 10, &a) == 0 && pg_skip(&q, le, ':') == 0 &&
		    pg_num(&q, le, 10, &b) == 0 && a == maj && b == min)
			return localfs_line_fstype(q, le, type, typelen);
		p = le + 1;
	}
	return 0;
}

static int pg_dev_local(uint64_t maj, uint64_t min, const char *a, size_t alen, const char *b,
			size_t blen)
{
	char type[64];
	if (pg_shm_known && maj == pg_shm_maj && min == pg_shm_min)
		return 1;
	if ((a && pg_dev_type(a, alen, maj, min, type, sizeof(type))) ||
	    (b && pg_dev_type(b, blen, maj, min, type, sizeof(type))))
		return localfs_type_local(type);
	/* In neither table: a block device of the host's is read by the
	 * kernel (fuseblk would be in a table); an anonymous one is unknown. */
	return maj != 0;
}

size_t procmem_guard_parse(const char *maps, size_t len, const char *a, size_t alen, const char *b,
			   size_t blen, uint64_t (*r)[2], size_t max)
{
	struct {
		uint64_t maj, min;
		int local;
	} devs[PG_DEVS];
	size_t ndev = 0, n = 0;
	uint64_t last = 0;
	const char *p = maps, *end = maps + len;
	if (max == 0)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			/* cut at the budget: what follows is not known */
			r[n][0] = last;
			r[n][1] = UINT64_MAX;
			return n + 1;
		}
		const char *q = p;
		uint64_t s, e, off, maj, min, ino;
		p = nl + 1;
		if (pg_num(&q, nl, 16, &s) < 0 || pg_skip(&q, nl, '-') < 0 ||
		    pg_num(&q, nl, 16, &e) < 0 || pg_skip(&q, nl, ' ') < 0 || e <= s)
			continue;
		last = e;
		while (q < nl && *q != ' ')
			q++; /* perms */
		if (pg_skip(&q, nl, ' ') < 0 || pg_num(&q, nl, 16, &off) < 0 ||
		    pg_skip(&q, nl, ' ') < 0 || pg_num(&q, nl, 16, &maj) < 0 ||
		    pg_skip(&q, nl, ':') < 0 || pg_num(&q, nl, 16, &min) < 0 ||
		    pg_skip(&q, nl, ' ') < 0 || pg_num(&q, nl, 10, &ino) < 0 || ino == 0)
			continue; /* anonymous memory */
		int local = -1;
		for (size_t i = 0; i < ndev && local < 0; i++)
			if (devs[i].maj == maj && devs[i].min == min)
				local = devs[i].local;
		if (local < 0) {
			local = pg_dev_local(maj, min, a, alen, b, blen);
			if (ndev < PG_DEVS)
				devs[ndev].maj = maj, devs[ndev].min = min,
				devs[ndev++].local = local;
		}
		if (local)
			continue;
		if (n && r[n - 1][1] == s) {
			r[n - 1][1] = e;
			continue;
		}
		if (n + 1 == max) {
			r[n][0] = s; /* no room: everything above is unsafe */
			r[n][1] = UINT64_MAX;
			return n + 1;
		}
		r[n][0] = s;
		r[n][1] = e;
		n++;
	}
	return n;
}

/* At most max bytes of a /proc file (malloc'd, NUL after): its length or
 * -errno. More than max is not an error: the caller sees the cut. */
static ssize_t pg_read(const char *path, size_t max, char **out)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	size_t cap = 64 * 1024, got = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (got == cap) {
			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		ssize_t n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	return (ssize_t)got;
}

/* The device of the kernel's internal tmpfs, from a memfd of our own. */
static void pg_shm_probe(void)
{
	if (pg_shm_known)
		return;
	struct stat sb;
	int fd = memfd_create("flamesidecar-probe", MFD_CLOEXEC);
	if (fd >= 0 && fstat(fd, &sb) == 0) {
		pg_shm_maj = major(sb.st_dev);
		pg_shm_min = minor(sb.st_dev);
		pg_shm_known = 1;
	}
	if (fd >= 0)
		close(fd);
}

/* Build pid's ranges into e. */
static void pg_build(struct pg_entry *e, pid_t pid)
{
	char path[64];
	cleanup_free char *maps = NULL, *mi = NULL, *self = NULL;
	e->pid = pid;
	e->built_ms = timeutil_now_ms();
	e->every_ms = PROCMEM_GUARD_MS;
	e->n = 0;
	pg_shm_probe();
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ssize_t ml = pg_read(path, BUDGET_MAPS_FILE_BYTES, &maps);
	if (ml < 0) {
		/* Cannot tell (gone, or not ours to read): the read itself
		 * will fail the same way; nothing is guarded. */
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	ssize_t al = pg_read(path, LOCALFS_MOUNTINFO_MAX, &mi);
	ssize_t bl = pg_read("/proc/self/mountinfo", LOCALFS_MOUNTINFO_MAX, &self);
	e->n = procmem_guard_parse(maps, (size_t)ml, al >= 0 ? mi : NULL, al >= 0 ? (size_t)al : 0,
				   bl >= 0 ? self : NULL, bl >= 0 ? (size_t)bl : 0, e->r,
				   PROCMEM_GUARD_RANGES);
	/* A process with a huge maps file does not get to spend our CPU on
	 * it four times a second: at most 5 % of our time goes to it. */
	uint64_t took = timeutil_now_ms() - e->built_ms;
	e->every_ms = took * 20 > PROCMEM_GUARD_MS ? took * 20 : PROCMEM_GUARD_MS;
}

static struct pg_entry *pg_find(pid_t pid)
{
	uint64_t now = timeutil_now_ms();
	struct pg_entry *old = &pg_table[0];
	for (unsigned i = 0; i < PROCMEM_GUARD_PIDS; i++) {
		struct pg_entry *e = &pg_table[i];
		if (e->pid == pid) {
			if (now - e->built_ms >= e->every_ms)
				pg_build(e, pid);
			return e;
		}
		if (e->pid == 0 || (old->pid != 0 && e->built_ms < old->built_ms))
			old = e; /* a free entry, else the oldest */
	}
	pg_build(old, pid);
	return old;
}

size_t procmem_guard_safe(pid_t pid, uint64_t addr, size_t len)
{
	if (len == 0 || pid <= 0)
		return len;
	pthread_mutex_lock(&pg_lock);
	const struct pg_entry *e = pg_find(pid);
	/* the first range that ends above addr */
	size_t lo = 0, hi = e->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->r[mid][1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t safe = len;
	if (lo < e->n) {
		uint64_t s = e->r[lo][0];
		if (s <= addr)
			safe = 0;
		else if (s - addr < len)
			safe = (size_t)(s - addr);
	}
	if (safe < len)
		pg_refused++;
	pthread_mutex_unlock(&pg_lock);
	return safe;
}

unsigned long procmem_guard_refused(void)
{
	pthread_mutex_lock(&pg_lock);
	unsigned long n = pg_refused;
	pthread_mutex_unlock(&pg_lock);
	return n;
}

void procmem_guard_forget(pid_t pid)
{
	pthread_mutex_lock(&pg_lock);
	for (unsigned i = 0; i < PROCMEM_GUARD_PIDS; i++)
		if (pg_table[i].pid == pid)
			pg_table[i].pid = 0;
	pthread_mutex_unlock(&pg_lock);
}
