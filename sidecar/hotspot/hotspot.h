/* hotspot.h - a running HotSpot JVM read from the host, through the
 * VMStructs tables it exports for serviceability agents.
 *
 * libjvm.so exports gHotSpotVMStructs, gHotSpotVMTypes,
 * gHotSpotVMIntConstants and gHotSpotVMLongConstants (and the entry
 * strides/offsets that describe their rows). hotspot_open finds libjvm.so
 * in the target's /proc/<pid>/maps, reads those symbols from its ELF file
 * (opened as /proc/<pid>/map_files/..., never by a path inside the
 * container), then reads the tables out of the live process with
 * process_vm_readv. Every field offset and type size used afterwards comes
 * from those tables: nothing is hard-coded per JDK build. (The x86_64
 * frame constants of hotspot_frame_layout are per architecture, the same
 * in every JDK from 11 to 25, and say so where they are defined.)
 *
 * Everything read from the process is container input: pointers, lengths,
 * counts and strings are bounds-checked, every walk has a step limit, and a
 * JVM that lies costs at most a wrong or missing frame name, never a crash
 * or an unbounded read. Nothing is written to the target and nothing is
 * created inside the container.
 *
 * Not thread-safe: one struct hotspot per thread and JVM.
 */
#ifndef FS_HOTSPOT_H
#define FS_HOTSPOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "cleanup.h"

struct hotspot;

/* Open pid (host pid) as a HotSpot JVM. 0, or -errno with err saying why:
 * -ENOENT not a HotSpot JVM (no libjvm.so mapped or no VMStructs symbols),
 * -ENOTSUP a table lacks a field this reader needs (err names it),
 * -ESRCH the process is gone (or pid no longer has start_time), -EPERM not
 * allowed to read its memory. The process is pinned with a pidfd (checked
 * against the start time pid has at open), and every read of its memory
 * afterwards fails once it has exited: a recycled pid is never read. */
int hotspot_open(pid_t pid, struct hotspot **out, struct fs_error *err);
/* hotspot_open of the process pid was when it had start_time. */
int hotspot_open_checked(pid_t pid, uint64_t start_time, struct hotspot **out,
			 struct fs_error *err);
/* That pidfd (for reads of the same process outside this reader with
 * procmem_read), or -1. */
int hotspot_pidfd(const struct hotspot *hs);
void hotspot_close(struct hotspot *hs);
FS_DEFINE_CLEANUP(struct hotspot, hotspot_close)
#define cleanup_hotspot __attribute__((cleanup(hotspot_close_cleanup)))

/* The JVM's major version (11, 17, 21, 25...), 0 when unknown. */
int hotspot_major_version(const struct hotspot *hs);

enum hotspot_blob_kind {
	HOTSPOT_BLOB_NONE = 0,	  /* pc is not in the code cache */
	HOTSPOT_BLOB_INTERPRETER, /* the template interpreter */
	HOTSPOT_BLOB_NMETHOD,	  /* compiled Java method (C1 or C2) */
	HOTSPOT_BLOB_STUB,	  /* runtime stub, adapter, call stub, vtable stub... */
};

/* The code blob that contains a pc. */
struct hotspot_blob {
	enum hotspot_blob_kind kind;
	uint64_t blob;	     /* address of the CodeBlob */
	uint64_t code_begin; /* [code_begin, code_end): its instructions */
	uint64_t code_end;
	uint32_t frame_size;	/* bytes of its frame, return address included; 0 unknown */
	int32_t frame_complete; /* offset from code_begin after which the frame is
				 * built (-1 unknown) */
	uint64_t method;	/* NMETHOD: its Method*, else 0 */
	int comp_level;		/* NMETHOD: 1-3 C1, 4 C2, 0 unknown */
	int32_t compile_id;	/* NMETHOD: its compile id (one per compilation), -1 unknown */
	char name[64];		/* STUB: the blob's name ("StubRoutines (1)") or "" */
};

/* Find the blob containing pc. 1 found (*out filled), 0 not in the code
 * cache (out->kind = HOTSPOT_BLOB_NONE), -errno on a read failure.
 * Found blobs are cached for up to a second (a hit costs no read; a miss
 * two or three process_vm_readv calls). */
