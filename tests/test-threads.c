/*
 * Tests of the real-thread driver (backends/threads/) on the host backend.
 *
 * A scenario whose outcome hangs on its gaps runs on the virtual clock,
 * where scenario time moves only when every thread waits, so the order of
 * its instants is the scenario's however slow the machine: the slow backend
 * below shows it. None asserts a real duration: each asserts what the run
 * decided (outcomes, states reached, exceptions), what the memory counters
 * show (never above capacity, everything back at the end), which path
 * allocations took and, on the virtual clock, scenario times. Every case runs
 * under both locking designs (loop index 0: fast path, 1: global mutex).
 */
#include "config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "backends/pattern.h"
#include "backends/threads/threads.h"
#include "cli/drivers.h"
#include "scenario/loader.h"
#include "sim/sim.h"
#include "testlib.h"
#include "testlib-backend.h"

typedef struct {
	GsResult *result;
	GsThreadsStats stats;
} Run;

static GsWorkload *
load_text(const char *yaml)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = NULL;
	int fd = g_file_open_tmp("gpusim-test-XXXXXX.yaml", &path, &error);
	GsWorkload *w;

	ck_assert_msg(fd >= 0, "%s", error ? error->message : "?");
	close(fd);
	ck_assert(g_file_set_contents(path, yaml, -1, NULL));
	w = gs_loader_load(path, NULL, NULL, &error);
	g_unlink(path);
	ck_assert_msg(w != NULL, "%s", error ? error->message : "?");
	return w;
}

static Run
run_on(const GsWorkload *w, const GsBackendOps *ops, int locking, GsClock clock)
{
	g_autoptr(GError) error = NULL;
	GsRunOptions opts = {.locking = locking, .clock = clock};
	Run run = {0};

	run.result = gs_threads_run(w, ops, &opts, &run.stats, &error);
	ck_assert_msg(run.result != NULL, "%s", error ? error->message : "?");
	return run;
}

/* The simulator's result for @w: what real threads on the virtual clock must match. */
static GsResult *
simulate(const GsWorkload *w)
{
	GsRunOptions opts = {0};

	return gs_sim_run(w, &opts);
}

/* On the real clock: for what no gap decides. */
static Run
run_text(const char *yaml, int locking)
{
	g_autoptr(GsWorkload) w = load_text(yaml);

	return run_on(w, &gs_backend_host, locking, GS_CLOCK_REAL);
}

/* On the virtual clock: for what the scenario's gaps decide. */
static Run
run_text_virtual(const char *yaml, int locking)
{
	g_autoptr(GsWorkload) w = load_text(yaml);

	return run_on(w, &gs_backend_host, locking, GS_CLOCK_VIRTUAL);
}

static const GsThreadResult *
thread_named(const GsResult *r, const char *name)
{
	for (guint i = 0; i < r->threads->len; i++) {
		const GsThreadResult *t = r->threads->pdata[i];

		if (g_strcmp0(t->name, name) == 0)
			return t;
	}
	ck_abort_msg("no thread %s", name);
	return NULL;
}

/* Nothing is held at the end, and no sample ever exceeded a capacity. */
static void
check_memory(const GsResult *r)
{
	const GsSample *last = &g_array_index(r->timeline, GsSample, r->timeline->len - 1);

	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		ck_assert_int_eq(last->used[tier], 0);
		ck_assert_int_le(r->tiers[tier].peak_used, r->tiers[tier].capacity);
	}
}

/* ---- the common path ---- */

static const char *const loop_yaml =
	"gpusim: 1\nname: loop\nmemory: {gpu: {capacity: 1GiB}}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{repeat: {times: 2000, ops: [{alloc: {buf: x, size: 4KiB}}, {free: x}]}}]}]}\n"
	"  - {id: B, threads: [{ops: [{repeat: {times: 2000, ops: [{alloc: {buf: x, size: 4KiB}}, {free: x}]}}]}]}\n"
	"  - {id: C, threads: [{ops: [{repeat: {times: 2000, ops: [{alloc: {buf: x, size: 4KiB}}, {free: x}]}}]}]}\n";

