/*
 * gpusim: the CUDA backend: real device memory, real copies, real files.
 *
 * GPU memory comes from one CUDA memory pool per device (a capacity above
 * what the device has free is refused at open), allocated and freed
 * stream-ordered on the calling thread's own stream. The pool is not capped
 * at memory.gpu.capacity: the driver's counters already hold the scenario to
 * it, and a pool reserves in chunks of 2 MiB or more, so a cap at the
 * capacity would refuse buffers the count admits. Sizes are rounded up to
 * memory.gpu.alignment and to the kernels' 8-byte words; a placement the
 * pool's own 256-byte alignment does not give (a larger alignment, or one
 * such as 12 that does not divide 256, made a multiple of 8) is met by
 * over-allocating and offsetting. A
 * compute launches a kernel that spins for the time on the device's global
 * timer while reading the buffers it uses, and the thread synchronises its
 * stream at the end. The host tier is a pool of pinned blocks (block_size,
 * pool_blocks per pool, initial_pools at open, one more pool at a time up to
 * the host capacity); the disk tier is files in a private directory (0700)
 * inside memory.disk.path, removed at close, on error too.
 *
 * A round trip (a spill and its unspill) copies a GPU buffer into pinned host
 * blocks with cudaMemcpyAsync, optionally on to a file and back, clears the
 * device copy, copies it back and checks every word against the buffer's
 * pattern on the device, which fill wrote before the first copy. Mismatches
 * are counted, never repaired.
 *
 * Without a device (or a driver), open fails with
 * GS_BACKEND_ERROR_UNAVAILABLE and one sentence saying why; nothing here
 * needs a GPU to compile or link.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <glib/gstdio.h>

#include "backend.h"
#include "cuda/cuda.h"
#include "cuda/kernel.h"
#include "pattern.h"

#define POOL_ALIGNMENT 256

typedef struct {
	cudaMemPool_t pool;
} Device;

/*
 * Pinned host blocks: a free list over pools allocated whole. The host tier's
 * buffers take blocks up to the host capacity and the pinned pool's size
 * (memory.host.pinned: both are pinned memory here); staging a copy may pin more,
 * since a GPU buffer spilled to disk when the host tier is full still passes
 * through pinned memory.
 */
typedef struct {
	pthread_mutex_t lock;
	GPtrArray *pools;   /* pinned allocations, freed at close */
	GPtrArray *free;    /* free blocks */
	gint64 block_size;
	guint pool_blocks;
	gint64 capacity;
	gint64 pinned;      /* bytes pinned so far */
} Pinned;

typedef struct {
	int n_devices;
	Device *devices;
	gint64 placement; /* a buffer's start: a multiple of the alignment and of 8 */
	Pinned host;
	char *disk_dir;
	gint64 alignment;
	atomic_uint_fast64_t serial;
	atomic_uint_fast64_t files; /* disk copies made, for unique file names */
	atomic_uint_fast64_t round_trips, moves, bytes_checked, corrupt, refusals;
	pthread_mutex_t fault_lock;
	GError *fault; /* under fault_lock: the first error that was no refusal; NULL while healthy */
} Cuda;

/* A buffer on the GPU, in pinned host blocks (host tier), or in files (disk tier). */
typedef struct {
	GsTier tier;
	int device;
	void *base;            /* what the pool returned (GPU) */
	unsigned long long *words;
	gint64 bytes;
	guint64 seed;
	gboolean filled;       /* holds its pattern */
	GPtrArray *blocks;     /* host tier: pinned blocks */
	char *path;            /* disk tier: block i is in "path.i" */
	guint n_files;
} Buf;

/*
 * A thread's own streams and check counters, per device: checks on
 * different threads never wait for one another.
 */
typedef struct {
	cudaStream_t *streams;           /* made on first use */
	unsigned long long **mismatches; /* device counters for checks, made on first use */
	int n;
} Thread;

static gint64
round_up(gint64 n, gint64 to)
{
	return (n + to - 1) / to * to;
}

