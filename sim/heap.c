/*
 * gpusim sim: the (time, seq) event queue, a radix heap.
 *
 * Times are compared as 64-bit keys (the time with its sign bit flipped, so
 * that unsigned order is time order) against `last`, the key of the instant
 * the queue last moved to. An event sits in the bucket named by the first
 * 8-bit digit, from the top, in which its key differs from `last`: the
 * digit's position and the event's value there. Every event of a bucket
 * fires after every event of a lower-numbered bucket, so the next event is
 * in the lowest bucket in use; bucket 0 holds the events at `last` itself,
 * in the order they fire. When bucket 0 runs out, the lowest bucket's
 * earliest time becomes `last` and its events move down, each to a lower
 * bucket; an event moves at most once a digit, and in practice once or
 * twice (events far apart sit in high buckets and move when their time
 * comes near). A push and a pop cost O(1) amortized and touch the few
 * buckets near `last` and the tail of the one pushed into, which is what
 * lets a hundred thousand pending events run as fast as a thousand.
 *
 * The price is a floor: every event must be at or after `last`. A driver
 * that never schedules into the past keeps to it; a push before it is still
 * exact, at O(n): every event is sorted into buckets again (rebase()).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sim/heap.h"

#define DIGIT_BITS 8
#define DIGIT_VALUES (1u << DIGIT_BITS)
#define N_BUCKETS (64 / DIGIT_BITS * DIGIT_VALUES)
#define WORD_BITS 64
#define N_WORDS (N_BUCKETS / WORD_BITS)
G_STATIC_ASSERT(N_WORDS <= 32); /* the summary is a guint32 */

/* The first allocation of a bucket's array. */
#define INITIAL_CAPACITY 16

/* No bucket: the scan below has nothing remembered. */
#define NO_BUCKET 0

typedef GsEvent Node;

typedef struct {
	Node *nodes; /* as they came, each time's in the order pushed; bucket 0's from head */
	guint len, cap;
} Bucket;

struct GsHeap {
	Bucket buckets[N_BUCKETS];
	guint64 used[N_WORDS]; /* bit i % 64 of word i / 64: bucket i > 0 holds events */
	guint32 summary;       /* bit w: used[w] != 0 */
	guint head;            /* bucket 0's next event */
	guint64 last;          /* the key every event is at or after */
	guint len;             /* events in all */
	guint64 next_seq;      /* the sequence number the next push gets */
	/* The earliest event of the lowest bucket in use, once searched for, until that bucket changes. */
	guint scanned_bucket; /* NO_BUCKET: not known */
	guint scanned_index;
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
	for (guint i = 0; i < N_BUCKETS; i++)
		g_free(heap->buckets[i].nodes);
	g_free(heap);
}

static inline guint64
key_of(GsTime time)
{
	return (guint64) time ^ (G_GUINT64_CONSTANT(1) << 63);
}

/* The bucket of an event whose key is @key, at or after @last. */
static inline guint
bucket_of(guint64 last, guint64 key)
{
	guint position;

	if (key == last)
		return 0;
	position = (guint) (63 - __builtin_clzll(key ^ last)) / DIGIT_BITS;
	return position * DIGIT_VALUES + (guint) ((key >> (position * DIGIT_BITS)) & (DIGIT_VALUES - 1));
}

static inline void
mark_used(GsHeap *heap, guint i)
{
	heap->used[i / WORD_BITS] |= G_GUINT64_CONSTANT(1) << (i % WORD_BITS);
	heap->summary |= 1u << (i / WORD_BITS);
}

static inline void
mark_unused(GsHeap *heap, guint i)
{
	heap->used[i / WORD_BITS] &= ~(G_GUINT64_CONSTANT(1) << (i % WORD_BITS));
	if (heap->used[i / WORD_BITS] == 0)
		heap->summary &= ~(1u << (i / WORD_BITS));
}

/* The lowest bucket above 0 in use; there must be one. */
static inline guint
lowest_used(const GsHeap *heap)
{
	guint w = (guint) __builtin_ctz(heap->summary);

	return w * WORD_BITS + (guint) __builtin_ctzll(heap->used[w]);
}

static inline void
append(GsHeap *heap, guint i, const Node *n)
{
	Bucket *b = &heap->buckets[i];

	if (G_UNLIKELY(b->len == b->cap)) {
		/* A bucket's index is a guint: keep its doubling from wrapping. */
		g_assert(b->cap < G_MAXUINT / 2);
		b->cap = b->cap == 0 ? INITIAL_CAPACITY : b->cap * 2;
		b->nodes = g_renew(Node, b->nodes, b->cap);
	}
	b->nodes[b->len++] = *n;
	if (i == 0)
		return;
	mark_used(heap, i);
	if (G_UNLIKELY(i == heap->scanned_bucket))
		heap->scanned_bucket = NO_BUCKET;
}

static gboolean
zero_empty(const GsHeap *heap)
{
	return heap->head == heap->buckets[0].len;
}

