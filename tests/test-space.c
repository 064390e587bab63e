/*
 * Unit tests of space.h: thresholds (truncation of capacity x fraction), the
 * downgrade hysteresis with the worked numbers of
 * reference/tiers-spill-pages-evac.md §A.11, the charged counter of §A.2,
 * §A.3, §A.6 and §A.8 (reservations, allocations inside and beyond them,
 * release, free, grow, shrink) and the HOST fixed-size blocks of §A.9.
 */
#include <check.h>
#include <gpusim/space.h>

#include "testlib.h"

#define KiB (G_GINT64_CONSTANT(1) << 10)
#define MiB (G_GINT64_CONSTANT(1) << 20)
#define GiB (G_GINT64_CONSTANT(1) << 30)

static const GsSpaceFractions struct_defaults = GS_SPACE_FRACTIONS_DEFAULT;
static const GsSpaceFractions builder_defaults = GS_SPACE_FRACTIONS_BUILDER;
static const GsSpaceFractions disk_defaults = GS_SPACE_FRACTIONS_DISK;

/* ---- capacity x fraction, truncated ---- */

typedef struct {
	/* Inputs */
	gint64 capacity;
	double fraction;
	/* Outputs */
	gint64 expected;
} FractionRow;

static const FractionRow fraction_rows[] = {
	{ 8 * GiB, 0.9, 7730941132 },  /* 7730941132.8 */
	{ 8 * GiB, 0.75, 6442450944 }, /* exact */
	{ 8 * GiB, 0.65, 5583457484 }, /* 5583457484.8 */
	{ 8 * GiB, 0.85, 7301444403 }, /* 7301444403.2 */
	{ 8 * GiB, 0.99, 8504035246 }, /* 8504035246.08 */
	{ 2 * GiB, 0.75, 1610612736 }, /* §A.2: get_max_memory() = 1.5 GiB */
	{ 1 * GiB, 0.85, 912680550 },  /* builder GPU default capacity */
	{ 4 * GiB, 0.85, 3650722201 }, /* builder HOST default capacity */
	{ 100, 0.29, 28 },             /* the double product is 28.999999999999996 */
	{ 3, 0.1, 0 },
	{ 1000, 0.9, 900 },
	{ 0, 0.9, 0 },
	{ 12345, 0.0, 0 },
	{ 12345, 1.0, 12345 },
	{ G_MAXINT64, 1.0, G_MAXINT64 }, /* clamped: the product rounds up to 2^63 */
};

START_TEST(test_fraction_of)
{
	const FractionRow *row = &fraction_rows[_i];

	ck_assert_int_eq(gs_space_fraction_of(row->capacity, row->fraction), row->expected);
}
END_TEST

/* ---- the worked table of §A.11 ---- */

typedef struct {
	/* Inputs */
	const char *what;
	gint64 capacity;
	const GsSpaceFractions *fractions;
	/* Outputs */
	gint64 limit, trigger, stop; /* as stored */
	gint64 start_at, stop_at;    /* in charged bytes */
} WorkedRow;

static const WorkedRow worked_rows[] = {
    /* struct defaults: start at 0.85 C ("~6.8 GiB, 7,301,444,404 bytes"), stop at 6.0 GiB */
    {"struct 8GiB", 8 * GiB, &struct_defaults, 7730941132, 6442450944, 5583457484, 7301444404,
     6 * GiB},
    /* builder defaults: start only when full, stop at 0.80 C */
    {"builder 8GiB", 8 * GiB, &builder_defaults, 7301444403, 7301444403, 5583457484, 8 * GiB,
     6871947673},
    /* DISK: limit = trigger = C, stop at 0.99 C; no headroom */
    {"disk 8GiB", 8 * GiB, &disk_defaults, 8 * GiB, 8 * GiB, 8504035246, 8 * GiB, 8504035246},
    /* the builder's own capacities */
    {"builder gpu 1GiB", 1 * GiB, &builder_defaults, 912680550, 912680550, 697932185, 1 * GiB,
     858993459},
    {"builder host 4GiB", 4 * GiB, &builder_defaults, 3650722201, 3650722201, 2791728742, 4 * GiB,
     3435973837},
    /* a small space: every number exact */
    {"struct 1000", 1000, &struct_defaults, 900, 750, 650, 850, 750},
};

START_TEST(test_worked_thresholds)
{
	const WorkedRow *row = &worked_rows[_i];
	GsSpaceThresholds t = gs_space_thresholds(row->capacity, row->fractions);

	ck_assert_msg(t.capacity == row->capacity, "%s", row->what);
	ck_assert_int_eq(t.reservation_limit, row->limit);
	ck_assert_int_eq(t.downgrade_trigger, row->trigger);
	ck_assert_int_eq(t.downgrade_stop, row->stop);
	ck_assert_int_eq(gs_space_downgrade_start_at(&t), row->start_at);
	ck_assert_int_eq(gs_space_downgrade_stop_at(&t), row->stop_at);
	/* the points themselves, from both sides */
	ck_assert(gs_space_should_downgrade(&t, row->start_at));
	ck_assert(!gs_space_should_downgrade(&t, row->start_at - 1));
	ck_assert(gs_space_should_stop_downgrading(&t, row->stop_at));
	if (row->stop_at < row->capacity)
		ck_assert(!gs_space_should_stop_downgrading(&t, row->stop_at + 1));
	ck_assert_int_eq(gs_space_downgrade_amount(&t, row->stop_at), 0);
	ck_assert_int_eq(gs_space_downgrade_amount(&t, row->start_at),
			 row->start_at - row->stop_at);
}
END_TEST

/* ---- decisions on the 8 GiB struct-default space ---- */

typedef struct {
	/* Inputs */
	gint64 charged;
	gboolean in_progress;
	/* Outputs */
	GsDowngradeDecision decision;
	gint64 amount;
} DecisionRow;

static const DecisionRow decision_rows[] = {
	{ 0, FALSE, GS_DOWNGRADE_NONE, 0 },
	{ 0, TRUE, GS_DOWNGRADE_STOP, 0 },
	/* U = C - L: available == limit, the PR #100 guard */
	{ 858993460, FALSE, GS_DOWNGRADE_NONE, 0 },
	{ 858993460, TRUE, GS_DOWNGRADE_STOP, 0 },
	{ 6 * GiB, TRUE, GS_DOWNGRADE_STOP, 0 },
	{ 6 * GiB + 1, TRUE, GS_DOWNGRADE_CONTINUE, 1 },
	/* inside the band: the answer depends on the past; the amount is already positive */
	{ 7000000000, FALSE, GS_DOWNGRADE_NONE, 557549056 },
	{ 7000000000, TRUE, GS_DOWNGRADE_CONTINUE, 557549056 },
	{ 7301444403, FALSE, GS_DOWNGRADE_NONE, 858993459 },
	{ 7301444404, FALSE, GS_DOWNGRADE_START, 858993460 },
	{ 7301444404, TRUE, GS_DOWNGRADE_CONTINUE, 858993460 },
	{ 8 * GiB, FALSE, GS_DOWNGRADE_START, 2 * GiB },
	{ 8 * GiB, TRUE, GS_DOWNGRADE_CONTINUE, 2 * GiB },
	/* above capacity available clamps to 0, so consumed = L */
	{ 9 * GiB, FALSE, GS_DOWNGRADE_START, 7730941132 - 5583457484 },
};

