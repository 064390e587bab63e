/*
 * Unit tests of src/scenario/montecarlo.h, generate.model montecarlo: the
 * rules' arithmetic on hand-checked rows (busy-time shares, template
 * variation by the intended and by the tool's arithmetic, skew); the op
 * structure of small hand-checked workloads, with and without shuffle
 * threads, as a canonical dump; the properties every generated task must
 * have, checked by walking its ops over a table of parameters (one retry
 * block around the whole task, 1..max_allocs allocations named b<k> in
 * order, each freed once, at most task_max held, busy time below
 * max_compute, allocation 0 and its hand-offs on the shuffle thread);
 * templates and skew against the untemplated and unskewed tasks of the
 * same seed; determinism; and runs of generated workloads in the simulator.
 */
#include "config.h"

#include <string.h>

#include "testlib.h"
#include "scenario/generate.h"
#include "scenario/montecarlo.h"
#include "sim/sim.h"

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define US ((GsTime) 1000)
#define MS ((GsTime) 1000000)

/* ---- the arithmetic, by hand ---- */

typedef struct {
	GsTime total;
	guint n;
	double weights[4];
	GsTime shares[4];
} SharesRow;

static const SharesRow shares_rows[] = {
	{100, 3, {1, 1, 2}, {25, 25, 50}},
	/* cuts at floor(10/3) = 3 and floor(20/3) = 6; the last at 10 */
	{10, 3, {1, 1, 1}, {3, 3, 4}},
	{0, 2, {0.5, 0.7}, {0, 0}},
	{7, 1, {0.3}, {7}},
	/* one nanosecond over four: it falls to the last */
	{1, 4, {1, 1, 1, 1}, {0, 0, 0, 1}},
	/* the weight floor: floor(10^6 x 0.00001 / 1.00002) = 9 */
	{1000000, 2, {0.00001, 1.00001}, {9, 999991}},
	/* the largest time: the cuts stay below it and the shares sum to it */
	{G_MAXINT64, 2, {1, 1}, {G_GINT64_CONSTANT(4611686018427387904),
				 G_GINT64_CONSTANT(4611686018427387903)}},
};

START_TEST(test_busy_shares)
{
	const SharesRow *r = &shares_rows[_i];
	GsTime shares[4];
	GsTime sum = 0;

	gs_montecarlo_busy_shares(r->total, r->weights, r->n, shares);
	for (guint k = 0; k < r->n; k++) {
		ck_assert_int_eq(shares[k], r->shares[k]);
		sum += shares[k];
	}
	ck_assert_int_eq(sum, r->total);
}
END_TEST

typedef struct {
	gint64 size;
	double u, change;
	GsTemplateArithmetic arithmetic;
	gint64 expected;
} VaryRow;

static const VaryRow vary_rows[] = {
	/* d = (1 - 2u) x change: u 0.25, change 0.5 gives d = 0.25 */
	{1000, 0.25, 0.5, GS_TEMPLATE_INTENDED, 1250},
	{1000, 0.25, 0.5, GS_TEMPLATE_CODE, 250},
	/* d = -0.25: the tool's arithmetic gives a negative size, so 1 byte */
	{1000, 0.75, 0.5, GS_TEMPLATE_INTENDED, 750},
	{1000, 0.75, 0.5, GS_TEMPLATE_CODE, 1},
	/* u = 0: d = change, the most */
	{1000, 0.0, 0.5, GS_TEMPLATE_INTENDED, 1500},
	{1000, 0.0, 0.5, GS_TEMPLATE_CODE, 500},
	/* d = 0: unchanged, or (the tool) 1 byte */
	{1000, 0.5, 0.5, GS_TEMPLATE_INTENDED, 1000},
	{1000, 0.5, 0.5, GS_TEMPLATE_CODE, 1},
	/* no change at all */
	{12345, 0.1, 0.0, GS_TEMPLATE_INTENDED, 12345},
	{12345, 0.1, 0.0, GS_TEMPLATE_CODE, 1},
	/* floors, and never below a byte */
	{3, 0.0, 0.5, GS_TEMPLATE_INTENDED, 4},
	{1, 0.75, 0.5, GS_TEMPLATE_INTENDED, 1},
	/* a change above 1 can make the factor negative */
	{1000, 1.0 - 1.0 / 1024, 2.0, GS_TEMPLATE_INTENDED, 1},
};

START_TEST(test_varied_size)
{
	const VaryRow *r = &vary_rows[_i];

	ck_assert_int_eq(gs_montecarlo_varied_size(r->size, r->u, r->change, r->arithmetic),
			 r->expected);
}
END_TEST

typedef struct {
	gint64 size;
	double factor;
	gint64 expected;
} SkewRow;

static const SkewRow skew_rows[] = {
	{1000, 2.0, 2000},
	{1000, 2.5, 2500},
	{3, 0.5, 1},
	{1, 0.1, 1},
	{7, 0.0, 1},
	{GS_MAX_BYTES, 4.0, GS_MAX_BYTES},
};

START_TEST(test_skewed_size)
{
	const SkewRow *r = &skew_rows[_i];

	ck_assert_int_eq(gs_montecarlo_skewed_size(r->size, r->factor), r->expected);
}
END_TEST

/* ---- workloads ---- */

typedef struct {
	guint64 seed;
	guint tasks;
	gint64 task_max;
	guint max_allocs;
	GsTime max_compute;
	gboolean retry_blocks;
	guint shuffle_threads;
	gboolean use_template;
	double template_change;
	GsTemplateArithmetic arithmetic;
	guint skew_tasks;
	double skew_factor;
} Row;

static GsWorkload *
workload_for(const Row *r)
{
	GsWorkload *w = gs_workload_new();

	w->seed = r->seed;
	w->generate = (GsGenerate){
		.enabled = TRUE,
		.model = GS_GENERATE_MONTECARLO,
		.tasks = r->tasks,
		.threads_per_task = 1,
		.task_max = r->task_max,
		.max_allocs = r->max_allocs,
		.max_compute = r->max_compute,
		.retry_blocks = r->retry_blocks,
		.shuffle_threads = r->shuffle_threads,
		.use_template = r->use_template,
		.template_change = r->template_change,
		.template_arithmetic = r->arithmetic,
		.skew_tasks = r->skew_tasks,
		.skew_factor = r->skew_factor,
	};
	return w;
}

