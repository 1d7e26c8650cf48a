/* log.c - where the hook's log goes (lib/log.h formats it): the log file
 * shared with the runtime wrapper (lib/logfile.h: rotation, permissions);
 * warnings and errors also to stderr, which runtimes show when a hook
 * fails. */
#include "hook.h"
#include "log.h"
#include "logfile.h"

void hook_log_start(void)
{
	log_setup("flamehook", -1, FS_LOG_WARN);
}

void hook_log_open(const struct fs_config *cfg)
{
	log_set_fd(logfile_open(cfg->log_file));
	log_set_level(cfg->log_level);
}
