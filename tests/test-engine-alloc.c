/*
 * gpusim tests: the allocation protocol, block-until-ready, wake-ups,
 * injection and the retry cap, through the engine.
 */
#include "config.h"

#include "test-engine.h"

#define GPU GS_KIND_GPU
#define HOST GS_KIND_HOST

static void
expect(GsDecision d, GsVerdict verdict, GsException exc)
{
	ck_assert_int_eq(d.verdict, verdict);
	ck_assert_msg(d.exception == exc, "threw %s, expected %s", gs_exception_name(d.exception),
		      gs_exception_name(exc));
}

static void
expect_state(TlEngine *t, GsThreadId thread, GsThreadState state)
{
	GsThreadState got = tl_state(t, thread);

	ck_assert_msg(got == state, "thread %" G_GUINT64_FORMAT " is %s, expected %s", thread,
		      gs_thread_state_name(got), gs_thread_state_name(state));
}

void
te_drive_to(TlEngine *t, GsThreadState state)
{
	gboolean helper = state == GS_THREAD_BLOCKED || state == GS_THREAD_ALLOC_FREE ||
			  state == GS_THREAD_BUFN || state == GS_THREAD_SPLIT_THROW ||
			  state == GS_THREAD_REMOVE_THROW;

	if (state == GS_THREAD_UNKNOWN)
		return;
	tl_dedicated(t, 1, 1);
	if (helper)
		tl_dedicated(t, TE_HELPER, TE_HELPER);
	switch (state) {
	case GS_THREAD_UNKNOWN:
	case GS_THREAD_RUNNING:
		break;
	case GS_THREAD_ALLOC:
		expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_PROCEED, GS_EXC_NONE);
		break;
	case GS_THREAD_ALLOC_FREE:
		tl_begin(t, 1, GPU, TRUE, 0);
		tl_free(t, TE_HELPER, GPU, 10, 0);
		break;
	case GS_THREAD_BLOCKED:
	case GS_THREAD_REMOVE_THROW:
		/* Task 9 runs, so no deadlock: the thread just blocks. */
		tl_begin(t, 1, GPU, TRUE, 0);
		expect(tl_oom(t, 1, GPU, TRUE, 0), GS_VERDICT_RETRY, GS_EXC_NONE);
		if (state == GS_THREAD_REMOVE_THROW)
			gs_engine_remove_association(t->engine, 1, 1, 0);
		break;
	case GS_THREAD_BUFN_THROW:
	case GS_THREAD_BUFN_WAIT:
		/* Alone: BLOCKED, retried once, then rolled back for good. */
		tl_begin(t, 1, GPU, TRUE, 0);
		expect(tl_oom(t, 1, GPU, TRUE, 0), GS_VERDICT_RETRY, GS_EXC_NONE);
		tl_begin(t, 1, GPU, TRUE, 0);
		expect(tl_oom(t, 1, GPU, TRUE, 0), GS_VERDICT_RETRY, GS_EXC_NONE);
		if (state == GS_THREAD_BUFN_WAIT)
			expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM);
		break;
	case GS_THREAD_BUFN:
	case GS_THREAD_SPLIT_THROW:
	case GS_N_THREAD_STATES:
		break;
	}
	if (state == GS_THREAD_BUFN || state == GS_THREAD_SPLIT_THROW) {
		/* Roll back while task 9 runs, then wait in BUFN. */
		tl_begin(t, 1, GPU, TRUE, 0);
		tl_oom(t, 1, GPU, TRUE, 0);                  /* BLOCKED */
		ck_assert(tl_watchdog(t, 0, 1, TE_HELPER));  /* sole BLOCKED: retry once */
		tl_begin(t, 1, GPU, TRUE, 0);
		tl_oom(t, 1, GPU, TRUE, 0);                  /* BUFN_THROW */
		expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM);
		expect(tl_bur(t, 1, 0), GS_VERDICT_WAIT, GS_EXC_NONE);
		if (state == GS_THREAD_SPLIT_THROW)
			ck_assert(tl_watchdog(t, 0, 1, TE_HELPER));
	}
	expect_state(t, 1, state);
	g_array_set_size(t->seen, 0);
}

/* ---- one row per transition, applied through the engine ---- */

typedef enum {
	DO_BEGIN,          /* blocking GPU allocation begins */
	DO_BEGIN_HOST_NB,  /* non-blocking host allocation begins */
	DO_SUCCESS,
	DO_OOM,
	DO_OOM_NONBLOCKING,
	DO_OTHER_FAILURE,
	DO_HELPER_FREES,   /* thread 9 frees GPU memory */
	DO_HELPER_FREES_HOST,
	DO_BUR,
	DO_REMOVE,
	DO_HELPER_DONE,    /* task 9 finishes: the task-finished wake */
	DO_WATCHDOG_HELPER_OUTSIDE,
} Step;

