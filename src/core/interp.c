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
 * Layout: a simulator keeps one interpreter per simulated thread and steps
 * them in an order it does not control, so each step is likely to begin with
 * a cache miss on the interpreter. The state read on every step sits in the
 * interpreter itself: the first two frames (the op list and one loop or retry
 * block, which covers most threads) are stored inline, and a frame keeps its
 * op list's data pointer and length rather than the GArray. What most threads
 * never need is allocated on first use: the live buffers and the frees to
 * hand out (Holdings, made at the first buffer: a thread that only computes
 * has none), a retry block's pieces, the exceptions seen.
 *
 * Every engine call sits between enter() and leave(), which call the driver's
 * hooks when it installed any (GsInterpHooks: a real-thread driver locks the
 * engine there); the simulator installs only its callbacks.
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

/* A retry block's work list, kept out of the frame: most frames are not retry blocks. */
typedef struct {
	GPtrArray *pieces;  /* GByteArray* paths still to run, last runs next */
	GByteArray *path;   /* the piece being attempted */
	guint depth;        /* 1 for the outermost block, 2 inside it... */
	guint attempts;     /* attempts begun, pieces and reruns alike */
	gint64 target;      /* split: target: the attempt's target size */
} Pieces;

/*
 * A frame counts iterations or holds pieces. Its kind and a repeat's count
 * are copied from the op when it is pushed: a step reads the frame, which
 * is the thread's, and not the op, which a long run's many threads keep in
 * as many places in memory.
 */
typedef struct {
	const GsOp *op;     /* the repeat or retry op; NULL for the top frame */
	const GsOp *ops;    /* the frame's op list (the GArray's data) ... */
	guint n_ops;        /* ... and its length */
	guint pos;          /* the op being run, or the next one */
	union {
		struct {
			guint iterations; /* repeat: iterations finished ... */
			guint times;      /* ... of the op's repeat.times */
		};
		Pieces *retry;    /* retry */
	};
	guint8 kind;        /* FrameKind */
} Frame;

/* Frames stored inside the interpreter; deeper nesting moves them to the heap. */
#define INLINE_FRAMES 2

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
	GsAllocKind kind;
	gint64 size;
	guint64 handle;
	guint depth;    /* retry depth it belongs to: 0 = the thread */
	gboolean at_end;/* in the frees queue: handed back because the thread ended */
} Buffer;

/* A growable array of buffers, empty (and unallocated) until first used. */
typedef struct {
	Buffer *data;
	guint len, cap;
} BufferList;

/* What a thread that allocates keeps; made at its first buffer (add_buffer()). */
typedef struct {
	BufferList buffers;   /* the live buffers, oldest first */
	BufferList frees;     /* buffers given back, as FREE effects to hand out */
	guint frees_head;     /* frees[frees_head ..) are still to hand out */
	gint64 last_free_size;
	GArray *allocated;    /* gboolean by buffer name: allocated once at least (on demand) */
} Holdings;

struct GsInterp {
	/* Read on every step. */
	guint8 mode;          /* Mode */
	guint8 policy;        /* GsOomPolicy */
	guint8 last_free_kind;/* GsAllocKind of the FREE last handed out */
	guint8 final_kind;    /* GsEffectKind: DONE, FAILED or TASK_DONE once FINISHING */
	guint8 final_exception; /* GsException */
	guint freed : 1;   /* a FREE was handed out: tell the engine at the next step */
	guint require_permit : 1;
	guint recursive : 1;
	guint unspill : 1;    /* the allocation in progress is gs_interp_unspill_first()'s */
	guint alloc_fresh : 1;/* the allocation has not met the engine yet (fast_alloc) */
	guint note_allocated : 1; /* keep Holdings.allocated (gs_interp_note_allocations()) */
	guint in_retry : 1;   /* a frame is a retry block's: without one, scaled() has nothing to do */
	guint8 last_out;      /* GsEffectKind of the effect handed out last */
	guint n_frames;
	guint cap_frames;     /* of a heap frame array; 0 while inline */
	Frame *frames;        /* inline_frames, or a heap array once deeper */
	Holdings *held;       /* NULL until the first buffer */
	GsEngine *engine;
	GsThreadId thread;
	Frame inline_frames[INLINE_FRAMES];
	/* Read by allocations, frees and exceptions. */
	const GsOp *alloc_op; /* the allocation in progress ... */
	gint64 alloc_size;    /* ... and its size after splitting */
	const GsThreadSpec *spec;
	GArray *seen;         /* GsSeenException; NULL until the first */
	gint64 *values;       /* the spec's values, then their checkpoints; NULL: it has none */
	guint told;           /* exceptions passed to on_exception so far */
	const GsInterpHooks *hooks; /* NULL: the engine is called directly */
	gpointer hooks_data;
};

G_STATIC_ASSERT(GS_N_EXCEPTIONS <= 256 && GS_N_KINDS <= 256);

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

