/* localfs.c - see localfs.h */
#include "localfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "mntcache.h"
#include "proc.h"

static unsigned localfs_refusals;

unsigned localfs_refused(void)
{
	return localfs_refusals;
}

int localfs_type_local(const char *type)
{
	static const char *const local[] = {
	    "ext2",  "ext3", "ext4",  "xfs",   "btrfs",	   "f2fs",    "zfs",	 "squashfs",
	    "erofs", "vfat", "tmpfs", "ramfs", "devtmpfs", "overlay", "iso9660",
	};
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (strcmp(type, local[i]) == 0)
			return 1;
	return 0;
}

int localfs_line_fstype(const char *from, const char *end, char *type, size_t typelen)
{
	/* the separator " - ", then the type up to the next space */
	for (const char *q = from; q + 3 <= end; q++) {
		if (q[0] != ' ' || q[1] != '-' || q[2] != ' ')
			continue;
		const char *t = q + 3, *te = t;
		while (te < end && *te != ' ' && *te != '\0')
			te++;
		size_t n = (size_t)(te - t);
		if (!n || typelen < 2)
			return 0;
		if (n >= typelen)
			n = typelen - 1;
		memcpy(type, t, n);
		type[n] = '\0';
		return 1;
	}
	return 0;
}

int localfs_mountinfo_type(const char *buf, size_t len, uint64_t mnt_id, char *type, size_t typelen)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		/* "36 35 98:0 /root /mnt opts [optional...] - fstype source opts" */
		uint64_t id = 0;
		const char *q = p;
		int digits = 0;
		while (q < le && *q >= '0' && *q <= '9' && digits < 20) {
			id = id * 10 + (uint64_t)(*q - '0');
			q++;
			digits++;
		}
		if (digits && q < le && *q == ' ' && id == mnt_id)
			return localfs_line_fstype(q, le, type, typelen);
		p = le + 1;
	}
	return 0;
}

/* Parse unsigned decimal digits at *q (before end), at most 10 of them,
 * into *v; 1 when at least one digit was read. */
static int localfs_number(const char **q, const char *end, unsigned *v)
{
	int digits = 0;
	uint64_t x = 0;
	while (*q < end && **q >= '0' && **q <= '9' && digits < 10) {
		x = x * 10 + (uint64_t)(**q - '0');
		(*q)++;
		digits++;
	}
	*v = x > UINT32_MAX ? UINT32_MAX : (unsigned)x;
	return digits > 0;
}

int localfs_mountinfo_type_dev(const char *buf, size_t len, unsigned major, unsigned minor,
			       char *type, size_t typelen)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		/* "36 35 98:0 /root /mnt ...": the third field */
		const char *q = memchr(p, ' ', (size_t)(le - p));
		q = q ? memchr(q + 1, ' ', (size_t)(le - q - 1)) : NULL;
		unsigned ma, mi;
		if (q && ++q < le && localfs_number(&q, le, &ma) && q < le && *q == ':' && ++q &&
		    localfs_number(&q, le, &mi) && q < le && *q == ' ' && ma == major &&
		    mi == minor)
			return localfs_line_fstype(q, le, type, typelen);
		p = le + 1;
	}
	return 0;
}

/* Whether mount point mp (mountinfo's escaped text, mp_len bytes, "/a/b")
 * is "/", or rel ("a/b/c") is mp or lies beneath it. */
static int localfs_beneath(const char *mp, size_t mp_len, const char *rel)
{
	if (mp_len == 1 && mp[0] == '/')
		return 1;
	if (!mp_len || mp[0] != '/')
		return 0;
	size_t i = 1, j = 0;
	while (i < mp_len) {
		char c = mp[i];
		/* \ooo: an octal escape (space, tab, newline, backslash) */
		if (c == '\\' && i + 3 < mp_len && mp[i + 1] >= '0' && mp[i + 1] <= '3' &&
		    mp[i + 2] >= '0' && mp[i + 2] <= '7' && mp[i + 3] >= '0' && mp[i + 3] <= '7') {
			c = (char)((mp[i + 1] - '0') * 64 + (mp[i + 2] - '0') * 8 +
				   (mp[i + 3] - '0'));
			i += 4;
		} else {
			i++;
		}
		if (rel[j] == '\0' || rel[j] != c) /* rel ends first, or differs */
			return 0;
		j++;
	}
	return rel[j] == '\0' || rel[j] == '/';
}

int localfs_mountinfo_crosses(const char *buf, size_t len, const char *rel, char *type,
			      size_t typelen)
{
	const char *p = buf, *end = buf + len;
	while (*rel == '/')
		rel++;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		/* fields: id parent dev root mountpoint ... " - " type */
		const char *f = p;
		for (int k = 0; k < 4 && f; k++) {
			f = memchr(f, ' ', (size_t)(le - f));
			if (f)
				f++;
		}
		const char *sep = NULL;
		for (const char *q = f ? f : le; q + 3 <= le; q++)
			if (q[0] == ' ' && q[1] == '-' && q[2] == ' ') {
				sep = q;
				break;
			}
		if (f && sep) {
			const char *mpe = memchr(f, ' ', (size_t)(le - f));
			const char *t = sep + 3, *te = t;
			while (te < le && *te != ' ' && *te != '\0')
				te++;
			char ty[64];
			size_t n =
			    (size_t)(te - t) < sizeof(ty) - 1 ? (size_t)(te - t) : sizeof(ty) - 1;
			memcpy(ty, t, n);
			ty[n] = '\0';
			if (mpe && !localfs_type_local(ty) &&
			    localfs_beneath(f, (size_t)(mpe - f), rel)) {
				if (typelen)
					snprintf(type, typelen, "%s", ty);
				return 1;
			}
		}
		p = le + 1;
	}
	return 0;
}

