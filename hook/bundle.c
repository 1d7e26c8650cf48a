/* bundle.c - what the hook needs from the bundle's config.json: the rootfs
 * path and the process user as the host sees it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "hook.h"
#include "json.h"

/* Map id through linux.uidMappings/gidMappings (containerID, hostID, size). */
static int bundle_map_id(yajl_val mappings, long long id, long long *host)
{
	*host = id;
	if (!mappings || !YAJL_IS_ARRAY(mappings) || mappings->u.array.len == 0)
		return 0;
	for (size_t i = 0; i < mappings->u.array.len; i++) {
		yajl_val m = mappings->u.array.values[i];
		long long c, h, s;
		if (json_get_int(m, "containerID", &c) || json_get_int(m, "hostID", &h) ||
		    json_get_int(m, "size", &s))
			continue;
		if (id >= c && id < c + s) {
			*host = h + (id - c);
			return 0;
		}
	}
	return -ERANGE;
}

/* The source of the bind mount on /etc/hostname (the engine's own file). */
static void bundle_hostname_src(yajl_val root, struct hook_bundle *b)
{
	const char *k[] = {"mounts", NULL};
	yajl_val mounts = YAJL_IS_OBJECT(root) ? yajl_tree_get(root, k, yajl_t_array) : NULL;
	for (size_t i = 0; mounts && i < mounts->u.array.len; i++) {
		yajl_val m = mounts->u.array.values[i];
		const char *dst = json_get_string(m, "destination");
		const char *src = json_get_string(m, "source");
		if (dst && src && !strcmp(dst, "/etc/hostname") && src[0] == '/' &&
		    strlen(src) < sizeof(b->hostname_src))
			memcpy(b->hostname_src, src, strlen(src) + 1);
	}
}

int hook_bundle_read(const char *bundle_dir, struct hook_bundle *b, struct fs_error *err)
{
	char path[PATH_MAX];
	memset(b, 0, sizeof(*b));
	if (snprintf(path, sizeof(path), "%s/config.json", bundle_dir) >= (int)sizeof(path))
		return fs_error_set(err, ENAMETOOLONG, "bundle path");
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s", path);
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return fs_error_set(err, EINVAL, "%s is not a regular file", path);
	cleanup_free char *buf = NULL;
	size_t len;
	int r = json_read_fd(fd, HOOK_BUNDLE_CONFIG_MAX, &buf, &len, err);
	cleanup_json yajl_val root = NULL;
	if (r == 0)
		r = json_parse(buf, len, 32, &root, err);
	if (r < 0)
		return fs_error_wrap(err, "%s", path);

	yajl_val rootobj = json_get_object(root, "root");
	const char *rp = rootobj ? json_get_string(rootobj, "path") : NULL;
	if (!rp || !*rp)
		return fs_error_set(err, EINVAL, "%s: no root.path", path);
	int n = rp[0] == '/' ? snprintf(b->rootfs, sizeof(b->rootfs), "%s", rp)
			     : snprintf(b->rootfs, sizeof(b->rootfs), "%s/%s", bundle_dir, rp);
	if (n >= (int)sizeof(b->rootfs))
		return fs_error_set(err, ENAMETOOLONG, "%s: root.path", path);

	long long uid = 0, gid = 0;
	yajl_val proc = json_get_object(root, "process");
	yajl_val user = proc ? json_get_object(proc, "user") : NULL;
	if (user) {
		json_get_int(user, "uid", &uid);
		json_get_int(user, "gid", &gid);
	}
	if (uid < 0 || uid > UINT32_MAX || gid < 0 || gid > UINT32_MAX)
		return fs_error_set(err, EINVAL, "%s: process.user out of range", path);
	yajl_val linux_ = json_get_object(root, "linux");
	const char *um[] = {"uidMappings", NULL}, *gm[] = {"gidMappings", NULL};
	long long hu, hg;
	if (bundle_map_id(linux_ ? yajl_tree_get(linux_, um, yajl_t_array) : NULL, uid, &hu) ||
	    bundle_map_id(linux_ ? yajl_tree_get(linux_, gm, yajl_t_array) : NULL, gid, &hg))
		return fs_error_set(err, ERANGE, "%s: process.user is not in the id mappings",
				    path);
	b->uid = (uid_t)hu;
	b->gid = (gid_t)hg;
	bundle_hostname_src(root, b);
	return 0;
}
