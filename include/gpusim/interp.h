/*
 * gpusim: the interpreter of one thread's operations, shared by every driver.
 *
 * This module decides what a simulated thread does next: it walks the thread's
 * op list (repeat loops, retry blocks nested to any depth, the halving splits
 * of SPEC §3.5.1, on_oom), makes the engine calls of the allocation protocol,
 * and hands the driver one effect at a time: try an allocation, free a
 * buffer, compute, sleep, wait until woken, or end. The driver carries the
 * effect out (in virtual time or for real) and calls gs_interp_step() again;
 * after an ALLOC effect it first reports whether the memory was there with
 * gs_interp_alloc_done(). So retry blocks, splitting and the allocation loop
 * exist once, for the simulator and for real threads alike.
 *
 * Retry blocks behave like Spark-RAPIDS' withRetry. Each run of a block's ops
 * is an attempt on a piece of its input: the whole input first, then halves of
 * it after splits. Buffers allocated during an attempt belong to it and are
 * freed when it throws; the buffers a finished piece leaves live are its
 * output and stay. A RetryOOM frees the attempt, runs block-until-ready (which
 * may wait in BUFN, or throw SplitAndRetryOOM) and reruns the piece. A
 * SplitAndRetryOOM frees the attempt and replaces the piece by its two halves,
 * run one after the other, unless splitting is off or max_splits splits lie on
 * the piece's path: then CouldNotSplit escapes the block, and the next block
 * out treats it as a split request of its own. Any exception that escapes a
 * block (CouldNotSplit, or one no block handles) frees the attempt and the
 * block's input buffers as it leaves, as RmmRapidsRetryIterator closes its
 * attempts and its input on a throwable it does not handle. In a piece,
 * every allocation size s of the block (nested blocks included) becomes
 * floor(s/2) in a first half and s - floor(s/2) in a second, once per split
 * on the path, except that sizes below 256 bytes are repeated unchanged;
 * compute times are halved alike.
 *
 * Policies: under "retry" and "block" every allocation goes through the engine
 * (with "block" the engine detects but never busts deadlocks); under "fail" an
 * allocation that cannot be met throws GpuOOM or CpuOOM at once. An exception
 * no block handles ends the thread with GS_EFFECT_FAILED (on_oom fail) or is
 * recorded and skipped (on_oom continue: the thread goes on after the op, or
 * after the outermost retry block it escaped). A call the engine refuses
 * throws IllegalArgumentException at the op, as the reference's does.
 *
 * A thread's work ends with its last op or an exception that ends it: once
 * it has given back what it held, a pool thread leaves the tasks it still
 * works for (gs_engine_thread_finished()), as a helper unregisters when done.
 */
#ifndef GPUSIM_INTERP_H
#define GPUSIM_INTERP_H

#include <gpusim/workload.h>

G_BEGIN_DECLS

typedef enum {
	GS_EFFECT_PERMIT,    /* a GPU allocation needs the task's GPU semaphore permit
				first: call gs_interp_permit_granted() once it has it */
	GS_EFFECT_ALLOC,     /* try .size bytes of .kind for buffer .buf; then gs_interp_alloc_done() */
	GS_EFFECT_FREE,      /* release buffer .buf (.handle, .size bytes of .kind) */
	GS_EFFECT_COMPUTE,   /* busy for .time (the op's buffers in .op) */
	GS_EFFECT_SLEEP,     /* wait outside the allocator for .time */
	GS_EFFECT_UNTIL,     /* stay runnable until scenario time .time */
	GS_EFFECT_WAIT,      /* parked in the engine until it queues a wake-up */
	GS_EFFECT_OP,        /* an op the driver carries out itself (.op): pool, reserve,
				release, sync, spillable, unspillable, associate,
				dissociate, the execution ops, a free of another
				thread's buffers (gs_interp_free_for()) */
	GS_EFFECT_TASK_DONE, /* the thread ends its task now */
	GS_EFFECT_DONE,      /* the thread has run all its ops */
	GS_EFFECT_FAILED,    /* an unhandled .exception ends the task attempt */
} GsEffectKind;

typedef struct {
	GsEffectKind kind;
	guint buf;           /* ALLOC, FREE */
	gint64 size;         /* ALLOC, FREE: bytes, after splitting */
	GsAllocKind alloc_kind;
	gboolean blocking;   /* ALLOC */
	guint64 handle;      /* FREE: what gs_interp_alloc_done() was given */
	GsTime time;         /* COMPUTE, SLEEP: duration; UNTIL: scenario time */
	const GsOp *op;      /* the op behind the effect */
	GsException exception; /* FAILED */
	gboolean at_end;     /* FREE: handed back because the thread ended, not by a free op */
} GsEffect;

/*
 * The .buf of an ALLOC effect that asks for room to bring a compute's spilled
 * buffers back to the GPU (see gs_interp_unspill_first()).
 */
