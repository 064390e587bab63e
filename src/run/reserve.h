/*
 * gpusim: reservations in the memory tiers, whichever driver runs them
 * (cuCascade's reservation requests, SPEC §1.3).
 *
 * This module decides what a `reserve` and a `release` op do to a thread's
 * reservations and to the run: a name reserved again gives back its old
 * reservation first; the tier model grants, refuses or makes wait (a
 * blocking request, policy.reservation); a granted reservation is numbered
 * (a buffer credits only the grant it was made in); a waiting thread joins
 * the run's FIFO of waiters and is granted, first come first served, when
 * the driver asks again (gs_run_reserve_retry(), after a release or a free).
 * Every grant, refusal, wait and release is logged (GS_LOG_RESERVE,
 * GS_LOG_RELEASE). How a thread waits, and when memory coming free is
 * noticed, are the driver's, through GsRunReserveHooks.
 */
#ifndef GPUSIM_RUN_RESERVE_H
#define GPUSIM_RUN_RESERVE_H

#include <gpusim/gpusim.h>

#include "run/result.h"
#include "tiers/memory.h"

G_BEGIN_DECLS

/* One thread's reservations: a member of the driver's thread record. */
typedef struct {
	GPtrArray *by_name;      /* GsMemReservation*, by the spec's reservation names */
	const GsOp *waiting;     /* the reserve op it waits on; NULL while it does not */
	const char *thread;      /* its name, for the log */
	const GsThreadSpec *spec;
} GsRunReservations;

typedef struct {
	/* The reservations of @thread, a thread the driver put in line. */
	GsRunReservations *(*of)(gpointer thread);
	/* A reservation of @tier was granted: the run's peaks, and that something changed. */
	void (*granted)(gpointer driver, GsTier tier);
	/* A reservation of @tier was given back: its memory came free. */
	void (*released)(gpointer driver, GsTier tier);
	/* @thread, in line, has its reservation now: it goes on. */
	void (*wake)(gpointer driver, gpointer thread);
	/* An entry for the event log, its time not set. */
	void (*log)(gpointer driver, GsLogEntry *entry);
} GsRunReserveHooks;

/* The run's side: the tier model, the threads in line, the grants made. */
typedef struct {
	GsMemory *mem;
	GQueue waiters;          /* driver threads waiting for a reservation, FIFO */
	guint64 made;            /* grants so far: the next grant's serial is made + 1 */
	const GsRunReserveHooks *hooks;
	gpointer driver;
} GsRunReserve;

void gs_run_reserve_init(GsRunReserve *run, GsMemory *mem, const GsRunReserveHooks *hooks,
			 gpointer driver);
void gs_run_reserve_clear(GsRunReserve *run);

void gs_run_reservations_init(GsRunReservations *mine, const char *thread,
			      const GsThreadSpec *spec);
void gs_run_reservations_clear(GsRunReservations *mine);

/** The reservation called by the spec's name @index (made empty on first use). */
GsMemReservation *gs_run_reservation(GsRunReservations *mine, guint index);

/**
 * Carries out @op, a reserve op of @thread: GS_RESERVATION_WAIT puts it in
 * line, and the driver makes it wait until hooks.wake (or stops it:
 * gs_run_reserve_leave_line()); GS_RESERVATION_TOO_LARGE is the driver's to
 * throw.
 */
GsReservationOutcome gs_run_reserve(GsRunReserve *run, GsRunReservations *mine, gpointer thread,
				    const GsOp *op);

/** Gives back the reservation called by name @index, if held. */
void gs_run_release(GsRunReserve *run, GsRunReservations *mine, guint index);

/** Gives back every reservation @mine holds (its thread ends). */
void gs_run_release_all(GsRunReserve *run, GsRunReservations *mine);

/** Asks again for every reservation in line, in order; those granted are woken. */
void gs_run_reserve_retry(GsRunReserve *run);

/** @thread, stopped while in line, leaves it. */
void gs_run_reserve_leave_line(GsRunReserve *run, GsRunReservations *mine, gpointer thread);

G_END_DECLS

#endif /* GPUSIM_RUN_RESERVE_H */
