/*
 * gpusim: the real-thread driver (see threads.h for what it decides and how
 * it locks).
 *
 * Who owns what. `lock` (the engine mutex) guards the engine, the task and
 * queue bookkeeping, the shared event log, every thread's `woken` flag and the
 * permit queue. A thread's interpreter, its backend state, its own event log
 * and its footprint belong to the thread that runs it and are read by others
 * only after it has been joined. Thread statuses, the engine-state mirror,
 * the contended count and the memory counters are atomics, read without the
 * lock by the fast path and the watchdog.
 *
 * A thread waits in three places: parked in the engine (on its `cond` with
 * `lock`, until `woken` or `stop`), for a GPU permit (same), and in a compute,
 * sleep or until (on its `sleep_cond` with its own `sleep_lock`, with a
 * deadline; on the virtual clock, on its `cond` with `lock` until the run
 * loop's clock reaches its deadline), so that stopping a thread wakes it
 * wherever it is.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/tasks.h"
#include "run/thread.h"
#include "run/tier-ops.h"
#include "run/watch.h"
#include "threads.h"
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
} Held;

/* A thread's part in the tiers (under lock), made when it first needs one. */
typedef struct {
	GsRunThreadTiers res;   /* its reservations and its place in the gate's scopes */
	GArray *locked;          /* GsSpillBufId its synchronous compute or unspill locked */
	GArray *inputs;          /* GsSpillBufId: retry-block inputs made spillable */
} Tiers;

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
	gint64 footprint;        /* GPU bytes it holds (thread-owned) */
	atomic_int_fast64_t max_footprint; /* written by the thread, read under lock */
	GArray *log;             /* LogItem (thread-owned) */
	GPtrArray *live;         /* Held* the thread holds (thread-owned; under lock with tiers) */
	Tiers *tiers;            /* NULL until it uses the tiers */
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
	GsExecutionPool *fair;   /* policy.admission fair_share: the tasks' GPU shares */
	/* policy.spill.proactive: a downgrader thread per GPU and their state, under lock */
	GArray *downgrading;     /* gboolean per GPU device: a downgrade is on (NULL: none) */
	pthread_cond_t downgrade_cond; /* with lock: a GPU's charge grew, or the run ended */
	struct Downgrader *downgraders; /* one per GPU device */
	GError *device_error;    /* under lock: the device failed, and the run ended with this */
};

/* The thread that makes one GPU's proactive copies, one at a time, as the simulator does. */
typedef struct Downgrader {
	Threads *r;
	guint device;
	pthread_t thread;
	gboolean looking;        /* virtual clock, under lock: woken, and has not looked yet */
	TimedWait timed;         /* virtual clock: its copy's modelled time */
} Downgrader;

static const GsInterpHooks fast_hooks;
static const GsInterpHooks global_hooks;
static const GsInterpHooks tiered_hooks;

/* ---- time ---- */

static GsTime
now(Threads *r)
{
	if (r->virtual_clock)
		return atomic_load(&r->clock);
	return (GsTime) ((double) (g_get_monotonic_time() - r->t0) * 1000.0 / r->scale);
}

/* The monotonic microsecond at which scenario time @t falls. */
static gint64
real_at(Threads *r, GsTime t)
{
	return gs_time_add(r->t0, gs_time_from_double((double) t * r->scale / 1000.0));
}

/*
 * Plain pthreads rather than GMutex/GCond: GLib implements those with futexes
 * on Linux, which ThreadSanitizer cannot see, and the tests run under it.
 * Condition variables wait on CLOCK_MONOTONIC, the clock of
 * g_get_monotonic_time().
 */
static void
cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* Waits until the monotonic microsecond @deadline at most. */
static void
cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, gint64 deadline)
{
	struct timespec ts = {.tv_sec = deadline / G_USEC_PER_SEC,
			      .tv_nsec = (deadline % G_USEC_PER_SEC) * 1000};

	pthread_cond_timedwait(cond, mutex, &ts);
}

/* ---- logging ---- */

static void
log_to(Threads *r, GArray *log, GsLogEntry *entry)
{
	LogItem item = {.entry = *entry};

	if (r->opts.log == NULL || r->ended)
		return;
	item.entry.time = now(r);
	item.seq = atomic_fetch_add(&r->seq, 1);
	g_array_append_val(log, item);
}

/* Under lock. */
static void
log_locked(Threads *r, GsLogEntry *entry)
{
	log_to(r, r->log, entry);
}

static int
compare_items(gconstpointer a, gconstpointer b)
{
	const LogItem *x = a, *y = b;

	if (x->entry.time != y->entry.time)
		return x->entry.time < y->entry.time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merges the shared log and every thread's own into one, in time order. */
static void
flush_logs(Threads *r)
{
	g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(LogItem));

	if (r->opts.log == NULL)
		return;
	g_array_append_vals(all, r->log->data, r->log->len);
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];

		g_array_append_vals(all, t->log->data, t->log->len);
	}
	g_array_sort(all, compare_items);
	for (guint i = 0; i < all->len; i++)
		r->opts.log(&g_array_index(all, LogItem, i).entry, r->opts.log_data);
}

/* ---- threads, statuses, wake-ups ---- */

static Worker *
thread_of(Threads *r, GsThreadId id)
{
	return id >= 1 && id <= r->threads->len ? r->threads->pdata[id - 1] : NULL;
}

static gboolean
counts_active(Status s)
{
	return s == GS_RUN_READY || s == GS_RUN_SLEEPING;
}

/*
 * Virtual clock, under lock: nothing is left to happen at this instant.
 * Every active thread waits for a later time, and no downgrader has a look
 * to take (one making a copy counts as active).
 */
static gboolean
quiet(const Threads *r)
{
	return r->active == r->idle && r->looking == 0;
}

/* Under lock: the run loop may move the virtual clock now. */
static void
note_quiet(Threads *r)
{
	if (r->virtual_clock && quiet(r))
		pthread_cond_broadcast(&r->done_cond);
}

/* Every change between active and waiting happens under lock, so `active` is exact there. */
static void
set_status(Threads *r, Worker *t, Status s)
{
	Status old = atomic_exchange(&t->status, s);

	r->active += counts_active(s);
	r->active -= counts_active(old);
	note_quiet(r);
}

/* Under lock: the engine's queued wake-ups reach their threads. */
static void
drain_wakes(Threads *r)
{
	GsThreadId id;

	while (gs_engine_pop_wake(r->engine, &id)) {
		Worker *t = thread_of(r, id);

		if (t == NULL)
			continue;
		/*
		 * A thread told WAIT may not have parked yet: the flag makes
		 * park() return at once. A stale flag costs one more look at
		 * the engine, which answers WAIT again.
		 */
		t->woken = TRUE;
		if (atomic_load(&t->status) == GS_RUN_PARKED) {
			set_status(r, t, GS_RUN_READY);
			pthread_cond_signal(&t->cond);
		}
	}
}

static void
engine_lock(gpointer data)
{
	pthread_mutex_lock(&((Threads *) data)->lock);
}

static void downgrade_wake(Threads *r);

/*
 * Every section under the lock ends here: the engine's wake-ups go out, and
 * the downgraders look again, as the simulator's downgrade runs after every
 * pass (a section may have grown a GPU's charge or unlocked a victim).
 */
static void
engine_unlock(gpointer data)
{
	Threads *r = data;

	drain_wakes(r);
	downgrade_wake(r);
	pthread_mutex_unlock(&r->lock);
}

/* Under lock: asks the thread to stop, wherever it waits. */
static void
stop_thread(Worker *t)
{
	atomic_store(&t->stop, TRUE);
	pthread_cond_signal(&t->cond);
	pthread_mutex_lock(&t->sleep_lock);
	pthread_cond_signal(&t->sleep_cond);
	pthread_mutex_unlock(&t->sleep_lock);
}

/* One more event handled: an arrival, a thread going on after a wait, a tick, a proactive copy. */
static void
count_event(Threads *r)
{
	atomic_fetch_add_explicit(&r->events, 1, memory_order_relaxed);
}

/*
 * Virtual clock, under lock: waits on @cond until the run loop moves the
 * clock to @until (advance_clock ends the wait), or until *@stop.
 */
static void
timed_wait(Threads *r, TimedWait *w, pthread_cond_t *cond, GsTime until, atomic_bool *stop)
{
	if (now(r) >= until || atomic_load(stop))
		return;
	*w = (TimedWait){.on = TRUE, .deadline = until};
	r->idle++;
	note_quiet(r);
	while (w->on && !atomic_load(stop))
		pthread_cond_wait(cond, &r->lock);
	if (w->on) {
		w->on = FALSE;
		r->idle--;
	}
}

/*
 * Under lock: a copy landed, or a thread left the gate. The threads waiting
 * for that are active again from here, so the virtual clock waits for them.
 */
static void
copies_changed(Threads *r)
{
	r->idle -= r->copy_waiters;
	r->copy_waiters = 0;
	r->copies_changes++;
	pthread_cond_broadcast(&r->copies_cond);
}

/*
 * Under lock: waits for a copy to land or a thread to leave the gate. It
 * does not hold the virtual clock: the copy may be waiting for its time.
 */
static void
wait_copies(Worker *t)
{
	Threads *r = t->r;
	guint64 changes = r->copies_changes;

	drain_wakes(r);
	r->copy_waiters++;
	r->idle++;
	note_quiet(r);
	pthread_cond_wait(&r->copies_cond, &r->lock);
	count_event(r);
	if (r->copies_changes == changes) { /* woken by a stop, or by nothing */
		r->copy_waiters--;
		r->idle--;
	}
}

