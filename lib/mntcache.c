/* mntcache.c - mount tables read once per change: see mntcache.h */
#include "mntcache.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "localfs.h"
#include "proc.h"
#include "timeutil.h"

struct mntcache_slot {
	int fd; /* /proc/<pid>/mountinfo, open; -1 = free slot */
	pid_t pid;
	uint64_t start_time, mnt_ns;
	char *buf;
	size_t len;
	uint64_t read_us, used;
};

static pthread_mutex_t mntcache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mntcache_slot mntcache_slots[MNTCACHE_SLOTS] = {
    [0 ... MNTCACHE_SLOTS - 1] = {.fd = -1}};
static uint64_t mntcache_tick;
static unsigned long mntcache_reads, mntcache_hits;

static void mntcache_drop(struct mntcache_slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	*s = (struct mntcache_slot){.fd = -1};
}

/* Who pid is now: its start time (0 for ourselves) and mount namespace. */
static int mntcache_identity(pid_t pid, uint64_t *start_time, uint64_t *mnt_ns)
{
	char path[64];
	struct stat st;
	*start_time = 0;
	if (pid > 0 && proc_start_time(pid, start_time, NULL) < 0)
		return -ESRCH;
	snprintf(path, sizeof(path), pid > 0 ? "/proc/%d/ns/mnt" : "/proc/self/ns/mnt", (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	*mnt_ns = (uint64_t)st.st_ino;
	return 0;
}

/* (Re)read s's table from the start of its fd. */
static int mntcache_read(struct mntcache_slot *s, struct fs_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	if (lseek(s->fd, 0, SEEK_SET) < 0)
		return fs_error_set(err, errno, "rewinding a mount table");
	int r = fileio_read_fd(s->fd, LOCALFS_MOUNTINFO_MAX, &buf, &len, err);
	if (r < 0)
		return r;
	free(s->buf);
	s->buf = buf;
	s->len = len;
	s->read_us = timeutil_now_us();
	mntcache_reads++;
	return 0;
}

/* A slot holding pid's table as it is now (NULL: err set). */
static struct mntcache_slot *mntcache_get(pid_t pid, unsigned flags, struct fs_error *err)
{
	uint64_t st, ns;
	if (mntcache_identity(pid, &st, &ns) < 0) {
		fs_error_set(err, ESRCH, "pid %d: gone, or its mount namespace unreadable",
			     (int)pid);
		return NULL;
	}
	struct mntcache_slot *s = NULL, *victim = &mntcache_slots[0];
	for (size_t i = 0; i < MNTCACHE_SLOTS; i++) {
		struct mntcache_slot *c = &mntcache_slots[i];
		if (c->fd >= 0 && c->pid == pid && c->start_time == st && c->mnt_ns == ns) {
			s = c;
			break;
		}
		if (c->fd < 0 || (victim->fd >= 0 && c->used < victim->used))
			victim = c;
	}
	if (s) {
		/* The poll first, then the read: a change during the read
		 * leaves the mark for the next call. */
		struct pollfd p = {.fd = s->fd, .events = POLLPRI};
		int changed = poll(&p, 1, 0) != 0 && (p.revents & (POLLPRI | POLLERR | POLLNVAL));
		if (changed || (flags & MNTCACHE_FRESH) ||
		    timeutil_now_us() - s->read_us > MNTCACHE_MAX_AGE_MS * 1000ull) {
			if (mntcache_read(s, err) < 0) {
				mntcache_drop(s);
				return NULL;
			}
		} else {
			mntcache_hits++;
		}
		s->used = ++mntcache_tick;
		return s;
	}
	mntcache_drop(victim);
	char path[64];
	snprintf(path, sizeof(path), pid > 0 ? "/proc/%d/mountinfo" : "/proc/self/mountinfo",
		 (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fs_error_set(err, errno, "opening %s", path);
		return NULL;
	}
	*victim = (struct mntcache_slot){
	    .fd = fd, .pid = pid, .start_time = st, .mnt_ns = ns, .used = ++mntcache_tick};
	uint64_t st2, ns2;
	/* opened by pid: the table is the recorded process's, in the recorded
	 * namespace, only if both still hold after the open */
	if (mntcache_read(victim, err) < 0 || mntcache_identity(pid, &st2, &ns2) < 0 || st2 != st ||
	    ns2 != ns) {
		if (!err->code)
			fs_error_set(err, ESRCH, "pid %d changed while its mount table was read",
				     (int)pid);
		mntcache_drop(victim);
		return NULL;
	}
	return victim;
}

int mntcache_with(pid_t pid, unsigned flags, int (*fn)(const char *buf, size_t len, void *arg),
		  void *arg, struct fs_error *err)
{
	struct fs_error local = {0};
	pthread_mutex_lock(&mntcache_lock);
	struct mntcache_slot *s = mntcache_get(pid, flags, &local);
	int r = s ? fn(s->buf, s->len, arg) : -(local.code ? local.code : ESRCH);
	pthread_mutex_unlock(&mntcache_lock);
	if (!s && err)
		*err = local;
	return r;
}

void mntcache_counts(unsigned long *reads, unsigned long *hits)
{
	pthread_mutex_lock(&mntcache_lock);
	*reads = mntcache_reads;
	*hits = mntcache_hits;
	pthread_mutex_unlock(&mntcache_lock);
}

void mntcache_flush(void)
{
	pthread_mutex_lock(&mntcache_lock);
	for (size_t i = 0; i < MNTCACHE_SLOTS; i++)
		mntcache_drop(&mntcache_slots[i]);
	pthread_mutex_unlock(&mntcache_lock);
}
