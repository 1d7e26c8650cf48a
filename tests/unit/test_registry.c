/* test_registry.c - registry ids, serialisation, files and lookups. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"
#include "tap.h"

static void fill(struct registry_entry *e, const char *id)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->pid = getpid();
	e->ns_pid = 1;
	e->pid_ns = 4026531836ULL;
	e->mnt_ns = 4026531841ULL;
	e->uid = 1000;
	e->gid = 1000;
	e->created = 1700000000;
	snprintf(e->rootfs, sizeof(e->rootfs), "/var/lib/x/\"quoted\"\\rootfs");
	snprintf(e->mount_point, sizeof(e->mount_point), "/opt/flamesidecar");
	snprintf(e->profile, sizeof(e->profile), "30s\nnewline");
}

int main(void)
{
	struct fs_error err;
	const char *good[] = { "abc", "3f2a9c0d1e", "my_container-1.2", "A" };
	const char *bad[] = { "", ".", "..", "../x", "a/b", "-rf", ".hidden", "a b", "a\nb", "é" };
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		ok(registry_validate_id(good[i], &err) == 0, "id '%s' accepted", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ok(registry_validate_id(bad[i], &err) == -EINVAL, "id #%zu refused", i);
	char longid[REGISTRY_ID_MAX + 2];
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	ok(registry_validate_id(longid, &err) == -EINVAL, "id of %d chars refused", REGISTRY_ID_MAX + 1);

	struct registry_entry e, back;
	fill(&e, "c1");
	uid_t uid = getuid();
	(void)uid;
	char *json;
	size_t len;
	is_int(registry_to_json(&e, &json, &len, &err), 0, "serialise");
	is_int(registry_from_json(json, len, &back, &err), 0, "parse back");
	is_str(back.rootfs, e.rootfs, "rootfs with quotes and backslashes survives");
	is_str(back.profile, e.profile, "annotation with a newline survives");
	is_int(back.pid_ns, e.pid_ns, "namespace inode survives");
	ok(!strchr(json, '\n') || strchr(json, '\n') == json + len - 1, "one line of JSON");
	free(json);
	ok(registry_from_json("{\"id\":\"../x\",\"pid\":1}", 20, &back, &err) < 0, "bad id in a file refused");
	ok(registry_from_json("[]", 2, &back, &err) < 0, "non-object refused");
	ok(registry_from_json("{\"id\":\"a\",\"pid\":-1}", 19, &back, &err) < 0, "negative pid refused");

	char dir[] = "/tmp/fsreg.XXXXXX";
	ok(mkdtemp(dir) != NULL, "temp dir");
	char regdir[256];
	snprintf(regdir, sizeof(regdir), "%s/run/containers", dir);
	is_int(registry_write(regdir, &e, &err), 0, "write creates the directories");
	struct stat sb;
	ok(stat(regdir, &sb) == 0 && (sb.st_mode & 0777) == 0700, "registry dir is 0700");
	char path[512];
	snprintf(path, sizeof(path), "%s/c1.json", regdir);
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "entry is 0600");
	is_int(registry_read(regdir, "c1", &back, &err), 0, "read");
	ok(registry_entry_alive(&back) == 0, "entry with start time 0 is not alive");
	fill(&e, "c1-other");
	is_int(registry_write(regdir, &e, &err), 0, "second entry");
	fill(&e, "zz");
	is_int(registry_write(regdir, &e, &err), 0, "third entry");

	struct registry_entry *all;
	size_t n;
	is_int(registry_list(regdir, &all, &n, &err), 0, "list");
	is_int(n, 3, "three entries");
	ok(n == 3 && !strcmp(all[0].id, "c1") && !strcmp(all[2].id, "zz"), "sorted by id");
	free(all);
	is_int(registry_find(regdir, "c1", &back, &err), 0, "exact id wins over prefix");
	is_int(registry_find(regdir, "z", &back, &err), 0, "unique prefix");
	is_str(back.id, "zz", "prefix resolves");
	is_int(registry_find(regdir, "c", &back, &err), -EEXIST, "ambiguous prefix");
	is_int(registry_find(regdir, "nope", &back, &err), -ENOENT, "unknown id");
	ok(strstr(err.msg, "flamesidecar.io/enable=true") != NULL, "the message says how to register");

	/* A symlink planted as an entry is not followed. */
	snprintf(path, sizeof(path), "%s/evil.json", regdir);
	ok(symlink("/etc/passwd", path) == 0, "plant a symlink");
	ok(registry_read(regdir, "evil", &back, &err) == -ELOOP, "symlink entry refused");
	is_int(registry_remove(regdir, "zz", &err), 0, "remove");
	is_int(registry_remove(regdir, "zz", &err), -ENOENT, "remove again: ENOENT");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleanup");
	return tap_done();
}
