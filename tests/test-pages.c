/*
 * Unit tests of pages.h: address encoding, the page table (allocation order,
 * reuse, the 8192-page and maximum-size limits, debug fill, leak report),
 * the default page size, the consumer spill order and loop, and fair-share
 * admission, after reference/tiers-spill-pages-evac.md §C.1-§C.5 and §C.7.
 *
 * The reference gives no worked numbers for §C.5 beyond its formulas, so the
 * fair-share rows are worked by hand from those formulas; the pool scenarios
 * follow the shape of Spark's MemoryManagerSuite (a 1000-byte pool shared by
 * one or two tasks).
 */
#include <string.h>

#include <gpusim/pages.h>

#include "testlib.h"

#define KiB (G_GINT64_CONSTANT(1) << 10)
#define MiB (G_GINT64_CONSTANT(1) << 20)
#define GiB (G_GINT64_CONSTANT(1) << 30)
#define MASK GS_PAGE_OFFSET_MASK

Suite *gs_test_suite_pages(void);

/* Fails unless count, bytes and the leak report agree, numbers ascending. */
static void
check_table(const GsPageTable *table)
{
	g_autoptr(GArray) pages = g_array_new(FALSE, FALSE, sizeof(GsPageInfo));
	gint64 total = gs_page_table_leaks(table, pages);
	gint64 sum = 0;

	ck_assert_uint_eq(pages->len, gs_page_table_count(table));
	ck_assert_int_eq(total, gs_page_table_get_bytes(table));
	for (guint i = 0; i < pages->len; i++) {
		const GsPageInfo *p = &g_array_index(pages, GsPageInfo, i);

		if (i > 0)
			ck_assert_uint_gt(p->number, (p - 1)->number);
		ck_assert(gs_page_table_lookup(table, p->number, NULL));
		sum += p->size;
	}
	ck_assert_int_eq(sum, total);
	ck_assert_int_le(gs_page_table_get_bytes(table), gs_page_table_get_peak_bytes(table));
}

/* ---- Address encoding (§C.1) ---- */

START_TEST(test_constants)
{
	ck_assert_int_eq(GS_PAGE_NUMBER_BITS, 13);
	ck_assert_int_eq(GS_PAGE_OFFSET_BITS, 51);
	ck_assert_uint_eq(GS_PAGE_TABLE_SIZE, 8192);
	ck_assert_uint_eq(MASK, G_GUINT64_CONSTANT(0x7FFFFFFFFFFFF));
	/* (2^31 - 1) x 8, "~17 GB; limit of a long[]" */
	ck_assert_int_eq(GS_PAGE_MAX_BYTES, G_GINT64_CONSTANT(17179869176));
	ck_assert_int_eq(GS_PAGE_FILL_ALLOCATED, 0xa5);
	ck_assert_int_eq(GS_PAGE_FILL_FREED, 0x5a);
	/* any page's largest offset fits the offset field */
	ck_assert_uint_le((guint64) GS_PAGE_MAX_BYTES, MASK);
}
END_TEST

typedef struct {
	/* Inputs */
	guint page;
	guint64 offset;
	/* Outputs */
	guint64 addr;
} EncodeRow;

static const EncodeRow encode_rows[] = {
	{ 0, 0, G_GUINT64_CONSTANT(0x0000000000000000) },
	{ 0, MASK, G_GUINT64_CONSTANT(0x0007FFFFFFFFFFFF) },
	{ 8191, 0, G_GUINT64_CONSTANT(0xFFF8000000000000) },
	{ 8191, MASK, G_GUINT64_CONSTANT(0xFFFFFFFFFFFFFFFF) },
	{ 1, 0, G_GUINT64_CONSTANT(0x0008000000000000) },
	{ 1, 1, G_GUINT64_CONSTANT(0x0008000000000001) },
	/* the top bit set: Java's long is negative here, decode must shift unsigned */
	{ 4096, 12345, G_GUINT64_CONSTANT(0x8000000000003039) },
	/* the largest offset inside the largest page */
	{ 2, (guint64) GS_PAGE_MAX_BYTES, G_GUINT64_CONSTANT(0x00100003FFFFFFF8) },
	/* offset bits above the mask are dropped (offset & MASK) */
	{ 3, (G_GUINT64_CONSTANT(1) << 51) | 7, G_GUINT64_CONSTANT(0x0018000000000007) },
	{ 5, G_MAXUINT64, G_GUINT64_CONSTANT(0x002FFFFFFFFFFFFF) },
};

START_TEST(test_encode)
{
	const EncodeRow *row = &encode_rows[_i];
	guint64 addr = gs_page_encode(row->page, row->offset);

	ck_assert_uint_eq(addr, row->addr);
	ck_assert_uint_eq(gs_page_decode_number(addr), row->page);
	ck_assert_uint_eq(gs_page_decode_offset(addr), row->offset & MASK);
	/* round trip */
	ck_assert_uint_eq(gs_page_encode(gs_page_decode_number(addr), gs_page_decode_offset(addr)),
			  addr);
}
END_TEST

typedef struct {
	/* Inputs */
	guint64 addr;
	/* Outputs */
	guint page;
	guint64 offset;
} DecodeRow;

static const DecodeRow decode_rows[] = {
	{ 0, 0, 0 },
	{ G_MAXUINT64, 8191, MASK },
	{ G_GUINT64_CONSTANT(0x8000000000000000), 4096, 0 },
	{ G_GUINT64_CONSTANT(0x7FFFFFFFFFFFFFFF), 4095, MASK },
	{ G_GUINT64_CONSTANT(0x123456789ABCDEF0), 582, G_GUINT64_CONSTANT(0x456789ABCDEF0) },
	{ G_GUINT64_CONSTANT(0x0008000000000000) - 1, 0, MASK },
};

START_TEST(test_decode)
{
	const DecodeRow *row = &decode_rows[_i];

	ck_assert_uint_eq(gs_page_decode_number(row->addr), row->page);
	ck_assert_uint_eq(gs_page_decode_offset(row->addr), row->offset);
	ck_assert_uint_eq(gs_page_encode(row->page, row->offset), row->addr);
}
END_TEST

/* Every page number, at its first, a middle and its last offset. */
START_TEST(test_round_trip_all_pages)
{
	static const guint64 offsets[] = { 0, 1, 4096, (guint64) GS_PAGE_MAX_BYTES - 1, MASK };

	for (guint page = 0; page < GS_PAGE_TABLE_SIZE; page++) {
		for (guint k = 0; k < G_N_ELEMENTS(offsets); k++) {
			guint64 addr = gs_page_encode(page, offsets[k]);

			ck_assert_uint_eq(gs_page_decode_number(addr), page);
			ck_assert_uint_eq(gs_page_decode_offset(addr), offsets[k]);
		}
	}
}
END_TEST

/* ---- Page table (§C.2) ---- */

enum { ALLOC, FREE };

typedef struct {
	int op;
	gint64 arg; /* ALLOC: size; FREE: page number */
	/* Outputs */
	GsPageResult result;
	guint number; /* ALLOC: the number given out */
} PageStep;

