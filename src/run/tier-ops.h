/*
 * gpusim: the ops of the memory tiers, whichever driver runs them: reserve
 * and release (cuCascade's reservation requests, SPEC §1.3), sync,
 * spillable and unspillable, and what an allocation asks the tier model.
 *
 * This module decides what those ops do to a thread's reservations, its
 * buffers and the run.
 *
 * Reservations: a name reserved again gives back its old reservation
 * first; the tier model grants, refuses or makes wait (a blocking request,
 * policy.reservation); a granted reservation is numbered (a buffer credits
 * only the grant it was made in); a waiting thread joins the run's FIFO of
 * waiters and is granted, first come first served, when the driver asks
 * again (gs_run_reserve_retry(), after a release or a free). Every grant,
 * refusal, wait and release is logged (GS_LOG_RESERVE, GS_LOG_RELEASE).
 *
 * A sync lets the spill store take the buffers the stream held, and memory
 * may come free with it; spillable and unspillable mark the thread's
 * buffers of those names.
 *
 * The evacuation gate's scopes (Shenandoah's protocol, reference §D): a
 * thread enters once however deep its copies nest, a copy that finds no
 * room closes the gate (with policy.evac_gate), and once no thread is in a
 * scope a closed gate that can be reset opens again ("close", "fallback"
 * and "open" are logged).
 *
 * An allocation's request names its device, whether the buffer may spill,
 * whether host memory prefers the pinned pool, the reservation it draws on
 * (whose device then wins) and, when buffers spill, its owner's rank. Beside
 * a pinned pool, a host size no pool could hold is refused before anything
 * is tried, as HostAlloc refuses it: a blocking allocation throws
 * IllegalArgumentException, a non-blocking one gets no buffer.
 *
 * A victim whose copy fell back goes straight from the GPU to disk when
 * policy.spill.host_full says so; otherwise it stays. The host tier's pools
 * of blocks grow one at a time, never shrink, and each growth is logged.
 *
 * Fair-share admission (policy.admission fair_share, Spark's execution
 * pool's rule applied to the GPU): a task's GPU allocation is admitted only
 * if its share grants all of it, as an allocator that cannot take part of a
 * request must; host memory and pool threads need no share.
 *
 * Stream pools (cuCascade's exclusive_stream_pool, one per GPU of
 * memory.gpu.streams): borrow_stream takes an idle stream; with none idle,
 * BLOCK waits in the line until one is returned (each return serves the
 * first waiter for that pool) and GROW makes a new one, which joins the
 * pool for good when returned. A name borrowed again returns its stream
 * first; a thread's streams go back when it ends. Every borrow, wait,
 * growth and return is logged (GS_LOG_STREAM).
 *
 * Spark's execution memory (execution.h) is a tier op too: an acquire that
 * must wait puts the thread in the same line as a blocking reservation,
 * and whatever its op throws once it is carried out there is the thread's
 * to throw when it wakes (gs_run_take_thrown()).
 *
 * A retry block's input buffers may be spilled while it runs. A thread that
 * ends leaves the line, and its locks and reservations go back. The
 * proactive downgrade of a GPU turns on and off with cuCascade's hysteresis
 * ("start" and "stop" are logged); which buffer moves is the tier model's.
 *
 * How a thread waits, which buffers it holds, and what memory coming free
 * does are the driver's, through its GsRunHooks (hooks.h).
 */
#ifndef GPUSIM_RUN_TIER_OPS_H
#define GPUSIM_RUN_TIER_OPS_H

#include <gpusim/gpusim.h>

#include "run/execution.h"
#include "run/hooks.h"
#include "run/result.h"
#include "tiers/memory.h"

G_BEGIN_DECLS

/* One thread's part in the tiers: a member of the driver's thread record. */
struct GsRunThreadTiers {
	GsThreadId id;
	GsGateThread gate;       /* its place in the evacuation gate's scopes */
	GPtrArray *by_name;      /* GsMemReservation*, by the spec's reservation names */
	const GsOp *waiting;     /* the reserve or execution op it waits on; NULL while it does not */
	GsRunTask *task;         /* the task an execution op waits for */
	GsException thrown;      /* what the op it waited on threw once carried out */
	const char *thread;      /* its name, for the log */
	const GsThreadSpec *spec;
	GArray *inputs;          /* GsSpillBufId: buffers made spillable by its retry blocks */
	GArray *locked;          /* GsSpillBufId: the synchronous locks of its compute or unspill */
	GArray *borrowed;        /* GsRunBorrowed: the streams it holds */
};

/* A stream a thread borrowed: its name in the thread's spec and its pool. */
typedef struct {
	guint name;
	guint device;
} GsRunBorrowed;

