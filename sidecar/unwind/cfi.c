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
#include "elfjail.h"
#include "fileio.h"
#include "timeutil.h"

struct cfi_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct cfitable *tab; /* NULL: no CFI, or refused (negative cache) */
};

struct cfi_map {
	uint64_t start, end, pgoff;
	struct cfi_file *file;
	int tried;
};

struct cfi {
	char proc_root[256];
	struct cfi_file *files[CFI_MAX_FILES];
	size_t nfiles;
	struct cfi_stats st;
	struct elfjail *jail; /* parses every file's CFI */
	int self_fd_dir;      /* /proc/self/fd, for reopening by fd */
	unsigned kills;	      /* missed deadlines of the child */
	size_t bytes;	      /* of every table kept, at most CFI_MAX_BYTES */
};

struct cfi_proc {
	struct cfi *c;
	pid_t pid;
	struct cfi_map *maps;
	size_t n;
	uint64_t loaded_ms;
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
	char path[320];
	snprintf(path, sizeof(path), "%s/%d/maps", p->c->proc_root, (int)p->pid);
	p->loaded_ms = timeutil_now_ms();
	cleanup_fclose FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	cleanup_free char *line = NULL;
	size_t cap = 0, total = 0, n = 0, mcap = 0;
	struct cfi_map *maps = NULL;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		total += (size_t)len;
		if (total > CFI_MAPS_MAX || n >= CFI_MAX_MAPS)
			break;
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &pos) < 7 ||
		    !strchr(perms, 'x') || end <= start)
			continue;
		int vdso = pos && !strncmp(line + pos, "[vdso]", 6);
		if (!vdso && (ino == 0 || !pos || line[pos] != '/'))
			continue; /* anonymous: the JIT's, not ours */
		if (n == mcap) {
			size_t nc = mcap ? mcap * 2 : 64;
			struct cfi_map *m = realloc(maps, nc * sizeof(*m));
			if (!m) {
				free(maps);
				return -ENOMEM;
			}
			maps = m;
			mcap = nc;
		}
		/* The vDSO has no map_files entry: it is text without CFI for
		 * us (frame pointers then). */
		maps[n++] =
		    (struct cfi_map){.start = start, .end = end, .pgoff = pgoff, .tried = vdso};
	}
	/* keep the files of mappings that did not change */
	for (size_t i = 0, j = 0; i < n; i++) {
		while (j < p->n && p->maps[j].start < maps[i].start)
			j++;
		if (j < p->n && p->maps[j].start == maps[i].start &&
		    p->maps[j].end == maps[i].end && p->maps[j].pgoff == maps[i].pgoff) {
			maps[i].file = p->maps[j].file;
			maps[i].tried = p->maps[j].tried;
		}
	}
	free(p->maps);
	p->maps = maps;
	p->n = n;
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
	free(p->maps);
	free(p);
}

static struct cfi_map *cfi_find_map(struct cfi_proc *p, uint64_t pc)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < p->maps[mid].start)
			hi = mid;
		else if (pc >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

static struct cfi_map *cfi_lookup(struct cfi_proc *p, uint64_t pc)
{
	struct cfi_map *m = cfi_find_map(p, pc);
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

static struct cfi_file *cfi_file_of(struct cfi_proc *p, struct cfi_map *m)
{
	struct cfi *c = p->c;
	if (m->tried)
		return m->file;
	m->tried = 1;
	char path[320];
	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", c->proc_root, (int)p->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	/* O_PATH opens nothing; the checked inode is reopened by fd. */
	cleanup_close int pfd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;
	if (pfd < 0 || fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > CFI_MAX_FILE_SIZE)
		return NULL;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfi_file *f = c->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->size == st.st_size &&
		    f->mtime.tv_sec == st.st_mtim.tv_sec && f->mtime.tv_nsec == st.st_mtim.tv_nsec)
			return m->file = f;
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
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->tab = cfi_file_table(c, fd);
	if (!f->tab)
		c->st.file_errors++;
	c->files[c->nfiles++] = f;
	return m->file = f;
}

int cfi_proc_step(struct cfi_proc *p, struct unwind_regs *r, const struct unwind_stack *st,
		  int leaf)
{
	struct cfi *c = p->c;
	uint64_t pc = leaf ? r->ip : r->ip - 1, vaddr;
	struct cfi_map *m = cfi_lookup(p, pc);
	struct cfi_file *f = m ? cfi_file_of(p, m) : NULL;
	const struct cfiflat_rule *u = NULL;
	if (!f || !f->tab || cfitable_vaddr(f->tab, pc - m->start + m->pgoff, &vaddr) < 0 ||
	    !(u = cfitable_lookup(f->tab, vaddr))) {
		c->st.no_cfi++;
		return 0;
	}
	int ret = cfitable_step(u, r, st);
	if (ret == 1 || ret == 2)
		c->st.steps++;
	else
		c->st.failed++;
	return ret;
}
