/*
 * gpusim: the copy gate (Shenandoah's evacuation-OOM counter) and the copy
 * protocol's transition table.
 *
 * Each stripe is one 32-bit word alone on its cache line, so that threads
 * hashed to different stripes never contend (§D.5); the words are C11
 * atomics. Read-modify-writes are sequentially consistent, as the
 * reference's conservative cmpxchg; loads are acquire loads, so that a
 * thread that sees a stripe drained also sees every commit made before the
 * leaves that drained it. The argument that makes the per-stripe scans
 * sound: once a stripe has the closed bit, nothing but the reset adds to
 * its count or clears the bit, so a stripe seen closed and empty stays so.
 */
#include "config.h"

#include <stdatomic.h>

#include <gpusim/gate.h>

#define CACHE_LINE 64

typedef struct {
	_Alignas(CACHE_LINE) _Atomic guint32 bits;
} Stripe;

G_STATIC_ASSERT(sizeof(Stripe) == CACHE_LINE);
G_STATIC_ASSERT(GS_GATE_OOM_MARKER == ~GS_GATE_COUNT_MASK);

struct GsGate {
	guint n_stripes; /* a power of two, 1 .. GS_GATE_MAX_STRIPES */
	Stripe *stripes; /* cache-line aligned */
};

/* ---- Counter encoding ---- */

guint32
gs_gate_word_count(guint32 word)
{
	return word & GS_GATE_COUNT_MASK;
}

gboolean
gs_gate_word_closed(guint32 word)
{
	return (word & GS_GATE_OOM_MARKER) != 0;
}

guint32
gs_gate_word_make(guint32 count, gboolean closed)
{
	g_return_val_if_fail(count <= GS_GATE_COUNT_MASK, closed ? GS_GATE_OOM_MARKER : 0);
	return count | (closed ? GS_GATE_OOM_MARKER : 0);
}

guint
gs_gate_stripes_for(guint n_cpus)
{
	guint n = 1;

	n_cpus = CLAMP(n_cpus, 1, GS_GATE_MAX_STRIPES);
	while (n < n_cpus)
		n <<= 1;
	return n;
}