START_TEST(test_fits_take_the_fast_path)
{
	Run run = run_text(loop_yaml, _i);

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(run.result->totals.tasks_completed, 3);
	ck_assert_uint_eq(run.stats.fast_allocs + run.stats.locked_allocs, 6000);
	if (_i == GS_LOCKING_FAST) {
		/* Nobody ever waits here, so every allocation and free is a fast one. */
		ck_assert_uint_eq(run.stats.fast_allocs, 6000);
		ck_assert_uint_eq(run.stats.fast_frees, 6000);
	} else {
		ck_assert_uint_eq(run.stats.fast_allocs, 0);
		ck_assert_uint_eq(run.stats.locked_frees, 6000);
	}
	/* The thread owned its state change: it was in THREAD_ALLOC all the same. */
	ck_assert(thread_named(run.result, "A.0")->reached & (1u << GS_THREAD_ALLOC));
	ck_assert_int_eq(run.result->tiers[GS_TIER_GPU].peak_used % 256, 0);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

/* ---- contention: rollbacks and splits under real waits ---- */

static const char *const tight_yaml =
	"gpusim: 1\nname: tight\nmemory: {gpu: {capacity: 10MiB}}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{retry: {ops: [{alloc: {buf: i, size: 4MiB}}, {compute: 20ms},"
	" {alloc: {buf: o, size: 4MiB}}, {compute: 5ms}, {free: [i, o]}]}}]}]}\n"
	"  - {id: B, threads: [{ops: [{retry: {ops: [{alloc: {buf: i, size: 4MiB}}, {compute: 20ms},"
	" {alloc: {buf: o, size: 4MiB}}, {compute: 5ms}, {free: [i, o]}]}}]}]}\n"
	"  - {id: C, start: 5ms, threads: [{ops: [{retry: {ops: [{alloc: {buf: t, size: 12MiB}},"
	" {compute: 5ms}, {free: t}]}}]}]}\n";

START_TEST(test_deadlocks_are_busted)
{
	Run run = run_text_virtual(tight_yaml, _i);
	const GsThreadResult *c = thread_named(run.result, "C.0");

	/* Whatever the order, C can only ever run in halves, after a split. */
	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_ge(run.result->totals.deadlocks_busted, 1);
	ck_assert_uint_ge(run.result->totals.splits, 1);
	ck_assert(c->reached & (1u << GS_THREAD_BLOCKED));
	ck_assert(c->reached & (1u << GS_THREAD_SPLIT_THROW));
	ck_assert_int_eq(c->final_state, GS_THREAD_UNKNOWN);
	ck_assert_uint_gt(run.stats.locked_allocs, 0);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

static const char *const block_yaml =
	"gpusim: 1\nname: stuck\nmemory: {gpu: {capacity: 10MiB}}\npolicy: {oom: block, watchdog: 10ms}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{alloc: {buf: a, size: 6MiB}}, {compute: 10ms},"
	" {alloc: {buf: b, size: 6MiB}}]}]}\n"
	"  - {id: B, threads: [{ops: [{compute: 2ms}, {alloc: {buf: a, size: 3MiB}}, {compute: 10ms},"
	" {alloc: {buf: b, size: 6MiB}}]}]}\n";

START_TEST(test_a_real_deadlock_ends_the_run)
{
	g_autoptr(GsWorkload) w = load_text(block_yaml);
	g_autoptr(GsResult) sim = simulate(w);
	Run run = run_on(w, &gs_backend_host, _i, GS_CLOCK_VIRTUAL);

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_DEADLOCK);
	ck_assert_uint_eq(run.result->totals.deadlocks_unresolved, 1);
	ck_assert(thread_named(run.result, "A.0")->waiting_at_end);
	ck_assert(thread_named(run.result, "B.0")->waiting_at_end);
	ck_assert_int_eq(thread_named(run.result, "B.0")->final_state, GS_THREAD_BLOCKED);
	ck_assert_int_eq(sim->outcome, GS_OUTCOME_DEADLOCK);
	ck_assert_int_eq(run.result->makespan_ns, sim->makespan_ns);
	/*
	 * The last sample is where the run stopped, A's 6 MiB and B's 3 MiB, as
	 * the simulator's; what the threads gave back as they unwound is not
	 * sampled (a leak there is LeakSanitizer's to find).
	 */
	ck_assert_int_eq(g_array_index(run.result->timeline, GsSample,
				       run.result->timeline->len - 1).used[GS_TIER_GPU], 9 << 20);
	gs_result_free(run.result);
}
END_TEST

/* ---- tasks: explicit end, attempts, slots ---- */

static const char *const task_done_yaml =
	"gpusim: 1\nname: ends\nmemory: {gpu: {capacity: 10MiB}}\n"
	"tasks:\n"
	"  - id: A\n    threads:\n"
	"      - {name: A.slow, ops: [{alloc: {buf: x, size: 1MiB}}, {compute: 60s}]}\n"
	"      - {name: A.quick, ops: [{compute: 5ms}, task_done]}\n";

START_TEST(test_task_done_stops_the_other_threads)
{
	/* A hang here is the failure: Check's timeout ends the test. */
	Run run = run_text(task_done_yaml, _i);

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(thread_named(run.result, "A.slow")->final_state, GS_THREAD_UNKNOWN);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

static const char *const attempts_yaml =
	"gpusim: 1\nname: attempts\nmemory: {gpu: {capacity: 10MiB}}\n"
	"policy: {oom: fail, task_attempts: 3}\nexecutor: {slots: 1}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{alloc: {buf: x, size: 11MiB}}]}]}\n"
	"  - {id: B, threads: [{ops: [{alloc: {buf: x, size: 2MiB}}, {compute: 2ms}]}]}\n";

START_TEST(test_failed_attempts_go_again_behind)
{
	Run run = run_text(attempts_yaml, _i);
	const GsTaskResult *a = run.result->tasks->pdata[0];
	const GsTaskResult *b = run.result->tasks->pdata[1];

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_FAILED);
	ck_assert_uint_eq(a->attempts, 3);
	ck_assert_int_eq(a->outcome, GS_OUTCOME_FAILED);
	ck_assert_int_eq(a->failure, GS_EXC_GPU_OOM);
	ck_assert_int_eq(b->outcome, GS_OUTCOME_COMPLETED);
	/* One slot: B queued behind A's first attempt, A's second behind B. */
	ck_assert_int_ge(b->start_ns, 0);
	ck_assert_int_le(b->end_ns, a->end_ns);
	ck_assert_uint_eq(run.result->totals.task_attempts, 4);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

static const char *const semaphore_yaml =
	"gpusim: 1\nname: permits\nmemory: {gpu: {capacity: 10MiB}}\n"
	"policy: {concurrent_gpu_tasks: 1}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{alloc: {buf: x, size: 1MiB}}, {compute: 30ms}]}]}\n"
	"  - {id: B, start: 10ms, threads: [{ops: [{alloc: {buf: x, size: 1MiB}}, {compute: 1ms}]}]}\n";

START_TEST(test_the_gpu_semaphore_orders_tasks)
{
	Run run = run_text_virtual(semaphore_yaml, _i);
	const GsTaskResult *a = run.result->tasks->pdata[0];
	const GsTaskResult *b = run.result->tasks->pdata[1];

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	/* B can only take the permit once A has given it back. */
	ck_assert_int_gt(b->end_ns, a->end_ns);
	ck_assert_int_gt(run.result->totals.semaphore_wait_ns, 0);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

/* ---- the virtual clock on a slow machine ---- */

/*
 * The host backend, with every allocation and move taking 20 ms of real
 * time: a machine far slower than any gap below.
 */
static GsBackendOps slow_host;

static gboolean
slow_alloc(gpointer state, gpointer thread, GsTier tier, guint device, gint64 bytes,
	   guint64 *handle)
{
	g_usleep(20000);
	return gs_backend_host.alloc(state, thread, tier, device, bytes, handle);
}

static gboolean
slow_move(gpointer state, gpointer thread, guint64 handle, GsTier from, GsTier to, guint device,
	  guint64 *moved, gboolean *intact, GError **error)
{
	g_usleep(20000);
	return gs_backend_host.move(state, thread, handle, from, to, device, moved, intact, error);
}

static const GsBackendOps *
slow_backend(void)
{
	slow_host = gs_backend_host;
	slow_host.alloc = slow_alloc;
	slow_host.move = slow_move;
	return &slow_host;
}

/*
 * Gaps of microseconds: B arrives 500 us after A, while A holds 6 of 10 MiB,
 * and waits for A's free at 1.001 ms; C's buffer is spilled for D at 3 ms.
 * On the virtual clock the slow machine runs it as the simulator does, to
 * the nanosecond: the same makespan, task ends, waits and samples.
 */
static const char *const gaps_yaml =
	"gpusim: 1\nname: gaps\nmemory: {gpu: {capacity: 10MiB}}\n"
	"policy: {spill: {enabled: true}}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{alloc: {buf: a, size: 6MiB}}, {compute: 1ms}, {free: a}]}]}\n"
	"  - {id: B, start: 500us, threads: [{ops: [{alloc: {buf: b, size: 6MiB}}, {compute: 1ms},"
	" {free: b}]}]}\n"
	"  - {id: C, start: 2500us, threads: [{ops: [{alloc: {buf: c, size: 6MiB, spillable: true}},"
	" {until: 5ms}, {free: c}]}]}\n"
	"  - {id: D, start: 3ms, threads: [{ops: [{alloc: {buf: d, size: 6MiB}}, {compute: 1ms},"
	" {free: d}]}]}\n";

START_TEST(test_the_virtual_clock_ignores_the_machines_speed)
{
	g_autoptr(GsWorkload) w = load_text(gaps_yaml);
	g_autoptr(GsResult) sim = simulate(w);
	Run run = run_on(w, slow_backend(), _i, GS_CLOCK_VIRTUAL);

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(run.result->makespan_ns, sim->makespan_ns);
	ck_assert_uint_eq(run.result->totals.spilled_gpu_to_host, 6 << 20);
	ck_assert_uint_eq(run.result->totals.copies_lost, 0);
	ck_assert_int_eq(run.result->totals.spill_block_ns, sim->totals.spill_block_ns);
	for (guint i = 0; i < sim->tasks->len; i++) {
		const GsTaskResult *want = sim->tasks->pdata[i], *got = run.result->tasks->pdata[i];

		ck_assert_str_eq(got->id, want->id);
		ck_assert_int_eq(got->start_ns, want->start_ns);
		ck_assert_int_eq(got->end_ns, want->end_ns);
		ck_assert_int_eq(got->blocked_ns, want->blocked_ns);
	}
	ck_assert_int_eq(run.result->tiers[GS_TIER_GPU].mean_used, sim->tiers[GS_TIER_GPU].mean_used);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

/*
 * Events count what the driver handled, as the simulator's do (arrivals,
 * threads going on after a wait, ticks), whether or not anybody reads the
 * event log: one task whose one thread allocates, computes twice and frees
 * has an arrival, its start, and three waits (the allocation's latency and
 * two computes) on the virtual clock, as in the simulator.
 */
START_TEST(test_events_count_what_the_driver_handled)
{
	g_autoptr(GsWorkload) w = load_text(
		"gpusim: 1\nname: events\nmemory: {gpu: {capacity: 10MiB}}\n"
		"tasks:\n  - {id: A, threads: [{ops: [{alloc: {buf: a, size: 1MiB}}, "
		"{compute: 1ms}, {compute: 1ms}, {free: a}]}]}\n");
	g_autoptr(GsResult) sim = simulate(w);
	Run run = run_on(w, &gs_backend_host, GS_LOCKING_FAST, GS_CLOCK_VIRTUAL);

	ck_assert_uint_eq(run.result->events_processed, sim->events_processed);
	ck_assert_uint_eq(run.result->events_processed, 5);
	gs_result_free(run.result);
}
END_TEST

/* The refused allocations' usage, from the event log. */
static void
note_refused_usage(const GsLogEntry *e, gpointer data)
{
	if (e->kind == GS_LOG_ALLOC && !e->ok)
		g_array_append_val((GArray *) data, e->usage);
}

/*
 * A refused allocation's event says what its space's counter would have
 * come to (cuCascade's global_usage): 8 MiB held and 5 MiB asked, with
 * bounded counters and with the tiers' model (spilling on, nothing to
 * spill), on real threads as in the simulator.
 */
static const char *const usage_policies[] = {"{oom: fail}", "{oom: fail, spill: {enabled: true}}"};

START_TEST(test_a_refusal_says_the_usage_it_would_make)
{
	g_autofree char *yaml = g_strdup_printf(
		"gpusim: 1\nname: usage\nmemory: {gpu: {capacity: 10MiB}}\npolicy: %s\n"
		"tasks:\n  - {id: A, threads: [{ops: [{alloc: {buf: a, size: 8MiB}}, {sleep: 2ms}]}]}\n"
		"  - {id: B, start: 1ms, threads: [{ops: [{alloc: {buf: b, size: 5MiB}}]}]}\n",
		usage_policies[_i]);
	g_autoptr(GsWorkload) w = load_text(yaml);
	g_autoptr(GArray) sim_usage = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GArray) real_usage = g_array_new(FALSE, FALSE, sizeof(gint64));
	g_autoptr(GError) error = NULL;
	GsRunOptions opts = {.log = note_refused_usage, .log_data = sim_usage};
	GsResult *r = gs_sim_run(w, &opts);

	gs_result_free(r);
	opts = (GsRunOptions){.locking = GS_LOCKING_FAST, .clock = GS_CLOCK_VIRTUAL,
			      .log = note_refused_usage, .log_data = real_usage};
	r = gs_threads_run(w, &gs_backend_host, &opts, NULL, &error);
	ck_assert_msg(r != NULL, "%s", error ? error->message : "?");
	gs_result_free(r);
	ck_assert_uint_eq(sim_usage->len, 1);
	ck_assert_int_eq(g_array_index(sim_usage, gint64, 0), 13 << 20);
	ck_assert_uint_eq(real_usage->len, 1);
	ck_assert_int_eq(g_array_index(real_usage, gint64, 0), 13 << 20);
}
END_TEST

/*
 * A thread frees buffers another thread of another task allocated: B frees
 * A.0's x as soon as A.0 has allocated it, waiting for that when it comes
 * first, then y, and allocates z. Whatever the order the threads run in,
 * on the real clock and either locking, both tasks complete, nothing leaks
 * and nothing is held at the end; the frees count against B.0's footprint,
 * as the freeing thread's (SparkResourceAdaptor), so its largest is z less
 * what it freed, 1 MiB, and A.0's is x and y, 3 MiB.
 */
static const char *const across_yaml =
	"gpusim: 1\nname: across\nmemory: {gpu: {capacity: 10MiB}}\n"
	"tasks:\n"
	"  - {id: A, threads: [{ops: [{alloc: {buf: x, size: 1MiB}}, {alloc: {buf: y, size: 2MiB}},\n"
	"      {compute: 1ms}]}]}\n"
	"  - {id: B, threads: [{ops: [{free: {buf: x, thread: A.0}}, {free: {buf: y, thread: A.0}},\n"
	"      {alloc: {buf: z, size: 4MiB}}, {free: z}]}]}\n";

START_TEST(test_a_thread_frees_another_threads_buffers)
{
	Run run = run_text(across_yaml, _i);

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_eq(run.result->totals.tasks_completed, 2);
	ck_assert_int_eq(run.result->totals.leaked_bytes, 0);
	ck_assert_int_eq(((GsTaskResult *) run.result->tasks->pdata[0])->max_footprint, 3 << 20);
	ck_assert_int_eq(((GsTaskResult *) run.result->tasks->pdata[1])->max_footprint, 1 << 20);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

/* On the virtual clock the same run is the simulator's, wait for the owner included. */
START_TEST(test_frees_across_threads_match_the_simulator)
{
	g_autoptr(GsWorkload) w = load_text(across_yaml);
	g_autoptr(GsResult) sim = simulate(w);
	Run run = run_on(w, &gs_backend_host, _i, GS_CLOCK_VIRTUAL);

	ck_assert_int_eq(run.result->makespan_ns, sim->makespan_ns);
	for (guint i = 0; i < sim->tasks->len; i++) {
		const GsTaskResult *want = sim->tasks->pdata[i], *got = run.result->tasks->pdata[i];

		ck_assert_int_eq(got->outcome, want->outcome);
		ck_assert_int_eq(got->end_ns, want->end_ns);
		ck_assert_int_eq(got->max_footprint, want->max_footprint);
	}
	gs_result_free(run.result);
}
END_TEST

/*
 * A buffer given away that nobody frees (its freer's task fails first) is
 * its completed task's leak, still held when the run ends (as in the
 * simulator), and released after; with the memory tiers (odd rows) or
 * without, under either locking.
 */
START_TEST(test_a_buffer_given_away_and_never_freed_leaks)
{
	g_autofree char *yaml = g_strdup_printf(
		"gpusim: 1\nname: unfreed\nmemory: {gpu: {capacity: 10MiB}}\n%s"
		"tasks:\n  - {id: A, threads: [{ops: [{alloc: {buf: a, size: 1MiB}}]}]}\n"
		"  - {id: B, threads: [{ops: [{alloc: {buf: b, size: 20MiB}},\n"
		"      {free: {buf: a, thread: A.0}}]}]}\n",
		_i % 2 == 1 ? "policy: {spill: {enabled: true}}\n" : "");
	Run run = run_text(yaml, _i / 2);

	ck_assert_int_eq(((GsTaskResult *) run.result->tasks->pdata[0])->outcome,
			 GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(((GsTaskResult *) run.result->tasks->pdata[1])->outcome, GS_OUTCOME_FAILED);
	ck_assert_int_eq(run.result->totals.leaked_bytes, 1 << 20);
	ck_assert_int_eq(g_array_index(run.result->timeline, GsSample, run.result->timeline->len - 1)
				 .used[GS_TIER_GPU],
			 1 << 20);
	gs_result_free(run.result);
}
END_TEST

/*
 * With the memory tiers too, a pool thread frees a task's buffers as its
 * own, after they are allocated: nothing is left or leaked, and the free
 * names their owner.
 */
/* Counts the frees of another thread's buffers, each by P of A.0's. */
static void
count_frees_of_a(const GsLogEntry *e, gpointer data)
{
	if (e->kind != GS_LOG_FREE)
		return;
	ck_assert_str_eq(e->thread, "P");
	ck_assert_str_eq(e->owner, "A.0");
	(*(guint *) data)++;
}

START_TEST(test_a_free_across_threads_with_tiers)
{
	g_autoptr(GsWorkload) w = load_text(
		"gpusim: 1\nname: foreign\nmemory: {gpu: {capacity: 10MiB}}\n"
		"policy: {spill: {enabled: true}}\n"
		"tasks:\n  - {id: A, threads: [{ops: [{alloc: {buf: a, size: 1MiB}},\n"
		"      {alloc: {buf: b, size: 2MiB, spillable: true}}, {sleep: 1ms}]}]}\n"
		"pool_threads:\n  - {name: P, ops: [{free: {buf: [a, b], thread: A.0}}]}\n");
	g_autoptr(GError) error = NULL;
	guint frees = 0;
	/* On the virtual clock A's sleep ends only once P waits: P frees first, whatever the load. */
	GsRunOptions opts = {.locking = _i, .clock = GS_CLOCK_VIRTUAL, .log = count_frees_of_a,
			     .log_data = &frees};
	g_autoptr(GsResult) r = gs_threads_run(w, &gs_backend_host, &opts, NULL, &error);

	ck_assert_msg(r != NULL, "%s", error != NULL ? error->message : "?");
	ck_assert_int_eq(r->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(r->totals.leaked_bytes, 0);
	check_memory(r);
	ck_assert_uint_eq(frees, 2);
}
END_TEST

/*
 * A backend that is the host's, watching reads: a buffer freed while a
 * compute that was given it has not ended is counted. Real threads must
 * leave a buffer another thread frees to the compute that reads it.
 */
static GMutex watched_lock;
static GHashTable *watched_reading; /* handle -> number of computes reading it */
static GHashTable *watched_by_thread; /* thread -> GArray of the handles its compute reads */
static guint watched_freed_while_read;

static void
watched_free(gpointer state, gpointer thread, GsTier tier, guint64 handle)
{
	g_mutex_lock(&watched_lock);
	watched_freed_while_read +=
		g_hash_table_lookup(watched_reading, GSIZE_TO_POINTER(handle)) != NULL;
	g_mutex_unlock(&watched_lock);
	gs_backend_host.free(state, thread, tier, handle);
}

static void
watched_compute_begin(gpointer state, gpointer thread, GsTime ns, const guint64 *uses,
		      guint n_uses)
{
	GArray *mine = g_array_new(FALSE, FALSE, sizeof(guint64));

	g_mutex_lock(&watched_lock);
	for (guint i = 0; i < n_uses; i++) {
		gpointer key = GSIZE_TO_POINTER(uses[i]);
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(watched_reading, key));

		g_hash_table_insert(watched_reading, key, GUINT_TO_POINTER(n + 1));
		g_array_append_val(mine, uses[i]);
	}
	g_hash_table_insert(watched_by_thread, thread, mine);
	g_mutex_unlock(&watched_lock);
	gs_backend_host.compute_begin(state, thread, ns, uses, n_uses);
}

static void
watched_compute_end(gpointer state, gpointer thread)
{
	GArray *mine;

	g_mutex_lock(&watched_lock);
	mine = g_hash_table_lookup(watched_by_thread, thread);
	for (guint i = 0; mine != NULL && i < mine->len; i++) {
		gpointer key = GSIZE_TO_POINTER(g_array_index(mine, guint64, i));
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(watched_reading, key));

		if (n > 1)
			g_hash_table_insert(watched_reading, key, GUINT_TO_POINTER(n - 1));
		else
			g_hash_table_remove(watched_reading, key);
	}
	g_hash_table_remove(watched_by_thread, thread);
	g_mutex_unlock(&watched_lock);
	if (gs_backend_host.compute_end != NULL)
		gs_backend_host.compute_end(state, thread);
}

/*
 * A buffer another thread frees while its owner's compute reads it (the
 * free at 1 ms, the compute from 0 to 2 ms, on the virtual clock) keeps its
 * bytes until the compute ends: without tiers, with tiers, with spilling.
 */
static const char *const read_while_freed_policies[] = {
	"",
	"policy: {reservations: {over: ignore}}\n",
	"policy: {spill: {enabled: true}}\n",
};

START_TEST(test_a_buffer_freed_while_read_waits_for_the_compute)
{
	GsBackendOps ops = gs_backend_host;
	g_autofree char *yaml = g_strdup_printf(
		"gpusim: 1\nname: read\nmemory: {gpu: {capacity: 10MiB}}\n%s"
		"tasks:\n  - {id: A, threads: [{ops: [{reserve: {res: r, size: 1MiB, mode: or_null}},\n"
		"      {alloc: {buf: x, size: 1MiB}}, {compute: {time: 2ms, uses: [x]}}]}]}\n"
		"pool_threads:\n  - {name: P, ops: [{until: 1ms}, {free: {buf: x, thread: A.0}}]}\n",
		read_while_freed_policies[_i]);
	g_autoptr(GsWorkload) w = load_text(yaml);
	GsRunOptions opts = {.clock = GS_CLOCK_VIRTUAL};
	g_autoptr(GError) error = NULL;
	g_autoptr(GsResult) r = NULL;

	ops.free = watched_free;
	ops.compute_begin = watched_compute_begin;
	ops.compute_end = watched_compute_end;
	watched_reading = g_hash_table_new(NULL, NULL);
	watched_by_thread = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify) g_array_unref);
	watched_freed_while_read = 0;
	r = gs_threads_run(w, &ops, &opts, NULL, &error);
	ck_assert_msg(r != NULL, "%s", error != NULL ? error->message : "?");
	ck_assert_int_eq(r->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_eq(watched_freed_while_read, 0);
	check_memory(r);
	g_hash_table_unref(watched_reading);
	g_hash_table_unref(watched_by_thread);
}
END_TEST

/* ---- the host backend: patterns, round trips, the private directory ---- */

START_TEST(test_round_trips_keep_every_byte)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GError) error = NULL;
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state;
	guint64 handle;
	GsBackendStats stats;
	struct stat st;
	GDir *dir;
	const char *name;
	g_autofree char *private_dir = NULL;

	state = tl_backend_open(&gs_backend_host, w, parent);
	dir = g_dir_open(parent, 0, NULL);
	name = g_dir_read_name(dir);
	ck_assert_ptr_nonnull(name);
	private_dir = g_build_filename(parent, name, NULL);
	g_dir_close(dir);
	ck_assert_int_eq(g_stat(private_dir, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert(gs_backend_alloc(&gs_backend_host, state, NULL, GS_TIER_GPU, 0, 100003, &handle));
	ck_assert(gs_backend_round_trip(&gs_backend_host, state, NULL, handle, GS_TIER_HOST, &error));
	ck_assert(gs_backend_round_trip(&gs_backend_host, state, NULL, handle, GS_TIER_DISK, &error));
	gs_backend_stats(&gs_backend_host, state, &stats);
	ck_assert_uint_eq(stats.round_trips, 2);
	ck_assert_uint_eq(stats.corrupt_buffers, 0);
	ck_assert_uint_ge(stats.bytes_checked, 2 * 100003);
	gs_backend_free(&gs_backend_host, state, NULL, GS_TIER_GPU, handle);
	tl_backend_close(&gs_backend_host, state, parent);
	/* Closing removed the private directory. */
	ck_assert(!g_file_test(private_dir, G_FILE_TEST_EXISTS));
}
END_TEST

static gpointer
open_host(GsWorkload *w, const char *parent, gboolean spills)
{
	w->policy.spill.enabled = spills;
	return tl_backend_open(&gs_backend_host, w, parent);
}

/* Moves keep every byte along each path, the old copy freed at each step. */
START_TEST(test_moves_keep_every_byte)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_host(w, parent, _i % 2 == 0), threads[2] = {NULL, NULL};

	tl_moves_keep_every_byte(&gs_backend_host, state, threads, &tl_move_paths[_i], 300007);
	tl_backend_close(&gs_backend_host, state, parent);
}
END_TEST

/* A byte changed on disk is caught when the buffer comes back, and counted. */
START_TEST(test_a_changed_file_is_caught)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_host(w, parent, TRUE);

	tl_a_changed_file_is_caught(&gs_backend_host, state, NULL, parent);
	tl_backend_close(&gs_backend_host, state, parent);
}
END_TEST

START_TEST(test_a_changed_word_is_caught)
{
	guint64 words[64];

	gs_pattern_fill(words, G_N_ELEMENTS(words), 7);
	ck_assert(gs_pattern_check(words, G_N_ELEMENTS(words), 7));
	ck_assert(!gs_pattern_check(words, G_N_ELEMENTS(words), 8));
	words[33] ^= 1u << 5;
	ck_assert(!gs_pattern_check(words, G_N_ELEMENTS(words), 7));
}
END_TEST

START_TEST(test_a_bad_disk_path_is_refused)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GError) error = NULL;

	g_free(w->disk.path);
	w->disk.path = g_strdup("/nonexistent/gpusim/disk");
	ck_assert_ptr_null(gs_threads_run(w, &gs_backend_host, NULL, NULL, &error));
	ck_assert(g_error_matches(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID));
}
END_TEST

