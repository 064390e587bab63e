/*
 * gpusim: drawing comparisons with gnuplot (see plot.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "report/plot.h"
#include "run/samples.h"

struct GsPlotter {
	char *gnuplot;     /* absolute path, or NULL */
	char *plots_dir;   /* holds common.gp, or NULL */
	const char *png;   /* "pngcairo" or "png", found on first use */
	const char *missing;
};

static gboolean
usable_program(const char *path)
{
	return path != NULL && g_file_test(path, G_FILE_TEST_IS_EXECUTABLE) &&
	       !g_file_test(path, G_FILE_TEST_IS_DIR);
}

static char *
find_gnuplot(void)
{
	const char *forced = g_getenv("GPUSIM_GNUPLOT");

	if (forced != NULL) {
		if (strcmp(forced, "no") == 0 || *forced == '\0')
			return NULL;
		return usable_program(forced) ? g_strdup(forced) : g_find_program_in_path(forced);
	}
	if (usable_program(GS_GNUPLOT_PATH))
		return g_strdup(GS_GNUPLOT_PATH);
	return g_find_program_in_path("gnuplot");
}

static gboolean
has_scripts(const char *dir)
{
	g_autofree char *common = NULL;

	if (dir == NULL)
		return FALSE;
	common = g_build_filename(dir, "common.gp", NULL);
	return g_file_test(common, G_FILE_TEST_IS_REGULAR);
}

static char *
find_scripts(void)
{
	const char *candidates[] = {g_getenv("GPUSIM_PLOTS_DIR"), GS_PLOTS_DIR,
				    GS_SOURCE_PLOTS_DIR};

	for (guint i = 0; i < G_N_ELEMENTS(candidates); i++)
		if (has_scripts(candidates[i]))
			return g_strdup(candidates[i]);
	return NULL;
}

GsPlotter *
gs_plotter_new(void)
{
	GsPlotter *p = g_new0(GsPlotter, 1);

	p->gnuplot = find_gnuplot();
	p->plots_dir = find_scripts();
	if (p->gnuplot == NULL)
		p->missing = "gnuplot was not found";
	else if (p->plots_dir == NULL)
		p->missing = "the plot scripts were not found (set GPUSIM_PLOTS_DIR to gpusim's "
			     "plots/ folder)";
	return p;
}

void
gs_plotter_free(GsPlotter *p)
{
	if (p == NULL)
		return;
	g_free(p->gnuplot);
	g_free(p->plots_dir);
	g_free(p);
}

const char *
gs_plotter_missing(const GsPlotter *p)
{
	return p->missing;
}

void
gs_plot_set_string(GString *vars, const char *name, const char *value)
{
	/* In a single-quoted gnuplot string only the quote itself needs escaping: ''. */
	g_string_append_printf(vars, "%s='", name);
	for (const char *c = value; *c != '\0'; c++) {
		if (*c == '\'')
			g_string_append_c(vars, '\'');
		g_string_append_c(vars, *c);
	}
	g_string_append(vars, "';");
}

void
gs_plot_set_number(GString *vars, const char *name, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append_printf(vars, "%s=%s;", name, g_ascii_dtostr(buf, sizeof buf, value));
}

typedef struct {
	const char *name;
	double size;
} Unit;