typedef struct {
	const char *what;
	PageStep steps[12];
	guint n_steps;
	/* Outputs after the last step */
	guint count;
	gint64 bytes;
	gint64 peak;
} PageScript;

/* Steps: A(size, number given), F(number freed); the rest spell the failure out. */
#define A(size, number) { ALLOC, size, GS_PAGE_OK, number }
#define F(number) { FREE, number, GS_PAGE_OK, 0 }
#define A_FAILS(size, result) { ALLOC, size, result, 0 }
#define F_FAILS(number) { FREE, number, GS_PAGE_NOT_ALLOCATED, 0 }

static const PageScript page_scripts[] = {
	{ "consecutive from 0",
	  { A(10, 0), A(20, 1), A(30, 2), A(40, 3), A(50, 4) }, 5,
	  5, 150, 150 },
	{ "a freed middle number is reused",
	  { A(10, 0), A(20, 1), A(30, 2), F(1), A(40, 1), A(50, 3) }, 6,
	  4, 130, 130 },
	{ "the lowest freed number first",
	  { A(1, 0), A(1, 1), A(1, 2), A(1, 3), F(2), F(0), A(5, 0), A(5, 2), A(5, 4) }, 9,
	  5, 17, 17 },
	{ "double free is refused and changes nothing",
	  { A(100, 0), F(0), F_FAILS(0), A(7, 0) }, 4,
	  1, 7, 100 },
	{ "numbers never given out cannot be freed",
	  { F_FAILS(5), F_FAILS(8191), F_FAILS(8192), F_FAILS(G_MAXUINT), A(3, 0),
	    F_FAILS(1) }, 6,
	  1, 3, 3 },
	{ "failed allocations take no number",
	  { A_FAILS(0, GS_PAGE_NO_MEMORY), A_FAILS(GS_PAGE_MAX_BYTES + 1, GS_PAGE_TOO_LARGE),
	    A(1, 0), A_FAILS(G_MAXINT64, GS_PAGE_TOO_LARGE), A(2, 1) }, 5,
	  2, 3, 3 },
	{ "free everything and start over at 0",
	  { A(8, 0), A(8, 1), F(1), F(0), A(9, 0) }, 5,
	  1, 9, 16 },
};

#undef A
#undef F
#undef A_FAILS
#undef F_FAILS

START_TEST(test_page_script)
{
	const PageScript *script = &page_scripts[_i];
	g_autoptr(GsPageTable) table = gs_page_table_new();

	for (guint s = 0; s < script->n_steps; s++) {
		const PageStep *step = &script->steps[s];

		if (step->op == ALLOC) {
			guint number = 4242;
			GsPageResult r = gs_page_table_allocate(table, step->arg, NULL, &number);

			ck_assert_msg(r == step->result, "%s, step %u: %s, expected %s",
				      script->what, s, gs_page_result_name(r),
				      gs_page_result_name(step->result));
			if (r == GS_PAGE_OK) {
				GsPageInfo info;

				ck_assert_uint_eq(number, step->number);
				ck_assert(gs_page_table_lookup(table, number, &info));
				ck_assert_uint_eq(info.number, number);
				ck_assert_int_eq(info.size, step->arg);
				ck_assert_ptr_null(info.memory);
			} else {
				/* the out parameter is untouched on failure */
				ck_assert_uint_eq(number, 4242);
			}
		} else {
			gint64 size = -1;
			GsPageResult r = gs_page_table_free_page(table, (guint) step->arg, &size);

			ck_assert_msg(r == step->result, "%s, step %u: %s, expected %s",
				      script->what, s, gs_page_result_name(r),
				      gs_page_result_name(step->result));
			if (r == GS_PAGE_OK)
				ck_assert_int_gt(size, 0);
			else
				ck_assert_int_eq(size, -1);
			ck_assert(!gs_page_table_lookup(table, (guint) step->arg, NULL));
		}
		check_table(table);
	}
	ck_assert_uint_eq(gs_page_table_count(table), script->count);
	ck_assert_int_eq(gs_page_table_get_bytes(table), script->bytes);
	ck_assert_int_eq(gs_page_table_get_peak_bytes(table), script->peak);
}
END_TEST

START_TEST(test_table_full)
{
	g_autoptr(GsPageTable) table = gs_page_table_new();
	g_autoptr(GArray) leaks = g_array_new(FALSE, FALSE, sizeof(GsPageInfo));
	guint number = 0;
	gint64 bytes;

	for (guint i = 0; i < GS_PAGE_TABLE_SIZE; i++) {
		GsPageResult r = gs_page_table_allocate(table, 1 + i % 3, NULL, &number);

		ck_assert_int_eq(r, GS_PAGE_OK);
		ck_assert_uint_eq(number, i);
	}
	ck_assert_uint_eq(gs_page_table_count(table), 8192);
	check_table(table);

	/* the 8193rd concurrent page fails cleanly */
	number = 4242;
	ck_assert_int_eq(gs_page_table_allocate(table, 1, NULL, &number), GS_PAGE_TABLE_FULL);
	ck_assert_uint_eq(number, 4242);
	ck_assert_uint_eq(gs_page_table_count(table), 8192);
	/* Spark's order of checks: too large and an empty grant are reported first */
	ck_assert_int_eq(gs_page_table_allocate(table, GS_PAGE_MAX_BYTES + 1, NULL, NULL),
			 GS_PAGE_TOO_LARGE);
	ck_assert_int_eq(gs_page_table_allocate(table, 0, NULL, NULL), GS_PAGE_NO_MEMORY);

	/* a freed number in the middle is the only one, so it is the one reused */
	ck_assert_int_eq(gs_page_table_free_page(table, 4321, NULL), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_allocate(table, 64, NULL, &number), GS_PAGE_OK);
	ck_assert_uint_eq(number, 4321);
	ck_assert_int_eq(gs_page_table_allocate(table, 1, NULL, NULL), GS_PAGE_TABLE_FULL);
	/* the last number too */
	ck_assert_int_eq(gs_page_table_free_page(table, 8191, NULL), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_allocate(table, 1, NULL, &number), GS_PAGE_OK);
	ck_assert_uint_eq(number, 8191);
	check_table(table);

	/* everything is a leak at task end */
	bytes = gs_page_table_get_bytes(table);
	ck_assert_int_gt(bytes, 8192);
	ck_assert_int_eq(gs_page_table_clean_up(table, leaks), bytes);
	ck_assert_uint_eq(leaks->len, 8192);
	ck_assert_int_eq(g_array_index(leaks, GsPageInfo, 4321).size, 64);
	ck_assert_uint_eq(gs_page_table_count(table), 0);
	ck_assert_int_eq(gs_page_table_get_bytes(table), 0);
	ck_assert_int_eq(gs_page_table_allocate(table, 1, NULL, &number), GS_PAGE_OK);
	ck_assert_uint_eq(number, 0);
}
END_TEST

