/*
 * gpusim: constructing, defaulting and freeing workloads.
 */
#include "config.h"

#include <string.h>

#include <gpusim/workload.h>

static const char *const op_kind_names[] = {
#define GS_X_ROW(suffix, name) [GS_OP_##suffix] = name,
	GS_OP_KIND_MAP(GS_X_ROW)
#undef GS_X_ROW
};

G_STATIC_ASSERT(G_N_ELEMENTS(op_kind_names) == GS_N_OP_KINDS);

const char *
gs_op_kind_name(GsOpKind kind)
{
	g_return_val_if_fail(kind < GS_N_OP_KINDS, "invalid");
	return op_kind_names[kind];
}

gboolean
gs_op_kind_is_execution(GsOpKind kind)
{
	return kind == GS_OP_ACQUIRE_EXECUTION || kind == GS_OP_RELEASE_EXECUTION ||
	       kind == GS_OP_ALLOCATE_PAGE || kind == GS_OP_FREE_PAGE || kind == GS_OP_CLEAN_UP ||
	       kind == GS_OP_ACQUIRE_STORAGE || kind == GS_OP_RELEASE_STORAGE ||
	       kind == GS_OP_RELEASE_ALL_STORAGE;
}

#define KIB ((gint64) 1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define TIB (GIB * 1024)
#define US ((GsTime) 1000)
#define MS (US * 1000)

void
gs_policy_init(GsPolicy *p)
{
	memset(p, 0, sizeof *p);
	p->oom = GS_OOM_RETRY;
	p->priority = GS_PRIORITY_FIFO;
	p->split_victim = GS_SPLIT_HIGHEST;
	p->retry_before_bufn = TRUE;
	p->retry_cap = 500;
	p->watchdog = 100 * MS;
	p->sleep_is_blocked = TRUE;
	p->task_attempts = 1;
	p->spill.victim = GS_VICTIM_LRU;
	p->spill.on_demand = TRUE;
	p->spill.host_full = GS_HOST_FULL_DISK;
	p->reservations.over = GS_OVER_IGNORE;
	p->reservations.increase_factor = 1.25;
	p->reservations.attribution = GS_ATTRIBUTION_ORIGIN;
	p->admission = GS_ADMISSION_NONE;
	p->evac_gate = TRUE;
}

/*
 * The OOM policies as data (SPEC §3.4): their names, and whether the engine
 * breaks the deadlocks it finds (under "block" it finds them and leaves
 * them). What a failed allocation does under each is the interpreter's
 * table (interp.c).
 */
const char *const gs_oom_policy_names[GS_N_OOM_POLICIES + 1] = {
	[GS_OOM_FAIL] = "fail",
	[GS_OOM_BLOCK] = "block",
	[GS_OOM_RETRY] = "retry",
};

static const gboolean oom_policy_busts_deadlocks[GS_N_OOM_POLICIES] = {
	[GS_OOM_RETRY] = TRUE,
};

GsEngineOpts
gs_policy_engine_opts(const GsPolicy *p)
{
	GsEngineOpts opts = GS_ENGINE_OPTS_DEFAULT;

	opts.priority = p->priority;
	opts.split_victim = p->split_victim;
	opts.retry_before_bufn = p->retry_before_bufn;
	opts.retry_cap = p->retry_cap;
	opts.bust_deadlocks = p->oom < GS_N_OOM_POLICIES && oom_policy_busts_deadlocks[p->oom];
	return opts;
}

static void
free_expect_value(gpointer data)
{
	GsExpectValue *v = data;

	g_free(v->key);
	g_free(v->text);
	g_free(v);
}

static void
free_expect_thread(gpointer data)
{
	GsExpectThread *t = data;

	g_free(t->thread);
	if (t->reached != NULL)
		g_array_unref(t->reached);
	if (t->threw != NULL)
		g_array_unref(t->threw);
	if (t->never_in != NULL)
		g_array_unref(t->never_in);
	if (t->never_threw != NULL)
		g_array_unref(t->never_threw);
	g_clear_pointer(&t->acquired, g_array_unref);
	g_clear_pointer(&t->pages, g_array_unref);
	g_clear_pointer(&t->leaked, g_array_unref);
	for (guint i = 0; t->values != NULL && i < t->values->len; i++)
		g_free(g_array_index(t->values, GsExpectThreadValue, i).name);
	g_clear_pointer(&t->values, g_array_unref);
	g_clear_pointer(&t->stored, g_array_unref);
	g_free(t);
}

static void
free_expect_at(gpointer data)
{
	GsExpectAt *a = data;

	g_free(a->thread);
	g_free(a->reservation);
	g_free(a->task);
	g_free(a->consumer);
	g_free(a);
}

