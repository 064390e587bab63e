/*
 * gpusim: checking a run against its expectations (see expect.h for the keys).
 *
 * This module decides whether each expectation held and how a failure reads.
 * Values are looked up by key in small tables (totals, task fields), each row
 * saying how to read the value off the result and whether it is a count, a
 * duration or a size, so that a failure shows the observed value in the
 * expectation's own unit: "makespan: expected <= 2000000 ns (2.00 ms),
 * observed 3500000 ns (3.50 ms)". Failures are collected in scenario order:
 * values, then threads, then `at` rows.
 */
#include "config.h"

#include <string.h>

#include "report/expect.h"
#include "report/report.h"
#include "tiers/memory.h"

typedef enum {
	UNIT_COUNT,
	UNIT_NS,
	UNIT_BYTES,
} Unit;

/* @value in @unit: "2", "1500000 ns (1.50 ms)", "6291456 B (6.0 MiB)". */
static char *
value_text(gint64 value, Unit unit)
{
	g_autofree char *human = NULL;

	switch (unit) {
	case UNIT_COUNT:
		return g_strdup_printf("%" G_GINT64_FORMAT, value);
	case UNIT_NS:
		if (value > -1000 && value < 1000)
			return g_strdup_printf("%" G_GINT64_FORMAT " ns", value);
		human = gs_format_duration(value);
		return g_strdup_printf("%" G_GINT64_FORMAT " ns (%s)", value, human);
	case UNIT_BYTES:
		if (value > -1024 && value < 1024)
			return g_strdup_printf("%" G_GINT64_FORMAT " B", value);
		human = gs_format_bytes(value);
		return g_strdup_printf("%" G_GINT64_FORMAT " B (%s)", value, human);
	}
	return g_strdup("?");
}

