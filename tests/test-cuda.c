/*
 * Tests of the CUDA backend (backends/cuda/), built only with CUDA: as
 * tests/test-cuda against the CUDA runtime, where without a GPU (or a driver)
 * the program exits 77 and Automake reports SKIP; and as
 * tests/test-cuda-on-cpu against the CPU stand-in (cuda-on-cpu.c), which
 * always runs and adds the stand-in's own tests (test-cuda-on-cpu.c).
 *
 * What they cover: stream-ordered allocations from a pool that reserves in
 * granules and takes every buffer the capacity admits, the pattern surviving
 * round trips and moves between tiers (made by another thread than the one
 * that allocated, through pinned blocks and disk files, also when the host
 * tier is full), a changed file caught, a capacity above the free memory
 * refused, a scenario replayed on real threads, and calibrate's YAML.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>

#include "backends/cuda/cuda.h"
#include "backends/measure.h"
#include "scenario/loader.h"
#include "testlib.h"
#include "testlib-backend.h"
#ifdef GS_CUDA_ON_CPU
#include "test-cuda-on-cpu.h"
#endif
#include "backends/threads/threads.h"

#define MIB ((gint64) 1 << 20)

START_TEST(test_round_trips_on_the_device)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GError) error = NULL;
	gpointer state, thread;
	guint64 handle;
	GsBackendStats stats;

	w->gpu.capacity = 64 * MIB;
	w->host.capacity = 256 * MIB;
	state = gs_backend_open(&gs_backend_cuda, w, &error);
	ck_assert_msg(state != NULL, "%s", error ? error->message : "?");
	thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, 3 * MIB + 5,
				   &handle));
	for (int i = 0; i < 3; i++) {
		ck_assert_msg(gs_backend_round_trip(&gs_backend_cuda, state, thread, handle,
						    GS_TIER_HOST, &error), "%s",
			      error ? error->message : "data changed");
		ck_assert_msg(gs_backend_round_trip(&gs_backend_cuda, state, thread, handle,
						    GS_TIER_DISK, &error), "%s",
			      error ? error->message : "data changed");
	}
	gs_backend_stats(&gs_backend_cuda, state, &stats);
	ck_assert_uint_eq(stats.round_trips, 6);
	ck_assert_uint_eq(stats.corrupt_buffers, 0);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handle);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	gs_backend_close(&gs_backend_cuda, state);
}
END_TEST

static gpointer
open_cuda(GsWorkload *w, const char *parent, gint64 host_capacity)
{
	w->gpu.capacity = 64 * MIB;
	w->host.capacity = host_capacity;
	return tl_backend_open(&gs_backend_cuda, w, parent);
}

/*
 * Along every path, each move made by the other thread on its own stream:
 * the buffer's bytes must exist before another stream copies them.
 */
START_TEST(test_moves_between_threads_keep_every_byte)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_cuda(w, parent, 64 * MIB), threads[2];

	for (int i = 0; i < 2; i++)
		threads[i] = gs_backend_thread_begin(&gs_backend_cuda, state);
	tl_moves_keep_every_byte(&gs_backend_cuda, state, threads, &tl_move_paths[_i], 3 * MIB + 24);
	for (int i = 0; i < 2; i++)
		gs_backend_thread_end(&gs_backend_cuda, state, threads[i]);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

START_TEST(test_a_changed_file_is_caught)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_cuda(w, parent, 64 * MIB);
	gpointer thread = gs_backend_thread_begin(&gs_backend_cuda, state);

	tl_a_changed_file_is_caught(&gs_backend_cuda, state, thread, parent);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/* A GPU buffer spilled to disk passes through pinned memory even when the host tier is full. */
