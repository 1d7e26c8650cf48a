/* test_procmemfuse.c - reading the memory of a process that maps a file of
 * its own FUSE mount whose daemon holds every READ (what a container with
 * /dev/fuse can do to the root process: process_vm_readv faults the page
 * in, the fault waits on the daemon, unkillable). procmem_read must return
 * at once, the bytes unreadable, without asking the daemon anything; the
 * process's other memory and its local file mappings stay readable. The
 * read runs in a child the test can give up on: a read that waits on the
 * daemon fails the test instead of hanging it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fusetest.h"
#include "procmem.h"
#include "procmem_guard.h"
#include "tap.h"
#include "timeutil.h"

#define FILE_SIZE 65536

static void attr_of(uint64_t id, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = id;
	a->nlink = 1;
	a->blksize = 4096;
	a->mode = id == 1 ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->size = id == 1 ? 0 : FILE_SIZE;
}

/* Answers INIT, LOOKUP of "f", GETATTR, OPEN, FLUSH and RELEASE; holds READ and the rest,
 * telling each one held. */
static __attribute__((noreturn)) void daemon_main(int fd, int tell)
{
	static char buf[(1 << 20) + 4096];
	ssize_t n;
	while ((n = fusetest_read(fd, buf, sizeof(buf))) > 0) {
		const struct fuse_in_header *in = (const void *)buf;
		const char *arg = (const char *)(in + 1);
		buf[n < (ssize_t)sizeof(buf) ? n : n - 1] = '\0';
		if (in->opcode == FUSE_INIT) {
			fusetest_answer_init(fd, in, arg);
		} else if (in->opcode == FUSE_LOOKUP) {
			struct fuse_entry_out e = {.nodeid = 2, .generation = 1};
			attr_of(2, &e.attr);
			if (strcmp(arg, "f"))
				fusetest_reply(fd, in->unique, -ENOENT, NULL, 0);
			else
				fusetest_reply(fd, in->unique, 0, &e, sizeof(e));
		} else if (in->opcode == FUSE_GETATTR) {
			struct fuse_attr_out a = {0};
			attr_of(in->nodeid, &a.attr);
			fusetest_reply(fd, in->unique, 0, &a, sizeof(a));
		} else if (in->opcode == FUSE_OPEN) {
			struct fuse_open_out o = {.fh = 2};
			fusetest_reply(fd, in->unique, 0, &o, sizeof(o));
		} else if (in->opcode == FUSE_FLUSH || in->opcode == FUSE_RELEASE) {
			/* a target's exit closes the file: not a read */
			fusetest_reply(fd, in->unique, 0, NULL, 0);
		} else if (in->opcode != FUSE_FORGET && in->opcode != FUSE_INTERRUPT &&
			   write(tell, "h", 1) < 0) {
			_exit(1);
		}
	}
	_exit(0);
}

/* procmem_read of len bytes at addr of pid in a child: its result, or
 * -ETIMEDOUT when it did not return within ms (the child is then stuck). */
static int read_in_child(pid_t pid, uint64_t addr, size_t len, int ms, pid_t *stuck)
{
	pid_t r = fork();
	if (r == 0) {
		int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		char *buf = malloc(len);
		int rc = buf ? procmem_read(pid, pidfd, addr, buf, len) : -ENOMEM;
		_exit(rc == 0 ? 0 : rc == -EFAULT ? 1 : 2);
	}
	int pidfd = (int)syscall(SYS_pidfd_open, r, 0);
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	int done = poll(&p, 1, ms) == 1;
	close(pidfd);
	if (!done) {
		*stuck = r;
		return -ETIMEDOUT;
	}
	int st;
	waitpid(r, &st, 0);
	return WIFEXITED(st) ? (WEXITSTATUS(st) == 0   ? 0
				: WEXITSTATUS(st) == 1 ? -EFAULT
						       : -EIO)
			     : -ECHILD;
}

