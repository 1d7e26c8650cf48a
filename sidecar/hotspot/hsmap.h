/* hsmap.h - the JIT symbol map of a HotSpot JVM, read from the host through
 * its VMStructs (hotspot.h), for JVMs that cannot be attached to: attach
 * disabled (-XX:+DisableAttachMechanism), no writable /tmp, a read-only
 * rootfs. Nothing is written into the container and nothing runs in the
 * JVM: every code blob of the code heaps becomes one map entry, an nmethod
 * named by its Method* ("pkg.Class.method", as the agent names it), a stub
 * by its blob name, the interpreter "Interpreter".
 *
 * An nmethod is split at its inlining boundaries as HotSpot records them
 * (its PcDescs and scopes, hotspot_scopes): each range is named by its
 * chain, outermost first, joined by "->", like the agent's unfoldall. A
 * pc belongs to the first PcDesc at or after it, so a range ends just after
 * its PcDesc's pc: a return address and the address before it both fall
 * in the range of their own call site. An nmethod without debug info
 * (native wrappers) is named by its method. */
#ifndef FS_HSMAP_H
#define FS_HSMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "error.h"
#include "perfmap.h"

#define HSMAP_MAX_BLOBS BUDGET_HSMAP_BLOBS /* blobs mapped at most (lib/budget.h) */
#define HSMAP_MAX_STEPS BUDGET_HSMAP_STEPS /* blobs and ranges walked at most */
#define HSMAP_MAX_MS	BUDGET_HSMAP_MS	   /* wall-clock time of one build */

struct hsmap_stats {
	int major;	 /* the JVM's major version */
	size_t nmethods; /* nmethods named by their Method* */
	size_t inlined;	 /* ranges with an inline chain (2 frames or more) */
	size_t stubs;	 /* entries named by a blob name (the interpreter included) */
	size_t unnamed;	 /* nmethods whose Method* could not be read (left out) */
	size_t bytes;	 /* of map text made */
	size_t steps;	 /* blobs and inline ranges walked */
	/* "" or why the walk stopped early ("time budget", "step budget"):
	 * the map then has what was read before. */
	const char *cut;
};

/* Map the JVM host pid. *out is freed with perfmap_free. 0 or -errno with
 * err saying why (see hotspot_open). */
int hsmap_build(pid_t pid, struct perfmap **out, struct hsmap_stats *st, struct fs_error *err);

/* The same from an open reader (closed here, whatever happens), with the
 * time budget ending at deadline (CLOCK_MONOTONIC ms); pid only names
 * the JVM in errors. st must be zeroed with st->cut "" (as hsmap_build
 * does). For the fuzzer, over a fake image (tests/fuzz/fuzz_hsmap.c). */
struct hotspot;
int hsmap_build_from(struct hotspot *hs, pid_t pid, uint64_t deadline, struct perfmap **out,
		     struct hsmap_stats *st, struct fs_error *err);

#endif
