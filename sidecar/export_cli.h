/* export_cli.h - what `run` and `convert` share to write pprof and
 * speedscope files (export/): outputs written to a temporary name and
 * renamed into place (outfile.h), stacks of a profile into an export. */
#ifndef FS_EXPORT_CLI_H
#define FS_EXPORT_CLI_H

#include <sys/types.h>

#include "error.h"
#include "export.h"
#include "profile.h"
#include "registry.h"

/* Write x as pprof / speedscope to path ("-" = standard output). 0 or
 * -errno; a failed write leaves no file. */
int export_cli_write_pprof(const struct export *x, const char *path, struct fs_error *err);
int export_cli_write_speedscope(const struct export *x, const char *path, struct fs_error *err);

/* A profile_stack_fn (profile.h) adding each stack to the export ctx,
 * with its pid, tid and thread name. */
int export_cli_on_stack(void *ctx, const struct profile_origin *o, const char *stack, size_t len,
			uint64_t count);

/* A profile_module_fn (profile.h): the export ctx's frame gets its module. */
int export_cli_on_module(void *ctx, const char *frame, size_t len, const char *module,
			 const char *build_id);

/* The labels every sample of a container's profile carries: container_id,
 * and where the engine named it container_name, pod, namespace, engine.
 * 0 or -ENOMEM. */
int export_cli_container_labels(struct export *x, const struct registry_entry *e);

#endif
