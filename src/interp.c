/*
 * gpusim: the op interpreter (see interp.h for the contract).
 *
 * A thread is a stack of frames: the top-level op list, repeat loops and retry
 * blocks, each with a cursor. gs_interp_step() advances the cursor of the
 * innermost frame until an op needs the world, then returns that effect. The
 * interpreter remembers where it stopped in `mode`, so that the same call can
 * resume an allocation loop or a block-until-ready after a wait.
 *
 * The buffer list holds the live buffers only, oldest first. A name can be
 * allocated again (in a repeat loop, or by both halves of a split piece), and a
 * free of the name releases every live buffer of that name. Each records the
 * retry depth it was allocated at, which is how an attempt's buffers are found
 * when it throws. FREE effects for those are
 * queued and handed out one per step before anything else.
 *
 * Every engine call sits between enter() and leave(), which call the driver's
 * hooks when it installed any (GsInterpHooks: a real-thread driver locks the
 * engine there); the simulator installs none.
 */
#include "config.h"

#include <string.h>

#include <gpusim/interp.h>

/* Sizes below this are repeated, not split (RmmSparkMonteCarlo's rule). */
#define MIN_SPLIT_SIZE 256

typedef enum {
	FRAME_OPS,    /* the thread's own op list */
	FRAME_REPEAT, /* a repeat op's ops */
	FRAME_RETRY,  /* a retry block's ops, one attempt at a time */
} FrameKind;

typedef struct {
	FrameKind kind;
	const GsOp *op;     /* the repeat or retry op; NULL for the top frame */
	const GArray *ops;
	guint pos;          /* the op being run, or the next one */
	guint iteration;    /* repeat: iterations finished */
	GPtrArray *pieces;  /* retry: GByteArray* paths still to run, last runs next */
	GByteArray *path;   /* retry: the piece being attempted */
	guint depth;        /* retry: 1 for the outermost block, 2 inside it... */
} Frame;

typedef enum {
	MODE_RUN,          /* at the cursor */
	MODE_PERMIT,       /* PERMIT effect out, waiting for gs_interp_permit_granted() */
	MODE_ALLOC_BEGIN,  /* (re-)entering the allocation protocol */
	MODE_ALLOC_TRY,    /* ALLOC effect out, waiting for gs_interp_alloc_done() */
	MODE_RETRY_BLOCK,  /* after a RetryOOM: block-until-ready, then rerun the piece */
	MODE_BLOCK_OP,     /* a block_until_ready op */
	MODE_FINISHING,    /* handing out the last FREE effects */
	MODE_FINISHED,
} Mode;

typedef struct {
	guint name;
	gint64 size;
	GsAllocKind kind;
	guint64 handle;
	guint depth; /* retry depth it belongs to: 0 = the thread */
} Buffer;

struct GsInterp {
	GsEngine *engine;
	const GsThreadSpec *spec;
	GsThreadId thread;
	GsOomPolicy policy;
	gboolean require_permit;
	GArray *frames;    /* Frame */
	Mode mode;
	GsEffect alloc;    /* the allocation in progress */
	gboolean recursive;
	GArray *buffers;   /* Buffer instances */
	GArray *frees;     /* GsEffect FREE effects to hand out */
	guint frees_head;
	gboolean freed;    /* a FREE was handed out: tell the engine at the next step */
	GsEffect last_free;
	GsEffect final;    /* DONE, FAILED or TASK_DONE once FINISHING */
	GArray *seen;      /* GsSeenException */
	guint told;        /* exceptions passed to on_exception so far */
	GsExceptionFunc on_exception;
	gpointer on_exception_data;
	const GsInterpHooks *hooks; /* NULL: the engine is called directly */
	gpointer hooks_data;
	gboolean alloc_fresh; /* the allocation has not met the engine yet */
};

/* ---- split arithmetic ---- */

gint64
gs_split_size(gint64 size, const guint8 *path, guint n)
{
	for (guint i = 0; i < n && size >= MIN_SPLIT_SIZE; i++)
		size = path[i] ? size - size / 2 : size / 2;
	return size;
}

