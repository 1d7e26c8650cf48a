/* registry_lookup.c - which registered container a user means: an id, a
 * name the engine gave, a unique id prefix, or a Kubernetes pod (see
 * registry.h). registry_lookup is pure over an array of entries, so it is
 * tested without files; registry_find_query gives it only the entries that
 * can match, read in stages that do not grow with the registry: the id's
 * own file, the name index, the directory's file names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "registry_int.h"

/* How many candidates an error message lists before "...". */
#define LOOKUP_LIST_MAX 6

enum lookup_how {
	LOOKUP_ID = 0,
	LOOKUP_NAME,
	LOOKUP_PREFIX,
	LOOKUP_POD,
};

static int lookup_matches(const struct registry_entry *e, const struct registry_query *q,
			  enum lookup_how how)
{
	switch (how) {
	case LOOKUP_ID: return !strcmp(e->id, q->ref);
	case LOOKUP_NAME: return e->name[0] && !strcmp(e->name, q->ref);
	case LOOKUP_PREFIX: return !strncmp(e->id, q->ref, strlen(q->ref));
	case LOOKUP_POD:
		return !strcmp(e->pod, q->pod) &&
		       (!q->pod_namespace || !strcmp(e->pod_namespace, q->pod_namespace)) &&
		       (!q->container || !strcmp(e->container, q->container));
	}
	return 0;
}

/* "3f2a9c4d1e2b (web, alive)" for the candidate list. */
static void lookup_describe(const struct registry_entry *e, char *buf, size_t len)
{
	char names[2 * REGISTRY_NAME_MAX + 8] = "";
	if (e->pod[0])
		snprintf(names, sizeof(names), "%s/%s%s%s", e->pod_namespace, e->pod,
			 e->container[0] ? " " : "", e->container);
	else if (e->name[0])
		snprintf(names, sizeof(names), "%s", e->name);
	snprintf(buf, len, "%.12s%s (%s%s%s)", e->id, strlen(e->id) > 12 ? "..." : "", names,
		 names[0] ? ", " : "", registry_entry_alive(e) ? "alive" : "stale");
}

/* The error for several matches: what matched, the candidates, and what
 * to give instead. */
static int lookup_ambiguous(const struct registry_entry *entries, const size_t *idx, size_t hits,
			    const struct registry_query *q, enum lookup_how how,
			    struct fs_error *err)
{
	char list[FS_ERROR_MSG_MAX] = "";
	size_t used = 0;
	for (size_t i = 0; i < hits && i < LOOKUP_LIST_MAX && used < sizeof(list); i++) {
		char one[2 * REGISTRY_NAME_MAX + 64];
		lookup_describe(&entries[idx[i]], one, sizeof(one));
		used +=
		    (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? "; " : "", one);
	}
	if (hits > LOOKUP_LIST_MAX && used < sizeof(list))
		snprintf(list + used, sizeof(list) - used, "; ...");
	if (how == LOOKUP_POD)
		return fs_error_set(err, EEXIST,
				    "pod '%s'%s%s matches %zu containers: %s. Add %s, or give "
				    "a container id",
				    q->pod, q->pod_namespace ? " in namespace " : "",
				    q->pod_namespace ? q->pod_namespace : "", hits, list,
				    q->container ? "--namespace NS" : "--container NAME");
	return fs_error_set(err, EEXIST, "%s '%s' matches %zu containers: %s. Give %s",
			    how == LOOKUP_NAME ? "name" : "id prefix", q->ref, hits, list,
			    how == LOOKUP_NAME ? "the container id" : "more characters of the id");
}

/* The matches of one kind; 0 when none. */
static size_t lookup_collect(const struct registry_entry *entries, size_t n,
			     const struct registry_query *q, enum lookup_how how, size_t *idx)
{
	size_t hits = 0;
	for (size_t i = 0; i < n; i++)
		if (lookup_matches(&entries[i], q, how))
			idx[hits++] = i;
	return hits;
}

/* The index of the one hit, or of the only live one among several, or,
 * when several are alive, of the only live one whose name is the engine's
 * own record (the others only claim it through an annotation: a claim
 * neither takes nor blocks the name); -1 when that leaves several or none. */