/* ---- a canonical dump ---- */

static const char *
buffer_name(const GsWorkload *w, const GsThreadSpec *t, const GsOp *op, guint index)
{
	const GsThreadSpec *owner = t;

	if (op->kind == GS_OP_FREE && op->free.thread != NULL)
		owner = gs_workload_thread(w, op->free.thread, NULL);
	ck_assert_ptr_nonnull(owner);
	ck_assert_uint_lt(index, owner->buffers->len);
	return owner->buffers->pdata[index];
}

static void
dump_ops(GString *s, const GsWorkload *w, const GsThreadSpec *t, const GArray *ops,
	 guint depth)
{
	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);
		const guint *names;

		ck_assert_uint_eq(op->line, 0);
		ck_assert_uint_eq(op->column, 0);
		g_string_append_printf(s, "%*s%s", (int) (2 * depth), "", gs_op_kind_name(op->kind));
		if (op->kind == GS_OP_ALLOC) {
			ck_assert_int_eq(op->alloc.kind, GS_KIND_GPU);
			ck_assert(op->alloc.blocking);
			ck_assert(!op->alloc.spillable);
			ck_assert_int_eq(op->alloc.reservation, -1);
			ck_assert_uint_eq(op->alloc.device, 0);
			g_string_append_printf(s, " %s %" G_GINT64_FORMAT,
					       buffer_name(w, t, op, op->alloc.buf), op->alloc.size);
		} else if (op->kind == GS_OP_FREE) {
			names = gs_names_data(&op->free.bufs);
			for (guint k = 0; k < op->free.bufs.len; k++)
				g_string_append_printf(s, " %s", buffer_name(w, t, op, names[k]));
			if (op->free.thread != NULL)
				g_string_append_printf(s, "@%s", op->free.thread);
		} else if (op->kind == GS_OP_COMPUTE) {
			ck_assert_int_eq(op->compute.stream, -1);
			ck_assert_uint_eq(op->compute.uses.len, 0);
			g_string_append_printf(s, " %" G_GINT64_FORMAT, op->compute.time);
		} else if (op->kind == GS_OP_RETRY) {
			ck_assert_uint_eq(op->retry.input.len, 0);
			g_string_append_printf(s, " %s %u\n",
					       op->retry.split == GS_SPLIT_HALVES ? "halves" :
					       op->retry.split == GS_SPLIT_NONE ? "none" : "other",
					       op->retry.max_splits);
			dump_ops(s, w, t, op->retry.ops, depth + 1);
			continue;
		} else if (op->kind == GS_OP_POOL) {
			g_string_append_printf(s, " %s", op->pool.done ? "done_for" : "work_for");
			for (guint k = 0; k < op->pool.tasks->len; k++)
				g_string_append_printf(s, " %u", g_array_index(op->pool.tasks, guint, k));
		} else if (op->kind == GS_OP_WAIT_ON_POOL) {
			g_string_append_printf(s, " %s", op->wait_on_pool ? "true" : "false");
		} else {
			g_string_append(s, " (unexpected)");
		}
		g_string_append_c(s, '\n');
	}
}

static void
dump_thread(GString *s, const GsWorkload *w, const GsThreadSpec *t)
{
	g_string_append_printf(s, "thread %s%s%s\n", t->name, t->shuffle ? " shuffle" : "",
			       t->on_oom == GS_ON_OOM_CONTINUE ? " continue" : "");
	dump_ops(s, w, t, t->ops, 1);
}

static char *
dump(const GsWorkload *w)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		ck_assert_int_eq(task->start, 0);
		ck_assert_uint_eq(task->repeat, 1);
		ck_assert_uint_eq(task->priority, 0);
		g_string_append_printf(s, "task %s\n", task->id);
		for (guint k = 0; k < task->threads->len; k++)
			dump_thread(s, w, task->threads->pdata[k]);
	}
	for (guint i = 0; i < w->pool_threads->len; i++)
		dump_thread(s, w, w->pool_threads->pdata[i]);
	return g_string_free(s, FALSE);
}

static char *
generated_dump(const Row *r)
{
	g_autoptr(GsWorkload) w = workload_for(r);

	gs_generate_tasks(w);
	ck_assert_ptr_null(w->maker);
	return dump(w);
}

/* ---- small workloads, by hand ---- */

typedef struct {
	Row row;
	const char *dump;
} ShapeRow;

