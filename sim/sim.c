/*
 * gpusim: the discrete-event simulator (see sim.h for the loop and its
 * rules, driver.h for its records and its parts): the events, threads and
 * tasks, the watchdog and the end of a run.
 */
#include "config.h"

#include <string.h>

#include "sim/driver.h"

/* ---- logging ---- */

/* The run layer's log hook. */
void
sim_log_entry(gpointer data, GsLogEntry *entry)
{
	emit(data, entry);
}

/* What a thread in a status counts in (Sim.counted_as). */
enum {
	COUNTS_LIVE = 1 << 0,    /* live, and live_dedicated for a task's thread */
	COUNTS_WAITING = 1 << 1, /* waiting, for a task's thread */
	COUNTS_OUTSIDE = 1 << 2, /* outside */
};

static void
init_counted_as(Sim *s)
{
	for (Status status = 0; status <= GS_RUN_DONE; status++)
		s->counted_as[status] =
			(status != GS_RUN_DONE ? COUNTS_LIVE : 0) |
			(gs_run_waits_on_another(status) ? COUNTS_WAITING : 0) |
			(gs_run_waits_outside(status, &s->w->policy) ? COUNTS_OUTSIDE : 0);
}

/* 1 if @count is in @is and not in @was, -1 the other way round, else 0. */
static inline int
count_change(guint8 was, guint8 is, guint8 count)
{
	return ((is & count) != 0) - ((was & count) != 0);
}

/*
 * Every status change goes through here, so that the counts stay O(1) to
 * read. Most changes (ready, busy, ready again) move no thread in or out of
 * a count, and cost one look-up.
 */
void
sim_set_status(Sim *s, SimThread *t, Status status)
{
	guint8 was = s->counted_as[t->status], is = s->counted_as[status];

	t->status = status;
	if (was == is)
		return;
	if (t->task != NULL) {
		s->waiting += count_change(was, is, COUNTS_WAITING);
		s->live_dedicated += count_change(was, is, COUNTS_LIVE);
	}
	s->live += count_change(was, is, COUNTS_LIVE);
	/* The watchdog's tick costs what waits outside the allocator, not every thread. */
	if (count_change(was, is, COUNTS_OUTSIDE) != 0)
		gs_run_members_put(&s->outside, t, (is & COUNTS_OUTSIDE) != 0);
}

/* ---- the run layer's hooks: what the engine tells the run ---- */

static const char *
thread_name(gpointer data, GsThreadId id)
{
	SimThread *t = thread_of(data, id);

	return t != NULL ? t->result->name : NULL;
}

static const char *
thread_moved(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to)
{
	Sim *s = data;
	SimThread *t = thread_of(s, id);

	if (t == NULL)
		return NULL;
	t->result->reached |= 1u << to;
	s->changed = TRUE;
	return t->result->name;
}

/*
 * A thread could still make progress when it has work of its own that needs
 * nobody: it runs its ops, computes, sleeps or is in an allocation attempt
 * (READY, BUSY, SLEEPING), and the engine counts it neither waiting (BLOCKED,
 * BUFN) nor being thrown out (a *_THROW state or BUFN_WAIT). A thread that
 * waits on another, at the gate or done cannot.
 */
static gboolean
could_progress(Sim *s, const SimThread *t)
{
	GsThreadState state;

	if (t->status != GS_RUN_READY && t->status != GS_RUN_BUSY && t->status != GS_RUN_SLEEPING)
		return FALSE;
	state = gs_engine_thread_state(s->engine, t->id);
	return state == GS_THREAD_UNKNOWN || state == GS_THREAD_RUNNING ||
	       state == GS_THREAD_ALLOC || state == GS_THREAD_ALLOC_FREE;
}

static const char *
progressing(gpointer data, GsThreadId victim)
{
	Sim *s = data;

	if (!s->opts.check_busts)
		return NULL;
	for (guint i = 0; i < s->threads.len; i++) {
		const SimThread *t = table_get(&s->threads, i);

		if (t->id != victim && could_progress(s, t))
			return t->result->name;
	}
	return NULL;
}

static void
on_exception(const GsSeenException *x, gpointer data)
{
	SimThread *t = data;
	GsLogEntry e = gs_run_throw_entry(t->result->name, x);

	emit(t->sim, &e);
}

static void
on_value(guint name, gint64 value, const char *what, gpointer data)
{
	SimThread *t = data;
	GsLogEntry e = gs_run_value_entry(t->result->name, t->spec, name, value, what);

	emit(t->sim, &e);
}

/* ---- scheduling ---- */

guint64
sim_schedule(Sim *s, GsTime time, EventKind kind, guint target)
{
	if (kind != EV_WATCHDOG)
		s->pending_events++;
	return gs_heap_push(s->heap, time, kind, target);
}

void
sim_resume_at(Sim *s, SimThread *t, GsTime time, Status status)
{
	sim_set_status(s, t, status);
	t->resume_seq = sim_schedule(s, time, EV_THREAD_RESUME, t->id);
	t->next_read = t->interp != NULL ? gs_interp_next_read(t->interp) : NULL;
}

/* Resumes every parked thread the engine woke, in the order it woke them. */
static void
drain_wakes(Sim *s)
{
	GsThreadId id;

	while (gs_engine_pop_wake(s->engine, &id)) {
		SimThread *t = thread_of(s, id);

		if (t != NULL && t->status == GS_RUN_PARKED)
			sim_resume_at(s, t, s->now, GS_RUN_READY);
	}
}

/* ---- tiers ---- */

static gint64
tier_used(Sim *s, GsTier tier)
{
	return gs_memory_used(s->mem, tier);
}

