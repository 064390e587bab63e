/*
 * gpusim: the `sweep` command: a scenario over a grid of parameter values.
 *
 * Each --param KEY=V1,V2,... is a scenario key (as --set takes it) and its
 * values; the runs are the cross product of every parameter's values, times
 * the variants (chosen as `compare` chooses them). Runs are ordered with the
 * first parameter changing slowest and the variant fastest; that order, not
 * the order in which the parallel workers finish, is the order of sweep.csv,
 * so the same sweep writes the same file whatever --jobs is.
 *
 * Outputs, in the --out folder: sweep.csv (run number, one column per
 * parameter with the value as written, or for a size, duration or bandwidth
 * its base units and KEY_text beside with the value as written, the variant,
 * then the metrics of batch.h), sweep-plot.csv (the same metrics grouped into one block per plot
 * line, with the first parameter as a number), and, with gnuplot, sweep.png
 * and sweep.svg: each metric against the first parameter, one line per
 * variant and per value of the other parameters. A first parameter whose
 * values are all sizes or all durations is drawn to scale in a readable unit;
 * one with other values (policy names, say) is drawn with one tick per value.
 * With --trace each run also writes runNNN.trace.json. These files are one
 * output set (output.h): on any error none of them is written.
 *
 * Progress: on a terminal, a bar redrawn in place on stderr; otherwise a
 * plain line at every tenth of the runs, so logs stay short.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "report/output.h"
#include "report/plot.h"
#include "report/report.h"
#include "scenario/loader.h"

typedef struct {
	char *backend;
	const GsDriver *driver; /* the backend's */
	char *variants;
	char *out;
	char **params;
	char **sets;
	gint64 seed;
	gint jobs;
	gboolean trace;
	gboolean quiet;
} SweepOptions;

/* The outputs besides the runs' traces. */
typedef struct {
	GsOutput *csv;       /* sweep.csv */
	GsOutput *plot_data; /* sweep-plot.csv */
	GsOutput *png, *svg; /* NULL without gnuplot */
} SweepOutputs;

typedef struct {
	char *key;
	GPtrArray *values; /* char* */
} Param;

static void
param_free(Param *p)
{
	g_free(p->key);
	g_ptr_array_unref(p->values);
	g_free(p);
}

/* ---- parameters ---- */

static Param *
parse_param(const char *text, GError **error)
{
	const char *eq = strchr(text, '=');
	g_auto(GStrv) values = NULL;
	Param *p;

	if (eq == NULL || eq == text || eq[1] == '\0') {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--param '%s': expected KEY=V1,V2,... (e.g. memory.gpu.capacity=8MiB,"
			    "16MiB)",
			    text);
		return NULL;
	}
	p = g_new0(Param, 1);
	p->key = g_strndup(text, (gsize) (eq - text));
	p->values = g_ptr_array_new_with_free_func(g_free);
	values = g_strsplit(eq + 1, ",", -1);
	for (guint i = 0; values[i] != NULL; i++) {
		const char *value = g_strstrip(values[i]);

		if (*value == '\0') {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--param %s: an empty value in '%s'", p->key, eq + 1);
			param_free(p);
			return NULL;
		}
		g_ptr_array_add(p->values, g_strdup(value));
	}
	return p;
}

static GPtrArray *
parse_params(char **texts, GError **error)
{
	g_autoptr(GPtrArray) params = g_ptr_array_new_with_free_func((GDestroyNotify) param_free);

	for (guint i = 0; texts != NULL && texts[i] != NULL; i++) {
		Param *p = parse_param(texts[i], error);

		if (p == NULL)
			return NULL;
		for (guint k = 0; k < params->len; k++) {
			if (strcmp(((Param *) params->pdata[k])->key, p->key) == 0) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					    "--param %s is given twice", p->key);
				param_free(p);
				return NULL;
			}
		}
		g_ptr_array_add(params, p);
	}
	if (params->len == 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "give at least one --param KEY=V1,V2,...");
		return NULL;
	}
	return g_steal_pointer(&params);
}

