/*
 * gpusim: the real-thread driver: what the tier model decides, carried out (see driver.h).
 */
#include "config.h"

#include "backends/threads/driver.h"

/* ---- the memory tiers (a run that spills or reserves: r->mem) ---- */

/*
 * Such a run admits through the tier model (src/tiers/memory.h)
 * instead of the bounded counters: the model decides where every buffer
 * lives, what each space is charged, which buffers are spilled and whether a
 * reservation is granted, whichever driver runs, and the backend
 * supplies the bytes and makes the copies. The model is not thread-safe: it
 * sits behind the engine mutex, so every allocation and free of such a run
 * takes the mutex (the fast path is off). Copies run outside it: a copy is
 * begun in the model and its buffer marked `copying` under the mutex, the
 * backend moves the bytes without it, and the move commits under it again.
 * An owner that frees a buffer while it is being copied leaves the backend's
 * memory to the copier (`doomed`); a buffer a compute or an unspill has
 * locked is never chosen as a victim, and a lock that arrives while its
 * copy is in flight makes the commit refuse, so the compute keeps reading
 * the source.
 */


static GsRunThreadTiers *
tiers_of(Worker *t)
{
	if (t->tiers == NULL) {
		t->tiers = g_new0(GsRunThreadTiers, 1);
		gs_run_thread_tiers_init(t->tiers, &t->r->tier_ops, t->id, t->result->name, t->spec);
	}
	return t->tiers;
}

void
threads_tiers_free(GsRunThreadTiers *mine)
{
	if (mine == NULL)
		return;
	gs_run_thread_tiers_clear(mine);
	g_free(mine);
}

/* Whether @ops, or a retry or repeat block inside them, holds an op that @is says is one. */
gboolean
threads_ops_any(const GArray *ops, gboolean (*is)(const GsOp *op))
{
	for (guint i = 0; ops != NULL && i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if (is(op) || (op->kind == GS_OP_RETRY && threads_ops_any(op->retry.ops, is)) ||
		    (op->kind == GS_OP_REPEAT && threads_ops_any(op->repeat.ops, is)))
			return TRUE;
	}
	return FALSE;
}

/* What only the memory model carries out: a reservation, Spark execution memory, or host memory. */
static gboolean
needs_model(const GsOp *op)
{
	return op->kind == GS_OP_RESERVE || op->kind == GS_OP_SHUTDOWN_RESERVATIONS ||
	       op->kind == GS_OP_BORROW_STREAM || op->kind == GS_OP_RETURN_STREAM ||
	       gs_op_kind_is_execution(op->kind) ||
	       (op->kind == GS_OP_ALLOC && op->alloc.kind == GS_KIND_HOST);
}

/*
 * A run needs the memory model when buffers may move between tiers,
 * reservations are made, tasks take fair shares or execution memory, or
 * host memory is allocated (in whole blocks, and pages of the task's page
 * table).
 */
gboolean
threads_tiers_needed(const GsWorkload *w)
{
	if (w->policy.spill.enabled || w->policy.admission == GS_ADMISSION_FAIR_SHARE ||
	    w->policy.failure_callback.enabled)
		return TRUE;
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		for (guint k = 0; k < task->threads->len; k++) {
			if (threads_ops_any(((const GsThreadSpec *) task->threads->pdata[k])->ops, needs_model))
				return TRUE;
		}
	}
	for (guint i = 0; i < w->pool_threads->len; i++) {
		if (threads_ops_any(((const GsThreadSpec *) w->pool_threads->pdata[i])->ops, needs_model))
			return TRUE;
	}
	return FALSE;
}

/* The run's peaks in @tier (the run layer's `granted` hook too). */
void
threads_note_tier_peak(gpointer data, GsTier tier)
{
	Threads *r = data;
	GsTierResult *x = &r->res->tiers[tier];

	x->peak_used = MAX(x->peak_used, gs_memory_used(r->mem, tier));
	x->peak_charged = MAX(x->peak_charged, gs_memory_charged(r->mem, tier));
	if (tier == GS_TIER_HOST)
		gs_run_note_host_pools(&r->tier_ops);
}

