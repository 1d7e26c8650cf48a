/* agentmap.c - see agentmap.h. Plain C and libc only: this file is linked
 * into a JVMTI agent that must load in glibc and musl JVMs alike. */
#include "agentmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- options ------------------------------------------------------------ */

static int options_apply(const char *opt, size_t len, struct agentmap_options *o,
			 struct fs_error *err)
{
	static const struct {
		const char *name;
		int unfold; /* -1: not an unfold option */
	} unfolds[] = {
	    {"unfoldall", AGENTMAP_UNFOLD_ALL},
	    {"unfoldsimple", AGENTMAP_UNFOLD_SIMPLE},
	    {"unfold", AGENTMAP_UNFOLD_IN},
	    {"nounfold", AGENTMAP_UNFOLD_NONE},
	};
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(opt, lit, len) == 0)
	if (len == 0)
		return 0;
	for (size_t i = 0; i < sizeof(unfolds) / sizeof(unfolds[0]); i++) {
		if (strlen(unfolds[i].name) == len && memcmp(opt, unfolds[i].name, len) == 0) {
			o->unfold = unfolds[i].unfold;
			return 0;
		}
	}
	if (IS("dottedclass"))
		o->dotted = true;
	else if (IS("nodottedclass"))
		o->dotted = false;
	else if (IS("msig"))
		o->msig = true;
	else if (IS("sourcepos"))
		o->sourcepos = true;
	else if (IS("stop"))
		o->stop = true;
	else if (IS("verbose"))
		o->verbose = true;
	else if (IS("timed"))
		o->timed = true;
	else if (IS("safepointsonly"))
		o->safepointsonly = true;
	else if (len > 4 && (memcmp(opt, "ttl=", 4) == 0 || memcmp(opt, "ttl:", 4) == 0)) {
		unsigned long v = 0;
		for (size_t i = 4; i < len; i++) {
			if (opt[i] < '0' || opt[i] > '9' || v > 86400ul * 366)
				return fs_error_set(err, EINVAL, "option ttl: seconds expected");
			v = v * 10 + (unsigned long)(opt[i] - '0');
		}
		o->ttl_s = (unsigned)v;
	}
	/* jcmd's JVMTI.agent_load hands the agent only the part before an
	 * '=' of each word, so the modes have '='-less spellings too. */
	else if (IS("mode=oneshot") || IS("mode:oneshot") || IS("oneshot"))
		o->mode = AGENTMAP_MODE_ONESHOT;
	else if (IS("mode=continuous") || IS("mode:continuous") || IS("continuous"))
		o->mode = AGENTMAP_MODE_CONTINUOUS;
	else if ((len >= 5 && memcmp(opt, "file=", 5) == 0) || IS("file"))
		return fs_error_set(err, EINVAL,
				    "option 'file=' is not supported: the map is always "
				    "/tmp/perf-<pid>.map (see docs/agent.md)");
	else if ((len >= 5 && memcmp(opt, "mode=", 5) == 0) || IS("mode"))
		return fs_error_set(err, EINVAL,
				    "option '%.*s': mode must be oneshot or continuous (jcmd "
				    "drops the text after '=': write mode:oneshot there)",
				    (int)(len > 64 ? 64 : len), opt);
	else
		return fs_error_set(
		    err, EINVAL,
		    "unknown option '%.*s' (known: mode=oneshot|continuous, "
		    "stop, timed, ttl=SECONDS, unfoldall, unfoldsimple, unfold, nounfold, "
		    "dottedclass, nodottedclass, msig, sourcepos, verbose, safepointsonly)",
		    (int)(len > 64 ? 64 : len), opt);
#undef IS
	return 0;
}

