/*
 * gpusim: a workload as plain data (the scenario format of SPEC §3, resolved).
 *
 * This module decides the shape of what the engine and the drivers replay:
 * memory and links, the policy, tasks with their threads and operations, pool
 * threads, generated-workload parameters and expectations. Every quantity is
 * already in base units (bytes, nanoseconds, bytes per second); every name a
 * scenario uses is resolved to an index. It is produced by the scenario loader
 * (which checks everything and reports file:line:column) or by code, and read
 * by the interpreter and the drivers; nothing here parses or prints.
 *
 * Ownership: a GsWorkload owns everything it points to; gs_workload_free()
 * releases it all. Arrays are GArray/GPtrArray so that their length travels
 * with them.
 */
#ifndef GPUSIM_WORKLOAD_H
#define GPUSIM_WORKLOAD_H

#include <gpusim/engine.h>

G_BEGIN_DECLS

/* ---- memory, links (SPEC §3.3) ---- */

/*
 * The largest size a workload may name, 1024 TiB: far above any GPU or host, and
 * far enough below 2^63 that every sum of sizes the drivers form (a tier over
 * its devices, what a task holds, a reservation grown by its factor, the
 * traffic totals) stays representable without a check at each addition.
 */
#define GS_MAX_BYTES (G_GINT64_CONSTANT(1) << 50)

/** @bytes times @factor (>= 0, or NaN), rounded down, and at most GS_MAX_BYTES. */
static inline gint64
gs_bytes_scaled(gint64 bytes, double factor)
{
	double v = (double) bytes * factor;

	if (!(v < (double) GS_MAX_BYTES))
		return v != v ? 0 : GS_MAX_BYTES;
	return v > 0 ? (gint64) v : 0;
}

/*
 * The most threads a run may hold: tasks' threads over all their copies,
 * generated ones and pool threads. Each keeps its state and result rows for
 * the whole run, so ten million is already gigabytes; the counts the drivers
 * form from it stay far below 2^32.
 */
#define GS_MAX_THREADS 10000000u

typedef enum {
	GS_ALLOCATOR_EXACT = 0, /* succeeds iff used + aligned size <= capacity */
	GS_ALLOCATOR_POOL = 1,  /* address space, best fit, coalescing: can fragment */
} GsAllocatorModel;

typedef struct {
	gint64 capacity;            /* bytes; required */
	guint devices;              /* GPU memory spaces GPU:0..n-1; default 1 */
	gint64 alignment;           /* default 256 */
	GsAllocatorModel allocator; /* default exact */
	double reservation_limit;   /* default 0.9 */
	double downgrade_trigger;   /* default 0.75 */
	double downgrade_stop;      /* default 0.65 */
	guint streams;              /* each device's stream pool (borrow_stream); default 16 */
} GsGpuMemory;

typedef struct {
	gint64 capacity;          /* default 4 GiB */
	gint64 block_size;        /* default 1 MiB */
	guint pool_blocks;        /* default 128 */
	guint initial_pools;      /* default 4 */
	double reservation_limit; /* default 0.9 */
	gint64 pinned;            /* the pinned pool beside it (PinnedMemoryPool); default 0 */
} GsHostMemory;

typedef struct {
	gint64 capacity; /* default 1 TiB */
	char *path;      /* default "/var/tmp" */
} GsDiskMemory;

/*
 * Spark's execution memory (memory.execution): the pools a task's
 * TaskMemoryManager asks for memory, one per memory mode, apart from the GPU
 * and the host tier.
 */
typedef enum { GS_MODE_ON_HEAP = 0, GS_MODE_OFF_HEAP = 1 } GsMemoryMode;
#define GS_N_MEMORY_MODES 2

typedef enum {
	GS_SHARE_FAIR = 0, /* ExecutionMemoryPool: each task between 1/2N and 1/N of its mode's pool */
	GS_SHARE_NONE = 1, /* one counter over both modes that grants what is free (Spark's
			      TestMemoryManager) */
} GsExecutionShare;

