/* delete.c - unregister a container on the runtime's `delete <id>`.
 *
 * containerd's shims (and so Docker and the CRI plugin) call `delete` for
 * every container they remove, after its process has exited (or with
 * --force). The wrapper removes the registry entry there, in-process,
 * instead of a poststop hook entry that runc would fork/exec on every
 * container's way out. Only an entry whose process is dead, or whose
 * container the real runtime has just deleted (exit status 0), is
 * removed; the id is validated as the hook validates ids, and the registry
 * is opened with lib/registry.c's checks (no symlinks followed). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "registry.h"
#include "wrapper.h"

/* The runtime we wait for, so that a signal to us reaches it as it would
 * have without the wrapper in between. */
static volatile pid_t delete_child;

static void delete_forward(int sig)
{
	if (delete_child > 0)
		kill(delete_child, sig);
}

/* Log to the shared log file only: the runtime's --log is read by engines
 * for the runtime's own errors, and this is not one. */
static void delete_log(const struct wrapper_config *cfg, const struct wrapper_args *a,
		       enum fs_log_level level, const char *msg, const char *detail)
{
	struct wrapper_args quiet = *a;
	quiet.log = NULL;
	runtime_log(cfg, &quiet, level, "%s%s%s", msg, detail ? ": " : "", detail ? detail : "");
}

static void delete_remove(const struct wrapper_config *cfg, const struct wrapper_args *a,
			  const char *regdir, const char *why)
{
	struct fs_error err;
	int r = registry_remove(regdir, a->id, &err);
	if (r == 0)
		delete_log(cfg, a, FS_LOG_INFO, "unregistered", why);
	else if (r != -ENOENT)
		delete_log(cfg, a, FS_LOG_WARN, "removing the registry entry", err.msg);
}

/* Run the real runtime as our child and return its exit status (128 +
 * signal when it was killed, 127 when it could not be executed), or -1
 * with errno set when it could not be forked (the caller then execs it). */
static int delete_run_runtime(const char *rt, char **argv, int *ok)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	struct sigaction sa, old[FS_ARRAY_SIZE(sigs)];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = delete_forward;
	sigemptyset(&sa.sa_mask);
	*ok = 0;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(rt, argv);
		_exit(127);
	}
	delete_child = pid;
	for (size_t i = 0; i < FS_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, &old[i]);
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
	}
	for (size_t i = 0; i < FS_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &old[i], NULL);
	delete_child = 0;
	if (w < 0)
		return 127;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	*ok = WEXITSTATUS(status) == 0;
	return WEXITSTATUS(status);
}

int delete_unregister(const struct wrapper_config *cfg, int cfg_ok, const struct wrapper_args *a,
		      const char *rt, char **argv)
{
	struct fs_error err;
	struct registry_entry e;
	char regdir[PATH_MAX];
	memset(&e, 0, sizeof(e));
	if (!cfg_ok || a->unknown_option || !a->id || registry_validate_id(a->id, &err) < 0)
		return -1;
	config_registry_dir(&cfg->fs, regdir, sizeof(regdir));
	int r = registry_read(regdir, a->id, &e, &err);
	if (r == -ENOENT)
		return -1; /* not ours: the common case, no fork */
	if (r == 0 && strcmp(e.id, a->id))
		r = -EINVAL; /* an entry filed under another id: not trusted */
	/* The entry is there but unusable (a symlink, not a regular file,
	 * not our JSON, too big): handled below. Anything else is about the
	 * registry directory (refused by its checks): leave it alone. */
	if (r < 0 && r != -ELOOP && r != -EINVAL && r != -E2BIG) {
		delete_log(cfg, a, FS_LOG_WARN, "registry entry not checked", err.msg);
		return -1;
	}
	if (r == 0 && !registry_entry_alive(&e)) {
		delete_remove(cfg, a, regdir, "its process is gone");
		return -1;
	}
	/* Alive (`delete --force`), or unreadable: the entry goes only if
	 * the runtime deletes the container. */
	int ok;
	int status = delete_run_runtime(rt, argv, &ok);
	if (status < 0)
		return -1; /* no fork: exec as usual, the entry stays (gc) */
	if (ok) {
		struct registry_entry now;
		/* Still the entry we saw (not a new container's of that id)? */
		if (r < 0 || (registry_read(regdir, a->id, &now, &err) == 0 && now.pid == e.pid &&
			      now.start_time == e.start_time))
			delete_remove(cfg, a, regdir, "the runtime deleted the container");
	}
	return status;
}