static const ShapeRow shape_rows[] = {
	/* One allocation of the one byte there is: the whole task in one retry block. */
	{{1, 1, 1, 1, 0, TRUE, 0, FALSE, 0, 0, 0, 1},
	 "task g0\n"
	 "thread g0.0\n"
	 "  retry halves 16\n"
	 "    alloc b0 1\n"
	 "    free b0\n"},
	{{1, 1, 1, 1, 0, FALSE, 0, FALSE, 0, 0, 0, 1},
	 "task g0\n"
	 "thread g0.0\n"
	 "  alloc b0 1\n"
	 "  free b0\n"},
	/*
	 * A shuffle thread serving two tasks: each submits, waits on the pool
	 * until allocation 0 is made there, and frees it later itself.
	 */
	{{1, 2, 1, 1, 0, TRUE, 1, FALSE, 0, 0, 0, 1},
	 "task g0\n"
	 "thread g0.0\n"
	 "  retry halves 16\n"
	 "    alloc submit 0\n"
	 "    wait_on_pool true\n"
	 "    free g0.ready@shuffle0\n"
	 "    wait_on_pool false\n"
	 "    free submit\n"
	 "    free g0.b0@shuffle0\n"
	 "task g1\n"
	 "thread g1.0\n"
	 "  retry halves 16\n"
	 "    alloc submit 0\n"
	 "    wait_on_pool true\n"
	 "    free g1.ready@shuffle0\n"
	 "    wait_on_pool false\n"
	 "    free submit\n"
	 "    free g1.b0@shuffle0\n"
	 "thread shuffle0 shuffle continue\n"
	 "  free submit@g0.0\n"
	 "  pool work_for 0\n"
	 "  retry none 16\n"
	 "    alloc g0.b0 1\n"
	 "  pool done_for 0\n"
	 "  alloc g0.ready 0\n"
	 "  free submit@g1.0\n"
	 "  pool work_for 1\n"
	 "  retry none 16\n"
	 "    alloc g1.b0 1\n"
	 "  pool done_for 1\n"
	 "  alloc g1.ready 0\n"},
	/* Two shuffle threads, three tasks: g0 and g2 go to shuffle0, g1 to shuffle1. */
	{{1, 3, 1, 1, 0, FALSE, 2, FALSE, 0, 0, 0, 1},
	 "task g0\n"
	 "thread g0.0\n"
	 "  alloc submit 0\n"
	 "  wait_on_pool true\n"
	 "  free g0.ready@shuffle0\n"
	 "  wait_on_pool false\n"
	 "  free submit\n"
	 "  free g0.b0@shuffle0\n"
	 "task g1\n"
	 "thread g1.0\n"
	 "  alloc submit 0\n"
	 "  wait_on_pool true\n"
	 "  free g1.ready@shuffle1\n"
	 "  wait_on_pool false\n"
	 "  free submit\n"
	 "  free g1.b0@shuffle1\n"
	 "task g2\n"
	 "thread g2.0\n"
	 "  alloc submit 0\n"
	 "  wait_on_pool true\n"
	 "  free g2.ready@shuffle0\n"
	 "  wait_on_pool false\n"
	 "  free submit\n"
	 "  free g2.b0@shuffle0\n"
	 "thread shuffle0 shuffle continue\n"
	 "  free submit@g0.0\n"
	 "  pool work_for 0\n"
	 "  alloc g0.b0 1\n"
	 "  pool done_for 0\n"
	 "  alloc g0.ready 0\n"
	 "  free submit@g2.0\n"
	 "  pool work_for 2\n"
	 "  alloc g2.b0 1\n"
	 "  pool done_for 2\n"
	 "  alloc g2.ready 0\n"
	 "thread shuffle1 shuffle continue\n"
	 "  free submit@g1.0\n"
	 "  pool work_for 1\n"
	 "  alloc g1.b0 1\n"
	 "  pool done_for 1\n"
	 "  alloc g1.ready 0\n"},
	/* No tasks: shuffle threads with nothing to serve. */
	{{1, 0, 1, 1, 0, TRUE, 2, FALSE, 0, 0, 0, 1},
	 "thread shuffle0 shuffle continue\n"
	 "thread shuffle1 shuffle continue\n"},
};

START_TEST(test_shape)
{
	const ShapeRow *r = &shape_rows[_i];
	g_autofree char *got = generated_dump(&r->row);

	ck_assert_str_eq(got, r->dump);
}
END_TEST

/* What another thread frees is marked given away, in both directions of the hand-off. */
START_TEST(test_given_away)
{
	Row r = {1, 2, 1, 1, 0, TRUE, 1, FALSE, 0, 0, 0, 1};
	g_autoptr(GsWorkload) w = workload_for(&r);
	const GsThreadSpec *shuffle, *task;

	ck_assert(!gs_workload_frees_across_threads(w));
	gs_generate_tasks(w);
	ck_assert(gs_workload_frees_across_threads(w));
	shuffle = w->pool_threads->pdata[0];
	ck_assert_uint_eq(shuffle->buffers->len, 4);
	ck_assert_ptr_nonnull(shuffle->given_away);
	for (guint i = 0; i < shuffle->buffers->len; i++)
		ck_assert(g_array_index(shuffle->given_away, gboolean, i));
	for (guint t = 0; t < 2; t++) {
		task = ((GsTaskSpec *) w->tasks->pdata[t])->threads->pdata[0];
		ck_assert_str_eq(task->buffers->pdata[0], "submit");
		ck_assert_ptr_nonnull(task->given_away);
		ck_assert(g_array_index(task->given_away, gboolean, 0));
	}
}
END_TEST

/* task_max 1, two allocations at most: each takes the one byte and is freed before the next. */
START_TEST(test_one_byte_alternates)
{
	gboolean seen[3] = {FALSE, FALSE, FALSE};

	for (guint64 seed = 1; seed <= 40; seed++) {
		Row r = {seed, 1, 1, 2, 0, TRUE, 0, FALSE, 0, 0, 0, 1};
		g_autofree char *got = generated_dump(&r);
		const char *one = "task g0\nthread g0.0\n  retry halves 16\n"
				  "    alloc b0 1\n    free b0\n";
		const char *two = "task g0\nthread g0.0\n  retry halves 16\n"
				  "    alloc b0 1\n    free b0\n    alloc b1 1\n    free b1\n";

		ck_assert_msg(strcmp(got, one) == 0 || strcmp(got, two) == 0, "seed %" G_GUINT64_FORMAT
			      ":\n%s", seed, got);
		seen[strcmp(got, one) == 0 ? 1 : 2] = TRUE;
	}
	/* 1 + rand(2): both counts come up */
	ck_assert(seen[1] && seen[2]);
}
END_TEST

/* ---- properties over a table ---- */

static const Row rows[] = {
	/* the tool's defaults */
	{1, 12, 300 * MIB, 50, 100 * MS, TRUE, 0, FALSE, 0.05, 0, 0, 2.0},
	/* --skewed: one task doubled, the others around a template */
	{2, 12, 300 * MIB, 50, 100 * MS, TRUE, 0, TRUE, 0.05, 0, 1, 2.0},
	/* the CI fuzz run's sizes, with shuffle threads */
	{3, 8, 2 * GIB, 20, 10 * MS, TRUE, 2, TRUE, 0.05, 0, 1, 2.0},
	{4, 6, 64 * MIB, 5, 1 * MS, FALSE, 3, FALSE, 0.05, 0, 0, 2.0},
	/* the tool's template arithmetic, a wide change */
	{5, 10, 100 * MIB, 30, 5 * MS, TRUE, 1, TRUE, 0.5, GS_TEMPLATE_CODE, 0, 2.0},
	{6, 10, 100 * MIB, 30, 5 * MS, TRUE, 0, TRUE, 0.5, GS_TEMPLATE_INTENDED, 3, 0.5},
	/* no busy time; one allocation each */
	{7, 5, 10 * MIB, 1, 0, TRUE, 2, FALSE, 0.05, 0, 0, 2.0},
	/* skew over more tasks than exist: all of them */
	{8, 3, 1 * MIB, 4, 1 * US, TRUE, 5, FALSE, 0.05, 0, 9, 3.0},
	/* a seed above 2^32, sizes above 4 GiB */
	{G_MAXUINT64, 4, 8 * GIB, 50, 100 * MS, TRUE, 1, FALSE, 0.05, 0, 0, 2.0},
	/* more allocations than bytes */
	{9, 4, 3, 40, 1 * MS, TRUE, 1, FALSE, 0.05, 0, 0, 2.0},
};