static const struct {
	GsThreadState from;
	Step step;
	GsThreadState to;
	GsVerdict verdict;
	GsException exc;
} transition_rows[] = {
	{GS_THREAD_RUNNING, DO_BEGIN, GS_THREAD_ALLOC, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_RUNNING, DO_BEGIN_HOST_NB, GS_THREAD_ALLOC, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_RUNNING, DO_BUR, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_RUNNING, DO_REMOVE, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_RUNNING, DO_HELPER_FREES, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_RUNNING, DO_SUCCESS, GS_THREAD_RUNNING, GS_VERDICT_ERROR, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_SUCCESS, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_OOM, GS_THREAD_RUNNING, GS_VERDICT_RETRY, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_OTHER_FAILURE, GS_THREAD_RUNNING, GS_VERDICT_RETHROW, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_HELPER_FREES_HOST, GS_THREAD_ALLOC, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_BEGIN, GS_THREAD_ALLOC, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_BUR, GS_THREAD_ALLOC, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_ALLOC, DO_REMOVE, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_ALLOC_FREE, DO_SUCCESS, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_ALLOC_FREE, DO_OOM, GS_THREAD_RUNNING, GS_VERDICT_RETRY, GS_EXC_NONE},
	{GS_THREAD_ALLOC_FREE, DO_OTHER_FAILURE, GS_THREAD_RUNNING, GS_VERDICT_RETHROW, GS_EXC_NONE},
	{GS_THREAD_ALLOC_FREE, DO_REMOVE, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BLOCKED, DO_HELPER_FREES, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BLOCKED, DO_HELPER_FREES_HOST, GS_THREAD_BLOCKED, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BLOCKED, DO_BUR, GS_THREAD_BLOCKED, GS_VERDICT_WAIT, GS_EXC_NONE},
	{GS_THREAD_BLOCKED, DO_HELPER_DONE, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BLOCKED, DO_REMOVE, GS_THREAD_REMOVE_THROW, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BLOCKED, DO_WATCHDOG_HELPER_OUTSIDE, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BUFN_THROW, DO_BUR, GS_THREAD_BUFN_WAIT, GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM},
	{GS_THREAD_BUFN_THROW, DO_BEGIN, GS_THREAD_BUFN_WAIT, GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM},
	{GS_THREAD_BUFN_THROW, DO_REMOVE, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BUFN_WAIT, DO_BEGIN_HOST_NB, GS_THREAD_BUFN_WAIT, GS_VERDICT_ERROR, GS_EXC_NONE},
	{GS_THREAD_BUFN_WAIT, DO_REMOVE, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BUFN, DO_HELPER_FREES, GS_THREAD_BUFN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BUFN, DO_BUR, GS_THREAD_BUFN, GS_VERDICT_WAIT, GS_EXC_NONE},
	{GS_THREAD_BUFN, DO_HELPER_DONE, GS_THREAD_RUNNING, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BUFN, DO_REMOVE, GS_THREAD_REMOVE_THROW, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_BUFN, DO_WATCHDOG_HELPER_OUTSIDE, GS_THREAD_SPLIT_THROW, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_SPLIT_THROW, DO_BUR, GS_THREAD_RUNNING, GS_VERDICT_THROW, GS_EXC_GPU_SPLIT_AND_RETRY_OOM},
	/* Parked in block-until-ready, the thread must resume there, not in an allocation. */
	{GS_THREAD_SPLIT_THROW, DO_BEGIN, GS_THREAD_SPLIT_THROW, GS_VERDICT_ERROR, GS_EXC_NONE},
	{GS_THREAD_SPLIT_THROW, DO_REMOVE, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_REMOVE_THROW, DO_BUR, GS_THREAD_UNKNOWN, GS_VERDICT_THROW, GS_EXC_THREAD_REMOVED},
	{GS_THREAD_REMOVE_THROW, DO_BEGIN, GS_THREAD_UNKNOWN, GS_VERDICT_THROW, GS_EXC_THREAD_REMOVED},
	{GS_THREAD_UNKNOWN, DO_BEGIN, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
	{GS_THREAD_UNKNOWN, DO_BUR, GS_THREAD_UNKNOWN, GS_VERDICT_PROCEED, GS_EXC_NONE},
};

static GsDecision
do_step(TlEngine *t, Step step)
{
	GsDecision none = {.verdict = GS_VERDICT_PROCEED};

	switch (step) {
	case DO_BEGIN:
		return tl_begin(t, 1, GPU, TRUE, 5);
	case DO_BEGIN_HOST_NB:
		return tl_begin(t, 1, HOST, FALSE, 5);
	case DO_SUCCESS:
		return tl_success(t, 1, GPU, 10, 5);
	case DO_OOM:
		return tl_oom(t, 1, GPU, TRUE, 5);
	case DO_OOM_NONBLOCKING:
		return tl_oom(t, 1, GPU, FALSE, 5);
	case DO_OTHER_FAILURE:
		return gs_engine_alloc_failed(t->engine, 1, GPU, FALSE, TRUE, FALSE, 5);
	case DO_HELPER_FREES:
		tl_free(t, TE_HELPER, GPU, 10, 5);
		return none;
	case DO_HELPER_FREES_HOST:
		tl_free(t, TE_HELPER, HOST, 10, 5);
		return none;
	case DO_BUR:
		return tl_bur(t, 1, 5);
	case DO_REMOVE:
		gs_engine_remove_association(t->engine, 1, 1, 5);
		return none;
	case DO_HELPER_DONE:
		tl_task_done(t, TE_HELPER, 5);
		return none;
	case DO_WATCHDOG_HELPER_OUTSIDE:
		tl_watchdog(t, 5, 1, TE_HELPER);
		return none;
	}
	ck_abort_msg("unknown step");
	return none;
}

START_TEST(transition_through_engine)
{
	TlEngine *t = tl_engine_new(NULL);
	GsDecision d;

	te_drive_to(t, transition_rows[_i].from);
	d = do_step(t, transition_rows[_i].step);
	ck_assert_msg(d.verdict == transition_rows[_i].verdict, "row %d: verdict %d, expected %d", _i,
		      d.verdict, transition_rows[_i].verdict);
	ck_assert_msg(d.exception == transition_rows[_i].exc, "row %d: threw %s", _i,
		      gs_exception_name(d.exception));
	expect_state(t, 1, transition_rows[_i].to);
	tl_engine_free(t);
}
END_TEST

/* ---- the protocol's sequences ---- */

START_TEST(single_task_alone_retries_once_then_rolls_back_then_splits)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_begin(t, 1, GPU, TRUE, 0);
	/* First OOM: BLOCKED, the only task is blocked, the only BLOCKED retries once. */
	expect(tl_oom(t, 1, GPU, TRUE, 10), GS_VERDICT_RETRY, GS_EXC_NONE);
	expect_state(t, 1, GS_THREAD_RUNNING);
	ck_assert(tl_reached(t, 1, GS_THREAD_BLOCKED));
	ck_assert_int_eq(tl_bust(t, 0)->action, GS_BUST_RETRY_ONCE);
	ck_assert_int_eq(tl_bust(t, 0)->reason, GS_CHECK_ALLOC_FAILED);
	/* Second OOM: straight to BUFN_THROW, then RetryOOM from the next pre-alloc. */
	expect(tl_begin(t, 1, GPU, TRUE, 20), GS_VERDICT_PROCEED, GS_EXC_NONE);
	expect(tl_oom(t, 1, GPU, TRUE, 20), GS_VERDICT_RETRY, GS_EXC_NONE);
	expect_state(t, 1, GS_THREAD_BUFN_THROW);
	expect(tl_begin(t, 1, GPU, TRUE, 30), GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM);
	expect_state(t, 1, GS_THREAD_BUFN_WAIT);
	/* block-until-ready: BUFN, every task BUFN, the thread itself splits. */
	expect(tl_bur(t, 1, 40), GS_VERDICT_THROW, GS_EXC_GPU_SPLIT_AND_RETRY_OOM);
	expect_state(t, 1, GS_THREAD_RUNNING);
	ck_assert(tl_reached(t, 1, GS_THREAD_BUFN));
	ck_assert(tl_reached(t, 1, GS_THREAD_SPLIT_THROW));
	ck_assert_int_eq(tl_bust(t, 1)->action, GS_BUST_SPLIT);
	ck_assert_int_eq(tl_bust(t, 1)->reason, GS_CHECK_BUFN_WAIT);
	ck_assert_uint_eq(gs_engine_thread_cap_count(t->engine, 1), 2);
	tl_engine_free(t);
}
END_TEST

