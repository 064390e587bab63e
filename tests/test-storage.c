/*
 * Unit tests of storage.h: the split of the unified region, storage's
 * borrowing of execution's free memory, execution's reclaiming of storage
 * beyond its region, the refusal of a block larger than what execution
 * leaves, and both memory stores' eviction. The scripts follow Spark's
 * UnifiedMemoryManagerSuite (a 1000-byte region, storage fraction 0.5),
 * with the numbers it asserts; the block-store rows are worked by hand.
 */
#include <gpusim/storage.h>

#include "testlib.h"

Suite *gs_test_suite_storage(void);

typedef enum {
	STORE,       /* acquire storage for block "b" */
	EXEC,        /* a grow, then one pass of the execution pool for task `task` */
	RELEASE,     /* release storage */
	RELEASE_ALL, /* release all storage of the mode */
	EXEC_RELEASE /* release execution memory of task `task` */
} Action;

typedef struct {
	Action action;
	GsMemoryMode mode;
	gint64 bytes;
	GsTaskId task;
	gint64 result;       /* STORE: 1 granted, 0 refused; EXEC: the grant; RELEASE: released */
	gint64 evict_asked;  /* 0: no eviction */
	gint64 storage_used; /* after the step, in the step's mode */
	gint64 exec_used;
} Step;

typedef struct {
	const char *name;
	gint64 max_memory[GS_N_MEMORY_MODES];
	double fraction;
	GsEvictMode evict;
	Step steps[16];
} Script;

#define ON GS_MODE_ON_HEAP
#define OFF GS_MODE_OFF_HEAP
#define END {.action = STORE, .bytes = -1}

static const Script scripts[] = {
	{"basic storage memory", {1000, 0}, 0.5, GS_EVICT_BYTES, {
		{STORE, ON, 10, 0, 1, 0, 10, 0},
		{STORE, ON, 100, 0, 1, 0, 110, 0},
		{STORE, ON, 1001, 0, 0, 0, 110, 0},   /* above the max: refused at once */
		{STORE, ON, 1000, 0, 1, 110, 1000, 0},
		{STORE, ON, 1, 0, 1, 1, 1000, 0},     /* the mock frees exactly 1 byte */
		{RELEASE, ON, 800, 0, 800, 0, 200, 0},
		{STORE, ON, 1, 0, 1, 0, 201, 0},
		{RELEASE_ALL, ON, 0, 0, 201, 0, 0, 0},
		{STORE, ON, 1, 0, 1, 0, 1, 0},
		{RELEASE, ON, 100, 0, 1, 0, 0, 0},    /* clamped to what is held */
		END}},
	{"execution evicts storage", {1000, 0}, 0.5, GS_EVICT_BYTES, {
		{STORE, ON, 750, 0, 1, 0, 750, 0},
		{EXEC, ON, 100, 0, 100, 0, 750, 100},
		{EXEC, ON, 200, 0, 200, 50, 700, 300},
		{RELEASE_ALL, ON, 0, 0, 700, 0, 0, 300},
		{STORE, ON, 400, 0, 1, 0, 400, 300},
		{EXEC, ON, 400, 0, 300, 0, 400, 600}, /* storage within its region stays */
		END}},
	{"SPARK-12165", {1000, 0}, 0.5, GS_EVICT_BYTES, {
		{STORE, ON, 700, 0, 1, 0, 700, 0},
		{EXEC, ON, 500, 0, 500, 200, 500, 500},
		END}},
	{"storage does not evict execution", {1000, 0}, 0.5, GS_EVICT_BYTES, {
		{EXEC, ON, 800, 0, 800, 0, 0, 800},
		{STORE, ON, 100, 0, 1, 0, 100, 800},
		{STORE, ON, 250, 0, 0, 0, 100, 800},
		{EXEC_RELEASE, ON, 1000, 0, 800, 0, 100, 0},
		{RELEASE, ON, 1000, 0, 100, 0, 0, 0},
		{EXEC, ON, 200, 0, 200, 0, 0, 200},
		{STORE, ON, 750, 0, 1, 0, 750, 200},
		{STORE, ON, 850, 0, 0, 0, 750, 200},
		END}},
	{"SPARK-12155", {1000, 0}, 0.0, GS_EVICT_BYTES, {
		{EXEC, ON, 100, 0, 100, 0, 0, 100},
		{EXEC, ON, 100, 1, 100, 0, 0, 200},
		{STORE, ON, 800, 0, 1, 0, 800, 200},
		{EXEC, ON, 100, 0, 100, 100, 700, 300},
		END}},
	{"off-heap", {1000, 1000}, 0.5, GS_EVICT_BYTES, {
		{EXEC, OFF, 400, 0, 400, 0, 0, 400},
		{STORE, OFF, 700, 0, 0, 0, 0, 400},
		{STORE, OFF, 100, 0, 1, 0, 100, 400},
		{STORE, OFF, 450, 0, 1, 0, 550, 400},
		{STORE, OFF, 100, 0, 1, 50, 600, 400},
		{STORE, ON, 10, 0, 1, 0, 10, 0},      /* the other mode is apart */
		END}},
	/* The MemoryStore: whole blocks, oldest first, or none. */
	{"blocks", {1000, 0}, 0.5, GS_EVICT_BLOCKS, {
		{STORE, ON, 300, 0, 1, 0, 300, 0},
		{STORE, ON, 300, 0, 1, 0, 600, 0},
		{STORE, ON, 300, 0, 1, 0, 900, 0},
		{STORE, ON, 150, 0, 1, 50, 750, 0},   /* the oldest block goes whole */
		/* 250 free, then a block of 300 for the other 250 beyond the region */
		{EXEC, ON, 600, 0, 550, 250, 450, 550},
		{STORE, ON, 500, 0, 0, 0, 450, 550},  /* above 1000 - 550: refused at once */
		{STORE, ON, 200, 0, 1, 200, 350, 550},
		END}},
	/* Eviction takes blocks of the mode asked only. */
	{"blocks of one mode", {1000, 1000}, 0.5, GS_EVICT_BLOCKS, {
		{STORE, OFF, 600, 0, 1, 0, 600, 0},
		{STORE, ON, 900, 0, 1, 0, 900, 0},
		{STORE, ON, 200, 0, 1, 100, 200, 0},
		{STORE, OFF, 0, 0, 1, 0, 600, 0},
		END}},
};