static void
sample(Sim *s)
{
	GsSample x = {.time = s->now};
	GArray *timeline = s->r->timeline;

	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		/* Since the last sample the tier held what that sample saw. */
		s->used_integral[tier] +=
			(double) s->last.used[tier] * (double) (s->now - s->last.time);
		x.used[tier] = tier_used(s, tier);
		x.charged[tier] = gs_memory_charged(s->mem, tier);
		s->r->tiers[tier].peak_used = MAX(s->r->tiers[tier].peak_used, x.used[tier]);
		s->r->tiers[tier].peak_charged = MAX(s->r->tiers[tier].peak_charged, x.charged[tier]);
	}
	x.blocked = gs_engine_n_in_state(s->engine, GS_THREAD_BLOCKED);
	x.bufn = gs_engine_n_in_state(s->engine, GS_THREAD_BUFN);
	x.running = s->live - MIN(s->live, x.blocked + x.bufn);
	s->last = x;
	s->changed = FALSE;
	if (s->opts.skip_timeline)
		return;
	/* One sample per instant: a later change at the same time replaces it. */
	if (timeline->len > 0 && g_array_index(timeline, GsSample, timeline->len - 1).time == s->now)
		g_array_index(timeline, GsSample, timeline->len - 1) = x;
	else
		g_array_append_val(timeline, x);
}

/* ---- the GPU semaphore ---- */

/* TRUE if @t's task holds the GPU permit or takes it now; else the thread waits for it. */
static gboolean
take_permit(Sim *s, SimThread *t)
{
	if (t->task == NULL || gs_run_tasks_take_permit(&s->run, &t->task->run))
		return TRUE;
	sim_set_status(s, t, GS_RUN_SEMAPHORE);
	t->since = s->now;
	return FALSE;
}

/* ---- effects ---- */

/*
 * Peaks are taken at every allocation, not only at the end of an instant: a
 * buffer allocated and freed within one instant still held its bytes.
 */
void
sim_note_peak(Sim *s, GsTier tier)
{
	GsTierResult *r = &s->r->tiers[tier];

	r->peak_used = MAX(r->peak_used, tier_used(s, tier));
	r->peak_charged = MAX(r->peak_charged, gs_memory_charged(s->mem, tier));
	if (tier == GS_TIER_HOST)
		gs_run_note_host_pools(&s->tier_ops);
}


/*
 * An association op (pool, associate, dissociate) for the tasks named, that
 * is for the current attempt of each copy of each (copies of a repeated task
 * are separate tasks, and a pool thread serves all of them); what the engine
 * refuses, the op throws (gs_run_associate()).
 */
void
sim_do_association(Sim *s, SimThread *t, const GsOp *op)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
	GsException thrown;

	for (guint i = 0; i < op->pool.tasks->len; i++) {
		guint spec_index = g_array_index(op->pool.tasks, guint, i);

		for (guint k = 0; k < s->tasks.len; k++) {
			SimTask *task = table_get(&s->tasks, k);

			if (task->run.spec_index == spec_index && task->run.status != GS_RUN_TASK_ENDED)
				g_array_append_val(ids, task->run.engine_id);
		}
	}
	thrown = gs_run_associate(s->engine, t->id, t->spec->shuffle, op, (GsTaskId *) ids->data,
				  ids->len, s->now);
	if (thrown != GS_EXC_NONE)
		gs_interp_op_failed(interp_of(t), thrown, s->now);
}

static void end_task(Sim *s, SimTask *task, gboolean failed, GsException failure);

/*
 * Spark's leak report: what a thread that completed left allocated (the
 * interpreter handed it back as the thread ended) is a leak of its task.
 * A failed thread's leftovers are not: Spark reports leaks only for tasks
 * that did not throw.
 */
static void
report_leak(Sim *s, SimThread *t, gboolean failed)
{
	if (!failed && t->task != NULL)
		gs_run_tasks_report_leak(&s->run, &t->task->run, t->result->name, t->leaking);
	t->leaking = 0;
}

/* The thread has run its course; its task ends with it if it was the last one. */
static void
thread_ended(Sim *s, SimThread *t, gboolean ends_task, gboolean failed, GsException failure)
{
	sim_mem_thread_ends(s, t);
	report_leak(s, t, failed);
	sim_lanes_end(s, t);
	sim_set_status(s, t, GS_RUN_DONE);
	t->resume_seq = NO_RESUME;
	sim_owner_moved(s, t); /* nothing more will come from it */
	if (t->task == NULL || t->task->run.status != GS_RUN_TASK_RUNNING)
		return;
	t->task->run.alive--;
	if (ends_task || t->task->run.alive == 0)
		end_task(s, t->task, failed, failure);
}

/*
 * Steps a thread until it has to wait for time, memory, a permit or a wake-up.
 * An allocation attempt lasts links.alloc_latency: the thread is in
 * THREAD_ALLOC meanwhile (a free by another thread makes it ALLOC_FREE), and
 * the memory is tried at the end of it.
 */
