/*
 * Unit tests of spill.h: victim order under each policy (ties, locked,
 * unspillable, empty and moving buffers skipped, a need covered exactly, a
 * need no candidate set can cover), nested and stream locks, LRU by touch
 * times, owners' ranks, content tags, moves in flight, unspill plans and the
 * host-full destination, after reference/tiers-spill-pages-evac.md §B.8-§B.11
 * and, for smallest_fit, §C.3.
 *
 * Every step of every script and every store a table builds is followed by
 * gs_spill_store_check(), so that each test also tests the bookkeeping.
 */
#include <string.h>

#include <gpusim/spill.h>

#include "testlib.h"

Suite *gs_test_suite_spill(void);

#define GPU GS_TIER_GPU
#define HOST GS_TIER_HOST
#define DISK GS_TIER_DISK
#define LRU GS_VICTIM_LRU
#define LARGEST GS_VICTIM_LARGEST
#define SFIT GS_VICTIM_SMALLEST_FIT
#define PRIO GS_VICTIM_PRIORITY

/* Every buffer's content tag in these tests: distinct per buffer. */
#define TAG(id) (G_GUINT64_CONSTANT(0x0C0DE00000000000) | (guint64) (id))

/* The stream that holds the asynchronous locks a table asks for. */
#define TABLE_STREAM 1

#define NOW 100

static void
check_store(const GsSpillStore *store)
{
	const char *why = gs_spill_store_check(store);

	ck_assert_msg(why == NULL, "invariant broken: %s", why);
}

/* ---- Stores described by tables ---- */

typedef struct {
	GsSpillBufId id;
	gint64 size;
	GsTier tier;
	gint64 owner;        /* the owner's task priority */
	GsThreadId thread;   /* the owner's thread (tie-break of the rank) */
	gboolean unspillable;
	gint locks, async;
	GsTime last_use;
} BufSpec;

static GsSpillStore *
store_from(const BufSpec *set, guint n)
{
	GsSpillStore *store = gs_spill_store_new();

	for (guint i = 0; i < n; i++) {
		const BufSpec *b = &set[i];
		GsPriority owner = {b->owner, b->thread};

		ck_assert_int_eq(gs_spill_add(store, b->id, owner, b->size, b->tier, !b->unspillable,
					      TAG(b->id), b->last_use),
				 GS_SPILL_OK);
		for (gint k = 0; k < b->locks; k++)
			ck_assert_int_eq(gs_spill_lock(store, b->id), GS_SPILL_OK);
		for (gint k = 0; k < b->async; k++)
			ck_assert_int_eq(gs_spill_lock_async(store, b->id, TABLE_STREAM), GS_SPILL_OK);
		check_store(store);
	}
	return store;
}

/*
 * Candidates: 1, 2, 3, 4 and 5. Buffer 6 is locked, 7 unspillable, 9 locked
 * on a stream and 10 empty; they are the oldest, the lowest-ranked and (6, 7)
 * the largest, so that a policy that forgot to skip them would pick them
 * first. 8 is on the host.
 */
static const BufSpec set_mixed[] = {
	/* id size  tier owner thr unsp locks async last */
	{ 1, 100, GPU, 5, 0, FALSE, 0, 0, 10 },
	{ 2, 300, GPU, 1, 0, FALSE, 0, 0, 20 },
	{ 3, 200, GPU, 3, 0, FALSE, 0, 0, 5 },
	{ 4, 300, GPU, 1, 0, FALSE, 0, 0, 15 },
	{ 5, 50, GPU, 5, 0, FALSE, 0, 0, 30 },
	{ 6, 400, GPU, 0, 0, FALSE, 1, 0, 1 },
	{ 7, 500, GPU, 0, 0, TRUE, 0, 0, 2 },
	{ 8, 250, HOST, 0, 0, FALSE, 0, 0, 3 },
	{ 9, 150, GPU, 0, 0, FALSE, 0, 1, 4 },
	{ 10, 0, GPU, 0, 0, FALSE, 0, 0, 0 },
};

/* Equal sizes and times: ties fall to last use, then id; ranks to the thread. */
static const BufSpec set_ties[] = {
	{ 1, 100, GPU, 10, 1, FALSE, 0, 0, 7 },
	{ 2, 100, GPU, 10, 2, FALSE, 0, 0, 7 },
	{ 3, 100, GPU, 10, 1, FALSE, 0, 0, 7 },
	{ 4, 100, GPU, 20, 0, FALSE, 0, 0, 3 },
};

/* Where Spark's order (§C.3) and largest-first part ways. */
static const BufSpec set_spark[] = {
	{ 1, 70, GPU, 0, 0, FALSE, 0, 0, 1 },
	{ 2, 50, GPU, 0, 0, FALSE, 0, 0, 2 },
	{ 3, 35, GPU, 0, 0, FALSE, 0, 0, 3 },
};

/* Nothing may move out of the GPU. */
static const BufSpec set_busy[] = {
	{ 1, 100, GPU, 0, 0, FALSE, 1, 0, 1 },
	{ 2, 100, GPU, 0, 0, TRUE, 0, 0, 2 },
	{ 3, 100, GPU, 0, 0, FALSE, 0, 1, 3 },
	{ 4, 100, HOST, 0, 0, FALSE, 0, 0, 4 },
};

#define SET(s) s, G_N_ELEMENTS(s)

typedef struct {
	/* Inputs */
	const BufSpec *set;
	guint n_set;
	GsTier from;
	gint64 need;
	GsSpillVictim policy;
	/* Outputs */
	GsSpillBufId victims[8]; /* in order, 0-terminated */
	gint64 bytes;
} PlanRow;

