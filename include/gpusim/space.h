/*
 * gpusim: the arithmetic of one memory space (cuCascade's memory_space).
 *
 * This module decides three things, all by integer arithmetic on byte counts
 * (reference/tiers-spill-pages-evac.md §A):
 *
 *  1. A space's thresholds and its downgrade hysteresis (§A.1, §A.11): from a
 *     capacity C and three fractions it computes the reservation limit L, the
 *     downgrade trigger and the downgrade stop exactly as the reference does
 *     (C x fraction in double precision, truncated), and says, for a charged
 *     byte count U, whether to start, keep on or stop downgrading, and how much.
 *  2. The one charged counter of a space (§A.2, §A.3, §A.6, §A.8): reservations
 *     are charged against L when made; allocations inside a reservation charge
 *     nothing more; the part of an allocation beyond its reservation, and an
 *     allocation with none, is charged against C. Releasing refunds the unused
 *     part of a reservation; freeing credits what the allocation had charged.
 *  3. The HOST tier's fixed-size blocks (§A.9): blocks of 1 MiB in pools of 128,
 *     4 pools made up front, one more pool whenever the free blocks run out,
 *     never given back.
 *
 * It leaves to callers: waiting (a blocking reservation that cannot be met says
 * WAIT; the caller parks the thread and asks again after the next release in
 * the space), choosing spaces (strategies), the over-reservation policies fail
 * and increase (they are built from gs_space_account_allocate() and
 * gs_space_account_grow()), attributing a free to a reservation, picking what
 * to downgrade, and real memory. Nothing here is thread-safe, reads a clock or
 * does I/O; every function is a pure function of its arguments and the object
 * it is given.
 *
 * The downgrade formulas (§A.11, after cuCascade PR #100). With A = C - U
 * (0 if negative) and consumed = L - A = U - (C - L):
 *
 *     should_downgrade       = A >= L ? FALSE : consumed >= trigger
 *     should_stop            = A >= L ? TRUE  : consumed <= stop
 *     amount_to_downgrade    = A >= L || consumed <= stop ? 0 : consumed - stop
 *
 * where trigger = trunc(C x trigger_fraction) and stop = trunc(C x
 * stop_fraction). Because consumed is offset by the headroom C - L, the points
 * in terms of charged bytes are U >= trigger + (C - L) to start and
 * U <= stop + (C - L) to stop: with the struct defaults (0.9 / 0.75 / 0.65) a
 * space starts at 0.85 C and stops at 0.75 C, not at 0.75 C and 0.65 C as the
 * fraction names suggest; with the builder defaults (0.85 / 0.85 / 0.65) it
 * starts only when full. gpusim follows the code by default
 * (GS_DOWNGRADE_FORMULA_REFERENCE); GS_DOWNGRADE_FORMULA_CHARGED is the
 * correction the reference's list (item 11) allows: the fractions are read as
 * points of the charged counter (start at U >= trigger, stop at U <= stop,
 * amount U - stop). Note that the amount is already positive between the stop
 * and the trigger: callers that spill should spill in chunks, not the whole
 * band at once (the Sirius lesson of §A.16).
 *
 * Two sets of defaults exist in the reference (§A.1, §A.14): the config structs'
 * (0.9 / 0.75 / 0.65, GS_SPACE_FRACTIONS_DEFAULT, which SPEC §3.3 adopts) and the
 * builder's (0.85 / 0.85 / 0.65, GS_SPACE_FRACTIONS_BUILDER); the cuCascade docs'
 * example (trigger 0.85, stop 0.65) matches the builder. DISK uses limit = C,
 * trigger = C, stop = 0.99 C (GS_SPACE_FRACTIONS_DISK).
 *
 * Blocking reservations. SPEC §3.5 defines mode block as "wait until the whole
 * size fits; a size above the limit fails at once with ReservationTooLarge",
 * which is also what the cuCascade docs describe (GS_BLOCKING_WAIT). The
 * cuCascade code differs (§A.3, §A.4, §A.14), and GS_BLOCKING_IDLE_UPTO
 * reproduces it: a blocking request that does not fit waits on the space's
 * notification channel; when the space has no live reservation (the channel
 * is IDLE) it falls back to an upto reservation, possibly partial or 0 bytes;
 * it never reports a size above the limit, except on HOST, where the rounded
 * size above L throws at once. The channel: every release posts a sticky
 * notification and wakes one waiter; the release of the last live
 * reservation wakes them all; a woken waiter sees SHUTDOWN first, then the
 * notification (consumed: one waiter takes it, and asks again), then IDLE;
 * otherwise it waits on. A notification nobody waits for stays for the next
 * waiter; a wake-up nobody waits for is lost. A shutdown wakes one waiter,
 * and every blocking request that would wait afterwards gets nothing (under
 * either rule).
 *
 * Byte counts are gint64 and never negative. Capacities above 2^53 bytes lose
 * precision in the double product exactly as the reference does; a product at
 * or above the capacity is clamped to it so that the conversion stays defined.
 */
