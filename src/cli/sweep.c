/*
 * gpusim: a sweep's grid, its shards and the files written from its runs.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/sweep.h"
#include "scenario/loader.h"

static void
param_free(GsSweepParam *p)
{
	g_free(p->key);
	g_ptr_array_unref(p->values);
	g_free(p);
}

/* ---- parameters ---- */

static GsSweepParam *
parse_param(const char *text, GError **error)
{
	const char *eq = strchr(text, '=');
	g_auto(GStrv) values = NULL;
	GsSweepParam *p;

	if (eq == NULL || eq == text || eq[1] == '\0') {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--param '%s': expected KEY=V1,V2,... (e.g. memory.gpu.capacity=8MiB,"
			    "16MiB)",
			    text);
		return NULL;
	}
	p = g_new0(GsSweepParam, 1);
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
parse_params(const char *const *texts, GError **error)
{
	g_autoptr(GPtrArray) params = g_ptr_array_new_with_free_func((GDestroyNotify) param_free);

	for (guint i = 0; texts != NULL && texts[i] != NULL; i++) {
		GsSweepParam *p = parse_param(texts[i], error);

		if (p == NULL)
			return NULL;
		for (guint k = 0; k < params->len; k++) {
			if (strcmp(((GsSweepParam *) params->pdata[k])->key, p->key) == 0) {
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

GsSweepGrid *
gs_sweep_grid_new(const char *const *params, GPtrArray *variants, GError **error)
{
	g_autoptr(GPtrArray) taken = variants;
	GsSweepGrid *grid;
	GPtrArray *parsed = parse_params(params, error);
	guint64 runs = variants->len;

	if (parsed == NULL)
		return NULL;
	for (guint k = 0; k < parsed->len; k++) {
		runs *= ((GsSweepParam *) parsed->pdata[k])->values->len;
		if (runs > GS_SWEEP_MAX_RUNS) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "the grid has more than %u runs", GS_SWEEP_MAX_RUNS);
			g_ptr_array_unref(parsed);
			return NULL;
		}
	}
	grid = g_new0(GsSweepGrid, 1);
	grid->params = parsed;
	grid->variants = g_steal_pointer(&taken);
	grid->runs = (guint) runs;
	return grid;
}

void
gs_sweep_grid_free(GsSweepGrid *grid)
{
	if (grid == NULL)
		return;
	g_ptr_array_unref(grid->params);
	g_ptr_array_unref(grid->variants);
	g_free(grid);
}

/* Runs per value of the first parameter and variant: the product of the others' counts. */
static guint
rest_combinations(const GsSweepGrid *grid)
{
	guint n = 1;

	for (guint k = 1; k < grid->params->len; k++)
		n *= ((GsSweepParam *) grid->params->pdata[k])->values->len;
	return n;
}

const char *
gs_sweep_value(const GsSweepGrid *grid, guint run, guint k)
{
	const GsSweepParam *p = grid->params->pdata[k];
	guint stride = grid->variants->len;

	for (guint j = grid->params->len - 1; j > k; j--)
		stride *= ((GsSweepParam *) grid->params->pdata[j])->values->len;
	return p->values->pdata[(run / stride) % p->values->len];
}

const GsBatchVariant *
gs_sweep_variant(const GsSweepGrid *grid, guint run)
{
	return grid->variants->pdata[run % grid->variants->len];
}

/* ---- shards ---- */

gboolean
gs_sweep_shard_parse(const char *text, guint runs, GsSweepShard *shard, GError **error)
{
	g_auto(GStrv) parts = g_strsplit(text, "/", -1);
	guint64 k = 0, n = 0;

	if (g_strv_length(parts) != 2 ||
	    !g_ascii_string_to_unsigned(parts[0], 10, 1, G_MAXUINT, &k, NULL) ||
	    !g_ascii_string_to_unsigned(parts[1], 10, 1, G_MAXUINT, &n, NULL) || k > n) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--shard=%s: expected K/N, shard K of N with 1 <= K <= N (e.g. 2/8)",
			    text);
		return FALSE;
	}
	if (n > runs) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--shard=%s: the sweep has %u runs, so at most %u shards", text, runs,
			    runs);
		return FALSE;
	}
	shard->k = (guint) k;
	shard->n = (guint) n;
	return TRUE;
}

gboolean
gs_sweep_shard_takes(const GsSweepShard *shard, guint run)
{
	return run % shard->n == shard->k - 1;
}

/* ---- the files ---- */

char *
gs_sweep_trace_name(const GsSweepGrid *grid, guint run)
{
	int digits = grid->runs < 1000 ? 3 : (int) g_snprintf(NULL, 0, "%u", grid->runs);

	return g_strdup_printf("run%0*u.trace.json", digits, run + 1);
}

