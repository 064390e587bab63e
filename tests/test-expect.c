/*
 * gpusim tests: the expectation checker (src/report/expect.h) on one result and
 * event log made by hand. A table of rows, one expectation each, covers every
 * operator, every key family (outcome, makespan, totals, tasks, threads, at a
 * thread's state, at a tier's used and charged bytes), passing and failing,
 * with the exact sentence of each failure. Further tests check counting,
 * order, the last-row rule for threads and a missing event log.
 */
#include "config.h"

#include <string.h>

#include "testlib.h"
#include "report/expect.h"
#include "report/report.h"

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define TIB (GIB * 1024)
#define US ((GsTime) 1000)
#define MS (US * 1000)

/* ---- the run under test ---- */

static GsTaskResult *
add_task(GsResult *r, const char *id, GsOutcome outcome, guint attempts)
{
	GsTaskResult *t = gs_result_add_task(r, id);

	t->outcome = outcome;
	t->attempts = attempts;
	return t;
}

#define BIT(state) (1u << GS_THREAD_##state)

static GsThreadResult *
add_thread(GsResult *r, const char *name, const char *task, guint32 reached,
	   GsThreadState final_state, guint n_exc, ...)
{
	/* A row of no task row, pointing at a task id of its own. */
	GsThreadResult *t = gs_result_add_thread(r, name, NULL);
	va_list args;

	t->task = task != NULL ? g_string_chunk_insert(r->strings, task) : NULL;
	t->pool = FALSE;
	t->reached = reached;
	t->final_state = final_state;
	t->exceptions = g_array_new(FALSE, TRUE, sizeof(GsSeenException));
	va_start(args, n_exc);
	for (guint i = 0; i < n_exc; i++) {
		GsSeenException seen = {.time = (GsTime) i, .handled = TRUE};

		seen.exception = va_arg(args, GsException);
		g_strlcpy(seen.op, "0", sizeof seen.op);
		g_array_append_val(t->exceptions, seen);
	}
	va_end(args);
	return t;
}

static void
add_sample(GsResult *r, GsTime time, gint64 gpu_used, gint64 gpu_charged, gint64 host_used,
	   gint64 host_charged)
{
	GsSample s = {.time = time};

	s.used[GS_TIER_GPU] = gpu_used;
	s.charged[GS_TIER_GPU] = gpu_charged;
	s.used[GS_TIER_HOST] = host_used;
	s.charged[GS_TIER_HOST] = host_charged;
	g_array_append_val(r->timeline, s);
}

static void
add_view(GsResult *r, GsTime time, const char *thread, const char *name, GsTier tier,
	 gboolean held, gint64 size, gint64 allocated, gint64 peak)
{
	GsReservationView v = {.time = time, .thread = thread, .name = name, .tier = tier,
			       .held = held, .size = size, .allocated = allocated, .peak = peak};

	g_array_append_val(r->reservations, v);
}

/*
 * Tasks A (completed), B (completed on its second attempt, 2 retries) and
 * "x.y" (failed); B.0 has a row per attempt, the second one blocked once.
 */
static GsResult *
make_result(void)
{
	GsResult *r = gs_result_new();
	GsTaskResult *t;

	r->outcome = GS_OUTCOME_COMPLETED;
	r->makespan_ns = 3500 * US;
	r->totals.tasks = 3;
	r->totals.tasks_completed = 2;
	r->totals.tasks_failed = 1;
	r->totals.task_attempts = 4;
	r->totals.retries = 2;
	r->totals.splits = 0;
	r->totals.blocked_ns = 1500 * US;
	r->totals.lost_ns = 500 * US;
	r->totals.spill_block_ns = 10;
	r->totals.semaphore_wait_ns = 20;
	r->totals.deadlocks_busted = 1;
	r->totals.deadlocks_unresolved = 0;
	r->totals.spilled_gpu_to_host = MIB;
	r->totals.spilled_host_to_disk = 30;
	r->totals.unspilled_host_to_gpu = 40;
	r->totals.unspilled_disk_to_host = 50;

	t = add_task(r, "A", GS_OUTCOME_COMPLETED, 1);
	t->end_ns = 2000 * US;
	t->max_footprint = 6 * MIB;
	t = add_task(r, "B", GS_OUTCOME_COMPLETED, 2);
	t->start_ns = 1000 * US;
	t->end_ns = 3500 * US;
	t->retries = 2;
	t->blocked_ns = 1500 * US;
	t->lost_ns = 500 * US;
	t->max_footprint = 5 * MIB;
	add_task(r, "x.y", GS_OUTCOME_FAILED, 1);

	add_thread(r, "A.0", "A", BIT(RUNNING) | BIT(ALLOC), GS_THREAD_UNKNOWN, 0);
	add_thread(r, "B.0", "B", BIT(RUNNING) | BIT(ALLOC) | BIT(BUFN), GS_THREAD_RUNNING, 1,
		   GS_EXC_GPU_OOM);
	add_thread(r, "B.0", "B", BIT(RUNNING) | BIT(ALLOC) | BIT(BLOCKED) | BIT(BUFN_THROW),
		   GS_THREAD_UNKNOWN, 2, GS_EXC_GPU_RETRY_OOM, GS_EXC_GPU_SPLIT_AND_RETRY_OOM);

	add_sample(r, 0, 0, 0, 0, 0);
	add_sample(r, 1000 * US, 6 * MIB, 7 * MIB, 0, 2 * MIB);
	add_sample(r, 1500 * US, 11 * MIB, 12 * MIB, MIB, 2 * MIB);
	add_sample(r, 2000 * US, 5 * MIB, 5 * MIB, 0, 0);
	/* A.0's GPU reservation r: made, allocated in, credited past 0 by a free, released. */
	add_view(r, 1000 * US, "A.0", "r", GS_TIER_GPU, TRUE, 2 * MIB, 0, 0);
	add_view(r, 1200 * US, "A.0", "r", GS_TIER_GPU, TRUE, 2 * MIB, 3 * MIB, 3 * MIB);
	add_view(r, 1500 * US, "B.0", "h", GS_TIER_HOST, TRUE, MIB, 0, 0);
	add_view(r, 1600 * US, "A.0", "r", GS_TIER_GPU, TRUE, 2 * MIB, -MIB, 3 * MIB);
	add_view(r, 2000 * US, "A.0", "r", GS_TIER_GPU, FALSE, 2 * MIB, -MIB, 3 * MIB);
	return r;
}

