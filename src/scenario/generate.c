/*
 * gpusim: generating tasks from a `generate:` section.
 *
 * Two passes per task: a plan (the steps of each thread, unscaled sizes, and
 * the task's total compute) is drawn from the GRand, then ops are built from
 * it with a size factor. A templated workload draws one plan and builds every
 * task from it; otherwise each task draws its own. Building draws nothing.
 * The maker at the end does both for one task when a run starts it.
 */
#include "config.h"


#include "scenario/generate.h"
#include "scenario/montecarlo.h"

/* RmmSparkMonteCarlo allocates (when it may) if a draw exceeds this. */
#define ALLOC_THRESHOLD 0.40
/* Retry blocks of generated op-sets, as SPEC §3.5 defaults them. */
#define MAX_SPLITS 16
/* Shuffle threads: 1..SHUFFLE_MAX_ALLOCS allocations per task served, each
 * at most task_max / SHUFFLE_SIZE_DIVISOR bytes. */
#define SHUFFLE_MAX_ALLOCS 3
#define SHUFFLE_SIZE_DIVISOR 16

/* One step of a thread: allocate buffer b<buf> of size bytes, or free it. */
typedef struct {
	gboolean alloc;
	guint buf;
	gint64 size; /* unscaled; allocations only */
} Step;

typedef struct {
	GPtrArray *threads; /* GArray of Step, one per thread */
	GsTime compute;     /* the task's total compute */
	guint n_allocs;     /* over all its threads */
} Plan;

/* ---- drawing ---- */

gint64
gs_generate_uniform(GRand *rand, gint64 n)
{
	guint64 hi = g_rand_int(rand);
	guint64 lo = g_rand_int(rand);

	if (n <= 0)
		return 0;
	return (gint64) (((hi << 32) | lo) % (guint64) n);
}

guint
gs_generate_pick(GRand *rand, guint n)
{
	return (guint) g_rand_int_range(rand, 0, (gint32) MIN(n, (guint) G_MAXINT32));
}

static GRand *
seeded(guint64 seed)
{
	guint32 words[2] = {(guint32) seed, (guint32) (seed >> 32)};

	if (seed <= G_MAXUINT32)
		return g_rand_new_with_seed((guint32) seed);
	return g_rand_new_with_seed_array(words, 2);
}

/* RmmSparkMonteCarlo's task generation for one thread with @budget bytes. */
static GArray *
plan_thread(GRand *rand, gint64 budget, guint max_allocs, guint *n_allocs)
{
	GArray *steps = g_array_new(FALSE, TRUE, sizeof(Step));
	GArray *outstanding = g_array_new(FALSE, FALSE, sizeof(guint));
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
	guint left = max_allocs > 0 ? 1 + gs_generate_pick(rand, max_allocs) : 0;
	gint64 remaining = budget;

	while (left > 0 || outstanding->len > 0) {
		gboolean may = left > 0 && remaining > 0;
		Step step = {0};

		if (may && (outstanding->len == 0 || g_rand_double(rand) > ALLOC_THRESHOLD)) {
			step.alloc = TRUE;
			step.buf = sizes->len;
			step.size = 1 + gs_generate_uniform(rand, remaining);
			remaining -= step.size;
			left--;
			g_array_append_val(sizes, step.size);
			g_array_append_val(outstanding, step.buf);
			(*n_allocs)++;
		} else if (outstanding->len > 0) {
			guint i = gs_generate_pick(rand, outstanding->len);

			step.buf = g_array_index(outstanding, guint, i);
			g_array_remove_index(outstanding, i);
			remaining += g_array_index(sizes, gint64, step.buf);
		} else {
			break; /* no budget at all */
		}
		g_array_append_val(steps, step);
	}
	g_array_unref(outstanding);
	g_array_unref(sizes);
	return steps;
}

static void
plan_task(GRand *rand, const GsGenerate *g, guint n_threads, Plan *plan)
{
	gint64 task_max = MAX(g->task_max, 0);
	GsTime max_compute = MAX(g->max_compute, 0);

	plan->threads = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
	plan->n_allocs = 0;
	plan->compute = gs_generate_uniform(rand, max_compute < G_MAXINT64 ? max_compute + 1 : G_MAXINT64);
	for (guint k = 0; k < n_threads; k++) {
		gint64 budget = task_max / n_threads + ((gint64) k < task_max % n_threads);

		g_ptr_array_add(plan->threads,
				plan_thread(rand, budget, g->max_allocs, &plan->n_allocs));
	}
}

