/*
 * gpusim: the discrete-event simulator, the default driver of the engine.
 *
 * This module decides nothing about policy: it replays a workload on a
 * virtual clock (integer nanoseconds) and carries out what the interpreter
 * and the engine decide. It owns the modelled memory (src/tiers/memory.h: GPU,
 * host and disk spaces, reservations, spillable buffers, the evacuation
 * gate), the event heap (sim/heap.h), the periodic watchdog, proactive
 * downgrading, and the detection of a run in which threads wait and nothing
 * can wake them. Task attempts, executor slots and the GPU semaphore are the
 * run layer's (src/run/tasks.h), which both drivers share.
 *
 * The loop, one pass per instant (SPEC §3, DESIGN.md):
 *   1. pop every event due now, in (time, sequence) order: task arrivals,
 *      thread resumptions, watchdog ticks;
 *   2. run each: a resumed thread steps its interpreter until it computes,
 *      sleeps, waits or ends; what it frees or finishes may wake others, whose
 *      resumptions are scheduled now, after the events already due;
 *   3. sample the timeline when something changed.
 * A thread parked in the engine is resumed only by a wake-up the engine
 * queued; a thread waiting for the GPU semaphore only by a permit. The run
 * ends when every task has completed or failed all its attempts (outcome
 * completed or failed), when threads wait and no event is left that could
 * wake them (deadlock), or at --max-time or after max_events events (timeout).
 * Two more stops end in a timeout, with a stop_reason: the next event lies
 * past the last representable instant (GS_TIME_END: time additions saturate
 * there rather than wrap), or one instant has taken more events than any
 * workload needs (a livelock: time would never pass, and --max-time never
 * come).
 *
 * Determinism: events at one instant fire in the order they were scheduled;
 * tasks and threads are visited in file order; nothing depends on hash order,
 * wall-clock time or an unseeded random number. Same workload, same result.
 */
#ifndef GPUSIM_SIM_H
#define GPUSIM_SIM_H

#include <gpusim/gpusim.h>

#include "run/options.h"

G_BEGIN_DECLS

/** Runs @workload to its end; never fails (a bad workload is the loader's to reject). */
GS_API GsResult *gs_sim_run(const GsWorkload *workload, const GsRunOptions *options);

G_END_DECLS

#endif /* GPUSIM_SIM_H */