START_TEST(alloc_free_retries_at_once_without_waiting)
{
	TlEngine *t = tl_engine_new(NULL);

	te_drive_to(t, GS_THREAD_ALLOC_FREE);
	expect(tl_oom(t, 1, GPU, TRUE, 5), GS_VERDICT_RETRY, GS_EXC_NONE);
	ck_assert(!tl_reached(t, 1, GS_THREAD_BLOCKED));
	expect(tl_begin(t, 1, GPU, TRUE, 6), GS_VERDICT_PROCEED, GS_EXC_NONE);
	expect_state(t, 1, GS_THREAD_ALLOC);
	tl_engine_free(t);
}
END_TEST

START_TEST(own_free_leaves_own_alloc_alone)
{
	TlEngine *t = tl_engine_new(NULL);

	te_drive_to(t, GS_THREAD_ALLOC);
	tl_free(t, 1, GPU, 10, 1);
	expect_state(t, 1, GS_THREAD_ALLOC);
	tl_engine_free(t);
}
END_TEST

START_TEST(recursive_allocations)
{
	TlEngine *t = tl_engine_new(NULL);
	GsDecision d;

	te_drive_to(t, GS_THREAD_ALLOC);
	d = tl_begin(t, 1, GPU, TRUE, 1);
	expect(d, GS_VERDICT_PROCEED, GS_EXC_NONE);
	ck_assert(d.recursive);
	d = tl_begin(t, 1, HOST, FALSE, 1);
	ck_assert(d.recursive);
	d = tl_begin(t, 1, HOST, TRUE, 1);
	ck_assert_int_eq(d.verdict, GS_VERDICT_ERROR);
	ck_assert_int_eq(d.error, GS_ENGINE_ERROR_RECURSIVE_BLOCKING_HOST);
	/* A recursive success changes nothing and is not counted. */
	d = gs_engine_alloc_success(t->engine, 1, GPU, 100, TRUE, 1);
	expect(d, GS_VERDICT_PROCEED, GS_EXC_NONE);
	expect_state(t, 1, GS_THREAD_ALLOC);
	ck_assert_int_eq(gs_engine_gpu_allocated(t->engine), 0);
	/* A recursive OOM propagates as a plain fatal OOM. */
	d = gs_engine_alloc_failed(t->engine, 1, GPU, TRUE, TRUE, TRUE, 1);
	expect(d, GS_VERDICT_RETHROW, GS_EXC_GPU_OOM);
	expect_state(t, 1, GS_THREAD_ALLOC);
	tl_engine_free(t);
}
END_TEST

