/* test_elfjail.c - container ELF files parsed in the sandboxed child
 * (elfjail) and the parent's validation of what comes back (elfflat).
 *
 * The validators must refuse every malformed record; crafted ELF files
 * (a huge symbol count, overlapping and self-linked sections, a 1 MiB name,
 * a demangler bomb, more symbols than kept, a child that overruns its
 * deadline) must cost at most their own names: the jail answers the next
 * file, and other names stay right. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "elfflat.h"
#include "elfjail.h"
#include "elfsyms.h"
#include "tap.h"
#include "timeutil.h"

/* ---- a minimal ELF64 writer ----------------------------------------------
 * Layout: ehdr, one PT_LOAD (offset 0 -> vaddr 0, the whole file), .text,
 * .symtab, .strtab, .shstrtab, section headers. Symbols are functions in
 * .text at 0x100 + 0x10 * i, 16 bytes each. */

struct craft {
	size_t nsyms;
	const char *(*name)(size_t i, void *arg);
	void *arg;
	uint64_t symtab_size; /* 0 = the real size */
	int symtab_link;      /* 0 = .strtab (3) */
	int overlap;	      /* .strtab at .symtab's offset */
	int dynsym_objects;   /* a .dynsym of data symbols instead of a .symtab of functions */
};

struct blob {
	unsigned char *p;
	size_t len, cap;
};

static size_t blob_put(struct blob *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + len)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	size_t at = b->len;
	if (data)
		memcpy(b->p + at, data, len);
	else
		memset(b->p + at, 0, len);
	b->len += len;
	return at;
}

static void blob_align(struct blob *b)
{
	while (b->len % 8)
		blob_put(b, NULL, 1);
}

static struct blob craft_elf(const struct craft *c)
{
	struct blob b = {0}, str = {0};
	Elf64_Ehdr eh = {0};
	blob_put(&b, &eh, sizeof(eh));
	Elf64_Phdr ph = {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_align = 4096};
	size_t ph_at = blob_put(&b, &ph, sizeof(ph));
	size_t text_at = blob_put(&b, NULL, 0x100 + 0x10 * (c->nsyms + 1));
	blob_align(&b);
	blob_put(&str, "", 1);
	size_t sym_at = blob_put(&b, NULL, sizeof(Elf64_Sym)); /* symbol 0 */
	for (size_t i = 0; i < c->nsyms; i++) {
		const char *n = c->name(i, c->arg);
		Elf64_Sym s = {
		    .st_name = (uint32_t)blob_put(&str, n, strlen(n) + 1),
		    .st_info = ELF64_ST_INFO(STB_GLOBAL, c->dynsym_objects ? STT_OBJECT : STT_FUNC),
		    .st_shndx = 1,
		    .st_value = text_at + 0x100 + 0x10 * i,
		    .st_size = 0x10};
		blob_put(&b, &s, sizeof(s));
	}
	size_t sym_size = b.len - sym_at;
	size_t str_at = c->overlap ? sym_at : blob_put(&b, str.p, str.len);
	const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t shstr_at = blob_put(&b, shstr, sizeof(shstr));
	blob_align(&b);
	Elf64_Shdr sh[5] = {{0}};
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = text_at,
			     .sh_offset = text_at,
			     .sh_size = sym_at - text_at};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = c->dynsym_objects ? SHT_DYNSYM : SHT_SYMTAB,
			     .sh_offset = sym_at,
			     .sh_size = c->symtab_size ? c->symtab_size : sym_size,
			     .sh_link = (uint32_t)(c->symtab_link ? c->symtab_link : 3),
			     .sh_info = 1,
			     .sh_entsize = sizeof(Elf64_Sym),
			     .sh_addralign = 8};
	sh[3] = (Elf64_Shdr){.sh_name = 15,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = str_at,
			     .sh_size = c->overlap ? sym_size : str.len};
	sh[4] = (Elf64_Shdr){
	    .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = shstr_at, .sh_size = sizeof(shstr)};
	size_t sh_at = blob_put(&b, sh, sizeof(sh));
	Elf64_Ehdr *e = (Elf64_Ehdr *)b.p;
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_DYN;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_phoff = ph_at;
	e->e_shoff = sh_at;
	e->e_ehsize = sizeof(Elf64_Ehdr);
	e->e_phentsize = sizeof(Elf64_Phdr);
	e->e_phnum = 1;
	e->e_shentsize = sizeof(Elf64_Shdr);
	e->e_shnum = 5;
	e->e_shstrndx = 4;
	Elf64_Phdr *p = (Elf64_Phdr *)(b.p + ph_at);
	p->p_filesz = p->p_memsz = b.len;
	free(str.p);
	return b;
}

