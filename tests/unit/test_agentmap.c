/* test_agentmap.c - the JVM-independent half of the JVMTI agent:
 * options, naming, line format, inlined ranges and the safe map open.
 * agent/ is not part of libfs.a, so the source is included directly. */
#include "../../agent/agentmap.c"

#include <stdarg.h>
#include <sys/stat.h>

#include "tap.h"

static struct agentmap_options opts(const char *s)
{
	struct agentmap_options o;
	struct fs_error err = {0};
	if (agentmap_parse_options(s, &o, &err) < 0)
		tap_diag("options '%s': %s", s, err.msg);
	return o;
}

static void test_options(void)
{
	struct agentmap_options o = opts(NULL);
	ok(o.dotted && o.unfold == AGENTMAP_UNFOLD_ALL && o.mode == AGENTMAP_MODE_DEFAULT &&
	       !o.msig && !o.sourcepos && !o.stop,
	   "defaults: dotted, unfoldall, mode by load kind");
	o = opts("mode=continuous,msig,sourcepos,nodottedclass,unfoldsimple");
	ok(o.mode == AGENTMAP_MODE_CONTINUOUS && o.msig && o.sourcepos && !o.dotted &&
	       o.unfold == AGENTMAP_UNFOLD_SIMPLE,
	   "a full option list");
	ok(opts("unfold").unfold == AGENTMAP_UNFOLD_IN, "unfold is 'inner in root'");
	ok(opts("nounfold").unfold == AGENTMAP_UNFOLD_NONE, "nounfold");
	ok(opts("unfoldall,,").unfold == AGENTMAP_UNFOLD_ALL, "empty items are ignored");
	ok(opts("oneshot").mode == AGENTMAP_MODE_ONESHOT, "bare oneshot (for jcmd)");
	ok(opts("mode:continuous").mode == AGENTMAP_MODE_CONTINUOUS, "mode:continuous");
	ok(opts("stop").stop, "stop");

	struct agentmap_options o2;
	struct fs_error err = {0};
	is_int(agentmap_parse_options("file=/etc/passwd", &o2, &err), -EINVAL, "file= refused");
	ok(strstr(err.msg, "file=") && strstr(err.msg, "/tmp/perf-<pid>.map"),
	   "file= error says why: %s", err.msg);
	is_int(agentmap_parse_options("msig,bogus", &o2, &err), -EINVAL, "unknown option refused");
	ok(strstr(err.msg, "'bogus'") != NULL, "error names the option: %s", err.msg);
	is_int(agentmap_parse_options("mode=fast", &o2, &err), -EINVAL, "bad mode refused");
	is_int(agentmap_parse_options("unfoldallx", &o2, &err), -EINVAL,
	       "prefix matches are not options");
}

static void test_names(void)
{
	char buf[256];
	struct agentmap_options o = opts(NULL);

	agentmap_class_name("Ljava/lang/String;", true, buf, sizeof(buf));
	is_str(buf, "java.lang.String", "dotted class name");
	agentmap_class_name("Ljava/lang/String;", false, buf, sizeof(buf));
	is_str(buf, "Ljava/lang/String;", "raw class signature");
	agentmap_class_name("[[I", true, buf, sizeof(buf));
	is_str(buf, "int[][]", "array class");
	agentmap_class_name("Lbroken", true, buf, sizeof(buf));
	is_str(buf, "Lbroken", "malformed signature kept as is");
	agentmap_class_name("Ljava/lang/String;", true, buf, 5);
	is_str(buf, "java", "truncated, NUL-terminated");

	agentmap_method_sig("(JLjava/lang/String;[I)V", true, buf, sizeof(buf));
	is_str(buf, "(long, java.lang.String, int[])", "dotted signature: parameters");
	agentmap_method_sig("()V", true, buf, sizeof(buf));
	is_str(buf, "()", "no parameters");
	agentmap_method_sig("(J)J", false, buf, sizeof(buf));
	is_str(buf, "(J)J", "raw descriptor when not dotted");
	agentmap_method_sig("(Q)V", true, buf, sizeof(buf));
	is_str(buf, "(Q)V", "unknown descriptor kept as is");

	agentmap_frame_name(&o, "Lflametest/Workload;", "hotMethod", "(J)J", NULL, -1, buf,
			    sizeof(buf));
	is_str(buf, "flametest.Workload.hotMethod", "default frame name");
	o.msig = true;
	agentmap_frame_name(&o, "Lflametest/Workload;", "hotMethod", "(J)J", "Workload.java", 42,
			    buf, sizeof(buf));
	is_str(buf, "flametest.Workload.hotMethod(long)(Workload.java:42)", "msig + sourcepos");
	o = opts("nodottedclass,msig");
	agentmap_frame_name(&o, "Lflametest/Workload;", "hotMethod", "(J)J", NULL, -1, buf,
			    sizeof(buf));
	is_str(buf, "Lflametest/Workload;::hotMethod(J)J", "perf-map-agent's own form");
}