typedef struct {
	gint64 pool[GS_N_MEMORY_MODES]; /* on_heap, off_heap: bytes; default 0 */
	GsExecutionShare share;         /* default fair */
	gint64 page_size;               /* spark.buffer.pageSize; 0 (default): Spark's default */
	/*
	 * share fair is Spark's UnifiedMemoryManager: each mode's size is its
	 * unified region, of which storage starts with storage_fraction
	 * (spark.memory.storageFraction; default 0, so that execution starts
	 * with all of it) and evicts blocks as evict says (storage.h).
	 */
	double storage_fraction;
	int evict;                      /* GsEvictMode; default blocks */
} GsExecutionMemory;

typedef struct {
	double bandwidth; /* bytes per second; 0 = instantaneous */
	GsTime latency;
} GsLink;

typedef struct {
	GsLink gpu_host;      /* default 25 GB/s, 10 us */
	GsLink host_disk;     /* default 2 GB/s, 100 us */
	GsTime alloc_latency; /* default 1 us */
	/*
	 * Memory the process never touched, written for the first time (page
	 * faults included): a spilling run's granted allocation writes its
	 * bytes, and a copy lands in memory, at fresh.bandwidth (bytes per
	 * second; default 0: at once), when its size is at least fresh.from (a
	 * smaller one reuses memory freed before, the C library's heap;
	 * default 0: every size).
	 */
	struct {
		double bandwidth;
		gint64 from;
	} fresh;
	/*
	 * The host tier's new pools (memory.host.pool_blocks blocks each),
	 * pinned at host_pools.bandwidth (bytes per second; default 0: at
	 * once) by the allocation or the copy that made the tier grow, before
	 * it goes on, as cudaHostAlloc pins them for the CUDA backend.
	 */
	struct {
		double bandwidth;
	} host_pools;
	/*
	 * How many byte moves (a thread's copies, an allocation's first
	 * writes) run at their full rate at once; n > lanes of them each run
	 * at lanes / n of it, as copies on shared processors or one link do.
	 * Default 0: every one at its full rate.
	 */
	double lanes;
} GsLinks;

/* ---- policy (SPEC §3.4) ---- */

typedef enum {
	GS_OOM_FAIL = 0,  /* an allocation that cannot be met throws GpuOOM/CpuOOM */
	GS_OOM_BLOCK = 1, /* wait until memory is freed; no rollback */
	GS_OOM_RETRY = 2, /* the Spark-RAPIDS state machine (the engine) */
	GS_N_OOM_POLICIES
} GsOomPolicy;

typedef enum {
	GS_VICTIM_LRU = 0,
	GS_VICTIM_LARGEST,
	GS_VICTIM_SMALLEST_FIT,
	GS_VICTIM_PRIORITY,
} GsSpillVictim;

typedef enum { GS_HOST_FULL_DISK = 0, GS_HOST_FULL_FAIL = 1 } GsHostFull;
typedef enum { GS_OVER_IGNORE = 0, GS_OVER_FAIL, GS_OVER_INCREASE } GsOverReservation;
typedef enum { GS_ATTRIBUTION_ORIGIN = 0, GS_ATTRIBUTION_STREAM = 1 } GsAttribution;
/* How a blocking reservation waits (cuCascade's code, or its docs and SPEC §3.5). */
typedef enum { GS_BLOCK_ON_CHANNEL = 0, GS_BLOCK_FOR_WHOLE = 1 } GsReservationBlocking;
typedef enum { GS_ADMISSION_NONE = 0, GS_ADMISSION_FAIR_SHARE = 1 } GsAdmission;

