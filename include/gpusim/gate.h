/*
 * gpusim: the copy gate between memory tiers (OpenJDK Shenandoah's
 * evacuation-OOM protocol, ShenandoahEvacOOMHandler; reference
 * tiers-spill-pages-evac.md §D) and the authoritative-copy rule of one copy.
 *
 * This module decides two things:
 *  1. Who may start copying a buffer between tiers (spill, unspill), and who
 *     must take the fallback path instead. A copy runs inside the gate: a
 *     count of threads inside plus a closed bit (§D.2). A copy whose
 *     destination has no room closes the gate and removes itself from the
 *     count in one atomic step (§D.3); from then on no thread can enter
 *     (§D.4: the closed bit is checked before every compare-and-swap), every
 *     thread that finds the gate closed, and the one that closed it, takes
 *     the fallback path once the copies still inside have drained, and the
 *     gate stays closed until the driver resets it at a global pause, when
 *     nobody is inside (§D.3 clear()). Scopes nest; only the outermost counts,
 *     and a nested entry that finds the gate closed removes its own
 *     registration so that it never waits for itself (§D.4). The count may be
 *     striped over a power of two of cache-line padded words, one per hash of
 *     the thread id (§D.5); with one stripe it is exactly the 2018 single
 *     counter.
 *  2. Where the one authoritative copy of a buffer lives while it moves from
 *     tier A to tier B (the copy protocol below): the source stays
 *     authoritative until the copy commits, a commit moves authority to the
 *     destination and releases the source in one step, a failed copy
 *     discards the destination, and the caller may then send the data to
 *     disk. No state has zero or two authoritative copies.
 *
 * What it leaves to callers: waiting (the gate never waits; gs_gate_close()
 * says how many copies are still inside and gs_gate_drained() says when they
 * are gone: the simulator turns that into an event, a real-thread driver
 * spins or sleeps on it), per-thread storage (each thread owns its
 * GsGateThread, the reference's thread-local nesting level and
 * oom_during_evac flag), allocating and writing the destination, the actual
 * fallback (leave the buffer where it is, or go to disk), choosing when the
 * global pause is, and one gate per whatever the driver wants gated (all
 * tiers, or one per destination). A counted thread must never block on
 * anything else (a lock, a yield point, a task barrier) while inside: a
 * thread waiting for the drain would wait for it (§D.6, JDK-8382608).
 *
 * The gate uses C11 atomics so that one gate can be shared by real threads;
 * the simulator calls the same functions from one thread. Nothing here reads
 * a clock, sleeps or starts a thread.
 *
 * Invariants of a gate: for every stripe, the low 31 bits count the threads
 * counted on it and bit 31 says closed; once a stripe is closed its count
 * only decreases until gs_gate_reset(); gs_gate_drained() is TRUE exactly
 * when every stripe reads GS_GATE_OOM_MARKER (closed and empty).
 */
#ifndef GPUSIM_GATE_H
#define GPUSIM_GATE_H

#include <gpusim/types.h>

G_BEGIN_DECLS

/* ---- Counter encoding (§D.2) ---- */

/** Bit 31 of a gate word: "OOM during the copy", the gate is closed. */
#define GS_GATE_OOM_MARKER 0x80000000u
/** The low 31 bits of a gate word: threads counted inside. */
#define GS_GATE_COUNT_MASK 0x7fffffffu
/** The most stripes a gate has (§D.5: clamp(processors, 1, 128)). */
#define GS_GATE_MAX_STRIPES 128u

/** The threads counted in a gate word (its low 31 bits). */
GS_API guint32 gs_gate_word_count(guint32 word);
/** TRUE if the word's closed bit is set. */
GS_API gboolean gs_gate_word_closed(guint32 word);
/** The word for @count threads inside (must fit in 31 bits) and the closed bit. */
GS_API guint32 gs_gate_word_make(guint32 count, gboolean closed);

/**
 * How many stripes a gate for @n_cpus processors has (§D.5): the next power
 * of two of clamp(@n_cpus, 1, 128). 0 counts as 1.
 */
GS_API guint gs_gate_stripes_for(guint n_cpus);

/**
 * The stripe of @thread in a gate of @n_stripes (a power of two): the
 * MurmurHash3 64-bit finalizer of the id masked by @n_stripes - 1, as the
 * reference hashes the Thread* address.
 */
GS_API guint gs_gate_stripe_of(GsThreadId thread, guint n_stripes);

