/*
 * Unit tests of run/members.h: a script of members joining and leaving, and
 * after each step the set's members (in name order) and every member's place
 * pointing at itself.
 */
#include "config.h"

#include <string.h>

#include "run/members.h"
#include "testlib.h"

typedef struct {
	char name;
	guint place;
} Member;

typedef struct {
	const char *name;
	const char *script; /* "+a" joins a, "-a" leaves; steps apart by spaces */
	const char *after;  /* the members' names at the end, sorted */
} Row;

static const Row rows[] = {
	{"empty", "", ""},
	{"one joins", "+a", "a"},
	{"joins twice, once in", "+a +a", "a"},
	{"leaves what it never joined", "-a", ""},
	{"the last leaves", "+a +b +c -c", "ab"},
	{"the first leaves: the last takes its place", "+a +b +c -a", "bc"},
	{"a middle one leaves", "+a +b +c +d -b", "acd"},
	{"all leave, one joins again", "+a +b -a -b +a", "a"},
	{"leaves twice", "+a +b -a -a", "b"},
};

static int
compare_chars(gconstpointer a, gconstpointer b)
{
	return *(const char *) a - *(const char *) b;
}

static void
check_places(const GsRunMembers *set, const Member *all)
{
	guint in = 0;

	for (guint i = 0; i < gs_run_members_len(set); i++) {
		const Member *m = gs_run_members_at(set, i);

		ck_assert_uint_eq(m->place, i + 1);
	}
	for (guint i = 0; i < 26; i++)
		in += all[i].place > 0;
	ck_assert_uint_eq(in, gs_run_members_len(set));
}

START_TEST(test_members)
{
	const Row *row = &rows[_i];
	g_auto(GStrv) steps = g_strsplit(row->script, " ", -1);
	Member all[26];
	GsRunMembers set;
	GString *after = g_string_new(NULL);

	for (guint i = 0; i < 26; i++)
		all[i] = (Member){.name = (char) ('a' + i)};
	gs_run_members_init(&set, G_STRUCT_OFFSET(Member, place));
	for (guint i = 0; steps[i] != NULL; i++) {
		if (steps[i][0] == '\0')
			continue;
		gs_run_members_put(&set, &all[steps[i][1] - 'a'], steps[i][0] == '+');
		check_places(&set, all);
		ck_assert(gs_run_members_has(&set, &all[steps[i][1] - 'a']) == (steps[i][0] == '+'));
	}
	for (guint i = 0; i < gs_run_members_len(&set); i++)
		g_string_append_c(after, ((const Member *) gs_run_members_at(&set, i))->name);
	qsort(after->str, after->len, 1, compare_chars);
	ck_assert_msg(strcmp(after->str, row->after) == 0, "%s: got %s, want %s", row->name,
		      after->str, row->after);
	g_string_free(after, TRUE);
	gs_run_members_clear(&set);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("run-members");
	TCase *tc = tcase_create("members");

	tcase_add_loop_test(tc, test_members, 0, G_N_ELEMENTS(rows));
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
