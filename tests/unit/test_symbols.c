/* test_symbols.c - kallsyms parsing, ELF symbol lookup, C++ names, JIT
 * callbacks and callchain folding, on this very process (/proc/self). */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "perfmap.h"
#include "tap.h"
#include "elfsyms.h"
#include "kallsyms.h"
#include "symbols.h"
#include "utf8.h"

/* A function with a name we know, kept out of line. */
__attribute__((noinline, used)) static int test_symbols_marker(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static char tmpdir[256];

static void test_kallsyms_parse(void)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 t helper_b\n"
				   "ffffffff81000080 T func_a\n"
				   "ffffffff81000200 D some_data\n"
				   "garbage line\n"
				   "zzzz T bad_addr\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n"
				   "ffffffffc0001100 t mod_fn2\t[mymod]\n"
				   "0000000000000000 T hidden\n"
				   "ffffffff81000300 W weak_fn";
	struct kallsyms *ks = NULL;
	struct fs_error err = {0};
	int r = kallsyms_parse(text, sizeof(text) - 1, &ks, &err);
	is_int(r, 0, "kallsyms_parse of a small table");
	is_int(kallsyms_count(ks), 6, "text symbols kept, data/garbage/zero dropped");
	uint64_t off = 0;
	const char *mod = "x";
	is_str(kallsyms_lookup(ks, 0xffffffff81000090, &off, &mod), "func_a",
	       "lookup inside func_a (input not sorted)");
	is_int(off, 0x10, "offset into func_a");
	ok(mod == NULL, "core kernel symbol has no module");
	is_str(kallsyms_lookup(ks, 0xffffffff81000000, NULL, NULL), "_stext", "exact start");
	is_str(kallsyms_lookup(ks, 0xffffffff810001ff, NULL, NULL), "helper_b",
	       "last byte before the next symbol");
	is_str(kallsyms_lookup(ks, 0xffffffffc0001050, NULL, &mod), "mod_fn", "module symbol");
	is_str(mod, "mymod", "module name");
	ok(kallsyms_lookup(ks, 0xffffffff80000000, NULL, NULL) == NULL, "below every symbol");
	ok(kallsyms_lookup(ks, 0xffffffffc0001100 + KALLSYMS_MAX_GAP, NULL, NULL) == NULL,
	   "far past the last symbol");
	kallsyms_free(ks);

	r = kallsyms_parse("", 0, &ks, &err);
	ok(r == 0 && kallsyms_count(ks) == 0, "empty input is an empty table");
	kallsyms_free(ks);
}

static void test_kallsyms_real(void)
{
	struct kallsyms *ks = NULL;
	struct fs_error err = {0};
	int r = kallsyms_load(NULL, &ks, &err);
	if (r < 0 || kallsyms_count(ks) == 0) {
		tap_diag("/proc/kallsyms unusable (%s)", r < 0 ? err.msg : "addresses hidden");
		tap_skip(2, "/proc/kallsyms addresses not readable");
		kallsyms_free(ks);
		return;
	}
	/* Find one real function's address by hand and look it up. */
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	unsigned long long addr = 0;
	char name[256] = "";
	while (f && fgets(line, sizeof(line), f)) {
		char type;
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    (!strcmp(name, "do_syscall_64") || !strcmp(name, "schedule")) && type == 'T')
			break;
		name[0] = '\0';
	}
	if (f)
		fclose(f);
	ok(kallsyms_count(ks) > 1000, "real kallsyms has many text symbols (%zu)",
	   kallsyms_count(ks));
	if (name[0])
		is_str(kallsyms_lookup(ks, addr + 4, NULL, NULL), name, "real lookup of %s", name);
	else
		tap_skip(1, "neither do_syscall_64 nor schedule found");
	kallsyms_free(ks);
}

