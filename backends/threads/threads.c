/*
 * gpusim: the real-thread driver: a run (see threads.h for what it decides,
 * driver.h for its records and its parts): tasks and their threads, the
 * effects a thread carries out, the loop, the samples and the watchdog.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "backends/threads/driver.h"

/* ---- the run layer's hooks: what the engine tells the run (under lock) ---- */

/* A record in any state but RUNNING keeps the fast path off. */
static gboolean
is_contended(GsThreadState s)
{
	return s != GS_THREAD_RUNNING && s != GS_THREAD_UNKNOWN;
}

static const char *
thread_name(gpointer data, GsThreadId id)
{
	Worker *t = thread_of(data, id);

	return t != NULL ? t->result->name : NULL;
}

static const char *
thread_moved(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to)
{
	Threads *r = data;
	Worker *t = thread_of(r, id);

	/* Sequentially consistent: the fast path's half of the no-lost-wake-up argument. */
	atomic_fetch_add(&r->contended, is_contended(to) - is_contended(from));
	if (t == NULL)
		return NULL;
	atomic_store(&t->engine_state, to);
	atomic_fetch_or(&t->reached, 1u << to);
	return t->result->name;
}

/* Under lock: the run layer's entries go to the shared log. */
static void
run_log(gpointer data, GsLogEntry *entry)
{
	threads_log_locked(data, entry);
}

/* The interpreter tells its own thread of exceptions: no lock needed. */
static void
on_exception(const GsSeenException *x, gpointer data)
{
	Worker *t = data;
	GsLogEntry e = gs_run_throw_entry(t->result->name, x);

	threads_log_to(t->r, t->log, &e);
}

/* Values, like exceptions, are the thread's own. */
static void
on_value(guint name, gint64 value, const char *what, gpointer data)
{
	Worker *t = data;
	GsLogEntry e = gs_run_value_entry(t->result->name, t->spec, name, value, what);

	threads_log_to(t->r, t->log, &e);
}

/* The interpreter's hooks get the thread; the engine lock is the run's. */
static void
thread_enter(gpointer data)
{
	threads_engine_lock(((Worker *) data)->r);
}

static void
thread_leave(gpointer data)
{
	threads_engine_unlock(((Worker *) data)->r);
}

static const GsInterpHooks fast_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.enter = thread_enter,
	.leave = thread_leave,
	.fast_alloc = threads_fast_alloc,
	.fast_free = threads_fast_free,
	.on_value = on_value,
};

static const GsInterpHooks global_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.enter = thread_enter,
	.leave = thread_leave,
	.on_value = on_value,
};

static const GsInterpHooks tiered_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.enter = thread_enter,
	.leave = thread_leave,
	.on_block = threads_on_block,
	.on_value = on_value,
};

/* ---- effects ---- */

static void
do_alloc(Worker *t, const GsEffect *e)
{
	guint64 handle = 0;
	gint64 usage;
	gboolean ok;

	if (t->r->mem != NULL) {
		threads_tiered_alloc(t, e);
		return;
	}
	threads_interp_lock(t);
	ok = threads_take_memory(t, e, &handle, &usage);
	if (ok)
		threads_log_granted(t, e, NULL, FALSE);
	else
		threads_log_refused(t, e, usage, GS_REFUSED_NO_ROOM);
	atomic_fetch_add_explicit(&t->r->locked_allocs, 1, memory_order_relaxed);
	gs_interp_alloc_done(t->interp, ok, handle, now(t->r));
	threads_interp_unlock(t);
}

/*
 * A buffer goes back: its own, or one another thread allocated and gave
 * away (threads_free_for()), which leaves the owner's list and names the
 * owner in the log. Either way the freeing thread's footprint goes down, as
 * SparkResourceAdaptor's deallocation counts it.
 */
static void
do_free(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	Held *held = GSIZE_TO_POINTER(e->handle);
	Worker *owner = held->owner != NULL ? held->owner : t;
	GsLogEntry le = {.kind = GS_LOG_FREE, .thread = t->result->name, .bytes = e->size,
			 .tier = e->alloc_kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU,
			 .buf = owner->spec->buffers->pdata[e->buf],
			 .owner = owner != t ? owner->result->name : NULL};

	if (e->at_end)
		t->leaking += e->size;
	if (e->alloc_kind == GS_KIND_GPU)
		t->footprint -= e->size;
	if (r->mem != NULL) {
		le.tier = threads_tiered_free(t, held, &le.pool);
	} else {
		threads_space_give(held->space, held->charged);
		threads_interp_lock(owner);
		g_ptr_array_remove_fast(owner->live, held);
		threads_interp_unlock(owner);
		/* Out of the owner's list first: no compute of its may take it up after. */
		if (!threads_read_elsewhere(r, held)) {
			gs_backend_free(r->ops, r->bk, t->bk, held->space->tier, held->backend);
			g_free(held);
		}
	}
	atomic_fetch_add_explicit(&r->frees, 1, memory_order_relaxed);
	threads_log_to(r, t->log, &le);
}

/* One step of the thread's interpreter, which another thread may take buffers from meanwhile. */
static GsEffect
step(Worker *t)
{
	GsEffect e;

	threads_interp_lock(t);
	e = gs_interp_step(t->interp, now(t->r));
	threads_interp_unlock(t);
	return e;
}

