/*
 * gpusim: `gpusim calibrate --backend=cuda`: measures GPU 0 and a disk.
 *
 * Allocation and free latency: the median of many stream-ordered 1 MiB
 * allocations (and frees) from a pool made as the backend makes its own (it
 * keeps what it reserved, so that a free is no trip to the driver), warmed
 * first. An allocation is timed until its stream has reached it, as the
 * backend waits for it before another stream may use the buffer; a free is
 * the call alone, as the backend makes it. The capacity written is what the
 * RAPIDS Accelerator's pool would take of the free memory with its defaults
 * (spark.rapids.memory.gpu.allocFraction 1.0 of the free memory less
 * spark.rapids.memory.gpu.reserve, 640 MiB, left for kernels and the
 * driver), not all of it. Bandwidth: a
 * 256 MiB pinned buffer copied host to device and back, best of five (the
 * first copy pays for mappings). Disk: the same bytes written to a file in a
 * private directory and synced, then read back after the page cache was told
 * to drop them. The scenario format has one bandwidth per link, so the slower
 * direction is written and both are given in comments.
 */
#include "config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <glib/gstdio.h>

#include "backend.h"
#include "cuda/cuda.h"
#include "pattern.h"
#include "run/samples.h"

#define ALLOC_SAMPLES 501
#define RESERVE ((gsize) 640 << 20) /* spark.rapids.memory.gpu.reserve's default */
#define COPY_BYTES ((gsize) 256 << 20)
#define COPY_ROUNDS 5

static gboolean
check(cudaError_t err, const char *what, GError **error)
{
	if (err == cudaSuccess)
		return TRUE;
	g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED, "CUDA: %s: %s", what,
		    cudaGetErrorString(err));
	return FALSE;
}

/* A pool on GPU 0 as the backend makes one: it keeps what it reserved. */
static gboolean
backend_pool(cudaMemPool_t *pool, GError **error)
{
	struct cudaMemPoolProps props = {0};
	guint64 threshold = G_MAXUINT64;

	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	return check(cudaMemPoolCreate(pool, &props), "creating a pool", error) &&
	       check(cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &threshold),
		     "keeping the pool's memory", error);
}

/* One 1 MiB allocation and its free: seconds until the stream reached it, and of the free call. */
static gboolean
alloc_sample(cudaMemPool_t pool, cudaStream_t stream, double *alloc_s, double *free_s,
	     GError **error)
{
	void *p;
	gint64 t0 = g_get_monotonic_time(), t1, t2;

	if (!check(cudaMallocFromPoolAsync(&p, 1 << 20, pool, stream), "allocating", error) ||
	    !check(cudaStreamSynchronize(stream), "allocating", error))
		return FALSE;
	t1 = g_get_monotonic_time();
	if (!check(cudaFreeAsync(p, stream), "freeing", error))
		return FALSE;
	t2 = g_get_monotonic_time();
	*alloc_s = (double) (t1 - t0) / 1e6;
	*free_s = (double) (t2 - t1) / 1e6;
	return check(cudaStreamSynchronize(stream), "freeing", error);
}

