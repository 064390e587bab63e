/*
 * Unit tests of src/scenario/generate.h: determinism (a canonical text dump of every
 * generated op, compared across runs and seeds), counts and names, and the
 * properties every generated thread must have, checked by walking its ops
 * (retry and repeat blocks included): it frees all it allocates, holds at most
 * its share of task_max (scaled for skewed and templated tasks), makes at most
 * max_allocs allocations, and its task computes at most max_compute in total;
 * retry blocks appear iff retry_blocks. Also templates, skew, shuffle threads,
 * name clashes, and replaying every generated thread through the interpreter.
 */
#include "config.h"

#include <string.h>

#include "testlib.h"
#include "scenario/generate.h"

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define MS ((GsTime) 1000000)

/* ---- the parameter table ---- */

typedef struct {
	guint64 seed;
	guint tasks, threads_per_task;
	gint64 task_max;
	guint max_allocs;
	GsTime max_compute;
	gboolean retry_blocks;
	guint skew_tasks;
	double skew_factor, jitter;
	guint shuffle_threads;
} Row;

static const Row rows[] = {
	/* SPEC §3.7's example */
	{1, 12, 1, 300 * MIB, 50, 100 * MS, TRUE, 1, 2.0, 0.05, 0},
	{1, 12, 1, 300 * MIB, 50, 100 * MS, FALSE, 0, 1.0, 0.0, 0},
	{7, 4, 3, 64 * MIB, 20, 10 * MS, TRUE, 0, 1.0, 0.0, 2},
	/* one byte of budget: every size is 1 */
	{42, 3, 1, 1, 5, 1 * MS, FALSE, 0, 1.0, 0.0, 0},
	/* fewer bytes than threads: some threads have no budget; no compute */
	{3, 5, 4, 3, 10, 0, TRUE, 0, 1.0, 0.0, 0},
	{9, 6, 2, 1 * GIB, 1, 5 * MS, FALSE, 2, 3.0, 0.2, 3},
	/* every task skewed, by a factor below 1 */
	{11, 8, 1, 100 * MIB, 200, 1000 * MS, TRUE, 8, 0.5, 0.1, 5},
	/* no allocations; more shuffle threads than tasks */
	{13, 3, 2, 10 * MIB, 0, 1 * MS, TRUE, 0, 1.0, 0.0, 4},
	/* no tasks, shuffle threads with nothing to serve */
	{5, 0, 1, 10 * MIB, 10, 1 * MS, TRUE, 0, 1.0, 0.0, 2},
	/* a seed above 2^32 and sizes above 4 GiB */
	{G_MAXUINT64, 10, 1, 8 * GIB, 50, 100 * MS, TRUE, 1, 2.0, 0.05, 1},
	/* templated without jitter; skew over more tasks than exist is clamped */
	{2, 20, 2, 2 * GIB, 30, 50 * MS, FALSE, 3, 1.5, 0.0, 0},
	{17, 2, 1, 512 * MIB, 50, 20 * MS, TRUE, 5, 4.0, 0.0, 1},
	/* threads_per_task 0 means one */
	{23, 2, 0, 1 * MIB, 8, 2 * MS, FALSE, 0, 1.0, 0.0, 0},
	/* a skew past any size: sizes stop at what a workload may name */
	{29, 2, 1, 1 * GIB, 10, 1 * MS, FALSE, 2, 1e30, 0.0, 0},
};

static GsWorkload *
workload_for(const Row *r)
{
	GsWorkload *w = gs_workload_new();

	w->seed = r->seed;
	w->generate = (GsGenerate){
		.enabled = TRUE,
		.tasks = r->tasks,
		.threads_per_task = r->threads_per_task,
		.task_max = r->task_max,
		.max_allocs = r->max_allocs,
		.max_compute = r->max_compute,
		.retry_blocks = r->retry_blocks,
		.skew_tasks = r->skew_tasks,
		.skew_factor = r->skew_factor,
		.jitter = r->jitter,
		.shuffle_threads = r->shuffle_threads,
	};
	return w;
}

static guint
threads_of(const Row *r)
{
	return MAX(r->threads_per_task, 1);
}

/* ---- a canonical dump ---- */

static void
dump_indices(GString *s, const char *what, const guint *indices, guint n, const GsThreadSpec *t)
{
	g_string_append_printf(s, " %s[", what);
	for (guint i = 0; i < n; i++) {
		guint index = indices[i];

		if (t != NULL)
			g_string_append_printf(s, "%s%s", i ? "," : "",
					       (const char *) t->buffers->pdata[index]);
		else
			g_string_append_printf(s, "%s%u", i ? "," : "", index);
	}
	g_string_append_c(s, ']');
}

