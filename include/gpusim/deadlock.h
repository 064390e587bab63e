/*
 * gpusim: deadlock detection and busting (Spark-RAPIDS check_and_update_for_bufn).
 *
 * This module decides, from a snapshot of every thread record, whether the
 * tasks are deadlocked and, if so, which thread rolls back and which splits.
 * It changes nothing: the engine applies the verdict. It is called after every
 * failed allocation and on BUFN_WAIT → BUFN with no outside information (the
 * state-machine view), and by the watchdog with the ids of threads waiting
 * outside the allocator (sleeping, waiting on a queue), which then count as
 * rolled back (BUFN-or-above).
 *
 * The rules, in the order they apply (reference §1.6, §2.3):
 *  1. A thread is BUFN-or-above if it is a dedicated thread marked pool_blocked,
 *     else if it is THREAD_BUFN; a THREAD_BLOCKED thread never is; any other
 *     state is only when the outside set names it.
 *  2. The tasks are those with at least one dedicated thread; tasks served only
 *     by pool threads are not considered.
 *  3. A task is blocked if any of its dedicated threads is BLOCKED or
 *     BUFN-or-above, unless some pool thread working for it is neither: one busy
 *     pool thread unblocks every task it works for.
 *  4. Deadlock iff there is at least one task and every task is blocked.
 *  5. Rollback: the lowest-priority THREAD_BLOCKED thread (any kind, dedicated
 *     or pool). If it is the only one and retry-once is on, it retries its
 *     allocation once (BLOCKED → RUNNING with the flag); otherwise BUFN_THROW.
 *  6. Split: the BUFN tasks are those with a BUFN-or-above dedicated thread, plus
 *     every task whose pool threads are all BUFN-or-above. If there are as many
 *     BUFN tasks as tasks (a size comparison, as the real code does, quirk
 *     §6.10; strict mode compares the sets), the highest-priority THREAD_BUFN
 *     thread splits (GS_SPLIT_LOWEST: the lowest, as the reference's
 *     documentation says). With no thread literally in THREAD_BUFN, nothing
 *     splits. Rollback and split may both happen in one check, and both are
 *     judged on the states before either is applied.
 */
#ifndef GPUSIM_DEADLOCK_H
#define GPUSIM_DEADLOCK_H

#include <gpusim/priority.h>

G_BEGIN_DECLS

typedef enum {
	GS_SPLIT_HIGHEST = 0, /* the real code */
	GS_SPLIT_LOWEST = 1,  /* docs/memory_management.md */
} GsSplitVictim;

typedef struct {
	GsSplitVictim split_victim;
	gboolean retry_before_bufn;   /* the only BLOCKED victim retries once */
	gboolean strict_all_bufn;     /* compare task sets, not their sizes */
	GsPoolPriorityRule pool_priority;
} GsDeadlockOpts;

#define GS_DEADLOCK_OPTS_DEFAULT \
	{ GS_SPLIT_HIGHEST, TRUE, FALSE, GS_POOL_PRIORITY_SMALLEST_TASK_ID }

/** What a check found and decided. Pointers point into the snapshot passed in. */
typedef struct {
	gboolean deadlocked;
	const GsThreadView *rollback;   /* NULL if nothing rolls back */
	gboolean rollback_retry_once;   /* the victim retries once instead of BUFN_THROW */
	const GsThreadView *split;      /* NULL if nothing splits */
	guint n_tasks;                  /* tasks with a dedicated thread */
	guint n_blocked_tasks;
	guint n_bufn_tasks;             /* may count pool-only tasks (quirk §6.10) */
} GsDeadlockVerdict;

/** Reusable working memory, so that a check allocates nothing in the steady state. */
typedef struct GsDeadlockScratch GsDeadlockScratch;

GS_API GsDeadlockScratch *gs_deadlock_scratch_new(void);
GS_API void gs_deadlock_scratch_free(GsDeadlockScratch *scratch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsDeadlockScratch, gs_deadlock_scratch_free)

/**
 * Judges a snapshot of @n_threads records. @outside lists, ascending, the ids of
 * threads waiting outside the allocator (NULL for the state-machine view).
 * @scratch may be NULL (then the check allocates its own).
 */
GS_API GsDeadlockVerdict gs_deadlock_check(const GsThreadView *const *threads, guint n_threads,
					   GsTaskPriorities *prio, const GsDeadlockOpts *opts,
					   const GsThreadId *outside, guint n_outside,
					   GsDeadlockScratch *scratch);

/** Rule 1: whether @thread counts as BUFN-or-above. */
GS_API gboolean gs_deadlock_is_bufn_or_above(const GsThreadView *thread, const GsThreadId *outside,
					     guint n_outside);

G_END_DECLS

#endif /* GPUSIM_DEADLOCK_H */
