/*
 * gpusim: memory-space arithmetic (cuCascade §A of
 * reference/tiers-spill-pages-evac.md): thresholds, downgrade hysteresis, the
 * charged counter and HOST fixed-size blocks.
 *
 * Everything is signed 64-bit byte arithmetic. The reference's counters are
 * unsigned and can wrap when a free is attributed to the wrong reservation
 * (§A.8, PR #114); here such an under-run of the charged counter is refused as
 * a programming error instead, so that one bad free cannot silently poison
 * every later decision of a simulation.
 */
#include "config.h"

#include <gpusim/space.h>

/* ---- names ---- */

static const char *const downgrade_decision_names[] = {
#define GS_X_NAME(suffix, name) name,
	GS_DOWNGRADE_DECISION_MAP(GS_X_NAME)
#undef GS_X_NAME
};

G_STATIC_ASSERT(G_N_ELEMENTS(downgrade_decision_names) == GS_N_DOWNGRADE_DECISIONS);

const char *
gs_downgrade_decision_name(GsDowngradeDecision decision)
{
	g_return_val_if_fail(decision < GS_N_DOWNGRADE_DECISIONS, "invalid");
	return downgrade_decision_names[decision];
}

static const char *const reservation_outcome_names[] = {
#define GS_X_NAME(suffix, name) name,
	GS_RESERVATION_OUTCOME_MAP(GS_X_NAME)
#undef GS_X_NAME
};

G_STATIC_ASSERT(G_N_ELEMENTS(reservation_outcome_names) == GS_N_RESERVATION_OUTCOMES);

const char *
gs_reservation_outcome_name(GsReservationOutcome outcome)
{
	g_return_val_if_fail(outcome < GS_N_RESERVATION_OUTCOMES, "invalid");
	return reservation_outcome_names[outcome];
}

gboolean
gs_reservation_outcome_held(GsReservationOutcome outcome)
{
	return outcome == GS_RESERVATION_GRANTED || outcome == GS_RESERVATION_IDLE;
}

/* ---- helpers ---- */

/* @bytes rounded up to a multiple of @granule (> 0); callers check the range. */
static gint64
round_up(gint64 bytes, gint64 granule)
{
	gint64 rest = bytes % granule;

	return rest == 0 ? bytes : bytes + (granule - rest);
}

static gboolean
can_round_up(gint64 bytes, gint64 granule)
{
	return bytes >= 0 && bytes <= G_MAXINT64 - (granule - 1);
}

/*
 * The part of the interval (low, high] of a reservation's allocated bytes that
 * lies above its size: what an allocation taking allocated from low to high
 * charges, and what a free taking it from high to low credits (§A.8: "0 if
 * pre <= size, pre - size if it straddles, else the full amount").
 */
static gint64
beyond(gint64 size, gint64 low, gint64 high)
{
	return MAX(0, high - MAX(size, low));
}

/* ---- thresholds and downgrade hysteresis ---- */

gint64
gs_space_fraction_of(gint64 capacity, double fraction)
{
	double product;

	g_return_val_if_fail(capacity >= 0, 0);
	g_return_val_if_fail(fraction >= 0.0 && fraction <= 1.0, 0);
	/*
	 * The reference computes static_cast<size_t>(capacity * fraction): the
	 * product in double, truncated. So 100 x 0.29 is 28, not 29. Doing the
	 * same keeps every threshold byte-identical to cuCascade's.
	 */
	product = (double) capacity * fraction;
	/*
	 * Beyond 2^53 the rounded product may reach the capacity or even 2^63,
	 * where the conversion would be undefined; a fraction <= 1 never gives
	 * more than the capacity, so clamp there.
	 */
	if (product >= (double) capacity)
		return capacity;
	return (gint64) product;
}

GsSpaceThresholds
gs_space_thresholds(gint64 capacity, const GsSpaceFractions *fractions)
{
	GsSpaceThresholds t = { .capacity = capacity };

	g_return_val_if_fail(capacity >= 0, t);
	g_return_val_if_fail(fractions != NULL, t);
	t.reservation_limit = gs_space_fraction_of(capacity, fractions->reservation_limit);
	t.downgrade_trigger = gs_space_fraction_of(capacity, fractions->downgrade_trigger);
	t.downgrade_stop = gs_space_fraction_of(capacity, fractions->downgrade_stop);
	t.formula = fractions->formula;
	return t;
}

