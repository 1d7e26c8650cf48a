/* proc.c - see proc.h */
#include "proc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "budget.h"
#include "cleanup.h"
#include "fileio.h"

int proc_read_file(const char *path, size_t max, char **out, size_t *len, struct fs_error *err)
{
	return proc_read_file_flags(path, max, 0, out, len, err);
}

int proc_read_file_flags(const char *path, size_t max, unsigned flags, char **out, size_t *len,
			 struct fs_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s", path);
	size_t n;
	int r = fileio_read_fd_flags(fd, max, flags, out, &n, err);
	if (r < 0)
		return fs_error_wrap(err, "%s", path);
	if (len)
		*len = n;
	return 0;
}

int proc_stat_parse_start(const char *text, uint64_t *out)
{
	/* comm may contain spaces and ')': fields start after the last ')'.
	 * Field 3 (state) is the first after it; start time is field 22. */
	const char *p = strrchr(text, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (int field = 3; field <= 22; field++) {
		if (*p != ' ')
			return -EINVAL;
		p++;
		if (field < 22 && !(p = strchr(p, ' ')))
			return -EINVAL;
	}
	if (*p < '0' || *p > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || end == p)
		return -EINVAL;
	*out = v;
	return 0;
}

int proc_start_time(pid_t pid, uint64_t *out, struct fs_error *err)
{
	char path[64];
	cleanup_free char *buf = NULL;
	if (pid <= 0)
		return fs_error_set(err, EINVAL, "invalid pid %d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int r = proc_read_file(path, 4096, &buf, NULL, err);
	if (r < 0)
		return r == -ENOENT ? fs_error_set(err, ESRCH, "process %d", (int)pid) : r;
	if (proc_stat_parse_start(buf, out) < 0)
		return fs_error_set(err, EINVAL, "parsing start time in %s", path);
	return 0;
}

static uint64_t parse_hex(const char *s)
{
	return strtoull(s, NULL, 16);
}

static void parse_ids(const char *s, unsigned *ids)
{
	char *end;
	for (int i = 0; i < 4; i++) {
		ids[i] = (unsigned)strtoul(s, &end, 10);
		if (end == s)
			break;
		s = end;
	}
}

void proc_status_parse(char *buf, struct proc_status *st)
{
	memset(st, 0, sizeof(*st));
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		char *v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		if (!strcmp(line, "Name"))
			snprintf(st->name, sizeof(st->name), "%s", v);
		else if (!strcmp(line, "Tgid"))
			st->tgid = atoi(v);
		else if (!strcmp(line, "PPid"))
			st->ppid = atoi(v);
		else if (!strcmp(line, "Uid"))
			parse_ids(v, (unsigned *)st->uid);
		else if (!strcmp(line, "Gid"))
			parse_ids(v, (unsigned *)st->gid);
		else if (!strcmp(line, "NSpid")) {
			char *end;
			st->nspid_count = 0;
			while (st->nspid_count < PROC_NSPID_MAX) {
				long n = strtol(v, &end, 10);
				if (end == v)
					break;
				st->nspid[st->nspid_count++] = (pid_t)n;
				v = end;
			}
		} else if (!strcmp(line, "SigBlk"))
			st->sigblk = parse_hex(v);
		else if (!strcmp(line, "SigIgn"))
			st->sigign = parse_hex(v);
		else if (!strcmp(line, "SigCgt"))
			st->sigcgt = parse_hex(v);
		else if (!strcmp(line, "CapEff"))
			st->cap_eff = parse_hex(v);
		else if (!strcmp(line, "NoNewPrivs"))
			st->no_new_privs = atoi(v);
		else if (!strcmp(line, "Seccomp"))
			st->seccomp = atoi(v);
	}
}

int proc_status_read(pid_t pid, struct proc_status *st, struct fs_error *err)
{
	char path[64];
	cleanup_free char *buf = NULL;
	if (pid < 0)
		return fs_error_set(err, EINVAL, "invalid pid %d", (int)pid);
	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/status");
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int r = proc_read_file(path, 64 * 1024, &buf, NULL, err);
	if (r < 0)
		return r == -ENOENT ? fs_error_set(err, ESRCH, "process %d", (int)pid) : r;
	proc_status_parse(buf, st);
	return 0;
}

int proc_ns_inode(pid_t pid, const char *ns, uint64_t *ino, struct fs_error *err)
{
	char path[64];
	struct stat sb;
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	if (stat(path, &sb) < 0)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "reading %s", path);
	*ino = (uint64_t)sb.st_ino;
	return 0;
}

