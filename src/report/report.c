/*
 * gpusim: the result writers of `gpusim run` (see report.h for the formats).
 *
 * This module decides the bytes of every output a run produces. All JSON goes
 * through one small writer (Json below) that knows three layouts: PRETTY (one
 * member per line, two-space indentation), INLINE (", " and ": " on one line)
 * and TIGHT (no spaces, as event lines are). Keys are written in a fixed
 * order, strings are escaped (invalid UTF-8 is repaired first), integers are
 * written exactly and the few floating-point values with the shortest text
 * that reads back to the same double, in the C locale. So the same input
 * gives the same bytes. Human units are formatted in the C locale as well.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

/* ---- names ---- */

const char *
gs_report_tier_name(GsTier tier)
{
	switch (tier) {
	case GS_TIER_GPU:
		return "gpu";
	case GS_TIER_HOST:
		return "host";
	case GS_TIER_DISK:
		return "disk";
	}
	return "invalid";
}

static const char *
oom_name(GsOomPolicy oom)
{
	return oom < GS_N_OOM_POLICIES ? gs_oom_policy_names[oom] : "invalid";
}

static const char *
priority_name(GsPriorityMode mode)
{
	switch (mode) {
	case GS_PRIORITY_FIFO:
		return "fifo";
	case GS_PRIORITY_TASK_ID:
		return "task_id";
	}
	return "invalid";
}

static const char *
split_victim_name(GsSplitVictim victim)
{
	switch (victim) {
	case GS_SPLIT_HIGHEST:
		return "highest";
	case GS_SPLIT_LOWEST:
		return "lowest";
	}
	return "invalid";
}

static const char *
spill_victim_name(GsSpillVictim victim)
{
	switch (victim) {
	case GS_VICTIM_LRU:
		return "lru";
	case GS_VICTIM_LARGEST:
		return "largest";
	case GS_VICTIM_SMALLEST_FIT:
		return "smallest_fit";
	case GS_VICTIM_PRIORITY:
		return "priority";
	}
	return "invalid";
}

static const char *
host_full_name(GsHostFull host_full)
{
	switch (host_full) {
	case GS_HOST_FULL_DISK:
		return "disk";
	case GS_HOST_FULL_FAIL:
		return "fail";
	}
	return "invalid";
}

static const char *
over_name(GsOverReservation over)
{
	switch (over) {
	case GS_OVER_IGNORE:
		return "ignore";
	case GS_OVER_FAIL:
		return "fail";
	case GS_OVER_INCREASE:
		return "increase";
	}
	return "invalid";
}

static const char *
attribution_name(GsAttribution attribution)
{
	switch (attribution) {
	case GS_ATTRIBUTION_ORIGIN:
		return "origin";
	case GS_ATTRIBUTION_STREAM:
		return "stream";
	}
	return "invalid";
}

static const char *
admission_name(GsAdmission admission)
{
	switch (admission) {
	case GS_ADMISSION_NONE:
		return "none";
	case GS_ADMISSION_FAIR_SHARE:
		return "fair_share";
	}
	return "invalid";
}

static const char *
bust_action_name(GsBustAction action)
{
	switch (action) {
	case GS_BUST_ROLLBACK:
		return "rollback";
	case GS_BUST_RETRY_ONCE:
		return "retry_once";
	case GS_BUST_SPLIT:
		return "split";
	}
	return "invalid";
}

/* ---- human units ---- */

/* @value with @decimals decimals, in the C locale. */
static void
append_fixed(GString *s, double value, int decimals)
{
	char format[8];
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_snprintf(format, sizeof format, "%%.%df", decimals);
	g_string_append(s, g_ascii_formatd(buf, sizeof buf, format, value));
}

char *
gs_format_bytes(gint64 bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	GString *s = g_string_new(NULL);
	double magnitude = bytes < 0 ? -(double) bytes : (double) bytes;
	guint u = 0;

	if (magnitude < 1024.0) {
		g_string_printf(s, "%" G_GINT64_FORMAT " B", bytes);
		return g_string_free(s, FALSE);
	}
	magnitude /= 1024.0;
	while (magnitude >= 1024.0 && u + 1 < G_N_ELEMENTS(units)) {
		magnitude /= 1024.0;
		u++;
	}
	if (bytes < 0)
		g_string_append_c(s, '-');
	append_fixed(s, magnitude, 1);
	g_string_append_printf(s, " %s", units[u]);
	return g_string_free(s, FALSE);
}

char *
gs_format_duration(GsTime ns)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
	GString *s = g_string_new(NULL);
	double magnitude = ns < 0 ? -(double) ns : (double) ns;
	guint u = 0;
	double v;

	if (magnitude < 1000.0) {
		g_string_printf(s, "%" G_GINT64_FORMAT " ns", ns);
		return g_string_free(s, FALSE);
	}
	while (u + 1 < G_N_ELEMENTS(units) && magnitude >= units[u + 1].scale)
		u++;
	v = magnitude / units[u].scale;
	if (ns < 0)
		g_string_append_c(s, '-');
	/* Three significant digits; "999.96 us" rounds to "1000 us", which is fine. */
	append_fixed(s, v, v < 10.0 ? 2 : v < 100.0 ? 1 : 0);
	g_string_append_printf(s, " %s", units[u].unit);
	return g_string_free(s, FALSE);
}

/* ---- a small JSON writer ---- */

typedef enum {
	STYLE_PRETTY, /* one member per line, indented */
	STYLE_INLINE, /* members on one line, ", " and ": " */
	STYLE_TIGHT,  /* members on one line, no spaces */
} Style;

#define JSON_MAX_DEPTH 16

/* What a writer holds before it hands a piece to its sink. */
#define JSON_PIECE (64 * 1024)

typedef struct {
	GString *s;
	guint depth;
	struct {
		Style style;
		gboolean first;
	} frames[JSON_MAX_DEPTH];
	GsReportSink sink; /* NULL: the text stays whole in s */
	gpointer sink_data;
	gboolean refused;  /* the sink refused a piece */
} Json;

static void
json_init(Json *j)
{
	memset(j, 0, sizeof *j);
	j->s = g_string_new(NULL);
}

/* With a sink, what the writer holds goes to it (all of it when @all, else once a piece is full). */
static void
json_hand_on(Json *j, gboolean all)
{
	if (j->sink == NULL || (!all && j->s->len < JSON_PIECE))
		return;
	if (!j->refused && j->s->len > 0)
		j->refused = !j->sink(j->s->str, j->s->len, j->sink_data);
	g_string_truncate(j->s, 0);
}

static char *
json_finish(Json *j)
{
	g_assert(j->depth == 0);
	json_hand_on(j, TRUE);
	if (j->sink != NULL) {
		g_string_free(j->s, TRUE);
		return NULL;
	}
	return g_string_free(j->s, FALSE);
}

/* What JSON strings must escape: the quote, the backslash and the control characters. */
static const char json_specials[] = "\"\\"
				    "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
				    "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f";

static void
append_escaped_char(GString *s, unsigned char c)
{
	switch (c) {
	case '"':
		g_string_append(s, "\\\"");
		break;
	case '\\':
		g_string_append(s, "\\\\");
		break;
	case '\n':
		g_string_append(s, "\\n");
		break;
	case '\r':
		g_string_append(s, "\\r");
		break;
	case '\t':
		g_string_append(s, "\\t");
		break;
	case '\b':
		g_string_append(s, "\\b");
		break;
	case '\f':
		g_string_append(s, "\\f");
		break;
	default:
		g_string_append_printf(s, "\\u%04x", c);
	}
}

