/*
 * bench-engine: what the gpusim engine costs per decision, in ns per operation.
 *
 * With 1,000 and with 10,000 registered threads (thread i dedicated to task i,
 * all THREAD_RUNNING) it measures:
 *  - an uncontended GPU allocation + free pair on one thread, and separately the
 *    allocation (gs_engine_alloc_begin + gs_engine_alloc_success, blocking) and
 *    the free (gs_engine_dealloc); no other thread is in THREAD_ALLOC or
 *    THREAD_BLOCKED, so neither call scans the records;
 *  - the watchdog's deadlock check, gs_engine_check_deadlocks() with no
 *    outside ids, all RUNNING: the engine sees from its counts that fewer
 *    threads wait than there are tasks and skips the full check, which is
 *    what a check costs while most tasks run;
 *  - the pure check, gs_deadlock_check(), over views built here: all BLOCKED
 *    (it finds the deadlock and picks a victim, but changes nothing) and, for
 *    comparison, all RUNNING.
 * Each figure is the best of 5 runs of a loop sized to take about 80 ms. Every
 * decision and verdict is checked, so no work can be optimised away; nothing
 * about the timings is asserted.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <gpusim/gpusim.h>

#define N_REPS 5
#define TARGET_NS ((gint64) 80 * 1000 * 1000) /* one run of a measurement */
#define CALIBRATE_NS (TARGET_NS / 8)
#define ALLOC_BYTES 256

/* Set from every checked result, so the loops have an observable effect. */
static volatile guint64 sink;

static gint64
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
check(gboolean ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "bench-engine: unexpected result: %s\n", what);
		exit(EXIT_FAILURE);
	}
}

/* Runs @iters operations and returns the nanoseconds the timed part took. */
typedef gint64 (*BenchFn)(gpointer ctx, guint64 iters);

/* Sizes the loop to about TARGET_NS, then returns the best ns/op of N_REPS runs. */
static double
measure(BenchFn fn, gpointer ctx)
{
	guint64 iters = 1;
	gint64 elapsed;
	double best = 0.0;

	for (;;) {
		elapsed = fn(ctx, iters);
		if (elapsed >= CALIBRATE_NS || iters >= ((guint64) 1 << 40))
			break;
		iters *= 2;
	}
	iters = MAX((guint64) 1, (guint64) ((double) iters * TARGET_NS / MAX(elapsed, (gint64) 1)));
	for (int rep = 0; rep < N_REPS; rep++) {
		double per_op = (double) fn(ctx, iters) / (double) iters;

		if (rep == 0 || per_op < best)
			best = per_op;
	}
	return best;
}

/* ---- the engine, with every thread registered and RUNNING ---- */

typedef struct {
	GsEngine *engine;
	GsThreadId thread; /* the one that allocates and frees */
	GsTime now;        /* the engine never reads a clock: a counter will do */
} EngineBench;

static void
engine_bench_init(EngineBench *b, guint n_threads)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;

	b->engine = gs_engine_new(&opts);
	b->now = 0;
	for (guint i = 1; i <= n_threads; i++) {
		GsEngineError err = gs_engine_register_dedicated(b->engine, (GsThreadId) i,
								 (GsTaskId) i, b->now++);

		check(err == GS_ENGINE_ERROR_NONE, "registration");
	}
	b->thread = 1;
	check(gs_engine_n_threads(b->engine) == n_threads, "thread count");
	check(gs_engine_n_in_state(b->engine, GS_THREAD_RUNNING) == n_threads, "all RUNNING");
}

/* Checks that the benchmarks left the engine as they found it, with no scans. */
static void
engine_bench_finish(EngineBench *b, guint n_threads, guint64 n_checks_expected)
{
	check(gs_engine_check_invariants(b->engine) == NULL, "engine invariants");
	check(gs_engine_n_in_state(b->engine, GS_THREAD_RUNNING) == n_threads, "all RUNNING");
	check(gs_engine_gpu_allocated(b->engine) == 0, "GPU bytes balance");
	check(gs_engine_n_checks(b->engine) == n_checks_expected, "deadlock checks run");
	check(gs_engine_n_busts(b->engine) == 0, "no busts");
	check(gs_engine_pending_wakes(b->engine) == 0, "no wake-ups");
	gs_engine_free(b->engine);
	b->engine = NULL;
}