static const PlanRow plan_rows[] = {
	/* lru: 3 (t5), 1 (t10), 4 (t15), 2 (t20), 5 (t30) */
	{ SET(set_mixed), GPU, 1, LRU, { 3 }, 200 },
	{ SET(set_mixed), GPU, 200, LRU, { 3 }, 200 },
	{ SET(set_mixed), GPU, 300, LRU, { 3, 1 }, 300 },
	{ SET(set_mixed), GPU, 301, LRU, { 3, 1, 4 }, 600 },
	{ SET(set_mixed), GPU, 950, LRU, { 3, 1, 4, 2, 5 }, 950 },
	{ SET(set_mixed), GPU, 951, LRU, { 3, 1, 4, 2, 5 }, 950 },
	{ SET(set_mixed), GPU, 0, LRU, { 0 }, 0 },
	{ SET(set_mixed), GPU, -1, LRU, { 0 }, 0 },
	/* largest: 4 and 2 (300, 4 used earlier), 3, 1, 5 */
	{ SET(set_mixed), GPU, 1, LARGEST, { 4 }, 300 },
	{ SET(set_mixed), GPU, 301, LARGEST, { 4, 2 }, 600 },
	{ SET(set_mixed), GPU, 600, LARGEST, { 4, 2 }, 600 },
	{ SET(set_mixed), GPU, 601, LARGEST, { 4, 2, 3 }, 800 },
	{ SET(set_mixed), GPU, 5000, LARGEST, { 4, 2, 3, 1, 5 }, 950 },
	/* smallest_fit: the smallest that covers what is left, else the largest */
	{ SET(set_mixed), GPU, 1, SFIT, { 5 }, 50 },
	{ SET(set_mixed), GPU, 50, SFIT, { 5 }, 50 },
	{ SET(set_mixed), GPU, 51, SFIT, { 1 }, 100 },
	{ SET(set_mixed), GPU, 150, SFIT, { 3 }, 200 },     /* 9 fits exactly but is busy */
	{ SET(set_mixed), GPU, 300, SFIT, { 4 }, 300 },     /* 4 and 2 tie: older first */
	{ SET(set_mixed), GPU, 301, SFIT, { 4, 5 }, 350 },  /* largest, then 1 left */
	{ SET(set_mixed), GPU, 650, SFIT, { 4, 2, 5 }, 650 },
	{ SET(set_mixed), GPU, 700, SFIT, { 4, 2, 1 }, 700 },
	{ SET(set_mixed), GPU, 5000, SFIT, { 4, 2, 3, 1, 5 }, 950 },
	/* priority: owner 1 (4, 2), owner 3 (3), owner 5 (1, 5); owner 0's are busy */
	{ SET(set_mixed), GPU, 1, PRIO, { 4 }, 300 },
	{ SET(set_mixed), GPU, 600, PRIO, { 4, 2 }, 600 },
	{ SET(set_mixed), GPU, 601, PRIO, { 4, 2, 3 }, 800 },
	{ SET(set_mixed), GPU, 801, PRIO, { 4, 2, 3, 1 }, 900 },
	{ SET(set_mixed), GPU, 5000, PRIO, { 4, 2, 3, 1, 5 }, 950 },
	/* only the tier asked for; nothing below disk */
	{ SET(set_mixed), HOST, 1, LRU, { 8 }, 250 },
	{ SET(set_mixed), HOST, 1000, LARGEST, { 8 }, 250 },
	{ SET(set_mixed), HOST, 1, PRIO, { 8 }, 250 },
	{ SET(set_mixed), DISK, 1, LRU, { 0 }, 0 },
	/* ties */
	{ SET(set_ties), GPU, 100, LRU, { 4 }, 100 },
	{ SET(set_ties), GPU, 250, LRU, { 4, 1, 2 }, 300 },
	{ SET(set_ties), GPU, 150, LARGEST, { 4, 1 }, 200 },
	{ SET(set_ties), GPU, 100, SFIT, { 4 }, 100 },
	{ SET(set_ties), GPU, 150, SFIT, { 4, 1 }, 200 },
	{ SET(set_ties), GPU, 150, PRIO, { 1, 3 }, 200 },   /* (10, thread 1) ranks lowest */
	{ SET(set_ties), GPU, 250, PRIO, { 1, 3, 2 }, 300 },
	{ SET(set_ties), GPU, 301, PRIO, { 1, 3, 2, 4 }, 400 },
	/* §C.3's order moves fewer bytes than largest-first here */
	{ SET(set_spark), GPU, 100, SFIT, { 1, 3 }, 105 },
	{ SET(set_spark), GPU, 100, LARGEST, { 1, 2 }, 120 },
	{ SET(set_spark), GPU, 100, LRU, { 1, 2 }, 120 },
	{ SET(set_spark), GPU, 36, SFIT, { 2 }, 50 },
	{ SET(set_spark), GPU, 86, SFIT, { 1, 3 }, 105 },
	/* nothing may move */
	{ SET(set_busy), GPU, 1, LRU, { 0 }, 0 },
	{ SET(set_busy), GPU, 1, LARGEST, { 0 }, 0 },
	{ SET(set_busy), GPU, 1, SFIT, { 0 }, 0 },
	{ SET(set_busy), GPU, 1, PRIO, { 0 }, 0 },
};

static const BufSpec *
spec_of(const PlanRow *row, GsSpillBufId id)
{
	for (guint i = 0; i < row->n_set; i++)
		if (row->set[i].id == id)
			return &row->set[i];
	return NULL;
}