static void
run_step(GsStorage *s, GsExecutionPool *exec[], const Script *script, const Step *st, guint i)
{
	GsStorageOutcome out = {0};
	gint64 result = 0;
	GsFairShareGrant grant;

	switch (st->action) {
	case STORE:
		out = gs_storage_acquire(s, st->mode, "b", st->bytes);
		result = out.granted;
		ck_assert(!out.too_large || !out.granted);
		break;
	case EXEC:
		out = gs_storage_grow_execution(s, st->mode, st->bytes);
		grant = gs_execution_pool_acquire(exec[st->mode], st->task, st->bytes);
		result = grant.must_wait ? -1 : grant.granted;
		break;
	case RELEASE:
		result = gs_storage_release(s, st->mode, st->bytes);
		break;
	case RELEASE_ALL:
		result = gs_storage_release_all(s, st->mode);
		break;
	case EXEC_RELEASE:
		result = gs_execution_pool_release(exec[st->mode], st->task, st->bytes);
		break;
	}
	ck_assert_msg(result == st->result, "%s, step %u: result %" G_GINT64_FORMAT
		      ", expected %" G_GINT64_FORMAT, script->name, i, result, st->result);
	ck_assert_msg(out.eviction.asked == st->evict_asked, "%s, step %u: evicted for %"
		      G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, script->name, i,
		      out.eviction.asked, st->evict_asked);
	ck_assert_msg(gs_storage_get_used(s, st->mode) == st->storage_used,
		      "%s, step %u: storage used %" G_GINT64_FORMAT, script->name, i,
		      gs_storage_get_used(s, st->mode));
	ck_assert_int_eq(gs_execution_pool_get_used(exec[st->mode]), st->exec_used);
}

/* After every step: the sizes add up, and so do the blocks. */
static void
check_invariants(GsStorage *s, GsExecutionPool *exec[], const Script *script)
{
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++) {
		ck_assert_int_eq(gs_storage_get_size(s, m) + gs_execution_pool_get_size(exec[m]),
				 script->max_memory[m]);
		ck_assert_int_le(gs_storage_get_used(s, m), gs_storage_get_size(s, m));
		ck_assert(gs_storage_get_used(s, m) > 0 || gs_storage_n_blocks(s, m) == 0);
	}
}

