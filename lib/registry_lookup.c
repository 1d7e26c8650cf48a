/* registry_lookup.c - which registered container a user means: an id, a
 * name the engine gave, a unique id prefix, or a Kubernetes pod (see
 * registry.h). Pure over an array of entries, so it is tested without
 * files; registry_find_query reads the directory first. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "registry.h"

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

/* One hit, or the only live one among several. */
static int lookup_pick(const struct registry_entry *entries, const size_t *idx, size_t hits)
{
	if (hits == 1)
		return (int)idx[0];
	int alive = -1;
	for (size_t i = 0; i < hits; i++) {
		if (!registry_entry_alive(&entries[idx[i]]))
			continue;
		if (alive >= 0)
			return -1;
		alive = (int)idx[i];
	}
	return alive;
}

static int lookup_check_query(const struct registry_query *q, struct fs_error *err)
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
	int r = lookup_check_query(q, err);
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
		 * stale entry under a reused Docker name): the live one is meant.
		 * An id prefix is strict, as in Docker. */
		int pick = order[k] == LOOKUP_PREFIX ? (hits == 1 ? (int)idx[0] : -1)
						     : lookup_pick(entries, idx, hits);
		if (pick >= 0)
			return pick;
		return lookup_ambiguous(entries, idx, hits, q, order[k], err);
	}
	return lookup_not_found(q, err);
}

int registry_find_query(const char *dir, const struct registry_query *q, struct registry_entry *e,
			struct fs_error *err)
{
	cleanup_free struct registry_entry *all = NULL;
	size_t n;
	int r = registry_list(dir, &all, &n, NULL, NULL, err);
	if (r < 0)
		return r;
	registry_sweep(dir, all, &n);
	r = registry_lookup(all, n, q, err);
	if (r < 0) {
		if (r == -ENOENT && n == 0)
			fs_error_wrap(err, "%s is empty", dir);
		return r;
	}
	*e = all[r];
	return 0;
}

int registry_find(const char *dir, const char *ref, struct registry_entry *e, struct fs_error *err)
{
	struct registry_query q = {.ref = ref};
	return registry_find_query(dir, &q, e, err);
}
