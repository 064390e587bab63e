/*
 * gpusim: the `predict` command: how well the simulator, given a device's
 * calibration, predicts real runs on that device.
 *
 * For each scenario named (as written, and each of its variants) it runs
 * the simulator once and the real backend --runs times, both with
 * --device's calibration over the scenario (batch.h), and sets the
 * prediction against the median of the real runs: the makespan and
 * the totals that explain it (time blocked, time blocked on copies, bytes
 * moved between tiers), with the makespan's relative error (predicted -
 * measured) / measured per row, and over all rows the median and the worst
 * of its absolute value. It prints that as a table and writes, into the
 * output folder, prediction.csv (one row per scenario and variant) and,
 * with gnuplot, prediction.{png,svg}: predicted against measured makespan.
 *
 * The real runs go one at a time (one device); the simulator's in parallel.
 * Exit statuses: 0 every run ran (whatever its outcome or error); 2 bad
 * usage, an invalid scenario or device file, an output that cannot be
 * written; 3 the backend is unavailable; 4 the device failed or a plot did.
 * The files are one output set (output.h): on any error none is written.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backends/pattern.h"
#include "cli/batch.h"
#include "cli/commands.h"
#include "report/output.h"
#include "report/plot.h"
#include "report/report.h"
#include "run/samples.h"
#include "scenario/loader.h"

typedef struct {
	char *backend;
	const GsDriver *driver;
	char *device;
	char *out;
	gint runs;
	gint jobs;
	gboolean quiet;
} PredictOptions;

/* What a row compares, for the simulator and for the median real run. */
typedef enum {
	FIGURE_MAKESPAN,
	FIGURE_BLOCKED,
	FIGURE_SPILL_BLOCK,
	FIGURE_MOVED,
	N_FIGURES
} Figure;

static const char *const figure_names[N_FIGURES] = {"makespan_ns", "blocked_ns",
						    "spill_block_ns", "moved_bytes"};

/* One scenario's variant: its simulated job and its real runs. */
typedef struct {
	char *scenario;
	const GsBatchVariant *variant; /* owned by the scenario's variants */
	GsBatchJob *sim;               /* owned by the jobs arrays */
	GPtrArray *real;               /* GsBatchJob*, not owned */
	gint64 predicted[N_FIGURES];
	gint64 measured[N_FIGURES];
	double error;                  /* of the makespan: (predicted - measured) / measured */
} Row;

static void
row_free(Row *row)
{
	g_free(row->scenario);
	g_ptr_array_unref(row->real);
	g_free(row);
}

static void
figures(const GsResult *r, gint64 *out)
{
	out[FIGURE_MAKESPAN] = r->makespan_ns;
	out[FIGURE_BLOCKED] = r->totals.blocked_ns;
	out[FIGURE_SPILL_BLOCK] = r->totals.spill_block_ns;
	out[FIGURE_MOVED] = r->totals.spilled_gpu_to_host + r->totals.spilled_host_to_disk +
			    r->totals.unspilled_host_to_gpu + r->totals.unspilled_disk_to_host;
}

static int
compare_gint64(gconstpointer a, gconstpointer b)
{
	gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

	return x < y ? -1 : x > y;
}

/* Each figure's median over the real runs (the lower middle one of an even count). */
static void
median_figures(GPtrArray *runs, gint64 *out)
{
	g_autofree gint64 *values = g_new(gint64, (gsize) runs->len * N_FIGURES);

	for (guint i = 0; i < runs->len; i++)
		figures(((GsBatchJob *) runs->pdata[i])->result, values + (gsize) i * N_FIGURES);
	for (guint f = 0; f < N_FIGURES; f++) {
		g_autofree gint64 *column = g_new(gint64, runs->len);

		for (guint i = 0; i < runs->len; i++)
			column[i] = values[(gsize) i * N_FIGURES + f];
		qsort(column, runs->len, sizeof column[0], compare_gint64);
		out[f] = column[(runs->len - 1) / 2];
	}
}

static void
row_settle(Row *row)
{
	figures(row->sim->result, row->predicted);
	median_figures(row->real, row->measured);
	row->error = row->measured[FIGURE_MAKESPAN] > 0
			     ? (double) (row->predicted[FIGURE_MAKESPAN] -
					 row->measured[FIGURE_MAKESPAN]) /
				       (double) row->measured[FIGURE_MAKESPAN]
			     : 0;
}

