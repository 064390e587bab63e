/*
 * gpusim sim: the (time, seq) event heap.
 *
 * An array heap of ARITY children a node: the children of slot i are
 * ARITY i + 1 .. ARITY i + ARITY, side by side in memory. With four, a large
 * queue is half as deep as a binary one and a node's children share a cache
 * line or two, so a pop, which walks from the root to a leaf, misses the
 * cache about half as often. Sifting moves a hole instead of swapping, so
 * each level costs one copy of a node.
 * The nodes are whole events of 24 bytes (a 32-bit target and kind share
 * what would be padding), so that a pop reads nothing beside the heap array.
 */
#include "config.h"

#include "sim/heap.h"

#define ARITY 4

/* The first allocation: enough for a small scenario without regrowing. */
#define INITIAL_CAPACITY 64

/* An event as it waits: 24 bytes, so that a node's four children span 96. */
typedef GsEvent Node;
G_STATIC_ASSERT(sizeof(Node) == 24);

struct GsHeap {
	Node *nodes;      /* nodes[0 .. len) form a min-heap by (time, seq) */
	guint len;
	guint cap;
	guint64 next_seq; /* the sequence number the next push gets */
	gboolean taken;   /* nodes[0] was handed out by gs_heap_take_due_before() and waits to leave */
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
	g_free(heap->nodes);
	g_free(heap);
}