/* Sparse use: numbers far apart, freed and reused across the table's growth steps. */
START_TEST(test_table_sparse)
{
	g_autoptr(GsPageTable) table = gs_page_table_new();
	guint number;

	for (guint i = 0; i < 100; i++)
		ck_assert_int_eq(gs_page_table_allocate(table, 10, NULL, NULL), GS_PAGE_OK);
	for (guint i = 0; i < 100; i += 2)
		ck_assert_int_eq(gs_page_table_free_page(table, i, NULL), GS_PAGE_OK);
	check_table(table);
	for (guint i = 0; i < 100; i += 2) {
		ck_assert_int_eq(gs_page_table_allocate(table, 20, NULL, &number), GS_PAGE_OK);
		ck_assert_uint_eq(number, i);
	}
	ck_assert_int_eq(gs_page_table_allocate(table, 30, NULL, &number), GS_PAGE_OK);
	ck_assert_uint_eq(number, 100);
	ck_assert_int_eq(gs_page_table_get_bytes(table), 50 * 10 + 50 * 20 + 30);
	ck_assert_int_eq(gs_page_table_get_peak_bytes(table), 50 * 10 + 50 * 20 + 30);
	check_table(table);
}
END_TEST

typedef struct {
	/* Inputs */
	gint64 size;
	/* Outputs */
	GsPageResult result;
} SizeRow;

static const SizeRow size_rows[] = {
	{ 1, GS_PAGE_OK },
	{ 64 * MiB, GS_PAGE_OK },
	{ GS_PAGE_MAX_BYTES, GS_PAGE_OK },
	{ GS_PAGE_MAX_BYTES + 1, GS_PAGE_TOO_LARGE },
	{ G_GINT64_CONSTANT(1) << 34, GS_PAGE_TOO_LARGE }, /* 8 bytes over */
	{ G_MAXINT64, GS_PAGE_TOO_LARGE },
	{ 0, GS_PAGE_NO_MEMORY },
};

START_TEST(test_max_page_size)
{
	const SizeRow *row = &size_rows[_i];
	g_autoptr(GsPageTable) table = gs_page_table_new();
	guint number = 99;

	ck_assert_int_eq(gs_page_table_allocate(table, row->size, NULL, &number), row->result);
	ck_assert_uint_eq(gs_page_table_count(table), row->result == GS_PAGE_OK ? 1 : 0);
	ck_assert_int_eq(gs_page_table_get_bytes(table), row->result == GS_PAGE_OK ? row->size : 0);
	ck_assert_uint_eq(number, row->result == GS_PAGE_OK ? 0 : 99);
	check_table(table);
}
END_TEST

typedef struct {
	const char *what;
	/* Inputs */
	gboolean debug_at_alloc;
	gboolean debug_at_free;
	/* Outputs: the page's bytes after allocation and after the free */
	guint8 after_alloc;
	guint8 after_free;
} FillRow;

static const FillRow fill_rows[] = {
	{ "on", TRUE, TRUE, 0xa5, 0x5a },
	{ "off", FALSE, FALSE, 0x00, 0x00 },
	{ "on, then off before the free", TRUE, FALSE, 0xa5, 0xa5 },
	{ "off, then on before the free", FALSE, TRUE, 0x00, 0x5a },
};

static void
assert_bytes(const guint8 *buf, gsize from, gsize to, guint8 value)
{
	for (gsize i = from; i < to; i++)
		ck_assert_msg(buf[i] == value, "byte %zu is 0x%02x, expected 0x%02x", i, buf[i],
			      value);
}

START_TEST(test_debug_fill)
{
	const FillRow *row = &fill_rows[_i];
	g_autoptr(GsPageTable) table = gs_page_table_new();
	/* guard bytes on either side must never be touched */
	guint8 buf[16 + 1000 + 16];
	guint8 *page = buf + 16;
	guint number;
	gint64 size;

	memset(buf, 0, sizeof buf);
	ck_assert(!gs_page_table_get_debug_fill(table));
	gs_page_table_set_debug_fill(table, row->debug_at_alloc);
	ck_assert(gs_page_table_get_debug_fill(table) == row->debug_at_alloc);

	ck_assert_int_eq(gs_page_table_allocate(table, 1000, page, &number), GS_PAGE_OK);
	assert_bytes(buf, 0, 16, 0);
	assert_bytes(buf, 16, 1016, row->after_alloc);
	assert_bytes(buf, 1016, sizeof buf, 0);

	gs_page_table_set_debug_fill(table, row->debug_at_free);
	ck_assert_int_eq(gs_page_table_free_page(table, number, &size), GS_PAGE_OK);
	ck_assert_int_eq(size, 1000);
	assert_bytes(buf, 0, 16, 0);
	assert_bytes(buf, 16, 1016, row->after_free);
	assert_bytes(buf, 1016, sizeof buf, 0);
}
END_TEST

/* Simulated pages have no memory: the switch must not touch anything. */
START_TEST(test_debug_fill_simulated)
{
	g_autoptr(GsPageTable) table = gs_page_table_new();
	guint number;

	gs_page_table_set_debug_fill(table, TRUE);
	ck_assert_int_eq(gs_page_table_allocate(table, GS_PAGE_MAX_BYTES, NULL, &number),
			 GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_free_page(table, number, NULL), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_allocate(table, 4 * KiB, NULL, &number), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_clean_up(table, NULL), 4 * KiB);
}
END_TEST

/* Task-end clean-up frees leaked pages as freePage would: 0x5a in debug mode. */
START_TEST(test_clean_up_fills)
{
	g_autoptr(GsPageTable) table = gs_page_table_new();
	g_autofree guint8 *a = g_malloc0(300);
	g_autofree guint8 *b = g_malloc0(500);
	guint n;

	gs_page_table_set_debug_fill(table, TRUE);
	ck_assert_int_eq(gs_page_table_allocate(table, 300, a, &n), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_allocate(table, 500, b, &n), GS_PAGE_OK);
	assert_bytes(a, 0, 300, 0xa5);
	assert_bytes(b, 0, 500, 0xa5);
	ck_assert_int_eq(gs_page_table_clean_up(table, NULL), 800);
	assert_bytes(a, 0, 300, 0x5a);
	assert_bytes(b, 0, 500, 0x5a);
}
END_TEST

