/*
 * gpusim: the `run` command: load a scenario, replay it, report, check.
 *
 * The outputs are one set (output.h): refused before the scenario is loaded
 * when one cannot be written, and put in place together once the run is
 * reported, so a failure leaves none of them. The summary goes to stdout
 * unless --quiet, or to stderr when an output is "-" (at most one may be);
 * messages go to stderr, and so does the progress of a long run when stderr
 * is a terminal (nothing on a pipe).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/pattern.h"
#include "cli/commands.h"
#include "cli/batch.h"
#include "cli/drivers.h"
#include "report/expect.h"
#include "report/output.h"
#include "report/report.h"
#include "run/schedule.h"
#include "scenario/generate.h"
#include "scenario/loader.h"

typedef struct {
	char *backend;
	char *variant;
	char *device;
	char **sets;
	gint64 seed;
	char *json, *events, *trace, *timeline;
	char *max_time;
	char *time_scale;
	char *locking;
	char *clock;
	gboolean quiet;
	gboolean all_tasks;
} RunOptions;

/* The outputs the options name, NULL where not asked for. */
typedef struct {
	GsOutput *json, *events, *trace, *timeline;
	gboolean stdout_taken; /* one of them is "-": the summary goes to stderr */
} RunOutputs;

int
gs_cmd_backend_status(const GError *error)
{
	if (g_error_matches(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE))
		return GS_EXIT_BACKEND;
	if (g_error_matches(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED))
		return GS_EXIT_INTERNAL;
	return GS_EXIT_USAGE;
}

/*
 * The driver by name (NULL: the simulator); otherwise prints why and sets
 * *@status to GS_EXIT_USAGE (unknown) or GS_EXIT_BACKEND (known, not in this
 * build).
 */
static const GsDriver *
check_driver(const char *name, int *status)
{
	g_autoptr(GError) error = NULL;
	const GsDriver *driver = gs_driver_lookup(name, &error);

	if (driver == NULL) {
		fprintf(stderr, "gpusim: %s\n", error->message);
		*status = gs_cmd_backend_status(error);
	} else if (driver->backend != NULL) {
		/* Before the backend starts a thread (CUDA's too): an interrupted run removes its disk tier. */
		gs_private_dirs_guard();
	}
	return driver;
}

/* SCENARIO.@suffix for the scenario at @path, in the working directory. */
static char *
default_out(const char *path, const char *suffix)
{
	g_autofree char *base = g_path_get_basename(path);
	char *dot = strrchr(base, '.');

	if (dot != NULL && dot != base)
		*dot = '\0';
	return g_strconcat(base, ".", suffix, NULL);
}

gboolean
gs_cmd_check_batch(const char *command, int argc, char **argv, gint *jobs, const char *backend,
		   const GsDriver **driver, char **out, int *status)
{

	if (argc != 2) {
		fprintf(stderr, "gpusim %s: give one scenario file\nTry 'gpusim %s --help'.\n",
			command, command);
		*status = GS_EXIT_USAGE;
		return FALSE;
	}
	if (*jobs < 0) {
		fprintf(stderr, "gpusim %s: --jobs must be at least 1\n", command);
		*status = GS_EXIT_USAGE;
		return FALSE;
	}
	*driver = check_driver(backend, status);
	if (*driver == NULL)
		return FALSE;
	if (*out == NULL)
		*out = default_out(argv[1], command);
	if (*jobs == 0)
		*jobs = (gint) g_get_num_processors();
	if (!(*driver)->batches)
		*jobs = 1;
	return TRUE;
}

/* --time-scale: real time per scenario time, a positive number. */
static gboolean
parse_scale(const char *text, double *out)
{
	char *end = NULL;

	*out = 1.0;
	if (text == NULL)
		return TRUE;
	*out = g_ascii_strtod(text, &end);
	return end != text && *end == '\0' && *out > 0 && *out <= 1000;
}

