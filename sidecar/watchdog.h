/* watchdog.h - the verbs that read a container's memory (run, top) do
 * their work in a child, watched by a small parent that is what the user
 * waits on.
 *
 * Why: a read of another process's memory (procmem_read) that faults in a
 * page of a file served by the container's FUSE daemon waits for the
 * daemon, and after a fatal signal it still waits, uninterruptibly, for a
 * request already sent: the reading process cannot exit while the daemon
 * lives. procmem_guard refuses such mappings, checked just before each
 * read (PROCMAP_QUERY), but a container that maps the file between the
 * check and the read (microseconds) wins. The parent bounds what that
 * costs: the child publishes each read in progress in a shared page
 * (procmem_publish, two stores per read), and when one has been in
 * progress for WATCHDOG_READ_MS the parent says on stderr which process,
 * address and mapping the read was held on and that the profile of the
 * window is lost, SIGKILLs the child and exits FS_EXIT_FAIL. The killed
 * child may stay in D state until the container's FUSE daemon exits (or
 * its connection is aborted); it holds no lock another flamesidecar
 * command waits on (docs/security.md), and its outputs are written
 * through a temporary file and a rename, so none is left half-written
 * under its name. The files it wrote are listed in a table shared with the
 * parent (lib/tmpreg.h): once the child is killed (or died of a signal),
 * the parent removes its temporary files and the outputs it had already
 * renamed into place, only those still the very files it created. Its stdout and stderr, when they
 * are pipes or sockets, reach them through the parent (a pipe it copies), so that a reader of
 * `run`'s output sees its end when the parent exits, not when the held
 * child does; a terminal or a file is the child's own.
 *
 * Signals: the child keeps the verb's own handling (Ctrl-C ends the
 * window, a second one interrupts). A signal the terminal sends reaches
 * the whole foreground process group, so the parent forwards only those
 * sent to it alone (kill, timeout: SI_USER/SI_QUEUE/SI_TKILL), SIGINT,
 * SIGTERM and SIGHUP. The parent exits with the child's status (a child
 * killed by a signal: the parent raises the same signal). The child dies
 * with the parent (PR_SET_PDEATHSIG). */
#ifndef FS_WATCHDOG_H
#define FS_WATCHDOG_H

#define WATCHDOG_READ_MS 2000 /* one memory read held this long: the child is killed */
#define WATCHDOG_CHILD	 (-1) /* watchdog_start's return in the child */

/* Fork: WATCHDOG_CHILD in the child (go on with the verb; also when the
 * fork failed: then the verb runs unwatched, as before, after a warning);
 * in the parent, once the child is gone, its exit code (the verb's), or
 * FS_EXIT_FAIL after a held read. verb: for messages. */
int watchdog_start(const char *verb);

#endif
