/*
 * gpusim: RMM logging-adaptor logs turned into scenarios (SPEC §2
 * `import-rmm-log`, reference §B.5).
 *
 * This module decides what a logged run becomes: one task with one thread per
 * logged thread id that has a row to replay (t0, t1, ... in order of their
 * first replayed row; a log of RMM 0.13 or 0.14, which has no thread column,
 * is one thread's), starting when that thread first logs (counted from the
 * earliest such thread's start), the id itself in a comment, C-escaped since
 * a log may hold any bytes; its allocations and frees in log order, each
 * `allocate` an `alloc` of the logged (unaligned) size and each `free` the
 * `free` of the buffer allocated at that pointer, by whichever thread logged
 * it: a free on another thread than the allocation's is that thread's free
 * of the allocating thread's buffer (`free: {buf, thread}`, which waits for
 * the allocation in the replay), as Spark's cleaner and shuffle threads and
 * RMM's own replay benchmark have it; an allocation on a stream other than
 * the default one names it in a comment (`# stream 0x...`), since a
 * scenario's allocation has no stream; the time between one thread's
 * consecutive rows a `compute` of that length (the log has microseconds);
 * `allocate failure` rows kept as comments where they were. The GPU's
 * capacity is the most bytes live at once in time (rows out of time order
 * counted at their times), each allocation rounded up to 256 B, then up to a
 * whole MiB, so the replay fits as logged and shrinking it (--set
 * memory.gpu.capacity=...) shows the policies at work. The policy is left at
 * its defaults.
 *
 * Rows it cannot use are left out and each is reported with its line and the
 * column of the offending field: a wrong number of fields, a malformed time,
 * pointer or size, an unknown action, an allocation of 0 bytes and its free,
 * a free of a pointer not allocated (or already freed), and an allocation
 * that would make more than 2^62 bytes live at once. An allocation at a
 * pointer that is still live is used, and reported, since the earlier buffer
 * then is never freed. Times are HH:MM:SS.ffffff, or HH:MM:SS:ffffff as RMM
 * wrote them before 21.06. The log has no date: a time more than twelve hours
 * before the latest so far has crossed midnight, and one more than twelve
 * hours after it was stamped before midnight and logged late (a
 * multi-threaded log's rows can be tens of microseconds out of order).
 *
 * A log that cannot be read (input.h), holds a NUL byte or lacks the header
 * line `Thread,Time,Action,Pointer,Size,Stream` (or `Time,Action,Pointer,
 * Size,Stream`, RMM 0.13-0.14) is an error ("file:L:C: ...");
 * one without a usable allocation gives no scenario (yaml NULL) but its
 * problems. Nothing here prints.
 */
#ifndef GPUSIM_RMMLOG_H
#define GPUSIM_RMMLOG_H

#include <glib.h>

#include "scenario/statelog.h"

G_BEGIN_DECLS

typedef struct {
	char *yaml;          /* the scenario; NULL when no allocation could be used */
	GPtrArray *problems; /* char*: "LOG:LINE:COLUMN: what; the row is left out" */
	guint threads, allocations, frees, failures;
	guint frees_across;  /* of the frees, those on another thread than the allocation */
	gint64 peak_bytes;   /* most bytes live at once, 256-byte aligned */
} GsRmmImport;

/*
 * Which task each logged thread belongs to, from a text file of lines
 * THREAD,TASK (the logged thread is one of task TASK's threads, in order of
 * their first row; TASK: letters, digits, '_' and '-', not first); blank lines and
 * lines starting with '#' are skipped, fields are trimmed. A thread not
 * listed is a task of its own (t0, t1, ... skipping the ids the file names).
 * A thread of a task sleeps from the task's start until it first logs. No
 * logged thread becomes a pool thread: a run ends with its tasks, and a pool
 * thread's later rows (a cleaner's frees) would not be replayed.
 */
typedef struct GsRmmGroups GsRmmGroups;

/** Reads the groups at @path; NULL with @error ("file:L:C: ...") when it cannot. */
GsRmmGroups *gs_rmm_groups_read(const char *path, GError **error);

/*
 * The groups a Spark-RAPIDS state log of the same run gives (statelog.h):
 * each registration of a thread (UNKNOWN to THREAD_RUNNING) opens a stretch
 * of its life in the task it registers for, task<N> for Spark's task N, or
 * pool<K> for the Kth pool thread (registered with task -1), which is a task
 * of its own as above. An RMM row of that thread belongs to the stretch
 * that began last at or before its time (the two logs are one machine's
 * clock), or to its first; a thread's later stretches are threads of their
 * own in the scenario. A thread the state log does not name is a task of
 * its own.
 */
GsRmmGroups *gs_rmm_groups_from_state_log(const GsStateLog *log);
void gs_rmm_groups_free(GsRmmGroups *groups);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsRmmGroups, gs_rmm_groups_free)

/**
 * Reads the log at @path, its threads grouped by @groups (NULL: each its own
 * task); NULL with @error set when it is unreadable or not an RMM log.
 */
GsRmmImport *gs_rmm_import(const char *path, const GsRmmGroups *groups, GError **error);
/** As gs_rmm_import(), for the log @text, @length bytes, read as if from @path. */
GsRmmImport *gs_rmm_import_text(const char *path, const char *text, gsize length,
				const GsRmmGroups *groups, GError **error);
void gs_rmm_import_free(GsRmmImport *import);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsRmmImport, gs_rmm_import_free)

G_END_DECLS

#endif /* GPUSIM_RMMLOG_H */
