/*
 * gpusim: generating tasks by RmmSparkMonteCarlo's rules (montecarlo.h).
 *
 * Two passes: every task is drawn first as the tool's op list (a plan of
 * steps: allocate buffer k of a size and then be busy for a time, or free
 * buffer k), varied and skewed as the rules say; then ops are built from the
 * plans. Building draws nothing.
 */
#include "config.h"

#include "scenario/generate.h"
#include "scenario/montecarlo.h"

/* TaskOpSet allocates (when it may) if a draw exceeds this. */
#define ALLOC_THRESHOLD 0.40
/* What TaskOpSet adds to each sleep weight, so that none is 0. */
#define WEIGHT_FLOOR 0.00001

/* One step of a task: allocate buffer @buf of @size bytes and then be busy @busy, or free it. */
typedef struct {
	gboolean alloc;
	guint buf;
	gint64 size;
	GsTime busy;
} Step;

/* ---- the rules' arithmetic ---- */

void
gs_montecarlo_busy_shares(GsTime total, const double *weights, guint n, GsTime *shares)
{
	double sum = 0, running = 0;
	GsTime cut = 0;

	g_return_if_fail(n > 0 && total >= 0);
	for (guint k = 0; k < n; k++)
		sum += weights[k];
	for (guint k = 0; k < n; k++) {
		GsTime next = total;

		running += weights[k];
		if (k + 1 < n && running < sum) {
			double v = (double) total * (running / sum);

			/* >= 0, and below total as a double, so below 2^63: the cast floors. */
			next = v < (double) total ? MIN((GsTime) v, total) : total;
		}
		next = MAX(next, cut);
		shares[k] = next - cut;
		cut = next;
	}
}

gint64
gs_montecarlo_varied_size(gint64 size, double u, double change, GsTemplateArithmetic arithmetic)
{
	double d = (1.0 - 2.0 * u) * change;
	double factor = arithmetic == GS_TEMPLATE_CODE ? d : 1.0 + d;

	return MAX(gs_bytes_scaled(size, factor), 1);
}

gint64
gs_montecarlo_skewed_size(gint64 size, double factor)
{
	return MAX(gs_bytes_scaled(size, factor), 1);
}

/* ---- drawing ---- */

/* Rule 2: one task's steps (TaskOpSet's constructor). */
static GArray *
draw_task(GRand *rand, const GsGenerate *g)
{
	GsTime total = g->max_compute > 0 ? gs_generate_uniform(rand, g->max_compute) : 0;
	guint n = 1 + gs_generate_pick(rand, MAX(g->max_allocs, 1));
	g_autofree double *weights = g_new(double, n);
	g_autofree GsTime *shares = g_new(GsTime, n);
	g_autofree gint64 *sizes = g_new(gint64, n);
	g_autoptr(GArray) held = g_array_new(FALSE, FALSE, sizeof(guint));
	GArray *steps = g_array_sized_new(FALSE, TRUE, sizeof(Step), 2 * n);
	gint64 bytes = 0;
	guint made = 0;

	for (guint k = 0; k < n; k++)
		weights[k] = WEIGHT_FLOOR + g_rand_double(rand);
	gs_montecarlo_busy_shares(total, weights, n, shares);
	for (guint i = 0; i < 2 * n; i++) {
		gint64 room = g->task_max - bytes;
		Step step = {0};

		if (made < n && room > 0 &&
		    (held->len == 0 || g_rand_double(rand) > ALLOC_THRESHOLD)) {
			step.alloc = TRUE;
			step.buf = made;
			step.size = 1 + gs_generate_uniform(rand, room);
			step.busy = shares[made];
			sizes[made] = step.size;
			bytes += step.size;
			g_array_append_val(held, made);
			made++;
		} else {
			guint j;

			/* 2n steps, n allocations: a free is due only while something is held. */
			g_assert(held->len > 0);
			j = gs_generate_pick(rand, held->len);
			step.buf = g_array_index(held, guint, j);
			g_array_remove_index(held, j);
			bytes -= sizes[step.buf];
		}
		g_array_append_val(steps, step);
	}
	return steps;
}

