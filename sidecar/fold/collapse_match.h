/* collapse_match.h - the scanners that stand for stackcollapse-perf.pl's
 * regular expressions (internal to sidecar/fold: collapse.c and
 * collapse_match.c). Each one finds exactly the match perl's backtracking
 * engine finds; the comments give the pattern. Perl's \s is
 * [ \t\n\v\f\r], \d is [0-9] and \w is [A-Za-z0-9_] here (bytes). */
#ifndef FS_COLLAPSE_MATCH_H
#define FS_COLLAPSE_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Character classes, one table lookup per byte on the hot path. */
enum {
	C_WS = 1,     /* perl \s */
	C_DIGIT = 2,  /* \d */
	C_WORD = 4,   /* \w */
	C_HEXLOW = 8, /* [\da-f] */
	C_TIDY = 16,  /* bytes tidy_generic changes: ; " ' ( */
};

#define CRANGE(lo, hi, v) [lo... hi] = (v)
static const unsigned char cclass[256] = {
    [' '] = C_WS,
    ['\t'] = C_WS,
    ['\n'] = C_WS,
    ['\v'] = C_WS,
    ['\f'] = C_WS,
    ['\r'] = C_WS,
    CRANGE('0', '9', C_DIGIT | C_WORD | C_HEXLOW),
    CRANGE('a', 'f', C_WORD | C_HEXLOW),
    CRANGE('g', 'z', C_WORD),
    CRANGE('A', 'Z', C_WORD),
    ['_'] = C_WORD,
    [';'] = C_TIDY,
    ['"'] = C_TIDY,
    ['\''] = C_TIDY,
    ['('] = C_TIDY,
};

static inline bool is_ws(unsigned char ch)
{
	return cclass[ch] & C_WS;
}

static inline bool is_digit(unsigned char ch)
{
	return cclass[ch] & C_DIGIT;
}

static inline bool is_word(unsigned char ch)
{
	return cclass[ch] & C_WORD;
}

static inline bool bytes_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && !memcmp(a, b, alen);
}

static inline bool contains(const char *s, size_t n, const char *needle, size_t k)
{
	const char *p = s, *end = s + n;
	while ((size_t)(end - p) >= k && (p = memchr(p, needle[0], (size_t)(end - p) - k + 1))) {
		if (!memcmp(p + 1, needle + 1, k - 1))
			return true;
		p++;
	}
	return false;
}

/* The first perl-\s byte in s[i, n), or n. Eight bytes at a time: no byte
 * below 0x21 means no blank ((x - 0x21*ONES) & ~x & HIGHS finds one). */
static inline size_t run_end(const char *s, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	for (; n - i >= 8; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		if ((w - ones * 0x21) & ~w & highs)
			break;
	}
	while (i < n && !is_ws((unsigned char)s[i]))
		i++;
	return i;
}

struct frame_match {
	const char *pc, *func, *mod;
	size_t pc_len, func_len, mod_len;
};

struct event_match {
	size_t comm_len;
	const char *pid, *tid;
	size_t pid_len, tid_len;
};

// /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/ on an event line.
bool collapse_match_event(const char *s, size_t n, struct event_match *m);
// The event name after the time: see collapse_match.c.
bool collapse_match_event_name(const char *s, size_t n, const char **ev, size_t *ev_len,
			       const char **period, size_t *period_len);
uint64_t collapse_parse_period(const char *s, size_t n);
// /^\s*(\w+)\s*(.+) \((\S*)\)/ on a stack line.
bool collapse_match_frame(const char *s, size_t n, struct frame_match *m);
bool collapse_mod_is_kernel(const char *mod, size_t n);
bool collapse_mod_is_jit(const char *mod, size_t n);
bool collapse_looks_like_go(const char *s, size_t n);
// Where s/\((?!anonymous namespace\)).*// cuts s.
size_t collapse_tidy_cut(const char *s, size_t n);

#endif
