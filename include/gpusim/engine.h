/*
 * gpusim: the OOM engine, Spark-RAPIDS' SparkResourceAdaptor as a pure object.
 *
 * The engine decides, for every registered thread, what happens at each step
 * of the allocation protocol: whether it proceeds, waits, or throws which
 * exception; which blocked thread a free wakes; when the tasks are deadlocked
 * and who rolls back or splits; what the metrics say. It never waits, never
 * reads a clock, never allocates device memory and never does I/O: the driver
 * (the simulator or a real-thread backend) passes the time into every call,
 * tries the allocation itself, parks a thread when told GS_VERDICT_WAIT, and
 * drains the wake-ups the engine queues (gs_engine_pop_wake) to resume parked
 * threads. It is not thread-safe; a real-thread driver serialises calls.
 *
 * The allocation protocol a driver follows for each allocation:
 *
 *     d = gs_engine_alloc_begin(e, t, kind, blocking, now)
 *       WAIT    → park t; when woken, call gs_engine_alloc_begin() again with
 *                 the same arguments (it resumes the pending call)
 *       THROW   → the allocation throws d.exception
 *       ERROR   → misuse (d.error); the allocation throws
 *       PROCEED → try the memory; d.recursive tells whether this is an
 *                 allocation made inside the thread's own failing allocation
 *     on success:  gs_engine_alloc_success(e, t, kind, bytes, d.recursive, now)
 *     on OOM:      gs_engine_alloc_failed(e, t, kind, TRUE, blocking, d.recursive, now)
 *                    RETRY   → loop to gs_engine_alloc_begin() (a non-blocking
 *                              host allocation may give up instead)
 *                    RETHROW → throw d.exception (a fatal GpuOOM / CpuOOM)
 *     on another failure: gs_engine_alloc_failed(..., FALSE, ...) → RETHROW
 *
 * Time, metrics and wake-ups. A call that returns WAIT records when the wait
 * began; the resuming call (with the later time) adds the blocked time. Every
 * time a parked thread's state leaves THREAD_BLOCKED or THREAD_BUFN, its id is
 * queued once for the driver (in the order the engine made the decisions), so
 * the driver resumes exactly the threads that must look again.
 *
 * Choices where the reference (reference/spark-rapids-oom.md §6) lists a quirk;
 * the default is the real code's behaviour, the options reach the alternative:
 *  1. Split victim: the highest-priority BUFN thread (GsEngineOpts.split_victim
 *     = GS_SPLIT_LOWEST for the documentation's lowest).
 *  2. The retry cap counts state-machine Retry and SplitAndRetry throws per
 *     thread registration, is never reset, ignores injections, and throws
 *     RetryLimitExceeded; the throw that trips it still counts as a retry or
 *     split. retry_cap sets the limit (500).
 *  3. alloc_failed returns RETRY for every registered, non-recursive thread,
 *     whichever branch was taken, as postCpuAllocFailed returns true.
 *  4. The adaptor-wide GPU byte counter ignores allocations and frees of
 *     unregistered threads, and recursive allocations do not add to it while
 *     their frees subtract (gpu_counter = GS_GPU_COUNTER_EXACT counts every
 *     allocation and free alike); task roll-ups sum gpu_max_allocated over
 *     threads (max_allocated_rollup).
 *  5. A non-shuffle pool thread ranks by its numerically smallest task id
 *     (pool_priority).
 *  6. The task-finished wake releases BUFN threads only when no thread is
 *     BLOCKED anywhere (kept: it is the design, not an accident).
 *  7. Wake-ups are per kind and wake one thread; deadlock detection mixes kinds.
 *  8. The state-machine view cannot see threads waiting outside the allocator;
 *     gs_engine_check_deadlocks() takes them from the watchdog.
 *  9. (testShuffleBlocking's literal task id: a test detail, not modelled.)
 * 10. "Every task is BUFN" compares set sizes (strict_all_bufn compares sets).
 * 11. Task done erases the task from its pool threads before their metrics are
 *     checkpointed, so a pool thread's work for a finishing task is not
 *     attributed to it (pool_metrics_on_task_done = TRUE checkpoints first).
 */
#ifndef GPUSIM_ENGINE_H
#define GPUSIM_ENGINE_H

#include <gpusim/deadlock.h>
#include <gpusim/metrics.h>

G_BEGIN_DECLS

typedef enum {
	GS_GPU_COUNTER_REFERENCE = 0, /* quirk §6.4 as the real code */
	GS_GPU_COUNTER_EXACT = 1,     /* every allocation adds, every free subtracts */
} GsGpuCounterRule;

