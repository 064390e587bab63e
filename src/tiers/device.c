/*
 * gpusim: device memory as EXACT accounting or a POOL address space.
 *
 * Live allocations are GsBlock entries of an open-addressing hash table keyed
 * by handle, stored inline (linear probing, deletion by backward shift, at
 * most half full), so an allocation or a release costs no malloc and usually
 * one cache line. The table is looked up, and iterated only by the invariant
 * check. POOL's free list is a GArray of GsRange sorted by start.
 */
#include "config.h"

#include "tiers/device.h"

typedef struct {
	guint64 handle;
	gint64 size;    /* the charged size; 0 marks an empty slot (every charge is >= 1) */
} GsBlock;

/* The slots of a new table (a power of two). */
#define MIN_SLOTS 64

typedef struct {
	gint64 start;
	gint64 len; /* > 0 */
} GsRange;

struct GsDevice {
	gint64 capacity;
	gint64 unit; /* the alignment, 1 for none */
	GsAllocatorModel model;
	gint64 used;
	gint64 peak;
	GsBlock *blocks;     /* the live allocations, by handle (see above) */
	guint n_slots;       /* a power of two */
	guint n_blocks;
	guint64 next_id;     /* EXACT: the next handle */
	GArray *free_ranges; /* POOL: GsRange, sorted by start, coalesced */
};

G_STATIC_ASSERT(sizeof(guint64) == sizeof(gint64));

/* ---- the table of live allocations ---- */

/* Handles are sequential (EXACT) or aligned addresses (POOL): mix the bits. */
static guint
home_slot(const GsDevice *d, guint64 handle)
{
	handle ^= handle >> 29;
	handle *= G_GUINT64_CONSTANT(0x9e3779b97f4a7c15);
	return (guint) (handle >> 32) & (d->n_slots - 1);
}

/* The slot holding @handle, or the empty slot where it would go. */
static guint
find_slot(const GsDevice *d, guint64 handle)
{
	guint i = home_slot(d, handle);

	while (d->blocks[i].size != 0 && d->blocks[i].handle != handle)
		i = (i + 1) & (d->n_slots - 1);
	return i;
}

static void
put_block(GsDevice *d, guint64 handle, gint64 size)
{
	guint i = find_slot(d, handle);

	d->blocks[i] = (GsBlock){.handle = handle, .size = size};
	d->n_blocks++;
}

static void
grow_blocks(GsDevice *d)
{
	GsBlock *old = d->blocks;
	guint n_old = d->n_slots;

	d->n_slots = n_old == 0 ? MIN_SLOTS : 2 * n_old;
	d->blocks = g_new0(GsBlock, d->n_slots);
	d->n_blocks = 0;
	for (guint i = 0; i < n_old; i++) {
		if (old[i].size != 0)
			put_block(d, old[i].handle, old[i].size);
	}
	g_free(old);
}

/*
 * Empties slot @i and moves later entries of its probe run back into the gap,
 * so that lookups never need tombstones.
 */
