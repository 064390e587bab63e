/*
 * gpusim: generate: with model montecarlo (SPEC §3.7): the tasks of one
 * "situation" of spark-rapids-jni's Monte Carlo simulator, RmmSparkMonteCarlo
 * (src/test/java/com/nvidia/spark/rapids/jni/RmmSparkMonteCarlo.java),
 * made by its rules and written in gpusim's ops.
 *
 * This module decides which tasks and threads such a section adds to a
 * workload, and nothing else: the ops are plain GsOp data that the
 * interpreter replays like any written by hand. It makes every task at once,
 * in gs_montecarlo_tasks(), and gives the workload no maker (GsTaskMaker,
 * workload.h): with shuffle threads a task frees a buffer that a shuffle
 * thread allocated, and the passes over a workload's ops before a run
 * (gs_workload_frees_across_threads()) must see that free. Its memory
 * therefore grows with tasks x max_allocs, which the loader bounds.
 *
 * The tool's options, as keys. In generate: --numTasks is tasks,
 * --taskMaxMiB task_max, --maxTaskAllocs max_allocs, --maxTaskSleep
 * max_compute (the tool's "sleep" is a busy wait, a loop of Thread.yield,
 * which gpusim calls compute), --shuffleThreads shuffle_threads,
 * --useTemplate template, --templateChangeAmount template_change, --skewed
 * skew.tasks 1, --skewAmount skew.factor; a key left out takes the tool's
 * default (12 tasks, 300 MiB, 50, 100 ms, 0 shuffle threads, no template,
 * change 0.05, no skew, factor 2.0), and retry_blocks (default true) false
 * leaves out every retry block. Outside it: --seed is seed, --parallel
 * executor.slots, --gpuMiB memory.gpu.capacity, --taskRetry n is
 * policy.task_attempts n + 1 (a failed task goes to the back of the queue
 * until its retry count exceeds n), the default --allocMode ASYNC's
 * failure handler (one more try) policy.failure_callback {enabled: true,
 * retries: 1}, --baseline policy.oom fail; --iter has no key: a run is one
 * situation, and another seed another situation.
 *
 * The rules, in the order the decisions are made:
 *
 * Randomness. One GRand, seeded from w->seed as model gpusim seeds it
 * (generate.h), consumed in the order the tool consumes its
 * java.util.Random: task by task (rule 2 for a task drawn, rule 3 for a
 * task varied from the template), then the skewed tasks (rule 4); building
 * the ops (rules 5 and 6) draws nothing. gpusim does not replay Java's
 * stream, and need not: the rules are the tool's, the draws another
 * generator's, so seed 7 here is another situation than --seed=7 there.
 * "Uniform in [0, n)" for a size or
 * a time takes two 32-bit draws (64 bits) modulo n; a count uniform in
 * [0, n) is g_rand_int_range; a double is g_rand_double, in [0, 1). The
 * same workload and seed give the same tasks, byte for byte.
 *
 * 1. Tasks (Situation's constructor). Without a template every task is
 *    drawn by rule 2 in turn. With one (template: true, or skew.tasks > 0,
 *    as --skewed implies --useTemplate) task 0 is drawn by rule 2 and is the
 *    template itself, unchanged, and each later task is the template varied
 *    by rule 3.
 *
 * 2. One task (TaskOpSet's constructor).
 *    a. Its busy time in total, T: uniform in [0, max_compute); no draw and
 *       T = 0 when max_compute is 0.
 *    b. Its allocations: n = 1 + uniform in [0, max_allocs) (max_allocs is
 *       at least 1).
 *    c. n weights w_k = 0.00001 + a double, one per allocation, in order.
 *    d. 2n steps. With R = task_max less the bytes it holds, a step
 *       allocates when fewer than n allocations are made, R > 0, and nothing
 *       is held or a double exceeds 0.40 (drawn only when the two before
 *       hold and something is held); the size is 1 + uniform in [0, R), and
 *       the k-th allocation is buffer b<k>. Otherwise the step frees a held
 *       buffer picked uniformly (in allocation order). So every buffer is
 *       freed, and the task never holds more than task_max.
 *    e. Allocation k is followed by T_k of busy time: T cut at the weights'
 *       running sums, T_k = floor(T C_k / W) - floor(T C_(k-1) / W) with
 *       C_k = w_0 + ... + w_k, W = C_(n-1), and the last cut at T itself:
 *       the shares sum to T exactly, where the tool rounds each down alone
 *       and loses up to a nanosecond apiece.
 *
 * 3. A varied task (AllocOp.randomMod). For each allocation of the template
 *    in order a double u is drawn, and d = (1 - 2u) x template_change, in
 *    (-c, c]. Its size s becomes floor(s x (1 + d)) under
 *    template_arithmetic intended, the default: what the tool's --help says
 *    ("change by +/- templateChangeAmount as a multiplier"); or floor(s x d)
 *    under code, what randomMod computes, which makes every size at most
 *    c x s and, for half the draws (d <= 0), 1 byte. Either way at least 1
 *    byte. Frees, their order and busy times are the template's.
 *
 * 4. Skew (Situation's constructor, Task.makeSkewed). Then min(skew.tasks,
 *    tasks) tasks are skewed, each picked uniformly among those not yet
 *    picked (for one, as --skewed, a pick among all tasks): every allocation
 *    of a picked task becomes floor(s x skew.factor), at least 1 byte (the
 *    tool's can reach 0 for a factor below 1). Busy times stay.
 *
 * 5. A task's thread (TaskRunnerThread running Task.run). A task is one
 *    dedicated thread, "<id>.0". With retry_blocks every op of it is in one
 *    retry block (split halves, max_splits 16, no input), Task.run's one
 *    retry block around its work list: a RetryOOM frees every buffer of the
 *    attempt and runs the ops again from the first (TaskOpSet.run), a
 *    SplitAndRetryOOM replaces them with two halves run in turn
 *    (TaskOpSet.split), every allocation halved (below 256 B repeated) as
 *    SPEC §3.5.1 splits. Without retry_blocks the same ops stand alone, and
 *    so do the shuffle threads' (rule 6). Allocation k is `alloc b<k>`
 *    (GPU, blocking, not spillable, no reservation, device 0) and then
 *    `compute: T_k` (no uses, no stream; none when T_k is 0); a free is
 *    `free: b<k>`.
 *
 * 6. Shuffle threads (shuffle_threads > 0; TaskOpSet.run's shuffle path).
 *    Pool threads "shuffle0", ... (shuffle: true, on_oom continue); shuffle
 *    thread j serves the tasks i with i mod shuffle_threads = j, in task
 *    order. A task's first op, always allocation 0, runs on its shuffle
 *    thread while the task waits on the pool, and the task frees the buffer
 *    later. The task's thread, inside its retry block: `alloc submit` of 0
 *    bytes (the submission), `wait_on_pool: true`, `free: {buf:
 *    <id>.ready, thread: shuffle<j>}` (it waits until the shuffle thread has
 *    made it), `wait_on_pool: false`, `free: submit`, then its ops from the
 *    second on, the free of buffer 0 being `free: {buf: <id>.b0, thread:
 *    shuffle<j>}`. The shuffle thread, for each task it serves: `free: {buf:
 *    submit, thread: <id>.0}` (it waits until the task has submitted),
 *    `pool: {work_for: [i]}`, a retry block (split none, max_splits 16;
 *    MemoryOp.doIt's loop, which retries on RetryOOM and never splits)
 *    holding `alloc <id>.b0` of allocation 0's size and `compute: T_0`,
 *    `pool: {done_for: [i]}`, and `alloc <id>.ready` of 0 bytes. The two
 *    0-byte allocations stand for the tool's Future: each takes the
 *    allocation latency, and, as any allocation or free does, may wake a
 *    blocked thread.
 *
 * Where gpusim's ops cannot say what the tool does, and what they say instead:
 *    - The shuffle thread serves a task once, for the first attempt of its
 *      op-set. The tool runs allocation 0 again on the task's own thread
 *      after a RetryOOM, on the shuffle pool again for each half of a split
 *      and for a re-attempt of the task, and frees it with the others when
 *      an attempt ends. Here a rerun, a half or a re-attempt submits again
 *      (a 0-byte allocation it frees itself), passes the hand-off at once
 *      and has no allocation 0; and buffer 0, if its free is yet to run,
 *      stays held by the shuffle thread until the free runs (in the rerun,
 *      the first half or the re-attempt), through the wait in BUFN or in
 *      the queue.
 *    - The tool keeps each allocation's whole sleep in both halves of a
 *      split; gpusim halves compute times in a split (SPEC §3.5.1), and a
 *      `sleep` op, which keeps its time, would count as waiting.
 *    - The tool's shuffle pool is a queue any of its threads takes from;
 *      here each task has its shuffle thread.
 *    - A shuffle thread's failure (a split its retry refuses, a fatal OOM)
 *      fails the task's attempt in the tool ("Came From Shuffle"); here the
 *      shuffle thread records it and goes on, and so does the task, without
 *      buffer 0.
 *    - The tool splits without end (sizes stop halving below 256 B); here
 *      max_splits 16 splits on a path end in CouldNotSplit. Its shuffle
 *      threads give up after 100 RetryOOMs; here policy.retry_cap counts.
 *
 * Names, as model gpusim's (generate.h): tasks "g0", "g1", ... (or the
 * first of "gen", "gen2_", ... whose ids and thread names are all free),
 * shuffle threads "shuffle0", ... (or "genshuffle0", ...). Tasks start at 0,
 * have no explicit priority and repeat once; ops carry line and column 0.
 */
#ifndef GPUSIM_SCENARIO_MONTECARLO_H
#define GPUSIM_SCENARIO_MONTECARLO_H

#include <gpusim/workload.h>

G_BEGIN_DECLS

/**
 * Appends w->generate.tasks tasks, every one made, to w->tasks and
 * w->generate.shuffle_threads shuffle threads to w->pool_threads, as the
 * module comment describes. gs_generate_tasks() calls it for model
 * montecarlo.
 */
void gs_montecarlo_tasks(GsWorkload *w);

/* The rules' arithmetic, for the tests. */

/** Rule 2e: @total cut at the running sums of @weights (@n > 0, each > 0) into @shares. */
void gs_montecarlo_busy_shares(GsTime total, const double *weights, guint n, GsTime *shares);

/** Rule 3: @size varied by the double @u and @change, by @arithmetic. */
gint64 gs_montecarlo_varied_size(gint64 size, double u, double change,
				 GsTemplateArithmetic arithmetic);

/** Rule 4: @size skewed by @factor. */
gint64 gs_montecarlo_skewed_size(gint64 size, double factor);

G_END_DECLS

#endif /* GPUSIM_SCENARIO_MONTECARLO_H */
