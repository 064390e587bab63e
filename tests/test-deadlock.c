/*
 * Unit tests of deadlock.h: snapshots of thread records judged by
 * gs_deadlock_check(), one table row per rule of the header's comment and of
 * reference/spark-rapids-oom.md §1.6 and §2.3.
 *
 * In the tables, task ids start at 1 and thread ids at 1, so that 0 can end
 * the zero-initialised lists. Task priorities come from a FIFO
 * GsTaskPriorities asked in the row's order: the first task listed ranks
 * highest.
 */
#include <check.h>
#include <gpusim/gpusim.h>

#include <stdlib.h>

#define MAX_THREADS 8
#define MAX_TASKS 6
#define MAX_OUTSIDE 4
#define ANY (-1)

typedef struct {
	GsThreadId id; /* 0 ends the list */
	GsTaskId task;
	GsThreadState state;
	GsAllocKind kind;
	gboolean is_pool;
	gboolean shuffle;
	gboolean pool_blocked;
	GsTaskId tasks[4]; /* pool threads: ascending, 0-terminated */
} ThreadSpec;

/* A dedicated thread (GPU), one allocating host memory, one waiting on a pool. */
#define DED(i, t, st) { .id = (i), .task = (t), .state = GS_THREAD_##st }
#define DED_HOST(i, t, st) \
	{ .id = (i), .task = (t), .state = GS_THREAD_##st, .kind = GS_KIND_HOST }
#define DED_PB(i, t, st) \
	{ .id = (i), .task = (t), .state = GS_THREAD_##st, .pool_blocked = TRUE }
/* A non-shuffle and a shuffle pool thread working for the listed tasks. */
#define POOL(i, st, ...)                                                       \
	{ .id = (i), .task = GS_NO_TASK, .state = GS_THREAD_##st, .is_pool = TRUE, \
	  .tasks = { __VA_ARGS__ } }
#define SHUF(i, st, ...)                                                       \
	{ .id = (i), .task = GS_NO_TASK, .state = GS_THREAD_##st, .is_pool = TRUE, \
	  .shuffle = TRUE, .tasks = { __VA_ARGS__ } }

/* Changes to GS_DEADLOCK_OPTS_DEFAULT. */
enum {
	OPT_SPLIT_LOWEST = 1 << 0,
	OPT_NO_RETRY_ONCE = 1 << 1,
	OPT_STRICT = 1 << 2,
	OPT_BEST_TASK = 1 << 3,
};

typedef struct {
	const char *what;
	/* Inputs */
	ThreadSpec threads[MAX_THREADS];
	GsTaskId order[MAX_TASKS];       /* asked in this order: first ranks highest */
	GsThreadId outside[MAX_OUTSIDE]; /* ascending; none: the state-machine view */
	guint opts;
	/* Outputs */
	gboolean deadlocked;
	GsThreadId rollback; /* 0: nothing rolls back */
	gboolean retry_once;
	GsThreadId split; /* 0: nothing splits */
	guint n_tasks;
	guint n_blocked;
	int n_bufn; /* ANY: not checked */
} DeadlockRow;

static const DeadlockRow rows[] = {
	/* ---- rule 4: at least one task, every task blocked ---- */
	{ .what = "no threads", .deadlocked = FALSE, .n_tasks = 0, .n_blocked = 0,
	  .n_bufn = ANY },
	{ .what = "one task running",
	  .threads = { DED(10, 1, RUNNING) }, .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "one task allocating",
	  .threads = { DED(10, 1, ALLOC), DED(11, 1, ALLOC_FREE) }, .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "only pool threads, all blocked: no task",
	  .threads = { POOL(50, BLOCKED, 1), POOL(51, BLOCKED, 2) }, .order = { 1, 2 },
	  .deadlocked = FALSE, .n_tasks = 0, .n_blocked = 0, .n_bufn = ANY },

	/* ---- rule 5: rollback ---- */
	{ .what = "one task blocked: retry once",
	  .threads = { DED(10, 1, BLOCKED) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "one task blocked, retry-once off",
	  .threads = { DED(10, 1, BLOCKED) }, .order = { 1 }, .opts = OPT_NO_RETRY_ONCE,
	  .deadlocked = TRUE, .rollback = 10, .retry_once = FALSE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "two tasks blocked: the lower rolls back",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BLOCKED) }, .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = FALSE,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 0 },
	{ .what = "two tasks blocked, priorities reversed",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BLOCKED) }, .order = { 2, 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = FALSE,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 0 },
	{ .what = "three tasks blocked: the lowest of three",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BLOCKED), DED(30, 3, BLOCKED) },
	  .order = { 3, 1, 2 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = FALSE,
	  .n_tasks = 3, .n_blocked = 3, .n_bufn = 0 },
	{ .what = "same task: the smaller thread id is lower",
	  .threads = { DED(30, 1, BLOCKED), DED(10, 1, BLOCKED) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = FALSE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "mixed kinds: host and GPU blocked form a deadlock",
	  .threads = { DED_HOST(10, 1, BLOCKED), DED(20, 2, BLOCKED) }, .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = FALSE,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 0 },
	{ .what = "mixed kinds: the host thread is the lowest",
	  .threads = { DED_HOST(10, 1, BLOCKED), DED(20, 2, BLOCKED) }, .order = { 2, 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = FALSE,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 0 },
	{ .what = "a blocked pool thread may be the victim",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BLOCKED), POOL(5, BLOCKED, 2) },
	  .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 5, .retry_once = FALSE,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 0 },
	{ .what = "a shuffle thread ranks above every task",
	  .threads = { DED(10, 1, BLOCKED), SHUF(5, BLOCKED, 1) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = FALSE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "pool rule: smallest task id",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), DED(30, 3, BUFN),
		       POOL(50, BLOCKED, 1, 3) },
	  .order = { 3, 2, 1 },
	  .deadlocked = TRUE, .rollback = 50, .retry_once = FALSE,
	  .n_tasks = 3, .n_blocked = 3, .n_bufn = 2 },
	{ .what = "pool rule: best task",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), DED(30, 3, BUFN),
		       POOL(50, BLOCKED, 1, 3) },
	  .order = { 3, 2, 1 }, .opts = OPT_BEST_TASK,
	  .deadlocked = TRUE, .rollback = 20, .retry_once = FALSE,
	  .n_tasks = 3, .n_blocked = 3, .n_bufn = 2 },
	{ .what = "only BLOCKED threads roll back, not BUFN ones",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), DED(30, 3, BLOCKED) },
	  .order = { 1, 2, 3 },
	  .deadlocked = TRUE, .rollback = 30, .retry_once = FALSE,
	  .n_tasks = 3, .n_blocked = 3, .n_bufn = 1 },
	{ .what = "a lower BUFN thread does not stop the retry-once",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BUFN) }, .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 1 },

	/* ---- rule 3: what makes a task blocked ---- */
	{ .what = "one BLOCKED and one RUNNING dedicated thread: blocked",
	  .threads = { DED(10, 1, BLOCKED), DED(11, 1, RUNNING) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "one task blocked, one running",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, RUNNING) }, .order = { 1, 2 },
	  .deadlocked = FALSE, .n_tasks = 2, .n_blocked = 1, .n_bufn = ANY },
	{ .what = "a task in BUFN_WAIT is not blocked",
	  .threads = { DED(10, 1, BUFN_WAIT), DED(20, 2, BLOCKED) }, .order = { 1, 2 },
	  .deadlocked = FALSE, .n_tasks = 2, .n_blocked = 1, .n_bufn = ANY },
	{ .what = "BUFN_THROW, SPLIT_THROW, REMOVE_THROW are not blocked",
	  .threads = { DED(10, 1, BUFN_THROW), DED(20, 2, SPLIT_THROW),
		       DED(30, 3, REMOVE_THROW) },
	  .order = { 1, 2, 3 },
	  .deadlocked = FALSE, .n_tasks = 3, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "a busy pool thread unblocks its task",
	  .threads = { DED(10, 1, BLOCKED), POOL(50, RUNNING, 1) }, .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "a busy pool thread unblocks every task of its set",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BUFN), POOL(50, ALLOC, 1, 2) },
	  .order = { 1, 2 },
	  .deadlocked = FALSE, .n_tasks = 2, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "a busy pool thread of one task of two",
	  .threads = { DED(10, 1, BLOCKED), DED(20, 2, BLOCKED), POOL(50, RUNNING, 1) },
	  .order = { 1, 2 },
	  .deadlocked = FALSE, .n_tasks = 2, .n_blocked = 1, .n_bufn = ANY },
	{ .what = "a pool thread in BUFN_WAIT is busy",
	  .threads = { DED(10, 1, BUFN), POOL(50, BUFN_WAIT, 1) }, .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "a busy shuffle thread unblocks too",
	  .threads = { DED(10, 1, BLOCKED), SHUF(50, RUNNING, 1) }, .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "a BLOCKED pool thread does not unblock",
	  .threads = { DED(10, 1, BLOCKED), POOL(50, BLOCKED, 1) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = FALSE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "one busy and one blocked pool thread: the busy one unblocks",
	  .threads = { DED(10, 1, BLOCKED), POOL(50, BLOCKED, 1), POOL(51, RUNNING, 1) },
	  .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "a busy pool thread of a pool-only task unblocks nothing",
	  .threads = { DED(10, 1, BLOCKED), POOL(50, RUNNING, 5) }, .order = { 1, 5 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },

	/* ---- rule 1: BUFN-or-above through pool_blocked and the outside set ---- */
	{ .what = "pool_blocked dedicated thread: blocked, BUFN, nothing to do",
	  .threads = { DED_PB(10, 1, RUNNING) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 0, .split = 0,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "pool_blocked dedicated thread, busy pool thread",
	  .threads = { DED_PB(10, 1, RUNNING), POOL(50, RUNNING, 1) }, .order = { 1 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "outside: a RUNNING thread counts as BUFN",
	  .threads = { DED(10, 1, RUNNING) }, .order = { 1 }, .outside = { 10 },
	  .deadlocked = TRUE, .rollback = 0, .split = 0,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "outside: a BUFN_WAIT thread counts as BUFN",
	  .threads = { DED(10, 1, BUFN_WAIT) }, .order = { 1 }, .outside = { 3, 10 },
	  .deadlocked = TRUE, .rollback = 0, .split = 0,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "outside: a BLOCKED thread never counts as BUFN",
	  .threads = { DED(10, 1, BLOCKED) }, .order = { 1 }, .outside = { 10 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE, .split = 0,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 0 },
	{ .what = "outside: other ids do not matter",
	  .threads = { DED(10, 1, RUNNING) }, .order = { 1 }, .outside = { 9, 11, 99 },
	  .deadlocked = FALSE, .n_tasks = 1, .n_blocked = 0, .n_bufn = ANY },
	{ .what = "outside: a RUNNING pool thread named there does not unblock",
	  .threads = { DED(10, 1, BLOCKED), POOL(50, RUNNING, 1) }, .order = { 1 },
	  .outside = { 50 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE, .split = 0,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },

	/* ---- rule 6: split ---- */
	{ .what = "all tasks BUFN: the highest splits",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BUFN) }, .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 0, .split = 10,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "all tasks BUFN, priorities reversed",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BUFN) }, .order = { 2, 1 },
	  .deadlocked = TRUE, .rollback = 0, .split = 20,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "all tasks BUFN, split lowest",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BUFN) }, .order = { 1, 2 },
	  .opts = OPT_SPLIT_LOWEST,
	  .deadlocked = TRUE, .rollback = 0, .split = 20,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "one task BUFN: it splits",
	  .threads = { DED(10, 1, BUFN) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 0, .split = 10,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "same task BUFN twice: the larger thread id splits",
	  .threads = { DED(10, 1, BUFN), DED(12, 1, BUFN) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 0, .split = 12,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "same task BUFN twice, split lowest: the smaller id",
	  .threads = { DED(10, 1, BUFN), DED(12, 1, BUFN) }, .order = { 1 },
	  .opts = OPT_SPLIT_LOWEST,
	  .deadlocked = TRUE, .rollback = 0, .split = 10,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "BUFN only through pool_blocked and outside: no split",
	  .threads = { DED_PB(10, 1, RUNNING), DED(20, 2, RUNNING) }, .order = { 1, 2 },
	  .outside = { 20 },
	  .deadlocked = TRUE, .rollback = 0, .split = 0,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "only THREAD_BUFN threads split, not pool_blocked ones",
	  .threads = { DED_PB(10, 1, RUNNING), DED(20, 2, BUFN) }, .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 0, .split = 20,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "rollback and split in one check",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BUFN), DED(30, 3, BLOCKED),
		       DED(31, 3, BUFN) },
	  .order = { 1, 2, 3 },
	  .deadlocked = TRUE, .rollback = 30, .retry_once = TRUE, .split = 10,
	  .n_tasks = 3, .n_blocked = 3, .n_bufn = 3 },
	{ .what = "rollback and split in one check, split lowest",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BUFN), DED(30, 3, BLOCKED),
		       DED(31, 3, BUFN) },
	  .order = { 1, 2, 3 }, .opts = OPT_SPLIT_LOWEST,
	  .deadlocked = TRUE, .rollback = 30, .retry_once = TRUE, .split = 31,
	  .n_tasks = 3, .n_blocked = 3, .n_bufn = 3 },
	{ .what = "not every task BUFN: no split",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED) }, .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = TRUE, .split = 0,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 1 },
	{ .what = "a task whose pool threads are all BUFN is BUFN; the pool thread splits",
	  .threads = { DED(10, 1, BLOCKED), POOL(50, BUFN, 1) }, .order = { 1 },
	  .deadlocked = TRUE, .rollback = 10, .retry_once = TRUE, .split = 50,
	  .n_tasks = 1, .n_blocked = 1, .n_bufn = 1 },
	{ .what = "BUFN through its pool thread; the higher BUFN thread splits",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), POOL(50, BUFN, 2) },
	  .order = { 2, 1 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = TRUE, .split = 50,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "one of two pool threads BUFN: the task is not BUFN",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), POOL(50, BUFN, 2),
		       POOL(51, BLOCKED, 2) },
	  .order = { 1, 2 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = FALSE, .split = 0,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 1 },
	{ .what = "size quirk: a pool-only BUFN task makes the sizes equal",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), POOL(50, RUNNING, 3) },
	  .order = { 1, 2, 3 }, .outside = { 50 },
	  .deadlocked = TRUE, .rollback = 20, .retry_once = TRUE, .split = 10,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "size quirk, strict: the sets differ, no split",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BLOCKED), POOL(50, RUNNING, 3) },
	  .order = { 1, 2, 3 }, .outside = { 50 }, .opts = OPT_STRICT,
	  .deadlocked = TRUE, .rollback = 20, .retry_once = TRUE, .split = 0,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = ANY },
	{ .what = "strict: equal sets still split",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, BUFN) }, .order = { 1, 2 },
	  .opts = OPT_STRICT,
	  .deadlocked = TRUE, .rollback = 0, .split = 10,
	  .n_tasks = 2, .n_blocked = 2, .n_bufn = 2 },
	{ .what = "not deadlocked: a BUFN task alone does not split",
	  .threads = { DED(10, 1, BUFN), DED(20, 2, RUNNING) }, .order = { 1, 2 },
	  .deadlocked = FALSE, .n_tasks = 2, .n_blocked = 1, .n_bufn = ANY },
};

