/* offcpu_parse.c - the /proc texts of one thread (stat, syscall, stack),
 * container-controlled in part (a thread's comm is inside stat): bounded,
 * every field checked. See offcpu.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "offcpu.h"

int offcpu_parse_event(const char *s, enum offcpu_event *out)
{
	if (!strcmp(s, "cpu"))
		*out = OFFCPU_EVENT_CPU;
	else if (!strcmp(s, "offcpu"))
		*out = OFFCPU_EVENT_OFFCPU;
	else if (!strcmp(s, "wall"))
		*out = OFFCPU_EVENT_WALL;
	else
		return -EINVAL;
	return 0;
}

const char *offcpu_state_frame(char state, char *buf)
{
	switch (state) {
	case 'R': return "[running]";
	case 'S': return "[sleeping]";
	case 'D': return "[blocked: io]";
	case 'T':
	case 't': return "[stopped]";
	case 'I': return "[idle]";
	default:
		snprintf(buf, 16, "[other: %c]", state > 0x20 && state < 0x7f ? state : '?');
		return buf;
	}
}

/* Parse an unsigned number (base 0: 0x... hex) ending at a space or the
 * end; *s moves past it and its spaces. 0 or -1. */
static int offcpu_num(const char **s, uint64_t *v, int base)
{
	char *end;
	if (**s == '-' || **s < '0' || **s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(*s, &end, base);
	if (errno || end == *s || (*end && *end != ' ' && *end != '\n'))
		return -1;
	*v = x;
	*s = end;
	while (**s == ' ')
		(*s)++;
	return 0;
}

int offcpu_parse_syscall(const char *line, uint64_t *sp, uint64_t *pc)
{
	/* "running", or "nr a1 a2 a3 a4 a5 a6 sp pc", or "-1 sp pc" (blocked
	 * outside a system call) */
	const char *s = line;
	int fields = 3;
	if (!strncmp(s, "-1 ", 3)) {
		s += 3;
		fields = 2;
	} else {
		uint64_t nr;
		if (offcpu_num(&s, &nr, 10) < 0)
			return 0;
		fields = 8;
	}
	uint64_t v[8];
	for (int i = 0; i < fields; i++)
		if (offcpu_num(&s, &v[i], 0) < 0)
			return 0;
	if (*s && *s != '\n')
		return 0;
	*sp = v[fields - 2];
	*pc = v[fields - 1];
	return *sp && *pc;
}

int offcpu_parse_wait_point(const char *line, struct offcpu_wait_point *wp)
{
	memset(wp, 0, sizeof(*wp));
	if (!offcpu_parse_syscall(line, &wp->sp, &wp->pc))
		return 0;
	/* the format is checked: "-1 sp pc" or "nr a1 ... sp pc" */
	if (!strncmp(line, "-1 ", 3)) {
		wp->nr = UINT64_MAX;
		return 1;
	}
	const char *s = line;
	if (offcpu_num(&s, &wp->nr, 10) < 0 || offcpu_num(&s, &wp->arg0, 0) < 0)
		return 0;
	return 1;
}

int offcpu_same_wait_point(const struct offcpu_wait_point *a, const struct offcpu_wait_point *b)
{
	if (a->nr != b->nr || a->sp != b->sp || a->pc != b->pc)
		return 0;
	if (a->nr == SYS_futex)
		return (a->arg0 > b->arg0 ? a->arg0 - b->arg0 : b->arg0 - a->arg0) <= 8;
	return a->arg0 == b->arg0;
}

int offcpu_parse_stat(const char *line, char *state, uint64_t *start)
{
	/* "pid (comm) S ppid ...": comm may hold anything but is at most 16
	 * bytes, so the last ')' ends it */
	const char *s = strrchr(line, ')');
	if (!s || s[1] != ' ' || !s[2] || s[3] != ' ')
		return -EINVAL;
	*state = s[2];
	s += 4;
	/* fields 4 .. 21, then field 22: the start time */
	for (int f = 4; f < 22; f++) {
		s = strchr(s, ' ');
		if (!s)
			return -EINVAL;
		s++;
	}
	uint64_t v;
	if (offcpu_num(&s, &v, 10) < 0)
		return -EINVAL;
	*start = v;
	return 0;
}

size_t offcpu_parse_kstack(const char *text, char (*names)[64], size_t max)
{
	/* "[<0>] do_nanosleep+0x6b/0x160" per line (addresses hidden) */
	size_t n = 0;
	for (const char *s = text; s && *s && n < max;) {
		const char *nl = strchr(s, '\n');
		const char *end = nl ? nl : s + strlen(s);
		const char *sp = memchr(s, ' ', (size_t)(end - s));
		if (sp) {
			const char *name = sp + 1;
			const char *plus = memchr(name, '+', (size_t)(end - name));
			size_t len = (size_t)((plus ? plus : end) - name);
			int ok = len > 0 && len < 64 - 5;
			for (size_t i = 0; ok && i < len; i++)
				ok = name[i] > 0x20 && name[i] < 0x7f && name[i] != ';';
			if (ok)
				snprintf(names[n++], 64, "%.*s_[k]", (int)len, name);
		}
		s = nl ? nl + 1 : NULL;
	}
	return n;
}
