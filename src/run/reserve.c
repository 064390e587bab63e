/*
 * gpusim: reservations in the memory tiers (see reserve.h).
 */
#include "config.h"

#include "run/reserve.h"

void
gs_run_reserve_init(GsRunReserve *run, GsMemory *mem, const GsRunReserveHooks *hooks,
		    gpointer driver)
{
	*run = (GsRunReserve){.mem = mem, .hooks = hooks, .driver = driver};
	g_queue_init(&run->waiters);
}

void
gs_run_reserve_clear(GsRunReserve *run)
{
	g_queue_clear(&run->waiters);
}

void
gs_run_reservations_init(GsRunReservations *mine, const char *thread, const GsThreadSpec *spec)
{
	*mine = (GsRunReservations){.by_name = g_ptr_array_new_with_free_func(g_free),
				    .thread = thread, .spec = spec};
}

void
gs_run_reservations_clear(GsRunReservations *mine)
{
	g_clear_pointer(&mine->by_name, g_ptr_array_unref);
}

GsMemReservation *
gs_run_reservation(GsRunReservations *mine, guint index)
{
	return gs_memory_reservation_at(mine->by_name, index);
}

static void
log_reservation(GsRunReserve *run, GsRunReservations *mine, guint name, GsLogKind kind,
		const char *what, const GsMemReservation *res, gint64 bytes)
{
	GsLogEntry e = {.kind = kind, .thread = mine->thread, .what = what, .bytes = bytes,
			.buf = mine->spec->reservations->pdata[name], .tier = res->tier,
			.device = res->device};

	run->hooks->log(run->driver, &e);
}

static void
grant(GsRunReserve *run, GsRunReservations *mine, guint name, GsMemReservation *res)
{
	res->serial = ++run->made;
	log_reservation(run, mine, name, GS_LOG_RESERVE, "granted", res, res->acct.size);
	run->hooks->granted(run->driver, res->tier);
}

void
gs_run_release(GsRunReserve *run, GsRunReservations *mine, guint index)
{
	GsMemReservation *res = gs_run_reservation(mine, index);
	gint64 refund;

	if (!res->held)
		return;
	refund = gs_memory_release(run->mem, res);
	log_reservation(run, mine, index, GS_LOG_RELEASE, NULL, res, refund);
	run->hooks->released(run->driver, res->tier);
}

void
gs_run_release_all(GsRunReserve *run, GsRunReservations *mine)
{
	for (guint i = 0; i < mine->by_name->len; i++)
		gs_run_release(run, mine, i);
}

GsReservationOutcome
gs_run_reserve(GsRunReserve *run, GsRunReservations *mine, gpointer thread, const GsOp *op)
{
	guint name = op->reserve.res;
	GsMemReservation *res = gs_run_reservation(mine, name);
	GsReservationOutcome outcome;

	gs_run_release(run, mine, name); /* reserved again: the old one goes */
	outcome = gs_memory_reserve(run->mem, op, res);
	if (outcome == GS_RESERVATION_GRANTED) {
		grant(run, mine, name, res);
		return outcome;
	}
	log_reservation(run, mine, name, GS_LOG_RESERVE, gs_reservation_outcome_name(outcome), res,
			op->reserve.size);
	if (outcome == GS_RESERVATION_WAIT) {
		mine->waiting = op;
		g_queue_push_tail(&run->waiters, thread);
	}
	return outcome;
}

void
gs_run_reserve_retry(GsRunReserve *run)
{
	guint n = g_queue_get_length(&run->waiters);

	for (guint i = 0; i < n; i++) {
		gpointer thread = g_queue_pop_head(&run->waiters);
		GsRunReservations *mine = run->hooks->of(thread);
		guint name = mine->waiting->reserve.res;
		GsMemReservation *res = gs_run_reservation(mine, name);

		if (gs_memory_reserve(run->mem, mine->waiting, res) != GS_RESERVATION_GRANTED) {
			g_queue_push_tail(&run->waiters, thread);
			continue;
		}
		mine->waiting = NULL;
		grant(run, mine, name, res);
		run->hooks->wake(run->driver, thread);
	}
}

void
gs_run_reserve_leave_line(GsRunReserve *run, GsRunReservations *mine, gpointer thread)
{
	if (mine->waiting == NULL)
		return;
	g_queue_remove(&run->waiters, thread);
	mine->waiting = NULL;
}
