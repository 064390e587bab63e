/*
 * gpusim tests: the reduction of explore's search (src/cli/explore.h). Each
 * row is a scenario searched to the end twice, with every choice point and
 * without those that cannot change the run: both searches must find the
 * same kinds of violation, the one without them in no more schedules, and in
 * fewer where the scenario's engine busts no deadlock.
 */
#include "config.h"

#include "testlib.h"
#include "cli/explore.h"
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

static Suite *
gs_test_suite_explore(void)
{
	Suite *s = suite_create("explore");
	TCase *tc = tcase_create("reduction");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, reduction_finds_what_every_choice_finds, 0, G_N_ELEMENTS(rows));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_explore());
}
