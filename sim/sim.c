/*
 * gpusim: the discrete-event simulator (see sim.h for the loop and its rules).
 *
 * Threads move between a few driver statuses: READY (a resumption is due),
 * BUSY (computing, or paying allocation latency), SLEEPING (a sleep op: the
 * watchdog may count it as waiting outside the allocator), PARKED (waiting in
 * the engine for a wake-up), SEMAPHORE (waiting for a GPU permit) and DONE.
 * Every scheduled resumption carries the thread's generation; bumping it
 * cancels the ones in flight (when a task ends under a busy thread).
 */
#include "config.h"

#include <string.h>

#include "device.h"
#include "heap.h"
#include "sim.h"

typedef enum { EV_TASK_ARRIVE, EV_THREAD_RESUME, EV_WATCHDOG } EventKind;

typedef enum {
	T_READY,
	T_BUSY,
	T_SLEEPING,
	T_PARKED,
	T_SEMAPHORE,
	T_DONE,
} Status;

typedef enum { TASK_PENDING, TASK_QUEUED, TASK_RUNNING, TASK_ENDED } TaskStatus;

typedef struct SimTask SimTask;

typedef struct Sim Sim;

typedef struct {
	Sim *sim;
	GsThreadResult *result; /* owned by GsResult.threads */
	const GsThreadSpec *spec;
	GsInterp *interp;
	GsThreadId id;
	SimTask *task;          /* NULL for pool threads */
	guint64 generation;
	guint8 status;          /* Status */
	guint try_due : 1;       /* the interpreter's allocation is tried when it resumes */
	guint reported : 1;      /* its final state and exceptions are in its result */
	GsTime semaphore_since;
	GsTime parked_since;
} SimThread;

struct SimTask {
	GsTaskResult *result;   /* the logical task, shared by its attempts */
	const GsTaskSpec *spec;
	guint spec_index;
	GsTaskId engine_id;
	guint attempt;
	TaskStatus status;
	GPtrArray *threads;     /* SimThread* */
	guint live_threads;
	gboolean has_permit;
	gboolean waits_for_permit;
	guint id_rank;          /* its place when tasks rank by id (policy.priority task_id) */
};

struct Sim {
	const GsWorkload *w;
	GsSimOptions opts;
	GsResult *r;
	GsEngine *engine;
	GsHeap *heap;
	GPtrArray *gpus;        /* GsDevice* per GPU device */
	GsDevice *host;
	GPtrArray *tasks;       /* SimTask*, every attempt */
	GPtrArray *threads;     /* SimThread*, every thread */
	GQueue queue;           /* SimTask* waiting for an executor slot */
	guint running;
	guint permits;          /* free GPU permits */
	GQueue permit_queue;    /* SimTask* waiting for a permit, FIFO */
	guint open_tasks;       /* logical tasks not finished */
	gboolean failed_any;
	GsThreadId next_thread;
	GsTaskId next_task;
	guint started;          /* tasks started so far: the FIFO rank of the next */
	GsTime now;
	gboolean watchdog_armed;
	guint pending_events;   /* non-watchdog events in the heap */
	guint live;             /* threads not DONE */
	guint live_dedicated;   /* of which task threads */
	guint waiting;          /* task threads PARKED or waiting for a permit */
	gboolean changed;
	GsTime last_sample;
	double used_integral[GS_N_TIERS];
};

/* ---- names ---- */

static const char *const outcome_names[] = {"completed", "failed", "deadlock", "timeout"};

const char *
gs_outcome_name(GsOutcome outcome)
{
	g_return_val_if_fail(outcome < G_N_ELEMENTS(outcome_names), "invalid");
	return outcome_names[outcome];
}

gboolean
gs_outcome_from_name(const char *name, GsOutcome *out)
{
	for (guint i = 0; i < G_N_ELEMENTS(outcome_names); i++) {
		if (strcmp(outcome_names[i], name) == 0) {
			*out = (GsOutcome) i;
			return TRUE;
		}
	}
	return FALSE;
}

/* ---- results ---- */

static void
task_result_free(gpointer data)
{
	GsTaskResult *t = data;

	g_free(t->id);
	g_free(t);
}

static void
thread_result_free(gpointer data)
{
	GsThreadResult *t = data;

	g_free(t->name);
	g_free(t->task);
	if (t->exceptions != NULL)
		g_array_unref(t->exceptions);
	g_free(t);
}

void
gs_result_free(GsResult *r)
{
	if (r == NULL)
		return;
	g_ptr_array_unref(r->tasks);
	g_ptr_array_unref(r->threads);
	g_array_unref(r->timeline);
	g_free(r);
}

