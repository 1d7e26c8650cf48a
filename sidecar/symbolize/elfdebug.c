/* elfdebug.c - see elfdebug.h */
#include "elfdebug.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"

static void elfdebug_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}
#define cleanup_elfdebug __attribute__((cleanup(elfdebug_endp)))

static int elfdebug_ready(struct fs_error *err)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fs_error_set(err, ENOSYS, "libelf: version mismatch");
	return 0;
}

/* The section named name, or NULL. */
static Elf_Scn *elfdebug_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		const char *n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static int elfdebug_check(Elf *elf, struct fs_error *err)
{
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return fs_error_set(err, ENOEXEC, "not an ELF file");
	return 0;
}

int elfdebug_links_valid(const struct elfdebug_links *l)
{
	if (l->has_link > 1 || l->has_debugdata > 1)
		return 0;
	if (!l->has_link)
		return 1;
	size_t n = strnlen(l->link, sizeof(l->link));
	if (n == 0 || n > ELFDEBUG_MAX_LINK || !strcmp(l->link, ".") || !strcmp(l->link, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)l->link[i];
		if (c <= 0x20 || c >= 0x7f || c == '/')
			return 0;
	}
	return 1;
}

static int elfdebug_links(Elf *elf, struct elfdebug_links *out, struct fs_error *err)
{
	int r = elfdebug_check(elf, err);
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	GElf_Shdr sh;
	Elf_Scn *scn = elfdebug_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *d = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
	/* name, NUL, padding to 4, then the CRC (in the file's byte order) */
	if (d && d->d_buf && d->d_size >= 6) {
		const char *p = d->d_buf;
		size_t n = strnlen(p, d->d_size);
		size_t crc_at = (n + 4) & ~(size_t)3;
		if (n > 0 && n <= ELFDEBUG_MAX_LINK && crc_at + 4 <= d->d_size) {
			uint32_t crc;
			memcpy(&crc, p + crc_at, 4);
			GElf_Ehdr eh;
			gelf_getehdr(elf, &eh);
			int swap =
			    eh.e_ident[EI_DATA] ==
			    (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB);
			memcpy(out->link, p, n);
			out->link[n] = '\0';
			out->crc = swap ? __builtin_bswap32(crc) : crc;
			out->has_link = 1;
			if (!elfdebug_links_valid(out)) { /* not a plain file name: no link */
				memset(out->link, 0, sizeof(out->link));
				out->has_link = 0;
				out->crc = 0;
			}
		}
	}
	scn = elfdebug_section(elf, ".gnu_debugdata", &sh);
	if (scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0) {
		out->has_debugdata = 1;
		out->debugdata_size = sh.sh_size > UINT32_MAX ? UINT32_MAX : (uint32_t)sh.sh_size;
	}
	return 0;
}

static int elfdebug_regular(int fd, struct fs_error *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fs_error_set(err, errno, "fstat");
	if (!S_ISREG(st.st_mode))
		return fs_error_set(err, ENOEXEC, "not a regular file");
	if ((unsigned long long)st.st_size > ELFSYMS_MAX_FILE)
		return fs_error_set(err, EFBIG, "%lld bytes, over the %llu MiB limit",
				    (long long)st.st_size, ELFSYMS_MAX_FILE >> 20);
	return 0;
}

int elfdebug_links_fd(int fd, struct elfdebug_links *out, struct fs_error *err)
{
	int r = elfdebug_ready(err);
	if (r == 0)
		r = elfdebug_regular(fd, err);
	if (r < 0)
		return r;
	cleanup_elfdebug Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	return elfdebug_links(elf, out, err);
}

int elfdebug_links_mem(const void *buf, size_t len, struct elfdebug_links *out,
		       struct fs_error *err)
{
	int r = elfdebug_ready(err);
	if (r < 0)
		return r;
	cleanup_free char *copy = malloc(len ? len : 1); /* libelf wants it writable */
	if (!copy)
		return fs_error_set(err, ENOMEM, "copying an ELF image");
	memcpy(copy, buf, len);
	cleanup_elfdebug Elf *elf = elf_memory(copy, len);
	return elfdebug_links(elf, out, err);
}

