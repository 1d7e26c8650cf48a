/* elfjail.h - parse container ELF files in a sandboxed child, never in the
 * sidecar itself.
 *
 * The ELF files a container maps are its to craft, and libelf and the C++
 * demangler are large parsers; the sidecar runs as root. So one forked
 * child per jail (started on the first file, restarted after a failure)
 * does the parsing:
 *
 *   Parent (root)                          Child (a jail.h client)
 *     opens the file (O_PATH, fstat,         no capabilities, uid/gid nobody
 *     reopen by fd), size check              when started as root, no_new_privs,
 *     fd over SCM_RIGHTS  ---------------->  seccomp allowlist without open,
 *                                            exec, sockets, signals, executable
 *                                            or shared memory;
 *                                            RLIMIT_AS, fds and core bounded
 *                                            libelf + demangler -> elfflat
 *     reply {status, len} + bytes  <-------
 *     (len capped, deadline per file)
 *     elfflat_decode: validates everything
 *
 * A child that dies, overruns its deadline or sends too much is killed
 * (SIGKILL through its pidfd) and reaped; that file gets no symbols and the
 * next one starts a new child. The parent only ever sees bytes in the
 * flat format, so a crafted file costs at most the names of its frames.
 *
 * Not thread-safe: one jail per symbolizer. */
#ifndef FS_ELFJAIL_H
#define FS_ELFJAIL_H

#include <stddef.h>
#include <stdint.h>

#include "elfdebug.h"
#include "elfsyms.h"
#include "error.h"
#include "cleanup.h"

#define ELFJAIL_TIMEOUT_MS	5000	     /* per file, sending to decoding */
#define ELFJAIL_NAME_TIMEOUT_MS 250	     /* per C++ name demangled */
#define ELFJAIL_MEMORY		(512u << 20) /* address space the child may add */
#define ELFJAIL_UID		65534	     /* nobody, when started as root */

struct elfjail_opts {
	unsigned timeout_ms;	  /* 0 = ELFJAIL_TIMEOUT_MS */
	unsigned name_timeout_ms; /* 0 = ELFJAIL_NAME_TIMEOUT_MS */
	size_t memory;		  /* 0 = ELFJAIL_MEMORY */
};

struct elfjail;

/* opts may be NULL. The child is not started yet. 0 or -ENOMEM. */
int elfjail_open(const struct elfjail_opts *opts, struct elfjail **out, struct fs_error *err);
/* Kills and reaps the child if it runs. */
void elfjail_close(struct elfjail *j);
FS_DEFINE_CLEANUP(struct elfjail, elfjail_close)
#define cleanup_elfjail __attribute__((cleanup(elfjail_close_cleanup)))

/* Symbols of the regular file open as fd (elfsyms_load_fd's bounds, then
 * elfflat's), parsed in the child. flags: ELFJAIL_DEMANGLE every C++ name
 * demangled there at once (else they come back mangled, for
 * elfjail_demangle); ELFJAIL_OBJECTS the exported data symbols instead of
 * the functions (elfsyms_load_fd_objects). 0, or -errno with the reason in err:
 * the child's own error (-ENOEXEC not ELF, -EFBIG, -ENOMEM...), -ETIMEDOUT
 * (killed), -ECHILD (it died), -EBADMSG (a malformed answer). */
#define ELFJAIL_DEMANGLE 0x1
#define ELFJAIL_OBJECTS	 0x2
/* ELFJAIL_DEBUGDATA: the symbols of the file's MiniDebugInfo
 * (.gnu_debugdata unpacked there, elfdebug.h) instead of its own; -ENOENT
 * when it has none. */
#define ELFJAIL_DEBUGDATA 0x4
int elfjail_parse(struct elfjail *j, int fd, unsigned flags, struct elfsyms **out,
		  struct fs_error *err);

/* The call frame information of the regular file open as fd, walked in
 * the child (cfiflat_encode_fd): *buf (malloc'd, at most CFIFLAT_MAX_BYTES)
 * holds the cfiflat encoding, NOT yet validated: the caller decodes it
 * (cfitable_decode) and calls elfjail_distrust when it is malformed. 0 or
 * -errno as elfjail_parse. */
int elfjail_cfi(struct elfjail *j, int fd, char **buf, size_t *len, struct fs_error *err);

/* The .gnu_debuglink and .gnu_debugdata presence of fd (elfdebug.h),
 * read in the child and checked again here (elfdebug_links_valid). 0 or
 * -errno as elfjail_parse. */
int elfjail_links(struct elfjail *j, int fd, struct elfdebug_links *out, struct fs_error *err);

/* Kill the child (it sent a malformed answer): the next request starts a
 * new one. */
void elfjail_distrust(struct elfjail *j);

/* The display name of one C++ name (elfsyms_demangle's, at most
 * ELFSYMS_MAX_NAME - 1 bytes), demangled in the child: the lazy half of a
 * table parsed without demangling, so a run pays only for the names its
 * samples hit and a demangler bomb costs one name. 0 with out filled;
 * -ENOENT when it is not a C++ name; -ETIMEDOUT (the child was killed; the
 * next request starts another) or another -errno. */
int elfjail_demangle(struct elfjail *j, const char *name, char *out, size_t len,
		     struct fs_error *err);

/* The child's confinement (jail.h) with opts applied (NULL: defaults) and
 * its request loop as main: tests run their own main in the same jail. */
struct jail_spec;
void elfjail_spec(const struct elfjail_opts *opts, struct jail_spec *s);

/* The child's pid (0 when none runs), for tests. */
int elfjail_child_pid(const struct elfjail *j);

#endif
