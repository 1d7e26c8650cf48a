/* profiles.h - triggered profiles, running and finished. */
#ifndef FS_PROFILES_H
#define FS_PROFILES_H

#include <limits.h>
#include <stddef.h>

#include "config.h"
#include "registry.h"

struct profile_info {
	char id[REGISTRY_ID_MAX + 1];
	char path[PATH_MAX]; /* the SVG (being) written */
	int running;
	long long time;		  /* started (running) or written (done), unix seconds */
	unsigned seconds;	  /* delay + duration, when running */
	unsigned long long bytes; /* SVG size, when done */
};

/* All profiles, sorted by id then time. *out is malloc'd. */
int profiles_list(const struct fs_config *cfg, struct profile_info **out, size_t *n);

#endif