static void
remove_slot(GsDevice *d, guint i)
{
	guint mask = d->n_slots - 1;

	for (guint j = (i + 1) & mask; d->blocks[j].size != 0; j = (j + 1) & mask) {
		guint home = home_slot(d, d->blocks[j].handle);

		/* Entry j may fill the gap at i if its home is not within (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			d->blocks[i] = d->blocks[j];
			i = j;
		}
	}
	d->blocks[i].size = 0;
	d->n_blocks--;
}

GsDevice *
gs_device_new(gint64 capacity, gint64 alignment, GsAllocatorModel model)
{
	GsDevice *d;

	g_return_val_if_fail(capacity >= 0 && alignment >= 0, NULL);
	g_return_val_if_fail(model == GS_ALLOCATOR_EXACT || model == GS_ALLOCATOR_POOL, NULL);
	d = g_new0(GsDevice, 1);
	d->capacity = capacity;
	d->unit = alignment <= 1 ? 1 : alignment;
	d->model = model;
	grow_blocks(d);
	d->next_id = 1;
	d->free_ranges = g_array_new(FALSE, FALSE, sizeof(GsRange));
	if (model == GS_ALLOCATOR_POOL && capacity > 0) {
		GsRange all = {0, capacity};

		g_array_append_val(d->free_ranges, all);
	}
	return d;
}

void
gs_device_free(GsDevice *d)
{
	if (d == NULL)
		return;
	g_free(d->blocks);
	g_array_free(d->free_ranges, TRUE);
	g_free(d);
}

#define RANGE(d, i) (&g_array_index((d)->free_ranges, GsRange, (i)))

/* The charged size of a request, or -1 if rounding it up would overflow. */
static gint64
charge(const GsDevice *d, gint64 size)
{
	if (size == 0)
		return d->unit;
	if (size > G_MAXINT64 - (d->unit - 1))
		return -1;
	return (size + (d->unit - 1)) / d->unit * d->unit;
}

/*
 * POOL: the index of the best-fit free range for @size, or -1. The list is
 * scanned in address order and only a strictly smaller fit replaces the
 * current choice, so a tie goes to the lowest address.
 */
static gint
best_fit(const GsDevice *d, gint64 size)
{
	gint best = -1;

	for (guint i = 0; i < d->free_ranges->len; i++) {
		const GsRange *r = RANGE(d, i);

		if (r->len >= size && (best < 0 || r->len < RANGE(d, best)->len))
			best = (gint) i;
	}
	return best;
}

static gboolean
pool_alloc(GsDevice *d, gint64 size, guint64 *addr)
{
	gint i = best_fit(d, size);
	GsRange *r;

	if (i < 0)
		return FALSE;
	r = RANGE(d, i);
	*addr = (guint64) r->start;
	r->start += size;
	r->len -= size;
	if (r->len == 0)
		g_array_remove_index(d->free_ranges, (guint) i);
	return TRUE;
}

/* POOL: the index of the first free range starting after @addr (len if none). */
static guint
first_after(const GsDevice *d, gint64 addr)
{
	guint lo = 0, hi = d->free_ranges->len;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;

		if (RANGE(d, mid)->start > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* POOL: gives [addr, addr + size) back, merging it with the free ranges it touches. */
static void
pool_release(GsDevice *d, gint64 addr, gint64 size)
{
	guint i = first_after(d, addr);
	GsRange *left = i > 0 ? RANGE(d, i - 1) : NULL;
	GsRange *right = i < d->free_ranges->len ? RANGE(d, i) : NULL;
	gboolean join_left = left != NULL && left->start + left->len == addr;
	gboolean join_right = right != NULL && addr + size == right->start;

	if (join_left && join_right) {
		left->len += size + right->len;
		g_array_remove_index(d->free_ranges, i);
	} else if (join_left) {
		left->len += size;
	} else if (join_right) {
		right->start = addr;
		right->len += size;
	} else {
		GsRange r = {addr, size};

		g_array_insert_val(d->free_ranges, i, r);
	}
}

gboolean
gs_device_alloc(GsDevice *d, gint64 size, guint64 *handle)
{
	gint64 charged;
	guint64 h;

	g_return_val_if_fail(d != NULL && handle != NULL, FALSE);
	g_return_val_if_fail(size >= 0, FALSE);
	charged = charge(d, size);
	if (charged < 0 || charged > d->capacity - d->used)
		return FALSE;
	switch (d->model) {
	case GS_ALLOCATOR_EXACT:
		h = d->next_id++;
		break;
	case GS_ALLOCATOR_POOL:
		if (!pool_alloc(d, charged, &h))
			return FALSE;
		break;
	default:
		g_return_val_if_reached(FALSE);
	}
	if (2 * (d->n_blocks + 1) > d->n_slots)
		grow_blocks(d);
	put_block(d, h, charged);
	d->used += charged;
	d->peak = MAX(d->peak, d->used);
	*handle = h;
	return TRUE;
}

gint64
gs_device_release(GsDevice *d, guint64 handle)
{
	guint i;
	gint64 size;

	g_return_val_if_fail(d != NULL, -1);
	i = find_slot(d, handle);
	size = d->blocks[i].size;
	if (size == 0)
		return -1;
	if (d->model == GS_ALLOCATOR_POOL)
		pool_release(d, (gint64) handle, size);
	d->used -= size;
	remove_slot(d, i);
	return size;
}

gint64
gs_device_used(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, 0);
	return d->used;
}

gint64
gs_device_peak_used(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, 0);
	return d->peak;
}

gint64
gs_device_capacity(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, 0);
	return d->capacity;
}

gint64
gs_device_alignment(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, 0);
	return d->unit;
}