static void
dump_ops(GString *s, const GsThreadSpec *t, const GArray *ops, guint depth)
{
	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		g_string_append_printf(s, "%*s%s @%u:%u", (int) (2 * depth + 4), "",
				       gs_op_kind_name(op->kind), op->line, op->column);
		switch (op->kind) {
		case GS_OP_ALLOC:
			g_string_append_printf(s, " %s %" G_GINT64_FORMAT " kind=%d blocking=%d "
					       "spillable=%d res=%d dev=%u",
					       (const char *) t->buffers->pdata[op->alloc.buf],
					       op->alloc.size, op->alloc.kind, op->alloc.blocking,
					       op->alloc.spillable, op->alloc.reservation,
					       op->alloc.device);
			break;
		case GS_OP_FREE:
			dump_indices(s, "bufs", gs_names_data(&op->free.bufs), op->free.bufs.len, t);
			break;
		case GS_OP_COMPUTE:
			g_string_append_printf(s, " %" G_GINT64_FORMAT " stream=%d", op->compute.time,
					       op->compute.stream);
			dump_indices(s, "uses", gs_names_data(&op->compute.uses), op->compute.uses.len, t);
			break;
		case GS_OP_RETRY:
			g_string_append_printf(s, " split=%d max=%u", op->retry.split,
					       op->retry.max_splits);
			dump_indices(s, "input", gs_names_data(&op->retry.input), op->retry.input.len, t);
			g_string_append_c(s, '\n');
			dump_ops(s, t, op->retry.ops, depth + 1);
			continue;
		case GS_OP_REPEAT:
			g_string_append_printf(s, " x%u\n", op->repeat.times);
			dump_ops(s, t, op->repeat.ops, depth + 1);
			continue;
		case GS_OP_POOL:
			g_string_append_printf(s, " done=%d", op->pool.done);
			dump_indices(s, "tasks", (const guint *) op->pool.tasks->data, op->pool.tasks->len,
				     NULL);
			break;
		case GS_OP_SYNC:
		case GS_OP_SLEEP:
		case GS_OP_UNTIL:
		case GS_OP_SPILLABLE:
		case GS_OP_UNSPILLABLE:
		case GS_OP_BLOCK_UNTIL_READY:
		case GS_OP_RESERVE:
		case GS_OP_RELEASE:
		case GS_OP_WAIT_ON_POOL:
		case GS_OP_ASSOCIATE:
		case GS_OP_DISSOCIATE:
		case GS_OP_INJECT:
		case GS_OP_TASK_DONE:
		case GS_N_OP_KINDS:
			g_string_append(s, " (unexpected)");
			break;
		}
		g_string_append_c(s, '\n');
	}
}

static void
dump_thread(GString *s, const GsThreadSpec *t)
{
	g_string_append_printf(s, "  thread %s on_oom=%d shuffle=%d buffers=%u streams=%u res=%u\n",
			       t->name, t->on_oom, t->shuffle, t->buffers->len, t->streams->len,
			       t->reservations->len);
	for (guint i = 0; i < t->buffers->len; i++)
		g_string_append_printf(s, "   buffer %u %s\n", i, (const char *) t->buffers->pdata[i]);
	dump_ops(s, t, t->ops, 0);
}

/* Generates @w's tasks and has every one made, in task order, as a run that starts them all would. */
static void
generate(GsWorkload *w)
{
	gs_generate_tasks(w);
	for (guint i = 0; i < w->tasks->len; i++)
		gs_workload_make_task(w, i);
}

static char *
dump(const GsWorkload *w)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		g_string_append_printf(s, "task %s start=%" G_GINT64_FORMAT " prio=%u repeat=%u "
				       "every=%" G_GINT64_FORMAT " @%u:%u\n",
				       task->id, task->start, task->priority, task->repeat,
				       task->every, task->line, task->column);
		for (guint k = 0; k < task->threads->len; k++)
			dump_thread(s, task->threads->pdata[k]);
	}
	for (guint i = 0; i < w->pool_threads->len; i++)
		dump_thread(s, w->pool_threads->pdata[i]);
	return g_string_free(s, FALSE);
}

static char *
generated_dump(const Row *r)
{
	g_autoptr(GsWorkload) w = workload_for(r);

	generate(w);
	return dump(w);
}

/* ---- walking a thread's ops ---- */

