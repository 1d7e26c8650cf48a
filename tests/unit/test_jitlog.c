/* test_jitlog.c - the agent's timed JIT log: parsing in chunks, names by
 * address and time (reuse, late unloads, the initial dump), bounds. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitlog.h"
#include "tap.h"

static void feed(struct jitlog *l, const char *text)
{
	struct fs_error err = {0};
	if (jitlog_feed(l, text, strlen(text), &err) < 0)
		tap_diag("feed: %s", err.msg);
}

static void is_at(const struct jitlog *l, uint64_t addr, uint64_t t, const char *want,
		  const char *what)
{
	const char *got = jitlog_lookup(l, addr, t);
	if (!ok(want ? got && !strcmp(got, want) : !got, "%s", what))
		tap_diag("0x%llx at %llu: got '%s', want '%s'", (unsigned long long)addr,
			 (unsigned long long)t, got ? got : "(none)", want ? want : "(none)");
}

static void test_window(void)
{
	struct jitlog l;
	jitlog_init(&l, 0);
	/* The dump at the start (t 0), split mid-line across two chunks. */
	feed(&l, "@0 1000 100 aa\n1000 11 A.run\n1011 ef A.r");
	feed(&l, "un->B.inl\n@0 5000 40 0\n5000 40 Interpreter\n");
	/* C compiled at 300; A unloaded at 500, D reuses its start at 600. */
	feed(&l, "@300 2000 80 cc\n2000 80 C.work\n-500 1000 aa\n@600 1000 80 dd\n1000 80 D.new\n");
	is_int(jitlog_index(&l), 0, "index");
	is_int((int)jitlog_entries(&l), 5, "5 entries");
	is_int((int)jitlog_loads(&l), 4, "4 loads");
	is_at(&l, 0x1005, 100, "A.run", "before the unload: A");
	is_at(&l, 0x1020, 499, "A.run->B.inl", "A's inlined range, a chunk boundary inside");
	is_at(&l, 0x1005, 700, "D.new", "after the reuse: D, not the last owner by accident");
	is_at(&l, 0x10f0, 700, "A.run->B.inl", "only A ever covered 0x10f0: the nearest in time");
	is_at(&l, 0x2010, 400, "C.work", "compiled during the window");
	is_at(&l, 0x2010, 100, "C.work", "a sample before its load: still the only candidate");
	is_at(&l, 0x5010, 900, "Interpreter", "a stub from the dump");
	is_at(&l, 0x4000, 100, NULL, "no code there");

	/* More after the index: a late unload (HotSpot posts them from its
	 * service thread) after newer code took the address. */
	feed(&l, "@1000 3000 100 e1\n3000 100 E.old\n@1100 3000 100 e2\n3000 100 E.new\n"
		 "-1200 3000 e1\n");
	is_at(&l, 0x3010, 1050, NULL, "not indexed yet");
	jitlog_index(&l);
	is_at(&l, 0x3010, 1050, "E.old", "incremental index: E.old at 1050");
	is_at(&l, 0x3010, 1150, "E.new", "newer overlapping code ends the old at its load");
	is_at(&l, 0x3010, 5000, "E.new", "the late unload of E.old does not end E.new");

	char *text = NULL;
	size_t len = 0;
	jitlog_perfmap_text(&l, &text, &len);
	ok(text && strstr(text, "1000 80 D.new\n") && !strstr(text, "A.run") &&
	       strstr(text, "3000 100 E.new\n"),
	   "perf map of the code present at the end");
	free(text);
	jitlog_release(&l);
}

static void test_garbage(void)
{
	struct jitlog l;
	jitlog_init(&l, 1000);
	feed(&l, "@x 1 2 3\n-5\n@5 ffffffffffffffff 2 0\nzz 10 n\n10 0 zero\n\n@2000 10 10 1\n"
		 "10 10 ok\n99999999999999999999999 1 x\n");
	char longline[5000];
	memset(longline, 'a', sizeof(longline) - 2);
	memcpy(longline, "20 1 ", 5);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	feed(&l, longline);
	jitlog_index(&l);
	is_int((int)jitlog_entries(&l), 1, "only the good line is kept");
	is_int((int)l.skipped, 8, "the others are skipped (%zu)", l.skipped);
	is_at(&l, 0x15, 1000, "ok", "clock offset 1000: logged 2000 is 1000 here");
	ok(l.e[0].t_load == 1000, "load time shifted by the time namespace offset");
	struct fs_error err;
	static char big[1 << 16];
	int r = 0;
	for (int i = 0; i < 2000 && r == 0; i++)
		r = jitlog_feed(&l, big, sizeof(big), &err);
	is_int(r, -E2BIG, "bounded: %s", err.msg);
	jitlog_release(&l);
}

