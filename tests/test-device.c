/*
 * Unit tests of src/tiers/device.h: EXACT accept/reject at the boundary (the POOL
 * model must agree where nothing is fragmented), alignment rounding, zero-size
 * requests, peak tracking, unknown handles, POOL best fit (ties to the lowest
 * address), coalescing with the left, right and both neighbours,
 * fragmentation, largest_free, and randomized alloc/free sequences with fixed
 * seeds against an independent reference model. gs_device_check() runs after
 * every operation.
 */
#include <check.h>
#include <stdlib.h>

#include "testlib.h"
#include "tiers/device.h"

#define NO_HANDLE G_GUINT64_CONSTANT(0xdeadbeefdeadbeef)

static const GsAllocatorModel models[] = {GS_ALLOCATOR_EXACT, GS_ALLOCATOR_POOL};

static void
ck_dev(const GsDevice *d)
{
	const char *why = gs_device_check(d);

	ck_assert_msg(why == NULL, "device invariant: %s", why);
}

static GsDevice *
dev_new(gint64 capacity, gint64 alignment, GsAllocatorModel model)
{
	GsDevice *d = gs_device_new(capacity, alignment, model);

	ck_assert_ptr_nonnull(d);
	ck_dev(d);
	return d;
}

/* Allocation and release followed by the invariant check. */
static gboolean
dev_alloc(GsDevice *d, gint64 size, guint64 *handle)
{
	gint64 used = gs_device_used(d);
	guint n = gs_device_n_allocations(d);
	gboolean ok;

	*handle = NO_HANDLE;
	ok = gs_device_alloc(d, size, handle);
	ck_dev(d);
	if (ok) {
		ck_assert_uint_ne(*handle, NO_HANDLE);
		ck_assert_uint_eq(gs_device_n_allocations(d), n + 1);
		ck_assert_int_ge(gs_device_used(d) - used, size);
	} else {
		/* A failed allocation changes nothing. */
		ck_assert_uint_eq(*handle, NO_HANDLE);
		ck_assert_uint_eq(gs_device_n_allocations(d), n);
		ck_assert_int_eq(gs_device_used(d), used);
	}
	return ok;
}

static gint64
dev_release(GsDevice *d, guint64 handle)
{
	gint64 used = gs_device_used(d);
	gint64 freed = gs_device_release(d, handle);

	ck_dev(d);
	ck_assert_int_eq(gs_device_used(d), used - (freed < 0 ? 0 : freed));
	return freed;
}

/* ---- EXACT at the boundary (and POOL where nothing is fragmented) ---- */

typedef struct {
	/* Inputs */
	gint64 capacity;
	gint64 alignment;
	gint64 first;   /* allocated before the request; -1: none */
	gint64 request;
	/* Outputs */
	gboolean ok;
	gint64 used; /* after the request */
} BoundaryRow;

static const BoundaryRow boundary_rows[] = {
	{1000, 0, -1, 1000, TRUE, 1000},
	{1000, 0, -1, 1001, FALSE, 0},
	{1000, 0, 400, 600, TRUE, 1000},
	{1000, 0, 400, 601, FALSE, 400},
	{1024, 256, 256, 768, TRUE, 1024},
	{1024, 256, 256, 769, FALSE, 256},  /* 769 is charged 1024 */
	{1000, 256, -1, 768, TRUE, 768},
	{1000, 256, -1, 769, FALSE, 0},     /* 1024 > 1000 */
	{1000, 256, 1, 512, TRUE, 768},     /* 1 is charged 256 */
	{1000, 256, 1, 513, FALSE, 256},
	{0, 0, -1, 0, FALSE, 0},            /* zero bytes are charged one unit */
	{0, 0, -1, 1, FALSE, 0},
	{1, 0, -1, 0, TRUE, 1},
	{1, 0, 0, 0, FALSE, 1},
	{G_MAXINT64, 1, -1, G_MAXINT64, TRUE, G_MAXINT64},
	{G_MAXINT64, 256, -1, G_MAXINT64, FALSE, 0}, /* the rounding would overflow */
	{G_MAXINT64, 0, G_MAXINT64 - 1, 1, TRUE, G_MAXINT64},
	{G_MAXINT64, 0, G_MAXINT64 - 1, 2, FALSE, G_MAXINT64 - 1},
};

