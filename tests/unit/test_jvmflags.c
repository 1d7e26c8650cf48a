/* test_jvmflags.c - does a JVM keep frame pointers (sidecar/jvm/jvmflags.c):
 * the decision from JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, the command line
 * and _JAVA_OPTIONS, and the same read from a real process's /proc. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvmflags.h"
#include "tap.h"

#define ON  "-XX:+PreserveFramePointer"
#define OFF "-XX:-PreserveFramePointer"

/* A NUL-separated command line from a literal with '|' between words. */
static int decide(const char *tool, const char *jdk, const char *cmd, const char *under)
{
	char buf[1024];
	size_t n = strlen(cmd);
	memcpy(buf, cmd, n + 1);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '|')
			buf[i] = '\0';
	return jvmflags_decide(tool, jdk, buf, n + 1, under);
}

static void test_decide(void)
{
	is_int(decide(NULL, NULL, "java|-cp|x|Main", NULL), 1,
	       "nothing said: missing (the JVM's default is off)");
	is_int(decide(NULL, NULL, "java|" ON "|Main", NULL), 0, "on the command line");
	is_int(decide(NULL, NULL, "java|" ON "|" OFF "|Main", NULL), 1, "the last setting wins");
	is_int(decide(NULL, NULL, "java|-cp|" ON "|Main", NULL), 1,
	       "the value of -cp is not an option");
	is_int(decide(NULL, NULL, "java|-jar|app.jar|" ON, NULL), 1,
	       "after -jar FILE: the program's arguments");
	is_int(decide(NULL, NULL, "java|Main|" ON, NULL), 1, "after the main class: arguments");
	is_int(decide(NULL, NULL, "java|--module-path|m|-m|mod/Main|" ON, NULL), 1,
	       "after -m: arguments");
	is_int(decide(ON, NULL, "java|Main", NULL), 0, "JAVA_TOOL_OPTIONS");
	is_int(decide("-Xmx1g  " ON "\t-Dx=y", NULL, "java|Main", NULL), 0,
	       "JAVA_TOOL_OPTIONS with other words and tabs");
	is_int(decide(NULL, ON, "java|Main", NULL), 0, "JDK_JAVA_OPTIONS");
	is_int(decide(ON, NULL, "java|" OFF "|Main", NULL), 1,
	       "the command line overrides JAVA_TOOL_OPTIONS");
	is_int(decide(NULL, OFF, "java|" ON "|Main", OFF), 1, "_JAVA_OPTIONS comes last");
	is_int(decide(OFF, NULL, "java|Main", ON), 0, "_JAVA_OPTIONS overrides everything");
	is_int(decide(NULL, NULL, "java|-XX:+PreserveFramePointerX|Main", NULL), 1,
	       "a longer word is not the option");
	is_int(decide("x" ON, NULL, "java|Main", NULL), 1, "nor a word that only ends with it");
	is_int(jvmflags_decide(NULL, NULL, "", 0, NULL), 1, "empty command line");
}

/* A child whose command line and environment are the JVM's words. */
static void test_proc(void)
{
	int fds[2];
	if (pipe(fds) < 0) {
		ok(0, "pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[1]);
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", fds[0]);
		char *argv[] = {"sh", "-c", "read x <&$0", fd, ON, NULL};
		char *envp[] = {"JAVA_TOOL_OPTIONS=" OFF, NULL};
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	close(fds[0]);
	/* wait for the exec: the command line is then the child's own */
	char path[64], buf[256] = "";
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	for (int i = 0; i < 200 && strncmp(buf, "sh", 2); i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
		}
		usleep(5000);
	}
	struct fs_error err;
	/* argv "sh -c 'read...' FD ON": the script is where the options end
	 * (like a main class), so the ON after it is an argument and the
	 * environment's OFF decides. */
	is_int(jvmflags_fp_missing(pid, &err), 1, "from /proc: environment and command line");
	close(fds[1]);
	waitpid(pid, NULL, 0);
	is_int(jvmflags_fp_missing(pid, &err), -ENOENT, "a process that is gone: -ENOENT");
}

int main(void)
{
	tap_plan(18);
	test_decide();
	test_proc();
	return tap_done();
}