static void
fail(GsExpectReport *report, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
fail(GsExpectReport *report, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	g_ptr_array_add(report->failed, g_strdup_vprintf(format, args));
	va_end(args);
}

/* Compares a number; on failure records "KEY: expected OP V, observed O". */
static void
check_number(GsExpectReport *report, const char *key, GsCmp cmp, gint64 observed, Unit unit)
{
	g_autofree char *expected = NULL;
	g_autofree char *seen = NULL;

	report->checked++;
	if (gs_cmp_holds(cmp, observed))
		return;
	expected = value_text(cmp.value, unit);
	seen = value_text(observed, unit);
	fail(report, "%s: expected %s %s, observed %s", key, gs_cmp_op_text(cmp.op), expected, seen);
}

/* Compares an outcome word (== or !=). */
static void
check_outcome(GsExpectReport *report, const GsExpectValue *v, GsOutcome observed)
{
	const char *word = gs_outcome_name(observed);
	gboolean equal = v->text != NULL && strcmp(v->text, word) == 0;
	gboolean negate = v->cmp.op == GS_CMP_NE;

	report->checked++;
	if (equal != negate)
		return;
	fail(report, "%s: expected %s%s, observed %s", v->key, negate ? "!= " : "",
	     v->text != NULL ? v->text : "(nothing)", word);
}

/* ---- totals ---- */

typedef struct {
	const char *name;
	const char *alias; /* NULL or another spelling */
	Unit unit;
	gsize offset;      /* into GsResult */
	gsize size;        /* of the field: guint, guint64 or gint64 */
} TotalField;

#define TOTAL(name, alias, unit, field)                                                  \
	{                                                                                \
		name, alias, unit, G_STRUCT_OFFSET(GsResult, totals.field),              \
			sizeof(((GsResult *) NULL)->totals.field)                        \
	}

static const TotalField total_fields[] = {
	TOTAL("tasks", NULL, UNIT_COUNT, tasks),
	TOTAL("tasks_completed", NULL, UNIT_COUNT, tasks_completed),
	TOTAL("tasks_failed", NULL, UNIT_COUNT, tasks_failed),
	TOTAL("task_attempts", NULL, UNIT_COUNT, task_attempts),
	TOTAL("retries", NULL, UNIT_COUNT, retries),
	TOTAL("splits", NULL, UNIT_COUNT, splits),
	TOTAL("blocked_ns", "blocked", UNIT_NS, blocked_ns),
	TOTAL("lost_ns", "lost", UNIT_NS, lost_ns),
	TOTAL("spill_block_ns", "spill_block", UNIT_NS, spill_block_ns),
	TOTAL("semaphore_wait_ns", "semaphore_wait", UNIT_NS, semaphore_wait_ns),
	TOTAL("deadlocks_busted", NULL, UNIT_COUNT, deadlocks_busted),
	TOTAL("deadlocks_unresolved", NULL, UNIT_COUNT, deadlocks_unresolved),
	TOTAL("spilled_bytes.gpu_to_host", "spilled_gpu_to_host", UNIT_BYTES,
	      spilled_gpu_to_host),
	TOTAL("spilled_bytes.host_to_disk", "spilled_host_to_disk", UNIT_BYTES,
	      spilled_host_to_disk),
	TOTAL("unspilled_bytes.host_to_gpu", "unspilled_host_to_gpu", UNIT_BYTES,
	      unspilled_host_to_gpu),
	TOTAL("unspilled_bytes.disk_to_host", "unspilled_disk_to_host", UNIT_BYTES,
	      unspilled_disk_to_host),
	TOTAL("copies_checked", NULL, UNIT_COUNT, copies_checked),
	TOTAL("copies_lost", NULL, UNIT_COUNT, copies_lost),
	TOTAL("leaked_bytes", NULL, UNIT_BYTES, leaked_bytes),
	TOTAL("host_pools", NULL, UNIT_COUNT, host_pools),
	TOTAL("failure_callbacks", NULL, UNIT_COUNT, failure_callbacks),
	TOTAL("failure_callback_allocs", NULL, UNIT_COUNT, failure_callback_allocs),
	TOTAL("streams_grown", NULL, UNIT_COUNT, streams_grown),
};

#undef TOTAL

/* Reads an unsigned or signed integer field of @size bytes at @p. */
static gint64
read_field(const void *p, gsize size, gboolean is_signed)
{
	if (size == sizeof(guint))
		return is_signed ? *(const gint *) p : (gint64) *(const guint *) p;
	return is_signed ? *(const gint64 *) p : (gint64) *(const guint64 *) p;
}

static gboolean
field_matches(const char *name, const char *want, const char *alias)
{
	return strcmp(name, want) == 0 || (alias != NULL && strcmp(name, alias) == 0);
}

static void
check_total(GsExpectReport *report, const GsExpectValue *v, const GsResult *r, const char *name)
{
	for (guint i = 0; i < G_N_ELEMENTS(total_fields); i++) {
		const TotalField *f = &total_fields[i];

		if (field_matches(name, f->name, f->alias)) {
			/* Times and bytes are signed (GsTime, gint64); counts unsigned. */
			gint64 observed = read_field((const char *) r + f->offset, f->size,
						     f->unit != UNIT_COUNT);

			check_number(report, v->key, v->cmp, observed, f->unit);
			return;
		}
	}
	report->checked++;
	fail(report, "%s: no such total", v->key);
}

/* ---- tasks ---- */

static const GsTaskResult *
find_task(const GsResult *r, const char *id)
{
	for (guint i = 0; r->tasks != NULL && i < r->tasks->len; i++) {
		const GsTaskResult *t = g_ptr_array_index(r->tasks, i);

		if (t->id != NULL && strcmp(t->id, id) == 0)
			return t;
	}
	return NULL;
}

/* "tasks.ID.FIELD": ID may itself contain dots; FIELD never does. */
static void
check_task(GsExpectReport *report, const GsExpectValue *v, const GsResult *r, const char *rest)
{
	const char *dot = strrchr(rest, '.');
	g_autofree char *id = NULL;
	const char *field;
	const GsTaskResult *t;

	if (dot == NULL || dot == rest) {
		report->checked++;
		fail(report, "%s: not a task field (tasks.ID.FIELD)", v->key);
		return;
	}
	id = g_strndup(rest, (gsize) (dot - rest));
	field = dot + 1;
	t = find_task(r, id);
	if (t == NULL) {
		report->checked++;
		fail(report, "%s: no task %s in the run", v->key, id);
		return;
	}
	if (strcmp(field, "outcome") == 0)
		check_outcome(report, v, t->outcome);
	else if (strcmp(field, "attempts") == 0)
		check_number(report, v->key, v->cmp, t->attempts, UNIT_COUNT);
	else if (strcmp(field, "retries") == 0)
		check_number(report, v->key, v->cmp, (gint64) t->retries, UNIT_COUNT);
	else if (strcmp(field, "splits") == 0)
		check_number(report, v->key, v->cmp, (gint64) t->splits, UNIT_COUNT);
	else if (field_matches(field, "blocked_ns", "blocked"))
		check_number(report, v->key, v->cmp, t->blocked_ns, UNIT_NS);
	else if (field_matches(field, "lost_ns", "lost"))
		check_number(report, v->key, v->cmp, t->lost_ns, UNIT_NS);
	else if (field_matches(field, "start_ns", "start"))
		check_number(report, v->key, v->cmp, t->start_ns, UNIT_NS);
	else if (field_matches(field, "end_ns", "end"))
		check_number(report, v->key, v->cmp, t->end_ns, UNIT_NS);
	else if (strcmp(field, "max_footprint") == 0)
		check_number(report, v->key, v->cmp, t->max_footprint, UNIT_BYTES);
	else if (strcmp(field, "leaked_bytes") == 0)
		check_number(report, v->key, v->cmp, t->leaked_bytes, UNIT_BYTES);
	else {
		report->checked++;
		fail(report, "%s: no such task field", v->key);
	}
}

static void
check_value(GsExpectReport *report, const GsExpectValue *v, const GsResult *r)
{
	if (strcmp(v->key, "outcome") == 0)
		check_outcome(report, v, r->outcome);
	else if (field_matches(v->key, "makespan", "makespan_ns"))
		check_number(report, v->key, v->cmp, r->makespan_ns, UNIT_NS);
	else if (g_str_has_prefix(v->key, "totals."))
		check_total(report, v, r, v->key + strlen("totals."));
	else if (g_str_has_prefix(v->key, "tasks."))
		check_task(report, v, r, v->key + strlen("tasks."));
	else {
		report->checked++;
		fail(report, "%s: unknown expectation", v->key);
	}
}

/* ---- threads ---- */

/* The last row named @name: a task's later attempts come after its earlier ones. */
static const GsThreadResult *
find_thread(const GsResult *r, const char *name)
{
	for (guint i = r->threads != NULL ? r->threads->len : 0; i > 0; i--) {
		const GsThreadResult *t = g_ptr_array_index(r->threads, i - 1);

		if (t->name != NULL && strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

/* "[A, B]" of the states whose bits are set in @mask, in enum order. */
static char *
states_text(guint32 mask)
{
	GString *s = g_string_new("[");
	gboolean first = TRUE;

	for (guint i = 0; i < GS_N_THREAD_STATES; i++) {
		if (!(mask & (1u << i)))
			continue;
		g_string_append_printf(s, "%s%s", first ? "" : ", ",
				       gs_thread_state_name((GsThreadState) i));
		first = FALSE;
	}
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

static char *
states_list_text(const GArray *states)
{
	GString *s = g_string_new("[");

	for (guint i = 0; states != NULL && i < states->len; i++)
		g_string_append_printf(s, "%s%s", i > 0 ? ", " : "",
				       gs_thread_state_name(g_array_index(states, GsThreadState, i)));
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

static void
check_reached(GsExpectReport *report, const GsExpectThread *e, const GsThreadResult *t)
{
	guint32 missing = 0;
	g_autofree char *want = NULL;
	g_autofree char *lacking = NULL;
	g_autofree char *seen = NULL;

	report->checked++;
	for (guint i = 0; i < e->reached->len; i++) {
		GsThreadState state = g_array_index(e->reached, GsThreadState, i);

		if (!(t->reached & (1u << state)))
			missing |= 1u << state;
	}
	if (missing == 0)
		return;
	want = states_list_text(e->reached);
	lacking = states_text(missing);
	seen = states_text(t->reached);
	fail(report, "threads.%s.reached: expected %s, never reached %s; observed %s", e->thread,
	     want, lacking, seen);
}

static char *
exceptions_text(const GArray *list, gboolean seen)
{
	GString *s = g_string_new("[");

	for (guint i = 0; list != NULL && i < list->len; i++) {
		GsException exc = seen ? g_array_index(list, GsSeenException, i).exception
				       : g_array_index(list, GsException, i);

		g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", gs_exception_name(exc));
	}
	g_string_append_c(s, ']');
	return g_string_free(s, FALSE);
}

static void
check_threw(GsExpectReport *report, const GsExpectThread *e, const GsThreadResult *t)
{
	guint n_seen = t->exceptions != NULL ? t->exceptions->len : 0;
	gboolean same = n_seen == e->threw->len;
	g_autofree char *want = NULL;
	g_autofree char *seen = NULL;

	report->checked++;
	for (guint i = 0; same && i < n_seen; i++) {
		if (g_array_index(t->exceptions, GsSeenException, i).exception !=
		    g_array_index(e->threw, GsException, i))
			same = FALSE;
	}
	if (same)
		return;
	want = exceptions_text(e->threw, FALSE);
	seen = exceptions_text(t->exceptions, TRUE);
	fail(report, "threads.%s.threw: expected %s, observed %s", e->thread, want, seen);
}

/* One check: no state the thread must never enter was entered, no exception it must never throw thrown. */
static void
check_never(GsExpectReport *report, const GsExpectThread *e, const GsThreadResult *t)
{
	g_autoptr(GString) seen = g_string_new(NULL);

	report->checked++;
	for (guint i = 0; i < e->never_in->len; i++) {
		GsThreadState state = g_array_index(e->never_in, GsThreadState, i);

		if (t->reached & (1u << state))
			g_string_append_printf(seen, "%sentered %s", seen->len > 0 ? "; " : "",
					       gs_thread_state_name(state));
	}
	for (guint i = 0; i < e->never_threw->len; i++) {
		GsException exc = g_array_index(e->never_threw, GsException, i);
		guint times = 0;

		for (guint k = 0; t->exceptions != NULL && k < t->exceptions->len; k++)
			times += g_array_index(t->exceptions, GsSeenException, k).exception == exc;
		if (times > 0)
			g_string_append_printf(seen, "%sthrew %s %u time%s", seen->len > 0 ? "; " : "",
					       gs_exception_name(exc), times, times > 1 ? "s" : "");
	}
	if (seen->len > 0)
		fail(report, "threads.%s.never: %s", e->thread, seen->str);
}

/*
 * An entry's value for a series: a grant, a page number or a leak of an
 * execution entry; a storage answer, 1 or 0.
 */
static gboolean
series_value(const GsLogEntry *e, const char *series, gint64 *value)
{
	if (e->kind == GS_LOG_STORAGE) {
		if (strcmp(series, "stored") != 0)
			return FALSE;
		if (strcmp(e->what, "store") == 0)
			*value = 1;
		else if (strcmp(e->what, "refuse") == 0 || strcmp(e->what, "too_large") == 0)
			*value = 0;
		else
			return FALSE;
		return TRUE;
	}
	if (e->kind != GS_LOG_EXECUTION)
		return FALSE;
	if (strcmp(series, "acquired") == 0 && strcmp(e->what, "acquire") == 0)
		*value = e->bytes;
	else if (strcmp(series, "pages") == 0 && strcmp(e->what, "page") == 0)
		*value = e->page;
	else if (strcmp(series, "leaked") == 0 && strcmp(e->what, "clean_up") == 0)
		*value = e->bytes;
	else
		return FALSE;
	return TRUE;
}

/* "[1, 2]", or "[true, false]" for answers (@answers). */
static char *
values_text(const GArray *values, gboolean answers)
{
	GString *text = g_string_new("[");

	for (guint i = 0; i < values->len; i++) {
		gint64 v = g_array_index(values, gint64, i);

		if (answers)
			g_string_append_printf(text, "%s%s", i > 0 ? ", " : "", v ? "true" : "false");
		else
			g_string_append_printf(text, "%s%" G_GINT64_FORMAT, i > 0 ? ", " : "", v);
	}
	g_string_append_c(text, ']');
	return g_string_free(text, FALSE);
}

/*
 * threads.NAME.acquired / pages / leaked: what the thread's execution ops
 * returned, in order, from the event log.
 */
static void
check_series(GsExpectReport *report, const GsExpectThread *e, const char *series,
	     const GArray *want, const GsEventLog *log)
{
	g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(gint64));
	gboolean answers = strcmp(series, "stored") == 0;
	g_autofree char *want_text = values_text(want, answers);
	g_autofree char *seen_text = NULL;
	const GArray *entries;
	gint64 value;

	report->checked++;
	if (log == NULL) {
		fail(report, "threads.%s.%s: no event log to check against", e->thread, series);
		return;
	}
	entries = gs_event_log_entries(log);
	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *x = &g_array_index(entries, GsLogEntry, i);

		if (x->thread != NULL && strcmp(x->thread, e->thread) == 0 &&
		    series_value(x, series, &value))
			g_array_append_val(seen, value);
	}
	seen_text = values_text(seen, answers);
	if (strcmp(want_text, seen_text) != 0)
		fail(report, "threads.%s.%s: expected %s, observed %s", e->thread, series,
		     want_text, seen_text);
}

/* threads.NAME.values: each value at the thread's end, its last value entry or its start. */
static void
check_values(GsExpectReport *report, const GsExpectThread *e, const GsEventLog *log)
{
	const GArray *entries;

	if (log == NULL) {
		report->checked++;
		fail(report, "threads.%s.values: no event log to check against", e->thread);
		return;
	}
	entries = gs_event_log_entries(log);
	for (guint i = 0; i < e->values->len; i++) {
		const GsExpectThreadValue *want = &g_array_index(e->values, GsExpectThreadValue, i);
		g_autofree char *key = g_strdup_printf("threads.%s.values.%s", e->thread,
						       want->name);
		gint64 value = want->start;

		for (guint k = 0; k < entries->len; k++) {
			const GsLogEntry *x = &g_array_index(entries, GsLogEntry, k);

			if (x->kind == GS_LOG_VALUE && strcmp(x->thread, e->thread) == 0 &&
			    strcmp(x->buf, want->name) == 0 && strcmp(x->what, "checkpoint") != 0)
				value = x->bytes;
		}
		check_number(report, key, want->cmp, value, UNIT_COUNT);
	}
}

static void
check_thread(GsExpectReport *report, const GsExpectThread *e, const GsResult *r,
	     const GsEventLog *log)
{
	const GsThreadResult *t = find_thread(r, e->thread);
	gboolean has_reached = e->reached != NULL && e->reached->len > 0;

	if (t == NULL) {
		report->checked++;
		fail(report, "threads.%s: no thread %s in the run", e->thread, e->thread);
		return;
	}
	if (has_reached)
		check_reached(report, e, t);
	if (e->threw != NULL)
		check_threw(report, e, t);
	if (e->never_in != NULL)
		check_never(report, e, t);
	if (e->acquired != NULL)
		check_series(report, e, "acquired", e->acquired, log);
	if (e->pages != NULL)
		check_series(report, e, "pages", e->pages, log);
	if (e->leaked != NULL)
		check_series(report, e, "leaked", e->leaked, log);
	if (e->values != NULL)
		check_values(report, e, log);
	if (e->stored != NULL)
		check_series(report, e, "stored", e->stored, log);
	if (e->has_final_state) {
		report->checked++;
		if (t->final_state != e->final_state)
			fail(report, "threads.%s.final_state: expected %s, observed %s", e->thread,
			     gs_thread_state_name(e->final_state),
			     gs_thread_state_name(t->final_state));
	}
}

/* ---- at ---- */

/* The thread's state after every event at or before @time; UNKNOWN if never seen. */
static GsThreadState
state_at(const GArray *entries, const char *thread, GsTime time)
{
	GsThreadState state = GS_THREAD_UNKNOWN;

	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);

		if (e->time > time)
			continue;
		if (e->kind == GS_LOG_STATE && e->thread != NULL && strcmp(e->thread, thread) == 0)
			state = e->to;
	}
	return state;
}

/* The host pool a measure reads ("pinned" or "non_pinned"), or NULL for the whole tier. */
static const char *
measure_pool(GsTierMeasure measure)
{
	if (!gs_tier_measure_is_pool(measure))
		return NULL;
	return measure == GS_MEASURE_PINNED ? "pinned" : "non_pinned";
}

/* Whether entry @e's host side is in @pool (NULL: any); a spill's pool is its host side's. */
static gboolean
in_pool(const GsLogEntry *e, const char *pool)
{
	return pool == NULL || (e->pool != NULL && strcmp(e->pool, pool) == 0);
}

/*
 * What entry @e, one of a task's threads', does to the bytes the task holds
 * in @tier (in @pool of the host, unless NULL).
 */
static gint64
task_bytes_change(const GsLogEntry *e, GsTier tier, const char *pool)
{
	gint64 change = 0;

	if (!in_pool(e, pool))
		return 0;
	if (e->kind == GS_LOG_ALLOC && e->ok && e->tier == tier)
		change = e->bytes;
	else if (e->kind == GS_LOG_FREE && e->tier == tier)
		change = -e->bytes;
	else if (e->kind == GS_LOG_SPILL && e->ok)
		change = (e->to_tier == tier ? e->bytes : 0) - (e->tier == tier ? e->bytes : 0);
	return change;
}

/* The names of @task's threads (every attempt's). */
static GHashTable *
task_threads(const GsResult *r, const char *task)
{
	GHashTable *threads = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; r->threads != NULL && i < r->threads->len; i++) {
		const GsThreadResult *t = g_ptr_array_index(r->threads, i);

		if (t->task != NULL && strcmp(t->task, task) == 0)
			g_hash_table_add(threads, t->name);
	}
	return threads;
}

/*
 * The bytes @task's threads (every attempt's; every thread's if @task is
 * NULL) held in @tier (in @pool of the host, unless NULL) after every event
 * at or before @time, replayed from the log's allocations, frees and
 * copies.
 */
static gint64
task_used_at(const GArray *entries, const GsResult *r, const char *task, GsTier tier,
	     const char *pool, GsTime time)
{
	g_autoptr(GHashTable) threads = task != NULL ? task_threads(r, task) : NULL;
	gint64 used = 0;

	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);
		/* A free of another thread's buffer leaves the owner's books. */
		const char *holder = e->owner != NULL ? e->owner : e->thread;

		if (e->time <= time && holder != NULL &&
		    (threads == NULL || g_hash_table_contains(threads, holder)))
			used += task_bytes_change(e, tier, pool);
	}
	return used;
}