/* The run's side: the tier model, the threads in line, the grants made. */
typedef struct {
	const GsWorkload *w;
	GsMemory *mem;
	guint gate_scopes;       /* threads in a scope of the gate */
	GQueue waiters;          /* driver threads waiting for a reservation, FIFO */
	guint64 made;            /* grants so far: the next grant's serial is made + 1 */
	GsExecutionPool *fair;   /* policy.admission fair_share: the tasks' GPU shares; NULL: none */
	GsRunExecution *execution; /* Spark's execution memory (memory.execution) */
	guint host_pools;        /* the host tier's pools of blocks as last seen */
	GArray *idle_streams;    /* guint by GPU: the idle streams of its pool */
	GsResult *res;           /* the totals it keeps: gs_run_tiers_report_to() */
	const GsRunHooks *hooks;
	gpointer driver;
} GsRunTiers;

void gs_run_tiers_init(GsRunTiers *run, const GsWorkload *w, GsMemory *mem,
		       const GsRunHooks *hooks, gpointer driver);
void gs_run_tiers_clear(GsRunTiers *run);

void gs_run_thread_tiers_init(GsRunThreadTiers *mine, const GsRunTiers *run, GsThreadId id,
			      const char *thread, const GsThreadSpec *spec);
void gs_run_thread_tiers_clear(GsRunThreadTiers *mine);

/** The reservation called by the spec's name @index (made empty on first use). */
GsMemReservation *gs_run_reservation(GsRunThreadTiers *mine, guint index);

/**
 * Carries out @op, a reserve op of @thread: GS_RESERVATION_WAIT puts it in
 * line, and the driver makes it wait until hooks.wake (or stops it:
 * gs_run_reserve_leave_line()); GS_RESERVATION_TOO_LARGE is the driver's to
 * throw.
 */
GsReservationOutcome gs_run_reserve(GsRunTiers *run, GsRunThreadTiers *mine, gpointer thread,
				    const GsOp *op);

/** Gives back the reservation called by name @index, if held. */
void gs_run_release(GsRunTiers *run, GsRunThreadTiers *mine, guint index);

/** Gives back every reservation @mine holds (its thread ends). */
void gs_run_release_all(GsRunTiers *run, GsRunThreadTiers *mine);

/**
 * The thread is done with the tiers, out of the gate's scope: it leaves the
 * line for a reservation, its locks go, its streams are synchronised (the
 * spill store may take what they held), and every reservation it holds
 * goes back (as cuCascade's RAII reservations do).
 */
void gs_run_thread_tiers_end(GsRunTiers *run, GsRunThreadTiers *mine, gpointer thread);

/**
 * Asks again for every reservation and execution memory in line, in order;
 * those granted are woken.
 */
void gs_run_reserve_retry(GsRunTiers *run);

/** What the op @mine waited on threw when it was carried out (once); GS_EXC_NONE mostly. */
GsException gs_run_take_thrown(GsRunThreadTiers *mine);

/** @thread, stopped while in line, leaves it. */
void gs_run_reserve_leave_line(GsRunTiers *run, GsRunThreadTiers *mine, gpointer thread);

/** Enters the gate's scope, once however deep; TRUE when it is closed: the copy falls back. */
gboolean gs_run_gate_enter(GsRunTiers *run, GsRunThreadTiers *mine);

/** Leaves the thread's scope of the gate; FALSE when it was in none. */
gboolean gs_run_gate_leave(GsRunTiers *run, GsRunThreadTiers *mine);

/** With no thread in a scope, a closed gate that can be reset opens; TRUE when it did. */
gboolean gs_run_gate_reopen(GsRunTiers *run);

/** A copy of @mine's found no room where it goes: the gate closes (policy.evac_gate). */
void gs_run_gate_close(GsRunTiers *run, GsRunThreadTiers *mine);

/** @mine's copies fell back, for the log. */
void gs_run_gate_fallback(GsRunTiers *run, GsRunThreadTiers *mine);

/**
 * Memory of @tier came free outside an allocation (a copy landed, a lock or
 * a reservation went back), freed by thread @by (GS_NO_THREAD: by none of
 * the run's threads, a downgrader say): the engine lets every other thread
 * inside an allocation of that kind try again and wakes a blocked one. The
 * freeing thread keeps its state, as SparkResourceAdaptor's deallocation
 * leaves the thread that frees (one spilling inside its own failed
 * allocation) where it is.
 */
void gs_run_memory_freed(GsEngine *engine, GsThreadId by, GsTier tier, GsTime now);

