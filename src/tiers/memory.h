/*
 * gpusim: the modelled memory of a run, every tier (SPEC §1.2-§1.5, §3.3).
 *
 * This module decides where each buffer of a run lives and what each memory
 * space is charged, by putting the core's pure modules together: per GPU
 * space a GsDevice (the address model: exact or pool) and a GsSpaceAccount
 * (cuCascade's one charged counter); the HOST tier's fixed-size blocks and
 * its account; the DISK tier's account; the spill store (residence, locks,
 * victims) and the evacuation gate. It applies the policies that belong to
 * memory: over-reservation (ignore, fail, increase), the attribution of frees
 * (origin or stream), reservation strategies and modes, where a spilled
 * buffer goes, and what a copy costs on the links.
 *
 * A watcher (gs_memory_watch_reservations()) hears of every change to a
 * reservation's counters, for the run's record of them.
 *
 * It does not decide when to spill, who waits or for how long: the simulator
 * does that with its answers (an allocation that finds no room says by how
 * much; a copy says how long it takes). Nothing here reads a clock or waits.
 *
 * Buffers. gs_memory_alloc() records a buffer and returns its id (1, 2, 3...
 * in allocation order, never reused: the spill store breaks ties by id, so
 * victim choices do not depend on addresses). A buffer allocated as GPU
 * memory starts on the GPU, one allocated as host memory on HOST. A copy
 * moves its authoritative copy down (spill) or up (unspill) in three steps:
 * gs_memory_copy_begin() takes room in the destination and marks the buffer
 * as moving; gs_memory_copy_commit() releases the source and moves the
 * buffer, checking that the content tag that arrived is the buffer's;
 * gs_memory_copy_abort() gives the destination back. Between begin and
 * commit both copies hold memory and the source stays authoritative.
 *
 * Charges. An allocation inside a live reservation of the same space is
 * charged as space.h says; the over-reservation policy decides what happens
 * when it does not fit in the reservation: ignore charges the excess against
 * the capacity, fail refuses the allocation (ReservationFailed), increase
 * grows the reservation by the shortfall times the factor (else by the
 * shortfall) and then allocates inside it, so the growth is charged once (the
 * reference charges it twice, §A.7). A buffer that moves to another tier
 * leaves its reservation behind: its bytes there are credited as a free, and
 * it is charged in its new tier without one. The HOST tier charges whole
 * blocks; the DISK tier charges bytes.
 *
 * The pinned pool. With memory.host.pinned, host memory is two pools, as
 * Spark-RAPIDS' HostAlloc has it: the pinned pool (PinnedMemoryPool, exact
 * bytes, apart from the host tier's blocks and account) and the host tier
 * itself as the non-pinned limit. A host allocation tries the pool it
 * prefers first and falls back to the other; a buffer in the pinned pool
 * gives its bytes back there when it is freed or leaves the host. What
 * comes to the host by a copy (a spill from the GPU, an unspill from disk),
 * and an allocation inside a host reservation (cuCascade's, of the host
 * tier), takes non-pinned room. gs_memory_host_never_fits() is HostAlloc's
 * check for a size no pool could hold. Without a pinned pool nothing here
 * changes.
 *
 * Link traffic. A GPU buffer spilled straight to disk (the host being full)
 * crosses both links, and is counted in both spilled totals; an unspill from
 * disk likewise in both unspilled totals.
 */
#ifndef GPUSIM_SIM_MEMORY_H
#define GPUSIM_SIM_MEMORY_H

#include <gpusim/gate.h>
#include <gpusim/pages.h>
#include <gpusim/space.h>
#include <gpusim/spill.h>
#include <gpusim/workload.h>

G_BEGIN_DECLS

typedef struct GsMemory GsMemory;

/** A reservation a thread holds (one per reservation name of the thread). */
typedef struct {
	GsSpaceReservation acct; /* its counters, kept by the space's account */
	GsTier tier;
	guint device;
	gboolean held;           /* granted (possibly 0 bytes) and not released */
	guint64 serial;          /* when it was made: the newest held one is the thread's stream's */
	const char *thread;      /* whose it is and its name: the caller's, for what it reports */
	const char *name;
} GsMemReservation;

/*
 * Told after every change to a reservation's counters: granted, allocated
 * in (a failed try included: its peak stays raised, as cuCascade's does),
 * credited by a free, grown, released.
 */
typedef void (*GsMemReservationFunc)(const GsMemReservation *res, gpointer data);

