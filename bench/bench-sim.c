/*
 * bench-sim: how fast the simulator replays, and how much state it keeps.
 *
 * Generated loads, each built in code and replayed by gs_sim_run() with no
 * event log and, as `gpusim run` does when no --timeline, --trace or expect.at
 * needs it, no timeline (the contention load is also run keeping it):
 *  - timed wait: N threads (one per task) that only compute, a repeat of
 *    OPS computes of a few microseconds each (deterministic lengths), so every
 *    event is a thread resumption popped from the heap; in events per second;
 *    once more with 10,000 threads that also allocate and free 1 MiB around
 *    each compute (all of it fits), for the memory of a thread that allocates;
 *  - contention: 64 threads on a 16 GiB GPU under the retry policy, each
 *    looping allocate (1..1024 MiB) / compute / free, so that allocations
 *    block and are woken by frees (each thread holds one buffer at a time,
 *    so the state machine never needs a rollback: the run prints 0 retries);
 *    reported in allocate+free operations per second;
 *  - spill-heavy: a generated workload whose held outputs do not fit on the
 *    GPU, so that allocations spill them and computes bring them back.
 * Memory: the growth of the peak resident set (getrusage) during a run,
 * divided by the simulated threads; the workload (op lists) is built before,
 * and each timed-wait load runs in a process of its own, so that no memory a
 * previous load freed is reused unseen, after a 16-thread run that pages the
 * simulator's code in. It counts everything the run allocates: the simulator's
 * state (threads, interpreters, engine records, tasks, the event heap) and
 * the result it hands back (a row per task and per thread, their names).
 * Where glibc's mallinfo2() is available, the result's share is measured as
 * what is still allocated once the simulator has returned, and the state is
 * the rest. Figures vary by machine; compare them as ratios within one run.
 * Nothing here is asserted.
 */
#include "config.h"

#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scenario/generate.h"
#include "sim/sim.h"

#define OPS_PER_THREAD 100

static const GsRunOptions no_timeline = {.skip_timeline = TRUE};
#define MIB ((gint64) 1 << 20)
#define GIB (MIB * 1024)

static gint64
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long
peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Bytes the allocator has handed out and not got back; -1 where unknown. */
static long
allocated_bytes(void)
{
#ifdef HAVE_MALLINFO2
	struct mallinfo2 m = mallinfo2();

	return (long) (m.uordblks + m.hblkhd);
#else
	return -1;
#endif
}

static GsOp
compute_op(GsTime time)
{
	GsOp op = {.kind = GS_OP_COMPUTE};

	op.compute.time = time;
	op.compute.stream = -1;
	return op;
}

static GsTaskSpec *
task_with_thread(guint index)
{
	g_autofree char *id = g_strdup_printf("t%u", index);
	g_autofree char *name = g_strdup_printf("t%u.0", index);
	GsTaskSpec *task = gs_task_spec_new(id);

	g_ptr_array_add(task->threads, gs_thread_spec_new(name));
	return task;
}

static GsWorkload *
timed_wait_load(guint threads, gboolean allocating)
{
	GsWorkload *w = gs_workload_new();

	w->name = g_strdup("timed-wait");
	w->gpu.capacity = 16 * GIB; /* 1 MiB a thread always fits */
	w->policy.watchdog = 0;
	for (guint i = 0; i < threads; i++) {
		GsTaskSpec *task = task_with_thread(i);
		GsThreadSpec *t = task->threads->pdata[0];
		GsOp loop = {.kind = GS_OP_REPEAT};
		GsOp compute = compute_op(1000 + (GsTime) ((i * 7919u) % 5000));
		GsOp alloc = {.kind = GS_OP_ALLOC}, release = {.kind = GS_OP_FREE};

		/* repeat: {times: OPS, ops: [compute: T]}: a small op list per thread. */
		loop.repeat.times = OPS_PER_THREAD;
		loop.repeat.ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
		if (allocating) {
			alloc.alloc.buf = gs_name_index(t->buffers, "b");
			alloc.alloc.size = MIB;
			alloc.alloc.kind = GS_KIND_GPU;
			alloc.alloc.blocking = TRUE;
			alloc.alloc.reservation = -1;
			gs_names_append(&release.free.bufs, alloc.alloc.buf);
			g_array_append_val(loop.repeat.ops, alloc);
		}
		g_array_append_val(loop.repeat.ops, compute);
		if (allocating)
			g_array_append_val(loop.repeat.ops, release);
		g_array_append_val(t->ops, loop);
		g_ptr_array_add(w->tasks, task);
	}
	return w;
}

