/* export_cli.c - see export_cli.h. */
#include "export_cli.h"

#include <errno.h>
#include <string.h>

#include "outfile.h"
#include "pprof.h"
#include "speedscope.h"

int export_cli_write_pprof(const struct export *x, const char *path, struct fs_error *err)
{
	struct outfile d;
	int r = outfile_open(&d, path, err);
	if (r < 0)
		return r;
	r = pprof_write(x, d.f, err);
	if (r < 0)
		fs_error_wrap(err, "%s", path);
	return outfile_finish(&d, r, err);
}

int export_cli_write_speedscope(const struct export *x, const char *path, struct fs_error *err)
{
	struct outfile d;
	int r = outfile_open(&d, path, err);
	if (r < 0)
		return r;
	r = speedscope_write(x, d.f, err);
	if (r < 0)
		fs_error_wrap(err, "%s", path);
	return outfile_finish(&d, r, err);
}

int export_cli_on_stack(void *ctx, const struct profile_origin *o, const char *stack, size_t len,
			uint64_t count)
{
	return export_add_thread(ctx, stack, len, count, o->pid, o->tid, o->thread);
}

int export_cli_on_module(void *ctx, const char *frame, size_t len, const char *module,
			 const char *build_id)
{
	return export_frame_module(ctx, frame, len, module, build_id);
}

int export_cli_container_labels(struct export *x, const struct registry_entry *e)
{
	/* the names the engine gave, where it gave them (empty values are not
	 * stored): a pod's container is named in the pod, others by the engine */
	const char *name = e->name[0] ? e->name : e->container;
	if (export_set_label(x, "container_id", e->id) < 0 ||
	    export_set_label(x, "container_name", name) < 0 ||
	    export_set_label(x, "pod", e->pod) < 0 ||
	    export_set_label(x, "namespace", e->pod_namespace) < 0 ||
	    export_set_label(x, "engine", e->engine) < 0)
		return -ENOMEM;
	return 0;
}