/* ---- The gate ---- */

typedef struct GsGate GsGate;

/**
 * An open, empty gate with gs_gate_stripes_for(@n_stripes) stripes: pass 1
 * (or 0) for the single counter of §D.3, the processor count for §D.5.
 */
GS_API GsGate *gs_gate_new(guint n_stripes);
GS_API void gs_gate_free(GsGate *gate);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsGate, gs_gate_free)

GS_API guint gs_gate_n_stripes(const GsGate *gate);

/**
 * One thread's view of the gate: the reference's thread-locals. The thread
 * owns it (on its stack, or in the simulator's thread record) and passes it
 * to every call; callers only read the fields.
 */
typedef struct {
	GsThreadId thread;
	guint stripe;       /* gs_gate_stripe_of(thread, the gate's stripes) */
	guint level;        /* scopes entered and not yet left; only the outermost counts */
	gboolean fell_back; /* went through the OOM protocol: not counted, must not commit */
} GsGateThread;

/** Fills @self for @thread, outside any scope. */
GS_API void gs_gate_thread_init(const GsGate *gate, GsGateThread *self, GsThreadId thread);

typedef enum {
	/*
	 * Counted inside (or in a nested scope of a counted thread): allocate
	 * the destination and copy; leave when the copy has committed or
	 * aborted.
	 */
	GS_GATE_ENTERED = 0,
	/*
	 * The gate is closed: do not copy, take the fallback path. The thread is
	 * in a scope but not counted; it still calls gs_gate_leave(). Before it
	 * relies on where a buffer that others may be moving lives, it waits
	 * until gs_gate_drained().
	 */
	GS_GATE_CLOSED = 1,
} GsGateResult;

/**
 * Enters a scope. The outermost scope increments the thread's stripe with a
 * compare-and-swap loop that gives up as soon as it sees the closed bit, so
 * that no thread enters once the gate is closed. A nested scope of a counted
 * thread counts nothing, unless the gate has closed meanwhile: then it
 * removes the thread's own registration (else the thread would wait for
 * itself) and returns GS_GATE_CLOSED; any copy the thread has in progress
 * must then be aborted, not committed. A thread that already fell back gets
 * GS_GATE_CLOSED from every nested scope.
 *
 * Every call, whatever it returns, is paired with one gs_gate_leave().
 */
GS_API GsGateResult gs_gate_enter(GsGate *gate, GsGateThread *self);

/**
 * Leaves a scope. Leaving the outermost scope decrements the thread's stripe
 * (closed or not: the count is positive, so the closed bit is untouched),
 * unless the thread fell back, which uncounted it already; then it only
 * clears fell_back.
 */
GS_API void gs_gate_leave(GsGate *gate, GsGateThread *self);

/**
 * A copy's destination has no room: closes the gate. Every stripe gets the
 * closed bit, in index order, each with a compare-and-swap loop; the
 * thread's own stripe is decremented in the same step if the thread is
 * counted, so the failing thread closes the gate and leaves the count at
 * once. A thread in a scope is then marked fell_back: it aborts its copies
 * and takes the fallback path. Closing a closed gate (a second failing copy)
 * just uncounts the caller. The driver may also close from outside any
 * scope (@self's level 0): nothing is uncounted.
 *
 * Returns the threads still counted inside after the step: 0 means the gate
 * has drained and the fallback may start now; otherwise the caller waits
 * until gs_gate_drained(). Closed stripes only count down, so a 0 stays 0
 * until the reset.
 */
GS_API guint64 gs_gate_close(GsGate *gate, GsGateThread *self);

/**
 * TRUE once the gate is closed and nobody is counted: every stripe reads
 * exactly GS_GATE_OOM_MARKER. Every copy that will commit before the reset
 * has committed. FALSE on an open gate, even an empty one: requiring the
 * closed bit covers a waiter that looks at a stripe the closing thread has
 * not marked yet (§D.5).
 */
GS_API gboolean gs_gate_drained(const GsGate *gate);

/** TRUE if any stripe has the closed bit: the gate is closed or closing. */
GS_API gboolean gs_gate_is_closed(const GsGate *gate);

/** Threads counted inside now, over all stripes (a sum of separate loads). */
GS_API guint64 gs_gate_inside(const GsGate *gate);

/** The raw word of stripe @stripe (an acquire load), for tests and metrics. */
GS_API guint32 gs_gate_word(const GsGate *gate, guint stripe);

