/*
 * gpusim tests: the part of the CUDA runtime that the CUDA backend calls
 * (backends/cuda/), and its three kernels (kernel.h), carried out on the CPU.
 *
 * It lets the backend's own logic (capped pools, per-thread streams, pinned
 * staging, disk files, pattern checks, moves between tiers) run in `make
 * check` on machines without a GPU: tests/test-cuda-on-cpu and
 * tests/gpusim-cuda-on-cpu link it where the real build links libcudart and
 * kernel.cu. It measures nothing about GPUs, and its timings mean nothing.
 *
 * It is stricter than a GPU where the backend could be wrong without a GPU
 * noticing soon:
 *  - work on a stream (copies, memsets, kernels, stream-ordered frees) runs
 *    only when that stream is synchronised (or the device, or cudaFree, or a
 *    pool that cannot fit an allocation waits for queued frees), so work on
 *    another stream that was not waited for has simply not happened;
 *  - every device access must lie inside a live allocation, on the stream's
 *    own device for kernels, and must not follow that allocation's
 *    cudaFreeAsync; host memory in a copy must not be device memory;
 *  - a stream-ordered allocation exists for other streams only once its own
 *    stream has run past it (it was synchronised): using it on another
 *    stream before then is a breach, as the runtime orders it on one stream;
 *  - a pool destroyed with allocations outstanding is a leak;
 *  - a process forked after the runtime started gets an initialisation
 *    error from every call, as a CUDA context does not survive fork();
 *  - a pool hands back the memory it was just given back, last freed first
 *    (of the same charge), with the bytes still in it, as a real pool
 *    reuses its addresses: a copy that never happened can leave the right
 *    bytes in place unless the destination was cleared first. Tests can
 *    drop copies on purpose (gs_cuda_on_cpu_drop_copies()) to see that;
 *  - a device fault sticks: once a kernel hits one (gs_cuda_on_cpu_fault(),
 *    or the launch after GS_CUDA_ON_CPU_FAULT_AFTER others), every call that
 *    touches the device fails with cudaErrorIllegalAddress, and
 *    cudaGetLastError() keeps returning it, as an illegal address ends a
 *    CUDA context.
 *  - a pool reserves device memory in granules (2 MiB, as the runtime's
 *    pools do, or GS_CUDA_ON_CPU_POOL_GRANULE bytes, or what
 *    gs_cuda_on_cpu_set_pool_granule() says for pools made after it): an
 *    allocation of a granule or more takes whole granules of its own, smaller
 *    ones share granules. Its maxSize caps what it reserves, not what is
 *    allocated from it, so a pool capped at a scenario's capacity refuses
 *    buffers that the capacity admits. What it reserves and no longer needs
 *    is given back at a synchronisation down to its release threshold (0
 *    unless set), and cudaMemGetInfo counts what the pools hold.
 * A breach prints what happened and aborts, as an illegal address ends a
 * CUDA context. Allocations are placed at 256-byte boundaries.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <glib.h>

#include "backends/cuda/kernel.h"
#include "backends/pattern.h"
#include "cuda-on-cpu.h"

#define N_DEVICES 2
#define DEVICE_BYTES ((gsize) 80 << 30) /* what each pretend device has */
#define GRANULE 256 /* an allocation's placement */
#define POOL_GRANULE ((gsize) 2 << 20) /* what a pool reserves at a time, by default */

typedef enum { RANGE_DEVICE, RANGE_PINNED } RangeKind;

struct CUmemPoolHandle_st {
	int device;
	gsize max;  /* 0: the device's memory; else a cap on what it reserves */
	gsize used; /* charged, pending frees included */
	gsize granule;   /* what it reserves at a time */
	gsize large;     /* whole granules taken by allocations of a granule or more */
	gsize small;     /* charged to smaller allocations, which share granules */
	gsize reserved;  /* held from the device: at least large + small in granules */
	guint64 release_threshold; /* reserved memory kept at a synchronisation */
	GPtrArray *reuse; /* Range* freed back to the pool, still mapped; last freed last */
};

/* A live allocation: device memory (from a pool or cudaMalloc) or pinned host memory. */
typedef struct {
	RangeKind kind;
	char *base;
	gsize bytes, charge;
	int device;
	cudaMemPool_t pool; /* NULL: cudaMalloc or pinned */
	gboolean freeing;   /* a cudaFreeAsync is queued */
	struct CUstream_st *allocating; /* the stream of a stream-ordered allocation not yet run */
	guint users;        /* ops reading or writing it right now, without the lock */
} Range;

typedef enum { OP_ALLOC, OP_COPY, OP_SET, OP_FREE, OP_FILL, OP_CHECK, OP_BUSY } OpKind;

typedef struct {
	OpKind kind;
	void *dst;
	const void *src;
	const void *device_side; /* OP_COPY: the end in device memory */
	gsize bytes;
	int value;
	gboolean dropped; /* OP_COPY: a copy a test made "happen" without its bytes */
	guint64 seed;
	unsigned long long *counter;
	GsCudaUses uses;
	gint64 until_ns; /* OP_BUSY: when the kernel's time is up */
} Op;