/*
 * What execution entry @e does to the bytes held by its task (@consumer
 * NULL) or by one consumer; clean_up empties them all (*@reset).
 */
static gint64
execution_change(const GsLogEntry *e, const char *consumer, gboolean *reset)
{
	gint64 sign = 0;

	*reset = strcmp(e->what, "clean_up") == 0;
	if (consumer != NULL && (e->buf == NULL || strcmp(e->buf, consumer) != 0))
		return 0;
	if (strcmp(e->what, "acquire") == 0 || strcmp(e->what, "page") == 0)
		sign = 1;
	else if (strcmp(e->what, "release") == 0 || strcmp(e->what, "spill") == 0 ||
		 strcmp(e->what, "free_page") == 0)
		sign = -1;
	return sign * e->bytes;
}

/*
 * The execution memory @task held after every event at or before @time
 * (all of it, or @consumer's), replayed from the log's execution entries.
 */
static gint64
execution_at(const GArray *entries, const char *task, const char *consumer, GsTime time)
{
	gint64 held = 0;
	gboolean reset;

	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);
		gint64 change;

		if (e->time > time || e->kind != GS_LOG_EXECUTION || strcmp(e->task, task) != 0)
			continue;
		change = execution_change(e, consumer, &reset);
		held = reset ? 0 : held + change;
	}
	return held;
}