typedef struct {
	GsThreadView views[MAX_THREADS];
	const GsThreadView *ptrs[MAX_THREADS];
	guint n;
	GsThreadId outside[MAX_OUTSIDE];
	guint n_outside;
	GsTaskPriorities *prio;
	GsDeadlockOpts opts;
} Snapshot;

static void
snapshot_build(Snapshot *s, const DeadlockRow *row)
{
	const GsDeadlockOpts defaults = GS_DEADLOCK_OPTS_DEFAULT;

	s->n = 0;
	while (s->n < MAX_THREADS && row->threads[s->n].id != 0) {
		const ThreadSpec *spec = &row->threads[s->n];
		GsThreadView *v = &s->views[s->n];

		*v = (GsThreadView){
			.id = spec->id,
			.task = spec->is_pool ? GS_NO_TASK : spec->task,
			.state = spec->state,
			.alloc_kind = spec->kind,
			.is_pool = spec->is_pool,
			.shuffle = spec->shuffle,
			.pool_blocked = spec->pool_blocked,
			.pool_tasks = NULL,
		};
		if (spec->is_pool) {
			v->pool_tasks = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
			for (guint k = 0; k < G_N_ELEMENTS(spec->tasks) && spec->tasks[k] != 0; k++)
				g_array_append_val(v->pool_tasks, spec->tasks[k]);
		}
		s->ptrs[s->n] = v;
		s->n++;
	}
	s->n_outside = 0;
	while (s->n_outside < MAX_OUTSIDE && row->outside[s->n_outside] != 0) {
		s->outside[s->n_outside] = row->outside[s->n_outside];
		s->n_outside++;
	}
	s->prio = gs_task_priorities_new(GS_PRIORITY_FIFO);
	for (guint i = 0; i < MAX_TASKS && row->order[i] != 0; i++)
		ck_assert_int_eq(gs_task_priorities_get(s->prio, row->order[i]),
				 G_MAXINT64 - 1 - (gint64) i);
	s->opts = defaults;
	if (row->opts & OPT_SPLIT_LOWEST)
		s->opts.split_victim = GS_SPLIT_LOWEST;
	if (row->opts & OPT_NO_RETRY_ONCE)
		s->opts.retry_before_bufn = FALSE;
	if (row->opts & OPT_STRICT)
		s->opts.strict_all_bufn = TRUE;
	if (row->opts & OPT_BEST_TASK)
		s->opts.pool_priority = GS_POOL_PRIORITY_BEST_TASK;
}

