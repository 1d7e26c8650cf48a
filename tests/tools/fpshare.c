/* fpshare - how the native unwinder tells a file built without frame
 * pointers (cfi_proc_fp_missing): the share of its code whose CFA is
 * rbp-based (cfitable_fp_permille), from the table the sandboxed ELF child
 * walks. Used to choose CFI_FP_PERMILLE (docs/unwind.md).
 *
 *   fpshare FILE...
 *
 * Prints "file rows build_ms fp_permille" per file (build_ms: the child's
 * walk and the decode, the one-time cost of the check). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cfitable.h"
#include "elfjail.h"

static double fpshare_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void fpshare_file(struct elfjail *j, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t len = 0;
	struct cfitable *t = NULL;
	if (fd < 0) {
		perror(path);
		return;
	}
	double a = fpshare_now_ms();
	if (elfjail_cfi(j, fd, &buf, &len, NULL) < 0 || cfitable_decode(buf, len, &t, NULL) < 0)
		printf("%s 0 0 -\n", path);
	else
		printf("%s %zu %.1f %u\n", path, cfitable_rows(t), fpshare_now_ms() - a,
		       cfitable_fp_permille(t));
	cfitable_free(t);
	free(buf);
	close(fd);
}

int main(int argc, char **argv)
{
	struct elfjail *j = NULL;
	if (argc < 2) {
		fprintf(stderr, "usage: fpshare FILE...\n");
		return 2;
	}
	if (elfjail_open(NULL, &j, NULL) < 0) {
		fprintf(stderr, "fpshare: cannot start the ELF child\n");
		return 1;
	}
	for (int i = 1; i < argc; i++)
		fpshare_file(j, argv[i]);
	elfjail_close(j);
	return 0;
}
