/* run_summary.h - the summary `flamesidecar run` prints on standard output
 * once the graph is written: one line per subject, each starting with its
 * name (docs/run.md, "The summary, line by line"). */
#ifndef FS_RUN_SUMMARY_H
#define FS_RUN_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "offcpu.h"
#include "profile.h"
#include "registry.h"

struct run_summary_in {
	const struct registry_entry *entry;	       /* the container */
	unsigned frequency;			       /* -F; 0 = 99 */
	bool ended_early;			       /* a signal ended the window */
	uint64_t window_ms, after_ms;		       /* the window; the graph, after it closed */
	uint64_t after_cpu_us;			       /* CPU spent on the graph after it closed */
	const char *svg, *folded, *pprof, *speedscope; /* the files written, or NULL */
};

/* Samples, scope, naming, JVMs, unwinders, debug info, stalls, the hottest
 * frames and the files, from p's stats. */
void run_summary_print(struct profile *p, const struct run_summary_in *in);

/* The thread-state poller's line (--event offcpu|wall). */
void run_summary_offcpu(const struct offcpu *oc, uint64_t window_ms);

#endif
