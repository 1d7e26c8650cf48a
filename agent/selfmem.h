/* selfmem.h - read the JVM's own memory without faulting.
 *
 * The agent walks HotSpot's tables (VMStructs, the flag table, Method and
 * Symbol objects) from inside the JVM. A table that lies, or one of
 * another JDK's layout, must cost a wrong answer, never a SIGSEGV in the
 * JVM: every load goes through process_vm_readv on our own pid, which
 * returns EFAULT where a plain load would fault. */
#ifndef FS_AGENT_SELFMEM_H
#define FS_AGENT_SELFMEM_H

#include <stddef.h>
#include <stdint.h>

/* len bytes at addr into out: 0; -EFAULT for the first page, a NULL-ish
 * address, a range that wraps or any unreadable byte; another -errno. */
int selfmem_read(uint64_t addr, void *out, size_t len);

#endif
