/*
 * gpusim: the clock of a log with times of day (see logclock.h).
 */
#include "config.h"

#include "scenario/logclock.h"

gboolean
gs_log_time_parse(const char *text, const char *end, gint64 *us)
{
	guint64 part[3] = {0, 0, 0};
	const char *p = text;
	gint64 fraction = 0;
	int digits = 0;

	for (int i = 0; i < 3; i++) {
		int n = 0;

		for (; p < end && g_ascii_isdigit(*p) && n < 10; p++, n++)
			part[i] = part[i] * 10 + (guint64) (*p - '0');
		if (n == 0 || n == 10)
			return FALSE;
		if (i < 2 && (p == end || *p++ != ':'))
			return FALSE;
	}
	if (p < end && (*p == '.' || *p == ':')) {
		for (p++; p < end && g_ascii_isdigit(*p); p++, digits++)
			if (digits < 6)
				fraction = fraction * 10 + (*p - '0');
		if (digits == 0)
			return FALSE;
		for (; digits < 6; digits++)
			fraction *= 10;
	}
	if (p != end || part[1] > 59 || part[2] > 60 || part[0] > 1000)
		return FALSE;
	*us = (gint64) ((part[0] * 60 + part[1]) * 60 + part[2]) * 1000000 + fraction;
	return TRUE;
}

gint64
gs_log_clock_advance(GsLogClock *clock, gint64 clock_us)
{
	gint64 us = clock_us + clock->day_offset_us;

	if (!clock->have_time) {
		clock->have_time = TRUE;
		clock->first_us = us;
		clock->latest_us = us;
	} else if (us < clock->latest_us - GS_LOG_US_PER_DAY / 2) {
		clock->day_offset_us += GS_LOG_US_PER_DAY;
		us += GS_LOG_US_PER_DAY;
	} else if (us > clock->latest_us + GS_LOG_US_PER_DAY / 2) {
		/* Stamped before midnight, logged after a row stamped after it. */
		us -= GS_LOG_US_PER_DAY;
	}
	clock->latest_us = MAX(clock->latest_us, us);
	return us - clock->first_us;
}