static int lookup_pick(const struct registry_entry *entries, const size_t *idx, size_t hits)
{
	if (hits == 1)
		return (int)idx[0];
	int alive = -1, engine = -1;
	size_t nalive = 0, nengine = 0;
	for (size_t i = 0; i < hits; i++) {
		const struct registry_entry *e = &entries[idx[i]];
		if (!registry_entry_alive(e))
			continue;
		nalive++;
		alive = (int)idx[i];
		if (e->name_source == REGISTRY_NAME_ENGINE) {
			nengine++;
			engine = (int)idx[i];
		}
	}
	if (nalive == 1)
		return alive;
	return nengine == 1 ? engine : -1;
}

int registry_query_check(const struct registry_query *q, struct fs_error *err)
{
	if (!!q->ref == !!q->pod)
		return fs_error_set(err, EINVAL,
				    "give a container (id, name or id prefix) or --pod NAME, "
				    "not both");
	if (!q->pod && (q->pod_namespace || q->container))
		return fs_error_set(err, EINVAL, "--namespace and --container need --pod NAME");
	const char *s[] = {q->pod, q->pod_namespace, q->container};
	for (size_t i = 0; i < FS_ARRAY_SIZE(s); i++)
		if (s[i] && registry_validate_name(s[i], err) < 0)
			return fs_error_wrap(err, "'%s'", s[i]);
	if (q->ref && registry_validate_id(q->ref, err) < 0)
		return fs_error_wrap(err, "'%s' is not a container id or name", q->ref);
	return 0;
}

static int lookup_not_found(const struct registry_query *q, struct fs_error *err)
{
	if (q->pod)
		return fs_error_set(
		    err, ENOENT,
		    "no registered container in pod '%s'%s%s%s%s. Annotate the pod "
		    "flamesidecar.io/enable=\"true\" (containerd: with pod_annotations "
		    "[\"flamesidecar.io/*\"]); `flamesidecar list` shows registered containers",
		    q->pod, q->pod_namespace ? " in namespace " : "",
		    q->pod_namespace ? q->pod_namespace : "", q->container ? " named " : "",
		    q->container ? q->container : "");
	return fs_error_set(err, ENOENT,
			    "no registered container has the id, name or id prefix '%s'. Start "
			    "it with the annotation flamesidecar.io/enable=true (or "
			    "FLAMESIDECAR_ENABLE=1, or the flamesidecar runtime's --opt-in) with "
			    "the flamesidecar hook installed; `flamesidecar list` shows "
			    "registered containers",
			    q->ref);
}

/* A triggered profile names the container it was started for: that id
 * exactly, still the same process; never a name or an id prefix, which
 * could be another container once this one has exited. */
static int lookup_exact(const struct registry_entry *entries, size_t n,
			const struct registry_query *q, struct fs_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct registry_entry *e = &entries[i];
		if (strcmp(e->id, q->ref))
			continue;
		if (e->pid != q->exact_pid || e->start_time != q->exact_start ||
		    !registry_entry_alive(e))
			return fs_error_set(err, ESRCH,
					    "container %s is no longer pid %d started at %llu: "
					    "it exited",
					    q->ref, (int)q->exact_pid,
					    (unsigned long long)q->exact_start);
		return (int)i;
	}
	return fs_error_set(err, ENOENT,
			    "container %s is not registered any more: it exited (no other "
			    "container is taken in its place)",
			    q->ref);
}

