/*
 * gpusim: task memory pages, spilling memory consumers and fair-share
 * admission (Apache Spark's TaskMemoryManager, MemoryConsumer and
 * ExecutionMemoryPool; reference tiers-spill-pages-evac.md §C).
 *
 * This module decides four things, each with Spark's exact arithmetic:
 *  1. Addresses and page numbers (§C.1, §C.2). A task owns a page table of
 *     8192 slots; an address is (page number << 51) | offset, with the page
 *     number in the top 13 bits and the offset in the low 51. A new page takes
 *     the lowest free number (Spark's allocatedPages.nextClearBit(0)), so
 *     freed numbers are reused lowest first. A page larger than
 *     GS_PAGE_MAX_BYTES, a grant of 0 bytes and the 8193rd concurrent page are
 *     refused with a result code, in that order of checks, as Spark does.
 *     With the debug switch on, page memory handed in by the caller is filled
 *     with 0xa5 when the page is allocated and 0x5a when it is freed. At task
 *     end the table reports the pages still allocated (the leak) and frees
 *     them (§C.2 cleanUpAllAllocatedMemory).
 *  2. Whom to ask to spill (§C.3, §C.4). Among the task's consumers that hold
 *     memory and may spill, the one asked first is the smallest whose usage
 *     covers what is still needed, else the largest; the requester counts as
 *     using 0 bytes so it is always asked last; equal usages are tried from
 *     the last one listed. Usages are a snapshot taken once per request
 *     (Spark keys its TreeMap once), so a consumer that released something
 *     keeps its place and may be asked again with what is still needed; a
 *     consumer that released nothing is dropped.
 *  3. The default page size (§C.7): nextPowerOf2(pool / cores / 16) clamped to
 *     [1 MiB, 64 MiB], less the long[] header for on-heap G1.
 *  4. Fair share (§C.5). With N tasks registered in a pool, a task may hold up
 *     to maxPoolSize / N; one that cannot have all it asks for and would still
 *     be below poolSize / (2N) with what it can have waits instead of taking
 *     it. gs_fair_share_decide() is the pure rule; GsExecutionPool
 *     keeps the task -> bytes map and applies it, with Spark's registration on
 *     every pass and its clamped releases that drop a task at 0.
 *
 * What it leaves to callers: actually waiting (a must_wait verdict changes
 * nothing but the registration; the caller retries after the next release),
 * owning and freeing page memory (the table only records the pointer and fills
 * it in debug mode), acquiring execution memory before allocating a page (the
 * size handed to gs_page_table_allocate() is the grant), performing spills
 * (a callback), growing a unified pool by evicting storage, and the memory
 * mode split (callers keep one table or pool per mode and mark consumers of
 * the other mode as unable to spill). Nothing here waits, reads time, logs to
 * a stream or touches a device; the only memory written that the module does
 * not own is the debug fill of pages the caller passes in.
 *
 * Invariants of a GsPageTable: a page number is allocated iff its bit is set;
 * count and held bytes are the number and the sum of sizes of allocated pages;
 * 0 <= count <= GS_PAGE_TABLE_SIZE.
 */
#ifndef GPUSIM_PAGES_H
#define GPUSIM_PAGES_H

#include <gpusim/types.h>

G_BEGIN_DECLS

/* ---- Address encoding (§C.1) ---- */

/** Bits of an address that hold the page number (Spark's PAGE_NUMBER_BITS). */
#define GS_PAGE_NUMBER_BITS 13
/** Bits that hold the offset within the page: 64 - 13 (OFFSET_BITS). */
#define GS_PAGE_OFFSET_BITS 51
/** Slots in a task's page table: 2^13 (PAGE_TABLE_SIZE). */
#define GS_PAGE_TABLE_SIZE 8192u
/** The low 51 bits of an address: 0x7FFFFFFFFFFFF (MASK_LONG_LOWER_51_BITS). */
#define GS_PAGE_OFFSET_MASK G_GUINT64_CONSTANT(0x7FFFFFFFFFFFF)
/**
 * The largest page: (2^31 - 1) x 8 = 17,179,869,176 bytes, the most a Java
 * long[] can hold (MAXIMUM_PAGE_SIZE_BYTES). Offsets could address far more;
 * the array, not the encoding, sets the limit.
 */
#define GS_PAGE_MAX_BYTES (((G_GINT64_CONSTANT(1) << 31) - 1) * 8)

/** MemoryAllocator's debug fill values (jemalloc's). */
#define GS_PAGE_FILL_ALLOCATED 0xa5
#define GS_PAGE_FILL_FREED 0x5a