/* get_available_memory(): capacity - charged, 0 if negative. */
static gint64
available(const GsSpaceThresholds *t, gint64 charged)
{
	return charged >= t->capacity ? 0 : t->capacity - charged;
}

gboolean
gs_space_should_downgrade(const GsSpaceThresholds *t, gint64 charged)
{
	gint64 avail;

	g_return_val_if_fail(t != NULL && charged >= 0, FALSE);
	switch (t->formula) {
	case GS_DOWNGRADE_FORMULA_REFERENCE:
		/* The PR #100 guard: without it L - A underflowed. */
		avail = available(t, charged);
		if (avail >= t->reservation_limit)
			return FALSE;
		return t->reservation_limit - avail >= t->downgrade_trigger;
	case GS_DOWNGRADE_FORMULA_CHARGED:
		return charged >= t->downgrade_trigger;
	}
	g_return_val_if_reached(FALSE);
}

gboolean
gs_space_should_stop_downgrading(const GsSpaceThresholds *t, gint64 charged)
{
	gint64 avail;

	g_return_val_if_fail(t != NULL && charged >= 0, TRUE);
	switch (t->formula) {
	case GS_DOWNGRADE_FORMULA_REFERENCE:
		avail = available(t, charged);
		if (avail >= t->reservation_limit)
			return TRUE;
		return t->reservation_limit - avail <= t->downgrade_stop;
	case GS_DOWNGRADE_FORMULA_CHARGED:
		return charged <= t->downgrade_stop;
	}
	g_return_val_if_reached(TRUE);
}

gint64
gs_space_downgrade_amount(const GsSpaceThresholds *t, gint64 charged)
{
	gint64 avail, consumed;

	g_return_val_if_fail(t != NULL && charged >= 0, 0);
	switch (t->formula) {
	case GS_DOWNGRADE_FORMULA_REFERENCE:
		avail = available(t, charged);
		if (avail >= t->reservation_limit)
			return 0;
		consumed = t->reservation_limit - avail;
		return consumed <= t->downgrade_stop ? 0 : consumed - t->downgrade_stop;
	case GS_DOWNGRADE_FORMULA_CHARGED:
		return MAX(0, charged - t->downgrade_stop);
	}
	g_return_val_if_reached(0);
}

/* C - L: the band only over-reservation and unreserved allocations can use. */
static gint64
headroom(const GsSpaceThresholds *t)
{
	return t->capacity - t->reservation_limit;
}

gint64
gs_space_downgrade_start_at(const GsSpaceThresholds *t)
{
	g_return_val_if_fail(t != NULL, 0);
	switch (t->formula) {
	case GS_DOWNGRADE_FORMULA_REFERENCE:
		/*
		 * consumed >= trigger means U >= trigger + (C - L); the guard
		 * A < L adds U > C - L, which only binds when the trigger is 0.
		 */
		return MAX(t->downgrade_trigger, 1) + headroom(t);
	case GS_DOWNGRADE_FORMULA_CHARGED:
		return t->downgrade_trigger;
	}
	g_return_val_if_reached(0);
}

gint64
gs_space_downgrade_stop_at(const GsSpaceThresholds *t)
{
	g_return_val_if_fail(t != NULL, 0);
	switch (t->formula) {
	case GS_DOWNGRADE_FORMULA_REFERENCE:
		/* The guard (U <= C - L stops) is implied: stop >= 0. */
		return t->downgrade_stop + headroom(t);
	case GS_DOWNGRADE_FORMULA_CHARGED:
		return t->downgrade_stop;
	}
	g_return_val_if_reached(0);
}

GsDowngradeDecision
gs_space_downgrade_decide(const GsSpaceThresholds *t, gint64 charged, gboolean in_progress)
{
	g_return_val_if_fail(t != NULL && charged >= 0, GS_DOWNGRADE_NONE);
	/*
	 * Two predicates, not one threshold: between the stop and the trigger
	 * the answer depends on the past, which is the point of hysteresis (a
	 * space hovering near one threshold would otherwise start and stop on
	 * every allocation).
	 */
	if (in_progress)
		return gs_space_should_stop_downgrading(t, charged) ? GS_DOWNGRADE_STOP
								    : GS_DOWNGRADE_CONTINUE;
	return gs_space_should_downgrade(t, charged) ? GS_DOWNGRADE_START : GS_DOWNGRADE_NONE;
}

