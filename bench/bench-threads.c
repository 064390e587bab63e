/*
 * bench-threads: allocation throughput of the real-thread driver, with the
 * fast path (an allocation that fits takes no global mutex) against a single
 * global mutex around every engine call (spark-rapids-jni's design, jni#3905).
 *
 * N threads (one per task, 1 to 16) on the host backend (or the one named
 * by --backend=NAME: cuda on a GPU) each loop allocate 4 KiB of GPU memory /
 * free it, on a GPU large enough that nothing ever fails, so every
 * allocation is the common case. Reported: allocate+free
 * pairs per second over all threads, best of REPEATS runs, and the share of
 * allocations that took the fast path. With fewer cores than threads the
 * figures above the core count are oversubscribed: threads queue for a CPU,
 * not only for the mutex. Nothing here is asserted.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "backends/threads/threads.h"
#include "cli/drivers.h"

#define PAIRS_TOTAL 400000 /* allocate+free pairs per run, shared by the threads */
#define REPEATS 3
#define KIB ((gint64) 1 << 10)
#define GIB ((gint64) 1 << 30)

static GsWorkload *
loop_load(guint threads)
{
	GsWorkload *w = gs_workload_new();

	w->name = g_strdup("alloc-free-loop");
	w->gpu.capacity = GIB;
	for (guint i = 0; i < threads; i++) {
		g_autofree char *id = g_strdup_printf("t%u", i);
		g_autofree char *name = g_strdup_printf("t%u.0", i);
		GsTaskSpec *task = gs_task_spec_new(id);
		GsThreadSpec *t = gs_thread_spec_new(name);
		GsOp loop = {.kind = GS_OP_REPEAT};
		GsOp alloc = {.kind = GS_OP_ALLOC}, release = {.kind = GS_OP_FREE};
		guint buf = gs_name_index(t->buffers, "b");

		alloc.alloc.buf = buf;
		alloc.alloc.size = 4 * KIB;
		alloc.alloc.kind = GS_KIND_GPU;
		alloc.alloc.blocking = TRUE;
		alloc.alloc.reservation = -1;
		release.free.bufs = (GsNames){0};
		gs_names_append(&release.free.bufs, buf);
		loop.repeat.times = PAIRS_TOTAL / threads;
		loop.repeat.ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
		g_array_append_val(loop.repeat.ops, alloc);
		g_array_append_val(loop.repeat.ops, release);
		g_array_append_val(t->ops, loop);
		g_ptr_array_add(task->threads, t);
		g_ptr_array_add(w->tasks, task);
	}
	return w;
}

/* Pairs per second of the best run; *fast_share: allocations on the fast path. */
static double
measure(const GsBackendOps *backend, guint threads, GsLocking locking, double *fast_share)
{
	g_autoptr(GsWorkload) w = loop_load(threads);
	GsRunOptions opts = {.locking = locking};
	double best = 0;

	for (int i = 0; i < REPEATS; i++) {
		g_autoptr(GError) error = NULL;
		GsThreadsStats stats = {0};
		gint64 start = g_get_monotonic_time();
		GsResult *r = gs_threads_run(w, backend, &opts, &stats, &error);
		double seconds = (double) (g_get_monotonic_time() - start) / 1e6;
		double pairs = (double) (PAIRS_TOTAL / threads * threads);

		if (r == NULL) {
			fprintf(stderr, "bench-threads: %s\n", error->message);
			exit(EXIT_FAILURE);
		}
		if (r->outcome != GS_OUTCOME_COMPLETED) {
			fprintf(stderr, "bench-threads: the run ended %s\n", gs_outcome_name(r->outcome));
			exit(EXIT_FAILURE);
		}
		best = MAX(best, pairs / seconds);
		*fast_share = (double) stats.fast_allocs /
			      (double) MAX(stats.fast_allocs + stats.locked_allocs, 1);
		gs_result_free(r);
	}
	return best;
}

/* FALSE (and why) when @backend cannot run here, as cuda without a GPU. */
static gboolean
available(const GsBackendOps *backend, GError **error)
{
	g_autoptr(GsWorkload) w = loop_load(1);
	gpointer state = gs_backend_open(backend, w, error);

	if (state != NULL)
		gs_backend_close(backend, state);
	return state != NULL;
}

int
main(int argc, char **argv)
{
	static const guint counts[] = {1, 2, 4, 8, 16};
	const char *name = argc > 1 && g_str_has_prefix(argv[1], "--backend=") ? argv[1] + 10 : "host";
	g_autoptr(GError) error = NULL;
	const GsDriver *driver = gs_driver_lookup(name, &error);
	const GsBackendOps *backend = driver != NULL ? driver->backend : NULL;

	if (driver != NULL && backend == NULL)
		g_set_error(&error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID,
			    "%s runs no real threads", name);
	if (backend == NULL || argc > 2 || (argc == 2 && !g_str_has_prefix(argv[1], "--backend="))) {
		fprintf(stderr, "usage: bench-threads [--backend=NAME]%s%s\n", error ? ": " : "",
			error ? error->message : "");
		return 2;
	}
	if (!available(backend, &error)) {
		printf("bench-threads: nothing measured: %s\n", error->message);
		return EXIT_SUCCESS;
	}
	printf("gpusim %s real-thread benchmark: 4 KiB allocate+free pairs, %s backend, "
	       "%u CPUs online\n", gs_version(), backend->name, g_get_num_processors());
	printf("threads   fast path (M pairs/s, share)   global mutex (M pairs/s)   ratio\n");
	for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
		double fast_share, global_share;
		double fast = measure(backend, counts[i], GS_LOCKING_FAST, &fast_share);
		double global = measure(backend, counts[i], GS_LOCKING_GLOBAL, &global_share);

		printf("%7u   %10.2f        %5.1f%%          %10.2f             %5.2f\n", counts[i],
		       fast / 1e6, 100 * fast_share, global / 1e6, fast / global);
	}
	return EXIT_SUCCESS;
}
