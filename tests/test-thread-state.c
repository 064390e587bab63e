/*
 * Unit tests of thread-state.h (and the exception names of types.h): the
 * per-thread OOM state machine walked row by row.
 *
 * The transition table below follows reference/spark-rapids-oom.md §1.5 and
 * §1.7: each row is {from, event, expected to, expected action}. Pairs that
 * are not listed take the default of their event (stay with NONE, or stay with
 * INVALID when the event cannot happen), which the all-pairs test checks.
 */
#include <check.h>
#include <gpusim/gpusim.h>

#include <stdlib.h>
#include <string.h>

#define S(x) GS_THREAD_##x
#define E(x) GS_EVENT_##x
#define A(x) GS_ACTION_##x

typedef struct {
	/* Inputs */
	GsThreadState from;
	GsThreadEvent event;
	/* Outputs */
	GsThreadState to;
	GsThreadAction action;
} TransitionRow;

static const TransitionRow transitions[] = {
	/* registration (dedicated or pool) */
	{ S(UNKNOWN), E(REGISTER), S(RUNNING), A(CREATE) },
	{ S(RUNNING), E(REGISTER), S(RUNNING), A(NONE) },
	{ S(REMOVE_THROW), E(REGISTER), S(REMOVE_THROW), A(SHUTTING_DOWN) },

	/* pre-alloc, after block-until-ready */
	{ S(RUNNING), E(ALLOC_START), S(ALLOC), A(PROCEED) },
	{ S(ALLOC), E(ALLOC_START), S(ALLOC), A(RECURSIVE) },
	{ S(ALLOC_FREE), E(ALLOC_START), S(ALLOC_FREE), A(RECURSIVE) },
	{ S(UNKNOWN), E(ALLOC_START), S(UNKNOWN), A(PROCEED) },
	{ S(BUFN_WAIT), E(ALLOC_START), S(BUFN_WAIT), A(INVALID) },
	{ S(BUFN_THROW), E(ALLOC_START), S(BUFN_THROW), A(INVALID) },

	/* block-until-ready, §1.5: every state */
	{ S(UNKNOWN), E(BLOCK_UNTIL_READY), S(UNKNOWN), A(PROCEED) },
	{ S(RUNNING), E(BLOCK_UNTIL_READY), S(RUNNING), A(PROCEED) },
	{ S(ALLOC), E(BLOCK_UNTIL_READY), S(ALLOC), A(PROCEED) },
	{ S(ALLOC_FREE), E(BLOCK_UNTIL_READY), S(ALLOC_FREE), A(PROCEED) },
	{ S(BLOCKED), E(BLOCK_UNTIL_READY), S(BLOCKED), A(WAIT) },
	{ S(BUFN), E(BLOCK_UNTIL_READY), S(BUFN), A(WAIT) },
	{ S(BUFN_THROW), E(BLOCK_UNTIL_READY), S(BUFN_WAIT), A(THROW_RETRY) },
	{ S(BUFN_WAIT), E(BLOCK_UNTIL_READY), S(BUFN), A(CHECK_DEADLOCK) },
	{ S(SPLIT_THROW), E(BLOCK_UNTIL_READY), S(RUNNING), A(THROW_SPLIT) },
	{ S(REMOVE_THROW), E(BLOCK_UNTIL_READY), S(UNKNOWN), A(THROW_REMOVED) },

	/* post-alloc success */
	{ S(ALLOC), E(ALLOC_SUCCESS), S(RUNNING), A(WAKE_ONE) },
	{ S(ALLOC_FREE), E(ALLOC_SUCCESS), S(RUNNING), A(WAKE_ONE) },
	{ S(UNKNOWN), E(ALLOC_SUCCESS), S(UNKNOWN), A(NONE) },

	/* post-alloc OOM, blocking, retry-once flag clear */
	{ S(ALLOC), E(ALLOC_OOM), S(BLOCKED), A(CHECK_DEADLOCK) },
	{ S(ALLOC_FREE), E(ALLOC_OOM), S(RUNNING), A(CHECK_DEADLOCK) },
	{ S(UNKNOWN), E(ALLOC_OOM), S(UNKNOWN), A(CHECK_DEADLOCK) },

	/* post-alloc OOM with the retry-once flag set */
	{ S(ALLOC), E(ALLOC_OOM_LAST_TRY), S(BUFN_THROW), A(CHECK_DEADLOCK) },
	{ S(ALLOC_FREE), E(ALLOC_OOM_LAST_TRY), S(RUNNING), A(CHECK_DEADLOCK) },
	{ S(UNKNOWN), E(ALLOC_OOM_LAST_TRY), S(UNKNOWN), A(CHECK_DEADLOCK) },

	/* post-alloc OOM of a non-blocking (host) allocation */
	{ S(ALLOC), E(ALLOC_OOM_NONBLOCKING), S(RUNNING), A(CHECK_DEADLOCK) },
	{ S(ALLOC_FREE), E(ALLOC_OOM_NONBLOCKING), S(RUNNING), A(CHECK_DEADLOCK) },
	{ S(UNKNOWN), E(ALLOC_OOM_NONBLOCKING), S(UNKNOWN), A(CHECK_DEADLOCK) },

	/* a failure that is not an OOM */
	{ S(ALLOC), E(ALLOC_FAILED), S(RUNNING), A(RETHROW) },
	{ S(ALLOC_FREE), E(ALLOC_FAILED), S(RUNNING), A(RETHROW) },
	{ S(UNKNOWN), E(ALLOC_FAILED), S(UNKNOWN), A(RETHROW) },

	/* another thread freed memory of the kind being allocated */
	{ S(ALLOC), E(FREED_SAME_KIND), S(ALLOC_FREE), A(NONE) },
	{ S(ALLOC_FREE), E(FREED_SAME_KIND), S(ALLOC_FREE), A(NONE) },
	{ S(BUFN), E(FREED_SAME_KIND), S(BUFN), A(NONE) },

	/* wake-ups and busts */
	{ S(BLOCKED), E(WAKE_ONE), S(RUNNING), A(NOTIFY) },
	{ S(BUFN), E(WAKE_ONE), S(BUFN), A(INVALID) },
	{ S(BLOCKED), E(BUST_RETRY_ONCE), S(RUNNING), A(NOTIFY) },
	{ S(BLOCKED), E(BUST_ROLLBACK), S(BUFN_THROW), A(NOTIFY) },
	{ S(BUFN), E(BUST_ROLLBACK), S(BUFN), A(INVALID) },
	{ S(BUFN), E(SPLIT_PICK), S(SPLIT_THROW), A(NOTIFY) },
	{ S(BLOCKED), E(SPLIT_PICK), S(BLOCKED), A(INVALID) },

	/* task-finished wake */
	{ S(BLOCKED), E(WAKE_BLOCKED), S(RUNNING), A(NOTIFY) },
	{ S(RUNNING), E(WAKE_BLOCKED), S(RUNNING), A(NONE) },
	{ S(BUFN), E(WAKE_BLOCKED), S(BUFN), A(NONE) },
	{ S(BUFN), E(WAKE_BUFN), S(RUNNING), A(NOTIFY) },
	{ S(BUFN_THROW), E(WAKE_BUFN), S(RUNNING), A(NONE) },
	{ S(BUFN_WAIT), E(WAKE_BUFN), S(RUNNING), A(NONE) },
	{ S(BLOCKED), E(WAKE_BUFN), S(BLOCKED), A(NONE) },
	{ S(RUNNING), E(WAKE_BUFN), S(RUNNING), A(NONE) },

	/* removal: every state */
	{ S(UNKNOWN), E(REMOVE), S(UNKNOWN), A(NONE) },
	{ S(RUNNING), E(REMOVE), S(UNKNOWN), A(ERASE_AND_WAKE) },
	{ S(ALLOC), E(REMOVE), S(UNKNOWN), A(ERASE) },
	{ S(ALLOC_FREE), E(REMOVE), S(UNKNOWN), A(ERASE) },
	{ S(BLOCKED), E(REMOVE), S(REMOVE_THROW), A(NOTIFY) },
	{ S(BUFN_THROW), E(REMOVE), S(UNKNOWN), A(ERASE) },
	{ S(BUFN_WAIT), E(REMOVE), S(UNKNOWN), A(ERASE) },
	{ S(BUFN), E(REMOVE), S(REMOVE_THROW), A(NOTIFY) },
	{ S(SPLIT_THROW), E(REMOVE), S(UNKNOWN), A(ERASE) },
	{ S(REMOVE_THROW), E(REMOVE), S(UNKNOWN), A(ERASE) },
};

