/*
 * gpusim: `gpusim calibrate --backend=cuda`: measures GPU 0 and a disk.
 *
 * The links, the allocation latency and the lanes are measured through the
 * backend's own operations (measure.h), as a run pays for them: an
 * allocation from the backend's pool until its stream has reached it, a
 * spill with its pinned blocks cleared, its copy and the check of every word
 * that lands (on the CPU in host memory, by a kernel on the GPU), a file
 * write and read. Raw pinned copies of 256 MiB (best of five; the first pays
 * for mappings) are in comments beside them: the gap is what the checks
 * cost. A host pool of the default size is pinned as the backend pins one
 * when its host tier grows (cudaHostAlloc; links.host_pools: the median of
 * five). The capacity written is what the RAPIDS Accelerator's pool would
 * take of the free memory with its defaults
 * (spark.rapids.memory.gpu.allocFraction 1.0 of the free memory less
 * spark.rapids.memory.gpu.reserve, 640 MiB, left for kernels and the
 * driver), not all of it.
 */
#include "config.h"

#include <cuda_runtime_api.h>

#include "backend.h"
#include "cuda/cuda.h"
#include "measure.h"
#include "pattern.h"
#include "run/samples.h"

#define RESERVE ((gsize) 640 << 20) /* spark.rapids.memory.gpu.reserve's default */
#define COPY_BYTES ((gsize) 256 << 20)
#define COPY_ROUNDS 5
#define PIN_SAMPLES 5

/* What calibrate measures: the device, raw copies, and what the backend pays. */
typedef struct {
	const char *device;
	size_t free_bytes;
	double h2d, d2h; /* raw pinned copies, bytes per second */
	gint64 pool_bytes;
	double pin_bandwidth; /* a host pool pinned, as the backend pins one */
	double alloc_s, free_s;
	GsLinkFit gpu_host, host_disk;
	double lane_ratio; /* before it is made at least 1 */
	guint lane_threads;
} Fit;

static gboolean
check(cudaError_t err, const char *what, GError **error)
{
	if (err == cudaSuccess)
		return TRUE;
	g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED, "CUDA: %s: %s", what,
		    cudaGetErrorString(err));
	return FALSE;
}

/* Best bytes per second of COPY_ROUNDS copies of @n bytes. */
static gboolean
copy_rate(void *dst, const void *src, gsize n, enum cudaMemcpyKind kind, cudaStream_t stream,
	  double *rate, GError **error)
{
	*rate = 0;
	for (int i = 0; i < COPY_ROUNDS; i++) {
		gint64 t0 = g_get_monotonic_time();

		if (!check(cudaMemcpyAsync(dst, src, n, kind, stream), "copying", error) ||
		    !check(cudaStreamSynchronize(stream), "copying", error))
			return FALSE;
		*rate = MAX(*rate, (double) n / ((double) (g_get_monotonic_time() - t0 + 1) / 1e6));
	}
	return TRUE;
}

/* Raw pinned copies of COPY_BYTES, best of COPY_ROUNDS each way. */
static gboolean
raw_copies(Fit *f, GError **error)
{
	cudaStream_t stream = NULL;
	void *host = NULL, *dev = NULL;
	gboolean ok = check(cudaSetDevice(0), "selecting GPU 0", error) &&
		      check(cudaStreamCreate(&stream), "creating a stream", error) &&
		      check(cudaHostAlloc(&host, COPY_BYTES, cudaHostAllocDefault), "pinning", error) &&
		      check(cudaMalloc(&dev, COPY_BYTES), "allocating", error);

	if (ok) {
		gs_pattern_fill(host, COPY_BYTES / 8, 1);
		ok = copy_rate(dev, host, COPY_BYTES, cudaMemcpyHostToDevice, stream, &f->h2d,
			       error) &&
		     copy_rate(host, dev, COPY_BYTES, cudaMemcpyDeviceToHost, stream, &f->d2h, error);
	}
	if (dev != NULL)
		cudaFree(dev);
	if (host != NULL)
		cudaFreeHost(host);
	if (stream != NULL)
		cudaStreamDestroy(stream);
	return ok;
}

/* The rate at which a pool of @bytes is pinned (cudaHostAlloc, as the backend grows its host tier). */
static gboolean
pin_rate(gint64 bytes, double *rate, GError **error)
{
	double s[PIN_SAMPLES];

	for (guint i = 0; i < PIN_SAMPLES; i++) {
		void *pool = NULL;
		gint64 t0 = gs_measure_now_ns();

		if (!check(cudaHostAlloc(&pool, (size_t) bytes, cudaHostAllocDefault), "pinning",
			   error))
			return FALSE;
		s[i] = gs_measure_seconds_since(t0);
		cudaFreeHost(pool);
	}
	*rate = (double) bytes / MAX(gs_samples_median(s, PIN_SAMPLES), 1e-9);
	return TRUE;
}

