/*
 * gpusim: the program's commands and its exit statuses (SPEC §2).
 *
 * Each command takes the arguments after the command word (argv[0] is the
 * command) and returns the process exit status.
 */
#ifndef GPUSIM_COMMANDS_H
#define GPUSIM_COMMANDS_H

enum {
	GS_EXIT_OK = 0,
	GS_EXIT_EXPECTATION = 1, /* ran, and an expectation failed */
	GS_EXIT_USAGE = 2,       /* bad usage or an invalid scenario */
	GS_EXIT_BACKEND = 3,     /* the backend is unavailable */
	GS_EXIT_INTERNAL = 4,
};

int gs_cmd_run(int argc, char **argv);
int gs_cmd_calibrate(int argc, char **argv);

#endif /* GPUSIM_COMMANDS_H */
