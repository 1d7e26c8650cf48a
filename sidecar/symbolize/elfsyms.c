/* elfsyms.c - see elfsyms.h
 *
 * libelf (elfutils) does the parsing: it checks section and segment
 * bounds, converts byte order and field widths (ELF32/ELF64, LSB/MSB)
 * through the gelf_* accessors, and is fuzzed upstream. A hand-written
 * parser would have to get every one of those checks right against files
 * that a container controls. */
#include "elfsyms.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"

/* libstdc++'s demangler (the C++ ABI entry point; -lstdc++ is linked). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct elfsyms {
	struct elfsyms_sym *syms;
	size_t n, cap;
	char **demangled; /* lazily, one per symbol */
	char *pool;
	size_t pool_len, pool_cap;
	struct elfsyms_load loads[ELFSYMS_MAX_LOADS];
	size_t nloads;
	unsigned char build_id[ELFSYMS_BUILD_ID_MAX];
	size_t build_id_len;
	int adopted;		       /* from elfsyms_adopt: demangled by demangler only */
	elfsyms_demangle_fn demangler; /* NULL: adopted names stay as they are */
	void *demangler_ctx;
};

static pthread_once_t elfsyms_once = PTHREAD_ONCE_INIT;
static int elfsyms_version_ok;

static void elfsyms_init(void)
{
	elfsyms_version_ok = elf_version(EV_CURRENT) != EV_NONE;
}

static int elfsyms_ready(struct fs_error *err)
{
	pthread_once(&elfsyms_once, elfsyms_init);
	if (!elfsyms_version_ok)
		return fs_error_set(err, ENOSYS, "libelf: version mismatch (elf_version failed)");
	return 0;
}

static void elfsyms_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}
#define cleanup_elf __attribute__((cleanup(elfsyms_endp)))

static int elfsyms_add_name(struct elfsyms *es, const char *s, uint32_t *off)
{
	size_t len = strnlen(s, ELFSYMS_MAX_NAME);
	if (es->pool_len + len + 1 > ELFSYMS_MAX_POOL)
		return -E2BIG;
	if (es->pool_len + len + 1 > es->pool_cap) {
		size_t cap = es->pool_cap ? es->pool_cap * 2 : 1 << 14;
		while (cap < es->pool_len + len + 1)
			cap *= 2;
		char *p = realloc(es->pool, cap);
		if (!p)
			return -ENOMEM;
		es->pool = p;
		es->pool_cap = cap;
	}
	memcpy(es->pool + es->pool_len, s, len);
	es->pool[es->pool_len + len] = '\0';
	*off = (uint32_t)es->pool_len;
	es->pool_len += len + 1;
	return 0;
}