/*
 * What an event does in a state the table does not list: either nothing
 * (stay, NONE) or an error (stay, INVALID). Events whose every state is
 * listed have no default (checked: the all-pairs test fails on a gap).
 */
typedef enum {
	DEFAULT_NONE,
	DEFAULT_INVALID,
	DEFAULT_ALL_LISTED,
} EventDefault;

static EventDefault
event_default(GsThreadEvent event)
{
	switch (event) {
	case GS_EVENT_REGISTER:
	case GS_EVENT_FREED_SAME_KIND:
	case GS_EVENT_WAKE_BLOCKED:
	case GS_EVENT_WAKE_BUFN:
		return DEFAULT_NONE;
	case GS_EVENT_ALLOC_START:
	case GS_EVENT_ALLOC_SUCCESS:
	case GS_EVENT_ALLOC_OOM:
	case GS_EVENT_ALLOC_OOM_LAST_TRY:
	case GS_EVENT_ALLOC_OOM_NONBLOCKING:
	case GS_EVENT_ALLOC_FAILED:
	case GS_EVENT_WAKE_ONE:
	case GS_EVENT_BUST_RETRY_ONCE:
	case GS_EVENT_BUST_ROLLBACK:
	case GS_EVENT_SPLIT_PICK:
		return DEFAULT_INVALID;
	case GS_EVENT_BLOCK_UNTIL_READY:
	case GS_EVENT_REMOVE:
		return DEFAULT_ALL_LISTED;
	case GS_N_THREAD_EVENTS:
		break;
	}
	ck_abort_msg("unknown event %d", (int) event);
	return DEFAULT_ALL_LISTED;
}