typedef struct {
	const GsThreadSpec *t;
	gboolean *live;
	gint64 *size;
	gint64 held, peak;
	guint allocs, frees, retries, repeats, pools;
	guint bad_retries;   /* not split halves / max_splits 16 */
	guint bad_frees;     /* of a buffer not live */
	guint bad_allocs;    /* of a buffer already live, or of size < 1 */
	guint alloc_not_first; /* task threads: an op-set not opened by its allocation */
	gint64 max_size;
	GsTime compute;
	GArray *sizes;       /* gint64, allocation sizes in order */
	GArray *work_for;    /* guint, task indices of pool work_for ops */
	GArray *done_for;
} Walk;

static void
walk_ops(Walk *k, const GArray *ops, gboolean in_retry)
{
	for (guint i = 0; i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		ck_assert_uint_eq(op->line, 0);
		ck_assert_uint_eq(op->column, 0);
		switch (op->kind) {
		case GS_OP_ALLOC:
			ck_assert_uint_lt(op->alloc.buf, k->t->buffers->len);
			ck_assert_int_eq(op->alloc.kind, GS_KIND_GPU);
			ck_assert_int_eq(op->alloc.reservation, -1);
			if (k->live[op->alloc.buf] || op->alloc.size < 1)
				k->bad_allocs++;
			k->live[op->alloc.buf] = TRUE;
			k->size[op->alloc.buf] = op->alloc.size;
			k->held += op->alloc.size;
			k->peak = MAX(k->peak, k->held);
			k->max_size = MAX(k->max_size, op->alloc.size);
			k->allocs++;
			g_array_append_val(k->sizes, op->alloc.size);
			if (in_retry && i != 0 && !k->t->shuffle)
				k->alloc_not_first++;
			break;
		case GS_OP_FREE:
			for (guint j = 0; j < op->free.bufs.len; j++) {
				guint b = gs_names_data(&op->free.bufs)[j];

				ck_assert_uint_lt(b, k->t->buffers->len);
				if (!k->live[b]) {
					k->bad_frees++;
					continue;
				}
				k->live[b] = FALSE;
				k->held -= k->size[b];
				k->frees++;
			}
			break;
		case GS_OP_COMPUTE:
			ck_assert_int_ge(op->compute.time, 0);
			k->compute += op->compute.time;
			break;
		case GS_OP_RETRY:
			k->retries++;
			if (op->retry.max_splits != 16 || op->retry.ops == NULL ||
			    (!k->t->shuffle && op->retry.split != GS_SPLIT_HALVES))
				k->bad_retries++;
			walk_ops(k, op->retry.ops, TRUE);
			break;
		case GS_OP_REPEAT:
			k->repeats++;
			for (guint n = 0; n < op->repeat.times; n++)
				walk_ops(k, op->repeat.ops, in_retry);
			break;
		case GS_OP_POOL:
			k->pools++;
			ck_assert_uint_eq(op->pool.tasks->len, 1);
			g_array_append_val(op->pool.done ? k->done_for : k->work_for,
					   g_array_index(op->pool.tasks, guint, 0));
			break;
		case GS_OP_SYNC:
		case GS_OP_SLEEP:
		case GS_OP_UNTIL:
		case GS_OP_SPILLABLE:
		case GS_OP_UNSPILLABLE:
		case GS_OP_BLOCK_UNTIL_READY:
		case GS_OP_RESERVE:
		case GS_OP_RELEASE:
		case GS_OP_WAIT_ON_POOL:
		case GS_OP_ASSOCIATE:
		case GS_OP_DISSOCIATE:
		case GS_OP_INJECT:
		case GS_OP_TASK_DONE:
		case GS_N_OP_KINDS:
			ck_abort_msg("thread %s: unexpected op %s", k->t->name,
				     gs_op_kind_name(op->kind));
			break;
		}
	}
}

static void
walk_init(Walk *k, const GsThreadSpec *t)
{
	*k = (Walk){.t = t};
	k->live = g_new0(gboolean, t->buffers->len + 1);
	k->size = g_new0(gint64, t->buffers->len + 1);
	k->sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
	k->work_for = g_array_new(FALSE, FALSE, sizeof(guint));
	k->done_for = g_array_new(FALSE, FALSE, sizeof(guint));
	walk_ops(k, t->ops, FALSE);
}

static void
walk_clear(Walk *k)
{
	g_free(k->live);
	g_free(k->size);
	g_array_unref(k->sizes);
	g_array_unref(k->work_for);
	g_array_unref(k->done_for);
}

