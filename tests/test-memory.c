/*
 * Unit tests of src/tiers/memory.h: the over-reservation policies with their
 * charges (increase charges the growth once, where the reference charges the
 * shortfall twice, §A.7), the attribution of frees, copy costs from the links, HOST rounding to whole blocks, reservation
 * strategies and modes, a copy's two steps (both copies hold memory, the
 * source stays authoritative until the commit), victims planned for a
 * requester (its own last under smallest_fit), host memory beside a pinned
 * pool in HostAlloc's order (the preferred pool, then the other), retry-block
 * inputs made spillable and back, every change to a reservation told to its
 * watcher, a free while a compute holds the buffer (its memory goes with the
 * last lock), and runs of spill-heavy
 * generated workloads whose every copy lands with its buffer's content tag.
 * gs_memory_check() runs after every step.
 */
#include <check.h>

#include "testlib.h"
#include "scenario/generate.h"
#include "tiers/memory.h"
#include "sim/sim.h"

#define MIB (G_GINT64_CONSTANT(1) << 20)

static void
ck_mem(const GsMemory *m)
{
	const char *why = gs_memory_check(m);

	ck_assert_msg(why == NULL, "memory invariant: %s", why);
}

static GsWorkload *
workload(gint64 gpu, gboolean spill)
{
	GsWorkload *w = gs_workload_new();

	w->gpu.capacity = gpu;
	w->policy.spill.enabled = spill;
	return w;
}

static GsMemAlloc
alloc(GsMemory *m, GsAllocKind kind, gint64 size, GsMemReservation *res)
{
	GsMemRequest req = {.kind = kind, .size = size, .res = res, .spillable = TRUE};
	GsMemAlloc a = gs_memory_alloc(m, &req);

	ck_mem(m);
	return a;
}

static GsOp
reserve_op(GsTier tier, GsReserveStrategy strategy, GsReserveMode mode, gint64 size)
{
	GsOp op = {.kind = GS_OP_RESERVE};

	op.reserve.tier = tier;
	op.reserve.strategy = strategy;
	op.reserve.mode = mode;
	op.reserve.size = size;
	op.reserve.to = GS_TIER_HOST;
	return op;
}

/* ---- over-reservation: reserve 2 MiB of 10, allocate 3 MiB in it ---- */

typedef struct {
	GsOverReservation over;
	GsMemOutcome outcome;
	gint64 charged_after_alloc, charged_after_free, charged_after_release;
} OverRow;

static const OverRow over_rows[] = {
	/* ignore: the 1 MiB beyond is charged against the capacity, credited at the free */
	{GS_OVER_IGNORE, GS_MEM_OK, 3 * MIB, 2 * MIB, 0},
	/* fail: refused, nothing more charged */
	{GS_OVER_FAIL, GS_MEM_OVER_RESERVATION, 2 * MIB, 2 * MIB, 0},
	/* increase x1.25: the reservation grows to 3.25 MiB, charged once (not 4.25) */
	{GS_OVER_INCREASE, GS_MEM_OK, 3 * MIB + MIB / 4, 3 * MIB + MIB / 4, 0},
};

START_TEST(test_over_reservation)
{
	const OverRow *row = &over_rows[_i];
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = NULL;
	GsMemReservation res = {0};
	GsOp op = reserve_op(GS_TIER_GPU, GS_STRATEGY_ANY_IN_TIER, GS_RESERVE_OR_NULL, 2 * MIB);
	GsMemAlloc a;

	w->policy.reservations.over = row->over;
	m = gs_memory_new(w);
	ck_assert_int_eq(gs_memory_reserve(m, &op, &res), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 2 * MIB);
	a = alloc(m, GS_KIND_GPU, 3 * MIB, &res);
	ck_assert_int_eq(a.outcome, row->outcome);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), row->charged_after_alloc);
	if (a.outcome == GS_MEM_OK) {
		ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 3 * MIB);
		gs_memory_free_buffer(m, a.buf, NULL);
		ck_mem(m);
	}
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), row->charged_after_free);
	gs_memory_release(m, &res);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), row->charged_after_release);
}
END_TEST

/* ---- attribution of frees: origin (default) or the freeing stream (cuCascade) ---- */

typedef struct {
	GsAttribution attribution;
	gint64 charged_after_free;  /* r1 released, r2 (2 MiB) held, the 3 MiB buffer freed */
} AttributionRow;

static const AttributionRow attribution_rows[] = {
	/* origin: r1 is released, so the free credits all 3 MiB */
	{GS_ATTRIBUTION_ORIGIN, 2 * MIB},
	/* stream: the free credits r2, whose allocated bytes go negative: only what is
	   above r2's size, nothing, comes back; the 3 MiB stay charged (§A.8's drift) */
	{GS_ATTRIBUTION_STREAM, 5 * MIB},
};