static void test_strip(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"JavaCalls::call_helper(JavaValue*, methodHandle const&, JavaCallArguments*, "
	     "JavaThread*)",
	     "JavaCalls::call_helper"},
	    {"foo(int) const", "foo"},
	    {"int add<int>(int, int)", "add<int>"},
	    {"std::vector<int, std::allocator<int> >::push_back(int const&)",
	     "std::vector<int, std::allocator<int> >::push_back"},
	    {"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"},
	    {"ns::Klass::operator()(int)", "ns::Klass::operator()"},
	    {"ns::Klass::operator<(ns::Klass const&) const", "ns::Klass::operator<"},
	    {"operator new(unsigned long)", "operator new"},
	    {"outer(int)::Local::run()", "outer(int)::Local::run"},
	    {"plain_c_name", "plain_c_name"},
	    {"foo(int) [clone .cold]", "foo"},
	};
	for (size_t i = 0; i < FS_ARRAY_SIZE(cases); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		elfsyms_strip_args(buf);
		is_str(buf, cases[i].out, "strip '%s'", cases[i].in);
	}
	char out[256];
	is_int(
	    elfsyms_demangle("_ZN9JavaCalls11call_"
			     "helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread",
			     out, sizeof(out)),
	    1, "demangle a HotSpot name");
	is_str(out, "JavaCalls::call_helper", "HotSpot name without arguments");
	is_int(elfsyms_demangle("memcpy", out, sizeof(out)), 0, "C name is not demangled");
	is_str(out, "memcpy", "C name copied");
	is_int(elfsyms_demangle("_Zinvalid", out, sizeof(out)), 0, "bad mangling left alone");
	is_int(elfsyms_demangle("_ZN9JavaCalls11call_helperEv", out, 5), -ENAMETOOLONG,
	       "small buffer reported");
	is_str(out, "Java", "small buffer truncated");
}

static void test_elf_garbage(void)
{
	struct elfsyms *es = NULL;
	char junk[512];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	memcpy(junk, "\177ELF\2\1\1", 7);
	int r = elfsyms_load_mem(junk, sizeof(junk), &es, NULL);
	ok(r == -ENOEXEC && !es, "junk with an ELF magic: refused as not ELF (%d)", r);
	elfsyms_free(es);
	es = NULL;
	r = elfsyms_load_mem("hello", 5, &es, NULL);
	ok(r < 0 && !es, "not an ELF file: error");
}

static void test_self(struct symbolizer *sym)
{
	enum symbolizer_kind kind;
	int resolved;
	pid_t me = getpid();
	uint64_t a = (uint64_t)(uintptr_t)&test_symbols_marker + 2;
	const char *name = symbolizer_addr(sym, me, a, 0, &kind, &resolved);
	is_str(name, "test_symbols_marker", "own static function via map_files (.symtab)");
	ok(kind == SYMBOLIZER_KIND_NATIVE && resolved, "native and resolved");

	a = (uint64_t)(uintptr_t)&gnu_get_libc_version + 1;
	name = symbolizer_addr(sym, me, a, 0, &kind, &resolved);
	is_str(name, "gnu_get_libc_version", "libc function (.dynsym of a stripped library)");

	/* Under ASan &qsort is its interceptor, "__interceptor_qsort". */
	a = (uint64_t)(uintptr_t)&qsort + 1;
	name = symbolizer_addr(sym, me, a, 0, NULL, NULL);
	ok(strlen(name) >= 5 && !strcmp(name + strlen(name) - 5, "qsort"), "libc qsort (%s)", name);

	name = symbolizer_addr(sym, me, 0x10, 0, &kind, &resolved);
	is_str(name, "[unknown]", "address in no mapping");
	ok(kind == SYMBOLIZER_KIND_UNKNOWN && !resolved, "counted as unknown, unresolved");
}

static int fake_jit(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf, size_t len)
{
	uint64_t base = *(uint64_t *)ctx;
	if (addr >= base && addr < base + 4096) {
		snprintf(buf, len, "java.util.HashMap.get");
		return 1;
	}
	return 0;
}

