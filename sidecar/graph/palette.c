/* palette.c - see palette.h. */
#include "palette.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static const char *const palette_names[PALETTE_COUNT] = {
    [PALETTE_JAVA] = "java",	 [PALETTE_HOT] = "hot",	      [PALETTE_MEM] = "mem",
    [PALETTE_IO] = "io",	 [PALETTE_JS] = "js",	      [PALETTE_PERL] = "perl",
    [PALETTE_WAKEUP] = "wakeup", [PALETTE_CHAIN] = "chain",   [PALETTE_RED] = "red",
    [PALETTE_GREEN] = "green",	 [PALETTE_BLUE] = "blue",     [PALETTE_AQUA] = "aqua",
    [PALETTE_YELLOW] = "yellow", [PALETTE_PURPLE] = "purple", [PALETTE_ORANGE] = "orange",
};

int palette_from_name(const char *s, enum palette *out)
{
	for (int i = 0; i < PALETTE_COUNT; i++) {
		if (!strcmp(s, palette_names[i])) {
			*out = (enum palette)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *palette_list(void)
{
	return "java, hot, mem, io, js, perl, wakeup, chain, red, green, blue, aqua, yellow, "
	       "purple, orange";
}

static bool palette_has_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);
	return len >= n && !memcmp(s + len - n, suf, n);
}

static bool palette_has_prefix(const char *s, size_t len, const char *pre)
{
	size_t n = strlen(pre);
	return len >= n && !memcmp(s, pre, n);
}

static bool palette_contains(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

size_t palette_strip(const char *name, size_t len)
{
	if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']' &&
	    name[len - 2] && strchr("kjiw01", name[len - 2]))
		return len - 4;
	return len;
}

/* Function names that only the kernel uses; perf prints kernel frames
 * without an annotation unless asked (`perf script` + stackcollapse --kernel). */
static const char *const palette_kernel_prefixes[] = {
    "__x64_sys_",
    "__ia32_sys_",
    "__arm64_sys_",
    "__se_sys_",
    "__do_sys_",
    "do_syscall_",
    "entry_SYSCALL",
    "syscall_exit_",
    "syscall_trace_",
    "ksys_",
    "__schedule",
    "schedule",
    "native_",
    "__do_softirq",
    "do_softirq",
    "irq_exit",
    "__irq_exit",
    "asm_exc_",
    "asm_sysvec_",
    "asm_common_interrupt",
    "exc_page_fault",
    "do_page_fault",
    "page_fault",
    "handle_mm_fault",
    "__handle_mm_fault",
    "do_user_addr_fault",
    "ret_from_fork",
    "hrtimer_",
    "__hrtimer_",
    "tick_",
    "cpu_startup_entry",
    "do_idle",
    "futex_",
    "do_futex",
    "__futex_",
    "finish_task_switch",
    "_raw_spin_",
    "copy_user_",
    "rep_movs_alternative",
    "clear_page",
    "vfs_",
    "__vfs_",
    "tcp_",
    "__tcp_",
    "ip_",
    "__ip_",
    "__softirqentry",
    "rcu_",
    "smp_call_function",
    "sysvec_",
    "__sysvec_",
    "exit_to_user_mode",
    "syscall_exit_to_user_mode",
    "__x86_",
    "perf_event_",
    "__perf_event_",
    "__wake_up",
    "try_to_wake_up",
    "wake_up_",
    "__mmdrop",
    "do_exit",
    "do_group_exit",
    "__x86_return_thunk",
};

static bool palette_is_kernel_name(const char *s, size_t len)
{
	if (palette_contains(s, len, "[kernel.kallsyms]"))
		return true;
	for (size_t i = 0; i < sizeof(palette_kernel_prefixes) / sizeof(palette_kernel_prefixes[0]);
	     i++)
		if (palette_has_prefix(s, len, palette_kernel_prefixes[i]))
			return true;
	return false;
}

static bool palette_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '<';
}

static bool palette_ident_char(char c)
{
	return palette_ident_start(c) || (c >= '0' && c <= '9') || c == '>' || c == '-';
}

/* "java/lang/Thread.run", "Lcom/example/Foo;::bar": an identifier, then '/'. */
static bool palette_is_java_path(const char *s, size_t len)
{
	size_t i = 0;
	if (!len || !palette_ident_start(s[0]))
		return false;
	while (i < len && palette_ident_char(s[i]))
		i++;
	return i < len && s[i] == '/' && i + 1 < len && palette_ident_start(s[i + 1]);
}

