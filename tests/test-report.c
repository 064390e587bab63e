/*
 * gpusim tests: the result writers (src/report/report.h) on results, workloads and
 * event logs made by hand. Every JSON output is parsed back by a small
 * validating parser (testlib.h: RFC 8259 grammar, duplicate keys rejected) and
 * searched for exact members; event lines and the timeline are compared with
 * golden strings; the trace's slices, instants and counters are checked
 * value by value; the summary line by line.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "report/report.h"

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define TIB (GIB * 1024)
#define US ((GsTime) 1000)
#define MS (US * 1000)

/* ---- the self-test of the parser ---- */

static const struct {
	const char *text;
	gboolean valid;
} parser_rows[] = {
	{"{}", TRUE},
	{" [1, -2.5e+3, 0, true, false, null, \"a\\n\\u00e9\"] ", TRUE},
	{"{\"a\": {\"b\": []}}", TRUE},
	{"{\"a\": 1,}", FALSE},
	{"{\"a\": 1, \"a\": 2}", FALSE},
	{"[01]", FALSE},
	{"[1.]", FALSE},
	{"\"tab\there\"", FALSE},
	{"\"\\x\"", FALSE},
	{"{\"a\" 1}", FALSE},
	{"[1] [2]", FALSE},
	{"", FALSE},
};

START_TEST(test_parser)
{
	ck_assert_int_eq(tl_json_valid(parser_rows[_i].text), parser_rows[_i].valid);
}
END_TEST

/* ---- results made by hand ---- */

static GsTaskResult *
add_task(GsResult *r, const char *id, GsOutcome outcome)
{
	GsTaskResult *t = gs_result_add_task(r, id);

	t->outcome = outcome;
	t->attempts = 1;
	return t;
}

static GsThreadResult *
add_thread(GsResult *r, const char *name, const char *task, guint32 reached)
{
	/* A row of no task row, pointing at a task id of its own. */
	GsThreadResult *t = gs_result_add_thread(r, name, NULL);

	t->task = task != NULL ? g_string_chunk_insert(r->strings, task) : NULL;
	t->pool = task == NULL;
	t->reached = reached;
	t->exceptions = g_array_new(FALSE, TRUE, sizeof(GsSeenException));
	return t;
}

static void
add_exception(GsThreadResult *t, GsTime time, GsException exc, gboolean handled, const char *op)
{
	GsSeenException seen = {.time = time, .exception = exc, .handled = handled};

	g_strlcpy(seen.op, op, sizeof seen.op);
	g_array_append_val(t->exceptions, seen);
}

static void
add_sample(GsResult *r, GsTime time, gint64 gpu_used, gint64 gpu_charged, gint64 host_used,
	   guint running, guint blocked, guint bufn)
{
	GsSample s = {.time = time, .running = running, .blocked = blocked, .bufn = bufn};

	s.used[GS_TIER_GPU] = gpu_used;
	s.charged[GS_TIER_GPU] = gpu_charged;
	s.used[GS_TIER_HOST] = host_used;
	s.charged[GS_TIER_HOST] = host_used;
	g_array_append_val(r->timeline, s);
}

#define BIT(state) (1u << GS_THREAD_##state)

/* Two tasks; B retried once after a deadlock bust. */
static GsResult *
sample_result(void)
{
	GsResult *r = gs_result_new();
	GsTaskResult *a, *b;
	GsThreadResult *t;

	r->outcome = GS_OUTCOME_COMPLETED;
	r->makespan_ns = 3500 * US;
	r->events_processed = 42;
	r->seed = 7;
	r->totals.tasks = 2;
	r->totals.tasks_completed = 2;
	r->totals.task_attempts = 2;
	r->totals.retries = 1;
	r->totals.blocked_ns = 1500 * US;
	r->totals.lost_ns = 500 * US;
	r->totals.spill_block_ns = 3;
	r->totals.semaphore_wait_ns = 4;
	r->totals.deadlocks_busted = 1;
	r->totals.spilled_gpu_to_host = 5;
	r->totals.spilled_host_to_disk = 6;
	r->totals.unspilled_host_to_gpu = 7;
	r->totals.unspilled_disk_to_host = 8;
	r->totals.copies_checked = 9;
	r->totals.leaked_bytes = 10;
	r->totals.host_pools = 11;
	r->totals.failure_callbacks = 12;
	r->totals.failure_callback_allocs = 13;
	r->totals.streams_grown = 14;
	r->totals.refused[GS_REFUSED_NO_ROOM] = 3;
	r->totals.refused[GS_REFUSED_FAIR_SHARE] = 1;
	r->tiers[GS_TIER_GPU] = (GsTierResult){10 * MIB, 11 * MIB, 4 * MIB, 12 * MIB};
	r->tiers[GS_TIER_HOST] = (GsTierResult){4 * GIB, 0, 0, 0};
	r->tiers[GS_TIER_DISK] = (GsTierResult){TIB, 0, 0, 0};

	a = add_task(r, "A", GS_OUTCOME_COMPLETED);
	a->end_ns = 3000 * US;
	a->max_footprint = 6 * MIB;
	a->max_allocated = 7 * MIB;
	b = add_task(r, "B", GS_OUTCOME_COMPLETED);
	b->start_ns = 1000 * US;
	b->end_ns = 3500 * US;
	b->retries = 1;
	b->blocked_ns = 1500 * US;
	b->lost_ns = 500 * US;
	b->max_footprint = 5 * MIB;
	b->max_allocated = 11 * MIB;
	b->leaked_bytes = 10;

	add_thread(r, "A.0", "A", BIT(RUNNING) | BIT(ALLOC));
	t = add_thread(r, "B.0", "B",
		       BIT(UNKNOWN) | BIT(RUNNING) | BIT(ALLOC) | BIT(BLOCKED) | BIT(BUFN_THROW));
	add_exception(t, 2500 * US, GS_EXC_GPU_RETRY_OOM, TRUE, "1.0");

	add_sample(r, 0, 0, 0, 0, 0, 0, 0);
	add_sample(r, 1000 * US, 6 * MIB, 6 * MIB, 0, 2, 0, 0);
	add_sample(r, 1500 * US, 11 * MIB, 12 * MIB, 1 * MIB, 1, 1, 0);
	return r;
}

static GsWorkload *
sample_workload(void)
{
	GsWorkload *w = gs_workload_new();

	w->name = g_strdup("basic-bufn");
	return w;
}

/* ---- human units ---- */

static const struct {
	gint64 bytes;
	const char *text;
} bytes_rows[] = {
	{0, "0 B"},
	{512, "512 B"},
	{1023, "1023 B"},
	{1024, "1.0 KiB"},
	{1536, "1.5 KiB"},
	{6 * MIB, "6.0 MiB"},
	{3 * GIB / 2, "1.5 GiB"},
	{TIB, "1.0 TiB"},
	{-2048, "-2.0 KiB"},
	{-5, "-5 B"},
};