START_TEST(unregistered_threads_are_untracked)
{
	TlEngine *t = tl_engine_new(NULL);
	GsDecision d = tl_begin(t, 42, GPU, TRUE, 0);

	expect(d, GS_VERDICT_PROCEED, GS_EXC_NONE);
	ck_assert(!d.recursive);
	expect(tl_oom(t, 42, GPU, TRUE, 0), GS_VERDICT_RETHROW, GS_EXC_GPU_OOM);
	expect(tl_oom(t, 42, HOST, TRUE, 0), GS_VERDICT_RETHROW, GS_EXC_CPU_OOM);
	expect(tl_bur(t, 42, 0), GS_VERDICT_PROCEED, GS_EXC_NONE);
	expect(tl_success(t, 42, GPU, 64, 0), GS_VERDICT_PROCEED, GS_EXC_NONE);
	ck_assert_int_eq(gs_engine_gpu_allocated(t->engine), 0);
	ck_assert_uint_eq(gs_engine_n_threads(t->engine), 0);
	tl_engine_free(t);
}
END_TEST

START_TEST(nonblocking_host_oom_returns_to_running)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	expect(tl_begin(t, 1, HOST, FALSE, 0), GS_VERDICT_PROCEED, GS_EXC_NONE);
	expect(tl_oom(t, 1, HOST, FALSE, 0), GS_VERDICT_RETRY, GS_EXC_NONE);
	expect_state(t, 1, GS_THREAD_RUNNING);
	ck_assert(!tl_reached(t, 1, GS_THREAD_BLOCKED));
	tl_engine_free(t);
}
END_TEST

START_TEST(post_call_kind_must_match)
{
	TlEngine *t = tl_engine_new(NULL);
	GsDecision d;

	te_drive_to(t, GS_THREAD_ALLOC);
	d = tl_success(t, 1, HOST, 10, 0);
	ck_assert_int_eq(d.verdict, GS_VERDICT_ERROR);
	ck_assert_int_eq(d.error, GS_ENGINE_ERROR_KIND_MISMATCH);
	d = tl_oom(t, 1, HOST, TRUE, 0);
	ck_assert_int_eq(d.error, GS_ENGINE_ERROR_KIND_MISMATCH);
	expect_state(t, 1, GS_THREAD_ALLOC);
	tl_engine_free(t);
}
END_TEST

START_TEST(blocked_thread_waits_and_is_woken_by_a_free)
{
	TlEngine *t = tl_engine_new(NULL);
	g_autoptr(GArray) wakes = NULL;
	GsMetrics m;

	te_drive_to(t, GS_THREAD_BLOCKED);
	expect(tl_begin(t, 1, GPU, TRUE, 100), GS_VERDICT_WAIT, GS_EXC_NONE);
	ck_assert_uint_eq(gs_engine_pending_wakes(t->engine), 0);
	/* Resumed too early (nothing changed): still waits, nothing counted twice. */
	expect(tl_begin(t, 1, GPU, TRUE, 150), GS_VERDICT_WAIT, GS_EXC_NONE);
	tl_free(t, TE_HELPER, GPU, 10, 400);
	expect_state(t, 1, GS_THREAD_RUNNING);
	wakes = tl_wakes(t);
	ck_assert_uint_eq(wakes->len, 1);
	ck_assert_uint_eq(g_array_index(wakes, GsThreadId, 0), 1);
	expect(tl_begin(t, 1, GPU, TRUE, 400), GS_VERDICT_PROCEED, GS_EXC_NONE);
	expect_state(t, 1, GS_THREAD_ALLOC);
	gs_engine_thread_metrics(t->engine, 1, &m);
	ck_assert_int_eq(m.blocked_ns, 300);
	tl_engine_free(t);
}
END_TEST