START_TEST(test_leak_report)
{
	static const gint64 sizes[] = { 100, 200, 300, 400, 500 };
	static const GsPageInfo expected[] = {
		{ 0, 100, NULL },
		{ 2, 300, NULL },
		{ 4, 500, NULL },
	};
	g_autoptr(GsPageTable) table = gs_page_table_new();
	g_autoptr(GArray) leaks = g_array_new(FALSE, FALSE, sizeof(GsPageInfo));
	g_autoptr(GArray) again = g_array_new(FALSE, FALSE, sizeof(GsPageInfo));
	guint8 memory[5];

	for (guint i = 0; i < G_N_ELEMENTS(sizes); i++)
		ck_assert_int_eq(gs_page_table_allocate(table, sizes[i], &memory[i], NULL),
				 GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_free_page(table, 3, NULL), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_free_page(table, 1, NULL), GS_PAGE_OK);

	/* the report changes nothing and can be asked twice */
	ck_assert_int_eq(gs_page_table_leaks(table, leaks), 900);
	ck_assert_int_eq(gs_page_table_leaks(table, NULL), 900);
	ck_assert_uint_eq(gs_page_table_count(table), 3);
	ck_assert_uint_eq(leaks->len, G_N_ELEMENTS(expected));
	for (guint i = 0; i < leaks->len; i++) {
		const GsPageInfo *p = &g_array_index(leaks, GsPageInfo, i);

		ck_assert_uint_eq(p->number, expected[i].number);
		ck_assert_int_eq(p->size, expected[i].size);
		ck_assert_ptr_eq(p->memory, &memory[expected[i].number]);
	}

	/* task end: the same report, then nothing is left */
	ck_assert_int_eq(gs_page_table_clean_up(table, again), 900);
	ck_assert_uint_eq(again->len, leaks->len);
	for (guint i = 0; i < again->len; i++) {
		const GsPageInfo *p = &g_array_index(again, GsPageInfo, i);
		const GsPageInfo *q = &g_array_index(leaks, GsPageInfo, i);

		/* field by field: the struct has padding */
		ck_assert_uint_eq(p->number, q->number);
		ck_assert_int_eq(p->size, q->size);
		ck_assert_ptr_eq(p->memory, q->memory);
	}
	ck_assert_uint_eq(gs_page_table_count(table), 0);
	ck_assert_int_eq(gs_page_table_get_bytes(table), 0);
	ck_assert_int_eq(gs_page_table_get_peak_bytes(table), 1500);
	ck_assert_int_eq(gs_page_table_clean_up(table, NULL), 0);
	g_array_set_size(leaks, 0);
	ck_assert_int_eq(gs_page_table_leaks(table, leaks), 0);
	ck_assert_uint_eq(leaks->len, 0);
}
END_TEST

START_TEST(test_resolve)
{
	g_autoptr(GsPageTable) table = gs_page_table_new();
	guint8 memory[64];
	GsPageInfo info;
	guint64 offset = 0;
	guint number;

	ck_assert_int_eq(gs_page_table_allocate(table, 1, NULL, NULL), GS_PAGE_OK);
	ck_assert_int_eq(gs_page_table_allocate(table, sizeof memory, memory, &number), GS_PAGE_OK);
	ck_assert_uint_eq(number, 1);
	ck_assert(gs_page_table_resolve(table, gs_page_encode(1, 40), &info, &offset));
	ck_assert_uint_eq(info.number, 1);
	ck_assert_int_eq(info.size, 64);
	ck_assert_ptr_eq(info.memory, memory);
	ck_assert_uint_eq(offset, 40);
	ck_assert(gs_page_table_resolve(table, gs_page_encode(0, 0), NULL, NULL));
	/* a page never allocated, and one freed */
	ck_assert(!gs_page_table_resolve(table, gs_page_encode(2, 0), &info, &offset));
	ck_assert_int_eq(gs_page_table_free_page(table, 1, NULL), GS_PAGE_OK);
	ck_assert(!gs_page_table_resolve(table, gs_page_encode(1, 40), NULL, NULL));
	ck_assert(!gs_page_table_lookup(table, 8191, NULL));
	ck_assert(!gs_page_table_lookup(table, 9000, NULL));
}
END_TEST

START_TEST(test_result_names)
{
	ck_assert_str_eq(gs_page_result_name(GS_PAGE_OK), "ok");
	ck_assert_str_eq(gs_page_result_name(GS_PAGE_TOO_LARGE), "too-large");
	ck_assert_str_eq(gs_page_result_name(GS_PAGE_NO_MEMORY), "no-memory");
	ck_assert_str_eq(gs_page_result_name(GS_PAGE_TABLE_FULL), "table-full");
	ck_assert_str_eq(gs_page_result_name(GS_PAGE_NOT_ALLOCATED), "not-allocated");
}
END_TEST

/* ---- Default page size (§C.7) ---- */

typedef struct {
	/* Inputs */
	gint64 pool;
	guint cores;
	gint64 header;
	/* Outputs */
	gint64 page;
} PageSizeRow;

static const PageSizeRow page_size_rows[] = {
	{ 0, 1, 0, 1 * MiB },                              /* nextPowerOf2(0) = 0, clamped up */
	{ 1 * GiB, 4, 0, 16 * MiB },                       /* 16 MiB exactly */
	{ 1 * GiB, 4, GS_PAGE_LONG_ARRAY_OFFSET, 16 * MiB - 16 }, /* on-heap G1 */
	{ 3 * GiB, 16, 0, 16 * MiB },                      /* 12 MiB rounds up */
	{ 100 * MiB, 1, 0, 8 * MiB },                      /* 6.25 MiB rounds up */
	{ 512 * MiB, 1, 0, 32 * MiB },
	{ 2 * GiB, 1, 0, 64 * MiB },                       /* 128 MiB clamped down */
	{ 10 * GiB, 8, 0, 64 * MiB },                      /* 80 -> 128 MiB, clamped */
	{ 100 * MiB, 64, 0, 1 * MiB },                     /* 100 KiB -> 128 KiB, clamped up */
	{ 100 * MiB, 64, GS_PAGE_LONG_ARRAY_OFFSET, 1 * MiB - 16 },
	{ 16 * MiB + 15, 1, 0, 1 * MiB },                  /* integer division drops the 15/16 */
	{ 16 * MiB + 16, 1, 0, 2 * MiB },                  /* 1 MiB + 1 rounds up */
};

START_TEST(test_default_page_size)
{
	const PageSizeRow *row = &page_size_rows[_i];

	ck_assert_int_eq(gs_page_default_size(row->pool, row->cores, row->header), row->page);
}
END_TEST

START_TEST(test_consumer_page_request)
{
	/* MemoryConsumer.allocatePage: max(pageSize, required) */
	ck_assert_int_eq(gs_consumer_page_request(64 * MiB, 1), 64 * MiB);
	ck_assert_int_eq(gs_consumer_page_request(64 * MiB, 100 * MiB), 100 * MiB);
	ck_assert_int_eq(gs_consumer_page_request(1 * MiB, 1 * MiB), 1 * MiB);
}
END_TEST

/* ---- Consumers: whom to ask (§C.3) ---- */

#define R 9 /* the requester in every row */

typedef struct {
	const char *what;
	/* Inputs */
	GsConsumerView consumers[5];
	guint n;
	gint64 needed;
	/* Outputs */
	gint expected; /* index, -1: nobody */
} PickRow;

