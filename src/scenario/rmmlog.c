/*
 * gpusim: RMM logging-adaptor logs turned into scenarios (see rmmlog.h).
 */
#include "config.h"

#include <string.h>

#include "scenario/input.h"
#include "scenario/loader.h"
#include "scenario/logclock.h"
#include "scenario/rmmlog.h"

#define RMM_HEADER "Thread,Time,Action,Pointer,Size,Stream"
/* RMM 0.13 and 0.14 logged no thread: their rows are one thread's. */
#define RMM_HEADER_NO_THREAD "Time,Action,Pointer,Size,Stream"
#define NO_THREAD_ID "(no thread column)"
#define ALIGNMENT 256
/* What a scenario may hold (a multiple of a MiB): the capacity written loads. */
#define MAX_LIVE_BYTES GS_MAX_BYTES

typedef struct {
	char *id;       /* as logged */
	char *key;      /* the id, or "ID@N" for its Nth stretch (N from 2) in a state log's task */
	char *task_hint; /* the task its stretch belongs to, or NULL: the groups' or its own */
	GString *ops;   /* its ops, as YAML lines */
	gint64 start_us, last_us;
	guint n_ops;
	/* Its place, given at its first op: a thread of a task. */
	char *task_id;  /* its task's id */
	char *name;     /* the scenario's name for it: TASK.N */
	guint next_buf; /* buffers are p1, p2, ... */
} LogThread;

/* A task of the scenario: its threads, in order of their first op. */
typedef struct {
	char *id;
	GPtrArray *threads; /* LogThread* */
} LogTask;

/* A stretch of a logged thread's life in one task: from its registration on. */
typedef struct {
	gint64 from_us; /* the state log's time of day, its day offset included */
	char *task;
} Stretch;

struct GsRmmGroups {
	GHashTable *task_of; /* logged thread id -> task id */
	GHashTable *tasks;   /* the task ids named */
	GHashTable *stretches; /* from a state log: logged thread id -> GArray of Stretch, or NULL */
	gint64 first_us;     /* the state log's first row: its time of day */
	char *source;        /* "the groups file F", "the state log F" */
};

typedef struct {
	guint thread; /* index into Importer.threads */
	guint buf;
	gint64 bytes; /* aligned */
	guint line;
} Live;

typedef struct {
	const char *path;
	gboolean thread_column;  /* FALSE: RMM 0.13-0.14, one thread */
	GPtrArray *threads;      /* LogThread*, in order of first appearance */
	const GsRmmGroups *groups; /* NULL: every thread its own task */
	GPtrArray *tasks;        /* LogTask*, in order of their first op */
	GHashTable *task_by_id;  /* task id -> LogTask* */
	guint next_own;          /* a thread of its own is task t<next_own> */
	guint placed;            /* threads with an op: the scenario's threads */
	GHashTable *thread_of;   /* id -> index + 1; only for lookups */
	GHashTable *live;        /* pointer text -> Live*; only for lookups */
	GHashTable *empty;       /* pointer text -> line of its 0-byte allocation */
	gint64 live_bytes;       /* in row order: what the bound on live bytes checks */
	GArray *changes;         /* Change: every allocation and free, for the peak in time */
	GsLogClock clock;
	GsRmmImport *out;
} Importer;

/* What an imported row does to the bytes live: at its time, in row order. */
typedef struct {
	gint64 us;
	gint64 bytes; /* + allocated, - freed */
	guint row;
} Change;

/* One row's fields and where each starts (1-based columns). */
typedef struct {
	char **fields;
	guint columns[6];
	guint line;
} Row;

enum { F_THREAD, F_TIME, F_ACTION, F_POINTER, F_SIZE, F_STREAM, N_FIELDS };

static void
log_task_free(LogTask *task)
{
	g_free(task->id);
	g_ptr_array_unref(task->threads);
	g_free(task);
}

static void
log_thread_free(LogThread *t)
{
	g_free(t->key);
	g_free(t->task_hint);
	g_free(t->task_id);
	g_free(t->name);
	g_free(t->id);
	g_string_free(t->ops, TRUE);
	g_free(t);
}

/*
 * A problem with the row's @field. The fields it quotes are any bytes a log
 * holds: C escapes (\r, \033) keep a terminal from acting on them.
 */
