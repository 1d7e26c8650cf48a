/* hsmap.h - the JIT symbol map of a HotSpot JVM, read from the host through
 * its VMStructs (hotspot.h), for JVMs that cannot be attached to: attach
 * disabled (-XX:+DisableAttachMechanism), no writable /tmp, a read-only
 * rootfs. Nothing is written into the container and nothing runs in the
 * JVM: every code blob of the code heaps becomes one map entry, an nmethod
 * named by its Method* ("pkg.Class.method", as the agent names it), a stub
 * by its blob name, the interpreter "Interpreter".
 *
 * Inlined frames are not split out: an nmethod is named by its outer
 * (compiled) method only, like the agent's nounfold option. */
#ifndef FS_HSMAP_H
#define FS_HSMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "perfmap.h"

#define HSMAP_MAX_BLOBS (1u << 20) /* blobs mapped at most */

struct hsmap_stats {
	int major;	 /* the JVM's major version */
	size_t nmethods; /* entries named by a Method* */
	size_t stubs;	 /* entries named by a blob name (the interpreter included) */
	size_t unnamed;	 /* nmethods whose Method* could not be read (left out) */
	size_t bytes;	 /* of map text made */
};

/* Map the JVM host pid. *out is freed with perfmap_free. 0 or -errno with
 * err saying why (see hotspot_open). */
int hsmap_build(pid_t pid, struct perfmap **out, struct hsmap_stats *st, struct fs_error *err);

#endif
