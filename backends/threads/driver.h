/*
 * gpusim: the real-thread driver's records, and what its parts share (see
 * threads.h for what the driver decides and how it locks).
 *
 * Who owns what. `lock` (the engine mutex) guards the engine, the task and
 * queue bookkeeping, the shared event log, every thread's `woken` flag and the
 * permit queue. A thread's interpreter, its backend state, its own event log
 * and its footprint belong to the thread that runs it and are read by others
 * only after it has been joined, but in a run where a thread frees another's
 * buffers: there the interpreter and the list of held buffers are also
 * taken by the freeing thread, under the owner's `interp_lock` (across.c).
 * Thread statuses, the engine-state mirror, the contended count and the
 * memory counters are atomics, read without the lock by the fast path and
 * the watchdog.
 *
 * A thread waits in four places: parked in the engine (on its `cond` with
 * `lock`, until `woken` or `stop`), for a GPU permit (same), for the owner of
 * a buffer it frees to allocate it (same), and in a compute,
 * sleep or until (on its `sleep_cond` with its own `sleep_lock`, with a
 * deadline; on the virtual clock, on its `cond` with `lock` until the run
 * loop's clock reaches its deadline), so that stopping a thread wakes it
 * wherever it is.
 *
 * The parts: threads.c runs a scenario (tasks, threads, the loop, the
 * watchdog), waits.c is how a thread waits and is woken, counters.c admits
 * memory without tiers, tiers.c carries out what the tier model decides
 * (allocations, copies, the gate, reservations), downgrade.c is the
 * proactive downgrade's own threads, across.c a free of another thread's
 * buffers.
 */
#ifndef GPUSIM_BACKENDS_THREADS_DRIVER_H
#define GPUSIM_BACKENDS_THREADS_DRIVER_H

#include <pthread.h>
#include <stdatomic.h>

#include "backends/threads/threads.h"
#include "run/members.h"
#include "run/tasks.h"
#include "run/thread.h"
#include "run/tier-ops.h"
#include "run/watch.h"
#include "tiers/memory.h"

typedef GsRunStatus Status;

/* Memory admitted in one space: a bounded counter, on its own cache line. */
typedef struct {
	_Alignas(64) atomic_int_fast64_t used;
	atomic_int_fast64_t peak;
	gint64 capacity;
	gint64 alignment;
	GsTier tier;
	guint device;
} Space;

typedef struct Worker Worker;

/* Virtual clock, under lock: a wait for scenario time, by a thread or a downgrader. */
typedef struct {
	gboolean on;
	GsTime deadline;
} TimedWait;

/*
 * What the interpreter gets as a handle: the backend's, and where it was
 * charged (a Space, or the memory model's record in a run with tiers).
 */
typedef struct {
	guint64 backend;
	Space *space;
	gint64 charged;
	guint name;          /* the buffer's index in the thread's spec */
	GsMemBuf *mb;        /* tiers: its record; its owner field points back here */
	Worker *owner;
	gboolean copying;    /* tiers, under lock: its bytes are being made or moved */
	gboolean doomed;     /* freed while copying: the copier frees it */
	GsTier freed_in;     /* tiers: freed while a compute read it, in that tier; its
				bytes go when the compute's lock does (unlock_mine()) */
	/* Frees across threads, under lock: the computes reading it now, and whether
	   another thread freed it meanwhile (its bytes then go with the last reader) */
	guint readers;
	gboolean freed_while_read;
} Held;

/* A log entry with the order in which it was taken, for the merge at the end. */
typedef struct {
	GsLogEntry entry;
	guint64 seq;
} LogItem;

typedef struct Threads Threads;
typedef struct Task Task;