static void
log_state(GsEventLog *log, GsTime time, const char *thread, GsThreadState from, GsThreadState to)
{
	GsLogEntry e = {.kind = GS_LOG_STATE, .time = time, .thread = thread, .from = from,
			.to = to};

	gs_event_log_add(&e, log);
}

static void
log_bytes(GsEventLog *log, GsLogKind kind, GsTime time, const char *thread, gint64 bytes,
	  GsTier tier, GsTier to_tier, gboolean ok)
{
	GsLogEntry e = {.kind = kind, .time = time, .thread = thread, .bytes = bytes,
			.tier = tier, .to_tier = to_tier, .ok = ok};

	gs_event_log_add(&e, log);
}

static void
log_value(GsEventLog *log, GsTime time, const char *thread, gint64 value, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_VALUE, .time = time, .thread = thread, .buf = "v",
			.bytes = value, .what = what};

	gs_event_log_add(&e, log);
}

/* A.0's host memory in @pool: allocated in @tier (the host), or spilled from it to @tier. */
static void
log_pool(GsEventLog *log, GsLogKind kind, GsTime time, gint64 bytes, GsTier tier,
	 const char *pool)
{
	GsLogEntry e = {.kind = kind, .time = time, .thread = "A.0", .bytes = bytes,
			.tier = kind == GS_LOG_SPILL ? GS_TIER_HOST : tier, .to_tier = tier,
			.ok = TRUE, .pool = pool};

	gs_event_log_add(&e, log);
}

static GsEventLog *
make_log(void)
{
	GsEventLog *log = gs_event_log_new();
	GsLogEntry throw = {.kind = GS_LOG_THROW, .time = 1500 * US, .thread = "B.0",
			    .exception = GS_EXC_GPU_RETRY_OOM};

	log_state(log, 0, "A.0", GS_THREAD_UNKNOWN, GS_THREAD_RUNNING);
	log_state(log, 0, "A.0", GS_THREAD_RUNNING, GS_THREAD_ALLOC);
	log_state(log, 0, "A.0", GS_THREAD_ALLOC, GS_THREAD_RUNNING);
	log_state(log, 1000 * US, "B.0", GS_THREAD_UNKNOWN, GS_THREAD_RUNNING);
	log_state(log, 1500 * US, "B.0", GS_THREAD_RUNNING, GS_THREAD_ALLOC);
	log_state(log, 1500 * US, "B.0", GS_THREAD_ALLOC, GS_THREAD_BLOCKED);
	gs_event_log_add(&throw, log);
	/* What the tasks hold: A 6 MiB (one attempt failed); B 5 MiB, 2 of them spilled, 3 freed. */
	log_bytes(log, GS_LOG_ALLOC, 0, "A.0", 6 * MIB, GS_TIER_GPU, GS_TIER_GPU, TRUE);
	log_bytes(log, GS_LOG_ALLOC, 0, "A.0", MIB, GS_TIER_GPU, GS_TIER_GPU, FALSE);
	log_bytes(log, GS_LOG_ALLOC, 1000 * US, "B.0", 5 * MIB, GS_TIER_GPU, GS_TIER_GPU, TRUE);
	log_bytes(log, GS_LOG_SPILL, 1200 * US, "B.0", 2 * MIB, GS_TIER_GPU, GS_TIER_HOST, TRUE);
	log_bytes(log, GS_LOG_SPILL, 1300 * US, "B.0", MIB, GS_TIER_GPU, GS_TIER_HOST, FALSE);
	log_bytes(log, GS_LOG_FREE, 2000 * US, "B.0", 3 * MIB, GS_TIER_GPU, GS_TIER_GPU, TRUE);
	/* B.0's value v: added to, put back, then checkpointed (which is no change). */
	log_value(log, 1100 * US, "B.0", 10, "add");
	log_value(log, 1500 * US, "B.0", 5, "restore");
	log_value(log, 1600 * US, "B.0", 99, "checkpoint");
	/* A's host memory beside a pinned pool: 4 KiB pinned, spilled; then 1 KiB non-pinned. */
	log_pool(log, GS_LOG_ALLOC, 100 * US, 4 * KIB, GS_TIER_HOST, "pinned");
	log_pool(log, GS_LOG_SPILL, 1200 * US, 4 * KIB, GS_TIER_DISK, "pinned");
	log_pool(log, GS_LOG_ALLOC, 1300 * US, KIB, GS_TIER_HOST, "non_pinned");
	log_state(log, 2000 * US, "A.0", GS_THREAD_RUNNING, GS_THREAD_UNKNOWN);
	log_state(log, 2000 * US, "B.0", GS_THREAD_BLOCKED, GS_THREAD_RUNNING);
	log_state(log, 3500 * US, "B.0", GS_THREAD_RUNNING, GS_THREAD_UNKNOWN);
	return log;
}

/* ---- adding expectations ---- */

static void
expect_value(GsWorkload *w, const char *key, const char *text, GsCmpOp op, gint64 value)
{
	GsExpectValue *v = g_new0(GsExpectValue, 1);

	v->key = g_strdup(key);
	v->text = g_strdup(text);
	v->cmp = (GsCmp){op, value};
	g_ptr_array_add(w->expect.values, v);
}

static GsExpectThread *
expect_thread(GsWorkload *w, const char *thread)
{
	GsExpectThread *t = g_new0(GsExpectThread, 1);

	t->thread = g_strdup(thread);
	t->reached = g_array_new(FALSE, FALSE, sizeof(GsThreadState));
	g_ptr_array_add(w->expect.threads, t);
	return t;
}

static void
expect_at_state(GsWorkload *w, GsTime time, const char *thread, GsThreadState state)
{
	GsExpectAt *a = g_new0(GsExpectAt, 1);

	a->time = time;
	a->thread = g_strdup(thread);
	a->state = state;
	g_ptr_array_add(w->expect.at, a);
}

static void
expect_at_tier(GsWorkload *w, GsTime time, GsTier tier, GsTierMeasure measure, GsCmpOp op,
	       gint64 bytes)
{
	GsExpectAt *a = g_new0(GsExpectAt, 1);

	a->time = time;
	a->has_tier = TRUE;
	a->tier = tier;
	a->measure = measure;
	a->bytes = (GsCmp){op, bytes};
	g_ptr_array_add(w->expect.at, a);
}

/* ---- the table ---- */