static void
run_thread(Sim *s, SimThread *t)
{
	if (t->mem != NULL && !sim_mem_resume(s, t))
		return;
	if (s->owner_waits != NULL && !sim_free_for_again(s, t))
		return;
	for (;;) {
		/*
		 * Initialized, not assigned: the interpreter then writes the
		 * effect in place. An assignment, to an effect whose address
		 * has been handed out, goes through a copy, which reads the
		 * fields back wider than they were written.
		 */
		GsEffect e = gs_interp_step(interp_of(t), s->now);

		if (t->try_due) {
			/* The interpreter hands out its pending ALLOC again: try it now. */
			t->try_due = FALSE;
			sim_touches_shared(s);
			sim_try_alloc(s, t, &e);
			if (t->status != GS_RUN_READY)
				return; /* spilling, or waiting for the gate */
			continue;
		}
		switch (e.kind) {
		case GS_EFFECT_PERMIT:
			sim_touches_shared(s);
			if (!take_permit(s, t))
				return;
			gs_interp_permit_granted(interp_of(t));
			break;
		case GS_EFFECT_ALLOC:
			sim_touches_shared(s);
			if (s->w->links.alloc_latency > 0) {
				t->try_due = TRUE;
				sim_resume_at(s, t,
					      gs_time_add(s->now,
							  sim_latency(s, s->w->links.alloc_latency)),
					      GS_RUN_BUSY);
				return;
			}
			sim_try_alloc(s, t, &e);
			if (t->status != GS_RUN_READY)
				return; /* spilling, or waiting for the gate */
			break;
		case GS_EFFECT_FREE:
			sim_touches_shared(s);
			sim_do_free(s, t, &e);
			break;
		case GS_EFFECT_COMPUTE:
			if (!sim_begin_compute(s, t, &e))
				break; /* its spilled buffers are asked for first */
			sim_resume_at(s, t, gs_time_add(s->now, e.time), GS_RUN_BUSY);
			return;
		case GS_EFFECT_SLEEP:
			sim_resume_at(s, t, gs_time_add(s->now, e.time), GS_RUN_SLEEPING);
			return;
		case GS_EFFECT_UNTIL:
			if (e.time > s->now) {
				sim_resume_at(s, t, e.time, GS_RUN_BUSY);
				return;
			}
			break;
		case GS_EFFECT_OP:
			sim_touches_shared(s);
			if (!sim_do_op(s, t, e.op))
				return;
			break;
		case GS_EFFECT_WAIT:
			sim_set_status(s, t, GS_RUN_PARKED);
			t->since = s->now;
			return;
		case GS_EFFECT_TASK_DONE:
			thread_ended(s, t, TRUE, FALSE, GS_EXC_NONE);
			return;
		case GS_EFFECT_DONE:
			thread_ended(s, t, FALSE, FALSE, GS_EXC_NONE);
			return;
		case GS_EFFECT_FAILED:
			thread_ended(s, t, TRUE, TRUE, e.exception);
			return;
		}
	}
}

/* ---- threads and tasks ---- */

/* The simulator calls the engine itself, on one thread: it only listens. */
static const GsInterpHooks sim_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.on_block = sim_on_block,
	.on_value = on_value,
};

/* An engine call makes the event firing now shared (footprint.c). */
static void
engine_entered(gpointer data)
{
	SimThread *t = data;

	sim_touches_shared(t->sim);
}

/* The same, while a search is told what each event touched. */
static const GsInterpHooks sim_watched_hooks = {
	.api_version = 1,
	.enter = engine_entered,
	.on_exception = on_exception,
	.on_block = sim_on_block,
	.on_value = on_value,
};

static SimThread *
thread_new(Sim *s, const GsThreadSpec *spec, SimTask *task, const char *name)
{
	SimThread *t = table_add(&s->threads);

	t->id = s->next_thread++;
	t->spec = spec;
	t->task = task;
	t->resume_seq = NO_RESUME;
	t->status = GS_RUN_DONE; /* not counted yet */
	sim_set_status(s, t, GS_RUN_READY);
	t->result = gs_result_add_thread(s->r, name, task != NULL ? task->run.result : NULL);
	if (task != NULL)
		gs_engine_register_dedicated(s->engine, t->id, task->run.engine_id, s->now);
	t->sim = s;
	t->interp = g_malloc(gs_interp_size());
	gs_interp_init(interp_of(t), s->engine, spec, t->id, s->w->policy.oom);
	gs_interp_set_hooks(interp_of(t), s->opts.footprints != NULL ? &sim_watched_hooks : &sim_hooks,
			    t);
	gs_interp_require_permit(interp_of(t), task != NULL && gs_run_tasks_use_permits(&s->run));
	if (s->by_name != NULL) {
		g_hash_table_replace(s->by_name, (gpointer) t->result->name, t);
		gs_interp_note_allocations(interp_of(t));
	}
	return t;
}

static void
thread_clear(SimThread *t)
{
	if (t->interp != NULL)
		gs_interp_clear(t->interp);
	g_clear_pointer(&t->interp, g_free);
	g_clear_pointer(&t->mem, sim_mem_free);
}

static void
task_clear(SimTask *task)
{
	if (task->pages != NULL)
		gs_page_table_free(task->pages);
	gs_run_task_memory_free(&task->run);
}

/* Hands back what an ending thread holds, through its interpreter. */
static void
drain_frees(Sim *s, SimThread *t)
{
	for (GsEffect e = gs_interp_step(interp_of(t), s->now); e.kind == GS_EFFECT_FREE;
	     e = gs_interp_step(interp_of(t), s->now))
		sim_do_free(s, t, &e);
}

/*
 * Stops the task's other threads once the engine has removed them. A thread
 * parked in the engine wakes to its removal (it throws ThreadRemoved, as the
 * reference's REMOVE_THROW does); every other one is cut short. What they
 * hold goes back.
 */
