/*
 * gpusim: Spark's execution memory in a run (see execution.h).
 *
 * A task's consumers and named pages are kept in short arrays searched in
 * order: a scenario names a handful of each, and the spill choice walks
 * the consumers in that order anyway.
 */
#include "config.h"

#include "run/execution.h"
#include "run/tasks.h"

/* One consumer of a task: a name of one of its threads. */
typedef struct {
	const GsThreadSpec *spec;
	guint name;          /* index in spec->consumers */
	GsMemoryMode mode;
	gint64 used;         /* bytes it holds, its pages' included */
	gboolean registered; /* it has acquired memory since the last clean-up */
} Consumer;

/* A page a thread named: its number and the consumer that holds it. */
typedef struct {
	const GsThreadSpec *spec;
	guint name;          /* index in spec->pages */
	guint number;
	guint consumer;      /* index in the task's consumers */
} NamedPage;

struct GsRunTaskMemory {
	GArray *consumers;   /* Consumer */
	GArray *pages;       /* NamedPage, live ones */
	GsPageTable *table;
	gint64 held[GS_N_MEMORY_MODES];
};

struct GsRunExecution {
	const GsWorkload *w;
	GsExecutionPool *pools[GS_N_MEMORY_MODES]; /* share fair */
	GsStorage *storage;                        /* share fair: the unified manager's */
	gint64 available;                          /* share none: one counter */
	const GsRunHooks *hooks;
	gpointer driver;
};

GsRunExecution *
gs_run_execution_new(const GsWorkload *w, const GsRunHooks *hooks, gpointer driver)
{
	GsRunExecution *x = g_new0(GsRunExecution, 1);

	x->w = w;
	x->hooks = hooks;
	x->driver = driver;
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++) {
		if (w->execution.share == GS_SHARE_FAIR)
			x->pools[m] = gs_execution_pool_new(w->execution.pool[m]);
		x->available += w->execution.pool[m];
	}
	if (w->execution.share == GS_SHARE_FAIR)
		x->storage = gs_storage_new(w->execution.pool, w->execution.storage_fraction,
					    (GsEvictMode) w->execution.evict, x->pools);
	return x;
}

void
gs_run_execution_free(GsRunExecution *x)
{
	if (x == NULL)
		return;
	g_clear_pointer(&x->storage, gs_storage_free);
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++)
		g_clear_pointer(&x->pools[m], gs_execution_pool_free);
	g_free(x);
}

/* ---- a task's memory ---- */

static GsRunTaskMemory *
memory_of(GsRunTask *task)
{
	if (task->memory == NULL) {
		task->memory = g_new0(GsRunTaskMemory, 1);
		task->memory->consumers = g_array_new(FALSE, FALSE, sizeof(Consumer));
		task->memory->pages = g_array_new(FALSE, FALSE, sizeof(NamedPage));
		task->memory->table = gs_page_table_new();
	}
	return task->memory;
}

static void
memory_free(GsRunTaskMemory *m)
{
	g_array_unref(m->consumers);
	g_array_unref(m->pages);
	gs_page_table_free(m->table);
	g_free(m);
}

/* The index of the consumer named @name by @spec, made on first use. */
static guint
consumer_index(GsRunTaskMemory *m, const GsThreadSpec *spec, guint name)
{
	Consumer fresh = {.spec = spec, .name = name,
			  .mode = g_array_index(spec->consumer_modes, GsMemoryMode, name)};

	for (guint i = 0; i < m->consumers->len; i++) {
		const Consumer *c = &g_array_index(m->consumers, Consumer, i);

		if (c->spec == spec && c->name == name)
			return i;
	}
	g_array_append_val(m->consumers, fresh);
	return m->consumers->len - 1;
}

static Consumer *
consumer_at(GsRunTaskMemory *m, guint index)
{
	return &g_array_index(m->consumers, Consumer, index);
}

static const char *
consumer_name(const Consumer *c)
{
	return c->spec->consumers->pdata[c->name];
}

/* ---- the log ---- */

typedef struct {
	GsRunExecution *x;
	GsRunTask *task;
	const char *thread;
	GsMemoryMode mode;
	gint consumer; /* index in the task's consumers; -1: none */
} Call;

static void
log_call(const Call *call, const char *what, gint64 asked, gint64 bytes, const Consumer *c,
	 guint page)
{
	GsLogEntry e = {.kind = GS_LOG_EXECUTION, .thread = call->thread,
			.task = call->task->result->id, .what = what, .asked = asked,
			.bytes = bytes, .buf = c != NULL ? consumer_name(c) : NULL,
			.mode = call->mode, .page = page};

	call->x->hooks->log(call->x->driver, &e);
}