/* Frees what an ending thread still holds, through its interpreter. */
static void
drain_frees(Worker *t)
{
	for (GsEffect e = step(t); e.kind == GS_EFFECT_FREE; e = step(t))
		do_free(t, &e);
}

/*
 * The real time a compute until scenario time @until keeps the device busy:
 * none on the virtual clock, where the buffers are touched but the time is
 * the clock's; on the real clock no further than --max-time, since a stopped
 * thread waits for its device work to end.
 */
static GsTime
device_work(Threads *r, GsTime until)
{
	GsTime now_ = now(r);

	if (r->virtual_clock)
		return 0;
	if (r->opts.max_time > 0)
		until = MIN(until, MAX(r->opts.max_time, now_));
	return gs_time_from_double((double) (until - now_) * r->scale);
}

/*
 * The handles of the buffers named @names a compute of @t reads; where
 * threads free each other's buffers, they are read (threads_reading_begin())
 * under both locks, so that none goes meanwhile.
 */
static void
live_read(Worker *t, const GsNames *names, GArray *handles)
{
	Threads *r = t->r;

	if (!r->frees_across) {
		threads_live_listed(t, names, NULL, handles);
		return;
	}
	threads_interp_lock(t);
	pthread_mutex_lock(&r->lock);
	threads_live_listed(t, names, NULL, handles);
	threads_reading_begin(t, names);
	threads_engine_unlock(r);
	threads_interp_unlock(t);
}

/* Keeps the device busy for @e's time, reading the buffers it uses; FALSE when stopped. */
static gboolean
do_compute(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	g_autoptr(GArray) uses = g_array_new(FALSE, FALSE, sizeof(guint64));
	GsTime until;
	gboolean ok;

	if (r->mem != NULL && !threads_tiered_compute_begin(t, e, uses))
		return TRUE; /* its spilled buffers are asked for first */
	until = gs_time_add(now(r), e->time); /* touching the buffers is part of the time */
	/* The interpreter names buffers; the backend wants the live handles of those names. */
	if (r->mem == NULL && e->op != NULL)
		live_read(t, &e->op->compute.uses, uses);
	gs_backend_compute_begin(r->ops, r->bk, t->bk, device_work(r, until),
				 (const guint64 *) uses->data, uses->len);
	ok = threads_wait_until(t, until);
	gs_backend_compute_end(r->ops, r->bk, t->bk);
	ok = threads_device_works(r) && ok;
	if (r->frees_across) {
		pthread_mutex_lock(&r->lock);
		threads_reading_end(t);
		threads_engine_unlock(r);
	}
	if (r->mem != NULL)
		threads_tiered_compute_end(t);
	return ok;
}

/* ---- association ops: pool, associate, dissociate (under lock) ---- */

static void
do_association(Worker *t, const GsOp *op)
{
	Threads *r = t->r;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
	GsException thrown;

	pthread_mutex_lock(&r->lock);
	for (guint i = 0; i < op->pool.tasks->len; i++) {
		guint spec_index = g_array_index(op->pool.tasks, guint, i);

		for (guint k = 0; k < r->tasks->len; k++) {
			Task *task = r->tasks->pdata[k];

			if (task->run.spec_index == spec_index && task->run.status != GS_RUN_TASK_ENDED)
				g_array_append_val(ids, task->run.engine_id);
		}
	}
	thrown = gs_run_associate(r->engine, t->id, t->spec->shuffle, op, (GsTaskId *) ids->data,
				  ids->len, now(r));
	threads_engine_unlock(r);
	if (thrown != GS_EXC_NONE)
		threads_op_failed(t, thrown);
}

/* ---- tasks (under lock) ---- */

static void
task_free(gpointer data)
{
	Task *task = data;

	g_ptr_array_unref(task->threads);
	if (task->pages != NULL)
		gs_page_table_free(task->pages);
	gs_run_task_memory_free(&task->run);
	g_free(task);
}

static void
collect_metrics(Threads *r, Task *task)
{
	gint64 footprint = 0;
	GsMetrics m;

	gs_engine_task_metrics(r->engine, task->run.engine_id, now(r), &m);
	/*
	 * The engine sees only the allocations that went through it; each
	 * thread counted its own, so the footprint is summed from those (the
	 * engine's roll-up also sums its threads' footprints).
	 */
	for (guint i = 0; i < task->threads->len; i++)
		footprint += atomic_load_explicit(
			&((Worker *) task->threads->pdata[i])->max_footprint, memory_order_relaxed);
	gs_result_add_task_metrics(task->run.result, &m, footprint);
	gs_engine_forget_task_metrics(r->engine, task->run.engine_id);
}

/*
 * The last thread of an ended task has exited: its metrics are final, its
 * slot and permit go to the next, and a failed attempt may go again.
 */
static void
finish_task(Threads *r, Task *task)
{
	collect_metrics(r, task);
	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		t->result->final_state = gs_engine_thread_state(r->engine, t->id);
	}
	if (gs_run_tasks_finish(&r->run, &task->run, task->failed, task->failure)) {
		r->end_time = now(r);
		pthread_cond_broadcast(&r->done_cond);
	}
}