START_TEST(test_plan)
{
	const PlanRow *row = &plan_rows[_i];
	g_autoptr(GsSpillStore) store = store_from(row->set, row->n_set);
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	gint64 before[GS_N_TIERS], got, sum = 0;
	guint n = 0;

	for (guint t = 0; t < GS_N_TIERS; t++)
		before[t] = gs_spill_store_bytes(store, (GsTier) t);
	/* A stale entry must not survive: the plan empties @out first. */
	g_array_set_size(out, 3);
	got = gs_spill_plan(store, row->from, row->need, row->policy, NOW, out);
	while (n < G_N_ELEMENTS(row->victims) && row->victims[n] != 0)
		n++;
	ck_assert_uint_eq(out->len, n);
	for (guint i = 0; i < out->len; i++) {
		const GsSpillMove *m = &g_array_index(out, GsSpillMove, i);
		const BufSpec *spec = spec_of(row, m->id);

		ck_assert_msg(m->id == row->victims[i], "victim %u: got %" G_GUINT64_FORMAT
			      ", expected %" G_GUINT64_FORMAT, i, m->id, row->victims[i]);
		ck_assert_ptr_nonnull(spec);
		ck_assert_int_eq(m->bytes, spec->size);
		ck_assert_int_eq(m->from, row->from);
		ck_assert_int_eq(m->to, row->from + 1);
		ck_assert(!m->moving);
		ck_assert_int_eq(m->idle, NOW - spec->last_use);
		sum += m->bytes;
	}
	ck_assert_int_eq(got, row->bytes);
	ck_assert_int_eq(sum, row->bytes);
	/* Planning changes nothing. */
	for (guint t = 0; t < GS_N_TIERS; t++)
		ck_assert_int_eq(gs_spill_store_bytes(store, (GsTier) t), before[t]);
	check_store(store);
}
END_TEST

/* The same rows with the store built in reverse: the order of addition decides nothing. */
START_TEST(test_plan_reversed)
{
	const PlanRow *row = &plan_rows[_i];
	g_autofree BufSpec *rev = g_new(BufSpec, row->n_set);
	g_autoptr(GsSpillStore) store = NULL;
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	gint64 got;

	for (guint i = 0; i < row->n_set; i++)
		rev[i] = row->set[row->n_set - 1 - i];
	store = store_from(rev, row->n_set);
	got = gs_spill_plan(store, row->from, row->need, row->policy, NOW, out);
	ck_assert_int_eq(got, row->bytes);
	for (guint i = 0; i < out->len; i++)
		ck_assert_uint_eq(g_array_index(out, GsSpillMove, i).id, row->victims[i]);
	ck_assert(out->len == G_N_ELEMENTS(row->victims) || row->victims[out->len] == 0);
}
END_TEST

/* ---- Scripts: one step at a time, the invariant after each ---- */

typedef enum {
	END = 0,
	ADD,       /* id, a size, b tier, c owner priority, t now */
	REMOVE,    /* id */
	LOCK,      /* id */
	UNLOCK,    /* id */
	ALOCK,     /* id, a stream */
	SYNC,      /* a stream; r the locks released */
	TOUCH,     /* id, t now */
	SPILLABLE, /* id, a flag */
	OWNER,     /* id, c owner priority */
	BEGIN,     /* id, a tier */
	ABORT,     /* id */
	MOVED,     /* id, a tier, b the tag that arrived (0: the buffer's own) */
	USE,       /* v buffers, a stream (-1: synchronous), t now */
	UNUSE,     /* v buffers */
	IS,        /* id: a tier, b locks, c async locks, t last use (-1: any) */
	GONE,      /* id: not in the store */
	PLAN,      /* a tier, b need, c policy, t now: v the victims, r their bytes */
	BYTES,     /* a tier: b bytes, c buffers, r moving bytes */
} Op;

typedef struct {
	Op op;
	GsSpillBufId id;
	gint64 a, b, c;
	GsTime t;
	gint64 r; /* the expected GsSpillResult unless the op says otherwise */
	GsSpillBufId v[6]; /* 0-terminated */
} Step;

#define OK GS_SPILL_OK
#define S_ADD(id, size, tier, prio, t) { ADD, id, size, tier, prio, t, OK, {0} }
#define S_ADDR(id, size, tier, prio, t, r) { ADD, id, size, tier, prio, t, r, {0} }
#define S_REMOVE(id, r) { REMOVE, id, 0, 0, 0, 0, r, {0} }
#define S_LOCK(id) { LOCK, id, 0, 0, 0, 0, OK, {0} }
#define S_UNLOCK(id, r) { UNLOCK, id, 0, 0, 0, 0, r, {0} }
#define S_ALOCK(id, s) { ALOCK, id, s, 0, 0, 0, OK, {0} }
#define S_SYNC(s, n) { SYNC, 0, s, 0, 0, 0, n, {0} }
#define S_TOUCH(id, t) { TOUCH, id, 0, 0, 0, t, OK, {0} }
#define S_SPILLABLE(id, f) { SPILLABLE, id, f, 0, 0, 0, OK, {0} }
#define S_OWNER(id, prio) { OWNER, id, 0, 0, prio, 0, OK, {0} }
#define S_BEGIN(id, tier, r) { BEGIN, id, tier, 0, 0, 0, r, {0} }
#define S_ABORT(id, r) { ABORT, id, 0, 0, 0, 0, r, {0} }
#define S_MOVED(id, tier, tag, r) { MOVED, id, tier, tag, 0, 0, r, {0} }
#define S_USE(s, t, r, ...) { USE, 0, s, 0, 0, t, r, { __VA_ARGS__ } }
#define S_UNUSE(r, ...) { UNUSE, 0, 0, 0, 0, 0, r, { __VA_ARGS__ } }
#define S_IS(id, tier, locks, async, t) { IS, id, tier, locks, async, t, 0, {0} }
#define S_GONE(id) { GONE, id, 0, 0, 0, 0, 0, {0} }
#define S_PLAN(tier, need, pol, t, bytes, ...) { PLAN, 0, tier, need, pol, t, bytes, { __VA_ARGS__ } }
#define S_BYTES(tier, bytes, n, moving) { BYTES, 0, tier, bytes, n, 0, moving, {0} }
#define S_UNKNOWN(op, id) { op, id, 0, 0, 0, 0, GS_SPILL_UNKNOWN_BUFFER, {0} }
#define S_END { END, 0, 0, 0, 0, 0, 0, {0} }

typedef struct {
	const char *name;
	Step steps[40];
} Script;