static const TransitionRow *
find_row(GsThreadState from, GsThreadEvent event)
{
	for (gsize i = 0; i < G_N_ELEMENTS(transitions); i++)
		if (transitions[i].from == from && transitions[i].event == event)
			return &transitions[i];
	return NULL;
}

START_TEST(test_transition_row)
{
	const TransitionRow *row = &transitions[_i];
	GsTransition t = gs_thread_transition(row->from, row->event);

	ck_assert_msg(t.to == row->to && t.action == row->action,
		      "row %d: %s + %s: expected %s/%s, got %s/%s", _i,
		      gs_thread_state_name(row->from), gs_thread_event_name(row->event),
		      gs_thread_state_name(row->to), gs_thread_action_name(row->action),
		      gs_thread_state_name(t.to), gs_thread_action_name(t.action));
	/* no pair is listed twice (the all-pairs test would see only the first) */
	ck_assert_ptr_eq(find_row(row->from, row->event), row);
}
END_TEST

/* _i walks every (state, event) pair: state = _i / events, event = _i % events. */
START_TEST(test_transition_all_pairs)
{
	GsThreadState from = (GsThreadState) (_i / GS_N_THREAD_EVENTS);
	GsThreadEvent event = (GsThreadEvent) (_i % GS_N_THREAD_EVENTS);
	GsTransition t = gs_thread_transition(from, event);
	GsTransition again = gs_thread_transition(from, event);
	const TransitionRow *row = find_row(from, event);

	ck_assert_int_ge((int) t.to, 0);
	ck_assert_int_lt((int) t.to, GS_N_THREAD_STATES);
	ck_assert_int_ge((int) t.action, 0);
	ck_assert_int_lt((int) t.action, GS_N_THREAD_ACTIONS);
	/* pure */
	ck_assert_int_eq(t.to, again.to);
	ck_assert_int_eq(t.action, again.action);
	/* an error leaves the state as it was */
	if (t.action == GS_ACTION_INVALID || t.action == GS_ACTION_SHUTTING_DOWN)
		ck_assert_msg(t.to == from, "%s + %s: %s but moved to %s",
			      gs_thread_state_name(from), gs_thread_event_name(event),
			      gs_thread_action_name(t.action), gs_thread_state_name(t.to));

	if (row != NULL) {
		ck_assert_int_eq(t.to, row->to);
		ck_assert_int_eq(t.action, row->action);
		return;
	}
	switch (event_default(event)) {
	case DEFAULT_NONE:
		ck_assert_msg(t.to == from && t.action == GS_ACTION_NONE,
			      "%s + %s: expected to stay with none, got %s/%s",
			      gs_thread_state_name(from), gs_thread_event_name(event),
			      gs_thread_state_name(t.to), gs_thread_action_name(t.action));
		break;
	case DEFAULT_INVALID:
		ck_assert_msg(t.to == from && t.action == GS_ACTION_INVALID,
			      "%s + %s: expected invalid, got %s/%s", gs_thread_state_name(from),
			      gs_thread_event_name(event), gs_thread_state_name(t.to),
			      gs_thread_action_name(t.action));
		break;
	case DEFAULT_ALL_LISTED:
		ck_abort_msg("the table misses %s + %s", gs_thread_state_name(from),
			     gs_thread_event_name(event));
		break;
	}
}
END_TEST