/* The most a varied and skewed allocation of size s may be, over s. */
static double
factor_bound(const Row *r)
{
	double f = 1.0;

	if (r->use_template || r->skew_tasks > 0)
		f = r->arithmetic == GS_TEMPLATE_CODE ? MAX(r->template_change, 1.0)
						      : 1.0 + r->template_change;
	if (r->skew_tasks > 0)
		f *= MAX(r->skew_factor, 1.0);
	return f;
}

typedef struct {
	const GsWorkload *w;
	const GsThreadSpec *t;     /* the task's thread */
	const GsThreadSpec *shuffle;
	GHashTable *live;          /* "owner/buffer" -> size */
	GHashTable *ever;          /* "owner/buffer" allocated once */
	gint64 held, peak;
	guint allocs, frees, retries, waits;
	GsTime busy;
	GArray *names;             /* char*: the task's own real buffers, in allocation order */
} Walk;

static char *
key_of(const GsThreadSpec *owner, const char *buf)
{
	return g_strdup_printf("%s/%s", owner->name, buf);
}

static void
walk_alloc(Walk *k, const GsThreadSpec *owner, const GsOp *op)
{
	const char *name = owner->buffers->pdata[op->alloc.buf];
	char *key = key_of(owner, name);

	ck_assert_msg(!g_hash_table_contains(k->ever, key), "%s allocated twice", key);
	g_hash_table_add(k->ever, g_strdup(key));
	g_hash_table_insert(k->live, key, g_memdup2(&op->alloc.size, sizeof(gint64)));
	if (op->alloc.size == 0)
		return; /* a hand-off */
	ck_assert_int_ge(op->alloc.size, 1);
	k->held += op->alloc.size;
	k->peak = MAX(k->peak, k->held);
	k->allocs++;
}

static void
walk_free(Walk *k, const GsThreadSpec *owner, guint buf)
{
	g_autofree char *key = key_of(owner, owner->buffers->pdata[buf]);
	gint64 *size = g_hash_table_lookup(k->live, key);

	ck_assert_msg(size != NULL, "%s freed while not live", key);
	if (*size > 0) {
		k->held -= *size;
		k->frees++;
	}
	g_hash_table_remove(k->live, key);
}

/* Runs one op of the task (@t's), or of its shuffle thread's, on the walk's books. */
static void
walk_ops(Walk *k, const GsThreadSpec *t, const GArray *ops, guint depth)
{
	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if (op->kind == GS_OP_ALLOC) {
			walk_alloc(k, t, op);
			if (t == k->t && op->alloc.size > 0)
				g_array_append_val(k->names, t->buffers->pdata[op->alloc.buf]);
		} else if (op->kind == GS_OP_FREE) {
			const GsThreadSpec *owner = t;
			const char *name;

			if (op->free.thread != NULL)
				owner = gs_workload_thread(k->w, op->free.thread, NULL);
			ck_assert_uint_eq(op->free.bufs.len, 1);
			if (owner == k->t && t != k->t)
				continue; /* the shuffle thread takes the submission */
			name = owner->buffers->pdata[gs_names_data(&op->free.bufs)[0]];
			/* the hand-off back: the task waits until allocation 0 is made */
			if (owner == k->shuffle && t == k->t && g_str_has_suffix(name, ".ready"))
				k->waits++;
			walk_free(k, owner, gs_names_data(&op->free.bufs)[0]);
		} else if (op->kind == GS_OP_COMPUTE) {
			k->busy += op->compute.time;
		} else if (op->kind == GS_OP_RETRY) {
			ck_assert_uint_eq(depth, 0);
			ck_assert_uint_eq(op->retry.max_splits, 16);
			ck_assert_int_eq(op->retry.split, t == k->t ? GS_SPLIT_HALVES : GS_SPLIT_NONE);
			k->retries++;
			walk_ops(k, t, op->retry.ops, depth + 1);
		} else if (op->kind != GS_OP_POOL && op->kind != GS_OP_WAIT_ON_POOL) {
			ck_abort_msg("unexpected op %s", gs_op_kind_name(op->kind));
		}
	}
}

/*
 * The shuffle thread's ops for task @index, [*from, *to): from its free of
 * the task's submission to its 0-byte allocation after done_for.
 */
static const GArray *
shuffle_part(const GsThreadSpec *shuffle, guint index, guint *from, guint *to)
{
	const GArray *ops = shuffle->ops;

	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if (op->kind == GS_OP_POOL && !op->pool.done &&
		    g_array_index(op->pool.tasks, guint, 0) == index) {
			ck_assert_uint_ge(i, 1);
			*from = i - 1;
			ck_assert_int_eq(g_array_index(ops, GsOp, *from).kind, GS_OP_FREE);
			for (guint j = i + 1; j + 1 < ops->len; j++) {
				op = &g_array_index(ops, GsOp, j);
				if (op->kind == GS_OP_POOL && op->pool.done) {
					ck_assert_uint_eq(g_array_index(op->pool.tasks, guint, 0),
							  index);
					*to = j + 2;
					ck_assert_int_eq(g_array_index(ops, GsOp, j + 1).kind,
							 GS_OP_ALLOC);
					return ops;
				}
			}
			break;
		}
	}
	ck_abort_msg("shuffle thread %s never serves task %u", shuffle->name, index);
	return NULL;
}

/* The shuffle thread task @index hands allocation 0 to, or NULL. */
static const GsThreadSpec *
shuffle_of(const GsWorkload *w, guint index)
{
	const GsTaskSpec *task = w->tasks->pdata[index];
	const GsThreadSpec *t = task->threads->pdata[0];
	const GArray *ops = t->ops;

	if (ops->len > 0 && g_array_index(ops, GsOp, 0).kind == GS_OP_RETRY)
		ops = g_array_index(ops, GsOp, 0).retry.ops;
	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if (op->kind == GS_OP_FREE && op->free.thread != NULL)
			return gs_workload_thread(w, op->free.thread, NULL);
	}
	return NULL;
}