/* ---- the grid ---- */

/* Runs per value of the first parameter: the product of the others' counts. */
static guint
rest_combinations(GPtrArray *params)
{
	guint n = 1;

	for (guint k = 1; k < params->len; k++)
		n *= ((Param *) params->pdata[k])->values->len;
	return n;
}

/* Value index of parameter @k in combination @combo (the first parameter slowest). */
static guint
value_index(GPtrArray *params, guint combo, guint k)
{
	guint stride = 1;

	for (guint j = params->len - 1; j > k; j--)
		stride *= ((Param *) params->pdata[j])->values->len;
	return (combo / stride) % ((Param *) params->pdata[k])->values->len;
}

static const char *
param_value(GPtrArray *params, guint combo, guint k)
{
	const Param *p = params->pdata[k];

	return p->values->pdata[value_index(params, combo, k)];
}

static GPtrArray *
make_jobs(GPtrArray *params, GPtrArray *variants, const SweepOptions *o)
{
	GPtrArray *jobs = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);
	guint combos = rest_combinations(params) *
		       ((Param *) params->pdata[0])->values->len;

	for (guint c = 0; c < combos; c++) {
		GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);

		for (guint i = 0; o->sets != NULL && o->sets[i] != NULL; i++)
			g_ptr_array_add(sets, g_strdup(o->sets[i]));
		for (guint k = 0; k < params->len; k++)
			g_ptr_array_add(sets, g_strconcat(((Param *) params->pdata[k])->key, "=",
							  param_value(params, c, k), NULL));
		g_ptr_array_add(sets, NULL);
		for (guint v = 0; v < variants->len; v++)
			g_ptr_array_add(jobs, gs_batch_job_new(variants->pdata[v],
							       (const char *const *) sets->pdata));
		g_ptr_array_unref(sets);
	}
	return jobs;
}

/* Every file of the sweep, in the --out folder, made if need be. */
static gboolean
add_outputs(GsOutputSet *set, GPtrArray *jobs, gboolean plotting, const SweepOptions *o,
	    SweepOutputs *outs, GError **error)
{
	int digits = jobs->len < 1000 ? 3 : (int) g_snprintf(NULL, 0, "%u", jobs->len);

	if (!gs_output_set_make_dir(set, o->out, error))
		return FALSE;
	for (guint i = 0; o->trace && i < jobs->len; i++) {
		g_autofree char *name = g_strdup_printf("run%0*u.trace.json", digits, i + 1);
		GsBatchJob *job = jobs->pdata[i];

		if ((job->trace = gs_output_set_add_in(set, o->out, name, error)) == NULL)
			return FALSE;
	}
	outs->csv = gs_output_set_add_in(set, o->out, "sweep.csv", error);
	if (outs->csv == NULL)
		return FALSE;
	outs->plot_data = gs_output_set_add_in(set, o->out, "sweep-plot.csv", error);
	if (outs->plot_data == NULL || !plotting)
		return outs->plot_data != NULL;
	outs->png = gs_output_set_add_in(set, o->out, "sweep.png", error);
	outs->svg = outs->png != NULL ? gs_output_set_add_in(set, o->out, "sweep.svg", error) : NULL;
	return outs->svg != NULL;
}

/* ---- sweep.csv ---- */

/*
 * Whether every value of @p is a quantity with its unit: its column then
 * holds base units, which a notebook reads as numbers, and KEY_text beside
 * it the values as written.
 */
static gboolean
param_is_quantity(const Param *p)
{
	gint64 value;

	for (guint i = 0; i < p->values->len; i++) {
		if (!gs_loader_quantity(p->values->pdata[i], &value, NULL))
			return FALSE;
	}
	return TRUE;
}

static void
param_header(GString *s, const Param *p)
{
	g_autofree char *text = g_strconcat(p->key, "_text", NULL);

	g_string_append_c(s, ',');
	gs_batch_csv_field(s, p->key);
	if (param_is_quantity(p)) {
		g_string_append_c(s, ',');
		gs_batch_csv_field(s, text);
	}
}

