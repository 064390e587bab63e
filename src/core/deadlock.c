/*
 * gpusim: the deadlock check over a snapshot of thread records.
 *
 * Task sets are hash sets used only for membership and size; the victims are
 * chosen by priority, a total order, so no decision depends on hash order.
 * Task ids are stored in the pointers themselves (they fit on every platform
 * libgpusim builds on, where gintptr is 64 bits wide).
 */
#include "config.h"

#include <gpusim/deadlock.h>

G_STATIC_ASSERT(sizeof(gintptr) >= sizeof(GsTaskId));

#define TASK_KEY(task) ((gpointer) (gintptr) (task))

struct GsDeadlockScratch {
	GHashTable *all;        /* tasks with a dedicated thread */
	GHashTable *blocked;    /* tasks with a blocked dedicated thread */
	GHashTable *unblocking; /* tasks some unblocked pool thread works for */
	GHashTable *bufn;       /* tasks counted as BUFN */
	GHashTable *pool_count; /* task -> (pool threads << 32 | BUFN-or-above ones) */
};

GsDeadlockScratch *
gs_deadlock_scratch_new(void)
{
	GsDeadlockScratch *s = g_new0(GsDeadlockScratch, 1);

	s->all = g_hash_table_new(g_direct_hash, g_direct_equal);
	s->blocked = g_hash_table_new(g_direct_hash, g_direct_equal);
	s->unblocking = g_hash_table_new(g_direct_hash, g_direct_equal);
	s->bufn = g_hash_table_new(g_direct_hash, g_direct_equal);
	s->pool_count = g_hash_table_new(g_direct_hash, g_direct_equal);
	return s;
}

void
gs_deadlock_scratch_free(GsDeadlockScratch *s)
{
	if (s == NULL)
		return;
	g_hash_table_destroy(s->all);
	g_hash_table_destroy(s->blocked);
	g_hash_table_destroy(s->unblocking);
	g_hash_table_destroy(s->bufn);
	g_hash_table_destroy(s->pool_count);
	g_free(s);
}

static void
scratch_clear(GsDeadlockScratch *s)
{
	g_hash_table_remove_all(s->all);
	g_hash_table_remove_all(s->blocked);
	g_hash_table_remove_all(s->unblocking);
	g_hash_table_remove_all(s->bufn);
	g_hash_table_remove_all(s->pool_count);
}

static gboolean
outside_contains(const GsThreadId *outside, guint n_outside, GsThreadId id)
{
	guint lo = 0, hi = n_outside;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;

		if (outside[mid] == id)
			return TRUE;
		if (outside[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return FALSE;
}

gboolean
gs_deadlock_is_bufn_or_above(const GsThreadView *t, const GsThreadId *outside, guint n_outside)
{
	if (t->pool_blocked)
		return TRUE;
	if (t->state == GS_THREAD_BUFN)
		return TRUE;
	if (t->state == GS_THREAD_BLOCKED)
		return FALSE;
	return outside != NULL && outside_contains(outside, n_outside, t->id);
}

static void
count_pool_thread(GsDeadlockScratch *s, const GsThreadView *t, gboolean blocked, gboolean bufn)
{
	for (guint i = 0; i < t->pool_tasks->len; i++) {
		gpointer key = TASK_KEY(g_array_index(t->pool_tasks, GsTaskId, i));
		guint64 packed = (guint64) (gintptr) g_hash_table_lookup(s->pool_count, key);

		packed += ((guint64) 1 << 32) + (bufn ? 1 : 0);
		g_hash_table_insert(s->pool_count, key, (gpointer) (gintptr) packed);
		if (!blocked)
			g_hash_table_add(s->unblocking, key);
	}
}

/* Candidates for the two victims, found in the same pass. */
typedef struct {
	const GsThreadView *lowest_blocked;
	GsPriority lowest_blocked_prio;
	guint n_blocked_threads;
	const GsThreadView *split;
	GsPriority split_prio;
} Candidates;

static void
consider(Candidates *c, GsTaskPriorities *prio, const GsDeadlockOpts *opts, const GsThreadView *t)
{
	GsPriority p;

	if (t->state != GS_THREAD_BLOCKED && t->state != GS_THREAD_BUFN)
		return;
	p = gs_thread_priority(prio, t, opts->pool_priority);
	if (t->state == GS_THREAD_BLOCKED) {
		c->n_blocked_threads++;
		if (c->lowest_blocked == NULL || gs_priority_compare(p, c->lowest_blocked_prio) < 0) {
			c->lowest_blocked = t;
			c->lowest_blocked_prio = p;
		}
		return;
	}
	if (c->split == NULL ||
	    (opts->split_victim == GS_SPLIT_HIGHEST ? gs_priority_compare(p, c->split_prio) > 0
						    : gs_priority_compare(p, c->split_prio) < 0)) {
		c->split = t;
		c->split_prio = p;
	}
}

static guint
count_blocked_tasks(GsDeadlockScratch *s)
{
	GHashTableIter iter;
	gpointer key;
	guint n = 0;

	/* Counting only: the iteration order cannot matter. */
	g_hash_table_iter_init(&iter, s->blocked);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		if (!g_hash_table_contains(s->unblocking, key))
			n++;
	}
	return n;
}

static void
add_pool_bufn_tasks(GsDeadlockScratch *s)
{
	GHashTableIter iter;
	gpointer key, value;

	g_hash_table_iter_init(&iter, s->pool_count);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		guint64 packed = (guint64) (gintptr) value;

		if ((packed & 0xffffffffu) >= (packed >> 32))
			g_hash_table_add(s->bufn, key);
	}
}