#ifndef GPUSIM_SPACE_H
#define GPUSIM_SPACE_H

#include <gpusim/workload.h>

G_BEGIN_DECLS

/* ---- thresholds and downgrade hysteresis (§A.1, §A.11) ---- */

typedef enum {
	GS_DOWNGRADE_FORMULA_REFERENCE = 0, /* cuCascade's code: offset by C - L */
	GS_DOWNGRADE_FORMULA_CHARGED = 1,   /* fractions as points of the charged counter */
} GsDowngradeFormula;

/** The fractions a space is configured with; each in [0, 1]. */
typedef struct {
	double reservation_limit;
	double downgrade_trigger;
	double downgrade_stop;
	GsDowngradeFormula formula;
} GsSpaceFractions;

/* cuCascade's gpu/host_memory_space_config defaults; SPEC §3.3's. */
#define GS_SPACE_FRACTIONS_DEFAULT { 0.9, 0.75, 0.65, GS_DOWNGRADE_FORMULA_REFERENCE }
/* cuCascade's reservation_manager_configurator defaults (GPU and HOST). */
#define GS_SPACE_FRACTIONS_BUILDER { 0.85, 0.85, 0.65, GS_DOWNGRADE_FORMULA_REFERENCE }
/* cuCascade's DISK spaces: limit and trigger at capacity, stop at 0.99. */
#define GS_SPACE_FRACTIONS_DISK { 1.0, 1.0, 0.99, GS_DOWNGRADE_FORMULA_REFERENCE }

/**
 * A space's thresholds in bytes, as the reference stores them: each is
 * trunc(capacity x fraction). A plain value; fill it with gs_space_thresholds().
 */
typedef struct {
	gint64 capacity;
	gint64 reservation_limit; /* L: reservations are charged against it */
	gint64 downgrade_trigger; /* compared with consumed, not with U (see above) */
	gint64 downgrade_stop;
	GsDowngradeFormula formula;
} GsSpaceThresholds;

/** trunc(@capacity x @fraction) computed in double, as the reference does. */
GS_API gint64 gs_space_fraction_of(gint64 capacity, double fraction);

/** The thresholds of a space of @capacity bytes with @fractions. */
GS_API GsSpaceThresholds gs_space_thresholds(gint64 capacity, const GsSpaceFractions *fractions);

/**
 * The smallest charged byte count at which gs_space_should_downgrade() is TRUE:
 * for every U in [0, capacity], should_downgrade(U) == (U >= start_at). A value
 * above the capacity means never (the trigger lies above the limit).
 */
GS_API gint64 gs_space_downgrade_start_at(const GsSpaceThresholds *t);

/**
 * The largest charged byte count at which gs_space_should_stop_downgrading() is
 * TRUE: for every U in [0, capacity], should_stop(U) == (U <= stop_at), and
 * the amount to downgrade is MAX(0, U - stop_at).
 */
GS_API gint64 gs_space_downgrade_stop_at(const GsSpaceThresholds *t);

/** cuCascade's should_downgrade_memory() for @charged bytes. */
GS_API gboolean gs_space_should_downgrade(const GsSpaceThresholds *t, gint64 charged);

/** cuCascade's should_stop_downgrading_memory() for @charged bytes. */
GS_API gboolean gs_space_should_stop_downgrading(const GsSpaceThresholds *t, gint64 charged);

/** cuCascade's get_amount_to_downgrade() for @charged bytes. */
GS_API gint64 gs_space_downgrade_amount(const GsSpaceThresholds *t, gint64 charged);

#define GS_DOWNGRADE_DECISION_MAP(X)                                          \
	X(NONE, "none")         /* not downgrading, and below the trigger */  \
	X(START, "start")       /* not downgrading, at or above the trigger */ \
	X(CONTINUE, "continue") /* downgrading, still above the stop */       \
	X(STOP, "stop")         /* downgrading, at or below the stop */

