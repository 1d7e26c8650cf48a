/* test_vmflag.c - the agent's walk of the JVMFlag table (agent/vmflag.h)
 * over synthetic VMStructs/VMTypes tables laid out like HotSpot's, and
 * tables that lie: bad strides, counts, pointers into nothing, strings
 * without an end, a flag in read-only memory. A lie must cost "not found",
 * never a crash. Then what the agent does with the flag (agent/debuginfo.h):
 * set it once, remember the code compiled before. agent/ is not in libfs.a:
 * the sources are included, debuginfo.c with its table lookup redirected to
 * the synthetic tables. */
#include "../../agent/vmflag.c"
#include "../../agent/selfmem.c"

static int fake_tables_find(struct vmflag_tables *t, char *why, size_t why_len);
#define vmflag_tables_find fake_tables_find
#include "../../agent/debuginfo.c"
#undef vmflag_tables_find

#include <stddef.h>
#include <sys/mman.h>

#include "cleanup.h"

#include "tap.h"

/* HotSpot's VMStructEntry and VMTypeEntry (vmStructs.hpp). */
struct fake_struct {
	const char *type, *field, *type_string;
	int32_t is_static;
	uint64_t offset;
	void *address;
};

struct fake_type {
	const char *type, *super;
	int32_t is_oop, is_int, is_unsigned;
	uint64_t size;
};

/* A JVMFlag (JDK 17 and 25 keep _type, _name, _addr, _flags). */
struct fake_flag {
	int type;
	const char *name;
	void *addr;
	int flags;
};

static struct fake_flag *flag_table;
static size_t num_flags;
static bool dns, other;
static const bool ro_false = false;

static struct fake_flag flags_ok[] = {
    {0, "UseSerialGC", &other, 0},
    {0, "DebugNonSafepoints", &dns, 0},
    {0, NULL, NULL, 0},
};

static struct fake_struct structs[] = {
    {"Klass", "_name", "Symbol*", 0, 16, NULL},
    {"JVMFlag", "_type", "int", 0, offsetof(struct fake_flag, type), NULL},
    {"JVMFlag", "_name", "const char*", 0, offsetof(struct fake_flag, name), NULL},
    {"JVMFlag", "_addr", NULL, 0, offsetof(struct fake_flag, addr), NULL},
    {"JVMFlag", "_flags", "JVMFlag::Flags", 0, offsetof(struct fake_flag, flags), NULL},
    {"JVMFlag", "flags", "JVMFlag*", 1, 0, &flag_table},
    {"JVMFlag", "numFlags", "size_t", 1, 0, &num_flags},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static struct fake_type types[] = {
    {"Klass", NULL, 0, 0, 0, 200},
    {"JVMFlag", NULL, 0, 0, 0, sizeof(struct fake_flag)},
    {NULL, NULL, 0, 0, 0, 0},
};

static struct vmflag_tables tables(void)
{
	struct vmflag_tables t = {
	    .structs = (uint64_t)(uintptr_t)structs,
	    .s_type = offsetof(struct fake_struct, type),
	    .s_field = offsetof(struct fake_struct, field),
	    .s_static = offsetof(struct fake_struct, is_static),
	    .s_offset = offsetof(struct fake_struct, offset),
	    .s_address = offsetof(struct fake_struct, address),
	    .s_stride = sizeof(struct fake_struct),
	    .types = (uint64_t)(uintptr_t)types,
	    .t_type = offsetof(struct fake_type, type),
	    .t_size = offsetof(struct fake_type, size),
	    .t_stride = sizeof(struct fake_type),
	};
	return t;
}

/* Two pages: the first readable and writable, the second inaccessible. */
static char *guarded(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p =
	    mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	mprotect(p + pg, (size_t)pg, PROT_NONE);
	return p;
}

static int find(const struct vmflag_tables *t, struct vmflag *f, char *why, size_t len)
{
	memset(f, 0, sizeof(*f));
	why[0] = '\0';
	return vmflag_find(t, "DebugNonSafepoints", f, why, len);
}

static void test_found_and_set(void)
{
	struct vmflag_tables t = tables();
	struct vmflag f;
	char why[160];
	flag_table = flags_ok;
	num_flags = 2;
	dns = false;
	is_int(find(&t, &f, why, sizeof(why)), 0, "the flag is found");
	ok(f.addr == (uint64_t)(uintptr_t)&dns && !f.value, "its address and value");
	is_int(vmflag_set(&f, true), 0, "set");
	ok(dns && f.value, "the flag is on");
	ok(!other, "its neighbour untouched");
	is_int(find(&t, &f, why, sizeof(why)), 0, "found again");
	ok(f.value, "read back on");
	dns = false;
}

static void test_absent_and_odd(void)
{
	struct vmflag_tables t = tables();
	struct vmflag f;
	char why[160];
	struct fake_flag only_other[] = {{0, "UseSerialGC", &other, 0}};
	flag_table = only_other;
	num_flags = 1;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "absent: not found");
	ok(strstr(why, "no flag DebugNonSafepoints") != NULL, "and said: %s", why);

