/* fuzz_unwind.c - arbitrary registers, code-cache facts and stack bytes
 * through the HotSpot-aware unwinder (unwind.h), and arbitrary registers and
 * stacks through real CFI (cfi.h: libdw over this process's own libc and
 * binary). The stack copy is a buffer of exactly the input's size, so any
 * read outside it is an ASan report; the walk must stay within its bounds
 * (frame count, strictly growing sp).
 *
 * Input: ip, sp offset, bp (3 x 8 bytes), 4 blobs (kind, begin offset,
 * length, frame size, frame_complete: 16 bytes each), then the stack. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "nativewalk.h"
#include "unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

#define FZ_CC	  0x7f0000000000ull
#define FZ_TEXT	  0x400000ull
#define FZ_SP	  0x7ffd00000000ull
#define FZ_NBLOBS 4

struct fz {
	struct hotspot_blob blobs[FZ_NBLOBS];
	struct cfi_proc *self;
	uint64_t self_text; /* a pc in our own text, for the real CFI */
};

static int fz_in_cc(void *ctx, uint64_t pc)
{
	return pc >= FZ_CC && pc < FZ_CC + 0x100000;
}

static int fz_find_blob(void *ctx, uint64_t pc, struct hotspot_blob *out)
{
	struct fz *f = ctx;
	for (int i = 0; i < FZ_NBLOBS; i++)
		if (f->blobs[i].kind && pc >= f->blobs[i].code_begin && pc < f->blobs[i].code_end) {
			*out = f->blobs[i];
			return 1;
		}
	return 0;
}

static int fz_is_text(void *ctx, uint64_t pc)
{
	return pc >= FZ_TEXT && pc < FZ_TEXT + 0x1000;
}

/* A fake leaf-frame answer from the pc: -1, 0, 8 and odd or large
 * offsets, with or without a certainly saved rbp. */
static int fz_leaf_frame(void *ctx, uint64_t pc, int *bp_saved)
{
	static const int answers[] = {-1, 0, 8, 0x18, 12, 1 << 21, UNWIND_LEAF_BUILT};
	*bp_saved = (int)(pc >> 3) & 1;
	return answers[pc % 7];
}

/* A fake CFI rule from the pc: CFA = sp + 8 * (1 + pc % 8), ra at CFA - 8. */
static int fz_cfi(void *ctx, struct unwind_regs *r, const struct unwind_stack *st, int leaf)
{
	uint64_t cfa = r->sp + 8 * (1 + r->ip % 8), ra;
	if (r->ip % 5 == 0)
		return 0;
	if (r->ip % 7 == 0)
		return 2;
	if (unwind_read(st, cfa - 8, &ra) < 0)
		return -1;
	r->ip = ra;
	r->sp = cfa;
	return 1;
}

static uint64_t fz_word(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cfi *cfi;
	static struct fz f;
	if (!cfi) {
		if (cfi_new(NULL, &cfi) < 0 || cfi_proc_open(cfi, getpid(), &f.self, NULL) < 0)
			abort();
		f.self_text = (uint64_t)(uintptr_t)&getpid;
	}
	size_t head = 24 + 16 * FZ_NBLOBS;
	if (size < head)
		return 0;
	for (int i = 0; i < FZ_NBLOBS; i++) {
		const uint8_t *b = data + 24 + 16 * i;
		struct hotspot_blob *x = &f.blobs[i];
		memset(x, 0, sizeof(*x));
		x->kind = (enum hotspot_blob_kind)(b[0] % 4);
		x->code_begin = FZ_CC + (b[1] | (uint64_t)b[2] << 8) * 16;
		x->code_end = x->code_begin + 1 + (b[3] | (uint64_t)b[4] << 8);
		uint32_t fs;
		int32_t fc;
		memcpy(&fs, b + 5, 4);
		memcpy(&fc, b + 9, 4);
		x->frame_size = fs;
		x->frame_complete = fc;
		x->method = fz_word(data) & 0xfffff8;
	}
	size_t ssize = size - head;
	uint8_t *copy = malloc(ssize ? ssize : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + head, ssize);
	struct unwind_stack st = {.sp = FZ_SP, .data = copy, .size = ssize};
	struct unwind_regs regs = {
	    .ip = fz_word(data), .sp = FZ_SP + (fz_word(data + 8) % 64), .bp = fz_word(data + 16)};
	struct unwind_ops ops = {.ctx = &f,
				 .in_code_cache = fz_in_cc,
				 .find_blob = fz_find_blob,
				 .is_text = fz_is_text,
				 .cfi_step = fz_cfi,
				 .leaf_frame = fz_leaf_frame,
				 .layout = {-24, -8, -64, 0, 8}};
	uint64_t out[UNWIND_MAX_FRAMES];
	struct unwind_result res;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 1: the pc in a blob or the text, so frames get walked.
		 * The leaf is the pc, or an interpreted frame's tagged Method*. */
		if (pass == 1)
			regs.ip = (regs.ip & 1 ? FZ_CC : FZ_TEXT) + (regs.ip >> 1) % 0x1000;
		size_t n = unwind_walk(&ops, &regs, &st, out, UNWIND_MAX_FRAMES, &res);
		if (n > UNWIND_MAX_FRAMES || res.n != n ||
		    (n && !unwind_is_method(out[0]) && (out[0] & ~UNWIND_C1_TAG) != regs.ip))
			abort();
	}
	/* The real CFI of our own code, over the fuzzed stack. */
	struct unwind_regs r = {
	    .ip = f.self_text + fz_word(data) % 256, .sp = st.sp, .bp = regs.bp};
	int s = cfi_proc_step(f.self, &r, &st, (int)(data[0] & 1));
	if (s < -1 || s > 2)
		abort(); /* (the walker, not cfi, checks that sp grows) */
	/* The native walk (a process that is not a JVM) over our own maps:
	 * the real CFI of every file, frame pointers elsewhere. */
	struct nativewalk nw;
	nativewalk_init(&nw, f.self);
	r = (struct unwind_regs){
	    .ip = f.self_text + fz_word(data + 8) % 4096, .sp = st.sp, .bp = regs.bp};
	size_t nn = nativewalk_run(&nw, &r, &st, out, UNWIND_MAX_FRAMES, &res);
	if (nn > UNWIND_MAX_FRAMES || (nn && out[0] != r.ip))
		abort();
	free(copy);
	return 0;
}
