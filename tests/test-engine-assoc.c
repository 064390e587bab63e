/*
 * gpusim tests: registering, re-registering and removing threads, task done,
 * and the association errors of reference §1.7.
 */
#include "config.h"

#include "test-engine.h"

#define GPU GS_KIND_GPU

static void
expect_state(TlEngine *t, GsThreadId thread, GsThreadState state)
{
	GsThreadState got = tl_state(t, thread);

	ck_assert_msg(got == state, "thread %" G_GUINT64_FORMAT " is %s, expected %s", thread,
		      gs_thread_state_name(got), gs_thread_state_name(state));
}

/* Each row: how thread 1 is first registered (if at all), then the call and its answer. */
typedef enum {
	FIRST_NONE,
	FIRST_DEDICATED_1,
	FIRST_POOL,
	FIRST_SHUFFLE,
	FIRST_REMOVE_THROW, /* dedicated to task 1, removed while BLOCKED */
	FIRST_BLOCKED,      /* dedicated to task 1, BLOCKED */
	FIRST_WITH_SIBLING, /* dedicated to task 1, as thread 2 is */
} First;

typedef enum {
	THEN_DEDICATED_1,
	THEN_DEDICATED_2,
	THEN_DEDICATED_NEGATIVE,
	THEN_POOL,
	THEN_SHUFFLE,
	THEN_POOL_NEGATIVE,
	THEN_POOL_EMPTY,
	THEN_POOL_BLOCKED,
	THEN_POOL_DONE,
	THEN_FINISHED,      /* the thread's work ends */
	THEN_TASK_DONE,     /* task 1 is done */
	THEN_FINISHED_TASK_DONE, /* the thread's work ends, then task 1 is done */
} Then;

static const struct {
	First first;
	Then then;
	GsEngineError error;
	GsThreadState state_after;
	GsTaskId task_after;
} assoc_rows[] = {
	{FIRST_NONE, THEN_DEDICATED_1, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 1},
	{FIRST_NONE, THEN_POOL, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_NONE, THEN_DEDICATED_NEGATIVE, GS_ENGINE_ERROR_BAD_TASK, GS_THREAD_UNKNOWN, 0},
	{FIRST_NONE, THEN_POOL_NEGATIVE, GS_ENGINE_ERROR_BAD_TASK, GS_THREAD_UNKNOWN, 0},
	{FIRST_NONE, THEN_POOL_EMPTY, GS_ENGINE_ERROR_NONE, GS_THREAD_UNKNOWN, 0},
	{FIRST_NONE, THEN_POOL_BLOCKED, GS_ENGINE_ERROR_NOT_REGISTERED, GS_THREAD_UNKNOWN, 0},
	{FIRST_NONE, THEN_POOL_DONE, GS_ENGINE_ERROR_NOT_REGISTERED, GS_THREAD_UNKNOWN, 0},
	{FIRST_DEDICATED_1, THEN_DEDICATED_1, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 1},
	{FIRST_DEDICATED_1, THEN_DEDICATED_2, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 2},
	{FIRST_DEDICATED_1, THEN_POOL, GS_ENGINE_ERROR_DEDICATED_AS_POOL, GS_THREAD_RUNNING, 1},
	{FIRST_DEDICATED_1, THEN_POOL_BLOCKED, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 1},
	{FIRST_DEDICATED_1, THEN_POOL_DONE, GS_ENGINE_ERROR_DEDICATED_AS_POOL, GS_THREAD_RUNNING, 1},
	{FIRST_POOL, THEN_DEDICATED_1, GS_ENGINE_ERROR_POOL_AS_DEDICATED, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_POOL, THEN_POOL, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_POOL, THEN_SHUFFLE, GS_ENGINE_ERROR_SHUFFLE_MISMATCH, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_SHUFFLE, THEN_POOL, GS_ENGINE_ERROR_SHUFFLE_MISMATCH, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_SHUFFLE, THEN_SHUFFLE, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_POOL, THEN_POOL_BLOCKED, GS_ENGINE_ERROR_NOT_DEDICATED, GS_THREAD_RUNNING, GS_NO_TASK},
	{FIRST_POOL, THEN_POOL_DONE, GS_ENGINE_ERROR_NONE, GS_THREAD_UNKNOWN, 0},
	{FIRST_REMOVE_THROW, THEN_DEDICATED_1, GS_ENGINE_ERROR_SHUTTING_DOWN, GS_THREAD_REMOVE_THROW, 1},
	{FIRST_REMOVE_THROW, THEN_POOL, GS_ENGINE_ERROR_DEDICATED_AS_POOL, GS_THREAD_REMOVE_THROW, 1},
	{FIRST_REMOVE_THROW, THEN_DEDICATED_2, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 2},
	/* A pool thread whose work ends leaves all its tasks; a dedicated one waits for its task's end. */
	{FIRST_NONE, THEN_FINISHED, GS_ENGINE_ERROR_NONE, GS_THREAD_UNKNOWN, 0},
	{FIRST_POOL, THEN_FINISHED, GS_ENGINE_ERROR_NONE, GS_THREAD_UNKNOWN, 0},
	{FIRST_SHUFFLE, THEN_FINISHED, GS_ENGINE_ERROR_NONE, GS_THREAD_UNKNOWN, 0},
	{FIRST_DEDICATED_1, THEN_FINISHED, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 1},
	{FIRST_REMOVE_THROW, THEN_FINISHED, GS_ENGINE_ERROR_NONE, GS_THREAD_REMOVE_THROW, 1},
	{FIRST_WITH_SIBLING, THEN_FINISHED, GS_ENGINE_ERROR_NONE, GS_THREAD_RUNNING, 1},
	/* A blocked thread removed waits to throw; one whose work is over (it threw) is erased. */
	{FIRST_BLOCKED, THEN_TASK_DONE, GS_ENGINE_ERROR_NONE, GS_THREAD_REMOVE_THROW, 1},
	{FIRST_BLOCKED, THEN_FINISHED_TASK_DONE, GS_ENGINE_ERROR_NONE, GS_THREAD_UNKNOWN, 0},
};

