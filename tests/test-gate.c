/*
 * Unit tests of gate.h: the counter encoding (§D.2), the gate's cases as
 * scripts of enter / leave / close / reset checked after every step (§D.3,
 * the §D.4 fixes, §D.6), striping (§D.5), the copy protocol's transition
 * table with its one-authoritative-copy invariant, and real threads hammering
 * one gate, after reference/tiers-spill-pages-evac.md §D and SPEC §1.5.
 *
 * Threads appear here only: the module itself never starts one.
 */
#include <check.h>
#include <gpusim/gate.h>

#include "testlib.h"

#define M GS_GATE_OOM_MARKER

/* ---- Counter encoding (§D.2) ---- */

typedef struct {
	guint32 count;
	gboolean closed;
	guint32 word;
} WordRow;

static const WordRow word_rows[] = {
	{ 0, FALSE, 0x00000000u },
	{ 1, FALSE, 0x00000001u },
	{ 0, TRUE, 0x80000000u },
	{ 3, TRUE, 0x80000003u },
	{ 0x7fffffffu, FALSE, 0x7fffffffu },
	{ 0x7fffffffu, TRUE, 0xffffffffu },
};

START_TEST(test_word_encoding)
{
	const WordRow *row = &word_rows[_i];

	ck_assert_uint_eq(gs_gate_word_make(row->count, row->closed), row->word);
	ck_assert_uint_eq(gs_gate_word_count(row->word), row->count);
	ck_assert_int_eq(gs_gate_word_closed(row->word), row->closed);
}
END_TEST

START_TEST(test_word_constants)
{
	ck_assert_uint_eq(GS_GATE_OOM_MARKER, 0x80000000u);
	ck_assert_uint_eq(GS_GATE_COUNT_MASK, 0x7fffffffu);
	ck_assert_uint_eq(GS_GATE_OOM_MARKER | GS_GATE_COUNT_MASK, 0xffffffffu);
	ck_assert_uint_eq(GS_GATE_OOM_MARKER & GS_GATE_COUNT_MASK, 0);
	/* §D.2: decrementing with the marker set keeps it, the count being positive */
	ck_assert_uint_eq(gs_gate_word_make(3, TRUE) - 1, gs_gate_word_make(2, TRUE));
	ck_assert_uint_eq(gs_gate_word_make(1, TRUE) - 1, GS_GATE_OOM_MARKER);
}
END_TEST

/* ---- Stripes (§D.5) ---- */

typedef struct {
	guint n_cpus;
	guint stripes;
} StripesRow;

static const StripesRow stripes_rows[] = {
	{ 0, 1 },   { 1, 1 },   { 2, 2 },     { 3, 4 },     { 5, 8 },
	{ 16, 16 }, { 17, 32 }, { 100, 128 }, { 128, 128 }, { 1000, 128 },
};

START_TEST(test_stripes_for)
{
	const StripesRow *row = &stripes_rows[_i];
	g_autoptr(GsGate) gate = gs_gate_new(row->n_cpus);

	ck_assert_uint_eq(gs_gate_stripes_for(row->n_cpus), row->stripes);
	ck_assert_uint_eq(gs_gate_n_stripes(gate), row->stripes);
	for (guint i = 0; i < row->stripes; i++)
		ck_assert_uint_eq(gs_gate_word(gate, i), 0);
	ck_assert(!gs_gate_is_closed(gate));
	ck_assert_uint_eq(gs_gate_inside(gate), 0);
}
END_TEST

START_TEST(test_stripe_of)
{
	gboolean hit[8] = { FALSE };

	/* fmix64(0) is 0; one stripe takes everybody */
	ck_assert_uint_eq(gs_gate_stripe_of(0, 8), 0);
	for (GsThreadId t = 0; t < 256; t++) {
		guint s = gs_gate_stripe_of(t, 8);

		ck_assert_uint_lt(s, 8);
		ck_assert_uint_eq(gs_gate_stripe_of(t, 8), s);
		ck_assert_uint_eq(gs_gate_stripe_of(t, 1), 0);
		/* the mask keeps the low bits: a smaller gate agrees modulo its size */
		ck_assert_uint_eq(gs_gate_stripe_of(t, 4), s & 3);
		hit[s] = TRUE;
	}
	/* consecutive ids spread over every stripe */
	for (guint s = 0; s < 8; s++)
		ck_assert(hit[s]);
}
END_TEST

/* ---- The gate's cases as scripts (§D.3, §D.4, §D.6) ---- */

typedef enum {
	OP_END = 0,
	OP_ENTER,
	OP_LEAVE,
	OP_CLOSE,
	OP_RESET,
} Op;

enum { A, B, C, DRV, N_WHO }; /* DRV: the driver, outside any scope */

typedef struct {
	Op op;
	guint who;
	/* OP_ENTER: GsGateResult; OP_CLOSE: others inside; OP_RESET: gboolean */
	guint64 expect;
	/* after the step; the word is the single-stripe one */
	guint32 word;
	gboolean drained;
	gboolean fell_back; /* of who */
} Step;