/* ---- names, java ids, waiting ---- */

typedef struct {
	/* Inputs */
	GsThreadState state;
	/* Outputs */
	const char *name;
	int java_id;
	gboolean waits;
} StateRow;

static const StateRow states[] = {
	{ S(UNKNOWN), "UNKNOWN", -1, FALSE },
	{ S(RUNNING), "THREAD_RUNNING", 0, FALSE },
	{ S(ALLOC), "THREAD_ALLOC", 1, FALSE },
	{ S(ALLOC_FREE), "THREAD_ALLOC_FREE", 2, FALSE },
	{ S(BLOCKED), "THREAD_BLOCKED", 3, TRUE },
	{ S(BUFN_THROW), "THREAD_BUFN_THROW", 4, FALSE },
	{ S(BUFN_WAIT), "THREAD_BUFN_WAIT", 5, FALSE },
	{ S(BUFN), "THREAD_BUFN", 6, TRUE },
	{ S(SPLIT_THROW), "THREAD_SPLIT_THROW", 7, FALSE },
	{ S(REMOVE_THROW), "THREAD_REMOVE_THROW", 8, FALSE },
};

START_TEST(test_state_names)
{
	const StateRow *row = &states[_i];
	GsThreadState back = GS_N_THREAD_STATES;

	ck_assert_int_eq(row->state, _i); /* the table covers the enum in order */
	ck_assert_str_eq(gs_thread_state_name(row->state), row->name);
	ck_assert(gs_thread_state_from_name(row->name, &back));
	ck_assert_int_eq(back, row->state);
	ck_assert_int_eq(gs_thread_state_java_id(row->state), row->java_id);
	ck_assert_int_eq(gs_thread_state_waits(row->state), row->waits);
}
END_TEST

START_TEST(test_state_from_bad_name)
{
	GsThreadState out = GS_THREAD_BUFN;

	ck_assert(!gs_thread_state_from_name("THREAD_SLEEPING", &out));
	ck_assert(!gs_thread_state_from_name("", &out));
	ck_assert(!gs_thread_state_from_name("thread_running", &out));
	ck_assert_uint_eq(G_N_ELEMENTS(states), GS_N_THREAD_STATES);
}
END_TEST

