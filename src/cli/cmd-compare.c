/*
 * gpusim: the `compare` command: every variant of one scenario, side by side.
 *
 * It runs each variant (the scenario's, or fail, block and retry when it
 * defines none; see batch.h), then writes into the output folder one result
 * JSON and one timeline CSV per variant (VARIANT.json, VARIANT.timeline.csv,
 * with --trace also VARIANT.trace.json), summary.csv with one row of metrics
 * per variant, and three plots when gnuplot is there: memory.{png,svg} (memory
 * used over time per tier, one line per variant), threads.{png,svg} (thread
 * states over time per variant) and metrics.{png,svg} (the metrics as bars).
 * It prints the metrics as a table, one column per variant.
 *
 * Expectations are not checked: they are written for the scenario as it
 * stands, and a comparison exists to show variants that behave differently.
 * So the exit status is 0 whatever the outcomes, 2 for bad usage, an invalid
 * scenario or an output that cannot be written, 4 when a plot failed. The
 * files are one output set (output.h): on any error none of them is written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "report/output.h"
#include "report/plot.h"
#include "report/report.h"

typedef struct {
	char *backend;
	const GsDriver *driver; /* the backend's */
	char *variants;
	char *device;
	char *out;
	char **sets;
	gint64 seed;
	gint jobs;
	gboolean trace;
	gboolean quiet;
} CompareOptions;

/* The pictures, each drawn by its script from the files of the comparison. */
static const struct {
	const char *stem;
	const char *script;
} plots[] = {{"memory", "memory.gp"}, {"threads", "threads.gp"}, {"metrics", "bars.gp"}};

/* The outputs besides each job's own. */
typedef struct {
	GsOutput *summary;
	GsOutput *pictures[G_N_ELEMENTS(plots)][2]; /* PNG, SVG; NULL without gnuplot */
} CompareOutputs;

/* ---- files ---- */

/* A file stem per variant, unique even where two labels sanitise alike. */
static GPtrArray *
variant_stems(GPtrArray *variants)
{
	GPtrArray *stems = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < variants->len; i++) {
		const GsBatchVariant *v = variants->pdata[i];
		char *stem = gs_batch_file_stem(v->label);

		for (guint n = 2; g_ptr_array_find_with_equal_func(stems, stem, g_str_equal, NULL);
		     n++) {
			g_autofree char *base = gs_batch_file_stem(v->label);

			g_free(stem);
			stem = g_strdup_printf("%s-%u", base, n);
		}
		g_ptr_array_add(stems, stem);
	}
	return stems;
}

static GPtrArray *
make_jobs(GPtrArray *variants, const CompareOptions *o)
{
	GPtrArray *jobs = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);

	for (guint i = 0; i < variants->len; i++)
		g_ptr_array_add(jobs, gs_batch_job_new(variants->pdata[i],
						       (const char *const *) o->sets));
	return jobs;
}

/* The output @dir/@stem@suffix; NULL with @error set when it is refused. */
static GsOutput *
add_output(GsOutputSet *set, const char *dir, const char *stem, const char *suffix,
	   GError **error)
{
	g_autofree char *name = g_strconcat(stem, suffix, NULL);

	return gs_output_set_add_in(set, dir, name, error);
}

/* @stem.png and @stem.svg, into @pair. */
static gboolean
add_picture(GsOutputSet *set, const char *dir, const char *stem, GsOutput **pair,
	    GError **error)
{
	return (pair[0] = add_output(set, dir, stem, ".png", error)) != NULL &&
	       (pair[1] = add_output(set, dir, stem, ".svg", error)) != NULL;
}

/* Every file of the comparison, in the --out folder, made if need be. */
static gboolean
add_outputs(GsOutputSet *set, GPtrArray *jobs, GPtrArray *stems, gboolean plotting,
	    const CompareOptions *o, CompareOutputs *outs, GError **error)
{
	if (!gs_output_set_make_dir(set, o->out, error))
		return FALSE;
	for (guint i = 0; i < jobs->len; i++) {
		GsBatchJob *job = jobs->pdata[i];
		const char *stem = stems->pdata[i];

		job->json = add_output(set, o->out, stem, ".json", error);
		job->timeline = job->json != NULL
					? add_output(set, o->out, stem, ".timeline.csv", error)
					: NULL;
		if (job->timeline == NULL)
			return FALSE;
		if (o->trace &&
		    (job->trace = add_output(set, o->out, stem, ".trace.json", error)) == NULL)
			return FALSE;
	}
	if ((outs->summary = add_output(set, o->out, "summary", ".csv", error)) == NULL)
		return FALSE;
	for (guint i = 0; plotting && i < G_N_ELEMENTS(plots); i++) {
		if (!add_picture(set, o->out, plots[i].stem, outs->pictures[i], error))
			return FALSE;
	}
	return TRUE;
}

