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
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "budget.h"
#include "cleanup.h"
#include "fileio.h"
#include "localfs.h"
#include "proc.h"
#include "timeutil.h"
#include "vmaquery.h"

#define PG_DEVS	      32 /* devices judged per build, and known per process */
#define PG_DEV_READS  4	 /* mount tables read per build period for devices not known */
#define PG_QUERY_VMAS 16 /* file-backed VMAs checked per read; past them, the rest unsafe */

struct pg_dev {
	uint64_t maj, min;
	int local;
};

struct pg_entry {
	pid_t pid;
	uint64_t built_ms;
	uint64_t every_ms; /* rebuilt this often: PROCMEM_GUARD_MS, or 20x what a build took */
	size_t n;
	uint64_t r[PROCMEM_GUARD_RANGES][2];
	/* PROCMAP_QUERY: the process's maps, opened at the build (the
	 * caller's pidfd alive after the open, so it is this process's), and
	 * the verdicts of its devices (those of the build, then those looked
	 * up since, at most PG_DEV_READS per build). */
	int has_fd, maps_fd;
	size_t ndev, next_dev;
	unsigned dev_reads;
	struct pg_dev devs[PG_DEVS];
};

static struct pg_entry pg_table[PROCMEM_GUARD_PIDS];
static unsigned long pg_refused, pg_query_refused, pg_query_errors;
static int pg_query_on = 1; /* procmem_guard_set_query */
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

/* The type of the first mount on device maj:min in mountinfo text: 1, 0.
 * Device numbers are 32-bit in mountinfo; a larger one is in no table. */
static int pg_dev_type(const char *buf, size_t len, uint64_t maj, uint64_t min, char *type,
		       size_t typelen)
{
	if (maj >= UINT32_MAX || min >= UINT32_MAX)
		return 0;
	return localfs_mountinfo_type_dev(buf, len, (unsigned)maj, (unsigned)min, type, typelen);
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

/* procmem_guard_parse, handing the devices it judged to devs (PG_DEVS). */
static size_t pg_parse(const char *maps, size_t len, const char *a, size_t alen, const char *b,
		       size_t blen, uint64_t (*r)[2], size_t max, struct pg_dev *devs,
		       size_t *ndevp)
{
	size_t ndev = 0, n = 0;
	*ndevp = 0;
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
			if (ndev < PG_DEVS) {
				devs[ndev].maj = maj, devs[ndev].min = min;
				devs[ndev++].local = local;
				*ndevp = ndev;
			}
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

size_t procmem_guard_parse(const char *maps, size_t len, const char *a, size_t alen, const char *b,
			   size_t blen, uint64_t (*r)[2], size_t max)
{
	struct pg_dev devs[PG_DEVS];
	size_t ndev;
	return pg_parse(maps, len, a, alen, b, blen, r, max, devs, &ndev);
}

/* At most max bytes of a /proc file (malloc'd, NUL after): its length or
 * -errno. More than max is not an error: the caller sees the cut. */
static ssize_t pg_read(const char *path, size_t max, char **out)
{
	size_t len = 0;
	int r = proc_read_file_flags(path, max, FILEIO_READ_CUT, out, &len, NULL);
	return r < 0 ? r : (ssize_t)len;
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

static void pg_close(struct pg_entry *e)
{
	if (e->has_fd)
		close(e->maps_fd);
	e->has_fd = 0;
}

/* (Re)open pid's maps for PROCMAP_QUERY: kept only when pidfd's process
 * is alive after the open, so that the pid named it (never a reused pid). */
static void pg_open(struct pg_entry *e, pid_t pid, int pidfd)
{
	char path[64];
	pg_close(e);
	if (!pg_query_on || !vmaquery_supported())
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		close(fd);
		return;
	}
	e->maps_fd = fd;
	e->has_fd = 1;
}

/* Build pid's ranges into e. */
static void pg_build(struct pg_entry *e, pid_t pid, int pidfd)
{
	char path[64];
	cleanup_free char *maps = NULL, *mi = NULL, *self = NULL;
	if (e->pid != pid)
		e->ndev = e->next_dev = 0;
	e->pid = pid;
	e->built_ms = timeutil_now_ms();
	e->every_ms = PROCMEM_GUARD_MS;
	e->n = 0;
	e->dev_reads = 0;
	pg_shm_probe();
	pg_open(e, pid, pidfd);
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
	struct pg_dev devs[PG_DEVS];
	size_t ndev = 0;
	e->n = pg_parse(maps, (size_t)ml, al >= 0 ? mi : NULL, al >= 0 ? (size_t)al : 0,
			bl >= 0 ? self : NULL, bl >= 0 ? (size_t)bl : 0, e->r, PROCMEM_GUARD_RANGES,
			devs, &ndev);
	/* The build's verdicts replace what was known: mounts change. */
	memcpy(e->devs, devs, ndev * sizeof(devs[0]));
	e->ndev = ndev;
	e->next_dev = ndev % PG_DEVS;
	/* A process with a huge maps file does not get to spend our CPU on
	 * it four times a second: at most 5 % of our time goes to it. */
	uint64_t took = timeutil_now_ms() - e->built_ms;
	e->every_ms = took * 20 > PROCMEM_GUARD_MS ? took * 20 : PROCMEM_GUARD_MS;
}

static struct pg_entry *pg_find(pid_t pid, int pidfd)
{
	uint64_t now = timeutil_now_ms();
	struct pg_entry *old = &pg_table[0];
	for (unsigned i = 0; i < PROCMEM_GUARD_PIDS; i++) {
		struct pg_entry *e = &pg_table[i];
		if (e->pid == pid) {
			if (now - e->built_ms >= e->every_ms)
				pg_build(e, pid, pidfd);
			return e;
		}
		if (e->pid == 0 || (old->pid != 0 && e->built_ms < old->built_ms))
			old = e; /* a free entry, else the oldest */
	}
	pg_build(old, pid, pidfd);
	return old;
}

/* Whether device maj:min of e's process is local: known, else looked up
 * in the mount tables (at most PG_DEV_READS times per build period: a
 * process that maps files of many devices does not get to make us read
 * its mount table on every read; past that, a device not known is unsafe). */
static int pg_query_dev_local(struct pg_entry *e, uint64_t maj, uint64_t min)
{
	char path[64];
	for (size_t i = 0; i < e->ndev; i++)
		if (e->devs[i].maj == maj && e->devs[i].min == min)
			return e->devs[i].local;
	if (e->dev_reads >= PG_DEV_READS)
		return 0;
	e->dev_reads++;
	cleanup_free char *mi = NULL, *self = NULL;
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)e->pid);
	ssize_t al = pg_read(path, LOCALFS_MOUNTINFO_MAX, &mi);
	ssize_t bl = pg_read("/proc/self/mountinfo", LOCALFS_MOUNTINFO_MAX, &self);
	int local = pg_dev_local(maj, min, al >= 0 ? mi : NULL, al >= 0 ? (size_t)al : 0,
				 bl >= 0 ? self : NULL, bl >= 0 ? (size_t)bl : 0);
	struct pg_dev *d = &e->devs[e->next_dev];
	d->maj = maj, d->min = min, d->local = local;
	e->next_dev = (e->next_dev + 1) % PG_DEVS;
	if (e->ndev < PG_DEVS)
		e->ndev++;
	return local;
}