/* Median seconds of an allocation from a warm pool, and of its free. */
static gboolean
alloc_latency(cudaStream_t stream, double *alloc_s, double *free_s, GError **error)
{
	double a[ALLOC_SAMPLES], f[ALLOC_SAMPLES], ignored;
	cudaMemPool_t pool = NULL;
	gboolean ok = backend_pool(&pool, error) && alloc_sample(pool, stream, &ignored, &ignored, error);

	for (int i = 0; ok && i < ALLOC_SAMPLES; i++)
		ok = alloc_sample(pool, stream, &a[i], &f[i], error);
	if (pool != NULL)
		cudaMemPoolDestroy(pool);
	if (!ok)
		return FALSE;
	*alloc_s = gs_samples_median(a, ALLOC_SAMPLES);
	*free_s = gs_samples_median(f, ALLOC_SAMPLES);
	return TRUE;
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

static gboolean
disk_rates(const char *disk_path, const void *data, gsize n, double *write_bps, double *read_bps,
	   GError **error)
{
	g_autofree char *dir = gs_private_dir_new(disk_path, error);
	g_autofree char *path = NULL;
	void *back;
	gint64 t0;
	int fd;
	gboolean ok;

	if (dir == NULL)
		return FALSE;
	path = g_build_filename(dir, "calibrate", NULL);
	t0 = g_get_monotonic_time();
	ok = gs_file_write_all(path, data, n, error);
	if (ok && (fd = g_open(path, O_RDONLY, 0)) >= 0) {
		fsync(fd);
		*write_bps = (double) n / ((double) (g_get_monotonic_time() - t0 + 1) / 1e6);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* the read must reach the disk */
		close(fd);
	}
	back = g_malloc(n);
	t0 = g_get_monotonic_time();
	ok = ok && gs_file_read_all(path, back, n, error);
	*read_bps = (double) n / ((double) (g_get_monotonic_time() - t0 + 1) / 1e6);
	g_free(back);
	gs_private_dir_remove(dir);
	return ok;
}

static void
append_yaml(GString *yaml, const char *device, size_t free_bytes, double alloc_s, double free_s,
	    double h2d, double d2h, double disk_w, double disk_r)
{
	g_string_append_printf(yaml,
		"# gpusim calibrate --backend=cuda on %s\n"
		"# %" G_GSIZE_FORMAT " MiB free; the capacity leaves %" G_GSIZE_FORMAT " MiB of it to"
		" kernels and the driver, as the RAPIDS Accelerator's pool does\n"
		"# allocation %.1f us until usable, free %.1f us (median of %d stream-ordered 1 MiB,"
		" from a warm pool)\n"
		"# pinned host->device %.2f GB/s, device->host %.2f GB/s (best of %d, 256 MiB)\n"
		"# disk write %.2f GB/s (synced), read %.2f GB/s (page cache dropped)\n"
		"memory:\n"
		"  gpu: {capacity: %" G_GSIZE_FORMAT "MiB}\n"
		"links:\n"
		"  gpu_host: {bandwidth: %.2fGB/s, latency: %.0fus}\n"
		"  host_disk: {bandwidth: %.3fGB/s, latency: 100us}\n"
		"  alloc_latency: %.0fus\n",
		device, free_bytes >> 20, RESERVE >> 20, alloc_s * 1e6, free_s * 1e6, ALLOC_SAMPLES,
		h2d / 1e9, d2h / 1e9, COPY_ROUNDS, disk_w / 1e9, disk_r / 1e9,
		(free_bytes > RESERVE ? free_bytes - RESERVE : free_bytes) >> 20, MIN(h2d, d2h) / 1e9, 10.0,
		MIN(disk_w, disk_r) / 1e9, MAX(alloc_s * 1e6, 1.0));
}

gboolean
gs_cuda_calibrate(const char *disk_path, GString *yaml, GError **error)
{
	struct cudaDeviceProp prop;
	cudaStream_t stream = NULL;
	size_t free_bytes = 0, total = 0;
	double alloc_s, free_s, h2d, d2h, disk_w = 0, disk_r = 0;
	void *host = NULL, *dev = NULL;
	int count;
	gboolean ok;

	if (!gs_cuda_device_count(&count, error))
		return FALSE;
	ok = check(cudaSetDevice(0), "selecting GPU 0", error) &&
	     check(cudaGetDeviceProperties(&prop, 0), "reading the device", error) &&
	     check(cudaMemGetInfo(&free_bytes, &total), "reading free memory", error) &&
	     check(cudaStreamCreate(&stream), "creating a stream", error) &&
	     alloc_latency(stream, &alloc_s, &free_s, error) &&
	     check(cudaHostAlloc(&host, COPY_BYTES, cudaHostAllocDefault), "pinning", error) &&
	     check(cudaMalloc(&dev, COPY_BYTES), "allocating", error);
	if (ok) {
		gs_pattern_fill(host, COPY_BYTES / 8, 1);
		ok = copy_rate(dev, host, COPY_BYTES, cudaMemcpyHostToDevice, stream, &h2d, error) &&
		     copy_rate(host, dev, COPY_BYTES, cudaMemcpyDeviceToHost, stream, &d2h, error) &&
		     disk_rates(disk_path, host, COPY_BYTES, &disk_w, &disk_r, error);
	}
	if (ok)
		append_yaml(yaml, prop.name, free_bytes, alloc_s, free_s, h2d, d2h, disk_w, disk_r);
	if (dev != NULL)
		cudaFree(dev);
	if (host != NULL)
		cudaFreeHost(host);
	if (stream != NULL)
		cudaStreamDestroy(stream);
	return ok;
}
