/*
 * gpusim: what the engine tells a run (see watch.h).
 */
#include "config.h"

#include "run/watch.h"

static void
on_state(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to, GsThreadEvent cause,
	 GsTime now)
{
	GsRunWatch *watch = data;
	GsLogEntry e = {.kind = GS_LOG_STATE, .from = from, .to = to};

	e.thread = watch->hooks->thread_moved(watch->driver, id, from, to);
	if (e.thread != NULL)
		watch->hooks->log(watch->driver, &e);
}

static const char *
bust_word(GsBustAction action)
{
	switch (action) {
	case GS_BUST_ROLLBACK:
		return "rolled back";
	case GS_BUST_RETRY_ONCE:
		return "made to retry";
	case GS_BUST_SPLIT:
		return "split";
	}
	return "busted";
}

/* A bust while the driver names a thread that could still make progress is needless. */
static void
note_needless(GsRunWatch *watch, GsThreadId victim, const char *name, GsBustAction action,
	      GsTime now)
{
	const char *going = watch->hooks->progressing(watch->driver, victim);

	if (going != NULL)
		watch->result->needless_bust =
			g_strdup_printf("%s was %s at %" G_GINT64_FORMAT " ns to break a deadlock "
					"while %s could still make progress",
					name, bust_word(action), now, going);
}

static void
on_bust(gpointer data, GsThreadId victim, GsBustAction action, GsCheckReason reason, GsTime now)
{
	GsRunWatch *watch = data;
	GsLogEntry e = {.kind = GS_LOG_DEADLOCK, .action = action};

	watch->result->totals.deadlocks_busted++;
	e.thread = watch->hooks->thread_name(watch->driver, victim);
	if (e.thread == NULL)
		e.thread = "?";
	watch->hooks->log(watch->driver, &e);
	if (watch->hooks->progressing != NULL && watch->result->needless_bust == NULL)
		note_needless(watch, victim, e.thread, action, now);
}

static void
on_lost(gpointer data, GsThreadId id, GsTime lost, GsTime now)
{
	GsRunWatch *watch = data;
	const char *name = watch->hooks->thread_name(watch->driver, id);
	GsLostTime x = {.time = now, .lost = lost};

	if (name == NULL)
		return;
	x.thread = g_string_chunk_insert_const(watch->result->strings, name);
	g_array_append_val(watch->result->lost, x);
}

static const GsEngineObserver observer = {
	.api_version = 1,
	.state_changed = on_state,
	.busted = on_bust,
	.lost = on_lost,
};

void
gs_run_watch(GsRunWatch *watch, GsEngine *engine, GsResult *result,
	     const GsRunHooks *hooks, gpointer driver)
{
	*watch = (GsRunWatch){.result = result, .hooks = hooks, .driver = driver};
	gs_engine_set_observer(engine, &observer, watch);
}

static const char *
buffer_name(const GsThreadSpec *spec, const GsEffect *e)
{
	/* The room a compute's spilled buffers need has no buffer name of its own. */
	return e->buf == GS_INTERP_UNSPILL_BUF ? "(unspill)" : spec->buffers->pdata[e->buf];
}

GsLogEntry
gs_run_alloc_granted(const char *thread, const GsThreadSpec *spec, const GsEffect *e, GsTier tier)
{
	return (GsLogEntry){.kind = GS_LOG_ALLOC, .thread = thread, .buf = buffer_name(spec, e),
			    .bytes = e->size, .tier = tier, .ok = TRUE};
}

GsLogEntry
gs_run_alloc_refused(GsResult *result, const char *thread, const GsThreadSpec *spec,
		     const GsEffect *e, GsTier tier, gint64 usage, GsRefusal why)
{
	__atomic_fetch_add(&result->totals.refused[why], 1, __ATOMIC_RELAXED);
	return (GsLogEntry){.kind = GS_LOG_ALLOC, .thread = thread, .buf = buffer_name(spec, e),
			    .bytes = e->size, .tier = tier, .ok = FALSE, .usage = usage,
			    .refusal = why};
}

GsRefusal
gs_run_refusal_of(const GsMemAlloc *a)
{
	switch (a->outcome) {
	case GS_MEM_NO_ROOM:
		return GS_REFUSED_NO_ROOM;
	case GS_MEM_OVER_RESERVATION:
		return GS_REFUSED_RESERVATION;
	case GS_MEM_NO_PAGE:
		return GS_REFUSED_PAGE_TABLE;
	case GS_MEM_OVER_SHARE:
		return GS_REFUSED_FAIR_SHARE;
	case GS_MEM_OK:
		break;
	}
	return GS_REFUSED_DEVICE; /* the model had the room; the device had not */
}

gboolean
gs_run_owner_ready(const GsOp *op, gboolean (*allocated)(gconstpointer owner, guint name),
		   gconstpointer owner, gboolean done)
{
	const guint *names = gs_names_data(&op->free.bufs);

	if (owner == NULL)
		return FALSE; /* its task has not started */
	if (done)
		return TRUE;
	for (guint i = 0; i < op->free.bufs.len; i++) {
		if (!allocated(owner, names[i]))
			return FALSE;
	}
	return TRUE;
}

GsLogEntry
gs_run_free_wait_entry(const GsWorkload *w, const char *thread, const GsOp *op,
		       gboolean (*allocated)(gconstpointer owner, guint name), gconstpointer owner)
{
	const guint *names = gs_names_data(&op->free.bufs);
	guint i = 0;

	while (owner != NULL && i + 1 < op->free.bufs.len && allocated(owner, names[i]))
		i++;
	return (GsLogEntry){.kind = GS_LOG_FREE_WAIT, .thread = thread, .owner = op->free.thread,
			    .buf = gs_workload_thread(w, op->free.thread, NULL)->buffers->pdata[names[i]]};
}

GsLogEntry
gs_run_value_entry(const char *thread, const GsThreadSpec *spec, guint name, gint64 value,
		   const char *what)
{
	return (GsLogEntry){.kind = GS_LOG_VALUE, .thread = thread,
			    .buf = spec->values->pdata[name], .bytes = value, .what = what};
}

GsLogEntry
gs_run_throw_entry(const char *thread, const GsSeenException *x)
{
	return (GsLogEntry){.kind = GS_LOG_THROW, .thread = thread, .exception = x->exception,
			    .handled = x->handled, .bytes = x->bytes};
}
