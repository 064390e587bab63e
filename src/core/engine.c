/*
 * gpusim: the OOM engine: thread records, the allocation protocol, wake-ups,
 * deadlock busting, injection and metrics (see engine.h for the contract).
 *
 * Bookkeeping that keeps the common path short: records are found by thread
 * id through a GsIdTable (id-table.h: an array indexed by id for the small
 * ids drivers hand out in sequence, a hash table for any other id; looked
 * up, never iterated); they also sit in an array (swap-removed, so its order
 * is not meaningful) that the deadlock check reads as its snapshot without
 * copying,
 * because every record begins with its GsThreadView. A task's dedicated
 * records form a list in registration order, found by task id the same way.
 * The engine counts records per (state, kind), so that an uncontended
 * allocation or free, which finds no thread in THREAD_ALLOC or THREAD_BLOCKED,
 * never scans the records; and it keeps the BLOCKED records of each kind in a
 * heap by rank, so that the wake-one on every free or success does not scan
 * them either.
 *
 * Every state change goes through set_state(), which keeps the counts, tells
 * the observer and queues the wake-up of a parked thread that must look again.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <gpusim/engine.h>

#include "core/id-table.h"

typedef enum {
	PENDING_NONE,
	PENDING_ALLOC,   /* parked inside gs_engine_alloc_begin() */
	PENDING_BLOCK,   /* parked inside gs_engine_block_until_ready() */
} PendingCall;

typedef struct {
	int hits;
	int skips;
	GsKindFilter filter;
} Injection;

/* Fault injection armed on a thread: kept out of line, as few threads have any. */
typedef struct {
	Injection retry_oom;
	Injection split_oom;
	int cudf_exceptions;
} Injections;

/*
 * What a thread accumulates once it allocates, waits, enters a retry block or
 * is ranked, kept out of its record: a thread that only computes never needs
 * it, and 10^5 threads are a normal run. NULL until first written.
 */
typedef struct {
	GsMetrics metrics;
	GsPriority priority;       /* cached rank ... */
	guint64 priority_valid;    /* ... valid while this is the priorities' generation + 1 */
	GsTime block_start;
	GsTime retry_start_or_block_end;
	GsTime retry_running_ns;
} Accounts;

typedef struct Record Record;

struct Record {
	GsThreadView view; /* first: the deadlock check reads records as views */
	guint index;       /* position in GsEngine.records */
	guint pool_index;  /* position in GsEngine.pool_records (pool threads) */
	guint blocked_pos; /* position in its kind's BlockedHeap while BLOCKED */
	guint alloc_pos;   /* position in its kind's GsEngine.allocating while in THREAD_ALLOC */
	guint cap_count;   /* num_times_retried: state-machine throws, never reset */
	guint pending : 2; /* PendingCall */
	guint waiting : 1; /* a WAIT was returned and the thread has not resumed */
	guint retry_alloc_before_bufn : 1;
	guint in_retry_block : 1;
	guint in_spill_range : 1;
	guint finished : 1; /* its work is over: no call of its will come */
	Injections *injections;    /* NULL until armed */
	Record *task_next;         /* the task's next dedicated record */
	Accounts *acc;             /* NULL until needed: accounts() */
};

/* A BLOCKED record and its rank, side by side so that sifting reads no record. */
typedef struct {
	GsPriority rank;
	Record *rec;
} BlockedSlot;

/* The records in THREAD_ALLOC of one kind, in no order. */
typedef struct {
	Record **recs;
	guint len, cap;
} RecordSet;

/* The BLOCKED records of one kind: a binary max-heap by cached rank. */
typedef struct {
	BlockedSlot *slots;
	guint len, cap;
	guint64 valid; /* the ranks hold while this is the priorities' generation + 1 */
} BlockedHeap;

struct GsEngine {
	GsEngineOpts opts;
	GsDeadlockOpts deadlock_opts;
	GsTaskPriorities *priorities;
	GsIdTable by_id;          /* GsThreadId -> Record* */
	GPtrArray *records;       /* Record*, in slabs */
	GPtrArray *slabs;         /* RECORDS_PER_SLAB records each, owned */
	guint slab_used;          /* records carved from the last slab */
	Record *spare;            /* released records, linked by task_next */
	GsIdTable dedicated;      /* GsTaskId -> its first dedicated Record* (the rest follow task_next) */
	guint n_dedicated_tasks;  /* entries in dedicated */
	BlockedHeap blocked[GS_N_KINDS];
	RecordSet allocating[GS_N_KINDS]; /* the records in THREAD_ALLOC, by kind */
	GPtrArray *told_freed;    /* scratch: the records a free tells, in record order */
	GPtrArray *pool_records;  /* the pool threads' Record*, in no meaningful order */
	GArray *wakes;            /* GsThreadId, a FIFO from wake_head */
	guint wake_head;
	GHashTable *task_metrics; /* GsTaskId* -> GsMetrics* (checkpoints) */
	GsDeadlockScratch *scratch;
	guint counts[GS_N_THREAD_STATES][GS_N_KINDS];
	guint n_pool_blocked;     /* dedicated threads marked pool_blocked */
	gint64 gpu_allocated;
	gboolean shut_down;
	guint64 n_checks;
	guint64 n_deadlocks;
	guint64 n_busts;
	const GsEngineObserver *observer;
	gpointer observer_data;
	GsEngineChooseFunc choose; /* NULL: wake-ups take the engine's own order */
	gpointer choose_data;
	GPtrArray *alike;         /* scratch: the BLOCKED records that rank as the best */
};

static const char *const error_messages[] = {
#define GS_X_ROW(suffix, text) [GS_ENGINE_ERROR_##suffix] = text,
	GS_ENGINE_ERROR_MAP(GS_X_ROW)
#undef GS_X_ROW
};

G_STATIC_ASSERT(G_N_ELEMENTS(error_messages) == GS_N_ENGINE_ERRORS);

const char *
gs_engine_error_message(GsEngineError error)
{
	g_return_val_if_fail(error < GS_N_ENGINE_ERRORS, "invalid error code");
	return error_messages[error];
}

/* ---- decisions ---- */

static GsDecision
proceed(void)
{
	return (GsDecision){.verdict = GS_VERDICT_PROCEED};
}

static GsDecision
verdict(GsVerdict v)
{
	return (GsDecision){.verdict = v};
}

static GsDecision
thrown(GsException exc)
{
	return (GsDecision){.verdict = GS_VERDICT_THROW, .exception = exc};
}

static GsDecision
misuse(GsEngineError error)
{
	return (GsDecision){.verdict = GS_VERDICT_ERROR, .error = error};
}

/* ---- id tables (of Record pointers) ---- */

static Record *
record_at(const GsIdTable *t, guint64 id)
{
	Record **slot = gs_id_table_lookup(t, id);

	return slot != NULL ? *slot : NULL;
}

static void
record_put(GsIdTable *t, guint64 id, Record *rec)
{
	*(Record **) gs_id_table_insert(t, id) = rec;
}

/* ---- lifetime ---- */

static Accounts *
accounts(Record *rec)
{
	if (rec->acc == NULL)
		rec->acc = g_new0(Accounts, 1);
	return rec->acc;
}

static const GsMetrics *
metrics_of(const Record *rec)
{
	static const GsMetrics none;

	return rec->acc != NULL ? &rec->acc->metrics : &none;
}

/*
 * Records are carved from slabs and recycled through a free list: one
 * allocation per RECORDS_PER_SLAB threads instead of one per thread, with no
 * allocator header each. The slabs go back when the engine does.
 */
#define RECORDS_PER_SLAB 256

static Record *
record_alloc(GsEngine *e)
{
	Record *rec = e->spare;

	if (rec != NULL) {
		e->spare = rec->task_next;
		rec->task_next = NULL;
		return rec;
	}
	if (e->slabs->len == 0 || e->slab_used == RECORDS_PER_SLAB) {
		g_ptr_array_add(e->slabs, g_new0(Record, RECORDS_PER_SLAB));
		e->slab_used = 0;
	}
	return (Record *) e->slabs->pdata[e->slabs->len - 1] + e->slab_used++;
}

/* Frees what @rec holds and puts it on the free list for the next record_alloc(). */
static void
record_release(GsEngine *e, Record *rec)
{
	if (rec->view.pool_tasks != NULL)
		g_array_unref(rec->view.pool_tasks);
	g_free(rec->injections);
	g_free(rec->acc);
	memset(rec, 0, sizeof *rec);
	rec->task_next = e->spare;
	e->spare = rec;
}