static void
snapshot_clear(Snapshot *s)
{
	for (guint i = 0; i < s->n; i++)
		if (s->views[i].pool_tasks != NULL)
			g_array_unref(s->views[i].pool_tasks);
	gs_task_priorities_free(s->prio);
	s->n = 0;
}

static GsDeadlockVerdict
snapshot_check(Snapshot *s, GsDeadlockScratch *scratch)
{
	return gs_deadlock_check(s->ptrs, s->n, s->prio, &s->opts,
				 s->n_outside > 0 ? s->outside : NULL, s->n_outside, scratch);
}

/* The id of a verdict's thread, checking that it points into the snapshot. */
static GsThreadId
verdict_id(const Snapshot *s, const GsThreadView *v, const char *what)
{
	if (v == NULL)
		return 0;
	for (guint i = 0; i < s->n; i++)
		if (s->ptrs[i] == v)
			return v->id;
	ck_abort_msg("%s: the verdict points outside the snapshot", what);
	return 0;
}

static void
assert_verdict(const Snapshot *s, const DeadlockRow *row, const GsDeadlockVerdict *got)
{
	GsThreadId rollback = verdict_id(s, got->rollback, row->what);
	GsThreadId split = verdict_id(s, got->split, row->what);

	ck_assert_msg(got->deadlocked == row->deadlocked, "%s: deadlocked %d", row->what,
		      got->deadlocked);
	ck_assert_msg(rollback == row->rollback, "%s: rollback %" G_GUINT64_FORMAT ", want %"
		      G_GUINT64_FORMAT, row->what, rollback, row->rollback);
	if (row->rollback != 0)
		ck_assert_msg(!got->rollback_retry_once == !row->retry_once,
			      "%s: retry_once %d", row->what, got->rollback_retry_once);
	ck_assert_msg(split == row->split, "%s: split %" G_GUINT64_FORMAT ", want %"
		      G_GUINT64_FORMAT, row->what, split, row->split);
	ck_assert_msg(got->n_tasks == row->n_tasks, "%s: n_tasks %u", row->what, got->n_tasks);
	ck_assert_msg(got->n_blocked_tasks == row->n_blocked, "%s: n_blocked_tasks %u", row->what,
		      got->n_blocked_tasks);
	if (row->n_bufn != ANY)
		ck_assert_msg(got->n_bufn_tasks == (guint) row->n_bufn, "%s: n_bufn_tasks %u",
			      row->what, got->n_bufn_tasks);
}