static gint64
gcd(gint64 a, gint64 b)
{
	while (b != 0) {
		gint64 r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/*
 * TRUE, with @error set, if @err is an error. The thread's last error is
 * cleared, so that no later launch is blamed for it (an error that sticks to
 * the context stays all the same).
 */
static gboolean
failed(cudaError_t err, const char *what, GError **error)
{
	if (err == cudaSuccess)
		return FALSE;
	cudaGetLastError();
	g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED, "CUDA: %s: %s", what,
		    cudaGetErrorString(err));
	return TRUE;
}

/*
 * Notes @err, made while running, if it is a device fault: anything but
 * success and out-of-memory, which is a refusal. The first one is kept;
 * cuda_healthy() reports it and the run ends with it.
 */
static void
note_fault(Cuda *c, cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return;
	cudaGetLastError(); /* no later launch is to be blamed for it */
	if (err == cudaErrorMemoryAllocation)
		return;
	pthread_mutex_lock(&c->fault_lock);
	if (c->fault == NULL)
		c->fault = g_error_new(GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED, "CUDA: %s: %s", what,
				       cudaGetErrorString(err));
	pthread_mutex_unlock(&c->fault_lock);
}

/* failed(), for what runs once the device is open: a fault is noted too. */
static gboolean
faulted(Cuda *c, cudaError_t err, const char *what, GError **error)
{
	note_fault(c, err, what);
	return failed(err, what, error);
}

gboolean
gs_cuda_device_count(int *count, GError **error)
{
	cudaError_t err = cudaGetDeviceCount(count);

	if (err != cudaSuccess || *count == 0) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE,
			    "the cuda backend needs a GPU, and none is available here (%s)",
			    err != cudaSuccess ? cudaGetErrorString(err) : "no CUDA device");
		cudaGetLastError();
		return FALSE;
	}
	return TRUE;
}

/* ---- pinned host blocks ---- */

/*
 * Adds a pool to @p, whose lock the caller holds: it is let go while the
 * pool is pinned, which takes tens of milliseconds (65 ms for 128 MiB on
 * an H100's host), since a thread landing a copy gives blocks back under
 * the engine's lock and every thread would wait behind it. The bytes are
 * counted first, so that threads growing the pool at once stay within the
 * capacity.
 */
static gboolean
pinned_grow(Pinned *p, gboolean staging, GError **error)
{
	gint64 bytes = p->block_size * p->pool_blocks;
	char *pool = NULL;
	gboolean ok;

	if (!staging && p->pinned + bytes > MAX(p->capacity, bytes))
		return FALSE;
	p->pinned += bytes;
	pthread_mutex_unlock(&p->lock);
	ok = !failed(cudaHostAlloc((void **) &pool, (size_t) bytes, cudaHostAllocDefault),
		     "pinning host memory", error);
	pthread_mutex_lock(&p->lock);
	if (!ok) {
		p->pinned -= bytes;
		return FALSE;
	}
	g_ptr_array_add(p->pools, pool);
	for (guint i = 0; i < p->pool_blocks; i++)
		g_ptr_array_add(p->free, pool + (gint64) i * p->block_size);
	return TRUE;
}

/* Takes ceil(bytes / block) blocks, growing one pool at a time; NULL if none left. */
static GPtrArray *
pinned_take(Pinned *p, gint64 bytes, gboolean staging)
{
	guint need = (guint) ((bytes + p->block_size - 1) / p->block_size);
	GPtrArray *blocks = NULL;

	pthread_mutex_lock(&p->lock);
	while (p->free->len < need && pinned_grow(p, staging, NULL))
		;
	if (p->free->len >= need) {
		blocks = g_ptr_array_new();
		for (guint i = 0; i < need; i++)
			g_ptr_array_add(blocks, g_ptr_array_steal_index_fast(p->free, p->free->len - 1));
	}
	pthread_mutex_unlock(&p->lock);
	return blocks;
}

static void
pinned_give(Pinned *p, GPtrArray *blocks)
{
	pthread_mutex_lock(&p->lock);
	for (guint i = 0; i < blocks->len; i++)
		g_ptr_array_add(p->free, blocks->pdata[i]);
	pthread_mutex_unlock(&p->lock);
	g_ptr_array_unref(blocks);
}

/* ---- open, close ---- */

/*
 * Reserves @capacity in the pool before the run, as RMM's async memory
 * resource does with an initial pool size (allocated and freed at once): the
 * driver maps the memory here, not at the run's first allocations, which on
 * an H100 waited about 10 ms for it.
 */
