/*
 * gpusim tests: the Spark-RAPIDS state log, read (src/scenario/statelog.h)
 * and walked (src/report/statelog-report.h), on logs written by hand in the
 * formats of spark-rapids-jni's SparkResourceAdaptorJni.cpp (the versions
 * are named in tests/data/statelog/README.md). Table-driven: each row is a
 * log and what its reading and its walk must give.
 */
#include "config.h"

#include <string.h>

#include "testlib.h"
#include "report/statelog-report.h"
#include "scenario/statelog.h"

#define HEADER "time,op,current thread,op thread,op task,from state,to state,notes\n"

/* ---- reading ---- */

static const struct {
	const char *name;
	const char *text;
	guint rows, foreign, headers, problems;
	gboolean old_names;
	const char *first_problem; /* its "LOG:LINE:COLUMN: " start, or NULL */
} reads[] = {
	{"a header and a transition",
	 HEADER "10:00:00.000000,TRANSITION,1,2,3,UNKNOWN,THREAD_RUNNING,\n", 1, 0, 1, 0, FALSE,
	 NULL},
	{"a rotated file: no header, CRLF line ends",
	 "10:00:00.000000,TRANSITION,1,2,3,UNKNOWN,THREAD_RUNNING,\r\n"
	 "10:00:00.000001,WAITING,1,2,3,THREAD_RUNNING,,\r\n",
	 2, 0, 0, 0, FALSE, NULL},
	{"other loggers' lines are skipped and counted",
	 "26/11/26 10:00:00 INFO Executor: hello\n" HEADER
	 "10:00:00.000000,TRANSITION,1,2,3,UNKNOWN,THREAD_RUNNING,\n"
	 "at com.nvidia.spark.rapids.Foo(Foo.scala:1)\n",
	 1, 2, 1, 0, FALSE, NULL},
	{"a note keeps its commas",
	 "10:00:00.000000,is_thread_bufn_or_above: state: THREAD_BUFN, ids: {1, 2}\n", 1, 0, 0, 0,
	 FALSE, NULL},
	{"2023 names, a shuffle state gpusim lacks",
	 HEADER "10:00:00.000000,TRANSITION,1,2,3,TASK_RUNNING,TASK_WAIT_ON_SHUFFLE,\n", 1, 0, 1, 0,
	 TRUE, NULL},
	{"an unknown state", "10:00:00.000000,TRANSITION,1,2,3,UNKNOWN,THREAD_NAPPING,\n"
			     "10:00:00.000001,TRANSITION,1,2,3,UNKNOWN,THREAD_RUNNING,\n",
	 1, 0, 0, 1, FALSE, "s.log:1:42: unknown state 'THREAD_NAPPING'"},
	{"a status row with a to state",
	 "10:00:00.000000,WAITING,1,2,3,THREAD_BLOCKED,THREAD_RUNNING,\n"
	 "10:00:00.000001,TRANSITION,1,2,3,UNKNOWN,THREAD_RUNNING,\n",
	 1, 0, 0, 1, FALSE, "s.log:1:46: a WAITING row has no 'to state'"},
	{"a row cut short", "10:00:00.000000,TRANSITION,1,2,3\n"
			    "10:00:00.000001,TRANSITION,1,2,3,UNKNOWN,THREAD_RUNNING,\n",
	 1, 0, 0, 1, FALSE, "s.log:1:33: the row ends after 5 of its 8 fields"},
	{"a thread that is not a number", "10:00:00.000000,DEALLOC,1,t2,3,UNKNOWN,,\n"
					  "10:00:00.000001,DEALLOC,1,2,3,UNKNOWN,,\n",
	 1, 0, 0, 1, FALSE, "s.log:1:27: op thread 't2' is not a whole number"},
};

START_TEST(test_read)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsStateLog) log =
		gs_state_log_read_text("s.log", reads[_i].text, strlen(reads[_i].text), &error);

	ck_assert_msg(log != NULL, "%s: %s", reads[_i].name, error ? error->message : "");
	ck_assert_uint_eq(log->rows->len, reads[_i].rows);
	ck_assert_uint_eq(log->foreign_lines, reads[_i].foreign);
	ck_assert_uint_eq(log->headers, reads[_i].headers);
	ck_assert_uint_eq(log->problems->len, reads[_i].problems);
	ck_assert_int_eq(log->old_names, reads[_i].old_names);
	if (reads[_i].first_problem != NULL)
		ck_assert_msg(g_str_has_prefix(log->problems->pdata[0], reads[_i].first_problem),
			      "%s: got %s", reads[_i].name, (char *) log->problems->pdata[0]);
}
END_TEST