typedef enum {
	ROW_VALUE,    /* .key .op .value, or .text for outcomes */
	ROW_REACHED,  /* .key = thread, .states */
	ROW_THREW,    /* .key = thread, .excs */
	ROW_FINAL,    /* .key = thread, .states[0] */
	ROW_NEVER,    /* .key = thread, .states never entered, .excs never thrown */
	ROW_AT_STATE, /* .time .key = thread .states[0] */
	ROW_AT_TIER,  /* .time .tier .measure .op .value */
	ROW_AT_TASK,  /* .time .key = task .tier .op .value */
	ROW_VALUES,   /* .key = thread, its value v starting at .time, .op .value */
	ROW_AT_RES,   /* .time .key = thread .text = reservation .res .tier .op .value */
} RowKind;

#define MAX_LIST 4
#define END_OF_LIST (-1)

typedef struct {
	RowKind kind;
	const char *key;
	const char *text;
	GsCmpOp op;
	gint64 value;
	int states[MAX_LIST]; /* GsThreadState, ended by END_OF_LIST when shorter */
	int excs[MAX_LIST];   /* GsException, ended by END_OF_LIST when shorter */
	GsTime time;
	GsTier tier;
	GsTierMeasure measure;
	GsReservationMeasure res;
	const char *failure;  /* the sentence, NULL when the expectation holds */
} Row;

#define EQ GS_CMP_EQ
#define NE GS_CMP_NE
#define LT GS_CMP_LT
#define LE GS_CMP_LE
#define GT GS_CMP_GT
#define GE GS_CMP_GE
#define ST(s) GS_THREAD_##s
#define EX(e) GS_EXC_##e
#define VAL(k, t, o, v) .kind = ROW_VALUE, .key = k, .text = t, .op = o, .value = v