GsEngine *
gs_engine_new(const GsEngineOpts *opts)
{
	static const GsEngineOpts defaults = GS_ENGINE_OPTS_DEFAULT;
	GsEngine *e = g_new0(GsEngine, 1);

	e->opts = opts != NULL ? *opts : defaults;
	gs_id_table_init(&e->by_id, sizeof(Record *));
	gs_id_table_init(&e->dedicated, sizeof(Record *));
	e->deadlock_opts = (GsDeadlockOpts){
		.split_victim = e->opts.split_victim,
		.retry_before_bufn = e->opts.retry_before_bufn,
		.strict_all_bufn = e->opts.strict_all_bufn,
		.pool_priority = e->opts.pool_priority,
	};
	e->priorities = gs_task_priorities_new(e->opts.priority);
	e->records = g_ptr_array_new();
	e->slabs = g_ptr_array_new_with_free_func(g_free);
	e->pool_records = g_ptr_array_new();
	e->told_freed = g_ptr_array_new();
	e->wakes = g_array_new(FALSE, FALSE, sizeof(GsThreadId));
	e->task_metrics = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	e->scratch = gs_deadlock_scratch_new();
	return e;
}

void
gs_engine_free(GsEngine *e)
{
	if (e == NULL)
		return;
	gs_id_table_clear(&e->by_id);
	gs_id_table_clear(&e->dedicated);
	for (guint k = 0; k < GS_N_KINDS; k++) {
		g_free(e->blocked[k].slots);
		g_free(e->allocating[k].recs);
	}
	g_ptr_array_unref(e->told_freed);
	g_ptr_array_unref(e->pool_records);
	for (guint i = 0; i < e->records->len; i++)
		record_release(e, e->records->pdata[i]);
	g_ptr_array_unref(e->records);
	g_ptr_array_unref(e->slabs);
	g_array_unref(e->wakes);
	if (e->alike != NULL)
		g_ptr_array_unref(e->alike);
	g_hash_table_destroy(e->task_metrics);
	gs_deadlock_scratch_free(e->scratch);
	gs_task_priorities_free(e->priorities);
	g_free(e);
}

const GsEngineOpts *
gs_engine_get_opts(const GsEngine *e)
{
	return &e->opts;
}

void
gs_engine_set_observer(GsEngine *e, const GsEngineObserver *observer, gpointer data)
{
	g_return_if_fail(observer == NULL || observer->api_version == 1);
	e->observer = observer;
	e->observer_data = data;
}

void
gs_engine_set_chooser(GsEngine *e, GsEngineChooseFunc choose, gpointer data)
{
	e->choose = choose;
	e->choose_data = data;
	if (e->alike == NULL)
		e->alike = g_ptr_array_new();
}

GsTaskPriorities *
gs_engine_get_priorities(GsEngine *e)
{
	return e->priorities;
}

/* ---- records and state changes ---- */

static Record *
lookup(const GsEngine *e, GsThreadId id)
{
	return record_at(&e->by_id, id);
}

static GsPriority priority_of(GsEngine *e, const Record *rec);
static void blocked_add(GsEngine *e, Record *rec);
static void blocked_remove(GsEngine *e, Record *rec);

static void
queue_wake(GsEngine *e, GsThreadId id)
{
	g_array_append_val(e->wakes, id);
}

static void
tell_state(GsEngine *e, GsThreadId id, GsThreadState from, GsThreadState to, GsThreadEvent cause,
	   GsTime now)
{
	if (e->observer != NULL && e->observer->state_changed != NULL)
		e->observer->state_changed(e->observer_data, id, from, to, cause, now);
}

static void
tell_throw(GsEngine *e, GsThreadId id, GsException exc, gboolean injected, GsTime now)
{
	if (e->observer != NULL && e->observer->thrown != NULL)
		e->observer->thrown(e->observer_data, id, exc, injected, now);
}

/* Moves a record to another state (and allocation kind), keeping the counts. */
/*
 * The records in THREAD_ALLOC, by kind: a free tells each of them, and with
 * thousands of threads paying an allocation's latency at once, finding them
 * by a scan of every record made each free cost as much as the records.
 */
static inline void
allocating_add(GsEngine *e, Record *rec)
{
	RecordSet *set = &e->allocating[rec->view.alloc_kind];

	if (G_UNLIKELY(set->len == set->cap)) {
		set->cap = MAX(16, 2 * set->cap);
		set->recs = g_renew(Record *, set->recs, set->cap);
	}
	rec->alloc_pos = set->len;
	set->recs[set->len++] = rec;
}

static inline void
allocating_remove(GsEngine *e, Record *rec)
{
	RecordSet *set = &e->allocating[rec->view.alloc_kind];
	Record *last = set->recs[--set->len];

	set->recs[rec->alloc_pos] = last;
	last->alloc_pos = rec->alloc_pos;
}

static void
set_state_kind(GsEngine *e, Record *rec, GsThreadState to, GsAllocKind kind, GsThreadEvent cause,
	       GsTime now)
{
	GsThreadState from = rec->view.state;

	g_assert(to != GS_THREAD_UNKNOWN);
	if (from == GS_THREAD_BLOCKED)
		blocked_remove(e, rec);
	else if (from == GS_THREAD_ALLOC)
		allocating_remove(e, rec);
	e->counts[from][rec->view.alloc_kind]--;
	rec->view.state = to;
	rec->view.alloc_kind = kind;
	e->counts[to][kind]++;
	if (to == GS_THREAD_BLOCKED)
		blocked_add(e, rec);
	else if (to == GS_THREAD_ALLOC)
		allocating_add(e, rec);
	if (from != to)
		tell_state(e, rec->view.id, from, to, cause, now);
	/* A parked thread whose state no longer parks it must look again, once. */
	if (rec->waiting && gs_thread_state_waits(from) && !gs_thread_state_waits(to))
		queue_wake(e, rec->view.id);
}

static void
set_state(GsEngine *e, Record *rec, GsThreadState to, GsThreadEvent cause, GsTime now)
{
	set_state_kind(e, rec, to, rec->view.alloc_kind, cause, now);
}

/* Applies @event by the transition table; INVALID and SHUTTING_DOWN change nothing. */
static GsTransition
apply(GsEngine *e, Record *rec, GsThreadEvent event, GsTime now)
{
	GsTransition t = gs_thread_transition(rec->view.state, event);

	if (t.action == GS_ACTION_INVALID || t.action == GS_ACTION_SHUTTING_DOWN)
		return t;
	if (t.to != GS_THREAD_UNKNOWN)
		set_state(e, rec, t.to, event, now);
	return t;
}

/* The first of a task's dedicated records (follow task_next), so that task-wide calls need not scan. */
static Record *
dedicated_of(const GsEngine *e, GsTaskId task)
{
	return task >= 0 ? record_at(&e->dedicated, task) : NULL;
}

/* A task has few threads: appending and unlinking walk its list. */
static void
index_record(GsEngine *e, Record *rec)
{
	Record *last;

	if (rec->view.is_pool) {
		rec->pool_index = e->pool_records->len;
		g_ptr_array_add(e->pool_records, rec);
		return;
	}
	last = dedicated_of(e, rec->view.task);
	if (last == NULL) {
		record_put(&e->dedicated, rec->view.task, rec);
		e->n_dedicated_tasks++;
		return;
	}
	while (last->task_next != NULL)
		last = last->task_next;
	last->task_next = rec;
}

static void
unindex_record(GsEngine *e, Record *rec)
{
	Record *prev = NULL;

	if (rec->view.is_pool) {
		g_ptr_array_remove_index_fast(e->pool_records, rec->pool_index);
		if (rec->pool_index < e->pool_records->len)
			((Record *) e->pool_records->pdata[rec->pool_index])->pool_index = rec->pool_index;
		return;
	}
	for (Record *r = dedicated_of(e, rec->view.task); r != rec; r = r->task_next)
		prev = r;
	if (prev != NULL) {
		prev->task_next = rec->task_next;
	} else if (rec->task_next != NULL) {
		record_put(&e->dedicated, rec->view.task, rec->task_next);
	} else {
		gs_id_table_remove(&e->dedicated, rec->view.task);
		e->n_dedicated_tasks--;
	}
	rec->task_next = NULL;
}