/* Checks what must hold of every generated thread. */
static void
ck_thread_sound(const Walk *k)
{
	ck_assert_msg(k->held == 0, "thread %s ends holding %" G_GINT64_FORMAT " bytes",
		      k->t->name, k->held);
	ck_assert_uint_eq(k->frees, k->allocs);
	ck_assert_uint_eq(k->bad_frees, 0);
	ck_assert_uint_eq(k->bad_allocs, 0);
	ck_assert_uint_eq(k->bad_retries, 0);
	ck_assert_uint_eq(k->alloc_not_first, 0);
	ck_assert_uint_eq(k->repeats, 0);
	/* buffers are b0, b1, ... and each allocated exactly once */
	ck_assert_uint_eq(k->t->buffers->len, k->allocs);
	for (guint i = 0; i < k->t->buffers->len; i++) {
		g_autofree char *name = g_strdup_printf("b%u", i);

		ck_assert_str_eq(k->t->buffers->pdata[i], name);
	}
	ck_assert_uint_eq(k->t->streams->len, 0);
	ck_assert_uint_eq(k->t->reservations->len, 0);
}

/* The largest size factor a task of row @r may carry. */
static double
factor_bound(const Row *r, guint task)
{
	double f = 1.0;

	if (r->skew_tasks == 0)
		return f;
	f *= 1.0 + r->jitter;
	if (task < r->skew_tasks)
		f *= r->skew_factor;
	return f;
}

/* ---- properties, row by row ---- */

START_TEST(test_properties)
{
	const Row *r = &rows[_i];
	g_autoptr(GsWorkload) w = workload_for(r);
	guint n_threads = threads_of(r);

	generate(w);
	ck_assert_uint_eq(w->tasks->len, r->tasks);
	ck_assert_uint_eq(w->pool_threads->len, r->shuffle_threads);
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];
		g_autofree char *id = g_strdup_printf("g%u", i);
		gint64 task_peak = 0;
		guint task_allocs = 0;
		GsTime compute = 0;
		double bound;

		ck_assert_str_eq(task->id, id);
		ck_assert_int_eq(task->start, 0);
		ck_assert_uint_eq(task->priority, 0);
		ck_assert_uint_eq(task->repeat, 1);
		ck_assert_uint_eq(task->threads->len, n_threads);
		for (guint t = 0; t < task->threads->len; t++) {
			const GsThreadSpec *spec = task->threads->pdata[t];
			g_autofree char *name = g_strdup_printf("g%u.%u", i, t);
			gint64 share = r->task_max / n_threads + ((gint64) t < r->task_max % n_threads);
			Walk k;

			ck_assert_str_eq(spec->name, name);
			ck_assert(!spec->shuffle);
			ck_assert_int_eq(spec->on_oom, GS_ON_OOM_FAIL);
			walk_init(&k, spec);
			ck_thread_sound(&k);
			ck_assert_int_le(k.max_size, GS_MAX_BYTES);
			ck_assert_uint_le(k.allocs, r->max_allocs);
			ck_assert_uint_eq(k.pools, 0);
			/* one op-set per allocation, or none at all */
			ck_assert_uint_eq(k.retries, r->retry_blocks ? k.allocs : 0);
			if (r->retry_blocks)
				ck_assert_uint_eq(spec->ops->len, k.allocs);
			if (r->skew_tasks == 0)
				ck_assert_int_le(k.peak, share);
			if (share == 0)
				ck_assert_uint_eq(spec->ops->len, 0);
			else if (r->max_allocs > 0)
				ck_assert_uint_ge(k.allocs, 1);
			task_peak += k.peak;
			task_allocs += k.allocs;
			compute += k.compute;
			walk_clear(&k);
		}
		/* the threads' peaks added up bound what the task holds at once */
		bound = (double) r->task_max * factor_bound(r, i) + task_allocs;
		ck_assert_msg((double) task_peak <= bound,
			      "task %s holds up to %" G_GINT64_FORMAT " > %.0f", task->id,
			      task_peak, bound);
		ck_assert_int_le(compute, r->max_compute);
		ck_assert_int_ge(compute, 0);
	}
	for (guint s = 0; s < w->pool_threads->len; s++) {
		const GsThreadSpec *spec = w->pool_threads->pdata[s];
		g_autofree char *name = g_strdup_printf("shuffle%u", s);
		Walk k;

		ck_assert_str_eq(spec->name, name);
		ck_assert(spec->shuffle);
		walk_init(&k, spec);
		ck_thread_sound(&k);
		ck_assert_int_le(k.max_size, MAX(r->task_max / 16, 1));
		ck_assert_int_eq(k.compute, 0);
		/* round robin over the generated tasks, each started and stopped */
		ck_assert_uint_eq(k.work_for->len, k.done_for->len);
		for (guint j = 0; j < k.work_for->len; j++) {
			ck_assert_uint_eq(g_array_index(k.work_for, guint, j),
					  s + j * r->shuffle_threads);
			ck_assert_uint_eq(g_array_index(k.done_for, guint, j),
					  s + j * r->shuffle_threads);
		}
		ck_assert_uint_eq(k.work_for->len,
				  s < r->tasks ? (r->tasks - s + r->shuffle_threads - 1) /
							 r->shuffle_threads
					       : 0);
		ck_assert_uint_eq(k.retries, r->retry_blocks ? k.work_for->len : 0);
		ck_assert_uint_ge(k.allocs, k.work_for->len);
		ck_assert_uint_le(k.allocs, 3 * k.work_for->len);
		walk_clear(&k);
	}
}
END_TEST