GsWorkload *
gs_workload_new(void)
{
	GsWorkload *w = g_new0(GsWorkload, 1);

	w->seed = 1;
	w->gpu = (GsGpuMemory){.devices = 1, .alignment = 256, .allocator = GS_ALLOCATOR_EXACT,
			       .reservation_limit = 0.9, .downgrade_trigger = 0.75,
			       .downgrade_stop = 0.65, .streams = 16};
	w->host = (GsHostMemory){.capacity = 4 * GIB, .block_size = MIB, .pool_blocks = 128,
				 .initial_pools = 4, .reservation_limit = 0.9};
	w->disk = (GsDiskMemory){.capacity = TIB, .path = g_strdup("/var/tmp")};
	w->links = (GsLinks){.gpu_host = {25e9, 10 * US}, .host_disk = {2e9, 100 * US},
			     .alloc_latency = US};
	gs_policy_init(&w->policy);
	w->tasks = g_ptr_array_new_with_free_func((GDestroyNotify) gs_task_spec_free);
	w->pool_threads = g_ptr_array_new_with_free_func((GDestroyNotify) gs_thread_spec_free);
	w->expect.values = g_ptr_array_new_with_free_func(free_expect_value);
	w->expect.threads = g_ptr_array_new_with_free_func(free_expect_thread);
	w->expect.at = g_ptr_array_new_with_free_func(free_expect_at);
	w->variant_names = g_ptr_array_new_with_free_func(g_free);
	w->schedule = g_array_new(FALSE, FALSE, sizeof(guint));
	return w;
}

void
gs_workload_free(GsWorkload *w)
{
	if (w == NULL)
		return;
	g_free(w->name);
	g_free(w->description);
	g_free(w->file);
	g_free(w->variant);
	g_free(w->disk.path);
	g_ptr_array_unref(w->tasks);
	g_ptr_array_unref(w->pool_threads);
	g_ptr_array_unref(w->expect.values);
	g_ptr_array_unref(w->expect.threads);
	g_ptr_array_unref(w->expect.at);
	g_ptr_array_unref(w->variant_names);
	g_array_unref(w->schedule);
	if (w->maker != NULL)
		w->maker->free(w->maker);
	g_free(w);
}

static void
unref_array(GArray *a)
{
	if (a != NULL)
		g_array_unref(a);
}

static void
clear_ops(GArray *ops)
{
	if (ops == NULL)
		return;
	for (guint i = 0; i < ops->len; i++)
		gs_op_clear(&g_array_index(ops, GsOp, i));
	g_array_unref(ops);
}

void
gs_names_append(GsNames *names, guint index)
{
	guint len = names->len;

	if (len < GS_NAMES_INLINE) {
		names->inline_names[len] = index;
	} else if (len == GS_NAMES_INLINE) {
		guint *heap = g_new(guint, 2 * GS_NAMES_INLINE);

		memcpy(heap, names->inline_names, sizeof names->inline_names);
		heap[len] = index;
		names->heap = heap;
	} else {
		/* The heap array holds the next power of two at or above len. */
		if ((len & (len - 1)) == 0)
			names->heap = g_renew(guint, names->heap, 2 * len);
		names->heap[len] = index;
	}
	names->len = len + 1;
}

void
gs_names_clear(GsNames *names)
{
	if (names->len > GS_NAMES_INLINE)
		g_free(names->heap);
	memset(names, 0, sizeof *names);
}

void
gs_op_clear(GsOp *op)
{
	switch (op->kind) {
	case GS_OP_FREE:
	case GS_OP_SPILLABLE:
	case GS_OP_UNSPILLABLE:
		gs_names_clear(&op->free.bufs);
		g_clear_pointer(&op->free.thread, g_free);
		break;
	case GS_OP_COMPUTE:
		gs_names_clear(&op->compute.uses);
		break;
	case GS_OP_RETRY:
		gs_names_clear(&op->retry.input);
		gs_names_clear(&op->retry.restore);
		clear_ops(op->retry.ops);
		break;
	case GS_OP_RESERVE:
		unref_array(op->reserve.tiers);
		break;
	case GS_OP_POOL:
	case GS_OP_ASSOCIATE:
	case GS_OP_DISSOCIATE:
		unref_array(op->pool.tasks);
		break;
	case GS_OP_REPEAT:
		clear_ops(op->repeat.ops);
		break;
	case GS_OP_CHECKPOINT:
		gs_names_clear(&op->checkpoint);
		break;
	case GS_OP_ACQUIRE_STORAGE:
		g_clear_pointer(&op->execution.block, g_free);
		break;
	case GS_OP_ALLOC:
	case GS_OP_SYNC:
	case GS_OP_SLEEP:
	case GS_OP_UNTIL:
	case GS_OP_BLOCK_UNTIL_READY:
	case GS_OP_RELEASE:
	case GS_OP_SHUTDOWN_RESERVATIONS:
	case GS_OP_BORROW_STREAM:
	case GS_OP_RETURN_STREAM:
	case GS_OP_WAIT_ON_POOL:
	case GS_OP_INJECT:
	case GS_OP_ACQUIRE_EXECUTION:
	case GS_OP_RELEASE_EXECUTION:
	case GS_OP_ALLOCATE_PAGE:
	case GS_OP_FREE_PAGE:
	case GS_OP_CLEAN_UP:
	case GS_OP_RELEASE_STORAGE:
	case GS_OP_RELEASE_ALL_STORAGE:
	case GS_OP_TASK_DONE:
	case GS_OP_VALUE:
	case GS_N_OP_KINDS:
		break;
	}
	memset(op, 0, sizeof *op);
}