/* The reservation the thread holds under name @index (made empty on first use). */
/* The thread's newest held reservation in a space: its stream's, for attribution "stream". */
static GsMemReservation *
stream_reservation(Worker *t, GsTier tier, guint device)
{
	return gs_memory_newest_reservation(t->tiers != NULL ? t->tiers->by_name : NULL, tier,
					    device);
}

/*
 * The thread's live buffers named in @names: their backend handles into
 * @handles and, with tiers, the model's ids into @ids (either may be NULL).
 */
void
threads_live_listed(Worker *t, const GsNames *names, GArray *ids, GArray *handles)
{
	const guint *name = gs_names_data(names);

	for (guint i = 0; i < names->len; i++) {
		for (guint k = 0; k < t->live->len; k++) {
			const Held *held = t->live->pdata[k];

			if (held->name != name[i])
				continue;
			if (ids != NULL)
				g_array_append_val(ids, held->mb->id);
			if (handles != NULL)
				g_array_append_val(handles, held->backend);
		}
	}
}

/* The model's ids of the thread's live buffers named in @names (the run layer's `buffers` hook). */
void
threads_buffers_listed(gpointer thread, const GsNames *names, GArray *ids)
{
	threads_live_listed(thread, names, ids, NULL);
}

/* @pool: the host side's pool, beside a pinned pool (else NULL). */
static void
log_copy(Threads *r, const Held *held, GsTier from, GsTier to, gboolean ok, const char *pool)
{
	GsLogEntry e = {.kind = GS_LOG_SPILL, .thread = held->owner->result->name,
			.buf = held->owner->spec->buffers->pdata[held->name],
			.bytes = held->mb->size, .tier = from, .to_tier = to, .ok = ok,
			.what = to > from ? "spill" : "unspill", .pool = pool};

	threads_log_locked(r, &e);
}

/*
 * Memory came free outside an allocation (a copy landed, a lock or a
 * reservation was released), freed by thread @by: the others blocked on
 * that kind may try again (gs_run_memory_freed()), and so may blocking
 * reservations.
 */
static void
memory_freed(Threads *r, GsThreadId by, GsTier tier)
{
	gs_run_memory_freed(r->engine, by, tier, now(r));
	gs_run_reserve_retry(&r->tier_ops);
}

/* The run layer's `released` hook: a reservation went back. */
void
threads_memory_came_free(gpointer data, GsTier tier)
{
	memory_freed(data, GS_NO_THREAD, tier);
}

/* ---- the gate ---- */

static gboolean
gate_enter(Worker *t)
{
	return gs_run_gate_enter(&t->r->tier_ops, tiers_of(t));
}

/* Leaves the thread's scope; the last one out may open the gate. Threads waiting on it look again. */
static void
gate_leave(Worker *t)
{
	Threads *r = t->r;

	if (t->tiers == NULL || !gs_run_gate_leave(&r->tier_ops, t->tiers))
		return;
	gs_run_gate_reopen(&r->tier_ops);
	threads_copies_changed(r);
}

/* Waits until every copy still inside the closed gate has landed. */
static void
gate_wait_drained(Worker *t)
{
	GsGate *gate = gs_memory_gate(t->r->mem);

	while (gs_gate_is_closed(gate) && !gs_gate_drained(gate) && !atomic_load(&t->stop)) {
		threads_wait_copies(t);
	}
}

/*
 * An unspill that found the gate closed has no fallback: its buffers must
 * come up. It waits outside the gate until the gate opens: waiting inside,
 * it would keep the gate from ever opening, and two such threads would take
 * turns leaving it and entering it again for ever.
 */
static void
gate_wait_open(Worker *t)
{
	GsGate *gate = gs_memory_gate(t->r->mem);

	while (gs_gate_is_closed(gate) && !atomic_load(&t->stop))
		threads_wait_copies(t);
}

/* ---- moves ---- */

