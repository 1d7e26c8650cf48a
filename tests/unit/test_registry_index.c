/* test_registry_index.c - the name index beside the registry entries, and
 * lookups that read O(1) entries of a registry of 1,000 (registry.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "registry.h"
#include "tap.h"

#define MANY 1000

static uint64_t self_start(void)
{
	uint64_t v = 0;
	proc_start_time(getpid(), &v, NULL);
	return v;
}

/* A live entry (this process) named name (NULL: none). */
static void fill(struct registry_entry *e, const char *id, const char *name)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->pid = getpid();
	e->start_time = self_start();
	e->ns_pid = 1;
	e->uid = 1000;
	e->gid = 1000;
	snprintf(e->rootfs, sizeof(e->rootfs), "/var/lib/x/%s/rootfs", id);
	if (name)
		snprintf(e->name, sizeof(e->name), "%s", name);
}

/* What the hook does: the entry, then its names. */
static int hook_register(const char *regdir, const struct registry_entry *e)
{
	struct fs_error err;
	int r = registry_write(regdir, e, &err);
	if (r < 0)
		return r;
	int dfd = registry_dir_open(regdir, &err);
	if (dfd < 0)
		return dfd;
	r = registry_index_add(dfd, e, &err);
	close(dfd);
	return r;
}

static int exists(const char *regdir, const char *rel)
{
	char path[1024];
	struct stat sb;
	snprintf(path, sizeof(path), "%s/%s", regdir, rel);
	return lstat(path, &sb) == 0;
}

static void touch(const char *regdir, const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", regdir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	mkdir(path, 0700); /* the name's directory, when missing */
	*slash = '/';
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd >= 0)
		close(fd);
}

/* Entry files opened in regdir while the watch ran: IN_OPEN events of
 * names ending in .json. */
static int count_entry_opens(int ino)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	int opens = 0;
	ssize_t len;
	while ((len = read(ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			size_t l = ev->len ? strlen(ev->name) : 0;
			if ((ev->mask & IN_OPEN) && l > 5 && !strcmp(ev->name + l - 5, ".json"))
				opens++;
			p += sizeof(*ev) + ev->len;
		}
	}
	return opens;
}

/* The index: built by the first lookup when missing, kept by the hook,
 * and only a hint (stale and lying files are dropped, dead entries never
 * returned). */