START_TEST(test_decide_struct_8gib)
{
	const DecisionRow *row = &decision_rows[_i];
	GsSpaceThresholds t = gs_space_thresholds(8 * GiB, &struct_defaults);

	ck_assert_str_eq(gs_downgrade_decision_name(gs_space_downgrade_decide(&t, row->charged,
									     row->in_progress)),
			 gs_downgrade_decision_name(row->decision));
	ck_assert_int_eq(gs_space_downgrade_amount(&t, row->charged), row->amount);
}
END_TEST

/* The corrected formula reads the fractions as points of the counter. */
static const DecisionRow charged_rows[] = {
	{ 0, FALSE, GS_DOWNGRADE_NONE, 0 },
	{ 5583457484, TRUE, GS_DOWNGRADE_STOP, 0 },
	{ 5583457485, TRUE, GS_DOWNGRADE_CONTINUE, 1 },
	{ 6442450943, FALSE, GS_DOWNGRADE_NONE, 858993459 },
	{ 6442450944, FALSE, GS_DOWNGRADE_START, 858993460 },
	{ 7301444404, TRUE, GS_DOWNGRADE_CONTINUE, 1717986920 },
};

START_TEST(test_decide_charged_formula)
{
	const DecisionRow *row = &charged_rows[_i];
	GsSpaceFractions f = GS_SPACE_FRACTIONS_DEFAULT;
	GsSpaceThresholds t;

	f.formula = GS_DOWNGRADE_FORMULA_CHARGED;
	t = gs_space_thresholds(8 * GiB, &f);
	ck_assert_int_eq(gs_space_downgrade_start_at(&t), 6442450944);
	ck_assert_int_eq(gs_space_downgrade_stop_at(&t), 5583457484);
	ck_assert_int_eq(gs_space_downgrade_decide(&t, row->charged, row->in_progress),
			 row->decision);
	ck_assert_int_eq(gs_space_downgrade_amount(&t, row->charged), row->amount);
}
END_TEST

/*
 * start_at and stop_at describe the predicates exactly for every charged count
 * in [0, C], including odd configurations (trigger 0, trigger above the limit,
 * stop above the trigger, limit 0).
 */
typedef struct {
	gint64 capacity;
	GsSpaceFractions f;
} SweepRow;

static const SweepRow sweep_rows[] = {
	{ 1000, GS_SPACE_FRACTIONS_DEFAULT },
	{ 997, GS_SPACE_FRACTIONS_DEFAULT },
	{ 997, GS_SPACE_FRACTIONS_BUILDER },
	{ 997, GS_SPACE_FRACTIONS_DISK },
	{ 500, { 0.9, 0.0, 0.0, GS_DOWNGRADE_FORMULA_REFERENCE } },
	{ 500, { 0.8, 0.95, 0.5, GS_DOWNGRADE_FORMULA_REFERENCE } },
	{ 500, { 0.9, 0.5, 0.7, GS_DOWNGRADE_FORMULA_REFERENCE } },
	{ 500, { 0.0, 0.75, 0.65, GS_DOWNGRADE_FORMULA_REFERENCE } },
	{ 333, { 0.9, 0.75, 0.65, GS_DOWNGRADE_FORMULA_CHARGED } },
	{ 1, GS_SPACE_FRACTIONS_DEFAULT },
};

START_TEST(test_start_stop_exact)
{
	const SweepRow *row = &sweep_rows[_i];
	GsSpaceThresholds t = gs_space_thresholds(row->capacity, &row->f);
	gint64 start_at = gs_space_downgrade_start_at(&t);
	gint64 stop_at = gs_space_downgrade_stop_at(&t);

	for (gint64 u = 0; u <= row->capacity; u++) {
		ck_assert_msg(gs_space_should_downgrade(&t, u) == (u >= start_at),
			      "row %d U %" G_GINT64_FORMAT, _i, u);
		ck_assert_msg(gs_space_should_stop_downgrading(&t, u) == (u <= stop_at),
			      "row %d U %" G_GINT64_FORMAT, _i, u);
		ck_assert_int_eq(gs_space_downgrade_amount(&t, u), MAX(0, u - stop_at));
	}
}
END_TEST

/* A space's counter rising and falling: the hysteresis as a caller sees it. */
START_TEST(test_hysteresis_walk)
{
	static const struct {
		gint64 charged;
		GsDowngradeDecision expected;
	} steps[] = {
		{ 700, GS_DOWNGRADE_NONE },     /* between stop (750) and trigger (850) */
		{ 849, GS_DOWNGRADE_NONE },
		{ 850, GS_DOWNGRADE_START },
		{ 820, GS_DOWNGRADE_CONTINUE }, /* below the trigger, still above the stop */
		{ 751, GS_DOWNGRADE_CONTINUE },
		{ 750, GS_DOWNGRADE_STOP },
		{ 800, GS_DOWNGRADE_NONE },     /* back into the band: stays off */
		{ 900, GS_DOWNGRADE_START },
		{ 100, GS_DOWNGRADE_STOP },
	};
	GsSpaceThresholds t = gs_space_thresholds(1000, &struct_defaults);
	gboolean in_progress = FALSE;

	for (guint i = 0; i < G_N_ELEMENTS(steps); i++) {
		GsDowngradeDecision d =
		    gs_space_downgrade_decide(&t, steps[i].charged, in_progress);

		ck_assert_msg(d == steps[i].expected, "step %u: %s", i,
			      gs_downgrade_decision_name(d));
		in_progress = d == GS_DOWNGRADE_START || d == GS_DOWNGRADE_CONTINUE;
	}
}
END_TEST

