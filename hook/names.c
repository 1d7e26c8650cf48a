/* names.c - the names an engine gave a container, so users can say
 * `flamesidecar run web` or `--pod checkout`: from the OCI annotations
 * (Kubernetes through containerd's CRI plugin or CRI-O, nerdctl), or from
 * the engine's own state on disk (Docker, Podman). Never from an API
 * socket: the hook runs on the container-start path and talks to nobody.
 *
 * Everything here is written by the engine, not the container, but it is
 * still parsed bounded and each name must pass registry_validate_name. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "hook.h"
#include "json.h"

/* Docker's config.v2.json is a few KB; c/storage's containers.json holds
 * every container of the store (about 500 bytes each). */
#define NAMES_DOCKER_MAX  (1024 * 1024)
#define NAMES_PODMAN_MAX  (8 * 1024 * 1024)
#define NAMES_JSON_DEPTH  32
#define NAMES_PODMAN_SCAN 100000 /* entries of containers.json looked at */

/* Copy a valid name; leave dst alone otherwise. 1 when copied. */
static int names_take(char *dst, size_t len, const char *v)
{
	struct fs_error err;
	if (!v || strlen(v) >= len || registry_validate_name(v, &err) < 0)
		return 0;
	memcpy(dst, v, strlen(v) + 1);
	return 1;
}

static const char *names_get(yajl_val ann, const char *key)
{
	return ann ? json_get_string(ann, key) : NULL;
}

void hook_names_from_annotations(yajl_val ann, struct hook_state *st)
{
	/* containerd's CRI plugin (pkg/cri/annotations), then CRI-O's (which
	 * Podman also sets, partly, for `podman kube play`). */
	static const struct {
		const char *type, *pod, *ns, *container;
	} cri[] = {
	    {"io.kubernetes.cri.container-type", "io.kubernetes.cri.sandbox-name",
	     "io.kubernetes.cri.sandbox-namespace", "io.kubernetes.cri.container-name"},
	    {"io.kubernetes.cri-o.ContainerType", "io.kubernetes.pod.name",
	     "io.kubernetes.pod.namespace", "io.kubernetes.container.name"},
	};
	if (!ann || !YAJL_IS_OBJECT(ann))
		return;
	for (size_t i = 0; i < FS_ARRAY_SIZE(cri); i++) {
		const char *type = names_get(ann, cri[i].type);
		if (type && !strcmp(type, "sandbox"))
			st->sandbox = 1;
		if (!names_take(st->pod, sizeof(st->pod), names_get(ann, cri[i].pod)))
			continue;
		names_take(st->pod_namespace, sizeof(st->pod_namespace), names_get(ann, cri[i].ns));
		names_take(st->container, sizeof(st->container), names_get(ann, cri[i].container));
		snprintf(st->engine, sizeof(st->engine), "kubernetes");
		return;
	}
	if (names_take(st->name, sizeof(st->name), names_get(ann, "nerdctl/name"))) {
		snprintf(st->engine, sizeof(st->engine), "nerdctl");
		st->name_source = REGISTRY_NAME_ANNOTATION;
	}
}

/* Read a file the engine owns: a regular file, not a symlink, at most max
 * bytes. -ENOENT when it is not there. */
static int names_read_file(const char *path, size_t max, char **buf, size_t *len,
			   struct fs_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s", path);
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return fs_error_set(err, EINVAL, "%s is not a regular file", path);
	int r = json_read_fd(fd, max, buf, len, err);
	return r < 0 ? fs_error_wrap(err, "%s", path) : 0;
}

/* The same, parsed. */
static int names_read_json(const char *path, size_t max, yajl_val *root, struct fs_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len;
	int r = names_read_file(path, max, &buf, &len, err);
	if (r < 0)
		return r;
	r = json_parse(buf, len, NAMES_JSON_DEPTH, root, err);
	return r < 0 ? fs_error_wrap(err, "%s", path) : 0;
}