static void
plan_clear(Plan *plan)
{
	g_clear_pointer(&plan->threads, g_ptr_array_unref);
}

/* ---- building ops ---- */

/* At least a byte, and no more than a workload may name: a larger one simply never fits. */
static gint64
scale(gint64 size, double factor)
{
	if (factor == 1.0)
		return size;
	return MAX(gs_bytes_scaled(size, factor), 1);
}

static GArray *
ops_new(void)
{
	return g_array_new(FALSE, TRUE, sizeof(GsOp));
}

static GArray *
index_array(const guint *indices, guint n)
{
	GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(guint), n);

	g_array_append_vals(a, indices, n);
	return a;
}

GArray *
gs_generate_add_retry(GArray *ops, GsSplitMode split)
{
	GsOp op = {.kind = GS_OP_RETRY};

	op.retry.split = split;
	op.retry.max_splits = MAX_SPLITS;
	op.retry.ops = ops_new();
	g_array_append_val(ops, op);
	return op.retry.ops;
}

void
gs_generate_add_alloc(GArray *ops, guint buf, gint64 size, gboolean spillable)
{
	GsOp op = {.kind = GS_OP_ALLOC};

	op.alloc.buf = buf;
	op.alloc.size = size;
	op.alloc.kind = GS_KIND_GPU;
	op.alloc.blocking = TRUE;
	op.alloc.prefer_pinned = TRUE;
	op.alloc.spillable = spillable;
	op.alloc.reservation = -1;
	op.alloc.device = 0;
	g_array_append_val(ops, op);
}

/* Appends an allocation of a new buffer of @t, named b<n> for the thread's n-th. */
static void
add_alloc(GsThreadSpec *t, GArray *ops, gint64 size, gboolean spillable)
{
	guint buf = t->buffers->len;

	g_ptr_array_add(t->buffers, g_strdup_printf("b%u", buf));
	gs_generate_add_alloc(ops, buf, size, spillable);
}

GsOp *
gs_generate_add_free(GArray *ops, const guint *bufs, guint n)
{
	GsOp op = {.kind = GS_OP_FREE};

	for (guint i = 0; i < n; i++)
		gs_names_append(&op.free.bufs, bufs[i]);
	g_array_append_val(ops, op);
	return &g_array_index(ops, GsOp, ops->len - 1);
}

void
gs_generate_add_compute(GArray *ops, GsTime time, gint uses)
{
	GsOp op = {.kind = GS_OP_COMPUTE};

	op.compute.time = time;
	if (uses >= 0)
		gs_names_append(&op.compute.uses, (guint) uses);
	op.compute.stream = -1;
	g_array_append_val(ops, op);
}

void
gs_generate_add_pool(GArray *ops, guint task, gboolean done)
{
	GsOp op = {.kind = GS_OP_POOL};

	op.pool.tasks = index_array(&task, 1);
	op.pool.done = done;
	g_array_append_val(ops, op);
}

/*
 * @task's threads and ops from @plan, sizes scaled by @factor. With
 * @spillable (the workload spills) every buffer may be spilled, and the
 * compute after an allocation uses that buffer: the outputs a task holds are
 * what spills.
 */
static void
build_task(GsTaskSpec *task, const Plan *plan, double factor, gboolean retry_blocks,
	   gboolean spillable)
{
	guint nth_alloc = 0;

	for (guint k = 0; k < plan->threads->len; k++) {
		const GArray *steps = plan->threads->pdata[k];
		g_autofree char *name = g_strdup_printf("%s.%u", task->id, k);
		GsThreadSpec *t = gs_thread_spec_new(name);
		GArray *set = t->ops;

		for (guint i = 0; i < steps->len; i++) {
			const Step *step = &g_array_index(steps, Step, i);
			GsTime share;

			if (!step->alloc) {
				gs_generate_add_free(set, &step->buf, 1);
				continue;
			}
			share = plan->compute / plan->n_allocs +
				(nth_alloc < plan->compute % plan->n_allocs);
			nth_alloc++;
			if (retry_blocks)
				set = gs_generate_add_retry(t->ops, GS_SPLIT_HALVES);
			g_assert(step->buf == t->buffers->len);
			add_alloc(t, set, scale(step->size, factor), spillable);
			gs_generate_add_compute(set, share, spillable ? (gint) step->buf : -1);
		}
		g_ptr_array_add(task->threads, t);
	}
}

