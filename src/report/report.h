/*
 * gpusim: the output side of `gpusim run` (SPEC §2, §4).
 *
 * This module decides how a run is written down: the event log kept in memory
 * while the simulator runs, the result object (--json, schema
 * "gpusim-result/1"), the event lines (--events, JSON Lines), the Chrome /
 * Perfetto trace (--trace), the memory timeline (--timeline, CSV) and the
 * human summary. Every writer returns a newly allocated string (g_free it);
 * output.h puts it where the user asked. Nothing here decides what happened
 * in the run, and nothing here prints or writes a file.
 *
 * Formats (fixed, so that the same input gives the same bytes):
 *
 * - Result JSON: two-space indentation, keys in the order of SPEC §4; each
 *   task, thread and exception is one line. The resolved policy carries every
 *   key of SPEC §3.4 under its SPEC name, nested as in the scenario (spill,
 *   reservations), with words as the scenario spells them; the one duration,
 *   watchdog, is written as "watchdog_ns" in integer nanoseconds, like every
 *   other time in the result. Fields beyond SPEC §4: tasks[].failure (the
 *   exception that failed the last attempt, or null) and
 *   threads[].waiting_at_end. Only wall_ns differs between two runs.
 * - Event lines: one compact object per line, "t_ns" then "ev" then the
 *   fields of its kind (see gs_report_event_line()).
 * - Trace: {"traceEvents": [...], "displayTimeUnit": "ns"}, one event per
 *   line. Process 1 holds one track per distinct thread name (tid 1, 2, ... in
 *   the order of GsResult.threads, then names only the log knows, in order of
 *   appearance); each state is a complete event ("ph":"X", "cat":"state",
 *   name the state) from the transition into it to the next one, the last
 *   ending at the makespan; UNKNOWN (not registered) is drawn as a gap.
 *   Throws and deadlock decisions are thread-scoped instants ("ph":"i"), and
 *   so is an imported log's mark ("cat":"mark", named what it marks).
 *   Counter events ("ph":"C") named "gpu memory", "host memory", "disk memory"
 *   (series "used" and "charged") and "threads" (running, blocked, bufn) come
 *   from the timeline. "ts" and "dur" are microseconds, as the format wants,
 *   written with exactly three decimals so that they keep whole nanoseconds.
 * - Timeline CSV: the header below, then one row per sample, integers only.
 */
#ifndef GPUSIM_REPORT_H
#define GPUSIM_REPORT_H

#include <gpusim/gpusim.h>

#include "run/result.h"
#include "report/expect.h"
#include "report/output.h"

G_BEGIN_DECLS

/* ---- the event log ---- */

/* GsEventLog (typedef in expect.h): the entries the simulator logged, copied
 * with their strings, in order. */

GsEventLog *gs_event_log_new(void);
void gs_event_log_free(GsEventLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsEventLog, gs_event_log_free)

/** A GsLogFunc: pass gs_event_log_add as GsRunOptions.log and the log as log_data. */
void gs_event_log_add(const GsLogEntry *entry, gpointer log);

/** The entries (GsLogEntry, whose strings the log owns), in the order logged. */
const GArray *gs_event_log_entries(const GsEventLog *log);

/* ---- the writers ---- */

/**
 * The result object of SPEC §4. @backend is "sim" or "cuda"; @wall_ns the
 * real time the run took; @expectations may be NULL (nothing checked).
 */
char *gs_report_json(const GsWorkload *w, const GsResult *r, const char *backend, gint64 wall_ns,
		     const GsExpectReport *expectations);

/* Takes a writer's output a piece at a time; FALSE when it could not keep one. */
typedef gboolean (*GsReportSink)(const char *data, gsize len, gpointer sink_data);

/**
 * gs_report_json(), the same bytes handed to @sink in pieces of about
 * 64 KiB as they are made, so that a long run's result is never whole in
 * memory; once @sink refuses a piece, the pieces after it are dropped.
 */
void gs_report_json_to(const GsWorkload *w, const GsResult *r, const char *backend,
		       gint64 wall_ns, const GsExpectReport *expectations, GsReportSink sink,
		       gpointer sink_data);

/** gs_report_json_to() the output @out (output.h); FALSE with @error set when it fails. */
gboolean gs_report_json_write(GsOutput *out, const GsWorkload *w, const GsResult *r,
			      const char *backend, gint64 wall_ns,
			      const GsExpectReport *expectations, GError **error);

/**
 * One event line, without its newline:
 *   {"t_ns":T,"ev":"state","thread":N,"from":S,"to":S}
 *   {"t_ns":T,"ev":"throw","thread":N,"type":E,"handled":B}
 *   {"t_ns":T,"ev":"alloc","thread":N,"buf":B,"bytes":I,"tier":"gpu","ok":B[,"usage":I]}
 *   {"t_ns":T,"ev":"free","thread":N,"buf":B,"bytes":I,"tier":"gpu"[,"of":N]}
 *   {"t_ns":T,"ev":"free_wait","thread":N,"of":N,"buf":B}
 *   {"t_ns":T,"ev":"deadlock","victim":N,"action":"rollback|retry_once|split"}
 *   {"t_ns":T,"ev":"task","task":ID,"what":W}
 *   {"t_ns":T,"ev":"semaphore","task":ID,"what":W}
 *   {"t_ns":T,"ev":"mark","thread":N,"what":W}
 * A missing (NULL) string is written as null.
 */
char *gs_report_event_line(const GsLogEntry *entry);

/** Every entry of @log as an event line, each ended by a newline. */
char *gs_report_events(const GsEventLog *log);

/** The Chrome trace event JSON of a run; @log may be NULL (no state tracks then). */
char *gs_report_trace(const GsWorkload *w, const GsResult *r, const GsEventLog *log);

/**
 * The same trace for a log that is not a run's (an imported state log):
 * process @process, one track per thread @log names, states drawn until @end;
 * no counters.
 */
char *gs_report_log_trace(const char *process, const GsEventLog *log, GsTime end);

/**
 * The timeline as CSV: the header
 *   time_ns,gpu_used,host_used,disk_used,gpu_charged,host_charged,disk_charged,running,blocked,bufn
 * then one row per sample.
 */
char *gs_report_timeline_csv(const GsResult *r);

/* Up to this many tasks the summary lists each; beyond, their distribution and the slowest. */
#define GS_SUMMARY_TASK_ROWS 20

/** The human summary `run` prints; @expectations may be NULL. */
char *gs_report_summary(const GsWorkload *w, const GsResult *r,
			const GsExpectReport *expectations);
/**
 * The same, listing every task up to @task_rows of them (G_MAXUINT: all);
 * beyond, the tasks' time, retries, splits, blocked and lost time at the
 * 50th, 90th and 99th percentiles (nearest rank) and their maximum, and
 * the slowest tasks.
 */
char *gs_report_summary_rows(const GsWorkload *w, const GsResult *r,
			     const GsExpectReport *expectations, guint task_rows);

/* ---- helpers ---- */

/** "512 B", "6.0 MiB", "1.5 GiB": below 1 KiB in bytes, else one decimal in binary units. */
char *gs_format_bytes(gint64 bytes);

/** Appends @text to @s as a JSON string, quoted and escaped (invalid UTF-8 made valid). */
void gs_report_append_json_string(GString *s, const char *text);

/** "0 ns", "750 ns", "1.50 ms", "12.5 us", "250 ms", "3.00 s": three significant digits. */
char *gs_format_duration(GsTime ns);

/** "gpu", "host" or "disk". */
const char *gs_report_tier_name(GsTier tier);

G_END_DECLS

#endif /* GPUSIM_REPORT_H */