START_TEST(test_read_fields)
{
	static const char text[] =
		HEADER "23:59:59.999990,DETAIL,9,-1,-1,UNKNOWN,,deadlock state is reached with "
		       "all_task_ids: {1, 2} (2)\n"
		       "00:00:00.000010,TRANSITION,9,140,7,THREAD_BLOCKED,THREAD_BUFN_THROW,\n"
		       "23:59:59.999995,DEALLOC,140,140,7,THREAD_BUFN_THROW,,\n"
		       "10:00:00.000000,thread (id: 140) is_retry_alloc_before_bufn set to true\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(GsStateLog) log = gs_state_log_read_text("s.log", text, strlen(text), &error);
	const GsStateRow *rows;

	ck_assert_ptr_nonnull(log);
	ck_assert_uint_eq(log->rows->len, 4);
	rows = (const GsStateRow *) (gpointer) log->rows->data;
	ck_assert_int_eq(rows[0].kind, GS_STATE_ROW_STATUS);
	ck_assert_str_eq(rows[0].op, "DETAIL");
	ck_assert_str_eq(rows[0].notes, "deadlock state is reached with all_task_ids: {1, 2} (2)");
	ck_assert_int_eq(rows[0].task, -1);
	ck_assert_int_eq(rows[1].kind, GS_STATE_ROW_TRANSITION);
	ck_assert_str_eq(rows[1].current, "9");
	ck_assert_str_eq(rows[1].thread, "140");
	ck_assert_int_eq(rows[1].task, 7);
	ck_assert_int_eq(rows[1].from.state, GS_THREAD_BLOCKED);
	ck_assert_int_eq(rows[1].to.state, GS_THREAD_BUFN_THROW);
	ck_assert_uint_eq(rows[1].line, 3);
	ck_assert_uint_eq(rows[1].from_column, 36);
	/* across midnight, 20 us later; a row stamped 15 us early stays before it */
	ck_assert_int_eq(rows[1].time_us, 20);
	ck_assert_int_eq(rows[2].time_us, 5);
	ck_assert_int_eq(rows[2].from.state, GS_THREAD_BUFN_THROW);
	ck_assert_int_eq(rows[3].kind, GS_STATE_ROW_NOTE);
	ck_assert_str_eq(rows[3].notes, "thread (id: 140) is_retry_alloc_before_bufn set to true");
}
END_TEST

/* Not a state log at all: exit status 2's errors, with a position. */
static const struct {
	const char *text;
	gsize length;
	const char *error;
} unreadable[] = {
	{"", 0, "s.log:1:1: no row of a Spark-RAPIDS state log"},
	{HEADER, sizeof HEADER - 1, "s.log:1:1: no row of a Spark-RAPIDS state log"},
	{"Thread,Time,Action,Pointer,Size,Stream\n", 39,
	 "s.log:1:1: no row of a Spark-RAPIDS state log"},
	{HEADER "10:00:00.0\0x", sizeof HEADER + 11, "s.log:2:11: a NUL byte"},
};

START_TEST(test_unreadable)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsStateLog) log = gs_state_log_read_text("s.log", unreadable[_i].text,
							   unreadable[_i].length, &error);

	ck_assert_ptr_null(log);
	ck_assert_msg(g_str_has_prefix(error->message, unreadable[_i].error), "got %s",
		      error->message);
}
END_TEST

/* ---- the walk ---- */

static GsStateReport *
walk(const char *text, GsStateLog **log_out)
{
	g_autoptr(GError) error = NULL;
	GsStateLog *log = gs_state_log_read_text("s.log", text, strlen(text), &error);

	ck_assert_msg(log != NULL, "%s", error != NULL ? error->message : "");
	*log_out = log;
	return gs_state_report_new(log);
}