static gboolean
pool_prime(Device *d, gint64 capacity, GError **error)
{
	cudaStream_t stream;
	void *bytes = NULL;
	gboolean ok;

	if (failed(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
		   "creating a stream to prime the pool", error))
		return FALSE;
	ok = !failed(cudaMallocFromPoolAsync(&bytes, (size_t) capacity, d->pool, stream),
		     "priming the memory pool", error) &&
	     !failed(cudaFreeAsync(bytes, stream), "priming the memory pool", error);
	if (failed(cudaStreamSynchronize(stream), "priming the memory pool", ok ? error : NULL))
		ok = FALSE;
	cudaStreamDestroy(stream);
	return ok;
}

static gboolean
device_open(Device *d, int index, gint64 capacity, GError **error)
{
	struct cudaMemPoolProps props = {0};
	size_t free_bytes = 0, total = 0;
	guint64 threshold = G_MAXUINT64;

	if (failed(cudaSetDevice(index), "selecting the device", error) ||
	    failed(cudaMemGetInfo(&free_bytes, &total), "reading free memory", error))
		return FALSE;
	if ((guint64) capacity > free_bytes) {
		/* The scenario is valid; this machine cannot run it (exit status 3). */
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE,
			    "memory.gpu.capacity is %" G_GINT64_FORMAT " bytes, but GPU %d has only %"
			    G_GSIZE_FORMAT " bytes free", capacity, index, free_bytes);
		return FALSE;
	}
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = index;
	if (failed(cudaMemPoolCreate(&d->pool, &props), "creating the memory pool", error))
		return FALSE;
	/* Keep what the pool has reserved: a free is not a trip to the driver. */
	return !failed(cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &threshold),
		       "keeping the pool's memory", error) &&
	       pool_prime(d, capacity, error);
}

static void cuda_close(gpointer state);

static gpointer
cuda_open(const GsWorkload *w, GError **error)
{
	Cuda *c = g_new0(Cuda, 1);
	int count;

	pthread_mutex_init(&c->host.lock, NULL);
	pthread_mutex_init(&c->fault_lock, NULL);
	c->host.pools = g_ptr_array_new();
	c->host.free = g_ptr_array_new();
	/* Whole 8-byte words per block, as the pattern and the copies count them. */
	c->host.block_size = round_up(MAX(w->host.block_size, 4096), 8);
	c->host.pool_blocks = MAX(w->host.pool_blocks, 1);
	/* The pinned pool is pinned blocks here too. */
	c->host.capacity = w->host.capacity + w->host.pinned;
	c->alignment = MAX(w->gpu.alignment, 1);
	c->placement = c->alignment / gcd(c->alignment, 8) * 8;
	if (!gs_cuda_device_count(&count, error)) {
		cuda_close(c);
		return NULL;
	}
	if ((int) MAX(w->gpu.devices, 1) > count) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE,
			    "memory.gpu.devices is %u, but this machine has %d GPU(s)",
			    MAX(w->gpu.devices, 1), count);
		cuda_close(c);
		return NULL;
	}
	c->n_devices = (int) MAX(w->gpu.devices, 1);
	c->devices = g_new0(Device, c->n_devices);
	for (int i = 0; i < c->n_devices; i++) {
		if (!device_open(&c->devices[i], i, w->gpu.capacity, error)) {
			cuda_close(c);
			return NULL;
		}
	}
	/* Fewer pools without an error: the host capacity is smaller than the initial pools. */
	pthread_mutex_lock(&c->host.lock);
	for (guint i = 0; i < w->host.initial_pools && pinned_grow(&c->host, FALSE, error); i++)
		;
	pthread_mutex_unlock(&c->host.lock);
	if (error != NULL && *error != NULL) {
		cuda_close(c);
		return NULL;
	}
	c->disk_dir = gs_private_dir_new(w->disk.path, error);
	if (c->disk_dir == NULL) {
		cuda_close(c);
		return NULL;
	}
	return c;
}

static void
cuda_close(gpointer state)
{
	Cuda *c = state;

	for (int i = 0; c->devices != NULL && i < c->n_devices; i++) {
		cudaSetDevice(i);
		cudaDeviceSynchronize();
		if (c->devices[i].pool != NULL)
			cudaMemPoolDestroy(c->devices[i].pool);
	}
	for (guint i = 0; i < c->host.pools->len; i++)
		cudaFreeHost(c->host.pools->pdata[i]);
	g_ptr_array_unref(c->host.pools);
	g_ptr_array_unref(c->host.free);
	pthread_mutex_destroy(&c->host.lock);
	pthread_mutex_destroy(&c->fault_lock);
	g_clear_error(&c->fault);
	gs_private_dir_remove(c->disk_dir);
	g_free(c->disk_dir);
	g_free(c->devices);
	g_free(c);
}