/**
 * The address of @offset within page @page_number:
 * (page_number << 51) | (offset & GS_PAGE_OFFSET_MASK), as
 * encodePageNumberAndOffset. Offset bits above the mask are dropped, as Spark
 * drops them. A page number >= GS_PAGE_TABLE_SIZE is a programming error.
 */
GS_API guint64 gs_page_encode(guint page_number, guint64 offset);

/** The page number of an address: addr >> 51, unsigned (decodePageNumber). */
GS_API guint gs_page_decode_number(guint64 addr);

/** The offset of an address: addr & GS_PAGE_OFFSET_MASK (decodeOffset). */
GS_API guint64 gs_page_decode_offset(guint64 addr);

/* ---- Default page size (§C.7) ---- */

#define GS_PAGE_MIN_DEFAULT_BYTES (G_GINT64_CONSTANT(1) << 20)
#define GS_PAGE_MAX_DEFAULT_BYTES (G_GINT64_CONSTANT(64) << 20)
/** Platform.LONG_ARRAY_OFFSET on typical JVMs: the header subtracted for on-heap G1. */
#define GS_PAGE_LONG_ARRAY_OFFSET 16

/**
 * spark.buffer.pageSize when unset: nextPowerOf2(@pool_bytes / @cores / 16)
 * clamped to [1 MiB, 64 MiB], minus @array_header (pass
 * GS_PAGE_LONG_ARRAY_OFFSET for on-heap Tungsten memory under G1, else 0).
 * @pool_bytes is the execution pool size of the Tungsten memory mode; @cores
 * must be > 0 (Spark asks the JVM when it is 0; a pure core cannot).
 */
GS_API gint64 gs_page_default_size(gint64 pool_bytes, guint cores, gint64 array_header);

/* ---- Page table (§C.2) ---- */

/*
 * Outcomes of page table calls. Columns: constant suffix, name. Only OK
 * changes the table.
 */
#define GS_PAGE_RESULT_MAP(X)                                                  \
	X(OK, "ok")                                                            \
	X(TOO_LARGE, "too-large")         /* TooLargePageException */          \
	X(NO_MEMORY, "no-memory")         /* a grant of 0: Spark's null */     \
	X(TABLE_FULL, "table-full")       /* "... a maximum of 8192 pages" */  \
	X(NOT_ALLOCATED, "not-allocated") /* free of a free or unknown page */

typedef enum {
#define GS_X_ENUM(suffix, name) GS_PAGE_##suffix,
	GS_PAGE_RESULT_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_PAGE_N_RESULTS
} GsPageResult;

/** The result's name, e.g. "table-full". */
GS_API const char *gs_page_result_name(GsPageResult result);

/** One allocated page, as lookups and leak reports describe it. */
typedef struct {
	guint number;    /* 0 .. GS_PAGE_TABLE_SIZE - 1 */
	gint64 size;     /* bytes */
	gpointer memory; /* the caller's memory, NULL for simulated pages; not owned */
} GsPageInfo;

typedef struct GsPageTable GsPageTable;

/** An empty table with the debug fill off. */
GS_API GsPageTable *gs_page_table_new(void);
/** Frees the table, not the pages' memory; allocated pages are simply forgotten. */
GS_API void gs_page_table_free(GsPageTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsPageTable, gs_page_table_free)

/** Turns the 0xa5 / 0x5a debug fill on or off (spark.memory.debugFill). */
GS_API void gs_page_table_set_debug_fill(GsPageTable *table, gboolean on);
GS_API gboolean gs_page_table_get_debug_fill(const GsPageTable *table);

/**
 * Records a page of @size bytes under the lowest free page number and stores
 * that number in @number_out (may be NULL). @size is what the pool granted;
 * the size check is against GS_PAGE_MAX_BYTES. @memory, if not NULL, is the
 * page's memory, at least @size bytes, which must stay valid until the page
 * is freed; with the debug fill on it is filled with 0xa5 now and with 0x5a
 * when the page is freed.
 *
 * Returns GS_PAGE_OK; GS_PAGE_TOO_LARGE if @size > GS_PAGE_MAX_BYTES;
 * GS_PAGE_NO_MEMORY if @size is 0; GS_PAGE_TABLE_FULL if all 8192 numbers are
 * taken (the caller gives the grant back, as Spark releases it). On failure
 * the table and @memory are untouched.
 */
GS_API GsPageResult gs_page_table_allocate(GsPageTable *table, gint64 size, gpointer memory,
					   guint *number_out);

/**
 * Frees page @number; its size goes to @size_out (may be NULL) so that the
 * caller can release that much execution memory. The number becomes free for
 * reuse. GS_PAGE_NOT_ALLOCATED (and nothing changes) for a double free or a
 * number the table never gave out.
 */
GS_API GsPageResult gs_page_table_free_page(GsPageTable *table, guint number, gint64 *size_out);

