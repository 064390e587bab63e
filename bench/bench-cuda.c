/*
 * bench-cuda: what the CUDA backend costs on a GPU, against the CUDA runtime
 * alone. Without a GPU it says so and exits 0: nothing is measured.
 *
 * First, the driver's and the runtime's versions, and what each of the
 * backend's kernels takes at its first launch (with its synchronise) against
 * its second: a kernel without machine code for this GPU is compiled just in
 * time at the first.
 *
 * Allocation: stream-ordered allocate+free pairs of 4 KiB and of 1 MiB,
 * raw (cudaMallocFromPoolAsync, a synchronise, and cudaFreeAsync, on a pool
 * that keeps its memory and a stream of one's own, as the backend makes
 * them) against the backend's alloc() and free(). Each run makes PAIRS
 * pairs; reported is ns per pair, the median of RUNS runs. (A whole
 * gpusim run adds the interpreter and the engine: bench-threads
 * --backend=cuda gives that, from 1 to 16 threads.)
 *
 * Spill throughput: a GPU buffer of 1, 16 and 256 MiB copied to pinned host
 * memory and back, raw (one cudaMemcpyAsync each way between a cudaMalloc
 * buffer and a cudaHostAlloc one, synchronised) against the backend's move()
 * to the host tier and back (staged through pinned blocks of
 * memory.host.block_size, and checked against the buffer's pattern where it
 * lands: on the CPU in host memory, by a kernel on the GPU). GB/s, best of
 * RUNS; the first move also writes the buffer's pattern. Beside the move to
 * the host, what it does on the CPU alone: clearing the pinned blocks before
 * the copy and checking them after it. Nothing here is asserted.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "backends/cuda/cuda.h"
#include "backends/cuda/kernel.h"
#include "backends/pattern.h"
#include "backends/threads/threads.h"
#include "run/samples.h"

#define PAIRS 20000
#define RUNS 5
#define MIB ((gint64) 1 << 20)
#define GIB ((gint64) 1 << 30)

static void
check(cudaError_t err, const char *what)
{
	if (err != cudaSuccess) {
		fprintf(stderr, "bench-cuda: %s: %s\n", what, cudaGetErrorString(err));
		exit(EXIT_FAILURE);
	}
}

static double
seconds_since(gint64 start)
{
	return (double) (g_get_monotonic_time() - start) / 1e6;
}

/* ns per raw allocate+free pair of @bytes, the median of RUNS runs. */
static double
raw_pairs(gint64 bytes)
{
	struct cudaMemPoolProps props = {0};
	guint64 threshold = G_MAXUINT64;
	cudaMemPool_t pool;
	cudaStream_t stream;
	double ns[RUNS];

	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	check(cudaMemPoolCreate(&pool, &props), "creating a pool");
	check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
	      "keeping the pool's memory");
	check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a stream");
	for (int r = 0; r < RUNS; r++) {
		gint64 start = g_get_monotonic_time();

		for (int i = 0; i < PAIRS; i++) {
			void *p;

			check(cudaMallocFromPoolAsync(&p, (size_t) bytes, pool, stream), "allocating");
			check(cudaStreamSynchronize(stream), "allocating");
			check(cudaFreeAsync(p, stream), "freeing");
		}
		check(cudaStreamSynchronize(stream), "synchronising");
		ns[r] = seconds_since(start) * 1e9 / PAIRS;
	}
	check(cudaStreamDestroy(stream), "destroying the stream");
	check(cudaMemPoolDestroy(pool), "destroying the pool");
	return gs_samples_median(ns, RUNS);
}

static gpointer
open_backend(GsWorkload *w)
{
	g_autoptr(GError) error = NULL;
	gpointer state;

	w->gpu.capacity = GIB;
	w->host.capacity = GIB;
	state = gs_backend_open(&gs_backend_cuda, w, &error);
	if (state == NULL) {
		fprintf(stderr, "bench-cuda: %s\n", error->message);
		exit(EXIT_FAILURE);
	}
	return state;
}

/* ns per allocate+free pair of @bytes through the backend, the median of RUNS runs. */
static double
backend_pairs(gint64 bytes)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	gpointer state = open_backend(w);
	double ns[RUNS];

	for (int r = 0; r < RUNS; r++) {
		gpointer thread = gs_backend_thread_begin(&gs_backend_cuda, state);
		gint64 start = g_get_monotonic_time();

		for (int i = 0; i < PAIRS; i++) {
			guint64 handle;

			if (!gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, bytes,
					      &handle)) {
				fprintf(stderr, "bench-cuda: the backend refused %" G_GINT64_FORMAT
					" bytes\n", bytes);
				exit(EXIT_FAILURE);
			}
			gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handle);
		}
		gs_backend_thread_end(&gs_backend_cuda, state, thread); /* synchronises */
		ns[r] = seconds_since(start) * 1e9 / PAIRS;
	}
	gs_backend_close(&gs_backend_cuda, state);
	return gs_samples_median(ns, RUNS);
}