START_TEST(test_decision_names)
{
	ck_assert_str_eq(gs_downgrade_decision_name(GS_DOWNGRADE_NONE), "none");
	ck_assert_str_eq(gs_downgrade_decision_name(GS_DOWNGRADE_START), "start");
	ck_assert_str_eq(gs_downgrade_decision_name(GS_DOWNGRADE_CONTINUE), "continue");
	ck_assert_str_eq(gs_downgrade_decision_name(GS_DOWNGRADE_STOP), "stop");
	ck_assert_str_eq(gs_reservation_outcome_name(GS_RESERVATION_GRANTED), "granted");
	ck_assert_str_eq(gs_reservation_outcome_name(GS_RESERVATION_REFUSED), "refused");
	ck_assert_str_eq(gs_reservation_outcome_name(GS_RESERVATION_WAIT), "wait");
	ck_assert_str_eq(gs_reservation_outcome_name(GS_RESERVATION_TOO_LARGE), "too_large");
}
END_TEST

/* ---- the charged counter ---- */

/* A space of C = 1000, L = 900 with @tier and @granule. */
static GsSpaceAccount *
small_account(GsTier tier, gint64 granule)
{
	GsSpaceThresholds t = gs_space_thresholds(1000, &struct_defaults);

	return gs_space_account_new(tier, &t, granule);
}

/* §A.2's test: a fresh 2 GiB GPU space with fraction 0.75. */
START_TEST(test_account_fresh)
{
	GsSpaceFractions f = GS_SPACE_FRACTIONS_DEFAULT;
	GsSpaceThresholds t;
	g_autoptr(GsSpaceAccount) acct = NULL;

	f.reservation_limit = 0.75;
	t = gs_space_thresholds(2 * GiB, &f);
	acct = gs_space_account_new(GS_TIER_GPU, &t, 256);
	ck_assert_int_eq(gs_space_account_available(acct), 2 * GiB);
	ck_assert_int_eq(gs_space_account_get_thresholds(acct)->reservation_limit, 1536 * MiB);
	ck_assert_int_eq(gs_space_account_charged(acct), 0);
	ck_assert_int_eq(gs_space_account_active(acct), 0);
	ck_assert_int_eq(gs_space_account_get_tier(acct), GS_TIER_GPU);
	ck_assert_int_eq(gs_space_account_get_granule(acct), 256);
	ck_assert_int_eq(gs_space_account_get_blocking(acct), GS_BLOCKING_WAIT);
	ck_assert_int_eq(gs_space_account_downgrade(acct, FALSE), GS_DOWNGRADE_NONE);
}
END_TEST

typedef struct {
	/* Inputs: a space of C = 1000, L = 900 */
	GsTier tier;
	gint64 granule;
	GsBlockingRule blocking;
	gint64 reserved;   /* charged first by a live or_null reservation (0: none) */
	gint64 unreserved; /* then charged by an allocation with no reservation */
	GsReserveMode mode;
	gint64 bytes;
	/* Outputs */
	GsReservationOutcome outcome;
	gint64 size;
	gint64 rounded;
	gint64 fits_now;
} ReserveRow;

#define GPU GS_TIER_GPU, 1
#define HOST GS_TIER_HOST, 100
#define DISK GS_TIER_DISK, 1
#define WAIT GS_BLOCKING_WAIT
#define IDLE GS_BLOCKING_IDLE_UPTO

static const ReserveRow reserve_rows[] = {
	/* or_null: all or nothing against L = 900 */
	{ GPU, WAIT, 0, 0, GS_RESERVE_OR_NULL, 900, GS_RESERVATION_GRANTED, 900, 900, 900 },
	{ GPU, WAIT, 0, 0, GS_RESERVE_OR_NULL, 901, GS_RESERVATION_REFUSED, 0, 901, 900 },
	{ GPU, WAIT, 850, 0, GS_RESERVE_OR_NULL, 50, GS_RESERVATION_GRANTED, 50, 50, 50 },
	{ GPU, WAIT, 850, 0, GS_RESERVE_OR_NULL, 51, GS_RESERVATION_REFUSED, 0, 51, 50 },
	/* unreserved bytes above L: even 0 bytes do not fit (U + 0 <= L fails) */
	{ GPU, WAIT, 0, 950, GS_RESERVE_OR_NULL, 0, GS_RESERVATION_REFUSED, 0, 0, 0 },
	{ DISK, WAIT, 0, 0, GS_RESERVE_OR_NULL, 1000, GS_RESERVATION_REFUSED, 0, 1000, 900 },
	/* upto: as much as fits, possibly 0 */
	{ GPU, WAIT, 850, 0, GS_RESERVE_UPTO, 100, GS_RESERVATION_GRANTED, 50, 100, 50 },
	{ GPU, WAIT, 900, 0, GS_RESERVE_UPTO, 100, GS_RESERVATION_GRANTED, 0, 100, 0 },
	{ GPU, WAIT, 0, 950, GS_RESERVE_UPTO, 100, GS_RESERVATION_GRANTED, 0, 100, 0 },
	{ GPU, WAIT, 0, 0, GS_RESERVE_UPTO, 0, GS_RESERVATION_GRANTED, 0, 0, 0 },
	{ GPU, WAIT, 0, 0, GS_RESERVE_UPTO, 5000, GS_RESERVATION_GRANTED, 900, 5000, 900 },
	/* block (SPEC): too large at once, granted if it fits, else wait */
	{ GPU, WAIT, 0, 0, GS_RESERVE_BLOCK, 901, GS_RESERVATION_TOO_LARGE, 0, 901, 900 },
	{ GPU, WAIT, 850, 0, GS_RESERVE_BLOCK, 50, GS_RESERVATION_GRANTED, 50, 50, 50 },
	{ GPU, WAIT, 850, 0, GS_RESERVE_BLOCK, 100, GS_RESERVATION_WAIT, 0, 100, 50 },
	{ GPU, WAIT, 0, 950, GS_RESERVE_BLOCK, 100, GS_RESERVATION_WAIT, 0, 100, 0 },
	/* block (the reference's code): wait while a reservation is live, else upto */
	{ GPU, IDLE, 850, 0, GS_RESERVE_BLOCK, 100, GS_RESERVATION_WAIT, 0, 100, 50 },
	{ GPU, IDLE, 0, 850, GS_RESERVE_BLOCK, 100, GS_RESERVATION_IDLE, 50, 100, 50 },
	{ GPU, IDLE, 0, 0, GS_RESERVE_BLOCK, 901, GS_RESERVATION_IDLE, 900, 901, 900 },
	{ GPU, IDLE, 0, 950, GS_RESERVE_BLOCK, 100, GS_RESERVATION_IDLE, 0, 100, 0 },
	{ GPU, IDLE, 850, 0, GS_RESERVE_BLOCK, 901, GS_RESERVATION_WAIT, 0, 901, 50 },
	/* HOST: rounded to whole blocks of 100; above L throws (too large) */
	{ HOST, WAIT, 0, 0, GS_RESERVE_OR_NULL, 850, GS_RESERVATION_GRANTED, 900, 900, 900 },
	{ HOST, WAIT, 0, 0, GS_RESERVE_OR_NULL, 901, GS_RESERVATION_TOO_LARGE, 0, 1000, 900 },
	{ HOST, WAIT, 800, 0, GS_RESERVE_OR_NULL, 1, GS_RESERVATION_GRANTED, 100, 100, 100 },
	{ HOST, WAIT, 900, 0, GS_RESERVE_OR_NULL, 1, GS_RESERVATION_REFUSED, 0, 100, 0 },
	{ HOST, WAIT, 800, 0, GS_RESERVE_UPTO, 150, GS_RESERVATION_GRANTED, 100, 200, 100 },
	{ HOST, WAIT, 0, 0, GS_RESERVE_UPTO, 901, GS_RESERVATION_GRANTED, 900, 1000, 900 },
	{ HOST, IDLE, 0, 0, GS_RESERVE_BLOCK, 901, GS_RESERVATION_TOO_LARGE, 0, 1000, 900 },
	{ HOST, WAIT, 0, 0, GS_RESERVE_BLOCK, 0, GS_RESERVATION_GRANTED, 0, 0, 0 },
};