START_TEST(test_attribution)
{
	const AttributionRow *row = &attribution_rows[_i];
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = NULL;
	GsMemReservation r1 = {0}, r2 = {0};
	GsOp op = reserve_op(GS_TIER_GPU, GS_STRATEGY_ANY_IN_TIER, GS_RESERVE_OR_NULL, 3 * MIB);
	GsMemAlloc a;

	w->policy.reservations.attribution = row->attribution;
	m = gs_memory_new(w);
	ck_assert_int_eq(gs_memory_reserve(m, &op, &r1), GS_RESERVATION_GRANTED);
	a = alloc(m, GS_KIND_GPU, 3 * MIB, &r1);
	ck_assert_int_eq(a.outcome, GS_MEM_OK);
	/* Released while its buffer lives: the 3 MiB stay charged. */
	ck_assert_int_eq(gs_memory_release(m, &r1), 0);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 3 * MIB);
	op.reserve.size = 2 * MIB;
	ck_assert_int_eq(gs_memory_reserve(m, &op, &r2), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 5 * MIB);
	gs_memory_free_buffer(m, a.buf, &r2);
	ck_mem(m);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 0);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), row->charged_after_free);
}
END_TEST

/* ---- the reservations' watcher: told of every change, in order ---- */

typedef struct {
	gboolean held;
	gint64 size, allocated, peak;
} Seen;

static void
saw_reservation(const GsMemReservation *res, gpointer data)
{
	Seen seen = {res->held, res->acct.size, res->acct.allocated, res->acct.peak};

	g_array_append_val((GArray *) data, seen);
}

/*
 * Reserve 2 MiB, allocate 1 MiB and 3 MiB in it, free the 1 MiB, release it
 * with the 3 MiB still allocated, free those: the watcher sees each step
 * but the last (a released reservation is credited nothing). Under
 * increase (x1), the 2 MiB missing grow it first.
 */
typedef struct {
	GsOverReservation over;
	Seen seen[7];
	guint n;
} WatchRow;

static const WatchRow watch_rows[] = {
	{GS_OVER_IGNORE,
	 {{TRUE, 2 * MIB, 0, 0},
	  {TRUE, 2 * MIB, MIB, MIB},
	  {TRUE, 2 * MIB, 4 * MIB, 4 * MIB},
	  {TRUE, 2 * MIB, 3 * MIB, 4 * MIB},
	  {FALSE, 2 * MIB, 3 * MIB, 4 * MIB}},
	 5},
	{GS_OVER_INCREASE,
	 {{TRUE, 2 * MIB, 0, 0},
	  {TRUE, 2 * MIB, MIB, MIB},
	  {TRUE, 4 * MIB, MIB, MIB},
	  {TRUE, 4 * MIB, 4 * MIB, 4 * MIB},
	  {TRUE, 4 * MIB, 3 * MIB, 4 * MIB},
	  {FALSE, 4 * MIB, 3 * MIB, 4 * MIB}},
	 6},
};

START_TEST(test_reservation_watcher)
{
	const WatchRow *row = &watch_rows[_i];
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = NULL;
	g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(Seen));
	GsMemReservation res = {0};
	GsOp op = reserve_op(GS_TIER_GPU, GS_STRATEGY_ANY_IN_TIER, GS_RESERVE_OR_NULL, 2 * MIB);
	GsMemAlloc small, big;

	w->policy.reservations.over = row->over;
	w->policy.reservations.increase_factor = 1.0;
	m = gs_memory_new(w);
	gs_memory_watch_reservations(m, saw_reservation, seen);
	ck_assert_int_eq(gs_memory_reserve(m, &op, &res), GS_RESERVATION_GRANTED);
	small = alloc(m, GS_KIND_GPU, MIB, &res);
	big = alloc(m, GS_KIND_GPU, 3 * MIB, &res);
	ck_assert_int_eq(small.outcome, GS_MEM_OK);
	ck_assert_int_eq(big.outcome, GS_MEM_OK);
	gs_memory_free_buffer(m, small.buf, NULL);
	gs_memory_release(m, &res);
	gs_memory_free_buffer(m, big.buf, NULL);
	ck_mem(m);
	ck_assert_uint_eq(seen->len, row->n);
	for (guint i = 0; i < row->n; i++) {
		const Seen *got = &g_array_index(seen, Seen, i), *want = &row->seen[i];

		ck_assert_msg(got->held == want->held && got->size == want->size &&
				      got->allocated == want->allocated && got->peak == want->peak,
			      "change %u: held %d size %" G_GINT64_FORMAT " allocated %" G_GINT64_FORMAT
			      " peak %" G_GINT64_FORMAT, i, got->held, got->size, got->allocated,
			      got->peak);
	}
}
END_TEST

/* ---- a free while a compute holds the buffer: its memory goes with the last lock ---- */

