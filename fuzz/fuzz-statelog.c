/*
 * gpusim fuzzing: import-state-log's reader, then its walk, summary and
 * trace. The input is a Spark-RAPIDS state log. Every problem it reports and
 * every impossible transition must be positioned, and the trace must be
 * written whatever the rows say.
 */
#include "config.h"

#include "harness.h"
#include "report/statelog-report.h"
#include "scenario/statelog.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsStateLog) log =
		gs_state_log_read_text("fuzz.log", (const char *) data, size, &error);
	g_autoptr(GsStateReport) report = NULL;
	g_autofree char *summary = NULL, *trace = NULL, *events = NULL;

	if (log == NULL) {
		fuzz_check_message("read error", error->message);
		return 0;
	}
	for (guint i = 0; i < log->problems->len; i++)
		fuzz_check_message("row problem", log->problems->pdata[i]);
	report = gs_state_report_new(log);
	for (guint i = 0; i < report->impossible->len; i++)
		fuzz_check_message("impossible transition", report->impossible->pdata[i]);
	summary = gs_state_report_summary(report, log);
	trace = gs_report_log_trace("fuzz", report->events, report->span_us * 1000);
	events = gs_report_events(report->events);
	return 0;
}
