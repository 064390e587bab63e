/*
 * gpusim: the search behind `gpusim explore`: the schedules a real executor
 * could take (schedule.h), run one after another on the simulator, and the
 * properties every run must keep.
 *
 * This module decides which schedules are run, in which order, what counts
 * as a violation, and which schedule stands for each violation found.
 *
 * The search is depth-first first: a run follows a prefix of choices and
 * then takes the default order, recording how many alternatives each point
 * had; the next prefix is the last point with an alternative not yet taken
 * that must be. Every alternative must, but at a point where an order of
 * an instant's events is chosen: there the run also records what each
 * event touched, and only the alternatives it shows racing with the event
 * taken must run too (footprints.h, dynamic partial-order reduction), unless
 * every_order, or expect with expectations that read the event log.
 * When the tree is not exhausted within half the budget (half the time with
 * a time limit), the rest of the budget goes to random schedules: run k
 * picks uniformly at each point from a generator seeded with (seed, k), so
 * that the same budget gives the same runs whatever the number of workers.
 * The random runs go in batches over the workers, their results kept by
 * index; the depth-first part runs on one, since each prefix comes from the
 * run before it. The runs are reduced as the simulator reduces a run with a
 * chooser (GsRunOptions.every_choice): where the engine busts no deadlock,
 * the watchdog's ticks only count deadlocks, and neither their phase nor
 * their place in an instant is a choice. The random runs are not reduced:
 * each order of an instant's events they pick is a schedule of its own.
 *
 * The properties, each a violation kind: the run ends in no deadlock (under
 * retry every deadlock is busted, under block or fail a deadlock is one);
 * it is not cut short (a livelock, --max-time, time running out); every
 * task that failed names the exception that failed it; nothing leaked (the
 * result's leak figures); no copy between tiers lost or duplicated its
 * data; the engine's and the memory's bookkeeping holds after every instant;
 * with expect, the scenario's own expect: section; and with needless_busts,
 * no deadlock is busted (a thread rolled back, split or made to retry)
 * while another thread could still make progress: one that runs its ops,
 * computes, sleeps or is in an allocation attempt, and that the engine
 * counts neither waiting nor being thrown out (the simulator's rule,
 * GsRunHooks.progressing). That one is off unless asked for: the reference
 * busts so on purpose where it counts a sleeping thread, or one waiting on
 * a pool, as blocked, and scenarios that reproduce it would all break it. For each kind, the
 * first schedule (in the search's order) that breaks it is shrunk: choices
 * are dropped from its end and set to 0 one by one, each change kept while
 * the run still breaks the property, until none helps.
 */
#ifndef GPUSIM_CLI_EXPLORE_H
#define GPUSIM_CLI_EXPLORE_H

#include <gpusim/gpusim.h>

#include "report/expect.h"
#include "run/options.h"

G_BEGIN_DECLS

typedef enum {
	GS_VIOLATION_DEADLOCK,
	GS_VIOLATION_CUT_SHORT,
	GS_VIOLATION_UNEXPLAINED_FAILURE,
	GS_VIOLATION_LEAK,
	GS_VIOLATION_COPY_LOST,
	GS_VIOLATION_INVARIANT,
	GS_VIOLATION_EXPECT,
	GS_VIOLATION_NEEDLESS_BUST,
	GS_N_VIOLATIONS,
} GsViolationKind;

/** "deadlock", "cut-short", "unexplained-failure", "leak", "copy-lost", "invariant", "expect",
 * "needless-bust". */
const char *gs_violation_name(GsViolationKind kind);

/* How far a search is, for a progress display. */
typedef struct {
	guint64 schedules;  /* run so far, shrinking aside */
	guint64 budget;     /* 0: time-limited */
	guint violations;   /* kinds found so far */
} GsExploreProgress;

typedef void (*GsExploreProgressFunc)(const GsExploreProgress *progress, gpointer data);

/* Told each depth-first run's scenario and result, for a caller that studies what runs reach. */
typedef void (*GsExploreRunFunc)(const GsWorkload *w, const GsResult *r, gpointer data);

typedef struct {
	const char *name;       /* the scenario's path, as messages name it */
	const char *text;       /* its text, read once: every run loads the same */
	gsize len;
	guint64 budget;         /* schedules in all; 0: until time_us passes */
	gint64 time_us;         /* wall time; 0: no limit (budget then > 0) */
	guint jobs;             /* workers for the random schedules, 1 or more */
	guint64 seed;           /* of the random schedules */
	gboolean expect;        /* the scenario's expect: is a property too */
	gboolean needless_busts; /* so is busting no deadlock while a thread could still make
				    progress (GsRunHooks.progressing says which could) */
	GsTime max_time;        /* a run's limit in scenario time, 0: none */
	gboolean every_choice;  /* no reduction: GsRunOptions.every_choice (for measuring it) */
	gboolean every_order;   /* every order of an instant's events, even of those that
				   commute (footprints.h): no reduction of orders */
	gboolean jitter_given;  /* jitter replaces the scenario's schedule_jitter */
	double jitter;
	GsExploreProgressFunc progress;
	gpointer progress_data;
	GsExploreRunFunc each_run;  /* NULL: nobody is told */
	gpointer each_run_data;
} GsExploreOptions;

/* The first schedule found to break one property, shrunk. */
typedef struct {
	GsViolationKind kind;
	guint64 found_at;  /* the index of the first run that broke it, from 0 */
	GArray *schedule;  /* guint: the shrunk choices, without trailing zeros */
	char *detail;      /* what the replay shows, in a sentence */
} GsViolation;

typedef struct {
	guint64 schedules;      /* runs of the search, shrinking aside */
	guint64 depth_first;    /* of which depth-first */
	guint64 shrink_runs;
	gboolean exhausted;     /* every schedule was run (one of each set of orders that
				   differ only in events that commute, when reduced) */
	gboolean reduced;       /* the depth-first part left out orders that cannot matter */
	guint most_points;      /* the most choice points one run reached */
	GsViolation *found[GS_N_VIOLATIONS]; /* NULL: none found */
} GsExploreResult;

/*
 * Searches the schedules of the scenario @o describes (a schedule: it holds
 * is not followed: the search makes its own). NULL with @error set when the
 * scenario does not load (GS_SCENARIO_ERROR).
 */
GsExploreResult *gs_explore(const GsExploreOptions *o, GError **error);
void gs_explore_result_free(GsExploreResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsExploreResult, gs_explore_result_free)

/* What a replay of @choices shows: its result and event log (for the files written beside it). */
typedef struct {
	GsWorkload *workload;
	GsResult *result;
	GsEventLog *log;
} GsExploreReplay;

/** Runs the scenario of @o once, following @choices, with its event log; FALSE with @error set. */
gboolean gs_explore_replay(const GsExploreOptions *o, const GArray *choices,
			   GsExploreReplay *replay, GError **error);
void gs_explore_replay_clear(GsExploreReplay *replay);

G_END_DECLS

#endif /* GPUSIM_CLI_EXPLORE_H */
