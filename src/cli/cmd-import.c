/*
 * gpusim: the `import-rmm-log` command (SPEC §2): an RMM logging-adaptor CSV
 * in, a scenario that `run` accepts out (to --out, else standard output).
 *
 * What the log becomes is rmmlog.h's to decide. This command reports each row
 * that could not be used on stderr, one line each with its line and column,
 * and still writes the scenario made of the others (exit status 0); a log it
 * cannot read at all, or with no usable allocation, is exit status 2 with
 * nothing written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "report/output.h"
#include "scenario/rmmlog.h"

static int
import(const char *log_path, const char *groups_path, const char *out, gboolean quiet)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *scenario = gs_output_set_add(set, out != NULL ? out : "-", &error);
	g_autoptr(GsRmmGroups) groups = NULL;
	g_autoptr(GsRmmImport) import = NULL;

	if (scenario == NULL) {
		fprintf(stderr, "gpusim import-rmm-log: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (groups_path != NULL && (groups = gs_rmm_groups_read(groups_path, &error)) == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	import = gs_rmm_import(log_path, groups, &error);
	if (import == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	for (guint i = 0; i < import->problems->len; i++)
		fprintf(stderr, "%s\n", (const char *) import->problems->pdata[i]);
	if (import->yaml == NULL) {
		fprintf(stderr, "%s: no allocation in the log could be used; nothing written\n",
			log_path);
		return GS_EXIT_USAGE;
	}
	if (!gs_output_write(scenario, import->yaml, &error) ||
	    !gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim import-rmm-log: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!quiet && out != NULL)
		fprintf(stderr, "%s: threads %u, allocations %u, frees %u (%u by another thread), "
				"failed allocations %u, rows left out %u; wrote %s\n",
			log_path, import->threads, import->allocations, import->frees,
			import->frees_across, import->failures, import->problems->len, out);
	return GS_EXIT_OK;
}

int
gs_cmd_import_rmm_log(int argc, char **argv)
{
	g_autofree char *out = NULL;
	g_autofree char *groups = NULL;
	gboolean quiet = FALSE;
	GOptionEntry entries[] = {
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
		 "Write the scenario here (default: standard output)", "SCENARIO.yaml"},
		{"groups", 'g', 0, G_OPTION_ARG_FILENAME, &groups,
		 "Group logged threads into tasks: lines THREAD,TASK", "GROUPS.csv"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print no summary line", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("LOG.csv");
	g_autoptr(GError) error = NULL;

	g_option_context_set_summary(
		context, "Turn an RMM logging-adaptor CSV (Thread,Time,Action,Pointer,Size,Stream)\n"
			 "into a scenario: one task per logged thread (or as --groups says), its "
			 "allocations\nand frees in log order (a free on another thread frees the "
			 "allocating thread's\nbuffer), the logged gaps as compute time, failed "
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
	return import(argv[1], groups, out, quiet);
}
