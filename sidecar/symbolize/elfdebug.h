/* elfdebug.h - what an ELF file says about its separate debug info, read in
 * the sandboxed ELF child (elfjail.h), never in the sidecar:
 *
 *   .gnu_debuglink   the debug file's name (no directory) and the CRC-32 of
 *                    its contents (GDB's "debug link")
 *   .gnu_debugdata   MiniDebugInfo: an xz-compressed ELF file holding a
 *                    .symtab of the functions the stripped file no longer
 *                    names (Fedora, and what `strip --keep-section` leaves)
 *
 * Both are container input (the file is the container's, or a file it
 * planted): the link name is checked (a plain file name, printable, at most
 * ELFDEBUG_MAX_LINK bytes), the compressed section is bounded
 * (ELFDEBUG_MAX_PACKED) and decompressed with liblzma under a memory limit
 * and an output cap (ELFDEBUG_MAX_UNPACKED); what comes out is parsed by
 * elfsyms_load_mem like any other ELF image. A malformed file is an error,
 * never a crash. */
#ifndef FS_ELFDEBUG_H
#define FS_ELFDEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "elfsyms.h"
#include "error.h"

#define ELFDEBUG_MAX_LINK     255		      /* bytes of a debug link name */
#define ELFDEBUG_MAX_PACKED   BUDGET_DEBUGDATA_PACKED /* .gnu_debugdata read */
#define ELFDEBUG_MAX_UNPACKED BUDGET_DEBUGDATA_BYTES  /* and what it may unpack to */
#define ELFDEBUG_LZMA_MEMORY  (64u << 20)	      /* liblzma's own memory limit */

/* What the child answers to a links request ('L'): fixed size, host byte
 * order (both ends are one binary). The parent checks it again
 * (elfdebug_links_valid): the child may have been subverted by the file. */
struct elfdebug_links {
	uint32_t has_link;		  /* 1: link and crc are set */
	uint32_t crc;			  /* CRC-32 of the debug file, as the link gives it */
	uint32_t has_debugdata;		  /* 1: a .gnu_debugdata section is there */
	uint32_t debugdata_size;	  /* its compressed size in bytes */
	char link[ELFDEBUG_MAX_LINK + 1]; /* NUL-terminated */
};

/* The debug link and MiniDebugInfo presence of the file open as fd (or of
 * the image buf/len). 0 with *out filled (zeros when it has neither),
 * -ENOEXEC not ELF, or -errno. */
int elfdebug_links_fd(int fd, struct elfdebug_links *out, struct fs_error *err);
int elfdebug_links_mem(const void *buf, size_t len, struct elfdebug_links *out,
		       struct fs_error *err);

/* 1 when l is well formed (a link name that is a plain file name, flags 0
 * or 1), else 0. */
int elfdebug_links_valid(const struct elfdebug_links *l);

/* The function symbols of the file's MiniDebugInfo: .gnu_debugdata
 * decompressed (xz) and parsed as an ELF image. 0 with *out; -ENOENT when
 * the file has none; -EFBIG over the bounds above; -ENOEXEC (not xz, not
 * ELF inside) or another -errno. */
int elfdebug_debugdata_fd(int fd, struct elfsyms **out, struct fs_error *err);
int elfdebug_debugdata_mem(const void *buf, size_t len, struct elfsyms **out, struct fs_error *err);

/* xz-decompress in (len bytes) into a malloc'd buffer of at most max bytes.
 * 0, -EFBIG (more than max), -ENOEXEC (not xz, corrupt) or -ENOMEM. */
int elfdebug_unxz(const void *in, size_t len, size_t max, char **out, size_t *out_len,
		  struct fs_error *err);

#endif