/* Virtual clock: waits until the run loop moves the clock to @until, or a stop. */
static gboolean
wait_virtual(Worker *t, GsTime until)
{
	Threads *r = t->r;
	gboolean ok;

	pthread_mutex_lock(&r->lock);
	timed_wait(r, &t->timed, &t->cond, until, &t->stop);
	ok = !atomic_load(&t->stop);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* Waits until scenario time @until or a stop; FALSE when stopped. */
static gboolean
wait_until(Worker *t, GsTime until)
{
	gint64 deadline = real_at(t->r, until);
	gboolean stopped;

	count_event(t->r);
	if (t->r->virtual_clock)
		return wait_virtual(t, until);

	pthread_mutex_lock(&t->sleep_lock);
	while (!(stopped = atomic_load(&t->stop)) && g_get_monotonic_time() < deadline)
		cond_wait_until(&t->sleep_cond, &t->sleep_lock, deadline);
	pthread_mutex_unlock(&t->sleep_lock);
	return !stopped;
}

/* ---- the engine's observer (called under lock) ---- */

static gboolean
is_contended(GsThreadState s)
{
	return s != GS_THREAD_RUNNING && s != GS_THREAD_UNKNOWN;
}

/* ---- the run layer's hooks: what the engine tells the run (under lock) ---- */

static const char *
thread_name(gpointer data, GsThreadId id)
{
	Worker *t = thread_of(data, id);

	return t != NULL ? t->result->name : NULL;
}

static void
thread_moved(gpointer data, GsThreadId id, GsThreadState from, GsThreadState to)
{
	Threads *r = data;
	Worker *t = thread_of(r, id);

	/* Sequentially consistent: the fast path's half of the no-lost-wake-up argument. */
	atomic_fetch_add(&r->contended, is_contended(to) - is_contended(from));
	if (t == NULL)
		return;
	atomic_store(&t->engine_state, to);
	atomic_fetch_or(&t->reached, 1u << to);
}

static void
watch_log(gpointer data, GsLogEntry *entry)
{
	log_locked(data, entry);
}

static const GsRunWatchHooks watch_hooks = {
	.name = thread_name,
	.moved = thread_moved,
	.log = watch_log,
};

/* The interpreter tells its own thread of exceptions: no lock needed. */
static void
on_exception(const GsSeenException *x, gpointer data)
{
	Worker *t = data;
	GsLogEntry e = gs_run_throw_entry(t->result->name, x);

	log_to(t->r, t->log, &e);
}

/* ---- memory: bounded counters ---- */

static void
note_peak(Space *s, gint64 used)
{
	gint64 peak = atomic_load_explicit(&s->peak, memory_order_relaxed);

	while (used > peak && !atomic_compare_exchange_weak(&s->peak, &peak, used))
		;
}

/* Admits @n bytes if they fit; sequentially consistent, see threads.h. */
static gboolean
space_take(Space *s, gint64 n)
{
	gint64 used = atomic_load(&s->used);

	do {
		if (used + n > s->capacity)
			return FALSE;
	} while (!atomic_compare_exchange_weak(&s->used, &used, used + n));
	note_peak(s, used + n);
	return TRUE;
}

static void
space_give(Space *s, gint64 n)
{
	atomic_fetch_sub(&s->used, n);
}

static Space *
space_for(Threads *r, const GsEffect *e)
{
	guint device = e->op != NULL && e->op->kind == GS_OP_ALLOC ? e->op->alloc.device : 0;

	if (e->alloc_kind == GS_KIND_HOST)
		return &r->host;
	return &r->gpus[MIN(device, r->n_gpus - 1)];
}

static gint64
charge_of(const Space *s, gint64 size)
{
	return (size + s->alignment - 1) / s->alignment * s->alignment;
}

/* The thread holds @bytes more GPU memory (thread-owned; its maximum is read under lock). */
static void
count_footprint(Worker *t, gint64 bytes)
{
	t->footprint += bytes;
	if (t->footprint > atomic_load_explicit(&t->max_footprint, memory_order_relaxed))
		atomic_store_explicit(&t->max_footprint, t->footprint, memory_order_relaxed);
}

static void cut(Threads *r, GsOutcome outcome);

/*
 * Without the lock, after a backend call that did not succeed and after a
 * compute: a device that failed is no OOM, and the run ends with its error
 * (gs_threads_run returns it). FALSE then.
 */
static gboolean
device_works(Threads *r)
{
	GError *error = NULL;

	if (gs_backend_healthy(r->ops, r->bk, &error))
		return TRUE;
	pthread_mutex_lock(&r->lock);
	if (r->device_error == NULL && !r->ended) {
		r->device_error = g_steal_pointer(&error);
		cut(r, GS_OUTCOME_FAILED);
	}
	pthread_mutex_unlock(&r->lock);
	g_clear_error(&error);
	return FALSE;
}

/* Admits and allocates; the handle is a Held. FALSE: it does not fit, or the device said no. */
static gboolean
take_memory(Worker *t, const GsEffect *e, guint64 *handle)
{
	Threads *r = t->r;
	Space *s = space_for(r, e);
	gint64 charged = charge_of(s, e->size);
	Held *held;
	guint64 bk;

	if (!space_take(s, charged))
		return FALSE;
	if (!gs_backend_alloc(r->ops, r->bk, t->bk, s->tier, s->device, e->size, &bk)) {
		space_give(s, charged);
		device_works(r);
		return FALSE;
	}
	held = g_new0(Held, 1);
	*held = (Held){.backend = bk, .space = s, .charged = charged, .name = e->buf, .owner = t};
	g_ptr_array_add(t->live, held);
	*handle = GPOINTER_TO_SIZE(held);
	if (e->alloc_kind == GS_KIND_GPU)
		count_footprint(t, e->size);
	return TRUE;
}

static void
log_alloc(Worker *t, const GsEffect *e, gboolean ok)
{
	GsLogEntry le = {.kind = GS_LOG_ALLOC, .thread = t->result->name, .bytes = e->size,
			 .tier = e->alloc_kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU, .ok = ok};

	/* The room a compute's spilled buffers need has no buffer name of its own. */
	le.buf = e->buf == GS_INTERP_UNSPILL_BUF ? "(unspill)" : t->spec->buffers->pdata[e->buf];
	log_to(t->r, t->log, &le);
}

/* ---- the fast path (GsInterpHooks) ---- */

static void
log_own_state(Worker *t, GsThreadState from, GsThreadState to)
{
	GsLogEntry e = {.kind = GS_LOG_STATE, .thread = t->result->name, .from = from, .to = to};

	log_to(t->r, t->log, &e);
}

/*
 * An allocation that fits, by a RUNNING thread while nobody is contended,
 * without the engine mutex. The thread's own record cannot change meanwhile:
 * only its own calls move a RUNNING record, except removal, which stop covers.
 */
static gboolean
fast_alloc(gpointer data, const GsEffect *alloc, guint64 *handle)
{
	Worker *t = data;
	Threads *r = t->r;

	if (!t->fast_ok || atomic_load(&t->engine_state) != GS_THREAD_RUNNING ||
	    atomic_load(&r->contended) != 0)
		return FALSE;
	if (!take_memory(t, alloc, handle))
		return FALSE;
	atomic_fetch_or(&t->reached, 1u << GS_THREAD_ALLOC);
	log_own_state(t, GS_THREAD_RUNNING, GS_THREAD_ALLOC);
	log_alloc(t, alloc, TRUE);
	log_own_state(t, GS_THREAD_ALLOC, GS_THREAD_RUNNING);
	atomic_fetch_add_explicit(&r->fast_allocs, 1, memory_order_relaxed);
	return TRUE;
}

/* The bytes went back before this runs: if nobody is contended now, nobody can need them. */
static gboolean
fast_free(gpointer data, const GsEffect *freed)
{
	Worker *t = data;

	if (atomic_load(&t->r->contended) != 0)
		return FALSE;
	atomic_fetch_add_explicit(&t->r->fast_frees, 1, memory_order_relaxed);
	return TRUE;
}

/* The interpreter's hooks get the thread; the engine lock is the run's. */
static void
thread_enter(gpointer data)
{
	engine_lock(((Worker *) data)->r);
}

static void
thread_leave(gpointer data)
{
	engine_unlock(((Worker *) data)->r);
}

static const GsInterpHooks fast_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.enter = thread_enter,
	.leave = thread_leave,
	.fast_alloc = fast_alloc,
	.fast_free = fast_free,
};

static const GsInterpHooks global_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.enter = thread_enter,
	.leave = thread_leave,
};

static void on_block(const GsOp *retry_op, gboolean entering, gpointer data);

static const GsInterpHooks tiered_hooks = {
	.api_version = 1,
	.on_exception = on_exception,
	.enter = thread_enter,
	.leave = thread_leave,
	.on_block = on_block,
};

/* ---- the memory tiers (a run that spills or reserves: r->mem) ---- */

/*
 * Such a run admits through the tier model (src/tiers/memory.h)
 * instead of the bounded counters: the model decides where every buffer
 * lives, what each space is charged, which buffers are spilled and whether a
 * reservation is granted, exactly as in the simulator, and the backend
 * supplies the bytes and makes the copies. The model is not thread-safe: it
 * sits behind the engine mutex, so every allocation and free of such a run
 * takes the mutex (the fast path is off). Copies run outside it: a copy is
 * begun in the model and its buffer marked `copying` under the mutex, the
 * backend moves the bytes without it, and the move commits under it again.
 * An owner that frees a buffer while it is being copied leaves the backend's
 * memory to the copier (`doomed`); a buffer a compute or an unspill has
 * locked is never chosen as a victim, and a lock that arrives while its
 * copy is in flight makes the commit refuse, so the compute keeps reading
 * the source.
 */

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

static Tiers *
tiers_of(Worker *t)
{
	if (t->tiers == NULL) {
		Tiers *m = g_new0(Tiers, 1);

		gs_run_thread_tiers_init(&m->res, &t->r->tier_ops, t->id, t->result->name, t->spec);
		m->locked = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		m->inputs = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		t->tiers = m;
	}
	return t->tiers;
}

static void
tiers_free(Tiers *m)
{
	if (m == NULL)
		return;
	gs_run_thread_tiers_clear(&m->res);
	g_array_unref(m->locked);
	g_array_unref(m->inputs);
	g_free(m);
}

/* Whether @ops, or a retry or repeat block inside them, holds an op that @is says is one. */
static gboolean
ops_any(const GArray *ops, gboolean (*is)(const GsOp *op))
{
	for (guint i = 0; ops != NULL && i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if (is(op) || (op->kind == GS_OP_RETRY && ops_any(op->retry.ops, is)) ||
		    (op->kind == GS_OP_REPEAT && ops_any(op->repeat.ops, is)))
			return TRUE;
	}
	return FALSE;
}

/* What only the memory model carries out: a reservation, or host memory (blocks, pages). */
static gboolean
needs_model(const GsOp *op)
{
	return op->kind == GS_OP_RESERVE ||
	       (op->kind == GS_OP_ALLOC && op->alloc.kind == GS_KIND_HOST);
}

/*
 * A run needs the memory model when buffers may move between tiers,
 * reservations are made, tasks take fair shares, or host memory is
 * allocated (in whole blocks, and pages of the task's page table).
 */
static gboolean
tiers_needed(const GsWorkload *w)
{
	if (w->policy.spill.enabled || w->policy.admission == GS_ADMISSION_FAIR_SHARE)
		return TRUE;
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		for (guint k = 0; k < task->threads->len; k++) {
			if (ops_any(((const GsThreadSpec *) task->threads->pdata[k])->ops, needs_model))
				return TRUE;
		}
	}
	for (guint i = 0; i < w->pool_threads->len; i++) {
		if (ops_any(((const GsThreadSpec *) w->pool_threads->pdata[i])->ops, needs_model))
			return TRUE;
	}
	return FALSE;
}

static void
note_tier_peak(Threads *r, GsTier tier)
{
	GsTierResult *x = &r->res->tiers[tier];

	x->peak_used = MAX(x->peak_used, gs_memory_used(r->mem, tier));
	x->peak_charged = MAX(x->peak_charged, gs_memory_charged(r->mem, tier));
}

/* The reservation the thread holds under name @index (made empty on first use). */
/* The thread's newest held reservation in a space: its stream's, for attribution "stream". */
static GsMemReservation *
stream_reservation(Worker *t, GsTier tier, guint device)
{
	return gs_memory_newest_reservation(t->tiers != NULL ? t->tiers->res.by_name : NULL, tier,
					    device);
}