void
gs_sweep_outputs_clear(GsSweepOutputs *outs)
{
	g_free(outs->traces);
	*outs = (GsSweepOutputs) {0};
}

gboolean
gs_sweep_add_traces(GsOutputSet *set, const char *dir, const GsSweepGrid *grid,
		    const GsSweepShard *shard, gboolean traces, GsSweepOutputs *outs,
		    GError **error)
{
	if (!gs_output_set_make_dir(set, dir, error))
		return FALSE;
	outs->traces = g_new0(GsOutput *, grid->runs);
	for (guint i = 0; traces && i < grid->runs; i++) {
		g_autofree char *name = gs_sweep_trace_name(grid, i);

		if (gs_sweep_shard_takes(shard, i) &&
		    (outs->traces[i] = gs_output_set_add_in(set, dir, name, error)) == NULL)
			return FALSE;
	}
	return TRUE;
}

gboolean
gs_sweep_add_files(GsOutputSet *set, const char *dir, gboolean plotting, GsSweepOutputs *outs,
		   GError **error)
{
	outs->csv = gs_output_set_add_in(set, dir, "sweep.csv", error);
	if (outs->csv == NULL)
		return FALSE;
	outs->plot_data = gs_output_set_add_in(set, dir, "sweep-plot.csv", error);
	if (outs->plot_data == NULL || !plotting)
		return outs->plot_data != NULL;
	outs->png = gs_output_set_add_in(set, dir, "sweep.png", error);
	outs->svg = outs->png != NULL ? gs_output_set_add_in(set, dir, "sweep.svg", error) : NULL;
	return outs->svg != NULL;
}

/* ---- sweep.csv ---- */

/*
 * Whether every value of @p is a quantity with its unit: its column then
 * holds base units, which a notebook reads as numbers, and KEY_text beside
 * it the values as written.
 */
static gboolean
param_is_quantity(const GsSweepParam *p)
{
	gint64 value;

	for (guint i = 0; i < p->values->len; i++) {
		if (!gs_loader_quantity(p->values->pdata[i], &value, NULL))
			return FALSE;
	}
	return TRUE;
}

