/*
 * gpusim: the words of the run options (options.h).
 */
#include "config.h"

#include "run/options.h"

gboolean
gs_locking_from_name(const char *name, GsLocking *out)
{
	if (g_strcmp0(name, "fast") == 0)
		*out = GS_LOCKING_FAST;
	else if (g_strcmp0(name, "global") == 0)
		*out = GS_LOCKING_GLOBAL;
	else
		return FALSE;
	return TRUE;
}

gboolean
gs_clock_from_name(const char *name, GsClock *out)
{
	if (g_strcmp0(name, "real") == 0)
		*out = GS_CLOCK_REAL;
	else if (g_strcmp0(name, "virtual") == 0)
		*out = GS_CLOCK_VIRTUAL;
	else
		return FALSE;
	return TRUE;
}