int registry_lookup(const struct registry_entry *entries, size_t n, const struct registry_query *q,
		    struct fs_error *err)
{
	int r = registry_query_check(q, err);
	if (r < 0)
		return r;
	cleanup_free size_t *idx = calloc(n ? n : 1, sizeof(*idx));
	if (!idx)
		return fs_error_set(err, ENOMEM, "looking up a container");
	if (q->exact_pid)
		return lookup_exact(entries, n, q, err);
	static const enum lookup_how by_ref[] = {LOOKUP_ID, LOOKUP_NAME, LOOKUP_PREFIX};
	static const enum lookup_how by_pod[] = {LOOKUP_POD};
	const enum lookup_how *order = q->pod ? by_pod : by_ref;
	size_t norder = q->pod ? 1 : FS_ARRAY_SIZE(by_ref);
	for (size_t k = 0; k < norder; k++) {
		size_t hits = lookup_collect(entries, n, q, order[k], idx);
		if (hits == 0)
			continue;
		/* Names and pods outlive containers (a restarted pod container, a
		 * stale entry under a reused Docker name): the live one is meant,
		 * and among live ones the engine's record of the name. An id
		 * prefix is strict, as in Docker. */
		int pick = order[k] == LOOKUP_PREFIX ? (hits == 1 ? (int)idx[0] : -1)
						     : lookup_pick(entries, idx, hits);
		if (pick >= 0)
			return pick;
		return lookup_ambiguous(entries, idx, hits, q, order[k], err);
	}
	return lookup_not_found(q, err);
}

/* ---- reading only the entries that can match ----------------------------- */

/* The candidates of one stage of registry_find_query. */
struct lookup_set {
	struct registry_entry *v;
	size_t n, cap;
};

/* Read <id>.json into s; an entry that cannot be read, or filed under
 * another id, is not a candidate (as registry_list skips it). 1 added, 0
 * not, -ENOMEM. */
static int lookup_add_id(int dfd, const char *dir, const char *id, struct lookup_set *s)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 4;
		struct registry_entry *nv = reallocarray(s->v, ncap, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	char file[REGISTRY_ID_MAX + 16];
	struct fs_error ignored;
	registry_file_name(id, file, sizeof(file));
	if (registry_read_at(dfd, dir, file, &s->v[s->n], &ignored) < 0 ||
	    strcmp(s->v[s->n].id, id))
		return 0;
	s->n++;
	return 1;
}

/* Never a dead entry: those proven dead are removed (registry_sweep, with
 * their index files) and left out even when the removal failed. */
static void lookup_drop_dead(const char *dir, struct lookup_set *s)
{
	registry_sweep(dir, s->v, &s->n);
	size_t kept = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!registry_entry_dead(&s->v[i]))
			s->v[kept++] = s->v[i];
	s->n = kept;
}

/* Stage 2: the entries the name index files under (kind, name), each
 * checked to carry the name (a stale or lying index file is dropped).
 * -ENODATA when there is no index. */
static int lookup_by_index(int dfd, const char *dir, char kind, const char *name,
			   struct lookup_set *s)
{
	cleanup_free char(*ids)[REGISTRY_ID_MAX + 1] = NULL;
	size_t n;
	int r = registry_index_ids(dfd, kind, name, &ids, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		size_t at = s->n;
		if ((r = lookup_add_id(dfd, dir, ids[i], s)) < 0)
			return r;
		const struct registry_entry *e = &s->v[at];
		if (r == 1 && !strcmp(kind == REGISTRY_INDEX_POD ? e->pod : e->name, name))
			continue;
		s->n = at;
		registry_index_drop(dfd, dir, kind, name, ids[i]);
	}
	return 0;
}

/* Stage 3: the entries whose id starts with prefix, found by their file
 * names (nothing else is opened). *files = how many entry files there are
 * (prefix NULL: stops at the first one, for "is the registry empty"). */
