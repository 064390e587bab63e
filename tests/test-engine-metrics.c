/*
 * gpusim tests: what the engine counts (reference §3.1) and how tasks roll up.
 */
#include "config.h"

#include "test-engine.h"

#define GPU GS_KIND_GPU
#define HOST GS_KIND_HOST

static GsMetrics
thread_metrics(TlEngine *t, GsThreadId thread)
{
	GsMetrics m;

	ck_assert(gs_engine_thread_metrics(t->engine, thread, &m));
	return m;
}

static GsMetrics
task_metrics(TlEngine *t, GsTaskId task, GsTime now)
{
	GsMetrics m;

	gs_engine_task_metrics(t->engine, task, now, &m);
	return m;
}

static void
allocate(TlEngine *t, GsThreadId thread, gint64 bytes)
{
	ck_assert_int_eq(tl_begin(t, thread, GPU, TRUE, 0).verdict, GS_VERDICT_PROCEED);
	ck_assert_int_eq(tl_success(t, thread, GPU, bytes, 0).verdict, GS_VERDICT_PROCEED);
}

START_TEST(lost_time_is_running_time_inside_a_retry_block)
{
	TlEngine *t = tl_engine_new(NULL);
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	gs_engine_force_retry_oom(t->engine, 1, 2, GS_KIND_FILTER_ANY, 0);
	/* Outside a retry block nothing is lost. */
	tl_begin(t, 1, GPU, TRUE, 50);
	ck_assert_int_eq(thread_metrics(t, 1).lost_ns, 0);
	gs_engine_retry_block_start(t->engine, 1, 100);
	ck_assert_int_eq(tl_begin(t, 1, GPU, TRUE, 350).exception, GS_EXC_GPU_RETRY_OOM);
	m = thread_metrics(t, 1);
	ck_assert_int_eq(m.lost_ns, 250);
	ck_assert_int_eq(m.lost_or_blocked_ns, 250);
	ck_assert_uint_eq(m.retries, 2);
	gs_engine_retry_block_end(t->engine, 1, 500);
	tl_engine_free(t);
}
END_TEST

START_TEST(lost_time_excludes_blocked_time)
{
	TlEngine *t = tl_engine_new(NULL);
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	gs_engine_retry_block_start(t->engine, 2, 0);
	/* Runs 100, blocks 100..400, is rolled back at 400, throws at 450. */
	tl_begin(t, 2, GPU, TRUE, 100);
	tl_oom(t, 2, GPU, TRUE, 100);
	ck_assert_int_eq(tl_begin(t, 2, GPU, TRUE, 100).verdict, GS_VERDICT_WAIT);
	tl_begin(t, 1, GPU, TRUE, 400);
	tl_oom(t, 1, GPU, TRUE, 400); /* both blocked: thread 2 rolls back */
	ck_assert_int_eq(tl_state(t, 2), GS_THREAD_BUFN_THROW);
	ck_assert_int_eq(tl_begin(t, 2, GPU, TRUE, 450).exception, GS_EXC_GPU_RETRY_OOM);
	m = thread_metrics(t, 2);
	ck_assert_int_eq(m.blocked_ns, 350);
	ck_assert_int_eq(m.lost_ns, 100);
	ck_assert_int_eq(m.lost_or_blocked_ns, 450);
	tl_engine_free(t);
}
END_TEST

START_TEST(gpu_footprint_and_watermark)
{
	TlEngine *t = tl_engine_new(NULL);
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	allocate(t, 2, 1000);
	allocate(t, 1, 100);
	allocate(t, 1, 50);
	tl_free(t, 1, GPU, 100, 0);
	m = thread_metrics(t, 1);
	ck_assert_int_eq(m.gpu_active_footprint, 50);
	ck_assert_int_eq(m.gpu_max_footprint, 150);
	ck_assert_int_eq(m.gpu_max_allocated, 1150); /* the adaptor-wide count it saw */
	ck_assert_int_eq(gs_engine_gpu_allocated(t->engine), 1050);
	/* Host allocations are not GPU bytes. */
	ck_assert_int_eq(tl_begin(t, 1, HOST, TRUE, 0).verdict, GS_VERDICT_PROCEED);
	tl_success(t, 1, HOST, 4096, 0);
	ck_assert_int_eq(thread_metrics(t, 1).gpu_active_footprint, 50);
	tl_engine_free(t);
}
END_TEST

START_TEST(spill_range_does_not_move_the_footprint)
{
	TlEngine *t = tl_engine_new(NULL);
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	allocate(t, 1, 100);
	gs_engine_spill_range_start(t->engine, 1);
	allocate(t, 1, 40);
	tl_free(t, 1, GPU, 100, 0);
	gs_engine_spill_range_done(t->engine, 1);
	m = thread_metrics(t, 1);
	ck_assert_int_eq(m.gpu_active_footprint, 100);
	ck_assert_int_eq(m.gpu_max_footprint, 100);
	ck_assert_int_eq(gs_engine_gpu_allocated(t->engine), 40);
	tl_engine_free(t);
}
END_TEST