/* Same seed, same tasks, byte for byte. */
START_TEST(test_same_seed_same_tasks)
{
	g_autofree char *a = generated_dump(&rows[_i]);
	g_autofree char *b = generated_dump(&rows[_i]);

	ck_assert_str_eq(a, b);
}
END_TEST

/*
 * A run makes tasks as it starts them, drops them when they are over and may
 * want them again: whatever the order, each task is made as if all were
 * made in order. Until then a task has no threads.
 */
START_TEST(test_made_in_any_order)
{
	g_autofree char *in_order = generated_dump(&rows[_i]);
	g_autofree char *scrambled = NULL;
	g_autoptr(GsWorkload) w = workload_for(&rows[_i]);
	guint n;

	gs_generate_tasks(w);
	n = w->tasks->len;
	for (guint i = 0; i < n; i++)
		ck_assert_uint_eq(((GsTaskSpec *) w->tasks->pdata[i])->threads->len, 0);
	for (guint i = n; i > 0; i--)
		gs_workload_make_task(w, i - 1);
	for (guint i = 0; i < n; i += 2)
		gs_workload_drop_task(w, i);
	for (guint i = 0; i < n; i += 2)
		ck_assert_uint_eq(((GsTaskSpec *) w->tasks->pdata[i])->threads->len, 0);
	for (guint i = 0; i < n; i++)
		gs_workload_make_task(w, (i * 7) % n);
	for (guint i = 0; i < n; i++)
		gs_workload_make_task(w, i);
	scrambled = dump(w);
	ck_assert_str_eq(scrambled, in_order);
}
END_TEST

/* Another seed, other tasks (where there is anything random to differ). */
START_TEST(test_other_seed_other_tasks)
{
	Row r = rows[_i];
	g_autofree char *a = NULL;
	g_autofree char *b = NULL;

	if (r.tasks == 0 || r.task_max <= 1 || r.max_allocs == 0)
		return;
	a = generated_dump(&r);
	r.seed = r.seed + 1;
	b = generated_dump(&r);
	ck_assert_str_ne(a, b);
}
END_TEST

/* Seeds that agree in their low 32 bits still differ. */
START_TEST(test_high_seed_bits_count)
{
	Row r = rows[0];
	g_autofree char *a = NULL;
	g_autofree char *b = NULL;

	r.seed = 5;
	a = generated_dump(&r);
	r.seed = 5 + ((guint64) 1 << 32);
	b = generated_dump(&r);
	ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(test_disabled_is_a_no_op)
{
	Row r = rows[_i];
	g_autoptr(GsWorkload) w = workload_for(&r);

	w->generate.enabled = FALSE;
	generate(w);
	ck_assert_uint_eq(w->tasks->len, 0);
	ck_assert_uint_eq(w->pool_threads->len, 0);
}
END_TEST

/* A default workload has generate disabled: nothing happens. */
START_TEST(test_default_workload)
{
	g_autoptr(GsWorkload) w = gs_workload_new();

	generate(w);
	ck_assert_uint_eq(w->tasks->len, 0);
	ck_assert_uint_eq(w->pool_threads->len, 0);
}
END_TEST

/* The compute of a task is spread over its allocations, one share after each. */
START_TEST(test_compute_follows_each_alloc)
{
	const Row *r = &rows[_i];
	g_autoptr(GsWorkload) w = workload_for(r);

	generate(w);
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];
		GsTime lo = G_MAXINT64, hi = 0;

		for (guint t = 0; t < task->threads->len; t++) {
			const GsThreadSpec *spec = task->threads->pdata[t];

			for (guint j = 0; j < spec->ops->len; j++) {
				const GsOp *op = &g_array_index(spec->ops, GsOp, j);
				const GArray *set = spec->ops;
				guint at = j;

				if (op->kind == GS_OP_RETRY) {
					set = op->retry.ops;
					at = 0;
					op = &g_array_index(set, GsOp, 0);
				}
				if (op->kind != GS_OP_ALLOC)
					continue;
				ck_assert_uint_lt(at + 1, set->len);
				op = &g_array_index(set, GsOp, at + 1);
				ck_assert_int_eq(op->kind, GS_OP_COMPUTE);
				ck_assert_int_eq(op->compute.stream, -1);
				lo = MIN(lo, op->compute.time);
				hi = MAX(hi, op->compute.time);
			}
		}
		/* equal shares, give or take the remainder's nanosecond */
		if (lo != G_MAXINT64)
			ck_assert_int_le(hi - lo, 1);
	}
}
END_TEST