static void
param_header(GString *s, const GsSweepParam *p)
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
param_cell(GString *s, const GsSweepParam *p, const char *value)
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
sweep_csv(const GsSweepGrid *grid, const GsBatchMetrics *metrics)
{
	GString *s = g_string_new("run");
	GPtrArray *params = grid->params;

	for (guint k = 0; k < params->len; k++)
		param_header(s, params->pdata[k]);
	g_string_append_printf(s, ",variant,%s\n", gs_batch_csv_header());
	for (guint i = 0; i < grid->runs; i++) {
		g_string_append_printf(s, "%u", i + 1);
		for (guint k = 0; k < params->len; k++)
			param_cell(s, params->pdata[k], gs_sweep_value(grid, i, k));
		g_string_append_c(s, ',');
		gs_batch_csv_field(s, gs_sweep_variant(grid, i)->label);
		g_string_append_c(s, ',');
		gs_batch_csv_metrics(s, &metrics[i]);
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
axis_kind(const GsSweepParam *p, double *values)
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
axis_init(Axis *axis, const GsSweepParam *p)
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

/* One line of the plot: the variant and other parameters of run @run. */
static char *
series_title(const GsSweepGrid *grid, guint run)
{
	GString *s = g_string_new(gs_sweep_variant(grid, run)->label);

	for (guint k = 1; k < grid->params->len; k++)
		g_string_append_printf(s, ", %s=%s", ((GsSweepParam *) grid->params->pdata[k])->key,
				       gs_sweep_value(grid, run, k));
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
plot_row(GString *s, double x, const GsBatchMetrics *m)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	const gint64 *v = m->value;

	g_string_append_printf(
		s, "%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
		   ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
		   ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%d\n",
		g_ascii_dtostr(buf, sizeof buf, x), v[GS_METRIC_MAKESPAN_NS], v[GS_METRIC_TASKS],
		v[GS_METRIC_TASKS] - v[GS_METRIC_TASKS_COMPLETED], v[GS_METRIC_RETRIES],
		v[GS_METRIC_SPLITS], v[GS_METRIC_BLOCKED_NS], v[GS_METRIC_LOST_NS],
		v[GS_METRIC_SPILLED_GPU_TO_HOST] + v[GS_METRIC_SPILLED_HOST_TO_DISK],
		v[GS_METRIC_PEAK_GPU_USED], outcome_marker(m->outcome));
}

/*
 * sweep-plot.csv, and the plot's variables: a block per (variant, other
 * parameters), its points in the order of the first parameter's values.
 */
static char *
plot_data(const GsSweepGrid *grid, const GsBatchMetrics *metrics, const Axis *axis,
	  GString *vars)
{
	GString *s = g_string_new("# x,makespan_ns,tasks,tasks_not_completed,retries,splits,blocked_ns,"
				  "lost_ns,spilled_bytes,peak_gpu_used,marker\n");
	guint variants = grid->variants->len;
	guint rest = rest_combinations(grid);
	guint n_first = ((GsSweepParam *) grid->params->pdata[0])->values->len;
	guint series = 0;

	for (guint v = 0; v < variants; v++) {
		for (guint r = 0; r < rest; r++) {
			g_autofree char *title = series_title(grid, r * variants + v);
			g_autofree char *name = g_strdup_printf("title%u", ++series);

			gs_plot_set_string(vars, name, title);
			if (series > 1)
				g_string_append(s, "\n\n");
			for (guint x = 0; x < n_first; x++)
				plot_row(s, axis->x[x], &metrics[(x * rest + r) * variants + v]);
		}
	}
	gs_plot_set_number(vars, "n", series);
	return g_string_free(s, FALSE);
}

static void
set_scales(GString *vars, const GsSweepGrid *grid, const GsBatchMetrics *metrics)
{
	gint64 max_ns = 0, max_bytes = 0;

	for (guint i = 0; i < grid->runs; i++) {
		const gint64 *v = metrics[i].value;

		max_ns = MAX(max_ns, MAX(v[GS_METRIC_MAKESPAN_NS],
					 MAX(v[GS_METRIC_BLOCKED_NS], v[GS_METRIC_LOST_NS])));
		max_bytes = MAX(max_bytes, v[GS_METRIC_PEAK_GPU_USED]);
	}
	gs_plot_set_time_unit(vars, max_ns);
	gs_plot_set_byte_unit(vars, max_bytes);
}

/* Writes sweep-plot.csv and draws it when gnuplot is there; the exit status. */
static int
draw_plot(const GsSweepGrid *grid, const GsBatchMetrics *metrics, const char *name,
	  GsPlotter *plotter, const GsSweepOutputs *outs, const char *command, const char *dir)
{
	g_autoptr(GString) vars = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autofree char *data = NULL;
	g_autofree char *heading = NULL;
	const char *first = ((GsSweepParam *) grid->params->pdata[0])->key;
	Axis axis;

	axis_init(&axis, grid->params->pdata[0]);
	data = plot_data(grid, metrics, &axis, vars);
	if (!gs_output_write(outs->plot_data, data, &error)) {
		fprintf(stderr, "gpusim %s: %s\n", command, error->message);
		axis_clear(&axis);
		return GS_EXIT_USAGE;
	}
	heading = g_strdup_printf("%s: sweep of %s", name, first);
	/* Written just above: its temporary is there. */
	gs_plot_set_string(vars, "file", gs_output_staged_path(outs->plot_data, NULL));
	gs_plot_set_string(vars, "xlabel", axis.label);
	gs_plot_set_string(vars, "xtics", axis.tics);
	gs_plot_set_string(vars, "heading", heading);
	set_scales(vars, grid, metrics);
	axis_clear(&axis);
	if (gs_plotter_missing(plotter) != NULL) {
		fprintf(stderr, "gpusim %s: plots skipped: %s. The data is in %s (sweep.csv, "
				"sweep-plot.csv); install gnuplot (e.g. apt-get install gnuplot-nox) "
				"and run the command again to draw them.\n",
			command, gs_plotter_missing(plotter), dir);
		return GS_EXIT_OK;
	}
	if (!gs_plotter_draw(plotter, "sweep.gp", vars, outs->png, outs->svg, &error)) {
		fprintf(stderr, "gpusim %s: the plot failed: %s\n", command, error->message);
		return GS_EXIT_INTERNAL;
	}
	return GS_EXIT_OK;
}

int
gs_sweep_write(const GsSweepGrid *grid, const GsBatchMetrics *metrics, const char *name,
	       GsPlotter *plotter, const GsSweepOutputs *outs, const char *command,
	       const char *dir)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *csv = sweep_csv(grid, metrics);

	if (!gs_output_write(outs->csv, csv, &error)) {
		fprintf(stderr, "gpusim %s: %s\n", command, error->message);
		return GS_EXIT_USAGE;
	}
	return draw_plot(grid, metrics, name, plotter, outs, command, dir);
}


char *
gs_sweep_files_written(const char *dir, gboolean plotting, gboolean traces)
{
	return g_strdup_printf("wrote %s/: sweep.csv, sweep-plot.csv%s%s", dir,
			       plotting ? ", sweep.png, sweep.svg" : "",
			       traces ? ", runNNN.trace.json (open in ui.perfetto.dev)" : "");
}