static char *
summary_csv(GPtrArray *jobs)
{
	GString *s = g_string_new("variant,");

	g_string_append_printf(s, "%s\n", gs_batch_csv_header());
	for (guint i = 0; i < jobs->len; i++) {
		const GsBatchJob *job = jobs->pdata[i];
		GsBatchMetrics metrics;

		gs_batch_metrics(job->result, &metrics);
		gs_batch_csv_field(s, job->variant->label);
		g_string_append_c(s, ',');
		gs_batch_csv_metrics(s, &metrics);
		g_string_append_c(s, '\n');
	}
	return g_string_free(s, FALSE);
}

/* ---- the table ---- */

typedef char *(*CellFunc)(const GsResult *r);

static char *
cell_outcome(const GsResult *r)
{
	return g_strdup(gs_outcome_name(r->outcome));
}

static char *
cell_makespan(const GsResult *r)
{
	return gs_format_duration(r->makespan_ns);
}

static char *
cell_tasks(const GsResult *r)
{
	return g_strdup_printf("%u/%u ok, %u failed", r->totals.tasks_completed, r->totals.tasks,
			       r->totals.tasks_failed);
}

static char *
cell_attempts(const GsResult *r)
{
	return g_strdup_printf("%u", r->totals.task_attempts);
}

static char *
cell_retries(const GsResult *r)
{
	return g_strdup_printf("%" G_GUINT64_FORMAT, r->totals.retries);
}

static char *
cell_splits(const GsResult *r)
{
	return g_strdup_printf("%" G_GUINT64_FORMAT, r->totals.splits);
}

static char *
cell_blocked(const GsResult *r)
{
	return gs_format_duration(r->totals.blocked_ns);
}

static char *
cell_lost(const GsResult *r)
{
	return gs_format_duration(r->totals.lost_ns);
}

static char *
cell_deadlocks(const GsResult *r)
{
	return g_strdup_printf("%" G_GUINT64_FORMAT " busted, %" G_GUINT64_FORMAT " unresolved",
			       r->totals.deadlocks_busted, r->totals.deadlocks_unresolved);
}

static char *
cell_spilled(const GsResult *r)
{
	return gs_format_bytes(r->totals.spilled_gpu_to_host + r->totals.spilled_host_to_disk);
}

static char *
cell_peak_gpu(const GsResult *r)
{
	return gs_format_bytes(r->tiers[GS_TIER_GPU].peak_used);
}

static const struct {
	const char *label;
	CellFunc cell;
} table_rows[] = {
	{"outcome", cell_outcome},   {"makespan", cell_makespan},   {"tasks", cell_tasks},
	{"attempts", cell_attempts}, {"retries", cell_retries},     {"splits", cell_splits},
	{"blocked", cell_blocked},   {"lost", cell_lost},           {"deadlocks", cell_deadlocks},
	{"spilled", cell_spilled},   {"peak gpu", cell_peak_gpu},
};

/* One row per metric, one column per variant: a comparison reads across. */
static char *
comparison_table(GPtrArray *jobs)
{
	guint n_rows = G_N_ELEMENTS(table_rows);
	g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free);
	g_autofree const char **labels = g_new(const char *, n_rows);
	g_autofree const char **heads = g_new(const char *, jobs->len);
	GString *s = g_string_new(NULL);

	for (guint r = 0; r < n_rows; r++)
		labels[r] = table_rows[r].label;
	for (guint c = 0; c < jobs->len; c++) {
		const GsBatchJob *job = jobs->pdata[c];

		heads[c] = job->variant->label;
		for (guint r = 0; r < n_rows; r++)
			g_ptr_array_add(cells, table_rows[r].cell(job->result));
	}
	gs_batch_table(s, "", 11, labels, n_rows, heads, jobs->len,
		       (const char *const *) cells->pdata);
	return g_string_free(s, FALSE);
}

/* ---- plots ---- */

