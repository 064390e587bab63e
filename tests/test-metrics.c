/*
 * Unit tests of metrics.h: checkpoints and roll-ups of per-thread counters into
 * a task's, and the GPU byte accounting of one thread (reference §3.1).
 */
#include <check.h>
#include <gpusim/gpusim.h>

#include <stdlib.h>

/* Field order: retries, splits, blocked, lost, lost_or_blocked, max_allocated,
 * active_footprint, max_footprint. */
#define M(r, s, b, l, lb, ma, af, mf) { r, s, b, l, lb, ma, af, mf }

static void
assert_metrics_eq(const GsMetrics *got, const GsMetrics *want, const char *what)
{
	ck_assert_msg(got->retries == want->retries, "%s: retries %" G_GUINT64_FORMAT, what,
		      got->retries);
	ck_assert_msg(got->splits == want->splits, "%s: splits %" G_GUINT64_FORMAT, what,
		      got->splits);
	ck_assert_msg(got->blocked_ns == want->blocked_ns, "%s: blocked_ns %" G_GINT64_FORMAT,
		      what, got->blocked_ns);
	ck_assert_msg(got->lost_ns == want->lost_ns, "%s: lost_ns %" G_GINT64_FORMAT, what,
		      got->lost_ns);
	ck_assert_msg(got->lost_or_blocked_ns == want->lost_or_blocked_ns,
		      "%s: lost_or_blocked_ns %" G_GINT64_FORMAT, what, got->lost_or_blocked_ns);
	ck_assert_msg(got->gpu_max_allocated == want->gpu_max_allocated,
		      "%s: gpu_max_allocated %" G_GINT64_FORMAT, what, got->gpu_max_allocated);
	ck_assert_msg(got->gpu_active_footprint == want->gpu_active_footprint,
		      "%s: gpu_active_footprint %" G_GINT64_FORMAT, what,
		      got->gpu_active_footprint);
	ck_assert_msg(got->gpu_max_footprint == want->gpu_max_footprint,
		      "%s: gpu_max_footprint %" G_GINT64_FORMAT, what, got->gpu_max_footprint);
}

/* ---- checkpoint ---- */

typedef struct {
	const char *what;
	/* Inputs */
	GsMetrics task;
	GsMetrics thread;
	/* Outputs */
	GsMetrics expected;
} CheckpointRow;

static const CheckpointRow checkpoint_rows[] = {
	{ "into an empty task", M(0, 0, 0, 0, 0, 0, 0, 0), M(2, 1, 100, 50, 150, 1000, 300, 400),
	  M(2, 1, 100, 50, 150, 1000, 0, 400) },
	{ "sums", M(3, 4, 10, 20, 30, 500, 0, 600), M(2, 1, 100, 50, 150, 200, 0, 400),
	  M(5, 5, 110, 70, 180, 500, 0, 1000) },
	{ "max allocated is max'ed", M(0, 0, 0, 0, 0, 700, 0, 0), M(0, 0, 0, 0, 0, 9000, 0, 0),
	  M(0, 0, 0, 0, 0, 9000, 0, 0) },
	{ "active footprint not carried", M(1, 0, 0, 0, 0, 0, 0, 10),
	  M(0, 0, 0, 0, 0, 0, 4096, 4096), M(1, 0, 0, 0, 0, 0, 0, 4106) },
	{ "a zero thread changes nothing", M(7, 8, 9, 10, 19, 11, 0, 12), M(0, 0, 0, 0, 0, 0, 0, 0),
	  M(7, 8, 9, 10, 19, 11, 0, 12) },
	{ "times saturate", M(0, 0, GS_TIME_END - 5, GS_TIME_END / 2 + 1, GS_TIME_END, 0, 0, 0),
	  M(0, 0, 6, GS_TIME_END / 2 + 1, 7, 0, 0, 0),
	  M(0, 0, GS_TIME_END, GS_TIME_END, GS_TIME_END, 0, 0, 0) },
};

START_TEST(test_checkpoint)
{
	const CheckpointRow *row = &checkpoint_rows[_i];
	GsMetrics task = row->task;
	GsMetrics thread = row->thread;

	gs_metrics_checkpoint(&task, &thread);
	assert_metrics_eq(&task, &row->expected, row->what);
	/* the thread's counters are read, not changed */
	assert_metrics_eq(&thread, &row->thread, "thread after checkpoint");
}
END_TEST

/* Checkpointing twice (a pool thread added to two registrations) adds twice. */
START_TEST(test_checkpoint_twice)
{
	GsMetrics task = M(0, 0, 0, 0, 0, 0, 0, 0);
	const GsMetrics a = M(1, 2, 3, 4, 7, 300, 50, 60);
	const GsMetrics b = M(10, 20, 30, 40, 70, 100, 5, 6);
	const GsMetrics want = M(11, 22, 33, 44, 77, 300, 0, 66);

	gs_metrics_checkpoint(&task, &a);
	gs_metrics_checkpoint(&task, &b);
	assert_metrics_eq(&task, &want, "two checkpoints");
}
END_TEST