static const Row rows[] = {
	/* outcome */
	{VAL("outcome", "completed", EQ, 0)},
	{VAL("outcome", "failed", EQ, 0),
	 .failure = "outcome: expected failed, observed completed"},
	{VAL("outcome", "deadlock", NE, 0)},
	{VAL("outcome", "completed", NE, 0),
	 .failure = "outcome: expected != completed, observed completed"},
	/* makespan: every operator */
	{VAL("makespan", NULL, EQ, 3500 * US)},
	{VAL("makespan", NULL, EQ, 3 * MS),
	 .failure = "makespan: expected == 3000000 ns (3.00 ms), observed 3500000 ns (3.50 ms)"},
	{VAL("makespan", NULL, NE, 0)},
	{VAL("makespan", NULL, NE, 3500 * US),
	 .failure = "makespan: expected != 3500000 ns (3.50 ms), observed 3500000 ns (3.50 ms)"},
	{VAL("makespan", NULL, LT, 4 * MS)},
	{VAL("makespan", NULL, LT, 3500 * US),
	 .failure = "makespan: expected < 3500000 ns (3.50 ms), observed 3500000 ns (3.50 ms)"},
	{VAL("makespan", NULL, LE, 3500 * US)},
	{VAL("makespan", NULL, LE, 2 * MS),
	 .failure = "makespan: expected <= 2000000 ns (2.00 ms), observed 3500000 ns (3.50 ms)"},
	{VAL("makespan", NULL, GT, 3 * MS)},
	{VAL("makespan", NULL, GT, 3500 * US),
	 .failure = "makespan: expected > 3500000 ns (3.50 ms), observed 3500000 ns (3.50 ms)"},
	{VAL("makespan", NULL, GE, 3500 * US)},
	{VAL("makespan_ns", NULL, GE, 4 * MS),
	 .failure = "makespan_ns: expected >= 4000000 ns (4.00 ms), observed 3500000 ns (3.50 ms)"},
	/* totals */
	{VAL("totals.tasks", NULL, EQ, 3)},
	{VAL("totals.tasks_completed", NULL, EQ, 2)},
	{VAL("totals.tasks_failed", NULL, EQ, 0),
	 .failure = "totals.tasks_failed: expected == 0, observed 1"},
	{VAL("totals.task_attempts", NULL, EQ, 4)},
	{VAL("totals.retries", NULL, EQ, 2)},
	{VAL("totals.retries", NULL, EQ, 1),
	 .failure = "totals.retries: expected == 1, observed 2"},
	{VAL("totals.splits", NULL, EQ, 0)},
	{VAL("totals.deadlocks_busted", NULL, GE, 1)},
	{VAL("totals.deadlocks_unresolved", NULL, GT, 0),
	 .failure = "totals.deadlocks_unresolved: expected > 0, observed 0"},
	{VAL("totals.blocked_ns", NULL, EQ, 1500 * US)},
	{VAL("totals.blocked", NULL, GT, 2 * MS),
	 .failure = "totals.blocked: expected > 2000000 ns (2.00 ms), observed 1500000 ns (1.50 ms)"},
	{VAL("totals.lost_ns", NULL, EQ, 500 * US)},
	{VAL("totals.lost", NULL, LT, 1 * MS)},
	/* fails: 500 us is not below 1 us */
	{VAL("totals.lost", NULL, LT, 999),
	 .failure = "totals.lost: expected < 999 ns, observed 500000 ns (500 us)"},
	{VAL("totals.spill_block_ns", NULL, EQ, 10)},
	{VAL("totals.semaphore_wait", NULL, EQ, 20)},
	{VAL("totals.spilled_bytes.gpu_to_host", NULL, EQ, MIB)},
	{VAL("totals.spilled_gpu_to_host", NULL, LT, MIB),
	 .failure = "totals.spilled_gpu_to_host: expected < 1048576 B (1.0 MiB), "
		    "observed 1048576 B (1.0 MiB)"},
	{VAL("totals.spilled_bytes.host_to_disk", NULL, EQ, 30)},
	{VAL("totals.unspilled_bytes.host_to_gpu", NULL, EQ, 40)},
	{VAL("totals.unspilled_disk_to_host", NULL, EQ, 51),
	 .failure = "totals.unspilled_disk_to_host: expected == 51 B, observed 50 B"},
	{VAL("totals.colour", NULL, EQ, 0), .failure = "totals.colour: no such total"},
	/* tasks */
	{VAL("tasks.B.outcome", "completed", EQ, 0)},
	{VAL("tasks.A.outcome", "failed", EQ, 0),
	 .failure = "tasks.A.outcome: expected failed, observed completed"},
	{VAL("tasks.x.y.outcome", "failed", EQ, 0)},
	{VAL("tasks.B.attempts", NULL, EQ, 2)},
	{VAL("tasks.A.attempts", NULL, GT, 1),
	 .failure = "tasks.A.attempts: expected > 1, observed 1"},
	{VAL("tasks.B.retries", NULL, EQ, 2)},
	{VAL("tasks.B.retries", NULL, EQ, 1),
	 .failure = "tasks.B.retries: expected == 1, observed 2"},
	{VAL("tasks.B.splits", NULL, EQ, 0)},
	{VAL("tasks.B.blocked_ns", NULL, EQ, 1500 * US)},
	{VAL("tasks.A.blocked", NULL, GT, 0),
	 .failure = "tasks.A.blocked: expected > 0 ns, observed 0 ns"},
	{VAL("tasks.B.lost_ns", NULL, LE, 500 * US)},
	{VAL("tasks.B.max_footprint", NULL, EQ, 5 * MIB)},
	{VAL("tasks.A.max_footprint", NULL, LE, 5 * MIB),
	 .failure = "tasks.A.max_footprint: expected <= 5242880 B (5.0 MiB), "
		    "observed 6291456 B (6.0 MiB)"},
	{VAL("tasks.B.start_ns", NULL, EQ, 1000 * US)},
	{VAL("tasks.B.end", NULL, EQ, 3500 * US)},
	{VAL("tasks.Z.retries", NULL, EQ, 0), .failure = "tasks.Z.retries: no task Z in the run"},
	{VAL("tasks.B.colour", NULL, EQ, 0), .failure = "tasks.B.colour: no such task field"},
	{VAL("tasks.B", NULL, EQ, 0), .failure = "tasks.B: not a task field (tasks.ID.FIELD)"},
	{VAL("bogus", NULL, EQ, 0), .failure = "bogus: unknown expectation"},
	/* threads: the last row named B.0 counts */
	{.kind = ROW_REACHED, .key = "B.0", .states = {ST(BLOCKED), ST(RUNNING), END_OF_LIST}},
	{.kind = ROW_REACHED, .key = "B.0", .states = {ST(BLOCKED), ST(BUFN), ST(SPLIT_THROW), END_OF_LIST},
	 .failure = "threads.B.0.reached: expected [THREAD_BLOCKED, THREAD_BUFN, THREAD_SPLIT_THROW], "
		    "never reached [THREAD_BUFN, THREAD_SPLIT_THROW]; observed [THREAD_RUNNING, "
		    "THREAD_ALLOC, THREAD_BLOCKED, THREAD_BUFN_THROW]"},
	{.kind = ROW_REACHED, .key = "A.0", .states = {ST(ALLOC), END_OF_LIST}},
	{.kind = ROW_REACHED, .key = "nobody", .states = {ST(ALLOC), END_OF_LIST},
	 .failure = "threads.nobody: no thread nobody in the run"},
	{.kind = ROW_THREW, .key = "B.0", .excs = {EX(GPU_RETRY_OOM), EX(GPU_SPLIT_AND_RETRY_OOM), END_OF_LIST}},
	{.kind = ROW_THREW, .key = "B.0", .excs = {EX(GPU_RETRY_OOM), END_OF_LIST},
	 .failure = "threads.B.0.threw: expected [GpuRetryOOM], "
		    "observed [GpuRetryOOM, GpuSplitAndRetryOOM]"},
	{.kind = ROW_THREW, .key = "B.0", .excs = {EX(GPU_SPLIT_AND_RETRY_OOM), EX(GPU_RETRY_OOM), END_OF_LIST},
	 .failure = "threads.B.0.threw: expected [GpuSplitAndRetryOOM, GpuRetryOOM], "
		    "observed [GpuRetryOOM, GpuSplitAndRetryOOM]"},
	{.kind = ROW_THREW, .key = "A.0", .excs = {END_OF_LIST}},
	{.kind = ROW_THREW, .key = "A.0", .excs = {EX(GPU_OOM), END_OF_LIST},
	 .failure = "threads.A.0.threw: expected [GpuOOM], observed []"},
	{.kind = ROW_NEVER, .key = "B.0", .states = {ST(BUFN), ST(SPLIT_THROW), END_OF_LIST},
	 .excs = {EX(GPU_OOM), EX(CUDF_EXCEPTION), END_OF_LIST}},
	{.kind = ROW_NEVER, .key = "B.0", .states = {ST(BUFN), ST(BLOCKED), END_OF_LIST},
	 .excs = {END_OF_LIST},
	 .failure = "threads.B.0.never: entered THREAD_BLOCKED"},
	{.kind = ROW_NEVER, .key = "B.0", .states = {END_OF_LIST},
	 .excs = {EX(GPU_SPLIT_AND_RETRY_OOM), END_OF_LIST},
	 .failure = "threads.B.0.never: threw GpuSplitAndRetryOOM 1 time"},
	{.kind = ROW_NEVER, .key = "B.0", .states = {ST(BLOCKED), END_OF_LIST},
	 .excs = {EX(GPU_RETRY_OOM), END_OF_LIST},
	 .failure = "threads.B.0.never: entered THREAD_BLOCKED; threw GpuRetryOOM 1 time"},
	/* threads.NAME.values: the last value entry, else the start */
	{.kind = ROW_VALUES, .key = "B.0", .op = EQ, .value = 5},
	{.kind = ROW_VALUES, .key = "B.0", .op = GT, .value = 5,
	 .failure = "threads.B.0.values.v: expected > 5, observed 5"},
	{.kind = ROW_VALUES, .key = "A.0", .time = -3, .op = EQ, .value = -3},
	{.kind = ROW_VALUES, .key = "A.0", .time = 7, .op = LE, .value = 6,
	 .failure = "threads.A.0.values.v: expected <= 6, observed 7"},
	{.kind = ROW_FINAL, .key = "B.0", .states = {ST(UNKNOWN)}},
	{.kind = ROW_FINAL, .key = "B.0", .states = {ST(RUNNING)},
	 .failure = "threads.B.0.final_state: expected THREAD_RUNNING, observed UNKNOWN"},
	/* at: a thread's state after every event of the instant */
	{.kind = ROW_AT_STATE, .key = "B.0", .time = 1500 * US, .states = {ST(BLOCKED)}},
	{.kind = ROW_AT_STATE, .key = "B.0", .time = 1500 * US - 1, .states = {ST(RUNNING)}},
	{.kind = ROW_AT_STATE, .key = "B.0", .time = 1500 * US, .states = {ST(ALLOC)},
	 .failure = "at[0]: B.0 at 1500000 ns: expected THREAD_ALLOC, observed THREAD_BLOCKED"},
	{.kind = ROW_AT_STATE, .key = "B.0", .time = 999 * US, .states = {ST(UNKNOWN)}},
	{.kind = ROW_AT_STATE, .key = "A.0", .time = 0, .states = {ST(RUNNING)}},
	{.kind = ROW_AT_STATE, .key = "A.0", .time = 2 * MS, .states = {ST(UNKNOWN)}},
	{.kind = ROW_AT_STATE, .key = "B.0", .time = 10 * MS, .states = {ST(BLOCKED)},
	 .failure = "at[0]: B.0 at 10000000 ns: expected THREAD_BLOCKED, observed UNKNOWN"},
	{.kind = ROW_AT_STATE, .key = "ghost", .time = 1 * MS, .states = {ST(UNKNOWN)}},
	{.kind = ROW_AT_STATE, .key = "ghost", .time = 1 * MS, .states = {ST(RUNNING)},
	 .failure = "at[0]: ghost at 1000000 ns: expected THREAD_RUNNING, observed UNKNOWN"},
	/* at: a tier's bytes, from the last sample at or before the time */
	{.kind = ROW_AT_TIER, .time = 1200 * US, .tier = GS_TIER_GPU, .op = EQ, .value = 6 * MIB},
	{.kind = ROW_AT_TIER, .time = 1200 * US, .tier = GS_TIER_GPU, .measure = GS_MEASURE_CHARGED, .op = EQ,
	 .value = 7 * MIB},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_GPU, .op = GE, .value = 12 * MIB,
	 .failure = "at[0]: gpu used at 1500000 ns: expected >= 12582912 B (12.0 MiB), "
		    "observed 11534336 B (11.0 MiB)"},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_GPU, .measure = GS_MEASURE_CHARGED, .op = NE,
	 .value = 12 * MIB,
	 .failure = "at[0]: gpu charged at 1500000 ns: expected != 12582912 B (12.0 MiB), "
		    "observed 12582912 B (12.0 MiB)"},
	{.kind = ROW_AT_TIER, .time = 999 * US, .tier = GS_TIER_GPU, .op = EQ, .value = 0},
	{.kind = ROW_AT_TIER, .time = -1, .tier = GS_TIER_HOST, .measure = GS_MEASURE_CHARGED, .op = EQ, .value = 0},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_HOST, .op = LT, .value = MIB,
	 .failure = "at[0]: host used at 1500000 ns: expected < 1048576 B (1.0 MiB), "
		    "observed 1048576 B (1.0 MiB)"},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_HOST, .measure = GS_MEASURE_CHARGED, .op = EQ,
	 .value = 2 * MIB},
	/* a space's available memory and its reservation limit (4 GiB host, 0.9) */
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_AVAILABLE, .op = EQ, .value = 4 * GIB - 2 * MIB},
	{.kind = ROW_AT_TIER, .time = -1, .tier = GS_TIER_HOST, .measure = GS_MEASURE_AVAILABLE,
	 .op = EQ, .value = 4 * GIB},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_AVAILABLE, .op = NE, .value = 4 * GIB - 2 * MIB,
	 .failure = "at[0]: host available at 1500000 ns: expected != 4292870144 B (4.0 GiB), "
		    "observed 4292870144 B (4.0 GiB)"},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_MAX_MEMORY, .op = EQ, .value = 3865470566},
	{.kind = ROW_AT_TIER, .time = 1500 * US, .tier = GS_TIER_DISK,
	 .measure = GS_MEASURE_MAX_MEMORY, .op = EQ, .value = TIB},
	{.kind = ROW_AT_TIER, .time = 50 * MS, .tier = GS_TIER_GPU, .op = EQ, .value = 5 * MIB},
	{.kind = ROW_AT_TIER, .time = 50 * MS, .tier = GS_TIER_DISK, .op = GT, .value = 0,
	 .failure = "at[0]: disk used at 50000000 ns: expected > 0 B, observed 0 B"},
	/* a tier's peak charged bytes and its held reservations, from the reservations' views */
	{.kind = ROW_AT_TIER, .time = 1600 * US, .tier = GS_TIER_GPU,
	 .measure = GS_MEASURE_PEAK_CHARGED, .op = EQ, .value = 12 * MIB},
	{.kind = ROW_AT_TIER, .time = 2500 * US, .tier = GS_TIER_GPU,
	 .measure = GS_MEASURE_PEAK_CHARGED, .op = EQ, .value = 12 * MIB},
	{.kind = ROW_AT_TIER, .time = 1100 * US, .tier = GS_TIER_GPU,
	 .measure = GS_MEASURE_PEAK_CHARGED, .op = GT, .value = 7 * MIB,
	 .failure = "at[0]: gpu peak_charged at 1100000 ns: expected > 7340032 B (7.0 MiB), "
		    "observed 7340032 B (7.0 MiB)"},
	{.kind = ROW_AT_TIER, .time = 1100 * US, .tier = GS_TIER_GPU,
	 .measure = GS_MEASURE_RESERVED, .op = EQ, .value = 2 * MIB},
	{.kind = ROW_AT_TIER, .time = 2500 * US, .tier = GS_TIER_GPU,
	 .measure = GS_MEASURE_RESERVED, .op = EQ, .value = 0},
	{.kind = ROW_AT_TIER, .time = 1600 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_RESERVATIONS, .op = EQ, .value = 1},
	{.kind = ROW_AT_TIER, .time = 2500 * US, .tier = GS_TIER_GPU,
	 .measure = GS_MEASURE_RESERVATIONS, .op = EQ, .value = 1,
	 .failure = "at[0]: gpu reservations at 2500000 ns: expected == 1, observed 0"},
	/* at: a thread's reservation, from its last view at or before the time */
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 500 * US, .res = GS_RES_SIZE,
	 .op = EQ, .value = 0},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 1100 * US, .res = GS_RES_SIZE,
	 .op = EQ, .value = 2 * MIB},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 1300 * US,
	 .res = GS_RES_ALLOCATED, .op = EQ, .value = 3 * MIB},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 1700 * US,
	 .res = GS_RES_ALLOCATED, .op = EQ, .value = 0},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 1700 * US, .res = GS_RES_PEAK,
	 .op = EQ, .value = 3 * MIB},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 2500 * US, .res = GS_RES_PEAK,
	 .op = EQ, .value = 0},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 1100 * US, .res = GS_RES_DEVICE,
	 .op = EQ, .value = 0},
	{.kind = ROW_AT_RES, .key = "A.0", .text = "r", .time = 2500 * US, .res = GS_RES_DEVICE,
	 .op = EQ, .value = 0,
	 .failure = "at[0]: A.0's reservation r device at 2500000 ns: expected == 0, observed -1"},
	{.kind = ROW_AT_RES, .key = "B.0", .text = "h", .time = 1500 * US,
	 .res = GS_RES_AVAILABLE, .op = EQ, .value = 4 * GIB - MIB},
	{.kind = ROW_AT_RES, .key = "B.0", .text = "x", .time = 1500 * US, .tier = GS_TIER_HOST,
	 .res = GS_RES_AVAILABLE, .op = EQ, .value = 4 * GIB - 2 * MIB},
	{.kind = ROW_AT_RES, .key = "B.0", .text = "h", .time = 1500 * US,
	 .res = GS_RES_AVAILABLE, .op = LT, .value = 4 * GIB - MIB,
	 .failure = "at[0]: B.0's reservation h available at 1500000 ns: expected < 4293918720 B "
		    "(4.0 GiB), observed 4293918720 B (4.0 GiB)"},
	/* at: a task's bytes, replayed from the log's allocations, frees and copies */
	{.kind = ROW_AT_TASK, .key = "A", .time = 500 * US, .tier = GS_TIER_GPU, .op = EQ,
	 .value = 6 * MIB},
	{.kind = ROW_AT_TASK, .key = "B", .time = 999 * US, .tier = GS_TIER_GPU, .op = EQ, .value = 0},
	{.kind = ROW_AT_TASK, .key = "B", .time = 1100 * US, .tier = GS_TIER_GPU, .op = EQ,
	 .value = 5 * MIB},
	{.kind = ROW_AT_TASK, .key = "B", .time = 1300 * US, .tier = GS_TIER_HOST, .op = EQ,
	 .value = 2 * MIB},
	{.kind = ROW_AT_TASK, .key = "B", .time = 1300 * US, .tier = GS_TIER_GPU, .op = EQ,
	 .value = 5 * MIB,
	 .failure = "at[0]: task B's gpu used at 1300000 ns: expected == 5242880 B (5.0 MiB), "
		    "observed 3145728 B (3.0 MiB)"},
	{.kind = ROW_AT_TASK, .key = "B", .time = 2000 * US, .tier = GS_TIER_GPU, .op = EQ, .value = 0},
	{.kind = ROW_AT_TASK, .key = "x.y", .time = 2000 * US, .tier = GS_TIER_GPU, .op = EQ,
	 .value = 0},
	/* at: the host's pools, every thread's or a task's, replayed likewise */
	{.kind = ROW_AT_TIER, .time = 150 * US, .tier = GS_TIER_HOST, .measure = GS_MEASURE_PINNED,
	 .op = EQ, .value = 4 * KIB},
	{.kind = ROW_AT_TASK, .key = "A", .time = 150 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_PINNED, .op = EQ, .value = 4 * KIB},
	{.kind = ROW_AT_TASK, .key = "A", .time = 1300 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_PINNED, .op = EQ, .value = 0},
	{.kind = ROW_AT_TASK, .key = "A", .time = 1300 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_NON_PINNED, .op = EQ, .value = KIB},
	{.kind = ROW_AT_TASK, .key = "A", .time = 1300 * US, .tier = GS_TIER_HOST, .op = EQ,
	 .value = KIB},
	{.kind = ROW_AT_TASK, .key = "B", .time = 1300 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_PINNED, .op = EQ, .value = 0},
	{.kind = ROW_AT_TIER, .time = 1300 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_NON_PINNED, .op = EQ, .value = 0,
	 .failure = "at[0]: non_pinned used at 1300000 ns: expected == 0 B, observed 1024 B "
		    "(1.0 KiB)"},
	{.kind = ROW_AT_TASK, .key = "A", .time = 150 * US, .tier = GS_TIER_HOST,
	 .measure = GS_MEASURE_NON_PINNED, .op = GT, .value = 0,
	 .failure = "at[0]: task A's non_pinned used at 150000 ns: expected > 0 B, observed 0 B"},
};