/* TRUE if @a fires before @b. Sequence numbers are unique, so never a tie. */
static inline gboolean
earlier(const Node *a, const Node *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

static void
sift_up(GsHeap *heap, guint i)
{
	Node n = heap->nodes[i];

	while (i > 0) {
		guint parent = (i - 1) / ARITY;

		if (!earlier(&n, &heap->nodes[parent]))
			break;
		heap->nodes[i] = heap->nodes[parent];
		i = parent;
	}
	heap->nodes[i] = n;
}

/*
 * The children are compared through a pointer to the earliest so far, which
 * keeps its time in a register: a comparison then waits only for the load
 * of the next child, not for an index to be turned back into an address.
 */
static void
sift_down(GsHeap *heap, guint i)
{
	Node *nodes = heap->nodes;
	Node n = nodes[i];
	guint len = heap->len;

	for (;;) {
		guint first = ARITY * i + 1, count;
		const Node *children, *child;

		if (first >= len)
			break;
		children = &nodes[first];
		count = MIN(len - first, ARITY);
		child = children;
		for (guint k = 1; k < count; k++) {
			if (earlier(&children[k], child))
				child = &children[k];
		}
		if (!earlier(child, &n))
			break;
		nodes[i] = *child;
		i = (guint) (child - nodes);
	}
	nodes[i] = n;
}

/* Makes room for @cap events in all (never less than there is). */
static void
resize(GsHeap *heap, guint cap)
{
	/* sift_down computes ARITY i + ARITY in a guint; keep that from wrapping. */
	g_assert(cap < G_MAXUINT / ARITY - 1);
	heap->nodes = g_renew(Node, heap->nodes, cap);
	heap->cap = cap;
}

static void
grow(GsHeap *heap)
{
	resize(heap, heap->cap == 0 ? INITIAL_CAPACITY : heap->cap * 2);
}

void
gs_heap_reserve(GsHeap *heap, guint n)
{
	g_return_if_fail(heap != NULL);
	if (n > heap->cap)
		resize(heap, n);
}

/* Takes the root out: the last node fills its hole and sinks. */
static void
remove_root(GsHeap *heap)
{
	heap->len--;
	if (heap->len > 0) {
		heap->nodes[0] = heap->nodes[heap->len];
		sift_down(heap, 0);
	}
}

/* A taken root leaves for good before anything else reads or changes the heap. */
static inline void
settle(GsHeap *heap)
{
	if (heap->taken) {
		heap->taken = FALSE;
		remove_root(heap);
	}
}

guint64
gs_heap_push(GsHeap *heap, GsTime time, guint kind, guint target)
{
	Node n;

	g_return_val_if_fail(heap != NULL, G_MAXUINT64);
	n = (Node){.time = time, .seq = heap->next_seq++, .kind = kind, .target = target};
	if (heap->taken) {
		/* The new node takes the taken root's place and sinks: one sift, not two. */
		heap->taken = FALSE;
		heap->nodes[0] = n;
		sift_down(heap, 0);
		return n.seq;
	}
	if (heap->len == heap->cap)
		grow(heap);
	heap->nodes[heap->len] = n;
	/* The new node starts at the end and rises. */
	sift_up(heap, heap->len++);
	return n.seq;
}

gboolean
gs_heap_peek(GsHeap *heap, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	settle(heap);
	if (heap->len == 0)
		return FALSE;
	if (out != NULL)
		*out = heap->nodes[0];
	return TRUE;
}

gboolean
gs_heap_pop(GsHeap *heap, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	settle(heap);
	if (heap->len == 0)
		return FALSE;
	if (out != NULL)
		*out = heap->nodes[0];
	remove_root(heap);
	return TRUE;
}

guint
gs_heap_pop_due(GsHeap *heap, GsTime now, GArray *out)
{
	guint n = 0;
	GsEvent e;

	g_return_val_if_fail(heap != NULL, 0);
	g_return_val_if_fail(out != NULL && g_array_get_element_size(out) == sizeof(GsEvent), 0);
	settle(heap);
	/*
	 * Only what is in the heap now is collected: the caller runs these events
	 * after this returns, so whatever they schedule waits for the next pass.
	 */
	while (heap->len > 0 && heap->nodes[0].time <= now) {
		gs_heap_pop(heap, &e);
		g_array_append_val(out, e);
		n++;
	}
	return n;
}

guint64
gs_heap_next_seq(const GsHeap *heap)
{
	g_return_val_if_fail(heap != NULL, 0);
	return heap->next_seq;
}

/* Whether the next event is due at @now and was pushed before sequence number @before. */
static gboolean
root_due_before(GsHeap *heap, GsTime now, guint64 before)
{
	settle(heap);
	return heap->len > 0 && heap->nodes[0].time <= now && heap->nodes[0].seq < before;
}

gboolean
gs_heap_pop_due_before(GsHeap *heap, GsTime now, guint64 before, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	return root_due_before(heap, now, before) && gs_heap_pop(heap, out);
}

gboolean
gs_heap_take_due_before(GsHeap *heap, GsTime now, guint64 before, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	if (!root_due_before(heap, now, before))
		return FALSE;
	*out = heap->nodes[0];
	heap->taken = TRUE;
	return TRUE;
}

guint
gs_heap_soon(const GsHeap *heap, const GsEvent **soon)
{
	*soon = heap->nodes;
	if (heap->len == 0)
		return 0; /* nodes may be NULL: no offset from it */
	/* A taken root is gone: what fires next is among its children. */
	*soon += heap->taken;
	return MIN(heap->len, 1 + ARITY) - heap->taken; /* a taken root means len >= 1 */
}

guint
gs_heap_len(const GsHeap *heap)
{
	g_return_val_if_fail(heap != NULL, 0);
	return heap->len - heap->taken;
}

void
gs_heap_clear(GsHeap *heap)
{
	g_return_if_fail(heap != NULL);
	heap->len = 0;
	heap->taken = FALSE;
}

const char *
gs_heap_check(const GsHeap *heap)
{
	if (heap == NULL)
		return "the heap is NULL";
	if (heap->len > heap->cap)
		return "the heap holds more events than its storage";
	for (guint i = 0; i < heap->len; i++) {
		if (heap->nodes[i].seq >= heap->next_seq)
			return "an event's sequence number was never handed out";
		if (i > 0 && earlier(&heap->nodes[i], &heap->nodes[(i - 1) / ARITY]))
			return "an event fires before its parent in the heap";
	}
	return NULL;
}
