/* libjvm.c - libjvm.so of a process and the VMStructs symbols it exports.
 *
 * The file is opened as /proc/<pid>/map_files/<start>-<end> (the mapping
 * itself, whatever the container's mount namespace calls it), never by the
 * path the maps line shows, and parsed in the ELF sandbox (elfjail.h): only
 * its exported data symbols come back, in a validated flat table. The file
 * size is bounded. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "localfs.h"
#include "elfjail.h"
#include "fileio.h"
#include "hotspot_int.h"

#define LIBJVM_MAX_FILE	      (1ull << 30)
#define LIBJVM_MAX_MAPS_LINE  4096
#define LIBJVM_MAX_MAPS_LINES 200000

const char *const hs_sym_names[HS_SYM_COUNT] = {
    [HS_SYM_STRUCTS] = "gHotSpotVMStructs",
    [HS_SYM_TYPES] = "gHotSpotVMTypes",
    [HS_SYM_INT_CONSTANTS] = "gHotSpotVMIntConstants",
    [HS_SYM_LONG_CONSTANTS] = "gHotSpotVMLongConstants",
    [HS_SYM_STRUCT_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [HS_SYM_STRUCT_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [HS_SYM_STRUCT_TYPE_STRING] = "gHotSpotVMStructEntryTypeStringOffset",
    [HS_SYM_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [HS_SYM_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [HS_SYM_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
    [HS_SYM_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [HS_SYM_TYPE_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
    [HS_SYM_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
    [HS_SYM_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
    [HS_SYM_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
    [HS_SYM_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
    [HS_SYM_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
    [HS_SYM_LONG_NAME] = "gHotSpotVMLongConstantEntryNameOffset",
    [HS_SYM_LONG_VALUE] = "gHotSpotVMLongConstantEntryValueOffset",
    [HS_SYM_LONG_STRIDE] = "gHotSpotVMLongConstantEntryArrayStride",
};

/* The first mapping of a file named .../libjvm.so at file offset 0. */
static int libjvm_find_map(pid_t pid, struct libjvm_map *m, uint64_t *lo, uint64_t *hi,
			   struct fs_error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	cleanup_fclose FILE *f = fopen(path, "re");
	if (!f)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	if (libjvm_scan_maps(f, m, lo, hi) < 0)
		return fs_error_set(err, ENOENT, "pid %d maps no libjvm.so: not a HotSpot JVM",
				    (int)pid);
	return 0;
}

int libjvm_scan_maps(FILE *f, struct libjvm_map *m, uint64_t *lo, uint64_t *hi)
{
	char line[LIBJVM_MAX_MAPS_LINE];
	int found = 0, tail = 0;
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t n = 0; n < LIBJVM_MAX_MAPS_LINES && fgets(line, sizeof(line), f); n++) {
		uint64_t s, e, off;
		int name = 0, cont = tail;
		/* The rest of a line longer than the buffer is path text, the
		 * process's to choose: never read as a line of its own. */
		tail = !strchr(line, '\n');
		if (cont)
			continue;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*4s %" SCNx64 " %*s %*u %n", &s, &e,
			   &off, &name) < 3 ||
		    name == 0)
			continue;
		char *p = line + name;
		p[strcspn(p, "\n")] = '\0';
		char *del = strstr(p, " (deleted)");
		if (del)
			*del = '\0';
		size_t len = strlen(p);
		if (len < 10 || strcmp(p + len - 10, "/libjvm.so") != 0)
			continue;
		if (s < *lo)
			*lo = s;
		if (e > *hi)
			*hi = e;
		if (!found && off == 0) {
			m->start = s;
			m->end = e;
			m->pgoff = off;
			found = 1;
		}
	}
	return found ? 0 : -ENOENT;
}

/* The load bias: where the PT_LOAD that starts at the mapping's file
 * offset went. */
static int libjvm_bias(const struct elfsyms *es, const struct libjvm_map *m, uint64_t *bias)
{
	size_t n;
	const struct elfsyms_load *l = elfsyms_loads(es, &n);
	for (size_t i = 0; i < n; i++) {
		if (l[i].offset != m->pgoff)
			continue;
		*bias = m->start - (l[i].vaddr & ~(uint64_t)4095);
		return 0;
	}
	return -ENOEXEC;
}

static void libjvm_pick_syms(const struct elfsyms *es, uint64_t bias, struct hs_syms *out)
{
	struct elfsyms_sym sym;
	const char *name;
	for (size_t i = 0; elfsyms_symbol(es, i, &sym, &name) == 0; i++) {
		if (strncmp(name, "gHotSpotVM", 10) != 0)
			continue;
		for (int k = 0; k < HS_SYM_COUNT; k++)
			if (out->addr[k] == 0 && strcmp(name, hs_sym_names[k]) == 0)
				out->addr[k] = sym.addr + bias;
	}
}

/* libjvm.so's exported data symbols, parsed in the ELF sandbox: the file
 * is the container's (docs/security.md). */
static int libjvm_read_syms(int fd, const char *path, struct elfsyms **es, struct fs_error *err)
{
	struct elfjail *j = NULL;
	int r = elfjail_open(NULL, &j, err);
	if (r < 0)
		return r;
	r = elfjail_parse(j, fd, ELFJAIL_OBJECTS, es, err);
	elfjail_close(j);
	return r < 0 ? fs_error_wrap(err, "%s", path) : 0;
}

int libjvm_find_syms(pid_t pid, struct hs_syms *out, uint64_t *lo, uint64_t *hi,
		     struct fs_error *err)
{
	struct libjvm_map m;
	int rc = libjvm_find_map(pid, &m, lo, hi, err);
	if (rc < 0)
		return rc;
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m.start,
		 m.end);
	/* O_PATH (opens nothing), checked, then that very inode reopened. */
	cleanup_close int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	/* Nothing a container's FUSE daemon answers (docs/security.md). */
	if ((rc = localfs_check_fd(pfd, pid, path, err)) < 0)
		return rc;
	struct stat st;
	if (fstat(pfd, &st) < 0)
		return fs_error_set(err, errno, "fstat %s", path);
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > LIBJVM_MAX_FILE)
		return fs_error_set(err, ENOENT, "%s: not a regular file under 1 GiB", path);
	cleanup_close int dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return fs_error_set(err, errno, "opening /proc/self/fd");
	cleanup_close int fd = fileio_reopen(pfd, dir, err);
	if (fd < 0)
		return fd;
	struct elfsyms *es = NULL;
	if ((rc = libjvm_read_syms(fd, path, &es, err)) < 0)
		return rc == -ENOEXEC ? fs_error_set(err, ENOENT,
						     "libjvm.so of pid %d: not an ELF "
						     "file",
						     (int)pid)
				      : rc;
	uint64_t bias;
	if (libjvm_bias(es, &m, &bias) < 0) {
		elfsyms_free(es);
		return fs_error_set(err, ENOENT, "libjvm.so of pid %d: no PT_LOAD at offset 0",
				    (int)pid);
	}
	memset(out, 0, sizeof(*out));
	libjvm_pick_syms(es, bias, out);
	elfsyms_free(es);
	for (int k = 0; k < HS_SYM_COUNT; k++)
		if (out->addr[k] == 0)
			return fs_error_set(err, ENOENT, "libjvm.so of pid %d does not export %s",
					    (int)pid, hs_sym_names[k]);
	return 0;
}