static void
check_at_execution(GsExpectReport *report, const char *key, const GsExpectAt *a,
		   const GsEventLog *log)
{
	g_autofree char *what = NULL;

	if (a->consumer != NULL)
		what = g_strdup_printf("%s: task %s's consumer %s used at %" G_GINT64_FORMAT " ns",
				       key, a->task, a->consumer, a->time);
	else
		what = g_strdup_printf("%s: task %s's execution memory at %" G_GINT64_FORMAT " ns",
				       key, a->task, a->time);
	if (log == NULL) {
		report->checked++;
		fail(report, "%s: no event log to check against", what);
		return;
	}
	check_number(report, what, a->bytes,
		     execution_at(gs_event_log_entries(log), a->task, a->consumer, a->time),
		     UNIT_BYTES);
}

/* ---- the memory manager's pools ---- */

/* The pools of one mode, replayed from the log. */
typedef struct {
	gint64 storage_used, storage_size, execution_used;
	gint64 evict_asked, evicted; /* in the window */
} Pools;

/* What storage entry @e does to @p. */
static void
storage_change(const GsLogEntry *e, Pools *p)
{
	if (strcmp(e->what, "store") == 0)
		p->storage_used += e->bytes;
	else if (strcmp(e->what, "release") == 0 || strcmp(e->what, "evict") == 0)
		p->storage_used -= e->bytes;
	else if (strcmp(e->what, "borrow") == 0)
		p->storage_size += e->bytes;
	else if (strcmp(e->what, "reclaim") == 0)
		p->storage_size -= e->bytes;
}