static void
stop_threads(Sim *s, SimTask *task)
{
	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		if (t->status == GS_RUN_DONE)
			continue;
		if (t->status == GS_RUN_SEMAPHORE)
			s->r->totals.semaphore_wait_ns =
				gs_time_add(s->r->totals.semaphore_wait_ns, s->now - t->since);
		if (t->status == GS_RUN_PARKED)
			drain_frees(s, t);
		sim_mem_thread_ends(s, t);
		t->try_due = FALSE;
		gs_interp_abort(interp_of(t), s->now);
		drain_frees(s, t);
		t->leaking = 0;
		sim_lanes_end(s, t);
		sim_set_status(s, t, GS_RUN_DONE);
		t->resume_seq = NO_RESUME;
		sim_owner_moved(s, t);
	}
}

static void
collect_metrics(Sim *s, SimTask *task)
{
	GsMetrics m;

	gs_engine_task_metrics(s->engine, task->run.engine_id, s->now, &m);
	gs_result_add_task_metrics(task->run.result, &m, m.gpu_max_footprint);
	gs_engine_forget_task_metrics(s->engine, task->run.engine_id);
}

/* A thread's row gets its final state and the exceptions it saw (NULL if none). */
static void
report_thread(Sim *s, SimThread *t)
{
	t->result->final_state = gs_engine_thread_state(s->engine, t->id);
	t->result->exceptions = gs_interp_take_exceptions(interp_of(t));
	t->reported = TRUE;
}

static void
release_task(Sim *s, SimTask *task, gboolean failed, GsException failure)
{
	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		/* stop_threads() has woken every removed waiter: no REMOVE_THROW is left. */
		report_thread(s, t);
		/* Unless another thread may yet free its buffers, nothing reads its state again. */
		if (s->by_name == NULL)
			thread_clear(t);
	}
	gs_run_tiers_task_ends(&s->tier_ops, &task->run);
	gs_run_tasks_finish(&s->run, &task->run, failed, failure);
}

static void
end_task(Sim *s, SimTask *task, gboolean failed, GsException failure)
{
	gs_run_tasks_end(&s->run, &task->run, failed);
	release_task(s, task, failed, failure);
}

/* ---- the run layer's hooks: the simulator's tasks ---- */

static GsRunTask *
task_new(gpointer data)
{
	Sim *s = data;

	return &((SimTask *) table_add(&s->tasks))->run;
}

/* The task added last arrives at @at. */
static void
task_arrives(gpointer data, GsRunTask *task, GsTime at)
{
	Sim *s = data;

	sim_schedule(s, at, EV_TASK_ARRIVE, s->tasks.len - 1);
}

static void
start_threads(gpointer data, GsRunTask *run)
{
	Sim *s = data;
	SimTask *task = (SimTask *) run;

	task->first_thread = (guint32) s->next_thread;
	for (guint i = 0; i < run->spec->threads->len; i++) {
		const GsThreadSpec *spec = run->spec->threads->pdata[i];
		g_autofree char *name = gs_task_thread_name(run->spec, run->result->id, spec);
		SimThread *t = thread_new(s, spec, task, name);

		task->n_threads++;
		task->run.alive++;
		sim_resume_at(s, t, s->now, GS_RUN_READY);
	}
	if (task->run.alive == 0)
		end_task(s, task, FALSE, GS_EXC_NONE);
}

static void
end_threads(gpointer data, GsRunTask *run)
{
	stop_threads(data, (SimTask *) run);
	collect_metrics(data, (SimTask *) run);
}

static void
permit_granted(gpointer data, GsRunTask *run)
{
	Sim *s = data;
	SimTask *task = (SimTask *) run;

	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		if (t->status == GS_RUN_SEMAPHORE) {
			GsTime *wait = &s->r->totals.semaphore_wait_ns;

			*wait = gs_time_add(*wait, s->now - t->since);
			sim_resume_at(s, t, s->now, GS_RUN_READY);
		}
	}
}

/* Waits in progress count as blocked time. */
static void
cut_short(gpointer data, GsRunTask *run)
{
	Sim *s = data;
	SimTask *task = (SimTask *) run;

	collect_metrics(s, task);
	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		if (t->status == GS_RUN_PARKED)
			run->result->blocked_ns = gs_time_add(run->result->blocked_ns, s->now - t->since);
	}
}

static GsTime
sim_now(gpointer data)
{
	return ((Sim *) data)->now;
}

/* ---- the watchdog and the end of a run ---- */

/* Every task thread waits in the engine or for a permit (and there is one). */
static gboolean
all_threads_waiting(Sim *s)
{
	return s->live_dedicated > 0 && s->waiting == s->live_dedicated;
}

static void
watchdog(Sim *s)
{
	g_autoptr(GArray) outside = g_array_sized_new(FALSE, FALSE, sizeof(GsThreadId),
						      gs_run_members_len(&s->outside));
	guint64 deadlocks = gs_engine_n_deadlocks(s->engine);

	/* The engine takes them as a set. */
	for (guint i = 0; i < gs_run_members_len(&s->outside); i++)
		g_array_append_val(outside, ((SimThread *) gs_run_members_at(&s->outside, i))->id);
	gs_engine_check_deadlocks(s->engine, (GsThreadId *) outside->data, outside->len, s->now);
	s->watchdog_idle = gs_engine_n_deadlocks(s->engine) == deadlocks;
}

static void
mark_deadlock(Sim *s)
{
	for (guint i = 0; i < s->threads.len; i++) {
		SimThread *t = table_get(&s->threads, i);

		if (gs_run_waits_on_another(t->status))
			t->result->waiting_at_end = TRUE;
	}
	s->r->outcome = GS_OUTCOME_DEADLOCK;
	s->r->totals.deadlocks_unresolved = 1;
}

/* ---- choice points ---- */

