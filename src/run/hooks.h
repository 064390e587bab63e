/*
 * gpusim: what a driver does for the run layer, in one table.
 *
 * The run layer decides; its driver carries out. Each driver fills one
 * GsRunHooks with its own functions and hands it, with itself as `driver`,
 * to every module of the layer it uses (tasks.h, tier-ops.h, watch.h). A
 * module calls only the hooks it names; a test's fake driver may leave the
 * others NULL. The layer never waits, reads a clock or takes a lock itself:
 * the simulator calls it from its one thread, the real-thread driver under
 * its engine mutex.
 */
#ifndef GPUSIM_RUN_HOOKS_H
#define GPUSIM_RUN_HOOKS_H

#include <gpusim/gpusim.h>

#include "run/result.h"

G_BEGIN_DECLS

typedef struct GsRunTask GsRunTask;
typedef struct GsRunThreadTiers GsRunThreadTiers;
typedef struct GsRunTaskMemory GsRunTaskMemory;

typedef struct {
	/* The time now, in scenario time. */
	GsTime (*now)(gpointer driver);
	/* An entry for the event log, its time not set. */
	void (*log)(gpointer driver, GsLogEntry *entry);

	/* ---- tasks (tasks.h) ---- */
	/* A new zeroed record whose first member is a GsRunTask. */
	GsRunTask *(*task_new)(gpointer driver);
	/* @task, new, arrives at @at (gs_run_tasks_add_all()). */
	void (*arrives)(gpointer driver, GsRunTask *task, GsTime at);
	/* @task has started: the driver starts its threads. */
	void (*start_threads)(gpointer driver, GsRunTask *task);
	/* @task's attempt has ended (gs_run_tasks_end()): the driver stops its threads. */
	void (*stop_threads)(gpointer driver, GsRunTask *task);
	/* @task was granted its permit: its threads waiting for one go on. */
	void (*permit_granted)(gpointer driver, GsRunTask *task);
	/* @task's attempt was cut short running: the driver adds what it did so far. */
	void (*cut_short)(gpointer driver, GsRunTask *task);

	/* ---- the ops of the tiers (tier-ops.h) ---- */
	/* The task attempt @thread works for; NULL for a pool thread. */
	GsRunTask *(*task_of)(gpointer driver, gpointer thread);
	/* @thread's part in the tiers, made on first use. */
	GsRunThreadTiers *(*tiers_of)(gpointer driver, gpointer thread);
	/* A reservation of @tier was granted: the run's peaks, and that something changed. */
	void (*granted)(gpointer driver, GsTier tier);
	/* A reservation of @tier was given back: its memory came free. */
	void (*released)(gpointer driver, GsTier tier);
	/* @thread, in line, has its reservation now: it goes on. */
	void (*wake)(gpointer driver, gpointer thread);
	/* Appends to @ids the GsSpillBufId of every buffer @thread holds under one of @names. */
	void (*buffers)(gpointer thread, const GsNames *names, GArray *ids);

	/* ---- what the engine tells the run (watch.h) ---- */
	/* The name of thread @id; NULL when it is none of the run's. */
	const char *(*thread_name)(gpointer driver, GsThreadId id);
	/* The engine moved thread @id from @from to @to; its name, as thread_name() gives it. */
	const char *(*thread_moved)(gpointer driver, GsThreadId id, GsThreadState from,
				    GsThreadState to);
	/*
	 * As the engine busts a deadlock on @victim: the name of another thread
	 * of the run that could still make progress without another's help, or
	 * NULL for none.
	 * May be NULL: busts are not checked (real threads, whose own racing
	 * would make any answer stale).
	 */
	const char *(*progressing)(gpointer driver, GsThreadId victim);
} GsRunHooks;

G_END_DECLS

#endif /* GPUSIM_RUN_HOOKS_H */