START_TEST(test_event_and_action_names)
{
	static const char *const events[] = {
#define GS_X_NAME(suffix, name) name,
		GS_THREAD_EVENT_MAP(GS_X_NAME)
#undef GS_X_NAME
	};
	static const char *const actions[] = {
#define GS_X_NAME(suffix, name) name,
		GS_THREAD_ACTION_MAP(GS_X_NAME)
#undef GS_X_NAME
	};

	ck_assert_uint_eq(G_N_ELEMENTS(events), GS_N_THREAD_EVENTS);
	ck_assert_uint_eq(G_N_ELEMENTS(actions), GS_N_THREAD_ACTIONS);
	for (int i = 0; i < GS_N_THREAD_EVENTS; i++)
		ck_assert_str_eq(gs_thread_event_name((GsThreadEvent) i), events[i]);
	for (int i = 0; i < GS_N_THREAD_ACTIONS; i++)
		ck_assert_str_eq(gs_thread_action_name((GsThreadAction) i), actions[i]);
	ck_assert_str_eq(gs_thread_event_name(GS_EVENT_WAKE_BUFN), "task_finished_wake_bufn");
	ck_assert_str_eq(gs_thread_action_name(GS_ACTION_ERASE_AND_WAKE), "erase_and_wake");
}
END_TEST

/* ---- exceptions (types.h) ---- */

typedef struct {
	/* Inputs */
	GsException exc;
	/* Outputs */
	const char *name;
	gboolean recoverable;
	gboolean split;
} ExceptionRow;

static const ExceptionRow exceptions[] = {
	{ GS_EXC_NONE, "none", FALSE, FALSE },
	{ GS_EXC_GPU_RETRY_OOM, "GpuRetryOOM", TRUE, FALSE },
	{ GS_EXC_GPU_SPLIT_AND_RETRY_OOM, "GpuSplitAndRetryOOM", TRUE, TRUE },
	{ GS_EXC_CPU_RETRY_OOM, "CpuRetryOOM", TRUE, FALSE },
	{ GS_EXC_CPU_SPLIT_AND_RETRY_OOM, "CpuSplitAndRetryOOM", TRUE, TRUE },
	{ GS_EXC_GPU_OOM, "GpuOOM", FALSE, FALSE },
	{ GS_EXC_CPU_OOM, "CpuOOM", FALSE, FALSE },
	{ GS_EXC_CUDF_EXCEPTION, "CudfException", FALSE, FALSE },
	{ GS_EXC_RETRY_LIMIT_EXCEEDED, "RetryLimitExceeded", FALSE, FALSE },
	{ GS_EXC_COULD_NOT_SPLIT, "CouldNotSplit", FALSE, FALSE },
	{ GS_EXC_THREAD_REMOVED, "ThreadRemoved", FALSE, FALSE },
	{ GS_EXC_RESERVATION_TOO_LARGE, "ReservationTooLarge", FALSE, FALSE },
	{ GS_EXC_RESERVATION_FAILED, "ReservationFailed", FALSE, FALSE },
	{ GS_EXC_ILLEGAL_ARGUMENT, "IllegalArgumentException", FALSE, FALSE },
	{ GS_EXC_SPARK_OOM, "SparkOutOfMemoryError", FALSE, FALSE },
	{ GS_EXC_TOO_LARGE_PAGE, "TooLargePageException", FALSE, FALSE },
	{ GS_EXC_ILLEGAL_STATE, "IllegalStateException", FALSE, FALSE },
};

START_TEST(test_exception_names)
{
	const ExceptionRow *row = &exceptions[_i];
	GsException back = GS_N_EXCEPTIONS;

	ck_assert_int_eq(row->exc, _i);
	ck_assert_str_eq(gs_exception_name(row->exc), row->name);
	ck_assert(gs_exception_from_name(row->name, &back));
	ck_assert_int_eq(back, row->exc);
	ck_assert_int_eq(gs_exception_is_recoverable(row->exc), row->recoverable);
	ck_assert_int_eq(gs_exception_is_split(row->exc), row->split);
}
END_TEST

