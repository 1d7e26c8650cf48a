/* logfile.c - see logfile.h */
#include "logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* secs as YYYY-MM-DDTHH:MM:SS (UTC). Not gmtime_r/strftime: glibc's
 * initialise the time zone on first use, reading /etc/localtime, a path
 * lookup the hook would make inside a container's mount namespace, for a
 * stamp that needs no time zone. Civil date from days since the epoch
 * (the proleptic Gregorian calendar, eras of 400 years). */
void logfile_utc(time_t secs, char *out, size_t len)
{
	long long days = secs / 86400, rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	long long z = days + 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	long long doe = z - era * 146097;
	long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long long mp = (5 * doy + 2) / 153;
	long long d = doy - (153 * mp + 2) / 5 + 1;
	long long m = mp < 10 ? mp + 3 : mp - 9;
	long long y = yoe + era * 400 + (m <= 2);
	snprintf(out, len, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", y, m, d, rem / 3600,
		 rem / 60 % 60, rem % 60);
}

size_t logfile_format(char *line, size_t len, const char *prog, const char *stage, const char *id,
		      const char *msg)
{
	char esc[4096], eid[1024], ts[32];
	struct timespec now;
	if (!len)
		return 0;
	logfile_escape(msg, esc, sizeof(esc), 0);
	logfile_escape(id && *id ? id : "-", eid, sizeof(eid), 0);
	clock_gettime(CLOCK_REALTIME, &now);
	logfile_utc(now.tv_sec, ts, sizeof(ts));
	int n = snprintf(line, len, "%s.%03ldZ %s[%d] %s %s: %s\n", ts, now.tv_nsec / 1000000, prog,
			 (int)getpid(), stage ? stage : "", eid, esc);
	if (n < 0) {
		line[0] = '\0';
		return 0;
	}
	return (size_t)n < len ? (size_t)n : len - 1;
}

void logfile_write(int fd, const char *line, size_t n)
{
	if (fd >= 0 && fileio_write_all(fd, line, n) < 0) {
		/* the log is best effort */
	}
}