static Record *
record_new(GsEngine *e, GsThreadId id, GsTaskId task, gboolean is_pool, gboolean shuffle, GsTime now)
{
	Record *rec = record_alloc(e);

	rec->view.id = id;
	rec->view.task = is_pool ? GS_NO_TASK : task;
	rec->view.state = GS_THREAD_RUNNING;
	rec->view.alloc_kind = GS_KIND_GPU;
	rec->view.is_pool = is_pool;
	rec->view.shuffle = shuffle;
	if (is_pool)
		rec->view.pool_tasks = g_array_new(FALSE, FALSE, sizeof(GsTaskId));
	rec->index = e->records->len;
	g_ptr_array_add(e->records, rec);
	record_put(&e->by_id, id, rec);
	index_record(e, rec);
	e->counts[GS_THREAD_RUNNING][GS_KIND_GPU]++;
	tell_state(e, id, GS_THREAD_UNKNOWN, GS_THREAD_RUNNING, GS_EVENT_REGISTER, now);
	return rec;
}

static GsMetrics *
task_checkpoint(GsEngine *e, GsTaskId task)
{
	GsMetrics *m = g_hash_table_lookup(e->task_metrics, &task);

	if (m == NULL) {
		m = g_new0(GsMetrics, 1);
		g_hash_table_insert(e->task_metrics, g_memdup2(&task, sizeof task), m);
	}
	return m;
}

/*
 * Moves a thread's counters into its task (dedicated) or into every task of its
 * set (pool, duplicated), as the reference does when an association changes.
 * What the thread still holds stays with it.
 */
static void
checkpoint(GsEngine *e, Record *rec)
{
	GsMetrics *m = rec->acc != NULL ? &rec->acc->metrics : NULL;
	gint64 active;

	if (m == NULL)
		return; /* nothing counted: a task without a checkpoint reads as zeros */
	active = m->gpu_active_footprint;
	if (!rec->view.is_pool) {
		gs_metrics_checkpoint(task_checkpoint(e, rec->view.task), m);
	} else {
		for (guint i = 0; i < rec->view.pool_tasks->len; i++) {
			GsTaskId task = g_array_index(rec->view.pool_tasks, GsTaskId, i);

			gs_metrics_checkpoint(task_checkpoint(e, task), m);
		}
	}
	gs_metrics_clear(m);
	m->gpu_active_footprint = active;
}

/* Deletes a record (its counters go to its task first). */
static void
erase(GsEngine *e, Record *rec, GsThreadEvent cause, GsTime now)
{
	GsThreadId id = rec->view.id;
	GsThreadState from = rec->view.state;
	guint index = rec->index;

	checkpoint(e, rec);
	if (from == GS_THREAD_BLOCKED)
		blocked_remove(e, rec);
	else if (from == GS_THREAD_ALLOC)
		allocating_remove(e, rec);
	e->counts[from][rec->view.alloc_kind]--;
	e->n_pool_blocked -= rec->view.pool_blocked;
	unindex_record(e, rec);
	gs_id_table_remove(&e->by_id, id);
	g_ptr_array_remove_index_fast(e->records, index);
	if (index < e->records->len)
		((Record *) e->records->pdata[index])->index = index;
	record_release(e, rec);
	tell_state(e, id, from, GS_THREAD_UNKNOWN, cause, now);
}

/* ---- priority ---- */

/*
 * A thread's rank, cached in its record: the choices on frees, successes and
 * deadlocks look at many records, and a rank changes only when a task's
 * priority is set or forgotten, or a pool thread's task set changes.
 */
static GsPriority
priority_of(GsEngine *e, const Record *rec)
{
	Accounts *cached = accounts((Record *) rec);
	guint64 generation = gs_task_priorities_generation(e->priorities) + 1;

	if (cached->priority_valid != generation) {
		cached->priority = gs_thread_priority(e->priorities, &rec->view, e->opts.pool_priority);
		cached->priority_valid = generation;
	}
	return cached->priority;
}

static int
compare_priority_desc(gconstpointer a, gconstpointer b, gpointer engine)
{
	const Record *ra = *(Record *const *) a;
	const Record *rb = *(Record *const *) b;

	return gs_priority_compare(priority_of(engine, rb), priority_of(engine, ra));
}

/* The records in @state (any kind), highest priority first. */
static GPtrArray *
records_in_states(GsEngine *e, GsThreadState a, GsThreadState b, GsThreadState c)
{
	GPtrArray *found = g_ptr_array_new();

	for (guint i = 0; i < e->records->len; i++) {
		Record *rec = e->records->pdata[i];
		GsThreadState s = rec->view.state;

		if (s == a || s == b || s == c)
			g_ptr_array_add(found, rec);
	}
	g_ptr_array_sort_with_data(found, compare_priority_desc, e);
	return found;
}

/* ---- the heaps of BLOCKED records ---- */

/*
 * Ranks are read from the records' caches, which priority_of() filled. The
 * heap's order holds while the priorities' generation stays the one it was
 * built under and no pool thread in it changed its task set; otherwise it is
 * marked stale and rebuilt by the next wake-one.
 */
static gboolean
ranks_above(const BlockedSlot *a, const BlockedSlot *b)
{
	return gs_priority_compare(a->rank, b->rank) > 0;
}

static void
blocked_place(BlockedHeap *h, BlockedSlot slot, guint i)
{
	h->slots[i] = slot;
	slot.rec->blocked_pos = i;
}

static void
blocked_sift_up(BlockedHeap *h, guint i)
{
	BlockedSlot slot = h->slots[i];

	while (i > 0 && ranks_above(&slot, &h->slots[(i - 1) / 2])) {
		blocked_place(h, h->slots[(i - 1) / 2], i);
		i = (i - 1) / 2;
	}
	blocked_place(h, slot, i);
}

static void
blocked_sift_down(BlockedHeap *h, guint i)
{
	BlockedSlot slot = h->slots[i];

	for (;;) {
		guint child = 2 * i + 1;

		if (child >= h->len)
			break;
		if (child + 1 < h->len && ranks_above(&h->slots[child + 1], &h->slots[child]))
			child++;
		if (!ranks_above(&h->slots[child], &slot))
			break;
		blocked_place(h, h->slots[child], i);
		i = child;
	}
	blocked_place(h, slot, i);
}

static guint64
rank_generation(const GsEngine *e)
{
	return gs_task_priorities_generation(e->priorities) + 1;
}

/*
 * Whether the record's rank can be worked out now with no side effect: asking
 * for the rank of a task without a slot gives it a FIFO slot, and the order in
 * which tasks get slots must stay the one the scan in wake_one() would give.
 */
static gboolean
rank_is_pure(const GsEngine *e, const Record *rec)
{
	const GArray *tasks = rec->view.pool_tasks;

	if (rec->acc != NULL && rec->acc->priority_valid == rank_generation(e))
		return TRUE; /* cached: nothing to ask */
	if (gs_task_priorities_get_mode(e->priorities) == GS_PRIORITY_TASK_ID || rec->view.shuffle)
		return TRUE;
	if (!rec->view.is_pool)
		return rec->view.task < 0 || gs_task_priorities_has(e->priorities, rec->view.task);
	for (guint i = 0; tasks != NULL && i < tasks->len; i++) {
		if (!gs_task_priorities_has(e->priorities, g_array_index(tasks, GsTaskId, i)))
			return FALSE;
	}
	return TRUE;
}

static void
blocked_add(GsEngine *e, Record *rec)
{
	BlockedHeap *h = &e->blocked[rec->view.alloc_kind];

	if (h->len == h->cap) {
		h->cap = MAX(16, 2 * h->cap);
		h->slots = g_renew(BlockedSlot, h->slots, h->cap);
	}
	blocked_place(h, (BlockedSlot){.rec = rec}, h->len++);
	if (h->valid != rank_generation(e) || !rank_is_pure(e, rec)) {
		h->valid = 0;
		return;
	}
	h->slots[rec->blocked_pos].rank = priority_of(e, rec);
	blocked_sift_up(h, rec->blocked_pos);
}