/* "com.example.Foo.bar", "Foo.bar(int)": at least two dotted identifiers,
 * none of them "so" (libjvm.so) and not ending at a file extension. */
static bool palette_is_java_dotted(const char *s, size_t len)
{
	size_t i = 0, segs = 0;
	for (;;) {
		if (i >= len || !palette_ident_start(s[i]))
			return false;
		size_t st = i;
		while (i < len && palette_ident_char(s[i]))
			i++;
		if (i - st == 2 && !memcmp(s + st, "so", 2))
			return false;
		segs++;
		if (i < len && s[i] == '.') {
			i++;
			continue;
		}
		break;
	}
	if (segs < 2)
		return false;
	/* "foo.c", "bar.h": a file name, not a method */
	if (i == len && s[i - 2] == '.')
		return false;
	return true;
}

enum palette_kind palette_classify(enum palette p, const char *name, size_t len)
{
	if ((len == 1 && name[0] == '-') || (len == 2 && !memcmp(name, "--", 2)))
		return PALETTE_KIND_SEPARATOR;
	if (palette_has_suffix(name, len, "_[k]"))
		return PALETTE_KIND_KERNEL;
	if (palette_has_suffix(name, len, "_[i]"))
		return PALETTE_KIND_INLINED;
	if (palette_has_suffix(name, len, "_[j]"))
		return PALETTE_KIND_JAVA;
	if (palette_has_suffix(name, len, "_[0]"))
		return PALETTE_KIND_INTERPRETED;
	if (palette_has_suffix(name, len, "_[1]"))
		return PALETTE_KIND_C1;
	size_t n = palette_strip(name, len);
	switch (p) {
	case PALETTE_JS:
		if (palette_contains(name, n, ".js") ||
		    palette_has_prefix(name, n, "LazyCompile:") ||
		    (n && (name[0] == '~' || name[0] == '*')))
			return PALETTE_KIND_JAVA;
		if (palette_has_prefix(name, n, "Builtin:") || palette_has_prefix(name, n, "Stub:"))
			return PALETTE_KIND_INLINED;
		break;
	case PALETTE_PERL:
		if (palette_contains(name, n, "Perl_") || palette_contains(name, n, "perl"))
			return PALETTE_KIND_CPP;
		if (palette_contains(name, n, "::") || palette_contains(name, n, ".pm") ||
		    palette_contains(name, n, ".pl"))
			return PALETTE_KIND_JAVA;
		break;
	default:
		if (palette_is_java_path(name, n))
			return PALETTE_KIND_JAVA;
		break;
	}
	if (palette_contains(name, n, "::"))
		return PALETTE_KIND_CPP;
	if (p != PALETTE_PERL && p != PALETTE_JS && palette_is_java_dotted(name, n))
		return PALETTE_KIND_JAVA;
	if (palette_is_kernel_name(name, n))
		return PALETTE_KIND_KERNEL;
	return PALETTE_KIND_NATIVE;
}