START_TEST(test_boundary)
{
	const BoundaryRow *row = &boundary_rows[_i];

	for (guint m = 0; m < G_N_ELEMENTS(models); m++) {
		g_autoptr(GsDevice) d = dev_new(row->capacity, row->alignment, models[m]);
		guint64 h;

		if (row->first >= 0)
			ck_assert(dev_alloc(d, row->first, &h));
		ck_assert_msg(dev_alloc(d, row->request, &h) == row->ok, "model %u", m);
		ck_assert_int_eq(gs_device_used(d), row->used);
		ck_assert_int_eq(gs_device_peak_used(d), row->used);
		ck_assert_int_eq(gs_device_capacity(d), row->capacity);
		ck_assert_int_eq(gs_device_model(d), models[m]);
	}
}
END_TEST

/* ---- alignment rounding ---- */

typedef struct {
	/* Inputs */
	gint64 alignment;
	gint64 size;
	/* Outputs */
	gint64 charged;
} AlignRow;

static const AlignRow align_rows[] = {
	{0, 0, 1},
	{0, 1, 1},
	{0, 7, 7},
	{1, 0, 1},
	{1, 5, 5},
	{256, 0, 256},
	{256, 1, 256},
	{256, 255, 256},
	{256, 256, 256},
	{256, 257, 512},
	{512, 1000, 1024},
	{3, 7, 9},
	{4096, 1, 4096},
	{1 << 20, (1 << 20) + 1, 2 << 20},
};

START_TEST(test_alignment)
{
	const AlignRow *row = &align_rows[_i];

	for (guint m = 0; m < G_N_ELEMENTS(models); m++) {
		g_autoptr(GsDevice) d = dev_new(1 << 30, row->alignment, models[m]);
		guint64 a, b;

		ck_assert_int_eq(gs_device_alignment(d), MAX(row->alignment, 1));
		ck_assert(dev_alloc(d, row->size, &a));
		ck_assert_int_eq(gs_device_used(d), row->charged);
		ck_assert(dev_alloc(d, row->size, &b));
		ck_assert_int_eq(gs_device_used(d), 2 * row->charged);
		ck_assert_uint_ne(a, b);
		if (models[m] == GS_ALLOCATOR_POOL) {
			/* Placed back to back from address 0: addresses stay aligned. */
			ck_assert_uint_eq(a, 0);
			ck_assert_uint_eq(b, (guint64) row->charged);
		}
		ck_assert_int_eq(dev_release(d, a), row->charged);
		ck_assert_int_eq(dev_release(d, b), row->charged);
		ck_assert_int_eq(gs_device_used(d), 0);
		ck_assert_int_eq(gs_device_peak_used(d), 2 * row->charged);
	}
}
END_TEST

/* Zero-size requests get distinct handles and one unit each, in both models. */
START_TEST(test_zero_size)
{
	g_autoptr(GsDevice) d = dev_new(1024, 256, models[_i]);
	guint64 h[4];

	for (guint i = 0; i < 4; i++) {
		ck_assert(dev_alloc(d, 0, &h[i]));
		for (guint j = 0; j < i; j++)
			ck_assert_uint_ne(h[i], h[j]);
	}
	ck_assert_int_eq(gs_device_used(d), 1024);
	ck_assert_int_eq(gs_device_largest_free(d), 0);
	ck_assert(!dev_alloc(d, 0, &h[0]));
	ck_assert_int_eq(dev_release(d, h[2]), 256);
	ck_assert(dev_alloc(d, 0, &h[2]));
	if (models[_i] == GS_ALLOCATOR_POOL)
		ck_assert_uint_eq(h[2], 512);
}
END_TEST

/* ---- peak, unknown handles, EXACT ids ---- */

START_TEST(test_peak)
{
	g_autoptr(GsDevice) d = dev_new(1000, 0, models[_i]);
	guint64 a, b, c;

	ck_assert_int_eq(gs_device_peak_used(d), 0);
	ck_assert(dev_alloc(d, 100, &a));
	ck_assert(dev_alloc(d, 200, &b));
	ck_assert_int_eq(gs_device_peak_used(d), 300);
	ck_assert_int_eq(dev_release(d, a), 100);
	ck_assert_int_eq(gs_device_used(d), 200);
	ck_assert_int_eq(gs_device_peak_used(d), 300);
	ck_assert(dev_alloc(d, 50, &c));
	ck_assert_int_eq(gs_device_peak_used(d), 300);
	/* A failed allocation does not move the peak. */
	ck_assert(!dev_alloc(d, 751, &a));
	ck_assert_int_eq(gs_device_peak_used(d), 300);
	ck_assert(dev_alloc(d, 150, &a));
	ck_assert_int_eq(gs_device_peak_used(d), 400);
	ck_assert_int_eq(dev_release(d, a), 150);
	ck_assert_int_eq(dev_release(d, b), 200);
	ck_assert_int_eq(dev_release(d, c), 50);
	ck_assert_int_eq(gs_device_used(d), 0);
	ck_assert_int_eq(gs_device_peak_used(d), 400);
	ck_assert_uint_eq(gs_device_n_allocations(d), 0);
}
END_TEST