GsTime
gs_split_time(GsTime time, const guint8 *path, guint n)
{
	for (guint i = 0; i < n; i++)
		time = path[i] ? time - time / 2 : time / 2;
	return time;
}

/* ---- driver hooks (interp.h: GsInterpHooks) ---- */

void
gs_interp_set_hooks(GsInterp *it, const GsInterpHooks *hooks, gpointer data)
{
	g_return_if_fail(hooks == NULL || hooks->api_version == 1);
	it->hooks = hooks;
	it->hooks_data = data;
}

/* Every engine call sits between these two, for drivers that lock the engine. */
static void
enter(GsInterp *it)
{
	if (it->hooks != NULL)
		it->hooks->enter(it->hooks_data);
}

static void
leave(GsInterp *it)
{
	if (it->hooks != NULL)
		it->hooks->leave(it->hooks_data);
}

/* ---- frames ---- */

static Frame *
top(GsInterp *it)
{
	return &g_array_index(it->frames, Frame, it->frames->len - 1);
}

static guint
retry_depth(GsInterp *it)
{
	for (guint i = it->frames->len; i-- > 0;) {
		Frame *f = &g_array_index(it->frames, Frame, i);

		if (f->kind == FRAME_RETRY)
			return f->depth;
	}
	return 0;
}

static void
frame_clear(Frame *f)
{
	if (f->pieces != NULL)
		g_ptr_array_unref(f->pieces);
	if (f->path != NULL)
		g_byte_array_unref(f->path);
}

static void
push(GsInterp *it, FrameKind kind, const GsOp *op, const GArray *ops)
{
	Frame f = {.kind = kind, .op = op, .ops = ops};

	if (kind == FRAME_RETRY) {
		f.depth = retry_depth(it) + 1;
		f.pieces = g_ptr_array_new_with_free_func((GDestroyNotify) g_byte_array_unref);
		g_ptr_array_add(f.pieces, g_byte_array_new());
	}
	g_array_append_val(it->frames, f);
}

static void
pop(GsInterp *it)
{
	frame_clear(top(it));
	g_array_set_size(it->frames, it->frames->len - 1);
}

static const GsOp *
current_op(GsInterp *it)
{
	Frame *f = top(it);

	return &g_array_index(f->ops, GsOp, f->pos);
}

/* Applies every enclosing piece's halvings, outermost block first. */
static gint64
scaled(GsInterp *it, gint64 value, gboolean is_size)
{
	for (guint i = 0; i < it->frames->len; i++) {
		Frame *f = &g_array_index(it->frames, Frame, i);

		if (f->kind != FRAME_RETRY)
			continue;
		value = is_size ? gs_split_size(value, f->path->data, f->path->len)
				: gs_split_time(value, f->path->data, f->path->len);
	}
	return value;
}

/* ---- lifetime ---- */

GsInterp *
gs_interp_new(GsEngine *engine, const GsThreadSpec *spec, GsThreadId thread, GsOomPolicy policy)
{
	GsInterp *it = g_new0(GsInterp, 1);

	it->engine = engine;
	it->spec = spec;
	it->thread = thread;
	it->policy = policy;
	it->frames = g_array_new(FALSE, TRUE, sizeof(Frame));
	it->buffers = g_array_new(FALSE, TRUE, sizeof(Buffer));
	it->frees = g_array_new(FALSE, TRUE, sizeof(GsEffect));
	it->seen = g_array_new(FALSE, TRUE, sizeof(GsSeenException));
	push(it, FRAME_OPS, NULL, spec->ops);
	return it;
}

void
gs_interp_free(GsInterp *it)
{
	if (it == NULL)
		return;
	while (it->frames->len > 0)
		pop(it);
	g_array_unref(it->frames);
	g_array_unref(it->buffers);
	g_array_unref(it->frees);
	g_array_unref(it->seen);
	g_free(it);
}

/* ---- buffers ---- */

