/*
 * gpusim: the simulator's records, and what its parts share (see sim.h for
 * the loop and its rules).
 *
 * Threads move between the run layer's statuses (src/run/thread.h): READY
 * (a resumption is due), BUSY (computing, paying allocation latency, or
 * waiting for its copies), SLEEPING, PARKED (waiting in the engine for a
 * wake-up), SEMAPHORE (waiting for a GPU permit), RESERVE (a blocking
 * reservation), GATE (a copy waiting for the evacuation gate to drain) and
 * DONE. A thread expects the one resumption it scheduled last (its sequence
 * number in the heap); forgetting it cancels the one in flight (when a task
 * ends under a busy thread).
 *
 * The memory tiers (src/tiers/memory.h) decide where buffers live and what
 * each space is charged; the simulator's tiers.c decides when to spill
 * (inside a failing allocation, and proactively after an instant), who
 * waits for a copy (the thread whose allocation needed it, for the links'
 * time), and what a thread that ends gives back (locks, reservations,
 * copies in flight).
 *
 * The parts: sim.c runs the loop (events, threads, tasks, the watchdog);
 * tiers.c carries out what the tier model decides (allocations, copies, the
 * gate, reservations, the proactive downgrade).
 */
#ifndef GPUSIM_SIM_DRIVER_H
#define GPUSIM_SIM_DRIVER_H

#include <gpusim/pages.h>

#include "run/members.h"
#include "run/tasks.h"
#include "run/thread.h"
#include "run/tier-ops.h"
#include "run/watch.h"
#include "sim/heap.h"
#include "sim/sim.h"
#include "tiers/memory.h"

typedef enum { EV_TASK_ARRIVE, EV_THREAD_RESUME, EV_WATCHDOG, EV_PROACTIVE } EventKind;

/* SimThread.resume_seq of a thread that expects no resumption: no event has it. */
#define NO_RESUME G_MAXUINT64

typedef GsRunStatus Status;

/* What a thread does once the copies it carries out have landed. */
typedef enum {
	AFTER_NOTHING,
	AFTER_ALLOC,   /* try its allocation again */
} After;

/*
 * A thread's part in the memory tiers, made the first time it needs one:
 * its live buffers (compute uses name them), its reservations, the copies it
 * is carrying out, and the locks it holds.
 */
typedef struct {
	GPtrArray *bufs;         /* GsMemBuf*, live, oldest first (only when buffers can move) */
	GsRunThreadTiers res;   /* its reservations, by reservation name */
	GArray *copies;          /* GsSpillBufId: copies in flight */
	GArray *fallbacks;       /* GsSpillBufId: victims whose copy found no room */
	gboolean computing;      /* a synchronous compute holds the locks in res.locked */
	gboolean gave_up;        /* its last fallback moved nothing: the next spill is not tried */
	After after;
} SimMem;

/* Every record packed in a table holds only pointers and 64-bit integers at most. */
#define RECORD_ALIGN 8

static inline gsize
record_size(gsize size)
{
	return (size + RECORD_ALIGN - 1) & ~(gsize) (RECORD_ALIGN - 1);
}

/*
 * The simulator's threads and tasks: fixed-size records numbered 0, 1, 2...
 * in chunks of TABLE_CHUNK, found by number with no array of pointers (whose
 * doubling alone cost 13 bytes a thread), never moved, freed with the table.
 */
typedef struct {
	GPtrArray *chunks; /* TABLE_CHUNK records each, owned */
	gsize stride;
	guint len;
} Table;

#define TABLE_CHUNK 256

static inline void
table_init(Table *t, gsize stride)
{
	t->chunks = g_ptr_array_new_with_free_func(g_free);
	t->stride = record_size(stride);
	t->len = 0;
}

static inline gpointer
table_get(const Table *t, guint i)
{
	return (guint8 *) t->chunks->pdata[i / TABLE_CHUNK] + (gsize) (i % TABLE_CHUNK) * t->stride;
}

/* A new zeroed record, numbered t->len - 1. */
static inline gpointer
table_add(Table *t)
{
	if (t->len % TABLE_CHUNK == 0)
		g_ptr_array_add(t->chunks, g_malloc0(TABLE_CHUNK * t->stride));
	return table_get(t, t->len++);
}

static inline void
table_clear(Table *t)
{
	g_ptr_array_unref(t->chunks);
}

typedef struct SimTask SimTask;

typedef struct Sim Sim;

