/* test_names.c - names an engine gives a container: from the CRI and
 * nerdctl annotations, from Docker's and Podman's state on disk (files
 * laid out as those engines lay them out), and refused when they lie. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook.h"
#include "tap.h"

#define ID64 "3f2a9c0d1e2b3f2a9c0d1e2b3f2a9c0d1e2b3f2a9c0d1e2b3f2a9c0d1e2b3f2a"

static int state(const char *json, struct hook_state *st)
{
	struct fs_error err;
	return hook_state_parse(json, strlen(json), st, &err);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void annotations(void)
{
	struct hook_state st;
	is_int(state("{\"id\":\"c1\",\"pid\":5,\"bundle\":\"/b\",\"annotations\":{"
		     "\"io.kubernetes.cri.container-type\":\"container\","
		     "\"io.kubernetes.cri.sandbox-name\":\"checkout-7d9f\","
		     "\"io.kubernetes.cri.sandbox-namespace\":\"shop\","
		     "\"io.kubernetes.cri.container-name\":\"app\"}}",
		     &st),
	       0, "containerd CRI state");
	is_str(st.pod, "checkout-7d9f", "pod from containerd's CRI annotation");
	is_str(st.pod_namespace, "shop", "namespace");
	is_str(st.container, "app", "container name");
	is_str(st.engine, "kubernetes", "engine");
	ok(!st.sandbox, "an app container is not the sandbox");

	is_int(state("{\"id\":\"c2\",\"annotations\":{"
		     "\"io.kubernetes.cri.container-type\":\"sandbox\","
		     "\"io.kubernetes.cri.sandbox-name\":\"checkout-7d9f\","
		     "\"io.kubernetes.cri.sandbox-namespace\":\"shop\"}}",
		     &st),
	       0, "containerd sandbox state");
	ok(st.sandbox, "the pause container is recognised");

	is_int(
	    state(
		"{\"id\":\"c3\",\"annotations\":{"
		"\"io.kubernetes.cri-o.ContainerType\":\"container\","
		"\"io.kubernetes.pod.name\":\"web-0\",\"io.kubernetes.pod.namespace\":\"default\","
		"\"io.kubernetes.container.name\":\"jetty\"}}",
		&st),
	    0, "CRI-O state");
	is_str(st.pod, "web-0", "pod from CRI-O's annotation");
	is_str(st.container, "jetty", "container from CRI-O's annotation");

	is_int(state("{\"id\":\"c4\",\"annotations\":{\"nerdctl/name\":\"web\"}}", &st), 0,
	       "nerdctl");
	is_str(st.name, "web", "nerdctl name");
	is_int(st.name_source, REGISTRY_NAME_ANNOTATION, "an annotation's name is a claim");
	is_int(state("{\"id\":\"c4\",\"annotations\":{\"nerdctl/name\":\"web\","
		     "\"engine\":\"docker\",\"name_source\":\"engine\"}}",
		     &st),
	       0, "annotations that spell our registry's words");
	ok(!strcmp(st.engine, "nerdctl") && st.name_source == REGISTRY_NAME_ANNOTATION,
	   "change nothing: still a claim (%s)", st.engine);

	is_int(state("{\"id\":\"c5\",\"annotations\":{"
		     "\"io.kubernetes.cri.sandbox-name\":\"../../etc\","
		     "\"nerdctl/name\":\"a b\"}}",
		     &st),
	       0, "names that are not names do not fail the state");
	ok(!st.pod[0] && !st.name[0], "and are dropped");
	is_int(state("{\"id\":\"c6\",\"annotations\":{\"io.kubernetes.cri.sandbox-name\":7}}", &st),
	       0, "a non-string name is ignored");
	ok(!st.pod[0], "no pod");
}

static void docker_and_podman(const char *dir)
{
	struct hook_state st;
	struct fs_error err;
	char path[512], cdir[512];
	/* Docker: <data-root>/containers/<id>/{hostname,config.v2.json} */
	snprintf(cdir, sizeof(cdir), "%s/docker/containers/%s", dir, ID64);
	snprintf(path, sizeof(path), "mkdir -p %s", cdir);
	ok(system(path) == 0, "docker layout");
	snprintf(path, sizeof(path), "%s/config.v2.json", cdir);
	write_file(path, "{\"StreamConfig\":{},\"State\":{\"Running\":true},\"ID\":\"" ID64
			 "\",\"Name\":\"/flame-web\",\"Config\":{\"Hostname\":\"3f2a9c0d1e2b\"}}");
	char hostname[600];
	snprintf(hostname, sizeof(hostname), "%s/hostname", cdir);
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	is_int(
	    hook_names_from_engine_state("/run/docker/containerd/moby/" ID64, hostname, &st, &err),
	    0, "docker state read");
	is_str(st.name, "flame-web", "docker name without its slash");
	is_str(st.engine, "docker", "engine docker");
	/* docker run --annotation nerdctl/name=victim: a claim; Docker's
	 * own record names the container. */
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	snprintf(st.name, sizeof(st.name), "victim");
	snprintf(st.engine, sizeof(st.engine), "nerdctl");
	is_int(
	    hook_names_from_engine_state("/run/docker/containerd/moby/" ID64, hostname, &st, &err),
	    0, "docker state read under a name annotation");
	ok(!strcmp(st.name, "flame-web") && !strcmp(st.engine, "docker"),
	   "Docker's record wins over the annotation's claim (%s, %s)", st.name, st.engine);
	is_int(st.name_source, REGISTRY_NAME_ENGINE, "and says it is the engine's record");

	/* --network container:X: the hostname is X's; the name is still ours. */
	char shared[600];
	snprintf(shared, sizeof(shared), "%s/docker/containers/feedbeef/hostname", dir);
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	is_int(hook_names_from_engine_state("/b", shared, &st, &err), 0,
	       "a hostname shared from another container");
	is_str(st.name, "flame-web", "still finds this container's own config.v2.json");

	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", "other");
	is_int(hook_names_from_engine_state("/b", hostname, &st, &err), 0,
	       "an id without a config.v2.json");
	ok(!st.name[0], "no name then");
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	is_int(hook_names_from_engine_state("/b", "/etc/hostname", &st, &err), 0,
	       "a hostname bound from elsewhere is not followed up");
	ok(!st.name[0], "no name then");

	write_file(path, "{\"ID\":\"someoneelse\",\"Name\":\"/x\"}");
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	ok(hook_names_from_engine_state("/b", hostname, &st, &err) == -EINVAL,
	   "config.v2.json of another container refused");
	ok(!st.name[0], "no name taken from it");
	unlink(path);
	ok(symlink("/etc/passwd", path) == 0, "plant a symlink as config.v2.json");
	ok(hook_names_from_engine_state("/b", hostname, &st, &err) == -ELOOP,
	   "symlink not followed");

	/* Podman: <graphroot>/overlay-containers/{containers.json,<id>/userdata} */
	snprintf(path, sizeof(path), "mkdir -p %s/podman/overlay-containers/%s/userdata", dir,
		 ID64);
	ok(system(path) == 0, "podman layout");
	snprintf(path, sizeof(path), "%s/podman/overlay-containers/containers.json", dir);
	write_file(path, "[{\"id\":\"aaaa\",\"names\":[\"not-me\"]},{\"id\":\"" ID64
			 "\",\"names\":[\"flame-pod\",\"alias\"],\"image\":\"\"}]");
	char bundle[600];
	snprintf(bundle, sizeof(bundle), "%s/podman/overlay-containers/%s/userdata", dir, ID64);
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	is_int(
	    hook_names_from_engine_state(bundle, "/run/containers/x/userdata/hostname", &st, &err),
	    0, "podman state read");
	is_str(st.name, "flame-pod", "podman's first name");
	is_str(st.engine, "podman", "engine podman");
	is_int(st.name_source, REGISTRY_NAME_ENGINE, "podman's record is the engine's");
	/* podman run --annotation nerdctl/name=victim, and a CRI-O pod claim:
	 * Podman's own record names the container; the pod stays beside it. */
	is_int(state("{\"id\":\"" ID64 "\",\"annotations\":{\"nerdctl/name\":\"victim\"}}", &st), 0,
	       "a podman state with a name annotation");
	is_int(hook_names_from_engine_state(bundle, "", &st, &err), 0, "podman state read");
	ok(!strcmp(st.name, "flame-pod") && !strcmp(st.engine, "podman") &&
	       st.name_source == REGISTRY_NAME_ENGINE,
	   "Podman's record wins over the annotation's claim (%s, %s)", st.name, st.engine);
	is_int(state("{\"id\":\"" ID64 "\",\"annotations\":{"
		     "\"io.kubernetes.cri-o.ContainerType\":\"container\","
		     "\"io.kubernetes.pod.name\":\"web-0\",\"io.kubernetes.pod.namespace\":\"d\"}}",
		     &st),
	       0, "a podman state with CRI-O's pod annotations");
	is_int(hook_names_from_engine_state(bundle, "", &st, &err), 0, "podman state read");
	ok(!strcmp(st.name, "flame-pod") && !strcmp(st.pod, "web-0"),
	   "Podman's name, the pod kept beside it (%s, %s)", st.name, st.pod);
	/* Another id's record, or none: the claim stays, and says so. */
	is_int(state("{\"id\":\"" ID64 "\",\"annotations\":{\"nerdctl/name\":\"victim\"}}", &st), 0,
	       "a name annotation");
	write_file(path, "[{\"id\":\"aaaa\",\"names\":[\"victim\"]}]");
	is_int(hook_names_from_engine_state(bundle, "", &st, &err), 0, "no record of this id");
	ok(!strcmp(st.name, "victim") && st.name_source == REGISTRY_NAME_ANNOTATION,
	   "the claim stays a claim (%s)", st.name);
	/* The scan parses only the object that holds the id as a string:
	 * braces and quotes inside strings, the id as another container's
	 * name or inside an escaped string, pretty-printing, a damaged tail
	 * after the record. */
	static const struct {
		const char *json, *name;
		int rc;
	} scans[] = {
	    {"[{\"id\":\"a\",\"metadata\":\"{\\\"x\\\":\\\"}]\\\"\"},{\"id\":\"" ID64
	     "\",\"names\":[\"after-braces\"]}]",
	     "after-braces", 0},
	    {"[{\"id\":\"b\",\"names\":[\"" ID64 "\"]},{\"id\":\"" ID64
	     "\",\"names\":[\"the-real-one\"]}]",
	     "the-real-one", 0},
	    {"[{\"id\":\"c\",\"metadata\":\"\\\"" ID64
	     "\\\"\"},\n  {\n   \"names\" : [ \"pretty\" ] ,\n"
	     "   \"id\" : \"" ID64 "\"\n  }\n]\n",
	     "pretty", 0},
	    {"[\"" ID64 "\",{\"id\":\"" ID64 "\",\"names\":[\"past-a-string\"]},{\"id\":",
	     "past-a-string", 0},
	    /* "x\\" ends after an escaped backslash; "\\\"}]" goes on past
	     * an escaped quote */
	    {"[{\"id\":\"e\",\"m\":\"x\\\\\",\"n\":\"\\\\\\\"}]\"},{\"id\":\"" ID64
	     "\",\"names\":[\"after-backslashes\"]}]",
	     "after-backslashes", 0},
	    {"[{\"id\":\"" ID64 "\",\"names\":[\"x\"],}]", "", -EINVAL},
	    {"[{\"id\":\"d\",\"names\":[\"" ID64 "x\"]}]", "", 0},
	    {"  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"" ID64 "\"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	     "", -EINVAL},
	};
	for (size_t i = 0; i < sizeof(scans) / sizeof(scans[0]); i++) {
		write_file(path, scans[i].json);
		memset(&st, 0, sizeof(st));
		snprintf(st.id, sizeof(st.id), "%s", ID64);
		int r = hook_names_from_engine_state(bundle, "", &st, &err);
		ok(r == scans[i].rc && !strcmp(st.name, scans[i].name), "scan #%zu: %d '%s'", i, r,
		   st.name);
	}
	/* A store of 20,000 containers, this one last: found. */
	FILE *f = fopen(path, "w");
	ok(f != NULL, "a big containers.json");
	if (f) {
		fputs("[", f);
		for (int i = 0; i < 20000; i++)
			fprintf(f,
				"{\"id\":\"%064x\",\"names\":[\"n%d\"],\"metadata\":\"{\\\"a\\\":1}"
				"\"},",
				i, i);
		fputs("{\"id\":\"" ID64 "\",\"names\":[\"last-of-many\"]}]", f);
		fclose(f);
	}
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	is_int(hook_names_from_engine_state(bundle, "", &st, &err), 0, "big store read");
	is_str(st.name, "last-of-many", "the record at its end found");
	write_file(path, "[{\"id\":\"" ID64 "\",\"names\":[\"bad name\"]}]");
	memset(&st, 0, sizeof(st));
	snprintf(st.id, sizeof(st.id), "%s", ID64);
	is_int(hook_names_from_engine_state(bundle, "", &st, &err), 0, "invalid podman name");
	ok(!st.name[0], "is dropped");
	write_file(path, "{\"not\":\"an array\"}");
	ok(hook_names_from_engine_state(bundle, "", &st, &err) == -EINVAL, "bad containers.json");
	is_int(state("{\"id\":\"" ID64 "\",\"annotations\":{\"nerdctl/name\":\"victim\"}}", &st), 0,
	       "a name annotation");
	ok(hook_names_from_engine_state(bundle, "", &st, &err) == -EINVAL,
	   "an unreadable record is reported under a claim too");
	ok(!strcmp(st.name, "victim") && st.name_source == REGISTRY_NAME_ANNOTATION,
	   "and the claim is kept, as a claim");
}

int main(void)
{
	tap_plan(70);
	annotations();
	char dir[] = "/tmp/fsnames.XXXXXX";
	ok(mkdtemp(dir) != NULL, "temp dir");
	docker_and_podman(dir);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(system(cmd) == 0, "cleanup");
	return tap_done();
}