/* ---- loading ---- */

/* The scenario as written ("base"), then each of its variants. */
static GPtrArray *
scenario_variants(const char *path, GError **error)
{
	g_autoptr(GPtrArray) defined = gs_loader_variant_names(path, error);
	g_autoptr(GString) names = g_string_new("base");

	if (defined == NULL)
		return NULL;
	for (guint i = 0; i < defined->len; i++)
		g_string_append_printf(names, ",%s", (const char *) defined->pdata[i]);
	return gs_batch_variants(path, names->str, error);
}

/* Adds @path's rows, loaded with the device, to @rows and their jobs to @sim and @real. */
static gboolean
load_scenario(const char *path, const PredictOptions *o, GPtrArray *keep, GPtrArray *rows,
	      GPtrArray *sim, GPtrArray *real, GError **error)
{
	GPtrArray *variants = scenario_variants(path, error);
	g_autoptr(GPtrArray) jobs = NULL;

	if (variants == NULL)
		return FALSE;
	g_ptr_array_add(keep, variants);
	jobs = g_ptr_array_new();
	for (guint v = 0; v < variants->len; v++) {
		Row *row = g_new0(Row, 1);

		row->scenario = g_strdup(path);
		row->variant = variants->pdata[v];
		row->real = g_ptr_array_new();
		row->sim = gs_batch_job_new(row->variant, NULL);
		g_ptr_array_add(jobs, row->sim);
		g_ptr_array_add(sim, row->sim);
		for (gint r = 0; r < o->runs; r++) {
			GsBatchJob *job = gs_batch_job_new(row->variant, NULL);

			g_ptr_array_add(row->real, job);
			g_ptr_array_add(jobs, job);
			g_ptr_array_add(real, job);
		}
		g_ptr_array_add(rows, row);
	}
	return gs_batch_load(path, o->device, jobs, error);
}

/* ---- outputs ---- */

static char *
prediction_csv(GPtrArray *rows)
{
	GString *s = g_string_new("scenario,variant");

	for (guint f = 0; f < N_FIGURES; f++)
		g_string_append_printf(s, ",predicted_%s,measured_%s", figure_names[f],
				       figure_names[f]);
	g_string_append(s, ",makespan_error\n");
	for (guint i = 0; i < rows->len; i++) {
		const Row *row = rows->pdata[i];
		char error[G_ASCII_DTOSTR_BUF_SIZE];

		gs_batch_csv_field(s, row->sim->workload->name);
		g_string_append_c(s, ',');
		gs_batch_csv_field(s, row->variant->label);
		for (guint f = 0; f < N_FIGURES; f++)
			g_string_append_printf(s, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
					       row->predicted[f], row->measured[f]);
		g_string_append_printf(s, ",%s\n",
				       g_ascii_formatd(error, sizeof error, "%.4f", row->error));
	}
	return g_string_free(s, FALSE);
}

static char *
format_error(double error)
{
	return g_strdup_printf("%+.1f%%", error * 100);
}

/* The median and the worst absolute makespan error over @rows. */
static void
overall(GPtrArray *rows, double *median, double *worst)
{
	g_autofree double *errors = g_new(double, rows->len);

	for (guint i = 0; i < rows->len; i++)
		errors[i] = fabs(((const Row *) rows->pdata[i])->error);
	gs_samples_sort(errors, rows->len);
	*median = rows->len % 2 ? errors[rows->len / 2]
				: (errors[rows->len / 2 - 1] + errors[rows->len / 2]) / 2;
	*worst = errors[rows->len - 1];
}

