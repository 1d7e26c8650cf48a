/* debuginfo.c - see debuginfo.h */
#include "debuginfo.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vmflag.h"

/* One method with safepoint-only debug info; size 0: a free or forgotten slot. */
struct debuginfo_code {
	uint64_t start, size, mid;
};

static struct {
	pthread_mutex_t lock;
	enum debuginfo_state state;
	char why[160];	 /* DEBUGINFO_OFF: why */
	uint64_t t_mark; /* when the flag was set (SET) or the session began (OFF) */
	bool replaying;	 /* SET: the replay of the attach that set it; OFF: any replay */
	bool full;	 /* DEBUGINFO_MAX_CODE reached: later ones are not remembered */
	bool left_off;	 /* OFF only because an attach said safepointsonly: look again */
	struct debuginfo_code *code;
	size_t used, cap; /* slots used (tombstones included), power of two */
} di = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* CLOCK_MONOTONIC ns; by system call (clock_gettime is GLIBC_2.17 in libc). */
static uint64_t debuginfo_now(void)
{
	struct timespec ts = {0};
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t debuginfo_slot(uint64_t start, uint64_t mid, size_t cap)
{
	uint64_t h = (start ^ (mid * 0x9E3779B97F4A7C15ull)) * 0xff51afd7ed558ccdull;
	return (size_t)(h >> 17) & (cap - 1);
}

static struct debuginfo_code *debuginfo_find(uint64_t start, uint64_t mid)
{
	if (!di.cap)
		return NULL;
	for (size_t j = debuginfo_slot(start, mid, di.cap), k = 0; k < di.cap;
	     j = (j + 1) & (di.cap - 1), k++) {
		struct debuginfo_code *c = &di.code[j];
		if (c->start == 0)
			return NULL;
		if (c->start == start && c->mid == mid)
			return c;
	}
	return NULL;
}

/* Double the table (tombstones dropped): 0, or -ENOMEM (table unchanged). */
static int debuginfo_grow(void)
{
	size_t cap = di.cap ? di.cap * 2 : 4096;
	struct debuginfo_code *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	size_t used = 0;
	for (size_t i = 0; i < di.cap; i++) {
		const struct debuginfo_code *c = &di.code[i];
		if (!c->size)
			continue; /* tombstones go */
		size_t j = debuginfo_slot(c->start, c->mid, cap);
		while (n[j].start)
			j = (j + 1) & (cap - 1);
		n[j] = *c;
		used++;
	}
	free(di.code);
	di.code = n;
	di.cap = cap;
	di.used = used;
	return 0;
}

static void debuginfo_add(uint64_t start, uint64_t size, uint64_t mid)
{
	struct debuginfo_code *c = debuginfo_find(start, mid);
	if (c) {
		c->size = size;
		return;
	}
	if (di.full || start == 0)
		return;
	if ((di.used + 1) * 2 > di.cap) {
		if (di.cap >= 2 * (size_t)DEBUGINFO_MAX_CODE || debuginfo_grow() < 0) {
			di.full = true;
			return;
		}
	}
	size_t j = debuginfo_slot(start, mid, di.cap);
	while (di.code[j].start)
		j = (j + 1) & (di.cap - 1);
	di.code[j] = (struct debuginfo_code){start, size, mid};
	di.used++;
}

enum debuginfo_state debuginfo_attach(bool may_set, bool *logged)
{
	*logged = false;
	pthread_mutex_lock(&di.lock);
	if (di.state == DEBUGINFO_UNKNOWN ||
	    (di.state == DEBUGINFO_OFF && di.left_off && may_set)) {
		di.left_off = false;
		struct vmflag_tables t;
		struct vmflag f;
		char why[sizeof(di.why)] = "";
		int r = vmflag_tables_find(&t, why, sizeof(why));
		if (r == 0)
			r = vmflag_find(&t, DEBUGINFO_FLAG, &f, why, sizeof(why));
		if (r == 0 && f.value) {
			di.state = DEBUGINFO_ON;
		} else if (r == 0 && !may_set) {
			di.state = DEBUGINFO_OFF;
			di.left_off = true;
			snprintf(di.why, sizeof(di.why), "left off (option safepointsonly)");
		} else if (r == 0 && (r = vmflag_set(&f, true)) == 0) {
			di.state = DEBUGINFO_SET;
			di.replaying = true;
			di.t_mark = debuginfo_now();
		} else {
			di.state = DEBUGINFO_OFF;
			if (r < 0 && !why[0])
				snprintf(why, sizeof(why), "the flag cannot be written (error %d)",
					 -r);
			snprintf(di.why, sizeof(di.why), "not set: %s", why);
		}
		*logged = di.state != DEBUGINFO_ON;
	}
	if (di.state == DEBUGINFO_OFF) {
		/* what this session replays was compiled without the flag */
		di.replaying = true;
		di.t_mark = debuginfo_now();
	}
	enum debuginfo_state s = di.state;
	pthread_mutex_unlock(&di.lock);
	return s;
}

void debuginfo_replay_done(void)
{
	pthread_mutex_lock(&di.lock);
	di.replaying = false;
	pthread_mutex_unlock(&di.lock);
}

const char *debuginfo_status(char *buf, size_t len)
{
	pthread_mutex_lock(&di.lock);
	switch (di.state) {
	case DEBUGINFO_ON: snprintf(buf, len, "on"); break;
	case DEBUGINFO_SET: {
		size_t n = 0;
		for (size_t i = 0; i < di.cap; i++)
			n += di.code[i].size != 0;
		snprintf(buf, len,
			 "set (by the agent at its first attach; %zu methods compiled before%s)", n,
			 di.full ? ", more not remembered" : "");
		break;
	}
	case DEBUGINFO_OFF: snprintf(buf, len, "off (%s)", di.why); break;
	default: snprintf(buf, len, "unknown");
	}
	pthread_mutex_unlock(&di.lock);
	return buf;
}

bool debuginfo_note_load(uint64_t start, uint64_t size, uint64_t mid, bool replay)
{
	bool old = false;
	pthread_mutex_lock(&di.lock);
	bool fresh = !replay && debuginfo_now() - di.t_mark < DEBUGINFO_GRACE_NS;
	switch (di.state) {
	case DEBUGINFO_SET:
		if ((replay && di.replaying) || fresh) {
			debuginfo_add(start, size, mid);
			old = true;
		} else {
			struct debuginfo_code *c = debuginfo_find(start, mid);
			old = c && c->size == size;
			if (c && !old && !replay)
				c->size = 0; /* new code at that address: forget the old */
		}
		break;
	case DEBUGINFO_OFF: old = replay || fresh; break;
	default: break;
	}
	pthread_mutex_unlock(&di.lock);
	return old;
}

void debuginfo_note_unload(uint64_t start, uint64_t mid)
{
	pthread_mutex_lock(&di.lock);
	struct debuginfo_code *c = debuginfo_find(start, mid);
	if (c)
		c->size = 0;
	pthread_mutex_unlock(&di.lock);
}
