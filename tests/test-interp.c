/*
 * gpusim tests: the op interpreter, driven by a tiny scripted driver over one
 * engine and a byte-counting memory, with the engine's invariants checked at
 * every step.
 */
#include "config.h"

#include "testlib.h"

#define GPU GS_KIND_GPU
#define HOST GS_KIND_HOST

/* ---- building thread specs ---- */

static GArray *
ops_new(void)
{
	return g_array_new(FALSE, TRUE, sizeof(GsOp));
}

static void
add_alloc(GsThreadSpec *t, GArray *ops, const char *buf, gint64 size, GsAllocKind kind,
	  gboolean blocking)
{
	GsOp op = {.kind = GS_OP_ALLOC};

	op.alloc.buf = gs_name_index(t->buffers, buf);
	op.alloc.size = size;
	op.alloc.kind = kind;
	op.alloc.blocking = blocking;
	op.alloc.reservation = -1;
	g_array_append_val(ops, op);
}

static void
add_free(GsThreadSpec *t, GArray *ops, const char *buf)
{
	GsOp op = {.kind = GS_OP_FREE};
	guint index = gs_name_index(t->buffers, buf);

	gs_names_append(&op.free.bufs, index);
	g_array_append_val(ops, op);
}

static void
add_time(GArray *ops, GsOpKind kind, GsTime time)
{
	GsOp op = {.kind = kind};

	if (kind == GS_OP_COMPUTE) {
		op.compute.time = time;
		op.compute.stream = -1;
	} else {
		op.time = time;
	}
	g_array_append_val(ops, op);
}

static void
add_simple(GArray *ops, GsOpKind kind)
{
	GsOp op = {.kind = kind};

	g_array_append_val(ops, op);
}

static void
add_retry(GArray *ops, GArray *inner, GsSplitMode split, guint max_splits)
{
	GsOp op = {.kind = GS_OP_RETRY};

	op.retry.split = split;
	op.retry.max_splits = max_splits;
	op.retry.ops = inner;
	g_array_append_val(ops, op);
}

static void
add_repeat(GArray *ops, GArray *inner, guint times)
{
	GsOp op = {.kind = GS_OP_REPEAT};

	op.repeat.times = times;
	op.repeat.ops = inner;
	g_array_append_val(ops, op);
}

static void
add_inject(GArray *ops, int retry, int split, int cudf, int skip)
{
	GsOp op = {.kind = GS_OP_INJECT};

	op.inject.skip = skip;
	op.inject.retry_oom = retry;
	op.inject.split_oom = split;
	op.inject.cudf_exception = cudf;
	op.inject.kind = GS_KIND_FILTER_ANY;
	g_array_append_val(ops, op);
}

/* A retry block around: alloc x SIZE; compute 10; free x. */
static GArray *
alloc_compute_free(GsThreadSpec *t, gint64 size)
{
	GArray *inner = ops_new();

	add_alloc(t, inner, "x", size, GPU, TRUE);
	add_time(inner, GS_OP_COMPUTE, 1000);
	add_free(t, inner, "x");
	return inner;
}

/* ---- a scripted driver ---- */

typedef struct {
	GsEngine *engine;
	gint64 capacity;
	gint64 used[GS_N_KINDS];
	guint64 next_handle;
	GsTime now;
	GArray *allocs; /* gint64 sizes granted, in order */
	guint64 computed;
	gint64 freed_at_end; /* bytes the thread still held when it ended */
} Driver;

static void
driver_init(Driver *d, const GsEngineOpts *opts, gint64 capacity)
{
	*d = (Driver){.engine = gs_engine_new(opts), .capacity = capacity, .next_handle = 1};
	d->allocs = g_array_new(FALSE, FALSE, sizeof(gint64));
}

static void
driver_clear(Driver *d)
{
	ck_assert_ptr_null(gs_engine_check_invariants(d->engine));
	gs_engine_free(d->engine);
	g_array_unref(d->allocs);
}

