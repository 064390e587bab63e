/*
 * Unit tests of run/tier-ops.h through a fake driver over the real tier
 * model: grants, refusals and waits, a name reserved again, the line of
 * waiting threads served first come first served, a thread that leaves the
 * line, every reservation given back at a thread's end, the ops as a
 * driver hands them over, an allocation's request, the evacuation gate's
 * scopes, a retry block's spillable inputs, a thread that ends, the
 * proactive downgrade's turns, fair shares, a fallback to disk and
 * HostAlloc's refusal of a size no pool could hold. The fake driver
 * writes down the log and every call back; each test says what that trace
 * must be.
 */
#include "config.h"

#include <string.h>

#include "run/tasks.h"
#include "run/tier-ops.h"
#include "testlib.h"

#define MIB ((gint64) 1 << 20)

typedef struct {
	GsRunThreadTiers res;
	const char *name;
} Thread;

typedef struct {
	GsRunTiers tier_ops;
	GsWorkload *w;
	GsMemory *mem;
	GsThreadSpec *spec;
	Thread threads[2];
	GsOp ops[8];       /* the reserve ops made, kept as a spec keeps them */
	guint n_ops;
	GString *trace;
} Fake;

#define note(f, ...) tl_trace_add(((Fake *) (f))->trace, __VA_ARGS__)

static GsRunThreadTiers *
fake_of(gpointer data, gpointer thread)
{
	return &((Thread *) thread)->res;
}

static void
fake_granted(gpointer data, GsTier tier)
{
}

static void
fake_released(gpointer data, GsTier tier)
{
	static const char *const names[] = {"gpu", "host", "disk"};

	note(data, "%s came free", names[tier]);
}

static void
fake_wake(gpointer data, gpointer thread)
{
	note(data, "wake %s", ((Thread *) thread)->name);
}

static void
fake_log(gpointer data, GsLogEntry *e)
{
	if (e->kind == GS_LOG_GATE) {
		note(data, "%s gate %s", e->thread != NULL ? e->thread : "-", e->what);
		return;
	}
	if (e->kind == GS_LOG_DOWNGRADE) {
		note(data, "gpu%u downgrade %s at %" G_GINT64_FORMAT "MiB", e->device, e->what,
		     e->bytes / MIB);
		return;
	}
	if (e->kind == GS_LOG_STREAM) {
		note(data, "%s %s %s idle %u", e->thread, e->what, e->buf, e->count);
		return;
	}
	ck_assert(e->kind == GS_LOG_RESERVE || e->kind == GS_LOG_RELEASE);
	note(data, "%s %s %s %s %" G_GINT64_FORMAT "MiB", e->thread,
	     e->kind == GS_LOG_RESERVE ? "reserves" : "releases", e->buf,
	     e->what != NULL ? e->what : "-", e->bytes / MIB);
}

static void
fake_buffers(gpointer thread, const GsNames *names, GArray *ids)
{
	/* The fake's threads hold buffer n + 1 under name n. */
	for (guint i = 0; i < names->len; i++) {
		GsSpillBufId id = gs_names_data(names)[i] + 1;

		g_array_append_val(ids, id);
	}
}

static const GsRunHooks fake_hooks = {
	.tiers_of = fake_of,
	.granted = fake_granted,
	.released = fake_released,
	.wake = fake_wake,
	.log = fake_log,
	.buffers = fake_buffers,
};

/*
 * Two threads, T1 and T2, whose specs name reservations r and s, on a 100
 * MiB GPU, in a run whose buffers may move between tiers when @spills,
 * whose tasks take fair shares of the GPU when @fair, and whose blocking
 * reservations wait as @blocking says.
 */
