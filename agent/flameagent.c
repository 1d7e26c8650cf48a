/* flameagent.c - a JVMTI agent that writes /tmp/perf-<pid>.map, the symbol
 * map perf (and flamesidecar) use to name JIT-compiled Java code.
 *
 *   java -agentpath:/path/libflameagent.so[=OPTIONS] ...   (continuous)
 *   jcmd PID JVMTI.agent_load /path/libflameagent.so [OPTIONS]  (oneshot)
 *
 * One line per compiled method (split into sub-ranges per inlined frame
 * chain by default) and per dynamically generated code blob (interpreter,
 * stubs). Options and format: docs/agent.md.
 *
 * Two sessions live in this library, each with its own JVMTI environment,
 * created on first use and kept for the life of the JVM (never disposed:
 * a compiler thread may still be inside one of our callbacks):
 *   oneshot - on attach: dump everything compiled now, close, disable.
 *   live    - continuous: append every new compilation until `stop`.
 * A callback writes only if its session is active, under the session lock.
 * Only Agent_OnLoad, Agent_OnAttach and Agent_OnUnload are exported. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#include "agentmap.h"
#include "debuginfo.h"
#include "log.h"
#include "mhintrinsic.h"

#define AGENT_EXPORT __attribute__((visibility("default")))
/* Oneshot dumps are batched; flush when the batch passes this. */
#define ONESHOT_FLUSH_AT (256u << 10)
/* Distinct methods remembered while naming one compiled method. */
#define NAME_CACHE_MAX 128

struct session {
	pthread_mutex_t lock;
	const char *what; /* "oneshot" or "continuous", for messages */
	jvmtiEnv *env;	  /* created once, kept */
	bool active;	  /* callbacks write only when set */
	int fd;
	bool batch; /* oneshot: collect lines in buf */
	struct agentmap_options opt;
	struct agentmap_buf buf;
	int write_errno;	  /* first write error, reported at the end */
	unsigned long long bytes; /* written (or batched) in this session */
	unsigned long events;	  /* code events written */
	unsigned long dropped;	  /* timed: events over AGENTMAP_TIMED_MAX */
	char file[64];		  /* the file's name in /tmp */
	uint64_t deadline_ns;	  /* timed with ttl: the session ends itself then */
	double started;		  /* ms, for the verbose report */
};

/* The thread replaying, with GenerateEvents, what existed at the start of
 * a session: its events are stamped 0 ("before the window"). A thread id,
 * not a thread-local flag: TLS would pull __tls_get_addr (GLIBC_2.3) and
 * ld-linux into the agent, which must load under musl too. */
static volatile long replay_tid;

static struct session oneshot_session = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .what = "oneshot",
    .fd = -1,
    .batch = true,
};
static struct session live_session = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .what = "continuous",
    .fd = -1,
};
/* The timed session of a profiling window (option timed): its own, so that a
 * user's continuous perf map session keeps running beside it. */
static struct session timed_session = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .what = "timed",
    .fd = -1,
};
/* Serialises load, attach, stop and unload. */
static pthread_mutex_t control_lock = PTHREAD_MUTEX_INITIALIZER;

/* The agent's lines go to the JVM's stderr, in lib/log.h's format and
 * levels (one write per line, so that lines of several threads do not mix). */
#define agent_log(level, ...) log_msg(level, "agent", NULL, __VA_ARGS__)

static void agent_log_setup(void)
{
	if (log_get_fd() < 0)
		log_setup("flameagent", STDERR_FILENO, LOG_NO_STDERR);
}

