/* pause.c - the pod sandbox's process for the CRI tests (what the
 * registry.k8s.io/pause image runs): sleep until told to stop. Built
 * static, so the image needs nothing else. */
#include <signal.h>
#include <unistd.h>

static void pause_stop(int sig)
{
	(void)sig;
	_exit(0);
}

int main(void)
{
	signal(SIGTERM, pause_stop);
	signal(SIGINT, pause_stop);
	for (;;)
		pause();
}
