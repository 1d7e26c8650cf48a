/* test_kfilter.c - the kernel-side sample filter (sidecar/profile/kfilter.h):
 *
 *   builder   the instructions of both programs, the 64-bit id split over
 *             the two slots of the immediate load, limits
 *   cgroup    id and depth of the cgroup2 root and of a new child cgroup
 *             (its inode), a non-cgroup directory refused
 *   kernel    (root) the sampler with the filter ON in pid scope on a busy
 *             child while this process spins too: every sample delivered is
 *             the child's, none had to be filtered here; and the same in a
 *             new child cgroup
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kfilter.h"
#include "sampler.h"
#include "tap.h"

static void test_builder(void)
{
	struct bpf_insn in[KFILTER_MAX_INSNS];
	uint64_t id = 0x123456789abcdef0ull;
	int n = kfilter_build_cgroup(in, KFILTER_MAX_INSNS, id, 3);
	is_int(n, 9, "cgroup program: 9 instructions");
	ok(in[0].code == (BPF_ALU64 | BPF_MOV | BPF_K) && in[0].dst_reg == BPF_REG_1 &&
	       in[0].imm == 3,
	   "r1 = level");
	ok(in[1].code == (BPF_JMP | BPF_CALL) && in[1].imm == KFILTER_HELPER_ANCESTOR_CGROUP_ID &&
	       in[1].imm == 123,
	   "call bpf_get_current_ancestor_cgroup_id (123)");
	ok(in[2].code == (BPF_LD | BPF_DW | BPF_IMM) && in[2].dst_reg == BPF_REG_1 &&
	       (uint32_t)in[2].imm == 0x9abcdef0u && in[3].code == 0 &&
	       (uint32_t)in[3].imm == 0x12345678u,
	   "r1 = id: low half, then high half");
	ok(in[4].code == (BPF_JMP | BPF_JNE | BPF_X) && in[4].dst_reg == BPF_REG_0 &&
	       in[4].src_reg == BPF_REG_1 && in[4].off == 2,
	   "if r0 != r1 skip to the drop");
	ok(in[5].imm == 1 && in[6].code == (BPF_JMP | BPF_EXIT) && in[7].imm == 0 &&
	       in[8].code == (BPF_JMP | BPF_EXIT),
	   "return 1 (keep), else return 0 (drop)");
	is_int(kfilter_build_cgroup(in, 8, id, 3), -E2BIG, "cgroup program: room checked");
	is_int(kfilter_build_cgroup(in, KFILTER_MAX_INSNS, id, KFILTER_MAX_LEVEL + 1), -EINVAL,
	       "cgroup program: absurd depth refused");

	n = kfilter_build_pid(in, KFILTER_MAX_INSNS, 4242);
	is_int(n, 7, "pid program: 7 instructions");
	ok(in[0].code == (BPF_JMP | BPF_CALL) && in[0].imm == KFILTER_HELPER_PID_TGID &&
	       in[0].imm == 14,
	   "call bpf_get_current_pid_tgid (14)");
	ok(in[1].code == (BPF_ALU64 | BPF_RSH | BPF_K) && in[1].imm == 32, "r0 >>= 32 (the tgid)");
	ok(in[2].code == (BPF_JMP | BPF_JNE | BPF_K) && in[2].imm == 4242 && in[2].off == 2,
	   "if r0 != pid skip to the drop");
	is_int(kfilter_build_pid(in, KFILTER_MAX_INSNS, 0), -EINVAL, "pid 0 refused");
	is_int(kfilter_build_pid(in, 6, 1), -E2BIG, "pid program: room checked");
}

static const char *cgroup2_root(void)
{
	static const char *roots[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
	for (size_t i = 0; i < 2; i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/cgroup.controllers", roots[i]);
		if (access(p, F_OK) == 0)
			return roots[i];
	}
	return NULL;
}

static char child_cg[256];

static void test_cgroup_of(void)
{
	struct fs_error err = {0};
	uint64_t id = 0;
	unsigned level = 99;
	ok(kfilter_cgroup_of("/tmp", &id, &level, &err) == -ENOTSUP,
	   "/tmp is not a cgroup v2 directory (%s)", err.msg);
	const char *root = cgroup2_root();
	if (!root || geteuid() != 0) {
		tap_skip(2, "no cgroup2 hierarchy or not root");
		return;
	}
	int r = kfilter_cgroup_of(root, &id, &level, &err);
	ok(r == 0 && id == 1 && level == 0, "the cgroup2 root: id 1, level 0 (%s)",
	   r ? err.msg : "ok");
	snprintf(child_cg, sizeof(child_cg), "%s/fs-test-kfilter-%d", root, (int)getpid());
	if (mkdir(child_cg, 0755) < 0) {
		tap_diag("mkdir %s: %s", child_cg, strerror(errno));
		child_cg[0] = '\0';
		tap_skip(1, "cannot create a child cgroup");
		return;
	}
	struct stat st;
	r = kfilter_cgroup_of(child_cg, &id, &level, &err);
	ok(r == 0 && stat(child_cg, &st) == 0 && id == (uint64_t)st.st_ino && level == 1,
	   "a child of the root: its inode, level 1 (%s)", r ? err.msg : "ok");
}

static volatile int spin_stop;

static void *spin(void *arg)
{
	(void)arg;
	while (!spin_stop)
		;
	return NULL;
}

/* A busy child, in cgroup dir when given. */
static pid_t busy_child(const char *cg)
{
	pid_t c = fork();
	if (c == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cg) {
			char p[300];
			snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
			FILE *f = fopen(p, "w");
			if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
				_exit(1);
		}
		for (;;)
			;
	}
	return c;
}

