/*
 * gpusim: the simulator: what the tier model decides, carried out (see driver.h).
 */
#include "config.h"

#include "sim/driver.h"

/* ---- the memory tiers: buffers, copies, the gate, reservations ---- */

static SimMem *
mem_of(Sim *s, SimThread *t)
{
	if (t->mem == NULL) {
		SimMem *m = g_new0(SimMem, 1);

		m->bufs = g_ptr_array_new();
		gs_run_thread_tiers_init(&m->res, &s->tier_ops, t->id, t->result->name, t->spec);
		m->copies = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		m->fallbacks = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		t->mem = m;
	}
	return t->mem;
}

void
sim_mem_free(SimMem *m)
{
	if (m == NULL)
		return;
	g_ptr_array_unref(m->bufs);
	gs_run_thread_tiers_clear(&m->res);
	g_array_unref(m->copies);
	g_array_unref(m->fallbacks);
	g_free(m);
}

static const char *
buf_name(const GsMemBuf *b)
{
	const SimThread *owner = b->owner;

	return owner->spec->buffers->pdata[b->name];
}

/* The reservation the thread holds under name @index (made empty on first use). */
/* The thread's newest held reservation in a space: its stream's, for attribution "stream". */
static GsMemReservation *
stream_reservation(SimThread *t, GsTier tier, guint device)
{
	return gs_memory_newest_reservation(t->mem != NULL ? t->mem->res.by_name : NULL, tier,
					    device);
}

/* The ids of every live instance of buffer name @name of the thread. */
static void
buffers_named(SimThread *t, guint name, GArray *ids)
{
	for (guint i = 0; t->mem != NULL && i < t->mem->bufs->len; i++) {
		const GsMemBuf *b = t->mem->bufs->pdata[i];

		if (b->name == name)
			g_array_append_val(ids, b->id);
	}
}

/* The thread's live buffers named in @names (the run layer's `buffers` hook too). */
void
sim_buffers_listed(gpointer thread, const GsNames *names, GArray *ids)
{
	SimThread *t = thread;
	const guint *name = gs_names_data(names);

	for (guint i = 0; i < names->len; i++)
		buffers_named(t, name[i], ids);
}

/* @pool: the host side's pool, beside a pinned pool (else NULL). */
static void
log_copy(Sim *s, const GsMemBuf *b, GsTier from, GsTier to, gboolean ok, const char *pool)
{
	GsLogEntry e = {.kind = GS_LOG_SPILL, .thread = ((SimThread *) b->owner)->result->name,
			.buf = buf_name(b), .bytes = b->size, .tier = from, .to_tier = to, .ok = ok,
			.what = to > from ? "spill" : "unspill", .pool = pool};

	emit(s, &e);
}

/*
 * Memory came free outside an allocation (a spill landed, a lock or a
 * reservation was released), freed by thread @by: the others blocked on
 * that kind may try again (gs_run_memory_freed()). The engine's own
 * counters are not touched.
 */
static void
memory_freed(Sim *s, GsThreadId by, GsTier tier)
{
	s->released = TRUE;
	s->changed = TRUE;
	gs_run_memory_freed(s->engine, by, tier, s->now);
}

/* The run layer's `released` hook: a reservation went back. */
void
sim_memory_came_free(gpointer data, GsTier tier)
{
	memory_freed(data, GS_NO_THREAD, tier);
}

/* ---- the gate (its scopes are the run layer's) ---- */

static gboolean
gate_enter(Sim *s, SimThread *t)
{
	return gs_run_gate_enter(&s->tier_ops, &mem_of(s, t)->res);
}

/* Once every copy inside has landed, the threads that fell back go on; once all left, it opens. */
static void
gate_settle(Sim *s)
{
	GsGate *gate = gs_memory_gate(s->mem);

	if (!gs_gate_is_closed(gate) || !gs_gate_drained(gate))
		return;
	while (!g_queue_is_empty(&s->gate_waiters))
		sim_resume_at(s, g_queue_pop_head(&s->gate_waiters), s->now, GS_RUN_READY);
	if (!gs_run_gate_reopen(&s->tier_ops))
		return;
	while (!g_queue_is_empty(&s->open_waiters))
		sim_resume_at(s, g_queue_pop_head(&s->open_waiters), s->now, GS_RUN_READY);
}

