/*
 * gpusim: spillable buffers and spill-victim selection.
 *
 * Buffers live in a pointer array (the store's walks) and a hash table keyed
 * by id (lookups only). The array's order is whatever additions and
 * swap-removals left, and the hash table is never iterated: every plan sorts
 * its candidates with a total order that ends in the buffer id, so neither
 * order can reach a decision.
 *
 * Asynchronous locks are kept per stream, as RMMEP-1's stream -> buffers map,
 * in a small array of streams searched linearly: a driver has a handful of
 * streams per thread, and a stream with no pending lock is dropped at once.
 *
 * Per-tier byte and buffer counts are kept up to date at every change so that
 * callers can read them in O(1); gs_spill_store_check() recomputes them.
 */
#include "config.h"

#include <gpusim/spill.h>

typedef struct {
	GsSpillBufId id; /* also the hash table's key, so it must not move */
	GsPriority owner;
	gint64 size;
	GsTier tier;
	gboolean spillable;
	gint locks;
	gint async_locks;
	GsTime last_use;
	guint64 tag;
	gboolean moving;
	GsTier dest;
	guint index; /* position in GsSpillStore.all */
} Buf;

typedef struct {
	GsSpillStreamId stream;
	GArray *bufs; /* GsSpillBufId, one per pending lock, in the order taken */
} Stream;

struct GsSpillStore {
	GHashTable *by_id; /* &Buf.id -> Buf*, lookups only */
	GPtrArray *all;    /* Buf*, owned */
	GArray *streams;   /* Stream, each with at least one pending lock */
	gint64 bytes[GS_N_TIERS];
	guint count[GS_N_TIERS];
	gint64 moving_bytes[GS_N_TIERS]; /* by the tier moved out of */
};

static const char *const result_texts[] = {
#define GS_X_TEXT(suffix, text) [GS_SPILL_##suffix] = text,
	GS_SPILL_RESULT_MAP(GS_X_TEXT)
#undef GS_X_TEXT
};

G_STATIC_ASSERT(G_N_ELEMENTS(result_texts) == GS_N_SPILL_RESULTS);
G_STATIC_ASSERT(GS_TIER_GPU < GS_TIER_HOST && GS_TIER_HOST < GS_TIER_DISK);

const char *
gs_spill_result_text(GsSpillResult result)
{
	g_return_val_if_fail((guint) result < GS_N_SPILL_RESULTS, "invalid spill result");
	return result_texts[result];
}

static gboolean
tier_valid(GsTier tier)
{
	return (guint) tier < GS_N_TIERS;
}

/* ---- The store ---- */

GsSpillStore *
gs_spill_store_new(void)
{
	GsSpillStore *store = g_new0(GsSpillStore, 1);

	store->by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
	store->all = g_ptr_array_new_with_free_func(g_free);
	store->streams = g_array_new(FALSE, FALSE, sizeof(Stream));
	return store;
}

void
gs_spill_store_free(GsSpillStore *store)
{
	if (store == NULL)
		return;
	for (guint i = 0; i < store->streams->len; i++)
		g_array_unref(g_array_index(store->streams, Stream, i).bufs);
	g_array_unref(store->streams);
	g_hash_table_destroy(store->by_id);
	g_ptr_array_unref(store->all);
	g_free(store);
}

gint64
gs_spill_store_bytes(const GsSpillStore *store, GsTier tier)
{
	g_return_val_if_fail(store != NULL && tier_valid(tier), 0);
	return store->bytes[tier];
}

guint
gs_spill_store_count(const GsSpillStore *store, GsTier tier)
{
	g_return_val_if_fail(store != NULL && tier_valid(tier), 0);
	return store->count[tier];
}

gint64
gs_spill_store_moving_bytes(const GsSpillStore *store, GsTier tier)
{
	g_return_val_if_fail(store != NULL && tier_valid(tier), 0);
	return store->moving_bytes[tier];
}

static Buf *
find(const GsSpillStore *store, GsSpillBufId id)
{
	return g_hash_table_lookup(store->by_id, &id);
}