/* Adds every output the options name; FALSE, having said why, when one is refused. */
static gboolean
add_outputs(GsOutputSet *set, const RunOptions *o, RunOutputs *outs)
{
	const char *paths[] = {o->json, o->events, o->trace, o->timeline};
	GsOutput **slots[] = {&outs->json, &outs->events, &outs->trace, &outs->timeline};

	for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
		g_autoptr(GError) error = NULL;

		if (paths[i] == NULL)
			continue;
		if (strcmp(paths[i], "-") == 0 && outs->stdout_taken) {
			fprintf(stderr, "gpusim run: only one output can be standard output (-)\n");
			return FALSE;
		}
		outs->stdout_taken |= strcmp(paths[i], "-") == 0;
		*slots[i] = gs_output_set_add(set, paths[i], &error);
		if (*slots[i] == NULL) {
			fprintf(stderr, "gpusim run: %s\n", error->message);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean
write_output(GsOutput *out, char *contents, int *status)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *owned = contents;

	if (out == NULL)
		return TRUE;
	if (gs_output_write(out, owned, &error))
		return TRUE;
	fprintf(stderr, "gpusim run: %s\n", error->message);
	*status = GS_EXIT_USAGE;
	return FALSE;
}

/* The result, written as it is made: a long run's is never whole in memory. */
static gboolean
write_json(GsOutput *out, const GsWorkload *w, const GsResult *result, const char *backend,
	   gint64 wall_ns, const GsExpectReport *report, int *status)
{
	g_autoptr(GError) error = NULL;

	if (out == NULL || gs_report_json_write(out, w, result, backend, wall_ns, report, &error))
		return TRUE;
	fprintf(stderr, "gpusim run: %s\n", error->message);
	*status = GS_EXIT_USAGE;
	return FALSE;
}

static gboolean
commit_outputs(GsOutputSet *set, int *status)
{
	g_autoptr(GError) error = NULL;

	if (gs_output_set_commit(set, &error))
		return TRUE;
	fprintf(stderr, "gpusim run: %s\n", error->message);
	*status = GS_EXIT_USAGE;
	return FALSE;
}

/* Runs @w on @driver; NULL with *status set when it cannot. */
static GsResult *
run_on(const GsDriver *driver, const GsWorkload *w, const GsRunOptions *options, int *status)
{
	g_autoptr(GError) error = NULL;
	GsBackendStats stats;
	GsResult *result = gs_driver_run(driver, w, options, &stats, &error);

	if (result == NULL) {
		fprintf(stderr, "gpusim: %s\n", error->message);
		*status = gs_cmd_backend_status(error);
		return NULL;
	}
	if (stats.corrupt_buffers > 0)
		fprintf(stderr, "gpusim: %s backend: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
			" round trips and moves lost or changed data\n", driver->name,
			stats.corrupt_buffers, stats.round_trips + stats.moves);
	if (stats.device_refusals > 0)
		fprintf(stderr, "gpusim: %s backend: the device refused %" G_GUINT64_FORMAT
			" allocation(s) the engine had admitted; each counted as an OOM\n",
			driver->name, stats.device_refusals);
	return result;
}

/* ---- progress, on a terminal ---- */

/* A run shows progress once it has taken this long, then this often (wall time, us). */
#define PROGRESS_AFTER_US 500000
#define PROGRESS_EVERY_US 200000

typedef struct {
	gint64 started, shown; /* monotonic us: the run's start, the last line shown (0: none) */
	guint64 events_shown;
} Progress;

static void
show_progress(const GsRunProgress *p, gpointer data)
{
	Progress *pr = data;
	gint64 now = g_get_monotonic_time();
	g_autofree char *simulated = NULL;
	double rate;

	if (now - pr->started < PROGRESS_AFTER_US || now - pr->shown < PROGRESS_EVERY_US)
		return;
	rate = pr->shown == 0 ? (double) p->events * 1e6 / (double) (now - pr->started)
			      : (double) (p->events - pr->events_shown) * 1e6 /
					(double) (now - pr->shown);
	simulated = gs_format_duration(p->now);
	fprintf(stderr, "\rrun: %s simulated, %u of %u tasks done, %.0f events/s   ", simulated,
		p->tasks_done, p->tasks, rate);
	fflush(stderr);
	pr->shown = now;
	pr->events_shown = p->events;
}

/* The progress line, if one was shown, ends before the summary. */
static void
end_progress(const Progress *pr)
{
	if (pr->shown != 0) {
		fputc('\n', stderr);
		fflush(stderr);
	}
}

/*
 * A scenario's schedule: the simulator takes its choices (schedule.h). FALSE,
 * having said why, when the driver is a real backend, whose order is the
 * machine's.
 */
static gboolean
follow_schedule(const GsWorkload *w, const GsDriver *driver, GsRunOptions *options,
		GsSchedule *schedule)
{
	gs_schedule_init(schedule, (const guint *) w->schedule->data, w->schedule->len, NULL);
	if (w->schedule->len == 0)
		return TRUE;
	if (driver->backend != NULL) {
		fprintf(stderr, "gpusim run: %s: schedule: only the simulator replays a schedule; "
				"the %s backend's order is the machine's\n", w->file, driver->name);
		return FALSE;
	}
	options->choose = gs_schedule_choose;
	options->choose_data = schedule;
	return TRUE;
}

/* The run took every choice of the schedule, as written: otherwise it replayed something else. */
static gboolean
schedule_followed(const GsWorkload *w, const GsSchedule *schedule)
{
	g_autofree char *why = gs_schedule_mismatch(schedule);

	if (why != NULL)
		fprintf(stderr, "gpusim run: %s: schedule: %s\n", w->file, why);
	return why == NULL;
}

static int
run_loaded(GsWorkload *w, const RunOptions *o, const GsDriver *driver, GsRunOptions *options,
	   GsOutputSet *set, const RunOutputs *outs)
{
	g_autoptr(GsEventLog) log = gs_event_log_new();
	g_autoptr(GsResult) result = NULL;
	g_autoptr(GsExpectReport) report = NULL;
	gint64 started = g_get_monotonic_time();
	gint64 wall_ns;
	int status = GS_EXIT_OK;
	Progress progress = {.started = started};
	g_auto(GsSchedule) schedule = {0};

	if (!follow_schedule(w, driver, options, &schedule))
		return GS_EXIT_USAGE;
	gs_generate_tasks(w);
	/* A row per event, for a long run most of its memory: kept only for what reads it. */
	if (outs->events != NULL || outs->trace != NULL || gs_expect_reads_log(w)) {
		options->log = gs_event_log_add;
		options->log_data = log;
	}
	options->skip_timeline = o->timeline == NULL && o->trace == NULL && w->expect.at->len == 0;
	if (!o->quiet && isatty(fileno(stderr))) {
		options->progress = show_progress;
		options->progress_data = &progress;
	}
	result = run_on(driver, w, options, &status);
	end_progress(&progress);
	if (result == NULL)
		return status;
	if (!schedule_followed(w, &schedule))
		return GS_EXIT_USAGE;
	wall_ns = (g_get_monotonic_time() - started) * 1000;
	report = gs_expect_check(w, result, log);
	if (!o->quiet) {
		g_autofree char *summary = gs_report_summary_rows(
			w, result, report, o->all_tasks ? G_MAXUINT : GS_SUMMARY_TASK_ROWS);

		/* Standard output is the output's alone, so that a pipe to jq reads only it. */
		fputs(summary, outs->stdout_taken ? stderr : stdout);
	}
	if (!write_json(outs->json, w, result, driver->name, wall_ns, report, &status) ||
	    !write_output(outs->events, gs_report_events(log), &status) ||
	    !write_output(outs->trace, gs_report_trace(w, result, log), &status) ||
	    !write_output(outs->timeline, gs_report_timeline_csv(result), &status) ||
	    !commit_outputs(set, &status))
		return status;
	if (!gs_expect_report_passed(report)) {
		if (o->quiet) {
			for (guint i = 0; i < report->failed->len; i++)
				fprintf(stderr, "expectation failed: %s\n",
					(char *) report->failed->pdata[i]);
		}
		return GS_EXIT_EXPECTATION;
	}
	return GS_EXIT_OK;
}

/* The outputs are checked first: one that cannot be written stops the run before it starts. */
static int
load_and_run(const char *path, const RunOptions *o, const GsDriver *driver, GsRunOptions *options)
{
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GsWorkload) w = NULL;
	g_autoptr(GError) error = NULL;
	RunOutputs outs = {0};

	if (!add_outputs(set, o, &outs))
		return GS_EXIT_USAGE;
	w = gs_batch_load_workload(path, o->device, o->variant, (const char *const *) o->sets,
				   &error);
	if (w == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (o->seed >= 0)
		w->seed = (guint64) o->seed;
	return run_loaded(w, o, driver, options, set, &outs);
}

int
gs_cmd_run(int argc, char **argv)
{
	RunOptions o = {.seed = -1};
	GOptionEntry entries[] = {
		{"backend", 0, 0, G_OPTION_ARG_STRING, &o.backend,
		 "sim (default), host (real threads, host memory) or cuda", "NAME"},
		{"time-scale", 0, 0, G_OPTION_ARG_STRING, &o.time_scale,
		 "Real backends: real time per scenario time (e.g. 0.1 runs ten times faster)",
		 "FACTOR"},
		{"locking", 0, 0, G_OPTION_ARG_STRING, &o.locking,
		 "Real backends: fast (allocations that fit take no global lock) or global",
		 "fast|global"},
		{"clock", 0, 0, G_OPTION_ARG_STRING, &o.clock,
		 "Real backends: real (scenario time is real time) or virtual (it moves when "
		 "every thread waits)", "real|virtual"},
		{"variant", 0, 0, G_OPTION_ARG_STRING, &o.variant, "Apply a variant's overrides",
		 "NAME"},
		{"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets, "Override a scenario key",
		 "KEY=VALUE"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Seed for generators and jitter", "N"},
		GS_BATCH_DEVICE_OPTION(&o.device),
		{"json", 0, 0, G_OPTION_ARG_FILENAME, &o.json, "Write the result JSON (- for stdout)",
		 "FILE"},
		{"events", 0, 0, G_OPTION_ARG_FILENAME, &o.events, "Write the event log (JSON Lines)",
		 "FILE"},
		{"trace", 0, 0, G_OPTION_ARG_FILENAME, &o.trace, "Write a Chrome/Perfetto trace",
		 "FILE"},
		{"timeline", 0, 0, G_OPTION_ARG_FILENAME, &o.timeline, "Write the timeline CSV",
		 "FILE"},
		{"max-time", 0, 0, G_OPTION_ARG_STRING, &o.max_time,
		 "Stop after this much simulated time (e.g. 10s)", "DURATION"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no summary", NULL},
		{"tasks", 0, 0, G_OPTION_ARG_NONE, &o.all_tasks,
		 "List every task in the summary (beyond 20: their distribution and the slowest)",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml");
	g_autoptr(GError) error = NULL;
	const GsDriver *driver;
	GsRunOptions options = {0};
	int status = GS_EXIT_OK;

	g_option_context_set_summary(context, "Replay a workload on the simulator (or on real "
					      "threads with --backend) and report.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim run: %s\n", error->message);
		status = GS_EXIT_USAGE;
	} else if (argc != 2) {
		fprintf(stderr, "gpusim run: give one scenario file\nTry 'gpusim run --help'.\n");
		status = GS_EXIT_USAGE;
	} else if (o.max_time != NULL &&
		   !gs_loader_parse_duration("--max-time", o.max_time, &options.max_time, &error)) {
		fprintf(stderr, "gpusim run: %s\n", error->message);
		status = GS_EXIT_USAGE;
	} else if (!parse_scale(o.time_scale, &options.time_scale)) {
		fprintf(stderr, "gpusim run: --time-scale: not a factor in (0, 1000]: '%s'\n",
			o.time_scale);
		status = GS_EXIT_USAGE;
	} else if (o.locking != NULL && !gs_locking_from_name(o.locking, &options.locking)) {
		fprintf(stderr, "gpusim run: --locking: '%s' is neither fast nor global\n",
			o.locking);
		status = GS_EXIT_USAGE;
	} else if (o.clock != NULL && !gs_clock_from_name(o.clock, &options.clock)) {
		fprintf(stderr, "gpusim run: --clock: '%s' is neither real nor virtual\n", o.clock);
		status = GS_EXIT_USAGE;
	} else if ((driver = check_driver(o.backend, &status)) != NULL) {
		status = load_and_run(argv[1], &o, driver, &options);
	}
	g_free(o.backend);
	g_free(o.variant);
	g_free(o.device);
	g_strfreev(o.sets);
	g_free(o.json);
	g_free(o.events);
	g_free(o.trace);
	g_free(o.timeline);
	g_free(o.max_time);
	g_free(o.time_scale);
	g_free(o.locking);
	g_free(o.clock);
	return status;
}