static const Unit time_units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
static const Unit byte_units[] = {
	{"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
	{"TiB", 1099511627776.0}};

static const char *
pick_unit(const Unit *units, guint n, double max, double *size)
{
	guint i = 0;

	while (i + 1 < n && max >= units[i + 1].size)
		i++;
	*size = units[i].size;
	return units[i].name;
}

const char *
gs_plot_time_unit(double max_ns, double *ns_per_unit)
{
	return pick_unit(time_units, G_N_ELEMENTS(time_units), max_ns, ns_per_unit);
}

const char *
gs_plot_byte_unit(double max_bytes, double *bytes_per_unit)
{
	return pick_unit(byte_units, G_N_ELEMENTS(byte_units), max_bytes, bytes_per_unit);
}

void
gs_plot_set_time_unit(GString *vars, gint64 max_ns)
{
	double size;
	const char *name = gs_plot_time_unit((double) max_ns, &size);

	gs_plot_set_number(vars, "tdiv", size);
	gs_plot_set_string(vars, "tunit", name);
}

void
gs_plot_set_byte_unit(GString *vars, gint64 max_bytes)
{
	double size;
	const char *name = gs_plot_byte_unit((double) max_bytes, &size);

	gs_plot_set_number(vars, "bdiv", size);
	gs_plot_set_string(vars, "bunit", name);
}

/* ---- cumulative distributions ---- */

static void
add_point(GArray *points, double x, double p)
{
	GsCdfPoint point = {x, p};

	g_array_append_val(points, point);
}

GArray *
gs_plot_cdf(double *values, gsize n, guint max_points)
{
	GArray *points = g_array_new(FALSE, FALSE, sizeof(GsCdfPoint));
	guint64 next = 1; /* the next multiple of 1/max_points to reach, in those units */

	if (n == 0)
		return points;
	gs_samples_sort(values, n);
	add_point(points, values[0], 0);
	for (gsize i = 0; i < n; i++) {
		/* Values at most values[i], once it is the last of its kind. */
		guint64 at_most = i + 1;

		if (at_most < n && values[i + 1] == values[i])
			continue;
		/* In whole numbers, so that no point is lost or kept by a rounding. */
		if (at_most < n && max_points > 0 && at_most * max_points < next * n)
			continue;
		/* The count over n, not a running sum of 1/n: the last is exactly 1. */
		add_point(points, values[i], (double) at_most / (double) n);
		if (max_points > 0)
			next = at_most * max_points / n + 1;
	}
	return points;
}

/* The largest value of any sample, 0 for none. */
static double
samples_max(GPtrArray *samples)
{
	double max = 0;

	for (guint i = 0; i < samples->len; i++) {
		GArray *a = samples->pdata[i];

		for (guint k = 0; k < a->len; k++)
			max = MAX(max, g_array_index(a, double, k));
	}
	return max;
}

static void
append_curve(GString *csv, const char *label, GArray *points, double div)
{
	char x[G_ASCII_DTOSTR_BUF_SIZE], p[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append_printf(csv, "# %s\n", label);
	for (guint k = 0; k < points->len; k++) {
		const GsCdfPoint *point = &g_array_index(points, GsCdfPoint, k);

		/* 12 digits: finer than any picture, and p still rises for up to 10^11 values. */
		g_string_append_printf(csv, "%s,%s\n",
				       g_ascii_formatd(x, sizeof x, "%.12g", point->x / div),
				       g_ascii_formatd(p, sizeof p, "%.12g", point->p));
	}
}

void
gs_plot_cdf_inputs(GPtrArray *samples, const char *const *labels, const char *what,
		   gboolean is_time, guint max_points, GString *csv, GString *vars)
{
	double div = 1;
	const char *unit = is_time ? gs_plot_time_unit(samples_max(samples), &div) : NULL;
	g_autofree char *xlabel =
		unit != NULL ? g_strdup_printf("%s (%s)", what, unit) : g_strdup(what);

	g_string_append_printf(csv, "# %s, fraction of the values at most it; a block per curve\n",
			       xlabel);
	gs_plot_set_number(vars, "n", samples->len);
	for (guint i = 0; i < samples->len; i++) {
		GArray *values = samples->pdata[i];
		g_autoptr(GArray) points =
			gs_plot_cdf((double *) (void *) values->data, values->len, max_points);
		g_autofree char *title = g_strdup_printf("title%u", i + 1);

		if (i > 0)
			g_string_append(csv, "\n\n");
		append_curve(csv, labels[i], points, div);
		gs_plot_set_string(vars, title, labels[i]);
	}
	gs_plot_set_string(vars, "xlabel", xlabel);
	gs_plot_set_number(vars, "counts", is_time ? 0 : 1);
}

/* Runs gnuplot; FALSE with @error holding what it said when it failed. */
static gboolean
run_gnuplot(const GsPlotter *p, const char *expression, const char *script, GError **error)
{
	const char *argv[] = {p->gnuplot, "-e", expression, script, NULL};
	g_autofree char *err = NULL;
	int wait_status = 0;

	if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
			  &err, &wait_status, error))
		return FALSE;
	if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
		g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "gnuplot %s: %s", script,
			    err != NULL && *err != '\0' ? g_strstrip(err) : "failed");
		return FALSE;
	}
	return TRUE;
}

/* pngcairo draws anti-aliased lines; the libgd png terminal is the fallback. */
static const char *
png_terminal(GsPlotter *p)
{
	if (p->png == NULL)
		p->png = run_gnuplot(p, "set terminal pngcairo", "/dev/null", NULL) ? "pngcairo"
										   : "png";
	return p->png;
}

/* gnuplot draws into the output's temporary; the output set puts it in place. */
static gboolean
draw_one(GsPlotter *p, const char *script_path, const GString *vars, GsOutput *picture,
	 const char *term, GError **error)
{
	const char *staged = gs_output_staged_path(picture, error);
	g_autoptr(GString) expression = g_string_new(vars->str);

	if (staged == NULL)
		return FALSE;
	gs_plot_set_string(expression, "term", term);
	gs_plot_set_string(expression, "out", staged);
	gs_plot_set_string(expression, "plotsdir", p->plots_dir);
	return run_gnuplot(p, expression->str, script_path, error);
}

gboolean
gs_plotter_draw(GsPlotter *p, const char *script, const GString *vars, GsOutput *png,
		GsOutput *svg, GError **error)
{
	g_autofree char *script_path = NULL;

	g_return_val_if_fail(p->missing == NULL, FALSE);
	script_path = g_build_filename(p->plots_dir, script, NULL);
	return draw_one(p, script_path, vars, png, png_terminal(p), error) &&
	       draw_one(p, script_path, vars, svg, "svg", error);
}