START_TEST(test_unknown_handle)
{
	g_autoptr(GsDevice) d = dev_new(4096, 256, models[_i]);
	guint64 a, b;

	ck_assert_int_eq(dev_release(d, 0), -1);
	ck_assert_int_eq(dev_release(d, G_MAXUINT64), -1);
	ck_assert(dev_alloc(d, 300, &a));
	ck_assert(dev_alloc(d, 300, &b));
	/* Inside an allocation but not its start (POOL), or never handed out. */
	ck_assert_int_eq(dev_release(d, b + 1), -1);
	ck_assert_int_eq(dev_release(d, b + 1000), -1);
	if (models[_i] == GS_ALLOCATOR_POOL)
		ck_assert_int_eq(dev_release(d, a + 1), -1);
	ck_assert_int_eq(dev_release(d, a), 512);
	/* A double release is unknown too, and frees nothing. */
	ck_assert_int_eq(dev_release(d, a), -1);
	ck_assert_int_eq(gs_device_used(d), 512);
	ck_assert_uint_eq(gs_device_n_allocations(d), 1);
}
END_TEST

START_TEST(test_exact_ids)
{
	g_autoptr(GsDevice) d = dev_new(100, 0, GS_ALLOCATOR_EXACT);
	guint64 h;

	for (guint64 i = 1; i <= 5; i++) {
		ck_assert(dev_alloc(d, 10, &h));
		ck_assert_uint_eq(h, i);
	}
	ck_assert_int_eq(dev_release(d, 3), 10);
	/* Never reused. */
	ck_assert(dev_alloc(d, 10, &h));
	ck_assert_uint_eq(h, 6);
	ck_assert_int_eq(dev_release(d, 3), -1);
	ck_assert_uint_eq(gs_device_n_free_ranges(d), 1);
	ck_assert(dev_alloc(d, 50, &h));
	ck_assert_uint_eq(gs_device_n_free_ranges(d), 0);
}
END_TEST

/* ---- POOL layouts: blocks filling the capacity, some released ---- */

#define MAX_BLOCKS 8

/*
 * A POOL device (alignment none) whose capacity is the sum of @sizes, filled
 * by them in address order; then the blocks whose bit is set in @release are
 * released in index order. The handles go to @handles.
 */
static GsDevice *
pool_layout(const gint64 *sizes, guint release, guint64 *handles)
{
	gint64 capacity = 0, at = 0;
	GsDevice *d;

	for (guint i = 0; i < MAX_BLOCKS; i++)
		capacity += sizes[i];
	d = dev_new(capacity, 0, GS_ALLOCATOR_POOL);
	for (guint i = 0; i < MAX_BLOCKS && sizes[i] > 0; i++) {
		ck_assert(dev_alloc(d, sizes[i], &handles[i]));
		ck_assert_uint_eq(handles[i], (guint64) at);
		at += sizes[i];
	}
	ck_assert_int_eq(gs_device_largest_free(d), 0);
	ck_assert_uint_eq(gs_device_n_free_ranges(d), 0);
	for (guint i = 0; i < MAX_BLOCKS; i++)
		if (release & (1u << i))
			ck_assert_int_eq(dev_release(d, handles[i]), sizes[i]);
	return d;
}

typedef struct {
	/* Inputs */
	gint64 sizes[MAX_BLOCKS];
	guint release; /* bit i: block i released */
	gint64 request;
	/* Outputs */
	gint64 address; /* -1: the request fails */
	guint ranges;   /* free ranges after the request */
} FitRow;

/* Layout L1: holes of 200 at 100 and of 300 at 350; 500 bytes free in all. */
#define L1 {100, 200, 50, 300, 50, 300}, 0x0a
/* Layout L2: three equal holes of 100 at 0, 150 and 300. */
#define L2 {100, 50, 100, 50, 100, 600}