START_TEST(test_free_while_locked)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	g_autoptr(GArray) locked = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	GsMemAlloc x = alloc(m, GS_KIND_GPU, 4 * MIB, NULL);
	GsSpillBufId id = x.buf->id;

	ck_assert_int_eq(x.outcome, GS_MEM_OK);
	/* Two computes read it: one lock each. */
	ck_assert_int_eq(gs_spill_lock(gs_memory_store(m), id), GS_SPILL_OK);
	ck_assert_int_eq(gs_spill_lock(gs_memory_store(m), id), GS_SPILL_OK);
	ck_assert(!gs_memory_free_buffer(m, x.buf, NULL));
	ck_mem(m);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 4 * MIB);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 4 * MIB);
	g_array_append_val(locked, id);
	ck_assert(!gs_memory_unlock_all(m, locked, NULL)); /* one lock left */
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 4 * MIB);
	g_array_append_val(locked, id);
	ck_assert(gs_memory_unlock_all(m, locked, NULL));
	ck_mem(m);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 0);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 0);
	ck_assert(gs_memory_buffer(m, id) == NULL);
	ck_assert_uint_eq(locked->len, 0);
}
END_TEST

/* ---- copy costs: latency + bytes / bandwidth per link crossed ---- */

typedef struct {
	GsTier from, to;
	gint64 bytes;
	GsTime ns;
} CostRow;

static const CostRow cost_rows[] = {
	/* 25 GB/s + 10 us; 2 GB/s + 100 us (SPEC §3.3 defaults) */
	{GS_TIER_GPU, GS_TIER_HOST, 4 * MIB, 10000 + 167772},
	{GS_TIER_HOST, GS_TIER_GPU, 4 * MIB, 10000 + 167772},
	{GS_TIER_HOST, GS_TIER_DISK, 6 * MIB, 100000 + 3145728},
	{GS_TIER_DISK, GS_TIER_HOST, 6 * MIB, 100000 + 3145728},
	{GS_TIER_GPU, GS_TIER_DISK, 6 * MIB, 10000 + 251658 + 100000 + 3145728},
	{GS_TIER_DISK, GS_TIER_GPU, 6 * MIB, 10000 + 251658 + 100000 + 3145728},
	{GS_TIER_GPU, GS_TIER_HOST, 0, 10000},
};

START_TEST(test_copy_time)
{
	const CostRow *row = &cost_rows[_i];
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = gs_memory_new(w);

	ck_assert_int_eq(gs_memory_copy_time(m, row->from, row->to, row->bytes), row->ns);
}
END_TEST

START_TEST(test_copy_time_instant_links)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = NULL;

	w->links.gpu_host = (GsLink){0, 0};
	m = gs_memory_new(w);
	ck_assert_int_eq(gs_memory_copy_time(m, GS_TIER_GPU, GS_TIER_HOST, 100 * MIB), 0);
}
END_TEST

/* ---- HOST: whole blocks ---- */

START_TEST(test_host_blocks)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemAlloc a = alloc(m, GS_KIND_HOST, 1, NULL);
	GsMemAlloc b;

	ck_assert_int_eq(a.outcome, GS_MEM_OK);
	ck_assert_int_eq(a.buf->tier, GS_TIER_HOST);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), MIB);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_HOST), MIB);
	b = alloc(m, GS_KIND_HOST, MIB + 1, NULL);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 3 * MIB);
	gs_memory_free_buffer(m, a.buf, NULL);
	gs_memory_free_buffer(m, b.buf, NULL);
	ck_mem(m);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 0);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_HOST), 0);
}
END_TEST

/*
 * ---- HOST beside a pinned pool: HostAlloc's order, 4 KiB of each (1 KiB
 * blocks), after an allocation that holds some of one ----
 */

#define KIB G_GINT64_CONSTANT(1024)

typedef struct {
	gint64 pinned, capacity;  /* memory.host.pinned, memory.host.capacity */
	gint64 held;              /* allocated first, preferring pinned (0: nothing) */
	gint64 size;
	gboolean prefer_pinned;
	/* Outputs */
	GsMemOutcome outcome;
	const char *pool;         /* where it went, or NULL */
	gboolean fallback;
	gint64 short_by;          /* NO_ROOM */
	gint64 pinned_used;       /* with both held */
} PinnedRow;

static const PinnedRow pinned_rows[] = {
	/* pinned first when preferred */
	{4 * KIB, 4 * KIB, 0, KIB, TRUE, GS_MEM_OK, "pinned", FALSE, 0, KIB},
	/* non-pinned first when not */
	{4 * KIB, 4 * KIB, 0, KIB, FALSE, GS_MEM_OK, "non_pinned", FALSE, 0, 0},
	/* no non-pinned memory: the pinned pool serves it (a fallback) */
	{4 * KIB, 0, 0, KIB, FALSE, GS_MEM_OK, "pinned", TRUE, 0, KIB},
	/* the pinned pool full: non-pinned (a fallback) */
	{4 * KIB, 4 * KIB, 4 * KIB, 4 * KIB, TRUE, GS_MEM_OK, "non_pinned", TRUE, 0, 4 * KIB},
	/* exact bytes in the pinned pool: 1 byte fits beside 4095 */
	{4 * KIB, 0, 4 * KIB - 1, 1, TRUE, GS_MEM_OK, "pinned", FALSE, 0, 4 * KIB},
	/* both full: short by the request's size, what HostAlloc asks the store to spill */
	{4 * KIB, 0, 4 * KIB, 1, TRUE, GS_MEM_NO_ROOM, NULL, FALSE, 1, 4 * KIB},
	{4 * KIB, 4 * KIB, 0, 4 * KIB + 1, TRUE, GS_MEM_NO_ROOM, NULL, FALSE, 4 * KIB + 1, 0},
	/* no pinned pool: the host tier alone, as before, and no pool to name */
	{0, 4 * KIB, 0, KIB, TRUE, GS_MEM_OK, NULL, FALSE, 0, 0},
	{0, 4 * KIB, 0, 4 * KIB + 1, TRUE, GS_MEM_NO_ROOM, NULL, FALSE, KIB, 0},
};

