/* deadmark.h - what the hook leaves when its deadline stops it.
 *
 * An opted-in container whose hook ran out of time runs on, unregistered
 * or without its bundle mount. So that this is never silent, the hook
 * prepares, once the container is known, a log line and a small marker
 * file; its SIGALRM handler then only writes them, with async-signal-safe
 * calls on descriptors opened beforehand (the hook may by then be in the
 * container's mount namespace, where no path of ours may be looked up).
 *
 * Markers are <run_dir>/unregistered/d-<xx>, xx a hash of the id into
 * DEADMARK_SLOTS names: bounded in number whatever the burst (a collision
 * loses the marker, never the log line). Content:
 *   {"id":..,"pid":..,"start_time":..,"stage":..,"time":..,"phase":..}
 * `list` shows the ones whose container runs and has no registry entry
 * ("opted in, not registered: deadline"); `gc` removes the others. */
#ifndef FS_DEADMARK_H
#define FS_DEADMARK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "registry.h"

#define DEADMARK_DIR   "unregistered" /* under run_dir */
#define DEADMARK_SLOTS 256
#define DEADMARK_MAX   1024 /* bytes of one marker file */

struct deadmark {
	int log_fd;	 /* the hook's log, or -1 */
	int dir_fd;	 /* run_dir, or -1 (no marker); unregistered/ is made on firing */
	char name[16];	 /* the marker's slot name */
	char tmp[32];	 /* written first, then renamed to name */
	char line[1024]; /* the log line up to its phase; time patched in */
	size_t line_len; /* bytes of line */
	char tail[256];	 /* the rest of the line after the phase */
	size_t tail_len;
	char content[768]; /* the marker, up to its phase */
	size_t content_len;
	const char *volatile phase; /* the last phase done (hook_mark) */
};

struct deadmark_info {
	char id[REGISTRY_ID_MAX + 1];
	pid_t pid;
	uint64_t start_time;
	int64_t time;
	char stage[32];
	char phase[32];
};

/* Prepare d for a hook of stage about id (pid/start_time: its process).
 * with_marker: also open run_dir for the marker (its directory is made,
 * 0700, only when the deadline fires).
 * Never fails: what cannot be prepared is left out (-1 fds). */
void deadmark_prepare(struct deadmark *d, int log_fd, const char *run_dir, int with_marker,
		      const char *stage, const char *id, pid_t pid, uint64_t start_time,
		      unsigned timeout_ms);

/* Write the log line (now's time, d->phase) and the marker.
 * Async-signal-safe. */
void deadmark_fire(const struct deadmark *d);

/* The markers of run_dir, sorted by time. *out malloc'd. 0 or -errno. */
int deadmark_list(const char *run_dir, struct deadmark_info **out, size_t *n);

/* Remove the marker of id, if that slot holds it. */
void deadmark_remove(const char *run_dir, const char *id);

/* Remove marker files that do not parse, and temporary ones older than a
 * minute. How many went. */
size_t deadmark_sweep_junk(const char *run_dir);

/* The slot name of id ("d-xx"). */
void deadmark_slot(const char *id, char *name, size_t len);

#endif