/* Adds row @row's expectation to @w. */
static void
add_row(GsWorkload *w, const Row *row)
{
	GsExpectThread *t;
	GsExpectAt *at;

	switch (row->kind) {
	case ROW_VALUE:
		expect_value(w, row->key, row->text, row->op, row->value);
		break;
	case ROW_REACHED:
		t = expect_thread(w, row->key);
		for (guint i = 0; i < MAX_LIST && row->states[i] != END_OF_LIST; i++) {
			GsThreadState s = (GsThreadState) row->states[i];

			g_array_append_val(t->reached, s);
		}
		break;
	case ROW_THREW:
		t = expect_thread(w, row->key);
		t->threw = g_array_new(FALSE, FALSE, sizeof(GsException));
		for (guint i = 0; i < MAX_LIST && row->excs[i] != END_OF_LIST; i++) {
			GsException e = (GsException) row->excs[i];

			g_array_append_val(t->threw, e);
		}
		break;
	case ROW_NEVER:
		t = expect_thread(w, row->key);
		t->never_in = g_array_new(FALSE, FALSE, sizeof(GsThreadState));
		t->never_threw = g_array_new(FALSE, FALSE, sizeof(GsException));
		for (guint i = 0; i < MAX_LIST && row->states[i] != END_OF_LIST; i++) {
			GsThreadState s = (GsThreadState) row->states[i];

			g_array_append_val(t->never_in, s);
		}
		for (guint i = 0; i < MAX_LIST && row->excs[i] != END_OF_LIST; i++) {
			GsException e = (GsException) row->excs[i];

			g_array_append_val(t->never_threw, e);
		}
		break;
	case ROW_FINAL:
		t = expect_thread(w, row->key);
		t->has_final_state = TRUE;
		t->final_state = (GsThreadState) row->states[0];
		break;
	case ROW_AT_STATE:
		expect_at_state(w, row->time, row->key, (GsThreadState) row->states[0]);
		break;
	case ROW_AT_RES:
		expect_at_tier(w, row->time, row->tier, 0, row->op, row->value);
		at = g_ptr_array_index(w->expect.at, w->expect.at->len - 1);
		at->has_tier = FALSE;
		at->thread = g_strdup(row->key);
		at->reservation = g_strdup(row->text);
		at->res_measure = row->res;
		break;
	case ROW_VALUES: {
		GsExpectThreadValue v = {.name = g_strdup("v"), .start = row->time,
					 .cmp = {row->op, row->value}};

		t = expect_thread(w, row->key);
		t->values = g_array_new(FALSE, FALSE, sizeof(GsExpectThreadValue));
		g_array_append_val(t->values, v);
		break;
	}
	case ROW_AT_TIER:
		expect_at_tier(w, row->time, row->tier, row->measure, row->op, row->value);
		break;
	case ROW_AT_TASK:
		expect_at_tier(w, row->time, row->tier, row->measure, row->op, row->value);
		((GsExpectAt *) g_ptr_array_index(w->expect.at, w->expect.at->len - 1))->task =
			g_strdup(row->key);
		break;
	}
}

