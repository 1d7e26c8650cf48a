/* cfi.c - native frames by .eh_frame CFI, parsed in the ELF sandbox: see
 * cfi.h */
#include "cfi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cfitable.h"
#include "cleanup.h"
#include "localfs.h"
#include "elfjail.h"
#include "fileio.h"
#include "procmaps.h"
#include "timeutil.h"

struct cfi_file {
	struct procmaps_file_id id;
	struct cfitable *tab; /* NULL: no CFI, or refused (negative cache) */
	unsigned fp_permille; /* cfitable_fp_permille(tab) */
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
	struct elfjail *jail; /* parses every file's CFI */
	int self_fd_dir;      /* /proc/self/fd, for reopening by fd */
	unsigned kills;	      /* missed deadlines of the child */
	size_t bytes;	      /* of every table kept, at most CFI_MAX_BYTES */
};

/* A pc's CFI rule found before (pc 0: empty). */
struct cfi_row_slot {
	uint64_t pc;
	const struct cfiflat_rule *rule;
};

struct cfi_proc {
	struct cfi *c;
	pid_t pid;
	struct procmaps pm; /* shared reader and budget with the symbolizer */
	uint64_t loaded_ms;
	/* CFI_ROW_CACHE rules by pc (allocated at the first step), emptied
	 * whenever the maps are read again: the return addresses of a
	 * process repeat, and a binary search over a big library's table
	 * (libjvm.so: 100k rows) misses the CPU's caches at every level */
	struct cfi_row_slot *rows;
};

int cfi_new(const char *proc_root, struct cfi **out)
{
	struct cfi *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->self_fd_dir = -1;
	struct elfjail_opts jo = {.timeout_ms = CFI_TIMEOUT_MS};
	if (elfjail_open(&jo, &c->jail, NULL) < 0) {
		free(c);
		return -ENOMEM;
	}
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", proc_root ? proc_root : "/proc");
	c->fake_proc = proc_root != NULL;
	*out = c;
	return 0;
}

static void cfi_file_free(struct cfi_file *f)
{
	if (!f)
		return;
	cfitable_free(f->tab);
	free(f);
}

void cfi_free(struct cfi *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfiles; i++)
		cfi_file_free(c->files[i]);
	elfjail_close(c->jail);
	if (c->self_fd_dir >= 0)
		close(c->self_fd_dir);
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
	if (p->rows)
		memset(p->rows, 0, CFI_ROW_CACHE * sizeof(*p->rows));
	return 0;
}

int cfi_proc_open(struct cfi *c, pid_t pid, struct cfi_proc **out, struct fs_error *err)
{
	cleanup_cfi_proc struct cfi_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return fs_error_set(err, ENOMEM, "allocating the CFI maps of pid %d", (int)pid);
	p->c = c;
	p->pid = pid;
	int r = cfi_proc_read_maps(p);
	if (r < 0)
		return fs_error_set(err, -r, "reading the maps of pid %d", (int)pid);
	*out = steal_pointer(&p);
	return 0;
}

void cfi_proc_free(struct cfi_proc *p)
{
	if (!p)
		return;
	procmaps_release(&p->pm);
	free(p->rows);
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

/* The CFI table of fd, walked in the ELF sandbox and validated here. NULL
 * when the file has none or the child failed or lied. */
static struct cfitable *cfi_file_table(struct cfi *c, int fd)
{
	cleanup_free char *buf = NULL;
	struct cfitable *t = NULL;
	size_t len = 0;
	if (c->kills >= CFI_MAX_KILLS)
		return NULL; /* a child that keeps missing deadlines gets no more work */
	int r = elfjail_cfi(c->jail, fd, &buf, &len, NULL);
	if (r == -ETIMEDOUT)
		c->kills++;
	if (r == 0 && len > CFI_MAX_BYTES - c->bytes)
		return NULL; /* the memory bound of every table together */
	if (r == 0 && cfitable_decode(buf, len, &t, NULL) == -EBADMSG)
		elfjail_distrust(c->jail); /* it lied once: do not trust it again */
	if (t && cfitable_rows(t) == 0) {
		cfitable_free(t);
		t = NULL;
	}
	if (t)
		c->bytes += len;
	return t;
}

static struct cfi_file *cfi_file_of(struct cfi_proc *p, struct procmaps_map *m)
{
	struct cfi *c = p->c;
	if (m->user)
		return m->user == CFI_TRIED ? NULL : (struct cfi_file *)m->user;
	m->user = CFI_TRIED;
	char path[320];
	procmaps_map_file(c->proc_root, p->pid, m, path, sizeof(path));
	/* O_PATH opens nothing; the checked inode is reopened by fd. */
	cleanup_close int pfd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;
	/* Nothing a container's FUSE daemon answers (docs/security.md). */
	if (pfd >= 0 && localfs_check_fd(pfd, c->fake_proc ? 0 : p->pid, path, NULL) < 0) {
		c->st.stall_refused++;
		return NULL;
	}
	if (pfd < 0 || fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > CFI_MAX_FILE_SIZE)
		return NULL;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfi_file *f = c->files[i];
		if (procmaps_file_id_same(&f->id, &st)) {
			m->user = (uintptr_t)f;
			return f;
		}
	}
	if (c->nfiles >= CFI_MAX_FILES)
		return NULL;
	if (c->self_fd_dir < 0)
		c->self_fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int fd = c->self_fd_dir < 0 ? -1 : fileio_reopen(pfd, c->self_fd_dir, NULL);
	if (fd < 0)
		return NULL;
	struct cfi_file *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	procmaps_file_id_set(&f->id, &st);
	f->tab = cfi_file_table(c, fd);
	if (!f->tab)
		c->st.file_errors++;
	else
		f->fp_permille = cfitable_fp_permille(f->tab);
	c->files[c->nfiles++] = f;
	m->user = (uintptr_t)f;
	return f;
}

