/*
 * gpusim: spillable buffers and spill-victim selection (RMMEP-1 locking and
 * cuDF spilling; reference tiers-spill-pages-evac.md §B.8-§B.11).
 *
 * This module decides, for one engine or driver, which buffers may move
 * between the tiers and which of them go first. A GsSpillStore records every
 * buffer with its residence (GPU, HOST or DISK), a spillable flag, a nestable
 * lock count, the locks its asynchronous uses hold until their stream is
 * synchronised, a last-use time, an owner rank and a content tag (a 64-bit
 * value the caller sets, checked when a copy lands). From that it plans: which
 * buffers to spill out of a tier to cover a need (gs_spill_plan()), which of
 * a compute's buffers must come back to the GPU first
 * (gs_spill_unspill_plan()), and where a victim goes when the host is full
 * (gs_spill_destination()).
 *
 * What it leaves to callers: whether spilling is on, when to spill (on demand
 * inside a failing allocation before the state machine sees the OOM, or
 * proactively between the downgrade trigger and stop of space.h), carrying the
 * copies out and charging their time and bytes to the memory spaces, and
 * what to do with a short plan (let the allocation fail). Nothing here reads a
 * clock, waits, logs or touches a device; time is passed in.
 *
 * A compute that uses buffers goes, as RMMEP-1 asks ("retrieve before use;
 * lock while in use", §B.8):
 *  1. gs_spill_use_begin(): lock every used buffer (synchronously, or on its
 *     stream) and mark it used now. Locking first keeps the buffers being made
 *     resident from being chosen to make room for each other.
 *  2. gs_spill_unspill_plan(): the used buffers not on the GPU. To make room,
 *     gs_spill_plan(GS_TIER_GPU, ...) never picks the locked ones.
 *  3. The copies; gs_spill_moved() for each.
 *  4. The compute; then gs_spill_use_end() (synchronous) or, for a stream,
 *     gs_spill_sync() when the stream is synchronised.
 *
 * Moves. A copy may take time: gs_spill_move_begin() marks a buffer as
 * moving, so that no later plan chooses it a second time while its bytes are
 * still being released (style-anchors rule 9, Linux's one victim in flight);
 * gs_spill_moved() records the move once the copy has landed, or
 * gs_spill_move_abort() forgets it. A buffer stays counted in its old tier
 * until gs_spill_moved(): its old copy is the authoritative one until the new
 * one is checked, so there are never two authoritative copies and never none
 * (SPEC §1.5). gs_spill_moved() may also be called without a begin.
 *
 * Victim selection goals, in ranked order:
 *  1. Never lose or duplicate data. A buffer holding a lock (synchronous or
 *     asynchronous), unspillable, already moving or empty is never a victim,
 *     and only buffers in @tier_from are candidates. Busy buffers are skipped,
 *     never waited for (cuDF takes only the locks it can take without
 *     blocking, §B.9, §B.11). A move down of a locked or unspillable buffer
 *     is refused (cuDF: "Cannot in-place move an unspillable buffer"), and a
 *     move is recorded only if the content tag that arrived is the tag the
 *     buffer carries.
 *  2. Cover the need. Victims are taken until the bytes chosen reach the
 *     need, then no more; if every candidate together is short, all of them
 *     are chosen and the caller sees the shortfall.
 *  3. Spill what the policy says matters least:
 *     lru:          least recently used first (cuDF spill_device_memory,
 *                   §B.9: owners sorted by last access ascending).
 *     largest:      largest first, so that few buffers move (the "else the
 *                   largest" of Spark's order, §C.3, and dask-cuda's
 *                   larger-first tie-break, §B.10).
 *     smallest_fit: Spark's consumer order (§C.3), applied at every step: the
 *                   smallest buffer whose size covers what is still needed,
 *                   else the largest; after a largest pick the remainder
 *                   shrinks and the rule is asked again. This moves the
 *                   fewest bytes past the need a single buffer can, and
 *                   reuses the order gpusim already uses for Spark consumers
 *                   (pages.h gs_consumer_pick_spill()), so both spill paths
 *                   behave alike.
 *     priority:     the buffers of the lowest-ranked owner first
 *                   (gs_priority_compare(), the rank the engine uses for its
 *                   rollback victim), least recently used first within an
 *                   owner.
 *  4. Be deterministic. Ties are broken by last use (older first), then by
 *     buffer id (smaller first; with ids in creation order this is cuDF's
 *     order, whose stable sort keeps creation order for equal access times).
 *     No choice depends on hash-table order or on the order buffers were
 *     added.
 *
 * Deliberate departures from cuDF (§B.9): a need <= 0 plans nothing (cuDF
 * spills one buffer anyway, a quirk of testing after the spill); exposure is
 * modelled as the spillable flag, which callers may set back (cuDF's exposure
 * is permanent; a permanent exposure is a flag the caller never clears).
 *
 * Invariants (gs_spill_store_check()): every buffer is in exactly one tier;
 * lock counts are >= 0; every asynchronous lock is listed on exactly one
 * stream; the bytes and counts kept per tier and per moving tier equal the
 * sums over the buffers; a moving buffer's destination differs from its tier.
 */