static void test_jit(struct symbolizer *sym)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		ok(0, "mmap an executable page: %s", strerror(errno));
		return;
	}
	uint64_t base = (uint64_t)(uintptr_t)page;
	pid_t me = getpid();
	symbolizer_forget_pid(sym, me); /* the page is newer than the cached maps */
	enum symbolizer_kind kind;
	int resolved;
	const char *name = symbolizer_addr(sym, me, base + 16, 0, &kind, &resolved);
	is_str(name, "[unknown]", "anonymous code without a JIT map");
	ok(kind == SYMBOLIZER_KIND_JIT && !resolved, "counted as jit, unresolved");

	symbolizer_set_jit(sym, me, fake_jit, &base);
	name = symbolizer_addr(sym, me, base + 16, 0, &kind, &resolved);
	is_str(name, "java.util.HashMap.get", "JIT name from the callback, verbatim");
	ok(kind == SYMBOLIZER_KIND_JIT && resolved, "jit, resolved");

	/* The perf map adapter (sidecar/jvm/perfmap.h). */
	char text[128];
	int tl = snprintf(text, sizeof(text), "%llx 100 Lcom/example/App;run\n",
			  (unsigned long long)base + 0x200);
	struct perfmap *pm = NULL;
	if (perfmap_parse(text, (size_t)tl, 0, &pm, NULL) == 0) {
		symbolizer_set_jit(sym, me, symbolizer_jit_perfmap, pm);
		is_str(symbolizer_addr(sym, me, base + 0x210, 0, NULL, NULL),
		       "Lcom/example/App;run", "perf map entry through symbolizer_jit_perfmap");
		is_str(symbolizer_addr(sym, me, base + 0x10, 0, NULL, NULL), "[unknown]",
		       "outside every perf map entry");
		perfmap_free(pm);
	} else {
		ok(0, "perfmap_parse");
		ok(0, "perfmap_parse");
	}
	/* HotSpot layout (agentmap.h): a range ends one past its record's pc.
	 * Leaf pc 0x30f is asked at +1 (the record at 0x31f owns it), return
	 * address 0x310 at -1 (the record at 0x30f, its own call site). */
	tl = snprintf(text, sizeof(text), "%llx 10 R->A\n%llx 10 R->B\n",
		      (unsigned long long)base + 0x300, (unsigned long long)base + 0x310);
	pm = NULL;
	if (perfmap_parse(text, (size_t)tl, 0, &pm, NULL) == 0) {
		symbolizer_set_jit(sym, me, symbolizer_jit_perfmap, pm);
		uint64_t chain[] = {base + 0x30f, base + 0x310};
		struct symbolizer_frame fr[2];
		size_t nf = 0;
		symbolizer_symbolize(sym, me, chain, 2, fr, 2, &nf);
		ok(nf == 2 && !strcmp(fr[0].name, "R->B") && !strcmp(fr[1].name, "R->A"),
		   "JIT leaf looked up at pc + 1, return address at ret - 1 (%s, %s)",
		   nf > 0 ? fr[0].name : "-", nf > 1 ? fr[1].name : "-");
		perfmap_free(pm);
	} else {
		ok(0, "perfmap_parse");
		ok(0, "perfmap_parse");
	}
	symbolizer_set_jit(sym, me, NULL, NULL);
	munmap(page, 4096);
}

static void test_callchain(struct symbolizer *sym)
{
	struct kallsyms *ks = NULL;
	uint64_t kaddr = 0;
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256];
	unsigned long long a;
	char type;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && a &&
		    !strcmp(name, "do_syscall_64")) {
			kaddr = a;
			break;
		}
	if (f)
		fclose(f);
	kallsyms_free(ks);
	uint64_t marker = (uint64_t)(uintptr_t)&test_symbols_marker;
	uint64_t ips[] = {
	    (uint64_t)PERF_CONTEXT_KERNEL,
	    kaddr + 8,
	    (uint64_t)PERF_CONTEXT_USER,
	    marker + 1,
	    /* a return address just past the start of main's caller-ish code:
	     * looked up at addr - 1, still inside the marker function */
	    marker + 2,
	};
	struct symbolizer_frame fr[8];
	size_t n = 0;
	symbolizer_symbolize(sym, getpid(), ips, FS_ARRAY_SIZE(ips), fr, 8, &n);
	is_int(n, 3, "markers dropped from the frames");
	if (kaddr) {
		is_str(fr[0].name, "do_syscall_64_[k]", "kernel frame with the _[k] suffix");
	} else {
		tap_skip(1, "kernel addresses hidden");
	}
	ok(fr[0].kind == SYMBOLIZER_KIND_KERNEL, "kernel kind");
	is_int(fr[2].addr, marker + 1, "return address looked up at addr - 1");
	ok(!fr[0].module && !fr[0].build_id, "a kernel frame has no module");
	/* native frames: the mapped file by its path in /proc/<pid>/maps */
	char exe[PATH_MAX];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	ok(fr[1].module && !strcmp(fr[1].module, exe), "a native frame's module is its file (%s)",
	   fr[1].module ? fr[1].module : "NULL");
	/* gcc links with --build-id (sha1): 20 bytes, 40 hex digits */
	ok(fr[1].build_id && strlen(fr[1].build_id) == 40 &&
	       strspn(fr[1].build_id, "0123456789abcdef") == 40,
	   "its build id in hex (%s)", fr[1].build_id ? fr[1].build_id : "none");
}

