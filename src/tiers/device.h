/*
 * gpusim: the modelled memory of one device (SPEC §3.3).
 *
 * This module decides whether an allocation of a given size succeeds on a
 * device of a given capacity, and what it is charged. It keeps the books (used
 * bytes, the peak, the live allocations) and nothing else: it does not time
 * allocations, spill, retry or block; the driver and the engine do that with
 * its answers. It never reads a clock and makes no random choice.
 *
 * Sizes. Every allocation is charged its size rounded up to the alignment (an
 * alignment of 0 or 1 means none). A request of 0 bytes is charged one
 * alignment unit (one byte without alignment), like malloc(0) returning a
 * unique pointer: so every live allocation occupies at least one unit, the
 * POOL model can give it its own address, and both models charge the same
 * for every request. A request whose rounded size would overflow fails.
 *
 * Two models (GsAllocatorModel):
 *
 * - EXACT: an allocation succeeds iff used + charged size <= capacity. There is
 *   no address space and no fragmentation; the handle is a unique id: 1, 2, 3,
 *   ... in allocation order, never reused.
 * - POOL: an address-space model of the range [0, capacity). Free ranges are
 *   kept sorted by address. An allocation takes the best fit, the smallest free
 *   range at least as large as the charged size, ties going to the lowest
 *   address, and is placed at that range's start; the handle is its address. A
 *   release returns the range and coalesces it with free neighbours. So holes
 *   can make an allocation fail while enough bytes are free in total. Since
 *   every charged size is a multiple of the alignment, every address is too.
 *
 * In both models a capacity that is not a multiple of the alignment leaves a
 * tail smaller than one unit that no allocation can use; it still counts as
 * free bytes (capacity - used) but never in gs_device_largest_free().
 *
 * Invariants (gs_device_check): used is the sum of the live allocations'
 * charged sizes, used <= capacity, used <= peak; in POOL the live allocations
 * and the free ranges tile [0, capacity) exactly, the free ranges are sorted,
 * non-empty, non-overlapping and coalesced (no two touch).
 *
 * Cost: release finds its allocation in a hash table by handle in O(1); the
 * table is only looked up, never iterated for a decision. POOL keeps its free
 * ranges in a sorted array: a best-fit allocation scans it (O(f) for f free
 * ranges) and a release finds its neighbours by binary search (O(log f)) then
 * inserts or removes at most one range (a memmove of up to f 16-byte entries).
 * A pair of balanced trees would make both O(log f), but f is the number of
 * holes, small in every scenario we model, and the array is far simpler to
 * check.
 */
#ifndef GPUSIM_SIM_DEVICE_H
#define GPUSIM_SIM_DEVICE_H

#include <gpusim/workload.h>

G_BEGIN_DECLS

typedef struct GsDevice GsDevice;

/** A device with no allocations. @capacity and @alignment must be >= 0. */
GsDevice *gs_device_new(gint64 capacity, gint64 alignment, GsAllocatorModel model);
void gs_device_free(GsDevice *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsDevice, gs_device_free)

/**
 * Allocates @size bytes (>= 0; charged as described above). On success stores
 * the handle in @handle and returns TRUE; on failure returns FALSE and leaves
 * @handle and the device untouched.
 */
gboolean gs_device_alloc(GsDevice *d, gint64 size, guint64 *handle);

/** Frees an allocation; returns the bytes freed (its charged size), -1 for an unknown handle. */
gint64 gs_device_release(GsDevice *d, guint64 handle);

/** Bytes charged to live allocations now. */
gint64 gs_device_used(const GsDevice *d);

/** The largest gs_device_used() has ever been. */
gint64 gs_device_peak_used(const GsDevice *d);

gint64 gs_device_capacity(const GsDevice *d);

/** The alignment in effect: 1 when the device was made with 0 or 1. */
gint64 gs_device_alignment(const GsDevice *d);

GsAllocatorModel gs_device_model(const GsDevice *d);

/**
 * The largest size for which gs_device_alloc() would succeed now (a multiple of
 * the alignment), 0 if none would: EXACT, the free bytes rounded down to the
 * alignment; POOL, the largest free range rounded down likewise.
 */
gint64 gs_device_largest_free(const GsDevice *d);

/** The number of live allocations. */
guint gs_device_n_allocations(const GsDevice *d);

/**
 * The number of free ranges (holes): in POOL the length of the free list; EXACT
 * has no addresses and counts its free bytes as one range (1 if any byte is
 * free, else 0).
 */
guint gs_device_n_free_ranges(const GsDevice *d);

/**
 * Invariant check for tests and debug builds: NULL if every invariant above
 * holds, else a static sentence saying which does not. O(n log n) for n live
 * allocations.
 */
const char *gs_device_check(const GsDevice *d);

G_END_DECLS

#endif /* GPUSIM_SIM_DEVICE_H */