static const PickRow pick_rows[] = {
	{ "smallest that covers the need",
	  { { 1, 100, TRUE }, { 2, 300, TRUE }, { 3, 500, TRUE }, { R, 50, TRUE } }, 4, 250, 1 },
	{ "a usage equal to the need covers it",
	  { { 1, 100, TRUE }, { 2, 300, TRUE }, { 3, 500, TRUE }, { R, 50, TRUE } }, 4, 300, 1 },
	{ "nobody covers: the largest",
	  { { 1, 100, TRUE }, { 2, 300, TRUE }, { 3, 500, TRUE }, { R, 50, TRUE } }, 4, 600, 2 },
	{ "the smaller of two that cover, listed last",
	  { { 1, 500, TRUE }, { 2, 300, TRUE }, { 3, 400, TRUE } }, 3, 350, 2 },
	{ "a tiny need goes to the smallest",
	  { { 1, 500, TRUE }, { 2, 300, TRUE }, { 3, 400, TRUE } }, 3, 1, 1 },
	{ "the requester is last even when it is the largest",
	  { { R, 1000, TRUE }, { 1, 10, TRUE } }, 2, 500, 1 },
	{ "the requester is last wherever it is listed",
	  { { 1, 10, TRUE }, { R, 1000, TRUE } }, 2, 500, 0 },
	{ "a small need: the smallest that covers, not the requester",
	  { { 1, 10, TRUE }, { R, 1000, TRUE } }, 2, 5, 0 },
	{ "the requester alone", { { R, 1000, TRUE } }, 1, 500, 0 },
	{ "a requester holding nothing is not asked", { { R, 0, TRUE } }, 1, 500, -1 },
	{ "equal usages: the one listed last first (ceiling)",
	  { { 1, 200, TRUE }, { 2, 200, TRUE } }, 2, 150, 1 },
	{ "equal usages: the one listed last first (largest)",
	  { { 1, 200, TRUE }, { 2, 200, TRUE }, { 3, 100, TRUE } }, 3, 500, 1 },
	{ "consumers that cannot spill or hold nothing are skipped",
	  { { 1, 300, FALSE }, { 2, 100, TRUE }, { 3, 0, TRUE } }, 3, 200, 1 },
	{ "nobody can spill", { { 1, 300, FALSE }, { 2, 0, TRUE } }, 2, 200, -1 },
	{ "nothing needed", { { 1, 300, TRUE } }, 1, 0, -1 },
	{ "no consumers", { { 0 } }, 0, 100, -1 },
};

START_TEST(test_pick_spill)
{
	const PickRow *row = &pick_rows[_i];

	gint picked = gs_consumer_pick_spill(row->consumers, row->n, R, row->needed);

	ck_assert_msg(picked == row->expected, "%s: picked %d, expected %d", row->what, picked,
		      row->expected);
}
END_TEST

/* ---- Consumers: the spill loop (§C.3, §C.4) ---- */

typedef struct {
	const char *what;
	/* Inputs */
	GsConsumerView consumers[5];
	guint n;
	gint64 required, got;
	gint64 releases[8]; /* what each spill call returns, in call order */
	guint n_releases;
	gint64 regrants[8]; /* what each reacquire returns; none: NULL reacquire */
	guint n_regrants;
	/* Outputs */
	GsSpillCall calls[8];
	guint n_calls;
	gint64 final_got;
} SpillRow;

static const SpillRow spill_rows[] = {
	{ "the smallest that covers, once",
	  { { 1, 100, TRUE }, { 2, 300, TRUE }, { 3, 500, TRUE }, { R, 50, TRUE } }, 4, 250, 0,
	  { 300 }, 1, { 0 }, 0,
	  { { 2, 250, 300, 250 } }, 1, 250 },
	/*
	 * Keys are a snapshot: 2 keeps its key of 200 after releasing it all and
	 * is asked again (releasing 0, dropped); then the largest left; the
	 * requester last, until it too releases nothing.
	 */
	{ "stale keys, drops, requester last",
	  { { 1, 100, TRUE }, { 2, 200, TRUE }, { R, 50, TRUE } }, 3, 400, 0,
	  { 200, 0, 100, 0, 50, 0 }, 6, { 0 }, 0,
	  { { 2, 400, 200, 200 }, { 2, 200, 0, 0 }, { 1, 200, 100, 100 }, { 1, 100, 0, 0 },
	    { R, 100, 50, 50 }, { R, 50, 0, 0 } }, 6, 350 },
	{ "the requester is asked after the others, even when largest",
	  { { 1, 10, TRUE }, { R, 1000, TRUE } }, 2, 500, 0,
	  { 10, 0, 490 }, 3, { 0 }, 0,
	  { { 1, 500, 10, 10 }, { 1, 490, 0, 0 }, { R, 490, 490, 490 } }, 3, 500 },
	{ "equal usages: the last listed first, the other after it released nothing",
	  { { 1, 200, TRUE }, { 2, 200, TRUE } }, 2, 150, 0,
	  { 0, 200 }, 2, { 0 }, 0,
	  { { 2, 150, 0, 0 }, { 1, 150, 200, 150 } }, 2, 150 },
	{ "consumers that cannot spill or hold nothing are never asked",
	  { { 1, 0, TRUE }, { 2, 1000, FALSE }, { 3, 300, TRUE } }, 3, 100, 0,
	  { 100 }, 1, { 0 }, 0,
	  { { 3, 100, 100, 100 } }, 1, 100 },
	{ "the pool granted everything: nobody is asked",
	  { { 1, 100, TRUE } }, 1, 100, 100,
	  { 0 }, 0, { 0 }, 0,
	  { { 0 } }, 0, 100 },
	{ "another task took part of what was freed (SPARK-35486): ask again",
	  { { 1, 1000, TRUE } }, 1, 400, 0,
	  { 400, 300 }, 2, { 100, 300 }, 2,
	  { { 1, 400, 400, 100 }, { 1, 300, 300, 300 } }, 2, 400 },
	{ "a partial first grant lowers the need",
	  { { 1, 150, TRUE }, { 2, 250, TRUE } }, 2, 300, 100,
	  { 250 }, 1, { 0 }, 0,
	  { { 2, 200, 250, 200 } }, 1, 300 },
	{ "a requester holding nothing: no calls",
	  { { R, 0, TRUE } }, 1, 100, 0,
	  { 0 }, 0, { 0 }, 0,
	  { { 0 } }, 0, 0 },
	{ "a claim above what the consumer holds is clamped",
	  { { 1, 100, TRUE } }, 1, 300, 0,
	  { 500, 500 }, 2, { 0 }, 0,
	  { { 1, 300, 100, 100 }, { 1, 200, 0, 0 } }, 2, 100 },
	{ "everybody releases nothing: each asked once, largest first, requester last",
	  { { 1, 100, TRUE }, { 2, 200, TRUE }, { R, 300, TRUE } }, 3, 1000, 0,
	  { 0, 0, 0 }, 3, { 0 }, 0,
	  { { 2, 1000, 0, 0 }, { 1, 1000, 0, 0 }, { R, 1000, 0, 0 } }, 3, 0 },
	{ "other tasks take everything freed: the task gets nothing",
	  { { 1, 300, TRUE }, { 2, 600, TRUE } }, 2, 500, 0,
	  { 600, 0, 300, 0 }, 4, { 0, 0 }, 2,
	  { { 2, 500, 600, 0 }, { 2, 500, 0, 0 }, { 1, 500, 300, 0 }, { 1, 500, 0, 0 } }, 4, 0 },
};

typedef struct {
	const SpillRow *row;
	guint n_spills;
	guint n_regrants;
} SpillScript;

static gint64
scripted_spill(GsConsumerId consumer, gint64 size, GsConsumerId trigger, gpointer user_data)
{
	SpillScript *s = user_data;
	guint k = s->n_spills++;

	ck_assert_msg(k < s->row->n_releases, "%s: spill call %u was not expected", s->row->what,
		      k);
	ck_assert_uint_eq(trigger, R);
	ck_assert_uint_eq(consumer, s->row->calls[k].consumer);
	ck_assert_int_eq(size, s->row->calls[k].asked);
	return s->row->releases[k];
}

