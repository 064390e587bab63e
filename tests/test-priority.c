/*
 * Unit tests of priority.h: task priorities (FIFO and TASK_ID modes, explicit
 * values, forgetting), thread priorities (dedicated, shuffle and non-shuffle
 * pool threads under both pool rules) and the comparison, after
 * reference/spark-rapids-oom.md §2.1 and §2.2.
 */
#include <check.h>
#include <gpusim/gpusim.h>

#include <stdlib.h>

#define TOP G_MAXINT64

static int
sign(int v)
{
	return (v > 0) - (v < 0);
}

/* ---- FIFO mode ---- */

/* Tasks asked in this order get TOP - 1, TOP - 2, ... */
static const GsTaskId fifo_order[] = { 7, 3, 9, 0, 100, 1 };

START_TEST(test_fifo_order)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);

	ck_assert_int_eq(gs_task_priorities_get_mode(prio), GS_PRIORITY_FIFO);
	for (guint i = 0; i <= (guint) _i; i++) {
		ck_assert(!gs_task_priorities_has(prio, fifo_order[i]));
		ck_assert_int_eq(gs_task_priorities_get(prio, fifo_order[i]), TOP - 1 - (gint64) i);
		ck_assert(gs_task_priorities_has(prio, fifo_order[i]));
	}
	/* asking again does not move anybody */
	for (guint i = 0; i <= (guint) _i; i++)
		ck_assert_int_eq(gs_task_priorities_get(prio, fifo_order[i]), TOP - 1 - (gint64) i);
	/* the first asked ranks highest */
	if (_i > 0)
		ck_assert_int_gt(gs_task_priorities_get(prio, fifo_order[0]),
				 gs_task_priorities_get(prio, fifo_order[_i]));
}
END_TEST

START_TEST(test_fifo_no_task)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);

	ck_assert_int_eq(gs_task_priorities_get(prio, GS_NO_TASK), TOP);
	/* -1 takes no FIFO slot: the first real task still gets TOP - 1 */
	ck_assert_int_eq(gs_task_priorities_get(prio, 5), TOP - 1);
	ck_assert_int_eq(gs_task_priorities_get(prio, GS_NO_TASK), TOP);
	ck_assert_int_eq(gs_task_priorities_get(prio, 6), TOP - 2);
}
END_TEST

START_TEST(test_fifo_forget)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);

	ck_assert_int_eq(gs_task_priorities_get(prio, 1), TOP - 1);
	ck_assert_int_eq(gs_task_priorities_get(prio, 2), TOP - 2);
	ck_assert(gs_task_priorities_forget(prio, 1));
	ck_assert(!gs_task_priorities_has(prio, 1));
	ck_assert(!gs_task_priorities_forget(prio, 1));
	ck_assert(!gs_task_priorities_forget(prio, 77));
	/* task 2 keeps its slot */
	ck_assert(gs_task_priorities_has(prio, 2));
	ck_assert_int_eq(gs_task_priorities_get(prio, 2), TOP - 2);
	/* asked again, task 1 is now the newest: below task 2 */
	ck_assert_int_eq(gs_task_priorities_get(prio, 1), TOP - 3);
	ck_assert_int_eq(gs_task_priorities_get(prio, 3), TOP - 4);
}
END_TEST

/* ---- TASK_ID mode ---- */

typedef struct {
	/* Inputs */
	GsTaskId task;
	/* Outputs */
	gint64 expected;
} TaskIdRow;

static const TaskIdRow task_id_rows[] = {
	{ 0, TOP - 1 },
	{ 1, TOP - 2 },
	{ 41, TOP - 42 },
	{ 1000000, TOP - 1000001 },
	{ GS_NO_TASK, TOP },
};

START_TEST(test_task_id_mode)
{
	const TaskIdRow *row = &task_id_rows[_i];
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_TASK_ID);

	ck_assert_int_eq(gs_task_priorities_get_mode(prio), GS_PRIORITY_TASK_ID);
	/* the order of asking does not matter: ask somebody else first */
	gs_task_priorities_get(prio, 12345);
	ck_assert_int_eq(gs_task_priorities_get(prio, row->task), row->expected);
	ck_assert_int_eq(gs_task_priorities_get(prio, row->task), row->expected);
}
END_TEST

START_TEST(test_task_id_forget)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_TASK_ID);

	ck_assert_int_eq(gs_task_priorities_get(prio, 9), TOP - 10);
	gs_task_priorities_forget(prio, 9);
	/* the formula does not depend on history */
	ck_assert_int_eq(gs_task_priorities_get(prio, 9), TOP - 10);
	ck_assert_int_gt(gs_task_priorities_get(prio, 2), gs_task_priorities_get(prio, 9));
}
END_TEST

