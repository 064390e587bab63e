/*
 * gpusim: the ops of the memory tiers (see tier-ops.h).
 */
#include "config.h"

#include "run/tasks.h"
#include "run/tier-ops.h"

void
gs_run_tiers_init(GsRunTiers *run, const GsWorkload *w, GsMemory *mem,
		  const GsRunHooks *hooks, gpointer driver)
{
	*run = (GsRunTiers){.w = w, .mem = mem, .hooks = hooks, .driver = driver};
	g_queue_init(&run->waiters);
	if (w->policy.admission == GS_ADMISSION_FAIR_SHARE)
		run->fair = gs_execution_pool_new(w->gpu.capacity * MAX(w->gpu.devices, 1));
	run->execution = gs_run_execution_new(w, hooks, driver);
	run->host_pools = mem != NULL ? gs_memory_host_pools(mem) : w->host.initial_pools;
	run->idle_streams = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint d = 0; d < MAX(w->gpu.devices, 1); d++)
		g_array_append_val(run->idle_streams, w->gpu.streams);
}

void
gs_run_tiers_clear(GsRunTiers *run)
{
	g_queue_clear(&run->waiters);
	g_clear_pointer(&run->fair, gs_execution_pool_free);
	g_clear_pointer(&run->execution, gs_run_execution_free);
	g_clear_pointer(&run->idle_streams, g_array_unref);
}

void
gs_run_thread_tiers_init(GsRunThreadTiers *mine, const GsRunTiers *run, GsThreadId id,
			 const char *thread, const GsThreadSpec *spec)
{
	*mine = (GsRunThreadTiers){.id = id, .by_name = g_ptr_array_new_with_free_func(g_free),
				   .thread = thread, .spec = spec,
				   .inputs = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId)),
				   .locked = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId)),
				   .borrowed = g_array_new(FALSE, FALSE, sizeof(GsRunBorrowed))};
	gs_gate_thread_init(gs_memory_gate(run->mem), &mine->gate, id);
}

void
gs_run_thread_tiers_clear(GsRunThreadTiers *mine)
{
	g_clear_pointer(&mine->by_name, g_ptr_array_unref);
	g_clear_pointer(&mine->inputs, g_array_unref);
	g_clear_pointer(&mine->locked, g_array_unref);
	g_clear_pointer(&mine->borrowed, g_array_unref);
}

GsMemReservation *
gs_run_reservation(GsRunThreadTiers *mine, guint index)
{
	GsMemReservation *res = gs_memory_reservation_at(mine->by_name, index);

	res->thread = mine->thread;
	res->name = mine->spec->reservations->pdata[index];
	return res;
}

static void
log_reservation(GsRunTiers *run, GsRunThreadTiers *mine, guint name, GsLogKind kind,
		const char *what, const GsMemReservation *res, gint64 bytes)
{
	GsLogEntry e = {.kind = kind, .thread = mine->thread, .what = what, .bytes = bytes,
			.buf = mine->spec->reservations->pdata[name], .tier = res->tier,
			.device = res->device};

	run->hooks->log(run->driver, &e);
}

/* @res is held now; @how: "granted", "idle" (what fits) or "notified" (after a wait). */
static void
grant(GsRunTiers *run, GsRunThreadTiers *mine, guint name, GsMemReservation *res,
      const char *how)
{
	res->serial = ++run->made;
	log_reservation(run, mine, name, GS_LOG_RESERVE, how, res, res->acct.size);
	run->hooks->granted(run->driver, res->tier);
}

void
gs_run_release(GsRunTiers *run, GsRunThreadTiers *mine, guint index)
{
	GsMemReservation *res = gs_run_reservation(mine, index);
	gint64 refund;

	if (!res->held)
		return;
	refund = gs_memory_release(run->mem, res);
	log_reservation(run, mine, index, GS_LOG_RELEASE, NULL, res, refund);
	run->hooks->released(run->driver, res->tier);
}

void
gs_run_release_all(GsRunTiers *run, GsRunThreadTiers *mine)
{
	for (guint i = 0; i < mine->by_name->len; i++)
		gs_run_release(run, mine, i);
}