struct localfs_crosses_arg {
	const char *rel;
	char type[64];
};

static int localfs_crosses_fn(const char *buf, size_t len, void *argp)
{
	struct localfs_crosses_arg *a = argp;
	return localfs_mountinfo_crosses(buf, len, a->rel, a->type, sizeof(a->type));
}

int localfs_path_ok(pid_t pid, const char *rel, const char *what, struct fs_error *err)
{
	/* pid's table, read again only when it changed (lib/mntcache.h) */
	struct localfs_crosses_arg a = {.rel = rel};
	int r = mntcache_with(pid, 0, localfs_crosses_fn, &a, err);
	if (r <= 0)
		return r;
	localfs_refusals++;
	return fs_error_set(err, EXDEV,
			    "refusing %s: its path crosses a file system of type %s (FUSE, network "
			    "or unknown), whose lookups the container could stall",
			    what, a.type[0] ? a.type : "unknown");
}

struct localfs_type_arg {
	uint64_t mnt_id;
	char *type;
	size_t typelen;
};

static int localfs_type_fn(const char *buf, size_t len, void *argp)
{
	struct localfs_type_arg *a = argp;
	return localfs_mountinfo_type(buf, len, a->mnt_id, a->type, a->typelen);
}

/* The type of mount mnt_id in pid's mount table (0: ours): 1, 0, or
 * -errno. From the cache; a mount id the cached table lacks is looked up
 * in a fresh read before it is called missing. */
static int localfs_lookup(pid_t pid, uint64_t mnt_id, char *type, size_t typelen)
{
	struct localfs_type_arg a = {.mnt_id = mnt_id, .type = type, .typelen = typelen};
	int r = mntcache_with(pid, 0, localfs_type_fn, &a, NULL);
	if (r == 0)
		r = mntcache_with(pid, MNTCACHE_FRESH, localfs_type_fn, &a, NULL);
	return r;
}

/* The type of the file system on device major:minor in the mount table at
 * path: 1, 0, or -errno. */
static int localfs_lookup_dev(const char *path, unsigned major, unsigned minor, char *type,
			      size_t typelen)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r = proc_read_file(path, LOCALFS_MOUNTINFO_MAX, &buf, &len, NULL);
	if (r < 0)
		return r;
	return localfs_mountinfo_type_dev(buf, len, major, minor, type, typelen);
}

/* Count and explain the refusal of a file on a file system of type type. */
static int localfs_refuse(const char *what, const char *type, struct fs_error *err)
{
	localfs_refusals++;
	return fs_error_set(err, EXDEV,
			    "refusing %s: on a file system of type %s (FUSE, network or unknown), "
			    "whose reads the container could stall",
			    what, type);
}

int localfs_check_fd_sb(int fd, pid_t pid, const char *what, struct fs_error *err)
{
	struct statx stx;
	/* Cached attributes only: a GETATTR would go to the daemon. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0)
		return fs_error_set(err, errno, "statx of %s", what);
	char type[64] = "";
	char path[64];
	int found = 0;
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
		found = localfs_lookup_dev(path, stx.stx_dev_major, stx.stx_dev_minor, type,
					   sizeof(type)) == 1;
	}
	if (!found)
		found = localfs_lookup_dev("/proc/self/mountinfo", stx.stx_dev_major,
					   stx.stx_dev_minor, type, sizeof(type)) == 1;
	if (found && localfs_type_local(type))
		return 0;
	return localfs_refuse(what, found ? type : "unknown", err);
}

int localfs_check_fd(int fd, pid_t pid, const char *what, struct fs_error *err)
{
	struct statx stx;
	/* Cached attributes only: a GETATTR would go to the daemon. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
		return fs_error_set(err, errno, "statx of %s", what);
	char type[64] = "";
	int found = 0;
	if (stx.stx_mask & STATX_MNT_ID) {
		if (pid > 0)
			found = localfs_lookup(pid, stx.stx_mnt_id, type, sizeof(type)) == 1;
		if (!found)
			found = localfs_lookup(0, stx.stx_mnt_id, type, sizeof(type)) == 1;
	}
	if (found && localfs_type_local(type))
		return 0;
	/* A mount in a namespace we cannot see, on a block device: a local
	 * file system of the host's (FUSE's fuseblk would be in the table). */
	if (!found && stx.stx_dev_major != 0)
		return 0;
	return localfs_refuse(what, found ? type : "unknown", err);
}