static void test_join(void)
{
	const char *f[] = {"a.A.outer", "b.B.middle", "c.C.inner"};
	char buf[64];

	agentmap_join_frames(f, 3, buf, sizeof(buf));
	is_str(buf, "a.A.outer->b.B.middle->c.C.inner", "outermost first, joined by ->");
	agentmap_join_frames(f, 1, buf, sizeof(buf));
	is_str(buf, "a.A.outer", "one frame");
	agentmap_join_frames(f, 3, buf, 30);
	is_str(buf, "...->b.B.middle->c.C.inner", "cut keeps the innermost frames");
	agentmap_join_frames(f, 3, buf, 12);
	is_str(buf, "c.C.inner", "the innermost frame alone when nothing else fits");
}

static void test_lines(void)
{
	struct agentmap_buf b = {0};

	is_int(agentmap_append_line(&b, 0x7f0012345000ull, 0x1a0, "x.Y.z"), 0, "append");
	agentmap_append_line(&b, 0x10, 0, "empty");
	agentmap_append_line(&b, 0x20, 1,
			     "bad\nname\twith\x01"
			     "controls");
	agentmap_append_line(&b, 0x30, 2, "");
	const char want[] = "7f0012345000 1a0 x.Y.z\n"
			    "20 1 bad?name?with?controls\n"
			    "30 2 [unknown]\n";
	ok(b.len == sizeof(want) - 1 && memcmp(b.data, want, b.len) == 0,
	   "lines: lowercase hex without 0x, size 0 skipped, controls replaced");
	agentmap_buf_free(&b);

	char *longname = malloc(AGENTMAP_NAME_MAX * 2);
	memset(longname, 'x', AGENTMAP_NAME_MAX * 2 - 1);
	longname[AGENTMAP_NAME_MAX * 2 - 1] = '\0';
	agentmap_append_line(&b, 1, 1, longname);
	is_int(b.len, 4 + AGENTMAP_NAME_MAX + 1, "a long name is cut at AGENTMAP_NAME_MAX");
	ok(b.len && b.data[b.len - 1] == '\n', "and the line still ends");
	agentmap_buf_free(&b);
	free(longname);
}

/* The name the map in b gives addr (the last line containing it), or NULL. */
static const char *map_lookup(const struct agentmap_buf *b, uint64_t addr, char *out, size_t len)
{
	const char *found = NULL;
	for (const char *p = b->data, *e = b->data + b->len; p < e;) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		unsigned long long st, sz;
		int pos = 0;
		if (sscanf(p, "%llx %llx %n", &st, &sz, &pos) == 2 && addr >= st &&
		    addr - st < sz) {
			snprintf(out, len, "%.*s", (int)(nl - p - pos), p + pos);
			found = out;
		}
		p = nl + 1;
	}
	return found;
}

static void is_name_at(const struct agentmap_buf *b, uint64_t addr, const char *want,
		       const char *what)
{
	char buf[128];
	const char *got = map_lookup(b, addr, buf, sizeof(buf));
	if (!ok(got && strcmp(got, want) == 0, "%s", what))
		tap_diag("0x%llx: got '%s', want '%s'", (unsigned long long)addr,
			 got ? got : "(none)", want);
}