int elfdebug_unxz(const void *in, size_t len, size_t max, char **out, size_t *out_len,
		  struct fs_error *err)
{
	lzma_stream s = LZMA_STREAM_INIT;
	*out = NULL;
	*out_len = 0;
	if (lzma_stream_decoder(&s, ELFDEBUG_LZMA_MEMORY, 0) != LZMA_OK)
		return fs_error_set(err, ENOMEM, "liblzma: starting the decoder");
	size_t cap = len * 4 < (1u << 16) ? (1u << 16) : len * 4;
	if (cap > max + 1)
		cap = max + 1;
	char *buf = malloc(cap);
	int r = 0;
	if (!buf) {
		lzma_end(&s);
		return fs_error_set(err, ENOMEM, "decompressing .gnu_debugdata");
	}
	s.next_in = in;
	s.avail_in = len;
	s.next_out = (uint8_t *)buf;
	s.avail_out = cap;
	for (;;) {
		lzma_ret lr = lzma_code(&s, LZMA_FINISH);
		if (lr == LZMA_STREAM_END)
			break;
		if (lr == LZMA_OK && s.avail_out == 0) {
			if (cap > max) { /* one byte past max was room: it is over */
				r = fs_error_set(err, EFBIG,
						 ".gnu_debugdata unpacks to over %zu MiB",
						 max >> 20);
				break;
			}
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *p = realloc(buf, ncap);
			if (!p) {
				r = fs_error_set(err, ENOMEM, "decompressing .gnu_debugdata");
				break;
			}
			buf = p;
			s.next_out = (uint8_t *)buf + cap;
			s.avail_out = ncap - cap;
			cap = ncap;
			continue;
		}
		if (lr == LZMA_MEMLIMIT_ERROR || lr == LZMA_MEM_ERROR)
			r = fs_error_set(err, EFBIG, ".gnu_debugdata needs over %u MiB to unpack",
					 ELFDEBUG_LZMA_MEMORY >> 20);
		else
			r = fs_error_set(err, ENOEXEC, ".gnu_debugdata is not valid xz (%d)",
					 (int)lr);
		break;
	}
	size_t got = cap - s.avail_out;
	lzma_end(&s);
	if (r == 0 && got > max)
		r = fs_error_set(err, EFBIG, ".gnu_debugdata unpacks to over %zu MiB", max >> 20);
	if (r < 0) {
		free(buf);
		return r;
	}
	*out = buf;
	*out_len = got;
	return 0;
}

static int elfdebug_debugdata(Elf *elf, struct elfsyms **out, struct fs_error *err)
{
	int r = elfdebug_check(elf, err);
	*out = NULL;
	if (r < 0)
		return r;
	GElf_Shdr sh;
	Elf_Scn *scn = elfdebug_section(elf, ".gnu_debugdata", &sh);
	if (!scn || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
		return fs_error_set(err, ENOENT, "no .gnu_debugdata");
	if (sh.sh_size > ELFDEBUG_MAX_PACKED)
		return fs_error_set(err, EFBIG, ".gnu_debugdata of %llu bytes, over %u MiB",
				    (unsigned long long)sh.sh_size, ELFDEBUG_MAX_PACKED >> 20);
	Elf_Data *d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size == 0)
		return fs_error_set(err, ENOEXEC, ".gnu_debugdata: %s", elf_errmsg(-1));
	cleanup_free char *plain = NULL;
	size_t plen;
	if ((r = elfdebug_unxz(d->d_buf, d->d_size, ELFDEBUG_MAX_UNPACKED, &plain, &plen, err)) < 0)
		return r;
	r = elfsyms_load_mem(plain, plen, out, err);
	if (r < 0)
		return fs_error_wrap(err, "inside .gnu_debugdata");
	return 0;
}

int elfdebug_debugdata_fd(int fd, struct elfsyms **out, struct fs_error *err)
{
	int r = elfdebug_ready(err);
	*out = NULL;
	if (r == 0)
		r = elfdebug_regular(fd, err);
	if (r < 0)
		return r;
	cleanup_elfdebug Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	return elfdebug_debugdata(elf, out, err);
}

int elfdebug_debugdata_mem(const void *buf, size_t len, struct elfsyms **out, struct fs_error *err)
{
	int r = elfdebug_ready(err);
	*out = NULL;
	if (r < 0)
		return r;
	cleanup_free char *copy = malloc(len ? len : 1);
	if (!copy)
		return fs_error_set(err, ENOMEM, "copying an ELF image");
	memcpy(copy, buf, len);
	cleanup_elfdebug Elf *elf = elf_memory(copy, len);
	return elfdebug_debugdata(elf, out, err);
}