static GsWorkload *
contention_load(guint threads, guint loops)
{
	GsWorkload *w = gs_workload_new();
	GRand *rand = g_rand_new_with_seed(7);

	w->name = g_strdup("contention");
	w->gpu.capacity = 16 * GIB;
	w->links.alloc_latency = 0;
	for (guint i = 0; i < threads; i++) {
		GsTaskSpec *task = task_with_thread(i);
		GsThreadSpec *t = task->threads->pdata[0];
		GsOp retry = {.kind = GS_OP_RETRY};
		GsOp alloc = {.kind = GS_OP_ALLOC}, release = {.kind = GS_OP_FREE};
		guint buf = gs_name_index(t->buffers, "b");

		retry.retry.split = GS_SPLIT_HALVES;
		retry.retry.max_splits = 16;
		retry.retry.ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
		alloc.alloc.buf = buf;
		alloc.alloc.kind = GS_KIND_GPU;
		alloc.alloc.blocking = TRUE;
		alloc.alloc.reservation = -1;
		for (guint k = 0; k < loops; k++) {
			GsOp compute = compute_op(g_rand_int_range(rand, 1000, 20000));

			alloc.alloc.size = g_rand_int_range(rand, 1, 1024) * MIB;
			release.free.bufs = (GsNames){0};
			gs_names_append(&release.free.bufs, buf);
			g_array_append_val(retry.retry.ops, alloc);
			g_array_append_val(retry.retry.ops, compute);
			g_array_append_val(retry.retry.ops, release);
		}
		g_array_append_val(t->ops, retry);
		g_ptr_array_add(w->tasks, task);
	}
	g_rand_free(rand);
	return w;
}

/* What a run added to the process: in all, and the result's share (-1: unknown). */
typedef struct {
	double total, result;
} Footprint;

/* A small run first pages the simulator's code in, so that the growth measured next is data. */
static void
warm_up(gboolean allocating)
{
	GsWorkload *w = timed_wait_load(16, allocating);

	gs_result_free(gs_sim_run(w, &no_timeline));
	gs_workload_free(w);
}

static Footprint
bench_timed_wait(guint threads, gboolean allocating)
{
	GsWorkload *w = timed_wait_load(threads, allocating);
	long before, held_before;
	gint64 start;
	GsResult *r;

	warm_up(allocating);
	before = peak_rss_kib();
	held_before = allocated_bytes();
	start = now_ns();
	r = gs_sim_run(w, &no_timeline);
	gint64 wall = now_ns() - start;
	long after = peak_rss_kib(), held_after = allocated_bytes();
	/* The workload was built before `before`: the growth is the run's. */
	Footprint f = {.total = (double) (after - before) * 1024.0,
		       .result = held_before < 0 ? -1 : (double) (held_after - held_before)};
	g_autofree char *split = f.result < 0 ? g_strdup("") :
		g_strdup_printf(": state ~%4.0f + result ~%4.0f", (f.total - f.result) / threads,
				f.result / threads);

	printf("%s %7u threads  %10" G_GUINT64_FORMAT " events  %8.2f M events/s  "
	       "peak RSS +%4ld MiB  ~%4.0f B/thread%s (%s)\n",
	       allocating ? "+ alloc/free" : "timed wait  ", threads, r->events_processed,
	       r->events_processed / (wall / 1e3), (after - before) / 1024, f.total / threads, split,
	       gs_outcome_name(r->outcome));
	gs_result_free(r);
	gs_workload_free(w);
	return f;
}