static Fake *
fake_build(gboolean spills, gboolean fair, GsReservationBlocking blocking)
{
	Fake *f = g_new0(Fake, 1);

	f->w = gs_workload_new();
	f->w->gpu.capacity = 100 * MIB;
	f->w->policy.spill.enabled = spills;
	f->w->policy.admission = fair ? GS_ADMISSION_FAIR_SHARE : GS_ADMISSION_NONE;
	f->w->policy.reservations.blocking = blocking;
	f->mem = gs_memory_new(f->w);
	f->spec = gs_thread_spec_new("T");
	g_ptr_array_add(f->spec->reservations, g_strdup("r"));
	g_ptr_array_add(f->spec->reservations, g_strdup("s"));
	g_ptr_array_add(f->spec->streams, g_strdup("x"));
	g_ptr_array_add(f->spec->streams, g_strdup("y"));
	f->w->gpu.streams = 1;
	f->trace = g_string_new(NULL);
	gs_run_tiers_init(&f->tier_ops, f->w, f->mem, &fake_hooks, f);
	for (guint i = 0; i < 2; i++) {
		f->threads[i].name = i == 0 ? "T1" : "T2";
		gs_run_thread_tiers_init(&f->threads[i].res, &f->tier_ops, i + 1, f->threads[i].name,
					 f->spec);
	}
	return f;
}

/* Most tests: blocking requests wait for their whole size (SPEC). */
static Fake *
fake_over(gboolean spills, gboolean fair)
{
	return fake_build(spills, fair, GS_BLOCK_FOR_WHOLE);
}

static Fake *
fake_new(void)
{
	return fake_over(FALSE, FALSE);
}

static void
fake_free(Fake *f)
{
	for (guint i = 0; i < 2; i++)
		gs_run_thread_tiers_clear(&f->threads[i].res);
	gs_run_tiers_clear(&f->tier_ops);
	gs_memory_free(f->mem);
	gs_thread_spec_free(f->spec);
	gs_workload_free(f->w);
	g_string_free(f->trace, TRUE);
	g_free(f);
}

/* Thread @i reserves @mib MiB of the GPU as @name (0: r, 1: s), blocking or not. */
static GsReservationOutcome
reserve(Fake *f, guint i, guint name, gint64 mib, GsReserveMode mode)
{
	GsOp *op = &f->ops[f->n_ops++];

	ck_assert_uint_le(f->n_ops, G_N_ELEMENTS(f->ops));
	op->kind = GS_OP_RESERVE;
	op->reserve.res = name;
	op->reserve.size = mib * MIB;
	op->reserve.tier = GS_TIER_GPU;
	op->reserve.mode = mode;
	return gs_run_reserve(&f->tier_ops, &f->threads[i].res, &f->threads[i], op);
}

static void
expect(Fake *f, const char *trace)
{
	ck_assert_msg(strcmp(f->trace->str, trace) == 0, "\n got  %s\n want %s", f->trace->str,
		      trace);
	g_string_truncate(f->trace, 0);
}

