/*
 * gpusim: the discrete-event simulator (see sim.h for the loop and its rules).
 *
 * Threads move between the run layer's statuses (src/run/thread.h): READY
 * (a resumption is due), BUSY (computing, paying allocation latency, or
 * waiting for its copies), SLEEPING, PARKED (waiting in the engine for a
 * wake-up), SEMAPHORE (waiting for a GPU permit), RESERVE (a blocking
 * reservation), GATE (a copy waiting for the evacuation gate to drain) and
 * DONE. Every scheduled
 * resumption carries the thread's generation; bumping it cancels the ones in
 * flight (when a task ends under a busy thread).
 *
 * The memory tiers (src/tiers/memory.h) decide where buffers live and what each
 * space is charged; this file decides when to spill (inside a failing
 * allocation, and proactively after an instant), who waits for a copy (the
 * thread whose allocation needed it, for the links' time), and what a thread
 * that ends gives back (locks, reservations, copies in flight).
 */
#include "config.h"

#include <string.h>

#include <gpusim/pages.h>

#include "run/tasks.h"
#include "run/thread.h"
#include "run/tier-ops.h"
#include "run/watch.h"
#include "sim/heap.h"
#include "sim/sim.h"
#include "tiers/memory.h"

typedef enum { EV_TASK_ARRIVE, EV_THREAD_RESUME, EV_WATCHDOG, EV_PROACTIVE } EventKind;

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
	GArray *locked;          /* GsSpillBufId: the synchronous locks it holds */
	GArray *inputs;          /* GsSpillBufId: buffers made spillable by its retry blocks */
	gboolean computing;      /* a synchronous compute holds the locks in .locked */
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

static void
table_init(Table *t, gsize stride)
{
	t->chunks = g_ptr_array_new_with_free_func(g_free);
	t->stride = record_size(stride);
	t->len = 0;
}

static gpointer
table_get(const Table *t, guint i)
{
	return (guint8 *) t->chunks->pdata[i / TABLE_CHUNK] + (gsize) (i % TABLE_CHUNK) * t->stride;
}

/* A new zeroed record, numbered t->len - 1. */
static gpointer
table_add(Table *t)
{
	if (t->len % TABLE_CHUNK == 0)
		g_ptr_array_add(t->chunks, g_malloc0(TABLE_CHUNK * t->stride));
	return table_get(t, t->len++);
}

static void
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
	guint64 generation;
	guint8 status;          /* Status */
	guint try_due : 1;       /* the interpreter's allocation is tried when it resumes */
	guint reported : 1;      /* its final state and exceptions are in its result */
	GsTime since;           /* when it began to wait, in GS_RUN_SEMAPHORE or GS_RUN_PARKED */
	SimMem *mem;            /* NULL until the thread uses the memory tiers */
	gint64 leaking;         /* bytes handed back as the thread ended (a leak if it completes) */
	/* its interpreter follows, in the same allocation: interp_of() */
} SimThread;

G_STATIC_ASSERT(sizeof(SimThread) % sizeof(gint64) == 0);

static inline GsInterp *
interp_of(SimThread *t)
{
	return (GsInterp *) (t + 1);
}

struct SimTask {
	GsRunTask run;          /* first: the attempt as the run layer keeps it */
	GsPageTable *pages;     /* its host pages (Spark's page table), made at its first */
	guint32 first_thread;   /* its threads, once started: ids first_thread .. + n_threads - 1 */
	guint32 n_threads;      /* (a run holds at most ten million threads) */
};

struct Sim {
	const GsWorkload *w;
	GsRunOptions opts;
	GsResult *r;
	GsEngine *engine;
	GsHeap *heap;
	GsMemory *mem;
	GsExecutionPool *fair;  /* policy.admission fair_share: the tasks' GPU shares */
	GsRunTiers tier_ops;    /* reservations and the gate's scopes: the run layer's */
	GQueue gate_waiters;    /* SimThread* in GS_RUN_GATE until the gate drains, FIFO */
	GQueue open_waiters;    /* SimThread* in GS_RUN_GATE until the gate opens, FIFO */
	gboolean released;      /* memory was freed or released this instant */
	GArray *downgrading;    /* gboolean per GPU device: proactive downgrade in progress */
	GArray *proactive_copy; /* GsSpillBufId per GPU device: its copy in flight, or 0 */
	GArray *moves;          /* GsSpillMove scratch */
	Table tasks;            /* SimTask, every attempt */
	Table threads;          /* SimThread and its interpreter, every thread: id - 1 */
	GsRunTasks run;         /* attempts, executor slots, permits */
	GsRunWatch watch;       /* what the engine tells the run */
	GsThreadId next_thread;
	GsTime now;
	gboolean watchdog_armed;
	gboolean watchdog_idle; /* the last event was a watchdog tick that found no deadlock */
	guint pending_events;   /* non-watchdog events in the heap */
	guint live;             /* threads not DONE */
	guint live_dedicated;   /* of which task threads */
	guint waiting;          /* task threads PARKED or waiting for a permit */
	gboolean changed;
	GsSample last;          /* the latest sample, kept or not */
	double used_integral[GS_N_TIERS];
};

/* ---- logging ---- */

/* Whether anyone reads the event log: entries that cost lookups are made only then. */
static gboolean
logging(const Sim *s)
{
	return s->opts.log != NULL;
}

static void
emit(Sim *s, GsLogEntry *entry)
{
	entry->time = s->now;
	if (logging(s))
		s->opts.log(entry, s->opts.log_data);
}

/* The run layer's log hook. */
static void
log_entry(gpointer data, GsLogEntry *entry)
{
	emit(data, entry);
}

static SimThread *
thread_of(Sim *s, GsThreadId id)
{
	/* Thread ids are handed out 1, 2, 3... in the order of s->threads. */
	return id >= 1 && id <= s->threads.len ? table_get(&s->threads, id - 1) : NULL;
}

/* Every status change goes through here, so that the counts stay O(1) to read. */
static void
set_status(Sim *s, SimThread *t, Status status)
{
	if (t->task != NULL) {
		s->waiting -= gs_run_waits_on_another(t->status);
		s->waiting += gs_run_waits_on_another(status);
		s->live_dedicated -= t->status != GS_RUN_DONE;
		s->live_dedicated += status != GS_RUN_DONE;
	}
	s->live -= t->status != GS_RUN_DONE;
	s->live += status != GS_RUN_DONE;
	t->status = status;
}

/* ---- the run layer's hooks: what the engine tells the run ---- */

static const char *
thread_name(gpointer data, GsThreadId id)
{
	SimThread *t = thread_of(data, id);

	return t != NULL ? t->result->name : NULL;
}

static void
thread_moved(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to)
{
	Sim *s = data;
	SimThread *t = thread_of(s, id);

	if (t == NULL)
		return;
	t->result->reached |= 1u << to;
	s->changed = TRUE;
}

static const GsRunWatchHooks watch_hooks = {
	.name = thread_name,
	.moved = thread_moved,
	.log = log_entry,
};

static void
on_exception(const GsSeenException *x, gpointer data)
{
	SimThread *t = data;
	GsLogEntry e = gs_run_throw_entry(t->result->name, x);

	emit(t->sim, &e);
}

/* ---- scheduling ---- */

static void
schedule(Sim *s, GsTime time, EventKind kind, guint64 target, guint64 generation)
{
	gs_heap_push(s->heap, time, kind, target, generation);
	if (kind != EV_WATCHDOG)
		s->pending_events++;
}