/* Hands the live buffer at @index back: a FREE effect is queued and it leaves the list. */
static void
queue_free(GsInterp *it, guint index)
{
	const Buffer *b = &g_array_index(it->buffers, Buffer, index);
	GsEffect free_effect = {.kind = GS_EFFECT_FREE, .buf = b->name, .size = b->size,
				.alloc_kind = b->kind, .handle = b->handle};

	g_array_append_val(it->frees, free_effect);
	g_array_remove_index(it->buffers, index);
}

static void
add_buffer(GsInterp *it, guint name, gint64 size, GsAllocKind kind, guint64 handle)
{
	Buffer b = {.name = name, .size = size, .kind = kind, .handle = handle,
		    .depth = retry_depth(it)};

	g_array_append_val(it->buffers, b);
}

/* Frees every live buffer at retry depth >= @depth (0: all of them), oldest first. */
static void
free_from_depth(GsInterp *it, guint depth, GsTime now)
{
	for (guint i = 0; i < it->buffers->len;) {
		if (g_array_index(it->buffers, Buffer, i).depth >= depth)
			queue_free(it, i);
		else
			i++;
	}
}

/* A finished piece's live buffers are its output: they now belong to the block's parent. */
static void
hand_up(GsInterp *it, guint depth)
{
	for (guint i = 0; i < it->buffers->len; i++) {
		Buffer *b = &g_array_index(it->buffers, Buffer, i);

		if (b->depth >= depth)
			b->depth = depth - 1;
	}
}

/* ---- exceptions ---- */

static void
op_path(GsInterp *it, char *out, gsize size)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < it->frames->len; i++)
		g_string_append_printf(s, i == 0 ? "%u" : ".%u",
				       g_array_index(it->frames, Frame, i).pos);
	g_strlcpy(out, s->str, size);
	g_string_free(s, TRUE);
}

static GsSeenException *
record(GsInterp *it, GsException exc, GsTime now)
{
	GsSeenException seen = {.time = now, .exception = exc};

	op_path(it, seen.op, sizeof seen.op);
	g_array_append_val(it->seen, seen);
	return &g_array_index(it->seen, GsSeenException, it->seen->len - 1);
}

static void
finish(GsInterp *it, GsEffectKind kind, GsException exc, GsTime now)
{
	/* A task gives back what its thread still holds when it ends. */
	free_from_depth(it, 0, now);
	it->final = (GsEffect){.kind = kind, .exception = exc};
	it->mode = MODE_FINISHING;
}

/* Runs the current piece (again) from its first op. */
static void
restart_attempt(GsInterp *it, GsTime now)
{
	top(it)->pos = 0;
	enter(it);
	gs_engine_retry_block_start(it->engine, it->thread, now);
	leave(it);
}

/* Takes the next piece off the block's work list and runs it. */
static void
start_attempt(GsInterp *it, GsTime now)
{
	Frame *f = top(it);

	if (f->path != NULL)
		g_byte_array_unref(f->path);
	f->path = g_ptr_array_steal_index(f->pieces, f->pieces->len - 1);
	restart_attempt(it, now);
}

/* Splitting is allowed and fewer than max_splits splits lie on the piece's path. */
static gboolean
can_split(const Frame *f)
{
	return f->op->retry.split != GS_SPLIT_NONE && f->path->len < f->op->retry.max_splits;
}

/* Replaces the current piece by its halves and starts the first. */
static void
split_piece(GsInterp *it, GsTime now)
{
	Frame *f = top(it);
	GByteArray *first, *second;
	const guint8 one = 1, zero = 0;

	second = g_byte_array_new();
	g_byte_array_append(second, f->path->data, f->path->len);
	g_byte_array_append(second, &one, 1);
	first = g_byte_array_new();
	g_byte_array_append(first, f->path->data, f->path->len);
	g_byte_array_append(first, &zero, 1);
	g_ptr_array_add(f->pieces, second);
	g_ptr_array_add(f->pieces, first);
	start_attempt(it, now);
}