	uint8_t seven = 7;
	struct fake_flag not_bool[] = {{0, "DebugNonSafepoints", &seven, 0}};
	flag_table = not_bool;
	is_int(find(&t, &f, why, sizeof(why)), -EINVAL, "a value that is not a bool is refused");

	struct fake_flag ro[] = {{0, "DebugNonSafepoints", (void *)&ro_false, 0}};
	flag_table = ro;
	is_int(find(&t, &f, why, sizeof(why)), 0, "a flag in read-only memory is found");
	ok(vmflag_set(&f, true) < 0, "but not written (no fault)");
	ok(!ro_false, "and stays off");
}

static void test_lying_tables(void)
{
	struct vmflag_tables t = tables();
	struct vmflag f;
	char why[160];
	long pg = sysconf(_SC_PAGESIZE);

	flag_table = flags_ok;
	num_flags = (size_t)1 << 40;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "numFlags absurd: refused");
	num_flags = 2;

	t.s_stride = 0;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "stride 0: refused");
	t.s_stride = 1u << 20;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "stride huge: refused");
	t = tables();
	t.s_address = t.s_stride; /* past the entry */
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "a field outside the entry: refused");
	t = tables();
	t.structs = 0x10;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "a table at a null-ish address");
	t = tables();
	t.types = 0x10;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "no VMTypes: refused");
	t = tables();

	char *p = guarded();
	if (!ok(p != NULL, "guard pages")) {
		return;
	}
	/* a VMStructs table with no end marker, running into the guard page */
	size_t fit = (size_t)pg / sizeof(struct fake_struct);
	struct fake_struct *open_end = (struct fake_struct *)p;
	for (size_t i = 0; i < fit; i++)
		open_end[i] = structs[0];
	t.structs = (uint64_t)(uintptr_t)open_end;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT,
	       "VMStructs without an end: stops at the fault");
	t = tables();

	/* a flag table that numFlags says is longer than its memory */
	struct fake_flag *tail = (struct fake_flag *)(p + pg - 2 * sizeof(struct fake_flag));
	tail[0] = flags_ok[0];
	tail[1] = flags_ok[0];
	flag_table = tail;
	num_flags = 100;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "a flag table past its memory: not found");

	/* a flag name with no end before the guard page, then names into nothing */
	memset(p, 'D', (size_t)pg);
	struct fake_flag bad_names[] = {
	    {0, p + pg - 40, &other, 0},
	    {0, p + pg, &other, 0},
	    {0, "DebugNonSafepoints", &dns, 0},
	};
	flag_table = bad_names;
	num_flags = 3;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "a name running into the guard page");
	bad_names[0].name = p; /* longer than any name compared: skipped */
	bad_names[1].name = "x";
	is_int(find(&t, &f, why, sizeof(why)), 0, "an overlong name is skipped, the flag found");
	bad_names[2].addr = p + pg;
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "a value address into nothing");

	/* the flag table pointer itself points into nothing */
	flag_table = (struct fake_flag *)(p + pg);
	is_int(find(&t, &f, why, sizeof(why)), -ENOENT, "a flag table into nothing");
	struct vmflag bogus = {.addr = (uint64_t)(uintptr_t)(p + pg)};
	ok(vmflag_set(&bogus, true) < 0, "a write into nothing fails");
	munmap(p, 2 * (size_t)pg);
	flag_table = flags_ok;
	num_flags = 2;
}

/* JDK 8 to 10 name the type "Flag" */
static void test_old_name(void)
{
	struct fake_struct old_structs[FS_ARRAY_SIZE(structs)];
	struct fake_type old_types[FS_ARRAY_SIZE(types)];
	memcpy(old_structs, structs, sizeof(structs));
	memcpy(old_types, types, sizeof(types));
	for (size_t i = 0; old_structs[i].type; i++)
		if (!strcmp(old_structs[i].type, "JVMFlag"))
			old_structs[i].type = "Flag";
	old_types[1].type = "Flag";
	struct vmflag_tables t = tables();
	t.structs = (uint64_t)(uintptr_t)old_structs;
	t.types = (uint64_t)(uintptr_t)old_types;
	struct vmflag f;
	char why[160];
	flag_table = flags_ok;
	num_flags = 2;
	is_int(find(&t, &f, why, sizeof(why)), 0, "JDK 8's Flag table: found");
}

static void test_this_process(void)
{
	/* no libjvm.so here: the tables are missing, and that is said */
	struct vmflag_tables t;
	char why[160] = "";
	is_int(vmflag_tables_find(&t, why, sizeof(why)), -ENOENT, "no JVM: no tables");
	ok(strstr(why, "gHotSpotVMStructs") != NULL, "and said: %s", why);
}