/* Best raw GB/s of @bytes device→host (*@d2h) and host→device (*@h2d). */
static void
raw_copies(gint64 bytes, double *d2h, double *h2d)
{
	void *dev, *host;
	cudaStream_t stream;

	check(cudaMalloc(&dev, (size_t) bytes), "allocating");
	check(cudaHostAlloc(&host, (size_t) bytes, cudaHostAllocDefault), "pinning");
	check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a stream");
	check(cudaMemsetAsync(dev, 1, (size_t) bytes, stream), "clearing");
	*d2h = *h2d = 0;
	for (int r = 0; r < RUNS; r++) {
		gint64 start = g_get_monotonic_time();

		check(cudaMemcpyAsync(host, dev, (size_t) bytes, cudaMemcpyDeviceToHost, stream),
		      "copying to the host");
		check(cudaStreamSynchronize(stream), "synchronising");
		*d2h = MAX(*d2h, (double) bytes / seconds_since(start) / 1e9);
		start = g_get_monotonic_time();
		check(cudaMemcpyAsync(dev, host, (size_t) bytes, cudaMemcpyHostToDevice, stream),
		      "copying to the device");
		check(cudaStreamSynchronize(stream), "synchronising");
		*h2d = MAX(*h2d, (double) bytes / seconds_since(start) / 1e9);
	}
	check(cudaStreamDestroy(stream), "destroying the stream");
	check(cudaFreeHost(host), "unpinning");
	check(cudaFree(dev), "freeing");
}

/* Times one move of *@handle to @to; the old copy is freed and *@handle is the new one. */
static double
timed_move(gpointer state, gpointer thread, guint64 *handle, GsTier from, GsTier to, gint64 bytes)
{
	g_autoptr(GError) error = NULL;
	gint64 start = g_get_monotonic_time();
	guint64 moved;
	gboolean intact;
	double seconds;

	if (!gs_backend_move(&gs_backend_cuda, state, thread, *handle, from, to, 0, &moved, &intact,
			     &error) || !intact) {
		fprintf(stderr, "bench-cuda: a move failed: %s\n",
			error != NULL ? error->message : "the bytes changed");
		exit(EXIT_FAILURE);
	}
	seconds = seconds_since(start);
	gs_backend_free(&gs_backend_cuda, state, thread, from, *handle);
	*handle = moved;
	return (double) bytes / seconds / 1e9;
}

/* Best GB/s of the backend's moves of @bytes to the host tier (*@d2h) and back (*@h2d). */
static void
backend_moves(gint64 bytes, double *d2h, double *h2d)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	gpointer state = open_backend(w), thread = gs_backend_thread_begin(&gs_backend_cuda, state);
	guint64 handle;

	if (!gs_backend_alloc(&gs_backend_cuda, state, thread, GS_TIER_GPU, 0, bytes, &handle)) {
		fprintf(stderr, "bench-cuda: the backend refused %" G_GINT64_FORMAT " bytes\n", bytes);
		exit(EXIT_FAILURE);
	}
	*d2h = *h2d = 0;
	for (int r = 0; r < RUNS; r++) {
		double to_host = timed_move(state, thread, &handle, GS_TIER_GPU, GS_TIER_HOST, bytes);
		double to_gpu = timed_move(state, thread, &handle, GS_TIER_HOST, GS_TIER_GPU, bytes);

		*d2h = MAX(*d2h, to_host);
		*h2d = MAX(*h2d, to_gpu);
	}
	gs_backend_free(&gs_backend_cuda, state, thread, GS_TIER_GPU, handle);
	gs_backend_thread_end(&gs_backend_cuda, state, thread);
	gs_backend_close(&gs_backend_cuda, state);
}

/*
 * Best GB/s of what a move to the host does on the CPU besides the copy:
 * clearing @bytes of pinned host memory before it and checking them against
 * the buffer's pattern after it.
 */
