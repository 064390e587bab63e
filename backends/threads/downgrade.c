/*
 * gpusim: the real-thread driver: the proactive downgrade's threads (see driver.h).
 */
#include "config.h"

#include "backends/threads/driver.h"

/* ---- proactive downgrade (cuCascade's hysteresis, policy.spill.proactive) ---- */

/*
 * Once a GPU's downgrade is on (gs_run_downgrade_on()), the tier model's
 * victims move to the host one at a time until the charge is below the
 * stop. The copies are made by threads of the driver's
 * own, one per GPU, so no task waits for them; they sleep until an
 * allocation or an unspill grows a GPU's charge.
 */

void
threads_downgrade_wake(Threads *r)
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

/* Under lock: begins moving @device's next victim to the host into @moves; FALSE if none goes. */
static gboolean
downgrade_begin(Threads *r, guint device, GArray *moves)
{
	gboolean *on = &g_array_index(r->downgrading, gboolean, device);
	GsMemBuf *b;

	if (!gs_run_downgrade_on(&r->tier_ops, device, on))
		return FALSE;
	b = gs_memory_downgrade_victim(r->mem, device, now(r), r->moves);
	return b != NULL && threads_move_begin(r, b->owner, GS_TIER_HOST, moves);
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
			threads_note_quiet(r);
			pthread_cond_wait(&r->downgrade_cond, &r->lock);
			continue;
		}
		r->active++; /* a parked thread may be waiting for the room this copy makes */
		threads_engine_unlock(r);
		threads_move_make(r, bk, &g_array_index(moves, Move, 0), "proactive downgrade");
		pthread_mutex_lock(&r->lock);
		downgrade_looks(dg); /* it looks again once the copy lands */
		if (r->virtual_clock)
			threads_timed_wait(r, &dg->timed, &r->downgrade_cond,
				   gs_time_add(now(r), g_array_index(moves, Move, 0).modelled),
				   &r->ended);
		r->active--;
		count_event(r);
		threads_move_land(r, bk, GS_NO_THREAD, &g_array_index(moves, Move, 0));
		g_array_set_size(moves, 0);
		threads_copies_changed(r);
	}
	pthread_mutex_unlock(&r->lock);
	gs_backend_thread_end(r->ops, r->bk, bk);
	return NULL;
}

/* Starts a downgrader per GPU when the run downgrades proactively. */
void
threads_downgrader_start(Threads *r)
{
	guint n;

	if (!r->w->policy.spill.proactive || r->mem == NULL || !gs_memory_spills(r->mem))
		return;
	n = gs_memory_n_gpus(r->mem);
	r->downgrading = g_array_new(FALSE, TRUE, sizeof(gboolean));
	g_array_set_size(r->downgrading, n);
	threads_cond_init(&r->downgrade_cond);
	r->downgraders = g_new0(Downgrader, n);
	for (guint d = 0; d < n; d++) {
		r->downgraders[d] = (Downgrader){.r = r, .device = d};
		if (pthread_create(&r->downgraders[d].thread, NULL, downgrader_main, &r->downgraders[d]) != 0)
			g_error("cannot start the proactive downgrade's threads");
	}
}

/* After the run ended: each downgrader lands its copy in flight, if any, and goes. */
void
threads_downgrader_join(Threads *r)
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