static void
check_task(const GsWorkload *w, const Row *r, guint index)
{
	const GsTaskSpec *task = w->tasks->pdata[index];
	const GsThreadSpec *t;
	Walk k = {.w = w};
	g_autofree char *name = NULL;
	double bound = factor_bound(r);

	ck_assert_uint_eq(task->threads->len, 1);
	t = task->threads->pdata[0];
	name = g_strdup_printf("%s.0", task->id);
	ck_assert_str_eq(t->name, name);
	ck_assert_int_eq(t->on_oom, GS_ON_OOM_FAIL);
	ck_assert(!t->shuffle);
	k.t = t;
	k.live = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	k.ever = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	k.names = g_array_new(FALSE, FALSE, sizeof(char *));
	if (r->shuffle_threads > 0) {
		guint from = 0, to = 0;
		const GArray *ops;
		GArray *part = g_array_new(FALSE, FALSE, sizeof(GsOp));

		k.shuffle = w->pool_threads->pdata[index % r->shuffle_threads];
		ck_assert_ptr_eq(shuffle_of(w, index), k.shuffle);
		ck_assert(k.shuffle->shuffle);
		ck_assert_int_eq(k.shuffle->on_oom, GS_ON_OOM_CONTINUE);
		/* Allocation 0 comes first, on the shuffle thread: walk its part, then the task. */
		ops = shuffle_part(k.shuffle, index, &from, &to);
		g_array_append_vals(part, &g_array_index(ops, GsOp, from), to - from);
		walk_ops(&k, k.shuffle, part, 0);
		g_array_unref(part);
		ck_assert_uint_eq(k.allocs, 1);
		ck_assert_uint_eq(k.retries, r->retry_blocks ? 1 : 0);
		k.retries = 0;
	}
	walk_ops(&k, t, t->ops, 0);

	/* One retry block holds the whole task, or none is there. */
	ck_assert_uint_eq(t->ops->len, r->retry_blocks ? 1 : t->ops->len);
	ck_assert_uint_eq(k.retries, r->retry_blocks ? 1 : 0);
	/* 1..max_allocs allocations, every one freed once; nothing is left. */
	ck_assert_uint_ge(k.allocs, 1);
	ck_assert_uint_le(k.allocs, r->max_allocs);
	ck_assert_uint_eq(k.frees, k.allocs);
	ck_assert_uint_eq(g_hash_table_size(k.live), 0);
	ck_assert_int_eq(k.held, 0);
	/* The task's own buffers are b<k> in allocation order; b0 is the shuffle thread's. */
	for (guint i = 0; i < k.names->len; i++) {
		g_autofree char *want = g_strdup_printf("b%u", i + (k.shuffle != NULL));

		ck_assert_str_eq(g_array_index(k.names, char *, i), want);
	}
	ck_assert_uint_eq(k.waits, k.shuffle != NULL ? 1 : 0);
	/* At most task_max held, but for what templates and skew add. */
	ck_assert_int_le(k.peak, gs_bytes_scaled(r->task_max, bound) + (gint64) k.allocs);
	if (bound == 1.0)
		ck_assert_int_le(k.peak, r->task_max);
	/* Busy time below max_compute, none without it. */
	if (r->max_compute == 0)
		ck_assert_int_eq(k.busy, 0);
	else
		ck_assert_int_lt(k.busy, r->max_compute);
	g_hash_table_unref(k.live);
	g_hash_table_unref(k.ever);
	g_array_unref(k.names);
}

START_TEST(test_properties)
{
	const Row *r = &rows[_i];
	g_autoptr(GsWorkload) w = workload_for(r);

	gs_generate_tasks(w);
	ck_assert_ptr_null(w->maker);
	ck_assert_uint_eq(w->tasks->len, r->tasks);
	ck_assert_uint_eq(w->pool_threads->len, r->shuffle_threads);
	for (guint i = 0; i < r->tasks; i++) {
		g_autofree char *id = g_strdup_printf("g%u", i);

		ck_assert_str_eq(((GsTaskSpec *) w->tasks->pdata[i])->id, id);
		check_task(w, r, i);
	}
	for (guint k = 0; k < r->shuffle_threads; k++) {
		const GsThreadSpec *t = w->pool_threads->pdata[k];
		g_autofree char *name = g_strdup_printf("shuffle%u", k);
		guint served = 0;

		ck_assert_str_eq(t->name, name);
		/* Its tasks, in order: k, k + shuffle_threads, ... */
		for (guint i = 0; i < t->ops->len; i++) {
			const GsOp *op = &g_array_index(t->ops, GsOp, i);

			if (op->kind == GS_OP_POOL && !op->pool.done)
				ck_assert_uint_eq(g_array_index(op->pool.tasks, guint, 0),
						  k + served++ * r->shuffle_threads);
		}
		ck_assert_uint_eq(served, r->tasks / r->shuffle_threads +
						  (k < r->tasks % r->shuffle_threads));
	}
}
END_TEST

/* ---- templates and skew ---- */

/* Each allocation's size of task @index, in op order, the shuffle thread's first. */
static GArray *
task_sizes(const GsWorkload *w, guint index)
{
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
	const GsTaskSpec *task = w->tasks->pdata[index];
	const GsThreadSpec *t = task->threads->pdata[0];
	g_autoptr(GPtrArray) stack = g_ptr_array_new();

	g_ptr_array_add(stack, t->ops);
	while (stack->len > 0) {
		const GArray *ops = g_ptr_array_steal_index(stack, 0);

		for (guint i = 0; i < ops->len; i++) {
			const GsOp *op = &g_array_index(ops, GsOp, i);

			if (op->kind == GS_OP_RETRY)
				g_ptr_array_insert(stack, 0, op->retry.ops);
			else if (op->kind == GS_OP_ALLOC && op->alloc.size > 0)
				g_array_append_val(sizes, op->alloc.size);
		}
	}
	return sizes;
}

