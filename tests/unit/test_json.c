/* test_json.c - the bounded JSON front end and config loading. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "json.h"
#include "log.h"
#include "tap.h"

#define PARSE(lit) parse(lit, sizeof(lit) - 1)
static int parse(const char *s, size_t len)
{
	struct fs_error err;
	yajl_val v = NULL;
	int r = json_parse(s, len, 16, &v, &err);
	if (v)
		yajl_tree_free(v);
	return r;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int main(void)
{
	tap_plan(48);
	is_int(PARSE("{\"a\":[1,2,{\"b\":\"c\"}]}"), 0, "plain JSON");
	is_int(PARSE("{\"a\":\"x\\u0000y\"}"), 0, "escaped NUL inside a string is JSON");
	is_int(PARSE("{\"a\":\"x\0y\"}"), -EINVAL, "raw NUL byte refused");
	is_int(PARSE("{\"a\":\"\xff\xfe\"}"), -EINVAL, "invalid UTF-8 refused");
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	is_int(parse(deep, 200), -EINVAL, "100-deep nesting refused at 16");
	is_int(PARSE("{\"a\":\"[[[[[[[[[[[[[[[[[[[[[[\"}"), 0, "brackets in strings do not count");
	is_int(PARSE("{\"a\":\"\\\"[[[[[[[[[[[[[[[[[[[[\"}"), 0, "escaped quote handled");
	is_int(PARSE("{"), -EINVAL, "truncated JSON refused");

#define NUMS "{\"pid\":4294967296,\"f\":1.5,\"s\":\"x\",\"pid2\":3,\"pid2\":4}"
	long long v;
	yajl_val root;
	struct fs_error err;
	ok(json_parse(NUMS, sizeof(NUMS) - 1, 4, &root, &err) == 0, "parse numbers");
	is_int(json_get_int(root, "pid", &v), 0, "2^32 is an integer");
	is_int(v, 4294967296LL, "value");
	is_int(json_get_int(root, "f", &v), -ERANGE, "a double is not an integer");
	is_int(json_get_int(root, "s", &v), -ENOENT, "a string is not a number");
	json_get_int(root, "pid2", &v);
	is_int(v, 4, "the last duplicate key wins");
	yajl_tree_free(root);

	int p[2];
	ok(pipe(p) == 0, "pipe");
	ok(write(p[1], "0123456789", 10) == 10, "write");
	close(p[1]);
	char *buf;
	size_t len;
	is_int(json_read_fd(p[0], 5, &buf, &len, &err), -E2BIG, "input over the cap refused");
	close(p[0]);

	char dir[] = "/tmp/fscfg.XXXXXX";
	ok(mkdtemp(dir) != NULL, "temp dir");
	char path[256];
	snprintf(path, sizeof(path), "%s/c.json", dir);
	struct fs_config cfg;
	is_int(config_load(NULL, &cfg, &err) == 0 || access(CONFIG_DEFAULT_PATH, F_OK) == 0, 1,
	       "missing default config is fine");
	is_int(config_load(path, &cfg, &err), -ENOENT, "missing explicit config is an error");
	write_file(path,
		   "{\"enable\":\"always\",\"mount_point\":\"/x/y\",\"hook_timeout_ms\":500}");
	is_int(config_load(path, &cfg, &err), 0, "valid config");
	is_int(cfg.enable, CONFIG_ENABLE_ALWAYS, "enable always");
	is_str(cfg.mount_point, "/x/y", "mount point");
	is_int(cfg.hook_timeout_ms, 500, "timeout");
	is_str(cfg.run_dir, "/run/flamesidecar", "default run dir kept");
	is_int(cfg.preserve_frame_pointer, 1, "preserve_frame_pointer defaults to true");
	write_file(path, "{\"preserve_frame_pointer\":false}");
	ok(config_load(path, &cfg, &err) == 0 && cfg.preserve_frame_pointer == 0,
	   "preserve_frame_pointer false");
	write_file(path, "{\"preserve_frame_pointer\":\"no\"}");
	ok(config_load(path, &cfg, &err) < 0 && strstr(err.msg, "preserve_frame_pointer"),
	   "preserve_frame_pointer not a boolean: refused, key named");
	write_file(path, "{}");
	ok(config_load(path, &cfg, &err) == 0 && cfg.debug_nonsafepoints == 1,
	   "debug_nonsafepoints defaults to true");
	write_file(path, "{\"debug_nonsafepoints\":false}");
	ok(config_load(path, &cfg, &err) == 0 && cfg.debug_nonsafepoints == 0,
	   "debug_nonsafepoints false");
	write_file(path, "{\"mount_point\":\"/x/../etc\"}");
	ok(config_load(path, &cfg, &err) < 0 && strstr(err.msg, "mount_point"),
	   "'..' in a path refused, key named");
	write_file(path, "{\"mount_point\":\"relative\"}");
	ok(config_load(path, &cfg, &err) < 0, "relative path refused");
	write_file(path, "{\"enable\":\"sometimes\"}");
	ok(config_load(path, &cfg, &err) < 0, "bad enable refused");
	write_file(path, "{\"hook_timeout_ms\":999999999}");
	ok(config_load(path, &cfg, &err) < 0, "out-of-range number refused");
	write_file(path, "{\"mount_point\":\"/\"}");
	ok(config_load(path, &cfg, &err) < 0, "mount point / refused");
	is_int(cfg.max_stack_table_mib, 256, "max_stack_table_mib defaults to 256");
	write_file(path, "{\"max_stack_table_mib\":1}");
	ok(config_load(path, &cfg, &err) == 0 && cfg.max_stack_table_mib == 1,
	   "max_stack_table_mib 1");
	write_file(path, "{\"max_stack_table_mib\":0}");
	ok(config_load(path, &cfg, &err) < 0 && strstr(err.msg, "max_stack_table_mib"),
	   "max_stack_table_mib 0 refused, key named");
	/* log_level: a level name or refused, key named. */
	ok(config_load(path, &cfg, &err) < 0 && cfg.log_level == FS_LOG_INFO,
	   "log_level defaults to info");
	write_file(path, "{\"log_level\":\"debug\"}");
	ok(config_load(path, &cfg, &err) == 0 && cfg.log_level == FS_LOG_DEBUG, "log_level debug");
	write_file(path, "{\"log_level\":\"verbose\"}");
	ok(config_load(path, &cfg, &err) < 0 && strstr(err.msg, "log_level"),
	   "log_level verbose refused, key named");

	/* json_read_at: beneath a directory, never through a symlink. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	yajl_val tree = NULL;
	write_file(path, "{\"a\":{\"b\":1}}");
	const char *base = strrchr(path, '/') + 1;
	is_int(json_read_at(dfd, base, 1024, 4, &tree, &err), 0, "json_read_at reads and parses");
	ok(tree && json_get_object(tree, "a"), "the tree is there");
	if (tree)
		yajl_tree_free(tree);
	is_int(json_read_at(dfd, base, 4, 4, &tree, NULL), -E2BIG, "over max: -E2BIG");
	is_int(json_read_at(dfd, base, 1024, 1, &tree, &err), -EINVAL,
	       "deeper than allowed: -EINVAL");
	is_int(json_read_at(dfd, "missing.json", 1024, 4, &tree, &err), -ENOENT,
	       "missing: -ENOENT");
	ok(symlinkat(base, dfd, "link.json") == 0 &&
	       json_read_at(dfd, "link.json", 1024, 4, &tree, &err) == -ELOOP &&
	       strstr(err.msg, "link.json") && tree == NULL,
	   "a symlink is not followed (-ELOOP, named)");
	close(dfd);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleanup");
	return tap_done();
}