/* dir's last component, or NULL when dir has none. */
static const char *names_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : NULL;
}

/* Docker: <data-root>/containers/<id>/hostname is what it mounts on
 * /etc/hostname, and <data-root>/containers/<id>/config.v2.json holds {"ID":
 * id, "Name": "/name"}. The hostname may be another container's (--network
 * container:X shares it), so the file read is the one under this id. */
static int names_docker(const char *hostname_src, struct hook_state *st, struct fs_error *err)
{
	char dir[PATH_MAX];
	if (!hostname_src[0] || snprintf(dir, sizeof(dir), "%s", hostname_src) >= (int)sizeof(dir))
		return 0;
	char *slash = strrchr(dir, '/');
	if (!slash || strcmp(slash, "/hostname"))
		return 0;
	*slash = '\0'; /* <data-root>/containers/<some id> */
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0'; /* <data-root>/containers */
	const char *base = names_basename(dir);
	if (!base || strcmp(base, "containers"))
		return 0;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, st->id) >= (int)sizeof(path))
		return 0;
	cleanup_json yajl_val root = NULL;
	int r = names_read_json(path, NAMES_DOCKER_MAX, &root, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	const char *id = json_get_string(root, "ID");
	const char *name = json_get_string(root, "Name");
	if (!id || strcmp(id, st->id) || !name)
		return fs_error_set(err, EINVAL, "%s does not describe container %s", path, st->id);
	if (!names_take(st->name, sizeof(st->name), name[0] == '/' ? name + 1 : name))
		return fs_error_set(err, EINVAL, "%s: \"Name\" is not a valid name", path);
	snprintf(st->engine, sizeof(st->engine), "docker");
	st->name_source = REGISTRY_NAME_ENGINE;
	return 0;
}

/* One object of containers.json, buf[0..len): 1 when it is the record of
 * st's id (its first name taken when valid), 0 when it is another's. */
static int names_podman_entry(const char *buf, size_t len, struct hook_state *st, const char *path,
			      struct fs_error *err)
{
	cleanup_json yajl_val c = NULL;
	if (json_parse(buf, len, NAMES_JSON_DEPTH, &c, err) < 0)
		return fs_error_wrap(err, "%s", path);
	const char *id = json_get_string(c, "id");
	if (!id || strcmp(id, st->id))
		return 0;
	const char *k[] = {"names", NULL};
	yajl_val names = YAJL_IS_OBJECT(c) ? yajl_tree_get(c, k, yajl_t_array) : NULL;
	if (!names || names->u.array.len == 0 || !YAJL_IS_STRING(names->u.array.values[0]))
		return 1;
	if (names_take(st->name, sizeof(st->name), YAJL_GET_STRING(names->u.array.values[0]))) {
		snprintf(st->engine, sizeof(st->engine), "podman");
		st->name_source = REGISTRY_NAME_ENGINE;
	}
	return 1;
}

/* c/storage's containers.json holds every container of the store (up to
 * NAMES_PODMAN_MAX bytes): a tree of all of it cost milliseconds on every
 * start. The array is scanned once instead, with no allocation (strings
 * and their escapes skipped, depth counted), and only a top-level object
 * in which the id occurs as a string ("<id>") is parsed. 0 (also when no
 * record is found), or -EINVAL when buf is not a JSON array or a candidate
 * object does not parse. */
