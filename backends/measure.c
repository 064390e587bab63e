/*
 * gpusim: a backend measured through its own operations (measure.h).
 */
#include "config.h"

#include <time.h>

#include "measure.h"
#include "run/samples.h"

#define LANE_ROUNDS 2 /* each thread's, at once; one thread alone does them all */

/* Nanoseconds: a small move takes less than g_get_monotonic_time()'s microsecond. */
gint64
gs_measure_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double
gs_measure_seconds_since(gint64 t0)
{
	return (double) (gs_measure_now_ns() - t0) / 1e9;
}

gboolean
gs_measure_alloc_latency(const GsMeasured *d, double *alloc_s, double *free_s, GError **error)
{
	double a[GS_MEASURE_SMALL_SAMPLES], f[GS_MEASURE_SMALL_SAMPLES];
	gpointer thread = gs_backend_thread_begin(d->ops, d->state);

	for (guint i = 0; i < GS_MEASURE_SMALL_SAMPLES; i++) {
		guint64 handle;
		gint64 t0 = gs_measure_now_ns(), t1;

		if (!gs_backend_alloc(d->ops, d->state, thread, GS_TIER_GPU, 0, GS_MEASURE_SMALL_BYTES,
				      &handle)) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no memory for a %" G_GINT64_FORMAT "-byte allocation",
				    GS_MEASURE_SMALL_BYTES);
			gs_backend_thread_end(d->ops, d->state, thread);
			return FALSE;
		}
		t1 = gs_measure_now_ns();
		gs_backend_free(d->ops, d->state, thread, GS_TIER_GPU, handle);
		a[i] = (double) (t1 - t0) / 1e9;
		f[i] = gs_measure_seconds_since(t1);
	}
	gs_backend_thread_end(d->ops, d->state, thread);
	*alloc_s = gs_samples_median(a, GS_MEASURE_SMALL_SAMPLES);
	*free_s = gs_samples_median(f, GS_MEASURE_SMALL_SAMPLES);
	return TRUE;
}

/*
 * The byte work a spilling run does most: a large allocation, its pattern
 * written, copied to the host and checked, both freed. Returns FALSE (and
 * sets @error, if not yet set) when the device fails.
 */
static gboolean
byte_work(const GsMeasured *d, gpointer thread, GError **error)
{
	guint64 handle, moved;
	gboolean intact = TRUE;

	if (!gs_backend_alloc(d->ops, d->state, thread, GS_TIER_GPU, 0, GS_MEASURE_LANE_BYTES,
			      &handle)) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no memory for a %" G_GINT64_FORMAT "-byte buffer",
			    GS_MEASURE_LANE_BYTES);
		return FALSE;
	}
	if (!gs_backend_move(d->ops, d->state, thread, handle, GS_TIER_GPU, GS_TIER_HOST, 0, &moved,
			     &intact, error)) {
		gs_backend_free(d->ops, d->state, thread, GS_TIER_GPU, handle);
		return FALSE;
	}
	gs_backend_free(d->ops, d->state, thread, GS_TIER_GPU, handle);
	gs_backend_free(d->ops, d->state, thread, GS_TIER_HOST, moved);
	if (!intact)
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "a calibration copy came back changed");
	return intact;
}

typedef struct {
	const GsMeasured *d;
	guint rounds;
	gint64 ns;      /* out: its time for its rounds */
	GError *error;  /* out: set if the device failed */
} Lane;

static gpointer
lane_run(gpointer data)
{
	Lane *lane = data;
	gpointer thread = gs_backend_thread_begin(lane->d->ops, lane->d->state);
	gint64 t0 = gs_measure_now_ns();

	for (guint i = 0; i < lane->rounds && byte_work(lane->d, thread, &lane->error); i++)
		;
	lane->ns = gs_measure_now_ns() - t0;
	gs_backend_thread_end(lane->d->ops, lane->d->state, thread);
	return NULL;
}

/*
 * How many threads' byte work runs at full rate at once: n_threads threads
 * do LANE_ROUNDS rounds each at once, and the rounds per second they made
 * together are divided by one thread's doing as many rounds alone, so that
 * both last about as long on a machine whose other work comes and goes (the
 * median of GS_MEASURE_LANE_SAMPLES tries of each).
 */
