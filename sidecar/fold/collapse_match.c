/* collapse_match.c - the regular expressions of stackcollapse-perf.pl as
 * scanners: see collapse_match.h. */
#include "collapse_match.h"

// /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/ : the shortest comm (2 chars at least)
// followed by blanks, digits, optional "/digits" and a blank.
bool collapse_match_event(const char *s, size_t n, struct event_match *m)
{
	if (n < 3 || is_ws((unsigned char)s[0]))
		return false;
	size_t i = 2;
	while (i < n) {
		if (!is_ws((unsigned char)s[i])) {
			i++;
			continue;
		}
		size_t ws_end = i;
		while (ws_end < n && is_ws((unsigned char)s[ws_end]))
			ws_end++;
		size_t p = ws_end;
		while (p < n && is_digit((unsigned char)s[p]))
			p++;
		if (p > ws_end) {
			size_t slash_end = p, t_end;
			while (slash_end < n && s[slash_end] == '/')
				slash_end++;
			t_end = slash_end;
			while (t_end < n && is_digit((unsigned char)s[t_end]))
				t_end++;
			if (t_end < n && is_ws((unsigned char)s[t_end])) {
				m->comm_len = i;
				m->pid = s + ws_end;
				m->pid_len = p - ws_end;
				m->tid = s + slash_end;
				m->tid_len = t_end - slash_end;
				return true;
			}
		}
		/* a later start inside the same blank run fails the same way */
		i = ws_end;
	}
	return false;
}

/* /:\s*(\d+)*\s+(\S+):\s*$/ on the whole line: the event is the last word,
 * ending in ':', preceded by ":<blanks>[period]<blanks>". */
bool collapse_match_event_name(const char *s, size_t n, const char **ev, size_t *ev_len,
			       const char **period, size_t *period_len)
{
	size_t e = n;
	while (e > 0 && is_ws((unsigned char)s[e - 1]))
		e--;
	if (e == 0 || s[e - 1] != ':')
		return false;
	size_t name_end = e - 1, name = name_end;
	while (name > 0 && !is_ws((unsigned char)s[name - 1]))
		name--;
	if (name == name_end || name == 0)
		return false;
	size_t b = name;
	while (b > 0 && is_ws((unsigned char)s[b - 1]))
		b--;
	size_t d = b;
	while (d > 0 && is_digit((unsigned char)s[d - 1]))
		d--;
	size_t a = d;
	while (a > 0 && is_ws((unsigned char)s[a - 1]))
		a--;
	if (a == 0 || s[a - 1] != ':')
		return false;
	*ev = s + name;
	*ev_len = name_end - name;
	*period = s + d;
	*period_len = b - d;
	return true;
}

uint64_t collapse_parse_period(const char *s, size_t n)
{
	/* `$period = 1 if not $period`: "" and "0" are false in perl */
	if (n == 0 || (n == 1 && s[0] == '0'))
		return 1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return UINT64_MAX;
	}
	return v;
}

/* /^\s*(\w+)\s*(.+) \((\S*)\)/ : the module is the last " (...)" whose
 * blank-free run holds a ')' (the greedy (.+) takes the rightmost), cut at
 * the run's last ')'; the address and function split what comes before. */
bool collapse_match_frame(const char *s, size_t n, struct frame_match *m)
{
	size_t st = 0;
	while (st < n && is_ws((unsigned char)s[st]))
		st++;
	size_t w = st;
	while (w < n && is_word((unsigned char)s[w]))
		w++;
	if (w == st)
		return false;

	/* rightmost e with s[e] == ' ', s[e+1] == '(' and a ')' in the run */
	size_t e = n, paren = 0;
	bool found = false;
	while (e > st + 1) {
		const char *o = memrchr(s + st + 1, '(', e - (st + 1));
		if (!o)
			break;
		size_t op = (size_t)(o - s);
		if (s[op - 1] == ' ') {
			size_t r = run_end(s, op + 1, n);
			const char *cp = r > 0 && s[r - 1] == ')'
					     ? s + r - 1
					     : memrchr(s + op + 1, ')', r - (op + 1));
			paren = cp ? (size_t)(cp - s) : 0;
			if (paren > op) {
				e = op - 1;
				found = true;
				break;
			}
		}
		e = op;
	}
	if (!found)
		return false;

	size_t fmax = w;
	while (fmax < n && is_ws((unsigned char)s[fmax]))
		fmax++;
	size_t f = fmax < e - 1 ? fmax : e - 1;
	if (e < 1 || f < st + 1)
		return false;
	m->pc = s + st;
	m->pc_len = (f < w ? f : w) - st;
	m->func = s + f;
	m->func_len = e - f;
	m->mod = s + e + 2;
	m->mod_len = paren - (e + 2);
	return true;
}

/* memmem for short haystacks: memchr on the first byte, then compare. */

bool collapse_mod_is_kernel(const char *mod, size_t n)
{
	/* m/(^\[|vmlinux$)/ && !~ /unknown/ */
	if (!((n > 0 && mod[0] == '[') || (n >= 7 && !memcmp(mod + n - 7, "vmlinux", 7))))
		return false;
	return !contains(mod, n, "unknown", 7);
}

bool collapse_mod_is_jit(const char *mod, size_t n)
{
	/* m:/tmp/perf-\d+\.map: */
	const char *p = mod, *end = mod + n;
	while (end - p >= 15 && (p = memchr(p, '/', (size_t)(end - p) - 14))) {
		if (!memcmp(p, "/tmp/perf-", 10)) {
			const char *d = p + 10;
			while (d < end && is_digit((unsigned char)*d))
				d++;
			if (d > p + 10 && end - d >= 4 && !memcmp(d, ".map", 4))
				return true;
		}
		p++;
	}
	return false;
}

/* $func =~ m/\.\(.*\)\./ : a Go method such as "net/http.(*Client).Do" */
bool collapse_looks_like_go(const char *s, size_t n)
{
	const char *a = memmem(s, n, ".(", 2);
	if (!a)
		return false;
	for (size_t j = n; j-- > (size_t)(a - s) + 2;)
		if (s[j] == '.' && s[j - 1] == ')' && j - 1 >= (size_t)(a - s) + 2)
			return true;
	return false;
}

// Where s/\((?!anonymous namespace\)).*// cuts s.
size_t collapse_tidy_cut(const char *s, size_t n)
{
	static const char anon[] = "anonymous namespace)";
	const char *p = s, *end = s + n;
	while ((p = memchr(p, '(', (size_t)(end - p)))) {
		size_t rest = (size_t)(end - p - 1);
		if (rest < sizeof(anon) - 1 || memcmp(p + 1, anon, sizeof(anon) - 1))
			return (size_t)(p - s);
		p++;
	}
	return n;
}