/* Begins moving @held's buffer to @to in the model; FALSE (nothing changed) without room there. */
gboolean
threads_move_begin(Threads *r, Held *held, GsTier to, GArray *moves)
{
	Move mv = {.held = held, .from = held->mb->tier, .to = to, .device = held->mb->device,
		   .source = held->backend};

	if (!gs_memory_copy_begin(r->mem, held->mb, to, &mv.modelled))
		return FALSE;
	held->copying = TRUE;
	g_array_append_val(moves, mv);
	return TRUE;
}

/* The model gave up a move that has not started: it is as if never begun. */
static void
move_cancel(Threads *r, GArray *moves)
{
	for (guint i = 0; i < moves->len; i++) {
		Held *held = g_array_index(moves, Move, i).held;

		held->copying = FALSE;
		gs_memory_copy_abort(r->mem, held->mb);
	}
	g_array_set_size(moves, 0);
}

/* Frees a buffer's backend memory; @bk is the backend thread of the one that frees it. */
static void
backend_free_held(Threads *r, gpointer bk, GsTier tier, guint64 handle)
{
	gs_backend_free(r->ops, r->bk, bk, tier, handle);
}

/* Makes a move begun in the model, without the lock; @who names the copier in a warning. */
void
threads_move_make(Threads *r, gpointer bk, Move *mv, const char *who)
{
	g_autoptr(GError) error = NULL;

	/* Only the Move's own fields: the owner may free the buffer meanwhile. */
	mv->made = gs_backend_move(r->ops, r->bk, bk, mv->source, mv->from, mv->to, mv->device,
				   &mv->moved, &mv->intact, &error);
	if (!mv->made && threads_device_works(r))
		g_warning("%s: a copy to tier %d failed: %s", who, mv->to,
			  error != NULL ? error->message : "the backend gave no reason");
}

/*
 * A move made by the backend (thread @bk) for thread @by (GS_NO_THREAD: a
 * downgrader) lands in the model; returns TRUE if it committed.
 */
gboolean
threads_move_land(Threads *r, gpointer bk, GsThreadId by, Move *mv)
{
	Held *held = mv->held;
	const char *pool;
	gboolean ok;

	held->copying = FALSE;
	if (held->doomed) {
		/* Its owner freed it meanwhile: both copies go. */
		backend_free_held(r, bk, mv->from, mv->source);
		if (mv->made)
			backend_free_held(r, bk, mv->to, mv->moved);
		g_free(held);
		return FALSE;
	}
	if (!held->mb->moving) {
		/* Freed while a compute read it: the move was given up, the source stays. */
		if (mv->made)
			backend_free_held(r, bk, mv->to, mv->moved);
		return FALSE;
	}
	if (!mv->made) {
		gs_memory_copy_abort(r->mem, held->mb);
		log_copy(r, held, mv->from, mv->to, FALSE, gs_memory_pool_name(r->mem, held->mb));
		return FALSE;
	}
	r->corrupt_moves += !mv->intact;
	pool = gs_memory_pool_name(r->mem, held->mb); /* the host side's: the source's, */
	ok = gs_memory_copy_commit(r->mem, held->mb);
	if (mv->from != GS_TIER_HOST)
		pool = gs_memory_pool_name(r->mem, held->mb); /* or where it landed */
	log_copy(r, held, mv->from, mv->to, ok, pool);
	if (!ok) {
		backend_free_held(r, bk, mv->to, mv->moved);
		return FALSE;
	}
	held->backend = mv->moved;
	backend_free_held(r, bk, mv->from, mv->source);
	threads_note_tier_peak(r, mv->to);
	if (mv->from < mv->to)
		memory_freed(r, by, mv->from);
	return TRUE;
}

static GsTime
moves_modelled(const GArray *moves)
{
	GsTime total = 0;

	for (guint i = 0; i < moves->len; i++)
		total = gs_time_add(total, g_array_index(moves, Move, i).modelled);
	return total;
}

/*
 * Makes the moves begun in @moves, without the lock (the thread waits for
 * them: spill-block time), then lands them. Returns how many committed.
 */
