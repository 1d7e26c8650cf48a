/* kfilter.h - a kernel-side sample filter for system-wide perf events.
 *
 * Contract: a constant BPF_PROG_TYPE_PERF_EVENT program of a handful of
 * instructions, loaded with the raw bpf(2) syscall and attached to each
 * per-CPU event with PERF_EVENT_IOC_SET_BPF. It runs on every overflow of
 * the event and returns 1 (keep the sample) when the task running is in
 * scope, else 0: the kernel then writes nothing into the ring (no record,
 * no user stack copy, no wakeup). Scopes:
 *
 *   cgroup  bpf_get_current_ancestor_cgroup_id(level) == id: the task is in
 *           the cgroup v2 directory (id = its kernfs id, as
 *           name_to_handle_at gives it; level = its depth below the root of
 *           the whole cgroup2 hierarchy) or in one of its sub-cgroups;
 *   pid     the upper half of bpf_get_current_pid_tgid() (the tgid, host
 *           view) == pid: every thread of one process.
 *
 * The program reads no memory and has no map, so it loads with CAP_BPF +
 * CAP_PERFMON (or root) and costs a few tens of ns per sample. What it does
 * not save: the kernel prepares the sample (walks the callchain) before
 * running the program (perf_prepare_sample, kernels since 6.3), and the
 * sampling timer still fires on every CPU while the container is idle.
 * Side-band records (fork, exit, comm) do not go through the program.
 *
 * Nothing here prints; errors are -errno with a message in struct fs_error. */
#ifndef FS_KFILTER_H
#define FS_KFILTER_H

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define KFILTER_MAX_INSNS 16
#define KFILTER_MAX_LEVEL 64 /* cgroup depth we accept (the kernel allows more) */

/* BPF helper ids (include/uapi/linux/bpf.h, stable ABI). */
#define KFILTER_HELPER_PID_TGID		  14  /* bpf_get_current_pid_tgid */
#define KFILTER_HELPER_ANCESTOR_CGROUP_ID 123 /* bpf_get_current_ancestor_cgroup_id */

/* The program keeping samples of tasks in cgroup id (or below it); level
 * is the cgroup's depth (the root is 0). Fills insns (room for max),
 * returns the instruction count or -E2BIG. */
int kfilter_build_cgroup(struct bpf_insn *insns, size_t max, uint64_t id, unsigned level);

/* The program keeping samples of process pid (its tgid). Count or -E2BIG /
 * -EINVAL (pid <= 0). */
int kfilter_build_pid(struct bpf_insn *insns, size_t max, pid_t pid);

/* The id and depth of a cgroup v2 directory: -ENOTSUP (not cgroup2: a v1
 * hierarchy, or ids are only meaningful in the initial cgroup namespace),
 * -ENOENT, or another -errno, with a message. */
int kfilter_cgroup_of(const char *dir, uint64_t *id, unsigned *level, struct fs_error *err);

/* Load a program (BPF_PROG_TYPE_PERF_EVENT, license "GPL"): its fd
 * (close-on-exec) or -errno with the verifier's first words. */
int kfilter_load(const struct bpf_insn *insns, size_t n, struct fs_error *err);

/* Attach prog_fd to the perf event event_fd. 0 or -errno. */
int kfilter_attach(int event_fd, int prog_fd, struct fs_error *err);

#endif