/* The chooser's pick among @n alternatives (n >= 2); one out of range is 0. */
static guint
choose(Sim *s, GsChoiceKind kind, guint n)
{
	guint k = s->opts.choose(kind, n, s->opts.choose_data);

	return k < n ? k : 0;
}

GsTime
sim_latency(Sim *s, GsTime nominal)
{
	double delta = (double) nominal * s->w->schedule_jitter;
	GsTime by;

	if (s->opts.choose == NULL || delta < 1.0)
		return nominal;
	by = delta >= (double) nominal ? nominal : (GsTime) delta;
	switch (choose(s, GS_CHOICE_LATENCY, GS_LATENCY_ALTERNATIVES)) {
	case 1:
		return nominal - by;
	case 2:
		return gs_time_add(nominal, by);
	default:
		return nominal;
	}
}

/* The engine asks which of @n equal waiters a wake-one wakes (GsEngineChooseFunc). */
static guint
choose_wake(guint n, gpointer sim)
{
	return choose(sim, GS_CHOICE_WAKE, n);
}

/* Whether @ev would do anything: a resumption its thread no longer expects does not. */
static gboolean
event_live(Sim *s, const GsEvent *ev)
{
	SimThread *t;

	if (ev->kind != EV_THREAD_RESUME)
		return TRUE;
	t = thread_of(s, ev->target);
	return t != NULL && t->resume_seq == ev->seq && t->status != GS_RUN_DONE;
}

/*
 * Whether the watchdog's ticks may be choices. Where the engine does not bust
 * deadlocks, a tick only counts one that nobody acts on (which moves its own
 * next tick, nothing else), so neither its phase nor its place among the
 * events of an instant can change what the run does: no choice is made of
 * them unless opts.every_choice.
 */
static gboolean
watchdog_matters(Sim *s)
{
	return s->opts.every_choice || gs_engine_get_opts(s->engine)->bust_deadlocks;
}

/* Whether @ev is one of the alternatives of a pass: it would do something that may matter. */
static gboolean
event_chosen_among(Sim *s, const GsEvent *ev)
{
	return event_live(s, ev) && (ev->kind != EV_WATCHDOG || watchdog_matters(s));
}

/*
 * A pass as the chooser orders it: every event due now that was scheduled
 * before @pass_end leaves the heap at once, as in the heap's order, and the
 * chooser picks which fires next among those that would still do something
 * that may matter. Any other event fires at its turn in the heap's order,
 * never being a choice, so that always picking 0 fires everything as the
 * heap would.
 */
static void
begin_chosen_pass(Sim *s, guint64 pass_end)
{
	GsEvent ev;

	g_array_set_size(s->pass, 0);
	while (gs_heap_pop_due_before(s->heap, s->now, pass_end, &ev))
		g_array_append_val(s->pass, ev);
}

/*
 * The search is told the @live events of the pass a choice is made among:
 * their sequence numbers, and the threads they resume (0 for none).
 */
static void
tell_alternatives(Sim *s, guint live)
{
	g_autofree guint64 *seqs = g_new(guint64, live);
	g_autofree GsThreadId *threads = g_new(GsThreadId, live);
	guint n = 0;

	for (guint i = 0; i < s->pass->len; i++) {
		const GsEvent *ev = &g_array_index(s->pass, GsEvent, i);

		if (!event_chosen_among(s, ev))
			continue;
		seqs[n] = ev->seq;
		threads[n++] = ev->kind == EV_THREAD_RESUME ? ev->target : GS_NO_THREAD;
	}
	s->opts.footprints->alternatives(seqs, threads, n, s->opts.footprints_data);
}

static gboolean
pop_chosen(Sim *s, GsEvent *out)
{
	GArray *pass = s->pass;
	guint live = 0, pick = 0, at = 0;

	if (pass->len == 0)
		return FALSE;
	if (event_chosen_among(s, &g_array_index(pass, GsEvent, 0))) {
		for (guint i = 0; i < pass->len; i++)
			live += event_chosen_among(s, &g_array_index(pass, GsEvent, i));
		if (live >= 2 && s->opts.footprints != NULL)
			tell_alternatives(s, live);
		pick = live >= 2 ? choose(s, GS_CHOICE_ORDER, live) : 0;
		/* The pick-th of the alternatives. */
		for (at = 0; pick > 0 || !event_chosen_among(s, &g_array_index(pass, GsEvent, at));
		     at++)
			pick -= event_chosen_among(s, &g_array_index(pass, GsEvent, at));
	}
	*out = g_array_index(pass, GsEvent, at);
	g_array_remove_index(pass, at);
	return TRUE;
}

/* The next event of the pass that began when the heap's next sequence number was @pass_end. */
static inline gboolean
pop_due(Sim *s, guint64 pass_end, GsEvent *out)
{
	if (G_UNLIKELY(s->pass != NULL))
		return pop_chosen(s, out);
	return gs_heap_pop_due_before(s->heap, s->now, pass_end, out);
}

/* ---- the loop ---- */

/*
 * The first rule of the engine's or the memory's bookkeeping found broken is
 * kept. They are checked between instants: within one, a thread the engine
 * woke is on its way (its resumption is due at this instant) while the
 * engine still counts it as parked, which its rules allow only for a wake-up
 * still queued in it.
 */
static void
check_invariants(Sim *s)
{
	const char *broken;

	if (s->r->invariant_broken != NULL)
		return;
	broken = gs_engine_check_invariants(s->engine);
	if (broken == NULL)
		broken = gs_memory_check(s->mem);
	if (broken != NULL)
		s->r->invariant_broken =
			g_strdup_printf("%s (broken at %" G_GINT64_FORMAT " ns)", broken, s->now);
}