static void
resume_at(Sim *s, SimThread *t, GsTime time, Status status)
{
	set_status(s, t, status);
	schedule(s, time, EV_THREAD_RESUME, t->id, ++t->generation);
}

/* Resumes every parked thread the engine woke, in the order it woke them. */
static void
drain_wakes(Sim *s)
{
	GsThreadId id;

	while (gs_engine_pop_wake(s->engine, &id)) {
		SimThread *t = thread_of(s, id);

		if (t != NULL && t->status == GS_RUN_PARKED)
			resume_at(s, t, s->now, GS_RUN_READY);
	}
}

/* ---- tiers ---- */

static gint64
tier_used(Sim *s, GsTier tier)
{
	return gs_memory_used(s->mem, tier);
}

static void
sample(Sim *s)
{
	GsSample x = {.time = s->now};
	GArray *timeline = s->r->timeline;

	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		/* Since the last sample the tier held what that sample saw. */
		s->used_integral[tier] +=
			(double) s->last.used[tier] * (double) (s->now - s->last.time);
		x.used[tier] = tier_used(s, tier);
		x.charged[tier] = gs_memory_charged(s->mem, tier);
		s->r->tiers[tier].peak_used = MAX(s->r->tiers[tier].peak_used, x.used[tier]);
		s->r->tiers[tier].peak_charged = MAX(s->r->tiers[tier].peak_charged, x.charged[tier]);
	}
	x.blocked = gs_engine_n_in_state(s->engine, GS_THREAD_BLOCKED);
	x.bufn = gs_engine_n_in_state(s->engine, GS_THREAD_BUFN);
	x.running = s->live - MIN(s->live, x.blocked + x.bufn);
	s->last = x;
	s->changed = FALSE;
	if (s->opts.skip_timeline)
		return;
	/* One sample per instant: a later change at the same time replaces it. */
	if (timeline->len > 0 && g_array_index(timeline, GsSample, timeline->len - 1).time == s->now)
		g_array_index(timeline, GsSample, timeline->len - 1) = x;
	else
		g_array_append_val(timeline, x);
}

/* ---- the GPU semaphore ---- */

/* TRUE if @t's task holds the GPU permit or takes it now; else the thread waits for it. */
static gboolean
take_permit(Sim *s, SimThread *t)
{
	if (t->task == NULL || gs_run_tasks_take_permit(&s->run, &t->task->run))
		return TRUE;
	set_status(s, t, GS_RUN_SEMAPHORE);
	t->since = s->now;
	return FALSE;
}

/* ---- effects ---- */

/*
 * Peaks are taken at every allocation, not only at the end of an instant: a
 * buffer allocated and freed within one instant still held its bytes.
 */
static void
note_peak(Sim *s, GsTier tier)
{
	GsTierResult *r = &s->r->tiers[tier];

	r->peak_used = MAX(r->peak_used, tier_used(s, tier));
	r->peak_charged = MAX(r->peak_charged, gs_memory_charged(s->mem, tier));
}


/*
 * The pool op: (un)register a pool thread for the tasks named, that is for the
 * current attempt of each copy of each (copies of a repeated task are
 * separate tasks, and the pool thread serves all of them).
 */
static void
do_pool(Sim *s, SimThread *t, const GsOp *op)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsTaskId));

	for (guint i = 0; i < op->pool.tasks->len; i++) {
		guint spec_index = g_array_index(op->pool.tasks, guint, i);

		for (guint k = 0; k < s->tasks.len; k++) {
			SimTask *task = table_get(&s->tasks, k);

			if (task->run.spec_index == spec_index && task->run.status != GS_RUN_TASK_ENDED)
				g_array_append_val(ids, task->run.engine_id);
		}
	}
	if (op->pool.done)
		gs_engine_pool_done(s->engine, t->id, (GsTaskId *) ids->data, ids->len, s->now);
	else
		gs_engine_register_pool(s->engine, t->id, (GsTaskId *) ids->data, ids->len,
					t->spec->shuffle, s->now);
}

/* ---- the memory tiers: buffers, copies, the gate, reservations ---- */

static SimMem *
mem_of(Sim *s, SimThread *t)
{
	if (t->mem == NULL) {
		SimMem *m = g_new0(SimMem, 1);

		m->bufs = g_ptr_array_new();
		gs_run_thread_tiers_init(&m->res, &s->tier_ops, t->id, t->result->name, t->spec);
		m->copies = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		m->fallbacks = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		m->locked = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		m->inputs = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		t->mem = m;
	}
	return t->mem;
}

static void
sim_mem_free(SimMem *m)
{
	if (m == NULL)
		return;
	g_ptr_array_unref(m->bufs);
	gs_run_thread_tiers_clear(&m->res);
	g_array_unref(m->copies);
	g_array_unref(m->fallbacks);
	g_array_unref(m->locked);
	g_array_unref(m->inputs);
	g_free(m);
}

static const char *
buf_name(const GsMemBuf *b)
{
	const SimThread *owner = b->owner;

	return owner->spec->buffers->pdata[b->name];
}

/* The reservation the thread holds under name @index (made empty on first use). */
/* The thread's newest held reservation in a space: its stream's, for attribution "stream". */
static GsMemReservation *
stream_reservation(SimThread *t, GsTier tier, guint device)
{
	return gs_memory_newest_reservation(t->mem != NULL ? t->mem->res.by_name : NULL, tier,
					    device);
}

/* The ids of every live instance of buffer name @name of the thread. */
static void
buffers_named(SimThread *t, guint name, GArray *ids)
{
	for (guint i = 0; t->mem != NULL && i < t->mem->bufs->len; i++) {
		const GsMemBuf *b = t->mem->bufs->pdata[i];

		if (b->name == name)
			g_array_append_val(ids, b->id);
	}
}

static void
buffers_listed(SimThread *t, const GsNames *names, GArray *ids)
{
	const guint *name = gs_names_data(names);

	for (guint i = 0; i < names->len; i++)
		buffers_named(t, name[i], ids);
}

static void
log_copy(Sim *s, const GsMemBuf *b, GsTier from, GsTier to, gboolean ok)
{
	GsLogEntry e = {.kind = GS_LOG_SPILL, .thread = ((SimThread *) b->owner)->result->name,
			.buf = buf_name(b), .bytes = b->size, .tier = from, .to_tier = to, .ok = ok,
			.what = to > from ? "spill" : "unspill"};

	emit(s, &e);
}

/*
 * Memory came free outside an allocation (a spill landed, a reservation was
 * released): threads blocked on that kind may try again, as the reference's
 * deallocate callback wakes them. The engine's own counters are not touched.
 */
static void
memory_came_free(Sim *s, GsTier tier)
{
	s->released = TRUE;
	s->changed = TRUE;
	if (tier != GS_TIER_DISK)
		gs_engine_dealloc(s->engine, GS_NO_THREAD, tier == GS_TIER_GPU ? GS_KIND_GPU
										: GS_KIND_HOST,
				  0, s->now);
}

/* ---- the gate (its scopes are the run layer's) ---- */

static gboolean
gate_enter(Sim *s, SimThread *t)
{
	return gs_run_gate_enter(&s->tier_ops, &mem_of(s, t)->res);
}

