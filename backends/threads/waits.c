/*
 * gpusim: the real-thread driver: how a thread waits, and how it is woken (see driver.h).
 */
#include "config.h"

#include <time.h>

#include "backends/threads/driver.h"

/* ---- time ---- */

/*
 * Plain pthreads rather than GMutex/GCond: GLib implements those with futexes
 * on Linux, which ThreadSanitizer cannot see, and the tests run under it.
 * Condition variables wait on CLOCK_MONOTONIC, the clock of
 * g_get_monotonic_time().
 */
void
threads_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* Waits until the monotonic microsecond @deadline at most. */
void
threads_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, gint64 deadline)
{
	struct timespec ts = {.tv_sec = deadline / G_USEC_PER_SEC,
			      .tv_nsec = (deadline % G_USEC_PER_SEC) * 1000};

	pthread_cond_timedwait(cond, mutex, &ts);
}

/* ---- logging ---- */

void
threads_log_to(Threads *r, GArray *log, GsLogEntry *entry)
{
	LogItem item = {.entry = *entry};

	if (r->opts.log == NULL || r->ended)
		return;
	item.entry.time = now(r);
	item.seq = atomic_fetch_add(&r->seq, 1);
	g_array_append_val(log, item);
}

/* Under lock. */
void
threads_log_locked(Threads *r, GsLogEntry *entry)
{
	threads_log_to(r, r->log, entry);
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
void
threads_flush_logs(Threads *r)
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

static gboolean
counts_active(Status s)
{
	return s == GS_RUN_READY || s == GS_RUN_SLEEPING;
}

/* Under lock: the run loop may move the virtual clock now. */
void
threads_note_quiet(Threads *r)
{
	if (r->virtual_clock && quiet(r))
		pthread_cond_broadcast(&r->done_cond);
}

/*
 * Every change between active and waiting, and into or out of done,
 * happens under lock, so `active` and the live list are exact there.
 */
void
threads_set_status(Threads *r, Worker *t, Status s)
{
	Status old = atomic_exchange(&t->status, s);

	r->active += counts_active(s);
	r->active -= counts_active(old);
	gs_run_members_put(&r->live, t, s != GS_RUN_DONE);
	threads_note_quiet(r);
}

/* Under lock: the engine's queued wake-ups reach their threads. */
void
threads_drain_wakes(Threads *r)
{
	GsThreadId id;

	while (gs_engine_pop_wake(r->engine, &id)) {
		Worker *t = thread_of(r, id);

		if (t == NULL)
			continue;
		/*
		 * A thread told WAIT may not have parked yet: the flag makes
		 * threads_park() return at once. A stale flag costs one more look at
		 * the engine, which answers WAIT again.
		 */
		t->woken = TRUE;
		if (atomic_load(&t->status) == GS_RUN_PARKED) {
			threads_set_status(r, t, GS_RUN_READY);
			pthread_cond_signal(&t->cond);
		}
	}
}

void
threads_engine_lock(gpointer data)
{
	pthread_mutex_lock(&((Threads *) data)->lock);
}

/*
 * Every section under the lock ends here: the engine's wake-ups go out, and
 * the downgraders look again (a section may have grown a GPU's charge or
 * unlocked a victim).
 */
void
threads_engine_unlock(gpointer data)
{
	Threads *r = data;

	threads_drain_wakes(r);
	threads_downgrade_wake(r);
	pthread_mutex_unlock(&r->lock);
}

/* Under lock: asks the thread to stop, wherever it waits. */
void
threads_stop_thread(Worker *t)
{
	atomic_store(&t->stop, TRUE);
	pthread_cond_signal(&t->cond);
	pthread_mutex_lock(&t->sleep_lock);
	pthread_cond_signal(&t->sleep_cond);
	pthread_mutex_unlock(&t->sleep_lock);
}

/*
 * Virtual clock, under lock: waits on @cond until the run loop moves the
 * clock to @until (advance_clock ends the wait), or until *@stop.
 */
void
threads_timed_wait(Threads *r, TimedWait *w, pthread_cond_t *cond, GsTime until, atomic_bool *stop)
{
	if (now(r) >= until || atomic_load(stop))
		return;
	*w = (TimedWait){.on = TRUE, .deadline = until};
	r->idle++;
	threads_note_quiet(r);
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
void
threads_copies_changed(Threads *r)
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
void
threads_wait_copies(Worker *t)
{
	Threads *r = t->r;
	guint64 changes = r->copies_changes;

	threads_drain_wakes(r);
	r->copy_waiters++;
	r->idle++;
	threads_note_quiet(r);
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
	threads_timed_wait(r, &t->timed, &t->cond, until, &t->stop);
	ok = !atomic_load(&t->stop);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* Waits until scenario time @until or a stop; FALSE when stopped. */
gboolean
threads_wait_until(Worker *t, GsTime until)
{
	gint64 deadline = real_at(t->r, until);
	gboolean stopped;

	count_event(t->r);
	if (t->r->virtual_clock)
		return wait_virtual(t, until);

	pthread_mutex_lock(&t->sleep_lock);
	while (!(stopped = atomic_load(&t->stop)) && g_get_monotonic_time() < deadline)
		threads_cond_wait_until(&t->sleep_cond, &t->sleep_lock, deadline);
	pthread_mutex_unlock(&t->sleep_lock);
	return !stopped;
}

/* ---- the GPU semaphore (under lock) ---- */

/*
 * TRUE if @t's task holds the GPU permit or takes it now; else the thread
 * waits for it. FALSE: the thread was stopped meanwhile.
 */
gboolean
threads_take_permit(Worker *t)
{
	Threads *r = t->r;
	Task *task = t->task;
	gboolean ok;

	/* Held until the task's threads have all exited: readable without the lock. */
	if (task == NULL || gs_run_task_has_permit(&task->run))
		return TRUE;
	pthread_mutex_lock(&r->lock);
	if (!gs_run_tasks_take_permit(&r->run, &task->run)) {
		threads_set_status(r, t, GS_RUN_SEMAPHORE);
		t->semaphore_since = now(r);
		while (atomic_load(&t->status) == GS_RUN_SEMAPHORE && !atomic_load(&t->stop))
			pthread_cond_wait(&t->cond, &r->lock);
		count_event(r);
		if (atomic_load(&t->status) == GS_RUN_SEMAPHORE) {
			r->res->totals.semaphore_wait_ns += now(r) - t->semaphore_since;
			threads_set_status(r, t, GS_RUN_READY);
		}
	}
	ok = !atomic_load(&t->stop);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/* ---- parking in the engine ---- */

/* Waits for the engine's wake-up; FALSE when stopped first. */
gboolean
threads_park(Worker *t)
{
	Threads *r = t->r;
	gboolean ok;

	pthread_mutex_lock(&r->lock);
	if (!t->woken) {
		threads_set_status(r, t, GS_RUN_PARKED);
		t->parked_since = now(r);
		while (!t->woken && !atomic_load(&t->stop))
			pthread_cond_wait(&t->cond, &r->lock);
		count_event(r);
		if (atomic_load(&t->status) == GS_RUN_PARKED)
			threads_set_status(r, t, GS_RUN_READY);
	}
	t->woken = FALSE;
	ok = !atomic_load(&t->stop);
	pthread_mutex_unlock(&r->lock);
	return ok;
}

