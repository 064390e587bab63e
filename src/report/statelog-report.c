/*
 * gpusim: what a Spark-RAPIDS state log says (see statelog-report.h).
 */
#include "config.h"

#include <string.h>

#include "report/statelog-report.h"

#define US_NS 1000
#define RETRY_ONCE_NOTE "is_retry_alloc_before_bufn set to true"
#define DEADLOCK_NOTE "deadlock state is reached"
#define ALL_BUFN_NOTE "all_bufn state is reached"

/* A thread while the rows are walked. */
typedef struct {
	GsStateThread *out;
	gboolean seen;        /* a row has placed it in .state */
	GsThreadState state;
	gint64 since_us;
	guint line;           /* the row that placed it */
	gint64 task;          /* the task of its last row with one: -1 pool or none */
	gboolean retry_once;  /* its retry-once flag was set: a wake is that bust */
} Walker;

typedef struct {
	const GsStateLog *log;
	GsStateReport *report;
	GHashTable *walkers;  /* thread id -> Walker* */
	GHashTable *tasks;    /* task id -> GsStateTask*, for lookups */
	gboolean check_open;  /* a deadlock check fired and nothing has moved since */
} Walk;

static void
thread_free(GsStateThread *t)
{
	g_free(t->thread);
	g_array_unref(t->tasks);
	g_free(t);
}

static GsStateTask *
task_of(Walk *w, gint64 id)
{
	GsStateTask *t = g_hash_table_lookup(w->tasks, &id);

	if (t == NULL) {
		t = g_new0(GsStateTask, 1);
		t->task = id;
		g_ptr_array_add(w->report->tasks, t);
		g_hash_table_insert(w->tasks, &t->task, t);
	}
	return t;
}

static Walker *
walker_of(Walk *w, const char *thread)
{
	Walker *k = g_hash_table_lookup(w->walkers, thread);

	if (k == NULL) {
		k = g_new0(Walker, 1);
		k->out = g_new0(GsStateThread, 1);
		k->out->thread = g_strdup(thread);
		k->out->tasks = g_array_new(FALSE, FALSE, sizeof(gint64));
		k->task = -1;
		g_ptr_array_add(w->report->threads, k->out);
		g_hash_table_insert(w->walkers, k->out->thread, k);
	}
	return k;
}

/* Adds one to the field at @offset of the thread's counts and its task's. */
static void
count(Walk *w, Walker *k, gsize offset)
{
	GsStateTask *task = task_of(w, k->task < 0 ? -1 : k->task);

	G_STRUCT_MEMBER(guint, &k->out->counts, offset)++;
	G_STRUCT_MEMBER(guint, &task->counts, offset)++;
}

#define COUNT(w, k, field) count(w, k, G_STRUCT_OFFSET(GsStateCounts, field))

/* The time since the thread's last row goes to its state, for it and its task. */
static void
accrue(Walk *w, Walker *k, gint64 now_us)
{
	GsStateTask *task;

	if (!k->seen || now_us <= k->since_us) {
		k->since_us = MAX(k->since_us, now_us);
		return;
	}
	task = task_of(w, k->task < 0 ? -1 : k->task);
	k->out->counts.in_state_us[k->state] += now_us - k->since_us;
	task->counts.in_state_us[k->state] += now_us - k->since_us;
	k->since_us = now_us;
}

static void
log_entry(Walk *w, GsLogEntry *e, const GsStateRow *row)
{
	e->time = row->time_us * US_NS;
	gs_event_log_add(e, w->report->events);
}

static void
mark(Walk *w, const GsStateRow *row, const char *thread, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_MARK, .thread = thread, .what = what};

	log_entry(w, &e, row);
}

static void
impossible(Walk *w, const GsStateRow *row, const char *format, ...) G_GNUC_PRINTF(3, 4);

static void
impossible(Walk *w, const GsStateRow *row, const char *format, ...)
{
	va_list args;
	g_autofree char *what = NULL;

	va_start(args, format);
	what = g_strdup_vprintf(format, args);
	va_end(args);
	g_ptr_array_add(w->report->impossible, g_strdup_printf("%s:%u:%u: %s", w->log->path,
							       row->line, row->from_column, what));
}

/* The row's thread is where its previous row left it, unless it could not be followed. */
static void
check_continuity(Walk *w, Walker *k, const GsStateRow *row)
{
	if (!k->seen || !row->from.modelled || row->from.state == k->state)
		return;
	impossible(w, row, "thread %s is in %s here, but line %u left it in %s: a transition "
			   "is missing", row->thread, row->from.name, k->line,
		   gs_thread_state_name(k->state));
}