static GsMemAlloc
host_alloc(GsMemory *m, gint64 size, gboolean prefer_pinned)
{
	GsMemRequest req = {.kind = GS_KIND_HOST, .size = size, .prefer_pinned = prefer_pinned,
			    .spillable = TRUE};
	GsMemAlloc a = gs_memory_alloc(m, &req);

	ck_mem(m);
	return a;
}

static GsWorkload *
pinned_workload(gint64 pinned, gint64 capacity, gboolean spill)
{
	GsWorkload *w = workload(10 * MIB, spill);

	w->host = (GsHostMemory){.capacity = capacity, .block_size = KIB, .pool_blocks = 4,
				 .initial_pools = 1, .reservation_limit = 0.9, .pinned = pinned};
	return w;
}

START_TEST(test_pinned_pool)
{
	const PinnedRow *row = &pinned_rows[_i];
	g_autoptr(GsWorkload) w = pinned_workload(row->pinned, row->capacity, FALSE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemAlloc held = {0}, a;

	if (row->held > 0)
		held = host_alloc(m, row->held, TRUE);
	a = host_alloc(m, row->size, row->prefer_pinned);
	ck_assert_int_eq(a.outcome, row->outcome);
	ck_assert_int_eq(gs_memory_pinned_used(m), row->pinned_used);
	if (a.outcome == GS_MEM_OK) {
		ck_assert_pstr_eq(gs_memory_pool_name(m, a.buf), row->pool);
		ck_assert_int_eq(a.buf->fallback, row->fallback);
		gs_memory_free_buffer(m, a.buf, NULL);
	} else {
		ck_assert_int_eq(a.tier, GS_TIER_HOST);
		ck_assert_int_eq(a.short_by, row->short_by);
	}
	if (held.buf != NULL)
		gs_memory_free_buffer(m, held.buf, NULL);
	ck_mem(m);
	ck_assert_int_eq(gs_memory_pinned_used(m), 0);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 0);
}
END_TEST

/* HostAlloc's canNeverSucceed: a size no pool it may use could ever hold. */
typedef struct {
	gint64 pinned, capacity, size;
	gboolean prefer_pinned;
	gboolean never;
} NeverRow;

static const NeverRow never_rows[] = {
	{4 * KIB, 4 * KIB, 4 * KIB, TRUE, FALSE},
	{4 * KIB, 4 * KIB, 4 * KIB + 1, TRUE, TRUE},
	{8 * KIB, 4 * KIB, 4 * KIB + 1, TRUE, FALSE},      /* the pinned pool could */
	{4 * KIB, 8 * KIB, 4 * KIB + 1, TRUE, FALSE},      /* the non-pinned limit could */
	/* not preferring pinned memory, the pinned pool counts only beside no non-pinned memory */
	{4 * KIB, 4 * KIB, 4 * KIB + 1, FALSE, FALSE},
	{4 * KIB, 0, 4 * KIB + 1, FALSE, TRUE},
	{4 * KIB, 0, 4 * KIB, FALSE, FALSE},
	/* without a pinned pool the host tier decides alone, as before */
	{0, 4 * KIB, 4 * KIB + 1, TRUE, FALSE},
};

START_TEST(test_pinned_never_fits)
{
	const NeverRow *row = &never_rows[_i];
	g_autoptr(GsWorkload) w = pinned_workload(row->pinned, row->capacity, FALSE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemRequest req = {.kind = GS_KIND_HOST, .size = row->size,
			    .prefer_pinned = row->prefer_pinned};
	GsMemRequest gpu = {.kind = GS_KIND_GPU, .size = 20 * MIB};

	ck_assert_int_eq(gs_memory_host_never_fits(m, &req), row->never);
	ck_assert(!gs_memory_host_never_fits(m, &gpu));
}
END_TEST

/* A pinned buffer spilled to disk gives its pinned bytes back; coming back, it is non-pinned. */
START_TEST(test_pinned_spill_and_back)
{
	g_autoptr(GsWorkload) w = pinned_workload(4 * KIB, 4 * KIB, TRUE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemAlloc a = host_alloc(m, 4 * KIB, TRUE);
	GsTime duration = 0;

	ck_assert_pstr_eq(gs_memory_pool_name(m, a.buf), "pinned");
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 4 * KIB);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_HOST), 0); /* not the host tier's account */
	ck_assert(gs_memory_copy_begin(m, a.buf, GS_TIER_DISK, &duration));
	ck_assert_int_eq(gs_memory_pinned_used(m), 4 * KIB); /* the source holds it until landing */
	ck_assert(gs_memory_copy_commit(m, a.buf));
	ck_mem(m);
	ck_assert_int_eq(gs_memory_pinned_used(m), 0);
	ck_assert_ptr_null(gs_memory_pool_name(m, a.buf));
	ck_assert(gs_memory_copy_begin(m, a.buf, GS_TIER_HOST, &duration));
	ck_assert(gs_memory_copy_commit(m, a.buf));
	ck_assert_pstr_eq(gs_memory_pool_name(m, a.buf), "non_pinned");
	ck_assert_int_eq(gs_memory_pinned_used(m), 0);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_HOST), 4 * KIB);
	gs_memory_free_buffer(m, a.buf, NULL);
	ck_mem(m);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 0);
}
END_TEST