static GsEngineError
then_call(TlEngine *t, Then then)
{
	static const GsTaskId tasks[] = {1, 3};
	static const GsTaskId negative[] = {-4};

	switch (then) {
	case THEN_DEDICATED_1:
		return gs_engine_register_dedicated(t->engine, 1, 1, 0);
	case THEN_DEDICATED_2:
		return gs_engine_register_dedicated(t->engine, 1, 2, 0);
	case THEN_DEDICATED_NEGATIVE:
		return gs_engine_register_dedicated(t->engine, 1, -3, 0);
	case THEN_POOL:
		return gs_engine_register_pool(t->engine, 1, tasks, 2, FALSE, 0);
	case THEN_SHUFFLE:
		return gs_engine_register_pool(t->engine, 1, tasks, 2, TRUE, 0);
	case THEN_POOL_NEGATIVE:
		return gs_engine_register_pool(t->engine, 1, negative, 1, FALSE, 0);
	case THEN_POOL_EMPTY:
		return gs_engine_register_pool(t->engine, 1, tasks, 0, FALSE, 0);
	case THEN_POOL_BLOCKED:
		return gs_engine_set_pool_blocked(t->engine, 1, TRUE);
	case THEN_POOL_DONE:
		return gs_engine_pool_done(t->engine, 1, tasks, 2, 0);
	case THEN_FINISHED:
		gs_engine_thread_finished(t->engine, 1, 0);
		return GS_ENGINE_ERROR_NONE;
	case THEN_TASK_DONE:
		gs_engine_task_done(t->engine, 1, 0);
		return GS_ENGINE_ERROR_NONE;
	case THEN_FINISHED_TASK_DONE:
		gs_engine_thread_finished(t->engine, 1, 0);
		gs_engine_task_done(t->engine, 1, 0);
		return GS_ENGINE_ERROR_NONE;
	}
	return GS_N_ENGINE_ERRORS;
}

static void
first_call(TlEngine *t, First first)
{
	switch (first) {
	case FIRST_NONE:
		break;
	case FIRST_DEDICATED_1:
		tl_dedicated(t, 1, 1);
		break;
	case FIRST_POOL:
		tl_pool(t, 1, FALSE, 1, 1);
		break;
	case FIRST_SHUFFLE:
		tl_pool(t, 1, TRUE, 1, 1);
		break;
	case FIRST_REMOVE_THROW:
		te_drive_to(t, GS_THREAD_REMOVE_THROW);
		break;
	case FIRST_BLOCKED:
		te_drive_to(t, GS_THREAD_BLOCKED);
		break;
	case FIRST_WITH_SIBLING:
		tl_dedicated(t, 1, 1);
		tl_dedicated(t, 2, 1);
		break;
	}
}