/* ---- the charged counter ---- */

struct GsSpaceAccount {
	GsTier tier;
	GsSpaceThresholds t;
	gint64 granule;     /* allocation padding; HOST reservations too */
	GsBlockingRule blocking;
	gint64 charged;     /* U */
	gint64 peak;        /* highest U */
	guint active;       /* live reservations */
	/* the notification channel */
	gboolean notified;  /* the sticky flag: a release no waiter has taken yet */
	guint wake_one;     /* wake-ups for one waiter each (releases, shutdowns) */
	gboolean wake_all;  /* the last live reservation went: every waiter wakes */
	gboolean shut_down;
};

GsSpaceAccount *
gs_space_account_new(GsTier tier, const GsSpaceThresholds *t, gint64 granule)
{
	GsSpaceAccount *acct;

	g_return_val_if_fail(t != NULL, NULL);
	g_return_val_if_fail(granule > 0, NULL);
	g_return_val_if_fail(t->capacity >= 0 && t->reservation_limit >= 0, NULL);
	g_return_val_if_fail(t->reservation_limit <= t->capacity, NULL);
	acct = g_new0(GsSpaceAccount, 1);
	acct->tier = tier;
	acct->t = *t;
	acct->granule = granule;
	acct->blocking = GS_BLOCKING_WAIT;
	return acct;
}

void
gs_space_account_free(GsSpaceAccount *acct)
{
	g_free(acct);
}

void
gs_space_account_set_blocking(GsSpaceAccount *acct, GsBlockingRule rule)
{
	g_return_if_fail(acct != NULL);
	acct->blocking = rule;
}

GsBlockingRule
gs_space_account_get_blocking(const GsSpaceAccount *acct)
{
	return acct->blocking;
}

GsTier
gs_space_account_get_tier(const GsSpaceAccount *acct)
{
	return acct->tier;
}

const GsSpaceThresholds *
gs_space_account_get_thresholds(const GsSpaceAccount *acct)
{
	return &acct->t;
}

gint64
gs_space_account_get_granule(const GsSpaceAccount *acct)
{
	return acct->granule;
}

gint64
gs_space_account_charged(const GsSpaceAccount *acct)
{
	return acct->charged;
}

gint64
gs_space_account_peak(const GsSpaceAccount *acct)
{
	return acct->peak;
}

gint64
gs_space_account_available(const GsSpaceAccount *acct)
{
	return available(&acct->t, acct->charged);
}

gint64
gs_space_account_available_to(const GsSpaceAccount *acct, const GsSpaceReservation *res)
{
	gint64 avail = available(&acct->t, acct->charged);

	if (res == NULL || !res->live)
		return avail;
	return avail + MAX(0, res->size - res->allocated);
}

guint
gs_space_account_active(const GsSpaceAccount *acct)
{
	return acct->active;
}

static void
charge(GsSpaceAccount *acct, gint64 bytes)
{
	acct->charged += bytes;
	acct->peak = MAX(acct->peak, acct->charged);
}

/* try_add(bytes, limit): U + bytes <= L, written so that it cannot overflow. */
static gboolean
fits_limit(const GsSpaceAccount *acct, gint64 bytes)
{
	return bytes <= acct->t.reservation_limit - acct->charged;
}

/* add_bounded(bytes, limit): as much of @bytes as fits under L, 0 if none. */
static gint64
room_under_limit(const GsSpaceAccount *acct, gint64 bytes)
{
	return MIN(bytes, MAX(0, acct->t.reservation_limit - acct->charged));
}

static GsReserveResult
grant(GsSpaceAccount *acct, GsReserveResult r, gint64 size, GsSpaceReservation *res)
{
	charge(acct, size);
	/* A 0-byte arena is still live: it keeps the channel from going IDLE. */
	acct->active++;
	*res = (GsSpaceReservation) { .size = size, .live = TRUE };
	r.outcome = GS_RESERVATION_GRANTED;
	r.size = size;
	return r;
}

static GsReserveResult
refuse(GsReserveResult r, GsReservationOutcome outcome)
{
	r.outcome = outcome;
	r.size = 0;
	return r;
}