GsReservationOutcome
gs_run_reserve(GsRunTiers *run, GsRunThreadTiers *mine, gpointer thread, const GsOp *op)
{
	guint name = op->reserve.res;
	GsMemReservation *res = gs_run_reservation(mine, name);
	GsReservationOutcome outcome;

	gs_run_release(run, mine, name); /* reserved again: the old one goes */
	outcome = gs_memory_reserve(run->mem, op, res);
	if (gs_reservation_outcome_held(outcome)) {
		grant(run, mine, name, res, gs_reservation_outcome_name(outcome));
		return outcome;
	}
	log_reservation(run, mine, name, GS_LOG_RESERVE, gs_reservation_outcome_name(outcome), res,
			op->reserve.size);
	if (outcome == GS_RESERVATION_WAIT) {
		mine->waiting = op;
		g_queue_push_tail(&run->waiters, thread);
	}
	return outcome;
}

/* Asks again for the reservation @mine waits on; TRUE when it leaves the line. */
static gboolean
reserve_again(GsRunTiers *run, GsRunThreadTiers *mine)
{
	guint name = mine->waiting->reserve.res;
	GsMemReservation *res = gs_run_reservation(mine, name);
	GsReservationOutcome outcome = gs_memory_reserve_again(run->mem, mine->waiting, res);
	gboolean channel = run->w->policy.reservations.blocking == GS_BLOCK_ON_CHANNEL;

	if (outcome == GS_RESERVATION_SHUTDOWN) {
		log_reservation(run, mine, name, GS_LOG_RESERVE, "shutdown", res,
				mine->waiting->reserve.size);
		return TRUE;
	}
	if (!gs_reservation_outcome_held(outcome))
		return FALSE;
	grant(run, mine, name, res,
	      outcome == GS_RESERVATION_GRANTED && channel ? "notified"
							   : gs_reservation_outcome_name(outcome));
	return TRUE;
}

/* ---- stream pools ---- */

static guint *
idle_streams(GsRunTiers *run, guint device)
{
	return &g_array_index(run->idle_streams, guint,
			      MIN(device, run->idle_streams->len - 1));
}

static void
log_stream(GsRunTiers *run, GsRunThreadTiers *mine, guint name, guint device, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_STREAM, .thread = mine->thread, .what = what,
			.buf = mine->spec->streams->pdata[name], .device = device,
			.count = *idle_streams(run, device)};

	run->hooks->log(run->driver, &e);
}

/* Thread @mine's stream called @name goes back to its pool, if it holds it. */
static gboolean
return_stream(GsRunTiers *run, GsRunThreadTiers *mine, guint name)
{
	for (guint i = 0; i < mine->borrowed->len; i++) {
		GsRunBorrowed b = g_array_index(mine->borrowed, GsRunBorrowed, i);

		if (b.name != name)
			continue;
		g_array_remove_index(mine->borrowed, i);
		(*idle_streams(run, b.device))++;
		log_stream(run, mine, name, b.device, "return");
		return TRUE;
	}
	return FALSE;
}

/* Takes an idle stream of @op's pool, or a new one under GROW; FALSE: none for now. */
static gboolean
take_stream(GsRunTiers *run, GsRunThreadTiers *mine, const GsOp *op)
{
	GsRunBorrowed b = {.name = op->borrow.stream,
			   .device = MIN(op->borrow.device, run->idle_streams->len - 1)};
	guint *idle = idle_streams(run, b.device);

	if (*idle > 0) {
		(*idle)--;
		log_stream(run, mine, b.name, b.device, "borrow");
	} else if (op->borrow.grow) {
		if (run->res != NULL)
			run->res->totals.streams_grown++;
		log_stream(run, mine, b.name, b.device, "grow");
	} else {
		return FALSE;
	}
	g_array_append_val(mine->borrowed, b);
	return TRUE;
}