START_TEST(test_reserve)
{
	const ReserveRow *row = &reserve_rows[_i];
	GsSpaceThresholds t = gs_space_thresholds(1000, &struct_defaults);
	g_autoptr(GsSpaceAccount) acct = gs_space_account_new(row->tier, &t, row->granule);
	GsSpaceReservation first = { 0 }, res = { .size = -1 };
	GsReserveResult r;
	gint64 before;
	guint active;

	gs_space_account_set_blocking(acct, row->blocking);
	if (row->reserved > 0) {
		r = gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, row->reserved, &first);
		ck_assert_int_eq(r.outcome, GS_RESERVATION_GRANTED);
	}
	if (row->unreserved > 0)
		ck_assert_int_eq(gs_space_account_allocate(acct, row->unreserved, NULL).outcome,
				 GS_SPACE_ALLOC_OK);
	before = gs_space_account_charged(acct);
	active = gs_space_account_active(acct);

	r = gs_space_account_reserve(acct, row->mode, row->bytes, &res);
	ck_assert_msg(r.outcome == row->outcome, "row %d: %s", _i,
		      gs_reservation_outcome_name(r.outcome));
	ck_assert_int_eq(r.size, row->size);
	ck_assert_int_eq(r.rounded, row->rounded);
	ck_assert_int_eq(r.fits_now, row->fits_now);
	if (gs_reservation_outcome_held(r.outcome)) {
		/* charged now, counted live even at 0 bytes */
		ck_assert_int_eq(gs_space_account_charged(acct), before + row->size);
		ck_assert_uint_eq(gs_space_account_active(acct), active + 1);
		ck_assert(res.live);
		ck_assert_int_eq(res.size, row->size);
		ck_assert_int_eq(res.allocated, 0);
		ck_assert_int_eq(gs_space_account_release(acct, &res), row->size);
	} else {
		ck_assert_int_eq(res.size, -1); /* untouched */
	}
	ck_assert_int_eq(gs_space_account_charged(acct), before);
	ck_assert_uint_eq(gs_space_account_active(acct), active);
}
END_TEST

/* The IDLE fallback depends on live reservations, 0-byte ones included. */
/*
 * The notification channel: a release wakes one waiter and posts a sticky
 * notification; the last live reservation's release wakes them all; a
 * woken waiter sees SHUTDOWN, then the notification (taken once), then
 * IDLE; wake-ups nobody took are lost, the notification is not.
 */
START_TEST(test_channel)
{
	GsSpaceThresholds t = gs_space_thresholds(1000, &struct_defaults);
	g_autoptr(GsSpaceAccount) acct = gs_space_account_new(GS_TIER_GPU, &t, 1);
	GsSpaceReservation r1 = {0}, r2 = {0}, r3 = {0};

	gs_space_account_set_blocking(acct, GS_BLOCKING_IDLE_UPTO);
	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 500, &r1);
	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 300, &r2);
	ck_assert(!gs_space_account_woken(acct));
	ck_assert_int_eq(gs_space_account_wait(acct), GS_CHANNEL_BLOCKED);
	gs_space_account_release(acct, &r1);
	ck_assert(gs_space_account_woken(acct));
	ck_assert(!gs_space_account_woken(acct)); /* one waiter per release */
	ck_assert_int_eq(gs_space_account_wait(acct), GS_CHANNEL_NOTIFIED);
	ck_assert_int_eq(gs_space_account_wait(acct), GS_CHANNEL_BLOCKED);
	gs_space_account_settle(acct);
	gs_space_account_release(acct, &r2); /* the last one: every waiter wakes */
	ck_assert(gs_space_account_woken(acct));
	ck_assert(gs_space_account_woken(acct));
	gs_space_account_settle(acct);
	ck_assert(!gs_space_account_woken(acct));
	ck_assert_int_eq(gs_space_account_wait(acct), GS_CHANNEL_NOTIFIED); /* sticky */
	ck_assert_int_eq(gs_space_account_wait(acct), GS_CHANNEL_IDLE);
	/* A request that would wait takes a notification left for nobody. */
	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 900, &r3);
	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_BLOCK, 100, &r1).outcome,
			 GS_RESERVATION_WAIT);
	gs_space_account_shutdown(acct);
	ck_assert(gs_space_account_woken(acct));
	ck_assert_int_eq(gs_space_account_wait(acct), GS_CHANNEL_SHUTDOWN);
	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_BLOCK, 100, &r1).outcome,
			 GS_RESERVATION_SHUTDOWN);
	ck_assert_str_eq(gs_reservation_outcome_name(GS_RESERVATION_IDLE), "idle");
	ck_assert(gs_reservation_outcome_held(GS_RESERVATION_IDLE));
	ck_assert(!gs_reservation_outcome_held(GS_RESERVATION_SHUTDOWN));
}
END_TEST