/* Steps @it until it ends or waits; returns the effect that stopped it. */
static GsEffect
drive(Driver *d, GsInterp *it)
{
	for (guint steps = 0; steps < 100000; steps++) {
		GsEffect e = gs_interp_step(it, d->now);

		ck_assert_ptr_null(gs_engine_check_invariants(d->engine));
		switch (e.kind) {
		case GS_EFFECT_ALLOC: {
			gboolean ok = d->used[e.alloc_kind] + e.size <= d->capacity;

			if (ok) {
				d->used[e.alloc_kind] += e.size;
				g_array_append_val(d->allocs, e.size);
			}
			gs_interp_alloc_done(it, ok, d->next_handle++, d->now);
			break;
		}
		case GS_EFFECT_FREE:
			d->used[e.alloc_kind] -= e.size;
			ck_assert_int_ge(d->used[e.alloc_kind], 0);
			d->freed_at_end += e.at_end ? e.size : 0;
			break;
		case GS_EFFECT_COMPUTE:
		case GS_EFFECT_SLEEP:
			d->computed += e.time;
			d->now += e.time;
			break;
		case GS_EFFECT_UNTIL:
			d->now = MAX(d->now, e.time);
			break;
		case GS_EFFECT_OP:
			break;
		case GS_EFFECT_PERMIT:
			ck_abort_msg("a permit, though none was required");
			break;
		case GS_EFFECT_WAIT:
		case GS_EFFECT_TASK_DONE:
		case GS_EFFECT_DONE:
		case GS_EFFECT_FAILED:
			return e;
		}
	}
	ck_abort_msg("the interpreter did not settle");
	return (GsEffect){0};
}

/* Runs a lone dedicated thread (id 1, task 1) to its end. */
static GsEffect
run_alone(Driver *d, const GsThreadSpec *spec, GsOomPolicy policy, GsInterp **out)
{
	GsInterp *it;
	GsEffect e;

	ck_assert_int_eq(gs_engine_register_dedicated(d->engine, 1, 1, 0), GS_ENGINE_ERROR_NONE);
	it = gs_interp_new(d->engine, spec, 1, policy);
	e = drive(d, it);
	ck_assert(gs_interp_finished(it));
	ck_assert_int_eq(gs_interp_live_buffers(it), 0);
	ck_assert_int_eq(d->used[GPU], 0);
	ck_assert_int_eq(d->used[HOST], 0);
	*out = it;
	return e;
}

static guint
count_seen(GsInterp *it, GsException exc, gboolean handled)
{
	const GArray *seen = gs_interp_exceptions(it);
	guint n = 0;

	for (guint i = 0; i < seen->len; i++) {
		const GsSeenException *s = &g_array_index(seen, GsSeenException, i);

		n += s->exception == exc && s->handled == handled;
	}
	return n;
}

/* ---- split arithmetic ---- */

static const struct {
	gint64 size;
	guint8 path[4];
	guint n;
	gint64 expected;
} split_rows[] = {
	{1000, {0}, 1, 500},
	{1000, {1}, 1, 500},
	{1001, {0}, 1, 500},
	{1001, {1}, 1, 501},
	{1001, {1, 1}, 2, 251},
	{1001, {1, 0}, 2, 250},
	{600, {0, 0, 0}, 3, 150},   /* 300, then 150, then below 256: repeated */
	{255, {0, 1}, 2, 255},
	{256, {1}, 1, 128},
	{0, {0}, 1, 0},
	{1 << 20, {0, 0, 0, 0}, 4, 1 << 16},
};

START_TEST(split_size_table)
{
	ck_assert_int_eq(gs_split_size(split_rows[_i].size, split_rows[_i].path, split_rows[_i].n),
			 split_rows[_i].expected);
}
END_TEST

START_TEST(split_time_halves_without_a_floor)
{
	const guint8 path[] = {0, 1, 1};

	ck_assert_int_eq(gs_split_time(101, path, 1), 50);
	ck_assert_int_eq(gs_split_time(101, path + 1, 1), 51);
	ck_assert_int_eq(gs_split_time(7, path, 3), 1); /* 3, then 2, then 1 */
}
END_TEST

/* ---- running ops ---- */