static int names_podman_scan(const char *buf, size_t len, struct hook_state *st, const char *path,
			     struct fs_error *err)
{
	char needle[REGISTRY_ID_MAX + 3];
	size_t nl = (size_t)snprintf(needle, sizeof(needle), "\"%s\"", st->id);
	size_t i = 0, start = 0, objects = 0;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
		i++;
	if (i == len || buf[i] != '[')
		return fs_error_set(err, EINVAL, "%s is not a JSON array", path);
	const char *hit = memmem(buf + i, len - i, needle, nl);
	int depth = 0, in_str = 0;
	for (; i < len && hit; i++) {
		char c = buf[i];
		if (in_str) {
			/* To the next quote not escaped: an even run of
			 * backslashes before it (none can precede the string's
			 * start, a quote). */
			const char *q = memchr(buf + i, '"', len - i);
			if (!q)
				break;
			size_t bs = 0;
			while (q - bs > buf + i && q[-1 - (ptrdiff_t)bs] == '\\')
				bs++;
			i = (size_t)(q - buf);
			in_str = bs % 2;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > NAMES_JSON_DEPTH)
				return fs_error_set(err, EINVAL, "%s: nested too deeply", path);
			if (depth == 2 && c == '{') {
				start = i;
				if (hit < buf + start) /* not inside an object of the array */
					hit = memmem(buf + start, len - start, needle, nl);
			}
		} else if (c == '}' || c == ']') {
			if (--depth <= 0)
				break; /* the end of the array */
			if (depth != 1 || c != '}')
				continue;
			if (++objects > NAMES_PODMAN_SCAN)
				break;
			if (hit > buf + i)
				continue; /* the id is further on */
			int r = names_podman_entry(buf + start, i + 1 - start, st, path, err);
			if (r != 0)
				return r < 0 ? r : 0;
			hit = memmem(buf + i + 1, len - i - 1, needle, nl);
		}
	}
	return 0;
}

/* Podman (c/storage): the bundle is <graphroot>/<driver>-containers/<id>/
 * userdata and <graphroot>/<driver>-containers/containers.json lists
 * [{"id": id, "names": [name, ...]}, ...]. */
static int names_podman(const char *bundle, struct hook_state *st, struct fs_error *err)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", bundle) >= (int)sizeof(dir))
		return 0;
	size_t l = strlen(dir);
	while (l > 1 && dir[l - 1] == '/')
		dir[--l] = '\0';
	char *slash = strrchr(dir, '/');
	if (!slash || strcmp(slash, "/userdata"))
		return 0;
	*slash = '\0';
	const char *base = names_basename(dir);
	if (!base || strcmp(base, st->id))
		return 0;
	dir[base - dir - 1] = '\0'; /* <graphroot>/<driver>-containers */
	static const char suffix[] = "-containers";
	size_t dl = strlen(dir);
	if (dl < sizeof(suffix) || strcmp(dir + dl - (sizeof(suffix) - 1), suffix))
		return 0;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/containers.json", dir) >= (int)sizeof(path))
		return 0;
	cleanup_free char *buf = NULL;
	size_t len;
	int r = names_read_file(path, NAMES_PODMAN_MAX, &buf, &len, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return names_podman_scan(buf, len, st, path, err);
}

int hook_names_from_engine_state(const char *bundle, const char *hostname_src,
				 struct hook_state *st, struct fs_error *err)
{
	/* The engine's own record first, annotations or not: anyone who can
	 * run a container can annotate it (docker run --annotation
	 * nerdctl/name=X, podman run --annotation io.kubernetes.cri-o...),
	 * so a name there is a claim, and the engine's is its own. Each
	 * record is found only under its engine's layout (Docker's: one small
	 * file; c/storage's: one bounded file); the pod names of annotations
	 * stay beside the engine's name (cri-dockerd, CRI-O). */
	char claimed[sizeof(st->name)], engine[sizeof(st->engine)];
	enum registry_name_source source = st->name_source;
	memcpy(claimed, st->name, sizeof(claimed));
	memcpy(engine, st->engine, sizeof(engine));
	st->name[0] = '\0';
	int r = names_docker(hostname_src, st, err);
	if (r == 0 && !st->name[0])
		r = names_podman(bundle, st, err);
	if (st->name[0])
		return 0;
	memcpy(st->name, claimed, sizeof(st->name));
	memcpy(st->engine, engine, sizeof(st->engine));
	st->name_source = st->name[0] ? source : REGISTRY_NAME_NONE;
	return r;
}
