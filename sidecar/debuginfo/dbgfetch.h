/* dbgfetch.h - ask debuginfod servers for a debug file, through elfutils'
 * libdebuginfod (its HTTP client, server list, retries and cache) in a
 * helper program, flamesidecar-debuginfod (helper/), run for each query.
 *
 * Why a helper process: the sidecar is linked statically and Debian ships
 * libdebuginfod as a shared library only (with libcurl and a TLS stack
 * behind it); a process of its own also keeps an HTTP client, its threads
 * and its memory out of the root profiler, and one that hangs is killed at
 * the deadline. It gets an explicit environment: DEBUGINFOD_URLS (the
 * operator's), the cache location (DEBUGINFOD_CACHE_PATH, XDG_CACHE_HOME,
 * HOME as the sidecar has them), DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME and
 * DEBUGINFOD_MAXSIZE from lib/budget.h; nothing else (no LD_*).
 *
 * It prints the path of the file in libdebuginfod's cache; that file is
 * opened here (O_NOFOLLOW, a regular file, size-checked) and is then
 * treated as container input by the caller: parsed in the ELF sandbox,
 * taken only when its build-id matches. */
#ifndef FS_DBGFETCH_H
#define FS_DBGFETCH_H

#include <stddef.h>

#include "error.h"

#define DBGFETCH_HELPER	    "flamesidecar-debuginfod"
#define DBGFETCH_OUTPUT_MAX 4096 /* bytes of the helper's answer read */

/* The helper next to our own executable (/proc/self/exe's directory), or
 * FS_LIBEXECDIR's when built with one. 0 or -ENOENT. */
int dbgfetch_helper_path(char *buf, size_t len);

/* The debug file of build-id id (len bytes) from the servers in urls, within
 * timeout_ms: its fd (O_RDONLY). -ENOENT when no server has it (or the
 * reply was refused by libdebuginfod), -ETIMEDOUT (the helper was killed),
 * or another -errno; err says why. */
int dbgfetch_find(const char *helper, const char *urls, const unsigned char *id, size_t len,
		  unsigned timeout_ms, struct fs_error *err);

#endif
