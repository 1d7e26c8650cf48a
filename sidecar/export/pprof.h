/* pprof.h - an export (export.h) as a gzip-compressed pprof profile
 * (profile.proto, encoded by protobuf-c), the format of `go tool pprof`,
 * Grafana Pyroscope, Parca and Google Cloud Profiler.
 *
 *   sample types  samples/count and cpu/nanoseconds (count x period);
 *                 period_type cpu/nanoseconds, period = export period_ns
 *   function      one per distinct folded frame: name without the kind
 *                 suffix, system_name the folded text (so nothing is lost)
 *   location      one per distinct physical frame with the frames inlined
 *                 into it (_[i] frames after it) as extra lines, the
 *                 innermost first, as profile.proto defines
 *   mapping       the frame kind or module: "[kernel.kallsyms]", the file of
 *                 a native frame (with its build id when the export has
 *                 one), "[jit]", "[c1]", "[interpreted]"; no mapping for
 *                 other plain frames
 *   labels        the export's labels on every sample, "pid" (numeric),
 *                 "process" (the root frame), "tid" (numeric) and "thread"
 *                 (its name) when known
 *   time          time_nanos, duration_nanos from the export
 * The mappings are synthetic (no addresses): has_functions is set so that
 * readers do not try to symbolize them. Mapping 1, which readers take for
 * the main binary ("File:" in go tool pprof), has no name. See
 * docs/export.md. */
#ifndef FS_PPROF_H
#define FS_PPROF_H

#include <stdio.h>

#include "error.h"
#include "export.h"

/* Write x to out, gzip-compressed. 0 or -errno (-ENOMEM, -EIO). */
int pprof_write(const struct export *x, FILE *out, struct fs_error *err);

/* The same, uncompressed, into a malloc'd buffer (*buf, *len): tests and
 * the fuzzer. 0 or -ENOMEM. */
int pprof_encode(const struct export *x, unsigned char **buf, size_t *len, struct fs_error *err);

#endif