GsReserveResult
gs_space_account_reserve(GsSpaceAccount *acct, GsReserveMode mode, gint64 bytes,
			 GsSpaceReservation *res)
{
	GsReserveResult r = { .outcome = GS_RESERVATION_REFUSED };
	gboolean host;

	g_return_val_if_fail(acct != NULL && res != NULL, r);
	g_return_val_if_fail(can_round_up(bytes, acct->granule), r);
	host = acct->tier == GS_TIER_HOST;
	/* Only HOST rounds reservations (to whole blocks); GPU and DISK take bytes as given. */
	r.rounded = host ? round_up(bytes, acct->granule) : bytes;
	r.fits_now = room_under_limit(acct, r.rounded);

	switch (mode) {
	case GS_RESERVE_OR_NULL:
		/* The HOST resource throws std::runtime_error here; GPU and DISK return null. */
		if (host && r.rounded > acct->t.reservation_limit)
			return refuse(r, GS_RESERVATION_TOO_LARGE);
		if (fits_limit(acct, r.rounded))
			return grant(acct, r, r.rounded, res);
		return refuse(r, GS_RESERVATION_REFUSED);
	case GS_RESERVE_UPTO:
		return grant(acct, r, r.fits_now, res);
	case GS_RESERVE_BLOCK:
		break;
	}
	g_return_val_if_fail(mode == GS_RESERVE_BLOCK, r);

	switch (acct->blocking) {
	case GS_BLOCKING_WAIT:
		/* Nothing a release could do makes it fit: fail now, not never. */
		if (r.rounded > acct->t.reservation_limit)
			return refuse(r, GS_RESERVATION_TOO_LARGE);
		if (fits_limit(acct, r.rounded))
			return grant(acct, r, r.rounded, res);
		return refuse(r, acct->shut_down ? GS_RESERVATION_SHUTDOWN : GS_RESERVATION_WAIT);
	case GS_BLOCKING_IDLE_UPTO:
		/* make_reservation(): or_null first (HOST throws), then the channel. */
		if (host && r.rounded > acct->t.reservation_limit)
			return refuse(r, GS_RESERVATION_TOO_LARGE);
		if (fits_limit(acct, r.rounded))
			return grant(acct, r, r.rounded, res);
		if (acct->shut_down)
			return refuse(r, GS_RESERVATION_SHUTDOWN);
		/* The wait takes a notification left for nobody, and or_null fails again. */
		acct->notified = FALSE;
		/* No live arena means no release will ever come: the channel says IDLE. */
		if (acct->active == 0) {
			r = grant(acct, r, r.fits_now, res);
			r.outcome = GS_RESERVATION_IDLE;
			return r;
		}
		return refuse(r, GS_RESERVATION_WAIT);
	}
	g_return_val_if_reached(r);
}

gint64
gs_space_account_release(GsSpaceAccount *acct, GsSpaceReservation *res)
{
	gint64 refund;

	g_return_val_if_fail(acct != NULL && res != NULL, 0);
	g_return_val_if_fail(res->live, 0);
	g_return_val_if_fail(acct->active > 0, 0);
	/* Bytes still allocated from it stay charged until their buffers are freed. */
	refund = MAX(0, res->size - res->allocated);
	g_return_val_if_fail(refund <= acct->charged, 0);
	acct->charged -= refund;
	acct->active--;
	res->live = FALSE;
	/* notify_on_exit posts, then the notifier's end wakes all at a count of 0. */
	acct->notified = TRUE;
	acct->wake_one++;
	acct->wake_all = acct->wake_all || acct->active == 0;
	return refund;
}

gboolean
gs_space_account_woken(GsSpaceAccount *acct)
{
	g_return_val_if_fail(acct != NULL, FALSE);
	if (acct->wake_all)
		return TRUE;
	if (acct->wake_one == 0)
		return FALSE;
	acct->wake_one--;
	return TRUE;
}

GsChannelWait
gs_space_account_wait(GsSpaceAccount *acct)
{
	g_return_val_if_fail(acct != NULL, GS_CHANNEL_BLOCKED);
	if (acct->shut_down)
		return GS_CHANNEL_SHUTDOWN;
	if (acct->notified) {
		acct->notified = FALSE;
		return GS_CHANNEL_NOTIFIED;
	}
	return acct->active == 0 ? GS_CHANNEL_IDLE : GS_CHANNEL_BLOCKED;
}

void
gs_space_account_settle(GsSpaceAccount *acct)
{
	g_return_if_fail(acct != NULL);
	acct->wake_one = 0;
	acct->wake_all = FALSE;
}