/* The drivers' table: every name a user may give --backend, and what it finds. */
static const struct {
	const char *name;
	const char *found; /* the driver's name; NULL: none */
	gboolean device;   /* a real backend */
	gboolean batches;
	GsBackendError error;
} driver_rows[] = {
	{NULL, "sim", FALSE, TRUE, 0},
	{"sim", "sim", FALSE, TRUE, 0},
	{"host", "host", TRUE, FALSE, 0},
#ifdef HAVE_CUDA
	{"cuda", "cuda", TRUE, FALSE, 0},
#else
	{"cuda", NULL, FALSE, FALSE, GS_BACKEND_ERROR_UNAVAILABLE},
#endif
	{"warp", NULL, FALSE, FALSE, GS_BACKEND_ERROR_UNKNOWN},
	{"", NULL, FALSE, FALSE, GS_BACKEND_ERROR_UNKNOWN},
};

START_TEST(test_the_drivers_table)
{
	g_autoptr(GError) error = NULL;
	const GsDriver *d = gs_driver_lookup(driver_rows[_i].name, &error);

	if (driver_rows[_i].found == NULL) {
		ck_assert_ptr_null(d);
		ck_assert(g_error_matches(error, GS_BACKEND_ERROR, driver_rows[_i].error));
		ck_assert_ptr_nonnull(strstr(error->message, driver_rows[_i].name));
		return;
	}
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d->name, driver_rows[_i].found);
	ck_assert_int_eq(d->backend != NULL, driver_rows[_i].device);
	ck_assert_int_eq(d->batches, driver_rows[_i].batches);
	if (d->backend != NULL)
		ck_assert_str_eq(d->backend->name, d->name);
	ck_assert_ptr_nonnull(strstr(gs_driver_names(), d->name));
}
END_TEST

