/*
 * gpusim: reading the Spark-RAPIDS state log (`gpusim import-state-log`).
 *
 * spark-rapids-jni's SparkResourceAdaptor logs its OOM state machine as CSV:
 * a header `time,op,current thread,op thread,op task,from state,to state,
 * notes`, then rows `HH:MM:SS.ffffff,OP,CURRENT,THREAD,TASK,FROM,TO,NOTES`.
 * TRANSITION rows name both states; status rows (WAITING, DONE WAITING,
 * DEALLOC, ADD_TASKS, REMOVE_TASKS, FIXUP, ERROR, DETAIL, INJECTED_...) give
 * the thread's state in FROM and leave TO empty; the notes run to the end of
 * the line and may hold commas. The logger's debug and info rows (2025 on)
 * have a time and free text and no op: they are kept as notes. Every version
 * is read: the 2023 state names (TASK_*, SHUFFLE_*) are read as the states
 * gpusim models where one matches (TASK_BLOCKED is THREAD_BLOCKED) and
 * marked as outside the model where none does (TASK_WAIT_ON_SHUFFLE,
 * TASK_BUFN_WAIT_ON_SHUFFLE, SHUFFLE_THROW); a file rotated away from its
 * header is read the same.
 *
 * This module decides which lines are the state logger's and what each says;
 * what they mean together is statelog-report.h's. Lines of other loggers
 * (a log to standard error has the executor's own lines between these) are
 * skipped and counted; a line that is the state logger's but cannot be read
 * (an unknown state name, a task that is not a number, a row cut short) is
 * left out and reported with its line and column. Times are read by
 * logclock.h, across midnight. Nothing here prints.
 */
#ifndef GPUSIM_STATELOG_H
#define GPUSIM_STATELOG_H

#include <gpusim/thread-state.h>

G_BEGIN_DECLS

typedef enum {
	GS_STATE_ROW_TRANSITION, /* .from -> .to */
	GS_STATE_ROW_STATUS,     /* .op, the thread in .from */
	GS_STATE_ROW_NOTE,       /* a row without an op: .notes only */
} GsStateRowKind;

/* A state as logged: the model's state, or one of the 2023 states it lacks. */
typedef struct {
	GsThreadState state;
	gboolean modelled;   /* FALSE: .name is a state gpusim does not model */
	const char *name;    /* as logged; static */
} GsLoggedState;

typedef struct {
	GsStateRowKind kind;
	guint line;
	gint64 time_us;      /* since the log's first row */
	char *op;            /* "TRANSITION", "WAITING", ...; NULL for a note */
	char *current;       /* the thread that wrote the row (pthread id) */
	char *thread;        /* the thread the row is about; "-1": none */
	gint64 task;         /* its task: -1 none (a pool thread, a global row), -2 unknown */
	GsLoggedState from, to; /* .to only for a transition */
	guint from_column;   /* where the from state starts on its line */
	char *notes;         /* "" when none */
} GsStateRow;

typedef struct {
	char *path;
	GArray *rows;        /* GsStateRow, in log order */
	gint64 first_us;     /* the first row's time of day, in microseconds */
	guint headers;       /* header lines (0 in a rotated file) */
	guint foreign_lines; /* lines of other loggers, skipped */
	guint first_foreign; /* the first of them, 0 if none */
	gboolean old_names;  /* the 2023 state names */
	GPtrArray *problems; /* char*: "LOG:LINE:COLUMN: what; the row is left out" */
} GsStateLog;

/**
 * Reads the state log at @path; NULL with @error ("file:L:C: ...") when it
 * cannot be read, holds a NUL byte, or has no row of the state logger.
 */
GsStateLog *gs_state_log_read(const char *path, GError **error);
/** As gs_state_log_read(), for the log @text, @length bytes, read as if from @path. */
GsStateLog *gs_state_log_read_text(const char *path, const char *text, gsize length,
				   GError **error);
void gs_state_log_free(GsStateLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsStateLog, gs_state_log_free)

G_END_DECLS

#endif /* GPUSIM_STATELOG_H */
