/*
 * gpusim: the real-thread driver: the engine and the interpreter on OS threads.
 *
 * This module decides how a scenario is replayed with one OS thread per
 * simulated thread, in real time, on a backend (backend.h) that supplies the
 * memory and the work: how threads wait and are woken (a condition variable
 * each), a watchdog at policy.watchdog that passes the threads in `sleep`
 * (and those waiting for a permit) as waiting outside the allocator, the end
 * of a task stopping its other threads, and the detection of a run in which
 * every thread waits and nothing can wake them. Task attempts, executor
 * slots and the GPU semaphore are the run layer's (src/run/tasks.h). Its
 * result is a GsResult as every driver's, so `--json`, the summary and
 * `expect:` work unchanged, with times measured instead of modelled.
 *
 * Locking (GS_LOCKING_FAST, the default). The engine is not thread-safe and
 * sits behind one mutex, taken by the interpreter around each engine call
 * (GsInterpHooks). The common path does not take it: memory is admitted by a
 * bounded atomic counter per space (compare-and-swap of used + size against
 * the capacity), and an allocation that fits, made by a thread whose state
 * is THREAD_RUNNING while no thread is in any other state, is recorded by the
 * thread alone: the engine would have gone RUNNING -> ALLOC -> RUNNING and
 * woken nobody. A free takes the mutex only when some thread is inside the
 * protocol. Why this loses no wake-up: a thread entering the protocol counts
 * itself as contended (under the mutex) before it looks at the counter, and a
 * freeing thread gives the bytes back before it looks at the contended count;
 * with both sequentially consistent, either the allocator sees the bytes or
 * the freer sees the allocator and tells the engine. GS_LOCKING_GLOBAL routes
 * every allocation and free through the mutex, as spark-rapids-jni's single
 * adaptor lock does, for comparison (bench/bench-threads.c).
 *
 * Memory tiers. A run that spills (policy.spill.enabled), reserves (a
 * reserve op anywhere), uses fair-share admission or allocates host memory
 * admits through the tier model (src/tiers/memory.h) under the
 * engine mutex instead of the counters, with either locking: the model
 * decides residence, charges (host memory in whole blocks), victims,
 * reservations and the evacuation gate whichever driver runs, and the
 * backend's move() copies the bytes, outside the mutex, checking the
 * buffer's pattern where it lands. On-demand spilling inside a failing
 * allocation, the unspill before a compute, compute and stream locks, sync,
 * spillable/unspillable, retry blocks' spillable inputs,
 * blocking/or_null/upto reservations, the over-reservation policies,
 * fair-share admission, the tasks' host page tables and proactive
 * downgrade (on a thread of the driver's own) are all carried out.
 * Leaks are reported at task end in every run.
 *
 * A thread that frees another thread's buffers (free: {buf, thread}) waits,
 * as the simulator's does, until the owner has allocated them (or ended),
 * then takes them over and frees them as its own (driver.h, across.c); a
 * buffer given away and never freed is its task's leak at the end of the
 * run. Not yet in a run with memory tiers, which is refused
 * (GS_BACKEND_ERROR_UNAVAILABLE).
 *
 * Time (GS_CLOCK_REAL, the default): scenario time is real time divided by
 * time_scale (1: real time; 0.1: ten times faster). links.alloc_latency is
 * not added: the real allocation takes what it takes. Event logs are ordered
 * by time, then by the order in which the events were taken; two runs do not
 * give the same bytes.
 *
 * Time (GS_CLOCK_VIRTUAL): the threads, locks, memory and copies are as real,
 * but scenario time is a clock of the run's own that moves only when every
 * thread waits: for a scenario time (sleep, until, compute), in the engine,
 * for a permit or a reservation, and no copy is in flight and no downgrader
 * has a look to take. It then jumps to the earliest of those times, the next
 * arrival, the watchdog's next tick and --max-time. What happens at one
 * instant still races as real threads do, but the order of instants is the
 * scenario's whatever the machine's speed, so a
 * scenario's `at:` expectations and the outcomes its gaps decide hold on a
 * loaded machine. A compute's work is done at once (no real duration), and
 * makespan and waits are scenario time.
 */
#ifndef GPUSIM_THREADS_H
#define GPUSIM_THREADS_H

#include <gpusim/gpusim.h>

#include "backends/backend.h"
#include "run/options.h"

G_BEGIN_DECLS

/** Counters of one run that the result does not carry. */
typedef struct {
	guint64 fast_allocs;   /* allocations recorded without the engine mutex */
	guint64 locked_allocs; /* allocations that went through the engine */
	guint64 fast_frees, locked_frees;
	GsBackendStats backend;
} GsThreadsStats;

/**
 * Replays @w on @backend with real threads. NULL with @error set when the
 * backend cannot open (GS_BACKEND_ERROR_*), or when the device failed while
 * running (GS_BACKEND_ERROR_FAILED: the run ended there). @stats may be NULL.
 */
GsResult *gs_threads_run(const GsWorkload *w, const GsBackendOps *backend,
			 const GsRunOptions *options, GsThreadsStats *stats, GError **error);

G_END_DECLS

#endif /* GPUSIM_THREADS_H */