/* borrow_stream: FALSE when the thread waits in line for a stream. */
static gboolean
borrow_stream(GsRunTiers *run, gpointer thread, const GsOp *op)
{
	GsRunThreadTiers *mine = run->hooks->tiers_of(run->driver, thread);

	if (return_stream(run, mine, op->borrow.stream))
		gs_run_reserve_retry(run);
	if (take_stream(run, mine, op))
		return TRUE;
	log_stream(run, mine, op->borrow.stream, MIN(op->borrow.device,
						     run->idle_streams->len - 1), "wait");
	mine->waiting = op;
	g_queue_push_tail(&run->waiters, thread);
	return FALSE;
}

/* Carries out the execution op @mine waits on again; TRUE when it went through. */
static gboolean
execute_again(GsRunTiers *run, GsRunThreadTiers *mine, gboolean *released)
{
	return gs_run_execution_op(run->execution, mine->task, mine->thread, mine->spec,
				   mine->waiting, &mine->thrown, released);
}

void
gs_run_reserve_retry(GsRunTiers *run)
{
	gboolean released = FALSE;
	guint n = g_queue_get_length(&run->waiters);

	for (guint i = 0; i < n; i++) {
		gpointer thread = g_queue_pop_head(&run->waiters);
		GsRunThreadTiers *mine = run->hooks->tiers_of(run->driver, thread);
		gboolean done;

		if (gs_op_kind_is_execution(mine->waiting->kind))
			done = execute_again(run, mine, &released);
		else if (mine->waiting->kind == GS_OP_BORROW_STREAM)
			done = take_stream(run, mine, mine->waiting);
		else
			done = reserve_again(run, mine);

		if (!done) {
			g_queue_push_tail(&run->waiters, thread);
			continue;
		}
		mine->waiting = NULL;
		run->hooks->wake(run->driver, thread);
	}
	if (run->mem != NULL)
		gs_memory_settle_channels(run->mem);
	/* A page refused after the wait gives its grant back: the others may go on now. */
	if (released)
		gs_run_reserve_retry(run);
}

GsException
gs_run_take_thrown(GsRunThreadTiers *mine)
{
	GsException thrown = mine->thrown;

	mine->thrown = GS_EXC_NONE;
	return thrown;
}

void
gs_run_reserve_leave_line(GsRunTiers *run, GsRunThreadTiers *mine, gpointer thread)
{
	if (mine->waiting == NULL)
		return;
	g_queue_remove(&run->waiters, thread);
	mine->waiting = NULL;
}

static void
set_spillable(GsRunTiers *run, gpointer thread, const GsNames *names, gboolean spillable)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));

	if (!gs_memory_spills(run->mem))
		return;
	run->hooks->buffers(thread, names, ids);
	gs_memory_set_spillable(run->mem, ids, spillable);
}

/* A sync: buffers the stream held may be spilled now, and a blocked thread may try again. */
static void
sync_stream(GsRunTiers *run, GsThreadId id, guint stream)
{
	if (gs_memory_spills(run->mem) &&
	    gs_spill_sync(gs_memory_store(run->mem), gs_memory_stream_id(id, (gint) stream)) > 0)
		run->hooks->released(run->driver, GS_TIER_GPU);
}

void
gs_run_thread_tiers_end(GsRunTiers *run, GsRunThreadTiers *mine, gpointer thread)
{
	gs_run_reserve_leave_line(run, mine, thread);
	if (gs_memory_spills(run->mem)) {
		if (gs_memory_unlock_all(run->mem, mine->locked, NULL))
			run->hooks->released(run->driver, GS_TIER_GPU);
		for (guint i = 0; i < mine->spec->streams->len; i++)
			gs_spill_sync(gs_memory_store(run->mem), gs_memory_stream_id(mine->id, (gint) i));
	}
	gs_run_release_all(run, mine);
	while (mine->borrowed->len > 0)
		return_stream(run, mine, g_array_index(mine->borrowed, GsRunBorrowed, 0).name);
}

/* An execution op: FALSE when the thread is in line for memory. */
static gboolean
execution_op(GsRunTiers *run, gpointer thread, const GsOp *op, GsException *thrown)
{
	GsRunThreadTiers *mine = run->hooks->tiers_of(run->driver, thread);
	GsRunTask *task = run->hooks->task_of(run->driver, thread);
	gboolean released = FALSE;

	if (!gs_run_execution_op(run->execution, task, mine->thread, mine->spec, op, thrown,
				 &released)) {
		mine->waiting = op;
		mine->task = task;
		g_queue_push_tail(&run->waiters, thread);
		return FALSE;
	}
	if (released)
		gs_run_reserve_retry(run);
	return TRUE;
}