/* The first of @b's events at its earliest time. */
static guint
earliest_index(const Bucket *b)
{
	guint best = 0;

	for (guint k = 1; k < b->len; k++)
		best = b->nodes[k].time < b->nodes[best].time ? k : best;
	return best;
}

/*
 * The earliest event of the lowest bucket above 0 in use (one must be). The
 * events of one time share a bucket and keep the order they were pushed in
 * (a push appends; a move takes them all, in order, to a bucket that holds
 * none of that time), so the earliest is the first of the earliest time; in
 * a bucket of the lowest digit, all are of one time.
 */
static inline const Node *
lowest_earliest(GsHeap *heap, guint *bucket)
{
	guint i = lowest_used(heap);
	const Bucket *b = &heap->buckets[i];

	*bucket = i;
	if (i < DIGIT_VALUES)
		return &b->nodes[0];
	if (heap->scanned_bucket != i) {
		heap->scanned_bucket = i;
		heap->scanned_index = earliest_index(b);
	}
	return &b->nodes[heap->scanned_index];
}

/* The event that fires next, NULL if none. */
static const Node *
next_node(GsHeap *heap)
{
	guint i;

	if (!zero_empty(heap))
		return &heap->buckets[0].nodes[heap->head];
	return heap->len == 0 ? NULL : lowest_earliest(heap, &i);
}

/*
 * Bucket 0 is empty: the lowest bucket's earliest time becomes `last`, and
 * its events move down. A bucket of the lowest digit holds one time, in
 * order: it becomes bucket 0 whole.
 */
static void
refill(GsHeap *heap)
{
	guint i;
	guint64 last = key_of(lowest_earliest(heap, &i)->time);
	Bucket *b = &heap->buckets[i], *zero = &heap->buckets[0];
	guint n = b->len;

	heap->head = zero->len = 0;
	heap->last = last;
	mark_unused(heap, i);
	heap->scanned_bucket = NO_BUCKET;
	if (i < DIGIT_VALUES) {
		Bucket emptied = *zero;

		*zero = *b;
		*b = emptied;
		return;
	}
	b->len = 0;
	/* Every event moves to a lower bucket, never to @b itself, so its array stays put. */
	for (guint k = 0; k < n; k++)
		append(heap, bucket_of(last, key_of(b->nodes[k].time)), &b->nodes[k]);
}

/* A push before `last`: every event is put in its bucket again, against @key. */
static void
rebase(GsHeap *heap, guint64 key)
{
	g_autofree Node *all = g_new(Node, heap->len);
	guint n = 0;

	/* Gathered bucket by bucket: each time's events stay in the order they were pushed. */
	for (guint k = heap->head; k < heap->buckets[0].len; k++)
		all[n++] = heap->buckets[0].nodes[k];
	for (guint i = 1; i < N_BUCKETS; i++) {
		Bucket *b = &heap->buckets[i];

		for (guint k = 0; k < b->len; k++)
			all[n++] = b->nodes[k];
		b->len = 0;
	}
	memset(heap->used, 0, sizeof heap->used);
	heap->summary = 0;
	heap->head = heap->buckets[0].len = 0;
	heap->scanned_bucket = NO_BUCKET;
	heap->last = key;
	for (guint k = 0; k < n; k++)
		append(heap, bucket_of(key, key_of(all[k].time)), &all[k]);
}

guint64
gs_heap_push(GsHeap *heap, GsTime time, guint kind, guint target)
{
	Node n;
	guint64 key = key_of(time);

	g_return_val_if_fail(heap != NULL, G_MAXUINT64);
	n = (Node){.time = time, .seq = heap->next_seq++, .kind = kind, .target = target};
	if (G_UNLIKELY(key < heap->last))
		rebase(heap, key);
	/* An event at `last` is pushed after every event there: bucket 0 stays in order. */
	append(heap, bucket_of(heap->last, key), &n);
	heap->len++;
	return n.seq;
}

gboolean
gs_heap_peek(GsHeap *heap, GsEvent *out)
{
	const Node *next;

	g_return_val_if_fail(heap != NULL, FALSE);
	next = next_node(heap);
	if (next == NULL)
		return FALSE;
	if (out != NULL)
		*out = *next;
	return TRUE;
}

gboolean
gs_heap_pop(GsHeap *heap, GsEvent *out)
{
	Bucket *zero;

	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0)
		return FALSE;
	zero = &heap->buckets[0];
	if (zero_empty(heap))
		refill(heap);
	if (out != NULL)
		*out = zero->nodes[heap->head];
	if (++heap->head == zero->len)
		heap->head = zero->len = 0;
	heap->len--;
	return TRUE;
}