void
gs_space_account_shutdown(GsSpaceAccount *acct)
{
	g_return_if_fail(acct != NULL);
	acct->shut_down = TRUE;
	acct->wake_one++;
}

GsSpaceAlloc
gs_space_account_allocate(GsSpaceAccount *acct, gint64 bytes, GsSpaceReservation *res)
{
	GsSpaceAlloc a = { .outcome = GS_SPACE_ALLOC_EXHAUSTED };
	gint64 after = 0, extra;

	g_return_val_if_fail(acct != NULL, a);
	g_return_val_if_fail(can_round_up(bytes, acct->granule), a);
	/* The HOST resource throws "reservation has been freed already". */
	g_return_val_if_fail(res == NULL || res->live, a);
	a.padded = round_up(bytes, acct->granule);
	if (res != NULL) {
		g_return_val_if_fail(res->allocated <= G_MAXINT64 - a.padded, a);
		after = res->allocated + a.padded;
		/*
		 * Measured against the size before any over-reservation policy
		 * grew it, as the reference does; the ignore policy grows nothing.
		 */
		extra = beyond(res->size, res->allocated, after);
	} else {
		extra = a.padded;
	}
	/* Over-reservation is bounded by the capacity, not by the limit. */
	if (extra > acct->t.capacity - acct->charged)
		return a;
	charge(acct, extra);
	if (res != NULL) {
		res->allocated = after;
		res->peak = MAX(res->peak, after);
	}
	a.outcome = GS_SPACE_ALLOC_OK;
	a.charged = extra;
	return a;
}

gint64
gs_space_account_free_bytes(GsSpaceAccount *acct, gint64 bytes, GsSpaceReservation *res)
{
	gint64 padded, credit;

	g_return_val_if_fail(acct != NULL, 0);
	g_return_val_if_fail(can_round_up(bytes, acct->granule), 0);
	padded = round_up(bytes, acct->granule);
	if (res != NULL && res->live) {
		/*
		 * allocated may go below 0 if the caller attributes a free to a
		 * reservation it was not allocated from (the reference's
		 * per-stream attribution); that is the caller's model to keep.
		 */
		credit = beyond(res->size, res->allocated - padded, res->allocated);
		g_return_val_if_fail(credit <= acct->charged, 0);
		res->allocated -= padded;
	} else {
		/* Untracked, or the reservation is gone: all of it was charged. */
		credit = padded;
		g_return_val_if_fail(credit <= acct->charged, 0);
	}
	acct->charged -= credit;
	return credit;
}

gboolean
gs_space_account_grow(GsSpaceAccount *acct, GsSpaceReservation *res, gint64 bytes)
{
	gint64 add = bytes;

	g_return_val_if_fail(acct != NULL && res != NULL, FALSE);
	g_return_val_if_fail(res->live, FALSE);
	g_return_val_if_fail(can_round_up(bytes, acct->granule), FALSE);
	switch (acct->tier) {
	case GS_TIER_GPU:
		break;
	case GS_TIER_HOST:
		add = round_up(bytes, acct->granule);
		break;
	case GS_TIER_DISK:
		/* disk_reserved_arena::grow_by always says no. */
		return FALSE;
	}
	if (!fits_limit(acct, add))
		return FALSE;
	charge(acct, add);
	res->size += add;
	return TRUE;
}

gint64
gs_space_account_shrink_to_fit(GsSpaceAccount *acct, GsSpaceReservation *res)
{
	gint64 target, refund;

	g_return_val_if_fail(acct != NULL && res != NULL, 0);
	g_return_val_if_fail(res->live, 0);
	switch (acct->tier) {
	case GS_TIER_GPU:
	case GS_TIER_HOST:
		break;
	case GS_TIER_DISK:
		return 0;
	}
	/* A size is never negative (reservation::size() clamps at 0). */
	target = MAX(0, res->allocated);
	if (target >= res->size)
		return 0;
	refund = res->size - target;
	acct->charged -= refund;
	res->size = target;
	return refund;
}

GsDowngradeDecision
gs_space_account_downgrade(const GsSpaceAccount *acct, gboolean in_progress)
{
	g_return_val_if_fail(acct != NULL, GS_DOWNGRADE_NONE);
	return gs_space_downgrade_decide(&acct->t, acct->charged, in_progress);
}

/* ---- HOST fixed-size blocks ---- */

struct GsHostBlocks {
	gint64 block_size; /* rounded to GS_HOST_BLOCK_ALIGNMENT */
	guint pool_blocks;
	guint pools;
	guint max_pools;
	gint64 in_use;
};