START_TEST(plain_ops_in_order)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsEffect e;

	add_alloc(t, t->ops, "a", 100, GPU, TRUE);
	add_time(t->ops, GS_OP_COMPUTE, 5000);
	add_alloc(t, t->ops, "b", 30, HOST, TRUE);
	add_time(t->ops, GS_OP_SLEEP, 2000);
	add_free(t, t->ops, "a");
	add_time(t->ops, GS_OP_UNTIL, 20000);
	driver_init(&d, NULL, 1000);
	e = run_alone(&d, t, GS_OOM_RETRY, &it);
	ck_assert_int_eq(e.kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(d.allocs->len, 2);
	ck_assert_int_eq(d.now, 20000);
	ck_assert_uint_eq(gs_interp_exceptions(it)->len, 0);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(repeat_runs_its_ops_that_many_times)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new();
	Driver d;
	GsInterp *it;

	add_alloc(t, inner, "a", 100, GPU, TRUE);
	add_free(t, inner, "a");
	add_repeat(t->ops, inner, 250);
	add_repeat(t->ops, ops_new(), 0);
	driver_init(&d, NULL, 100);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(d.allocs->len, 250);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

/* What the next step reads first: the op after a compute, or a repeat's first on its way round. */
START_TEST(next_read_is_the_op_a_resumed_thread_reads)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new();
	const GArray *ops;
	Driver d;
	GsInterp *it;
	GsEffect e;

	add_time(inner, GS_OP_COMPUTE, 1000);
	add_time(inner, GS_OP_COMPUTE, 2000);
	add_repeat(t->ops, inner, 2);
	add_alloc(t, t->ops, "a", 100, GPU, TRUE);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(gs_engine_register_dedicated(d.engine, 1, 1, 0), GS_ENGINE_ERROR_NONE);
	it = gs_interp_new(d.engine, t, 1, GS_OOM_RETRY);
	ops = g_array_index(t->ops, GsOp, 0).repeat.ops;
	e = gs_interp_step(it, 0);
	ck_assert_int_eq(e.kind, GS_EFFECT_COMPUTE);
	ck_assert_ptr_eq(gs_interp_next_read(it), &g_array_index(ops, GsOp, 1));
	e = gs_interp_step(it, 1000);
	ck_assert_int_eq(e.time, 2000);
	ck_assert_ptr_eq(gs_interp_next_read(it), &g_array_index(ops, GsOp, 0));
	gs_interp_step(it, 3000);
	gs_interp_step(it, 4000);
	e = gs_interp_step(it, 6000);
	ck_assert_int_eq(e.kind, GS_EFFECT_ALLOC);
	ck_assert_ptr_null(gs_interp_next_read(it)); /* waiting for the allocation's answer */
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(injected_retry_reruns_the_attempt)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsMetrics m;

	add_inject(t->ops, 2, 0, 0, 0);
	add_retry(t->ops, alloc_compute_free(t, 100), GS_SPLIT_HALVES, 16);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_RETRY_OOM, TRUE), 2);
	ck_assert_uint_eq(d.allocs->len, 1);
	ck_assert(gs_engine_thread_metrics(d.engine, 1, &m));
	ck_assert_uint_eq(m.retries, 2);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

/*
 * An inject op inside a retry block arms the injection at the block's first
 * attempt only; each new instance of the block (a repeat) arms it again.
 */
static const struct {
	int retry_oom, split_oom;
	guint repeats;
	guint retries, splits, allocs;
} inject_in_block_rows[] = {
	{1, 0, 1, 1, 0, 1},
	{3, 0, 1, 3, 0, 1}, /* counted down over the reruns */
	{0, 1, 1, 0, 1, 2}, /* the halves run unarmed */
	{2, 1, 1, 2, 1, 2},
	{1, 0, 2, 2, 0, 2},
};