gint64
gs_split_target(gint64 target, gint64 data)
{
	return data > 0 && data <= target / 2 ? data / 2 : target / 2;
}

/* @value (bytes or time) for an attempt at @target of a block that began at @first: in proportion. */
static gint64
scale_to_target(gint64 value, gint64 target, gint64 first)
{
	return (gint64) ((__int128) value * target / first);
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
	if (it->hooks != NULL && it->hooks->enter != NULL)
		it->hooks->enter(it->hooks_data);
}

static void
leave(GsInterp *it)
{
	if (it->hooks != NULL && it->hooks->leave != NULL)
		it->hooks->leave(it->hooks_data);
}

static void
tell_block(GsInterp *it, const GsOp *retry_op, gboolean entering)
{
	if (it->hooks != NULL && it->hooks->on_block != NULL)
		it->hooks->on_block(retry_op, entering, it->hooks_data);
}

/* ---- frames ---- */

static Frame *
top(GsInterp *it)
{
	return &it->frames[it->n_frames - 1];
}

static FrameKind
frame_kind(const Frame *f)
{
	return (FrameKind) f->kind;
}

static guint
retry_depth(GsInterp *it)
{
	for (guint i = it->n_frames; i-- > 0;) {
		if (frame_kind(&it->frames[i]) == FRAME_RETRY)
			return it->frames[i].retry->depth;
	}
	return 0;
}

static void
frame_clear(Frame *f)
{
	if (frame_kind(f) != FRAME_RETRY)
		return;
	g_ptr_array_unref(f->retry->pieces);
	if (f->retry->path != NULL)
		g_byte_array_unref(f->retry->path);
	g_free(f->retry);
}

/* Room for one more frame: past the inline ones, the frames move to the heap. */
static void
reserve_frame(GsInterp *it)
{
	guint cap = it->cap_frames > 0 ? it->cap_frames : INLINE_FRAMES;

	if (it->n_frames < cap)
		return;
	if (it->cap_frames == 0) {
		it->frames = g_new(Frame, 2 * cap);
		memcpy(it->frames, it->inline_frames, sizeof it->inline_frames);
	} else {
		it->frames = g_renew(Frame, it->frames, 2 * cap);
	}
	it->cap_frames = 2 * cap;
}

static void
push(GsInterp *it, const GsOp *op, const GArray *ops)
{
	Frame f = {.op = op};

	f.kind = op == NULL ? FRAME_OPS : op->kind == GS_OP_REPEAT ? FRAME_REPEAT : FRAME_RETRY;
	if (f.kind == FRAME_REPEAT)
		f.times = op->repeat.times;
	if (ops != NULL) {
		f.ops = (const GsOp *) (gpointer) ops->data;
		f.n_ops = ops->len;
	}
	if (frame_kind(&f) == FRAME_RETRY) {
		f.retry = g_new0(Pieces, 1);
		f.retry->depth = retry_depth(it) + 1;
		f.retry->pieces = g_ptr_array_new_with_free_func((GDestroyNotify) g_byte_array_unref);
		g_ptr_array_add(f.retry->pieces, g_byte_array_new());
		f.retry->target = op->retry.target;
		tell_block(it, op, TRUE);
	}
	reserve_frame(it);
	it->frames[it->n_frames++] = f;
	if (frame_kind(&f) == FRAME_RETRY)
		it->in_retry = TRUE;
}

static void
pop(GsInterp *it)
{
	Frame *f = top(it);

	if (frame_kind(f) == FRAME_RETRY) {
		tell_block(it, f->op, FALSE);
		/* The innermost retry block leaves: another is left if it was nested. */
		it->in_retry = f->retry->depth > 1;
	}
	frame_clear(f);
	it->n_frames--;
}

static const GsOp *
current_op(GsInterp *it)
{
	Frame *f = top(it);

	return &f->ops[f->pos];
}

/*
 * Applies every enclosing piece's halvings, outermost block first; a block
 * that splits a target scales by its attempt's target instead.
 */
static gint64
scaled(GsInterp *it, gint64 value, gboolean is_size)
{
	if (!it->in_retry)
		return value;
	for (guint i = 0; i < it->n_frames; i++) {
		const Frame *f = &it->frames[i];
		const GByteArray *path;

		if (frame_kind(f) != FRAME_RETRY)
			continue;
		if (GS_SPLIT_IS_TARGET(f->op->retry.split)) {
			value = scale_to_target(value, f->retry->target, f->op->retry.target);
			continue;
		}
		path = f->retry->path;
		value = is_size ? gs_split_size(value, path->data, path->len)
				: gs_split_time(value, path->data, path->len);
	}
	return value;
}

/* ---- lifetime ---- */

/* ---- values: a Retryable's state, checkpoints and restores ---- */

static guint
n_values(const GsInterp *it)
{
	return it->spec->values != NULL ? it->spec->values->len : 0;
}