static const FitRow fit_rows[] = {
	{L1, 150, 100, 2},
	{L1, 250, 350, 2},
	{L1, 200, 100, 1}, /* an exact fit consumes the hole */
	{L1, 300, 350, 1},
	{L1, 1, 100, 2},
	{L1, 301, -1, 2},  /* fragmentation: 500 bytes free, no 301 in one piece */
	{L1, 500, -1, 2},
	{L2, 0x15, 100, 0, 2}, /* a three-way tie goes to the lowest address */
	{L2, 0x15, 60, 0, 3},
	{L2, 0x14, 100, 150, 1},
	{L2, 0x14, 101, -1, 2},
	/* Best fit, not first fit: the 100 hole at 350 beats the 300 hole at 0. */
	{{300, 50, 100, 50, 500}, 0x05, 80, 350, 2},
	{{300, 50, 100, 50, 500}, 0x05, 100, 350, 1},
	{{300, 50, 100, 50, 500}, 0x05, 101, 0, 2},
	/* Holes at both ends of the address space. */
	{{100, 100, 800}, 0x05, 100, 0, 1},
	{{100, 100, 800}, 0x05, 101, 200, 2},
	{{100, 100, 800}, 0x05, 800, 200, 1},
};

START_TEST(test_best_fit)
{
	const FitRow *row = &fit_rows[_i];
	guint64 handles[MAX_BLOCKS];
	g_autoptr(GsDevice) d = pool_layout(row->sizes, row->release, handles);
	gint64 free_before = gs_device_capacity(d) - gs_device_used(d);
	guint64 h;

	if (row->address < 0) {
		/* Enough bytes in total (every failing row has them) but no hole. */
		ck_assert_int_ge(free_before, row->request);
		ck_assert_int_lt(gs_device_largest_free(d), row->request);
		ck_assert(!dev_alloc(d, row->request, &h));
	} else {
		ck_assert(dev_alloc(d, row->request, &h));
		ck_assert_uint_eq(h, (guint64) row->address);
	}
	ck_assert_uint_eq(gs_device_n_free_ranges(d), row->ranges);
}
END_TEST

/* ---- coalescing ---- */

typedef struct {
	/* Inputs: release the blocks of {100 x 5} in this order */
	guint n;
	guint order[5];
	/* Outputs: free ranges after each release; then the largest hole and where it is */
	guint ranges[5];
	gint64 largest;
	gint64 at;
} CoalesceRow;

static const CoalesceRow coalesce_rows[] = {
	{2, {1, 3}, {1, 2}, 100, 100},             /* no neighbour free */
	{2, {1, 2}, {1, 1}, 200, 100},             /* merges with the left */
	{2, {3, 2}, {1, 1}, 200, 200},             /* merges with the right */
	{3, {1, 3, 2}, {1, 2, 1}, 300, 100},       /* merges with both */
	{2, {0, 1}, {1, 1}, 200, 0},               /* left at address 0 */
	{2, {4, 3}, {1, 1}, 200, 300},             /* right at the capacity */
	{5, {2, 0, 4, 1, 3}, {1, 2, 3, 2, 1}, 500, 0},
	{5, {0, 1, 2, 3, 4}, {1, 1, 1, 1, 1}, 500, 0},
	{5, {4, 3, 2, 1, 0}, {1, 1, 1, 1, 1}, 500, 0},
};

START_TEST(test_coalesce)
{
	static const gint64 sizes[MAX_BLOCKS] = {100, 100, 100, 100, 100};
	const CoalesceRow *row = &coalesce_rows[_i];
	guint64 handles[MAX_BLOCKS];
	g_autoptr(GsDevice) d = pool_layout(sizes, 0, handles);
	guint64 h;

	for (guint i = 0; i < row->n; i++) {
		ck_assert_int_eq(dev_release(d, handles[row->order[i]]), 100);
		ck_assert_uint_eq(gs_device_n_free_ranges(d), row->ranges[i]);
	}
	ck_assert_int_eq(gs_device_largest_free(d), row->largest);
	ck_assert(!dev_alloc(d, row->largest + 1, &h));
	ck_assert(dev_alloc(d, row->largest, &h));
	ck_assert_uint_eq(h, (guint64) row->at);
}
END_TEST

/* ---- largest_free ---- */

typedef struct {
	/* Inputs */
	GsAllocatorModel model;
	gint64 capacity;
	gint64 alignment;
	gint64 allocs[4]; /* allocated in order; 0 ends the list */
	guint release;    /* bit i: allocation i released afterwards */
	/* Outputs */
	gint64 largest;
	gint64 free_bytes; /* capacity - used */
} LargestRow;