static void
gate_leave(Sim *s, SimThread *t)
{
	if (t->mem != NULL && gs_run_gate_leave(&s->tier_ops, &t->mem->res))
		gate_settle(s);
}

/* ---- copies a thread carries out ---- */

/*
 * Starts copying the victims of a plan down one tier. A victim that finds
 * the gate closed, or no room below (which closes it), takes the fallback
 * path once the copies inside have landed. Returns FALSE if nothing started.
 */
static gboolean
start_copies_down(Sim *s, SimThread *t, GsTier tier, GsTime *duration)
{
	SimMem *m = mem_of(s, t);
	gboolean closed;

	closed = gate_enter(s, t);
	for (guint i = 0; i < s->moves->len; i++) {
		const GsSpillMove *mv = &g_array_index(s->moves, GsSpillMove, i);
		GsMemBuf *b = gs_memory_buffer(s->mem, mv->id);
		GsTime d;

		if (b == NULL || b->moving)
			continue;
		if (!closed && gs_memory_copy_begin(s->mem, b, tier + 1, &d)) {
			g_array_append_val(m->copies, b->id);
			*duration += d;
			continue;
		}
		if (!closed) {
			gs_run_gate_close(&s->tier_ops, &mem_of(s, t)->res);
			closed = s->w->policy.evac_gate;
		}
		g_array_append_val(m->fallbacks, b->id);
	}
	if (m->copies->len == 0 && m->fallbacks->len == 0) {
		gate_leave(s, t);
		return FALSE;
	}
	return TRUE;
}

/* The thread waits @duration for its copies (spill-block time), then goes on with @after. */
static void
wait_for_copies(Sim *s, SimThread *t, GsTime duration, After after)
{
	t->mem->after = after;
	sim_lanes_begin(s, t, sim_latency(s, duration), TRUE);
}

static gboolean
allocated_by(const GsMemBuf *b, gconstpointer thread)
{
	return b->owner == thread;
}

/*
 * On-demand spill inside a failing allocation: victims to free @need bytes
 * in @tier go down one tier, and the thread tries again once they landed.
 * Under smallest_fit (Spark's consumer order) the requester's own buffers
 * go last. FALSE if nothing can move.
 */
static gboolean
spill_for(Sim *s, SimThread *t, GsTier tier, gint64 need)
{
	GsTime duration = 0;

	if (!gs_memory_spills(s->mem) || !s->w->policy.spill.on_demand || tier == GS_TIER_DISK)
		return FALSE;
	if (mem_of(s, t)->gave_up) {
		mem_of(s, t)->gave_up = FALSE;
		return FALSE;
	}
	gs_memory_plan_victims(s->mem, tier, need, s->now, s->moves, allocated_by, t);
	if (s->moves->len == 0 || !start_copies_down(s, t, tier, &duration))
		return FALSE;
	wait_for_copies(s, t, duration, AFTER_ALLOC);
	return TRUE;
}

/* The copies @t carried out land; what they freed is @t's free. */
static void
commit_copies(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;

	for (guint i = 0; i < m->copies->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(m->copies, GsSpillBufId, i));
		const char *pool;
		GsTier from;
		gboolean ok;

		if (b == NULL || !b->moving)
			continue; /* freed, or its move was given up, meanwhile */
		from = b->tier;
		pool = gs_memory_pool_name(s->mem, b); /* the host side's: the source's, */
		ok = gs_memory_copy_commit(s->mem, b);
		if (from != GS_TIER_HOST)
			pool = gs_memory_pool_name(s->mem, b); /* or where it landed */
		log_copy(s, b, from, ok ? b->tier : b->dest, ok, pool);
		if (ok && from < b->tier)
			memory_freed(s, t->id, from);
		sim_note_peak(s, b->tier);
	}
	g_array_set_size(m->copies, 0);
}

/*
 * The fallback path: a victim from the GPU goes straight to disk when
 * host_full says so and the disk has room; otherwise it stays where it is.
 */
