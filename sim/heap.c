/*
 * gpusim sim: the (time, seq) event heap.
 *
 * An array heap of ARITY children a node: the children of slot i are
 * ARITY i + 1 .. ARITY i + ARITY, side by side in memory. With four, a large
 * queue is half as deep as a binary one and a node's children share a cache
 * line or two, so a pop, which walks from the root to a leaf, misses the
 * cache about half as often. Sifting moves a hole instead of swapping, so
 * each level costs one copy of a node.
 * The heap orders small nodes (time, seq, the index of the event's slot and,
 * in what would be padding, its kind: 24 bytes); the rest of the caller's
 * part (target, generation) waits in a slot array and is read once, when
 * the event is popped. Sifting is where a large queue spends its time, and
 * it goes through half as many cache lines as with whole events in the heap.
 */
#include "config.h"

#include "sim/heap.h"

#define ARITY 4

/* The first allocation: enough for a small scenario without regrowing. */
#define INITIAL_CAPACITY 64

typedef struct {
	GsTime time;
	guint64 seq;
	guint slot; /* where the rest of the event waits in GsHeap.slots */
	guint kind; /* the caller's: in what would be padding */
} Node;

/* The rest of the caller's part of an event, waiting for its node to reach the root. */
typedef struct {
	guint64 target;
	guint64 generation;
} Payload;

struct GsHeap {
	Node *nodes;      /* nodes[0 .. len) form a min-heap by (time, seq) */
	guint len;
	guint cap;        /* of nodes and of slots alike */
	Payload *slots;
	guint *free_slots; /* a stack of the slots no node uses */
	guint n_free;
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
	g_free(heap->nodes);
	g_free(heap->slots);
	g_free(heap->free_slots);
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

static void
sift_down(GsHeap *heap, guint i)
{
	Node n = heap->nodes[i];

	for (;;) {
		guint first = ARITY * i + 1, last = MIN(first + ARITY, heap->len), child = first;

		if (first >= heap->len)
			break;
		for (guint k = first + 1; k < last; k++) {
			if (earlier(&heap->nodes[k], &heap->nodes[child]))
				child = k;
		}
		if (!earlier(&heap->nodes[child], &n))
			break;
		heap->nodes[i] = heap->nodes[child];
		i = child;
	}
	heap->nodes[i] = n;
}

/* Makes room for @cap events in all (never less than there is). */
static void
resize(GsHeap *heap, guint cap)
{
	/* sift_down computes ARITY i + ARITY in a guint; keep that from wrapping. */
	g_assert(cap < G_MAXUINT / ARITY - 1);
	heap->nodes = g_renew(Node, heap->nodes, cap);
	heap->slots = g_renew(Payload, heap->slots, cap);
	heap->free_slots = g_renew(guint, heap->free_slots, cap);
	/* The new slots are free, lowest on top of the stack. */
	for (guint i = cap; i-- > heap->cap;)
		heap->free_slots[heap->n_free++] = i;
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

/* A whole event from a node and the payload in its slot. */
static GsEvent
event_of(const GsHeap *heap, const Node *n)
{
	const Payload *p = &heap->slots[n->slot];

	return (GsEvent){.time = n->time, .seq = n->seq, .kind = n->kind, .target = p->target,
			 .generation = p->generation};
}

guint64
gs_heap_push(GsHeap *heap, GsTime time, guint kind, guint64 target, guint64 generation)
{
	Node *n;

	g_return_val_if_fail(heap != NULL, G_MAXUINT64);
	if (heap->len == heap->cap)
		grow(heap);
	n = &heap->nodes[heap->len];
	n->time = time;
	n->seq = heap->next_seq++;
	n->slot = heap->free_slots[--heap->n_free];
	n->kind = kind;
	heap->slots[n->slot] = (Payload){.target = target, .generation = generation};
	/* The new node starts at the end and rises. */
	sift_up(heap, heap->len++);
	return heap->next_seq - 1;
}

gboolean
gs_heap_peek(const GsHeap *heap, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0)
		return FALSE;
	if (out != NULL)
		*out = event_of(heap, &heap->nodes[0]);
	return TRUE;
}

gboolean
gs_heap_pop(GsHeap *heap, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0)
		return FALSE;
	if (out != NULL)
		*out = event_of(heap, &heap->nodes[0]);
	heap->free_slots[heap->n_free++] = heap->nodes[0].slot;
	heap->len--;
	if (heap->len > 0) {
		/* Move the last node into the root's hole and let it sink. */
		heap->nodes[0] = heap->nodes[heap->len];
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

gboolean
gs_heap_pop_due_before(GsHeap *heap, GsTime now, guint64 before, GsEvent *out)
{
	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0 || heap->nodes[0].time > now || heap->nodes[0].seq >= before)
		return FALSE;
	return gs_heap_pop(heap, out);
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
	for (guint i = 0; i < heap->len; i++)
		heap->free_slots[heap->n_free++] = heap->nodes[i].slot;
	heap->len = 0;
}

const char *
gs_heap_check(const GsHeap *heap)
{
	if (heap == NULL)
		return "the heap is NULL";
	if (heap->len > heap->cap)
		return "the heap holds more events than its storage";
	if (heap->len + heap->n_free != heap->cap)
		return "every slot is either free or held by one node";
	for (guint i = 0; i < heap->len; i++) {
		if (heap->nodes[i].seq >= heap->next_seq)
			return "an event's sequence number was never handed out";
		if (heap->nodes[i].slot >= heap->cap)
			return "a node's slot lies outside the slot array";
		if (i > 0 && earlier(&heap->nodes[i], &heap->nodes[(i - 1) / ARITY]))
			return "an event fires before its parent in the heap";
	}
	return NULL;
}