START_TEST(test_format_bytes)
{
	g_autofree char *text = gs_format_bytes(bytes_rows[_i].bytes);

	ck_assert_str_eq(text, bytes_rows[_i].text);
}
END_TEST

static const struct {
	GsTime ns;
	const char *text;
} duration_rows[] = {
	{0, "0 ns"},
	{999, "999 ns"},
	{1000, "1.00 us"},
	{12345, "12.3 us"},
	{500 * US, "500 us"},
	{1500 * US, "1.50 ms"},
	{250 * MS, "250 ms"},
	{3000 * MS, "3.00 s"},
	{100000 * MS, "100 s"},
	{-1500, "-1.50 us"},
};

START_TEST(test_format_duration)
{
	g_autofree char *text = gs_format_duration(duration_rows[_i].ns);

	ck_assert_str_eq(text, duration_rows[_i].text);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(gs_outcome_name(GS_OUTCOME_COMPLETED), "completed");
	ck_assert_str_eq(gs_outcome_name(GS_OUTCOME_FAILED), "failed");
	ck_assert_str_eq(gs_outcome_name(GS_OUTCOME_DEADLOCK), "deadlock");
	ck_assert_str_eq(gs_outcome_name(GS_OUTCOME_TIMEOUT), "timeout");
	ck_assert_str_eq(gs_report_tier_name(GS_TIER_GPU), "gpu");
	ck_assert_str_eq(gs_report_tier_name(GS_TIER_HOST), "host");
	ck_assert_str_eq(gs_report_tier_name(GS_TIER_DISK), "disk");
}
END_TEST

/* ---- the event log and event lines ---- */

START_TEST(test_event_log_copies)
{
	g_autoptr(GsEventLog) log = gs_event_log_new();
	char thread[] = "A.0";
	char buf[] = "x";
	GsLogEntry e = {.kind = GS_LOG_ALLOC, .time = 5, .thread = thread, .buf = buf,
			.bytes = 256, .tier = GS_TIER_GPU, .ok = TRUE};
	const GArray *entries;
	const GsLogEntry *got;

	gs_event_log_add(&e, log);
	thread[0] = 'Z';
	buf[0] = 'y';
	e.time = 6;
	e.thread = NULL;
	gs_event_log_add(&e, log);
	entries = gs_event_log_entries(log);
	ck_assert_uint_eq(entries->len, 2);
	got = &g_array_index(entries, GsLogEntry, 0);
	ck_assert_int_eq(got->time, 5);
	ck_assert_str_eq(got->thread, "A.0");
	ck_assert_str_eq(got->buf, "x");
	ck_assert_ptr_null(got->task);
	ck_assert_ptr_null(got->what);
	ck_assert_int_eq(got->bytes, 256);
	got = &g_array_index(entries, GsLogEntry, 1);
	ck_assert_ptr_null(got->thread);
	ck_assert_str_eq(got->buf, "y");
}
END_TEST

static const struct {
	GsLogEntry entry;
	const char *line;
} event_rows[] = {
	{{.kind = GS_LOG_STATE, .time = 1500000, .thread = "B.0", .from = GS_THREAD_ALLOC,
	  .to = GS_THREAD_BLOCKED},
	 "{\"t_ns\":1500000,\"ev\":\"state\",\"thread\":\"B.0\",\"from\":\"THREAD_ALLOC\","
	 "\"to\":\"THREAD_BLOCKED\"}"},
	{{.kind = GS_LOG_STATE, .time = 0, .thread = "A.0", .from = GS_THREAD_UNKNOWN,
	  .to = GS_THREAD_RUNNING},
	 "{\"t_ns\":0,\"ev\":\"state\",\"thread\":\"A.0\",\"from\":\"UNKNOWN\","
	 "\"to\":\"THREAD_RUNNING\"}"},
	{{.kind = GS_LOG_THROW, .time = 7, .thread = "B.0", .exception = GS_EXC_GPU_RETRY_OOM,
	  .handled = TRUE},
	 "{\"t_ns\":7,\"ev\":\"throw\",\"thread\":\"B.0\",\"type\":\"GpuRetryOOM\",\"handled\":true}"},
	{{.kind = GS_LOG_THROW, .time = 8, .thread = "B.0", .exception = GS_EXC_CPU_OOM},
	 "{\"t_ns\":8,\"ev\":\"throw\",\"thread\":\"B.0\",\"type\":\"CpuOOM\",\"handled\":false}"},
	{{.kind = GS_LOG_ALLOC, .time = 9, .thread = "A.0", .buf = "x", .bytes = 6291456,
	  .tier = GS_TIER_GPU, .ok = TRUE},
	 "{\"t_ns\":9,\"ev\":\"alloc\",\"thread\":\"A.0\",\"buf\":\"x\",\"bytes\":6291456,"
	 "\"tier\":\"gpu\",\"ok\":true}"},
	{{.kind = GS_LOG_ALLOC, .time = 9, .thread = "A.0", .buf = "h", .bytes = 1,
	  .tier = GS_TIER_HOST, .ok = FALSE, .refusal = GS_REFUSED_PAGE_TABLE},
	 "{\"t_ns\":9,\"ev\":\"alloc\",\"thread\":\"A.0\",\"buf\":\"h\",\"bytes\":1,"
	 "\"tier\":\"host\",\"ok\":false,\"reason\":\"page_table\"}"},
	/* host memory beside a pinned pool names its pool, and a fallback to the other */
	{{.kind = GS_LOG_ALLOC, .time = 9, .thread = "A.0", .buf = "p", .bytes = 1,
	  .tier = GS_TIER_HOST, .ok = TRUE, .pool = "pinned", .fallback = TRUE},
	 "{\"t_ns\":9,\"ev\":\"alloc\",\"thread\":\"A.0\",\"buf\":\"p\",\"bytes\":1,"
	 "\"tier\":\"host\",\"pool\":\"pinned\",\"fallback\":true,\"ok\":true}"},
	{{.kind = GS_LOG_FREE, .time = 10, .thread = "A.0", .buf = "n", .bytes = 1,
	  .tier = GS_TIER_HOST, .pool = "non_pinned"},
	 "{\"t_ns\":10,\"ev\":\"free\",\"thread\":\"A.0\",\"buf\":\"n\",\"bytes\":1,"
	 "\"tier\":\"host\",\"pool\":\"non_pinned\"}"},
	{{.kind = GS_LOG_SPILL, .time = 10, .thread = "A.0", .buf = "p", .bytes = 1,
	  .tier = GS_TIER_HOST, .to_tier = GS_TIER_DISK, .ok = TRUE, .what = "spill",
	  .pool = "pinned"},
	 "{\"t_ns\":10,\"ev\":\"spill\",\"thread\":\"A.0\",\"buf\":\"p\",\"from\":\"host\","
	 "\"pool\":\"pinned\",\"to\":\"disk\",\"bytes\":1,\"ok\":true}"},
	{{.kind = GS_LOG_FREE, .time = 10, .thread = "A.0", .buf = "x", .bytes = 256,
	  .tier = GS_TIER_DISK},
	 "{\"t_ns\":10,\"ev\":\"free\",\"thread\":\"A.0\",\"buf\":\"x\",\"bytes\":256,"
	 "\"tier\":\"disk\"}"},
	{{.kind = GS_LOG_DEADLOCK, .time = 11, .thread = "B.0", .action = GS_BUST_ROLLBACK},
	 "{\"t_ns\":11,\"ev\":\"deadlock\",\"victim\":\"B.0\",\"action\":\"rollback\"}"},
	{{.kind = GS_LOG_DEADLOCK, .time = 12, .thread = "C.0", .action = GS_BUST_RETRY_ONCE},
	 "{\"t_ns\":12,\"ev\":\"deadlock\",\"victim\":\"C.0\",\"action\":\"retry_once\"}"},
	{{.kind = GS_LOG_DEADLOCK, .time = 13, .thread = "D.0", .action = GS_BUST_SPLIT},
	 "{\"t_ns\":13,\"ev\":\"deadlock\",\"victim\":\"D.0\",\"action\":\"split\"}"},
	{{.kind = GS_LOG_TASK, .time = 14, .task = "A#3", .what = "start"},
	 "{\"t_ns\":14,\"ev\":\"task\",\"task\":\"A#3\",\"what\":\"start\"}"},
	{{.kind = GS_LOG_SEMAPHORE, .time = 15, .task = "B", .what = "wait"},
	 "{\"t_ns\":15,\"ev\":\"semaphore\",\"task\":\"B\",\"what\":\"wait\"}"},
	{{.kind = GS_LOG_TASK, .time = 16, .task = NULL, .what = NULL},
	 "{\"t_ns\":16,\"ev\":\"task\",\"task\":null,\"what\":null}"},
	{{.kind = GS_LOG_ALLOC, .time = 17, .thread = "q\"\\\n\x01", .buf = "b",
	  .tier = GS_TIER_GPU},
	 "{\"t_ns\":17,\"ev\":\"alloc\",\"thread\":\"q\\\"\\\\\\n\\u0001\",\"buf\":\"b\","
	 "\"bytes\":0,\"tier\":\"gpu\",\"ok\":false,\"reason\":\"no_room\"}"},
};

