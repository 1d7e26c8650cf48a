/* profiles.c - triggered profiles: in progress (markers the hook's monitor
 * keeps in <run_dir>/profiling/<id>.json) and finished (<profile_dir>/<id>/
 * <UTC timestamp>.svg). Used by `list`. */
#include "profiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "marker.h"
#include "registry.h"

static int profiles_push(struct profile_info **arr, size_t *n, size_t *cap,
			 const struct profile_info *p)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct profile_info *na = realloc(*arr, nc * sizeof(**arr));
		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = nc;
	}
	(*arr)[(*n)++] = *p;
	return 0;
}

/* The .folded and .pb.gz names beside p->path (an SVG); done profiles
 * keep only the ones that exist (older versions wrote no pprof). */
static void profiles_siblings(struct profile_info *p)
{
	size_t l = strlen(p->path);
	if (l > 4 && !strcmp(p->path + l - 4, ".svg"))
		l -= 4;
	snprintf(p->folded, sizeof(p->folded), "%.*s.folded", (int)l, p->path);
	snprintf(p->pprof, sizeof(p->pprof), "%.*s.pb.gz", (int)l, p->path);
	if (p->running)
		return;
	struct stat sb;
	if (lstat(p->folded, &sb) < 0 || !S_ISREG(sb.st_mode))
		p->folded[0] = '\0';
	if (lstat(p->pprof, &sb) < 0 || !S_ISREG(sb.st_mode))
		p->pprof[0] = '\0';
}

static void profiles_running(const char *dir, struct profile_info **arr, size_t *n, size_t *cap)
{
	cleanup_closedir DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct marker m;
		if (de->d_name[0] == '.' || marker_read_at(dirfd(d), de->d_name, &m) < 0 ||
		    !marker_alive(&m))
			continue;
		struct profile_info p;
		memset(&p, 0, sizeof(p));
		snprintf(p.id, sizeof(p.id), "%s", m.id);
		snprintf(p.path, sizeof(p.path), "%s", m.output);
		p.running = 1;
		p.time = m.started;
		p.seconds = m.duration + m.delay;
		if (p.path[0])
			profiles_siblings(&p);
		profiles_push(arr, n, cap, &p);
	}
}

static void profiles_done(const char *dir, struct profile_info **arr, size_t *n, size_t *cap)
{
	cleanup_closedir DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || registry_validate_id(de->d_name, NULL) < 0)
			continue;
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		cleanup_closedir DIR *s = opendir(sub);
		if (!s)
			continue;
		struct dirent *fe;
		while ((fe = readdir(s))) {
			size_t l = strlen(fe->d_name);
			struct stat sb;
			if (l < 5 || strcmp(fe->d_name + l - 4, ".svg") ||
			    fstatat(dirfd(s), fe->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(sb.st_mode))
				continue;
			struct profile_info p;
			memset(&p, 0, sizeof(p));
			snprintf(p.id, sizeof(p.id), "%s", de->d_name);
			snprintf(p.path, sizeof(p.path), "%s/%s", sub, fe->d_name);
			p.time = sb.st_mtime;
			p.bytes = (unsigned long long)sb.st_size;
			profiles_siblings(&p);
			profiles_push(arr, n, cap, &p);
		}
	}
}

static int profiles_cmp(const void *a, const void *b)
{
	const struct profile_info *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	if (c)
		return c;
	return x->time < y->time ? -1 : x->time > y->time;
}

int profiles_list(const struct fs_config *cfg, struct profile_info **out, size_t *n)
{
	char dir[PATH_MAX];
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	snprintf(dir, sizeof(dir), "%s/" MARKER_DIR, cfg->run_dir);
	profiles_running(dir, out, n, &cap);
	size_t running = *n;
	profiles_done(cfg->profile_dir, out, n, &cap);
	/* A running profile's SVG is not finished yet: drop it from "done". */
	for (size_t i = running; i < *n;) {
		int dup = 0;
		for (size_t j = 0; j < running; j++)
			if (!strcmp((*out)[j].path, (*out)[i].path))
				dup = 1;
		if (dup)
			(*out)[i] = (*out)[--*n];
		else
			i++;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), profiles_cmp);
	return 0;
}