/* The task ends now: the engine removes it, its other threads are told to stop. */
static void
end_task(Threads *r, Task *task, gboolean failed, GsException failure)
{
	gs_run_tiers_task_ends(&r->tier_ops, &task->run);
	task->failed = failed;
	task->failure = failure;
	gs_run_tasks_end(&r->run, &task->run, failed);
}

/* Under lock: a thread of @t's task is gone; the task may end or finish with it. */
static void
thread_exited(Threads *r, Worker *t, gboolean ends_task, gboolean failed, GsException failure)
{
	Task *task = t->task;

	if (task == NULL)
		return;
	task->run.alive--;
	if (r->ended)
		return;
	if (task->run.status == GS_RUN_TASK_RUNNING && (ends_task || task->run.alive == 0))
		end_task(r, task, failed, failure);
	if (task->run.status == GS_RUN_TASK_ENDED && task->run.alive == 0)
		finish_task(r, task);
}

/* ---- one simulated thread ---- */

/* An inject op: a thread that holds one must always meet the engine, which decides injection. */
static gboolean
is_inject(const GsOp *op)
{
	return op->kind == GS_OP_INJECT;
}

/* Carries out one effect; FALSE when the thread ends (or was stopped). */
static gboolean
carry_out(Worker *t, const GsEffect *e, gboolean *ends_task, gboolean *failed,
	  GsException *failure)
{
	Threads *r = t->r;

	t->parked_last = FALSE;
	switch (e->kind) {
	case GS_EFFECT_PERMIT:
		if (!threads_take_permit(t))
			return FALSE;
		threads_interp_lock(t);
		gs_interp_permit_granted(t->interp);
		threads_interp_unlock(t);
		return TRUE;
	case GS_EFFECT_ALLOC:
		/* On the virtual clock an allocation attempt lasts links.alloc_latency. */
		if (r->virtual_clock && !threads_wait_until(t, gs_time_add(now(r), r->w->links.alloc_latency)))
			return FALSE;
		do_alloc(t, e);
		return TRUE;
	case GS_EFFECT_FREE:
		do_free(t, e);
		return TRUE;
	case GS_EFFECT_COMPUTE:
		return do_compute(t, e);
	case GS_EFFECT_SLEEP: {
		gboolean ok;

		atomic_store(&t->status, GS_RUN_SLEEPING); /* active either way: no lock needed */
		ok = threads_wait_until(t, gs_time_add(now(r), e->time));
		atomic_store(&t->status, GS_RUN_READY);
		return ok;
	}
	case GS_EFFECT_UNTIL:
		return threads_wait_until(t, e->time);
	case GS_EFFECT_OP:
		if (e->op->kind == GS_OP_FREE)
			return threads_free_for(t, e->op);
		if (gs_run_is_association(e->op))
			do_association(t, e->op);
		else if (r->mem != NULL)
			threads_tiered_op(t, e->op);
		return TRUE;
	case GS_EFFECT_WAIT:
		t->parked_last = TRUE;
		return threads_park(t);
	case GS_EFFECT_TASK_DONE:
		*ends_task = TRUE;
		return FALSE;
	case GS_EFFECT_DONE:
		return FALSE;
	case GS_EFFECT_FAILED:
		*ends_task = TRUE;
		*failed = TRUE;
		*failure = e->exception;
		return FALSE;
	}
	return FALSE;
}

/*
 * A stopped thread gives back what it holds. One parked in the engine first
 * steps into its removal (it throws ThreadRemoved).
 */
static void
unwind(Worker *t)
{
	if (t->parked_last)
		drain_frees(t);
	threads_interp_lock(t);
	gs_interp_abort(t->interp, now(t->r));
	threads_interp_unlock(t);
	drain_frees(t);
}

/*
 * Under lock. Spark's leak report: what a thread that completed left
 * allocated (the interpreter handed it back as the thread ended) is a leak
 * of its task. A failed thread's leftovers are not, nor are those of a
 * thread stopped because its task ended: Spark reports leaks only for tasks
 * that did not throw.
 */
static void
report_leak(Threads *r, Worker *t, gboolean failed)
{
	if (!failed && t->task != NULL)
		gs_run_tasks_report_leak(&r->run, &t->task->run, t->result->name, t->leaking);
	t->leaking = 0;
}

static gpointer
thread_main(gpointer data)
{
	Worker *t = data;
	Threads *r = t->r;
	gboolean ends_task = FALSE, failed = FALSE, stopped;
	GsException failure = GS_EXC_NONE;

	t->bk = gs_backend_thread_begin(r->ops, r->bk);
	count_event(r); /* its start */
	for (;;) {
		GsEffect e;

		if (atomic_load(&t->stop))
			break;
		e = step(t);
		if (!carry_out(t, &e, &ends_task, &failed, &failure))
			break;
	}
	threads_interp_lock(t);
	stopped = atomic_load(&t->stop) && !ends_task && !failed && !gs_interp_finished(t->interp);
	threads_interp_unlock(t);
	if (stopped)
		unwind(t);
	gs_backend_thread_end(r->ops, r->bk, t->bk);
	pthread_mutex_lock(&r->lock);
	if (r->mem != NULL)
		threads_tiers_thread_ends(t);
	if (!stopped)
		report_leak(r, t, failed);
	threads_set_status(r, t, GS_RUN_DONE);
	if (r->frees_across)
		threads_owner_moved(r, t); /* nothing more will come from it */
	thread_exited(r, t, ends_task, failed, failure);
	threads_engine_unlock(r);
	return NULL;
}

