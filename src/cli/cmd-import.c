/*
 * gpusim: the `import-rmm-log` command (SPEC §2): an RMM logging-adaptor CSV
 * in, a scenario that `run` accepts out (to --out, else standard output).
 *
 * What the log becomes is rmmlog.h's to decide; the threads are grouped by
 * --groups or by --state-log (a Spark-RAPIDS state log of the same run).
 * This command reports each row that could not be used on stderr, one line
 * each with its line and column, and still writes the scenario made of the
 * others (exit status 0); a log it cannot read at all, or with no usable
 * allocation, is exit status 2 with nothing written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "report/output.h"
#include "scenario/rmmlog.h"
#include "scenario/statelog.h"

gboolean
gs_cmd_rmm_import(const char *command, const char *log_path, const GsRmmGroups *groups,
		  GsOutput *scenario, const char *out, gboolean quiet)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsRmmImport) import = gs_rmm_import(log_path, groups, &error);

	if (import == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return FALSE;
	}
	for (guint i = 0; i < import->problems->len; i++)
		fprintf(stderr, "%s\n", (const char *) import->problems->pdata[i]);
	if (import->yaml == NULL) {
		fprintf(stderr, "%s: no allocation in the log could be used; nothing written\n",
			log_path);
		return FALSE;
	}
	if (!gs_output_write(scenario, import->yaml, &error)) {
		fprintf(stderr, "gpusim %s: %s\n", command, error->message);
		return FALSE;
	}
	if (!quiet && out != NULL)
		fprintf(stderr, "%s: threads %u, allocations %u, frees %u (%u by another thread), "
				"failed allocations %u, rows left out %u; wrote %s\n",
			log_path, import->threads, import->allocations, import->frees,
			import->frees_across, import->failures, import->problems->len, out);
	return TRUE;
}

/* The groups a --groups file or a --state-log gives (at most one of them), or none. */
static gboolean
read_groups(const char *groups_path, const char *state_log, GsRmmGroups **groups)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsStateLog) log = NULL;

	*groups = NULL;
	if (groups_path != NULL && state_log != NULL) {
		fprintf(stderr, "gpusim import-rmm-log: give --groups or --state-log, not both\n");
		return FALSE;
	}
	if (groups_path != NULL)
		*groups = gs_rmm_groups_read(groups_path, &error);
	else if (state_log == NULL)
		return TRUE;
	else if ((log = gs_state_log_read(state_log, &error)) != NULL)
		*groups = gs_rmm_groups_from_state_log(log);
	if (*groups == NULL)
		fprintf(stderr, "%s\n", error->message);
	return *groups != NULL;
}

static int
import(const char *log_path, const char *groups_path, const char *state_log, const char *out,
       gboolean quiet)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *scenario = gs_output_set_add(set, out != NULL ? out : "-", &error);
	g_autoptr(GsRmmGroups) groups = NULL;

	if (scenario == NULL) {
		fprintf(stderr, "gpusim import-rmm-log: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!read_groups(groups_path, state_log, &groups) ||
	    !gs_cmd_rmm_import("import-rmm-log", log_path, groups, scenario, out, quiet))
		return GS_EXIT_USAGE;
	if (!gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim import-rmm-log: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	return GS_EXIT_OK;
}

int
gs_cmd_import_rmm_log(int argc, char **argv)
{
	g_autofree char *out = NULL;
	g_autofree char *groups = NULL;
	g_autofree char *state_log = NULL;
	gboolean quiet = FALSE;
	GOptionEntry entries[] = {
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
		 "Write the scenario here (default: standard output)", "SCENARIO.yaml"},
		{"groups", 'g', 0, G_OPTION_ARG_FILENAME, &groups,
		 "Group logged threads into tasks: lines THREAD,TASK", "GROUPS.csv"},
		{"state-log", 's', 0, G_OPTION_ARG_FILENAME, &state_log,
		 "Group logged threads into the tasks a Spark-RAPIDS state log of the same run "
		 "registers them for", "LOG"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print no summary line", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("LOG.csv");
	g_autoptr(GError) error = NULL;

	g_option_context_set_summary(
		context, "Turn an RMM logging-adaptor CSV (Thread,Time,Action,Pointer,Size,Stream)\n"
			 "into a scenario: one task per logged thread (or as --groups or --state-log\n"
			 "say), its allocations and frees in log order (a free on another thread frees\n"
			 "the allocating thread's buffer), the logged gaps as compute time, failed\n"
			 "allocations as comments.");
	g_option_context_set_description(context,
					 "Rows that cannot be used are reported with their line "
					 "numbers and left out.\n\nExit status: 0 a scenario was "
					 "written; 2 bad usage, or a log that cannot be used.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim import-rmm-log: %s\nTry 'gpusim import-rmm-log --help'.\n",
			error->message);
		return GS_EXIT_USAGE;
	}
	if (argc != 2) {
		fprintf(stderr, "gpusim import-rmm-log: give one log file\n"
				"Try 'gpusim import-rmm-log --help'.\n");
		return GS_EXIT_USAGE;
	}
	return import(argv[1], groups, state_log, out, quiet);
}
