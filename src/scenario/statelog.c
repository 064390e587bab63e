/*
 * gpusim: reading the Spark-RAPIDS state log (see statelog.h).
 */
#include "config.h"

#include <string.h>

#include "scenario/input.h"
#include "scenario/loader.h"
#include "scenario/logclock.h"
#include "scenario/statelog.h"

#define HEADER "time,op,current thread,op thread,op task,from state,to state,notes"
#define WHAT "a Spark-RAPIDS state log"

/* The fields after the time, each with the column it starts at. */
enum { F_OP, F_CURRENT, F_THREAD, F_TASK, F_FROM, F_TO, F_NOTES, N_FIELDS };

typedef struct {
	const char *text[N_FIELDS];
	guint column[N_FIELDS];
	guint count; /* fields found, up to N_FIELDS: the notes keep their commas */
} Fields;

typedef struct {
	GsStateLog *log;
	GsLogClock clock;
	guint line;
} Reader;

/* The 2023 names, before the states were one set for every thread (spark-rapids-jni #1543). */
static const struct {
	const char *name;
	GsThreadState state;
	gboolean modelled;
} old_names[] = {
	{"TASK_RUNNING", GS_THREAD_RUNNING, TRUE},
	{"TASK_WAIT_ON_SHUFFLE", GS_THREAD_UNKNOWN, FALSE},
	{"TASK_BUFN_WAIT_ON_SHUFFLE", GS_THREAD_UNKNOWN, FALSE},
	{"TASK_ALLOC", GS_THREAD_ALLOC, TRUE},
	{"TASK_ALLOC_FREE", GS_THREAD_ALLOC_FREE, TRUE},
	{"TASK_BLOCKED", GS_THREAD_BLOCKED, TRUE},
	{"TASK_BUFN_THROW", GS_THREAD_BUFN_THROW, TRUE},
	{"TASK_BUFN_WAIT", GS_THREAD_BUFN_WAIT, TRUE},
	{"TASK_BUFN", GS_THREAD_BUFN, TRUE},
	{"TASK_SPLIT_THROW", GS_THREAD_SPLIT_THROW, TRUE},
	{"TASK_REMOVE_THROW", GS_THREAD_REMOVE_THROW, TRUE},
	{"SHUFFLE_RUNNING", GS_THREAD_RUNNING, TRUE},
	{"SHUFFLE_ALLOC", GS_THREAD_ALLOC, TRUE},
	{"SHUFFLE_ALLOC_FREE", GS_THREAD_ALLOC_FREE, TRUE},
	{"SHUFFLE_BLOCKED", GS_THREAD_BLOCKED, TRUE},
	{"SHUFFLE_THROW", GS_THREAD_UNKNOWN, FALSE},
	{"SHUFFLE_REMOVE_THROW", GS_THREAD_REMOVE_THROW, TRUE},
};

/* The state named @name, of any version; FALSE if no version had it. */
static gboolean
logged_state(const char *name, GsLoggedState *out, gboolean *old)
{
	GsThreadState state;

	if (gs_thread_state_from_name(name, &state)) {
		*out = (GsLoggedState){state, TRUE, gs_thread_state_name(state)};
		return TRUE;
	}
	for (guint i = 0; i < G_N_ELEMENTS(old_names); i++) {
		if (strcmp(old_names[i].name, name) == 0) {
			*out = (GsLoggedState){old_names[i].state, old_names[i].modelled,
					       old_names[i].name};
			*old = TRUE;
			return TRUE;
		}
	}
	return FALSE;
}

static void
row_clear(GsStateRow *row)
{
	g_free(row->op);
	g_free(row->current);
	g_free(row->thread);
	g_free(row->notes);
}

/* The row is left out: @what is wrong with the field at @column. */
static void
problem(Reader *r, guint column, const char *format, ...) G_GNUC_PRINTF(3, 4);

static void
problem(Reader *r, guint column, const char *format, ...)
{
	va_list args;
	g_autofree char *what = NULL;
	g_autofree char *safe = NULL;

	va_start(args, format);
	what = g_strdup_vprintf(format, args);
	va_end(args);
	/* A log holds any bytes: C escapes keep a terminal from acting on them. */
	safe = g_strescape(what, "\"'");
	g_ptr_array_add(r->log->problems, g_strdup_printf("%s:%u:%u: %s; the row is left out",
							  r->log->path, r->line, column, safe));
}

/* Cuts @rest (which starts at @column) at its first N_FIELDS - 1 commas, in place. */
static void
split_fields(char *rest, guint column, Fields *f)
{
	char *p = rest;

	f->count = 0;
	while (f->count < N_FIELDS) {
		char *comma = f->count < F_NOTES ? strchr(p, ',') : NULL;

		f->text[f->count] = p;
		f->column[f->count] = column + (guint) (p - rest);
		f->count++;
		if (comma == NULL)
			break;
		*comma = '\0';
		p = comma + 1;
	}
}

/* An op as the logger writes one: capitals, '_' and spaces ("DONE WAITING"). */
static gboolean
looks_like_op(const char *text)
{
	if (!g_ascii_isupper(*text))
		return FALSE;
	for (const char *c = text; *c != '\0'; c++) {
		if (!g_ascii_isupper(*c) && *c != '_' && *c != ' ' && !g_ascii_isdigit(*c))
			return FALSE;
	}
	return TRUE;
}

