/*
 * gpusim: a schedule that drives a run's choice points (schedule.h).
 */
#include "config.h"

#include "run/schedule.h"

void
gs_schedule_init(GsSchedule *schedule, const guint *follow, guint n, GRand *rand)
{
	*schedule = (GsSchedule){.follow = follow, .n_follow = n, .rand = rand,
				 .taken = g_array_new(FALSE, FALSE, sizeof(GsChoice))};
}

void
gs_schedule_clear(GsSchedule *schedule)
{
	g_clear_pointer(&schedule->taken, g_array_unref);
}

guint
gs_schedule_choose(GsChoiceKind kind, guint n, gpointer data)
{
	GsSchedule *schedule = data;
	guint at = schedule->taken->len;
	GsChoice c = {.chosen = 0, .n = n, .kind = kind};

	if (at < schedule->n_follow) {
		c.chosen = schedule->follow[at];
		if (c.chosen >= n) {
			if (schedule->bad_at == 0)
				schedule->bad_at = at + 1;
			c.chosen = 0;
		}
	} else if (schedule->rand != NULL) {
		c.chosen = (guint) g_rand_int_range(schedule->rand, 0, (gint32) MIN(n, G_MAXINT32));
	}
	g_array_append_val(schedule->taken, c);
	return c.chosen;
}

GArray *
gs_schedule_choices(const GArray *taken)
{
	GArray *choices = g_array_new(FALSE, FALSE, sizeof(guint));
	guint len = taken->len;

	while (len > 0 && g_array_index(taken, GsChoice, len - 1).chosen == 0)
		len--;
	for (guint i = 0; i < len; i++)
		g_array_append_val(choices, g_array_index(taken, GsChoice, i).chosen);
	return choices;
}

guint
gs_schedule_forced(const GArray *choices)
{
	guint forced = 0;

	for (guint i = 0; i < choices->len; i++)
		forced += g_array_index(choices, guint, i) != 0;
	return forced;
}

char *
gs_schedule_mismatch(const GsSchedule *schedule)
{
	guint reached = schedule->taken->len;

	if (schedule->bad_at > 0) {
		guint i = schedule->bad_at - 1;

		return g_strdup_printf("choice %u is %u, but that point had only %u alternatives "
				       "(0 to %u)",
				       i + 1, schedule->follow[i],
				       g_array_index(schedule->taken, GsChoice, i).n,
				       g_array_index(schedule->taken, GsChoice, i).n - 1);
	}
	if (reached < schedule->n_follow)
		return g_strdup_printf("the schedule gives %u choices, but the run reached only %u "
				       "points with a choice",
				       schedule->n_follow, reached);
	return NULL;
}