/* Rule 3: the template with each allocation's size varied by a draw of its own. */
static GArray *
vary(GRand *rand, const GArray *template, const GsGenerate *g)
{
	GArray *steps = g_array_copy((GArray *) template);

	for (guint i = 0; i < steps->len; i++) {
		Step *step = &g_array_index(steps, Step, i);

		if (step->alloc)
			step->size = gs_montecarlo_varied_size(step->size, g_rand_double(rand),
							       g->template_change,
							       g->template_arithmetic);
	}
	return steps;
}

/* Rules 1, 3 and 4: every task's steps, in task order. */
static GPtrArray *
draw_tasks(GRand *rand, const GsGenerate *g)
{
	GPtrArray *plans = g_ptr_array_new_with_free_func((GDestroyNotify) g_array_unref);
	gboolean templated = g->use_template || g->skew_tasks > 0;
	guint n_skewed = MIN(g->skew_tasks, g->tasks);
	g_autofree guint *order = NULL;

	for (guint i = 0; i < g->tasks; i++) {
		if (templated && i > 0)
			g_ptr_array_add(plans, vary(rand, plans->pdata[0], g));
		else
			g_ptr_array_add(plans, draw_task(rand, g));
	}
	if (n_skewed == 0)
		return plans;
	order = g_new(guint, g->tasks);
	for (guint i = 0; i < g->tasks; i++)
		order[i] = i;
	for (guint j = 0; j < n_skewed; j++) {
		guint p = j + gs_generate_pick(rand, g->tasks - j);
		GArray *steps = plans->pdata[order[p]];

		order[p] = order[j];
		for (guint i = 0; i < steps->len; i++) {
			Step *step = &g_array_index(steps, Step, i);

			if (step->alloc)
				step->size = gs_montecarlo_skewed_size(step->size, g->skew_factor);
		}
	}
	return plans;
}

/* ---- building ops ---- */

/* A new buffer name of @t: its index. */
static guint
add_buffer(GsThreadSpec *t, char *name)
{
	g_ptr_array_add(t->buffers, name);
	return t->buffers->len - 1;
}

/* Buffer @buf of @t is freed by another thread: it outlives @t. */
static void
give_away(GsThreadSpec *t, guint buf)
{
	if (t->given_away == NULL)
		t->given_away = g_array_new(FALSE, TRUE, sizeof(gboolean));
	if (buf >= t->given_away->len)
		g_array_set_size(t->given_away, buf + 1);
	g_array_index(t->given_away, gboolean, buf) = TRUE;
}

/* Appends a retry block (or, without retry blocks, nothing) and returns where ops go. */
static GArray *
open_retry(GArray *ops, gboolean retry_blocks, GsSplitMode split)
{
	return retry_blocks ? gs_generate_add_retry(ops, split) : ops;
}

static void
add_busy(GArray *ops, GsTime time)
{
	if (time > 0)
		gs_generate_add_compute(ops, time, -1);
}

/* A free of buffer @buf, of @owner's (then given away) or, with @owner NULL, the thread's own. */
static void
add_free(GArray *ops, guint buf, GsThreadSpec *owner)
{
	GsOp *op = gs_generate_add_free(ops, &buf, 1);

	if (owner != NULL) {
		op->free.thread = g_strdup(owner->name);
		give_away(owner, buf);
	}
}

static void
add_wait_on_pool(GArray *ops, gboolean wait)
{
	GsOp op = {.kind = GS_OP_WAIT_ON_POOL};

	op.wait_on_pool = wait;
	g_array_append_val(ops, op);
}

/*
 * Rules 5 and 6: task @task (w->tasks index @index) from @steps; with
 * @shuffle, allocation 0 goes to that shuffle thread, whose ops for the task
 * are appended.
 */
