/*
 * gpusim: the `explore` command: search the orders a real executor could
 * take (explore.h) and hand back, for each property broken, a scenario that
 * replays the simplest schedule found to break it.
 *
 * The outputs are two sets (output.h): --json, put in place when the search
 * is over, and the folder of replays (--out), made before the search starts
 * so that a path that cannot be written stops it, and kept only when there is
 * a violation to replay: each as KIND.yaml (the scenario, included, with the
 * schedule pinned), KIND.events (its event log) and KIND.trace.json.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/explore.h"
#include "report/output.h"
#include "report/report.h"
#include "run/schedule.h"
#include "scenario/input.h"
#include "scenario/loader.h"

/* Schedules a search runs when neither --budget nor --time is given. */
#define DEFAULT_BUDGET 1000

typedef struct {
	gint64 budget;
	char *time;
	char *json, *out;
	gint jobs;
	gint64 seed;
	gboolean expect;
	gboolean needless_busts;
	gboolean every_order;
	char *jitter;
	char *max_time;
	gboolean quiet;
} ExploreOptions;

/* The files written for one violation. */
typedef struct {
	GsOutput *scenario, *events, *trace;
} Replay;

/* ---- progress, on a terminal ---- */

#define PROGRESS_EVERY_US 200000

typedef struct {
	gint64 shown; /* monotonic us of the last line shown, 0: none */
} Progress;

static void
show_progress(const GsExploreProgress *p, gpointer data)
{
	Progress *pr = data;
	gint64 now = g_get_monotonic_time();

	if (now - pr->shown < PROGRESS_EVERY_US)
		return;
	if (p->budget > 0)
		fprintf(stderr, "\rexplore: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
			" schedules, %u violations   ", p->schedules, p->budget, p->violations);
	else
		fprintf(stderr, "\rexplore: %" G_GUINT64_FORMAT " schedules, %u violations   ",
			p->schedules, p->violations);
	fflush(stderr);
	pr->shown = now;
}

static void
end_progress(const Progress *pr)
{
	if (pr->shown != 0) {
		fputc('\n', stderr);
		fflush(stderr);
	}
}

/* ---- the replays ---- */

/*
 * @path as a replay in @dir includes it: relative to @dir (include: paths
 * are relative to the file that names them).
 */
static char *
include_path(const char *dir, const char *path)
{
	g_autofree char *cwd = g_get_current_dir();
	g_autofree char *from = g_canonicalize_filename(dir, cwd);
	g_autofree char *to = g_canonicalize_filename(path, cwd);
	g_auto(GStrv) a = g_strsplit(from, "/", -1);
	g_auto(GStrv) b = g_strsplit(to, "/", -1);
	GString *rel = g_string_new(NULL);
	guint common = 0;

	while (a[common] != NULL && b[common] != NULL && b[common + 1] != NULL &&
	       strcmp(a[common], b[common]) == 0)
		common++;
	for (guint i = common; a[i] != NULL; i++) {
		if (a[i][0] != '\0')
			g_string_append(rel, "../");
	}
	for (guint i = common; b[i] != NULL; i++)
		g_string_append_printf(rel, "%s%s", b[i], b[i + 1] != NULL ? "/" : "");
	return g_string_free(rel, FALSE);
}

static void
append_choices(GString *s, const GArray *choices)
{
	g_string_append_c(s, '[');
	for (guint i = 0; i < choices->len; i++)
		g_string_append_printf(s, "%s%u", i > 0 ? ", " : "", g_array_index(choices, guint, i));
	g_string_append_c(s, ']');
}

/* The replay scenario: the one explored, included, with the schedule pinned. */
static char *
replay_text(const GsExploreOptions *eo, const char *dir, const GsViolation *v)
{
	const char *path = eo->name;
	const char *kind = gs_violation_name(v->kind);
	g_autofree char *include = include_path(dir, path);
	GString *s = g_string_new(NULL);

	g_string_append_printf(s, "# gpusim explore: %s.\n", v->detail);
	g_string_append_printf(s, "# %s under the schedule that shows it; replay it with\n", path);
	g_string_append_printf(s, "#   gpusim run --events=%s.events %s.yaml\n", kind, kind);
	g_string_append(s, "include: \"");
	for (const char *c = include; *c != '\0'; c++) {
		if (*c == '"' || *c == '\\')
			g_string_append_c(s, '\\');
		g_string_append_c(s, *c);
	}
	g_string_append(s, "\"\nschedule: ");
	append_choices(s, v->schedule);
	g_string_append_c(s, '\n');
	if (eo->jitter_given) {
		char jitter[G_ASCII_DTOSTR_BUF_SIZE];

		g_string_append_printf(s, "schedule_jitter: %s\n",
				       g_ascii_dtostr(jitter, sizeof jitter, eo->jitter));
	}
	return g_string_free(s, FALSE);
}

