/* cleanup.h - scope-bound cleanup helpers (__attribute__((cleanup))).
 *
 *   cleanup_free char *s = strdup(x);     freed at scope exit
 *   cleanup_close int fd = open(...);     closed at scope exit (if >= 0)
 *   cleanup_fclose FILE *f = fopen(...);  fclosed at scope exit
 *   cleanup_closedir DIR *d = opendir(.); closedir'd at scope exit
 *   cleanup_cap cap_t c = cap_init();     cap_free'd at scope exit (libcap)
 *   cleanup_seccomp scmp_filter_ctx f = seccomp_init(...); released (libseccomp)
 * (yajl_val: cleanup_json in json.h)
 *   return steal_pointer(&s);             hand ownership on (s becomes NULL)
 *   return steal_fd(&fd);                 hand an fd on (fd becomes -1)
 *
 * Every owned project object has its own, declared in its header beside
 * its free function with FS_DEFINE_CLEANUP (objects behind a pointer) or
 * FS_DEFINE_CLEANUP_VALUE (structs held by value, released in place):
 *   cleanup_flame struct flame *f = NULL;        flame_free'd (if not NULL)
 *   cleanup_profile struct profile *p = NULL;    profile_close'd
 *   cleanup_procmaps struct procmaps m = {0};    procmaps_release'd
 * (cleanup_flame, cleanup_profile, cleanup_export, cleanup_fold,
 * cleanup_collapse, cleanup_symbolizer, cleanup_sampler, cleanup_perfmap,
 * cleanup_map_window, cleanup_elfsyms, ... : grep FS_DEFINE_CLEANUP.)
 */
#ifndef FS_CLEANUP_H
#define FS_CLEANUP_H

#include <dirent.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/capability.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>

static inline void fs_freep(void *p)
{
	free(*(void **)p);
}

static inline void fs_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fs_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void fs_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static inline void fs_cap_freep(cap_t *c)
{
	if (*c) {
		int saved = errno;
		cap_free(*c);
		errno = saved;
	}
}

static inline void fs_seccomp_releasep(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

#define cleanup_free	 __attribute__((cleanup(fs_freep)))
#define cleanup_close	 __attribute__((cleanup(fs_closep)))
#define cleanup_fclose	 __attribute__((cleanup(fs_fclosep)))
#define cleanup_closedir __attribute__((cleanup(fs_closedirp)))
#define cleanup_cap	 __attribute__((cleanup(fs_cap_freep)))
#define cleanup_seccomp	 __attribute__((cleanup(fs_seccomp_releasep)))

static inline void *fs_steal_pointer(void *pp)
{
	void **p = (void **)pp;
	void *v = *p;
	*p = NULL;
	return v;
}
#define steal_pointer(pp) fs_steal_pointer(pp)

static inline int steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

/* fn##_cleanup(type **p): fn(*p) when *p is not NULL. */
#define FS_DEFINE_CLEANUP(type, fn)                                                                \
	static inline void fn##_cleanup(type **p)                                                  \
	{                                                                                          \
		if (*p)                                                                            \
			fn(*p);                                                                    \
	}

/* fn##_cleanup(type *p): fn(p), for a struct released in place (fn must
 * accept a zeroed one). */
#define FS_DEFINE_CLEANUP_VALUE(type, fn)                                                          \
	static inline void fn##_cleanup(type *p)                                                   \
	{                                                                                          \
		fn(p);                                                                             \
	}

#define FS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