typedef struct {
	GsOomPolicy oom;             /* default retry */
	GsPriorityMode priority;     /* default fifo */
	GsSplitVictim split_victim;  /* default highest */
	gboolean retry_before_bufn;  /* default true */
	guint retry_cap;             /* default 500 */
	GsTime watchdog;             /* default 100 ms; 0 = off */
	gboolean sleep_is_blocked;   /* default true */
	guint concurrent_gpu_tasks;  /* default 0 = unlimited */
	guint task_attempts;         /* default 1 */
	struct {
		gboolean enabled;    /* default false */
		GsSpillVictim victim;/* default lru */
		gboolean on_demand;  /* default true */
		gboolean proactive;  /* default false */
		GsHostFull host_full;/* default disk */
	} spill;
	struct {
		GsOverReservation over; /* default ignore */
		double increase_factor; /* default 1.25 */
		GsAttribution attribution; /* default origin */
		GsReservationBlocking blocking; /* default channel */
	} reservations;
	GsAdmission admission; /* default none */
	gboolean evac_gate;    /* default true */
	struct {
		gboolean enabled;  /* default false */
		gint64 allocate;   /* bytes it allocates and frees at each call; default 0 */
		guint retries;     /* it asks again while its retry count is below; default 0 */
	} failure_callback;        /* RMM's allocation failure callback (RmmEventHandler) */
} GsPolicy;

/* ---- operations (SPEC §3.5) ---- */

#define GS_OP_KIND_MAP(X)                               \
	X(ALLOC, "alloc")                               \
	X(FREE, "free")                                 \
	X(COMPUTE, "compute")                           \
	X(SYNC, "sync")                                 \
	X(SLEEP, "sleep")                               \
	X(UNTIL, "until")                               \
	X(SPILLABLE, "spillable")                       \
	X(UNSPILLABLE, "unspillable")                   \
	X(RETRY, "retry")                               \
	X(BLOCK_UNTIL_READY, "block_until_ready")       \
	X(RESERVE, "reserve")                           \
	X(RELEASE, "release")                           \
	X(SHUTDOWN_RESERVATIONS, "shutdown_reservations") \
	X(BORROW_STREAM, "borrow_stream")               \
	X(RETURN_STREAM, "return_stream")               \
	X(POOL, "pool")                                 \
	X(WAIT_ON_POOL, "wait_on_pool")                 \
	X(ASSOCIATE, "associate")                       \
	X(DISSOCIATE, "dissociate")                     \
	X(INJECT, "inject")                             \
	X(ACQUIRE_EXECUTION, "acquire_execution")       \
	X(RELEASE_EXECUTION, "release_execution")       \
	X(ALLOCATE_PAGE, "allocate_page")               \
	X(FREE_PAGE, "free_page")                       \
	X(CLEAN_UP, "clean_up")                         \
	X(ACQUIRE_STORAGE, "acquire_storage")           \
	X(RELEASE_STORAGE, "release_storage")           \
	X(RELEASE_ALL_STORAGE, "release_all_storage")   \
	X(REPEAT, "repeat")                             \
	X(TASK_DONE, "task_done")                       \
	X(VALUE, "value")                               \
	X(CHECKPOINT, "checkpoint")

typedef enum {
#define GS_X_ENUM(suffix, name) GS_OP_##suffix,
	GS_OP_KIND_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_OP_KINDS
} GsOpKind;

GS_API const char *gs_op_kind_name(GsOpKind kind);
/**
 * Whether @kind is one of Spark's task memory manager's ops or its memory
 * manager's storage ops (a task's threads only).
 */
GS_API gboolean gs_op_kind_is_execution(GsOpKind kind);

typedef enum {
	GS_SPLIT_HALVES = 0, /* split in two halves (SPEC §3.5.1) */
	GS_SPLIT_NONE = 1,   /* splitting forbidden: CouldNotSplit */
	GS_SPLIT_TARGET = 2, /* halve a target size, as splitTargetSizeInHalfGpu does */
	GS_SPLIT_TARGET_CPU = 3, /* the same, as splitTargetSizeInHalfCpu does */
} GsSplitMode;

/** Whether a retry block splitting as @mode halves a target size (split: target, target_cpu). */
#define GS_SPLIT_IS_TARGET(mode) ((mode) == GS_SPLIT_TARGET || (mode) == GS_SPLIT_TARGET_CPU)