static Stream *
find_stream(const GsSpillStore *store, GsSpillStreamId stream, guint *index)
{
	for (guint i = 0; i < store->streams->len; i++) {
		Stream *s = &g_array_index(store->streams, Stream, i);

		if (s->stream == stream) {
			if (index != NULL)
				*index = i;
			return s;
		}
	}
	return NULL;
}

/* Counts the pending locks of @id over every stream (for the check only). */
static guint
count_async(const GsSpillStore *store, GsSpillBufId id)
{
	guint n = 0;

	for (guint i = 0; i < store->streams->len; i++) {
		const GArray *bufs = g_array_index(store->streams, Stream, i).bufs;

		for (guint j = 0; j < bufs->len; j++)
			n += g_array_index(bufs, GsSpillBufId, j) == id;
	}
	return n;
}

const char *
gs_spill_store_check(const GsSpillStore *store)
{
	gint64 bytes[GS_N_TIERS] = {0}, moving[GS_N_TIERS] = {0};
	guint count[GS_N_TIERS] = {0};
	guint async_total = 0, listed_total = 0;

	g_return_val_if_fail(store != NULL, "no store");
	if (g_hash_table_size(store->by_id) != store->all->len)
		return "the id table and the buffer list differ in size";
	for (guint i = 0; i < store->all->len; i++) {
		const Buf *b = g_ptr_array_index(store->all, i);

		if (b->index != i)
			return "a buffer's recorded position is wrong";
		if (find(store, b->id) != b)
			return "a buffer is missing from the id table";
		/* One tier field per buffer: being in a valid one is being in exactly one. */
		if (!tier_valid(b->tier))
			return "a buffer is in no tier";
		if (b->size < 0)
			return "a buffer's size is negative";
		if (b->locks < 0 || b->async_locks < 0)
			return "a lock count is negative";
		if (b->moving && (!tier_valid(b->dest) || b->dest == b->tier))
			return "a moving buffer's destination is not another tier";
		if (!b->moving && b->dest != b->tier)
			return "a buffer not moving has a destination";
		if ((guint) b->async_locks != count_async(store, b->id))
			return "a buffer's asynchronous locks differ from its streams' lists";
		bytes[b->tier] += b->size;
		count[b->tier]++;
		if (b->moving)
			moving[b->tier] += b->size;
		async_total += (guint) b->async_locks;
	}
	for (guint t = 0; t < GS_N_TIERS; t++) {
		if (bytes[t] != store->bytes[t])
			return "a tier's bytes differ from the sum over its buffers";
		if (count[t] != store->count[t])
			return "a tier's buffer count differs from its buffers";
		if (moving[t] != store->moving_bytes[t])
			return "a tier's moving bytes differ from the sum over its moving buffers";
	}
	for (guint i = 0; i < store->streams->len; i++) {
		const Stream *s = &g_array_index(store->streams, Stream, i);

		if (s->stream < 0)
			return "a stream id is negative";
		if (s->bufs->len == 0)
			return "a stream is kept with no pending lock";
		for (guint j = i + 1; j < store->streams->len; j++)
			if (g_array_index(store->streams, Stream, j).stream == s->stream)
				return "a stream is listed twice";
		for (guint j = 0; j < s->bufs->len; j++)
			if (find(store, g_array_index(s->bufs, GsSpillBufId, j)) == NULL)
				return "a stream holds a lock on an unknown buffer";
		listed_total += s->bufs->len;
	}
	if (listed_total != async_total)
		return "the streams list more locks than the buffers hold";
	return NULL;
}

/* ---- Buffers ---- */

GsSpillResult
gs_spill_add(GsSpillStore *store, GsSpillBufId id, GsPriority owner, gint64 size, GsTier tier,
	     gboolean spillable, guint64 tag, GsTime now)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	g_return_val_if_fail(size >= 0 && tier_valid(tier), GS_SPILL_UNKNOWN_BUFFER);
	if (find(store, id) != NULL)
		return GS_SPILL_DUPLICATE;
	b = g_new0(Buf, 1);
	b->id = id;
	b->owner = owner;
	b->size = size;
	b->tier = tier;
	b->dest = tier;
	b->spillable = spillable != FALSE;
	b->last_use = now;
	b->tag = tag;
	b->index = store->all->len;
	g_ptr_array_add(store->all, b);
	g_hash_table_insert(store->by_id, &b->id, b);
	store->bytes[tier] += size;
	store->count[tier]++;
	return GS_SPILL_OK;
}