START_TEST(test_row)
{
	const Row *row = &rows[_i];
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsEventLog) log = make_log();
	g_autoptr(GsExpectReport) report = NULL;

	add_row(w, row);
	report = gs_expect_check(w, r, log);
	ck_assert_uint_eq(report->checked, 1);
	if (row->failure == NULL) {
		ck_assert_msg(report->failed->len == 0, "row %d failed: %s", _i,
			      report->failed->len > 0 ? (char *) report->failed->pdata[0] : "");
		ck_assert(gs_expect_report_passed(report));
	} else {
		ck_assert_msg(report->failed->len == 1, "row %d held", _i);
		ck_assert_str_eq(g_ptr_array_index(report->failed, 0), row->failure);
		ck_assert(!gs_expect_report_passed(report));
	}
}
END_TEST

/* Which part of the scenario's expect a row belongs to: values, threads, at. */
static guint
row_group(RowKind kind)
{
	switch (kind) {
	case ROW_VALUE:
		return 0;
	case ROW_REACHED:
	case ROW_THREW:
	case ROW_NEVER:
	case ROW_FINAL:
	case ROW_VALUES:
		return 1;
	case ROW_AT_STATE:
	case ROW_AT_TIER:
	case ROW_AT_TASK:
	case ROW_AT_RES:
		return 2;
	}
	return 3;
}