static void
blocked_remove(GsEngine *e, Record *rec)
{
	BlockedHeap *h = &e->blocked[rec->view.alloc_kind];
	guint i = rec->blocked_pos;
	BlockedSlot last = h->slots[--h->len];

	if (i == h->len)
		return;
	blocked_place(h, last, i);
	if (h->valid != rank_generation(e)) {
		h->valid = 0;
		return;
	}
	blocked_sift_up(h, i);
	blocked_sift_down(h, last.rec->blocked_pos);
}

/* A BLOCKED pool thread's rank changes with its task set: its heap must be rebuilt. */
static void
rank_changed(GsEngine *e, Record *rec)
{
	if (rec->acc != NULL)
		rec->acc->priority_valid = 0;
	if (rec->view.state == GS_THREAD_BLOCKED)
		e->blocked[rec->view.alloc_kind].valid = 0;
}

/*
 * Ranks every BLOCKED record of @kind again and restores the heap. The ranks
 * are asked for in the order of the record array, as a scan of the records
 * would, so that tasks still without a slot get them in that order.
 */
static void
blocked_rebuild(GsEngine *e, GsAllocKind kind)
{
	BlockedHeap *h = &e->blocked[kind];

	for (guint i = 0; i < e->records->len; i++) {
		Record *rec = e->records->pdata[i];

		if (rec->view.state == GS_THREAD_BLOCKED && rec->view.alloc_kind == kind)
			h->slots[rec->blocked_pos].rank = priority_of(e, rec);
	}
	for (guint i = h->len / 2; i-- > 0;)
		blocked_sift_down(h, i);
	h->valid = rank_generation(e);
}

/* ---- wake-ups ---- */

/*
 * The slots of @h from @i down whose task rank is the root's, added to
 * @alike. Such a slot's parents rank at least as high as it and at most as
 * the root, so they share that task rank too: the walk stops at the first
 * slot of a lower one.
 */
static void
collect_alike(const BlockedHeap *h, guint i, GPtrArray *alike)
{
	if (i >= h->len || h->slots[i].rank.task != h->slots[0].rank.task)
		return;
	g_ptr_array_add(alike, h->slots[i].rec);
	collect_alike(h, 2 * i + 1, alike);
	collect_alike(h, 2 * i + 2, alike);
}

/* The BLOCKED record of @h a wake-one wakes: the best, or the chooser's pick among those alike. */
static Record *
chosen_to_wake(GsEngine *e, const BlockedHeap *h)
{
	guint k;

	if (e->choose == NULL || h->len < 2)
		return h->slots[0].rec;
	g_ptr_array_set_size(e->alike, 0);
	collect_alike(h, 0, e->alike);
	if (e->alike->len < 2)
		return h->slots[0].rec;
	g_ptr_array_sort_with_data(e->alike, compare_priority_desc, e);
	k = e->choose(e->alike->len, e->choose_data);
	return e->alike->pdata[k < e->alike->len ? k : 0];
}

/* On a free or an allocation success: the best BLOCKED thread of @kind runs again. */
static void
wake_one(GsEngine *e, GsAllocKind kind, GsTime now)
{
	BlockedHeap *h = &e->blocked[kind];

	if (h->len == 0)
		return;
	if (h->valid != rank_generation(e))
		blocked_rebuild(e, kind);
	apply(e, chosen_to_wake(e, h), GS_EVENT_WAKE_ONE, now);
}

/*
 * A running thread left: every BLOCKED thread runs again; only if there was
 * none, every rolled-back thread (BUFN, BUFN_THROW, BUFN_WAIT) does.
 */
static void
task_finished_wake(GsEngine *e, GsTime now)
{
	g_autoptr(GPtrArray) found = NULL;
	GsThreadEvent event = GS_EVENT_WAKE_BLOCKED;

	if (gs_engine_n_in_state(e, GS_THREAD_BLOCKED) + gs_engine_n_in_state(e, GS_THREAD_BUFN) +
		    gs_engine_n_in_state(e, GS_THREAD_BUFN_THROW) +
		    gs_engine_n_in_state(e, GS_THREAD_BUFN_WAIT) ==
	    0)
		return;
	if (e->counts[GS_THREAD_BLOCKED][GS_KIND_GPU] + e->counts[GS_THREAD_BLOCKED][GS_KIND_HOST] > 0) {
		found = records_in_states(e, GS_THREAD_BLOCKED, GS_THREAD_BLOCKED, GS_THREAD_BLOCKED);
	} else {
		found = records_in_states(e, GS_THREAD_BUFN, GS_THREAD_BUFN_THROW, GS_THREAD_BUFN_WAIT);
		event = GS_EVENT_WAKE_BUFN;
	}
	for (guint i = 0; i < found->len; i++)
		apply(e, found->pdata[i], event, now);
}

gboolean
gs_engine_pop_wake(GsEngine *e, GsThreadId *thread)
{
	if (e->wake_head >= e->wakes->len)
		return FALSE;
	*thread = g_array_index(e->wakes, GsThreadId, e->wake_head++);
	if (e->wake_head == e->wakes->len) {
		g_array_set_size(e->wakes, 0);
		e->wake_head = 0;
	}
	return TRUE;
}

guint
gs_engine_pending_wakes(const GsEngine *e)
{
	return e->wakes->len - e->wake_head;
}

/* ---- deadlock busting ---- */

static void
tell_bust(GsEngine *e, const Record *rec, GsBustAction action, GsCheckReason reason, GsTime now)
{
	e->n_busts++;
	if (e->observer != NULL && e->observer->busted != NULL)
		e->observer->busted(e->observer_data, rec->view.id, action, reason, now);
}

/*
 * A blocked task needs a thread of its own that is BLOCKED or counts as
 * BUFN-or-above: with fewer such threads than tasks, no deadlock is possible,
 * and the full check (which builds task sets) can be skipped. This keeps the
 * check after every failed allocation cheap while most tasks run.
 */
static gboolean
deadlock_impossible(const GsEngine *e, guint n_outside)
{
	guint candidates = gs_engine_n_in_state(e, GS_THREAD_BLOCKED) +
			   gs_engine_n_in_state(e, GS_THREAD_BUFN) + e->n_pool_blocked + n_outside;

	return candidates < e->n_dedicated_tasks;
}

static gboolean
run_check(GsEngine *e, GsCheckReason reason, const GsThreadId *outside, guint n_outside, GsTime now)
{
	GsDeadlockVerdict v;

	e->n_checks++;
	if (deadlock_impossible(e, n_outside))
		return FALSE;
	v = gs_deadlock_check((const GsThreadView *const *) e->records->pdata, e->records->len,
			      e->priorities, &e->deadlock_opts, outside, n_outside, e->scratch);
	if (!v.deadlocked)
		return FALSE;
	e->n_deadlocks++;
	if (!e->opts.bust_deadlocks)
		return TRUE;
	if (v.rollback != NULL) {
		Record *victim = (Record *) v.rollback;

		if (v.rollback_retry_once) {
			victim->retry_alloc_before_bufn = TRUE;
			apply(e, victim, GS_EVENT_BUST_RETRY_ONCE, now);
			tell_bust(e, victim, GS_BUST_RETRY_ONCE, reason, now);
		} else {
			apply(e, victim, GS_EVENT_BUST_ROLLBACK, now);
			tell_bust(e, victim, GS_BUST_ROLLBACK, reason, now);
		}
	}
	if (v.split != NULL) {
		Record *victim = (Record *) v.split;

		apply(e, victim, GS_EVENT_SPLIT_PICK, now);
		tell_bust(e, victim, GS_BUST_SPLIT, reason, now);
	}
	return TRUE;
}

static int
compare_thread_id(const void *a, const void *b)
{
	GsThreadId x = *(const GsThreadId *) a, y = *(const GsThreadId *) b;

	return x < y ? -1 : x > y;
}

gboolean
gs_engine_check_deadlocks(GsEngine *e, const GsThreadId *outside, guint n_outside, GsTime now)
{
	g_autofree GsThreadId *sorted = NULL;

	if (n_outside > 0) {
		sorted = g_memdup2(outside, n_outside * sizeof *outside);
		qsort(sorted, n_outside, sizeof *sorted, compare_thread_id);
	}
	return run_check(e, GS_CHECK_WATCHDOG, sorted, n_outside, now);
}

/* ---- time accounting (reference §3.1) ---- */

static void
begin_wait(Record *rec, PendingCall pending, GsTime now)
{
	Accounts *acc = accounts(rec);

	rec->waiting = TRUE;
	rec->pending = pending;
	acc->block_start = now;
	if (rec->in_retry_block)
		acc->retry_running_ns += now - acc->retry_start_or_block_end;
}

