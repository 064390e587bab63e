/*
 * gpusim: the program's commands and its exit statuses (SPEC §2).
 *
 * Each command takes the arguments after the command word (argv[0] is the
 * command) and returns the process exit status.
 */
#ifndef GPUSIM_COMMANDS_H
#define GPUSIM_COMMANDS_H

#include <glib.h>

#include "cli/drivers.h"

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
int gs_cmd_merge(int argc, char **argv);
int gs_cmd_explore(int argc, char **argv);
int gs_cmd_montecarlo(int argc, char **argv);
int gs_cmd_import_rmm_log(int argc, char **argv);
int gs_cmd_import_state_log(int argc, char **argv);
int gs_cmd_calibrate(int argc, char **argv);
int gs_cmd_predict(int argc, char **argv);

/*
 * What compare and sweep (gpusim @command) check alike once their options are
 * parsed: one scenario file left in @argv, --jobs not negative (0 becomes
 * one per processor), and @backend a driver of this build (NULL: the
 * simulator), which goes to *@driver; a real backend's runs go one at a
 * time (*@jobs becomes 1), since runs on one device must not overlap. TRUE
 * when all hold; *@out is then the output directory, the one given or
 * NAME.@command for the scenario NAME.yaml, in the working directory.
 * Otherwise prints why and sets *@status to GS_EXIT_USAGE (bad usage, an
 * unknown backend) or GS_EXIT_BACKEND (a backend not in this build).
 */
gboolean gs_cmd_check_batch(const char *command, int argc, char **argv, gint *jobs,
			    const char *backend, const GsDriver **driver, char **out, int *status);

/*
 * The exit status for a driver's or backend's error (GS_BACKEND_ERROR_*):
 * GS_EXIT_BACKEND when it is not in this build or there is no device,
 * GS_EXIT_INTERNAL when the device failed, GS_EXIT_USAGE otherwise.
 */
int gs_cmd_backend_status(const GError *error);

/*
 * What import-rmm-log and import-state-log --rmm-log share: imports the RMM
 * log at @log_path with @groups (NULL: none) and writes the scenario to
 * @scenario (of a set the caller commits), reporting the rows left out on
 * stderr and, unless @quiet or @out is NULL (standard output), a summary
 * line. FALSE, with the reason printed, when there is nothing to write.
 */
struct GsOutput;
struct GsRmmGroups;
gboolean gs_cmd_rmm_import(const char *command, const char *log_path,
			   const struct GsRmmGroups *groups, struct GsOutput *scenario,
			   const char *out, gboolean quiet);

#endif /* GPUSIM_COMMANDS_H */