START_TEST(test_a_full_host_tier_still_stages_to_disk)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state, thread;
	guint64 host, more;

	w->host.block_size = MIB;
	w->host.pool_blocks = 4;
	w->host.initial_pools = 1;
	state = open_cuda(w, parent, 4 * MIB);
	thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_HOST, 0, 4 * MIB, &host));
	ck_assert(!gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_HOST, 0, MIB, &more));
	/* GPU -> disk -> GPU, 3 MiB */
	tl_moves_keep_every_byte(&gs_backend_cuda, state, (gpointer[]){thread, thread},
				 &tl_move_paths[1], 3 * MIB);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_HOST, host);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/*
 * An alignment above the pool's 256 bytes is met by over-allocating; the
 * device must still take every buffer that fits the capacity as the engine
 * charges it (four 16 MiB buffers, 1 MiB aligned, fill the 64 MiB exactly).
 */
START_TEST(test_a_large_alignment_fits_the_capacity)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state, thread;
	guint64 handles[4];
	GsBackendStats stats;

	w->gpu.alignment = MIB;
	state = open_cuda(w, parent, 64 * MIB);
	thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	for (guint i = 0; i < G_N_ELEMENTS(handles); i++)
		ck_assert_msg(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0,
					       16 * MIB, &handles[i]),
			      "buffer %u of 4 was refused", i);
	gs_backend_stats(&gs_backend_cuda, state, &stats);
	ck_assert_uint_eq(stats.device_refusals, 0);
	for (guint i = 0; i < G_N_ELEMENTS(handles); i++)
		gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handles[i]);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/*
 * Buffers that fill the capacity as the engine counts it are all taken,
 * although a pool reserves device memory in granules of 2 MiB or more (the
 * stand-in as the runtime): three 3 MiB buffers reserve 12 MiB for a 10 MiB
 * capacity, so a pool capped at the capacity would refuse the third.
 */
static const struct {
	gint64 capacity, bytes[3];
} granule_rows[] = {
	{10 * MIB, {3 * MIB, 3 * MIB, 3 * MIB}},
	{14 * MIB, {7 * MIB, 7 * MIB}},
	{10 * MIB, {7 * MIB, 3 * MIB}},
	{4 * MIB, {MIB + 1, MIB + 1, MIB + 1}},
};

START_TEST(test_buffers_that_fill_the_capacity_fit_a_pool_of_granules)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	guint64 handles[G_N_ELEMENTS(granule_rows[_i].bytes)];
	gpointer state, thread;
	GsBackendStats stats;
	guint n = 0;

	w->gpu.capacity = granule_rows[_i].capacity;
	w->host.capacity = 64 * MIB;
	state = tl_backend_open(&gs_backend_cuda, w, parent);
	thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	for (; n < G_N_ELEMENTS(handles) && granule_rows[_i].bytes[n] > 0; n++)
		ck_assert_msg(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0,
					       granule_rows[_i].bytes[n], &handles[n]),
			      "buffer %u was refused", n);
	gs_backend_stats(&gs_backend_cuda, state, &stats);
	ck_assert_uint_eq(stats.device_refusals, 0);
	while (n-- > 0)
		gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handles[n]);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/*
 * Sizes, alignments and host blocks that are not multiples of the kernels'
 * 8-byte words: a compute reads the buffer and every path keeps every byte.
 */
static const struct {
	gint64 block_size, alignment, bytes;
} odd_rows[] = {
	{4100, 256, 3 * MIB + 5},
	{MIB + 3, 256, 2 * MIB + 7},
	{MIB, 12, 1001},
	{MIB, 100, 77777},
	{4100, 12, 9 * 4100 + 1},
};

START_TEST(test_odd_sizes_alignments_and_blocks_keep_every_byte)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state, threads[2];
	guint64 handle;

	w->host.block_size = odd_rows[_i].block_size;
	w->gpu.alignment = odd_rows[_i].alignment;
	state = open_cuda(w, parent, 64 * MIB);
	for (int i = 0; i < 2; i++)
		threads[i] = gs_backend_thread_begin(&gs_backend_cuda, state);
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, threads[0], GS_TIER_GPU, 0,
				   odd_rows[_i].bytes, &handle));
	gs_backend_compute_begin(&gs_backend_cuda, state, threads[0], 1000, &handle, 1);
	gs_backend_compute_end(&gs_backend_cuda, state, threads[0]);
	gs_backend_free(&gs_backend_cuda, state, threads[0], GS_TIER_GPU, handle);
	for (guint p = 0; p < G_N_ELEMENTS(tl_move_paths); p++)
		tl_moves_keep_every_byte(&gs_backend_cuda, state, threads, &tl_move_paths[p],
					 odd_rows[_i].bytes);
	for (int i = 0; i < 2; i++)
		gs_backend_thread_end(&gs_backend_cuda, state, threads[i]);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