#define GS_INTERP_UNSPILL_BUF G_MAXUINT

/* One exception the thread saw, in order. */
typedef struct {
	GsTime time;
	GsException exception;
	gboolean handled;    /* a retry block (or on_oom continue) took it */
	gint64 bytes;        /* thrown at an allocation: the bytes it asked for; else 0 */
	char op[32];         /* op path, e.g. "3" or "2.1.0" (indices in the op lists) */
} GsSeenException;

typedef struct GsInterp GsInterp;

/**
 * An interpreter for @spec's ops on thread @thread, already registered with
 * @engine (which it uses for the allocation protocol, retry blocks,
 * injection and pool waits). @spec and @engine must outlive it.
 */
GS_API GsInterp *gs_interp_new(GsEngine *engine, const GsThreadSpec *spec, GsThreadId thread,
			       GsOomPolicy policy);
GS_API void gs_interp_free(GsInterp *it);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsInterp, gs_interp_free)

/*
 * The same, in storage the driver provides (a simulator keeps its threads'
 * interpreters packed beside its own records): gs_interp_size() bytes,
 * aligned for a pointer. gs_interp_clear() frees what the interpreter holds,
 * not @it itself.
 */
GS_API gsize gs_interp_size(void);
GS_API void gs_interp_init(GsInterp *it, GsEngine *engine, const GsThreadSpec *spec,
			   GsThreadId thread, GsOomPolicy policy);
GS_API void gs_interp_clear(GsInterp *it);

/** Runs the thread at @now until it needs the world; returns what it needs. */
GS_API GsEffect gs_interp_step(GsInterp *it, GsTime now);

/**
 * The op the next gs_interp_step() will read first, when the thread resumes
 * where its last effect left it (NULL: not known). A driver with many
 * threads prefetches it, and the interpreter, while other threads run: the
 * op lists of a hundred thousand threads lie where no cache holds them.
 */
GS_API const void *gs_interp_next_read(const GsInterp *it);

/**
 * Whether GPU allocations must first ask for a permit (GS_EFFECT_PERMIT), as
 * the Spark GPU semaphore requires before a task touches the GPU. Off by
 * default. The permit is asked for before the allocation protocol begins, so a
 * thread waiting for it is not inside an allocation.
 */
GS_API void gs_interp_require_permit(GsInterp *it, gboolean require);

/** After GS_EFFECT_PERMIT: the thread may go on into its allocation. */
GS_API void gs_interp_permit_granted(GsInterp *it);

/** After GS_EFFECT_ALLOC: whether the memory was there, and its handle. */
GS_API void gs_interp_alloc_done(GsInterp *it, gboolean ok, guint64 handle, GsTime now);

/**
 * After GS_EFFECT_ALLOC: the allocation failed with @exc, not for want of
 * memory (an over-reservation under the fail policy: ReservationFailed). The
 * engine hears of a non-OOM failure and the exception is thrown at the op.
 */
GS_API void gs_interp_alloc_throw(GsInterp *it, GsException exc, GsTime now);

/**
 * After GS_EFFECT_COMPUTE, before any time passed: the compute cannot begin
 * yet because some of its buffers are spilled and need @bytes on the GPU.
 * Bringing them back is an allocation, as materialising a spilled buffer is
 * in Spark-RAPIDS: the next step enters the allocation protocol and returns
 * an ALLOC effect with .buf GS_INTERP_UNSPILL_BUF and .size @bytes (or a
 * WAIT, or an exception, as for any allocation), in which the driver brings
 * the buffers back. Once gs_interp_alloc_done() says it did, the compute
 * effect comes again. No buffer is recorded, and the engine is told of an
 * allocation of 0 bytes (the buffers' bytes were counted when they were
 * first allocated).
 */
GS_API void gs_interp_unspill_first(GsInterp *it, gint64 bytes, GsTime now);

/**
 * After GS_EFFECT_OP: the op failed with @exc (a reservation that can never
 * fit throws ReservationTooLarge). The exception is thrown at the op, as if
 * the op had thrown it.
 */
GS_API void gs_interp_op_failed(GsInterp *it, GsException exc, GsTime now);

/**
 * The GS_EFFECT_OP of a free op naming another thread (op->free.thread),
 * whose interpreter the driver found, @owner: each live buffer of @owner
 * named in @op moves to @it, which hands it back as a FREE effect at its
 * next steps and tells the engine of the free as its own, as RMM's
 * deallocation does for whichever thread calls it (that thread's state is
 * kept; others allocating memory of the kind may retry). A buffer @owner
 * has not allocated, or has freed, is not freed again. Effects' .buf then
 * index @owner's buffer names.
 */
GS_API void gs_interp_free_for(GsInterp *it, GsInterp *owner, const GsOp *op);
/** From now on @it remembers which of its buffer names it has allocated. */
GS_API void gs_interp_note_allocations(GsInterp *it);
/** Whether @it has allocated a buffer called @name since gs_interp_note_allocations(). */
GS_API gboolean gs_interp_allocated(const GsInterp *it, guint name);