/* What a possible transition means: a throw, a deadlock decision, a block. */
static void
transition_meaning(Walk *w, Walker *k, const GsStateRow *row)
{
	GsThreadState from = row->from.state, to = row->to.state;
	GsLogEntry e = {.kind = GS_LOG_DEADLOCK, .thread = row->thread};

	if (to == GS_THREAD_BLOCKED)
		COUNT(w, k, blocks);
	if (from == GS_THREAD_BUFN_THROW && to == GS_THREAD_BUFN_WAIT) {
		COUNT(w, k, retries);
		mark(w, row, row->thread, "RetryOOM");
	} else if (from == GS_THREAD_SPLIT_THROW && to == GS_THREAD_RUNNING) {
		COUNT(w, k, splits);
		mark(w, row, row->thread, "SplitAndRetryOOM");
	} else if (from == GS_THREAD_REMOVE_THROW && to == GS_THREAD_UNKNOWN) {
		COUNT(w, k, other_throws);
		mark(w, row, row->thread, "thread removed while blocked");
	} else if (from == GS_THREAD_BLOCKED && to == GS_THREAD_BUFN_THROW) {
		COUNT(w, k, rollbacks);
		e.action = GS_BUST_ROLLBACK;
		log_entry(w, &e, row);
	} else if (from == GS_THREAD_BUFN && to == GS_THREAD_SPLIT_THROW) {
		e.action = GS_BUST_SPLIT;
		log_entry(w, &e, row);
	} else if (from == GS_THREAD_BLOCKED && to == GS_THREAD_RUNNING && k->retry_once) {
		e.action = GS_BUST_RETRY_ONCE;
		log_entry(w, &e, row);
	}
	if (from == GS_THREAD_BLOCKED)
		k->retry_once = FALSE;
}

/* Which task the thread works for from this row on. */
static void
place(Walker *k, const GsStateRow *row)
{
	if (row->task < -1)
		return;
	if (row->task == -1) {
		if (row->kind == GS_STATE_ROW_TRANSITION && row->from.state == GS_THREAD_UNKNOWN)
			k->out->pool = TRUE;
	} else if (k->out->tasks->len == 0 ||
		   g_array_index(k->out->tasks, gint64, k->out->tasks->len - 1) != row->task) {
		g_array_append_val(k->out->tasks, row->task);
	}
	k->task = row->task;
}

static void
walk_transition(Walk *w, const GsStateRow *row)
{
	Walker *k = walker_of(w, row->thread);
	GsLogEntry e = {.kind = GS_LOG_STATE, .thread = row->thread};

	w->report->transitions++;
	w->check_open = FALSE;
	accrue(w, k, row->time_us);
	place(k, row);
	if (!row->from.modelled || !row->to.modelled) {
		w->report->unchecked++;
	} else {
		check_continuity(w, k, row);
		if (!gs_thread_transition_possible(row->from.state, row->to.state, NULL))
			impossible(w, row, "thread %s: %s -> %s cannot happen: no event of the "
					   "model moves a thread so", row->thread, row->from.name,
				   row->to.name);
		else
			transition_meaning(w, k, row);
	}
	/* A state outside the model is drawn as a gap and not followed. */
	e.from = k->seen ? k->state : GS_THREAD_UNKNOWN;
	e.to = row->to.modelled ? row->to.state : GS_THREAD_UNKNOWN;
	log_entry(w, &e, row);
	k->seen = row->to.modelled;
	k->state = e.to;
	k->line = row->line;
}

/* "thread (id: N) ..." names the thread a DETAIL or debug row is about. */
static void
note_retry_once(Walk *w, const char *notes)
{
	const char *id = strstr(notes, "(id: ");
	char *end;
	g_autofree char *thread = NULL;
	Walker *k;

	if (id == NULL || strstr(notes, RETRY_ONCE_NOTE) == NULL)
		return;
	id += strlen("(id: ");
	g_ascii_strtoll(id, &end, 10);
	if (end == id || *end != ')')
		return;
	thread = g_strndup(id, (gsize) (end - id));
	k = g_hash_table_lookup(w->walkers, thread);
	if (k != NULL)
		k->retry_once = TRUE;
}

static void
walk_detail(Walk *w, const GsStateRow *row)
{
	if (g_str_has_prefix(row->notes, DEADLOCK_NOTE)) {
		w->report->deadlock_checks++;
		if (w->check_open)
			w->report->checks_idle++;
		w->check_open = TRUE;
		mark(w, row, row->current, "deadlock check");
	} else if (g_str_has_prefix(row->notes, ALL_BUFN_NOTE)) {
		w->report->all_bufn_checks++;
		mark(w, row, row->current, "all_bufn check");
	} else {
		note_retry_once(w, row->notes);
	}
}

