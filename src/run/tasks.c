/*
 * gpusim: task attempts, executor slots and the GPU semaphore (see tasks.h).
 */
#include "config.h"

#include "run/tasks.h"

static void
log_task(GsRunTasks *tasks, GsRunTask *task, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_TASK, .task = task->result->id, .what = what};

	tasks->hooks->log(tasks->driver, &e);
}

static void
log_permit(GsRunTasks *tasks, GsRunTask *task, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_SEMAPHORE, .task = task->result->id, .what = what};

	tasks->hooks->log(tasks->driver, &e);
}

void
gs_run_tasks_init(GsRunTasks *tasks, const GsWorkload *w, GsResult *result, GsEngine *engine,
		  const GsRunHooks *hooks, gpointer driver)
{
	*tasks = (GsRunTasks){.w = w, .result = result, .engine = engine, .hooks = hooks,
			      .driver = driver, .permits = w->policy.concurrent_gpu_tasks};
	g_queue_init(&tasks->queue);
	g_queue_init(&tasks->permit_queue);
}

void
gs_run_tasks_clear(GsRunTasks *tasks)
{
	g_queue_clear(&tasks->queue);
	g_queue_clear(&tasks->permit_queue);
}

/* A new attempt of the logical task @result; counted in the result. */
static GsRunTask *
attempt_new(GsRunTasks *tasks, GsTaskResult *result, const GsTaskSpec *spec, guint spec_index,
	    guint attempt, guint id_rank)
{
	GsRunTask *task = tasks->hooks->task_new(tasks->driver);

	task->result = result;
	task->spec = spec;
	task->spec_index = spec_index;
	task->attempt = attempt;
	task->id_rank = id_rank;
	task->engine_id = tasks->next_engine_id++;
	result->attempts = attempt;
	tasks->result->totals.task_attempts++;
	return task;
}

guint
gs_run_tasks_add_all(GsRunTasks *tasks)
{
	g_autoptr(GArray) ranks = gs_workload_id_ranks(tasks->w);
	guint n = 0;

	for (guint i = 0; i < tasks->w->tasks->len; i++) {
		const GsTaskSpec *spec = tasks->w->tasks->pdata[i];

		for (guint k = 0; k < MAX(spec->repeat, 1); k++, n++) {
			g_autofree char *id = gs_task_copy_id(spec, k);
			GsTaskResult *result = gs_result_add_task(tasks->result, id);
			GsRunTask *task = attempt_new(tasks, result, spec, i, 1,
						      g_array_index(ranks, guint, n));

			tasks->open++;
			tasks->hooks->arrives(tasks->driver, task,
					      gs_time_add(spec->start, gs_time_mul(k, spec->every)));
		}
	}
	tasks->result->totals.tasks = tasks->open;
	return n;
}

static gboolean
slot_free(const GsRunTasks *tasks)
{
	return tasks->w->executor_slots == 0 || tasks->running < tasks->w->executor_slots;
}

static void
start(GsRunTasks *tasks, GsRunTask *task)
{
	task->status = GS_RUN_TASK_RUNNING;
	tasks->running++;
	tasks->started++;
	log_task(tasks, task, "start");
	if (task->attempt == 1)
		task->result->start_ns = tasks->hooks->now(tasks->driver);
	gs_task_priorities_set(gs_engine_get_priorities(tasks->engine), task->engine_id,
			       gs_task_start_priority(task->spec, tasks->w->policy.priority,
						      task->id_rank, tasks->started));
	gs_workload_make_task(tasks->w, task->spec_index);
	tasks->hooks->start_threads(tasks->driver, task);
}

void
gs_run_tasks_admit(GsRunTasks *tasks, GsRunTask *task)
{
	if (slot_free(tasks) && g_queue_is_empty(&tasks->queue)) {
		start(tasks, task);
		return;
	}
	task->status = GS_RUN_TASK_QUEUED;
	g_queue_push_tail(&tasks->queue, task);
	log_task(tasks, task, "queued");
}

gboolean
gs_run_tasks_use_permits(const GsRunTasks *tasks)
{
	return tasks->w->policy.concurrent_gpu_tasks > 0;
}

gboolean
gs_run_task_has_permit(const GsRunTask *task)
{
	return g_atomic_int_get(&task->has_permit);
}

gboolean
gs_run_tasks_take_permit(GsRunTasks *tasks, GsRunTask *task)
{
	if (gs_run_task_has_permit(task))
		return TRUE;
	if (tasks->permits > 0 && !task->waits_for_permit) {
		tasks->permits--;
		g_atomic_int_set(&task->has_permit, TRUE);
		log_permit(tasks, task, "acquire");
		return TRUE;
	}
	if (!task->waits_for_permit) {
		task->waits_for_permit = TRUE;
		g_queue_push_tail(&tasks->permit_queue, task);
		log_permit(tasks, task, "wait");
	}
	return FALSE;
}

