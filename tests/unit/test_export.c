/* test_export.c - the export model (frame kinds, UTF-8 repair, interning)
 * and its two encoders: pprof (decoded back with protobuf-c and checked
 * field by field) and speedscope (parsed back with yajl). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "fold.h"
#include "json.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "speedscope.h"
#include "tap.h"

static void test_kinds(void)
{
	static const struct {
		const char *text;
		enum export_kind kind;
		size_t name_len;
	} cases[] = {
	    {"do_syscall_64_[k]", EXPORT_KIND_KERNEL, 13},
	    {"a.B.c_[j]", EXPORT_KIND_JIT, 5},
	    {"a.B.c_[1]", EXPORT_KIND_C1, 5},
	    {"a.B.c_[0]", EXPORT_KIND_INTERPRETED, 5},
	    {"a.B.c_[i]", EXPORT_KIND_INLINED, 5},
	    {"[libc.so.6]", EXPORT_KIND_MODULE, 11},
	    {"[unknown]", EXPORT_KIND_UNKNOWN, 9},
	    {"[kernel.kallsyms]_[k]", EXPORT_KIND_KERNEL, 17},
	    {"_[k]", EXPORT_KIND_PLAIN, 4}, /* no name before the suffix */
	    {"x_[z]", EXPORT_KIND_PLAIN, 5},
	    {"[a b]", EXPORT_KIND_PLAIN, 5}, /* not a file name */
	    {"[]", EXPORT_KIND_PLAIN, 2},
	    {"main", EXPORT_KIND_PLAIN, 4},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = 0;
		enum export_kind k = export_frame_kind(cases[i].text, strlen(cases[i].text), &n);
		ok(k == cases[i].kind && n == cases[i].name_len, "kind of '%s': %s, name %zu bytes",
		   cases[i].text, export_kind_name(k), n);
	}
}

static void test_model(void)
{
	struct export *x = export_new();
	ok(x != NULL, "export_new");
	const char *s1 = "java;main_[j];run_[j];hot_[i]";
	is_int(export_add(x, s1, strlen(s1), 5, 42), 0, "add a stack");
	is_int(export_add(x, "java;;main_[j];;", 16, 2, 42), 0, "empty frames are skipped");
	is_int(export_add(x, ";;", 2, 9, 1), 0, "a stack without frames is ignored");
	const char bad[] = "java;a\xff\xfe"
			   "b;c\xc0\xaf;e\xed\xa0\x80";
	is_int(export_add(x, bad, sizeof(bad) - 1, 1, 0), 0, "invalid UTF-8");
	is_int(x->nsamples, 3, "3 samples");
	is_int(x->total, 8, "total 8");
	is_int(x->nframes, 7, "frames interned: java main run hot a?b c? e?");
	is_int(x->samples[1].depth, 2, "second stack: java;main_[j]");
	ok(x->stack[x->samples[1].off + 1] == x->stack[x->samples[0].off + 1],
	   "the same frame twice is one frame");
	const struct export_frame *f = &x->frames[x->stack[x->samples[0].off + 3]];
	is_str(f->name, "hot", "inlined frame name without suffix");
	is_str(f->text, "hot_[i]", "its folded text");
	ok(f->kind == EXPORT_KIND_INLINED, "kind inlined");
	f = &x->frames[x->stack[x->samples[2].off + 1]];
	is_str(f->text,
	       "a\xef\xbf\xbd\xef\xbf\xbd"
	       "b",
	       "invalid bytes become U+FFFD");
	f = &x->frames[x->stack[x->samples[2].off + 2]];
	is_str(f->text, "c\xef\xbf\xbd\xef\xbf\xbd", "overlong encoding rejected");
	f = &x->frames[x->stack[x->samples[2].off + 3]];
	is_str(f->text, "e\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "surrogate rejected");
	is_int(export_set_label(x, "container_id", "abc"), 0, "label");
	is_int(export_set_label(x, "pod", ""), 0, "an empty label is accepted");
	is_int(x->nlabels, 1, "and not stored");
	for (int i = 1; i < EXPORT_MAX_LABELS; i++)
		export_set_label(x, "k", "v");
	is_int(export_set_label(x, "k", "v"), -ENOSPC, "label limit");
	export_free(x);

	/* many distinct frames: the intern table grows */
	x = export_new();
	char buf[64];
	int fails = 0;
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(buf, sizeof(buf), "root;f%d;g%d_[k]", i, i % 7);
		fails += export_add(x, buf, (size_t)n, 1, 0) != 0;
	}
	is_int(fails, 0, "5000 stacks added");
	is_int(x->nframes, 1 + 5000 + 7, "frames deduplicated after growth");
	export_free(x);
}

