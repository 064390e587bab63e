/*
 * Unit tests of sim/heap.h: ordering by (time, seq), same-time FIFO, the fields
 * travelling by value, what fires soon, interleaved pushes and pops against a
 * sorted reference (randomized with fixed seeds, times near one another, far
 * apart, in clusters, and pushed before the last event fired), two-phase
 * firing with pop_due (also as a randomized driver loop), growth across the
 * buckets' chunks, and clear.
 * gs_heap_check() runs after every operation of the small tests.
 */
#include <check.h>
#include <stdlib.h>

#include "testlib.h"
#include "sim/heap.h"

static void
ck_heap(const GsHeap *heap)
{
	const char *why = gs_heap_check(heap);

	ck_assert_msg(why == NULL, "heap invariant: %s", why);
}

/* TRUE if @a must fire before @b. */
static gboolean
fires_before(const GsEvent *a, const GsEvent *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* Field by field: GsEvent has padding, so no memcmp. */
static void
ck_same_event(const GsEvent *a, const GsEvent *b)
{
	ck_assert_int_eq(a->time, b->time);
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_uint_eq(a->kind, b->kind);
	ck_assert_uint_eq(a->target, b->target);
}

/* ---- ordering by time, then by seq ---- */

#define MAX_PUSHES 8

typedef struct {
	/* Inputs: times pushed in this order; event i has target i. */
	guint n;
	GsTime times[MAX_PUSHES];
	/* Outputs: the targets in popping order. */
	gint64 order[MAX_PUSHES];
} OrderRow;

static const OrderRow order_rows[] = {
	{1, {7}, {0}},
	{3, {30, 10, 20}, {1, 2, 0}},
	{4, {5, 5, 5, 5}, {0, 1, 2, 3}},
	{5, {2, 1, 2, 1, 0}, {4, 1, 3, 0, 2}},
	{4, {-5, 0, -10, G_MAXINT64}, {2, 0, 1, 3}},
	{6, {G_MININT64, G_MAXINT64, 0, G_MININT64, G_MAXINT64, 0}, {0, 3, 2, 5, 1, 4}},
	{8, {8, 7, 6, 5, 4, 3, 2, 1}, {7, 6, 5, 4, 3, 2, 1, 0}},
	{8, {3, 1, 3, 1, 2, 2, 1, 3}, {1, 3, 6, 4, 5, 0, 2, 7}},
};

START_TEST(test_order)
{
	const OrderRow *row = &order_rows[_i];
	g_autoptr(GsHeap) heap = gs_heap_new();
	GsEvent e, peeked;

	for (guint i = 0; i < row->n; i++) {
		ck_assert_uint_eq(gs_heap_push(heap, row->times[i], 0, (guint) i), i);
		ck_heap(heap);
	}
	ck_assert_uint_eq(gs_heap_len(heap), row->n);
	for (guint i = 0; i < row->n; i++) {
		ck_assert(gs_heap_peek(heap, &peeked));
		ck_assert(gs_heap_pop(heap, &e));
		ck_heap(heap);
		ck_same_event(&peeked, &e);
		ck_assert_int_eq((gint64) e.target, row->order[i]);
		ck_assert_uint_eq(e.seq, (guint64) row->order[i]);
		ck_assert_int_eq(e.time, row->times[row->order[i]]);
		ck_assert_uint_eq(gs_heap_len(heap), row->n - i - 1);
	}
	ck_assert(!gs_heap_pop(heap, &e));
}
END_TEST

START_TEST(test_empty)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	g_autoptr(GArray) due = g_array_new(FALSE, FALSE, sizeof(GsEvent));
	GsEvent e;

	ck_heap(heap);
	ck_assert_uint_eq(gs_heap_len(heap), 0);
	ck_assert(!gs_heap_peek(heap, &e));
	ck_assert(!gs_heap_pop(heap, &e));
	ck_assert(!gs_heap_peek(heap, NULL));
	ck_assert(!gs_heap_pop(heap, NULL));
	ck_assert_uint_eq(gs_heap_pop_due(heap, G_MAXINT64, due), 0);
	ck_assert_uint_eq(due->len, 0);
	gs_heap_clear(heap);
	ck_heap(heap);
	gs_heap_free(NULL);
}
END_TEST