/* A blocking request that does not fit waits in line, and is served when memory comes back. */
START_TEST(test_a_blocking_request_waits_in_line)
{
	Fake *f = fake_new();

	ck_assert_int_eq(reserve(f, 0, 0, 60, GS_RESERVE_BLOCK), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(reserve(f, 1, 0, 60, GS_RESERVE_BLOCK), GS_RESERVATION_WAIT);
	expect(f, "T1 reserves r granted 60MiB, T2 reserves r wait 60MiB");
	ck_assert_ptr_nonnull(f->threads[1].res.waiting);
	gs_run_reserve_retry(&f->tier_ops);
	expect(f, "");
	gs_run_release(&f->tier_ops, &f->threads[0].res, 0);
	gs_run_release(&f->tier_ops, &f->threads[0].res, 0); /* not held: nothing */
	gs_run_reserve_retry(&f->tier_ops);
	expect(f, "T1 releases r - 60MiB, gpu came free, T2 reserves r granted 60MiB, wake T2");
	ck_assert_ptr_null(f->threads[1].res.waiting);
	ck_assert(gs_run_reservation(&f->threads[1].res, 0)->held);
	ck_assert_uint_eq(gs_run_reservation(&f->threads[1].res, 0)->serial, 2);
	fake_free(f);
}
END_TEST

/* A name reserved again gives back its old reservation first; a thread's end gives back all. */
START_TEST(test_a_name_reserved_again_and_a_thread_that_ends)
{
	Fake *f = fake_new();

	reserve(f, 0, 0, 30, GS_RESERVE_BLOCK);
	reserve(f, 0, 1, 20, GS_RESERVE_BLOCK);
	reserve(f, 0, 0, 40, GS_RESERVE_BLOCK);
	expect(f, "T1 reserves r granted 30MiB, T1 reserves s granted 20MiB, "
		  "T1 releases r - 30MiB, gpu came free, T1 reserves r granted 40MiB");
	ck_assert_uint_eq(gs_run_reservation(&f->threads[0].res, 0)->serial, 3);
	gs_run_release_all(&f->tier_ops, &f->threads[0].res);
	expect(f, "T1 releases r - 40MiB, gpu came free, T1 releases s - 20MiB, gpu came free");
	fake_free(f);
}
END_TEST

/* Waiters are served in the order they came; one that left the line is not. */
START_TEST(test_first_come_first_served_and_leaving_the_line)
{
	Fake *f = fake_new();

	reserve(f, 0, 0, 80, GS_RESERVE_BLOCK);
	ck_assert_int_eq(reserve(f, 1, 0, 50, GS_RESERVE_BLOCK), GS_RESERVATION_WAIT);
	ck_assert_int_eq(reserve(f, 1, 1, 10, GS_RESERVE_BLOCK), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(reserve(f, 0, 1, 40, GS_RESERVE_OR_NULL), GS_RESERVATION_REFUSED);
	expect(f, "T1 reserves r granted 80MiB, T2 reserves r wait 50MiB, "
		  "T2 reserves s granted 10MiB, T1 reserves s refused 40MiB");
	gs_run_reserve_leave_line(&f->tier_ops, &f->threads[1].res, &f->threads[1]);
	gs_run_reserve_leave_line(&f->tier_ops, &f->threads[1].res, &f->threads[1]);
	ck_assert(g_queue_is_empty(&f->tier_ops.waiters));
	gs_run_release(&f->tier_ops, &f->threads[0].res, 0);
	gs_run_reserve_retry(&f->tier_ops);
	expect(f, "T1 releases r - 80MiB, gpu came free");
	fake_free(f);
}
END_TEST

/*
 * The ops as a driver hands them over: a reserve that waits or is too
 * large, a release by op, and an op that is not the tiers' does nothing.
 * An allocation's request takes the device of the reservation it names.
 */
START_TEST(test_the_ops_and_an_allocations_request)
{
	Fake *f = fake_new();
	GsOp release = {.kind = GS_OP_RELEASE, .res = 0}, sleep = {.kind = GS_OP_SLEEP};
	GsOp alloc = {.kind = GS_OP_ALLOC};
	GsEffect effect = {.alloc_kind = GS_KIND_GPU, .size = MIB, .op = &alloc};
	GsOp *big = &f->ops[f->n_ops++], *wait = &f->ops[f->n_ops++];
	GsMemRequest req;
	GsException thrown;

	big->kind = wait->kind = GS_OP_RESERVE;
	big->reserve.size = 200 * MIB;
	wait->reserve.size = 60 * MIB;
	big->reserve.tier = wait->reserve.tier = GS_TIER_GPU;
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, big, &thrown));
	ck_assert_int_eq(thrown, GS_EXC_RESERVATION_TOO_LARGE);
	ck_assert_int_eq(reserve(f, 1, 0, 60, GS_RESERVE_BLOCK), GS_RESERVATION_GRANTED);
	ck_assert(!gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, wait, &thrown)); /* waits */
	ck_assert_int_eq(thrown, GS_EXC_NONE);
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, &sleep, &thrown)); /* not the tiers' */
	ck_assert_int_eq(thrown, GS_EXC_NONE);
	expect(f, "T1 reserves r too_large 200MiB, T2 reserves r granted 60MiB, "
		  "T1 reserves r wait 60MiB");
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[1], 2, &release, &thrown));
	gs_run_reserve_retry(&f->tier_ops);
	expect(f, "T2 releases r - 60MiB, gpu came free, T1 reserves r granted 60MiB, wake T1");
	alloc.alloc.reservation = -1;
	alloc.alloc.device = 0;
	req = gs_run_request(&f->tier_ops, &f->threads[1], 2, &effect, NULL, 5);
	ck_assert_ptr_null(req.res);
	ck_assert_int_eq(req.size, MIB);
	ck_assert_int_eq(req.now, 5);
	alloc.alloc.reservation = 0;
	req = gs_run_request(&f->tier_ops, &f->threads[0], 1, &effect, NULL, 5);
	ck_assert_ptr_eq(req.res, gs_run_reservation(&f->threads[0].res, 0));
	ck_assert_uint_eq(req.device, req.res->device);
	fake_free(f);
}
END_TEST