static void test_parse(void)
{
	static const char maps[] = "1000-2000 r-xp 00000000 08:01 12 /usr/bin/x\n"
				   "2000-3000 r--p 00000000 00:63 5 /fuse/f\n"
				   "3000-4000 r--p 00001000 00:63 5 /fuse/f\n"
				   "5000-6000 rw-p 00000000 00:00 0 \n"
				   "6000-7000 r--p 00000000 00:2a 9 /unknown\n"
				   "7000-8000 r--p 00000000 00:1f 9 /dev/shm/x\n";
	static const char mi[] = "20 1 0:99 / /fuse rw - fuse.fs fs rw\n"
				 "21 1 0:31 / /dev/shm rw - tmpfs tmpfs rw\n";
	uint64_t r[8][2];
	size_t n = procmem_guard_parse(maps, sizeof(maps) - 1, mi, sizeof(mi) - 1, NULL, 0, r, 8);
	/* 00:63 is 0:99 in decimal: FUSE; 00:2a in no table, anonymous:
	 * unknown; 00:1f is 0:31, tmpfs; 08:01 a block device in no table. */
	ok(n == 2 && r[0][0] == 0x2000 && r[0][1] == 0x4000 && r[1][0] == 0x6000 &&
	       r[1][1] == 0x7000,
	   "the FUSE file's two mappings merged, the unknown one, nothing else (%zu)", n);
	static const char cut[] = "1000-2000 r--p 00000000 00:63 5 /fuse/f\n3000-4000 r--p 0";
	n = procmem_guard_parse(cut, sizeof(cut) - 1, mi, sizeof(mi) - 1, NULL, 0, r, 8);
	ok(n == 2 && r[1][0] == 0x2000 && r[1][1] == UINT64_MAX,
	   "maps cut at the budget: everything past the last whole line is unsafe");
}