/* Every field comes back as pushed; the heap does not look at the caller's. */
START_TEST(test_fields)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	GsEvent e;
	guint64 expected; /* the caller's: the event target 7 still expects */
	guint fired = 0;

	gs_heap_push(heap, 100, 3, 7);
	ck_assert(gs_heap_peek(heap, NULL));
	ck_assert_uint_eq(gs_heap_len(heap), 1);
	ck_assert(gs_heap_pop(heap, &e));
	ck_assert_int_eq(e.time, 100);
	ck_assert_uint_eq(e.seq, 0);
	ck_assert_uint_eq(e.kind, 3);
	ck_assert_uint_eq(e.target, 7);

	/* Lazy cancellation as a driver does it: reschedule, drop what is no longer expected. */
	gs_heap_push(heap, 50, 1, 7);
	expected = gs_heap_push(heap, 60, 2, 7);
	gs_heap_push(heap, 40, G_MAXUINT, G_MAXUINT);
	ck_assert(gs_heap_pop(heap, &e));
	ck_assert_uint_eq(e.kind, G_MAXUINT);
	ck_assert_uint_eq(e.target, G_MAXUINT);
	while (gs_heap_pop(heap, &e)) {
		if (e.seq != expected)
			continue;
		fired++;
		ck_assert_uint_eq(e.kind, 2);
	}
	ck_assert_uint_eq(fired, 1);
}
END_TEST

/*
 * soon[0] is the next event, and soon[1], when given, the one after it, as
 * long as nothing is pushed in between: with times close together and far
 * apart, ties included.
 */
START_TEST(test_soon)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	GRand *rand = g_rand_new_with_seed(11);
	const GsEvent *soon[2];
	GsEvent fired, after, copy[2];
	guint afters = 0;

	ck_assert_uint_eq(gs_heap_soon(heap, soon), 0);
	gs_heap_push(heap, 5, 0, 1);
	ck_assert_uint_eq(gs_heap_soon(heap, soon), 1);
	ck_assert_uint_eq(soon[0]->target, 1);
	for (guint i = 0; i < 300; i++)
		gs_heap_push(heap, g_rand_int_range(rand, 0, 50) << g_rand_int_range(rand, 0, 20), 0, i);
	while (gs_heap_len(heap) > 1) {
		guint n = gs_heap_soon(heap, soon);

		ck_assert_uint_ge(n, 1);
		for (guint i = 0; i < n; i++)
			copy[i] = *soon[i]; /* valid until the pop */
		gs_heap_pop(heap, &fired);
		ck_same_event(&copy[0], &fired);
		if (n == 2) {
			ck_assert(gs_heap_peek(heap, &after));
			ck_same_event(&copy[1], &after);
			afters++;
		}
		ck_heap(heap);
		gs_heap_push(heap, fired.time + g_rand_int_range(rand, 0, 2000), 0, fired.target);
		if (g_rand_boolean(rand))
			gs_heap_pop(heap, NULL);
	}
	ck_assert_uint_gt(afters, 10);
	g_rand_free(rand);
}
END_TEST

/* ---- same-time FIFO ---- */

/* _i = 0: all pushed, then all popped; _i = 1: pops interleaved with pushes. */
START_TEST(test_same_time_fifo)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	const guint n = 1000;
	gint64 next_expected = 0;
	GsEvent e;

	for (guint i = 0; i < n; i++) {
		/* Later times pushed in between must not disturb the tie order. */
		gs_heap_push(heap, 42, 0, (guint) i);
		if (i % 7 == 0)
			gs_heap_push(heap, 43 + i % 5, 0, G_MAXUINT);
		if (_i == 1 && i % 3 == 2) {
			ck_assert(gs_heap_pop(heap, &e));
			ck_assert_int_eq(e.time, 42);
			ck_assert_int_eq((gint64) e.target, next_expected++);
		}
	}
	ck_heap(heap);
	while (gs_heap_peek(heap, &e) && e.time == 42) {
		gs_heap_pop(heap, &e);
		ck_assert_int_eq((gint64) e.target, next_expected++);
	}
	ck_assert_int_eq(next_expected, n);
	/* What is left is later, in (time, seq) order. */
	{
		GsEvent prev = {.time = G_MININT64};

		while (gs_heap_pop(heap, &e)) {
			ck_assert(fires_before(&prev, &e));
			ck_assert_uint_eq(e.target, G_MAXUINT);
			prev = e;
		}
	}
}
END_TEST