static int memfd_of(const struct blob *b)
{
	int fd = memfd_create("crafted-elf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, b->p, b->len) != (ssize_t)b->len)
		abort();
	return fd;
}

static const char *names_plain(size_t i, void *arg)
{
	static const char *const n[] = {"alpha", "_ZN2ns5Klass6methodEi", "gamma"};
	return n[i % 3];
}

static char big_name[(1 << 20) + 1];
static const char *names_big(size_t i, void *arg)
{
	return i == 1 ? big_name : names_plain(i, arg);
}

/* "f(a, b<a, a>, b<b<a, a>, b<a, a> >, ...)": each parameter a template of
 * the previous one twice, by substitution, so 60 levels demangle to 2^60
 * bytes. The demangler of the old, unsandboxed code would have tried. */
static char bomb_name[2048];
static void make_bomb(int levels)
{
	char *p = bomb_name;
	p += sprintf(p, "_Z1f1a1bIS_S_E");
	for (int k = 0, last = 2; k < levels; k++, last++) {
		char id[8];
		unsigned n = (unsigned)last - 1, d = 0;
		char tmp[8];
		do
			tmp[d++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[n % 36];
		while ((n /= 36) && d < 7);
		for (unsigned i = 0; i < d; i++)
			id[i] = tmp[d - 1 - i];
		id[d] = '\0';
		p += sprintf(p, "S0_IS%s_S%s_E", id, id);
	}
}
static const char *names_bomb(size_t i, void *arg)
{
	return i == 1 ? bomb_name : names_plain(i, arg);
}

static const char *names_many(size_t i, void *arg)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "f%zx", i);
	return buf;
}

/* Parse c in j; 0 or the error. *es on success. */
static int jail_parse(struct elfjail *j, const struct craft *c, int demangle, struct elfsyms **es,
		      struct fs_error *err)
{
	struct blob b = craft_elf(c);
	int fd = memfd_of(&b);
	int r = elfjail_parse(j, fd, demangle, es, err);
	close(fd);
	free(b.p);
	return r;
}

static const char *lookup(struct elfsyms *es, size_t i)
{
	uint64_t off = 64 + 56, vaddr; /* .text follows the header and phdr */
	if (elfsyms_offset_to_vaddr(es, off + 0x100 + 0x10 * i + 4, &vaddr) < 0)
		return NULL;
	return elfsyms_lookup(es, vaddr, NULL);
}

static void test_child_sandboxed(struct elfjail *j)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", elfjail_child_pid(j));
	FILE *f = fopen(path, "re");
	int seccomp = -1, nnp = -1;
	unsigned long long capeff = ~0ull, capbnd = ~0ull;
	unsigned uid = 0;
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "Seccomp: %d", &seccomp);
		sscanf(line, "NoNewPrivs: %d", &nnp);
		sscanf(line, "CapEff: %llx", &capeff);
		sscanf(line, "CapBnd: %llx", &capbnd);
		sscanf(line, "Uid: %u", &uid);
	}
	if (f)
		fclose(f);
	is_int(seccomp, 2, "the ELF child runs under a seccomp filter");
	is_int(nnp, 1, "the ELF child has no_new_privs");
	ok(capeff == 0 && capbnd == 0,
	   "the ELF child has no capabilities (eff %llx, bounding %llx)", capeff, capbnd);
	if (geteuid() == 0)
		is_int(uid, ELFJAIL_UID, "the ELF child runs as nobody");
	else
		tap_skip(1, "the ELF child changes uid only when started by root");
	/* main() mapped shared memory before the child was forked. */
	snprintf(path, sizeof(path), "/proc/%d/maps", elfjail_child_pid(j));
	f = fopen(path, "re");
	int shared = 0, lines = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		lines++;
		if (sscanf(line, "%*x-%*x %7s", perms) == 1 && perms[3] == 's')
			shared++;
	}
	if (f)
		fclose(f);
	ok(lines > 0 && shared == 0, "no shared mapping of ours is left in the child (%d of %d)",
	   shared, lines);
}

