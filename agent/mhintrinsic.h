/* mhintrinsic.h - the true name of a method handle intrinsic's compiled code.
 *
 * HotSpot makes one Method per signature of each signature-polymorphic MH
 * primitive (MethodHandle.invokeBasic, linkToStatic, linkToSpecial,
 * linkToVirtual, linkToInterface, linkToNative) and never gives it a method
 * idnum of its own. JVMTI maps a Method to its jmethodID through the holder's
 * idnum table, so every intrinsic gets the jmethodID of whichever was made
 * first: CompiledMethodLoad reports all of them as, say, linkToStatic, where
 * `jcmd <pid> Compiler.perfmap` (which reads the nmethod's own Method) says
 * linkToSpecial or invokeBasic for the same code.
 *
 * Contract: mhintrinsic_name() reads, inside the JVM the agent is loaded in,
 * the nmethod whose code starts at code_addr (through the JVM's exported
 * VMStructs tables, with process_vm_readv on itself so a wrong pointer is an
 * error, never a crash) and returns its Method's name and signature when that
 * name is one of the MH primitives. It never trusts what it reads: every
 * pointer read may fail, lengths are bounded, the result is checked against the
 * known names. Returns 0 on success, -errno otherwise (then the caller must
 * not use the jmethodID's name either: see flameagent.c). */
#ifndef FS_MHINTRINSIC_H
#define FS_MHINTRINSIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when method (a JVMTI method name) is one of the MH primitives. */
bool mhintrinsic_is_primitive(const char *method);

/* name/desc receive the Method's name ("linkToSpecial") and descriptor
 * ("(Ljava/lang/Object;JLjava/lang/invoke/MemberName;)J"; "" if unknown). */
int mhintrinsic_name(const void *code_addr, size_t code_size, char *name, size_t name_len,
		     char *desc, size_t desc_len);

#endif