static guint
moves_make(Worker *t, GArray *moves)
{
	Threads *r = t->r;
	GsTime start = now(r);
	guint committed = 0;

	if (moves->len == 0)
		return 0;
	threads_engine_unlock(r);
	for (guint i = 0; i < moves->len; i++)
		threads_move_make(r, t->bk, &g_array_index(moves, Move, i), t->result->name);
	pthread_mutex_lock(&r->lock);
	if (r->virtual_clock) /* the copies take their modelled time, one after another */
		threads_timed_wait(r, &t->timed, &t->cond, gs_time_add(start, moves_modelled(moves)), &t->stop);
	r->res->totals.spill_block_ns += now(r) - start;
	for (guint i = 0; i < moves->len; i++)
		committed += threads_move_land(r, t->bk, t->id, &g_array_index(moves, Move, i));
	g_array_set_size(moves, 0);
	threads_copies_changed(r);
	return committed;
}

/* ---- on-demand spilling ---- */

static gboolean
allocated_by(const GsMemBuf *b, gconstpointer thread)
{
	return ((const Held *) b->owner)->owner == thread;
}

/*
 * Victims that found the gate closed, or no room below, wait until the
 * copies inside have landed; then one from the GPU goes straight to disk
 * when host_full says so and the disk has room, and the others stay.
 */
static guint
take_fallbacks(Worker *t, GArray *fallbacks, GArray *moves)
{
	Threads *r = t->r;

	if (fallbacks->len == 0)
		return 0;
	gate_wait_drained(t);
	for (guint i = 0; i < fallbacks->len; i++) {
		GsMemBuf *b = gs_memory_buffer(r->mem, g_array_index(fallbacks, GsSpillBufId, i));
		Held *held = b != NULL ? b->owner : NULL;

		if (held != NULL && !held->copying && gs_run_falls_to_disk(&r->tier_ops, b))
			threads_move_begin(t->r, held, GS_TIER_DISK, moves);
	}
	gs_run_gate_fallback(&r->tier_ops, tiers_of(t));
	return moves_make(t, moves);
}

/*
 * On-demand spill inside a failing allocation: victims to free @need bytes
 * in @tier go down one tier, and the thread tries again once they landed.
 * FALSE if nothing moved.
 */
static gboolean
spill_for(Worker *t, GsTier tier, gint64 need)
{
	Threads *r = t->r;
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(Move));
	g_autoptr(GArray) fallbacks = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	gboolean closed;
	guint committed;

	if (!gs_memory_spills(r->mem) || !r->w->policy.spill.on_demand || tier == GS_TIER_DISK)
		return FALSE;
	gs_memory_plan_victims(r->mem, tier, need, now(r), r->moves, allocated_by, t);
	if (r->moves->len == 0)
		return FALSE;
	closed = gate_enter(t);
	for (guint i = 0; i < r->moves->len; i++) {
		GsMemBuf *b = gs_memory_buffer(r->mem, g_array_index(r->moves, GsSpillMove, i).id);
		Held *held = b != NULL ? b->owner : NULL;

		if (held == NULL || held->copying)
			continue;
		if (!closed && threads_move_begin(t->r, held, tier + 1, moves))
			continue;
		if (!closed) {
			gs_run_gate_close(&r->tier_ops, tiers_of(t));
			closed = r->w->policy.evac_gate;
		}
		g_array_append_val(fallbacks, b->id);
	}
	committed = moves_make(t, moves);
	committed += take_fallbacks(t, fallbacks, moves);
	gate_leave(t);
	return committed > 0;
}

/* ---- the interpreter's calls (under its interp_lock: another thread may take buffers) ---- */

static void
alloc_done(Worker *t, gboolean ok, guint64 handle)
{
	threads_interp_lock(t);
	gs_interp_alloc_done(t->interp, ok, handle, now(t->r));
	threads_interp_unlock(t);
}

static void
alloc_throw(Worker *t, GsException exc)
{
	threads_interp_lock(t);
	gs_interp_alloc_throw(t->interp, exc, now(t->r));
	threads_interp_unlock(t);
}


/* ---- allocations and frees ---- */