static void
add_problem(Importer *im, const Row *row, guint field, const char *outcome, const char *format,
	    va_list args)
{
	g_autofree char *what = g_strdup_vprintf(format, args);
	g_autofree char *safe = g_strescape(what, "\"'");

	g_ptr_array_add(im->out->problems, g_strdup_printf("%s:%u:%u: %s%s", im->path, row->line,
							   row->columns[field], safe, outcome));
}

/* The row cannot be imported: it is left out. */
static void
problem(Importer *im, const Row *row, guint field, const char *format, ...) G_GNUC_PRINTF(4, 5);

static void
problem(Importer *im, const Row *row, guint field, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	add_problem(im, row, field, "; the row is left out", format, args);
	va_end(args);
}

/* The row is imported, but the scenario will differ from the log there. */
static void
caveat(Importer *im, const Row *row, guint field, const char *format, ...) G_GNUC_PRINTF(4, 5);

static void
caveat(Importer *im, const Row *row, guint field, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	add_problem(im, row, field, "", format, args);
	va_end(args);
}

/* ---- fields ---- */

/* A %p pointer: hexadecimal, with or without 0x; glibc prints NULL as "(nil)". */
static gboolean
parse_pointer(const char *text, guint64 *pointer)
{
	char *end;

	if (strcmp(text, "(nil)") == 0) {
		*pointer = 0;
		return TRUE;
	}
	if (g_str_has_prefix(text, "0x") || g_str_has_prefix(text, "0X"))
		text += 2;
	if (!g_ascii_isxdigit(*text))
		return FALSE;
	*pointer = g_ascii_strtoull(text, &end, 16);
	return *end == '\0';
}

static gboolean
parse_size(const char *text, gint64 *size)
{
	char *end;
	guint64 value;

	if (!g_ascii_isdigit(*text))
		return FALSE;
	value = g_ascii_strtoull(text, &end, 10);
	if (*end != '\0' || value > G_MAXINT64 / 2)
		return FALSE;
	*size = (gint64) value;
	return TRUE;
}

/* ---- threads and ops ---- */

/*
 * Which stretch of the logged thread @id the row at @now_us falls in, by a
 * state log's registrations: the last that began at or before it, else the
 * first. The two logs' clocks are one machine's times of day; a state log
 * that began on the other side of midnight is a day apart.
 */
static const Stretch *
stretch_of(Importer *im, const char *id, gint64 now_us, guint *index)
{
	const GArray *stretches = im->groups != NULL && im->groups->stretches != NULL
					  ? g_hash_table_lookup(im->groups->stretches, id)
					  : NULL;
	gint64 at = im->clock.first_us + now_us;

	*index = 0;
	if (stretches == NULL)
		return NULL;
	if (at - im->groups->first_us > GS_LOG_US_PER_DAY / 2)
		at -= GS_LOG_US_PER_DAY;
	else if (im->groups->first_us - at > GS_LOG_US_PER_DAY / 2)
		at += GS_LOG_US_PER_DAY;
	for (guint i = 1; i < stretches->len; i++)
		if (g_array_index(stretches, Stretch, i).from_us <= at)
			*index = i;
	return &g_array_index(stretches, Stretch, *index);
}

static LogThread *
thread_for(Importer *im, const char *id, gint64 now_us)
{
	guint index;
	const Stretch *stretch = stretch_of(im, id, now_us, &index);
	g_autofree char *key = index == 0 ? g_strdup(id) : g_strdup_printf("%s@%u", id, index + 1);
	gpointer found = g_hash_table_lookup(im->thread_of, key);
	LogThread *t;

	if (found != NULL)
		return im->threads->pdata[GPOINTER_TO_UINT(found) - 1];
	t = g_new0(LogThread, 1);
	t->id = g_strdup(id);
	t->key = g_steal_pointer(&key);
	t->task_hint = stretch != NULL ? g_strdup(stretch->task) : NULL;
	t->ops = g_string_new(NULL);
	t->start_us = now_us;
	t->last_us = now_us;
	g_ptr_array_add(im->threads, t);
	g_hash_table_insert(im->thread_of, t->key, GUINT_TO_POINTER(im->threads->len));
	return t;
}