static GsTime
take_fallbacks(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;
	GsTime duration = 0;

	for (guint i = 0; i < m->fallbacks->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(m->fallbacks, GsSpillBufId, i));
		GsTime d;

		if (b == NULL || b->moving)
			continue;
		if (gs_run_falls_to_disk(&s->tier_ops, b) &&
		    gs_memory_copy_begin(s->mem, b, GS_TIER_DISK, &d)) {
			g_array_append_val(m->copies, b->id);
			duration += d;
		}
	}
	if (m->fallbacks->len > 0)
		gs_run_gate_fallback(&s->tier_ops, &m->res);
	g_array_set_size(m->fallbacks, 0);
	return duration;
}

/*
 * The thread's copies have landed. Victims that must fall back wait until
 * the gate has drained (GS_RUN_GATE), then go to disk or stay; then the thread
 * goes on with what it was doing. FALSE while it must wait again.
 */
static gboolean
copies_landed(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;
	GsGate *gate = gs_memory_gate(s->mem);
	After after = m->after;
	GsTime duration;

	commit_copies(s, t);
	if (m->fallbacks->len > 0) {
		if (gs_gate_is_closed(gate) && !gs_gate_drained(gate)) {
			sim_set_status(s, t, GS_RUN_GATE);
			g_queue_push_tail(&s->gate_waiters, t);
			return FALSE;
		}
		duration = take_fallbacks(s, t);
		gate_leave(s, t);
		if (m->copies->len > 0) {
			wait_for_copies(s, t, duration, after);
			return FALSE;
		}
		m->gave_up = TRUE; /* every victim stayed: spilling again now would change nothing */
	}
	gate_leave(s, t);
	if (gs_memory_unlock_all(s->mem, m->res.locked, NULL))
		memory_freed(s, t->id, GS_TIER_GPU);
	m->after = AFTER_NOTHING;
	if (after == AFTER_ALLOC)
		t->try_due = TRUE;
	return TRUE;
}

/* ---- allocations ---- */

/* @b: the buffer the allocation made in @tier (its pool goes in the log). */
static void
log_granted(Sim *s, SimThread *t, const GsEffect *effect, GsTier tier, const GsMemBuf *b)
{
	GsLogEntry e;

	s->changed = TRUE;
	if (!logging(s))
		return;
	e = gs_run_alloc_granted(t->result->name, t->spec, effect, tier);
	e.pool = gs_memory_pool_name(s->mem, b);
	e.fallback = b->fallback;
	emit(s, &e);
}

static void
log_refused(Sim *s, SimThread *t, const GsEffect *effect, GsTier tier, gint64 usage,
	    GsRefusal why)
{
	GsLogEntry e = gs_run_alloc_refused(s->r, t->result->name, t->spec, effect, tier, usage, why);

	s->changed = TRUE;
	if (logging(s))
		emit(s, &e);
}

static void
keep_buffer(Sim *s, SimThread *t, GsMemBuf *b, const GsEffect *effect)
{
	b->owner = t;
	b->name = effect->buf;
	if (gs_memory_spills(s->mem))
		g_ptr_array_add(mem_of(s, t)->bufs, b);
	sim_note_peak(s, b->tier);
}

/* Brings a compute's spilled buffers back (the ALLOC gs_interp_unspill_first() asked for). */
static void try_unspill(Sim *s, SimThread *t, const GsEffect *effect);

/*
 * A granted allocation's fresh memory is written (links.fresh_memory), and
 * the host pools it added pinned (links.host_pools), before @t goes on.
 */
static void
first_write(Sim *s, SimThread *t, const GsMemAlloc *a, gint64 bytes)
{
	GsTime duration = gs_time_add(gs_memory_first_write_time(s->mem, bytes), a->pinning);

	if (duration > 0)
		sim_lanes_begin(s, t, duration, FALSE);
}

/*
 * @a succeeded: the task's page table takes it and the thread keeps it;
 * FALSE, with the buffer freed, when the table is full (no spill helps).
 */
static gboolean
alloc_kept(Sim *s, SimThread *t, const GsEffect *effect, GsMemAlloc *a)
{
	if (!gs_memory_take_page(t->task != NULL ? &t->task->pages : NULL, a->buf)) {
		gs_memory_free_buffer(s->mem, a->buf, NULL);
		a->outcome = GS_MEM_NO_PAGE;
		a->short_by = 0;
		return FALSE;
	}
	keep_buffer(s, t, a->buf, effect);
	log_granted(s, t, effect, a->tier, a->buf);
	gs_interp_alloc_done(interp_of(t), TRUE, (guint64) (guintptr) a->buf, s->now);
	sim_owner_moved(s, t); /* a thread waiting to free this buffer may now */
	first_write(s, t, a, effect->size);
	return TRUE;
}