typedef enum {
	GS_STRATEGY_ANY_IN_TIER = 0,
	GS_STRATEGY_SPECIFIC,
	GS_STRATEGY_ANY_IN_TIERS,
	GS_STRATEGY_DOWNGRADE,
} GsReserveStrategy;

typedef enum { GS_RESERVE_BLOCK = 0, GS_RESERVE_OR_NULL, GS_RESERVE_UPTO } GsReserveMode;

typedef enum { GS_TIER_GPU = 0, GS_TIER_HOST = 1, GS_TIER_DISK = 2 } GsTier;
#define GS_N_TIERS 3

typedef struct GsOp GsOp;

/*
 * A short list of indices into a thread's name table: the buffers a free, a
 * compute or a retry block names. Up to GS_NAMES_INLINE of them live in the
 * op itself, so that the interpreter reads a free without following a
 * pointer; a longer list moves to the heap. All zeroes is the empty list.
 */
#define GS_NAMES_INLINE 4

typedef struct {
	guint len;
	union {
		guint inline_names[GS_NAMES_INLINE]; /* len <= GS_NAMES_INLINE */
		guint *heap;                         /* longer: every index */
	};
} GsNames;

static inline const guint *
gs_names_data(const GsNames *names)
{
	return names->len <= GS_NAMES_INLINE ? names->inline_names : names->heap;
}

GS_API void gs_names_append(GsNames *names, guint index);
GS_API void gs_names_clear(GsNames *names);

/*
 * One operation. Buffers, streams and reservations are indices into the
 * owning thread's name tables (GsThreadSpec.buffers and friends), so that
 * each copy of a repeated task has its own.
 */
struct GsOp {
	GsOpKind kind;
	guint line, column; /* where the op was written (for messages), 0 if made by code */
	union {
		struct {
			guint buf;
			gint64 size;
			GsAllocKind kind;
			gboolean blocking;  /* host only may be FALSE */
			gboolean prefer_pinned; /* host only: the pinned pool first (HostAlloc's
						   preferPinned); default TRUE */
			gboolean spillable;
			gint reservation;   /* -1: none */
			guint device;
		} alloc;
		struct {
			GsNames bufs;
			/*
			 * free only: the thread whose buffers these are, by name, or
			 * NULL for the freeing thread's own; then @bufs index that
			 * thread's buffer names (another task's thread, or a pool
			 * thread, of a task that does not repeat)
			 */
			char *thread;
		} free;                     /* also spillable, unspillable (bufs) */
		struct {
			GsTime time;
			GsNames uses;       /* buffers */
			gint stream;        /* -1: synchronous */
		} compute;
		guint stream;               /* sync, return_stream */
		struct {
			guint stream;
			gboolean grow;      /* GROW: a new stream when none is idle; else BLOCK */
			guint device;
		} borrow;                   /* borrow_stream */
		GsTime time;                /* sleep: duration; until: scenario time */
		struct {
			GsSplitMode split;
			guint max_splits;   /* default 16; halves only */
			/* split: target, target_cpu (AutoCloseableTargetSize): the
			   first attempt's target, the least a split may leave, and the
			   data's own size (0: unknown) */
			gint64 target, min_target, data;
			GsNames input;      /* buffers made spillable during the block */
			GsNames restore;    /* values put back to their checkpoints when a
					       retry OOM leaves the block's ops
					       (withRestoreOnRetry) */
			GArray *ops;        /* GsOp */
		} retry;
		struct {
			guint res;
			gint64 size;
			GsTier tier;
			GsReserveStrategy strategy;
			GsReserveMode mode;
			guint device;
			GArray *tiers;      /* GsTier, any_in_tiers */
			GsTier from, to;    /* downgrade */
		} reserve;
		guint res;                  /* release */
		struct {
			GArray *tasks;      /* guint task indices; associate, dissociate: one */
			gboolean done;      /* done_for instead of work_for */
		} pool;                     /* pool, associate, dissociate */
		gboolean wait_on_pool;
		struct {
			int retry_oom, split_oom, cudf_exception, skip;
			GsKindFilter kind;
		} inject;
		struct {
			guint times;
			GArray *ops;        /* GsOp */
		} repeat;
		struct {
			guint name;         /* the thread's value */
			gint64 amount;      /* added to it, or what it becomes */
			gboolean set;
		} value;
		GsNames checkpoint;         /* the values whose checkpoints it takes */
		struct {
			gint consumer;      /* the thread's consumer; -1: none (a null consumer) */
			GsMemoryMode mode;  /* the consumer's mode; without a consumer, the mode asked */
			gint64 bytes;       /* acquired, released, or the page's size */
			guint page;         /* allocate_page, free_page: the thread's page name */
			char *block;        /* acquire_storage: the block's id (owned) */
		} execution;                /* acquire_execution, release_execution,
					       allocate_page, free_page, and the
					       storage ops (mode, bytes, block) */
	};
};