/* ---- per-thread streams ---- */

static gpointer
cuda_thread_begin(gpointer state)
{
	Cuda *c = state;
	Thread *t = g_new0(Thread, 1);

	t->n = c->n_devices;
	t->streams = g_new0(cudaStream_t, t->n);
	t->mismatches = g_new0(unsigned long long *, t->n);
	return t;
}

static void
cuda_thread_end(gpointer state, gpointer thread)
{
	Thread *t = thread;

	for (int i = 0; i < t->n; i++) {
		if (t->streams[i] != NULL) {
			cudaSetDevice(i);
			cudaStreamSynchronize(t->streams[i]);
			cudaStreamDestroy(t->streams[i]);
		}
		if (t->mismatches[i] != NULL)
			cudaFree(t->mismatches[i]);
	}
	g_free(t->streams);
	g_free(t->mismatches);
	g_free(t);
}

/* The thread's stream on @device (made current); NULL if none can be made (a fault). */
static cudaStream_t
stream_of(Cuda *c, Thread *t, int device)
{
	cudaError_t err = cudaSetDevice(device);

	if (err == cudaSuccess && t->streams[device] == NULL)
		err = cudaStreamCreateWithFlags(&t->streams[device], cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		note_fault(c, err, "making a stream");
		return NULL;
	}
	return t->streams[device];
}

/* ---- memory ---- */

static gsize
words_of(gint64 bytes)
{
	return ((gsize) bytes + 7) / 8;
}

/*
 * Device memory for @b from its device's pool, on the thread's stream;
 * unfilled. The thread waits for its stream to reach the allocation: another
 * thread may copy the buffer on its own stream (a spill), which nothing else
 * would order after it. So the time an allocation takes is the time until it
 * can be used, as calibrate measures it.
 */
static gboolean
gpu_take(Cuda *c, Thread *t, Buf *b)
{
	cudaStream_t stream = stream_of(c, t, b->device);
	/* The kernels touch whole words: a 5-byte buffer is read and written as 8. */
	gint64 size = round_up(round_up(b->bytes, c->alignment), 8);
	gint64 extra = POOL_ALIGNMENT % c->placement == 0 ? 0 : c->placement;
	cudaError_t err;

	if (stream == NULL)
		return FALSE;
	err = cudaMallocFromPoolAsync(&b->base, (size_t) (size + extra), c->devices[b->device].pool,
				      stream);
	if (err != cudaSuccess) {
		note_fault(c, err, "allocating");
		return FALSE;
	}
	err = cudaStreamSynchronize(stream);
	if (err != cudaSuccess) {
		note_fault(c, err, "allocating");
		cudaFree(b->base);
		return FALSE;
	}
	b->words = (unsigned long long *) (guintptr) round_up((gint64) (guintptr) b->base,
							       c->placement);
	return TRUE;
}

/*
 * A GPU buffer gets its pattern just before its bytes are first copied, on
 * the copying thread's stream, so that the fill is ordered before the copy
 * whichever thread makes it. Written at allocation on the owner's stream, it
 * would race a copier's stream that nothing orders after the owner's; and an
 * allocation stays one stream-ordered call. Nothing else writes a buffer on
 * the owner's stream without synchronising it, so another stream may copy it.
 */
static cudaError_t
fill_before_copy(Buf *b, cudaStream_t stream)
{
	if (b->filled)
		return cudaSuccess;
	b->filled = TRUE;
	return gs_cuda_fill(b->words, words_of(b->bytes), b->seed, stream);
}

/* The words of @b that pinned block @i holds: its index of the first, and how many. */
static gsize
block_words(const Cuda *c, const Buf *b, guint i, gsize *first)
{
	gsize per_block = (gsize) c->host.block_size / 8, words = words_of(b->bytes);

	*first = MIN((gsize) i * per_block, words);
	return MIN(per_block, words - *first);
}

