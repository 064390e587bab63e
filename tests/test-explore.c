/*
 * gpusim tests: the reductions of explore's search (src/cli/explore.h).
 *
 * The watchdog's choices: each row is a scenario searched to the end twice,
 * with every choice point and without those that cannot change the run:
 * both searches must find the same kinds of violation, the one without them
 * in no more schedules, and in fewer where the scenario's engine busts no
 * deadlock.
 *
 * The orders of an instant (src/run/footprints.h): each row, and each of
 * GENERATED small scenarios made here whose events meet at whole
 * milliseconds, is searched to the end with every order and with the orders
 * reduced. Both must reach the same set of results (each run's JSON result,
 * which holds every task's and thread's outcome, times and counts), find
 * the same kinds of violation, and the reduced search in no more schedules,
 * in as many as the row says where it knows. GS_EXPLORE_SEEDS=N checks N
 * generated scenarios instead, GS_EXPLORE_FILES="A.yaml B.yaml ..." those
 * files too (as far as GS_EXPLORE_BUDGET schedules), and the totals are
 * printed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "testlib.h"
#include "cli/explore.h"
#include "report/report.h"
#include "scenario/input.h"
#include "scenario/loader.h"

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

/* ---- the orders of an instant ---- */

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

/* Generated scenarios searched both ways (GS_EXPLORE_SEEDS: more), and the budget of each. */
#define GENERATED 30
#define GENERATED_BUDGET 2400

/* A search of the scenario @text as @o has it, its runs' results collected in @results (set). */
static GsExploreResult *
search_orders(const char *name, const char *text, guint64 budget, gboolean every_order,
	      GHashTable *results)
{
	g_autoptr(GError) error = NULL;
	GsExploreOptions o = {.name = name, .text = text, .len = strlen(text), .budget = budget,
			      .jobs = 1, .seed = 1, .every_order = every_order,
			      .each_run = note_result, .each_run_data = results};
	GsExploreResult *r = gs_explore(&o, &error);

	ck_assert_msg(r != NULL, "%s: %s", name, error != NULL ? error->message : "?");
	return r;
}

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