static const Script scripts[] = {
	{ "nested locks", {
		S_ADD(1, 100, GPU, 0, 0),
		S_LOCK(1), S_LOCK(1), S_LOCK(1),
		S_IS(1, GPU, 3, 0, 0),
		S_PLAN(GPU, 1, LRU, 5, 0, 0),
		S_UNLOCK(1, OK), S_UNLOCK(1, OK),
		S_IS(1, GPU, 1, 0, -1),
		S_PLAN(GPU, 1, LARGEST, 5, 0, 0),
		S_UNLOCK(1, OK),
		S_PLAN(GPU, 1, LRU, 5, 100, 1),
		S_UNLOCK(1, GS_SPILL_NOT_LOCKED),
		S_IS(1, GPU, 0, 0, -1),
		S_UNKNOWN(LOCK, 2),
		S_END } },
	{ "stream locks last until sync", {
		S_ADD(1, 100, GPU, 0, 1), S_ADD(2, 100, GPU, 0, 2), S_ADD(3, 100, GPU, 0, 3),
		S_ALOCK(1, 7), S_ALOCK(1, 7), S_ALOCK(2, 8),
		S_IS(1, GPU, 0, 2, -1), S_IS(2, GPU, 0, 1, -1),
		S_PLAN(GPU, 1000, LRU, 10, 100, 3),
		/* an unlock is no sync */
		S_UNLOCK(1, GS_SPILL_NOT_LOCKED),
		S_SYNC(9, 0),
		S_SYNC(7, 2),
		S_IS(1, GPU, 0, 0, -1),
		S_PLAN(GPU, 1000, LRU, 10, 200, 1, 3),
		S_SYNC(7, 0),
		S_SYNC(8, 1),
		S_PLAN(GPU, 1000, LRU, 10, 300, 1, 2, 3),
		S_END } },
	{ "synchronous and stream locks together", {
		S_ADD(1, 100, GPU, 0, 0),
		S_LOCK(1), S_ALOCK(1, 4), S_ALOCK(1, GS_SPILL_SYNCHRONOUS),
		S_IS(1, GPU, 2, 1, -1),
		S_SYNC(4, 1),
		S_IS(1, GPU, 2, 0, -1),
		S_PLAN(GPU, 1, LRU, 0, 0, 0),
		S_UNLOCK(1, OK), S_UNLOCK(1, OK),
		S_PLAN(GPU, 1, LRU, 0, 100, 1),
		S_END } },
	{ "remove", {
		S_ADD(1, 100, GPU, 0, 0), S_ADD(2, 200, HOST, 0, 0),
		S_ADDR(1, 5, DISK, 0, 0, GS_SPILL_DUPLICATE),
		S_BYTES(GPU, 100, 1, 0), S_BYTES(HOST, 200, 1, 0),
		S_LOCK(1),
		S_REMOVE(1, GS_SPILL_LOCKED),
		S_UNLOCK(1, OK),
		S_ALOCK(1, 3), S_ALOCK(2, 3), S_ALOCK(1, 5),
		/* a stream-ordered free drops the buffer's pending locks */
		S_REMOVE(1, OK),
		S_GONE(1),
		S_BYTES(GPU, 0, 0, 0),
		S_REMOVE(1, GS_SPILL_UNKNOWN_BUFFER),
		S_UNLOCK(1, GS_SPILL_UNKNOWN_BUFFER),
		/* the same id again: the old stream locks are not its own */
		S_ADD(1, 300, GPU, 0, 1),
		S_SYNC(5, 0),
		S_SYNC(3, 1),
		S_IS(1, GPU, 0, 0, 1), S_IS(2, HOST, 0, 0, 0),
		S_REMOVE(2, OK), S_REMOVE(1, OK),
		S_BYTES(GPU, 0, 0, 0), S_BYTES(HOST, 0, 0, 0),
		S_END } },
	{ "lru by touch times (cuDF's df1, df2, df3)", {
		S_ADD(1, 24, GPU, 0, 1), S_ADD(2, 24, GPU, 0, 2), S_ADD(3, 24, GPU, 0, 3),
		S_PLAN(GPU, 24, LRU, 10, 24, 1),
		S_TOUCH(1, 4),
		S_PLAN(GPU, 24, LRU, 10, 24, 2),
		S_TOUCH(2, 5),
		S_PLAN(GPU, 24, LRU, 10, 24, 3),
		S_PLAN(GPU, 72, LRU, 10, 72, 3, 1, 2),
		S_TOUCH(3, 6), S_TOUCH(1, 6), S_TOUCH(2, 6),
		S_PLAN(GPU, 72, LRU, 10, 72, 1, 2, 3),
		S_IS(2, GPU, 0, 0, 6),
		S_UNKNOWN(TOUCH, 9),
		S_END } },
	{ "a use locks and touches", {
		S_ADD(1, 100, GPU, 0, 0), S_ADD(2, 100, GPU, 0, 1), S_ADD(3, 100, GPU, 0, 2),
		S_USE(GS_SPILL_SYNCHRONOUS, 50, OK, 1, 2),
		S_IS(1, GPU, 1, 0, 50), S_IS(2, GPU, 1, 0, 50),
		S_PLAN(GPU, 1, LRU, 60, 100, 3),
		S_USE(GS_SPILL_SYNCHRONOUS, 55, OK, 1, 1),
		S_IS(1, GPU, 3, 0, 55),
		S_UNUSE(OK, 1, 1),
		/* all or nothing */
		S_UNUSE(GS_SPILL_UNKNOWN_BUFFER, 1, 9),
		S_UNUSE(GS_SPILL_NOT_LOCKED, 1, 2, 2),
		S_IS(1, GPU, 1, 0, -1), S_IS(2, GPU, 1, 0, -1),
		S_USE(GS_SPILL_SYNCHRONOUS, 70, GS_SPILL_UNKNOWN_BUFFER, 3, 99),
		S_IS(3, GPU, 0, 0, 2),
		S_UNUSE(OK, 1, 2),
		S_USE(4, 80, OK, 1, 2),
		S_IS(1, GPU, 0, 1, 80),
		S_PLAN(GPU, 1000, LRU, 90, 100, 3),
		S_SYNC(4, 2),
		S_PLAN(GPU, 1000, LRU, 90, 300, 3, 1, 2),
		S_END } },
	{ "priority owners", {
		S_ADD(1, 100, GPU, 30, 1), S_ADD(2, 100, GPU, 10, 5),
		S_ADD(3, 100, GPU, 10, 2), S_ADD(4, 100, GPU, 20, 0),
		S_PLAN(GPU, 1, PRIO, 10, 100, 3),
		S_PLAN(GPU, 150, PRIO, 10, 200, 3, 2),
		S_PLAN(GPU, 1000, PRIO, 10, 400, 3, 2, 4, 1),
		/* the task of buffer 2 now ranks highest */
		S_OWNER(2, 40),
		S_PLAN(GPU, 150, PRIO, 10, 200, 3, 4),
		S_LOCK(3),
		S_PLAN(GPU, 1, PRIO, 10, 100, 4),
		S_PLAN(GPU, 1000, PRIO, 10, 300, 4, 1, 2),
		S_UNKNOWN(OWNER, 9),
		S_END } },
	{ "content tags round trip", {
		S_ADD(1, 100, GPU, 0, 0), S_ADD(2, 50, GPU, 0, 0),
		S_MOVED(1, HOST, 0, OK),
		S_IS(1, HOST, 0, 0, -1),
		S_BYTES(GPU, 50, 1, 0), S_BYTES(HOST, 100, 1, 0),
		/* data lost: what came back is not buffer 1's */
		S_MOVED(1, GPU, 12345, GS_SPILL_TAG_MISMATCH),
		S_IS(1, HOST, 0, 0, -1),
		/* data duplicated: buffer 2's content arrived as buffer 1 */
		S_MOVED(1, GPU, TAG(2), GS_SPILL_TAG_MISMATCH),
		S_BYTES(GPU, 50, 1, 0),
		S_MOVED(1, DISK, 0, OK),
		S_MOVED(1, DISK, 0, GS_SPILL_SAME_TIER),
		S_BYTES(HOST, 0, 0, 0), S_BYTES(DISK, 100, 1, 0),
		S_MOVED(1, GPU, 0, OK),
		S_IS(1, GPU, 0, 0, -1),
		/* a host full: straight to disk */
		S_MOVED(2, DISK, 0, OK),
		S_MOVED(2, HOST, 0, OK),
		S_MOVED(2, GPU, TAG(2) + 1, GS_SPILL_TAG_MISMATCH),
		S_MOVED(2, GPU, 0, OK),
		S_BYTES(GPU, 150, 2, 0), S_BYTES(HOST, 0, 0, 0), S_BYTES(DISK, 0, 0, 0),
		S_MOVED(3, HOST, 0, GS_SPILL_UNKNOWN_BUFFER),
		S_END } },
	{ "moves in flight are chosen once", {
		S_ADD(1, 100, GPU, 0, 0), S_ADD(2, 200, GPU, 0, 1),
		S_BEGIN(1, HOST, OK),
		S_BYTES(GPU, 300, 2, 100),
		S_PLAN(GPU, 1, LRU, 5, 200, 2),
		S_BEGIN(1, DISK, GS_SPILL_MOVING),
		S_BEGIN(1, GPU, GS_SPILL_SAME_TIER),
		S_MOVED(1, DISK, 0, GS_SPILL_WRONG_TIER),
		S_ABORT(1, OK),
		S_ABORT(1, GS_SPILL_NOT_MOVING),
		S_BYTES(GPU, 300, 2, 0),
		S_PLAN(GPU, 1, LRU, 5, 100, 1),
		/* a lock that arrives while moving keeps the buffer where it is */
		S_BEGIN(1, HOST, OK),
		S_LOCK(1),
		S_MOVED(1, HOST, 0, GS_SPILL_LOCKED),
		S_IS(1, GPU, 1, 0, -1),
		S_BYTES(GPU, 300, 2, 0),
		S_BEGIN(1, HOST, GS_SPILL_LOCKED),
		S_UNLOCK(1, OK),
		/* a bad copy ends the move too */
		S_BEGIN(1, HOST, OK),
		S_MOVED(1, HOST, 7, GS_SPILL_TAG_MISMATCH),
		S_BYTES(GPU, 300, 2, 0),
		S_BEGIN(1, HOST, OK),
		S_MOVED(1, HOST, 0, OK),
		S_IS(1, HOST, 0, 0, -1),
		S_BYTES(GPU, 200, 1, 0), S_BYTES(HOST, 100, 1, 0),
		/* removing a moving buffer forgets the move */
		S_BEGIN(2, HOST, OK),
		S_REMOVE(2, OK),
		S_BYTES(GPU, 0, 0, 0),
		S_ABORT(2, GS_SPILL_UNKNOWN_BUFFER),
		S_END } },
	{ "unspillable buffers stay, but come back", {
		S_ADD(1, 100, GPU, 0, 0),
		S_SPILLABLE(1, FALSE),
		S_PLAN(GPU, 1, SFIT, 0, 0, 0),
		S_BEGIN(1, HOST, GS_SPILL_UNSPILLABLE),
		S_MOVED(1, HOST, 0, GS_SPILL_UNSPILLABLE),
		S_SPILLABLE(1, TRUE),
		S_PLAN(GPU, 1, SFIT, 0, 100, 1),
		S_BEGIN(1, HOST, OK),
		/* unspillable while moving: the move is refused when it lands */
		S_SPILLABLE(1, FALSE),
		S_MOVED(1, HOST, 0, GS_SPILL_UNSPILLABLE),
		S_IS(1, GPU, 0, 0, -1),
		S_SPILLABLE(1, TRUE),
		S_MOVED(1, HOST, 0, OK),
		/* a move up is an unspill: allowed locked and unspillable */
		S_SPILLABLE(1, FALSE), S_LOCK(1),
		S_BEGIN(1, GPU, OK),
		S_MOVED(1, GPU, 0, OK),
		S_IS(1, GPU, 1, 0, -1),
		S_UNKNOWN(SPILLABLE, 7),
		S_END } },
	{ "host tier to disk", {
		S_ADD(1, 100, HOST, 0, 3), S_ADD(2, 200, HOST, 0, 1), S_ADD(3, 300, GPU, 0, 0),
		S_PLAN(HOST, 250, LRU, 10, 300, 2, 1),
		S_PLAN(HOST, 150, SFIT, 10, 200, 2),
		S_PLAN(HOST, 1, LARGEST, 10, 200, 2),
		S_PLAN(DISK, 1, LRU, 10, 0, 0),
		S_MOVED(2, DISK, 0, OK),
		S_PLAN(HOST, 150, LRU, 10, 100, 1),
		S_PLAN(DISK, 150, LRU, 10, 0, 0),
		S_BYTES(DISK, 200, 1, 0),
		S_END } },
};

