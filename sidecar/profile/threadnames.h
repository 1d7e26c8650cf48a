/* threadnames.h - the names of the threads samples came from, for the
 * per-thread labels of pprof (docs/export.md).
 *
 * A thread is named by its comm, /proc/<pid>/task/<tid>/comm (what `top
 * -H` and `ps -T` show; a JVM gives its threads their Java names cut to 15
 * bytes: "main", "C2 CompilerThre", "qtp1394336709-2"). The comm is
 * container-controlled: it is read with a bounded read, made valid UTF-8
 * with control characters replaced by '?'.
 *
 * threadnames_get returns a small dense index (1-based; 0 = no name) for
 * (pid, tid, name as of now). The name is read on the first sample of a
 * tid and again when the one read is older than THREADNAMES_REFRESH_NS (a
 * thread renamed, a tid reused): a changed name gets a new index, so
 * samples keep the name their thread had then. threadnames_exit marks a
 * tid exited: its next sample reads the name again, and a tid now running
 * under another name is a new thread (one whose comm cannot be read any
 * more is a late sample of the exited one: exit records and samples come
 * from different CPUs' rings). Bounded: after
 * THREADNAMES_MAX indexes, new threads get 0 (no thread label). Memory is
 * allocated on first use. Not thread-safe. */
#ifndef FS_THREADNAMES_H
#define FS_THREADNAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cleanup.h"

#define THREADNAMES_MAX	       65536	   /* thread indexes per profile */
#define THREADNAMES_NAME_MAX   48	   /* bytes of a name: 15 of comm, each may become U+FFFD */
#define THREADNAMES_REFRESH_NS 1000000000u /* re-read a thread's comm at most this often */

struct threadnames;

/* proc_root: NULL = /proc (tests give a directory of their own). NULL when
 * out of memory. */
struct threadnames *threadnames_new(const char *proc_root);
void threadnames_free(struct threadnames *t);
FS_DEFINE_CLEANUP(struct threadnames, threadnames_free)
#define cleanup_threadnames __attribute__((cleanup(threadnames_free_cleanup)))

/* The index of thread tid of process pid as named at time now (ns, any
 * monotonic clock): 1-based, 0 when the table is full or out of memory. */
uint32_t threadnames_get(struct threadnames *t, pid_t pid, pid_t tid, uint64_t now);

/* Thread tid exited (or exec'd): its next sample reads its name again. */
void threadnames_exit(struct threadnames *t, pid_t tid);

/* Index idx's name ("" when its comm could not be read), tid and pid;
 * NULL name for 0 or an unknown index. */
const char *threadnames_name(const struct threadnames *t, uint32_t idx, pid_t *pid, pid_t *tid);

/* Indexes given out so far. */
size_t threadnames_count(const struct threadnames *t);

#endif