static gboolean
add_replay(GsOutputSet *set, const char *dir, GsViolationKind kind, Replay *out, GError **error)
{
	const char *name = gs_violation_name(kind);
	g_autofree char *scenario = g_strdup_printf("%s.yaml", name);
	g_autofree char *events = g_strdup_printf("%s.events", name);
	g_autofree char *trace = g_strdup_printf("%s.trace.json", name);

	return (out->scenario = gs_output_set_add_in(set, dir, scenario, error)) != NULL &&
	       (out->events = gs_output_set_add_in(set, dir, events, error)) != NULL &&
	       (out->trace = gs_output_set_add_in(set, dir, trace, error)) != NULL;
}

/* Writes the replay of @v and, from a run of its schedule, its event log and trace. */
static gboolean
write_replay(const GsExploreOptions *eo, const char *dir, const GsViolation *v,
	     const Replay *out, GError **error)
{
	g_autofree char *text = replay_text(eo, dir, v);
	g_autofree char *events = NULL;
	g_autofree char *trace = NULL;
	GsExploreReplay replay;
	gboolean ok;

	if (!gs_explore_replay(eo, v->schedule, &replay, error))
		return FALSE;
	events = gs_report_events(replay.log);
	trace = gs_report_trace(replay.workload, replay.result, replay.log);
	gs_explore_replay_clear(&replay);
	ok = gs_output_write(out->scenario, text, error) &&
	     gs_output_write(out->events, events, error) &&
	     gs_output_write(out->trace, trace, error);
	return ok;
}

/* ---- the result ---- */

static char *
result_json(const GsExploreOptions *eo, const GsExploreResult *r, const Replay *replays)
{
	GString *s = g_string_new("{\n  \"scenario\": ");
	gboolean first = TRUE;

	gs_report_append_json_string(s, eo->name);
	if (eo->budget > 0)
		g_string_append_printf(s, ",\n  \"budget\": %" G_GUINT64_FORMAT, eo->budget);
	g_string_append_printf(s, ",\n  \"seed\": %" G_GUINT64_FORMAT, eo->seed);
	g_string_append_printf(s, ",\n  \"schedules\": %" G_GUINT64_FORMAT, r->schedules);
	g_string_append_printf(s, ",\n  \"depth_first\": %" G_GUINT64_FORMAT, r->depth_first);
	g_string_append_printf(s, ",\n  \"random\": %" G_GUINT64_FORMAT,
			       r->schedules - r->depth_first);
	g_string_append_printf(s, ",\n  \"exhausted\": %s", r->exhausted ? "true" : "false");
	g_string_append_printf(s, ",\n  \"orders_reduced\": %s", r->reduced ? "true" : "false");
	g_string_append_printf(s, ",\n  \"most_choice_points\": %u", r->most_points);
	g_string_append_printf(s, ",\n  \"shrink_runs\": %" G_GUINT64_FORMAT, r->shrink_runs);
	g_string_append(s, ",\n  \"violations\": [");
	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		const GsViolation *v = r->found[k];

		if (v == NULL)
			continue;
		g_string_append_printf(s, "%s\n    {\"kind\": \"%s\", \"found_at\": %" G_GUINT64_FORMAT
				       ", \"forced\": %u, \"schedule\": ", first ? "" : ",",
				       gs_violation_name(k), v->found_at,
				       gs_schedule_forced(v->schedule));
		append_choices(s, v->schedule);
		g_string_append(s, ", \"detail\": ");
		gs_report_append_json_string(s, v->detail);
		g_string_append(s, ", \"replay\": ");
		gs_report_append_json_string(s, gs_output_path(replays[k].scenario));
		g_string_append(s, ", \"events\": ");
		gs_report_append_json_string(s, gs_output_path(replays[k].events));
		g_string_append(s, ", \"trace\": ");
		gs_report_append_json_string(s, gs_output_path(replays[k].trace));
		g_string_append_c(s, '}');
		first = FALSE;
	}
	g_string_append_printf(s, "%s]\n}\n", first ? "" : "\n  ");
	return g_string_free(s, FALSE);
}