START_TEST(gpu_counter_reference_and_exact)
{
	for (int rule = 0; rule < 2; rule++) {
		GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
		TlEngine *t;

		opts.gpu_counter = rule;
		t = tl_engine_new(&opts);
		tl_dedicated(t, 1, 1);
		allocate(t, 1, 100);
		/* An unregistered thread frees 30 and allocates 70. */
		tl_free(t, 77, GPU, 30, 0);
		gs_engine_alloc_success(t->engine, 77, GPU, 70, FALSE, 0);
		/* A recursive allocation of 10 inside thread 1's allocation, freed later. */
		tl_begin(t, 1, GPU, TRUE, 0);
		gs_engine_alloc_success(t->engine, 1, GPU, 10, TRUE, 0);
		tl_success(t, 1, GPU, 5, 0);
		tl_free(t, 1, GPU, 10, 0);
		ck_assert_int_eq(gs_engine_gpu_allocated(t->engine),
				 rule == GS_GPU_COUNTER_EXACT ? 100 - 30 + 70 + 10 + 5 - 10 : 100 + 5 - 10);
		tl_engine_free(t);
	}
}
END_TEST

START_TEST(blocked_time_in_the_current_wait_counts_for_the_task)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, TE_HELPER, TE_HELPER);
	tl_begin(t, 1, GPU, TRUE, 100);
	tl_oom(t, 1, GPU, TRUE, 100);
	ck_assert_int_eq(tl_begin(t, 1, GPU, TRUE, 100).verdict, GS_VERDICT_WAIT);
	ck_assert_int_eq(task_metrics(t, 1, 700).lost_or_blocked_ns, 600);
	ck_assert_int_eq(task_metrics(t, 1, 700).blocked_ns, 0);
	tl_free(t, TE_HELPER, GPU, 1, 800);
	tl_begin(t, 1, GPU, TRUE, 800);
	ck_assert_int_eq(task_metrics(t, 1, 900).blocked_ns, 700);
	ck_assert_int_eq(task_metrics(t, 1, 900).lost_or_blocked_ns, 700);
	tl_engine_free(t);
}
END_TEST

START_TEST(task_rollup_keeps_metrics_of_finished_threads)
{
	TlEngine *t = tl_engine_new(NULL);
	GsMetrics m;

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 1);
	gs_engine_force_retry_oom(t->engine, 1, 1, GS_KIND_FILTER_ANY, 0);
	gs_engine_force_split_oom(t->engine, 2, 2, GS_KIND_FILTER_ANY, 0);
	tl_begin(t, 1, GPU, TRUE, 0);
	tl_begin(t, 2, GPU, TRUE, 0);
	tl_begin(t, 2, GPU, TRUE, 0);
	allocate(t, 1, 300);
	allocate(t, 2, 200);
	m = task_metrics(t, 1, 0);
	ck_assert_uint_eq(m.retries, 1);
	ck_assert_uint_eq(m.splits, 2);
	ck_assert_int_eq(m.gpu_max_footprint, 500);
	/* Sum rule: 300 (seen by thread 1) + 500 (seen by thread 2). */
	ck_assert_int_eq(m.gpu_max_allocated, 800);
	gs_engine_remove_association(t->engine, 1, GS_NO_TASK, 0);
	tl_task_done(t, 1, 0);
	m = task_metrics(t, 1, 0);
	ck_assert_uint_eq(m.retries, 1);
	ck_assert_uint_eq(m.splits, 2);
	ck_assert_int_eq(m.gpu_max_footprint, 500);
	ck_assert_int_eq(m.gpu_max_allocated, 500); /* checkpoints take the max */
	gs_engine_forget_task_metrics(t->engine, 1);
	ck_assert_uint_eq(task_metrics(t, 1, 0).retries, 0);
	tl_engine_free(t);
}
END_TEST

START_TEST(max_allocated_rollup_max_option)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;

	opts.max_allocated_rollup = GS_MAX_ALLOCATED_MAX;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 1);
	allocate(t, 1, 300);
	allocate(t, 2, 200);
	ck_assert_int_eq(task_metrics(t, 1, 0).gpu_max_allocated, 500);
	tl_engine_free(t);
}
END_TEST