gboolean
gs_measure_lanes(const GsMeasured *d, guint *lane_threads, double *ratio, GError **error)
{
	double alone[GS_MEASURE_LANE_SAMPLES], together[GS_MEASURE_LANE_SAMPLES];
	Lane lane[GS_MEASURE_LANE_THREADS_MAX];
	GThread *thread[GS_MEASURE_LANE_THREADS_MAX];
	guint n_threads = MIN(4 * g_get_num_processors(), GS_MEASURE_LANE_THREADS_MAX);

	*lane_threads = n_threads;
	for (guint k = 0; k < GS_MEASURE_LANE_SAMPLES; k++) {
		gint64 t0;

		lane[0] = (Lane){.d = d, .rounds = n_threads * LANE_ROUNDS};
		lane_run(&lane[0]);
		if (lane[0].error != NULL) {
			g_propagate_error(error, lane[0].error);
			return FALSE;
		}
		alone[k] = (double) lane[0].rounds / ((double) lane[0].ns / 1e9);
		t0 = gs_measure_now_ns();
		for (guint i = 0; i < n_threads; i++) {
			lane[i] = (Lane){.d = d, .rounds = LANE_ROUNDS};
			thread[i] = g_thread_new("gpusim-lane", lane_run, &lane[i]);
		}
		for (guint i = 0; i < n_threads; i++)
			g_thread_join(thread[i]);
		together[k] = (double) (n_threads * LANE_ROUNDS) / gs_measure_seconds_since(t0);
		for (guint i = 0; i < n_threads; i++)
			if (lane[i].error != NULL) {
				g_propagate_error(error, lane[i].error);
				for (guint j = i + 1; j < n_threads; j++)
					g_clear_error(&lane[j].error);
				return FALSE;
			}
	}
	*ratio = gs_samples_median(together, GS_MEASURE_LANE_SAMPLES) /
		 gs_samples_median(alone, GS_MEASURE_LANE_SAMPLES);
	return TRUE;
}

/* Moves *@handle from @from to @to and back, timing each way; the copies replace it. */
static gboolean
there_and_back(const GsMeasured *d, gpointer thread, guint64 *handle, GsTier from, GsTier to,
	       double *out_s, double *back_s, GError **error)
{
	guint64 there, back;
	gboolean intact = TRUE;
	gint64 t0 = gs_measure_now_ns();

	if (!gs_backend_move(d->ops, d->state, thread, *handle, from, to, 0, &there, &intact, error))
		return FALSE;
	*out_s = gs_measure_seconds_since(t0);
	gs_backend_free(d->ops, d->state, thread, from, *handle);
	*handle = there;
	t0 = gs_measure_now_ns();
	if (!gs_backend_move(d->ops, d->state, thread, there, to, from, 0, &back, &intact, error))
		return FALSE;
	*back_s = gs_measure_seconds_since(t0);
	gs_backend_free(d->ops, d->state, thread, to, there);
	*handle = back;
	if (!intact)
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "a calibration copy came back changed");
	return intact;
}

/* Median seconds of @n moves of @bytes each way between @from and @to. */
static gboolean
move_times(const GsMeasured *d, GsTier from, GsTier to, gint64 bytes, guint n, double *out_s,
	   double *back_s, GError **error)
{
	g_autofree double *outs = g_new(double, n);
	g_autofree double *backs = g_new(double, n);
	gpointer thread = gs_backend_thread_begin(d->ops, d->state);
	guint64 handle = 0;
	gboolean ok = gs_backend_alloc(d->ops, d->state, thread, from, 0, bytes, &handle);

	if (!ok)
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no memory for a %" G_GINT64_FORMAT "-byte buffer", bytes);
	for (guint i = 0; ok && i < n; i++)
		ok = there_and_back(d, thread, &handle, from, to, &outs[i], &backs[i], error);
	if (handle != 0)
		gs_backend_free(d->ops, d->state, thread, from, handle);
	gs_backend_thread_end(d->ops, d->state, thread);
	if (ok) {
		*out_s = gs_samples_median(outs, n);
		*back_s = gs_samples_median(backs, n);
	}
	return ok;
}

/* What a move of @bytes landing in @to spends on fresh memory (links.fresh_memory). */
static double
fresh_seconds(GsTier to, gint64 bytes, double fresh_bandwidth, gint64 fresh_from)
{
	return to != GS_TIER_DISK && fresh_from > 0 && bytes >= fresh_from
		       ? (double) bytes / fresh_bandwidth
		       : 0;
}

/*
 * On the host, moves of GS_MEASURE_LINK_BYTES land in memory the C library
 * reuses, so that the fresh memory a larger move lands in is
 * links.fresh_memory's alone; should they land in fresh memory, its time is
 * taken out.
 */
gboolean
gs_measure_link(const GsMeasured *d, GsTier from, GsTier to, double fresh_bandwidth,
		gint64 fresh_from, GsLinkFit *fit, GError **error)
{
	double small_out, small_back, large_out, large_back;

	if (!move_times(d, from, to, GS_MEASURE_SMALL_BYTES, GS_MEASURE_SMALL_SAMPLES, &small_out,
			&small_back, error) ||
	    !move_times(d, from, to, GS_MEASURE_LINK_BYTES, GS_MEASURE_LARGE_SAMPLES, &large_out,
			&large_back, error))
		return FALSE;
	large_out -= fresh_seconds(to, GS_MEASURE_LINK_BYTES, fresh_bandwidth, fresh_from);
	large_back -= fresh_seconds(from, GS_MEASURE_LINK_BYTES, fresh_bandwidth, fresh_from);
	fit->latency_s = (small_out + small_back) / 2;
	/* The large moves' time beyond the latency; at least a microsecond each. */
	fit->out_bandwidth = (double) GS_MEASURE_LINK_BYTES / MAX(large_out - small_out, 1e-6);
	fit->back_bandwidth = (double) GS_MEASURE_LINK_BYTES / MAX(large_back - small_back, 1e-6);
	fit->bandwidth = 2.0 * (double) GS_MEASURE_LINK_BYTES /
			 MAX(large_out + large_back - small_out - small_back, 2e-6);
	return TRUE;
}