START_TEST(test_event_line)
{
	g_autofree char *line = gs_report_event_line(&event_rows[_i].entry);

	ck_assert_str_eq(line, event_rows[_i].line);
	tl_ck_json(line);
}
END_TEST

START_TEST(test_events_all_lines)
{
	g_autoptr(GsEventLog) log = gs_event_log_new();
	g_autoptr(GString) want = g_string_new(NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(event_rows); i++) {
		gs_event_log_add(&event_rows[i].entry, log);
		g_string_append_printf(want, "%s\n", event_rows[i].line);
	}
	text = gs_report_events(log);
	ck_assert_str_eq(text, want->str);
	lines = g_strsplit(text, "\n", -1);
	ck_assert_uint_eq(g_strv_length(lines), G_N_ELEMENTS(event_rows) + 1);
	for (guint i = 0; i < G_N_ELEMENTS(event_rows); i++)
		tl_ck_json(lines[i]);
}
END_TEST

START_TEST(test_events_empty)
{
	g_autoptr(GsEventLog) log = gs_event_log_new();
	g_autofree char *text = gs_report_events(log);

	ck_assert_str_eq(text, "");
	ck_assert_uint_eq(gs_event_log_entries(log)->len, 0);
}
END_TEST

/* ---- the result object ---- */

static char *
sample_json(const GsExpectReport *report)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();

	return gs_report_json(w, r, "sim", 123, report);
}

typedef struct {
	GString *text;
	guint pieces;
	gsize largest;
	guint refuse_after; /* pieces taken before the sink refuses; 0: never */
} Pieces;

static gboolean
take_piece(const char *data, gsize len, gpointer sink_data)
{
	Pieces *p = sink_data;

	g_string_append_len(p->text, data, (gssize) len);
	p->pieces++;
	p->largest = MAX(p->largest, len);
	return p->refuse_after == 0 || p->pieces < p->refuse_after;
}

/*
 * The result handed on in pieces, as run writes it: the same bytes as whole,
 * in pieces of about 64 KiB; a sink that refuses one gets no more.
 */
START_TEST(test_json_in_pieces)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *whole = NULL;
	Pieces p = {.text = g_string_new(NULL)};
	Pieces refused = {.text = g_string_new(NULL), .refuse_after = 1};

	for (guint i = 0; i < 3000; i++) {
		g_autofree char *id = g_strdup_printf("t%u", i);
		GsTaskResult *task = gs_result_add_task(r, id);

		gs_result_add_thread(r, id, task);
	}
	whole = gs_report_json(w, r, "sim", 123, NULL);
	gs_report_json_to(w, r, "sim", 123, NULL, take_piece, &p);
	ck_assert_uint_gt(strlen(whole), 3 * 64 * 1024);
	ck_assert_str_eq(p.text->str, whole);
	ck_assert_uint_ge(p.pieces, 3);
	ck_assert_uint_lt(p.largest, 65 * 1024);
	gs_report_json_to(w, r, "sim", 123, NULL, take_piece, &refused);
	ck_assert_uint_eq(refused.pieces, 1);
	ck_assert(g_str_has_prefix(whole, refused.text->str));
	g_string_free(p.text, TRUE);
	g_string_free(refused.text, TRUE);
}
END_TEST

START_TEST(test_json_valid)
{
	g_autofree char *json = sample_json(NULL);

	tl_ck_json(json);
	ck_assert(g_str_has_prefix(json, "{\n  \"schema\": \"gpusim-result/1\",\n"));
	ck_assert(g_str_has_suffix(json, "\n}\n"));
}
END_TEST

START_TEST(test_json_header)
{
	g_autofree char *json = sample_json(NULL);
	g_autofree char *version = g_strdup_printf("\"gpusim_version\": \"%s\",", gs_version());

	tl_ck_contains(json, version);
	tl_ck_contains(json, "\n  \"scenario\": \"basic-bufn\",\n");
	tl_ck_contains(json, "\n  \"variant\": null,\n");
	tl_ck_contains(json, "\n  \"backend\": \"sim\",\n");
	tl_ck_contains(json, "\n  \"seed\": 7,\n");
	tl_ck_contains(json, "\n  \"outcome\": \"completed\",\n");
	tl_ck_contains(json, "\n  \"makespan_ns\": 3500000,\n");
	tl_ck_contains(json, "\n  \"events_processed\": 42,\n");
	tl_ck_contains(json, "\n  \"wall_ns\": 123,\n");
}
END_TEST