#define ENTER(w, res, word, dr, fb) { OP_ENTER, w, GS_GATE_##res, word, dr, fb }
#define LEAVE(w, word, dr, fb) { OP_LEAVE, w, 0, word, dr, fb }
#define CLOSE(w, others, word, dr, fb) { OP_CLOSE, w, others, word, dr, fb }
#define RESET(ok, word, dr) { OP_RESET, DRV, ok, word, dr, FALSE }

typedef struct {
	const char *name;
	Step steps[16];
} Script;

static const Script scripts[] = {
	{ "§D.3 enter on an open gate counts; leave uncounts",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    LEAVE(A, 1, FALSE, FALSE), LEAVE(B, 0, FALSE, FALSE) } },
	{ "§D.3 enter on a closed gate: not counted, fallback",
	  { CLOSE(DRV, 0, M, TRUE, FALSE), ENTER(A, CLOSED, M, TRUE, TRUE),
	    ENTER(B, CLOSED, M, TRUE, TRUE), LEAVE(A, M, TRUE, FALSE),
	    LEAVE(B, M, TRUE, FALSE) } },
	{ "§D.2 leaving a closed gate decrements under the marker",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    CLOSE(DRV, 2, M | 2, FALSE, FALSE), LEAVE(A, M | 1, FALSE, FALSE),
	    LEAVE(B, M, TRUE, FALSE) } },
	{ "§D.3 close with others inside: uncount self, must wait, drain to zero",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    ENTER(C, ENTERED, 3, FALSE, FALSE), CLOSE(A, 2, M | 2, FALSE, TRUE),
	    /* the closer's leave uncounts nothing more */
	    LEAVE(A, M | 2, FALSE, FALSE), LEAVE(B, M | 1, FALSE, FALSE),
	    LEAVE(C, M, TRUE, FALSE) } },
	{ "§D.3 the closer alone inside: drained at once, no wait for itself",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), CLOSE(A, 0, M, TRUE, TRUE),
	    LEAVE(A, M, TRUE, FALSE) } },
	{ "§D.3 a second failing copy while closed uncounts itself too",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    ENTER(C, ENTERED, 3, FALSE, FALSE), CLOSE(A, 2, M | 2, FALSE, TRUE),
	    CLOSE(B, 1, M | 1, FALSE, TRUE), LEAVE(C, M, TRUE, FALSE),
	    LEAVE(A, M, TRUE, FALSE), LEAVE(B, M, TRUE, FALSE) } },
	{ "§D.3 reset is refused while counted, then reopens the gate",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    CLOSE(A, 1, M | 1, FALSE, TRUE), RESET(FALSE, M | 1, FALSE),
	    LEAVE(B, M, TRUE, FALSE), LEAVE(A, M, TRUE, FALSE), RESET(TRUE, 0, FALSE),
	    ENTER(C, ENTERED, 1, FALSE, FALSE), LEAVE(C, 0, FALSE, FALSE) } },
	{ "§D.3 reset of an open gate: harmless when empty, refused when not",
	  { RESET(TRUE, 0, FALSE), ENTER(A, ENTERED, 1, FALSE, FALSE),
	    RESET(FALSE, 1, FALSE), LEAVE(A, 0, FALSE, FALSE), RESET(TRUE, 0, FALSE) } },
	{ "§D.4 nested scopes count once",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(A, ENTERED, 1, FALSE, FALSE),
	    ENTER(A, ENTERED, 1, FALSE, FALSE), LEAVE(A, 1, FALSE, FALSE),
	    LEAVE(A, 1, FALSE, FALSE), LEAVE(A, 0, FALSE, FALSE) } },
	{ "§D.4 a nested enter that sees the marker uncounts itself first",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    CLOSE(B, 1, M | 1, FALSE, TRUE),
	    /* A would wait for itself if it stayed counted */
	    ENTER(A, CLOSED, M, TRUE, TRUE), LEAVE(A, M, TRUE, TRUE),
	    LEAVE(A, M, TRUE, FALSE), LEAVE(B, M, TRUE, FALSE) } },
	{ "§D.4 a thread that fell back is refused by every nested scope",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), CLOSE(A, 0, M, TRUE, TRUE),
	    ENTER(A, CLOSED, M, TRUE, TRUE), ENTER(A, CLOSED, M, TRUE, TRUE),
	    LEAVE(A, M, TRUE, TRUE), LEAVE(A, M, TRUE, TRUE), LEAVE(A, M, TRUE, FALSE) } },
	{ "§D.6 the first copy fails before anybody else entered: nobody enters",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), CLOSE(A, 0, M, TRUE, TRUE),
	    ENTER(B, CLOSED, M, TRUE, TRUE), ENTER(C, CLOSED, M, TRUE, TRUE),
	    LEAVE(B, M, TRUE, FALSE), LEAVE(C, M, TRUE, FALSE), LEAVE(A, M, TRUE, FALSE),
	    ENTER(B, CLOSED, M, TRUE, TRUE), LEAVE(B, M, TRUE, FALSE) } },
	{ "the driver closes from outside any scope, twice",
	  { CLOSE(DRV, 0, M, TRUE, FALSE), CLOSE(DRV, 0, M, TRUE, FALSE),
	    ENTER(A, CLOSED, M, TRUE, TRUE), LEAVE(A, M, TRUE, FALSE) } },
	{ "a whole cycle: fail, fall back, reset, copy again",
	  { ENTER(A, ENTERED, 1, FALSE, FALSE), CLOSE(A, 0, M, TRUE, TRUE),
	    LEAVE(A, M, TRUE, FALSE), RESET(TRUE, 0, FALSE),
	    ENTER(A, ENTERED, 1, FALSE, FALSE), ENTER(B, ENTERED, 2, FALSE, FALSE),
	    LEAVE(A, 1, FALSE, FALSE), LEAVE(B, 0, FALSE, FALSE) } },
};