#ifdef GS_CUDA_ON_CPU
/* Moves @handle from @from to @to with every copy dropped; returns whether it was found intact. */
static gboolean
move_dropping_copies(gpointer state, gpointer thread, guint64 handle, GsTier from, GsTier to,
		     guint64 *moved)
{
	g_autoptr(GError) error = NULL;
	gboolean intact;

	gs_cuda_on_cpu_drop_copies(1000);
	ck_assert_msg(gs_backend_move(&gs_backend_cuda, state, thread, handle, from, to, 0, moved,
				      &intact, &error), "%s", error ? error->message : "?");
	gs_cuda_on_cpu_drop_copies(0);
	return intact;
}

/*
 * A copy the runtime refuses halfway through a move (the second of three
 * blocks) fails the move, after the work already queued is done: no memory
 * it writes is freed or handed out again first. The error is no refusal:
 * the device counts as failed.
 */
START_TEST(test_a_move_that_fails_midway_frees_nothing_in_use)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	g_autoptr(GError) error = NULL;
	gpointer state, thread;
	guint64 gpu, host, back;
	gboolean intact;

	w->host.block_size = MIB;
	state = open_cuda(w, parent, 64 * MIB);
	thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, 3 * MIB, &gpu));
	ck_assert(gs_backend_move(&gs_backend_cuda, state, thread, gpu, GS_TIER_GPU, GS_TIER_HOST, 0,
				  &host, &intact, NULL) && intact);
	gs_cuda_on_cpu_refuse_copy(1);
	ck_assert(!gs_backend_move(&gs_backend_cuda, state, thread, host, GS_TIER_HOST, GS_TIER_GPU,
				   0, &back, &intact, &error));
	ck_assert_ptr_nonnull(strstr(error->message, "invalid argument"));
	g_clear_error(&error);
	ck_assert(!gs_backend_healthy(&gs_backend_cuda, state, &error));
	ck_assert_int_eq(error->code, GS_BACKEND_ERROR_FAILED);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_HOST, host);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, gpu);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/*
 * A refused allocation leaves the thread's last error set; the kernel
 * wrappers return the last error: the next compute must not be blamed for
 * it, nor the device taken for failed.
 */
START_TEST(test_a_refusal_is_not_blamed_on_the_next_launch)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_cuda(w, parent, 64 * MIB);
	gpointer thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	guint64 huge, small;
	GsBackendStats stats;

	ck_assert(!gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0,
				    (gint64) 1 << 40, &huge));
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, MIB, &small));
	gs_backend_compute_begin(&gs_backend_cuda, state, thread, 1000, &small, 1);
	gs_backend_compute_end(&gs_backend_cuda, state, thread);
	ck_assert(gs_backend_healthy(&gs_backend_cuda, state, NULL));
	gs_backend_stats(&gs_backend_cuda, state, &stats);
	ck_assert_uint_eq(stats.device_refusals, 1);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, small);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/*
 * A copy that never happened is caught although its destination is memory
 * that held those very bytes (a pool's just-freed buffer, a pinned block
 * back on the free list): destinations are cleared before a copy.
 */
/*
 * The pool reserves the capacity at open (RMM's initial pool size): the
 * run's allocations up to it take no trip to the driver.
 */