/* The top-level keys come in the order of SPEC §4, each once. */
START_TEST(test_json_key_order)
{
	static const char *const keys[] = {
		"schema",  "gpusim_version", "scenario", "variant",          "backend",
		"seed",    "policy",         "outcome",  "makespan_ns",      "events_processed",
		"wall_ns", "totals",         "tiers",    "tasks",            "threads",
		"expectations"};
	g_autofree char *json = sample_json(NULL);
	const char *last = json;

	for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
		g_autofree char *needle = g_strdup_printf("\n  \"%s\": ", keys[i]);
		const char *at = strstr(json, needle);

		ck_assert_msg(at != NULL && at > last, "key %s out of order", keys[i]);
		ck_assert_uint_eq(tl_count_of(json, needle), 1);
		last = at;
	}
}
END_TEST

START_TEST(test_json_variant)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *json = NULL;

	w->variant = g_strdup("retry+spill");
	json = gs_report_json(w, r, "cuda", 0, NULL);
	tl_ck_json(json);
	tl_ck_contains(json, "\n  \"variant\": \"retry+spill\",\n");
	tl_ck_contains(json, "\n  \"backend\": \"cuda\",\n");
}
END_TEST

START_TEST(test_json_policy_defaults)
{
	g_autofree char *json = sample_json(NULL);

	tl_ck_contains(json, "  \"policy\": {\n"
			  "    \"oom\": \"retry\",\n"
			  "    \"priority\": \"fifo\",\n"
			  "    \"split_victim\": \"highest\",\n"
			  "    \"retry_before_bufn\": true,\n"
			  "    \"retry_cap\": 500,\n"
			  "    \"watchdog_ns\": 100000000,\n"
			  "    \"sleep_is_blocked\": true,\n"
			  "    \"concurrent_gpu_tasks\": 0,\n"
			  "    \"task_attempts\": 1,\n"
			  "    \"spill\": {\"enabled\": false, \"victim\": \"lru\", \"on_demand\": true, "
			  "\"proactive\": false, \"host_full\": \"disk\"},\n"
			  "    \"reservations\": {\"over\": \"ignore\", \"increase_factor\": 1.25, "
			  "\"attribution\": \"origin\", \"blocking\": \"channel\"},\n"
			  "    \"admission\": \"none\",\n"
			  "    \"evac_gate\": true,\n"
			  "    \"failure_callback\": {\"enabled\": false, \"allocate\": 0, "
			  "\"retries\": 0}\n"
			  "  },\n");
}
END_TEST

START_TEST(test_json_policy_changed)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *json = NULL;
	GsPolicy *p = &w->policy;

	p->oom = GS_OOM_BLOCK;
	p->priority = GS_PRIORITY_TASK_ID;
	p->split_victim = GS_SPLIT_LOWEST;
	p->retry_before_bufn = FALSE;
	p->retry_cap = 3;
	p->watchdog = 0;
	p->sleep_is_blocked = FALSE;
	p->concurrent_gpu_tasks = 2;
	p->task_attempts = 4;
	p->spill.enabled = TRUE;
	p->spill.victim = GS_VICTIM_SMALLEST_FIT;
	p->spill.on_demand = FALSE;
	p->spill.proactive = TRUE;
	p->spill.host_full = GS_HOST_FULL_FAIL;
	p->reservations.over = GS_OVER_INCREASE;
	p->reservations.increase_factor = 0.1;
	p->reservations.attribution = GS_ATTRIBUTION_STREAM;
	p->reservations.blocking = GS_BLOCK_FOR_WHOLE;
	p->admission = GS_ADMISSION_FAIR_SHARE;
	p->evac_gate = FALSE;
	p->failure_callback.enabled = TRUE;
	p->failure_callback.allocate = 1;
	p->failure_callback.retries = 10;
	json = gs_report_json(w, r, "sim", 0, NULL);
	tl_ck_json(json);
	tl_ck_contains(json, "    \"oom\": \"block\",\n"
			  "    \"priority\": \"task_id\",\n"
			  "    \"split_victim\": \"lowest\",\n"
			  "    \"retry_before_bufn\": false,\n"
			  "    \"retry_cap\": 3,\n"
			  "    \"watchdog_ns\": 0,\n"
			  "    \"sleep_is_blocked\": false,\n"
			  "    \"concurrent_gpu_tasks\": 2,\n"
			  "    \"task_attempts\": 4,\n"
			  "    \"spill\": {\"enabled\": true, \"victim\": \"smallest_fit\", "
			  "\"on_demand\": false, \"proactive\": true, \"host_full\": \"fail\"},\n"
			  "    \"reservations\": {\"over\": \"increase\", \"increase_factor\": 0.1, "
			  "\"attribution\": \"stream\", \"blocking\": \"whole\"},\n"
			  "    \"admission\": \"fair_share\",\n"
			  "    \"evac_gate\": false,\n"
			  "    \"failure_callback\": {\"enabled\": true, \"allocate\": 1, "
			  "\"retries\": 10}\n");
	p->oom = GS_OOM_FAIL;
	p->spill.victim = GS_VICTIM_PRIORITY;
	p->reservations.over = GS_OVER_FAIL;
	g_free(json);
	json = gs_report_json(w, r, "sim", 0, NULL);
	tl_ck_contains(json, "\"oom\": \"fail\"");
	tl_ck_contains(json, "\"victim\": \"priority\"");
	tl_ck_contains(json, "\"over\": \"fail\"");
	p->spill.victim = GS_VICTIM_LARGEST;
	g_free(json);
	json = gs_report_json(w, r, "sim", 0, NULL);
	tl_ck_contains(json, "\"victim\": \"largest\"");
}
END_TEST

START_TEST(test_json_totals_tiers)
{
	g_autofree char *json = sample_json(NULL);

	tl_ck_contains(json, "  \"totals\": {\n"
			  "    \"tasks\": 2,\n"
			  "    \"tasks_completed\": 2,\n"
			  "    \"tasks_failed\": 0,\n"
			  "    \"task_attempts\": 2,\n"
			  "    \"retries\": 1,\n"
			  "    \"splits\": 0,\n"
			  "    \"blocked_ns\": 1500000,\n"
			  "    \"lost_ns\": 500000,\n"
			  "    \"spill_block_ns\": 3,\n"
			  "    \"semaphore_wait_ns\": 4,\n"
			  "    \"deadlocks_busted\": 1,\n"
			  "    \"deadlocks_unresolved\": 0,\n"
			  "    \"spilled_bytes\": {\"gpu_to_host\": 5, \"host_to_disk\": 6},\n"
			  "    \"unspilled_bytes\": {\"host_to_gpu\": 7, \"disk_to_host\": 8},\n"
			  "    \"copies_checked\": 9,\n"
			  "    \"copies_lost\": 0,\n"
			  "    \"leaked_bytes\": 10,\n"
			  "    \"host_pools\": 11,\n"
			  "    \"failure_callbacks\": 12,\n"
			  "    \"failure_callback_allocs\": 13,\n"
			  "    \"streams_grown\": 14,\n"
			  "    \"refused_allocations\": {\"no_room\": 3, \"reservation\": 0, "
			  "\"fair_share\": 1, \"page_table\": 0, \"never_fits\": 0, \"device\": 0}\n"
			  "  },\n");
	tl_ck_contains(json, "  \"tiers\": {\n"
			  "    \"gpu\": {\"capacity\": 10485760, \"peak_used\": 11534336, "
			  "\"mean_used\": 4194304, \"peak_charged\": 12582912},\n"
			  "    \"host\": {\"capacity\": 4294967296, \"peak_used\": 0, "
			  "\"mean_used\": 0, \"peak_charged\": 0},\n"
			  "    \"disk\": {\"capacity\": 1099511627776, \"peak_used\": 0, "
			  "\"mean_used\": 0, \"peak_charged\": 0}\n"
			  "  },\n");
}
END_TEST