/* ---- interleaved push and pop against a sorted reference ---- */

/* The index at which @e goes to keep @ref sorted in firing order. */
static guint
ref_position(GArray *ref, const GsEvent *e)
{
	guint lo = 0, hi = ref->len;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;

		if (fires_before(&g_array_index(ref, GsEvent, mid), e))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How the times of the random test are drawn. */
typedef enum {
	TIMES_NEAR,     /* -20 .. 80: ties common, many pushed before the last event fired */
	TIMES_FAR,      /* anywhere in the 64-bit range, its ends included */
	TIMES_CLUSTERS, /* a few times, far apart, each pushed many times */
	TIMES_AHEAD,    /* at or after the last event fired, up to 2^40 later: a driver's */
} TimeShape;

typedef struct {
	guint32 seed;
	TimeShape shape;
} RandomRow;

static const RandomRow random_rows[] = {
	{1, TIMES_NEAR}, {2, TIMES_NEAR}, {42, TIMES_NEAR}, {20240601, TIMES_NEAR},
	{3, TIMES_FAR}, {4, TIMES_FAR}, {5, TIMES_CLUSTERS}, {6, TIMES_CLUSTERS},
	{7, TIMES_AHEAD}, {8, TIMES_AHEAD},
};

static GsTime
random_time(GRand *rand, TimeShape shape, GsTime last_fired)
{
	static const GsTime clusters[] = {G_MININT64, -70000, 0, 255, 256, 65536 + 3,
					  G_GINT64_CONSTANT(1) << 40, G_MAXINT64};
	guint64 bits;

	switch (shape) {
	case TIMES_NEAR:
		return g_rand_int_range(rand, -20, 80);
	case TIMES_FAR:
		if (g_rand_int_range(rand, 0, 20) == 0)
			return g_rand_boolean(rand) ? G_MININT64 : G_MAXINT64;
		bits = (guint64) g_rand_int(rand) << 32 | g_rand_int(rand);
		return (GsTime) (bits >> g_rand_int_range(rand, 0, 64));
	case TIMES_CLUSTERS:
		return clusters[g_rand_int_range(rand, 0, G_N_ELEMENTS(clusters))];
	case TIMES_AHEAD:
		return last_fired + (g_rand_int_range(rand, 0, 4) == 0
					     ? 0
					     : (GsTime) g_rand_int_range(rand, 0, 1000)
						       << g_rand_int_range(rand, 0, 31));
	}
	g_assert_not_reached();
}

START_TEST(test_random_vs_reference)
{
	const RandomRow *row = &random_rows[_i];
	g_autoptr(GsHeap) heap = gs_heap_new();
	g_autoptr(GArray) ref = g_array_new(FALSE, FALSE, sizeof(GsEvent));
	GRand *rand = g_rand_new_with_seed(row->seed);
	const guint n_ops = 20000;
	guint64 next_seq = 0;
	guint pushes = 0;
	GsTime last_fired = 0;
	GsEvent e;

	for (guint op = 0; op < n_ops; op++) {
		/* Push more than pop, in phases, so the heap grows and shrinks. */
		gdouble p_push = (op / 2000) % 2 == 0 ? 0.65 : 0.35;

		if (ref->len == 0 || g_rand_double(rand) < p_push) {
			GsEvent r = {
				.time = random_time(rand, row->shape, last_fired),
				.seq = next_seq++,
				.kind = g_rand_int_range(rand, 0, 4),
				.target = g_rand_int(rand),
			};

			ck_assert_uint_eq(gs_heap_push(heap, r.time, r.kind, r.target),
					  r.seq);
			g_array_insert_val(ref, ref_position(ref, &r), r);
			pushes++;
		} else {
			ck_assert(gs_heap_pop(heap, &e));
			ck_same_event(&e, &g_array_index(ref, GsEvent, 0));
			g_array_remove_index(ref, 0);
			last_fired = e.time;
		}
		ck_assert_uint_eq(gs_heap_len(heap), ref->len);
		if (op % 97 == 0)
			ck_heap(heap);
	}
	ck_assert_uint_gt(pushes, 5000);
	ck_heap(heap);
	for (guint i = 0; i < ref->len; i++) {
		ck_assert(gs_heap_pop(heap, &e));
		ck_same_event(&e, &g_array_index(ref, GsEvent, i));
	}
	ck_assert(!gs_heap_pop(heap, &e));
	g_rand_free(rand);
}
END_TEST

/*
 * A push before the last event fired is exact: it fires next, and the events
 * already waiting keep their order, ties included.
 */
START_TEST(test_push_before_last_fired)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	static const GsTime times[] = {1000, 300, 70000, 300, 70000, 5};
	static const guint expected[] = {6, 1, 3, 7, 0, 2, 4}; /* targets, in firing order */
	GsEvent e;

	for (guint i = 0; i < G_N_ELEMENTS(times); i++)
		gs_heap_push(heap, times[i], 0, i);
	ck_assert(gs_heap_pop(heap, &e));
	ck_assert_uint_eq(e.target, 5);
	/* Fired at 5; now 4, before it, and a third event at 300. */
	gs_heap_push(heap, 4, 0, 6);
	gs_heap_push(heap, 300, 0, 7);
	ck_heap(heap);
	for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
		ck_assert(gs_heap_pop(heap, &e));
		ck_assert_uint_eq(e.target, expected[i]);
		ck_heap(heap);
	}
	ck_assert(!gs_heap_pop(heap, &e));
}
END_TEST