struct CUstream_st {
	int device;
	GQueue ops;
	gboolean running; /* a thread is carrying out its ops */
	gboolean dead;    /* destroyed; kept so that no pointer to it dangles */
	gint64 busy_until_ns;
};

/* pthread rather than GLib locks: ThreadSanitizer sees these. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* a stream stopped running */
	GTree *ranges; /* base → Range */
	GPtrArray *streams; /* live */
	GPtrArray *graveyard;
	GPtrArray *pools; /* made by cudaMemPoolCreate, live */
	gsize pool_granule; /* for pools made from now on */
	struct CUstream_st null_stream[N_DEVICES];
	struct CUmemPoolHandle_st default_pool[N_DEVICES];
	gsize device_used[N_DEVICES]; /* cudaMalloc's allocations and what pools reserve */
	pid_t started_in; /* the process that started the runtime; 0 before */
	guint copies_to_drop; /* the next copies that "happen" without moving a byte */
	gint copies_to_failure; /* copies still to queue before one is refused; < 0: none is */
	gint64 launches_left; /* kernels that run before one faults; < 0: none faults */
	gint fault;           /* atomic: a kernel hit an illegal address; it sticks */
	gulong pool_grows;    /* times a pool reserved more of its device */
} cpu = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER,
	 .copies_to_failure = -1};

static __thread int current_device;
static __thread cudaError_t last_error;

static G_GNUC_NORETURN G_GNUC_PRINTF(1, 2) void
breach(const char *format, ...)
{
	va_list args;

	va_start(args, format);
	fputs("gpusim's CUDA stand-in: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
	abort();
}

static gint
compare_addresses(gconstpointer a, gconstpointer b)
{
	return (guintptr) a < (guintptr) b ? -1 : (guintptr) a > (guintptr) b;
}

static void
start(void)
{
	const char *after = g_getenv("GS_CUDA_ON_CPU_FAULT_AFTER");
	const char *granule = g_getenv("GS_CUDA_ON_CPU_POOL_GRANULE");

	cpu.started_in = getpid();
	cpu.launches_left = after != NULL ? g_ascii_strtoll(after, NULL, 10) : -1;
	if (cpu.pool_granule == 0)
		cpu.pool_granule = granule != NULL ? g_ascii_strtoull(granule, NULL, 10) : 0;
	if (cpu.pool_granule == 0)
		cpu.pool_granule = POOL_GRANULE;
	cpu.ranges = g_tree_new(compare_addresses);
	cpu.streams = g_ptr_array_new();
	cpu.graveyard = g_ptr_array_new();
	cpu.pools = g_ptr_array_new();
	for (int i = 0; i < N_DEVICES; i++) {
		cpu.null_stream[i].device = i;
		cpu.default_pool[i].device = i;
		cpu.default_pool[i].granule = cpu.pool_granule;
	}
}

/*
 * Starts the runtime on first use. FALSE in a child forked after it started:
 * the caller fails with cudaErrorInitializationError.
 */
static gboolean
started_here(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, start);
	return cpu.started_in == getpid();
}

/*
 * Takes the stand-in's one lock; FALSE (not taken) in a child forked after
 * the start, or once the device has faulted: the call fails with why_not().
 */
static gboolean
lock_cpu(void)
{
	if (!started_here())
		return FALSE;
	pthread_mutex_lock(&cpu.lock);
	if (g_atomic_int_get(&cpu.fault)) {
		pthread_mutex_unlock(&cpu.lock);
		return FALSE;
	}
	return TRUE;
}

/* Why lock_cpu() said no. */
static cudaError_t
why_not(void)
{
	return started_here() ? cudaErrorIllegalAddress : cudaErrorInitializationError;
}

/* Under lock, as a kernel is launched: whether it is the one that faults. */
static gboolean
kernel_faults(void)
{
	if (cpu.launches_left < 0)
		return FALSE;
	if (cpu.launches_left-- > 0)
		return FALSE;
	g_atomic_int_set(&cpu.fault, TRUE);
	return TRUE;
}

static cudaError_t
fail(cudaError_t err)
{
	last_error = err;
	return err;
}

/* ---- ranges ---- */

/* The live range holding [p, p + n); NULL when none does. */
static Range *
range_at(const void *p, gsize n)
{
	GTreeNode *node = g_tree_upper_bound(cpu.ranges, p);
	Range *r;

	node = node != NULL ? g_tree_node_previous(node) : g_tree_node_last(cpu.ranges);
	if (node == NULL)
		return NULL;
	r = g_tree_node_value(node);
	if ((const char *) p < r->base || (const char *) p + n > r->base + r->bytes)
		return NULL;
	return r;
}

/*
 * Device memory that an op on stream @s may touch: live, not being freed,
 * allocated for @s (its allocation's own stream, or one that has run), on
 * @s's device if @same_device.
 */