/* ---- templates and skew ---- */

/* The sizes a task allocates, in op order over its threads. */
static GArray *
task_sizes(const GsTaskSpec *task)
{
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(gint64));

	for (guint t = 0; t < task->threads->len; t++) {
		Walk k;

		walk_init(&k, task->threads->pdata[t]);
		g_array_append_vals(sizes, k.sizes->data, k.sizes->len);
		walk_clear(&k);
	}
	return sizes;
}

/* Without jitter a templated task is the template, skewed ones exactly x factor. */
START_TEST(test_template_without_jitter)
{
	Row r = {31, 6, 2, 256 * MIB, 40, 30 * MS, TRUE, 2, 3.0, 0.0, 0};
	g_autoptr(GsWorkload) w = workload_for(&r);
	g_autoptr(GArray) base = NULL;

	generate(w);
	base = task_sizes(w->tasks->pdata[r.tasks - 1]);
	ck_assert_uint_gt(base->len, 0);
	for (guint i = 0; i < r.tasks; i++) {
		g_autoptr(GArray) sizes = task_sizes(w->tasks->pdata[i]);
		gint64 factor = i < r.skew_tasks ? 3 : 1;

		ck_assert_uint_eq(sizes->len, base->len);
		for (guint j = 0; j < sizes->len; j++)
			ck_assert_int_eq(g_array_index(sizes, gint64, j),
					 factor * g_array_index(base, gint64, j));
	}
}
END_TEST

/* With jitter every task has the template's shape, sizes within ±jitter of each other. */
START_TEST(test_template_with_jitter)
{
	Row r = {37, 8, 1, 1 * GIB, 30, 30 * MS, FALSE, 1, 2.0, 0.1, 0};
	g_autoptr(GsWorkload) w = workload_for(&r);
	g_autoptr(GArray) base = NULL;
	gboolean differ = FALSE;

	generate(w);
	base = task_sizes(w->tasks->pdata[1]);
	for (guint i = 1; i < r.tasks; i++) {
		g_autoptr(GArray) sizes = task_sizes(w->tasks->pdata[i]);

		ck_assert_uint_eq(sizes->len, base->len);
		for (guint j = 0; j < sizes->len; j++) {
			double a = g_array_index(sizes, gint64, j);
			double b = g_array_index(base, gint64, j);

			ck_assert(a <= (b + 1) * 1.1 / 0.9 + 1);
			ck_assert(b <= (a + 1) * 1.1 / 0.9 + 1);
			differ |= a != b;
		}
	}
	ck_assert(differ);
	/* the skewed task: about twice the others */
	{
		g_autoptr(GArray) sizes = task_sizes(w->tasks->pdata[0]);
		gint64 total = 0, base_total = 0;

		for (guint j = 0; j < sizes->len; j++) {
			total += g_array_index(sizes, gint64, j);
			base_total += g_array_index(base, gint64, j);
		}
		ck_assert(total >= base_total * 2 * 0.9 / 1.1 - sizes->len);
		ck_assert(total <= base_total * 2 * 1.1 / 0.9 + sizes->len);
	}
}
END_TEST

/* A skew factor of 0 or below still gives positive sizes. */
START_TEST(test_skew_clamped_positive)
{
	Row r = {41, 3, 1, 64 * MIB, 20, 1 * MS, TRUE, 2, _i == 0 ? 0.0 : -2.0, 0.05, 0};
	g_autoptr(GsWorkload) w = workload_for(&r);

	generate(w);
	for (guint i = 0; i < r.tasks; i++) {
		g_autoptr(GArray) sizes = task_sizes(w->tasks->pdata[i]);

		ck_assert_uint_gt(sizes->len, 0);
		for (guint j = 0; j < sizes->len; j++) {
			if (i < r.skew_tasks)
				ck_assert_int_eq(g_array_index(sizes, gint64, j), 1);
			else
				ck_assert_int_ge(g_array_index(sizes, gint64, j), 1);
		}
	}
}
END_TEST

/* ---- names ---- */

typedef struct {
	const char *tasks[4];   /* existing task ids, each with a thread "<id>.0" */
	const char *threads[4]; /* existing pool threads */
	const char *prefix;     /* expected task prefix */
	const char *sprefix;    /* expected shuffle prefix */
} ClashRow;