/* Each value starts where the spec says, and so does its checkpoint (Retryable's). */
static void
start_values(GsInterp *it)
{
	guint n = n_values(it);

	if (n == 0)
		return;
	it->values = g_new(gint64, 2 * n);
	memcpy(it->values, it->spec->value_starts->data, n * sizeof(gint64));
	memcpy(it->values + n, it->spec->value_starts->data, n * sizeof(gint64));
}

static void
tell_value(GsInterp *it, guint name, gint64 value, const char *what)
{
	if (it->hooks != NULL && it->hooks->on_value != NULL)
		it->hooks->on_value(name, value, what, it->hooks_data);
}

/* A sum past the range wraps around (two's complement) instead of overflowing. */
static void
change_value(GsInterp *it, const GsOp *op)
{
	gint64 *v = &it->values[op->value.name];

	*v = op->value.set ? op->value.amount
			   : (gint64) ((guint64) *v + (guint64) op->value.amount);
	tell_value(it, op->value.name, *v, op->value.set ? "set" : "add");
}

static void
checkpoint_values(GsInterp *it, const GsNames *names)
{
	const guint *name = gs_names_data(names);
	guint n = n_values(it);

	for (guint i = 0; i < names->len; i++) {
		it->values[n + name[i]] = it->values[name[i]];
		tell_value(it, name[i], it->values[name[i]], "checkpoint");
	}
}

static void
restore_values(GsInterp *it, const GsNames *names)
{
	const guint *name = gs_names_data(names);
	guint n = n_values(it);

	for (guint i = 0; i < names->len; i++) {
		it->values[name[i]] = it->values[n + name[i]];
		tell_value(it, name[i], it->values[name[i]], "restore");
	}
}

gint64
gs_interp_value(const GsInterp *it, guint name)
{
	g_return_val_if_fail(it != NULL && name < n_values(it), 0);
	return it->values[name];
}

gsize
gs_interp_size(void)
{
	return sizeof(GsInterp);
}

void
gs_interp_init(GsInterp *it, GsEngine *engine, const GsThreadSpec *spec, GsThreadId thread,
	       GsOomPolicy policy)
{
	memset(it, 0, sizeof *it);
	it->engine = engine;
	it->spec = spec;
	it->thread = thread;
	it->policy = policy < GS_N_OOM_POLICIES ? policy : GS_OOM_FAIL;
	it->frames = it->inline_frames;
	push(it, NULL, spec->ops);
	start_values(it);
}

GsInterp *
gs_interp_new(GsEngine *engine, const GsThreadSpec *spec, GsThreadId thread, GsOomPolicy policy)
{
	GsInterp *it = g_new(GsInterp, 1);

	gs_interp_init(it, engine, spec, thread, policy);
	return it;
}

void
gs_interp_clear(GsInterp *it)
{
	it->hooks = NULL; /* the driver may be gone: nothing is left to tell */
	while (it->n_frames > 0)
		pop(it);
	if (it->cap_frames > 0)
		g_free(it->frames);
	if (it->held != NULL) {
		g_free(it->held->buffers.data);
		g_free(it->held->frees.data);
		if (it->held->allocated != NULL)
			g_array_unref(it->held->allocated);
		g_free(it->held);
	}
	if (it->seen != NULL)
		g_array_unref(it->seen);
	g_free(it->values);
	memset(it, 0, sizeof *it);
}

void
gs_interp_free(GsInterp *it)
{
	if (it == NULL)
		return;
	gs_interp_clear(it);
	g_free(it);
}

/* ---- buffers ---- */

/* Room for two at first: most threads hold a buffer or two at a time, and each has two lists. */
static void
list_append(BufferList *list, const Buffer *b)
{
	if (list->len == list->cap) {
		list->cap = list->cap == 0 ? 2 : 2 * list->cap;
		list->data = g_renew(Buffer, list->data, list->cap);
	}
	list->data[list->len++] = *b;
}

static inline guint
live_count(const GsInterp *it)
{
	return it->held != NULL ? it->held->buffers.len : 0;
}

/*
 * Hands @owner's live buffer at @index back through @freer (@owner itself,
 * or the thread that frees another's buffer): a FREE effect is queued there
 * and the buffer leaves @owner's list.
 */
static void
queue_free_by(GsInterp *owner, guint index, GsInterp *freer, gboolean at_end)
{
	BufferList *live = &owner->held->buffers;

	live->data[index].at_end = at_end;
	if (freer->held == NULL)
		freer->held = g_new0(Holdings, 1);
	list_append(&freer->held->frees, &live->data[index]);
	memmove(&live->data[index], &live->data[index + 1],
		(live->len - index - 1) * sizeof(Buffer));
	live->len--;
}

/* Hands the live buffer at @index back: a FREE effect is queued and it leaves the list. */
static void
queue_free(GsInterp *it, guint index, gboolean at_end)
{
	queue_free_by(it, index, it, at_end);
}