/* CLOCK_MONOTONIC ns; by system call (clock_gettime is GLIBC_2.17 in libc). */
static uint64_t now_ns(void)
{
	struct timespec ts = {0};
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool in_replay(void)
{
	long tid = replay_tid;
	return tid && tid == syscall(SYS_gettid);
}

static uint64_t event_time(void)
{
	return in_replay() ? 0 : now_ns();
}

static int session_close(struct session *s);

/* A timed session whose reader never came back to stop it (the sidecar was
 * killed) ends by itself at its deadline: events off, file closed and
 * removed. Returns 1 when s is (now) inactive. */
static int session_expired(struct session *s)
{
	if (!s->deadline_ns || now_ns() < s->deadline_ns)
		return 0;
	/* Not under control_lock: its holder may be this very thread
	 * (GenerateEvents in session_start), and pthread_mutex_trylock is
	 * GLIBC_2.34. One expiring thread at a time; session_close is safe
	 * against a concurrent stop (it checks and clears under s->lock). */
	static int expiring;
	if (__atomic_exchange_n(&expiring, 1, __ATOMIC_ACQUIRE))
		return 0;
	if (s->active)
		session_close(s);
	__atomic_store_n(&expiring, 0, __ATOMIC_RELEASE);
	return 1;
}

/* ---- naming ------------------------------------------------------------- */

struct method_info {
	jmethodID method;
	char *class_sig, *name, *desc, *file; /* JVMTI-allocated */
	jvmtiLineNumberEntry *lines;
	jint nlines;
};

struct name_cache {
	jvmtiEnv *env;
	const struct agentmap_options *opt;
	struct method_info m[NAME_CACHE_MAX];
	int n;
	struct method_info spare; /* used when the cache is full */
	char (*frames)[512];	  /* FRAMES_MAX frame names, malloc'd on first use */
};

/* Inlining depth named per record; deeper chains keep their innermost. */
#define FRAMES_MAX 64

static void jvmti_free(jvmtiEnv *env, void *p)
{
	if (p)
		(*env)->Deallocate(env, (unsigned char *)p);
}

static void method_info_release(jvmtiEnv *env, struct method_info *mi)
{
	jvmti_free(env, mi->class_sig);
	jvmti_free(env, mi->name);
	jvmti_free(env, mi->desc);
	jvmti_free(env, mi->file);
	jvmti_free(env, mi->lines);
	memset(mi, 0, sizeof(*mi));
}

static void method_info_fill(struct name_cache *c, jmethodID method, struct method_info *mi)
{
	jvmtiEnv *env = c->env;
	jclass cls = NULL;

	memset(mi, 0, sizeof(*mi));
	mi->method = method;
	if ((*env)->GetMethodName(env, method, &mi->name, &mi->desc, NULL) != JVMTI_ERROR_NONE)
		mi->name = mi->desc = NULL;
	if ((*env)->GetMethodDeclaringClass(env, method, &cls) == JVMTI_ERROR_NONE &&
	    (*env)->GetClassSignature(env, cls, &mi->class_sig, NULL) != JVMTI_ERROR_NONE)
		mi->class_sig = NULL;
	if (!c->opt->sourcepos || !cls)
		return;
	if ((*env)->GetSourceFileName(env, cls, &mi->file) != JVMTI_ERROR_NONE)
		mi->file = NULL;
	if ((*env)->GetLineNumberTable(env, method, &mi->nlines, &mi->lines) != JVMTI_ERROR_NONE) {
		mi->lines = NULL;
		mi->nlines = 0;
	}
}

static struct method_info *name_cache_get(struct name_cache *c, jmethodID method)
{
	for (int i = 0; i < c->n; i++)
		if (c->m[i].method == method)
			return &c->m[i];
	if (c->n < NAME_CACHE_MAX) {
		method_info_fill(c, method, &c->m[c->n]);
		return &c->m[c->n++];
	}
	method_info_release(c->env, &c->spare);
	method_info_fill(c, method, &c->spare);
	return &c->spare;
}

static void name_cache_release(struct name_cache *c)
{
	for (int i = 0; i < c->n; i++)
		method_info_release(c->env, &c->m[i]);
	method_info_release(c->env, &c->spare);
	c->n = 0;
	free(c->frames);
	c->frames = NULL;
}

/* Source line of bci (bci < 0: the method's first line), -1 if unknown. */
static int method_line(const struct method_info *mi, jint bci)
{
	int line = -1;
	jlocation best = -1;
	for (jint i = 0; i < mi->nlines; i++) {
		jlocation at = mi->lines[i].start_location;
		if (bci < 0) {
			if (best < 0 || at < best) {
				best = at;
				line = mi->lines[i].line_number;
			}
		} else if (at <= bci && at > best) {
			best = at;
			line = mi->lines[i].line_number;
		}
	}
	return line;
}

static void frame_name(struct name_cache *c, jmethodID method, jint bci, char *out, size_t len)
{
	const struct method_info *mi = name_cache_get(c, method);
	const char *file = c->opt->sourcepos ? (mi->file ? mi->file : "Unknown") : NULL;
	agentmap_frame_name(c->opt, mi->class_sig ? mi->class_sig : "L?;", mi->name, mi->desc, file,
			    file ? method_line(mi, bci) : -1, out, len);
}

/* The name of one pc record according to the unfold option. */
static void record_name(struct name_cache *c, const PCStackInfo *pi, jmethodID root,
			const char *root_name, char *out, size_t len)
{
	enum agentmap_unfold unfold = c->opt->unfold;
	jint n = pi->numstackframes;

	if (n <= 0) {
		snprintf(out, len, "%s", root_name);
		return;
	}
	if (unfold == AGENTMAP_UNFOLD_SIMPLE) {
		frame_name(c, pi->methods[0], pi->bcis[0], out, len);
		return;
	}
	if (unfold == AGENTMAP_UNFOLD_IN) {
		if (pi->methods[0] == root) {
			snprintf(out, len, "%s", root_name);
			return;
		}
		char inner[AGENTMAP_NAME_MAX];
		frame_name(c, pi->methods[0], pi->bcis[0], inner, sizeof(inner));
		snprintf(out, len, "%s in %s", inner, root_name);
		return;
	}
	/* AGENTMAP_UNFOLD_ALL: outermost (the root, methods[n-1]) first. */
	const char *ptrs[FRAMES_MAX];
	jint from = n > FRAMES_MAX ? FRAMES_MAX - 1 : n - 1; /* keep the innermost */
	int k = 0;
	if (!c->frames && !(c->frames = malloc(FRAMES_MAX * sizeof(*c->frames)))) {
		frame_name(c, pi->methods[0], pi->bcis[0], out, len);
		return;
	}
	for (jint j = from; j >= 0; j--, k++) {
		frame_name(c, pi->methods[j], pi->bcis[j], c->frames[k], sizeof(c->frames[k]));
		ptrs[k] = c->frames[k];
	}
	agentmap_join_frames(ptrs, (size_t)k, out, len);
}

/* ---- output ------------------------------------------------------------- */

/* Hand complete lines to the session: written at once (continuous) or
 * batched (oneshot). Dropped when the session is not active. */
static void session_emit(struct session *s, struct agentmap_buf *lines)
{
	int r = 0;

	if (lines->len == 0)
		return;
	pthread_mutex_lock(&s->lock);
	if (!s->active || s->fd < 0) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (s->opt.timed && s->bytes + lines->len > AGENTMAP_TIMED_MAX) {
		s->dropped++; /* bounded: the file never grows past the cap */
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (s->batch) {
		if (s->buf.len + lines->len > ONESHOT_FLUSH_AT && s->buf.len) {
			r = agentmap_write_all(s->fd, s->buf.data, s->buf.len);
			s->buf.len = 0;
		}
		if (r == 0 && lines->len > ONESHOT_FLUSH_AT) {
			r = agentmap_write_all(s->fd, lines->data, lines->len);
		} else if (r == 0) {
			struct agentmap_buf *b = &s->buf;
			if (b->cap - b->len < lines->len) {
				size_t cap = b->len + lines->len + ONESHOT_FLUSH_AT;
				char *p = realloc(b->data, cap);
				if (!p) {
					r = -ENOMEM;
				} else {
					b->data = p;
					b->cap = cap;
				}
			}
			if (r == 0) {
				memcpy(b->data + b->len, lines->data, lines->len);
				b->len += lines->len;
			}
		}
	} else {
		r = agentmap_write_all(s->fd, lines->data, lines->len);
	}
	if (r < 0 && !s->write_errno)
		s->write_errno = -r;
	s->bytes += lines->len;
	s->events++;
	pthread_mutex_unlock(&s->lock);
}

static struct session *session_of(jvmtiEnv *env)
{
	void *p = NULL;
	if ((*env)->GetEnvironmentLocalStorage(env, &p) != JVMTI_ERROR_NONE)
		return NULL;
	return p;
}

static const jvmtiCompiledMethodLoadInlineRecord *inline_record(const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	for (int guard = 0; h && guard < 16; h = h->next, guard++)
		if (h->kind == JVMTI_CMLR_INLINE_INFO &&
		    h->majorinfoversion == JVMTI_CMLR_MAJOR_VERSION)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	return NULL;
}

static bool same_chain(const PCStackInfo *a, const PCStackInfo *b)
{
	if (a->numstackframes != b->numstackframes || !a->methods || !b->methods)
		return false;
	for (jint j = 0; j < a->numstackframes; j++)
		if (a->methods[j] != b->methods[j])
			return false;
	return true;
}

static int append_unfolded(struct name_cache *c, struct agentmap_buf *out, jmethodID method,
			   uint64_t start, uint64_t size, const char *root_name,
			   const jvmtiCompiledMethodLoadInlineRecord *rec)
{
	size_t n = rec->numpcs > 0 ? (size_t)rec->numpcs : 0;
	uint64_t *pcs = calloc(n ? n : 1, sizeof(*pcs));
	char **names = calloc(n ? n : 1, sizeof(*names));
	char name[AGENTMAP_NAME_MAX];
	int r = -ENOMEM;

	if (!pcs || !names)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const PCStackInfo *pi = &rec->pcinfo[i];
		pcs[i] = (uint64_t)(uintptr_t)pi->pc;
		/* Without sourcepos a name depends only on the chain of methods:
		 * a record with the same chain as the one before (most of them:
		 * every call and safepoint of one inlined region) has its name. */
		if (i > 0 && !c->opt->sourcepos && same_chain(&rec->pcinfo[i - 1], pi)) {
			names[i] = names[i - 1]; /* shared, freed once */
			continue;
		}
		record_name(c, pi, method, root_name, name, sizeof(name));
		if (i > 0 && strcmp(names[i - 1], name) == 0) {
			names[i] = names[i - 1]; /* shared, freed once */
			continue;
		}
		names[i] = strdup(name);
		if (!names[i])
			goto out;
	}
	r = agentmap_append_ranges(out, start, size, pcs, (const char *const *)names, n, root_name);
out:
	if (names)
		for (size_t i = 0; i < n; i++)
			if (i == 0 || names[i] != names[i - 1])
				free(names[i]);
	free(names);
	free(pcs);
	return r;
}

/* A method handle intrinsic (MethodHandle.linkToStatic, invokeBasic, ...)
 * shares its jmethodID with every other intrinsic (mhintrinsic.h), so its
 * name comes from its nmethod's Method instead; when that cannot be read the
 * frame is named "[intrinsic]" rather than after the wrong primitive. Returns
 * false (out untouched) for every other method. No inlining is unfolded for
 * these native wrappers: their records would carry the same jmethodID. */
static bool mh_intrinsic_name(struct name_cache *c, jmethodID method, const void *code_addr,
			      jint code_size, char *out, size_t len)
{
	static const char mh_class[] = "Ljava/lang/invoke/MethodHandle;";
	const struct method_info *mi = name_cache_get(c, method);
	char name[64], desc[1024];

	if (!mi->class_sig || strcmp(mi->class_sig, mh_class) != 0 ||
	    !mhintrinsic_is_primitive(mi->name))
		return false;
	if (mhintrinsic_name(code_addr, (size_t)code_size, name, sizeof(name), desc, sizeof(desc)) <
	    0) {
		agentmap_frame_name(c->opt, mh_class, "[intrinsic]", NULL, NULL, -1, out, len);
		return true;
	}
	agentmap_frame_name(c->opt, mh_class, name, desc[0] ? desc : NULL, NULL, -1, out, len);
	return true;
}

static void JNICALL on_compiled_method_load(jvmtiEnv *env, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length,
					    const jvmtiAddrLocationMap *map,
					    const void *compile_info)
{
	struct session *s = session_of(env);
	struct agentmap_buf out = {0};
	struct name_cache c = {.env = env};
	char root_name[AGENTMAP_NAME_MAX];

	if (!s || code_size <= 0 || !s->active || session_expired(s))
		return;
	c.opt = &s->opt; /* options only change while the session is idle */
	uint64_t start = (uint64_t)(uintptr_t)code_addr;
	bool replay = in_replay();
	bool old =
	    debuginfo_note_load(start, (uint64_t)code_size, (uint64_t)(uintptr_t)method, replay);
	if (s->opt.timed &&
	    (agentmap_append_load(&out, replay ? 0 : now_ns(), start, (uint64_t)code_size,
				  (uint64_t)(uintptr_t)method) < 0 ||
	     (old && agentmap_append_safepoints_only(&out) < 0)))
		return;
	size_t head = out.len;
	bool intrinsic =
	    mh_intrinsic_name(&c, method, code_addr, code_size, root_name, sizeof(root_name));
	if (!intrinsic)
		frame_name(&c, method, -1, root_name, sizeof(root_name));
	const jvmtiCompiledMethodLoadInlineRecord *rec =
	    intrinsic ? NULL : inline_record(compile_info);
	if (s->opt.unfold != AGENTMAP_UNFOLD_NONE && rec && rec->numpcs > 0 && rec->pcinfo) {
		if (append_unfolded(&c, &out, method, start, (uint64_t)code_size, root_name, rec) <
		    0) {
			out.len = head;
			agentmap_append_line(&out, start, (uint64_t)code_size, root_name);
		}
	} else {
		agentmap_append_line(&out, start, (uint64_t)code_size, root_name);
	}
	name_cache_release(&c);
	session_emit(s, &out);
	agentmap_buf_free(&out);
}

static void JNICALL on_dynamic_code_generated(jvmtiEnv *env, const char *name, const void *address,
					      jint length)
{
	struct session *s = session_of(env);
	struct agentmap_buf out = {0};

	if (!s || length <= 0 || !s->active || session_expired(s))
		return;
	if (s->opt.timed)
		agentmap_append_load(&out, event_time(), (uint64_t)(uintptr_t)address,
				     (uint64_t)length, 0);
	agentmap_append_line(&out, (uint64_t)(uintptr_t)address, (uint64_t)length, name);
	session_emit(s, &out);
	agentmap_buf_free(&out);
}

/* Timed sessions only: the code at code_addr is gone (or about to be), so
 * its address may be reused. HotSpot posts this from the service thread,
 * after the fact; readers also end an entry where newer code overlaps it. */
static void JNICALL on_compiled_method_unload(jvmtiEnv *env, jmethodID method,
					      const void *code_addr)
{
	struct session *s = session_of(env);
	struct agentmap_buf out = {0};

	if (!s || !s->opt.timed || !s->active || session_expired(s))
		return;
	debuginfo_note_unload((uint64_t)(uintptr_t)code_addr, (uint64_t)(uintptr_t)method);
	if (agentmap_append_unload(&out, now_ns(), (uint64_t)(uintptr_t)code_addr,
				   (uint64_t)(uintptr_t)method) == 0)
		session_emit(s, &out);
	agentmap_buf_free(&out);
}

/* ---- sessions ----------------------------------------------------------- */

static int jvmti_fail(struct fs_error *err, jvmtiError e, const char *what)
{
	return fs_error_set(err, 0, "%s failed: JVMTI error %d", what, (int)e);
}

static int session_env(JavaVM *vm, struct session *s, struct fs_error *err)
{
	jvmtiEnv *env = s->env;
	jvmtiCapabilities caps;
	jvmtiError e;

	if (!env) {
		jint r = (*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_1_2);
		if (r != JNI_OK || !env)
			return fs_error_set(err, 0, "GetEnv(JVMTI 1.2) failed: JNI error %d",
					    (int)r);
		jvmtiEventCallbacks cb;
		memset(&cb, 0, sizeof(cb));
		cb.CompiledMethodLoad = on_compiled_method_load;
		cb.DynamicCodeGenerated = on_dynamic_code_generated;
		cb.CompiledMethodUnload = on_compiled_method_unload;
		e = (*env)->SetEventCallbacks(env, &cb, (jint)sizeof(cb));
		if (e == JVMTI_ERROR_NONE)
			e = (*env)->SetEnvironmentLocalStorage(env, s);
		if (e != JVMTI_ERROR_NONE) {
			(*env)->DisposeEnvironment(env);
			return jvmti_fail(err, e, "setting the event callbacks");
		}
		s->env = env;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	e = (*env)->AddCapabilities(env, &caps);
	if (e != JVMTI_ERROR_NONE)
		return jvmti_fail(err, e,
				  "AddCapabilities(can_generate_compiled_method_load_events)");
	if (s->opt.sourcepos) {
		memset(&caps, 0, sizeof(caps));
		caps.can_get_source_file_name = 1;
		caps.can_get_line_numbers = 1;
		if ((*env)->AddCapabilities(env, &caps) != JVMTI_ERROR_NONE) {
			agent_log(FS_LOG_WARN,
				  "sourcepos: the JVM cannot give source files and line "
				  "numbers now; continuing without them");
			s->opt.sourcepos = false;
		}
	}
	return 0;
}

static int session_events(struct session *s, jvmtiEventMode mode)
{
	jvmtiEnv *env = s->env;
	jvmtiError e =
	    (*env)->SetEventNotificationMode(env, mode, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
	jvmtiError e2 =
	    (*env)->SetEventNotificationMode(env, mode, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
	jvmtiError e3 = JVMTI_ERROR_NONE;
	if (mode == JVMTI_DISABLE || s->opt.timed)
		e3 = (*env)->SetEventNotificationMode(env, mode, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
						      NULL);
	if (e != JVMTI_ERROR_NONE)
		return (int)e;
	return e2 != JVMTI_ERROR_NONE ? (int)e2 : (int)e3;
}

/* Deactivate s: no more writes, flush the batch, close the file. Returns
 * the first write error (positive errno) seen during the session. */
static int session_close(struct session *s)
{
	int r = 0;

	if (s->env)
		session_events(s, JVMTI_DISABLE);
	pthread_mutex_lock(&s->lock);
	if (s->active && s->fd >= 0 && s->buf.len && !s->write_errno) {
		int w = agentmap_write_all(s->fd, s->buf.data, s->buf.len);
		if (w < 0)
			s->write_errno = -w;
	}
	s->active = false;
	agentmap_buf_free(&s->buf);
	bool had_file = s->fd >= 0; /* a second close (stop racing expiry) unlinks nothing */
	if (s->fd >= 0 && close(s->fd) < 0 && !s->write_errno)
		s->write_errno = errno;
	s->fd = -1;
	if (s->opt.timed && s->file[0] && had_file) {
		/* The timed log is the reader's, read by now: nothing stays behind. */
		char path[96];
		snprintf(path, sizeof(path), "/tmp/%s", s->file);
		unlink(path);
	}
	r = s->write_errno;
	s->write_errno = 0;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* At an attach, after the replay (debuginfo.h): the state of
 * -XX:+DebugNonSafepoints, said once in the JVM's log when it is not simply
 * on, and in a timed log. */
static void debuginfo_report(struct session *s, enum debuginfo_state st, bool logged)
{
	char status[256];
	debuginfo_status(status, sizeof(status));
	if (logged && (st != DEBUGINFO_SET || s->opt.verbose))
		agent_log(st != DEBUGINFO_SET ? FS_LOG_WARN : FS_LOG_INFO, "%s: %s", DEBUGINFO_FLAG,
			  status);
	if (s->opt.timed) {
		struct agentmap_buf b = {0};
		if (agentmap_append_status(&b, status) == 0)
			session_emit(s, &b);
		agentmap_buf_free(&b);
	}
}

/* Start s: env, file, events; with live set (the VM is running) also ask
 * for events describing everything generated so far. */
static int session_start(JavaVM *vm, struct session *s, const struct agentmap_options *o, bool live,
			 struct fs_error *err)
{
	jvmtiError e;
	int r;

	s->opt = *o;
	r = session_env(vm, s, err);
	if (r < 0)
		return r;
	if (o->timed)
		snprintf(s->file, sizeof(s->file), AGENTMAP_TIMED_NAME, (int)getpid());
	else
		snprintf(s->file, sizeof(s->file), "perf-%d.map", (int)getpid());
	int fd = agentmap_open_name("/tmp", s->file, true, err);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&s->lock);
	s->fd = fd;
	s->buf.len = 0;
	s->write_errno = 0;
	s->bytes = 0;
	s->events = 0;
	s->dropped = 0;
	s->deadline_ns = o->timed && o->ttl_s ? now_ns() + (uint64_t)o->ttl_s * 1000000000u : 0;
	s->active = true;
	pthread_mutex_unlock(&s->lock);

	r = session_events(s, JVMTI_ENABLE);
	if (r != JVMTI_ERROR_NONE) {
		session_close(s);
		return jvmti_fail(err, (jvmtiError)r, "enabling the code events");
	}
	if (live) {
		bool logged = false;
		enum debuginfo_state st = debuginfo_attach(!o->safepointsonly, &logged);
		replay_tid = syscall(SYS_gettid);
		e = (*s->env)->GenerateEvents(s->env, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		if (e == JVMTI_ERROR_NONE)
			e = (*s->env)->GenerateEvents(s->env, JVMTI_EVENT_COMPILED_METHOD_LOAD);
		replay_tid = 0;
		debuginfo_replay_done();
		if (e != JVMTI_ERROR_NONE) {
			session_close(s);
			return jvmti_fail(err, e, "GenerateEvents");
		}
		debuginfo_report(s, st, logged);
	}
	return 0;
}

/* Monotonic ms; by system call (clock_gettime is GLIBC_2.17 in libc). */
static double now_ms(void)
{
	struct timespec ts = {0};
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void session_report(struct session *s, double started)
{
	if (s->opt.verbose)
		agent_log(FS_LOG_INFO, "%s: %lu code events, %llu bytes to /tmp/%s in %.1f ms%s",
			  s->what, s->events, s->bytes, s->file, now_ms() - started,
			  s->dropped ? " (the size cap was reached: events dropped)" : "");
}

static int agent_oneshot(JavaVM *vm, const struct agentmap_options *o, struct fs_error *err)
{
	double t0 = now_ms();
	int r = session_start(vm, &oneshot_session, o, true, err);
	if (r < 0)
		return r;
	r = session_close(&oneshot_session);
	if (r)
		return fs_error_set(err, r, "writing /tmp/perf-%d.map", (int)getpid());
	session_report(&oneshot_session, t0);
	return 0;
}

static int agent_stop(struct session *s, struct fs_error *err)
{
	if (!s->active)
		return 0; /* nothing running: stopping is idempotent */
	int r = session_close(s);
	session_report(s, s->started);
	if (r)
		return fs_error_set(err, r, "the %s session had failed writes to /tmp/%s", s->what,
				    s->file);
	return 0;
}

static jint agent_run(JavaVM *vm, char *options, bool attached)
{
	struct agentmap_options o;
	struct fs_error err = {0};
	int r;

	agent_log_setup();
	r = agentmap_parse_options(options, &o, &err);
	if (r < 0)
		goto fail;
	/* "timed" selects the window's session, for starting and stopping */
	struct session *cs = o.timed ? &timed_session : &live_session;
	pthread_mutex_lock(&control_lock);
	if (o.stop) {
		r = agent_stop(cs, &err);
	} else {
		enum agentmap_mode mode = o.mode;
		if (mode == AGENTMAP_MODE_DEFAULT)
			mode = attached ? AGENTMAP_MODE_ONESHOT : AGENTMAP_MODE_CONTINUOUS;
		if (o.timed && mode != AGENTMAP_MODE_CONTINUOUS) {
			r = fs_error_set(&err, EINVAL, "option 'timed' needs mode=continuous");
		} else if (mode == AGENTMAP_MODE_ONESHOT && !attached) {
			r = fs_error_set(&err, EINVAL,
					 "mode=oneshot needs a running JVM: load "
					 "the agent by attach, or use mode=continuous");
		} else if (mode == AGENTMAP_MODE_ONESHOT) {
			r = agent_oneshot(vm, &o, &err);
		} else if (cs->active) {
			r = fs_error_set(&err, EALREADY,
					 "a %s session is already running; load the agent with "
					 "option 'stop'%s first",
					 cs->what, o.timed ? " (and 'timed')" : "");
		} else {
			cs->started = now_ms();
			r = session_start(vm, cs, &o, attached, &err);
			if (r == 0 && attached)
				session_report(cs, cs->started);
		}
	}
	pthread_mutex_unlock(&control_lock);
	if (r < 0)
		goto fail;
	return JNI_OK;
fail:
	agent_log(FS_LOG_ERROR, "%s", err.msg);
	/* At startup a profiler must never stop the JVM: carry on without us. */
	return attached ? JNI_ERR : JNI_OK;
}

AGENT_EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	return agent_run(vm, options, false);
}

AGENT_EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	return agent_run(vm, options, true);
}

AGENT_EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	pthread_mutex_lock(&control_lock);
	if (live_session.active)
		session_close(&live_session);
	if (timed_session.active)
		session_close(&timed_session);
	pthread_mutex_unlock(&control_lock);
}