/**
 * Ends the thread early (its task ended or failed elsewhere): the next steps
 * hand out FREE effects for what it still holds, then GS_EFFECT_DONE.
 */
GS_API void gs_interp_abort(GsInterp *it, GsTime now);

/*
 * What a driver hooks into the interpreter; every member may be NULL, and
 * without hooks nothing below happens. One table is shared by all of a
 * driver's threads; each interpreter passes its own data pointer.
 *
 * on_exception() is told of each exception once its handling is decided, in
 * order; on_block() of each retry block entered (@entering) and left, so that
 * a driver can make the block's input buffers spillable while it runs (SPEC
 * §3.5.1, 1).
 *
 * The rest is for a driver whose threads run at the same time
 * (backends/threads/). The engine is not thread-safe, so every engine call
 * the interpreter makes is bracketed by enter() and leave(): a real-thread
 * driver takes its engine lock there, and the interpreter's own state stays
 * with the thread that runs it. fast_alloc() and fast_free() let the driver
 * keep the common case off that lock: an allocation the driver could satisfy
 * on its own (it fits, the thread is RUNNING and nobody else is inside the
 * protocol) is recorded without any engine call, as if the engine had gone
 * RUNNING -> ALLOC -> RUNNING and found nobody to wake, which is what it
 * would have done.
 */
typedef struct {
	int api_version; /* 1 */
	/* Before and after every engine call the interpreter makes (both or neither). */
	void (*enter)(gpointer data);
	void (*leave)(gpointer data);
	/*
	 * Once per allocation op, after the GPU permit and before the protocol
	 * begins, with the ALLOC effect the engine's path would hand out: TRUE
	 * when the driver got the memory itself (*handle set); the buffer is
	 * recorded and the engine is not called. FALSE: the allocation goes
	 * through the engine as usual. Never called for the allocation of
	 * gs_interp_unspill_first() (GS_INTERP_UNSPILL_BUF), which always goes
	 * through the engine. May be NULL.
	 */
	gboolean (*fast_alloc)(gpointer data, const GsEffect *alloc, guint64 *handle);
	/*
	 * After the driver carried out a FREE effect, before the engine hears
	 * of it: TRUE when the engine need not (no thread could be woken or
	 * retried by it). @freed has .kind (FREE), .size and .alloc_kind set;
	 * the other fields are zero. May be NULL.
	 */
	gboolean (*fast_free)(gpointer data, const GsEffect *freed);
	/* Last, so that the members above keep their places. */
	void (*on_exception)(const GsSeenException *seen, gpointer data);
	void (*on_block)(const GsOp *retry_op, gboolean entering, gpointer data);
	/*
	 * A value of the thread (GsThreadSpec.values) after a value op, a
	 * checkpoint or a retry block's restore: @what is "add", "set",
	 * "checkpoint" (@value: what the checkpoint holds) or "restore".
	 */
	void (*on_value)(guint name, gint64 value, const char *what, gpointer data);
} GsInterpHooks;

/** Installs @hooks with @data for them (NULL removes them); @hooks must outlive the interpreter. */
GS_API void gs_interp_set_hooks(GsInterp *it, const GsInterpHooks *hooks, gpointer data);

/** The thread's value @name now (its start before any value op). */
GS_API gint64 gs_interp_value(const GsInterp *it, guint name);

/** Whether the thread has ended (DONE, FAILED or TASK_DONE returned). */
GS_API gboolean gs_interp_finished(const GsInterp *it);

/** The exceptions the thread saw, in order (GsSeenException). */
GS_API const GArray *gs_interp_exceptions(const GsInterp *it);

/**
 * Hands the exceptions seen so far to the caller (GsSeenException, in order),
 * or NULL if there were none, and starts an empty list: a driver that keeps
 * them in its results takes them once the thread has ended, without a copy.
 */
GS_API GArray *gs_interp_take_exceptions(GsInterp *it);

/** Live buffers: their count and bytes per kind (what the thread holds now). */
GS_API guint gs_interp_live_buffers(const GsInterp *it);
GS_API gint64 gs_interp_live_bytes(const GsInterp *it, GsAllocKind kind);

/** The size a split piece gives an allocation: @path holds 0 (first) / 1 (second) halves. */
GS_API gint64 gs_split_size(gint64 size, const guint8 *path, guint n);
/** The same for a compute time (no lower limit). */
GS_API GsTime gs_split_time(GsTime time, const guint8 *path, guint n);
/*
 * The next target of a retry block that splits a target (split: target),
 * as spark-rapids' splitTargetSizeInHalfGpu computes it: half the data's
 * own size when it is known (@data > 0) and at most half the target,
 * else half the target.
 */
GS_API gint64 gs_split_target(gint64 target, gint64 data);

G_END_DECLS

#endif /* GPUSIM_INTERP_H */