static void
do_alloc(EngineBench *b)
{
	GsDecision d = gs_engine_alloc_begin(b->engine, b->thread, GS_KIND_GPU, TRUE, b->now++);

	check(d.verdict == GS_VERDICT_PROCEED && !d.recursive, "alloc_begin proceeds");
	d = gs_engine_alloc_success(b->engine, b->thread, GS_KIND_GPU, ALLOC_BYTES, d.recursive,
				    b->now++);
	check(d.verdict == GS_VERDICT_PROCEED, "alloc_success proceeds");
}

static void
do_free(EngineBench *b)
{
	gs_engine_dealloc(b->engine, b->thread, GS_KIND_GPU, ALLOC_BYTES, b->now++);
}

static gint64
bench_pair(gpointer ctx, guint64 iters)
{
	EngineBench *b = ctx;
	gint64 start = now_ns();

	for (guint64 i = 0; i < iters; i++) {
		do_alloc(b);
		do_free(b);
	}
	return now_ns() - start;
}

/* Times @iters allocations; frees them again, untimed. */
static gint64
bench_alloc(gpointer ctx, guint64 iters)
{
	EngineBench *b = ctx;
	gint64 start = now_ns(), elapsed;

	for (guint64 i = 0; i < iters; i++)
		do_alloc(b);
	elapsed = now_ns() - start;
	sink = (guint64) gs_engine_gpu_allocated(b->engine);
	for (guint64 i = 0; i < iters; i++)
		do_free(b);
	return elapsed;
}

/* Allocates @iters times, untimed; times freeing them. */
static gint64
bench_free(gpointer ctx, guint64 iters)
{
	EngineBench *b = ctx;
	gint64 start, elapsed;

	for (guint64 i = 0; i < iters; i++)
		do_alloc(b);
	start = now_ns();
	for (guint64 i = 0; i < iters; i++)
		do_free(b);
	elapsed = now_ns() - start;
	sink = (guint64) gs_engine_gpu_allocated(b->engine);
	return elapsed;
}

static guint64 n_engine_checks;

static gint64
bench_engine_check(gpointer ctx, guint64 iters)
{
	EngineBench *b = ctx;
	gint64 start = now_ns();

	for (guint64 i = 0; i < iters; i++) {
		gboolean deadlocked = gs_engine_check_deadlocks(b->engine, NULL, 0, b->now++);

		check(!deadlocked, "no deadlock while all RUNNING");
	}
	n_engine_checks += iters;
	return now_ns() - start;
}

/* ---- the pure check over views built here ---- */

typedef struct {
	GsThreadView *views;
	const GsThreadView **ptrs;
	guint n_threads;
	GsTaskPriorities *prio;
	GsDeadlockScratch *scratch;
	GsDeadlockOpts opts;
	gboolean expect_deadlock;
} PureBench;

static void
pure_bench_init(PureBench *b, guint n_threads)
{
	GsDeadlockOpts opts = GS_DEADLOCK_OPTS_DEFAULT;

	b->n_threads = n_threads;
	b->views = g_new0(GsThreadView, n_threads);
	b->ptrs = g_new(const GsThreadView *, n_threads);
	b->prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	b->scratch = gs_deadlock_scratch_new();
	b->opts = opts;
	for (guint i = 0; i < n_threads; i++) {
		GsThreadView *v = &b->views[i];

		v->id = (GsThreadId) i + 1;
		v->task = (GsTaskId) i + 1;
		v->alloc_kind = GS_KIND_GPU;
		b->ptrs[i] = v;
		/* Tasks start in id order, as the engine would register them. */
		(void) gs_task_priorities_get(b->prio, v->task);
	}
}

static void
pure_bench_set_state(PureBench *b, GsThreadState state)
{
	for (guint i = 0; i < b->n_threads; i++) {
		b->views[i].state = state;
		check(gs_thread_view_check(&b->views[i]) == NULL, "view is valid");
	}
	b->expect_deadlock = state == GS_THREAD_BLOCKED;
}

static void
pure_bench_finish(PureBench *b)
{
	gs_deadlock_scratch_free(b->scratch);
	gs_task_priorities_free(b->prio);
	g_free(b->ptrs);
	g_free(b->views);
}

