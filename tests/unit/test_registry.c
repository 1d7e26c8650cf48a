/* test_registry.c - registry ids, serialisation, files and lookups. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
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

/* This process's start time (proc_start_time): an entry with it is alive. */
static uint64_t self_start(void)
{
	uint64_t v = 0;
	proc_start_time(getpid(), &v, NULL);
	return v;
}

/* Stale entries disappear when read: only those proven dead, and never a
 * new container's entry that took a dead one's id meanwhile. */
static void sweep(const char *regdir)
{
	struct fs_error err;
	struct registry_entry e, back, *all;
	size_t n;
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	fill(&e, "dead-gone"); /* no such process any more */
	e.pid = child;
	is_int(registry_write(regdir, &e, &err), 0, "entry of an exited process");
	fill(&e, "dead-reused"); /* our pid, another start time: pid reused */
	e.start_time = self_start() + 1;
	is_int(registry_write(regdir, &e, &err), 0, "entry of a reused pid");
	fill(&e, "dead-raced");
	is_int(registry_write(regdir, &e, &err), 0, "entry that a new container will replace");
	ok(registry_entry_dead(&e) && !registry_entry_alive(&e), "start time 0: proven dead");
	fill(&e, "live");
	e.start_time = self_start();
	ok(!registry_entry_dead(&e), "a live entry is not dead");
	is_int(registry_write(regdir, &e, &err), 0, "live entry");
	is_int(registry_list(regdir, &all, &n, NULL, NULL, &err), 0, "list before the sweep");
	size_t before = n;
	/* After the listing, a new container of id dead-raced writes its
	 * (live) entry: the sweep must leave that one. */
	fill(&e, "dead-raced");
	e.start_time = self_start();
	is_int(registry_write(regdir, &e, &err), 0, "dead-raced replaced by a live entry");
	is_int(registry_sweep(regdir, all, &n), 2, "two dead entries swept");
	is_int(n, before - 2, "the array drops the two removed");
	int has_live = 0, raced_live = 0;
	for (size_t i = 0; i < n; i++) {
		has_live |= !strcmp(all[i].id, "live");
		raced_live |= !strcmp(all[i].id, "dead-raced") && registry_entry_alive(&all[i]);
	}
	ok(has_live, "the live entry stays in the array");
	ok(raced_live, "the replaced entry is in the array as it is now (alive)");
	free(all);
	ok(registry_read(regdir, "dead-gone", &back, &err) == -ENOENT, "dead-gone removed");
	ok(registry_read(regdir, "dead-reused", &back, &err) == -ENOENT, "dead-reused removed");
	is_int(registry_read(regdir, "dead-raced", &back, &err), 0,
	       "the new entry under a swept id is kept");
	ok(registry_entry_alive(&back), "and it is the live one");
	is_int(registry_read(regdir, "live", &back, &err), 0, "live kept");
	is_int(registry_remove_dead(regdir, "live"), 0, "remove_dead keeps a live entry");
	is_int(registry_remove_dead(regdir, "../x"), 0, "remove_dead: ../x is not an id");
	is_int(registry_remove_dead(regdir, "nope"), 0, "remove_dead: no such entry");
	/* A pid read in another pid namespace proves nothing here (a sidecar
	 * run without the host's pid namespace must not sweep live entries). */
	struct stat ns;
	ok(stat("/proc/self/ns/pid", &ns) == 0, "own pid namespace");
	fill(&e, "other-ns");
	e.pid = child; /* gone here */
	e.host_pid_ns = (uint64_t)ns.st_ino + 1;
	ok(!registry_entry_dead(&e), "pid of another namespace: not proven dead");
	is_int(registry_write(regdir, &e, &err), 0, "entry from another pid namespace");
	is_int(registry_read(regdir, "other-ns", &back, &err), 0, "read back");
	is_int(back.host_pid_ns, e.host_pid_ns, "host_pid_ns survives");
	is_int(registry_remove_dead(regdir, "other-ns"), 0, "and is not removed");
	e.host_pid_ns = (uint64_t)ns.st_ino;
	ok(registry_entry_dead(&e), "the same pid recorded in our namespace: dead");
	is_int(registry_write(regdir, &e, &err), 0, "rewritten with our namespace");
	is_int(registry_remove_dead(regdir, "other-ns"), 1, "now removed");

	/* A lookup sweeps too: a dead entry is not found, and its file goes. */
	fill(&e, "dead-lookup");
	is_int(registry_write(regdir, &e, &err), 0, "another dead entry");
	is_int(registry_find(regdir, "dead-lookup", &back, &err), -ENOENT,
	       "a lookup does not find a dead entry");
	ok(registry_read(regdir, "dead-lookup", &back, &err) == -ENOENT, "and removed it");
	registry_remove(regdir, "live", &err);
	registry_remove(regdir, "dead-raced", &err);
}