static uint64_t palette_xorshift(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x2545f4914f6cdd1dULL;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static uint64_t palette_fnv(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	return h;
}

static uint8_t palette_ch(double base, double span, double v)
{
	double c = base + span * v;
	return c > 255 ? 255 : c < 0 ? 0 : (uint8_t)c;
}

static struct palette_rgb palette_rgb(uint8_t r, uint8_t g, uint8_t b)
{
	return (struct palette_rgb){r, g, b};
}

/* One hue family with three variation values in [0,1). */
static struct palette_rgb palette_family(enum palette fam, double v1, double v2, double v3)
{
	switch (fam) {
	case PALETTE_HOT:
		return palette_rgb(palette_ch(205, 50, v3), palette_ch(0, 230, v1),
				   palette_ch(0, 55, v2));
	case PALETTE_MEM:
		return palette_rgb(palette_ch(0, 30, v3), palette_ch(185, 55, v2),
				   palette_ch(0, 200, v1));
	case PALETTE_IO:
	case PALETTE_WAKEUP:
		return palette_rgb(palette_ch(80, 60, v1), palette_ch(80, 60, v1),
				   palette_ch(190, 55, v2));
	case PALETTE_RED:
		return palette_rgb(palette_ch(200, 55, v1), palette_ch(50, 80, v1),
				   palette_ch(50, 80, v1));
	case PALETTE_GREEN:
		return palette_rgb(palette_ch(50, 60, v1), palette_ch(190, 60, v1),
				   palette_ch(50, 60, v1));
	case PALETTE_BLUE:
		return palette_rgb(palette_ch(80, 60, v1), palette_ch(80, 60, v1),
				   palette_ch(205, 50, v1));
	case PALETTE_AQUA:
		return palette_rgb(palette_ch(50, 60, v1), palette_ch(165, 55, v1),
				   palette_ch(165, 55, v1));
	case PALETTE_YELLOW:
		return palette_rgb(palette_ch(175, 55, v1), palette_ch(175, 55, v1),
				   palette_ch(50, 20, v1));
	case PALETTE_PURPLE:
		return palette_rgb(palette_ch(190, 65, v1), palette_ch(80, 60, v1),
				   palette_ch(190, 65, v1));
	case PALETTE_ORANGE:
		return palette_rgb(palette_ch(190, 65, v1), palette_ch(90, 65, v1),
				   palette_ch(0, 0, v1));
	default:
		return palette_rgb(palette_ch(200, 55, v1), palette_ch(50, 80, v1),
				   palette_ch(50, 80, v1));
	}
}

static enum palette palette_kind_family(enum palette_kind k)
{
	switch (k) {
	case PALETTE_KIND_JAVA: return PALETTE_GREEN;
	case PALETTE_KIND_INLINED: return PALETTE_AQUA;
	case PALETTE_KIND_KERNEL: return PALETTE_ORANGE;
	case PALETTE_KIND_CPP: return PALETTE_YELLOW;
	default: return PALETTE_RED;
	}
}

struct palette_rgb palette_color(enum palette p, const char *name, size_t len, unsigned flags,
				 uint64_t *rng)
{
	double v1, v2, v3;
	if (flags & PALETTE_F_HASH) {
		size_t n = palette_strip(name, len);
		uint64_t h = palette_fnv(name, n);
		/* v1 weights the start of the name, so related names get similar hues */
		v1 = (double)(palette_fnv(name, n < 6 ? n : 6) >> 11) / 9007199254740992.0 * 0.5 +
		     (double)(h >> 11) / 9007199254740992.0 * 0.5;
		v2 = (double)((h * 0x9e3779b97f4a7c15ULL) >> 11) / 9007199254740992.0;
		v3 = (double)(h & 0xffff) / 65536.0;
	} else {
		v1 = (double)(palette_xorshift(rng) >> 11) / 9007199254740992.0;
		v2 = (double)(palette_xorshift(rng) >> 11) / 9007199254740992.0;
		v3 = (double)(palette_xorshift(rng) >> 11) / 9007199254740992.0;
	}
	enum palette_kind kind = palette_classify(p, name, len);
	if (kind == PALETTE_KIND_SEPARATOR)
		return palette_rgb(160, 160, 160);
	/* Java frame kinds the way async-profiler tells them apart: interpreted
	 * pale green, C1 yellow-green, JIT (C2) green, inlined aqua. In the
	 * java (default) and chain palettes only. */
	if (p == PALETTE_JAVA || p == PALETTE_CHAIN) {
		if (kind == PALETTE_KIND_INTERPRETED)
			return palette_rgb(palette_ch(150, 40, v1), palette_ch(215, 30, v1),
					   palette_ch(150, 40, v1));
		if (kind == PALETTE_KIND_C1)
			return palette_rgb(palette_ch(150, 50, v1), palette_ch(205, 40, v1),
					   palette_ch(40, 40, v1));
	}
	switch (p) {
	case PALETTE_HOT:
	case PALETTE_MEM:
	case PALETTE_IO:
	case PALETTE_WAKEUP:
	case PALETTE_RED:
	case PALETTE_GREEN:
	case PALETTE_BLUE:
	case PALETTE_AQUA:
	case PALETTE_YELLOW:
	case PALETTE_PURPLE:
	case PALETTE_ORANGE: return palette_family(p, v1, v2, v3);
	case PALETTE_CHAIN:
		if (flags & PALETTE_F_WAKEUP)
			return palette_family(PALETTE_WAKEUP, v1, v2, v3);
		return palette_family(palette_kind_family(kind), v1, v2, v3);
	default: return palette_family(palette_kind_family(kind), v1, v2, v3);
	}
}

struct palette_rgb palette_diff(double delta, double maxdelta)
{
	if (delta == 0 || !(maxdelta > 0))
		return palette_rgb(235, 235, 235);
	double i = (delta < 0 ? -delta : delta) / maxdelta;
	if (i > 1)
		i = 1;
	uint8_t fade = (uint8_t)(225.0 * (1.0 - i) + 0.5);
	if (delta > 0)
		return palette_rgb(255, fade, fade);
	return palette_rgb(fade, fade, 255);
}