/* Every row at once: each counted, failures in scenario order (values, threads, at). */
START_TEST(test_all_rows)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsEventLog) log = make_log();
	g_autoptr(GsExpectReport) report = NULL;
	g_autoptr(GPtrArray) want = g_ptr_array_new_with_free_func(g_free);
	guint at_index = 0;

	for (guint group = 0; group < 3; group++) {
		for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
			const char *failure = rows[i].failure;

			if (row_group(rows[i].kind) != group)
				continue;
			add_row(w, &rows[i]);
			if (failure != NULL && group == 2) {
				/* "at[0]" becomes the row's index among the at rows */
				g_ptr_array_add(want, g_strdup_printf("at[%u]%s", at_index,
								      failure + strlen("at[0]")));
			} else if (failure != NULL) {
				g_ptr_array_add(want, g_strdup(failure));
			}
			if (group == 2)
				at_index++;
		}
	}
	report = gs_expect_check(w, r, log);
	ck_assert_uint_eq(report->checked, G_N_ELEMENTS(rows));
	ck_assert_uint_eq(report->failed->len, want->len);
	for (guint i = 0; i < want->len; i++)
		ck_assert_str_eq(g_ptr_array_index(report->failed, i), g_ptr_array_index(want, i));
}
END_TEST

START_TEST(test_nothing_expected)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsExpectReport) report = gs_expect_check(w, r, NULL);

	ck_assert_uint_eq(report->checked, 0);
	ck_assert_uint_eq(report->failed->len, 0);
	ck_assert(gs_expect_report_passed(report));
	ck_assert(gs_expect_report_passed(NULL));
	gs_expect_report_free(NULL);
}
END_TEST

/* One threads entry with reached, threw and final_state is three checks. */
START_TEST(test_thread_entry_counts)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsExpectReport) report = NULL;
	GsExpectThread *t = expect_thread(w, "B.0");
	GsThreadState blocked = GS_THREAD_BLOCKED;
	GsException retry = GS_EXC_GPU_RETRY_OOM;

	g_array_append_val(t->reached, blocked);
	t->threw = g_array_new(FALSE, FALSE, sizeof(GsException));
	g_array_append_val(t->threw, retry);
	t->has_final_state = TRUE;
	t->final_state = GS_THREAD_RUNNING;
	report = gs_expect_check(w, r, NULL);
	ck_assert_uint_eq(report->checked, 3);
	ck_assert_uint_eq(report->failed->len, 2);
	ck_assert_str_eq(g_ptr_array_index(report->failed, 0),
			 "threads.B.0.threw: expected [GpuRetryOOM], "
			 "observed [GpuRetryOOM, GpuSplitAndRetryOOM]");
	ck_assert_str_eq(g_ptr_array_index(report->failed, 1),
			 "threads.B.0.final_state: expected THREAD_RUNNING, observed UNKNOWN");
}
END_TEST

/* The first attempt's B.0 row would pass these; the last row is the one checked. */
START_TEST(test_thread_last_row)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsExpectReport) report = NULL;
	GsExpectThread *t = expect_thread(w, "B.0");
	GsThreadState bufn = GS_THREAD_BUFN;
	GsException oom = GS_EXC_GPU_OOM;

	g_array_append_val(t->reached, bufn);
	t->threw = g_array_new(FALSE, FALSE, sizeof(GsException));
	g_array_append_val(t->threw, oom);
	t->has_final_state = TRUE;
	t->final_state = GS_THREAD_RUNNING;
	report = gs_expect_check(w, r, NULL);
	ck_assert_uint_eq(report->checked, 3);
	ck_assert_uint_eq(report->failed->len, 3);
	/* Without the last attempt's row, the first one is what is checked. */
	g_ptr_array_remove_index(r->threads, 2);
	g_clear_pointer(&report, gs_expect_report_free);
	report = gs_expect_check(w, r, NULL);
	ck_assert_uint_eq(report->failed->len, 0);
}
END_TEST