/*
 * The thread's live buffers named in @names: their backend handles into
 * @handles and, with tiers, the model's ids into @ids (either may be NULL).
 */
static void
live_listed(Worker *t, const GsNames *names, GArray *ids, GArray *handles)
{
	const guint *name = gs_names_data(names);

	for (guint i = 0; i < names->len; i++) {
		for (guint k = 0; k < t->live->len; k++) {
			const Held *held = t->live->pdata[k];

			if (held->name != name[i])
				continue;
			if (ids != NULL)
				g_array_append_val(ids, held->mb->id);
			if (handles != NULL)
				g_array_append_val(handles, held->backend);
		}
	}
}

static void
buffers_listed(Worker *t, const GsNames *names, GArray *ids)
{
	live_listed(t, names, ids, NULL);
}

static void
log_copy(Threads *r, const Held *held, GsTier from, GsTier to, gboolean ok)
{
	GsLogEntry e = {.kind = GS_LOG_SPILL, .thread = held->owner->result->name,
			.buf = held->owner->spec->buffers->pdata[held->name],
			.bytes = held->mb->size, .tier = from, .to_tier = to, .ok = ok,
			.what = to > from ? "spill" : "unspill"};

	log_locked(r, &e);
}

/*
 * Memory came free outside an allocation (a copy landed, a lock or a
 * reservation was released): threads blocked on that kind may try again,
 * and so may blocking reservations.
 */
static void
memory_came_free(Threads *r, GsTier tier)
{
	if (tier != GS_TIER_DISK)
		gs_engine_dealloc(r->engine, GS_NO_THREAD,
				  tier == GS_TIER_GPU ? GS_KIND_GPU : GS_KIND_HOST, 0, now(r));
	gs_run_reserve_retry(&r->tier_ops);
}

/* ---- the gate ---- */

static gboolean
gate_enter(Worker *t)
{
	return gs_run_gate_enter(&t->r->tier_ops, &tiers_of(t)->res);
}

/* Leaves the thread's scope; the last one out may open the gate. Threads waiting on it look again. */
static void
gate_leave(Worker *t)
{
	Threads *r = t->r;

	if (t->tiers == NULL || !gs_run_gate_leave(&r->tier_ops, &t->tiers->res))
		return;
	gs_run_gate_reopen(&r->tier_ops);
	copies_changed(r);
}

/* Waits until every copy still inside the closed gate has landed. */
static void
gate_wait_drained(Worker *t)
{
	GsGate *gate = gs_memory_gate(t->r->mem);

	while (gs_gate_is_closed(gate) && !gs_gate_drained(gate) && !atomic_load(&t->stop)) {
		wait_copies(t);
	}
}

/*
 * An unspill that found the gate closed has no fallback: its buffers must
 * come up. It waits outside the gate until the gate opens: waiting inside,
 * it would keep the gate from ever opening, and two such threads would take
 * turns leaving it and entering it again for ever.
 */
static void
gate_wait_open(Worker *t)
{
	GsGate *gate = gs_memory_gate(t->r->mem);

	while (gs_gate_is_closed(gate) && !atomic_load(&t->stop))
		wait_copies(t);
}

/* ---- moves ---- */

/* Begins moving @held's buffer to @to in the model; FALSE (nothing changed) without room there. */
static gboolean
move_begin(Threads *r, Held *held, GsTier to, GArray *moves)
{
	Move mv = {.held = held, .from = held->mb->tier, .to = to, .device = held->mb->device,
		   .source = held->backend};

	if (!gs_memory_copy_begin(r->mem, held->mb, to, &mv.modelled))
		return FALSE;
	held->copying = TRUE;
	g_array_append_val(moves, mv);
	return TRUE;
}

/* The model gave up a move that has not started: it is as if never begun. */
static void
move_cancel(Threads *r, GArray *moves)
{
	for (guint i = 0; i < moves->len; i++) {
		Held *held = g_array_index(moves, Move, i).held;

		held->copying = FALSE;
		gs_memory_copy_abort(r->mem, held->mb);
	}
	g_array_set_size(moves, 0);
}

/* Frees a buffer's backend memory; @bk is the backend thread of the one that frees it. */
static void
backend_free_held(Threads *r, gpointer bk, GsTier tier, guint64 handle)
{
	gs_backend_free(r->ops, r->bk, bk, tier, handle);
}

static void downgrade_wake(Threads *r);

/* Makes a move begun in the model, without the lock; @who names the copier in a warning. */
static void
move_make(Threads *r, gpointer bk, Move *mv, const char *who)
{
	g_autoptr(GError) error = NULL;

	/* Only the Move's own fields: the owner may free the buffer meanwhile. */
	mv->made = gs_backend_move(r->ops, r->bk, bk, mv->source, mv->from, mv->to, mv->device,
				   &mv->moved, &mv->intact, &error);
	if (!mv->made && device_works(r))
		g_warning("%s: a copy to tier %d failed: %s", who, mv->to,
			  error != NULL ? error->message : "the backend gave no reason");
}

/* A move made by the backend (thread @bk) lands in the model; returns TRUE if it committed. */
static gboolean
move_land(Threads *r, gpointer bk, Move *mv)
{
	Held *held = mv->held;
	gboolean ok;

	held->copying = FALSE;
	if (held->doomed) {
		/* Its owner freed it meanwhile: both copies go. */
		backend_free_held(r, bk, mv->from, mv->source);
		if (mv->made)
			backend_free_held(r, bk, mv->to, mv->moved);
		g_free(held);
		return FALSE;
	}
	if (!mv->made) {
		gs_memory_copy_abort(r->mem, held->mb);
		log_copy(r, held, mv->from, mv->to, FALSE);
		return FALSE;
	}
	r->corrupt_moves += !mv->intact;
	ok = gs_memory_copy_commit(r->mem, held->mb);
	log_copy(r, held, mv->from, mv->to, ok);
	if (!ok) {
		backend_free_held(r, bk, mv->to, mv->moved);
		return FALSE;
	}
	held->backend = mv->moved;
	backend_free_held(r, bk, mv->from, mv->source);
	note_tier_peak(r, mv->to);
	if (mv->from < mv->to)
		memory_came_free(r, mv->from);
	return TRUE;
}

static GsTime
moves_modelled(const GArray *moves)
{
	GsTime total = 0;

	for (guint i = 0; i < moves->len; i++)
		total = gs_time_add(total, g_array_index(moves, Move, i).modelled);
	return total;
}

/*
 * Makes the moves begun in @moves, without the lock (the thread waits for
 * them: spill-block time), then lands them. Returns how many committed.
 */
static guint
moves_make(Worker *t, GArray *moves)
{
	Threads *r = t->r;
	GsTime start = now(r);
	guint committed = 0;

	if (moves->len == 0)
		return 0;
	engine_unlock(r);
	for (guint i = 0; i < moves->len; i++)
		move_make(r, t->bk, &g_array_index(moves, Move, i), t->result->name);
	pthread_mutex_lock(&r->lock);
	if (r->virtual_clock) /* the copies take their modelled time, one after another */
		timed_wait(r, &t->timed, &t->cond, gs_time_add(start, moves_modelled(moves)), &t->stop);
	r->res->totals.spill_block_ns += now(r) - start;
	for (guint i = 0; i < moves->len; i++)
		committed += move_land(r, t->bk, &g_array_index(moves, Move, i));
	g_array_set_size(moves, 0);
	copies_changed(r);
	return committed;
}

/* ---- proactive downgrade (cuCascade's hysteresis, policy.spill.proactive) ---- */

/*
 * As in the simulator: once a GPU's charge crosses the trigger, its buffers
 * move to the host one at a time, least recently used first, until the
 * charge is below the stop. The copies are made by threads of the driver's
 * own, one per GPU, so no task waits for them; they sleep until an
 * allocation or an unspill grows a GPU's charge.
 */

static void
downgrade_wake(Threads *r)
{
	if (r->downgrading == NULL)
		return;
	/* One waiting for its copy's time looks again once the copy lands. */
	for (guint d = 0; r->virtual_clock && d < r->downgrading->len; d++) {
		Downgrader *dg = &r->downgraders[d];

		r->looking += !dg->looking && !dg->timed.on;
		dg->looking |= !dg->timed.on;
	}
	pthread_cond_broadcast(&r->downgrade_cond);
}

/* Under lock: the downgrader is about to look at its GPU. */
static void
downgrade_looks(Downgrader *dg)
{
	dg->r->looking -= dg->looking;
	dg->looking = FALSE;
}

static void
log_downgrade(Threads *r, guint device, const char *what)
{
	GsLogEntry e = {.kind = GS_LOG_DOWNGRADE, .device = device, .what = what, .tier = GS_TIER_GPU,
			.bytes = gs_space_account_charged(gs_memory_gpu_account(r->mem, device))};

	log_locked(r, &e);
}

/* Under lock: begins moving @device's next victim to the host into @moves; FALSE if none goes. */
static gboolean
downgrade_begin(Threads *r, guint device, GArray *moves)
{
	gboolean *on = &g_array_index(r->downgrading, gboolean, device);
	GsDowngradeDecision d = gs_memory_downgrade_step(r->mem, device, on);
	GsMemBuf *b;

	if (d == GS_DOWNGRADE_START)
		log_downgrade(r, device, "start");
	if (d == GS_DOWNGRADE_STOP)
		log_downgrade(r, device, "stop");
	if (!*on)
		return FALSE;
	b = gs_memory_downgrade_victim(r->mem, device, now(r), r->moves);
	return b != NULL && move_begin(r, b->owner, GS_TIER_HOST, moves);
}

static void *
downgrader_main(void *data)
{
	Downgrader *dg = data;
	Threads *r = dg->r;
	gpointer bk = gs_backend_thread_begin(r->ops, r->bk);
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(Move));

	pthread_mutex_lock(&r->lock);
	while (!r->ended) {
		downgrade_looks(dg);
		if (!downgrade_begin(r, dg->device, moves)) {
			note_quiet(r);
			pthread_cond_wait(&r->downgrade_cond, &r->lock);
			continue;
		}
		r->active++; /* a parked thread may be waiting for the room this copy makes */
		engine_unlock(r);
		move_make(r, bk, &g_array_index(moves, Move, 0), "proactive downgrade");
		pthread_mutex_lock(&r->lock);
		downgrade_looks(dg); /* it looks again once the copy lands */
		if (r->virtual_clock)
			timed_wait(r, &dg->timed, &r->downgrade_cond,
				   gs_time_add(now(r), g_array_index(moves, Move, 0).modelled),
				   &r->ended);
		r->active--;
		count_event(r);
		move_land(r, bk, &g_array_index(moves, Move, 0));
		g_array_set_size(moves, 0);
		copies_changed(r);
	}
	pthread_mutex_unlock(&r->lock);
	gs_backend_thread_end(r->ops, r->bk, bk);
	return NULL;
}