int hotspot_find_blob(struct hotspot *hs, uint64_t pc, struct hotspot_blob *out);

/* Whether b (hotspot_find_blob's answer for pc, some time ago) still is
 * the blob at pc: one read of its block's header and the blob's header
 * (where a lookup reads the segment map too), the block still allocated,
 * still holding pc, and every field of b the same (an nmethod's compile
 * id included: a new compilation freed code's memory went to has another).
 * 1 unchanged, 0 changed or gone (look pc up again), -errno. */
int hotspot_blob_check(struct hotspot *hs, uint64_t pc, const struct hotspot_blob *b);

/* Drop every cached blob, blob name and method name (after a long pause,
 * or when the JVM is known to have flushed code). */
void hotspot_forget(struct hotspot *hs);

/* Quick range check without reading the process: 1 when pc lies in one of
 * the code heaps, else 0. */
int hotspot_in_code_cache(const struct hotspot *hs, uint64_t pc);

/* A Method* as a frame name the way our agent names it in dotted mode:
 * "java.util.HashMap.get" (class with dots, '.', method name). Cached per
 * Method*. 1 named (buf NUL-terminated), 0 not a readable Method*, -errno. */
int hotspot_method_name(struct hotspot *hs, uint64_t method, char *buf, size_t len);

/* The same for a frame sampled at time (CLOCK_MONOTONIC ns, 0 unknown): a
 * name cached since that time is as true for it as one read now (truer,
 * when the Method* was reused since), so it is taken without a read even
 * after a collection. */
int hotspot_method_name_at(struct hotspot *hs, uint64_t method, uint64_t time, char *buf,
			   size_t len);

/* The bytecode index of an interpreted frame: bcp (read from the frame at
 * interp_bcp_off) inside method's bytecodes, which start right after its
 * ConstMethod. Also a check that the Method* read from the frame is real.
 * 1 with *bci set, 0 when bcp is not inside method's bytecodes (or method
 * is not readable), -errno. */
int hotspot_interp_bci(struct hotspot *hs, uint64_t method, uint64_t bcp, int *bci);

/* One frame of an inline chain. */
struct hotspot_scope {
	uint64_t method; /* Method* */
	int bci;	 /* bytecode index, -1 unknown (or the method's entry) */
};

/* The inline chain HotSpot recorded for pc in nmethod b (from
 * hotspot_find_blob), innermost first: out[0] is the method executing at
 * pc, out[n-1] the nmethod's own method. pc is matched as HotSpot does: the
 * first PcDesc at or after pc, so a return address (or return address - 1)
 * gets the chain of its own call site. Returns the number of frames
 * (1: nothing inlined there), 0 when the nmethod has no debug info for pc
 * (name it by b->method), -errno. The nmethod's debug info is copied once
 * and cached (16 nmethods, for as long as a found blob is). */
int hotspot_scopes(struct hotspot *hs, const struct hotspot_blob *b, uint64_t pc,
		   struct hotspot_scope *out, int max);

/* x86_64 frame facts the unwinder needs, in bytes relative to the frame
 * pointer (rbp) of an interpreted frame. */
struct hotspot_frame_layout {
	int interp_method_off;	  /* Method* of the frame (fp - 24) */
	int interp_sender_sp_off; /* caller's sp as the interpreter saw it (fp - 8) */
	int interp_bcp_off;	  /* current bytecode pointer (fp - 64) */
	int saved_fp_off;	  /* the caller's rbp (fp + 0) */
	int return_addr_off;	  /* return address (fp + 8) */
};
void hotspot_frame_layout(const struct hotspot *hs, struct hotspot_frame_layout *out);

/* Read len bytes at addr of the target (bounded: len <= 64 KiB). 0 or -errno
 * (-EFAULT when not mapped). */
int hotspot_read(struct hotspot *hs, uint64_t addr, void *buf, size_t len);

/* The reads of the target's memory made so far (every one above: blob
 * lookups, names, scopes), and their bytes: what a cache saves, counted. */
void hotspot_read_counts(const struct hotspot *hs, uint64_t *calls, uint64_t *bytes);

#endif
