/* vmflag.h - find and set a boolean -XX flag of the JVM the agent lives in,
 * through the VMStructs tables libjvm.so exports (gHotSpotVMStructs,
 * gHotSpotVMTypes and their offset/stride symbols): the static fields
 * JVMFlag::flags (the flag table) and JVMFlag::numFlags, the nonstatic
 * fields JVMFlag::_name and JVMFlag::_addr, and sizeof(JVMFlag). The same
 * names hold from JDK 11 to JDK 25; JDK 8 to 10 call the type "Flag".
 *
 * Nothing is dereferenced directly: every read (table entries, strings, the
 * flag table, the flag) and the one write go through process_vm_readv /
 * process_vm_writev on our own pid, which fail with EFAULT where a plain
 * access would fault. Every count, offset, stride and string is bounded, so
 * a table that lies (a foreign libjvm.so, a test) costs at most "not
 * found", never a crash. No libjvm.so-specific code: the unit test walks a
 * synthetic table (tests/unit/test_vmflag.c). */
#ifndef FS_VMFLAG_H
#define FS_VMFLAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMFLAG_MAX_ENTRIES 20000 /* VMStructs/VMTypes entries walked (JDK 25: ~1,500) */
#define VMFLAG_MAX_FLAGS   8192	 /* flags walked (JDK 25: ~1,100 in product builds) */
#define VMFLAG_MAX_STRIDE  256	 /* bytes per table entry, at most */
#define VMFLAG_NAME_MAX	   128	 /* longest name compared */

/* Where the tables are and how their entries are laid out: the values of
 * libjvm.so's exported symbols (addresses, not contents, for the tables). */
struct vmflag_tables {
	uint64_t structs; /* *gHotSpotVMStructs: the first VMStructEntry */
	uint64_t s_type, s_field, s_static, s_offset, s_address, s_stride;
	uint64_t types; /* *gHotSpotVMTypes: the first VMTypeEntry */
	uint64_t t_type, t_size, t_stride;
};

/* A flag found: its value's address and the value there. */
struct vmflag {
	uint64_t addr;
	bool value;
};

/* Fill t from the symbols of the libjvm.so in this process (dlsym). 0 or
 * -ENOENT with why (a sentence) filled. */
int vmflag_tables_find(struct vmflag_tables *t, char *why, size_t why_len);

/* Find the boolean flag name in the flag table t describes. 0, or -ENOENT
 * (not there, or a table that does not hold together) / -EINVAL (its value
 * is not a bool 0 or 1) with why filled. */
int vmflag_find(const struct vmflag_tables *t, const char *name, struct vmflag *f, char *why,
		size_t why_len);

/* Write value into f and read it back. 0 or -errno (-EFAULT: not writable). */
int vmflag_set(struct vmflag *f, bool value);

#endif