/* Starts a downgrader per GPU when the run downgrades proactively. */
static void
downgrader_start(Threads *r)
{
	guint n;

	if (!r->w->policy.spill.proactive || r->mem == NULL || !gs_memory_spills(r->mem))
		return;
	n = gs_memory_n_gpus(r->mem);
	r->downgrading = g_array_new(FALSE, TRUE, sizeof(gboolean));
	g_array_set_size(r->downgrading, n);
	cond_init(&r->downgrade_cond);
	r->downgraders = g_new0(Downgrader, n);
	for (guint d = 0; d < n; d++) {
		r->downgraders[d] = (Downgrader){.r = r, .device = d};
		if (pthread_create(&r->downgraders[d].thread, NULL, downgrader_main, &r->downgraders[d]) != 0)
			g_error("cannot start the proactive downgrade's threads");
	}
}

/* After the run ended: each downgrader lands its copy in flight, if any, and goes. */
static void
downgrader_join(Threads *r)
{
	if (r->downgrading == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	pthread_cond_broadcast(&r->downgrade_cond);
	pthread_mutex_unlock(&r->lock);
	for (guint d = 0; d < r->downgrading->len; d++)
		pthread_join(r->downgraders[d].thread, NULL);
	g_free(r->downgraders);
	pthread_cond_destroy(&r->downgrade_cond);
	g_array_unref(r->downgrading);
}

/* ---- on-demand spilling ---- */

static gboolean
allocated_by(const GsMemBuf *b, gconstpointer thread)
{
	return ((const Held *) b->owner)->owner == thread;
}

/*
 * Victims that found the gate closed, or no room below, wait until the
 * copies inside have landed; then one from the GPU goes straight to disk
 * when host_full says so and the disk has room, and the others stay.
 */
static guint
take_fallbacks(Worker *t, GArray *fallbacks, GArray *moves)
{
	Threads *r = t->r;

	if (fallbacks->len == 0)
		return 0;
	gate_wait_drained(t);
	for (guint i = 0; i < fallbacks->len; i++) {
		GsMemBuf *b = gs_memory_buffer(r->mem, g_array_index(fallbacks, GsSpillBufId, i));
		Held *held = b != NULL ? b->owner : NULL;

		if (held != NULL && !held->copying && b->tier == GS_TIER_GPU &&
		    r->w->policy.spill.host_full == GS_HOST_FULL_DISK)
			move_begin(t->r, held, GS_TIER_DISK, moves);
	}
	gs_run_gate_fallback(&r->tier_ops, &tiers_of(t)->res);
	return moves_make(t, moves);
}

/*
 * On-demand spill inside a failing allocation: victims to free @need bytes
 * in @tier go down one tier, and the thread tries again once they landed.
 * FALSE if nothing moved.
 */
static gboolean
spill_for(Worker *t, GsTier tier, gint64 need)
{
	Threads *r = t->r;
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(Move));
	g_autoptr(GArray) fallbacks = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	gboolean closed;
	guint committed;

	if (!gs_memory_spills(r->mem) || !r->w->policy.spill.on_demand || tier == GS_TIER_DISK)
		return FALSE;
	gs_memory_plan_victims(r->mem, tier, need, now(r), r->moves, allocated_by, t);
	if (r->moves->len == 0)
		return FALSE;
	closed = gate_enter(t);
	for (guint i = 0; i < r->moves->len; i++) {
		GsMemBuf *b = gs_memory_buffer(r->mem, g_array_index(r->moves, GsSpillMove, i).id);
		Held *held = b != NULL ? b->owner : NULL;

		if (held == NULL || held->copying)
			continue;
		if (!closed && move_begin(t->r, held, tier + 1, moves))
			continue;
		if (!closed) {
			gs_run_gate_close(&r->tier_ops, &tiers_of(t)->res);
			closed = r->w->policy.evac_gate;
		}
		g_array_append_val(fallbacks, b->id);
	}
	committed = moves_make(t, moves);
	committed += take_fallbacks(t, fallbacks, moves);
	gate_leave(t);
	return committed > 0;
}

/* ---- allocations and frees ---- */

static GsMemRequest
request_for(Worker *t, const GsEffect *e)
{
	const GsOp *op = e->op;
	gboolean names_one = op != NULL && op->kind == GS_OP_ALLOC && op->alloc.reservation >= 0;

	return gs_run_request(&t->r->tier_ops, names_one ? &tiers_of(t)->res : NULL, t->id, e,
			      t->r->engine, now(t->r));
}

static void
set_buffer_spillable(Threads *r, const GsMemBuf *b, gboolean spillable)
{
	if (gs_memory_spills(r->mem))
		gs_spill_set_spillable(gs_memory_store(r->mem), b->id, spillable);
}

/* Under lock, returned unlocked: the model admitted @b; the backend supplies its bytes. */
static gboolean
tiered_take(Worker *t, const GsEffect *e, GsMemBuf *b, gboolean spillable, guint64 *handle)
{
	Threads *r = t->r;
	Held *held = g_new0(Held, 1);
	guint64 bk = 0;
	gboolean ok;

	/*
	 * No victim until its bytes exist: it is in flight meanwhile, and not
	 * spillable, so that no plan counts on it.
	 */
	*held = (Held){.mb = b, .name = e->buf, .owner = t, .copying = TRUE};
	b->owner = held;
	note_tier_peak(r, b->tier);
	set_buffer_spillable(r, b, FALSE);
	engine_unlock(r);
	ok = gs_backend_alloc(r->ops, r->bk, t->bk, b->tier, b->device, e->size, &bk);
	if (!ok)
		device_works(r);
	pthread_mutex_lock(&r->lock);
	held->copying = FALSE;
	set_buffer_spillable(r, b, spillable);
	if (!ok) {
		gs_memory_give_page(t->task != NULL ? t->task->pages : NULL, b);
		gs_memory_free_buffer(r->mem, b, NULL);
		gs_run_reserve_retry(&r->tier_ops);
		g_free(held);
	} else {
		held->backend = bk;
		g_ptr_array_add(t->live, held);
	}
	copies_changed(r);
	engine_unlock(r);
	if (!ok)
		return FALSE;
	*handle = GPOINTER_TO_SIZE(held);
	if (e->alloc_kind == GS_KIND_GPU)
		count_footprint(t, e->size);
	return TRUE;
}

static void tiered_unspill(Worker *t, const GsEffect *e);

/*
 * policy.admission fair_share: whether the task's share admits the
 * allocation's GPU bytes now (as the simulator decides it); a refusal is an
 * allocation that failed, an OOM for the state machine.
 */
static gboolean
fair_share_admits(Worker *t, const GsEffect *e)
{
	return t->r->fair == NULL || t->task == NULL || e->alloc_kind != GS_KIND_GPU ||
	       gs_execution_pool_acquire_all(t->r->fair, t->task->run.engine_id, e->size);
}

static void
fair_share_release(Worker *t, GsAllocKind kind, gint64 bytes)
{
	if (t->r->fair != NULL && t->task != NULL && kind == GS_KIND_GPU)
		gs_execution_pool_release(t->r->fair, t->task->run.engine_id, bytes);
}

/* An allocation through the model: spills on demand, as the simulator's does. */
static void
tiered_alloc(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	GsMemRequest req;
	GsMemAlloc a;
	guint64 handle = 0;

	if (e->buf == GS_INTERP_UNSPILL_BUF) {
		tiered_unspill(t, e);
		return;
	}
	pthread_mutex_lock(&r->lock);
	atomic_fetch_add_explicit(&r->locked_allocs, 1, memory_order_relaxed);
	if (!fair_share_admits(t, e)) {
		engine_unlock(r);
		log_alloc(t, e, FALSE);
		gs_interp_alloc_done(t->interp, FALSE, 0, now(r));
		return;
	}
	for (;;) {
		req = request_for(t, e);
		a = gs_memory_alloc(r->mem, &req);
		if (a.outcome != GS_MEM_NO_ROOM || a.short_by <= 0 ||
		    !spill_for(t, a.tier, a.short_by))
			break;
	}
	if (a.outcome == GS_MEM_OK &&
	    !gs_memory_take_page(t->task != NULL ? &t->task->pages : NULL, a.buf)) {
		gs_memory_free_buffer(r->mem, a.buf, NULL);
		a.outcome = GS_MEM_NO_ROOM; /* the page table is full: no spill helps */
	}
	if (a.outcome == GS_MEM_OK && tiered_take(t, e, a.buf, req.spillable, &handle)) {
		log_alloc(t, e, TRUE);
		gs_interp_alloc_done(t->interp, TRUE, handle, now(r));
		return;
	}
	if (a.outcome == GS_MEM_OK)
		pthread_mutex_lock(&r->lock); /* tiered_take let it go */
	fair_share_release(t, e->alloc_kind, e->size);
	engine_unlock(r);
	log_alloc(t, e, FALSE);
	if (a.outcome == GS_MEM_OVER_RESERVATION)
		gs_interp_alloc_throw(t->interp, GS_EXC_RESERVATION_FAILED, now(r));
	else
		gs_interp_alloc_done(t->interp, FALSE, 0, now(r));
}

/* Frees a buffer wherever it lives now; returns that tier. */
static GsTier
tiered_free(Worker *t, Held *held)
{
	Threads *r = t->r;
	GsMemBuf *b;
	GsTier tier;

	pthread_mutex_lock(&r->lock);
	b = held->mb;
	tier = b->tier;
	g_ptr_array_remove_fast(t->live, held);
	fair_share_release(t, b->kind, b->size);
	gs_memory_give_page(t->task != NULL ? t->task->pages : NULL, b);
	gs_memory_free_buffer(r->mem, b, stream_reservation(t, tier, b->device));
	held->mb = NULL;
	if (held->copying) {
		held->doomed = TRUE; /* the copier frees both copies when its move lands */
	} else {
		backend_free_held(r, t->bk, tier, held->backend);
		g_free(held);
	}
	gs_run_reserve_retry(&r->tier_ops);
	engine_unlock(r);
	return tier;
}

/* ---- computes: locks, and spilled buffers brought back first ---- */

/* Waits while another thread's copy of one of @ids is in flight. */
static void
wait_copies_of(Worker *t, const GArray *ids)
{
	for (guint i = 0; i < ids->len && !atomic_load(&t->stop); i++) {
		GsMemBuf *b = gs_memory_buffer(t->r->mem, g_array_index(ids, GsSpillBufId, i));

		if (b != NULL && ((Held *) b->owner)->copying) {
			wait_copies(t);
			i = (guint) -1; /* look again from the start */
		}
	}
}