int agentmap_parse_options(const char *s, struct agentmap_options *o, struct fs_error *err)
{
	memset(o, 0, sizeof(*o));
	o->mode = AGENTMAP_MODE_DEFAULT;
	o->unfold = AGENTMAP_UNFOLD_ALL;
	o->dotted = true;
	if (!s)
		return 0;
	while (*s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		int r = options_apply(s, len, o, err);
		if (r < 0)
			return r;
		s += len;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* ---- names -------------------------------------------------------------- */

/* A bounded string builder: appends what fits, always NUL-terminated. */
struct sbuf {
	char *p;
	size_t len, cap; /* cap includes the NUL */
};

static void sbuf_putn(struct sbuf *s, const char *str, size_t n)
{
	if (s->cap == 0)
		return;
	size_t room = s->cap - 1 - s->len;
	if (n > room)
		n = room;
	memcpy(s->p + s->len, str, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void sbuf_puts(struct sbuf *s, const char *str)
{
	sbuf_putn(s, str, strlen(str));
}

static void sbuf_init(struct sbuf *s, char *out, size_t outlen)
{
	s->p = out;
	s->len = 0;
	s->cap = outlen;
	if (outlen)
		out[0] = '\0';
}

/* Append one field type of a descriptor starting at *d, Java-style
 * ("int", "java.lang.String[]"); advances *d. Returns false on a
 * malformed descriptor. */
static bool sig_put_type(struct sbuf *s, const char **d)
{
	static const char prim_code[] = "BCDFIJSZV";
	static const char *const prim_name[] = {
	    "byte", "char", "double", "float", "int", "long", "short", "boolean", "void",
	};
	int dims = 0;
	while (**d == '[') {
		dims++;
		(*d)++;
	}
	char c = **d;
	if (c == 'L') {
		const char *end = strchr(*d, ';');
		if (!end)
			return false;
		for (const char *p = *d + 1; p < end; p++)
			sbuf_putn(s, *p == '/' ? "." : p, 1);
		*d = end + 1;
	} else {
		const char *hit = c ? strchr(prim_code, c) : NULL;
		if (!hit)
			return false;
		sbuf_puts(s, prim_name[hit - prim_code]);
		(*d)++;
	}
	while (dims--)
		sbuf_puts(s, "[]");
	return true;
}

size_t agentmap_class_name(const char *sig, bool dotted, char *out, size_t outlen)
{
	struct sbuf s;
	sbuf_init(&s, out, outlen);
	if (!sig)
		sig = "";
	if (!dotted || (sig[0] != 'L' && sig[0] != '[')) {
		sbuf_puts(&s, sig);
		return s.len;
	}
	const char *d = sig;
	if (!sig_put_type(&s, &d) || *d) {
		/* not a well-formed signature: keep it as it is */
		sbuf_init(&s, out, outlen);
		sbuf_puts(&s, sig);
	}
	return s.len;
}

size_t agentmap_method_sig(const char *desc, bool dotted, char *out, size_t outlen)
{
	struct sbuf s;
	sbuf_init(&s, out, outlen);
	if (!desc)
		return 0;
	if (!dotted || desc[0] != '(') {
		sbuf_puts(&s, desc);
		return s.len;
	}
	const char *d = desc + 1;
	sbuf_puts(&s, "(");
	for (bool first = true; *d && *d != ')'; first = false) {
		if (!first)
			sbuf_puts(&s, ", ");
		if (!sig_put_type(&s, &d)) {
			sbuf_init(&s, out, outlen);
			sbuf_puts(&s, desc);
			return s.len;
		}
	}
	sbuf_puts(&s, ")");
	return s.len;
}

size_t agentmap_frame_name(const struct agentmap_options *o, const char *class_sig,
			   const char *method, const char *desc, const char *file, int line,
			   char *out, size_t outlen)
{
	struct sbuf s;
	sbuf_init(&s, out, outlen);
	if (outlen == 0)
		return 0;
	s.len = agentmap_class_name(class_sig, o->dotted, out, outlen);
	sbuf_puts(&s, o->dotted ? "." : "::");
	sbuf_puts(&s, method ? method : "?");
	if (o->msig && desc && s.len + 1 < s.cap)
		s.len += agentmap_method_sig(desc, o->dotted, s.p + s.len, s.cap - s.len);
	if (file) {
		char pos[32];
		sbuf_puts(&s, "(");
		sbuf_puts(&s, file);
		if (line >= 0) {
			snprintf(pos, sizeof(pos), ":%d", line);
			sbuf_puts(&s, pos);
		}
		sbuf_puts(&s, ")");
	}
	return s.len;
}

size_t agentmap_join_frames(const char *const *frames, size_t n, char *out, size_t outlen)
{
	static const char sep[] = AGENTMAP_FRAME_SEP;
	static const char cut[] = "..." AGENTMAP_FRAME_SEP;
	struct sbuf s;
	sbuf_init(&s, out, outlen);
	if (outlen == 0 || n == 0)
		return 0;
	/* Keep frames[first..n): as many of the inner frames as fit beside
	 * the cut marker. The innermost frame is always kept. */
	size_t first = n - 1;
	size_t need = strlen(frames[n - 1]);
	while (first > 0) {
		size_t add = strlen(frames[first - 1]) + sizeof(sep) - 1;
		size_t marker = first - 1 > 0 ? sizeof(cut) - 1 : 0;
		if (need + add + marker >= outlen)
			break;
		need += add;
		first--;
	}
	if (first > 0 && need + sizeof(cut) - 1 < outlen)
		sbuf_puts(&s, cut);
	for (size_t i = first; i < n; i++) {
		if (i > first)
			sbuf_puts(&s, sep);
		sbuf_puts(&s, frames[i]);
	}
	return s.len;
}

/* ---- map lines ---------------------------------------------------------- */

void agentmap_buf_free(struct agentmap_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static int buf_reserve(struct agentmap_buf *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	if (more > AGENTMAP_BUF_MAX - b->len)
		return -E2BIG;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more)
		cap *= 2;
	if (cap > AGENTMAP_BUF_MAX)
		cap = AGENTMAP_BUF_MAX;
	char *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int agentmap_append_line(struct agentmap_buf *b, uint64_t start, uint64_t size, const char *name)
{
	if (size == 0)
		return 0;
	if (!name || !*name)
		name = "[unknown]";
	size_t nlen = strnlen(name, AGENTMAP_NAME_MAX);
	/* two 16-digit numbers, two spaces, the name, the newline */
	int r = buf_reserve(b, 16 + 1 + 16 + 1 + nlen + 1 + 1);
	if (r < 0)
		return r;
	char *p = b->data + b->len;
	int n = snprintf(p, b->cap - b->len, "%" PRIx64 " %" PRIx64 " ", start, size);
	p += n;
	for (size_t i = 0; i < nlen; i++) {
		unsigned char c = (unsigned char)name[i];
		*p++ = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	*p++ = '\n';
	b->len = (size_t)(p - b->data);
	return 0;
}

int agentmap_append_load(struct agentmap_buf *b, uint64_t t, uint64_t start, uint64_t size,
			 uint64_t mid)
{
	int r = buf_reserve(b, 1 + 20 + 3 * (1 + 16) + 1 + 1);
	if (r < 0)
		return r;
	b->len += (size_t)snprintf(b->data + b->len, b->cap - b->len,
				   "@%" PRIu64 " %" PRIx64 " %" PRIx64 " %" PRIx64 "\n", t, start,
				   size, mid);
	return 0;
}

int agentmap_append_unload(struct agentmap_buf *b, uint64_t t, uint64_t start, uint64_t mid)
{
	int r = buf_reserve(b, 1 + 20 + 2 * (1 + 16) + 1 + 1);
	if (r < 0)
		return r;
	b->len += (size_t)snprintf(b->data + b->len, b->cap - b->len,
				   "-%" PRIu64 " %" PRIx64 " %" PRIx64 "\n", t, start, mid);
	return 0;
}

int agentmap_append_safepoints_only(struct agentmap_buf *b)
{
	int r = buf_reserve(b, 4);
	if (r < 0)
		return r;
	memcpy(b->data + b->len, "!s\n", 3);
	b->len += 3;
	return 0;
}

int agentmap_append_status(struct agentmap_buf *b, const char *text)
{
	static const char head[] = "!nonsafepoints ";
	size_t n = strnlen(text, 512);
	int r = buf_reserve(b, sizeof(head) + n + 2);
	if (r < 0)
		return r;
	memcpy(b->data + b->len, head, sizeof(head) - 1);
	b->len += sizeof(head) - 1;
	for (size_t i = 0; i < n; i++)
		b->data[b->len++] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	b->data[b->len++] = '\n';
	return 0;
}

/* Add [from, to) named name to the run being built: extend it when the
 * name is the same, else write the run out and start a new one. */
static int ranges_add(struct agentmap_buf *b, uint64_t *run_start, const char **run_name,
		      uint64_t from, uint64_t to, const char *name)
{
	if (to <= from)
		return 0;
	if (*run_name && strcmp(*run_name, name) == 0)
		return 0;
	if (*run_name) {
		int r = agentmap_append_line(b, *run_start, from - *run_start, *run_name);
		if (r < 0)
			return r;
	}
	*run_start = from;
	*run_name = name;
	return 0;
}

int agentmap_append_ranges(struct agentmap_buf *b, uint64_t start, uint64_t size,
			   const uint64_t *pcs, const char *const *names, size_t n,
			   const char *root_name)
{
	uint64_t end = start + size;
	uint64_t cursor = start; /* everything before it is assigned */
	uint64_t run_start = start;
	const char *run_name = NULL;
	int r;

	for (size_t i = 0; i < n; i++) {
		uint64_t pc = pcs[i];
		/* pc == end: a call that is the last instruction of the code */
		if (pc < start || pc > end)
			continue;
		/* HotSpot's pc_desc_near: record i owns (pc[i-1], pc[i]]. */
		uint64_t to = pc < end ? pc + 1 : end;
		if (to <= cursor)
			continue; /* going backwards, or a second record at one pc */
		r = ranges_add(b, &run_start, &run_name, cursor, to,
			       names[i] ? names[i] : root_name);
		if (r < 0)
			return r;
		cursor = to;
	}
	/* After the last record (stubs of the method body): no scope, the root. */
	if ((r = ranges_add(b, &run_start, &run_name, cursor, end, root_name)) < 0)
		return r;
	if (!run_name)
		run_name = root_name;
	return agentmap_append_line(b, run_start, end - run_start, run_name);
}

/* ---- the file ----------------------------------------------------------- */

/* fstat(2) by system call: glibc 2.33 turned fstat into a versioned
 * symbol (fstat@GLIBC_2.33) that older glibc JVMs cannot resolve; the
 * kernel's struct stat is the libc one on 64-bit Linux. */
static int file_stat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

int agentmap_open(const char *dir, pid_t pid, bool truncate, struct fs_error *err)
{
	char name[64];
	snprintf(name, sizeof(name), "perf-%d.map", (int)pid);
	return agentmap_open_name(dir, name, truncate, err);
}

int agentmap_open_name(const char *dir, const char *name, bool truncate, struct fs_error *err)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* O_NONBLOCK: a FIFO planted there with no reader fails at once
	 * (ENXIO) instead of blocking the JVM's attach thread; regular files
	 * ignore it. */
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
	    0644);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			return fs_error_set(err, e,
					    "opening %s: it is a symbolic link, "
					    "refusing to follow it; remove it",
					    path);
		if (e == ENXIO)
			return fs_error_set(err, e,
					    "opening %s: it is a FIFO, refusing to write to it; "
					    "remove it",
					    path);
		return fs_error_set(err, e, "opening %s", path);
	}
	if (file_stat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return fs_error_set(err, e, "fstat %s", path);
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		close(fd);
		return fs_error_set(
		    err, EPERM,
		    "%s is not a regular file owned by uid %u with a single link "
		    "(mode %o, uid %u, %u links): refusing to write to it; remove it",
		    path, (unsigned)geteuid(), (unsigned)st.st_mode, (unsigned)st.st_uid,
		    (unsigned)st.st_nlink);
	}
	/* Readable by the host tools whatever the JVM's umask. */
	if ((st.st_mode & 07777) != 0644 && fchmod(fd, 0644) < 0) {
		int e = errno;
		close(fd);
		return fs_error_set(err, e, "chmod 0644 %s", path);
	}
	if (truncate && ftruncate(fd, 0) < 0) {
		int e = errno;
		close(fd);
		return fs_error_set(err, e, "truncating %s", path);
	}
	return fd;
}

int agentmap_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}