/* After spilling could not help: the failure callback, whose retry may succeed. */
static gboolean
called_back(Sim *s, SimThread *t, const GsEffect *effect, const GsMemRequest *req,
	    GsMemAlloc *a)
{
	gs_run_failure_callback(&s->tier_ops, req, a, s->r);
	if (a->outcome != GS_MEM_OK)
		return FALSE;
	if (gs_run_fair_share_take(&s->tier_ops, task_of(t), effect->alloc_kind, effect->size)) {
		if (alloc_kept(s, t, effect, a))
			return TRUE;
		gs_run_fair_share_give(&s->tier_ops, task_of(t), effect->alloc_kind, effect->size);
		return FALSE;
	}
	gs_memory_free_buffer(s->mem, a->buf, NULL);
	a->outcome = GS_MEM_OVER_SHARE;
	return FALSE;
}

void
sim_try_alloc(Sim *s, SimThread *t, const GsEffect *effect)
{
	GsMemRequest req;
	GsMemAlloc a;
	GsException thrown;

	if (effect->buf == GS_INTERP_UNSPILL_BUF) {
		try_unspill(s, t, effect);
		return;
	}
	req = gs_run_request(&s->tier_ops, t, t->id, effect, s->engine, s->now);
	if (gs_run_host_never_fits(&s->tier_ops, effect, &req, &thrown)) {
		log_refused(s, t, effect, GS_TIER_HOST, 0, GS_REFUSED_NEVER_FITS);
		if (thrown != GS_EXC_NONE)
			gs_interp_alloc_throw(interp_of(t), thrown, s->now);
		else
			gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
		return;
	}
	if (!gs_run_fair_share_take(&s->tier_ops, task_of(t), effect->alloc_kind, effect->size)) {
		log_refused(s, t, effect, req.kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU, 0,
			    GS_REFUSED_FAIR_SHARE);
		gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
		return;
	}
	a = gs_memory_alloc(s->mem, &req);
	if (a.outcome == GS_MEM_OK && alloc_kept(s, t, effect, &a))
		return;
	gs_run_fair_share_give(&s->tier_ops, task_of(t), effect->alloc_kind, effect->size);
	if (a.outcome == GS_MEM_NO_ROOM && a.short_by > 0 && spill_for(s, t, a.tier, a.short_by))
		return;
	if (a.outcome == GS_MEM_NO_ROOM && a.short_by > 0 && called_back(s, t, effect, &req, &a))
		return;
	log_refused(s, t, effect, a.tier, a.usage, gs_run_refusal_of(&a));
	if (a.outcome == GS_MEM_OVER_RESERVATION)
		gs_interp_alloc_throw(interp_of(t), GS_EXC_RESERVATION_FAILED, s->now);
	else
		gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
}

/* Starts the copies up; FALSE (and nothing started) if the GPU lacks room for one. */
static gboolean
start_copies_up(Sim *s, SimThread *t, const GArray *ids, GsTime *duration, gint64 *short_by)
{
	SimMem *m = mem_of(s, t);

	for (guint i = 0; i < ids->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(ids, GsSpillBufId, i));
		GsTime d;

		if (b == NULL || b->tier == GS_TIER_GPU || (b->moving && b->dest == GS_TIER_GPU))
			continue;
		if (b->moving)
			gs_memory_copy_abort(s->mem, b); /* on its way to disk: it comes up instead */
		if (gs_memory_copy_begin(s->mem, b, GS_TIER_GPU, &d)) {
			g_array_append_val(m->copies, b->id);
			*duration += d;
			continue;
		}
		*short_by += b->size;
	}
	if (*short_by == 0)
		return TRUE;
	for (guint i = 0; i < m->copies->len; i++)
		gs_memory_copy_abort(s->mem,
				     gs_memory_buffer(s->mem, g_array_index(m->copies, GsSpillBufId, i)));
	g_array_set_size(m->copies, 0);
	return FALSE;
}