/* A shuffle pool thread serving the generated tasks first + i, i = k, k + every, ... */
static GsThreadSpec *
build_shuffle(GRand *rand, const GsGenerate *g, const char *name, guint k, guint every,
	      guint first)
{
	GsThreadSpec *t = gs_thread_spec_new(name);
	gint64 small = MAX(g->task_max / SHUFFLE_SIZE_DIVISOR, 1);

	t->shuffle = TRUE;
	for (guint i = k; i < g->tasks; i += every) {
		guint n = 1 + gs_generate_pick(rand, SHUFFLE_MAX_ALLOCS);
		guint bufs[SHUFFLE_MAX_ALLOCS];
		GArray *set = t->ops;

		gs_generate_add_pool(t->ops, first + i, FALSE);
		if (g->retry_blocks)
			set = gs_generate_add_retry(t->ops, GS_SPLIT_NONE);
		for (guint j = 0; j < n; j++) {
			bufs[j] = t->buffers->len;
			add_alloc(t, set, 1 + gs_generate_uniform(rand, small), FALSE);
		}
		gs_generate_add_free(set, bufs, n);
		gs_generate_add_pool(t->ops, first + i, TRUE);
	}
	return t;
}

/* ---- names ---- */

static void
take_thread_names(GHashTable *threads, GPtrArray *specs)
{
	for (guint i = 0; i < specs->len; i++) {
		const GsThreadSpec *t = specs->pdata[i];

		g_hash_table_add(threads, g_strdup(t->name));
	}
}

/* The @a-th candidate prefix: @first, then "gen" @rest, then "gen<a>_" @rest. */
static char *
candidate(guint a, const char *first, const char *rest)
{
	if (a == 0)
		return g_strdup(first);
	if (a == 1)
		return g_strconcat("gen", rest, NULL);
	return g_strdup_printf("gen%u_%s", a, rest);
}

/* The first task prefix whose ids and thread names are all free. */
static char *
task_prefix(GHashTable *ids, GHashTable *threads, guint n_tasks, guint n_threads)
{
	for (guint a = 0;; a++) {
		char *prefix = candidate(a, "g", "");
		gboolean clash = FALSE;

		for (guint i = 0; i < n_tasks && !clash; i++) {
			g_autofree char *id = g_strdup_printf("%s%u", prefix, i);

			clash = g_hash_table_contains(ids, id);
			for (guint k = 0; k < n_threads && !clash; k++) {
				g_autofree char *name = g_strdup_printf("%s.%u", id, k);

				clash = g_hash_table_contains(threads, name);
			}
		}
		if (!clash)
			return prefix;
		g_free(prefix);
	}
}

static char *
shuffle_prefix(GHashTable *threads, guint n)
{
	for (guint a = 0;; a++) {
		char *prefix = candidate(a, "shuffle", "shuffle");
		gboolean clash = FALSE;

		for (guint k = 0; k < n && !clash; k++) {
			g_autofree char *name = g_strdup_printf("%s%u", prefix, k);

			clash = g_hash_table_contains(threads, name);
		}
		if (!clash)
			return prefix;
		g_free(prefix);
	}
}

/* ---- the whole ---- */

/* ---- the maker: tasks made as a run starts them ---- */

typedef struct {
	GsTaskMaker base;
	GsGenerate g;
	guint n_threads;
	gboolean spillable;  /* the workload spills */
	gboolean templated;
	Plan template;       /* when templated */
	GRand *start;        /* the draws of the first task, kept for a rewind */
	GRand *rand;         /* the draws of base.next */
} Maker;

/* A templated task's size factor: its jitter, and the skew if it is one of the first. */
static double
draw_factor(GRand *rand, const GsGenerate *g, guint nth)
{
	double factor = g_rand_double_range(rand, 1.0 - g->jitter, 1.0 + g->jitter);

	if (g->jitter == 0.0)
		factor = 1.0;
	if (nth < g->skew_tasks)
		factor *= g->skew_factor;
	return factor;
}

static void
maker_make(GsTaskMaker *base, GsTaskSpec *task, guint nth)
{
	Maker *m = (Maker *) base;
	Plan plan;

	if (m->templated) {
		double factor = draw_factor(m->rand, &m->g, nth);

		if (task != NULL)
			build_task(task, &m->template, factor, m->g.retry_blocks, m->spillable);
		return;
	}
	plan_task(m->rand, &m->g, m->n_threads, &plan);
	if (task != NULL)
		build_task(task, &plan, 1.0, m->g.retry_blocks, m->spillable);
	plan_clear(&plan);
}

static void
maker_rewind(GsTaskMaker *base)
{
	Maker *m = (Maker *) base;

	g_rand_free(m->rand);
	m->rand = g_rand_copy(m->start);
}