static void
param_cell(GString *s, const Param *p, const char *value)
{
	gint64 base;

	g_string_append_c(s, ',');
	if (!param_is_quantity(p)) {
		gs_batch_csv_field(s, value);
		return;
	}
	gs_loader_quantity(value, &base, NULL);
	g_string_append_printf(s, "%" G_GINT64_FORMAT ",", base);
	gs_batch_csv_field(s, value);
}

static char *
sweep_csv(GPtrArray *jobs, GPtrArray *params, guint n_variants)
{
	GString *s = g_string_new("run");

	for (guint k = 0; k < params->len; k++)
		param_header(s, params->pdata[k]);
	g_string_append_printf(s, ",variant,%s\n", gs_batch_csv_header());
	for (guint i = 0; i < jobs->len; i++) {
		const GsBatchJob *job = jobs->pdata[i];

		g_string_append_printf(s, "%u", i + 1);
		for (guint k = 0; k < params->len; k++)
			param_cell(s, params->pdata[k], param_value(params, i / n_variants, k));
		g_string_append_c(s, ',');
		gs_batch_csv_field(s, job->variant->label);
		g_string_append_c(s, ',');
		gs_batch_csv_metrics(s, job->result);
		g_string_append_c(s, '\n');
	}
	return g_string_free(s, FALSE);
}

/* ---- the x axis ---- */

typedef enum { AXIS_NUMBER, AXIS_BYTES, AXIS_TIME, AXIS_WORDS } AxisKind;

typedef struct {
	AxisKind kind;
	double *x;    /* the position of each value of the first parameter */
	char *label;  /* "memory.gpu.capacity (MiB)" */
	char *tics;   /* gnuplot tic list for AXIS_WORDS, else "" */
} Axis;

/*
 * A number with an optional unit of SPEC §3.1, as the loader reads it; FALSE
 * for anything else (a bandwidth too: it gets a tick per value).
 */
static gboolean
parse_quantity(const char *text, double *value, AxisKind *kind)
{
	GsQuantity quantity;
	gint64 base;
	char *end = NULL;

	if (gs_loader_quantity(text, &base, &quantity)) {
		*value = (double) base;
		*kind = quantity == GS_QUANTITY_SIZE ? AXIS_BYTES : AXIS_TIME;
		return quantity != GS_QUANTITY_BANDWIDTH;
	}
	*value = g_ascii_strtod(text, &end);
	*kind = AXIS_NUMBER;
	return end != text && *end == '\0';
}

/*
 * Quantities of one kind are drawn to scale (a bare number counting as bytes
 * or nanoseconds, as SPEC §3.1 reads it); a mixture of kinds, or a word, gets
 * one tick per value.
 */
static AxisKind
axis_kind(const Param *p, double *values)
{
	AxisKind kind = AXIS_NUMBER;

	for (guint i = 0; i < p->values->len; i++) {
		AxisKind k;

		if (!parse_quantity(p->values->pdata[i], &values[i], &k))
			return AXIS_WORDS;
		if (k == AXIS_NUMBER)
			continue;
		if (kind != AXIS_NUMBER && k != kind)
			return AXIS_WORDS;
		kind = k;
	}
	return kind;
}

static void
axis_init(Axis *axis, const Param *p)
{
	double max = 0, div = 1;
	const char *unit = NULL;
	GString *tics = g_string_new(NULL);

	axis->x = g_new0(double, p->values->len);
	axis->kind = axis_kind(p, axis->x);
	for (guint i = 0; i < p->values->len; i++)
		max = MAX(max, axis->x[i]);
	if (axis->kind == AXIS_BYTES)
		unit = gs_plot_byte_unit(max, &div);
	else if (axis->kind == AXIS_TIME)
		unit = gs_plot_time_unit(max, &div);
	for (guint i = 0; i < p->values->len; i++) {
		if (axis->kind == AXIS_WORDS) {
			g_autoptr(GString) word = g_string_new(NULL);

			/* Tic labels go inside a gnuplot single-quoted string. */
			for (const char *c = p->values->pdata[i]; *c != '\0'; c++)
				g_string_append_printf(word, *c == '\'' ? "''" : "%c", *c);
			g_string_append_printf(tics, "%s'%s' %u", i > 0 ? ", " : "(", word->str, i);
			axis->x[i] = i;
		} else {
			axis->x[i] /= div;
		}
	}
	if (axis->kind == AXIS_WORDS)
		g_string_append_c(tics, ')');
	axis->tics = g_string_free(tics, FALSE);
	axis->label = unit != NULL ? g_strdup_printf("%s (%s)", p->key, unit) : g_strdup(p->key);
}