gboolean
gs_run_tier_op(GsRunTiers *run, gpointer thread, GsThreadId id, const GsOp *op,
	       GsException *thrown)
{
	*thrown = GS_EXC_NONE;
	if (gs_op_kind_is_execution(op->kind))
		return execution_op(run, thread, op, thrown);
	if (op->kind == GS_OP_RESERVE) {
		switch (gs_run_reserve(run, run->hooks->tiers_of(run->driver, thread), thread, op)) {
		case GS_RESERVATION_WAIT:
			return FALSE;
		case GS_RESERVATION_TOO_LARGE:
			*thrown = GS_EXC_RESERVATION_TOO_LARGE;
			break;
		case GS_RESERVATION_GRANTED:
		case GS_RESERVATION_REFUSED:
		case GS_RESERVATION_IDLE:
		case GS_RESERVATION_SHUTDOWN:
		case GS_N_RESERVATION_OUTCOMES:
			break;
		}
	} else if (op->kind == GS_OP_RELEASE) {
		gs_run_release(run, run->hooks->tiers_of(run->driver, thread), op->res);
	} else if (op->kind == GS_OP_BORROW_STREAM) {
		return borrow_stream(run, thread, op);
	} else if (op->kind == GS_OP_RETURN_STREAM) {
		if (return_stream(run, run->hooks->tiers_of(run->driver, thread), op->stream))
			gs_run_reserve_retry(run);
	} else if (op->kind == GS_OP_SHUTDOWN_RESERVATIONS) {
		gs_memory_shutdown_channels(run->mem);
		gs_run_reserve_retry(run);
	} else if (op->kind == GS_OP_SYNC) {
		sync_stream(run, id, op->stream);
	} else if (op->kind == GS_OP_SPILLABLE || op->kind == GS_OP_UNSPILLABLE) {
		set_spillable(run, thread, &op->free.bufs, op->kind == GS_OP_SPILLABLE);
	}
	return TRUE;
}

void
gs_run_block(GsRunTiers *run, gpointer thread, const GsOp *retry_op, gboolean entering)
{
	GsRunThreadTiers *mine;
	g_autoptr(GArray) ids = NULL;

	if (!gs_memory_spills(run->mem) || retry_op->retry.input.len == 0)
		return;
	mine = run->hooks->tiers_of(run->driver, thread);
	if (!entering) {
		gs_memory_block_leave(run->mem, mine->inputs);
		return;
	}
	ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	run->hooks->buffers(thread, &retry_op->retry.input, ids);
	gs_memory_block_enter(run->mem, mine->inputs, ids);
}

GsMemRequest
gs_run_request(const GsRunTiers *run, gpointer thread, GsThreadId id, const GsEffect *effect,
	       GsEngine *engine, GsTime now)
{
	const GsOp *op = effect->op;
	GsMemRequest req = {.kind = effect->alloc_kind, .size = effect->size, .now = now};

	/* The owner's rank orders victims: only a store that spills needs it. */
	if (gs_memory_spills(run->mem))
		req.owner = gs_engine_thread_priority(engine, id);
	if (op != NULL && op->kind == GS_OP_ALLOC) {
		req.device = op->alloc.device;
		req.spillable = op->alloc.spillable;
		req.prefer_pinned = op->alloc.prefer_pinned;
		if (op->alloc.reservation >= 0)
			req.res = gs_run_reservation(run->hooks->tiers_of(run->driver, thread),
						     (guint) op->alloc.reservation);
		if (req.res != NULL && req.res->held && req.res->tier == GS_TIER_GPU &&
		    effect->alloc_kind == GS_KIND_GPU)
			req.device = req.res->device;
	}
	return req;
}

