/* watchdog.c - see watchdog.h */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "procmem.h"
#include "timeutil.h"
#include "tmpreg.h"

#define WATCHDOG_TICK_MS 100
#define WATCHDOG_MAPS_MS 500 /* the held read's mapping is looked up for this long */

static volatile pid_t wd_child;

/* Forward a signal sent to us alone; the terminal's reached the child too. */
static void wd_on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (wd_child > 0 && si->si_code != SI_KERNEL && si->si_pid != wd_child)
		kill(wd_child, sig);
}

/* The line of /proc/<pid>/maps covering addr, into line (a helper child
 * that may be held, like the read, on the process's locks: given up on
 * after WATCHDOG_MAPS_MS). */
static void wd_mapping(pid_t pid, uint64_t addr, char *line, size_t len)
{
	int p[2];
	snprintf(line, len, "(not known: its memory map did not answer)");
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid_t h = fork();
	if (h == 0) {
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		FILE *f = fopen(path, "re");
		while (f && fgets(buf, sizeof(buf), f)) {
			unsigned long long s, e;
			if (sscanf(buf, "%llx-%llx", &s, &e) == 2 && s <= addr && addr < e) {
				buf[strcspn(buf, "\n")] = '\0';
				if (write(p[1], buf, strlen(buf)) < 0)
					_exit(1);
				break;
			}
		}
		_exit(0);
	}
	close(p[1]);
	if (h > 0) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		if (poll(&pf, 1, WATCHDOG_MAPS_MS) == 1) {
			ssize_t n = read(p[0], line, len - 1);
			if (n > 0) {
				line[n] = '\0';
				/* the container chose the path: no control bytes */
				for (ssize_t i = 0; i < n; i++)
					if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
						line[i] = '?';
			} else if (n == 0) {
				snprintf(line, len, "(no mapping: gone)");
			}
		}
		kill(h, SIGKILL);
		waitpid(h, NULL, 0);
	}
	close(p[0]);
}

/* What the child left in its output directories, which it can no longer
 * remove: its temporary files and the outputs it had already renamed into
 * place, a partial set (lib/tmpreg.h). Said on stderr. */
static void wd_clean(const char *verb, const struct tmpreg *t)
{
	if (!t)
		return;
	int kept = 0;
	int removed = tmpreg_clean(t, &kept);
	if (removed)
		fprintf(stderr,
			"flamesidecar %s: removed %d file%s it had written (temporary files "
			"and outputs of the lost window).\n",
			verb, removed, removed == 1 ? "" : "s");
	if (kept)
		fprintf(stderr,
			"flamesidecar %s: warning: %d file%s it had written not removed (replaced "
			"or moved since, or not listed): look for .*.tmp files beside its "
			"outputs.\n",
			verb, kept, kept == 1 ? "" : "s");
}

/* The held read: say so, kill the child, remove what it left, and its
 * exit code. */
static int wd_held(const char *verb, pid_t child, int pidfd, const struct procmem_busy *b,
		   const struct tmpreg *t, uint64_t held_ms, const struct termios *tio)
{
	char map[600];
	pid_t pid = b->pid;
	uint64_t addr = b->addr, len = b->len;
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (tio)
		tcsetattr(STDIN_FILENO, TCSANOW, tio);
	wd_mapping(pid, addr, map, sizeof(map));
	fprintf(stderr,
		"flamesidecar %s: a read of process %d's memory at 0x%" PRIx64 " (%" PRIu64
		" bytes) has been held for %" PRIu64 " ms by the file system behind it, "
		"which the container controls (FUSE or network): mapping %s.\n"
		"flamesidecar %s: the profile of this window is lost. The reading process %d "
		"was killed; it may stay in D state until the container's file system daemon "
		"exits (or its connection is aborted in /sys/fs/fuse/connections); it holds no "
		"lock other flamesidecar commands wait on.\n",
		verb, (int)pid, addr, len, held_ms, map, verb, (int)child);
	/* the killed child runs no more code: what it listed stays as it is */
	wd_clean(verb, t);
	/* a killed child that the kernel does not hold is reaped */
	struct pollfd pf = {.fd = pidfd, .events = POLLIN};
	if (poll(&pf, 1, WATCHDOG_TICK_MS) == 1)
		waitpid(child, NULL, 0);
	return FS_EXIT_FAIL;
}

/* stdout and stderr of the child, when they are pipes or sockets: through
 * a pipe of ours that the parent copies, so that whoever reads them sees
 * their end when the parent exits, even while a killed child is held
 * (it keeps its ends open). A terminal or a file is the child's own. */
struct wd_relay {
	int from[3]; /* index: our fd (1, 2); -1 when not relayed */
};

static void wd_relay_setup(struct wd_relay *r, int pipes[3][2])
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat sb;
		r->from[fd] = -1;
		pipes[fd][0] = pipes[fd][1] = -1;
		if (fstat(fd, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
			if (pipe2(pipes[fd], O_CLOEXEC) < 0)
				pipes[fd][0] = pipes[fd][1] = -1;
	}
}

