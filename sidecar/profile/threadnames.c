/* threadnames.c - see threadnames.h. tid -> newest index by open
 * addressing (never deleted: an exited or renamed thread's entry is
 * pointed at its new index), indexes in one array. */
#include "threadnames.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "utf8.h"

#define THREADNAMES_SLOTS (2 * THREADNAMES_MAX) /* power of two: load <= 1/2 */

struct threadnames_entry {
	pid_t pid, tid;
	uint64_t read_at; /* when the name was read */
	int exited;
	char name[THREADNAMES_NAME_MAX];
};

struct threadnames {
	char proc_root[256];
	struct threadnames_entry *e; /* e[0] unused: index 0 = no name */
	size_t n;
	uint32_t *slots; /* tid's newest index; 0 = empty */
};

struct threadnames *threadnames_new(const char *proc_root)
{
	struct threadnames *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	snprintf(t->proc_root, sizeof(t->proc_root), "%s", proc_root ? proc_root : "/proc");
	t->n = 1;
	return t;
}

void threadnames_free(struct threadnames *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->slots);
	free(t);
}

/* comm of pid's thread tid into out (valid UTF-8, no control characters;
 * "" when unreadable). */
static void threadnames_read(const struct threadnames *t, pid_t pid, pid_t tid, char *out)
{
	char path[320], buf[32];
	ssize_t n = -1;
	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", t->proc_root, (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, buf, 16); /* TASK_COMM_LEN: 15 bytes and '\n' */
		close(fd);
	}
	if (n <= 0)
		return;
	if (buf[n - 1] == '\n')
		n--;
	utf8_sanitize(buf, (size_t)n, out, THREADNAMES_NAME_MAX, 0, NULL);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* A new index for (pid, tid) named name, read at now; 0 when full. */
static uint32_t threadnames_add(struct threadnames *t, pid_t pid, pid_t tid, const char *name,
				uint64_t now)
{
	if (t->n >= THREADNAMES_MAX + 1)
		return 0;
	struct threadnames_entry *e = &t->e[t->n];
	e->pid = pid;
	e->tid = tid;
	e->read_at = now;
	e->exited = 0;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return (uint32_t)t->n++;
}

static int threadnames_alloc(struct threadnames *t)
{
	if (t->e)
		return 0;
	t->e = calloc(THREADNAMES_MAX + 1, sizeof(*t->e));
	t->slots = calloc(THREADNAMES_SLOTS, sizeof(*t->slots));
	if (t->e && t->slots)
		return 0;
	free(t->e);
	free(t->slots);
	t->e = NULL;
	t->slots = NULL;
	return -ENOMEM;
}

static size_t threadnames_slot(const struct threadnames *t, pid_t tid)
{
	size_t mask = THREADNAMES_SLOTS - 1, j = ((size_t)(uint32_t)tid * 0x9E3779B1u) & mask;
	while (t->slots[j] && t->e[t->slots[j]].tid != tid)
		j = (j + 1) & mask;
	return j;
}

uint32_t threadnames_get(struct threadnames *t, pid_t pid, pid_t tid, uint64_t now)
{
	char name[THREADNAMES_NAME_MAX];
	if (threadnames_alloc(t) < 0)
		return 0;
	size_t j = threadnames_slot(t, tid);
	uint32_t i = t->slots[j];
	if (i) {
		struct threadnames_entry *e = &t->e[i];
		/* sample times are per CPU: one may be older than the last read */
		if (!e->exited && e->pid == pid &&
		    (now < e->read_at || now - e->read_at < THREADNAMES_REFRESH_NS))
			return i;
		threadnames_read(t, pid, tid, name);
		if (e->pid == pid && !strcmp(e->name, name)) {
			e->exited = 0; /* unchanged (or reused by a thread of that name) */
			e->read_at = now;
			return i;
		}
		/* gone: a sample of the thread read after its exit record (the
		 * rings of other CPUs are read later), not a new thread */
		if (e->pid == pid && !name[0])
			return i;
	} else {
		threadnames_read(t, pid, tid, name);
	}
	uint32_t k = threadnames_add(t, pid, tid, name, now);
	if (k)
		t->slots[j] = k;
	return k;
}

void threadnames_exit(struct threadnames *t, pid_t tid)
{
	if (!t->e)
		return;
	uint32_t i = t->slots[threadnames_slot(t, tid)];
	if (i)
		t->e[i].exited = 1;
}

const char *threadnames_name(const struct threadnames *t, uint32_t idx, pid_t *pid, pid_t *tid)
{
	if (!idx || idx >= t->n)
		return NULL;
	if (pid)
		*pid = t->e[idx].pid;
	if (tid)
		*tid = t->e[idx].tid;
	return t->e[idx].name;
}

size_t threadnames_count(const struct threadnames *t)
{
	return t->n - 1;
}
