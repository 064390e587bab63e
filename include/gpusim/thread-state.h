/*
 * gpusim: the per-thread OOM state machine of Spark-RAPIDS, as data.
 *
 * This module decides one thing: given a thread's state and an event, what the
 * next state is and what the caller must do about it (wait, throw, run a
 * deadlock check, wake someone, erase the record). It knows nothing of other
 * threads, tasks, priorities, time or memory; the engine (engine.h) owns those
 * and applies these transitions. The states, their names and their attributes
 * come from one X-macro list; the transitions from one pure function,
 * gs_thread_transition(), whose table the unit tests walk row by row.
 *
 *                       register
 *      UNKNOWN ───────────────────────────► RUNNING ◄──────────────────────────┐
 *         ▲                                  │   ▲  ▲                          │
 *         │ removal (not waiting)   alloc    │   │  │ success, non-OOM failure,│
 *         │ REMOVE_THROW wakes      start    ▼   │  │ ALLOC_FREE + OOM,        │
 *         │                               ALLOC ─┘  │ non-blocking OOM         │
 *         │               another thread    │  │    │                          │
 *         │               frees this kind   │  └──► ALLOC_FREE ──────────────┤
 *         │                                 │                                │
 *         │                  OOM (blocking) │ OOM with the retry-once        │
 *         │                                 ▼ flag set                       │
 *         │                           BLOCKED ──wake-one, task-finished,─────┤
 *         │                           │    │   bust of the only BLOCKED      │
 *         │            bust victim    │    │   (retry-once flag set)         │
 *         │         ┌─────────────────┘    │                                 │
 *         │         ▼                      │ removal                         │
 *         │    BUFN_THROW ─block-until-ready (throws RetryOOM)─► BUFN_WAIT   │
 *         │                                │                       │         │
 *         │                                │     block-until-ready │         │
 *         │                                │     (deadlock check)  ▼         │
 *         │                                │                     BUFN ───────┤
 *         │                                ▼         removal       │ split   │ task-finished wake
 *         └─────────────────────────── REMOVE_THROW ◄──────────────┤ pick    │ (only when nothing
 *                                                                  ▼         │  is BLOCKED; also
 *                                                        SPLIT_THROW ────────┘  from BUFN_THROW and
 *                                   block-until-ready throws SplitAndRetryOOM     BUFN_WAIT)
 *
 * Which engine entry point performs each transition:
 *   UNKNOWN → RUNNING                 gs_engine_register_dedicated/_pool
 *   RUNNING → ALLOC                   gs_engine_alloc_begin (after block-until-ready)
 *   ALLOC → ALLOC_FREE                gs_engine_dealloc by another thread, same kind
 *   ALLOC, ALLOC_FREE → RUNNING       gs_engine_alloc_success, gs_engine_alloc_failed
 *   ALLOC → BLOCKED, BUFN_THROW       gs_engine_alloc_failed (OOM)
 *   BLOCKED → RUNNING                 wake-one in _alloc_success/_dealloc; deadlock bust
 *                                     (only BLOCKED thread); task-finished wake
 *   BLOCKED → BUFN_THROW              deadlock bust (the lowest-priority BLOCKED thread)
 *   BUFN_THROW → BUFN_WAIT            gs_engine_block_until_ready (throws RetryOOM)
 *   BUFN_WAIT → BUFN                  gs_engine_block_until_ready (runs the deadlock check)
 *   BUFN → SPLIT_THROW                deadlock bust when every task is BUFN
 *   SPLIT_THROW → RUNNING             gs_engine_block_until_ready (throws SplitAndRetryOOM)
 *   BUFN*, → RUNNING                  task-finished wake when no thread is BLOCKED
 *   BLOCKED, BUFN → REMOVE_THROW      removal (task done, association removed, shutdown)
 *   REMOVE_THROW → UNKNOWN            gs_engine_block_until_ready (throws ThreadRemoved)
 *   other states → UNKNOWN            removal
 */