static void
run_step(GsSpillStore *store, const Step *s, guint index)
{
	GsPriority owner = {s->c, 0};
	GsSpillBufView view;
	guint n = 0;

	while (n < G_N_ELEMENTS(s->v) && s->v[n] != 0)
		n++;
	switch (s->op) {
	case END:
		break;
	case ADD:
		ck_assert_int_eq(gs_spill_add(store, s->id, owner, s->a, (GsTier) s->b, TRUE,
					      TAG(s->id), s->t), s->r);
		break;
	case REMOVE:
		ck_assert_int_eq(gs_spill_remove(store, s->id), s->r);
		break;
	case LOCK:
		ck_assert_int_eq(gs_spill_lock(store, s->id), s->r);
		break;
	case UNLOCK:
		ck_assert_int_eq(gs_spill_unlock(store, s->id), s->r);
		break;
	case ALOCK:
		ck_assert_int_eq(gs_spill_lock_async(store, s->id, s->a), s->r);
		break;
	case SYNC:
		ck_assert_uint_eq(gs_spill_sync(store, s->a), (guint) s->r);
		break;
	case TOUCH:
		ck_assert_int_eq(gs_spill_touch(store, s->id, s->t), s->r);
		break;
	case SPILLABLE:
		ck_assert_int_eq(gs_spill_set_spillable(store, s->id, (gboolean) s->a), s->r);
		break;
	case OWNER:
		ck_assert_int_eq(gs_spill_set_owner(store, s->id, owner), s->r);
		break;
	case BEGIN:
		ck_assert_int_eq(gs_spill_move_begin(store, s->id, (GsTier) s->a), s->r);
		break;
	case ABORT:
		ck_assert_int_eq(gs_spill_move_abort(store, s->id), s->r);
		break;
	case MOVED:
		ck_assert_int_eq(gs_spill_moved(store, s->id, (GsTier) s->a,
						s->b != 0 ? (guint64) s->b : TAG(s->id)),
				 s->r);
		break;
	case USE:
		ck_assert_int_eq(gs_spill_use_begin(store, s->v, n, s->a, s->t), s->r);
		break;
	case UNUSE:
		ck_assert_int_eq(gs_spill_use_end(store, s->v, n), s->r);
		break;
	case IS:
		ck_assert(gs_spill_lookup(store, s->id, &view));
		ck_assert_uint_eq(view.id, s->id);
		ck_assert_int_eq(view.tier, s->a);
		ck_assert_int_eq(view.locks, s->b);
		ck_assert_int_eq(view.async_locks, s->c);
		ck_assert_uint_eq(view.tag, TAG(s->id));
		ck_assert(!view.moving);
		ck_assert_int_eq(view.dest, view.tier);
		if (s->t >= 0)
			ck_assert_int_eq(view.last_use, s->t);
		break;
	case GONE:
		ck_assert(!gs_spill_lookup(store, s->id, &view));
		break;
	case PLAN: {
		g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));

		ck_assert_int_eq(gs_spill_plan(store, (GsTier) s->a, s->b, (GsSpillVictim) s->c,
					       s->t, out), s->r);
		ck_assert_msg(out->len == n, "step %u: %u victims, expected %u", index, out->len, n);
		for (guint i = 0; i < n; i++)
			ck_assert_uint_eq(g_array_index(out, GsSpillMove, i).id, s->v[i]);
		break;
	}
	case BYTES:
		ck_assert_int_eq(gs_spill_store_bytes(store, (GsTier) s->a), s->b);
		ck_assert_uint_eq(gs_spill_store_count(store, (GsTier) s->a), (guint) s->c);
		ck_assert_int_eq(gs_spill_store_moving_bytes(store, (GsTier) s->a), s->r);
		break;
	}
}

