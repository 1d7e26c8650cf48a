/* elfbench - what parsing ELF files in the sandbox (elfjail.h) costs next
 * to parsing them in the sidecar itself, as the symbolizer did before.
 * Used by bench/elfjail.sh.
 *
 *   elfbench ROUNDS FILE...
 *
 * For each file, the median of ROUNDS of:
 *   inproc  elfsyms_load_fd: libelf in this process, names demangled lazily
 *           (the old path; the lookups of a run demangle only what they hit)
 *   jail    elfjail_parse with a warm child, as the symbolizer does it:
 *           libelf there, names left mangled, flat encoding, transfer,
 *           validation (the names a run hits are demangled later, one
 *           request each: demangle_us below)
 * once, cold: a new jail's first file (fork and sandbox setup included),
 * and the mean time of demangling a C++ name of the file in the child
 * (the first 2000 of them; in process for comparison).
 * Prints "file symbols inproc_ms jail_ms cold_ms ratio name_us_inproc
 * name_us_jail". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elfjail.h"
#include "elfsyms.h"

static double elfbench_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int elfbench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double elfbench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), elfbench_cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: elfbench ROUNDS FILE...\n");
		return 2;
	}
	int rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > 1000)
		rounds = 5;
	double *a = calloc((size_t)rounds, sizeof(double)),
	       *b = calloc((size_t)rounds, sizeof(double));
	struct elfjail *warm = NULL;
	struct fs_error err = {0};
	if (!a || !b || elfjail_open(NULL, &warm, &err) < 0) {
		fprintf(stderr, "elfbench: %s\n", err.msg);
		return 1;
	}
	int rc = 0;
	for (int f = 2; f < argc; f++) {
		int fd = open(argv[f], O_RDONLY | O_CLOEXEC);
		struct elfsyms *es = NULL;
		size_t n = 0;
		if (fd < 0) {
			perror(argv[f]);
			rc = 1;
			continue;
		}
		for (int i = 0; i < rounds; i++) {
			double t = elfbench_now_ms();
			if (elfsyms_load_fd(fd, &es, &err) < 0) {
				fprintf(stderr, "%s: %s\n", argv[f], err.msg);
				rc = 1;
			}
			a[i] = elfbench_now_ms() - t;
			n = elfsyms_count(es);
			elfsyms_free(es);
			es = NULL;
			t = elfbench_now_ms();
			if (elfjail_parse(warm, fd, 0, &es, &err) < 0) {
				fprintf(stderr, "%s: %s\n", argv[f], err.msg);
				rc = 1;
			}
			b[i] = elfbench_now_ms() - t;
			elfsyms_free(es);
			es = NULL;
		}
		struct elfjail *cold = NULL;
		double t = elfbench_now_ms();
		if (elfjail_open(NULL, &cold, &err) < 0 ||
		    elfjail_parse(cold, fd, 0, &es, &err) < 0)
			es = NULL;
		double cold_ms = elfbench_now_ms() - t;
		elfjail_close(cold);
		/* Demangling the C++ names, in process and in the child. */
		double din = 0, djail = 0;
		size_t cxx = 0;
		char out[ELFSYMS_MAX_NAME];
		for (size_t i = 0; es && i < elfsyms_count(es) && cxx < 2000; i++) {
			struct elfsyms_sym s;
			const char *name;
			if (elfsyms_symbol(es, i, &s, &name) < 0 || strncmp(name, "_Z", 2))
				continue;
			cxx++;
			t = elfbench_now_ms();
			elfsyms_demangle(name, out, sizeof(out));
			din += elfbench_now_ms() - t;
			t = elfbench_now_ms();
			elfjail_demangle(warm, name, out, sizeof(out), &err);
			djail += elfbench_now_ms() - t;
		}
		elfsyms_free(es);
		double in = elfbench_median(a, rounds), jail = elfbench_median(b, rounds);
		printf("%s %zu %.2f %.2f %.2f %.2f %.1f %.1f\n", argv[f], n, in, jail, cold_ms,
		       in > 0 ? jail / in : 0, cxx ? din * 1e3 / (double)cxx : 0,
		       cxx ? djail * 1e3 / (double)cxx : 0);
		close(fd);
	}
	elfjail_close(warm);
	free(a);
	free(b);
	return rc;
}