START_TEST(association_table)
{
	TlEngine *t = tl_engine_new(NULL);
	GsEngineError err;

	first_call(t, assoc_rows[_i].first);
	err = then_call(t, assoc_rows[_i].then);
	tl_check(t);
	ck_assert_msg(err == assoc_rows[_i].error, "row %d: got \"%s\"", _i, gs_engine_error_message(err));
	expect_state(t, 1, assoc_rows[_i].state_after);
	if (assoc_rows[_i].state_after != GS_THREAD_UNKNOWN)
		ck_assert_int_eq(gs_engine_thread_view(t->engine, 1)->task, assoc_rows[_i].task_after);
	tl_engine_free(t);
}
END_TEST

START_TEST(pool_tasks_merge_sorted_without_duplicates)
{
	TlEngine *t = tl_engine_new(NULL);
	const GsThreadView *v;

	tl_pool(t, 1, FALSE, 2, 5, 2);
	tl_pool(t, 1, FALSE, 3, 2, 9, 1);
	v = gs_engine_thread_view(t->engine, 1);
	ck_assert_uint_eq(v->pool_tasks->len, 4);
	ck_assert_int_eq(g_array_index(v->pool_tasks, GsTaskId, 0), 1);
	ck_assert_int_eq(g_array_index(v->pool_tasks, GsTaskId, 1), 2);
	ck_assert_int_eq(g_array_index(v->pool_tasks, GsTaskId, 2), 5);
	ck_assert_int_eq(g_array_index(v->pool_tasks, GsTaskId, 3), 9);
	ck_assert(gs_thread_view_works_for(v, 9));
	tl_engine_free(t);
}
END_TEST

START_TEST(fixup_runs_no_task_finished_wake)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, TE_HELPER, TE_HELPER);
	tl_dedicated(t, 2, 2);
	tl_begin(t, 2, GPU, TRUE, 0);
	tl_oom(t, 2, GPU, TRUE, 0);
	/* Thread 1 moves from task 1 to task 3: the old association just goes. */
	tl_dedicated(t, 1, 3);
	expect_state(t, 2, GS_THREAD_BLOCKED);
	ck_assert_int_eq(gs_engine_thread_view(t->engine, 1)->task, 3);
	/* Removing a RUNNING thread does wake. */
	gs_engine_remove_association(t->engine, 1, GS_NO_TASK, 1);
	tl_check(t);
	expect_state(t, 1, GS_THREAD_UNKNOWN);
	expect_state(t, 2, GS_THREAD_RUNNING);
	tl_engine_free(t);
}
END_TEST

START_TEST(remove_association_rules)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_pool(t, 2, FALSE, 2, 1, 2);
	/* A dedicated record goes only for its own task. */
	gs_engine_remove_association(t->engine, 1, 2, 0);
	expect_state(t, 1, GS_THREAD_RUNNING);
	gs_engine_remove_association(t->engine, 1, 1, 0);
	expect_state(t, 1, GS_THREAD_UNKNOWN);
	/* A pool record loses one task at a time and goes with the last. */
	gs_engine_remove_association(t->engine, 2, 1, 0);
	expect_state(t, 2, GS_THREAD_RUNNING);
	ck_assert(!gs_thread_view_works_for(gs_engine_thread_view(t->engine, 2), 1));
	gs_engine_remove_association(t->engine, 2, 7, 0);
	expect_state(t, 2, GS_THREAD_RUNNING);
	gs_engine_remove_association(t->engine, 2, 2, 0);
	expect_state(t, 2, GS_THREAD_UNKNOWN);
	/* Unknown threads are ignored. */
	gs_engine_remove_association(t->engine, 99, GS_NO_TASK, 0);
	tl_engine_free(t);
}
END_TEST

START_TEST(task_done_removes_dedicated_and_leaves_pools)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 1);
	tl_dedicated(t, 3, 2);
	tl_pool(t, 4, FALSE, 1, 1);
	tl_pool(t, 5, TRUE, 2, 1, 2);
	tl_task_done(t, 1, 0);
	expect_state(t, 1, GS_THREAD_UNKNOWN);
	expect_state(t, 2, GS_THREAD_UNKNOWN);
	expect_state(t, 3, GS_THREAD_RUNNING);
	expect_state(t, 4, GS_THREAD_UNKNOWN);
	expect_state(t, 5, GS_THREAD_RUNNING);
	ck_assert(!gs_thread_view_works_for(gs_engine_thread_view(t->engine, 5), 1));
	ck_assert(!gs_task_priorities_has(gs_engine_get_priorities(t->engine), 1));
	ck_assert(gs_task_priorities_has(gs_engine_get_priorities(t->engine), 2));
	tl_engine_free(t);
}
END_TEST

