/*
 * gpusim: the `import-state-log` command: a Spark-RAPIDS state log
 * in; its summary on standard output, each transition gpusim's model says
 * cannot happen on standard error with its line, and with --trace a Perfetto
 * trace of every thread's states.
 *
 * With --rmm-log, the RMM log of the same run becomes a scenario (--out)
 * with its threads grouped into the tasks the state log registers them for
 * (rmmlog.h's gs_rmm_groups_from_state_log).
 *
 * What the rows mean is statelog-report.h's to decide. Rows that cannot be
 * read are reported on stderr and left out. Exit status: 0 every transition
 * is possible; 1 some is not; 2 bad usage, or a log that cannot be read or
 * holds no row of the state logger, or an RMM log with nothing to replay,
 * with nothing written.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "report/output.h"
#include "report/statelog-report.h"
#include "scenario/rmmlog.h"
#include "scenario/statelog.h"

typedef struct {
	const char *trace;   /* --trace, or NULL */
	const char *rmm_log; /* --rmm-log, or NULL */
	const char *out;     /* --out, given with --rmm-log */
} Paths;

/* The outputs asked for, added to @set: NULL for one not asked for. */
static gboolean
add_outputs(GsOutputSet *set, const Paths *paths, GsOutput **trace, GsOutput **scenario)
{
	g_autoptr(GError) error = NULL;

	*trace = *scenario = NULL;
	if ((paths->trace == NULL || (*trace = gs_output_set_add(set, paths->trace, &error))) &&
	    (paths->out == NULL || (*scenario = gs_output_set_add(set, paths->out, &error))))
		return TRUE;
	fprintf(stderr, "gpusim import-state-log: %s\n", error->message);
	return FALSE;
}

/* The trace and the scenario, written and committed together; FALSE with the reason printed. */
static gboolean
write_outputs(const Paths *paths, const GsStateLog *log, const GsStateReport *report)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *trace, *scenario;

	if (!add_outputs(set, paths, &trace, &scenario))
		return FALSE;
	if (trace != NULL) {
		g_autofree char *process = g_strdup_printf("state log: %s", log->path);
		g_autofree char *json =
			gs_report_log_trace(process, report->events, report->span_us * 1000);

		if (!gs_output_write(trace, json, &error))
			goto fail;
	}
	if (scenario != NULL) {
		g_autoptr(GsRmmGroups) groups = gs_rmm_groups_from_state_log(log);

		if (!gs_cmd_rmm_import("import-state-log", paths->rmm_log, groups, scenario,
				       paths->out, FALSE))
			return FALSE;
	}
	if (gs_output_set_commit(set, &error))
		return TRUE;
fail:
	fprintf(stderr, "gpusim import-state-log: %s\n", error->message);
	return FALSE;
}

static int
import(const char *log_path, const Paths *paths)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) report = NULL;
	g_autofree char *summary = NULL;

	log = gs_state_log_read(log_path, &error);
	if (log == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	report = gs_state_report_new(log);
	if (!write_outputs(paths, log, report))
		return GS_EXIT_USAGE;
	for (guint i = 0; i < log->problems->len; i++)
		fprintf(stderr, "%s\n", (const char *) log->problems->pdata[i]);
	for (guint i = 0; i < report->impossible->len; i++)
		fprintf(stderr, "%s\n", (const char *) report->impossible->pdata[i]);
	summary = gs_state_report_summary(report, log);
	fputs(summary, stdout);
	return report->impossible->len > 0 ? GS_EXIT_EXPECTATION : GS_EXIT_OK;
}

int
gs_cmd_import_state_log(int argc, char **argv)
{
	g_autofree char *trace = NULL, *rmm_log = NULL, *out = NULL;
	GOptionEntry entries[] = {
		{"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace,
		 "Write a Perfetto trace of the threads' states here", "FILE.json"},
		{"rmm-log", 'r', 0, G_OPTION_ARG_FILENAME, &rmm_log,
		 "The RMM log of the same run: write it as a scenario (--out) with its threads in "
		 "their tasks", "LOG.csv"},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
		 "Write --rmm-log's scenario here", "SCENARIO.yaml"},
		G_OPTION_ENTRY_NULL,
	};
	Paths paths;
	g_autoptr(GOptionContext) context = g_option_context_new("LOG");
	g_autoptr(GError) error = NULL;

	g_option_context_set_summary(
		context, "Read the state log of Spark-RAPIDS' OOM state machine (SparkResourceAdaptor's\n"
			 "time,op,current thread,op thread,op task,from state,to state,notes; every\n"
			 "version since 2023) and report the time each task and thread spent in each\n"
			 "state, what was thrown and decided, how often the deadlock check fired, and\n"
			 "every transition gpusim's model of the state machine says cannot happen.");
	g_option_context_set_description(
		context, "Lines of other loggers are skipped and counted; rows that cannot be read "
			 "are\nreported with their line numbers and left out.\n\nExit status: 0 every "
			 "transition is possible; 1 some transition is not (each\nis reported on "
			 "standard error with its line); 2 bad usage, or a log that cannot\nbe read.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim import-state-log: %s\nTry 'gpusim import-state-log --help'.\n",
			error->message);
		return GS_EXIT_USAGE;
	}
	if (argc != 2) {
		fprintf(stderr, "gpusim import-state-log: give one log file\n"
				"Try 'gpusim import-state-log --help'.\n");
		return GS_EXIT_USAGE;
	}
	if ((rmm_log == NULL) != (out == NULL)) {
		fprintf(stderr, "gpusim import-state-log: --rmm-log and --out go together\n"
				"Try 'gpusim import-state-log --help'.\n");
		return GS_EXIT_USAGE;
	}
	if (out != NULL && strcmp(out, "-") == 0) {
		fprintf(stderr, "gpusim import-state-log: the summary goes to standard output; "
				"give --out a file\n");
		return GS_EXIT_USAGE;
	}
	paths = (Paths){trace, rmm_log, out};
	return import(argv[1], &paths);
}