struct Worker {
	Threads *r;
	GsThreadResult *result;  /* owned by the GsResult */
	const GsThreadSpec *spec;
	GsInterp *interp;        /* the thread's own */
	GsThreadId id;
	Task *task;          /* NULL for pool threads */
	pthread_t os;
	gpointer bk;             /* the backend's per-thread state */
	atomic_int status;       /* Status */
	guint live_at;           /* its place in Threads.live + 1; 0: done (under lock) */
	atomic_int engine_state; /* mirror of the engine's record, set under lock */
	atomic_uint reached;     /* bit i: the thread was in GsThreadState i */
	atomic_bool stop;        /* its task ended, or the run did */
	gboolean woken;          /* under lock */
	pthread_cond_t cond;     /* with lock: parked, semaphore */
	pthread_mutex_t sleep_lock;
	pthread_cond_t sleep_cond; /* with sleep_lock: timed waits */
	gboolean fast_ok;        /* no inject op anywhere in its ops */
	gboolean parked_last;    /* its last effect was WAIT (thread-owned) */
	GsTime parked_since, semaphore_since; /* under lock */
	gint64 footprint;        /* GPU bytes it allocated less those it freed (thread-owned) */
	atomic_int_fast64_t max_footprint; /* written by the thread, read under lock */
	GArray *log;             /* LogItem (thread-owned) */
	GPtrArray *live;         /* Held* the thread holds (thread-owned; under lock with tiers) */
	GPtrArray *reading;      /* Held* its compute reads, in a run that frees across threads */
	GsRunThreadTiers *tiers; /* its part in the tiers (under lock); NULL until it uses them */
	/* Frees across threads (Threads.frees_across): another thread may take its buffers. */
	pthread_mutex_t interp_lock; /* held around its interpreter's calls and its live */
	GArray *allocated;       /* under lock: gboolean per buffer name, set once allocated */
	const GsOp *owner_op;    /* under lock: the free it waits to make (GS_RUN_OWNER) */
	gint64 leaking;          /* bytes handed back as it ended (thread-owned): a leak if it completes */
	TimedWait timed;         /* virtual clock: its sleep, until, compute or alloc latency */
};

struct Task {
	GsRunTask run;           /* first: the attempt as the run layer keeps it (under lock) */
	GPtrArray *threads;      /* Worker* */
	gboolean failed;         /* how it ended, kept until its threads have exited */
	GsException failure;
	GsTime arrival;
	GsPageTable *pages;      /* its host pages (Spark's page table), made at its first; under lock */
};

struct Threads {
	const GsWorkload *w;
	GsRunOptions opts;
	const GsBackendOps *ops;
	gpointer bk;
	GsResult *res;
	GsEngine *engine;
	pthread_mutex_t lock;
	pthread_cond_t done_cond; /* with lock: the run may have ended */
	gint64 t0;               /* monotonic microseconds at the start */
	double scale;
	gboolean virtual_clock;  /* opts.clock is GS_CLOCK_VIRTUAL */
	atomic_int_fast64_t clock; /* virtual clock: scenario time now, moved by the run loop under lock */
	guint idle;              /* under lock: active, but waiting for the clock: a time, or a copy to land */
	guint copy_waiters;      /* under lock: threads among `idle` waiting on copies_cond */
	guint64 copies_changes;  /* under lock: broadcasts of copies_cond */
	guint looking;           /* virtual clock, under lock: downgraders woken that have not looked */
	Space *gpus;
	guint n_gpus;
	Space host;
	atomic_int contended;    /* records in a state other than RUNNING */
	atomic_uint_fast64_t seq;
	atomic_uint_fast64_t events; /* the result's events_processed */
	atomic_uint_fast64_t fast_allocs, locked_allocs, fast_frees, frees;
	GPtrArray *tasks;        /* Task*, every attempt (under lock) */
	GPtrArray *threads;      /* Worker*, index id - 1 (under lock) */
	/* Worker* not done (under lock): what the watchdog, samples and virtual clock look at */
	GsRunMembers live;
	GsRunTasks run;          /* attempts, executor slots, permits (under lock) */
	GsRunWatch watch;        /* what the engine tells the run */
	GsThreadId next_thread;
	guint active;            /* threads neither parked, waiting for a permit, nor done */
	atomic_bool ended;       /* the run is over: threads unwind without reporting */
	GsTime end_time;
	GArray *log;             /* LogItem taken under lock */
	double used_integral[GS_N_TIERS];
	GsTime last_sample;
	/* The memory tiers (NULL: the bounded counters alone), all under lock: */
	GsMemory *mem;
	GArray *moves;           /* GsSpillMove scratch */
	GsRunTiers tier_ops;    /* reservations and the gate's scopes: the run layer's */
	pthread_cond_t copies_cond; /* with lock: a move landed, or a thread left the gate */
	guint64 corrupt_moves;   /* moves whose bytes did not arrive whole */
	/* policy.spill.proactive: a downgrader thread per GPU and their state, under lock */
	GArray *downgrading;     /* gboolean per GPU device: a downgrade is on (NULL: none) */
	pthread_cond_t downgrade_cond; /* with lock: a GPU's charge grew, or the run ended */
	struct Downgrader *downgraders; /* one per GPU device */
	GError *device_error;    /* under lock: the device failed, and the run ended with this */
	/* A thread frees another's buffers (free: {buf, thread}), under lock: */
	gboolean frees_across;
	GHashTable *by_name;     /* thread name -> its latest Worker */
	GPtrArray *owner_waiters; /* Worker* waiting for an owner to allocate what they free */
};