typedef enum {
	GS_ON_OOM_FAIL = 0,     /* an unhandled exception ends the task attempt */
	GS_ON_OOM_CONTINUE = 1, /* it is recorded and the thread goes on */
} GsOnOom;

typedef struct {
	char *name;        /* "A.0" unless given */
	GsOnOom on_oom;
	gboolean shuffle;  /* pool threads */
	GArray *ops;       /* GsOp */
	GPtrArray *buffers;     /* char*: names, indexed by GsOp buffer indices */
	GPtrArray *streams;     /* char* */
	GPtrArray *reservations;/* char* */
	GPtrArray *consumers;   /* char*: Spark memory consumers of its task */
	GArray *consumer_modes; /* GsMemoryMode, by consumer index */
	GPtrArray *pages;       /* char*: pages allocated by its consumers */
	/*
	 * char*: its values (values:), state of its own that its value ops
	 * change and that a retry block may put back to a checkpoint, as a
	 * Retryable's; value_starts holds each one's first value (gint64),
	 * which is also its first checkpoint
	 */
	GPtrArray *values;
	GArray *value_starts;
	/*
	 * gboolean by buffer name: another thread frees it (a free naming this
	 * thread), so it outlives this thread instead of being handed back when
	 * the thread ends; NULL when none is
	 */
	GArray *given_away;
} GsThreadSpec;

typedef struct {
	char *id;            /* as written; copies of a repeated task get "#k" */
	GsTime start;
	guint priority;      /* explicit rank, 1 = highest; 0 = by policy.priority */
	guint repeat;        /* 1 unless given */
	GsTime every;
	GPtrArray *threads;  /* GsThreadSpec*, dedicated */
	guint line, column;
} GsTaskSpec;

/* ---- generated workloads (SPEC §3.7) ---- */

/* Which rules make the tasks (generate.model). */
typedef enum {
	GS_GENERATE_GPUSIM = 0,     /* gpusim's own, in the spirit of RmmSparkMonteCarlo (generate.h) */
	GS_GENERATE_MONTECARLO = 1, /* RmmSparkMonteCarlo's rules (montecarlo.h) */
} GsGenerateModel;

/*
 * How model montecarlo varies a templated task's allocation of size s by a
 * draw d uniform in (-template_change, template_change].
 */
typedef enum {
	GS_TEMPLATE_INTENDED = 0, /* s x (1 + d): what the tool's --help describes */
	GS_TEMPLATE_CODE = 1,     /* s x d: what its AllocOp.randomMod computes */
} GsTemplateArithmetic;

typedef struct {
	gboolean enabled;
	GsGenerateModel model;  /* default gpusim */
	guint tasks;
	guint threads_per_task;
	gint64 task_max;
	guint max_allocs;
	GsTime max_compute;
	gboolean retry_blocks;
	guint skew_tasks;
	double skew_factor;
	double jitter;
	guint shuffle_threads;
	/* model montecarlo only */
	gboolean use_template;  /* --useTemplate (skew_tasks > 0 implies it) */
	double template_change; /* --templateChangeAmount, >= 0 */
	GsTemplateArithmetic template_arithmetic; /* default intended */
} GsGenerate;