START_TEST(test_json_tasks_threads)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *json = NULL;
	GsThreadResult *pool = add_thread(r, "S", NULL, 0);
	GsTaskResult *failed = add_task(r, "C", GS_OUTCOME_FAILED);

	failed->attempts = 4;
	failed->failure = GS_EXC_GPU_OOM;
	pool->final_state = GS_THREAD_BLOCKED;
	pool->waiting_at_end = TRUE;
	json = gs_report_json(w, r, "sim", 0, NULL);
	tl_ck_json(json);
	tl_ck_contains(json, "  \"tasks\": [\n"
			  "    {\"id\": \"A\", \"outcome\": \"completed\", \"attempts\": 1, "
			  "\"start_ns\": 0, \"end_ns\": 3000000, \"retries\": 0, \"splits\": 0, "
			  "\"blocked_ns\": 0, \"lost_ns\": 0, \"max_footprint\": 6291456, "
			  "\"leaked_bytes\": 0, \"failure\": null, \"spark_rapids\": "
			  "{\"gpuRetryCount\": 0, \"gpuSplitAndRetryCount\": 0, "
			  "\"gpuRetryBlockTime\": 0, \"gpuRetryComputationTime\": 0, "
			  "\"gpuMaxDeviceMemoryBytes\": 7340032, \"gpuMaxTaskFootprint\": 6291456}},\n"
			  "    {\"id\": \"B\", \"outcome\": \"completed\", \"attempts\": 1, "
			  "\"start_ns\": 1000000, \"end_ns\": 3500000, \"retries\": 1, \"splits\": 0, "
			  "\"blocked_ns\": 1500000, \"lost_ns\": 500000, \"max_footprint\": 5242880, "
			  "\"leaked_bytes\": 10, \"failure\": null, \"spark_rapids\": "
			  "{\"gpuRetryCount\": 1, \"gpuSplitAndRetryCount\": 0, "
			  "\"gpuRetryBlockTime\": 1500000, \"gpuRetryComputationTime\": 500000, "
			  "\"gpuMaxDeviceMemoryBytes\": 11534336, \"gpuMaxTaskFootprint\": 5242880}},\n"
			  "    {\"id\": \"C\", \"outcome\": \"failed\", \"attempts\": 4, "
			  "\"start_ns\": 0, \"end_ns\": 0, \"retries\": 0, \"splits\": 0, "
			  "\"blocked_ns\": 0, \"lost_ns\": 0, \"max_footprint\": 0, "
			  "\"leaked_bytes\": 0, \"failure\": \"GpuOOM\", \"spark_rapids\": "
			  "{\"gpuRetryCount\": 0, \"gpuSplitAndRetryCount\": 0, "
			  "\"gpuRetryBlockTime\": 0, \"gpuRetryComputationTime\": 0, "
			  "\"gpuMaxDeviceMemoryBytes\": 0, \"gpuMaxTaskFootprint\": 0}}\n"
			  "  ],\n");
	tl_ck_contains(json, "  \"threads\": [\n"
			  "    {\"name\": \"A.0\", \"task\": \"A\", \"kind\": \"dedicated\", "
			  "\"final_state\": \"UNKNOWN\", "
			  "\"states_reached\": [\"THREAD_RUNNING\", \"THREAD_ALLOC\"], "
			  "\"exceptions\": [], \"waiting_at_end\": false},\n"
			  "    {\"name\": \"B.0\", \"task\": \"B\", \"kind\": \"dedicated\", "
			  "\"final_state\": \"UNKNOWN\", "
			  "\"states_reached\": [\"UNKNOWN\", \"THREAD_RUNNING\", \"THREAD_ALLOC\", "
			  "\"THREAD_BLOCKED\", \"THREAD_BUFN_THROW\"], "
			  "\"exceptions\": [{\"time_ns\": 2500000, \"type\": \"GpuRetryOOM\", "
			  "\"op\": \"1.0\", \"handled\": true}], \"waiting_at_end\": false},\n"
			  "    {\"name\": \"S\", \"task\": null, \"kind\": \"pool\", "
			  "\"final_state\": \"THREAD_BLOCKED\", \"states_reached\": [], "
			  "\"exceptions\": [], \"waiting_at_end\": true}\n"
			  "  ],\n");
}
END_TEST

START_TEST(test_json_empty_result)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = gs_result_new();
	g_autofree char *json = gs_report_json(w, r, NULL, 0, NULL);

	tl_ck_json(json);
	tl_ck_contains(json, "\"scenario\": null,");
	tl_ck_contains(json, "\"backend\": null,");
	tl_ck_contains(json, "  \"tasks\": [],\n  \"threads\": [],\n");
}
END_TEST

START_TEST(test_json_expectations)
{
	g_autofree char *none = sample_json(NULL);
	GsExpectReport report = {.checked = 3, .failed = g_ptr_array_new_with_free_func(g_free)};
	g_autofree char *json = NULL;

	tl_ck_contains(none, "  \"expectations\": {\n"
			  "    \"checked\": 0,\n"
			  "    \"failed\": []\n"
			  "  }\n}\n");
	g_ptr_array_add(report.failed, g_strdup("tasks.B.retries: expected == 1, observed 2"));
	g_ptr_array_add(report.failed, g_strdup("say \"hi\"\tnow"));
	json = sample_json(&report);
	tl_ck_json(json);
	tl_ck_contains(json, "  \"expectations\": {\n"
			  "    \"checked\": 3,\n"
			  "    \"failed\": [\n"
			  "      \"tasks.B.retries: expected == 1, observed 2\",\n"
			  "      \"say \\\"hi\\\"\\tnow\"\n"
			  "    ]\n"
			  "  }\n}\n");
	g_ptr_array_unref(report.failed);
}
END_TEST

/* Same input, same bytes; wall_ns is the only difference between two runs. */
START_TEST(test_json_deterministic)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r1 = sample_result();
	g_autoptr(GsResult) r2 = sample_result();
	g_autofree char *a = gs_report_json(w, r1, "sim", 5, NULL);
	g_autofree char *b = gs_report_json(w, r2, "sim", 5, NULL);
	g_autofree char *c = gs_report_json(w, r1, "sim", 999999, NULL);
	char *wall;

	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	wall = strstr(c, "\"wall_ns\": 999999");
	ck_assert_ptr_nonnull(wall);
	memcpy(wall, "\"wall_ns\": 5,", strlen("\"wall_ns\": 5,"));
	memmove(wall + strlen("\"wall_ns\": 5,"), wall + strlen("\"wall_ns\": 999999,"),
		strlen(wall + strlen("\"wall_ns\": 999999,")) + 1);
	ck_assert_str_eq(a, c);
}
END_TEST

