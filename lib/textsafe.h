/* textsafe.h - the one escaping of text that came from a container before
 * it reaches a terminal or a log line.
 *
 * A process names itself (/proc/<pid>/comm is prctl(PR_SET_NAME)), and a
 * JVM or a library names its frames: either can hold ESC sequences that
 * move the cursor, retitle the window, rewrite earlier lines or, on some
 * terminals, answer back into the input. Every byte a terminal acts on
 * becomes a visible \xNN: C0 controls (below 0x20), DEL (0x7f), C1 controls
 * (U+0080-U+009F, which UTF-8 terminals take as CSI and the like), bidi
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069) and line/paragraph
 * separators (U+2028, U+2029), invalid or overlong UTF-8, and the backslash
 * itself (so an escape is never ambiguous). Other UTF-8 is kept unless
 * TEXTSAFE_ASCII asks for ASCII only. Library code formats; the CLI, the
 * hook's log and the wrapper print. */
#ifndef FS_TEXTSAFE_H
#define FS_TEXTSAFE_H

#include <stddef.h>

enum textsafe_flags {
	TEXTSAFE_ASCII = 1, /* escape every byte >= 0x80 too (log files) */
	TEXTSAFE_QUOTE = 2, /* escape '"' too (quoted fields) */
};

/* Escape the first n bytes of s (stopping at a NUL) into dst, len bytes,
 * always terminated; a character that does not fit whole is dropped, with
 * what follows. Returns dst. Worst case: 4 bytes out per byte in. */
char *textsafe_n(const char *s, size_t n, char *dst, size_t len, unsigned flags);

/* textsafe_n over the whole string. */
char *textsafe(const char *s, char *dst, size_t len, unsigned flags);

#endif