/*
 * Execution memory of one mode over all tasks: each task's held bytes
 * replayed as execution_at does, clean_up emptying the task's in both modes.
 */
static gint64
execution_used_at(const GArray *entries, GsMemoryMode mode, GsTime time)
{
	g_autoptr(GHashTable) held = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	GHashTableIter iter;
	gpointer value;
	gint64 used = 0;

	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);
		gint64 *task;
		gboolean reset;
		gint64 change;

		if (e->time > time || e->kind != GS_LOG_EXECUTION)
			continue;
		task = g_hash_table_lookup(held, e->task);
		if (task == NULL) {
			task = g_new0(gint64, GS_N_MEMORY_MODES);
			g_hash_table_insert(held, (gpointer) e->task, task);
		}
		change = execution_change(e, NULL, &reset);
		if (reset)
			memset(task, 0, GS_N_MEMORY_MODES * sizeof *task);
		else
			task[e->mode] += change;
	}
	g_hash_table_iter_init(&iter, held);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		used += ((gint64 *) value)[mode];
	return used;
}

static Pools
pools_at(const GsWorkload *w, const GArray *entries, const GsExpectAt *a, GsMemoryMode mode)
{
	Pools p = {.storage_size = gs_storage_region(w->execution.pool[mode],
						      w->execution.storage_fraction)};

	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);

		if (e->time > a->time || e->kind != GS_LOG_STORAGE || e->mode != mode)
			continue;
		storage_change(e, &p);
		if (strcmp(e->what, "evict") == 0 && e->time > a->since) {
			p.evict_asked += e->asked;
			p.evicted += e->bytes;
		}
	}
	p.execution_used = execution_used_at(entries, mode, a->time);
	return p;
}