START_TEST(inject_in_block_arms_at_first_attempt)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new(), *body = ops_new();
	Driver d;
	GsInterp *it;

	add_inject(inner, inject_in_block_rows[_i].retry_oom, inject_in_block_rows[_i].split_oom,
		   0, 0);
	add_alloc(t, inner, "x", 100, GPU, TRUE);
	add_free(t, inner, "x");
	add_retry(body, inner, GS_SPLIT_HALVES, 16);
	add_repeat(t->ops, body, inject_in_block_rows[_i].repeats);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_RETRY_OOM, TRUE),
			  inject_in_block_rows[_i].retries);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_SPLIT_AND_RETRY_OOM, TRUE),
			  inject_in_block_rows[_i].splits);
	ck_assert_uint_eq(d.allocs->len, inject_in_block_rows[_i].allocs);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(attempt_buffers_are_freed_on_retry)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new();
	Driver d;
	GsInterp *it;

	/* The block's second allocation throws once: x must be given back before the rerun. */
	add_inject(t->ops, 1, 0, 0, 2);
	add_alloc(t, inner, "x", 600, GPU, TRUE);
	add_alloc(t, inner, "y", 100, GPU, TRUE);
	add_free(t, inner, "x");
	add_free(t, inner, "y");
	add_alloc(t, t->ops, "keep", 300, GPU, TRUE);
	add_retry(t->ops, inner, GS_SPLIT_HALVES, 16);
	add_free(t, t->ops, "keep");
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	/* keep, x, (y throws), x again, y */
	ck_assert_uint_eq(d.allocs->len, 4);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_RETRY_OOM, TRUE), 1);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(too_big_alone_retries_then_splits_in_halves)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsMetrics m;

	add_retry(t->ops, alloc_compute_free(t, 1000), GS_SPLIT_HALVES, 16);
	driver_init(&d, NULL, 600);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	/* Retried once, rolled back (RetryOOM), then split (SplitAndRetryOOM): 500 + 500. */
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_RETRY_OOM, TRUE), 1);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_SPLIT_AND_RETRY_OOM, TRUE), 1);
	ck_assert_uint_eq(d.allocs->len, 2);
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 0), 500);
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 1), 500);
	ck_assert_uint_eq(d.computed, 1000); /* the compute is halved too */
	ck_assert(gs_engine_thread_metrics(d.engine, 1, &m));
	ck_assert_uint_eq(m.retries, 1);
	ck_assert_uint_eq(m.splits, 1);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(split_none_escapes_as_could_not_split)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsEffect e;

	add_retry(t->ops, alloc_compute_free(t, 1000), GS_SPLIT_NONE, 16);
	driver_init(&d, NULL, 600);
	e = run_alone(&d, t, GS_OOM_RETRY, &it);
	ck_assert_int_eq(e.kind, GS_EFFECT_FAILED);
	ck_assert_int_eq(e.exception, GS_EXC_COULD_NOT_SPLIT);
	ck_assert_uint_eq(count_seen(it, GS_EXC_COULD_NOT_SPLIT, FALSE), 1);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

/*
 * An exception that escapes a retry block takes the attempt's buffers and
 * the block's input with it (RmmRapidsRetryIterator closes both on any
 * throwable it does not handle): of x (the input, 100), y (200, not the
 * block's) and a (50, the attempt's), only y is left when the thread ends.
 */
static const struct {
	const char *what;
	gboolean cudf;       /* else a split the block may not make */
	GsException escapes;
} escape_rows[] = {
	{"a CudfException", TRUE, GS_EXC_CUDF_EXCEPTION},
	{"a split the block may not make", FALSE, GS_EXC_COULD_NOT_SPLIT},
};

START_TEST(an_escaping_exception_closes_the_input_and_the_attempt)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new();
	Driver d;
	GsInterp *it;
	GsOp *block;

	t->on_oom = GS_ON_OOM_CONTINUE;
	add_alloc(t, t->ops, "x", 100, GPU, TRUE);
	add_alloc(t, t->ops, "y", 200, GPU, TRUE);
	add_alloc(t, inner, "a", 50, GPU, TRUE);
	add_inject(inner, 0, escape_rows[_i].cudf ? 0 : 1, escape_rows[_i].cudf ? 1 : 0, 0);
	add_alloc(t, inner, "b", 50, GPU, TRUE);
	add_retry(t->ops, inner, GS_SPLIT_NONE, 16);
	block = &g_array_index(t->ops, GsOp, t->ops->len - 1);
	gs_names_append(&block->retry.input, gs_name_index(t->buffers, "x"));
	driver_init(&d, NULL, 1000);
	ck_assert_msg(run_alone(&d, t, GS_OOM_RETRY, &it).kind == GS_EFFECT_DONE, "%s",
		      escape_rows[_i].what);
	ck_assert_uint_eq(count_seen(it, escape_rows[_i].escapes, TRUE), 1);
	ck_assert_int_eq(d.freed_at_end, 200);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

/*
 * A thread's value v starts at 5 and each attempt of the block adds 5
 * (WithRetrySuite's withRestoreOnRetry): a retry or split OOM that leaves a
 * block's ops puts back the values the block restores, at their last
 * checkpoint, whatever the block then does; other exceptions put back
 * nothing, and neither does a retry OOM an inner block handles for an
 * outer block that restores.
 */
typedef enum { THROW_RETRY, THROW_SPLIT, THROW_CUDF } Throw;

