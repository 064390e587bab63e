/*
 * gpusim: what a run produces, whichever driver ran it: the result (its
 * outcome, a row per task and per thread, totals, the tiers' figures and the
 * timeline) and the event log's entries.
 *
 * This module decides how results are stored: rows are packed in blocks
 * owned by the result, names and ids in one string chunk, so a run of a
 * million threads does not make a million allocations. What goes into a
 * result is the drivers' to say; how it is written, the reports'.
 */
#ifndef GPUSIM_RUN_RESULT_H
#define GPUSIM_RUN_RESULT_H

#include <gpusim/gpusim.h>

#include "tiers/memory.h"

G_BEGIN_DECLS

typedef enum {
	GS_OUTCOME_COMPLETED = 0,
	GS_OUTCOME_FAILED,
	GS_OUTCOME_DEADLOCK,
	GS_OUTCOME_TIMEOUT,
} GsOutcome;

GS_API const char *gs_outcome_name(GsOutcome outcome);

/* Why an allocation was refused: its event's reason, and the run's count in totals.refused. */
typedef enum {
	GS_REFUSED_NO_ROOM = 0, /* its tier had not the room, after what spilling could do */
	GS_REFUSED_RESERVATION, /* beyond its reservation, under the fail policy */
	GS_REFUSED_FAIR_SHARE,  /* beyond its task's fair share of the tier */
	GS_REFUSED_PAGE_TABLE,  /* its task's page table is full (Spark's pages) */
	GS_REFUSED_NEVER_FITS,  /* larger than any host pool could hold (HostAlloc) */
	GS_REFUSED_DEVICE,      /* the device itself refused it (a real backend) */
	GS_N_REFUSALS,
} GsRefusal;

/** "no_room", "reservation", "fair_share", "page_table", "never_fits" or "device". */
GS_API const char *gs_refusal_name(GsRefusal why);

/* What one logical task (all its attempts) did. */
typedef struct {
	char *id;
	GsOutcome outcome;     /* completed or failed (or deadlock/timeout if cut short) */
	guint attempts;
	GsTime start_ns, end_ns;
	guint64 retries, splits;
	GsTime blocked_ns, lost_ns;
	gint64 max_footprint;  /* most GPU bytes its threads held at once */
	gint64 max_allocated;  /* most GPU bytes allocated in all at its threads' allocations */
	gint64 leaked_bytes;   /* left allocated by threads that completed (Spark's leak report) */
	GsException failure;   /* the exception that failed its last attempt */
} GsTaskResult;

/* What one simulated thread did (each attempt's threads are separate rows). */
typedef struct {
	char *name;
	char *task;              /* task id, NULL for pool threads */
	GArray *exceptions;      /* GsSeenException; NULL if it saw none */
	GsThreadState final_state;
	guint32 reached;         /* bit i set: the thread was in GsThreadState i */
	guint8 pool;             /* booleans */
	guint8 waiting_at_end;   /* named in a deadlock outcome */
} GsThreadResult;

/* One timeline sample: taken after every instant where something changed. */
typedef struct {
	GsTime time;
	gint64 used[GS_N_TIERS];
	gint64 charged[GS_N_TIERS];
	guint running, blocked, bufn; /* threads by engine state class */
} GsSample;

typedef struct {
	gint64 capacity;
	gint64 peak_used;
	gint64 mean_used;   /* time-weighted over the makespan */
	gint64 peak_charged;
} GsTierResult;

/*
 * A reservation's counters after a change to them: cuCascade's view of the
 * stream it is attached to (get_allocated_bytes, get_peak_allocated_bytes),
 * here a thread's reservation by its name.
 */
typedef struct {
	GsTime time;
	const char *thread;  /* the thread's name and the reservation's, in the result's strings */
	const char *name;
	GsTier tier;
	guint device;
	gboolean held;       /* FALSE once released: its counters are gone */
	gint64 size, allocated, peak; /* allocated may be below 0 (frees of other streams' buffers) */
} GsReservationView;