/* The check decides; it changes no record. */
static void
assert_unchanged(const Snapshot *s, const DeadlockRow *row)
{
	for (guint i = 0; i < s->n; i++) {
		ck_assert_int_eq(s->views[i].state, row->threads[i].state);
		ck_assert_int_eq(s->views[i].pool_blocked, row->threads[i].pool_blocked);
	}
}

/* Every row, without a scratch and with a fresh one: the same verdict. */
START_TEST(test_deadlock_row)
{
	const DeadlockRow *row = &rows[_i];
	Snapshot s;
	GsDeadlockScratch *scratch = gs_deadlock_scratch_new();
	GsDeadlockVerdict a, b;

	snapshot_build(&s, row);
	a = snapshot_check(&s, NULL);
	assert_verdict(&s, row, &a);
	assert_unchanged(&s, row);
	b = snapshot_check(&s, scratch);
	assert_verdict(&s, row, &b);
	/* and again on the used scratch */
	b = snapshot_check(&s, scratch);
	assert_verdict(&s, row, &b);
	assert_unchanged(&s, row);
	gs_deadlock_scratch_free(scratch);
	snapshot_clear(&s);
}
END_TEST

/* The order of the records in the snapshot decides nothing. */
START_TEST(test_deadlock_row_reversed)
{
	const DeadlockRow *row = &rows[_i];
	Snapshot s;
	GsDeadlockVerdict v;

	snapshot_build(&s, row);
	for (guint i = 0; i < s.n / 2; i++) {
		const GsThreadView *t = s.ptrs[i];

		s.ptrs[i] = s.ptrs[s.n - 1 - i];
		s.ptrs[s.n - 1 - i] = t;
	}
	v = snapshot_check(&s, NULL);
	assert_verdict(&s, row, &v);
	snapshot_clear(&s);
}
END_TEST

