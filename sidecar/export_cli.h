/* export_cli.h - what `run` and `convert` share to write pprof and
 * speedscope files (export/): outputs written to a temporary name and
 * renamed into place (outfile.h), folded tables into an export. */
#ifndef FS_EXPORT_CLI_H
#define FS_EXPORT_CLI_H

#include <sys/types.h>

#include "error.h"
#include "export.h"
#include "fold.h"
#include "registry.h"

/* Add every stack of f (pid unknown) to x. 0 or -errno. */
int export_cli_from_fold(const struct fold *f, struct export *x, struct fs_error *err);

/* Write x as pprof / speedscope to path ("-" = standard output). 0 or
 * -errno; a failed write leaves no file. */
int export_cli_write_pprof(const struct export *x, const char *path, struct fs_error *err);
int export_cli_write_speedscope(const struct export *x, const char *path, struct fs_error *err);

/* A profile_stack_fn (profile.h) adding each stack to the export ctx. */
int export_cli_on_stack(void *ctx, pid_t pid, const char *stack, size_t len, uint64_t count);

/* The labels every sample of a container's profile carries: container_id
 * (and the names the registry knows). 0 or -ENOMEM. */
int export_cli_container_labels(struct export *x, const struct registry_entry *e);

#endif