static void test_stalled(void)
{
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		tap_skip(5, "needs root and /dev/fuse (a FUSE daemon that holds a READ)");
		return;
	}
	char mnt[] = "/tmp/fs-procmemfuse-XXXXXX";
	int tell[2], addr_pipe[2];
	if (!mkdtemp(mnt) || pipe2(tell, O_CLOEXEC) < 0 || pipe2(addr_pipe, O_CLOEXEC) < 0) {
		tap_skip(5, "no temporary directory or pipe");
		return;
	}
	int fd = fusetest_mount(mnt, "fs-procmemfuse", 1, 0);
	if (fd < 0) {
		tap_diag("mount: %s", strerror(-fd));
		tap_skip(5, "cannot mount a FUSE file system here");
		rmdir(mnt);
		return;
	}
	pid_t daemon = fork();
	if (daemon == 0)
		daemon_main(fd, tell[1]);
	close(fd);
	close(tell[1]);

	/* The target: maps the FUSE file (no page of it read yet) and a
	 * local file, and has anonymous memory. */
	static char anon[4096] = "anonymous";
	pid_t target = fork();
	if (target == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char path[64];
		snprintf(path, sizeof(path), "%s/f", mnt);
		int f = open(path, O_RDONLY);
		void *m = f < 0 ? MAP_FAILED : mmap(NULL, FILE_SIZE, PROT_READ, MAP_PRIVATE, f, 0);
		int l = open("/proc/self/exe", O_RDONLY);
		void *lm = l < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, l, 0);
		/* memfd and shared anonymous memory: the kernel's own tmpfs */
		int mf = memfd_create("fs-test", MFD_CLOEXEC);
		void *mm = mf < 0 || ftruncate(mf, 4096) < 0
			       ? MAP_FAILED
			       : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mf, 0);
		void *sa =
		    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		uint64_t a[4] = {m == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)m,
				 lm == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)lm,
				 mm == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)mm,
				 sa == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)sa};
		if (write(addr_pipe[1], a, sizeof(a)) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(addr_pipe[1]);
	uint64_t a[4] = {0, 0, 0, 0};
	if (read(addr_pipe[0], a, sizeof(a)) != sizeof(a) || !a[0] || !a[1] || !a[2] || !a[3]) {
		tap_skip(5, "the target could not map the FUSE file");
	} else {
		pid_t stuck = 0;
		unsigned long before = procmem_guard_refused();
		uint64_t t0 = timeutil_now_ms();
		int r = read_in_child(target, a[0] + 4096, 64, 3000, &stuck);
		uint64_t took = timeutil_now_ms() - t0;
		ok(r == -EFAULT, "a page of the stalled FUSE file reads as unreadable (%d)", r);
		ok(took < 2000, "at once (%llu ms)", (unsigned long long)took);
		struct pollfd p = {.fd = tell[0], .events = POLLIN};
		ok(poll(&p, 1, 0) == 0, "the daemon was asked nothing");
		ok(read_in_child(target, (uint64_t)(uintptr_t)anon, sizeof(anon), 3000, &stuck) ==
			   0 &&
		       read_in_child(target, a[1], 64, 3000, &stuck) == 0 &&
		       read_in_child(target, a[2], 64, 3000, &stuck) == 0 &&
		       read_in_child(target, a[3], 64, 3000, &stuck) == 0,
		   "its anonymous memory, a local file's mapping, a memfd and shared "
		   "anonymous memory are read");
		/* the count lives in the children; ours must not have moved */
		ok(procmem_guard_refused() == before, "the parent read nothing itself");
		if (stuck)
			tap_diag("a reader was stuck on the daemon (pid %d)", (int)stuck);
	}
	/* The daemon first (the target's exit flushes its file, which the
	 * daemon would hold): whatever waited on it fails and can die. */
	kill(daemon, SIGKILL);
	waitpid(daemon, NULL, 0);
	kill(target, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
	close(tell[0]);
	close(addr_pipe[0]);
}

#define RACE_ROUNDS 2000

/* A FUSE mount and its daemon (holding every READ, telling each one held
 * on *tell): the daemon's pid, or 0 with the checks skipped (n). */
static pid_t race_mount(char *mnt, int *tell, int n)
{
	int t[2];
	if (!mkdtemp(mnt) || pipe2(t, O_CLOEXEC) < 0) {
		tap_skip(n, "no temporary directory or pipe");
		return 0;
	}
	int fd = fusetest_mount(mnt, "fs-procmemrace", 1, 0);
	if (fd < 0) {
		tap_diag("mount: %s", strerror(-fd));
		tap_skip(n, "cannot mount a FUSE file system here");
		rmdir(mnt);
		return 0;
	}
	pid_t daemon = fork();
	if (daemon == 0)
		daemon_main(fd, t[1]);
	close(fd);
	close(t[1]);
	*tell = t[0];
	return daemon;
}

struct race_counts {
	unsigned long rounds, fuse_refused, anon_read;
};

/* The target of the race: one page at *addr_out, which it maps from the
 * FUSE file ('f') or anonymous memory ('a') on each command, acking. */
static __attribute__((noreturn)) void race_target(const char *mnt, int cmd, int ack)
{
	char path[64], c;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(path, sizeof(path), "%s/f", mnt);
	int f = open(path, O_RDONLY);
	char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = f < 0 || page == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)page;
	if (write(ack, &a, sizeof(a)) < 0 || !a)
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		void *m = c == 'f' ? mmap(page, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 0)
				   : mmap(page, 4096, PROT_READ,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (m != page || write(ack, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* A mapping made just before a read, RACE_ROUNDS times: the reader reads
 * the target's anonymous page with a table built afresh, the target maps
 * the FUSE file over it and acks, and the reader reads the page at once
 * (its table, a moment old, says anonymous); then anonymous memory back. A read that
 * reaches the daemon is held there, unkillable: the reader stops. query:
 * with PROCMAP_QUERY (each read checked just before it is made) or with
 * the table alone (rebuilt every PROCMEM_GUARD_MS). 1 when a read reached
 * the daemon, 0 when none did, -1 when the target could not be set up;
 * what was done in *c. */
static int race_run(int query, const char *mnt, int tell, struct race_counts *c)
{
	int cmd[2], ack[2];
	struct race_counts *shared =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED || pipe2(cmd, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0)
		return -1;
	memset(shared, 0, sizeof(*shared));
	pid_t target = fork();
	if (target == 0)
		race_target(mnt, cmd[0], ack[1]);
	close(cmd[0]);
	close(ack[1]);
	uint64_t a = 0;
	if (read(ack[0], &a, sizeof(a)) != sizeof(a) || !a) {
		kill(target, SIGKILL);
		waitpid(target, NULL, 0);
		return -1;
	}
	pid_t reader = fork();
	if (reader == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int pidfd = (int)syscall(SYS_pidfd_open, target, 0);
		char buf[64], k;
		procmem_guard_set_query(query);
		for (unsigned long i = 0; i < RACE_ROUNDS; i++) {
			/* anonymous: the table is built afresh and knows it so */
			procmem_guard_forget(target);
			if (procmem_read(target, pidfd, a, buf, sizeof(buf)) == 0)
				shared->anon_read++;
			/* FUSE, mapped after the table was built */
			if (write(cmd[1], "f", 1) != 1 || read(ack[0], &k, 1) != 1)
				_exit(2);
			if (procmem_read(target, pidfd, a, buf, sizeof(buf)) == -EFAULT)
				shared->fuse_refused++;
			if (write(cmd[1], "a", 1) != 1 || read(ack[0], &k, 1) != 1)
				_exit(2);
			shared->rounds = i + 1;
		}
		_exit(0);
	}
	close(cmd[1]);
	close(ack[0]);
	int pidfd = (int)syscall(SYS_pidfd_open, reader, 0);
	struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = tell, .events = POLLIN}};
	uint64_t end = timeutil_now_ms() + 30000;
	int held = 0, done = 0;
	/* until the reader is done, or one read is held (it never returns) */
	while (!held && !done && timeutil_now_ms() < end) {
		if (poll(p, 2, 200) < 0 && errno != EINTR)
			break;
		held = (p[1].revents & POLLIN) != 0;
		done = (p[0].revents & POLLIN) != 0;
	}
	*c = *shared;
	close(pidfd);
	kill(reader, SIGKILL);
	kill(target, SIGKILL);
	munmap(shared, 4096);
	return held || !done ? 1 : 0;
}

static void test_race(void)
{
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		tap_skip(2, "needs root and /dev/fuse (a FUSE daemon that holds a READ)");
		return;
	}
	if (!procmem_guard_query_active()) {
		tap_skip(2,
			 "this kernel has no PROCMAP_QUERY (Linux 6.11+): the table alone guards");
		return;
	}
	char mnt[] = "/tmp/fs-procmemrace-XXXXXX";
	int tell = -1;
	pid_t daemon = race_mount(mnt, &tell, 2);
	if (!daemon)
		return;
	struct race_counts c;
	uint64_t t0 = timeutil_now_ms();
	int held = race_run(1, mnt, tell, &c);
	ok(held == 0 && c.rounds == RACE_ROUNDS && c.fuse_refused == RACE_ROUNDS &&
	       c.anon_read == RACE_ROUNDS,
	   "with PROCMAP_QUERY, a FUSE mapping made just before each of %d reads: none reaches "
	   "the daemon, every one refused (%lu rounds, %lu refused, %lu anonymous reads, %llu ms)",
	   RACE_ROUNDS, c.rounds, c.fuse_refused, c.anon_read,
	   (unsigned long long)(timeutil_now_ms() - t0));
	/* The premise: the table alone loses (one read is then held, the
	 * reader stuck until the daemon goes). */
	held = race_run(0, mnt, tell, &c);
	ok(held == 1, "with the table alone, a read reaches the daemon (in round %lu)",
	   c.rounds + 1);
	kill(daemon, SIGKILL);
	waitpid(daemon, NULL, 0);
	while (waitpid(-1, NULL, 0) > 0)
		;
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
	close(tell);
}

int main(void)
{
	tap_plan(2 + 5 + 2);
	alarm(120); /* whatever is held, the test ends */
	test_parse();
	test_stalled();
	test_race();
	return tap_done();
}
