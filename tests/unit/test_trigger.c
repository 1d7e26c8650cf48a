/* test_trigger.c - the trigger plan (hook/trigger.c: which annotations
 * start a profile, with what caps) and the in-progress marker the monitor
 * writes and the hook and `list` read (lib/marker.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "hook.h"
#include "marker.h"
#include "proc.h"
#include "registry.h"
#include "tap.h"

static int plan(const struct fs_config *cfg, const char *profile, const char *delay,
		const char *freq, struct trigger_plan *p, char *note, size_t note_len)
{
	struct registry_entry e;
	struct fs_error err;
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "ctr");
	snprintf(e.profile, sizeof(e.profile), "%s", profile);
	snprintf(e.delay, sizeof(e.delay), "%s", delay);
	snprintf(e.frequency, sizeof(e.frequency), "%s", freq);
	return trigger_plan(cfg, &e, p, note, note_len, &err);
}

/* The plan of profile=30s with flamesidecar.io/event ev. */
static int plan_event(const struct fs_config *cfg, const char *ev, struct trigger_plan *p,
		      char *note, size_t note_len)
{
	struct registry_entry e;
	struct fs_error err;
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "ctr");
	snprintf(e.profile, sizeof(e.profile), "30s");
	snprintf(e.event, sizeof(e.event), "%s", ev);
	return trigger_plan(cfg, &e, p, note, note_len, &err);
}

static void test_event(void)
{
	struct fs_config cfg;
	struct trigger_plan p;
	char note[512];
	config_defaults(&cfg);
	is_int(plan_event(&cfg, "", &p, note, sizeof(note)), 0, "no event annotation: a plan");
	is_str(p.event, "cpu", "no event annotation: cpu");
	is_str(note, "", "nothing noted");
	const char *good[] = {"cpu", "offcpu", "wall"};
	for (size_t i = 0; i < 3; i++) {
		is_int(plan_event(&cfg, good[i], &p, note, sizeof(note)), 0, "%s: a plan", good[i]);
		is_str(p.event, good[i], "event %s kept", good[i]);
		is_str(note, "", "%s: nothing noted", good[i]);
	}
	/* hostile values: never an argument of `run`, never a refusal */
	const char *bad[] = {"OFFCPU", "wall ",	     " cpu",	   "offcpu;rm", "--output=/etc/x",
			     "-o",     "wall\nFAKE", "cpu,offcpu", "off",	"walls",
			     "/tmp/x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		is_int(plan_event(&cfg, bad[i], &p, note, sizeof(note)), 0,
		       "bad value %zu: still a profile", i);
		ok(!strcmp(p.event, "cpu") && strstr(note, "flamesidecar.io/event") &&
		       strstr(note, "is not cpu, offcpu or wall: a cpu profile"),
		   "bad value %zu: cpu, and the note says why", i);
	}
	/* noted beside a cap */
	struct registry_entry e;
	struct fs_error err;
	memset(&e, 0, sizeof(e));
	snprintf(e.id, sizeof(e.id), "ctr");
	snprintf(e.profile, sizeof(e.profile), "2h");
	snprintf(e.event, sizeof(e.event), "%063d", 7);
	is_int(trigger_plan(&cfg, &e, &p, note, sizeof(note), &err), 0,
	       "cap and bad event: a plan");
	ok(strstr(note, "duration capped") && strstr(note, "; flamesidecar.io/event \"0000"),
	   "both in the note: %s", note);
	is_str(p.event, "cpu", "and cpu");
}