/* An INJECTED_* row: which exception a test made the thread throw. */
static gboolean
injected_exception(const char *op, GsException *exception, gboolean *split)
{
	gboolean cpu = g_str_has_suffix(op, "_CPU");

	*split = FALSE;
	if (strcmp(op, "INJECTED_CUDF_EXCEPTION") == 0) {
		*exception = GS_EXC_CUDF_EXCEPTION;
	} else if (g_str_has_prefix(op, "INJECTED_SPLIT_AND_RETRY_OOM")) {
		*exception = cpu ? GS_EXC_CPU_SPLIT_AND_RETRY_OOM
				 : GS_EXC_GPU_SPLIT_AND_RETRY_OOM;
		*split = TRUE;
	} else if (g_str_has_prefix(op, "INJECTED_RETRY_OOM")) {
		*exception = cpu ? GS_EXC_CPU_RETRY_OOM : GS_EXC_GPU_RETRY_OOM;
	} else {
		return FALSE;
	}
	return TRUE;
}

static void
walk_injected(Walk *w, Walker *k, const GsStateRow *row, GsException exception, gboolean split)
{
	GsLogEntry e = {.kind = GS_LOG_THROW, .thread = row->thread, .exception = exception};

	if (exception == GS_EXC_CUDF_EXCEPTION) {
		COUNT(w, k, other_throws);
	} else {
		COUNT(w, k, injected);
		if (split)
			COUNT(w, k, splits);
		else
			COUNT(w, k, retries);
	}
	log_entry(w, &e, row);
}

static void
walk_status(Walk *w, const GsStateRow *row)
{
	GsException exception;
	gboolean split;
	Walker *k;

	w->report->statuses++;
	if (strcmp(row->op, "DETAIL") == 0)
		walk_detail(w, row);
	if (strcmp(row->thread, "-1") == 0 || row->task == -2)
		return; /* a global row, or a thread the adaptor does not track (DEALLOC's -2) */
	k = walker_of(w, row->thread);
	accrue(w, k, row->time_us);
	place(k, row);
	if (row->from.modelled) {
		check_continuity(w, k, row);
		k->seen = TRUE;
		k->state = row->from.state;
		k->line = row->line;
	}
	if (injected_exception(row->op, &exception, &split))
		walk_injected(w, k, row, exception, split);
	else if (strcmp(row->op, "ERROR") == 0 || strcmp(row->op, "FIXUP") == 0)
		mark(w, row, row->thread, row->op);
}

static gint
task_order(gconstpointer a, gconstpointer b)
{
	gint64 x = (*(GsStateTask *const *) a)->task, y = (*(GsStateTask *const *) b)->task;

	return x < y ? -1 : x > y;
}

GsStateReport *
gs_state_report_new(const GsStateLog *log)
{
	GsStateReport *report = g_new0(GsStateReport, 1);
	Walk w = {.log = log, .report = report};
	GHashTableIter iter;
	gpointer value;
	gint64 end_us = 0;

	report->threads = g_ptr_array_new_with_free_func((GDestroyNotify) thread_free);
	report->tasks = g_ptr_array_new_with_free_func(g_free);
	report->impossible = g_ptr_array_new_with_free_func(g_free);
	report->events = gs_event_log_new();
	w.walkers = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	w.tasks = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (guint i = 0; i < log->rows->len; i++) {
		const GsStateRow *row = &g_array_index(log->rows, GsStateRow, i);

		end_us = MAX(end_us, row->time_us);
		switch (row->kind) {
		case GS_STATE_ROW_TRANSITION:
			walk_transition(&w, row);
			break;
		case GS_STATE_ROW_STATUS:
			walk_status(&w, row);
			break;
		case GS_STATE_ROW_NOTE:
			report->notes++;
			note_retry_once(&w, row->notes);
			break;
		}
	}
	if (w.check_open)
		report->checks_idle++;
	report->span_us = end_us;
	g_hash_table_iter_init(&iter, w.walkers);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		accrue(&w, value, end_us);
	for (guint i = 0; i < report->threads->len; i++) {
		const GsStateThread *t = report->threads->pdata[i];

		if (t->pool || t->tasks->len == 0)
			task_of(&w, -1)->threads++;
		for (guint j = 0; j < t->tasks->len; j++)
			task_of(&w, g_array_index(t->tasks, gint64, j))->threads++;
	}
	g_ptr_array_sort(report->tasks, task_order);
	g_hash_table_unref(w.walkers);
	g_hash_table_unref(w.tasks);
	return report;
}

void
gs_state_report_free(GsStateReport *report)
{
	if (report == NULL)
		return;
	g_ptr_array_unref(report->threads);
	g_ptr_array_unref(report->tasks);
	g_ptr_array_unref(report->impossible);
	gs_event_log_free(report->events);
	g_free(report);
}

