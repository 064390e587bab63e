/*
 * gpusim: the program's commands and its exit statuses (SPEC §2).
 *
 * Each command takes the arguments after the command word (argv[0] is the
 * command) and returns the process exit status.
 */
#ifndef GPUSIM_COMMANDS_H
#define GPUSIM_COMMANDS_H

#include <glib.h>

enum {
	GS_EXIT_OK = 0,
	GS_EXIT_EXPECTATION = 1, /* ran, and an expectation failed */
	GS_EXIT_USAGE = 2,       /* bad usage or an invalid scenario */
	GS_EXIT_BACKEND = 3,     /* the backend is unavailable */
	GS_EXIT_INTERNAL = 4,
};

int gs_cmd_run(int argc, char **argv);
int gs_cmd_compare(int argc, char **argv);
int gs_cmd_sweep(int argc, char **argv);
int gs_cmd_import_rmm_log(int argc, char **argv);
int gs_cmd_calibrate(int argc, char **argv);

/*
 * For the commands that run only the simulator (compare, sweep): TRUE if
 * @backend is NULL or "sim"; else prints why and sets *@status to
 * GS_EXIT_USAGE (an unknown backend) or GS_EXIT_BACKEND (a real backend: not
 * in this build, or available to `gpusim run` only).
 */
gboolean gs_cmd_check_backend(const char *backend, int *status);

#endif /* GPUSIM_COMMANDS_H */