static void
set_buffer_spillable(Threads *r, const GsMemBuf *b, gboolean spillable)
{
	if (gs_memory_spills(r->mem))
		gs_spill_set_spillable(gs_memory_store(r->mem), b->id, spillable);
}

/* Under lock, returned unlocked: the model admitted @b; the backend supplies its bytes. */
static gboolean
tiered_take(Worker *t, const GsEffect *e, GsMemBuf *b, gboolean spillable, guint64 *handle)
{
	Threads *r = t->r;
	Held *held = g_new0(Held, 1);
	guint64 bk = 0;
	gboolean ok;

	/*
	 * No victim until its bytes exist: it is in flight meanwhile, and not
	 * spillable, so that no plan counts on it.
	 */
	*held = (Held){.mb = b, .name = e->buf, .owner = t, .copying = TRUE};
	b->owner = held;
	threads_note_tier_peak(r, b->tier);
	set_buffer_spillable(r, b, FALSE);
	threads_engine_unlock(r);
	ok = gs_backend_alloc(r->ops, r->bk, t->bk, b->tier, b->device, e->size, &bk);
	if (!ok)
		threads_device_works(r);
	pthread_mutex_lock(&r->lock);
	held->copying = FALSE;
	set_buffer_spillable(r, b, spillable);
	if (!ok) {
		gs_memory_give_page(t->task != NULL ? t->task->pages : NULL, b);
		gs_memory_free_buffer(r->mem, b, NULL);
		gs_run_reserve_retry(&r->tier_ops);
		g_free(held);
	} else {
		held->backend = bk;
		g_ptr_array_add(t->live, held);
	}
	threads_copies_changed(r);
	threads_engine_unlock(r);
	if (!ok)
		return FALSE;
	*handle = GPOINTER_TO_SIZE(held);
	if (e->alloc_kind == GS_KIND_GPU)
		threads_count_footprint(t, e->size);
	return TRUE;
}

static void tiered_unspill(Worker *t, const GsEffect *e);

/*
 * HostAlloc's refusal of a size no pool could hold, under the engine
 * mutex: TRUE, with the mutex let go and the allocation answered, if so.
 */
static gboolean
refused_at_once(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	GsMemRequest req = gs_run_request(&r->tier_ops, t, t->id, e, r->engine, now(r));
	GsException thrown;

	if (!gs_run_host_never_fits(&r->tier_ops, e, &req, &thrown))
		return FALSE;
	threads_engine_unlock(r);
	threads_log_refused(t, e, 0, GS_REFUSED_NEVER_FITS);
	if (thrown != GS_EXC_NONE)
		alloc_throw(t, thrown);
	else
		alloc_done(t, FALSE, 0);
	return TRUE;
}