/* The thread that makes one GPU's proactive copies, one at a time. */
typedef struct Downgrader {
	Threads *r;
	guint device;
	pthread_t thread;
	gboolean looking;        /* virtual clock, under lock: woken, and has not looked yet */
	TimedWait timed;         /* virtual clock: its copy's modelled time */
} Downgrader;

/* A move the thread carries out: begun in the model, made by the backend, then landed. */
typedef struct {
	Held *held;
	GsTier from, to;
	guint device;        /* its GPU space, read under lock */
	guint64 source;      /* the backend handle copied from */
	guint64 moved;       /* the new copy, once made */
	gboolean made, intact;
	GsTime modelled;     /* how long the links take for it: the virtual clock waits as long */
} Move;

/* Scenario time now: the virtual clock's, or real time over --time-scale. */
static inline GsTime
now(Threads *r)
{
	if (r->virtual_clock)
		return atomic_load(&r->clock);
	return (GsTime) ((double) (g_get_monotonic_time() - r->t0) * 1000.0 / r->scale);
}

/* The monotonic microsecond at which scenario time @t falls. */
static inline gint64
real_at(Threads *r, GsTime t)
{
	return gs_time_add(r->t0, gs_time_from_double((double) t * r->scale / 1000.0));
}

/* Thread ids are handed out 1, 2, 3... in the order of r->threads. */
static inline Worker *
thread_of(Threads *r, GsThreadId id)
{
	return id >= 1 && id <= r->threads->len ? r->threads->pdata[id - 1] : NULL;
}

/*
 * Virtual clock, under lock: nothing is left to happen at this instant.
 * Every active thread waits for a later time, and no downgrader has a look
 * to take (one making a copy counts as active).
 */
static inline gboolean
quiet(const Threads *r)
{
	return r->active == r->idle && r->looking == 0;
}

/* One more event handled: an arrival, a thread going on after a wait, a tick, a proactive copy. */
static inline void
count_event(Threads *r)
{
	atomic_fetch_add_explicit(&r->events, 1, memory_order_relaxed);
}

/* The run layer's record of the thread's task attempt; NULL for a pool thread. */
static inline const GsRunTask *
task_of(const Worker *t)
{
	return t->task != NULL ? &t->task->run : NULL;
}

/* waits.c: time, the log, statuses, waits and wake-ups */
G_GNUC_INTERNAL void threads_cond_init(pthread_cond_t *cond);
G_GNUC_INTERNAL void threads_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex,
					     gint64 deadline);
G_GNUC_INTERNAL void threads_log_to(Threads *r, GArray *log, GsLogEntry *entry);
G_GNUC_INTERNAL void threads_log_locked(Threads *r, GsLogEntry *entry);
G_GNUC_INTERNAL void threads_flush_logs(Threads *r);
G_GNUC_INTERNAL void threads_note_quiet(Threads *r);
G_GNUC_INTERNAL void threads_set_status(Threads *r, Worker *t, Status s);
G_GNUC_INTERNAL void threads_drain_wakes(Threads *r);
G_GNUC_INTERNAL void threads_engine_lock(gpointer data);
G_GNUC_INTERNAL void threads_engine_unlock(gpointer data);
G_GNUC_INTERNAL void threads_stop_thread(Worker *t);
G_GNUC_INTERNAL void threads_timed_wait(Threads *r, TimedWait *w, pthread_cond_t *cond, GsTime until,
					atomic_bool *stop);
G_GNUC_INTERNAL void threads_copies_changed(Threads *r);
G_GNUC_INTERNAL void threads_wait_copies(Worker *t);
G_GNUC_INTERNAL gboolean threads_wait_until(Worker *t, GsTime until);
G_GNUC_INTERNAL gboolean threads_take_permit(Worker *t);
G_GNUC_INTERNAL gboolean threads_park(Worker *t);

/* counters.c: memory admitted by bounded counters, the fast path */
G_GNUC_INTERNAL void threads_space_give(Space *s, gint64 n);
G_GNUC_INTERNAL void threads_count_footprint(Worker *t, gint64 bytes);
G_GNUC_INTERNAL gboolean threads_take_memory(Worker *t, const GsEffect *e, guint64 *handle,
					     gint64 *usage);