/*
 * The gate's scopes: a thread enters once however deep its copies nest; a
 * copy that finds no room closes the gate (logged once); the gate opens
 * again only when nobody is left in a scope.
 */
START_TEST(test_the_gates_scopes)
{
	Fake *f = fake_new();
	GsRunThreadTiers *t1 = &f->threads[0].res, *t2 = &f->threads[1].res;

	f->w->policy.evac_gate = TRUE;
	ck_assert(!gs_run_gate_enter(&f->tier_ops, t1));
	ck_assert(!gs_run_gate_enter(&f->tier_ops, t1));
	ck_assert(!gs_run_gate_enter(&f->tier_ops, t2));
	ck_assert_uint_eq(f->tier_ops.gate_scopes, 2);
	gs_run_gate_close(&f->tier_ops, t1);
	gs_run_gate_close(&f->tier_ops, t1);
	gs_run_gate_fallback(&f->tier_ops, t1);
	ck_assert(!gs_run_gate_reopen(&f->tier_ops));
	ck_assert(gs_run_gate_leave(&f->tier_ops, t2));
	ck_assert(!gs_run_gate_leave(&f->tier_ops, t2));
	ck_assert(!gs_run_gate_reopen(&f->tier_ops));
	ck_assert(gs_run_gate_leave(&f->tier_ops, t1));
	ck_assert_uint_eq(f->tier_ops.gate_scopes, 0);
	ck_assert(gs_run_gate_reopen(&f->tier_ops));
	ck_assert(!gs_run_gate_reopen(&f->tier_ops));
	expect(f, "T1 gate close, T1 gate fallback, - gate open");
	f->w->policy.evac_gate = FALSE;
	ck_assert(!gs_run_gate_enter(&f->tier_ops, t1));
	gs_run_gate_close(&f->tier_ops, t1);
	expect(f, "");
	fake_free(f);
}
END_TEST

static gboolean
spillable(Fake *f, GsSpillBufId id)
{
	GsSpillBufView v;

	ck_assert(gs_spill_lookup(gs_memory_store(f->mem), id, &v));
	return v.spillable;
}

/*
 * A thread that ends leaves the line and gives back what it holds: its
 * reservations and, in a run that spills, its locks.
 */