static double
host_clear_and_check(gint64 bytes)
{
	gsize words = (gsize) bytes / 8;
	guint64 *host;
	double best = 0;

	check(cudaHostAlloc((void **) &host, (size_t) bytes, cudaHostAllocDefault), "pinning");
	for (int r = 0; r < RUNS; r++) {
		gint64 start = g_get_monotonic_time();
		double seconds;

		memset(host, 0, (size_t) bytes);
		seconds = seconds_since(start);
		gs_pattern_fill(host, words, 1); /* what the copy brings: not timed */
		start = g_get_monotonic_time();
		if (!gs_pattern_check(host, words, 1)) {
			fprintf(stderr, "bench-cuda: a pattern check failed\n");
			exit(EXIT_FAILURE);
		}
		seconds += seconds_since(start);
		best = MAX(best, (double) bytes / seconds / 1e9);
	}
	check(cudaFreeHost(host), "unpinning");
	return best;
}

/* Microseconds that launching kernel @which (0 busy, 1 fill, 2 check) and synchronising take. */
static double
launch_us(int which, unsigned long long *words, unsigned long long *counter, cudaStream_t stream)
{
	GsCudaUses uses = {.ptr = {words}, .words = {1024}, .n = 1};
	gint64 start = g_get_monotonic_time();

	switch (which) {
	case 0:
		check(gs_cuda_busy(0, uses, stream), "launching busy");
		break;
	case 1:
		check(gs_cuda_fill(words, 1024, 1, stream), "launching fill");
		break;
	default:
		check(gs_cuda_check(words, 1024, 1, counter, stream), "launching check");
		break;
	}
	check(cudaStreamSynchronize(stream), "synchronising");
	return seconds_since(start) * 1e6;
}

static void
first_launches(void)
{
	static const char *const names[] = {"busy", "fill", "check"};
	unsigned long long *words, *counter;
	cudaStream_t stream;
	int driver = 0, runtime = 0;

	check(cudaDriverGetVersion(&driver), "reading the driver's version");
	check(cudaRuntimeGetVersion(&runtime), "reading the runtime's version");
	printf("driver CUDA %d.%d, runtime %d.%d\n", driver / 1000, driver % 1000 / 10,
	       runtime / 1000, runtime % 1000 / 10);
	check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a stream");
	check(cudaMalloc((void **) &words, 1024 * 8), "allocating");
	check(cudaMalloc((void **) &counter, 8), "allocating");
	printf("kernel   first launch (us)   second (us)\n");
	for (int k = 0; k < 3; k++) {
		double first = launch_us(k, words, counter, stream);

		printf("%-6s   %17.1f   %11.1f\n", names[k], first,
		       launch_us(k, words, counter, stream));
	}
	check(cudaFree(words), "freeing");
	check(cudaFree(counter), "freeing");
	check(cudaStreamDestroy(stream), "destroying the stream");
}

int
main(void)
{
	static const gint64 pair_sizes[] = {4096, MIB}, copy_sizes[] = {MIB, 16 * MIB, 256 * MIB};
	struct cudaDeviceProp prop;
	g_autoptr(GError) error = NULL;
	int count;

	if (!gs_cuda_device_count(&count, &error)) {
		printf("bench-cuda: nothing measured: %s\n", error->message);
		return EXIT_SUCCESS;
	}
	check(cudaGetDeviceProperties(&prop, 0), "reading the device");
	printf("gpusim %s CUDA benchmark on %s\n", gs_version(), prop.name);
	first_launches();
	printf("allocate+free pair   raw (ns)   backend (ns)   backend - raw (ns)\n");
	for (guint i = 0; i < G_N_ELEMENTS(pair_sizes); i++) {
		double raw = raw_pairs(pair_sizes[i]), backend = backend_pairs(pair_sizes[i]);

		printf("%9" G_GINT64_FORMAT " B       %10.0f     %10.0f         %10.0f\n",
		       pair_sizes[i], raw, backend, backend - raw);
	}
	printf("copy        raw d2h   move to host   its CPU clear+check   raw h2d   move to GPU"
	       "   (GB/s, best of %d)\n",
	       RUNS);
	for (guint i = 0; i < G_N_ELEMENTS(copy_sizes); i++) {
		double raw_d2h, raw_h2d, move_d2h, move_h2d;

		raw_copies(copy_sizes[i], &raw_d2h, &raw_h2d);
		backend_moves(copy_sizes[i], &move_d2h, &move_h2d);
		printf("%4" G_GINT64_FORMAT " MiB   %8.2f   %12.2f   %19.2f   %7.2f   %11.2f\n",
		       copy_sizes[i] / MIB, raw_d2h, move_d2h, host_clear_and_check(copy_sizes[i]),
		       raw_h2d, move_h2d);
	}
	return EXIT_SUCCESS;
}