/**
 * The global pause (§D.3 clear(), once per cycle): if no thread is counted,
 * stores 0 in every stripe, opening the gate for the next cycle, and returns
 * TRUE; if a thread is still counted, changes nothing and returns FALSE
 * (the reference asserts instead). The driver calls it only where no thread
 * is inside a scope, counted or fallen back; resetting an open empty gate
 * is harmless.
 */
GS_API gboolean gs_gate_reset(GsGate *gate);

/* ---- The copy protocol: one authoritative copy ---- */

/*
 * The life of one copy of a buffer from tier A (the source) to tier B (the
 * destination), with disk as the fallback the caller may ask for. Columns:
 * constant suffix, name.
 */
#define GS_COPY_STATE_MAP(X)                                                   \
	X(AT_SOURCE, "at-source")       /* only the source copy exists */      \
	X(COPYING, "copying")           /* source authoritative, destination being written */ \
	X(COMMITTED, "committed")       /* destination authoritative, source released */ \
	X(ABORTED, "aborted")           /* destination discarded, source authoritative */ \
	X(WRITING_DISK, "writing-disk") /* source authoritative, disk copy being written */ \
	X(ON_DISK, "on-disk")           /* disk authoritative, source released */

typedef enum {
#define GS_X_ENUM(suffix, name) GS_COPY_##suffix,
	GS_COPY_STATE_MAP(GS_X_ENUM)
#undef GS_X_ENUM
	GS_COPY_N_STATES
} GsCopyState;

typedef enum {
	/* The gate was entered and the destination allocated: start writing. */
	GS_COPY_EV_START = 0,
	/*
	 * Every byte is written: the written copy becomes authoritative and the
	 * source is released in the same step (the caller's single update of
	 * the buffer's location, the reference's forwarding-pointer CAS). Done
	 * inside the gate, before leaving.
	 */
	GS_COPY_EV_COMMIT = 1,
	/*
	 * The destination could not be had (no room, the gate closed, the
	 * thread fell back) or its write failed: whatever was written is
	 * discarded and the source stays authoritative.
	 */
	GS_COPY_EV_FAIL = 2,
	/* After a failed copy, the caller asks to send the data to disk. */
	GS_COPY_EV_TO_DISK = 3,
} GsCopyEvent;
#define GS_COPY_N_EVENTS 4

/** Where a copy of the buffer may be. */
typedef enum {
	GS_COPY_PLACE_SOURCE = 0,
	GS_COPY_PLACE_DESTINATION = 1,
	GS_COPY_PLACE_DISK = 2,
} GsCopyPlace;
#define GS_COPY_N_PLACES 3

/** What a place holds in a state. */
typedef enum {
	GS_COPY_ROLE_NONE = 0,          /* nothing (never allocated, discarded or released) */
	GS_COPY_ROLE_WRITING = 1,       /* bytes being written: never read, never authoritative */
	GS_COPY_ROLE_AUTHORITATIVE = 2, /* the copy every reader and writer uses */
} GsCopyRole;

/**
 * The transition function. Legal moves: AT_SOURCE -START-> COPYING -COMMIT->
 * COMMITTED; AT_SOURCE or COPYING -FAIL-> ABORTED; ABORTED -TO_DISK->
 * WRITING_DISK -COMMIT-> ON_DISK; WRITING_DISK -FAIL-> ABORTED (the data
 * stays at the source); ABORTED -START-> COPYING (a retry, in a later
 * cycle). Stores the next state in @next and returns TRUE; returns FALSE and
 * leaves @next alone for any other pair.
 */
GS_API gboolean gs_copy_step(GsCopyState state, GsCopyEvent event, GsCopyState *next);

/** What @place holds in @state. */
GS_API GsCopyRole gs_copy_role(GsCopyState state, GsCopyPlace place);

/** The number of authoritative copies in @state: 1 in every state. */
GS_API guint gs_copy_n_authoritative(GsCopyState state);

/** Where the authoritative copy is in @state. */
GS_API GsCopyPlace gs_copy_authoritative(GsCopyState state);

/** TRUE for the states no event leaves: COMMITTED and ON_DISK. */
GS_API gboolean gs_copy_is_final(GsCopyState state);

/** The state's name, e.g. "writing-disk". */
GS_API const char *gs_copy_state_name(GsCopyState state);

G_END_DECLS

#endif /* GPUSIM_GATE_H */