/* The next task id t<N> that no task has and no group names, for a thread of its own. */
static char *
own_task_id(Importer *im)
{
	for (;;) {
		char *id = g_strdup_printf("t%u", im->next_own++);

		if (!g_hash_table_contains(im->task_by_id, id) &&
		    (im->groups == NULL || !g_hash_table_contains(im->groups->tasks, id)))
			return id;
		g_free(id);
	}
}

/* At its first op, @t takes its place: its group's task, or a task of its own. */
static void
place(Importer *im, LogThread *t)
{
	const char *group = t->task_hint != NULL ? t->task_hint
				: im->groups != NULL ? g_hash_table_lookup(im->groups->task_of, t->id)
						     : NULL;
	LogTask *task;

	im->placed++;
	t->task_id = group != NULL ? g_strdup(group) : own_task_id(im);
	task = g_hash_table_lookup(im->task_by_id, t->task_id);
	if (task == NULL) {
		task = g_new0(LogTask, 1);
		task->id = g_strdup(t->task_id);
		task->threads = g_ptr_array_new();
		g_ptr_array_add(im->tasks, task);
		g_hash_table_insert(im->task_by_id, task->id, task);
	}
	t->name = g_strdup_printf("%s.%u", task->id, task->threads->len);
	g_ptr_array_add(task->threads, t);
}

/* @t has one more op: at its first, it takes its place in the scenario. */
static void
count_op(Importer *im, LogThread *t)
{
	if (t->n_ops++ == 0)
		place(im, t);
}

/*
 * The time a thread spent since its previous op becomes compute, just before
 * its next op, so that the rows left out between them add to one gap.
 */
static void
advance(Importer *im, LogThread *t, gint64 now_us)
{
	if (now_us > t->last_us) {
		g_string_append_printf(t->ops, "          - compute: %" G_GINT64_FORMAT "us\n",
				       now_us - t->last_us);
		count_op(im, t);
	}
	t->last_us = MAX(t->last_us, now_us);
}

static void
note_change(Importer *im, const Row *row, gint64 now_us, gint64 bytes)
{
	Change c = {.us = now_us, .bytes = bytes, .row = row->line};

	g_array_append_val(im->changes, c);
}

