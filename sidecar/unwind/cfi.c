/* cfi.c - native frames by .eh_frame CFI through libdw: see cfi.h */
#include "cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cleanup.h"
#include "procmaps.h"
#include "timeutil.h"

#define CFI_MAX_LOADS  16
#define CFI_EVAL_STACK 8
#define CFI_MAX_OPS    64
/* DWARF register numbers on x86_64. */
#define CFI_REG_RBP 6
#define CFI_REG_RSP 7
#define CFI_REG_RA  16

struct cfi_load {
	uint64_t offset, vaddr, filesz;
};

struct cfi_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi; /* NULL: no .eh_frame (negative cache) */
	struct cfi_load loads[CFI_MAX_LOADS];
	size_t nloads;
};

/* A mapping's procmaps `user` word: 0 not looked at yet, CFI_TRIED no
 * file (negative cache, and the vDSO), else its struct cfi_file *. */
#define CFI_TRIED ((uintptr_t)1)

struct cfi {
	char proc_root[256];
	int fake_proc; /* a proc_root was given (tests) */
	struct cfi_file *files[CFI_MAX_FILES];
	size_t nfiles;
	struct cfi_stats st;
};

struct cfi_proc {
	struct cfi *c;
	pid_t pid;
	struct procmaps pm; /* shared reader and budget with the symbolizer */
	uint64_t loaded_ms;
};

int cfi_new(const char *proc_root, struct cfi **out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	struct cfi *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", proc_root ? proc_root : "/proc");
	c->fake_proc = proc_root != NULL;
	*out = c;
	return 0;
}

static void cfi_file_free(struct cfi_file *f)
{
	if (!f)
		return;
	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

void cfi_free(struct cfi *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++)
		cfi_file_free(c->files[i]);
	free(c);
}

void cfi_stats(const struct cfi *c, struct cfi_stats *st)
{
	*st = c->st;
	st->files = c->nfiles;
}

/* ---- maps ----------------------------------------------------------------- */

static int cfi_proc_read_maps(struct cfi_proc *p)
{
	p->loaded_ms = timeutil_now_ms();
	struct procmaps fresh;
	int r = procmaps_read(p->c->fake_proc ? p->c->proc_root : NULL, p->pid, &fresh, NULL);
	if (r < 0)
		return r;
	/* The vDSO has no map_files entry: it is text without CFI for us
	 * (frame pointers then). */
	for (size_t i = 0; i < fresh.n; i++)
		if (fresh.v[i].type == PROCMAPS_VDSO)
			fresh.v[i].user = CFI_TRIED;
	procmaps_carry(&fresh, &p->pm); /* keep the files of unchanged mappings */
	procmaps_release(&p->pm);
	p->pm = fresh;
	return 0;
}

int cfi_proc_open(struct cfi *c, pid_t pid, struct cfi_proc **out, struct fs_error *err)
{
	struct cfi_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return fs_error_set(err, ENOMEM, "allocating the CFI maps of pid %d", (int)pid);
	p->c = c;
	p->pid = pid;
	int r = cfi_proc_read_maps(p);
	if (r < 0) {
		cfi_proc_free(p);
		return fs_error_set(err, -r, "reading the maps of pid %d", (int)pid);
	}
	*out = p;
	return 0;
}

void cfi_proc_free(struct cfi_proc *p)
{
	if (!p)
		return;
	procmaps_release(&p->pm);
	free(p);
}

/* Text of a file we can read CFI from, or the vDSO; anonymous memory is
 * the JIT's, not ours. */
static struct procmaps_map *cfi_find_map(struct cfi_proc *p, uint64_t pc)
{
	struct procmaps_map *m = procmaps_find(&p->pm, pc);
	if (!m || m->type == PROCMAPS_VDSO)
		return m;
	int file = m->type == PROCMAPS_FILE && (m->flags & PROCMAPS_F_INODE) &&
		   (m->flags & PROCMAPS_F_ABSOLUTE);
	return file ? m : NULL;
}