GsResult *
gs_result_new(void)
{
	GsResult *r = g_new0(GsResult, 1);

	r->tasks = g_ptr_array_new_with_free_func(task_result_free);
	r->threads = g_ptr_array_new_with_free_func(thread_result_free);
	r->timeline = g_array_new(FALSE, TRUE, sizeof(GsSample));
	return r;
}

/* ---- logging ---- */

static void
emit(Sim *s, GsLogEntry *entry)
{
	entry->time = s->now;
	if (s->opts.log != NULL)
		s->opts.log(entry, s->opts.log_data);
}

static void
log_task(Sim *s, SimTask *task, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_TASK, .task = task->result->id, .what = what};

	emit(s, &e);
}

static SimThread *
thread_of(Sim *s, GsThreadId id)
{
	/* Thread ids are handed out 1, 2, 3... in the order of s->threads. */
	return id >= 1 && id <= s->threads->len ? s->threads->pdata[id - 1] : NULL;
}

static gboolean
is_waiting(Status status)
{
	return status == T_PARKED || status == T_SEMAPHORE;
}

/* Every status change goes through here, so that the counts stay O(1) to read. */
static void
set_status(Sim *s, SimThread *t, Status status)
{
	if (t->task != NULL) {
		s->waiting -= is_waiting(t->status);
		s->waiting += is_waiting(status);
		s->live_dedicated -= t->status != T_DONE;
		s->live_dedicated += status != T_DONE;
	}
	s->live -= t->status != T_DONE;
	s->live += status != T_DONE;
	t->status = status;
}

static void
on_state(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to, GsThreadEvent cause,
	 GsTime now)
{
	Sim *s = data;
	SimThread *t = thread_of(s, id);
	GsLogEntry e = {.kind = GS_LOG_STATE, .from = from, .to = to};

	if (t == NULL)
		return;
	t->result->reached |= 1u << to;
	e.thread = t->result->name;
	emit(s, &e);
	s->changed = TRUE;
}

static void
on_bust(gpointer data, GsThreadId victim, GsBustAction action, GsCheckReason reason, GsTime now)
{
	Sim *s = data;
	SimThread *t = thread_of(s, victim);
	GsLogEntry e = {.kind = GS_LOG_DEADLOCK, .action = action};

	s->r->totals.deadlocks_busted++;
	e.thread = t != NULL ? t->result->name : "?";
	emit(s, &e);
}

static const GsEngineObserver observer = {
	.api_version = 1,
	.state_changed = on_state,
	.busted = on_bust,
};

static void
on_exception(const GsSeenException *x, gpointer data)
{
	SimThread *t = data;
	GsLogEntry e = {.kind = GS_LOG_THROW, .thread = t->result->name, .exception = x->exception,
			.handled = x->handled};

	emit(t->sim, &e);
}

/* ---- scheduling ---- */

static void
schedule(Sim *s, GsTime time, EventKind kind, guint64 target, guint64 generation)
{
	gs_heap_push(s->heap, time, kind, target, generation, 0);
	if (kind != EV_WATCHDOG)
		s->pending_events++;
}

static void
resume_at(Sim *s, SimThread *t, GsTime time, Status status)
{
	set_status(s, t, status);
	schedule(s, time, EV_THREAD_RESUME, t->id, ++t->generation);
}

/* Resumes every parked thread the engine woke, in the order it woke them. */
static void
drain_wakes(Sim *s)
{
	GsThreadId id;

	while (gs_engine_pop_wake(s->engine, &id)) {
		SimThread *t = thread_of(s, id);

		if (t != NULL && t->status == T_PARKED)
			resume_at(s, t, s->now, T_READY);
	}
}

/* ---- devices ---- */

static GsDevice *
device_for(Sim *s, GsAllocKind kind, const GsOp *op)
{
	guint device = op != NULL && op->kind == GS_OP_ALLOC ? op->alloc.device : 0;

	if (kind == GS_KIND_HOST)
		return s->host;
	return s->gpus->pdata[MIN(device, s->gpus->len - 1)];
}

static gint64
tier_used(Sim *s, GsTier tier)
{
	gint64 used = 0;

	if (tier == GS_TIER_HOST)
		return gs_device_used(s->host);
	if (tier == GS_TIER_DISK)
		return 0;
	for (guint i = 0; i < s->gpus->len; i++)
		used += gs_device_used(s->gpus->pdata[i]);
	return used;
}