static void index_rules(const char *regdir)
{
	struct fs_error err;
	struct registry_entry e, back;
	fill(&e, "aaa111", "web");
	is_int(hook_register(regdir, &e), 0, "an older registry: entry, no index to add to");
	ok(!exists(regdir, "names"), "no index yet: the hook does not start one");
	fill(&e, "bbb222", NULL);
	snprintf(e.pod, sizeof(e.pod), "checkout");
	snprintf(e.pod_namespace, sizeof(e.pod_namespace), "shop");
	snprintf(e.container, sizeof(e.container), "app");
	is_int(registry_write(regdir, &e, &err), 0, "a pod's container");
	is_int(registry_find(regdir, "web", &back, &err), 0, "by name without an index: full scan");
	is_str(back.id, "aaa111", "the named one");
	ok(exists(regdir, "names/n.web/aaa111") && exists(regdir, "names/p.checkout/bbb222"),
	   "and the lookup built the index");

	fill(&e, "ccc333", "api");
	is_int(hook_register(regdir, &e), 0, "a hook adds to the index");
	ok(exists(regdir, "names/n.api/ccc333"), "its name is indexed");
	is_int(registry_find(regdir, "api", &back, &err), 0, "found by name through the index");
	is_str(back.id, "ccc333", "the right one");
	struct registry_query p = {.pod = "checkout", .pod_namespace = "shop"};
	is_int(registry_find_query(regdir, &p, &back, &err), 0, "--pod through the index");
	is_str(back.id, "bbb222", "the pod's container");
	p.pod_namespace = "other";
	is_int(registry_find_query(regdir, &p, &back, &err), -ENOENT, "--pod, another namespace");

	/* Lying and stale index files: checked against the entry, dropped. */
	touch(regdir, "names/n.api/aaa111"); /* aaa111 is "web" */
	touch(regdir, "names/n.api/zzz999"); /* no such entry */
	is_int(registry_find(regdir, "api", &back, &err), 0, "a name with lying index files");
	is_str(back.id, "ccc333", "still the one that carries it");
	ok(!exists(regdir, "names/n.api/aaa111") && !exists(regdir, "names/n.api/zzz999"),
	   "the lying and the stale index file are dropped");
	touch(regdir, "names/n.ghost/aaa111");
	is_int(registry_find(regdir, "ghost", &back, &err), -ENOENT,
	       "an index file alone names nothing");

	/* A duplicate name: the live one; none alive: not found (dead ones
	 * are never returned, and go). */
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	fill(&e, "ddd444", "api");
	e.pid = child;
	is_int(hook_register(regdir, &e), 0, "a dead container under the same name");
	is_int(registry_find(regdir, "api", &back, &err), 0, "the name: the live one");
	is_str(back.id, "ccc333", "not the dead one");
	ok(!exists(regdir, "ddd444.json") && !exists(regdir, "names/n.api/ddd444"),
	   "the dead entry and its index file went with the lookup");
	fill(&e, "eee555", "solo");
	e.pid = child;
	is_int(hook_register(regdir, &e), 0, "a dead container alone under its name");
	is_int(registry_find(regdir, "solo", &back, &err), -ENOENT, "never returned by name");
	is_int(hook_register(regdir, &e), 0, "again");
	is_int(registry_find(regdir, "eee555", &back, &err), -ENOENT, "nor by id");
	is_int(hook_register(regdir, &e), 0, "again");
	is_int(registry_find(regdir, "eee", &back, &err), -ENOENT, "nor by prefix");
	ok(!exists(regdir, "names/n.solo"), "its name directory is gone too");

	/* Removing an entry (poststop, the wrapper's delete) drops its names;
	 * a new entry of the same id and name keeps them. */
	is_int(registry_remove(regdir, "ccc333", &err), 0, "remove api");
	ok(!exists(regdir, "names/n.api"), "its index went with it");
	fill(&e, "ccc333", "api");
	is_int(hook_register(regdir, &e), 0, "the same id and name registered again");
	int dfd = registry_dir_open(regdir, &err);
	is_int(registry_index_drop(dfd, regdir, REGISTRY_INDEX_NAME, "api", "ccc333"), 0,
	       "a drop of an index file whose entry carries the name keeps it");
	close(dfd);
	ok(exists(regdir, "names/n.api/ccc333"), "kept");

	/* The hook cannot add (a name directory that is a file): the index is
	 * set aside whole, and the next lookup builds a complete one. */
	touch(regdir, "names/n.broken");
	fill(&e, "fff666", "broken");
	ok(hook_register(regdir, &e) < 0, "adding to a broken index fails");
	ok(!exists(regdir, "names"), "and sets the index aside");
	is_int(registry_find(regdir, "broken", &back, &err), 0, "found by the full scan");
	is_str(back.id, "fff666", "the entry the failed add named");
	ok(exists(regdir, "names/n.broken/fff666") && exists(regdir, "names/n.api/ccc333"),
	   "the rebuilt index has every name");

	/* gc's check: stale names dropped, missing ones added, leftovers gone. */
	struct registry_entry *all;
	size_t n;
	struct registry_index_stats st;
	touch(regdir, "names/n.web/nosuch");
	char path[1024], cmd[1100];
	/* Private files of a dropper and a sweeper that died (a reaped child's
	 * pid), and of one that still runs (ours): only the dead ones go. */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	char gone1[128], gone2[128], live1[128], live2[128];
	snprintf(gone1, sizeof(gone1), "names/n.web/.drop.%d.aaa111", (int)dead);
	snprintf(gone2, sizeof(gone2), ".sweep.%d.aaa111.json", (int)dead);
	snprintf(live1, sizeof(live1), "names/n.web/.drop.%d.bbb222", (int)getpid());
	snprintf(live2, sizeof(live2), ".swept.%d.bbb222.json", (int)getpid());
	touch(regdir, gone1);
	touch(regdir, gone2);
	touch(regdir, live1);
	touch(regdir, live2);
	snprintf(path, sizeof(path), "%s/names/n.api/ccc333", regdir);
	unlink(path);
	is_int(registry_list(regdir, &all, &n, NULL, NULL, &err), 0, "list");
	is_int(registry_index_check(regdir, all, n, &st, &err), 0, "index check");
	is_int(st.dropped, 1, "one stale index file dropped");
	is_int(st.added, 1, "one missing added");
	ok(!exists(regdir, "names/n.web/nosuch") && exists(regdir, "names/n.api/ccc333"),
	   "the index agrees with the entries");
	is_int(st.leftovers, 2, "the dead dropper's and sweeper's files removed");
	ok(!exists(regdir, gone1) && !exists(regdir, gone2) && exists(regdir, live1) &&
	       exists(regdir, live2),
	   "a live process's private files are left alone");
	snprintf(path, sizeof(path), "%s/%s", regdir, live1);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", regdir, live2);
	unlink(path);
	snprintf(path, sizeof(path), ".names.aside.%d", (int)getpid());
	ok(!exists(regdir, path), "the index set aside earlier is removed");
	free(all);
	/* A file where the index goes: looked up without it; gc replaces it. */
	char idx[1024];
	snprintf(idx, sizeof(idx), "%s/names", regdir);
	snprintf(path, sizeof(path), "%s/../names.moved", regdir);
	ok(rename(idx, path) == 0, "move the index away");
	touch(regdir, "names");
	is_int(registry_find(regdir, "broken", &back, &err), 0, "index not a directory: full scan");
	is_int(registry_list(regdir, &all, &n, NULL, NULL, &err), 0, "list");
	is_int(registry_index_check(regdir, all, n, &st, &err), 0, "gc's check");
	ok(st.built && exists(regdir, "names/n.broken/fff666"), "replaced by a built index");
	free(all);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", path);
	ok(system(cmd) == 0, "remove the moved index");
	static const char *const ids[] = {"aaa111", "bbb222", "ccc333", "fff666"};
	for (size_t i = 0; i < sizeof(ids) / sizeof(*ids); i++)
		registry_remove(regdir, ids[i], &err);
	ok(!exists(regdir, "names/n.web") && !exists(regdir, "names/p.checkout"),
	   "removing every entry leaves an empty index");
}