static gint64
bench_pure_check(gpointer ctx, guint64 iters)
{
	PureBench *b = ctx;
	/* FIFO: the last task started ranks lowest, so its thread rolls back. */
	const GsThreadView *victim = b->expect_deadlock ? &b->views[b->n_threads - 1] : NULL;
	gint64 start = now_ns();

	for (guint64 i = 0; i < iters; i++) {
		GsDeadlockVerdict v = gs_deadlock_check(b->ptrs, b->n_threads, b->prio, &b->opts,
							NULL, 0, b->scratch);

		check(v.deadlocked == b->expect_deadlock, "deadlock verdict");
		check(v.n_tasks == b->n_threads, "task count");
		check(v.rollback == victim && v.split == NULL, "victims");
		sink = v.n_blocked_tasks;
	}
	return now_ns() - start;
}

/* ---- the table ---- */

enum {
	ROW_PAIR,
	ROW_ALLOC,
	ROW_FREE,
	ROW_ENGINE_CHECK_RUNNING,
	ROW_PURE_CHECK_BLOCKED,
	ROW_PURE_CHECK_RUNNING,
	N_ROWS
};

static const char *const row_names[N_ROWS] = {
	[ROW_PAIR] = "alloc+free pair, uncontended",
	[ROW_ALLOC] = "  alloc (alloc_begin + alloc_success)",
	[ROW_FREE] = "  free (dealloc)",
	[ROW_ENGINE_CHECK_RUNNING] = "deadlock check, all running (engine, fast path)",
	[ROW_PURE_CHECK_BLOCKED] = "deadlock check, all blocked (pure check)",
	[ROW_PURE_CHECK_RUNNING] = "deadlock check, all running (pure check)",
};

static const struct {
	guint n;
	const char *label;
} sizes[] = {
	{1000, "1,000 threads"},
	{10000, "10,000 threads"},
};

#define N_SIZES G_N_ELEMENTS(sizes)

static void
run_size(guint n_threads, double *col /* [N_ROWS] */)
{
	EngineBench eb;
	PureBench pb;

	engine_bench_init(&eb, n_threads);
	n_engine_checks = 0;
	col[ROW_PAIR] = measure(bench_pair, &eb);
	col[ROW_ALLOC] = measure(bench_alloc, &eb);
	col[ROW_FREE] = measure(bench_free, &eb);
	check(gs_engine_n_checks(eb.engine) == 0, "no deadlock check while uncontended");
	col[ROW_ENGINE_CHECK_RUNNING] = measure(bench_engine_check, &eb);
	engine_bench_finish(&eb, n_threads, n_engine_checks);

	pure_bench_init(&pb, n_threads);
	pure_bench_set_state(&pb, GS_THREAD_BLOCKED);
	col[ROW_PURE_CHECK_BLOCKED] = measure(bench_pure_check, &pb);
	pure_bench_set_state(&pb, GS_THREAD_RUNNING);
	col[ROW_PURE_CHECK_RUNNING] = measure(bench_pure_check, &pb);
	pure_bench_finish(&pb);
}

static void
print_table(double results[N_SIZES][N_ROWS])
{
	printf("%-48s", "operation (ns per operation)");
	for (guint s = 0; s < N_SIZES; s++)
		printf("  %17s", sizes[s].label);
	printf("  %12s\n", "10k / 1k");
	for (int r = 0; r < N_ROWS; r++) {
		printf("%-48s", row_names[r]);
		for (guint s = 0; s < N_SIZES; s++)
			printf("  %11.1f ns/op", results[s][r]);
		printf("  %11.2fx\n", results[N_SIZES - 1][r] / results[0][r]);
	}
}

int
main(void)
{
	double results[N_SIZES][N_ROWS];
	gint64 start = now_ns();

	printf("gpusim %s engine benchmark: cost per engine operation in ns (wall clock, "
	       "best of %d runs of ~%d ms each)\n",
	       gs_version(), N_REPS, (int) (TARGET_NS / 1000000));
	printf("Threads are dedicated to distinct tasks and RUNNING; GPU kind, blocking; one "
	       "thread allocates and frees.\n");
	printf("Note: figures vary by machine and build; compare them as ratios within one "
	       "run.\n\n");
	fflush(stdout);

	for (guint s = 0; s < N_SIZES; s++)
		run_size(sizes[s].n, results[s]);

	print_table(results);
	printf("\n(pure check: gs_deadlock_check() on views built by the benchmark, FIFO "
	       "priorities, reused scratch; total %.1f s)\n",
	       (double) (now_ns() - start) / 1e9);
	return EXIT_SUCCESS;
}