gboolean
gs_run_host_never_fits(const GsRunTiers *run, const GsEffect *effect, const GsMemRequest *req,
		       GsException *thrown)
{
	const GsOp *op = effect->op;

	if (run->mem == NULL || !gs_memory_host_never_fits(run->mem, req))
		return FALSE;
	*thrown = op != NULL && op->kind == GS_OP_ALLOC && !op->alloc.blocking
			  ? GS_EXC_NONE
			  : GS_EXC_ILLEGAL_ARGUMENT;
	return TRUE;
}

/* ---- the evacuation gate's scopes ---- */

static void
log_gate(GsRunTiers *run, const char *thread, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_GATE, .thread = thread, .what = what};

	run->hooks->log(run->driver, &e);
}

gboolean
gs_run_gate_enter(GsRunTiers *run, GsRunThreadTiers *mine)
{
	if (mine->gate.level > 0)
		return mine->gate.fell_back;
	run->gate_scopes++;
	return gs_gate_enter(gs_memory_gate(run->mem), &mine->gate) == GS_GATE_CLOSED;
}

gboolean
gs_run_gate_leave(GsRunTiers *run, GsRunThreadTiers *mine)
{
	if (mine->gate.level == 0)
		return FALSE;
	gs_gate_leave(gs_memory_gate(run->mem), &mine->gate);
	run->gate_scopes--;
	return TRUE;
}

gboolean
gs_run_gate_reopen(GsRunTiers *run)
{
	GsGate *gate = gs_memory_gate(run->mem);

	if (run->gate_scopes != 0 || !gs_gate_is_closed(gate) || !gs_gate_reset(gate))
		return FALSE;
	log_gate(run, NULL, "open");
	return TRUE;
}

void
gs_run_gate_close(GsRunTiers *run, GsRunThreadTiers *mine)
{
	GsGate *gate = gs_memory_gate(run->mem);

	if (!run->w->policy.evac_gate)
		return;
	if (!gs_gate_is_closed(gate))
		log_gate(run, mine->thread, "close");
	gs_gate_close(gate, &mine->gate);
}

void
gs_run_gate_fallback(GsRunTiers *run, GsRunThreadTiers *mine)
{
	log_gate(run, mine->thread, "fallback");
}

/* ---- memory that came free, fallbacks and fair shares ---- */

void
gs_run_memory_freed(GsEngine *engine, GsThreadId by, GsTier tier, GsTime now)
{
	if (tier != GS_TIER_DISK)
		gs_engine_dealloc(engine, by, tier == GS_TIER_GPU ? GS_KIND_GPU : GS_KIND_HOST, 0,
				  now);
}

/* A reservation changed: its counters as they are now go to the result. */
static void
note_reservation(const GsMemReservation *res, gpointer data)
{
	GsRunTiers *run = data;
	GsReservationView v;

	if (res->thread == NULL || res->name == NULL)
		return; /* not one of a thread's, by name */
	v = (GsReservationView){.time = run->hooks->now(run->driver), .tier = res->tier,
			       .device = res->device, .held = res->held, .size = res->acct.size,
			       .allocated = res->acct.allocated, .peak = res->acct.peak};

	v.thread = g_string_chunk_insert_const(run->res->strings, res->thread);
	v.name = g_string_chunk_insert_const(run->res->strings, res->name);
	g_array_append_val(run->res->reservations, v);
}

void
gs_run_tiers_report_to(GsRunTiers *run, GsResult *res)
{
	run->res = res;
	if (run->mem != NULL)
		gs_memory_watch_reservations(run->mem, note_reservation, run);
	gs_run_note_host_pools(run);
}

void
gs_run_note_host_pools(GsRunTiers *run)
{
	GsLogEntry e = {.kind = GS_LOG_HOST_POOLS, .tier = GS_TIER_HOST};

	if (run->mem != NULL && gs_memory_host_pools(run->mem) > run->host_pools) {
		run->host_pools = gs_memory_host_pools(run->mem);
		e.count = run->host_pools;
		e.bytes = gs_memory_host_pool_bytes(run->mem);
		run->hooks->log(run->driver, &e);
	}
	if (run->res != NULL)
		run->res->totals.host_pools = run->host_pools;
}