/* ---- roll-up ---- */

typedef struct {
	const char *what;
	/* Inputs */
	GsMetrics task;
	GsMetrics thread;
	GsMaxAllocatedRollup rule;
	/* Outputs */
	GsMetrics expected;
} RollupRow;

static const RollupRow rollup_rows[] = {
	{ "sum rule", M(1, 2, 3, 4, 7, 500, 10, 20), M(10, 20, 30, 40, 70, 200, 100, 200),
	  GS_MAX_ALLOCATED_SUM, M(11, 22, 33, 44, 77, 700, 110, 220) },
	{ "max rule, thread larger", M(1, 2, 3, 4, 7, 500, 10, 20),
	  M(10, 20, 30, 40, 70, 900, 100, 200), GS_MAX_ALLOCATED_MAX,
	  M(11, 22, 33, 44, 77, 900, 110, 220) },
	{ "max rule, task larger", M(1, 2, 3, 4, 7, 500, 10, 20),
	  M(10, 20, 30, 40, 70, 200, 100, 200), GS_MAX_ALLOCATED_MAX,
	  M(11, 22, 33, 44, 77, 500, 110, 220) },
	{ "sum rule into empty", M(0, 0, 0, 0, 0, 0, 0, 0), M(1, 1, 5, 6, 11, 64, 32, 48),
	  GS_MAX_ALLOCATED_SUM, M(1, 1, 5, 6, 11, 64, 32, 48) },
	{ "max rule into empty", M(0, 0, 0, 0, 0, 0, 0, 0), M(1, 1, 5, 6, 11, 64, 32, 48),
	  GS_MAX_ALLOCATED_MAX, M(1, 1, 5, 6, 11, 64, 32, 48) },
};

START_TEST(test_rollup)
{
	const RollupRow *row = &rollup_rows[_i];
	GsMetrics task = row->task;
	GsMetrics thread = row->thread;

	gs_metrics_rollup(&task, &thread, row->rule);
	assert_metrics_eq(&task, &row->expected, row->what);
	assert_metrics_eq(&thread, &row->thread, "thread after roll-up");
}
END_TEST

/* A checkpoint plus two live threads, as a task getter sees them. */
START_TEST(test_rollup_task_getter)
{
	const GsMetrics checkpoint = M(1, 0, 100, 0, 100, 4000, 0, 1000);
	const GsMetrics t1 = M(2, 1, 0, 30, 30, 5000, 200, 300);
	const GsMetrics t2 = M(0, 1, 50, 0, 50, 6000, 100, 100);
	GsMetrics sum = M(0, 0, 0, 0, 0, 0, 0, 0);
	GsMetrics max = M(0, 0, 0, 0, 0, 0, 0, 0);
	const GsMetrics want_sum = M(3, 2, 150, 30, 180, 15000, 300, 1400);
	const GsMetrics want_max = M(3, 2, 150, 30, 180, 6000, 300, 1400);

	gs_metrics_rollup(&sum, &checkpoint, GS_MAX_ALLOCATED_SUM);
	gs_metrics_rollup(&sum, &t1, GS_MAX_ALLOCATED_SUM);
	gs_metrics_rollup(&sum, &t2, GS_MAX_ALLOCATED_SUM);
	assert_metrics_eq(&sum, &want_sum, "sum getter");
	gs_metrics_rollup(&max, &checkpoint, GS_MAX_ALLOCATED_MAX);
	gs_metrics_rollup(&max, &t1, GS_MAX_ALLOCATED_MAX);
	gs_metrics_rollup(&max, &t2, GS_MAX_ALLOCATED_MAX);
	assert_metrics_eq(&max, &want_max, "max getter");
}
END_TEST

/* ---- GPU allocations and frees of one thread ---- */

typedef enum { ALLOC, FREE } GpuOp;

/*
 * A script run from the start: iteration _i replays steps 0.._i on a cleared
 * thread and checks the three GPU figures after step _i.
 */
typedef struct {
	/* Inputs */
	GpuOp op;
	gint64 bytes;
	gint64 adaptor; /* ALLOC: the adaptor-wide count after the allocation */
	gboolean spill;
	/* Outputs */
	gint64 active;
	gint64 max_footprint;
	gint64 max_allocated;
} GpuStep;

