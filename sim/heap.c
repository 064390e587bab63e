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
 * A bucket is a list of chunks. A bucket names a range of times relative to
 * the current instant, so over a long run each bucket of a digit holds, in
 * turn, its share of the pending events: arrays kept at their largest would
 * add up to that share times the buckets. A chunk emptied goes to the spares,
 * from which the next bucket to grow takes, so the storage follows the
 * events pending.
 *
 * The price is a floor: every event must be at or after `last`. A driver
 * that never schedules into the past keeps to it; a push before it is still
 * exact, at O(n): every event is sorted into buckets again (rebase()).
 */
#include "config.h"

#include <string.h>

#include "sim/heap.h"

#define DIGIT_BITS 8
#define DIGIT_VALUES (1u << DIGIT_BITS)
#define N_BUCKETS (64 / DIGIT_BITS * DIGIT_VALUES)
#define WORD_BITS 64
#define N_WORDS (N_BUCKETS / WORD_BITS)
G_STATIC_ASSERT(N_WORDS <= 32); /* the summary is a guint32 */

/* Events a chunk holds: a bucket wastes at most one chunk's worth, partly filled. */
#define CHUNK_NODES 32

/* No bucket: the search below has nothing remembered. */
#define NO_BUCKET 0

typedef GsEvent Node;

typedef struct Chunk Chunk;
struct Chunk {
	Chunk *next;
	guint len; /* nodes[0 .. len); only a bucket's last chunk is not full */
	Node nodes[CHUNK_NODES];
};

/* A bucket's events as they came, each time's in the order pushed; bucket 0's from head. */
typedef struct {
	Chunk *first, *last; /* both NULL: empty */
} Bucket;

struct GsHeap {
	Bucket buckets[N_BUCKETS];
	guint64 used[N_WORDS]; /* bit i % 64 of word i / 64: bucket i > 0 holds events */
	guint32 summary;       /* bit w: used[w] != 0 */
	guint head;            /* bucket 0's next event: first->nodes[head] */
	guint64 last;          /* the key every event is at or after */
	guint len;             /* events in all */
	guint64 next_seq;      /* the sequence number the next push gets */
	Chunk *spare;          /* emptied chunks, linked by next, for the next bucket to grow */
	/* The earliest event of the lowest bucket in use, once searched for, until that bucket changes. */
	guint scanned_bucket; /* NO_BUCKET: not known */
	const Node *scanned;
};

GsHeap *
gs_heap_new(void)
{
	return g_new0(GsHeap, 1);
}

static void
free_chunks(Chunk *c)
{
	while (c != NULL) {
		Chunk *next = c->next;

		g_free(c);
		c = next;
	}
}