/* Once every copy inside has landed, the threads that fell back go on; once all left, it opens. */
static void
gate_settle(Sim *s)
{
	GsGate *gate = gs_memory_gate(s->mem);

	if (!gs_gate_is_closed(gate) || !gs_gate_drained(gate))
		return;
	while (!g_queue_is_empty(&s->gate_waiters))
		resume_at(s, g_queue_pop_head(&s->gate_waiters), s->now, GS_RUN_READY);
	if (!gs_run_gate_reopen(&s->tier_ops))
		return;
	while (!g_queue_is_empty(&s->open_waiters))
		resume_at(s, g_queue_pop_head(&s->open_waiters), s->now, GS_RUN_READY);
}

static void
gate_leave(Sim *s, SimThread *t)
{
	if (t->mem != NULL && gs_run_gate_leave(&s->tier_ops, &t->mem->res))
		gate_settle(s);
}

/* ---- copies a thread carries out ---- */

/*
 * Starts copying the victims of a plan down one tier. A victim that finds
 * the gate closed, or no room below (which closes it), takes the fallback
 * path once the copies inside have landed. Returns FALSE if nothing started.
 */
static gboolean
start_copies_down(Sim *s, SimThread *t, GsTier tier, GsTime *duration)
{
	SimMem *m = mem_of(s, t);
	gboolean closed;

	closed = gate_enter(s, t);
	for (guint i = 0; i < s->moves->len; i++) {
		const GsSpillMove *mv = &g_array_index(s->moves, GsSpillMove, i);
		GsMemBuf *b = gs_memory_buffer(s->mem, mv->id);
		GsTime d;

		if (b == NULL || b->moving)
			continue;
		if (!closed && gs_memory_copy_begin(s->mem, b, tier + 1, &d)) {
			g_array_append_val(m->copies, b->id);
			*duration += d;
			continue;
		}
		if (!closed) {
			gs_run_gate_close(&s->tier_ops, &mem_of(s, t)->res);
			closed = s->w->policy.evac_gate;
		}
		g_array_append_val(m->fallbacks, b->id);
	}
	if (m->copies->len == 0 && m->fallbacks->len == 0) {
		gate_leave(s, t);
		return FALSE;
	}
	return TRUE;
}

/* The thread waits @duration for its copies (spill-block time), then goes on with @after. */
static void
wait_for_copies(Sim *s, SimThread *t, GsTime duration, After after)
{
	t->mem->after = after;
	s->r->totals.spill_block_ns = gs_time_add(s->r->totals.spill_block_ns, duration);
	resume_at(s, t, gs_time_add(s->now, duration), GS_RUN_BUSY);
}

static gboolean
allocated_by(const GsMemBuf *b, gconstpointer thread)
{
	return b->owner == thread;
}

/*
 * On-demand spill inside a failing allocation: victims to free @need bytes
 * in @tier go down one tier, and the thread tries again once they landed.
 * Under smallest_fit (Spark's consumer order) the requester's own buffers
 * go last. FALSE if nothing can move.
 */
static gboolean
spill_for(Sim *s, SimThread *t, GsTier tier, gint64 need)
{
	GsTime duration = 0;

	if (!gs_memory_spills(s->mem) || !s->w->policy.spill.on_demand || tier == GS_TIER_DISK)
		return FALSE;
	if (mem_of(s, t)->gave_up) {
		mem_of(s, t)->gave_up = FALSE;
		return FALSE;
	}
	gs_memory_plan_victims(s->mem, tier, need, s->now, s->moves, allocated_by, t);
	if (s->moves->len == 0 || !start_copies_down(s, t, tier, &duration))
		return FALSE;
	wait_for_copies(s, t, duration, AFTER_ALLOC);
	return TRUE;
}

static void
commit_copies(Sim *s, SimMem *m)
{
	for (guint i = 0; i < m->copies->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(m->copies, GsSpillBufId, i));
		GsTier from;
		gboolean ok;

		if (b == NULL || !b->moving)
			continue; /* freed, or its move was given up, meanwhile */
		from = b->tier;
		ok = gs_memory_copy_commit(s->mem, b);
		log_copy(s, b, from, ok ? b->tier : b->dest, ok);
		if (ok && from < b->tier)
			memory_came_free(s, from);
		note_peak(s, b->tier);
	}
	g_array_set_size(m->copies, 0);
}

/*
 * The fallback path: a victim from the GPU goes straight to disk when
 * host_full says so and the disk has room; otherwise it stays where it is.
 */
static GsTime
take_fallbacks(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;
	GsTime duration = 0;

	for (guint i = 0; i < m->fallbacks->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(m->fallbacks, GsSpillBufId, i));
		GsTime d;

		if (b == NULL || b->moving)
			continue;
		if (b->tier == GS_TIER_GPU && s->w->policy.spill.host_full == GS_HOST_FULL_DISK &&
		    gs_memory_copy_begin(s->mem, b, GS_TIER_DISK, &d)) {
			g_array_append_val(m->copies, b->id);
			duration += d;
		}
	}
	if (m->fallbacks->len > 0)
		gs_run_gate_fallback(&s->tier_ops, &m->res);
	g_array_set_size(m->fallbacks, 0);
	return duration;
}

/*
 * The thread's copies have landed. Victims that must fall back wait until
 * the gate has drained (GS_RUN_GATE), then go to disk or stay; then the thread
 * goes on with what it was doing. FALSE while it must wait again.
 */
static gboolean
copies_landed(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;
	GsGate *gate = gs_memory_gate(s->mem);
	After after = m->after;
	GsTime duration;

	commit_copies(s, m);
	if (m->fallbacks->len > 0) {
		if (gs_gate_is_closed(gate) && !gs_gate_drained(gate)) {
			set_status(s, t, GS_RUN_GATE);
			g_queue_push_tail(&s->gate_waiters, t);
			return FALSE;
		}
		duration = take_fallbacks(s, t);
		gate_leave(s, t);
		if (m->copies->len > 0) {
			wait_for_copies(s, t, duration, after);
			return FALSE;
		}
		m->gave_up = TRUE; /* every victim stayed: spilling again now would change nothing */
	}
	gate_leave(s, t);
	gs_memory_unlock_all(s->mem, m->locked);
	m->after = AFTER_NOTHING;
	if (after == AFTER_ALLOC)
		t->try_due = TRUE;
	return TRUE;
}

/* ---- allocations ---- */

/* policy.admission fair_share: whether the task's share admits @bytes more GPU bytes now. */
static gboolean
fair_share_admits(Sim *s, SimThread *t, const GsEffect *e)
{
	return s->fair == NULL || t->task == NULL || e->alloc_kind != GS_KIND_GPU ||
	       gs_execution_pool_acquire_all(s->fair, t->task->run.engine_id, e->size);
}

static void
fair_share_release(Sim *s, SimThread *t, GsAllocKind kind, gint64 bytes)
{
	if (s->fair != NULL && t->task != NULL && kind == GS_KIND_GPU)
		gs_execution_pool_release(s->fair, t->task->run.engine_id, bytes);
}

static void
log_alloc(Sim *s, SimThread *t, const GsEffect *effect, GsTier tier, gboolean ok)
{
	GsLogEntry e = {.kind = GS_LOG_ALLOC, .bytes = effect->size, .tier = tier, .ok = ok};

	s->changed = TRUE;
	if (!logging(s))
		return;
	e.thread = t->result->name;
	/* The room a compute's spilled buffers need has no buffer name of its own. */
	e.buf = effect->buf == GS_INTERP_UNSPILL_BUF ? "(unspill)"
						      : t->spec->buffers->pdata[effect->buf];
	emit(s, &e);
}