static void
require_device(const void *p, gsize n, const struct CUstream_st *s, gboolean same_device,
	       const char *what)
{
	Range *r = range_at(p, MAX(n, 1));

	if (r == NULL || r->kind != RANGE_DEVICE)
		breach("%s: %p (+%zu bytes) is not inside a live device allocation", what, p, n);
	if (r->freeing)
		breach("%s: %p is used after its cudaFreeAsync", what, p);
	if (r->allocating != NULL && r->allocating != s)
		breach("%s: %p is used on another stream before its stream-ordered allocation "
		       "was waited for", what, p);
	if (same_device && r->device != s->device)
		breach("%s: %p is on device %d, the stream on device %d", what, p, r->device,
		       s->device);
}

static void
require_host(const void *p, gsize n, const char *what)
{
	Range *r = range_at(p, MAX(n, 1));

	if (r != NULL && r->kind == RANGE_DEVICE)
		breach("%s: %p is device memory where host memory was said", what, p);
}

static gboolean
is_pinned(const void *p, gsize n)
{
	Range *r = range_at(p, MAX(n, 1));

	return r != NULL && r->kind == RANGE_PINNED;
}

/* ---- what pools reserve ---- */

static gsize
round_to(gsize n, gsize granule)
{
	return (n + granule - 1) / granule * granule;
}

/* What @pool must reserve to hold its allocations and @charge bytes more. */
static gsize
pool_needs(cudaMemPool_t pool, gsize charge)
{
	gsize g = pool->granule;

	if (charge >= g)
		return pool->large + round_to(charge, g) + round_to(pool->small, g);
	return pool->large + round_to(pool->small + charge, g);
}

/* Sets what @pool reserves, and the device's count with it. */
static void
pool_reserve(cudaMemPool_t pool, gsize reserved)
{
	cpu.pool_grows += reserved > pool->reserved;
	cpu.device_used[pool->device] += reserved - pool->reserved;
	pool->reserved = reserved;
}

/* Charges (@sign +1) or gives back (-1) an allocation of @charge bytes; reserves more as needed. */
static void
pool_charge(cudaMemPool_t pool, gsize charge, int sign)
{
	gsize *part = charge >= pool->granule ? &pool->large : &pool->small;
	gsize amount = charge >= pool->granule ? round_to(charge, pool->granule) : charge;

	if (sign > 0) {
		pool_reserve(pool, MAX(pool->reserved, pool_needs(pool, charge)));
		*part += amount;
		pool->used += charge;
	} else {
		*part -= amount;
		pool->used -= charge;
	}
}

/* At a synchronisation: what a pool no longer needs goes back, down to its release threshold. */
static void
pool_release(cudaMemPool_t pool)
{
	gsize keep = MAX(pool_needs(pool, 0), MIN(pool->reserved, pool->release_threshold));

	if (keep < pool->reserved)
		pool_reserve(pool, round_to(keep, pool->granule));
}

static void
release_pools(void)
{
	for (int i = 0; i < N_DEVICES; i++)
		pool_release(&cpu.default_pool[i]);
	for (guint i = 0; i < cpu.pools->len; i++)
		pool_release(cpu.pools->pdata[i]);
}

/* The pool's most recently freed memory of @charge bytes, taken off its list; NULL if none. */
static char *
reuse_memory(cudaMemPool_t pool, gsize charge)
{
	for (guint i = pool != NULL && pool->reuse != NULL ? pool->reuse->len : 0; i > 0; i--) {
		Range *old = pool->reuse->pdata[i - 1];

		if (old->charge == charge) {
			char *base = old->base;

			g_ptr_array_remove_index(pool->reuse, i - 1);
			g_free(old);
			return base;
		}
	}
	return NULL;
}

static Range *
range_add(RangeKind kind, gsize bytes, int device, cudaMemPool_t pool)
{
	Range *r = g_new0(Range, 1);

	r->kind = kind;
	r->bytes = bytes;
	r->charge = (MAX(bytes, 1) + GRANULE - 1) / GRANULE * GRANULE;
	r->device = device;
	r->pool = pool;
	r->base = reuse_memory(pool, r->charge);
	/*
	 * Fresh pages of their own: zeros, which no pattern word is, never what
	 * a freed buffer left there (so a copy that never happened fails its
	 * check), and untouched until used, so that allocating takes
	 * microseconds, as from a real pool, and the runs' timing does not hang
	 * on the stand-in.
	 */
	if (r->base == NULL)
		r->base = mmap(NULL, r->charge, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED)
		breach("the CPU has no %zu bytes to pretend with", r->charge);
	if (pool != NULL)
		pool_charge(pool, r->charge, +1);
	else if (kind == RANGE_DEVICE)
		cpu.device_used[device] += r->charge;
	g_tree_insert(cpu.ranges, r->base, r);
	return r;
}

static void
range_remove(Range *r)
{
	if (r->users > 0)
		breach("%p is freed while work on another stream still uses it", r->base);
	if (r->pool != NULL)
		pool_charge(r->pool, r->charge, -1);
	else if (r->kind == RANGE_DEVICE)
		cpu.device_used[r->device] -= r->charge;
	g_tree_remove(cpu.ranges, r->base);
	if (r->pool != NULL) {
		/* Back to the pool, bytes and all, for the next allocation of its size. */
		if (r->pool->reuse == NULL)
			r->pool->reuse = g_ptr_array_new();
		g_ptr_array_add(r->pool->reuse, r);
		return;
	}
	munmap(r->base, r->charge);
	g_free(r);
}