/* Walk the notes of one data block for NT_GNU_BUILD_ID. */
static int elfsyms_note_build_id(Elf_Data *data, unsigned char *id, size_t *len)
{
	GElf_Nhdr nhdr;
	size_t off = 0, name_off, desc_off, next;
	while (data && off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= ELFSYMS_BUILD_ID_MAX) {
			memcpy(id, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			*len = nhdr.n_descsz;
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

static int elfsyms_find_build_id(Elf *elf, unsigned char *id, size_t *len)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		if (elfsyms_note_build_id(elf_getdata(scn, NULL), id, len) == 0)
			return 0;
	}
	/* Stripped of section headers: the PT_NOTE segments. */
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOENT;
	for (size_t i = 0; i < phnum && i < 256; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d =
		    elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (elfsyms_note_build_id(d, id, len) == 0)
			return 0;
	}
	return -ENOENT;
}

static int elfsyms_read_loads(struct elfsyms *es, Elf *elf)
{
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum && es->nloads < ELFSYMS_MAX_LOADS; i++) {
		GElf_Phdr ph;
		/* filesz 0 maps no byte of the file (every PT_LOAD of a
		 * separate debug file): it could not place an offset anyway */
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		es->loads[es->nloads++] =
		    (struct elfsyms_load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	return 0;
}

static int elfsyms_read_table(struct elfsyms *es, Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
			      int objects)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;
	size_t ent = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (ent == 0)
		return 0;
	size_t count = data->d_size / ent;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if (objects ? type != STT_OBJECT : type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (es->n == es->cap) {
			if (es->cap >= ELFSYMS_MAX_SYMBOLS)
				return 0; /* bound reached: keep what we have */
			size_t cap = es->cap ? es->cap * 2 : 1024;
			struct elfsyms_sym *p = realloc(es->syms, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			es->syms = p;
			es->cap = cap;
		}
		struct elfsyms_sym *s = &es->syms[es->n];
		int r = elfsyms_add_name(es, name, &s->name);
		if (r == -E2BIG)
			return 0;
		if (r < 0)
			return r;
		s->addr = sym.st_value;
		s->size = sym.st_size > UINT32_MAX ? UINT32_MAX : (uint32_t)sym.st_size;
		es->n++;
	}
	return 0;
}

/* The PLT sections (".plt", ".plt.sec", ".plt.got") as one symbol each,
 * named after the section as objdump does: a sample in a stub (glibc calls
 * its own IFUNC'd string functions through them) is then named even though
 * no symbol table covers it. Added after the tables, so a real symbol at
 * the same address keeps its name. */
static int elfsyms_add_plt(struct elfsyms *es, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_addr == 0 || sh.sh_size == 0)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name ||
		    (strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got")))
			continue;
		if (es->n == es->cap) {
			if (es->cap >= ELFSYMS_MAX_SYMBOLS)
				return 0;
			size_t cap = es->cap ? es->cap * 2 : 16;
			struct elfsyms_sym *p = realloc(es->syms, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			es->syms = p;
			es->cap = cap;
		}
		struct elfsyms_sym *sym = &es->syms[es->n];
		int r = elfsyms_add_name(es, name, &sym->name);
		if (r < 0)
			return r == -E2BIG ? 0 : r;
		sym->addr = sh.sh_addr;
		sym->size = sh.sh_size > UINT32_MAX ? UINT32_MAX : (uint32_t)sh.sh_size;
		es->n++;
	}
	return 0;
}

static int elfsyms_cmp(const void *a, const void *b)
{
	const struct elfsyms_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Same address: sized symbols first, then the first one read
	 * (.symtab comes before .dynsym in every linker's output). */
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int elfsyms_from_elf(Elf *elf, int objects, struct elfsyms **out, struct fs_error *err)
{
	if (elf_kind(elf) != ELF_K_ELF)
		return fs_error_set(err, ENOEXEC, "not an ELF file");
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return fs_error_set(err, ENOEXEC, "bad ELF header: %s", elf_errmsg(-1));
	cleanup_elfsyms struct elfsyms *es = calloc(1, sizeof(*es));
	if (!es)
		return fs_error_set(err, ENOMEM, "allocating a symbol table");
	int r = elfsyms_read_loads(es, elf);
	if (r == 0 && elfsyms_find_build_id(elf, es->build_id, &es->build_id_len) < 0)
		es->build_id_len = 0;
	Elf_Scn *scn = NULL;
	/* .symtab first, then .dynsym, so duplicates keep the .symtab name;
	 * data symbols from .dynsym only (what a library exports). */
	for (int pass = objects ? 1 : 0; r == 0 && pass < 2; pass++) {
		unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		scn = NULL;
		while (r == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;
			if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != want)
				continue;
			r = elfsyms_read_table(es, elf, scn, &shdr, objects);
		}
	}
	if (r == 0 && !objects)
		r = elfsyms_add_plt(es, elf);
	if (r < 0)
		return fs_error_set(err, -r, "reading ELF symbols");
	if (es->n) {
		qsort(es->syms, es->n, sizeof(*es->syms), elfsyms_cmp);
		size_t w = 1; /* one symbol per address */
		for (size_t i = 1; i < es->n; i++)
			if (es->syms[i].addr != es->syms[w - 1].addr)
				es->syms[w++] = es->syms[i];
		es->n = w;
		es->demangled = calloc(es->n, sizeof(*es->demangled));
		if (!es->demangled)
			return fs_error_set(err, ENOMEM, "allocating a symbol table");
	}
	*out = steal_pointer(&es);
	return 0;
}

static int elfsyms_load_fd_kind(int fd, int objects, struct elfsyms **out, struct fs_error *err)
{
	int r = elfsyms_ready(err);
	if (r < 0)
		return r;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fs_error_set(err, errno, "fstat");
	if (!S_ISREG(st.st_mode))
		return fs_error_set(err, ENOEXEC, "not a regular file");
	if ((unsigned long long)st.st_size > ELFSYMS_MAX_FILE)
		return fs_error_set(err, EFBIG, "%lld bytes, over the %llu MiB limit",
				    (long long)st.st_size, ELFSYMS_MAX_FILE >> 20);
	/* ELF_C_READ: pread, not mmap (see the header). */
	cleanup_elf Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return fs_error_set(err, ENOEXEC, "libelf: %s", elf_errmsg(-1));
	return elfsyms_from_elf(elf, objects, out, err);
}

int elfsyms_load_fd(int fd, struct elfsyms **out, struct fs_error *err)
{
	return elfsyms_load_fd_kind(fd, 0, out, err);
}

int elfsyms_load_fd_objects(int fd, struct elfsyms **out, struct fs_error *err)
{
	return elfsyms_load_fd_kind(fd, 1, out, err);
}

int elfsyms_load_mem(const void *buf, size_t len, struct elfsyms **out, struct fs_error *err)
{
	int r = elfsyms_ready(err);
	if (r < 0)
		return r;
	if (len > ELFSYMS_MAX_FILE)
		return fs_error_set(err, EFBIG, "%zu bytes, over the limit", len);
	/* libelf wants a writable image; give it a private copy. */
	cleanup_free char *copy = malloc(len ? len : 1);
	if (!copy)
		return fs_error_set(err, ENOMEM, "copying an ELF image");
	if (len)
		memcpy(copy, buf, len);
	cleanup_elf Elf *elf = elf_memory(copy, len);
	if (!elf)
		return fs_error_set(err, ENOEXEC, "libelf: %s", elf_errmsg(-1));
	r = elfsyms_from_elf(elf, 0, out, err);
	return r;
}

int elfsyms_read_build_id(int fd, unsigned char id[ELFSYMS_BUILD_ID_MAX], size_t *len)
{
	if (elfsyms_ready(NULL) < 0)
		return -ENOSYS;
	cleanup_elf Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	return elfsyms_find_build_id(elf, id, len);
}

int elfsyms_offset_to_vaddr(const struct elfsyms *es, uint64_t file_offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < es->nloads; i++) {
		const struct elfsyms_load *l = &es->loads[i];
		if (file_offset >= l->offset && file_offset - l->offset < l->filesz) {
			*vaddr = file_offset - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

static int elfsyms_contains(const struct elfsyms *es, size_t i, uint64_t vaddr)
{
	const struct elfsyms_sym *s = &es->syms[i];
	uint64_t d = vaddr - s->addr;
	if (s->size)
		return d < s->size;
	uint64_t span = ELFSYMS_SIZELESS_SPAN;
	if (i + 1 < es->n && es->syms[i + 1].addr - s->addr < span)
		span = es->syms[i + 1].addr - s->addr;
	return d < span;
}

const char *elfsyms_lookup(struct elfsyms *es, uint64_t vaddr, uint64_t *offset)
{
	if (!es || es->n == 0 || vaddr < es->syms[0].addr)
		return NULL;
	size_t lo = 0, hi = es->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (es->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	/* The nearest symbol may be a small one nested before the end of a
	 * larger one (local labels, aliases): look back a little. */
	size_t i = lo, found = SIZE_MAX;
	for (int k = 0; k < 4; k++) {
		if (elfsyms_contains(es, i, vaddr)) {
			found = i;
			break;
		}
		if (i == 0)
			break;
		i--;
	}
	if (found == SIZE_MAX)
		return NULL;
	if (offset)
		*offset = vaddr - es->syms[found].addr;
	const char *raw = es->pool + es->syms[found].name;
	if (raw[0] != '_' || raw[1] != 'Z' || (es->adopted && !es->demangler))
		return raw;
	if (!es->demangled && !(es->demangled = calloc(es->n, sizeof(*es->demangled))))
		return raw;
	if (!es->demangled[found]) {
		/* A name that cannot be demangled is kept as it is, once. */
		char buf[ELFSYMS_MAX_NAME];
		int r = es->adopted ? es->demangler(es->demangler_ctx, raw, buf, sizeof(buf))
				    : elfsyms_demangle(raw, buf, sizeof(buf));
		es->demangled[found] = strdup(r > 0 ? buf : raw);
		if (!es->demangled[found])
			return raw;
	}
	return es->demangled[found];
}

int elfsyms_adopt(struct elfsyms_sym *syms, size_t n, char *pool, size_t pool_len,
		  const struct elfsyms_load *loads, size_t nloads, const unsigned char *build_id,
		  size_t build_id_len, struct elfsyms **out)
{
	*out = NULL;
	if (nloads > ELFSYMS_MAX_LOADS || build_id_len > ELFSYMS_BUILD_ID_MAX)
		return -EINVAL;
	struct elfsyms *es = calloc(1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	es->syms = syms;
	es->n = es->cap = n;
	es->pool = pool;
	es->pool_len = es->pool_cap = pool_len;
	if (nloads)
		memcpy(es->loads, loads, nloads * sizeof(*loads));
	es->nloads = nloads;
	if (build_id_len)
		memcpy(es->build_id, build_id, build_id_len);
	es->build_id_len = build_id_len;
	es->adopted = 1;
	*out = es;
	return 0;
}

int elfsyms_symbol(const struct elfsyms *es, size_t i, struct elfsyms_sym *sym, const char **name)
{
	if (!es || i >= es->n)
		return -ENOENT;
	*sym = es->syms[i];
	*name = es->pool + es->syms[i].name;
	return 0;
}

void elfsyms_set_demangler(struct elfsyms *es, elfsyms_demangle_fn fn, void *ctx)
{
	es->demangler = fn;
	es->demangler_ctx = ctx;
}

const struct elfsyms_load *elfsyms_loads(const struct elfsyms *es, size_t *n)
{
	*n = es->nloads;
	return es->loads;
}

size_t elfsyms_count(const struct elfsyms *es)
{
	return es ? es->n : 0;
}

const unsigned char *elfsyms_build_id(const struct elfsyms *es, size_t *len)
{
	*len = es->build_id_len;
	return es->build_id_len ? es->build_id : NULL;
}

size_t elfsyms_memory(const struct elfsyms *es)
{
	return sizeof(*es) + es->cap * sizeof(*es->syms) +
	       (es->demangled ? es->n * sizeof(char *) : 0) + es->pool_cap;
}

void elfsyms_free(struct elfsyms *es)
{
	if (!es)
		return;
	if (es->demangled)
		for (size_t i = 0; i < es->n; i++)
			free(es->demangled[i]);
	free(es->demangled);
	free(es->syms);
	free(es->pool);
	free(es);
}

/* ---- C++ names ---------------------------------------------------------- */

/* Length of an operator token starting at s ("operator()" etc.), so its
 * brackets are not taken for template or argument brackets. */
static size_t elfsyms_operator_len(const char *s)
{
	if (strncmp(s, "operator", 8))
		return 0;
	const char *p = s + 8;
	if (p[0] == '(' && p[1] == ')')
		return 10;
	if (p[0] == '[' && p[1] == ']')
		return 10;
	const char *q = p;
	while (*q && strchr("<>=!+-*/%^&|~,", *q))
		q++;
	return (size_t)(q - s);
}

void elfsyms_strip_args(char *name)
{
	size_t len = strlen(name);
	int angle = 0, paren = 0, brace = 0, square = 0;
	size_t cut = SIZE_MAX, open = 0;
	size_t last_space = SIZE_MAX, op_at = SIZE_MAX;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		int top = !angle && !paren && !brace && !square;
		if (top && c == 'o' &&
		    (i == 0 || !(name[i - 1] == '_' || (name[i - 1] >= 'a' && name[i - 1] <= 'z') ||
				 (name[i - 1] >= 'A' && name[i - 1] <= 'Z') ||
				 (name[i - 1] >= '0' && name[i - 1] <= '9')))) {
			size_t ol = elfsyms_operator_len(name + i);
			if (ol) {
				if (op_at == SIZE_MAX)
					op_at = i;
				i += ol - 1;
				continue;
			}
		}
		switch (c) {
		case '<':
			if (!paren && !brace && !square)
				angle++;
			break;
		case '>':
			if (angle && !paren && !brace && !square)
				angle--;
			break;
		case '(':
			if (top)
				open = i;
			paren++;
			break;
		case ')':
			if (paren && --paren == 0 && !angle && !brace && !square) {
				/* "f()::local" is a scope, not the argument list */
				if (strncmp(name + i + 1, "::", 2) != 0 && cut == SIZE_MAX)
					cut = open;
			}
			break;
		case '{': brace++; break;
		case '}':
			if (brace)
				brace--;
			break;
		case '[': square++; break;
		case ']':
			if (square)
				square--;
			break;
		case ' ':
			if (top && op_at == SIZE_MAX && cut == SIZE_MAX)
				last_space = i;
			break;
		}
		if (cut != SIZE_MAX)
			break;
	}
	if (cut != SIZE_MAX && cut > 0) {
		name[cut] = '\0';
		len = cut;
	}
	/* Only template functions carry a return type: "void f<int>". */
	if (last_space != SIZE_MAX && last_space < len && len > 0 && name[len - 1] == '>')
		memmove(name, name + last_space + 1, len - last_space);
	/* GCC clones keep their suffix after the arguments; they are cut with them. */
}

int elfsyms_demangle(const char *name, char *out, size_t len)
{
	if (len == 0)
		return -ENAMETOOLONG;
	int status = 0;
	char *d = NULL;
	if (name[0] == '_' && name[1] == 'Z') {
		d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && status != 0) {
			free(d);
			d = NULL;
		}
	}
	if (!d) {
		size_t n = strnlen(name, len);
		if (n == len) {
			memcpy(out, name, len - 1);
			out[len - 1] = '\0';
			return -ENAMETOOLONG;
		}
		memcpy(out, name, n + 1);
		return 0;
	}
	elfsyms_strip_args(d);
	size_t n = strlen(d);
	int r = 1;
	if (n >= len) {
		n = len - 1;
		r = -ENAMETOOLONG;
	}
	memcpy(out, d, n);
	out[n] = '\0';
	free(d);
	return r;
}
