/* fuzz_sandbox.c - arbitrary bytes as what the attach sandbox's child
 * sends its root parent (sandbox_parent_records): framed records {u32
 * type, u32 len} of data, errors, requests. The child talks to a
 * container's JVM and may be taken over by it, so the record loop is
 * container input. It must not crash, must keep the output within max_out
 * and NUL-terminated, must hand requests over NUL-terminated and bounded,
 * must keep the child's error text printable, and must finish each input
 * within fuzz_bound.h's limit (an input that is cut short waits for the
 * deadline, given here as 50 ms: never longer).
 *
 * Byte 0: max_out in 4 KiB units (0: 1 MiB); the rest goes down a
 * socketpair as the child's stream, then EOF. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_bound.h"
#include "sandbox.h"
#include "timeutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

static int fs_on_request(const char *req, int target_pidfd, void *arg, struct fs_error *err)
{
	if (strlen(req) > 64 * 1024)
		abort();
	if (!strcmp(req, "sigquit"))
		return 0;
	return fs_error_set(err, EPERM, "request refused");
}

static void fs_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	if (size < 1 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	int big = 1 << 20;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	/* The parent's answers pile up unread: they fail, never block. */
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	size_t at = 1;
	while (at < size) {
		ssize_t n = write(sv[1], data + at, size - at);
		if (n <= 0)
			break;
		at += (size_t)n;
	}
	shutdown(sv[1], SHUT_WR);
	struct sandbox_job job = {.on_request = fs_on_request,
				  .max_out = data[0] ? (size_t)data[0] << 12 : (size_t)1 << 20,
				  .timeout_ms = 50};
	char *out = NULL;
	size_t len = 0;
	struct fs_error err = {0};
	struct fuzz_bound t0 = fuzz_bound_start();
	int r = sandbox_parent_records(sv[0], &job, timeutil_now_ms() + 50, &out, &len, &err);
	if (r == 0) {
		if (!out || len > job.max_out || out[len] != '\0')
			abort();
		free(out);
	} else {
		if (out)
			abort();
		fs_printable(err.msg);
	}
	fuzz_bound_end(t0, "sandbox records", size);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