/* The range that starts at @p, of @kind; a breach otherwise. */
static Range *
range_starting_at(const void *p, RangeKind kind, const char *what)
{
	Range *r = g_tree_lookup(cpu.ranges, p);

	if (r == NULL || r->kind != kind)
		breach("%s: %p is not the start of a live allocation of that kind", what, p);
	return r;
}

/* ---- streams ---- */

static gint64
now_ns(void)
{
	return g_get_monotonic_time() * 1000;
}

/* The bytes' part of an op; run without the lock, so that a long copy holds up no one. */
static void
move_bytes(const Op *op)
{
	switch (op->kind) {
	case OP_COPY:
		if (!op->dropped)
			memcpy(op->dst, op->src, op->bytes);
		break;
	case OP_SET:
		memset(op->dst, op->value, op->bytes);
		break;
	case OP_FILL:
		gs_pattern_fill(op->dst, op->bytes / 8, op->seed);
		break;
	case OP_CHECK:
		for (gsize i = 0; i < op->bytes / 8; i++) {
			if (((const guint64 *) op->src)[i] != gs_pattern_word(op->seed, i))
				(*op->counter)++;
		}
		break;
	case OP_ALLOC:
	case OP_FREE:
	case OP_BUSY:
		break;
	}
}

/*
 * Moves an op's bytes without the lock; the allocations it touches count it
 * as a user meanwhile, and freeing one of them then is a breach (work on
 * another stream freed memory this stream had not finished with).
 */
static void
move_bytes_unlocked(const Op *op)
{
	Range *touched[3] = {
		range_at(op->dst != NULL ? op->dst : op->src, MAX(op->bytes, 1)),
		op->kind == OP_COPY ? range_at(op->src, MAX(op->bytes, 1)) : NULL,
		op->counter != NULL ? range_at(op->counter, sizeof *op->counter) : NULL,
	};

	for (int i = 0; i < 3; i++) {
		if (touched[i] != NULL)
			touched[i]->users++;
	}
	pthread_mutex_unlock(&cpu.lock);
	move_bytes(op);
	pthread_mutex_lock(&cpu.lock);
	for (int i = 0; i < 3; i++) {
		if (touched[i] != NULL)
			touched[i]->users--;
	}
}

static void
run_op(struct CUstream_st *s, Op *op)
{
	gint64 left_ns;

	switch (op->kind) {
	case OP_COPY:
	case OP_SET:
	case OP_FILL:
	case OP_CHECK:
		move_bytes_unlocked(op);
		break;
	case OP_ALLOC:
		range_starting_at(op->dst, RANGE_DEVICE, "cudaMallocFromPoolAsync")->allocating = NULL;
		break;
	case OP_FREE:
		range_remove(range_starting_at(op->dst, RANGE_DEVICE, "cudaFreeAsync"));
		break;
	case OP_BUSY:
		/* The kernel reads its buffers while it runs: they must still be there. */
		for (unsigned u = 0; u < op->uses.n; u++)
			require_device(op->uses.ptr[u], op->uses.words[u] * 8, s, TRUE, "busy kernel");
		left_ns = op->until_ns - now_ns();
		if (left_ns > 0) {
			pthread_mutex_unlock(&cpu.lock);
			g_usleep((gulong) (left_ns / 1000 + 1));
			pthread_mutex_lock(&cpu.lock);
		}
		break;
	}
}

/* What an op touches must still be live when it runs, not only when it was queued. */
static void
check_op(struct CUstream_st *s, const Op *op)
{
	switch (op->kind) {
	case OP_COPY:
		require_device(op->device_side, op->bytes, s, FALSE, "cudaMemcpyAsync");
		break;
	case OP_SET:
		require_device(op->dst, op->bytes, s, FALSE, "cudaMemsetAsync");
		break;
	case OP_FILL:
		require_device(op->dst, op->bytes, s, TRUE, "fill kernel");
		break;
	case OP_CHECK:
		require_device(op->src, op->bytes, s, TRUE, "check kernel");
		require_device(op->counter, sizeof *op->counter, s, TRUE, "check kernel");
		break;
	case OP_ALLOC:
	case OP_FREE:
	case OP_BUSY: /* run_op checks the busy kernel's buffers as it reads them */
		break;
	}
}

/*
 * Carries out the first @n of @s's queued ops in order (all of them if
 * @n < 0); called and returns with the lock held.
 */
static void
run_stream_ops(struct CUstream_st *s, gint n)
{
	Op *op;

	while (s->running)
		pthread_cond_wait(&cpu.idle, &cpu.lock);
	s->running = TRUE;
	while (n-- != 0 && (op = g_queue_pop_head(&s->ops)) != NULL) {
		check_op(s, op);
		run_op(s, op);
		g_free(op);
	}
	s->running = FALSE;
	pthread_cond_broadcast(&cpu.idle);
}

static void
run_stream(struct CUstream_st *s)
{
	run_stream_ops(s, -1);
}

/* The live streams made by cudaStreamCreate, then each device's null stream; NULL past them. */
static struct CUstream_st *
nth_stream(guint i)
{
	if (i < cpu.streams->len)
		return cpu.streams->pdata[i];
	i -= cpu.streams->len;
	return i < N_DEVICES ? &cpu.null_stream[i] : NULL;
}