/* One scratch reused across every row, forwards then backwards. */
START_TEST(test_deadlock_scratch_reuse)
{
	g_autoptr(GsDeadlockScratch) scratch = gs_deadlock_scratch_new();

	ck_assert_ptr_nonnull(scratch);
	for (int pass = 0; pass < 2; pass++) {
		for (gsize k = 0; k < G_N_ELEMENTS(rows); k++) {
			gsize i = pass == 0 ? k : G_N_ELEMENTS(rows) - 1 - k;
			Snapshot s;
			GsDeadlockVerdict v;

			snapshot_build(&s, &rows[i]);
			v = snapshot_check(&s, scratch);
			assert_verdict(&s, &rows[i], &v);
			snapshot_clear(&s);
		}
	}
}
END_TEST

/* ---- rule 1 directly ---- */

typedef struct {
	/* Inputs */
	GsThreadState state;
	gboolean is_pool;
	gboolean pool_blocked;
	gboolean outside; /* the outside set names the thread */
	/* Outputs */
	gboolean expected;
} BufnRow;

#define DEDI FALSE
#define POOLT TRUE

static const BufnRow bufn_rows[] = {
	/* state-machine view: only THREAD_BUFN */
	{ GS_THREAD_RUNNING, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_ALLOC, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_ALLOC_FREE, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_BLOCKED, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_BUFN_THROW, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_BUFN_WAIT, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_BUFN, DEDI, FALSE, FALSE, TRUE },
	{ GS_THREAD_SPLIT_THROW, DEDI, FALSE, FALSE, FALSE },
	{ GS_THREAD_REMOVE_THROW, DEDI, FALSE, FALSE, FALSE },
	/* named outside: everything but THREAD_BLOCKED */
	{ GS_THREAD_RUNNING, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_ALLOC, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_ALLOC_FREE, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_BLOCKED, DEDI, FALSE, TRUE, FALSE },
	{ GS_THREAD_BUFN_THROW, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_BUFN_WAIT, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_BUFN, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_SPLIT_THROW, DEDI, FALSE, TRUE, TRUE },
	{ GS_THREAD_REMOVE_THROW, DEDI, FALSE, TRUE, TRUE },
	/* pool_blocked (dedicated): always, checked first */
	{ GS_THREAD_RUNNING, DEDI, TRUE, FALSE, TRUE },
	{ GS_THREAD_ALLOC, DEDI, TRUE, FALSE, TRUE },
	{ GS_THREAD_BUFN_WAIT, DEDI, TRUE, FALSE, TRUE },
	{ GS_THREAD_BUFN, DEDI, TRUE, FALSE, TRUE },
	{ GS_THREAD_BLOCKED, DEDI, TRUE, FALSE, TRUE },
	/* pool threads: the same rules */
	{ GS_THREAD_RUNNING, POOLT, FALSE, FALSE, FALSE },
	{ GS_THREAD_BLOCKED, POOLT, FALSE, FALSE, FALSE },
	{ GS_THREAD_BUFN, POOLT, FALSE, FALSE, TRUE },
	{ GS_THREAD_RUNNING, POOLT, FALSE, TRUE, TRUE },
	{ GS_THREAD_BLOCKED, POOLT, FALSE, TRUE, FALSE },
	{ GS_THREAD_ALLOC, POOLT, FALSE, TRUE, TRUE },
};