/**
 * The run's totals the tiers keep go to @res (totals.host_pools,
 * streams_grown); the driver says so once, after gs_run_tiers_init().
 */
void gs_run_tiers_report_to(GsRunTiers *run, GsResult *res);

/**
 * The host tier's pools of blocks into totals.host_pools: when they grew
 * since the last look, the growth is logged (GS_LOG_HOST_POOLS). The driver
 * looks after host memory is taken.
 */
void gs_run_note_host_pools(GsRunTiers *run);

/**
 * RMM's allocation failure callback (policy.failure_callback; spark-rapids-jni's
 * RmmEventHandler.onAllocFailure as its tests write it), after allocation
 * @req failed for room (*@a): each call allocates failure_callback.allocate
 * bytes of the same kind inside the failing allocation and frees them at
 * once (a recursive allocation: the engine sees nothing of it), then asks
 * for the allocation again while its retry count is below
 * failure_callback.retries; once its own allocation fails it asks no more.
 * *@a is the last try's outcome; the calls and the allocations they made
 * are counted in @res's totals.
 */
void gs_run_failure_callback(GsRunTiers *run, const GsMemRequest *req, GsMemAlloc *a,
			     GsResult *res);

/** Whether victim @b, whose copy fell back, goes straight to disk now. */
gboolean gs_run_falls_to_disk(const GsRunTiers *run, const GsMemBuf *b);

/**
 * Whether @task's fair share admits @bytes more of @kind, taking them if so
 * (always, for host memory, a pool thread's NULL @task or a run without
 * fair shares); a refusal is an allocation that failed.
 */
gboolean gs_run_fair_share_take(GsRunTiers *run, const GsRunTask *task, GsAllocKind kind,
				gint64 bytes);

/** Gives back @bytes of @kind that gs_run_fair_share_take() admitted for @task. */
void gs_run_fair_share_give(GsRunTiers *run, const GsRunTask *task, GsAllocKind kind,
			    gint64 bytes);

/**
 * @task's attempt ended: its threads in line for execution memory leave
 * the line (the driver stops them), its whole fair share and its execution
 * memory go back, and the threads still in line may go on.
 */
void gs_run_tiers_task_ends(GsRunTiers *run, GsRunTask *task);

/**
 * The proactive downgrade's look at GPU @device (cuCascade's hysteresis,
 * policy.spill.proactive): *@on turns on once the GPU's charge crosses the
 * trigger and off below the stop, and each turn is logged (GS_LOG_DOWNGRADE,
 * "start" or "stop"). TRUE while it is on: the driver moves the next victim.
 */
gboolean gs_run_downgrade_on(GsRunTiers *run, guint device, gboolean *on);

/**
 * Carries out @op, one of the tiers' (reserve, release, sync, spillable,
 * unspillable, the execution ops), for @thread, whose id is @id; any other
 * op is not the tiers' and does nothing here. FALSE when the thread is in
 * line for a reservation or execution memory: the driver makes it wait
 * until hooks.wake. *@thrown is what the op throws
 * (GS_EXC_RESERVATION_TOO_LARGE, a page refused), GS_EXC_NONE mostly. Only
 * a reserve, a release or an execution op makes the thread's part in the
 * tiers (hooks.tiers_of).
 */
gboolean gs_run_tier_op(GsRunTiers *run, gpointer thread, GsThreadId id, const GsOp *op,
			GsException *thrown);

/**
 * @thread enters or leaves retry block @retry_op: while it runs, the
 * thread's buffers named as its input may be spilled (SPEC §3.5.1, 1). Only
 * in a run whose buffers spill.
 */
void gs_run_block(GsRunTiers *run, gpointer thread, const GsOp *retry_op, gboolean entering);

/**
 * What allocating @effect asks the tier model at @now for @thread, whose id
 * is @id; @engine ranks the owner. Only an allocation that names a
 * reservation makes the thread's part in the tiers (hooks.tiers_of).
 */
GsMemRequest gs_run_request(const GsRunTiers *run, gpointer thread, GsThreadId id,
			    const GsEffect *effect, GsEngine *engine, GsTime now);

/**
 * Whether HostAlloc refuses @req, made for @effect, before trying (a size
 * no pool could ever hold, gs_memory_host_never_fits()). Then *@thrown is
 * what the allocation throws: IllegalArgumentException for a blocking
 * one (alloc), GS_EXC_NONE for a non-blocking one, which just gets no
 * buffer (tryAlloc's None).
 */
gboolean gs_run_host_never_fits(const GsRunTiers *run, const GsEffect *effect,
				const GsMemRequest *req, GsException *thrown);

G_END_DECLS

#endif /* GPUSIM_RUN_TIER_OPS_H */