static void
set_timeline_files(GString *vars, GPtrArray *jobs)
{
	gs_plot_set_number(vars, "n", jobs->len);
	for (guint i = 0; i < jobs->len; i++) {
		const GsBatchJob *job = jobs->pdata[i];
		g_autofree char *file = g_strdup_printf("file%u", i + 1);
		g_autofree char *title = g_strdup_printf("title%u", i + 1);

		/* Written already: its temporary is there. */
		gs_plot_set_string(vars, file, gs_output_staged_path(job->timeline, NULL));
		gs_plot_set_string(vars, title, job->variant->label);
	}
}

/* The scales every plot of a comparison shares. */
static void
set_units(GString *vars, GPtrArray *jobs)
{
	gint64 max_ns = 0, max_bytes = 0;

	for (guint i = 0; i < jobs->len; i++) {
		const GsResult *r = ((GsBatchJob *) jobs->pdata[i])->result;

		max_ns = MAX(max_ns, r->makespan_ns);
		for (guint t = 0; t < GS_N_TIERS; t++)
			max_bytes = MAX(max_bytes, r->tiers[t].peak_used);
		max_bytes = MAX(max_bytes, r->totals.spilled_gpu_to_host);
	}
	gs_plot_set_time_unit(vars, max_ns);
	gs_plot_set_byte_unit(vars, max_bytes);
	gs_plot_set_number(vars, "tmax_ns", (double) max_ns);
}

/* GPU always; host and disk only when some variant used them. */
static void
set_tiers(GString *vars, GPtrArray *jobs)
{
	GString *tiers = g_string_new("gpu");
	gint64 capacity = -1;

	for (guint t = GS_TIER_HOST; t < GS_N_TIERS; t++) {
		for (guint i = 0; i < jobs->len; i++) {
			if (((GsBatchJob *) jobs->pdata[i])->result->tiers[t].peak_used > 0) {
				g_string_append_printf(tiers, " %s", gs_report_tier_name(t));
				break;
			}
		}
	}
	for (guint i = 0; i < jobs->len; i++) {
		gint64 c = ((GsBatchJob *) jobs->pdata[i])->result->tiers[GS_TIER_GPU].capacity;

		capacity = capacity < 0 || capacity == c ? c : 0;
	}
	gs_plot_set_string(vars, "tiers", tiers->str);
	gs_plot_set_number(vars, "capacity", (double) MAX(capacity, 0));
	g_string_free(tiers, TRUE);
}

static gboolean
draw(GsPlotter *plotter, guint plot, GString *vars, const CompareOutputs *outs)
{
	g_autoptr(GError) error = NULL;

	if (gs_plotter_draw(plotter, plots[plot].script, vars, outs->pictures[plot][0],
			    outs->pictures[plot][1], &error))
		return TRUE;
	fprintf(stderr, "gpusim compare: the %s plot failed: %s\n", plots[plot].stem,
		error->message);
	return FALSE;
}

static gboolean
draw_plots(GsPlotter *plotter, GPtrArray *jobs, const char *name, const CompareOutputs *outs)
{
	g_autoptr(GString) common = g_string_new(NULL);
	g_autoptr(GString) vars = NULL;
	g_autofree char *heading = NULL;
	gboolean ok = TRUE;

	set_units(common, jobs);
	set_timeline_files(common, jobs);
	vars = g_string_new(common->str);
	set_tiers(vars, jobs);
	heading = g_strdup_printf("%s: memory used over time", name);
	gs_plot_set_string(vars, "heading", heading);
	ok &= draw(plotter, 0, vars, outs);

	g_string_assign(vars, common->str);
	g_free(heading);
	heading = g_strdup_printf("%s: thread states over time", name);
	gs_plot_set_string(vars, "heading", heading);
	g_string_append(vars, "tmax=tmax_ns/tdiv;");
	ok &= draw(plotter, 1, vars, outs);

	g_string_assign(vars, common->str);
	g_free(heading);
	heading = g_strdup_printf("%s: variants compared", name);
	gs_plot_set_string(vars, "heading", heading);
	gs_plot_set_string(vars, "file", gs_output_staged_path(outs->summary, NULL));
	ok &= draw(plotter, 2, vars, outs);
	return ok;
}

/* ---- the command ---- */

