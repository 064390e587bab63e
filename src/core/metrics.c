/*
 * gpusim: adding up the state machine's per-thread counters.
 */
#include "config.h"

#include <string.h>

#include <gpusim/metrics.h>

void
gs_metrics_clear(GsMetrics *m)
{
	memset(m, 0, sizeof *m);
}

static void
add_counts(GsMetrics *task, const GsMetrics *thread)
{
	task->retries += thread->retries;
	task->splits += thread->splits;
	task->blocked_ns = gs_time_add(task->blocked_ns, thread->blocked_ns);
	task->lost_ns = gs_time_add(task->lost_ns, thread->lost_ns);
	task->lost_or_blocked_ns = gs_time_add(task->lost_or_blocked_ns, thread->lost_or_blocked_ns);
	task->gpu_max_footprint += thread->gpu_max_footprint;
}

void
gs_metrics_checkpoint(GsMetrics *task, const GsMetrics *thread)
{
	add_counts(task, thread);
	task->gpu_max_allocated = MAX(task->gpu_max_allocated, thread->gpu_max_allocated);
}

void
gs_metrics_rollup(GsMetrics *task, const GsMetrics *thread, GsMaxAllocatedRollup rule)
{
	add_counts(task, thread);
	task->gpu_active_footprint += thread->gpu_active_footprint;
	if (rule == GS_MAX_ALLOCATED_SUM)
		task->gpu_max_allocated += thread->gpu_max_allocated;
	else
		task->gpu_max_allocated = MAX(task->gpu_max_allocated, thread->gpu_max_allocated);
}

void
gs_metrics_gpu_alloc(GsMetrics *m, gint64 bytes, gint64 adaptor_allocated, gboolean in_spill_range)
{
	m->gpu_max_allocated = MAX(m->gpu_max_allocated, adaptor_allocated);
	if (in_spill_range)
		return;
	m->gpu_active_footprint += bytes;
	m->gpu_max_footprint = MAX(m->gpu_max_footprint, m->gpu_active_footprint);
}

void
gs_metrics_gpu_free(GsMetrics *m, gint64 bytes, gboolean in_spill_range)
{
	if (!in_spill_range)
		m->gpu_active_footprint -= bytes;
}