typedef enum {
#define GS_X_ENUM(suffix, name) GS_DOWNGRADE_##suffix,
	GS_DOWNGRADE_DECISION_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_DOWNGRADE_DECISIONS
} GsDowngradeDecision;

GS_API const char *gs_downgrade_decision_name(GsDowngradeDecision decision);

/**
 * The hysteresis: a space not downgrading starts when gs_space_should_downgrade()
 * holds; one downgrading keeps on until gs_space_should_stop_downgrading()
 * holds. The caller keeps @in_progress (TRUE after START or CONTINUE).
 */
GS_API GsDowngradeDecision gs_space_downgrade_decide(const GsSpaceThresholds *t, gint64 charged,
						     gboolean in_progress);

/* ---- the charged counter (§A.2, §A.3, §A.6, §A.8) ---- */

/** What a blocking reservation does when it cannot be met now (see above). */
typedef enum {
	GS_BLOCKING_WAIT = 0,      /* SPEC §3.5 and the cuCascade docs: wait for the whole size */
	GS_BLOCKING_IDLE_UPTO = 1, /* the cuCascade code: no live reservation -> upto */
} GsBlockingRule;

#define GS_RESERVATION_OUTCOME_MAP(X)                                           \
	X(GRANTED, "granted")     /* charged; .size may be partial (upto) or 0 */    \
	X(REFUSED, "refused")     /* or_null: does not fit now; nothing changed */   \
	X(WAIT, "wait")           /* block: does not fit now; ask again later */     \
	X(TOO_LARGE, "too_large") /* can never fit: ReservationTooLarge */           \
	X(IDLE, "idle")           /* block, channel IDLE: charged as upto (may be 0) */ \
	X(SHUTDOWN, "shutdown")   /* block, channel shut down: no reservation */

typedef enum {
#define GS_X_ENUM(suffix, name) GS_RESERVATION_##suffix,
	GS_RESERVATION_OUTCOME_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_N_RESERVATION_OUTCOMES
} GsReservationOutcome;

GS_API const char *gs_reservation_outcome_name(GsReservationOutcome outcome);

/** Whether @outcome made a reservation: GRANTED or IDLE. */
GS_API gboolean gs_reservation_outcome_held(GsReservationOutcome outcome);

/**
 * A reservation's own counters, owned by the caller and updated by the account.
 * @allocated may exceed @size (over-reservation under the ignore policy).
 * Fields are read-only to everybody but this module.
 */
typedef struct {
	gint64 size;      /* bytes charged for it (what release refunds from) */
	gint64 allocated; /* bytes allocated inside it, padded */
	gint64 peak;      /* the highest @allocated ever */
	gboolean live;    /* FALSE once released */
} GsSpaceReservation;

typedef struct {
	GsReservationOutcome outcome;
	gint64 rounded;  /* the request after the tier's rounding (HOST: whole blocks) */
	gint64 size;     /* GRANTED: bytes charged to the new reservation; else 0 */
	gint64 fits_now; /* what an upto request would get now: MIN(rounded, MAX(0, L - U)) */
} GsReserveResult;

typedef enum {
	GS_SPACE_ALLOC_OK = 0,
	GS_SPACE_ALLOC_EXHAUSTED =
	    1, /* cuCascade POOL_EXHAUSTED: above capacity; nothing changed */
} GsSpaceAllocOutcome;

typedef struct {
	GsSpaceAllocOutcome outcome;
	gint64 padded;  /* the request rounded up to the account's granule */
	gint64 charged; /* OK: the part charged to the counter (beyond the reservation) */
} GsSpaceAlloc;

typedef struct GsSpaceAccount GsSpaceAccount;

/**
 * The counter of one space of @tier with thresholds @t, all bytes uncharged.
 * @granule is what allocations are padded to: the GPU alignment (256), the
 * HOST block size (reservations are rounded to it too), 1 for DISK.
 */
GS_API GsSpaceAccount *gs_space_account_new(GsTier tier, const GsSpaceThresholds *t,
					    gint64 granule);
GS_API void gs_space_account_free(GsSpaceAccount *acct);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsSpaceAccount, gs_space_account_free)

GS_API void gs_space_account_set_blocking(GsSpaceAccount *acct, GsBlockingRule rule);
GS_API GsBlockingRule gs_space_account_get_blocking(const GsSpaceAccount *acct);