static void
fire_event(Sim *s, const GsEvent *ev)
{
	SimThread *t;

	s->watchdog_idle = FALSE;
	switch ((EventKind) ev->kind) {
	case EV_TASK_ARRIVE:
		gs_run_tasks_admit(&s->run, &((SimTask *) table_get(&s->tasks, ev->target))->run);
		break;
	case EV_THREAD_RESUME:
		t = thread_of(s, ev->target);
		if (t != NULL && t->resume_seq == ev->seq && t->status != GS_RUN_DONE) {
			sim_lanes_end(s, t);
			sim_set_status(s, t, GS_RUN_READY);
			run_thread(s, t);
		}
		break;
	case EV_WATCHDOG:
		s->watchdog_armed = FALSE;
		watchdog(s);
		break;
	case EV_PROACTIVE:
		sim_proactive_landed(s, (guint) ev->target);
		break;
	}
	drain_wakes(s);
	if (s->released && !g_queue_is_empty(&s->tier_ops.waiters))
		gs_run_reserve_retry(&s->tier_ops);
	s->released = FALSE;
}

/* Fires @ev; a search that is told what events touch hears of each that does something. */
static void
fire(Sim *s, const GsEvent *ev)
{
	if (G_UNLIKELY(s->opts.footprints != NULL) && event_chosen_among(s, ev)) {
		SimThread *t = ev->kind == EV_THREAD_RESUME ? thread_of(s, ev->target) : NULL;
		Status before = sim_footprint_begin(s, ev, t);

		fire_event(s, ev);
		sim_footprint_end(s, ev, t, before);
		return;
	}
	fire_event(s, ev);
}

/*
 * The watchdog ticks every period. A tick that found no deadlock, with
 * nothing else due before the next event, tells what every tick until then
 * would: the state cannot change meanwhile. The next tick is then the last
 * one before that event, which keeps the ticks' times and their order with
 * the event, and a quiet stretch of years costs one tick, not billions.
 */
static void
arm_watchdog(Sim *s)
{
	GsTime period = s->w->policy.watchdog, ticks = 1, first;
	GsEvent next;

	if (period <= 0 || s->watchdog_armed || s->run.open == 0)
		return;
	if (s->watchdog_idle && gs_heap_peek(s->heap, &next) && next.time > s->now)
		ticks = MAX((next.time - 1 - s->now) / period, 1);
	s->watchdog_armed = TRUE;
	first = gs_time_mul((guint64) ticks, period);
	/* The chooser may move the first tick earlier, within one period. */
	if (!s->watchdog_started && s->opts.choose != NULL && period >= GS_WATCHDOG_PHASES &&
	    watchdog_matters(s))
		first -= period / GS_WATCHDOG_PHASES *
			 choose(s, GS_CHOICE_WATCHDOG_PHASE, GS_WATCHDOG_PHASES);
	s->watchdog_started = TRUE;
	sim_schedule(s, gs_time_add(s->now, first), EV_WATCHDOG, 0);
}

/* Threads wait and nothing but the watchdog is left that could wake them. */
static gboolean
hopeless(Sim *s)
{
	return s->pending_events == 0 && all_threads_waiting(s);
}

/* The last instant the run may reach: --max-time's, or the last representable one. */
static GsTime
horizon(const Sim *s)
{
	return s->opts.max_time > 0 ? MIN(s->opts.max_time, GS_TIME_END - 1) : GS_TIME_END - 1;
}

static void
stop_at(Sim *s, GsTime at, char *reason)
{
	s->now = MAX(s->now, at);
	s->r->outcome = GS_OUTCOME_TIMEOUT;
	s->r->stop_reason = reason;
}

/* The next event lies past the horizon: the run stops there. */
static void
stop_at_horizon(Sim *s)
{
	if (s->opts.max_time > 0 && s->opts.max_time < GS_TIME_END) {
		stop_at(s, s->opts.max_time, NULL);
		return;
	}
	stop_at(s, GS_TIME_END - 1,
		g_strdup("time ran past the last instant the simulator can represent "
			 "(2^63 - 2 ns, about 292 years)"));
}

/* One instant took @events events: a livelock, which time would never end. */
static gboolean
stalled(Sim *s, guint64 events)
{
	guint64 most = s->opts.max_events_per_instant > 0 ? s->opts.max_events_per_instant
							  : GS_MAX_EVENTS_PER_INSTANT;

	if (events <= most)
		return FALSE;
	stop_at(s, s->now,
		g_strdup_printf("no progress: %" G_GUINT64_FORMAT " events at %" G_GINT64_FORMAT
				" ns and time did not pass (a livelock)", events, s->now));
	return TRUE;
}

/*
 * The last task has ended. A pool thread it woke into its removal (blocked
 * for it, now REMOVE_THROW) throws ThreadRemoved at this instant and gives
 * back what it holds, as a removed thread does; what is due later is cut.
 */
static void
finish_instant(Sim *s)
{
	GsEvent ev;
	guint64 pass_end, at_instant = 0;
	gboolean fired = TRUE;

	while (fired && !stalled(s, at_instant)) {
		fired = FALSE;
		pass_end = gs_heap_next_seq(s->heap);
		if (s->pass != NULL)
			begin_chosen_pass(s, pass_end);
		while (pop_due(s, pass_end, &ev)) {
			if (ev.kind != EV_WATCHDOG)
				s->pending_events--;
			s->r->events_processed++;
			at_instant++;
			fire(s, &ev);
			fired = TRUE;
		}
	}
}