typedef struct {
	GsPriorityMode priority;
	GsSplitVictim split_victim;
	gboolean retry_before_bufn;
	guint retry_cap;
	GsPoolPriorityRule pool_priority;
	gboolean strict_all_bufn;
	GsGpuCounterRule gpu_counter;
	GsMaxAllocatedRollup max_allocated_rollup;
	gboolean pool_metrics_on_task_done;
	/* FALSE: deadlocks are detected and counted but nobody rolls back or
	 * splits (the "block" OOM policy: wait until memory is freed). */
	gboolean bust_deadlocks;
} GsEngineOpts;

#define GS_ENGINE_OPTS_DEFAULT                                                              \
	{ GS_PRIORITY_FIFO, GS_SPLIT_HIGHEST, TRUE, 500, GS_POOL_PRIORITY_SMALLEST_TASK_ID,  \
	  FALSE, GS_GPU_COUNTER_REFERENCE, GS_MAX_ALLOCATED_SUM, FALSE, TRUE }

/* Misuse the engine reports instead of acting (the real code throws these). */
#define GS_ENGINE_ERROR_MAP(X)                                                              \
	X(NONE, "no error")                                                                 \
	X(NOT_REGISTERED, "the thread is not associated with any task")                     \
	X(POOL_AS_DEDICATED, "a pool thread can only be dedicated to a single task")        \
	X(DEDICATED_AS_POOL, "the thread is associated with a non-pool task already")       \
	X(SHUFFLE_MISMATCH, "a pool thread cannot change between shuffle and non-shuffle")  \
	X(SHUTTING_DOWN, "the thread is in the process of shutting down")                   \
	X(SHUT_DOWN, "the engine has been shut down")                                       \
	X(NOT_DEDICATED, "only a dedicated thread can wait on a pool")                      \
	X(BAD_TASK, "a task id must be >= 0")                                               \
	X(RECURSIVE_BLOCKING_HOST, "a blocking host allocation inside an allocation")       \
	X(UNEXPECTED_STATE, "the thread is in an unexpected state for this call")           \
	X(KIND_MISMATCH, "the allocation finished with another kind than it began with")    \
	X(NEGATIVE_COUNT, "injection counts must not be negative")

typedef enum {
#define GS_X_ENUM(suffix, text) GS_ENGINE_ERROR_##suffix,
	GS_ENGINE_ERROR_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_ENGINE_ERRORS
} GsEngineError;

GS_API const char *gs_engine_error_message(GsEngineError error);

typedef enum {
	GS_VERDICT_PROCEED = 0, /* go on */
	GS_VERDICT_WAIT,        /* park until the engine queues a wake-up for this thread */
	GS_VERDICT_THROW,       /* throw .exception */
	GS_VERDICT_RETRY,       /* alloc_failed: go round the allocation loop again */
	GS_VERDICT_RETHROW,     /* alloc_failed: the caller's own failure propagates */
	GS_VERDICT_ERROR,       /* misuse: .error says which; the call throws */
} GsVerdict;

/** An engine call's answer, by value. */
typedef struct {
	GsVerdict verdict;
	GsException exception; /* THROW, RETHROW of an OOM */
	GsEngineError error;   /* ERROR, or the status of a registration call */
	gboolean recursive;    /* alloc_begin: the allocation is untracked */
} GsDecision;

/* Why a deadlock check ran, for the observer. */
typedef enum {
	GS_CHECK_ALLOC_FAILED,
	GS_CHECK_BUFN_WAIT,
	GS_CHECK_WATCHDOG,
} GsCheckReason;

/* What a deadlock check did, for the observer. */
typedef enum {
	GS_BUST_ROLLBACK,
	GS_BUST_RETRY_ONCE,
	GS_BUST_SPLIT,
} GsBustAction;

/*
 * Optional observer: told of every state change, throw and bust as it happens,
 * so drivers can write event logs and traces. Every member may be NULL.
 */
typedef struct {
	int api_version; /* 1 */
	/* A record changed state (UNKNOWN as from/to for creation and erasure). */
	void (*state_changed)(gpointer data, GsThreadId thread, GsThreadState from,
			      GsThreadState to, GsThreadEvent cause, GsTime now);
	/* The engine told a thread to throw (injected or by the state machine). */
	void (*thrown)(gpointer data, GsThreadId thread, GsException exc, gboolean injected,
		       GsTime now);
	/* A deadlock check decided to act on @victim. */
	void (*busted)(gpointer data, GsThreadId victim, GsBustAction action,
		       GsCheckReason reason, GsTime now);
	/*
	 * A retry-type throw threw away @lost of the thread's running time in
	 * its retry block (SparkResourceAdaptor's record_failed_retry_time:
	 * what getAndResetComputeTimeLostToRetryNs reads); told only when
	 * @lost > 0, before the throw itself.
	 */
	void (*lost)(gpointer data, GsThreadId thread, GsTime lost, GsTime now);
} GsEngineObserver;