static void
grant_permits(GsRunTasks *tasks)
{
	while (tasks->permits > 0 && !g_queue_is_empty(&tasks->permit_queue)) {
		GsRunTask *task = g_queue_pop_head(&tasks->permit_queue);

		tasks->permits--;
		g_atomic_int_set(&task->has_permit, TRUE);
		task->waits_for_permit = FALSE;
		log_permit(tasks, task, "acquire");
		tasks->hooks->permit_granted(tasks->driver, task);
	}
}

void
gs_run_tasks_end(GsRunTasks *tasks, GsRunTask *task, gboolean failed)
{
	GsTime now = tasks->hooks->now(tasks->driver);

	task->status = GS_RUN_TASK_ENDED;
	gs_engine_task_done(tasks->engine, task->engine_id, now);
	tasks->hooks->stop_threads(tasks->driver, task);
	log_task(tasks, task, failed ? "failed" : "done");
	task->result->end_ns = now;
}

/* The freed slots go to the queue's head, after the freed permits to the tasks waiting for one. */
static void
hand_on(GsRunTasks *tasks)
{
	grant_permits(tasks);
	while (slot_free(tasks) && !g_queue_is_empty(&tasks->queue))
		start(tasks, g_queue_pop_head(&tasks->queue));
}

gboolean
gs_run_tasks_finish(GsRunTasks *tasks, GsRunTask *task, gboolean failed, GsException failure)
{
	if (gs_run_task_has_permit(task)) {
		g_atomic_int_set(&task->has_permit, FALSE);
		tasks->permits++;
	}
	if (task->waits_for_permit)
		g_queue_remove(&tasks->permit_queue, task);
	tasks->running--;
	if (failed && task->attempt < tasks->w->policy.task_attempts) {
		/* Ranked 0 by id, as both drivers have always ranked a new attempt. */
		GsRunTask *again = attempt_new(tasks, task->result, task->spec, task->spec_index,
					       task->attempt + 1, 0);

		log_task(tasks, again, "retry");
		hand_on(tasks);
		gs_run_tasks_admit(tasks, again);
		return FALSE;
	}
	task->result->outcome = failed ? GS_OUTCOME_FAILED : GS_OUTCOME_COMPLETED;
	task->result->failure = failure;
	if (tasks->drop_specs && task->spec->repeat <= 1)
		gs_workload_drop_task(tasks->w, task->spec_index);
	tasks->failed_any |= failed;
	tasks->open--;
	hand_on(tasks);
	return TRUE;
}

void
gs_run_tasks_report_leak(GsRunTasks *tasks, GsRunTask *task, const char *thread, gint64 bytes)
{
	GsLogEntry e = {.kind = GS_LOG_LEAK, .task = task->result->id, .thread = thread,
			.bytes = bytes};

	if (bytes <= 0)
		return;
	task->result->leaked_bytes += bytes;
	tasks->hooks->log(tasks->driver, &e);
}

void
gs_run_tasks_cut_short(GsRunTasks *tasks, GsRunTask *task, GsTime end)
{
	if (task->status == GS_RUN_TASK_ENDED)
		return;
	if (task->status == GS_RUN_TASK_RUNNING)
		tasks->hooks->cut_short(tasks->driver, task);
	task->result->outcome = tasks->result->outcome;
	task->result->end_ns = end;
}

void
gs_run_tasks_settle_outcome(GsRunTasks *tasks)
{
	GsResult *r = tasks->result;

	if (r->outcome != GS_OUTCOME_DEADLOCK && r->outcome != GS_OUTCOME_TIMEOUT)
		r->outcome = tasks->failed_any ? GS_OUTCOME_FAILED : GS_OUTCOME_COMPLETED;
}

GsException
gs_run_associate(GsEngine *engine, GsThreadId thread, gboolean shuffle, const GsOp *op,
		 const GsTaskId *ids, guint n_ids, GsTime now)
{
	GsEngineError refused = GS_ENGINE_ERROR_NONE;

	if (op->kind == GS_OP_POOL && op->pool.done) {
		gs_engine_pool_done(engine, thread, ids, n_ids, now);
	} else if (op->kind == GS_OP_POOL) {
		refused = gs_engine_register_pool(engine, thread, ids, n_ids, shuffle, now);
	} else if (op->kind == GS_OP_ASSOCIATE) {
		for (guint i = 0; i < n_ids && refused == GS_ENGINE_ERROR_NONE; i++)
			refused = gs_engine_register_dedicated(engine, thread, ids[i], now);
	} else if (op->kind == GS_OP_DISSOCIATE) {
		for (guint i = 0; i < n_ids; i++)
			gs_engine_remove_association(engine, thread, ids[i], now);
	}
	return refused == GS_ENGINE_ERROR_NONE ? GS_EXC_NONE : GS_EXC_ILLEGAL_ARGUMENT;
}

gboolean
gs_run_is_association(const GsOp *op)
{
	return op->kind == GS_OP_POOL || op->kind == GS_OP_ASSOCIATE ||
	       op->kind == GS_OP_DISSOCIATE;
}