#ifndef GPUSIM_SPILL_H
#define GPUSIM_SPILL_H

#include <gpusim/priority.h>
#include <gpusim/workload.h>

G_BEGIN_DECLS

/** A buffer's identity, chosen by the caller; unique within a store. */
typedef guint64 GsSpillBufId;

/** A stream's identity, >= 0; GS_SPILL_SYNCHRONOUS means no stream. */
typedef gint64 GsSpillStreamId;
#define GS_SPILL_SYNCHRONOUS ((GsSpillStreamId) -1)

/*
 * What a call on a store found. Every refusal changes nothing, except as said
 * at gs_spill_moved(). Columns: constant suffix, a sentence for messages.
 */
#define GS_SPILL_RESULT_MAP(X)                                                   \
	X(OK, "ok")                                                              \
	X(UNKNOWN_BUFFER, "no such buffer")                                      \
	X(DUPLICATE, "a buffer with that id already exists")                     \
	X(LOCKED, "the buffer is locked")                                        \
	X(UNSPILLABLE, "the buffer is not spillable")                            \
	X(NOT_LOCKED, "the buffer holds no synchronous lock")                    \
	X(SAME_TIER, "the buffer is already in that tier")                       \
	X(MOVING, "the buffer is already moving")                                \
	X(NOT_MOVING, "the buffer is not moving")                                \
	X(WRONG_TIER, "the buffer was moving to another tier")                   \
	X(TAG_MISMATCH, "the content tag does not match: data lost or duplicated")

typedef enum {
#define GS_X_ENUM(suffix, text) GS_SPILL_##suffix,
	GS_SPILL_RESULT_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_SPILL_RESULTS
} GsSpillResult;

/** The result's sentence. */
GS_API const char *gs_spill_result_text(GsSpillResult result);

/** A snapshot of one buffer's record. */
typedef struct {
	GsSpillBufId id;
	GsPriority owner;      /* the rank of the task (thread) that owns it */
	gint64 size;           /* bytes, >= 0 */
	GsTier tier;           /* where its authoritative copy is */
	gboolean spillable;
	gint locks;            /* synchronous, nestable */
	gint async_locks;      /* held until their streams are synchronised */
	GsTime last_use;
	guint64 tag;           /* the content tag */
	gboolean moving;       /* between gs_spill_move_begin() and its end */
	GsTier dest;           /* where it is moving; = tier when not moving */
} GsSpillBufView;

/**
 * One move of a plan. For a victim, @to is the next tier down (GPU → HOST,
 * HOST → DISK; see gs_spill_destination() when that tier is full) and @idle
 * is now - last use. For an unspill, @to is GS_TIER_GPU and @idle is 0.
 */
typedef struct {
	GsSpillBufId id;
	gint64 bytes;
	GsTier from;
	GsTier to;
	gboolean moving;  /* unspill only: a move of it is pending (see gs_spill_unspill_plan()) */
	GsTime idle;
} GsSpillMove;

typedef struct GsSpillStore GsSpillStore;

GS_API GsSpillStore *gs_spill_store_new(void);
GS_API void gs_spill_store_free(GsSpillStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsSpillStore, gs_spill_store_free)