/* Host blocks get the buffer's pattern on the CPU, as fill writes it on the device. */
static void
blocks_fill(const Cuda *c, const Buf *b, GPtrArray *blocks)
{
	for (guint i = 0; i < blocks->len; i++) {
		gsize first, n = block_words(c, b, i, &first);

		gs_pattern_fill_from(blocks->pdata[i], n, b->seed, first);
	}
}

/*
 * Clears the words of @b that @blocks will hold. Pinned blocks come back from
 * the free list last-in first-out, often holding these very bytes from an
 * earlier copy: a copy that never happened would leave them in place.
 */
static void
blocks_clear(const Cuda *c, const Buf *b, GPtrArray *blocks)
{
	for (guint i = 0; i < blocks->len; i++) {
		gsize first, n = block_words(c, b, i, &first);

		memset(blocks->pdata[i], 0, n * 8);
	}
}

static gboolean
blocks_intact(const Cuda *c, const Buf *b, GPtrArray *blocks)
{
	for (guint i = 0; i < blocks->len; i++) {
		gsize first, n = block_words(c, b, i, &first);

		if (!gs_pattern_check_from(blocks->pdata[i], n, b->seed, first))
			return FALSE;
	}
	return TRUE;
}

static gboolean
cuda_alloc(gpointer state, gpointer thread, GsTier tier, guint device, gint64 bytes,
	   guint64 *handle)
{
	Cuda *c = state;
	Buf *b = g_new0(Buf, 1);
	gboolean ok;

	b->tier = tier;
	b->device = (int) MIN(device, (guint) c->n_devices - 1);
	b->bytes = bytes;
	b->seed = atomic_fetch_add(&c->serial, 1) + 1;
	if (tier == GS_TIER_GPU) {
		ok = gpu_take(c, thread, b);
	} else {
		b->blocks = pinned_take(&c->host, bytes, FALSE); /* filled before its first copy */
		ok = b->blocks != NULL;
	}
	if (!ok) {
		atomic_fetch_add(&c->refusals, 1);
		g_free(b);
		return FALSE;
	}
	*handle = GPOINTER_TO_SIZE(b);
	return TRUE;
}

/* Writes the blocks holding @b's bytes to its files, "path.i" each. */
static gboolean
write_files(Cuda *c, Buf *b, GPtrArray *blocks, GError **error)
{
	for (guint i = 0; i < blocks->len; i++) {
		g_autofree char *path = g_strdup_printf("%s.%u", b->path, i);
		gsize first, n = block_words(c, b, i, &first);

		b->n_files = i + 1;
		if (!gs_file_write_all(path, blocks->pdata[i], n * 8, error))
			return FALSE;
	}
	return TRUE;
}

static gboolean
read_files(Cuda *c, const Buf *b, GPtrArray *blocks, GError **error)
{
	for (guint i = 0; i < blocks->len; i++) {
		g_autofree char *path = g_strdup_printf("%s.%u", b->path, i);
		gsize first, n = block_words(c, b, i, &first);

		if (!gs_file_read_all(path, blocks->pdata[i], n * 8, error))
			return FALSE;
	}
	return TRUE;
}

static void
files_unlink(const Buf *b)
{
	for (guint i = 0; i < b->n_files; i++) {
		g_autofree char *path = g_strdup_printf("%s.%u", b->path, i);

		g_unlink(path);
	}
}

static void
cuda_free(gpointer state, gpointer thread, GsTier tier, guint64 handle)
{
	Cuda *c = state;
	Buf *b = GSIZE_TO_POINTER(handle);

	if (b->tier == GS_TIER_GPU && thread == NULL) {
		/* The run is over: nothing can still be using it. */
		cudaSetDevice(b->device);
		cudaFree(b->base);
	} else if (b->tier == GS_TIER_GPU) {
		cudaStream_t stream = stream_of(c, thread, b->device);

		/* Without a stream (stream_of() noted the fault), or refused: free it at once. */
		if (stream == NULL || cudaFreeAsync(b->base, stream) != cudaSuccess) {
			note_fault(c, cudaGetLastError(), "freeing");
			cudaFree(b->base);
		}
	} else if (b->tier == GS_TIER_HOST) {
		pinned_give(&c->host, b->blocks);
	} else {
		files_unlink(b);
		g_free(b->path);
	}
	g_free(b);
}

/* ---- compute ---- */