GsAllocatorModel
gs_device_model(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, GS_ALLOCATOR_EXACT);
	return d->model;
}

gint64
gs_device_largest_free(const GsDevice *d)
{
	gint64 largest = 0;

	g_return_val_if_fail(d != NULL, 0);
	if (d->model == GS_ALLOCATOR_EXACT) {
		largest = d->capacity - d->used;
	} else {
		for (guint i = 0; i < d->free_ranges->len; i++)
			largest = MAX(largest, RANGE(d, i)->len);
	}
	return largest / d->unit * d->unit;
}

guint
gs_device_n_allocations(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, 0);
	return d->n_blocks;
}

guint
gs_device_n_free_ranges(const GsDevice *d)
{
	g_return_val_if_fail(d != NULL, 0);
	if (d->model == GS_ALLOCATOR_EXACT)
		return d->used < d->capacity ? 1 : 0;
	return d->free_ranges->len;
}

/* ---- invariants ---- */

/* One piece of the POOL address space, for the tiling check. */
typedef struct {
	gint64 start;
	gint64 len;
	gboolean is_free;
} Piece;

static gint
piece_cmp(gconstpointer a, gconstpointer b)
{
	const Piece *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* POOL: allocations and free ranges, sorted by start, must tile [0, capacity). */
static const char *
check_tiling(const GsDevice *d)
{
	g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
	gint64 at = 0;
	gint64 free_bytes = 0;

	for (guint i = 0; i < d->n_slots; i++) {
		const GsBlock *b = &d->blocks[i];
		Piece p = {(gint64) b->handle, b->size, FALSE};

		if (b->size == 0)
			continue;
		if (b->handle > (guint64) G_MAXINT64 || p.start % d->unit != 0)
			return "an allocation's address is not aligned";
		g_array_append_val(pieces, p);
	}
	for (guint i = 0; i < d->free_ranges->len; i++) {
		const GsRange *r = RANGE(d, i);
		Piece p = {r->start, r->len, TRUE};

		if (r->len <= 0)
			return "a free range is empty";
		if (i > 0 && RANGE(d, i - 1)->start >= r->start)
			return "the free ranges are not sorted by address";
		if (i > 0 && RANGE(d, i - 1)->start + RANGE(d, i - 1)->len == r->start)
			return "two free ranges touch: they were not coalesced";
		free_bytes += r->len;
		g_array_append_val(pieces, p);
	}
	if (d->used + free_bytes != d->capacity)
		return "used plus free bytes is not the capacity";
	g_array_sort(pieces, piece_cmp);
	for (guint i = 0; i < pieces->len; i++) {
		const Piece *p = &g_array_index(pieces, Piece, i);

		if (p->start < at)
			return "two pieces of the address space overlap";
		if (p->start > at)
			return "a piece of the address space is neither free nor allocated";
		at = p->start + p->len;
	}
	if (at != d->capacity)
		return "the address space does not end at the capacity";
	return NULL;
}

const char *
gs_device_check(const GsDevice *d)
{
	gint64 sum = 0;
	guint n = 0;

	if (d == NULL)
		return "the device is NULL";
	if (d->capacity < 0 || d->unit < 1)
		return "the capacity or the alignment is invalid";
	/* Summing does not depend on the iteration order. */
	for (guint i = 0; i < d->n_slots; i++) {
		const GsBlock *b = &d->blocks[i];

		if (b->size == 0)
			continue;
		n++;
		if (find_slot(d, b->handle) != i)
			return "an allocation is not found by its handle";
		if (b->size < 0 || b->size % d->unit != 0)
			return "an allocation's size is not a positive multiple of the alignment";
		sum += b->size;
	}
	if (sum != d->used)
		return "used is not the sum of the live allocations";
	if (n != d->n_blocks)
		return "the count of live allocations is wrong";
	if (d->used < 0 || d->used > d->capacity)
		return "used is outside [0, capacity]";
	if (d->peak < d->used)
		return "the peak is below the current use";
	if (d->model == GS_ALLOCATOR_EXACT)
		return d->free_ranges->len == 0 ? NULL : "an EXACT device has a free list";
	return check_tiling(d);
}