/* A thread-state row needs the event log; a tier row does not. */
START_TEST(test_at_without_log)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsExpectReport) report = NULL;

	expect_at_state(w, 1500 * US, "B.0", GS_THREAD_BLOCKED);
	expect_at_tier(w, 1500 * US, GS_TIER_GPU, FALSE, GS_CMP_EQ, 11 * MIB);
	report = gs_expect_check(w, r, NULL);
	ck_assert_uint_eq(report->checked, 2);
	ck_assert_uint_eq(report->failed->len, 1);
	ck_assert_str_eq(g_ptr_array_index(report->failed, 0),
			 "at[0]: B.0 at 1500000 ns: no event log to check against");
}
END_TEST

/* Only state entries move a thread's state; other entries of the thread do not. */
START_TEST(test_at_ignores_other_entries)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsEventLog) log = gs_event_log_new();
	g_autoptr(GsExpectReport) report = NULL;
	GsLogEntry alloc = {.kind = GS_LOG_ALLOC, .time = 5, .thread = "T", .buf = "x",
			    .to = GS_THREAD_BUFN};
	GsLogEntry bust = {.kind = GS_LOG_DEADLOCK, .time = 6, .thread = "T"};

	log_state(log, 1, "T", GS_THREAD_UNKNOWN, GS_THREAD_RUNNING);
	gs_event_log_add(&alloc, log);
	gs_event_log_add(&bust, log);
	log_state(log, 7, "U", GS_THREAD_UNKNOWN, GS_THREAD_ALLOC);
	expect_at_state(w, 10, "T", GS_THREAD_RUNNING);
	expect_at_state(w, 10, "U", GS_THREAD_ALLOC);
	report = gs_expect_check(w, r, log);
	ck_assert_uint_eq(report->checked, 2);
	ck_assert_uint_eq(report->failed->len, 0);
}
END_TEST

/* A task's compute time lost to retries in a window sums the result's lost samples of its threads. */
static void
add_lost(GsResult *r, GsTime time, const char *thread, GsTime lost)
{
	GsLostTime x = {.time = time, .thread = thread, .lost = lost};

	g_array_append_val(r->lost, x);
}

static void
expect_lost(GsWorkload *w, GsTime since, GsTime time, GsCmpOp op, GsTime lost)
{
	GsExpectAt *a = g_new0(GsExpectAt, 1);

	a->time = time;
	a->since = since;
	a->task = g_strdup("B");
	a->has_lost = TRUE;
	a->lost = (GsCmp){op, lost};
	g_ptr_array_add(w->expect.at, a);
}

START_TEST(test_at_window_lost)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsEventLog) log = make_log();
	g_autoptr(GsExpectReport) report = NULL;

	add_lost(r, 500 * US, "B.0", 300 * US);
	add_lost(r, 1500 * US, "B.0", 200 * US);
	add_lost(r, 1500 * US, "A.0", 7 * US); /* another task's */
	expect_lost(w, 0, 0, GS_CMP_EQ, 0);
	expect_lost(w, 0, 500 * US, GS_CMP_EQ, 300 * US);     /* the window's end is in it */
	expect_lost(w, 500 * US, 2000 * US, GS_CMP_EQ, 200 * US); /* its start is not */
	expect_lost(w, 0, 2000 * US, GS_CMP_GT, 500 * US);
	report = gs_expect_check(w, r, log);
	ck_assert_uint_eq(report->checked, 4);
	ck_assert_uint_eq(report->failed->len, 1);
	ck_assert_str_eq(g_ptr_array_index(report->failed, 0),
			 "at[3]: task B from 0 to 2000000 ns, lost: expected > 500000 ns (500 us), "
			 "observed 500000 ns (500 us)");
}
END_TEST

/* An outcome key checked against each outcome word. */
static const GsOutcome outcomes[] = {GS_OUTCOME_COMPLETED, GS_OUTCOME_FAILED,
				     GS_OUTCOME_DEADLOCK, GS_OUTCOME_TIMEOUT};

START_TEST(test_outcome_words)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsExpectReport) report = NULL;

	r->outcome = outcomes[_i];
	for (guint i = 0; i < G_N_ELEMENTS(outcomes); i++)
		expect_value(w, "outcome", gs_outcome_name(outcomes[i]), GS_CMP_EQ, 0);
	report = gs_expect_check(w, r, NULL);
	ck_assert_uint_eq(report->checked, G_N_ELEMENTS(outcomes));
	ck_assert_uint_eq(report->failed->len, G_N_ELEMENTS(outcomes) - 1);
	for (guint i = 0; i < report->failed->len; i++)
		ck_assert(g_str_has_suffix(g_ptr_array_index(report->failed, i),
					   gs_outcome_name(outcomes[_i])));
}
END_TEST

/* A failure report goes into the JSON and the summary as written. */
START_TEST(test_report_in_writers)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = make_result();
	g_autoptr(GsExpectReport) report = NULL;
	g_autofree char *json = NULL;
	g_autofree char *summary = NULL;

	w->name = g_strdup("s");
	expect_value(w, "tasks.B.retries", NULL, GS_CMP_EQ, 1);
	expect_value(w, "totals.retries", NULL, GS_CMP_EQ, 2);
	report = gs_expect_check(w, r, NULL);
	json = gs_report_json(w, r, "sim", 0, report);
	ck_assert_ptr_nonnull(strstr(json, "    \"checked\": 2,\n    \"failed\": [\n"
					   "      \"tasks.B.retries: expected == 1, observed 2\"\n"
					   "    ]\n"));
	summary = gs_report_summary(w, r, report);
	ck_assert_ptr_nonnull(
		strstr(summary, "\nexpectation failed: tasks.B.retries: expected == 1, observed 2\n"));
	ck_assert_ptr_nonnull(strstr(summary, "\nexpectations  2 checked, 1 failed\n"));
}
END_TEST

Suite *gs_test_suite_expect(void);

Suite *
gs_test_suite_expect(void)
{
	Suite *s = suite_create("expect");
	TCase *tc;

	tc = tcase_create("rows");
	tcase_add_loop_test(tc, test_row, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_all_rows);
	suite_add_tcase(s, tc);

	tc = tcase_create("rules");
	tcase_add_test(tc, test_nothing_expected);
	tcase_add_test(tc, test_thread_entry_counts);
	tcase_add_test(tc, test_thread_last_row);
	tcase_add_test(tc, test_at_without_log);
	tcase_add_test(tc, test_at_ignores_other_entries);
	tcase_add_test(tc, test_at_window_lost);
	tcase_add_loop_test(tc, test_outcome_words, 0, G_N_ELEMENTS(outcomes));
	tcase_add_test(tc, test_report_in_writers);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_expect());
}