static int read_text(struct export *x, const char *text, size_t len, struct fs_error *err)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int r = export_read_folded(x, f, err);
	fclose(f);
	return r;
}

static void test_read(void)
{
	struct export *x = export_new();
	struct fs_error err = {0};
	const char ok_text[] = "a;b 2\r\n\n  \nx\0y;c\t 3\na;b 4";
	is_int(read_text(x, ok_text, sizeof(ok_text) - 1, &err), 0,
	       "CRLF, blanks, NUL, no final newline");
	is_int(x->nsamples, 3, "3 stacks (equal stacks not merged)");
	is_int(x->total, 9, "total 9");
	is_str(x->frames[x->stack[x->samples[1].off]].text, "x\xef\xbf\xbdy", "NUL -> U+FFFD");
	export_free(x);

	x = export_new();
	const char bad[] = "a 1\nb 2\nno-count\n";
	ok(read_text(x, bad, sizeof(bad) - 1, &err) == -EINVAL && strstr(err.msg, "line 3"),
	   "a line without a count is an error naming it: %s", err.msg);
	export_free(x);

	x = export_new();
	size_t big = FOLD_STACK_MAX + 100;
	char *long_line = malloc(big);
	memset(long_line, 'a', big);
	ok(read_text(x, long_line, big, &err) == -E2BIG && strstr(err.msg, "line 1"),
	   "an endless line is refused with bounded memory: %s", err.msg);
	free(long_line);
	export_free(x);
}

