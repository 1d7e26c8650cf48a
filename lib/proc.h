/* proc.h - facts about a process read from /proc, and pidfds that are
 * checked against a recorded start time so a recycled pid is never trusted. */
#ifndef FS_PROC_H
#define FS_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define PROC_NSPID_MAX 8

struct proc_status {
	char name[64]; /* Name: (escaped by the kernel) */
	pid_t tgid, ppid;
	uid_t uid[4]; /* real, effective, saved, fs */
	gid_t gid[4];
	pid_t nspid[PROC_NSPID_MAX]; /* NSpid: outermost first */
	int nspid_count;
	uint64_t sigblk, sigign, sigcgt; /* SigBlk/SigIgn/SigCgt masks */
	uint64_t cap_eff;
	int no_new_privs, seccomp;
};

/* Field 22 of /proc/<pid>/stat (clock ticks after boot). 0 or -errno. */
int proc_start_time(pid_t pid, uint64_t *out, struct fs_error *err);

/* Parse /proc/<pid>/status (pid 0 means "self"). 0 or -errno. */
int proc_status_read(pid_t pid, struct proc_status *st, struct fs_error *err);

/* The parsers behind those two, on NUL-terminated text (fuzzed:
 * tests/fuzz/fuzz_procfiles.c). proc_status_parse cuts buf into lines in
 * place; unknown or malformed lines are skipped. proc_stat_parse_start:
 * 0, or -EINVAL unless fields 3..22 follow the last ')', each after one
 * space, and field 22 is a number. */
void proc_status_parse(char *buf, struct proc_status *st);
int proc_stat_parse_start(const char *text, uint64_t *out);

/* The pid as seen in the innermost pid namespace (last NSpid field). */
static inline pid_t proc_status_ns_pid(const struct proc_status *st)
{
	return st->nspid_count ? st->nspid[st->nspid_count - 1] : 0;
}

/* Inode of /proc/<pid>/ns/<ns> (ns: "pid", "mnt", "user", ...). 0 or -errno. */
int proc_ns_inode(pid_t pid, const char *ns, uint64_t *ino, struct fs_error *err);

/* pidfd_open(pid) and then check that pid's start time is still
 * start_time (when start_time != 0). Returns the pidfd or -errno
 * (-ESRCH when the process is gone or the pid was reused). */
int proc_pidfd_open_checked(pid_t pid, uint64_t start_time, struct fs_error *err);

/* After facts were read from /proc/<pid>/... by pid string: 0 when the
 * process behind pidfd is still there and pid still has start_time, so
 * every read was of that process (a pid is not reused while its process
 * lives); -ESRCH with a message otherwise. */
int proc_pidfd_recheck(int pidfd, pid_t pid, uint64_t start_time, struct fs_error *err);

/* Reading a process's memory with such a pidfd: procmem.h. */

/* Which of needles occur in a line of /proc/<pid>/maps (bit i of *found:
 * needles[i]; at most 32; "\n" ends a line): read line by line in constant
 * memory, and no more than BUDGET_MAPS_FILE_BYTES of it (a process with
 * more mappings is judged on those). 0 or -errno (-ESRCH: gone). */
int proc_maps_scan(pid_t pid, const char *const *needles, size_t n, unsigned *found,
		   struct fs_error *err);

/* 1 if pid exists with the given start time, 0 if not. */
int proc_alive(pid_t pid, uint64_t start_time);

/* Read at most max bytes of a /proc file into a NUL-terminated malloc'd
 * buffer (*out, *len). -E2BIG if it is larger. */
int proc_read_file(const char *path, size_t max, char **out, size_t *len, struct fs_error *err);
/* The same with fileio_read_fd_flags's flags (FILEIO_READ_CUT: keep the
 * first max bytes of a longer file). */
int proc_read_file_flags(const char *path, size_t max, unsigned flags, char **out, size_t *len,
			 struct fs_error *err);

/* Unmap every shared mapping this process inherited through fork (the
 * sampler's perf ring buffers, anything else of the sidecar's that is
 * shared), for a child about to handle container input: taken over, it
 * must not read other containers' samples or write into the parent's memory
 * through them. Private pages are its own copies. 0, -E2BIG (more shared
 * mappings than it tracks: refused) or -errno. */
int proc_unmap_shared(void);

#endif
