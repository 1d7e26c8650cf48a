/* fuzz_attach.c - arbitrary bytes as a JVM's answer on the attach socket
 * (whoever listens there in the container writes it): the reply parser,
 * then what `load` and `jcmd` make of the parsed reply. Nothing may crash
 * or read out of bounds; a parsed reply keeps its text NUL-terminated and
 * no longer than the input; every error message stays printable (the
 * reply's bytes are shown escaped); each input finishes within
 * fuzz_bound.h's time limit. Byte 0, bit 7: the rest repeated up to the
 * most the sidecar reads of a reply (ATTACH_REPLY_MAX). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "fuzz_bound.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

static void fa_printable(const struct fs_error *e)
{
	for (const char *p = e->msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort(); /* container bytes reached a message unescaped */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t len = size - 1;
	char *grown = (data[0] & 0x80) ? fuzz_bound_grow(data + 1, len, ATTACH_REPLY_MAX) : NULL;
	const char *buf = grown ? grown : (const char *)data + 1;
	if (grown)
		len = ATTACH_REPLY_MAX;
	struct fuzz_bound t0 = fuzz_bound_start();
	struct attach_reply r;
	struct fs_error err = {0};
	if (attach_parse_reply(buf, len, &r, &err) < 0) {
		fa_printable(&err);
	} else {
		if (!r.text || r.len > len || r.text[r.len] != '\0')
			abort();
		int rc = 0;
		err.msg[0] = '\0';
		attach_load_result(&r, "libfuzz.so", &rc, &err);
		fa_printable(&err);
		err.msg[0] = '\0';
		attach_jcmd_result(&r, "Compiler.perfmap", &err);
		fa_printable(&err);
		attach_reply_free(&r);
	}
	fuzz_bound_end(t0, "attach reply", len);
	free(grown);
	return 0;
}
