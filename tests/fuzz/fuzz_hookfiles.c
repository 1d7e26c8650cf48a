/* fuzz_hookfiles.c - libFuzzer target: arbitrary bytes as the files the hook
 * reads from the container's and engine's side: the bundle's config.json,
 * Docker's config.v2.json (the name reader), Podman's containers.json, and
 * mountinfo text. Run with -max_len as large as those files may be (8 MiB:
 * the biggest limit, Podman's containers.json). Nothing may crash, leak,
 * read out of bounds, or use memory beyond a few times the input. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ID "0123456789abcdef"

static char fz_dir[64];
static char fz_bundle[256], fz_hostname[256];

/* Remove the layout at exit: nothing left in /tmp by a fuzzing run. */
static void fz_cleanup(void)
{
	static const char *const files[] = {
	    "containers/" FUZZ_ID "/hostname",
	    "containers/" FUZZ_ID "/config.v2.json",
	    "containers/" FUZZ_ID,
	    "containers",
	    "overlay-containers/" FUZZ_ID "/userdata/config.json",
	    "overlay-containers/" FUZZ_ID "/userdata",
	    "overlay-containers/" FUZZ_ID,
	    "overlay-containers/containers.json",
	    "overlay-containers",
	};
	char p[512];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", fz_dir, files[i]);
		if (unlink(p) < 0)
			rmdir(p);
	}
	rmdir(fz_dir);
}

/* The layout the readers expect, once: a Docker data root and a Podman
 * graph root in a private temp directory. */
static void fz_layout(void)
{
	char p[512];
	snprintf(fz_dir, sizeof(fz_dir), "/tmp/fuzz_hookfiles.XXXXXX");
	if (!mkdtemp(fz_dir))
		abort();
	atexit(fz_cleanup);
	snprintf(p, sizeof(p), "%s/containers", fz_dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/containers/" FUZZ_ID, fz_dir);
	mkdir(p, 0700);
	snprintf(fz_hostname, sizeof(fz_hostname), "%s/hostname", p);
	close(open(fz_hostname, O_CREAT | O_WRONLY, 0600));
	snprintf(p, sizeof(p), "%s/overlay-containers", fz_dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/overlay-containers/" FUZZ_ID, fz_dir);
	mkdir(p, 0700);
	snprintf(fz_bundle, sizeof(fz_bundle), "%s/userdata", p);
	mkdir(fz_bundle, 0700);
}

static void fz_put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	size_t off = 0;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fs_error err;
	char p[512];
	if (!fz_dir[0])
		fz_layout();
	/* The same bytes in every file: each reader sees them whole. */
	snprintf(p, sizeof(p), "%s/config.json", fz_bundle);
	fz_put(p, data, size);
	snprintf(p, sizeof(p), "%s/containers/" FUZZ_ID "/config.v2.json", fz_dir);
	fz_put(p, data, size);
	snprintf(p, sizeof(p), "%s/overlay-containers/containers.json", fz_dir);
	fz_put(p, data, size);

	struct hook_bundle b;
	hook_bundle_read(fz_bundle, &b, &err);
	struct hook_state st;
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), FUZZ_ID);
	hook_names_from_engine_state(fz_bundle, fz_hostname, &st, &err); /* Docker */
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), FUZZ_ID);
	hook_names_from_engine_state(fz_bundle, "", &st, &err); /* Podman */
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), FUZZ_ID);
	snprintf(st.name, sizeof(st.name), "claimed"); /* an annotation's claim */
	st.name_source = REGISTRY_NAME_ANNOTATION;
	hook_names_from_engine_state(fz_bundle, "", &st, &err);
	if (!st.name[0] || st.name_source == REGISTRY_NAME_NONE)
		abort(); /* a name is kept, with its source */

	/* mountinfo: the id looked for is the input's first number. */
	FILE *f = size ? fmemopen((void *)data, size, "r") : NULL;
	if (f) {
		unsigned long long id = strtoull((const char *)data, NULL, 10);
		hook_mountinfo_shared(f, id, &err);
		fclose(f);
	}
	return 0;
}