static void
log_storage(const Call *call, const char *what, gint64 asked, gint64 bytes, const char *block)
{
	GsLogEntry e = {.kind = GS_LOG_STORAGE, .thread = call->thread,
			.task = call->task->result->id, .what = what, .asked = asked,
			.bytes = bytes, .buf = block, .mode = call->mode};

	call->x->hooks->log(call->x->driver, &e);
}

/* What a storage call or an execution pool's growth moved and evicted, if anything. */
static void
log_storage_outcome(const Call *call, const GsStorageOutcome *out, const char *block)
{
	if (out->borrowed > 0)
		log_storage(call, "borrow", out->borrowed, out->borrowed, block);
	if (out->eviction.asked > 0)
		log_storage(call, "evict", out->eviction.asked, out->eviction.freed, NULL);
	for (guint i = 0; i < gs_storage_n_evicted(call->x->storage); i++) {
		gint64 bytes;
		const char *name = gs_storage_evicted(call->x->storage, i, &bytes);

		log_storage(call, "drop", bytes, bytes, name);
	}
	if (out->reclaimed > 0)
		log_storage(call, "reclaim", out->reclaimed, out->reclaimed, NULL);
}

static Consumer *
caller(const Call *call)
{
	return call->consumer < 0 ? NULL : consumer_at(call->task->memory, (guint) call->consumer);
}

/* ---- the pools ---- */

typedef enum { PASS_GRANTED, PASS_WAIT } PassOutcome;

/* One pass of the memory manager for @bytes; *@got is the grant. */
static PassOutcome
pool_pass(const Call *call, gint64 bytes, gint64 *got)
{
	GsRunExecution *x = call->x;
	GsFairShareGrant grant;

	if (x->pools[call->mode] == NULL) {
		*got = MIN(bytes, x->available);
		x->available -= *got;
	} else {
		/* UnifiedMemoryManager: each pass may first take memory back from storage. */
		GsStorageOutcome grown = gs_storage_grow_execution(x->storage, call->mode, bytes);

		log_storage_outcome(call, &grown, NULL);
		grant = gs_execution_pool_acquire(x->pools[call->mode], call->task->engine_id, bytes);
		if (grant.must_wait)
			return PASS_WAIT;
		*got = grant.granted;
	}
	call->task->memory->held[call->mode] += *got;
	return PASS_GRANTED;
}

/* Gives @bytes of the task's memory of @mode back to its pool. */
static void
pool_release(GsRunExecution *x, GsRunTask *task, GsMemoryMode mode, gint64 bytes)
{
	if (x->pools[mode] != NULL)
		gs_execution_pool_release(x->pools[mode], task->engine_id, bytes);
	else
		x->available += bytes;
	task->memory->held[mode] -= bytes;
}

/* ---- spilling ---- */

/* A consumer spills all it holds: its pages go, and every byte goes back. */
static gint64
spill_consumer(GsConsumerId id, gint64 size, GsConsumerId trigger, gpointer data)
{
	const Call *call = data;
	GsRunTaskMemory *m = call->task->memory;
	Consumer *c = consumer_at(m, (guint) id);
	gint64 released = c->used;

	(void) trigger;
	for (guint i = m->pages->len; i-- > 0;) {
		const NamedPage *p = &g_array_index(m->pages, NamedPage, i);

		if (p->consumer == id) {
			gs_page_table_free_page(m->table, p->number, NULL);
			g_array_remove_index(m->pages, i);
		}
	}
	c->used = 0;
	pool_release(call->x, call->task, c->mode, released);
	log_call(call, "spill", size, released, c, 0);
	return released;
}

/* After a spill, one more pass for what is still needed; a verdict to wait grants nothing. */
static gint64
reacquire(gint64 bytes, gint64 released, gpointer data)
{
	gint64 got = 0;

	(void) released;
	if (pool_pass(data, bytes, &got) == PASS_WAIT)
		return 0;
	return got;
}

/* What the spill choice sees: registered consumers of the caller's mode. */
static GArray *
consumer_views(const Call *call)
{
	GsRunTaskMemory *m = call->task->memory;
	GArray *views = g_array_sized_new(FALSE, FALSE, sizeof(GsConsumerView), m->consumers->len);

	for (guint i = 0; i < m->consumers->len; i++) {
		const Consumer *c = consumer_at(m, i);
		GsConsumerView v = {.id = i, .used = c->used,
				    .can_spill = c->registered && c->mode == call->mode};

		g_array_append_val(views, v);
	}
	return views;
}

/*
 * acquireExecutionMemory: one pass, then the spill loop for what it fell
 * short of. PASS_WAIT leaves everything as it was.
 */