/* Leaves the innermost frame on the way out of an exception. */
static void
unwind(GsInterp *it, GsTime now)
{
	Frame *f = top(it);

	if (f->kind == FRAME_RETRY) {
		enter(it);
		gs_engine_retry_block_end(it->engine, it->thread, now);
		leave(it);
		hand_up(it, f->depth);
	}
	pop(it);
}

void
gs_interp_set_exception_func(GsInterp *it, GsExceptionFunc func, gpointer data)
{
	it->on_exception = func;
	it->on_exception_data = data;
}

/* Tells the driver of the exceptions recorded since it was last told. */
static void
tell_exceptions(GsInterp *it)
{
	for (; it->told < it->seen->len; it->told++) {
		if (it->on_exception != NULL)
			it->on_exception(&g_array_index(it->seen, GsSeenException, it->told),
					 it->on_exception_data);
	}
}

static void handle_exception(GsInterp *it, GsException exc, GsTime now);

/* The innermost retry block handles recoverable exceptions (SPEC §3.5.1). */
static void
throw_exception(GsInterp *it, GsException exc, GsTime now)
{
	handle_exception(it, exc, now);
	tell_exceptions(it);
}

static void
handle_exception(GsInterp *it, GsException exc, GsTime now)
{
	GsSeenException *seen = record(it, exc, now);

	while (it->frames->len > 1) {
		Frame *f = top(it);
		gboolean split_request = gs_exception_is_split(exc) || exc == GS_EXC_COULD_NOT_SPLIT;

		if (f->kind != FRAME_RETRY || !(gs_exception_is_recoverable(exc) || split_request)) {
			unwind(it, now);
			continue;
		}
		/* A split request this block cannot honour escapes it as CouldNotSplit. */
		seen->handled = !split_request || can_split(f);
		tell_exceptions(it); /* before the frees it causes */
		enter(it);
		gs_engine_retry_block_end(it->engine, it->thread, now);
		leave(it);
		free_from_depth(it, f->depth, now);
		if (!split_request) {
			it->mode = MODE_RETRY_BLOCK;
			return;
		}
		if (seen->handled) {
			split_piece(it, now);
			it->mode = MODE_RUN;
			return;
		}
		/* It cannot split: the block fails, and the next one out may split instead. */
		pop(it);
		exc = GS_EXC_COULD_NOT_SPLIT;
		seen = record(it, exc, now);
	}
	if (it->spec->on_oom == GS_ON_OOM_CONTINUE) {
		seen->handled = TRUE;
		top(it)->pos++;
		it->mode = MODE_RUN;
		return;
	}
	tell_exceptions(it);
	finish(it, GS_EFFECT_FAILED, exc, now);
}

/* ---- ops ---- */

static GsEffect
effect(GsEffectKind kind, const GsOp *op)
{
	return (GsEffect){.kind = kind, .op = op};
}

static void
misuse(GsInterp *it, GsDecision d, GsTime now)
{
	g_warning("thread %s: the engine refused a call: %s", it->spec->name,
		  gs_engine_error_message(d.error));
	finish(it, GS_EFFECT_FAILED, GS_EXC_NONE, now);
}

/* The allocation protocol's pre-call; TRUE with *out set when the driver must act. */
static gboolean
alloc_begin(GsInterp *it, GsEffect *out, GsTime now)
{
	GsDecision d;
	guint64 handle;

	if (it->alloc_fresh && it->hooks != NULL && it->hooks->fast_alloc != NULL) {
		it->alloc_fresh = FALSE;
		if (it->hooks->fast_alloc(it->hooks_data, &it->alloc, &handle)) {
			add_buffer(it, it->alloc.buf, it->alloc.size, it->alloc.alloc_kind, handle);
			top(it)->pos++;
			it->mode = MODE_RUN;
			return FALSE;
		}
	}
	it->alloc_fresh = FALSE;
	enter(it);
	d = gs_engine_alloc_begin(it->engine, it->thread, it->alloc.alloc_kind, it->alloc.blocking,
				  now);
	leave(it);

	switch (d.verdict) {
	case GS_VERDICT_PROCEED:
		it->recursive = d.recursive;
		it->mode = MODE_ALLOC_TRY;
		*out = it->alloc;
		return TRUE;
	case GS_VERDICT_WAIT:
		*out = effect(GS_EFFECT_WAIT, it->alloc.op);
		return TRUE;
	case GS_VERDICT_THROW:
		throw_exception(it, d.exception, now);
		return FALSE;
	case GS_VERDICT_RETRY:
	case GS_VERDICT_RETHROW:
	case GS_VERDICT_ERROR:
		break;
	}
	misuse(it, d, now);
	return FALSE;
}

