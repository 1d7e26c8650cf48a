/* kfilter.c - see kfilter.h */
#include "kfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"

/* /proc/self/ns/cgroup of the initial cgroup namespace (PROC_CGROUP_INIT_INO
 * in the kernel's proc_ns.h): cgroup levels and ids the helper sees are
 * those of the whole hierarchy, which a cgroup namespace would hide. */
#define KFILTER_INIT_CGROUP_NS 0xEFFFFFFBu
#define KFILTER_ROOT_CGROUP_ID 1 /* kernfs id of the cgroup2 root */
#define KFILTER_LOG_SIZE       2048

static struct bpf_insn kfilter_insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off,
				    int32_t imm)
{
	return (struct bpf_insn){
	    .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
}

/* r0 = 1; exit; r0 = 0; exit: the common tail, jumped to by "+2" when out
 * of scope. */
static size_t kfilter_tail(struct bpf_insn *p)
{
	p[0] = kfilter_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	p[1] = kfilter_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	p[2] = kfilter_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	p[3] = kfilter_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return 4;
}

int kfilter_build_cgroup(struct bpf_insn *insns, size_t max, uint64_t id, unsigned level)
{
	if (max < 9)
		return -E2BIG;
	if (level > KFILTER_MAX_LEVEL)
		return -EINVAL;
	/* r1 = level; r0 = ancestor_cgroup_id(r1); r1 = id (64-bit
	 * immediate, two slots); if r0 != r1 goto drop */
	insns[0] = kfilter_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, (int32_t)level);
	insns[1] = kfilter_insn(BPF_JMP | BPF_CALL, 0, 0, 0, KFILTER_HELPER_ANCESTOR_CGROUP_ID);
	insns[2] = kfilter_insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, 0, 0, (int32_t)(uint32_t)id);
	insns[3] = kfilter_insn(0, 0, 0, 0, (int32_t)(uint32_t)(id >> 32));
	insns[4] = kfilter_insn(BPF_JMP | BPF_JNE | BPF_X, BPF_REG_0, BPF_REG_1, 2, 0);
	return (int)(5 + kfilter_tail(insns + 5));
}

int kfilter_build_pid(struct bpf_insn *insns, size_t max, pid_t pid)
{
	if (max < 7)
		return -E2BIG;
	if (pid <= 0)
		return -EINVAL;
	/* r0 = pid_tgid() >> 32; if r0 != pid goto drop */
	insns[0] = kfilter_insn(BPF_JMP | BPF_CALL, 0, 0, 0, KFILTER_HELPER_PID_TGID);
	insns[1] = kfilter_insn(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	insns[2] = kfilter_insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 2, (int32_t)pid);
	return (int)(3 + kfilter_tail(insns + 3));
}

static int kfilter_is_cgroup2(int fd)
{
	struct statfs sf;
	return fstatfs(fd, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static int kfilter_id(int fd, uint64_t *id)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[64];
	} h;
	int mnt;
	h.fh.handle_bytes = sizeof(h.bytes);
	if (name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) < 0)
		return -errno;
	if (h.fh.handle_bytes != sizeof(*id))
		return -ENOTSUP;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

int kfilter_cgroup_of(const char *dir, uint64_t *id, unsigned *level, struct fs_error *err)
{
	struct stat ns;
	if (stat("/proc/self/ns/cgroup", &ns) == 0 && (uint32_t)ns.st_ino != KFILTER_INIT_CGROUP_NS)
		return fs_error_set(err, ENOTSUP,
				    "running in a cgroup namespace (cgroup ids and depths "
				    "are those of the host's hierarchy)");
	cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "opening cgroup directory %s", dir);
	if (!kfilter_is_cgroup2(fd))
		return fs_error_set(err, ENOTSUP, "%s is not a cgroup v2 directory", dir);
	int r = kfilter_id(fd, id);
	if (r < 0)
		return fs_error_set(err, -r, "reading the cgroup id of %s", dir);
	/* The depth: parents up to the root cgroup, all on cgroup2. */
	uint64_t cur = *id;
	int walk = fd;
	cleanup_close int up = -1;
	for (unsigned n = 0; n <= KFILTER_MAX_LEVEL; n++) {
		if (cur == KFILTER_ROOT_CGROUP_ID) {
			*level = n;
			return 0;
		}
		int parent = openat(walk, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0)
			return fs_error_set(err, errno, "opening the parent of %s", dir);
		if (up >= 0)
			close(up);
		up = walk = parent;
		if (!kfilter_is_cgroup2(walk))
			return fs_error_set(
			    err, ENOTSUP, "%s: the cgroup2 mount is not the whole hierarchy", dir);
		r = kfilter_id(walk, &cur);
		if (r < 0)
			return fs_error_set(err, -r, "reading a cgroup id above %s", dir);
	}
	return fs_error_set(err, ENOTSUP, "%s: deeper than %d cgroup levels", dir,
			    KFILTER_MAX_LEVEL);
}

int kfilter_load(const struct bpf_insn *insns, size_t n, struct fs_error *err)
{
	char log[KFILTER_LOG_SIZE];
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t) "GPL";
	long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0)
		return (int)fd; /* bpf(2) program fds are close-on-exec */
	int e = errno;
	if (e == EPERM || e == EACCES)
		return fs_error_set(err, e,
				    "bpf(BPF_PROG_LOAD) not permitted (needs root, or "
				    "CAP_BPF and CAP_PERFMON)");
	if (e == ENOSYS)
		return fs_error_set(err, e, "bpf(2): the kernel has no CONFIG_BPF_SYSCALL");
	/* Again with the verifier's log, for the message. */
	log[0] = '\0';
	a.log_level = 1;
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0)
		return (int)fd;
	log[sizeof(log) - 1] = '\0';
	for (char *c = log; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return fs_error_set(err, e, "bpf(BPF_PROG_LOAD) of the sample filter (verifier: %.200s)",
			    log);
}

int kfilter_attach(int event_fd, int prog_fd, struct fs_error *err)
{
	if (ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0)
		return fs_error_set(err, errno,
				    "attaching the sample filter (PERF_EVENT_IOC_SET_BPF)");
	return 0;
}
