/* export_cli.c - see export_cli.h. */
#include "export_cli.h"

#include <errno.h>
#include <string.h>

#include "outfile.h"
#include "pprof.h"
#include "speedscope.h"

int export_cli_from_fold(const struct fold *f, struct export *x, struct fs_error *err)
{
	int r = fold_foreach(f, export_add_folded, x);
	if (r < 0)
		return fs_error_set(err, -r, "converting the folded stacks");
	return 0;
}

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

int export_cli_on_stack(void *ctx, pid_t pid, const char *stack, size_t len, uint64_t count)
{
	return export_add(ctx, stack, len, count, pid);
}

int export_cli_container_labels(struct export *x, const struct registry_entry *e)
{
	/* container_name, pod and namespace join here when the registry
	 * records the names engines give (labels with empty values are not
	 * stored) */
	return export_set_label(x, "container_id", e->id);
}