START_TEST(test_no_room_says_how_much)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemAlloc a = alloc(m, GS_KIND_GPU, 8 * MIB, NULL);
	GsMemAlloc b = alloc(m, GS_KIND_GPU, 5 * MIB, NULL);

	ck_assert_int_eq(a.outcome, GS_MEM_OK);
	ck_assert_int_eq(b.outcome, GS_MEM_NO_ROOM);
	ck_assert_int_eq(b.tier, GS_TIER_GPU);
	ck_assert_int_eq(b.short_by, 3 * MIB);
	/* cuCascade's global_usage: the counter the refused allocation would have made */
	ck_assert_int_eq(b.usage, 13 * MIB);
	ck_assert_int_eq(a.usage, 0);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 8 * MIB);
	gs_memory_free_buffer(m, a.buf, NULL);
}
END_TEST

/* The usage counts the request as the space charges it: rounded up to its granule. */
START_TEST(test_no_room_usage_is_rounded)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m;
	GsMemAlloc a, b;

	w->gpu.alignment = MIB;
	m = gs_memory_new(w);
	a = alloc(m, GS_KIND_GPU, 8 * MIB, NULL);
	b = alloc(m, GS_KIND_GPU, 2 * MIB + 1, NULL);
	ck_assert_int_eq(b.outcome, GS_MEM_NO_ROOM);
	ck_assert_int_eq(b.usage, 11 * MIB);
	gs_memory_free_buffer(m, a.buf, NULL);
}
END_TEST

/* ---- reservations: strategies and modes ---- */

START_TEST(test_reserve_any_in_tier_weak_order)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = NULL;
	GsMemReservation r0 = {0}, r1 = {0};
	GsOp first = reserve_op(GS_TIER_GPU, GS_STRATEGY_ANY_IN_TIER, GS_RESERVE_BLOCK, 8 * MIB);
	GsOp second = first;

	w->gpu.devices = 2;
	m = gs_memory_new(w);
	ck_assert_int_eq(gs_memory_reserve(m, &first, &r0), GS_RESERVATION_GRANTED);
	ck_assert_uint_eq(r0.device, 0);
	/* GPU:0 has 1 MiB left under its 9 MiB limit: the first pass finds GPU:1. */
	ck_assert_int_eq(gs_memory_reserve(m, &second, &r1), GS_RESERVATION_GRANTED);
	ck_assert_uint_eq(r1.device, 1);
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 16 * MIB);
}
END_TEST