START_TEST(test_script)
{
	const Script *script = &scripts[_i];
	g_autoptr(GsSpillStore) store = gs_spill_store_new();

	check_store(store);
	for (guint i = 0; i < G_N_ELEMENTS(script->steps) && script->steps[i].op != END; i++) {
		run_step(store, &script->steps[i], i);
		ck_assert_msg(gs_spill_store_check(store) == NULL, "%s, step %u: %s", script->name, i,
			      gs_spill_store_check(store));
	}
}
END_TEST

/* ---- Unspill plans ---- */

/*
 * 1 on the GPU; 2 on the host; 3 on disk; 4 on the GPU moving to the host;
 * 5 on the host moving to the GPU; 6 on the host moving to disk.
 */
static GsSpillStore *
unspill_store(void)
{
	static const BufSpec set[] = {
		{ 1, 100, GPU, 0, 0, FALSE, 0, 0, 0 },
		{ 2, 200, HOST, 0, 0, FALSE, 0, 0, 0 },
		{ 3, 300, DISK, 0, 0, FALSE, 0, 0, 0 },
		{ 4, 400, GPU, 0, 0, FALSE, 0, 0, 0 },
		{ 5, 500, HOST, 0, 0, FALSE, 0, 0, 0 },
		{ 6, 600, HOST, 0, 0, FALSE, 0, 0, 0 },
	};
	GsSpillStore *store = store_from(SET(set));

	ck_assert_int_eq(gs_spill_move_begin(store, 4, HOST), OK);
	ck_assert_int_eq(gs_spill_move_begin(store, 5, GPU), OK);
	ck_assert_int_eq(gs_spill_move_begin(store, 6, DISK), OK);
	check_store(store);
	return store;
}

