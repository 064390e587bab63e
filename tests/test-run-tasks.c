/*
 * Unit tests of run/tasks.h through a fake driver: executor slots and their
 * FIFO queue, the GPU semaphore's permits, attempts and retries, the
 * arrivals of a workload's task copies, leak reports and the run's outcome;
 * the result's totals (run/result.h) and the rules of a thread's status
 * (run/thread.h). Each row is a script of driver
 * steps; the fake driver writes down every call the layer makes back and
 * every event-log entry, and the row says what that trace must be.
 */
#include "config.h"

#include <string.h>

#include "run/tasks.h"
#include "run/thread.h"
#include "run/watch.h"
#include "testlib.h"

typedef struct {
	GsRunTasks tasks;
	GPtrArray *records; /* FakeTask*, owned: every attempt, in the order made */
	GString *trace;
	GsTime now;
	GsWorkload *w;
	GsResult *result;
	GsEngine *engine;
} Fake;

/* The fake's record of an attempt, as a driver's: the run layer's part first. */
typedef struct {
	GsRunTask run;
	gboolean failed;
} FakeTask;

static GsRunTask *
fake_task_new(gpointer data)
{
	Fake *f = data;
	FakeTask *task = g_new0(FakeTask, 1);

	g_ptr_array_add(f->records, task);
	return &task->run;
}

#define note(f, ...) tl_trace_add(((Fake *) (f))->trace, __VA_ARGS__)

static void
fake_arrives(gpointer data, GsRunTask *task, GsTime at)
{
	note(data, "%s arrives at %" G_GINT64_FORMAT, task->result->id, at);
}

static void
fake_start(gpointer data, GsRunTask *task)
{
	note(data, "start %s#%u", task->result->id, task->attempt);
}

static void
fake_stop(gpointer data, GsRunTask *task)
{
	note(data, "stop %s#%u", task->result->id, task->attempt);
}

static void
fake_granted(gpointer data, GsRunTask *task)
{
	note(data, "granted %s#%u", task->result->id, task->attempt);
}

static void
fake_cut(gpointer data, GsRunTask *task)
{
	note(data, "cut %s#%u", task->result->id, task->attempt);
}

static GsTime
fake_now(gpointer data)
{
	return ((Fake *) data)->now;
}

static void
fake_log(gpointer data, GsLogEntry *e)
{
	if (e->kind == GS_LOG_LEAK) {
		note(data, "%s leaks %" G_GINT64_FORMAT " from %s", e->task, e->bytes, e->thread);
		return;
	}
	ck_assert(e->kind == GS_LOG_TASK || e->kind == GS_LOG_SEMAPHORE);
	note(data, "%s %s", e->task, e->what);
}

static const GsRunHooks fake_hooks = {
	.task_new = fake_task_new,
	.arrives = fake_arrives,
	.start_threads = fake_start,
	.stop_threads = fake_stop,
	.permit_granted = fake_granted,
	.cut_short = fake_cut,
	.now = fake_now,
	.log = fake_log,
};

static GsTaskSpec *
add_task(GsWorkload *w, const char *id, GsTime start, guint repeat, GsTime every)
{
	GsTaskSpec *spec = gs_task_spec_new(id);

	spec->start = start;
	spec->repeat = repeat;
	spec->every = every;
	g_ptr_array_add(w->tasks, spec);
	return spec;
}

/* A fake driver over @w (taken), its tasks added; the trace holds their arrivals. */
static Fake *
fake_over(GsWorkload *w, guint copies)
{
	Fake *f = g_new0(Fake, 1);
	GsEngineOpts opts = gs_policy_engine_opts(&w->policy);

	f->w = w;
	f->engine = gs_engine_new(&opts);
	f->result = gs_result_new();
	f->records = g_ptr_array_new_with_free_func(g_free);
	f->trace = g_string_new(NULL);
	gs_run_tasks_init(&f->tasks, f->w, f->result, f->engine, &fake_hooks, f);
	ck_assert_uint_eq(gs_run_tasks_add_all(&f->tasks), copies);
	return f;
}