static PassOutcome
acquire(const Call *call, gint64 required, gint64 *got)
{
	g_autoptr(GArray) views = NULL;
	GsConsumerId requester = call->consumer < 0 ? G_MAXUINT64 : (GsConsumerId) call->consumer;
	GsSpillOutcome spilled;

	if (pool_pass(call, required, got) == PASS_WAIT) {
		log_call(call, "wait", required, 0, caller(call), 0);
		return PASS_WAIT;
	}
	if (*got < required) {
		views = consumer_views(call);
		spilled = gs_consumer_spill_loop((const GsConsumerView *) views->data, views->len,
						 requester, required, *got, spill_consumer,
						 reacquire, (gpointer) call, NULL);
		*got = spilled.got;
	}
	if (caller(call) != NULL) {
		caller(call)->registered = TRUE;
		caller(call)->used += *got;
	}
	return PASS_GRANTED;
}

/* ---- the ops ---- */

static gboolean
do_acquire(const Call *call, const GsOp *op)
{
	gint64 got;

	if (acquire(call, op->execution.bytes, &got) == PASS_WAIT)
		return FALSE;
	log_call(call, "acquire", op->execution.bytes, got, caller(call), 0);
	return TRUE;
}

static void
do_release(const Call *call, const GsOp *op, gboolean *released)
{
	Consumer *c = caller(call);
	gint64 bytes = MIN(op->execution.bytes, call->task->memory->held[call->mode]);

	if (c != NULL) {
		bytes = MIN(bytes, c->used);
		c->used -= bytes;
	}
	pool_release(call->x, call->task, call->mode, bytes);
	log_call(call, "release", op->execution.bytes, bytes, c, 0);
	*released = *released || bytes > 0;
}

/* The page's failure: what was granted goes back, and the consumer throws. */
static GsException
page_refused(const Call *call, gint64 size, gint64 got, GsPageResult result)
{
	Consumer *c = caller(call);

	c->used -= got;
	pool_release(call->x, call->task, call->mode, got);
	log_call(call, gs_page_result_name(result), size, got, c, 0);
	return result == GS_PAGE_TABLE_FULL ? GS_EXC_ILLEGAL_STATE : GS_EXC_SPARK_OOM;
}

static gint64
page_size(const GsRunExecution *x, GsMemoryMode mode)
{
	if (x->w->execution.page_size > 0)
		return x->w->execution.page_size;
	return gs_page_default_size(x->w->execution.pool[mode], MAX(x->w->executor_slots, 1), 0);
}

static gboolean
do_allocate_page(const Call *call, const GsThreadSpec *spec, const GsOp *op,
		 GsException *thrown)
{
	GsRunTaskMemory *m = call->task->memory;
	gint64 size = gs_consumer_page_request(page_size(call->x, call->mode), op->execution.bytes);
	gint64 got;
	GsPageResult result;
	NamedPage page = {.spec = spec, .name = op->execution.page, .consumer = (guint) call->consumer};

	if (size > GS_PAGE_MAX_BYTES) {
		log_call(call, gs_page_result_name(GS_PAGE_TOO_LARGE), size, 0, caller(call), 0);
		*thrown = GS_EXC_TOO_LARGE_PAGE;
		return TRUE;
	}
	if (acquire(call, size, &got) == PASS_WAIT)
		return FALSE;
	result = gs_page_table_allocate(m->table, got, NULL, &page.number);
	if (result == GS_PAGE_OK && got < op->execution.bytes) {
		gs_page_table_free_page(m->table, page.number, NULL);
		result = GS_PAGE_NO_MEMORY;
	}
	if (result != GS_PAGE_OK) {
		*thrown = page_refused(call, size, got, result);
		return TRUE;
	}
	g_array_append_val(m->pages, page);
	log_call(call, "page", size, got, caller(call), page.number);
	return TRUE;
}

/* Frees the newest live page of that name; one that is not (freed or spilled) frees nothing. */
static void
do_free_page(Call *call, const GsThreadSpec *spec, const GsOp *op, gboolean *released)
{
	GsRunTaskMemory *m = call->task->memory;

	for (guint i = m->pages->len; i-- > 0;) {
		NamedPage p = g_array_index(m->pages, NamedPage, i);
		Consumer *c = consumer_at(m, p.consumer);
		gint64 size = 0;

		if (p.spec != spec || p.name != op->execution.page)
			continue;
		g_array_remove_index(m->pages, i);
		gs_page_table_free_page(m->table, p.number, &size);
		c->used -= size;
		pool_release(call->x, call->task, c->mode, size);
		call->mode = c->mode;
		log_call(call, "free_page", size, size, c, p.number);
		*released = *released || size > 0;
		return;
	}
	log_call(call, "free_page", 0, 0, NULL, 0);
}