/* ---- two-phase firing ---- */

START_TEST(test_pop_due_basic)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	g_autoptr(GArray) due = g_array_new(FALSE, FALSE, sizeof(GsEvent));
	static const GsTime times[] = {10, 5, 20, 10, 10};
	static const gint64 expected[] = {1, 0, 3, 4}; /* targets, in firing order */
	GsEvent sentinel = {.time = -1, .target = 99};
	GsEvent e;

	for (guint i = 0; i < G_N_ELEMENTS(times); i++)
		gs_heap_push(heap, times[i], 0, (guint) i);
	/* Nothing due yet: @due is left alone. */
	ck_assert_uint_eq(gs_heap_pop_due(heap, 4, due), 0);
	ck_assert_uint_eq(due->len, 0);
	/* pop_due appends: what @due already holds stays in front. */
	g_array_append_val(due, sentinel);
	ck_assert_uint_eq(gs_heap_pop_due(heap, 10, due), G_N_ELEMENTS(expected));
	ck_heap(heap);
	ck_assert_uint_eq(due->len, 1 + G_N_ELEMENTS(expected));
	ck_assert_int_eq(g_array_index(due, GsEvent, 0).target, 99);
	for (guint i = 0; i < G_N_ELEMENTS(expected); i++)
		ck_assert_int_eq(g_array_index(due, GsEvent, i + 1).target, expected[i]);
	ck_assert_uint_eq(gs_heap_len(heap), 1);
	/* Asking again at the same instant finds nothing new. */
	ck_assert_uint_eq(gs_heap_pop_due(heap, 10, due), 0);
	ck_assert_uint_eq(gs_heap_pop_due(heap, 19, due), 0);
	ck_assert_uint_eq(gs_heap_pop_due(heap, G_MAXINT64, due), 1);
	ck_assert(!gs_heap_peek(heap, &e));
	ck_assert_int_eq(g_array_index(due, GsEvent, due->len - 1).time, 20);
}
END_TEST