/* Runs of plain characters go in one piece: event logs are mostly names and numbers. */
static void
append_escaped(GString *s, const char *text)
{
	g_autofree char *valid = NULL;

	if (!g_utf8_validate(text, -1, NULL))
		text = valid = g_utf8_make_valid(text, -1);
	g_string_append_c(s, '"');
	while (*text != '\0') {
		size_t plain = strcspn(text, json_specials);

		g_string_append_len(s, text, (gssize) plain);
		text += plain;
		if (*text != '\0')
			append_escaped_char(s, (unsigned char) *text++);
	}
	g_string_append_c(s, '"');
}

void
gs_report_append_json_string(GString *s, const char *text)
{
	append_escaped(s, text);
}

static void
newline(Json *j, guint depth)
{
	json_hand_on(j, FALSE);
	g_string_append_c(j->s, '\n');
	for (guint i = 0; i < depth; i++)
		g_string_append(j->s, "  ");
}

/* The separator before a member, and its key (NULL inside arrays and at the top). */
static void
json_key(Json *j, const char *key)
{
	Style style = STYLE_PRETTY;

	if (j->depth > 0) {
		gboolean first = j->frames[j->depth - 1].first;

		style = j->frames[j->depth - 1].style;
		if (!first)
			g_string_append_c(j->s, ',');
		if (style == STYLE_PRETTY)
			newline(j, j->depth);
		else if (style == STYLE_INLINE && !first)
			g_string_append_c(j->s, ' ');
		j->frames[j->depth - 1].first = FALSE;
	}
	if (key != NULL) {
		append_escaped(j->s, key);
		g_string_append(j->s, style == STYLE_TIGHT ? ":" : ": ");
	}
}

static void
json_open(Json *j, const char *key, char bracket, Style style)
{
	g_assert(j->depth < JSON_MAX_DEPTH);
	json_key(j, key);
	g_string_append_c(j->s, bracket);
	j->frames[j->depth].style = style;
	j->frames[j->depth].first = TRUE;
	j->depth++;
}

static void
json_close(Json *j, char bracket)
{
	g_assert(j->depth > 0);
	j->depth--;
	if (j->frames[j->depth].style == STYLE_PRETTY && !j->frames[j->depth].first)
		newline(j, j->depth);
	g_string_append_c(j->s, bracket);
}

static void
obj_begin(Json *j, const char *key, Style style)
{
	json_open(j, key, '{', style);
}

static void
obj_end(Json *j)
{
	json_close(j, '}');
}

static void
arr_begin(Json *j, const char *key, Style style)
{
	json_open(j, key, '[', style);
}

static void
arr_end(Json *j)
{
	json_close(j, ']');
}

/* A string member; NULL is written as null. */
static void
put_str(Json *j, const char *key, const char *value)
{
	json_key(j, key);
	if (value == NULL)
		g_string_append(j->s, "null");
	else
		append_escaped(j->s, value);
}

static void
put_int(Json *j, const char *key, gint64 value)
{
	json_key(j, key);
	g_string_append_printf(j->s, "%" G_GINT64_FORMAT, value);
}

static void
put_uint(Json *j, const char *key, guint64 value)
{
	json_key(j, key);
	g_string_append_printf(j->s, "%" G_GUINT64_FORMAT, value);
}

static void
put_bool(Json *j, const char *key, gboolean value)
{
	json_key(j, key);
	g_string_append(j->s, value ? "true" : "false");
}

/* A number already written as JSON. */
static void
put_raw(Json *j, const char *key, const char *number)
{
	json_key(j, key);
	g_string_append(j->s, number);
}

/* The shortest text that reads back to @value; null for NaN and infinities. */
static void
put_double(Json *j, const char *key, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	char format[8];

	if (!isfinite(value)) {
		put_raw(j, key, "null");
		return;
	}
	for (int precision = 1; precision <= 17; precision++) {
		g_snprintf(format, sizeof format, "%%.%dg", precision);
		g_ascii_formatd(buf, sizeof buf, format, value);
		if (g_ascii_strtod(buf, NULL) == value)
			break;
	}
	put_raw(j, key, buf);
}

/* Nanoseconds as microseconds with exactly three decimals: 1500 -> "1.500". */
static void
put_us(Json *j, const char *key, GsTime ns)
{
	char buf[40];
	guint64 magnitude = ns < 0 ? (guint64) 0 - (guint64) ns : (guint64) ns;

	g_snprintf(buf, sizeof buf, "%s%" G_GUINT64_FORMAT ".%03u", ns < 0 ? "-" : "",
		   magnitude / 1000, (guint) (magnitude % 1000));
	put_raw(j, key, buf);
}

/* ---- the event log ---- */

struct GsEventLog {
	GArray *entries;       /* GsLogEntry; their strings live in .strings */
	GStringChunk *strings;
};

GsEventLog *
gs_event_log_new(void)
{
	GsEventLog *log = g_new0(GsEventLog, 1);

	log->entries = g_array_new(FALSE, FALSE, sizeof(GsLogEntry));
	log->strings = g_string_chunk_new(4096);
	return log;
}

void
gs_event_log_free(GsEventLog *log)
{
	if (log == NULL)
		return;
	g_array_unref(log->entries);
	g_string_chunk_free(log->strings);
	g_free(log);
}

static const char *
keep(GsEventLog *log, const char *text)
{
	return text == NULL ? NULL : g_string_chunk_insert_const(log->strings, text);
}

void
gs_event_log_add(const GsLogEntry *entry, gpointer data)
{
	GsEventLog *log = data;
	GsLogEntry copy = *entry;

	g_return_if_fail(log != NULL && entry != NULL);
	copy.thread = keep(log, entry->thread);
	copy.task = keep(log, entry->task);
	copy.buf = keep(log, entry->buf);
	copy.owner = keep(log, entry->owner);
	copy.what = keep(log, entry->what);
	g_array_append_val(log->entries, copy);
}

const GArray *
gs_event_log_entries(const GsEventLog *log)
{
	g_return_val_if_fail(log != NULL, NULL);
	return log->entries;
}

/* ---- the result object ---- */

static void
write_policy(Json *j, const GsPolicy *p)
{
	obj_begin(j, "policy", STYLE_PRETTY);
	put_str(j, "oom", oom_name(p->oom));
	put_str(j, "priority", priority_name(p->priority));
	put_str(j, "split_victim", split_victim_name(p->split_victim));
	put_bool(j, "retry_before_bufn", p->retry_before_bufn);
	put_uint(j, "retry_cap", p->retry_cap);
	put_int(j, "watchdog_ns", p->watchdog);
	put_bool(j, "sleep_is_blocked", p->sleep_is_blocked);
	put_uint(j, "concurrent_gpu_tasks", p->concurrent_gpu_tasks);
	put_uint(j, "task_attempts", p->task_attempts);
	obj_begin(j, "spill", STYLE_INLINE);
	put_bool(j, "enabled", p->spill.enabled);
	put_str(j, "victim", spill_victim_name(p->spill.victim));
	put_bool(j, "on_demand", p->spill.on_demand);
	put_bool(j, "proactive", p->spill.proactive);
	put_str(j, "host_full", host_full_name(p->spill.host_full));
	obj_end(j);
	obj_begin(j, "reservations", STYLE_INLINE);
	put_str(j, "over", over_name(p->reservations.over));
	put_double(j, "increase_factor", p->reservations.increase_factor);
	put_str(j, "attribution", attribution_name(p->reservations.attribution));
	put_str(j, "blocking",
		p->reservations.blocking == GS_BLOCK_ON_CHANNEL ? "channel" : "whole");
	obj_end(j);
	put_str(j, "admission", admission_name(p->admission));
	put_bool(j, "evac_gate", p->evac_gate);
	obj_begin(j, "failure_callback", STYLE_INLINE);
	put_bool(j, "enabled", p->failure_callback.enabled);
	put_int(j, "allocate", p->failure_callback.allocate);
	put_uint(j, "retries", p->failure_callback.retries);
	obj_end(j);
	obj_end(j);
}

