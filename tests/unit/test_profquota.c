/* test_profquota.c - retention and quotas of triggered profiles
 * (lib/profquota.c): the pure policy, then scan and apply on a real
 * directory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "profquota.h"
#include "registry.h"
#include "tap.h"

static void item(struct profquota_item *it, const char *key, const char *id, const char *base,
		 int64_t t, unsigned long long bytes)
{
	memset(it, 0, sizeof(*it));
	snprintf(it->key, sizeof(it->key), "%s", key);
	snprintf(it->id, sizeof(it->id), "%s", id);
	snprintf(it->base, sizeof(it->base), "%s", base);
	it->time = t;
	it->bytes = bytes;
}

/* The removed ones' ids, in order of time, as "a,b,". */
static const char *removed(const struct profquota_item *it, size_t n)
{
	static char out[256];
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (it[i].remove) {
			strcat(out, it[i].id);
			strcat(out, ",");
		}
	return out;
}

static void test_plan(void)
{
	struct profquota_limits lim = {.per_key_count = 2,
				       .per_key_bytes = 1000,
				       .total_count = 4,
				       .total_bytes = 10000,
				       .max_age_s = 100};
	struct profquota_item it[8];
	/* A restart loop: one name, a new id each time, given in no order. */
	item(&it[0], "name docker/web", "c3", "t3", 1030, 10);
	item(&it[1], "name docker/web", "c1", "t1", 1010, 10);
	item(&it[2], "name docker/web", "c2", "t2", 1020, 10);
	item(&it[3], "pod ns/p/c", "p1", "t1", 1005, 10);
	is_int(profquota_plan(it, 4, "name docker/web", &lim, 1040), 1, "room for the next");
	is_str(removed(it, 4), "c1,c2,", "the two oldest of the name go (2 kept minus 1 to come)");
	is_str(it[0].id, "p1", "sorted oldest first");

	/* Another key is not touched by this one's quota. */
	item(&it[0], "name docker/web", "c1", "t1", 1010, 10);
	item(&it[1], "pod ns/p/c", "p1", "t1", 1005, 10);
	item(&it[2], "pod ns/p/c", "p2", "t2", 1006, 10);
	is_int(profquota_plan(it, 3, "name docker/web", &lim, 1040), 1, "room");
	is_str(removed(it, 3), "", "the pod's two are its own business");

	/* Age: past max_age_s goes whatever the key; busy never goes. */
	item(&it[0], "id a", "a", "t", 800, 10);
	item(&it[1], "id b", "b", "t", 850, 10);
	it[1].busy = 1;
	item(&it[2], "id c", "c", "t", 990, 10);
	is_int(profquota_plan(it, 3, "id d", &lim, 1000), 1, "room");
	is_str(removed(it, 3), "a,", "expired goes, busy expired stays, young stays");
	is_str(it[0].why, "age", "why: age");

	/* Bytes per key: removed until under the limit. */
	item(&it[0], "k", "x1", "t", 1, 600);
	item(&it[1], "k", "x2", "t", 2, 300);
	item(&it[2], "k", "x3", "t", 3, 200);
	lim.max_age_s = 0;
	lim.per_key_count = 10;
	is_int(profquota_plan(it, 3, "k", &lim, 1000), 1, "room");
	is_str(removed(it, 3), "x1,", "1100 bytes: the oldest 600 go, 500 < 1000 left");
	is_str(it[0].why, "container quota", "why: container quota");

	/* Every profile of the key busy: no room, nothing removed. */
	lim.per_key_count = 2;
	item(&it[0], "k", "x1", "t", 1, 1);
	item(&it[1], "k", "x2", "t", 2, 1);
	it[0].busy = it[1].busy = 1;
	is_int(profquota_plan(it, 2, "k", &lim, 1000), 0, "no room when all are busy");
	is_str(removed(it, 2), "", "and none removed");

	/* Total: the oldest of any key, once the per-key rule is done. */
	lim.per_key_count = 10;
	for (int i = 0; i < 6; i++) {
		char id[8], key[8];
		snprintf(id, sizeof(id), "t%d", i);
		snprintf(key, sizeof(key), "k%d", i % 3);
		item(&it[i], key, id, "t", 100 + i, 1);
	}
	is_int(profquota_plan(it, 6, "k9", &lim, 1000), 1, "room");
	is_str(removed(it, 6), "t0,t1,t2,", "6 + 1 to come against 4: the three oldest go");
	is_str(it[0].why, "total quota", "why: total quota");

	/* A sweep (no key): the limits themselves, not one below. */
	for (int i = 0; i < 6; i++)
		it[i].remove = 0;
	is_int(profquota_plan(it, 6, NULL, &lim, 1000), 1, "sweep holds");
	is_str(removed(it, 6), "t0,t1,", "sweep: 6 against 4, two go");
	is_int(profquota_plan(it, 0, NULL, &lim, 1000), 1, "nothing to sweep");
}

