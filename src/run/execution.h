/*
 * gpusim: Spark's execution memory in a run (memory.execution, SPEC §3.5.3):
 * the memory manager's pools, its storage, and each task's
 * TaskMemoryManager, whichever driver runs them.
 *
 * This module decides what acquire_execution, release_execution,
 * allocate_page, free_page and clean_up do, with the rules of
 * include/gpusim/pages.h (Spark's own arithmetic):
 *
 * Acquiring (TaskMemoryManager.acquireExecutionMemory). One pass of the
 * pool of the consumer's mode: with share fair, ExecutionMemoryPool's
 * 1/2N..1/N rule, which grants part of a request, or none, at once, and
 * makes the task wait only while it would stay below 1/2N; with share none,
 * what is free of one counter over both modes. A grant short of the
 * request asks the task's consumers of the same mode to spill (the
 * smallest that covers what is missing, else the largest, the requester
 * last) and takes what each spill frees again, one pass each, without
 * waiting. A consumer spills all it holds: its pages and its other bytes.
 * The grant goes to the consumer, if one asked.
 *
 * Pages (TaskMemoryManager.allocatePage through MemoryConsumer.allocatePage).
 * A page is max(page_size, size); one above 17 GB throws
 * TooLargePageException before anything is acquired; a grant of 0, or one
 * below the size asked, throws SparkOutOfMemoryError (what was granted goes
 * back); with 8192 pages taken, IllegalStateException. A page takes the
 * lowest free number and its address is number << 51.
 *
 * Releases are clamped to what the consumer (or, without one, the task)
 * holds. clean_up (cleanUpAllAllocatedMemory) frees every page, drops the
 * consumers and releases everything the task holds; what it released is
 * the leak. The same happens when a task attempt ends. Memory released
 * lets the tasks that wait try again.
 *
 * Storage (share fair: UnifiedMemoryManager, include/gpusim/storage.h).
 * Beside each mode's execution pool sits a storage pool: acquire_storage
 * caches a block, borrowing execution's free memory and evicting blocks,
 * or is refused; release_storage and release_all_storage give storage
 * back, waking no task (Spark's storage pool does not notify the waiting
 * ones). Before every pass of an execution pool, execution takes back
 * storage's free memory and what storage holds beyond its region.
 *
 * Every call, grant, wait, spill, page and leak is logged (GS_LOG_EXECUTION),
 * and every storage answer, borrowing, eviction, reclaiming and release
 * (GS_LOG_STORAGE). How a thread waits is the driver's (tier-ops.h puts it
 * in line).
 */
#ifndef GPUSIM_RUN_EXECUTION_H
#define GPUSIM_RUN_EXECUTION_H

#include <gpusim/gpusim.h>

#include "run/hooks.h"

G_BEGIN_DECLS

typedef struct GsRunExecution GsRunExecution;

/** The pools of @w's memory.execution; logs through @hooks. */
GsRunExecution *gs_run_execution_new(const GsWorkload *w, const GsRunHooks *hooks,
				     gpointer driver);
void gs_run_execution_free(GsRunExecution *x);

/**
 * Carries out @op, an execution op of the thread named @name (with spec
 * @spec) in @task. FALSE when the task must wait for memory to be
 * released: nothing changed but the task's place in its pool, and the op
 * is to be carried out again after a release (*@released turns TRUE).
 * *@thrown is what it throws; *@released turns TRUE when it released
 * memory, which may let a waiting task go on.
 */
gboolean gs_run_execution_op(GsRunExecution *x, GsRunTask *task, const char *name,
			     const GsThreadSpec *spec, const GsOp *op, GsException *thrown,
			     gboolean *released);

/**
 * @task's attempt ended: its pages, consumers and execution memory go
 * (a leak, if any, is logged). TRUE when memory was released.
 */
gboolean gs_run_execution_task_ends(GsRunExecution *x, GsRunTask *task);

/** Frees what is left of @task's execution memory when its record goes (a run cut short). */
void gs_run_task_memory_free(GsRunTask *task);

G_END_DECLS

#endif /* GPUSIM_RUN_EXECUTION_H */