/* One thread through a rollback, a RetryOOM, BUFN, a split and its task's end. */
static const char bust_text[] =
	HEADER "10:00:00.000000,TRANSITION,1,1,5,UNKNOWN,THREAD_RUNNING,\n"
	       "10:00:00.001000,INJECTED_RETRY_OOM_CPU,1,1,5,THREAD_RUNNING,,\n"
	       "10:00:00.002000,TRANSITION,1,1,5,THREAD_RUNNING,THREAD_ALLOC,\n"
	       "10:00:00.003000,TRANSITION,1,1,5,THREAD_ALLOC,THREAD_BLOCKED,\n"
	       "10:00:00.004000,DETAIL,9,-1,-1,UNKNOWN,,deadlock state is reached with x\n"
	       "10:00:00.004000,TRANSITION,9,1,5,THREAD_BLOCKED,THREAD_BUFN_THROW,\n"
	       "10:00:00.005000,TRANSITION,1,1,5,THREAD_BUFN_THROW,THREAD_BUFN_WAIT,\n"
	       "10:00:00.005000,TRANSITION,1,1,5,THREAD_BUFN_WAIT,THREAD_BUFN,\n"
	       "10:00:00.006000,DETAIL,9,-1,-1,UNKNOWN,,deadlock state is reached with y\n"
	       "10:00:00.007000,DETAIL,9,-1,-1,UNKNOWN,,all_bufn state is reached with z\n"
	       "10:00:00.007000,TRANSITION,9,1,5,THREAD_BUFN,THREAD_SPLIT_THROW,\n"
	       "10:00:00.008000,TRANSITION,1,1,5,THREAD_SPLIT_THROW,THREAD_RUNNING,\n"
	       "10:00:00.010000,TRANSITION,1,1,5,THREAD_RUNNING,UNKNOWN,\n";

START_TEST(test_walk_counts)
{
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) r = walk(bust_text, &log);
	const GsStateThread *t;
	const GsStateTask *task;

	ck_assert_uint_eq(r->impossible->len, 0);
	ck_assert_uint_eq(r->transitions, 9);
	ck_assert_uint_eq(r->statuses, 4);
	ck_assert_uint_eq(r->threads->len, 1);
	t = r->threads->pdata[0];
	ck_assert_str_eq(t->thread, "1");
	ck_assert(!t->pool);
	ck_assert_uint_eq(t->tasks->len, 1);
	ck_assert_int_eq(g_array_index(t->tasks, gint64, 0), 5);
	ck_assert_uint_eq(t->counts.retries, 2);
	ck_assert_uint_eq(t->counts.injected, 1);
	ck_assert_uint_eq(t->counts.splits, 1);
	ck_assert_uint_eq(t->counts.rollbacks, 1);
	ck_assert_uint_eq(t->counts.blocks, 1);
	/* RUNNING 0-2 ms and 8-10 ms; BLOCKED 3-4 ms; BUFN 5-7 ms */
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_RUNNING], 4000);
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_ALLOC], 1000);
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_BLOCKED], 1000);
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_BUFN_THROW], 1000);
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_BUFN_WAIT], 0);
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_BUFN], 2000);
	ck_assert_int_eq(t->counts.in_state_us[GS_THREAD_SPLIT_THROW], 1000);
	ck_assert_uint_eq(r->tasks->len, 1);
	task = r->tasks->pdata[0];
	ck_assert_int_eq(task->task, 5);
	ck_assert_uint_eq(task->threads, 1);
	ck_assert_mem_eq(&task->counts, &t->counts, sizeof t->counts);
	/* the second check was followed by the split: both moved something */
	ck_assert_uint_eq(r->deadlock_checks, 2);
	ck_assert_uint_eq(r->checks_idle, 0);
	ck_assert_uint_eq(r->all_bufn_checks, 1);
	ck_assert_int_eq(r->span_us, 10000);
}
END_TEST

START_TEST(test_walk_trace)
{
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) r = walk(bust_text, &log);
	g_autofree char *trace = gs_report_log_trace("state log: s.log", r->events,
						     r->span_us * 1000);
	static const char *const in_order[] = {
		"{\"name\":\"CpuRetryOOM\",\"cat\":\"throw\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
		"\"tid\":1,\"ts\":1000.000,\"args\":{\"handled\":false}}",
		"{\"name\":\"THREAD_RUNNING\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
		"\"ts\":0.000,\"dur\":2000.000}",
		"{\"name\":\"deadlock check\",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
		"\"tid\":2,\"ts\":4000.000}",
		"{\"name\":\"deadlock: rollback\",\"cat\":\"deadlock\",\"ph\":\"i\",\"s\":\"t\","
		"\"pid\":1,\"tid\":1,\"ts\":4000.000,\"args\":{\"victim\":\"1\",\"action\":"
		"\"rollback\"}}",
		"{\"name\":\"RetryOOM\",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":1,"
		"\"ts\":5000.000}",
		"{\"name\":\"deadlock: split\",\"cat\":\"deadlock\"",
		"{\"name\":\"THREAD_BUFN\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
		"\"ts\":5000.000,\"dur\":2000.000}",
		"{\"name\":\"SplitAndRetryOOM\",\"cat\":\"mark\"",
		"{\"name\":\"THREAD_RUNNING\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
		"\"ts\":8000.000,\"dur\":2000.000}",
	};
	const char *last = trace;

	tl_ck_json(trace);
	tl_ck_contains(trace, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
			      "\"args\":{\"name\":\"state log: s.log\"}}");
	tl_ck_contains(trace, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,"
			      "\"args\":{\"name\":\"1\"}}");
	for (guint i = 0; i < G_N_ELEMENTS(in_order); i++) {
		const char *at = strstr(last, in_order[i]);

		ck_assert_msg(at != NULL, "missing or out of order: %s in\n%s", in_order[i], trace);
		last = at;
	}
	/* the thread's state until UNKNOWN at 10 ms: seven slices, no UNKNOWN drawn */
	ck_assert_uint_eq(tl_count_of(trace, "\"ph\":\"X\""), 8);
	ck_assert_uint_eq(tl_count_of(trace, "\"UNKNOWN\""), 0);
}
END_TEST