START_TEST(test_bufn_or_above)
{
	const BufnRow *row = &bufn_rows[_i];
	static const GsThreadId with[] = { 3, 42, 77 };
	static const GsThreadId without[] = { 3, 41, 43, 77 };
	static const GsTaskId one = 1;
	GsThreadView v = {
		.id = 42,
		.task = row->is_pool ? GS_NO_TASK : 1,
		.state = row->state,
		.alloc_kind = GS_KIND_GPU,
		.is_pool = row->is_pool,
		.pool_blocked = row->pool_blocked,
	};
	gboolean got;

	if (row->is_pool) {
		v.pool_tasks = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
		g_array_append_val(v.pool_tasks, one);
	}
	if (row->outside) {
		got = gs_deadlock_is_bufn_or_above(&v, with, G_N_ELEMENTS(with));
	} else {
		got = gs_deadlock_is_bufn_or_above(&v, without, G_N_ELEMENTS(without));
		/* no set at all: the state-machine view says the same */
		ck_assert_int_eq(!gs_deadlock_is_bufn_or_above(&v, NULL, 0), !row->expected);
	}
	ck_assert_msg(!got == !row->expected, "%s %s pool_blocked=%d outside=%d: got %d",
		      row->is_pool ? "pool" : "dedicated", gs_thread_state_name(row->state),
		      row->pool_blocked, row->outside, got);
	if (v.pool_tasks != NULL)
		g_array_unref(v.pool_tasks);
}
END_TEST