static int run(const char *cmd)
{
	int r = system(cmd);
	if (r != 0)
		tap_diag("command failed (%d): %s", r, cmd);
	return r;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A fake /proc (symbolizer_opts.proc_root) for pid 4242: an unresolvable
 * library, anonymous code named by a perf map, a comm with bad bytes. */
static void test_fake_proc(void)
{
	char dir[600], path[700];
	snprintf(dir, sizeof(dir), "%s/proc/4242", tmpdir);
	snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
	if (run(path) != 0) {
		ok(0, "mkdir %s", dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/maps", dir);
	write_file(path, "00400000-00401000 r-xp 00000000 08:01 1234 /nonexistent/libfake.so\n"
			 "00500000-00501000 r-xp 00000000 00:00 0 \n");
	snprintf(path, sizeof(path), "%s/comm", dir);
	write_file(path, "ja\xc3va;\xff\n");
	snprintf(path, sizeof(path), "%s/proc", tmpdir);
	struct symbolizer_opts so = {.proc_root = path};
	struct symbolizer *sym = NULL;
	if (symbolizer_open(&so, &sym, NULL) < 0) {
		ok(0, "symbolizer_open with a fake /proc");
		return;
	}
	static const char map[] = "500000 1000 bad\xff\xfename;x\xe2\x82\n";
	struct perfmap *pm = NULL;
	perfmap_parse(map, sizeof(map) - 1, 0, &pm, NULL);
	symbolizer_set_jit(sym, 4242, symbolizer_jit_perfmap, pm);
	symbolizer_load_pid(sym, 4242, NULL);

	/* A miss re-reads the maps once SYMBOLIZER_REFRESH_MS have passed since
	 * the last read: that interval is what is tested, so wait it out. The
	 * new maps name the library differently. */
	usleep((SYMBOLIZER_REFRESH_MS + 100) * 1000);
	snprintf(path, sizeof(path), "%s/maps", dir);
	write_file(path, "00400000-00401000 r-xp 00000000 08:01 1234 /nonexistent/libother.so\n"
			 "00500000-00501000 r-xp 00000000 00:00 0 \n");
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, 0x500010, 0x400101, 0x700001};
	struct symbolizer_frame fr[4];
	size_t n = 0;
	symbolizer_symbolize(sym, 4242, ips, 4, fr, 4, &n);
	ok(n == 3 && !strcmp(fr[1].name, "[libfake.so]"),
	   "an unresolved frame keeps its label after a later frame re-read the maps (%s)",
	   n == 3 ? fr[1].name : "?");
	ok(n == 3 && !strcmp(fr[2].name, "[unknown]"), "the missing address is [unknown]");
	/* The frame cache (symcache.h) keeps no name past a change of the
	 * maps: the same range now maps another library. */
	write_file(path, "00400000-00401000 r-xp 00000000 08:01 99 /nonexistent/libthird.so\n"
			 "00500000-00501000 r-xp 00000000 00:00 0 \n");
	symbolizer_load_pid(sym, 4242, NULL);
	symbolizer_symbolize(sym, 4242, ips, 4, fr, 4, &n);
	ok(n == 3 && !strcmp(fr[1].name, "[libthird.so]") && fr[1].module &&
	       !strcmp(fr[1].module, "/nonexistent/libthird.so"),
	   "a library mapped over another's range is named by the maps of now (%s)",
	   n == 3 ? fr[1].name : "?");

	/* The symbolizer hands names on as they came (the fold, profile.c,
	 * makes them valid UTF-8 with utf8_sanitize as it joins them). */
	char buf[512];
	size_t len =
	    utf8_sanitize(fr[0].name, strlen(fr[0].name), buf, sizeof(buf), UTF8_FRAME, NULL);
	buf[len] = '\0';
	ok(len > 0 && utf8_valid(buf, len), "the frame name, sanitized as the fold does, is valid");
	is_str(buf, "bad\xef\xbf\xbd\xef\xbf\xbdname:x\xef\xbf\xbd\xef\xbf\xbd",
	       "bad bytes of the perf map name and a cut sequence are U+FFFD");
	symbolizer_close(sym);
	perfmap_free(pm);
}

static void test_cxx_and_shared(struct symbolizer *sym)
{
	char path[512], cmd[2048];
	snprintf(path, sizeof(path), "%s/k.cc", tmpdir);
	FILE *f = fopen(path, "w");
	if (!f) {
		ok(0, "writing %s", path);
		return;
	}
	fputs("namespace ns { struct Klass { int method(int x); }; }\n"
	      "__attribute__((noinline)) int ns::Klass::method(int x) { return x * 7; }\n"
	      "template <typename T> __attribute__((noinline)) T add(T a, T b) { return a + b; }\n"
	      "extern \"C\" void *tmpl_addr(void) { return (void *)&add<int>; }\n",
	      f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/s.c", tmpdir);
	f = fopen(path, "w");
	if (!f) {
		ok(0, "writing %s", path);
		return;
	}
	fputs("__attribute__((noinline)) static int hidden(int x) { return x + 5; }\n"
	      "void *hidden_addr(void) { return (void *)&hidden; }\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && g++ -O1 -shared -fPIC -o libk.so k.cc && "
		 "gcc -O1 -shared -fPIC -s -o libs.so s.c && cp libk.so libk2.so",
		 tmpdir);
	if (run(cmd) != 0) {
		tap_skip(10, "no C++ compiler");
		return;
	}
	snprintf(path, sizeof(path), "%s/libk.so", tmpdir);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	snprintf(path, sizeof(path), "%s/libk2.so", tmpdir);
	void *h2 = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	snprintf(path, sizeof(path), "%s/libs.so", tmpdir);
	void *hs = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ok(h && h2 && hs, "dlopen the test libraries (%s)", dlerror());
	if (!h || !h2 || !hs)
		return;
	pid_t me = getpid();
	ok(symbolizer_load_pid(sym, me, NULL) == 0, "reload our maps after dlopen");
	struct symbolizer_stats before;
	symbolizer_stats(sym, &before);

	void *m = dlsym(h, "_ZN2ns5Klass6methodEi");
	void *(*tmpl)(void) = (void *(*)(void))dlsym(h, "tmpl_addr");
	ok(m && tmpl, "dlsym the C++ symbols");
	if (!m || !tmpl)
		return;
	is_str(symbolizer_addr(sym, me, (uint64_t)(uintptr_t)m + 1, 0, NULL, NULL),
	       "ns::Klass::method", "C++ member function demangled, arguments stripped");
	is_str(symbolizer_addr(sym, me, (uint64_t)(uintptr_t)tmpl() + 1, 0, NULL, NULL), "add<int>",
	       "template function without its return type");

	void *m2 = dlsym(h2, "_ZN2ns5Klass6methodEi");
	is_str(symbolizer_addr(sym, me, (uint64_t)(uintptr_t)m2 + 1, 0, NULL, NULL),
	       "ns::Klass::method", "same code from a copy of the library");
	struct symbolizer_stats after;
	symbolizer_stats(sym, &after);
	/* The build-id comes from the ELF sandbox with the table: both files
	 * are parsed there, and the second table is dropped for the first. */
	is_int(after.elf_loaded - before.elf_loaded, 2,
	       "two files, one build-id: two sandboxed parses");
	is_int(after.elf_shared - before.elf_shared, 1, "the copy shares the symbol table");

	void *(*hid)(void) = (void *(*)(void))dlsym(hs, "hidden_addr");
	enum symbolizer_kind kind;
	int resolved = 1;
	const char *name =
	    symbolizer_addr(sym, me, (uint64_t)(uintptr_t)hid() + 1, 0, &kind, &resolved);
	is_str(name, "[libs.so]", "stripped static function labelled by its module");
	ok(kind == SYMBOLIZER_KIND_NATIVE && !resolved, "native, unresolved");
}

static void test_stats(struct symbolizer *sym)
{
	struct symbolizer_stats st;
	symbolizer_stats(sym, &st);
	uint64_t total = 0;
	for (int k = 0; k < SYMBOLIZER_KIND_COUNT; k++) {
		tap_diag("%-8s frames %llu resolved %llu", symbolizer_kind_name(k),
			 (unsigned long long)st.frames[k], (unsigned long long)st.resolved[k]);
		total += st.frames[k];
		ok(st.resolved[k] <= st.frames[k], "%s: resolved <= frames",
		   symbolizer_kind_name(k));
	}
	ok(total > 0 && st.frames[SYMBOLIZER_KIND_NATIVE] > 0, "frames counted per kind");
	ok(st.files > 0 && st.memory > 0, "ELF cache holds %zu files, %zu bytes", st.files,
	   st.memory);
}

int main(void)
{
	tap_plan(75);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_symbols.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		tap_skip_all("cannot create a temporary directory");
	test_kallsyms_parse();
	test_kallsyms_real();
	test_strip();
	test_elf_garbage();
	struct symbolizer *sym = NULL;
	struct fs_error err = {0};
	if (symbolizer_open(NULL, &sym, &err) < 0) {
		ok(0, "symbolizer_open: %s", err.msg);
		return tap_done();
	}
	if (access("/proc/self/map_files", R_OK) != 0) {
		tap_diag("/proc/self/map_files not readable: ELF tests need root");
	}
	test_self(sym);
	test_jit(sym);
	test_callchain(sym);
	test_cxx_and_shared(sym);
	test_stats(sym);
	symbolizer_close(sym);
	test_fake_proc();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", tmpdir);
	return tap_done();
}