/*
 * An unspill that finds the gate closed has no fallback: its buffers must
 * come up. It waits outside the gate until the gate opens, then tries
 * again. Waiting inside, it would keep the gate from ever opening: two such
 * threads would wake each other at one instant for ever, each leaving the
 * gate only to enter it again while the other is inside.
 */
static void
wait_for_open_gate(Sim *s, SimThread *t)
{
	t->mem->after = AFTER_ALLOC;
	if (!gs_gate_is_closed(gs_memory_gate(s->mem))) {
		sim_resume_at(s, t, s->now, GS_RUN_READY); /* it opened as this thread left */
		return;
	}
	sim_set_status(s, t, GS_RUN_GATE);
	g_queue_push_tail(&s->open_waiters, t);
}

static void
try_unspill(Sim *s, SimThread *t, const GsEffect *effect)
{
	SimMem *m = mem_of(s, t);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	GsTime duration = 0;
	gint64 short_by = 0;
	gboolean closed;

	sim_buffers_listed(t, &effect->op->compute.uses, ids);
	if (gs_memory_unspill_need(s->mem, ids) == 0) {
		gs_interp_alloc_done(interp_of(t), TRUE, 0, s->now);
		return;
	}
	/* Locked first, so that making room never picks the buffers coming back. */
	gs_spill_use_begin(gs_memory_store(s->mem), (const GsSpillBufId *) ids->data, ids->len,
			   GS_SPILL_SYNCHRONOUS, s->now);
	g_array_append_vals(m->res.locked, ids->data, ids->len);
	closed = gate_enter(s, t);
	if (!closed && start_copies_up(s, t, ids, &duration, &short_by)) {
		wait_for_copies(s, t, duration, AFTER_ALLOC);
		return;
	}
	gate_leave(s, t);
	if (closed) {
		wait_for_open_gate(s, t);
		return;
	}
	if (spill_for(s, t, GS_TIER_GPU, short_by))
		return;
	if (gs_memory_unlock_all(s->mem, m->res.locked, NULL))
		memory_freed(s, t->id, GS_TIER_GPU);
	log_refused(s, t, effect, GS_TIER_GPU, 0, GS_REFUSED_NO_ROOM);
	gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
}

void
sim_do_free(Sim *s, SimThread *t, const GsEffect *effect)
{
	GsMemBuf *b = (GsMemBuf *) (guintptr) effect->handle;
	/* The buffer's books are its owner's; the free (and its stream's reservation) @t's. */
	SimThread *owner = b->owner != NULL ? b->owner : t;
	GsLogEntry e = {.kind = GS_LOG_FREE, .bytes = effect->size, .tier = b->tier,
			.pool = b->tier == GS_TIER_HOST ? gs_memory_pool_name(s->mem, b) : NULL};

	if (logging(s)) {
		e.thread = t->result->name;
		e.buf = owner->spec->buffers->pdata[effect->buf];
		e.owner = owner != t ? owner->result->name : NULL;
	}
	if (effect->at_end)
		t->leaking += effect->size;
	gs_run_fair_share_give(&s->tier_ops, task_of(owner), b->kind, b->size);
	gs_memory_give_page(owner->task != NULL ? owner->task->pages : NULL, b);
	if (owner->mem != NULL)
		g_ptr_array_remove(owner->mem->bufs, b);
	gs_memory_free_buffer(s->mem, b, stream_reservation(t, b->tier, b->device));
	s->released = TRUE;
	emit(s, &e);
	s->changed = TRUE;
}

/* ---- computes: locks, and spilled buffers brought back first ---- */

/*
 * A compute that uses buffers locks them for its duration, or until its
 * stream is synchronised. If some are spilled, the compute asks for them
 * first (an allocation, see gs_interp_unspill_first()). FALSE if it must.
 */
