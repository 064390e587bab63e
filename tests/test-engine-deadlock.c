/*
 * gpusim tests: deadlock detection and busting through the engine, the
 * task-finished wake, priority rules in action, and the watchdog.
 */
#include "config.h"

#include "test-engine.h"

#define GPU GS_KIND_GPU
#define HOST GS_KIND_HOST

static void
block(TlEngine *t, GsThreadId thread, GsAllocKind kind)
{
	GsDecision d = tl_begin(t, thread, kind, TRUE, 0);

	ck_assert_int_eq(d.verdict, GS_VERDICT_PROCEED);
	d = tl_oom(t, thread, kind, TRUE, 0);
	ck_assert_int_eq(d.verdict, GS_VERDICT_RETRY);
}

static void
expect_state(TlEngine *t, GsThreadId thread, GsThreadState state)
{
	GsThreadState got = tl_state(t, thread);

	ck_assert_msg(got == state, "thread %" G_GUINT64_FORMAT " is %s, expected %s", thread,
		      gs_thread_state_name(got), gs_thread_state_name(state));
}

START_TEST(two_tasks_blocked_roll_back_the_lowest)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	block(t, 2, GPU);
	expect_state(t, 2, GS_THREAD_BLOCKED); /* task 1 still runs */
	block(t, 1, GPU);
	/* Both tasks blocked: task 2 (seen second) ranks lower and rolls back. */
	expect_state(t, 1, GS_THREAD_BLOCKED);
	expect_state(t, 2, GS_THREAD_BUFN_THROW);
	ck_assert_int_eq(tl_bust(t, 0)->action, GS_BUST_ROLLBACK);
	ck_assert_uint_eq(tl_bust(t, 0)->thread, 2);
	/* It throws RetryOOM and waits in BUFN; the check then retries thread 1 once. */
	ck_assert_int_eq(tl_begin(t, 2, GPU, TRUE, 1).exception, GS_EXC_GPU_RETRY_OOM);
	ck_assert_int_eq(tl_bur(t, 2, 2).verdict, GS_VERDICT_WAIT);
	expect_state(t, 2, GS_THREAD_BUFN);
	expect_state(t, 1, GS_THREAD_RUNNING);
	ck_assert_int_eq(tl_bust(t, 1)->action, GS_BUST_RETRY_ONCE);
	ck_assert_int_eq(tl_bust(t, 1)->reason, GS_CHECK_BUFN_WAIT);
	/* Not every task is BUFN, so nobody splits. */
	ck_assert_ptr_null(tl_bust(t, 2));
	tl_engine_free(t);
}
END_TEST

START_TEST(the_released_bufn_thread_runs_after_a_task_finishes)
{
	TlEngine *t = tl_engine_new(NULL);
	g_autoptr(GArray) wakes = NULL;

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	block(t, 2, GPU);
	block(t, 1, GPU);
	tl_begin(t, 2, GPU, TRUE, 1);
	ck_assert_int_eq(tl_bur(t, 2, 2).verdict, GS_VERDICT_WAIT);
	tl_begin(t, 1, GPU, TRUE, 3);
	tl_success(t, 1, GPU, 100, 3);
	expect_state(t, 2, GS_THREAD_BUFN); /* success does not release BUFN */
	tl_task_done(t, 1, 10);
	expect_state(t, 2, GS_THREAD_RUNNING);
	wakes = tl_wakes(t);
	ck_assert_uint_eq(wakes->len, 1);
	ck_assert_int_eq(tl_bur(t, 2, 10).verdict, GS_VERDICT_PROCEED);
	tl_engine_free(t);
}
END_TEST

