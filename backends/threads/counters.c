/*
 * gpusim: the real-thread driver: memory admitted by bounded counters, and
 * the fast path (see driver.h).
 */
#include "config.h"

#include "backends/threads/driver.h"

/* ---- memory: bounded counters ---- */

static void
note_peak(Space *s, gint64 used)
{
	gint64 peak = atomic_load_explicit(&s->peak, memory_order_relaxed);

	while (used > peak && !atomic_compare_exchange_weak(&s->peak, &peak, used))
		;
}

/*
 * Admits @n bytes if they fit; sequentially consistent, see threads.h.
 * Refused, *@usage is what the counter would have come to.
 */
static gboolean
space_take(Space *s, gint64 n, gint64 *usage)
{
	gint64 used = atomic_load(&s->used);

	do {
		if (used + n > s->capacity) {
			*usage = used + n;
			return FALSE;
		}
	} while (!atomic_compare_exchange_weak(&s->used, &used, used + n));
	note_peak(s, used + n);
	return TRUE;
}

void
threads_space_give(Space *s, gint64 n)
{
	atomic_fetch_sub(&s->used, n);
}

static Space *
space_for(Threads *r, const GsEffect *e)
{
	guint device = e->op != NULL && e->op->kind == GS_OP_ALLOC ? e->op->alloc.device : 0;

	if (e->alloc_kind == GS_KIND_HOST)
		return &r->host;
	return &r->gpus[MIN(device, r->n_gpus - 1)];
}

static gint64
charge_of(const Space *s, gint64 size)
{
	return (size + s->alignment - 1) / s->alignment * s->alignment;
}

/* The thread holds @bytes more GPU memory (thread-owned; its maximum is read under lock). */
void
threads_count_footprint(Worker *t, gint64 bytes)
{
	t->footprint += bytes;
	if (t->footprint > atomic_load_explicit(&t->max_footprint, memory_order_relaxed))
		atomic_store_explicit(&t->max_footprint, t->footprint, memory_order_relaxed);
}

/* Admits and allocates; the handle is a Held. FALSE: it does not fit, or the device said no. */
gboolean
threads_take_memory(Worker *t, const GsEffect *e, guint64 *handle, gint64 *usage)
{
	Threads *r = t->r;
	Space *s = space_for(r, e);
	gint64 charged = charge_of(s, e->size);
	Held *held;
	guint64 bk;

	*usage = 0; /* a device's refusal is not the counter's */
	if (!space_take(s, charged, usage))
		return FALSE;
	if (!gs_backend_alloc(r->ops, r->bk, t->bk, s->tier, s->device, e->size, &bk)) {
		threads_space_give(s, charged);
		threads_device_works(r);
		return FALSE;
	}
	held = g_new0(Held, 1);
	*held = (Held){.backend = bk, .space = s, .charged = charged, .name = e->buf, .owner = t};
	g_ptr_array_add(t->live, held);
	*handle = GPOINTER_TO_SIZE(held);
	if (e->alloc_kind == GS_KIND_GPU)
		threads_count_footprint(t, e->size);
	threads_note_allocated(t, e->buf);
	return TRUE;
}

static GsTier
tier_of(const GsEffect *e)
{
	return e->alloc_kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU;
}

void
threads_log_granted(Worker *t, const GsEffect *e, const char *pool, gboolean fallback)
{
	GsLogEntry le = gs_run_alloc_granted(t->result->name, t->spec, e, tier_of(e));

	le.pool = pool;
	le.fallback = fallback;
	threads_log_to(t->r, t->log, &le);
}

void
threads_log_refused(Worker *t, const GsEffect *e, gint64 usage, GsRefusal why)
{
	GsLogEntry le = gs_run_alloc_refused(t->r->res, t->result->name, t->spec, e, tier_of(e),
					     usage, why);

	threads_log_to(t->r, t->log, &le);
}

/* ---- the fast path (GsInterpHooks) ---- */

static void
log_own_state(Worker *t, GsThreadState from, GsThreadState to)
{
	GsLogEntry e = {.kind = GS_LOG_STATE, .thread = t->result->name, .from = from, .to = to};

	threads_log_to(t->r, t->log, &e);
}

/*
 * An allocation that fits, by a RUNNING thread while nobody is contended,
 * without the engine mutex. The thread's own record cannot change meanwhile:
 * only its own calls move a RUNNING record, except removal, which stop covers.
 */
gboolean
threads_fast_alloc(gpointer data, const GsEffect *alloc, guint64 *handle)
{
	Worker *t = data;
	Threads *r = t->r;
	gint64 usage;

	if (!t->fast_ok || atomic_load(&t->engine_state) != GS_THREAD_RUNNING ||
	    atomic_load(&r->contended) != 0)
		return FALSE;
	/* Refused, the slow path tries again and logs it. */
	if (!threads_take_memory(t, alloc, handle, &usage))
		return FALSE;
	atomic_fetch_or(&t->reached, 1u << GS_THREAD_ALLOC);
	log_own_state(t, GS_THREAD_RUNNING, GS_THREAD_ALLOC);
	threads_log_granted(t, alloc, NULL, FALSE);
	log_own_state(t, GS_THREAD_ALLOC, GS_THREAD_RUNNING);
	atomic_fetch_add_explicit(&r->fast_allocs, 1, memory_order_relaxed);
	return TRUE;
}

/* The bytes went back before this runs: if nobody is contended now, nobody can need them. */
gboolean
threads_fast_free(gpointer data, const GsEffect *freed)
{
	Worker *t = data;

	if (atomic_load(&t->r->contended) != 0)
		return FALSE;
	atomic_fetch_add_explicit(&t->r->fast_frees, 1, memory_order_relaxed);
	return TRUE;
}

