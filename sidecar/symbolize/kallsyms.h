/* kallsyms.h - kernel text symbols from /proc/kallsyms, sorted for binary
 * search. As root the addresses are real; when kptr_restrict hides them
 * (every address 0) the table is empty and every lookup misses. */
#ifndef FS_KALLSYMS_H
#define FS_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "cleanup.h"

#define KALLSYMS_PATH	     "/proc/kallsyms"
#define KALLSYMS_MAX_SYMBOLS (4u << 20) /* bound on lines kept */
#define KALLSYMS_MAX_GAP     (1u << 20) /* a symbol covers at most 1 MiB */

struct kallsyms;

/* Parse a kallsyms-format file (path NULL = /proc/kallsyms). Only text
 * symbols (t, T, w, W) are kept. *out is freed with kallsyms_free().
 * 0 or -errno (-ENOENT when the file is missing). An all-zero file
 * (addresses hidden) loads as an empty table, not an error. */
int kallsyms_load(const char *path, struct kallsyms **out, struct fs_error *err);

/* Same from a buffer (tests, fuzzing). */
int kallsyms_parse(const char *buf, size_t len, struct kallsyms **out, struct fs_error *err);

/* The symbol containing addr (the nearest one at or below it, no further
 * than the next symbol or KALLSYMS_MAX_GAP), or NULL. *offset (if not
 * NULL) is addr - symbol start; *module (if not NULL) is the module name
 * or NULL for the core kernel. Returned strings live as long as ks. */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *offset,
			    const char **module);

/* Number of symbols kept. */
size_t kallsyms_count(const struct kallsyms *ks);

void kallsyms_free(struct kallsyms *ks);
FS_DEFINE_CLEANUP(struct kallsyms, kallsyms_free)
#define cleanup_kallsyms __attribute__((cleanup(kallsyms_free_cleanup)))

#endif