static const ClashRow clash_rows[] = {
	{{"A", "B"}, {"S"}, "g", "shuffle"},
	{{"g0"}, {NULL}, "gen", "shuffle"},
	{{"x", "g2"}, {"shuffle1"}, "gen", "genshuffle"},
	{{"g1", "gen0"}, {"shuffle0", "genshuffle1"}, "gen2_", "gen2_shuffle"},
	/* a thread name alone clashes too */
	{{NULL}, {"g1.0"}, "gen", "shuffle"},
	/* ids beyond the generated count do not clash */
	{{"g3", "g10"}, {"shuffle2"}, "g", "shuffle"},
};

START_TEST(test_names_do_not_clash)
{
	const ClashRow *c = &clash_rows[_i];
	Row r = {1, 3, 1, 16 * MIB, 5, 1 * MS, FALSE, 0, 1.0, 0.0, 2};
	g_autoptr(GsWorkload) w = workload_for(&r);
	guint existing, pools;

	for (guint i = 0; i < G_N_ELEMENTS(c->tasks) && c->tasks[i] != NULL; i++) {
		GsTaskSpec *task = gs_task_spec_new(c->tasks[i]);
		g_autofree char *name = g_strdup_printf("%s.0", c->tasks[i]);

		g_ptr_array_add(task->threads, gs_thread_spec_new(name));
		g_ptr_array_add(w->tasks, task);
	}
	for (guint i = 0; i < G_N_ELEMENTS(c->threads) && c->threads[i] != NULL; i++)
		g_ptr_array_add(w->pool_threads, gs_thread_spec_new(c->threads[i]));
	existing = w->tasks->len;
	pools = w->pool_threads->len;
	generate(w);
	ck_assert_uint_eq(w->tasks->len, existing + r.tasks);
	ck_assert_uint_eq(w->pool_threads->len, pools + r.shuffle_threads);
	for (guint i = 0; i < r.tasks; i++) {
		const GsTaskSpec *task = w->tasks->pdata[existing + i];
		const GsThreadSpec *t = task->threads->pdata[0];
		g_autofree char *id = g_strdup_printf("%s%u", c->prefix, i);
		g_autofree char *name = g_strdup_printf("%s.0", id);

		ck_assert_str_eq(task->id, id);
		ck_assert_str_eq(t->name, name);
		for (guint j = 0; j < existing + i; j++)
			ck_assert_str_ne(((GsTaskSpec *) w->tasks->pdata[j])->id, task->id);
	}
	for (guint k = 0; k < r.shuffle_threads; k++) {
		const GsThreadSpec *t = w->pool_threads->pdata[pools + k];
		g_autofree char *name = g_strdup_printf("%s%u", c->sprefix, k);
		Walk walk;

		ck_assert_str_eq(t->name, name);
		/* pool ops name the generated tasks by their index in w->tasks */
		walk_init(&walk, t);
		for (guint j = 0; j < walk.work_for->len; j++)
			ck_assert_uint_eq(g_array_index(walk.work_for, guint, j),
					  existing + k + j * r.shuffle_threads);
		walk_clear(&walk);
	}
}
END_TEST

/* A second call appends a second set, under another prefix, drawn from the same seed. */
START_TEST(test_second_call)
{
	Row r = rows[2];
	g_autoptr(GsWorkload) w = workload_for(&r);

	generate(w);
	generate(w);
	ck_assert_uint_eq(w->tasks->len, 2 * r.tasks);
	ck_assert_uint_eq(w->pool_threads->len, 2 * r.shuffle_threads);
	ck_assert_str_eq(((GsTaskSpec *) w->tasks->pdata[r.tasks])->id, "gen0");
	ck_assert_str_eq(((GsThreadSpec *) w->pool_threads->pdata[r.shuffle_threads])->name,
			 "genshuffle0");
	for (guint i = 0; i < r.tasks; i++) {
		g_autoptr(GArray) a = task_sizes(w->tasks->pdata[i]);
		g_autoptr(GArray) b = task_sizes(w->tasks->pdata[r.tasks + i]);

		ck_assert_uint_eq(a->len, b->len);
		ck_assert(memcmp(a->data, b->data, a->len * sizeof(gint64)) == 0);
	}
}
END_TEST

/* ---- replaying the generated threads ---- */

/*
 * Runs every generated dedicated thread alone through the interpreter, with
 * @capacity bytes (per row: the thread's whole budget, or a tenth of it so
 * that allocations fail and retry blocks retry and split). The thread must
 * settle (done, or failed once nothing more can be split) and give back all
 * its memory.
 */