static void
add_buffer(GsInterp *it, guint name, gint64 size, GsAllocKind kind, guint64 handle)
{
	Buffer b = {.name = name, .size = size, .kind = kind, .handle = handle,
		    .depth = retry_depth(it)};

	if (it->held == NULL)
		it->held = g_new0(Holdings, 1);
	list_append(&it->held->buffers, &b);
	if (it->note_allocated) {
		GArray *allocated = it->held->allocated;

		if (allocated == NULL)
			allocated = it->held->allocated = g_array_new(FALSE, TRUE, sizeof(gboolean));
		if (name >= allocated->len)
			g_array_set_size(allocated, name + 1);
		g_array_index(allocated, gboolean, name) = TRUE;
	}
}

/* Whether another thread frees buffer @name (GsThreadSpec.given_away). */
static gboolean
given_away(const GsInterp *it, guint name)
{
	const GArray *given = it->spec->given_away;

	return given != NULL && name < given->len && g_array_index(given, gboolean, name);
}

/*
 * Frees every live buffer at retry depth >= @depth, oldest first; 0: all of
 * them as the thread ends, but those another thread frees, which outlive it.
 */
static void
free_from_depth(GsInterp *it, guint depth, GsTime now)
{
	for (guint i = 0; i < live_count(it);) {
		const Buffer *b = &it->held->buffers.data[i];

		if (b->depth >= depth && !(depth == 0 && given_away(it, b->name)))
			queue_free(it, i, depth == 0);
		else
			i++;
	}
}

/*
 * Frees, through @freer, every live instance of each of @owner's buffers
 * called by one of @names, wherever it was allocated: after a split, each
 * half of the piece left its own output under the name, and the name stands
 * for all of them. A buffer whose allocation threw (or never ran) is not
 * there to free.
 */
static void
free_named_by(GsInterp *owner, const GsNames *names, GsInterp *freer)
{
	const guint *name = gs_names_data(names);

	for (guint k = 0; k < names->len; k++) {
		for (guint i = 0; i < live_count(owner);) {
			if (owner->held->buffers.data[i].name == name[k])
				queue_free_by(owner, i, freer, FALSE);
			else
				i++;
		}
	}
}

/* Frees every live buffer of its own called by one of @names. */
static void
free_named(GsInterp *it, const GsNames *names)
{
	free_named_by(it, names, it);
}

/* A finished piece's live buffers are its output: they now belong to the block's parent. */
static void
hand_up(GsInterp *it, guint depth)
{
	for (guint i = 0; i < live_count(it); i++) {
		Buffer *b = &it->held->buffers.data[i];

		if (b->depth >= depth)
			b->depth = depth - 1;
	}
}

/* ---- exceptions ---- */

static void
op_path(GsInterp *it, char *out, gsize size)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < it->n_frames; i++)
		g_string_append_printf(s, i == 0 ? "%u" : ".%u", it->frames[i].pos);
	g_strlcpy(out, s->str, size);
	g_string_free(s, TRUE);
}

static GsSeenException *
record(GsInterp *it, GsException exc, GsTime now)
{
	GsSeenException seen = {.time = now, .exception = exc};

	/* An exception thrown at an allocation says what it asked for. */
	if (it->mode == MODE_ALLOC_BEGIN || it->mode == MODE_ALLOC_TRY)
		seen.bytes = it->alloc_size;
	op_path(it, seen.op, sizeof seen.op);
	if (it->seen == NULL)
		it->seen = g_array_new(FALSE, TRUE, sizeof(GsSeenException));
	g_array_append_val(it->seen, seen);
	return &g_array_index(it->seen, GsSeenException, it->seen->len - 1);
}

static void
finish(GsInterp *it, GsEffectKind kind, GsException exc, GsTime now)
{
	/* A task gives back what its thread still holds when it ends. */
	free_from_depth(it, 0, now);
	it->final_kind = kind;
	it->final_exception = exc;
	it->mode = MODE_FINISHING;
}

/* Runs the current piece (again) from its first op. */
static void
restart_attempt(GsInterp *it, GsTime now)
{
	top(it)->pos = 0;
	top(it)->retry->attempts++;
	enter(it);
	gs_engine_retry_block_start(it->engine, it->thread, now);
	leave(it);
}

/* Takes the next piece off the block's work list and runs it. */
static void
start_attempt(GsInterp *it, GsTime now)
{
	Pieces *work = top(it)->retry;

	if (work->path != NULL)
		g_byte_array_unref(work->path);
	work->path = g_ptr_array_steal_index(work->pieces, work->pieces->len - 1);
	restart_attempt(it, now);
}

/*
 * Splitting is allowed, and fewer than max_splits splits lie on the piece's
 * path; or, splitting a target, the next target is not below min_target.
 */
