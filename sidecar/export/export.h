/* export.h - profiles for other tools: the model behind the pprof and
 * speedscope writers (pprof.h, speedscope.h).
 *
 * Input is folded stacks ("root;...;leaf" -> count, the fold.h format),
 * each with the pid it came from (0 = unknown). Frame names carry their
 * kind the way flame graphs mark it (async-profiler's and
 * stackcollapse-perf.pl's suffixes); export_add reads them:
 *
 *   name_[k]     kernel                  name_[j]  JIT-compiled Java
 *   name_[1]     C1-compiled Java        name_[0]  interpreted Java
 *   name_[i]     inlined into the frame before it (its caller)
 *   [libfoo.so]  code of libfoo.so without a symbol
 *   [unknown]    an address in no mapping
 *
 * Everything else is a named frame of unknown kind (native or Java). The
 * writers keep the kind the way each format can (docs/export.md). A named
 * native frame gets its module from export_frame_module (the folded text
 * has no room for it): the first module given for a frame's text wins.
 *
 * Samples may carry the thread they came from (export_add_thread: its
 * host tid and name, names interned, at most EXPORT_MAX_THREADS distinct
 * names; more are dropped from their samples).
 *
 * Frames are interned by their folded text; names are made valid UTF-8
 * (invalid bytes become U+FFFD) so every writer emits valid strings.
 * Stacks are stored root first as arrays of frame indexes. Bounded by
 * EXPORT_MAX_FRAMES distinct frames and EXPORT_MAX_DEPTH frames a stack.
 * Not thread-safe. */
#ifndef FS_EXPORT_H
#define FS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"
#include "cleanup.h"

#define EXPORT_MAX_FRAMES  (1u << 24) /* distinct frames */
#define EXPORT_MAX_DEPTH   4096	      /* frames in one stack (more are cut at the leaf) */
#define EXPORT_MAX_LABELS  8	      /* profile-wide labels */
#define EXPORT_MAX_THREADS 65536      /* distinct thread names */

enum export_kind {
	EXPORT_KIND_PLAIN,	 /* a name without a kind suffix */
	EXPORT_KIND_KERNEL,	 /* _[k] */
	EXPORT_KIND_JIT,	 /* _[j] */
	EXPORT_KIND_C1,		 /* _[1] */
	EXPORT_KIND_INTERPRETED, /* _[0] */
	EXPORT_KIND_INLINED,	 /* _[i] */
	EXPORT_KIND_MODULE,	 /* [libfoo.so]: no symbol, module known */
	EXPORT_KIND_UNKNOWN,	 /* [unknown] */
	EXPORT_KIND_COUNT,
};

struct export_frame {
	const char *text;     /* as in the folded stack (valid UTF-8) */
	const char *name;     /* without the kind suffix */
	const char *module;   /* the file of the code, "[kernel.kallsyms]"; NULL = unknown */
	const char *build_id; /* of module (hex), NULL = unknown */
	enum export_kind kind;
};

struct export_sample {
	size_t off;	 /* its frames: x->stack[off .. off + depth), root first */
	uint32_t depth;	 /* >= 1 */
	pid_t pid;	 /* 0 = unknown */
	pid_t tid;	 /* 0 = unknown */
	uint32_t thread; /* its name: x->threads[thread - 1]; 0 = unknown */
	uint64_t count;
};

struct export_label {
	char *key, *value;
};

struct export
{
	/* metadata (export_set_*) */
	uint64_t period_ns;  /* nanoseconds of CPU one sample stands for; 0 = unknown */
	int64_t time_ns;     /* window start, unix nanoseconds; 0 = unknown */
	int64_t duration_ns; /* window length; 0 = unknown */
	char *name;	     /* a title ("CPU of container 3f2a9c"); NULL = none */
	int root_is_process; /* the root frame is the process name (run's stacks) */
	/* What a count is: NULL, CPU samples (pprof "samples"/count and
	 * "cpu"/nanoseconds = count x period_ns); else the name of a time
	 * ("wall", "offcpu") of which counts are microseconds: pprof
	 * (name, microseconds) and (name, nanoseconds), speedscope's unit
	 * "microseconds". Set period_ns to 1000 with it. */
	const char *time_type;
	struct export_label labels[EXPORT_MAX_LABELS];
	size_t nlabels;
	/* the profile */
	struct export_frame *frames;
	size_t nframes;
	uint32_t *stack; /* frame indexes of all samples */
	size_t nstack;
	struct export_sample *samples;
	size_t nsamples;
	uint64_t total; /* sum of counts (saturating) */
	char **threads; /* distinct thread names (valid UTF-8) */
	size_t nthreads;
	/* private: frame interning */
	uint32_t *slots;  /* frame index + 1; 0 = empty */
	uint64_t *hashes; /* of each frame's text */
	size_t mask;
	size_t frames_cap, stack_cap, samples_cap;
	/* private: thread name interning (index + 1; 0 = empty) */
	uint32_t *thr_slots;
	size_t thr_mask, threads_cap;
	/* private: the previous stack, whose leading frames the next may share */
	char *prev;
	size_t prev_len, prev_cap, prev_off;
	size_t *prev_end; /* byte offset after each of its frames */
	uint32_t prev_depth;
};

