/* tmpreg.c - see tmpreg.h */
#include "tmpreg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

static struct tmpreg *tr_table;

void tmpreg_publish(struct tmpreg *r)
{
	tr_table = r;
}

int tmpreg_add(int dir_fd, const char *name, int fd)
{
	struct tmpreg *r = tr_table;
	struct stat dsb, sb;
	char link[64];
	if (!r)
		return -1;
	if (strlen(name) > NAME_MAX || fstat(dir_fd, &dsb) < 0 || fstat(fd, &sb) < 0)
		return -1;
	for (int i = 0; i < TMPREG_SLOTS; i++) {
		struct tmpreg_slot *s = &r->slot[i];
		uint32_t free_state = TMPREG_FREE;
		if (!__atomic_compare_exchange_n(&s->state, &free_state, TMPREG_CLAIMED, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		/* the path the kernel knows for the directory: absolute, no symlink */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
		ssize_t n = readlink(link, s->dir, sizeof(s->dir) - 1);
		if (n <= 0 || s->dir[0] != '/' || (size_t)n >= sizeof(s->dir) - 1) {
			__atomic_store_n(&s->state, TMPREG_FREE, __ATOMIC_RELEASE);
			__atomic_fetch_add(&r->lost, 1, __ATOMIC_RELAXED);
			return -1;
		}
		s->dir[n] = '\0';
		s->dir_dev = dsb.st_dev;
		s->dir_ino = dsb.st_ino;
		s->dev = sb.st_dev;
		s->ino = sb.st_ino;
		snprintf(s->name, sizeof(s->name), "%s", name);
		__atomic_store_n(&s->state, TMPREG_TEMP, __ATOMIC_RELEASE);
		return i;
	}
	__atomic_fetch_add(&r->lost, 1, __ATOMIC_RELAXED);
	return -1;
}

void tmpreg_commit(int slot, const char *final, int keep)
{
	struct tmpreg *r = tr_table;
	if (!r || slot < 0 || slot >= TMPREG_SLOTS)
		return;
	struct tmpreg_slot *s = &r->slot[slot];
	if (!keep || strlen(final) > NAME_MAX) {
		__atomic_store_n(&s->state, TMPREG_FREE, __ATOMIC_RELEASE);
		return;
	}
	/* the name changes under a complete entry: claimed while it does */
	__atomic_store_n(&s->state, TMPREG_CLAIMED, __ATOMIC_RELEASE);
	snprintf(s->name, sizeof(s->name), "%s", final);
	__atomic_store_n(&s->state, TMPREG_OUTPUT, __ATOMIC_RELEASE);
}

void tmpreg_drop(int slot)
{
	struct tmpreg *r = tr_table;
	if (r && slot >= 0 && slot < TMPREG_SLOTS)
		__atomic_store_n(&r->slot[slot].state, TMPREG_FREE, __ATOMIC_RELEASE);
}

/* Remove s's file if it is still the one the run created: 1 removed, 0
 * not there, -1 left alone (something else is there now). */
static int tr_remove(const struct tmpreg_slot *s)
{
	struct stat sb;
	char name[NAME_MAX + 1];
	snprintf(name, sizeof(name), "%s", s->name);
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -1;
	cleanup_close int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(dfd, &sb) < 0 || sb.st_dev != s->dir_dev || sb.st_ino != s->dir_ino)
		return -1;
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISREG(sb.st_mode) || sb.st_dev != s->dev || sb.st_ino != s->ino)
		return -1;
	return unlinkat(dfd, name, 0) == 0 ? 1 : -1;
}

int tmpreg_clean(const struct tmpreg *r, int *kept)
{
	int removed = 0, left = (int)__atomic_load_n(&r->lost, __ATOMIC_RELAXED);
	for (int i = 0; i < TMPREG_SLOTS; i++) {
		uint32_t st = __atomic_load_n(&r->slot[i].state, __ATOMIC_ACQUIRE);
		if (st != TMPREG_TEMP && st != TMPREG_OUTPUT)
			continue;
		int x = tr_remove(&r->slot[i]);
		removed += x > 0;
		left += x < 0;
	}
	if (kept)
		*kept = left;
	return removed;
}