/* 1,000 registered containers: a lookup by id, name or unique prefix
 * reads O(1) entry files; results unchanged. */
static void scale(const char *regdir)
{
	struct fs_error err;
	struct registry_entry e, back;
	char id[80], name[32];
	const char *tail = "c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123";
	int failed = 0;
	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%04x%s", i, tail);
		snprintf(name, sizeof(name), "svc-%d", i);
		fill(&e, id, name);
		failed += registry_write(regdir, &e, &err) < 0;
	}
	is_int(failed, 0, "%d entries written (by an older hook: no index)", MANY);

	int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ok(ino >= 0 && inotify_add_watch(ino, regdir, IN_OPEN) >= 0, "watching opens");
	is_int(registry_find(regdir, "svc-500", &back, &err), 0, "by name, no index yet");
	int first = count_entry_opens(ino);
	ok(first >= MANY, "without an index every entry is read (%d opens)", first);

	static const struct {
		const char *ref, *want;
		int rc;
	} cases[] = {
	    {"01f4c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123", "01f4", 0},
	    {"svc-500", "01f4", 0},
	    {"svc-999", "03e7", 0},
	    {"01f4c0", "01f4", 0},
	    {"03e", NULL, -EEXIST},
	    {"nosuch", NULL, -ENOENT},
	    {"svc-1000", NULL, -ENOENT},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		count_entry_opens(ino);
		int r = registry_find(regdir, cases[i].ref, &back, &err);
		int opens = count_entry_opens(ino);
		is_int(r, cases[i].rc, "'%s': %s", cases[i].ref, r < 0 ? err.msg : back.id);
		if (cases[i].want)
			ok(r == 0 && !strncmp(back.id, cases[i].want, 4), "'%s' is %s...",
			   cases[i].ref, cases[i].want);
		/* an ambiguous prefix reads its 16 matches, nothing else */
		ok(opens <= (cases[i].rc == -EEXIST ? 16 : 1), "'%s' read %d entry files",
		   cases[i].ref, opens);
	}
	close(ino);
	ok(strstr(err.msg, "svc-1000") != NULL, "the miss says what was asked: %s", err.msg);
}

int main(void)
{
	tap_plan(78);
	/* On a tmpfs, as /run is on hosts (a disk makes 1,000 entries slow). */
	char dir[64], regdir[256], cmd[300];
	struct stat sb;
	snprintf(dir, sizeof(dir), "%s/fsregidx.XXXXXX",
		 stat("/dev/shm", &sb) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ok(mkdtemp(dir) != NULL, "temp dir %s", dir);
	snprintf(regdir, sizeof(regdir), "%s/run/containers", dir);
	index_rules(regdir);
	snprintf(regdir, sizeof(regdir), "%s/run/many", dir);
	scale(regdir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleanup");
	return tap_done();
}