static gboolean
can_split(const Frame *f)
{
	const GsOp *op = f->op;

	switch (op->retry.split) {
	case GS_SPLIT_HALVES:
		return f->retry->path->len < op->retry.max_splits;
	case GS_SPLIT_TARGET:
	case GS_SPLIT_TARGET_CPU:
		return gs_split_target(f->retry->target, op->retry.data) >= op->retry.min_target;
	case GS_SPLIT_NONE:
		break;
	}
	return FALSE;
}

/*
 * What escapes a block that cannot honour a split request: CouldNotSplit;
 * or, splitting a target, the split policy's own SplitAndRetryOOM, as
 * splitTargetSizeInHalfGpu (GPU) or splitTargetSizeInHalfCpu (CPU) throws
 * it, whichever exception asked for the split.
 */
static GsException
split_refused(const Frame *f)
{
	switch (f->op->retry.split) {
	case GS_SPLIT_TARGET:
		return GS_EXC_GPU_SPLIT_AND_RETRY_OOM;
	case GS_SPLIT_TARGET_CPU:
		return GS_EXC_CPU_SPLIT_AND_RETRY_OOM;
	case GS_SPLIT_HALVES:
	case GS_SPLIT_NONE:
		break;
	}
	return GS_EXC_COULD_NOT_SPLIT;
}

/*
 * Replaces the current piece by its halves and starts the first; splitting a
 * target, reruns the piece at the next target (the split policy returns one
 * piece).
 */
static void
split_piece(GsInterp *it, GsTime now)
{
	Pieces *work = top(it)->retry;
	GByteArray *first, *second;
	const guint8 one = 1, zero = 0;

	if (GS_SPLIT_IS_TARGET(top(it)->op->retry.split)) {
		work->target = gs_split_target(work->target, top(it)->op->retry.data);
		restart_attempt(it, now);
		return;
	}
	second = g_byte_array_new();
	g_byte_array_append(second, work->path->data, work->path->len);
	g_byte_array_append(second, &one, 1);
	first = g_byte_array_new();
	g_byte_array_append(first, work->path->data, work->path->len);
	g_byte_array_append(first, &zero, 1);
	g_ptr_array_add(work->pieces, second);
	g_ptr_array_add(work->pieces, first);
	start_attempt(it, now);
}

/*
 * An exception escapes retry block @f: as RmmRapidsRetryIterator closes its
 * attempts and its input on any throwable it does not handle, the
 * attempt's live buffers and the block's input buffers go back.
 */
static void
close_block(GsInterp *it, Frame *f, GsTime now)
{
	free_from_depth(it, f->retry->depth, now);
	free_named(it, &f->op->retry.input);
}

/* Leaves the innermost frame on the way out of an exception. */
static void
unwind(GsInterp *it, GsTime now)
{
	Frame *f = top(it);

	if (frame_kind(f) == FRAME_RETRY) {
		enter(it);
		gs_engine_retry_block_end(it->engine, it->thread, now);
		leave(it);
		close_block(it, f, now);
	}
	pop(it);
}