static gboolean
read_integer(Reader *r, const Fields *f, guint field, const char *what, gint64 *value)
{
	if (g_ascii_string_to_signed(f->text[field], 10, G_MININT64, G_MAXINT64, value, NULL))
		return TRUE;
	problem(r, f->column[field], "%s '%s' is not a whole number", what, f->text[field]);
	return FALSE;
}

static gboolean
read_state(Reader *r, const Fields *f, guint field, GsLoggedState *state)
{
	if (logged_state(f->text[field], state, &r->log->old_names))
		return TRUE;
	problem(r, f->column[field], "unknown state '%s'", f->text[field]);
	return FALSE;
}

/* The fields of an op row into @row; FALSE (and a problem) when one cannot be read. */
static gboolean
read_op_row(Reader *r, const Fields *f, GsStateRow *row)
{
	gint64 current, thread;

	if (f->count < N_FIELDS) {
		const guint last = f->count - 1;

		problem(r, f->column[last] + (guint) strlen(f->text[last]),
			"the row ends after %u of its 8 fields (" HEADER ")", f->count + 1);
		return FALSE;
	}
	if (!read_integer(r, f, F_CURRENT, "current thread", &current) ||
	    !read_integer(r, f, F_THREAD, "op thread", &thread) ||
	    !read_integer(r, f, F_TASK, "op task", &row->task) || !read_state(r, f, F_FROM, &row->from))
		return FALSE;
	if (strcmp(f->text[F_OP], "TRANSITION") == 0) {
		row->kind = GS_STATE_ROW_TRANSITION;
		if (!read_state(r, f, F_TO, &row->to))
			return FALSE;
	} else {
		row->kind = GS_STATE_ROW_STATUS;
		if (*f->text[F_TO] != '\0') {
			problem(r, f->column[F_TO], "a %s row has no 'to state' ('%s')",
				f->text[F_OP], f->text[F_TO]);
			return FALSE;
		}
		row->to = row->from;
	}
	row->from_column = f->column[F_FROM];
	row->op = g_strdup(f->text[F_OP]);
	row->current = g_strdup_printf("%" G_GINT64_FORMAT, current);
	row->thread = g_strdup_printf("%" G_GINT64_FORMAT, thread);
	row->notes = g_strdup(f->text[F_NOTES]);
	return TRUE;
}

static void
read_line(Reader *r, char *line)
{
	char *comma = strchr(line, ',');
	gint64 clock_us;
	GsStateRow row = {.line = r->line, .task = -1};
	Fields f;

	if (strcmp(line, HEADER) == 0) {
		r->log->headers++;
		return;
	}
	if (comma == NULL || !gs_log_time_parse(line, comma, &clock_us)) {
		/* Another logger's line: a log to standard error has the executor's too. */
		if (r->log->foreign_lines++ == 0)
			r->log->first_foreign = r->line;
		return;
	}
	split_fields(comma + 1, (guint) (comma - line) + 2, &f);
	if (looks_like_op(f.text[F_OP])) {
		if (!read_op_row(r, &f, &row)) {
			row_clear(&row);
			return;
		}
	} else {
		/* The logger's debug and info rows: free text after the time, commas and all. */
		for (guint i = 1; i < f.count; i++)
			((char *) f.text[i])[-1] = ',';
		row.kind = GS_STATE_ROW_NOTE;
		row.thread = g_strdup("-1");
		row.notes = g_strdup(f.text[F_OP]);
	}
	row.time_us = gs_log_clock_advance(&r->clock, clock_us);
	g_array_append_val(r->log->rows, row);
}

static void
rows_clear(gpointer row)
{
	row_clear(row);
}

/* Reads the log @contents, whose lines it cuts in place. */
static GsStateLog *
read_contents(const char *path, char *contents, gsize length, GError **error)
{
	g_autoptr(GsStateLog) log = g_new0(GsStateLog, 1);
	Reader r = {.log = log};
	char *next = contents;

	log->path = g_strdup(path);
	log->rows = g_array_new(FALSE, FALSE, sizeof(GsStateRow));
	g_array_set_clear_func(log->rows, rows_clear);
	log->problems = g_ptr_array_new_with_free_func(g_free);
	for (r.line = 1; next != NULL; r.line++) {
		char *line = next;

		next = gs_input_cut_line(line, contents + length);
		if (*line != '\0')
			read_line(&r, line);
	}
	log->first_us = r.clock.first_us;
	if (log->rows->len == 0) {
		g_set_error(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID,
			    "%s:1:1: no row of %s (" HEADER ")%s", path, WHAT,
			    log->problems->len > 0 ? ": none could be read" : "");
		return NULL;
	}
	return g_steal_pointer(&log);
}

GsStateLog *
gs_state_log_read(const char *path, GError **error)
{
	g_autofree char *contents = NULL;
	gsize length;

	if (!gs_input_read_text(path, WHAT, &contents, &length, error))
		return NULL;
	return read_contents(path, contents, length, error);
}

GsStateLog *
gs_state_log_read_text(const char *path, const char *text, gsize length, GError **error)
{
	g_autofree char *contents = g_strndup(text, length);

	if (!gs_input_check_text(path, WHAT, text, length, error))
		return NULL;
	return read_contents(path, contents, length, error);
}

void
gs_state_log_free(GsStateLog *log)
{
	if (log == NULL)
		return;
	g_free(log->path);
	g_array_unref(log->rows);
	g_ptr_array_unref(log->problems);
	g_free(log);
}