static void lookups(void)
{
	struct fs_error err;
	struct registry_entry e[6];
	const char *ids[] = {"aaa111", "aaa222", "bbb333", "ccc444", "ddd555", "eee666"};
	for (size_t i = 0; i < 6; i++)
		fill(&e[i], ids[i]);
	snprintf(e[0].name, sizeof(e[0].name), "web");
	snprintf(e[1].name, sizeof(e[1].name), "bbb333"); /* a name that is another's id */
	snprintf(e[2].name, sizeof(e[2].name), "dup");
	snprintf(e[3].name, sizeof(e[3].name), "dup");
	snprintf(e[4].pod, sizeof(e[4].pod), "checkout");
	snprintf(e[4].pod_namespace, sizeof(e[4].pod_namespace), "shop");
	snprintf(e[4].container, sizeof(e[4].container), "app");
	snprintf(e[5].pod, sizeof(e[5].pod), "checkout");
	snprintf(e[5].pod_namespace, sizeof(e[5].pod_namespace), "shop");
	snprintf(e[5].container, sizeof(e[5].container), "envoy");
	/* Alive: pid getpid() with its real start time; the others are stale. */
	struct registry_entry *alive = &e[3];
	alive->start_time = self_start();
	ok(registry_entry_alive(alive), "one live entry");

	/* A triggered profile's lookup: that id, that process, or nothing. */
	struct registry_query x = {
	    .ref = "ccc444", .exact_pid = alive->pid, .exact_start = alive->start_time};
	is_int(registry_lookup(e, 6, &x, &err), 3, "exact process: the live entry");
	x.exact_start++;
	is_int(registry_lookup(e, 6, &x, &err), -ESRCH, "exact process: another start time");
	x.ref = "ccc";
	is_int(registry_lookup(e, 6, &x, &err), -ENOENT, "exact process: never an id prefix");
	x.ref = "dup";
	is_int(registry_lookup(e, 6, &x, &err), -ENOENT, "exact process: never a name");

	struct registry_query q = {.ref = "aaa111"};
	is_int(registry_lookup(e, 6, &q, &err), 0, "exact id");
	q.ref = "web";
	is_int(registry_lookup(e, 6, &q, &err), 0, "name");
	q.ref = "bbb333";
	is_int(registry_lookup(e, 6, &q, &err), 2, "an exact id wins over a name (Docker's order)");
	q.ref = "bbb";
	is_int(registry_lookup(e, 6, &q, &err), 2, "unique id prefix");
	q.ref = "aaa";
	is_int(registry_lookup(e, 6, &q, &err), -EEXIST, "ambiguous prefix");
	ok(strstr(err.msg, "aaa111") && strstr(err.msg, "aaa222 (bbb333, stale)"),
	   "the error lists the candidates: %s", err.msg);
	q.ref = "dup";
	is_int(registry_lookup(e, 6, &q, &err), 3, "a duplicate name: the only live one");
	q.ref = "ccc";
	is_int(registry_lookup(e, 6, &q, &err), 3, "unique prefix of the live one");
	snprintf(e[2].id, sizeof(e[2].id), "ccc333");
	is_int(registry_lookup(e, 6, &q, &err), -EEXIST,
	       "a prefix of a live and a stale id is still ambiguous");
	snprintf(e[2].id, sizeof(e[2].id), "bbb333");
	q.ref = "dup";
	alive->start_time = 0;
	is_int(registry_lookup(e, 6, &q, &err), -EEXIST, "a duplicate name, none alive: ambiguous");
	ok(strstr(err.msg, "name 'dup' matches 2") != NULL, "says so: %s", err.msg);
	/* Both alive: the engine's record of the name, never a claim of it. */
	e[2].start_time = e[3].start_time = self_start();
	e[2].pid = e[3].pid;
	e[2].name_source = REGISTRY_NAME_ANNOTATION;
	e[3].name_source = REGISTRY_NAME_ANNOTATION;
	is_int(registry_lookup(e, 6, &q, &err), -EEXIST, "two live claims of a name: ambiguous");
	e[3].name_source = REGISTRY_NAME_ENGINE;
	is_int(registry_lookup(e, 6, &q, &err), 3,
	       "a live claim and the engine's record: the record");
	e[2].name_source = REGISTRY_NAME_ENGINE;
	e[3].name_source = REGISTRY_NAME_ANNOTATION;
	is_int(registry_lookup(e, 6, &q, &err), 2, "whichever entry holds the record");
	e[2].start_time = e[3].start_time = 0;
	e[2].name_source = e[3].name_source = REGISTRY_NAME_NONE;
	q.ref = "nope";
	is_int(registry_lookup(e, 6, &q, &err), -ENOENT, "unknown");
	ok(strstr(err.msg, "'nope'") && strstr(err.msg, "flamesidecar list"), "what to do: %s",
	   err.msg);
	q.ref = "../etc";
	is_int(registry_lookup(e, 6, &q, &err), -EINVAL, "not an id");

	struct registry_query p = {.pod = "checkout", .container = "envoy"};
	is_int(registry_lookup(e, 6, &p, &err), 5, "pod and container");
	p.container = NULL;
	is_int(registry_lookup(e, 6, &p, &err), -EEXIST, "pod of two containers");
	ok(strstr(err.msg, "shop/checkout app") && strstr(err.msg, "--container NAME"),
	   "lists them and says --container: %s", err.msg);
	p.pod_namespace = "other";
	is_int(registry_lookup(e, 6, &p, &err), -ENOENT, "pod in another namespace");
	ok(strstr(err.msg, "in namespace other") != NULL, "says which: %s", err.msg);
	p.pod_namespace = "shop";
	p.container = "app";
	is_int(registry_lookup(e, 6, &p, &err), 4, "namespace, pod, container");
	p.ref = "aaa111";
	is_int(registry_lookup(e, 6, &p, &err), -EINVAL, "both an id and --pod");
	struct registry_query bad = {.ref = "x", .container = "app"};
	is_int(registry_lookup(e, 6, &bad, &err), -EINVAL, "--container without --pod");
	is_int(registry_lookup(NULL, 0, &q, &err), -EINVAL, "bad query even with no entries");
	q.ref = "x";
	is_int(registry_lookup(NULL, 0, &q, &err), -ENOENT, "empty registry");
}

