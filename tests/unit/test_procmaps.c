/* test_procmaps.c - /proc/<pid>/maps read and parsed once for the
 * symbolizer and the unwinder: types, labels, malformed and hostile lines,
 * the caps per file and per process, the shared budget, the checked open. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procmaps.h"
#include "tap.h"

static void test_parse(void)
{
	static const char text[] =
	    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
	    "00651000-00652000 r--p 00051000 08:02 173521      /usr/bin/dbus-daemon\n"
	    "7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n"
	    "7f0000200000-7f0000300000 r-xp 00001000 08:02 99 /lib/libc.so.6 (deleted)\n"
	    "7f0000300000-7f0000301000 r-xp 00000000 00:00 0 [anon:jit]\n"
	    "garbage line\n"
	    "7f0000400000-7f0000300000 r-xp 00000000 00:00 0 /reversed\n"
	    "7f0000500000-7f0000501000 r-xp 00000000 00:01 7 /memfd:code (deleted)\n"
	    "7f0000100000-7f0000101000 r-xp 00000000 08:02 5 /unsorted.so\n"
	    "7ffd0000000-7ffd0002000 r-xp 00000000 00:00 0 [vdso]\n"
	    "7fff00000000-7fff00001000 r-xp 00000000 00:00 0 [vdso]\n"
	    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]";
	struct procmaps m;
	size_t before = procmaps_held();
	is_int(procmaps_parse(text, sizeof(text) - 1, &m), 0, "parse");
	is_int(m.n, 7, "7 executable mappings kept");
	is_int(m.lines, 12, "12 lines seen");
	is_int(m.skipped, 4, "garbage, reversed, unsorted and an overlapping line skipped");
	is_int(m.v[0].type, PROCMAPS_FILE, "a file");
	is_str(procmaps_label(&m, &m.v[0]), "[dbus-daemon]", "labelled by its base name");
	ok(m.v[0].flags == (PROCMAPS_F_INODE | PROCMAPS_F_ABSOLUTE), "with an inode and a path");
	is_int(m.v[1].type, PROCMAPS_ANON, "anonymous rwx memory");
	is_str(procmaps_label(&m, &m.v[1]), "", "has no label");
	is_str(procmaps_label(&m, &m.v[2]), "[libc.so.6]", "\" (deleted)\" dropped");
	is_int(m.v[2].pgoff, 0x1000, "offset");
	is_str(m.labels + m.v[0].path, "/usr/bin/dbus-daemon",
	       "a file keeps its path (its module)");
	is_str(m.labels + m.v[2].path, "/lib/libc.so.6", "path without \" (deleted)\"");
	ok(m.v[1].path == 0 && m.v[5].path == 0, "anonymous memory and [vdso] have no path");
	is_int(m.v[3].type, PROCMAPS_ANON, "[anon:jit] is anonymous");
	is_int(m.v[4].type, PROCMAPS_FILE, "a memfd is a file");
	is_int(m.v[5].type, PROCMAPS_VDSO, "[vdso]");
	is_str(procmaps_label(&m, &m.v[5]), "[vdso]", "labelled as itself");
	is_int(m.v[6].type, PROCMAPS_SPECIAL, "[vsyscall]");
	ok(procmaps_find(&m, 0x400000) == &m.v[0] && procmaps_find(&m, 0x451fff) == &m.v[0],
	   "find: first and last byte");
	ok(!procmaps_find(&m, 0x452000) && !procmaps_find(&m, 0), "find: outside");
	ok(procmaps_find(&m, 0xffffffffff600000ull) == &m.v[6], "find: the last one");
	ok(procmaps_held() == before + m.bytes && m.bytes > 0, "counted in the budget");

	/* carry: what a caller resolved survives a re-read of unchanged maps */
	m.v[0].user = 42;
	m.v[2].user = 43;
	static const char text2[] =
	    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
	    "7f0000200000-7f0000300000 r-xp 00002000 08:02 99 /lib/libc.so.6\n";
	struct procmaps m2;
	is_int(procmaps_parse(text2, sizeof(text2) - 1, &m2), 0, "parse again");
	procmaps_carry(&m2, &m);
	is_int(m2.v[0].user, 42, "unchanged mapping keeps its user word");
	is_int(m2.v[1].user, 0, "a mapping at another offset does not");
	procmaps_release(&m);
	procmaps_release(&m2);
	is_int(procmaps_held(), before, "released: uncounted");
	is_int(procmaps_parse("", 0, &m), 0, "empty input");
	is_int(m.n, 0, "nothing");
	procmaps_release(&m);
}

/* n lines "start-end r-xp ... /name" with a long name each */
static char *make_maps(size_t n, size_t name_len, size_t *len)
{
	size_t cap = n * (name_len + 80) + 1;
	char *buf = malloc(cap), *p = buf;
	char name[4096];
	memset(name, 'n', name_len);
	name[name_len] = '\0';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%llx-%llx r-xp 00000000 08:02 %zu /%s%zu\n",
			     (unsigned long long)(0x10000 + i * 0x2000),
			     (unsigned long long)(0x10000 + i * 0x2000 + 0x1000), i + 1, name, i);
	*len = (size_t)(p - buf);
	return buf;
}