START_TEST(task_finished_wake_prefers_blocked_threads)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_dedicated(t, 3, 3);
	tl_dedicated(t, 4, 4);
	block(t, 3, GPU);
	block(t, 2, GPU); /* 1 and 4 run: no deadlock */
	gs_engine_set_pool_blocked(t->engine, 4, TRUE);
	/* Thread 3 is the lowest BLOCKED once task 1 is done with its allocation: */
	ck_assert(tl_watchdog(t, 0, 1, 1));
	expect_state(t, 3, GS_THREAD_BUFN_THROW);
	tl_task_done(t, 1, 5);
	/* A BLOCKED thread existed, so only BLOCKED threads ran again. */
	expect_state(t, 2, GS_THREAD_RUNNING);
	expect_state(t, 3, GS_THREAD_BUFN_THROW);
	tl_task_done(t, 4, 6);
	/* None BLOCKED now: the pending rollback is cancelled. */
	expect_state(t, 3, GS_THREAD_RUNNING);
	tl_engine_free(t);
}
END_TEST

START_TEST(task_done_of_a_waiting_thread_wakes_nobody_else)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_dedicated(t, TE_HELPER, TE_HELPER);
	block(t, 1, GPU);
	block(t, 2, GPU);
	/* Thread 1 is BLOCKED when its task ends: it was not RUNNING, no wake. */
	tl_task_done(t, 1, 0);
	expect_state(t, 1, GS_THREAD_REMOVE_THROW);
	expect_state(t, 2, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(retry_once_can_be_turned_off)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;

	opts.retry_before_bufn = FALSE;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	block(t, 1, GPU);
	expect_state(t, 1, GS_THREAD_BUFN_THROW);
	ck_assert_int_eq(tl_bust(t, 0)->action, GS_BUST_ROLLBACK);
	tl_engine_free(t);
}
END_TEST

/* All tasks BUFN through the watchdog: which BUFN thread splits. */
static GsThreadId
split_victim(GsSplitVictim rule)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;
	GsThreadId victim = 0;

	opts.split_victim = rule;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_dedicated(t, 3, 3);
	/* Threads 1 and 2 roll back to BUFN while thread 3 is busy. */
	for (GsThreadId id = 1; id <= 2; id++) {
		block(t, id, GPU);
		/* Everyone else looks asleep: deadlock, and the only BLOCKED thread retries once. */
		ck_assert(id == 1 ? tl_watchdog(t, 0, 2, 2, 3) : tl_watchdog(t, 0, 1, 3));
		expect_state(t, id, GS_THREAD_RUNNING);
		block(t, id, GPU);
		expect_state(t, id, GS_THREAD_BUFN_THROW);
		ck_assert_int_eq(tl_begin(t, id, GPU, TRUE, 0).exception, GS_EXC_GPU_RETRY_OOM);
		ck_assert_int_eq(tl_bur(t, id, 0).verdict, GS_VERDICT_WAIT);
	}
	expect_state(t, 1, GS_THREAD_BUFN);
	expect_state(t, 2, GS_THREAD_BUFN);
	/* Thread 3 sleeps: every task is BUFN. */
	g_array_set_size(t->seen, 0);
	ck_assert(tl_watchdog(t, 1, 1, 3));
	for (GsThreadId id = 1; id <= 2; id++) {
		if (tl_state(t, id) == GS_THREAD_SPLIT_THROW)
			victim = id;
	}
	ck_assert_int_eq(tl_bust(t, 0)->action, GS_BUST_SPLIT);
	ck_assert_int_eq(tl_bust(t, 0)->reason, GS_CHECK_WATCHDOG);
	ck_assert_uint_eq(tl_bust(t, 0)->thread, victim);
	tl_engine_free(t);
	return victim;
}

START_TEST(split_victim_highest_by_default_lowest_by_option)
{
	ck_assert_uint_eq(split_victim(GS_SPLIT_HIGHEST), 1);
	ck_assert_uint_eq(split_victim(GS_SPLIT_LOWEST), 2);
}
END_TEST