int proc_pidfd_open_checked(pid_t pid, uint64_t start_time, struct fs_error *err)
{
	if (pid <= 0)
		return fs_error_set(err, EINVAL, "invalid pid %d", (int)pid);
	cleanup_close int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return fs_error_set(err, errno, "pidfd_open(%d)", (int)pid);
	/* The pidfd pins this process: if the start time matches now, the fd
	 * refers to the process we recorded, even if the pid is later reused. */
	if (start_time) {
		uint64_t now;
		if (proc_start_time(pid, &now, err) < 0)
			return -ESRCH;
		if (now != start_time)
			return fs_error_set(err, ESRCH,
					    "process %d was replaced (start time %" PRIu64
					    ", recorded %" PRIu64 ")",
					    (int)pid, now, start_time);
	}
	return steal_fd(&fd);
}

int proc_pidfd_recheck(int pidfd, pid_t pid, uint64_t start_time, struct fs_error *err)
{
	uint64_t now;
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return fs_error_set(err, ESRCH, "process %d exited while it was being read",
				    (int)pid);
	if (proc_start_time(pid, &now, NULL) < 0 || now != start_time)
		return fs_error_set(err, ESRCH,
				    "process %d was replaced while it was being read (start time "
				    "%" PRIu64 ", read %" PRIu64 ")",
				    (int)pid, now, start_time);
	return 0;
}

/* A maps line: addresses, flags, offset, device, inode and a path of at
 * most PATH_MAX (a longer line is read in pieces). */
#define PROC_MAPS_LINE (4096 + 256)

int proc_maps_scan(pid_t pid, const char *const *needles, size_t n, unsigned *found,
		   struct fs_error *err)
{
	char path[64], line[PROC_MAPS_LINE];
	size_t total = 0;
	*found = 0;
	if (n > 32)
		return fs_error_set(err, EINVAL, "proc_maps_scan: %zu needles", n);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	cleanup_fclose FILE *f = fopen(path, "re");
	if (!f)
		return fs_error_set(err, errno == ENOENT ? ESRCH : errno, "opening %s", path);
	while (total < BUDGET_MAPS_FILE_BYTES && fgets(line, sizeof(line), f)) {
		total += strlen(line);
		for (size_t i = 0; i < n; i++)
			if (strstr(line, needles[i]))
				*found |= 1u << i;
	}
	return 0;
}

int proc_alive(pid_t pid, uint64_t start_time)
{
	uint64_t now;
	if (pid <= 0 || proc_start_time(pid, &now, NULL) < 0)
		return 0;
	return now == start_time;
}

int proc_unmap_shared(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	struct {
		unsigned long long start, end;
	} shared[64];
	size_t n = 0;
	int more = 1;
	if (!f)
		return -errno;
	/* Collected first, unmapped after: the file changes as we unmap. */
	while (more && n < sizeof(shared) / sizeof(shared[0])) {
		more = fgets(line, sizeof(line), f) != NULL;
		unsigned long long a, b;
		char perms[8];
		if (more && sscanf(line, "%llx-%llx %7s", &a, &b, perms) == 3 && perms[3] == 's')
			shared[n].start = a, shared[n++].end = b;
		/* a line longer than the buffer: skip its tail */
		while (more && !strchr(line, '\n') && (more = fgets(line, sizeof(line), f) != NULL))
			;
	}
	fclose(f);
	if (more)
		return -E2BIG; /* more shared mappings than we track: refuse */
	for (size_t i = 0; i < n; i++)
		if (munmap((void *)(uintptr_t)shared[i].start, shared[i].end - shared[i].start) < 0)
			return -errno;
	return 0;
}
