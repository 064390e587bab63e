/*
 * gpusim: storage memory beside execution memory (Apache Spark's
 * UnifiedMemoryManager, StorageMemoryPool and the MemoryStore's eviction).
 *
 * This module decides, for each memory mode, with Spark's arithmetic:
 *  1. The split. The unified region of a mode holds max_memory bytes; the
 *     storage pool starts at the storage region (max_memory x
 *     spark.memory.storageFraction, truncated) and the execution pool at the
 *     rest. The two sizes always add up to max_memory.
 *  2. Storage acquisitions (acquireStorageMemory; acquireUnrollMemory is the
 *     same call). A request above max_memory less what execution uses is
 *     refused at once, nothing borrowed or evicted. Otherwise, when the
 *     storage pool's free memory is short, storage borrows the execution
 *     pool's free memory (never memory execution uses), then asks the memory
 *     store to evict blocks for what is still missing, and is granted all or
 *     nothing.
 *  3. Execution's growth (maybeGrowExecutionPool, before every pass of the
 *     execution pool): what execution lacks is reclaimed from storage, up to
 *     the larger of the storage pool's free memory and what storage holds
 *     beyond its region: free memory first, then evicted blocks. And the
 *     execution pool's maximum for the fair share
 *     (computeMaxExecutionPoolSize): max_memory less the smaller of storage's
 *     usage and its region.
 *  4. Eviction (evictBlocksToFreeSpace). GS_EVICT_BLOCKS is the MemoryStore:
 *     blocks of the mode, least recently stored first, are chosen until they
 *     free enough; if they do, all of them go and what they held is freed
 *     (possibly more than asked), else nothing goes. GS_EVICT_BYTES is the
 *     memory store that Spark's memory manager suites mock: it frees exactly
 *     what is asked when storage of the mode holds that much, else nothing;
 *     the bytes come off the oldest blocks. Every block may be evicted:
 *     Spark spares blocks being read and those of the RDD being cached, and
 *     a scenario's blocks are neither.
 *  5. Releases (releaseStorageMemory): clamped to what the mode holds, as
 *     Spark sets usage to 0 with a warning; the bytes come off the oldest
 *     blocks so that the blocks always add up to the usage.
 *
 * What it leaves to callers: the execution pool's fair share and waiting
 * (pages.h), whose size and maximum this module sets, and logging.
 * Nothing here waits, reads time or does I/O.
 *
 * Invariants, per mode: storage size + execution pool size = max_memory;
 * 0 <= storage used <= storage size; the blocks of the mode add up to
 * storage used.
 */
#ifndef GPUSIM_STORAGE_H
#define GPUSIM_STORAGE_H

#include <gpusim/pages.h>
#include <gpusim/workload.h>

G_BEGIN_DECLS

typedef enum {
	GS_EVICT_BLOCKS = 0, /* the MemoryStore: whole blocks, oldest first, or none */
	GS_EVICT_BYTES = 1,  /* the suites' mock: exactly the bytes asked, or none */
} GsEvictMode;

/* One call of evictBlocksToFreeSpace: asked > 0, or 0 when none was made. */
typedef struct {
	gint64 asked; /* space to free */
	gint64 freed; /* what the evicted blocks held; 0: nothing was evicted */
} GsEviction;

/* What one storage acquisition or one growth of the execution pool did. */
typedef struct {
	gboolean granted;   /* storage: all bytes granted */
	gboolean too_large; /* storage: above max_memory less execution's usage */
	gint64 borrowed;    /* storage: taken from execution's free memory */
	gint64 reclaimed;   /* growth: moved from the storage pool to execution */
	GsEviction eviction;
} GsStorageOutcome;

typedef struct GsStorage GsStorage;

/**
 * Both modes' storage pools and the memory store. @max_memory and
 * @fraction as above; @exec holds the execution pool of each mode, whose
 * size the storage takes over: each is resized to max_memory less the
 * storage region.
 */
GS_API GsStorage *gs_storage_new(const gint64 max_memory[GS_N_MEMORY_MODES], double fraction,
				 GsEvictMode evict, GsExecutionPool *exec[GS_N_MEMORY_MODES]);
GS_API void gs_storage_free(GsStorage *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsStorage, gs_storage_free)

/** The storage region of @max_memory: max_memory x @fraction, truncated. */
GS_API gint64 gs_storage_region(gint64 max_memory, double fraction);

/**
 * acquireStorageMemory of @bytes (>= 0) for block @block in @mode. On a
 * grant the block is stored, newest last. @block is not copied: it must
 * stay valid as long as @s (the evictions hand it back).
 */
GS_API GsStorageOutcome gs_storage_acquire(GsStorage *s, GsMemoryMode mode, const char *block,
					   gint64 bytes);

/**
 * maybeGrowExecutionPool and computeMaxExecutionPoolSize before a pass of
 * the execution pool of @mode for @num_bytes: reclaims from storage what
 * the pool lacks and sets its size and maximum.
 */
GS_API GsStorageOutcome gs_storage_grow_execution(GsStorage *s, GsMemoryMode mode,
						  gint64 num_bytes);

/** releaseStorageMemory: releases min(@bytes, used) of @mode and returns it. */
GS_API gint64 gs_storage_release(GsStorage *s, GsMemoryMode mode, gint64 bytes);

/** releaseAllStorageMemory for @mode: returns what it held. */
GS_API gint64 gs_storage_release_all(GsStorage *s, GsMemoryMode mode);

/**
 * The blocks the last gs_storage_acquire() or gs_storage_grow_execution()
 * evicted, oldest first: @index's id (the string gs_storage_acquire() was
 * given), with the bytes it lost in @bytes (may be NULL): all of it, or
 * part of it under GS_EVICT_BYTES.
 */
GS_API guint gs_storage_n_evicted(const GsStorage *s);
GS_API const char *gs_storage_evicted(const GsStorage *s, guint index, gint64 *bytes);

GS_API gint64 gs_storage_get_used(const GsStorage *s, GsMemoryMode mode);
GS_API gint64 gs_storage_get_size(const GsStorage *s, GsMemoryMode mode);
/** Blocks of @mode now (their sizes add up to the usage). */
GS_API guint gs_storage_n_blocks(const GsStorage *s, GsMemoryMode mode);

G_END_DECLS

#endif /* GPUSIM_STORAGE_H */