static void test_ranges(void)
{
	struct agentmap_buf b = {0};
	/* code 0x1000..0x1100; stray records (outside, backwards) are skipped */
	const uint64_t pcs[] = {0x1010, 0x1020, 0x1040, 0x1060, 0x0ff0, 0x1200, 0x1080, 0x1070};
	const char *names[] = {"R", "R->I", "R->I", "R", "junk", "junk", "R->J", "junk"};

	is_int(agentmap_append_ranges(&b, 0x1000, 0x100, pcs, names, 8, "R"), 0, "ranges");
	const char want[] = "1000 11 R\n"
			    "1011 30 R->I\n"
			    "1041 20 R\n"
			    "1061 20 R->J\n"
			    "1081 7f R\n";
	if (!ok(b.len == sizeof(want) - 1 && memcmp(b.data, want, b.len) == 0,
		"record i owns (pc[i-1], pc[i]]; equal names merge; strays skipped"))
		tap_diag("got:\n%.*s", (int)b.len, b.data);
	agentmap_buf_free(&b);

	/* A method laid out the way C2 emits one (answers by HotSpot's rules:
	 * a call's PcDesc pc is its return address; nmethod::pc_desc_near(a)
	 * is the record d with prev.pc < a <= d.pc; a caller frame is found
	 * by its return address, JFR's top frame by pc_desc_near(pc + 1)):
	 *   0x2000 prologue
	 *   0x2005 call A (inlined into R at bci 3), returns to 0x200a
	 *   0x2020 call B (inlined R->C->B),        returns to 0x2025
	 *   0x2030 safepoint poll in R's loop,       pc 0x2030
	 *   0x2040 call to an uncommon trap, the last instruction: pc 0x2050 */
	const uint64_t c2pcs[] = {0x200a, 0x2025, 0x2030, 0x2050};
	const char *c2names[] = {"R->A", "R->C->B", "R", "R->C"};
	agentmap_append_ranges(&b, 0x2000, 0x50, c2pcs, c2names, 4, "R");
	is_name_at(&b, 0x200a - 1, "R->A", "return address 0x200a (looked up at ret-1): call A");
	is_name_at(&b, 0x200a, "R->A", "return address 0x200a (perf, unadjusted): call A");
	is_name_at(&b, 0x2025 - 1, "R->C->B", "return address 0x2025 - 1: call B, not call A");
	is_name_at(&b, 0x2010 + 1, "R->C->B",
		   "leaf 0x2010 (looked up at pc+1): the code leading to call B");
	is_name_at(&b, 0x2025 + 1, "R", "leaf 0x2025 (back from B): the next record, the poll");
	is_name_at(&b, 0x2030 + 1, "R->C", "leaf at the poll: pc_desc_near(0x2031), the trap");
	is_name_at(&b, 0x2000, "R->A", "the prologue belongs to the first record");
	is_name_at(&b, 0x2050 - 1, "R->C", "a record at the very end is clamped to the code");
	ok(!map_lookup(&b, 0x2050, (char[8]){0}, 8), "nothing past the code");
	agentmap_buf_free(&b);

	b = (struct agentmap_buf){0};
	agentmap_append_ranges(&b, 0x1000, 0x10, NULL, NULL, 0, "R");
	ok(b.len == 10 && memcmp(b.data, "1000 10 R\n", 10) == 0, "no records: one line");
	agentmap_buf_free(&b);
}