#ifndef GPUSIM_THREAD_STATE_H
#define GPUSIM_THREAD_STATE_H

#include <gpusim/types.h>

G_BEGIN_DECLS

/*
 * The ten states. Columns: constant suffix, name (as Spark-RAPIDS and the
 * scenario files spell it), numeric id exposed to Java by RmmSparkThreadState,
 * whether a thread in this state is physically waiting (the code's is_blocked()).
 */
#define GS_THREAD_STATE_MAP(X)                                \
	X(UNKNOWN, "UNKNOWN", -1, FALSE)                      \
	X(RUNNING, "THREAD_RUNNING", 0, FALSE)                \
	X(ALLOC, "THREAD_ALLOC", 1, FALSE)                    \
	X(ALLOC_FREE, "THREAD_ALLOC_FREE", 2, FALSE)          \
	X(BLOCKED, "THREAD_BLOCKED", 3, TRUE)                 \
	X(BUFN_THROW, "THREAD_BUFN_THROW", 4, FALSE)          \
	X(BUFN_WAIT, "THREAD_BUFN_WAIT", 5, FALSE)            \
	X(BUFN, "THREAD_BUFN", 6, TRUE)                       \
	X(SPLIT_THROW, "THREAD_SPLIT_THROW", 7, FALSE)        \
	X(REMOVE_THROW, "THREAD_REMOVE_THROW", 8, FALSE)

typedef enum {
#define GS_X_ENUM(suffix, name, java_id, waits) GS_THREAD_##suffix,
	GS_THREAD_STATE_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_THREAD_STATES
} GsThreadState;

/*
 * What can happen to a thread. Each is handled by every state in
 * gs_thread_transition(); an event that cannot happen in a state yields
 * GS_ACTION_INVALID there.
 */
#define GS_THREAD_EVENT_MAP(X)                                                     \
	X(REGISTER, "register")                 /* dedicated or pool registration */ \
	X(ALLOC_START, "alloc_start")           /* pre-alloc, after blocking */     \
	X(BLOCK_UNTIL_READY, "block_until_ready")                                   \
	X(ALLOC_SUCCESS, "alloc_success")                                           \
	X(ALLOC_OOM, "alloc_oom")               /* blocking, retry-once flag clear */ \
	X(ALLOC_OOM_LAST_TRY, "alloc_oom_last_try") /* retry-once flag set */       \
	X(ALLOC_OOM_NONBLOCKING, "alloc_oom_nonblocking")                           \
	X(ALLOC_FAILED, "alloc_failed")         /* a failure that is not an OOM */  \
	X(FREED_SAME_KIND, "freed_same_kind")   /* another thread freed this kind */ \
	X(WAKE_ONE, "wake_one")                 /* chosen by a free or a success */ \
	X(BUST_RETRY_ONCE, "bust_retry_once")   /* deadlock victim, only BLOCKED */ \
	X(BUST_ROLLBACK, "bust_rollback")       /* deadlock victim among several */ \
	X(SPLIT_PICK, "split_pick")             /* every task is BUFN */            \
	X(WAKE_BLOCKED, "task_finished_wake_blocked")                               \
	X(WAKE_BUFN, "task_finished_wake_bufn") /* only when nothing is BLOCKED */  \
	X(REMOVE, "remove")                     /* association removed, shutdown */

typedef enum {
#define GS_X_ENUM(suffix, name) GS_EVENT_##suffix,
	GS_THREAD_EVENT_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_THREAD_EVENTS
} GsThreadEvent;