static void
axis_clear(Axis *axis)
{
	g_free(axis->x);
	g_free(axis->label);
	g_free(axis->tics);
}

/* ---- the plot ---- */

/* One line of the plot: a variant at one combination of the other parameters. */
static char *
series_title(GPtrArray *params, const GsBatchVariant *variant, guint rest)
{
	GString *s = g_string_new(variant->label);

	for (guint k = 1; k < params->len; k++)
		g_string_append_printf(s, ", %s=%s", ((Param *) params->pdata[k])->key,
				       param_value(params, rest, k));
	return g_string_free(s, FALSE);
}

/*
 * The marker of a point tells its outcome, so that a deadlock that ended early
 * never reads as a short makespan: gnuplot point types 7 (a dot: completed),
 * 8 (a triangle: failed), 2 (a cross: deadlock), 4 (a square: timeout).
 */
static int
outcome_marker(GsOutcome outcome)
{
	switch (outcome) {
	case GS_OUTCOME_COMPLETED:
		return 7;
	case GS_OUTCOME_FAILED:
		return 8;
	case GS_OUTCOME_DEADLOCK:
		return 2;
	case GS_OUTCOME_TIMEOUT:
		return 4;
	}
	return 7;
}

static void
plot_row(GString *s, double x, const GsResult *r)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append_printf(
		s, "%s,%" G_GINT64_FORMAT ",%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
		   ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
		   ",%" G_GINT64_FORMAT ",%d\n",
		g_ascii_dtostr(buf, sizeof buf, x), r->makespan_ns, r->totals.tasks,
		r->totals.tasks - r->totals.tasks_completed, r->totals.retries, r->totals.splits,
		r->totals.blocked_ns,
		r->totals.lost_ns, r->totals.spilled_gpu_to_host + r->totals.spilled_host_to_disk,
		r->tiers[GS_TIER_GPU].peak_used, outcome_marker(r->outcome));
}

/*
 * sweep-plot.csv, and the plot's variables: a block per (variant, other
 * parameters), its points in the order of the first parameter's values.
 */
static char *
plot_data(GPtrArray *jobs, GPtrArray *params, GPtrArray *variants, const Axis *axis,
	  GString *vars)
{
	GString *s = g_string_new("# x,makespan_ns,tasks,tasks_not_completed,retries,splits,blocked_ns,"
				  "lost_ns,spilled_bytes,peak_gpu_used,marker\n");
	guint rest = rest_combinations(params);
	guint n_first = ((Param *) params->pdata[0])->values->len;
	guint series = 0;

	for (guint v = 0; v < variants->len; v++) {
		for (guint r = 0; r < rest; r++) {
			g_autofree char *title = series_title(params, variants->pdata[v], r);
			g_autofree char *name = g_strdup_printf("title%u", ++series);

			gs_plot_set_string(vars, name, title);
			if (series > 1)
				g_string_append(s, "\n\n");
			for (guint x = 0; x < n_first; x++) {
				const GsBatchJob *job = jobs->pdata[(x * rest + r) * variants->len + v];

				plot_row(s, axis->x[x], job->result);
			}
		}
	}
	gs_plot_set_number(vars, "n", series);
	return g_string_free(s, FALSE);
}