gboolean
sim_begin_compute(Sim *s, SimThread *t, const GsEffect *effect)
{
	const GsOp *op = effect->op;
	g_autoptr(GArray) ids = NULL;
	gint64 need;

	if (!gs_memory_spills(s->mem) || op->compute.uses.len == 0)
		return TRUE;
	sim_touches_shared(s);
	ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	sim_buffers_listed(t, &op->compute.uses, ids);
	need = gs_memory_unspill_need(s->mem, ids);
	if (need > 0) {
		gs_interp_unspill_first(interp_of(t), need, s->now);
		return FALSE;
	}
	gs_spill_use_begin(gs_memory_store(s->mem), (const GsSpillBufId *) ids->data, ids->len,
			   gs_memory_stream_id(t->id, op->compute.stream), s->now);
	if (op->compute.stream < 0) {
		g_array_append_vals(mem_of(s, t)->res.locked, ids->data, ids->len);
		mem_of(s, t)->computing = TRUE;
	}
	return TRUE;
}

/* ---- the run layer's hooks: reservations ---- */

GsRunThreadTiers *
sim_tiers_of(gpointer data, gpointer thread)
{
	return &mem_of(data, thread)->res;
}

void
sim_reservation_granted(gpointer data, GsTier tier)
{
	Sim *s = data;

	sim_note_peak(s, tier);
	s->changed = TRUE;
}

/* In line no more: what its op threw once carried out (a page refused) is thrown now. */
void
sim_reservation_wakes(gpointer data, gpointer thread)
{
	Sim *s = data;
	GsException thrown = gs_run_take_thrown(sim_tiers_of(s, thread));

	sim_resume_at(s, thread, s->now, GS_RUN_READY);
	if (thrown != GS_EXC_NONE)
		gs_interp_op_failed(interp_of(thread), thrown, s->now);
}

GsRunTask *
sim_task_of(gpointer data, gpointer thread)
{
	SimThread *t = thread;

	return t->task != NULL ? &t->task->run : NULL;
}

/* ---- ops the driver carries out ---- */

/* Carries out an op the interpreter leaves to the driver; FALSE when the thread must wait. */
gboolean
sim_do_op(Sim *s, SimThread *t, const GsOp *op)
{
	GsException thrown;

	if (gs_run_is_association(op)) {
		sim_do_association(s, t, op);
		return TRUE;
	}
	if (op->kind == GS_OP_FREE)
		return sim_free_for(s, t, op);
	if (!gs_run_tier_op(&s->tier_ops, t, t->id, op, &thrown)) {
		sim_set_status(s, t, GS_RUN_RESERVE);
		return FALSE;
	}
	if (thrown != GS_EXC_NONE)
		gs_interp_op_failed(interp_of(t), thrown, s->now);
	return TRUE;
}

/* ---- frees of another thread's buffers ---- */

static gboolean
owner_allocated(gconstpointer owner, guint name)
{
	return gs_interp_allocated(interp_of((SimThread *) owner), name);
}

/*
 * Whether @owner (NULL: not started) has allocated every buffer @op frees,
 * or has ended (then it gave all back, and nothing more will come).
 */
static gboolean
owner_ready(SimThread *owner, const GsOp *op)
{
	return gs_run_owner_ready(op, owner_allocated, owner,
				  owner != NULL && owner->status == GS_RUN_DONE);
}

/* @t waits for @owner (NULL: not started) to allocate the first buffer of @op it lacks. */
static void
log_free_wait(Sim *s, SimThread *t, SimThread *owner, const GsOp *op)
{
	GsLogEntry e;

	if (!logging(s))
		return;
	e = gs_run_free_wait_entry(s->w, t->result->name, op, owner_allocated, owner);
	emit(s, &e);
}

gboolean
sim_free_for(Sim *s, SimThread *t, const GsOp *op)
{
	SimThread *owner = g_hash_table_lookup(s->by_name, op->free.thread);

	if (!owner_ready(owner, op)) {
		g_ptr_array_add(s->owner_waiters, t);
		g_hash_table_insert(s->owner_waits, t, (gpointer) op);
		sim_set_status(s, t, GS_RUN_OWNER);
		log_free_wait(s, t, owner, op);
		return FALSE;
	}
	gs_interp_free_for(interp_of(t), interp_of(owner), op);
	return TRUE;
}

gboolean
sim_free_for_again(Sim *s, SimThread *t)
{
	const GsOp *op;

	if (s->owner_waits == NULL || (op = g_hash_table_lookup(s->owner_waits, t)) == NULL)
		return TRUE;
	g_hash_table_remove(s->owner_waits, t);
	return sim_free_for(s, t, op);
}