static struct procmaps_map *cfi_lookup(struct cfi_proc *p, uint64_t pc)
{
	struct procmaps_map *m = cfi_find_map(p, pc);
	if (!m && timeutil_now_ms() - p->loaded_ms >= CFI_REFRESH_MS && cfi_proc_read_maps(p) == 0)
		m = cfi_find_map(p, pc); /* dlopen since */
	return m;
}

int cfi_proc_is_text(struct cfi_proc *p, uint64_t pc)
{
	return cfi_lookup(p, pc) != NULL;
}

/* ---- files ---------------------------------------------------------------- */

static void cfi_file_loads(struct cfi_file *f)
{
	size_t nph = 0;
	if (elf_getphdrnum(f->elf, &nph) < 0)
		return;
	for (size_t i = 0; i < nph && f->nloads < CFI_MAX_LOADS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nloads++] = (struct cfi_load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
}

static struct cfi_file *cfi_file_of(struct cfi_proc *p, struct procmaps_map *m)
{
	struct cfi *c = p->c;
	if (m->user)
		return m->user == CFI_TRIED ? NULL : (struct cfi_file *)m->user;
	m->user = CFI_TRIED;
	char path[320];
	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", c->proc_root, (int)p->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > CFI_MAX_FILE_SIZE) {
		close(fd);
		return NULL;
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfi_file *f = c->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec &&
		    f->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			m->user = (uintptr_t)f;
			return f;
		}
	}
	if (c->nfiles >= CFI_MAX_FILES) {
		close(fd);
		return NULL;
	}
	struct cfi_file *f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return NULL;
	}
	f->fd = fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF) {
		cfi_file_loads(f);
		f->cfi = dwarf_getcfi_elf(f->elf);
	}
	if (!f->cfi)
		c->st.file_errors++;
	c->files[c->nfiles++] = f;
	m->user = (uintptr_t)f;
	return f;
}

static int cfi_vaddr(const struct cfi_file *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const struct cfi_load *l = &f->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -1;
}

/* ---- expressions ---------------------------------------------------------- */

static int cfi_reg(const struct unwind_regs *r, uint64_t regno, uint64_t *v)
{
	switch (regno) {
	case CFI_REG_RBP: *v = r->bp; return 0;
	case CFI_REG_RSP: *v = r->sp; return 0;
	case CFI_REG_RA: *v = r->ip; return 0;
	default: return -1; /* not sampled */
	}
}

/* Evaluate a DWARF expression of the CFI (the forms libdw hands back and
 * what .eh_frame uses, e.g. the PLT's): *out the value or address. *is_value
 * when it ends in DW_OP_stack_value. Every deref reads the stack copy. */
static int cfi_eval(const Dwarf_Op *ops, size_t nops, const struct unwind_regs *r, uint64_t cfa,
		    const struct unwind_stack *st, uint64_t *out, int *is_value)
{
	uint64_t stk[CFI_EVAL_STACK];
	size_t sp = 0;
	*is_value = 0;
	if (nops == 0 || nops > CFI_MAX_OPS)
		return -1;
#define PUSH(v)                                                                                    \
	do {                                                                                       \
		if (sp == CFI_EVAL_STACK)                                                          \
			return -1;                                                                 \
		stk[sp++] = (v);                                                                   \
	} while (0)
#define NEED(k)                                                                                    \
	do {                                                                                       \
		if (sp < (k))                                                                      \
			return -1;                                                                 \
	} while (0)
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *o = &ops[i];
		uint64_t v;
		uint8_t a = o->atom;
		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			PUSH((uint64_t)(a - DW_OP_lit0));
		} else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if (cfi_reg(r, a - DW_OP_breg0, &v) < 0)
				return -1;
			PUSH(v + o->number);
		} else {
			switch (a) {
			case DW_OP_bregx:
				if (cfi_reg(r, o->number, &v) < 0)
					return -1;
				PUSH(v + o->number2);
				break;
			case DW_OP_call_frame_cfa: PUSH(cfa); break;
			case DW_OP_const1u:
			case DW_OP_const1s:
			case DW_OP_const2u:
			case DW_OP_const2s:
			case DW_OP_const4u:
			case DW_OP_const4s:
			case DW_OP_const8u:
			case DW_OP_const8s:
			case DW_OP_constu:
			case DW_OP_consts: PUSH(o->number); break;
			case DW_OP_plus_uconst:
				NEED(1);
				stk[sp - 1] += o->number;
				break;
			case DW_OP_plus:
				NEED(2);
				sp--;
				stk[sp - 1] += stk[sp];
				break;
			case DW_OP_minus:
				NEED(2);
				sp--;
				stk[sp - 1] -= stk[sp];
				break;
			case DW_OP_and:
				NEED(2);
				sp--;
				stk[sp - 1] &= stk[sp];
				break;
			case DW_OP_ge:
				NEED(2);
				sp--;
				stk[sp - 1] = (int64_t)stk[sp - 1] >= (int64_t)stk[sp];
				break;
			case DW_OP_shl:
				NEED(2);
				sp--;
				stk[sp - 1] = stk[sp] < 64 ? stk[sp - 1] << stk[sp] : 0;
				break;
			case DW_OP_deref:
				NEED(1);
				if (unwind_read(st, stk[sp - 1], &v) < 0)
					return -1;
				stk[sp - 1] = v;
				break;
			case DW_OP_stack_value:
				if (i + 1 != nops)
					return -1;
				*is_value = 1;
				break;
			default: return -1;
			}
		}
	}