START_TEST(wake_one_follows_the_kind_freed)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, TE_HELPER, TE_HELPER);
	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_begin(t, 1, HOST, TRUE, 0);
	tl_oom(t, 1, HOST, TRUE, 0);
	tl_begin(t, 2, GPU, TRUE, 0);
	tl_oom(t, 2, GPU, TRUE, 0);
	expect_state(t, 1, GS_THREAD_BLOCKED);
	expect_state(t, 2, GS_THREAD_BLOCKED);
	/* Thread 1 ranks higher, but GPU memory was freed: thread 2 runs. */
	tl_free(t, TE_HELPER, GPU, 10, 1);
	expect_state(t, 1, GS_THREAD_BLOCKED);
	expect_state(t, 2, GS_THREAD_RUNNING);
	tl_free(t, TE_HELPER, HOST, 10, 2);
	expect_state(t, 1, GS_THREAD_RUNNING);
	tl_engine_free(t);
}
END_TEST

START_TEST(wake_one_wakes_exactly_the_highest)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, TE_HELPER, TE_HELPER);
	for (GsThreadId id = 1; id <= 3; id++)
		tl_dedicated(t, id, (GsTaskId) id);
	for (GsThreadId id = 3; id >= 1; id--) {
		tl_begin(t, id, GPU, TRUE, 0);
		tl_oom(t, id, GPU, TRUE, 0);
	}
	/* An allocation success wakes one too; FIFO: task 1 was seen first after 9. */
	tl_begin(t, TE_HELPER, GPU, TRUE, 1);
	tl_success(t, TE_HELPER, GPU, 10, 1);
	expect_state(t, 1, GS_THREAD_RUNNING);
	expect_state(t, 2, GS_THREAD_BLOCKED);
	expect_state(t, 3, GS_THREAD_BLOCKED);
	tl_free(t, TE_HELPER, GPU, 10, 2);
	expect_state(t, 2, GS_THREAD_RUNNING);
	expect_state(t, 3, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

/* A chooser that answers @pick and writes down how many alternatives it was asked about. */
typedef struct {
	guint pick;
	guint asked, n;
} WakeChooser;

static guint
choose_recorded(guint n, gpointer data)
{
	WakeChooser *c = data;

	c->asked++;
	c->n = n;
	return c->pick;
}

static const struct {
	guint pick;
	GsThreadId woken; /* threads 1 to 3 share task 1 and rank by id; 4 is task 2's */
} wake_choice_rows[] = {
	{0, 3}, {1, 2}, {2, 1},
	{7, 3}, /* out of range: the engine's own order */
};

START_TEST(wake_one_asks_the_chooser_among_equal_ranks)
{
	TlEngine *t = tl_engine_new(NULL);
	WakeChooser chooser = {.pick = wake_choice_rows[_i].pick};

	tl_dedicated(t, TE_HELPER, TE_HELPER);
	for (GsThreadId id = 1; id <= 4; id++)
		tl_dedicated(t, id, id <= 3 ? 1 : 2);
	for (GsThreadId id = 1; id <= 4; id++) {
		tl_begin(t, id, GPU, TRUE, 0);
		tl_oom(t, id, GPU, TRUE, 0);
	}
	gs_engine_set_chooser(t->engine, choose_recorded, &chooser);
	tl_free(t, TE_HELPER, GPU, 10, 1);
	ck_assert_uint_eq(chooser.asked, 1);
	ck_assert_uint_eq(chooser.n, 3);
	for (GsThreadId id = 1; id <= 4; id++)
		expect_state(t, id, id == wake_choice_rows[_i].woken ? GS_THREAD_RUNNING
								      : GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(wake_one_asks_nobody_without_a_tie)
{
	TlEngine *t = tl_engine_new(NULL);
	WakeChooser chooser = {.pick = 1};

	tl_dedicated(t, TE_HELPER, TE_HELPER);
	for (GsThreadId id = 1; id <= 2; id++) {
		tl_dedicated(t, id, (GsTaskId) id);
		tl_begin(t, id, GPU, TRUE, 0);
		tl_oom(t, id, GPU, TRUE, 0);
	}
	gs_engine_set_chooser(t->engine, choose_recorded, &chooser);
	tl_free(t, TE_HELPER, GPU, 10, 1);
	ck_assert_uint_eq(chooser.asked, 0);
	expect_state(t, 1, GS_THREAD_RUNNING);
	expect_state(t, 2, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(frees_never_wake_bufn_threads)
{
	TlEngine *t = tl_engine_new(NULL);

	te_drive_to(t, GS_THREAD_BUFN);
	tl_free(t, TE_HELPER, GPU, 10, 1);
	tl_begin(t, TE_HELPER, GPU, TRUE, 1);
	tl_success(t, TE_HELPER, GPU, 10, 1);
	expect_state(t, 1, GS_THREAD_BUFN);
	ck_assert_uint_eq(gs_engine_pending_wakes(t->engine), 0);
	tl_engine_free(t);
}
END_TEST

START_TEST(host_rollback_throws_cpu_exceptions)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_begin(t, 1, HOST, TRUE, 0);
	tl_oom(t, 1, HOST, TRUE, 0);
	tl_begin(t, 1, HOST, TRUE, 0);
	tl_oom(t, 1, HOST, TRUE, 0);
	expect(tl_begin(t, 1, HOST, TRUE, 0), GS_VERDICT_THROW, GS_EXC_CPU_RETRY_OOM);
	expect(tl_bur(t, 1, 0), GS_VERDICT_THROW, GS_EXC_CPU_SPLIT_AND_RETRY_OOM);
	tl_engine_free(t);
}
END_TEST

START_TEST(removed_while_waiting_throws_thread_removed)
{
	TlEngine *t = tl_engine_new(NULL);
	g_autoptr(GArray) wakes = NULL;

	te_drive_to(t, GS_THREAD_BLOCKED);
	expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_WAIT, GS_EXC_NONE);
	tl_task_done(t, 1, 5);
	expect_state(t, 1, GS_THREAD_REMOVE_THROW);
	wakes = tl_wakes(t);
	ck_assert_uint_eq(wakes->len, 1);
	expect(tl_begin(t, 1, GPU, TRUE, 6), GS_VERDICT_THROW, GS_EXC_THREAD_REMOVED);
	expect_state(t, 1, GS_THREAD_UNKNOWN);
	ck_assert_uint_eq(gs_engine_n_threads(t->engine), 1);
	tl_engine_free(t);
}
END_TEST

/* ---- the retry cap ---- */

/* One cycle of a thread alone: RetryOOM then SplitAndRetryOOM; returns the last throw. */
static GsException
alone_cycle(TlEngine *t)
{
	GsDecision d = tl_alloc(t, 1, GPU, 10, FALSE, 0);

	if (d.exception != GS_EXC_GPU_RETRY_OOM)
		return d.exception;
	return tl_bur(t, 1, 0).exception;
}

START_TEST(retry_cap_at_exactly_500)
{
	TlEngine *t = tl_engine_new(NULL);
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	for (guint cycle = 0; cycle < 250; cycle++)
		ck_assert_int_eq(alone_cycle(t), GS_EXC_GPU_SPLIT_AND_RETRY_OOM);
	ck_assert_uint_eq(gs_engine_thread_cap_count(t->engine, 1), 500);
	/* The 251st cycle's RetryOOM is the 501st throw. */
	ck_assert_int_eq(alone_cycle(t), GS_EXC_RETRY_LIMIT_EXCEEDED);
	ck_assert_uint_eq(gs_engine_thread_cap_count(t->engine, 1), 500);
	gs_engine_thread_metrics(t->engine, 1, &m);
	ck_assert_uint_eq(m.retries, 251);
	ck_assert_uint_eq(m.splits, 250);
	tl_engine_free(t);
}
END_TEST

START_TEST(retry_cap_is_configurable_and_counts_splits)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;

	opts.retry_cap = 3;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	ck_assert_int_eq(alone_cycle(t), GS_EXC_GPU_SPLIT_AND_RETRY_OOM); /* throws 1, 2 */
	ck_assert_int_eq(tl_alloc(t, 1, GPU, 10, FALSE, 0).exception, GS_EXC_GPU_RETRY_OOM); /* 3 */
	/* The fourth would be the split: the limit replaces it. */
	ck_assert_int_eq(tl_bur(t, 1, 0).exception, GS_EXC_RETRY_LIMIT_EXCEEDED);
	tl_engine_free(t);
}
END_TEST

START_TEST(injections_do_not_count_toward_the_cap)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;

	opts.retry_cap = 2;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	ck_assert_int_eq(gs_engine_force_retry_oom(t->engine, 1, 5, GS_KIND_FILTER_ANY, 0),
			 GS_ENGINE_ERROR_NONE);
	for (int i = 0; i < 5; i++)
		expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM);
	ck_assert_uint_eq(gs_engine_thread_cap_count(t->engine, 1), 0);
	ck_assert_int_eq(alone_cycle(t), GS_EXC_GPU_SPLIT_AND_RETRY_OOM);
	tl_engine_free(t);
}
END_TEST