START_TEST(test_exception_misc)
{
	GsException out = GS_EXC_GPU_OOM;

	ck_assert_uint_eq(G_N_ELEMENTS(exceptions), GS_N_EXCEPTIONS);
	ck_assert(!gs_exception_from_name("OutOfMemoryError", &out));
	ck_assert(!gs_exception_from_name("gpuretryoom", &out));
	ck_assert_int_eq(gs_exception_retry_oom(GS_KIND_GPU), GS_EXC_GPU_RETRY_OOM);
	ck_assert_int_eq(gs_exception_retry_oom(GS_KIND_HOST), GS_EXC_CPU_RETRY_OOM);
	ck_assert_int_eq(gs_exception_split_oom(GS_KIND_GPU), GS_EXC_GPU_SPLIT_AND_RETRY_OOM);
	ck_assert_int_eq(gs_exception_split_oom(GS_KIND_HOST), GS_EXC_CPU_SPLIT_AND_RETRY_OOM);
	ck_assert_int_eq(gs_exception_fatal_oom(GS_KIND_GPU), GS_EXC_GPU_OOM);
	ck_assert_int_eq(gs_exception_fatal_oom(GS_KIND_HOST), GS_EXC_CPU_OOM);
	ck_assert_str_eq(gs_kind_name(GS_KIND_GPU), "gpu");
	ck_assert_str_eq(gs_kind_name(GS_KIND_HOST), "host");
}
END_TEST

/* ---- gs_thread_view_check and gs_thread_view_works_for ---- */

#define NO_POOL_TASKS (-100)

typedef struct {
	const char *what;
	/* Inputs */
	GsTaskId task;
	GsThreadState state;
	gboolean is_pool;
	gboolean shuffle;
	gboolean pool_blocked;
	GsTaskId pool_tasks[4]; /* NO_POOL_TASKS first: pool_tasks is NULL; else count given */
	guint n_pool_tasks;
	/* Outputs */
	gboolean valid;
} ViewRow;

static const ViewRow views[] = {
	{ "dedicated, running", 3, S(RUNNING), FALSE, FALSE, FALSE, { NO_POOL_TASKS }, 0, TRUE },
	{ "dedicated task 0, blocked", 0, S(BLOCKED), FALSE, FALSE, FALSE, { NO_POOL_TASKS }, 0,
	  TRUE },
	{ "dedicated, pool_blocked", 7, S(RUNNING), FALSE, FALSE, TRUE, { NO_POOL_TASKS }, 0, TRUE },
	{ "dedicated, bufn", 2, S(BUFN), FALSE, FALSE, FALSE, { NO_POOL_TASKS }, 0, TRUE },
	{ "pool, one task", GS_NO_TASK, S(RUNNING), TRUE, FALSE, FALSE, { 4 }, 1, TRUE },
	{ "pool, sorted tasks", GS_NO_TASK, S(ALLOC), TRUE, FALSE, FALSE, { 1, 2, 9 }, 3, TRUE },
	{ "shuffle pool, tasks", GS_NO_TASK, S(BLOCKED), TRUE, TRUE, FALSE, { 0, 5 }, 2, TRUE },
	{ "pool thread with a task id", 4, S(RUNNING), TRUE, FALSE, FALSE, { 4 }, 1, FALSE },
	{ "dedicated thread with pool tasks", 1, S(RUNNING), FALSE, FALSE, FALSE, { 1, 2 }, 2,
	  FALSE },
	{ "pool_blocked on a pool thread", GS_NO_TASK, S(RUNNING), TRUE, FALSE, TRUE, { 1 }, 1,
	  FALSE },
	{ "unsorted pool task ids", GS_NO_TASK, S(RUNNING), TRUE, FALSE, FALSE, { 3, 1 }, 2, FALSE },
	{ "duplicate pool task ids", GS_NO_TASK, S(RUNNING), TRUE, FALSE, FALSE, { 2, 2 }, 2,
	  FALSE },
	{ "UNKNOWN dedicated record", 1, S(UNKNOWN), FALSE, FALSE, FALSE, { NO_POOL_TASKS }, 0,
	  FALSE },
	{ "UNKNOWN pool record", GS_NO_TASK, S(UNKNOWN), TRUE, FALSE, FALSE, { 1 }, 1, FALSE },
	{ "dedicated thread without a task", GS_NO_TASK, S(RUNNING), FALSE, FALSE, FALSE,
	  { NO_POOL_TASKS }, 0, FALSE },
};

