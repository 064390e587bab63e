/*
 * gpusim: what the events of a run touched, and the races it shows (footprints.h).
 */
#include "config.h"

#include "run/footprints.h"

/* A point where an order was chosen: its alternatives, and which was taken. */
typedef struct {
	guint first, n; /* alternatives[first .. first + n) */
	gint chosen;    /* the alternative that fired there; -1: not known yet */
	guint fired_at; /* its index in fired */
} OrderPoint;

typedef struct {
	guint64 seq;
	GsThreadId thread; /* GS_NO_THREAD: not a resumption */
} Alternative;

typedef struct {
	guint64 seq;
	GsThreadId thread;
	gboolean shared, with_all;
	guint writes_first, n_writes; /* writes[writes_first .. + n_writes) */
} Fired;

void
gs_footprint_log_init(GsFootprintLog *log)
{
	log->points = g_array_new(FALSE, FALSE, sizeof(OrderPoint));
	log->alternatives = g_array_new(FALSE, FALSE, sizeof(Alternative));
	log->fired = g_array_new(FALSE, FALSE, sizeof(Fired));
	log->writes = g_array_new(FALSE, FALSE, sizeof(GsThreadId));
	log->pending = -1;
}

void
gs_footprint_log_clear(GsFootprintLog *log)
{
	g_clear_pointer(&log->points, g_array_unref);
	g_clear_pointer(&log->alternatives, g_array_unref);
	g_clear_pointer(&log->fired, g_array_unref);
	g_clear_pointer(&log->writes, g_array_unref);
}

static void
told_alternatives(const guint64 *seqs, const GsThreadId *threads, guint n, gpointer data)
{
	GsFootprintLog *log = data;
	OrderPoint point = {.first = log->alternatives->len, .n = n, .chosen = -1};

	for (guint i = 0; i < n; i++) {
		Alternative a = {.seq = seqs[i], .thread = threads[i]};

		g_array_append_val(log->alternatives, a);
	}
	g_array_append_val(log->points, point);
	log->pending = (gint) log->points->len - 1;
}

/* Which alternative of @point @seq is; -1 if none. */
static gint
alternative_of(const GsFootprintLog *log, const OrderPoint *point, guint64 seq)
{
	for (guint i = 0; i < point->n; i++) {
		if (g_array_index(log->alternatives, Alternative, point->first + i).seq == seq)
			return (gint) i;
	}
	return -1;
}

static void
told_fired(const GsFootprint *f, gpointer data)
{
	GsFootprintLog *log = data;
	Fired fired = {.seq = f->seq, .thread = f->thread, .shared = f->shared,
		       .with_all = f->with_all, .writes_first = log->writes->len, .n_writes = f->n_writes};

	g_array_append_vals(log->writes, f->writes, f->n_writes);
	if (log->pending >= 0) {
		/* The first event to fire after a point is its choice. */
		OrderPoint *point = &g_array_index(log->points, OrderPoint, log->pending);

		point->chosen = alternative_of(log, point, f->seq);
		point->fired_at = log->fired->len;
		log->pending = -1;
	}
	g_array_append_val(log->fired, fired);
}

const GsFootprintHooks gs_footprint_log_hooks = {
	.alternatives = told_alternatives,
	.fired = told_fired,
};

/* ---- the races ---- */

static gboolean
writes_thread(const GsFootprintLog *log, const Fired *f, GsThreadId thread)
{
	if (thread == GS_NO_THREAD)
		return FALSE;
	for (guint i = 0; i < f->n_writes; i++) {
		if (g_array_index(log->writes, GsThreadId, f->writes_first + i) == thread)
			return TRUE;
	}
	return FALSE;
}

static gboolean
depend(const GsFootprintLog *log, const Fired *a, const Fired *b)
{
	return a->with_all || b->with_all || (a->shared && b->shared) ||
	       writes_thread(log, a, b->thread) ||
	       writes_thread(log, b, a->thread);
}

/* The event @a that fired after fired[@after], NULL if it never did. */
static const Fired *
fired_later(const GsFootprintLog *log, const Alternative *a, guint after)
{
	for (guint i = after + 1; i < log->fired->len; i++) {
		const Fired *f = &g_array_index(log->fired, Fired, i);

		if (f->seq == a->seq)
			return f;
	}
	return NULL;
}

/* Whether alternative @a of a point races with @chosen, the event that fired there (fired[@at]). */
static gboolean
races(const GsFootprintLog *log, const Fired *chosen, guint at, const Alternative *a)
{
	const Fired *later = fired_later(log, a, at);
	Fired unseen = {.seq = a->seq, .thread = a->thread, .shared = TRUE};

	return depend(log, chosen, later != NULL ? later : &unseen);
}

GArray *
gs_footprint_log_races(const GsFootprintLog *log)
{
	GArray *found = g_array_new(FALSE, FALSE, sizeof(GsRace));

	for (guint k = 0; k < log->points->len; k++) {
		const OrderPoint *point = &g_array_index(log->points, OrderPoint, k);
		const Fired *chosen;

		if (point->chosen < 0)
			continue;
		chosen = &g_array_index(log->fired, Fired, point->fired_at);
		for (guint i = 0; i < point->n; i++) {
			const Alternative *a =
				&g_array_index(log->alternatives, Alternative, point->first + i);
			GsRace race = {.order = k, .alternative = i};

			if ((gint) i != point->chosen && races(log, chosen, point->fired_at, a))
				g_array_append_val(found, race);
		}
	}
	return found;
}