static void test_caps(void)
{
	size_t len;
	char *buf = make_maps(PROCMAPS_MAX_ENTRIES + 100, 8, &len);
	struct procmaps m;
	is_int(procmaps_parse(buf, len, &m), 0, "more mappings than the cap");
	is_int(m.n, PROCMAPS_MAX_ENTRIES, "cut at PROCMAPS_MAX_ENTRIES");
	ok(m.cut, "and says so");
	procmaps_release(&m);
	free(buf);

	/* a line longer than PROCMAPS_LINE_MAX (a process can name a mapping
	 * almost anything) is skipped, the next one is parsed */
	char *longline = malloc(2 * PROCMAPS_LINE_MAX);
	int n = sprintf(longline, "1000-2000 r-xp 00000000 08:02 1 /");
	memset(longline + n, 'x', PROCMAPS_LINE_MAX);
	n += PROCMAPS_LINE_MAX;
	n += sprintf(longline + n, "\n3000-4000 r-xp 00000000 08:02 1 /ok\n");
	is_int(procmaps_parse(longline, (size_t)n, &m), 0, "an overlong line");
	ok(m.n == 1 && m.skipped == 1, "skipped, the next one kept");
	is_str(procmaps_label(&m, &m.v[0]), "[ok]", "the next one");
	procmaps_release(&m);
	/* a NUL byte in a line */
	static const char nul[] = "1000-2000 r-xp 00000000 08:02 1 /a\0b\n";
	is_int(procmaps_parse(nul, sizeof(nul) - 1, &m), 0, "a NUL in a line");
	ok(m.n == 0 && m.skipped == 1, "that line is skipped");
	procmaps_release(&m);
	free(longline);

	/* a base name longer than PROCMAPS_LABEL_MAX is cut in its label */
	buf = make_maps(1, 1000, &len);
	is_int(procmaps_parse(buf, len, &m), 0, "a 1000-byte name");
	is_int(strlen(procmaps_label(&m, &m.v[0])), PROCMAPS_LABEL_MAX + 2, "label cut");
	procmaps_release(&m);
	free(buf);
}

/* Many processes with many long-named mappings: the total stays under the
 * budget, the table that would pass it is refused whole. */
static void test_budget(void)
{
	size_t len;
	char *buf = make_maps(PROCMAPS_MAX_ENTRIES, 3000, &len);
	struct procmaps *all = calloc(64, sizeof(*all));
	size_t kept = 0;
	int r = 0;
	while (kept < 64 && (r = procmaps_parse(buf, len, &all[kept])) == 0)
		kept++;
	is_int(r, -ENOSPC, "refused past the budget after %zu tables", kept);
	ok(kept > 0 && kept < 64, "some tables fit (%zu)", kept);
	ok(procmaps_held() <= PROCMAPS_MAX_HELD, "held %zu <= %u", procmaps_held(),
	   PROCMAPS_MAX_HELD);
	ok(all[kept].n == 0 && all[kept].v == NULL, "the refused one holds nothing");
	procmaps_release(&all[0]);
	is_int(procmaps_parse(buf, len, &all[0]), 0, "room again after a release");
	for (size_t i = 0; i < kept; i++)
		procmaps_release(&all[i]);
	is_int(procmaps_held(), 0, "all released");
	free(all);
	free(buf);
}

static void test_read(void)
{
	struct procmaps m;
	struct fs_error err = {0};
	is_int(procmaps_read(NULL, getpid(), &m, &err), 0, "our own maps");
	struct procmaps_map *me = procmaps_find(&m, (uint64_t)(uintptr_t)&test_read);
	ok(me && me->type == PROCMAPS_FILE, "this function is in a file mapping");
	is_str(me ? procmaps_label(&m, me) : NULL, "[test_procmaps.t]", "of this test");
	procmaps_release(&m);
	is_int(procmaps_read(NULL, 0x3fffffff, &m, &err), -ESRCH, "a pid that does not exist");

	/* a fake proc root: a symlink and a FIFO are refused, never opened */
	char root[] = "/tmp/test_procmaps.XXXXXX", path[256];
	ok(mkdtemp(root) != NULL, "temp dir");
	snprintf(path, sizeof(path), "%s/1", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/1/maps", root);
	ok(symlink("/proc/self/maps", path) == 0, "maps as a symlink");
	is_int(procmaps_read(root, 1, &m, &err), -EPERM, "refused");
	ok(strstr(err.msg, "not a regular file") != NULL, "because: %s", err.msg);
	unlink(path);
	ok(mkfifo(path, 0600) == 0, "maps as a FIFO");
	is_int(procmaps_read(root, 1, &m, &err), -EPERM, "refused without blocking");
	unlink(path);
	FILE *f = fopen(path, "w");
	fputs("1000-2000 r-xp 00000000 08:02 1 /bin/x\n", f);
	fclose(f);
	is_int(procmaps_read(root, 1, &m, &err), 0, "a regular file in a fake root is read");
	is_int(m.n, 1, "one mapping");
	procmaps_release(&m);
	unlink(path);
	snprintf(path, sizeof(path), "%s/1", root);
	rmdir(path);
	rmdir(root);
}

int main(void)
{
	tap_plan(57);
	test_parse();
	test_caps();
	test_budget();
	test_read();
	return tap_done();
}
