/*
 * gpusim: what a Spark-RAPIDS state log says (`gpusim import-state-log`).
 *
 * This module decides what the rows statelog.h reads mean together: each
 * thread's walk through the OOM state machine, checked against gpusim's
 * transition table (thread-state.h), the time each thread and each task
 * spent in each state, what was thrown and decided, how often the deadlock
 * check fired and whether anything moved after it; and the same walk as an
 * event log, for the trace (report.h).
 *
 * The check. A transition is impossible when no event of the model moves a
 * thread from its from state to its to state (gs_thread_transition_possible),
 * or when its from state is not where the thread's previous row left it (a
 * transition the log does not show). A status row (WAITING, DEALLOC, ...)
 * gives the thread's state too, and is held to the same. A thread's first
 * row is taken as it stands (a rotated file starts anywhere), and so is the
 * row after a 2023 state the model lacks (TASK_WAIT_ON_SHUFFLE and the
 * like): those transitions are counted as not checked, and the time spent
 * in such a state is in no column (the trace draws it as a gap).
 *
 * What each transition means (spark-rapids-jni SparkResourceAdaptorJni.cpp):
 * BUFN_THROW -> BUFN_WAIT throws RetryOOM; SPLIT_THROW -> RUNNING throws
 * SplitAndRetryOOM; REMOVE_THROW -> UNKNOWN throws the thread-removed error;
 * BLOCKED -> BUFN_THROW is a deadlock bust's rollback, BUFN -> SPLIT_THROW
 * its split, and BLOCKED -> RUNNING after the thread's "is_retry_alloc_
 * before_bufn set to true" row its retry-once. An INJECTED_* row is a throw
 * of that exception (without _CPU or _GPU, as before host allocations were
 * tracked: the GPU's). The log does not say whether an organic RetryOOM was
 * the GPU's or the host's: the trace marks it "RetryOOM".
 *
 * A task's time is its dedicated threads' time while they worked for it; pool
 * threads (registered with task -1) are counted under "pool". The deadlock
 * check is the DETAIL row "deadlock state is reached ..." (2025 on); it
 * changed nothing when no transition follows it before the next one or the
 * log's end (spark-rapids #12883 shows it firing every 100 ms for a thread
 * that never moves).
 */
#ifndef GPUSIM_STATELOG_REPORT_H
#define GPUSIM_STATELOG_REPORT_H

#include "report/report.h"
#include "scenario/statelog.h"

G_BEGIN_DECLS

/* The counts kept for a thread and for a task. */
typedef struct {
	gint64 in_state_us[GS_N_THREAD_STATES];
	guint retries;   /* RetryOOM thrown (injected included) */
	guint splits;    /* SplitAndRetryOOM thrown (injected included) */
	guint injected;  /* of those, injected by a test */
	guint rollbacks; /* deadlock busts that rolled it back */
	guint blocks;    /* times it went THREAD_BLOCKED */
	guint other_throws; /* CudfException injected, the thread-removed error */
} GsStateCounts;

typedef struct {
	char *thread;       /* the op thread's id */
	gboolean pool;      /* registered as a pool thread at some point */
	GArray *tasks;      /* gint64: the tasks it was dedicated to, in order */
	GsStateCounts counts;
} GsStateThread;

typedef struct {
	gint64 task;        /* -1: the pool threads */
	guint threads;
	GsStateCounts counts;
} GsStateTask;

typedef struct {
	GPtrArray *threads;  /* GsStateThread*, in order of their first row */
	GPtrArray *tasks;    /* GsStateTask*, ascending, the pool (-1) first */
	guint transitions, statuses, notes;
	guint unchecked;     /* transitions into or out of a state outside the model */
	guint deadlock_checks, checks_idle; /* idle: nothing moved after it */
	guint all_bufn_checks;
	GPtrArray *impossible; /* char*: "LOG:LINE:COLUMN: what" */
	gint64 span_us;      /* from the first row to the last */
	GsEventLog *events;  /* the walk as state entries, throws, decisions and marks */
} GsStateReport;

/** Walks @log's rows. */
GsStateReport *gs_state_report_new(const GsStateLog *log);
void gs_state_report_free(GsStateReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsStateReport, gs_state_report_free)

/** The human summary: what was read, per task and per thread, the deadlock check, the check. */
char *gs_state_report_summary(const GsStateReport *report, const GsStateLog *log);

G_END_DECLS

#endif /* GPUSIM_STATELOG_REPORT_H */