START_TEST(test_a_thread_that_ends)
{
	Fake *f = fake_over(TRUE, FALSE);
	GsMemRequest req = {.kind = GS_KIND_GPU, .size = MIB};
	GsMemAlloc a = gs_memory_alloc(f->mem, &req);
	GsSpillBufId id = a.buf->id;
	GsSpillBufView v;

	ck_assert_int_eq(reserve(f, 0, 0, 60, GS_RESERVE_BLOCK), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(reserve(f, 1, 1, 10, GS_RESERVE_BLOCK), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(reserve(f, 1, 0, 50, GS_RESERVE_BLOCK), GS_RESERVATION_WAIT);
	gs_spill_use_begin(gs_memory_store(f->mem), &id, 1, GS_SPILL_SYNCHRONOUS, 0);
	g_array_append_val(f->threads[1].res.locked, id);
	g_string_truncate(f->trace, 0);
	gs_run_thread_tiers_end(&f->tier_ops, &f->threads[1].res, &f->threads[1]);
	ck_assert(g_queue_is_empty(&f->tier_ops.waiters));
	ck_assert(gs_spill_lookup(gs_memory_store(f->mem), id, &v));
	ck_assert_int_eq(v.locks, 0);
	expect(f, "T2 releases s - 10MiB, gpu came free");
	fake_free(f);
}
END_TEST

/*
 * The proactive downgrade's hysteresis, cuCascade's formula: on once the
 * reservation limit (90% of the GPU) less what is free reaches the trigger
 * (75%), on until it falls to the stop (65%), each turn logged.
 */
START_TEST(test_the_downgrades_turns)
{
	Fake *f = fake_over(TRUE, FALSE);
	GsMemRequest req = {.kind = GS_KIND_GPU, .size = 90 * MIB};
	GsMemAlloc a;
	gboolean on = FALSE;

	ck_assert(!gs_run_downgrade_on(&f->tier_ops, 0, &on));
	a = gs_memory_alloc(f->mem, &req);
	ck_assert_int_eq(a.outcome, GS_MEM_OK);
	ck_assert(gs_run_downgrade_on(&f->tier_ops, 0, &on) && on);
	ck_assert(gs_run_downgrade_on(&f->tier_ops, 0, &on) && on);
	expect(f, "gpu0 downgrade start at 90MiB");
	gs_memory_free_buffer(f->mem, a.buf, NULL);
	ck_assert(!gs_run_downgrade_on(&f->tier_ops, 0, &on) && !on);
	ck_assert(!gs_run_downgrade_on(&f->tier_ops, 0, &on));
	expect(f, "gpu0 downgrade stop at 0MiB");
	fake_free(f);
}
END_TEST

/*
 * Fair shares (Spark's execution pool, all or nothing): alone, a task may
 * take the whole GPU; with two, each is held to half, and one below a
 * quarter that asks for more than is free is refused. Host memory and pool
 * threads need no share; a task that ends gives its share back.
 */
START_TEST(test_fair_shares)
{
	Fake *f = fake_over(FALSE, TRUE);
	GsRunTask a = {.engine_id = 1}, b = {.engine_id = 2};

	ck_assert(gs_run_fair_share_take(&f->tier_ops, &a, GS_KIND_GPU, 80 * MIB));
	ck_assert(!gs_run_fair_share_take(&f->tier_ops, &b, GS_KIND_GPU, 30 * MIB));
	ck_assert(gs_run_fair_share_take(&f->tier_ops, &b, GS_KIND_HOST, 500 * MIB));
	ck_assert(gs_run_fair_share_take(&f->tier_ops, NULL, GS_KIND_GPU, 500 * MIB));
	gs_run_fair_share_give(&f->tier_ops, &a, GS_KIND_GPU, 40 * MIB);
	ck_assert(gs_run_fair_share_take(&f->tier_ops, &b, GS_KIND_GPU, 30 * MIB));
	ck_assert_int_eq(gs_execution_pool_get_task_bytes(f->tier_ops.fair, 2), 30 * MIB);
	gs_run_tiers_task_ends(&f->tier_ops, &a);
	ck_assert_int_eq(gs_execution_pool_get_task_bytes(f->tier_ops.fair, 1), 0);
	fake_free(f);
	f = fake_new(); /* no fair shares: everything is admitted */
	ck_assert_ptr_null(f->tier_ops.fair);
	ck_assert(gs_run_fair_share_take(&f->tier_ops, &a, GS_KIND_GPU, 500 * MIB));
	fake_free(f);
}
END_TEST

/*
 * Memory that came free: the thread that freed it keeps its state, every
 * other one inside an allocation of that kind may try again
 * (SparkResourceAdaptor's deallocation); a free by nobody of the run's
 * moves them all, and one of the other kind moves nobody.
 */
START_TEST(test_who_freed_keeps_its_state)
{
	static const struct {
		GsThreadId by;
		GsTier tier;
		GsThreadState first, second;
	} rows[] = {
		{1, GS_TIER_GPU, GS_THREAD_ALLOC, GS_THREAD_ALLOC_FREE},
		{GS_NO_THREAD, GS_TIER_GPU, GS_THREAD_ALLOC_FREE, GS_THREAD_ALLOC_FREE},
		{GS_NO_THREAD, GS_TIER_HOST, GS_THREAD_ALLOC, GS_THREAD_ALLOC},
		{GS_NO_THREAD, GS_TIER_DISK, GS_THREAD_ALLOC, GS_THREAD_ALLOC},
	};
	GsPolicy policy;
	GsEngineOpts opts;

	gs_policy_init(&policy);
	opts = gs_policy_engine_opts(&policy);
	for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
		GsEngine *engine = gs_engine_new(&opts);

		for (GsThreadId t = 1; t <= 2; t++) {
			ck_assert_int_eq(gs_engine_register_dedicated(engine, t, t, 0),
					 GS_ENGINE_ERROR_NONE);
			gs_engine_alloc_begin(engine, t, GS_KIND_GPU, TRUE, 1);
		}
		gs_run_memory_freed(engine, rows[i].by, rows[i].tier, 2);
		ck_assert_msg(gs_engine_thread_state(engine, 1) == rows[i].first, "row %u", i);
		ck_assert_msg(gs_engine_thread_state(engine, 2) == rows[i].second, "row %u", i);
		gs_engine_free(engine);
	}
}
END_TEST

/*
 * The allocation failure callback, one row per configuration: 95 of the
 * 100 MiB GPU are held and 10 MiB are asked for. Each call allocates (and
 * frees) inside the failed allocation and asks again while its count is
 * below the retries; one whose own allocation fails asks no more; off,
 * nothing runs. Nothing that was taken comes free, so the engine is told
 * nothing: thread 2, inside an allocation too, stays there.
 */
START_TEST(test_the_failure_callback)
{
	static const struct {
		gboolean enabled;
		gint64 allocate_mib;
		guint retries;
		guint64 calls, allocs;
	} rows[] = {
		{TRUE, 1, 3, 4, 4},
		{TRUE, 1, 0, 1, 1},
		{TRUE, 10, 3, 1, 0},
		{FALSE, 1, 3, 0, 0},
	};
	GsPolicy policy;
	GsEngineOpts opts;

	gs_policy_init(&policy);
	opts = gs_policy_engine_opts(&policy);
	for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
		Fake *f = fake_new();
		GsEngine *engine = gs_engine_new(&opts);
		g_autoptr(GsResult) res = gs_result_new();
		GsMemRequest held = {.kind = GS_KIND_GPU, .size = 95 * MIB};
		GsMemRequest req = {.kind = GS_KIND_GPU, .size = 10 * MIB};
		GsMemAlloc a;

		f->w->policy.failure_callback.enabled = rows[i].enabled;
		f->w->policy.failure_callback.allocate = rows[i].allocate_mib * MIB;
		f->w->policy.failure_callback.retries = rows[i].retries;
		for (GsThreadId t = 1; t <= 2; t++) {
			gs_engine_register_dedicated(engine, t, t, 0);
			gs_engine_alloc_begin(engine, t, GS_KIND_GPU, TRUE, 1);
		}
		ck_assert_int_eq(gs_memory_alloc(f->mem, &held).outcome, GS_MEM_OK);
		a = gs_memory_alloc(f->mem, &req);
		ck_assert_int_eq(a.outcome, GS_MEM_NO_ROOM);
		gs_run_failure_callback(&f->tier_ops, &req, &a, res);
		ck_assert_int_eq(a.outcome, GS_MEM_NO_ROOM);
		ck_assert_msg(res->totals.failure_callbacks == rows[i].calls, "row %u", i);
		ck_assert_msg(res->totals.failure_callback_allocs == rows[i].allocs, "row %u", i);
		ck_assert_int_eq(gs_memory_used(f->mem, GS_TIER_GPU), 95 * MIB);
		ck_assert_int_eq(gs_engine_thread_state(engine, 1), GS_THREAD_ALLOC);
		ck_assert_int_eq(gs_engine_thread_state(engine, 2), GS_THREAD_ALLOC);
		gs_engine_free(engine);
		fake_free(f);
	}
}
END_TEST