static void
write_totals(Json *j, const GsResult *r)
{
	obj_begin(j, "totals", STYLE_PRETTY);
	put_uint(j, "tasks", r->totals.tasks);
	put_uint(j, "tasks_completed", r->totals.tasks_completed);
	put_uint(j, "tasks_failed", r->totals.tasks_failed);
	put_uint(j, "task_attempts", r->totals.task_attempts);
	put_uint(j, "retries", r->totals.retries);
	put_uint(j, "splits", r->totals.splits);
	put_int(j, "blocked_ns", r->totals.blocked_ns);
	put_int(j, "lost_ns", r->totals.lost_ns);
	put_int(j, "spill_block_ns", r->totals.spill_block_ns);
	put_int(j, "semaphore_wait_ns", r->totals.semaphore_wait_ns);
	put_uint(j, "deadlocks_busted", r->totals.deadlocks_busted);
	put_uint(j, "deadlocks_unresolved", r->totals.deadlocks_unresolved);
	obj_begin(j, "spilled_bytes", STYLE_INLINE);
	put_int(j, "gpu_to_host", r->totals.spilled_gpu_to_host);
	put_int(j, "host_to_disk", r->totals.spilled_host_to_disk);
	obj_end(j);
	obj_begin(j, "unspilled_bytes", STYLE_INLINE);
	put_int(j, "host_to_gpu", r->totals.unspilled_host_to_gpu);
	put_int(j, "disk_to_host", r->totals.unspilled_disk_to_host);
	obj_end(j);
	put_uint(j, "copies_checked", r->totals.copies_checked);
	put_uint(j, "copies_lost", r->totals.copies_lost);
	put_int(j, "leaked_bytes", r->totals.leaked_bytes);
	put_uint(j, "host_pools", r->totals.host_pools);
	put_uint(j, "failure_callbacks", r->totals.failure_callbacks);
	put_uint(j, "failure_callback_allocs", r->totals.failure_callback_allocs);
	put_uint(j, "streams_grown", r->totals.streams_grown);
	obj_begin(j, "refused_allocations", STYLE_INLINE);
	for (guint why = 0; why < GS_N_REFUSALS; why++)
		put_uint(j, gs_refusal_name((GsRefusal) why), r->totals.refused[why]);
	obj_end(j);
	obj_end(j);
}

static void
write_tiers(Json *j, const GsResult *r)
{
	obj_begin(j, "tiers", STYLE_PRETTY);
	for (guint t = 0; t < GS_N_TIERS; t++) {
		const GsTierResult *tier = &r->tiers[t];

		obj_begin(j, gs_report_tier_name((GsTier) t), STYLE_INLINE);
		put_int(j, "capacity", tier->capacity);
		put_int(j, "peak_used", tier->peak_used);
		put_int(j, "mean_used", tier->mean_used);
		put_int(j, "peak_charged", tier->peak_charged);
		obj_end(j);
	}
	obj_end(j);
}

/*
 * The task's figures under the names of Spark-RAPIDS' task metrics
 * (GpuTaskMetrics), as the plugin reads them from RmmSpark; README's table
 * says what differs.
 */
static void
write_spark_metrics(Json *j, const GsTaskResult *t)
{
	obj_begin(j, "spark_rapids", STYLE_INLINE);
	put_uint(j, "gpuRetryCount", t->retries);
	put_uint(j, "gpuSplitAndRetryCount", t->splits);
	put_int(j, "gpuRetryBlockTime", t->blocked_ns);
	put_int(j, "gpuRetryComputationTime", t->lost_ns);
	put_int(j, "gpuMaxDeviceMemoryBytes", t->max_allocated);
	put_int(j, "gpuMaxTaskFootprint", t->max_footprint);
	obj_end(j);
}

static void
write_tasks(Json *j, const GsResult *r)
{
	arr_begin(j, "tasks", STYLE_PRETTY);
	for (guint i = 0; r->tasks != NULL && i < r->tasks->len; i++) {
		const GsTaskResult *t = g_ptr_array_index(r->tasks, i);

		obj_begin(j, NULL, STYLE_INLINE);
		put_str(j, "id", t->id);
		put_str(j, "outcome", gs_outcome_name(t->outcome));
		put_uint(j, "attempts", t->attempts);
		put_int(j, "start_ns", t->start_ns);
		put_int(j, "end_ns", t->end_ns);
		put_uint(j, "retries", t->retries);
		put_uint(j, "splits", t->splits);
		put_int(j, "blocked_ns", t->blocked_ns);
		put_int(j, "lost_ns", t->lost_ns);
		put_int(j, "max_footprint", t->max_footprint);
		put_int(j, "leaked_bytes", t->leaked_bytes);
		put_str(j, "failure",
			t->failure == GS_EXC_NONE ? NULL : gs_exception_name(t->failure));
		write_spark_metrics(j, t);
		obj_end(j);
	}
	arr_end(j);
}

static void
write_threads(Json *j, const GsResult *r)
{
	arr_begin(j, "threads", STYLE_PRETTY);
	for (guint i = 0; r->threads != NULL && i < r->threads->len; i++) {
		const GsThreadResult *t = g_ptr_array_index(r->threads, i);

		obj_begin(j, NULL, STYLE_INLINE);
		put_str(j, "name", t->name);
		put_str(j, "task", t->task);
		put_str(j, "kind", t->pool ? "pool" : "dedicated");
		put_str(j, "final_state", gs_thread_state_name(t->final_state));
		arr_begin(j, "states_reached", STYLE_INLINE);
		for (guint s = 0; s < GS_N_THREAD_STATES; s++) {
			if (t->reached & (1u << s))
				put_str(j, NULL, gs_thread_state_name((GsThreadState) s));
		}
		arr_end(j);
		arr_begin(j, "exceptions", STYLE_INLINE);
		for (guint e = 0; t->exceptions != NULL && e < t->exceptions->len; e++) {
			const GsSeenException *seen =
				&g_array_index(t->exceptions, GsSeenException, e);

			obj_begin(j, NULL, STYLE_INLINE);
			put_int(j, "time_ns", seen->time);
			put_str(j, "type", gs_exception_name(seen->exception));
			put_str(j, "op", seen->op);
			put_bool(j, "handled", seen->handled);
			obj_end(j);
		}
		arr_end(j);
		put_bool(j, "waiting_at_end", t->waiting_at_end);
		obj_end(j);
	}
	arr_end(j);
}

