/*
 * Unit tests of the simulator at scale: runs with many more threads and tasks
 * than its storage holds per chunk (threads and tasks sit in numbered tables
 * of fixed-size chunks, engine records in slabs recycled as tasks end, the
 * event heap is reserved for the arrivals and grows past that), checked
 * against times worked out here. Every thread only computes, so each task's
 * end is its start plus its longest thread, and its start is when an
 * executor slot frees, first come first served.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "testlib.h"
#include "report/report.h"
#include "scenario/generate.h"
#include "sim/sim.h"

#define OPS 3

/* Thread k of task i computes this long, OPS times. */
static GsTime
compute_time(guint task, guint k)
{
	return 1000 * (GsTime) (task % 7 + 1) * (k + 1) + 17 * (GsTime) (task % 3);
}

static GsTime
task_length(guint task, guint threads)
{
	GsTime longest = 0;

	for (guint k = 0; k < threads; k++)
		longest = MAX(longest, OPS * compute_time(task, k));
	return longest;
}

static GsWorkload *
compute_only(guint tasks, guint threads, guint slots)
{
	GsWorkload *w = gs_workload_new();

	w->gpu.capacity = G_GINT64_CONSTANT(1) << 30;
	w->executor_slots = slots;
	w->policy.watchdog = 0;
	for (guint i = 0; i < tasks; i++) {
		g_autofree char *id = g_strdup_printf("t%u", i);
		GsTaskSpec *task = gs_task_spec_new(id);

		for (guint k = 0; k < threads; k++) {
			g_autofree char *name = g_strdup_printf("t%u.%u", i, k);
			GsThreadSpec *t = gs_thread_spec_new(name);
			GsOp loop = {.kind = GS_OP_REPEAT};
			GsOp compute = {.kind = GS_OP_COMPUTE};

			compute.compute.time = compute_time(i, k);
			compute.compute.stream = -1;
			loop.repeat.times = OPS;
			loop.repeat.ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
			g_array_append_val(loop.repeat.ops, compute);
			g_array_append_val(t->ops, loop);
			g_ptr_array_add(task->threads, t);
		}
		g_ptr_array_add(w->tasks, task);
	}
	return w;
}

static int
compare_time(gconstpointer a, gconstpointer b)
{
	GsTime x = *(const GsTime *) a, y = *(const GsTime *) b;

	return (x > y) - (x < y);
}

/*
 * Where each task starts with @slots executor slots (0: as many as tasks): the
 * earliest time a slot is free, in task order. Quadratic, which is fine here.
 */
static GArray *
expected_starts(guint tasks, guint threads, guint slots)
{
	GArray *starts = g_array_sized_new(FALSE, FALSE, sizeof(GsTime), tasks);
	g_autoptr(GArray) free_at = g_array_new(FALSE, TRUE, sizeof(GsTime));

	g_array_set_size(free_at, slots == 0 ? tasks : slots);
	for (guint i = 0; i < tasks; i++) {
		GsTime start;

		g_array_sort(free_at, compare_time);
		start = g_array_index(free_at, GsTime, 0);
		g_array_append_val(starts, start);
		g_array_index(free_at, GsTime, 0) = start + task_length(i, threads);
	}
	return starts;
}

typedef struct {
	guint tasks, threads, slots;
} ScaleRow;

static const ScaleRow scale_rows[] = {
	{1, 1, 0},     /* the smallest run */
	{300, 1, 0},   /* past one chunk of tasks and threads, all at once */
	{700, 2, 0},   /* 1,400 threads at once: the heap grows past its reservation */
	{700, 2, 40},  /* slots: records of ended tasks are reused by later ones */
	{1100, 3, 3},  /* long queues, 3,300 threads, a few at a time */
};