/* How many of @s's queued ops run before its last queued free is done; 0 without one. */
static gint
ops_through_last_free(struct CUstream_st *s)
{
	gint n = (gint) g_queue_get_length(&s->ops);

	for (GList *l = s->ops.tail; l != NULL; l = l->prev, n--) {
		if (((const Op *) l->data)->kind == OP_FREE)
			return n;
	}
	return 0;
}

/*
 * A pool that cannot fit an allocation waits for the frees queued on every
 * stream, and for what precedes them there, not for work queued after them
 * (a compute's kernel, say): the runtime's allocation would wait for those
 * frees in stream order, not for the streams to drain.
 */
static void
run_queued_frees(void)
{
	struct CUstream_st *s;

	for (guint i = 0; (s = nth_stream(i)) != NULL; i++) {
		gint n = ops_through_last_free(s);

		if (n > 0)
			run_stream_ops(s, n);
	}
}

/* Runs every stream of @device (all devices if < 0) until none has work left. */
static void
run_streams(int device)
{
	gboolean again = TRUE;

	/* A stream another thread is running counts: its op in hand is not done. */
	while (again) {
		struct CUstream_st *s;

		again = FALSE;
		for (guint i = 0; (s = nth_stream(i)) != NULL; i++) {
			if ((device < 0 || s->device == device) &&
			    (s->running || !g_queue_is_empty(&s->ops))) {
				run_stream(s);
				again = TRUE;
			}
		}
	}
}

static struct CUstream_st *
stream_or_null(cudaStream_t stream)
{
	if (stream == NULL)
		return &cpu.null_stream[current_device];
	if (stream->dead)
		breach("work was given to a destroyed stream");
	return stream;
}

static void
enqueue(struct CUstream_st *s, const Op *op)
{
	g_queue_push_tail(&s->ops, g_memdup2(op, sizeof *op));
}

/* ---- devices ---- */

cudaError_t
cudaGetDeviceCount(int *count)
{
	if (!started_here())
		return fail(cudaErrorInitializationError);
	*count = N_DEVICES;
	return cudaSuccess;
}

cudaError_t
cudaSetDevice(int device)
{
	if (!started_here())
		return fail(cudaErrorInitializationError);
	if (device < 0 || device >= N_DEVICES)
		return fail(cudaErrorInvalidDevice);
	current_device = device;
	return cudaSuccess;
}

cudaError_t
cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	if (!started_here())
		return fail(cudaErrorInitializationError);
	if (device < 0 || device >= N_DEVICES)
		return fail(cudaErrorInvalidDevice);
	memset(prop, 0, sizeof *prop);
	g_strlcpy(prop->name, "gpusim's CUDA stand-in on the CPU", sizeof prop->name);
	prop->totalGlobalMem = DEVICE_BYTES;
	return cudaSuccess;
}

cudaError_t
cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	if (!lock_cpu())
		return fail(why_not());
	*free_bytes = DEVICE_BYTES - cpu.device_used[current_device];
	*total = DEVICE_BYTES;
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaGetLastError(void)
{
	cudaError_t err = last_error;

	if (g_atomic_int_get(&cpu.fault))
		return cudaErrorIllegalAddress; /* it sticks */
	last_error = cudaSuccess;
	return err;
}

const char *
cudaGetErrorString(cudaError_t err)
{
	static const struct {
		cudaError_t err;
		const char *text;
	} texts[] = {
		{cudaSuccess, "no error"},
		{cudaErrorInvalidValue, "invalid argument"},
		{cudaErrorMemoryAllocation, "out of memory"},
		{cudaErrorInvalidDevice, "invalid device ordinal"},
		{cudaErrorInvalidResourceHandle, "invalid resource handle"},
		{cudaErrorInitializationError, "initialization error"},
		{cudaErrorIllegalAddress, "an illegal memory access was encountered"},
	};

	for (gsize i = 0; i < G_N_ELEMENTS(texts); i++) {
		if (texts[i].err == err)
			return texts[i].text;
	}
	return "unknown error";
}

cudaError_t
cudaDeviceSynchronize(void)
{
	if (!lock_cpu())
		return fail(why_not());
	run_streams(current_device);
	release_pools();
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

/* ---- streams ---- */

cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
	struct CUstream_st *s;

	(void) flags;
	if (!lock_cpu())
		return fail(why_not());
	s = g_new0(struct CUstream_st, 1);
	s->device = current_device;
	g_ptr_array_add(cpu.streams, s);
	pthread_mutex_unlock(&cpu.lock);
	*stream = s;
	return cudaSuccess;
}

