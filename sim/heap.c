/*
 * gpusim sim: the (time, seq) event heap.
 *
 * A classic array heap: the children of slot i are 2i + 1 and 2i + 2. Sifting
 * moves a hole instead of swapping, so each level costs one copy of an event.
 */
#include "config.h"

#include "heap.h"

/* The first allocation: enough for a small scenario without regrowing. */
#define INITIAL_CAPACITY 64

struct GsHeap {
	GsEvent *events; /* events[0 .. len) form a min-heap by (time, seq) */
	guint len;
	guint cap;
	guint64 next_seq; /* the sequence number the next push gets */
};

GsHeap *
gs_heap_new(void)
{
	return g_new0(GsHeap, 1);
}

void
gs_heap_free(GsHeap *heap)
{
	if (heap == NULL)
		return;
	g_free(heap->events);
	g_free(heap);
}

/* TRUE if @a fires before @b. Sequence numbers are unique, so never a tie. */
static inline gboolean
earlier(const GsEvent *a, const GsEvent *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

static void
sift_up(GsHeap *heap, guint i)
{
	GsEvent e = heap->events[i];

	while (i > 0) {
		guint parent = (i - 1) / 2;

		if (!earlier(&e, &heap->events[parent]))
			break;
		heap->events[i] = heap->events[parent];
		i = parent;
	}
	heap->events[i] = e;
}

static void
sift_down(GsHeap *heap, guint i)
{
	GsEvent e = heap->events[i];

	for (;;) {
		guint child = 2 * i + 1;

		if (child >= heap->len)
			break;
		if (child + 1 < heap->len &&
		    earlier(&heap->events[child + 1], &heap->events[child]))
			child++;
		if (!earlier(&heap->events[child], &e))
			break;
		heap->events[i] = heap->events[child];
		i = child;
	}
	heap->events[i] = e;
}

static void
grow(GsHeap *heap)
{
	guint cap = heap->cap == 0 ? INITIAL_CAPACITY : heap->cap * 2;

	/* sift_down computes 2i + 2 in a guint; keep that from wrapping. */
	g_assert(heap->cap < G_MAXUINT / 4);
	heap->events = g_renew(GsEvent, heap->events, cap);
	heap->cap = cap;
}

guint64
gs_heap_push(GsHeap *heap, GsTime time, guint kind, guint64 target, guint64 generation, gint64 arg)
{
	GsEvent *e;
	guint64 seq;

	g_return_val_if_fail(heap != NULL, G_MAXUINT64);
	if (heap->len == heap->cap)
		grow(heap);
	seq = heap->next_seq++;
	e = &heap->events[heap->len];
	e->time = time;
	e->seq = seq;
	e->kind = kind;
	e->target = target;
	e->generation = generation;
	e->arg = arg;
	/* The new event starts in the last slot and rises; @e is stale after this. */
	sift_up(heap, heap->len++);
	return seq;
}

gboolean
gs_heap_peek(const GsHeap *heap, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0)
		return FALSE;
	if (out != NULL)
		*out = heap->events[0];
	return TRUE;
}

gboolean
gs_heap_pop(GsHeap *heap, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0)
		return FALSE;
	if (out != NULL)
		*out = heap->events[0];
	heap->len--;
	if (heap->len > 0) {
		/* Move the last event into the root's hole and let it sink. */
		heap->events[0] = heap->events[heap->len];
		sift_down(heap, 0);
	}
	return TRUE;
}

guint
gs_heap_pop_due(GsHeap *heap, GsTime now, GArray *out)
{
	guint n = 0;
	GsEvent e;

	g_return_val_if_fail(heap != NULL, 0);
	g_return_val_if_fail(out != NULL && g_array_get_element_size(out) == sizeof(GsEvent), 0);
	/*
	 * Only what is in the heap now is collected: the caller runs these events
	 * after this returns, so whatever they schedule waits for the next pass.
	 */
	while (heap->len > 0 && heap->events[0].time <= now) {
		gs_heap_pop(heap, &e);
		g_array_append_val(out, e);
		n++;
	}
	return n;
}

guint
gs_heap_len(const GsHeap *heap)
{
	g_return_val_if_fail(heap != NULL, 0);
	return heap->len;
}

void
gs_heap_clear(GsHeap *heap)
{
	g_return_if_fail(heap != NULL);
	heap->len = 0;
}

const char *
gs_heap_check(const GsHeap *heap)
{
	if (heap == NULL)
		return "the heap is NULL";
	if (heap->len > heap->cap)
		return "the heap holds more events than its storage";
	for (guint i = 0; i < heap->len; i++) {
		if (heap->events[i].seq >= heap->next_seq)
			return "an event's sequence number was never handed out";
		if (i > 0 && earlier(&heap->events[i], &heap->events[(i - 1) / 2]))
			return "an event fires before its parent in the heap";
	}
	return NULL;
}