void
gs_heap_free(GsHeap *heap)
{
	if (heap == NULL)
		return;
	for (guint i = 0; i < N_BUCKETS; i++)
		free_chunks(heap->buckets[i].first);
	free_chunks(heap->spare);
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

static Chunk *
take_chunk(GsHeap *heap)
{
	Chunk *c = heap->spare;

	if (c != NULL)
		heap->spare = c->next;
	else
		c = g_new(Chunk, 1);
	c->next = NULL;
	c->len = 0;
	return c;
}

/* Keeps @b's chunks for the buckets that grow next, and empties it. */
static void
give_back(GsHeap *heap, Bucket *b)
{
	if (b->first != NULL) {
		b->last->next = heap->spare;
		heap->spare = b->first;
	}
	*b = (Bucket){0};
}

static inline void
append(GsHeap *heap, guint i, const Node *n)
{
	Bucket *b = &heap->buckets[i];
	Chunk *c = b->last;

	if (c == NULL) {
		c = b->first = b->last = take_chunk(heap);
		if (i > 0)
			mark_used(heap, i);
	} else if (c->len == CHUNK_NODES) {
		c = c->next = b->last = take_chunk(heap);
	}
	c->nodes[c->len++] = *n;
	/* What a search of this bucket found may no longer be its earliest (0 is never searched). */
	if (G_UNLIKELY(i == heap->scanned_bucket))
		heap->scanned_bucket = NO_BUCKET;
}

/* The first of @b's events at its earliest time. */
static const Node *
earliest(const Bucket *b)
{
	const Node *best = &b->first->nodes[0];
	GsTime best_time = best->time; /* in a register: no load waits on the last choice */

	for (const Chunk *c = b->first; c != NULL; c = c->next) {
		for (guint k = 0; k < c->len; k++) {
			gboolean before = c->nodes[k].time < best_time;

			best_time = before ? c->nodes[k].time : best_time;
			best = before ? &c->nodes[k] : best;
		}
	}
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
		return &b->first->nodes[0];
	if (heap->scanned_bucket != i) {
		heap->scanned_bucket = i;
		heap->scanned = earliest(b);
	}
	return heap->scanned;
}

/* The event that fires next, NULL if none. */
static const Node *
next_node(GsHeap *heap)
{
	guint i;

	if (heap->buckets[0].first != NULL)
		return &heap->buckets[0].first->nodes[heap->head];
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
	Bucket moving = heap->buckets[i];

	heap->buckets[i] = (Bucket){0};
	heap->head = 0;
	heap->last = last;
	mark_unused(heap, i);
	heap->scanned_bucket = NO_BUCKET;
	if (i < DIGIT_VALUES) {
		heap->buckets[0] = moving;
		return;
	}
	/* Every event moves to a lower bucket; its chunks are kept once it has left them. */
	for (const Chunk *c = moving.first; c != NULL; c = c->next) {
		for (guint k = 0; k < c->len; k++)
			append(heap, bucket_of(last, key_of(c->nodes[k].time)), &c->nodes[k]);
	}
	give_back(heap, &moving);
}

/* Every bucket emptied; the chunks are kept. */
static void
empty_all(GsHeap *heap)
{
	for (guint i = 0; i < N_BUCKETS; i++)
		give_back(heap, &heap->buckets[i]);
	memset(heap->used, 0, sizeof heap->used);
	heap->summary = 0;
	heap->head = 0;
	heap->scanned_bucket = NO_BUCKET;
}

/* A push before `last`: every event is put in its bucket again, against @key. */
static void
rebase(GsHeap *heap, guint64 key)
{
	g_autofree Node *all = g_new(Node, heap->len);
	guint n = 0;

	/* Gathered bucket by bucket: each time's events stay in the order they were pushed. */
	for (guint i = 0; i < N_BUCKETS; i++) {
		for (const Chunk *c = heap->buckets[i].first; c != NULL; c = c->next) {
			for (guint k = i == 0 && c == heap->buckets[0].first ? heap->head : 0;
			     k < c->len; k++)
				all[n++] = c->nodes[k];
		}
	}
	empty_all(heap);
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
	Chunk *c;

	g_return_val_if_fail(heap != NULL, FALSE);
	if (heap->len == 0)
		return FALSE;
	zero = &heap->buckets[0];
	if (zero->first == NULL)
		refill(heap);
	c = zero->first;
	if (out != NULL)
		*out = c->nodes[heap->head];
	heap->len--;
	if (++heap->head < c->len)
		return TRUE;
	/* Its first chunk is spent: bucket 0 goes on at the next, or is empty. */
	heap->head = 0;
	zero->first = c->next;
	if (zero->first == NULL)
		zero->last = NULL;
	c->next = heap->spare;
	heap->spare = c;
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

/* The event after the first in the chunks from @c, NULL if none. */
static const Node *
second_in(const Chunk *c)
{
	if (c->len >= 2)
		return &c->nodes[1];
	return c->next != NULL ? &c->next->nodes[0] : NULL;
}

/*
 * The event after soon[0] where it is known without a search: the next of
 * bucket 0, or one of the first events of buckets of the lowest digit (each
 * one time, in order).
 */
static const Node *
after_next(GsHeap *heap)
{
	const Chunk *zero = heap->buckets[0].first;
	const Node *second;
	guint i, j;

	if (zero != NULL) {
		if (heap->head + 1 < zero->len)
			return &zero->nodes[heap->head + 1];
		if (zero->next != NULL)
			return &zero->next->nodes[0];
		return heap->len > 1 ? lowest_earliest(heap, &i) : NULL;
	}
	i = lowest_used(heap);
	if (i >= DIGIT_VALUES)
		return NULL;
	second = second_in(heap->buckets[i].first);
	if (second != NULL)
		return second;
	j = used_above(heap, i);
	return j != NO_BUCKET && j < DIGIT_VALUES ? &heap->buckets[j].first->nodes[0] : NULL;
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
	empty_all(heap);
	heap->len = 0;
}

/*
 * NULL if bucket @i's events belong there, each time's in the order they
 * were pushed (@last_seq: the latest sequence number seen of each time; a
 * time's bucket follows from it, so no other bucket holds that time), and the
 * bookkeeping of the bucket agrees. Adds its events to *@count.
 */
static const char *
check_bucket(const GsHeap *heap, guint i, GHashTable *last_seq, guint *count)
{
	const Bucket *b = &heap->buckets[i];
	gboolean marked = (heap->used[i / WORD_BITS] >> (i % WORD_BITS) & 1) != 0;
	gboolean summarized = (heap->summary >> (i / WORD_BITS) & 1) != 0;

	if ((b->first == NULL) != (b->last == NULL))
		return "a bucket's list of chunks has one end";
	if (i > 0 && (marked != (b->first != NULL) || (b->first != NULL && !summarized)))
		return "a bucket's mark of use disagrees with what it holds";
	for (const Chunk *c = b->first; c != NULL; c = c->next) {
		guint from = i == 0 && c == b->first ? heap->head : 0;

		if (c->len == 0 || c->len > CHUNK_NODES || (c->next != NULL && c->len < CHUNK_NODES) ||
		    (c->next == NULL && c != b->last) || from >= c->len)
			return "a chunk of a bucket is empty, or not full before its last";
		for (guint k = from; k < c->len; k++) {
			const Node *n = &c->nodes[k];
			const guint64 *seen = g_hash_table_lookup(last_seq, &n->time);

			if (n->seq >= heap->next_seq)
				return "an event's sequence number was never handed out";
			if (key_of(n->time) < heap->last || bucket_of(heap->last, key_of(n->time)) != i)
				return "an event is in a bucket its time does not name";
			if (seen != NULL && *seen >= n->seq)
				return "the events of one time are out of the order they were pushed in";
			g_hash_table_insert(last_seq, (gpointer) &n->time, (gpointer) &n->seq);
			(*count)++;
		}
	}
	if (i > 0 && i == heap->scanned_bucket && (b->first == NULL || heap->scanned != earliest(b)))
		return "the remembered earliest event of a bucket is not its earliest";
	return NULL;
}

const char *
gs_heap_check(const GsHeap *heap)
{
	g_autoptr(GHashTable) last_seq = NULL;
	guint count = 0;

	if (heap == NULL)
		return "the heap is NULL";
	if (heap->buckets[0].first == NULL && heap->head != 0)
		return "the next event lies past the current instant's events";
	last_seq = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (guint i = 0; i < N_BUCKETS; i++) {
		const char *why = check_bucket(heap, i, last_seq, &count);

		if (why != NULL)
			return why;
	}
	if (count != heap->len)
		return "the count of events disagrees with the buckets";
	return NULL;
}
