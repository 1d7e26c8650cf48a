/* fusestall.c - a FUSE server that serves one file, then stops answering.
 *
 *   fusestall MOUNTPOINT SOURCE NAME
 *
 * Mounts a read-only file system at MOUNTPOINT (through /dev/fuse and
 * mount(2), no libfuse) holding one executable file NAME with SOURCE's
 * bytes, with every attribute and entry timeout 0 so that each stat or open
 * goes to this server. Prints "ready" once the kernel's INIT is answered.
 * After SIGUSR1 it reads every request and answers none: a task that waits
 * on one is then in D state, and stays there when killed, until this
 * server exits (SIGTERM or SIGKILL: the connection is aborted and every
 * waiter gets an error). The mount point is left for the caller to detach
 * (umount -l). This is what a hostile container with /dev/fuse can do to a
 * file a host process touches. Needs root. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fusetest.h"

#define ROOT_ID 1
#define FILE_ID 2
#define BUFSZ	(1 << 20) + 4096

static volatile sig_atomic_t stalled;
static char *data;
static size_t data_len;
static const char *name;

static void on_usr1(int sig)
{
	(void)sig;
	stalled = 1;
}

static void reply(int fd, uint64_t unique, int error, const void *body, size_t len)
{
	if (fusetest_reply(fd, unique, error, body, len) < 0)
		perror("fusestall: write");
}

static void attr_of(uint64_t id, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = id;
	a->nlink = 1;
	a->blksize = 4096;
	if (id == ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0755;
		a->size = data_len;
		a->blocks = (data_len + 511) / 512;
	}
}

static void serve(int fd, const struct fuse_in_header *in, const char *arg)
{
	switch (in->opcode) {
	case FUSE_INIT:
		if (fusetest_answer_init(fd, in, arg) < 0)
			perror("fusestall: write");
		printf("ready\n");
		fflush(stdout);
		return;
	case FUSE_LOOKUP: {
		if (in->nodeid != ROOT_ID || strcmp(arg, name) != 0) {
			reply(fd, in->unique, -ENOENT, NULL, 0);
			return;
		}
		struct fuse_entry_out e = {.nodeid = FILE_ID, .generation = 1};
		attr_of(FILE_ID, &e.attr);
		reply(fd, in->unique, 0, &e, sizeof(e));
		return;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out a = {0};
		attr_of(in->nodeid, &a.attr);
		reply(fd, in->unique, 0, &a, sizeof(a));
		return;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out o = {.fh = in->nodeid};
		reply(fd, in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = (const void *)arg;
		size_t off = r->offset < data_len ? (size_t)r->offset : data_len;
		size_t n = data_len - off < r->size ? data_len - off : r->size;
		if (n > BUFSZ - 4096)
			n = BUFSZ - 4096;
		reply(fd, in->unique, 0, data + off, n);
		return;
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out s = {.st = {.bsize = 4096, .namelen = 255, .frsize = 4096}};
		reply(fd, in->unique, 0, &s, sizeof(s));
		return;
	}
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH: reply(fd, in->unique, 0, NULL, 0); return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT: return; /* no answer expected */
	default: reply(fd, in->unique, -ENOSYS, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fusestall MOUNTPOINT SOURCE NAME\n");
		return 2;
	}
	name = argv[3];
	int src = open(argv[2], O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (src < 0 || fstat(src, &st) < 0 || st.st_size > 64 << 20) {
		perror("fusestall: source");
		return 1;
	}
	data_len = (size_t)st.st_size;
	data = malloc(data_len + 1);
	if (!data || read(src, data, data_len) != (ssize_t)data_len) {
		perror("fusestall: reading the source");
		return 1;
	}
	close(src);
	struct sigaction sa = {.sa_handler = on_usr1};
	sigaction(SIGUSR1, &sa, NULL);
	int fd = fusetest_mount(argv[1], "fusestall", 1, 1);
	if (fd < 0) {
		fprintf(stderr, "fusestall: mounting: %s\n", strerror(-fd));
		return 1;
	}
	static char buf[BUFSZ];
	ssize_t n;
	while ((n = fusetest_read(fd, buf, sizeof(buf))) > 0) {
		if (stalled)
			continue; /* read, so the waiter cannot back out; never answered */
		buf[n < (ssize_t)sizeof(buf) ? n : n - 1] = '\0';
		const struct fuse_in_header *in = (const void *)buf;
		serve(fd, in, buf + sizeof(*in));
	}
	if (n < 0)
		fprintf(stderr, "fusestall: read: %s\n", strerror((int)-n));
	return 0; /* unmounted */
}