/*
 * A stream pool of one: T1 borrows it, T2 waits under BLOCK, T1 borrows
 * another under GROW, and each return serves the line first; a name
 * borrowed again gives its stream back first, and a thread that ends
 * returns what it holds.
 */
START_TEST(test_a_stream_pool)
{
	Fake *f = fake_new();
	GsResult res = {0};
	GsOp block = {.kind = GS_OP_BORROW_STREAM, .borrow = {.stream = 0}};
	GsOp grow = {.kind = GS_OP_BORROW_STREAM, .borrow = {.stream = 1, .grow = TRUE}};
	GsOp give_x = {.kind = GS_OP_RETURN_STREAM, .stream = 0};
	GsException thrown;

	gs_run_tiers_report_to(&f->tier_ops, &res);
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, &block, &thrown));
	ck_assert(!gs_run_tier_op(&f->tier_ops, &f->threads[1], 2, &block, &thrown));
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, &grow, &thrown));
	expect(f, "T1 borrow x idle 0, T2 wait x idle 0, T1 grow y idle 0");
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, &give_x, &thrown));
	expect(f, "T1 return x idle 1, T2 borrow x idle 0, wake T2");
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[1], 2, &block, &thrown));
	expect(f, "T2 return x idle 1, T2 borrow x idle 0");
	gs_run_thread_tiers_end(&f->tier_ops, &f->threads[0].res, &f->threads[0]);
	gs_run_thread_tiers_end(&f->tier_ops, &f->threads[1].res, &f->threads[1]);
	expect(f, "T1 return y idle 1, T2 return x idle 2");
	ck_assert_uint_eq(res.totals.streams_grown, 1);
	fake_free(f);
}
END_TEST