/* Names that need escaping, and invalid UTF-8, still give valid JSON. */
START_TEST(test_json_escaping)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *json = NULL;
	g_autofree char *trace = NULL;

	w->name = g_strdup("a \"quoted\"\\name\n\x7f\x1f\xff\xfe é");
	add_task(r, "t\r\b\f", GS_OUTCOME_TIMEOUT);
	add_thread(r, "\xc3", "t\r\b\f", 0);
	json = gs_report_json(w, r, "sim", 0, NULL);
	tl_ck_json(json);
	tl_ck_contains(json, "\"scenario\": \"a \\\"quoted\\\"\\\\name\\n\x7f\\u001f");
	tl_ck_contains(json, "\"id\": \"t\\r\\b\\f\", \"outcome\": \"timeout\"");
	trace = gs_report_trace(w, r, NULL);
	tl_ck_json(trace);
}
END_TEST

/* ---- the trace ---- */

static void
log_state(GsEventLog *log, GsTime time, const char *thread, GsThreadState from, GsThreadState to)
{
	GsLogEntry e = {.kind = GS_LOG_STATE, .time = time, .thread = thread, .from = from,
			.to = to};

	gs_event_log_add(&e, log);
}

/* A.0 runs, allocates, runs and ends; B.0 starts, throws, is a deadlock victim. */
static GsEventLog *
sample_log(void)
{
	GsEventLog *log = gs_event_log_new();
	GsLogEntry e = {0};

	log_state(log, 0, "A.0", GS_THREAD_UNKNOWN, GS_THREAD_RUNNING);
	log_state(log, 1000, "A.0", GS_THREAD_RUNNING, GS_THREAD_ALLOC);
	log_state(log, 1000, "A.0", GS_THREAD_ALLOC, GS_THREAD_RUNNING);
	log_state(log, 1500, "B.0", GS_THREAD_UNKNOWN, GS_THREAD_RUNNING);
	e = (GsLogEntry){.kind = GS_LOG_ALLOC, .time = 1600, .thread = "B.0", .buf = "x",
			 .bytes = 10, .tier = GS_TIER_GPU};
	gs_event_log_add(&e, log);
	e = (GsLogEntry){.kind = GS_LOG_THROW, .time = 2500, .thread = "B.0",
			 .exception = GS_EXC_GPU_RETRY_OOM, .handled = TRUE};
	gs_event_log_add(&e, log);
	e = (GsLogEntry){.kind = GS_LOG_DEADLOCK, .time = 2500, .thread = "B.0",
			 .action = GS_BUST_ROLLBACK};
	gs_event_log_add(&e, log);
	e = (GsLogEntry){.kind = GS_LOG_TASK, .time = 2600, .task = "A", .what = "done"};
	gs_event_log_add(&e, log);
	log_state(log, 3000, "A.0", GS_THREAD_RUNNING, GS_THREAD_UNKNOWN);
	log_state(log, 3100, "P", GS_THREAD_UNKNOWN, GS_THREAD_BLOCKED);
	return log;
}

static GsResult *
trace_result(void)
{
	GsResult *r = gs_result_new();

	r->makespan_ns = 4000;
	add_thread(r, "A.0", "A", 0);
	add_thread(r, "B.0", "B", 0);
	add_thread(r, "A.0", "A", 0); /* a second attempt: the same track */
	add_sample(r, 0, 0, 0, 0, 1, 0, 0);
	add_sample(r, 1234567, 6 * MIB, 7 * MIB, 2, 1, 1, 0);
	return r;
}

START_TEST(test_trace_tracks)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = trace_result();
	g_autoptr(GsEventLog) log = sample_log();
	g_autofree char *trace = gs_report_trace(w, r, log);

	tl_ck_json(trace);
	ck_assert(g_str_has_prefix(trace, "{\n  \"traceEvents\": [\n    {"));
	ck_assert(g_str_has_suffix(trace, "}\n  ],\n  \"displayTimeUnit\": \"ns\"\n}\n"));
	tl_ck_contains(trace, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
			   "\"args\":{\"name\":\"gpusim: basic-bufn\"}}");
	tl_ck_contains(trace, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,"
			   "\"args\":{\"name\":\"A.0\"}}");
	tl_ck_contains(trace, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
			   "\"args\":{\"name\":\"B.0\"}}");
	/* P is known only from the log: it comes after the result's threads. */
	tl_ck_contains(trace, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":3,"
			   "\"args\":{\"name\":\"P\"}}");
	tl_ck_contains(trace, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":3,"
			   "\"args\":{\"sort_index\":3}}");
	ck_assert_uint_eq(tl_count_of(trace, "\"thread_name\""), 3);
}
END_TEST

START_TEST(test_trace_slices)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = trace_result();
	g_autoptr(GsEventLog) log = sample_log();
	g_autofree char *trace = gs_report_trace(w, r, log);
	static const char *const slices[] = {
		"{\"name\":\"THREAD_RUNNING\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
		"\"ts\":0.000,\"dur\":1.000}",
		"{\"name\":\"THREAD_ALLOC\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
		"\"ts\":1.000,\"dur\":0.000}",
		"{\"name\":\"THREAD_RUNNING\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
		"\"ts\":1.000,\"dur\":2.000}",
		/* still running at the end: closed at the makespan */
		"{\"name\":\"THREAD_RUNNING\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":2,"
		"\"ts\":1.500,\"dur\":2.500}",
		"{\"name\":\"THREAD_BLOCKED\",\"cat\":\"state\",\"ph\":\"X\",\"pid\":1,\"tid\":3,"
		"\"ts\":3.100,\"dur\":0.900}",
	};
	const char *last = trace;

	for (guint i = 0; i < G_N_ELEMENTS(slices); i++) {
		const char *at = strstr(trace, slices[i]);

		ck_assert_msg(at != NULL, "missing slice %s in\n%s", slices[i], trace);
		ck_assert_msg(at > last, "slice %u out of order", i);
		last = at;
	}
	/* UNKNOWN draws nothing; every slice is listed above. */
	ck_assert_uint_eq(tl_count_of(trace, "\"ph\":\"X\""), G_N_ELEMENTS(slices));
	ck_assert_uint_eq(tl_count_of(trace, "\"UNKNOWN\""), 0);
}
END_TEST