void
gs_interp_alloc_done(GsInterp *it, gboolean ok, guint64 handle, GsTime now)
{
	GsDecision d;

	g_return_if_fail(it->mode == MODE_ALLOC_TRY);
	if (ok) {
		enter(it);
		gs_engine_alloc_success(it->engine, it->thread, it->alloc.alloc_kind, it->alloc.size,
					it->recursive, now);
		leave(it);
		add_buffer(it, it->alloc.buf, it->alloc.size, it->alloc.alloc_kind, handle);
		top(it)->pos++;
		it->mode = MODE_RUN;
		return;
	}
	if (it->policy == GS_OOM_FAIL) {
		/* No state machine to consult: the allocation fails for good. */
		enter(it);
		gs_engine_alloc_failed(it->engine, it->thread, it->alloc.alloc_kind, FALSE,
				       it->alloc.blocking, it->recursive, now);
		leave(it);
		throw_exception(it, gs_exception_fatal_oom(it->alloc.alloc_kind), now);
		return;
	}
	enter(it);
	d = gs_engine_alloc_failed(it->engine, it->thread, it->alloc.alloc_kind, TRUE,
				   it->alloc.blocking, it->recursive, now);
	leave(it);
	if (d.verdict == GS_VERDICT_RETRY && !it->alloc.blocking) {
		/* A non-blocking host allocation gives up: no buffer, no exception. */
		top(it)->pos++;
		it->mode = MODE_RUN;
	} else if (d.verdict == GS_VERDICT_RETRY) {
		it->mode = MODE_ALLOC_BEGIN;
	} else if (d.verdict == GS_VERDICT_RETHROW) {
		throw_exception(it, d.exception, now);
	} else {
		misuse(it, d, now);
	}
}

static gboolean
start_alloc(GsInterp *it, const GsOp *op, GsEffect *out, GsTime now)
{
	it->alloc = (GsEffect){
		.kind = GS_EFFECT_ALLOC,
		.buf = op->alloc.buf,
		.size = scaled(it, op->alloc.size, TRUE),
		.alloc_kind = op->alloc.kind,
		.blocking = op->alloc.kind == GS_KIND_GPU || op->alloc.blocking,
		.op = op,
	};
	it->alloc_fresh = TRUE;
	if (op->alloc.kind == GS_KIND_GPU && it->require_permit) {
		it->mode = MODE_PERMIT;
		*out = effect(GS_EFFECT_PERMIT, op);
		return TRUE;
	}
	it->mode = MODE_ALLOC_BEGIN;
	return alloc_begin(it, out, now);
}

void
gs_interp_require_permit(GsInterp *it, gboolean require)
{
	it->require_permit = require;
}

void
gs_interp_permit_granted(GsInterp *it)
{
	g_return_if_fail(it->mode == MODE_PERMIT);
	it->mode = MODE_ALLOC_BEGIN;
}

/*
 * Frees every live instance of each named buffer: after a split, each half of
 * the piece left its own output under the name, and the name stands for all
 * of them. Freeing a buffer whose allocation threw (or never ran) does nothing.
 */
