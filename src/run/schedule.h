/*
 * gpusim: a schedule, the choices a simulated run takes where a real
 * executor could take another order (GsChoiceKind, options.h).
 *
 * This module decides how a list of choices drives a run and how the
 * choices a run took are written down. A schedule follows the choices it is
 * given, one per choice point in the order the run reaches them, then takes
 * alternative 0 (the default order) at every later point, or, given a random
 * generator, a uniform pick. It records every point it was asked about: the
 * alternative taken and how many there were, which is what an exploration
 * needs to go back and take another. A schedule that ends in zeros replays
 * as it would without them: the choices a run took are handed back without
 * its trailing zeros, so that a run given them takes exactly the same path.
 * A followed choice out of range is taken as 0 and remembered, and so is a
 * schedule longer than the points the run reached: a replay reports either.
 */
#ifndef GPUSIM_RUN_SCHEDULE_H
#define GPUSIM_RUN_SCHEDULE_H

#include <glib.h>

#include "run/options.h"

G_BEGIN_DECLS

/* One point where the run had a choice: the alternative taken, of how many, of what. */
typedef struct {
	guint chosen, n;
	GsChoiceKind kind;
} GsChoice;

typedef struct {
	const guint *follow; /* the choices to take first (not owned) */
	guint n_follow;
	GRand *rand;         /* after them: NULL, alternative 0; else a pick from it (not owned) */
	GArray *taken;       /* GsChoice, one per point reached, in order */
	guint bad_at;        /* the first followed choice out of range, its index + 1; 0: none */
} GsSchedule;

/** A schedule that follows the @n choices of @follow (kept, not copied), then @rand or 0. */
void gs_schedule_init(GsSchedule *schedule, const guint *follow, guint n, GRand *rand);
void gs_schedule_clear(GsSchedule *schedule);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GsSchedule, gs_schedule_clear)

/** The chooser (GsChooseFunc) a run is given, with the schedule as its data. */
guint gs_schedule_choose(GsChoiceKind kind, guint n, gpointer schedule);

/** The choices of @taken (GsChoice, as a schedule records them), as guint, without trailing zeros. */
GArray *gs_schedule_choices(const GArray *taken);

/** How many of the choices taken were not 0. */
guint gs_schedule_forced(const GArray *choices);

/*
 * Why the run did not follow the schedule exactly, as a sentence (g_free
 * it): a choice out of range, or choices left over when the run ended; NULL
 * when it followed every one.
 */
char *gs_schedule_mismatch(const GsSchedule *schedule);

G_END_DECLS

#endif /* GPUSIM_RUN_SCHEDULE_H */