/* Each script runs on a single-stripe gate (exact words) and a striped one. */
static const guint script_stripes[] = { 1, 8 };

static void
check_after(const GsGate *gate, const GsGateThread *who, const Step *step, const char *what)
{
	guint32 count = gs_gate_word_count(step->word);
	gboolean closed = gs_gate_word_closed(step->word);

	if (gs_gate_n_stripes(gate) == 1)
		ck_assert_msg(gs_gate_word(gate, 0) == step->word, "%s: word %#x, expected %#x",
			      what, gs_gate_word(gate, 0), step->word);
	/* striped: the same count in total, and every stripe closed or none */
	for (guint i = 0; i < gs_gate_n_stripes(gate); i++)
		ck_assert_msg(gs_gate_word_closed(gs_gate_word(gate, i)) == closed,
			      "%s: stripe %u closed bit", what, i);
	ck_assert_msg(gs_gate_inside(gate) == count, "%s: inside %" G_GUINT64_FORMAT, what,
		      gs_gate_inside(gate));
	ck_assert_msg(gs_gate_is_closed(gate) == closed, "%s: is_closed", what);
	ck_assert_msg(gs_gate_drained(gate) == step->drained, "%s: drained", what);
	ck_assert_msg(who->fell_back == step->fell_back, "%s: fell_back", what);
}

START_TEST(test_script)
{
	const Script *script = &scripts[_i / G_N_ELEMENTS(script_stripes)];
	guint n_stripes = script_stripes[_i % G_N_ELEMENTS(script_stripes)];
	g_autoptr(GsGate) gate = gs_gate_new(n_stripes);
	GsGateThread threads[N_WHO];

	for (guint w = 0; w < N_WHO; w++)
		gs_gate_thread_init(gate, &threads[w], 101 + w);
	for (guint s = 0; script->steps[s].op != OP_END; s++) {
		const Step *step = &script->steps[s];
		GsGateThread *who = &threads[step->who];
		g_autofree char *what = g_strdup_printf("%s, %u stripes, step %u", script->name,
							n_stripes, s);

		switch (step->op) {
		case OP_ENTER:
			ck_assert_msg(gs_gate_enter(gate, who) == (GsGateResult) step->expect,
				      "%s: enter result", what);
			break;
		case OP_LEAVE:
			gs_gate_leave(gate, who);
			break;
		case OP_CLOSE:
			ck_assert_msg(gs_gate_close(gate, who) == step->expect, "%s: others inside",
				      what);
			break;
		case OP_RESET:
			ck_assert_msg(gs_gate_reset(gate) == (gboolean) step->expect, "%s: reset",
				      what);
			break;
		case OP_END:
			g_assert_not_reached();
		}
		check_after(gate, who, step, what);
	}
	/* every script leaves every thread outside any scope */
	for (guint w = 0; w < N_WHO; w++) {
		ck_assert_uint_eq(threads[w].level, 0);
		ck_assert(!threads[w].fell_back);
	}
}
END_TEST

/* ---- Striping (§D.5) ---- */

/* Thread ids on @n distinct stripes of a gate of @n_stripes. */
static void
distinct_stripes(guint n_stripes, guint n, GsThreadId *ids)
{
	guint found = 0;

	for (GsThreadId t = 1; found < n; t++) {
		gboolean taken = FALSE;

		for (guint j = 0; j < found; j++)
			taken |= gs_gate_stripe_of(ids[j], n_stripes) == gs_gate_stripe_of(t, n_stripes);
		if (!taken)
			ids[found++] = t;
	}
}

