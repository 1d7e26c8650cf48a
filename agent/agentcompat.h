/* agentcompat.h - forced into every object of libflameagent.so (-include)
 * so that the agent needs nothing newer than the x86_64 glibc baseline and
 * loads in old glibc JVMs as well as in musl ones (musl ignores versions).
 *
 * glibc 2.14 introduced memcpy@GLIBC_2.14; the compiler also emits memcpy
 * calls for struct copies, so bind every reference to the original
 * memcpy@GLIBC_2.2.5 (a memmove, correct for any arguments). */
#ifndef FS_AGENTCOMPAT_H
#define FS_AGENTCOMPAT_H

#include <features.h>

#if defined(__GLIBC__) && defined(__x86_64__)
__asm__(".symver memcpy,memcpy@GLIBC_2.2.5");
/* glibc 2.34 moved dlsym into libc as dlsym@GLIBC_2.34 and kept the old
 * version there too; the old one is what a pre-2.34 libdl also provides. */
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
#endif

#endif