START_TEST(pool_thread_metrics_go_to_every_task_it_served)
{
	TlEngine *t = tl_engine_new(NULL);
	GsTaskId both[] = {1, 2};

	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_pool(t, 3, FALSE, 2, 1, 2);
	gs_engine_force_retry_oom(t->engine, 3, 1, GS_KIND_FILTER_ANY, 0);
	tl_begin(t, 3, GPU, TRUE, 0);
	ck_assert_int_eq(gs_engine_pool_done(t->engine, 3, both, 2, 0), GS_ENGINE_ERROR_NONE);
	ck_assert_uint_eq(task_metrics(t, 1, 0).retries, 1);
	ck_assert_uint_eq(task_metrics(t, 2, 0).retries, 1);
	tl_engine_free(t);
}
END_TEST

START_TEST(pool_metrics_at_task_done_reference_and_option)
{
	for (int attribute = 0; attribute < 2; attribute++) {
		GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
		TlEngine *t;

		opts.pool_metrics_on_task_done = attribute;
		t = tl_engine_new(&opts);
		tl_dedicated(t, 1, 1);
		tl_pool(t, 3, FALSE, 1, 1);
		gs_engine_force_retry_oom(t->engine, 3, 1, GS_KIND_FILTER_ANY, 0);
		tl_begin(t, 3, GPU, TRUE, 0);
		tl_task_done(t, 1, 0);
		/* The reference erases task 1 from the pool thread before checkpointing. */
		ck_assert_uint_eq(task_metrics(t, 1, 0).retries, attribute ? 1 : 0);
		tl_engine_free(t);
	}
}
END_TEST

START_TEST(engine_counts_checks_and_busts)
{
	TlEngine *t = tl_engine_new(NULL);

	tl_dedicated(t, 1, 1);
	ck_assert_uint_eq(gs_engine_n_checks(t->engine), 0);
	tl_begin(t, 1, GPU, TRUE, 0);
	tl_oom(t, 1, GPU, TRUE, 0);
	ck_assert_uint_eq(gs_engine_n_checks(t->engine), 1);
	ck_assert_uint_eq(gs_engine_n_busts(t->engine), 1);
	ck_assert_uint_eq(gs_engine_n_in_state(t->engine, GS_THREAD_RUNNING), 1);
	ck_assert_uint_eq(gs_engine_n_deadlocks(t->engine), 1);
	tl_watchdog(t, 0, 0);
	ck_assert_uint_eq(gs_engine_n_checks(t->engine), 2);
	ck_assert_uint_eq(gs_engine_n_deadlocks(t->engine), 1);
	ck_assert_uint_eq(gs_engine_n_busts(t->engine), 1);
	tl_engine_free(t);
}
END_TEST

START_TEST(deadlocks_detected_without_busting)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;
	TlEngine *t;

	opts.bust_deadlocks = FALSE;
	t = tl_engine_new(&opts);
	tl_dedicated(t, 1, 1);
	tl_dedicated(t, 2, 2);
	tl_begin(t, 1, GPU, TRUE, 0);
	tl_oom(t, 1, GPU, TRUE, 0);
	tl_begin(t, 2, GPU, TRUE, 0);
	tl_oom(t, 2, GPU, TRUE, 0);
	ck_assert(tl_watchdog(t, 0, 0));
	ck_assert_int_eq(tl_state(t, 1), GS_THREAD_BLOCKED);
	ck_assert_int_eq(tl_state(t, 2), GS_THREAD_BLOCKED);
	ck_assert_uint_eq(gs_engine_n_deadlocks(t->engine), 2);
	ck_assert_uint_eq(gs_engine_n_busts(t->engine), 0);
	/* Memory freed still wakes one, as under any policy: the higher, thread 1. */
	tl_dedicated(t, 3, 3);
	tl_free(t, 3, GPU, 1, 0);
	ck_assert_int_eq(tl_state(t, 1), GS_THREAD_RUNNING);
	ck_assert_int_eq(tl_state(t, 2), GS_THREAD_BLOCKED);
	tl_engine_free(t);
}
END_TEST

TCase *
gs_test_engine_metrics(void)
{
	TCase *tc = tcase_create("metrics");

	tcase_add_test(tc, lost_time_is_running_time_inside_a_retry_block);
	tcase_add_test(tc, lost_time_excludes_blocked_time);
	tcase_add_test(tc, gpu_footprint_and_watermark);
	tcase_add_test(tc, spill_range_does_not_move_the_footprint);
	tcase_add_test(tc, gpu_counter_reference_and_exact);
	tcase_add_test(tc, blocked_time_in_the_current_wait_counts_for_the_task);
	tcase_add_test(tc, task_rollup_keeps_metrics_of_finished_threads);
	tcase_add_test(tc, max_allocated_rollup_max_option);
	tcase_add_test(tc, pool_thread_metrics_go_to_every_task_it_served);
	tcase_add_test(tc, pool_metrics_at_task_done_reference_and_option);
	tcase_add_test(tc, engine_counts_checks_and_busts);
	tcase_add_test(tc, deadlocks_detected_without_busting);
	return tc;
}
