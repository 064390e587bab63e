/*
 * Unit tests of run/execution.h through the tier ops and a fake driver:
 * Spark's execution memory as two tasks (T1, T2, one thread each) call it.
 * Each row is a script of calls and the trace they must leave: the log's
 * execution entries, the threads woken, what each call throws and what a
 * woken thread throws. Rows cover partial and zero grants, the wait below
 * 1/2N and its end, the spill order (smallest that covers, else largest,
 * the requester last, never across modes), pages (lowest free number, too
 * large, short grants), clean-up and a task's end; and the unified
 * manager's storage: borrowing, eviction and reclaiming, the refusal of a
 * block too large, releases, and that a storage release wakes nobody.
 */
#include "config.h"

#include <string.h>

#include "run/tasks.h"
#include "run/tier-ops.h"
#include "testlib.h"

typedef struct {
	GsRunThreadTiers res;
	GsRunTask task;
	const char *name;
} Thread;

typedef struct {
	GsRunTiers tier_ops;
	GsWorkload *w;
	GsMemory *mem;
	GsThreadSpec *spec;
	Thread threads[2];
	GsTaskResult results[2];
	GString *trace;
} Fake;

#define note(f, ...) tl_trace_add(((Fake *) (f))->trace, __VA_ARGS__)

static GsRunThreadTiers *
fake_of(gpointer data, gpointer thread)
{
	return &((Thread *) thread)->res;
}

static GsRunTask *
fake_task_of(gpointer data, gpointer thread)
{
	return &((Thread *) thread)->task;
}

static void
fake_wake(gpointer data, gpointer thread)
{
	GsException thrown = gs_run_take_thrown(&((Thread *) thread)->res);

	note(data, "wake %s%s%s", ((Thread *) thread)->name, thrown != GS_EXC_NONE ? " " : "",
	     thrown != GS_EXC_NONE ? gs_exception_name(thrown) : "");
}

static void
fake_log(gpointer data, GsLogEntry *e)
{
	ck_assert(e->kind == GS_LOG_EXECUTION || e->kind == GS_LOG_STORAGE);
	if (e->kind == GS_LOG_STORAGE)
		note(data, "%s storage %s %s %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT "%s", e->thread,
		     e->what, e->buf != NULL ? e->buf : "-", e->bytes, e->asked,
		     e->mode == GS_MODE_OFF_HEAP ? " off" : "");
	else if (strcmp(e->what, "page") == 0)
		note(data, "%s page %s #%u %" G_GINT64_FORMAT, e->thread, e->buf, e->page, e->bytes);
	else
		note(data, "%s %s %s %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
		     e->thread != NULL ? e->thread : e->task, e->what, e->buf != NULL ? e->buf : "-",
		     e->bytes, e->asked);
}

static const GsRunHooks fake_hooks = {
	.tiers_of = fake_of,
	.task_of = fake_task_of,
	.wake = fake_wake,
	.log = fake_log,
};

/* The consumers every thread declares: a and b on heap, o off heap. */
static const struct {
	const char *name;
	GsMemoryMode mode;
} consumers[] = {{"a", GS_MODE_ON_HEAP}, {"b", GS_MODE_ON_HEAP}, {"o", GS_MODE_OFF_HEAP}};

static Fake *
fake_new(GsExecutionShare share, gint64 on_heap, gint64 off_heap, double fraction, int evict)
{
	Fake *f = g_new0(Fake, 1);

	f->w = gs_workload_new();
	f->w->gpu.capacity = 1 << 20;
	f->w->execution = (GsExecutionMemory){.pool = {on_heap, off_heap}, .share = share,
					      .page_size = 100, .storage_fraction = fraction,
					      .evict = evict};
	f->mem = gs_memory_new(f->w);
	f->spec = gs_thread_spec_new("T");
	for (guint i = 0; i < G_N_ELEMENTS(consumers); i++) {
		g_ptr_array_add(f->spec->consumers, g_strdup(consumers[i].name));
		g_array_append_val(f->spec->consumer_modes, consumers[i].mode);
	}
	g_ptr_array_add(f->spec->pages, g_strdup("p"));
	g_ptr_array_add(f->spec->pages, g_strdup("q"));
	f->trace = g_string_new(NULL);
	gs_run_tiers_init(&f->tier_ops, f->w, f->mem, &fake_hooks, f);
	for (guint i = 0; i < 2; i++) {
		Thread *t = &f->threads[i];

		t->name = i == 0 ? "T1" : "T2";
		f->results[i].id = (char *) t->name;
		t->task = (GsRunTask){.engine_id = i + 1, .result = &f->results[i]};
		gs_run_thread_tiers_init(&t->res, &f->tier_ops, i + 1, t->name, f->spec);
	}
	return f;
}

