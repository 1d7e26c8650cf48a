/* fuzz_offcpu.c - arbitrary bytes as a thread's /proc stat, syscall and
 * stack texts (sidecar/offcpu/offcpu_parse.c; a thread's comm, inside stat,
 * is the container's): no crash, kernel frame names bounded, NUL-terminated,
 * without ';', and at most max of them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offcpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char state, buf[16], names[8][64];
	uint64_t start, sp, pc;
	if (offcpu_parse_stat(text, &state, &start) == 0 && !offcpu_state_frame(state, buf))
		abort();
	if (offcpu_parse_syscall(text, &sp, &pc) && (!sp || !pc))
		abort();
	struct offcpu_wait_point wp;
	if (offcpu_parse_wait_point(text, &wp) && (wp.sp != sp || wp.pc != pc))
		abort();
	size_t n = offcpu_parse_kstack(text, names, 8);
	if (n > 8)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!memchr(names[i], '\0', 64) || strchr(names[i], ';') || strlen(names[i]) < 5)
			abort();
	free(text);
	return 0;
}
