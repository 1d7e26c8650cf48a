/* budget.h - the memory a profiled container can make the root profiler
 * use, in one place (docs/security.md, "Memory bounds").
 *
 * Everything below grows with what a container does (how many distinct
 * stacks its threads make, how deep, how many processes and mappings, how
 * much JIT code its JVMs describe) and is capped here. Past a cap, what is
 * dropped is counted and said (in the summary, and in the graph as a frame
 * named like "[dropped: stack table full]"), never silently lost: the total
 * of the graph stays the number of samples taken.
 *
 * Each module keeps its own name for the number it enforces (FOLD_*,
 * SYMBOLIZER_*, PERFMAP_*, ...) and defines it from the value here, so a
 * change is made once. Only the stack table is an operator's setting
 * (config key "max_stack_table_mib"): the rest are safety caps far above
 * what a real service reaches.
 *
 * Worst case for one `run` or `top`, all caps reached at once:
 *   raw callchains      BUDGET_RAW_WORDS x 8 + BUDGET_RAW_CHAINS x 96  ~ 112 MiB
 *   stack table         max_stack_table_mib (default 256 MiB), + 1/4 at write
 *   process maps        BUDGET_MAPS_BYTES                              64 MiB
 *   ELF symbol tables   BUDGET_ELF_BYTES                               1 GiB
 *   JIT names           BUDGET_JIT_BYTES (perf maps and JIT logs kept) 256 MiB
 *                       (other runtimes' perf maps are counted in it too)
 *                       + one JVM's map being parsed (PERFMAP_MAX_CONTAINER_FILE x 3)
 *   VMStructs blobs     BUDGET_HSMAP_BLOBS entries per JVM mapped that way
 *   unwinder's methods  per JVM unwound: BUDGET_UNWIND_SEEN x 80 bytes
 *                       + BUDGET_UNWIND_SEEN_NAMES                  ~3.3 MiB
 *   frame cache         BUDGET_SYM_CACHE_SLOTS x 48 + BUDGET_SYM_CACHE_BYTES 5.5 MiB
 *                       (each JIT log's address cache counts in BUDGET_JIT_BYTES)
 */
#ifndef FS_BUDGET_H
#define FS_BUDGET_H

/* The folded-stack table of a `run` (and of each `top` interval, and of
 * `collapse`): bytes of keys and slots. Config "max_stack_table_mib". */
#define BUDGET_STACK_TABLE_MIB_DEFAULT 256u
#define BUDGET_STACK_TABLE_MIB_MIN     1u
#define BUDGET_STACK_TABLE_MIB_MAX     65536u
/* The frame that stands for the stacks that did not fit, one per process. */
#define BUDGET_DROPPED_FRAME "[dropped: stack table full]"

/* Frames kept per callchain (the sampler asks the kernel for at most this
 * many; deeper stacks are cut at the root end and get the marker frame
 * BUDGET_TRUNCATED_FRAME right under the process name). */
#define BUDGET_MAX_FRAMES      256u
#define BUDGET_TRUNCATED_FRAME "[truncated: deeper stack]"
/* Bytes of one folded stack line (names of BUDGET_MAX_FRAMES frames). */
#define BUDGET_STACK_BYTES (1u << 20)

/* The raw table of distinct (pid, callchain) between two folds: words of
 * callchains and distinct chains. Reaching either folds early. */
#define BUDGET_RAW_WORDS  (6u << 20) /* 48 MiB; the array may double once to 64 */
#define BUDGET_RAW_CHAINS (1u << 19) /* 512 Ki chains: 1 Mi slots x 48 bytes */

/* /proc/<pid>/maps: bytes read of one process, and what is kept of all
 * processes together (the symbolizer and the unwinder count it once,
 * in procmaps). */
#define BUDGET_MAPS_FILE_BYTES (16u << 20)
#define BUDGET_MAPS_BYTES      (64u << 20)
#define BUDGET_MAPS_PER_PID    16384u /* executable mappings kept per process */
#define BUDGET_MAX_PIDS	       4096u  /* processes cached */

