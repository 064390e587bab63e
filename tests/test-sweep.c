/*
 * gpusim tests: a sweep's grid and shards (src/cli/sweep.h) and the metrics
 * its shards keep (src/cli/batch.h). Rows of --shard texts with the shard
 * each gives or its refusal; every run in exactly one shard of N, for every
 * N; the order of the runs (the first parameter slowest, the variant
 * fastest); a driver that does not batch (a real device's) running every
 * job on one worker whatever the workers asked; rows of metric columns, each
 * read back and written again to the same text, or refused.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "testlib.h"
#include "cli/batch.h"
#include "cli/sweep.h"

/* A grid of @params (NULL-terminated) over variants named @labels. */
static GsSweepGrid *
grid_new(const char *const *params, const char *const *labels)
{
	GPtrArray *variants = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_variant_free);
	g_autoptr(GError) error = NULL;
	GsSweepGrid *grid;

	for (guint i = 0; labels[i] != NULL; i++) {
		GsBatchVariant *v = g_new0(GsBatchVariant, 1);

		v->label = g_strdup(labels[i]);
		g_ptr_array_add(variants, v);
	}
	grid = gs_sweep_grid_new(params, variants, &error);
	ck_assert_msg(grid != NULL, "%s", error != NULL ? error->message : "?");
	return grid;
}

/* ---- --shard ---- */

static const struct {
	const char *text;
	guint runs;
	guint k, n; /* 0: refused */
} shard_rows[] = {
	{"1/3", 9, 1, 3},   {"3/3", 9, 3, 3},  {"1/1", 1, 1, 1},  {"9/9", 9, 9, 9},
	{"0/3", 9, 0, 0},   {"4/3", 9, 0, 0},  {"3", 9, 0, 0},    {"1/0", 9, 0, 0},
	{"a/3", 9, 0, 0},   {"1/3/3", 9, 0, 0}, {"-1/3", 9, 0, 0}, {"1/-3", 9, 0, 0},
	{"", 9, 0, 0},      {"/", 9, 0, 0},    {" 1/3", 9, 0, 0}, {"1/3 ", 9, 0, 0},
	{"10/10", 9, 0, 0}, {"1/10", 9, 0, 0},
};

START_TEST(test_shard_parse)
{
	g_autoptr(GError) error = NULL;
	GsSweepShard shard = {0};
	gboolean ok = gs_sweep_shard_parse(shard_rows[_i].text, shard_rows[_i].runs, &shard, &error);

	ck_assert_msg(ok == (shard_rows[_i].k != 0), "--shard=%s", shard_rows[_i].text);
	if (!ok) {
		ck_assert(g_str_has_prefix(error->message, "--shard="));
		return;
	}
	ck_assert_uint_eq(shard.k, shard_rows[_i].k);
	ck_assert_uint_eq(shard.n, shard_rows[_i].n);
}
END_TEST

/* Every run of 23 in exactly one shard of N, and shard K's first run K - 1. */
START_TEST(test_shards_partition)
{
	enum { RUNS = 23 };

	for (guint n = 1; n <= RUNS; n++) {
		for (guint run = 0; run < RUNS; run++) {
			guint takers = 0;

			for (guint k = 1; k <= n; k++) {
				const GsSweepShard shard = {.k = k, .n = n};

				takers += gs_sweep_shard_takes(&shard, run);
				ck_assert(run != k - 1 || gs_sweep_shard_takes(&shard, run));
			}
			ck_assert_msg(takers == 1, "run %u is in %u shards of %u", run, takers, n);
		}
	}
}
END_TEST

/* ---- the grid ---- */

START_TEST(test_grid_order)
{
	static const char *const params[] = {"a=1,2", "b=x,y,z", NULL};
	static const char *const labels[] = {"fail", "retry", NULL};
	static const char *const runs[] = {
		"1 x fail", "1 x retry", "1 y fail", "1 y retry", "1 z fail", "1 z retry",
		"2 x fail", "2 x retry", "2 y fail", "2 y retry", "2 z fail", "2 z retry",
	};
	g_autoptr(GsSweepGrid) grid = grid_new(params, labels);

	ck_assert_uint_eq(grid->runs, G_N_ELEMENTS(runs));
	for (guint i = 0; i < grid->runs; i++) {
		g_autofree char *run = g_strdup_printf("%s %s %s", gs_sweep_value(grid, i, 0),
						       gs_sweep_value(grid, i, 1),
						       gs_sweep_variant(grid, i)->label);

		ck_assert_str_eq(run, runs[i]);
	}
}
END_TEST

