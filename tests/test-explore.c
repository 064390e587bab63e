/*
 * gpusim tests: the reductions of explore's search (src/cli/explore.h).
 *
 * The watchdog's choices: each row is a scenario searched to the end twice,
 * with every choice point and without those that cannot change the run:
 * both searches must find the same kinds of violation, the one without them
 * in no more schedules, and in fewer where the scenario's engine busts no
 * deadlock.
 *
 * The orders of an instant (src/run/footprints.h): each row is a scenario
 * searched to the end with every order and with the orders reduced. Both
 * must reach the same set of results (each run's JSON result, which holds
 * every task's and thread's outcome, times and counts), find the same kinds
 * of violation, and the reduced search in no more schedules, in as many as
 * the row says where it knows.
 */
#include "config.h"

#include "testlib.h"
#include "cli/explore.h"
#include "report/report.h"
#include "scenario/input.h"

#define BIT(kind) (1u << (kind))

static const struct {
	const char *file;       /* under tests/data, or a path from the top */
	double jitter;          /* > 0: --jitter */
	gboolean needless;      /* --needless-busts */
	guint found;            /* the kinds found, bit GsViolationKind */
	gboolean fewer;         /* the reduction leaves out some schedules */
} rows[] = {
	{"tests/data/explore-order-deadlock.yaml", 0, FALSE, BIT(GS_VIOLATION_DEADLOCK), TRUE},
	{"tests/data/explore-wake-deadlock.yaml", 0, FALSE, BIT(GS_VIOLATION_DEADLOCK), TRUE},
	{"tests/data/explore-jitter-deadlock.yaml", 0.5, FALSE, BIT(GS_VIOLATION_DEADLOCK), TRUE},
	{"tests/data/explore-jitter-deadlock.yaml", 0, FALSE, 0, TRUE},
	/* Under retry the watchdog busts: every choice may matter. */
	{"tests/data/explore-needless-bust.yaml", 0, TRUE, BIT(GS_VIOLATION_NEEDLESS_BUST), FALSE},
	{"scenarios/studies/explore-order.yaml", 0, FALSE, BIT(GS_VIOLATION_DEADLOCK), TRUE},
};

static void
note_result(const GsWorkload *w, const GsResult *r, gpointer results)
{
	g_hash_table_add(results, gs_report_json(w, r, "sim", 0, NULL));
}