GsHostBlocks *
gs_host_blocks_new(gint64 block_size, guint pool_blocks, guint initial_pools, gint64 capacity)
{
	GsHostBlocks *hb;
	gint64 pool_bytes, covering;

	g_return_val_if_fail(can_round_up(block_size, GS_HOST_BLOCK_ALIGNMENT) && block_size > 0,
			     NULL);
	g_return_val_if_fail(pool_blocks > 0, NULL);
	g_return_val_if_fail(capacity >= 0, NULL);
	block_size = round_up(block_size, GS_HOST_BLOCK_ALIGNMENT);
	g_return_val_if_fail(block_size <= G_MAXINT64 / pool_blocks, NULL);
	pool_bytes = block_size * pool_blocks;
	g_return_val_if_fail(initial_pools <= G_MAXINT64 / pool_bytes, NULL);

	/*
	 * Enough pools to hold the whole capacity, rounded up: the charged
	 * counter lets up to capacity bytes be allocated, and each of them
	 * needs a block. Capped so that pools x pool bytes stays a gint64.
	 */
	covering = capacity / pool_bytes + (capacity % pool_bytes != 0);
	covering = MIN(covering, G_MAXINT64 / pool_bytes);
	covering = MIN(covering, (gint64) G_MAXUINT);

	hb = g_new0(GsHostBlocks, 1);
	hb->block_size = block_size;
	hb->pool_blocks = pool_blocks;
	hb->pools = initial_pools;
	hb->max_pools = MAX(initial_pools, (guint) covering);
	return hb;
}

void
gs_host_blocks_free(GsHostBlocks *hb)
{
	g_free(hb);
}

gint64
gs_host_blocks_get_block_size(const GsHostBlocks *hb)
{
	return hb->block_size;
}

guint
gs_host_blocks_get_pool_blocks(const GsHostBlocks *hb)
{
	return hb->pool_blocks;
}

guint
gs_host_blocks_get_max_pools(const GsHostBlocks *hb)
{
	return hb->max_pools;
}

gint64
gs_host_blocks_for_bytes(const GsHostBlocks *hb, gint64 bytes)
{
	g_return_val_if_fail(hb != NULL && bytes >= 0, 0);
	return bytes / hb->block_size + (bytes % hb->block_size != 0);
}

gint64
gs_host_blocks_total(const GsHostBlocks *hb)
{
	return (gint64) hb->pools * hb->pool_blocks;
}

gint64
gs_host_blocks_free_count(const GsHostBlocks *hb)
{
	return gs_host_blocks_total(hb) - hb->in_use;
}

gint64
gs_host_blocks_alloc(GsHostBlocks *hb, gint64 bytes)
{
	gint64 n, missing, wanted;

	g_return_val_if_fail(hb != NULL && bytes >= 0, GS_HOST_BLOCKS_FAILED);
	n = gs_host_blocks_for_bytes(hb, bytes);
	missing = n - gs_host_blocks_free_count(hb);
	if (missing > 0) {
		/*
		 * The reference pops blocks one by one and adds one pool each time
		 * the free list is empty, so exactly ceil(missing / pool) pools
		 * are added, or as many as the system lends before it fails; those
		 * stay, since pools are never returned.
		 */
		wanted = missing / hb->pool_blocks + (missing % hb->pool_blocks != 0);
		hb->pools += (guint) MIN(wanted, (gint64) (hb->max_pools - hb->pools));
		if (n > gs_host_blocks_free_count(hb))
			return GS_HOST_BLOCKS_FAILED;
	}
	hb->in_use += n;
	return n;
}

void
gs_host_blocks_free_blocks(GsHostBlocks *hb, gint64 n_blocks)
{
	g_return_if_fail(hb != NULL);
	g_return_if_fail(n_blocks >= 0 && n_blocks <= hb->in_use);
	/* Back on the free list; the pool memory itself is kept until destruction. */
	hb->in_use -= n_blocks;
}

gint64
gs_host_blocks_in_use(const GsHostBlocks *hb)
{
	return hb->in_use;
}

guint
gs_host_blocks_pools(const GsHostBlocks *hb)
{
	return hb->pools;
}

gint64
gs_host_blocks_system_bytes(const GsHostBlocks *hb)
{
	return gs_host_blocks_total(hb) * hb->block_size;
}