static void
write_expectations(Json *j, const GsExpectReport *report)
{
	obj_begin(j, "expectations", STYLE_PRETTY);
	put_uint(j, "checked", report != NULL ? report->checked : 0);
	arr_begin(j, "failed", STYLE_PRETTY);
	for (guint i = 0; report != NULL && report->failed != NULL && i < report->failed->len; i++)
		put_str(j, NULL, g_ptr_array_index(report->failed, i));
	arr_end(j);
	obj_end(j);
}

static char *
result_json(Json *j, const GsWorkload *w, const GsResult *r, const char *backend, gint64 wall_ns,
	    const GsExpectReport *expectations)
{
	obj_begin(j, NULL, STYLE_PRETTY);
	put_str(j, "schema", "gpusim-result/1");
	put_str(j, "gpusim_version", gs_version());
	put_str(j, "scenario", w->name);
	put_str(j, "variant", w->variant);
	put_str(j, "backend", backend);
	put_uint(j, "seed", r->seed);
	write_policy(j, &w->policy);
	put_str(j, "outcome", gs_outcome_name(r->outcome));
	if (r->stop_reason != NULL)
		put_str(j, "stop_reason", r->stop_reason);
	put_int(j, "makespan_ns", r->makespan_ns);
	put_uint(j, "events_processed", r->events_processed);
	put_int(j, "wall_ns", wall_ns);
	write_totals(j, r);
	write_tiers(j, r);
	write_tasks(j, r);
	write_threads(j, r);
	write_expectations(j, expectations);
	obj_end(j);
	g_string_append_c(j->s, '\n');
	return json_finish(j);
}

char *
gs_report_json(const GsWorkload *w, const GsResult *r, const char *backend, gint64 wall_ns,
	       const GsExpectReport *expectations)
{
	Json j;

	g_return_val_if_fail(w != NULL && r != NULL, NULL);
	json_init(&j);
	return result_json(&j, w, r, backend, wall_ns, expectations);
}

void
gs_report_json_to(const GsWorkload *w, const GsResult *r, const char *backend, gint64 wall_ns,
		  const GsExpectReport *expectations, GsReportSink sink, gpointer sink_data)
{
	Json j;

	g_return_if_fail(w != NULL && r != NULL && sink != NULL);
	json_init(&j);
	j.sink = sink;
	j.sink_data = sink_data;
	result_json(&j, w, r, backend, wall_ns, expectations);
}

gboolean
gs_report_json_write(GsOutput *out, const GsWorkload *w, const GsResult *r, const char *backend,
		     gint64 wall_ns, const GsExpectReport *expectations, GError **error)
{
	GsOutputWriter *writer = gs_output_writer_new(out, error);

	if (writer == NULL)
		return FALSE;
	gs_report_json_to(w, r, backend, wall_ns, expectations, gs_output_writer_add, writer);
	return gs_output_writer_close(writer, error);
}

/* ---- event lines ---- */

/* A page's entries carry its number and its address (the number in the top 13 bits). */
static gboolean
names_page(const GsLogEntry *e)
{
	return strcmp(e->what, "page") == 0 || (strcmp(e->what, "free_page") == 0 && e->bytes > 0);
}

/* What a Spark memory manager's event says: execution (@named a consumer) or storage (a block). */
static void
put_memory_manager(Json *j, const GsLogEntry *e, const char *ev, const char *named)
{
	static const char *const modes[GS_N_MEMORY_MODES] = {"on_heap", "off_heap"};

	put_str(j, "ev", ev);
	put_str(j, "what", e->what);
	put_str(j, "task", e->task);
	if (e->thread != NULL)
		put_str(j, "thread", e->thread);
	if (e->buf != NULL)
		put_str(j, named, e->buf);
	put_str(j, "mode", modes[e->mode]);
	put_int(j, "asked", e->asked);
	put_int(j, "bytes", e->bytes);
}

static void
write_execution_event(Json *j, const GsLogEntry *e)
{
	char address[24];

	put_memory_manager(j, e, "execution", "consumer");
	if (names_page(e)) {
		g_snprintf(address, sizeof address, "0x%016" G_GINT64_MODIFIER "x",
			   gs_page_encode(e->page, 0));
		put_uint(j, "page", e->page);
		put_str(j, "address", address);
	}
}

/* Host memory's pool, in a run with a pinned pool, and whether HostAlloc fell back to it. */
static void
put_pool(Json *j, const GsLogEntry *e)
{
	if (e->pool == NULL)
		return;
	put_str(j, "pool", e->pool);
	if (e->fallback)
		put_bool(j, "fallback", TRUE);
}

static void
write_storage_event(Json *j, const GsLogEntry *e)
{
	put_memory_manager(j, e, "storage", "block");
}

static void
write_event(Json *j, const GsLogEntry *e)
{
	obj_begin(j, NULL, STYLE_TIGHT);
	put_int(j, "t_ns", e->time);
	switch (e->kind) {
	case GS_LOG_STATE:
		put_str(j, "ev", "state");
		put_str(j, "thread", e->thread);
		put_str(j, "from", gs_thread_state_name(e->from));
		put_str(j, "to", gs_thread_state_name(e->to));
		break;
	case GS_LOG_THROW:
		put_str(j, "ev", "throw");
		put_str(j, "thread", e->thread);
		put_str(j, "type", gs_exception_name(e->exception));
		put_bool(j, "handled", e->handled);
		if (e->bytes > 0)
			put_int(j, "bytes", e->bytes);
		break;
	case GS_LOG_ALLOC:
		put_str(j, "ev", "alloc");
		put_str(j, "thread", e->thread);
		put_str(j, "buf", e->buf);
		put_int(j, "bytes", e->bytes);
		put_str(j, "tier", gs_report_tier_name(e->tier));
		put_pool(j, e);
		put_bool(j, "ok", e->ok);
		if (!e->ok)
			put_str(j, "reason", gs_refusal_name(e->refusal));
		if (e->usage > 0)
			put_int(j, "usage", e->usage);
		break;
	case GS_LOG_FREE:
		put_str(j, "ev", "free");
		put_str(j, "thread", e->thread);
		put_str(j, "buf", e->buf);
		put_int(j, "bytes", e->bytes);
		put_str(j, "tier", gs_report_tier_name(e->tier));
		put_pool(j, e);
		if (e->owner != NULL)
			put_str(j, "of", e->owner);
		break;
	case GS_LOG_DEADLOCK:
		put_str(j, "ev", "deadlock");
		put_str(j, "victim", e->thread);
		put_str(j, "action", bust_action_name(e->action));
		break;
	case GS_LOG_TASK:
		put_str(j, "ev", "task");
		put_str(j, "task", e->task);
		put_str(j, "what", e->what);
		break;
	case GS_LOG_SEMAPHORE:
		put_str(j, "ev", "semaphore");
		put_str(j, "task", e->task);
		put_str(j, "what", e->what);
		break;
	case GS_LOG_SPILL:
		put_str(j, "ev", e->what);
		put_str(j, "thread", e->thread);
		put_str(j, "buf", e->buf);
		put_str(j, "from", gs_report_tier_name(e->tier));
		put_pool(j, e);
		put_str(j, "to", gs_report_tier_name(e->to_tier));
		put_int(j, "bytes", e->bytes);
		put_bool(j, "ok", e->ok);
		break;
	case GS_LOG_RESERVE:
	case GS_LOG_RELEASE:
		put_str(j, "ev", e->kind == GS_LOG_RESERVE ? "reserve" : "release");
		put_str(j, "thread", e->thread);
		put_str(j, "res", e->buf);
		if (e->what != NULL)
			put_str(j, "outcome", e->what);
		put_str(j, "tier", gs_report_tier_name(e->tier));
		put_uint(j, "device", e->device);
		put_int(j, "bytes", e->bytes);
		break;
	case GS_LOG_GATE:
		put_str(j, "ev", "gate");
		put_str(j, "what", e->what);
		if (e->thread != NULL)
			put_str(j, "thread", e->thread);
		break;
	case GS_LOG_DOWNGRADE:
		put_str(j, "ev", "downgrade");
		put_str(j, "what", e->what);
		put_str(j, "tier", gs_report_tier_name(e->tier));
		put_uint(j, "device", e->device);
		put_int(j, "charged", e->bytes);
		break;
	case GS_LOG_FREE_WAIT:
		put_str(j, "ev", "free_wait");
		put_str(j, "thread", e->thread);
		put_str(j, "of", e->owner);
		put_str(j, "buf", e->buf);
		break;
	case GS_LOG_LEAK:
		put_str(j, "ev", "leak");
		put_str(j, "task", e->task);
		put_str(j, "thread", e->thread);
		put_int(j, "bytes", e->bytes);
		break;
	case GS_LOG_STREAM:
		put_str(j, "ev", "stream");
		put_str(j, "what", e->what);
		put_str(j, "thread", e->thread);
		put_str(j, "stream", e->buf);
		put_uint(j, "device", e->device);
		put_uint(j, "idle", e->count);
		break;
	case GS_LOG_HOST_POOLS:
		put_str(j, "ev", "host_pools");
		put_uint(j, "pools", e->count);
		put_int(j, "bytes", e->bytes);
		break;
	case GS_LOG_EXECUTION:
		write_execution_event(j, e);
		break;
	case GS_LOG_STORAGE:
		write_storage_event(j, e);
		break;
	case GS_LOG_MARK:
		put_str(j, "ev", "mark");
		put_str(j, "thread", e->thread);
		put_str(j, "what", e->what);
		break;
	case GS_LOG_VALUE:
		put_str(j, "ev", "value");
		put_str(j, "thread", e->thread);
		put_str(j, "name", e->buf);
		put_str(j, "what", e->what);
		put_int(j, "value", e->bytes);
		break;
	}
	obj_end(j);
}

