/* elfflat.h - the flat, self-contained form of one ELF file's symbol table
 * that the sandboxed ELF parser (elfjail.h) sends back to the sidecar.
 *
 * The child parses a container's ELF file with libelf, demangles every C++
 * name and encodes the result here; the parent, which never hands container
 * ELF bytes to libelf or the demangler, decodes it. Decoding is the only
 * parser of this format and treats the bytes as hostile (the child may be
 * compromised by the file it parsed): every count, offset and size is
 * checked, symbols must be sorted and unique, every name must lie inside
 * the string blob and be NUL-terminated within ELFSYMS_MAX_NAME bytes.
 *
 * Layout (host byte order: both ends are the same binary on one host):
 *
 *   struct elfflat_hdr                 magic "FSELFv1", counts, build id
 *   struct elfsyms_load  [nloads]      offset -> vaddr program headers
 *   struct elfflat_sym   [nsyms]       addr, size, name offset (sorted by addr)
 *   char                 [pool_len]    names, demangled, NUL-terminated
 *
 * and nothing after it: the length must add up exactly. */
#ifndef FS_ELFFLAT_H
#define FS_ELFFLAT_H

#include <stddef.h>
#include <stdint.h>

#include "elfsyms.h"
#include "error.h"

#define ELFFLAT_MAGIC	    "FSELFv1"
#define ELFFLAT_MAX_SYMBOLS (1u << 20)	/* symbols per file (the rest is dropped) */
#define ELFFLAT_MAX_POOL    (32u << 20) /* bytes of names per file */
/* The largest valid encoding: what the parent accepts from the child. */
#define ELFFLAT_MAX_BYTES                                                                          \
	(sizeof(struct elfflat_hdr) + ELFSYMS_MAX_LOADS * sizeof(struct elfsyms_load) +            \
	 (size_t)ELFFLAT_MAX_SYMBOLS * sizeof(struct elfflat_sym) + ELFFLAT_MAX_POOL)

struct elfflat_hdr {
	char magic[8];
	uint32_t nloads, nsyms;
	uint32_t pool_len, build_id_len;
	unsigned char build_id[ELFSYMS_BUILD_ID_MAX];
};

struct elfflat_sym {
	uint64_t addr;
	uint32_t size;
	uint32_t name;
};

/* Child side: encode es with every name demangled when demangle is set
 * (elfsyms_demangle), else as it is, cut to ELFSYMS_MAX_NAME - 1 bytes. Past ELFFLAT_MAX_SYMBOLS
 * symbols or ELFFLAT_MAX_POOL bytes of names the rest is dropped (highest addresses). *out is
 * malloc'd. 0 or -ENOMEM. */
int elfflat_encode(const struct elfsyms *es, int demangle, char **out, size_t *len);

/* Parent side: validate buf and build a table whose lookups return the
 * names as they are (elfsyms_adopt). 0, -EBADMSG (with the reason in err)
 * or -ENOMEM. buf is not kept. */
int elfflat_decode(const void *buf, size_t len, struct elfsyms **out, struct fs_error *err);

#endif
