/*
 * gpusim: task priority slots and thread ranking.
 *
 * The slots live in a hash table keyed by task id; it is only ever looked up,
 * never iterated, so its order cannot leak into a decision.
 */
#include "config.h"

#include <gpusim/priority.h>

struct GsTaskPriorities {
	GsPriorityMode mode;
	GHashTable *slots; /* GsTaskId* -> gint64* */
	gint64 next_fifo;  /* the slot the next new task gets */
	guint64 generation;
};

GsTaskPriorities *
gs_task_priorities_new(GsPriorityMode mode)
{
	GsTaskPriorities *prio = g_new0(GsTaskPriorities, 1);

	prio->mode = mode;
	prio->slots = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	prio->next_fifo = G_MAXINT64 - 1;
	return prio;
}

void
gs_task_priorities_free(GsTaskPriorities *prio)
{
	if (prio == NULL)
		return;
	g_hash_table_destroy(prio->slots);
	g_free(prio);
}

GsPriorityMode
gs_task_priorities_get_mode(const GsTaskPriorities *prio)
{
	return prio->mode;
}

static void
store(GsTaskPriorities *prio, GsTaskId task, gint64 value)
{
	g_hash_table_insert(prio->slots, g_memdup2(&task, sizeof task),
			    g_memdup2(&value, sizeof value));
}

gint64
gs_task_priorities_get(GsTaskPriorities *prio, GsTaskId task)
{
	const gint64 *slot;
	gint64 value;

	if (task < 0)
		return G_MAXINT64;
	slot = g_hash_table_lookup(prio->slots, &task);
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
	if (!g_hash_table_remove(prio->slots, &task))
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
	return g_hash_table_contains(prio->slots, &task);
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