static void count_warning(void *ctx, const char *msg)
{
	(*(int *)ctx)++;
	tap_diag("warning: %s", msg);
}

/* A registry (or run_dir) that others could write, or a symlink, is
 * refused with a reason; put back, it is accepted again. */
static void dir_checks(const char *dir, const char *regdir)
{
	struct fs_error err;
	struct registry_entry back;
	char run[300], alt[300];
	snprintf(run, sizeof(run), "%s/run", dir);
	ok(chmod(regdir, 0777) == 0, "make the registry 0777");
	ok(registry_read(regdir, "c1", &back, &err) == -EPERM && strstr(err.msg, "mode 0777"),
	   "a world-writable registry is refused: %s", err.msg);
	ok(chmod(regdir, 0700) == 0 && chmod(run, 0775) == 0, "make run_dir 0775");
	ok(registry_read(regdir, "c1", &back, &err) == -EPERM && strstr(err.msg, "/run:"),
	   "a group-writable run_dir is refused: %s", err.msg);
	ok(chmod(run, 0700) == 0, "run_dir 0700 again");
	if (geteuid() == 0) {
		ok(chown(regdir, 1000, 1000) == 0, "give the registry to uid 1000");
		ok(registry_read(regdir, "c1", &back, &err) == -EPERM &&
		       strstr(err.msg, "owned by uid 1000"),
		   "a registry owned by another uid is refused: %s", err.msg);
		ok(chown(regdir, 0, 0) == 0, "back to root");
	} else {
		tap_skip(3, "needs root to give the registry away");
	}
	snprintf(alt, sizeof(alt), "%s/elsewhere", dir);
	ok(rename(regdir, alt) == 0 && symlink(alt, regdir) == 0,
	   "replace the registry with a symlink to a good directory");
	ok(registry_read(regdir, "c1", &back, &err) < 0 && strstr(err.msg, "symlink"),
	   "a symlinked registry is refused: %s", err.msg);
	ok(unlink(regdir) == 0 && rename(alt, regdir) == 0, "put it back");
	is_int(registry_read(regdir, "c1", &back, &err), 0, "accepted again");
}