/* One row per scenario and variant, the predicted figure beside the measured one. */
static char *
prediction_table(GPtrArray *rows, const PredictOptions *o)
{
	static const char *const heads[] = {"makespan sim", "real", "error", "blocked sim",
					    "real", "copies sim", "real", "moved sim", "real"};
	guint n_cols = G_N_ELEMENTS(heads);
	g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
	g_autofree char **cells = g_new0(char *, (gsize) n_cols * rows->len);
	GString *s = g_string_new(NULL);
	double median, worst;

	for (guint r = 0; r < rows->len; r++) {
		const Row *row = rows->pdata[r];
		char **cell = cells + r;

		g_ptr_array_add(labels, g_strdup_printf("%s %s", row->sim->workload->name,
							row->variant->label));
		for (guint f = 0, c = 0; f < N_FIGURES; f++) {
			gboolean bytes = f == FIGURE_MOVED;

			cell[(c++) * rows->len] = bytes ? gs_format_bytes(row->predicted[f])
							: gs_format_duration(row->predicted[f]);
			cell[(c++) * rows->len] = bytes ? gs_format_bytes(row->measured[f])
							: gs_format_duration(row->measured[f]);
			if (f == FIGURE_MAKESPAN)
				cell[(c++) * rows->len] = format_error(row->error);
		}
	}
	g_string_append_printf(s, "%s predicted by sim with %s (measured: median of %d run%s)\n\n",
			       o->driver->name, o->device, o->runs, o->runs == 1 ? "" : "s");
	gs_batch_table(s, "", 0, (const char *const *) labels->pdata, rows->len, heads, n_cols,
		       (const char *const *) cells);
	overall(rows, &median, &worst);
	g_string_append_printf(s, "\nmakespan error over %u rows: median %.1f%%, worst %.1f%%\n",
			       rows->len, median * 100, worst * 100);
	for (gsize i = 0; i < (gsize) n_cols * rows->len; i++)
		g_free(cells[i]);
	return g_string_free(s, FALSE);
}

static gboolean
draw_plot(GsPlotter *plotter, GPtrArray *rows, GsOutput *csv, GsOutput **pictures,
	  const PredictOptions *o, GError **error)
{
	g_autoptr(GString) vars = g_string_new(NULL);
	g_autofree char *heading = g_strdup_printf("%s predicted by the simulator", o->driver->name);
	gint64 max_ns = 0;

	for (guint i = 0; i < rows->len; i++) {
		const Row *row = rows->pdata[i];

		max_ns = MAX(max_ns, MAX(row->predicted[FIGURE_MAKESPAN],
					 row->measured[FIGURE_MAKESPAN]));
	}
	gs_plot_set_time_unit(vars, max_ns);
	gs_plot_set_string(vars, "file", gs_output_staged_path(csv, NULL));
	gs_plot_set_string(vars, "heading", heading);
	gs_plot_set_string(vars, "backend", o->driver->name);
	return gs_plotter_draw(plotter, "predict.gp", vars, pictures[0], pictures[1], error);
}

/* ---- the command ---- */

typedef struct {
	GsOutput *csv;
	GsOutput *pictures[2]; /* PNG, SVG; NULL without gnuplot */
} PredictOutputs;

static gboolean
add_outputs(GsOutputSet *set, gboolean plotting, const PredictOptions *o, PredictOutputs *outs,
	    GError **error)
{
	return gs_output_set_make_dir(set, o->out, error) &&
	       (outs->csv = gs_output_set_add_in(set, o->out, "prediction.csv", error)) != NULL &&
	       (!plotting ||
		((outs->pictures[0] = gs_output_set_add_in(set, o->out, "prediction.png", error)) !=
			 NULL &&
		 (outs->pictures[1] = gs_output_set_add_in(set, o->out, "prediction.svg", error)) !=
			 NULL));
}