static void touch(const char *dir, const char *name, size_t bytes, time_t mtime)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[64] = {0};
	for (size_t i = 0; i < bytes; i += sizeof(buf))
		if (write(fd, buf, bytes - i < sizeof(buf) ? bytes - i : sizeof(buf)) < 0)
			break;
	close(fd);
	struct timespec ts[2] = {{.tv_sec = mtime}, {.tv_sec = mtime}};
	utimensat(AT_FDCWD, p, ts, 0);
}

static void test_dir(const char *tmp)
{
	struct fs_config cfg;
	config_defaults(&cfg);
	snprintf(cfg.profile_dir, sizeof(cfg.profile_dir), "%s/profiles", tmp);
	snprintf(cfg.run_dir, sizeof(cfg.run_dir), "%s/run", tmp);
	char a[600], b[600];
	snprintf(a, sizeof(a), "%s/aaaa", cfg.profile_dir);
	snprintf(b, sizeof(b), "%s/bbbb", cfg.profile_dir);
	mkdir(cfg.profile_dir, 0700);
	mkdir(a, 0700);
	mkdir(b, 0700);
	touch(a, ".key", 0, 1000);
	char kp[700];
	snprintf(kp, sizeof(kp), "%s/.key", a);
	FILE *f = fopen(kp, "w");
	fputs("name docker/web", f);
	fclose(f);
	touch(a, "T1.svg", 100, 1000);
	touch(a, "T1.folded", 50, 1001);
	touch(a, "T1.pb.gz", 10, 1000);
	touch(a, "T1.log", 1, 1000);
	touch(a, "notes.txt", 5, 1000); /* not a profile's file: not charged, kept */
	touch(b, "T2.svg", 7, 2000);

	struct profquota_item *items = NULL;
	size_t n = 0;
	is_int(profquota_scan(&cfg, &items, &n), 0, "scan");
	is_int(n, 2, "two profiles");
	struct profquota_limits lim;
	profquota_limits_from_config(&cfg, &lim);
	lim.per_key_count = 1;
	is_int(profquota_plan(items, n, "name docker/web", &lim, 2000), 1, "room");
	is_str(items[0].key, "name docker/web", "key from .key");
	is_int(items[0].bytes, 161, "bytes of the four files");
	is_int(items[0].time, 1001, "time: newest file");
	is_str(items[1].key, "id bbbb", "no .key: the id");
	is_int(items[0].remove, 1, "the old one of the name is marked");
	is_int(profquota_apply(&cfg, items, n), 1, "one profile removed");
	char p[700];
	snprintf(p, sizeof(p), "%s/T1.folded", a);
	ok(access(p, F_OK) != 0, "its files are gone");
	snprintf(p, sizeof(p), "%s/notes.txt", a);
	ok(access(p, F_OK) == 0, "an unknown file stays (and so does its directory)");
	unlink(p);
	free(items);

	/* Again: bbbb expired; its directory goes with it. */
	is_int(profquota_scan(&cfg, &items, &n), 0, "scan again");
	is_int(n, 1, "one left");
	lim.max_age_s = 10;
	profquota_plan(items, n, NULL, &lim, 3000);
	is_int(profquota_apply(&cfg, items, n), 1, "expired one removed");
	ok(access(b, F_OK) != 0, "empty id directory removed");
	free(items);
	unlinkat(AT_FDCWD, kp, 0);
	rmdir(a);
	rmdir(cfg.profile_dir);
}

