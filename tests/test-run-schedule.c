/*
 * Unit tests of run/schedule.h: a schedule asked at points with so many
 * alternatives, the choices it takes, the choices it hands back (no trailing
 * zeros) and why a replay did not fit.
 */
#include "config.h"

#include <string.h>

#include "run/schedule.h"
#include "testlib.h"

typedef struct {
	const char *name;
	guint follow[4];
	guint n_follow;
	guint points[6];   /* alternatives at each point asked, 0 ends */
	const char *took;  /* the choices taken at the points, one digit each */
	const char *kept;  /* gs_schedule_choices(): without trailing zeros */
	const char *why;   /* the start of gs_schedule_mismatch(), NULL: it fit */
} Row;

static const Row rows[] = {
	{"nothing to follow: the default order", {0}, 0, {2, 3, 0}, "00", "", NULL},
	{"followed, then 0", {1, 2}, 2, {2, 3, 4, 0}, "120", "12", NULL},
	{"trailing zeros are not kept", {1, 0, 0}, 3, {2, 2, 2, 0}, "100", "1", NULL},
	{"a choice out of range is taken as 0", {0, 5}, 2, {2, 3, 0}, "00", "",
	 "choice 2 is 5, but that point had only 3"},
	{"choices left over", {1, 1, 1}, 3, {2, 2, 0}, "11", "11",
	 "the schedule gives 3 choices, but the run reached only 2"},
};

static char *
digits(const GArray *a, gboolean choices)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < a->len; i++)
		g_string_append_printf(s, "%u", choices ? g_array_index(a, guint, i)
						       : g_array_index(a, GsChoice, i).chosen);
	return g_string_free(s, FALSE);
}

START_TEST(test_schedule)
{
	const Row *row = &rows[_i];
	g_auto(GsSchedule) schedule = {0};
	g_autoptr(GArray) kept = NULL;
	g_autofree char *took = NULL, *kept_digits = NULL, *why = NULL;

	gs_schedule_init(&schedule, row->follow, row->n_follow, NULL);
	for (guint i = 0; row->points[i] != 0; i++) {
		guint k = gs_schedule_choose(GS_CHOICE_ORDER, row->points[i], &schedule);

		ck_assert_uint_lt(k, row->points[i]);
		ck_assert_uint_eq(g_array_index(schedule.taken, GsChoice, i).n, row->points[i]);
	}
	took = digits(schedule.taken, FALSE);
	kept = gs_schedule_choices(schedule.taken);
	kept_digits = digits(kept, TRUE);
	why = gs_schedule_mismatch(&schedule);
	ck_assert_msg(strcmp(took, row->took) == 0, "%s: took %s", row->name, took);
	ck_assert_msg(strcmp(kept_digits, row->kept) == 0, "%s: kept %s", row->name, kept_digits);
	if (row->why == NULL)
		ck_assert_msg(why == NULL, "%s: %s", row->name, why);
	else
		ck_assert_msg(why != NULL && g_str_has_prefix(why, row->why), "%s: %s", row->name,
			      why != NULL ? why : "(fit)");
}
END_TEST

/* Random picks are in range and the same from the same seed. */
START_TEST(test_random)
{
	GRand *a = g_rand_new_with_seed(7), *b = g_rand_new_with_seed(7);
	GsSchedule sa, sb;

	gs_schedule_init(&sa, NULL, 0, a);
	gs_schedule_init(&sb, NULL, 0, b);
	for (guint i = 0; i < 100; i++) {
		guint n = 2 + i % 5;
		guint ka = gs_schedule_choose(GS_CHOICE_ORDER, n, &sa);

		ck_assert_uint_lt(ka, n);
		ck_assert_uint_eq(ka, gs_schedule_choose(GS_CHOICE_ORDER, n, &sb));
	}
	{
		g_autoptr(GArray) choices = gs_schedule_choices(sa.taken);

		ck_assert_uint_gt(gs_schedule_forced(choices), 0);
	}
	gs_schedule_clear(&sa);
	gs_schedule_clear(&sb);
	g_rand_free(a);
	g_rand_free(b);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("run-schedule");
	TCase *tc = tcase_create("schedule");

	tcase_add_loop_test(tc, test_schedule, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_random);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
