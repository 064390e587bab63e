/*
 * gpusim: task priority slots and thread ranking.
 *
 * The slots sit in a GsIdTable (id-table.h) by task id: for the ids drivers
 * hand out in sequence, an array (8 bytes and a presence bit per task, where
 * a hash table entry cost about 50). Only ever looked up, never iterated, so
 * their order cannot leak into a decision.
 */
#include "config.h"

#include <gpusim/priority.h>

#include "core/id-table.h"

struct GsTaskPriorities {
	GsPriorityMode mode;
	GsIdTable slots;    /* GsTaskId -> gint64 */
	gint64 next_fifo;   /* the slot the next new task gets */
	guint64 generation;
};

GsTaskPriorities *
gs_task_priorities_new(GsPriorityMode mode)
{
	GsTaskPriorities *prio = g_new0(GsTaskPriorities, 1);

	prio->mode = mode;
	gs_id_table_init(&prio->slots, sizeof(gint64));
	prio->next_fifo = G_MAXINT64 - 1;
	return prio;
}

void
gs_task_priorities_free(GsTaskPriorities *prio)
{
	if (prio == NULL)
		return;
	gs_id_table_clear(&prio->slots);
	g_free(prio);
}

static void
store(GsTaskPriorities *prio, GsTaskId task, gint64 value)
{
	*(gint64 *) gs_id_table_insert(&prio->slots, (guint64) task) = value;
}

/* The stored slot of @task, or NULL. */
static const gint64 *
lookup(const GsTaskPriorities *prio, GsTaskId task)
{
	return gs_id_table_lookup(&prio->slots, (guint64) task);
}

GsPriorityMode
gs_task_priorities_get_mode(const GsTaskPriorities *prio)
{
	return prio->mode;
}

gint64
gs_task_priorities_get(GsTaskPriorities *prio, GsTaskId task)
{
	const gint64 *slot;
	gint64 value;

	if (task < 0)
		return G_MAXINT64;
	slot = lookup(prio, task);
	if (slot != NULL)
		return *slot;
	if (prio->mode == GS_PRIORITY_TASK_ID) {
		/* Computed, not stored: nothing to forget later. */
		return G_MAXINT64 - (task + 1);
	}
	value = prio->next_fifo--;
	store(prio, task, value);
	return value;
}

void
gs_task_priorities_set(GsTaskPriorities *prio, GsTaskId task, gint64 value)
{
	g_return_if_fail(task >= 0);
	store(prio, task, value);
	prio->generation++;
}

gboolean
gs_task_priorities_forget(GsTaskPriorities *prio, GsTaskId task)
{
	if (task < 0 || !gs_id_table_remove(&prio->slots, (guint64) task))
		return FALSE;
	prio->generation++;
	return TRUE;
}

guint64
gs_task_priorities_generation(const GsTaskPriorities *prio)
{
	/* A FIFO slot given to a new task changes no priority already handed out. */
	return prio->generation;
}

gboolean
gs_task_priorities_has(const GsTaskPriorities *prio, GsTaskId task)
{
	return lookup(prio, task) != NULL;
}

static gint64
pool_task_priority(GsTaskPriorities *prio, const GsThreadView *thread, GsPoolPriorityRule rule)
{
	const GArray *tasks = thread->pool_tasks;
	gint64 best;

	if (tasks == NULL || tasks->len == 0)
		return gs_task_priorities_get(prio, GS_NO_TASK);
	/* The ids are ascending, so the first is the numerically smallest. */
	best = gs_task_priorities_get(prio, g_array_index(tasks, GsTaskId, 0));
	if (rule == GS_POOL_PRIORITY_SMALLEST_TASK_ID)
		return best;
	for (guint i = 1; i < tasks->len; i++)
		best = MAX(best, gs_task_priorities_get(prio, g_array_index(tasks, GsTaskId, i)));
	return best;
}

GsPriority
gs_thread_priority(GsTaskPriorities *prio, const GsThreadView *thread, GsPoolPriorityRule pool_rule)
{
	GsPriority p = {.thread = thread->id};

	if (!thread->is_pool)
		p.task = gs_task_priorities_get(prio, thread->task);
	else if (thread->shuffle)
		p.task = G_MAXINT64;
	else
		p.task = pool_task_priority(prio, thread, pool_rule);
	return p;
}