/* A run with tiers goes through the model under the mutex; otherwise as --locking says. */
static const GsInterpHooks *
hooks_for(const Threads *r)
{
	if (r->mem != NULL)
		return &tiered_hooks;
	/* The fast path allocates at once: the virtual clock makes every attempt last its latency. */
	if (r->virtual_clock && r->w->links.alloc_latency > 0)
		return &global_hooks;
	return r->opts.locking == GS_LOCKING_FAST ? &fast_hooks : &global_hooks;
}

/* Under lock. */
static Worker *
thread_new(Threads *r, const GsThreadSpec *spec, Task *task, const char *name)
{
	Worker *t = g_new0(Worker, 1);

	t->r = r;
	t->id = r->next_thread++;
	t->spec = spec;
	t->task = task;
	atomic_init(&t->status, GS_RUN_DONE);
	atomic_init(&t->engine_state, GS_THREAD_UNKNOWN);
	threads_set_status(r, t, GS_RUN_READY);
	threads_cond_init(&t->cond);
	pthread_mutex_init(&t->sleep_lock, NULL);
	threads_cond_init(&t->sleep_cond);
	t->fast_ok = !threads_ops_any(spec->ops, is_inject);
	t->log = g_array_new(FALSE, FALSE, sizeof(LogItem));
	t->live = g_ptr_array_new();
	t->reading = g_ptr_array_new();
	pthread_mutex_init(&t->interp_lock, NULL);
	t->result = gs_result_add_thread(r->res, name, task != NULL ? task->run.result : NULL);
	g_ptr_array_add(r->threads, t);
	if (r->frees_across)
		g_hash_table_insert(r->by_name, (gpointer) t->result->name, t);
	if (task != NULL)
		gs_engine_register_dedicated(r->engine, t->id, task->run.engine_id, now(r));
	t->interp = gs_interp_new(r->engine, spec, t->id, r->w->policy.oom);
	gs_interp_require_permit(t->interp, task != NULL && gs_run_tasks_use_permits(&r->run));
	gs_interp_set_hooks(t->interp, hooks_for(r), t);
	return t;
}

static void
thread_spawn(Worker *t)
{
	int err = pthread_create(&t->os, NULL, thread_main, t);

	if (err != 0)
		g_error("cannot start a thread for %s: %s", t->result->name, g_strerror(err));
}

static void
thread_free(gpointer data)
{
	Worker *t = data;

	gs_interp_free(t->interp);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->sleep_lock);
	pthread_cond_destroy(&t->sleep_cond);
	g_array_unref(t->log);
	g_ptr_array_unref(t->live);
	g_ptr_array_unref(t->reading);
	pthread_mutex_destroy(&t->interp_lock);
	if (t->allocated != NULL)
		g_array_unref(t->allocated);
	threads_tiers_free(t->tiers);
	g_free(t);
}

/* ---- the run layer's hooks: tasks (under lock) ---- */

static GsRunTask *
task_new(gpointer data)
{
	Threads *r = data;
	Task *task = g_new0(Task, 1);

	task->threads = g_ptr_array_new();
	g_ptr_array_add(r->tasks, task);
	return &task->run;
}

static void
task_arrives(gpointer data, GsRunTask *task, GsTime at)
{
	((Task *) task)->arrival = at;
}

static void
start_threads(gpointer data, GsRunTask *run)
{
	Threads *r = data;
	Task *task = (Task *) run;

	for (guint i = 0; i < run->spec->threads->len; i++) {
		const GsThreadSpec *spec = run->spec->threads->pdata[i];
		g_autofree char *name = gs_task_thread_name(run->spec, run->result->id, spec);

		g_ptr_array_add(task->threads, thread_new(r, spec, task, name));
		task->run.alive++;
	}
	if (task->run.alive == 0) {
		end_task(r, task, FALSE, GS_EXC_NONE);
		finish_task(r, task);
		return;
	}
	/* Registered all before any runs: a task's threads start in one instant. */
	for (guint i = 0; i < task->threads->len; i++)
		thread_spawn(task->threads->pdata[i]);
}

static void
stop_threads(gpointer data, GsRunTask *run)
{
	Task *task = (Task *) run;

	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		if (atomic_load(&t->status) != GS_RUN_DONE)
			threads_stop_thread(t);
	}
}

static void
permit_granted(gpointer data, GsRunTask *run)
{
	Threads *r = data;
	Task *task = (Task *) run;

	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		if (atomic_load(&t->status) == GS_RUN_SEMAPHORE) {
			r->res->totals.semaphore_wait_ns += now(r) - t->semaphore_since;
			threads_set_status(r, t, GS_RUN_READY);
			pthread_cond_signal(&t->cond);
		}
	}
}