static const char *const no_param[] = {NULL};
static const char *const no_values[] = {"a", NULL};
static const char *const empty_value[] = {"a=1,,2", NULL};
static const char *const repeated[] = {"a=1", "a=2", NULL};
static const char *const too_many[] = {
	"a=1,2,3,4,5,6,7,8,9,10", "b=1,2,3,4,5,6,7,8,9,10", "c=1,2,3,4,5,6,7,8,9,10",
	"d=1,2,3,4,5,6,7,8,9,10", "e=1,2,3,4,5,6,7,8,9,10", "f=1,2,3,4,5,6,7,8,9,10,11",
	NULL,
};
static const char *const *const refused_rows[] = {no_param, no_values, empty_value, repeated,
						 too_many};

START_TEST(test_grid_refused)
{
	GPtrArray *variants = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_variant_free);
	g_autoptr(GError) error = NULL;
	GsBatchVariant *v = g_new0(GsBatchVariant, 1);

	v->label = g_strdup("base");
	g_ptr_array_add(variants, v);
	ck_assert_msg(gs_sweep_grid_new(refused_rows[_i], variants, &error) == NULL, "row %d", _i);
	ck_assert_ptr_nonnull(error);
}
END_TEST

/* ---- metrics read back ---- */

static const struct {
	const char *text;
	gboolean ok;
} metrics_rows[] = {
	{"completed,7003000,3,3,0,3,0,0,2000000,0,0,0,0,0,0,0,0,0,16777216,0,0,11979789,16777216", TRUE},
	{"deadlock,2002000,3,0,0,3,0,0,1001000,0,0,0,0,1,0,0,0,0,8388608,0,0,8384417,8388608", TRUE},
	{"failed,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,9223372036854775807", TRUE},
	{"timeout,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,-1", TRUE},
	{"finished,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", FALSE},
	{"completed,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", FALSE},
	{"completed,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", FALSE},
	{"completed,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,x", FALSE},
	{"completed,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,", FALSE},
	{"completed,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1.5", FALSE},
	{"completed,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,9223372036854775808", FALSE},
	{"", FALSE},
};

START_TEST(test_metrics_read_back)
{
	GsBatchMetrics m;
	g_autoptr(GString) again = g_string_new(NULL);
	gboolean ok = gs_batch_csv_parse_metrics(metrics_rows[_i].text, &m);

	ck_assert_msg(ok == metrics_rows[_i].ok, "'%s'", metrics_rows[_i].text);
	if (!ok)
		return;
	gs_batch_csv_metrics(again, &m);
	ck_assert_str_eq(again->str, metrics_rows[_i].text);
}
END_TEST

/* ---- running: a driver that does not batch runs one job at a time ---- */

static GsWorkload *
one_task(void)
{
	GsWorkload *w = gs_workload_new();
	GsTaskSpec *task = gs_task_spec_new("t");

	w->name = g_strdup("one task");
	g_ptr_array_add(task->threads, gs_thread_spec_new("t.0"));
	g_ptr_array_add(w->tasks, task);
	return w;
}

/* The progress callback runs on the worker that finished the job. */
static void
note_worker(const GsBatchJob *job, guint done, guint total, gpointer data)
{
	pthread_t self = pthread_self();

	g_array_append_val((GArray *) data, self);
}

START_TEST(test_serial_driver_one_worker)
{
	GsDriver serial = *gs_driver_lookup("sim", NULL);
	g_autoptr(GPtrArray) jobs = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);
	g_autoptr(GArray) workers = g_array_new(FALSE, FALSE, sizeof(pthread_t));

	serial.batches = FALSE; /* as a real device's driver */
	for (guint i = 0; i < 8; i++)
		g_ptr_array_add(jobs, gs_batch_job_new_workload(one_task()));
	ck_assert(gs_batch_run(jobs, &serial, 4, note_worker, workers, NULL));
	ck_assert_uint_eq(workers->len, 8);
	for (guint i = 0; i < workers->len; i++)
		ck_assert(pthread_equal(g_array_index(workers, pthread_t, i), pthread_self()));
	for (guint i = 0; i < jobs->len; i++)
		ck_assert_int_eq(((GsBatchJob *) jobs->pdata[i])->result->outcome, GS_OUTCOME_COMPLETED);
}
END_TEST

Suite *gs_test_suite_sweep(void);

Suite *
gs_test_suite_sweep(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc;

	tc = tcase_create("shards");
	tcase_add_loop_test(tc, test_shard_parse, 0, G_N_ELEMENTS(shard_rows));
	tcase_add_test(tc, test_shards_partition);
	suite_add_tcase(s, tc);

	tc = tcase_create("grid");
	tcase_add_test(tc, test_grid_order);
	tcase_add_loop_test(tc, test_grid_refused, 0, G_N_ELEMENTS(refused_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("running");
	tcase_add_test(tc, test_serial_driver_one_worker);
	suite_add_tcase(s, tc);

	tc = tcase_create("metrics");
	tcase_add_loop_test(tc, test_metrics_read_back, 0, G_N_ELEMENTS(metrics_rows));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_sweep());
}