int cfi_proc_is_exec(struct cfi_proc *p, uint64_t pc)
{
	if (procmaps_find(&p->pm, pc))
		return 1;
	return timeutil_now_ms() - p->loaded_ms >= CFI_REFRESH_MS && cfi_proc_read_maps(p) == 0 &&
	       procmaps_find(&p->pm, pc);
}

/* 1 when m is a file's text whose CFI says it has no frame pointers (its
 * label into which). Maps are sorted by address, so the executable (PIE at
 * 0x55..., or non-PIE low) comes before the libraries at 0x7f.... */
static int cfi_map_lacks_fp(struct cfi_proc *p, struct procmaps_map *m, char *which, size_t len)
{
	if (cfi_find_map(p, m->start) != m || m->type != PROCMAPS_FILE)
		return 0;
	struct cfi_file *f = cfi_file_of(p, m);
	if (!f || !f->tab || f->fp_permille >= CFI_FP_PERMILLE)
		return 0;
	if (which)
		snprintf(which, len, "%s", m->label ? p->pm.labels + m->label : "?");
	return 1;
}

int cfi_proc_fp_missing(struct cfi_proc *p, char *which, size_t len)
{
	int missing = 0;
	/* Every file, not only up to the first without frame pointers: the
	 * walk will need their tables, better loaded now than in a sample. */
	for (size_t i = 0; i < p->pm.n; i++)
		if (cfi_map_lacks_fp(p, &p->pm.v[i], missing ? NULL : which, len))
			missing = 1;
	return missing;
}

uint64_t cfi_proc_preload(struct cfi_proc *p, const char *base)
{
	size_t blen = strlen(base);
	for (size_t i = 0; i < p->pm.n; i++) {
		struct procmaps_map *m = &p->pm.v[i];
		const char *path = m->path ? p->pm.labels + m->path : "";
		size_t len = strlen(path);
		if (len <= blen || path[len - blen - 1] != '/' || strcmp(path + len - blen, base) ||
		    cfi_find_map(p, m->start) != m)
			continue;
		(void)cfi_file_of(p, m);
		return m->start;
	}
	return 0;
}

int cfi_proc_step(struct cfi_proc *p, struct unwind_regs *r, const struct unwind_stack *st,
		  int leaf)
{
	struct cfi *c = p->c;
	uint64_t pc = leaf ? r->ip : r->ip - 1, vaddr;
	if (!p->rows)
		p->rows = calloc(CFI_ROW_CACHE, sizeof(*p->rows));
	struct cfi_row_slot *s = p->rows ? &p->rows[(pc ^ (pc >> 12)) % CFI_ROW_CACHE] : NULL;
	const struct cfiflat_rule *u = s && pc && s->pc == pc ? s->rule : NULL;
	if (!u) {
		struct procmaps_map *m = cfi_lookup(p, pc); /* may read the maps again */
		struct cfi_file *f = m ? cfi_file_of(p, m) : NULL;
		if (!f || !f->tab || cfitable_vaddr(f->tab, pc - m->start + m->pgoff, &vaddr) < 0 ||
		    !(u = cfitable_lookup(f->tab, vaddr))) {
			c->st.no_cfi++;
			return 0;
		}
		if (s) { /* only what was found: a pc without CFI may get it (dlopen) */
			s->pc = pc;
			s->rule = u;
		}
	}
	int ret = cfitable_step(u, r, st);
	if (ret == 1 || ret == 2)
		c->st.steps++;
	else
		c->st.failed++;
	return ret;
}