static void
end_wait(Record *rec, GsTime now)
{
	Accounts *acc = accounts(rec);
	GsTime blocked = now - acc->block_start;

	rec->waiting = FALSE;
	rec->pending = PENDING_NONE;
	acc->metrics.blocked_ns = gs_time_add(acc->metrics.blocked_ns, blocked);
	acc->metrics.lost_or_blocked_ns = gs_time_add(acc->metrics.lost_or_blocked_ns, blocked);
	if (rec->in_retry_block)
		acc->retry_start_or_block_end = now;
}

/* A retry-type exception throws away the running time of the attempt. */
static void
record_lost_time(GsEngine *e, Record *rec, GsTime now)
{
	Accounts *acc = accounts(rec);

	if (rec->in_retry_block) {
		acc->retry_running_ns += now - acc->retry_start_or_block_end;
		acc->retry_start_or_block_end = now;
	}
	if (acc->retry_running_ns > 0 && e->observer != NULL && e->observer->lost != NULL)
		e->observer->lost(e->observer_data, rec->view.id, acc->retry_running_ns, now);
	acc->metrics.lost_ns = gs_time_add(acc->metrics.lost_ns, acc->retry_running_ns);
	acc->metrics.lost_or_blocked_ns =
		gs_time_add(acc->metrics.lost_or_blocked_ns, acc->retry_running_ns);
	acc->retry_running_ns = 0;
}

/* A Retry or SplitAndRetry decided by the state machine, subject to the cap. */
static GsDecision
throw_decided(GsEngine *e, Record *rec, gboolean split, GsTime now)
{
	GsException exc;

	record_lost_time(e, rec, now);
	if (split)
		accounts(rec)->metrics.splits++;
	else
		accounts(rec)->metrics.retries++;
	if (rec->cap_count + 1 > e->opts.retry_cap) {
		exc = GS_EXC_RETRY_LIMIT_EXCEEDED;
	} else {
		rec->cap_count++;
		exc = split ? gs_exception_split_oom(rec->view.alloc_kind)
			    : gs_exception_retry_oom(rec->view.alloc_kind);
	}
	tell_throw(e, rec->view.id, exc, FALSE, now);
	return thrown(exc);
}

/* ---- block until ready (reference §1.5) ---- */

static GsDecision
block_until_ready(GsEngine *e, GsThreadId id, PendingCall pending, GsTime now)
{
	for (;;) {
		Record *rec = lookup(e, id);
		GsTransition t;

		if (rec == NULL)
			return proceed();
		if (rec->waiting) {
			if (gs_thread_state_waits(rec->view.state))
				return verdict(GS_VERDICT_WAIT); /* resumed too early */
			end_wait(rec, now);
		}
		t = apply(e, rec, GS_EVENT_BLOCK_UNTIL_READY, now);
		switch (t.action) {
		case GS_ACTION_PROCEED:
			return proceed();
		case GS_ACTION_WAIT:
			begin_wait(rec, pending, now);
			return verdict(GS_VERDICT_WAIT);
		case GS_ACTION_THROW_RETRY:
			return throw_decided(e, rec, FALSE, now);
		case GS_ACTION_THROW_SPLIT:
			return throw_decided(e, rec, TRUE, now);
		case GS_ACTION_CHECK_DEADLOCK:
			run_check(e, GS_CHECK_BUFN_WAIT, NULL, 0, now);
			continue;
		case GS_ACTION_THROW_REMOVED:
			erase(e, rec, GS_EVENT_BLOCK_UNTIL_READY, now);
			tell_throw(e, id, GS_EXC_THREAD_REMOVED, FALSE, now);
			return thrown(GS_EXC_THREAD_REMOVED);
		case GS_ACTION_NONE:
		case GS_ACTION_CREATE:
		case GS_ACTION_RECURSIVE:
		case GS_ACTION_WAKE_ONE:
		case GS_ACTION_NOTIFY:
		case GS_ACTION_ERASE:
		case GS_ACTION_ERASE_AND_WAKE:
		case GS_ACTION_RETHROW:
		case GS_ACTION_SHUTTING_DOWN:
		case GS_ACTION_INVALID:
		case GS_N_THREAD_ACTIONS:
			break;
		}
		return misuse(GS_ENGINE_ERROR_UNEXPECTED_STATE);
	}
}

GsDecision
gs_engine_block_until_ready(GsEngine *e, GsThreadId thread, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (rec != NULL && rec->waiting && rec->pending != PENDING_BLOCK)
		return misuse(GS_ENGINE_ERROR_UNEXPECTED_STATE);
	return block_until_ready(e, thread, PENDING_BLOCK, now);
}

/* ---- injection (reference §3.2) ---- */

static gboolean
filter_matches(GsKindFilter filter, GsAllocKind kind)
{
	return filter == GS_KIND_FILTER_ANY || (filter == GS_KIND_FILTER_GPU) == (kind == GS_KIND_GPU);
}

/* Consumes a skip or a hit of a matching allocation; TRUE if it must throw. */
static gboolean
injection_fires(Injection *inj, GsAllocKind kind)
{
	if (!filter_matches(inj->filter, kind))
		return FALSE;
	if (inj->skips > 0) {
		inj->skips--;
		return FALSE;
	}
	if (inj->hits > 0) {
		inj->hits--;
		return TRUE;
	}
	return FALSE;
}

/* Order: RetryOOM, CudfException, SplitAndRetryOOM. None changes the state. */
static GsException
injected_exception(GsEngine *e, Record *rec, GsAllocKind kind, GsTime now)
{
	Injections *inj = rec->injections;
	GsException exc = GS_EXC_NONE;

	if (inj == NULL)
		return GS_EXC_NONE;
	if (injection_fires(&inj->retry_oom, kind)) {
		accounts(rec)->metrics.retries++;
		exc = gs_exception_retry_oom(kind);
	} else if (inj->cudf_exceptions > 0) {
		inj->cudf_exceptions--;
		exc = GS_EXC_CUDF_EXCEPTION;
	} else if (injection_fires(&inj->split_oom, kind)) {
		accounts(rec)->metrics.splits++;
		exc = gs_exception_split_oom(kind);
	}
	if (exc != GS_EXC_NONE)
		record_lost_time(e, rec, now);
	return exc;
}

static GsEngineError
arm(GsEngine *e, GsThreadId thread, Injection *inj_of_record(Record *), int num,
    GsKindFilter filter, int skip)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return GS_ENGINE_ERROR_NOT_REGISTERED;
	if (num < 0 || skip < 0)
		return GS_ENGINE_ERROR_NEGATIVE_COUNT;
	*inj_of_record(rec) = (Injection){.hits = num, .skips = skip, .filter = filter};
	return GS_ENGINE_ERROR_NONE;
}

static Injections *
injections_of(Record *rec)
{
	if (rec->injections == NULL)
		rec->injections = g_new0(Injections, 1);
	return rec->injections;
}

static Injection *
retry_injection(Record *rec)
{
	return &injections_of(rec)->retry_oom;
}

static Injection *
split_injection(Record *rec)
{
	return &injections_of(rec)->split_oom;
}

GsEngineError
gs_engine_force_retry_oom(GsEngine *e, GsThreadId thread, int num, GsKindFilter filter, int skip)
{
	return arm(e, thread, retry_injection, num, filter, skip);
}

GsEngineError
gs_engine_force_split_oom(GsEngine *e, GsThreadId thread, int num, GsKindFilter filter, int skip)
{
	return arm(e, thread, split_injection, num, filter, skip);
}

GsEngineError
gs_engine_force_cudf_exception(GsEngine *e, GsThreadId thread, int num)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return GS_ENGINE_ERROR_NOT_REGISTERED;
	if (num < 0)
		return GS_ENGINE_ERROR_NEGATIVE_COUNT;
	injections_of(rec)->cudf_exceptions = num;
	return GS_ENGINE_ERROR_NONE;
}

/* ---- the allocation protocol (reference §1.4) ---- */