GsThreadSpec *
gs_thread_spec_new(const char *name)
{
	GsThreadSpec *t = g_new0(GsThreadSpec, 1);

	t->name = g_strdup(name);
	t->ops = g_array_new(FALSE, TRUE, sizeof(GsOp));
	t->buffers = g_ptr_array_new_with_free_func(g_free);
	t->streams = g_ptr_array_new_with_free_func(g_free);
	t->reservations = g_ptr_array_new_with_free_func(g_free);
	t->consumers = g_ptr_array_new_with_free_func(g_free);
	t->consumer_modes = g_array_new(FALSE, FALSE, sizeof(GsMemoryMode));
	t->pages = g_ptr_array_new_with_free_func(g_free);
	t->values = g_ptr_array_new_with_free_func(g_free);
	t->value_starts = g_array_new(FALSE, FALSE, sizeof(gint64));
	return t;
}

void
gs_thread_spec_free(GsThreadSpec *t)
{
	if (t == NULL)
		return;
	g_free(t->name);
	clear_ops(t->ops);
	g_ptr_array_unref(t->buffers);
	g_ptr_array_unref(t->streams);
	g_ptr_array_unref(t->reservations);
	g_ptr_array_unref(t->consumers);
	g_array_unref(t->consumer_modes);
	g_ptr_array_unref(t->pages);
	g_ptr_array_unref(t->values);
	g_array_unref(t->value_starts);
	if (t->given_away != NULL)
		g_array_unref(t->given_away);
	g_free(t);
}

guint
gs_name_index(GPtrArray *names, const char *name)
{
	for (guint i = 0; i < names->len; i++) {
		if (strcmp(names->pdata[i], name) == 0)
			return i;
	}
	g_ptr_array_add(names, g_strdup(name));
	return names->len - 1;
}

GsTaskSpec *
gs_task_spec_new(const char *id)
{
	GsTaskSpec *t = g_new0(GsTaskSpec, 1);

	t->id = g_strdup(id);
	t->repeat = 1;
	t->threads = g_ptr_array_new_with_free_func((GDestroyNotify) gs_thread_spec_free);
	return t;
}

void
gs_task_spec_free(GsTaskSpec *t)
{
	if (t == NULL)
		return;
	g_free(t->id);
	g_ptr_array_unref(t->threads);
	g_free(t);
}

gboolean
gs_cmp_holds(GsCmp cmp, gint64 observed)
{
	switch (cmp.op) {
	case GS_CMP_EQ:
		return observed == cmp.value;
	case GS_CMP_NE:
		return observed != cmp.value;
	case GS_CMP_LT:
		return observed < cmp.value;
	case GS_CMP_LE:
		return observed <= cmp.value;
	case GS_CMP_GT:
		return observed > cmp.value;
	case GS_CMP_GE:
		return observed >= cmp.value;
	}
	return FALSE;
}

const char *
gs_cmp_op_text(GsCmpOp op)
{
	static const char *const text[] = {"==", "!=", "<", "<=", ">", ">="};

	g_return_val_if_fail(op < G_N_ELEMENTS(text), "?");
	return text[op];
}

/* ---- what every driver derives from a task the same way ---- */

char *
gs_task_copy_id(const GsTaskSpec *task, guint copy)
{
	return task->repeat > 1 ? g_strdup_printf("%s#%u", task->id, copy) : g_strdup(task->id);
}

char *
gs_task_thread_name(const GsTaskSpec *task, const char *copy_id, const GsThreadSpec *thread)
{
	const char *dot = strchr(thread->name, '.');

	if (task->repeat <= 1)
		return g_strdup(thread->name);
	if (dot != NULL && strncmp(thread->name, task->id, (gsize) (dot - thread->name)) == 0)
		return g_strconcat(copy_id, dot, NULL);
	return g_strconcat(thread->name, strchr(copy_id, '#'), NULL);
}

