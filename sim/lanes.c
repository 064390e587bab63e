/*
 * gpusim: byte moves that share links.lanes: a thread's copies and the first
 * writes of an allocation it was granted, each a thread waiting for work of a
 * known length at its full rate.
 *
 * With lanes unset every move runs at its full rate and its thread resumes
 * when its time is up. With lanes L, n moves in flight each run at
 * min(1, L / n) of their rate (processor sharing): whenever a move begins or
 * ends, the work the others have left is brought up to date and each one's
 * end is scheduled again, so a move that began alone is slowed by those
 * that join it. The time a thread waits for its copies is spill-block time,
 * counted as it ends (as a real run measures it).
 */
#include "config.h"

#include "sim/driver.h"

typedef struct {
	SimThread *thread;
	double left_ns;  /* work left, in nanoseconds at the full rate */
	GsTime since;    /* when it began */
	gboolean copies; /* the thread waits for its copies (spill-block time) */
} Move;

static double
share(const Sim *s)
{
	double lanes = s->w->links.lanes;

	return s->lanes_work->len <= lanes ? 1.0 : lanes / s->lanes_work->len;
}

/* What every move in flight did since the last change, at the share it ran at. */
static void
bring_up_to_date(Sim *s)
{
	double done = (double) (s->now - s->lanes_at) * share(s);

	for (guint i = 0; i < s->lanes_work->len; i++) {
		Move *mv = &g_array_index(s->lanes_work, Move, i);

		mv->left_ns = MAX(mv->left_ns - done, 0.0);
	}
	s->lanes_at = s->now;
}

/* Each move's end, at the share the moves in flight now get. */
static void
schedule_ends(Sim *s)
{
	double rate = share(s);

	for (guint i = 0; i < s->lanes_work->len; i++) {
		Move *mv = &g_array_index(s->lanes_work, Move, i);

		sim_resume_at(s, mv->thread, gs_time_add(s->now, gs_time_from_double(mv->left_ns / rate)),
			      GS_RUN_BUSY);
	}
}

void
sim_lanes_init(Sim *s)
{
	s->lanes_work = g_array_new(FALSE, FALSE, sizeof(Move));
}

void
sim_lanes_clear(Sim *s)
{
	g_array_unref(s->lanes_work);
}

void
sim_lanes_begin(Sim *s, SimThread *t, GsTime full_rate, gboolean copies)
{
	Move mv = {.thread = t, .left_ns = (double) full_rate, .since = s->now, .copies = copies};

	if (s->w->links.lanes <= 0) {
		if (copies)
			s->r->totals.spill_block_ns = gs_time_add(s->r->totals.spill_block_ns,
								  full_rate);
		sim_resume_at(s, t, gs_time_add(s->now, full_rate), GS_RUN_BUSY);
		return;
	}
	bring_up_to_date(s);
	g_array_append_val(s->lanes_work, mv);
	t->in_lane = TRUE;
	schedule_ends(s);
}

void
sim_lanes_end(Sim *s, SimThread *t)
{
	if (!t->in_lane)
		return;
	t->in_lane = FALSE;
	bring_up_to_date(s);
	for (guint i = 0; i < s->lanes_work->len; i++) {
		Move *mv = &g_array_index(s->lanes_work, Move, i);

		if (mv->thread != t)
			continue;
		if (mv->copies)
			s->r->totals.spill_block_ns = gs_time_add(s->r->totals.spill_block_ns,
								  s->now - mv->since);
		g_array_remove_index(s->lanes_work, i);
		break;
	}
	schedule_ends(s); /* the others': @t resumes now, or was forgotten */
}