/** Bytes, buffers and bytes moving out, in @tier. */
GS_API gint64 gs_spill_store_bytes(const GsSpillStore *store, GsTier tier);
GS_API guint gs_spill_store_count(const GsSpillStore *store, GsTier tier);
GS_API gint64 gs_spill_store_moving_bytes(const GsSpillStore *store, GsTier tier);

/** NULL if the invariants above hold, else a static sentence naming the first broken one. */
GS_API const char *gs_spill_store_check(const GsSpillStore *store);

/* ---- Buffers ---- */

/**
 * Records a buffer of @size bytes whose authoritative copy is in @tier (a
 * buffer created from host memory starts on HOST, as cuDF's
 * from_host_memory), unlocked, last used @now. DUPLICATE if @id exists.
 */
GS_API GsSpillResult gs_spill_add(GsSpillStore *store, GsSpillBufId id, GsPriority owner,
				  gint64 size, GsTier tier, gboolean spillable, guint64 tag,
				  GsTime now);

/**
 * Forgets a buffer (it was freed, wherever it lives). LOCKED while it holds a
 * synchronous lock: a buffer freed in the middle of the compute that uses it
 * is the caller's mistake. Its asynchronous locks are dropped from their
 * streams, as a stream-ordered free follows the stream's pending work; a later
 * gs_spill_sync() releases only what is still listed. A pending move is
 * forgotten with it.
 */
GS_API GsSpillResult gs_spill_remove(GsSpillStore *store, GsSpillBufId id);

/** Fills @out (may be NULL) and returns TRUE if @id exists. */
GS_API gboolean gs_spill_lookup(const GsSpillStore *store, GsSpillBufId id, GsSpillBufView *out);

/** Takes one more synchronous lock (nestable); a spilled buffer may be locked. */
GS_API GsSpillResult gs_spill_lock(GsSpillStore *store, GsSpillBufId id);

/** Gives one synchronous lock back; NOT_LOCKED if it holds none. */
GS_API GsSpillResult gs_spill_unlock(GsSpillStore *store, GsSpillBufId id);

/**
 * Takes a lock that @stream holds until gs_spill_sync(@stream) (RMMEP-1's
 * stream -> locked buffers map, released by syncAndUnlock). A negative
 * @stream (GS_SPILL_SYNCHRONOUS) takes a synchronous lock instead, so that a
 * compute's optional stream can be passed straight through.
 */
GS_API GsSpillResult gs_spill_lock_async(GsSpillStore *store, GsSpillBufId id,
					 GsSpillStreamId stream);

/** The stream is synchronised: releases every lock it holds; returns how many. */
GS_API guint gs_spill_sync(GsSpillStore *store, GsSpillStreamId stream);

/** Marks the buffer used at @now (its LRU position). */
GS_API GsSpillResult gs_spill_touch(GsSpillStore *store, GsSpillBufId id, GsTime now);

/** Allows or forbids spilling the buffer from now on. */
GS_API GsSpillResult gs_spill_set_spillable(GsSpillStore *store, GsSpillBufId id,
					    gboolean spillable);

/** Changes the owner's rank (the task's priority may change after it is set). */
GS_API GsSpillResult gs_spill_set_owner(GsSpillStore *store, GsSpillBufId id, GsPriority owner);

/**
 * Step 1 of a compute: locks each of the @n_bufs buffers once per listing
 * (on @stream, or synchronously with GS_SPILL_SYNCHRONOUS) and touches it at
 * @now. All or nothing: UNKNOWN_BUFFER if any id is unknown, and then nothing
 * changes.
 */
GS_API GsSpillResult gs_spill_use_begin(GsSpillStore *store, const GsSpillBufId *bufs,
					guint n_bufs, GsSpillStreamId stream, GsTime now);

/**
 * The end of a synchronous compute: unlocks each buffer once per listing.
 * All or nothing: UNKNOWN_BUFFER or NOT_LOCKED (counting repeated listings)
 * and then nothing changes.
 */
GS_API GsSpillResult gs_spill_use_end(GsSpillStore *store, const GsSpillBufId *bufs,
				      guint n_bufs);