/* ---- expectations (SPEC §3.8) ---- */

typedef enum { GS_CMP_EQ = 0, GS_CMP_NE, GS_CMP_LT, GS_CMP_LE, GS_CMP_GT, GS_CMP_GE } GsCmpOp;

/** "<= 2s" resolved: the operator and the value in base units. */
typedef struct {
	GsCmpOp op;
	gint64 value;
} GsCmp;

GS_API gboolean gs_cmp_holds(GsCmp cmp, gint64 observed);
GS_API const char *gs_cmp_op_text(GsCmpOp op);

typedef struct {
	char *key;   /* "outcome", "makespan", "totals.retries", "tasks.B.splits", ... */
	char *text;  /* the outcome word for outcome keys, else NULL */
	GsCmp cmp;   /* for numeric keys */
	guint line, column;
} GsExpectValue;

/* A value of a thread at its end (threads.NAME.values). */
typedef struct {
	char *name;
	gint64 start;  /* what it holds before any value op: its values: entry */
	GsCmp cmp;
	guint line, column;
} GsExpectThreadValue;

typedef struct {
	char *thread;
	GArray *reached;   /* GsThreadState */
	GArray *threw;     /* GsException, exact sequence; NULL if not checked */
	GArray *never_in;  /* GsThreadState the thread must never have entered; NULL: none */
	GArray *never_threw; /* GsException it must never have thrown, handled or not; NULL: none */
	GArray *acquired;  /* gint64: acquire_execution's grants, exact sequence; NULL: not checked */
	GArray *pages;     /* gint64: allocate_page's page numbers, exact sequence; NULL: not checked */
	GArray *leaked;    /* gint64: clean_up's leaked bytes, exact sequence; NULL: not checked */
	GArray *values;    /* GsExpectThreadValue: its values at its end; NULL: not checked */
	GArray *stored;    /* gint64 1 or 0: acquire_storage's answers, exact sequence; NULL: not
			      checked */
	gboolean has_final_state;
	GsThreadState final_state;
	guint line, column;
} GsExpectThread;

/*
 * What an expect.at row reads of a tier, its spaces together: used and
 * charged bytes, or cuCascade's get_available_memory() (capacity less
 * charged), get_max_memory() (the reservation limit),
 * get_peak_total_allocated_bytes() (the highest charged so far),
 * get_total_reserved_bytes() (what the held reservations hold) and
 * get_active_reservation_count() (how many are held, a count); of the
 * host, the bytes in use in the pinned pool and beside it.
 */
typedef enum {
	GS_MEASURE_USED = 0,
	GS_MEASURE_CHARGED,
	GS_MEASURE_AVAILABLE,
	GS_MEASURE_MAX_MEMORY,
	GS_MEASURE_PEAK_CHARGED,
	GS_MEASURE_RESERVED,
	GS_MEASURE_RESERVATIONS,
	GS_MEASURE_PINNED,     /* the host's pinned pool, in use */
	GS_MEASURE_NON_PINNED, /* the host's memory beside it, in use */
} GsTierMeasure;

/* Whether @m reads one of the host's two pools (memory.host.pinned). */
static inline gboolean
gs_tier_measure_is_pool(GsTierMeasure m)
{
	return m == GS_MEASURE_PINNED || m == GS_MEASURE_NON_PINNED;
}

/*
 * What an expect.at row reads of a thread's reservation, cuCascade's view
 * of the stream it is attached to: its size, get_allocated_bytes(),
 * get_peak_allocated_bytes(), get_available_memory(stream) (the space's
 * available memory and what is left in the reservation) and its device.
 */
typedef enum {
	GS_RES_SIZE = 0,
	GS_RES_ALLOCATED,
	GS_RES_PEAK,
	GS_RES_AVAILABLE,
	GS_RES_DEVICE,
} GsReservationMeasure;