typedef struct {
	Sim *sim;
	GsThreadResult *result; /* its row in the result */
	const GsThreadSpec *spec;
	GsThreadId id;
	SimTask *task;          /* NULL for pool threads */
	guint64 resume_seq;     /* the resumption it expects; NO_RESUME: none */
	const void *next_read;  /* what its interpreter reads first when it resumes */
	guint8 status;          /* Status */
	guint try_due : 1;       /* the interpreter's allocation is tried when it resumes */
	guint reported : 1;      /* its final state and exceptions are in its result */
	guint in_lane : 1;       /* it waits for a byte move that shares links.lanes (lanes.c) */
	guint outside_at;       /* its place in Sim.outside + 1; 0: it waits for nothing there */
	GsTime since;           /* when it began to wait, in GS_RUN_SEMAPHORE or GS_RUN_PARKED */
	SimMem *mem;            /* NULL until the thread uses the memory tiers */
	gint64 leaking;         /* bytes handed back as the thread ended (a leak if it completes) */
	/*
	 * Its interpreter, NULL once its task attempt is released: the record
	 * stays for the ids that name it (events, the engine, buffers' owners),
	 * the interpreter's state and memory go with the attempt.
	 */
	GsInterp *interp;
} SimThread;

static inline GsInterp *
interp_of(SimThread *t)
{
	return t->interp;
}

struct SimTask {
	GsRunTask run;          /* first: the attempt as the run layer keeps it */
	GsPageTable *pages;     /* its host pages (Spark's page table), made at its first */
	guint32 first_thread;   /* its threads, once started: ids first_thread .. + n_threads - 1 */
	guint32 n_threads;      /* (a run holds at most ten million threads) */
};

/* The run layer's record of the thread's task attempt; NULL for a pool thread. */
static inline const GsRunTask *
task_of(const SimThread *t)
{
	return t->task != NULL ? &t->task->run : NULL;
}

struct Sim {
	const GsWorkload *w;
	GsRunOptions opts;
	GsResult *r;
	GsEngine *engine;
	GsHeap *heap;
	GsMemory *mem;
	GsRunTiers tier_ops;    /* reservations and the gate's scopes: the run layer's */
	GQueue gate_waiters;    /* SimThread* in GS_RUN_GATE until the gate drains, FIFO */
	GQueue open_waiters;    /* SimThread* in GS_RUN_GATE until the gate opens, FIFO */
	gboolean released;      /* memory was freed or released this instant */
	GArray *downgrading;    /* gboolean per GPU device: proactive downgrade in progress */
	GArray *proactive_copy; /* GsSpillBufId per GPU device: its copy in flight, or 0 */
	GArray *moves;          /* GsSpillMove scratch */
	Table tasks;            /* SimTask, every attempt */
	Table threads;          /* SimThread, every thread: id - 1 */
	GHashTable *by_name;    /* name -> its latest SimThread, when a thread frees another's */
	GPtrArray *owner_waiters; /* SimThread* that wait to free another's buffer, in order */
	GHashTable *owner_waits;  /* such a SimThread* -> its free op, until it carries it out */
	GsRunTasks run;         /* attempts, executor slots, permits */
	GsRunWatch watch;       /* what the engine tells the run */
	GsThreadId next_thread;
	GsTime now;
	gboolean watchdog_armed;
	gboolean watchdog_idle; /* the last event was a watchdog tick that found no deadlock */
	gboolean watchdog_started; /* its first tick has been scheduled (its phase chosen) */
	GArray *pass;           /* GsEvent: the pass's events not yet fired, when a chooser
				   orders them (opts.choose); NULL: the heap's order */
	guint pending_events;   /* non-watchdog events in the heap */
	guint live;             /* threads not DONE */
	guint live_dedicated;   /* of which task threads */
	guint waiting;          /* task threads PARKED or waiting for a permit */
	/* SimThread* the watchdog passes as waiting outside the allocator */
	GsRunMembers outside;
	guint8 counted_as[GS_RUN_DONE + 1]; /* what each status counts in the above (sim_set_status) */
	gboolean changed;
	guint64 next_progress;  /* events_processed at which progress is told next */
	GsSample last;          /* the latest sample, kept or not */
	double used_integral[GS_N_TIERS];
	GArray *lanes_work;     /* lanes.c's moves in flight, when links.lanes is set */
	GsTime lanes_at;        /* when their work left was last brought up to date */
	/* What the event firing now touches, when a search is told (footprint.c) */
	gboolean event_shared;  /* it touched what other threads' events touch */
	GArray *pass_threads;   /* the pass's waiting threads as they were before it fired */
	GArray *writes;         /* GsThreadId: those it changed */
};

static inline SimThread *
thread_of(const Sim *s, GsThreadId id)
{
	/* Thread ids are handed out 1, 2, 3... in the order of s->threads. */
	return id >= 1 && id <= s->threads.len ? table_get(&s->threads, id - 1) : NULL;
}

/*
 * The event firing now touches what other threads' events touch: the
 * engine, the memory, the tiers, the run's tasks (footprint.c). Called where
 * the simulator does such things on a path a private event could take.
 */
static inline void
sim_touches_shared(Sim *s)
{
	s->event_shared = TRUE;
}


/* Whether anyone reads the event log: entries that cost lookups are made only then. */
static inline gboolean
logging(const Sim *s)
{
	return s->opts.log != NULL;
}

static inline void
emit(Sim *s, GsLogEntry *entry)
{
	entry->time = s->now;
	if (logging(s))
		s->opts.log(entry, s->opts.log_data);
}

