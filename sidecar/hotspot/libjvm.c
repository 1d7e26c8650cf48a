/* libjvm.c - libjvm.so of a process and the VMStructs symbols it exports.
 *
 * The file is opened as /proc/<pid>/map_files/<start>-<end> (the mapping
 * itself, whatever the container's mount namespace calls it), never by the
 * path the maps line shows. Only the dynamic symbol table is read, with
 * libelf over pread (ELF_C_READ), and the file size is bounded. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
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

static void libjvm_elf_end(Elf **e)
{
	if (*e)
		elf_end(*e);
}

struct libjvm_map {
	uint64_t start, end, pgoff;
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
	char line[LIBJVM_MAX_MAPS_LINE];
	int found = 0;
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t n = 0; n < LIBJVM_MAX_MAPS_LINES && fgets(line, sizeof(line), f); n++) {
		uint64_t s, e, off;
		int name = 0;
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
	if (!found)
		return fs_error_set(err, ENOENT, "pid %d maps no libjvm.so: not a HotSpot JVM",
				    (int)pid);
	return 0;
}

/* The load bias: where the PT_LOAD that starts at file offset 0 went. */
static int libjvm_bias(Elf *elf, const struct libjvm_map *m, uint64_t *bias)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < n && i < 64; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset != m->pgoff)
			continue;
		*bias = m->start - (ph.p_vaddr & ~(uint64_t)4095);
		return 0;
	}
	return -ENOEXEC;
}

static int libjvm_read_dynsym(Elf *elf, uint64_t bias, struct hs_syms *out)
{
	Elf_Scn *scn = NULL;
	int found = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t ent = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		if (!d || !d->d_buf || ent == 0)
			continue;
		size_t count = d->d_size / ent;
		for (size_t i = 1; i < count && i < (4u << 20); i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strncmp(name, "gHotSpotVM", 10) != 0)
				continue;
			for (int k = 0; k < HS_SYM_COUNT; k++) {
				if (out->addr[k] == 0 && strcmp(name, hs_sym_names[k]) == 0) {
					out->addr[k] = sym.st_value + bias;
					found++;
				}
			}
		}
	}
	return found;
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
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fs_error_set(err, errno, "fstat %s", path);
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > LIBJVM_MAX_FILE)
		return fs_error_set(err, ENOENT, "%s: not a regular file under 1 GiB", path);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fs_error_set(err, ENOSYS, "libelf: %s", elf_errmsg(-1));
	__attribute__((cleanup(libjvm_elf_end))) Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return fs_error_set(err, ENOENT, "libjvm.so of pid %d: not an ELF file", (int)pid);
	uint64_t bias;
	if (libjvm_bias(elf, &m, &bias) < 0)
		return fs_error_set(err, ENOENT, "libjvm.so of pid %d: no PT_LOAD at offset 0",
				    (int)pid);
	memset(out, 0, sizeof(*out));
	libjvm_read_dynsym(elf, bias, out);
	for (int k = 0; k < HS_SYM_COUNT; k++)
		if (out->addr[k] == 0)
			return fs_error_set(err, ENOENT, "libjvm.so of pid %d does not export %s",
					    (int)pid, hs_sym_names[k]);
	return 0;
}
