/* json.c - see json.h */
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"

/* Walk the text once: depth of [ and { outside strings. Cheap, and it keeps
 * yajl from building (and later recursively freeing) a deep tree. 0, or -1
 * when it goes deeper than max_depth (the caller says why). */
static int json_check_depth(const char *buf, size_t len, unsigned max_depth)
{
	unsigned depth = 0;
	int in_str = 0;
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return -1;
		} else if (c == ']' || c == '}') {
			if (depth)
				depth--;
		}
	}
	return 0;
}

int json_parse(const char *buf, size_t len, unsigned max_depth, yajl_val *out, struct fs_error *err)
{
	*out = NULL;
	if (memchr(buf, '\0', len))
		return fs_error_set(err, EINVAL, "JSON contains a NUL byte");
	if (json_check_depth(buf, len, max_depth))
		return fs_error_set(err, EINVAL, "JSON nested deeper than %u levels", max_depth);
	cleanup_free char *copy = malloc(len + 1);
	if (!copy)
		return fs_error_set(err, ENOMEM, "JSON of %zu bytes", len);
	memcpy(copy, buf, len);
	copy[len] = '\0';
	char ebuf[256];
	ebuf[0] = '\0';
	/* yajl_tree_parse validates UTF-8 in strings by default. */
	yajl_val v = yajl_tree_parse(copy, ebuf, sizeof(ebuf));
	if (!v) {
		/* Keep the first line of yajl's message only. */
		char *nl = strchr(ebuf, '\n');
		if (nl)
			*nl = '\0';
		return fs_error_set(err, EINVAL, "invalid JSON (%s)",
				    ebuf[0] ? ebuf : "parse error");
	}
	*out = v;
	return 0;
}

int json_read_fd(int fd, size_t max, char **out, size_t *len, struct fs_error *err)
{
	return fileio_read_fd(fd, max, out, len, err);
}

int json_read_at(int dir_fd, const char *name, size_t max, unsigned max_depth, yajl_val *out,
		 struct fs_error *err)
{
	*out = NULL;
	cleanup_close int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s", name);
	cleanup_free char *buf = NULL;
	size_t len;
	int r = json_read_fd(fd, max, &buf, &len, err);
	if (r == 0)
		r = json_parse(buf, len, max_depth, out, err);
	if (r < 0)
		return err ? fs_error_wrap(err, "%s", name) : r;
	return 0;
}

static yajl_val json_get(yajl_val obj, const char *key)
{
	if (!obj || !YAJL_IS_OBJECT(obj))
		return NULL;
	/* Last duplicate wins, as in most parsers. */
	yajl_val found = NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key))
			found = obj->u.object.values[i];
	return found;
}

const char *json_get_string(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

int json_get_int(yajl_val obj, const char *key, long long *out)
{
	yajl_val v = json_get(obj, key);
	if (!v || !YAJL_IS_NUMBER(v))
		return -ENOENT;
	if (!YAJL_IS_INTEGER(v))
		return -ERANGE; /* a double, or an integer yajl could not hold */
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

yajl_val json_get_object(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);
	return v && YAJL_IS_OBJECT(v) ? v : NULL;
}

void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_write_value(FILE *f, yajl_val v)
{
	switch (v->type) {
	case yajl_t_string: json_write_string(f, YAJL_GET_STRING(v)); break;
	case yajl_t_number: fputs(YAJL_GET_NUMBER(v), f); break;
	case yajl_t_true: fputs("true", f); break;
	case yajl_t_false: fputs("false", f); break;
	case yajl_t_null: fputs("null", f); break;
	case yajl_t_object:
		fputc('{', f);
		for (size_t i = 0; i < v->u.object.len; i++) {
			if (i)
				fputc(',', f);
			json_write_string(f, v->u.object.keys[i]);
			fputc(':', f);
			json_write_value(f, v->u.object.values[i]);
		}
		fputc('}', f);
		break;
	case yajl_t_array:
		fputc('[', f);
		for (size_t i = 0; i < v->u.array.len; i++) {
			if (i)
				fputc(',', f);
			json_write_value(f, v->u.array.values[i]);
		}
		fputc(']', f);
		break;
	default: fputs("null", f); break; /* yajl_t_any: never in a parsed tree */
	}
}

int json_has_escaped_nul(const char *in, size_t len)
{
	for (size_t i = 0; i + 6 <= len; i++)
		if (in[i] == '\\' && in[i + 1] == 'u' && !memcmp(in + i + 2, "0000", 4))
			return 1;
	return 0;
}