START_TEST(test_block_idle_counts_live)
{
	g_autoptr(GsSpaceAccount) acct = small_account(GS_TIER_GPU, 1);
	GsSpaceReservation zero, big, got;
	GsReserveResult r;

	gs_space_account_set_blocking(acct, GS_BLOCKING_IDLE_UPTO);
	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 900, &big).outcome,
			 GS_RESERVATION_GRANTED);
	/* a 0-byte upto reservation is live */
	r = gs_space_account_reserve(acct, GS_RESERVE_UPTO, 10, &zero);
	ck_assert_int_eq(r.outcome, GS_RESERVATION_GRANTED);
	ck_assert_int_eq(r.size, 0);
	ck_assert_uint_eq(gs_space_account_active(acct), 2);
	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_BLOCK, 10, &got).outcome,
			 GS_RESERVATION_WAIT);
	/* releasing the big one refunds 900; now 10 fits outright */
	ck_assert_int_eq(gs_space_account_release(acct, &big), 900);
	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_BLOCK, 10, &got).outcome,
			 GS_RESERVATION_GRANTED);
	ck_assert_int_eq(gs_space_account_release(acct, &got), 10);
	/* with the 0-byte one still live, an oversize request keeps waiting */
	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_BLOCK, 2000, &got).outcome,
			 GS_RESERVATION_WAIT);
	ck_assert_int_eq(gs_space_account_release(acct, &zero), 0);
	ck_assert_uint_eq(gs_space_account_active(acct), 0);
	/* idle: it takes what fits, the whole limit */
	r = gs_space_account_reserve(acct, GS_RESERVE_BLOCK, 2000, &got);
	ck_assert_int_eq(r.outcome, GS_RESERVATION_IDLE);
	ck_assert_int_eq(r.size, 900);
	ck_assert_int_eq(gs_space_account_charged(acct), 900);
}
END_TEST

/* Allocations inside a reservation of 1024 on a GPU space (granule 256). */
typedef struct {
	/* Inputs */
	gint64 allocated; /* already allocated inside the reservation */
	gint64 bytes;
	/* Outputs */
	gint64 padded;
	gint64 charged; /* the part beyond the reservation */
} InsideRow;

static const InsideRow inside_rows[] = {
	{ 0, 100, 256, 0 },      /* padded, inside */
	{ 0, 1024, 1024, 0 },    /* exactly fills it */
	{ 768, 256, 256, 0 },
	{ 768, 512, 512, 256 },  /* straddles: the part above 1024 */
	{ 0, 2048, 2048, 1024 }, /* §A.7's "request 2048 on a 1024 reservation" */
	{ 1024, 1, 256, 256 },   /* already full: all of it */
	{ 1536, 300, 512, 512 }, /* already over: all of it */
	{ 0, 0, 0, 0 },
};

START_TEST(test_allocate_inside)
{
	const InsideRow *row = &inside_rows[_i];
	GsSpaceThresholds t = gs_space_thresholds(2 * GiB, &struct_defaults);
	g_autoptr(GsSpaceAccount) acct = gs_space_account_new(GS_TIER_GPU, &t, 256);
	GsSpaceReservation res;
	GsSpaceAlloc a;
	gint64 before;

	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 1024, &res).outcome,
			 GS_RESERVATION_GRANTED);
	if (row->allocated > 0)
		ck_assert_int_eq(gs_space_account_allocate(acct, row->allocated, &res).outcome,
				 GS_SPACE_ALLOC_OK);
	before = gs_space_account_charged(acct);
	a = gs_space_account_allocate(acct, row->bytes, &res);
	ck_assert_int_eq(a.outcome, GS_SPACE_ALLOC_OK);
	ck_assert_int_eq(a.padded, row->padded);
	ck_assert_int_eq(a.charged, row->charged);
	ck_assert_int_eq(gs_space_account_charged(acct), before + row->charged);
	ck_assert_int_eq(res.allocated, row->allocated + row->padded);
	ck_assert_int_eq(res.peak, res.allocated);
	/* freeing it on the same reservation credits exactly what it charged */
	ck_assert_int_eq(gs_space_account_free_bytes(acct, row->bytes, &res), row->charged);
	ck_assert_int_eq(gs_space_account_charged(acct), before);
	ck_assert_int_eq(res.allocated, row->allocated);
}
END_TEST

/* Unreserved and over-reservation bytes are bounded by C, not by L. */
START_TEST(test_allocate_capacity)
{
	g_autoptr(GsSpaceAccount) acct = small_account(GS_TIER_GPU, 1);
	GsSpaceReservation res;
	GsSpaceAlloc a;

	ck_assert_int_eq(gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 900, &res).outcome,
			 GS_RESERVATION_GRANTED);
	/* 950 in a 900 reservation: 50 beyond, U = 950 <= C */
	a = gs_space_account_allocate(acct, 950, &res);
	ck_assert_int_eq(a.outcome, GS_SPACE_ALLOC_OK);
	ck_assert_int_eq(a.charged, 50);
	ck_assert_int_eq(gs_space_account_charged(acct), 950);
	/* 60 more would make 1010 > C: refused, nothing changes */
	a = gs_space_account_allocate(acct, 60, &res);
	ck_assert_int_eq(a.outcome, GS_SPACE_ALLOC_EXHAUSTED);
	ck_assert_int_eq(res.allocated, 950);
	ck_assert_int_eq(gs_space_account_charged(acct), 950);
	/* unreserved: 51 too many, 50 exactly fills the capacity */
	ck_assert_int_eq(gs_space_account_allocate(acct, 51, NULL).outcome,
			 GS_SPACE_ALLOC_EXHAUSTED);
	a = gs_space_account_allocate(acct, 50, NULL);
	ck_assert_int_eq(a.outcome, GS_SPACE_ALLOC_OK);
	ck_assert_int_eq(a.charged, 50);
	ck_assert_int_eq(gs_space_account_available(acct), 0);
	ck_assert_int_eq(gs_space_account_peak(acct), 1000);
	/* full: the reference formula says start downgrading */
	ck_assert_int_eq(gs_space_account_downgrade(acct, FALSE), GS_DOWNGRADE_START);
}
END_TEST

/*
 * Frees from a reservation of 1000 holding 1200 (200 charged beyond it): each
 * credits only the part of its bytes that lay above the size.
 */