START_TEST(test_the_pool_is_primed_at_open)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	unsigned long grows = gs_cuda_on_cpu_pool_grows();
	gpointer state = open_cuda(w, parent, 64 * MIB);
	gpointer thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	guint64 handles[2];

	ck_assert_uint_eq(gs_cuda_on_cpu_pool_grows() - grows, 1);
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, 32 * MIB,
				   &handles[0]));
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, 16 * MIB,
				   &handles[1]));
	ck_assert_uint_eq(gs_cuda_on_cpu_pool_grows() - grows, 1);
	for (guint i = 0; i < 2; i++)
		gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handles[i]);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

START_TEST(test_a_dropped_copy_is_caught)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_cuda(w, parent, 64 * MIB);
	gpointer thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	guint64 gpu, host, again;
	gboolean intact;
	GsBackendStats stats;

	/* GPU -> host, then host -> GPU into the memory the first GPU copy left. */
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, MIB, &gpu));
	ck_assert(gs_backend_move(&gs_backend_cuda, state, thread, gpu, GS_TIER_GPU, GS_TIER_HOST, 0,
				  &host, &intact, NULL) && intact);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, gpu);
	ck_assert(!move_dropping_copies(state, thread, host, GS_TIER_HOST, GS_TIER_GPU, &again));
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, again);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_HOST, host);
	/* GPU -> host twice: the second lands in the first's blocks, given back. */
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, MIB, &gpu));
	ck_assert(gs_backend_move(&gs_backend_cuda, state, thread, gpu, GS_TIER_GPU, GS_TIER_HOST, 0,
				  &host, &intact, NULL) && intact);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_HOST, host);
	ck_assert(!move_dropping_copies(state, thread, gpu, GS_TIER_GPU, GS_TIER_HOST, &host));
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_HOST, host);
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, gpu);
	gs_backend_stats(&gs_backend_cuda, state, &stats);
	ck_assert_uint_eq(stats.corrupt_buffers, 2);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

typedef struct {
	gpointer state, thread;
	guint64 handle;
	gboolean ok, done;
} RoundTrip;

/* pthread rather than GLib locks: ThreadSanitizer sees these. */
static pthread_mutex_t round_trips_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t round_trip_done = PTHREAD_COND_INITIALIZER;

static gpointer
round_trip_main(gpointer data)
{
	RoundTrip *rt = data;
	gboolean ok = gs_backend_round_trip(&gs_backend_cuda, rt->state, rt->thread, rt->handle,
					    GS_TIER_HOST, NULL);

	pthread_mutex_lock(&round_trips_lock);
	rt->ok = ok;
	rt->done = TRUE;
	pthread_cond_broadcast(&round_trip_done);
	pthread_mutex_unlock(&round_trips_lock);
	return NULL;
}

/* Whether @rt's round trip ends within @seconds. */
static gboolean
round_trip_ends_within(RoundTrip *rt, gint64 seconds)
{
	struct timespec until;
	gboolean done;

	clock_gettime(CLOCK_REALTIME, &until); /* the clock a default condition variable waits on */
	until.tv_sec += seconds;
	pthread_mutex_lock(&round_trips_lock);
	while (!rt->done && pthread_cond_timedwait(&round_trip_done, &round_trips_lock, &until) == 0)
		;
	done = rt->done;
	pthread_mutex_unlock(&round_trips_lock);
	return done;
}

/*
 * While one thread's pattern check waits for its stream, another thread's
 * round trip on the same GPU goes through: checks never wait for one
 * another (a lock held across the synchronisation made every unspill on a
 * device wait for the one before). The held check is let go after the other
 * round trip, or after a minute without it: a liveness bound, not a timing.
 */