START_TEST(test_striped_close)
{
	g_autoptr(GsGate) gate = gs_gate_new(8);
	GsThreadId ids[3];
	GsGateThread t[3];

	distinct_stripes(8, 3, ids);
	for (guint i = 0; i < 3; i++) {
		gs_gate_thread_init(gate, &t[i], ids[i]);
		ck_assert_uint_eq(t[i].stripe, gs_gate_stripe_of(ids[i], 8));
		ck_assert_int_eq(gs_gate_enter(gate, &t[i]), GS_GATE_ENTERED);
	}
	/* each entrant touched its own stripe only */
	for (guint s = 0; s < 8; s++) {
		guint32 expect = 0;

		for (guint i = 0; i < 3; i++)
			expect += t[i].stripe == s;
		ck_assert_uint_eq(gs_gate_word(gate, s), expect);
	}
	/* t[0] fails: every stripe marked, its own decremented in the same step */
	ck_assert_uint_eq(gs_gate_close(gate, &t[0]), 2);
	for (guint s = 0; s < 8; s++) {
		guint32 expect = M;

		for (guint i = 1; i < 3; i++)
			expect += t[i].stripe == s;
		ck_assert_uint_eq(gs_gate_word(gate, s), expect);
	}
	ck_assert(!gs_gate_drained(gate));
	gs_gate_leave(gate, &t[1]);
	ck_assert_uint_eq(gs_gate_word(gate, t[1].stripe), M);
	ck_assert(!gs_gate_drained(gate));
	gs_gate_leave(gate, &t[2]);
	ck_assert(gs_gate_drained(gate));
	gs_gate_leave(gate, &t[0]);
	for (guint s = 0; s < 8; s++)
		ck_assert_uint_eq(gs_gate_word(gate, s), M);
	ck_assert(gs_gate_reset(gate));
	for (guint s = 0; s < 8; s++)
		ck_assert_uint_eq(gs_gate_word(gate, s), 0);
}
END_TEST

START_TEST(test_drained_needs_marker)
{
	g_autoptr(GsGate) gate = gs_gate_new(4);
	GsGateThread t;

	/* §D.5: empty but open is not drained; a waiter must see every stripe marked */
	ck_assert(!gs_gate_drained(gate));
	gs_gate_thread_init(gate, &t, 7);
	ck_assert_int_eq(gs_gate_enter(gate, &t), GS_GATE_ENTERED);
	gs_gate_leave(gate, &t);
	ck_assert_uint_eq(gs_gate_inside(gate), 0);
	ck_assert(!gs_gate_drained(gate));
	ck_assert_uint_eq(gs_gate_close(gate, &t), 0);
	ck_assert(gs_gate_drained(gate));
}
END_TEST

/* ---- The copy protocol ---- */

typedef struct {
	GsCopyState state;
	GsCopyEvent event;
	gboolean ok;
	GsCopyState next;
} CopyRow;

#define BAD(s, e) { GS_COPY_##s, GS_COPY_EV_##e, FALSE, GS_COPY_##s }
#define GOOD(s, e, n) { GS_COPY_##s, GS_COPY_EV_##e, TRUE, GS_COPY_##n }

/* Every (state, event) pair, in enum order. */
static const CopyRow copy_rows[] = {
	GOOD(AT_SOURCE, START, COPYING),
	BAD(AT_SOURCE, COMMIT),
	GOOD(AT_SOURCE, FAIL, ABORTED), /* the gate or the allocation said no */
	BAD(AT_SOURCE, TO_DISK),
	BAD(COPYING, START),
	GOOD(COPYING, COMMIT, COMMITTED),
	GOOD(COPYING, FAIL, ABORTED),
	BAD(COPYING, TO_DISK),
	BAD(COMMITTED, START),
	BAD(COMMITTED, COMMIT),
	BAD(COMMITTED, FAIL),
	BAD(COMMITTED, TO_DISK),
	GOOD(ABORTED, START, COPYING), /* a retry after the reset */
	BAD(ABORTED, COMMIT),
	BAD(ABORTED, FAIL),
	GOOD(ABORTED, TO_DISK, WRITING_DISK),
	BAD(WRITING_DISK, START),
	GOOD(WRITING_DISK, COMMIT, ON_DISK),
	GOOD(WRITING_DISK, FAIL, ABORTED),
	BAD(WRITING_DISK, TO_DISK),
	BAD(ON_DISK, START),
	BAD(ON_DISK, COMMIT),
	BAD(ON_DISK, FAIL),
	BAD(ON_DISK, TO_DISK),
};
G_STATIC_ASSERT(G_N_ELEMENTS(copy_rows) == GS_COPY_N_STATES * GS_COPY_N_EVENTS);

START_TEST(test_copy_step)
{
	const CopyRow *row = &copy_rows[_i];
	GsCopyState next = row->state;
	gboolean ok = gs_copy_step(row->state, row->event, &next);

	ck_assert_uint_eq(row->state * GS_COPY_N_EVENTS + row->event, _i);
	ck_assert_int_eq(ok, row->ok);
	/* a refused event leaves the state alone */
	ck_assert_int_eq(next, row->next);
	ck_assert_uint_eq(gs_copy_n_authoritative(row->state), 1);
	ck_assert_uint_eq(gs_copy_n_authoritative(next), 1);
	if (ok && gs_copy_authoritative(next) != gs_copy_authoritative(row->state)) {
		/* authority moves only on a commit, and only to the copy being written */
		ck_assert_int_eq(row->event, GS_COPY_EV_COMMIT);
		ck_assert_int_eq(gs_copy_role(row->state, gs_copy_authoritative(next)),
				 GS_COPY_ROLE_WRITING);
		/* and the old holder is released in the same step */
		ck_assert_int_eq(gs_copy_role(next, gs_copy_authoritative(row->state)),
				 GS_COPY_ROLE_NONE);
	}
}
END_TEST