char *
gs_report_event_line(const GsLogEntry *entry)
{
	Json j;

	g_return_val_if_fail(entry != NULL, NULL);
	json_init(&j);
	write_event(&j, entry);
	return json_finish(&j);
}

char *
gs_report_events(const GsEventLog *log)
{
	Json j;

	g_return_val_if_fail(log != NULL, NULL);
	json_init(&j);
	for (guint i = 0; i < log->entries->len; i++) {
		write_event(&j, &g_array_index(log->entries, GsLogEntry, i));
		g_string_append_c(j.s, '\n');
	}
	return json_finish(&j);
}

/* ---- the trace ---- */

/* The thread tracks: tid i + 1 is names[i]. */
typedef struct {
	GPtrArray *names;    /* const char*, borrowed from the result and the log */
	GHashTable *tid_of;  /* name -> GUINT_TO_POINTER(tid) */
	GArray *open;        /* OpenState, indexed by tid - 1 */
} Tracks;

typedef struct {
	GsThreadState state;
	GsTime since;
} OpenState;

static guint
track_of(Tracks *tracks, const char *name)
{
	gpointer tid;
	OpenState none = {GS_THREAD_UNKNOWN, 0};

	if (name == NULL)
		return 0;
	tid = g_hash_table_lookup(tracks->tid_of, name);
	if (tid != NULL)
		return GPOINTER_TO_UINT(tid);
	g_ptr_array_add(tracks->names, (gpointer) name);
	g_array_append_val(tracks->open, none);
	g_hash_table_insert(tracks->tid_of, (gpointer) name, GUINT_TO_POINTER(tracks->names->len));
	return tracks->names->len;
}

static void
trace_head(Json *j, const char *name, const char *ph, guint tid)
{
	obj_begin(j, NULL, STYLE_TIGHT);
	put_str(j, "name", name);
	put_str(j, "ph", ph);
	put_uint(j, "pid", 1);
	put_uint(j, "tid", tid);
}

static void
trace_slice(Json *j, guint tid, const OpenState *open, GsTime end)
{
	if (open->state == GS_THREAD_UNKNOWN)
		return;
	obj_begin(j, NULL, STYLE_TIGHT);
	put_str(j, "name", gs_thread_state_name(open->state));
	put_str(j, "cat", "state");
	put_str(j, "ph", "X");
	put_uint(j, "pid", 1);
	put_uint(j, "tid", tid);
	put_us(j, "ts", open->since);
	put_us(j, "dur", end > open->since ? end - open->since : 0);
	obj_end(j);
}

static void
trace_instant(Json *j, guint tid, const char *name, const char *cat, GsTime time)
{
	obj_begin(j, NULL, STYLE_TIGHT);
	put_str(j, "name", name);
	put_str(j, "cat", cat);
	put_str(j, "ph", "i");
	put_str(j, "s", "t");
	put_uint(j, "pid", 1);
	put_uint(j, "tid", tid);
	put_us(j, "ts", time);
}

static void
trace_counter(Json *j, const char *name, const char *cat, GsTime time)
{
	obj_begin(j, NULL, STYLE_TIGHT);
	put_str(j, "name", name);
	put_str(j, "cat", cat);
	put_str(j, "ph", "C");
	put_uint(j, "pid", 1);
	put_uint(j, "tid", 0);
	put_us(j, "ts", time);
}

/*
 * "reserve r", "release r", "gate close", "execution spill c1", "leak": an
 * instant's name on a thread's track.
 */
static void
memory_instant_name(const GsLogEntry *e, char *name, gsize size)
{
	switch (e->kind) {
	case GS_LOG_RESERVE:
		g_snprintf(name, size, "reserve %s", e->buf);
		break;
	case GS_LOG_RELEASE:
		g_snprintf(name, size, "release %s", e->buf);
		break;
	case GS_LOG_GATE:
		g_snprintf(name, size, "gate %s", e->what);
		break;
	case GS_LOG_EXECUTION:
		g_snprintf(name, size, "execution %s%s%s", e->what, e->buf != NULL ? " " : "",
			   e->buf != NULL ? e->buf : "");
		break;
	case GS_LOG_STORAGE:
		g_snprintf(name, size, "storage %s%s%s", e->what, e->buf != NULL ? " " : "",
			   e->buf != NULL ? e->buf : "");
		break;
	case GS_LOG_LEAK:
	case GS_LOG_STATE:
	case GS_LOG_THROW:
	case GS_LOG_ALLOC:
	case GS_LOG_FREE:
	case GS_LOG_FREE_WAIT:
	case GS_LOG_DEADLOCK:
	case GS_LOG_TASK:
	case GS_LOG_SEMAPHORE:
	case GS_LOG_SPILL:
	case GS_LOG_DOWNGRADE:
	case GS_LOG_HOST_POOLS:
	case GS_LOG_STREAM:
	case GS_LOG_MARK:
	case GS_LOG_VALUE:
		g_snprintf(name, size, "%s", e->kind == GS_LOG_LEAK ? "leak" : "memory");
		break;
	}
}