/* Allocation @e granted, by the host pool @pool (NULL: none to name), @fallback if it fell back. */
G_GNUC_INTERNAL void threads_log_granted(Worker *t, const GsEffect *e, const char *pool,
					 gboolean fallback);
/* Allocation @e refused, @why, with @usage the would-be counter of the space without room. */
G_GNUC_INTERNAL void threads_log_refused(Worker *t, const GsEffect *e, gint64 usage, GsRefusal why);
G_GNUC_INTERNAL gboolean threads_fast_alloc(gpointer data, const GsEffect *alloc, guint64 *handle);
G_GNUC_INTERNAL gboolean threads_fast_free(gpointer data, const GsEffect *freed);

/* tiers.c: the tier model's decisions carried out (under lock unless said) */
G_GNUC_INTERNAL void threads_tiers_free(GsRunThreadTiers *mine);
G_GNUC_INTERNAL gboolean threads_ops_any(const GArray *ops, gboolean (*is)(const GsOp *op));
G_GNUC_INTERNAL gboolean threads_tiers_needed(const GsWorkload *w);
G_GNUC_INTERNAL void threads_live_listed(Worker *t, const GsNames *names, GArray *ids,
					 GArray *handles);
G_GNUC_INTERNAL void threads_reading_begin(Worker *t, const GsNames *names);
G_GNUC_INTERNAL void threads_reading_end(Worker *t);
G_GNUC_INTERNAL gboolean threads_defer_to_readers(Held *held);
G_GNUC_INTERNAL gboolean threads_read_elsewhere(Threads *r, Held *held);
G_GNUC_INTERNAL gboolean threads_move_begin(Threads *r, Held *held, GsTier to, GArray *moves);
G_GNUC_INTERNAL void threads_move_make(Threads *r, gpointer bk, Move *mv, const char *who);
G_GNUC_INTERNAL gboolean threads_move_land(Threads *r, gpointer bk, GsThreadId by, Move *mv);
G_GNUC_INTERNAL void threads_tiered_alloc(Worker *t, const GsEffect *e);
G_GNUC_INTERNAL GsTier threads_tiered_free(Worker *t, Held *held, const char **pool);
G_GNUC_INTERNAL gboolean threads_tiered_compute_begin(Worker *t, const GsEffect *e, GArray *uses);
G_GNUC_INTERNAL void threads_tiered_compute_end(Worker *t);
G_GNUC_INTERNAL GsRunThreadTiers *threads_tiers_of(gpointer data, gpointer thread);
G_GNUC_INTERNAL GsRunTask *threads_task_of(gpointer data, gpointer thread);
G_GNUC_INTERNAL void threads_note_tier_peak(gpointer data, GsTier tier);
G_GNUC_INTERNAL void threads_memory_came_free(gpointer data, GsTier tier);
G_GNUC_INTERNAL void threads_reservation_wakes(gpointer data, gpointer thread);
G_GNUC_INTERNAL void threads_buffers_listed(gpointer thread, const GsNames *names, GArray *ids);
G_GNUC_INTERNAL void threads_tiered_op(Worker *t, const GsOp *op);
G_GNUC_INTERNAL void threads_on_block(const GsOp *retry_op, gboolean entering, gpointer data);
G_GNUC_INTERNAL void threads_tiers_thread_ends(Worker *t);

/* across.c: a thread that frees another thread's buffers */
G_GNUC_INTERNAL void threads_interp_lock(Worker *t);
G_GNUC_INTERNAL void threads_interp_unlock(Worker *t);
G_GNUC_INTERNAL void threads_op_failed(Worker *t, GsException exc);
G_GNUC_INTERNAL void threads_note_allocated(Worker *t, guint name);
G_GNUC_INTERNAL void threads_owner_moved(Threads *r, Worker *owner);
G_GNUC_INTERNAL gboolean threads_free_for(Worker *t, const GsOp *op);
G_GNUC_INTERNAL void threads_release_given_away(Threads *r);

/* downgrade.c: the proactive downgrade's threads */
G_GNUC_INTERNAL void threads_downgrade_wake(Threads *r);
G_GNUC_INTERNAL void threads_downgrader_start(Threads *r);
G_GNUC_INTERNAL void threads_downgrader_join(Threads *r);

/* threads.c: the run */
G_GNUC_INTERNAL gboolean threads_device_works(Threads *r);

#endif /* GPUSIM_BACKENDS_THREADS_DRIVER_H */