/* The modes as SPEC and cuCascade's documentation have them (blocking whole). */
START_TEST(test_reserve_modes)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = NULL;
	GsMemReservation a = {0}, b = {0}, c = {0}, d = {0};
	GsOp big = reserve_op(GS_TIER_GPU, GS_STRATEGY_SPECIFIC, GS_RESERVE_BLOCK, 6 * MIB);
	GsOp block = big, or_null = big, upto = big, too_large = big;

	w->policy.reservations.blocking = GS_BLOCK_FOR_WHOLE;
	m = gs_memory_new(w);
	or_null.reserve.mode = GS_RESERVE_OR_NULL;
	upto.reserve.mode = GS_RESERVE_UPTO;
	too_large.reserve.size = 10 * MIB;
	ck_assert_int_eq(gs_memory_reserve(m, &big, &a), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(gs_memory_reserve(m, &block, &b), GS_RESERVATION_WAIT);
	ck_assert(!b.held);
	ck_assert_int_eq(gs_memory_reserve(m, &or_null, &b), GS_RESERVATION_REFUSED);
	ck_assert_int_eq(gs_memory_reserve(m, &too_large, &c), GS_RESERVATION_TOO_LARGE);
	/* upto: what is left under the 9 MiB limit (9437184 = trunc(0.9 x 10 MiB)) */
	ck_assert_int_eq(gs_memory_reserve(m, &upto, &d), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(d.acct.size, 9437184 - 6 * MIB);
	gs_memory_release(m, &a);
	ck_assert_int_eq(gs_memory_reserve(m, &block, &b), GS_RESERVATION_GRANTED);
}
END_TEST

/*
 * A blocking request on cuCascade's channel (the default): a GPU request
 * above the limit waits while a reservation is live; the release wakes it,
 * the notification does not help, and with no live reservation left it
 * takes what fits (IDLE). After a shutdown a request that would wait gets
 * nothing.
 */
START_TEST(test_reserve_channel)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemReservation a = {0}, b = {0}, c = {0};
	GsOp big = reserve_op(GS_TIER_GPU, GS_STRATEGY_SPECIFIC, GS_RESERVE_BLOCK, 6 * MIB);
	GsOp too_large = big;

	too_large.reserve.size = 10 * MIB;
	ck_assert_int_eq(gs_memory_reserve(m, &big, &a), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(gs_memory_reserve(m, &too_large, &c), GS_RESERVATION_WAIT);
	ck_assert_int_eq(gs_memory_reserve_again(m, &too_large, &c), GS_RESERVATION_WAIT);
	gs_memory_release(m, &a);
	ck_assert_int_eq(gs_memory_reserve_again(m, &too_large, &c), GS_RESERVATION_IDLE);
	ck_assert(c.held);
	ck_assert_int_eq(c.acct.size, 9437184);
	gs_memory_settle_channels(m);
	gs_memory_shutdown_channels(m);
	ck_assert_int_eq(gs_memory_reserve(m, &big, &b), GS_RESERVATION_SHUTDOWN);
	ck_assert(!b.held);
}
END_TEST

START_TEST(test_reserve_downgrade_to_host)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, FALSE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemReservation r = {0};
	GsOp op = reserve_op(GS_TIER_GPU, GS_STRATEGY_DOWNGRADE, GS_RESERVE_OR_NULL, MIB + 1);

	op.reserve.from = GS_TIER_GPU;
	op.reserve.to = GS_TIER_HOST;
	ck_assert_int_eq(gs_memory_reserve(m, &op, &r), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(r.tier, GS_TIER_HOST);
	ck_assert_int_eq(r.acct.size, 2 * MIB); /* whole host blocks */
	ck_assert_int_eq(gs_memory_charged(m, GS_TIER_GPU), 0);
}
END_TEST

/* ---- a copy: both copies hold memory until the commit ---- */

START_TEST(test_copy_steps)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemAlloc a = alloc(m, GS_KIND_GPU, 4 * MIB, NULL);
	GsTime duration = 0;
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));

	ck_assert_int_eq(gs_memory_plan_spill(m, GS_TIER_GPU, MIB, 0, moves), 4 * MIB);
	ck_assert_uint_eq(moves->len, 1);
	ck_assert_ptr_eq(gs_memory_buffer(m, g_array_index(moves, GsSpillMove, 0).id), a.buf);
	ck_assert(gs_memory_copy_begin(m, a.buf, GS_TIER_HOST, &duration));
	ck_mem(m);
	ck_assert_int_eq(duration, 10000 + 167772);
	/* In flight: the source is still authoritative and both hold memory. */
	ck_assert_int_eq(a.buf->tier, GS_TIER_GPU);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 4 * MIB);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 4 * MIB);
	/* A moving buffer is not chosen twice. */
	ck_assert_int_eq(gs_memory_plan_spill(m, GS_TIER_GPU, MIB, 0, moves), 0);
	ck_assert(gs_memory_copy_commit(m, a.buf));
	ck_mem(m);
	ck_assert_int_eq(a.buf->tier, GS_TIER_HOST);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 0);
	ck_assert_int_eq(gs_memory_traffic(m)->gpu_to_host, 4 * MIB);
	ck_assert_uint_eq(gs_memory_traffic(m)->copies, 1);
	ck_assert_uint_eq(gs_memory_traffic(m)->tag_mismatches, 0);
	/* Back up, then an aborted copy leaves everything where it was. */
	ck_assert(gs_memory_copy_begin(m, a.buf, GS_TIER_GPU, &duration));
	gs_memory_copy_abort(m, a.buf);
	ck_mem(m);
	ck_assert_int_eq(a.buf->tier, GS_TIER_HOST);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_GPU), 0);
	gs_memory_free_buffer(m, a.buf, NULL);
	ck_mem(m);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 0);
}
END_TEST

START_TEST(test_copy_refused_when_locked)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	GsMemAlloc a = alloc(m, GS_KIND_GPU, 4 * MIB, NULL);
	GsTime duration;

	ck_assert(gs_memory_copy_begin(m, a.buf, GS_TIER_HOST, &duration));
	/* A compute locks it while it moves: the landing is refused, the GPU copy stays. */
	ck_assert_int_eq(gs_spill_lock(gs_memory_store(m), a.buf->id), GS_SPILL_OK);
	ck_assert(!gs_memory_copy_commit(m, a.buf));
	ck_mem(m);
	ck_assert_int_eq(a.buf->tier, GS_TIER_GPU);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_HOST), 0);
	ck_assert_uint_eq(gs_memory_traffic(m)->tag_mismatches, 0);
	gs_spill_unlock(gs_memory_store(m), a.buf->id);
	gs_memory_free_buffer(m, a.buf, NULL);
}
END_TEST