/* Begins the copies up; FALSE (nothing begun) with *@short_by when the GPU lacks room for one. */
static gboolean
begin_copies_up(Worker *t, const GArray *ids, GArray *moves, gint64 *short_by)
{
	Threads *r = t->r;

	for (guint i = 0; i < ids->len; i++) {
		GsMemBuf *b = gs_memory_buffer(r->mem, g_array_index(ids, GsSpillBufId, i));

		/* A buffer the compute names twice is on its way already. */
		if (b == NULL || b->tier == GS_TIER_GPU || (b->moving && b->dest == GS_TIER_GPU))
			continue;
		if (!move_begin(t->r, b->owner, GS_TIER_GPU, moves))
			*short_by += b->size;
	}
	if (*short_by == 0)
		return TRUE;
	move_cancel(r, moves);
	return FALSE;
}

/*
 * The allocation gs_interp_unspill_first() asked for: the compute's spilled
 * buffers come back to the GPU, locked first so that making room never picks
 * them; they stay locked until the compute has taken its own locks.
 */
static void
tiered_unspill(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	Tiers *m;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(Move));
	gboolean ok = FALSE;

	pthread_mutex_lock(&r->lock);
	m = tiers_of(t);
	buffers_listed(t, &e->op->compute.uses, ids);
	gs_spill_use_begin(gs_memory_store(r->mem), (const GsSpillBufId *) ids->data, ids->len,
			   GS_SPILL_SYNCHRONOUS, now(r));
	g_array_append_vals(m->locked, ids->data, ids->len);
	for (;;) {
		gint64 short_by = 0;
		gboolean closed;

		wait_copies_of(t, ids);
		if (gs_memory_unspill_need(r->mem, ids) == 0 || atomic_load(&t->stop)) {
			ok = TRUE;
			break;
		}
		closed = gate_enter(t);
		if (closed) {
			gate_leave(t);
			gate_wait_open(t);
			continue;
		}
		if (begin_copies_up(t, ids, moves, &short_by)) {
			guint landed = moves_make(t, moves);

			gate_leave(t);
			if (landed == 0)
				break; /* the backend could not bring them back */
			continue;
		}
		gate_leave(t);
		if (!spill_for(t, GS_TIER_GPU, short_by))
			break;
	}
	if (!ok)
		gs_memory_unlock_all(r->mem, m->locked);
	engine_unlock(r);
	if (!ok)
		log_alloc(t, e, FALSE);
	gs_interp_alloc_done(t->interp, ok, 0, now(r));
}

/*
 * A compute that uses buffers locks them for its duration, or until its
 * stream is synchronised, and reads their backend handles. If some are
 * spilled, the compute asks for them first: FALSE then.
 */
static gboolean
tiered_compute_begin(Worker *t, const GsEffect *e, GArray *uses)
{
	Threads *r = t->r;
	const GsOp *op = e->op;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
	gint64 need = 0;

	if (op == NULL || op->compute.uses.len == 0)
		return TRUE;
	pthread_mutex_lock(&r->lock);
	live_listed(t, &op->compute.uses, ids, uses); /* @uses is dropped if it must wait */
	if (gs_memory_spills(r->mem))
		need = gs_memory_unspill_need(r->mem, ids);
	if (need > 0) {
		pthread_mutex_unlock(&r->lock);
		gs_interp_unspill_first(t->interp, need, now(r));
		return FALSE;
	}
	if (gs_memory_spills(r->mem)) {
		Tiers *m = tiers_of(t);

		gs_spill_use_begin(gs_memory_store(r->mem), (const GsSpillBufId *) ids->data,
				   ids->len, gs_memory_stream_id(t->id, op->compute.stream), now(r));
		gs_memory_unlock_all(r->mem, m->locked); /* an unspill's locks: ours are taken now */
		if (op->compute.stream < 0)
			g_array_append_vals(m->locked, ids->data, ids->len);
	}
	engine_unlock(r);
	return TRUE;
}

/* The compute is over: its synchronous locks go, and its buffers may be spilled again. */
static void
tiered_compute_end(Worker *t)
{
	Threads *r = t->r;

	if (t->tiers == NULL || t->tiers->locked->len == 0)
		return;
	pthread_mutex_lock(&r->lock);
	gs_memory_unlock_all(r->mem, t->tiers->locked);
	memory_came_free(r, GS_TIER_GPU);
	engine_unlock(r);
}

/* ---- reservations and the other ops of the tiers (under lock) ---- */

/* A blocking reservation in line: the thread waits (GS_RUN_RESERVE) until it is granted or stopped. */
static void
wait_for_reservation(Worker *t)
{
	Threads *r = t->r;

	set_status(r, t, GS_RUN_RESERVE);
	t->parked_since = now(r);
	drain_wakes(r);
	while (atomic_load(&t->status) == GS_RUN_RESERVE && !atomic_load(&t->stop))
		pthread_cond_wait(&t->cond, &r->lock);
	count_event(r);
	if (atomic_load(&t->status) == GS_RUN_RESERVE) {
		gs_run_reserve_leave_line(&r->tier_ops, &t->tiers->res, t);
		set_status(r, t, GS_RUN_READY);
	}
}

/* ---- the run layer's hooks: reservations (under lock) ---- */

static GsRunThreadTiers *
tiers_of_thread(gpointer data, gpointer thread)
{
	return &tiers_of(thread)->res;
}

static void
reservation_granted(gpointer data, GsTier tier)
{
	note_tier_peak(data, tier);
}

static void
reservation_released(gpointer data, GsTier tier)
{
	memory_came_free(data, tier);
}

static void
reservation_wakes(gpointer data, gpointer thread)
{
	Worker *t = thread;

	set_status(data, t, GS_RUN_READY);
	pthread_cond_signal(&t->cond);
}

static void
reservation_log(gpointer data, GsLogEntry *entry)
{
	log_locked(data, entry);
}

static void
buffers_of(gpointer thread, const GsNames *names, GArray *ids)
{
	buffers_listed(thread, names, ids);
}

static const GsRunTierHooks tier_hooks = {
	.of = tiers_of_thread,
	.granted = reservation_granted,
	.released = reservation_released,
	.wake = reservation_wakes,
	.log = reservation_log,
	.buffers = buffers_of,
};

/* An op of the tiers the interpreter leaves to the driver. */
static void
tiered_op(Worker *t, const GsOp *op)
{
	Threads *r = t->r;
	GsException exc = GS_EXC_NONE;

	pthread_mutex_lock(&r->lock);
	switch (gs_run_tier_op(&r->tier_ops, t, t->id, op)) {
	case GS_RUN_OP_WAITS:
		wait_for_reservation(t);
		break;
	case GS_RUN_OP_TOO_LARGE:
		exc = GS_EXC_RESERVATION_TOO_LARGE;
		break;
	case GS_RUN_OP_GOES_ON:
		break;
	}
	engine_unlock(r);
	if (exc != GS_EXC_NONE)
		gs_interp_op_failed(t->interp, exc, now(r));
}

/* A retry block's input buffers are spillable while it runs (SPEC §3.5.1, 1). */
static void
on_block(const GsOp *retry_op, gboolean entering, gpointer data)
{
	Worker *t = data;
	Threads *r = t->r;
	g_autoptr(GArray) ids = NULL;

	if (!gs_memory_spills(r->mem) || retry_op->retry.input.len == 0)
		return;
	pthread_mutex_lock(&r->lock);
	if (entering) {
		ids = g_array_new(FALSE, FALSE, sizeof(GsSpillBufId));
		buffers_listed(t, &retry_op->retry.input, ids);
		gs_memory_block_enter(r->mem, tiers_of(t)->inputs, ids);
	} else {
		gs_memory_block_leave(r->mem, tiers_of(t)->inputs);
	}
	engine_unlock(r);
}

/*
 * Under lock: the thread is done with the tiers; its locks and reservations
 * go back (as cuCascade's RAII reservations do).
 */
static void
tiers_thread_ends(Worker *t)
{
	Threads *r = t->r;
	Tiers *m = t->tiers;

	if (m == NULL)
		return;
	if (gs_memory_spills(r->mem)) {
		gs_memory_unlock_all(r->mem, m->locked);
		for (guint i = 0; i < t->spec->streams->len; i++)
			gs_spill_sync(gs_memory_store(r->mem), gs_memory_stream_id(t->id, (gint) i));
	}
	gate_leave(t);
	gs_run_release_all(&r->tier_ops, &m->res);
}

/* ---- effects ---- */

static void
do_alloc(Worker *t, const GsEffect *e)
{
	guint64 handle = 0;
	gboolean ok;

	if (t->r->mem != NULL) {
		tiered_alloc(t, e);
		return;
	}
	ok = take_memory(t, e, &handle);

	log_alloc(t, e, ok);
	atomic_fetch_add_explicit(&t->r->locked_allocs, 1, memory_order_relaxed);
	gs_interp_alloc_done(t->interp, ok, handle, now(t->r));
}

static void
do_free(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	Held *held = GSIZE_TO_POINTER(e->handle);
	GsLogEntry le = {.kind = GS_LOG_FREE, .thread = t->result->name, .bytes = e->size,
			 .tier = e->alloc_kind == GS_KIND_HOST ? GS_TIER_HOST : GS_TIER_GPU};

	if (e->at_end)
		t->leaking += e->size;
	if (e->alloc_kind == GS_KIND_GPU)
		t->footprint -= e->size;
	if (r->mem != NULL) {
		le.tier = tiered_free(t, held);
	} else {
		gs_backend_free(r->ops, r->bk, t->bk, held->space->tier, held->backend);
		space_give(held->space, held->charged);
		g_ptr_array_remove_fast(t->live, held);
		g_free(held);
	}
	atomic_fetch_add_explicit(&r->frees, 1, memory_order_relaxed);
	le.buf = t->spec->buffers->pdata[e->buf];
	log_to(r, t->log, &le);
}

/* Frees what an ending thread still holds, through its interpreter. */
static void
drain_frees(Worker *t)
{
	for (GsEffect e = gs_interp_step(t->interp, now(t->r)); e.kind == GS_EFFECT_FREE;
	     e = gs_interp_step(t->interp, now(t->r))) {
		do_free(t, &e);
	}
}

/*
 * The real time a compute until scenario time @until keeps the device busy:
 * none on the virtual clock, where the buffers are touched but the time is
 * the clock's; on the real clock no further than --max-time, since a stopped
 * thread waits for its device work to end.
 */
static GsTime
device_work(Threads *r, GsTime until)
{
	GsTime now_ = now(r);

	if (r->virtual_clock)
		return 0;
	if (r->opts.max_time > 0)
		until = MIN(until, MAX(r->opts.max_time, now_));
	return gs_time_from_double((double) (until - now_) * r->scale);
}

/* Keeps the device busy for @e's time, reading the buffers it uses; FALSE when stopped. */
static gboolean
do_compute(Worker *t, const GsEffect *e)
{
	Threads *r = t->r;
	g_autoptr(GArray) uses = g_array_new(FALSE, FALSE, sizeof(guint64));
	GsTime until;
	gboolean ok;

	if (r->mem != NULL && !tiered_compute_begin(t, e, uses))
		return TRUE; /* its spilled buffers are asked for first */
	until = gs_time_add(now(r), e->time); /* touching the buffers is part of the time */
	/* The interpreter names buffers; the backend wants the live handles of those names. */
	if (r->mem == NULL && e->op != NULL)
		live_listed(t, &e->op->compute.uses, NULL, uses);
	gs_backend_compute_begin(r->ops, r->bk, t->bk, device_work(r, until),
				 (const guint64 *) uses->data, uses->len);
	ok = wait_until(t, until);
	gs_backend_compute_end(r->ops, r->bk, t->bk);
	ok = device_works(r) && ok;
	if (r->mem != NULL)
		tiered_compute_end(t);
	return ok;
}

