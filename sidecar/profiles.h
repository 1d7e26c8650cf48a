/* profiles.h - triggered profiles, running and finished. */
#ifndef FS_PROFILES_H
#define FS_PROFILES_H

#include <limits.h>
#include <stddef.h>

#include "config.h"
#include "registry.h"

struct profile_info {
	char id[REGISTRY_ID_MAX + 1];
	char path[PATH_MAX];   /* the SVG (being) written */
	char folded[PATH_MAX]; /* its folded stacks beside it; "" when there are none */
	char pprof[PATH_MAX];  /* its pprof profile (.pb.gz) beside it; "" when none */
	int running;
	long long time;		  /* started (running) or written (done), unix seconds */
	unsigned seconds;	  /* delay + duration, when running */
	unsigned long long bytes; /* SVG size, when done */
};

/* All profiles, sorted by id then time. *out is malloc'd. A profile is
 * the SVG and the files beside it with the same base name: .folded and
 * .pb.gz (named while running, when they exist once done). */
int profiles_list(const struct fs_config *cfg, struct profile_info **out, size_t *n);

#endif
