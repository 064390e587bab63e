/*
 * gpusim tests: what the plot module decides without drawing
 * (src/report/plot.h): the variables a script reads (quoting, numbers,
 * units), the points of an empirical CDF (a table of small samples with
 * every point written out, then properties of large ones: x and the
 * fraction never fall, the curve starts at 0 and ends at (largest, 1),
 * every point lies on the CDF, at most max_points + 1 of them), the inputs
 * of cdf.gp (a labelled block per curve, in order, the time unit in the
 * axis label), and a gnuplot turned off by GPUSIM_GNUPLOT.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "report/plot.h"

/* ---- script variables ---- */

static const struct {
	const char *value;
	const char *expected;
} string_rows[] = {
	{"plain", "v='plain';"},
	{"it's", "v='it''s';"},
	{"''", "v='''''';"},
	{"", "v='';"},
	{"a\"b;c", "v='a\"b;c';"},
};

START_TEST(test_set_string)
{
	g_autoptr(GString) vars = g_string_new(NULL);

	gs_plot_set_string(vars, "v", string_rows[_i].value);
	ck_assert_str_eq(vars->str, string_rows[_i].expected);
}
END_TEST

static const struct {
	double max;
	gboolean bytes;
	const char *unit;
	double size;
} unit_rows[] = {
	{0, FALSE, "ns", 1},
	{999, FALSE, "ns", 1},
	{1000, FALSE, "us", 1e3},
	{2.5e6, FALSE, "ms", 1e6},
	{7e9, FALSE, "s", 1e9},
	{7e13, FALSE, "s", 1e9},
	{1023, TRUE, "B", 1},
	{1024, TRUE, "KiB", 1024},
	{3.0 * 1048576, TRUE, "MiB", 1048576},
	{1099511627776.0 * 5, TRUE, "TiB", 1099511627776.0},
};

START_TEST(test_units)
{
	double size = 0;
	const char *unit = unit_rows[_i].bytes ? gs_plot_byte_unit(unit_rows[_i].max, &size)
					       : gs_plot_time_unit(unit_rows[_i].max, &size);

	ck_assert_str_eq(unit, unit_rows[_i].unit);
	ck_assert(size == unit_rows[_i].size);
}
END_TEST

START_TEST(test_set_number)
{
	g_autoptr(GString) vars = g_string_new(NULL);

	gs_plot_set_number(vars, "a", 3);
	gs_plot_set_number(vars, "b", 0.25);
	gs_plot_set_time_unit(vars, 2500000);
	ck_assert_str_eq(vars->str, "a=3;b=0.25;tdiv=1000000;tunit='ms';");
}
END_TEST

/* ---- the points of a CDF ---- */

#define MAX_ROW_POINTS 6

static const struct {
	/* Inputs */
	guint n;
	double values[8];
	guint max_points;
	/* Outputs: (x, p) pairs, n_points of them */
	guint n_points;
	double points[MAX_ROW_POINTS][2];
} cdf_rows[] = {
	/* One value: a jump from 0 to 1 at it. */
	{1, {5}, 0, 2, {{5, 0}, {5, 1}}},
	/* Unsorted, with a repeat: one point per distinct value, at the last of its kind. */
	{4, {3, 1, 2, 2}, 0, 4, {{1, 0}, {1, 0.25}, {2, 0.75}, {3, 1}}},
	/* All alike. */
	{3, {0, 0, 0}, 0, 2, {{0, 0}, {0, 1}}},
	/* Negative values sort first. */
	{3, {1, -1, 0}, 0, 4, {{-1, 0}, {-1, 1.0 / 3}, {0, 2.0 / 3}, {1, 1}}},
	/* Thinned to halves: the first value to reach 1/2, then the last. */
	{8, {1, 2, 3, 4, 5, 6, 7, 8}, 2, 3, {{1, 0}, {4, 0.5}, {8, 1}}},
	/* Quarters of 8: every second value. */
	{8, {8, 7, 6, 5, 4, 3, 2, 1}, 4, 5, {{1, 0}, {2, 0.25}, {4, 0.5}, {6, 0.75}, {8, 1}}},
	/* A jump past several thresholds counts once. */
	{5, {1, 2, 2, 2, 3}, 5, 4, {{1, 0}, {1, 0.2}, {2, 0.8}, {3, 1}}},
	/* Every jump at least 1/max_points: every point. */
	{4, {9, 9, 1, 1}, 100, 3, {{1, 0}, {1, 0.5}, {9, 1}}},
};

