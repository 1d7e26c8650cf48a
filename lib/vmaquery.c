/* vmaquery.c - see vmaquery.h */
#include "vmaquery.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The kernel's uapi, include/uapi/linux/fs.h of Linux 6.11 ("struct
 * procmap_query", PROCMAP_QUERY): copied here because the distribution's
 * headers we build with (Debian 12: 6.1) predate it. The layout is ABI:
 * new fields only ever go at the end, announced by size. */
struct vmaquery_procmap_query {
	uint64_t size;		/* in: sizeof(this) */
	uint64_t query_flags;	/* in: VMAQUERY_* below */
	uint64_t query_addr;	/* in */
	uint64_t vma_start;	/* out */
	uint64_t vma_end;	/* out */
	uint64_t vma_flags;	/* out */
	uint64_t vma_page_size; /* out */
	uint64_t vma_offset;	/* out */
	uint64_t inode;		/* out */
	uint32_t dev_major;	/* out */
	uint32_t dev_minor;	/* out */
	uint32_t vma_name_size; /* in/out: 0, no name wanted */
	uint32_t build_id_size; /* in/out: 0, no build id wanted */
	uint64_t vma_name_addr; /* in */
	uint64_t build_id_addr; /* in */
};
_Static_assert(sizeof(struct vmaquery_procmap_query) == 104, "PROCMAP_QUERY ABI (Linux 6.11)");

#define VMAQUERY_PROCFS_IOCTL_MAGIC   'f'
#define VMAQUERY_PROCMAP_QUERY	      _IOWR(VMAQUERY_PROCFS_IOCTL_MAGIC, 17, struct vmaquery_procmap_query)
#define VMAQUERY_COVERING_OR_NEXT_VMA 0x10 /* PROCMAP_QUERY_COVERING_OR_NEXT_VMA */
#define VMAQUERY_FILE_BACKED_VMA      0x20 /* PROCMAP_QUERY_FILE_BACKED_VMA */

int vmaquery_file_at_or_above(int maps_fd, uint64_t addr, struct vmaquery_vma *v)
{
	struct vmaquery_procmap_query q;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_flags = VMAQUERY_COVERING_OR_NEXT_VMA | VMAQUERY_FILE_BACKED_VMA;
	q.query_addr = addr;
	if (ioctl(maps_fd, VMAQUERY_PROCMAP_QUERY, &q) < 0)
		return errno == ENOENT ? 0 : -errno;
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->dev_major = q.dev_major;
	v->dev_minor = q.dev_minor;
	v->inode = q.inode;
	return 1;
}

int vmaquery_supported(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	struct vmaquery_vma v;
	/* our own text is a file-backed mapping at or above address 0 */
	int r = fd < 0 ? -errno : vmaquery_file_at_or_above(fd, 0, &v);
	if (fd >= 0)
		close(fd);
	known = r == 1;
	return known;
}