static void
fake_free(Fake *f)
{
	for (guint i = 0; i < 2; i++) {
		gs_run_tiers_task_ends(&f->tier_ops, &f->threads[i].task);
		gs_run_thread_tiers_clear(&f->threads[i].res);
	}
	gs_run_tiers_clear(&f->tier_ops);
	gs_memory_free(f->mem);
	gs_thread_spec_free(f->spec);
	gs_workload_free(f->w);
	g_string_free(f->trace, TRUE);
	g_free(f);
}

/* One call of a script: thread 0 or 1 (2: T1's task ends), an op, its consumer and size. */
typedef struct {
	guint thread;
	GsOpKind kind;
	gint consumer; /* index in consumers[]; -1: none */
	gint64 bytes;
	guint page;
} Step;

#define END {.kind = GS_N_OP_KINDS}
#define ACQ(t, c, n) {t, GS_OP_ACQUIRE_EXECUTION, c, n, 0}
#define REL(t, c, n) {t, GS_OP_RELEASE_EXECUTION, c, n, 0}
#define PAGE(t, c, n, p) {t, GS_OP_ALLOCATE_PAGE, c, n, p}
#define FREE_PAGE(t, p) {t, GS_OP_FREE_PAGE, -1, 0, p}
#define CLEAN(t) {t, GS_OP_CLEAN_UP, -1, 0, 0}
#define T1_ENDS {2, GS_OP_TASK_DONE, -1, 0, 0}
#define STORE(t, n) {t, GS_OP_ACQUIRE_STORAGE, -1, n, 0}
#define UNSTORE(t, n) {t, GS_OP_RELEASE_STORAGE, -1, n, 0}
#define UNSTORE_ALL(t) {t, GS_OP_RELEASE_ALL_STORAGE, -1, 0, 0}

typedef struct {
	const char *name;
	GsExecutionShare share;
	gint64 on_heap, off_heap;
	Step steps[8];
	const char *trace;
	double storage_fraction; /* with share fair: the unified manager's storage */
	int evict;
} Row;

