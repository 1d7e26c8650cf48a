/* test_debuginfo.c - separate debug info (sidecar/debuginfo/,
 * sidecar/symbolize/elfdebug.h) against Debian's own files: glibc and its
 * libc6-dbg debug file (found by build-id), its .gnu_debuglink (name and
 * CRC, checked with zlib over the real debug file), the merge of the two
 * tables, and the refusals: a debug file of another build, garbage, an
 * xz bomb, debuginfod without a helper. Skips when libc6-dbg is missing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cleanup.h"
#include "debuginfo.h"
#include "elfdebug.h"
#include "elfsource.h"
#include "elfsyms.h"
#include "tap.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static char warnings[4096];

static void collect(void *ctx, const char *msg)
{
	size_t n = strlen(warnings);
	snprintf(warnings + n, sizeof(warnings) - n, "%s\n", msg);
}

static int copy_file(const char *from, const char *to)
{
	char cmd[2 * PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
	return system(cmd);
}

/* The address of the function name in es, or 0. */
static uint64_t find(const struct elfsyms *es, const char *name)
{
	for (size_t i = 0; i < elfsyms_count(es); i++) {
		struct elfsyms_sym s;
		const char *n;
		if (elfsyms_symbol(es, i, &s, &n) == 0 && !strcmp(n, name))
			return s.addr;
	}
	return 0;
}

static void hexid(const struct elfsyms *es, char *out)
{
	size_t len;
	const unsigned char *id = elfsyms_build_id(es, &len);
	out[0] = '\0';
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
}

/* A fresh table of libc's own symbols, parsed in the sandbox. */
static struct elfsyms *own_table(struct elfsource *src, int fd)
{
	struct elfsyms *es = NULL;
	struct stat st;
	fstat(fd, &st);
	if (elfsource_load(src, fd, st.st_size, "[libc.so.6]", &es) < 0)
		return NULL;
	return es;
}

static void test_links(const char *debug_path)
{
	cleanup_close int fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	struct elfdebug_links l;
	ok(elfdebug_links_fd(fd, &l, NULL) == 0 && l.has_link && elfdebug_links_valid(&l),
	   "links: glibc has a debug link (%s)", l.link);
	cleanup_close int dfd = open(debug_path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	fstat(dfd, &st);
	cleanup_free unsigned char *buf = malloc((size_t)st.st_size);
	ok(buf && pread(dfd, buf, (size_t)st.st_size, 0) == st.st_size, "read the debug file");
	uLong crc = crc32(crc32(0L, Z_NULL, 0), buf, (uInt)st.st_size);
	is_int((uint32_t)crc, l.crc, "links: its CRC is zlib's CRC-32 of libc6-dbg's file");
	struct elfsyms *mini = NULL;
	ok(elfdebug_debugdata_fd(fd, &mini, NULL) == -ENOENT, "links: glibc has no MiniDebugInfo");
	struct elfdebug_links bad = {.has_link = 1, .link = "../../etc/passwd"};
	ok(!elfdebug_links_valid(&bad), "links: a name with a slash is not valid");
	struct elfdebug_links two = {.has_link = 2};
	ok(!elfdebug_links_valid(&two), "links: a flag other than 0 or 1 is not valid");
}

static void test_unxz(void)
{
	size_t plain_len = 2 << 20, out_len = 0, packed_len = 0;
	cleanup_free unsigned char *plain = calloc(1, plain_len);
	cleanup_free unsigned char *packed = malloc(plain_len);
	ok(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, plain, plain_len, packed, &packed_len,
				   plain_len) == LZMA_OK,
	   "xz: 2 MiB of zeros packed");
	char *out = NULL;
	ok(elfdebug_unxz(packed, packed_len, 1 << 20, &out, &out_len, NULL) == -EFBIG && !out,
	   "xz: over the output cap is -EFBIG (a bomb costs the cap)");
	ok(elfdebug_unxz(packed, packed_len, 4 << 20, &out, &out_len, NULL) == 0 &&
	       out_len == plain_len,
	   "xz: under the cap it unpacks whole");
	free(out);
	out = NULL;
	ok(elfdebug_unxz("garbage!", 8, 1 << 20, &out, &out_len, NULL) == -ENOEXEC,
	   "xz: garbage is -ENOEXEC");
}