/* The symbolizer's frame cache (sidecar/symbolize/symcache.h): names of
 * kernel and native frames kept from their first lookup in
 * the window (slots, a power of two, and bytes of text); full, it starts
 * over. 32768 slots of 48 bytes and 4 MiB of text: 5.5 MiB. */
#define BUDGET_SYM_CACHE_SLOTS (1u << 15)
#define BUDGET_SYM_CACHE_BYTES (4u << 20)

/* ELF symbol tables cached (files and bytes), .eh_frame files open. */
#define BUDGET_ELF_FILES 4096u
#define BUDGET_ELF_BYTES (1ull << 30)
#define BUDGET_CFI_FILES 512u

/* JIT names kept for all JVMs together: parsed perf maps and JIT logs. A
 * JVM past it keeps what was read and its other frames stay [unknown]. */
#define BUDGET_JIT_BYTES (256ull << 20)
#define BUDGET_MAX_JVMS	 64u
/* One JVM: bytes of a perf map or JIT log read from the container, and
 * entries kept of it. */
#define BUDGET_JIT_FILE_BYTES (64UL << 20)
#define BUDGET_JIT_ENTRIES    (4UL << 20)
/* A window's JIT log is held to what the other JVMs leave of
 * BUDGET_JIT_BYTES, its first read included (jitlog_set_limit); what does
 * not fit is dropped, counted and said in run's summary. */

/* Processes of other runtimes (node, python -X perf, .NET, ...) whose
 * perf maps are read over a window (sidecar/profile/profile_rtmaps.c);
 * each map is bounded like a JVM's (BUDGET_JIT_FILE_BYTES, _ENTRIES) and
 * counted in BUDGET_JIT_BYTES with them. */
#define BUDGET_MAX_RTMAPS 256u

/* Code blobs mapped from one JVM's VMStructs (sidecar/hotspot/hsmap.c). */
#define BUDGET_HSMAP_BLOBS (1u << 20)
/* The work of one VMStructs map build (blobs and inline ranges, each read
 * from the JVM's memory) and its wall-clock time: a code cache built to be
 * slow to walk, or a JVM whose memory reads crawl, is cut there, and what
 * was mapped so far is kept (hsmap_stats.cut, said in run's summary). */
#define BUDGET_HSMAP_STEPS (16u << 20)
#define BUDGET_HSMAP_MS	   5000u
/* Compiled methods the HotSpot unwinder met during a window, per JVM (what
 * names code freed before the end), and bytes of their names. */
#define BUDGET_UNWIND_SEEN	 16384u
#define BUDGET_UNWIND_SEEN_NAMES (2u << 20)

/* Separate debug info (sidecar/debuginfo/, docs/debuginfo.md): the largest
 * debug file taken (host, container or debuginfod; parsed in the ELF
 * sandbox, so this bounds its time, not our memory: the symbols it gives
 * count in BUDGET_ELF_BYTES), MiniDebugInfo's compressed section and what it
 * may unpack to (in the sandbox), and debuginfod: queries per run, the
 * deadline of one query and of all of them together. */
#define BUDGET_DEBUG_FILE_BYTES	  (1ull << 30)
#define BUDGET_DEBUGDATA_PACKED	  (16u << 20)
#define BUDGET_DEBUGDATA_BYTES	  (64u << 20)
#define BUDGET_DEBUGINFOD_QUERIES 64u
#define BUDGET_DEBUGINFOD_MS	  10000u
#define BUDGET_DEBUGINFOD_RUN_MS  30000u

/* Finding one container's processes from its cgroup v2 subtree
 * (lib/ctprocs.c): directories walked, their depth below the init's
 * cgroup, pids listed and bytes of one cgroup.procs. A container that
 * makes more child cgroups (it can, when its cgroup is delegated) only
 * sends the search back to the /proc scan by pid namespace. */
#define BUDGET_CTPROCS_CGROUPS	  1024u
#define BUDGET_CTPROCS_DEPTH	  32u
#define BUDGET_CTPROCS_PIDS	  65536u
#define BUDGET_CTPROCS_FILE_BYTES (1u << 20)

#endif
