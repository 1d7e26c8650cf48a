/* profile_rtmaps.h - JIT frames of runtimes other than HotSpot named from
 * the perf map they write themselves (docs/runtimes.md): node
 * --perf-basic-prof, python3.12 -X perf, .NET DOTNET_PerfMapEnabled=1,
 * LuaJIT, ... For every process sampled in the window that is not a JVM
 * (JVMs keep their own path, profile_fold.c), its container's
 * /tmp/perf-<pid in its pid namespace>.map is read every
 * PROFILE_WINDOW_READ_US and at the end, in increments (perfmap_tail.h),
 * with the JVM map's rules: opened beneath the process's root
 * (perfmap_open_checked: openat2 RESOLVE_IN_ROOT, no symlink, a regular
 * file owned by the process's uid with one link), at most
 * PERFMAP_MAX_CONTAINER_FILE bytes of it, its memory counted in the JIT
 * budget of all processes (profile_jit_full). Its frames in anonymous code
 * get the names, marked "_[j]" (a JIT frame in every palette).
 * Internal to sidecar/profile/. */
#ifndef FS_PROFILE_RTMAPS_H
#define FS_PROFILE_RTMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile.h"
#include "symbols.h"

struct profile;

/* While sampling: read the maps when PROFILE_WINDOW_READ_US has passed
 * since the last read. */
void profile_rtmaps_tick(struct profile *p);

/* Read every non-JVM process's map now (the end of a window, a fold). */
void profile_rtmaps_read_all(struct profile *p);

/* Bytes held by the maps read (profile_jit_full counts them). */
size_t profile_rtmaps_memory(const struct profile *p);

/* Frame f of pid, in count samples: counted for the summary. 1 when f
 * was named from pid's perf map (its name is not an inline chain). */
int profile_rtmaps_frame(struct profile *p, pid_t pid, const struct symbolizer_frame *f,
			 uint64_t count);

/* The summary lines' facts (st->rtmap, st->nrtmap). */
void profile_rtmaps_stats(const struct profile *p, struct profile_stats *st);

void profile_rtmaps_free(struct profile *p);

#endif