static gint
change_order(gconstpointer a, gconstpointer b)
{
	const Change *x = a, *y = b;

	if (x->us != y->us)
		return x->us < y->us ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * The most bytes live at once in time, which the replay follows: a
 * multi-threaded log's rows can be out of time order, so row order can
 * miss the peak. Rows of the same microsecond count in row order.
 */
static gint64
peak_in_time(Importer *im)
{
	gint64 live = 0, peak = 0;

	g_array_sort(im->changes, change_order);
	for (guint i = 0; i < im->changes->len; i++) {
		live += g_array_index(im->changes, Change, i).bytes;
		peak = MAX(peak, live);
	}
	return peak;
}

/*
 * Ends an alloc's line, naming its stream when it is not the default one
 * (0x0, or "(nil)" as RMM 24.12 on prints it): a scenario has no stream
 * for an allocation, and the log's is kept for the reader.
 */
static void
stream_comment(GString *ops, const char *stream)
{
	guint64 pointer;

	if (parse_pointer(stream, &pointer)) {
		if (pointer != 0)
			g_string_append_printf(ops, "  # stream 0x%" G_GINT64_MODIFIER "x", pointer);
	} else if (*stream != '\0') {
		g_autofree char *safe = g_strescape(stream, NULL);

		g_string_append_printf(ops, "  # stream %s", safe);
	}
	g_string_append_c(ops, '\n');
}

static void
allocate(Importer *im, const Row *row, LogThread *t, guint index, gint64 now_us, const char *pointer,
	 gint64 size)
{
	gint64 bytes = (size + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
	Live *old = g_hash_table_lookup(im->live, pointer);
	Live *live;

	if (bytes > MAX_LIVE_BYTES - im->live_bytes) {
		problem(im, row, F_SIZE,
			"allocating %" G_GINT64_FORMAT " bytes would make more than %" G_GINT64_FORMAT
			" bytes live at once", size, MAX_LIVE_BYTES);
		return;
	}
	if (old != NULL)
		caveat(im, row, F_POINTER,
		       "pointer %s is allocated again, still live from line %u; that earlier "
		       "buffer is never freed", pointer, old->line);
	advance(im, t, now_us);
	live = g_new0(Live, 1);
	live->thread = index;
	live->buf = ++t->next_buf;
	live->bytes = bytes;
	live->line = row->line;
	g_hash_table_insert(im->live, g_strdup(pointer), live);
	im->live_bytes += live->bytes;
	note_change(im, row, now_us, live->bytes);
	g_string_append_printf(t->ops, "          - alloc: {buf: p%u, size: %" G_GINT64_FORMAT "}",
			       live->buf, size);
	stream_comment(t->ops, row->fields[F_STREAM]);
	count_op(im, t);
	im->out->allocations++;
}

static void
release(Importer *im, const Row *row, LogThread *t, guint index, gint64 now_us, const char *pointer)
{
	Live *live = g_hash_table_lookup(im->live, pointer);

	if (live == NULL) {
		problem(im, row, F_POINTER, "free of %s, which is not allocated (never, or freed "
					    "already)", pointer);
		return;
	}
	advance(im, t, now_us);
	if (live->thread != index) {
		/* Another thread's buffer, freed by this one (a cleaner's, a shuffle thread's). */
		const LogThread *owner = im->threads->pdata[live->thread];

		g_string_append_printf(t->ops, "          - free: {buf: p%u, thread: %s}\n",
				       live->buf, owner->name);
		im->out->frees_across++;
	} else {
		g_string_append_printf(t->ops, "          - free: p%u\n", live->buf);
	}
	count_op(im, t);
	im->live_bytes -= live->bytes;
	note_change(im, row, now_us, -live->bytes);
	g_hash_table_remove(im->live, pointer);
	im->out->frees++;
}

/* ---- rows ---- */

static gboolean
split_row(Importer *im, const char *text, Row *row)
{
	guint n, column = 1, first = im->thread_column ? F_THREAD : F_TIME;

	row->fields = g_strsplit(text, ",", -1);
	n = g_strv_length(row->fields);
	for (guint i = 0; i < n && first + i < N_FIELDS; i++) {
		row->columns[first + i] = column;
		column += (guint) strlen(row->fields[i]) + 1;
	}
	if (n != N_FIELDS - first) {
		row->columns[0] = 1;
		problem(im, row, 0, "expected %u fields (%s), found %u", N_FIELDS - first,
			im->thread_column ? RMM_HEADER : RMM_HEADER_NO_THREAD, n);
		return FALSE;
	}
	if (!im->thread_column) {
		/* One thread's log: its rows get one id, ahead of their own fields. */
		char **fields = g_new0(char *, N_FIELDS + 1);

		fields[F_THREAD] = g_strdup(NO_THREAD_ID);
		memcpy(fields + F_TIME, row->fields, sizeof *fields * n);
		g_free(row->fields);
		row->fields = fields;
		row->columns[F_THREAD] = 1;
	}
	for (guint i = 0; i < N_FIELDS; i++)
		g_strstrip(row->fields[i]);
	return TRUE;
}

static void
import_row(Importer *im, const char *text, guint line)
{
	Row row = {.line = line};
	gint64 clock_us, now_us, size = 0;
	guint64 pointer;
	LogThread *t;
	guint index;
	const char *action;
	g_autofree char *pointer_key = NULL;

	if (!split_row(im, text, &row))
		goto done;
	action = row.fields[F_ACTION];
	if (*row.fields[F_THREAD] == '\0') {
		problem(im, &row, F_THREAD, "no thread id");
		goto done;
	}
	if (!gs_log_time_parse(row.fields[F_TIME], row.fields[F_TIME] + strlen(row.fields[F_TIME]),
			       &clock_us)) {
		problem(im, &row, F_TIME, "time '%s' is not HH:MM:SS.ffffff", row.fields[F_TIME]);
		goto done;
	}
	if (strcmp(action, "allocate") != 0 && strcmp(action, "free") != 0 &&
	    strcmp(action, "allocate failure") != 0) {
		problem(im, &row, F_ACTION,
			"unknown action '%s' (allocate, allocate failure or free)", action);
		goto done;
	}
	if (!parse_pointer(row.fields[F_POINTER], &pointer)) {
		problem(im, &row, F_POINTER, "pointer '%s' is not hexadecimal or (nil)",
			row.fields[F_POINTER]);
		goto done;
	}
	if (!parse_size(row.fields[F_SIZE], &size)) {
		problem(im, &row, F_SIZE, "size '%s' is not a number of bytes", row.fields[F_SIZE]);
		goto done;
	}
	now_us = gs_log_clock_advance(&im->clock, clock_us);
	t = thread_for(im, row.fields[F_THREAD], now_us);
	index = GPOINTER_TO_UINT(g_hash_table_lookup(im->thread_of, t->key)) - 1;
	pointer_key = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", pointer);
	if (strcmp(action, "allocate failure") == 0) {
		advance(im, t, now_us);
		g_string_append_printf(t->ops, "          # line %u: allocate failure, %" G_GINT64_FORMAT
					       " bytes\n", line, size);
		im->out->failures++;
	} else if (pointer == 0) {
		problem(im, &row, F_POINTER, "%s of a null pointer", action);
	} else if (strcmp(action, "allocate") == 0 && size == 0) {
		g_hash_table_insert(im->empty, g_strdup(pointer_key), GUINT_TO_POINTER(line));
		problem(im, &row, F_SIZE, "an allocation of 0 bytes holds no memory");
	} else if (strcmp(action, "allocate") == 0) {
		allocate(im, &row, t, index, now_us, pointer_key, size);
	} else if (g_hash_table_contains(im->empty, pointer_key) &&
		   !g_hash_table_contains(im->live, pointer_key)) {
		problem(im, &row, F_POINTER, "free of %s, the allocation of 0 bytes on line %u",
			pointer_key, GPOINTER_TO_UINT(g_hash_table_lookup(im->empty, pointer_key)));
		g_hash_table_remove(im->empty, pointer_key);
	} else {
		release(im, &row, t, index, now_us, pointer_key);
	}
done:
	g_strfreev(row.fields);
}

/* ---- the scenario ---- */

/* A name made of the log's file name: letters, digits, '-' and '_'. */
static char *
scenario_name(const char *path)
{
	g_autofree char *base = g_path_get_basename(path);
	char *dot = strrchr(base, '.');
	GString *s = g_string_new(NULL);

	if (dot != NULL && dot != base)
		*dot = '\0';
	for (const char *c = base; *c != '\0'; c++)
		g_string_append_c(s, g_ascii_isalnum(*c) || *c == '-' ? *c : '_');
	if (s->len == 0)
		g_string_append(s, "rmm-log");
	return g_string_free(s, FALSE);
}

/*
 * @text as it may stand in a YAML comment or folded scalar: what a log holds
 * is any bytes, and a line break would end the comment (and let the rest be
 * read as YAML), a control character or invalid UTF-8 would make the file
 * unreadable. C escapes (\r, \001, \377) keep it readable, in plain ASCII.
 */
static char *
yaml_safe(const char *text)
{
	return g_strescape(text, NULL);
}

/*
 * Starts count from the earliest thread's: rows of different threads can reach
 * the log out of time order, so the first row is not always the earliest.
 */
static gint64
earliest_start(const Importer *im)
{
	gint64 earliest = G_MAXINT64;

	for (guint i = 0; i < im->tasks->len; i++) {
		const LogTask *task = im->tasks->pdata[i];

		for (guint j = 0; j < task->threads->len; j++)
			earliest = MIN(earliest, ((const LogThread *) task->threads->pdata[j])->start_us);
	}
	return earliest;
}

/* The thread's ops, after a sleep from @from until it first logged. */
static void
write_ops(GString *s, const LogThread *t, gint64 from_us)
{
	if (t->start_us > from_us)
		g_string_append_printf(s, "          - sleep: %" G_GINT64_FORMAT "us\n",
				       t->start_us - from_us);
	g_string_append(s, t->ops->str);
}

static void
write_comment(GString *s, const char *indent, const LogThread *t)
{
	g_autofree char *id = yaml_safe(t->id);
	/* A logged id may hold '@' itself: only a key that is not the id names a stretch. */
	const char *again = strcmp(t->key, t->id) != 0 ? strrchr(t->key, '@') : NULL;

	if (again != NULL)
		g_string_append_printf(s, "%s# logged thread %s, stretch %s of the state log\n",
				       indent, id, again + 1);
	else
		g_string_append_printf(s, "%s# logged thread %s\n", indent, id);
}

/* A task starts with its earliest thread; the others sleep until they first logged. */
static void
write_task(GString *s, const LogTask *task, gint64 origin_us)
{
	gint64 start_us = G_MAXINT64;

	for (guint i = 0; i < task->threads->len; i++)
		start_us = MIN(start_us, ((const LogThread *) task->threads->pdata[i])->start_us);
	if (task->threads->len == 1)
		write_comment(s, "  ", task->threads->pdata[0]);
	g_string_append_printf(s, "  - id: %s\n    start: %" G_GINT64_FORMAT "us\n    threads:\n",
			       task->id, start_us - origin_us);
	for (guint i = 0; i < task->threads->len; i++) {
		const LogThread *t = task->threads->pdata[i];

		if (task->threads->len > 1)
			write_comment(s, "      ", t);
		g_string_append(s, "      - ops:\n");
		write_ops(s, t, start_us);
	}
}

static char *
write_scenario(Importer *im)
{
	GString *s = g_string_new("gpusim: 1\n");
	g_autofree char *name = scenario_name(im->path);
	gint64 mib = 1024 * 1024;
	gint64 capacity_mib = MAX(1, (im->out->peak_bytes + mib - 1) / mib);
	g_autofree char *file = g_path_get_basename(im->path);
	g_autofree char *base = yaml_safe(file);
	gint64 origin_us = earliest_start(im);
	g_autofree char *source = im->groups != NULL ? yaml_safe(im->groups->source) : NULL;
	g_autofree char *grouping =
		source != NULL ? g_strdup_printf("Threads are grouped into tasks by\n  %s", source)
			       : g_strdup("Each logged thread is one task");

	g_string_append_printf(s, "name: %s\n", name);
	g_string_append_printf(
		s,
		"description: >\n"
		"  Imported from the RMM log %s (threads %u, allocations %u, frees %u\n"
		"  of which %u by another thread than the allocation's, failed allocations %u,\n"
		"  kept as comments). %s; the gaps between a\n"
		"  thread's rows are compute; a free by another thread frees the allocating\n"
		"  thread's buffer, once allocated. The GPU holds the log's peak\n"
		"  (%" G_GINT64_FORMAT " bytes, 256-byte aligned) rounded up to a MiB; shrink it\n"
		"  with --set memory.gpu.capacity=... to see the policies at work.\n",
		base, im->out->threads, im->out->allocations, im->out->frees,
		im->out->frees_across, im->out->failures, grouping, im->out->peak_bytes);
	g_string_append_printf(s, "memory:\n  gpu: {capacity: %" G_GINT64_FORMAT "MiB}\n",
			       capacity_mib);
	g_string_append(s, "tasks:\n");
	for (guint i = 0; i < im->tasks->len; i++)
		write_task(s, im->tasks->pdata[i], origin_us);
	return g_string_free(s, FALSE);
}

/* ---- the log's text ---- */

/* The header RMM wrote: with a thread column (*@thread_column), or before 0.15 without. */
static gboolean
check_header(const char *path, const char *first, gboolean *thread_column, GError **error)
{
	g_autofree char *header = g_strstrip(g_strdup(first != NULL ? first : ""));

	/* A UTF-8 byte-order mark, as some editors write, is not part of the header. */
	if (g_str_has_prefix(header, "\xef\xbb\xbf"))
		memmove(header, header + 3, strlen(header + 3) + 1);
	*thread_column = strcmp(header, RMM_HEADER) == 0;
	if (*thread_column || strcmp(header, RMM_HEADER_NO_THREAD) == 0)
		return TRUE;
	g_set_error(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID,
		    "%s:1:1: not an RMM log: the first line must be '%s' (or '%s', as RMM 0.13 "
		    "and 0.14 wrote it)", path, RMM_HEADER, RMM_HEADER_NO_THREAD);
	return FALSE;
}

/* ---- groups: which task each logged thread belongs to ---- */

/* Letters, digits, '_' and '-', not first: a task id and thread names made of it read plainly. */
static gboolean
valid_task_id(const char *id)
{
	if (!g_ascii_isalnum(*id) && *id != '_')
		return FALSE;
	for (const char *c = id; *c != '\0'; c++) {
		if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-')
			return FALSE;
	}
	return TRUE;
}

static gboolean
groups_fail(GError **error, const char *path, guint line, guint column, const char *what)
{
	g_set_error(error, GS_SCENARIO_ERROR, GS_SCENARIO_ERROR_INVALID, "%s:%u:%u: %s", path, line,
		    column, what);
	return FALSE;
}

/* One line, "THREAD,TASK", of the groups file. */
static gboolean
read_group(GsRmmGroups *g, const char *path, char *line, guint number, GError **error)
{
	g_auto(GStrv) fields = g_strsplit(line, ",", -1);
	g_autofree char *escaped = NULL;
	guint task_column;

	if (g_strv_length(fields) != 2)
		return groups_fail(error, path, number, 1, "expected THREAD,TASK");
	task_column = (guint) strlen(fields[0]) + 2;
	g_strstrip(fields[0]);
	g_strstrip(fields[1]);
	escaped = g_strescape(fields[0], NULL);
	if (*fields[0] == '\0')
		return groups_fail(error, path, number, 1, "no thread id");
	if (g_hash_table_contains(g->task_of, fields[0])) {
		g_autofree char *what = g_strdup_printf("thread %s is grouped twice", escaped);

		return groups_fail(error, path, number, 1, what);
	}
	if (!valid_task_id(fields[1])) {
		g_autofree char *task = g_strescape(fields[1], NULL);
		g_autofree char *what = g_strdup_printf(
			"task id '%s' must be letters, digits, '_' and '-' (not first)", task);

		return groups_fail(error, path, number, task_column, what);
	}
	g_hash_table_insert(g->task_of, g_strdup(fields[0]), g_strdup(fields[1]));
	g_hash_table_add(g->tasks, g_strdup(fields[1]));
	return TRUE;
}

GsRmmGroups *
gs_rmm_groups_read(const char *path, GError **error)
{
	g_autofree char *contents = NULL;
	g_autoptr(GsRmmGroups) g = NULL;
	gsize length;
	char *next;

	if (!gs_input_read_text(path, "a groups file", &contents, &length, error))
		return NULL;
	g = g_new0(GsRmmGroups, 1);
	g->task_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g->tasks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g->source = g_strdup_printf("the groups file %s", path);
	next = contents;
	for (guint number = 1; next != NULL; number++) {
		char *line = next;

		next = gs_input_cut_line(line, contents + length);
		g_strchug(line);
		if (*line == '#' || *line == '\0')
			continue;
		if (!read_group(g, path, line, number, error))
			return NULL;
	}
	return g_steal_pointer(&g);
}

void
gs_rmm_groups_free(GsRmmGroups *groups)
{
	if (groups == NULL)
		return;
	g_hash_table_unref(groups->task_of);
	g_hash_table_unref(groups->tasks);
	if (groups->stretches != NULL)
		g_hash_table_unref(groups->stretches);
	g_free(groups->source);
	g_free(groups);
}

static void
stretch_clear(gpointer stretch)
{
	g_free(((Stretch *) stretch)->task);
}

/* The task of a row of the state log: its Spark task, or the pool thread's own. */
static char *
state_task(const GsStateRow *row, GHashTable *pools)
{
	gpointer pool;

	if (row->task >= 0)
		return g_strdup_printf("task%" G_GINT64_FORMAT, row->task);
	pool = g_hash_table_lookup(pools, row->thread);
	if (pool == NULL) {
		pool = GUINT_TO_POINTER(g_hash_table_size(pools) + 1);
		g_hash_table_insert(pools, row->thread, pool);
	}
	return g_strdup_printf("pool%u", GPOINTER_TO_UINT(pool));
}

GsRmmGroups *
gs_rmm_groups_from_state_log(const GsStateLog *log)
{
	GsRmmGroups *g = g_new0(GsRmmGroups, 1);
	g_autoptr(GHashTable) pools = g_hash_table_new(g_str_hash, g_str_equal);

	g->task_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g->tasks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g->stretches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					     (GDestroyNotify) g_array_unref);
	g->first_us = log->first_us;
	g->source = g_strdup_printf("the state log %s", log->path);
	for (guint i = 0; i < log->rows->len; i++) {
		const GsStateRow *row = &g_array_index(log->rows, GsStateRow, i);
		GArray *stretches;
		gboolean registers = row->kind == GS_STATE_ROW_TRANSITION &&
				     row->from.state == GS_THREAD_UNKNOWN && row->from.modelled &&
				     row->to.state == GS_THREAD_RUNNING;
		Stretch stretch;

		if (row->kind == GS_STATE_ROW_NOTE || row->task < -1 || strcmp(row->thread, "-1") == 0)
			continue;
		stretches = g_hash_table_lookup(g->stretches, row->thread);
		/* A thread's first row opens its first stretch (a rotated file starts anywhere). */
		if (stretches != NULL && !registers)
			continue;
		if (stretches == NULL) {
			stretches = g_array_new(FALSE, FALSE, sizeof(Stretch));
			g_array_set_clear_func(stretches, stretch_clear);
			g_hash_table_insert(g->stretches, g_strdup(row->thread), stretches);
		}
		stretch.from_us = log->first_us + row->time_us;
		stretch.task = state_task(row, pools);
		g_hash_table_add(g->tasks, g_strdup(stretch.task));
		g_array_append_val(stretches, stretch);
	}
	return g;
}

/* ---- the whole log ---- */

/* Imports the log @contents, whose lines it cuts in place. */
static GsRmmImport *
import_contents(const char *path, char *contents, gsize length, const GsRmmGroups *groups,
		GError **error)
{
	Importer im = {.path = path};
	GsRmmImport *out;
	char *next;

	if (!gs_input_check_text(path, "an RMM log", contents, length, error))
		return NULL;
	next = gs_input_cut_line(contents, contents + length);
	if (!check_header(path, contents, &im.thread_column, error))
		return NULL;
	out = g_new0(GsRmmImport, 1);
	out->problems = g_ptr_array_new_with_free_func(g_free);
	im.out = out;
	im.threads = g_ptr_array_new_with_free_func((GDestroyNotify) log_thread_free);
	im.groups = groups;
	im.tasks = g_ptr_array_new_with_free_func((GDestroyNotify) log_task_free);
	im.task_by_id = g_hash_table_new(g_str_hash, g_str_equal);
	im.changes = g_array_new(FALSE, FALSE, sizeof(Change));
	im.thread_of = g_hash_table_new(g_str_hash, g_str_equal);
	im.live = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	im.empty = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	for (guint number = 2; next != NULL; number++) {
		char *line = next;

		next = gs_input_cut_line(line, contents + length);
		if (*g_strstrip(line) != '\0')
			import_row(&im, line, number);
	}
	out->threads = im.placed;
	out->peak_bytes = peak_in_time(&im);
	if (out->allocations > 0)
		out->yaml = write_scenario(&im);
	g_ptr_array_unref(im.tasks);
	g_hash_table_unref(im.task_by_id);
	g_array_unref(im.changes);
	g_ptr_array_unref(im.threads);
	g_hash_table_unref(im.thread_of);
	g_hash_table_unref(im.live);
	g_hash_table_unref(im.empty);
	return out;
}

GsRmmImport *
gs_rmm_import(const char *path, const GsRmmGroups *groups, GError **error)
{
	g_autofree char *contents = NULL;
	gsize length;

	if (!gs_input_read_text(path, "an RMM log", &contents, &length, error))
		return NULL;
	return import_contents(path, contents, length, groups, error);
}

GsRmmImport *
gs_rmm_import_text(const char *path, const char *text, gsize length, const GsRmmGroups *groups,
		   GError **error)
{
	g_autofree char *contents = g_strndup(text, length);

	return import_contents(path, contents, length, groups, error);
}

void
gs_rmm_import_free(GsRmmImport *import)
{
	if (import == NULL)
		return;
	g_free(import->yaml);
	g_ptr_array_unref(import->problems);
	g_free(import);
}
