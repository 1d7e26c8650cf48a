/* main.c - flamehook entry point (see hook.c). */
#include <unistd.h>

#include "hook.h"

int main(int argc, char **argv)
{
	return hook_main(argc, argv, STDIN_FILENO);
}