START_TEST(watchdog_sees_sleeping_threads)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	block(t, 2, GPU);
	/* State-machine view: task 1 runs, no deadlock. */
	ck_assert(!tl_watchdog(t, 0, 0));
	expect_state(t, 2, GS_THREAD_BLOCKED);
	/* Thread 1 sleeps: the watchdog treats it as rolled back. */
	ck_assert(tl_watchdog(t, 0, 1, 1));
	expect_state(t, 2, GS_THREAD_RUNNING); /* the only BLOCKED thread retries once */
	ck_assert_int_eq(tl_bust(t, 0)->reason, GS_CHECK_WATCHDOG);
	tl_engine_free(t);
}
END_TEST

START_TEST(outside_set_never_makes_a_blocked_thread_bufn)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;

	opts.retry_before_bufn = FALSE;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_dedicated(t, TE_HELPER, TE_HELPER);
	/* Thread 2 rolls back to BUFN while the others look asleep. */
	block(t, 2, GPU);
	ck_assert(tl_watchdog(t, 0, 2, 1, TE_HELPER));
	tl_begin(t, 2, GPU, TRUE, 0);
	ck_assert_int_eq(tl_bur(t, 2, 0).verdict, GS_VERDICT_WAIT);
	expect_state(t, 2, GS_THREAD_BUFN);
	block(t, 1, GPU);
	expect_state(t, 1, GS_THREAD_BLOCKED);
	/* Thread 1 is named as waiting outside, but BLOCKED is never BUFN: no split. */
	ck_assert(tl_watchdog(t, 0, 2, 1, TE_HELPER));
	expect_state(t, 1, GS_THREAD_BUFN_THROW);
	expect_state(t, 2, GS_THREAD_BUFN);
	tl_engine_free(t);
}
END_TEST

START_TEST(waiting_on_a_pool_counts_as_rolled_back)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	ck_assert_int_eq(gs_engine_set_pool_blocked(t->engine, 1, TRUE), GS_ENGINE_ERROR_NONE);
	block(t, 2, GPU);
	/* Task 1 waits on a pool, task 2 is blocked: deadlock, found at once. */
	expect_state(t, 2, GS_THREAD_RUNNING);
	ck_assert_int_eq(tl_bust(t, 0)->action, GS_BUST_RETRY_ONCE);
	ck_assert_int_eq(gs_engine_set_pool_blocked(t->engine, 1, FALSE), GS_ENGINE_ERROR_NONE);
	tl_dedicated(t, 3, 3);
	block(t, 3, GPU);
	expect_state(t, 3, GS_THREAD_BLOCKED); /* task 1 runs again */
	tl_engine_free(t);
}
END_TEST

START_TEST(a_busy_pool_thread_unblocks_its_tasks)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_pool(t, 50, FALSE, 2, 1, 2);
	block(t, 1, GPU);
	block(t, 2, GPU);
	/* Pool thread 50 runs for tasks 1 and 2: neither task is blocked. */
	expect_state(t, 1, GS_THREAD_BLOCKED);
	expect_state(t, 2, GS_THREAD_BLOCKED);
	ck_assert(!tl_watchdog(t, 0, 0));
	/* Once it sleeps, both are. */
	ck_assert(tl_watchdog(t, 0, 1, 50));
	expect_state(t, 2, GS_THREAD_BUFN_THROW);
	tl_engine_free(t);
}
END_TEST

START_TEST(a_blocked_pool_thread_does_not_unblock)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_pool(t, 50, TRUE, 1, 1);
	block(t, 50, GPU);
	expect_state(t, 50, GS_THREAD_BLOCKED); /* task 1's thread runs */
	block(t, 1, GPU);
	/* Everything blocked; the lowest BLOCKED is task 1's thread (shuffle ranks highest). */
	expect_state(t, 1, GS_THREAD_BUFN_THROW);
	expect_state(t, 50, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(only_pool_threads_is_no_deadlock)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_pool(t, 50, FALSE, 1, 1);
	tl_pool(t, 51, TRUE, 1, 2);
	block(t, 50, GPU);
	block(t, 51, HOST);
	ck_assert(!tl_watchdog(t, 0, 0));
	expect_state(t, 50, GS_THREAD_BLOCKED);
	expect_state(t, 51, GS_THREAD_BLOCKED);
	ck_assert_uint_eq(gs_engine_n_busts(t->engine), 0);
	tl_engine_free(t);
}
END_TEST