START_TEST(test_free_straddle)
{
	static const struct {
		gint64 bytes, credit, allocated_after, charged_after;
	} steps[] = {
		{ 100, 100, 1100, 1100 }, /* pre 1200, post 1100: all above */
		{ 300, 100, 800, 1000 },  /* pre 1100, post 800: straddles */
		{ 500, 0, 300, 1000 },    /* pre 800 <= size: nothing */
	};
	GsSpaceThresholds t = gs_space_thresholds(10000, &struct_defaults);
	g_autoptr(GsSpaceAccount) acct = gs_space_account_new(GS_TIER_GPU, &t, 1);
	GsSpaceReservation res;

	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 1000, &res);
	ck_assert_int_eq(gs_space_account_allocate(acct, 1200, &res).charged, 200);
	ck_assert_int_eq(gs_space_account_charged(acct), 1200);
	for (guint i = 0; i < G_N_ELEMENTS(steps); i++) {
		ck_assert_int_eq(gs_space_account_free_bytes(acct, steps[i].bytes, &res),
				 steps[i].credit);
		ck_assert_int_eq(res.allocated, steps[i].allocated_after);
		ck_assert_int_eq(gs_space_account_charged(acct), steps[i].charged_after);
	}
	ck_assert_int_eq(res.peak, 1200);
	/* release refunds size - allocated = 700; the 300 stay until freed */
	ck_assert_int_eq(gs_space_account_release(acct, &res), 700);
	ck_assert_int_eq(gs_space_account_charged(acct), 300);
	ck_assert(!res.live);
	/* the reservation is gone: frees credit in full */
	ck_assert_int_eq(gs_space_account_free_bytes(acct, 300, &res), 300);
	ck_assert_int_eq(gs_space_account_charged(acct), 0);
	ck_assert_uint_eq(gs_space_account_active(acct), 0);
}
END_TEST

/* Release: MAX(0, size - allocated), for each starting point. */
typedef struct {
	gint64 size, allocated;
	gint64 refund, charged_after; /* charged after release, before the frees */
} ReleaseRow;

static const ReleaseRow release_rows[] = {
	{ 500, 0, 500, 0 },
	{ 500, 200, 300, 200 },
	{ 500, 500, 0, 500 },
	{ 500, 700, 0, 700 }, /* over-reserved: 500 reserved + 200 beyond stay */
	{ 0, 0, 0, 0 },
	{ 0, 100, 0, 100 },
};

START_TEST(test_release)
{
	const ReleaseRow *row = &release_rows[_i];
	GsSpaceThresholds t = gs_space_thresholds(1000, &struct_defaults);
	g_autoptr(GsSpaceAccount) acct = gs_space_account_new(GS_TIER_DISK, &t, 1);
	GsSpaceReservation res;

	ck_assert_int_eq(
	    gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, row->size, &res).outcome,
	    GS_RESERVATION_GRANTED);
	if (row->allocated > 0)
		gs_space_account_allocate(acct, row->allocated, &res);
	ck_assert_int_eq(gs_space_account_release(acct, &res), row->refund);
	ck_assert_int_eq(gs_space_account_charged(acct), row->charged_after);
	/* the buffers are freed later, without the reservation */
	ck_assert_int_eq(gs_space_account_free_bytes(acct, row->allocated, NULL), row->allocated);
	ck_assert_int_eq(gs_space_account_charged(acct), 0);
	ck_assert_int_eq(gs_space_account_peak(acct), MAX(row->size, row->allocated));
}
END_TEST

/* Per-stream available = global available + the unused part of its reservation. */
START_TEST(test_available_to)
{
	g_autoptr(GsSpaceAccount) acct = small_account(GS_TIER_GPU, 1);
	GsSpaceReservation res;

	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 600, &res);
	gs_space_account_allocate(acct, 200, &res);
	ck_assert_int_eq(gs_space_account_available(acct), 400);
	ck_assert_int_eq(gs_space_account_available_to(acct, &res), 800);
	ck_assert_int_eq(gs_space_account_available_to(acct, NULL), 400);
	gs_space_account_allocate(acct, 500, &res); /* 100 beyond */
	ck_assert_int_eq(gs_space_account_available(acct), 300);
	ck_assert_int_eq(gs_space_account_available_to(acct, &res), 300);
}
END_TEST

/* grow_by against the limit; HOST rounds to blocks; DISK never grows. */
typedef struct {
	GsTier tier;
	gint64 granule;
	gint64 start, grow;
	gboolean ok;
	gint64 size_after;
} GrowRow;

static const GrowRow grow_rows[] = {
	{ GPU, 500, 400, TRUE, 900 },
	{ GPU, 500, 401, FALSE, 500 },
	{ HOST, 500, 301, TRUE, 900 }, /* 301 -> 400 */
	{ HOST, 500, 401, FALSE, 500 }, /* 401 -> 500 > 400 left */
	{ DISK, 500, 1, FALSE, 500 },
};

START_TEST(test_grow)
{
	const GrowRow *row = &grow_rows[_i];
	g_autoptr(GsSpaceAccount) acct = small_account(row->tier, row->granule);
	GsSpaceReservation res;

	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, row->start, &res);
	ck_assert_int_eq(gs_space_account_grow(acct, &res, row->grow), row->ok);
	ck_assert_int_eq(res.size, row->size_after);
	ck_assert_int_eq(gs_space_account_charged(acct), row->size_after);
	ck_assert_int_eq(gs_space_account_release(acct, &res), row->size_after);
	ck_assert_int_eq(gs_space_account_charged(acct), 0);
}
END_TEST

START_TEST(test_shrink_to_fit)
{
	g_autoptr(GsSpaceAccount) gpu = small_account(GS_TIER_GPU, 1);
	g_autoptr(GsSpaceAccount) disk = small_account(GS_TIER_DISK, 1);
	GsSpaceReservation res, dres;

	gs_space_account_reserve(gpu, GS_RESERVE_OR_NULL, 800, &res);
	gs_space_account_allocate(gpu, 300, &res);
	ck_assert_int_eq(gs_space_account_shrink_to_fit(gpu, &res), 500);
	ck_assert_int_eq(res.size, 300);
	ck_assert_int_eq(gs_space_account_charged(gpu), 300);
	/* nothing left to give */
	ck_assert_int_eq(gs_space_account_shrink_to_fit(gpu, &res), 0);
	/* release refunds nothing; freeing the 300 (reservation gone) brings U to 0 */
	ck_assert_int_eq(gs_space_account_release(gpu, &res), 0);
	ck_assert_int_eq(gs_space_account_free_bytes(gpu, 300, NULL), 300);
	ck_assert_int_eq(gs_space_account_charged(gpu), 0);

	gs_space_account_reserve(disk, GS_RESERVE_OR_NULL, 800, &dres);
	ck_assert_int_eq(gs_space_account_shrink_to_fit(disk, &dres), 0);
	ck_assert_int_eq(gs_space_account_charged(disk), 800);
}
END_TEST