/* Tells the driver of the exceptions recorded since it was last told. */
static void
tell_exceptions(GsInterp *it)
{
	for (; it->seen != NULL && it->told < it->seen->len; it->told++) {
		if (it->hooks != NULL && it->hooks->on_exception != NULL)
			it->hooks->on_exception(&g_array_index(it->seen, GsSeenException, it->told),
						it->hooks_data);
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

	while (it->n_frames > 1) {
		Frame *f = top(it);
		gboolean split_request = gs_exception_is_split(exc) || exc == GS_EXC_COULD_NOT_SPLIT;

		/*
		 * withRestoreOnRetry around the block's ops: a retry or split
		 * OOM leaving them puts the values back, whatever the block
		 * then does with it.
		 */
		if (frame_kind(f) == FRAME_RETRY && gs_exception_is_recoverable(exc))
			restore_values(it, &f->op->retry.restore);

		if (frame_kind(f) != FRAME_RETRY || !(gs_exception_is_recoverable(exc) || split_request)) {
			unwind(it, now);
			continue;
		}
		/* A split request this block cannot honour escapes it as CouldNotSplit. */
		seen->handled = !split_request || can_split(f);
		tell_exceptions(it); /* before the frees it causes */
		enter(it);
		gs_engine_retry_block_end(it->engine, it->thread, now);
		leave(it);
		free_from_depth(it, f->retry->depth, now);
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
		exc = split_refused(f);
		close_block(it, f, now);
		pop(it);
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

/*
 * The engine refused the call, as the reference's state machine throws
 * std::invalid_argument (a non-blocking host allocation begun in
 * THREAD_BUFN_WAIT after on_oom continue swallowed a RetryOOM): the op
 * throws it, and the thread's on_oom decides, as for any other exception.
 */
static void
misuse(GsInterp *it, GsTime now)
{
	it->mode = MODE_RUN;
	throw_exception(it, GS_EXC_ILLEGAL_ARGUMENT, now);
}

static GsAllocKind
alloc_kind(const GsInterp *it)
{
	return it->unspill ? GS_KIND_GPU : it->alloc_op->alloc.kind;
}

/* GPU allocations always block; a host one only if the op says so. */
static gboolean
alloc_blocking(const GsInterp *it)
{
	return alloc_kind(it) == GS_KIND_GPU || it->alloc_op->alloc.blocking;
}

/* The ALLOC effect of the allocation in progress. */
static GsEffect
alloc_effect(const GsInterp *it)
{
	return (GsEffect){
		.kind = GS_EFFECT_ALLOC,
		.buf = it->unspill ? GS_INTERP_UNSPILL_BUF : it->alloc_op->alloc.buf,
		.size = it->alloc_size,
		.alloc_kind = alloc_kind(it),
		.blocking = alloc_blocking(it),
		.op = it->alloc_op,
	};
}

/* The allocation protocol's pre-call; TRUE with *out set when the driver must act. */
static gboolean
alloc_begin(GsInterp *it, GsEffect *out, GsTime now)
{
	GsDecision d;
	guint64 handle;

	/*
	 * Once per allocation, the driver may satisfy it itself; never the
	 * unspill, whose bytes are the spilled buffers' and not a new buffer.
	 */
	if (it->alloc_fresh && !it->unspill && it->hooks != NULL &&
	    it->hooks->fast_alloc != NULL) {
		GsEffect alloc = alloc_effect(it);

		it->alloc_fresh = FALSE;
		if (it->hooks->fast_alloc(it->hooks_data, &alloc, &handle)) {
			add_buffer(it, it->alloc_op->alloc.buf, it->alloc_size, alloc_kind(it),
				   handle);
			top(it)->pos++;
			it->mode = MODE_RUN;
			return FALSE;
		}
	}
	it->alloc_fresh = FALSE;
	enter(it);
	d = gs_engine_alloc_begin(it->engine, it->thread, alloc_kind(it), alloc_blocking(it), now);
	leave(it);

	switch (d.verdict) {
	case GS_VERDICT_PROCEED:
		it->recursive = d.recursive != FALSE;
		it->mode = MODE_ALLOC_TRY;
		*out = alloc_effect(it);
		return TRUE;
	case GS_VERDICT_WAIT:
		*out = effect(GS_EFFECT_WAIT, it->alloc_op);
		return TRUE;
	case GS_VERDICT_THROW:
		throw_exception(it, d.exception, now);
		return FALSE;
	case GS_VERDICT_RETRY:
	case GS_VERDICT_RETHROW:
	case GS_VERDICT_ERROR:
		break;
	}
	misuse(it, now);
	return FALSE;
}

/* policy.oom "fail": no state machine to consult; the allocation fails for good. */
static void
fail_for_good(GsInterp *it, GsTime now)
{
	enter(it);
	gs_engine_alloc_failed(it->engine, it->thread, alloc_kind(it), FALSE, alloc_blocking(it),
			       it->recursive, now);
	leave(it);
	throw_exception(it, gs_exception_fatal_oom(alloc_kind(it)), now);
}

/* policy.oom "block" and "retry": the state machine says whether to retry, or what to throw. */
static void
ask_the_engine(GsInterp *it, GsTime now)
{
	GsDecision d;

	enter(it);
	d = gs_engine_alloc_failed(it->engine, it->thread, alloc_kind(it), TRUE,
				   alloc_blocking(it), it->recursive, now);
	leave(it);
	if (d.verdict == GS_VERDICT_RETRY && !alloc_blocking(it)) {
		/* A non-blocking host allocation gives up: no buffer, no exception. */
		top(it)->pos++;
		it->mode = MODE_RUN;
	} else if (d.verdict == GS_VERDICT_RETRY) {
		it->mode = MODE_ALLOC_BEGIN;
	} else if (d.verdict == GS_VERDICT_RETHROW) {
		throw_exception(it, d.exception, now);
	} else {
		misuse(it, now);
	}
}

/* What an allocation that failed does, by OOM policy (whether the engine busts deadlocks: workload.c). */
static void (*const on_alloc_failed[GS_N_OOM_POLICIES])(GsInterp *it, GsTime now) = {
	[GS_OOM_FAIL] = fail_for_good,
	[GS_OOM_BLOCK] = ask_the_engine,
	[GS_OOM_RETRY] = ask_the_engine,
};

void
gs_interp_alloc_done(GsInterp *it, gboolean ok, guint64 handle, GsTime now)
{
	g_return_if_fail(it->mode == MODE_ALLOC_TRY);
	if (ok && it->unspill) {
		/* The compute's buffers are back: run the compute op again. */
		enter(it);
		gs_engine_alloc_success(it->engine, it->thread, GS_KIND_GPU, 0, it->recursive, now);
		leave(it);
		it->unspill = FALSE;
		it->mode = MODE_RUN;
		return;
	}
	if (ok) {
		enter(it);
		gs_engine_alloc_success(it->engine, it->thread, alloc_kind(it), it->alloc_size,
					it->recursive, now);
		leave(it);
		add_buffer(it, it->alloc_op->alloc.buf, it->alloc_size, alloc_kind(it), handle);
		top(it)->pos++;
		it->mode = MODE_RUN;
		return;
	}
	on_alloc_failed[it->policy](it, now);
}

void
gs_interp_alloc_throw(GsInterp *it, GsException exc, GsTime now)
{
	g_return_if_fail(it->mode == MODE_ALLOC_TRY);
	enter(it);
	gs_engine_alloc_failed(it->engine, it->thread, alloc_kind(it), FALSE, alloc_blocking(it),
			       it->recursive, now);
	leave(it);
	/* Still in the allocation while it is thrown; handling the exception sets the mode. */
	throw_exception(it, exc, now);
}

void
gs_interp_unspill_first(GsInterp *it, gint64 bytes, GsTime now)
{
	g_return_if_fail(it->mode == MODE_RUN && it->last_out == GS_EFFECT_COMPUTE);
	top(it)->pos--; /* the compute has not begun */
	it->alloc_op = current_op(it);
	it->alloc_size = bytes;
	it->unspill = TRUE;
	it->alloc_fresh = FALSE; /* the unspill always goes through the engine */
	it->last_out = GS_EFFECT_WAIT; /* once per compute effect */
	it->mode = MODE_ALLOC_BEGIN;
}

void
gs_interp_op_failed(GsInterp *it, GsException exc, GsTime now)
{
	g_return_if_fail(it->mode == MODE_RUN && it->last_out == GS_EFFECT_OP);
	top(it)->pos--; /* the exception belongs to the op, not to the next one */
	it->last_out = GS_EFFECT_WAIT;
	throw_exception(it, exc, now);
}

static gboolean
start_alloc(GsInterp *it, const GsOp *op, GsEffect *out, GsTime now)
{
	it->unspill = FALSE;
	it->alloc_op = op;
	it->alloc_size = scaled(it, op->alloc.size, TRUE);
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
	it->require_permit = require != FALSE;
}

void
gs_interp_permit_granted(GsInterp *it)
{
	g_return_if_fail(it->mode == MODE_PERMIT);
	it->mode = MODE_ALLOC_BEGIN;
}

void
gs_interp_note_allocations(GsInterp *it)
{
	it->note_allocated = TRUE;
}

gboolean
gs_interp_allocated(const GsInterp *it, guint name)
{
	const GArray *allocated = it->held != NULL ? it->held->allocated : NULL;

	g_return_val_if_fail(it->note_allocated, FALSE);
	return allocated != NULL && name < allocated->len && g_array_index(allocated, gboolean, name);
}

void
gs_interp_free_for(GsInterp *it, GsInterp *owner, const GsOp *op)
{
	g_return_if_fail(op->kind == GS_OP_FREE && owner != it);
	free_named_by(owner, &op->free.bufs, it);
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
	misuse(it, now);
	return FALSE;
}

/* Whether the innermost retry block around the cursor runs its first attempt (or there is none). */
static gboolean
in_first_attempt(GsInterp *it)
{
	for (guint i = it->n_frames; i-- > 0;) {
		if (frame_kind(&it->frames[i]) == FRAME_RETRY)
			return it->frames[i].retry->attempts == 1;
	}
	return TRUE;
}

/*
 * Arms the thread's injections. Inside a retry block only its first attempt
 * does, as the retry iterator injects once, at its first attempt: the engine
 * counts the injected throws down, and arming them again on each rerun would
 * throw forever (injected throws do not count toward the retry cap).
 */
static void
inject(GsInterp *it, const GsOp *op)
{
	if (!in_first_attempt(it))
		return;
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

	switch (frame_kind(f)) {
	case FRAME_OPS:
		finish(it, GS_EFFECT_DONE, GS_EXC_NONE, now);
		return;
	case FRAME_REPEAT:
		if (++f->iterations < f->times) {
			f->pos = 0;
			return;
		}
		break;
	case FRAME_RETRY:
		enter(it);
		gs_engine_retry_block_end(it->engine, it->thread, now);
		leave(it);
		hand_up(it, f->retry->depth);
		if (f->retry->pieces->len > 0) {
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
		if (op->free.thread != NULL) {
			/* Another thread's buffers: the driver finds it (gs_interp_free_for()). */
			*out = effect(GS_EFFECT_OP, op);
			top(it)->pos++;
			return TRUE;
		}
		free_named(it, &op->free.bufs);
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
	case GS_OP_VALUE:
		change_value(it, op);
		break;
	case GS_OP_CHECKPOINT:
		checkpoint_values(it, &op->checkpoint);
		break;
	case GS_OP_WAIT_ON_POOL:
		enter(it);
		gs_engine_set_pool_blocked(it->engine, it->thread, op->wait_on_pool);
		leave(it);
		break;
	case GS_OP_REPEAT:
		if (op->repeat.times == 0)
			break;
		push(it, op, op->repeat.ops);
		return FALSE;
	case GS_OP_RETRY:
		push(it, op, op->retry.ops);
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
	case GS_OP_SHUTDOWN_RESERVATIONS:
	case GS_OP_BORROW_STREAM:
	case GS_OP_RETURN_STREAM:
	case GS_OP_POOL:
	case GS_OP_ASSOCIATE:
	case GS_OP_DISSOCIATE:
	case GS_OP_ACQUIRE_EXECUTION:
	case GS_OP_RELEASE_EXECUTION:
	case GS_OP_ALLOCATE_PAGE:
	case GS_OP_FREE_PAGE:
	case GS_OP_CLEAN_UP:
	case GS_OP_ACQUIRE_STORAGE:
	case GS_OP_RELEASE_STORAGE:
	case GS_OP_RELEASE_ALL_STORAGE:
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
		*out = effect(GS_EFFECT_PERMIT, it->alloc_op);
		return TRUE;
	case MODE_ALLOC_BEGIN:
		return alloc_begin(it, out, now);
	case MODE_ALLOC_TRY:
		/* The driver owes gs_interp_alloc_done(): ask again. */
		*out = alloc_effect(it);
		return TRUE;
	case MODE_RETRY_BLOCK:
	case MODE_BLOCK_OP:
		return block_until_ready(it, out, now);
	case MODE_FINISHING:
		/* After its last frees, which the engine still counts as the thread's. */
		enter(it);
		gs_engine_thread_finished(it->engine, it->thread, now);
		leave(it);
		it->mode = MODE_FINISHED;
		*out = (GsEffect){.kind = it->final_kind, .exception = it->final_exception};
		return TRUE;
	case MODE_FINISHED:
		*out = (GsEffect){.kind = it->final_kind, .exception = it->final_exception};
		return TRUE;
	case MODE_RUN:
		break;
	}
	f = top(it);
	if (f->pos >= f->n_ops) {
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
	if (it->hooks != NULL && it->hooks->fast_free != NULL) {
		GsEffect freed = {.kind = GS_EFFECT_FREE, .size = it->held->last_free_size,
				  .alloc_kind = it->last_free_kind};

		if (it->hooks->fast_free(it->hooks_data, &freed))
			return;
	}
	enter(it);
	gs_engine_dealloc(it->engine, it->thread, it->last_free_kind, it->held->last_free_size, now);
	leave(it);
}

/* The next queued FREE effect; the queue empties once all are handed out. */
static GsEffect
next_free(GsInterp *it)
{
	Holdings *h = it->held;
	const Buffer *b = &h->frees.data[h->frees_head++];
	GsEffect out = {.kind = GS_EFFECT_FREE, .buf = b->name, .size = b->size,
			.alloc_kind = b->kind, .handle = b->handle, .at_end = b->at_end};

	it->freed = TRUE;
	it->last_free_kind = b->kind;
	h->last_free_size = b->size;
	if (h->frees_head == h->frees.len) {
		h->frees.len = 0;
		h->frees_head = 0;
	}
	return out;
}

static GsEffect
next_effect(GsInterp *it, GsTime now)
{
	GsEffect out;

	tell_free(it, now);
	for (;;) {
		if (it->held != NULL && it->held->frees_head < it->held->frees.len)
			return next_free(it);
		if (advance(it, &out, now))
			return out;
	}
}

GsEffect
gs_interp_step(GsInterp *it, GsTime now)
{
	GsEffect out = next_effect(it, now);

	it->last_out = (guint8) out.kind;
	return out;
}

const void *
gs_interp_next_read(const GsInterp *it)
{
	const Frame *f;

	if (it->mode != MODE_RUN || it->n_frames == 0)
		return NULL;
	f = &it->frames[it->n_frames - 1];
	/* At the end of its list a repeat frame starts over; another frame's end reads more. */
	return f->pos < f->n_ops ? &f->ops[f->pos] : f->ops;
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
	/* Allocated on demand: most threads see no exception and never ask. */
	if (it->seen == NULL)
		((GsInterp *) it)->seen = g_array_new(FALSE, TRUE, sizeof(GsSeenException));
	return it->seen;
}

GArray *
gs_interp_take_exceptions(GsInterp *it)
{
	GArray *seen = it->seen;

	it->seen = NULL;
	it->told = 0;
	return seen;
}

guint
gs_interp_live_buffers(const GsInterp *it)
{
	return live_count(it);
}

gint64
gs_interp_live_bytes(const GsInterp *it, GsAllocKind kind)
{
	gint64 bytes = 0;

	for (guint i = 0; i < live_count(it); i++) {
		const Buffer *b = &it->held->buffers.data[i];

		if (b->kind == kind)
			bytes += b->size;
	}
	return bytes;
}