START_TEST(host_and_gpu_blocked_tasks_deadlock_together)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	block(t, 1, HOST);
	block(t, 2, GPU);
	expect_state(t, 2, GS_THREAD_BUFN_THROW);
	expect_state(t, 1, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(shuffle_thread_is_woken_first)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, TE_HELPER, TE_HELPER);
	tl_dedicated(t, 1, 1);
	tl_pool(t, 2, TRUE, 1, 1);
	block(t, 1, GPU);
	block(t, 2, GPU);
	tl_free(t, TE_HELPER, GPU, 1, 0);
	expect_state(t, 2, GS_THREAD_RUNNING);
	expect_state(t, 1, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(pool_priority_by_smallest_task_id_or_best_task)
{
	for (int rule = 0; rule < 2; rule++) {
		GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
		TlEngine *t;

		opts.pool_priority = rule;
		t = tl_engine_new(&opts);
		tl_dedicated(t, TE_HELPER, TE_HELPER);
		tl_dedicated(t, 1, 5); /* task 5 is seen before task 3 */
		tl_dedicated(t, 2, 3);
		tl_pool(t, 3, FALSE, 2, 3, 5); /* smallest id 3, best task 5 */
		block(t, 3, GPU);
		block(t, 1, GPU);
		/* Thread 3 ranks as task 3 (below thread 1's task 5) or as task 5 (above, id 3 > 1). */
		tl_free(t, TE_HELPER, GPU, 1, 0);
		expect_state(t, rule == GS_POOL_PRIORITY_BEST_TASK ? 3 : 1, GS_THREAD_RUNNING);
		expect_state(t, rule == GS_POOL_PRIORITY_BEST_TASK ? 1 : 3, GS_THREAD_BLOCKED);
		tl_engine_free(t);
	}
}
END_TEST

START_TEST(ties_go_to_the_larger_thread_id)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, TE_HELPER, TE_HELPER);
	tl_dedicated(t, 4, 1);
	tl_dedicated(t, 7, 1);
	block(t, 4, GPU);
	block(t, 7, GPU);
	tl_free(t, TE_HELPER, GPU, 1, 0);
	expect_state(t, 7, GS_THREAD_RUNNING);
	expect_state(t, 4, GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

START_TEST(task_id_priority_mode)
{
	for (int mode = 0; mode < 2; mode++) {
		GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
		TlEngine *t;

		opts.priority = mode;
		t = tl_engine_new(&opts);
		tl_dedicated(t, 1, 5); /* first seen */
		tl_dedicated(t, 2, 3); /* smaller id */
		block(t, 1, GPU);
		block(t, 2, GPU);
		/* The lower-ranked of the two rolls back. */
		expect_state(t, mode == GS_PRIORITY_FIFO ? 2 : 1, GS_THREAD_BUFN_THROW);
		tl_engine_free(t);
	}
}
END_TEST

START_TEST(explicit_task_priority_overrides)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	gs_task_priorities_set(gs_engine_get_priorities(t->engine), 2, G_MAXINT64 - 1);
	gs_task_priorities_set(gs_engine_get_priorities(t->engine), 1, 10);
	block(t, 2, GPU);
	block(t, 1, GPU);
	expect_state(t, 1, GS_THREAD_BUFN_THROW);
	tl_engine_free(t);
}
END_TEST

