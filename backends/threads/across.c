/*
 * gpusim: the real-thread driver: a thread that frees another thread's
 * buffers (free: {buf, thread}), as Spark's cleaner and shuffle threads do
 * (see driver.h).
 *
 * The owner's interpreter and its list of held buffers are its own thread's,
 * so in a run where such frees happen each thread holds its interp_lock
 * around its interpreter's calls and its list; the freeing thread takes the
 * owner's (and its own, the lower address first) to move the buffers over,
 * with gs_interp_free_for(); the buffers' records stay in the owner's list
 * until freed. No thread takes the engine lock while it holds another's
 * interp_lock, so the two locks cannot deadlock.
 *
 * The freeing thread first waits, under the engine lock and counted as
 * waiting (GS_RUN_OWNER), until the owner has allocated every buffer the op
 * names, or has ended: the free comes after the allocation, as in the log it
 * was read from. Whether a buffer is allocated is mirrored in the Worker
 * under the engine lock, so that the wait never reads another thread's
 * interpreter. A buffer given away and never freed outlives its thread: at
 * the end of the run it is released, and counted as its task's leak when
 * that task completed, as the simulator does.
 *
 * A compute reads its buffers' bytes while it runs (a kernel, on a GPU): in
 * such a run a compute counts itself a reader of each, under the engine
 * lock, and a buffer freed by another thread meanwhile keeps its bytes
 * until its last reader ends (the books count the free at once, unless the
 * memory model keeps the buffer, as it does for a spillable one in use).
 */
#include "config.h"

#include <string.h>

#include "backends/threads/driver.h"

void
threads_interp_lock(Worker *t)
{
	if (t->r->frees_across)
		pthread_mutex_lock(&t->interp_lock);
}

void
threads_interp_unlock(Worker *t)
{
	if (t->r->frees_across)
		pthread_mutex_unlock(&t->interp_lock);
}

/* The op @t carries out throws @exc: its interpreter hears it under its lock. */
void
threads_op_failed(Worker *t, GsException exc)
{
	threads_interp_lock(t);
	gs_interp_op_failed(t->interp, exc, now(t->r));
	threads_interp_unlock(t);
}

/* Under lock: whether @owner has allocated buffer @name. */
static gboolean
owner_allocated(gconstpointer owner, guint name)
{
	const GArray *allocated = ((const Worker *) owner)->allocated;

	return allocated != NULL && name < allocated->len &&
	       g_array_index(allocated, gboolean, name);
}

/* Under lock: whether @owner (NULL: not started) has allocated every buffer @op frees, or ended. */
static gboolean
owner_ready(const Worker *owner, const GsOp *op)
{
	return gs_run_owner_ready(op, owner_allocated, owner,
				  owner != NULL && atomic_load(&owner->status) == GS_RUN_DONE);
}

/* Under lock: the threads waiting to free what @owner allocates, now that it has, go on. */
void
threads_owner_moved(Threads *r, Worker *owner)
{
	for (guint i = 0; i < r->owner_waiters->len;) {
		Worker *w = r->owner_waiters->pdata[i];
		const GsOp *op = w->owner_op;

		if (strcmp(op->free.thread, owner->result->name) == 0 && owner_ready(owner, op)) {
			g_ptr_array_remove_index(r->owner_waiters, i);
			threads_set_status(r, w, GS_RUN_READY);
			pthread_cond_signal(&w->cond);
		} else {
			i++;
		}
	}
}

/* Buffer @name of @t is allocated: a thread waiting to free it may go on. */
void
threads_note_allocated(Worker *t, guint name)
{
	Threads *r = t->r;

	if (!r->frees_across || t->spec->given_away == NULL ||
	    name >= t->spec->given_away->len || !g_array_index(t->spec->given_away, gboolean, name))
		return;
	pthread_mutex_lock(&r->lock);
	if (t->allocated == NULL)
		t->allocated = g_array_new(FALSE, TRUE, sizeof(gboolean));
	if (name >= t->allocated->len)
		g_array_set_size(t->allocated, name + 1);
	g_array_index(t->allocated, gboolean, name) = TRUE;
	threads_owner_moved(r, t);
	threads_engine_unlock(r);
}

/* Under lock: @t waits for the owner @op names; logged once. */
static void
log_free_wait(Worker *t, const Worker *owner, const GsOp *op)
{
	GsLogEntry e = gs_run_free_wait_entry(t->r->w, t->result->name, op, owner_allocated, owner);

	threads_log_locked(t->r, &e);
}

