/*
 * gpusim: the clock of a log that has times of day and no date (RMM's
 * logging adaptor, the Spark-RAPIDS state log).
 *
 * This module decides how a logged time of day is read and how a log's rows
 * become times since its first row. Times are HH:MM:SS.ffffff, or
 * HH:MM:SS:ffffff as spdlog wrote them after a colon (RMM before 21.06);
 * more than six decimals are cut. A time more than twelve hours before the
 * latest so far has crossed midnight; one more than twelve hours after it
 * was stamped before midnight and logged late (a multi-threaded log's rows
 * can be tens of microseconds out of order). Nothing here prints.
 */
#ifndef GPUSIM_LOGCLOCK_H
#define GPUSIM_LOGCLOCK_H

#include <glib.h>

G_BEGIN_DECLS

#define GS_LOG_US_PER_DAY G_GINT64_CONSTANT(86400000000)

/* A log's clock: zero-initialise it before the first row. */
typedef struct {
	gboolean have_time;
	gint64 first_us, latest_us, day_offset_us;
} GsLogClock;

/** Reads the time of day @text ends at @end (exclusive) into *@us; FALSE if it is not one. */
gboolean gs_log_time_parse(const char *text, const char *end, gint64 *us);

/** The row stamped @clock_us (a time of day) in microseconds since the log's first row. */
gint64 gs_log_clock_advance(GsLogClock *clock, gint64 clock_us);

G_END_DECLS

#endif /* GPUSIM_LOGCLOCK_H */