START_TEST(test_cdf_rows)
{
	double values[8];
	g_autoptr(GArray) points = NULL;

	memcpy(values, cdf_rows[_i].values, sizeof values);
	points = gs_plot_cdf(values, cdf_rows[_i].n, cdf_rows[_i].max_points);
	ck_assert_uint_eq(points->len, cdf_rows[_i].n_points);
	for (guint k = 0; k < points->len; k++) {
		const GsCdfPoint *p = &g_array_index(points, GsCdfPoint, k);

		ck_assert_msg(p->x == cdf_rows[_i].points[k][0], "point %u: x %g, expected %g", k,
			      p->x, cdf_rows[_i].points[k][0]);
		ck_assert_msg(p->p == cdf_rows[_i].points[k][1], "point %u: p %g, expected %g", k,
			      p->p, cdf_rows[_i].points[k][1]);
	}
}
END_TEST

START_TEST(test_cdf_empty)
{
	g_autoptr(GArray) points = gs_plot_cdf(NULL, 0, 10);

	ck_assert_uint_eq(points->len, 0);
}
END_TEST

/* Large samples, drawn with many repeats or none, thinned or not. */
static const struct {
	guint n;
	guint range; /* values are whole numbers below it: repeats when it is small */
	guint max_points;
} property_rows[] = {
	{10000, 1000000000, 400}, {10000, 7, 400}, {9999, 500, 400},
	{1, 1, 1},                {12345, 12345, 0}, {777, 1000000, 3},
};

/* The fraction of @sorted (length @n) at most @x. */
static double
fraction_at_most(const double *sorted, guint n, double x)
{
	guint count = 0;

	while (count < n && sorted[count] <= x)
		count++;
	return (double) count / n;
}

START_TEST(test_cdf_properties)
{
	guint n = property_rows[_i].n, max_points = property_rows[_i].max_points;
	g_autofree double *values = g_new(double, n);
	g_autoptr(GRand) rand = g_rand_new_with_seed(_i + 1);
	g_autoptr(GArray) points = NULL;
	const GsCdfPoint *first, *last;

	for (guint k = 0; k < n; k++)
		values[k] = g_rand_int_range(rand, 0,
					     (gint32) MIN(property_rows[_i].range, G_MAXINT32));
	points = gs_plot_cdf(values, n, max_points);
	/* values is sorted now. */
	for (guint k = 1; k < n; k++)
		ck_assert(values[k - 1] <= values[k]);
	first = &g_array_index(points, GsCdfPoint, 0);
	last = &g_array_index(points, GsCdfPoint, points->len - 1);
	ck_assert(first->x == values[0] && first->p == 0);
	ck_assert(last->x == values[n - 1] && last->p == 1);
	if (max_points > 0)
		ck_assert_uint_le(points->len, max_points + 1);
	for (guint k = 1; k < points->len; k++) {
		const GsCdfPoint *a = &g_array_index(points, GsCdfPoint, k - 1);
		const GsCdfPoint *b = &g_array_index(points, GsCdfPoint, k);

		ck_assert_msg(a->x <= b->x && a->p < b->p, "point %u does not rise", k);
		ck_assert_msg(b->p == fraction_at_most(values, n, b->x), "point %u is off the CDF",
			      k);
		/*
		 * Thinned, b is the first distinct value to reach the next multiple
		 * of 1/max_points after a: every smaller value falls short of it
		 * (whole numbers, so b->x - 1 is the largest value below b->x).
		 */
		if (max_points > 0 && k + 1 < points->len) {
			guint64 at_a = (guint64) (a->p * n + 0.5);
			double below = fraction_at_most(values, n, b->x - 1);
			guint64 below_b = (guint64) (below * n + 0.5);

			ck_assert_msg(below_b * max_points < (at_a * max_points / n + 1) * n,
				      "point %u was not the first to reach its threshold", k);
		}
	}
}
END_TEST

/* ---- the inputs of cdf.gp ---- */