static void
end_move(GsSpillStore *store, Buf *b)
{
	if (!b->moving)
		return;
	store->moving_bytes[b->tier] -= b->size;
	b->moving = FALSE;
	b->dest = b->tier;
}

/* Takes every pending lock of @id off the streams, dropping streams left empty. */
static void
drop_async(GsSpillStore *store, Buf *b)
{
	for (guint i = store->streams->len; i-- > 0;) {
		Stream *s = &g_array_index(store->streams, Stream, i);

		for (guint j = s->bufs->len; j-- > 0;)
			if (g_array_index(s->bufs, GsSpillBufId, j) == b->id)
				g_array_remove_index(s->bufs, j);
		if (s->bufs->len == 0) {
			g_array_unref(s->bufs);
			g_array_remove_index(store->streams, i);
		}
	}
	b->async_locks = 0;
}

GsSpillResult
gs_spill_remove(GsSpillStore *store, GsSpillBufId id)
{
	Buf *b, *last;
	guint index;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	if (b->locks > 0)
		return GS_SPILL_LOCKED;
	if (b->async_locks > 0)
		drop_async(store, b);
	end_move(store, b);
	store->bytes[b->tier] -= b->size;
	store->count[b->tier]--;
	g_hash_table_remove(store->by_id, &b->id);
	/* Swap-remove: the array's order carries no meaning (see the top). */
	index = b->index;
	last = g_ptr_array_index(store->all, store->all->len - 1);
	last->index = index;
	g_ptr_array_remove_index_fast(store->all, index);
	return GS_SPILL_OK;
}

gboolean
gs_spill_lookup(const GsSpillStore *store, GsSpillBufId id, GsSpillBufView *out)
{
	const Buf *b;

	g_return_val_if_fail(store != NULL, FALSE);
	b = find(store, id);
	if (b == NULL)
		return FALSE;
	if (out != NULL) {
		*out = (GsSpillBufView){
			.id = b->id,
			.owner = b->owner,
			.size = b->size,
			.tier = b->tier,
			.spillable = b->spillable,
			.locks = b->locks,
			.async_locks = b->async_locks,
			.last_use = b->last_use,
			.tag = b->tag,
			.moving = b->moving,
			.dest = b->dest,
		};
	}
	return TRUE;
}

GsSpillResult
gs_spill_lock(GsSpillStore *store, GsSpillBufId id)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	b->locks++;
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_unlock(GsSpillStore *store, GsSpillBufId id)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	/* An asynchronous lock is the stream's to release, never an unlock's. */
	if (b->locks == 0)
		return GS_SPILL_NOT_LOCKED;
	b->locks--;
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_lock_async(GsSpillStore *store, GsSpillBufId id, GsSpillStreamId stream)
{
	Buf *b;
	Stream *s;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	if (stream < 0)
		return gs_spill_lock(store, id);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	s = find_stream(store, stream, NULL);
	if (s == NULL) {
		Stream fresh = {stream, g_array_new(FALSE, FALSE, sizeof(GsSpillBufId))};

		g_array_append_val(store->streams, fresh);
		s = &g_array_index(store->streams, Stream, store->streams->len - 1);
	}
	g_array_append_val(s->bufs, id);
	b->async_locks++;
	return GS_SPILL_OK;
}

guint
gs_spill_sync(GsSpillStore *store, GsSpillStreamId stream)
{
	Stream *s;
	guint index, n;

	g_return_val_if_fail(store != NULL, 0);
	s = find_stream(store, stream, &index);
	if (s == NULL)
		return 0;
	n = s->bufs->len;
	for (guint i = 0; i < n; i++) {
		/* gs_spill_remove() takes a freed buffer off its streams, so it is here. */
		Buf *b = find(store, g_array_index(s->bufs, GsSpillBufId, i));

		g_assert(b != NULL && b->async_locks > 0);
		b->async_locks--;
	}
	g_array_unref(s->bufs);
	g_array_remove_index(store->streams, index);
	return n;
}