static void
set_scales(GString *vars, GPtrArray *jobs)
{
	gint64 max_ns = 0, max_bytes = 0;

	for (guint i = 0; i < jobs->len; i++) {
		const GsResult *r = ((GsBatchJob *) jobs->pdata[i])->result;

		max_ns = MAX(max_ns, MAX(r->makespan_ns, MAX(r->totals.blocked_ns, r->totals.lost_ns)));
		max_bytes = MAX(max_bytes, r->tiers[GS_TIER_GPU].peak_used);
	}
	gs_plot_set_time_unit(vars, max_ns);
	gs_plot_set_byte_unit(vars, max_bytes);
}

/* ---- progress ---- */

typedef struct {
	gboolean tty;
	guint last_tenth;
} Progress;

static void
show_progress(const GsBatchJob *job, guint done, guint total, gpointer data)
{
	Progress *p = data;
	enum { BAR = 30 };

	if (p->tty) {
		char bar[BAR + 1];
		guint filled = done * BAR / total;

		for (guint i = 0; i < BAR; i++)
			bar[i] = i < filled ? '#' : '-';
		bar[BAR] = '\0';
		fprintf(stderr, "\rsweep [%s] %u/%u runs", bar, done, total);
		if (done == total)
			fputc('\n', stderr);
	} else if (done * 10 / total != p->last_tenth || done == total) {
		p->last_tenth = done * 10 / total;
		fprintf(stderr, "gpusim sweep: %u of %u runs done\n", done, total);
	}
	fflush(stderr);
}

/* ---- the command ---- */