/* An allocation through the model: it spills on demand until it fits or nothing moves. */
void
threads_tiered_alloc(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	GsMemRequest req;
	GsMemAlloc a;
	guint64 handle = 0;
	const char *pool;
	gboolean fallback;

	if (e->buf == GS_INTERP_UNSPILL_BUF) {
		tiered_unspill(t, e);
		return;
	}
	pthread_mutex_lock(&r->lock);
	atomic_fetch_add_explicit(&r->locked_allocs, 1, memory_order_relaxed);
	if (refused_at_once(t, e))
		return;
	if (!gs_run_fair_share_take(&r->tier_ops, task_of(t), e->alloc_kind, e->size)) {
		threads_engine_unlock(r);
		threads_log_refused(t, e, 0, GS_REFUSED_FAIR_SHARE);
		alloc_done(t, FALSE, 0);
		return;
	}
	for (;;) {
		req = gs_run_request(&r->tier_ops, t, t->id, e, r->engine, now(r));
		a = gs_memory_alloc(r->mem, &req);
		if (a.outcome != GS_MEM_NO_ROOM || a.short_by <= 0 ||
		    !spill_for(t, a.tier, a.short_by))
			break;
	}
	if (a.outcome == GS_MEM_NO_ROOM && a.short_by > 0)
		gs_run_failure_callback(&r->tier_ops, &req, &a, r->res);
	if (a.outcome == GS_MEM_OK &&
	    !gs_memory_take_page(t->task != NULL ? &t->task->pages : NULL, a.buf)) {
		gs_memory_free_buffer(r->mem, a.buf, NULL);
		a.outcome = GS_MEM_NO_PAGE; /* no spill helps */
	}
	/* Read before tiered_take lets the lock go: a spill may move the buffer meanwhile. */
	pool = a.outcome == GS_MEM_OK ? gs_memory_pool_name(r->mem, a.buf) : NULL;
	fallback = a.outcome == GS_MEM_OK && a.buf->fallback;
	if (a.outcome == GS_MEM_OK && tiered_take(t, e, a.buf, req.spillable, &handle)) {
		threads_log_granted(t, e, pool, fallback);
		/* In the interpreter before a thread waiting to free it may take it. */
		threads_interp_lock(t);
		gs_interp_alloc_done(t->interp, TRUE, handle, now(r));
		threads_note_allocated(t, e->buf);
		threads_interp_unlock(t);
		return;
	}
	if (a.outcome == GS_MEM_OK)
		pthread_mutex_lock(&r->lock); /* tiered_take let it go */
	gs_run_fair_share_give(&r->tier_ops, task_of(t), e->alloc_kind, e->size);
	threads_engine_unlock(r);
	threads_log_refused(t, e, a.usage, gs_run_refusal_of(&a));
	if (a.outcome == GS_MEM_OVER_RESERVATION)
		alloc_throw(t, GS_EXC_RESERVATION_FAILED);
	else
		alloc_done(t, FALSE, 0);
}

/*
 * Frees a buffer wherever it lives now; returns that tier, and *@pool its
 * host pool (or NULL). The buffer's books are its owner's (another
 * thread's, when given away); the free and its stream's reservation @t's.
 * While another thread's compute reads it, its bytes stay until that
 * compute lets go of it (unlock_mine()).
 */
GsTier
threads_tiered_free(Worker *t, Held *held, const char **pool)
{
	Threads *r = t->r;
	Worker *owner = held->owner != NULL ? held->owner : t;
	GsMemBuf *b;
	GsTier tier;

	pthread_mutex_lock(&r->lock);
	b = held->mb;
	tier = b->tier;
	*pool = gs_memory_pool_name(r->mem, b);
	g_ptr_array_remove_fast(owner->live, held);
	gs_run_fair_share_give(&r->tier_ops, task_of(owner), b->kind, b->size);
	gs_memory_give_page(owner->task != NULL ? owner->task->pages : NULL, b);
	if (!gs_memory_free_buffer(r->mem, b, stream_reservation(t, tier, b->device))) {
		held->freed_in = tier; /* its record stays the model's until then */
	} else if (held->copying) {
		held->mb = NULL;
		held->doomed = TRUE; /* the copier frees both copies when its move lands */
	} else if (threads_defer_to_readers(held)) {
		held->mb = NULL;
		held->freed_in = tier;
	} else {
		backend_free_held(r, t->bk, tier, held->backend);
		g_free(held);
	}
	gs_run_reserve_retry(&r->tier_ops);
	threads_engine_unlock(r);
	return tier;
}

/*
 * Under lock: drops @t's synchronous locks on @ids; the buffers another
 * thread freed while they were read go now, their bytes too. TRUE if any
 * did.
 */
static gboolean
unlock_mine(Worker *t, GArray *ids)
{
	Threads *r = t->r;
	g_autoptr(GPtrArray) released = g_ptr_array_new();

	if (!gs_memory_unlock_all(r->mem, ids, released))
		return FALSE;
	for (guint i = 0; i < released->len; i++) {
		Held *held = released->pdata[i];

		backend_free_held(r, t->bk, held->freed_in, held->backend);
		g_free(held);
	}
	return TRUE;
}

/* ---- computes: locks, and spilled buffers brought back first ---- */

