/*
 * gpusim: how a run goes, whichever driver runs it: one options struct for
 * the simulator and the real-thread driver, each reading the members that
 * mean something to it, with the defaults of a zeroed struct.
 */
#ifndef GPUSIM_RUN_OPTIONS_H
#define GPUSIM_RUN_OPTIONS_H

#include <gpusim/gpusim.h>

#include "run/result.h"

G_BEGIN_DECLS

/* Events one instant may take before the simulator stops the run as a livelock. */
#define GS_MAX_EVENTS_PER_INSTANT G_GUINT64_CONSTANT(100000000)

typedef enum {
	GS_LOCKING_FAST = 0,   /* fits: no global mutex (the default) */
	GS_LOCKING_GLOBAL = 1, /* every allocation and free under the engine mutex */
} GsLocking;

typedef enum {
	GS_CLOCK_REAL = 0,    /* scenario time is real time over time_scale (the default) */
	GS_CLOCK_VIRTUAL = 1, /* scenario time moves when every thread waits */
} GsClock;

/* How far a run has gone, for a progress display. */
typedef struct {
	GsTime now;        /* scenario time */
	guint tasks_done;  /* logical tasks with an outcome ... */
	guint tasks;       /* ... of these */
	guint64 events;    /* what the driver has handled */
} GsRunProgress;

/* The simulator tells progress after a pass once this many more events are handled. */
#define GS_PROGRESS_EVENTS 65536

typedef void (*GsRunProgressFunc)(const GsRunProgress *progress, gpointer data);

/*
 * The points where a real executor could take another order than the one
 * the simulator replays by default. At each, the chooser is told the number
 * of alternatives (always 2 or more: a point with one is no choice) and
 * returns which to take; alternative 0 is the default order, so a chooser
 * that always returns 0 changes nothing. A choice out of range is taken as 0.
 */
typedef enum {
	GS_CHOICE_ORDER,           /* which of the events due at one instant, in one pass, fires
				      next (alternative i: the i-th that still does something) */
	GS_CHOICE_WATCHDOG_PHASE,  /* where the watchdog's first tick falls: alternative i
				      ticks first at period - i (period / N), N =
				      GS_WATCHDOG_PHASES (no choice for a period under N ns) */
	GS_CHOICE_WAKE,            /* which of the BLOCKED threads that rank alike (equal task
				      priorities) a wake-one on a free or a success wakes
				      (alternative i: the i-th in the engine's order,
				      GsEngineChooseFunc); a wake of every waiter queues
				      them all, and their resumptions are ORDER choices */
	GS_CHOICE_LATENCY,         /* how long an allocation attempt or a wait for copies
				      lasts, with the scenario's schedule_jitter j > 0:
				      alternative 0 as the links say, 1 shorter by j, 2
				      longer by j (no choice where j of it is under 1 ns) */
	GS_N_CHOICE_KINDS,
} GsChoiceKind;

/* The watchdog's phases a chooser may pick from. */
#define GS_WATCHDOG_PHASES 4

/* A jittered latency's alternatives: as given, shorter, longer. */
#define GS_LATENCY_ALTERNATIVES 3

typedef guint (*GsChooseFunc)(GsChoiceKind kind, guint n, gpointer data);

/*
 * What one event of an instant touched, for a search that leaves out the
 * orders that cannot matter (GsRunOptions.footprints). An event is private
 * when it resumed a thread going on by itself (running its ops, computing or
 * sleeping) that went on computing or sleeping: it called nothing in the
 * engine, the memory or the tiers, held no lane, and what its thread's
 * status counts in (running, waiting) stayed as it was, so that nothing
 * another event reads changed. Any other event is shared: it read or changed what
 * other threads' events read or change. The watchdog's tick is more: whether
 * it came after every other event of its instant decides when it ticks next.
 */
typedef struct {
	guint64 seq;         /* the event: its sequence number in this run */
	GsThreadId thread;   /* the thread it resumed; 0 for any other event */
	gboolean shared;
	gboolean with_all;   /* its effect depends on every other event of its pass: the
				watchdog's tick, which tells whether it came last */
	const GsThreadId *writes; /* threads of the same pass whose status or pending
				     resumption it changed, its own aside */
	guint n_writes;
} GsFootprint;

/*
 * Told to a search beside its chooser (with footprints_data): before every
 * GS_CHOICE_ORDER point, the events it chooses among (their sequence
 * numbers and threads, 0 for an event that resumes none, alternative i at
 * i); after every event of a pass that did something, what it touched.
 */
typedef struct {
	void (*alternatives)(const guint64 *seqs, const GsThreadId *threads, guint n,
			     gpointer data);
	void (*fired)(const GsFootprint *footprint, gpointer data);
} GsFootprintHooks;

typedef struct {
	/* Both drivers. */
	GsTime max_time;   /* scenario time; 0: no limit (--max-time) */
	GsLogFunc log;     /* NULL: no event log */
	gpointer log_data;
	/*
	 * Told every so often while the run goes (NULL: nobody is): the
	 * simulator every GS_PROGRESS_EVENTS events, real threads at each turn
	 * of their supervising loop; the listener decides what to show when.
	 */
	GsRunProgressFunc progress;
	gpointer progress_data;
	/* The simulator. */
	guint64 max_events_per_instant; /* 0: GS_MAX_EVENTS_PER_INSTANT */
	guint64 max_events; /* 0: no limit; a run that has processed this many events ends
			       after that pass as a timeout (bounds a run whose clock stands still) */
	gboolean skip_timeline; /* leave GsResult.timeline empty: nobody reads it (peaks and
				   means are kept all the same) */
	GsChooseFunc choose;    /* NULL: the default order at every choice point */
	gpointer choose_data;
	const GsFootprintHooks *footprints; /* with a chooser: NULL, nobody is told */
	gpointer footprints_data;
	gboolean every_choice;  /* with a chooser, also the choices that cannot change the run
				   (where the engine busts no deadlock, the watchdog's phase and
				   its ticks' place in an instant); FALSE, the default: not those,
				   in explore and its replays alike */
	gboolean check_invariants; /* the engine's and the memory's, after every instant (and
				      at the end): the first broken goes to
				      GsResult.invariant_broken */
	gboolean check_busts;      /* every deadlock busted, for a thread that could still make
				      progress (GsRunHooks.progressing): the first such bust
				      goes to GsResult.needless_bust */
	/* Real threads. */
	GsClock clock;
	double time_scale; /* real time per scenario time; 0 means 1 */
	GsLocking locking;
} GsRunOptions;

/** Parses "fast" / "global", the words of `gpusim run --locking`. */
gboolean gs_locking_from_name(const char *name, GsLocking *out);

/** Parses "real" / "virtual", the words of `gpusim run --clock`. */
gboolean gs_clock_from_name(const char *name, GsClock *out);

G_END_DECLS

#endif /* GPUSIM_RUN_OPTIONS_H */