#undef PUSH
#undef NEED
	if (sp == 0)
		return -1;
	*out = stk[sp - 1];
	return 0;
}

/* The caller's value of regno: 0 set, 1 undefined, -1 failed. */
static int cfi_caller_reg(Dwarf_Frame *fr, int regno, const struct unwind_regs *r, uint64_t cfa,
			  const struct unwind_stack *st, uint64_t same, uint64_t *out)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	if (dwarf_frame_register(fr, regno, mem, &ops, &nops) < 0)
		return -1;
	if (nops == 0) {
		if (ops == NULL) {
			*out = same; /* same value */
			return 0;
		}
		return 1; /* undefined */
	}
	uint64_t v;
	int is_value;
	if (cfi_eval(ops, nops, r, cfa, st, &v, &is_value) < 0)
		return -1;
	if (is_value) {
		*out = v;
		return 0;
	}
	return unwind_read(st, v, out) < 0 ? -1 : 0;
}

int cfi_proc_step(struct cfi_proc *p, struct unwind_regs *r, const struct unwind_stack *st,
		  int leaf)
{
	struct cfi *c = p->c;
	uint64_t pc = leaf ? r->ip : r->ip - 1, vaddr;
	struct procmaps_map *m = cfi_lookup(p, pc);
	struct cfi_file *f = m ? cfi_file_of(p, m) : NULL;
	if (!f || !f->cfi || cfi_vaddr(f, pc - m->start + m->pgoff, &vaddr) < 0) {
		c->st.no_cfi++;
		return 0;
	}
	Dwarf_Frame *fr = NULL;
	if (dwarf_cfi_addrframe(f->cfi, vaddr, &fr) < 0 || !fr) {
		c->st.no_cfi++;
		return 0;
	}
	int ret = -1;
	Dwarf_Op *ops = NULL;
	size_t nops = 0;
	uint64_t cfa, ra, bp;
	int is_value;
	if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops &&
	    cfi_eval(ops, nops, r, 0, st, &cfa, &is_value) == 0) {
		int u = cfi_caller_reg(fr, CFI_REG_RA, r, cfa, st, 0, &ra);
		if (u == 1) {
			ret = 2; /* the outermost frame: _start, clone */
		} else if (u == 0) {
			int b = cfi_caller_reg(fr, CFI_REG_RBP, r, cfa, st, r->bp, &bp);
			if (b >= 0) {
				if (b == 1)
					bp = r->bp; /* undefined: keep it, harmless */
				*r = (struct unwind_regs){.ip = ra, .sp = cfa, .bp = bp};
				ret = 1;
			}
		}
	}
	free(fr);
	if (ret == 1 || ret == 2)
		c->st.steps++;
	else
		c->st.failed++;
	return ret;
}
