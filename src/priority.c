/*
 * gpusim: task priority slots and thread ranking.
 *
 * Drivers hand out task ids 0, 1, 2..., so the slots of small ids sit in an
 * array indexed by id (a value and a presence bit each: 8 bytes and a bit per
 * task, where a hash table entry cost about 50); any other id goes to a hash
 * table. Both are only ever looked up, never iterated, so their order cannot
 * leak into a decision.
 */
#include "config.h"

#include <string.h>

#include <gpusim/priority.h>

/* Past the end of the array by at most this much, an id still makes it grow. */
#define DENSE_SLACK 1024

struct GsTaskPriorities {
	GsPriorityMode mode;
	gint64 *values;     /* by task id, below n_dense ... */
	guint64 *present;   /* ... a bit per id: its slot is set */
	guint64 n_dense;    /* a multiple of 64 */
	GHashTable *sparse; /* GsTaskId* -> gint64*, the other ids (NULL until one comes) */
	gint64 next_fifo;   /* the slot the next new task gets */
	guint64 generation;
};

GsTaskPriorities *
gs_task_priorities_new(GsPriorityMode mode)
{
	GsTaskPriorities *prio = g_new0(GsTaskPriorities, 1);

	prio->mode = mode;
	prio->next_fifo = G_MAXINT64 - 1;
	return prio;
}

void
gs_task_priorities_free(GsTaskPriorities *prio)
{
	if (prio == NULL)
		return;
	g_free(prio->values);
	g_free(prio->present);
	if (prio->sparse != NULL)
		g_hash_table_destroy(prio->sparse);
	g_free(prio);
}

static gboolean
is_dense(const GsTaskPriorities *prio, GsTaskId task)
{
	return task >= 0 && (guint64) task < prio->n_dense;
}

static gboolean
dense_has(const GsTaskPriorities *prio, GsTaskId task)
{
	return (prio->present[task / 64] >> (task % 64)) & 1;
}

/* Makes the array reach @task when it is close enough to the end. */
static void
reach(GsTaskPriorities *prio, GsTaskId task)
{
	guint64 n;

	if (task < 0 || (guint64) task < prio->n_dense || (guint64) task >= prio->n_dense + DENSE_SLACK)
		return;
	n = MAX(MAX(2 * prio->n_dense, (guint64) task + 1), 64);
	n = (n + 63) / 64 * 64;
	prio->values = g_renew(gint64, prio->values, n);
	prio->present = g_renew(guint64, prio->present, n / 64);
	memset(prio->present + prio->n_dense / 64, 0, (n - prio->n_dense) / 64 * sizeof(guint64));
	prio->n_dense = n;
}

static void
store(GsTaskPriorities *prio, GsTaskId task, gint64 value)
{
	reach(prio, task);
	if (is_dense(prio, task)) {
		prio->values[task] = value;
		prio->present[task / 64] |= (guint64) 1 << (task % 64);
		return;
	}
	if (prio->sparse == NULL)
		prio->sparse = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	g_hash_table_insert(prio->sparse, g_memdup2(&task, sizeof task),
			    g_memdup2(&value, sizeof value));
}

/* The stored slot of @task, or NULL. */
static const gint64 *
lookup(const GsTaskPriorities *prio, GsTaskId task)
{
	if (is_dense(prio, task))
		return dense_has(prio, task) ? &prio->values[task] : NULL;
	return prio->sparse != NULL ? g_hash_table_lookup(prio->sparse, &task) : NULL;
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
	if (lookup(prio, task) == NULL)
		return FALSE;
	if (is_dense(prio, task))
		prio->present[task / 64] &= ~((guint64) 1 << (task % 64));
	else
		g_hash_table_remove(prio->sparse, &task);
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