START_TEST(test_copy_no_room_below)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = NULL;
	GsMemAlloc a;
	GsTime duration;

	w->host.capacity = 2 * MIB;
	w->host.initial_pools = 1;
	w->host.pool_blocks = 2;
	m = gs_memory_new(w);
	a = alloc(m, GS_KIND_GPU, 4 * MIB, NULL);
	ck_assert(!gs_memory_copy_begin(m, a.buf, GS_TIER_HOST, &duration));
	ck_mem(m);
	ck_assert(!a.buf->moving);
	ck_assert(gs_memory_copy_begin(m, a.buf, GS_TIER_DISK, &duration));
	ck_assert(gs_memory_copy_commit(m, a.buf));
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_DISK), 4 * MIB);
	ck_assert_int_eq(gs_memory_traffic(m)->gpu_to_host, 4 * MIB);
	ck_assert_int_eq(gs_memory_traffic(m)->host_to_disk, 4 * MIB);
	gs_memory_free_buffer(m, a.buf, NULL);
	ck_assert_int_eq(gs_memory_used(m, GS_TIER_DISK), 0);
}
END_TEST

/* ---- victims for a requester: its own buffers last under smallest_fit ---- */

static const char requester[] = "requester", other[] = "other";

static gboolean
spillable(GsMemory *m, const GsMemBuf *b)
{
	GsSpillBufView view;

	return gs_spill_lookup(gs_memory_store(m), b->id, &view) && view.spillable;
}

static gboolean
allocated_by(const GsMemBuf *b, gconstpointer thread)
{
	return b->owner == thread;
}

/* Buffers a (3 MiB, the requester's), b (2 MiB) and c (4 MiB), allocated in that order. */
typedef struct {
	GsSpillVictim victim;
	gint64 need;
	const char *planned; /* the buffers planned, in the plan's order */
} VictimRow;

static const VictimRow victim_rows[] = {
	/* smallest_fit alone would take a, the smallest that covers 3 MiB */
	{GS_VICTIM_SMALLEST_FIT, 3 * MIB, "c"},
	{GS_VICTIM_SMALLEST_FIT, 6 * MIB, "cb"},
	/* the others cannot cover 8 MiB: the requester's own are planned too */
	{GS_VICTIM_SMALLEST_FIT, 8 * MIB, "cab"},
	/* other orders do not hold the requester's back */
	{GS_VICTIM_LRU, 3 * MIB, "a"},
	{GS_VICTIM_LARGEST, 3 * MIB, "c"},
};

START_TEST(test_plan_victims)
{
	const VictimRow *row = &victim_rows[_i];
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = NULL;
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	const gint64 sizes[] = {3 * MIB, 2 * MIB, 4 * MIB};
	GsMemBuf *bufs[3];
	GString *planned = g_string_new(NULL);

	w->policy.spill.victim = row->victim;
	m = gs_memory_new(w);
	for (guint i = 0; i < 3; i++) {
		bufs[i] = alloc(m, GS_KIND_GPU, sizes[i], NULL).buf;
		bufs[i]->owner = (gpointer) (i == 0 ? requester : other);
	}
	gs_memory_plan_victims(m, GS_TIER_GPU, row->need, 0, moves, allocated_by, requester);
	for (guint i = 0; i < moves->len; i++)
		for (guint k = 0; k < 3; k++)
			if (bufs[k]->id == g_array_index(moves, GsSpillMove, i).id)
				g_string_append_c(planned, (char) ('a' + k));
	ck_assert_str_eq(planned->str, row->planned);
	g_string_free(planned, TRUE);
	/* Held back only while planning: the requester's buffer is spillable again. */
	ck_assert(spillable(m, bufs[0]));
	ck_mem(m);
}
END_TEST

/* ---- retry-block inputs: spillable while the block runs, nested blocks ---- */

START_TEST(test_block_inputs)
{
	g_autoptr(GsWorkload) w = workload(10 * MIB, TRUE);
	g_autoptr(GsMemory) m = gs_memory_new(w);
	g_autoptr(GArray) inputs = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	GsMemRequest fixed = {.kind = GS_KIND_GPU, .size = MIB};
	GsMemBuf *x = gs_memory_alloc(m, &fixed).buf;
	GsMemBuf *y = alloc(m, GS_KIND_GPU, MIB, NULL).buf;

	ck_assert(!spillable(m, x) && spillable(m, y));
	g_array_append_val(ids, x->id);
	g_array_append_val(ids, y->id);
	gs_memory_block_enter(m, inputs, ids);
	ck_assert(spillable(m, x) && spillable(m, y));
	/* An inner block over x finds it spillable already: it takes nothing back. */
	g_array_set_size(ids, 1);
	gs_memory_block_enter(m, inputs, ids);
	gs_memory_block_leave(m, inputs);
	ck_assert(spillable(m, x));
	/* Leaving the outer block gives x back its flag; y, spillable of its own, stays so. */
	gs_memory_block_leave(m, inputs);
	ck_assert(!spillable(m, x) && spillable(m, y));
	ck_assert_uint_eq(inputs->len, 0);
	/* A block whose input was freed inside it leaves harmlessly. */
	gs_memory_block_enter(m, inputs, ids);
	gs_memory_free_buffer(m, x, NULL);
	gs_memory_block_leave(m, inputs);
	ck_assert_uint_eq(inputs->len, 0);
	ck_mem(m);
}
END_TEST