/* Task @index's dump with its id replaced by "T", to compare tasks' shapes. */
static char *
task_shape(const GsWorkload *w, guint index, gboolean sizes)
{
	const GsTaskSpec *task = w->tasks->pdata[index];
	GString *s = g_string_new(NULL);
	g_autofree char *raw = NULL;
	g_auto(GStrv) lines = NULL;
	GString *out = g_string_new(NULL);
	g_autofree char *dotted = g_strdup_printf("%s.", task->id);
	g_auto(GStrv) pieces = NULL;

	dump_thread(s, w, task->threads->pdata[0]);
	raw = g_string_free(s, FALSE);
	lines = g_strsplit(raw, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		char *line = lines[i];
		char *alloc = strstr(line, "alloc ");

		if (alloc != NULL && !sizes) {
			char *space = strrchr(line, ' ');

			*space = '\0';
		}
		g_string_append_printf(out, "%s\n", line);
	}
	/* "<id>." names the task's thread and its buffers on the shuffle thread */
	pieces = g_strsplit(out->str, dotted, -1);
	g_string_free(out, TRUE);
	return g_strjoinv("T.", pieces);
}

/* Task 0 is the template itself: the same as task 0 drawn without one. */
START_TEST(test_template_is_task_zero)
{
	Row plain = {21, 6, 50 * MIB, 12, 3 * MS, TRUE, 0, FALSE, 0.3, 0, 0, 2.0};
	Row templated = plain;
	g_autoptr(GsWorkload) a = workload_for(&plain);
	g_autoptr(GsWorkload) b = NULL;
	g_autofree char *sa = NULL, *sb = NULL;

	templated.use_template = TRUE;
	b = workload_for(&templated);
	gs_generate_tasks(a);
	gs_generate_tasks(b);
	sa = task_shape(a, 0, TRUE);
	sb = task_shape(b, 0, TRUE);
	ck_assert_str_eq(sa, sb);
}
END_TEST

typedef struct {
	double change;
	GsTemplateArithmetic arithmetic;
} TemplateRow;

static const TemplateRow template_rows[] = {
	{0.0, GS_TEMPLATE_INTENDED},
	{0.05, GS_TEMPLATE_INTENDED},
	{0.5, GS_TEMPLATE_INTENDED},
	{0.0, GS_TEMPLATE_CODE},
	{0.05, GS_TEMPLATE_CODE},
	{1.5, GS_TEMPLATE_CODE},
};

/* The sizes of every allocation (allocation 0 on the shuffle thread included) of task @index. */
static GArray *
all_sizes(const GsWorkload *w, guint index)
{
	GArray *sizes = task_sizes(w, index);
	const GsThreadSpec *s = shuffle_of(w, index);

	if (s != NULL) {
		guint from = 0, to = 0;
		const GArray *ops = shuffle_part(s, index, &from, &to);

		for (guint i = from; i < to; i++) {
			const GsOp *op = &g_array_index(ops, GsOp, i);

			if (op->kind == GS_OP_RETRY)
				op = &g_array_index(op->retry.ops, GsOp, 0);
			if (op->kind == GS_OP_ALLOC && op->alloc.size > 0) {
				g_array_prepend_val(sizes, op->alloc.size);
				break;
			}
		}
	}
	return sizes;
}

/*
 * Every later task is the template with each allocation varied on its own:
 * the same ops, frees and busy times, each size within the rule's bounds.
 */
START_TEST(test_template_bounds)
{
	const TemplateRow *t = &template_rows[_i];
	Row r = {31, 8, 200 * MIB, 25, 4 * MS, TRUE, 1, TRUE, t->change, t->arithmetic, 0, 2.0};
	g_autoptr(GsWorkload) w = workload_for(&r);
	g_autoptr(GArray) base = NULL;
	guint ones = 0, n = 0;

	g_autofree char *shape = NULL;

	gs_generate_tasks(w);
	base = all_sizes(w, 0);
	shape = task_shape(w, 0, FALSE);
	for (guint i = 1; i < r.tasks; i++) {
		g_autoptr(GArray) sizes = all_sizes(w, i);
		g_autofree char *other = task_shape(w, i, FALSE);

		ck_assert_str_eq(other, shape);
		ck_assert_uint_eq(sizes->len, base->len);
		for (guint j = 0; j < sizes->len; j++) {
			gint64 s = g_array_index(base, gint64, j);
			gint64 v = g_array_index(sizes, gint64, j);
			double lo = t->arithmetic == GS_TEMPLATE_CODE ? -t->change : 1 - t->change;
			double hi = t->arithmetic == GS_TEMPLATE_CODE ? t->change : 1 + t->change;

			ck_assert_int_ge(v, MAX(gs_bytes_scaled(s, lo), 1));
			ck_assert_int_le(v, MAX(gs_bytes_scaled(s, hi), 1));
			if (t->change == 0.0 && t->arithmetic == GS_TEMPLATE_INTENDED)
				ck_assert_int_eq(v, s);
			ones += v == 1;
			n++;
		}
	}
	if (t->arithmetic == GS_TEMPLATE_CODE) {
		/* The tool's arithmetic: 1 byte whenever the draw is negative, about half. */
		ck_assert_uint_ge(ones, t->change == 0.0 ? n : n / 4);
	}
}
END_TEST

typedef struct {
	guint tasks, skew_tasks;
	double factor;
	guint skewed; /* tasks that differ from the unskewed set */
} SkewSetRow;

static const SkewSetRow skew_set_rows[] = {
	{12, 1, 2.0, 1},  /* --skewed */
	{12, 3, 3.0, 3},
	{4, 9, 2.0, 4},   /* more than there are: all */
	{1, 1, 2.0, 1},
};

/*
 * Skew picks its tasks after every other draw: against the same seed
 * unskewed (but templated), exactly that many tasks differ, each by
 * floor(s x factor) in every allocation, and the others not at all.
 */