/* What @a reads of its pool, in its mode or both together. */
static Pools
pools_read(const GsWorkload *w, const GArray *entries, const GsExpectAt *a, gint64 *bytes)
{
	Pools sum = {0};

	*bytes = 0;
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++) {
		Pools p;

		if (!a->all_modes && m != a->mode)
			continue;
		p = pools_at(w, entries, a, (GsMemoryMode) m);
		sum.evict_asked += p.evict_asked;
		sum.evicted += p.evicted;
		if (a->pool_storage)
			*bytes += a->pool_free ? p.storage_size - p.storage_used : p.storage_used;
		else
			*bytes += a->pool_free ? w->execution.pool[m] - p.storage_size -
							 p.execution_used
					       : p.execution_used;
	}
	return sum;
}

static void
check_at_pool(GsExpectReport *report, const char *key, const GsExpectAt *a, const GsWorkload *w,
	      const GsEventLog *log)
{
	static const char *const modes[] = {"on_heap ", "off_heap "};
	const char *mode = a->all_modes ? "" : modes[a->mode];
	const char *pool = a->pool_storage ? "storage" : "execution";
	g_autofree char *what = NULL;
	gint64 bytes;
	Pools p;

	if (log == NULL) {
		report->checked++;
		fail(report, "%s: no event log to check against", key);
		return;
	}
	p = pools_read(w, gs_event_log_entries(log), a, &bytes);
	if (a->has_evict_asked || a->has_evicted) {
		what = g_strdup_printf("%s: %s%s evictions from %" G_GINT64_FORMAT " to %"
				       G_GINT64_FORMAT " ns", key, mode, pool, a->since, a->time);
		if (a->has_evict_asked)
			check_number(report, what, a->evict_asked, p.evict_asked, UNIT_BYTES);
		if (a->has_evicted)
			check_number(report, what, a->evicted, p.evicted, UNIT_BYTES);
		return;
	}
	what = g_strdup_printf("%s: %s%s memory %s at %" G_GINT64_FORMAT " ns", key, mode, pool,
			       a->pool_free ? "free" : "used", a->time);
	check_number(report, what, a->bytes, bytes, UNIT_BYTES);
}

/* What a task's threads did in a window: RmmSpark's getAndReset metrics. */
typedef struct {
	gint64 retries, splits, max_gpu, lost;
} TaskWindow;

/*
 * @task's retry and split-and-retry throws in (@since, @time], and the most
 * GPU bytes its threads held right after an allocation in that window (0
 * without one), replayed from the event log; and the running time their
 * throws in the window threw away, from the result's lost samples.
 */
static TaskWindow
task_window(const GArray *entries, const GsResult *r, const char *task, GsTime since,
	    GsTime time)
{
	g_autoptr(GHashTable) threads = task_threads(r, task);
	TaskWindow w = {0};
	gint64 used = 0;

	for (guint i = 0; i < entries->len; i++) {
		const GsLogEntry *e = &g_array_index(entries, GsLogEntry, i);
		gboolean inside = e->time > since && e->time <= time;

		if (e->time > time || e->thread == NULL || !g_hash_table_contains(threads, e->thread))
			continue;
		used += task_bytes_change(e, GS_TIER_GPU, NULL);
		if (!inside)
			continue;
		if (e->kind == GS_LOG_ALLOC && e->ok && e->tier == GS_TIER_GPU)
			w.max_gpu = MAX(w.max_gpu, used);
		if (e->kind == GS_LOG_THROW && (e->exception == GS_EXC_GPU_RETRY_OOM ||
						e->exception == GS_EXC_CPU_RETRY_OOM))
			w.retries++;
		if (e->kind == GS_LOG_THROW && (e->exception == GS_EXC_GPU_SPLIT_AND_RETRY_OOM ||
						e->exception == GS_EXC_CPU_SPLIT_AND_RETRY_OOM))
			w.splits++;
	}
	for (guint i = 0; r->lost != NULL && i < r->lost->len; i++) {
		const GsLostTime *x = &g_array_index(r->lost, GsLostTime, i);

		if (x->time > since && x->time <= time && g_hash_table_contains(threads, x->thread))
			w.lost += x->lost;
	}
	return w;
}

static void
check_at_window(GsExpectReport *report, const char *key, const GsExpectAt *a, const GsResult *r,
		const GsEventLog *log)
{
	g_autofree char *what = g_strdup_printf("%s: task %s from %" G_GINT64_FORMAT " to %"
						G_GINT64_FORMAT " ns", key, a->task, a->since,
						a->time);
	g_autofree char *retries = g_strdup_printf("%s, retries", what);
	g_autofree char *splits = g_strdup_printf("%s, splits", what);
	g_autofree char *max_gpu = g_strdup_printf("%s, max_gpu", what);
	g_autofree char *lost = g_strdup_printf("%s, lost", what);
	TaskWindow w;

	if (log == NULL) {
		report->checked++;
		fail(report, "%s: no event log to check against", what);
		return;
	}
	w = task_window(gs_event_log_entries(log), r, a->task, a->since, a->time);
	if (a->has_retries)
		check_number(report, retries, a->retries, w.retries, UNIT_COUNT);
	if (a->has_splits)
		check_number(report, splits, a->splits, w.splits, UNIT_COUNT);
	if (a->has_max_gpu)
		check_number(report, max_gpu, a->max_gpu, w.max_gpu, UNIT_BYTES);
	if (a->has_lost)
		check_number(report, lost, a->lost, w.lost, UNIT_NS);
}