GS_API GsTier gs_space_account_get_tier(const GsSpaceAccount *acct);
GS_API const GsSpaceThresholds *gs_space_account_get_thresholds(const GsSpaceAccount *acct);
GS_API gint64 gs_space_account_get_granule(const GsSpaceAccount *acct);

/** The charged counter U: live reservations plus bytes allocated beyond or without them. */
GS_API gint64 gs_space_account_charged(const GsSpaceAccount *acct);
/** The highest U ever. */
GS_API gint64 gs_space_account_peak(const GsSpaceAccount *acct);
/** get_available_memory(): MAX(0, C - U). */
GS_API gint64 gs_space_account_available(const GsSpaceAccount *acct);
/** Per-stream available: available + MAX(0, size - allocated) of @res (live). */
GS_API gint64 gs_space_account_available_to(const GsSpaceAccount *acct,
					    const GsSpaceReservation *res);
/** Live reservations, 0-byte ones included (the channel's live notifiers). */
GS_API guint gs_space_account_active(const GsSpaceAccount *acct);

/* ---- the notification channel (§A.4), under GS_BLOCKING_IDLE_UPTO ---- */

typedef enum {
	GS_CHANNEL_BLOCKED = 0, /* nothing for this waiter: it waits on */
	GS_CHANNEL_NOTIFIED,    /* a release's notification: ask again (or_null) */
	GS_CHANNEL_IDLE,        /* no live reservation: take what fits (upto) */
	GS_CHANNEL_SHUTDOWN,    /* the channel is shut down: give up (null) */
} GsChannelWait;

/** Whether a waiter on @acct's channel is woken now; takes one wake-up unless all are woken. */
GS_API gboolean gs_space_account_woken(GsSpaceAccount *acct);

/** What a woken waiter sees: SHUTDOWN, then the notification (consumed), then IDLE. */
GS_API GsChannelWait gs_space_account_wait(GsSpaceAccount *acct);

/** Wake-ups no waiter took are lost (the notification itself stays). */
GS_API void gs_space_account_settle(GsSpaceAccount *acct);

/** Shuts the channel down (memory_reservation_manager::shutdown()): one waiter is woken. */
GS_API void gs_space_account_shutdown(GsSpaceAccount *acct);

/**
 * Asks for a reservation of @bytes in @mode. HOST rounds @bytes up to whole
 * blocks first. or_null: granted iff U + rounded <= L, else REFUSED (HOST: TOO_LARGE
 * if rounded > L). upto: always granted, MIN(rounded, MAX(0, L - U)) bytes,
 * possibly 0. block: rounded > L is TOO_LARGE; granted if it fits; otherwise
 * WAIT, or, under GS_BLOCKING_IDLE_UPTO, SHUTDOWN once the channel is shut
 * down, IDLE (charged as upto) with no live reservation (and then a GPU or
 * DISK request is never TOO_LARGE), and the wait takes a notification left
 * for nobody. On GRANTED or IDLE, *@res is set to a live reservation of
 * .size bytes and the active count rises; otherwise nothing changes.
 */
GS_API GsReserveResult gs_space_account_reserve(GsSpaceAccount *acct, GsReserveMode mode,
						gint64 bytes, GsSpaceReservation *res);

/**
 * Releases @res: refunds MAX(0, size - allocated) and returns it. Bytes still
 * allocated from it stay charged until they are freed (with @res released, a
 * free credits them in full). The channel is notified and one waiter woken;
 * all of them when it was the last live reservation.
 */
GS_API gint64 gs_space_account_release(GsSpaceAccount *acct, GsSpaceReservation *res);

/**
 * Allocates @bytes, padded to the granule, inside @res (live) or with none
 * (NULL). Inside a reservation nothing is charged while allocated stays within
 * its size; the part beyond MAX(size, allocated before) is charged against the
 * capacity (the ignore policy). Without one the whole padded size is. If the
 * charge would take U above C: EXHAUSTED, and nothing changes.
 */
GS_API GsSpaceAlloc gs_space_account_allocate(GsSpaceAccount *acct, gint64 bytes,
					      GsSpaceReservation *res);

/**
 * Frees @bytes (padded as they were allocated) that were allocated in @res (or
 * NULL, or a released reservation) and returns the credit: for a live
 * reservation the part above its size, MAX(0, pre - MAX(size, pre - padded))
 * where pre is allocated before the free; otherwise all of it.
 */