/*
 * One call's own allocation, freed at once; FALSE when it failed. The free
 * gives back only what the call took, nothing that was taken when the
 * allocation failed, so no other thread is told memory came free: with
 * every thread failing at one instant they would wake each other forever.
 */
static gboolean
callback_allocates(GsRunTiers *run, const GsMemRequest *req)
{
	GsMemRequest inner = *req;
	GsMemAlloc got;

	inner.size = run->w->policy.failure_callback.allocate;
	inner.spillable = FALSE;
	inner.res = NULL;
	got = gs_memory_alloc(run->mem, &inner);
	if (got.outcome != GS_MEM_OK)
		return FALSE;
	gs_memory_free_buffer(run->mem, got.buf, NULL);
	return TRUE;
}

void
gs_run_failure_callback(GsRunTiers *run, const GsMemRequest *req, GsMemAlloc *a,
			GsResult *res)
{
	guint retries = run->w->policy.failure_callback.retries;

	if (!run->w->policy.failure_callback.enabled)
		return;
	for (guint count = 0; a->outcome == GS_MEM_NO_ROOM; count++) {
		res->totals.failure_callbacks++;
		if (!callback_allocates(run, req))
			return;
		res->totals.failure_callback_allocs++;
		if (count >= retries)
			return;
		*a = gs_memory_alloc(run->mem, req);
	}
}

gboolean
gs_run_falls_to_disk(const GsRunTiers *run, const GsMemBuf *b)
{
	return b->tier == GS_TIER_GPU && run->w->policy.spill.host_full == GS_HOST_FULL_DISK;
}

/* Whether @task's allocations of @kind draw on a fair share. */
static gboolean
shared(const GsRunTiers *run, const GsRunTask *task, GsAllocKind kind)
{
	return run->fair != NULL && task != NULL && kind == GS_KIND_GPU;
}

gboolean
gs_run_fair_share_take(GsRunTiers *run, const GsRunTask *task, GsAllocKind kind, gint64 bytes)
{
	return !shared(run, task, kind) ||
	       gs_execution_pool_acquire_all(run->fair, task->engine_id, bytes);
}

void
gs_run_fair_share_give(GsRunTiers *run, const GsRunTask *task, GsAllocKind kind, gint64 bytes)
{
	if (shared(run, task, kind))
		gs_execution_pool_release(run->fair, task->engine_id, bytes);
}

/* Threads of @task in line for execution memory leave it: their task has none any more. */
static void
drop_waiters_of(GsRunTiers *run, const GsRunTask *task)
{
	GList *next;

	for (GList *l = run->waiters.head; l != NULL; l = next) {
		GsRunThreadTiers *mine = run->hooks->tiers_of(run->driver, l->data);

		next = l->next;
		if (gs_op_kind_is_execution(mine->waiting->kind) && mine->task == task) {
			mine->waiting = NULL;
			g_queue_delete_link(&run->waiters, l);
		}
	}
}

void
gs_run_tiers_task_ends(GsRunTiers *run, GsRunTask *task)
{
	drop_waiters_of(run, task);
	if (run->fair != NULL)
		gs_execution_pool_release_all(run->fair, task->engine_id);
	if (gs_run_execution_task_ends(run->execution, task))
		gs_run_reserve_retry(run);
}

/* ---- the proactive downgrade ---- */

static void
log_downgrade(GsRunTiers *run, guint device, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_DOWNGRADE, .device = device, .what = what, .tier = GS_TIER_GPU,
			.bytes = gs_space_account_charged(gs_memory_gpu_account(run->mem, device))};

	run->hooks->log(run->driver, &e);
}

gboolean
gs_run_downgrade_on(GsRunTiers *run, guint device, gboolean *on)
{
	switch (gs_memory_downgrade_step(run->mem, device, on)) {
	case GS_DOWNGRADE_START:
		log_downgrade(run, device, "start");
		break;
	case GS_DOWNGRADE_STOP:
		log_downgrade(run, device, "stop");
		break;
	case GS_DOWNGRADE_NONE:
	case GS_DOWNGRADE_CONTINUE:
	case GS_N_DOWNGRADE_DECISIONS:
		break;
	}
	return *on;
}