static GArray *
task_array(const GsTaskId *ids, guint n)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(GsTaskId));

	g_array_append_vals(a, ids, n);
	return a;
}

START_TEST(test_view_check)
{
	const ViewRow *row = &views[_i];
	GsThreadView v = {
		.id = 42,
		.task = row->task,
		.state = row->state,
		.alloc_kind = GS_KIND_GPU,
		.is_pool = row->is_pool,
		.shuffle = row->shuffle,
		.pool_blocked = row->pool_blocked,
		.pool_tasks = NULL,
	};
	const char *why;

	if (row->pool_tasks[0] != NO_POOL_TASKS)
		v.pool_tasks = task_array(row->pool_tasks, row->n_pool_tasks);
	why = gs_thread_view_check(&v);
	if (row->valid)
		ck_assert_msg(why == NULL, "%s: rejected (%s)", row->what, why);
	else
		ck_assert_msg(why != NULL && why[0] != '\0', "%s: accepted", row->what);
	if (v.pool_tasks != NULL)
		g_array_unref(v.pool_tasks);
}
END_TEST

START_TEST(test_view_works_for)
{
	static const GsTaskId ids[] = { 1, 3, 5 };
	GsThreadView pool = {
		.id = 9, .task = GS_NO_TASK, .state = GS_THREAD_RUNNING, .is_pool = TRUE,
	};
	GsThreadView dedicated = { .id = 10, .task = 3, .state = GS_THREAD_RUNNING };

	pool.pool_tasks = task_array(ids, G_N_ELEMENTS(ids));
	ck_assert(gs_thread_view_works_for(&pool, 1));
	ck_assert(gs_thread_view_works_for(&pool, 3));
	ck_assert(gs_thread_view_works_for(&pool, 5));
	ck_assert(!gs_thread_view_works_for(&pool, 0));
	ck_assert(!gs_thread_view_works_for(&pool, 2));
	ck_assert(!gs_thread_view_works_for(&pool, 6));
	ck_assert(!gs_thread_view_works_for(&pool, GS_NO_TASK));
	/* a dedicated thread works for no task as a pool thread */
	ck_assert(!gs_thread_view_works_for(&dedicated, 3));
	g_array_unref(pool.pool_tasks);
}
END_TEST

/*
 * Which logged transitions the model allows (what import-state-log checks):
 * every pair SparkResourceAdaptorJni.cpp's transition() and LOG_TRANSITION
 * can write is possible, with the first event that makes it; pairs that skip
 * a step are not.
 */