static const LargestRow largest_rows[] = {
	{GS_ALLOCATOR_EXACT, 1000, 256, {0}, 0, 768, 1000},
	{GS_ALLOCATOR_EXACT, 1000, 0, {300}, 0, 700, 700},
	{GS_ALLOCATOR_EXACT, 1024, 256, {1}, 0, 768, 768},
	{GS_ALLOCATOR_EXACT, 1024, 256, {1024}, 0, 0, 0},
	{GS_ALLOCATOR_EXACT, 1000, 0, {100, 200, 300}, 0x2, 600, 600}, /* no holes in EXACT */
	{GS_ALLOCATOR_POOL, 1000, 256, {0}, 0, 768, 1000},
	{GS_ALLOCATOR_POOL, 1000, 0, {100, 200, 300}, 0x2, 400, 600},
	{GS_ALLOCATOR_POOL, 1100, 256, {1024}, 0, 0, 76}, /* a tail below one unit */
	{GS_ALLOCATOR_POOL, 1100, 256, {256, 256, 512}, 0x5, 512, 844},
	{GS_ALLOCATOR_POOL, 0, 256, {0}, 0, 0, 0},
};

START_TEST(test_largest_free)
{
	const LargestRow *row = &largest_rows[_i];
	g_autoptr(GsDevice) d = dev_new(row->capacity, row->alignment, row->model);
	guint64 h[4];
	guint64 probe;
	gint64 unit = gs_device_alignment(d);

	for (guint i = 0; i < 4 && row->allocs[i] > 0; i++)
		ck_assert(dev_alloc(d, row->allocs[i], &h[i]));
	for (guint i = 0; i < 4; i++)
		if (row->release & (1u << i))
			ck_assert_int_gt(dev_release(d, h[i]), 0);
	ck_assert_int_eq(gs_device_largest_free(d), row->largest);
	ck_assert_int_eq(gs_device_capacity(d) - gs_device_used(d), row->free_bytes);
	/* It is the largest size that succeeds: one byte more does not. */
	ck_assert(!dev_alloc(d, row->largest + 1, &probe));
	if (row->largest > 0) {
		ck_assert(dev_alloc(d, row->largest, &probe));
		ck_assert_int_eq(dev_release(d, probe), row->largest);
	} else {
		ck_assert(!dev_alloc(d, 0, &probe));
	}
	ck_assert_int_eq(row->largest % unit, 0);
}
END_TEST

/* ---- randomized sequences against a reference ---- */

typedef struct {
	gint64 start; /* the handle in POOL */
	gint64 size;  /* charged */
} RefBlock;

