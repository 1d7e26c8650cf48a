/* elfsyms.h - function symbols of one ELF file (.symtab and .dynsym),
 * read with libelf, sorted for lookup by virtual address, with C++ names
 * demangled the way flame graphs show them ("JavaCalls::call_helper").
 *
 * The file comes as an fd (the symbolizer opens /proc/<pid>/map_files/...,
 * never a path inside a container) or as bytes in memory (the vDSO, tests,
 * the fuzzer). Every input is treated as hostile: sizes and counts are
 * bounded and a malformed file is an error, never a crash. */
#ifndef FS_ELFSYMS_H
#define FS_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "cleanup.h"

#define ELFSYMS_MAX_FILE      (1ull << 30) /* files larger than this are skipped */
#define ELFSYMS_MAX_SYMBOLS   (4u << 20)   /* symbols kept per file */
#define ELFSYMS_MAX_NAME      1024	   /* longer names are truncated */
#define ELFSYMS_MAX_POOL      (256u << 20) /* bytes of names per file */
#define ELFSYMS_MAX_LOADS     64	   /* PT_LOAD segments kept */
#define ELFSYMS_BUILD_ID_MAX  64
#define ELFSYMS_SIZELESS_SPAN 4096 /* a size-0 symbol covers at most this */

struct elfsyms;

struct elfsyms_sym {
	uint64_t addr;
	uint32_t size; /* clamped; 0 = unknown */
	uint32_t name; /* offset into the name pool */
};

struct elfsyms_load {
	uint64_t offset, vaddr, filesz; /* one PT_LOAD program header */
};

/* Load from an open file (read with pread: a file truncated under us
 * cannot SIGBUS the caller). 0 or -errno: -EFBIG over ELFSYMS_MAX_FILE,
 * -ENOEXEC when it is not a usable ELF file. */
int elfsyms_load_fd(int fd, struct elfsyms **out, struct fs_error *err);

/* The same with the data symbols (STT_OBJECT) a library exports in
 * .dynsym instead of its functions: the VMStructs tables of libjvm.so. */
int elfsyms_load_fd_objects(int fd, struct elfsyms **out, struct fs_error *err);

/* Load from memory; buf is copied, the caller keeps it. */
int elfsyms_load_mem(const void *buf, size_t len, struct elfsyms **out, struct fs_error *err);

/* Just the GNU build-id note of an open file, without reading symbols.
 * 0 with *len set, -ENOENT when there is none, or -errno. */
int elfsyms_read_build_id(int fd, unsigned char id[ELFSYMS_BUILD_ID_MAX], size_t *len);

/* File offset (from /proc/<pid>/maps: addr - start + pgoff) to the ELF
 * virtual address, through the PT_LOAD program headers. 0 or -ENOENT. */
int elfsyms_offset_to_vaddr(const struct elfsyms *es, uint64_t file_offset, uint64_t *vaddr);

/* The function containing vaddr, demangled and without its argument list,
 * or NULL. *offset (if not NULL) is vaddr - symbol start. The string lives
 * as long as es (demangled names are cached on first use). */
const char *elfsyms_lookup(struct elfsyms *es, uint64_t vaddr, uint64_t *offset);

size_t elfsyms_count(const struct elfsyms *es);

/* Symbol i in address order: *sym, and *name its raw (mangled) name.
 * 0, or -ENOENT past the end. */
int elfsyms_symbol(const struct elfsyms *es, size_t i, struct elfsyms_sym *sym, const char **name);

/* The PT_LOAD headers kept (at most ELFSYMS_MAX_LOADS). */
const struct elfsyms_load *elfsyms_loads(const struct elfsyms *es, size_t *n);

/* A table from parts already validated by the caller (elfflat.c): syms
 * sorted by address without duplicates, every name offset starting a
 * NUL-terminated string inside pool. Takes syms and pool (malloc'd) on
 * success; loads and build_id are copied. Lookups never call the demangler
 * of this process on these names: they return them as they are, or what
 * elfsyms_set_demangler's function makes of them. 0, -EINVAL or -ENOMEM. */
int elfsyms_adopt(struct elfsyms_sym *syms, size_t n, char *pool, size_t pool_len,
		  const struct elfsyms_load *loads, size_t nloads, const unsigned char *build_id,
		  size_t build_id_len, struct elfsyms **out);

/* How a table from elfsyms_adopt demangles a C++ name ("_Z...") on its
 * first lookup: 1 with the display name in out (as elfsyms_demangle gives
 * it), else 0 and the name stays mangled. The answer is cached per symbol. */
typedef int (*elfsyms_demangle_fn)(void *ctx, const char *name, char *out, size_t len);
void elfsyms_set_demangler(struct elfsyms *es, elfsyms_demangle_fn fn, void *ctx);

/* Build-id bytes (NULL and *len 0 when the file has none). */
const unsigned char *elfsyms_build_id(const struct elfsyms *es, size_t *len);

/* Approximate heap bytes held (for the caller's bound on caches). */
size_t elfsyms_memory(const struct elfsyms *es);

void elfsyms_free(struct elfsyms *es);
FS_DEFINE_CLEANUP(struct elfsyms, elfsyms_free)
#define cleanup_elfsyms __attribute__((cleanup(elfsyms_free_cleanup)))

/* Demangle an Itanium C++ name into out and strip its argument list,
 * qualifiers and (for templates) return type: "_ZN9JavaCalls11call_helperE..."
 * -> "JavaCalls::call_helper". Returns 1 when demangled, 0 when name is not
 * a C++ name (out gets a copy), -ENAMETOOLONG when out is too small
 * (truncated). */
int elfsyms_demangle(const char *name, char *out, size_t len);

/* The argument-stripping step alone, in place (exposed for tests). */
void elfsyms_strip_args(char *name);

#endif