typedef struct {
	GsCopyState state;
	GsCopyRole roles[GS_COPY_N_PLACES]; /* source, destination, disk */
	GsCopyPlace authoritative;
	gboolean final;
} RoleRow;

#define R_NO GS_COPY_ROLE_NONE
#define R_WR GS_COPY_ROLE_WRITING
#define R_AU GS_COPY_ROLE_AUTHORITATIVE

static const RoleRow role_rows[] = {
	{ GS_COPY_AT_SOURCE, { R_AU, R_NO, R_NO }, GS_COPY_PLACE_SOURCE, FALSE },
	{ GS_COPY_COPYING, { R_AU, R_WR, R_NO }, GS_COPY_PLACE_SOURCE, FALSE },
	{ GS_COPY_COMMITTED, { R_NO, R_AU, R_NO }, GS_COPY_PLACE_DESTINATION, TRUE },
	{ GS_COPY_ABORTED, { R_AU, R_NO, R_NO }, GS_COPY_PLACE_SOURCE, FALSE },
	{ GS_COPY_WRITING_DISK, { R_AU, R_NO, R_WR }, GS_COPY_PLACE_SOURCE, FALSE },
	{ GS_COPY_ON_DISK, { R_NO, R_NO, R_AU }, GS_COPY_PLACE_DISK, TRUE },
};
G_STATIC_ASSERT(G_N_ELEMENTS(role_rows) == GS_COPY_N_STATES);

START_TEST(test_copy_roles)
{
	const RoleRow *row = &role_rows[_i];
	guint n_auth = 0;

	ck_assert_uint_eq(row->state, _i);
	for (guint p = 0; p < GS_COPY_N_PLACES; p++) {
		ck_assert_int_eq(gs_copy_role(row->state, p), row->roles[p]);
		n_auth += row->roles[p] == GS_COPY_ROLE_AUTHORITATIVE;
	}
	/* neither zero nor two authoritative copies, in any state */
	ck_assert_uint_eq(n_auth, 1);
	ck_assert_uint_eq(gs_copy_n_authoritative(row->state), 1);
	ck_assert_int_eq(gs_copy_authoritative(row->state), row->authoritative);
	ck_assert_int_eq(gs_copy_is_final(row->state), row->final);
	ck_assert_ptr_nonnull(gs_copy_state_name(row->state));
	for (guint j = 0; j < (guint) _i; j++)
		ck_assert_str_ne(gs_copy_state_name(row->state), gs_copy_state_name(j));
}
END_TEST

/* Every event sequence of up to 8 events from AT_SOURCE keeps one authoritative copy. */
START_TEST(test_copy_walk)
{
	gboolean reached[GS_COPY_N_STATES] = { FALSE };
	GArray *frontier = g_array_new(FALSE, FALSE, sizeof(GsCopyState));
	GsCopyState start = GS_COPY_AT_SOURCE;

	g_array_append_val(frontier, start);
	reached[start] = TRUE;
	for (guint depth = 0; depth < 8; depth++) {
		GArray *next_frontier = g_array_new(FALSE, FALSE, sizeof(GsCopyState));

		for (guint i = 0; i < frontier->len; i++) {
			GsCopyState s = g_array_index(frontier, GsCopyState, i);

			for (guint e = 0; e < GS_COPY_N_EVENTS; e++) {
				GsCopyState n;

				if (!gs_copy_step(s, e, &n))
					continue;
				ck_assert_uint_eq(gs_copy_n_authoritative(n), 1);
				/* the data is never lost: some place holds it */
				ck_assert_int_eq(gs_copy_role(n, gs_copy_authoritative(n)),
						 GS_COPY_ROLE_AUTHORITATIVE);
				reached[n] = TRUE;
				g_array_append_val(next_frontier, n);
			}
		}
		g_array_unref(frontier);
		frontier = next_frontier;
	}
	g_array_unref(frontier);
	for (guint s = 0; s < GS_COPY_N_STATES; s++)
		ck_assert_msg(reached[s], "%s unreachable", gs_copy_state_name(s));
}
END_TEST

typedef struct {
	const char *name;
	GsCopyEvent events[6];
	guint n_events;
	GsCopyState final;
	GsCopyPlace where;
} PathRow;