static void
cuda_compute_begin(gpointer state, gpointer thread, GsTime ns, const guint64 *uses, guint n_uses)
{
	Cuda *c = state;
	GsCudaUses u = {0};
	int device = -1;
	cudaStream_t stream;

	/*
	 * It runs on the GPU of its first GPU buffer and reads the buffers
	 * there; another GPU's memory would need peer access, never granted.
	 */
	for (guint i = 0; i < n_uses && u.n < GS_CUDA_MAX_USES; i++) {
		const Buf *b = GSIZE_TO_POINTER(uses[i]);

		if (b->tier != GS_TIER_GPU || (device >= 0 && b->device != device))
			continue;
		device = b->device;
		u.ptr[u.n] = b->words;
		u.words[u.n++] = words_of(b->bytes);
	}
	device = MAX(device, 0);
	stream = stream_of(c, thread, device);
	/* A launch that fails is a fault; the driver still waits the time. */
	if (stream != NULL)
		note_fault(c, gs_cuda_busy(ns, u, stream), "launching a compute");
}

/* Waits for everything queued on the thread's streams; a fault found is noted. */
static void
settle(Cuda *c, Thread *t, const char *what)
{
	for (int i = 0; i < t->n; i++) {
		if (t->streams[i] != NULL) {
			note_fault(c, cudaSetDevice(i), what);
			note_fault(c, cudaStreamSynchronize(t->streams[i]), what);
		}
	}
}

/* What a kernel did wrong (an illegal address) surfaces here, at the synchronise. */
static void
cuda_compute_end(gpointer state, gpointer thread)
{
	settle(state, thread, "running a compute");
}

/* ---- round trips ---- */

/* Moves the buffer's bytes between the device and its pinned blocks. */
static cudaError_t
copy_blocks(Buf *b, GPtrArray *blocks, gint64 block_size, gboolean to_host, cudaStream_t stream)
{
	char *dev = (char *) b->words;
	gint64 left = (gint64) words_of(b->bytes) * 8;

	for (guint i = 0; i < blocks->len && left > 0; i++) {
		gint64 n = MIN(left, block_size);
		cudaError_t err = to_host ? cudaMemcpyAsync(blocks->pdata[i], dev, (size_t) n,
							    cudaMemcpyDeviceToHost, stream)
					  : cudaMemcpyAsync(dev, blocks->pdata[i], (size_t) n,
							    cudaMemcpyHostToDevice, stream);

		if (err != cudaSuccess)
			return err;
		dev += n;
		left -= n;
	}
	return cudaSuccess;
}

/* The pinned copy goes to files and comes back; the blocks are scribbled between. */
static gboolean
disk_leg(Cuda *c, Buf *b, GPtrArray *blocks, GError **error)
{
	g_autofree char *path = g_strdup_printf("%s/buf-%" G_GUINT64_FORMAT, c->disk_dir, b->seed);
	Buf on_disk = {.tier = GS_TIER_DISK, .bytes = b->bytes, .seed = b->seed, .path = path};
	gboolean ok = write_files(c, &on_disk, blocks, error);

	for (guint i = 0; ok && i < blocks->len; i++) {
		gsize first, n = block_words(c, b, i, &first);

		memset(blocks->pdata[i], 0, n * 8);
	}
	ok = ok && read_files(c, &on_disk, blocks, error);
	files_unlink(&on_disk);
	return ok;
}

/* Counts a check of @b's bytes, and whether it found them @intact; returns @intact. */
static gboolean
count_check(Cuda *c, const Buf *b, gboolean intact)
{
	atomic_fetch_add(&c->bytes_checked, words_of(b->bytes) * 8);
	if (!intact)
		atomic_fetch_add(&c->corrupt, 1);
	return intact;
}

/*
 * Counts on the device the words of @b that differ from its pattern, on the
 * thread's stream and into its own counter there; *@intact: none.
 */