static int lookup_by_prefix(int dfd, const char *dir, const char *prefix, struct lookup_set *s,
			    size_t *files)
{
	*files = 0;
	int fd2 = dup(dfd);
	cleanup_closedir DIR *d = fd2 < 0 ? NULL : fdopendir(fd2);
	if (!d) {
		int e = errno;
		if (fd2 >= 0)
			close(fd2);
		return -e;
	}
	size_t plen = prefix ? strlen(prefix) : 0, cnt = 0, cap = 0;
	cleanup_free char(*ids)[REGISTRY_ID_MAX + 1] = NULL;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || l - 5 > REGISTRY_ID_MAX ||
		    strcmp(de->d_name + l - 5, ".json"))
			continue;
		(*files)++;
		if (!prefix)
			break;
		if (l - 5 < plen || strncmp(de->d_name, prefix, plen))
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			void *nv = reallocarray(ids, ncap, sizeof(*ids));
			if (!nv)
				return -ENOMEM;
			ids = nv;
			cap = ncap;
		}
		memcpy(ids[cnt], de->d_name, l - 5);
		ids[cnt++][l - 5] = '\0';
	}
	/* Every match is read: which of them are alive decides whether the
	 * prefix is unique, and the error lists them. */
	for (size_t i = 0; i < cnt; i++) {
		int r = lookup_add_id(dfd, dir, ids[i], s);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Without a name index (a registry of an older hook, or one set aside):
 * every entry read, as before the index, and the index built from them. */
static int lookup_full(int dfd, const char *dir, const struct registry_query *q,
		       struct registry_entry *e, struct fs_error *err)
{
	cleanup_free struct registry_entry *all = NULL;
	size_t n;
	int r = registry_list(dir, &all, &n, NULL, NULL, err);
	if (r < 0)
		return r;
	registry_sweep(dir, all, &n);
	struct fs_error ignored;
	registry_index_build(dfd, dir, all, n, &ignored); /* next time: the index */
	r = registry_lookup(all, n, q, err);
	if (r < 0) {
		if (r == -ENOENT && n == 0)
			fs_error_wrap(err, "%s is empty", dir);
		return r;
	}
	*e = all[r];
	return 0;
}

static int lookup_cmp_id(const void *a, const void *b)
{
	return strcmp(((const struct registry_entry *)a)->id,
		      ((const struct registry_entry *)b)->id);
}

/* The pick among s (registry_lookup), into *e; candidates in id order, as
 * in a listing (the order an ambiguity error lists them in). */
static int lookup_finish(const struct lookup_set *s, const struct registry_query *q,
			 struct registry_entry *e, struct fs_error *err)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), lookup_cmp_id);
	int r = registry_lookup(s->v, s->n, q, err);
	if (r < 0)
		return r;
	*e = s->v[r];
	return 0;
}

int registry_find_query(const char *dir, const struct registry_query *q, struct registry_entry *e,
			struct fs_error *err)
{
	int r = registry_query_check(q, err);
	if (r < 0)
		return r;
	cleanup_close int dfd = registry_open_dir(dir, 0, err);
	if (dfd == -ENOENT) {
		r = registry_lookup(NULL, 0, q, err);
		return r == -ENOENT ? fs_error_wrap(err, "%s is empty", dir) : r;
	}
	if (dfd < 0)
		return dfd;
	struct lookup_set s = {0};
	/* 1. The exact id: its own file (a triggered profile: only that). */
	if (q->ref) {
		if ((r = lookup_add_id(dfd, dir, q->ref, &s)) < 0)
			goto oom;
		lookup_drop_dead(dir, &s);
		if (s.n || q->exact_pid) {
			r = lookup_finish(&s, q, e, err);
			goto out;
		}
	}
	/* 2. A name (or the pod): the index says which entries carry it. */
	char kind = q->ref ? REGISTRY_INDEX_NAME : REGISTRY_INDEX_POD;
	r = lookup_by_index(dfd, dir, kind, q->ref ? q->ref : q->pod, &s);
	if (r == -ENODATA) {
		free(s.v);
		return lookup_full(dfd, dir, q, e, err);
	}
	if (r < 0)
		goto oom;
	lookup_drop_dead(dir, &s);
	if (s.n) {
		r = lookup_finish(&s, q, e, err);
		goto out;
	}
	/* 3. A unique id prefix: file names only, then the matches. */
	size_t files;
	if ((r = lookup_by_prefix(dfd, dir, q->ref, &s, &files)) < 0)
		goto oom;
	lookup_drop_dead(dir, &s);
	r = lookup_finish(&s, q, e, err);
	if (r == -ENOENT && files == 0)
		fs_error_wrap(err, "%s is empty", dir);
	goto out;
oom:
	r = fs_error_set(err, -r, "looking up a container in %s", dir);
out:
	free(s.v);
	return r;
}
int registry_find(const char *dir, const char *ref, struct registry_entry *e, struct fs_error *err)
{
	struct registry_query q = {.ref = ref};
	return registry_find_query(dir, &q, e, err);
}