/* ---- injection ---- */

typedef struct {
	const char *name;
	/* Inputs: what is armed, then the allocations made (kinds, in order). */
	int retry, retry_skip;
	GsKindFilter retry_filter;
	int cudf;
	int split, split_skip;
	GsKindFilter split_filter;
	guint n_allocs;
	const GsAllocKind kinds[6];
	/* Outputs: what each allocation throws. */
	const GsException thrown[6];
} InjectionRow;

static const InjectionRow injection_rows[] = {
	{"retry twice", 2, 0, GS_KIND_FILTER_ANY, 0, 0, 0, GS_KIND_FILTER_ANY, 3,
	 {GPU, GPU, GPU},
	 {GS_EXC_GPU_RETRY_OOM, GS_EXC_GPU_RETRY_OOM, GS_EXC_NONE}},
	{"retry after a skip", 1, 1, GS_KIND_FILTER_ANY, 0, 0, 0, GS_KIND_FILTER_ANY, 3,
	 {GPU, GPU, GPU},
	 {GS_EXC_NONE, GS_EXC_GPU_RETRY_OOM, GS_EXC_NONE}},
	{"retry host only", 1, 0, GS_KIND_FILTER_HOST, 0, 0, 0, GS_KIND_FILTER_ANY, 3,
	 {GPU, HOST, HOST},
	 {GS_EXC_NONE, GS_EXC_CPU_RETRY_OOM, GS_EXC_NONE}},
	{"skips only on matching kind", 1, 1, GS_KIND_FILTER_GPU, 0, 0, 0, GS_KIND_FILTER_ANY, 4,
	 {HOST, HOST, GPU, GPU},
	 {GS_EXC_NONE, GS_EXC_NONE, GS_EXC_NONE, GS_EXC_GPU_RETRY_OOM}},
	{"kind of this allocation", 2, 0, GS_KIND_FILTER_ANY, 0, 0, 0, GS_KIND_FILTER_ANY, 2,
	 {HOST, GPU},
	 {GS_EXC_CPU_RETRY_OOM, GS_EXC_GPU_RETRY_OOM}},
	{"cudf, any kind", 0, 0, GS_KIND_FILTER_ANY, 2, 0, 0, GS_KIND_FILTER_ANY, 3,
	 {HOST, GPU, GPU},
	 {GS_EXC_CUDF_EXCEPTION, GS_EXC_CUDF_EXCEPTION, GS_EXC_NONE}},
	{"split", 0, 0, GS_KIND_FILTER_ANY, 0, 1, 0, GS_KIND_FILTER_ANY, 2,
	 {GPU, GPU},
	 {GS_EXC_GPU_SPLIT_AND_RETRY_OOM, GS_EXC_NONE}},
	{"split gpu only after a skip", 0, 0, GS_KIND_FILTER_ANY, 0, 1, 1, GS_KIND_FILTER_GPU, 4,
	 {HOST, GPU, HOST, GPU},
	 {GS_EXC_NONE, GS_EXC_NONE, GS_EXC_NONE, GS_EXC_GPU_SPLIT_AND_RETRY_OOM}},
	{"order: retry, cudf, split", 1, 0, GS_KIND_FILTER_ANY, 1, 1, 0, GS_KIND_FILTER_ANY, 4,
	 {GPU, GPU, GPU, GPU},
	 {GS_EXC_GPU_RETRY_OOM, GS_EXC_CUDF_EXCEPTION, GS_EXC_GPU_SPLIT_AND_RETRY_OOM, GS_EXC_NONE}},
	{"a retry skip still lets split fire", 1, 1, GS_KIND_FILTER_ANY, 0, 1, 0, GS_KIND_FILTER_ANY, 2,
	 {GPU, GPU},
	 {GS_EXC_GPU_SPLIT_AND_RETRY_OOM, GS_EXC_GPU_RETRY_OOM}},
};