/* ---- explicit values ---- */

START_TEST(test_set_overrides)
{
	const GsPriorityMode mode = _i == 0 ? GS_PRIORITY_FIFO : GS_PRIORITY_TASK_ID;
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(mode);

	/* before anybody asked */
	ck_assert(!gs_task_priorities_has(prio, 5));
	gs_task_priorities_set(prio, 5, 100);
	ck_assert(gs_task_priorities_has(prio, 5));
	ck_assert_int_eq(gs_task_priorities_get(prio, 5), 100);

	/* after a value was assigned */
	gs_task_priorities_get(prio, 6);
	gs_task_priorities_set(prio, 6, TOP - 1);
	ck_assert_int_eq(gs_task_priorities_get(prio, 6), TOP - 1);

	/* set twice: the last wins; negative values are fine */
	gs_task_priorities_set(prio, 5, -3);
	ck_assert_int_eq(gs_task_priorities_get(prio, 5), -3);

	/* forgetting drops the explicit value */
	ck_assert(gs_task_priorities_forget(prio, 5));
	ck_assert(!gs_task_priorities_has(prio, 5));
	ck_assert_int_ne(gs_task_priorities_get(prio, 5), -3);
}
END_TEST

/*
 * Ids in every part of the storage: the first array, ids that make it grow
 * (by doubling, or by reaching an id near its end), and ids far past it that
 * go to the hash table. Each keeps its own value and is forgotten alone.
 */
static const GsTaskId storage_ids[] = {0, 63, 64, 1000, 1500, 5000, (GsTaskId) 1 << 40, G_MAXINT64};

START_TEST(test_storage)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	const guint n = G_N_ELEMENTS(storage_ids);

	for (guint i = 0; i < n; i++)
		gs_task_priorities_set(prio, storage_ids[i], -(gint64) i);
	for (guint i = 0; i < n; i++)
		ck_assert_int_eq(gs_task_priorities_get(prio, storage_ids[i]), -(gint64) i);
	ck_assert(!gs_task_priorities_has(prio, 62));
	ck_assert(!gs_task_priorities_has(prio, 4999));
	ck_assert(!gs_task_priorities_has(prio, ((GsTaskId) 1 << 40) + 1));
	ck_assert(gs_task_priorities_forget(prio, storage_ids[_i]));
	for (guint i = 0; i < n; i++)
		ck_assert(gs_task_priorities_has(prio, storage_ids[i]) == (i != (guint) _i));
	ck_assert(!gs_task_priorities_forget(prio, storage_ids[_i]));
}
END_TEST

/*
 * An id far past the array goes to the hash table; when smaller ids then
 * make the array grow over it, its value moves along (a task late in a long
 * file that starts first). Rows: the far id, then ids 0.. up to it are set.
 */
static const GsTaskId grown_over_ids[] = {1500, 4000, 70000};

START_TEST(test_storage_grows_over_a_stored_id)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	const GsTaskId far = grown_over_ids[_i];

	gs_task_priorities_set(prio, far, 42);
	for (GsTaskId id = 0; id < far; id++)
		gs_task_priorities_set(prio, id, -id);
	ck_assert(gs_task_priorities_has(prio, far));
	ck_assert_int_eq(gs_task_priorities_get(prio, far), 42);
	ck_assert_int_eq(gs_task_priorities_get(prio, far - 1), -(far - 1));
	ck_assert(gs_task_priorities_forget(prio, far));
	ck_assert(!gs_task_priorities_has(prio, far));
	ck_assert(!gs_task_priorities_forget(prio, far));
}
END_TEST

/* ---- thread priority ---- */

enum { DEDICATED, POOL, SHUFFLE };

typedef struct {
	const char *what;
	/* Inputs: tasks asked in this order (FIFO: first highest), then the thread */
	GsTaskId order[4];
	guint n_order;
	int kind;
	GsTaskId task;
	GsTaskId pool_tasks[4];
	guint n_pool_tasks;
	GsPoolPriorityRule rule;
	/* Outputs: the expected task priority, as the index in order[] (or TOP) */
	int expected_rank; /* -1: TOP */
} ThreadPrioRow;

#define SMALLEST GS_POOL_PRIORITY_SMALLEST_TASK_ID
#define BEST GS_POOL_PRIORITY_BEST_TASK