GsDecision
gs_engine_alloc_begin(GsEngine *e, GsThreadId thread, GsAllocKind kind, gboolean blocking, GsTime now)
{
	Record *rec = lookup(e, thread);
	GsDecision d;
	GsException exc;

	if (rec == NULL)
		return proceed();
	if (rec->waiting) {
		/* Resuming the wait of an earlier call: recursion and injection were done. */
		if (rec->pending != PENDING_ALLOC)
			return misuse(GS_ENGINE_ERROR_UNEXPECTED_STATE);
	} else {
		if (rec->view.state == GS_THREAD_ALLOC || rec->view.state == GS_THREAD_ALLOC_FREE) {
			if (kind == GS_KIND_HOST && blocking)
				return misuse(GS_ENGINE_ERROR_RECURSIVE_BLOCKING_HOST);
			d = proceed();
			d.recursive = TRUE;
			return d;
		}
		exc = injected_exception(e, rec, kind, now);
		if (exc != GS_EXC_NONE) {
			tell_throw(e, thread, exc, TRUE, now);
			return thrown(exc);
		}
	}
	if (blocking) {
		d = block_until_ready(e, thread, PENDING_ALLOC, now);
		if (d.verdict != GS_VERDICT_PROCEED)
			return d;
		rec = lookup(e, thread);
		if (rec == NULL)
			return proceed();
	}
	if (gs_thread_transition(rec->view.state, GS_EVENT_ALLOC_START).action != GS_ACTION_PROCEED)
		return misuse(GS_ENGINE_ERROR_UNEXPECTED_STATE);
	set_state_kind(e, rec, GS_THREAD_ALLOC, kind, GS_EVENT_ALLOC_START, now);
	return proceed();
}

/* The post-calls of a registered, non-recursive thread must match its pre-call. */
static gboolean
post_matches(const Record *rec, GsAllocKind kind, GsEngineError *error)
{
	GsThreadState s = rec->view.state;

	if (s != GS_THREAD_ALLOC && s != GS_THREAD_ALLOC_FREE) {
		*error = GS_ENGINE_ERROR_UNEXPECTED_STATE;
		return FALSE;
	}
	if (rec->view.alloc_kind != kind) {
		*error = GS_ENGINE_ERROR_KIND_MISMATCH;
		return FALSE;
	}
	return TRUE;
}

GsDecision
gs_engine_alloc_success(GsEngine *e, GsThreadId thread, GsAllocKind kind, gint64 bytes,
			gboolean recursive, GsTime now)
{
	Record *rec = lookup(e, thread);
	gboolean tracked = rec != NULL && !recursive;
	GsEngineError error;

	if (tracked && !post_matches(rec, kind, &error))
		return misuse(error);
	if (kind == GS_KIND_GPU && (tracked || e->opts.gpu_counter == GS_GPU_COUNTER_EXACT))
		e->gpu_allocated += bytes;
	if (!tracked)
		return proceed();
	rec->retry_alloc_before_bufn = FALSE;
	/* is_cpu_alloc goes back to false on success, whatever the kind was. */
	set_state_kind(e, rec, GS_THREAD_RUNNING, GS_KIND_GPU, GS_EVENT_ALLOC_SUCCESS, now);
	if (kind == GS_KIND_GPU)
		gs_metrics_gpu_alloc(&accounts(rec)->metrics, bytes, e->gpu_allocated,
				     rec->in_spill_range);
	wake_one(e, kind, now);
	return proceed();
}

GsDecision
gs_engine_alloc_failed(GsEngine *e, GsThreadId thread, GsAllocKind kind, gboolean is_oom,
		       gboolean blocking, gboolean recursive, GsTime now)
{
	Record *rec = lookup(e, thread);
	GsDecision rethrow = {.verdict = GS_VERDICT_RETHROW};
	GsThreadEvent event;
	GsEngineError error;

	if (is_oom)
		rethrow.exception = gs_exception_fatal_oom(kind);
	if (rec == NULL || recursive) {
		if (is_oom)
			run_check(e, GS_CHECK_ALLOC_FAILED, NULL, 0, now);
		return rethrow;
	}
	if (!post_matches(rec, kind, &error))
		return misuse(error);
	if (!is_oom) {
		apply(e, rec, GS_EVENT_ALLOC_FAILED, now);
		rethrow.exception = GS_EXC_NONE;
		return rethrow;
	}
	if (!blocking)
		event = GS_EVENT_ALLOC_OOM_NONBLOCKING;
	else if (rec->retry_alloc_before_bufn)
		event = GS_EVENT_ALLOC_OOM_LAST_TRY;
	else
		event = GS_EVENT_ALLOC_OOM;
	/* The flag is spent by a blocking OOM in ALLOC; ALLOC_FREE just retries. */
	if (blocking && rec->view.state == GS_THREAD_ALLOC)
		rec->retry_alloc_before_bufn = FALSE;
	apply(e, rec, event, now);
	run_check(e, GS_CHECK_ALLOC_FAILED, NULL, 0, now);
	return verdict(GS_VERDICT_RETRY);
}

static int
compare_record_index(gconstpointer a, gconstpointer b)
{
	const Record *x = *(Record *const *) a, *y = *(Record *const *) b;

	return (x->index > y->index) - (x->index < y->index);
}

/* FREED_SAME_KIND to the records in THREAD_ALLOC of @kind but @rec, in record-array order. */
static void
tell_freed(GsEngine *e, const Record *rec, GsAllocKind kind, GsTime now)
{
	GPtrArray *told = e->told_freed;
	const RecordSet *set = &e->allocating[kind];

	g_ptr_array_set_size(told, 0);
	for (guint i = 0; i < set->len; i++) {
		if (set->recs[i] != rec)
			g_ptr_array_add(told, set->recs[i]);
	}
	/* The order a scan of the records gave, which the observer sees. */
	g_ptr_array_sort(told, compare_record_index);
	for (guint i = 0; i < told->len; i++)
		apply(e, told->pdata[i], GS_EVENT_FREED_SAME_KIND, now);
}

void
gs_engine_dealloc(GsEngine *e, GsThreadId thread, GsAllocKind kind, gint64 bytes, GsTime now)
{
	Record *rec = lookup(e, thread);
	guint own = 0;

	if (kind == GS_KIND_GPU) {
		if (rec != NULL || e->opts.gpu_counter == GS_GPU_COUNTER_EXACT)
			e->gpu_allocated -= bytes;
		if (rec != NULL)
			gs_metrics_gpu_free(&accounts(rec)->metrics, bytes, rec->in_spill_range);
	}
	/* Every other thread inside an allocation of this kind may retry at once. */
	if (rec != NULL && rec->view.state == GS_THREAD_ALLOC && rec->view.alloc_kind == kind)
		own = 1;
	if (e->counts[GS_THREAD_ALLOC][kind] > own)
		tell_freed(e, rec, kind, now);
	wake_one(e, kind, now);
}

/* ---- associations (reference §1.7 registration rows, removal rules) ---- */

/* Removes a record by the removal rule; TRUE if it was RUNNING (task-finished wake due). */
static gboolean
remove_record(GsEngine *e, Record *rec, GsTime now)
{
	GsTransition t = gs_thread_transition(rec->view.state, GS_EVENT_REMOVE);

	switch (t.action) {
	case GS_ACTION_NOTIFY:
		/*
		 * A finished thread would never wake to consume REMOVE_THROW (it
		 * threw while blocked, say): its record goes now.
		 */
		if (rec->finished)
			erase(e, rec, GS_EVENT_REMOVE, now);
		else
			set_state(e, rec, t.to, GS_EVENT_REMOVE, now);
		return FALSE;
	case GS_ACTION_ERASE_AND_WAKE:
		erase(e, rec, GS_EVENT_REMOVE, now);
		return TRUE;
	case GS_ACTION_ERASE:
		erase(e, rec, GS_EVENT_REMOVE, now);
		return FALSE;
	case GS_ACTION_NONE:
	case GS_ACTION_CREATE:
	case GS_ACTION_PROCEED:
	case GS_ACTION_RECURSIVE:
	case GS_ACTION_WAIT:
	case GS_ACTION_THROW_RETRY:
	case GS_ACTION_THROW_SPLIT:
	case GS_ACTION_THROW_REMOVED:
	case GS_ACTION_CHECK_DEADLOCK:
	case GS_ACTION_WAKE_ONE:
	case GS_ACTION_RETHROW:
	case GS_ACTION_SHUTTING_DOWN:
	case GS_ACTION_INVALID:
	case GS_N_THREAD_ACTIONS:
		break;
	}
	return FALSE;
}