static void test_plan(void)
{
	struct fs_config cfg;
	struct trigger_plan p;
	char note[256];
	config_defaults(&cfg);
	cfg.default_delay_seconds = 7;

	is_int(plan(&cfg, "30s", "", "", &p, note, sizeof(note)), 0, "30s: a plan");
	is_int(p.duration_s, 30, "duration");
	is_int(p.delay_s, 7, "no delay annotation: the config's default delay");
	is_int(p.frequency, 99, "no frequency annotation: 99 Hz");
	is_str(note, "", "nothing capped");

	is_int(plan(&cfg, "1.5s", "2m", "199Hz", &p, note, sizeof(note)), 0, "fraction, delay, Hz");
	is_int(p.duration_s, 2, "1.5 s rounds up to whole seconds");
	is_int(p.delay_s, 120, "delay 2m");
	is_int(p.frequency, 199, "frequency with Hz");

	is_int(plan(&cfg, "2h", "", "", &p, note, sizeof(note)), 0, "over the cap: still a plan");
	is_int(p.duration_s, cfg.max_profile_seconds, "duration capped by max_profile_seconds");
	ok(strstr(note, "duration capped") != NULL, "the note says so: %s", note);
	is_int(plan(&cfg, "10s", "1h", "100000", &p, note, sizeof(note)), 0, "delay, Hz over");
	is_int(p.delay_s, cfg.max_profile_seconds, "delay capped");
	is_int(p.frequency, cfg.max_frequency, "frequency capped by max_frequency");
	ok(strstr(note, "delay capped") && strstr(note, "frequency capped"), "both noted: %s",
	   note);

	/* 1193047h is 4294969200 s: past 2^32, it wrapped to 1905 s. */
	is_int(plan(&cfg, "1193047h", "1193047h", "", &p, note, sizeof(note)), 0,
	       "2^32 s and more");
	is_int(p.duration_s, cfg.max_profile_seconds, "1193047h is capped, not wrapped");
	is_int(p.delay_s, cfg.max_profile_seconds, "a 1193047h delay too");
	ok(strstr(note, "capped from 4294969200s"), "the note gives the real value: %s", note);
	is_int(plan(&cfg, "999999999h", "", "", &p, note, sizeof(note)), 0, "the largest duration");
	is_int(p.duration_s, cfg.max_profile_seconds, "capped too");
	is_int(plan(&cfg, "1193047h", "", "", &p, note, sizeof(note)), 0, "no delay annotation");
	is_int(p.delay_s, 7, "the default delay stays");

	is_int(plan(&cfg, "500ms", "", "", &p, note, sizeof(note)), -EINVAL, "under 1 s refused");
	is_int(plan(&cfg, "", "", "", &p, note, sizeof(note)), -EINVAL, "empty refused");
	is_int(plan(&cfg, "/etc/passwd", "", "", &p, note, sizeof(note)), -EINVAL, "path refused");
	is_int(plan(&cfg, "30s", "-5s", "", &p, note, sizeof(note)), -EINVAL, "negative delay");
	is_int(plan(&cfg, "30s", "", "0", &p, note, sizeof(note)), -EINVAL, "0 Hz refused");
	is_int(plan(&cfg, "30s", "", "99kHz", &p, note, sizeof(note)), -EINVAL, "unit refused");
	is_int(plan(&cfg, "30s", "", "-1", &p, note, sizeof(note)), -EINVAL, "negative Hz");
	cfg.max_concurrent_profiles = 0;
	is_int(plan(&cfg, "30s", "", "", &p, note, sizeof(note)), -EPERM,
	       "max_concurrent_profiles 0 disables triggers");
}

static void test_marker(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/ctr.json", dir);
	struct marker m = {
	    .pid = getpid(), .started = 1700000000, .delay = 5, .duration = 30, .frequency = 99};
	snprintf(m.id, sizeof(m.id), "ctr");
	snprintf(m.output, sizeof(m.output), "/var/lib/x/\"quoted\"\n.svg");
	proc_start_time(m.pid, &m.start_time, NULL);
	is_int(marker_write(path, &m), 0, "marker written");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct marker r;
	is_int(marker_read_at(dfd, "ctr.json", &r), 0, "marker read back");
	is_str(r.id, "ctr", "id");
	is_int(r.pid, m.pid, "pid");
	ok(r.start_time == m.start_time && r.started == m.started, "start time, started");
	ok(r.delay == 5 && r.duration == 30 && r.frequency == 99, "delay, duration, frequency");
	is_str(r.output, m.output, "output with a quote and a newline survives");
	ok(marker_alive(&r), "our own marker is alive");
	r.start_time++;
	ok(!marker_alive(&r), "another start time: a recycled pid is not believed");

	FILE *f = fopen(path, "w");
	fputs("{\"id\":\"../x\",\"pid\":1,\"start_time\":1}", f);
	fclose(f);
	is_int(marker_read_at(dfd, "ctr.json", &r), -EINVAL, "an id that is not an id: refused");
	f = fopen(path, "w");
	fputs("{\"id\":\"ctr\",\"start_time\":1}", f);
	fclose(f);
	is_int(marker_read_at(dfd, "ctr.json", &r), -EINVAL, "no pid: refused");
	char link[4096];
	snprintf(link, sizeof(link), "%s/link.json", dir);
	ok(symlink(path, link) == 0, "symlink made");
	ok(marker_read_at(dfd, "link.json", &r) == -ELOOP, "a symlinked marker is not followed");
	ok(marker_write(link, &m) == -ELOOP, "nor written through");
	unlink(link);
	unlink(path);
	close(dfd);
}

int main(void)
{
	tap_plan(46 + 3 + 9 + 22 + 3);
	test_plan();
	test_event();
	char dir[] = "/tmp/test_trigger.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	test_marker(dir);
	rmdir(dir);
	return tap_done();
}