START_TEST(injection_table)
{
	const InjectionRow *row = &injection_rows[_i];
	TlEngine *t = tl_engine_new(NULL);
	guint retries = 0, splits = 0;
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	ck_assert_int_eq(gs_engine_force_retry_oom(t->engine, 1, row->retry, row->retry_filter,
						   row->retry_skip), GS_ENGINE_ERROR_NONE);
	ck_assert_int_eq(gs_engine_force_cudf_exception(t->engine, 1, row->cudf), GS_ENGINE_ERROR_NONE);
	ck_assert_int_eq(gs_engine_force_split_oom(t->engine, 1, row->split, row->split_filter,
						   row->split_skip), GS_ENGINE_ERROR_NONE);
	for (guint i = 0; i < row->n_allocs; i++) {
		GsDecision d;

		d = tl_begin(t, 1, row->kinds[i], TRUE, 0);
		ck_assert_msg(d.exception == row->thrown[i], "%s: allocation %u threw %s", row->name, i,
			      gs_exception_name(d.exception));
		if (d.verdict == GS_VERDICT_PROCEED) {
			expect_state(t, 1, GS_THREAD_ALLOC);
			tl_success(t, 1, row->kinds[i], 1, 0);
		}
		/* Injection never changes the state. */
		expect_state(t, 1, GS_THREAD_RUNNING);
		retries += gs_exception_is_recoverable(d.exception) && !gs_exception_is_split(d.exception);
		splits += gs_exception_is_split(d.exception);
	}
	gs_engine_thread_metrics(t->engine, 1, &m);
	ck_assert_uint_eq(m.retries, retries);
	ck_assert_uint_eq(m.splits, splits);
	ck_assert_uint_eq(tl_count(t, TL_SEEN_THROW, 1), retries + splits + (guint) row->cudf);
	tl_engine_free(t);
}
END_TEST