static const char *pb_str(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

static const Perftools__Profiles__Function *pb_fn(const Perftools__Profiles__Profile *p,
						  uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

static const Perftools__Profiles__Location *pb_loc(const Perftools__Profiles__Profile *p,
						   uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

/* The folded text of a decoded sample (system names, root first). */
static void pb_folded(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
		      char *out, size_t len)
{
	size_t pos = 0;
	out[0] = '\0';
	for (size_t i = s->n_location_id; i-- > 0;) {
		const Perftools__Profiles__Location *l = pb_loc(p, s->location_id[i]);
		for (size_t k = l ? l->n_line : 0; k-- > 0;) {
			const Perftools__Profiles__Function *f = pb_fn(p, l->line[k]->function_id);
			pos += (size_t)snprintf(out + pos, len - pos, "%s%s", pos ? ";" : "",
						f ? pb_str(p, f->system_name) : "?");
			if (pos >= len)
				return;
		}
	}
}

static void test_pprof(void)
{
	struct export *x = export_new();
	const char *a = "java;start_thread;main_[j];run_[j];hot_[i]";
	const char *b = "java;start_thread;[libc.so.6];write;ksys_write_[k]";
	const char *c = "java;start_thread;main_[j];cold_[0]";
	export_add(x, a, strlen(a), 70, 7);
	export_add(x, b, strlen(b), 10, 7);
	export_add(x, c, strlen(c), 20, 8);
	x->period_ns = 10000000;
	x->time_ns = 1700000000000000000;
	x->duration_ns = 5000000000;
	x->root_is_process = 1;
	export_set_label(x, "container_id", "3f2a9c");
	unsigned char *buf = NULL;
	size_t len = 0;
	struct fs_error err = {0};
	is_int(pprof_encode(x, &buf, &len, &err), 0, "pprof_encode");
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	ok(p != NULL, "protobuf-c decodes it (%zu bytes)", len);
	if (!p) {
		free(buf);
		export_free(x);
		return;
	}
	is_str(pb_str(p, 0), "", "string 0 is empty");
	is_int(p->n_sample_type, 2, "two sample types");
	is_str(pb_str(p, p->sample_type[0]->type), "samples", "samples/");
	is_str(pb_str(p, p->sample_type[0]->unit), "count", "/count");
	is_str(pb_str(p, p->sample_type[1]->type), "cpu", "cpu/");
	is_str(pb_str(p, p->sample_type[1]->unit), "nanoseconds", "/nanoseconds");
	is_str(pb_str(p, p->period_type->type), "cpu", "period type cpu");
	is_int(p->period, 10000000, "period");
	is_int(p->time_nanos, 1700000000000000000, "time_nanos");
	is_int(p->duration_nanos, 5000000000, "duration_nanos");
	is_int(p->n_sample, 3, "3 samples");
	is_int(p->n_function, 9, "one function per distinct frame");
	/* locations: java start_thread main run+hot write [libc] ksys_write cold */
	is_int(p->n_location, 8, "hot inlined into run's location");
	char folded[512];
	pb_folded(p, p->sample[0], folded, sizeof(folded));
	is_str(folded, a, "sample 0 reads back as its folded stack");
	pb_folded(p, p->sample[1], folded, sizeof(folded));
	is_str(folded, b, "sample 1");
	pb_folded(p, p->sample[2], folded, sizeof(folded));
	is_str(folded, c, "sample 2");
	is_int(p->sample[0]->n_value, 2, "two values");
	is_int(p->sample[0]->value[0], 70, "count");
	is_int(p->sample[0]->value[1], 700000000, "cpu ns = count x period");
	const Perftools__Profiles__Location *leaf = pb_loc(p, p->sample[0]->location_id[0]);
	ok(leaf && leaf->n_line == 2, "the leaf location has 2 lines");
	if (leaf && leaf->n_line == 2) {
		is_str(pb_str(p, pb_fn(p, leaf->line[0]->function_id)->name), "hot",
		       "innermost line first, name without suffix");
		is_str(pb_str(p, pb_fn(p, leaf->line[1]->function_id)->name), "run",
		       "then its caller");
		ok(leaf->mapping_id > 1, "a mapping");
		is_str(pb_str(p, p->mapping[leaf->mapping_id - 1]->filename), "[jit]",
		       "the JIT mapping");
	}
	is_str(pb_str(p, p->mapping[0]->filename), "", "mapping 1 has no name");
	const Perftools__Profiles__Location *k = pb_loc(p, p->sample[1]->location_id[0]);
	ok(k && k->mapping_id &&
	       !strcmp(pb_str(p, p->mapping[k->mapping_id - 1]->filename), "[kernel.kallsyms]"),
	   "kernel frame in [kernel.kallsyms]");
	k = pb_loc(p, p->sample[1]->location_id[2]);
	ok(k && k->mapping_id &&
	       !strcmp(pb_str(p, p->mapping[k->mapping_id - 1]->filename), "libc.so.6"),
	   "[libc.so.6] frame in libc.so.6");
	int labels_ok = 1;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int cid = 0, pid = 0, proc = 0;
		for (size_t l = 0; l < s->n_label; l++) {
			const char *key = pb_str(p, s->label[l]->key);
			cid += !strcmp(key, "container_id") &&
			       !strcmp(pb_str(p, s->label[l]->str), "3f2a9c");
			pid += !strcmp(key, "pid") && s->label[l]->num == (i < 2 ? 7 : 8);
			proc +=
			    !strcmp(key, "process") && !strcmp(pb_str(p, s->label[l]->str), "java");
		}
		labels_ok &= cid == 1 && pid == 1 && proc == 1;
	}
	ok(labels_ok, "every sample: container_id, pid, process labels");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);

	/* gzip: the stream starts with the gzip magic */
	char *mem = NULL;
	size_t mlen = 0;
	FILE *m = open_memstream(&mem, &mlen);
	is_int(pprof_write(x, m, &err), 0, "pprof_write");
	fclose(m);
	ok(mlen > 18 && (unsigned char)mem[0] == 0x1f && (unsigned char)mem[1] == 0x8b,
	   "gzip framing (%zu bytes)", mlen);
	free(mem);
	export_free(x);

	/* an empty profile is still a valid one */
	x = export_new();
	is_int(pprof_encode(x, &buf, &len, &err), 0, "empty export encodes");
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	ok(p && p->n_sample == 0 && p->n_string_table >= 1, "and decodes with no samples");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	export_free(x);
}

static void test_speedscope(void)
{
	struct export *x = export_new();
	const char *a = "java;main_[j];hot_[i]", *b = "java;do_syscall_64_[k]";
	const char *q = "sh;quote\"back\\slash\x01";
	export_add(x, a, strlen(a), 70, 7);
	export_add(x, b, strlen(b), 10, 7);
	export_add(x, q, strlen(q), 3, 9);
	x->root_is_process = 1;
	export_set_name(x, "CPU of container 3f2a9c");
	char *mem = NULL;
	size_t mlen = 0;
	struct fs_error err = {0};
	FILE *m = open_memstream(&mem, &mlen);
	is_int(speedscope_write(x, m, &err), 0, "speedscope_write");
	fclose(m);
	yajl_val v = NULL;
	is_int(json_parse(mem, mlen, 8, &v, &err), 0, "valid JSON");
	if (v) {
		is_str(json_get_string(v, "$schema"),
		       "https://www.speedscope.app/file-format-schema.json", "$schema");
		is_str(json_get_string(v, "name"), "CPU of container 3f2a9c", "name");
		const char *path[] = {"profiles", NULL};
		yajl_val profs = yajl_tree_get(v, path, yajl_t_array);
		ok(profs && YAJL_GET_ARRAY(profs)->len == 2, "one profile per pid");
		if (profs && YAJL_GET_ARRAY(profs)->len == 2) {
			yajl_val p0 = YAJL_GET_ARRAY(profs)->values[0];
			is_str(json_get_string(p0, "name"), "java (pid 7)", "largest first, named");
			is_str(json_get_string(p0, "type"), "sampled", "sampled");
			long long end = 0;
			json_get_int(p0, "endValue", &end);
			is_int(end, 80, "endValue = its samples");
		}
		const char *fpath[] = {"shared", "frames", NULL};
		yajl_val frames = yajl_tree_get(v, fpath, yajl_t_array);
		ok(frames && YAJL_GET_ARRAY(frames)->len == x->nframes, "one frame per frame");
		if (frames && YAJL_GET_ARRAY(frames)->len == x->nframes) {
			yajl_val f2 = YAJL_GET_ARRAY(frames)->values[2];
			is_str(json_get_string(f2, "name"), "hot", "name without suffix");
			is_str(json_get_string(f2, "file"), "[inlined]", "kind as file");
			yajl_val f5 = YAJL_GET_ARRAY(frames)->values[5];
			is_str(json_get_string(f5, "name"), "quote\"back\\slash\x01", "escaped");
		}
		yajl_tree_free(v);
	}
	free(mem);
	export_free(x);
}

/* run --with-pid: root frames "comm-PID" label the process as "comm" */
static void test_with_pid(void)
{
	struct export *x = export_new();
	const char *a = "java-7;main", *b = "sh-70;x";
	export_add(x, a, strlen(a), 3, 7);
	export_add(x, b, strlen(b), 1, 7); /* "-70" is not pid 7's suffix */
	x->root_is_process = 1;
	const char *name;
	size_t n = export_process_name(x, &x->samples[0], &name);
	ok(n == 4 && !strncmp(name, "java", 4), "java-7 of pid 7 is process java");
	n = export_process_name(x, &x->samples[1], &name);
	ok(n == 5 && !strncmp(name, "sh-70", 5), "sh-70 of pid 7 stays sh-70");
	unsigned char *buf = NULL;
	size_t len = 0;
	struct fs_error err = {0};
	is_int(pprof_encode(x, &buf, &len, &err), 0, "encode");
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	int found = 0;
	for (size_t i = 0; p && i < p->n_sample; i++)
		for (size_t l = 0; l < p->sample[i]->n_label; l++)
			found += !strcmp(pb_str(p, p->sample[i]->label[l]->key), "process") &&
				 !strcmp(pb_str(p, p->sample[i]->label[l]->str),
					 i == 0 ? "java" : "sh-70");
	is_int(found, 2, "process labels java and sh-70");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	export_free(x);
}

/* The label of sample s with this key: its string (*num its number), or
 * NULL when it has none. */
static const char *pb_label(const Perftools__Profiles__Profile *p,
			    const Perftools__Profiles__Sample *s, const char *key, int64_t *num)
{
	for (size_t l = 0; l < s->n_label; l++)
		if (!strcmp(pb_str(p, s->label[l]->key), key)) {
			if (num)
				*num = s->label[l]->num;
			return pb_str(p, s->label[l]->str);
		}
	return NULL;
}

/* The mapping of sample s's location i (leaf first): its file, *build its
 * build id. */
static const char *pb_map(const Perftools__Profiles__Profile *p,
			  const Perftools__Profiles__Sample *s, size_t i, const char **build)
{
	const Perftools__Profiles__Location *l = pb_loc(p, s->location_id[i]);
	if (!l || !l->mapping_id || l->mapping_id > p->n_mapping)
		return NULL;
	*build = pb_str(p, p->mapping[l->mapping_id - 1]->build_id);
	return pb_str(p, p->mapping[l->mapping_id - 1]->filename);
}

/* Threads (export_add_thread) as "thread"/"tid" labels; modules of named
 * native frames (export_frame_module) as mappings with build ids. */
static void test_threads_modules(void)
{
	struct export *x = export_new();
	const char *a = "java;start_thread;[libc.so.6];JavaCalls::call_helper;main_[j]";
	const char *b = "java;start_thread;[libc.so.6];write";
	struct fs_error err = {0};
	is_int(export_frame_module(x, "JavaCalls::call_helper", 22, "/usr/lib/jvm/libjvm.so",
				   "45183927463c"),
	       0, "module of a named frame");
	is_int(export_frame_module(x, "JavaCalls::call_helper", 22, "/other/libjvm.so", NULL), 0,
	       "a second module for the same name");
	is_int(export_frame_module(x, "[libc.so.6]", 11, "/lib/x86_64-linux-gnu/libc.so.6", "93ac"),
	       0, "[libc.so.6] gets its path");
	is_int(export_frame_module(x, "main_[j]", 8, "/tmp/x.so", NULL), 0, "a JIT frame");
	is_int(export_add_thread(x, a, strlen(a), 5, 7, 70, "hot-0"), 0, "add from thread hot-0");
	is_int(export_add_thread(x, a, strlen(a), 3, 7, 71, "hot-1"), 0, "same stack, hot-1");
	is_int(export_add_thread(x, b, strlen(b), 2, 7, 72, "bad\xff"), 0, "invalid UTF-8 name");
	is_int(export_add_thread(x, b, strlen(b), 1, 7, 72, "bad\xff"), 0, "the same again");
	is_int(export_add(x, b, strlen(b), 4, 7), 0, "no thread");
	is_int(x->nthreads, 3, "3 distinct thread names");
	is_int(x->nsamples, 5, "equal stacks of other threads stay apart");
	unsigned char *buf = NULL;
	size_t len = 0;
	is_int(pprof_encode(x, &buf, &len, &err), 0, "pprof_encode");
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	ok(p && p->n_sample == 5, "decodes, 5 samples");
	if (p && p->n_sample == 5) {
		int64_t tid = 0;
		const char *build = NULL;
		is_str(pb_label(p, p->sample[0], "thread", NULL), "hot-0", "thread label");
		ok(pb_label(p, p->sample[0], "tid", &tid) && tid == 70, "tid label 70");
		is_str(pb_label(p, p->sample[1], "thread", NULL), "hot-1", "thread label of 2nd");
		is_str(pb_label(p, p->sample[2], "thread", NULL), "bad\xef\xbf\xbd",
		       "name repaired to U+FFFD");
		ok(!pb_label(p, p->sample[4], "thread", NULL) &&
		       !pb_label(p, p->sample[4], "tid", NULL),
		   "no thread: no thread or tid label");
		is_str(pb_map(p, p->sample[0], 1, &build), "/usr/lib/jvm/libjvm.so",
		       "named native frame in its module's mapping (first wins)");
		is_str(build, "45183927463c", "with its build id");
		is_str(pb_map(p, p->sample[0], 2, &build), "/lib/x86_64-linux-gnu/libc.so.6",
		       "[libc.so.6] in the mapping of its path");
		is_str(build, "93ac", "with its build id");
		is_str(pb_map(p, p->sample[0], 0, &build), "[jit]", "a JIT frame keeps [jit]");
		ok(!pb_map(p, p->sample[3], 0, &build), "a frame without module: no mapping");
	}
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	char *mem = NULL;
	size_t mlen = 0;
	FILE *m = open_memstream(&mem, &mlen);
	is_int(speedscope_write(x, m, &err), 0, "speedscope_write");
	fclose(m);
	ok(mem && strstr(mem, "\"file\":\"/usr/lib/jvm/libjvm.so\""),
	   "speedscope: the module is the frame's file");
	free(mem);
	export_free(x);
}

int main(void)
{
	tap_plan(117);
	test_kinds();
	test_model();
	test_read();
	test_pprof();
	test_speedscope();
	test_with_pid();
	test_threads_modules();
	return tap_done();
}