/* ---- whole runs: no data lost or duplicated ---- */

static GsWorkload *
spill_heavy(guint64 seed, GsSpillVictim victim, gboolean small_host)
{
	GsWorkload *w = workload(256 * MIB, TRUE);

	w->seed = seed;
	w->policy.spill.victim = victim;
	w->executor_slots = 6;
	if (small_host)
		w->host.capacity = 128 * MIB;
	w->generate = (GsGenerate){.enabled = TRUE, .tasks = 12, .threads_per_task = 2,
				   .task_max = 96 * MIB, .max_allocs = 12,
				   .max_compute = 4 * 1000 * 1000, .retry_blocks = TRUE,
				   .jitter = 0.05};
	gs_generate_tasks(w);
	return w;
}

START_TEST(test_runs_keep_every_byte)
{
	static const GsSpillVictim victims[] = {GS_VICTIM_LRU, GS_VICTIM_LARGEST,
						GS_VICTIM_SMALLEST_FIT, GS_VICTIM_PRIORITY};
	g_autoptr(GsWorkload) w = spill_heavy(1 + _i / 8, victims[_i % 4], _i % 8 >= 4);
	g_autoptr(GsResult) r = gs_sim_run(w, NULL);

	ck_assert_uint_gt(r->totals.copies_checked, 0);
	ck_assert_uint_eq(r->totals.copies_lost, 0);
	ck_assert_int_gt(r->totals.spilled_gpu_to_host, 0);
	/* Everything allocated was freed: nothing is left in any tier at the end. */
	for (guint t = 0; t < GS_N_TIERS; t++) {
		const GsSample *last = &g_array_index(r->timeline, GsSample, r->timeline->len - 1);

		ck_assert_int_eq(last->used[t], 0);
	}
}
END_TEST

/* Leaving the timeline out changes no figure: peaks and means are kept without it. */
START_TEST(test_run_without_timeline)
{
	static const GsRunOptions skip = {.skip_timeline = TRUE};
	g_autoptr(GsWorkload) w = spill_heavy(3, GS_VICTIM_LRU, TRUE);
	g_autoptr(GsResult) kept = gs_sim_run(w, NULL);
	g_autoptr(GsResult) left = gs_sim_run(w, &skip);

	ck_assert_uint_gt(kept->timeline->len, 1);
	ck_assert_uint_eq(left->timeline->len, 0);
	ck_assert_int_eq(left->makespan_ns, kept->makespan_ns);
	ck_assert(memcmp(&left->totals, &kept->totals, sizeof kept->totals) == 0);
	ck_assert_int_gt(kept->tiers[GS_TIER_GPU].mean_used, 0);
	ck_assert_int_gt(kept->tiers[GS_TIER_HOST].peak_used, 0);
	for (guint t = 0; t < GS_N_TIERS; t++) {
		ck_assert_int_eq(left->tiers[t].peak_used, kept->tiers[t].peak_used);
		ck_assert_int_eq(left->tiers[t].peak_charged, kept->tiers[t].peak_charged);
		ck_assert_int_eq(left->tiers[t].mean_used, kept->tiers[t].mean_used);
	}
}
END_TEST

static Suite *
memory_suite(void)
{
	Suite *s = suite_create("memory");
	TCase *tc = tcase_create("memory");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_over_reservation, 0, G_N_ELEMENTS(over_rows));
	tcase_add_loop_test(tc, test_reservation_watcher, 0, G_N_ELEMENTS(watch_rows));
	tcase_add_test(tc, test_free_while_locked);
	tcase_add_loop_test(tc, test_attribution, 0, G_N_ELEMENTS(attribution_rows));
	tcase_add_loop_test(tc, test_copy_time, 0, G_N_ELEMENTS(cost_rows));
	tcase_add_test(tc, test_copy_time_instant_links);
	tcase_add_test(tc, test_host_blocks);
	tcase_add_loop_test(tc, test_pinned_pool, 0, G_N_ELEMENTS(pinned_rows));
	tcase_add_test(tc, test_pinned_spill_and_back);
	tcase_add_loop_test(tc, test_pinned_never_fits, 0, G_N_ELEMENTS(never_rows));
	tcase_add_test(tc, test_no_room_says_how_much);
	tcase_add_test(tc, test_no_room_usage_is_rounded);
	tcase_add_test(tc, test_reserve_any_in_tier_weak_order);
	tcase_add_test(tc, test_reserve_modes);
	tcase_add_test(tc, test_reserve_channel);
	tcase_add_test(tc, test_reserve_downgrade_to_host);
	tcase_add_test(tc, test_copy_steps);
	tcase_add_test(tc, test_copy_refused_when_locked);
	tcase_add_test(tc, test_copy_no_room_below);
	tcase_add_loop_test(tc, test_plan_victims, 0, G_N_ELEMENTS(victim_rows));
	tcase_add_test(tc, test_block_inputs);
	tcase_add_loop_test(tc, test_runs_keep_every_byte, 0, 16);
	tcase_add_test(tc, test_run_without_timeline);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(memory_suite());
}