static void
bench_contention(guint threads, guint loops, gboolean timeline)
{
	GsWorkload *w = contention_load(threads, loops);
	GsRunOptions options = {.skip_timeline = !timeline};
	gint64 start = now_ns();
	GsResult *r = gs_sim_run(w, &options);
	gint64 wall = now_ns() - start;
	double ops = 2.0 * threads * loops;

	printf("contention  %7u threads  %10.0f alloc+free  %8.2f M ops/s  "
	       "(%" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " retries, %" G_GUINT64_FORMAT
	       " splits, %u samples kept, %s)\n",
	       threads, ops, ops / (wall / 1e3), r->events_processed, r->totals.retries,
	       r->totals.splits, r->timeline->len, gs_outcome_name(r->outcome));
	gs_result_free(r);
	gs_workload_free(w);
}

/*
 * A spill-heavy generated workload (scenarios/generated-spill.yaml, larger):
 * tasks whose held outputs do not fit on the GPU, so that allocations spill
 * them to the host and computes bring them back.
 */
static void
bench_spill(guint tasks)
{
	GsWorkload *w = gs_workload_new();
	gint64 start;
	GsResult *r;
	gint64 wall;

	w->seed = 7;
	w->gpu.capacity = 4 * GIB;
	w->host.capacity = 64 * GIB;
	w->executor_slots = 32;
	w->policy.spill.enabled = TRUE;
	w->generate = (GsGenerate){.enabled = TRUE, .tasks = tasks, .threads_per_task = 1,
				   .task_max = 300 * MIB, .max_allocs = 50,
				   .max_compute = 20 * 1000 * 1000, .retry_blocks = TRUE,
				   .jitter = 0.05};
	gs_generate_tasks(w);
	start = now_ns();
	r = gs_sim_run(w, &no_timeline);
	wall = now_ns() - start;
	printf("spill-heavy %7u tasks    %10" G_GUINT64_FORMAT " events  %8.2f M events/s  "
	       "(%" G_GUINT64_FORMAT " copies, %.1f GiB spilled, %" G_GUINT64_FORMAT " lost, %s)\n",
	       tasks, r->events_processed, r->events_processed / (wall / 1e3), r->totals.copies_checked,
	       (double) r->totals.spilled_gpu_to_host / GIB, r->totals.copies_lost,
	       gs_outcome_name(r->outcome));
	gs_result_free(r);
	gs_workload_free(w);
}

/* bench_timed_wait() in a child process, for a clean peak resident set. */
static Footprint
timed_wait_alone(guint threads, gboolean allocating)
{
	Footprint f = {-1, -1};
	int pipe_fds[2];
	pid_t child;

	fflush(stdout);
	if (pipe(pipe_fds) != 0 || (child = fork()) < 0)
		return bench_timed_wait(threads, allocating);
	if (child == 0) {
		f = bench_timed_wait(threads, allocating);
		fflush(stdout);
		_exit(write(pipe_fds[1], &f, sizeof f) == sizeof f ? EXIT_SUCCESS : EXIT_FAILURE);
	}
	close(pipe_fds[1]);
	if (read(pipe_fds[0], &f, sizeof f) != sizeof f)
		f = (Footprint){-1, -1};
	close(pipe_fds[0]);
	waitpid(child, NULL, 0);
	return f;
}

/*
 * The state one more thread adds, from the runs with 10,000 and 100,000
 * threads: a run's fixed cost (code first run, allocator arenas, tables'
 * first chunks), which the smaller runs divide among few threads, drops out.
 */
static void
print_marginal(Footprint small, guint n_small, Footprint large, guint n_large)
{
	if (small.result < 0 || large.result < 0 || small.total < 0 || large.total < 0)
		return;
	printf("state per added thread, %u -> %u threads: ~%.0f B (result rows ~%.0f B more)\n",
	       n_small, n_large,
	       ((large.total - large.result) - (small.total - small.result)) / (n_large - n_small),
	       (large.result - small.result) / (n_large - n_small));
}

int
main(void)
{
	Footprint small, large;

	printf("gpusim %s simulator benchmark (wall clock; compare as ratios within one run)\n",
	       gs_version());
	timed_wait_alone(1000, FALSE);
	small = timed_wait_alone(10000, FALSE);
	large = timed_wait_alone(100000, FALSE);
	print_marginal(small, 10000, large, 100000);
	timed_wait_alone(10000, TRUE);
	bench_contention(64, 5000, FALSE);
	bench_contention(64, 5000, TRUE);
	bench_spill(2000);
	return EXIT_SUCCESS;
}