typedef struct {
	/* Inputs */
	GsSpillBufId uses[6];
	guint n_uses;
	/* Outputs */
	GsSpillBufId ids[6]; /* 0-terminated */
	GsTier from[6];
	gboolean moving[6];
	gint64 bytes;
	guint unknown;
} UnspillRow;

static const UnspillRow unspill_rows[] = {
	{ { 1 }, 1, { 0 }, { GPU }, { FALSE }, 0, 0 },
	{ { 2 }, 1, { 2 }, { HOST }, { FALSE }, 200, 0 },
	{ { 3, 2 }, 2, { 3, 2 }, { DISK, HOST }, { FALSE, FALSE }, 500, 0 },
	{ { 2, 2, 3, 2 }, 4, { 2, 3 }, { HOST, DISK }, { FALSE, FALSE }, 500, 0 },
	{ { 4 }, 1, { 4 }, { GPU }, { TRUE }, 0, 0 },
	{ { 5 }, 1, { 5 }, { HOST }, { TRUE }, 0, 0 },
	{ { 6 }, 1, { 6 }, { HOST }, { TRUE }, 600, 0 },
	{ { 1, 77, 2, 88 }, 4, { 2 }, { HOST }, { FALSE }, 200, 2 },
	{ { 0 }, 0, { 0 }, { GPU }, { FALSE }, 0, 0 },
	{ { 6, 5, 4, 3, 2, 1 }, 6, { 6, 5, 4, 3, 2 }, { HOST, HOST, GPU, DISK, HOST },
	  { TRUE, TRUE, TRUE, FALSE, FALSE }, 1100, 0 },
};

START_TEST(test_unspill_plan)
{
	const UnspillRow *row = &unspill_rows[_i];
	g_autoptr(GsSpillStore) store = unspill_store();
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	guint unknown = 99, n = 0;

	ck_assert_int_eq(gs_spill_unspill_plan(store, row->uses, row->n_uses, out, &unknown),
			 row->bytes);
	ck_assert_uint_eq(unknown, row->unknown);
	while (n < G_N_ELEMENTS(row->ids) && row->ids[n] != 0)
		n++;
	ck_assert_uint_eq(out->len, n);
	for (guint i = 0; i < n; i++) {
		const GsSpillMove *m = &g_array_index(out, GsSpillMove, i);
		GsSpillBufView view;

		ck_assert_uint_eq(m->id, row->ids[i]);
		ck_assert_int_eq(m->from, row->from[i]);
		ck_assert_int_eq(m->to, GPU);
		ck_assert(m->moving == row->moving[i]);
		ck_assert(gs_spill_lookup(store, m->id, &view));
		ck_assert_int_eq(m->bytes, view.size);
	}
	/* NULL for the count is allowed */
	ck_assert_int_eq(gs_spill_unspill_plan(store, row->uses, row->n_uses, out, NULL), row->bytes);
	check_store(store);
}
END_TEST

/* ---- Host full ---- */

typedef struct {
	/* Inputs */
	GsTier from;
	gint64 bytes, host_free, disk_free;
	GsHostFull host_full;
	/* Outputs */
	GsSpillDest dest;
} DestRow;

static const DestRow dest_rows[] = {
	{ GPU, 100, 100, 0, GS_HOST_FULL_DISK, GS_SPILL_DEST_HOST },    /* fits exactly */
	{ GPU, 100, 1000, 0, GS_HOST_FULL_FAIL, GS_SPILL_DEST_HOST },
	{ GPU, 100, 99, 1000, GS_HOST_FULL_DISK, GS_SPILL_DEST_DISK },
	{ GPU, 100, 99, 100, GS_HOST_FULL_DISK, GS_SPILL_DEST_DISK },
	{ GPU, 100, 99, 99, GS_HOST_FULL_DISK, GS_SPILL_DEST_NONE },
	{ GPU, 100, 99, 1000, GS_HOST_FULL_FAIL, GS_SPILL_DEST_NONE },
	{ GPU, 100, 0, 0, GS_HOST_FULL_FAIL, GS_SPILL_DEST_NONE },
	{ GPU, 0, 0, 0, GS_HOST_FULL_FAIL, GS_SPILL_DEST_HOST },        /* nothing to hold */
	{ HOST, 100, 0, 100, GS_HOST_FULL_FAIL, GS_SPILL_DEST_DISK },   /* host_full is for GPU victims */
	{ HOST, 100, 1000, 99, GS_HOST_FULL_DISK, GS_SPILL_DEST_NONE },
	{ DISK, 1, 1000, 1000, GS_HOST_FULL_DISK, GS_SPILL_DEST_NONE },
};

START_TEST(test_destination)
{
	const DestRow *row = &dest_rows[_i];

	ck_assert_int_eq(gs_spill_destination(row->from, row->bytes, row->host_free,
					      row->disk_free, row->host_full),
			 row->dest);
}
END_TEST

/*
 * A whole on-demand spill as a driver would run it: plan, route each victim
 * with the host filling up, copy, record; the invariant after every move.
 */
typedef struct {
	/* Inputs */
	GsHostFull host_full;
	/* Outputs */
	gint64 gpu, host, disk; /* bytes per tier afterwards */
	guint failed;
} CycleRow;

static const CycleRow cycle_rows[] = {
	{ GS_HOST_FULL_DISK, 100, 150, 300, 0 },
	{ GS_HOST_FULL_FAIL, 400, 150, 0, 1 },
};

