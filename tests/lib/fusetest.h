/* fusetest.h - the FUSE server side the tests need, without libfuse: mount
 * a FUSE file system through /dev/fuse, read the kernel's requests, answer
 * INIT, answer or hold the rest. What a hostile container with /dev/fuse
 * does to a host process that touches one of its files: read a request and
 * never answer it, so that the waiter is in D state until the server goes.
 * Linked into test_jailreap, test_localfs, test_procmemfuse and
 * tests/tools/fusestall. Needs root. */
#ifndef FS_TESTS_FUSETEST_H
#define FS_TESTS_FUSETEST_H

#include <linux/fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Mount a FUSE file system named fsname at mnt (nosuid, nodev; read-only
 * and allow_other when asked): the /dev/fuse fd (close-on-exec) or -errno. */
int fusetest_mount(const char *mnt, const char *fsname, int rdonly, int allow_other);

/* The next request into buf (len bytes; 1 MiB + 4 KiB holds any): its
 * length, 0 once the file system is gone (unmounted, aborted), -errno.
 * Retries EINTR and ENOENT (a request its waiter took back). */
ssize_t fusetest_read(int fd, void *buf, size_t len);

/* Answer request unique with error (0 or -errno) and len bytes of body. */
int fusetest_reply(int fd, uint64_t unique, int error, const void *body, size_t len);

/* Answer an INIT request (in, its body after the header): this protocol
 * version, 64 KiB writes, the kernel's readahead. 0 or -errno. */
int fusetest_answer_init(int fd, const struct fuse_in_header *in, const void *body);

/* Serve INIT, then read every request and answer none, writing one byte
 * to tell (unless -1) for each one held; returns when the file system is
 * gone. The body of a daemon child: fork, then _exit(fusetest_hold(..)). */
int fusetest_hold(int fd, int tell);

#endif
