/*
 * bench-sim: how fast the simulator replays, how much state it keeps, and
 * how both grow with the size of a run.
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
 * the rest.
 *
 * The floor under the simulator's loop: the timed-wait load replayed by a
 * bare binary heap of (time, sequence, thread) entries written here, with one
 * step counter per thread and nothing else, at the same sizes, both in events
 * per second of CPU time; the ratio of the two rates shows what the
 * simulator's own work (interpreters, the engine, tasks, results) costs per
 * event above the heap. Each size runs in a process of its own, the two
 * loops alternating six times, and each loop's fastest run counts.
 *
 * Scaling: one generated workload (a 16 GiB GPU, 32 slots, spill with LRU
 * victims, tasks of up to 300 MiB with up to 20 allocations and retry
 * blocks) at several sizes, each run as `./gpusim run FILE --json=/dev/null`
 * in a child process of its own: its wall time and its peak resident set
 * (wait4's rusage, which keeps the highest mark across the exec of libtool's
 * wrapper script into the program). `./gpusim` is the program of the build
 * directory, where `make bench` runs this; run from elsewhere, the part says
 * so and is skipped. The sizes are 10,000, 100,000 and 1,000,000 tasks, or
 * the list in BENCH_SCALE_TASKS (`BENCH_SCALE_TASKS="10000 100000" make
 * bench`; an empty list skips the part): 1,000,000 tasks take under 1 GiB
 * of memory and about half a minute.
 *
 * Figures vary by machine; compare them as ratios within one run. Nothing
 * here is asserted.
 */
#include "config.h"

#ifdef HAVE_MALLINFO2
#include <malloc.h>
#endif
#include <fcntl.h>
#include <glib/gstdio.h>
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

/* The CPU time this process has used: unlike the wall clock, not what a process beside it takes. */
static gint64
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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