static const struct {
	const char *what;
	Throw inject;
	gboolean restore;       /* the block around the add restores v */
	gboolean outer_restore; /* a block around that one restores v */
	gboolean checkpoint_at_10; /* v is added to and checkpointed before the blocks */
	gint64 v;
} restore_rows[] = {
	{"a retry OOM restores", THROW_RETRY, TRUE, FALSE, FALSE, 10},
	{"without restore the add stays", THROW_RETRY, FALSE, FALSE, FALSE, 15},
	{"a split restores, then each half adds", THROW_SPLIT, TRUE, FALSE, FALSE, 15},
	{"a split without restore", THROW_SPLIT, FALSE, FALSE, FALSE, 20},
	{"a CudfException restores nothing", THROW_CUDF, TRUE, FALSE, FALSE, 10},
	{"a handled retry stays inside the inner block", THROW_RETRY, FALSE, TRUE, FALSE, 15},
	{"the inner block's restore", THROW_RETRY, TRUE, TRUE, FALSE, 10},
	{"to the last checkpoint", THROW_RETRY, TRUE, FALSE, TRUE, 15},
};

/* value: {name: v, add: AMOUNT}, v being the thread's first value. */
static void
add_value(GArray *ops, gint64 amount)
{
	GsOp op = {.kind = GS_OP_VALUE};

	op.value.name = 0;
	op.value.amount = amount;
	g_array_append_val(ops, op);
}

START_TEST(a_retry_oom_restores_the_blocks_values)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new(), *outer = ops_new();
	const gint64 start = 5;
	Throw thrown = restore_rows[_i].inject;
	Driver d;
	GsInterp *it;
	GsOp *block;

	t->on_oom = GS_ON_OOM_CONTINUE;
	g_ptr_array_add(t->values, g_strdup("v"));
	g_array_append_val(t->value_starts, start);
	if (restore_rows[_i].checkpoint_at_10) {
		GsOp cp = {.kind = GS_OP_CHECKPOINT};

		add_value(t->ops, 5);
		gs_names_append(&cp.checkpoint, 0);
		g_array_append_val(t->ops, cp);
	}
	add_inject(inner, thrown == THROW_RETRY, thrown == THROW_SPLIT, thrown == THROW_CUDF, 0);
	add_value(inner, 5);
	add_alloc(t, inner, "x", 100, GPU, TRUE);
	add_free(t, inner, "x");
	add_retry(outer, inner, GS_SPLIT_HALVES, 16);
	block = &g_array_index(outer, GsOp, outer->len - 1);
	if (restore_rows[_i].restore)
		gs_names_append(&block->retry.restore, 0);
	add_retry(t->ops, outer, GS_SPLIT_HALVES, 16);
	block = &g_array_index(t->ops, GsOp, t->ops->len - 1);
	if (restore_rows[_i].outer_restore)
		gs_names_append(&block->retry.restore, 0);
	driver_init(&d, NULL, 1000);
	ck_assert_msg(run_alone(&d, t, GS_OOM_RETRY, &it).kind == GS_EFFECT_DONE, "%s",
		      restore_rows[_i].what);
	ck_assert_msg(gs_interp_value(it, 0) == restore_rows[_i].v, "%s: v is %" G_GINT64_FORMAT,
		      restore_rows[_i].what, gs_interp_value(it, 0));
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(max_splits_bounds_the_halving)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsEffect e;

	/* 4000 -> 2000 -> 1000: still above 600 after the two splits allowed. */
	add_retry(t->ops, alloc_compute_free(t, 4000), GS_SPLIT_HALVES, 2);
	driver_init(&d, NULL, 600);
	e = run_alone(&d, t, GS_OOM_RETRY, &it);
	ck_assert_int_eq(e.kind, GS_EFFECT_FAILED);
	ck_assert_int_eq(e.exception, GS_EXC_COULD_NOT_SPLIT);
	/* Two splits were made; the third request escaped as CouldNotSplit. */
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_SPLIT_AND_RETRY_OOM, TRUE), 2);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_SPLIT_AND_RETRY_OOM, FALSE), 1);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

/* splitTargetSizeInHalfGpu's next target: half the data when known and small, else half the target. */
static const struct {
	gint64 target, data, expected;
} target_rows[] = {
	{20, 0, 10},
	{1000, 200, 100},  /* data <= target / 2: half the data */
	{100, 2, 1},
	{1000, 500, 250},  /* data == target / 2 still counts */
	{1000, 501, 500},  /* data above half the target: half the target */
	{5, 0, 2},
	{1, 0, 0},
};