static void
free_op(GsInterp *it, const GsOp *op, GsTime now)
{
	for (guint i = 0; i < op->free.bufs->len; i++) {
		guint name = g_array_index(op->free.bufs, guint, i);

		for (guint k = 0; k < it->buffers->len;) {
			if (g_array_index(it->buffers, Buffer, k).name == name)
				queue_free(it, k);
			else
				k++;
		}
	}
}

/* block-until-ready, from an op or after a RetryOOM; TRUE with *out set to wait. */
static gboolean
block_until_ready(GsInterp *it, GsEffect *out, GsTime now)
{
	GsDecision d;

	enter(it);
	d = gs_engine_block_until_ready(it->engine, it->thread, now);
	leave(it);

	switch (d.verdict) {
	case GS_VERDICT_PROCEED:
		if (it->mode == MODE_RETRY_BLOCK)
			restart_attempt(it, now);
		else
			top(it)->pos++;
		it->mode = MODE_RUN;
		return FALSE;
	case GS_VERDICT_WAIT:
		*out = effect(GS_EFFECT_WAIT, NULL);
		return TRUE;
	case GS_VERDICT_THROW:
		it->mode = MODE_RUN;
		throw_exception(it, d.exception, now);
		return FALSE;
	case GS_VERDICT_RETRY:
	case GS_VERDICT_RETHROW:
	case GS_VERDICT_ERROR:
		break;
	}
	misuse(it, d, now);
	return FALSE;
}

static void
inject(GsInterp *it, const GsOp *op)
{
	enter(it);
	gs_engine_force_retry_oom(it->engine, it->thread, op->inject.retry_oom, op->inject.kind,
				  op->inject.skip);
	gs_engine_force_split_oom(it->engine, it->thread, op->inject.split_oom, op->inject.kind,
				  op->inject.skip);
	gs_engine_force_cudf_exception(it->engine, it->thread, op->inject.cudf_exception);
	leave(it);
}

/* The end of a frame's op list: loop, next piece, or back to the parent. */
static void
end_of_frame(GsInterp *it, GsTime now)
{
	Frame *f = top(it);

	switch (f->kind) {
	case FRAME_OPS:
		finish(it, GS_EFFECT_DONE, GS_EXC_NONE, now);
		return;
	case FRAME_REPEAT:
		if (++f->iteration < f->op->repeat.times) {
			f->pos = 0;
			return;
		}
		break;
	case FRAME_RETRY:
		enter(it);
		gs_engine_retry_block_end(it->engine, it->thread, now);
		leave(it);
		hand_up(it, f->depth);
		if (f->pieces->len > 0) {
			start_attempt(it, now);
			return;
		}
		break;
	}
	pop(it);
	top(it)->pos++;
}

/* Runs one op at the cursor; TRUE with *out set when the world must act. */
static gboolean
run_op(GsInterp *it, const GsOp *op, GsEffect *out, GsTime now)
{
	switch (op->kind) {
	case GS_OP_ALLOC:
		return start_alloc(it, op, out, now);
	case GS_OP_FREE:
		free_op(it, op, now);
		break;
	case GS_OP_COMPUTE:
		*out = effect(GS_EFFECT_COMPUTE, op);
		out->time = scaled(it, op->compute.time, FALSE);
		top(it)->pos++;
		return TRUE;
	case GS_OP_SLEEP:
	case GS_OP_UNTIL:
		*out = effect(op->kind == GS_OP_SLEEP ? GS_EFFECT_SLEEP : GS_EFFECT_UNTIL, op);
		out->time = op->time;
		top(it)->pos++;
		return TRUE;
	case GS_OP_BLOCK_UNTIL_READY:
		it->mode = MODE_BLOCK_OP;
		return block_until_ready(it, out, now);
	case GS_OP_INJECT:
		inject(it, op);
		break;
	case GS_OP_WAIT_ON_POOL:
		enter(it);
		gs_engine_set_pool_blocked(it->engine, it->thread, op->wait_on_pool);
		leave(it);
		break;
	case GS_OP_REPEAT:
		if (op->repeat.times == 0)
			break;
		push(it, FRAME_REPEAT, op, op->repeat.ops);
		return FALSE;
	case GS_OP_RETRY:
		push(it, FRAME_RETRY, op, op->retry.ops);
		start_attempt(it, now);
		return FALSE;
	case GS_OP_TASK_DONE:
		finish(it, GS_EFFECT_TASK_DONE, GS_EXC_NONE, now);
		return FALSE;
	case GS_OP_SYNC:
	case GS_OP_SPILLABLE:
	case GS_OP_UNSPILLABLE:
	case GS_OP_RESERVE:
	case GS_OP_RELEASE:
	case GS_OP_POOL:
		*out = effect(GS_EFFECT_OP, op);
		top(it)->pos++;
		return TRUE;
	case GS_N_OP_KINDS:
		break;
	}
	top(it)->pos++;
	return FALSE;
}