/* ---- the summary ---- */

/* The states any thread spent time in: the columns of the tables. */
static void
states_seen(const GsStateReport *report, gboolean seen[GS_N_THREAD_STATES])
{
	for (guint s = 0; s < GS_N_THREAD_STATES; s++) {
		seen[s] = FALSE;
		for (guint i = 0; i < report->tasks->len && !seen[s]; i++)
			seen[s] = ((const GsStateTask *) report->tasks->pdata[i])
					  ->counts.in_state_us[s] > 0;
	}
	seen[GS_THREAD_UNKNOWN] = FALSE;
}

static void
table_head(GString *s, const char *first, guint width, const gboolean seen[GS_N_THREAD_STATES])
{
	g_string_append_printf(s, "%-*s", (int) width, first);
	for (guint st = 0; st < GS_N_THREAD_STATES; st++)
		if (seen[st])
			g_string_append_printf(s, " %12s",
					       gs_thread_state_name(st) + strlen("THREAD_"));
	g_string_append(s, " retries splits injected rollbacks blocks other\n");
}

static void
table_row(GString *s, const char *first, guint width, const GsStateCounts *c,
	  const gboolean seen[GS_N_THREAD_STATES])
{
	g_string_append_printf(s, "%-*s", (int) width, first);
	for (guint st = 0; st < GS_N_THREAD_STATES; st++) {
		g_autofree char *time = NULL;

		if (!seen[st])
			continue;
		time = gs_format_duration(c->in_state_us[st] * US_NS);
		g_string_append_printf(s, " %12s", time);
	}
	g_string_append_printf(s, " %7u %6u %8u %9u %6u %5u\n", c->retries, c->splits, c->injected,
			       c->rollbacks, c->blocks, c->other_throws);
}

static char *
task_label(gint64 task)
{
	return task < 0 ? g_strdup("pool") : g_strdup_printf("%" G_GINT64_FORMAT, task);
}

static void
summary_tables(GString *s, const GsStateReport *report)
{
	gboolean seen[GS_N_THREAD_STATES];
	guint width = 8;

	states_seen(report, seen);
	for (guint i = 0; i < report->threads->len; i++)
		width = MAX(width, (guint) strlen(((GsStateThread *) report->threads->pdata[i])->thread));
	width += 2;
	g_string_append(s, "\nper task (time in each state, what was thrown and decided)\n");
	table_head(s, "task", width, seen);
	for (guint i = 0; i < report->tasks->len; i++) {
		const GsStateTask *t = report->tasks->pdata[i];
		g_autofree char *label = task_label(t->task);

		table_row(s, label, width, &t->counts, seen);
	}
	g_string_append(s, "\nper thread\n");
	table_head(s, "thread", width, seen);
	for (guint i = 0; i < report->threads->len; i++) {
		const GsStateThread *t = report->threads->pdata[i];

		table_row(s, t->thread, width, &t->counts, seen);
	}
}

char *
gs_state_report_summary(const GsStateReport *report, const GsStateLog *log)
{
	GString *s = g_string_new(NULL);
	g_autofree char *span = gs_format_duration(report->span_us * US_NS);

	g_string_append_printf(s, "%s: rows %u (transitions %u, status %u, notes %u)%s\n",
			       log->path, log->rows->len, report->transitions, report->statuses,
			       report->notes, log->old_names ? ", 2023 state names" : "");
	if (log->foreign_lines > 0)
		g_string_append_printf(s, "lines of other loggers skipped: %u (the first at line %u)\n",
				       log->foreign_lines, log->first_foreign);
	if (log->problems->len > 0)
		g_string_append_printf(s, "rows that could not be read: %u\n", log->problems->len);
	if (log->headers == 0)
		g_string_append(s, "no header: a rotated file, read from its first row\n");
	g_string_append_printf(s, "span %s; threads %u, tasks %u\n", span, report->threads->len,
			       report->tasks->len);
	summary_tables(s, report);
	g_string_append_printf(s, "\ndeadlock checks that found all tasks blocked: %u, after which "
				  "nothing moved: %u; all_bufn reached: %u\n",
			       report->deadlock_checks, report->checks_idle, report->all_bufn_checks);
	g_string_append_printf(s, "transitions checked against gpusim's table: %u; impossible: %u",
			       report->transitions - report->unchecked, report->impossible->len);
	if (report->unchecked > 0)
		g_string_append_printf(s, "; not checked (a 2023 state gpusim does not model): %u",
				       report->unchecked);
	g_string_append_c(s, '\n');
	return g_string_free(s, FALSE);
}