struct count {
	pid_t want;
	unsigned mine, other;
};

static int count_sample(const struct sample *smp, void *ctx)
{
	struct count *c = ctx;
	if (smp->pid == c->want)
		c->mine++;
	else
		c->other++;
	return 0;
}

static void kernel_run(const char *what, struct sampler_opts *o, pid_t child)
{
	struct sampler *s = NULL;
	struct fs_error err = {0};
	o->frequency = 499;
	o->kernel_filter = SAMPLER_KFILTER_ON;
	int r = sampler_open(o, &s, &err);
	if (!ok(r == 0, "%s: sampler_open with the filter on: %s", what, r ? err.msg : "ok")) {
		tap_skip(4, "no sampler");
		return;
	}
	struct count c = {.want = child};
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sampler_poll(s, 100, count_sample, &c);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (c.mine < 100 && t.tv_sec - t0.tv_sec < 10);
	struct sampler_stats st;
	sampler_stats(s, &st);
	sampler_close(s);
	is_str(st.events, "kernel filter", "%s: scope enforced by the kernel filter", what);
	ok(c.mine >= 100, "%s: samples of the child (%u)", what, c.mine);
	is_int(c.other, 0, "%s: no other process's sample reached the ring", what);
	is_int(st.filtered, 0, "%s: nothing left to filter in user space", what);
}

static void test_kernel(void)
{
	if (geteuid() != 0) {
		tap_skip(2 * 5, "not root");
		return;
	}
	pthread_t th;
	pthread_create(&th, NULL, spin, NULL); /* this process is busy too */
	pid_t child = busy_child(NULL);
	struct sampler_opts o = {.pid = child};
	kernel_run("pid scope", &o, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (child_cg[0]) {
		child = busy_child(child_cg);
		struct sampler_opts oc = {.cgroup_path = child_cg};
		kernel_run("cgroup scope", &oc, child);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	} else {
		tap_skip(5, "no child cgroup");
	}
	spin_stop = 1;
	pthread_join(th, NULL);
}

int main(void)
{
	tap_plan(27);
	test_builder();
	test_cgroup_of();
	test_kernel();
	if (child_cg[0] && rmdir(child_cg) < 0)
		tap_diag("rmdir %s: %s", child_cg, strerror(errno));
	return tap_done();
}