static void
print_summary(const GsExploreResult *r, const Replay *replays, gboolean found, gint64 wall_us,
	      FILE *to)
{
	double seconds = (double) wall_us / 1e6;

	fprintf(to, "explore: %" G_GUINT64_FORMAT " schedules (%" G_GUINT64_FORMAT
		" depth-first, %" G_GUINT64_FORMAT " random), %s, in %.2f s (%.0f schedules/s)\n",
		r->schedules, r->depth_first, r->schedules - r->depth_first,
		r->exhausted ? "every schedule" : "not exhausted", seconds,
		seconds > 0 ? (double) (r->schedules + r->shrink_runs) / seconds : 0.0);
	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		const GsViolation *v = r->found[k];
		g_autoptr(GString) choices = g_string_new(NULL);

		if (v == NULL)
			continue;
		append_choices(choices, v->schedule);
		fprintf(to, "  %s: %s\n    schedule %s (found at run %" G_GUINT64_FORMAT
			"), replay: gpusim run %s\n",
			gs_violation_name(k), v->detail, choices->str, v->found_at + 1,
			gs_output_path(replays[k].scenario));
	}
	if (!found)
		fprintf(to, "  no property broken\n");
}

/* ---- the command ---- */

/* The search's options from the command's; FALSE, having said why, when one is wrong. */
/* --jitter's FRACTION: a plain number from 0 to 1. */
static gboolean
parse_jitter(const char *text, double *out)
{
	char *end = NULL;
	double value = g_ascii_strtod(text, &end);

	if (end == text || *end != '\0' || !(value >= 0 && value <= 1))
		return FALSE;
	*out = value;
	return TRUE;
}

static gboolean
check_options(const ExploreOptions *o, GsExploreOptions *eo)
{
	g_autoptr(GError) error = NULL;
	GsTime time = 0;

	if (o->budget != -1 && o->time != NULL) {
		fprintf(stderr, "gpusim explore: give --budget or --time, not both\n");
		return FALSE;
	}
	if (o->budget != -1 && o->budget < 1) {
		fprintf(stderr, "gpusim explore: --budget must be at least 1\n");
		return FALSE;
	}
	if (o->seed < 0) {
		fprintf(stderr, "gpusim explore: --seed must not be negative\n");
		return FALSE;
	}
	if (o->time != NULL && (!gs_loader_parse_duration("--time", o->time, &time, &error) ||
				time < 1000)) {
		fprintf(stderr, "gpusim explore: %s\n",
			error != NULL ? error->message : "--time must be at least 1us");
		return FALSE;
	}
	if (o->jitter != NULL && !parse_jitter(o->jitter, &eo->jitter)) {
		fprintf(stderr, "gpusim explore: --jitter must be a fraction from 0 to 1, not \"%s\"\n",
			o->jitter);
		return FALSE;
	}
	if (o->max_time != NULL &&
	    !gs_loader_parse_duration("--max-time", o->max_time, &eo->max_time, &error)) {
		fprintf(stderr, "gpusim explore: %s\n", error->message);
		return FALSE;
	}
	eo->budget = o->time != NULL ? 0 : o->budget == -1 ? DEFAULT_BUDGET : (guint64) o->budget;
	eo->time_us = time / 1000;
	eo->seed = (guint64) o->seed;
	eo->expect = o->expect;
	eo->needless_busts = o->needless_busts;
	eo->every_order = o->every_order;
	eo->jitter_given = o->jitter != NULL;
	eo->jobs = (guint) o->jobs;
	return TRUE;
}