/* The account drives the hysteresis with its own counter (C = 1000: 850 / 750). */
START_TEST(test_account_downgrade)
{
	g_autoptr(GsSpaceAccount) acct = small_account(GS_TIER_GPU, 1);
	GsSpaceReservation res;

	gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 849, &res);
	ck_assert_int_eq(gs_space_account_downgrade(acct, FALSE), GS_DOWNGRADE_NONE);
	ck_assert(gs_space_account_grow(acct, &res, 1));
	ck_assert_int_eq(gs_space_account_downgrade(acct, FALSE), GS_DOWNGRADE_START);
	ck_assert_int_eq(gs_space_downgrade_amount(gs_space_account_get_thresholds(acct),
						   gs_space_account_charged(acct)), 100);
	gs_space_account_allocate(acct, 50, &res);
	gs_space_account_shrink_to_fit(acct, &res); /* U = 50 */
	ck_assert_int_eq(gs_space_account_downgrade(acct, TRUE), GS_DOWNGRADE_STOP);
}
END_TEST

/* ---- HOST blocks ---- */

static void
check_blocks(const GsHostBlocks *hb)
{
	ck_assert_int_eq(gs_host_blocks_total(hb),
			 (gint64) gs_host_blocks_pools(hb) * gs_host_blocks_get_pool_blocks(hb));
	ck_assert_int_eq(gs_host_blocks_in_use(hb) + gs_host_blocks_free_count(hb),
			 gs_host_blocks_total(hb));
	ck_assert_int_eq(gs_host_blocks_system_bytes(hb),
			 gs_host_blocks_total(hb) * gs_host_blocks_get_block_size(hb));
	ck_assert_uint_le(gs_host_blocks_pools(hb), gs_host_blocks_get_max_pools(hb));
}

static GsHostBlocks *
default_blocks(gint64 capacity)
{
	return gs_host_blocks_new(GS_HOST_BLOCK_SIZE_DEFAULT, GS_HOST_POOL_BLOCKS_DEFAULT,
				  GS_HOST_INITIAL_POOLS_DEFAULT, capacity);
}

/* 1 MiB blocks, 128 per pool (128 MiB), 4 pools (512 MiB) pinned at start. */
START_TEST(test_blocks_defaults)
{
	g_autoptr(GsHostBlocks) hb = default_blocks(4 * GiB);

	ck_assert_int_eq(gs_host_blocks_get_block_size(hb), MiB);
	ck_assert_uint_eq(gs_host_blocks_get_pool_blocks(hb), 128);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), 4);
	ck_assert_int_eq(gs_host_blocks_total(hb), 512);
	ck_assert_int_eq(gs_host_blocks_free_count(hb), 512);
	ck_assert_int_eq(gs_host_blocks_in_use(hb), 0);
	ck_assert_int_eq(gs_host_blocks_system_bytes(hb), 512 * MiB);
	ck_assert_uint_eq(gs_host_blocks_get_max_pools(hb), 32); /* 4 GiB / 128 MiB */
	check_blocks(hb);
}
END_TEST

/* One allocation on fresh default pools: rounding and growth. */
typedef struct {
	/* Inputs */
	gint64 bytes;
	/* Outputs */
	gint64 blocks;
	guint pools;
} BlocksRow;

static const BlocksRow blocks_rows[] = {
	{ 0, 0, 4 },
	{ 1, 1, 4 },
	{ MiB - 1, 1, 4 },
	{ MiB, 1, 4 },
	{ MiB + 1, 2, 4 },
	{ 5 * MiB + MiB / 2, 6, 4 },
	{ 128 * MiB, 128, 4 },
	{ 512 * MiB, 512, 4 },     /* exactly the initial pools */
	{ 512 * MiB + 1, 513, 5 }, /* one block more: one pool more */
	{ 640 * MiB, 640, 5 },
	{ 640 * MiB + 1, 641, 6 },
	{ 4 * GiB, 4096, 32 },     /* the whole capacity */
	{ 4 * GiB + 1, GS_HOST_BLOCKS_FAILED, 32 },
};

START_TEST(test_blocks_alloc)
{
	const BlocksRow *row = &blocks_rows[_i];
	g_autoptr(GsHostBlocks) hb = default_blocks(4 * GiB);
	gint64 n = gs_host_blocks_alloc(hb, row->bytes);

	ck_assert_int_eq(n, row->blocks);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), row->pools);
	ck_assert_int_eq(gs_host_blocks_in_use(hb), MAX(0, n));
	if (n >= 0)
		ck_assert_int_eq(gs_host_blocks_for_bytes(hb, row->bytes), n);
	check_blocks(hb);
	if (n > 0) {
		gs_host_blocks_free_blocks(hb, n);
		ck_assert_int_eq(gs_host_blocks_in_use(hb), 0);
		/* pools are never given back */
		ck_assert_uint_eq(gs_host_blocks_pools(hb), row->pools);
		check_blocks(hb);
	}
}
END_TEST

/* Growth one pool at a time, only when the free blocks run out; freed blocks are reused. */
START_TEST(test_blocks_growth)
{
	g_autoptr(GsHostBlocks) hb = default_blocks(4 * GiB);

	ck_assert_int_eq(gs_host_blocks_alloc(hb, 512 * MiB), 512);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), 4);
	ck_assert_int_eq(gs_host_blocks_free_count(hb), 0);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 1), 1);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), 5);
	ck_assert_int_eq(gs_host_blocks_free_count(hb), 127);
	/* 300 blocks: 127 free, 173 missing -> two more pools, not three */
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 300 * MiB), 300);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), 7);
	ck_assert_int_eq(gs_host_blocks_free_count(hb), 83);
	ck_assert_int_eq(gs_host_blocks_system_bytes(hb), 7 * 128 * MiB);
	check_blocks(hb);
	/* free 200, take 280: 283 free, no growth */
	gs_host_blocks_free_blocks(hb, 200);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 280 * MiB), 280);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), 7);
	ck_assert_int_eq(gs_host_blocks_free_count(hb), 3);
	check_blocks(hb);
}
END_TEST

/* The capacity bounds growth; initial pools are made whatever it says. */
typedef struct {
	/* Inputs */
	gint64 capacity;
	gint64 bytes;
	/* Outputs */
	guint max_pools;
	gint64 blocks;
	guint pools_after;
} CapRow;

static const CapRow cap_rows[] = {
	{ 4 * GiB + MiB, 4 * GiB + MiB, 33, 4097, 33 }, /* a partial pool still counts */
	{ 640 * MiB, 640 * MiB, 5, 640, 5 },
	/* too much: fails, but the pool added while trying stays */
	{ 640 * MiB, 700 * MiB, 5, GS_HOST_BLOCKS_FAILED, 5 },
	/* a capacity below the initial pools: no growth at all */
	{ 100 * MiB, 512 * MiB, 4, 512, 4 },
	{ 100 * MiB, 512 * MiB + 1, 4, GS_HOST_BLOCKS_FAILED, 4 },
	{ 0, 1, 4, 1, 4 },
};