START_TEST(test_the_run_options_words)
{
	GsLocking locking;
	GsClock clock;

	ck_assert(gs_locking_from_name("global", &locking) && locking == GS_LOCKING_GLOBAL);
	ck_assert(gs_locking_from_name("fast", &locking) && locking == GS_LOCKING_FAST);
	ck_assert(!gs_locking_from_name("none", &locking));
	ck_assert(gs_clock_from_name("virtual", &clock) && clock == GS_CLOCK_VIRTUAL);
	ck_assert(gs_clock_from_name("real", &clock) && clock == GS_CLOCK_REAL);
	ck_assert(!gs_clock_from_name("wall", &clock));
}
END_TEST

/*
 * Four tasks spill each other's buffers on a GPU that holds two of them:
 * copies run while their owners compute on, free or bring back the same
 * buffers. Whatever the interleaving, nothing is lost, every tier is empty
 * at the end, and the model's and the backend's counts agree.
 */
START_TEST(test_spills_under_contention)
{
	Run run = run_text("gpusim: 1\n"
			   "name: spills-under-contention\n"
			   "memory: {gpu: {capacity: 6MiB}}\n"
			   "policy: {spill: {enabled: true, victim: lru}}\n"
			   "tasks:\n"
			   "  - id: T\n"
			   "    repeat: 4\n"
			   "    threads:\n"
			   "      - ops:\n"
			   "          - repeat:\n"
			   "              times: 4\n"
			   "              ops:\n"
			   "                - alloc: {buf: a, size: 1MiB, spillable: true}\n"
			   "                - alloc: {buf: b, size: 2MiB, spillable: true}\n"
			   "                - compute: {time: 2ms, uses: [a]}\n"
			   "                - compute: {time: 1ms, uses: [a, b]}\n"
			   "                - free: [a, b]\n",
			   _i);

	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_gt(run.result->totals.copies_checked, 0);
	ck_assert_uint_eq(run.result->totals.copies_lost, 0);
	ck_assert_uint_eq(run.stats.backend.corrupt_buffers, 0);
	ck_assert_uint_ge(run.stats.backend.moves, run.result->totals.copies_checked);
	ck_assert_int_eq(run.stats.fast_allocs, 0); /* the model admits every allocation */
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

/*
 * A compute may name a buffer twice in its uses. A host buffer it uses comes
 * to the GPU once: a second copy of a buffer already moving is a CRITICAL
 * (gs_memory_copy_begin), made fatal here.
 */
START_TEST(test_a_buffer_used_twice_comes_up_once)
{
	GLogLevelFlags fatal = g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
	Run run = run_text("gpusim: 1\n"
			   "name: used-twice\n"
			   "memory: {gpu: {capacity: 8MiB}}\n"
			   "policy: {spill: {enabled: true}}\n"
			   "tasks:\n"
			   "  - id: T\n"
			   "    threads:\n"
			   "      - ops:\n"
			   "          - alloc: {buf: h, size: 200KiB, kind: host}\n"
			   "          - compute: {time: 1ms, uses: [h, h], stream: s}\n"
			   "          - sync: s\n"
			   "          - free: h\n",
			   _i);

	g_log_set_always_fatal(fatal);
	ck_assert_int_eq(run.result->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_eq(run.result->totals.copies_lost, 0);
	ck_assert_uint_eq(run.stats.backend.corrupt_buffers, 0);
	check_memory(run.result);
	gs_result_free(run.result);
}
END_TEST

static Suite *
gs_test_suite_threads(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("driver");
	TCase *bk = tcase_create("host backend");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_fits_take_the_fast_path, 0, 2);
	tcase_add_loop_test(tc, test_deadlocks_are_busted, 0, 2);
	tcase_add_loop_test(tc, test_a_real_deadlock_ends_the_run, 0, 2);
	tcase_add_loop_test(tc, test_task_done_stops_the_other_threads, 0, 2);
	tcase_add_loop_test(tc, test_failed_attempts_go_again_behind, 0, 2);
	tcase_add_loop_test(tc, test_the_gpu_semaphore_orders_tasks, 0, 2);
	tcase_add_loop_test(tc, test_spills_under_contention, 0, 2);
	tcase_add_loop_test(tc, test_the_virtual_clock_ignores_the_machines_speed, 0, 2);
	tcase_add_test(tc, test_events_count_what_the_driver_handled);
	tcase_add_loop_test(tc, test_a_refusal_says_the_usage_it_would_make, 0,
			    G_N_ELEMENTS(usage_policies));
	tcase_add_loop_test(tc, test_a_thread_frees_another_threads_buffers, 0, 2);
	tcase_add_loop_test(tc, test_frees_across_threads_match_the_simulator, 0, 2);
	tcase_add_loop_test(tc, test_a_buffer_given_away_and_never_freed_leaks, 0, 4);
	tcase_add_loop_test(tc, test_a_free_across_threads_with_tiers, 0, 2);
	tcase_add_loop_test(tc, test_a_buffer_freed_while_read_waits_for_the_compute, 0,
			    G_N_ELEMENTS(read_while_freed_policies));
	tcase_add_loop_test(tc, test_a_buffer_used_twice_comes_up_once, 0, 2);
	suite_add_tcase(s, tc);
	tcase_add_test(bk, test_round_trips_keep_every_byte);
	tcase_add_loop_test(bk, test_moves_keep_every_byte, 0, G_N_ELEMENTS(tl_move_paths));
	tcase_add_test(bk, test_a_changed_file_is_caught);
	tcase_add_test(bk, test_a_changed_word_is_caught);
	tcase_add_test(bk, test_a_bad_disk_path_is_refused);
	tcase_add_loop_test(bk, test_the_drivers_table, 0, G_N_ELEMENTS(driver_rows));
	tcase_add_test(bk, test_the_run_options_words);
	suite_add_tcase(s, bk);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_threads());
}