static void
maker_free(GsTaskMaker *base)
{
	Maker *m = (Maker *) base;

	plan_clear(&m->template);
	g_rand_free(m->start);
	g_rand_free(m->rand);
	g_free(m);
}

/* A maker of @w's generated tasks from task @first on, its draws where @rand is. */
static Maker *
maker_new(const GsWorkload *w, guint first, GRand *rand)
{
	Maker *m = g_new0(Maker, 1);

	m->base = (GsTaskMaker){.first = first, .next = first, .make = maker_make,
				.rewind = maker_rewind, .free = maker_free};
	m->g = w->generate;
	m->n_threads = MAX(w->generate.threads_per_task, 1);
	m->spillable = w->policy.spill.enabled;
	/* No task, no template: one for millions of threads would be made for nothing. */
	m->templated = m->g.skew_tasks > 0 && m->g.tasks > 0;
	if (m->templated)
		plan_task(rand, &m->g, m->n_threads, &m->template);
	m->start = g_rand_copy(rand);
	m->rand = g_rand_copy(rand);
	return m;
}

/* @rand past the draws of every task @m makes: where the shuffle threads' begin. */
static void
skip_tasks(Maker *m, GRand *rand)
{
	GRand *mine = m->rand;

	m->rand = rand;
	for (guint i = 0; i < m->g.tasks; i++)
		maker_make(&m->base, NULL, i);
	m->rand = mine;
}

/* A workload that already has a maker (a second generate): its tasks are all made, and it goes. */
static void
make_all(GsWorkload *w)
{
	for (guint i = w->maker->first; i < w->tasks->len; i++)
		gs_workload_make_task(w, i);
	w->maker->free(w->maker);
	w->maker = NULL;
}

void
gs_generate_tasks(GsWorkload *w)
{
	const GsGenerate *g;
	g_autoptr(GRand) rand = NULL;
	g_autoptr(GHashTable) ids = NULL;
	g_autoptr(GHashTable) threads = NULL;
	g_autofree char *prefix = NULL;
	g_autofree char *sprefix = NULL;
	guint n_threads, first;
	Maker *m;

	g_return_if_fail(w != NULL);
	g = &w->generate;
	if (!g->enabled)
		return;
	if (w->maker != NULL)
		make_all(w);
	if (g->model == GS_GENERATE_MONTECARLO) {
		gs_montecarlo_tasks(w);
		return;
	}
	n_threads = MAX(g->threads_per_task, 1);
	first = w->tasks->len;

	ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint i = 0; i < w->tasks->len; i++) {
		GsTaskSpec *task = w->tasks->pdata[i];

		g_hash_table_add(ids, g_strdup(task->id));
		take_thread_names(threads, task->threads);
	}
	take_thread_names(threads, w->pool_threads);
	prefix = task_prefix(ids, threads, g->tasks, n_threads);

	rand = seeded(w->seed);
	m = maker_new(w, first, rand);
	for (guint i = 0; i < g->tasks; i++) {
		g_autofree char *id = g_strdup_printf("%s%u", prefix, i);

		g_ptr_array_add(w->tasks, gs_task_spec_new(id));
	}
	w->maker = &m->base;
	if (g->shuffle_threads == 0)
		return;

	/*
	 * A generated thread's name has a dot and a shuffle thread's none: only
	 * the names there before can clash.
	 */
	skip_tasks(m, rand);
	sprefix = shuffle_prefix(threads, g->shuffle_threads);
	for (guint k = 0; k < g->shuffle_threads; k++) {
		g_autofree char *name = g_strdup_printf("%s%u", sprefix, k);

		g_ptr_array_add(w->pool_threads,
				build_shuffle(rand, g, name, k, g->shuffle_threads, first));
	}
}

/* ---- what model montecarlo shares (montecarlo.c) ---- */

GRand *
gs_generate_rand_new(guint64 seed)
{
	return seeded(seed);
}

void
gs_generate_prefixes(const GsWorkload *w, guint n_tasks, guint n_threads, guint n_shuffle,
		     char **prefix, char **shuffle)
{
	g_autoptr(GHashTable) ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autoptr(GHashTable) threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < w->tasks->len; i++) {
		GsTaskSpec *task = w->tasks->pdata[i];

		g_hash_table_add(ids, g_strdup(task->id));
		take_thread_names(threads, task->threads);
	}
	take_thread_names(threads, w->pool_threads);
	*prefix = task_prefix(ids, threads, n_tasks, n_threads);
	*shuffle = shuffle_prefix(threads, n_shuffle);
}
