/*
 * gpusim: who ranks above whom (Spark-RAPIDS TaskPriority and thread priority).
 *
 * This module decides the order the engine uses for every choice it makes: the
 * thread woken by a free (highest), the deadlock rollback victim (lowest) and
 * the thread told to split (highest, by default). It does not decide when those
 * choices are made.
 *
 * Task priority. A task's priority is a number; larger ranks higher. In FIFO
 * mode (the default, as spark-rapids-jni since jni#3290) the first task ever
 * asked about gets G_MAXINT64 - 1, the next one less, and so on: older tasks win
 * so that the first is not starved by newer ones. In TASK_ID mode (before
 * jni#3290) the priority is G_MAXINT64 - (task + 1): a smaller id ranks higher.
 * An explicit priority set by the caller overrides either. Assignment is lazy:
 * a task gets its FIFO slot the first time anybody asks; the engine asks when a
 * task's first thread registers, as the plugin does at task start.
 * Forgetting a task (at task done) frees its slot: asked again later, it would
 * get a new, lower priority.
 *
 * Thread priority is the pair (task priority, thread id), compared in that
 * order; a larger thread id wins a tie. A dedicated thread takes its task's
 * priority; a shuffle pool thread ranks above every task thread (G_MAXINT64);
 * a non-shuffle pool thread takes the priority of the numerically smallest task
 * id it works for (as the real code does, quirk §6.5 of the reference), or, with
 * GS_POOL_PRIORITY_BEST_TASK, the best priority among its tasks; an empty set
 * counts as task -1, which is G_MAXINT64.
 */
#ifndef GPUSIM_PRIORITY_H
#define GPUSIM_PRIORITY_H

#include <gpusim/thread-state.h>

G_BEGIN_DECLS

typedef enum {
	GS_PRIORITY_FIFO = 0,    /* first seen is highest */
	GS_PRIORITY_TASK_ID = 1, /* smaller task id is higher */
} GsPriorityMode;

typedef enum {
	GS_POOL_PRIORITY_SMALLEST_TASK_ID = 0, /* the reference's rule */
	GS_POOL_PRIORITY_BEST_TASK = 1,        /* the best-ranked task of the set */
} GsPoolPriorityRule;

/** A thread's rank: compare with gs_priority_compare(). */
typedef struct {
	gint64 task;
	GsThreadId thread;
} GsPriority;

typedef struct GsTaskPriorities GsTaskPriorities;

GS_API GsTaskPriorities *gs_task_priorities_new(GsPriorityMode mode);
GS_API void gs_task_priorities_free(GsTaskPriorities *prio);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsTaskPriorities, gs_task_priorities_free)

GS_API GsPriorityMode gs_task_priorities_get_mode(const GsTaskPriorities *prio);

/** The task's priority, assigning its FIFO slot if it has none. -1 gives G_MAXINT64. */
GS_API gint64 gs_task_priorities_get(GsTaskPriorities *prio, GsTaskId task);

/** Fixes a task's priority explicitly (larger is higher). */
GS_API void gs_task_priorities_set(GsTaskPriorities *prio, GsTaskId task, gint64 value);

/** Forgets a task's slot; returns TRUE if it had one. */
GS_API gboolean gs_task_priorities_forget(GsTaskPriorities *prio, GsTaskId task);

/**
 * A number that changes whenever a task's priority may have changed (an
 * explicit set, a forgotten slot), so that callers can cache priorities.
 */
GS_API guint64 gs_task_priorities_generation(const GsTaskPriorities *prio);

/** TRUE if the task currently has a slot (FIFO or explicit). */
GS_API gboolean gs_task_priorities_has(const GsTaskPriorities *prio, GsTaskId task);

/** The rank of a thread under the rules above. */
GS_API GsPriority gs_thread_priority(GsTaskPriorities *prio, const GsThreadView *thread,
				     GsPoolPriorityRule pool_rule);

/** < 0 if @a ranks below @b, 0 if equal, > 0 if above (inline: heaps compare ranks often). */
static inline int
gs_priority_compare(GsPriority a, GsPriority b)
{
	if (a.task != b.task)
		return a.task < b.task ? -1 : 1;
	if (a.thread != b.thread)
		return a.thread < b.thread ? -1 : 1;
	return 0;
}

G_END_DECLS

#endif /* GPUSIM_PRIORITY_H */