typedef struct GsEngine GsEngine;

GS_API GsEngine *gs_engine_new(const GsEngineOpts *opts);
GS_API void gs_engine_free(GsEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsEngine, gs_engine_free)

GS_API const GsEngineOpts *gs_engine_get_opts(const GsEngine *engine);
GS_API void gs_engine_set_observer(GsEngine *engine, const GsEngineObserver *observer,
				   gpointer data);
GS_API GsTaskPriorities *gs_engine_get_priorities(GsEngine *engine);

/*
 * Which of @n BLOCKED threads that rank alike (their tasks' priorities are
 * equal) a wake-one wakes, for a driver that explores the orders a real
 * executor could take. The alternatives go down the engine's own order:
 * 0 is the thread it wakes without a chooser (the highest thread id), i the
 * i-th after it. Asked only when @n >= 2; an answer out of range is 0.
 */
typedef guint (*GsEngineChooseFunc)(guint n, gpointer data);

/** The chooser wake-ups ask (NULL, the default: the engine's own order). */
GS_API void gs_engine_set_chooser(GsEngine *engine, GsEngineChooseFunc choose, gpointer data);

/* ---- Associations (reference §1.7, registration rows) ---- */

/** Registers @thread as dedicated to @task (FIXUP if it was dedicated elsewhere). */
GS_API GsEngineError gs_engine_register_dedicated(GsEngine *engine, GsThreadId thread,
						  GsTaskId task, GsTime now);
/** Registers @thread as a pool thread working for @tasks too; empty sets are ignored. */
GS_API GsEngineError gs_engine_register_pool(GsEngine *engine, GsThreadId thread,
					     const GsTaskId *tasks, guint n_tasks,
					     gboolean shuffle, GsTime now);
/** A pool thread stops working for @tasks; with none left it is removed. */
GS_API GsEngineError gs_engine_pool_done(GsEngine *engine, GsThreadId thread,
					 const GsTaskId *tasks, guint n_tasks, GsTime now);
/**
 * @thread has no more work, done or ended by an exception. A pool thread
 * leaves every task it still works for, as a helper unregisters when its work
 * ends (poolThreadFinishedForTasks): it no longer counts as a running thread
 * of those tasks. A dedicated thread stays until its task is done. A finished
 * thread that its removal would notify (REMOVE_THROW: it threw while blocked,
 * say) is erased instead, since it never calls again: a stale record would
 * keep its task in every deadlock check, never blocked.
 */
GS_API void gs_engine_thread_finished(GsEngine *engine, GsThreadId thread, GsTime now);
/** Removes @thread's association with @task, or every association with GS_NO_TASK. */
GS_API void gs_engine_remove_association(GsEngine *engine, GsThreadId thread, GsTaskId task,
					 GsTime now);
/** The task is done: its dedicated threads are removed and pool threads leave it. */
GS_API void gs_engine_task_done(GsEngine *engine, GsTaskId task, GsTime now);
/** Sets or clears a dedicated thread's pool_blocked flag (submitting/waiting on a pool). */
GS_API GsEngineError gs_engine_set_pool_blocked(GsEngine *engine, GsThreadId thread,
						gboolean blocked);
/** Removes every record (waiting ones go to REMOVE_THROW); later registrations fail. */
GS_API void gs_engine_shutdown(GsEngine *engine, GsTime now);

/** Fixes a task's priority slot now, as the plugin does at task start. */
GS_API void gs_engine_task_started(GsEngine *engine, GsTaskId task);

/* ---- The allocation protocol (reference §1.4, §1.5) ---- */

GS_API GsDecision gs_engine_alloc_begin(GsEngine *engine, GsThreadId thread, GsAllocKind kind,
					gboolean blocking, GsTime now);
GS_API GsDecision gs_engine_alloc_success(GsEngine *engine, GsThreadId thread, GsAllocKind kind,
					  gint64 bytes, gboolean recursive, GsTime now);
GS_API GsDecision gs_engine_alloc_failed(GsEngine *engine, GsThreadId thread, GsAllocKind kind,
					 gboolean is_oom, gboolean blocking, gboolean recursive,
					 GsTime now);
/** @thread freed @bytes of @kind (GS_NO_THREAD-like unknown ids are fine). */
GS_API void gs_engine_dealloc(GsEngine *engine, GsThreadId thread, GsAllocKind kind,
			      gint64 bytes, GsTime now);