void
sim_wake_owner_waiters(Sim *s, SimThread *owner)
{
	for (guint i = 0; i < s->owner_waiters->len;) {
		SimThread *w = s->owner_waiters->pdata[i];
		const GsOp *op = g_hash_table_lookup(s->owner_waits, w);

		if (w->status != GS_RUN_OWNER || op == NULL) {
			g_hash_table_remove(s->owner_waits, w);
			g_ptr_array_remove_index(s->owner_waiters, i);
		} else if (strcmp(op->free.thread, owner->result->name) == 0 && owner_ready(owner, op)) {
			g_ptr_array_remove_index(s->owner_waiters, i);
			sim_resume_at(s, w, s->now, GS_RUN_READY);
		} else {
			i++;
		}
	}
}

/* The interpreter's hook: a retry block's inputs are spillable while it runs. */
void
sim_on_block(const GsOp *retry_op, gboolean entering, gpointer data)
{
	SimThread *t = data;

	gs_run_block(&t->sim->tier_ops, t, retry_op, entering);
}

/*
 * The thread is done with the tiers: what it has in flight is dropped, its
 * locks and reservations go back (as cuCascade's RAII reservations do).
 */
void
sim_mem_thread_ends(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;

	if (m == NULL)
		return;
	if (t->status == GS_RUN_GATE) {
		g_queue_remove(&s->gate_waiters, t);
		g_queue_remove(&s->open_waiters, t);
	}
	for (guint i = 0; i < m->copies->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(m->copies, GsSpillBufId, i));

		if (b != NULL && b->moving)
			gs_memory_copy_abort(s->mem, b);
	}
	g_array_set_size(m->copies, 0);
	g_array_set_size(m->fallbacks, 0);
	m->computing = FALSE;
	m->after = AFTER_NOTHING;
	gate_leave(s, t);
	gs_run_thread_tiers_end(&s->tier_ops, &m->res, t);
}

/* Picks up where the thread left the tiers when it resumes; FALSE if it waits on. */
gboolean
sim_mem_resume(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;

	if (m->computing) {
		/* The compute is over: its buffers may be spilled again. */
		m->computing = FALSE;
		gs_memory_unlock_all(s->mem, m->res.locked, NULL);
		memory_freed(s, t->id, GS_TIER_GPU);
	}
	if (m->after != AFTER_NOTHING)
		return copies_landed(s, t);
	return TRUE;
}

/* ---- proactive downgrade (cuCascade's hysteresis, policy.spill.proactive) ---- */

static void
proactive_step(Sim *s, guint device)
{
	gboolean *on = &g_array_index(s->downgrading, gboolean, device);
	GsSpillBufId *copy = &g_array_index(s->proactive_copy, GsSpillBufId, device);
	GsMemBuf *b;
	GsTime duration;

	if (!gs_run_downgrade_on(&s->tier_ops, device, on) || *copy != 0)
		return;
	b = gs_memory_downgrade_victim(s->mem, device, s->now, s->moves);
	if (b == NULL || !gs_memory_copy_begin(s->mem, b, GS_TIER_HOST, &duration))
		return;
	*copy = b->id;
	sim_schedule(s, gs_time_add(s->now, sim_latency(s, duration)), EV_PROACTIVE, device);
}

void
sim_proactive(Sim *s)
{
	if (!s->w->policy.spill.proactive || !gs_memory_spills(s->mem))
		return;
	for (guint d = 0; d < gs_memory_n_gpus(s->mem); d++)
		proactive_step(s, d);
}

void
sim_proactive_landed(Sim *s, guint device)
{
	GsSpillBufId *copy = &g_array_index(s->proactive_copy, GsSpillBufId, device);
	GsMemBuf *b = gs_memory_buffer(s->mem, *copy);

	*copy = 0;
	if (b != NULL && b->moving) {
		gboolean ok = gs_memory_copy_commit(s->mem, b);

		log_copy(s, b, GS_TIER_GPU, ok ? b->tier : b->dest, ok,
			 gs_memory_pool_name(s->mem, b));
		if (ok)
			memory_freed(s, GS_NO_THREAD, GS_TIER_GPU); /* by the downgrade */
		sim_note_peak(s, GS_TIER_HOST);
	}
}