/* ---- the GPU semaphore (under lock) ---- */

/*
 * TRUE if @t's task holds the GPU permit or takes it now; else the thread
 * waits for it. FALSE: the thread was stopped meanwhile.
 */
static gboolean
take_permit(Worker *t)
{
	Threads *r = t->r;
	Task *task = t->task;
	gboolean ok;

	/* Held until the task's threads have all exited: readable without the lock. */
	if (task == NULL || gs_run_task_has_permit(&task->run))
		return TRUE;
	pthread_mutex_lock(&r->lock);
	if (!gs_run_tasks_take_permit(&r->run, &task->run)) {
		set_status(r, t, GS_RUN_SEMAPHORE);
		t->semaphore_since = now(r);
		while (atomic_load(&t->status) == GS_RUN_SEMAPHORE && !atomic_load(&t->stop))
			pthread_cond_wait(&t->cond, &r->lock);
		count_event(r);
		if (atomic_load(&t->status) == GS_RUN_SEMAPHORE) {
			r->res->totals.semaphore_wait_ns += now(r) - t->semaphore_since;
			set_status(r, t, GS_RUN_READY);
		}
	}
	ok = !atomic_load(&t->stop);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* ---- parking in the engine ---- */

/* Waits for the engine's wake-up; FALSE when stopped first. */
static gboolean
park(Worker *t)
{
	Threads *r = t->r;
	gboolean ok;

	pthread_mutex_lock(&r->lock);
	if (!t->woken) {
		set_status(r, t, GS_RUN_PARKED);
		t->parked_since = now(r);
		while (!t->woken && !atomic_load(&t->stop))
			pthread_cond_wait(&t->cond, &r->lock);
		count_event(r);
		if (atomic_load(&t->status) == GS_RUN_PARKED)
			set_status(r, t, GS_RUN_READY);
	}
	t->woken = FALSE;
	ok = !atomic_load(&t->stop);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* ---- the pool op (under lock) ---- */

static void
do_pool(Worker *t, const GsOp *op)
{
	Threads *r = t->r;
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsTaskId));

	pthread_mutex_lock(&r->lock);
	for (guint i = 0; i < op->pool.tasks->len; i++) {
		guint spec_index = g_array_index(op->pool.tasks, guint, i);

		for (guint k = 0; k < r->tasks->len; k++) {
			Task *task = r->tasks->pdata[k];

			if (task->run.spec_index == spec_index && task->run.status != GS_RUN_TASK_ENDED)
				g_array_append_val(ids, task->run.engine_id);
		}
	}
	if (op->pool.done)
		gs_engine_pool_done(r->engine, t->id, (GsTaskId *) ids->data, ids->len, now(r));
	else
		gs_engine_register_pool(r->engine, t->id, (GsTaskId *) ids->data, ids->len,
					t->spec->shuffle, now(r));
	engine_unlock(r);
}

/* ---- tasks (under lock) ---- */

static void
task_free(gpointer data)
{
	Task *task = data;

	g_ptr_array_unref(task->threads);
	if (task->pages != NULL)
		gs_page_table_free(task->pages);
	g_free(task);
}

static void
collect_metrics(Threads *r, Task *task)
{
	gint64 footprint = 0;
	GsMetrics m;

	gs_engine_task_metrics(r->engine, task->run.engine_id, now(r), &m);
	/*
	 * The engine sees only the allocations that went through it; each
	 * thread counted its own, so the footprint is summed from those (the
	 * engine's roll-up also sums its threads' footprints).
	 */
	for (guint i = 0; i < task->threads->len; i++)
		footprint += atomic_load_explicit(
			&((Worker *) task->threads->pdata[i])->max_footprint, memory_order_relaxed);
	gs_result_add_task_metrics(task->run.result, &m, footprint);
	gs_engine_forget_task_metrics(r->engine, task->run.engine_id);
}

/*
 * The last thread of an ended task has exited: its metrics are final, its
 * slot and permit go to the next, and a failed attempt may go again.
 */
static void
finish_task(Threads *r, Task *task)
{
	collect_metrics(r, task);
	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		t->result->final_state = gs_engine_thread_state(r->engine, t->id);
	}
	if (gs_run_tasks_finish(&r->run, &task->run, task->failed, task->failure)) {
		r->end_time = now(r);
		pthread_cond_broadcast(&r->done_cond);
	}
}

/* The task ends now: the engine removes it, its other threads are told to stop. */
static void
end_task(Threads *r, Task *task, gboolean failed, GsException failure)
{
	if (r->fair != NULL)
		gs_execution_pool_release_all(r->fair, task->run.engine_id);
	task->failed = failed;
	task->failure = failure;
	gs_run_tasks_end(&r->run, &task->run, failed);
}

/* Under lock: a thread of @t's task is gone; the task may end or finish with it. */
static void
thread_exited(Threads *r, Worker *t, gboolean ends_task, gboolean failed, GsException failure)
{
	Task *task = t->task;

	if (task == NULL)
		return;
	task->run.alive--;
	if (r->ended)
		return;
	if (task->run.status == GS_RUN_TASK_RUNNING && (ends_task || task->run.alive == 0))
		end_task(r, task, failed, failure);
	if (task->run.status == GS_RUN_TASK_ENDED && task->run.alive == 0)
		finish_task(r, task);
}

/* ---- one simulated thread ---- */

/* An inject op: a thread that holds one must always meet the engine, which decides injection. */
static gboolean
is_inject(const GsOp *op)
{
	return op->kind == GS_OP_INJECT;
}

/* Carries out one effect; FALSE when the thread ends (or was stopped). */
static gboolean
carry_out(Worker *t, const GsEffect *e, gboolean *ends_task, gboolean *failed,
	  GsException *failure)
{
	Threads *r = t->r;

	t->parked_last = FALSE;
	switch (e->kind) {
	case GS_EFFECT_PERMIT:
		if (!take_permit(t))
			return FALSE;
		gs_interp_permit_granted(t->interp);
		return TRUE;
	case GS_EFFECT_ALLOC:
		/* On the virtual clock an attempt lasts links.alloc_latency, as the simulator's. */
		if (r->virtual_clock && !wait_until(t, gs_time_add(now(r), r->w->links.alloc_latency)))
			return FALSE;
		do_alloc(t, e);
		return TRUE;
	case GS_EFFECT_FREE:
		do_free(t, e);
		return TRUE;
	case GS_EFFECT_COMPUTE:
		return do_compute(t, e);
	case GS_EFFECT_SLEEP: {
		gboolean ok;

		atomic_store(&t->status, GS_RUN_SLEEPING); /* active either way: no lock needed */
		ok = wait_until(t, gs_time_add(now(r), e->time));
		atomic_store(&t->status, GS_RUN_READY);
		return ok;
	}
	case GS_EFFECT_UNTIL:
		return wait_until(t, e->time);
	case GS_EFFECT_OP:
		if (e->op->kind == GS_OP_POOL)
			do_pool(t, e->op);
		else if (r->mem != NULL)
			tiered_op(t, e->op);
		return TRUE;
	case GS_EFFECT_WAIT:
		t->parked_last = TRUE;
		return park(t);
	case GS_EFFECT_TASK_DONE:
		*ends_task = TRUE;
		return FALSE;
	case GS_EFFECT_DONE:
		return FALSE;
	case GS_EFFECT_FAILED:
		*ends_task = TRUE;
		*failed = TRUE;
		*failure = e->exception;
		return FALSE;
	}
	return FALSE;
}

/*
 * A stopped thread gives back what it holds. One parked in the engine first
 * steps into its removal (it throws ThreadRemoved), as the simulator's does.
 */
static void
unwind(Worker *t)
{
	if (t->parked_last)
		drain_frees(t);
	gs_interp_abort(t->interp, now(t->r));
	drain_frees(t);
}

/*
 * Under lock. Spark's leak report: what a thread that completed left
 * allocated (the interpreter handed it back as the thread ended) is a leak
 * of its task. A failed thread's leftovers are not, nor are those of a
 * thread stopped because its task ended: Spark reports leaks only for tasks
 * that did not throw.
 */
static void
report_leak(Threads *r, Worker *t, gboolean failed)
{
	if (!failed && t->task != NULL)
		gs_run_tasks_report_leak(&r->run, &t->task->run, t->result->name, t->leaking);
	t->leaking = 0;
}

static gpointer
thread_main(gpointer data)
{
	Worker *t = data;
	Threads *r = t->r;
	gboolean ends_task = FALSE, failed = FALSE, stopped;
	GsException failure = GS_EXC_NONE;

	t->bk = gs_backend_thread_begin(r->ops, r->bk);
	count_event(r); /* its start */
	for (;;) {
		GsEffect e;

		if (atomic_load(&t->stop))
			break;
		e = gs_interp_step(t->interp, now(r));
		if (!carry_out(t, &e, &ends_task, &failed, &failure))
			break;
	}
	stopped = atomic_load(&t->stop) && !ends_task && !failed && !gs_interp_finished(t->interp);
	if (stopped)
		unwind(t);
	gs_backend_thread_end(r->ops, r->bk, t->bk);
	pthread_mutex_lock(&r->lock);
	if (r->mem != NULL)
		tiers_thread_ends(t);
	if (!stopped)
		report_leak(r, t, failed);
	set_status(r, t, GS_RUN_DONE);
	thread_exited(r, t, ends_task, failed, failure);
	engine_unlock(r);
	return NULL;
}

/* A run with tiers goes through the model under the mutex; otherwise as --locking says. */
static const GsInterpHooks *
hooks_for(const Threads *r)
{
	if (r->mem != NULL)
		return &tiered_hooks;
	/* The fast path allocates at once: the virtual clock makes every attempt last its latency. */
	if (r->virtual_clock && r->w->links.alloc_latency > 0)
		return &global_hooks;
	return r->opts.locking == GS_LOCKING_FAST ? &fast_hooks : &global_hooks;
}