static void
trace_log(Json *j, Tracks *tracks, const GArray *entries, GsTime makespan)
{
	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);
		guint tid = track_of(tracks, e->thread);
		char name[64];

		switch (e->kind) {
		case GS_LOG_STATE: {
			OpenState *open;

			if (tid == 0)
				break;
			open = &g_array_index(tracks->open, OpenState, tid - 1);
			trace_slice(j, tid, open, e->time);
			open->state = e->to;
			open->since = e->time;
			break;
		}
		case GS_LOG_THROW:
			if (tid == 0)
				break;
			trace_instant(j, tid, gs_exception_name(e->exception), "throw", e->time);
			obj_begin(j, "args", STYLE_TIGHT);
			put_bool(j, "handled", e->handled);
			obj_end(j);
			obj_end(j);
			break;
		case GS_LOG_DEADLOCK:
			if (tid == 0)
				break;
			g_snprintf(name, sizeof name, "deadlock: %s", bust_action_name(e->action));
			trace_instant(j, tid, name, "deadlock", e->time);
			obj_begin(j, "args", STYLE_TIGHT);
			put_str(j, "victim", e->thread);
			put_str(j, "action", bust_action_name(e->action));
			obj_end(j);
			obj_end(j);
			break;
		case GS_LOG_SPILL:
			if (tid == 0)
				break;
			g_snprintf(name, sizeof name, "%s %s", e->what, e->buf);
			trace_instant(j, tid, name, "spill", e->time);
			obj_begin(j, "args", STYLE_TIGHT);
			put_str(j, "from", gs_report_tier_name(e->tier));
			put_str(j, "to", gs_report_tier_name(e->to_tier));
			put_int(j, "bytes", e->bytes);
			obj_end(j);
			obj_end(j);
			break;
		case GS_LOG_RESERVE:
		case GS_LOG_RELEASE:
		case GS_LOG_GATE:
		case GS_LOG_LEAK:
		case GS_LOG_EXECUTION:
		case GS_LOG_STORAGE:
			if (tid == 0)
				break;
			memory_instant_name(e, name, sizeof name);
			trace_instant(j, tid, name, "memory", e->time);
			obj_begin(j, "args", STYLE_TIGHT);
			put_int(j, "bytes", e->bytes);
			obj_end(j);
			obj_end(j);
			break;
		case GS_LOG_MARK:
			if (tid == 0)
				break;
			trace_instant(j, tid, e->what, "mark", e->time);
			obj_end(j);
			break;
		case GS_LOG_VALUE:
			if (tid == 0)
				break;
			g_snprintf(name, sizeof name, "%s %s", e->what, e->buf);
			trace_instant(j, tid, name, "value", e->time);
			obj_begin(j, "args", STYLE_TIGHT);
			put_int(j, "value", e->bytes);
			obj_end(j);
			obj_end(j);
			break;
		case GS_LOG_ALLOC:
		case GS_LOG_FREE:
		case GS_LOG_FREE_WAIT:
		case GS_LOG_TASK:
		case GS_LOG_SEMAPHORE:
		case GS_LOG_DOWNGRADE:
		case GS_LOG_HOST_POOLS:
		case GS_LOG_STREAM:
			break;
		}
	}
	for (guint t = 0; t < tracks->open->len; t++) {
		const OpenState *open = &g_array_index(tracks->open, OpenState, t);

		trace_slice(j, t + 1, open, MAX(makespan, open->since));
	}
}

static void
trace_counters(Json *j, const GsResult *r)
{
	static const char *const names[GS_N_TIERS] = {"gpu memory", "host memory", "disk memory"};

	for (guint i = 0; r->timeline != NULL && i < r->timeline->len; i++) {
		const GsSample *sample = &g_array_index(r->timeline, GsSample, i);

		for (guint t = 0; t < GS_N_TIERS; t++) {
			trace_counter(j, names[t], "memory", sample->time);
			obj_begin(j, "args", STYLE_TIGHT);
			put_int(j, "used", sample->used[t]);
			put_int(j, "charged", sample->charged[t]);
			obj_end(j);
			obj_end(j);
		}
		trace_counter(j, "threads", "threads", sample->time);
		obj_begin(j, "args", STYLE_TIGHT);
		put_uint(j, "running", sample->running);
		put_uint(j, "blocked", sample->blocked);
		put_uint(j, "bufn", sample->bufn);
		obj_end(j);
		obj_end(j);
	}
}

/* The trace of process @process: tracks for @r's threads (if any), then the log's. */
static char *
write_trace(const char *process, const GsResult *r, const GsEventLog *log, GsTime end)
{
	Tracks tracks;
	Json j;

	tracks.names = g_ptr_array_new();
	tracks.tid_of = g_hash_table_new(g_str_hash, g_str_equal);
	tracks.open = g_array_new(FALSE, FALSE, sizeof(OpenState));
	for (guint i = 0; r != NULL && r->threads != NULL && i < r->threads->len; i++)
		track_of(&tracks, ((const GsThreadResult *) g_ptr_array_index(r->threads, i))->name);
	for (guint i = 0; log != NULL && i < log->entries->len; i++)
		track_of(&tracks, g_array_index(log->entries, GsLogEntry, i).thread);

	json_init(&j);
	obj_begin(&j, NULL, STYLE_PRETTY);
	arr_begin(&j, "traceEvents", STYLE_PRETTY);
	trace_head(&j, "process_name", "M", 0);
	obj_begin(&j, "args", STYLE_TIGHT);
	put_str(&j, "name", process);
	obj_end(&j);
	obj_end(&j);
	for (guint t = 0; t < tracks.names->len; t++) {
		trace_head(&j, "thread_name", "M", t + 1);
		obj_begin(&j, "args", STYLE_TIGHT);
		put_str(&j, "name", g_ptr_array_index(tracks.names, t));
		obj_end(&j);
		obj_end(&j);
		trace_head(&j, "thread_sort_index", "M", t + 1);
		obj_begin(&j, "args", STYLE_TIGHT);
		put_uint(&j, "sort_index", t + 1);
		obj_end(&j);
		obj_end(&j);
	}
	if (log != NULL)
		trace_log(&j, &tracks, log->entries, end);
	if (r != NULL)
		trace_counters(&j, r);
	arr_end(&j);
	put_str(&j, "displayTimeUnit", "ns");
	obj_end(&j);
	g_string_append_c(j.s, '\n');

	g_ptr_array_unref(tracks.names);
	g_hash_table_unref(tracks.tid_of);
	g_array_unref(tracks.open);
	return json_finish(&j);
}

char *
gs_report_trace(const GsWorkload *w, const GsResult *r, const GsEventLog *log)
{
	g_autofree char *process = NULL;

	g_return_val_if_fail(w != NULL && r != NULL, NULL);
	process = g_strdup_printf("gpusim: %s", w->name != NULL ? w->name : "(unnamed)");
	return write_trace(process, r, log, r->makespan_ns);
}

char *
gs_report_log_trace(const char *process, const GsEventLog *log, GsTime end)
{
	g_return_val_if_fail(process != NULL && log != NULL, NULL);
	return write_trace(process, NULL, log, end);
}

/* ---- the timeline ---- */