static void test_jail_crafted(void)
{
	struct elfjail *j = NULL;
	struct fs_error err = {0};
	struct elfsyms *es = NULL;
	if (elfjail_open(&(struct elfjail_opts){.memory = 128u << 20}, &j, &err) < 0) {
		ok(0, "elfjail_open: %s", err.msg);
		return;
	}
	struct craft plain = {.nsyms = 3, .name = names_plain};
	int r = jail_parse(j, &plain, 1, &es, &err);
	if (!ok(r == 0, "a plain file parses in the jail (%s)", r ? err.msg : "ok"))
		goto out;
	is_int(elfsyms_count(es), 3, "three symbols");
	is_str(lookup(es, 0), "alpha", "C name as it is");
	is_str(lookup(es, 1), "ns::Klass::method", "C++ name demangled by the child");
	elfsyms_free(es);
	es = NULL;
	test_child_sandboxed(j);
	int first = elfjail_child_pid(j);

	struct craft huge = {.nsyms = 3, .name = names_plain, .symtab_size = 1ull << 40};
	r = jail_parse(j, &huge, 1, &es, &err);
	ok(r == 0 && elfsyms_count(es) == 0, "a symtab claiming 2^40 bytes gives nothing (%s)",
	   r ? err.msg : "empty");
	elfsyms_free(es);
	es = NULL;
	struct craft loop = {.nsyms = 3, .name = names_plain, .symtab_link = 2};
	r = jail_parse(j, &loop, 1, &es, &err);
	ok(r == 0 && elfsyms_count(es) == 0, "a symtab linked to itself: parsed, no symbol (%s)",
	   r ? err.msg : "empty");
	elfsyms_free(es);
	es = NULL;
	struct craft overlap = {.nsyms = 3, .name = names_plain, .overlap = 1};
	r = jail_parse(j, &overlap, 1, &es, &err);
	ok(r == 0 && elfsyms_count(es) == 0,
	   "names overlapping the symbols: parsed, no symbol (%s)", r ? err.msg : "empty");
	elfsyms_free(es);
	es = NULL;
	is_int(elfjail_child_pid(j), first, "the same child answered all of them");

	memset(big_name, 'x', sizeof(big_name) - 1);
	struct craft big = {.nsyms = 3, .name = names_big};
	r = jail_parse(j, &big, 1, &es, &err);
	if (ok(r == 0, "a 1 MiB name parses (%s)", r ? err.msg : "ok")) {
		const char *n = lookup(es, 1);
		ok(n && strlen(n) == ELFSYMS_MAX_NAME - 1, "the 1 MiB name is cut to %d bytes",
		   ELFSYMS_MAX_NAME - 1);
		is_str(lookup(es, 2), "gamma", "the next name is intact");
	}
	elfsyms_free(es);
	es = NULL;

	/* 2^60 bytes of demangled name. Parsed eagerly, the child misses
	 * its file deadline and is killed. The symbolizer's way, parsed raw
	 * then demangled name by name, the bomb costs its own name only. */
	struct elfjail *bj = NULL;
	if (elfjail_open(&(struct elfjail_opts){.timeout_ms = 1500, .name_timeout_ms = 300}, &bj,
			 &err) == 0) {
		make_bomb(60);
		struct craft bomb = {.nsyms = 6, .name = names_bomb};
		uint64_t t0 = timeutil_now_ms();
		r = jail_parse(bj, &bomb, 1, &es, &err);
		uint64_t ms = timeutil_now_ms() - t0;
		tap_diag("demangler bomb, eager: %s in %llu ms", r ? err.msg : "parsed",
			 (unsigned long long)ms);
		ok(r == -ETIMEDOUT && ms < 1500 + 500, "eagerly: killed at the file's deadline");
		elfsyms_free(es);
		es = NULL;
		r = jail_parse(bj, &bomb, 0, &es, &err);
		if (ok(r == 0, "the same file without demangling parses (%s)",
		       r ? err.msg : "ok")) {
			is_str(lookup(es, 1), bomb_name, "the bomb comes back mangled");
			is_str(lookup(es, 0), "alpha", "the names around the bomb are intact");
		}
		elfsyms_free(es);
		es = NULL;
		char out[ELFSYMS_MAX_NAME];
		t0 = timeutil_now_ms();
		r = elfjail_demangle(bj, bomb_name, out, sizeof(out), &err);
		ms = timeutil_now_ms() - t0;
		ok(r == -ETIMEDOUT && ms < 300 + 300,
		   "the bomb alone: killed at the name's deadline "
		   "(%llu ms: %s)",
		   (unsigned long long)ms, err.msg);
		r = elfjail_demangle(bj, "_ZN2ns5Klass6methodEi", out, sizeof(out), &err);
		ok(r == 0 && !strcmp(out, "ns::Klass::method"),
		   "the next name is demangled by a new child (%s)", r ? err.msg : out);
		is_int(elfjail_demangle(bj, "memcpy", out, sizeof(out), &err), -ENOENT,
		       "a C name is not a C++ name");
		elfjail_close(bj);
	}

	r = jail_parse(j, &plain, 1, &es, &err);
	ok(r == 0 && lookup(es, 1) && !strcmp(lookup(es, 1), "ns::Klass::method"),
	   "after the crafted files, a plain one is named right");
	elfsyms_free(es);
	es = NULL;

	struct blob junk = {0};
	blob_put(&junk, "\177ELF not really", 16);
	int fd = memfd_of(&junk);
	r = elfjail_parse(j, fd, 1, &es, &err);
	close(fd);
	free(junk.p);
	is_int(r, -ENOEXEC, "junk with an ELF magic is not ELF (%s)", err.msg);
out:
	elfsyms_free(es);
	elfjail_close(j);
}