/* Tells the listener how far the run is, every GS_PROGRESS_EVENTS events. */
static void
tell_progress(Sim *s)
{
	GsRunProgress p;

	if (s->opts.progress == NULL || s->r->events_processed < s->next_progress)
		return;
	s->next_progress = s->r->events_processed + GS_PROGRESS_EVENTS;
	p = (GsRunProgress){.now = s->now, .tasks = s->r->totals.tasks,
			    .tasks_done = s->r->totals.tasks - MIN(s->run.open, s->r->totals.tasks),
			    .events = s->r->events_processed};
	s->opts.progress(&p, s->opts.progress_data);
}

/*
 * Brings what the next events will touch into the cache while this one
 * runs: with a hundred thousand threads, each one's record, interpreter and
 * op lie where no cache holds them, and reading them one after another costs
 * more than the rest of an event. The next event's thread record came one
 * event ago, when it was the event after: what it points to comes now, and
 * the record of the one after it, where the queue knows it.
 * Always inlined: a function whose only effect is prefetching looks pure to
 * the compiler, which then drops the calls it does not inline.
 */
static inline __attribute__((always_inline)) void
prefetch_soon(Sim *s)
{
	const GsEvent *soon[2];
	guint n = gs_heap_soon(s->heap, soon);
	SimThread *t;

	if (n == 0)
		return;
	if (soon[0]->kind == EV_THREAD_RESUME && (t = thread_of(s, soon[0]->target)) != NULL &&
	    t->interp != NULL) {
		__builtin_prefetch(t->interp);
		__builtin_prefetch((const char *) t->interp + 64);
		__builtin_prefetch(t->next_read);
	}
	if (n == 2 && soon[1]->kind == EV_THREAD_RESUME && (t = thread_of(s, soon[1]->target)) != NULL) {
		__builtin_prefetch(t);
		__builtin_prefetch((const char *) (t + 1) - 1); /* a record may span two lines */
	}
}

static void
run_loop(Sim *s)
{
	GsEvent next, ev;
	guint64 pass_end, at_instant = 0;

	while (s->run.open > 0) {
		gboolean last_hope = hopeless(s);

		/* Only the retry policy's watchdog can break a deadlock: others end it now. */
		if (last_hope && s->w->policy.oom != GS_OOM_RETRY) {
			mark_deadlock(s);
			return;
		}
		if (!gs_heap_peek(s->heap, &next)) {
			mark_deadlock(s);
			return;
		}
		if (next.time > horizon(s)) {
			stop_at_horizon(s);
			return;
		}
		if (next.time > s->now) {
			at_instant = 0;
			if (G_UNLIKELY(s->opts.check_invariants))
				check_invariants(s);
		}
		if (s->opts.max_events > 0 && s->r->events_processed >= s->opts.max_events) {
			s->r->outcome = GS_OUTCOME_TIMEOUT;
			return;
		}
		s->now = next.time;
		/* One pass: the events due now; what they schedule fires in the next. */
		pass_end = gs_heap_next_seq(s->heap);
		if (s->pass != NULL)
			begin_chosen_pass(s, pass_end);
		while (pop_due(s, pass_end, &ev)) {
			if (ev.kind != EV_WATCHDOG)
				s->pending_events--;
			s->r->events_processed++;
			at_instant++;
			prefetch_soon(s);
			fire(s, &ev);
		}
		if (stalled(s, at_instant))
			return;
		sim_proactive(s);
		if (s->changed)
			sample(s);
		tell_progress(s);
		/* The watchdog's tick was the last chance, and it changed nothing. */
		if (last_hope && hopeless(s)) {
			mark_deadlock(s);
			return;
		}
		arm_watchdog(s);
	}
	finish_instant(s);
}

/* ---- set-up ---- */

/* What the simulator does for the run layer. */
static const GsRunHooks run_hooks = {
	.now = sim_now,
	.log = sim_log_entry,
	.task_new = task_new,
	.arrives = task_arrives,
	.start_threads = start_threads,
	.stop_threads = end_threads,
	.permit_granted = permit_granted,
	.cut_short = cut_short,
	.task_of = sim_task_of,
	.tiers_of = sim_tiers_of,
	.granted = sim_reservation_granted,
	.released = sim_memory_came_free,
	.wake = sim_reservation_wakes,
	.buffers = sim_buffers_listed,
	.thread_name = thread_name,
	.thread_moved = thread_moved,
	.progressing = progressing,
};

/* policy.priority task_id: each first attempt's rank (they are in file order). */
static void
add_pool_threads(Sim *s)
{
	for (guint i = 0; i < s->w->pool_threads->len; i++) {
		const GsThreadSpec *spec = s->w->pool_threads->pdata[i];
		SimThread *t = thread_new(s, spec, NULL, spec->name);

		sim_resume_at(s, t, 0, GS_RUN_READY);
	}
}