/* How many bytes at addr (up to len) lie before the first byte of a
 * file-backed VMA that is not local, asked of the kernel now. len when
 * the kernel cannot answer (no PROCMAP_QUERY, the fd could not be
 * opened): the table alone decides then. */
static size_t pg_query(struct pg_entry *e, pid_t pid, int pidfd, uint64_t addr, size_t len)
{
	uint64_t a = addr, end = addr + len < addr ? UINT64_MAX : addr + len;
	int reopened = 0;
	for (unsigned step = 0; step < PG_QUERY_VMAS;) {
		struct vmaquery_vma v;
		if (!e->has_fd)
			return len;
		int r = vmaquery_file_at_or_above(e->maps_fd, a, &v);
		if (r == -ENOTTY || r == -EINVAL) {
			pg_query_on = 0; /* an older kernel: the table alone */
			pg_close(e);
			return len;
		}
		if (r == -ESRCH && !reopened) {
			/* its address space is gone (exec, exit): once more
			 * on the process that now has the pid, if pidfd's */
			reopened = 1;
			pg_open(e, pid, pidfd);
			continue;
		}
		if (r < 0) {
			/* could not tell (a VMA being changed, a lock not
			 * taken): what is not checked is not read */
			pg_query_errors++;
			return (size_t)(a - addr);
		}
		if (r == 0 || v.start >= end)
			return len;
		step++;
		if (!pg_query_dev_local(e, v.dev_major, v.dev_minor))
			return (size_t)((v.start > a ? v.start : a) - addr);
		if (v.end >= end || v.end <= a)
			return len;
		a = v.end;
	}
	return (size_t)(a - addr); /* too many VMAs in the range: the rest unsafe */
}

size_t procmem_guard_safe(pid_t pid, int pidfd, uint64_t addr, size_t len)
{
	if (len == 0 || pid <= 0)
		return len;
	pthread_mutex_lock(&pg_lock);
	struct pg_entry *e = pg_find(pid, pidfd);
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
	if (safe > 0 && pg_query_on) {
		size_t q = pg_query(e, pid, pidfd, addr, safe);
		if (q < safe) {
			safe = q;
			pg_query_refused++;
		}
	}
	if (safe < len)
		pg_refused++;
	pthread_mutex_unlock(&pg_lock);
	return safe;
}

unsigned long procmem_guard_query_errors(void)
{
	pthread_mutex_lock(&pg_lock);
	unsigned long n = pg_query_errors;
	pthread_mutex_unlock(&pg_lock);
	return n;
}

unsigned long procmem_guard_query_refused(void)
{
	pthread_mutex_lock(&pg_lock);
	unsigned long n = pg_query_refused;
	pthread_mutex_unlock(&pg_lock);
	return n;
}

int procmem_guard_query_active(void)
{
	pthread_mutex_lock(&pg_lock);
	int on = pg_query_on && vmaquery_supported();
	pthread_mutex_unlock(&pg_lock);
	return on;
}

void procmem_guard_set_query(int on)
{
	pthread_mutex_lock(&pg_lock);
	pg_query_on = on;
	for (unsigned i = 0; i < PROCMEM_GUARD_PIDS; i++)
		if (!on)
			pg_close(&pg_table[i]);
		else
			pg_table[i].pid = 0; /* reopened at the next read */
	pthread_mutex_unlock(&pg_lock);
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
		if (pg_table[i].pid == pid) {
			pg_table[i].pid = 0;
			pg_close(&pg_table[i]);
		}
	pthread_mutex_unlock(&pg_lock);
}
