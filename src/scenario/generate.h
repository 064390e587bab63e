/*
 * gpusim: generated workloads (SPEC §3.7), in the spirit of the
 * spark-rapids-jni RmmSparkMonteCarlo simulator (reference §5.4).
 *
 * generate.model picks the rules. This comment states those of model gpusim
 * (the default); gs_generate_tasks() hands a section with model montecarlo,
 * the tool's own rules, to montecarlo.h, whose comment states them.
 *
 * This module decides which tasks and threads a `generate:` section adds to a
 * workload, and nothing else: the ops it writes are plain GsOp data that the
 * interpreter replays like any written by hand. The choices, in the order
 * they are made:
 *
 * Randomness. Everything random comes from one GRand seeded with w->seed
 * (g_rand_new_with_seed; a seed above 2^32 - 1 is fed as two 32-bit words
 * with g_rand_new_with_seed_array so that its high bits count) and consumed
 * in a fixed order: the tasks (or the template) in order, within a task its
 * total compute and then its threads in order, within a thread the steps in
 * order; then the jitter factors of templated tasks in task order; then the
 * shuffle threads in order. Nothing depends on hash order or on the clock, so
 * the same workload and seed give the same tasks byte for byte. A size drawn
 * "uniform in 1..n" uses two 32-bit draws (64 bits) modulo n.
 *
 * Names. Tasks are "g0", "g1", ...; if any of those ids or their thread names
 * is already taken (by a task id, resp. a dedicated or pool thread name), the
 * prefix "gen" is tried, then "gen2_", "gen3_", ... until none clashes. Each
 * task has threads_per_task dedicated threads (at least one) named
 * "<id>.<k>", k from 0. Shuffle threads are "shuffle0", ... (falling back
 * to "genshuffle", "gen2_shuffle", ... on a clash). In every thread the
 * buffers are "b0", "b1", ... in allocation order; no name is reused. Tasks
 * start at 0, have no explicit priority, repeat once; ops carry line and
 * column 0; threads keep on_oom fail.
 *
 * One thread's steps (RmmSparkMonteCarlo's rule). A task may hold task_max
 * bytes at once; its threads split that budget evenly (task_max / threads,
 * the first task_max % threads threads one byte more), so whatever the
 * threads' interleaving the task never holds more than task_max. A thread
 * makes n = 1 + rand(max_allocs) allocations (none if max_allocs is 0) and n
 * frees. At each step it allocates if allocations remain, budget remains, and
 * nothing is outstanding or a draw in [0, 1) exceeds 0.40 (drawn only when
 * something is outstanding); the size is uniform in 1..remaining budget.
 * Otherwise it frees a uniformly chosen outstanding buffer, giving its bytes
 * back to the budget. Once n allocations are made the loop goes on freeing
 * random outstanding buffers until none is left, so every thread frees all it
 * allocates. A thread with no budget (task_max smaller than the number of
 * threads, or 0) has no ops.
 *
 * Compute. Each task draws a total compute uniform in [0, max_compute] and
 * spreads it exactly over all its allocations (in thread order, then step
 * order): each gets total / N, the first total % N one nanosecond more. Each
 * allocation is followed by one synchronous `compute` of its share (no
 * `uses`, no stream), so a task's compute sums to at most max_compute.
 *
 * Allocations are GPU, blocking, not spillable, with no reservation, on
 * device 0.
 *
 * Retry blocks. With retry_blocks every op of a task thread belongs to one
 * op-set: an allocation, its compute, and the frees that follow until the
 * next allocation. Each op-set is wrapped in a `retry` op (split halves,
 * max_splits 16, no input buffers). A split therefore halves the op-set's
 * allocation and compute; its frees run in the first half and are no-ops in
 * the second. Without retry_blocks the ops are flat.
 *
 * Skew and templates. When skew is used (skew.tasks > 0) the tasks are
 * templated, as --skewed implies --useTemplate in the reference: one task is
 * generated as a template, and each task is a copy whose sizes are scaled by
 * a factor uniform in [1 - jitter, 1 + jitter) (jitter 0: exactly 1), times
 * skew.factor for the first skew.tasks tasks (all of them if skew.tasks
 * exceeds tasks). A scaled size is floor(size x factor), at least 1 (so a
 * factor <= 0 gives sizes of 1 byte). Compute is copied unscaled. Without skew
 * every task is drawn independently and jitter has no effect.
 *
 * Shuffle threads. shuffle_threads pool threads (shuffle = TRUE) are appended
 * to w->pool_threads. Shuffle thread k serves the generated tasks i with
 * i mod shuffle_threads = k, in order: for each, `pool: {work_for: [i]}` (i
 * as an index into w->tasks), 1..3 allocations of sizes uniform in
 * 1..max(1, task_max / 16), one `free` of them all, and
 * `pool: {done_for: [i]}`. With retry_blocks the allocations and the free of
 * each served task are wrapped in a `retry` with split none (max_splits 16):
 * the reference's shuffle threads retry on RetryOOM but never split. A
 * shuffle thread with no task to serve has no ops. Shuffle threads do not
 * compute.
 *
 * Made as they start. gs_generate_tasks() appends the tasks as shells (their
 * ids) and gives the workload a maker (GsTaskMaker, workload.h) that builds a
 * task's threads when a run starts it, from the draws the order above gives
 * it, and lets the run drop them when the task is over: a run holds the ops
 * of the tasks it runs, not of every task, and the ops are the same byte for
 * byte. The shuffle threads are built at once, after the draws of every task
 * have gone by. Generated ops are of the kinds a maker may make: a pass over
 * the workload's ops before its tasks are made misses none that it looks for.
 *
 * gs_generate_tasks() does nothing when generate.enabled is FALSE. Calling it
 * twice appends a second, differently named set drawn from the same seed
 * (the first set is made whole then).
 */