START_TEST(split_target_table)
{
	ck_assert_int_eq(gs_split_target(target_rows[_i].target, target_rows[_i].data),
			 target_rows[_i].expected);
}
END_TEST

/* A block of @mode over one allocation of @target bytes, splitting down to @min. */
static void
add_target_block(GsThreadSpec *t, GsSplitMode mode, gint64 target, gint64 min)
{
	GsOp *block;

	add_retry(t->ops, alloc_compute_free(t, target), mode, 16);
	block = &g_array_index(t->ops, GsOp, t->ops->len - 1);
	block->retry.target = target;
	block->retry.min_target = min;
}

/* 4000 does not fit 1500: the attempts run at 2000, then 1000, which fits; the compute scales too. */
START_TEST(target_split_reruns_at_half_the_target)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;

	add_target_block(t, GS_SPLIT_TARGET, 4000, 1000);
	driver_init(&d, NULL, 1500);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(count_seen(it, GS_EXC_GPU_SPLIT_AND_RETRY_OOM, TRUE), 2);
	ck_assert_uint_eq(d.allocs->len, 1);
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 0), 1000);
	ck_assert_int_eq(d.now, 250); /* the 1000 ns compute at a quarter of the target */
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

/*
 * 600 holds no attempt down to the 1000 floor: the split policy itself
 * throws, the GPU's SplitAndRetryOOM for split: target, the host's for
 * target_cpu, and not CouldNotSplit.
 */
static const struct {
	GsSplitMode mode;
	GsException escapes;
} target_limit_rows[] = {
	{GS_SPLIT_TARGET, GS_EXC_GPU_SPLIT_AND_RETRY_OOM},
	{GS_SPLIT_TARGET_CPU, GS_EXC_CPU_SPLIT_AND_RETRY_OOM},
};

