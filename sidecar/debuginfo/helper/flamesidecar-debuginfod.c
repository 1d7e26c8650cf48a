/* flamesidecar-debuginfod - one debuginfod query for flamesidecar
 * (sidecar/debuginfo/dbgfetch.h says why it is a process of its own).
 *
 *   flamesidecar-debuginfod BUILD-ID-HEX
 *
 * Asks the servers of DEBUGINFOD_URLS for the debug file of that build-id
 * through elfutils' libdebuginfod, which keeps its cache
 * (DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
 * $HOME/.cache/debuginfod_client). Prints "OK <path in the cache>" and
 * exits 0; exits 2 when no server has it; else prints "ERR <why>" and
 * exits 1. Linked dynamically against libdebuginfod (Debian ships no
 * static one); the sidecar runs it with an explicit environment. */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	unsigned char id[64];
	size_t n = argc == 2 ? strlen(argv[1]) : 0;
	if (n < 2 || n > 2 * sizeof(id) || n % 2) {
		printf("ERR usage: flamesidecar-debuginfod BUILD-ID-HEX\n");
		return 1;
	}
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(argv[1][2 * i]), lo = hexval(argv[1][2 * i + 1]);
		if (hi < 0 || lo < 0) {
			printf("ERR not a build-id in lower-case hex\n");
			return 1;
		}
		id[i] = (unsigned char)(hi << 4 | lo);
	}
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls) { /* never a download the operator did not ask for */
		printf("ERR DEBUGINFOD_URLS is not set\n");
		return 1;
	}
	debuginfod_client *c = debuginfod_begin();
	if (!c) {
		printf("ERR libdebuginfod: cannot start a client\n");
		return 1;
	}
	char *path = NULL;
	int fd = debuginfod_find_debuginfo(c, id, (int)(n / 2), &path);
	debuginfod_end(c);
	if (fd == -ENOENT)
		return 2;
	if (fd < 0) {
		printf("ERR %s\n", strerror(-fd));
		return 1;
	}
	printf("OK %s\n", path);
	free(path);
	return 0;
}