/* sim.c: the loop, threads and tasks */
G_GNUC_INTERNAL void sim_log_entry(gpointer data, GsLogEntry *entry);
G_GNUC_INTERNAL void sim_set_status(Sim *s, SimThread *t, Status status);
/* Returns the event's sequence number. */
G_GNUC_INTERNAL guint64 sim_schedule(Sim *s, GsTime time, EventKind kind, guint target);
G_GNUC_INTERNAL void sim_resume_at(Sim *s, SimThread *t, GsTime time, Status status);
/* An allocation attempt's or a copy's @nominal duration, as a schedule jitters it (GS_CHOICE_LATENCY). */
G_GNUC_INTERNAL GsTime sim_latency(Sim *s, GsTime nominal);
G_GNUC_INTERNAL void sim_note_peak(Sim *s, GsTier tier);
G_GNUC_INTERNAL void sim_do_association(Sim *s, SimThread *t, const GsOp *op);

/* tiers.c: the tier model's decisions carried out */
G_GNUC_INTERNAL void sim_mem_free(SimMem *m);
G_GNUC_INTERNAL void sim_try_alloc(Sim *s, SimThread *t, const GsEffect *effect);
G_GNUC_INTERNAL void sim_do_free(Sim *s, SimThread *t, const GsEffect *effect);
G_GNUC_INTERNAL gboolean sim_begin_compute(Sim *s, SimThread *t, const GsEffect *effect);
G_GNUC_INTERNAL GsRunThreadTiers *sim_tiers_of(gpointer data, gpointer thread);
G_GNUC_INTERNAL GsRunTask *sim_task_of(gpointer data, gpointer thread);
G_GNUC_INTERNAL void sim_reservation_granted(gpointer data, GsTier tier);
G_GNUC_INTERNAL void sim_memory_came_free(gpointer data, GsTier tier);
G_GNUC_INTERNAL void sim_reservation_wakes(gpointer data, gpointer thread);
G_GNUC_INTERNAL void sim_buffers_listed(gpointer thread, const GsNames *names, GArray *ids);
G_GNUC_INTERNAL gboolean sim_do_op(Sim *s, SimThread *t, const GsOp *op);
/*
 * A free of another thread's buffers (op->free.thread): FALSE, with @t in
 * GS_RUN_OWNER, until that thread has allocated them or ended.
 */
G_GNUC_INTERNAL gboolean sim_free_for(Sim *s, SimThread *t, const GsOp *op);
/* On resuming: the free @t waited to carry out, if any; FALSE if it waits again. */
G_GNUC_INTERNAL gboolean sim_free_for_again(Sim *s, SimThread *t);
/* @owner allocated a buffer or ended: the threads waiting to free its buffers go on if they may. */
G_GNUC_INTERNAL void sim_wake_owner_waiters(Sim *s, SimThread *owner);

/* sim_wake_owner_waiters(), at no cost on the hot paths while nobody waits. */
static inline void
sim_owner_moved(Sim *s, SimThread *owner)
{
	if (s->owner_waiters != NULL && s->owner_waiters->len > 0)
		sim_wake_owner_waiters(s, owner);
}
/* lanes.c: byte moves that share links.lanes */
G_GNUC_INTERNAL void sim_lanes_init(Sim *s);
G_GNUC_INTERNAL void sim_lanes_clear(Sim *s);
/* @t waits for @full_rate of byte moves (its copies if @copies), shared with the others in flight. */
G_GNUC_INTERNAL void sim_lanes_begin(Sim *s, SimThread *t, GsTime full_rate, gboolean copies);
/* @t's byte move is over: it resumes, or its task ended under it. */
G_GNUC_INTERNAL void sim_lanes_end(Sim *s, SimThread *t);

/*
 * footprint.c: what each event of a pass touched, told to a search
 * (opts.footprints) so that it can leave out orders that cannot matter.
 */
G_GNUC_INTERNAL void sim_footprint_init(Sim *s);
G_GNUC_INTERNAL void sim_footprint_clear(Sim *s);
/* Before @ev, one that does something, fires (@t: the thread it resumes, or NULL): @t's status. */
G_GNUC_INTERNAL Status sim_footprint_begin(Sim *s, const GsEvent *ev, const SimThread *t);
/* After it fired, @t's status @before: the search is told what it touched. */
G_GNUC_INTERNAL void sim_footprint_end(Sim *s, const GsEvent *ev, const SimThread *t,
				       Status before);

G_GNUC_INTERNAL void sim_on_block(const GsOp *retry_op, gboolean entering, gpointer data);
G_GNUC_INTERNAL void sim_mem_thread_ends(Sim *s, SimThread *t);
G_GNUC_INTERNAL gboolean sim_mem_resume(Sim *s, SimThread *t);
G_GNUC_INTERNAL void sim_proactive(Sim *s);
G_GNUC_INTERNAL void sim_proactive_landed(Sim *s, guint device);

#endif /* GPUSIM_SIM_DRIVER_H */