/* Under lock. */
static Worker *
thread_new(Threads *r, const GsThreadSpec *spec, Task *task, const char *name)
{
	Worker *t = g_new0(Worker, 1);

	t->r = r;
	t->id = r->next_thread++;
	t->spec = spec;
	t->task = task;
	atomic_init(&t->status, GS_RUN_DONE);
	atomic_init(&t->engine_state, GS_THREAD_UNKNOWN);
	set_status(r, t, GS_RUN_READY);
	cond_init(&t->cond);
	pthread_mutex_init(&t->sleep_lock, NULL);
	cond_init(&t->sleep_cond);
	t->fast_ok = !ops_any(spec->ops, is_inject);
	t->log = g_array_new(FALSE, FALSE, sizeof(LogItem));
	t->live = g_ptr_array_new();
	t->result = gs_result_add_thread(r->res, name, task != NULL ? task->run.result : NULL);
	g_ptr_array_add(r->threads, t);
	if (task != NULL)
		gs_engine_register_dedicated(r->engine, t->id, task->run.engine_id, now(r));
	t->interp = gs_interp_new(r->engine, spec, t->id, r->w->policy.oom);
	gs_interp_require_permit(t->interp, task != NULL && gs_run_tasks_use_permits(&r->run));
	gs_interp_set_hooks(t->interp, hooks_for(r), t);
	return t;
}

static void
thread_spawn(Worker *t)
{
	int err = pthread_create(&t->os, NULL, thread_main, t);

	if (err != 0)
		g_error("cannot start a thread for %s: %s", t->result->name, g_strerror(err));
}

static void
thread_free(gpointer data)
{
	Worker *t = data;

	gs_interp_free(t->interp);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->sleep_lock);
	pthread_cond_destroy(&t->sleep_cond);
	g_array_unref(t->log);
	g_ptr_array_unref(t->live);
	tiers_free(t->tiers);
	g_free(t);
}

/* ---- the run layer's hooks: tasks (under lock) ---- */

static GsRunTask *
task_new(gpointer data)
{
	Threads *r = data;
	Task *task = g_new0(Task, 1);

	task->threads = g_ptr_array_new();
	g_ptr_array_add(r->tasks, task);
	return &task->run;
}

static void
task_arrives(gpointer data, GsRunTask *task, GsTime at)
{
	((Task *) task)->arrival = at;
}

static void
start_threads(gpointer data, GsRunTask *run)
{
	Threads *r = data;
	Task *task = (Task *) run;

	for (guint i = 0; i < run->spec->threads->len; i++) {
		const GsThreadSpec *spec = run->spec->threads->pdata[i];
		g_autofree char *name = gs_task_thread_name(run->spec, run->result->id, spec);

		g_ptr_array_add(task->threads, thread_new(r, spec, task, name));
		task->run.alive++;
	}
	if (task->run.alive == 0) {
		end_task(r, task, FALSE, GS_EXC_NONE);
		finish_task(r, task);
		return;
	}
	/* Registered all before any runs, as the simulator's start in one instant. */
	for (guint i = 0; i < task->threads->len; i++)
		thread_spawn(task->threads->pdata[i]);
}

static void
stop_threads(gpointer data, GsRunTask *run)
{
	Task *task = (Task *) run;

	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		if (atomic_load(&t->status) != GS_RUN_DONE)
			stop_thread(t);
	}
}

static void
permit_granted(gpointer data, GsRunTask *run)
{
	Threads *r = data;
	Task *task = (Task *) run;

	for (guint i = 0; i < task->threads->len; i++) {
		Worker *t = task->threads->pdata[i];

		if (atomic_load(&t->status) == GS_RUN_SEMAPHORE) {
			r->res->totals.semaphore_wait_ns += now(r) - t->semaphore_since;
			set_status(r, t, GS_RUN_READY);
			pthread_cond_signal(&t->cond);
		}
	}
}

static GsTime
threads_now(gpointer data)
{
	return now(data);
}

static void
task_log(gpointer data, GsLogEntry *entry)
{
	log_locked(data, entry);
}

static const GsRunTaskHooks task_hooks = {
	.task_new = task_new,
	.arrives = task_arrives,
	.start_threads = start_threads,
	.stop_threads = stop_threads,
	.permit_granted = permit_granted,
	.now = threads_now,
	.log = task_log,
};

static int
compare_arrivals(gconstpointer a, gconstpointer b)
{
	const Task *x = *(Task *const *) a, *y = *(Task *const *) b;

	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	return x->run.engine_id < y->run.engine_id ? -1 : x->run.engine_id > y->run.engine_id;
}

/* ---- samples, the watchdog, the end of a run (under lock) ---- */

static gint64
tier_used(Threads *r, GsTier tier)
{
	gint64 used = 0;

	if (r->mem != NULL)
		return gs_memory_used(r->mem, tier);
	if (tier == GS_TIER_HOST)
		return atomic_load(&r->host.used);
	if (tier == GS_TIER_DISK)
		return 0;
	for (guint i = 0; i < r->n_gpus; i++)
		used += atomic_load(&r->gpus[i].used);
	return used;
}

/* What a sample holds, but its time. */
static void
sample_values(Threads *r, GsSample *x)
{
	guint live = 0;

	for (guint i = 0; i < r->threads->len; i++)
		live += atomic_load(&((Worker *) r->threads->pdata[i])->status) != GS_RUN_DONE;
	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		x->used[tier] = tier_used(r, tier);
		x->charged[tier] = r->mem != NULL ? gs_memory_charged(r->mem, tier) : x->used[tier];
	}
	x->blocked = gs_engine_n_in_state(r->engine, GS_THREAD_BLOCKED);
	x->bufn = gs_engine_n_in_state(r->engine, GS_THREAD_BUFN);
	x->running = live - MIN(live, x->blocked + x->bufn);
}

static const GsSample *
last_sample(const Threads *r)
{
	GArray *timeline = r->res->timeline;

	return timeline->len > 0 ? &g_array_index(timeline, GsSample, timeline->len - 1) : NULL;
}

/* The integral of use runs over the stretch since the last sample, at the last sample's values. */
static void
add_sample(Threads *r, const GsSample *x)
{
	const GsSample *last = last_sample(r);

	for (int tier = 0; last != NULL && tier < GS_N_TIERS; tier++)
		r->used_integral[tier] += (double) last->used[tier] * (double) (x->time - r->last_sample);
	r->last_sample = x->time;
	g_array_append_val(r->res->timeline, *x);
}

static void
sample(Threads *r)
{
	GsSample x = {.time = now(r)};

	sample_values(r, &x);
	add_sample(r, &x);
}

static void
watchdog(Threads *r)
{
	g_autoptr(GArray) outside = g_array_new(FALSE, FALSE, sizeof(GsThreadId));

	count_event(r);
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];
		Status s = atomic_load(&t->status);

		if (gs_run_waits_outside(s, &r->w->policy))
			g_array_append_val(outside, t->id);
	}
	gs_engine_check_deadlocks(r->engine, (GsThreadId *) outside->data, outside->len, now(r));
	drain_wakes(r);
}

/* Every live thread waits in the engine or for a permit, and no task is still to come. */
static gboolean
hopeless(Threads *r, gboolean all_arrived)
{
	return r->active == 0 && all_arrived && r->run.open > 0;
}

/*
 * Where the threads not in an ended task stand, taken under lock before they
 * unwind (so that no free made on the way out changes it).
 */
static void
snapshot_threads(Threads *r, gboolean deadlock)
{
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];
		Status s = atomic_load(&t->status);

		if (t->task != NULL && t->task->run.status == GS_RUN_TASK_ENDED)
			continue;
		t->result->final_state = gs_engine_thread_state(r->engine, t->id);
		t->result->waiting_at_end =
			deadlock && gs_run_waits_on_another(s);
	}
}

/* A task a deadlock or --max-time stopped reports what it did so far, and the run's outcome. */
static void
cut_short(Threads *r, Task *task)
{
	if (task->run.status == GS_RUN_TASK_ENDED)
		return;
	if (task->run.status == GS_RUN_TASK_RUNNING) {
		collect_metrics(r, task);
		for (guint i = 0; i < task->threads->len; i++) {
			Worker *t = task->threads->pdata[i];

			if (atomic_load(&t->status) == GS_RUN_PARKED)
				task->run.result->blocked_ns += now(r) - t->parked_since;
		}
	}
	task->run.result->outcome = r->res->outcome;
	task->run.result->end_ns = r->end_time;
}

/* Ends the run where it stands: every thread is told to stop. */
static void
cut(Threads *r, GsOutcome outcome)
{
	r->res->outcome = outcome;
	if (outcome == GS_OUTCOME_DEADLOCK)
		r->res->totals.deadlocks_unresolved = 1;
	r->end_time = outcome == GS_OUTCOME_TIMEOUT ? r->opts.max_time : now(r);
	sample(r); /* what the run held where it stopped, before the threads unwind */
	snapshot_threads(r, outcome == GS_OUTCOME_DEADLOCK);
	for (guint i = 0; i < r->tasks->len; i++)
		cut_short(r, r->tasks->pdata[i]);
	r->ended = TRUE;
	for (guint i = 0; i < r->threads->len; i++)
		stop_thread(r->threads->pdata[i]);
	copies_changed(r); /* those waiting on the gate, too */
	pthread_cond_broadcast(&r->done_cond);
}

/* Virtual clock, under lock: the earliest scenario time a thread waits for (G_MAXINT64: none). */
static GsTime
earliest_deadline(Threads *r)
{
	GsTime earliest = G_MAXINT64;

	for (guint i = 0; i < r->threads->len; i++) {
		const TimedWait *w = &((Worker *) r->threads->pdata[i])->timed;

		if (w->on)
			earliest = MIN(earliest, w->deadline);
	}
	for (guint d = 0; r->downgrading != NULL && d < r->downgrading->len; d++) {
		if (r->downgraders[d].timed.on)
			earliest = MIN(earliest, r->downgraders[d].timed.deadline);
	}
	return earliest;
}

/* Virtual clock, under lock: ends @w if its time has come; TRUE if it did. */
static gboolean
timed_wait_due(Threads *r, TimedWait *w)
{
	if (!w->on || w->deadline > now(r))
		return FALSE;
	w->on = FALSE;
	r->idle--;
	return TRUE;
}

/* Virtual clock, under lock: the clock moves to @time, and what waits for it goes on. */
static void
advance_clock(Threads *r, GsTime time)
{
	gboolean downgrader_due = FALSE;

	atomic_store(&r->clock, MAX(time, now(r)));
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];

		if (timed_wait_due(r, &t->timed))
			pthread_cond_signal(&t->cond);
	}
	for (guint d = 0; r->downgrading != NULL && d < r->downgrading->len; d++)
		downgrader_due |= timed_wait_due(r, &r->downgraders[d].timed);
	if (downgrader_due)
		pthread_cond_broadcast(&r->downgrade_cond);
}

/* Virtual clock, under lock: waits until nothing is left to happen at this instant. */
static void
wait_quiet(Threads *r)
{
	while (!quiet(r) && !r->ended)
		pthread_cond_wait(&r->done_cond, &r->lock);
}

/*
 * The loop's sample. On the virtual clock, only when something changed since
 * the last one, as the simulator's, since an instant may pass the loop more
 * than once and a long idle stretch passes it at every watchdog tick.
 */
