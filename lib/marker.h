/* marker.h - the in-progress marker of an annotation-triggered profile,
 * <run_dir>/profiling/<id>.json. The hook's monitor writes it about itself
 * before it starts `flamesidecar run` and removes it when that ends; the
 * hook reads the markers to cap concurrent profiles and `flamesidecar
 * list` to show running ones. A marker is only believed while its pid is
 * alive with the recorded start time (a monitor that was killed leaves a
 * stale file, which then counts for nothing).
 *
 *   {"id":..,"pid":..,"start_time":..,"started":..,"delay":..,
 *    "duration":..,"frequency":..,"output":".."}
 */
#ifndef FS_MARKER_H
#define FS_MARKER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "json.h"
#include "registry.h"

#define MARKER_DIR	"profiling" /* under run_dir */
#define MARKER_FILE_MAX 8192

struct marker {
	char id[REGISTRY_ID_MAX + 1];
	pid_t pid;	     /* the monitor */
	uint64_t start_time; /* its proc_start_time */
	int64_t started;     /* unix seconds */
	unsigned delay, duration, frequency;
	char output[PATH_MAX]; /* the SVG being written */
};

/* Write m to path (created 0600 or truncated, never through a symlink).
 * 0 or -errno. */
int marker_write(const char *path, const struct marker *m);

/* Read dir_fd/name into m: bounded, the id validated, pid and start time
 * present. 0 or -errno (-EINVAL for a malformed marker). */
int marker_read_at(int dir_fd, const char *name, struct marker *m);

/* The monitor that wrote m still runs. */
int marker_alive(const struct marker *m);

/* The process a JSON record of ours names (a profile marker, a deadline
 * marker): "id" a valid container id, "pid" > 0, "start_time" >= 0. 0 with
 * them set, or -EINVAL. */
int marker_json_process(yajl_val v, const char **id, pid_t *pid, uint64_t *start_time);

#endif