static const Row rows[] = {
	{"fair share: whole, in part, then nothing, at once", GS_SHARE_FAIR, 1000, 0,
	 {ACQ(0, -1, 400), ACQ(0, -1, 500), ACQ(0, -1, 200), ACQ(0, -1, 100), END},
	 "T1 acquire - 400/400, T1 acquire - 500/500, T1 acquire - 100/200, "
	 "T1 acquire - 0/100"},
	{"below 1/2N a task waits, and goes on when memory is released", GS_SHARE_FAIR, 1000, 0,
	 {ACQ(0, -1, 1000), ACQ(1, -1, 250), REL(0, -1, 100), REL(0, -1, 150), ACQ(1, -1, 100),
	  END},
	 "T1 acquire - 1000/1000, T2 wait - 0/250, T1 release - 100/100, T2 wait - 0/250, "
	 "T1 release - 150/150, T2 acquire - 250/250, wake T2, T2 acquire - 0/100"},
	{"a task's end releases its memory: the waiting task goes on", GS_SHARE_FAIR, 1000, 0,
	 {ACQ(0, -1, 1000), ACQ(1, -1, 600), T1_ENDS, END},
	 "T1 acquire - 1000/1000, T2 wait - 0/600, T1 clean_up - 1000/0, "
	 "T2 acquire - 600/600, wake T2"},
	{"a task that ends leaves the line: its thread is not served", GS_SHARE_FAIR, 1000, 0,
	 {ACQ(1, -1, 1000), ACQ(0, -1, 250), T1_ENDS, REL(1, -1, 500), END},
	 "T2 acquire - 1000/1000, T1 wait - 0/250, T2 release - 500/500"},
	{"spills: the smallest that covers, else the largest, the requester last",
	 GS_SHARE_NONE, 100, 0,
	 {ACQ(0, 0, 50), ACQ(0, 1, 40), ACQ(0, 2, 10), ACQ(0, 0, 30), ACQ(0, 1, 45), END},
	 "T1 acquire a 50/50, T1 acquire b 40/40, T1 acquire o 10/10, "
	 "T1 spill b 40/30, T1 acquire a 30/30, "
	 "T1 spill a 80/35, T1 acquire b 45/45"},
	{"never across modes, and a requester with nothing spills nothing", GS_SHARE_NONE, 100, 0,
	 {ACQ(0, 0, 80), ACQ(0, 2, 80), ACQ(0, 2, 10), END},
	 "T1 acquire a 80/80, T1 acquire o 20/80, T1 spill o 20/10, T1 acquire o 10/10"},
	{"releases are clamped to what the consumer holds", GS_SHARE_NONE, 100, 0,
	 {ACQ(0, 0, 30), REL(0, 0, 50), REL(0, -1, 10), ACQ(0, 1, 100), END},
	 "T1 acquire a 30/30, T1 release a 30/50, T1 release - 0/10, T1 acquire b 100/100"},
	{"pages: the lowest free number, and a page is at least page_size", GS_SHARE_FAIR, 1000, 0,
	 {PAGE(0, 0, 10, 0), PAGE(0, 0, 200, 1), FREE_PAGE(0, 0), PAGE(0, 1, 50, 0), END},
	 "T1 page a #0 100, T1 page a #1 200, T1 free_page a 100/100, T1 page b #0 100"},
	{"a page too large, and a short grant, throw, the grant goes back", GS_SHARE_FAIR, 1000, 300,
	 {PAGE(0, 0, GS_PAGE_MAX_BYTES + 1, 0), PAGE(0, 2, 400, 1), ACQ(0, 2, 300), END},
	 "T1 too-large a 0/17179869177, throw TooLargePageException, "
	 "T1 no-memory o 300/400, throw SparkOutOfMemoryError, T1 acquire o 300/300"},
	{"a page asked while waiting throws when its grant falls short", GS_SHARE_FAIR, 1000, 0,
	 {ACQ(0, -1, 1000), PAGE(1, 0, 400, 0), REL(0, -1, 300), END},
	 "T1 acquire - 1000/1000, T2 wait a 0/400, T1 release - 300/300, "
	 "T2 no-memory a 300/400, wake T2 SparkOutOfMemoryError"},
	{"clean_up frees pages and consumers and returns the leak", GS_SHARE_NONE, 1000, 0,
	 {PAGE(0, 0, 300, 0), ACQ(0, 1, 50), CLEAN(0), ACQ(0, 0, 1000), END},
	 "T1 page a #0 300, T1 acquire b 50/50, T1 clean_up - 350/0, T1 acquire a 1000/1000"},
	/* the unified memory manager's storage */
	{"storage borrows free execution memory; execution evicts what is beyond the region",
	 GS_SHARE_FAIR, 1000, 0, {STORE(0, 700), ACQ(0, -1, 500), END},
	 "T1 storage borrow b 200/200, T1 storage store b 700/700, "
	 "T1 storage evict - 200/200, T1 storage drop b 200/200, T1 storage reclaim - 200/200, "
	 "T1 acquire - 500/500",
	 0.5, GS_EVICT_BYTES},
	{"a storage release wakes no waiting task; the next pass takes the freed storage",
	 GS_SHARE_FAIR, 1000, 0,
	 {STORE(0, 500), ACQ(0, -1, 500), ACQ(1, -1, 250), UNSTORE(0, 500), REL(0, -1, 1), END},
	 "T1 storage store b 500/500, T1 acquire - 500/500, T2 wait - 0/250, "
	 "T1 storage release - 500/500, T1 release - 1/1, T2 storage reclaim - 249/249, "
	 "T2 acquire - 250/250, wake T2",
	 0.5, GS_EVICT_BLOCKS},
	{"a block above what execution leaves is refused at once; all storage goes",
	 GS_SHARE_FAIR, 1000, 0, {ACQ(0, -1, 800), STORE(1, 300), STORE(1, 200), UNSTORE_ALL(1), END},
	 "T1 storage reclaim - 300/300, T1 acquire - 800/800, T2 storage too_large b 0/300, "
	 "T2 storage store b 200/200, T2 storage release - 200/200, "
	 "T2 storage release - 0/0 off",
	 0.5, GS_EVICT_BLOCKS},
};

static void
run_step(Fake *f, const Step *s, GsOp *op)
{
	GsException thrown = GS_EXC_NONE;

	if (s->kind == GS_OP_TASK_DONE) {
		gs_run_tiers_task_ends(&f->tier_ops, &f->threads[0].task);
		return;
	}
	*op = (GsOp){.kind = s->kind};
	op->execution.consumer = s->consumer;
	op->execution.mode = s->consumer >= 0 ? consumers[s->consumer].mode : GS_MODE_ON_HEAP;
	op->execution.bytes = s->bytes;
	op->execution.page = s->page;
	op->execution.block = s->kind == GS_OP_ACQUIRE_STORAGE ? (char *) "b" : NULL;
	gs_run_tier_op(&f->tier_ops, &f->threads[s->thread], s->thread + 1, op, &thrown);
	if (thrown != GS_EXC_NONE)
		note(f, "throw %s", gs_exception_name(thrown));
}

START_TEST(test_execution_memory)
{
	const Row *row = &rows[_i];
	Fake *f = fake_new(row->share, row->on_heap, row->off_heap, row->storage_fraction,
			   row->evict);
	GsOp ops[G_N_ELEMENTS(row->steps)];

	for (guint i = 0; row->steps[i].kind != GS_N_OP_KINDS; i++)
		run_step(f, &row->steps[i], &ops[i]);
	ck_assert_msg(strcmp(f->trace->str, row->trace) == 0, "%s:\n got  %s\n want %s",
		      row->name, f->trace->str, row->trace);
	fake_free(f);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("run-execution");
	TCase *tc = tcase_create("execution");

	tcase_add_loop_test(tc, test_execution_memory, 0, G_N_ELEMENTS(rows));
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