/** Fills @info (may be NULL) with page @number; FALSE if it is not allocated. */
GS_API gboolean gs_page_table_lookup(const GsPageTable *table, guint number, GsPageInfo *info);

/**
 * getPage / getOffsetInPage: decodes @addr, fills @info (may be NULL) with its
 * page and @offset (may be NULL) with its offset. FALSE if the page is not
 * allocated. Offsets are not checked against the page size (nor does Spark).
 */
GS_API gboolean gs_page_table_resolve(const GsPageTable *table, guint64 addr, GsPageInfo *info,
				      guint64 *offset);

/** Pages allocated now. */
GS_API guint gs_page_table_count(const GsPageTable *table);
/** Bytes held by the allocated pages now. */
GS_API gint64 gs_page_table_get_bytes(const GsPageTable *table);
/** The most bytes held at once since the table was made. */
GS_API gint64 gs_page_table_get_peak_bytes(const GsPageTable *table);

/**
 * The leak report: appends to @leaks (a GArray of GsPageInfo; may be NULL)
 * every page still allocated, in page-number order, and returns their total
 * bytes. Changes nothing.
 */
GS_API gint64 gs_page_table_leaks(const GsPageTable *table, GArray *leaks);

/**
 * Task end (cleanUpAllAllocatedMemory): reports as gs_page_table_leaks(),
 * then frees every page (with the debug fill if on). Returns the leaked
 * bytes: non-zero means the task leaked.
 */
GS_API gint64 gs_page_table_clean_up(GsPageTable *table, GArray *leaks);

/* ---- Memory consumers (§C.3, §C.4) ---- */

/** A consumer's identity within its task; chosen by the caller. */
typedef guint64 GsConsumerId;

/** What the spill choice needs to know of one consumer. */
typedef struct {
	GsConsumerId id;
	gint64 used;        /* bytes it holds; 0 keeps it out of the choice */
	gboolean can_spill; /* FALSE keeps it out (another memory mode, or dropped) */
} GsConsumerView;

/**
 * The page a consumer asks the task for: max(@page_size, @required)
 * (MemoryConsumer.allocatePage). A grant below @required is the consumer's OOM.
 */
GS_API gint64 gs_consumer_page_request(gint64 page_size, gint64 required);

/**
 * Whom to ask to spill next, as an index into @consumers, or -1 if nobody is
 * left or @needed <= 0. Candidates are consumers with can_spill and used > 0;
 * each is keyed by its used bytes except @requester, keyed 0. The choice is
 * the smallest key >= @needed (ceilingEntry), else the largest key; among
 * equal keys the one listed last (Spark tries the last element of a key's
 * list first; its lists follow a hash set's order, ours the array's).
 */
GS_API gint gs_consumer_pick_spill(const GsConsumerView *consumers, guint n_consumers,
				   GsConsumerId requester, gint64 needed);

/**
 * Asks consumer @consumer to spill (MemoryConsumer.spill(size, trigger)):
 * @size is what the requester still needs, @trigger the requester. Returns the
 * bytes released; <= 0 means nothing, and the consumer is not asked again.
 */
typedef gint64 (*GsSpillFunc)(GsConsumerId consumer, gint64 size, GsConsumerId trigger,
			      gpointer user_data);

/**
 * After a spill released @released bytes, asks the pool again for @bytes (what
 * is still needed) and returns the grant, 0 .. @bytes. Another task may have
 * taken the freed memory first (SPARK-35486), so the grant may be short.
 */
typedef gint64 (*GsReacquireFunc)(gint64 bytes, gint64 released, gpointer user_data);

/** One call of the spill loop, in order. */
typedef struct {
	GsConsumerId consumer;
	gint64 asked;    /* what was still needed when it was asked */
	gint64 released; /* what it released (after clamping) */
	gint64 acquired; /* what the pool then granted (0 when nothing was released) */
} GsSpillCall;

typedef struct {
	gint64 got;      /* bytes held for the requester at the end; may be < required */
	gint64 released; /* bytes released by all spills together */
	guint n_calls;   /* spill calls made */
} GsSpillOutcome;

/**
 * The spill loop of acquireExecutionMemory, after the pool first granted @got
 * of @required: while got < required and a candidate is left, picks one with
 * gs_consumer_pick_spill() over a snapshot of @consumers, calls @spill with
 * required - got; if it released something, got += the regrant from
 * @reacquire (NULL: min(released, still needed), the pool as if no other task
 * competed); if it released nothing, drops it. Appends every call to @calls
 * (a GArray of GsSpillCall; may be NULL).
 *
 * Since spill() may not acquire memory and the task's other consumers are
 * held off by the TaskMemoryManager lock, a consumer can never release more
 * than it held at the start less what it already released in this loop; a
 * larger claim is clamped to that, which also guarantees the loop ends.
 */