/* The last sample at or before @time, NULL before the first one. */
static const GsSample *
sample_at(const GsResult *r, GsTime time)
{
	const GsSample *found = NULL;

	for (guint i = 0; r->timeline != NULL && i < r->timeline->len; i++) {
		const GsSample *sample = &g_array_index(r->timeline, GsSample, i);

		if (sample->time > time)
			break;
		found = sample;
	}
	return found;
}

/*
 * What @a reads of its tier at its time, the tier's spaces together: used
 * or charged bytes from the last sample; available is each space's
 * capacity less what is charged there, max_memory each one's reservation
 * limit (cuCascade's get_available_memory and get_max_memory).
 */
/* The highest charged bytes of @tier in the samples at or before @time. */
static gint64
peak_charged_at(const GsResult *r, GsTier tier, GsTime time)
{
	gint64 peak = 0;

	for (guint i = 0; r->timeline != NULL && i < r->timeline->len; i++) {
		const GsSample *sample = &g_array_index(r->timeline, GsSample, i);

		if (sample->time > time)
			break;
		peak = MAX(peak, sample->charged[tier]);
	}
	return peak;
}

/* Whether @v is of the reservation @thread holds by @name. */
static gboolean
same_reservation(const GsReservationView *v, const char *thread, const char *name)
{
	return strcmp(v->thread, thread) == 0 && strcmp(v->name, name) == 0;
}

/*
 * The reservations of @tier held at @time, by each one's last view at or
 * before it: what they hold (reserved) or how many there are.
 */
static gint64
held_reservations_at(const GsResult *r, GsTier tier, GsTime time, gboolean count)
{
	/* A reservation is its holder's name and its own: the first's length keeps them apart. */
	g_autoptr(GHashTable) last = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GHashTableIter iter;
	gpointer view;
	gint64 total = 0;

	for (guint i = 0; i < r->reservations->len; i++) {
		const GsReservationView *v = &g_array_index(r->reservations, GsReservationView, i);

		if (v->time > time)
			break;
		g_hash_table_insert(last, g_strdup_printf("%zu:%s%s", strlen(v->thread), v->thread, v->name),
				    (gpointer) v);
	}
	g_hash_table_iter_init(&iter, last);
	while (g_hash_table_iter_next(&iter, NULL, &view)) {
		const GsReservationView *v = view;

		if (v->held && v->tier == tier)
			total += count ? 1 : v->size;
	}
	return total;
}

static gint64
tier_measure_at(const GsWorkload *w, const GsResult *r, const GsExpectAt *a)
{
	const GsSample *sample = sample_at(r, a->time);
	GsSpaceThresholds space = gs_memory_space_thresholds(w, a->tier);
	guint spaces = gs_memory_spaces(w, a->tier);
	gint64 charged = sample != NULL ? sample->charged[a->tier] : 0;

	switch (a->measure) {
	case GS_MEASURE_USED:
		return sample != NULL ? sample->used[a->tier] : 0;
	case GS_MEASURE_CHARGED:
		return charged;
	case GS_MEASURE_AVAILABLE:
		return MAX(0, space.capacity * spaces - charged);
	case GS_MEASURE_MAX_MEMORY:
		return space.reservation_limit * spaces;
	case GS_MEASURE_PEAK_CHARGED:
		return peak_charged_at(r, a->tier, a->time);
	case GS_MEASURE_RESERVED:
		return held_reservations_at(r, a->tier, a->time, FALSE);
	case GS_MEASURE_RESERVATIONS:
		return held_reservations_at(r, a->tier, a->time, TRUE);
	case GS_MEASURE_PINNED:
	case GS_MEASURE_NON_PINNED:
		break; /* replayed from the event log (check_at_pool()) */
	}
	return 0;
}

/* The last view of @a's reservation at or before its time; NULL if none. */
static const GsReservationView *
reservation_at(const GsResult *r, const GsExpectAt *a)
{
	const GsReservationView *found = NULL;

	for (guint i = 0; i < r->reservations->len; i++) {
		const GsReservationView *v = &g_array_index(r->reservations, GsReservationView, i);

		if (v->time > a->time)
			break;
		if (same_reservation(v, a->thread, a->reservation))
			found = v;
	}
	return found;
}

/*
 * What @a reads of a thread's reservation. One not held has no counters (0
 * bytes, device -1), and its stream sees the space's available memory;
 * allocated is never below 0 (cuCascade clamps a stream's count, which frees
 * of other streams' buffers may take below 0, but not what it has left).
 */
static gint64
reservation_measure_at(const GsWorkload *w, const GsResult *r, const GsExpectAt *a)
{
	const GsReservationView *v = reservation_at(r, a);
	gboolean held = v != NULL && v->held;
	GsTier tier = held ? v->tier : a->tier;
	const GsSample *sample = sample_at(r, a->time);
	gint64 charged = sample != NULL ? sample->charged[tier] : 0;
	gint64 space = gs_memory_space_thresholds(w, tier).capacity;

	switch (a->res_measure) {
	case GS_RES_SIZE:
		return held ? v->size : 0;
	case GS_RES_ALLOCATED:
		return held ? MAX(0, v->allocated) : 0;
	case GS_RES_PEAK:
		return held ? MAX(0, v->peak) : 0;
	case GS_RES_AVAILABLE:
		return MAX(0, space - charged) + (held ? MAX(0, v->size - v->allocated) : 0);
	case GS_RES_DEVICE:
		return held ? (gint64) v->device : -1;
	}
	return 0;
}