START_TEST(test_skew_picks_tasks)
{
	const SkewSetRow *k = &skew_set_rows[_i];
	Row plain = {41, k->tasks, 100 * MIB, 10, 2 * MS, TRUE, 2, TRUE, 0.05, 0, 0, k->factor};
	Row skewed = plain;
	g_autoptr(GsWorkload) a = workload_for(&plain);
	g_autoptr(GsWorkload) b = NULL;
	guint differ = 0;

	skewed.skew_tasks = k->skew_tasks;
	b = workload_for(&skewed);
	gs_generate_tasks(a);
	gs_generate_tasks(b);
	for (guint i = 0; i < k->tasks; i++) {
		g_autoptr(GArray) sa = all_sizes(a, i);
		g_autoptr(GArray) sb = all_sizes(b, i);
		g_autofree char *shape_a = task_shape(a, i, FALSE);
		g_autofree char *shape_b = task_shape(b, i, FALSE);
		gboolean same = memcmp(sa->data, sb->data, sa->len * sizeof(gint64)) == 0;

		ck_assert_str_eq(shape_a, shape_b);
		ck_assert_uint_eq(sa->len, sb->len);
		differ += !same;
		for (guint j = 0; j < sa->len && !same; j++)
			ck_assert_int_eq(g_array_index(sb, gint64, j),
					 gs_montecarlo_skewed_size(g_array_index(sa, gint64, j),
								   k->factor));
	}
	ck_assert_uint_eq(differ, k->skewed);
}
END_TEST

/* ---- the first draws, replayed ---- */

static const guint64 draw_seeds[] = {1, 2, 3, 99, G_GUINT64_CONSTANT(1) << 40};

/* The compute times of @ops in order, retry blocks entered; each after an allocation. */
static void
busy_times(const GArray *ops, GArray *out)
{
	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if (op->kind == GS_OP_RETRY)
			busy_times(op->retry.ops, out);
		if (op->kind == GS_OP_COMPUTE) {
			ck_assert_uint_ge(i, 1);
			ck_assert_int_eq(g_array_index(ops, GsOp, i - 1).kind, GS_OP_ALLOC);
			g_array_append_val(out, op->compute.time);
		}
	}
}

/*
 * Rule 2a to 2c and 2e against the seed's own first draws: task 0's total
 * busy time T (two 32-bit draws modulo max_compute), its allocation count n
 * (1 + a draw below max_allocs) and n weights, whose shares of T follow its
 * allocations in order (on the shuffle thread for allocation 0) and sum to T.
 */
START_TEST(test_first_draws)
{
	guint64 seed = draw_seeds[_i / 2];
	gboolean shuffled = _i % 2;
	Row r = {seed, 2, 300 * MIB, 50, 100 * MS, TRUE, shuffled, FALSE, 0.05, 0, 0, 2.0};
	g_autoptr(GsWorkload) w = workload_for(&r);
	g_autoptr(GRand) rand = gs_generate_rand_new(seed);
	g_autoptr(GArray) busy = g_array_new(FALSE, FALSE, sizeof(GsTime));
	g_autoptr(GArray) want = g_array_new(FALSE, FALSE, sizeof(GsTime));
	g_autoptr(GArray) sizes = NULL;
	guint64 hi = g_rand_int(rand);
	guint64 lo = g_rand_int(rand);
	GsTime total = (GsTime) (((hi << 32) | lo) % (guint64) r.max_compute);
	guint n = 1 + (guint) g_rand_int_range(rand, 0, (gint32) r.max_allocs);
	g_autofree double *weights = g_new(double, n);
	g_autofree GsTime *shares = g_new(GsTime, n);
	GsTime sum = 0;

	for (guint k = 0; k < n; k++)
		weights[k] = 0.00001 + g_rand_double(rand);
	gs_montecarlo_busy_shares(total, weights, n, shares);
	for (guint k = 0; k < n; k++) {
		if (shares[k] > 0)
			g_array_append_val(want, shares[k]);
	}
	gs_generate_tasks(w);
	if (shuffled) {
		guint from = 0, to = 0;
		const GArray *ops = shuffle_part(w->pool_threads->pdata[0], 0, &from, &to);
		g_autoptr(GArray) part = g_array_new(FALSE, FALSE, sizeof(GsOp));

		g_array_append_vals(part, &g_array_index(ops, GsOp, from), to - from);
		busy_times(part, busy);
	}
	busy_times(((GsThreadSpec *) ((GsTaskSpec *) w->tasks->pdata[0])->threads->pdata[0])->ops,
		   busy);
	ck_assert_uint_eq(busy->len, want->len);
	for (guint k = 0; k < busy->len; k++) {
		ck_assert_int_eq(g_array_index(busy, GsTime, k), g_array_index(want, GsTime, k));
		sum += g_array_index(busy, GsTime, k);
	}
	ck_assert_int_eq(sum, total);
	sizes = all_sizes(w, 0);
	ck_assert_uint_eq(sizes->len, n);
}
END_TEST

/* ---- determinism ---- */

START_TEST(test_same_seed_same_tasks)
{
	const Row *r = &rows[_i];
	g_autofree char *a = generated_dump(r);
	g_autofree char *b = generated_dump(r);

	ck_assert_str_eq(a, b);
}
END_TEST