START_TEST(test_trace_instants)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = trace_result();
	g_autoptr(GsEventLog) log = sample_log();
	g_autofree char *trace = gs_report_trace(w, r, log);

	tl_ck_contains(trace, "{\"name\":\"GpuRetryOOM\",\"cat\":\"throw\",\"ph\":\"i\",\"s\":\"t\","
			   "\"pid\":1,\"tid\":2,\"ts\":2.500,\"args\":{\"handled\":true}}");
	tl_ck_contains(trace, "{\"name\":\"deadlock: rollback\",\"cat\":\"deadlock\",\"ph\":\"i\","
			   "\"s\":\"t\",\"pid\":1,\"tid\":2,\"ts\":2.500,"
			   "\"args\":{\"victim\":\"B.0\",\"action\":\"rollback\"}}");
	ck_assert_uint_eq(tl_count_of(trace, "\"ph\":\"i\""), 2);
}
END_TEST

START_TEST(test_trace_counters)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = trace_result();
	g_autoptr(GsEventLog) log = sample_log();
	g_autofree char *trace = gs_report_trace(w, r, log);

	tl_ck_contains(trace, "{\"name\":\"gpu memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":1,"
			   "\"tid\":0,\"ts\":1234.567,\"args\":{\"used\":6291456,"
			   "\"charged\":7340032}}");
	tl_ck_contains(trace, "{\"name\":\"host memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":1,"
			   "\"tid\":0,\"ts\":1234.567,\"args\":{\"used\":2,\"charged\":2}}");
	tl_ck_contains(trace, "{\"name\":\"disk memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":1,"
			   "\"tid\":0,\"ts\":0.000,\"args\":{\"used\":0,\"charged\":0}}");
	tl_ck_contains(trace, "{\"name\":\"threads\",\"cat\":\"threads\",\"ph\":\"C\",\"pid\":1,"
			   "\"tid\":0,\"ts\":1234.567,\"args\":{\"running\":1,\"blocked\":1,"
			   "\"bufn\":0}}");
	ck_assert_uint_eq(tl_count_of(trace, "\"ph\":\"C\""), 2 * (GS_N_TIERS + 1));
}
END_TEST

START_TEST(test_trace_without_log)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = trace_result();
	g_autofree char *trace = gs_report_trace(w, r, NULL);

	tl_ck_json(trace);
	ck_assert_uint_eq(tl_count_of(trace, "\"thread_name\""), 2);
	ck_assert_uint_eq(tl_count_of(trace, "\"ph\":\"X\""), 0);
	ck_assert_uint_eq(tl_count_of(trace, "\"ph\":\"C\""), 2 * (GS_N_TIERS + 1));
}
END_TEST

/* ---- the timeline ---- */

START_TEST(test_timeline_csv)
{
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *csv = gs_report_timeline_csv(r);
	GsSample s = {.time = 2000000, .used = {1, 2, 3}, .charged = {4, 5, 6}, .running = 7,
		      .blocked = 8, .bufn = 9};
	g_autofree char *more = NULL;

	ck_assert_str_eq(csv, "time_ns,gpu_used,host_used,disk_used,gpu_charged,host_charged,"
			      "disk_charged,running,blocked,bufn\n"
			      "0,0,0,0,0,0,0,0,0,0\n"
			      "1000000,6291456,0,0,6291456,0,0,2,0,0\n"
			      "1500000,11534336,1048576,0,12582912,1048576,0,1,1,0\n");
	g_array_append_val(r->timeline, s);
	more = gs_report_timeline_csv(r);
	ck_assert(g_str_has_suffix(more, "\n2000000,1,2,3,4,5,6,7,8,9\n"));
}
END_TEST

START_TEST(test_timeline_empty)
{
	g_autoptr(GsResult) r = gs_result_new();
	g_autofree char *csv = gs_report_timeline_csv(r);

	ck_assert_str_eq(csv, "time_ns,gpu_used,host_used,disk_used,gpu_charged,host_charged,"
			      "disk_charged,running,blocked,bufn\n");
}
END_TEST

/* ---- the summary ---- */

static gboolean
has_line(const char *text, const char *line)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++)
		if (strcmp(lines[i], line) == 0)
			return TRUE;
	return FALSE;
}

static void
ck_line(const char *text, const char *line)
{
	ck_assert_msg(has_line(text, line), "missing line <%s> in:\n%s", line, text);
}

START_TEST(test_summary_lines)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *text = gs_report_summary(w, r, NULL);

	ck_line(text, "scenario      basic-bufn");
	ck_line(text, "outcome       completed");
	ck_line(text, "makespan      3.50 ms (3500000 ns, 42 events)");
	ck_line(text, "task  outcome    attempts  retries  splits    blocked       lost"
		      "  max footprint");
	ck_line(text, "A     completed         1        0       0       0 ns       0 ns"
		      "        6.0 MiB");
	ck_line(text, "B     completed         1        1       0    1.50 ms     500 us"
		      "        5.0 MiB");
	ck_line(text, "tasks         2: 2 completed, 0 failed; 2 attempts");
	ck_line(text, "retries       1, splits 0");
	ck_line(text, "time          blocked 1.50 ms, lost 500 us, spill-blocked 3 ns, "
		      "semaphore wait 4 ns");
	ck_line(text, "spilled       gpu->host 5 B, host->disk 6 B");
	ck_line(text, "unspilled     host->gpu 7 B, disk->host 8 B");
	ck_line(text, "leaked        10 B by 1 task (allocated and never freed)");
	ck_line(text, "refused       4 allocations: no room 3, fair share 1");
	ck_line(text, "peak memory   gpu     11.0 MiB of 10.0 MiB    mean    4.0 MiB"
		      "  peak charged 12.0 MiB");
	ck_line(text, "              host         0 B of 4.0 GiB     mean        0 B"
		      "  peak charged 0 B");
	ck_line(text, "              disk         0 B of 1.0 TiB     mean        0 B"
		      "  peak charged 0 B");
	ck_line(text, "deadlocks     1 busted, 0 unresolved");
	ck_assert_ptr_null(strstr(text, "expectation"));
	ck_assert_ptr_null(strstr(text, "still waiting"));
	ck_assert(g_str_has_suffix(text, "\n"));
}
END_TEST

/* The id column widens to the longest id; the variant is named. */
START_TEST(test_summary_layout)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *text = NULL;
	GsTaskResult *t = add_task(r, "long-task#12", GS_OUTCOME_DEADLOCK);

	t->attempts = 3;
	t->splits = 2;
	t->max_footprint = 300;
	w->variant = g_strdup("retry");
	text = gs_report_summary(w, r, NULL);
	ck_line(text, "scenario      basic-bufn (variant retry)");
	ck_line(text, "task          outcome    attempts  retries  splits    blocked       lost"
		      "  max footprint");
	ck_line(text, "A             completed         1        0       0       0 ns       0 ns"
		      "        6.0 MiB");
	ck_line(text, "long-task#12  deadlock          3        0       2       0 ns       0 ns"
		      "          300 B");
}
END_TEST

/*
 * Beyond 20 tasks (or the rows asked for) the summary gives their
 * distribution, nearest-rank percentiles, and the five slowest: here task
 * tI (I = 1..100) runs I ms and retries I / 10 times, blocked I us.
 */