static const GpuStep gpu_steps[] = {
	{ ALLOC, 100, 100, FALSE, 100, 100, 100 },
	/* others allocated meanwhile: the watermark follows the adaptor count */
	{ ALLOC, 50, 400, FALSE, 150, 150, 400 },
	{ FREE, 120, 0, FALSE, 30, 150, 400 },
	/* the adaptor count went down: the watermark stays */
	{ ALLOC, 10, 200, FALSE, 40, 150, 400 },
	/* inside a spill range: footprints unchanged, watermark still max'ed */
	{ ALLOC, 500, 900, TRUE, 40, 150, 900 },
	{ ALLOC, 20, 100, TRUE, 40, 150, 900 },
	{ FREE, 500, 0, TRUE, 40, 150, 900 },
	{ ALLOC, 200, 950, FALSE, 240, 240, 950 },
	{ FREE, 240, 0, FALSE, 0, 240, 950 },
	{ ALLOC, 10, 10, FALSE, 10, 240, 950 },
};

static void
gpu_apply(GsMetrics *m, const GpuStep *step)
{
	switch (step->op) {
	case ALLOC:
		gs_metrics_gpu_alloc(m, step->bytes, step->adaptor, step->spill);
		break;
	case FREE:
		gs_metrics_gpu_free(m, step->bytes, step->spill);
		break;
	}
}

START_TEST(test_gpu_script)
{
	GsMetrics m;

	gs_metrics_clear(&m);
	for (int i = 0; i <= _i; i++)
		gpu_apply(&m, &gpu_steps[i]);
	ck_assert_msg(m.gpu_active_footprint == gpu_steps[_i].active,
		      "step %d: active %" G_GINT64_FORMAT, _i, m.gpu_active_footprint);
	ck_assert_msg(m.gpu_max_footprint == gpu_steps[_i].max_footprint,
		      "step %d: max footprint %" G_GINT64_FORMAT, _i, m.gpu_max_footprint);
	ck_assert_msg(m.gpu_max_allocated == gpu_steps[_i].max_allocated,
		      "step %d: max allocated %" G_GINT64_FORMAT, _i, m.gpu_max_allocated);
	/* GPU bytes touch no count or time */
	ck_assert_uint_eq(m.retries, 0);
	ck_assert_uint_eq(m.splits, 0);
	ck_assert_int_eq(m.blocked_ns, 0);
	ck_assert_int_eq(m.lost_ns, 0);
	ck_assert_int_eq(m.lost_or_blocked_ns, 0);
}
END_TEST

/* gpu_max_allocated = max(itself, adaptor count), starting from a checkpointed value. */
START_TEST(test_gpu_max_allocated_keeps_larger)
{
	GsMetrics m = M(0, 0, 0, 0, 0, 5000, 0, 0);

	gs_metrics_gpu_alloc(&m, 10, 300, FALSE);
	ck_assert_int_eq(m.gpu_max_allocated, 5000);
	gs_metrics_gpu_alloc(&m, 10, 5001, FALSE);
	ck_assert_int_eq(m.gpu_max_allocated, 5001);
	ck_assert_int_eq(m.gpu_active_footprint, 20);
	ck_assert_int_eq(m.gpu_max_footprint, 20);
}
END_TEST

/* ---- clear ---- */

START_TEST(test_clear)
{
	GsMetrics m = M(1, 2, 3, 4, 5, 6, 7, 8);
	const GsMetrics zero = M(0, 0, 0, 0, 0, 0, 0, 0);

	gs_metrics_clear(&m);
	assert_metrics_eq(&m, &zero, "cleared");
	/* a cleared record checkpoints as nothing */
	m = (GsMetrics) M(9, 9, 9, 9, 9, 9, 0, 9);
	{
		GsMetrics t = M(5, 5, 5, 5, 5, 5, 5, 5);

		gs_metrics_clear(&t);
		gs_metrics_checkpoint(&m, &t);
	}
	{
		const GsMetrics want = M(9, 9, 9, 9, 9, 9, 0, 9);

		assert_metrics_eq(&m, &want, "checkpoint of a cleared thread");
	}
}
END_TEST

Suite *gs_test_suite_metrics(void);

Suite *
gs_test_suite_metrics(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc;

	tc = tcase_create("checkpoint");
	tcase_add_loop_test(tc, test_checkpoint, 0, G_N_ELEMENTS(checkpoint_rows));
	tcase_add_test(tc, test_checkpoint_twice);
	suite_add_tcase(s, tc);

	tc = tcase_create("rollup");
	tcase_add_loop_test(tc, test_rollup, 0, G_N_ELEMENTS(rollup_rows));
	tcase_add_test(tc, test_rollup_task_getter);
	suite_add_tcase(s, tc);

	tc = tcase_create("gpu");
	tcase_add_loop_test(tc, test_gpu_script, 0, G_N_ELEMENTS(gpu_steps));
	tcase_add_test(tc, test_gpu_max_allocated_keeps_larger);
	tcase_add_test(tc, test_clear);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gs_test_suite_metrics());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