START_TEST(test_other_seed_other_tasks)
{
	Row r = rows[_i];
	g_autofree char *a = generated_dump(&r);
	g_autofree char *b = NULL;

	r.seed ^= 0x5a5a;
	b = generated_dump(&r);
	ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(test_high_seed_bits_count)
{
	Row r = rows[0];
	g_autofree char *a = NULL, *b = NULL;

	r.seed = 7;
	a = generated_dump(&r);
	r.seed = 7 + (G_GUINT64_CONSTANT(1) << 32);
	b = generated_dump(&r);
	ck_assert_str_ne(a, b);
}
END_TEST

/* A second call appends a second set, under other names, drawn from the same seed. */
START_TEST(test_second_call)
{
	Row r = {3, 3, 10 * MIB, 4, 1 * MS, TRUE, 2, FALSE, 0.05, 0, 0, 2.0};
	g_autoptr(GsWorkload) w = workload_for(&r);

	gs_generate_tasks(w);
	gs_generate_tasks(w);
	ck_assert_uint_eq(w->tasks->len, 2 * r.tasks);
	ck_assert_uint_eq(w->pool_threads->len, 2 * r.shuffle_threads);
	ck_assert_str_eq(((GsTaskSpec *) w->tasks->pdata[r.tasks])->id, "gen0");
	ck_assert_str_eq(((GsThreadSpec *) w->pool_threads->pdata[r.shuffle_threads])->name,
			 "genshuffle0");
	for (guint i = 0; i < r.tasks; i++) {
		g_autoptr(GArray) a = all_sizes(w, i);
		g_autoptr(GArray) b = all_sizes(w, r.tasks + i);

		ck_assert_uint_eq(a->len, b->len);
		ck_assert(memcmp(a->data, b->data, a->len * sizeof(gint64)) == 0);
	}
	/* The second set's hand-offs name its own threads. */
	ck_assert_str_eq(((GsThreadSpec *) ((GsTaskSpec *) w->tasks->pdata[r.tasks])->threads
				  ->pdata[0])->name, "gen0.0");
}
END_TEST

/* The default model is untouched: no model key, the maker it always had. */
START_TEST(test_gpusim_model_keeps_its_maker)
{
	Row r = rows[0];
	g_autoptr(GsWorkload) w = workload_for(&r);

	w->generate.model = GS_GENERATE_GPUSIM;
	gs_generate_tasks(w);
	ck_assert_ptr_nonnull(w->maker);
}
END_TEST

/* ---- runs in the simulator ---- */

typedef struct {
	Row row;
	gint64 capacity; /* 0: room for every task's task_max (times the bound) at once */
	guint slots;
	guint attempts;
	gboolean room;   /* then nothing may retry, split or fail */
} RunRow;

static const RunRow run_rows[] = {
	{{1, 12, 300 * MIB, 50, 10 * MS, TRUE, 0, TRUE, 0.05, 0, 1, 2.0}, 0, 4, 1, TRUE},
	{{2, 8, 64 * MIB, 20, 2 * MS, TRUE, 2, FALSE, 0.05, 0, 0, 2.0}, 0, 4, 1, TRUE},
	{{3, 6, 64 * MIB, 10, 1 * MS, FALSE, 3, FALSE, 0.05, 0, 0, 2.0}, 0, 0, 1, TRUE},
	/* tight: retries, splits, perhaps failures and re-attempts */
	{{4, 12, 300 * MIB, 50, 10 * MS, TRUE, 0, TRUE, 0.05, 0, 1, 2.0}, 600 * MIB, 4, 4, FALSE},
	{{5, 12, 300 * MIB, 50, 10 * MS, TRUE, 2, TRUE, 0.05, 0, 1, 2.0}, 600 * MIB, 4, 4, FALSE},
	{{6, 8, 300 * MIB, 30, 10 * MS, TRUE, 3, FALSE, 0.05, 0, 0, 2.0}, 400 * MIB, 8, 4, FALSE},
};

START_TEST(test_run)
{
	const RunRow *rr = &run_rows[_i];
	const Row *r = &rr->row;
	g_autoptr(GsWorkload) w = workload_for(r);
	g_autoptr(GsResult) a = NULL;
	g_autoptr(GsResult) b = NULL;
	guint slots = rr->slots > 0 ? rr->slots : r->tasks;

	w->gpu.capacity = rr->capacity > 0 ? rr->capacity
					   : gs_bytes_scaled(r->task_max, factor_bound(r)) * slots +
						     16 * MIB;
	w->executor_slots = rr->slots;
	w->policy.task_attempts = rr->attempts;
	gs_generate_tasks(w);
	a = gs_sim_run(w, NULL);
	b = gs_sim_run(w, NULL);
	ck_assert_int_eq(a->makespan_ns, b->makespan_ns);
	ck_assert_uint_eq(a->totals.retries, b->totals.retries);
	ck_assert_int_ne(a->outcome, GS_OUTCOME_DEADLOCK);
	ck_assert_int_ne(a->outcome, GS_OUTCOME_TIMEOUT);
	ck_assert_uint_eq(a->totals.tasks, r->tasks);
	ck_assert_int_eq(a->totals.leaked_bytes, 0);
	ck_assert_int_eq(a->tiers[GS_TIER_GPU].peak_used <= w->gpu.capacity, TRUE);
	if (rr->room) {
		ck_assert_int_eq(a->outcome, GS_OUTCOME_COMPLETED);
		ck_assert_uint_eq(a->totals.tasks_completed, r->tasks);
		ck_assert_uint_eq(a->totals.retries, 0);
		ck_assert_uint_eq(a->totals.splits, 0);
	} else {
		ck_assert_uint_gt(a->totals.retries, 0);
	}
}
END_TEST

Suite *gs_test_suite_montecarlo(void);

Suite *
gs_test_suite_montecarlo(void)
{
	Suite *s = suite_create("montecarlo");
	TCase *tc;

	tc = tcase_create("arithmetic");
	tcase_add_loop_test(tc, test_busy_shares, 0, G_N_ELEMENTS(shares_rows));
	tcase_add_loop_test(tc, test_varied_size, 0, G_N_ELEMENTS(vary_rows));
	tcase_add_loop_test(tc, test_skewed_size, 0, G_N_ELEMENTS(skew_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("shape");
	tcase_add_loop_test(tc, test_shape, 0, G_N_ELEMENTS(shape_rows));
	tcase_add_test(tc, test_given_away);
	tcase_add_test(tc, test_one_byte_alternates);
	suite_add_tcase(s, tc);

	tc = tcase_create("properties");
	tcase_add_loop_test(tc, test_properties, 0, G_N_ELEMENTS(rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("templates");
	tcase_add_test(tc, test_template_is_task_zero);
	tcase_add_loop_test(tc, test_template_bounds, 0, G_N_ELEMENTS(template_rows));
	tcase_add_loop_test(tc, test_skew_picks_tasks, 0, G_N_ELEMENTS(skew_set_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("draws");
	tcase_add_loop_test(tc, test_first_draws, 0, 2 * G_N_ELEMENTS(draw_seeds));
	suite_add_tcase(s, tc);

	tc = tcase_create("determinism");
	tcase_add_loop_test(tc, test_same_seed_same_tasks, 0, G_N_ELEMENTS(rows));
	tcase_add_loop_test(tc, test_other_seed_other_tasks, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_high_seed_bits_count);
	tcase_add_test(tc, test_second_call);
	tcase_add_test(tc, test_gpusim_model_keeps_its_maker);
	suite_add_tcase(s, tc);

	tc = tcase_create("runs");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_run, 0, G_N_ELEMENTS(run_rows));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_montecarlo());
}
