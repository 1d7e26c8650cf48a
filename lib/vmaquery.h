/* vmaquery.h - one VMA of another process, asked of the kernel at the
 * moment of asking: PROCMAP_QUERY, an ioctl on an open /proc/<pid>/maps
 * (Linux 6.11+). Unlike the text of the maps file (a snapshot as old as
 * its read), the answer is the address space as it is now, in one
 * syscall of a microsecond or so, which is what lets procmem_read check a
 * range immediately before it reads it (procmem_guard.h).
 *
 * The fd is bound to the address space it was opened on: after the
 * process execs, it answers about the old one (while any task still uses
 * it) or fails with -ESRCH. Callers reopen it now and then. */
#ifndef FS_VMAQUERY_H
#define FS_VMAQUERY_H

#include <stdint.h>

struct vmaquery_vma {
	uint64_t start, end;
	uint32_t dev_major, dev_minor; /* of the file's super block, as in maps */
	uint64_t inode;
};

/* The first file-backed VMA that covers addr or lies above it, through
 * maps_fd: 1 with *v filled, 0 when there is none, -ENOTTY (or -EINVAL)
 * when the kernel has no PROCMAP_QUERY, -ESRCH when the fd's address space
 * is gone, another -errno. */
int vmaquery_file_at_or_above(int maps_fd, uint64_t addr, struct vmaquery_vma *v);

/* 1 when this kernel answers PROCMAP_QUERY (asked once about our own
 * memory), else 0. */
int vmaquery_supported(void);

#endif