/* Copy what is there (all of it when wait). 0 when fd's pipe is at its end. */
static int wd_relay_copy(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 && errno == EINTR ? 1 : 0;
	if (fileio_write_all(to, buf, (size_t)n) < 0)
		return 0;
	return 1;
}

/* What the child wrote so far, without waiting for more (a helper it
 * left behind may hold the pipe open). */
static void wd_relay_drain(struct wd_relay *r)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct pollfd pf = {.fd = r->from[fd], .events = POLLIN};
		while (r->from[fd] >= 0 && poll(&pf, 1, 0) == 1 && wd_relay_copy(r->from[fd], fd))
			;
	}
}

/* In the child: die with the parent, write through the relay's pipes,
 * publish each memory read in b and each file it writes in t. */
static void wd_child_setup(pid_t parent, int pipes[3][2], struct procmem_busy *b, struct tmpreg *t)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(FS_EXIT_FAIL);
	for (int fd = 1; fd <= 2; fd++)
		if (pipes[fd][1] >= 0) {
			dup2(pipes[fd][1], fd);
			close(pipes[fd][0]);
			close(pipes[fd][1]);
		}
	procmem_publish(b);
	if (t)
		tmpreg_publish(t);
}

/* Relay the child's output until it ends or one read is held for
 * WATCHDOG_READ_MS: 1 when its pidfd says it ended (not yet reaped), 2
 * when waitpid reaped it into *st (no pidfd), 0 when a read is held
 * (*held_ms: for how long). */
static int wd_watch(pid_t child, int pidfd, struct procmem_busy *b, struct wd_relay *relay, int *st,
		    uint64_t *held_ms)
{
	for (;;) {
		/* pidfd < 0 (a kernel before 5.3): poll ignores it, waitpid tells */
		struct pollfd pf[3] = {{.fd = pidfd, .events = POLLIN},
				       {.fd = relay->from[1], .events = POLLIN},
				       {.fd = relay->from[2], .events = POLLIN}};
		int r = poll(pf, 3, WATCHDOG_TICK_MS);
		for (int fd = 1; r > 0 && fd <= 2; fd++)
			if (pf[fd].revents && !wd_relay_copy(relay->from[fd], fd)) {
				close(relay->from[fd]);
				relay->from[fd] = -1;
			}
		if (pidfd >= 0 && r > 0 && (pf[0].revents & POLLIN))
			return 1;
		if (pidfd < 0 && waitpid(child, st, WNOHANG) == child)
			return 2;
		uint64_t since = __atomic_load_n(&b->since_ms, __ATOMIC_ACQUIRE);
		uint64_t now = timeutil_now_ms();
		if (since && now > since && now - since >= WATCHDOG_READ_MS && pidfd >= 0) {
			*held_ms = now - since;
			return 0;
		}
	}
}

int watchdog_start(const char *verb)
{
	struct procmem_busy *b =
	    mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		fprintf(stderr, "flamesidecar %s: warning: no watchdog (mmap: %s)\n", verb,
			strerror(errno));
		return WATCHDOG_CHILD;
	}
	memset(b, 0, sizeof(*b));
	/* without it, a killed child's files stay (a warning says so below) */
	struct tmpreg *t =
	    mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		fprintf(stderr,
			"flamesidecar %s: warning: the files of a killed run would not be "
			"removed (mmap: %s)\n",
			verb, strerror(errno));
		t = NULL;
	}
	struct termios tio;
	int have_tio = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tio) == 0;
	pid_t parent = getpid();
	struct wd_relay relay;
	int pipes[3][2];
	wd_relay_setup(&relay, pipes);
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "flamesidecar %s: warning: no watchdog (fork: %s)\n", verb,
			strerror(errno));
		munmap(b, sizeof(*b));
		if (t)
			munmap(t, sizeof(*t));
		return WATCHDOG_CHILD;
	}
	if (child == 0) {
		wd_child_setup(parent, pipes, b, t);
		return WATCHDOG_CHILD;
	}
	for (int fd = 1; fd <= 2; fd++)
		if (pipes[fd][1] >= 0) {
			close(pipes[fd][1]);
			relay.from[fd] = pipes[fd][0];
		}
	wd_child = child;
	struct sigaction sa = {.sa_sigaction = wd_on_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	int st = 0;
	uint64_t held_ms = 0;
	int ended = wd_watch(child, pidfd, b, &relay, &st, &held_ms);
	if (!ended) {
		wd_relay_drain(&relay);
		return wd_held(verb, child, pidfd, b, t, held_ms, have_tio ? &tio : NULL);
	}
	if (ended == 1)
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
	wd_relay_drain(&relay);
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		wd_clean(verb, t);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : FS_EXIT_FAIL;
}