static gboolean
device_check(Cuda *c, Thread *t, const Buf *b, cudaStream_t stream, gboolean *intact,
	     GError **error)
{
	unsigned long long **counter = &t->mismatches[b->device], mismatches = 0;
	gboolean ok;

	if (*counter == NULL &&
	    faulted(c, cudaMalloc((void **) counter, sizeof **counter), "checking", error))
		return FALSE;
	ok = !faulted(c, cudaMemsetAsync(*counter, 0, sizeof **counter, stream), "checking", error) &&
	     !faulted(c, gs_cuda_check(b->words, words_of(b->bytes), b->seed, *counter, stream),
		      "checking", error) &&
	     !faulted(c, cudaMemcpyAsync(&mismatches, *counter, sizeof mismatches,
					 cudaMemcpyDeviceToHost, stream), "checking", error) &&
	     !faulted(c, cudaStreamSynchronize(stream), "checking", error);
	if (!ok)
		return FALSE;
	*intact = count_check(c, b, mismatches == 0);
	return TRUE;
}

static gboolean
cuda_round_trip(gpointer state, gpointer thread, guint64 handle, GsTier to, GError **error)
{
	Cuda *c = state;
	Buf *b = GSIZE_TO_POINTER(handle);
	cudaStream_t stream;
	GPtrArray *blocks;
	gboolean ok = FALSE, intact = FALSE;

	if (b->tier != GS_TIER_GPU) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "only GPU buffers make round trips");
		return FALSE;
	}
	stream = stream_of(c, thread, b->device);
	blocks = pinned_take(&c->host, (gint64) words_of(b->bytes) * 8, TRUE);
	if (stream == NULL || blocks == NULL) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no stream or no pinned host blocks for a round trip");
		if (blocks != NULL)
			pinned_give(&c->host, blocks);
		return FALSE;
	}
	blocks_clear(c, b, blocks);
	if (faulted(c, fill_before_copy(b, stream), "filling", error) ||
	    faulted(c, copy_blocks(b, blocks, c->host.block_size, TRUE, stream), "spilling", error) ||
	    faulted(c, cudaStreamSynchronize(stream), "spilling", error))
		goto out;
	if (to == GS_TIER_DISK && !disk_leg(c, b, blocks, error))
		goto out;
	/* The device copy is cleared: what comes back must come from the blocks. */
	if (faulted(c, cudaMemsetAsync(b->words, 0, words_of(b->bytes) * 8, stream), "clearing", error) ||
	    faulted(c, copy_blocks(b, blocks, c->host.block_size, FALSE, stream), "unspilling", error))
		goto out;
	ok = device_check(c, thread, b, stream, &intact, error);
	if (ok) {
		atomic_fetch_add(&c->round_trips, 1);
		ok = intact;
	}
out:
	if (!ok)
		settle(c, thread, "spilling"); /* nothing queued may still use the blocks */
	pinned_give(&c->host, blocks);
	return ok;
}

/* ---- moves between tiers ---- */

/* Pinned blocks holding @b's bytes: its own (host tier), or staged from the device or files. */
static GPtrArray *
stage(Cuda *c, Thread *t, Buf *b, gboolean *borrowed, GError **error)
{
	GPtrArray *blocks;
	gboolean ok;

	*borrowed = b->tier == GS_TIER_HOST;
	if (*borrowed) {
		/* As a GPU buffer (fill_before_copy): the pattern just before the first copy. */
		if (!b->filled)
			blocks_fill(c, b, b->blocks);
		b->filled = TRUE;
		return b->blocks;
	}
	blocks = pinned_take(&c->host, (gint64) words_of(b->bytes) * 8, TRUE);
	if (blocks == NULL) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no pinned host blocks to stage a %" G_GINT64_FORMAT "-byte copy",
			    b->bytes);
		return NULL;
	}
	blocks_clear(c, b, blocks);
	if (b->tier == GS_TIER_GPU) {
		cudaStream_t stream = stream_of(c, t, b->device);

		if (stream == NULL)
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no stream to stage a %" G_GINT64_FORMAT "-byte copy", b->bytes);
		ok = stream != NULL && !faulted(c, fill_before_copy(b, stream), "filling", error) &&
		     !faulted(c, copy_blocks(b, blocks, c->host.block_size, TRUE, stream), "spilling",
			     error) &&
		     !faulted(c, cudaStreamSynchronize(stream), "spilling", error);
	} else {
		ok = read_files(c, b, blocks, error);
	}
	if (!ok) {
		settle(c, t, "staging a copy"); /* nothing queued may still use the blocks */
		pinned_give(&c->host, blocks);
		return NULL;
	}
	return blocks;
}