static GsMemRequest
request_for(Sim *s, SimThread *t, const GsEffect *effect)
{
	const GsOp *op = effect->op;
	gboolean names_one = op != NULL && op->kind == GS_OP_ALLOC && op->alloc.reservation >= 0;

	return gs_run_request(&s->tier_ops, names_one ? &mem_of(s, t)->res : NULL, t->id, effect,
			      s->engine, s->now);
}

static void
keep_buffer(Sim *s, SimThread *t, GsMemBuf *b, const GsEffect *effect)
{
	b->owner = t;
	b->name = effect->buf;
	if (gs_memory_spills(s->mem))
		g_ptr_array_add(mem_of(s, t)->bufs, b);
	note_peak(s, b->tier);
}

/* Brings a compute's spilled buffers back (the ALLOC gs_interp_unspill_first() asked for). */
static void try_unspill(Sim *s, SimThread *t, const GsEffect *effect);

static void
try_alloc(Sim *s, SimThread *t, const GsEffect *effect)
{
	GsMemRequest req;
	GsMemAlloc a;

	if (effect->buf == GS_INTERP_UNSPILL_BUF) {
		try_unspill(s, t, effect);
		return;
	}
	req = request_for(s, t, effect);
	if (!fair_share_admits(s, t, effect)) {
		log_alloc(s, t, effect, req.kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU, FALSE);
		gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
		return;
	}
	a = gs_memory_alloc(s->mem, &req);
	if (a.outcome == GS_MEM_OK &&
	    !gs_memory_take_page(t->task != NULL ? &t->task->pages : NULL, a.buf)) {
		gs_memory_free_buffer(s->mem, a.buf, NULL);
		a.outcome = GS_MEM_NO_ROOM;
		a.short_by = 0; /* the page table is full: no spill helps */
	}
	if (a.outcome == GS_MEM_OK) {
		keep_buffer(s, t, a.buf, effect);
		log_alloc(s, t, effect, a.tier, TRUE);
		gs_interp_alloc_done(interp_of(t), TRUE, (guint64) (guintptr) a.buf, s->now);
		return;
	}
	fair_share_release(s, t, effect->alloc_kind, effect->size);
	if (a.outcome == GS_MEM_NO_ROOM && a.short_by > 0 && spill_for(s, t, a.tier, a.short_by))
		return;
	log_alloc(s, t, effect, a.tier, FALSE);
	if (a.outcome == GS_MEM_OVER_RESERVATION)
		gs_interp_alloc_throw(interp_of(t), GS_EXC_RESERVATION_FAILED, s->now);
	else
		gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
}

/* Starts the copies up; FALSE (and nothing started) if the GPU lacks room for one. */
static gboolean
start_copies_up(Sim *s, SimThread *t, const GArray *ids, GsTime *duration, gint64 *short_by)
{
	SimMem *m = mem_of(s, t);

	for (guint i = 0; i < ids->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(ids, GsSpillBufId, i));
		GsTime d;

		if (b == NULL || b->tier == GS_TIER_GPU || (b->moving && b->dest == GS_TIER_GPU))
			continue;
		if (b->moving)
			gs_memory_copy_abort(s->mem, b); /* on its way to disk: it comes up instead */
		if (gs_memory_copy_begin(s->mem, b, GS_TIER_GPU, &d)) {
			g_array_append_val(m->copies, b->id);
			*duration += d;
			continue;
		}
		*short_by += b->size;
	}
	if (*short_by == 0)
		return TRUE;
	for (guint i = 0; i < m->copies->len; i++)
		gs_memory_copy_abort(s->mem,
				     gs_memory_buffer(s->mem, g_array_index(m->copies, GsSpillBufId, i)));
	g_array_set_size(m->copies, 0);
	return FALSE;
}

/*
 * An unspill that finds the gate closed has no fallback: its buffers must
 * come up. It waits outside the gate until the gate opens, then tries
 * again. Waiting inside, it would keep the gate from ever opening: two such
 * threads would wake each other at one instant for ever, each leaving the
 * gate only to enter it again while the other is inside.
 */
static void
wait_for_open_gate(Sim *s, SimThread *t)
{
	t->mem->after = AFTER_ALLOC;
	if (!gs_gate_is_closed(gs_memory_gate(s->mem))) {
		resume_at(s, t, s->now, GS_RUN_READY); /* it opened as this thread left */
		return;
	}
	set_status(s, t, GS_RUN_GATE);
	g_queue_push_tail(&s->open_waiters, t);
}

static void
try_unspill(Sim *s, SimThread *t, const GsEffect *effect)
{
	SimMem *m = mem_of(s, t);
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	GsTime duration = 0;
	gint64 short_by = 0;
	gboolean closed;

	buffers_listed(t, &effect->op->compute.uses, ids);
	if (gs_memory_unspill_need(s->mem, ids) == 0) {
		gs_interp_alloc_done(interp_of(t), TRUE, 0, s->now);
		return;
	}
	/* Locked first, so that making room never picks the buffers coming back. */
	gs_spill_use_begin(gs_memory_store(s->mem), (const GsSpillBufId *) ids->data, ids->len,
			   GS_SPILL_SYNCHRONOUS, s->now);
	g_array_append_vals(m->locked, ids->data, ids->len);
	closed = gate_enter(s, t);
	if (!closed && start_copies_up(s, t, ids, &duration, &short_by)) {
		wait_for_copies(s, t, duration, AFTER_ALLOC);
		return;
	}
	gate_leave(s, t);
	if (closed) {
		wait_for_open_gate(s, t);
		return;
	}
	if (spill_for(s, t, GS_TIER_GPU, short_by))
		return;
	gs_memory_unlock_all(s->mem, m->locked);
	log_alloc(s, t, effect, GS_TIER_GPU, FALSE);
	gs_interp_alloc_done(interp_of(t), FALSE, 0, s->now);
}

static void
do_free(Sim *s, SimThread *t, const GsEffect *effect)
{
	GsMemBuf *b = (GsMemBuf *) (guintptr) effect->handle;
	GsLogEntry e = {.kind = GS_LOG_FREE, .bytes = effect->size, .tier = b->tier};

	if (logging(s)) {
		e.thread = t->result->name;
		e.buf = t->spec->buffers->pdata[effect->buf];
	}
	if (effect->at_end)
		t->leaking += effect->size;
	fair_share_release(s, t, b->kind, b->size);
	gs_memory_give_page(t->task != NULL ? t->task->pages : NULL, b);
	if (t->mem != NULL)
		g_ptr_array_remove(t->mem->bufs, b);
	gs_memory_free_buffer(s->mem, b, stream_reservation(t, b->tier, b->device));
	s->released = TRUE;
	emit(s, &e);
	s->changed = TRUE;
}

/* ---- computes: locks, and spilled buffers brought back first ---- */

/*
 * A compute that uses buffers locks them for its duration, or until its
 * stream is synchronised. If some are spilled, the compute asks for them
 * first (an allocation, see gs_interp_unspill_first()). FALSE if it must.
 */
static gboolean
begin_compute(Sim *s, SimThread *t, const GsEffect *effect)
{
	const GsOp *op = effect->op;
	g_autoptr(GArray) ids = NULL;
	gint64 need;

	if (!gs_memory_spills(s->mem) || op->compute.uses.len == 0)
		return TRUE;
	ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	buffers_listed(t, &op->compute.uses, ids);
	need = gs_memory_unspill_need(s->mem, ids);
	if (need > 0) {
		gs_interp_unspill_first(interp_of(t), need, s->now);
		return FALSE;
	}
	gs_spill_use_begin(gs_memory_store(s->mem), (const GsSpillBufId *) ids->data, ids->len,
			   gs_memory_stream_id(t->id, op->compute.stream), s->now);
	if (op->compute.stream < 0) {
		g_array_append_vals(mem_of(s, t)->locked, ids->data, ids->len);
		mem_of(s, t)->computing = TRUE;
	}
	return TRUE;
}

