/* fusetest.c - see fusetest.h */
#include "fusetest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/uio.h>
#include <unistd.h>
#include <fcntl.h>

int fusetest_mount(const char *mnt, const char *fsname, int rdonly, int allow_other)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char opts[128];
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0%s", fd,
		 allow_other ? ",allow_other" : "");
	unsigned long flags = MS_NOSUID | MS_NODEV | (rdonly ? MS_RDONLY : 0);
	if (mount(fsname, mnt, "fuse", flags, opts) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

ssize_t fusetest_read(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);
		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < 0)
			return errno == ENODEV ? 0 : -errno;
		if ((size_t)n < sizeof(struct fuse_in_header))
			return 0;
		return n;
	}
}

int fusetest_reply(int fd, uint64_t unique, int error, const void *body, size_t len)
{
	struct fuse_out_header h = {
	    .len = (uint32_t)(sizeof(h) + len), .error = error, .unique = unique};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)body, len}};
	if (writev(fd, iov, len ? 2 : 1) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int fusetest_answer_init(int fd, const struct fuse_in_header *in, const void *body)
{
	const struct fuse_init_in *ii = body;
	struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
				  .minor = FUSE_KERNEL_MINOR_VERSION,
				  .max_readahead = ii->max_readahead,
				  .max_write = 65536,
				  .time_gran = 1,
				  .max_background = 16,
				  .congestion_threshold = 12};
	return fusetest_reply(fd, in->unique, 0, &o, sizeof(o));
}

int fusetest_hold(int fd, int tell)
{
	static char buf[(1 << 20) + 4096];
	ssize_t n;
	while ((n = fusetest_read(fd, buf, sizeof(buf))) > 0) {
		const struct fuse_in_header *in = (const void *)buf;
		if (in->opcode == FUSE_INIT) {
			if (fusetest_answer_init(fd, in, in + 1) < 0)
				return 1;
		} else if (tell >= 0 && write(tell, "h", 1) < 0) {
			return 1;
		}
	}
	return n < 0 ? 1 : 0;
}