cudaError_t
cudaStreamCreate(cudaStream_t *stream)
{
	return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

/*
 * A test may hold the next synchronisation that would run a pattern check
 * (gs_cuda_on_cpu_hold_next_check()): a cudaStreamSynchronize, or a copy to
 * pageable memory, which returns once the stream has run. It waits, without
 * the stand-in's lock, until the test releases it, so that the test can see
 * what other threads can do meanwhile.
 */
enum { HOLD_NONE, HOLD_ARMED, HOLD_HOLDING, HOLD_RELEASED };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;
} hold = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* Under cpu.lock: whether @s has a check queued and a test holds the next such synchronisation. */
static gboolean
check_to_hold(const struct CUstream_st *s)
{
	gboolean take = FALSE;

	pthread_mutex_lock(&hold.lock);
	for (GList *l = s->ops.head; hold.state == HOLD_ARMED && l != NULL && !take; l = l->next)
		take = ((const Op *) l->data)->kind == OP_CHECK;
	if (take) {
		hold.state = HOLD_HOLDING;
		pthread_cond_broadcast(&hold.cond);
	}
	pthread_mutex_unlock(&hold.lock);
	return take;
}

static void
wait_for_release(void)
{
	pthread_mutex_lock(&hold.lock);
	while (hold.state != HOLD_RELEASED)
		pthread_cond_wait(&hold.cond, &hold.lock);
	hold.state = HOLD_NONE;
	pthread_mutex_unlock(&hold.lock);
}

/* Under cpu.lock: runs @s's work, once a test lets go of a check it holds there. */
static void
run_stream_held(struct CUstream_st *s)
{
	if (check_to_hold(s)) {
		pthread_mutex_unlock(&cpu.lock);
		wait_for_release();
		pthread_mutex_lock(&cpu.lock);
	}
	run_stream(s);
}