/* Waits while another thread's copy of one of @ids is in flight. */
static void
wait_copies_of(Worker *t, const GArray *ids)
{
	for (guint i = 0; i < ids->len && !atomic_load(&t->stop); i++) {
		GsMemBuf *b = gs_memory_buffer(t->r->mem, g_array_index(ids, GsSpillBufId, i));

		if (b != NULL && ((Held *) b->owner)->copying) {
			threads_wait_copies(t);
			i = (guint) -1; /* look again from the start */
		}
	}
}

/* Begins the copies up; FALSE (nothing begun) with *@short_by when the GPU lacks room for one. */
static gboolean
begin_copies_up(Worker *t, const GArray *ids, GArray *moves, gint64 *short_by)
{
	Threads *r = t->r;

	for (guint i = 0; i < ids->len; i++) {
		GsMemBuf *b = gs_memory_buffer(r->mem, g_array_index(ids, GsSpillBufId, i));

		/* A buffer the compute names twice is on its way already. */
		if (b == NULL || b->tier == GS_TIER_GPU || (b->moving && b->dest == GS_TIER_GPU))
			continue;
		if (!threads_move_begin(t->r, b->owner, GS_TIER_GPU, moves))
			*short_by += b->size;
	}
	if (*short_by == 0)
		return TRUE;
	move_cancel(r, moves);
	return FALSE;
}

/*
 * The allocation gs_interp_unspill_first() asked for: the compute's spilled
 * buffers come back to the GPU, locked first so that making room never picks
 * them; they stay locked until the compute has taken its own locks.
 */
static void
tiered_unspill(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	GsRunThreadTiers *m;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(Move));
	gboolean ok = FALSE;

	pthread_mutex_lock(&r->lock);
	m = tiers_of(t);
	threads_buffers_listed(t, &e->op->compute.uses, ids);
	gs_spill_use_begin(gs_memory_store(r->mem), (const GsSpillBufId *) ids->data, ids->len,
			   GS_SPILL_SYNCHRONOUS, now(r));
	g_array_append_vals(m->locked, ids->data, ids->len);
	for (;;) {
		gint64 short_by = 0;
		gboolean closed;

		wait_copies_of(t, ids);
		if (gs_memory_unspill_need(r->mem, ids) == 0 || atomic_load(&t->stop)) {
			ok = TRUE;
			break;
		}
		closed = gate_enter(t);
		if (closed) {
			gate_leave(t);
			gate_wait_open(t);
			continue;
		}
		if (begin_copies_up(t, ids, moves, &short_by)) {
			guint landed = moves_make(t, moves);

			gate_leave(t);
			if (landed == 0)
				break; /* the backend could not bring them back */
			continue;
		}
		gate_leave(t);
		if (!spill_for(t, GS_TIER_GPU, short_by))
			break;
	}
	if (!ok && unlock_mine(t, m->locked))
		memory_freed(r, t->id, GS_TIER_GPU);
	threads_engine_unlock(r);
	if (!ok)
		threads_log_refused(t, e, 0, GS_REFUSED_NO_ROOM);
	alloc_done(t, ok, 0);
}

/*
 * A compute that uses buffers locks them for its duration, or until its
 * stream is synchronised, and reads their backend handles. If some are
 * spilled, the compute asks for them first: FALSE then.
 */
gboolean
threads_tiered_compute_begin(Worker *t, const GsEffect *e, GArray *uses)
{
	Threads *r = t->r;
	const GsOp *op = e->op;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	gint64 need = 0;

	if (op == NULL || op->compute.uses.len == 0)
		return TRUE;
	pthread_mutex_lock(&r->lock);
	threads_live_listed(t, &op->compute.uses, ids, uses); /* @uses is dropped if it must wait */
	if (gs_memory_spills(r->mem))
		need = gs_memory_unspill_need(r->mem, ids);
	if (need > 0) {
		pthread_mutex_unlock(&r->lock);
		threads_interp_lock(t);
		gs_interp_unspill_first(t->interp, need, now(r));
		threads_interp_unlock(t);
		return FALSE;
	}
	if (r->frees_across)
		threads_reading_begin(t, &op->compute.uses);
	if (gs_memory_spills(r->mem)) {
		GsRunThreadTiers *m = tiers_of(t);

		gs_spill_use_begin(gs_memory_store(r->mem), (const GsSpillBufId *) ids->data,
				   ids->len, gs_memory_stream_id(t->id, op->compute.stream), now(r));
		/* an unspill's locks: ours are taken now */
		if (unlock_mine(t, m->locked))
			memory_freed(r, t->id, GS_TIER_GPU);
		if (op->compute.stream < 0)
			g_array_append_vals(m->locked, ids->data, ids->len);
	}
	threads_engine_unlock(r);
	return TRUE;
}