static const PathRow path_rows[] = {
	{ "copy commits", { GS_COPY_EV_START, GS_COPY_EV_COMMIT }, 2, GS_COPY_COMMITTED,
	  GS_COPY_PLACE_DESTINATION },
	{ "destination allocation fails: data stays at the source", { GS_COPY_EV_FAIL }, 1,
	  GS_COPY_ABORTED, GS_COPY_PLACE_SOURCE },
	{ "copy fails half way: the partial destination is discarded",
	  { GS_COPY_EV_START, GS_COPY_EV_FAIL }, 2, GS_COPY_ABORTED, GS_COPY_PLACE_SOURCE },
	{ "allocation fails, caller asks for disk",
	  { GS_COPY_EV_FAIL, GS_COPY_EV_TO_DISK, GS_COPY_EV_COMMIT }, 3, GS_COPY_ON_DISK,
	  GS_COPY_PLACE_DISK },
	{ "disk is full too: the data stays at the source",
	  { GS_COPY_EV_FAIL, GS_COPY_EV_TO_DISK, GS_COPY_EV_FAIL }, 3, GS_COPY_ABORTED,
	  GS_COPY_PLACE_SOURCE },
	{ "fails, then retried after the reset and commits",
	  { GS_COPY_EV_START, GS_COPY_EV_FAIL, GS_COPY_EV_START, GS_COPY_EV_COMMIT }, 4,
	  GS_COPY_COMMITTED, GS_COPY_PLACE_DESTINATION },
};

START_TEST(test_copy_path)
{
	const PathRow *row = &path_rows[_i];
	GsCopyState s = GS_COPY_AT_SOURCE;

	for (guint i = 0; i < row->n_events; i++) {
		ck_assert_msg(gs_copy_step(s, row->events[i], &s), "%s: event %u refused",
			      row->name, i);
		ck_assert_uint_eq(gs_copy_n_authoritative(s), 1);
	}
	ck_assert_int_eq(s, row->final);
	ck_assert_int_eq(gs_copy_authoritative(s), row->where);
	/* after a fallback the destination holds nothing */
	if (row->where != GS_COPY_PLACE_DESTINATION)
		ck_assert_int_eq(gs_copy_role(s, GS_COPY_PLACE_DESTINATION), GS_COPY_ROLE_NONE);
}
END_TEST

/*
 * §1.5 end to end, single-threaded as the simulator drives it: A copies
 * buffer 0 while B's copy of buffer 1 finds no room. B closes, must wait
 * for A, A commits and leaves, the gate drains, B falls back (buffer 1
 * stays at its source, or goes to disk), C is refused, the reset reopens.
 */
START_TEST(test_copy_through_gate)
{
	gboolean to_disk = _i == 1;
	g_autoptr(GsGate) gate = gs_gate_new(_i == 1 ? 4 : 1);
	GsGateThread a, b, c;
	GsCopyState buf[3] = { GS_COPY_AT_SOURCE, GS_COPY_AT_SOURCE, GS_COPY_AT_SOURCE };

#define STEP(i, ev)                                                            \
	do {                                                                   \
		ck_assert(gs_copy_step(buf[i], ev, &buf[i]));                  \
		for (guint k = 0; k < 3; k++)                                  \
			ck_assert_uint_eq(gs_copy_n_authoritative(buf[k]), 1); \
	} while (0)

	gs_gate_thread_init(gate, &a, 1);
	gs_gate_thread_init(gate, &b, 2);
	gs_gate_thread_init(gate, &c, 3);
	ck_assert_int_eq(gs_gate_enter(gate, &a), GS_GATE_ENTERED);
	STEP(0, GS_COPY_EV_START);
	ck_assert_int_eq(gs_gate_enter(gate, &b), GS_GATE_ENTERED);
	/* B's destination allocation fails */
	ck_assert_uint_eq(gs_gate_close(gate, &b), 1);
	ck_assert(b.fell_back);
	ck_assert(!gs_gate_drained(gate));
	STEP(1, GS_COPY_EV_FAIL);
	ck_assert_int_eq(gs_copy_authoritative(buf[1]), GS_COPY_PLACE_SOURCE);
	/* C arrives: the gate is closed, it falls back without copying */
	ck_assert_int_eq(gs_gate_enter(gate, &c), GS_GATE_CLOSED);
	STEP(2, GS_COPY_EV_FAIL);
	/* A, counted, finishes: commit inside the gate, then leave */
	STEP(0, GS_COPY_EV_COMMIT);
	gs_gate_leave(gate, &a);
	ck_assert(gs_gate_drained(gate));
	/* drained: B's fallback */
	if (to_disk) {
		STEP(1, GS_COPY_EV_TO_DISK);
		STEP(1, GS_COPY_EV_COMMIT);
		ck_assert_int_eq(gs_copy_authoritative(buf[1]), GS_COPY_PLACE_DISK);
	} else {
		ck_assert_int_eq(buf[1], GS_COPY_ABORTED);
		ck_assert_int_eq(gs_copy_authoritative(buf[1]), GS_COPY_PLACE_SOURCE);
	}
	gs_gate_leave(gate, &b);
	gs_gate_leave(gate, &c);
	ck_assert_int_eq(buf[0], GS_COPY_COMMITTED);
	ck_assert_int_eq(gs_copy_authoritative(buf[0]), GS_COPY_PLACE_DESTINATION);
	ck_assert_int_eq(gs_copy_authoritative(buf[2]), GS_COPY_PLACE_SOURCE);
	/* the global pause reopens; C's copy goes through in the next cycle */
	ck_assert(gs_gate_reset(gate));
	ck_assert_int_eq(gs_gate_enter(gate, &c), GS_GATE_ENTERED);
	STEP(2, GS_COPY_EV_START);
	STEP(2, GS_COPY_EV_COMMIT);
	gs_gate_leave(gate, &c);
	ck_assert_uint_eq(gs_gate_inside(gate), 0);
#undef STEP
}
END_TEST