static void
touch_task(GsEngine *e, GsTaskId task)
{
	(void) gs_task_priorities_get(e->priorities, task);
}

void
gs_engine_task_started(GsEngine *e, GsTaskId task)
{
	touch_task(e, task);
}

GsEngineError
gs_engine_register_dedicated(GsEngine *e, GsThreadId thread, GsTaskId task, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (e->shut_down)
		return GS_ENGINE_ERROR_SHUT_DOWN;
	if (task < 0)
		return GS_ENGINE_ERROR_BAD_TASK;
	if (rec != NULL) {
		if (rec->view.is_pool)
			return GS_ENGINE_ERROR_POOL_AS_DEDICATED;
		if (rec->view.task == task) {
			if (apply(e, rec, GS_EVENT_REGISTER, now).action == GS_ACTION_SHUTTING_DOWN)
				return GS_ENGINE_ERROR_SHUTTING_DOWN;
			return GS_ENGINE_ERROR_NONE;
		}
		/* FIXUP: the old association goes without a task-finished wake. */
		erase(e, rec, GS_EVENT_REMOVE, now);
	}
	touch_task(e, task);
	record_new(e, thread, task, FALSE, FALSE, now);
	return GS_ENGINE_ERROR_NONE;
}

static int
compare_task_id(gconstpointer a, gconstpointer b)
{
	GsTaskId x = *(const GsTaskId *) a, y = *(const GsTaskId *) b;

	return x < y ? -1 : x > y;
}

static void
add_pool_tasks(GArray *set, const GsTaskId *tasks, guint n_tasks)
{
	guint len;

	g_array_append_vals(set, tasks, n_tasks);
	g_array_sort(set, compare_task_id);
	len = 0;
	for (guint i = 0; i < set->len; i++) {
		GsTaskId t = g_array_index(set, GsTaskId, i);

		if (len == 0 || g_array_index(set, GsTaskId, len - 1) != t)
			g_array_index(set, GsTaskId, len++) = t;
	}
	g_array_set_size(set, len);
}

/* Erases @task from a pool thread's set; TRUE if it was there. */
static gboolean
drop_pool_task(GsEngine *e, Record *rec, GsTaskId task)
{
	GArray *set = rec->view.pool_tasks;

	for (guint i = 0; i < set->len; i++) {
		if (g_array_index(set, GsTaskId, i) == task) {
			g_array_remove_index(set, i);
			rank_changed(e, rec); /* a pool thread ranks by its tasks */
			return TRUE;
		}
	}
	return FALSE;
}

GsEngineError
gs_engine_register_pool(GsEngine *e, GsThreadId thread, const GsTaskId *tasks, guint n_tasks,
			gboolean shuffle, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (e->shut_down)
		return GS_ENGINE_ERROR_SHUT_DOWN;
	if (n_tasks == 0)
		return GS_ENGINE_ERROR_NONE; /* as the Java side ignores empty arrays */
	for (guint i = 0; i < n_tasks; i++) {
		if (tasks[i] < 0)
			return GS_ENGINE_ERROR_BAD_TASK;
	}
	if (rec != NULL) {
		if (!rec->view.is_pool)
			return GS_ENGINE_ERROR_DEDICATED_AS_POOL;
		if (apply(e, rec, GS_EVENT_REGISTER, now).action == GS_ACTION_SHUTTING_DOWN)
			return GS_ENGINE_ERROR_SHUTTING_DOWN;
		if (rec->view.shuffle != shuffle)
			return GS_ENGINE_ERROR_SHUFFLE_MISMATCH;
		checkpoint(e, rec);
	} else {
		rec = record_new(e, thread, GS_NO_TASK, TRUE, shuffle, now);
	}
	add_pool_tasks(rec->view.pool_tasks, tasks, n_tasks);
	rank_changed(e, rec); /* a pool thread ranks by its tasks */
	for (guint i = 0; i < rec->view.pool_tasks->len; i++)
		touch_task(e, g_array_index(rec->view.pool_tasks, GsTaskId, i));
	return GS_ENGINE_ERROR_NONE;
}

/* One removal rule (reference §1.7): TRUE if a task-finished wake is due. */
static gboolean
remove_association(GsEngine *e, Record *rec, GsTaskId task, GsTime now)
{
	if (task == GS_NO_TASK)
		return remove_record(e, rec, now);
	if (!rec->view.is_pool)
		return rec->view.task == task ? remove_record(e, rec, now) : FALSE;
	if (drop_pool_task(e, rec, task) && rec->view.pool_tasks->len == 0)
		return remove_record(e, rec, now);
	return FALSE;
}

void
gs_engine_remove_association(GsEngine *e, GsThreadId thread, GsTaskId task, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (rec != NULL && remove_association(e, rec, task, now))
		task_finished_wake(e, now);
}

GsEngineError
gs_engine_pool_done(GsEngine *e, GsThreadId thread, const GsTaskId *tasks, guint n_tasks, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return GS_ENGINE_ERROR_NOT_REGISTERED;
	if (!rec->view.is_pool)
		return GS_ENGINE_ERROR_DEDICATED_AS_POOL;
	checkpoint(e, rec);
	for (guint i = 0; i < n_tasks; i++) {
		rec = lookup(e, thread);
		if (rec == NULL)
			break;
		if (remove_association(e, rec, tasks[i], now))
			task_finished_wake(e, now);
	}
	return GS_ENGINE_ERROR_NONE;
}

void
gs_engine_thread_finished(GsEngine *e, GsThreadId thread, GsTime now)
{
	Record *rec = lookup(e, thread);
	g_autoptr(GArray) tasks = NULL;

	if (rec == NULL)
		return;
	rec->finished = TRUE;
	if (!rec->view.is_pool)
		return;
	/* pool_done() edits the record's set as it goes: it reads a copy. */
	tasks = g_array_copy(rec->view.pool_tasks);
	gs_engine_pool_done(e, thread, (const GsTaskId *) tasks->data, tasks->len, now);
}

/* The ids of a task's dedicated threads, or of the pool threads working for it. */
static GArray *
threads_of_task(GsEngine *e, GsTaskId task, gboolean pool)
{
	GArray *ids = g_array_new(FALSE, FALSE, sizeof(GsThreadId));

	if (pool) {
		for (guint i = 0; i < e->pool_records->len; i++) {
			Record *rec = e->pool_records->pdata[i];

			if (gs_thread_view_works_for(&rec->view, task))
				g_array_append_val(ids, rec->view.id);
		}
	} else {
		for (Record *rec = dedicated_of(e, task); rec != NULL; rec = rec->task_next)
			g_array_append_val(ids, rec->view.id);
	}
	g_array_sort(ids, compare_thread_id);
	return ids;
}

void
gs_engine_task_done(GsEngine *e, GsTaskId task, GsTime now)
{
	g_autoptr(GArray) dedicated = threads_of_task(e, task, FALSE);
	g_autoptr(GArray) pool = threads_of_task(e, task, TRUE);
	gboolean wake = FALSE;

	for (guint i = 0; i < dedicated->len; i++) {
		Record *rec = lookup(e, g_array_index(dedicated, GsThreadId, i));

		wake |= remove_record(e, rec, now);
	}
	for (guint i = 0; i < pool->len; i++) {
		Record *rec = lookup(e, g_array_index(pool, GsThreadId, i));

		/* The reference erases the task before any checkpoint (quirk §6.11). */
		if (e->opts.pool_metrics_on_task_done)
			checkpoint(e, rec);
		wake |= remove_association(e, rec, task, now);
	}
	if (wake)
		task_finished_wake(e, now);
	gs_task_priorities_forget(e->priorities, task);
}

GsEngineError
gs_engine_set_pool_blocked(GsEngine *e, GsThreadId thread, gboolean blocked)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return GS_ENGINE_ERROR_NOT_REGISTERED;
	if (rec->view.is_pool)
		return GS_ENGINE_ERROR_NOT_DEDICATED;
	e->n_pool_blocked += (blocked != FALSE) - rec->view.pool_blocked;
	rec->view.pool_blocked = blocked != FALSE;
	return GS_ENGINE_ERROR_NONE;
}