static void test_timed_lines(void)
{
	struct agentmap_buf b = {0};
	ok(opts("mode=continuous,timed").timed, "option timed");
	ok(opts("continuous,timed,ttl=90").ttl_s == 90 && opts("ttl:7").ttl_s == 7,
	   "option ttl (ttl:N for jcmd)");
	struct agentmap_options o;
	struct fs_error err = {0};
	ok(agentmap_parse_options("ttl=9x", &o, &err) == -EINVAL &&
	       agentmap_parse_options("ttl=99999999999", &o, &err) == -EINVAL,
	   "ttl: digits only, at most a year");
	agentmap_append_load(&b, 0, 0x7f00aa000, 0x1a0, 0x55aa);
	agentmap_append_line(&b, 0x7f00aa000, 0x1a0, "x.Y.z");
	agentmap_append_unload(&b, 123456789012ull, 0x7f00aa000, 0x55aa);
	const char want[] =
	    "@0 7f00aa000 1a0 55aa\n7f00aa000 1a0 x.Y.z\n-123456789012 7f00aa000 55aa\n";
	if (!ok(b.len == sizeof(want) - 1 && memcmp(b.data, want, b.len) == 0,
		"timed log: load header, its lines, unload"))
		tap_diag("got:\n%.*s", (int)b.len, b.data);
	agentmap_buf_free(&b);
	ok(opts("safepointsonly").safepointsonly && !opts("timed").safepointsonly,
	   "option safepointsonly");
	agentmap_append_status(&b, "off (not set: x\ny)");
	agentmap_append_load(&b, 0, 0x10, 0x20, 0x1);
	agentmap_append_safepoints_only(&b);
	const char want2[] = "!nonsafepoints off (not set: x?y)\n@0 10 20 1\n!s\n";
	if (!ok(b.len == sizeof(want2) - 1 && memcmp(b.data, want2, b.len) == 0,
		"timed log: the flag's status (one line), a load marked safepoint-only"))
		tap_diag("got:\n%.*s", (int)b.len, b.data);
	agentmap_buf_free(&b);
}

static void test_open(void)
{
	char dir[] = "/tmp/test_agentmap.XXXXXX";
	char path[128], target[128];
	struct fs_error err = {0};
	struct stat st;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, 4242);
	mode_t old = umask(077);
	int fd = agentmap_open(dir, 4242, true, &err);
	umask(old);
	ok(fd >= 0, "creates the map: %s", fd < 0 ? err.msg : "ok");
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644, "mode 0644 despite umask 077");
	ok(agentmap_write_all(fd, "1 2 a\n", 6) == 0, "write");
	close(fd);
	fd = agentmap_open(dir, 4242, false, &err);
	agentmap_write_all(fd, "3 4 b\n", 6);
	close(fd);
	ok(stat(path, &st) == 0 && st.st_size == 12, "appends without truncate");
	fd = agentmap_open(dir, 4242, true, &err);
	close(fd);
	ok(stat(path, &st) == 0 && st.st_size == 0, "truncates when asked");

	unlink(path);
	snprintf(target, sizeof(target), "%s/victim", dir);
	close(open(target, O_WRONLY | O_CREAT, 0600));
	ok(symlink(target, path) == 0, "symlink planted");
	is_int(agentmap_open(dir, 4242, true, &err), -ELOOP, "a symlink is refused");
	ok(strstr(err.msg, "symbolic link") != NULL, "and says so: %s", err.msg);
	unlink(path);

	ok(link(target, path) == 0, "hard link planted");
	is_int(agentmap_open(dir, 4242, true, &err), -EPERM, "a second link is refused");
	unlink(path);

	ok(mkfifo(path, 0644) == 0, "fifo planted");
	/* With no reader the open must fail at once, not block the JVM. */
	is_int(agentmap_open(dir, 4242, true, &err), -ENXIO,
	       "a fifo with no reader is refused at once");
	ok(strstr(err.msg, "FIFO") != NULL, "and says so: %s", err.msg);
	fd = open(path, O_RDONLY | O_NONBLOCK); /* now with a reader */
	is_int(agentmap_open(dir, 4242, true, &err), -EPERM, "a fifo is refused");
	ok(strstr(err.msg, "not a regular file") != NULL, "and says so: %s", err.msg);
	close(fd);
	unlink(path);

	if (geteuid() == 0) {
		close(open(path, O_WRONLY | O_CREAT, 0644));
		ok(chown(path, 65534, 65534) == 0, "file of another user planted");
		is_int(agentmap_open(dir, 4242, true, &err), -EPERM,
		       "a file of another user is refused");
		unlink(path);
	} else {
		tap_skip(2, "needs root to plant another user's file");
	}
	unlink(target);
	rmdir(dir);
}

int main(void)
{
	tap_plan(69);
	test_options();
	test_names();
	test_join();
	test_lines();
	test_ranges();
	test_timed_lines();
	test_open();
	return tap_done();
}