/* ---- Real threads ---- */

#define HAMMER_THREADS 4
#define HAMMER_ITERATIONS 20000

typedef struct {
	GsGate *gate;
	guint index;
	guint close_at; /* the iteration whose copy finds no room; G_MAXUINT: never */
	gint *closed;   /* set once any close has returned */
	gint *drained;  /* set once any thread has seen the gate drained */
	/*
	 * Each worker's "buffer contents", written with plain stores while it is
	 * counted and read by every waiter once drained: under
	 * -fsanitize=thread this checks that the gate's leave and drained
	 * order those plain accesses (the commits a waiter relies on).
	 */
	guint *contents;
	gint64 deadline; /* monotonic time after which waits give up */
	/* results */
	guint entered, fell_back, committed;
	guint entered_after_close; /* must stay 0 */
	guint committed_after_drain; /* must stay 0 */
	guint bad_copies;          /* states with other than one authoritative copy */
	guint stuck;               /* waits for the drain that gave up */
} Worker;

static void
copy_step(Worker *w, GsCopyState *s, GsCopyEvent ev)
{
	if (!gs_copy_step(*s, ev, s) || gs_copy_n_authoritative(*s) != 1)
		w->bad_copies++;
}

/*
 * What a real-thread driver does where the core says "wait for the drain";
 * bounded, so that a gate that never drains fails the test, not hangs it.
 */
static void
wait_drained(Worker *w)
{
	while (!gs_gate_drained(w->gate)) {
		if (g_get_monotonic_time() > w->deadline) {
			w->stuck++;
			return;
		}
		g_thread_yield();
	}
	g_atomic_int_set(w->drained, 1);
	/* the fallback may now look at every buffer: plain reads */
	for (guint i = 0; i < HAMMER_THREADS; i++) {
		if (w->contents[i] >= HAMMER_ITERATIONS)
			w->bad_copies++;
	}
}

static gpointer
hammer(gpointer data)
{
	Worker *w = data;
	GsGateThread self;

	gs_gate_thread_init(w->gate, &self, 1000 + w->index);
	for (guint i = 0; i < HAMMER_ITERATIONS; i++) {
		gboolean was_closed = g_atomic_int_get(w->closed);
		GsCopyState buf = GS_COPY_AT_SOURCE;

		if (gs_gate_enter(w->gate, &self) == GS_GATE_CLOSED) {
			copy_step(w, &buf, GS_COPY_EV_FAIL);
			wait_drained(w);
			w->fell_back++;
			gs_gate_leave(w->gate, &self);
			continue;
		}
		w->entered++;
		if (was_closed)
			w->entered_after_close++;
		copy_step(w, &buf, GS_COPY_EV_START);
		w->contents[w->index] = i;
		if (i == w->close_at) {
			/* no room in the destination */
			gs_gate_close(w->gate, &self);
			g_atomic_int_set(w->closed, 1);
			copy_step(w, &buf, GS_COPY_EV_FAIL);
			wait_drained(w);
			w->fell_back++;
		} else if (i % 5 == 0 && gs_gate_enter(w->gate, &self) == GS_GATE_CLOSED) {
			/* a nested scope saw the gate close: abort, never commit */
			copy_step(w, &buf, GS_COPY_EV_FAIL);
			gs_gate_leave(w->gate, &self);
			wait_drained(w);
			w->fell_back++;
		} else {
			if (i % 5 == 0)
				gs_gate_leave(w->gate, &self); /* the nested scope */
			/* counted: nobody can have seen the gate drained */
			if (g_atomic_int_get(w->drained))
				w->committed_after_drain++;
			copy_step(w, &buf, GS_COPY_EV_COMMIT);
			w->committed++;
		}
		gs_gate_leave(w->gate, &self);
	}
	return NULL;
}

typedef struct {
	guint n_stripes;
	guint close_at[HAMMER_THREADS];
} HammerRow;

#define NEVER G_MAXUINT

static const HammerRow hammer_rows[] = {
	/* nobody fails: the counter returns to 0, open */
	{ 1, { NEVER, NEVER, NEVER, NEVER } },
	{ 4, { NEVER, NEVER, NEVER, NEVER } },
	/* one failure half way */
	{ 1, { HAMMER_ITERATIONS / 2, NEVER, NEVER, NEVER } },
	{ 4, { NEVER, NEVER, HAMMER_ITERATIONS / 2, NEVER } },
	/* several failing copies, some after the gate has closed */
	{ 4, { 100, 3000, 5000, 7000 } },
	{ 1, { 1000, 1000, 1000, 1000 } },
};