/* A victim whose copy fell back goes from the GPU straight to disk only when host_full says disk. */
START_TEST(test_a_fallback_to_disk)
{
	Fake *f = fake_new();
	GsMemBuf on_gpu = {.tier = GS_TIER_GPU}, on_host = {.tier = GS_TIER_HOST};

	f->w->policy.spill.host_full = GS_HOST_FULL_DISK;
	ck_assert(gs_run_falls_to_disk(&f->tier_ops, &on_gpu));
	ck_assert(!gs_run_falls_to_disk(&f->tier_ops, &on_host));
	f->w->policy.spill.host_full = GS_HOST_FULL_FAIL;
	ck_assert(!gs_run_falls_to_disk(&f->tier_ops, &on_gpu));
	fake_free(f);
}
END_TEST

/* A retry block's input buffers are spillable while it runs, and only in a run that spills. */
START_TEST(test_a_retry_blocks_inputs)
{
	Fake *f = fake_over(_i == 1, FALSE);
	GsMemRequest req = {.kind = GS_KIND_GPU, .size = MIB};
	GsOp retry = {.kind = GS_OP_RETRY};

	for (GsSpillBufId id = 1; id <= 2; id++) {
		GsMemAlloc a = gs_memory_alloc(f->mem, &req);

		ck_assert_int_eq(a.outcome, GS_MEM_OK);
		ck_assert_uint_eq(a.buf->id, id);
	}
	gs_names_append(&retry.retry.input, 0); /* the fake's threads hold buffer 1 under name 0 */
	gs_run_block(&f->tier_ops, &f->threads[0], &retry, TRUE);
	if (_i == 1) {
		ck_assert(spillable(f, 1) && !spillable(f, 2));
		ck_assert_uint_eq(f->threads[0].res.inputs->len, 2); /* the block's mark, then 1 */
	} else {
		ck_assert_ptr_null(gs_memory_store(f->mem));
		ck_assert_uint_eq(f->threads[0].res.inputs->len, 0);
	}
	gs_run_block(&f->tier_ops, &f->threads[0], &retry, FALSE);
	if (_i == 1)
		ck_assert(!spillable(f, 1) && !spillable(f, 2));
	ck_assert_uint_eq(f->threads[0].res.inputs->len, 0);
	gs_names_clear(&retry.retry.input);
	fake_free(f);
}
END_TEST

/*
 * On cuCascade's channel a release wakes one waiter: T1's release serves T2
 * ("notified"), and a request in line behind it stays there although it
 * would fit, until the next release; the shutdown answers it with nothing.
 */