static GHashTable *
result_set(void)
{
	return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

/*
 * Both searches of @text, to the end: the same results and kinds found, the
 * reduced one in no more schedules; @every_order and @reduced, the numbers
 * of schedules, where not NULL. FALSE, checking nothing, when the search
 * with every order does not end within @budget.
 */
static gboolean
reduction_reaches_every_result(const char *name, const char *text, guint64 budget,
			       guint64 *every_order, guint64 *reduced)
{
	g_autoptr(GHashTable) all_results = result_set();
	g_autoptr(GHashTable) reduced_results = result_set();
	g_autoptr(GsExploreResult) all = search_orders(name, text, budget, TRUE, all_results);
	g_autoptr(GsExploreResult) fewer = NULL;

	if (!all->exhausted)
		return FALSE;
	fewer = search_orders(name, text, budget, FALSE, reduced_results);
	ck_assert_msg(fewer->exhausted, "%s: the reduced search did not end", name);
	ck_assert(fewer->reduced && !all->reduced);
	ck_assert_uint_eq(kinds_found(fewer), kinds_found(all));
	ck_assert_msg(contained(all_results, reduced_results) &&
			      contained(reduced_results, all_results),
		      "%s: %u results with every order, %u reduced", name,
		      g_hash_table_size(all_results), g_hash_table_size(reduced_results));
	ck_assert_uint_le(fewer->schedules, all->schedules);
	*every_order = all->schedules;
	*reduced = fewer->schedules;
	return TRUE;
}

START_TEST(reduced_orders_reach_every_result)
{
	const char *srcdir = g_getenv("top_srcdir");
	g_autofree char *path =
		g_build_filename(srcdir != NULL ? srcdir : ".", order_rows[_i].file, NULL);
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	guint64 every_order = 0, reduced = 0;
	gsize len;

	ck_assert_msg(gs_input_read(path, &text, &len, &error), "%s", path);
	ck_assert_msg(reduction_reaches_every_result(path, text, 400000, &every_order, &reduced),
		      "%s: not searched to the end", path);
	if (order_rows[_i].every_order > 0)
		ck_assert_uint_eq(every_order, order_rows[_i].every_order);
	if (order_rows[_i].reduced > 0)
		ck_assert_uint_eq(reduced, order_rows[_i].reduced);
}
END_TEST

/* One thread's ops, spillable allocations with computes that use them if @spill. */
static void
generate_ops(GString *s, GRand *r, gboolean spill, const char *indent)
{
	guint n = (guint) g_rand_int_range(r, 2, 6), live = 0, freed = 0;

	for (guint i = 0; i < n; i++) {
		double k = g_rand_double(r);

		if (k < 0.45) {
			g_string_append_printf(s, "%s- compute: %dms\n", indent,
					       g_rand_int_range(r, 0, 3) == 2 ? 2 : 1);
		} else if (k < 0.6) {
			g_string_append_printf(s, "%s- sleep: %dms\n", indent, g_rand_int_range(r, 1, 3));
		} else if (k < 0.85) {
			gboolean spillable = spill && g_rand_double(r) < 0.6;

			g_string_append_printf(s, "%s- alloc: {buf: b%u, size: %dMiB%s}\n", indent,
					       live++, g_rand_int_range(r, 2, 5),
					       spillable ? ", spillable: true" : "");
			if (spillable)
				g_string_append_printf(s, "%s- compute: {time: %dms, uses: [b%u]}\n",
						       indent, g_rand_int_range(r, 1, 3), live - 1);
		} else if (freed < live) {
			g_string_append_printf(s, "%s- free: [b%u]\n", indent, freed++);
		} else {
			g_string_append_printf(s, "%s- compute: 1ms\n", indent);
		}
	}
	while (freed < live)
		g_string_append_printf(s, "%s- free: [b%u]\n", indent, freed++);
}

/*
 * A small scenario of @seed whose events meet: two or three tasks of one
 * or two threads, computes and sleeps of whole milliseconds, allocations
 * that may not all fit, frees, retry blocks, spilling and lanes now and
 * then, under any policy.
 */
static char *
generate_scenario(guint seed)
{
	static const char *const policies[] = {"block", "retry", "fail"};
	static const char *const periods[] = {"100us", "500us", "1ms"};
	g_autoptr(GRand) r = g_rand_new_with_seed(seed);
	GString *s = g_string_new("gpusim: 1\n");
	gboolean spill = g_rand_double(r) < 0.4;
	const char *policy = policies[g_rand_int_range(r, 0, 3)];
	guint tasks = (guint) g_rand_int_range(r, 2, 4);
	const char *latency;

	g_string_append_printf(s, "name: generated-%u\nmemory:\n  gpu: {capacity: %dMiB}\n", seed,
			       4 * g_rand_int_range(r, 2, 5));
	if (spill)
		g_string_append(s, "  host: {capacity: 64MiB}\n");
	g_string_append_printf(s, "policy:\n  oom: %s\n  spill: {enabled: %s}\n  watchdog: %s\n",
			       policy, spill ? "true" : "false", periods[g_rand_int_range(r, 0, 3)]);
	/* One draw a statement: the order a call's arguments are made in is the compiler's. */
	latency = g_rand_boolean(r) ? "0" : "1us";
	g_string_append_printf(s, "links:\n  alloc_latency: %s\n  lanes: %d\n", latency,
			       g_rand_int_range(r, 0, 3));
	g_string_append(s, "tasks:\n");
	for (guint t = 0; t < tasks; t++) {
		guint threads = g_rand_int_range(r, 0, 3) == 2 ? 2 : 1;

		g_string_append_printf(s, "  - id: T%u\n", t);
		if (g_rand_double(r) < 0.3)
			g_string_append_printf(s, "    start: %dms\n", g_rand_int_range(r, 1, 3));
		g_string_append(s, "    threads:\n");
		for (guint i = 0; i < threads; i++) {
			g_string_append(s, "      - ops:\n");
			if (strcmp(policy, "retry") == 0 && g_rand_double(r) < 0.6) {
				g_string_append(s, "          - retry:\n              ops:\n");
				generate_ops(s, r, spill, "                ");
			} else {
				generate_ops(s, r, spill, "          ");
			}
		}
	}
	return g_string_free(s, FALSE);
}

/* What a batch of scenarios searched both ways came to. */
typedef struct {
	guint64 scenarios, checked, fewer, every_order, reduced;
} Tally;

static void
tally(Tally *t, const char *name, const char *text, guint64 budget)
{
	guint64 all = 0, some = 0;

	t->scenarios++;
	if (!reduction_reaches_every_result(name, text, budget, &all, &some))
		return;
	t->checked++;
	t->fewer += some < all;
	t->every_order += all;
	t->reduced += some;
}

static void
print_tally(const char *what, const Tally *t)
{
	printf("%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " searched to the end both ways, %"
	       G_GUINT64_FORMAT " with fewer schedules reduced; %" G_GUINT64_FORMAT
	       " schedules with every order, %" G_GUINT64_FORMAT " reduced\n",
	       what, t->checked, t->scenarios, t->fewer, t->every_order, t->reduced);
}

/*
 * The scenarios GS_EXPLORE_FILES names (separated by spaces), each searched
 * as far as GS_EXPLORE_BUDGET schedules (default 20,000); those that do not
 * load are passed over.
 */
static void
tally_files(const char *files)
{
	const char *budget = g_getenv("GS_EXPLORE_BUDGET");
	g_auto(GStrv) paths = g_strsplit_set(files, " \n", -1);
	Tally t = {0};

	for (guint i = 0; paths[i] != NULL; i++) {
		g_autofree char *text = NULL;
		g_autoptr(GsWorkload) w = NULL;
		gsize len;

		if (paths[i][0] == '\0' || !gs_input_read(paths[i], &text, &len, NULL) ||
		    (w = gs_loader_load_text(paths[i], text, len, NULL, NULL, NULL)) == NULL)
			continue;
		tally(&t, paths[i], text,
		      budget != NULL ? g_ascii_strtoull(budget, NULL, 10) : 20000);
	}
	print_tally("GS_EXPLORE_FILES", &t);
}

START_TEST(reduced_orders_reach_every_result_generated)
{
	const char *more = g_getenv("GS_EXPLORE_SEEDS"), *files = g_getenv("GS_EXPLORE_FILES");
	guint seeds = more != NULL ? (guint) g_ascii_strtoull(more, NULL, 10) : GENERATED;
	Tally t = {0};

	for (guint seed = 0; seed < seeds; seed++) {
		g_autofree char *text = generate_scenario(seed);
		g_autofree char *name = g_strdup_printf("generated-%u.yaml", seed);

		tally(&t, name, text, GENERATED_BUDGET);
	}
	print_tally("generated", &t);
	/* Most are small enough to search whole, and the reduction leaves something out of many. */
	ck_assert_uint_ge(t.checked * 2, t.scenarios);
	ck_assert_uint_ge(t.fewer * 3, t.checked);
	if (files != NULL)
		tally_files(files);
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
	tcase_add_test(orders, reduced_orders_reach_every_result_generated);
	suite_add_tcase(s, orders);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_explore());
}