START_TEST(test_scale)
{
	const ScaleRow *row = &scale_rows[_i];
	g_autoptr(GsWorkload) w = compute_only(row->tasks, row->threads, row->slots);
	g_autoptr(GsResult) r = gs_sim_run(w, NULL);
	g_autoptr(GArray) starts = expected_starts(row->tasks, row->threads, row->slots);
	GsTime makespan = 0;

	ck_assert_int_eq(r->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_eq(r->tasks->len, row->tasks);
	ck_assert_uint_eq(r->threads->len, row->tasks * row->threads);
	for (guint i = 0; i < row->tasks; i++) {
		const GsTaskResult *task = r->tasks->pdata[i];
		GsTime start = g_array_index(starts, GsTime, i);
		g_autofree char *id = g_strdup_printf("t%u", i);

		ck_assert_str_eq(task->id, id);
		ck_assert_int_eq(task->outcome, GS_OUTCOME_COMPLETED);
		ck_assert_int_eq(task->start_ns, start);
		ck_assert_int_eq(task->end_ns, start + task_length(i, row->threads));
		makespan = MAX(makespan, task->end_ns);
	}
	/* Thread rows in creation order: each task's threads when it starts, in task order. */
	for (guint n = 0; n < r->threads->len; n++) {
		const GsThreadResult *t = r->threads->pdata[n];
		g_autofree char *name = g_strdup_printf("t%u.%u", n / row->threads, n % row->threads);
		g_autofree char *task = g_strdup_printf("t%u", n / row->threads);

		ck_assert_str_eq(t->name, name);
		ck_assert_str_eq(t->task, task);
		ck_assert_int_eq(t->final_state, GS_THREAD_UNKNOWN);
	}
	ck_assert_int_eq(r->makespan_ns, makespan);
	ck_assert_uint_eq(r->totals.tasks_completed, row->tasks);
}
END_TEST

/* Two runs of the same workload agree row by row. */
START_TEST(test_scale_deterministic)
{
	g_autoptr(GsWorkload) w = compute_only(700, 2, 40);
	g_autoptr(GsResult) a = gs_sim_run(w, NULL);
	g_autoptr(GsResult) b = gs_sim_run(w, NULL);

	ck_assert_uint_eq(a->events_processed, b->events_processed);
	ck_assert_uint_eq(a->timeline->len, b->timeline->len);
	for (guint i = 0; i < a->threads->len; i++) {
		const GsThreadResult *x = a->threads->pdata[i], *y = b->threads->pdata[i];

		ck_assert_str_eq(x->name, y->name);
		ck_assert_uint_eq(x->reached, y->reached);
	}
}
END_TEST

/* A generated workload that fails some attempts, so that tasks are tried again. */
static GsWorkload *
generated(void)
{
	GsWorkload *w = gs_workload_new();

	w->name = g_strdup("generated");
	w->seed = 5;
	w->gpu.capacity = 256 * (G_GINT64_CONSTANT(1) << 20);
	w->executor_slots = 4;
	w->policy.oom = GS_OOM_FAIL;
	w->policy.task_attempts = 2;
	w->generate = (GsGenerate){.enabled = TRUE, .tasks = 40, .threads_per_task = 2,
				   .task_max = 200 * (G_GINT64_CONSTANT(1) << 20), .max_allocs = 10,
				   .max_compute = 1000000, .retry_blocks = TRUE, .skew_tasks = 2,
				   .skew_factor = 1.5, .jitter = 0.1, .shuffle_threads = 2};
	gs_generate_tasks(w);
	return w;
}

static char *
run_json(const GsWorkload *w, guint *attempts)
{
	g_autoptr(GsResult) r = gs_sim_run(w, NULL);

	*attempts = r->totals.task_attempts;
	return gs_report_json(w, r, "sim", 0, NULL);
}

/*
 * A generated workload's tasks are made as they start and dropped when they
 * are over: a second run of the same workload makes them anew and agrees
 * with the first, and with a run of the workload generated afresh, byte for
 * byte; some tasks are tried again on the way, from the same threads.
 */
START_TEST(test_generated_made_and_dropped)
{
	g_autoptr(GsWorkload) w = generated();
	g_autoptr(GsWorkload) fresh = generated();
	guint attempts;
	g_autofree char *first = run_json(w, &attempts);
	g_autofree char *again = NULL;
	g_autofree char *afresh = NULL;

	ck_assert_uint_gt(attempts, w->generate.tasks);
	for (guint i = 0; i < w->tasks->len; i++)
		ck_assert_uint_eq(((GsTaskSpec *) w->tasks->pdata[i])->threads->len, 0);
	again = run_json(w, &attempts);
	afresh = run_json(fresh, &attempts);
	ck_assert_str_eq(again, first);
	ck_assert_str_eq(afresh, first);
}
END_TEST

/* ---- time arithmetic: sums saturate at GS_TIME_END instead of wrapping ---- */

static const struct {
	GsTime a, b, sum;
	guint64 n;
	GsTime product; /* n * b */
} time_rows[] = {
	{0, 0, 0, 0, 0},
	{5, 7, 12, 3, 21},
	{GS_TIME_END - 7, 7, GS_TIME_END, 2, 14},
	{GS_TIME_END - 7, 8, GS_TIME_END, G_MAXUINT64, GS_TIME_END},
	{GS_TIME_END, GS_TIME_END, GS_TIME_END, 2, GS_TIME_END},
	{G_GINT64_CONSTANT(1) << 62, G_GINT64_CONSTANT(1) << 62, GS_TIME_END, 1,
	 G_GINT64_CONSTANT(1) << 62},
	{1, G_GINT64_CONSTANT(3) << 61, (G_GINT64_CONSTANT(3) << 61) + 1, 4, GS_TIME_END},
	{0, 0, 0, G_MAXUINT64, 0},
};

START_TEST(test_time_saturates)
{
	ck_assert_int_eq(gs_time_add(time_rows[_i].a, time_rows[_i].b), time_rows[_i].sum);
	ck_assert_int_eq(gs_time_mul(time_rows[_i].n, time_rows[_i].b), time_rows[_i].product);
}
END_TEST

static const struct {
	double ns;
	GsTime time;
} from_double_rows[] = {
	{0, 0}, {0.4, 0}, {0.5, 1}, {1e9, 1000000000}, {-3, 0}, {1e30, GS_TIME_END},
	{9.3e18, GS_TIME_END},
};

START_TEST(test_time_from_double)
{
	ck_assert_int_eq(gs_time_from_double(from_double_rows[_i].ns), from_double_rows[_i].time);
	ck_assert_int_eq(gs_time_from_double(NAN), GS_TIME_END);
}
END_TEST

/*
 * A run whose time stops passing ends as a timeout with a reason once one
 * instant has taken more events than allowed: a thread that computes for 0
 * ns @times times takes one event per compute, all at 0 ns.
 */
static const struct {
	guint times;
	guint64 most; /* GsRunOptions.max_events_per_instant */
	GsOutcome outcome;
} stall_rows[] = {
	{1000, 0, GS_OUTCOME_COMPLETED},  /* far below the default */
	{1000, 2000, GS_OUTCOME_COMPLETED},
	{1000, 500, GS_OUTCOME_TIMEOUT},
	{1000, 1, GS_OUTCOME_TIMEOUT},
};

START_TEST(test_stalled_instant_stops)
{
	g_autoptr(GsWorkload) w = compute_only(1, 1, 0);
	GsThreadSpec *t = ((GsTaskSpec *) w->tasks->pdata[0])->threads->pdata[0];
	GsOp *loop = &g_array_index(t->ops, GsOp, 0);
	GsRunOptions opts = {.max_events_per_instant = stall_rows[_i].most};
	g_autoptr(GsResult) r = NULL;

	loop->repeat.times = stall_rows[_i].times;
	g_array_index(loop->repeat.ops, GsOp, 0).compute.time = 0;
	r = gs_sim_run(w, &opts);
	ck_assert_int_eq(r->outcome, stall_rows[_i].outcome);
	ck_assert_int_eq(r->makespan_ns, 0);
	if (stall_rows[_i].outcome == GS_OUTCOME_TIMEOUT) {
		ck_assert_ptr_nonnull(strstr(r->stop_reason, "livelock"));
		ck_assert_uint_le(r->events_processed, stall_rows[_i].most + 2);
	} else {
		ck_assert_ptr_null(r->stop_reason);
	}
}
END_TEST

/*
 * max_events ends a run as a timeout after the pass that reaches it; a bound
 * the run never reaches changes nothing.
 */
START_TEST(test_max_events)
{
	g_autoptr(GsWorkload) w = compute_only(3, 2, 1);
	g_autoptr(GsResult) full = gs_sim_run(w, NULL);
	guint64 all = full->events_processed;

	ck_assert_int_eq(full->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_gt(all, 2);
	for (guint64 bound = 1; bound <= all; bound++) {
		GsRunOptions opts = {.max_events = bound};
		g_autoptr(GsResult) r = gs_sim_run(w, &opts);

		if (bound == all) {
			ck_assert_int_eq(r->outcome, GS_OUTCOME_COMPLETED);
			ck_assert_int_eq(r->makespan_ns, full->makespan_ns);
			continue;
		}
		ck_assert_int_eq(r->outcome, GS_OUTCOME_TIMEOUT);
		ck_assert_uint_ge(r->events_processed, bound);
		ck_assert_uint_lt(r->events_processed, all);
	}
}
END_TEST

static Suite *
sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("scale");
	TCase *limits = tcase_create("limits");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_scale, 0, G_N_ELEMENTS(scale_rows));
	tcase_add_test(tc, test_scale_deterministic);
	tcase_add_test(tc, test_generated_made_and_dropped);
	suite_add_tcase(s, tc);
	tcase_add_loop_test(limits, test_time_saturates, 0, G_N_ELEMENTS(time_rows));
	tcase_add_loop_test(limits, test_time_from_double, 0, G_N_ELEMENTS(from_double_rows));
	tcase_add_loop_test(limits, test_stalled_instant_stops, 0, G_N_ELEMENTS(stall_rows));
	suite_add_tcase(s, limits);
	tc = tcase_create("bounds");
	tcase_add_test(tc, test_max_events);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(sim_suite());
}