START_TEST(injection_errors_and_overwrite)
{
	TlEngine *t = tl_engine_new(NULL);

	ck_assert_int_eq(gs_engine_force_retry_oom(t->engine, 7, 1, GS_KIND_FILTER_ANY, 0),
			 GS_ENGINE_ERROR_NOT_REGISTERED);
	ck_assert_int_eq(gs_engine_force_cudf_exception(t->engine, 7, 1), GS_ENGINE_ERROR_NOT_REGISTERED);
	tl_dedicated(t, 1, 1);
	ck_assert_int_eq(gs_engine_force_split_oom(t->engine, 1, -1, GS_KIND_FILTER_ANY, 0),
			 GS_ENGINE_ERROR_NEGATIVE_COUNT);
	ck_assert_int_eq(gs_engine_force_retry_oom(t->engine, 1, 1, GS_KIND_FILTER_ANY, -2),
			 GS_ENGINE_ERROR_NEGATIVE_COUNT);
	ck_assert_int_eq(gs_engine_force_cudf_exception(t->engine, 1, -1), GS_ENGINE_ERROR_NEGATIVE_COUNT);
	/* Arming again overwrites; zero clears. */
	gs_engine_force_retry_oom(t->engine, 1, 3, GS_KIND_FILTER_ANY, 0);
	gs_engine_force_retry_oom(t->engine, 1, 0, GS_KIND_FILTER_ANY, 0);
	expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_PROCEED, GS_EXC_NONE);
	tl_engine_free(t);
}
END_TEST

START_TEST(injection_fires_before_a_pending_rollback)
{
	TlEngine *t = tl_engine_new(NULL);

	te_drive_to(t, GS_THREAD_BUFN_THROW);
	gs_engine_force_cudf_exception(t->engine, 1, 1);
	expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_THROW, GS_EXC_CUDF_EXCEPTION);
	expect_state(t, 1, GS_THREAD_BUFN_THROW);
	ck_assert(tl_count(t, TL_SEEN_THROW, 1) == 1);
	ck_assert(g_array_index(t->seen, TlSeen, 0).injected);
	expect(tl_begin(t, 1, GPU, TRUE, 0), GS_VERDICT_THROW, GS_EXC_GPU_RETRY_OOM);
	tl_engine_free(t);
}
END_TEST

TCase *
gs_test_engine_alloc(void)
{
	TCase *tc = tcase_create("alloc");

	tcase_add_loop_test(tc, transition_through_engine, 0, G_N_ELEMENTS(transition_rows));
	tcase_add_test(tc, single_task_alone_retries_once_then_rolls_back_then_splits);
	tcase_add_test(tc, alloc_free_retries_at_once_without_waiting);
	tcase_add_test(tc, own_free_leaves_own_alloc_alone);
	tcase_add_test(tc, recursive_allocations);
	tcase_add_test(tc, unregistered_threads_are_untracked);
	tcase_add_test(tc, nonblocking_host_oom_returns_to_running);
	tcase_add_test(tc, post_call_kind_must_match);
	tcase_add_test(tc, blocked_thread_waits_and_is_woken_by_a_free);
	tcase_add_test(tc, wake_one_follows_the_kind_freed);
	tcase_add_test(tc, wake_one_wakes_exactly_the_highest);
	tcase_add_loop_test(tc, wake_one_asks_the_chooser_among_equal_ranks, 0,
			    G_N_ELEMENTS(wake_choice_rows));
	tcase_add_test(tc, wake_one_asks_nobody_without_a_tie);
	tcase_add_test(tc, frees_never_wake_bufn_threads);
	tcase_add_test(tc, host_rollback_throws_cpu_exceptions);
	tcase_add_test(tc, removed_while_waiting_throws_thread_removed);
	tcase_add_test(tc, retry_cap_at_exactly_500);
	tcase_add_test(tc, retry_cap_is_configurable_and_counts_splits);
	tcase_add_test(tc, injections_do_not_count_toward_the_cap);
	tcase_add_loop_test(tc, injection_table, 0, G_N_ELEMENTS(injection_rows));
	tcase_add_test(tc, injection_errors_and_overwrite);
	tcase_add_test(tc, injection_fires_before_a_pending_rollback);
	return tc;
}