static void
sim_init(Sim *s, const GsWorkload *w, const GsRunOptions *opts)
{
	GsEngineOpts engine_opts = gs_policy_engine_opts(&w->policy);
	guint n_tasks = 0, n_threads = w->pool_threads->len;

	/* Sized for one attempt of every task: re-attempts grow the arrays. */
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *spec = w->tasks->pdata[i];

		n_tasks += MAX(spec->repeat, 1);
		n_threads += MAX(spec->repeat, 1) * spec->threads->len;
	}
	memset(s, 0, sizeof *s);
	s->w = w;
	if (opts != NULL)
		s->opts = *opts;
	s->r = gs_result_new_sized(n_tasks, n_threads);
	s->r->seed = w->seed;
	s->engine = gs_engine_new(&engine_opts);
	gs_run_watch(&s->watch, s->engine, s->r, &run_hooks, s);
	s->heap = gs_heap_new();
	s->mem = gs_memory_new(w);
	gs_run_tiers_init(&s->tier_ops, w, s->mem, &run_hooks, s);
	gs_run_tiers_report_to(&s->tier_ops, s->r);
	g_queue_init(&s->gate_waiters);
	g_queue_init(&s->open_waiters);
	s->downgrading = g_array_new(FALSE, TRUE, sizeof(gboolean));
	g_array_set_size(s->downgrading, gs_memory_n_gpus(s->mem));
	s->proactive_copy = g_array_new(FALSE, TRUE, sizeof(GsSpillBufId));
	g_array_set_size(s->proactive_copy, gs_memory_n_gpus(s->mem));
	s->moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	sim_lanes_init(s);
	if (s->opts.choose != NULL) {
		s->pass = g_array_new(FALSE, FALSE, sizeof(GsEvent));
		gs_engine_set_chooser(s->engine, choose_wake, s);
	}
	if (s->opts.choose == NULL)
		s->opts.footprints = NULL; /* events are told only where their order is chosen */
	if (s->opts.footprints != NULL)
		sim_footprint_init(s);
	table_init(&s->tasks, sizeof(SimTask));
	table_init(&s->threads, sizeof(SimThread));
	gs_run_members_init(&s->outside, G_STRUCT_OFFSET(SimThread, outside_at));
	init_counted_as(s);
	if (gs_workload_frees_across_threads(w)) {
		s->by_name = g_hash_table_new(g_str_hash, g_str_equal);
		s->owner_waiters = g_ptr_array_new();
		s->owner_waits = g_hash_table_new(NULL, NULL);
	}
	gs_run_tasks_init(&s->run, w, s->r, s->engine, &run_hooks, s);
	/* A thread's state goes with its task attempt (release_task()): so may its spec. */
	s->run.drop_specs = s->by_name == NULL;
	s->next_thread = 1;
	s->r->tiers[GS_TIER_GPU].capacity = w->gpu.capacity * MAX(w->gpu.devices, 1);
	s->r->tiers[GS_TIER_HOST].capacity = w->host.capacity + w->host.pinned;
	s->r->tiers[GS_TIER_DISK].capacity = w->disk.capacity;
}

/*
 * Buffers a completed task's thread gave away (another thread was to free
 * them) and nobody freed: leaked by the end of the run, the task's leak.
 */
static void
report_given_away(Sim *s, SimThread *t)
{
	gint64 bytes = gs_interp_live_bytes(interp_of(t), GS_KIND_GPU) +
		       gs_interp_live_bytes(interp_of(t), GS_KIND_HOST);

	if (t->status == GS_RUN_DONE && t->task != NULL &&
	    t->task->run.result->outcome == GS_OUTCOME_COMPLETED)
		gs_run_tasks_report_leak(&s->run, &t->task->run, t->result->name, bytes);
}

static void
sim_finish(Sim *s)
{
	GsResult *r = s->r;

	sample(s);
	r->makespan_ns = s->now;
	for (int tier = 0; tier < GS_N_TIERS; tier++)
		r->tiers[tier].mean_used =
			s->now > 0 ? (gint64) (s->used_integral[tier] / (double) s->now) : 0;
	gs_run_tasks_settle_outcome(&s->run);
	for (guint i = 0; i < s->threads.len; i++) {
		SimThread *t = table_get(&s->threads, i);

		if (!t->reported)
			report_thread(s, t);
		if (s->by_name != NULL)
			report_given_away(s, t);
	}
	for (guint i = 0; i < s->tasks.len; i++)
		gs_run_tasks_cut_short(&s->run, table_get(&s->tasks, i), s->now);
	gs_result_sum_tasks(r);
	gs_result_note_traffic(r, gs_memory_traffic(s->mem), 0);
}

static void
sim_clear(Sim *s)
{
	for (guint i = 0; i < s->threads.len; i++)
		thread_clear(table_get(&s->threads, i));
	for (guint i = 0; i < s->tasks.len; i++)
		task_clear(table_get(&s->tasks, i));
	table_clear(&s->threads);
	table_clear(&s->tasks);
	gs_run_members_clear(&s->outside);
	g_clear_pointer(&s->by_name, g_hash_table_unref);
	g_clear_pointer(&s->owner_waiters, g_ptr_array_unref);
	g_clear_pointer(&s->owner_waits, g_hash_table_unref);
	gs_run_tasks_clear(&s->run);
	gs_run_tiers_clear(&s->tier_ops);
	g_queue_clear(&s->gate_waiters);
	g_queue_clear(&s->open_waiters);
	g_array_unref(s->downgrading);
	g_array_unref(s->proactive_copy);
	g_array_unref(s->moves);
	sim_lanes_clear(s);
	if (s->pass != NULL)
		g_array_unref(s->pass);
	sim_footprint_clear(s);
	gs_memory_free(s->mem);
	gs_heap_free(s->heap);
	gs_engine_free(s->engine);
}

GsResult *
gs_sim_run(const GsWorkload *w, const GsRunOptions *opts)
{
	Sim s;
	GsResult *r;

	sim_init(&s, w, opts);
	gs_run_tasks_add_all(&s.run);
	add_pool_threads(&s);
	sample(&s);
	arm_watchdog(&s);
	run_loop(&s);
	if (s.opts.check_invariants && s.r->outcome != GS_OUTCOME_TIMEOUT)
		check_invariants(&s);
	sim_finish(&s);
	r = s.r;
	sim_clear(&s);
	return r;
}