/* Waits in progress count as blocked time. */
static void
cut_short(gpointer data, GsRunTask *run)
{
	Threads *r = data;
	Task *task = (Task *) run;

	collect_metrics(r, task);
	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		if (atomic_load(&t->status) == GS_RUN_PARKED)
			run->result->blocked_ns += now(r) - t->parked_since;
	}
}

static GsTime
threads_now(gpointer data)
{
	return now(data);
}

static int
compare_arrivals(gconstpointer a, gconstpointer b)
{
	const Task *x = *(Task *const *) a, *y = *(Task *const *) b;

	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	return x->run.engine_id < y->run.engine_id ? -1 : x->run.engine_id > y->run.engine_id;
}

/* ---- samples, the watchdog, the end of a run (under lock) ---- */

static gint64
tier_used(Threads *r, GsTier tier)
{
	gint64 used = 0;

	if (r->mem != NULL)
		return gs_memory_used(r->mem, tier);
	if (tier == GS_TIER_HOST)
		return atomic_load(&r->host.used);
	if (tier == GS_TIER_DISK)
		return 0;
	for (guint i = 0; i < r->n_gpus; i++)
		used += atomic_load(&r->gpus[i].used);
	return used;
}

/* What a sample holds, but its time. */
static void
sample_values(Threads *r, GsSample *x)
{
	guint live = gs_run_members_len(&r->live);

	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		x->used[tier] = tier_used(r, tier);
		x->charged[tier] = r->mem != NULL ? gs_memory_charged(r->mem, tier) : x->used[tier];
	}
	x->blocked = gs_engine_n_in_state(r->engine, GS_THREAD_BLOCKED);
	x->bufn = gs_engine_n_in_state(r->engine, GS_THREAD_BUFN);
	x->running = live - MIN(live, x->blocked + x->bufn);
}

static const GsSample *
last_sample(const Threads *r)
{
	GArray *timeline = r->res->timeline;

	return timeline->len > 0 ? &g_array_index(timeline, GsSample, timeline->len - 1) : NULL;
}

/* The integral of use runs over the stretch since the last sample, at the last sample's values. */
static void
add_sample(Threads *r, const GsSample *x)
{
	const GsSample *last = last_sample(r);

	for (int tier = 0; last != NULL && tier < GS_N_TIERS; tier++)
		r->used_integral[tier] += (double) last->used[tier] * (double) (x->time - r->last_sample);
	r->last_sample = x->time;
	g_array_append_val(r->res->timeline, *x);
}

static void
sample(Threads *r)
{
	GsSample x = {.time = now(r)};

	sample_values(r, &x);
	add_sample(r, &x);
}

static void
watchdog(Threads *r)
{
	g_autoptr(GArray) outside = g_array_new(FALSE, FALSE, sizeof(GsThreadId));

	count_event(r);
	/* The engine takes them as a set. */
	for (guint i = 0; i < gs_run_members_len(&r->live); i++) {
		Worker *t = gs_run_members_at(&r->live, i);
		Status s = atomic_load(&t->status);

		if (gs_run_waits_outside(s, &r->w->policy))
			g_array_append_val(outside, t->id);
	}
	gs_engine_check_deadlocks(r->engine, (GsThreadId *) outside->data, outside->len, now(r));
	threads_drain_wakes(r);
}

/* Every live thread waits in the engine or for a permit, and no task is still to come. */
static gboolean
hopeless(Threads *r, gboolean all_arrived)
{
	return r->active == 0 && all_arrived && r->run.open > 0;
}

/*
 * Where the threads not in an ended task stand, taken under lock before they
 * unwind (so that no free made on the way out changes it).
 */
static void
snapshot_threads(Threads *r, gboolean deadlock)
{
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];
		Status s = atomic_load(&t->status);

		if (t->task != NULL && t->task->run.status == GS_RUN_TASK_ENDED)
			continue;
		t->result->final_state = gs_engine_thread_state(r->engine, t->id);
		t->result->waiting_at_end =
			deadlock && gs_run_waits_on_another(s);
	}
}

/* Ends the run where it stands: every thread is told to stop. */
static void
cut(Threads *r, GsOutcome outcome)
{
	r->res->outcome = outcome;
	if (outcome == GS_OUTCOME_DEADLOCK)
		r->res->totals.deadlocks_unresolved = 1;
	r->end_time = outcome == GS_OUTCOME_TIMEOUT ? r->opts.max_time : now(r);
	sample(r); /* what the run held where it stopped, before the threads unwind */
	snapshot_threads(r, outcome == GS_OUTCOME_DEADLOCK);
	for (guint i = 0; i < r->tasks->len; i++)
		gs_run_tasks_cut_short(&r->run, r->tasks->pdata[i], r->end_time);
	r->ended = TRUE;
	for (guint i = 0; i < r->threads->len; i++)
		threads_stop_thread(r->threads->pdata[i]);
	threads_copies_changed(r); /* those waiting on the gate, too */
	pthread_cond_broadcast(&r->done_cond);
}

/*
 * Without the lock, after a backend call that did not succeed and after a
 * compute: a device that failed is no OOM, and the run ends with its error
 * (gs_threads_run returns it). FALSE then.
 */