/* the tables debuginfo.c finds: the synthetic ones, or none */
static bool have_tables = true;

static int fake_tables_find(struct vmflag_tables *t, char *why, size_t why_len)
{
	if (!have_tables)
		return vmflag_why(why, why_len, -ENOENT, "no tables in this test");
	*t = tables();
	return 0;
}

static void debuginfo_reset(void)
{
	free(di.code);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	memset(&di, 0, sizeof(di));
	di.lock = m;
}

static void test_debuginfo_set(void)
{
	char st[256];
	bool logged;
	debuginfo_reset();
	have_tables = true;
	flag_table = flags_ok;
	num_flags = 2;
	dns = false;
	is_int(debuginfo_attach(true, &logged), DEBUGINFO_SET, "first attach: the flag is set");
	ok(dns && logged, "in the JVM's memory, and said once");
	/* the replay of that attach: all of it compiled before */
	ok(debuginfo_note_load(0x1000, 0x100, 7, true) &&
	       debuginfo_note_load(0x2000, 0x80, 8, true),
	   "replayed code: safepoint-only");
	debuginfo_replay_done();
	ok(debuginfo_note_load(0x3000, 0x40, 9, false),
	   "loaded just after: a compilation in flight");
	di.t_mark -= 2 * DEBUGINFO_GRACE_NS;
	ok(!debuginfo_note_load(0x4000, 0x40, 10, false), "loaded later: complete");
	ok(strstr(debuginfo_status(st, sizeof(st)), "set (by the agent") && strstr(st, "3 methods"),
	   "status: %s", st);
	/* a later window */
	is_int(debuginfo_attach(true, &logged), DEBUGINFO_SET, "second attach: still set");
	ok(!logged, "and not said again");
	ok(debuginfo_note_load(0x1000, 0x100, 7, true), "replay: old code is still old");
	ok(!debuginfo_note_load(0x4000, 0x40, 10, true), "replay: new code is not");
	ok(!debuginfo_note_load(0x2000, 0x90, 8, true), "same start and method, other size: new");
	debuginfo_note_unload(0x1000, 7);
	ok(!debuginfo_note_load(0x1000, 0x100, 7, true), "unloaded, then the address reused: new");
	ok(!debuginfo_note_load(0x2000, 0x40, 99, false), "a live load at an old address: new");
	debuginfo_replay_done();
	dns = false;
}

static void test_debuginfo_other(void)
{
	char st[256];
	bool logged;
	/* on when first looked at: nothing is old */
	debuginfo_reset();
	have_tables = true;
	dns = true;
	is_int(debuginfo_attach(true, &logged), DEBUGINFO_ON, "on already");
	ok(!logged && !debuginfo_note_load(0x1000, 0x10, 1, true), "silent, and nothing is old");
	/* no tables: off, said, every replay is old */
	debuginfo_reset();
	have_tables = false;
	dns = false;
	is_int(debuginfo_attach(true, &logged), DEBUGINFO_OFF, "no tables: off");
	ok(logged && strstr(debuginfo_status(st, sizeof(st)), "off (not set: no tables"),
	   "said: %s", st);
	ok(debuginfo_note_load(0x1000, 0x10, 1, true), "replayed code is old");
	debuginfo_replay_done();
	di.t_mark -= 2 * DEBUGINFO_GRACE_NS;
	ok(!debuginfo_note_load(0x2000, 0x10, 2, false),
	   "code compiled during the window is not (JVMTI makes HotSpot record it)");
	/* safepointsonly, then an attach that allows it */
	debuginfo_reset();
	have_tables = true;
	is_int(debuginfo_attach(false, &logged), DEBUGINFO_OFF, "safepointsonly: left off");
	ok(!dns && strstr(debuginfo_status(st, sizeof(st)), "safepointsonly"), "said: %s", st);
	debuginfo_replay_done();
	is_int(debuginfo_attach(true, &logged), DEBUGINFO_SET, "a later attach may set it");
	ok(dns, "and does");
	debuginfo_replay_done();
	dns = false;
	/* a lying table: off, said, no crash */
	debuginfo_reset();
	num_flags = (size_t)1 << 40;
	is_int(debuginfo_attach(true, &logged), DEBUGINFO_OFF, "a lying table: off");
	ok(strstr(debuginfo_status(st, sizeof(st)), "numFlags"), "said: %s", st);
	debuginfo_replay_done();
	num_flags = 2;
	debuginfo_reset();
}

int main(void)
{
	tap_plan(55);
	test_found_and_set();
	test_absent_and_odd();
	test_lying_tables();
	test_old_name();
	test_this_process();
	test_debuginfo_set();
	test_debuginfo_other();
	return tap_done();
}