/*
 * A row the event log answers: a task's bytes in a tier, or the bytes in
 * one of the host's pools (a task's, or every thread's), replayed.
 */
static void
check_at_replayed(GsExpectReport *report, const char *key, const GsExpectAt *a,
		  const GsResult *r, const GsEventLog *log)
{
	const char *pool = measure_pool(a->measure);
	const char *measured = pool != NULL ? pool : gs_report_tier_name(a->tier);
	g_autofree char *whose = a->task != NULL
					 ? g_strdup_printf("task %s's %s", a->task, measured)
					 : g_strdup(measured);
	g_autofree char *what =
		g_strdup_printf("%s: %s used at %" G_GINT64_FORMAT " ns", key, whose, a->time);

	if (log == NULL) {
		report->checked++;
		fail(report, "%s: no event log to check against", what);
		return;
	}
	check_number(report, what, a->bytes,
		     task_used_at(gs_event_log_entries(log), r, a->task, a->tier, pool, a->time),
		     UNIT_BYTES);
}

static void
check_at(GsExpectReport *report, guint index, const GsExpectAt *a, const GsWorkload *w,
	 const GsResult *r, const GsEventLog *log)
{
	char key[64];

	g_snprintf(key, sizeof key, "at[%u]", index);
	if (a->reservation != NULL) {
		static const char *const measures[] = {"size", "allocated", "peak", "available",
						       "device"};
		g_autofree char *what = g_strdup_printf("%s: %s's reservation %s %s at %" G_GINT64_FORMAT
							" ns", key, a->thread, a->reservation,
							measures[a->res_measure], a->time);

		check_number(report, what, a->bytes, reservation_measure_at(w, r, a),
			     a->res_measure == GS_RES_DEVICE ? UNIT_COUNT : UNIT_BYTES);
		return;
	}
	if (a->thread != NULL) {
		GsThreadState observed;

		report->checked++;
		if (log == NULL) {
			fail(report, "%s: %s at %" G_GINT64_FORMAT " ns: no event log to check against",
			     key, a->thread, a->time);
			return;
		}
		observed = state_at(gs_event_log_entries(log), a->thread, a->time);
		if (observed != a->state)
			fail(report, "%s: %s at %" G_GINT64_FORMAT " ns: expected %s, observed %s",
			     key, a->thread, a->time, gs_thread_state_name(a->state),
			     gs_thread_state_name(observed));
	}
	if (a->has_pool) {
		check_at_pool(report, key, a, w, log);
		return;
	}
	if (a->execution || a->consumer != NULL) {
		check_at_execution(report, key, a, log);
		return;
	}
	if (a->has_retries || a->has_splits || a->has_max_gpu || a->has_lost) {
		check_at_window(report, key, a, r, log);
		return;
	}
	if (a->has_tier && (a->task != NULL || gs_tier_measure_is_pool(a->measure))) {
		check_at_replayed(report, key, a, r, log);
		return;
	}
	if (a->has_tier) {
		static const char *const measures[] = {"used",	       "charged",	 "available",
						       "max_memory",   "peak_charged", "reserved",
						       "reservations", "pinned",	 "non_pinned"};
		g_autofree char *what = g_strdup_printf("%s: %s %s at %" G_GINT64_FORMAT " ns", key,
							gs_report_tier_name(a->tier),
							measures[a->measure], a->time);

		check_number(report, what, a->bytes, tier_measure_at(w, r, a),
			     a->measure == GS_MEASURE_RESERVATIONS ? UNIT_COUNT : UNIT_BYTES);
	}
}

/* ---- the report ---- */

GsExpectReport *
gs_expect_check(const GsWorkload *w, const GsResult *r, const GsEventLog *log)
{
	GsExpectReport *report = g_new0(GsExpectReport, 1);
	const GsExpect *x;

	report->failed = g_ptr_array_new_with_free_func(g_free);
	g_return_val_if_fail(w != NULL && r != NULL, report);
	x = &w->expect;
	for (guint i = 0; x->values != NULL && i < x->values->len; i++)
		check_value(report, g_ptr_array_index(x->values, i), r);
	for (guint i = 0; x->threads != NULL && i < x->threads->len; i++)
		check_thread(report, g_ptr_array_index(x->threads, i), r, log);
	for (guint i = 0; x->at != NULL && i < x->at->len; i++)
		check_at(report, i, g_ptr_array_index(x->at, i), w, r, log);
	return report;
}

gboolean
gs_expect_reads_log(const GsWorkload *w)
{
	const GsExpect *x = &w->expect;

	return (x->threads != NULL && x->threads->len > 0) || (x->at != NULL && x->at->len > 0);
}

gboolean
gs_expect_report_passed(const GsExpectReport *report)
{
	return report == NULL || report->failed == NULL || report->failed->len == 0;
}

void
gs_expect_report_free(GsExpectReport *report)
{
	if (report == NULL)
		return;
	if (report->failed != NULL)
		g_ptr_array_unref(report->failed);
	g_free(report);
}