/* Runs the loaded jobs and writes every output; the caller commits them. */
static int
run_and_write(GPtrArray *jobs, GsPlotter *plotter, const CompareOutputs *outs,
	      const CompareOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *csv = NULL;
	const char *scenario_name = ((GsBatchJob *) jobs->pdata[0])->workload->name;

	if (!gs_batch_run(jobs, o->driver, (guint) o->jobs, NULL, NULL, &error)) {
		fprintf(stderr, "gpusim compare: %s\n", error->message);
		return gs_cmd_backend_status(error);
	}
	csv = summary_csv(jobs);
	if (!gs_output_write(outs->summary, csv, &error)) {
		fprintf(stderr, "gpusim compare: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet) {
		g_autofree char *table = comparison_table(jobs);

		printf("scenario %s: %u variants\n\n%s\n", scenario_name, jobs->len, table);
	}
	if (gs_plotter_missing(plotter) != NULL) {
		fprintf(stderr, "gpusim compare: plots skipped: %s. The data is in %s (summary.csv, "
				"*.timeline.csv); install gnuplot (e.g. apt-get install gnuplot-nox) "
				"and run the command again to draw them.\n",
			gs_plotter_missing(plotter), o->out);
	} else if (!draw_plots(plotter, jobs, scenario_name, outs)) {
		return GS_EXIT_INTERNAL;
	}
	return GS_EXIT_OK;
}

static int
compare(const char *path, CompareOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) variants = gs_batch_variants(path, o->variants, &error);
	g_autoptr(GPtrArray) stems = NULL;
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GsPlotter) plotter = gs_plotter_new();
	gboolean plotting = gs_plotter_missing(plotter) == NULL;
	CompareOutputs outs = {0};
	int status;

	if (variants == NULL) {
		fprintf(stderr, "%s%s\n", error->domain == G_OPTION_ERROR ? "gpusim compare: " : "",
			error->message);
		return GS_EXIT_USAGE;
	}
	stems = variant_stems(variants);
	jobs = make_jobs(variants, o);
	if (!gs_batch_load(path, o->device, jobs, &error)) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	for (guint i = 0; o->seed >= 0 && i < jobs->len; i++)
		((GsBatchJob *) jobs->pdata[i])->workload->seed = (guint64) o->seed;
	if (!add_outputs(set, jobs, stems, plotting, o, &outs, &error)) {
		fprintf(stderr, "gpusim compare: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if ((status = run_and_write(jobs, plotter, &outs, o)) != GS_EXIT_OK)
		return status;
	if (!gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim compare: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet)
		printf("wrote %s/: summary.csv, one .json and .timeline.csv per variant%s%s\n",
		       o->out, o->trace ? ", .trace.json (open in ui.perfetto.dev)" : "",
		       plotting ? ", memory, threads and metrics plots (.png, .svg)" : "");
	return GS_EXIT_OK;
}

int
gs_cmd_compare(int argc, char **argv)
{
	CompareOptions o = {.seed = -1, .jobs = 0};
	GOptionEntry entries[] = {
		{"variants", 0, 0, G_OPTION_ARG_STRING, &o.variants,
		 "Variants to compare, comma-separated (default: all, or fail,block,retry)",
		 "A,B,..."},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
		 "Folder for the results (default: SCENARIO.compare)", "DIR"},
		{"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
		 "Override a scenario key in every variant", "KEY=VALUE"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Seed for generators and jitter", "N"},
		GS_BATCH_DEVICE_OPTION(&o.device),
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
		 "Variants run at once (default: one per processor)", "N"},
		{"trace", 0, 0, G_OPTION_ARG_NONE, &o.trace,
		 "Also write a Chrome/Perfetto trace per variant", NULL},
		{"backend", 0, 0, G_OPTION_ARG_STRING, &o.backend,
		 "sim (default), host, or cuda on a GPU; a real backend runs one variant at a time",
		 "NAME"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no table", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml");
	g_autoptr(GError) error = NULL;
	int status = GS_EXIT_OK;

	g_option_context_set_summary(context,
				     "Run every variant of a scenario and compare them: a table, "
				     "summary.csv,\none result JSON and timeline per variant, and "
				     "plots (with gnuplot).");
	g_option_context_set_description(context,
					 "Exit status: 0 every variant ran (whatever its outcome); "
					 "2 bad usage or an invalid scenario;\n3 the backend is "
					 "unavailable; 4 a plot failed.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim compare: %s\nTry 'gpusim compare --help'.\n",
			error->message);
		status = GS_EXIT_USAGE;
	} else if (gs_cmd_check_batch("compare", argc, argv, &o.jobs, o.backend, &o.driver, &o.out,
				      &status)) {
		status = compare(argv[1], &o);
	}
	g_free(o.backend);
	g_free(o.variants);
	g_free(o.device);
	g_free(o.out);
	g_strfreev(o.sets);
	return status;
}