/* Waits until the owner @op names is ready; the owner then, or NULL when @t was stopped. */
static Worker *
wait_for_owner(Worker *t, const GsOp *op)
{
	Threads *r = t->r;
	Worker *owner;
	gboolean logged = FALSE;

	pthread_mutex_lock(&r->lock);
	while (!owner_ready(owner = g_hash_table_lookup(r->by_name, op->free.thread), op) &&
	       !atomic_load(&t->stop)) {
		if (!logged)
			log_free_wait(t, owner, op);
		logged = TRUE;
		t->owner_op = op;
		threads_set_status(r, t, GS_RUN_OWNER);
		g_ptr_array_add(r->owner_waiters, t);
		pthread_cond_wait(&t->cond, &r->lock);
		count_event(r);
		g_ptr_array_remove(r->owner_waiters, t);
		if (atomic_load(&t->status) == GS_RUN_OWNER)
			threads_set_status(r, t, GS_RUN_READY);
	}
	if (atomic_load(&t->stop))
		owner = NULL;
	threads_engine_unlock(r);
	return owner;
}

/*
 * Under lock: @t's compute reads the buffers named @names that it holds
 * now; a thread that frees one meanwhile leaves its bytes to the compute's
 * end, as a reference would keep them.
 */
void
threads_reading_begin(Worker *t, const GsNames *names)
{
	const guint *name = gs_names_data(names);

	for (guint i = 0; i < names->len; i++) {
		for (guint k = 0; k < t->live->len; k++) {
			Held *held = t->live->pdata[k];

			if (held->name != name[i])
				continue;
			held->readers++;
			g_ptr_array_add(t->reading, held);
		}
	}
}

/* Under lock: @t's compute is over; a buffer freed while it read goes with its last reader. */
void
threads_reading_end(Worker *t)
{
	Threads *r = t->r;

	for (guint i = 0; i < t->reading->len; i++) {
		Held *held = t->reading->pdata[i];

		if (--held->readers > 0 || !held->freed_while_read)
			continue;
		gs_backend_free(r->ops, r->bk, t->bk, r->mem != NULL ? held->freed_in : held->space->tier,
				held->backend);
		g_free(held);
	}
	g_ptr_array_set_size(t->reading, 0);
}

/*
 * Under lock: whether a compute reads @held, which a thread frees now; then
 * its bytes wait for the last reader (threads_reading_end()).
 */
gboolean
threads_defer_to_readers(Held *held)
{
	held->freed_while_read = held->readers > 0;
	return held->freed_while_read;
}

/* threads_defer_to_readers(), for a run without tiers (only frees across threads can meet a reader). */
gboolean
threads_read_elsewhere(Threads *r, Held *held)
{
	gboolean read;

	if (!r->frees_across)
		return FALSE;
	pthread_mutex_lock(&r->lock);
	read = threads_defer_to_readers(held);
	threads_engine_unlock(r);
	return read;
}

/* Both threads' interpreters, the lower address first, so that two taking each other's cannot deadlock. */
static void
lock_pair(Worker *a, Worker *b)
{
	Worker *first = a < b ? a : b, *second = a < b ? b : a;

	pthread_mutex_lock(&first->interp_lock);
	if (second != first)
		pthread_mutex_lock(&second->interp_lock);
}

static void
unlock_pair(Worker *a, Worker *b)
{
	pthread_mutex_unlock(&a->interp_lock);
	if (b != a)
		pthread_mutex_unlock(&b->interp_lock);
}

gboolean
threads_free_for(Worker *t, const GsOp *op)
{
	Worker *owner = wait_for_owner(t, op);

	if (owner == NULL)
		return FALSE;
	lock_pair(t, owner);
	gs_interp_free_for(t->interp, owner->interp, op);
	unlock_pair(t, owner);
	return TRUE;
}

/* A buffer nobody freed goes back, through the tiers in a run that has them; its size. */
static gint64
release_held(Threads *r, Held *held)
{
	gint64 size;
	GsTier tier;

	if (r->mem == NULL) {
		gs_backend_free(r->ops, r->bk, NULL, held->space->tier, held->backend);
		threads_space_give(held->space, held->charged);
		return held->charged;
	}
	size = held->mb->size;
	tier = held->mb->tier;
	gs_memory_free_buffer(r->mem, held->mb, NULL); /* nothing holds it: every thread ended */
	gs_backend_free(r->ops, r->bk, NULL, tier, held->backend);
	return size;
}

/*
 * Every thread has been joined: the buffers given away that nobody freed go
 * back, a leak of their owner's task if it completed (after the outcomes are
 * settled).
 */
void
threads_release_given_away(Threads *r)
{
	for (guint i = 0; r->frees_across && i < r->threads->len; i++) {
		Worker *t = r->threads->pdata[i];
		gint64 bytes = 0;

		for (guint k = 0; k < t->live->len; k++) {
			Held *held = t->live->pdata[k];

			bytes += release_held(r, held);
			g_free(held);
		}
		g_ptr_array_set_size(t->live, 0);
		if (bytes > 0 && t->task != NULL &&
		    t->task->run.result->outcome == GS_OUTCOME_COMPLETED)
			gs_run_tasks_report_leak(&r->run, &t->task->run, t->result->name, bytes);
	}
}