START_TEST(target_split_below_the_minimum_throws_the_policy_split)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsEffect e;

	add_target_block(t, target_limit_rows[_i].mode, 4000, 1000);
	driver_init(&d, NULL, 600);
	e = run_alone(&d, t, GS_OOM_RETRY, &it);
	ck_assert_int_eq(e.kind, GS_EFFECT_FAILED);
	ck_assert_int_eq(e.exception, target_limit_rows[_i].escapes);
	ck_assert_uint_eq(count_seen(it, GS_EXC_COULD_NOT_SPLIT, FALSE), 0);
	ck_assert_uint_eq(count_seen(it, target_limit_rows[_i].escapes, FALSE), 1 +
			  (target_limit_rows[_i].mode == GS_SPLIT_TARGET));
	ck_assert_uint_eq(d.allocs->len, 0);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(outer_block_splits_when_inner_cannot)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *outer = ops_new();
	Driver d;
	GsInterp *it;

	add_retry(outer, alloc_compute_free(t, 1000), GS_SPLIT_NONE, 16);
	add_retry(t->ops, outer, GS_SPLIT_HALVES, 16);
	driver_init(&d, NULL, 600);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(count_seen(it, GS_EXC_COULD_NOT_SPLIT, TRUE), 1);
	/* The outer halves apply to the inner block's allocation. */
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 0), 500);
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 1), 500);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(small_sizes_are_repeated_not_split)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new();
	Driver d;
	GsInterp *it;

	add_inject(t->ops, 0, 1, 0, 0);
	add_alloc(t, inner, "small", 200, GPU, TRUE);
	add_free(t, inner, "small");
	add_retry(t->ops, inner, GS_SPLIT_HALVES, 16);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(d.allocs->len, 2);
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 0), 200);
	ck_assert_int_eq(g_array_index(d.allocs, gint64, 1), 200);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(fail_policy_throws_fatal_oom)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;
	GsEffect e;

	add_retry(t->ops, alloc_compute_free(t, 1000), GS_SPLIT_HALVES, 16);
	driver_init(&d, NULL, 600);
	e = run_alone(&d, t, GS_OOM_FAIL, &it);
	ck_assert_int_eq(e.kind, GS_EFFECT_FAILED);
	ck_assert_int_eq(e.exception, GS_EXC_GPU_OOM);
	ck_assert_int_eq(gs_engine_thread_state(d.engine, 1), GS_THREAD_RUNNING);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(on_oom_continue_records_and_goes_on)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;

	t->on_oom = GS_ON_OOM_CONTINUE;
	add_inject(t->ops, 0, 0, 1, 0);
	add_alloc(t, t->ops, "a", 100, GPU, TRUE);
	add_alloc(t, t->ops, "b", 100, GPU, TRUE);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(count_seen(it, GS_EXC_CUDF_EXCEPTION, TRUE), 1);
	ck_assert_uint_eq(d.allocs->len, 1); /* a threw, b was allocated */
	ck_assert_str_eq(g_array_index(gs_interp_exceptions(it), GsSeenException, 0).op, "1");
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(nonblocking_host_alloc_gives_up_quietly)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;

	add_alloc(t, t->ops, "h", 5000, HOST, FALSE);
	add_free(t, t->ops, "h");
	add_alloc(t, t->ops, "g", 10, GPU, TRUE);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(gs_interp_exceptions(it)->len, 0);
	ck_assert_uint_eq(d.allocs->len, 1);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(live_buffers_are_released_at_the_end)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;

	add_alloc(t, t->ops, "a", 100, GPU, TRUE);
	add_alloc(t, t->ops, "a", 100, GPU, TRUE); /* the name again while live: both held */
	add_alloc(t, t->ops, "b", 50, HOST, TRUE);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_DONE);
	ck_assert_int_eq(gs_engine_gpu_allocated(d.engine), 0);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(free_releases_every_half_of_a_split_output)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	GArray *inner = ops_new();
	Driver d;
	GsInterp *it;
	GsEffect e;

	/* The block's output x is split in two halves; the later free takes both. */
	add_inject(t->ops, 0, 1, 0, 0);
	add_alloc(t, inner, "x", 1000, GPU, TRUE);
	add_retry(t->ops, inner, GS_SPLIT_HALVES, 16);
	add_free(t, t->ops, "x");
	add_time(t->ops, GS_OP_COMPUTE, 10);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(gs_engine_register_dedicated(d.engine, 1, 1, 0), GS_ENGINE_ERROR_NONE);
	it = gs_interp_new(d.engine, t, 1, GS_OOM_RETRY);
	for (e = gs_interp_step(it, 0); e.kind != GS_EFFECT_COMPUTE; e = gs_interp_step(it, 0)) {
		if (e.kind == GS_EFFECT_ALLOC) {
			d.used[GPU] += e.size;
			gs_interp_alloc_done(it, TRUE, d.next_handle++, 0);
		} else if (e.kind == GS_EFFECT_FREE) {
			d.used[GPU] -= e.size;
		}
	}
	ck_assert_int_eq(d.used[GPU], 0);
	ck_assert_uint_eq(gs_interp_live_buffers(it), 0);
	ck_assert_int_eq(drive(&d, it).kind, GS_EFFECT_DONE);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(task_done_ends_the_thread)
{
	g_autoptr(GsThreadSpec) t = gs_thread_spec_new("A.0");
	Driver d;
	GsInterp *it;

	add_alloc(t, t->ops, "a", 100, GPU, TRUE);
	add_simple(t->ops, GS_OP_TASK_DONE);
	add_alloc(t, t->ops, "b", 100, GPU, TRUE);
	driver_init(&d, NULL, 1000);
	ck_assert_int_eq(run_alone(&d, t, GS_OOM_RETRY, &it).kind, GS_EFFECT_TASK_DONE);
	ck_assert_uint_eq(d.allocs->len, 1);
	gs_interp_free(it);
	driver_clear(&d);
}
END_TEST