/* The outputs, then the search, then the replays: any failure leaves no file. */
static int
explore(const ExploreOptions *o, GsExploreOptions *eo)
{
	g_autoptr(GsOutputSet) result_set = gs_output_set_new();
	g_autoptr(GsOutputSet) replay_set = gs_output_set_new();
	g_autoptr(GsExploreResult) r = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *json = NULL;
	GsOutput *json_out = NULL;
	Replay replays[GS_N_VIOLATIONS] = {{0}};
	Progress progress = {0};
	gint64 started = g_get_monotonic_time();
	gboolean found = FALSE;

	if ((o->json != NULL && (json_out = gs_output_set_add(result_set, o->json, &error)) == NULL) ||
	    !gs_output_set_make_dir(replay_set, o->out, &error)) {
		fprintf(stderr, "gpusim explore: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet && isatty(fileno(stderr))) {
		eo->progress = show_progress;
		eo->progress_data = &progress;
	}
	r = gs_explore(eo, &error);
	end_progress(&progress);
	if (r == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		if (r->found[k] == NULL)
			continue;
		found = TRUE;
		if (!add_replay(replay_set, o->out, k, &replays[k], &error) ||
		    !write_replay(eo, o->out, r->found[k], &replays[k], &error)) {
			fprintf(stderr, "gpusim explore: %s\n", error->message);
			return GS_EXIT_USAGE;
		}
	}
	json = result_json(eo, r, replays);
	if ((json_out != NULL && !gs_output_write(json_out, json, &error)) ||
	    (found && !gs_output_set_commit(replay_set, &error)) ||
	    !gs_output_set_commit(result_set, &error)) {
		fprintf(stderr, "gpusim explore: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet)
		print_summary(r, replays, found, g_get_monotonic_time() - started,
			      o->json != NULL && strcmp(o->json, "-") == 0 ? stderr : stdout);
	return found ? GS_EXIT_EXPECTATION : GS_EXIT_OK;
}

/* Reads the scenario once: every run of the search loads the same text. */
static int
read_and_explore(const char *path, const ExploreOptions *o, GsExploreOptions *eo)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	gsize len = 0;

	if (!gs_input_read(path, &text, &len, &error)) {
		fprintf(stderr, "%s:1:1: cannot read: %s\n", path, error->message);
		return GS_EXIT_USAGE;
	}
	eo->name = path;
	eo->text = text;
	eo->len = len;
	return explore(o, eo);
}

int
gs_cmd_explore(int argc, char **argv)
{
	ExploreOptions o = {.budget = -1, .seed = 1};
	GOptionEntry entries[] = {
		{"budget", 0, 0, G_OPTION_ARG_INT64, &o.budget,
		 "Run at most this many schedules (default 1000)", "N"},
		{"time", 0, 0, G_OPTION_ARG_STRING, &o.time,
		 "Search for this long instead (wall time, e.g. 30s)", "DURATION"},
		{"json", 0, 0, G_OPTION_ARG_FILENAME, &o.json,
		 "Write what was searched and found as JSON (- for stdout)", "FILE"},
		{"out", 0, 0, G_OPTION_ARG_FILENAME, &o.out,
		 "The folder of replays (default SCENARIO.explore)", "DIR"},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
		 "Random schedules run on this many threads (default: one per processor)", "N"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Seed of the random schedules (default 1)",
		 "N"},
		{"expect", 0, 0, G_OPTION_ARG_NONE, &o.expect,
		 "The scenario's expect: section must hold under every schedule too", NULL},
		{"needless-busts", 0, 0, G_OPTION_ARG_NONE, &o.needless_busts,
		 "No deadlock may be busted while a thread could still make progress", NULL},
		{"every-order", 0, 0, G_OPTION_ARG_NONE, &o.every_order,
		 "Run every order of an instant's events, even of events that touch nothing in "
		 "common (the depth-first part runs one of each by default)", NULL},
		{"jitter", 0, 0, G_OPTION_ARG_STRING, &o.jitter,
		 "Allocation attempts and copies may take this fraction less or more "
		 "(default: the scenario's schedule_jitter)", "FRACTION"},
		{"max-time", 0, 0, G_OPTION_ARG_STRING, &o.max_time,
		 "Stop each run after this much simulated time (a run that reaches it is cut short)",
		 "DURATION"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress or summary", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml");
	g_autoptr(GError) error = NULL;
	GsExploreOptions eo = {0};
	const GsDriver *driver;
	int status = GS_EXIT_OK;

	g_option_context_set_summary(
		context, "Search the orders a real executor could take (events at one instant, "
			 "the watchdog's phase, which of equal waiters wakes, latencies within "
			 "--jitter) for one that breaks a property, and write a scenario that "
			 "replays it.");
	g_option_context_set_description(context,
					 "Exit status: 0 no property broken; 1 some broken (their "
					 "replays are in --out); 2 bad usage or an invalid scenario.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim explore: %s\n", error->message);
		status = GS_EXIT_USAGE;
	} else if (gs_cmd_check_batch("explore", argc, argv, &o.jobs, NULL, &driver, &o.out,
				      &status) &&
		   check_options(&o, &eo)) {
		status = read_and_explore(argv[1], &o, &eo);
	} else if (status == GS_EXIT_OK) {
		status = GS_EXIT_USAGE;
	}
	g_free(o.time);
	g_free(o.json);
	g_free(o.out);
	g_free(o.max_time);
	g_free(o.jitter);
	return status;
}