START_TEST(test_a_check_in_progress_holds_up_no_other_thread)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state = open_cuda(w, parent, 64 * MIB);
	RoundTrip held = {.state = state}, other = {.state = state};
	GThread *first, *second;
	gboolean went_through;

	held.thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	other.thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, held.thread, GS_TIER_GPU, 0, MIB,
				   &held.handle));
	ck_assert(gs_backend_alloc(&gs_backend_cuda, state, other.thread, GS_TIER_GPU, 0, MIB,
				   &other.handle));
	gs_cuda_on_cpu_hold_next_check();
	first = g_thread_new("held", round_trip_main, &held);
	ck_assert(gs_cuda_on_cpu_check_held(60));
	second = g_thread_new("other", round_trip_main, &other);
	went_through = round_trip_ends_within(&other, 60);
	gs_cuda_on_cpu_release_check();
	g_thread_join(first);
	g_thread_join(second);
	ck_assert_msg(went_through, "a round trip waited for another thread's check");
	ck_assert(held.ok && other.ok);
	gs_backend_free(&gs_backend_cuda, state, held.thread, GS_TIER_GPU, held.handle);
	gs_backend_free(&gs_backend_cuda, state, other.thread, GS_TIER_GPU, other.handle);
	gs_backend_thread_end(&gs_backend_cuda, state, held.thread);
	gs_backend_thread_end(&gs_backend_cuda, state, other.thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST
#endif

/*
 * A compute that uses buffers on two GPUs runs on the first one's and reads
 * only the buffers there: reading the other GPU's memory would need peer
 * access, which nothing granted.
 */
START_TEST(test_a_compute_reads_only_its_own_gpus_buffers)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autofree char *parent = g_dir_make_tmp("gpusim-disk-XXXXXX", NULL);
	gpointer state, thread;
	guint64 handles[2];

	w->gpu.devices = 2;
	state = open_cuda(w, parent, 64 * MIB);
	thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	for (guint i = 0; i < 2; i++)
		ck_assert(gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, i, MIB,
					   &handles[i]));
	gs_backend_compute_begin(&gs_backend_cuda, state, thread, 1000, handles, 2);
	gs_backend_compute_end(&gs_backend_cuda, state, thread);
	ck_assert(gs_backend_healthy(&gs_backend_cuda, state, NULL));
	for (guint i = 0; i < 2; i++)
		gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handles[i]);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	tl_backend_close(&gs_backend_cuda, state, parent);
}
END_TEST

/* What the machine lacks: the scenario is valid, the backend is unavailable here (exit 3). */
typedef struct {
	gint64 capacity;
	guint devices;
	const char *message;
} LackRow;

static const LackRow lack_rows[] = {
	{(gint64) 1 << 50, 1, "bytes free"},
	{(gint64) 1 << 20, 64, "memory.gpu.devices is 64"},
};

START_TEST(test_what_the_machine_lacks_is_refused)
{
	const LackRow *row = &lack_rows[_i];
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GError) error = NULL;

	w->gpu.capacity = row->capacity;
	w->gpu.devices = row->devices;
	ck_assert_ptr_null(gs_backend_open(&gs_backend_cuda, w, &error));
	ck_assert(g_error_matches(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE));
	ck_assert_ptr_nonnull(strstr(error->message, row->message));
}
END_TEST