static const char *names_vm(size_t i, void *arg)
{
	static const char *const n[] = {"gHotSpotVMStructs", "gHotSpotVMTypes", "other"};
	return n[i % 3];
}

/* What the VMStructs reader asks for (ELFJAIL_OBJECTS): exported data
 * symbols, and no functions. */
static void test_jail_objects(void)
{
	struct elfjail *j = NULL;
	struct fs_error err = {0};
	struct elfsyms *es = NULL;
	if (elfjail_open(NULL, &j, &err) < 0)
		return;
	struct craft vm = {.nsyms = 3, .name = names_vm, .dynsym_objects = 1};
	struct blob b = craft_elf(&vm);
	int fd = memfd_of(&b);
	free(b.p);
	int r = elfjail_parse(j, fd, ELFJAIL_OBJECTS, &es, &err);
	if (ok(r == 0, "exported data symbols parse (%s)", r ? err.msg : "ok")) {
		struct elfsyms_sym s;
		const char *name = NULL;
		is_int(elfsyms_count(es), 3, "three data symbols");
		ok(elfsyms_symbol(es, 0, &s, &name) == 0 && !strcmp(name, "gHotSpotVMStructs"),
		   "gHotSpotVMStructs by its address");
	}
	elfsyms_free(es);
	es = NULL;
	r = elfjail_parse(j, fd, 0, &es, &err);
	ok(r == 0 && elfsyms_count(es) == 0, "and they are not functions");
	elfsyms_free(es);
	close(fd);
	elfjail_close(j);
}

static void test_jail_limits(void)
{
	struct elfjail *j = NULL;
	struct fs_error err = {0};
	struct elfsyms *es = NULL;
	if (elfjail_open(&(struct elfjail_opts){.timeout_ms = 1}, &j, &err) < 0)
		return;
	struct craft many = {.nsyms = ELFFLAT_MAX_SYMBOLS + 1000, .name = names_many};
	struct blob b = craft_elf(&many);
	int fd = memfd_of(&b);
	free(b.p);
	int r = elfjail_parse(j, fd, 1, &es, &err);
	is_int(r, -ETIMEDOUT, "a file that takes longer than its deadline: killed (%s)", err.msg);
	is_int(elfjail_child_pid(j), 0, "no child left after the kill");
	elfjail_close(j);

	if (elfjail_open(NULL, &j, &err) < 0)
		return;
	r = elfjail_parse(j, fd, 1, &es, &err);
	if (ok(r == 0, "%d symbols parse with the normal deadline (%s)", ELFFLAT_MAX_SYMBOLS + 1000,
	       r ? err.msg : "ok"))
		is_int(elfsyms_count(es), ELFFLAT_MAX_SYMBOLS, "only the first %d are kept",
		       ELFFLAT_MAX_SYMBOLS);
	elfsyms_free(es);
	close(fd);
	elfjail_close(j);
}

/* ---- the validators ------------------------------------------------------ */

static struct elfsyms *decode(const void *buf, size_t len, int *r)
{
	struct elfsyms *es = NULL;
	struct fs_error err = {0};
	*r = elfflat_decode(buf, len, &es, &err);
	return es;
}

/* The encoding of a plain file, to mutate. */
static char *valid_flat(size_t *len)
{
	struct craft plain = {.nsyms = 3, .name = names_plain};
	struct blob b = craft_elf(&plain);
	struct elfsyms *es = NULL;
	char *out = NULL;
	if (elfsyms_load_mem(b.p, b.len, &es, NULL) < 0 || elfflat_encode(es, 1, &out, len) < 0)
		abort();
	elfsyms_free(es);
	free(b.p);
	return out;
}