/* The compute is over: its synchronous locks go, and its buffers may be spilled again. */
void
threads_tiered_compute_end(Worker *t)
{
	Threads *r = t->r;

	if (t->tiers == NULL || t->tiers->locked->len == 0)
		return;
	pthread_mutex_lock(&r->lock);
	unlock_mine(t, t->tiers->locked);
	memory_freed(r, t->id, GS_TIER_GPU);
	threads_engine_unlock(r);
}

/* ---- reservations and the other ops of the tiers (under lock) ---- */

/* A blocking reservation in line: the thread waits (GS_RUN_RESERVE) until it is granted or stopped. */
static void
wait_for_reservation(Worker *t)
{
	Threads *r = t->r;

	threads_set_status(r, t, GS_RUN_RESERVE);
	t->parked_since = now(r);
	threads_drain_wakes(r);
	while (atomic_load(&t->status) == GS_RUN_RESERVE && !atomic_load(&t->stop))
		pthread_cond_wait(&t->cond, &r->lock);
	count_event(r);
	if (atomic_load(&t->status) == GS_RUN_RESERVE) {
		gs_run_reserve_leave_line(&r->tier_ops, t->tiers, t);
		threads_set_status(r, t, GS_RUN_READY);
	}
}

/* ---- the run layer's hooks: reservations (under lock) ---- */

GsRunThreadTiers *
threads_tiers_of(gpointer data, gpointer thread)
{
	return tiers_of(thread);
}

GsRunTask *
threads_task_of(gpointer data, gpointer thread)
{
	Worker *t = thread;

	return t->task != NULL ? &t->task->run : NULL;
}

void
threads_reservation_wakes(gpointer data, gpointer thread)
{
	Worker *t = thread;

	threads_set_status(data, t, GS_RUN_READY);
	pthread_cond_signal(&t->cond);
}

/* An op of the tiers the interpreter leaves to the driver. */
void
threads_tiered_op(Worker *t, const GsOp *op)
{
	Threads *r = t->r;
	GsException thrown;

	pthread_mutex_lock(&r->lock);
	if (!gs_run_tier_op(&r->tier_ops, t, t->id, op, &thrown)) {
		wait_for_reservation(t);
		thrown = gs_run_take_thrown(tiers_of(t)); /* what its op threw once carried out */
	}
	threads_engine_unlock(r);
	if (thrown != GS_EXC_NONE)
		threads_op_failed(t, thrown);
}

/* The interpreter's hook: a retry block's inputs are spillable while it runs. */
void
threads_on_block(const GsOp *retry_op, gboolean entering, gpointer data)
{
	Worker *t = data;
	Threads *r = t->r;

	if (!gs_memory_spills(r->mem) || retry_op->retry.input.len == 0)
		return; /* nothing to do: not worth the lock */
	pthread_mutex_lock(&r->lock);
	gs_run_block(&r->tier_ops, t, retry_op, entering);
	threads_engine_unlock(r);
}

/* Under lock: the thread is done with the tiers; its locks and reservations go back. */
void
threads_tiers_thread_ends(Worker *t)
{
	if (t->tiers == NULL)
		return;
	gate_leave(t);
	if (gs_memory_spills(t->r->mem) && unlock_mine(t, t->tiers->locked))
		memory_freed(t->r, t->id, GS_TIER_GPU);
	gs_run_thread_tiers_end(&t->r->tier_ops, t->tiers, t);
}