int main(void)
{
	tap_plan(162);
	struct fs_error err;
	const char *good[] = {"abc", "3f2a9c0d1e", "my_container-1.2", "A"};
	const char *bad[] = {"", ".", "..", "../x", "a/b", "-rf", ".hidden", "a b", "a\nb", "é"};
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		ok(registry_validate_id(good[i], &err) == 0, "id '%s' accepted", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ok(registry_validate_id(bad[i], &err) == -EINVAL, "id #%zu refused", i);
	char longid[REGISTRY_ID_MAX + 2];
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	ok(registry_validate_id(longid, &err) == -EINVAL, "id of %d chars refused",
	   REGISTRY_ID_MAX + 1);

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
	ok(registry_from_json("{\"id\":\"../x\",\"pid\":1}", 20, &back, &err) < 0,
	   "bad id in a file refused");
	ok(registry_from_json("[]", 2, &back, &err) < 0, "non-object refused");
	ok(registry_from_json("{\"id\":\"a\",\"pid\":-1}", 19, &back, &err) < 0,
	   "negative pid refused");

	const char *goodn[] = {"web", "flamesidecar-demo-7409", "a.b_c-d", "0"};
	const char *badn[] = {"", "-x", ".x", "_x", "a/b", "a b", "a:b", "é"};
	for (size_t i = 0; i < sizeof(goodn) / sizeof(*goodn); i++)
		ok(registry_validate_name(goodn[i], &err) == 0, "name '%s' accepted", goodn[i]);
	for (size_t i = 0; i < sizeof(badn) / sizeof(*badn); i++)
		ok(registry_validate_name(badn[i], &err) == -EINVAL, "name #%zu refused", i);
	fill(&e, "n1");
	snprintf(e.engine, sizeof(e.engine), "kubernetes");
	snprintf(e.pod, sizeof(e.pod), "checkout-7d9f");
	snprintf(e.pod_namespace, sizeof(e.pod_namespace), "shop");
	snprintf(e.container, sizeof(e.container), "app");
	is_int(registry_to_json(&e, &json, &len, &err), 0, "serialise with names");
	is_int(registry_from_json(json, len, &back, &err), 0, "parse back with names");
	is_str(back.pod, "checkout-7d9f", "pod survives");
	is_str(back.pod_namespace, "shop", "namespace survives");
	is_str(back.container, "app", "container survives");
	is_str(back.engine, "kubernetes", "engine survives");
	free(json);
	/* Where the name came from survives, and is what the hook said, not
	 * what the engine's spelling suggests. */
	snprintf(e.name, sizeof(e.name), "web");
	snprintf(e.engine, sizeof(e.engine), "docker");
	e.name_source = REGISTRY_NAME_ANNOTATION;
	is_int(registry_to_json(&e, &json, &len, &err), 0, "serialise a claimed name");
	is_int(registry_from_json(json, len, &back, &err), 0, "parse it back");
	is_int(back.name_source, REGISTRY_NAME_ANNOTATION,
	       "a claim stays a claim, engine \"docker\" or not");
	free(json);
	e.name_source = REGISTRY_NAME_ENGINE;
	is_int(registry_to_json(&e, &json, &len, &err), 0, "serialise an engine's name");
	is_int(registry_from_json(json, len, &back, &err), 0, "parse it back");
	is_int(back.name_source, REGISTRY_NAME_ENGINE, "the engine's record stays one");
	free(json);
	const char *older[][2] = {
	    {"{\"engine\":\"podman\",\"name\":\"w\"}", "engine state"},
	    {"{\"engine\":\"nerdctl\",\"name\":\"w\"}", "annotation"},
	    {"{\"engine\":\"docker\",\"name\":\"w\",\"name_source\":\"Engine\"}", "annotation"},
	    {"{\"engine\":\"kubernetes\",\"pod\":\"p\"}", "annotation"},
	    {"{\"engine\":\"docker\",\"name\":\"w\",\"pod\":\"p\"}", "annotation"},
	};
	for (size_t i = 0; i < sizeof(older) / sizeof(older[0]); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf),
			 "{\"id\":\"a\",\"pid\":1,\"start_time\":0,\"ns_pid\":1,\"pid_ns\":1,"
			 "\"mnt_ns\":1,\"uid\":0,\"gid\":0,\"created\":0,\"names\":%s}",
			 older[i][0]);
		const char *got = registry_from_json(buf, strlen(buf), &back, &err) == 0
				      ? registry_entry_label_source(&back)
				      : "error";
		is_str(got, older[i][1], "source of %s", older[i][0]);
	}
	is_str(registry_name_source_str(REGISTRY_NAME_NONE) ? "?" : "null", "null",
	       "no name, no source");
	const char *evil = "{\"id\":\"a\",\"pid\":1,\"start_time\":0,\"ns_pid\":1,\"pid_ns\":1,"
			   "\"mnt_ns\":1,\"uid\":0,\"gid\":0,\"created\":0,"
			   "\"names\":{\"name\":\"../x\"}}";
	ok(registry_from_json(evil, strlen(evil), &back, &err) == -EINVAL,
	   "bad name in a file refused");
	lookups();
	fill(&e, "c1");

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
	dir_checks(dir, regdir);
	registry_remove(regdir, "c1", &err); /* dead (start time 0): not part of sweep() */
	sweep(regdir);
	/* Live entries from here on: lookups remove dead ones. */
	fill(&e, "c1");
	e.start_time = self_start();
	is_int(registry_write(regdir, &e, &err), 0, "c1, live");
	fill(&e, "c1-other");
	e.start_time = self_start();
	is_int(registry_write(regdir, &e, &err), 0, "second entry");
	fill(&e, "zz");
	e.start_time = self_start();
	is_int(registry_write(regdir, &e, &err), 0, "third entry");

	struct registry_entry *all;
	size_t n;
	is_int(registry_list(regdir, &all, &n, NULL, NULL, &err), 0, "list");
	is_int(n, 3, "three entries");
	ok(n == 3 && !strcmp(all[0].id, "c1") && !strcmp(all[2].id, "zz"), "sorted by id");
	free(all);
	is_int(registry_find(regdir, "c1", &back, &err), 0, "exact id wins over prefix");
	is_int(registry_find(regdir, "z", &back, &err), 0, "unique prefix");
	is_str(back.id, "zz", "prefix resolves");
	is_int(registry_find(regdir, "c", &back, &err), -EEXIST, "ambiguous prefix");
	is_int(registry_find(regdir, "nope", &back, &err), -ENOENT, "unknown id");
	ok(strstr(err.msg, "flamesidecar.io/enable=true") != NULL,
	   "the message says how to register");

	/* A symlink planted as an entry is not followed. */
	snprintf(path, sizeof(path), "%s/evil.json", regdir);
	ok(symlink("/etc/passwd", path) == 0, "plant a symlink");
	ok(registry_read(regdir, "evil", &back, &err) == -ELOOP, "symlink entry refused");
	/* listing skips it, and says so through the caller's callback only */
	int warned = 0;
	is_int(registry_list(regdir, &all, &n, count_warning, &warned, &err), 0, "list again");
	is_int(n, 3, "the planted entry is skipped");
	is_int(warned, 1, "one warning, through the callback (lib/ never prints)");
	free(all);
	is_int(registry_remove(regdir, "zz", &err), 0, "remove");
	is_int(registry_remove(regdir, "zz", &err), -ENOENT, "remove again: ENOENT");
	/* Through the directory's fd, as the hook undoes an entry whose
	 * mount failed: the id is validated first. */
	{
		int rfd = registry_dir_open(regdir, &err);
		ok(rfd >= 0, "registry_dir_open");
		snprintf(e.id, sizeof(e.id), "byfd");
		is_int(registry_write_at(rfd, regdir, &e, &err), 0, "write_at");
		is_int(registry_remove_at(rfd, "byfd"), 0, "remove_at");
		is_int(registry_remove_at(rfd, "byfd"), -ENOENT, "remove_at again: ENOENT");
		is_int(registry_remove_at(rfd, "../x"), -EINVAL, "remove_at: ../x is not an id");
		close(rfd);
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleanup");
	return tap_done();
}