/* Events scheduled while a pass runs wait for the next pass, even at now. */
START_TEST(test_pop_due_two_phase)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	g_autoptr(GArray) due = g_array_new(FALSE, FALSE, sizeof(GsEvent));

	gs_heap_push(heap, 10, 0, 1);
	gs_heap_push(heap, 10, 0, 2);
	ck_assert_uint_eq(gs_heap_pop_due(heap, 10, due), 2);
	/* "Running" the pass: each event schedules one at now and one later. */
	for (guint i = 0; i < due->len; i++) {
		guint target = g_array_index(due, GsEvent, i).target;

		gs_heap_push(heap, 10, 0, target * 10);
		gs_heap_push(heap, 11, 0, target * 100);
	}
	ck_assert_uint_eq(due->len, 2);
	ck_heap(heap);

	g_array_set_size(due, 0);
	ck_assert_uint_eq(gs_heap_pop_due(heap, 10, due), 2);
	ck_assert_int_eq(g_array_index(due, GsEvent, 0).target, 10);
	ck_assert_int_eq(g_array_index(due, GsEvent, 1).target, 20);
	ck_assert_uint_eq(g_array_index(due, GsEvent, 0).seq, 2);
	ck_assert_uint_eq(g_array_index(due, GsEvent, 1).seq, 4);

	g_array_set_size(due, 0);
	ck_assert_uint_eq(gs_heap_pop_due(heap, 10, due), 0);
	ck_assert_uint_eq(gs_heap_pop_due(heap, 11, due), 2);
	ck_assert_int_eq(g_array_index(due, GsEvent, 0).target, 100);
	ck_assert_int_eq(g_array_index(due, GsEvent, 1).target, 200);
	ck_assert_uint_eq(gs_heap_len(heap), 0);
}
END_TEST

/* Popping a pass one event at a time fires what pop_due collects, in its order. */
START_TEST(test_pop_due_before)
{
	g_autoptr(GsHeap) a = gs_heap_new();
	g_autoptr(GsHeap) b = gs_heap_new();
	g_autoptr(GArray) due = g_array_new(FALSE, FALSE, sizeof(GsEvent));
	GRand *rand = g_rand_new_with_seed(11);
	GsEvent next, e;

	for (guint i = 0; i < 200; i++) {
		GsTime t = g_rand_int_range(rand, 0, 20);

		gs_heap_push(a, t, 0, (guint) i);
		gs_heap_push(b, t, 0, (guint) i);
	}
	while (gs_heap_peek(a, &next)) {
		guint64 before = gs_heap_next_seq(b);

		g_array_set_size(due, 0);
		gs_heap_pop_due(a, next.time, due);
		for (guint i = 0; i < due->len; i++) {
			const GsEvent *x = &g_array_index(due, GsEvent, i);

			ck_assert(gs_heap_pop_due_before(b, next.time, before, &e));
			ck_assert_uint_eq(e.seq, x->seq);
			ck_assert_uint_eq(e.target, x->target);
			/* Both schedule the same follow-up; it must wait for the next pass. */
			if (x->target < 400) {
				gs_heap_push(a, next.time, 0, x->target + 200);
				gs_heap_push(b, next.time, 0, x->target + 200);
			}
		}
		ck_assert(!gs_heap_pop_due_before(b, next.time, before, &e));
	}
	ck_assert_uint_eq(gs_heap_len(b), 0);
	g_rand_free(rand);
}
END_TEST

/*
 * A randomized driver loop: each fired event schedules up to two more, some at
 * the same instant. Checks that no pass contains an event scheduled during
 * that pass, and that the overall firing order is ascending (time, seq).
 */
static const guint32 des_seeds[] = {7, 99, 31337};

START_TEST(test_driver_loop)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	g_autoptr(GArray) due = g_array_new(FALSE, FALSE, sizeof(GsEvent));
	GRand *rand = g_rand_new_with_seed(des_seeds[_i]);
	GsEvent prev = {.time = G_MININT64};
	GsEvent next;
	guint fired = 0, passes = 0, same_instant = 0;
	guint64 pushed = 0; /* the heap's sequence counter, as seen from outside */

	for (guint i = 0; i < 50; i++)
		ck_assert_uint_eq(gs_heap_push(heap, g_rand_int_range(rand, 0, 100), 0, 0),
				  pushed++);
	while (gs_heap_peek(heap, &next)) {
		GsTime now = next.time;
		guint64 first_seq_of_pass;

		g_array_set_size(due, 0);
		ck_assert_uint_gt(gs_heap_pop_due(heap, now, due), 0);
		/* Anything pushed from here on is scheduled during this pass. */
		first_seq_of_pass = pushed;
		passes++;
		for (guint i = 0; i < due->len; i++) {
			const GsEvent *e = &g_array_index(due, GsEvent, i);

			ck_assert_int_le(e->time, now);
			ck_assert_uint_lt(e->seq, first_seq_of_pass);
			ck_assert(fires_before(&prev, e));
			prev = *e;
			fired++;
			if (fired > 20000)
				continue;
			for (gint k = g_rand_int_range(rand, 0, 4); k > 0; k--) {
				GsTime delay = g_rand_int_range(rand, 0, 4) == 0
						       ? 0
						       : g_rand_int_range(rand, 1, 50);

				same_instant += delay == 0;
				ck_assert_uint_eq(gs_heap_push(heap, now + delay, 0, (guint) fired),
						  pushed++);
			}
		}
		if (passes % 101 == 0)
			ck_heap(heap);
	}
	ck_assert_uint_gt(fired, 1000);
	ck_assert_uint_gt(same_instant, 100);
	g_rand_free(rand);
}
END_TEST