static const ThreadPrioRow thread_rows[] = {
	{ "dedicated", { 4, 2 }, 2, DEDICATED, 2, { 0 }, 0, SMALLEST, 1 },
	{ "dedicated, best rule", { 4, 2 }, 2, DEDICATED, 4, { 0 }, 0, BEST, 0 },
	{ "shuffle pool", { 4, 2 }, 2, SHUFFLE, GS_NO_TASK, { 2, 4 }, 2, SMALLEST, -1 },
	{ "shuffle pool, best rule", { 4, 2 }, 2, SHUFFLE, GS_NO_TASK, { 2, 4 }, 2, BEST, -1 },
	{ "pool, one task", { 4, 2 }, 2, POOL, GS_NO_TASK, { 4 }, 1, SMALLEST, 0 },
	/* task 3 asked first ranks highest, but task 1 has the smaller id */
	{ "pool, smallest id rule", { 3, 1, 2 }, 3, POOL, GS_NO_TASK, { 1, 3 }, 2, SMALLEST, 1 },
	{ "pool, best task rule", { 3, 1, 2 }, 3, POOL, GS_NO_TASK, { 1, 3 }, 2, BEST, 0 },
	{ "pool, smallest id also best", { 1, 3, 2 }, 3, POOL, GS_NO_TASK, { 1, 2, 3 }, 3, SMALLEST,
	  0 },
	{ "pool, best among three", { 2, 3, 1 }, 3, POOL, GS_NO_TASK, { 1, 2, 3 }, 3, BEST, 0 },
	{ "pool, best is the middle id", { 3, 2, 1 }, 3, POOL, GS_NO_TASK, { 1, 2 }, 2, BEST, 1 },
	{ "pool, empty set", { 1 }, 1, POOL, GS_NO_TASK, { 0 }, 0, SMALLEST, -1 },
	{ "pool, empty set, best rule", { 1 }, 1, POOL, GS_NO_TASK, { 0 }, 0, BEST, -1 },
};

START_TEST(test_thread_priority)
{
	const ThreadPrioRow *row = &thread_rows[_i];
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	GsThreadView v = {
		.id = 1000 + (GsThreadId) _i,
		.task = row->task,
		.state = GS_THREAD_RUNNING,
		.alloc_kind = GS_KIND_GPU,
		.is_pool = row->kind != DEDICATED,
		.shuffle = row->kind == SHUFFLE,
	};
	GsPriority p;

	for (guint i = 0; i < row->n_order; i++)
		ck_assert_int_eq(gs_task_priorities_get(prio, row->order[i]), TOP - 1 - (gint64) i);
	if (v.is_pool) {
		v.pool_tasks = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
		g_array_append_vals(v.pool_tasks, row->pool_tasks, row->n_pool_tasks);
	}
	p = gs_thread_priority(prio, &v, row->rule);
	ck_assert_msg(p.task == (row->expected_rank < 0 ? TOP : TOP - 1 - row->expected_rank),
		      "%s: task priority %" G_GINT64_FORMAT, row->what, p.task);
	ck_assert_uint_eq(p.thread, v.id);
	/* the thread's rank does not change the task slots it read */
	for (guint i = 0; i < row->n_order; i++)
		ck_assert_int_eq(gs_task_priorities_get(prio, row->order[i]), TOP - 1 - (gint64) i);
	if (v.pool_tasks != NULL)
		g_array_unref(v.pool_tasks);
}
END_TEST

/* A dedicated thread of a task nobody asked about gets the task's FIFO slot then. */
START_TEST(test_thread_priority_lazy)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	GsThreadView v = { .id = 3, .task = 8, .state = GS_THREAD_BLOCKED };
	GsPriority p;

	gs_task_priorities_get(prio, 1);
	p = gs_thread_priority(prio, &v, SMALLEST);
	ck_assert_int_eq(p.task, TOP - 2);
	ck_assert(gs_task_priorities_has(prio, 8));
	ck_assert_int_eq(gs_task_priorities_get(prio, 8), TOP - 2);
}
END_TEST

/* TASK_ID mode: a non-shuffle pool thread takes its smallest id's (= best) rank. */
START_TEST(test_thread_priority_task_id_mode)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_TASK_ID);
	static const GsTaskId ids[] = { 4, 6 };
	GsThreadView v = { .id = 3, .task = GS_NO_TASK, .state = GS_THREAD_RUNNING,
			   .is_pool = TRUE };
	GsThreadView d = { .id = 4, .task = 6, .state = GS_THREAD_RUNNING };

	v.pool_tasks = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
	g_array_append_vals(v.pool_tasks, ids, G_N_ELEMENTS(ids));
	ck_assert_int_eq(gs_thread_priority(prio, &v, SMALLEST).task, TOP - 5);
	ck_assert_int_eq(gs_thread_priority(prio, &v, BEST).task, TOP - 5);
	ck_assert_int_eq(gs_thread_priority(prio, &d, SMALLEST).task, TOP - 7);
	g_array_unref(v.pool_tasks);
}
END_TEST

/* ---- comparison ---- */