char *
gs_report_timeline_csv(const GsResult *r)
{
	GString *s = g_string_new(
		"time_ns,gpu_used,host_used,disk_used,gpu_charged,host_charged,disk_charged,"
		"running,blocked,bufn\n");

	g_return_val_if_fail(r != NULL, g_string_free(s, FALSE));
	for (guint i = 0; r->timeline != NULL && i < r->timeline->len; i++) {
		const GsSample *x = &g_array_index(r->timeline, GsSample, i);

		g_string_append_printf(s, "%" G_GINT64_FORMAT, x->time);
		for (guint t = 0; t < GS_N_TIERS; t++)
			g_string_append_printf(s, ",%" G_GINT64_FORMAT, x->used[t]);
		for (guint t = 0; t < GS_N_TIERS; t++)
			g_string_append_printf(s, ",%" G_GINT64_FORMAT, x->charged[t]);
		g_string_append_printf(s, ",%u,%u,%u\n", x->running, x->blocked, x->bufn);
	}
	return g_string_free(s, FALSE);
}

/* ---- the human summary ---- */

/* @text padded with spaces to @width characters, on the left when @right. */
static void
cell(GString *s, const char *text, guint width, gboolean right)
{
	glong len = g_utf8_strlen(text, -1);
	guint pad = len < (glong) width ? width - (guint) len : 0;

	if (right)
		for (guint i = 0; i < pad; i++)
			g_string_append_c(s, ' ');
	g_string_append(s, text);
	if (!right)
		for (guint i = 0; i < pad; i++)
			g_string_append_c(s, ' ');
}

static void
cell_uint(GString *s, guint64 value, guint width)
{
	char buf[24];

	g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, value);
	cell(s, buf, width, TRUE);
}

static void
cell_duration(GString *s, GsTime ns, guint width)
{
	g_autofree char *text = gs_format_duration(ns);

	cell(s, text, width, TRUE);
}

static void
cell_bytes(GString *s, gint64 bytes, guint width)
{
	g_autofree char *text = gs_format_bytes(bytes);

	cell(s, text, width, TRUE);
}

/* The label column of the summary: labels are shorter, so a space always follows. */
#define LABEL_WIDTH 14

static void
label(GString *s, const char *text)
{
	cell(s, text, LABEL_WIDTH, FALSE);
}

/* The slowest tasks the summary shows when it does not list them all. */
#define SLOWEST_TASKS 5

/* A table of @n tasks (GsTaskResult*), one row each. */
static void
task_table(GString *s, GsTaskResult *const *tasks, guint n)
{
	guint id_width = 4;

	for (guint i = 0; i < n; i++) {
		glong len = tasks[i]->id != NULL ? g_utf8_strlen(tasks[i]->id, -1) : 0;

		id_width = MAX(id_width, (guint) len);
	}
	cell(s, "task", id_width, FALSE);
	g_string_append(s, "  outcome    attempts  retries  splits    blocked       lost"
			   "  max footprint\n");
	for (guint i = 0; i < n; i++) {
		const GsTaskResult *t = tasks[i];

		cell(s, t->id != NULL ? t->id : "", id_width, FALSE);
		g_string_append(s, "  ");
		cell(s, gs_outcome_name(t->outcome), 9, FALSE);
		cell_uint(s, t->attempts, 10);
		cell_uint(s, t->retries, 9);
		cell_uint(s, t->splits, 8);
		cell_duration(s, t->blocked_ns, 11);
		cell_duration(s, t->lost_ns, 11);
		cell_bytes(s, t->max_footprint, 15);
		g_string_append_c(s, '\n');
	}
}

static GsTime
task_time(const GsTaskResult *t)
{
	return MAX(0, t->end_ns - t->start_ns);
}

static int
compare_gint64(gconstpointer a, gconstpointer b)
{
	gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;

	return (x > y) - (x < y);
}

/* Slowest first; among equals, the earlier in the file first. */
static int
compare_slower(gconstpointer a, gconstpointer b)
{
	const GsTaskResult *x = *(GsTaskResult *const *) a, *y = *(GsTaskResult *const *) b;
	GsTime tx = task_time(x), ty = task_time(y);

	return (tx < ty) - (tx > ty);
}

/* The nearest-rank percentile @p (0 < @p <= 1) of @sorted, ascending and not empty. */
static gint64
percentile(const GArray *sorted, double p)
{
	guint rank = (guint) ceil(p * sorted->len);

	return g_array_index(sorted, gint64, CLAMP(rank, 1, sorted->len) - 1);
}

/* One row of the distribution: a task measure's p50, p90, p99 and max. */
static void
distribution_row(GString *s, const char *name, const GsResult *r, gint64 (*measure)(const GsTaskResult *),
		 gboolean duration)
{
	static const double points[] = {0.5, 0.9, 0.99, 1.0};
	g_autoptr(GArray) values = g_array_sized_new(FALSE, FALSE, sizeof(gint64), r->tasks->len);

	for (guint i = 0; i < r->tasks->len; i++) {
		gint64 v = measure(g_ptr_array_index(r->tasks, i));

		g_array_append_val(values, v);
	}
	g_array_sort(values, compare_gint64);
	label(s, name);
	for (guint i = 0; i < G_N_ELEMENTS(points); i++) {
		if (duration)
			cell_duration(s, percentile(values, points[i]), 11);
		else
			cell_uint(s, (guint64) percentile(values, points[i]), 11);
	}
	g_string_append_c(s, '\n');
}

static gint64
measure_time(const GsTaskResult *t)
{
	return task_time(t);
}

static gint64
measure_retries(const GsTaskResult *t)
{
	return (gint64) MIN(t->retries, (guint64) G_MAXINT64);
}

static gint64
measure_splits(const GsTaskResult *t)
{
	return (gint64) MIN(t->splits, (guint64) G_MAXINT64);
}

static gint64
measure_blocked(const GsTaskResult *t)
{
	return t->blocked_ns;
}

static gint64
measure_lost(const GsTaskResult *t)
{
	return t->lost_ns;
}

/* Too many tasks to list: how they are spread, and the slowest. */
static void
task_distribution(GString *s, const GsResult *r)
{
	g_autoptr(GPtrArray) slowest = g_ptr_array_copy(r->tasks, NULL, NULL);
	char heading[64];

	g_snprintf(heading, sizeof heading, "%u tasks", r->tasks->len);
	label(s, heading);
	g_string_append(s, "        p50        p90        p99        max\n");
	distribution_row(s, "time", r, measure_time, TRUE);
	distribution_row(s, "retries", r, measure_retries, FALSE);
	distribution_row(s, "splits", r, measure_splits, FALSE);
	distribution_row(s, "blocked", r, measure_blocked, TRUE);
	distribution_row(s, "lost", r, measure_lost, TRUE);
	g_string_append_printf(s, "\nthe %u slowest (every task: run --tasks, or --json)\n",
			       SLOWEST_TASKS);
	g_ptr_array_sort(slowest, compare_slower);
	task_table(s, (GsTaskResult *const *) slowest->pdata, MIN(SLOWEST_TASKS, slowest->len));
}

/* Every task, or beyond @rows of them their distribution. */
static void
summary_tasks(GString *s, const GsResult *r, guint rows)
{
	if (r->tasks == NULL || r->tasks->len == 0) {
		g_string_append(s, "no tasks\n");
		return;
	}
	if (r->tasks->len > rows) {
		task_distribution(s, r);
		return;
	}
	task_table(s, (GsTaskResult *const *) r->tasks->pdata, r->tasks->len);
}

