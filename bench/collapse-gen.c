/* collapse-gen.c - write a seeded `perf script` corpus of a busy JVM for
 * bench/collapse.sh: deep Java stacks (JIT frames from /tmp/perf-PID.map,
 * interpreter and libjvm frames with C++ signatures, libc, some kernel
 * frames and [unknown] frames), 40 threads, cpu-clock with periods.
 *
 *   collapse-gen SAMPLES SEED > corpus.txt
 *
 * Stacks come from a pool of 20,000 call paths (depth 15-75) picked with a
 * skewed distribution, as in a real profile where a few paths are hot. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METHODS	 4000
#define PATHS	 20000
#define MAXDEPTH 75

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rnd(unsigned n)
{
	return (unsigned)(rng() % n);
}

static char method_name[METHODS][160];
static uint64_t method_addr[METHODS];
static const char *const pkgs[] = {"api", "core", "data", "io", "net", "svc", "util", "web"};

static const char *const jvm_bottom[] = {
    "\t    7f5e8c0a1b2c start_thread+0xd6 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
    "\t    7f5e8b1d3e4f thread_native_entry(Thread*)+0xe5 "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e8b0c2d3e Thread::call_run()+0xc4 "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e8b0b1c2d JavaThread::thread_main_inner()+0xd6 "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e8b0a0b1c thread_entry(JavaThread*, JavaThread*)+0x8f "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e8b09fa0b JavaCalls::call_virtual(JavaValue*, Handle, Klass*, Symbol*, Symbol*, "
    "JavaThread*)+0xe1 (/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e8b08e9fa JavaCalls::call_helper(JavaValue*, methodHandle const&, "
    "JavaCallArguments*, JavaThread*)+0x2d4 "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e74000cbb call_stub+0x0 (/tmp/perf-4242.map)\n",
};

static const char *const tops[] = {
    "\tffffffff81d35f77 read_zero+0x77 ([kernel.kallsyms])\n\tffffffff816bac2b vfs_read+0xbb "
    "([kernel.kallsyms])\n\tffffffff816bb886 ksys_read+0x66 "
    "([kernel.kallsyms])\n\tffffffff81f2a3c1 do_syscall_64+0x61 "
    "([kernel.kallsyms])\n\tffffffff8200012f entry_SYSCALL_64_after_hwframe+0x76 "
    "([kernel.kallsyms])\n\t    7f5e8c0f3a1d read+0x4d (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
    "\t    7f5e8b4c5d6e SharedRuntime::resolve_sub_helper(bool, bool, JavaThread*)+0x3e "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e8b3a4b5c OptoRuntime::new_instance_C(Klass*, JavaThread*)+0x5c "
    "(/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n",
    "\t    7f5e740a1b2c [unknown] (/tmp/perf-4242.map)\n",
    "\t    7f5e8c0e2f3a __memmove_avx_unaligned_erms+0x9a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
    "\t    7f5e74012345 Interpreter+0x0 (/tmp/perf-4242.map)\n",
};

static uint16_t paths[PATHS][MAXDEPTH];
static uint8_t path_depth[PATHS];
static uint8_t path_top[PATHS]; /* index into tops, or >= count: none */

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: collapse-gen SAMPLES SEED\n");
		return 2;
	}
	unsigned long long samples = strtoull(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10);

	for (unsigned i = 0; i < METHODS; i++) {
		const char *pkg = pkgs[rnd(8)];
		unsigned cls = rnd(400), m = rnd(60), kind = rnd(10);
		if (kind < 7)
			snprintf(method_name[i], sizeof(method_name[i]),
				 "Lcom/example/%s%u/Class%u;::method%u", pkg, i % 40, cls, m);
		else if (kind < 9)
			snprintf(method_name[i], sizeof(method_name[i]),
				 "Lcom/example/%s%u/Class%u$Inner%u;::lambda$run$%u", pkg, i % 40,
				 cls, rnd(5), m);
		else
			snprintf(method_name[i], sizeof(method_name[i]),
				 "Ljava/util/concurrent/ThreadPoolExecutor;::runWorker%u", m);
		method_addr[i] = 0x7f5e74100000ULL + (uint64_t)i * 0x1000;
	}
	/* call paths: a random walk over a fixed graph, 3 callees per method */
	for (unsigned p = 0; p < PATHS; p++) {
		unsigned depth = 15 + rnd(MAXDEPTH - 15);
		unsigned m = rnd(50);
		for (unsigned d = 0; d < depth; d++) {
			paths[p][d] = (uint16_t)m;
			m = (m * 2654435761u + 1 + rnd(3) * 7919u) % METHODS;
		}
		path_depth[p] = (uint8_t)depth;
		path_top[p] = (uint8_t)rnd(12);
	}

	static char out[1 << 20];
	setvbuf(stdout, out, _IOFBF, sizeof(out));
	printf("# ========\n# captured on    : bench host\n# cmdline : /usr/bin/perf record -F 99 "
	       "-g -p 4242\n# ========\n#\n");
	double t = 184694.229089;
	for (unsigned long long s = 0; s < samples; s++) {
		/* skewed: half the samples on 2% of the paths */
		unsigned p = rnd(2) ? rnd(PATHS / 50) : rnd(PATHS);
		unsigned tid = 4250 + rnd(40);
		t += 0.000101;
		printf("java 4242/%u [%03u] %.6f:   10101010 cpu-clock:ppp: \n", tid, rnd(2), t);
		if (path_top[p] < sizeof(tops) / sizeof(tops[0]))
			fputs(tops[path_top[p]], stdout);
		for (unsigned d = path_depth[p]; d-- > 0;) {
			unsigned m = paths[p][d];
			printf("\t    %" PRIx64 " %s+0x%x (/tmp/perf-4242.map)\n",
			       method_addr[m] + (d * 16), method_name[m], 0x10 + (m % 0x200));
		}
		for (size_t b = sizeof(jvm_bottom) / sizeof(jvm_bottom[0]); b-- > 0;)
			fputs(jvm_bottom[b], stdout);
		putchar('\n');
	}
	return ferror(stdout) ? 1 : 0;
}