gboolean
threads_device_works(Threads *r)
{
	GError *error = NULL;

	if (gs_backend_healthy(r->ops, r->bk, &error))
		return TRUE;
	pthread_mutex_lock(&r->lock);
	if (r->device_error == NULL && !r->ended) {
		r->device_error = g_steal_pointer(&error);
		cut(r, GS_OUTCOME_FAILED);
	}
	pthread_mutex_unlock(&r->lock);
	g_clear_error(&error);
	return FALSE;
}

/* Virtual clock, under lock: the earliest scenario time a thread waits for (G_MAXINT64: none). */
static GsTime
earliest_deadline(Threads *r)
{
	GsTime earliest = G_MAXINT64;

	/* Only a live thread waits for a time. */
	for (guint i = 0; i < gs_run_members_len(&r->live); i++) {
		const TimedWait *w = &((Worker *) gs_run_members_at(&r->live, i))->timed;

		if (w->on)
			earliest = MIN(earliest, w->deadline);
	}
	for (guint d = 0; r->downgrading != NULL && d < r->downgrading->len; d++) {
		if (r->downgraders[d].timed.on)
			earliest = MIN(earliest, r->downgraders[d].timed.deadline);
	}
	return earliest;
}

/* Virtual clock, under lock: ends @w if its time has come; TRUE if it did. */
static gboolean
timed_wait_due(Threads *r, TimedWait *w)
{
	if (!w->on || w->deadline > now(r))
		return FALSE;
	w->on = FALSE;
	r->idle--;
	return TRUE;
}

/* Virtual clock, under lock: the clock moves to @time, and what waits for it goes on. */
static void
advance_clock(Threads *r, GsTime time)
{
	gboolean downgrader_due = FALSE;

	atomic_store(&r->clock, MAX(time, now(r)));
	for (guint i = 0; i < gs_run_members_len(&r->live); i++) {
		Worker *t = gs_run_members_at(&r->live, i);

		if (timed_wait_due(r, &t->timed))
			pthread_cond_signal(&t->cond);
	}
	for (guint d = 0; r->downgrading != NULL && d < r->downgrading->len; d++)
		downgrader_due |= timed_wait_due(r, &r->downgraders[d].timed);
	if (downgrader_due)
		pthread_cond_broadcast(&r->downgrade_cond);
}

/* Virtual clock, under lock: waits until nothing is left to happen at this instant. */
static void
wait_quiet(Threads *r)
{
	while (!quiet(r) && !r->ended)
		pthread_cond_wait(&r->done_cond, &r->lock);
}

/*
 * The loop's sample. On the virtual clock, only when something changed since
 * the last one, since an instant may pass the loop more than once and a long
 * idle stretch passes it at every watchdog tick.
 */
static void
sample_if_changed(Threads *r)
{
	const GsSample *last = last_sample(r);
	GsSample x = {.time = now(r)};

	sample_values(r, &x);
	if (r->virtual_clock && last != NULL && memcmp(x.used, last->used, sizeof x.used) == 0 &&
	    memcmp(x.charged, last->charged, sizeof x.charged) == 0 && x.blocked == last->blocked &&
	    x.bufn == last->bufn && x.running == last->running)
		return;
	add_sample(r, &x);
}

/*
 * The driver's own loop, on the calling thread: admits tasks as their start
 * times come, samples, runs the watchdog every policy.watchdog, and ends the
 * run when every task is over, at --max-time, or when every thread waits and
 * even the watchdog's tick changed nothing. On the
 * real clock it wakes every tick of real time; on the virtual clock it waits
 * until the instant is quiet, then moves the clock to what comes next.
 */
/* Under lock: tells the listener how far the run is. */
static void
tell_progress(Threads *r)
{
	GsRunProgress p;

	if (r->opts.progress == NULL)
		return;
	p = (GsRunProgress){.now = now(r), .tasks = r->res->totals.tasks,
			    .tasks_done = r->res->totals.tasks - MIN(r->run.open, r->res->totals.tasks),
			    .events = atomic_load(&r->events)};
	r->opts.progress(&p, r->opts.progress_data);
}