/* ---- growth and clear ---- */

/* Sizes around a chunk of a bucket (32 events) and two, and larger ones. */
static const guint growth_sizes[] = {31, 32, 33, 64, 65, 1000, 100000};

START_TEST(test_growth)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	const guint n = growth_sizes[_i];
	GsEvent e;

	/* Descending times: each event fires before every one pushed before it. */
	for (guint i = 0; i < n; i++)
		ck_assert_uint_eq(gs_heap_push(heap, (GsTime) (n - i), 0, (guint) i), i);
	ck_assert_uint_eq(gs_heap_len(heap), n);
	ck_heap(heap);
	for (guint i = 0; i < n; i++) {
		ck_assert(gs_heap_pop(heap, &e));
		ck_assert_int_eq(e.time, (GsTime) (i + 1));
		ck_assert_int_eq((gint64) e.target, (gint64) (n - 1 - i));
	}
	ck_assert_uint_eq(gs_heap_len(heap), 0);
	ck_heap(heap);
}
END_TEST

START_TEST(test_clear)
{
	g_autoptr(GsHeap) heap = gs_heap_new();
	GsEvent e;

	for (guint i = 0; i < 100; i++)
		gs_heap_push(heap, i % 10, 0, (guint) i);
	gs_heap_clear(heap);
	ck_heap(heap);
	ck_assert_uint_eq(gs_heap_len(heap), 0);
	ck_assert(!gs_heap_peek(heap, &e));
	ck_assert(!gs_heap_pop(heap, &e));
	/* The counter goes on: sequence numbers are never reused. */
	ck_assert_uint_eq(gs_heap_push(heap, 5, 0, 1), 100);
	ck_assert_uint_eq(gs_heap_push(heap, 3, 0, 2), 101);
	ck_heap(heap);
	ck_assert(gs_heap_pop(heap, &e));
	ck_assert_uint_eq(e.target, 2);
	ck_assert(gs_heap_pop(heap, &e));
	ck_assert_uint_eq(e.target, 1);
	gs_heap_clear(heap);
	gs_heap_clear(heap);
	ck_assert_uint_eq(gs_heap_len(heap), 0);
}
END_TEST

Suite *gs_test_suite_heap(void);

Suite *
gs_test_suite_heap(void)
{
	Suite *s = suite_create("heap");
	TCase *tc;

	tc = tcase_create("order");
	tcase_add_loop_test(tc, test_order, 0, G_N_ELEMENTS(order_rows));
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_soon);
	tcase_add_loop_test(tc, test_same_time_fifo, 0, 2);
	tcase_add_loop_test(tc, test_random_vs_reference, 0, G_N_ELEMENTS(random_rows));
	tcase_add_test(tc, test_push_before_last_fired);
	suite_add_tcase(s, tc);

	tc = tcase_create("firing");
	tcase_add_test(tc, test_pop_due_basic);
	tcase_add_test(tc, test_pop_due_two_phase);
	tcase_add_test(tc, test_pop_due_before);
	tcase_add_loop_test(tc, test_driver_loop, 0, G_N_ELEMENTS(des_seeds));
	suite_add_tcase(s, tc);

	tc = tcase_create("storage");
	tcase_add_loop_test(tc, test_growth, 0, G_N_ELEMENTS(growth_sizes));
	tcase_add_test(tc, test_clear);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_heap());
}