START_TEST(strict_all_bufn_option)
{
	for (int strict = 0; strict < 2; strict++) {
		GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
		TlEngine *t;

		opts.strict_all_bufn = strict;
		t = tl_engine_new(&opts);
		tl_dedicated(t, 1, 1);
		tl_dedicated(t, 2, 2);
		tl_dedicated(t, 3, 3);
		tl_pool(t, 50, FALSE, 1, 7); /* serves only task 7, which has no dedicated thread */
		/* Thread 1 to BUFN while the others look asleep. */
		block(t, 1, GPU);
		ck_assert(tl_watchdog(t, 0, 2, 2, 3));
		block(t, 1, GPU);
		tl_begin(t, 1, GPU, TRUE, 0);
		ck_assert_int_eq(tl_bur(t, 1, 0).verdict, GS_VERDICT_WAIT);
		block(t, 2, GPU);
		expect_state(t, 2, GS_THREAD_BLOCKED);
		/*
		 * Task 1 BUFN, task 2 BLOCKED, task 3 and pool thread 50 asleep: the
		 * BUFN set {1, 3, 7} has the size of the task set {1, 2, 3}.
		 */
		ck_assert(tl_watchdog(t, 0, 2, 3, 50));
		expect_state(t, 1, strict ? GS_THREAD_BUFN : GS_THREAD_SPLIT_THROW);
		tl_engine_free(t);
	}
}
END_TEST

START_TEST(shutdown_removes_everyone)
{
	TlEngine *t = tl_engine_new(NULL);
	GsTaskId tasks[] = {1};

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_dedicated(t, TE_HELPER, TE_HELPER);
	block(t, 1, GPU);
	ck_assert_int_eq(tl_begin(t, 1, GPU, TRUE, 0).verdict, GS_VERDICT_WAIT);
	gs_engine_shutdown(t->engine, 1);
	tl_check(t);
	expect_state(t, 1, GS_THREAD_REMOVE_THROW);
	expect_state(t, 2, GS_THREAD_UNKNOWN);
	ck_assert_int_eq(gs_engine_register_dedicated(t->engine, 3, 3, 2), GS_ENGINE_ERROR_SHUT_DOWN);
	ck_assert_int_eq(gs_engine_register_pool(t->engine, 4, tasks, 1, FALSE, 2),
			 GS_ENGINE_ERROR_SHUT_DOWN);
	ck_assert_int_eq(tl_begin(t, 1, GPU, TRUE, 3).exception, GS_EXC_THREAD_REMOVED);
	ck_assert_uint_eq(gs_engine_n_threads(t->engine), 0);
	tl_engine_free(t);
}
END_TEST

TCase *
gs_test_engine_deadlock(void)
{
	TCase *tc = tcase_create("deadlock");

	tcase_add_test(tc, two_tasks_blocked_roll_back_the_lowest);
	tcase_add_test(tc, the_released_bufn_thread_runs_after_a_task_finishes);
	tcase_add_test(tc, task_finished_wake_prefers_blocked_threads);
	tcase_add_test(tc, task_done_of_a_waiting_thread_wakes_nobody_else);
	tcase_add_test(tc, retry_once_can_be_turned_off);
	tcase_add_test(tc, split_victim_highest_by_default_lowest_by_option);
	tcase_add_test(tc, watchdog_sees_sleeping_threads);
	tcase_add_test(tc, outside_set_never_makes_a_blocked_thread_bufn);
	tcase_add_test(tc, waiting_on_a_pool_counts_as_rolled_back);
	tcase_add_test(tc, a_busy_pool_thread_unblocks_its_tasks);
	tcase_add_test(tc, a_blocked_pool_thread_does_not_unblock);
	tcase_add_test(tc, only_pool_threads_is_no_deadlock);
	tcase_add_test(tc, host_and_gpu_blocked_tasks_deadlock_together);
	tcase_add_test(tc, shuffle_thread_is_woken_first);
	tcase_add_test(tc, pool_priority_by_smallest_task_id_or_best_task);
	tcase_add_test(tc, ties_go_to_the_larger_thread_id);
	tcase_add_test(tc, task_id_priority_mode);
	tcase_add_test(tc, explicit_task_priority_overrides);
	tcase_add_test(tc, strict_all_bufn_option);
	tcase_add_test(tc, shutdown_removes_everyone);
	return tc;
}