/* cleanUpAllAllocatedMemory: the pages, the consumers and every byte go; returns the bytes. */
static gint64
clean_up(GsRunExecution *x, GsRunTask *task)
{
	GsRunTaskMemory *m = task->memory;
	gint64 leaked = 0;

	gs_page_table_clean_up(m->table, NULL);
	g_array_set_size(m->pages, 0);
	for (guint i = 0; i < m->consumers->len; i++) {
		consumer_at(m, i)->used = 0;
		consumer_at(m, i)->registered = FALSE;
	}
	for (guint mode = 0; mode < GS_N_MEMORY_MODES; mode++) {
		leaked += m->held[mode];
		if (x->pools[mode] != NULL)
			gs_execution_pool_release_all(x->pools[mode], task->engine_id);
		else
			x->available += m->held[mode];
		m->held[mode] = 0;
	}
	return leaked;
}

/* ---- storage (the memory manager's, not the task's) ---- */

static void
do_acquire_storage(const Call *call, const GsOp *op)
{
	GsStorageOutcome out = gs_storage_acquire(call->x->storage, call->mode,
						  op->execution.block, op->execution.bytes);
	const char *what = out.too_large ? "too_large" : out.granted ? "store" : "refuse";

	log_storage_outcome(call, &out, op->execution.block);
	log_storage(call, what, op->execution.bytes, out.granted ? op->execution.bytes : 0,
		    op->execution.block);
}

/*
 * A storage release wakes no task waiting for execution memory: Spark's
 * StorageMemoryPool does not notify the lock ExecutionMemoryPool waits on,
 * so a waiting task sees the memory at the next execution release.
 */
static void
do_release_storage(const Call *call, const GsOp *op)
{
	Call mode_call = *call;
	gint64 bytes;

	if (op->kind == GS_OP_RELEASE_STORAGE) {
		bytes = gs_storage_release(call->x->storage, call->mode, op->execution.bytes);
		log_storage(call, "release", op->execution.bytes, bytes, NULL);
		return;
	}
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++) {
		mode_call.mode = (GsMemoryMode) m;
		bytes = gs_storage_release_all(call->x->storage, (GsMemoryMode) m);
		log_storage(&mode_call, "release", bytes, bytes, NULL);
	}
}

gboolean
gs_run_execution_op(GsRunExecution *x, GsRunTask *task, const char *name,
		    const GsThreadSpec *spec, const GsOp *op, GsException *thrown,
		    gboolean *released)
{
	GsRunTaskMemory *m = memory_of(task);
	Call call = {.x = x, .task = task, .thread = name, .mode = op->execution.mode,
		     .consumer = -1};
	gint64 leaked;

	*thrown = GS_EXC_NONE;
	if ((op->kind == GS_OP_ACQUIRE_EXECUTION || op->kind == GS_OP_RELEASE_EXECUTION ||
	     op->kind == GS_OP_ALLOCATE_PAGE) && op->execution.consumer >= 0)
		call.consumer = (gint) consumer_index(m, spec, (guint) op->execution.consumer);
	if (op->kind == GS_OP_ACQUIRE_STORAGE) {
		do_acquire_storage(&call, op);
		return TRUE;
	}
	if (op->kind == GS_OP_RELEASE_STORAGE || op->kind == GS_OP_RELEASE_ALL_STORAGE) {
		do_release_storage(&call, op);
		return TRUE;
	}
	if (op->kind == GS_OP_ACQUIRE_EXECUTION)
		return do_acquire(&call, op);
	if (op->kind == GS_OP_ALLOCATE_PAGE)
		return do_allocate_page(&call, spec, op, thrown);
	if (op->kind == GS_OP_RELEASE_EXECUTION) {
		do_release(&call, op, released);
	} else if (op->kind == GS_OP_FREE_PAGE) {
		do_free_page(&call, spec, op, released);
	} else if (op->kind == GS_OP_CLEAN_UP) {
		leaked = clean_up(x, task);
		log_call(&call, "clean_up", 0, leaked, NULL, 0);
		*released = *released || leaked > 0;
	}
	return TRUE;
}

gboolean
gs_run_execution_task_ends(GsRunExecution *x, GsRunTask *task)
{
	Call call = {.x = x, .task = task, .consumer = -1};
	gint64 leaked;

	if (task->memory == NULL)
		return FALSE;
	leaked = clean_up(x, task);
	if (leaked > 0)
		log_call(&call, "clean_up", 0, leaked, NULL, 0);
	g_clear_pointer(&task->memory, memory_free);
	return leaked > 0;
}

void
gs_run_task_memory_free(GsRunTask *task)
{
	g_clear_pointer(&task->memory, memory_free);
}