#ifndef GPUSIM_SIM_GENERATE_H
#define GPUSIM_SIM_GENERATE_H

#include <gpusim/workload.h>

G_BEGIN_DECLS

/**
 * Appends w->generate.tasks generated tasks to w->tasks, made as a run
 * starts them (gs_workload_make_task()), and w->generate.shuffle_threads
 * shuffle threads to w->pool_threads, as the module comment describes; a
 * no-op unless w->generate.enabled. With model montecarlo it hands the
 * section to gs_montecarlo_tasks() instead, which makes every task at once.
 */
void gs_generate_tasks(GsWorkload *w);

/*
 * For model montecarlo (montecarlo.c), the same choices as model gpusim's:
 * a GRand seeded from @seed as the Randomness paragraph says, and the
 * prefixes of n_tasks task ids with n_threads threads each and of n_shuffle
 * shuffle threads, as the Names paragraph says (both g_free'd by the caller).
 */
GRand *gs_generate_rand_new(guint64 seed);

/** Uniform in [0, @n) from two 32-bit draws (both always drawn, so the order is fixed); 0 if @n <= 0. */
gint64 gs_generate_uniform(GRand *rand, gint64 n);

/** Uniform in [0, @n) for a count @n >= 1, from one draw. */
guint gs_generate_pick(GRand *rand, guint n);
void gs_generate_prefixes(const GsWorkload *w, guint n_tasks, guint n_threads, guint n_shuffle,
			  char **prefix, char **shuffle);

/*
 * Ops as both models write them: a retry block splits up to 16 times (SPEC
 * §3.5's default); an allocation is of GPU memory, blocking, preferring
 * pinned host memory when spilled, with no reservation, on device 0; a
 * compute runs on no stream.
 */
/** Appends a retry block splitting by @split around a fresh op list and returns that list. */
GArray *gs_generate_add_retry(GArray *ops, GsSplitMode split);

void gs_generate_add_alloc(GArray *ops, guint buf, gint64 size, gboolean spillable);

/** A compute of @time; with @uses >= 0 it uses that buffer (brought back first if spilled). */
void gs_generate_add_compute(GArray *ops, GsTime time, gint uses);

/** A free of the @n buffers @bufs; the returned op's thread names another thread's. */
GsOp *gs_generate_add_free(GArray *ops, const guint *bufs, guint n);

/** `pool: {work_for: [@task]}`, or with @done `pool: {done_for: [@task]}`. */
void gs_generate_add_pool(GArray *ops, guint task, gboolean done);

G_END_DECLS

#endif /* GPUSIM_SIM_GENERATE_H */