/* What completed tasks left allocated (Spark's leak report), and how many left any. */
static void
summary_leaks(GString *s, const GsResult *r)
{
	g_autofree char *leaked = gs_format_bytes(r->totals.leaked_bytes);
	guint tasks = 0;

	for (guint i = 0; r->tasks != NULL && i < r->tasks->len; i++)
		tasks += ((const GsTaskResult *) r->tasks->pdata[i])->leaked_bytes > 0;
	label(s, "leaked");
	g_string_append_printf(s, "%s by %u task%s (allocated and never freed)\n", leaked, tasks,
			       tasks == 1 ? "" : "s");
}

/* How many allocations were refused, and why, when any were (a wait's retries count again). */
static void
summary_refusals(GString *s, const GsResult *r)
{
	guint64 all = 0;

	for (guint why = 0; why < GS_N_REFUSALS; why++)
		all += r->totals.refused[why];
	if (all == 0)
		return;
	label(s, "refused");
	g_string_append_printf(s, "%" G_GUINT64_FORMAT " allocation%s:", all, all == 1 ? "" : "s");
	for (guint why = 0, n = 0; why < GS_N_REFUSALS; why++) {
		g_autofree char *name = NULL;

		if (r->totals.refused[why] == 0)
			continue;
		name = g_strdelimit(g_strdup(gs_refusal_name((GsRefusal) why)), "_", ' ');
		g_string_append_printf(s, "%s %s %" G_GUINT64_FORMAT, n++ > 0 ? "," : "", name,
				       r->totals.refused[why]);
	}
	g_string_append_c(s, '\n');
}

static void
summary_totals(GString *s, const GsResult *r)
{
	g_autofree char *blocked = gs_format_duration(r->totals.blocked_ns);
	g_autofree char *lost = gs_format_duration(r->totals.lost_ns);
	g_autofree char *spill_block = gs_format_duration(r->totals.spill_block_ns);
	g_autofree char *semaphore = gs_format_duration(r->totals.semaphore_wait_ns);
	g_autofree char *g2h = gs_format_bytes(r->totals.spilled_gpu_to_host);
	g_autofree char *h2d = gs_format_bytes(r->totals.spilled_host_to_disk);
	g_autofree char *h2g = gs_format_bytes(r->totals.unspilled_host_to_gpu);
	g_autofree char *d2h = gs_format_bytes(r->totals.unspilled_disk_to_host);

	label(s, "tasks");
	g_string_append_printf(s, "%u: %u completed, %u failed; %u attempts\n", r->totals.tasks,
			       r->totals.tasks_completed, r->totals.tasks_failed,
			       r->totals.task_attempts);
	label(s, "retries");
	g_string_append_printf(s, "%" G_GUINT64_FORMAT ", splits %" G_GUINT64_FORMAT "\n",
			       r->totals.retries, r->totals.splits);
	label(s, "time");
	g_string_append_printf(s, "blocked %s, lost %s, spill-blocked %s, semaphore wait %s\n",
			       blocked, lost, spill_block, semaphore);
	label(s, "spilled");
	g_string_append_printf(s, "gpu->host %s, host->disk %s\n", g2h, h2d);
	label(s, "unspilled");
	g_string_append_printf(s, "host->gpu %s, disk->host %s\n", h2g, d2h);
	if (r->totals.leaked_bytes > 0)
		summary_leaks(s, r);
	summary_refusals(s, r);
	if (r->totals.copies_checked > 0) {
		label(s, "copies");
		g_string_append_printf(s, "%" G_GUINT64_FORMAT " checked, %" G_GUINT64_FORMAT
				       " with data lost or duplicated\n",
				       r->totals.copies_checked, r->totals.copies_lost);
	}
}

static void
summary_tiers(GString *s, const GsResult *r)
{
	for (guint t = 0; t < GS_N_TIERS; t++) {
		const GsTierResult *tier = &r->tiers[t];
		g_autofree char *peak = gs_format_bytes(tier->peak_used);
		g_autofree char *capacity = gs_format_bytes(tier->capacity);
		g_autofree char *mean = gs_format_bytes(tier->mean_used);
		g_autofree char *charged = gs_format_bytes(tier->peak_charged);

		label(s, t == 0 ? "peak memory" : "");
		cell(s, gs_report_tier_name((GsTier) t), 6, FALSE);
		cell(s, peak, 10, TRUE);
		g_string_append(s, " of ");
		cell(s, capacity, 10, FALSE);
		g_string_append(s, "  mean ");
		cell(s, mean, 10, TRUE);
		g_string_append(s, "  peak charged ");
		g_string_append(s, charged);
		g_string_append_c(s, '\n');
	}
}

char *
gs_report_summary(const GsWorkload *w, const GsResult *r, const GsExpectReport *expectations)
{
	return gs_report_summary_rows(w, r, expectations, GS_SUMMARY_TASK_ROWS);
}

char *
gs_report_summary_rows(const GsWorkload *w, const GsResult *r,
		       const GsExpectReport *expectations, guint task_rows)
{
	GString *s = g_string_new(NULL);
	g_autofree char *makespan = NULL;
	gboolean any_waiting = FALSE;

	g_return_val_if_fail(w != NULL && r != NULL, g_string_free(s, FALSE));
	makespan = gs_format_duration(r->makespan_ns);
	label(s, "scenario");
	g_string_append(s, w->name != NULL ? w->name : "(unnamed)");
	if (w->variant != NULL)
		g_string_append_printf(s, " (variant %s)", w->variant);
	g_string_append_c(s, '\n');
	label(s, "outcome");
	g_string_append(s, gs_outcome_name(r->outcome));
	if (r->stop_reason != NULL)
		g_string_append_printf(s, ": %s", r->stop_reason);
	g_string_append_c(s, '\n');
	label(s, "makespan");
	g_string_append_printf(s, "%s (%" G_GINT64_FORMAT " ns, %" G_GUINT64_FORMAT " events)\n",
			       makespan, r->makespan_ns, r->events_processed);
	g_string_append_c(s, '\n');
	summary_tasks(s, r, task_rows);
	g_string_append_c(s, '\n');
	summary_totals(s, r);
	summary_tiers(s, r);
	label(s, "deadlocks");
	g_string_append_printf(s, "%" G_GUINT64_FORMAT " busted, %" G_GUINT64_FORMAT
			       " unresolved\n",
			       r->totals.deadlocks_busted, r->totals.deadlocks_unresolved);
	for (guint i = 0; r->threads != NULL && i < r->threads->len; i++) {
		const GsThreadResult *t = g_ptr_array_index(r->threads, i);

		if (!t->waiting_at_end)
			continue;
		if (!any_waiting)
			label(s, "still waiting");
		g_string_append_printf(s, "%s%s (%s)", any_waiting ? ", " : "", t->name,
				       gs_thread_state_name(t->final_state));
		any_waiting = TRUE;
	}
	if (any_waiting)
		g_string_append_c(s, '\n');
	if (expectations != NULL) {
		guint failed = expectations->failed != NULL ? expectations->failed->len : 0;

		label(s, "expectations");
		if (failed == 0)
			g_string_append_printf(s, "%u checked, all held\n", expectations->checked);
		else
			g_string_append_printf(s, "%u checked, %u failed\n", expectations->checked,
					       failed);
		for (guint i = 0; i < failed; i++)
			g_string_append_printf(s, "expectation failed: %s\n",
					       (const char *) g_ptr_array_index(
						       expectations->failed, i));
	}
	return g_string_free(s, FALSE);
}
