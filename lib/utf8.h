/* utf8.h - make frame names valid UTF-8. Names come from places nobody
 * checked (a perf map written inside a container, ELF symbols, a process's
 * comm): every byte that is not part of a well-formed UTF-8 sequence
 * (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF, no
 * truncated sequence) becomes U+FFFD. Copies never cut a sequence. */
#ifndef FS_UTF8_H
#define FS_UTF8_H

#include <stddef.h>

#define UTF8_REPLACEMENT     "\xef\xbf\xbd" /* U+FFFD */
#define UTF8_REPLACEMENT_LEN 3

/* Length (1..4) of the well-formed sequence at s (len > 0 bytes left),
 * or 0 when the byte at s does not start one. */
size_t utf8_seq_len(const unsigned char *s, size_t len);

/* 1 when s[0..len) is well-formed UTF-8. */
int utf8_valid(const char *s, size_t len);

/* Flags of utf8_sanitize. */
#define UTF8_FRAME 0x1 /* a folded-stack frame: ';' -> ':', C0 controls and DEL -> '?' */

/* Copy in[0..len) into out (cap bytes, cap > 0), each invalid byte
 * replaced by U+FFFD; stops before a character that does not fit. Always
 * NUL-terminates; returns the bytes written (without the NUL). *used (when
 * not NULL) is the number of input bytes consumed: len when all fitted. */
size_t utf8_sanitize(const char *in, size_t len, char *out, size_t cap, unsigned flags,
		     size_t *used);

#endif