typedef struct {
	GsTime time;
	char *thread;      /* a thread's state at that time, or NULL */
	char *task;        /* with has_tier, execution or consumer: whose bytes, or NULL */
	char *consumer;    /* that consumer's used bytes (with task), or NULL */
	gboolean execution; /* the task's execution memory (with task) */
	/* with task: its counts in (since, time] (RmmSpark's getAndReset metrics) */
	GsTime since;      /* 0: from the start */
	gboolean has_retries, has_splits, has_max_gpu, has_lost;
	GsCmp retries, splits, max_gpu, lost; /* lost: ns of running time thrown away */
	GsThreadState state;
	char *reservation; /* with thread: that reservation of the thread's, or NULL */
	GsReservationMeasure res_measure;
	/*
	 * A memory manager's pool (Spark's storageMemoryUsed and the like):
	 * storage or execution, one mode or both together (all_modes), its used
	 * or free bytes in bytes; with since, the evictions in (since, time]:
	 * what evictBlocksToFreeSpace was asked to free and what it evicted.
	 */
	gboolean has_pool, pool_storage, pool_free, all_modes;
	GsMemoryMode mode;
	gboolean has_evict_asked, has_evicted;
	GsCmp evict_asked, evicted;
	gboolean has_tier; /* a tier's bytes: used, charged, available or max_memory */
	GsTier tier;
	GsTierMeasure measure;
	GsCmp bytes;
	guint line, column;
} GsExpectAt;

typedef struct {
	GPtrArray *values;  /* GsExpectValue*: outcome, makespan, totals.*, tasks.ID.* */
	GPtrArray *threads; /* GsExpectThread* */
	GPtrArray *at;      /* GsExpectAt* */
} GsExpect;

/* ---- tasks made as they start ---- */

/*
 * The maker of a generated workload's tasks. The tasks of w->tasks from
 * `first` on are shells (their id, start and repeat; no threads) until
 * gs_workload_make_task() has them made, and a run that is done with one
 * drops its threads again (gs_workload_drop_task()), so that a run holds
 * the ops of the tasks it runs rather than those of every task. The maker
 * makes them in task order, each from where the one before left its random
 * draws: a task wanted again after it was dropped is made anew by a rewind
 * to the first. A task it made has at least one thread. Until its tasks are
 * made, a pass over the workload's ops sees none of theirs, so a maker makes
 * no op that such a pass looks for: no free naming another thread, no
 * reservation, execution memory or host allocation.
 */
typedef struct GsTaskMaker GsTaskMaker;
struct GsTaskMaker {
	guint first; /* the first task of w->tasks it makes */
	guint next;  /* the task whose draws come next */
	/* Makes task @nth (from 0 at first) into @task, or only draws past it when @task is NULL. */
	void (*make)(GsTaskMaker *maker, GsTaskSpec *task, guint nth);
	void (*rewind)(GsTaskMaker *maker); /* back to the draws of the first task */
	void (*free)(GsTaskMaker *maker);
};

/* ---- the workload ---- */

typedef struct {
	char *name;
	char *description;
	char *file;          /* the scenario file, or NULL */
	char *variant;       /* the variant applied, or NULL */
	guint64 seed;        /* default 1 */
	GsGpuMemory gpu;
	GsHostMemory host;
	GsDiskMemory disk;
	GsExecutionMemory execution;
	GsLinks links;
	guint executor_slots; /* 0 = unlimited */
	GsPolicy policy;
	GPtrArray *tasks;        /* GsTaskSpec* */
	GPtrArray *pool_threads; /* GsThreadSpec* */
	GsGenerate generate;
	GsExpect expect;
	GPtrArray *variant_names; /* char*, in the order written */
	GsTaskMaker *maker;       /* makes the generated tasks' threads; NULL: all are there */
	GArray *schedule;         /* guint: the choices the simulator takes where an executor
				     could take another order (explore); empty: the default order */
	double schedule_jitter;   /* in [0, 1]: a schedule may make each allocation attempt and
				     each wait for copies this much shorter or longer; 0: none */
} GsWorkload;