static gint64
scripted_reacquire(gint64 bytes, gint64 released, gpointer user_data)
{
	SpillScript *s = user_data;
	guint k = s->n_regrants++;

	ck_assert_msg(k < s->row->n_regrants, "%s: reacquire %u was not expected", s->row->what, k);
	ck_assert_int_gt(released, 0);
	ck_assert_int_gt(bytes, 0);
	return s->row->regrants[k];
}

START_TEST(test_spill_loop)
{
	const SpillRow *row = &spill_rows[_i];
	SpillScript script = { .row = row };
	g_autoptr(GArray) calls = g_array_new(FALSE, FALSE, sizeof(GsSpillCall));
	GsReacquireFunc reacquire = row->n_regrants > 0 ? scripted_reacquire : NULL;
	GsSpillOutcome out;
	gint64 released = 0;

	out = gs_consumer_spill_loop(row->consumers, row->n, R, row->required, row->got,
				     scripted_spill, reacquire, &script, calls);

	ck_assert_msg(calls->len == row->n_calls, "%s: %u calls, expected %u", row->what,
		      calls->len, row->n_calls);
	for (guint k = 0; k < calls->len; k++) {
		const GsSpillCall *c = &g_array_index(calls, GsSpillCall, k);
		const GsSpillCall *e = &row->calls[k];

		ck_assert_msg(c->consumer == e->consumer && c->asked == e->asked &&
				      c->released == e->released && c->acquired == e->acquired,
			      "%s, call %u: {%" G_GUINT64_FORMAT ", %" G_GINT64_FORMAT
			      ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "}",
			      row->what, k, c->consumer, c->asked, c->released, c->acquired);
		released += c->released;
	}
	ck_assert_uint_eq(script.n_spills, row->n_releases);
	ck_assert_uint_eq(script.n_regrants, row->n_regrants);
	ck_assert_int_eq(out.got, row->final_got);
	ck_assert_uint_eq(out.n_calls, row->n_calls);
	ck_assert_int_eq(out.released, released);
}
END_TEST

/* Without a call list the outcome is the same. */
START_TEST(test_spill_loop_no_calls)
{
	const SpillRow *row = &spill_rows[1];
	SpillScript script = { .row = row };
	GsSpillOutcome out = gs_consumer_spill_loop(row->consumers, row->n, R, row->required,
						    row->got, scripted_spill, NULL, &script, NULL);

	ck_assert_int_eq(out.got, row->final_got);
	ck_assert_uint_eq(out.n_calls, row->n_calls);
	ck_assert_int_eq(out.released, 200 + 100 + 50);
}
END_TEST

/* ---- Fair share (§C.5) ---- */

typedef struct {
	const char *what;
	/* Inputs */
	GsFairShareRequest req;
	/* Outputs */
	gint64 granted;
	gboolean must_wait;
	gint64 max_per_task, min_per_task;
} FairRow;

/*
 * Each row: its name, then { num_bytes, task_bytes, N, pool_size, max_pool_size,
 * memory_free }, then granted, must_wait, maxPerTask, minPerTask.
 */
static const FairRow fair_rows[] = {
	{ "one task, room",
	  { 100, 0, 1, 1000, 1000, 1000 }, 100, FALSE, 1000, 500 },
	{ "one task, capped by what is free",
	  { 200, 900, 1, 1000, 1000, 100 }, 100, FALSE, 1000, 500 },
	{ "one task, full, above 1/2N: 0 at once",
	  { 100, 1000, 1, 1000, 1000, 0 }, 0, FALSE, 1000, 500 },
	{ "two tasks: up to 1/N",
	  { 500, 0, 2, 1000, 1000, 1000 }, 500, FALSE, 500, 250 },
	{ "two tasks: at 1/N, 0 at once",
	  { 500, 500, 2, 1000, 1000, 0 }, 0, FALSE, 500, 250 },
	{ "two tasks: cannot grow past 1/N",
	  { 500, 250, 2, 1000, 1000, 500 }, 250, FALSE, 500, 250 },
	{ "below 1/2N with nothing free: wait",
	  { 250, 0, 2, 1000, 1000, 0 }, 0, TRUE, 500, 250 },
	{ "a partial grant that stays below 1/2N: wait",
	  { 300, 0, 2, 1000, 1000, 200 }, 0, TRUE, 500, 250 },
	{ "a partial grant that reaches 1/2N exactly: granted",
	  { 300, 100, 2, 1000, 1000, 150 }, 150, FALSE, 500, 250 },
	{ "at 1/2N exactly with nothing free: 0 at once",
	  { 100, 250, 2, 1000, 1000, 0 }, 0, FALSE, 500, 250 },
	{ "one byte below 1/2N with nothing free: wait",
	  { 100, 249, 2, 1000, 1000, 0 }, 0, TRUE, 500, 250 },
	{ "a full grant below 1/2N: no wait",
	  { 10, 0, 4, 1000, 1000, 10 }, 10, FALSE, 250, 125 },
	{ "four tasks, partial below 1/2N: wait",
	  { 100, 0, 4, 1000, 1000, 50 }, 0, TRUE, 250, 125 },
	{ "four tasks, partial above 1/2N",
	  { 100, 100, 4, 1000, 1000, 50 }, 50, FALSE, 250, 125 },
	{ "above 1/N after N grew: 0, never negative (SPARK-4715)",
	  { 300, 700, 2, 1000, 1000, 0 }, 0, FALSE, 500, 250 },
	{ "above 1/N with memory free: still 0",
	  { 300, 700, 2, 1000, 1000, 300 }, 0, FALSE, 500, 250 },
	{ "unified: cap from the potential size, floor from the current",
	  { 400, 0, 2, 600, 1000, 300 }, 300, FALSE, 500, 150 },
	{ "unified: the floor uses the current size",
	  { 100, 0, 2, 200, 1000, 40 }, 0, TRUE, 500, 50 },
	{ "integer division",
	  { 1000, 0, 3, 1001, 1001, 1001 }, 333, FALSE, 333, 166 },
};

START_TEST(test_fair_share)
{
	const FairRow *row = &fair_rows[_i];
	GsFairShareGrant g = gs_fair_share_decide(&row->req);

	ck_assert_msg(g.granted == row->granted && g.must_wait == row->must_wait,
		      "%s: granted %" G_GINT64_FORMAT " wait %d", row->what, g.granted,
		      g.must_wait);
	ck_assert_int_eq(g.max_per_task, row->max_per_task);
	ck_assert_int_eq(g.min_per_task, row->min_per_task);
	/* the bounds: never above 1/N, never negative, never more than asked or free */
	ck_assert_int_ge(g.granted, 0);
	ck_assert_int_le(g.granted, row->req.num_bytes);
	ck_assert_int_le(g.granted, row->req.memory_free);
	if (g.granted > 0)
		ck_assert_int_le(row->req.task_bytes + g.granted, g.max_per_task);
	/* only a task below 1/2N ever waits */
	if (g.must_wait)
		ck_assert_int_lt(row->req.task_bytes, g.min_per_task);
}
END_TEST

/* ---- Fair share: the pool (§C.5) ---- */