/* The agent's marks: "!s" after a load (its debug info is safepoint-only)
 * and "!nonsafepoints TEXT" (the flag's state). */
static void test_marks(void)
{
	struct jitlog l;
	jitlog_init(&l, 0);
	feed(&l, "!s\n!nonsafepoints set (by the agent; 2 methods\x01)\n@0 1000 100 aa\n!s\n"
		 "1000 80 A.old\n1080 20 A.old->B.inl\n@0 2000 100 bb\n2000 100 C.new\n"
		 "@500 3000 10 cc\n!s\n3000 10 D.fresh\n!x\n");
	is_int(jitlog_index(&l), 0, "index");
	const struct jitlog_entry *e = jitlog_lookup_entry(&l, 0x1090, 100);
	ok(e && e->sp_only && !strcmp(l.names + e->name, "A.old->B.inl"),
	   "a marked load: every line of it safepoint-only");
	e = jitlog_lookup_entry(&l, 0x2010, 100);
	ok(e && !e->sp_only, "the next load is not");
	e = jitlog_lookup_entry(&l, 0x3000, 600);
	ok(e && e->sp_only, "a live load marked");
	is_str(l.nonsafepoints, "set (by the agent; 2 methods?)", "the status, printable");
	is_int((int)l.skipped, 1, "an unknown mark is skipped; a stray !s is not an error");
	jitlog_release(&l);
}

/* A growing text buffer for the hostile logs. */
struct text {
	char *p;
	size_t len, cap;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *fmt, ...)
{
	if (t->cap - t->len < 256) {
		t->cap = t->cap ? t->cap * 2 : 1 << 20;
		t->p = realloc(t->p, t->cap);
		if (!t->p)
			abort();
	}
	va_list ap;
	va_start(ap, fmt);
	t->len += (size_t)vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
}