START_TEST(test_the_channel_wakes_one_waiter)
{
	Fake *f = fake_build(FALSE, FALSE, GS_BLOCK_ON_CHANNEL);
	GsOp shutdown = {.kind = GS_OP_SHUTDOWN_RESERVATIONS};
	GsException thrown;
	Thread third = {.name = "T3"};

	gs_run_thread_tiers_init(&third.res, &f->tier_ops, 3, third.name, f->spec);
	ck_assert_int_eq(reserve(f, 0, 0, 80, GS_RESERVE_BLOCK), GS_RESERVATION_GRANTED);
	ck_assert_int_eq(reserve(f, 1, 0, 40, GS_RESERVE_BLOCK), GS_RESERVATION_WAIT);
	f->ops[f->n_ops] = f->ops[f->n_ops - 1];
	ck_assert_int_eq(gs_run_reserve(&f->tier_ops, &third.res, &third, &f->ops[f->n_ops++]),
			 GS_RESERVATION_WAIT);
	g_string_truncate(f->trace, 0);
	gs_run_release(&f->tier_ops, &f->threads[0].res, 0);
	gs_run_reserve_retry(&f->tier_ops);
	expect(f, "T1 releases r - 80MiB, gpu came free, T2 reserves r notified 40MiB, wake T2");
	gs_run_reserve_retry(&f->tier_ops); /* nothing woke it: T3 stays in line */
	expect(f, "");
	ck_assert(gs_run_tier_op(&f->tier_ops, &f->threads[0], 1, &shutdown, &thrown));
	expect(f, "T3 reserves r shutdown 40MiB, wake T3");
	gs_run_thread_tiers_clear(&third.res);
	fake_free(f);
}
END_TEST

/*
 * Beside a 4 KiB pinned pool and 4 KiB of non-pinned memory, 5 KiB never
 * fits: alloc throws IllegalArgumentException, tryAlloc gets no buffer.
 * Row 2: 4 KiB fits the pinned pool, so neither refuses it at once.
 */
START_TEST(test_a_host_size_never_fits)
{
	static const GsException thrown_by[] = {GS_EXC_ILLEGAL_ARGUMENT, GS_EXC_NONE};
	g_autoptr(GsWorkload) w = gs_workload_new();
	g_autoptr(GsMemory) mem = NULL;
	GsOp op = {.kind = GS_OP_ALLOC};
	GsEffect effect = {.kind = GS_EFFECT_ALLOC, .op = &op, .alloc_kind = GS_KIND_HOST};
	GsMemRequest req = {.kind = GS_KIND_HOST, .size = _i == 2 ? 4096 : 5120,
			    .prefer_pinned = TRUE};
	GsRunTiers run = {.w = w};
	GsException thrown = GS_EXC_CUDF_EXCEPTION;

	w->host = (GsHostMemory){.capacity = 4096, .block_size = 1024, .pool_blocks = 4,
				 .initial_pools = 1, .reservation_limit = 0.9, .pinned = 4096};
	mem = gs_memory_new(w);
	run.mem = mem;
	op.alloc.kind = GS_KIND_HOST;
	op.alloc.blocking = _i != 1;
	op.alloc.prefer_pinned = TRUE;
	ck_assert_int_eq(gs_run_host_never_fits(&run, &effect, &req, &thrown), _i != 2);
	if (_i != 2)
		ck_assert_int_eq(thrown, thrown_by[_i]);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("run-tier-ops");
	TCase *tc = tcase_create("reserve");

	tcase_add_test(tc, test_a_blocking_request_waits_in_line);
	tcase_add_test(tc, test_a_name_reserved_again_and_a_thread_that_ends);
	tcase_add_test(tc, test_first_come_first_served_and_leaving_the_line);
	tcase_add_test(tc, test_the_ops_and_an_allocations_request);
	tcase_add_test(tc, test_the_gates_scopes);
	tcase_add_test(tc, test_a_thread_that_ends);
	tcase_add_test(tc, test_the_downgrades_turns);
	tcase_add_test(tc, test_fair_shares);
	tcase_add_test(tc, test_the_channel_wakes_one_waiter);
	tcase_add_test(tc, test_a_fallback_to_disk);
	tcase_add_loop_test(tc, test_a_host_size_never_fits, 0, 3);
	tcase_add_test(tc, test_who_freed_keeps_its_state);
	tcase_add_test(tc, test_the_failure_callback);
	tcase_add_test(tc, test_a_stream_pool);
	tcase_add_loop_test(tc, test_a_retry_blocks_inputs, 0, 2);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