/* ---- Plans ---- */

/**
 * Chooses victims in @tier_from to free @bytes_needed by @victim_policy (the
 * goals above) and puts them in @out (a GArray of GsSpillMove, emptied first),
 * in the order they should be spilled. Returns the bytes chosen: >= the need
 * if it could be covered, less (every candidate) if not; 0 when the need is
 * <= 0, when @tier_from is DISK (nothing lies below it) or when nothing in
 * @tier_from may move. Changes nothing in the store.
 */
GS_API gint64 gs_spill_plan(const GsSpillStore *store, GsTier tier_from, gint64 bytes_needed,
			    GsSpillVictim victim_policy, GsTime now, GArray *out);

/**
 * Which of a compute's buffers must come back to the GPU: those of @bufs not
 * on the GPU, and those on it but moving out, each once (the first listing
 * wins), in the order listed. Puts them in @out (GsSpillMove, emptied first;
 * @moving set where a move is pending: the caller lets it end or aborts it
 * before copying, and one on the GPU moving out only needs its move
 * aborted). Returns the bytes that still need room on the GPU: those of the
 * entries not on the GPU and not already moving to it. Unknown ids are left
 * out; *@n_unknown (may be NULL) says how many listings were unknown.
 */
GS_API gint64 gs_spill_unspill_plan(const GsSpillStore *store, const GsSpillBufId *bufs,
				    guint n_bufs, GArray *out, guint *n_unknown);

/** Where a victim goes, decided by gs_spill_destination(). */
typedef enum {
	GS_SPILL_DEST_HOST = 0,
	GS_SPILL_DEST_DISK = 1,
	GS_SPILL_DEST_NONE = 2, /* nowhere: the spill of this victim fails */
} GsSpillDest;

/**
 * Where a victim of @bytes spilled out of @from goes, given the free bytes
 * of the host and disk tiers. Out of the GPU it goes to the host if the host
 * can take it whole; else, with GS_HOST_FULL_DISK, straight on to disk if the
 * disk can take it, and with GS_HOST_FULL_FAIL nowhere. Out of the host it
 * goes to disk if it fits (the host_full policy does not apply: disk is the
 * next tier). Nothing spills out of disk.
 *
 * A victim that finds the host full goes on to disk itself, rather than
 * pushing older host buffers to disk to make room for it as dask-cuda's
 * host-limit eviction does (§B.10): either way one buffer's worth crosses to
 * disk, and going straight there costs one copy instead of two. A caller
 * that wants the dask-cuda cascade plans a HOST spill first.
 */
GS_API GsSpillDest gs_spill_destination(GsTier from, gint64 bytes, gint64 host_free,
					gint64 disk_free, GsHostFull host_full);

/* ---- Moves ---- */

/**
 * Marks a buffer as moving to @to: no plan chooses it again until the move
 * ends. Refused: SAME_TIER, MOVING, and for a move down LOCKED or UNSPILLABLE.
 * A move up (an unspill) is allowed for a locked or unspillable buffer, as in
 * cuDF.
 */
GS_API GsSpillResult gs_spill_move_begin(GsSpillStore *store, GsSpillBufId id, GsTier to);

/** Ends a move without moving anything (the copy failed or was dropped). */
GS_API GsSpillResult gs_spill_move_abort(GsSpillStore *store, GsSpillBufId id);

/**
 * Records a completed move of the buffer to @new_tier, where a copy carrying
 * @tag has landed. Checked in this order: UNKNOWN_BUFFER; SAME_TIER;
 * WRONG_TIER (it was begun towards another tier); TAG_MISMATCH (the data that
 * arrived is not the buffer's: lost or duplicated); and for a move down,
 * LOCKED and UNSPILLABLE (a lock or the flag arrived while it was moving).
 * The first three change nothing; the last three end the pending move, if
 * any, and leave the buffer where it was, its old copy still authoritative.
 */
GS_API GsSpillResult gs_spill_moved(GsSpillStore *store, GsSpillBufId id, GsTier new_tier,
				    guint64 tag);

G_END_DECLS

#endif /* GPUSIM_SPILL_H */
