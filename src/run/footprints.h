/*
 * gpusim: what the events of a run touched (GsFootprint, options.h), and
 * which other orders of its instants the run shows a search must try.
 *
 * This module decides when two events of one pass depend on each other, and
 * so which orders cannot matter. Two events depend on each other when both
 * are shared, when one changed the other's thread (its status or its
 * pending resumption), or when one is the watchdog's tick. Two that do not
 * commute: either order leaves the same state, so a search that ran one
 * order need not run the other.
 *
 * A search learns it as dynamic partial-order reduction does (Flanagan and
 * Godefroid): a run records, at every point where an order was chosen, the
 * events it chose among, and what each event touched as it fired. Every
 * other alternative of that point that depends on the event chosen there,
 * by what it touched when it fired later in the pass, or that the chosen
 * event kept from firing (it changed its thread), is a race: the search
 * must also run that alternative first. One whose footprint the run never
 * saw (it did not fire) counts as shared. Events of different passes are
 * never reordered (a pass fires before what it schedules), so only
 * alternatives of one point race. An alternative that races with nothing
 * is not tried: every order of the pass it leaves out gives a state some
 * run reached.
 */
#ifndef GPUSIM_RUN_FOOTPRINTS_H
#define GPUSIM_RUN_FOOTPRINTS_H

#include <glib.h>

#include "run/options.h"

G_BEGIN_DECLS

typedef struct {
	GArray *points;       /* one per GS_CHOICE_ORDER point, in the order the run reached them */
	GArray *alternatives; /* of every point, one after another */
	GArray *fired;        /* every event that did something, in the order they fired */
	GArray *writes;       /* GsThreadId: the fired events' writes, one after another */
	gint pending;         /* the point whose chosen event has not fired yet; -1: none */
} GsFootprintLog;

void gs_footprint_log_init(GsFootprintLog *log);
void gs_footprint_log_clear(GsFootprintLog *log);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GsFootprintLog, gs_footprint_log_clear)

/* What a run is given as GsRunOptions.footprints, with the log as footprints_data. */
extern const GsFootprintHooks gs_footprint_log_hooks;

/* Alternative @alternative of the run's @order-th order point must be tried too. */
typedef struct {
	guint order;
	guint alternative;
} GsRace;

/** The races of the run @log recorded (GsRace), by point, then alternative. */
GArray *gs_footprint_log_races(const GsFootprintLog *log);

G_END_DECLS

#endif /* GPUSIM_RUN_FOOTPRINTS_H */