/* A fake driver over tasks A, B and C with these limits; the arrivals are not traced. */
static Fake *
fake_new(guint slots, guint permits, guint attempts)
{
	GsWorkload *w = gs_workload_new();
	Fake *f;

	w->executor_slots = slots;
	w->policy.concurrent_gpu_tasks = permits;
	w->policy.task_attempts = attempts;
	add_task(w, "A", 0, 1, 0);
	add_task(w, "B", 0, 1, 0);
	add_task(w, "C", 0, 1, 0);
	f = fake_over(w, 3);
	g_string_truncate(f->trace, 0);
	return f;
}

static void
fake_free(Fake *f)
{
	gs_run_tasks_clear(&f->tasks);
	g_ptr_array_unref(f->records);
	g_string_free(f->trace, TRUE);
	gs_result_free(f->result);
	gs_engine_free(f->engine);
	gs_workload_free(f->w);
	g_free(f);
}

/* The latest attempt of the task called @id. */
static GsRunTask *
latest(Fake *f, char id)
{
	for (guint i = f->records->len; i > 0; i--) {
		GsRunTask *task = f->records->pdata[i - 1];

		if (task->result->id[0] == id)
			return task;
	}
	ck_abort_msg("no task %c", id);
	return NULL;
}

/*
 * Steps, each a letter and a task: +X admits X; pX asks a permit for X
 * ("X has" or "X waits"); eX ends X done, fX ends it failed; xX finishes it
 * ("X over" when the logical task is over). Time moves 10 ns a step.
 */
static void
play(Fake *f, const char *script)
{
	g_auto(GStrv) steps = g_strsplit(script, " ", -1);

	for (guint i = 0; steps[i] != NULL; i++) {
		GsRunTask *task = latest(f, steps[i][1]);

		f->now += 10;
		switch (steps[i][0]) {
		case '+':
			gs_run_tasks_admit(&f->tasks, task);
			break;
		case 'p':
			note(f, "%s %s", task->result->id,
			     gs_run_tasks_take_permit(&f->tasks, task) ? "has" : "waits");
			break;
		case 'e':
		case 'f':
			((FakeTask *) task)->failed = steps[i][0] == 'f';
			gs_run_tasks_end(&f->tasks, task, ((FakeTask *) task)->failed);
			break;
		case 'x':
			if (gs_run_tasks_finish(&f->tasks, task, ((FakeTask *) task)->failed,
						GS_EXC_GPU_RETRY_OOM))
				note(f, "%s over", task->result->id);
			break;
		default:
			ck_abort_msg("bad step '%s'", steps[i]);
		}
	}
}

static const struct {
	const char *what;
	guint slots, permits, attempts;
	const char *script;
	const char *trace;
} rows[] = {
	{"one slot: the others queue, first come first served", 1, 0, 1,
	 "+A +B +C eA xA eB xB eC xC",
	 "A start, start A#1, B queued, C queued, stop A#1, A done, B start, start B#1, A over, "
	 "stop B#1, B done, C start, start C#1, B over, stop C#1, C done, C over"},
	{"no slot limit: every task starts at its arrival", 0, 0, 1,
	 "+A +B eB xB eA xA",
	 "A start, start A#1, B start, start B#1, stop B#1, B done, B over, stop A#1, A done, "
	 "A over"},
	{"one permit: the second task waits, once, and is granted it at the first's finish", 0, 1,
	 1, "+A +B pA pB pB eA xA pB",
	 "A start, start A#1, B start, start B#1, A acquire, A has, B wait, B waits, B waits, "
	 "stop A#1, A done, B acquire, granted B#1, A over, B has"},
	{"a task holds its permit across its GPU work", 0, 1, 1, "+A pA pA eA xA",
	 "A start, start A#1, A acquire, A has, A has, stop A#1, A done, A over"},
	{"a failed attempt is tried again until the attempts run out", 0, 0, 2, "+A fA xA fA xA",
	 "A start, start A#1, stop A#1, A failed, A retry, A start, start A#2, stop A#2, A failed, "
	 "A over"},
	{"a retry is admitted after the queue took the freed slot", 1, 0, 2,
	 "+A +B fA xA eB xB eA xA",
	 "A start, start A#1, B queued, stop A#1, A failed, A retry, B start, start B#1, A queued, "
	 "stop B#1, B done, A start, start A#2, B over, stop A#2, A done, A over"},
	{"a task that ends waiting for a permit leaves the line", 0, 1, 1,
	 "+A +B pA pB eB xB eA xA",
	 "A start, start A#1, B start, start B#1, A acquire, A has, B wait, B waits, stop B#1, "
	 "B done, B over, stop A#1, A done, A over"},
	{"freed permits go before freed slots", 2, 1, 1, "+A +B +C pA pB eA xA",
	 "A start, start A#1, B start, start B#1, C queued, A acquire, A has, B wait, B waits, "
	 "stop A#1, A done, B acquire, granted B#1, C start, start C#1, A over"},
};