/* Continues whatever the interpreter was doing; TRUE with *out set to return. */
static gboolean
advance(GsInterp *it, GsEffect *out, GsTime now)
{
	Frame *f;

	switch (it->mode) {
	case MODE_PERMIT:
		/* The driver owes gs_interp_permit_granted(): ask again. */
		*out = effect(GS_EFFECT_PERMIT, it->alloc.op);
		return TRUE;
	case MODE_ALLOC_BEGIN:
		return alloc_begin(it, out, now);
	case MODE_ALLOC_TRY:
		/* The driver owes gs_interp_alloc_done(): ask again. */
		*out = it->alloc;
		return TRUE;
	case MODE_RETRY_BLOCK:
	case MODE_BLOCK_OP:
		return block_until_ready(it, out, now);
	case MODE_FINISHING:
		it->mode = MODE_FINISHED;
		*out = it->final;
		return TRUE;
	case MODE_FINISHED:
		*out = it->final;
		return TRUE;
	case MODE_RUN:
		break;
	}
	f = top(it);
	if (f->pos >= f->ops->len) {
		end_of_frame(it, now);
		return FALSE;
	}
	return run_op(it, current_op(it), out, now);
}

/*
 * The engine hears of a free once the driver has carried it out, so that
 * whoever the free wakes comes after it in every log.
 */
static void
tell_free(GsInterp *it, GsTime now)
{
	if (!it->freed)
		return;
	it->freed = FALSE;
	if (it->hooks != NULL && it->hooks->fast_free != NULL &&
	    it->hooks->fast_free(it->hooks_data, &it->last_free))
		return;
	enter(it);
	gs_engine_dealloc(it->engine, it->thread, it->last_free.alloc_kind, it->last_free.size, now);
	leave(it);
}

GsEffect
gs_interp_step(GsInterp *it, GsTime now)
{
	GsEffect out;

	tell_free(it, now);
	for (;;) {
		if (it->frees_head < it->frees->len) {
			out = g_array_index(it->frees, GsEffect, it->frees_head++);
			it->freed = TRUE;
			it->last_free = out;
			if (it->frees_head == it->frees->len) {
				g_array_set_size(it->frees, 0);
				it->frees_head = 0;
			}
			return out;
		}
		if (advance(it, &out, now))
			return out;
	}
}

void
gs_interp_abort(GsInterp *it, GsTime now)
{
	if (it->mode == MODE_FINISHING || it->mode == MODE_FINISHED)
		return;
	finish(it, GS_EFFECT_DONE, GS_EXC_NONE, now);
}

gboolean
gs_interp_finished(const GsInterp *it)
{
	return it->mode == MODE_FINISHED;
}

const GArray *
gs_interp_exceptions(const GsInterp *it)
{
	return it->seen;
}

guint
gs_interp_live_buffers(const GsInterp *it)
{
	return it->buffers->len;
}

gint64
gs_interp_live_bytes(const GsInterp *it, GsAllocKind kind)
{
	gint64 bytes = 0;

	for (guint i = 0; i < it->buffers->len; i++) {
		const Buffer *b = &g_array_index(it->buffers, Buffer, i);

		if (b->kind == kind)
			bytes += b->size;
	}
	return bytes;
}
