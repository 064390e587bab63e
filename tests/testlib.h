/*
 * gpusim tests: shared helpers.
 *
 * An engine fixture that records what the observer saw, and wrappers around
 * every engine call that check the engine's invariants after the call, so that
 * every step of every test also tests the bookkeeping.
 */
#ifndef GPUSIM_TESTLIB_H
#define GPUSIM_TESTLIB_H

#include <check.h>
#include <gpusim/gpusim.h>

/* One observed happening, in order. */
typedef enum {
	TL_SEEN_STATE,
	TL_SEEN_THROW,
	TL_SEEN_BUST,
} TlSeenKind;

typedef struct {
	TlSeenKind kind;
	GsThreadId thread;
	GsThreadState from, to;  /* TL_SEEN_STATE */
	GsThreadEvent cause;     /* TL_SEEN_STATE */
	GsException exc;         /* TL_SEEN_THROW */
	gboolean injected;       /* TL_SEEN_THROW */
	GsBustAction action;     /* TL_SEEN_BUST */
	GsCheckReason reason;    /* TL_SEEN_BUST */
	GsTime now;
} TlSeen;

typedef struct {
	GsEngine *engine;
	GArray *seen; /* TlSeen */
} TlEngine;

/* An engine with @opts (NULL: defaults) and a recording observer. */
TlEngine *tl_engine_new(const GsEngineOpts *opts);
void tl_engine_free(TlEngine *t);

/* Fails the test if the engine's invariants do not hold. */
void tl_check(TlEngine *t);

/* Engine calls followed by tl_check(). Registration asserts success. */
void tl_dedicated(TlEngine *t, GsThreadId thread, GsTaskId task);
void tl_pool(TlEngine *t, GsThreadId thread, gboolean shuffle, guint n_tasks, ...);
GsDecision tl_begin(TlEngine *t, GsThreadId thread, GsAllocKind kind, gboolean blocking, GsTime now);
GsDecision tl_success(TlEngine *t, GsThreadId thread, GsAllocKind kind, gint64 bytes, GsTime now);
GsDecision tl_oom(TlEngine *t, GsThreadId thread, GsAllocKind kind, gboolean blocking, GsTime now);
void tl_free(TlEngine *t, GsThreadId thread, GsAllocKind kind, gint64 bytes, GsTime now);
GsDecision tl_bur(TlEngine *t, GsThreadId thread, GsTime now);
void tl_task_done(TlEngine *t, GsTaskId task, GsTime now);
gboolean tl_watchdog(TlEngine *t, GsTime now, guint n_outside, ...);

/*
 * Drives a blocking allocation the way a driver would until it stops waiting
 * or failing: begin → (success if @fits) / (OOM → loop). Returns the decision
 * that ended the loop: PROCEED after a success, WAIT, THROW or ERROR.
 */
GsDecision tl_alloc(TlEngine *t, GsThreadId thread, GsAllocKind kind, gint64 bytes, gboolean fits,
		    GsTime now);

/* Drains the wake queue into a freshly allocated array of ids. */
GArray *tl_wakes(TlEngine *t);

/* The state of a thread, for short assertions. */
GsThreadState tl_state(TlEngine *t, GsThreadId thread);

/* Number of recorded happenings of a kind (for a thread, or any with G_MAXUINT64). */
guint tl_count(TlEngine *t, TlSeenKind kind, GsThreadId thread);
/* The last exception recorded for a thread, GS_EXC_NONE if none. */
GsException tl_last_throw(TlEngine *t, GsThreadId thread);
/* The i-th bust recorded (0-based), or NULL. */
const TlSeen *tl_bust(TlEngine *t, guint i);
/* TRUE if the thread ever entered @state. */
gboolean tl_reached(TlEngine *t, GsThreadId thread, GsThreadState state);

#define TL_ANY_THREAD G_MAXUINT64

/* ---- JSON: a validating parser (RFC 8259 grammar, duplicate keys rejected) ---- */

/* TRUE if @text is one valid JSON value (and UTF-8), surrounded by white space only. */
gboolean tl_json_valid(const char *text);
/* Fails the test unless @text is valid JSON. */
void tl_ck_json(const char *text);
/* Fails the test unless @needle is in @text. */
void tl_ck_contains(const char *text, const char *needle);
/* How many times @needle is in @text. */
guint tl_count_of(const char *text, const char *needle);

/* Runs @suite and returns the process exit status. */
int tl_run_suite(Suite *suite);

/* Appends a step to @trace, a comma-separated list of what a fake driver saw. */
void tl_trace_add(GString *trace, const char *format, ...) G_GNUC_PRINTF(2, 3);

#endif /* GPUSIM_TESTLIB_H */