/** A workload with every default of SPEC §3 and no tasks. */
GS_API GsWorkload *gs_workload_new(void);
GS_API void gs_workload_free(GsWorkload *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsWorkload, gs_workload_free)

/** The policy defaults of SPEC §3.4. */
GS_API void gs_policy_init(GsPolicy *policy);
/** The engine options a policy implies. */
GS_API GsEngineOpts gs_policy_engine_opts(const GsPolicy *policy);

/** The OOM policies' names, by GsOomPolicy, then NULL: "fail", "block", "retry". */
GS_API extern const char *const gs_oom_policy_names[GS_N_OOM_POLICIES + 1];

/** Releases what an op owns (nested ops included), not the op itself. */
GS_API void gs_op_clear(GsOp *op);
GS_API GsThreadSpec *gs_thread_spec_new(const char *name);
GS_API void gs_thread_spec_free(GsThreadSpec *thread);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsThreadSpec, gs_thread_spec_free)
/** The index of a name in a table, appending it if new. */
GS_API guint gs_name_index(GPtrArray *names, const char *name);

/* ---- what every driver derives from a task the same way ---- */

/** The id of copy @copy of @task: "A" when it is not repeated, else "A#2". */
GS_API char *gs_task_copy_id(const GsTaskSpec *task, guint copy);

/**
 * The name of @thread in the copy @copy_id ("A#2") of @task: a task that is
 * not repeated keeps the name; in a copy, A.0 becomes A#2.0 and any other
 * name gets the "#2" suffix.
 */
GS_API char *gs_task_thread_name(const GsTaskSpec *task, const char *copy_id,
				 const GsThreadSpec *thread);

/* Explicit ranks sit above every task ranked by the policy. */
#define GS_POLICY_PRIORITY_TOP (G_MAXINT64 - ((gint64) 1 << 32))

/**
 * A task's priority value as it starts (gs_task_priorities_set(); the
 * plugin asks TaskPriority at task start): an explicit rank r gives
 * G_MAXINT64 - r; otherwise task_id ranks by @id_rank (see
 * gs_workload_id_ranks()) and fifo by @started, the tasks started before it
 * (a re-attempt starts anew, behind).
 */
GS_API gint64 gs_task_start_priority(const GsTaskSpec *task, GsPriorityMode mode, guint id_rank,
				     guint started);

/**
 * policy.priority task_id: the rank of every task copy, in file order with a
 * repeated task's copies after it (guint, 0 = highest). A smaller id ranks
 * higher: ids written as integers compare as numbers; when any id is not an
 * integer, tasks rank by their place in the file; copies rank in copy order.
 */
GS_API GArray *gs_workload_id_ranks(const GsWorkload *w);

/**
 * The thread named @name (a task's thread as written, or a pool thread), or
 * NULL; *@task (unless @task is NULL) its task, NULL for a pool thread.
 */
GS_API GsThreadSpec *gs_workload_thread(const GsWorkload *w, const char *name,
					const GsTaskSpec **task);

/**
 * Task @index of @w gets its threads if its maker has yet to make them (or
 * dropped them); tasks that were there from the start have theirs already.
 * A workload's tasks are made by one run at a time.
 */
GS_API void gs_workload_make_task(const GsWorkload *w, guint index);

/** A run is done with task @index of @w: a made task's threads go, to be made anew if wanted. */
GS_API void gs_workload_drop_task(const GsWorkload *w, guint index);

/** Whether a thread of @w frees another thread's buffers (a free op naming a thread). */
GS_API gboolean gs_workload_frees_across_threads(const GsWorkload *w);
GS_API GsTaskSpec *gs_task_spec_new(const char *id);
GS_API void gs_task_spec_free(GsTaskSpec *task);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsTaskSpec, gs_task_spec_free)

G_END_DECLS

#endif /* GPUSIM_WORKLOAD_H */