static const struct {
	GsThreadState from, to;
	gboolean possible;
	GsThreadEvent event;
} possible_pairs[] = {
	{ S(UNKNOWN), S(RUNNING), TRUE, E(REGISTER) },
	{ S(RUNNING), S(ALLOC), TRUE, E(ALLOC_START) },
	{ S(ALLOC), S(ALLOC_FREE), TRUE, E(FREED_SAME_KIND) },
	{ S(ALLOC), S(RUNNING), TRUE, E(ALLOC_SUCCESS) },
	{ S(ALLOC_FREE), S(RUNNING), TRUE, E(ALLOC_SUCCESS) },
	{ S(ALLOC), S(BLOCKED), TRUE, E(ALLOC_OOM) },
	{ S(ALLOC), S(BUFN_THROW), TRUE, E(ALLOC_OOM_LAST_TRY) },
	{ S(BLOCKED), S(RUNNING), TRUE, E(WAKE_ONE) },
	{ S(BLOCKED), S(BUFN_THROW), TRUE, E(BUST_ROLLBACK) },
	{ S(BUFN_THROW), S(BUFN_WAIT), TRUE, E(BLOCK_UNTIL_READY) },
	{ S(BUFN_WAIT), S(BUFN), TRUE, E(BLOCK_UNTIL_READY) },
	{ S(BUFN), S(SPLIT_THROW), TRUE, E(SPLIT_PICK) },
	{ S(SPLIT_THROW), S(RUNNING), TRUE, E(BLOCK_UNTIL_READY) },
	{ S(BUFN), S(RUNNING), TRUE, E(WAKE_BUFN) },
	{ S(BUFN_WAIT), S(RUNNING), TRUE, E(WAKE_BUFN) },
	{ S(BLOCKED), S(REMOVE_THROW), TRUE, E(REMOVE) },
	{ S(BUFN), S(REMOVE_THROW), TRUE, E(REMOVE) },
	{ S(REMOVE_THROW), S(UNKNOWN), TRUE, E(BLOCK_UNTIL_READY) },
	{ S(RUNNING), S(UNKNOWN), TRUE, E(REMOVE) },
	{ S(ALLOC), S(UNKNOWN), TRUE, E(REMOVE) },
	{ S(RUNNING), S(RUNNING), TRUE, E(REGISTER) },
	{ S(RUNNING), S(BLOCKED), FALSE, E(REGISTER) },
	{ S(RUNNING), S(BUFN), FALSE, E(REGISTER) },
	{ S(UNKNOWN), S(ALLOC), FALSE, E(REGISTER) },
	{ S(ALLOC), S(BUFN), FALSE, E(REGISTER) },
	{ S(BLOCKED), S(BUFN), FALSE, E(REGISTER) },
	{ S(BUFN), S(BLOCKED), FALSE, E(REGISTER) },
	{ S(BUFN_WAIT), S(SPLIT_THROW), FALSE, E(REGISTER) },
	{ S(SPLIT_THROW), S(BUFN), FALSE, E(REGISTER) },
	{ S(BLOCKED), S(UNKNOWN), FALSE, E(REGISTER) },
	{ S(REMOVE_THROW), S(RUNNING), FALSE, E(REGISTER) },
};

START_TEST(test_transition_possible)
{
	GsThreadEvent event = GS_N_THREAD_EVENTS;
	gboolean possible = gs_thread_transition_possible(possible_pairs[_i].from,
							  possible_pairs[_i].to, &event);

	ck_assert_msg(possible == possible_pairs[_i].possible, "%s -> %s",
		      gs_thread_state_name(possible_pairs[_i].from),
		      gs_thread_state_name(possible_pairs[_i].to));
	if (possible)
		ck_assert_str_eq(gs_thread_event_name(event),
				 gs_thread_event_name(possible_pairs[_i].event));
	else
		ck_assert_int_eq(event, GS_N_THREAD_EVENTS);
}
END_TEST

Suite *gs_test_suite_thread_state(void);

Suite *
gs_test_suite_thread_state(void)
{
	Suite *s = suite_create("thread-state");
	TCase *tc;

	tc = tcase_create("transitions");
	tcase_add_loop_test(tc, test_transition_row, 0, G_N_ELEMENTS(transitions));
	tcase_add_loop_test(tc, test_transition_all_pairs, 0,
			    GS_N_THREAD_STATES * GS_N_THREAD_EVENTS);
	tcase_add_loop_test(tc, test_transition_possible, 0, G_N_ELEMENTS(possible_pairs));
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_loop_test(tc, test_state_names, 0, G_N_ELEMENTS(states));
	tcase_add_test(tc, test_state_from_bad_name);
	tcase_add_test(tc, test_event_and_action_names);
	tcase_add_loop_test(tc, test_exception_names, 0, G_N_ELEMENTS(exceptions));
	tcase_add_test(tc, test_exception_misc);
	suite_add_tcase(s, tc);

	tc = tcase_create("views");
	tcase_add_loop_test(tc, test_view_check, 0, G_N_ELEMENTS(views));
	tcase_add_test(tc, test_view_works_for);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gs_test_suite_thread_state());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