enum { ACQ, REL, REL_ALL, SIZE };

typedef struct {
	GsTaskId task;
	int op;
	gint64 bytes; /* ACQ: asked; REL: released; SIZE: the new pool size */
	/* Outputs */
	gint64 result; /* ACQ: granted; REL, REL_ALL: released; SIZE: the new maximum size */
	gboolean wait; /* ACQ */
	guint n_tasks; /* after the step */
} PoolStep;

typedef struct {
	const char *what;
	gint64 pool_size;
	PoolStep steps[14];
	guint n_steps;
} PoolScript;

static const PoolScript pool_scripts[] = {
	{ "one task", 1000,
	  { { 0, ACQ, 100, 100, FALSE, 1 }, { 0, ACQ, 400, 400, FALSE, 1 },
	    { 0, ACQ, 400, 400, FALSE, 1 }, { 0, ACQ, 200, 100, FALSE, 1 },
	    { 0, ACQ, 100, 0, FALSE, 1 }, { 0, ACQ, 100, 0, FALSE, 1 },
	    { 0, REL, 500, 500, FALSE, 1 }, { 0, ACQ, 300, 300, FALSE, 1 },
	    { 0, ACQ, 300, 200, FALSE, 1 }, { 0, REL_ALL, 0, 1000, FALSE, 0 },
	    { 0, ACQ, 1000, 1000, FALSE, 1 }, { 0, ACQ, 100, 0, FALSE, 1 } },
	  12 },
	{ "two tasks asking for everything stop at 1/N", 1000,
	  { { 1, ACQ, 500, 500, FALSE, 1 }, { 2, ACQ, 500, 500, FALSE, 2 },
	    { 1, ACQ, 500, 0, FALSE, 2 }, { 2, ACQ, 500, 0, FALSE, 2 } },
	  4 },
	{ "two tasks cannot grow past 1/N", 1000,
	  { { 1, ACQ, 250, 250, FALSE, 1 }, { 2, ACQ, 250, 250, FALSE, 2 },
	    { 1, ACQ, 500, 250, FALSE, 2 }, { 2, ACQ, 500, 250, FALSE, 2 } },
	  4 },
	{ "a task below 1/2N waits for a release", 1000,
	  { { 1, ACQ, 1000, 1000, FALSE, 1 }, { 2, ACQ, 250, 0, TRUE, 2 },
	    { 2, ACQ, 250, 0, TRUE, 2 }, { 1, REL, 250, 250, FALSE, 2 },
	    { 2, ACQ, 250, 250, FALSE, 2 }, { 1, ACQ, 250, 0, FALSE, 2 } },
	  6 },
	{ "no negative grants (SPARK-4715)", 1000,
	  { { 1, ACQ, 700, 700, FALSE, 1 }, { 2, ACQ, 300, 300, FALSE, 2 },
	    { 1, ACQ, 300, 0, FALSE, 2 } },
	  3 },
	{ "clean-up of one task lets the waiter in", 1000,
	  { { 1, ACQ, 1000, 1000, FALSE, 1 }, { 2, ACQ, 500, 0, TRUE, 2 },
	    { 1, REL_ALL, 0, 1000, FALSE, 1 }, { 2, ACQ, 500, 500, FALSE, 1 },
	    { 1, ACQ, 500, 500, FALSE, 2 } },
	  5 },
	/* a registered waiter at 0 leaves on any release, then registers again */
	{ "a waiter dropped by a release registers again", 1000,
	  { { 1, ACQ, 1000, 1000, FALSE, 1 }, { 2, ACQ, 100, 0, TRUE, 2 },
	    { 2, REL, 0, 0, FALSE, 1 }, { 1, ACQ, 100, 0, FALSE, 1 },
	    { 2, ACQ, 100, 0, TRUE, 2 }, { 2, REL_ALL, 0, 0, FALSE, 1 } },
	  6 },
	{ "releases are clamped to what the task holds", 1000,
	  { { 1, ACQ, 300, 300, FALSE, 1 }, { 1, REL, 500, 300, FALSE, 0 },
	    { 1, REL, 10, 0, FALSE, 0 }, { 3, REL_ALL, 0, 0, FALSE, 0 } },
	  4 },
	{ "a unified pool: the cap follows the potential size", 600,
	  { { 0, SIZE, 600, 1000, FALSE, 0 }, { 1, ACQ, 400, 400, FALSE, 1 },
	    { 2, ACQ, 400, 200, FALSE, 2 }, { 0, SIZE, 1000, 1000, FALSE, 2 },
	    { 2, ACQ, 400, 300, FALSE, 2 }, { 1, ACQ, 400, 100, FALSE, 2 } },
	  6 },
};

START_TEST(test_pool_script)
{
	const PoolScript *script = &pool_scripts[_i];
	g_autoptr(GsExecutionPool) pool = gs_execution_pool_new(script->pool_size);
	gint64 model[8] = { 0 }; /* bytes per task id, as the steps expect */

	for (guint s = 0; s < script->n_steps; s++) {
		const PoolStep *step = &script->steps[s];
		gint64 used = 0;

		switch (step->op) {
		case ACQ: {
			GsFairShareGrant g =
				gs_execution_pool_acquire(pool, step->task, step->bytes);

			ck_assert_msg(g.granted == step->result && g.must_wait == step->wait,
				      "%s, step %u: granted %" G_GINT64_FORMAT ", wait %d",
				      script->what, s, g.granted, g.must_wait);
			model[step->task] += g.granted;
			/* a waiting task is registered all the same */
			ck_assert(gs_execution_pool_has_task(pool, step->task));
			break;
		}
		case REL:
			ck_assert_int_eq(gs_execution_pool_release(pool, step->task, step->bytes),
					 step->result);
			model[step->task] -= step->result;
			break;
		case REL_ALL:
			ck_assert_int_eq(gs_execution_pool_release_all(pool, step->task),
					 step->result);
			model[step->task] = 0;
			ck_assert(!gs_execution_pool_has_task(pool, step->task));
			break;
		case SIZE:
			gs_execution_pool_set_size(pool, step->bytes, step->result);
			ck_assert_int_eq(gs_execution_pool_get_size(pool), step->bytes);
			break;
		default:
			ck_abort();
		}
		ck_assert_msg(gs_execution_pool_n_tasks(pool) == step->n_tasks,
			      "%s, step %u: N = %u", script->what, s,
			      gs_execution_pool_n_tasks(pool));
		for (guint t = 0; t < G_N_ELEMENTS(model); t++) {
			ck_assert_int_eq(gs_execution_pool_get_task_bytes(pool, t), model[t]);
			used += model[t];
		}
		ck_assert_int_eq(gs_execution_pool_get_used(pool), used);
		ck_assert_int_eq(gs_execution_pool_get_free(pool),
				 gs_execution_pool_get_size(pool) - used);
		ck_assert_int_ge(gs_execution_pool_get_free(pool), 0);
	}
}
END_TEST

/*
 * All or nothing (how an allocator uses the pool): a request the share does
 * not cover whole is refused and leaves the task as it was; the same request
 * succeeds once another task's end gives its share back.
 */