guint
gs_heap_pop_due(GsHeap *heap, GsTime now, GArray *out)
{
	guint n = 0;
	const Node *next;

	g_return_val_if_fail(heap != NULL, 0);
	g_return_val_if_fail(out != NULL && g_array_get_element_size(out) == sizeof(GsEvent), 0);
	/*
	 * Only what is in the queue now is collected: the caller runs these events
	 * after this returns, so whatever they schedule waits for the next pass.
	 */
	while ((next = next_node(heap)) != NULL && next->time <= now) {
		g_array_append_vals(out, next, 1);
		gs_heap_pop(heap, NULL);
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
	const Node *next;

	g_return_val_if_fail(heap != NULL, FALSE);
	next = next_node(heap);
	if (next == NULL || next->time > now || next->seq >= before)
		return FALSE;
	return gs_heap_pop(heap, out);
}

/* The lowest bucket above @i in use, NO_BUCKET if none. */
static guint
used_above(const GsHeap *heap, guint i)
{
	guint w = i / WORD_BITS;
	/* The bits above @i's; a shift by the whole width would be undefined, so two steps. */
	guint64 above = heap->used[w] & ~((G_GUINT64_CONSTANT(2) << (i % WORD_BITS)) - 1);
	guint32 words;

	if (above != 0)
		return w * WORD_BITS + (guint) __builtin_ctzll(above);
	words = heap->summary & ~((2u << w) - 1);
	if (words == 0)
		return NO_BUCKET;
	w = (guint) __builtin_ctz(words);
	return w * WORD_BITS + (guint) __builtin_ctzll(heap->used[w]);
}

/*
 * The event after soon[0] where it is known without a search: the next of
 * bucket 0, or the first of a bucket of the lowest digit (one time, in order).
 */
static const Node *
after_next(GsHeap *heap)
{
	const Bucket *zero = &heap->buckets[0];
	guint waiting = zero->len - heap->head, i, j;

	if (waiting >= 2)
		return &zero->nodes[heap->head + 1];
	if (waiting == 1)
		return heap->len > 1 ? lowest_earliest(heap, &i) : NULL;
	i = lowest_used(heap);
	if (i >= DIGIT_VALUES)
		return NULL;
	if (heap->buckets[i].len >= 2)
		return &heap->buckets[i].nodes[1];
	j = used_above(heap, i);
	return j != NO_BUCKET && j < DIGIT_VALUES ? &heap->buckets[j].nodes[0] : NULL;
}

guint
gs_heap_soon(GsHeap *heap, const GsEvent *soon[2])
{
	soon[0] = next_node(heap);
	if (soon[0] == NULL)
		return 0;
	soon[1] = after_next(heap);
	return soon[1] != NULL ? 2 : 1;
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
	for (guint i = 0; i < N_BUCKETS; i++)
		heap->buckets[i].len = 0;
	memset(heap->used, 0, sizeof heap->used);
	heap->summary = 0;
	heap->head = 0;
	heap->len = 0;
	heap->scanned_bucket = NO_BUCKET;
}

/*
 * NULL if bucket @i's events belong there, each time's in the order they
 * were pushed (@last_seq: the latest sequence number seen of each time; a
 * time's bucket follows from it, so no other bucket holds that time), and the
 * bookkeeping of the bucket agrees.
 */
static const char *
check_bucket(const GsHeap *heap, guint i, GHashTable *last_seq)
{
	const Bucket *b = &heap->buckets[i];
	gboolean marked = (heap->used[i / WORD_BITS] >> (i % WORD_BITS) & 1) != 0;
	gboolean summarized = (heap->summary >> (i / WORD_BITS) & 1) != 0;

	if (i > 0 && (marked != (b->len > 0) || (b->len > 0 && !summarized)))
		return "a bucket's mark of use disagrees with what it holds";
	for (guint k = i == 0 ? heap->head : 0; k < b->len; k++) {
		const Node *n = &b->nodes[k];
		const guint64 *seen = g_hash_table_lookup(last_seq, &n->time);

		if (n->seq >= heap->next_seq)
			return "an event's sequence number was never handed out";
		if (key_of(n->time) < heap->last || bucket_of(heap->last, key_of(n->time)) != i)
			return "an event is in a bucket its time does not name";
		if (seen != NULL && *seen >= n->seq)
			return "the events of one time are out of the order they were pushed in";
		g_hash_table_insert(last_seq, (gpointer) &n->time, (gpointer) &n->seq);
	}
	if (i > 0 && i == heap->scanned_bucket && heap->scanned_index != earliest_index(b))
		return "the remembered earliest event of a bucket is not its earliest";
	return NULL;
}

const char *
gs_heap_check(const GsHeap *heap)
{
	g_autoptr(GHashTable) last_seq = NULL;
	guint count;

	if (heap == NULL)
		return "the heap is NULL";
	if (heap->head > heap->buckets[0].len)
		return "the next event lies past the current instant's events";
	last_seq = g_hash_table_new(g_int64_hash, g_int64_equal);
	count = heap->buckets[0].len - heap->head;
	for (guint i = 0; i < N_BUCKETS; i++) {
		const char *why = check_bucket(heap, i, last_seq);

		if (why != NULL)
			return why;
		if (i > 0)
			count += heap->buckets[i].len;
	}
	if (count != heap->len)
		return "the count of events disagrees with the buckets";
	return NULL;
}