static GArray *
sample_of(const double *values, guint n)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(double));

	g_array_append_vals(a, values, n);
	return a;
}

START_TEST(test_cdf_inputs_time)
{
	const double fast[] = {2e6, 1e6};
	const double slow[] = {3e6, 3e6, 5e6};
	g_autoptr(GPtrArray) samples =
		g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
	const char *labels[] = {"retry: 2 tasks", "block's"};
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(GString) vars = g_string_new(NULL);

	g_ptr_array_add(samples, sample_of(fast, G_N_ELEMENTS(fast)));
	g_ptr_array_add(samples, sample_of(slow, G_N_ELEMENTS(slow)));
	gs_plot_cdf_inputs(samples, labels, "task time", TRUE, 100, csv, vars);
	/* Milliseconds, as the largest value (5 ms) reads in; a labelled block per curve. */
	ck_assert_str_eq(csv->str,
			 "# task time (ms), fraction of the values at most it; a block per curve\n"
			 "# retry: 2 tasks\n"
			 "1,0\n1,0.5\n2,1\n"
			 "\n\n"
			 "# block's\n"
			 "3,0\n3,0.666666666667\n5,1\n");
	ck_assert_str_eq(vars->str, "n=2;title1='retry: 2 tasks';title2='block''s';"
				    "xlabel='task time (ms)';counts=0;");
}
END_TEST

START_TEST(test_cdf_inputs_counts)
{
	const double retries[] = {0, 0, 0, 2};
	const double none[] = {0};
	g_autoptr(GPtrArray) samples =
		g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
	const char *labels[] = {"a", "b", "c"};
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autoptr(GString) vars = g_string_new(NULL);
	g_auto(GStrv) blocks = NULL;

	g_ptr_array_add(samples, sample_of(retries, G_N_ELEMENTS(retries)));
	g_ptr_array_add(samples, sample_of(none, G_N_ELEMENTS(none)));
	g_ptr_array_add(samples, sample_of(NULL, 0));
	gs_plot_cdf_inputs(samples, labels, "retries per task", FALSE, 100, csv, vars);
	ck_assert_ptr_nonnull(strstr(vars->str, "n=3;title1='a';title2='b';title3='c';"));
	ck_assert_ptr_nonnull(strstr(vars->str, "xlabel='retries per task';counts=1;"));
	/* Three blocks, in order, each opening with its label; an empty sample has no points. */
	blocks = g_strsplit(csv->str, "\n\n\n", -1);
	ck_assert_uint_eq(g_strv_length(blocks), 3);
	ck_assert(g_str_has_suffix(blocks[0], "# a\n0,0\n0,0.75\n2,1"));
	ck_assert_str_eq(blocks[1], "# b\n0,0\n0,1");
	ck_assert_str_eq(blocks[2], "# c\n");
}
END_TEST

/* ---- gnuplot turned off ---- */

START_TEST(test_gnuplot_off)
{
	g_autoptr(GsPlotter) plotter = NULL;

	g_setenv("GPUSIM_GNUPLOT", "no", TRUE);
	plotter = gs_plotter_new();
	ck_assert_str_eq(gs_plotter_missing(plotter), "gnuplot was not found");
}
END_TEST

Suite *gs_test_suite_plot(void);

Suite *
gs_test_suite_plot(void)
{
	Suite *s = suite_create("plot");
	TCase *tc;

	tc = tcase_create("variables");
	tcase_add_loop_test(tc, test_set_string, 0, G_N_ELEMENTS(string_rows));
	tcase_add_loop_test(tc, test_units, 0, G_N_ELEMENTS(unit_rows));
	tcase_add_test(tc, test_set_number);
	suite_add_tcase(s, tc);

	tc = tcase_create("cdf");
	tcase_add_loop_test(tc, test_cdf_rows, 0, G_N_ELEMENTS(cdf_rows));
	tcase_add_test(tc, test_cdf_empty);
	tcase_add_loop_test(tc, test_cdf_properties, 0, G_N_ELEMENTS(property_rows));
	tcase_add_test(tc, test_cdf_inputs_time);
	tcase_add_test(tc, test_cdf_inputs_counts);
	suite_add_tcase(s, tc);

	tc = tcase_create("plotter");
	tcase_add_test(tc, test_gnuplot_off);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_plot());
}