/* Running time a retry-type throw threw away (the engine's lost observer). */
typedef struct {
	GsTime time;
	const char *thread;  /* its name, in the result's strings */
	GsTime lost;
} GsLostTime;

typedef struct {
	GsOutcome outcome;
	char *stop_reason;   /* a timeout other than --max-time's: why the run stopped; else NULL */
	char *invariant_broken; /* GsRunOptions.check_invariants: the first rule of the engine's
				   bookkeeping found broken, and when; else NULL */
	char *needless_bust; /* GsRunOptions.check_busts: the first deadlock busted while a
				thread could still make progress, in a sentence; else NULL */
	GsTime makespan_ns;
	guint64 events_processed; /* what the driver handled: arrivals, threads going on after
				     a wait (their start too), watchdog ticks, proactive copies */
	guint64 seed;
	struct {
		guint tasks, tasks_completed, tasks_failed, task_attempts;
		guint64 retries, splits;
		GsTime blocked_ns, lost_ns, spill_block_ns, semaphore_wait_ns;
		guint64 deadlocks_busted, deadlocks_unresolved;
		gint64 spilled_gpu_to_host, spilled_host_to_disk;
		gint64 unspilled_host_to_gpu, unspilled_disk_to_host;
		guint64 copies_checked;  /* copies between tiers whose content tag was checked */
		guint64 copies_lost;     /* of which carried the wrong tag: data lost or duplicated */
		gint64 leaked_bytes;
		guint host_pools;        /* the host tier's pools of blocks at the end */
		guint64 failure_callbacks;       /* calls of the allocation failure callback */
		guint64 failure_callback_allocs; /* allocations they made that succeeded */
		guint64 streams_grown;   /* streams the stream pools made under GROW */
		guint64 refused[GS_N_REFUSALS]; /* allocations refused, by why */
	} totals;
	GsTierResult tiers[GS_N_TIERS];
	GPtrArray *tasks;    /* GsTaskResult*, in file order (copies after their original) */
	GPtrArray *threads;  /* GsThreadResult*, in order of creation */
	GArray *timeline;    /* GsSample */
	GArray *lost;        /* GsLostTime, in order: what expect's task windows sum */
	GArray *reservations; /* GsReservationView, in the order of the changes */
	GStringChunk *strings; /* the rows' ids and names, packed (one allocation per row saved) */
	GPtrArray *rows;     /* the rows themselves, packed in blocks: add them with the functions below */
} GsResult;

/** An empty result: no tasks, threads or samples yet. */
GS_API GsResult *gs_result_new(void);
/** An empty result with room for @tasks task rows and @threads thread rows. */
GS_API GsResult *gs_result_new_sized(guint tasks, guint threads);
/** Appends a task row with id @id (copied). */
GS_API GsTaskResult *gs_result_add_task(GsResult *result, const char *id);
/** Appends a thread row named @name (copied) of the task row @task; NULL: a pool thread. */
GS_API GsThreadResult *gs_result_add_thread(GsResult *result, const char *name,
					    const GsTaskResult *task);
GS_API void gs_result_free(GsResult *result);

/** Adds what the engine counted for one attempt (@footprint: the most GPU bytes its threads held). */
void gs_result_add_task_metrics(GsTaskResult *task, const GsMetrics *m, gint64 footprint);

/** The totals of the task rows: outcomes, retries, splits, blocked and lost time, leaks. */
void gs_result_sum_tasks(GsResult *result);

/** The tiers' traffic in the totals; @corrupt more copies lost (on real memory). */
void gs_result_note_traffic(GsResult *result, const GsMemTraffic *traffic, guint64 corrupt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsResult, gs_result_free)