/* Whether @ops, nested ones included, hold a free of another thread's buffers. */
static gboolean
ops_free_across_threads(const GArray *ops)
{
	for (guint i = 0; ops != NULL && i < ops->len; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		if ((op->kind == GS_OP_FREE && op->free.thread != NULL) ||
		    (op->kind == GS_OP_RETRY && ops_free_across_threads(op->retry.ops)) ||
		    (op->kind == GS_OP_REPEAT && ops_free_across_threads(op->repeat.ops)))
			return TRUE;
	}
	return FALSE;
}

static gboolean
threads_free_across(const GPtrArray *threads)
{
	for (guint i = 0; i < threads->len; i++) {
		if (ops_free_across_threads(((const GsThreadSpec *) threads->pdata[i])->ops))
			return TRUE;
	}
	return FALSE;
}

GsThreadSpec *
gs_workload_thread(const GsWorkload *w, const char *name, const GsTaskSpec **task)
{
	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *t = w->tasks->pdata[i];

		for (guint j = 0; j < t->threads->len; j++) {
			GsThreadSpec *spec = t->threads->pdata[j];

			if (strcmp(spec->name, name) != 0)
				continue;
			if (task != NULL)
				*task = t;
			return spec;
		}
	}
	if (task != NULL)
		*task = NULL;
	for (guint i = 0; i < w->pool_threads->len; i++) {
		GsThreadSpec *spec = w->pool_threads->pdata[i];

		if (strcmp(spec->name, name) == 0)
			return spec;
	}
	return NULL;
}

void
gs_workload_make_task(const GsWorkload *w, guint index)
{
	GsTaskMaker *m = w->maker;
	GsTaskSpec *task;

	g_return_if_fail(index < w->tasks->len);
	task = w->tasks->pdata[index];
	if (m == NULL || index < m->first || task->threads->len > 0)
		return;
	if (index < m->next) {
		m->rewind(m);
		m->next = m->first;
	}
	/* The draws of the tasks between go by, whether those are made or not. */
	for (; m->next < index; m->next++)
		m->make(m, NULL, m->next - m->first);
	m->make(m, task, index - m->first);
	m->next++;
}

void
gs_workload_drop_task(const GsWorkload *w, guint index)
{
	g_return_if_fail(index < w->tasks->len);
	if (w->maker != NULL && index >= w->maker->first)
		g_ptr_array_set_size(((GsTaskSpec *) w->tasks->pdata[index])->threads, 0);
}

gboolean
gs_workload_frees_across_threads(const GsWorkload *w)
{
	for (guint i = 0; i < w->tasks->len; i++) {
		if (threads_free_across(((const GsTaskSpec *) w->tasks->pdata[i])->threads))
			return TRUE;
	}
	return threads_free_across(w->pool_threads);
}

gint64
gs_task_start_priority(const GsTaskSpec *task, GsPriorityMode mode, guint id_rank, guint started)
{
	if (task->priority > 0)
		return G_MAXINT64 - (gint64) task->priority;
	if (mode == GS_PRIORITY_TASK_ID)
		return GS_POLICY_PRIORITY_TOP - id_rank;
	return GS_POLICY_PRIORITY_TOP - started;
}

/* Whether every task id is written as an integer (then task_id ranks by value). */
static gboolean
ids_are_integers(const GsWorkload *w)
{
	for (guint i = 0; i < w->tasks->len; i++) {
		const char *id = ((GsTaskSpec *) w->tasks->pdata[i])->id;

		if (!g_ascii_string_to_signed(id, 10, G_MININT64, G_MAXINT64, NULL, NULL))
			return FALSE;
	}
	return TRUE;
}

typedef struct {
	gint64 id;   /* the written id, or the task's place in the file */
	guint copy;  /* the copy's place among all copies, in file order */
} IdKey;

static int
compare_id_keys(gconstpointer a, gconstpointer b)
{
	const IdKey *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->copy < y->copy ? -1 : x->copy > y->copy;
}

GArray *
gs_workload_id_ranks(const GsWorkload *w)
{
	g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(IdKey));
	GArray *ranks = g_array_new(FALSE, TRUE, sizeof(guint));
	gboolean integers = ids_are_integers(w);

	for (guint i = 0; i < w->tasks->len; i++) {
		const GsTaskSpec *task = w->tasks->pdata[i];

		for (guint k = 0; k < MAX(task->repeat, 1); k++) {
			IdKey key = {.id = i, .copy = keys->len};

			if (integers)
				g_ascii_string_to_signed(task->id, 10, G_MININT64, G_MAXINT64,
							 &key.id, NULL);
			g_array_append_val(keys, key);
		}
	}
	g_array_sort(keys, compare_id_keys);
	g_array_set_size(ranks, keys->len);
	for (guint i = 0; i < keys->len; i++)
		g_array_index(ranks, guint, g_array_index(keys, IdKey, i).copy) = i;
	return ranks;
}