typedef struct {
	GsPriority owner;        /* the owning thread's rank (victims by priority) */
	GsAllocKind kind;        /* GPU: on device .device; HOST: host blocks */
	guint device;
	gint64 size;
	gboolean spillable;
	gboolean prefer_pinned;  /* HOST: the pinned pool first (it is tried second otherwise) */
	GsMemReservation *res;   /* the reservation to allocate in, or NULL */
	GsTime now;
} GsMemRequest;

typedef enum {
	GS_MEM_OK = 0,
	GS_MEM_NO_ROOM,          /* the tier has not the room: .short_by bytes are missing */
	GS_MEM_OVER_RESERVATION, /* beyond the reservation under the fail policy */
	/* Answers the run gives where the model had the room: */
	GS_MEM_NO_PAGE,          /* the task's page table is full (gs_memory_take_page()) */
	GS_MEM_OVER_SHARE,       /* beyond the task's fair share (the run's admission) */
} GsMemOutcome;


/*
 * A buffer. The record is the module's: callers read its fields and pass it
 * back, and it is valid until gs_memory_free_buffer(). A driver may keep it
 * as the handle of the allocation.
 */
typedef struct {
	GsSpillBufId id;         /* 1, 2, 3... in allocation order */
	GsAllocKind kind;
	guint device;            /* its GPU space, when it is (or goes back) on the GPU */
	gint64 size;
	GsTier tier;             /* where its authoritative copy is */
	gint64 held;             /* bytes it occupies there: padded, or whole host blocks */
	guint64 handle;          /* its GsDevice handle while on the GPU */
	GsMemReservation *res;   /* its reservation, while it lives where it was allocated */
	guint64 res_serial;      /* ... that grant of it: a name reserved again is another */
	guint64 tag;             /* the content tag its copies carry */
	gboolean pinned;         /* it holds its bytes in the pinned pool (on HOST only) */
	gboolean fallback;       /* allocated in the pool it did not prefer */
	gboolean moving;         /* between copy_begin and copy_commit/abort */
	GsTier dest;
	gint64 dest_held;
	guint64 dest_handle;
	/* The driver's, untouched here: */
	gpointer owner;          /* the thread that allocated it */
	guint name;              /* its name in that thread's table */
	gint page;               /* its page in the task's page table, or -1 */
	/* The module's: the live records, so that a run cut short frees them all. */
	gpointer prev, next;
	/*
	 * Freed while a compute held it (another thread's free): its memory
	 * goes with the last lock, credited then to freed_res (that grant of
	 * it, if still held)
	 */
	gboolean freed;
	GsMemReservation *freed_res;
	guint64 freed_res_serial;
} GsMemBuf;

typedef struct {
	GsMemOutcome outcome;
	GsMemBuf *buf;           /* OK: the new buffer */
	GsTier tier;             /* where it went, or where room is missing */
	gint64 short_by;         /* NO_ROOM: >= 1 (with a pinned pool, a host request's
				    size: HostAlloc spills that much of the host) */
	gint64 usage;            /* NO_ROOM in a space: its charged bytes with the request's */
	GsTime pinning;          /* OK: pinning the host pools it added (links.host_pools) */
} GsMemAlloc;

GsMemory *gs_memory_new(const GsWorkload *w);
/** How many spaces @w's @tier has: one per GPU, one host, one disk. */
guint gs_memory_spaces(const GsWorkload *w, GsTier tier);
/** The capacity and limits of each of those spaces (they are alike). */
GsSpaceThresholds gs_memory_space_thresholds(const GsWorkload *w, GsTier tier);
void gs_memory_free(GsMemory *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsMemory, gs_memory_free)

/** From now on @fn hears of every change to a reservation (NULL: nobody does). */
void gs_memory_watch_reservations(GsMemory *m, GsMemReservationFunc fn, gpointer data);
/**
 * HostAlloc's canNeverSucceed, in a run with a pinned pool: a host request
 * (outside a reservation) bigger than the pool it may use and than the
 * non-pinned limit. As the code has it, one that does not prefer pinned
 * memory counts the pinned pool only when there is no non-pinned memory.
 */
gboolean gs_memory_host_never_fits(const GsMemory *m, const GsMemRequest *req);

/** The pinned pool's bytes in use (0 without one). */
gint64 gs_memory_pinned_used(const GsMemory *m);

/**
 * The pool @buf holds its bytes in, for the event log: "pinned" or
 * "non_pinned" while it is on the host of a run with a pinned pool, else
 * NULL.
 */
const char *gs_memory_pool_name(const GsMemory *m, const GsMemBuf *buf);

/** Whether buffers may move between tiers in this run (policy.spill.enabled). */
gboolean gs_memory_spills(const GsMemory *m);

/* ---- buffers ---- */