/* The check: each row a log, and the problems it must report, in order. */
static const struct {
	const char *name;
	const char *text;
	const char *impossible[3];
	guint unchecked, deadlock_checks, idle;
} checks[] = {
	{"every step possible", bust_text, {NULL}, 0, 2, 0},
	{"a step skipped",
	 "10:00:00.000000,TRANSITION,1,1,5,UNKNOWN,THREAD_RUNNING,\n"
	 "10:00:00.001000,TRANSITION,1,1,5,THREAD_RUNNING,THREAD_BUFN,\n",
	 {"s.log:2:34: thread 1: THREAD_RUNNING -> THREAD_BUFN cannot happen", NULL},
	 0, 0, 0},
	{"a transition missing",
	 "10:00:00.000000,TRANSITION,1,1,5,UNKNOWN,THREAD_RUNNING,\n"
	 "10:00:00.001000,TRANSITION,1,1,5,THREAD_ALLOC,THREAD_RUNNING,\n"
	 "10:00:00.002000,WAITING,1,1,5,THREAD_BLOCKED,,\n",
	 {"s.log:2:34: thread 1 is in THREAD_ALLOC here, but line 1 left it in THREAD_RUNNING",
	  "s.log:3:31: thread 1 is in THREAD_BLOCKED here, but line 2 left it in THREAD_RUNNING",
	  NULL},
	 0, 0, 0},
	{"a thread's first row is taken as it stands; a removed thread starts again",
	 "10:00:00.000000,TRANSITION,1,1,5,THREAD_BUFN_WAIT,THREAD_BUFN,\n"
	 "10:00:00.000000,TRANSITION,1,1,5,THREAD_BUFN,THREAD_REMOVE_THROW,\n"
	 "10:00:00.000000,TRANSITION,1,1,5,THREAD_REMOVE_THROW,UNKNOWN,\n"
	 "10:00:00.000000,TRANSITION,1,1,6,UNKNOWN,THREAD_RUNNING,\n",
	 {NULL}, 0, 0, 0},
	{"a transition into or out of a 2023 state outside the model is not checked",
	 "10:00:00.000000,TRANSITION,1,1,5,TASK_RUNNING,TASK_WAIT_ON_SHUFFLE,\n"
	 "10:00:00.000000,TRANSITION,1,1,5,TASK_BUFN_WAIT_ON_SHUFFLE,TASK_BUFN,\n"
	 "10:00:00.000000,TRANSITION,1,1,5,TASK_BUFN,TASK_RUNNING,\n",
	 {NULL}, 2, 0, 0},
	{"a deadlock check after which nothing moves, twice",
	 "10:00:00.000000,TRANSITION,1,1,5,THREAD_BUFN_WAIT,THREAD_BUFN,\n"
	 "10:00:00.100000,DETAIL,9,-1,-1,UNKNOWN,,deadlock state is reached with a\n"
	 "10:00:00.100000,DEALLOC,1,1,5,THREAD_BUFN,,\n"
	 "10:00:00.200000,DETAIL,9,-1,-1,UNKNOWN,,deadlock state is reached with a\n",
	 {NULL}, 0, 2, 2},
};