GS_API gint64 gs_space_account_free_bytes(GsSpaceAccount *acct, gint64 bytes,
					  GsSpaceReservation *res);

/**
 * grow_by(): charges @bytes more to @res against the limit (HOST rounds them
 * up to whole blocks; DISK never grows). FALSE and nothing changes if
 * U + bytes > L.
 */
GS_API gboolean gs_space_account_grow(GsSpaceAccount *acct, GsSpaceReservation *res, gint64 bytes);

/**
 * shrink_to_fit(): lowers @res's size to what is allocated in it, if smaller,
 * refunding the difference, which it returns (DISK: a no-op, 0).
 */
GS_API gint64 gs_space_account_shrink_to_fit(GsSpaceAccount *acct, GsSpaceReservation *res);

/** gs_space_downgrade_decide() on the account's counter. */
GS_API GsDowngradeDecision gs_space_account_downgrade(const GsSpaceAccount *acct,
						      gboolean in_progress);

/* ---- HOST fixed-size blocks (§A.9) ---- */

/*
 * Block sizes are rounded up to this: alignof(max_align_t) on the x86-64 and
 * aarch64 Linux hosts cuCascade runs on, fixed so that a simulation does not
 * depend on the machine running it.
 */
#define GS_HOST_BLOCK_ALIGNMENT 16

#define GS_HOST_BLOCK_SIZE_DEFAULT (G_GINT64_CONSTANT(1) << 20)
#define GS_HOST_POOL_BLOCKS_DEFAULT 128
#define GS_HOST_INITIAL_POOLS_DEFAULT 4

/* What gs_host_blocks_alloc() returns when the blocks cannot be had. */
#define GS_HOST_BLOCKS_FAILED ((gint64) -1)

typedef struct GsHostBlocks GsHostBlocks;

/**
 * A pool set with @initial_pools pools of @pool_blocks blocks of @block_size
 * bytes (rounded up to GS_HOST_BLOCK_ALIGNMENT) made up front, whatever
 * @capacity says (the reference pins them in its constructor). Later pools are
 * added one at a time, only while the pools cover less than @capacity bytes:
 * at most MAX(initial_pools, ceil(capacity / pool bytes)) pools. The capacity
 * stands for what the system will lend; pass the HOST space's capacity.
 */
GS_API GsHostBlocks *gs_host_blocks_new(gint64 block_size, guint pool_blocks, guint initial_pools,
					gint64 capacity);
GS_API void gs_host_blocks_free(GsHostBlocks *hb);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsHostBlocks, gs_host_blocks_free)

/** The block size in bytes, after rounding. */
GS_API gint64 gs_host_blocks_get_block_size(const GsHostBlocks *hb);
GS_API guint gs_host_blocks_get_pool_blocks(const GsHostBlocks *hb);
/** The most pools there may ever be. */
GS_API guint gs_host_blocks_get_max_pools(const GsHostBlocks *hb);

/** ceil(@bytes / block size): the blocks an allocation of @bytes takes. */
GS_API gint64 gs_host_blocks_for_bytes(const GsHostBlocks *hb, gint64 bytes);

/**
 * Takes the blocks for @bytes (rounded up to whole blocks; 0 bytes take none)
 * and returns how many. When the free blocks run out a pool is added, one at a
 * time, as the reference does when its free list empties. If the pools reach
 * their maximum first, returns GS_HOST_BLOCKS_FAILED and takes nothing, but
 * the pools added on the way stay: pools are never given back.
 */
GS_API gint64 gs_host_blocks_alloc(GsHostBlocks *hb, gint64 bytes);

/** Gives back @n_blocks blocks (at most those in use). Pools stay. */
GS_API void gs_host_blocks_free_blocks(GsHostBlocks *hb, gint64 n_blocks);

GS_API gint64 gs_host_blocks_in_use(const GsHostBlocks *hb);
/** get_free_blocks(): blocks in the pools not in use. */
GS_API gint64 gs_host_blocks_free_count(const GsHostBlocks *hb);
/** get_total_blocks(): pools x blocks per pool. */
GS_API gint64 gs_host_blocks_total(const GsHostBlocks *hb);
GS_API guint gs_host_blocks_pools(const GsHostBlocks *hb);
/** The bytes taken from the system: pools x blocks per pool x block size. */
GS_API gint64 gs_host_blocks_system_bytes(const GsHostBlocks *hb);

G_END_DECLS

#endif /* GPUSIM_SPACE_H */