/** Allocates a buffer; nothing changes unless the outcome is OK. */
GsMemAlloc gs_memory_alloc(GsMemory *m, const GsMemRequest *req);

/**
 * Frees a buffer wherever it lives (a pending move is abandoned first).
 * @stream_res is the freeing thread's newest held reservation in the
 * buffer's space, credited under attribution "stream"; under "origin" the
 * buffer's own reservation is. The record is gone afterwards, to its
 * caller: FALSE when a compute still holds the buffer (another thread
 * frees it), whose memory then goes, as with a reference count, when the
 * last lock does (gs_memory_unlock_all()).
 */
gboolean gs_memory_free_buffer(GsMemory *m, GsMemBuf *buf, GsMemReservation *stream_res);

/** The buffer with spill-store id @id, or NULL. */
GsMemBuf *gs_memory_buffer(const GsMemory *m, GsSpillBufId id);

/** Whether @res is held in the space of @tier (and GPU @device). */
gboolean gs_memory_res_in_space(const GsMemReservation *res, GsTier tier, guint device);

/* ---- spilling ---- */

GsSpillStore *gs_memory_store(GsMemory *m);

/** The spill store's id of stream @stream of thread @thread (< 0: synchronous work). */
GsSpillStreamId gs_memory_stream_id(GsThreadId thread, gint stream);

/**
 * Lets go of the synchronous locks on @ids, and empties it; TRUE when that
 * gave back the memory of a buffer freed while locked, whose owner field
 * (the driver's) is then appended to @released unless it is NULL.
 */
gboolean gs_memory_unlock_all(GsMemory *m, GArray *ids, GPtrArray *released);
GsGate *gs_memory_gate(GsMemory *m);

/**
 * Victims in @tier to free @need bytes there, by the policy's victim order
 * (GsSpillMove, emptied first); returns the bytes chosen (0: none may move).
 */
gint64 gs_memory_plan_spill(GsMemory *m, GsTier tier, gint64 need, GsTime now, GArray *moves);

/**
 * As gs_memory_plan_spill(), for a thread that needs the room itself. Under
 * smallest_fit, Spark's consumer order (§C.3), the requester's own buffers
 * (those @mine says are @requester's) come last: they are planned only if
 * the others cannot cover the need.
 */
gint64 gs_memory_plan_victims(GsMemory *m, GsTier tier, gint64 need, GsTime now, GArray *moves,
			      gboolean (*mine)(const GsMemBuf *b, gconstpointer requester),
			      gconstpointer requester);

/** Sets the spill store's spillable flag of the buffers @ids (GsSpillBufId). */
void gs_memory_set_spillable(GsMemory *m, const GArray *ids, gboolean spillable);

/**
 * A retry block's input buffers are spillable while it runs (SPEC §3.5.1,
 * 1). Entering the block makes those of @ids that are not spillable so, and
 * pushes them onto the thread's stack @inputs (GsSpillBufId, 0 marking the
 * block's start); leaving it pops them and makes them unspillable again.
 */
void gs_memory_block_enter(GsMemory *m, GArray *inputs, const GArray *ids);
void gs_memory_block_leave(GsMemory *m, GArray *inputs);

/**
 * Takes room for the buffer in @to and marks it moving. FALSE (nothing
 * changed) if @to has no room for it. On TRUE, *@duration is what the copy
 * takes on the links, with the pinning of the host pools it made the tier
 * add (links.host_pools).
 */
gboolean gs_memory_copy_begin(GsMemory *m, GsMemBuf *buf, GsTier to, GsTime *duration);

/**
 * The copy has landed: the source is released and the buffer lives in its
 * destination. FALSE if the spill store refused the move (a tag mismatch, or
 * a lock that arrived meanwhile): the destination is given back and the
 * buffer stays where it was.
 */
gboolean gs_memory_copy_commit(GsMemory *m, GsMemBuf *buf);

/** The copy was dropped: the destination is given back. */
void gs_memory_copy_abort(GsMemory *m, GsMemBuf *buf);

/**
 * The GPU bytes the buffers @ids (GsSpillBufId) need to come back before a
 * compute uses them, or 0 when none is off the GPU. One on the GPU that is
 * moving out counts as there: the compute's lock refuses the move's landing.
 */
gint64 gs_memory_unspill_need(GsMemory *m, const GArray *ids);

/*
 * Host memory of a task is handed out in pages of its page table (Spark's,
 * 8192 pages at most), *@pages made at the task's first: FALSE when the
 * table is full (no spill helps). Sets @b's page; -1 for GPU memory, or for a
 * thread of no task (@pages NULL). Both drivers keep one table per task.
 */