/* One line of the event log (--events), in order. */
typedef enum {
	GS_LOG_STATE,     /* .thread .from .to */
	GS_LOG_THROW,     /* .thread .exception .handled .bytes (thrown at an allocation: its size) */
	GS_LOG_ALLOC,     /* .thread .buf .bytes .tier .ok; refused for want of room, .usage: the
			     space's charged bytes with this request's (cuCascade's
			     global_usage, the counter it would have made); host memory
			     beside a pinned pool: .pool, and .fallback if it was not the
			     pool the allocation preferred */
	GS_LOG_FREE,      /* .thread .buf .bytes .tier .pool; .owner: whose buffer, when
			     another's */
	GS_LOG_FREE_WAIT, /* .thread waits until .owner has allocated .buf, to free it */
	GS_LOG_DEADLOCK,  /* .thread (victim) .action */
	GS_LOG_TASK,      /* .task .what ("queued", "start", "done", "failed", "retry") */
	GS_LOG_SEMAPHORE, /* .task .what ("acquire", "wait") */
	GS_LOG_SPILL,     /* .thread (whose buffer: .buf is its name there) .buf .bytes .tier
			     (.pool) -> .to_tier; .what "spill" or "unspill"; .ok FALSE: the
			     copy was refused at landing */
	GS_LOG_RESERVE,   /* .thread .buf (reservation) .bytes .tier .device .what (outcome) */
	GS_LOG_RELEASE,   /* .thread .buf (reservation) .bytes (refunded) .tier .device */
	GS_LOG_GATE,      /* .thread .what ("close", "fallback", "open") */
	GS_LOG_DOWNGRADE, /* .device .bytes (charged) .what ("start", "stop") */
	GS_LOG_LEAK,      /* .task .thread .bytes: what a completing thread left allocated */
	GS_LOG_STREAM,    /* a stream pool: .thread .buf (stream) .device .what ("borrow", "wait",
			     "grow", "return") .count (idle streams of the pool after it) */
	GS_LOG_HOST_POOLS, /* the host tier took another pool of blocks: .count (pools now) .bytes
			      (what the pools hold) */
	GS_LOG_EXECUTION, /* Spark's execution memory: .task .thread (NULL at the task's end)
			     .what ("acquire", "wait", "release", "spill", "page", "free_page",
			     "clean_up", or a refused page's gs_page_result_name()) .buf
			     (consumer) .mode .asked .bytes (granted or released) .page */
	GS_LOG_STORAGE,   /* Spark's storage memory: .task .thread .what ("store", "refuse",
			     "too_large", "borrow", "evict" (one call of the memory store),
			     "drop" (a block it evicted), "reclaim", "release") .buf (block)
			     .mode .asked .bytes (stored, moved, freed or released) */
	GS_LOG_MARK,      /* an imported log's moment: .thread (NULL: none) .what (its name) */
	GS_LOG_VALUE,     /* a thread's value: .thread .buf (its name) .bytes (the value after)
			     .what ("add", "set", "checkpoint": what it holds, "restore") */
} GsLogKind;

typedef struct {
	GsLogKind kind;
	GsTime time;
	const char *thread;  /* name, owned by the simulator */
	const char *task;
	const char *buf;
	const char *owner;   /* a free of another thread's buffer: that thread */
	const char *what;
	const char *pool;    /* host memory in a run with a pinned pool: "pinned" or "non_pinned" */
	gboolean fallback;   /* an allocation served by the pool it did not prefer */
	GsThreadState from, to;
	GsException exception;
	gboolean handled, ok;
	gint64 bytes;
	GsTier tier, to_tier;
	guint device;
	GsBustAction action;
	GsMemoryMode mode;
	gint64 asked;
	gint64 usage;        /* a refused allocation's would-be counter, or 0 */
	GsRefusal refusal;   /* a refused allocation: why */
	guint page;
	guint count;         /* host pools: the pools now; stream: the pool's idle streams */
} GsLogEntry;

typedef void (*GsLogFunc)(const GsLogEntry *entry, gpointer data);

G_END_DECLS

#endif /* GPUSIM_RUN_RESULT_H */