#define HDR(buf)  ((struct elfflat_hdr *)(buf))
#define LOAD(buf) ((struct elfsyms_load *)((buf) + sizeof(struct elfflat_hdr)))
#define SYM(buf, i)                                                                                \
	((struct elfflat_sym *)((buf) + sizeof(struct elfflat_hdr) +                               \
				HDR(buf)->nloads * sizeof(struct elfsyms_load)) +                  \
	 (i))

static void expect_bad(char *buf, size_t len, const char *what)
{
	int r;
	struct elfsyms *es = decode(buf, len, &r);
	if (!ok(r == -EBADMSG && !es, "refused: %s", what))
		tap_diag("decode returned %d", r);
	elfsyms_free(es);
}

static void test_validators(void)
{
	size_t len;
	cleanup_free char *good = valid_flat(&len);
	cleanup_free char *m = malloc(len + 16);
	int r;
	struct elfsyms *es = decode(good, len, &r);
	if (!ok(r == 0 && elfsyms_count(es) == 3, "the encoding of a plain file decodes"))
		return;
	is_str(lookup(es, 1), "ns::Klass::method", "names come out as encoded");
	elfsyms_free(es);

#define MUTATE(stmt, what)                                                                         \
	do {                                                                                       \
		memcpy(m, good, len);                                                              \
		size_t mlen = len;                                                                 \
		stmt;                                                                              \
		expect_bad(m, mlen, what);                                                         \
	} while (0)
	MUTATE(m[0] = 'X', "bad magic");
	MUTATE(HDR(m)->nloads = ELFSYMS_MAX_LOADS + 1, "too many program headers");
	MUTATE(HDR(m)->nsyms = ELFFLAT_MAX_SYMBOLS + 1, "too many symbols");
	MUTATE(HDR(m)->nsyms = UINT32_MAX, "a symbol count that would overflow");
	MUTATE(HDR(m)->pool_len = ELFFLAT_MAX_POOL + 1, "a pool over its cap");
	MUTATE(HDR(m)->build_id_len = ELFSYMS_BUILD_ID_MAX + 1, "a build id too long");
	MUTATE(mlen = len - 1, "one byte short");
	MUTATE((m[len] = 0, mlen = len + 1), "one byte too many");
	MUTATE(HDR(m)->nsyms = 2, "counts that do not add up");
	MUTATE(LOAD(m)->filesz = 0, "an empty program header");
	MUTATE((LOAD(m)->offset = UINT64_MAX - 1, LOAD(m)->filesz = 16),
	       "a wrapping program header");
	MUTATE(SYM(m, 1)->addr = SYM(m, 0)->addr, "two symbols at one address");
	MUTATE(SYM(m, 2)->addr = 0, "symbols out of order");
	MUTATE(SYM(m, 0)->name = HDR(m)->pool_len, "a name past the pool");
	MUTATE(SYM(m, 0)->name = UINT32_MAX, "a name far past the pool");
	MUTATE(m[len - 1] = 'x', "the last name not terminated");
	/* No symbols but names, or symbols but no names. */
	MUTATE((HDR(m)->nsyms = 0, mlen = len - 3 * sizeof(struct elfflat_sym)), "names alone");

	/* A name longer than ELFSYMS_MAX_NAME: rebuild a pool of one long name. */
	size_t big = sizeof(struct elfflat_hdr) + sizeof(struct elfflat_sym) + ELFSYMS_MAX_NAME + 1;
	cleanup_free char *lb = calloc(1, big);
	memcpy(HDR(lb)->magic, ELFFLAT_MAGIC, 8);
	HDR(lb)->nsyms = 1;
	HDR(lb)->pool_len = ELFSYMS_MAX_NAME + 1;
	memset(lb + big - ELFSYMS_MAX_NAME - 1, 'y', ELFSYMS_MAX_NAME);
	expect_bad(lb, big, "a name longer than the cap");
	lb[big - 2] = '\0';
	es = decode(lb, big, &r);
	ok(r == 0, "a name just under the cap is taken");
	elfsyms_free(es);

	/* Every prefix of a valid encoding is refused (and none crashes). */
	int all = 1;
	for (size_t l = 0; l < len; l++) {
		es = decode(good, l, &r);
		all &= r == -EBADMSG && !es;
		elfsyms_free(es);
	}
	ok(all, "every truncation of a valid encoding is refused");
}

int main(void)
{
	tap_plan(56);
	/* Like the sampler's perf ring buffers: shared with the kernel. */
	void *ring = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ok(ring != MAP_FAILED, "a shared mapping in the parent");
	test_validators();
	test_jail_crafted();
	test_jail_objects();
	test_jail_limits();
	return tap_done();
}