START_TEST(test_blocks_capacity)
{
	const CapRow *row = &cap_rows[_i];
	g_autoptr(GsHostBlocks) hb = default_blocks(row->capacity);

	ck_assert_uint_eq(gs_host_blocks_get_max_pools(hb), row->max_pools);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, row->bytes), row->blocks);
	ck_assert_uint_eq(gs_host_blocks_pools(hb), row->pools_after);
	ck_assert_int_eq(gs_host_blocks_in_use(hb), MAX(0, row->blocks));
	check_blocks(hb);
}
END_TEST

/* Block sizes are rounded up to 16 bytes (alignof(max_align_t)). */
typedef struct {
	gint64 block_size;
	gint64 rounded;
} AlignRow;

static const AlignRow align_rows[] = {
	{ 1, 16 }, { 16, 16 }, { 17, 32 }, { 1000, 1008 }, { 4 * KiB, 4 * KiB }, { MiB, MiB },
};

START_TEST(test_blocks_alignment)
{
	const AlignRow *row = &align_rows[_i];
	g_autoptr(GsHostBlocks) hb = gs_host_blocks_new(row->block_size, 8, 1, 0);

	ck_assert_int_eq(gs_host_blocks_get_block_size(hb), row->rounded);
	ck_assert_int_eq(gs_host_blocks_system_bytes(hb), 8 * row->rounded);
	/* an allocation of the unrounded size takes one block */
	ck_assert_int_eq(gs_host_blocks_alloc(hb, row->block_size), 1);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, row->rounded + 1), 2);
}
END_TEST

/* Small numbers: 4 KiB blocks, 16 per pool, one initial pool, 64 KiB capacity. */
START_TEST(test_blocks_small)
{
	g_autoptr(GsHostBlocks) hb = gs_host_blocks_new(4 * KiB, 16, 1, 64 * KiB);

	ck_assert_uint_eq(gs_host_blocks_get_max_pools(hb), 1);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 17 * 4 * KiB), GS_HOST_BLOCKS_FAILED);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 16 * 4 * KiB), 16);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 1), GS_HOST_BLOCKS_FAILED);
	gs_host_blocks_free_blocks(hb, 3);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, 3 * 4 * KiB), 3);
	check_blocks(hb);
}
END_TEST

/* A HOST account and its blocks used together: the counter bounds the blocks. */
START_TEST(test_host_account_and_blocks)
{
	GsSpaceThresholds t = gs_space_thresholds(4 * GiB, &struct_defaults);
	g_autoptr(GsHostBlocks) hb = default_blocks(t.capacity);
	g_autoptr(GsSpaceAccount) acct =
		gs_space_account_new(GS_TIER_HOST, &t, gs_host_blocks_get_block_size(hb));
	GsSpaceReservation res;
	GsReserveResult r;
	GsSpaceAlloc a;

	/* 10.5 MiB reserved as 11 blocks */
	r = gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 10 * MiB + MiB / 2, &res);
	ck_assert_int_eq(r.outcome, GS_RESERVATION_GRANTED);
	ck_assert_int_eq(r.size, 11 * MiB);
	/* 12.25 MiB inside it: 13 blocks, 2 beyond the reservation */
	a = gs_space_account_allocate(acct, 12 * MiB + MiB / 4, &res);
	ck_assert_int_eq(a.padded, 13 * MiB);
	ck_assert_int_eq(a.charged, 2 * MiB);
	ck_assert_int_eq(gs_host_blocks_alloc(hb, a.padded), 13);
	ck_assert_int_eq(gs_space_account_charged(acct), 13 * MiB);
	/* the limit is trunc(4 GiB x 0.9) = 3865470566: 3687 whole blocks is too large */
	ck_assert_int_eq(
	    gs_space_account_reserve(acct, GS_RESERVE_OR_NULL, 3687 * MiB, &res).outcome,
	    GS_RESERVATION_TOO_LARGE);
	ck_assert_int_eq(gs_space_account_free_bytes(acct, 13 * MiB, &res), 2 * MiB);
	gs_host_blocks_free_blocks(hb, 13);
	ck_assert_int_eq(gs_space_account_release(acct, &res), 11 * MiB);
	ck_assert_int_eq(gs_space_account_charged(acct), 0);
	ck_assert_int_eq(gs_host_blocks_in_use(hb), 0);
}
END_TEST

Suite *gs_test_suite_space(void);

Suite *
gs_test_suite_space(void)
{
	Suite *s = suite_create("space");
	TCase *tc;

	tc = tcase_create("thresholds");
	tcase_add_loop_test(tc, test_fraction_of, 0, G_N_ELEMENTS(fraction_rows));
	tcase_add_loop_test(tc, test_worked_thresholds, 0, G_N_ELEMENTS(worked_rows));
	tcase_add_loop_test(tc, test_decide_struct_8gib, 0, G_N_ELEMENTS(decision_rows));
	tcase_add_loop_test(tc, test_decide_charged_formula, 0, G_N_ELEMENTS(charged_rows));
	tcase_add_loop_test(tc, test_start_stop_exact, 0, G_N_ELEMENTS(sweep_rows));
	tcase_add_test(tc, test_hysteresis_walk);
	tcase_add_test(tc, test_decision_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("account");
	tcase_add_test(tc, test_account_fresh);
	tcase_add_loop_test(tc, test_reserve, 0, G_N_ELEMENTS(reserve_rows));
	tcase_add_test(tc, test_block_idle_counts_live);
	tcase_add_test(tc, test_channel);
	tcase_add_loop_test(tc, test_allocate_inside, 0, G_N_ELEMENTS(inside_rows));
	tcase_add_test(tc, test_allocate_capacity);
	tcase_add_test(tc, test_free_straddle);
	tcase_add_loop_test(tc, test_release, 0, G_N_ELEMENTS(release_rows));
	tcase_add_test(tc, test_available_to);
	tcase_add_loop_test(tc, test_grow, 0, G_N_ELEMENTS(grow_rows));
	tcase_add_test(tc, test_shrink_to_fit);
	tcase_add_test(tc, test_account_downgrade);
	suite_add_tcase(s, tc);

	tc = tcase_create("host-blocks");
	tcase_add_test(tc, test_blocks_defaults);
	tcase_add_loop_test(tc, test_blocks_alloc, 0, G_N_ELEMENTS(blocks_rows));
	tcase_add_test(tc, test_blocks_growth);
	tcase_add_loop_test(tc, test_blocks_capacity, 0, G_N_ELEMENTS(cap_rows));
	tcase_add_loop_test(tc, test_blocks_alignment, 0, G_N_ELEMENTS(align_rows));
	tcase_add_test(tc, test_blocks_small);
	tcase_add_test(tc, test_host_account_and_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_space());
}