/* How long each compute of thread @index of the timed-wait load lasts: 1 to 6 us. */
static GsTime
compute_length(guint index)
{
	return 1000 + (GsTime) ((index * 7919u) % 5000);
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
		GsOp compute = compute_op(compute_length(i));
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

/* A timed-wait run, as its child process hands it back: events == 0 if it did not. */
typedef struct {
	Footprint memory;
	guint64 events;
	gint64 wall_ns, cpu_ns;
	GsTime clock; /* the simulated time at the end */
} TimedWait;

/* The timed-wait load at one size, as a child process hands it back. */
typedef struct {
	TimedWait first; /* the simulator's first run in the process, with its memory */
	TimedWait sim, bare; /* each loop's fastest run, of the first and BARE_ROUNDS more each */
} TimedWaitRuns;

/* How many more times each loop runs, alternating, for the comparison with the bare loop. */
#define BARE_ROUNDS 5

static TimedWait bare_loop(guint threads);

/* A small run first pages the simulator's code in, so that the growth measured next is data. */
static void
warm_up(gboolean allocating)
{
	GsWorkload *w = timed_wait_load(16, allocating);

	gs_result_free(gs_sim_run(w, &no_timeline));
	gs_workload_free(w);
}

static TimedWait
bench_timed_wait(guint threads, gboolean allocating)
{
	GsWorkload *w = timed_wait_load(threads, allocating);
	long before, held_before;
	gint64 start, start_cpu;
	GsResult *r;

	warm_up(allocating);
	before = peak_rss_kib();
	held_before = allocated_bytes();
	start = now_ns();
	start_cpu = cpu_ns();
	r = gs_sim_run(w, &no_timeline);
	gint64 cpu = cpu_ns() - start_cpu;
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
	TimedWait run = {.memory = f, .events = r->events_processed, .wall_ns = wall,
			 .cpu_ns = cpu, .clock = r->makespan_ns};
	gs_result_free(r);
	gs_workload_free(w);
	return run;
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

/* The simulator's timed-wait run of @w, its CPU time and what it ended at. */
static TimedWait
sim_timed_wait_run(const GsWorkload *w)
{
	gint64 start_cpu = cpu_ns();
	GsResult *r = gs_sim_run(w, &no_timeline);
	TimedWait run = {.memory = {-1, -1}, .events = r->events_processed,
			 .cpu_ns = cpu_ns() - start_cpu, .clock = r->makespan_ns};

	gs_result_free(r);
	return run;
}

/*
 * The timed-wait load of @threads threads in this process: its first run
 * with its memory, then @rounds runs of the simulator and of the bare loop,
 * alternating. A fresh process for each size, because a process that has run
 * other loads hands the simulator scattered memory, and that costs it more
 * than the run itself measures.
 */
static TimedWaitRuns
timed_wait_runs(guint threads, gboolean allocating, guint rounds)
{
	TimedWaitRuns runs = {.first = bench_timed_wait(threads, allocating)};
	GsWorkload *w = timed_wait_load(threads, allocating);

	runs.sim = runs.first;
	for (guint round = 0; round < rounds; round++) {
		TimedWait sim = sim_timed_wait_run(w), bare = bare_loop(threads);

		if (sim.cpu_ns < runs.sim.cpu_ns)
			runs.sim = sim;
		if (round == 0 || bare.cpu_ns < runs.bare.cpu_ns)
			runs.bare = bare;
	}
	gs_workload_free(w);
	return runs;
}

/* timed_wait_runs() in a child process, for a clean peak resident set; events == 0 if it failed. */
static TimedWaitRuns
timed_wait_alone(guint threads, gboolean allocating, guint rounds)
{
	TimedWaitRuns runs = {.first = {.memory = {-1, -1}}};
	int pipe_fds[2];
	pid_t child;

	fflush(stdout);
	if (pipe(pipe_fds) != 0 || (child = fork()) < 0)
		return timed_wait_runs(threads, allocating, rounds);
	if (child == 0) {
		runs = timed_wait_runs(threads, allocating, rounds);
		fflush(stdout);
		gboolean sent = write(pipe_fds[1], &runs, sizeof runs) == sizeof runs;

		_exit(sent ? EXIT_SUCCESS : EXIT_FAILURE);
	}
	close(pipe_fds[1]);
	if (read(pipe_fds[0], &runs, sizeof runs) != sizeof runs)
		runs = (TimedWaitRuns){.first = {.memory = {-1, -1}}};
	close(pipe_fds[0]);
	waitpid(child, NULL, 0);
	return runs;
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

/* ---- the floor under the simulator's loop: the timed-wait load on a bare heap ---- */

/*
 * Each thread of the bare loop takes OPS + 2 steps: the first two, at time
 * 0, stand for its task's arrival and its start, which the simulator counts
 * as events as it counts the end of each compute, so that both loops count
 * the same events and end at the same time.
 */
#define BARE_STEPS (OPS_PER_THREAD + 2)
G_STATIC_ASSERT(BARE_STEPS <= G_MAXUINT8);

/* When a thread resumes: 24 bytes, as the simulator's heap nodes, so that sifting costs alike. */
typedef struct {
	GsTime time;
	guint64 seq; /* the order of pushes: events at one time fire first in, first out */
	guint thread;
} BareEntry;

typedef struct {
	BareEntry *entries; /* entries[0 .. len) form a min-heap by (time, seq) */
	guint len;
	guint64 next_seq;
} BareHeap;

static inline gboolean
bare_earlier(const BareEntry *a, const BareEntry *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static void
bare_push(BareHeap *h, GsTime time, guint thread)
{
	BareEntry e = {.time = time, .seq = h->next_seq++, .thread = thread};
	guint i = h->len++;

	while (i > 0 && bare_earlier(&e, &h->entries[(i - 1) / 2])) {
		h->entries[i] = h->entries[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->entries[i] = e;
}

/* Removes the earliest entry; the heap must not be empty. */
static BareEntry
bare_pop(BareHeap *h)
{
	BareEntry top = h->entries[0], last = h->entries[--h->len];
	guint i = 0, child;

	/* The last entry sinks from the root's hole. */
	while ((child = 2 * i + 1) < h->len) {
		if (child + 1 < h->len && bare_earlier(&h->entries[child + 1], &h->entries[child]))
			child++;
		if (!bare_earlier(&h->entries[child], &last))
			break;
		h->entries[i] = h->entries[child];
		i = child;
	}
	h->entries[i] = last;
	return top;
}

/*
 * The timed-wait load of @threads threads on the bare heap. A thread's
 * state is the number of steps it has taken; the length of its computes
 * follows from its index, as the simulator reads it from its op list. The
 * storage is allocated before the clocks start: after the loads above, the
 * first large allocation can take milliseconds (glibc's malloc consolidates
 * the small blocks they freed), which is not the loop's.
 */
static TimedWait
bare_loop(guint threads)
{
	BareHeap h = {.entries = g_new(BareEntry, threads)}; /* one pending step a thread */
	guint8 *steps = g_new0(guint8, threads);
	TimedWait run = {.memory = {-1, -1}};
	gint64 start = now_ns(), start_cpu = cpu_ns();

	for (guint i = 0; i < threads; i++)
		bare_push(&h, 0, i);
	while (h.len > 0) {
		BareEntry e = bare_pop(&h);
		guint8 taken = ++steps[e.thread];
		GsTime next = e.time + (taken < 2 ? 0 : compute_length(e.thread));

		run.events++;
		run.clock = e.time;
		if (taken < BARE_STEPS)
			bare_push(&h, next, e.thread);
	}
	run.cpu_ns = cpu_ns() - start_cpu;
	run.wall_ns = now_ns() - start;
	g_free(steps);
	g_free(h.entries);
	return run;
}

/*
 * The simulator's timed-wait runs beside the bare loop's at the same sizes.
 * The events and the final clocks are printed side by side, so that a reader
 * sees both did the same work (and the bare loop's result is used). Rates
 * are per second of CPU time, and each loop's fastest run, the two
 * alternating in one process: the smaller runs last milliseconds, and a
 * process beside this one that takes the core or its cache for a few of
 * them would otherwise move the ratio by half. The simulator's first run,
 * whose allocations touch new pages, is printed beside them.
 */
static void
compare_bare(const TimedWaitRuns *runs, const guint *sizes, guint n)
{
	printf("\nsimulator against a bare heap loop (timed wait; both count each task's arrival, "
	       "each thread's start and each compute's end; the fastest of %d runs each, "
	       "alternating)\n", BARE_ROUNDS + 1);
	printf("%8s %11s %11s %14s %15s %9s %12s %12s %13s\n", "threads", "sim events",
	       "bare events", "sim M ev/CPU s", "bare M ev/CPU s", "sim/bare", "sim end ns",
	       "bare end ns", "sim 1st run");
	for (guint i = 0; i < n; i++) {
		const TimedWaitRuns *r = &runs[i];
		double sim_rate, bare_rate;

		if (r->first.events == 0 || r->bare.events == 0) {
			printf("%8u  (the simulator's run did not report back)\n", sizes[i]);
			continue;
		}
		sim_rate = r->sim.events / (r->sim.cpu_ns / 1e3);
		bare_rate = r->bare.events / (r->bare.cpu_ns / 1e3);
		printf("%8u %11" G_GUINT64_FORMAT " %11" G_GUINT64_FORMAT " %14.2f %15.2f %9.3f "
		       "%12" G_GINT64_FORMAT " %12" G_GINT64_FORMAT " %13.2f\n",
		       sizes[i], r->sim.events, r->bare.events, sim_rate, bare_rate,
		       sim_rate / bare_rate, r->sim.clock, r->bare.clock,
		       r->first.events / (r->first.cpu_ns / 1e3));
	}
}

/* ---- scaling: gpusim run on one generated workload at growing sizes ---- */

/* The program of the build directory, where make bench runs this (libtool's wrapper script). */
#define GPUSIM "./gpusim"

static const guint default_scale_tasks[] = {10000, 100000, 1000000};

/* The task counts to run: BENCH_SCALE_TASKS's, or the defaults; NULL if it holds something else. */
static GArray *
scale_sizes(void)
{
	const char *env = g_getenv("BENCH_SCALE_TASKS");
	GArray *sizes = g_array_new(FALSE, FALSE, sizeof(guint));
	g_auto(GStrv) words = NULL;

	if (env == NULL) {
		g_array_append_vals(sizes, default_scale_tasks, G_N_ELEMENTS(default_scale_tasks));
		return sizes;
	}
	words = g_strsplit_set(env, " \t,", -1);
	for (guint i = 0; words[i] != NULL; i++) {
		guint64 n;
		guint tasks;

		if (*words[i] == '\0')
			continue;
		if (!g_ascii_string_to_unsigned(words[i], 10, 1, G_MAXUINT, &n, NULL)) {
			printf("\nscaling: BENCH_SCALE_TASKS=\"%s\" is not a list of task counts; "
			       "skipped\n", env);
			g_array_free(sizes, TRUE);
			return NULL;
		}
		tasks = (guint) n;
		g_array_append_val(sizes, tasks);
	}
	return sizes;
}

/* The workload, written to a temporary file whose path it returns (NULL, said, if it cannot). */
static char *
write_scale_scenario(guint tasks)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = g_strdup_printf("gpusim: 1\n"
						"name: scale\n"
						"seed: 7\n"
						"memory:\n"
						"  gpu: {capacity: 16GiB}\n"
						"executor: {slots: 32}\n"
						"policy:\n"
						"  spill: {enabled: true, victim: lru}\n"
						"generate:\n"
						"  tasks: %u\n"
						"  task_max: 300MiB\n"
						"  max_allocs: 20\n"
						"  retry_blocks: true\n",
						tasks);
	char *path = NULL;
	int fd = g_file_open_tmp("gpusim-scale-XXXXXX.yaml", &path, &error);

	if (fd < 0) {
		printf("scaling: no temporary file: %s\n", error->message);
		return NULL;
	}
	close(fd);
	if (!g_file_set_contents(path, text, -1, &error)) {
		printf("scaling: %s\n", error->message);
		g_unlink(path);
		g_free(path);
		return NULL;
	}
	return path;
}

/* One `gpusim run` as its parent saw it. */
typedef struct {
	int status; /* as wait4() gives it; -1: it could not be run */
	gint64 wall_ns;
	double user_s, sys_s; /* the system's share is mostly page faults as the memory grows */
	long peak_kib;
} ScaleRun;

/*
 * `./gpusim run PATH --json=/dev/null`, its summary thrown away, in a child
 * process: the wall time includes the fork and the wrapper script's start
 * (milliseconds), and the peak resident set is the child's highest, the
 * program's rather than the wrapper's, since Linux keeps it across exec.
 */
static ScaleRun
run_gpusim(const char *path)
{
	ScaleRun run = {.status = -1};
	struct rusage ru;
	gint64 start;
	pid_t child;

	fflush(stdout);
	start = now_ns();
	child = fork();
	if (child < 0)
		return run;
	if (child == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl(GPUSIM, GPUSIM, "run", path, "--json=/dev/null", (char *) NULL);
		_exit(127);
	}
	if (wait4(child, &run.status, 0, &ru) != child) {
		run.status = -1;
		return run;
	}
	run.wall_ns = now_ns() - start;
	run.user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	run.sys_s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	run.peak_kib = ru.ru_maxrss;
	return run;
}

static gboolean
scale_run_ok(const ScaleRun *run)
{
	return run->status == 0;
}

static void
print_scale_row(guint tasks, const ScaleRun *run)
{
	if (run->status < 0)
		printf("%9u  could not be run\n", tasks);
	else if (WIFSIGNALED(run->status))
		printf("%9u  killed by signal %d after %.1f s\n", tasks, WTERMSIG(run->status),
		       run->wall_ns / 1e9);
	else if (!scale_run_ok(run))
		printf("%9u  exited %d after %.1f s\n", tasks, WEXITSTATUS(run->status),
		       run->wall_ns / 1e9);
	else
		printf("%9u %9.2f %8.2f %8.2f %13.1f %10.2f\n", tasks, run->wall_ns / 1e9,
		       run->user_s, run->sys_s, run->peak_kib / 1024.0,
		       (double) run->peak_kib / tasks);
	fflush(stdout);
}

/* Each size against the one before it; the memory an added task costs drops the fixed part. */
static void
print_scale_ratios(const GArray *sizes, const ScaleRun *runs)
{
	for (guint i = 1; i < sizes->len; i++) {
		guint small = g_array_index(sizes, guint, i - 1);
		guint large = g_array_index(sizes, guint, i);
		const ScaleRun *a = &runs[i - 1], *b = &runs[i];

		if (!scale_run_ok(a) || !scale_run_ok(b))
			continue;
		printf("%u -> %u tasks (x%.1f): wall x%.2f, peak RSS x%.2f, "
		       "~%.2f KiB per added task\n",
		       small, large, (double) large / small, (double) b->wall_ns / a->wall_ns,
		       (double) b->peak_kib / a->peak_kib,
		       (double) (b->peak_kib - a->peak_kib) / ((double) large - small));
	}
}

static void
bench_scale(void)
{
	g_autoptr(GArray) sizes = NULL;
	g_autofree ScaleRun *runs = NULL;

	if (!g_file_test(GPUSIM, G_FILE_TEST_IS_EXECUTABLE)) {
		printf("\nscaling: no %s here (make bench runs this in the build directory); "
		       "skipped\n", GPUSIM);
		return;
	}
	sizes = scale_sizes();
	if (sizes == NULL || sizes->len == 0)
		return;
	printf("\nscaling: `gpusim run --json=/dev/null` of a generated workload (seed 7, 16 GiB, "
	       "32 slots, LRU spill, tasks up to 300 MiB, 20 allocations, retry blocks), "
	       "a process each\n");
	printf("%9s %9s %8s %8s %13s %10s\n", "tasks", "wall s", "user s", "sys s", "peak RSS MiB",
	       "KiB/task");
	runs = g_new0(ScaleRun, sizes->len);
	for (guint i = 0; i < sizes->len; i++) {
		guint tasks = g_array_index(sizes, guint, i);
		g_autofree char *path = write_scale_scenario(tasks);

		runs[i].status = -1;
		if (path == NULL)
			continue;
		runs[i] = run_gpusim(path);
		g_unlink(path);
		print_scale_row(tasks, &runs[i]);
	}
	print_scale_ratios(sizes, runs);
}

int
main(void)
{
	static const guint sizes[] = {1000, 10000, 100000};
	TimedWaitRuns timed[G_N_ELEMENTS(sizes)];

	printf("gpusim %s simulator benchmark (wall clock; compare as ratios within one run)\n",
	       gs_version());
	/*
	 * First, while this process is small: a child's peak resident set starts
	 * from its parent's at the fork and survives the exec, so the loads run
	 * here before would show in every size's peak.
	 */
	bench_scale();
	for (guint i = 0; i < G_N_ELEMENTS(sizes); i++)
		timed[i] = timed_wait_alone(sizes[i], FALSE, BARE_ROUNDS);
	print_marginal(timed[1].first.memory, sizes[1], timed[2].first.memory, sizes[2]);
	timed_wait_alone(10000, TRUE, 0);
	bench_contention(64, 5000, FALSE);
	bench_contention(64, 5000, TRUE);
	bench_spill(2000);
	compare_bare(timed, sizes, G_N_ELEMENTS(sizes));
	return EXIT_SUCCESS;
}