cudaError_t
cudaStreamSynchronize(cudaStream_t stream)
{
	if (!lock_cpu())
		return fail(why_not());
	run_stream_held(stream_or_null(stream));
	release_pools();
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

/* Its work still runs, as the runtime's does; the stream itself is never freed. */
cudaError_t
cudaStreamDestroy(cudaStream_t stream)
{
	if (stream == NULL)
		return fail(cudaErrorInvalidResourceHandle);
	if (!lock_cpu())
		return fail(why_not());
	run_stream(stream_or_null(stream));
	stream->dead = TRUE;
	g_ptr_array_remove_fast(cpu.streams, stream);
	g_ptr_array_add(cpu.graveyard, stream);
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

/* ---- pools and allocations ---- */

cudaError_t
cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
	if (!started_here())
		return fail(why_not());
	if (props->allocType != cudaMemAllocationTypePinned ||
	    props->location.type != cudaMemLocationTypeDevice || props->location.id < 0 ||
	    props->location.id >= N_DEVICES)
		return fail(cudaErrorInvalidValue);
	if (!lock_cpu())
		return fail(why_not());
	*pool = g_new0(struct CUmemPoolHandle_st, 1);
	(*pool)->device = props->location.id;
	(*pool)->max = props->maxSize;
	(*pool)->granule = cpu.pool_granule;
	g_ptr_array_add(cpu.pools, *pool);
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
	if (!lock_cpu())
		return fail(why_not());
	if (attr == cudaMemPoolAttrReleaseThreshold)
		pool->release_threshold = *(const guint64 *) value;
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaMemPoolDestroy(cudaMemPool_t pool)
{
	if (!lock_cpu())
		return fail(why_not());
	run_streams(-1);
	if (pool->used > 0)
		breach("a pool is destroyed with %zu bytes still allocated from it", pool->used);
	pool_reserve(pool, 0);
	g_ptr_array_remove_fast(cpu.pools, pool);
	for (guint i = 0; pool->reuse != NULL && i < pool->reuse->len; i++) {
		Range *old = pool->reuse->pdata[i];

		munmap(old->base, old->charge);
		g_free(old);
	}
	pthread_mutex_unlock(&cpu.lock);
	if (pool->reuse != NULL)
		g_ptr_array_unref(pool->reuse);
	g_free(pool);
	return cudaSuccess;
}

static gboolean
fits(cudaMemPool_t pool, gsize charge)
{
	gsize cap = pool->max > 0 ? pool->max : DEVICE_BYTES;
	gsize needs = pool_needs(pool, charge);
	gsize more = needs > pool->reserved ? needs - pool->reserved : 0;

	return needs <= cap && cpu.device_used[pool->device] + more <= DEVICE_BYTES;
}

/*
 * The pointer is returned at once, as the runtime's is. A pool that cannot
 * fit it first waits for the frees queued on every stream, as the runtime may
 * (cudaMemPoolReuseAllowInternalDependencies): run_queued_frees().
 */
cudaError_t
cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
	gsize charge = (MAX(size, 1) + GRANULE - 1) / GRANULE * GRANULE;
	Op op = {.kind = OP_ALLOC};
	struct CUstream_st *s;
	Range *r;

	if (!lock_cpu())
		return fail(why_not());
	s = stream_or_null(stream);
	if (!fits(pool, charge))
		run_queued_frees();
	if (!fits(pool, charge)) {
		pthread_mutex_unlock(&cpu.lock);
		return fail(cudaErrorMemoryAllocation);
	}
	r = range_add(RANGE_DEVICE, size, pool->device, pool);
	/* Ordered on @stream: other streams may use it once that has run past it. */
	r->allocating = s;
	op.dst = r->base;
	enqueue(s, &op);
	*ptr = r->base;
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
	return cudaMallocFromPoolAsync(ptr, size, &cpu.default_pool[current_device], stream);
}

cudaError_t
cudaFreeAsync(void *ptr, cudaStream_t stream)
{
	Op op = {.kind = OP_FREE, .dst = ptr};
	struct CUstream_st *s;
	Range *r;

	if (!lock_cpu())
		return fail(why_not());
	r = range_starting_at(ptr, RANGE_DEVICE, "cudaFreeAsync");
	s = stream_or_null(stream);
	if (r->freeing)
		breach("cudaFreeAsync: %p is freed twice", ptr);
	if (r->allocating != NULL && r->allocating != s)
		breach("cudaFreeAsync: %p is freed on another stream before its stream-ordered "
		       "allocation was waited for", ptr);
	r->freeing = TRUE;
	enqueue(s, &op);
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaMalloc(void **ptr, size_t size)
{
	if (!lock_cpu())
		return fail(why_not());
	if (cpu.device_used[current_device] + size > DEVICE_BYTES) {
		pthread_mutex_unlock(&cpu.lock);
		return fail(cudaErrorMemoryAllocation);
	}
	*ptr = range_add(RANGE_DEVICE, size, current_device, NULL)->base;
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

/* Whether @p lies in @r. */
static gboolean
inside(const void *p, const Range *r)
{
	return p != NULL && (const char *) p >= r->base && (const char *) p < r->base + r->bytes;
}

/* Whether an op queued on some stream, not yet run, touches @r. */
static gboolean
queued_use(const Range *r)
{
	struct CUstream_st *s;

	for (guint i = 0; (s = nth_stream(i)) != NULL; i++) {
		for (GList *l = s->ops.head; l != NULL; l = l->next) {
			const Op *op = l->data;

			if (inside(op->dst, r) || inside(op->src, r) || inside(op->counter, r))
				return TRUE;
			for (unsigned u = 0; u < op->uses.n; u++) {
				if (inside(op->uses.ptr[u], r))
					return TRUE;
			}
		}
	}
	return FALSE;
}

/*
 * cudaMalloc's memory: every device is synchronised first, as the runtime
 * does. A pool's memory: not, as the runtime's cudaFree on it does not wait
 * for the streams, so work still queued on it is a breach.
 */
cudaError_t
cudaFree(void *ptr)
{
	Range *r;

	if (ptr == NULL)
		return cudaSuccess;
	if (!lock_cpu())
		return fail(why_not());
	r = range_starting_at(ptr, RANGE_DEVICE, "cudaFree");
	if (r->pool == NULL)
		run_streams(-1);
	else if (queued_use(r) || r->users > 0)
		breach("cudaFree: %p, a pool's memory, is freed with work on a stream still to use "
		       "it (cudaFree does not wait for streams)", ptr);
	if (r->freeing)
		breach("cudaFree: %p was already given to cudaFreeAsync", ptr);
	range_remove(r);
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
	(void) flags;
	if (!lock_cpu())
		return fail(why_not());
	*ptr = range_add(RANGE_PINNED, size, 0, NULL)->base;
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaFreeHost(void *ptr)
{
	if (!lock_cpu())
		return fail(why_not());
	range_remove(range_starting_at(ptr, RANGE_PINNED, "cudaFreeHost"));
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

/* ---- copies and kernels ---- */

/*
 * A copy that involves pageable host memory returns when it is done, as the
 * runtime's does; one between pinned and device memory is only queued.
 */
cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
		cudaStream_t stream)
{
	Op op = {.kind = OP_COPY, .dst = dst, .src = src, .bytes = count};
	const void *host;
	struct CUstream_st *s;

	if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyHostToDevice)
		return fail(cudaErrorInvalidValue);
	if (!lock_cpu())
		return fail(why_not());
	s = stream_or_null(stream);
	host = kind == cudaMemcpyDeviceToHost ? dst : src;
	op.device_side = kind == cudaMemcpyDeviceToHost ? src : dst;
	require_device(op.device_side, count, s, FALSE, "cudaMemcpyAsync");
	require_host(host, count, "cudaMemcpyAsync");
	if (cpu.copies_to_failure >= 0 && cpu.copies_to_failure-- == 0) {
		pthread_mutex_unlock(&cpu.lock);
		return fail(cudaErrorInvalidValue);
	}
	if (cpu.copies_to_drop > 0 && is_pinned(host, count)) {
		cpu.copies_to_drop--;
		op.dropped = TRUE;
	}
	enqueue(s, &op);
	if (!is_pinned(host, count))
		run_stream_held(s); /* pageable memory: the copy is done when the call returns */
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
	Op op = {.kind = OP_SET, .dst = ptr, .value = value, .bytes = count};
	struct CUstream_st *s;

	if (!lock_cpu())
		return fail(why_not());
	s = stream_or_null(stream);
	require_device(ptr, count, s, FALSE, "cudaMemsetAsync");
	enqueue(s, &op);
	pthread_mutex_unlock(&cpu.lock);
	return cudaSuccess;
}

cudaError_t
gs_cuda_busy(long long ns, GsCudaUses uses, cudaStream_t stream)
{
	Op op = {.kind = OP_BUSY, .uses = uses};
	struct CUstream_st *s;

	if (!lock_cpu())
		return fail(why_not());
	s = stream_or_null(stream);
	for (unsigned u = 0; u < uses.n; u++)
		require_device(uses.ptr[u], uses.words[u] * 8, s, TRUE, "busy kernel");
	/* The kernel starts when the stream's earlier kernels are done. */
	s->busy_until_ns = MAX(s->busy_until_ns, now_ns()) + MAX(ns, 0);
	op.until_ns = s->busy_until_ns;
	enqueue(s, &op);
	kernel_faults(); /* the launch succeeds; the fault shows at the next call */
	pthread_mutex_unlock(&cpu.lock);
	/* As kernel.cu's wrappers: the thread's last error, an earlier call's too. */
	return cudaGetLastError();
}

cudaError_t
gs_cuda_fill(unsigned long long *words, unsigned long long n, unsigned long long seed,
	     cudaStream_t stream)
{
	Op op = {.kind = OP_FILL, .dst = words, .bytes = n * 8, .seed = seed};
	struct CUstream_st *s;

	if (!lock_cpu())
		return fail(why_not());
	s = stream_or_null(stream);
	require_device(words, n * 8, s, TRUE, "fill kernel");
	enqueue(s, &op);
	kernel_faults(); /* the launch succeeds; the fault shows at the next call */
	pthread_mutex_unlock(&cpu.lock);
	/* As kernel.cu's wrappers: the thread's last error, an earlier call's too. */
	return cudaGetLastError();
}

cudaError_t
gs_cuda_check(const unsigned long long *words, unsigned long long n, unsigned long long seed,
	      unsigned long long *mismatches, cudaStream_t stream)
{
	Op op = {.kind = OP_CHECK, .src = words, .bytes = n * 8, .seed = seed,
		 .counter = mismatches};
	struct CUstream_st *s;

	if (!lock_cpu())
		return fail(why_not());
	s = stream_or_null(stream);
	require_device(words, n * 8, s, TRUE, "check kernel");
	require_device(mismatches, sizeof *mismatches, s, TRUE, "check kernel");
	enqueue(s, &op);
	kernel_faults(); /* the launch succeeds; the fault shows at the next call */
	pthread_mutex_unlock(&cpu.lock);
	/* As kernel.cu's wrappers: the thread's last error, an earlier call's too. */
	return cudaGetLastError();
}

/* For tests: the next @n copies to or from pinned memory are "done" without moving a byte. */
void
gs_cuda_on_cpu_drop_copies(unsigned n)
{
	if (!lock_cpu())
		return;
	cpu.copies_to_drop = n;
	pthread_mutex_unlock(&cpu.lock);
}

/* For tests: the device faults now, as if a kernel had hit an illegal address. */
void
gs_cuda_on_cpu_fault(void)
{
	g_atomic_int_set(&cpu.fault, TRUE);
}

/* For tests: after @after more copies are queued, the next one is refused (cudaErrorInvalidValue). */
void
gs_cuda_on_cpu_refuse_copy(unsigned after)
{
	if (!lock_cpu())
		return;
	cpu.copies_to_failure = (gint) after;
	pthread_mutex_unlock(&cpu.lock);
}

/* For tests: pools made from now on reserve @bytes at a time (0: 2 MiB, as the runtime's). */
void
gs_cuda_on_cpu_set_pool_granule(size_t bytes)
{
	if (!lock_cpu())
		return;
	cpu.pool_granule = bytes > 0 ? bytes : POOL_GRANULE;
	pthread_mutex_unlock(&cpu.lock);
}

/* For tests: how many times a pool has reserved more device memory so far. */
unsigned long
gs_cuda_on_cpu_pool_grows(void)
{
	unsigned long n;

	if (!lock_cpu())
		return 0;
	n = cpu.pool_grows;
	pthread_mutex_unlock(&cpu.lock);
	return n;
}

/* For tests: the next synchronisation that would run a pattern check waits for a release. */
void
gs_cuda_on_cpu_hold_next_check(void)
{
	pthread_mutex_lock(&hold.lock);
	hold.state = HOLD_ARMED;
	pthread_mutex_unlock(&hold.lock);
}

/* For tests: waits until a synchronisation is held, at most @seconds; whether it is. */
int
gs_cuda_on_cpu_check_held(double seconds)
{
	struct timespec ts;
	int held;

	clock_gettime(CLOCK_REALTIME, &ts); /* the clock a default condition variable waits on */
	ts.tv_sec += (time_t) seconds;

	pthread_mutex_lock(&hold.lock);
	while (hold.state != HOLD_HOLDING &&
	       pthread_cond_timedwait(&hold.cond, &hold.lock, &ts) == 0)
		;
	held = hold.state == HOLD_HOLDING;
	pthread_mutex_unlock(&hold.lock);
	return held;
}

/* For tests: lets the held synchronisation go on. */
void
gs_cuda_on_cpu_release_check(void)
{
	pthread_mutex_lock(&hold.lock);
	hold.state = HOLD_RELEASED;
	pthread_cond_broadcast(&hold.cond);
	pthread_mutex_unlock(&hold.lock);
}