void
gs_engine_shutdown(GsEngine *e, GsTime now)
{
	g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(GsThreadId));

	e->shut_down = TRUE;
	for (guint i = 0; i < e->records->len; i++)
		g_array_append_val(ids, ((Record *) e->records->pdata[i])->view.id);
	g_array_sort(ids, compare_thread_id);
	for (guint i = 0; i < ids->len; i++) {
		Record *rec = lookup(e, g_array_index(ids, GsThreadId, i));

		if (rec != NULL && rec->view.state != GS_THREAD_REMOVE_THROW)
			remove_record(e, rec, now);
	}
}

/* ---- retry blocks and spill ranges ---- */

void
gs_engine_retry_block_start(GsEngine *e, GsThreadId thread, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return;
	rec->in_retry_block = TRUE;
	accounts(rec)->retry_start_or_block_end = now;
	rec->acc->retry_running_ns = 0;
}

void
gs_engine_retry_block_end(GsEngine *e, GsThreadId thread, GsTime now)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return;
	rec->in_retry_block = FALSE;
	if (rec->acc != NULL)
		rec->acc->retry_running_ns = 0;
}

void
gs_engine_spill_range_start(GsEngine *e, GsThreadId thread)
{
	Record *rec = lookup(e, thread);

	if (rec != NULL)
		rec->in_spill_range = TRUE;
}

void
gs_engine_spill_range_done(GsEngine *e, GsThreadId thread)
{
	Record *rec = lookup(e, thread);

	if (rec != NULL)
		rec->in_spill_range = FALSE;
}

/* ---- inspection ---- */

GsThreadState
gs_engine_thread_state(const GsEngine *e, GsThreadId thread)
{
	Record *rec = lookup(e, thread);

	return rec != NULL ? rec->view.state : GS_THREAD_UNKNOWN;
}

const GsThreadView *
gs_engine_thread_view(const GsEngine *e, GsThreadId thread)
{
	Record *rec = lookup(e, thread);

	return rec != NULL ? &rec->view : NULL;
}

GsPriority
gs_engine_thread_priority(GsEngine *e, GsThreadId thread)
{
	Record *rec = lookup(e, thread);
	GsThreadView no_task = {.id = thread, .is_pool = TRUE};

	if (rec != NULL)
		return priority_of(e, rec);
	return gs_thread_priority(e->priorities, &no_task, e->opts.pool_priority);
}

gboolean
gs_engine_thread_metrics(const GsEngine *e, GsThreadId thread, GsMetrics *out)
{
	Record *rec = lookup(e, thread);

	if (rec == NULL)
		return FALSE;
	*out = *metrics_of(rec);
	return TRUE;
}

guint
gs_engine_thread_cap_count(const GsEngine *e, GsThreadId thread)
{
	Record *rec = lookup(e, thread);

	return rec != NULL ? rec->cap_count : 0;
}

void
gs_engine_task_metrics(const GsEngine *e, GsTaskId task, GsTime now, GsMetrics *out)
{
	const GsMetrics *saved = g_hash_table_lookup(e->task_metrics, &task);

	if (saved != NULL)
		*out = *saved;
	else
		gs_metrics_clear(out);
	for (const Record *rec = dedicated_of(e, task); rec != NULL; rec = rec->task_next) {
		gs_metrics_rollup(out, metrics_of(rec), e->opts.max_allocated_rollup);
		if (rec->waiting) /* begin_wait() made its accounts */
			out->lost_or_blocked_ns =
				gs_time_add(out->lost_or_blocked_ns, now - rec->acc->block_start);
	}
}

void
gs_engine_forget_task_metrics(GsEngine *e, GsTaskId task)
{
	g_hash_table_remove(e->task_metrics, &task);
}

gint64
gs_engine_gpu_allocated(const GsEngine *e)
{
	return e->gpu_allocated;
}

guint
gs_engine_n_threads(const GsEngine *e)
{
	return e->records->len;
}

guint
gs_engine_n_in_state(const GsEngine *e, GsThreadState state)
{
	g_return_val_if_fail(state < GS_N_THREAD_STATES, 0);
	return e->counts[state][GS_KIND_GPU] + e->counts[state][GS_KIND_HOST];
}

guint64
gs_engine_n_checks(const GsEngine *e)
{
	return e->n_checks;
}

guint64
gs_engine_n_deadlocks(const GsEngine *e)
{
	return e->n_deadlocks;
}

guint64
gs_engine_n_busts(const GsEngine *e)
{
	return e->n_busts;
}

static gboolean
wake_queued(const GsEngine *e, GsThreadId id)
{
	for (guint i = e->wake_head; i < e->wakes->len; i++) {
		if (g_array_index(e->wakes, GsThreadId, i) == id)
			return TRUE;
	}
	return FALSE;
}

static gboolean
in_task_list(const GsEngine *e, const Record *rec)
{
	for (const Record *r = dedicated_of(e, rec->view.task); r != NULL; r = r->task_next) {
		if (r == rec)
			return TRUE;
	}
	return FALSE;
}

static const char *
check_record(const GsEngine *e, const Record *rec, guint i)
{
	const char *broken = gs_thread_view_check(&rec->view);
	GsThreadState s = rec->view.state;

	if (broken != NULL)
		return broken;
	if (rec->index != i || lookup(e, rec->view.id) != rec)
		return "every record is found by its id at its own index";
	if (rec->view.is_pool ? rec->pool_index >= e->pool_records->len ||
					e->pool_records->pdata[rec->pool_index] != rec
			      : !in_task_list(e, rec))
		return "every record is in its task's index or the pool index";
	if (rec->waiting && !gs_thread_state_waits(s) && !wake_queued(e, rec->view.id))
		return "a parked thread in a state that no longer parks it has a wake-up queued";
	if (rec->retry_alloc_before_bufn && s != GS_THREAD_RUNNING && s != GS_THREAD_ALLOC &&
	    s != GS_THREAD_ALLOC_FREE)
		return "the retry-once flag is set only on a thread that is about to allocate";
	if (rec->cap_count > e->opts.retry_cap)
		return "no thread has thrown more state-machine retries than the cap";
	if (rec->injections != NULL &&
	    (rec->injections->retry_oom.hits < 0 || rec->injections->split_oom.hits < 0 ||
	     rec->injections->cudf_exceptions < 0))
		return "injection counts are never negative";
	if (s == GS_THREAD_BLOCKED &&
	    e->blocked[rec->view.alloc_kind].slots[rec->blocked_pos].rec != rec)
		return "every BLOCKED record is in the heap of its kind";
	if (s == GS_THREAD_ALLOC && e->allocating[rec->view.alloc_kind].recs[rec->alloc_pos] != rec)
		return "every THREAD_ALLOC record is in the set of its kind";
	return NULL;
}

const char *
gs_engine_check_invariants(const GsEngine *e)
{
	guint counts[GS_N_THREAD_STATES][GS_N_KINDS] = {{0}};
	guint n_pool_blocked = 0;
	const char *broken = NULL;

	if (gs_id_table_size(&e->by_id) != e->records->len)
		broken = "the id index and the record array hold the same records";
	else if (gs_id_table_size(&e->dedicated) != e->n_dedicated_tasks)
		broken = "the count of tasks with dedicated threads matches the task index";
	else if (e->blocked[GS_KIND_GPU].len != e->counts[GS_THREAD_BLOCKED][GS_KIND_GPU] ||
		 e->blocked[GS_KIND_HOST].len != e->counts[GS_THREAD_BLOCKED][GS_KIND_HOST])
		broken = "the heaps of BLOCKED records hold every BLOCKED record";
	else if (e->pool_records->len > e->records->len)
		broken = "the pool index holds only records";
	else if (e->allocating[GS_KIND_GPU].len != e->counts[GS_THREAD_ALLOC][GS_KIND_GPU] ||
		 e->allocating[GS_KIND_HOST].len != e->counts[GS_THREAD_ALLOC][GS_KIND_HOST])
		broken = "the sets of THREAD_ALLOC records hold every THREAD_ALLOC record";
	for (guint i = 0; broken == NULL && i < e->records->len; i++) {
		const Record *rec = e->records->pdata[i];

		broken = check_record(e, rec, i);
		counts[rec->view.state][rec->view.alloc_kind]++;
		n_pool_blocked += rec->view.pool_blocked;
	}
	if (broken == NULL && memcmp(counts, e->counts, sizeof counts) != 0)
		broken = "the per-state counts match the records";
	if (broken == NULL && n_pool_blocked != e->n_pool_blocked)
		broken = "the count of threads waiting on a pool matches the records";
	return broken;
}
