/* state.c - the OCI state JSON the runtime passes on stdin. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "hook.h"
#include "logfile.h"
#include "json.h"

int hook_stage_parse(const char *s, enum hook_stage *stage)
{
	if (!strcmp(s, "createRuntime") || !strcmp(s, "prestart") || !strcmp(s, "createContainer"))
		*stage = HOOK_STAGE_CREATE;
	else if (!strcmp(s, "poststart"))
		*stage = HOOK_STAGE_POSTSTART;
	else if (!strcmp(s, "poststop"))
		*stage = HOOK_STAGE_POSTSTOP;
	else
		return -EINVAL;
	return 0;
}

static int state_annotation(yajl_val ann, const char *key, char *dst, size_t len,
			    struct fs_error *err)
{
	dst[0] = '\0';
	if (!ann)
		return 0;
	const char *v = json_get_string(ann, key);
	if (!v)
		return 0;
	if (strlen(v) >= len)
		return fs_error_set(err, EINVAL, "annotation %s longer than %zu bytes", key,
				    len - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

int hook_state_parse(const char *buf, size_t len, struct hook_state *st, struct fs_error *err)
{
	cleanup_json yajl_val root = NULL;
	memset(st, 0, sizeof(*st));
	int r = json_parse(buf, len, 16, &root, err);
	if (r < 0)
		return fs_error_wrap(err, "state");
	if (!YAJL_IS_OBJECT(root))
		return fs_error_set(err, EINVAL, "state: not a JSON object");

	const char *id = json_get_string(root, "id");
	if (!id)
		return fs_error_set(err, EINVAL, "state: no \"id\"");
	if (registry_validate_id(id, err) < 0) {
		char esc[96];
		logfile_escape(id, esc, sizeof(esc), 0);
		return fs_error_wrap(err, "state: id \"%s\"", esc);
	}
	memcpy(st->id, id, strlen(id) + 1);

	const char *status = json_get_string(root, "status");
	snprintf(st->status, sizeof(st->status), "%s", status ? status : "");

	long long pid = 0;
	r = json_get_int(root, "pid", &pid);
	if (r == -ERANGE)
		return fs_error_set(err, EINVAL, "state: \"pid\" is not an integer");
	/* Linux pids are below 2^22 (PID_MAX_LIMIT). */
	if (r == 0 && (pid < 0 || pid > (1 << 22)))
		return fs_error_set(err, EINVAL, "state: \"pid\" %lld out of range", pid);
	st->pid = (pid_t)pid;

	const char *bundle = json_get_string(root, "bundle");
	if (bundle) {
		if (bundle[0] != '/' || strlen(bundle) >= sizeof(st->bundle))
			return fs_error_set(err, EINVAL,
					    "state: \"bundle\" must be an absolute path");
		memcpy(st->bundle, bundle, strlen(bundle) + 1);
	}

	yajl_val ann = json_get_object(root, "annotations");
	const char *en = ann ? json_get_string(ann, ANNOTATION_ENABLE) : NULL;
	st->enable = en && !strcmp(en, "true");
	if ((r = state_annotation(ann, ANNOTATION_PROFILE, st->profile, sizeof(st->profile),
				  err)) ||
	    (r = state_annotation(ann, ANNOTATION_DELAY, st->delay, sizeof(st->delay), err)) ||
	    (r = state_annotation(ann, ANNOTATION_FREQUENCY, st->frequency, sizeof(st->frequency),
				  err)))
		return fs_error_wrap(err, "state");
	/* Not a reason to refuse the container: an event that is not one of
	 * ours falls back to cpu (trigger_plan), cut values included. */
	const char *ev = ann ? json_get_string(ann, ANNOTATION_EVENT) : NULL;
	snprintf(st->event, sizeof(st->event), "%s", ev ? ev : "");
	hook_names_from_annotations(ann, st);
	return 0;
}