static void
sample_if_changed(Threads *r)
{
	const GsSample *last = last_sample(r);
	GsSample x = {.time = now(r)};

	sample_values(r, &x);
	if (r->virtual_clock && last != NULL && memcmp(x.used, last->used, sizeof x.used) == 0 &&
	    memcmp(x.charged, last->charged, sizeof x.charged) == 0 && x.blocked == last->blocked &&
	    x.bufn == last->bufn && x.running == last->running)
		return;
	add_sample(r, &x);
}

/*
 * The driver's own loop, on the calling thread: admits tasks as their start
 * times come, samples, runs the watchdog every policy.watchdog, and ends the
 * run when every task is over, at --max-time, or when every thread waits and
 * even the watchdog's tick changed nothing (the simulator's rule). On the
 * real clock it wakes every tick of real time; on the virtual clock it waits
 * until the instant is quiet, then moves the clock to what comes next.
 */
static void
run_loop(Threads *r)
{
	g_autoptr(GPtrArray) arrivals = g_ptr_array_new(); /* borrows r->tasks' entries */
	const GsTime tick = 1000000; /* 1 ms of scenario time between samples */
	GsTime next_watchdog = r->w->policy.watchdog;
	guint arrived = 0;
	gboolean watched_hopeless = FALSE; /* the watchdog ticked while every thread waited */

	pthread_mutex_lock(&r->lock);
	for (guint i = 0; i < r->tasks->len; i++)
		g_ptr_array_add(arrivals, r->tasks->pdata[i]);
	g_ptr_array_sort(arrivals, compare_arrivals);
	while (r->run.open > 0 && !r->ended) {
		GsTime t, wake;
		gboolean stuck;

		t = now(r);
		wake = r->virtual_clock ? G_MAXINT64 : t + tick;
		while (arrived < arrivals->len && ((Task *) arrivals->pdata[arrived])->arrival <= t) {
			count_event(r);
			gs_run_tasks_admit(&r->run, arrivals->pdata[arrived++]);
		}
		if (r->virtual_clock)
			wait_quiet(r);
		if (r->run.open == 0 || r->ended)
			break;
		if (arrived < arrivals->len)
			wake = MIN(wake, ((Task *) arrivals->pdata[arrived])->arrival);
		if (r->opts.max_time > 0 && t >= r->opts.max_time) {
			cut(r, GS_OUTCOME_TIMEOUT);
			break;
		}
		stuck = hopeless(r, arrived == arrivals->len);
		/* Only the retry policy's watchdog can break a deadlock, and it had its tick. */
		if (stuck && (r->w->policy.oom != GS_OOM_RETRY || r->w->policy.watchdog <= 0 ||
			      watched_hopeless)) {
			cut(r, GS_OUTCOME_DEADLOCK);
			break;
		}
		watched_hopeless &= stuck;
		if (r->w->policy.watchdog > 0 && t >= next_watchdog) {
			watched_hopeless = stuck;
			watchdog(r);
			next_watchdog = gs_time_add(t, r->w->policy.watchdog);
			continue; /* what it woke acts at this instant first */
		}
		sample_if_changed(r);
		if (r->run.open == 0)
			break;
		if (r->w->policy.watchdog > 0)
			wake = MIN(wake, next_watchdog);
		if (r->opts.max_time > 0)
			wake = MIN(wake, r->opts.max_time);
		if (!r->virtual_clock) {
			cond_wait_until(&r->done_cond, &r->lock, real_at(r, MAX(wake, t + 1)));
			continue;
		}
		wake = MIN(wake, earliest_deadline(r));
		if (wake == G_MAXINT64) { /* nothing waits for a time, and nothing is to come */
			cut(r, GS_OUTCOME_DEADLOCK);
			break;
		}
		advance_clock(r, wake);
	}
	if (!r->ended) {
		/* Pool threads still at work when the last task ends are cut short. */
		snapshot_threads(r, FALSE);
		r->ended = TRUE;
		for (guint i = 0; i < r->threads->len; i++)
			stop_thread(r->threads->pdata[i]);
	}
	pthread_mutex_unlock(&r->lock);
}

/* ---- a run ---- */

static void
spaces_init(Threads *r)
{
	const GsWorkload *w = r->w;

	r->n_gpus = MAX(w->gpu.devices, 1);
	/* Cache-line aligned, so that two spaces' counters never share a line. */
	if (posix_memalign((void **) &r->gpus, _Alignof(Space), r->n_gpus * sizeof(Space)) != 0)
		g_error("out of memory for %u GPU spaces", r->n_gpus);
	memset(r->gpus, 0, r->n_gpus * sizeof(Space));
	for (guint i = 0; i < r->n_gpus; i++) {
		r->gpus[i].capacity = w->gpu.capacity;
		r->gpus[i].alignment = MAX(w->gpu.alignment, 1);
		r->gpus[i].tier = GS_TIER_GPU;
		r->gpus[i].device = i;
	}
	r->host.capacity = w->host.capacity;
	r->host.alignment = 1;
	r->host.tier = GS_TIER_HOST;
}

static void
threads_init(Threads *r, const GsWorkload *w, const GsBackendOps *ops, const GsRunOptions *opts)
{
	GsEngineOpts engine_opts = gs_policy_engine_opts(&w->policy);

	memset(r, 0, sizeof *r);
	r->w = w;
	r->ops = ops;
	if (opts != NULL)
		r->opts = *opts;
	r->scale = r->opts.time_scale > 0 ? r->opts.time_scale : 1.0;
	r->virtual_clock = r->opts.clock == GS_CLOCK_VIRTUAL;
	r->res = gs_result_new();
	r->res->seed = w->seed;
	r->engine = gs_engine_new(&engine_opts);
	gs_run_watch(&r->watch, r->engine, r->res, &watch_hooks, r);
	pthread_mutex_init(&r->lock, NULL);
	cond_init(&r->done_cond);
	spaces_init(r);
	r->tasks = g_ptr_array_new_with_free_func(task_free);
	r->threads = g_ptr_array_new_with_free_func(thread_free);
	gs_run_tasks_init(&r->run, w, r->res, r->engine, &task_hooks, r);
	r->next_thread = 1;
	r->log = g_array_new(FALSE, FALSE, sizeof(LogItem));
	r->res->tiers[GS_TIER_GPU].capacity = w->gpu.capacity * r->n_gpus;
	r->res->tiers[GS_TIER_HOST].capacity = w->host.capacity;
	r->res->tiers[GS_TIER_DISK].capacity = w->disk.capacity;
	if (tiers_needed(w)) {
		r->mem = gs_memory_new(w);
		r->moves = g_array_new(FALSE, FALSE, sizeof(GsSpillMove));
	}
	if (w->policy.admission == GS_ADMISSION_FAIR_SHARE)
		r->fair = gs_execution_pool_new(w->gpu.capacity * MAX(w->gpu.devices, 1));
	gs_run_tiers_init(&r->tier_ops, w, r->mem, &tier_hooks, r);
	cond_init(&r->copies_cond);
}

/* What crossed the links, and whether every copy arrived whole (the model's tags, the backend's patterns). */
static void
threads_finish(Threads *r)
{
	GsResult *res = r->res;
	gint64 peak_gpu = 0;

	/* Every thread has been joined: what they own can be read now. */
	for (guint i = 0; i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];

		t->result->reached = atomic_load(&t->reached);
		t->result->exceptions = g_array_copy((GArray *) gs_interp_exceptions(t->interp));
	}
	if (r->res->outcome != GS_OUTCOME_DEADLOCK && r->res->outcome != GS_OUTCOME_TIMEOUT)
		sample(r); /* a run cut short was sampled where it stopped */
	res->makespan_ns = r->end_time;
	if (r->mem != NULL) {
		gs_result_note_traffic(res, gs_memory_traffic(r->mem), r->corrupt_moves);
	} else {
		for (guint i = 0; i < r->n_gpus; i++)
			peak_gpu += atomic_load(&r->gpus[i].peak);
		res->tiers[GS_TIER_GPU].peak_used = peak_gpu;
		res->tiers[GS_TIER_HOST].peak_used = atomic_load(&r->host.peak);
		for (int tier = 0; tier < GS_N_TIERS; tier++)
			res->tiers[tier].peak_charged = res->tiers[tier].peak_used;
	}
	for (int tier = 0; tier < GS_N_TIERS; tier++) {
		res->tiers[tier].mean_used =
			r->last_sample > 0 ? (gint64) (r->used_integral[tier] / (double) r->last_sample)
					   : 0;
	}
	gs_run_tasks_settle_outcome(&r->run);
	gs_result_sum_tasks(res);
	res->events_processed = atomic_load(&r->events);
}

static void
threads_clear(Threads *r)
{
	g_ptr_array_unref(r->threads);
	g_ptr_array_unref(r->tasks);
	gs_run_tasks_clear(&r->run);
	g_array_unref(r->log);
	gs_run_tiers_clear(&r->tier_ops);
	pthread_cond_destroy(&r->copies_cond);
	if (r->moves != NULL)
		g_array_unref(r->moves);
	gs_memory_free(r->mem);
	if (r->fair != NULL)
		gs_execution_pool_free(r->fair);
	free(r->gpus);
	gs_engine_free(r->engine);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->done_cond);
	g_clear_error(&r->device_error);
}

GsResult *
gs_threads_run(const GsWorkload *w, const GsBackendOps *backend, const GsRunOptions *options,
	    GsThreadsStats *stats, GError **error)
{
	Threads r;
	GsResult *res;

	threads_init(&r, w, backend, options);
	r.bk = gs_backend_open(backend, w, error);
	if (r.bk == NULL) {
		gs_result_free(r.res);
		threads_clear(&r);
		return NULL;
	}
	gs_run_tasks_add_all(&r.run);
	r.t0 = g_get_monotonic_time();
	downgrader_start(&r); /* before any thread that could wake it */
	pthread_mutex_lock(&r.lock);
	for (guint i = 0; i < w->pool_threads->len; i++) {
		const GsThreadSpec *spec = w->pool_threads->pdata[i];

		thread_spawn(thread_new(&r, spec, NULL, spec->name));
	}
	sample(&r);
	pthread_mutex_unlock(&r.lock);
	run_loop(&r);
	/* Threads are only ever added under lock, and none is added once the run ended. */
	for (guint i = 0; i < r.threads->len; i++)
		pthread_join(((Worker *) r.threads->pdata[i])->os, NULL);
	downgrader_join(&r);
	threads_finish(&r);
	flush_logs(&r);
	if (stats != NULL) {
		stats->fast_allocs = atomic_load(&r.fast_allocs);
		stats->locked_allocs = atomic_load(&r.locked_allocs);
		stats->fast_frees = atomic_load(&r.fast_frees);
		stats->locked_frees = atomic_load(&r.frees) - stats->fast_frees;
		gs_backend_stats(backend, r.bk, &stats->backend);
	}
	gs_backend_close(backend, r.bk);
	res = r.res;
	if (r.device_error != NULL) {
		/* What ran on a failed device says nothing: the failure is the answer. */
		g_propagate_error(error, g_steal_pointer(&r.device_error));
		g_clear_pointer(&res, gs_result_free);
	}
	threads_clear(&r);
	return res;
}