int main(void)
{
	tap_plan(30);
	struct stat st;
	if (stat(LIBC, &st) < 0)
		tap_skip_all("no " LIBC);
	struct elfsource *src = NULL;
	struct elfsource_opts so = {collect, NULL};
	if (elfsource_new(&so, &src, NULL) < 0)
		tap_skip_all("no ELF sandbox");
	cleanup_close int fd = open(LIBC, O_RDONLY | O_CLOEXEC);
	struct elfsyms *es = own_table(src, fd);
	char id[2 * ELFSYMS_BUILD_ID_MAX + 1], debug_path[PATH_MAX];
	if (!es)
		tap_skip_all("glibc could not be parsed");
	hexid(es, id);
	snprintf(debug_path, sizeof(debug_path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id,
		 id + 2);
	if (access(debug_path, R_OK) < 0) {
		elfsyms_free(es);
		elfsource_free(src);
		tap_skip_all("libc6-dbg is not installed");
	}
	test_links(debug_path);
	test_unxz();

	/* 1: a host debug directory of the test's own with glibc's debug file */
	char dir[] = "/tmp/fs-debuginfo-XXXXXX", path[PATH_MAX];
	ok(mkdtemp(dir) != NULL, "a temporary debug directory");
	snprintf(path, sizeof(path), "%s/good/.build-id/%.2s/%s.debug", dir, id, id + 2);
	ok(copy_file(debug_path, path) == 0, "copied glibc's debug file");
	snprintf(path, sizeof(path), "%s/good", dir);
	struct debuginfo_opts o = {.host_dir = path, .warn = collect};
	struct debuginfo *d = NULL;
	ok(debuginfo_new(&o, &d, NULL) == 0, "debuginfo_new");
	ok(find(es, "msort_with_tmp.part.0") == 0, "own table: no msort_with_tmp (stripped)");
	size_t own_n = elfsyms_count(es);
	is_int(debuginfo_augment(d, getpid(), fd, LIBC, "[libc.so.6]", src, &es),
	       DEBUGINFO_HOST_BUILD_ID, "found by build-id in the host directory");
	uint64_t at = find(es, "msort_with_tmp.part.0");
	ok(at != 0, "merged: msort_with_tmp is there");
	ok(elfsyms_count(es) > own_n, "merged: %zu symbols, over the own %zu", elfsyms_count(es),
	   own_n);
	const char *name = elfsyms_lookup(es, at + 1, NULL);
	is_str(name, "msort_with_tmp.part.0", "merged: an address inside it is named");
	char id2[2 * ELFSYMS_BUILD_ID_MAX + 1];
	hexid(es, id2);
	is_str(id2, id, "merged: the mapped file's build-id");
	uint64_t vaddr;
	ok(elfsyms_offset_to_vaddr(es, at, &vaddr) == 0,
	   "merged: the mapped file's program headers");
	struct debuginfo_stats ds;
	debuginfo_stats(d, &ds);
	is_int(ds.files[DEBUGINFO_HOST_BUILD_ID], 1, "stats: one file from the host's build-id");
	debuginfo_free(d);
	elfsyms_free(es);

	/* 2: a debug file of another build at glibc's build-id: refused */
	es = own_table(src, fd);
	snprintf(path, sizeof(path), "%s/wrong/.build-id/%.2s/%s.debug", dir, id, id + 2);
	ok(copy_file("/proc/self/exe", path) == 0, "planted an ELF file of another build");
	snprintf(path, sizeof(path), "%s/wrong", dir);
	o.host_dir = path;
	warnings[0] = '\0';
	debuginfo_new(&o, &d, NULL);
	is_int(debuginfo_augment(d, getpid(), fd, LIBC, "[libc.so.6]", src, &es), DEBUGINFO_NONE,
	       "wrong build-id: not taken");
	ok(strstr(warnings, "is not the file's") != NULL, "wrong build-id: warned (%s)", warnings);
	is_int(elfsyms_count(es), own_n, "wrong build-id: the own table stays");
	debuginfo_free(d);

	/* 3: garbage there, and debuginfod configured without its helper */
	snprintf(path, sizeof(path), "%s/junk/.build-id/%.2s/%s.debug", dir, id, id + 2);
	ok(copy_file("/etc/hostname", path) == 0 || copy_file("/etc/passwd", path) == 0,
	   "planted a text file");
	snprintf(path, sizeof(path), "%s/junk", dir);
	o.host_dir = path;
	o.urls = "http://127.0.0.1:9/";
	o.helper = "/nonexistent/flamesidecar-debuginfod";
	warnings[0] = '\0';
	debuginfo_new(&o, &d, NULL);
	is_int(debuginfo_augment(d, getpid(), fd, LIBC, "[libc.so.6]", src, &es), DEBUGINFO_NONE,
	       "garbage: not taken");
	ok(strstr(warnings, "not an ELF file") != NULL, "garbage: warned");
	ok(strstr(warnings, "debuginfod") != NULL, "debuginfod without its helper: warned (%s)",
	   warnings);
	debuginfo_stats(d, &ds);
	is_int(ds.refused, 1, "stats: one refused");
	debuginfo_free(d);
	elfsyms_free(es);

	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	elfsource_free(src);
	return tap_done();
}