/* ---- ops the driver carries out ---- */

/* ---- the run layer's hooks: reservations ---- */

static GsRunThreadTiers *
tiers_of_thread(gpointer data, gpointer thread)
{
	return &mem_of(data, thread)->res;
}

static void
reservation_granted(gpointer data, GsTier tier)
{
	Sim *s = data;

	note_peak(s, tier);
	s->changed = TRUE;
}

static void
buffers_of(gpointer thread, const GsNames *names, GArray *ids)
{
	buffers_listed(thread, names, ids);
}

static void
reservation_released(gpointer data, GsTier tier)
{
	memory_came_free(data, tier);
}

static void
reservation_wakes(gpointer data, gpointer thread)
{
	Sim *s = data;

	resume_at(s, thread, s->now, GS_RUN_READY);
}

static const GsRunTierHooks tier_hooks = {
	.of = tiers_of_thread,
	.granted = reservation_granted,
	.released = reservation_released,
	.wake = reservation_wakes,
	.log = log_entry,
	.buffers = buffers_of,
};

/* Carries out an op the interpreter leaves to the driver; FALSE when the thread must wait. */
static gboolean
do_op(Sim *s, SimThread *t, const GsOp *op)
{
	if (op->kind == GS_OP_POOL) {
		do_pool(s, t, op);
		return TRUE;
	}
	if (!gs_run_is_tier_op(op))
		return TRUE; /* the interpreter's own */
	switch (gs_run_tier_op(&s->tier_ops, t, t->id, op)) {
	case GS_RUN_OP_WAITS:
		set_status(s, t, GS_RUN_RESERVE);
		return FALSE;
	case GS_RUN_OP_TOO_LARGE:
		gs_interp_op_failed(interp_of(t), GS_EXC_RESERVATION_TOO_LARGE, s->now);
		break;
	case GS_RUN_OP_GOES_ON:
		break;
	}
	return TRUE;
}

/* A retry block's input buffers are spillable while it runs (SPEC §3.5.1, 1). */
static void
on_block(const GsOp *retry_op, gboolean entering, gpointer data)
{
	SimThread *t = data;
	Sim *s = t->sim;
	g_autoptr(GArray) ids = NULL;

	if (!gs_memory_spills(s->mem) || retry_op->retry.input.len == 0)
		return;
	if (!entering) {
		gs_memory_block_leave(s->mem, mem_of(s, t)->inputs);
		return;
	}
	ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	buffers_listed(t, &retry_op->retry.input, ids);
	gs_memory_block_enter(s->mem, mem_of(s, t)->inputs, ids);
}

/*
 * The thread is done with the tiers: what it has in flight is dropped, its
 * locks and reservations go back (as cuCascade's RAII reservations do).
 */
static void
mem_thread_ends(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;

	if (m == NULL)
		return;
	gs_run_reserve_leave_line(&s->tier_ops, &m->res, t);
	if (t->status == GS_RUN_GATE) {
		g_queue_remove(&s->gate_waiters, t);
		g_queue_remove(&s->open_waiters, t);
	}
	for (guint i = 0; i < m->copies->len; i++) {
		GsMemBuf *b = gs_memory_buffer(s->mem, g_array_index(m->copies, GsSpillBufId, i));

		if (b != NULL && b->moving)
			gs_memory_copy_abort(s->mem, b);
	}
	g_array_set_size(m->copies, 0);
	g_array_set_size(m->fallbacks, 0);
	if (gs_memory_spills(s->mem)) {
		gs_memory_unlock_all(s->mem, m->locked);
		for (guint i = 0; i < t->spec->streams->len; i++)
			gs_spill_sync(gs_memory_store(s->mem), gs_memory_stream_id(t->id, (gint) i));
	}
	m->computing = FALSE;
	m->after = AFTER_NOTHING;
	gate_leave(s, t);
	gs_run_release_all(&s->tier_ops, &m->res);
}

/* Picks up where the thread left the tiers when it resumes; FALSE if it waits on. */
static gboolean
mem_resume(Sim *s, SimThread *t)
{
	SimMem *m = t->mem;

	if (m->computing) {
		/* The compute is over: its buffers may be spilled again. */
		m->computing = FALSE;
		gs_memory_unlock_all(s->mem, m->locked);
		memory_came_free(s, GS_TIER_GPU);
	}
	if (m->after != AFTER_NOTHING)
		return copies_landed(s, t);
	return TRUE;
}

/* ---- proactive downgrade (cuCascade's hysteresis, policy.spill.proactive) ---- */

static void
log_downgrade(Sim *s, guint device, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_DOWNGRADE, .device = device, .what = what, .tier = GS_TIER_GPU,
			.bytes = gs_space_account_charged(gs_memory_gpu_account(s->mem, device))};

	emit(s, &e);
}

static void
proactive_step(Sim *s, guint device)
{
	gboolean *on = &g_array_index(s->downgrading, gboolean, device);
	GsSpillBufId *copy = &g_array_index(s->proactive_copy, GsSpillBufId, device);
	GsDowngradeDecision d = gs_memory_downgrade_step(s->mem, device, on);
	GsMemBuf *b;
	GsTime duration;

	if (d == GS_DOWNGRADE_START)
		log_downgrade(s, device, "start");
	if (d == GS_DOWNGRADE_STOP)
		log_downgrade(s, device, "stop");
	if (!*on || *copy != 0)
		return;
	b = gs_memory_downgrade_victim(s->mem, device, s->now, s->moves);
	if (b == NULL || !gs_memory_copy_begin(s->mem, b, GS_TIER_HOST, &duration))
		return;
	*copy = b->id;
	schedule(s, gs_time_add(s->now, duration), EV_PROACTIVE, device, 0);
}

static void
proactive(Sim *s)
{
	if (!s->w->policy.spill.proactive || !gs_memory_spills(s->mem))
		return;
	for (guint d = 0; d < gs_memory_n_gpus(s->mem); d++)
		proactive_step(s, d);
}

static void
proactive_landed(Sim *s, guint device)
{
	GsSpillBufId *copy = &g_array_index(s->proactive_copy, GsSpillBufId, device);
	GsMemBuf *b = gs_memory_buffer(s->mem, *copy);

	*copy = 0;
	if (b != NULL && b->moving) {
		gboolean ok = gs_memory_copy_commit(s->mem, b);

		log_copy(s, b, GS_TIER_GPU, ok ? b->tier : b->dest, ok);
		if (ok)
			memory_came_free(s, GS_TIER_GPU);
		note_peak(s, GS_TIER_HOST);
	}
}

static void end_task(Sim *s, SimTask *task, gboolean failed, GsException failure);

/* The thread has run its course; its task ends with it if it was the last one. */
/*
 * Spark's leak report: what a thread that completed left allocated (the
 * interpreter handed it back as the thread ended) is a leak of its task.
 * A failed thread's leftovers are not: Spark reports leaks only for tasks
 * that did not throw.
 */
static void
report_leak(Sim *s, SimThread *t, gboolean failed)
{
	if (!failed && t->task != NULL)
		gs_run_tasks_report_leak(&s->run, &t->task->run, t->result->name, t->leaking);
	t->leaking = 0;
}

