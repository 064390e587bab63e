/*
 * gpusim: checking a run against its scenario's expectations (SPEC §3.8).
 *
 * This module decides whether each expectation of a workload held in a run,
 * and words the ones that did not: every failure is one sentence that names
 * the key, what was expected and what was observed, e.g.
 *   tasks.B.retries: expected == 1, observed 2
 *
 * Keys and where their values come from:
 *   outcome, makespan (also makespan_ns)          the run
 *   totals.NAME (NAME as in the result's totals; durations also without
 *     "_ns"; spilled_bytes.gpu_to_host and the like also as
 *     spilled_gpu_to_host)                        GsResult.totals
 *   tasks.ID.FIELD (outcome, attempts, retries, splits, blocked(_ns),
 *     lost(_ns), max_footprint, start(_ns), end(_ns))   the task's row
 *   threads.NAME.reached / .threw / .final_state  the thread's row; when
 *     several rows carry the name (one per task attempt) the last one counts
 *   threads.NAME.never: [STATE or EXCEPTION, ...]  the same row: it never
 *     entered any of those states and never threw any of those exceptions,
 *     handled or not (one check, its failure naming each that happened)
 *   threads.NAME.acquired / .pages / .leaked      what the thread's
 *     acquire_execution, allocate_page and clean_up returned, in order
 *     (over every thread of that name), from the event log's execution
 *     entries
 *   threads.NAME.values: {VALUE: N}              the thread's value at its
 *     end: its last value entry in the event log (a checkpoint changes
 *     nothing), else where its values: key starts it
 *   at: {time, thread, state}                     the thread's state after
 *     every event at or before that time, replayed from the event log's
 *     state entries (UNKNOWN if it has none); without a log the row fails
 *   at: {time, tier, used|charged|available|max_memory|peak_charged}
 *     the last timeline sample at or before that time (0 bytes before the
 *     first sample), the highest for peak_charged; the limit for max_memory
 *   at: {time, tier, reserved|reservations}       the reservations of the
 *     tier held then, by the result's reservation views: their bytes, or
 *     how many
 *   at: {time, thread, reservation, size|allocated|peak|available|device}
 *     the thread's reservation by that name, its last view at or before
 *     that time (nothing held: 0 bytes, device -1, the space's available)
 *   at: {time, task, tier, used}                  what the task's threads (every
 *     attempt's) held in the tier after every event at or before that
 *     time, replayed from the event log's allocations, frees and copies
 *   at: {time, task, execution} / {time, task, consumer, used}   the
 *     task's Spark execution memory, or one consumer's, after every event
 *     at or before that time, replayed from the log's execution entries
 *   at: {time, task, since, retries, splits, max_gpu}   what the task's
 *     threads did in (since, time]: retry and split-and-retry throws, and
 *     the most GPU bytes they held right after an allocation (RmmSpark's
 *     getAndReset metrics between two calls), one check per key
 * Each key, each threads.NAME.* key and each `at` row counts as one check.
 * An outcome key compares words (== or !=); every other key compares numbers
 * with gs_cmp_holds().
 */
#ifndef GPUSIM_EXPECT_H
#define GPUSIM_EXPECT_H

#include <gpusim/gpusim.h>

#include "run/result.h"

G_BEGIN_DECLS

typedef struct GsEventLog GsEventLog; /* report.h */

typedef struct {
	guint checked;     /* expectations evaluated */
	GPtrArray *failed; /* char*: one sentence per failed expectation, in scenario order */
} GsExpectReport;

/** Evaluates every expectation of @w against @r (and @log, which may be NULL). */
GsExpectReport *gs_expect_check(const GsWorkload *w, const GsResult *r, const GsEventLog *log);

/**
 * Whether checking @w's expectations may read the event log: any of a
 * thread's or any `at` row (some of them need it); the others read the
 * result alone.
 */
gboolean gs_expect_reads_log(const GsWorkload *w);

/** TRUE if every expectation held. */
gboolean gs_expect_report_passed(const GsExpectReport *report);

void gs_expect_report_free(GsExpectReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsExpectReport, gs_expect_report_free)

G_END_DECLS

#endif /* GPUSIM_EXPECT_H */