static void
run_loop(Threads *r)
{
	g_autoptr(GPtrArray) arrivals = g_ptr_array_new(); /* borrows r->tasks' entries */
	const GsTime tick = 1000000; /* 1 ms of scenario time between samples */
	GsTime next_watchdog = r->w->policy.watchdog;
	guint arrived = 0;
	gboolean watched_hopeless = FALSE; /* the watchdog ticked while every thread waited */

	pthread_mutex_lock(&r->lock);
	for (guint i = 0; i < r->tasks->len; i++)
		g_ptr_array_add(arrivals, r->tasks->pdata[i]);
	g_ptr_array_sort(arrivals, compare_arrivals);
	while (r->run.open > 0 && !r->ended) {
		GsTime t, wake;
		gboolean stuck;

		t = now(r);
		wake = r->virtual_clock ? G_MAXINT64 : t + tick;
		while (arrived < arrivals->len && ((Task *) arrivals->pdata[arrived])->arrival <= t) {
			count_event(r);
			gs_run_tasks_admit(&r->run, arrivals->pdata[arrived++]);
		}
		if (r->virtual_clock)
			wait_quiet(r);
		if (r->run.open == 0 || r->ended)
			break;
		if (arrived < arrivals->len)
			wake = MIN(wake, ((Task *) arrivals->pdata[arrived])->arrival);
		if (r->opts.max_time > 0 && t >= r->opts.max_time) {
			cut(r, GS_OUTCOME_TIMEOUT);
			break;
		}
		stuck = hopeless(r, arrived == arrivals->len);
		/* Only the retry policy's watchdog can break a deadlock, and it had its tick. */
		if (stuck && (r->w->policy.oom != GS_OOM_RETRY || r->w->policy.watchdog <= 0 ||
			      watched_hopeless)) {
			cut(r, GS_OUTCOME_DEADLOCK);
			break;
		}
		watched_hopeless &= stuck;
		if (r->w->policy.watchdog > 0 && t >= next_watchdog) {
			watched_hopeless = stuck;
			watchdog(r);
			next_watchdog = gs_time_add(t, r->w->policy.watchdog);
			continue; /* what it woke acts at this instant first */
		}
		sample_if_changed(r);
		tell_progress(r);
		if (r->run.open == 0)
			break;
		if (r->w->policy.watchdog > 0)
			wake = MIN(wake, next_watchdog);
		if (r->opts.max_time > 0)
			wake = MIN(wake, r->opts.max_time);
		if (!r->virtual_clock) {
			threads_cond_wait_until(&r->done_cond, &r->lock, real_at(r, MAX(wake, t + 1)));
			continue;
		}
		wake = MIN(wake, earliest_deadline(r));
		if (wake == G_MAXINT64) { /* nothing waits for a time, and nothing is to come */
			cut(r, GS_OUTCOME_DEADLOCK);
			break;
		}
		advance_clock(r, wake);
	}
	if (!r->ended) {
		/* Pool threads still at work when the last task ends are cut short. */
		snapshot_threads(r, FALSE);
		r->ended = TRUE;
		for (guint i = 0; i < r->threads->len; i++)
			threads_stop_thread(r->threads->pdata[i]);
	}
	pthread_mutex_unlock(&r->lock);
}

/* ---- a run ---- */

/* What the real-thread driver does for the run layer (under lock). */
static const GsRunHooks run_hooks = {
	.now = threads_now,
	.log = run_log,
	.task_new = task_new,
	.arrives = task_arrives,
	.start_threads = start_threads,
	.stop_threads = stop_threads,
	.permit_granted = permit_granted,
	.cut_short = cut_short,
	.task_of = threads_task_of,
	.tiers_of = threads_tiers_of,
	.granted = threads_note_tier_peak,
	.released = threads_memory_came_free,
	.wake = threads_reservation_wakes,
	.buffers = threads_buffers_listed,
	.thread_name = thread_name,
	.thread_moved = thread_moved,
};

static void
spaces_init(Threads *r)
{
	const GsWorkload *w = r->w;

	r->n_gpus = MAX(w->gpu.devices, 1);
	/* Cache-line aligned, so that two spaces' counters never share a line. */
	if (posix_memalign((void **) &r->gpus, _Alignof(Space), r->n_gpus * sizeof(Space)) != 0)
		g_error("out of memory for %u GPU spaces", r->n_gpus);
	memset(r->gpus, 0, r->n_gpus * sizeof(Space));
	for (guint i = 0; i < r->n_gpus; i++) {
		r->gpus[i].capacity = w->gpu.capacity;
		r->gpus[i].alignment = MAX(w->gpu.alignment, 1);
		r->gpus[i].tier = GS_TIER_GPU;
		r->gpus[i].device = i;
	}
	r->host.capacity = w->host.capacity;
	r->host.alignment = 1;
	r->host.tier = GS_TIER_HOST;
}

static void
threads_init(Threads *r, const GsWorkload *w, const GsBackendOps *ops, const GsRunOptions *opts)
{
	GsEngineOpts engine_opts = gs_policy_engine_opts(&w->policy);

	memset(r, 0, sizeof *r);
	r->w = w;
	r->ops = ops;
	if (opts != NULL)
		r->opts = *opts;
	r->scale = r->opts.time_scale > 0 ? r->opts.time_scale : 1.0;
	r->virtual_clock = r->opts.clock == GS_CLOCK_VIRTUAL;
	r->res = gs_result_new();
	r->res->seed = w->seed;
	r->engine = gs_engine_new(&engine_opts);
	gs_run_watch(&r->watch, r->engine, r->res, &run_hooks, r);
	pthread_mutex_init(&r->lock, NULL);
	threads_cond_init(&r->done_cond);
	spaces_init(r);
	r->tasks = g_ptr_array_new_with_free_func(task_free);
	r->threads = g_ptr_array_new_with_free_func(thread_free);
	gs_run_members_init(&r->live, G_STRUCT_OFFSET(Worker, live_at));
	gs_run_tasks_init(&r->run, w, r->res, r->engine, &run_hooks, r);
	r->next_thread = 1;
	r->log = g_array_new(FALSE, FALSE, sizeof(LogItem));
	r->res->tiers[GS_TIER_GPU].capacity = w->gpu.capacity * r->n_gpus;
	r->res->tiers[GS_TIER_HOST].capacity = w->host.capacity + w->host.pinned;
	r->res->tiers[GS_TIER_DISK].capacity = w->disk.capacity;
	if (threads_tiers_needed(w)) {
		r->mem = gs_memory_new(w);
		r->moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	}
	gs_run_tiers_init(&r->tier_ops, w, r->mem, &run_hooks, r);
	gs_run_tiers_report_to(&r->tier_ops, r->res);
	threads_cond_init(&r->copies_cond);
	r->frees_across = gs_workload_frees_across_threads(w);
	if (r->frees_across) {
		r->by_name = g_hash_table_new(g_str_hash, g_str_equal);
		r->owner_waiters = g_ptr_array_new();
	}
}