gboolean gs_memory_take_page(GsPageTable **pages, GsMemBuf *b);
/* Gives @b's page back to its task's table (NULL: none was taken). */
void gs_memory_give_page(GsPageTable *pages, GsMemBuf *b);

/*
 * Proactive downgrade (cuCascade's hysteresis, policy.spill.proactive) of
 * GPU @device, one buffer at a time, for both drivers: updates *@on (a
 * downgrade is under way) from the device's charge and returns the decision,
 * whose START and STOP the caller logs. Then, while *@on and no copy of the
 * downgrade's is in flight, the caller moves gs_memory_downgrade_victim() to
 * the host.
 */
GsDowngradeDecision gs_memory_downgrade_step(GsMemory *m, guint device, gboolean *on);
/*
 * The buffer a downgrade of @device moves next, least recently used first
 * (one already being copied is no candidate); NULL when none, when nothing
 * is to move, or when the gate is closed. @moves is scratch.
 */
GsMemBuf *gs_memory_downgrade_victim(GsMemory *m, guint device, GsTime now, GArray *moves);

/**
 * What a copy of @bytes from @from to @to costs on the links (latency +
 * bytes / bandwidth each), and the fresh memory it lands in, if any.
 */
GsTime gs_memory_copy_time(const GsMemory *m, GsTier from, GsTier to, gint64 bytes);
/** What writing @bytes of fresh memory costs in a run that spills (links.fresh_memory). */
GsTime gs_memory_first_write_time(const GsMemory *m, gint64 bytes);

/* ---- reservations ---- */

/**
 * Carries out a reserve op (its strategy and mode) into @res. GRANTED or
 * IDLE (policy.reservations.blocking channel: no live reservation, so what
 * fits): @res is held. REFUSED (or_null) or SHUTDOWN: not held. WAIT
 * (block): in line, gs_memory_reserve_again() after a release or a free.
 * TOO_LARGE: it can never fit.
 */
GsReservationOutcome gs_memory_reserve(GsMemory *m, const GsOp *op, GsMemReservation *res);

/**
 * A blocking reserve op in line asks again. Blocking "whole": the op again.
 * Blocking "channel" (cuCascade's make_reservation): only when the channel
 * of the space it waits on wakes it, and then as the channel says: SHUTDOWN,
 * NOTIFIED (GRANTED if it fits now, else WAIT), IDLE (held, what fits);
 * otherwise WAIT.
 */
GsReservationOutcome gs_memory_reserve_again(GsMemory *m, const GsOp *op, GsMemReservation *res);

/** After every waiter asked again: the channels' wake-ups nobody took are lost. */
void gs_memory_settle_channels(GsMemory *m);

/** Shuts every space's channel down (memory_reservation_manager::shutdown()). */
void gs_memory_shutdown_channels(GsMemory *m);

/** Releases a held reservation; returns the bytes refunded. */
gint64 gs_memory_release(GsMemory *m, GsMemReservation *res);

/**
 * A thread's reservation under name @index in its table @reservations
 * (GsMemReservation*, freed with g_free), made empty on first use.
 */
GsMemReservation *gs_memory_reservation_at(GPtrArray *reservations, guint index);

/**
 * The newest held reservation in the space of @tier (and GPU @device) in
 * @reservations (NULL: none): the thread's stream's, for attribution "stream".
 */
GsMemReservation *gs_memory_newest_reservation(const GPtrArray *reservations, GsTier tier,
					       guint device);

/* ---- the tiers ---- */

gint64 gs_memory_used(const GsMemory *m, GsTier tier);
/** The host tier's pools of blocks now (they grow one at a time and never shrink). */
guint gs_memory_host_pools(const GsMemory *m);
/** The bytes those pools took from the system. */
gint64 gs_memory_host_pool_bytes(const GsMemory *m);
gint64 gs_memory_charged(const GsMemory *m, GsTier tier);
guint gs_memory_n_gpus(const GsMemory *m);
const GsSpaceAccount *gs_memory_gpu_account(const GsMemory *m, guint device);

/* Bytes that crossed the links: spilled gpu->host, host->disk, unspilled host->gpu, disk->host. */
typedef struct {
	gint64 gpu_to_host, host_to_disk, host_to_gpu, disk_to_host;
	guint64 copies;          /* copies committed, each with its content tag checked */
	guint64 tag_mismatches;  /* copies whose tag did not match: data lost or duplicated */
} GsMemTraffic;

const GsMemTraffic *gs_memory_traffic(const GsMemory *m);

/** NULL if every buffer, account and device agree, else a sentence naming the first disagreement. */
const char *gs_memory_check(const GsMemory *m);

G_END_DECLS

#endif /* GPUSIM_SIM_MEMORY_H */