/* What the engine must do after applying a transition. */
#define GS_THREAD_ACTION_MAP(X)                                                    \
	X(NONE, "none")                   /* nothing beyond the state change */     \
	X(CREATE, "create")               /* create the record */                   \
	X(PROCEED, "proceed")             /* return to the caller: go on */         \
	X(RECURSIVE, "recursive")         /* an allocation inside an allocation */  \
	X(WAIT, "wait")                   /* park the thread until notified */      \
	X(THROW_RETRY, "throw_retry")     /* throw Gpu/CpuRetryOOM (cap checked) */ \
	X(THROW_SPLIT, "throw_split")     /* throw Gpu/CpuSplitAndRetryOOM */       \
	X(THROW_REMOVED, "throw_removed") /* erase the record, throw ThreadRemoved */ \
	X(CHECK_DEADLOCK, "check_deadlock") /* run the state-machine deadlock check */ \
	X(WAKE_ONE, "wake_one")           /* wake the best BLOCKED thread of the kind */ \
	X(NOTIFY, "notify")               /* the thread's waiter must look again */ \
	X(ERASE, "erase")                 /* delete the record */                   \
	X(ERASE_AND_WAKE, "erase_and_wake") /* delete it; it was RUNNING: task-finished wake */ \
	X(RETHROW, "rethrow")             /* the caller's own failure propagates */ \
	X(SHUTTING_DOWN, "shutting_down") /* error: the record is being removed */  \
	X(INVALID, "invalid")             /* error: event impossible in this state */

typedef enum {
#define GS_X_ENUM(suffix, name) GS_ACTION_##suffix,
	GS_THREAD_ACTION_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_THREAD_ACTIONS
} GsThreadAction;

/** The outcome of one transition: the next state and the caller's duty. */
typedef struct {
	GsThreadState to;
	GsThreadAction action;
} GsTransition;

/** The one transition function. Pure: same inputs, same answer. */
GS_API GsTransition gs_thread_transition(GsThreadState from, GsThreadEvent event);

/*
 * Whether some event moves a thread from @from to @to (staying put counts
 * when an event leaves it there), and which: the first such event in
 * GS_THREAD_EVENT_MAP's order into *@event when @event is not NULL. What a
 * logged transition is checked against.
 */
GS_API gboolean gs_thread_transition_possible(GsThreadState from, GsThreadState to,
					      GsThreadEvent *event);

GS_API const char *gs_thread_state_name(GsThreadState state);
GS_API gboolean gs_thread_state_from_name(const char *name, GsThreadState *out);
/** The numeric id Spark-RAPIDS exposes (RmmSparkThreadState): UNKNOWN is -1. */
GS_API int gs_thread_state_java_id(GsThreadState state);
/** TRUE for THREAD_BLOCKED and THREAD_BUFN: the thread is parked on its condition. */
GS_API gboolean gs_thread_state_waits(GsThreadState state);
GS_API const char *gs_thread_event_name(GsThreadEvent event);
GS_API const char *gs_thread_action_name(GsThreadAction action);

/*
 * A thread as the policy decisions see it: the record's state and associations.
 * The engine keeps one per registered thread; the deadlock check and the
 * priority rules read arrays of them.
 */
typedef struct {
	GsThreadId id;
	GsTaskId task;          /* dedicated: its task; pool thread: GS_NO_TASK */
	GArray *pool_tasks;     /* pool threads: GsTaskId, ascending, no duplicates */
	/* Packed: the engine keeps one view per thread, and 10^5 threads are a normal run. */
	GsThreadState state : 8;
	GsAllocKind alloc_kind : 8; /* kind of the allocation in progress or last failed */
	guint8 is_pool;         /* booleans */
	guint8 shuffle;         /* pool threads only: fixed at first registration */
	guint8 pool_blocked;    /* dedicated threads only: waiting on a pool */
} GsThreadView;

G_STATIC_ASSERT(GS_N_THREAD_STATES <= 128 && GS_N_KINDS <= 128);

/*
 * Checks what must hold of every record; returns NULL when it does, else a
 * static sentence naming the first broken rule.
 */
GS_API const char *gs_thread_view_check(const GsThreadView *thread);

/** TRUE if a pool thread works for @task. */
GS_API gboolean gs_thread_view_works_for(const GsThreadView *thread, GsTaskId task);

G_END_DECLS

#endif /* GPUSIM_THREAD_STATE_H */
