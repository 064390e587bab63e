/*
 * gpusim: where a driver's thread is, one set of statuses for both drivers,
 * and the rules that read them.
 *
 * This module decides which waits count as what. A thread waits on another
 * (a deadlock names it) when it is parked in the engine, in line for a GPU
 * permit or a reservation, or waiting for another thread to allocate the
 * buffer it is to free. The watchdog passes the engine, as waiting outside
 * the allocator, the threads in line for a permit or a reservation or
 * waiting for a buffer's allocation (no free will come from them) and, with
 * policy.sleep_is_blocked, those in a `sleep`.
 */
#ifndef GPUSIM_RUN_THREAD_H
#define GPUSIM_RUN_THREAD_H

#include <gpusim/gpusim.h>

G_BEGIN_DECLS

typedef enum {
	GS_RUN_READY,      /* running ops */
	GS_RUN_BUSY,       /* in a compute the driver times (the simulator) */
	GS_RUN_SLEEPING,   /* in a sleep op */
	GS_RUN_PARKED,     /* waiting in the engine for a wake-up */
	GS_RUN_SEMAPHORE,  /* in line for a GPU permit */
	GS_RUN_RESERVE,    /* in line for a blocking reservation */
	GS_RUN_OWNER,      /* freeing another thread's buffer that thread has not allocated yet */
	GS_RUN_GATE,       /* a copy found the evacuation gate closed (the simulator) */
	GS_RUN_DONE,
} GsRunStatus;

/** Whether a thread in @status waits for something only another thread can give. */
gboolean gs_run_waits_on_another(GsRunStatus status);

/** Whether the watchdog passes a thread in @status as waiting outside the allocator. */
gboolean gs_run_waits_outside(GsRunStatus status, const GsPolicy *policy);

G_END_DECLS

#endif /* GPUSIM_RUN_THREAD_H */