static void test_key(void)
{
	struct registry_entry e;
	char key[PROFQUOTA_KEY_MAX + 1], claim[PROFQUOTA_KEY_MAX + 1];
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "abc");
	profquota_key(&e, key, sizeof(key));
	is_str(key, "id abc", "no name: the id");
	snprintf(e.engine, sizeof(e.engine), "docker");
	snprintf(e.name, sizeof(e.name), "web");
	e.name_source = REGISTRY_NAME_ENGINE;
	profquota_key(&e, key, sizeof(key));
	is_str(key, "name docker/web", "engine name");
	/* The same words from an annotation never share the engine's key. */
	e.name_source = REGISTRY_NAME_ANNOTATION;
	profquota_key(&e, claim, sizeof(claim));
	is_str(claim, "claim name docker/web", "a claimed name is keyed as a claim");
	ok(strcmp(key, claim) != 0, "claim and engine record never share a key");
	snprintf(e.pod, sizeof(e.pod), "p");
	snprintf(e.pod_namespace, sizeof(e.pod_namespace), "ns");
	snprintf(e.container, sizeof(e.container), "c");
	profquota_key(&e, key, sizeof(key));
	is_str(key, "claim pod ns/p/c", "pod first (always a claim)");
	e.name_source = REGISTRY_NAME_ENGINE;
	profquota_key(&e, key, sizeof(key));
	is_str(key, "claim pod ns/p/c via docker", "a pod beside an engine's record: via it");
	/* The longest key fits whole (no cut that could make two keys one). */
	memset(e.pod, 'p', REGISTRY_NAME_MAX);
	memset(e.pod_namespace, 'n', REGISTRY_NAME_MAX);
	memset(e.container, 'c', REGISTRY_NAME_MAX);
	memset(e.engine, 'e', REGISTRY_ENGINE_MAX);
	profquota_key(&e, key, sizeof(key));
	is_int(
	    (long long)strlen(key),
	    (long long)(strlen("claim pod // via ") + 3 * REGISTRY_NAME_MAX + REGISTRY_ENGINE_MAX),
	    "the longest key is not cut");
	char ns[REGISTRY_NAME_MAX + 1];
	memset(ns, 'N', REGISTRY_NAME_MAX);
	ns[REGISTRY_NAME_MAX] = '\0';
	snprintf(e.bundle, sizeof(e.bundle), "/run/containerd/io.containerd.runtime.v2.task/%s/abc",
		 ns);
	profquota_key(&e, key, sizeof(key));
	is_int((long long)strlen(key),
	       (long long)(strlen("claim pod // via  in containerd/") + 4 * REGISTRY_NAME_MAX +
			   REGISTRY_ENGINE_MAX),
	       "nor with containerd's longest namespace");
}

/* Claims of the same words from different containerd namespaces (the
 * bundle path the runtime gave, not an annotation) are keyed apart. */
static void test_key_containerd(void)
{
	struct registry_entry e;
	char a[PROFQUOTA_KEY_MAX + 1], b[PROFQUOTA_KEY_MAX + 1];
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "abc");
	snprintf(e.engine, sizeof(e.engine), "nerdctl");
	snprintf(e.name, sizeof(e.name), "web");
	e.name_source = REGISTRY_NAME_ANNOTATION;
	snprintf(e.bundle, sizeof(e.bundle),
		 "/run/containerd/io.containerd.runtime.v2.task/default/abc");
	profquota_key(&e, a, sizeof(a));
	is_str(a, "claim name nerdctl/web in containerd/default",
	       "nerdctl's namespace in its claim");
	snprintf(e.bundle, sizeof(e.bundle),
		 "/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc");
	profquota_key(&e, b, sizeof(b));
	is_str(b, "claim name nerdctl/web in containerd/k8s.io", "a pod's claim of the same name");
	ok(strcmp(a, b) != 0, "the same claimed name in two containerd namespaces: two keys");
	snprintf(e.bundle, sizeof(e.bundle),
		 "/run/containerd/io.containerd.runtime.v1.linux/moby/abc");
	profquota_key(&e, b, sizeof(b));
	is_str(b, "claim name nerdctl/web in containerd/moby", "the v1 shims' layout too");
	/* not containerd's layout, or not this id: no namespace */
	const char *const other[] = {"/run/containerd/io.containerd.runtime.v2.task/default/abd",
				     "/run/containerd/io.containerd.runtime.v2.task/abc",
				     "/run/containerd/io.containerd.runtime.v2.task//abc",
				     "/run/containerd/io.containerd.runtime.v2.task/.x/abc",
				     "/tmp/xio.containerd.runtime.v2.task/default/abc",
				     "/var/lib/b/default/abc",
				     "abc"};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		snprintf(e.bundle, sizeof(e.bundle), "%s", other[i]);
		profquota_key(&e, b, sizeof(b));
		is_str(b, "claim name nerdctl/web", "no namespace from %s", other[i]);
	}
	/* pods are claims: keyed apart the same way */
	snprintf(e.bundle, sizeof(e.bundle),
		 "/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc");
	snprintf(e.pod, sizeof(e.pod), "p");
	snprintf(e.pod_namespace, sizeof(e.pod_namespace), "ns");
	snprintf(e.container, sizeof(e.container), "c");
	profquota_key(&e, a, sizeof(a));
	is_str(a, "claim pod ns/p/c in containerd/k8s.io", "a pod in k8s.io");
	/* an engine's own record is unique in its store: no namespace */
	memset(e.pod, 0, sizeof(e.pod));
	snprintf(e.engine, sizeof(e.engine), "docker");
	e.name_source = REGISTRY_NAME_ENGINE;
	snprintf(e.bundle, sizeof(e.bundle),
		 "/run/containerd/io.containerd.runtime.v2.task/moby/abc");
	profquota_key(&e, a, sizeof(a));
	is_str(a, "name docker/web", "an engine's record keeps its key");
}

int main(void)
{
	tap_plan(55);
	test_plan();
	test_key();
	test_key_containerd();
	char dir[] = "/tmp/test_profquota.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	test_dir(dir);
	rmdir(dir);
	return tap_done();
}
