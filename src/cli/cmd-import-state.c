/*
 * gpusim: the `import-state-log` command: a Spark-RAPIDS state log
 * in; its summary on standard output, each transition gpusim's model says
 * cannot happen on standard error with its line, and with --trace a Perfetto
 * trace of every thread's states.
 *
 * What the rows mean is statelog-report.h's to decide. Rows that cannot be
 * read are reported on stderr and left out. Exit status: 0 every transition
 * is possible; 1 some is not; 2 bad usage, or a log that cannot be read or
 * holds no row of the state logger, with nothing written.
 */
#include "config.h"

#include <stdio.h>

#include "cli/commands.h"
#include "report/output.h"
#include "report/statelog-report.h"
#include "scenario/statelog.h"

static int
import(const char *log_path, const char *trace_path)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *trace = NULL;
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) report = NULL;
	g_autofree char *summary = NULL;

	if (trace_path != NULL && (trace = gs_output_set_add(set, trace_path, &error)) == NULL) {
		fprintf(stderr, "gpusim import-state-log: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	log = gs_state_log_read(log_path, &error);
	if (log == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	report = gs_state_report_new(log);
	if (trace != NULL) {
		g_autofree char *process = g_strdup_printf("state log: %s", log_path);
		g_autofree char *json =
			gs_report_log_trace(process, report->events, report->span_us * 1000);

		if (!gs_output_write(trace, json, &error) || !gs_output_set_commit(set, &error)) {
			fprintf(stderr, "gpusim import-state-log: %s\n", error->message);
			return GS_EXIT_USAGE;
		}
	}
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
	g_autofree char *trace = NULL;
	GOptionEntry entries[] = {
		{"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace,
		 "Write a Perfetto trace of the threads' states here", "FILE.json"},
		G_OPTION_ENTRY_NULL,
	};
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
	return import(argv[1], trace);
}
