/* test_hookstate.c - OCI state parsing, bundle config, and the mount
 * point walk (no symlink ever followed, missing directories created). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook.h"
#include "logfile.h"
#include "tap.h"

static int state(const char *json, struct hook_state *st)
{
	struct fs_error err;
	return hook_state_parse(json, strlen(json), st, &err);
}

int main(void)
{
	tap_plan(48);
	struct hook_state st;
	enum hook_stage sg;
	is_int(hook_stage_parse("createRuntime", &sg), 0, "createRuntime");
	is_int(sg, HOOK_STAGE_CREATE, "is create");
	is_int(hook_stage_parse("prestart", &sg), 0, "prestart");
	is_int(sg, HOOK_STAGE_CREATE, "prestart does the same work");
	is_int(hook_stage_parse("poststop", &sg), 0, "poststop");
	is_int(hook_stage_parse("startContainer", &sg), -EINVAL, "startContainer is not ours");

	is_int(state("{\"ociVersion\":\"1.0.2\",\"id\":\"abc\",\"status\":\"created\",\"pid\":1234,"
		     "\"bundle\":\"/b\",\"annotations\":{\"flamesidecar.io/enable\":\"true\","
		     "\"flamesidecar.io/profile\":\"30s\"}}",
		     &st),
	       0, "full state");
	is_str(st.id, "abc", "id");
	is_int(st.pid, 1234, "pid");
	ok(st.enable, "enabled by annotation");
	is_str(st.profile, "30s", "profile annotation kept");
	is_int(state("{\"id\":\"abc\",\"annotations\":{\"flamesidecar.io/enable\":\"TRUE\"}}", &st),
	       0, "poststop-like state");
	ok(!st.enable, "only the exact value true enables");
	is_int(state("{\"id\":\"abc\",\"pid\":-1}", &st), -EINVAL, "negative pid");
	is_int(state("{\"id\":\"abc\",\"pid\":4294967296}", &st), -EINVAL, "2^32 pid");
	is_int(state("{\"id\":\"abc\",\"pid\":1.5}", &st), -EINVAL, "fractional pid");
	is_int(state("{\"id\":\"a/b\",\"pid\":5}", &st), -EINVAL, "id with /");
	is_int(state("{\"pid\":5}", &st), -EINVAL, "no id");
	is_int(state("{\"id\":\"a\",\"bundle\":\"rel\"}", &st), -EINVAL, "relative bundle");
	char big[400];
	snprintf(big, sizeof(big),
		 "{\"id\":\"a\",\"annotations\":{\"flamesidecar.io/profile\":\"%0200d\"}}", 0);
	is_int(state(big, &st), -EINVAL, "oversize annotation refused");
	is_int(state("{\"id\":\"a\",\"annotations\":{\"flamesidecar.io/event\":\"wall\"}}", &st), 0,
	       "event annotation");
	is_str(st.event, "wall", "event kept");
	/* an event is never a reason to refuse the container: an oversize one
	 * is cut (never a valid event then; the trigger logs it, gives cpu) */
	snprintf(big, sizeof(big),
		 "{\"id\":\"a\",\"annotations\":{\"flamesidecar.io/event\":\"%0200d\"}}", 0);
	is_int(state(big, &st), 0, "oversize event annotation: the state is still read");
	is_int((int)strlen(st.event), REGISTRY_ANNOTATION_MAX - 1, "cut to the annotation size");

	char dir[] = "/tmp/fshook.XXXXXX";
	ok(mkdtemp(dir) != NULL, "temp dir");
	char p[512];
	snprintf(p, sizeof(p), "%s/config.json", dir);
	FILE *f = fopen(p, "w");
	fputs("{\"root\":{\"path\":\"rootfs\"},\"process\":{\"user\":{\"uid\":1000,\"gid\":1001}},"
	      "\"linux\":{\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
	      "\"gidMappings\":[{\"containerID\":0,\"hostID\":200000,\"size\":65536}]}}",
	      f);
	fclose(f);
	struct hook_bundle b;
	struct fs_error err;
	is_int(hook_bundle_read(dir, &b, &err), 0, "bundle config");
	is_int(b.uid, 101000, "uid mapped to the host view");
	is_int(b.gid, 201001, "gid mapped to the host view");
	char want[512];
	snprintf(want, sizeof(want), "%s/rootfs", dir);
	is_str(b.rootfs, want, "relative root.path resolved against the bundle");

	/* Mount point walk in a scratch rootfs. */
	snprintf(p, sizeof(p), "%s/rootfs", dir);
	mkdir(p, 0755);
	int root = open(p, O_PATH | O_DIRECTORY);
	ok(root >= 0, "rootfs fd");
	int fd = hook_open_mount_point(root, "/opt/flamesidecar", &err);
	ok(fd >= 0, "missing directories are created");
	close(fd);
	snprintf(p, sizeof(p), "%s/rootfs/opt/flamesidecar", dir);
	struct stat sb;
	ok(stat(p, &sb) == 0 && S_ISDIR(sb.st_mode), "created as a directory");
	snprintf(p, sizeof(p), "%s/rootfs/lnk", dir);
	ok(symlink("/etc", p) == 0, "plant /lnk -> /etc");
	ok(hook_open_mount_point(root, "/lnk/x", &err) < 0, "a symlinked parent is refused");
	ok(strstr(err.msg, "symlink") != NULL, "and the message says so");
	snprintf(p, sizeof(p), "%s/rootfs/dangle", dir);
	ok(symlink("nowhere", p) == 0, "plant a dangling symlink");
	ok(hook_open_mount_point(root, "/dangle", &err) < 0,
	   "a dangling symlink is refused, not created through");
	snprintf(p, sizeof(p), "%s/nowhere", dir);
	ok(access(p, F_OK) != 0, "nothing created outside the rootfs");
	snprintf(p, sizeof(p), "%s/rootfs/fifo", dir);
	ok(mkfifo(p, 0644) == 0, "plant a FIFO");
	ok(hook_open_mount_point(root, "/fifo", &err) < 0 && strstr(err.msg, "FIFO"),
	   "a FIFO is refused");
	ok(hook_open_mount_point(root, "/opt/../etc", &err) == -EINVAL, "'..' refused");
	close(root);

	char esc[64];
	logfile_escape("a\nb\\c\x01\xff", esc, sizeof(esc), 0);
	is_str(esc, "a\\x0ab\\x5cc\\x01\\xff", "log escaping");
	/* The shared-mount check's mountinfo reader (container input). */
	{
		static const char mi[] =
		    "22 1 0:21 / / rw - tmpfs x rw\n"
		    "36 22 98:0 /a /opt rw,noatime shared:2 - ext4 /dev/x rw\n"
		    "37 22 98:0 /b /srv rw master:3 - ext4 /dev/x rw\n"
		    "38 22 98:0 /c /c\\040shared:9 rw - ext4 /dev/x rw,shared:1\n";
		struct fs_error e2;
		FILE *mf = fmemopen((void *)mi, sizeof(mi) - 1, "r");
		is_int(hook_mountinfo_shared(mf, 22, &e2), 0, "private mount: not shared");
		rewind(mf);
		is_int(hook_mountinfo_shared(mf, 36, &e2), 1, "shared:2: shared");
		rewind(mf);
		is_int(hook_mountinfo_shared(mf, 37, &e2), 0, "master only: not shared");
		rewind(mf);
		is_int(hook_mountinfo_shared(mf, 38, &e2), 0,
		       "shared: after the separator or escaped: not");
		rewind(mf);
		is_int(hook_mountinfo_shared(mf, 99, &e2), 1, "not listed: fail closed");
		fclose(mf);
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleanup");
	return tap_done();
}
