/* json.h - bounded JSON parsing on top of yajl's tree API, and a tiny
 * writer. Everything container-controlled goes through json_parse, which
 * refuses oversize input, NUL bytes, invalid UTF-8 and deep nesting before
 * yajl builds a tree (yajl_tree_free recurses, so depth must be capped). */
#ifndef FS_JSON_H
#define FS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "error.h"

#define JSON_MAX_DEPTH 64

/* Parse buf[0..len) (need not be NUL-terminated). max_depth bounds
 * array/object nesting. On success *out is the tree (free with
 * yajl_tree_free). 0 or -EINVAL/-ENOMEM. */
int json_parse(const char *buf, size_t len, unsigned max_depth, yajl_val *out,
	       struct fs_error *err);

/* A JSON document from fd: fileio_read_fd (at most max bytes, -E2BIG
 * beyond). */
int json_read_fd(int fd, size_t max, char **out, size_t *len, struct fs_error *err);

/* The JSON file name beneath dir_fd (never through a symlink: O_NOFOLLOW),
 * at most max bytes, nesting at most max_depth: *out is the tree (free
 * with yajl_tree_free, or hold it in a cleanup_json). 0, or -errno of the
 * open (-ENOENT: no such file), the read (-E2BIG) or the parse (-EINVAL);
 * err (may be NULL) says which and on what. */
int json_read_at(int dir_fd, const char *name, size_t max, unsigned max_depth, yajl_val *out,
		 struct fs_error *err);

/* Lookups on an object: NULL when absent or of another type. */
const char *json_get_string(yajl_val obj, const char *key);
int json_get_int(yajl_val obj, const char *key, long long *out); /* 0 / -ENOENT / -ERANGE */
yajl_val json_get_object(yajl_val obj, const char *key);

static inline void json_valp(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}
#define cleanup_json __attribute__((cleanup(json_valp)))

/* Append a JSON string literal (quoted, escaped) for s to f. */
void json_write_string(FILE *f, const char *s);

/* Append a parsed value to f: key order, duplicate keys and the exact
 * spelling of every number kept; strings keep their value (their escaping
 * may change); no white space. */
void json_write_value(FILE *f, yajl_val v);

/* Does the text hold a \u0000 escape? yajl decodes it into a NUL that
 * cuts the string short, so such a document cannot be rewritten faithfully
 * by json_write_value. */
int json_has_escaped_nul(const char *in, size_t len);

#endif