typedef struct {
	/* Inputs */
	GsPriority a, b;
	/* Outputs: sign of gs_priority_compare(a, b) */
	int expected;
} CompareRow;

static const CompareRow compare_rows[] = {
	{ { 5, 1 }, { 4, 9 }, 1 },
	{ { 4, 9 }, { 5, 1 }, -1 },
	/* equal task priority: the larger thread id ranks higher */
	{ { 5, 1 }, { 5, 2 }, -1 },
	{ { 5, 2 }, { 5, 1 }, 1 },
	{ { 5, 2 }, { 5, 2 }, 0 },
	{ { TOP, 0 }, { TOP - 1, G_MAXUINT64 }, 1 },
	/* thread ids are unsigned */
	{ { 7, G_MAXUINT64 }, { 7, 1 }, 1 },
	{ { 7, (GsThreadId) 1 << 63 }, { 7, ((GsThreadId) 1 << 63) - 1 }, 1 },
	/* no overflow on extreme task priorities */
	{ { G_MININT64, 0 }, { TOP, 0 }, -1 },
	{ { TOP, 0 }, { G_MININT64, 0 }, 1 },
	{ { -3, 4 }, { 2, 1 }, -1 },
	{ { 0, 0 }, { 0, 0 }, 0 },
};

START_TEST(test_compare)
{
	const CompareRow *row = &compare_rows[_i];

	ck_assert_int_eq(sign(gs_priority_compare(row->a, row->b)), row->expected);
	/* antisymmetric */
	ck_assert_int_eq(sign(gs_priority_compare(row->b, row->a)), -row->expected);
}
END_TEST

/* Thread priorities from the real rules compare as §2.2 says. */
START_TEST(test_compare_threads)
{
	g_autoptr(GsTaskPriorities) prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	GsThreadView first = { .id = 1, .task = 10, .state = GS_THREAD_RUNNING };
	GsThreadView second = { .id = 99, .task = 20, .state = GS_THREAD_RUNNING };
	GsThreadView first_b = { .id = 2, .task = 10, .state = GS_THREAD_RUNNING };
	GsThreadView shuffle = { .id = 0, .task = GS_NO_TASK, .state = GS_THREAD_RUNNING,
				 .is_pool = TRUE, .shuffle = TRUE };
	GsPriority p1, p2, p1b, ps;

	gs_task_priorities_get(prio, 10);
	gs_task_priorities_get(prio, 20);
	shuffle.pool_tasks = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
	p1 = gs_thread_priority(prio, &first, SMALLEST);
	p2 = gs_thread_priority(prio, &second, SMALLEST);
	p1b = gs_thread_priority(prio, &first_b, SMALLEST);
	ps = gs_thread_priority(prio, &shuffle, SMALLEST);
	/* the older task wins over a larger thread id */
	ck_assert_int_gt(gs_priority_compare(p1, p2), 0);
	/* same task: the larger thread id wins */
	ck_assert_int_gt(gs_priority_compare(p1b, p1), 0);
	/* a shuffle thread ranks above every task thread, even with id 0 */
	ck_assert_int_gt(gs_priority_compare(ps, p1b), 0);
	ck_assert_int_gt(gs_priority_compare(ps, p2), 0);
	g_array_unref(shuffle.pool_tasks);
}
END_TEST

Suite *gs_test_suite_priority(void);

Suite *
gs_test_suite_priority(void)
{
	Suite *s = suite_create("priority");
	TCase *tc;

	tc = tcase_create("task");
	tcase_add_loop_test(tc, test_fifo_order, 0, G_N_ELEMENTS(fifo_order));
	tcase_add_test(tc, test_fifo_no_task);
	tcase_add_test(tc, test_fifo_forget);
	tcase_add_loop_test(tc, test_task_id_mode, 0, G_N_ELEMENTS(task_id_rows));
	tcase_add_test(tc, test_task_id_forget);
	tcase_add_loop_test(tc, test_set_overrides, 0, 2);
	tcase_add_loop_test(tc, test_storage, 0, G_N_ELEMENTS(storage_ids));
	tcase_add_loop_test(tc, test_storage_grows_over_a_stored_id, 0,
			    G_N_ELEMENTS(grown_over_ids));
	suite_add_tcase(s, tc);

	tc = tcase_create("thread");
	tcase_add_loop_test(tc, test_thread_priority, 0, G_N_ELEMENTS(thread_rows));
	tcase_add_test(tc, test_thread_priority_lazy);
	tcase_add_test(tc, test_thread_priority_task_id_mode);
	suite_add_tcase(s, tc);

	tc = tcase_create("compare");
	tcase_add_loop_test(tc, test_compare, 0, G_N_ELEMENTS(compare_rows));
	tcase_add_test(tc, test_compare_threads);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gs_test_suite_priority());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
