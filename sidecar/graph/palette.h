/* palette.h - frame colours of a flame graph: flamegraph.pl's palettes
 * (hot, mem, io, java, js, perl, wakeup, chain, plain hues) and the
 * red/blue scale of differential graphs. */
#ifndef FS_PALETTE_H
#define FS_PALETTE_H

#include <stddef.h>
#include <stdint.h>

enum palette {
	PALETTE_JAVA =
	    0, /* our default: green Java, aqua inlined, yellow C++, orange kernel, red native */
	PALETTE_HOT, /* flamegraph.pl's default: red/orange/yellow */
	PALETTE_MEM,
	PALETTE_IO,
	PALETTE_JS,
	PALETTE_PERL,
	PALETTE_WAKEUP,
	PALETTE_CHAIN, /* like java, frames above a "--" frame in wakeup blue */
	PALETTE_RED,
	PALETTE_GREEN,
	PALETTE_BLUE,
	PALETTE_AQUA,
	PALETTE_YELLOW,
	PALETTE_PURPLE,
	PALETTE_ORANGE,
	PALETTE_COUNT,
};

/* What a frame is, by its name (palette_classify). */
enum palette_kind {
	PALETTE_KIND_NATIVE = 0,  /* C or unknown: red */
	PALETTE_KIND_JAVA,	  /* JIT-compiled or interpreted Java (or JS/Perl): green */
	PALETTE_KIND_INLINED,	  /* `_[i]`: aqua */
	PALETTE_KIND_KERNEL,	  /* `_[k]` or a well-known kernel function: orange */
	PALETTE_KIND_CPP,	  /* contains "::": yellow */
	PALETTE_KIND_SEPARATOR,	  /* "-" or "--" (chain/idle separators): grey */
	PALETTE_KIND_INTERPRETED, /* `_[0]`, an interpreted Java frame: pale green */
	PALETTE_KIND_C1,	  /* `_[1]`, C1-compiled Java: yellow-green */
};

struct palette_rgb {
	uint8_t r, g, b;
};

#define PALETTE_F_HASH	 1u /* colour from the name's hash instead of rng */
#define PALETTE_F_WAKEUP 2u /* frame is above a "--" (chain palette) */

/* "java" -> PALETTE_JAVA. 0 or -EINVAL. */
int palette_from_name(const char *s, enum palette *out);
/* "java, hot, mem, ..." for --help. */
const char *palette_list(void);

/* Length of name without a trailing `_[k]`/`_[j]`/`_[i]`/`_[w]` annotation
 * (what flamegraph.pl displays). */
size_t palette_strip(const char *name, size_t len);

/* Classify a frame (annotation included) for palette p's colouring rules. */
enum palette_kind palette_classify(enum palette p, const char *name, size_t len);

/* The fill of a frame. rng is a xorshift state used when PALETTE_F_HASH is
 * not set (so colours vary between frames like flamegraph.pl's random
 * default, yet the output is reproducible). */
struct palette_rgb palette_color(enum palette p, const char *name, size_t len, unsigned flags,
				 uint64_t *rng);

/* Differential fill: red for delta > 0 (grew), blue for delta < 0,
 * saturation |delta| / maxdelta, a neutral grey for 0. */
struct palette_rgb palette_diff(double delta, double maxdelta);

#endif