static void
thread_ended(Sim *s, SimThread *t, gboolean ends_task, gboolean failed, GsException failure)
{
	mem_thread_ends(s, t);
	report_leak(s, t, failed);
	set_status(s, t, GS_RUN_DONE);
	t->generation++;
	if (t->task == NULL || t->task->run.status != GS_RUN_TASK_RUNNING)
		return;
	t->task->run.alive--;
	if (ends_task || t->task->run.alive == 0)
		end_task(s, t->task, failed, failure);
}

/*
 * Steps a thread until it has to wait for time, memory, a permit or a wake-up.
 * An allocation attempt lasts links.alloc_latency: the thread is in
 * THREAD_ALLOC meanwhile (a free by another thread makes it ALLOC_FREE), and
 * the memory is tried at the end of it.
 */
static void
run_thread(Sim *s, SimThread *t)
{
	if (t->mem != NULL && !mem_resume(s, t))
		return;
	for (;;) {
		GsEffect e;

		e = gs_interp_step(interp_of(t), s->now);
		if (t->try_due) {
			/* The interpreter hands out its pending ALLOC again: try it now. */
			t->try_due = FALSE;
			try_alloc(s, t, &e);
			if (t->status != GS_RUN_READY)
				return; /* spilling, or waiting for the gate */
			continue;
		}
		switch (e.kind) {
		case GS_EFFECT_PERMIT:
			if (!take_permit(s, t))
				return;
			gs_interp_permit_granted(interp_of(t));
			break;
		case GS_EFFECT_ALLOC:
			if (s->w->links.alloc_latency > 0) {
				t->try_due = TRUE;
				resume_at(s, t, gs_time_add(s->now, s->w->links.alloc_latency),
					  GS_RUN_BUSY);
				return;
			}
			try_alloc(s, t, &e);
			if (t->status != GS_RUN_READY)
				return; /* spilling, or waiting for the gate */
			break;
		case GS_EFFECT_FREE:
			do_free(s, t, &e);
			break;
		case GS_EFFECT_COMPUTE:
			if (!begin_compute(s, t, &e))
				break; /* its spilled buffers are asked for first */
			resume_at(s, t, gs_time_add(s->now, e.time), GS_RUN_BUSY);
			return;
		case GS_EFFECT_SLEEP:
			resume_at(s, t, gs_time_add(s->now, e.time), GS_RUN_SLEEPING);
			return;
		case GS_EFFECT_UNTIL:
			if (e.time > s->now) {
				resume_at(s, t, e.time, GS_RUN_BUSY);
				return;
			}
			break;
		case GS_EFFECT_OP:
			if (!do_op(s, t, e.op))
				return;
			break;
		case GS_EFFECT_WAIT:
			set_status(s, t, GS_RUN_PARKED);
			t->since = s->now;
			return;
		case GS_EFFECT_TASK_DONE:
			thread_ended(s, t, TRUE, FALSE, GS_EXC_NONE);
			return;
		case GS_EFFECT_DONE:
			thread_ended(s, t, FALSE, FALSE, GS_EXC_NONE);
			return;
		case GS_EFFECT_FAILED:
			thread_ended(s, t, TRUE, TRUE, e.exception);
			return;
		}
	}
}

/* ---- threads and tasks ---- */

/* The simulator calls the engine itself, on one thread: it only listens. */
static const GsInterpHooks sim_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.on_block = on_block,
};

static SimThread *
thread_new(Sim *s, const GsThreadSpec *spec, SimTask *task, const char *name)
{
	SimThread *t = table_add(&s->threads);

	t->id = s->next_thread++;
	t->spec = spec;
	t->task = task;
	t->status = GS_RUN_DONE; /* not counted yet */
	set_status(s, t, GS_RUN_READY);
	t->result = gs_result_add_thread(s->r, name, task != NULL ? task->run.result : NULL);
	if (task != NULL)
		gs_engine_register_dedicated(s->engine, t->id, task->run.engine_id, s->now);
	t->sim = s;
	gs_interp_init(interp_of(t), s->engine, spec, t->id, s->w->policy.oom);
	gs_interp_set_hooks(interp_of(t), &sim_hooks, t);
	gs_interp_require_permit(interp_of(t), task != NULL && gs_run_tasks_use_permits(&s->run));
	return t;
}

static void
thread_clear(SimThread *t)
{
	gs_interp_clear(interp_of(t));
	sim_mem_free(t->mem);
}

static void
task_clear(SimTask *task)
{
	if (task->pages != NULL)
		gs_page_table_free(task->pages);
}

/* Hands back what an ending thread holds, through its interpreter. */
static void
drain_frees(Sim *s, SimThread *t)
{
	for (GsEffect e = gs_interp_step(interp_of(t), s->now); e.kind == GS_EFFECT_FREE;
	     e = gs_interp_step(interp_of(t), s->now))
		do_free(s, t, &e);
}

/*
 * Stops the task's other threads once the engine has removed them. A thread
 * parked in the engine wakes to its removal (it throws ThreadRemoved, as the
 * reference's REMOVE_THROW does); every other one is cut short. What they
 * hold goes back.
 */
static void
stop_threads(Sim *s, SimTask *task)
{
	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		if (t->status == GS_RUN_DONE)
			continue;
		if (t->status == GS_RUN_SEMAPHORE)
			s->r->totals.semaphore_wait_ns =
				gs_time_add(s->r->totals.semaphore_wait_ns, s->now - t->since);
		if (t->status == GS_RUN_PARKED)
			drain_frees(s, t);
		mem_thread_ends(s, t);
		t->try_due = FALSE;
		gs_interp_abort(interp_of(t), s->now);
		drain_frees(s, t);
		t->leaking = 0;
		set_status(s, t, GS_RUN_DONE);
		t->generation++;
	}
}

static void
collect_metrics(Sim *s, SimTask *task)
{
	GsMetrics m;

	gs_engine_task_metrics(s->engine, task->run.engine_id, s->now, &m);
	gs_result_add_task_metrics(task->run.result, &m, m.gpu_max_footprint);
	gs_engine_forget_task_metrics(s->engine, task->run.engine_id);
}

/* A thread's row gets its final state and the exceptions it saw (NULL if none). */
static void
report_thread(Sim *s, SimThread *t)
{
	t->result->final_state = gs_engine_thread_state(s->engine, t->id);
	t->result->exceptions = gs_interp_take_exceptions(interp_of(t));
	t->reported = TRUE;
}

static void
release_task(Sim *s, SimTask *task, gboolean failed, GsException failure)
{
	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		/* stop_threads() has woken every removed waiter: no REMOVE_THROW is left. */
		report_thread(s, t);
	}
	if (s->fair != NULL)
		gs_execution_pool_release_all(s->fair, task->run.engine_id);
	gs_run_tasks_finish(&s->run, &task->run, failed, failure);
}

static void
end_task(Sim *s, SimTask *task, gboolean failed, GsException failure)
{
	gs_run_tasks_end(&s->run, &task->run, failed);
	release_task(s, task, failed, failure);
}

/* ---- the run layer's hooks: the simulator's tasks ---- */

static GsRunTask *
task_new(gpointer data)
{
	Sim *s = data;

	return &((SimTask *) table_add(&s->tasks))->run;
}