/* A one-element outside set, at either end of the search. */
START_TEST(test_bufn_or_above_outside_edges)
{
	static const GsThreadId first[] = { 5, 6, 7, 8 };
	GsThreadView v = { .id = 5, .task = 1, .state = GS_THREAD_RUNNING };

	ck_assert(gs_deadlock_is_bufn_or_above(&v, first, 1));
	ck_assert(gs_deadlock_is_bufn_or_above(&v, first, 4));
	v.id = 8;
	ck_assert(gs_deadlock_is_bufn_or_above(&v, first, 4));
	ck_assert(!gs_deadlock_is_bufn_or_above(&v, first, 3));
	v.id = 9;
	ck_assert(!gs_deadlock_is_bufn_or_above(&v, first, 4));
	v.id = 4;
	ck_assert(!gs_deadlock_is_bufn_or_above(&v, first, 4));
}
END_TEST

Suite *gs_test_suite_deadlock(void);

Suite *
gs_test_suite_deadlock(void)
{
	Suite *s = suite_create("deadlock");
	TCase *tc;

	tc = tcase_create("check");
	tcase_add_loop_test(tc, test_deadlock_row, 0, G_N_ELEMENTS(rows));
	tcase_add_loop_test(tc, test_deadlock_row_reversed, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_deadlock_scratch_reuse);
	suite_add_tcase(s, tc);

	tc = tcase_create("bufn-or-above");
	tcase_add_loop_test(tc, test_bufn_or_above, 0, G_N_ELEMENTS(bufn_rows));
	tcase_add_test(tc, test_bufn_or_above_outside_edges);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(gs_test_suite_deadlock());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