static void
sample(Sim *s)
{
	GsSample x = {.time = s->now};

	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		s->used_integral[tier] += (double) tier_used(s, tier) * (double) (s->now - s->last_sample);
		x.used[tier] = tier_used(s, tier);
		x.charged[tier] = x.used[tier];
		s->r->tiers[tier].peak_used = MAX(s->r->tiers[tier].peak_used, x.used[tier]);
		s->r->tiers[tier].peak_charged = MAX(s->r->tiers[tier].peak_charged, x.charged[tier]);
	}
	s->last_sample = s->now;
	x.blocked = gs_engine_n_in_state(s->engine, GS_THREAD_BLOCKED);
	x.bufn = gs_engine_n_in_state(s->engine, GS_THREAD_BUFN);
	x.running = s->live - MIN(s->live, x.blocked + x.bufn);
	/* One sample per instant: a later change at the same time replaces it. */
	if (s->r->timeline->len > 0 &&
	    g_array_index(s->r->timeline, GsSample, s->r->timeline->len - 1).time == s->now)
		g_array_index(s->r->timeline, GsSample, s->r->timeline->len - 1) = x;
	else
		g_array_append_val(s->r->timeline, x);
	s->changed = FALSE;
}

/* ---- the GPU semaphore ---- */

static gboolean
semaphore_on(Sim *s)
{
	return s->w->policy.concurrent_gpu_tasks > 0;
}

static void run_thread(Sim *s, SimThread *t);

static void
grant_permits(Sim *s)
{
	while (s->permits > 0 && !g_queue_is_empty(&s->permit_queue)) {
		SimTask *task = g_queue_pop_head(&s->permit_queue);
		GsLogEntry e = {.kind = GS_LOG_SEMAPHORE, .task = task->result->id, .what = "acquire"};

		s->permits--;
		task->has_permit = TRUE;
		task->waits_for_permit = FALSE;
		emit(s, &e);
		for (guint i = 0; i < task->threads->len; i++) {
			SimThread *t = task->threads->pdata[i];

			if (t->status == T_SEMAPHORE) {
				s->r->totals.semaphore_wait_ns += s->now - t->semaphore_since;
				resume_at(s, t, s->now, T_READY);
			}
		}
	}
}

/* TRUE if @t's task holds the GPU permit or takes it now; else the thread waits for it. */
static gboolean
take_permit(Sim *s, SimThread *t)
{
	SimTask *task = t->task;
	GsLogEntry e = {.kind = GS_LOG_SEMAPHORE, .what = "acquire"};

	if (task == NULL || task->has_permit)
		return TRUE;
	e.task = task->result->id;
	if (s->permits > 0 && !task->waits_for_permit) {
		s->permits--;
		task->has_permit = TRUE;
		emit(s, &e);
		return TRUE;
	}
	if (!task->waits_for_permit) {
		task->waits_for_permit = TRUE;
		g_queue_push_tail(&s->permit_queue, task);
		e.what = "wait";
		emit(s, &e);
	}
	set_status(s, t, T_SEMAPHORE);
	t->semaphore_since = s->now;
	return FALSE;
}

/* ---- effects ---- */

/*
 * Peaks are taken at every allocation, not only at the end of an instant: a
 * buffer allocated and freed within one instant still held its bytes.
 */
static void
note_peak(Sim *s, GsTier tier)
{
	gint64 used = tier_used(s, tier);

	s->r->tiers[tier].peak_used = MAX(s->r->tiers[tier].peak_used, used);
	s->r->tiers[tier].peak_charged = MAX(s->r->tiers[tier].peak_charged, used);
}

static void
do_alloc(Sim *s, SimThread *t, const GsEffect *effect)
{
	GsDevice *device = device_for(s, effect->alloc_kind, effect->op);
	GsLogEntry e = {.kind = GS_LOG_ALLOC, .thread = t->result->name, .bytes = effect->size,
			.tier = effect->alloc_kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU};
	guint64 handle = 0;

	e.ok = gs_device_alloc(device, effect->size, &handle);
	e.buf = t->spec->buffers->pdata[effect->buf];
	emit(s, &e);
	if (e.ok)
		note_peak(s, e.tier);
	s->changed = TRUE;
	gs_interp_alloc_done(t->interp, e.ok, handle, s->now);
}

static void
do_free(Sim *s, SimThread *t, const GsEffect *effect)
{
	GsLogEntry e = {.kind = GS_LOG_FREE, .thread = t->result->name, .bytes = effect->size,
			.tier = effect->alloc_kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU};

	gs_device_release(device_for(s, effect->alloc_kind, NULL), effect->handle);
	e.buf = t->spec->buffers->pdata[effect->buf];
	emit(s, &e);
	s->changed = TRUE;
}

/*
 * The pool op: (un)register a pool thread for the tasks named, that is for the
 * current attempt of each copy of each (copies of a repeated task are
 * separate tasks, and the pool thread serves all of them).
 */