START_TEST(test_a_scenario_on_the_device)
{
	g_autofree char *path = g_build_filename(g_getenv("top_srcdir") ? g_getenv("top_srcdir") : "..",
						 "scenarios", "wide-gaps-rollback.yaml", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);
	GsThreadsStats stats = {0};
	GsResult *r;

	ck_assert_msg(w != NULL, "%s", error ? error->message : "?");
	r = gs_threads_run(w, &gs_backend_cuda, NULL, &stats, &error);
	ck_assert_msg(r != NULL, "%s", error ? error->message : "?");
	ck_assert_int_eq(r->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_uint_ge(r->totals.splits, 1);
	ck_assert_uint_eq(stats.backend.corrupt_buffers, 0);
	gs_result_free(r);
}
END_TEST

START_TEST(test_calibrate_writes_includable_yaml)
{
	g_autoptr(GString) yaml = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
#ifdef GS_CUDA_ON_CPU
	unsigned long grows = gs_cuda_on_cpu_pool_grows();
#endif

	ck_assert_msg(gs_backend_calibrate(&gs_backend_cuda, g_get_tmp_dir(), yaml, &error), "%s",
		      error ? error->message : "?");
	ck_assert_ptr_nonnull(strstr(yaml->str, "\nmemory:\n  gpu: {capacity: "));
	ck_assert_ptr_nonnull(strstr(yaml->str, "\nlinks:\n  gpu_host: {bandwidth: "));
	ck_assert_ptr_nonnull(strstr(yaml->str, "\n  host_disk: {bandwidth: "));
	ck_assert_ptr_nonnull(strstr(yaml->str, "alloc_latency: "));
	ck_assert_ptr_nonnull(strstr(yaml->str, "\n  host_pools: {bandwidth: "));
	ck_assert_ptr_nonnull(strstr(yaml->str, "\n  lanes: "));
	ck_assert_ptr_nonnull(strstr(yaml->str, "\n# raw pinned copies: host->device "));
#ifdef GS_CUDA_ON_CPU
	/* The stand-in's 80 GiB are free: the RAPIDS Accelerator's pool leaves 640 MiB. */
	ck_assert_ptr_nonnull(strstr(yaml->str, "  gpu: {capacity: 81280MiB}\n"));
	/*
	 * Measured through the backend, whose pool keeps what it reserved: a
	 * trip to the driver for each size the pool had no room for yet, where
	 * a pool at the default release threshold makes one of every sample
	 * (GS_MEASURE_SMALL_SAMPLES allocations of one size, as many moves).
	 */
	ck_assert_uint_lt(gs_cuda_on_cpu_pool_grows() - grows, GS_MEASURE_LARGE_SAMPLES);
#endif
}
END_TEST

int
main(void)
{
	Suite *s;
	TCase *tc;
	int n;

#ifdef GS_CUDA_ON_CPU
	/*
	 * The stand-in's own tests fork a child each (some must abort), before
	 * this process starts the runtime: a child forked after it could not
	 * use it.
	 */
	s = suite_create("cuda-on-cpu");
	suite_add_tcase(s, gs_test_cuda_stand_in());
	if (tl_run_suite(s) != EXIT_SUCCESS)
		return EXIT_FAILURE;
#endif
	if (!gs_cuda_device_count(&n, NULL))
		return 77; /* no GPU here: SKIP */
	/* Counting the devices started CUDA: a forked child could not use it. */
	g_setenv("CK_FORK", "no", TRUE);
	s = suite_create("cuda");
	tc = tcase_create("device");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_round_trips_on_the_device);
	tcase_add_loop_test(tc, test_moves_between_threads_keep_every_byte, 0,
			    G_N_ELEMENTS(tl_move_paths));
	tcase_add_test(tc, test_a_changed_file_is_caught);
	tcase_add_test(tc, test_a_full_host_tier_still_stages_to_disk);
	tcase_add_test(tc, test_a_large_alignment_fits_the_capacity);
	tcase_add_loop_test(tc, test_buffers_that_fill_the_capacity_fit_a_pool_of_granules, 0,
			    G_N_ELEMENTS(granule_rows));
	/* Two devices' buffers need two devices (the stand-in has several). */
	if (n >= 2)
		tcase_add_test(tc, test_a_compute_reads_only_its_own_gpus_buffers);
	else
		g_print("test-cuda: one GPU here: the two-device test is not run\n");
	tcase_add_loop_test(tc, test_odd_sizes_alignments_and_blocks_keep_every_byte, 0,
			    G_N_ELEMENTS(odd_rows));
	tcase_add_loop_test(tc, test_what_the_machine_lacks_is_refused, 0, G_N_ELEMENTS(lack_rows));
	tcase_add_test(tc, test_a_scenario_on_the_device);
	tcase_add_test(tc, test_calibrate_writes_includable_yaml);
#ifdef GS_CUDA_ON_CPU
	tcase_add_test(tc, test_a_refusal_is_not_blamed_on_the_next_launch);
	tcase_add_test(tc, test_the_pool_is_primed_at_open);
	tcase_add_test(tc, test_a_dropped_copy_is_caught);
	tcase_add_test(tc, test_a_move_that_fails_midway_frees_nothing_in_use);
	tcase_add_test(tc, test_a_check_in_progress_holds_up_no_other_thread);
#endif
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