/* Feed t in chunks of 16 MiB, each indexed, as a window's reads would. */
static int feed_text(struct jitlog *l, const struct text *t)
{
	struct fs_error err = {0};
	const size_t chunk = 16 << 20;
	for (size_t off = 0; off < t->len; off += chunk) {
		size_t n = t->len - off < chunk ? t->len - off : chunk;
		int r = jitlog_feed(l, t->p + off, n, &err);
		if (r < 0)
			return r;
		if (jitlog_index(l) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* One load of 1M lines, unloaded 1,800 times (each unload used to walk
 * every line of its load): the work stays a few steps per line. */
static void test_unload_bomb(void)
{
	struct jitlog l;
	struct text t = {0};
	jitlog_init(&l, 0);
	jitlog_set_limit(&l, SIZE_MAX);
	text_add(&t, "@100 10000000 10000000 77\n");
	for (unsigned i = 0; i < 1000000; i++)
		text_add(&t, "%x 8 m%u\n", 0x10000000 + i * 8, i);
	for (unsigned i = 0; i < 1800; i++)
		text_add(&t, "-%u 10000000 77\n", 200 + i);
	is_int(feed_text(&l, &t), 0, "1M lines and 1,800 unloads of them are read");
	is_int((int)jitlog_entries(&l), 1000000, "every line kept");
	uint64_t lines = l.lines;
	ok(l.steps < 64 * lines, "%llu steps for %llu lines (n log n: under 64 per line)",
	   (unsigned long long)l.steps, (unsigned long long)lines);
	is_at(&l, 0x10000010, 150, "m2", "before the first unload");
	is_at(&l, 0x10000010, 100000, "m2", "after the unload: nearest in time");
	ok(jitlog_entry_end(&l, &l.e[5]) == 200, "the first unload ends every line of the load");
	free(t.p);
	jitlog_release(&l);
}

/* 4M entries that all overlap each other (plain perf map lines, each one
 * starting a byte after the last and reaching 1 MiB on, each one ending
 * all before it): settling each was thousands of steps. */
static void test_overlap_bomb(void)
{
	struct jitlog l;
	struct text t = {0};
	const unsigned n = (4u << 20) - 1; /* and the last: the entry cap */
	jitlog_init(&l, 0);
	jitlog_set_limit(&l, SIZE_MAX);
	for (unsigned i = 0; i < n; i++)
		text_add(&t, "%x fffff x\n", i);
	text_add(&t, "7fffff 1 last\n");
	ok(t.len < JITLOG_MAX_BYTES, "%zu bytes: under the log's byte cap", t.len);
	is_int(feed_text(&l, &t), 0, "4M overlapping entries are read");
	is_int((int)jitlog_entries(&l), (int)n + 1, "every entry kept");
	uint64_t bound = 16ull * n * 23; /* 16 n log2 n */
	ok(l.steps < bound, "%llu steps for %u entries (under 16 n log n = %llu)",
	   (unsigned long long)l.steps, n, (unsigned long long)bound);
	is_int((int)l.unsettled, 0, "every overlap settled");
	ok(l.e[1000].t_end == 0 && l.e[n - 1].t_end == UINT64_MAX,
	   "each ends where the next was loaded; the last is present at the end");
	is_at(&l, 0x7fffff, 5, "last", "a lookup among them");
	/* every lookup there walks JITLOG_MAX_STEPS: all of them together are
	 * bounded by the lookup budget, then JITLOG_LATE_LOOKUP_STEPS each */
	l.lookup_steps = 0;
	l.lookup_budget = 1u << 22;
	for (unsigned i = 0; i < 100000; i++)
		jitlog_lookup(&l, 0x200000 + i, 5);
	ok(l.lookup_steps <= (1u << 22) + JITLOG_MAX_STEPS + 100000ull * JITLOG_LATE_LOOKUP_STEPS,
	   "100,000 lookups in nested code: %llu steps (budget 4 Mi, then %d each)",
	   (unsigned long long)l.lookup_steps, JITLOG_LATE_LOOKUP_STEPS);
	ok(l.lookups_cut > 90000, "the lookups past the budget are counted (%zu)", l.lookups_cut);
	free(t.p);
	jitlog_release(&l);
}

/* The memory limit holds on every path, and what did not fit is counted;
 * a stop flag ends parsing. */
static void test_budget(void)
{
	struct jitlog l;
	struct text t = {0};
	jitlog_init(&l, 0);
	jitlog_set_limit(&l, 1 << 20);
	for (unsigned i = 0; i < 200000; i++)
		text_add(&t, "@%u %x 10 %x\n%x 10 n%u\n", 1 + i, 0x1000 + i * 16, i,
			 0x1000 + i * 16, i);
	for (unsigned i = 0; i < 200000; i++)
		text_add(&t, "@%u %x 10 %x\n", 300000 + i, 0x9000000 + i * 16, i);
	is_int(feed_text(&l, &t), 0, "read");
	ok(jitlog_memory(&l) <= 1 << 20, "memory %zu within the 1 MiB limit", jitlog_memory(&l));
	ok(l.dropped > 0 && l.dropped_loads > 0, "dropped %zu lines and %zu loads, counted",
	   l.dropped, l.dropped_loads);
	ok(jitlog_dropped(&l) >= l.dropped + l.dropped_loads, "jitlog_dropped says so");
	jitlog_release(&l);

	volatile sig_atomic_t stop = 1;
	struct fs_error err = {0};
	jitlog_init(&l, 0);
	jitlog_set_stop(&l, &stop);
	is_int(jitlog_feed(&l, t.p, t.len, &err), -EINTR, "a stop flag interrupts parsing");
	ok(l.dropped_bytes == t.len, "the rest is counted as dropped");
	free(t.p);
	jitlog_release(&l);
}

/* The sweep against a brute force over random logs fed in order (several
 * index calls): each entry ends at the first newer overlapping load. */
static void test_sweep_exact(void)
{
	unsigned seed = 12345;
	int bad = 0;
	for (int round = 0; round < 200 && !bad; round++) {
		struct jitlog l;
		struct text t = {0};
		jitlog_init(&l, 0);
		unsigned n = 1 + (unsigned)rand_r(&seed) % 200, tm = 1;
		for (unsigned i = 0; i < n; i++) {
			unsigned start = 0x1000 + (unsigned)rand_r(&seed) % 512;
			unsigned size = 1 + (unsigned)rand_r(&seed) % 64;
			tm += (unsigned)rand_r(&seed) % 3; /* ties too */
			text_add(&t, "@%u %x %x %x\n%x %x e%u\n", tm, start, size, i, start, size,
				 i);
			if (rand_r(&seed) % 16 == 0) {
				struct fs_error err;
				jitlog_feed(&l, t.p, t.len, &err);
				jitlog_index(&l);
				t.len = 0;
			}
		}
		struct fs_error err;
		jitlog_feed(&l, t.p, t.len, &err);
		jitlog_index(&l);
		for (size_t a = 0; a < l.n && !bad; a++) {
			uint64_t want = UINT64_MAX;
			const struct jitlog_entry *x = &l.e[a];
			for (size_t b = a + 1; b < l.n; b++) {
				const struct jitlog_entry *y = &l.e[b];
				if (y->start < x->start + x->size &&
				    x->start < y->start + y->size && y->t_load < want)
					want = y->t_load;
			}
			if (x->t_end != want) {
				bad = 1;
				tap_diag("round %d entry %zu: end %llu, want %llu", round, a,
					 (unsigned long long)x->t_end, (unsigned long long)want);
			}
		}
		free(t.p);
		jitlog_release(&l);
	}
	ok(!bad, "the sweep ends each entry where a brute force does");
}

/* The address cache: lookups answered from it agree with the same log,
 * fed and indexed the same way, that never looked anything up (every
 * lookup a search of the index), while code is unloaded, its range
 * reused by newer code, and unloads come late. */
static const char *cache_chunks[] = {
    /* A and B at the start, C compiled at 100 */
    "@0 1000 100 aa\n1000 40 A.run\n1040 60 A.run->A.inl\n@0 2000 100 bb\n2000 100 B.run\n"
    "@100 3000 80 cc\n3000 80 C.work\n",
    /* A unloaded at 200, its range reused by D at 300 (a smaller blob) */
    "-200 1000 aa\n@300 1000 60 dd\n1000 60 D.new\n",
    /* E over B's range at 400 (B ends there), then B's unload, late */
    "@400 2000 100 ee\n2000 100 E.over\n-350 2000 bb\n",
    /* C unloaded; F reuses exactly C's range, then G the middle of D's */
    "-500 3000 cc\n@600 3000 80 ff\n3000 80 F.again\n@700 1020 10 9a\n1020 10 G.mid\n",
};

static void test_cache(void)
{
	static const uint64_t addrs[] = {0x1000, 0x1010, 0x1025, 0x1050, 0x2000,
					 0x2050, 0x3000, 0x3040, 0x4000};
	static const uint64_t times[] = {0,   50,  150, 199, 200, 250, 299, 300,
					 340, 360, 399, 400, 450, 550, 650, 800};
	struct jitlog l;
	jitlog_init(&l, 0);
	int bad = 0;
	for (size_t c = 0; c < sizeof(cache_chunks) / sizeof(*cache_chunks); c++) {
		feed(&l, cache_chunks[c]);
		jitlog_index(&l);
		/* the reference: the same chunks, never looked up */
		for (size_t a = 0; a < sizeof(addrs) / sizeof(*addrs); a++) {
			for (size_t t = 0; t < sizeof(times) / sizeof(*times); t++) {
				struct jitlog ref;
				jitlog_init(&ref, 0);
				for (size_t r = 0; r <= c; r++) {
					feed(&ref, cache_chunks[r]);
					jitlog_index(&ref);
				}
				const char *want = jitlog_lookup(&ref, addrs[a], times[t]);
				/* twice: a miss (or a hit from the last chunk), then a hit */
				for (int k = 0; k < 2; k++) {
					const char *got = jitlog_lookup(&l, addrs[a], times[t]);
					if (!want != !got || (want && strcmp(want, got))) {
						bad++;
						tap_diag("chunk %zu, 0x%llx at %llu: got '%s', "
							 "want '%s'",
							 c, (unsigned long long)addrs[a],
							 (unsigned long long)times[t],
							 got ? got : "(none)",
							 want ? want : "(none)");
					}
				}
				jitlog_release(&ref);
			}
		}
	}
	ok(!bad, "answers from the address cache are a search's, through unloads and reuse");
	ok(l.cache_hits > l.cache_misses, "most lookups were cache hits (%zu hits, %zu misses)",
	   l.cache_hits, l.cache_misses);
	ok(l.cache_dropped > 0, "newer code over cached addresses emptied their slots (%zu)",
	   l.cache_dropped);
	is_at(&l, 0x1010, 250, "D.new", "between A's unload and D's load: the nearer, D");
	is_at(&l, 0x1010, 350, "D.new", "the reused range: D");
	is_at(&l, 0x1025, 750, "G.mid", "newest code in the middle of D");
	is_at(&l, 0x1025, 650, "D.new", "before G: D");
	is_at(&l, 0x2050, 370, "B.run", "before its late unload was read: B");
	is_at(&l, 0x3040, 650, "F.again", "C's range reused exactly: F");
	is_at(&l, 0x3040, 450, "C.work", "before C's unload: C");
	jitlog_release(&l);
	/* address 0 marks a free slot of the cache: code there is still found */
	jitlog_init(&l, 0);
	feed(&l, "@5 0 10 1\n0 10 Zero\n");
	jitlog_index(&l);
	is_at(&l, 0, 6, "Zero", "code at address 0");
	is_at(&l, 0, 6, "Zero", "code at address 0, looked up again");
	jitlog_release(&l);
}

/* Random code loads over a small address range (overlaps, reuse, exact
 * reuse of a range), unloads now and late, fed in chunks with lookups in
 * between: every answer of the cached log is the one of the same log
 * without the cache. */
static void test_cache_random(void)
{
	struct jitlog l, ref;
	jitlog_init(&l, 0);
	jitlog_init(&ref, 0);
	jitlog_set_cache(&ref, 0);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
#define RND() (seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17, seed)
	uint64_t t = 1, mids[4096][2];
	size_t nm = 0;
	int bad = 0, lookups = 0;
	char chunk[8192];
	for (int round = 0; round < 200; round++) {
		size_t len = 0;
		for (int k = 0; k < 8; k++) {
			t += RND() % 50;
			if (nm && RND() % 3 == 0) { /* an unload, maybe late */
				size_t i = RND() % nm;
				uint64_t when = t - (RND() % 2 ? RND() % (t > 100 ? 100 : t) : 0);
				len += (size_t)snprintf(
				    chunk + len, sizeof(chunk) - len, "-%llu %llx %llx\n",
				    (unsigned long long)when, (unsigned long long)mids[i][0],
				    (unsigned long long)mids[i][1]);
				continue;
			}
			uint64_t start = 0x1000 + (RND() % 64) * 16, size = 16 + (RND() % 8) * 16;
			uint64_t mid = nm + 1;
			len += (size_t)snprintf(
			    chunk + len, sizeof(chunk) - len,
			    "@%llu %llx %llx %llx\n%llx %llx m%llu\n%llx %llx m%llu->i\n",
			    (unsigned long long)t, (unsigned long long)start,
			    (unsigned long long)size, (unsigned long long)mid,
			    (unsigned long long)start, (unsigned long long)size / 2,
			    (unsigned long long)mid, (unsigned long long)(start + size / 2),
			    (unsigned long long)(size - size / 2), (unsigned long long)mid);
			if (nm < 4096) {
				mids[nm][0] = start;
				mids[nm][1] = mid;
				nm++;
			}
		}
		feed(&l, chunk);
		feed(&ref, chunk);
		(void)len;
		jitlog_index(&l);
		jitlog_index(&ref);
		for (int q = 0; q < 256; q++) {
			uint64_t a = 0x1000 + RND() % (64 * 16 + 128), when = RND() % (t + 50);
			const char *got = jitlog_lookup(&l, a, when),
				   *want = jitlog_lookup(&ref, a, when);
			lookups++;
			if (!want != !got || (want && strcmp(want, got))) {
				if (bad++ < 5)
					tap_diag("round %d, 0x%llx at %llu: got '%s', want '%s'",
						 round, (unsigned long long)a,
						 (unsigned long long)when, got ? got : "(none)",
						 want ? want : "(none)");
			}
		}
	}
#undef RND
	ok(!bad,
	   "random loads, reuse and late unloads: %d lookups, the cache's answers are a "
	   "search's (%zu hits)",
	   lookups, l.cache_hits);
	ok(ref.cache_hits == 0 && l.cache_hits > 0, "the reference never used a cache");
	jitlog_release(&l);
	jitlog_release(&ref);
}

int main(void)
{
	tap_plan(63);
	test_window();
	test_garbage();
	test_marks();
	test_unload_bomb();
	test_overlap_bomb();
	test_budget();
	test_sweep_exact();
	test_cache();
	test_cache_random();
	return tap_done();
}