START_TEST(test_check)
{
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) r = walk(checks[_i].text, &log);
	guint expected = 0;

	while (expected < G_N_ELEMENTS(checks[_i].impossible) &&
	       checks[_i].impossible[expected] != NULL)
		expected++;
	ck_assert_msg(r->impossible->len == expected, "%s: %u problems, first %s", checks[_i].name,
		      r->impossible->len,
		      r->impossible->len > 0 ? (char *) r->impossible->pdata[0] : "");
	for (guint i = 0; i < expected; i++)
		ck_assert_msg(g_str_has_prefix(r->impossible->pdata[i], checks[_i].impossible[i]),
			      "%s: got %s", checks[_i].name, (char *) r->impossible->pdata[i]);
	ck_assert_uint_eq(r->unchecked, checks[_i].unchecked);
	ck_assert_uint_eq(r->deadlock_checks, checks[_i].deadlock_checks);
	ck_assert_uint_eq(r->checks_idle, checks[_i].idle);
}
END_TEST

/* A pool thread (task -1) is counted under the pool; a retry-once wake is a bust. */
START_TEST(test_walk_pool_and_retry_once)
{
	static const char text[] =
		"10:00:00.000000,TRANSITION,2,2,-1,UNKNOWN,THREAD_RUNNING,\n"
		"10:00:00.000000,ADD_TASKS,2,2,-1,THREAD_RUNNING,,CURRENT IDs 5 6 \n"
		"10:00:00.001000,TRANSITION,2,2,-1,THREAD_RUNNING,THREAD_ALLOC,\n"
		"10:00:00.002000,TRANSITION,2,2,-1,THREAD_ALLOC,THREAD_BLOCKED,\n"
		"10:00:00.003000,thread (id: 2) is_retry_alloc_before_bufn set to true\n"
		"10:00:00.003000,TRANSITION,9,2,-1,THREAD_BLOCKED,THREAD_RUNNING,\n"
		"10:00:00.004000,TRANSITION,2,2,-1,THREAD_RUNNING,UNKNOWN,\n";
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) r = walk(text, &log);
	const GsStateThread *t = r->threads->pdata[0];
	const GsStateTask *pool = r->tasks->pdata[0];
	g_autofree char *events = gs_report_events(r->events);

	ck_assert(t->pool);
	ck_assert_uint_eq(r->tasks->len, 1);
	ck_assert_int_eq(pool->task, -1);
	ck_assert_int_eq(pool->counts.in_state_us[GS_THREAD_BLOCKED], 1000);
	tl_ck_contains(events, "{\"t_ns\":3000000,\"ev\":\"deadlock\",\"victim\":\"2\","
			       "\"action\":\"retry_once\"}");
	ck_assert_uint_eq(r->notes, 1);
}
END_TEST

START_TEST(test_summary)
{
	g_autoptr(GsStateLog) log = NULL;
	g_autoptr(GsStateReport) r = walk(bust_text, &log);
	g_autofree char *summary = gs_state_report_summary(r, log);

	tl_ck_contains(summary, "s.log: rows 13 (transitions 9, status 4, notes 0)\n");
	tl_ck_contains(summary, "span 10.0 ms; threads 1, tasks 1\n");
	tl_ck_contains(summary, "task            RUNNING        ALLOC      BLOCKED   BUFN_THROW"
				"         BUFN  SPLIT_THROW retries splits injected rollbacks blocks "
				"other\n"
				"5               4.00 ms      1.00 ms      1.00 ms      1.00 ms      2.00 "
				"ms      1.00 ms       2      1        1         1      1     0\n");
	tl_ck_contains(summary, "deadlock checks that found all tasks blocked: 2, after which "
				"nothing moved: 0; all_bufn reached: 1\n");
	tl_ck_contains(summary, "transitions checked against gpusim's table: 9; impossible: 0\n");
}
END_TEST

static Suite *
statelog_suite(void)
{
	Suite *s = suite_create("statelog");
	TCase *tc = tcase_create("read");

	tcase_add_loop_test(tc, test_read, 0, G_N_ELEMENTS(reads));
	tcase_add_test(tc, test_read_fields);
	tcase_add_loop_test(tc, test_unreadable, 0, G_N_ELEMENTS(unreadable));
	suite_add_tcase(s, tc);
	tc = tcase_create("walk");
	tcase_add_test(tc, test_walk_counts);
	tcase_add_test(tc, test_walk_trace);
	tcase_add_loop_test(tc, test_check, 0, G_N_ELEMENTS(checks));
	tcase_add_test(tc, test_walk_pool_and_retry_once);
	tcase_add_test(tc, test_summary);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(statelog_suite());
}