/* The search of row @i, to the end, with every choice or not. */
static GsExploreResult *
search(guint i, gboolean every_choice)
{
	const char *srcdir = g_getenv("top_srcdir");
	g_autofree char *path = g_build_filename(srcdir != NULL ? srcdir : ".", rows[i].file, NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	GsExploreOptions o = {.name = path, .budget = 200000, .jobs = 1, .seed = 1,
			      .needless_busts = rows[i].needless, .every_choice = every_choice,
			      .jitter_given = rows[i].jitter > 0, .jitter = rows[i].jitter};
	GsExploreResult *r;

	ck_assert_msg(gs_input_read(path, &text, &o.len, &error), "%s", path);
	o.text = text;
	r = gs_explore(&o, &error);
	ck_assert_msg(r != NULL, "%s: %s", path, error != NULL ? error->message : "?");
	ck_assert_msg(r->exhausted, "%s: not searched to the end in %" G_GUINT64_FORMAT, path,
		      r->schedules);
	return r;
}

/* The whole search of @file, to the end, with its runs' results collected in @results (set). */
static GsExploreResult *
search_orders(const char *file, gboolean every_order, GHashTable *results)
{
	const char *srcdir = g_getenv("top_srcdir");
	g_autofree char *path = g_build_filename(srcdir != NULL ? srcdir : ".", file, NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	GsExploreOptions o = {.name = path, .budget = 400000, .jobs = 1, .seed = 1,
			      .every_order = every_order, .each_run = note_result,
			      .each_run_data = results};
	GsExploreResult *r;

	ck_assert_msg(gs_input_read(path, &text, &o.len, &error), "%s", path);
	o.text = text;
	r = gs_explore(&o, &error);
	ck_assert_msg(r != NULL, "%s: %s", path, error != NULL ? error->message : "?");
	ck_assert_msg(r->exhausted, "%s: not searched to the end in %" G_GUINT64_FORMAT, path,
		      r->schedules);
	return r;
}

static guint
kinds_found(const GsExploreResult *r)
{
	guint found = 0;

	for (guint k = 0; k < GS_N_VIOLATIONS; k++)
		found |= r->found[k] != NULL ? BIT(k) : 0;
	return found;
}

START_TEST(reduction_finds_what_every_choice_finds)
{
	g_autoptr(GsExploreResult) all = search(_i, TRUE);
	g_autoptr(GsExploreResult) reduced = search(_i, FALSE);

	ck_assert_uint_eq(kinds_found(all), rows[_i].found);
	ck_assert_uint_eq(kinds_found(reduced), rows[_i].found);
	if (rows[_i].fewer)
		ck_assert_uint_lt(reduced->schedules, all->schedules);
	else
		ck_assert_uint_eq(reduced->schedules, all->schedules);
}
END_TEST

static const struct {
	const char *file;
	guint64 every_order; /* schedules with every order */
	guint64 reduced;     /* with the orders reduced */
} order_rows[] = {
	/* Three threads whose computes end together: only their starts and ends race. */
	{"tests/data/explore-independent.yaml", 7776, 36},
	/* Generated: spilling and lanes; retry, with the watchdog's ticks among the steps. */
	{"tests/data/explore-commute-spill.yaml", 576, 32},
	{"tests/data/explore-commute-retry.yaml", 1296, 216},
	{"tests/data/explore-order-deadlock.yaml", 0, 0},
	{"tests/data/explore-wake-deadlock.yaml", 0, 0},
	{"scenarios/studies/explore-order.yaml", 0, 0},
};

/* Whether every key of @a is in @b. */
static gboolean
contained(GHashTable *a, GHashTable *b)
{
	GHashTableIter at;
	gpointer key;

	g_hash_table_iter_init(&at, a);
	while (g_hash_table_iter_next(&at, &key, NULL)) {
		if (!g_hash_table_contains(b, key))
			return FALSE;
	}
	return TRUE;
}

START_TEST(reduced_orders_reach_every_result)
{
	g_autoptr(GHashTable) all_results = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
								 NULL);
	g_autoptr(GHashTable) reduced_results =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GsExploreResult) all = search_orders(order_rows[_i].file, TRUE, all_results);
	g_autoptr(GsExploreResult) reduced =
		search_orders(order_rows[_i].file, FALSE, reduced_results);

	ck_assert(reduced->reduced && !all->reduced);
	ck_assert_uint_eq(kinds_found(reduced), kinds_found(all));
	ck_assert_msg(contained(all_results, reduced_results) &&
			      contained(reduced_results, all_results),
		      "%s: %u results with every order, %u reduced", order_rows[_i].file,
		      g_hash_table_size(all_results), g_hash_table_size(reduced_results));
	ck_assert_uint_le(reduced->schedules, all->schedules);
	if (order_rows[_i].every_order > 0)
		ck_assert_uint_eq(all->schedules, order_rows[_i].every_order);
	if (order_rows[_i].reduced > 0)
		ck_assert_uint_eq(reduced->schedules, order_rows[_i].reduced);
}
END_TEST

static Suite *
gs_test_suite_explore(void)
{
	Suite *s = suite_create("explore");
	TCase *tc = tcase_create("reduction");
	TCase *orders = tcase_create("orders");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, reduction_finds_what_every_choice_finds, 0, G_N_ELEMENTS(rows));
	suite_add_tcase(s, tc);
	tcase_set_timeout(orders, 120);
	tcase_add_loop_test(orders, reduced_orders_reach_every_result, 0, G_N_ELEMENTS(order_rows));
	suite_add_tcase(s, orders);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_explore());
}