/* Runs every job, then writes and prints the prediction; the caller commits. */
static int
run_and_report(GPtrArray *rows, GPtrArray *sim, GPtrArray *real, GsPlotter *plotter,
	       const PredictOutputs *outs, const PredictOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *csv = NULL;

	if (!gs_batch_run(sim, NULL, (guint) o->jobs, NULL, NULL, &error) ||
	    !gs_batch_run(real, o->driver, 1, NULL, NULL, &error)) {
		fprintf(stderr, "gpusim predict: %s\n", error->message);
		return gs_cmd_backend_status(error);
	}
	for (guint i = 0; i < rows->len; i++)
		row_settle(rows->pdata[i]);
	csv = prediction_csv(rows);
	if (!gs_output_write(outs->csv, csv, &error)) {
		fprintf(stderr, "gpusim predict: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet) {
		g_autofree char *table = prediction_table(rows, o);

		fputs(table, stdout);
	}
	if (gs_plotter_missing(plotter) != NULL) {
		fprintf(stderr, "gpusim predict: plot skipped: %s; the data is in %s/prediction.csv\n",
			gs_plotter_missing(plotter), o->out);
	} else if (!draw_plot(plotter, rows, outs->csv, (GsOutput **) outs->pictures, o, &error)) {
		fprintf(stderr, "gpusim predict: the plot failed: %s\n", error->message);
		return GS_EXIT_INTERNAL;
	}
	return GS_EXIT_OK;
}

static int
predict(char **paths, const PredictOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func((GDestroyNotify) g_ptr_array_unref);
	g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify) row_free);
	g_autoptr(GPtrArray) sim = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);
	g_autoptr(GPtrArray) real =
		g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GsPlotter) plotter = gs_plotter_new();
	PredictOutputs outs = {0};
	int status;

	for (guint i = 0; paths[i] != NULL; i++) {
		if (!load_scenario(paths[i], o, keep, rows, sim, real, &error)) {
			fprintf(stderr, "%s%s\n", error->domain == G_OPTION_ERROR ? "gpusim predict: " : "",
				error->message);
			return GS_EXIT_USAGE;
		}
	}
	if (!add_outputs(set, gs_plotter_missing(plotter) == NULL, o, &outs, &error)) {
		fprintf(stderr, "gpusim predict: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if ((status = run_and_report(rows, sim, real, plotter, &outs, o)) != GS_EXIT_OK)
		return status;
	if (!gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim predict: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet)
		printf("wrote %s/: prediction.csv%s\n", o->out,
		       gs_plotter_missing(plotter) == NULL ? ", prediction.png, prediction.svg" : "");
	return GS_EXIT_OK;
}

/* The options predict needs beyond what GOption checks; FALSE having said why. */
static gboolean
check_options(int argc, PredictOptions *o, int *status)
{
	const char *problem = argc < 2		 ? "give at least one scenario file"
			      : o->device == NULL ? "give the calibration as --device=FILE"
			      : o->runs < 1	 ? "--runs must be at least 1"
			      : o->jobs < 0	 ? "--jobs must be at least 1"
						 : NULL;
	g_autoptr(GError) error = NULL;

	*status = GS_EXIT_USAGE;
	if (problem != NULL) {
		fprintf(stderr, "gpusim predict: %s\nTry 'gpusim predict --help'.\n", problem);
		return FALSE;
	}
	o->driver = gs_driver_lookup(o->backend != NULL ? o->backend : "host", &error);
	if (o->driver != NULL && o->driver->backend == NULL)
		g_set_error(&error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID,
			    "--backend names the real device to predict (host or cuda), not %s",
			    o->driver->name);
	if (error != NULL) {
		fprintf(stderr, "gpusim predict: %s\n", error->message);
		*status = gs_cmd_backend_status(error);
		return FALSE;
	}
	gs_private_dirs_guard(); /* before the backend starts a thread: see pattern.h */
	if (o->out == NULL)
		o->out = g_strdup("prediction");
	if (o->jobs == 0)
		o->jobs = (gint) g_get_num_processors();
	return TRUE;
}

int
gs_cmd_predict(int argc, char **argv)
{
	PredictOptions o = {.runs = 3};
	GOptionEntry entries[] = {
		GS_BATCH_DEVICE_OPTION(&o.device),
		{"backend", 0, 0, G_OPTION_ARG_STRING, &o.backend,
		 "The real device the calibration measured: host (default) or cuda", "NAME"},
		{"runs", 0, 0, G_OPTION_ARG_INT, &o.runs,
		 "Real runs per variant; their median is what was measured (default 3)", "N"},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
		 "Folder for prediction.csv and the plot (default: prediction)", "DIR"},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
		 "Simulated runs at once (default: one per processor)", "N"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no table", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml...");
	g_autoptr(GError) error = NULL;
	int status = GS_EXIT_OK;

	g_option_context_set_summary(context,
				     "Predict real runs with the simulator and a device's "
				     "calibration, and measure the error:\nper scenario and "
				     "variant, and overall; a table, prediction.csv and a plot.");
	g_option_context_set_description(context,
					 "Example:\n  gpusim calibrate --backend=host --out=host.yaml\n"
					 "  gpusim predict --device=host.yaml scenarios/*.yaml\n\n"
					 "Exit status: 0 every run ran; 2 bad usage or an invalid "
					 "scenario or device file;\n3 the backend is unavailable; "
					 "4 the device failed or the plot did.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim predict: %s\nTry 'gpusim predict --help'.\n",
			error->message);
		status = GS_EXIT_USAGE;
	} else if (check_options(argc, &o, &status)) {
		status = predict(argv + 1, &o);
	}
	g_free(o.backend);
	g_free(o.device);
	g_free(o.out);
	return status;
}