/** The explicit blockThreadUntilReady; WAIT means call again when woken. */
GS_API GsDecision gs_engine_block_until_ready(GsEngine *engine, GsThreadId thread, GsTime now);

/* ---- Deadlock busting ---- */

/**
 * The watchdog's check: @outside lists (in any order) threads waiting outside
 * the allocator. Returns TRUE if the tasks were deadlocked.
 */
GS_API gboolean gs_engine_check_deadlocks(GsEngine *engine, const GsThreadId *outside,
					  guint n_outside, GsTime now);

/** Takes the next thread that must resume; FALSE when none is queued. */
GS_API gboolean gs_engine_pop_wake(GsEngine *engine, GsThreadId *thread);
GS_API guint gs_engine_pending_wakes(const GsEngine *engine);

/* ---- Retry blocks, spill ranges, injection (reference §3) ---- */

GS_API void gs_engine_retry_block_start(GsEngine *engine, GsThreadId thread, GsTime now);
GS_API void gs_engine_retry_block_end(GsEngine *engine, GsThreadId thread, GsTime now);
GS_API void gs_engine_spill_range_start(GsEngine *engine, GsThreadId thread);
GS_API void gs_engine_spill_range_done(GsEngine *engine, GsThreadId thread);

/** Arms @num injected RetryOOMs after @skip matching allocations (overwrites). */
GS_API GsEngineError gs_engine_force_retry_oom(GsEngine *engine, GsThreadId thread, int num,
					       GsKindFilter filter, int skip);
GS_API GsEngineError gs_engine_force_split_oom(GsEngine *engine, GsThreadId thread, int num,
					       GsKindFilter filter, int skip);
GS_API GsEngineError gs_engine_force_cudf_exception(GsEngine *engine, GsThreadId thread, int num);

/* ---- Inspection ---- */

/** The thread's state; GS_THREAD_UNKNOWN if it has no record. */
GS_API GsThreadState gs_engine_thread_state(const GsEngine *engine, GsThreadId thread);
/** The thread's record, or NULL. Valid until the next engine call. */
GS_API const GsThreadView *gs_engine_thread_view(const GsEngine *engine, GsThreadId thread);
/**
 * The thread's rank under the engine's rules, the one its buffers carry for
 * victims by priority. A thread with no record (a pool thread before its
 * first task or between two) ranks as a pool thread working for no task:
 * task -1, G_MAXINT64, as Spark-RAPIDS ranks work done outside any task.
 */
GS_API GsPriority gs_engine_thread_priority(GsEngine *engine, GsThreadId thread);
/** The thread's live metrics (not its checkpoints); FALSE if unknown. */
GS_API gboolean gs_engine_thread_metrics(const GsEngine *engine, GsThreadId thread,
					 GsMetrics *out);
/** Retry/split throws counted toward the cap for this registration. */
GS_API guint gs_engine_thread_cap_count(const GsEngine *engine, GsThreadId thread);
/**
 * A task's metrics: its checkpoint plus its live dedicated threads; the time
 * of waits still in progress at @now is included in lost_or_blocked_ns only,
 * as getTotalBlockedOrLostTime does.
 */
GS_API void gs_engine_task_metrics(const GsEngine *engine, GsTaskId task, GsTime now,
				   GsMetrics *out);
/** Deletes a task's checkpoint (removeTaskMetrics). */
GS_API void gs_engine_forget_task_metrics(GsEngine *engine, GsTaskId task);
/** The adaptor-wide count of GPU bytes allocated (quirk §6.4 applies). */
GS_API gint64 gs_engine_gpu_allocated(const GsEngine *engine);
/** Registered threads, and those in a given state. */
GS_API guint gs_engine_n_threads(const GsEngine *engine);
GS_API guint gs_engine_n_in_state(const GsEngine *engine, GsThreadState state);
/** Deadlock checks run, checks that found a deadlock, and busts applied so far. */
GS_API guint64 gs_engine_n_checks(const GsEngine *engine);
GS_API guint64 gs_engine_n_deadlocks(const GsEngine *engine);
GS_API guint64 gs_engine_n_busts(const GsEngine *engine);

/**
 * Checks the engine's own bookkeeping (every record valid, per-state counts
 * right, waiting threads in waiting states or queued); NULL when all holds,
 * else a static sentence stating the first rule that does not hold.
 */
GS_API const char *gs_engine_check_invariants(const GsEngine *engine);

G_END_DECLS

#endif /* GPUSIM_ENGINE_H */