/*
 * A task registered first under a far id (its thread's too) is kept apart
 * from the arrays; once the ids handed out in sequence reach past it, it is
 * still found: task_done removes its thread.
 */
START_TEST(task_done_finds_a_task_the_arrays_grew_over)
{
	TlEngine *t = tl_engine_new(NULL);
	const GsTaskId far = 1500;

	tl_dedicated(t, far + 100, far);
	for (GsTaskId id = 0; id < far; id++)
		tl_dedicated(t, id, id);
	expect_state(t, far + 100, GS_THREAD_RUNNING);
	tl_task_done(t, far, 0);
	expect_state(t, far + 100, GS_THREAD_UNKNOWN);
	expect_state(t, far - 1, GS_THREAD_RUNNING);
	tl_check(t);
	tl_engine_free(t);
}
END_TEST

START_TEST(pool_done_with_last_task_wakes_blocked)
{
	TlEngine *t = tl_engine_new(NULL);
	GsTaskId tasks[] = {1};

	tl_dedicated(t, 1, 1);
	tl_pool(t, 2, FALSE, 1, 1);
	tl_begin(t, 1, GPU, TRUE, 0);
	tl_oom(t, 1, GPU, TRUE, 0);
	expect_state(t, 1, GS_THREAD_BLOCKED); /* the pool thread keeps task 1 going */
	ck_assert_int_eq(gs_engine_pool_done(t->engine, 2, tasks, 1, 0), GS_ENGINE_ERROR_NONE);
	tl_check(t);
	expect_state(t, 2, GS_THREAD_UNKNOWN);
	expect_state(t, 1, GS_THREAD_RUNNING);
	tl_engine_free(t);
}
END_TEST

START_TEST(fifo_slot_is_fixed_at_registration)
{
	TlEngine *t = tl_engine_new(NULL);
	GsTaskPriorities *p = gs_engine_get_priorities(t->engine);

	gs_engine_task_started(t->engine, 8);
	tl_dedicated(t, 1, 4);
	tl_pool(t, 2, FALSE, 2, 6, 5);
	ck_assert(gs_task_priorities_get(p, 8) > gs_task_priorities_get(p, 4));
	ck_assert(gs_task_priorities_get(p, 4) > gs_task_priorities_get(p, 5));
	ck_assert(gs_task_priorities_get(p, 5) > gs_task_priorities_get(p, 6));
	tl_engine_free(t);
}
END_TEST

/* Each row: how thread 1 stands, and the task whose rank it must carry (-1: above every task). */
static const struct {
	First first;
	GsTaskId rank_of;
} thread_rank_rows[] = {
	{FIRST_NONE, GS_NO_TASK},        /* no record: a pool thread working for no task */
	{FIRST_DEDICATED_1, 1},
	{FIRST_POOL, 1},                 /* works for task 1 */
	{FIRST_SHUFFLE, GS_NO_TASK},
	{FIRST_REMOVE_THROW, 1},
};

START_TEST(thread_rank_table)
{
	TlEngine *t = tl_engine_new(NULL);
	GsTaskPriorities *p = gs_engine_get_priorities(t->engine);
	GsPriority rank;

	gs_engine_task_started(t->engine, 3);
	gs_engine_task_started(t->engine, 1);
	first_call(t, thread_rank_rows[_i].first);
	rank = gs_engine_thread_priority(t->engine, 1);
	ck_assert_int_eq(rank.task, gs_task_priorities_get(p, thread_rank_rows[_i].rank_of));
	ck_assert_uint_eq(rank.thread, 1);
	tl_engine_free(t);
}
END_TEST

TCase *
gs_test_engine_assoc(void)
{
	TCase *tc = tcase_create("associations");

	tcase_add_loop_test(tc, association_table, 0, G_N_ELEMENTS(assoc_rows));
	tcase_add_test(tc, pool_tasks_merge_sorted_without_duplicates);
	tcase_add_test(tc, fixup_runs_no_task_finished_wake);
	tcase_add_test(tc, remove_association_rules);
	tcase_add_test(tc, task_done_removes_dedicated_and_leaves_pools);
	tcase_add_test(tc, task_done_finds_a_task_the_arrays_grew_over);
	tcase_add_test(tc, pool_done_with_last_task_wakes_blocked);
	tcase_add_test(tc, fifo_slot_is_fixed_at_registration);
	tcase_add_loop_test(tc, thread_rank_table, 0, G_N_ELEMENTS(thread_rank_rows));
	return tc;
}