/* Puts the staged bytes into @copy, in its tier; *@intact when they arrived whole. */
static gboolean
land(Cuda *c, Thread *t, Buf *copy, GPtrArray *staged, gboolean borrowed, gboolean *intact,
     GError **error)
{
	cudaStream_t stream;

	switch (copy->tier) {
	case GS_TIER_HOST:
		if (borrowed) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "a host buffer cannot move to the host");
			return FALSE;
		}
		copy->blocks = staged; /* the staging blocks become the copy */
		*intact = count_check(c, copy, blocks_intact(c, copy, copy->blocks));
		return TRUE;
	case GS_TIER_DISK:
		copy->path = g_strdup_printf("%s/buf-%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
					     c->disk_dir, copy->seed, atomic_fetch_add(&c->files, 1));
		*intact = TRUE; /* checked when it is read back */
		return write_files(c, copy, staged, error);
	case GS_TIER_GPU:
		stream = stream_of(c, t, copy->device);
		if (stream == NULL || !gpu_take(c, t, copy)) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no device memory to bring a %" G_GINT64_FORMAT "-byte buffer back",
				    copy->bytes);
			return FALSE;
		}
		/* A pool hands back the memory it was just given, these very bytes often. */
		return !faulted(c, cudaMemsetAsync(copy->words, 0, words_of(copy->bytes) * 8, stream),
			       "clearing", error) &&
		       !faulted(c, copy_blocks(copy, staged, c->host.block_size, FALSE, stream),
			       "unspilling", error) &&
		       device_check(c, t, copy, stream, intact, error);
	}
	g_return_val_if_reached(FALSE);
}

static gboolean
cuda_move(gpointer state, gpointer thread, guint64 handle, GsTier from, GsTier to, guint device,
	  guint64 *moved, gboolean *intact, GError **error)
{
	Cuda *c = state;
	Buf *b = GSIZE_TO_POINTER(handle), *copy = g_new0(Buf, 1);
	gboolean borrowed, ok;
	GPtrArray *staged;

	copy->tier = to;
	copy->device = to == GS_TIER_GPU ? (int) MIN(device, (guint) c->n_devices - 1) : b->device;
	copy->bytes = b->bytes;
	copy->seed = b->seed;
	copy->filled = TRUE; /* once landed */
	staged = stage(c, thread, b, &borrowed, error);
	ok = staged != NULL && land(c, thread, copy, staged, borrowed, intact, error);
	if (!ok)
		settle(c, thread, "moving a buffer"); /* before any memory it writes goes back */
	if (staged != NULL && !borrowed && copy->blocks != staged)
		pinned_give(&c->host, staged);
	if (!ok) {
		if (copy->base != NULL)
			cudaFree(copy->base);
		if (copy->tier == GS_TIER_DISK && copy->path != NULL)
			cuda_free(c, thread, copy->tier, GPOINTER_TO_SIZE(copy));
		else
			g_free(copy);
		return FALSE;
	}
	atomic_fetch_add(&c->moves, 1);
	*moved = GPOINTER_TO_SIZE(copy);
	return TRUE;
}

static gboolean
cuda_healthy(gpointer state, GError **error)
{
	Cuda *c = state;
	gboolean healthy;

	pthread_mutex_lock(&c->fault_lock);
	healthy = c->fault == NULL;
	if (!healthy)
		g_propagate_error(error, g_error_copy(c->fault));
	pthread_mutex_unlock(&c->fault_lock);
	return healthy;
}

static void
cuda_stats(gpointer state, GsBackendStats *out)
{
	Cuda *c = state;

	out->round_trips = atomic_load(&c->round_trips);
	out->moves = atomic_load(&c->moves);
	out->bytes_checked = atomic_load(&c->bytes_checked);
	out->corrupt_buffers = atomic_load(&c->corrupt);
	out->device_refusals = atomic_load(&c->refusals);
}

const GsBackendOps gs_backend_cuda = {
	.api_version = 1,
	.name = "cuda",
	.open = cuda_open,
	.close = cuda_close,
	.thread_begin = cuda_thread_begin,
	.thread_end = cuda_thread_end,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.compute_begin = cuda_compute_begin,
	.compute_end = cuda_compute_end,
	.round_trip = cuda_round_trip,
	.move = cuda_move,
	.stats = cuda_stats,
	.healthy = cuda_healthy,
	.calibrate = gs_cuda_calibrate,
};