/* The task added last arrives at @at. */
static void
task_arrives(gpointer data, GsRunTask *task, GsTime at)
{
	Sim *s = data;

	schedule(s, at, EV_TASK_ARRIVE, s->tasks.len - 1, 0);
}

static void
start_threads(gpointer data, GsRunTask *run)
{
	Sim *s = data;
	SimTask *task = (SimTask *) run;

	task->first_thread = (guint32) s->next_thread;
	for (guint i = 0; i < run->spec->threads->len; i++) {
		const GsThreadSpec *spec = run->spec->threads->pdata[i];
		g_autofree char *name = gs_task_thread_name(run->spec, run->result->id, spec);
		SimThread *t = thread_new(s, spec, task, name);

		task->n_threads++;
		task->run.alive++;
		resume_at(s, t, s->now, GS_RUN_READY);
	}
	if (task->run.alive == 0)
		end_task(s, task, FALSE, GS_EXC_NONE);
}

static void
end_threads(gpointer data, GsRunTask *run)
{
	stop_threads(data, (SimTask *) run);
	collect_metrics(data, (SimTask *) run);
}

static void
permit_granted(gpointer data, GsRunTask *run)
{
	Sim *s = data;
	SimTask *task = (SimTask *) run;

	for (guint i = 0; i < task->n_threads; i++) {
		SimThread *t = thread_of(s, task->first_thread + i);

		if (t->status == GS_RUN_SEMAPHORE) {
			GsTime *wait = &s->r->totals.semaphore_wait_ns;

			*wait = gs_time_add(*wait, s->now - t->since);
			resume_at(s, t, s->now, GS_RUN_READY);
		}
	}
}

static GsTime
sim_now(gpointer data)
{
	return ((Sim *) data)->now;
}

static const GsRunTaskHooks task_hooks = {
	.task_new = task_new,
	.arrives = task_arrives,
	.start_threads = start_threads,
	.stop_threads = end_threads,
	.permit_granted = permit_granted,
	.now = sim_now,
	.log = log_entry,
};

/* ---- the watchdog and the end of a run ---- */

/* Every task thread waits in the engine or for a permit (and there is one). */
static gboolean
all_threads_waiting(Sim *s)
{
	return s->live_dedicated > 0 && s->waiting == s->live_dedicated;
}

static void
watchdog(Sim *s)
{
	g_autoptr(GArray) outside = g_array_new(FALSE, FALSE, sizeof(GsThreadId));
	guint64 deadlocks = gs_engine_n_deadlocks(s->engine);

	for (guint i = 0; i < s->threads.len; i++) {
		SimThread *t = table_get(&s->threads, i);

		if (gs_run_waits_outside(t->status, &s->w->policy))
			g_array_append_val(outside, t->id);
	}
	gs_engine_check_deadlocks(s->engine, (GsThreadId *) outside->data, outside->len, s->now);
	s->watchdog_idle = gs_engine_n_deadlocks(s->engine) == deadlocks;
}

static void
mark_deadlock(Sim *s)
{
	for (guint i = 0; i < s->threads.len; i++) {
		SimThread *t = table_get(&s->threads, i);

		if (gs_run_waits_on_another(t->status))
			t->result->waiting_at_end = TRUE;
	}
	s->r->outcome = GS_OUTCOME_DEADLOCK;
	s->r->totals.deadlocks_unresolved = 1;
}

/* ---- the loop ---- */

static void
fire(Sim *s, const GsEvent *ev)
{
	SimThread *t;

	s->watchdog_idle = FALSE;
	switch ((EventKind) ev->kind) {
	case EV_TASK_ARRIVE:
		gs_run_tasks_admit(&s->run, &((SimTask *) table_get(&s->tasks, ev->target))->run);
		break;
	case EV_THREAD_RESUME:
		t = thread_of(s, ev->target);
		if (t != NULL && t->generation == ev->generation && t->status != GS_RUN_DONE) {
			set_status(s, t, GS_RUN_READY);
			run_thread(s, t);
		}
		break;
	case EV_WATCHDOG:
		s->watchdog_armed = FALSE;
		watchdog(s);
		break;
	case EV_PROACTIVE:
		proactive_landed(s, (guint) ev->target);
		break;
	}
	drain_wakes(s);
	if (s->released && !g_queue_is_empty(&s->tier_ops.waiters))
		gs_run_reserve_retry(&s->tier_ops);
	s->released = FALSE;
}

/*
 * The watchdog ticks every period. A tick that found no deadlock, with
 * nothing else due before the next event, tells what every tick until then
 * would: the state cannot change meanwhile. The next tick is then the last
 * one before that event, which keeps the ticks' times and their order with
 * the event, and a quiet stretch of years costs one tick, not billions.
 */
static void
arm_watchdog(Sim *s)
{
	GsTime period = s->w->policy.watchdog, ticks = 1;
	GsEvent next;

	if (period <= 0 || s->watchdog_armed || s->run.open == 0)
		return;
	if (s->watchdog_idle && gs_heap_peek(s->heap, &next) && next.time > s->now)
		ticks = MAX((next.time - 1 - s->now) / period, 1);
	s->watchdog_armed = TRUE;
	schedule(s, gs_time_add(s->now, gs_time_mul((guint64) ticks, period)), EV_WATCHDOG, 0, 0);
}

/* Threads wait and nothing but the watchdog is left that could wake them. */
static gboolean
hopeless(Sim *s)
{
	return s->pending_events == 0 && all_threads_waiting(s);
}

/* The last instant the run may reach: --max-time's, or the last representable one. */
static GsTime
horizon(const Sim *s)
{
	return s->opts.max_time > 0 ? MIN(s->opts.max_time, GS_TIME_END - 1) : GS_TIME_END - 1;
}

static void
stop_at(Sim *s, GsTime at, char *reason)
{
	s->now = MAX(s->now, at);
	s->r->outcome = GS_OUTCOME_TIMEOUT;
	s->r->stop_reason = reason;
}

/* The next event lies past the horizon: the run stops there. */
static void
stop_at_horizon(Sim *s)
{
	if (s->opts.max_time > 0 && s->opts.max_time < GS_TIME_END) {
		stop_at(s, s->opts.max_time, NULL);
		return;
	}
	stop_at(s, GS_TIME_END - 1,
		g_strdup("time ran past the last instant the simulator can represent "
			 "(2^63 - 2 ns, about 292 years)"));
}

/* One instant took @events events: a livelock, which time would never end. */
static gboolean
stalled(Sim *s, guint64 events)
{
	guint64 most = s->opts.max_events_per_instant > 0 ? s->opts.max_events_per_instant
							  : GS_MAX_EVENTS_PER_INSTANT;

	if (events <= most)
		return FALSE;
	stop_at(s, s->now,
		g_strdup_printf("no progress: %" G_GUINT64_FORMAT " events at %" G_GINT64_FORMAT
				" ns and time did not pass (a livelock)", events, s->now));
	return TRUE;
}

/*
 * The last task has ended. A pool thread it woke into its removal (blocked
 * for it, now REMOVE_THROW) throws ThreadRemoved at this instant and gives
 * back what it holds, as it does on real threads; what is due later is cut.
 */
static void
finish_instant(Sim *s)
{
	GsEvent ev;
	guint64 pass_end, at_instant = 0;
	gboolean fired = TRUE;

	while (fired && !stalled(s, at_instant)) {
		fired = FALSE;
		pass_end = gs_heap_next_seq(s->heap);
		while (gs_heap_pop_due_before(s->heap, s->now, pass_end, &ev)) {
			if (ev.kind != EV_WATCHDOG)
				s->pending_events--;
			s->r->events_processed++;
			at_instant++;
			fire(s, &ev);
			fired = TRUE;
		}
	}
}