static const struct {
	const char *what;
	GsTaskId task;
	gint64 bytes;
	gboolean release_all; /* instead: release everything @task holds */
	gboolean granted;
	gint64 a_holds, b_holds; /* after the step */
} all_or_nothing[] = {
	{"A takes 6 of 16 alone", 0, 6, FALSE, TRUE, 6, 0},
	{"B takes 4: N = 2, 8 each", 1, 4, FALSE, TRUE, 6, 4},
	{"A's 4 more would pass its 8: refused, A keeps 6", 0, 4, FALSE, FALSE, 6, 4},
	{"B ends", 1, 0, TRUE, FALSE, 6, 0},
	{"A alone again: its 4 more are granted", 0, 4, FALSE, TRUE, 10, 0},
	{"B asks 7, 6 free: a partial grant, refused and given back", 1, 7, FALSE, FALSE, 10, 0},
	{"A takes 4 more, alone: 14", 0, 4, FALSE, TRUE, 14, 0},
	{"B asks 4, 2 free, below 1/2N: it must wait, refused", 1, 4, FALSE, FALSE, 14, 0},
	{"B asks 0: nothing to share out, granted", 1, 0, FALSE, TRUE, 14, 0},
	{"A asks 0 at its 1/N: granted", 0, 0, FALSE, TRUE, 14, 0},
};

static guint criticals;

static void
count_criticals(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	if (level & G_LOG_LEVEL_CRITICAL)
		criticals++;
}

START_TEST(test_pool_acquire_all)
{
	g_autoptr(GsExecutionPool) pool = gs_execution_pool_new(16);

	criticals = 0;
	g_log_set_default_handler(count_criticals, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(all_or_nothing); i++) {
		const __typeof__(all_or_nothing[0]) *step = &all_or_nothing[i];

		if (step->release_all)
			gs_execution_pool_release_all(pool, step->task);
		else
			ck_assert_msg(gs_execution_pool_acquire_all(pool, step->task, step->bytes) ==
					      step->granted,
				      "%s", step->what);
		ck_assert_msg(gs_execution_pool_get_task_bytes(pool, 0) == step->a_holds &&
				      gs_execution_pool_get_task_bytes(pool, 1) == step->b_holds,
			      "%s: A holds %" G_GINT64_FORMAT ", B %" G_GINT64_FORMAT, step->what,
			      gs_execution_pool_get_task_bytes(pool, 0),
			      gs_execution_pool_get_task_bytes(pool, 1));
	}
	ck_assert_uint_eq(criticals, 0);
}
END_TEST

/* Many tasks: each gets exactly 1/N when all ask for everything in turn. */
START_TEST(test_pool_many_tasks)
{
	g_autoptr(GsExecutionPool) pool = gs_execution_pool_new(1000);

	/* task 0 takes everything alone; the seven others register and wait below 1/2N */
	ck_assert_int_eq(gs_execution_pool_acquire(pool, 0, 1000).granted, 1000);
	for (GsTaskId t = 1; t < 8; t++)
		ck_assert(gs_execution_pool_acquire(pool, t, 1000).must_wait);
	ck_assert_uint_eq(gs_execution_pool_n_tasks(pool), 8);
	/* task 0 gives back all but its 1/8 */
	ck_assert_int_eq(gs_execution_pool_release(pool, 0, 875), 875);
	/* 1000 / 8 = 125 each: the cap, and 62 the floor */
	for (GsTaskId t = 1; t < 8; t++) {
		GsFairShareGrant g = gs_execution_pool_acquire(pool, t, 1000);

		ck_assert(!g.must_wait);
		ck_assert_int_eq(g.granted, 125);
		ck_assert_int_eq(g.max_per_task, 125);
		ck_assert_int_eq(g.min_per_task, 62);
	}
	ck_assert_int_eq(gs_execution_pool_get_free(pool), 0);
	for (GsTaskId t = 0; t < 8; t++)
		ck_assert_int_eq(gs_execution_pool_release_all(pool, t), 125);
	ck_assert_uint_eq(gs_execution_pool_n_tasks(pool), 0);
}
END_TEST

/* ---- Programming errors are refused, not crashes ---- */

START_TEST(test_programming_errors)
{
	g_autoptr(GsPageTable) table = gs_page_table_new();
	GsFairShareRequest bad = { 100, 0, 0, 1000, 1000, 1000 };
	GsFairShareGrant g;

	criticals = 0;
	g_log_set_default_handler(count_criticals, NULL);
	ck_assert_uint_eq(gs_page_encode(GS_PAGE_TABLE_SIZE, 1), 0);
	ck_assert_int_eq(gs_page_table_allocate(table, -1, NULL, NULL), GS_PAGE_NO_MEMORY);
	g = gs_fair_share_decide(&bad);
	ck_assert_int_eq(g.granted, 0);
	ck_assert(!g.must_wait);
	ck_assert_int_eq(gs_page_default_size(GiB, 0, 0), GS_PAGE_MIN_DEFAULT_BYTES);
	ck_assert_uint_eq(criticals, 4);
	ck_assert_uint_eq(gs_page_table_count(table), 0);
}
END_TEST

Suite *
gs_test_suite_pages(void)
{
	Suite *s = suite_create("pages");
	TCase *tc;

	tc = tcase_create("encoding");
	tcase_add_test(tc, test_constants);
	tcase_add_loop_test(tc, test_encode, 0, G_N_ELEMENTS(encode_rows));
	tcase_add_loop_test(tc, test_decode, 0, G_N_ELEMENTS(decode_rows));
	tcase_add_test(tc, test_round_trip_all_pages);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_loop_test(tc, test_page_script, 0, G_N_ELEMENTS(page_scripts));
	tcase_add_test(tc, test_table_full);
	tcase_add_test(tc, test_table_sparse);
	tcase_add_loop_test(tc, test_max_page_size, 0, G_N_ELEMENTS(size_rows));
	tcase_add_loop_test(tc, test_debug_fill, 0, G_N_ELEMENTS(fill_rows));
	tcase_add_test(tc, test_debug_fill_simulated);
	tcase_add_test(tc, test_clean_up_fills);
	tcase_add_test(tc, test_leak_report);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_result_names);
	tcase_add_loop_test(tc, test_default_page_size, 0, G_N_ELEMENTS(page_size_rows));
	suite_add_tcase(s, tc);

	tc = tcase_create("consumers");
	tcase_add_test(tc, test_consumer_page_request);
	tcase_add_loop_test(tc, test_pick_spill, 0, G_N_ELEMENTS(pick_rows));
	tcase_add_loop_test(tc, test_spill_loop, 0, G_N_ELEMENTS(spill_rows));
	tcase_add_test(tc, test_spill_loop_no_calls);
	suite_add_tcase(s, tc);

	tc = tcase_create("fair-share");
	tcase_add_loop_test(tc, test_fair_share, 0, G_N_ELEMENTS(fair_rows));
	tcase_add_loop_test(tc, test_pool_script, 0, G_N_ELEMENTS(pool_scripts));
	tcase_add_test(tc, test_pool_many_tasks);
	tcase_add_test(tc, test_pool_acquire_all);
	tcase_add_test(tc, test_programming_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_pages());
}