/* What crossed the links, and whether every copy arrived whole (the model's tags, the backend's patterns). */
static void
threads_finish(Threads *r)
{
	GsResult *res = r->res;
	gint64 peak_gpu = 0;

	/* Every thread has been joined: what they own can be read now. */
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];

		t->result->reached = atomic_load(&t->reached);
		t->result->exceptions = g_array_copy((GArray *) gs_interp_exceptions(t->interp));
	}
	if (r->res->outcome != GS_OUTCOME_DEADLOCK && r->res->outcome != GS_OUTCOME_TIMEOUT)
		sample(r); /* a run cut short was sampled where it stopped */
	res->makespan_ns = r->end_time;
	if (r->mem != NULL) {
		gs_result_note_traffic(res, gs_memory_traffic(r->mem), r->corrupt_moves);
	} else {
		for (guint i = 0; i < r->n_gpus; i++)
			peak_gpu += atomic_load(&r->gpus[i].peak);
		res->tiers[GS_TIER_GPU].peak_used = peak_gpu;
		res->tiers[GS_TIER_HOST].peak_used = atomic_load(&r->host.peak);
		for (int tier = 0; tier < GS_N_TIERS; tier++)
			res->tiers[tier].peak_charged = res->tiers[tier].peak_used;
	}
	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		res->tiers[tier].mean_used =
			r->last_sample > 0 ? (gint64) (r->used_integral[tier] / (double) r->last_sample)
					   : 0;
	}
	gs_run_tasks_settle_outcome(&r->run);
	threads_release_given_away(r);
	gs_result_sum_tasks(res);
	res->events_processed = atomic_load(&r->events);
}

static void
threads_clear(Threads *r)
{
	g_clear_pointer(&r->by_name, g_hash_table_unref);
	g_clear_pointer(&r->owner_waiters, g_ptr_array_unref);
	g_ptr_array_unref(r->threads);
	gs_run_members_clear(&r->live);
	g_ptr_array_unref(r->tasks);
	gs_run_tasks_clear(&r->run);
	g_array_unref(r->log);
	gs_run_tiers_clear(&r->tier_ops);
	pthread_cond_destroy(&r->copies_cond);
	if (r->moves != NULL)
		g_array_unref(r->moves);
	gs_memory_free(r->mem);
	free(r->gpus);
	gs_engine_free(r->engine);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->done_cond);
	g_clear_error(&r->device_error);
}

GsResult *
gs_threads_run(const GsWorkload *w, const GsBackendOps *backend, const GsRunOptions *options,
	    GsThreadsStats *stats, GError **error)
{
	Threads r;
	GsResult *res;

	threads_init(&r, w, backend, options);
	r.bk = gs_backend_open(backend, w, error);
	if (r.bk == NULL) {
		gs_result_free(r.res);
		threads_clear(&r);
		return NULL;
	}
	gs_run_tasks_add_all(&r.run);
	r.t0 = g_get_monotonic_time();
	threads_downgrader_start(&r); /* before any thread that could wake it */
	pthread_mutex_lock(&r.lock);
	for (guint i = 0; i < w->pool_threads->len; i++) {
		const GsThreadSpec *spec = w->pool_threads->pdata[i];

		thread_spawn(thread_new(&r, spec, NULL, spec->name));
	}
	sample(&r);
	pthread_mutex_unlock(&r.lock);
	run_loop(&r);
	/* Threads are only ever added under lock, and none is added once the run ended. */
	for (guint i = 0; i < r.threads->len; i++)
		pthread_join(((Worker *) r.threads->pdata[i])->os, NULL);
	threads_downgrader_join(&r);
	threads_finish(&r);
	threads_flush_logs(&r);
	if (stats != NULL) {
		stats->fast_allocs = atomic_load(&r.fast_allocs);
		stats->locked_allocs = atomic_load(&r.locked_allocs);
		stats->fast_frees = atomic_load(&r.fast_frees);
		stats->locked_frees = atomic_load(&r.frees) - stats->fast_frees;
		gs_backend_stats(backend, r.bk, &stats->backend);
	}
	gs_backend_close(backend, r.bk);
	res = r.res;
	if (r.device_error != NULL) {
		/* What ran on a failed device says nothing: the failure is the answer. */
		g_propagate_error(error, g_steal_pointer(&r.device_error));
		g_clear_pointer(&res, gs_result_free);
	}
	threads_clear(&r);
	return res;
}