START_TEST(test_threads)
{
	const HammerRow *row = &hammer_rows[_i];
	g_autoptr(GsGate) gate = gs_gate_new(row->n_stripes);
	Worker workers[HAMMER_THREADS];
	GThread *threads[HAMMER_THREADS];
	gint closed = 0, drained = 0;
	guint contents[HAMMER_THREADS] = { 0 };
	gboolean any_close = FALSE;
	GsGateThread main_thread;

	for (guint i = 0; i < HAMMER_THREADS; i++) {
		workers[i] = (Worker){
			.gate = gate,
			.index = i,
			.close_at = row->close_at[i],
			.closed = &closed,
			.drained = &drained,
			.contents = contents,
			.deadline = g_get_monotonic_time() + 20 * G_TIME_SPAN_SECOND,
		};
		any_close |= row->close_at[i] != NEVER;
		threads[i] = g_thread_new("hammer", hammer, &workers[i]);
	}
	for (guint i = 0; i < HAMMER_THREADS; i++)
		g_thread_join(threads[i]);

	for (guint i = 0; i < HAMMER_THREADS; i++) {
		Worker *w = &workers[i];

		ck_assert_uint_eq(w->entered_after_close, 0);
		ck_assert_uint_eq(w->committed_after_drain, 0);
		ck_assert_uint_eq(w->bad_copies, 0);
		ck_assert_uint_eq(w->stuck, 0);
		/* every iteration either committed or fell back */
		ck_assert_uint_eq(w->committed + w->fell_back, HAMMER_ITERATIONS);
		if (!any_close)
			ck_assert_uint_eq(w->committed, HAMMER_ITERATIONS);
	}
	/* the counter is back to 0 */
	ck_assert_uint_eq(gs_gate_inside(gate), 0);
	ck_assert_int_eq(gs_gate_is_closed(gate), any_close);
	ck_assert_int_eq(gs_gate_drained(gate), any_close);
	for (guint s = 0; s < gs_gate_n_stripes(gate); s++)
		ck_assert_uint_eq(gs_gate_word(gate, s), any_close ? M : 0);
	gs_gate_thread_init(gate, &main_thread, 1);
	if (any_close) {
		/* still closed until the reset */
		ck_assert_int_eq(gs_gate_enter(gate, &main_thread), GS_GATE_CLOSED);
		gs_gate_leave(gate, &main_thread);
	}
	ck_assert(gs_gate_reset(gate));
	for (guint s = 0; s < gs_gate_n_stripes(gate); s++)
		ck_assert_uint_eq(gs_gate_word(gate, s), 0);
	ck_assert_int_eq(gs_gate_enter(gate, &main_thread), GS_GATE_ENTERED);
	ck_assert_uint_eq(gs_gate_inside(gate), 1);
	gs_gate_leave(gate, &main_thread);
	ck_assert_uint_eq(gs_gate_inside(gate), 0);
}
END_TEST

/* A misuse the module refuses with g_return_if_fail() fails the test. */
static void
fatal_criticals(void)
{
	g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

Suite *gs_test_suite_gate(void);

Suite *
gs_test_suite_gate(void)
{
	Suite *s = suite_create("gate");
	TCase *tc;

	tc = tcase_create("encoding");
	tcase_add_checked_fixture(tc, fatal_criticals, NULL);
	tcase_add_loop_test(tc, test_word_encoding, 0, G_N_ELEMENTS(word_rows));
	tcase_add_test(tc, test_word_constants);
	tcase_add_loop_test(tc, test_stripes_for, 0, G_N_ELEMENTS(stripes_rows));
	tcase_add_test(tc, test_stripe_of);
	suite_add_tcase(s, tc);

	tc = tcase_create("gate");
	tcase_add_checked_fixture(tc, fatal_criticals, NULL);
	tcase_add_loop_test(tc, test_script, 0,
			    G_N_ELEMENTS(scripts) * G_N_ELEMENTS(script_stripes));
	tcase_add_test(tc, test_striped_close);
	tcase_add_test(tc, test_drained_needs_marker);
	suite_add_tcase(s, tc);

	tc = tcase_create("copy");
	tcase_add_checked_fixture(tc, fatal_criticals, NULL);
	tcase_add_loop_test(tc, test_copy_step, 0, G_N_ELEMENTS(copy_rows));
	tcase_add_loop_test(tc, test_copy_roles, 0, G_N_ELEMENTS(role_rows));
	tcase_add_test(tc, test_copy_walk);
	tcase_add_loop_test(tc, test_copy_path, 0, G_N_ELEMENTS(path_rows));
	tcase_add_loop_test(tc, test_copy_through_gate, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_checked_fixture(tc, fatal_criticals, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_threads, 0, G_N_ELEMENTS(hammer_rows));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_gate());
}