START_TEST(test_script)
{
	const Script *script = &scripts[_i];
	GsExecutionPool *exec[GS_N_MEMORY_MODES];
	g_autoptr(GsStorage) s = NULL;

	for (guint m = 0; m < GS_N_MEMORY_MODES; m++)
		exec[m] = gs_execution_pool_new(script->max_memory[m]);
	s = gs_storage_new(script->max_memory, script->fraction, script->evict, exec);
	for (guint i = 0; script->steps[i].bytes >= 0; i++) {
		run_step(s, exec, script, &script->steps[i], i);
		check_invariants(s, exec, script);
	}
	g_clear_pointer(&s, gs_storage_free);
	for (guint m = 0; m < GS_N_MEMORY_MODES; m++)
		gs_execution_pool_free(exec[m]);
}
END_TEST

typedef struct {
	gint64 max_memory;
	double fraction;
	gint64 region;
} RegionRow;

static const RegionRow region_rows[] = {
	{1000, 0.5, 500},
	{1000, 0.0, 0},
	{1000, 1.0, 1000},
	{999, 0.5, 499},  /* truncated, as toLong */
	{0, 0.5, 0},
};

START_TEST(test_region)
{
	const RegionRow *row = &region_rows[_i];

	ck_assert_int_eq(gs_storage_region(row->max_memory, row->fraction), row->region);
}
END_TEST

/* Without storage, the pools are the execution pools they were. */
START_TEST(test_no_storage_changes_nothing)
{
	gint64 max[GS_N_MEMORY_MODES] = {1000, 0};
	GsExecutionPool *exec[GS_N_MEMORY_MODES] = {gs_execution_pool_new(1000),
						    gs_execution_pool_new(0)};
	g_autoptr(GsStorage) s = gs_storage_new(max, 0.0, GS_EVICT_BLOCKS, exec);
	GsStorageOutcome out = gs_storage_grow_execution(s, ON, 2000);

	ck_assert_int_eq(out.reclaimed, 0);
	ck_assert_int_eq(out.eviction.asked, 0);
	ck_assert_int_eq(gs_execution_pool_get_size(exec[ON]), 1000);
	ck_assert_int_eq(gs_execution_pool_acquire(exec[ON], 0, 2000).granted, 1000);
	g_clear_pointer(&s, gs_storage_free);
	gs_execution_pool_free(exec[ON]);
	gs_execution_pool_free(exec[OFF]);
}
END_TEST

/* The blocks evicted are named, oldest first, with what each lost. */
START_TEST(test_evicted_blocks)
{
	gint64 max[GS_N_MEMORY_MODES] = {1000, 0};
	GsExecutionPool *exec[GS_N_MEMORY_MODES] = {gs_execution_pool_new(1000),
						    gs_execution_pool_new(0)};
	g_autoptr(GsStorage) s = gs_storage_new(max, 0.5, GS_EVICT_BLOCKS, exec);
	GsStorageOutcome out;
	gint64 bytes = 0;

	ck_assert(gs_storage_acquire(s, ON, "x", 300).granted);
	ck_assert(gs_storage_acquire(s, ON, "y", 300).granted);
	ck_assert(gs_storage_acquire(s, ON, "z", 300).granted);
	ck_assert_uint_eq(gs_storage_n_evicted(s), 0);
	out = gs_storage_acquire(s, ON, "w", 500);
	ck_assert(out.granted);
	ck_assert_int_eq(out.borrowed, 100);
	ck_assert_int_eq(out.eviction.asked, 400);
	ck_assert_int_eq(out.eviction.freed, 600);
	ck_assert_uint_eq(gs_storage_n_evicted(s), 2);
	ck_assert_str_eq(gs_storage_evicted(s, 0, &bytes), "x");
	ck_assert_int_eq(bytes, 300);
	ck_assert_str_eq(gs_storage_evicted(s, 1, NULL), "y");
	ck_assert_uint_eq(gs_storage_n_blocks(s, ON), 2);
	ck_assert_int_eq(gs_storage_get_used(s, ON), 800);
	/* The next call starts a list of its own. */
	gs_storage_grow_execution(s, ON, 1);
	ck_assert_uint_eq(gs_storage_n_evicted(s), 0);
	g_clear_pointer(&s, gs_storage_free);
	gs_execution_pool_free(exec[ON]);
	gs_execution_pool_free(exec[OFF]);
}
END_TEST

Suite *
gs_test_suite_storage(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("unified");

	tcase_add_loop_test(tc, test_script, 0, G_N_ELEMENTS(scripts));
	tcase_add_loop_test(tc, test_region, 0, G_N_ELEMENTS(region_rows));
	tcase_add_test(tc, test_no_storage_changes_nothing);
	tcase_add_test(tc, test_evicted_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tl_run_suite(gs_test_suite_storage());
}