static GsResult *
hundred_tasks(void)
{
	GsResult *r = gs_result_new();

	for (guint i = 1; i <= 100; i++) {
		g_autofree char *id = g_strdup_printf("t%u", i);
		GsTaskResult *t = add_task(r, id, GS_OUTCOME_COMPLETED);

		t->attempts = 1;
		t->end_ns = (GsTime) i * 1000000;
		t->retries = i / 10;
		t->blocked_ns = (GsTime) i * 1000;
	}
	return r;
}

START_TEST(test_summary_distribution)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = hundred_tasks();
	g_autofree char *text = gs_report_summary(w, r, NULL);
	g_autofree char *all = gs_report_summary_rows(w, r, NULL, G_MAXUINT);

	ck_line(text, "100 tasks             p50        p90        p99        max");
	ck_line(text, "time              50.0 ms    90.0 ms    99.0 ms     100 ms");
	ck_line(text, "retries                 5          9          9         10");
	ck_line(text, "splits                  0          0          0          0");
	ck_line(text, "blocked           50.0 us    90.0 us    99.0 us     100 us");
	ck_line(text, "the 5 slowest (every task: run --tasks, or --json)");
	ck_line(text, "t100  completed         1       10       0     100 us       0 ns"
		      "            0 B");
	ck_assert(strstr(text, "\nt100 ") < strstr(text, "\nt99 "));
	ck_assert(strstr(text, "\nt97 ") < strstr(text, "\nt96 "));
	ck_assert_ptr_null(strstr(text, "\nt95 "));
	/* Every task when asked, and the distribution then not at all. */
	ck_assert_ptr_nonnull(strstr(all, "\nt1 "));
	ck_assert_ptr_nonnull(strstr(all, "\nt95 "));
	ck_assert_ptr_null(strstr(all, "p50"));
}
END_TEST

/* 20 tasks are listed, 21 are not. */
START_TEST(test_summary_rows_limit)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = hundred_tasks();
	g_autofree char *twenty = NULL;
	g_autofree char *more = NULL;

	g_ptr_array_set_size(r->tasks, 0); /* rows are the result's: dropped, not freed */
	for (guint i = 0; i < 20; i++)
		add_task(r, "x", GS_OUTCOME_COMPLETED);
	twenty = gs_report_summary(w, r, NULL);
	add_task(r, "x", GS_OUTCOME_COMPLETED);
	more = gs_report_summary(w, r, NULL);
	ck_assert_ptr_null(strstr(twenty, "p50"));
	ck_assert_ptr_nonnull(strstr(more, "21 tasks"));
}
END_TEST

START_TEST(test_summary_no_tasks)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsResult) r = gs_result_new();
	g_autofree char *text = gs_report_summary(w, r, NULL);

	ck_line(text, "scenario      (unnamed)");
	ck_line(text, "no tasks");
}
END_TEST

START_TEST(test_summary_expectations)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	GsExpectReport report = {.checked = 4, .failed = g_ptr_array_new_with_free_func(g_free)};
	g_autofree char *held = NULL;
	g_autofree char *text = NULL;

	held = gs_report_summary(w, r, &report);
	ck_line(held, "expectations  4 checked, all held");
	g_ptr_array_add(report.failed, g_strdup("tasks.B.retries: expected == 1, observed 2"));
	g_ptr_array_add(report.failed, g_strdup("outcome: expected failed, observed completed"));
	text = gs_report_summary(w, r, &report);
	ck_line(text, "expectations  4 checked, 2 failed");
	ck_line(text, "expectation failed: tasks.B.retries: expected == 1, observed 2");
	ck_line(text, "expectation failed: outcome: expected failed, observed completed");
	ck_assert(strstr(text, "observed 2") < strstr(text, "observed completed"));
	g_ptr_array_unref(report.failed);
}
END_TEST

START_TEST(test_summary_waiting)
{
	g_autoptr(GsWorkload) w = sample_workload();
	g_autoptr(GsResult) r = sample_result();
	g_autofree char *text = NULL;
	GsThreadResult *a = g_ptr_array_index(r->threads, 0);
	GsThreadResult *b = g_ptr_array_index(r->threads, 1);

	r->outcome = GS_OUTCOME_DEADLOCK;
	a->waiting_at_end = b->waiting_at_end = TRUE;
	a->final_state = GS_THREAD_BLOCKED;
	b->final_state = GS_THREAD_BUFN;
	text = gs_report_summary(w, r, NULL);
	ck_line(text, "outcome       deadlock");
	ck_line(text, "still waiting A.0 (THREAD_BLOCKED), B.0 (THREAD_BUFN)");
}
END_TEST

/* ---- the suite ---- */

Suite *gs_test_suite_report(void);

Suite *
gs_test_suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc;

	tc = tcase_create("helpers");
	tcase_add_loop_test(tc, test_parser, 0, G_N_ELEMENTS(parser_rows));
	tcase_add_loop_test(tc, test_format_bytes, 0, G_N_ELEMENTS(bytes_rows));
	tcase_add_loop_test(tc, test_format_duration, 0, G_N_ELEMENTS(duration_rows));
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("events");
	tcase_add_test(tc, test_event_log_copies);
	tcase_add_loop_test(tc, test_event_line, 0, G_N_ELEMENTS(event_rows));
	tcase_add_test(tc, test_events_all_lines);
	tcase_add_test(tc, test_events_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, test_json_valid);
	tcase_add_test(tc, test_json_in_pieces);
	tcase_add_test(tc, test_json_header);
	tcase_add_test(tc, test_json_key_order);
	tcase_add_test(tc, test_json_variant);
	tcase_add_test(tc, test_json_policy_defaults);
	tcase_add_test(tc, test_json_policy_changed);
	tcase_add_test(tc, test_json_totals_tiers);
	tcase_add_test(tc, test_json_tasks_threads);
	tcase_add_test(tc, test_json_empty_result);
	tcase_add_test(tc, test_json_expectations);
	tcase_add_test(tc, test_json_deterministic);
	tcase_add_test(tc, test_json_escaping);
	suite_add_tcase(s, tc);

	tc = tcase_create("trace");
	tcase_add_test(tc, test_trace_tracks);
	tcase_add_test(tc, test_trace_slices);
	tcase_add_test(tc, test_trace_instants);
	tcase_add_test(tc, test_trace_counters);
	tcase_add_test(tc, test_trace_without_log);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeline");
	tcase_add_test(tc, test_timeline_csv);
	tcase_add_test(tc, test_timeline_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("summary");
	tcase_add_test(tc, test_summary_lines);
	tcase_add_test(tc, test_summary_layout);
	tcase_add_test(tc, test_summary_distribution);
	tcase_add_test(tc, test_summary_rows_limit);
	tcase_add_test(tc, test_summary_no_tasks);
	tcase_add_test(tc, test_summary_expectations);
	tcase_add_test(tc, test_summary_waiting);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_report());
}
