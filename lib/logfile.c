/* logfile.c - see logfile.h */
#include "logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "textsafe.h"

void logfile_escape(const char *s, char *dst, size_t len, int quote)
{
	textsafe(s, dst, len, TEXTSAFE_ASCII | (quote ? TEXTSAFE_QUOTE : 0));
}

int logfile_open(const char *path)
{
	if (!path || !path[0])
		return -1;
	const int flags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
	/* The common case first: the directory exists (one open, no mkdir
	 * walk: the hook runs on every container start). */
	int fd = open(path, flags, 0600);
	if (fd < 0 && errno == ENOENT) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			fileio_mkdir_p(dir, 0700, 0700);
		}
		fd = open(path, flags, 0600);
	}
	struct stat sb;
	if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size > LOGFILE_ROTATE_BYTES) {
		char old[PATH_MAX + 3];
		snprintf(old, sizeof(old), "%s.1", path);
		close(fd);
		rename(path, old);
		fd = open(path, flags, 0600);
	}
	return fd;
}

void logfile_write(int fd, const char *line, size_t n)
{
	if (fd >= 0 && fileio_write_all(fd, line, n) < 0) {
		/* the log is best effort */
	}
}
