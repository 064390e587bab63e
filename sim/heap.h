/*
 * gpusim sim: the event queue of the discrete-event driver.
 *
 * This module decides one thing: the order in which scheduled events fire, by
 * (time, sequence): a radix heap (heap.c says how). The sequence number is
 * taken from a counter in the heap when an event is pushed, so two events
 * scheduled for the same time fire in the order they were scheduled (FIFO),
 * and no two events ever compare equal: the order is total and therefore
 * deterministic.
 * The heap never reads a clock; times are whatever the caller passes.
 *
 * What it leaves to the caller: what an event means (kind and target are
 * opaque numbers), the current time (the heap accepts any time, including one
 * earlier than events already fired, but such a push costs O(n): the driver
 * must not schedule into the past), and cancellation. Cancellation is lazy:
 * the caller keeps the sequence number of the event a target still expects,
 * forgets it to cancel, and drops the events it no longer expects when they
 * fire.
 *
 * Firing order and the two phases. A driver's loop is
 *
 *     while (gs_heap_peek(heap, &next)) {
 *             now = next.time;
 *             g_array_set_size(due, 0);
 *             gs_heap_pop_due(heap, now, due);      (phase 1: collect)
 *             for each event in due, in order:      (phase 2: run)
 *                     if it is still expected, run it (it may push more)
 *     }
 *
 * Phase 1 moves every event with time <= now out of the heap, in ascending
 * (time, seq) order. Events pushed while phase 2 runs stay in the heap even when
 * their time is now: they fire in a later pass at the same instant, after every
 * event of this pass. Because their sequence numbers are larger than those of
 * every event already collected, the overall firing order is still exactly
 * ascending (time, seq), as long as nothing is scheduled before now.
 *
 * Storage: each bucket a list of chunks of events; a chunk emptied is kept for
 * the next bucket that grows, so the storage follows the most events pending
 * at once (and a chunk partly filled per bucket in use), and a push allocates
 * only when no chunk is free; nothing is given back before gs_heap_free()
 * (gs_heap_clear keeps it).
 * Push and pop cost O(1) amortized for a driver that never schedules into
 * the past (an event moves at most once per byte of the distance between
 * its time and the instant it was pushed at), len O(1), peek O(1) but for
 * a search of one bucket once it changed.
 */
#ifndef GPUSIM_SIM_HEAP_H
#define GPUSIM_SIM_HEAP_H

#include <gpusim/types.h>

G_BEGIN_DECLS

/** One scheduled event, stored and returned by value. */
typedef struct {
	GsTime time;  /* when it fires */
	guint64 seq;  /* set by the heap at push: the tie-breaker */
	guint kind;   /* the caller's: what to do */
	guint target; /* the caller's: to whom */
} GsEvent;

typedef struct GsHeap GsHeap;

/** An empty heap whose sequence counter starts at 0. */
GsHeap *gs_heap_new(void);
void gs_heap_free(GsHeap *heap);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsHeap, gs_heap_free)

/**
 * Schedules an event at @time and returns its sequence number: 0 for the first
 * push into a new heap, then one more for every push (clearing does not reset
 * the counter, so a sequence number is never reused within one heap).
 */
guint64 gs_heap_push(GsHeap *heap, GsTime time, guint kind, guint target);

/** Copies the next event to fire into @out (may be NULL); FALSE if the heap is empty. */
gboolean gs_heap_peek(GsHeap *heap, GsEvent *out);

/** Removes the next event to fire into @out (may be NULL); FALSE if the heap is empty. */
gboolean gs_heap_pop(GsHeap *heap, GsEvent *out);

/**
 * Phase 1 of a firing pass: removes every event with time <= @now and appends
 * them to @out (a GArray of GsEvent; what it already holds is kept) in firing
 * order. Returns the number of events appended, 0 if none is due.
 */
guint gs_heap_pop_due(GsHeap *heap, GsTime now, GArray *out);

/** The sequence number the next push will get. */
guint64 gs_heap_next_seq(const GsHeap *heap);

/**
 * Phase 1 and 2 without a copy: removes into @out the next event to fire if
 * its time is <= @now and its sequence number below @before; FALSE, leaving
 * the heap as it is, otherwise. A driver that takes @before from
 * gs_heap_next_seq() as a pass begins and pops until FALSE, running each
 * event at once, fires exactly the events gs_heap_pop_due() would have
 * collected, in the same order: what they push gets a later sequence number
 * and waits for the next pass.
 */
gboolean gs_heap_pop_due_before(GsHeap *heap, GsTime now, guint64 before, GsEvent *out);

/**
 * What fires soon, for a caller that prefetches what those events will touch:
 * soon[0] is the next event to fire and, when it is known without a search,
 * soon[1] the one after it (unless a push comes first). Returns how many are
 * filled (0 if the queue is empty); they are valid until the next call that
 * changes the queue.
 */
guint gs_heap_soon(GsHeap *heap, const GsEvent *soon[2]);

/** The number of events scheduled. */
guint gs_heap_len(const GsHeap *heap);

/** Drops every event; the storage and the sequence counter are kept. */
void gs_heap_clear(GsHeap *heap);

/**
 * Invariant check for tests and debug builds: NULL if every event is in the
 * bucket its time names, the events of each time are in the order they were
 * pushed, the counts and marks agree and every stored sequence number is
 * below the counter, else a static sentence saying what is wrong. O(n).
 */
const char *gs_heap_check(const GsHeap *heap);

G_END_DECLS

#endif /* GPUSIM_SIM_HEAP_H */