static gint
ref_block_cmp(gconstpointer a, gconstpointer b)
{
	const RefBlock *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/*
 * The POOL reference: the free ranges are the gaps between the live blocks
 * sorted by address; best fit is the smallest gap that is large enough, the
 * lowest on a tie. Returns the expected address or -1, and the number of gaps
 * and the largest gap through the pointers.
 */
static gint64
ref_pool_fit(GArray *live, gint64 capacity, gint64 size, guint *n_gaps, gint64 *largest)
{
	g_autoptr(GArray) sorted = g_array_copy(live);
	gint64 at = 0, best = -1, best_len = 0;

	g_array_sort(sorted, ref_block_cmp);
	*n_gaps = 0;
	*largest = 0;
	for (guint i = 0; i <= sorted->len; i++) {
		gint64 end = i < sorted->len ? g_array_index(sorted, RefBlock, i).start : capacity;
		gint64 gap = end - at;

		if (gap > 0) {
			(*n_gaps)++;
			*largest = MAX(*largest, gap);
			if (gap >= size && (best < 0 || gap < best_len)) {
				best = at;
				best_len = gap;
			}
		}
		if (i < sorted->len)
			at = end + g_array_index(sorted, RefBlock, i).size;
	}
	return best;
}

typedef struct {
	GsAllocatorModel model;
	guint32 seed;
	gint64 capacity;
	gint64 alignment;
} RandomRow;

static const RandomRow random_rows[] = {
	{GS_ALLOCATOR_EXACT, 1, 1 << 20, 256},
	{GS_ALLOCATOR_EXACT, 77, 1000003, 0},
	{GS_ALLOCATOR_POOL, 1, 1 << 20, 256},
	{GS_ALLOCATOR_POOL, 77, 1000003, 0},
	{GS_ALLOCATOR_POOL, 4242, (1 << 20) + 100, 4096},
};

START_TEST(test_random)
{
	const RandomRow *row = &random_rows[_i];
	g_autoptr(GsDevice) d = dev_new(row->capacity, row->alignment, row->model);
	g_autoptr(GArray) live = g_array_new(FALSE, FALSE, sizeof(RefBlock));
	GRand *rand = g_rand_new_with_seed(row->seed);
	gint64 unit = MAX(row->alignment, 1);
	gint64 used = 0, peak = 0;
	guint n_ok = 0, n_fail = 0;

	for (guint step = 0; step < 5000; step++) {
		if (live->len == 0 || g_rand_double(rand) < 0.55) {
			gint64 size = g_rand_int_range(rand, 0, 8) == 0
					      ? 0
					      : g_rand_int_range(rand, 1, (gint32) (row->capacity / 10));
			gint64 charged = size == 0 ? unit : (size + unit - 1) / unit * unit;
			gint64 expect = 0, largest;
			guint n_gaps;
			guint64 h;
			gboolean ok;

			if (row->model == GS_ALLOCATOR_POOL) {
				expect = ref_pool_fit(live, row->capacity, charged, &n_gaps, &largest);
				ck_assert_uint_eq(gs_device_n_free_ranges(d), n_gaps);
				ck_assert_int_eq(gs_device_largest_free(d), largest / unit * unit);
			} else if (used + charged > row->capacity) {
				expect = -1;
			}
			ok = dev_alloc(d, size, &h);
			ck_assert_int_eq(ok, expect >= 0);
			if (ok) {
				RefBlock b = {(gint64) h, charged};

				if (row->model == GS_ALLOCATOR_POOL)
					ck_assert_uint_eq(h, (guint64) expect);
				g_array_append_val(live, b);
				used += charged;
				peak = MAX(peak, used);
				n_ok++;
			} else {
				n_fail++;
			}
		} else {
			guint i = g_rand_int_range(rand, 0, (gint32) live->len);
			RefBlock b = g_array_index(live, RefBlock, i);

			ck_assert_int_eq(dev_release(d, (guint64) b.start), b.size);
			g_array_remove_index_fast(live, i);
			used -= b.size;
		}
		ck_assert_int_eq(gs_device_used(d), used);
		ck_assert_int_eq(gs_device_peak_used(d), peak);
		ck_assert_uint_eq(gs_device_n_allocations(d), live->len);
	}
	/* The device ran full often enough to exercise failures. */
	ck_assert_uint_gt(n_ok, 1000);
	ck_assert_uint_gt(n_fail, 50);
	while (live->len > 0) {
		guint i = g_rand_int_range(rand, 0, (gint32) live->len);

		ck_assert_int_gt(dev_release(d, (guint64) g_array_index(live, RefBlock, i).start), 0);
		g_array_remove_index_fast(live, i);
	}
	ck_assert_int_eq(gs_device_used(d), 0);
	ck_assert_uint_eq(gs_device_n_free_ranges(d), 1);
	ck_assert_int_eq(gs_device_largest_free(d), row->capacity / unit * unit);
	g_rand_free(rand);
}
END_TEST

Suite *gs_test_suite_device(void);

Suite *
gs_test_suite_device(void)
{
	Suite *s = suite_create("device");
	TCase *tc;

	tc = tcase_create("accounting");
	tcase_add_loop_test(tc, test_boundary, 0, G_N_ELEMENTS(boundary_rows));
	tcase_add_loop_test(tc, test_alignment, 0, G_N_ELEMENTS(align_rows));
	tcase_add_loop_test(tc, test_zero_size, 0, G_N_ELEMENTS(models));
	tcase_add_loop_test(tc, test_peak, 0, G_N_ELEMENTS(models));
	tcase_add_loop_test(tc, test_unknown_handle, 0, G_N_ELEMENTS(models));
	tcase_add_test(tc, test_exact_ids);
	suite_add_tcase(s, tc);

	tc = tcase_create("pool");
	tcase_add_loop_test(tc, test_best_fit, 0, G_N_ELEMENTS(fit_rows));
	tcase_add_loop_test(tc, test_coalesce, 0, G_N_ELEMENTS(coalesce_rows));
	tcase_add_loop_test(tc, test_largest_free, 0, G_N_ELEMENTS(largest_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("random");
	tcase_add_loop_test(tc, test_random, 0, G_N_ELEMENTS(random_rows));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_device());
}