guint
gs_gate_stripe_of(GsThreadId thread, guint n_stripes)
{
	guint64 k = thread;

	g_return_val_if_fail(n_stripes > 0 && (n_stripes & (n_stripes - 1)) == 0, 0);
	/* MurmurHash3 fmix64: thread ids are often small and consecutive. */
	k ^= k >> 33;
	k *= G_GUINT64_CONSTANT(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= G_GUINT64_CONSTANT(0xc4ceb9fe1a85ec53);
	k ^= k >> 33;
	return (guint) (k & (n_stripes - 1));
}

/* ---- The gate ---- */

GsGate *
gs_gate_new(guint n_stripes)
{
	GsGate *gate = g_new0(GsGate, 1);

	gate->n_stripes = gs_gate_stripes_for(n_stripes);
	gate->stripes = g_aligned_alloc0(gate->n_stripes, sizeof(Stripe), CACHE_LINE);
	for (guint i = 0; i < gate->n_stripes; i++)
		atomic_init(&gate->stripes[i].bits, 0);
	return gate;
}

void
gs_gate_free(GsGate *gate)
{
	if (gate == NULL)
		return;
	g_aligned_free(gate->stripes);
	g_free(gate);
}

guint
gs_gate_n_stripes(const GsGate *gate)
{
	return gate->n_stripes;
}

void
gs_gate_thread_init(const GsGate *gate, GsGateThread *self, GsThreadId thread)
{
	*self = (GsGateThread){
		.thread = thread,
		.stripe = gs_gate_stripe_of(thread, gate->n_stripes),
	};
}

static guint32
load(const GsGate *gate, guint stripe)
{
	return atomic_load_explicit(&gate->stripes[stripe].bits, memory_order_acquire);
}

/* try_increment: fails, changing nothing, once the stripe is closed. */
static gboolean
try_increment(GsGate *gate, guint stripe)
{
	_Atomic guint32 *bits = &gate->stripes[stripe].bits;
	guint32 old = atomic_load_explicit(bits, memory_order_acquire);

	for (;;) {
		/*
		 * The closed bit is checked before every CAS, including after a
		 * CAS lost to another thread (the JDK-8253857 fix): a blind
		 * increment could enter a gate closed in between.
		 */
		if (gs_gate_word_closed(old))
			return FALSE;
		g_return_val_if_fail(gs_gate_word_count(old) < GS_GATE_COUNT_MASK, FALSE);
		if (atomic_compare_exchange_weak(bits, &old, old + 1))
			return TRUE;
	}
}

/* Uncounts one thread; the closed bit, if set, stays. */
static void
decrement(GsGate *gate, guint stripe)
{
	_Atomic guint32 *bits = &gate->stripes[stripe].bits;
	guint32 old = atomic_load_explicit(bits, memory_order_acquire);

	do {
		/* A decrement of 0 would borrow from the closed bit. */
		g_return_if_fail(gs_gate_word_count(old) > 0);
	} while (!atomic_compare_exchange_weak(bits, &old, old - 1));
}

/* set_oom_bit(decrement_self) on one stripe. */
static void
close_stripe(GsGate *gate, guint stripe, gboolean decrement_self)
{
	_Atomic guint32 *bits = &gate->stripes[stripe].bits;
	guint32 old = atomic_load_explicit(bits, memory_order_acquire);
	guint32 new;

	do {
		guint32 count = gs_gate_word_count(old);

		if (decrement_self) {
			/* A counted thread is on its stripe; misuse still closes. */
			g_warn_if_fail(count > 0);
			count -= count > 0;
		} else if (gs_gate_word_closed(old)) {
			return; /* a second closer: nothing to write */
		}
		new = count | GS_GATE_OOM_MARKER;
	} while (!atomic_compare_exchange_weak(bits, &old, new));
}

GsGateResult
gs_gate_enter(GsGate *gate, GsGateThread *self)
{
	g_return_val_if_fail(self->stripe < gate->n_stripes, GS_GATE_CLOSED);

	if (self->level++ > 0) {
		if (self->fell_back)
			return GS_GATE_CLOSED;
		if (!gs_gate_word_closed(load(gate, self->stripe)))
			return GS_GATE_ENTERED;
		/*
		 * Closed since the outer scope counted us: uncount now, or the
		 * drain this thread is about to wait for would include itself.
		 */
		decrement(gate, self->stripe);
		self->fell_back = TRUE;
		return GS_GATE_CLOSED;
	}
	if (try_increment(gate, self->stripe))
		return GS_GATE_ENTERED;
	/* Not counted: the outermost leave must not decrement. */
	self->fell_back = TRUE;
	return GS_GATE_CLOSED;
}

void
gs_gate_leave(GsGate *gate, GsGateThread *self)
{
	g_return_if_fail(self->level > 0);

	if (--self->level > 0)
		return;
	if (self->fell_back) {
		self->fell_back = FALSE;
		return;
	}
	decrement(gate, self->stripe);
}

guint64
gs_gate_close(GsGate *gate, GsGateThread *self)
{
	gboolean counted = self->level > 0 && !self->fell_back;

	g_return_val_if_fail(self->stripe < gate->n_stripes, gs_gate_inside(gate));

	/*
	 * Index order, every stripe, so that after the loop no stripe accepts
	 * an entrant; the own stripe loses our count in the same CAS that
	 * closes it, so no waiter ever sees us counted on a closed gate.
	 */
	for (guint i = 0; i < gate->n_stripes; i++)
		close_stripe(gate, i, counted && i == self->stripe);
	if (self->level > 0)
		self->fell_back = TRUE;
	return gs_gate_inside(gate);
}

gboolean
gs_gate_drained(const GsGate *gate)
{
	for (guint i = 0; i < gate->n_stripes; i++) {
		if (load(gate, i) != GS_GATE_OOM_MARKER)
			return FALSE;
	}
	return TRUE;
}

gboolean
gs_gate_is_closed(const GsGate *gate)
{
	for (guint i = 0; i < gate->n_stripes; i++) {
		if (gs_gate_word_closed(load(gate, i)))
			return TRUE;
	}
	return FALSE;
}

guint64
gs_gate_inside(const GsGate *gate)
{
	guint64 inside = 0;

	for (guint i = 0; i < gate->n_stripes; i++)
		inside += gs_gate_word_count(load(gate, i));
	return inside;
}

guint32
gs_gate_word(const GsGate *gate, guint stripe)
{
	g_return_val_if_fail(stripe < gate->n_stripes, 0);
	return load(gate, stripe);
}

gboolean
gs_gate_reset(GsGate *gate)
{
	/* Check every stripe first, so that a refused reset changes nothing. */
	if (gs_gate_inside(gate) > 0)
		return FALSE;
	for (guint i = 0; i < gate->n_stripes; i++)
		atomic_store(&gate->stripes[i].bits, 0);
	return TRUE;
}

/* ---- The copy protocol ---- */

/* Roles per state, columns in GsCopyPlace order. */
static const GsCopyRole roles[GS_COPY_N_STATES][GS_COPY_N_PLACES] = {
	[GS_COPY_AT_SOURCE] = { GS_COPY_ROLE_AUTHORITATIVE, GS_COPY_ROLE_NONE, GS_COPY_ROLE_NONE },
	[GS_COPY_COPYING] = { GS_COPY_ROLE_AUTHORITATIVE, GS_COPY_ROLE_WRITING, GS_COPY_ROLE_NONE },
	[GS_COPY_COMMITTED] = { GS_COPY_ROLE_NONE, GS_COPY_ROLE_AUTHORITATIVE, GS_COPY_ROLE_NONE },
	[GS_COPY_ABORTED] = { GS_COPY_ROLE_AUTHORITATIVE, GS_COPY_ROLE_NONE, GS_COPY_ROLE_NONE },
	[GS_COPY_WRITING_DISK] = { GS_COPY_ROLE_AUTHORITATIVE, GS_COPY_ROLE_NONE,
				   GS_COPY_ROLE_WRITING },
	[GS_COPY_ON_DISK] = { GS_COPY_ROLE_NONE, GS_COPY_ROLE_NONE, GS_COPY_ROLE_AUTHORITATIVE },
};

gboolean
gs_copy_step(GsCopyState state, GsCopyEvent event, GsCopyState *next)
{
	GsCopyState to;

	g_return_val_if_fail(state < GS_COPY_N_STATES, FALSE);

	/*
	 * Authority moves only on COMMIT, and there from the source to the
	 * written copy in one step; every other move creates or discards a copy
	 * that is not authoritative.
	 */
	switch (event) {
	case GS_COPY_EV_START:
		if (state != GS_COPY_AT_SOURCE && state != GS_COPY_ABORTED)
			return FALSE;
		to = GS_COPY_COPYING;
		break;
	case GS_COPY_EV_COMMIT:
		if (state == GS_COPY_COPYING)
			to = GS_COPY_COMMITTED;
		else if (state == GS_COPY_WRITING_DISK)
			to = GS_COPY_ON_DISK;
		else
			return FALSE;
		break;
	case GS_COPY_EV_FAIL:
		/* AT_SOURCE fails when the gate or the allocation refuses it. */
		if (state != GS_COPY_AT_SOURCE && state != GS_COPY_COPYING &&
		    state != GS_COPY_WRITING_DISK)
			return FALSE;
		to = GS_COPY_ABORTED;
		break;
	case GS_COPY_EV_TO_DISK:
		if (state != GS_COPY_ABORTED)
			return FALSE;
		to = GS_COPY_WRITING_DISK;
		break;
	default:
		g_return_val_if_reached(FALSE);
	}
	*next = to;
	return TRUE;
}

GsCopyRole
gs_copy_role(GsCopyState state, GsCopyPlace place)
{
	g_return_val_if_fail(state < GS_COPY_N_STATES, GS_COPY_ROLE_NONE);
	g_return_val_if_fail(place < GS_COPY_N_PLACES, GS_COPY_ROLE_NONE);
	return roles[state][place];
}

guint
gs_copy_n_authoritative(GsCopyState state)
{
	guint n = 0;

	g_return_val_if_fail(state < GS_COPY_N_STATES, 0);
	for (guint p = 0; p < GS_COPY_N_PLACES; p++)
		n += roles[state][p] == GS_COPY_ROLE_AUTHORITATIVE;
	return n;
}

GsCopyPlace
gs_copy_authoritative(GsCopyState state)
{
	g_return_val_if_fail(state < GS_COPY_N_STATES, GS_COPY_PLACE_SOURCE);
	for (guint p = 0; p < GS_COPY_N_PLACES; p++) {
		if (roles[state][p] == GS_COPY_ROLE_AUTHORITATIVE)
			return (GsCopyPlace) p;
	}
	g_return_val_if_reached(GS_COPY_PLACE_SOURCE);
}

gboolean
gs_copy_is_final(GsCopyState state)
{
	return state == GS_COPY_COMMITTED || state == GS_COPY_ON_DISK;
}

const char *
gs_copy_state_name(GsCopyState state)
{
	static const char *const names[] = {
#define GS_X_NAME(suffix, name) name,
		GS_COPY_STATE_MAP(GS_X_NAME)
#undef GS_X_NAME
	};

	g_return_val_if_fail(state < GS_COPY_N_STATES, "invalid");
	return names[state];
}