/* An empty profile, or NULL when out of memory. */
struct export *export_new(void);
void export_free(struct export *x);
FS_DEFINE_CLEANUP(struct export, export_free)
#define cleanup_export __attribute__((cleanup(export_free_cleanup)))

/* Metadata. 0 or -ENOMEM; export_set_label -ENOSPC after EXPORT_MAX_LABELS.
 * An empty value is not stored (a label "where known"). */
int export_set_name(struct export *x, const char *name);
int export_set_label(struct export *x, const char *key, const char *value);

/* Add one folded stack (len bytes, frames separated by ';', root first)
 * with its count and pid. Empty frames are skipped; a stack without any
 * frame is ignored. 0, -ENOMEM or -E2BIG (too many distinct frames). */
int export_add(struct export *x, const char *stack, size_t len, uint64_t count, pid_t pid);

/* The same, from thread tid (0 = unknown) named thread (NULL or "" =
 * unknown) of pid. Errors as export_add. */
int export_add_thread(struct export *x, const char *stack, size_t len, uint64_t count, pid_t pid,
		      pid_t tid, const char *thread);

/* The named native frame text (len bytes, as it appears in the stacks
 * added) is code of module (a path; build_id its hex build id or NULL).
 * Sets the module of a frame without one (the frame is added if new); a
 * "[libfoo.so]" frame gets the full path when its basename is libfoo.so.
 * Other kinds are left alone. 0, -ENOMEM or -E2BIG. */
int export_frame_module(struct export *x, const char *text, size_t len, const char *module,
			const char *build_id);

/* Read folded text ("stack count" lines, fold.h's format: ours and
 * stackcollapse-perf.pl's) from in, adding each stack with pid 0 in file
 * order. Equal stacks are not merged (pprof and speedscope readers sum
 * them), so memory is the export's only. A line that does not end in a
 * count, or is longer than FOLD_STACK_MAX, is an error naming it. 0 or
 * -errno. */
int export_read_folded(struct export *x, FILE *in, struct fs_error *err);

/* A fold_fn (fold.h) adding each stack with pid 0: arg is the export. */
int export_add_folded(const char *stack, size_t len, uint64_t count, void *arg);

/* Parse one folded frame name: its kind and the length of its name
 * without the suffix. Exposed for tests. */
enum export_kind export_frame_kind(const char *text, size_t len, size_t *name_len);

/* Where a frame's code is, as both writers name it (pprof's mapping,
 * speedscope's "file"): its module for [libfoo.so] frames and named
 * native frames given one, "[kernel.kallsyms]", "[jit]", "[c1]",
 * "[interpreted]", "[inlined]"; NULL for other plain and unknown frames. */
const char *export_frame_file(const struct export_frame *f);

/* The process name of sample s when root_is_process: its root frame's
 * name without a "-PID" suffix naming s's pid (run --with-pid,
 * stackcollapse-perf.pl --pid). *name points into the frame; returns the
 * length. */
size_t export_process_name(const struct export *x, const struct export_sample *s,
			   const char **name);

/* "kernel", "jit", "c1", "interpreted", "inlined", "native", "unknown", "" (plain). */
const char *export_kind_name(enum export_kind kind);

/* Grow *arr (of *cap elements of size bytes) to hold need elements,
 * doubling from 256. 0 or -ENOMEM (*arr unchanged). Shared by the writers. */
int export_grow(void **arr, size_t *cap, size_t need, size_t size);

#endif