START_TEST(a_blocked_thread_waits_then_resumes)
{
	g_autoptr(GsThreadSpec) holder = gs_thread_spec_new("A.0");
	g_autoptr(GsThreadSpec) waiter = gs_thread_spec_new("B.0");
	GsInterp *a, *b;
	GsThreadId woken;
	Driver d;
	GsEffect e;

	add_alloc(holder, holder->ops, "x", 800, GPU, TRUE);
	add_time(holder->ops, GS_OP_COMPUTE, 100);
	add_free(holder, holder->ops, "x");
	add_time(holder->ops, GS_OP_SLEEP, 100);
	add_retry(waiter->ops, alloc_compute_free(waiter, 500), GS_SPLIT_HALVES, 16);
	driver_init(&d, NULL, 1000);
	gs_engine_register_dedicated(d.engine, 1, 1, 0);
	gs_engine_register_dedicated(d.engine, 2, 2, 0);
	a = gs_interp_new(d.engine, holder, 1, GS_OOM_RETRY);
	b = gs_interp_new(d.engine, waiter, 2, GS_OOM_RETRY);
	/* Thread A allocates and computes; B finds no room and waits (A still runs). */
	e = gs_interp_step(a, 0);
	ck_assert_int_eq(e.kind, GS_EFFECT_ALLOC);
	d.used[GPU] += e.size;
	gs_interp_alloc_done(a, TRUE, 1, 0);
	ck_assert_int_eq(gs_interp_step(a, 0).kind, GS_EFFECT_COMPUTE);
	ck_assert_int_eq(drive(&d, b).kind, GS_EFFECT_WAIT);
	ck_assert_int_eq(gs_engine_thread_state(d.engine, 2), GS_THREAD_BLOCKED);
	/* A frees at 100; the engine hears of it at A's next step, and wakes B. */
	d.now = 100;
	e = gs_interp_step(a, 100);
	ck_assert_int_eq(e.kind, GS_EFFECT_FREE);
	d.used[GPU] -= e.size;
	ck_assert(!gs_engine_pop_wake(d.engine, &woken));
	ck_assert_int_eq(gs_interp_step(a, 100).kind, GS_EFFECT_SLEEP);
	ck_assert(gs_engine_pop_wake(d.engine, &woken));
	ck_assert_uint_eq(woken, 2);
	ck_assert_int_eq(drive(&d, b).kind, GS_EFFECT_DONE);
	ck_assert_uint_eq(gs_interp_exceptions(b)->len, 0);
	ck_assert_int_eq(drive(&d, a).kind, GS_EFFECT_DONE);
	gs_interp_free(a);
	gs_interp_free(b);
	driver_clear(&d);
}
END_TEST

static Suite *
gs_test_suite_interp(void)
{
	Suite *s = suite_create("interp");
	TCase *tc = tcase_create("interp");

	tcase_add_loop_test(tc, split_size_table, 0, G_N_ELEMENTS(split_rows));
	tcase_add_loop_test(tc, split_target_table, 0, G_N_ELEMENTS(target_rows));
	tcase_add_test(tc, split_time_halves_without_a_floor);
	tcase_add_test(tc, plain_ops_in_order);
	tcase_add_test(tc, repeat_runs_its_ops_that_many_times);
	tcase_add_test(tc, next_read_is_the_op_a_resumed_thread_reads);
	tcase_add_test(tc, injected_retry_reruns_the_attempt);
	tcase_add_loop_test(tc, inject_in_block_arms_at_first_attempt, 0,
			    G_N_ELEMENTS(inject_in_block_rows));
	tcase_add_test(tc, attempt_buffers_are_freed_on_retry);
	tcase_add_test(tc, too_big_alone_retries_then_splits_in_halves);
	tcase_add_test(tc, split_none_escapes_as_could_not_split);
	tcase_add_loop_test(tc, an_escaping_exception_closes_the_input_and_the_attempt, 0,
			    G_N_ELEMENTS(escape_rows));
	tcase_add_loop_test(tc, a_retry_oom_restores_the_blocks_values, 0,
			    G_N_ELEMENTS(restore_rows));
	tcase_add_test(tc, max_splits_bounds_the_halving);
	tcase_add_test(tc, target_split_reruns_at_half_the_target);
	tcase_add_loop_test(tc, target_split_below_the_minimum_throws_the_policy_split, 0,
			    G_N_ELEMENTS(target_limit_rows));
	tcase_add_test(tc, outer_block_splits_when_inner_cannot);
	tcase_add_test(tc, small_sizes_are_repeated_not_split);
	tcase_add_test(tc, fail_policy_throws_fatal_oom);
	tcase_add_test(tc, on_oom_continue_records_and_goes_on);
	tcase_add_test(tc, nonblocking_host_alloc_gives_up_quietly);
	tcase_add_test(tc, live_buffers_are_released_at_the_end);
	tcase_add_test(tc, free_releases_every_half_of_a_split_output);
	tcase_add_test(tc, task_done_ends_the_thread);
	tcase_add_test(tc, a_blocked_thread_waits_then_resumes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_interp());
}
