/*
 * gpusim: the rules of a thread's status (see thread.h).
 */
#include "config.h"

#include "run/thread.h"

gboolean
gs_run_waits_on_another(GsRunStatus status)
{
	return status == GS_RUN_PARKED || status == GS_RUN_SEMAPHORE || status == GS_RUN_RESERVE ||
	       status == GS_RUN_OWNER;
}

gboolean
gs_run_waits_outside(GsRunStatus status, const GsPolicy *policy)
{
	return (status == GS_RUN_SLEEPING && policy->sleep_is_blocked) ||
	       status == GS_RUN_SEMAPHORE || status == GS_RUN_RESERVE || status == GS_RUN_OWNER;
}
