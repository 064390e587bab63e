/*
 * gpusim: what each event of a pass touched, told to a search that leaves
 * out the orders of an instant that cannot matter (driver.h; GsFootprint in
 * src/run/options.h says what private and shared mean).
 *
 * The events of one pass are all due at once, so any of them may fire
 * first: two that touch nothing in common give the same state in either
 * order. This module decides which events touched nothing in common. A
 * resumption is private when its thread was going on by itself (running its
 * ops, computing or sleeping) with nothing else in flight (no lane, no
 * allocation attempt, no copies, no free for another thread), and it only
 * went on computing or sleeping: the interpreter called no engine function
 * (the hooks' enter(), which the simulator hears only while a search is
 * told), the simulator did nothing but schedule its resumption (every other
 * effect marks the event shared, sim_touches_shared()), and the thread's
 * status counts in what it counted in before. Every other event is shared.
 * Beside that, an event may change another thread of the pass (end its
 * task, wake it, move its lane's end): the threads whose status or pending
 * resumption changed are its writes, found by comparing them before and
 * after it. The search is also told, at each order point, the events it
 * chooses among (sim.c, which knows which those are).
 */
#include "config.h"

#include "sim/driver.h"

/* A thread with a resumption in the pass, as it was before an event fired. */
typedef struct {
	GsThreadId id;
	guint64 resume_seq;
	guint8 status;
} PassThread;

void
sim_footprint_init(Sim *s)
{
	s->pass_threads = g_array_new(FALSE, FALSE, sizeof(PassThread));
	s->writes = g_array_new(FALSE, FALSE, sizeof(GsThreadId));
}

void
sim_footprint_clear(Sim *s)
{
	g_clear_pointer(&s->pass_threads, g_array_unref);
	g_clear_pointer(&s->writes, g_array_unref);
}

/*
 * Whether @status is one in which a thread goes on by itself (its ops, a
 * compute, a sleep): other threads' events tell these apart only by what
 * they count in (Sim.counted_as), as a sleep may count as waiting outside.
 */
static gboolean
on_its_own(Status status)
{
	return status == GS_RUN_READY || status == GS_RUN_BUSY || status == GS_RUN_SLEEPING;
}

/* Whether resuming @t can be private: it goes on by itself, and nothing else waits on it. */
static gboolean
resume_may_be_private(const Sim *s, const SimThread *t)
{
	if (!on_its_own(t->status))
		return FALSE;
	if (t->in_lane || t->try_due)
		return FALSE;
	if (t->mem != NULL && (t->mem->computing || t->mem->after != AFTER_NOTHING))
		return FALSE;
	return s->owner_waits == NULL || !g_hash_table_contains(s->owner_waits, t);
}

Status
sim_footprint_begin(Sim *s, const GsEvent *ev, const SimThread *t)
{
	g_array_set_size(s->pass_threads, 0);
	for (guint i = 0; i < s->pass->len; i++) {
		const GsEvent *other = &g_array_index(s->pass, GsEvent, i);
		const SimThread *o;
		PassThread was;

		if (other->kind != EV_THREAD_RESUME || (o = thread_of(s, other->target)) == NULL ||
		    o == t)
			continue;
		was = (PassThread){.id = o->id, .resume_seq = o->resume_seq, .status = o->status};
		g_array_append_val(s->pass_threads, was);
	}
	s->event_shared = ev->kind != EV_THREAD_RESUME || t == NULL || !resume_may_be_private(s, t);
	return t != NULL ? t->status : GS_RUN_DONE;
}

void
sim_footprint_end(Sim *s, const GsEvent *ev, const SimThread *t, Status before)
{
	GsFootprint f = {.seq = ev->seq, .thread = t != NULL ? t->id : GS_NO_THREAD};

	g_array_set_size(s->writes, 0);
	for (guint i = 0; i < s->pass_threads->len; i++) {
		const PassThread *was = &g_array_index(s->pass_threads, PassThread, i);
		const SimThread *o = thread_of(s, was->id);

		if (o->resume_seq != was->resume_seq || o->status != was->status)
			g_array_append_val(s->writes, was->id);
	}
	if (t != NULL && (!on_its_own(t->status) ||
			  s->counted_as[t->status] != s->counted_as[before] || t->in_lane))
		s->event_shared = TRUE;
	f.shared = s->event_shared;
	f.with_all = ev->kind == EV_WATCHDOG;
	f.writes = (const GsThreadId *) s->writes->data;
	f.n_writes = s->writes->len;
	s->opts.footprints->fired(&f, s->opts.footprints_data);
}
