/*
 * Unit tests of run/reserve.h through a fake driver over the real tier
 * model: grants, refusals and waits, a name reserved again, the line of
 * waiting threads served first come first served, a thread that leaves the
 * line, and every reservation given back at a thread's end. The fake driver
 * writes down the log and every call back; each test says what that trace
 * must be.
 */
#include "config.h"

#include <string.h>

#include "run/reserve.h"
#include "testlib.h"

#define MIB ((gint64) 1 << 20)

typedef struct {
	GsRunReservations res;
	const char *name;
} Thread;

typedef struct {
	GsRunReserve reserve;
	GsWorkload *w;
	GsMemory *mem;
	GsThreadSpec *spec;
	Thread threads[2];
	GsOp ops[8];       /* the reserve ops made, kept as a spec keeps them */
	guint n_ops;
	GString *trace;
} Fake;

static void
note(Fake *f, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
note(Fake *f, const char *format, ...)
{
	va_list args;

	if (f->trace->len > 0)
		g_string_append(f->trace, ", ");
	va_start(args, format);
	g_string_append_vprintf(f->trace, format, args);
	va_end(args);
}

static GsRunReservations *
fake_of(gpointer thread)
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
	ck_assert(e->kind == GS_LOG_RESERVE || e->kind == GS_LOG_RELEASE);
	note(data, "%s %s %s %s %" G_GINT64_FORMAT "MiB", e->thread,
	     e->kind == GS_LOG_RESERVE ? "reserves" : "releases", e->buf,
	     e->what != NULL ? e->what : "-", e->bytes / MIB);
}

static const GsRunReserveHooks fake_hooks = {
	.of = fake_of,
	.granted = fake_granted,
	.released = fake_released,
	.wake = fake_wake,
	.log = fake_log,
};

/* Two threads, T1 and T2, whose specs name reservations r and s, on a 100 MiB GPU. */
static Fake *
fake_new(void)
{
	Fake *f = g_new0(Fake, 1);

	f->w = gs_workload_new();
	f->w->gpu.capacity = 100 * MIB;
	f->mem = gs_memory_new(f->w);
	f->spec = gs_thread_spec_new("T");
	g_ptr_array_add(f->spec->reservations, g_strdup("r"));
	g_ptr_array_add(f->spec->reservations, g_strdup("s"));
	f->trace = g_string_new(NULL);
	gs_run_reserve_init(&f->reserve, f->mem, &fake_hooks, f);
	for (guint i = 0; i < 2; i++) {
		f->threads[i].name = i == 0 ? "T1" : "T2";
		gs_run_reservations_init(&f->threads[i].res, f->threads[i].name, f->spec);
	}
	return f;
}

static void
fake_free(Fake *f)
{
	for (guint i = 0; i < 2; i++)
		gs_run_reservations_clear(&f->threads[i].res);
	gs_run_reserve_clear(&f->reserve);
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
	return gs_run_reserve(&f->reserve, &f->threads[i].res, &f->threads[i], op);
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
	gs_run_reserve_retry(&f->reserve);
	expect(f, "");
	gs_run_release(&f->reserve, &f->threads[0].res, 0);
	gs_run_release(&f->reserve, &f->threads[0].res, 0); /* not held: nothing */
	gs_run_reserve_retry(&f->reserve);
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
	gs_run_release_all(&f->reserve, &f->threads[0].res);
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
	gs_run_reserve_leave_line(&f->reserve, &f->threads[1].res, &f->threads[1]);
	gs_run_reserve_leave_line(&f->reserve, &f->threads[1].res, &f->threads[1]);
	ck_assert(g_queue_is_empty(&f->reserve.waiters));
	gs_run_release(&f->reserve, &f->threads[0].res, 0);
	gs_run_reserve_retry(&f->reserve);
	expect(f, "T1 releases r - 80MiB, gpu came free");
	fake_free(f);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("run-reserve");
	TCase *tc = tcase_create("reserve");

	tcase_add_test(tc, test_a_blocking_request_waits_in_line);
	tcase_add_test(tc, test_a_name_reserved_again_and_a_thread_that_ends);
	tcase_add_test(tc, test_first_come_first_served_and_leaving_the_line);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