static void
replay(const GsWorkload *w, gint64 capacity, gboolean *any_split)
{
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		for (guint t = 0; t < task->threads->len; t++) {
			g_autoptr(GsEngine) engine = gs_engine_new(NULL);
			g_autoptr(GsInterp) it = NULL;
			const GsThreadSpec *spec = task->threads->pdata[t];
			gint64 used = 0;
			guint64 handle = 1;
			GsTime now = 0;
			gboolean settled = FALSE;

			ck_assert_int_eq(gs_engine_register_dedicated(engine, 1, 1, 0),
					 GS_ENGINE_ERROR_NONE);
			it = gs_interp_new(engine, spec, 1, GS_OOM_RETRY);
			for (guint steps = 0; steps < 1000000 && !settled; steps++) {
				GsEffect e = gs_interp_step(it, now);

				switch (e.kind) {
				case GS_EFFECT_ALLOC: {
					gboolean ok = used + e.size <= capacity;

					used += ok ? e.size : 0;
					gs_interp_alloc_done(it, ok, handle++, now);
					break;
				}
				case GS_EFFECT_FREE:
					used -= e.size;
					ck_assert_int_ge(used, 0);
					break;
				case GS_EFFECT_COMPUTE:
				case GS_EFFECT_SLEEP:
					now += e.time;
					break;
				case GS_EFFECT_UNTIL:
				case GS_EFFECT_OP:
					break;
				case GS_EFFECT_WAIT:
					ck_abort_msg("a lone thread waits: nothing can wake it");
					break;
				case GS_EFFECT_PERMIT:
					ck_abort_msg("a permit, though none was required");
					break;
				case GS_EFFECT_TASK_DONE:
				case GS_EFFECT_DONE:
				case GS_EFFECT_FAILED:
					settled = TRUE;
					break;
				}
			}
			ck_assert(settled);
			ck_assert(gs_interp_finished(it));
			ck_assert_int_eq(gs_interp_live_buffers(it), 0);
			ck_assert_int_eq(used, 0);
			for (guint j = 0; j < gs_interp_exceptions(it)->len; j++) {
				const GsSeenException *s =
					&g_array_index(gs_interp_exceptions(it), GsSeenException, j);

				*any_split |= gs_exception_is_split(s->exception);
			}
			ck_assert_ptr_null(gs_engine_check_invariants(engine));
		}
	}
}

START_TEST(test_replay_with_room)
{
	const Row *r = &rows[_i];
	g_autoptr(GsWorkload) w = workload_for(r);
	gboolean any_split = FALSE;
	gint64 room = gs_bytes_scaled(MAX(r->task_max, 1), MAX(1.0, factor_bound(r, 0))) + 64;

	generate(w);
	replay(w, room, &any_split);
	ck_assert(!any_split);
}
END_TEST

START_TEST(test_replay_tight)
{
	Row r = {43, 4, 1, 64 * MIB, 30, 10 * MS, TRUE, 0, 1.0, 0.0, 0};
	g_autoptr(GsWorkload) w = workload_for(&r);
	gboolean any_split = FALSE;

	generate(w);
	replay(w, r.task_max / 10, &any_split);
	ck_assert(any_split);
}
END_TEST

Suite *gs_test_suite_generate(void);

Suite *
gs_test_suite_generate(void)
{
	Suite *s = suite_create("generate");
	TCase *tc;

	tc = tcase_create("properties");
	tcase_add_loop_test(tc, test_properties, 0, G_N_ELEMENTS(rows));
	tcase_add_loop_test(tc, test_compute_follows_each_alloc, 0, G_N_ELEMENTS(rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("determinism");
	tcase_add_loop_test(tc, test_same_seed_same_tasks, 0, G_N_ELEMENTS(rows));
	tcase_add_loop_test(tc, test_made_in_any_order, 0, G_N_ELEMENTS(rows));
	tcase_add_loop_test(tc, test_other_seed_other_tasks, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_high_seed_bits_count);
	suite_add_tcase(s, tc);

	tc = tcase_create("disabled");
	tcase_add_loop_test(tc, test_disabled_is_a_no_op, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_default_workload);
	suite_add_tcase(s, tc);

	tc = tcase_create("templates");
	tcase_add_test(tc, test_template_without_jitter);
	tcase_add_test(tc, test_template_with_jitter);
	tcase_add_loop_test(tc, test_skew_clamped_positive, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_loop_test(tc, test_names_do_not_clash, 0, G_N_ELEMENTS(clash_rows));
	tcase_add_test(tc, test_second_call);
	suite_add_tcase(s, tc);

	tc = tcase_create("replay");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_replay_with_room, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_replay_tight);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_generate());
}