START_TEST(test_a_script)
{
	Fake *f = fake_new(rows[_i].slots, rows[_i].permits, rows[_i].attempts);

	play(f, rows[_i].script);
	ck_assert_msg(strcmp(f->trace->str, rows[_i].trace) == 0, "%s:\n got  %s\n want %s",
		      rows[_i].what, f->trace->str, rows[_i].trace);
	fake_free(f);
}
END_TEST

/* What the result holds after the attempts: outcomes, attempts, start and end, the run's outcome. */
START_TEST(test_the_result_rows)
{
	Fake *f = fake_new(0, 1, 2);
	GsTaskResult *a = f->result->tasks->pdata[0], *b = f->result->tasks->pdata[1];

	play(f, "+A +B pA fA xA eB xB fA xA");
	ck_assert_uint_eq(a->attempts, 2);
	ck_assert_int_eq(a->outcome, GS_OUTCOME_FAILED);
	ck_assert_int_eq(a->failure, GS_EXC_GPU_RETRY_OOM);
	ck_assert_int_eq(a->start_ns, 10);
	ck_assert_int_eq(a->end_ns, 80);
	ck_assert_uint_eq(b->attempts, 1);
	ck_assert_int_eq(b->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(b->start_ns, 20);
	ck_assert_int_eq(b->end_ns, 60);
	ck_assert_uint_eq(f->result->totals.tasks, 3);
	ck_assert_uint_eq(f->result->totals.task_attempts, 4);
	ck_assert(f->tasks.failed_any);
	ck_assert_uint_eq(f->tasks.open, 1); /* C never came */
	ck_assert_uint_eq(f->tasks.permits, 1);
	ck_assert_uint_eq(f->tasks.running, 0);
	fake_free(f);
}
END_TEST

/* Leaks are reported only when there are any; the totals sum the rows; a cut run keeps its outcome. */
START_TEST(test_leaks_totals_and_the_outcome)
{
	Fake *f = fake_new(0, 0, 1);
	GsRunTask *b;

	play(f, "+A +B +C fA xA eB xB eC xC");
	b = latest(f, 'B');
	g_string_truncate(f->trace, 0);
	gs_run_tasks_report_leak(&f->tasks, b, "B.0", 0);
	gs_run_tasks_report_leak(&f->tasks, b, "B.1", 100);
	gs_run_tasks_report_leak(&f->tasks, b, "B.2", 28);
	ck_assert_str_eq(f->trace->str, "B leaks 100 from B.1, B leaks 28 from B.2");
	ck_assert_int_eq(b->result->leaked_bytes, 128);
	((GsTaskResult *) f->result->tasks->pdata[0])->blocked_ns = GS_TIME_END - 5;
	((GsTaskResult *) f->result->tasks->pdata[1])->blocked_ns = 10;
	gs_result_sum_tasks(f->result);
	ck_assert_uint_eq(f->result->totals.tasks_completed, 2);
	ck_assert_uint_eq(f->result->totals.tasks_failed, 1);
	ck_assert_int_eq(f->result->totals.leaked_bytes, 128);
	ck_assert_int_eq(f->result->totals.blocked_ns, GS_TIME_END); /* saturates */
	gs_run_tasks_settle_outcome(&f->tasks);
	ck_assert_int_eq(f->result->outcome, GS_OUTCOME_FAILED);
	f->result->outcome = GS_OUTCOME_DEADLOCK;
	gs_run_tasks_settle_outcome(&f->tasks);
	ck_assert_int_eq(f->result->outcome, GS_OUTCOME_DEADLOCK);
	fake_free(f);
}
END_TEST

/* Every copy of a repeated task arrives in file order, `every` apart, ranked by id. */
/* A run cut short: the running attempt reports what it did, the queued one only the run's outcome. */
START_TEST(test_a_cut_run)
{
	Fake *f = fake_new(1, 0, 1);
	GsTaskResult *a, *b, *c;

	play(f, "+A +B +C eA xA");
	f->result->outcome = GS_OUTCOME_DEADLOCK;
	g_string_truncate(f->trace, 0);
	for (guint i = 0; i < f->records->len; i++)
		gs_run_tasks_cut_short(&f->tasks, f->records->pdata[i], 99);
	ck_assert_str_eq(f->trace->str, "cut B#1");
	a = latest(f, 'A')->result;
	b = latest(f, 'B')->result;
	c = latest(f, 'C')->result;
	ck_assert_int_eq(a->outcome, GS_OUTCOME_COMPLETED);
	ck_assert_int_eq(a->end_ns, 40);
	ck_assert_int_eq(b->outcome, GS_OUTCOME_DEADLOCK);
	ck_assert_int_eq(b->end_ns, 99);
	ck_assert_int_eq(c->outcome, GS_OUTCOME_DEADLOCK);
	ck_assert_int_eq(c->end_ns, 99);
	fake_free(f);
}
END_TEST

START_TEST(test_copies_arrive_every_period)
{
	GsWorkload *w = gs_workload_new();
	Fake *f;

	add_task(w, "A", 5000, 3, 2000);
	add_task(w, "B", 1000, 1, 0);
	f = fake_over(w, 4);
	ck_assert_str_eq(f->trace->str,
			 "A#0 arrives at 5000, A#1 arrives at 7000, A#2 arrives at 9000, B arrives at 1000");
	ck_assert_uint_eq(f->result->totals.tasks, 4);
	ck_assert_uint_eq(f->tasks.open, 4);
	for (guint i = 0; i < 4; i++) {
		GsRunTask *task = f->records->pdata[i];

		ck_assert_uint_eq(task->id_rank, i);
		ck_assert_int_eq(task->engine_id, i);
		ck_assert_uint_eq(task->attempt, 1);
		ck_assert_uint_eq(task->spec_index, i < 3 ? 0 : 1);
	}
	fake_free(f);
}
END_TEST

/* Which waits count as what: one rule for both drivers' deadlocks and watchdogs. */
static const struct {
	GsRunStatus status;
	gboolean on_another, outside_if_sleep_blocks, outside;
} status_rows[] = {
	{GS_RUN_READY, FALSE, FALSE, FALSE},
	{GS_RUN_BUSY, FALSE, FALSE, FALSE},
	{GS_RUN_SLEEPING, FALSE, TRUE, FALSE},
	{GS_RUN_PARKED, TRUE, FALSE, FALSE},
	{GS_RUN_SEMAPHORE, TRUE, TRUE, TRUE},
	{GS_RUN_RESERVE, TRUE, TRUE, TRUE},
	{GS_RUN_GATE, FALSE, FALSE, FALSE},
	{GS_RUN_DONE, FALSE, FALSE, FALSE},
};

START_TEST(test_the_status_rules)
{
	GsPolicy policy;

	gs_policy_init(&policy);
	ck_assert_int_eq(gs_run_waits_on_another(status_rows[_i].status), status_rows[_i].on_another);
	policy.sleep_is_blocked = TRUE;
	ck_assert_int_eq(gs_run_waits_outside(status_rows[_i].status, &policy),
			 status_rows[_i].outside_if_sleep_blocks);
	policy.sleep_is_blocked = FALSE;
	ck_assert_int_eq(gs_run_waits_outside(status_rows[_i].status, &policy),
			 status_rows[_i].outside);
}
END_TEST

/* ---- what the engine tells the run (run/watch.h) ---- */

static const char *
watch_name(gpointer data, GsThreadId id)
{
	return id == 1 ? "T1" : NULL; /* thread 2 is none of the fake run's */
}

static const char *
watch_moved(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to)
{
	tl_trace_add(data, "moved %" G_GUINT64_FORMAT " to %s", id, gs_thread_state_name(to));
	return watch_name(data, id);
}

static void
watch_log(gpointer data, GsLogEntry *e)
{
	if (e->kind == GS_LOG_DEADLOCK)
		tl_trace_add(data, "log %s busted", e->thread);
	else
		tl_trace_add(data, "log %s to %s", e->thread, gs_thread_state_name(e->to));
}

static const GsRunHooks watch_hooks = {
	.log = watch_log,
	.thread_name = watch_name,
	.thread_moved = watch_moved,
};

/*
 * Every state change reaches the driver's books; only its own threads' reach
 * the log, after them. A bust counts in the totals and names its victim, "?"
 * when the victim is none of the run's.
 */
START_TEST(test_what_the_engine_tells_the_run)
{
	GsPolicy policy;
	GsEngineOpts opts;
	GsEngine *engine;
	g_autoptr(GsResult) result = gs_result_new();
	g_autoptr(GString) trace = g_string_new(NULL);
	GsRunWatch watch;
	GsThreadId outside = 1;
	GsDecision d;

	gs_policy_init(&policy);
	opts = gs_policy_engine_opts(&policy);
	engine = gs_engine_new(&opts);
	gs_run_watch(&watch, engine, result, &watch_hooks, trace);
	ck_assert_int_eq(gs_engine_register_dedicated(engine, 1, 7, 0), GS_ENGINE_ERROR_NONE);
	ck_assert_int_eq(gs_engine_register_dedicated(engine, 2, 8, 0), GS_ENGINE_ERROR_NONE);
	d = gs_engine_alloc_begin(engine, 1, GS_KIND_GPU, TRUE, 1);
	gs_engine_alloc_success(engine, 1, GS_KIND_GPU, 100, d.recursive, 2);
	d = gs_engine_alloc_begin(engine, 2, GS_KIND_GPU, TRUE, 3);
	gs_engine_alloc_failed(engine, 2, GS_KIND_GPU, TRUE, TRUE, d.recursive, 4);
	ck_assert_ptr_nonnull(strstr(trace->str, "moved 1 to THREAD_ALLOC, log T1 to THREAD_ALLOC"));
	ck_assert_ptr_nonnull(strstr(trace->str, "moved 2 to THREAD_BLOCKED"));
	ck_assert_ptr_null(strstr(trace->str, "log (null)"));
	g_string_truncate(trace, 0);
	gs_engine_check_deadlocks(engine, &outside, 1, 5); /* T1 waits outside the allocator */
	ck_assert_ptr_nonnull(strstr(trace->str, "log ? busted"));
	ck_assert_uint_eq(result->totals.deadlocks_busted, 1);
	ck_assert_ptr_null(strstr(trace->str, "log T1"));
	gs_engine_free(engine);
}
END_TEST

/* ---- association ops (gs_run_associate) ---- */

/*
 * Thread 1 is dedicated to task 7 and thread 2 works for tasks 7 and 8 as a
 * shuffle thread; each row is one op by one thread, on a fresh engine, and
 * what it throws (the reference's std::invalid_argument).
 */
static const struct {
	const char *what;
	GsThreadId thread;
	GsOpKind kind;
	gboolean done;
	GsTaskId task;
	GsException thrown;
	GsThreadState after; /* the thread's state afterwards */
} association_rows[] = {
	{"a dedicated thread may not work for a pool", 1, GS_OP_POOL, FALSE, 8,
	 GS_EXC_ILLEGAL_ARGUMENT, GS_THREAD_RUNNING},
	{"a dedicated thread may move to another task", 1, GS_OP_ASSOCIATE, FALSE, 8, GS_EXC_NONE,
	 GS_THREAD_RUNNING},
	{"a dedicated thread dedicated again to its task", 1, GS_OP_ASSOCIATE, FALSE, 7, GS_EXC_NONE,
	 GS_THREAD_RUNNING},
	{"a dedicated thread leaves its task", 1, GS_OP_DISSOCIATE, FALSE, 7, GS_EXC_NONE,
	 GS_THREAD_UNKNOWN},
	{"a pool thread may not be dedicated", 2, GS_OP_ASSOCIATE, FALSE, 8, GS_EXC_ILLEGAL_ARGUMENT,
	 GS_THREAD_RUNNING},
	{"a pool thread says it again", 2, GS_OP_POOL, FALSE, 7, GS_EXC_NONE, GS_THREAD_RUNNING},
	{"a pool thread leaves one of its tasks", 2, GS_OP_DISSOCIATE, FALSE, 7, GS_EXC_NONE,
	 GS_THREAD_RUNNING},
	{"a pool thread done for its tasks", 2, GS_OP_POOL, TRUE, 7, GS_EXC_NONE, GS_THREAD_RUNNING},
	{"a thread nobody knows is done for a pool", 3, GS_OP_POOL, TRUE, 7, GS_EXC_NONE,
	 GS_THREAD_UNKNOWN},
	{"a thread nobody knows is dedicated", 3, GS_OP_ASSOCIATE, FALSE, 7, GS_EXC_NONE,
	 GS_THREAD_RUNNING},
};

START_TEST(test_an_association_op)
{
	GsPolicy policy;
	GsEngineOpts opts;
	GsEngine *engine;
	GsTaskId both[] = {7, 8};
	GsOp op = {.kind = association_rows[_i].kind};

	gs_policy_init(&policy);
	opts = gs_policy_engine_opts(&policy);
	engine = gs_engine_new(&opts);
	ck_assert_int_eq(gs_engine_register_dedicated(engine, 1, 7, 0), GS_ENGINE_ERROR_NONE);
	ck_assert_int_eq(gs_engine_register_pool(engine, 2, both, 2, TRUE, 0), GS_ENGINE_ERROR_NONE);
	op.pool.done = association_rows[_i].done;
	ck_assert(gs_run_is_association(&op));
	ck_assert_msg(gs_run_associate(engine, association_rows[_i].thread, TRUE, &op,
				       &association_rows[_i].task, 1, 1) == association_rows[_i].thrown,
		      "%s", association_rows[_i].what);
	ck_assert_msg(gs_engine_thread_state(engine, association_rows[_i].thread) ==
			      association_rows[_i].after,
		      "%s: state", association_rows[_i].what);
	gs_engine_free(engine);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("run-tasks");
	TCase *tc = tcase_create("tasks");

	tcase_add_loop_test(tc, test_a_script, 0, G_N_ELEMENTS(rows));
	tcase_add_test(tc, test_the_result_rows);
	tcase_add_test(tc, test_leaks_totals_and_the_outcome);
	tcase_add_test(tc, test_a_cut_run);
	tcase_add_test(tc, test_copies_arrive_every_period);
	tcase_add_loop_test(tc, test_the_status_rules, 0, G_N_ELEMENTS(status_rows));
	tcase_add_test(tc, test_what_the_engine_tells_the_run);
	tcase_add_loop_test(tc, test_an_association_op, 0, G_N_ELEMENTS(association_rows));
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
