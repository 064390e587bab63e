/*
 * gpusim: per-thread and per-task metrics of the OOM state machine.
 *
 * This module decides how the counters Spark-RAPIDS keeps per thread
 * (task_metrics) are added up: what a checkpoint does when a thread's
 * association changes, and how a task's figures are rolled up from its
 * checkpoint and its live threads. It does not decide when to count; the
 * engine does (retries and splits when thrown, blocked time around each wait,
 * lost time inside retry blocks, GPU bytes on allocation success and free).
 *
 * Roll-up rules (reference §3.1): counts and times are summed; footprints of
 * different threads are summed (a conservative bound); gpu_max_allocated is the
 * adaptor-wide allocated-bytes watermark a thread saw, max'ed into a
 * checkpoint but summed by the task getter (the reference's quirk §6.4; pass
 * GS_MAX_ALLOCATED_MAX for the maximum instead).
 */
#ifndef GPUSIM_METRICS_H
#define GPUSIM_METRICS_H

#include <gpusim/types.h>

G_BEGIN_DECLS

typedef struct {
	guint64 retries;            /* RetryOOM thrown (state machine or injected) */
	guint64 splits;             /* SplitAndRetryOOM thrown (state machine or injected) */
	GsTime blocked_ns;          /* time waiting in BLOCKED or BUFN */
	GsTime lost_ns;             /* running time inside retry blocks thrown away */
	GsTime lost_or_blocked_ns;  /* the two above together */
	gint64 gpu_max_allocated;   /* adaptor-wide allocated bytes seen at this thread's allocations */
	gint64 gpu_active_footprint;/* GPU bytes this thread holds now */
	gint64 gpu_max_footprint;   /* most GPU bytes this thread held at once */
} GsMetrics;

typedef enum {
	GS_MAX_ALLOCATED_SUM = 0, /* the reference getter: summed over threads */
	GS_MAX_ALLOCATED_MAX = 1, /* the maximum over threads */
} GsMaxAllocatedRollup;

/** Zeroes every counter. */
GS_API void gs_metrics_clear(GsMetrics *m);

/**
 * Adds a thread's counters into a task checkpoint: sums, except
 * gpu_max_allocated, which is max'ed. The active footprint is not carried: a
 * checkpoint holds only what the thread did, not what it still holds.
 */
GS_API void gs_metrics_checkpoint(GsMetrics *task, const GsMetrics *thread);

/**
 * Adds a live thread's counters into a task's roll-up: sums, with
 * gpu_max_allocated summed or max'ed as @rule says; active footprints summed.
 */
GS_API void gs_metrics_rollup(GsMetrics *task, const GsMetrics *thread, GsMaxAllocatedRollup rule);

/** Records a successful GPU allocation of @bytes; @adaptor_allocated is the count after it. */
GS_API void gs_metrics_gpu_alloc(GsMetrics *m, gint64 bytes, gint64 adaptor_allocated,
				 gboolean in_spill_range);

/** Records a GPU free of @bytes by this thread. */
GS_API void gs_metrics_gpu_free(GsMetrics *m, gint64 bytes, gboolean in_spill_range);

G_END_DECLS

#endif /* GPUSIM_METRICS_H */