START_TEST(test_spill_cycle)
{
	const CycleRow *row = &cycle_rows[_i];
	static const BufSpec set[] = {
		{ 1, 100, GPU, 0, 0, FALSE, 0, 0, 3 },
		{ 2, 300, GPU, 0, 0, FALSE, 0, 0, 2 },
		{ 3, 150, GPU, 0, 0, FALSE, 0, 0, 1 },
	};
	g_autoptr(GsSpillStore) store = store_from(SET(set));
	g_autoptr(GArray) plan = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	gint64 host_free = 200, disk_free = 1000;
	guint failed = 0;

	/* lru: 3 (150) then 2 (300) cover 400 */
	ck_assert_int_eq(gs_spill_plan(store, GPU, 400, LRU, 10, plan), 450);
	ck_assert_uint_eq(plan->len, 2);
	for (guint i = 0; i < plan->len; i++) {
		const GsSpillMove *m = &g_array_index(plan, GsSpillMove, i);
		GsSpillDest d = gs_spill_destination(m->from, m->bytes, host_free, disk_free,
						     row->host_full);
		GsTier to = d == GS_SPILL_DEST_HOST ? HOST : DISK;

		if (d == GS_SPILL_DEST_NONE) {
			failed++;
			continue;
		}
		ck_assert_int_eq(gs_spill_move_begin(store, m->id, to), OK);
		check_store(store);
		ck_assert_int_eq(gs_spill_moved(store, m->id, to, TAG(m->id)), OK);
		check_store(store);
		if (to == HOST)
			host_free -= m->bytes;
		else
			disk_free -= m->bytes;
	}
	ck_assert_uint_eq(failed, row->failed);
	ck_assert_int_eq(gs_spill_store_bytes(store, GPU), row->gpu);
	ck_assert_int_eq(gs_spill_store_bytes(store, HOST), row->host);
	ck_assert_int_eq(gs_spill_store_bytes(store, DISK), row->disk);
	ck_assert_int_eq(gs_spill_store_moving_bytes(store, GPU), 0);
}
END_TEST

/* ---- Odds and ends ---- */

START_TEST(test_result_texts)
{
	for (guint r = 0; r < GS_N_SPILL_RESULTS; r++) {
		ck_assert_ptr_nonnull(gs_spill_result_text((GsSpillResult) r));
		ck_assert_uint_gt(strlen(gs_spill_result_text((GsSpillResult) r)), 0);
	}
	ck_assert_str_eq(gs_spill_result_text(GS_SPILL_OK), "ok");
	ck_assert_ptr_nonnull(strstr(gs_spill_result_text(GS_SPILL_TAG_MISMATCH), "lost or duplicated"));
}
END_TEST

/* Many buffers added and removed in a scrambled order keep the books straight. */
START_TEST(test_many_buffers)
{
	g_autoptr(GsSpillStore) store = gs_spill_store_new();
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	GsPriority owner = {0, 0};
	gint64 total = 0;

	for (guint i = 0; i < 200; i++) {
		/* 37 is prime to 200: every id once, scrambled */
		GsSpillBufId id = (i * 37) % 200 + 1;

		ck_assert_int_eq(gs_spill_add(store, id, owner, (gint64) id, GPU, TRUE, TAG(id),
					      (GsTime) (200 - id)), OK);
		total += (gint64) id;
	}
	check_store(store);
	ck_assert_int_eq(gs_spill_plan(store, GPU, total, LRU, 1000, out), total);
	for (guint i = 0; i < out->len; i++)
		ck_assert_uint_eq(g_array_index(out, GsSpillMove, i).id, 200 - i);
	for (GsSpillBufId id = 1; id <= 200; id += 2) {
		ck_assert_int_eq(gs_spill_remove(store, id), OK);
		total -= (gint64) id;
	}
	check_store(store);
	ck_assert_uint_eq(gs_spill_store_count(store, GPU), 100);
	ck_assert_int_eq(gs_spill_store_bytes(store, GPU), total);
	ck_assert_int_eq(gs_spill_plan(store, GPU, 1, LARGEST, 1000, out), 200);
	ck_assert_int_eq(gs_spill_plan(store, GPU, 3, SFIT, 1000, out), 4);
}
END_TEST

static guint criticals;

static void
count_criticals(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	if (level & G_LOG_LEVEL_CRITICAL)
		criticals++;
}

START_TEST(test_programming_errors)
{
	g_autoptr(GsSpillStore) store = gs_spill_store_new();
	g_autoptr(GArray) wrong = g_array_new(FALSE, FALSE, sizeof(int));
	GsPriority owner = {0, 0};

	criticals = 0;
	g_log_set_default_handler(count_criticals, NULL);
	ck_assert_int_ne(gs_spill_add(store, 1, owner, -1, GPU, TRUE, 0, 0), OK);
	ck_assert_int_ne(gs_spill_add(store, 1, owner, 1, (GsTier) 7, TRUE, 0, 0), OK);
	ck_assert_int_eq(gs_spill_plan(store, GPU, 1, LRU, 0, wrong), 0);
	ck_assert_int_eq(gs_spill_plan(store, GPU, 1, LRU, 0, NULL), 0);
	ck_assert_str_eq(gs_spill_result_text(GS_N_SPILL_RESULTS), "invalid spill result");
	ck_assert_uint_eq(criticals, 5);
	ck_assert_uint_eq(gs_spill_store_count(store, GPU), 0);
	check_store(store);
	gs_spill_store_free(NULL);
}
END_TEST

Suite *
gs_test_suite_spill(void)
{
	Suite *s = suite_create("spill");
	TCase *tc;

	tc = tcase_create("victims");
	tcase_add_loop_test(tc, test_plan, 0, G_N_ELEMENTS(plan_rows));
	tcase_add_loop_test(tc, test_plan_reversed, 0, G_N_ELEMENTS(plan_rows));
	tcase_add_test(tc, test_many_buffers);
	suite_add_tcase(s, tc);

	tc = tcase_create("store");
	tcase_add_loop_test(tc, test_script, 0, G_N_ELEMENTS(scripts));
	tcase_add_test(tc, test_result_texts);
	tcase_add_test(tc, test_programming_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("moves");
	tcase_add_loop_test(tc, test_unspill_plan, 0, G_N_ELEMENTS(unspill_rows));
	tcase_add_loop_test(tc, test_destination, 0, G_N_ELEMENTS(dest_rows));
	tcase_add_loop_test(tc, test_spill_cycle, 0, G_N_ELEMENTS(cycle_rows));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_spill());
}