/* Writes sweep-plot.csv and draws it when gnuplot is there; FALSE when the plot failed. */
static gboolean
draw_plot(GPtrArray *jobs, GPtrArray *params, GPtrArray *variants, GsPlotter *plotter,
	  const SweepOutputs *outs, const SweepOptions *o, int *status)
{
	g_autoptr(GString) vars = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autofree char *data = NULL;
	g_autofree char *heading = NULL;
	const char *name = ((GsBatchJob *) jobs->pdata[0])->workload->name;
	Axis axis;

	axis_init(&axis, params->pdata[0]);
	data = plot_data(jobs, params, variants, &axis, vars);
	if (!gs_output_write(outs->plot_data, data, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		axis_clear(&axis);
		*status = GS_EXIT_USAGE;
		return FALSE;
	}
	heading = g_strdup_printf("%s: sweep of %s", name, ((Param *) params->pdata[0])->key);
	/* Written just above: its temporary is there. */
	gs_plot_set_string(vars, "file", gs_output_staged_path(outs->plot_data, NULL));
	gs_plot_set_string(vars, "xlabel", axis.label);
	gs_plot_set_string(vars, "xtics", axis.tics);
	gs_plot_set_string(vars, "heading", heading);
	set_scales(vars, jobs);
	axis_clear(&axis);
	if (gs_plotter_missing(plotter) != NULL) {
		fprintf(stderr, "gpusim sweep: plots skipped: %s. The data is in %s (sweep.csv, "
				"sweep-plot.csv); install gnuplot (e.g. apt-get install gnuplot-nox) "
				"and run the command again to draw them.\n",
			gs_plotter_missing(plotter), o->out);
		return TRUE;
	}
	if (!gs_plotter_draw(plotter, "sweep.gp", vars, outs->png, outs->svg, &error)) {
		fprintf(stderr, "gpusim sweep: the plot failed: %s\n", error->message);
		*status = GS_EXIT_INTERNAL;
		return FALSE;
	}
	return TRUE;
}

static int
load_and_run(const char *path, GPtrArray *jobs, GsOutputSet *set, gboolean plotting,
	     SweepOutputs *outs, const SweepOptions *o)
{
	g_autoptr(GError) error = NULL;
	Progress progress = {.tty = isatty(fileno(stderr)), .last_tenth = 0};

	if (!gs_batch_load(path, jobs, &error)) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	for (guint i = 0; o->seed >= 0 && i < jobs->len; i++)
		((GsBatchJob *) jobs->pdata[i])->workload->seed = (guint64) o->seed;
	if (!add_outputs(set, jobs, plotting, o, outs, &error) ||
	    !gs_batch_run(jobs, o->driver, (guint) o->jobs, o->quiet ? NULL : show_progress,
			  &progress, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return gs_cmd_backend_status(error);
	}
	return GS_EXIT_OK;
}

static int
sweep(const char *path, const SweepOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) params = parse_params(o->params, &error);
	g_autoptr(GPtrArray) variants = NULL;
	g_autoptr(GPtrArray) jobs = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GsPlotter) plotter = gs_plotter_new();
	gboolean plotting = gs_plotter_missing(plotter) == NULL;
	SweepOutputs outs = {0};
	g_autofree char *csv = NULL;
	int status = GS_EXIT_OK;

	if (params == NULL) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if ((variants = gs_batch_variants(path, o->variants, &error)) == NULL) {
		fprintf(stderr, "%s%s\n", error->domain == G_OPTION_ERROR ? "gpusim sweep: " : "",
			error->message);
		return GS_EXIT_USAGE;
	}
	jobs = make_jobs(params, variants, o);
	if ((status = load_and_run(path, jobs, set, plotting, &outs, o)) != GS_EXIT_OK)
		return status;
	csv = sweep_csv(jobs, params, variants->len);
	if (!gs_output_write(outs.csv, csv, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!draw_plot(jobs, params, variants, plotter, &outs, o, &status))
		return status;
	if (!gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!o->quiet)
		printf("%u runs; wrote %s/: sweep.csv, sweep-plot.csv%s%s\n", jobs->len, o->out,
		       plotting ? ", sweep.png, sweep.svg" : "",
		       o->trace ? ", runNNN.trace.json (open in ui.perfetto.dev)" : "");
	return GS_EXIT_OK;
}

int
gs_cmd_sweep(int argc, char **argv)
{
	SweepOptions o = {.seed = -1};
	GOptionEntry entries[] = {
		{"param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.params,
		 "A scenario key and the values to sweep (repeat for a grid)", "KEY=V1,V2,..."},
		{"variants", 0, 0, G_OPTION_ARG_STRING, &o.variants,
		 "Variants, comma-separated (default: all, or fail,block,retry)", "A,B,..."},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
		 "Folder for the results (default: SCENARIO.sweep)", "DIR"},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
		 "Runs at once (default: one per processor)", "N"},
		{"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
		 "Override a scenario key in every run", "KEY=VALUE"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Seed for generators and jitter", "N"},
		{"trace", 0, 0, G_OPTION_ARG_NONE, &o.trace,
		 "Also write a Chrome/Perfetto trace per run", NULL},
		{"backend", 0, 0, G_OPTION_ARG_STRING, &o.backend,
		 "sim (default), host, or cuda on a GPU; a real backend runs one run at a time",
		 "NAME"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress or summary", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml");
	g_autoptr(GError) error = NULL;
	int status = GS_EXIT_OK;

	g_option_context_set_summary(context,
				     "Run a scenario over the cross product of parameter values "
				     "(times its variants),\nin parallel; write sweep.csv and plot "
				     "each metric against the first parameter.");
	g_option_context_set_description(
		context, "Example:\n  gpusim sweep study.yaml --param memory.gpu.capacity=4GiB,"
			 "6GiB,8GiB --jobs=4\n\nExit status: 0 every run ran (whatever its "
			 "outcome); 2 bad usage or an invalid\nscenario; 3 the backend is "
			 "unavailable; 4 the plot failed.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim sweep: %s\nTry 'gpusim sweep --help'.\n", error->message);
		status = GS_EXIT_USAGE;
	} else if (gs_cmd_check_batch("sweep", argc, argv, &o.jobs, o.backend, &o.driver, &o.out,
				      &status)) {
		status = sweep(argv[1], &o);
	}
	g_free(o.backend);
	g_free(o.variants);
	g_free(o.out);
	g_strfreev(o.params);
	g_strfreev(o.sets);
	return status;
}