GsSpillResult
gs_spill_touch(GsSpillStore *store, GsSpillBufId id, GsTime now)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	b->last_use = now;
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_set_spillable(GsSpillStore *store, GsSpillBufId id, gboolean spillable)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	b->spillable = spillable != FALSE;
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_set_owner(GsSpillStore *store, GsSpillBufId id, GsPriority owner)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	b->owner = owner;
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_use_begin(GsSpillStore *store, const GsSpillBufId *bufs, guint n_bufs,
		   GsSpillStreamId stream, GsTime now)
{
	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	g_return_val_if_fail(bufs != NULL || n_bufs == 0, GS_SPILL_UNKNOWN_BUFFER);
	/* Checked first so that a bad list leaves no half-locked compute behind. */
	for (guint i = 0; i < n_bufs; i++)
		if (find(store, bufs[i]) == NULL)
			return GS_SPILL_UNKNOWN_BUFFER;
	for (guint i = 0; i < n_bufs; i++) {
		gs_spill_lock_async(store, bufs[i], stream);
		find(store, bufs[i])->last_use = now;
	}
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_use_end(GsSpillStore *store, const GsSpillBufId *bufs, guint n_bufs)
{
	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	g_return_val_if_fail(bufs != NULL || n_bufs == 0, GS_SPILL_UNKNOWN_BUFFER);
	for (guint i = 0; i < n_bufs; i++) {
		const Buf *b = find(store, bufs[i]);
		gint listed = 0;

		if (b == NULL)
			return GS_SPILL_UNKNOWN_BUFFER;
		/* A buffer listed twice was locked twice and must give two locks back. */
		for (guint j = 0; j < n_bufs; j++)
			listed += bufs[j] == bufs[i];
		if (b->locks < listed)
			return GS_SPILL_NOT_LOCKED;
	}
	for (guint i = 0; i < n_bufs; i++)
		find(store, bufs[i])->locks--;
	return GS_SPILL_OK;
}

/* ---- Plans ---- */

static gboolean
is_candidate(const Buf *b, GsTier tier_from)
{
	/* An empty buffer frees nothing; cuDF never registers one (§B.9). */
	return b->tier == tier_from && b->spillable && b->locks == 0 && b->async_locks == 0 &&
	       !b->moving && b->size > 0;
}

/* The tie-break of every policy: older last use first, then the smaller id. */
static int
compare_lru(const Buf *a, const Buf *b)
{
	if (a->last_use != b->last_use)
		return a->last_use < b->last_use ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int
sort_lru(gconstpointer pa, gconstpointer pb)
{
	return compare_lru(*(const Buf *const *) pa, *(const Buf *const *) pb);
}

static int
sort_largest(gconstpointer pa, gconstpointer pb)
{
	const Buf *a = *(const Buf *const *) pa, *b = *(const Buf *const *) pb;

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return compare_lru(a, b);
}

static int
sort_smallest(gconstpointer pa, gconstpointer pb)
{
	const Buf *a = *(const Buf *const *) pa, *b = *(const Buf *const *) pb;

	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return compare_lru(a, b);
}

static int
sort_priority(gconstpointer pa, gconstpointer pb)
{
	const Buf *a = *(const Buf *const *) pa, *b = *(const Buf *const *) pb;
	int c = gs_priority_compare(a->owner, b->owner);

	/* Ascending rank: the lowest-ranked owner is spilled first. */
	if (c != 0)
		return c;
	return compare_lru(a, b);
}

static void
append_victim(GArray *out, const Buf *b, GsTime now)
{
	GsSpillMove m = {
		.id = b->id,
		.bytes = b->size,
		.from = b->tier,
		.to = (GsTier) (b->tier + 1),
		.moving = FALSE,
		.idle = now - b->last_use,
	};

	g_array_append_val(out, m);
}

/* Takes @sorted in order until @need is covered. */
static gint64
take_prefix(const GPtrArray *sorted, gint64 need, GsTime now, GArray *out)
{
	gint64 got = 0;

	for (guint i = 0; i < sorted->len && got < need; i++) {
		const Buf *b = g_ptr_array_index(sorted, i);

		append_victim(out, b, now);
		got += b->size;
	}
	return got;
}

/*
 * Spark's ceilingEntry-else-largest, asked again after every pick (§C.3).
 * @sorted is by size ascending with the LRU tie-break, so the first unused
 * entry that covers the remainder is the smallest fit, and among the
 * largest the first one of that size is the least recently used.
 */
static gint64
take_smallest_fit(const GPtrArray *sorted, gint64 need, GsTime now, GArray *out)
{
	g_autofree gboolean *used = g_new0(gboolean, sorted->len);
	guint left = sorted->len;
	gint64 got = 0;

	while (got < need && left > 0) {
		gint64 remaining = need - got;
		guint pick = sorted->len, last = sorted->len;
		const Buf *b;

		for (guint i = 0; i < sorted->len; i++) {
			if (used[i])
				continue;
			last = i;
			if (((const Buf *) g_ptr_array_index(sorted, i))->size >= remaining) {
				pick = i;
				break;
			}
		}
		if (pick == sorted->len) {
			/* Nothing covers it: @last is an unused entry of the largest size; step back. */
			gint64 largest = ((const Buf *) g_ptr_array_index(sorted, last))->size;

			pick = last;
			for (guint i = last; i-- > 0;) {
				const Buf *c = g_ptr_array_index(sorted, i);

				if (used[i])
					continue;
				if (c->size != largest)
					break;
				pick = i;
			}
		}
		b = g_ptr_array_index(sorted, pick);
		used[pick] = TRUE;
		left--;
		append_victim(out, b, now);
		got += b->size;
	}
	return got;
}

/*
 * The victim rules (policy.spill.victim), as data: the order candidates are
 * sorted in, and how victims are taken from that order.
 */
static const struct {
	GCompareFunc order;
	gint64 (*take)(const GPtrArray *sorted, gint64 need, GsTime now, GArray *out);
} victim_rules[] = {
	[GS_VICTIM_LRU] = {sort_lru, take_prefix},
	[GS_VICTIM_LARGEST] = {sort_largest, take_prefix},
	[GS_VICTIM_SMALLEST_FIT] = {sort_smallest, take_smallest_fit},
	[GS_VICTIM_PRIORITY] = {sort_priority, take_prefix},
};

gint64
gs_spill_plan(const GsSpillStore *store, GsTier tier_from, gint64 bytes_needed,
	      GsSpillVictim victim_policy, GsTime now, GArray *out)
{
	g_autoptr(GPtrArray) candidates = NULL;

	g_return_val_if_fail(store != NULL && out != NULL, 0);
	g_return_val_if_fail(g_array_get_element_size(out) == sizeof(GsSpillMove), 0);
	g_return_val_if_fail(tier_valid(tier_from), 0);
	g_return_val_if_fail((guint) victim_policy < G_N_ELEMENTS(victim_rules), 0);
	g_array_set_size(out, 0);
	/* Nothing lies below disk, so nothing spills out of it. */
	if (bytes_needed <= 0 || tier_from == GS_TIER_DISK)
		return 0;
	candidates = g_ptr_array_new();
	for (guint i = 0; i < store->all->len; i++) {
		const Buf *b = g_ptr_array_index(store->all, i);

		if (is_candidate(b, tier_from))
			g_ptr_array_add(candidates, (gpointer) b);
	}
	g_ptr_array_sort(candidates, victim_rules[victim_policy].order);
	return victim_rules[victim_policy].take(candidates, bytes_needed, now, out);
}

gint64
gs_spill_unspill_plan(const GsSpillStore *store, const GsSpillBufId *bufs, guint n_bufs,
		      GArray *out, guint *n_unknown)
{
	guint unknown = 0;
	gint64 bytes = 0;

	g_return_val_if_fail(store != NULL && out != NULL, 0);
	g_return_val_if_fail(g_array_get_element_size(out) == sizeof(GsSpillMove), 0);
	g_return_val_if_fail(bufs != NULL || n_bufs == 0, 0);
	g_array_set_size(out, 0);
	for (guint i = 0; i < n_bufs; i++) {
		const Buf *b = find(store, bufs[i]);
		gboolean seen = FALSE;
		GsSpillMove m;

		if (b == NULL) {
			unknown++;
			continue;
		}
		if (b->tier == GS_TIER_GPU && !b->moving)
			continue;
		/* A compute lists few buffers: a linear search beats a set. */
		for (guint j = 0; j < out->len && !seen; j++)
			seen = g_array_index(out, GsSpillMove, j).id == b->id;
		if (seen)
			continue;
		m = (GsSpillMove){
			.id = b->id,
			.bytes = b->size,
			.from = b->tier,
			.to = GS_TIER_GPU,
			.moving = b->moving,
			.idle = 0,
		};
		g_array_append_val(out, m);
		/* Already on the GPU, or on its way there: the room is already taken. */
		if (b->tier != GS_TIER_GPU && !(b->moving && b->dest == GS_TIER_GPU))
			bytes += b->size;
	}
	if (n_unknown != NULL)
		*n_unknown = unknown;
	return bytes;
}

GsSpillDest
gs_spill_destination(GsTier from, gint64 bytes, gint64 host_free, gint64 disk_free,
		     GsHostFull host_full)
{
	switch (from) {
	case GS_TIER_GPU:
		if (bytes <= host_free)
			return GS_SPILL_DEST_HOST;
		switch (host_full) {
		case GS_HOST_FULL_DISK:
			return bytes <= disk_free ? GS_SPILL_DEST_DISK : GS_SPILL_DEST_NONE;
		case GS_HOST_FULL_FAIL:
			return GS_SPILL_DEST_NONE;
		}
		g_return_val_if_reached(GS_SPILL_DEST_NONE);
	case GS_TIER_HOST:
		return bytes <= disk_free ? GS_SPILL_DEST_DISK : GS_SPILL_DEST_NONE;
	case GS_TIER_DISK:
		return GS_SPILL_DEST_NONE;
	}
	g_return_val_if_reached(GS_SPILL_DEST_NONE);
}

/* ---- Moves ---- */

GsSpillResult
gs_spill_move_begin(GsSpillStore *store, GsSpillBufId id, GsTier to)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	g_return_val_if_fail(tier_valid(to), GS_SPILL_SAME_TIER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	if (to == b->tier)
		return GS_SPILL_SAME_TIER;
	if (b->moving)
		return GS_SPILL_MOVING;
	if (to > b->tier) {
		if (b->locks > 0 || b->async_locks > 0)
			return GS_SPILL_LOCKED;
		if (!b->spillable)
			return GS_SPILL_UNSPILLABLE;
	}
	b->moving = TRUE;
	b->dest = to;
	store->moving_bytes[b->tier] += b->size;
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_move_abort(GsSpillStore *store, GsSpillBufId id)
{
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	if (!b->moving)
		return GS_SPILL_NOT_MOVING;
	end_move(store, b);
	return GS_SPILL_OK;
}

GsSpillResult
gs_spill_moved(GsSpillStore *store, GsSpillBufId id, GsTier new_tier, guint64 tag)
{
	GsSpillResult result = GS_SPILL_OK;
	Buf *b;

	g_return_val_if_fail(store != NULL, GS_SPILL_UNKNOWN_BUFFER);
	g_return_val_if_fail(tier_valid(new_tier), GS_SPILL_SAME_TIER);
	b = find(store, id);
	if (b == NULL)
		return GS_SPILL_UNKNOWN_BUFFER;
	if (new_tier == b->tier)
		return GS_SPILL_SAME_TIER;
	if (b->moving && b->dest != new_tier)
		return GS_SPILL_WRONG_TIER;
	/*
	 * The tag first: a copy that does not carry the buffer's data is wrong
	 * whatever else holds, and the caller must hear it as a data error.
	 */
	if (tag != b->tag)
		result = GS_SPILL_TAG_MISMATCH;
	else if (new_tier > b->tier && (b->locks > 0 || b->async_locks > 0))
		result = GS_SPILL_LOCKED;
	else if (new_tier > b->tier && !b->spillable)
		result = GS_SPILL_UNSPILLABLE;
	/* The copy has ended either way; only a good one replaces the old copy. */
	end_move(store, b);
	if (result != GS_SPILL_OK)
		return result;
	store->bytes[b->tier] -= b->size;
	store->count[b->tier]--;
	b->tier = new_tier;
	b->dest = new_tier;
	store->bytes[new_tier] += b->size;
	store->count[new_tier]++;
	return GS_SPILL_OK;
}