GS_API GsSpillOutcome gs_consumer_spill_loop(const GsConsumerView *consumers, guint n_consumers,
					     GsConsumerId requester, gint64 required, gint64 got,
					     GsSpillFunc spill, GsReacquireFunc reacquire,
					     gpointer user_data, GArray *calls);

/* ---- Fair share (§C.5) ---- */

/** The inputs of one pass of ExecutionMemoryPool.acquireMemory. */
typedef struct {
	gint64 num_bytes;     /* asked for, > 0 */
	gint64 task_bytes;    /* curMem: what the task holds in this pool */
	guint n_tasks;        /* tasks in the pool's map, this one included, >= 1 */
	gint64 pool_size;     /* poolSize now (after any growth) */
	gint64 max_pool_size; /* computeMaxPoolSize(); = pool_size for a static pool */
	gint64 memory_free;   /* poolSize - bytes held by all tasks, >= 0 */
} GsFairShareRequest;

typedef struct {
	gint64 granted;      /* toGrant; 0 when must_wait */
	gboolean must_wait;  /* below 1/2N even with the grant: wait for a release */
	gint64 max_per_task; /* max_pool_size / N */
	gint64 min_per_task; /* pool_size / (2N) */
} GsFairShareGrant;

/**
 * One pass of the rule, integer division throughout:
 *   maxPerTask = max_pool_size / N;  minPerTask = pool_size / (2N);
 *   maxToGrant = min(num_bytes, max(0, maxPerTask - task_bytes));
 *   toGrant    = min(maxToGrant, memory_free);
 *   must_wait  = toGrant < num_bytes && task_bytes + toGrant < minPerTask;
 * otherwise toGrant (possibly 0) is granted.
 */
GS_API GsFairShareGrant gs_fair_share_decide(const GsFairShareRequest *req);

/** An execution pool: the task -> bytes map and the rule above applied to it. */
typedef struct GsExecutionPool GsExecutionPool;

/** A pool of @pool_size bytes whose maximum size is the same. */
GS_API GsExecutionPool *gs_execution_pool_new(gint64 pool_size);
GS_API void gs_execution_pool_free(GsExecutionPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsExecutionPool, gs_execution_pool_free)

/**
 * Resizes the pool (the unified manager's growth and shrinkage) and sets what
 * computeMaxPoolSize() returns. @pool_size may not drop below the bytes held.
 */
GS_API void gs_execution_pool_set_size(GsExecutionPool *pool, gint64 pool_size,
				       gint64 max_pool_size);

/**
 * One pass of acquireMemory for @task: registers the task with 0 bytes if it
 * is not in the map (on every pass, as the newest Spark does), then applies
 * gs_fair_share_decide(). Unless must_wait, the grant is added to the task.
 * On must_wait the caller waits for a release and calls again.
 */
GS_API GsFairShareGrant gs_execution_pool_acquire(GsExecutionPool *pool, GsTaskId task,
						  gint64 num_bytes);

/**
 * All or nothing, as an allocator that cannot take part of a request uses
 * the pool: TRUE when one pass grants all @num_bytes to @task (added to it);
 * otherwise any partial grant is released again and FALSE says the
 * allocation fails (an OOM for the caller's state machine). 0 bytes need no
 * share and are always granted.
 */
GS_API gboolean gs_execution_pool_acquire_all(GsExecutionPool *pool, GsTaskId task,
					      gint64 num_bytes);

/**
 * releaseMemory: releases min(@bytes, held) and returns it; a task left with
 * <= 0 bytes leaves the map (even a registered task at 0 that releases 0).
 */
GS_API gint64 gs_execution_pool_release(GsExecutionPool *pool, GsTaskId task, gint64 bytes);

/** releaseAllMemoryForTask: releases everything the task holds and returns it. */
GS_API gint64 gs_execution_pool_release_all(GsExecutionPool *pool, GsTaskId task);

/** Bytes @task holds, 0 if it is not in the map. */
GS_API gint64 gs_execution_pool_get_task_bytes(const GsExecutionPool *pool, GsTaskId task);
/** TRUE if @task is in the map (holding bytes or registered by a pass). */
GS_API gboolean gs_execution_pool_has_task(const GsExecutionPool *pool, GsTaskId task);
/** N: tasks in the map. */
GS_API guint gs_execution_pool_n_tasks(const GsExecutionPool *pool);
GS_API gint64 gs_execution_pool_get_size(const GsExecutionPool *pool);
GS_API gint64 gs_execution_pool_get_used(const GsExecutionPool *pool);
GS_API gint64 gs_execution_pool_get_free(const GsExecutionPool *pool);

G_END_DECLS

#endif /* GPUSIM_PAGES_H */