static gboolean
all_tasks_bufn(GsDeadlockScratch *s, const GsDeadlockOpts *opts, GsDeadlockVerdict *v)
{
	GHashTableIter iter;
	gpointer key;

	v->n_bufn_tasks = g_hash_table_size(s->bufn);
	if (!opts->strict_all_bufn)
		return v->n_bufn_tasks == v->n_tasks;
	g_hash_table_iter_init(&iter, s->all);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		if (!g_hash_table_contains(s->bufn, key))
			return FALSE;
	}
	return TRUE;
}

GsDeadlockVerdict
gs_deadlock_check(const GsThreadView *const *threads, guint n_threads, GsTaskPriorities *prio,
		  const GsDeadlockOpts *opts, const GsThreadId *outside, guint n_outside,
		  GsDeadlockScratch *scratch)
{
	g_autoptr(GsDeadlockScratch) own = NULL;
	GsDeadlockScratch *s = scratch;
	GsDeadlockVerdict v = {0};
	Candidates c = {0};

	if (s == NULL)
		s = own = gs_deadlock_scratch_new();
	else
		scratch_clear(s);

	for (guint i = 0; i < n_threads; i++) {
		const GsThreadView *t = threads[i];
		gboolean bufn = gs_deadlock_is_bufn_or_above(t, outside, n_outside);
		gboolean blocked = bufn || t->state == GS_THREAD_BLOCKED;

		if (t->is_pool) {
			count_pool_thread(s, t, blocked, bufn);
		} else {
			g_hash_table_add(s->all, TASK_KEY(t->task));
			if (blocked)
				g_hash_table_add(s->blocked, TASK_KEY(t->task));
			if (bufn)
				g_hash_table_add(s->bufn, TASK_KEY(t->task));
		}
		consider(&c, prio, opts, t);
	}

	v.n_tasks = g_hash_table_size(s->all);
	v.n_blocked_tasks = count_blocked_tasks(s);
	add_pool_bufn_tasks(s);
	v.deadlocked = v.n_tasks > 0 && v.n_blocked_tasks == v.n_tasks;
	if (!v.deadlocked) {
		v.n_bufn_tasks = g_hash_table_size(s->bufn);
		return v;
	}

	v.rollback = c.lowest_blocked;
	v.rollback_retry_once = c.n_blocked_threads == 1 && opts->retry_before_bufn;
	if (all_tasks_bufn(s, opts, &v))
		v.split = c.split;
	return v;
}