static void
build_task(GsTaskSpec *task, guint index, const GArray *steps, const GsGenerate *g,
	   GsThreadSpec *shuffle)
{
	g_autofree char *name = g_strdup_printf("%s.0", task->id);
	GsThreadSpec *t = gs_thread_spec_new(name);
	GArray *set = open_retry(t->ops, g->retry_blocks, GS_SPLIT_HALVES);
	g_autofree guint *bufs = g_new(guint, steps->len);
	guint first = 0;

	if (shuffle != NULL) {
		const Step *step = &g_array_index(steps, Step, 0);
		guint submit = add_buffer(t, g_strdup("submit"));
		guint ready;
		GArray *work;

		g_assert(step->alloc && step->buf == 0);
		bufs[0] = add_buffer(shuffle, g_strdup_printf("%s.b0", task->id));
		ready = add_buffer(shuffle, g_strdup_printf("%s.ready", task->id));
		/* The shuffle thread: the submission, then allocation 0 for the task. */
		add_free(shuffle->ops, submit, t);
		gs_generate_add_pool(shuffle->ops, index, FALSE);
		work = open_retry(shuffle->ops, g->retry_blocks, GS_SPLIT_NONE);
		gs_generate_add_alloc(work, bufs[0], step->size, FALSE);
		add_busy(work, step->busy);
		gs_generate_add_pool(shuffle->ops, index, TRUE);
		gs_generate_add_alloc(shuffle->ops, ready, 0, FALSE);
		/* The task: submit, and wait on the pool until allocation 0 is made. */
		gs_generate_add_alloc(set, submit, 0, FALSE);
		add_wait_on_pool(set, TRUE);
		add_free(set, ready, shuffle);
		add_wait_on_pool(set, FALSE);
		add_free(set, submit, NULL);
		first = 1;
	}
	for (guint i = first; i < steps->len; i++) {
		const Step *step = &g_array_index(steps, Step, i);

		if (!step->alloc) {
			add_free(set, bufs[step->buf], step->buf == 0 ? shuffle : NULL);
			continue;
		}
		bufs[step->buf] = add_buffer(t, g_strdup_printf("b%u", step->buf));
		gs_generate_add_alloc(set, bufs[step->buf], step->size, FALSE);
		add_busy(set, step->busy);
	}
	g_ptr_array_add(task->threads, t);
}

void
gs_montecarlo_tasks(GsWorkload *w)
{
	const GsGenerate *g;
	g_autoptr(GRand) rand = NULL;
	g_autoptr(GPtrArray) plans = NULL;
	g_autofree char *prefix = NULL;
	g_autofree char *sprefix = NULL;
	guint first, first_shuffle;

	g_return_if_fail(w != NULL);
	g = &w->generate;
	g_return_if_fail(g->model == GS_GENERATE_MONTECARLO);
	if (!g->enabled)
		return;
	gs_generate_prefixes(w, g->tasks, 1, g->shuffle_threads, &prefix, &sprefix);
	rand = gs_generate_rand_new(w->seed);
	plans = draw_tasks(rand, g);

	first_shuffle = w->pool_threads->len;
	for (guint k = 0; k < g->shuffle_threads; k++) {
		g_autofree char *name = g_strdup_printf("%s%u", sprefix, k);
		GsThreadSpec *t = gs_thread_spec_new(name);

		t->shuffle = TRUE;
		t->on_oom = GS_ON_OOM_CONTINUE;
		g_ptr_array_add(w->pool_threads, t);
	}
	first = w->tasks->len;
	for (guint i = 0; i < g->tasks; i++) {
		g_autofree char *id = g_strdup_printf("%s%u", prefix, i);
		GsTaskSpec *task = gs_task_spec_new(id);
		GsThreadSpec *shuffle = NULL;

		if (g->shuffle_threads > 0)
			shuffle = w->pool_threads->pdata[first_shuffle + i % g->shuffle_threads];
		g_ptr_array_add(w->tasks, task);
		build_task(task, first + i, plans->pdata[i], g, shuffle);
	}
}
