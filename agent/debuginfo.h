/* debuginfo.h - -XX:+DebugNonSafepoints for JVMs started without it, and
 * which compiled code was made before it was on.
 *
 * Without the flag HotSpot records debug info (PcDescs) only at safepoints
 * and calls, so a pc inside an inlined hot loop is named by the nearest
 * safepoint's scope: usually a caller. At its first attach to a JVM the
 * agent finds the flag through VMStructs (vmflag.h) and turns it on: every
 * compilation that starts afterwards records the scope of every pc. Code
 * compiled before keeps its safepoint-only debug info until HotSpot
 * recompiles it for its own reasons (nothing here forces that:
 * docs/agent.md, "DebugNonSafepoints").
 *
 * The agent remembers that code: every compiled method that existed when
 * it set the flag (the GenerateEvents replay of that attach) and every one
 * loaded in the DEBUGINFO_GRACE_NS after (a compilation already running
 * decided at its start). Later sessions' replays look code up there, by
 * (start, size, method), so the timed log can mark each load with
 * safepoint-only debug info (agentmap.h) and `flamesidecar run` can count
 * the samples whose leaf is in it. State is process-wide and kept for the
 * life of the JVM, like the library. */
#ifndef FS_DEBUGINFO_H
#define FS_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEBUGINFO_FLAG	   "DebugNonSafepoints"
#define DEBUGINFO_GRACE_NS (2000ull * 1000000ull) /* compilations in flight at the switch */
#define DEBUGINFO_MAX_CODE (1u << 20)		  /* methods remembered, at most */

enum debuginfo_state {
	DEBUGINFO_UNKNOWN = 0, /* not looked yet */
	DEBUGINFO_ON,	       /* on when we first looked: all code is complete */
	DEBUGINFO_SET,	       /* off, turned on by the agent */
	DEBUGINFO_OFF,	       /* off and left so (not found, or not allowed) */
};

/* At the start of an attach session (before its replay): the first call
 * looks the flag up and, when may_set, turns it on; later calls only start
 * a new replay (or, after attaches that all said !may_set, look again). Returns the state; *logged
 * is set when the call has a line for the JVM's log (debuginfo_status), once per JVM. */
enum debuginfo_state debuginfo_attach(bool may_set, bool *logged);

/* The replay of this session is over. */
void debuginfo_replay_done(void);

/* "on", "set", "off: why" for the log and the timed log's status line. */
const char *debuginfo_status(char *buf, size_t len);

/* Compiled code loaded (replay: from the GenerateEvents replay, else as it
 * was compiled): does it have safepoint-only debug info? */
bool debuginfo_note_load(uint64_t start, uint64_t size, uint64_t mid, bool replay);

/* Compiled code unloaded: forget it. */
void debuginfo_note_unload(uint64_t start, uint64_t mid);

#endif