static void
do_pool(Sim *s, SimThread *t, const GsOp *op)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsTaskId));

	for (guint i = 0; i < op->pool.tasks->len; i++) {
		guint spec_index = g_array_index(op->pool.tasks, guint, i);

		for (guint k = 0; k < s->tasks->len; k++) {
			SimTask *task = s->tasks->pdata[k];

			if (task->spec_index == spec_index && task->status != TASK_ENDED)
				g_array_append_val(ids, task->engine_id);
		}
	}
	if (op->pool.done)
		gs_engine_pool_done(s->engine, t->id, (GsTaskId *) ids->data, ids->len, s->now);
	else
		gs_engine_register_pool(s->engine, t->id, (GsTaskId *) ids->data, ids->len,
					t->spec->shuffle, s->now);
}

static void end_task(Sim *s, SimTask *task, gboolean failed, GsException failure);

/* The thread has run its course; its task ends with it if it was the last one. */
static void
thread_ended(Sim *s, SimThread *t, gboolean ends_task, gboolean failed, GsException failure)
{
	set_status(s, t, T_DONE);
	t->generation++;
	if (t->task == NULL || t->task->status != TASK_RUNNING)
		return;
	t->task->live_threads--;
	if (ends_task || t->task->live_threads == 0)
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
	for (;;) {
		GsEffect e;

		e = gs_interp_step(t->interp, s->now);
		if (t->try_due) {
			/* The interpreter hands out its pending ALLOC again: try it now. */
			t->try_due = FALSE;
			do_alloc(s, t, &e);
			continue;
		}
		switch (e.kind) {
		case GS_EFFECT_PERMIT:
			if (!take_permit(s, t))
				return;
			gs_interp_permit_granted(t->interp);
			break;
		case GS_EFFECT_ALLOC:
			if (s->w->links.alloc_latency > 0) {
				t->try_due = TRUE;
				resume_at(s, t, s->now + s->w->links.alloc_latency, T_BUSY);
				return;
			}
			do_alloc(s, t, &e);
			break;
		case GS_EFFECT_FREE:
			do_free(s, t, &e);
			break;
		case GS_EFFECT_COMPUTE:
			resume_at(s, t, s->now + e.time, T_BUSY);
			return;
		case GS_EFFECT_SLEEP:
			resume_at(s, t, s->now + e.time, T_SLEEPING);
			return;
		case GS_EFFECT_UNTIL:
			if (e.time > s->now) {
				resume_at(s, t, e.time, T_BUSY);
				return;
			}
			break;
		case GS_EFFECT_OP:
			if (e.op->kind == GS_OP_POOL)
				do_pool(s, t, e.op);
			break;
		case GS_EFFECT_WAIT:
			set_status(s, t, T_PARKED);
			t->parked_since = s->now;
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

static SimThread *
thread_new(Sim *s, const GsThreadSpec *spec, SimTask *task, const char *name)
{
	SimThread *t = g_new0(SimThread, 1);

	t->id = s->next_thread++;
	t->spec = spec;
	t->task = task;
	t->status = T_DONE; /* not counted yet */
	set_status(s, t, T_READY);
	t->result = g_new0(GsThreadResult, 1);
	t->result->name = g_strdup(name);
	t->result->task = task != NULL ? g_strdup(task->result->id) : NULL;
	t->result->pool = task == NULL;
	g_ptr_array_add(s->r->threads, t->result);
	g_ptr_array_add(s->threads, t);
	if (task != NULL)
		gs_engine_register_dedicated(s->engine, t->id, task->engine_id, s->now);
	t->sim = s;
	t->interp = gs_interp_new(s->engine, spec, t->id, s->w->policy.oom);
	gs_interp_set_exception_func(t->interp, on_exception, t);
	gs_interp_require_permit(t->interp, task != NULL && semaphore_on(s));
	return t;
}

static void
thread_free(gpointer data)
{
	SimThread *t = data;

	gs_interp_free(t->interp);
	g_free(t);
}

static SimTask *
task_new(Sim *s, GsTaskResult *result, const GsTaskSpec *spec, guint spec_index, guint attempt)
{
	SimTask *task = g_new0(SimTask, 1);

	task->result = result;
	task->spec = spec;
	task->spec_index = spec_index;
	task->attempt = attempt;
	task->engine_id = s->next_task++;
	task->threads = g_ptr_array_new();
	g_ptr_array_add(s->tasks, task);
	result->attempts = attempt;
	s->r->totals.task_attempts++;
	return task;
}

static void
task_free(gpointer data)
{
	SimTask *task = data;

	g_ptr_array_unref(task->threads);
	g_free(task);
}

/* Explicit ranks sit above every task ranked by the policy. */
#define POLICY_PRIORITY_TOP (G_MAXINT64 - ((gint64) 1 << 32))

/*
 * A task's priority, fixed as it starts (as the plugin asks TaskPriority at
 * task start): an explicit rank r gives G_MAXINT64 - r; otherwise fifo ranks
 * tasks by start (a re-attempt starts anew, behind), and task_id by their ids.
 */
static gint64
task_priority(Sim *s, SimTask *task)
{
	if (task->spec->priority > 0)
		return G_MAXINT64 - (gint64) task->spec->priority;
	if (s->w->policy.priority == GS_PRIORITY_TASK_ID)
		return POLICY_PRIORITY_TOP - task->id_rank;
	return POLICY_PRIORITY_TOP - s->started;
}

static void
start_task(Sim *s, SimTask *task)
{
	task->status = TASK_RUNNING;
	s->running++;
	s->started++;
	log_task(s, task, "start");
	if (task->attempt == 1)
		task->result->start_ns = s->now;
	gs_task_priorities_set(gs_engine_get_priorities(s->engine), task->engine_id,
			       task_priority(s, task));
	for (guint i = 0; i < task->spec->threads->len; i++) {
		const GsThreadSpec *spec = task->spec->threads->pdata[i];
		g_autofree char *name = NULL;
		SimThread *t;

		if (task->spec->repeat > 1) {
			const char *dot = strchr(spec->name, '.');

			/* A#2's threads: A#2.0 for A.0; other names get the copy suffix. */
			if (dot != NULL && strncmp(spec->name, task->spec->id, dot - spec->name) == 0)
				name = g_strconcat(task->result->id, dot, NULL);
			else
				name = g_strconcat(spec->name, strchr(task->result->id, '#'), NULL);
		} else {
			name = g_strdup(spec->name);
		}
		t = thread_new(s, spec, task, name);
		g_ptr_array_add(task->threads, t);
		task->live_threads++;
		resume_at(s, t, s->now, T_READY);
	}
	if (task->live_threads == 0)
		end_task(s, task, FALSE, GS_EXC_NONE);
}

static gboolean
slot_free(Sim *s)
{
	return s->w->executor_slots == 0 || s->running < s->w->executor_slots;
}

static void
admit(Sim *s, SimTask *task)
{
	if (slot_free(s) && g_queue_is_empty(&s->queue)) {
		start_task(s, task);
		return;
	}
	task->status = TASK_QUEUED;
	g_queue_push_tail(&s->queue, task);
	log_task(s, task, "queued");
}

/* Hands back what an ending thread holds, through its interpreter. */
static void
drain_frees(Sim *s, SimThread *t)
{
	for (GsEffect e = gs_interp_step(t->interp, s->now); e.kind == GS_EFFECT_FREE;
	     e = gs_interp_step(t->interp, s->now))
		do_free(s, t, &e);
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
	for (guint i = 0; i < task->threads->len; i++) {
		SimThread *t = task->threads->pdata[i];

		if (t->status == T_DONE)
			continue;
		if (t->status == T_SEMAPHORE)
			s->r->totals.semaphore_wait_ns += s->now - t->semaphore_since;
		if (t->status == T_PARKED)
			drain_frees(s, t);
		t->try_due = FALSE;
		gs_interp_abort(t->interp, s->now);
		drain_frees(s, t);
		set_status(s, t, T_DONE);
		t->generation++;
	}
}

static void
collect_metrics(Sim *s, SimTask *task)
{
	GsMetrics m;

	gs_engine_task_metrics(s->engine, task->engine_id, s->now, &m);
	task->result->retries += m.retries;
	task->result->splits += m.splits;
	task->result->blocked_ns += m.blocked_ns;
	task->result->lost_ns += m.lost_ns;
	task->result->max_footprint = MAX(task->result->max_footprint, m.gpu_max_footprint);
	gs_engine_forget_task_metrics(s->engine, task->engine_id);
}

/* A thread's row gets its final state and the exceptions it saw (NULL if none). */
static void
report_thread(Sim *s, SimThread *t)
{
	t->result->final_state = gs_engine_thread_state(s->engine, t->id);
	t->result->exceptions = gs_interp_take_exceptions(t->interp);
	t->reported = TRUE;
}

static void
release_task(Sim *s, SimTask *task)
{
	for (guint i = 0; i < task->threads->len; i++) {
		SimThread *t = task->threads->pdata[i];

		/* stop_threads() has woken every removed waiter: no REMOVE_THROW is left. */
		report_thread(s, t);
	}
	if (task->has_permit) {
		task->has_permit = FALSE;
		s->permits++;
	}
	if (task->waits_for_permit)
		g_queue_remove(&s->permit_queue, task);
	s->running--;
	grant_permits(s);
	while (slot_free(s) && !g_queue_is_empty(&s->queue))
		start_task(s, g_queue_pop_head(&s->queue));
}

static void
end_task(Sim *s, SimTask *task, gboolean failed, GsException failure)
{
	task->status = TASK_ENDED;
	gs_engine_task_done(s->engine, task->engine_id, s->now);
	stop_threads(s, task);
	collect_metrics(s, task);
	log_task(s, task, failed ? "failed" : "done");
	task->result->end_ns = s->now;
	if (failed && task->attempt < s->w->policy.task_attempts) {
		SimTask *again = task_new(s, task->result, task->spec, task->spec_index,
					  task->attempt + 1);

		log_task(s, again, "retry");
		release_task(s, task);
		admit(s, again);
		return;
	}
	task->result->outcome = failed ? GS_OUTCOME_FAILED : GS_OUTCOME_COMPLETED;
	task->result->failure = failure;
	if (failed)
		s->failed_any = TRUE;
	s->open_tasks--;
	release_task(s, task);
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
	g_autoptr(GArray) outside = g_array_new(FALSE, FALSE, sizeof(GsThreadId));

	for (guint i = 0; i < s->threads->len; i++) {
		SimThread *t = s->threads->pdata[i];

		if ((t->status == T_SLEEPING && s->w->policy.sleep_is_blocked) ||
		    t->status == T_SEMAPHORE)
			g_array_append_val(outside, t->id);
	}
	gs_engine_check_deadlocks(s->engine, (GsThreadId *) outside->data, outside->len, s->now);
}

static void
mark_deadlock(Sim *s)
{
	for (guint i = 0; i < s->threads->len; i++) {
		SimThread *t = s->threads->pdata[i];

		if (t->status == T_PARKED || t->status == T_SEMAPHORE)
			t->result->waiting_at_end = TRUE;
	}
	s->r->outcome = GS_OUTCOME_DEADLOCK;
	s->r->totals.deadlocks_unresolved = 1;
}

/* ---- the loop ---- */

static void
fire(Sim *s, const GsEvent *ev)
{
	SimThread *t;

	switch ((EventKind) ev->kind) {
	case EV_TASK_ARRIVE:
		admit(s, s->tasks->pdata[ev->target]);
		break;
	case EV_THREAD_RESUME:
		t = thread_of(s, ev->target);
		if (t != NULL && t->generation == ev->generation && t->status != T_DONE) {
			set_status(s, t, T_READY);
			run_thread(s, t);
		}
		break;
	case EV_WATCHDOG:
		s->watchdog_armed = FALSE;
		watchdog(s);
		break;
	}
	drain_wakes(s);
}

static void
arm_watchdog(Sim *s)
{
	if (s->w->policy.watchdog <= 0 || s->watchdog_armed || s->open_tasks == 0)
		return;
	s->watchdog_armed = TRUE;
	schedule(s, s->now + s->w->policy.watchdog, EV_WATCHDOG, 0, 0);
}

/* Threads wait and nothing but the watchdog is left that could wake them. */
static gboolean
hopeless(Sim *s)
{
	return s->pending_events == 0 && all_threads_waiting(s);
}

static void
run_loop(Sim *s)
{
	GsEvent next, ev;
	guint64 pass_end;

	while (s->open_tasks > 0) {
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
		if (s->opts.max_time > 0 && next.time > s->opts.max_time) {
			s->now = MAX(s->now, s->opts.max_time);
			s->r->outcome = GS_OUTCOME_TIMEOUT;
			return;
		}
		s->now = next.time;
		/* One pass: the events due now; what they schedule fires in the next. */
		pass_end = gs_heap_next_seq(s->heap);
		while (gs_heap_pop_due_before(s->heap, s->now, pass_end, &ev)) {
			if (ev.kind != EV_WATCHDOG)
				s->pending_events--;
			s->r->events_processed++;
			fire(s, &ev);
		}
		if (s->changed)
			sample(s);
		/* The watchdog's tick was the last chance, and it changed nothing. */
		if (last_hope && hopeless(s)) {
			mark_deadlock(s);
			return;
		}
		arm_watchdog(s);
	}
}

/* ---- set-up ---- */

/* Whether every task id is written as an integer (then task_id ranks by value). */
static gboolean
ids_are_integers(const GsWorkload *w)
{
	for (guint i = 0; i < w->tasks->len; i++) {
		const char *id = ((GsTaskSpec *) w->tasks->pdata[i])->id;

		if (!g_ascii_string_to_signed(id, 10, G_MININT64, G_MAXINT64, NULL, NULL))
			return FALSE;
	}
	return TRUE;
}

typedef struct {
	gint64 id;   /* the written id, or the task's place in the file */
	guint copy;  /* which copy of a repeated task */
	SimTask *task;
} IdKey;

static int
compare_id_keys(gconstpointer a, gconstpointer b)
{
	const IdKey *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->copy < y->copy ? -1 : x->copy > y->copy;
}

/*
 * policy.priority task_id: a smaller task id ranks higher. Ids written as
 * integers compare as numbers; when any id is not an integer, tasks rank by
 * their place in the file. Copies of a repeated task rank in copy order.
 */
static void
rank_by_id(Sim *s)
{
	g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(IdKey));
	gboolean integers = ids_are_integers(s->w);

	for (guint i = 0; i < s->tasks->len; i++) {
		SimTask *task = s->tasks->pdata[i];
		IdKey key = {.task = task, .copy = i};

		key.id = task->spec_index;
		if (integers)
			g_ascii_string_to_signed(task->spec->id, 10, G_MININT64, G_MAXINT64, &key.id,
						 NULL);
		g_array_append_val(keys, key);
	}
	g_array_sort(keys, compare_id_keys);
	for (guint i = 0; i < keys->len; i++)
		g_array_index(keys, IdKey, i).task->id_rank = i;
}

static void
add_tasks(Sim *s)
{
	for (guint i = 0; i < s->w->tasks->len; i++) {
		const GsTaskSpec *spec = s->w->tasks->pdata[i];

		for (guint k = 0; k < MAX(spec->repeat, 1); k++) {
			GsTaskResult *result = g_new0(GsTaskResult, 1);

			result->id = spec->repeat > 1 ? g_strdup_printf("%s#%u", spec->id, k)
						      : g_strdup(spec->id);
			g_ptr_array_add(s->r->tasks, result);
			task_new(s, result, spec, i, 1);
			s->open_tasks++;
			schedule(s, spec->start + (GsTime) k * spec->every, EV_TASK_ARRIVE,
				 s->tasks->len - 1, 0);
		}
	}
	s->r->totals.tasks = s->open_tasks;
	rank_by_id(s);
}

static void
add_pool_threads(Sim *s)
{
	for (guint i = 0; i < s->w->pool_threads->len; i++) {
		const GsThreadSpec *spec = s->w->pool_threads->pdata[i];
		SimThread *t = thread_new(s, spec, NULL, spec->name);

		resume_at(s, t, 0, T_READY);
	}
}

static void
sim_init(Sim *s, const GsWorkload *w, const GsSimOptions *opts)
{
	GsEngineOpts engine_opts = gs_policy_engine_opts(&w->policy);

	memset(s, 0, sizeof *s);
	s->w = w;
	if (opts != NULL)
		s->opts = *opts;
	s->r = gs_result_new();
	s->r->seed = w->seed;
	s->engine = gs_engine_new(&engine_opts);
	gs_engine_set_observer(s->engine, &observer, s);
	s->heap = gs_heap_new();
	s->gpus = g_ptr_array_new_with_free_func((GDestroyNotify) gs_device_free);
	for (guint i = 0; i < MAX(w->gpu.devices, 1); i++)
		g_ptr_array_add(s->gpus, gs_device_new(w->gpu.capacity, w->gpu.alignment,
						       w->gpu.allocator));
	s->host = gs_device_new(w->host.capacity, 1, GS_ALLOCATOR_EXACT);
	s->tasks = g_ptr_array_new_with_free_func(task_free);
	s->threads = g_ptr_array_new_with_free_func(thread_free);
	g_queue_init(&s->queue);
	g_queue_init(&s->permit_queue);
	s->permits = w->policy.concurrent_gpu_tasks;
	s->next_thread = 1;
	s->r->tiers[GS_TIER_GPU].capacity = w->gpu.capacity * MAX(w->gpu.devices, 1);
	s->r->tiers[GS_TIER_HOST].capacity = w->host.capacity;
	s->r->tiers[GS_TIER_DISK].capacity = w->disk.capacity;
}

/*
 * A task attempt a deadlock or --max-time stopped: it reports what it did so
 * far, waits in progress included, and the run's outcome as its own.
 */
static void
cut_short(Sim *s, SimTask *task)
{
	if (task->status == TASK_ENDED)
		return;
	if (task->status == TASK_RUNNING) {
		collect_metrics(s, task);
		for (guint i = 0; i < task->threads->len; i++) {
			SimThread *t = task->threads->pdata[i];

			if (t->status == T_PARKED)
				task->result->blocked_ns += s->now - t->parked_since;
		}
	}
	task->result->outcome = s->r->outcome;
	task->result->end_ns = s->now;
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
	if (r->outcome != GS_OUTCOME_DEADLOCK && r->outcome != GS_OUTCOME_TIMEOUT)
		r->outcome = s->failed_any ? GS_OUTCOME_FAILED : GS_OUTCOME_COMPLETED;
	for (guint i = 0; i < s->threads->len; i++) {
		SimThread *t = s->threads->pdata[i];

		if (!t->reported)
			report_thread(s, t);
	}
	for (guint i = 0; i < s->tasks->len; i++)
		cut_short(s, s->tasks->pdata[i]);
	for (guint i = 0; i < r->tasks->len; i++) {
		GsTaskResult *task = r->tasks->pdata[i];

		r->totals.tasks_completed += task->outcome == GS_OUTCOME_COMPLETED;
		r->totals.tasks_failed += task->outcome == GS_OUTCOME_FAILED;
		r->totals.retries += task->retries;
		r->totals.splits += task->splits;
		r->totals.blocked_ns += task->blocked_ns;
		r->totals.lost_ns += task->lost_ns;
	}
}

static void
sim_clear(Sim *s)
{
	g_ptr_array_unref(s->threads);
	g_ptr_array_unref(s->tasks);
	g_queue_clear(&s->queue);
	g_queue_clear(&s->permit_queue);
	g_ptr_array_unref(s->gpus);
	gs_device_free(s->host);
	gs_heap_free(s->heap);
	gs_engine_free(s->engine);
}

GsResult *
gs_sim_run(const GsWorkload *w, const GsSimOptions *opts)
{
	Sim s;
	GsResult *r;

	sim_init(&s, w, opts);
	add_tasks(&s);
	add_pool_threads(&s);
	sample(&s);
	arm_watchdog(&s);
	run_loop(&s);
	sim_finish(&s);
	r = s.r;
	sim_clear(&s);
	return r;
}

/* ---- what is not modelled yet ---- */

typedef struct {
	gboolean reserve, sync, spillable, uses;
} OpsUsed;

static void
note_ops(const GArray *ops, OpsUsed *used)
{
	for (guint i = 0; ops != NULL && i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		switch (op->kind) {
		case GS_OP_RESERVE:
		case GS_OP_RELEASE:
			used->reserve = TRUE;
			break;
		case GS_OP_ALLOC:
			used->reserve |= op->alloc.reservation >= 0;
			used->spillable |= op->alloc.spillable;
			break;
		case GS_OP_SYNC:
			used->sync = TRUE;
			break;
		case GS_OP_SPILLABLE:
		case GS_OP_UNSPILLABLE:
			used->spillable = TRUE;
			break;
		case GS_OP_COMPUTE:
			used->uses |= op->compute.uses != NULL && op->compute.uses->len > 0;
			used->sync |= op->compute.stream >= 0;
			break;
		case GS_OP_RETRY:
			used->spillable |= op->retry.input != NULL && op->retry.input->len > 0;
			note_ops(op->retry.ops, used);
			break;
		case GS_OP_REPEAT:
			note_ops(op->repeat.ops, used);
			break;
		case GS_OP_FREE:
		case GS_OP_SLEEP:
		case GS_OP_UNTIL:
		case GS_OP_BLOCK_UNTIL_READY:
		case GS_OP_POOL:
		case GS_OP_WAIT_ON_POOL:
		case GS_OP_INJECT:
		case GS_OP_TASK_DONE:
		case GS_N_OP_KINDS:
			break;
		}
	}
}

GPtrArray *
gs_sim_unmodelled(const GsWorkload *w)
{
	GPtrArray *found = g_ptr_array_new();
	OpsUsed used = {0};

	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		for (guint k = 0; k < task->threads->len; k++)
			note_ops(((GsThreadSpec *) task->threads->pdata[k])->ops, &used);
	}
	for (guint i = 0; i < w->pool_threads->len; i++)
		note_ops(((GsThreadSpec *) w->pool_threads->pdata[i])->ops, &used);
	if (w->policy.spill.enabled || used.spillable)
		g_ptr_array_add(found, "spilling (policy.spill, spillable buffers)");
	if (w->policy.spill.proactive)
		g_ptr_array_add(found, "proactive downgrade (policy.spill.proactive)");
	if (used.reserve)
		g_ptr_array_add(found, "reservations (reserve, release, alloc reservation)");
	if (used.uses || used.sync)
		g_ptr_array_add(found, "buffer locks of compute uses and streams (sync)");
	if (w->policy.admission == GS_ADMISSION_FAIR_SHARE)
		g_ptr_array_add(found, "fair-share admission (policy.admission)");
	return found;
}