/* The backend's allocations, links and lanes, through its operations (measure.h). */
static gboolean
as_a_run_pays(const char *disk_path, Fit *f, GError **error)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	GsMeasured d = {&gs_backend_cuda, NULL};
	gboolean ok;

	g_free(w->disk.path);
	w->disk.path = g_strdup(disk_path);
	w->policy.spill.enabled = TRUE;
	f->pool_bytes = w->host.block_size * w->host.pool_blocks;
	if (!pin_rate(f->pool_bytes, &f->pin_bandwidth, error))
		return FALSE;
	d.state = gs_backend_open(d.ops, w, error);
	if (d.state == NULL)
		return FALSE;
	ok = gs_measure_alloc_latency(&d, &f->alloc_s, &f->free_s, error) &&
	     gs_measure_link(&d, GS_TIER_GPU, GS_TIER_HOST, 0, 0, &f->gpu_host, error) &&
	     gs_measure_link(&d, GS_TIER_HOST, GS_TIER_DISK, 0, 0, &f->host_disk, error) &&
	     gs_measure_lanes(&d, &f->lane_threads, &f->lane_ratio, error);
	gs_backend_close(d.ops, d.state);
	return ok;
}

static void
append_yaml(GString *yaml, const char *disk_path, const Fit *f)
{
	gsize capacity = f->free_bytes > RESERVE ? f->free_bytes - RESERVE : f->free_bytes;

	g_string_append_printf(yaml,
		"# gpusim calibrate --backend=cuda on %s, %u processors\n"
		"# %" G_GSIZE_FORMAT " MiB free; the capacity leaves %" G_GSIZE_FORMAT " MiB of it to"
		" kernels and the driver, as the RAPIDS Accelerator's pool does\n"
		"# allocation %.1f us until its stream reached it, free %.1f us (median of %d of %"
		G_GINT64_FORMAT " bytes from the backend's pool)\n"
		"# gpu->host %.2f GB/s, host->gpu %.2f GB/s (the backend's moves: blocks cleared,"
		" copy, every word checked; median of %d of %" G_GINT64_FORMAT " MiB), latency"
		" %.1f us (median of %d of %" G_GINT64_FORMAT " bytes)\n"
		"# raw pinned copies: host->device %.2f GB/s, device->host %.2f GB/s (best of %d,"
		" %" G_GSIZE_FORMAT " MiB)\n"
		"# host->disk %.2f GB/s (written into %s), disk->host %.2f GB/s (read back and"
		" checked), latency %.1f us\n"
		"# host pools pinned at %.2f GB/s (cudaHostAlloc of %" G_GINT64_FORMAT " MiB, the"
		" default pool; median of %d)\n"
		"# lanes %.2f: %u threads allocating and spilling %" G_GINT64_FORMAT
		" MiB at once against one alone doing as many (median of %d), at least 1\n"
		"# each link's bandwidth is the two directions' mean\n"
		"memory:\n"
		"  gpu: {capacity: %" G_GSIZE_FORMAT "MiB}\n"
		"links:\n"
		"  gpu_host: {bandwidth: %.3fGB/s, latency: %.0fns}\n"
		"  host_disk: {bandwidth: %.3fGB/s, latency: %.0fns}\n"
		"  alloc_latency: %.0fns\n"
		"  host_pools: {bandwidth: %.3fGB/s}\n"
		"  lanes: %.2f\n",
		f->device, g_get_num_processors(), f->free_bytes >> 20, RESERVE >> 20,
		f->alloc_s * 1e6, f->free_s * 1e6, GS_MEASURE_SMALL_SAMPLES, GS_MEASURE_SMALL_BYTES,
		f->gpu_host.out_bandwidth / 1e9, f->gpu_host.back_bandwidth / 1e9,
		GS_MEASURE_LARGE_SAMPLES, GS_MEASURE_LINK_BYTES >> 20, f->gpu_host.latency_s * 1e6,
		GS_MEASURE_SMALL_SAMPLES, GS_MEASURE_SMALL_BYTES, f->h2d / 1e9, f->d2h / 1e9,
		COPY_ROUNDS, COPY_BYTES >> 20, f->host_disk.out_bandwidth / 1e9, disk_path,
		f->host_disk.back_bandwidth / 1e9, f->host_disk.latency_s * 1e6,
		f->pin_bandwidth / 1e9, f->pool_bytes >> 20, PIN_SAMPLES, f->lane_ratio,
		f->lane_threads, GS_MEASURE_LANE_BYTES >> 20, GS_MEASURE_LANE_SAMPLES,
		capacity >> 20, f->gpu_host.bandwidth / 1e9, MAX(f->gpu_host.latency_s * 1e9, 1.0),
		f->host_disk.bandwidth / 1e9, MAX(f->host_disk.latency_s * 1e9, 1.0),
		MAX(f->alloc_s * 1e9, 1.0), f->pin_bandwidth / 1e9, MAX(f->lane_ratio, 1.0));
}

gboolean
gs_cuda_calibrate(const char *disk_path, GString *yaml, GError **error)
{
	struct cudaDeviceProp prop;
	size_t total = 0;
	Fit f = {.device = prop.name};
	int count;

	if (!gs_cuda_device_count(&count, error) ||
	    !check(cudaSetDevice(0), "selecting GPU 0", error) ||
	    !check(cudaGetDeviceProperties(&prop, 0), "reading the device", error) ||
	    !check(cudaMemGetInfo(&f.free_bytes, &total), "reading free memory", error) ||
	    !raw_copies(&f, error) || !as_a_run_pays(disk_path, &f, error))
		return FALSE;
	append_yaml(yaml, disk_path, &f);
	return TRUE;
}