static void
run_loop(Sim *s)
{
	GsEvent next, ev;
	guint64 pass_end, at_instant = 0;

	while (s->run.open > 0) {
		gboolean last_hope = hopeless(s);

		/* Only the retry policy's watchdog can break a deadlock: others end it now. */
		if (last_hope && s->w->policy.oom != GS_OOM_RETRY) {
			mark_deadlock(s);
			return;
		}
		if (!gs_heap_peek(s->heap, &next)) {
			mark_deadlock(s);
			return;
		}
		if (next.time > horizon(s)) {
			stop_at_horizon(s);
			return;
		}
		if (next.time > s->now)
			at_instant = 0;
		if (s->opts.max_events > 0 && s->r->events_processed >= s->opts.max_events) {
			s->r->outcome = GS_OUTCOME_TIMEOUT;
			return;
		}
		s->now = next.time;
		/* One pass: the events due now; what they schedule fires in the next. */
		pass_end = gs_heap_next_seq(s->heap);
		while (gs_heap_pop_due_before(s->heap, s->now, pass_end, &ev)) {
			if (ev.kind != EV_WATCHDOG)
				s->pending_events--;
			s->r->events_processed++;
			at_instant++;
			fire(s, &ev);
		}
		if (stalled(s, at_instant))
			return;
		proactive(s);
		if (s->changed)
			sample(s);
		/* The watchdog's tick was the last chance, and it changed nothing. */
		if (last_hope && hopeless(s)) {
			mark_deadlock(s);
			return;
		}
		arm_watchdog(s);
	}
	finish_instant(s);
}

/* ---- set-up ---- */

/* policy.priority task_id: each first attempt's rank (they are in file order). */
static void
add_pool_threads(Sim *s)
{
	for (guint i = 0; i < s->w->pool_threads->len; i++) {
		const GsThreadSpec *spec = s->w->pool_threads->pdata[i];
		SimThread *t = thread_new(s, spec, NULL, spec->name);

		resume_at(s, t, 0, GS_RUN_READY);
	}
}

static void
sim_init(Sim *s, const GsWorkload *w, const GsRunOptions *opts)
{
	GsEngineOpts engine_opts = gs_policy_engine_opts(&w->policy);
	guint n_tasks = 0, n_threads = w->pool_threads->len;

	/* Sized for one attempt of every task: re-attempts grow the arrays. */
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *spec = w->tasks->pdata[i];

		n_tasks += MAX(spec->repeat, 1);
		n_threads += MAX(spec->repeat, 1) * spec->threads->len;
	}
	memset(s, 0, sizeof *s);
	s->w = w;
	if (opts != NULL)
		s->opts = *opts;
	s->r = gs_result_new_sized(n_tasks, n_threads);
	s->r->seed = w->seed;
	s->engine = gs_engine_new(&engine_opts);
	gs_run_watch(&s->watch, s->engine, s->r, &watch_hooks, s);
	s->heap = gs_heap_new();
	/* Every arrival is scheduled up front, and each task's first thread replaces it. */
	gs_heap_reserve(s->heap, n_tasks + w->pool_threads->len + 16);
	s->mem = gs_memory_new(w);
	if (w->policy.admission == GS_ADMISSION_FAIR_SHARE)
		s->fair = gs_execution_pool_new(w->gpu.capacity * MAX(w->gpu.devices, 1));
	gs_run_tiers_init(&s->tier_ops, w, s->mem, &tier_hooks, s);
	g_queue_init(&s->gate_waiters);
	g_queue_init(&s->open_waiters);
	s->downgrading = g_array_new(FALSE, TRUE, sizeof(gboolean));
	g_array_set_size(s->downgrading, gs_memory_n_gpus(s->mem));
	s->proactive_copy = g_array_new(FALSE, TRUE, sizeof(GsSpillBufId));
	g_array_set_size(s->proactive_copy, gs_memory_n_gpus(s->mem));
	s->moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	table_init(&s->tasks, sizeof(SimTask));
	table_init(&s->threads, sizeof(SimThread) + gs_interp_size());
	gs_run_tasks_init(&s->run, w, s->r, s->engine, &task_hooks, s);
	s->next_thread = 1;
	s->r->tiers[GS_TIER_GPU].capacity = w->gpu.capacity * MAX(w->gpu.devices, 1);
	s->r->tiers[GS_TIER_HOST].capacity = w->host.capacity;
	s->r->tiers[GS_TIER_DISK].capacity = w->disk.capacity;
}

/*
 * A task attempt a deadlock or --max-time stopped: it reports what it did so
 * far, waits in progress included, and the run's outcome as its own.
 */
static void
cut_short(Sim *s, SimTask *task)
{
	if (task->run.status == GS_RUN_TASK_ENDED)
		return;
	if (task->run.status == GS_RUN_TASK_RUNNING) {
		collect_metrics(s, task);
		for (guint i = 0; i < task->n_threads; i++) {
			SimThread *t = thread_of(s, task->first_thread + i);

			if (t->status == GS_RUN_PARKED)
				task->run.result->blocked_ns =
					gs_time_add(task->run.result->blocked_ns, s->now - t->since);
		}
	}
	task->run.result->outcome = s->r->outcome;
	task->run.result->end_ns = s->now;
}

static void
sim_finish(Sim *s)
{
	GsResult *r = s->r;

	sample(s);
	r->makespan_ns = s->now;
	for (int tier = 0; tier < GS_N_TIERS; tier++)
		r->tiers[tier].mean_used =
			s->now > 0 ? (gint64) (s->used_integral[tier] / (double) s->now) : 0;
	gs_run_tasks_settle_outcome(&s->run);
	for (guint i = 0; i < s->threads.len; i++) {
		SimThread *t = table_get(&s->threads, i);

		if (!t->reported)
			report_thread(s, t);
	}
	for (guint i = 0; i < s->tasks.len; i++)
		cut_short(s, table_get(&s->tasks, i));
	gs_result_sum_tasks(r);
	gs_result_note_traffic(r, gs_memory_traffic(s->mem), 0);
}

static void
sim_clear(Sim *s)
{
	for (guint i = 0; i < s->threads.len; i++)
		thread_clear(table_get(&s->threads, i));
	for (guint i = 0; i < s->tasks.len; i++)
		task_clear(table_get(&s->tasks, i));
	table_clear(&s->threads);
	table_clear(&s->tasks);
	gs_run_tasks_clear(&s->run);
	gs_run_tiers_clear(&s->tier_ops);
	g_queue_clear(&s->gate_waiters);
	g_queue_clear(&s->open_waiters);
	g_array_unref(s->downgrading);
	g_array_unref(s->proactive_copy);
	g_array_unref(s->moves);
	if (s->fair != NULL)
		gs_execution_pool_free(s->fair);
	gs_memory_free(s->mem);
	gs_heap_free(s->heap);
	gs_engine_free(s->engine);
}

GsResult *
gs_sim_run(const GsWorkload *w, const GsRunOptions *opts)
{
	Sim s;
	GsResult *r;

	sim_init(&s, w, opts);
	gs_run_tasks_add_all(&s.run);
	add_pool_threads(&s);
	sample(&s);
	arm_watchdog(&s);
	run_loop(&s);
	sim_finish(&s);
	r = s.r;
	sim_clear(&s);
	return r;
}
