/*
 * gpusim: task attempts, executor slots and the GPU semaphore, whichever
 * driver runs them.
 *
 * This module decides when a task starts, which task waits for a slot or a
 * permit and in what order, and what an attempt that ends leaves: another
 * attempt, or the logical task's outcome. How threads start, wait and are
 * woken is the driver's: it keeps its own task records, each with a
 * GsRunTask as its first member, and is called back through its GsRunHooks
 * (hooks.h).
 *
 * Arrivals. gs_run_tasks_add_all() makes a record for every copy of every
 * task of the workload (`repeat`), in file order, and tells the driver when
 * each arrives (`start` plus k times `every`). The driver admits each at its
 * arrival (gs_run_tasks_admit()).
 *
 * Made as they start. A task of a generated workload has its threads made
 * as it starts (gs_workload_make_task()), and, when the driver sets
 * drop_specs, dropped when the logical task is over, unless it repeats.
 *
 * Slots (workload executor_slots; 0: no limit). An admitted task starts at
 * once if a slot is free and no task is queued; otherwise it joins the FIFO
 * queue ("queued" in the event log). An attempt that finishes gives its slot
 * to the head of the queue. A task that starts ("start") is ranked for the
 * engine (policy.priority: by id, or first started first) and its threads are
 * the driver's to start; its first attempt's start is the task's start.
 *
 * Permits (policy.concurrent_gpu_tasks; 0: no semaphore). A task's thread
 * asks for a permit before its GPU work (gs_run_tasks_take_permit()): the
 * task takes a free one ("acquire") unless other tasks wait for one, and
 * otherwise joins the FIFO of waiting tasks ("wait"), once; the driver makes
 * the thread wait. A permit is held until the attempt finishes; then the
 * waiting tasks get the free permits in order and the driver wakes their
 * threads (hooks.permit_granted).
 *
 * Attempts. gs_run_tasks_end() ends a running attempt ("done" or "failed"):
 * the engine forgets the task, the driver stops its threads. Once they are
 * gone, gs_run_tasks_finish() gives back the slot and the permit; an attempt
 * that failed, with attempts left (policy.task_attempts), is tried again as a
 * new record of the same logical task ("retry", admitted after the queue has
 * taken the freed slot); otherwise the logical task has its outcome.
 */
#ifndef GPUSIM_RUN_TASKS_H
#define GPUSIM_RUN_TASKS_H

#include <gpusim/gpusim.h>

#include "run/hooks.h"
#include "run/result.h"

G_BEGIN_DECLS

typedef enum {
	GS_RUN_TASK_PENDING = 0, /* not arrived */
	GS_RUN_TASK_QUEUED,      /* waiting for an executor slot */
	GS_RUN_TASK_RUNNING,
	GS_RUN_TASK_ENDED,       /* done or failed; its threads may still be stopping */
} GsRunTaskStatus;

/* One attempt of a task: the first member of the driver's own record. */
struct GsRunTask {
	GsTaskResult *result;    /* the logical task's row, shared by its attempts */
	const GsTaskSpec *spec;
	GsTaskId engine_id;
	guint spec_index;        /* its spec in the workload's tasks */
	guint attempt;           /* 1, 2, ... */
	guint id_rank;           /* its place when tasks rank by id */
	guint alive;             /* its threads not done yet: the driver counts them */
	gint has_permit;         /* g_atomic_int: a real thread may read it without the lock */
	guint8 status;           /* GsRunTaskStatus */
	guint8 waits_for_permit;
	GsRunTaskMemory *memory; /* its Spark execution memory (execution.h); NULL: none yet */
};

typedef struct {
	const GsWorkload *w;
	GsResult *result;
	GsEngine *engine;
	const GsRunHooks *hooks;
	gpointer driver;
	GQueue queue;            /* GsRunTask* waiting for an executor slot, FIFO */
	GQueue permit_queue;     /* GsRunTask* waiting for a permit, FIFO */
	guint running;           /* attempts holding a slot */
	guint started;           /* attempts started so far: the FIFO rank of the next */
	guint permits;           /* free permits */
	guint open;              /* logical tasks without an outcome */
	gboolean failed_any;
	gboolean drop_specs;     /* the driver reads no thread spec of a task that is over */
	GsTaskId next_engine_id;
} GsRunTasks;

void gs_run_tasks_init(GsRunTasks *tasks, const GsWorkload *w, GsResult *result,
		       GsEngine *engine, const GsRunHooks *hooks, gpointer driver);
void gs_run_tasks_clear(GsRunTasks *tasks);

/** Makes every task copy's first attempt and its result row, in file order; returns how many. */
guint gs_run_tasks_add_all(GsRunTasks *tasks);

/** A task arrives: it starts now, or waits for a slot. */
void gs_run_tasks_admit(GsRunTasks *tasks, GsRunTask *task);

/** Whether tasks need a permit for their GPU work (policy.concurrent_gpu_tasks > 0). */
gboolean gs_run_tasks_use_permits(const GsRunTasks *tasks);

/** TRUE when @task holds a permit; FALSE: it waits for one, in line. */
gboolean gs_run_tasks_take_permit(GsRunTasks *tasks, GsRunTask *task);

/** Whether @task holds a permit; safe without the driver's lock. */
gboolean gs_run_task_has_permit(const GsRunTask *task);

/** Ends @task's running attempt, done or @failed. */
void gs_run_tasks_end(GsRunTasks *tasks, GsRunTask *task, gboolean failed);

/**
 * Once the ended attempt's threads are gone: frees its slot and permit, then
 * tries it again if it @failed (with @failure) and attempts are left, or
 * gives the logical task its outcome. TRUE when the logical task is over.
 */
gboolean gs_run_tasks_finish(GsRunTasks *tasks, GsRunTask *task, gboolean failed,
			     GsException failure);

/**
 * A thread of @task that completed left @bytes allocated (Spark's leak
 * report): added to the task's row and logged (GS_LOG_LEAK), when any.
 */
void gs_run_tasks_report_leak(GsRunTasks *tasks, GsRunTask *task, const char *thread,
			      gint64 bytes);

/**
 * The run was cut short at @end (a deadlock, --max-time): @task, unless it
 * had ended, reports the run's outcome as its own, and a running attempt
 * what it did so far, waits in progress included (hooks.cut_short).
 */
void gs_run_tasks_cut_short(GsRunTasks *tasks, GsRunTask *task, GsTime end);

/**
 * Carries out association op @op for @thread (SPEC pool work_for or
 * done_for, associate, dissociate: RmmSpark's shuffle/pool thread calls,
 * startDedicatedTaskThread and removeDedicatedThreadAssociation), with @ids
 * the engine ids of the running attempts of the tasks it names and @shuffle
 * whether the thread is a shuffle thread. Returns what the op throws:
 * IllegalArgumentException when the engine refuses it (a dedicated thread
 * said to work for a pool, a pool thread dedicated to a task), as the
 * reference throws std::invalid_argument; GS_EXC_NONE otherwise. A pool
 * thread that is done for tasks it does not work for throws nothing, as in
 * the reference.
 */
GsException gs_run_associate(GsEngine *engine, GsThreadId thread, gboolean shuffle,
			     const GsOp *op, const GsTaskId *ids, guint n_ids, GsTime now);

/** Whether @op is one gs_run_associate() carries out. */
gboolean gs_run_is_association(const GsOp *op);

/** The run's outcome once every task is over: failed if any task failed; a cut run keeps its own. */
void gs_run_tasks_settle_outcome(GsRunTasks *tasks);

G_END_DECLS

#endif /* GPUSIM_RUN_TASKS_H */
