/*
 * gpusim: `gpusim calibrate --backend=host`: measures the host backend as it
 * really moves bytes, through its own table of operations (the calls the
 * real-thread driver makes), so that every cost a run pays is in the figures:
 * the pattern written at allocation in a run that spills, the copy and the
 * check of every byte that lands, the files of the private directory.
 *
 * Fresh memory (links.fresh_memory), pages the process never touched, costs
 * most on a loaded machine: allocations of sizes doubling from 1 MiB, each
 * timed beyond a small one, write at one rate from the size at which the C
 * library stops reusing memory freed before (glibc: 32 MiB) and far faster
 * below it. A link is fitted from two sizes of move below that: the median
 * time of many small moves is its latency, and the median time of 31
 * larger ones (a millisecond each), less that latency, gives its bandwidth;
 * the median of that many, so that a machine busy with other work moves the
 * figures as little as it can (of 7, the bandwidth moved by half between
 * calibrations a minute apart on an idle virtual machine). The
 * scenario format has one bandwidth per link, so the two directions' times
 * are averaged (a spill out and its unspill back cross the link once each);
 * both are in comments. An allocation's latency is timed with its free: the
 * median of many allocations of the small size, pattern written. The lanes
 * are how many threads' byte work runs at full rate at once: several threads
 * allocating and copying at once against one alone, on this machine as it is
 * (other work included). A thread's wake-up has no key of its own in the
 * model, so it is not measured. Everything takes a few seconds.
 */
#include "config.h"

#include <string.h>
#include <time.h>

#include "backend.h"
#include "run/samples.h"

#define SMALL_BYTES ((gint64) 4096)
#define LARGE_BYTES ((gint64) 32 << 20)
#define LINK_BYTES ((gint64) 8 << 20)
#define SMALL_SAMPLES 201
#define LARGE_SAMPLES 31
#define FRESH_FIRST_BYTES ((gint64) 1 << 20)
#define FRESH_SIZES 8 /* to 128 MiB */
#define FRESH_SURE 3  /* the largest sizes: 32 MiB and more, fresh whatever the C library reuses */
#define FRESH_SAMPLES 5
#define LANE_ROUNDS 2 /* each thread's, at once; one thread alone does them all */
#define LANE_SAMPLES 5
#define LANE_THREADS_MAX 16

typedef struct {
	const GsBackendOps *ops;
	gpointer state;
} Device;

/* Nanoseconds: a small move takes less than g_get_monotonic_time()'s microsecond. */
static gint64
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double
seconds_since(gint64 t0)
{
	return (double) (now_ns() - t0) / 1e9;
}

/* Median seconds of an allocation of @bytes (pattern written) and of its free. */
static gboolean
alloc_latency(Device *d, double *alloc_s, double *free_s, GError **error)
{
	double a[SMALL_SAMPLES], f[SMALL_SAMPLES];

	for (guint i = 0; i < SMALL_SAMPLES; i++) {
		guint64 handle;
		gint64 t0 = now_ns(), t1;

		if (!gs_backend_alloc(d->ops, d->state, NULL, GS_TIER_GPU, 0, SMALL_BYTES, &handle)) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no memory for a %" G_GINT64_FORMAT "-byte allocation",
				    SMALL_BYTES);
			return FALSE;
		}
		t1 = now_ns();
		gs_backend_free(d->ops, d->state, NULL, GS_TIER_GPU, handle);
		a[i] = (double) (t1 - t0) / 1e9;
		f[i] = seconds_since(t1);
	}
	*alloc_s = gs_samples_median(a, SMALL_SAMPLES);
	*free_s = gs_samples_median(f, SMALL_SAMPLES);
	return TRUE;
}

/* Median seconds of @n allocations of @bytes, pattern written, each freed, after one more. */
static gboolean
alloc_time(Device *d, gint64 bytes, double *out_s, GError **error)
{
	double a[FRESH_SAMPLES + 1];

	for (guint i = 0; i <= FRESH_SAMPLES; i++) {
		guint64 handle;
		gint64 t0 = now_ns();

		if (!gs_backend_alloc(d->ops, d->state, NULL, GS_TIER_GPU, 0, bytes, &handle)) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no memory for a %" G_GINT64_FORMAT "-byte allocation", bytes);
			return FALSE;
		}
		a[i] = seconds_since(t0);
		gs_backend_free(d->ops, d->state, NULL, GS_TIER_GPU, handle);
	}
	/* The first one left out: what it freed is what the C library may reuse. */
	*out_s = gs_samples_median(a + 1, FRESH_SAMPLES);
	return TRUE;
}

/*
 * An allocation's first write: sizes doubling from FRESH_FIRST_BYTES, each
 * timed beyond a small allocation. The largest FRESH_SURE are fresh pages
 * whatever the C library reuses (glibc maps anything from 32 MiB anew);
 * alloc_fresh_from is the smallest size from which every larger one writes
 * at no more than twice their median rate (below it, memory freed before is
 * reused, its pages already touched), and alloc_bandwidth the median rate
 * of the sizes from there.
 */
static gboolean
fit_first_write(Device *d, double small_s, gint64 *fresh_from, double *bandwidth,
		GError **error)
{
	double rate[FRESH_SIZES], sorted[FRESH_SIZES];
	guint from = FRESH_SIZES - FRESH_SURE;

	for (guint i = 0; i < FRESH_SIZES; i++) {
		double t;

		if (!alloc_time(d, FRESH_FIRST_BYTES << i, &t, error))
			return FALSE;
		rate[i] = (double) (FRESH_FIRST_BYTES << i) / MAX(t - small_s, 1e-9);
	}
	memcpy(sorted, rate + from, FRESH_SURE * sizeof(double));
	*bandwidth = gs_samples_median(sorted, FRESH_SURE);
	while (from > 0 && rate[from - 1] <= 2 * *bandwidth)
		from--;
	memcpy(sorted, rate + from, (FRESH_SIZES - from) * sizeof(double));
	*bandwidth = gs_samples_median(sorted, FRESH_SIZES - from);
	*fresh_from = FRESH_FIRST_BYTES << from;
	return TRUE;
}

/*
 * The byte work a spilling run does most: a large allocation, its pattern
 * written, copied to the host and checked, both freed. Returns FALSE (and
 * sets @error, if not yet set) when the device fails.
 */
static gboolean
byte_work(Device *d, GError **error)
{
	guint64 handle, moved;
	gboolean intact = TRUE;

	if (!gs_backend_alloc(d->ops, d->state, NULL, GS_TIER_GPU, 0, LARGE_BYTES, &handle)) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no memory for a %" G_GINT64_FORMAT "-byte buffer", LARGE_BYTES);
		return FALSE;
	}
	if (!gs_backend_move(d->ops, d->state, NULL, handle, GS_TIER_GPU, GS_TIER_HOST, 0, &moved,
			     &intact, error)) {
		gs_backend_free(d->ops, d->state, NULL, GS_TIER_GPU, handle);
		return FALSE;
	}
	gs_backend_free(d->ops, d->state, NULL, GS_TIER_GPU, handle);
	gs_backend_free(d->ops, d->state, NULL, GS_TIER_HOST, moved);
	if (!intact)
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "a calibration copy came back changed");
	return intact;
}

typedef struct {
	Device *d;
	guint rounds;
	gint64 ns;      /* out: its time for its rounds */
	GError *error;  /* out: set if the device failed */
} Lane;

static gpointer
lane_run(gpointer data)
{
	Lane *lane = data;
	gint64 t0 = now_ns();

	for (guint i = 0; i < lane->rounds && byte_work(lane->d, &lane->error); i++)
		;
	lane->ns = now_ns() - t0;
	return NULL;
}

/*
 * How many threads' byte work runs at full rate at once: @n_threads threads
 * do LANE_ROUNDS rounds each at once, and the rounds per second they made
 * together are divided by one thread's doing as many rounds alone, so that
 * both last about as long on a machine whose other work comes and goes (the
 * median of LANE_SAMPLES tries of each). The lanes are that ratio, at least 1.
 */
static gboolean
fit_lanes(Device *d, guint n_threads, double *ratio, GError **error)
{
	double alone[LANE_SAMPLES], together[LANE_SAMPLES];
	Lane lane[LANE_THREADS_MAX];
	GThread *thread[LANE_THREADS_MAX];

	for (guint k = 0; k < LANE_SAMPLES; k++) {
		gint64 t0;

		lane[0] = (Lane){.d = d, .rounds = n_threads * LANE_ROUNDS};
		lane_run(&lane[0]);
		if (lane[0].error != NULL) {
			g_propagate_error(error, lane[0].error);
			return FALSE;
		}
		alone[k] = (double) lane[0].rounds / ((double) lane[0].ns / 1e9);
		t0 = now_ns();
		for (guint i = 0; i < n_threads; i++) {
			lane[i] = (Lane){.d = d, .rounds = LANE_ROUNDS};
			thread[i] = g_thread_new("gpusim-lane", lane_run, &lane[i]);
		}
		for (guint i = 0; i < n_threads; i++)
			g_thread_join(thread[i]);
		together[k] = (double) (n_threads * LANE_ROUNDS) / seconds_since(t0);
		for (guint i = 0; i < n_threads; i++)
			if (lane[i].error != NULL) {
				g_propagate_error(error, lane[i].error);
				for (guint j = i + 1; j < n_threads; j++)
					g_clear_error(&lane[j].error);
				return FALSE;
			}
	}
	*ratio = gs_samples_median(together, LANE_SAMPLES) / gs_samples_median(alone, LANE_SAMPLES);
	return TRUE;
}

/* Moves *@handle from @from to @to and back, timing each way; the copies replace it. */
static gboolean
there_and_back(Device *d, guint64 *handle, GsTier from, GsTier to, double *out_s, double *back_s,
	       GError **error)
{
	guint64 there, back;
	gboolean intact = TRUE;
	gint64 t0 = now_ns();

	if (!gs_backend_move(d->ops, d->state, NULL, *handle, from, to, 0, &there, &intact, error))
		return FALSE;
	*out_s = seconds_since(t0);
	gs_backend_free(d->ops, d->state, NULL, from, *handle);
	*handle = there;
	t0 = now_ns();
	if (!gs_backend_move(d->ops, d->state, NULL, there, to, from, 0, &back, &intact, error))
		return FALSE;
	*back_s = seconds_since(t0);
	gs_backend_free(d->ops, d->state, NULL, to, there);
	*handle = back;
	if (!intact)
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "a calibration copy came back changed");
	return intact;
}

/* Median seconds of @n moves of @bytes each way between @from and @to. */
static gboolean
move_times(Device *d, GsTier from, GsTier to, gint64 bytes, guint n, double *out_s,
	   double *back_s, GError **error)
{
	g_autofree double *outs = g_new(double, n);
	g_autofree double *backs = g_new(double, n);
	guint64 handle;
	gboolean ok = TRUE;

	if (!gs_backend_alloc(d->ops, d->state, NULL, from, 0, bytes, &handle)) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
			    "no memory for a %" G_GINT64_FORMAT "-byte buffer", bytes);
		return FALSE;
	}
	for (guint i = 0; ok && i < n; i++)
		ok = there_and_back(d, &handle, from, to, &outs[i], &backs[i], error);
	gs_backend_free(d->ops, d->state, NULL, from, handle);
	if (ok) {
		*out_s = gs_samples_median(outs, n);
		*back_s = gs_samples_median(backs, n);
	}
	return ok;
}

/* A link's latency and bandwidth, both directions averaged, and each direction's rate. */
typedef struct {
	double latency_s, bandwidth, out_bandwidth, back_bandwidth;
} LinkFit;

/* What a move of @bytes landing in @to spends on fresh memory (links.fresh_memory). */
static double
fresh_seconds(GsTier to, gint64 bytes, double fresh_bandwidth, gint64 fresh_from)
{
	return to != GS_TIER_DISK && bytes >= fresh_from ? (double) bytes / fresh_bandwidth : 0;
}

/*
 * The link from moves of LINK_BYTES, memory the C library reuses, so that
 * the fresh memory a larger move lands in is links.fresh_memory's alone;
 * should those moves land in fresh memory, its time is taken out.
 */
static gboolean
fit_link(Device *d, GsTier from, GsTier to, double fresh_bandwidth, gint64 fresh_from,
	 LinkFit *fit, GError **error)
{
	double small_out, small_back, large_out, large_back;

	if (!move_times(d, from, to, SMALL_BYTES, SMALL_SAMPLES, &small_out, &small_back, error) ||
	    !move_times(d, from, to, LINK_BYTES, LARGE_SAMPLES, &large_out, &large_back, error))
		return FALSE;
	large_out -= fresh_seconds(to, LINK_BYTES, fresh_bandwidth, fresh_from);
	large_back -= fresh_seconds(from, LINK_BYTES, fresh_bandwidth, fresh_from);
	fit->latency_s = (small_out + small_back) / 2;
	/* The large moves' time beyond the latency; at least a microsecond each. */
	fit->out_bandwidth = (double) LINK_BYTES / MAX(large_out - small_out, 1e-6);
	fit->back_bandwidth = (double) LINK_BYTES / MAX(large_back - small_back, 1e-6);
	fit->bandwidth = 2.0 * (double) LINK_BYTES /
			 MAX(large_out + large_back - small_out - small_back, 2e-6);
	return TRUE;
}

/* What calibrate measures, in seconds and bytes per second. */
typedef struct {
	double alloc_s, free_s; /* a small allocation (pattern written) and its free */
	double first_write_bandwidth; /* an allocation of fresh memory */
	gint64 fresh_from;
	double lane_ratio; /* the lanes, before they are made at least 1 */
	guint lane_threads;
	LinkFit gpu_host, host_disk;
} Fit;

static void
append_yaml(GString *yaml, const char *disk_path, const Fit *f)
{
	g_string_append_printf(yaml,
		"# gpusim calibrate --backend=host on %s, %u processors\n"
		"# allocation %.1f us, free %.1f us (median of %d of %" G_GINT64_FORMAT
		" bytes, pattern written as a run that spills writes it)\n"
		"# fresh memory %.2f GB/s from %" G_GINT64_FORMAT " MiB (allocations, pattern"
		" written, beyond a small one's time; median of %d of each size from 1 to %d MiB;"
		" smaller ones reuse memory freed before)\n"
		"# gpu->host %.2f GB/s, host->gpu %.2f GB/s (copy and pattern check beyond fresh"
		" memory; median of %d moves of %" G_GINT64_FORMAT " MiB), latency %.1f us (median of %d moves of %"
		G_GINT64_FORMAT " bytes)\n"
		"# host->disk %.2f GB/s (written into %s), disk->host %.2f GB/s (read back and"
		" checked), latency %.1f us\n"
		"# lanes %.2f: %u threads allocating and copying %" G_GINT64_FORMAT
		" MiB at once against one alone doing as many (median of %d), at least 1\n"
		"# each link's bandwidth is the two directions' mean\n"
		"links:\n"
		"  gpu_host: {bandwidth: %.3fGB/s, latency: %.0fns}\n"
		"  host_disk: {bandwidth: %.3fGB/s, latency: %.0fns}\n"
		"  alloc_latency: %.0fns\n"
		"  fresh_memory: {bandwidth: %.3fGB/s, from: %" G_GINT64_FORMAT "MiB}\n"
		"  lanes: %.2f\n",
		g_get_host_name(), g_get_num_processors(), f->alloc_s * 1e6, f->free_s * 1e6,
		SMALL_SAMPLES, SMALL_BYTES, f->first_write_bandwidth / 1e9, f->fresh_from >> 20,
		FRESH_SAMPLES, (int) ((FRESH_FIRST_BYTES << (FRESH_SIZES - 1)) >> 20),
		f->gpu_host.out_bandwidth / 1e9,
		f->gpu_host.back_bandwidth / 1e9, LARGE_SAMPLES, LINK_BYTES >> 20,
		f->gpu_host.latency_s * 1e6, SMALL_SAMPLES, SMALL_BYTES,
		f->host_disk.out_bandwidth / 1e9, disk_path, f->host_disk.back_bandwidth / 1e9,
		f->host_disk.latency_s * 1e6, f->lane_ratio, f->lane_threads, LARGE_BYTES >> 20,
		LANE_SAMPLES, f->gpu_host.bandwidth / 1e9, MAX(f->gpu_host.latency_s * 1e9, 1.0),
		f->host_disk.bandwidth / 1e9, MAX(f->host_disk.latency_s * 1e9, 1.0),
		MAX(f->alloc_s * 1e9, 1.0), f->first_write_bandwidth / 1e9, f->fresh_from >> 20,
		MAX(f->lane_ratio, 1.0));
}

gboolean
gs_host_calibrate(const char *disk_path, GString *yaml, GError **error)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	Device d = {&gs_backend_host, NULL};
	Fit f = {0};
	gboolean ok;

	g_free(w->disk.path);
	w->disk.path = g_strdup(disk_path);
	w->policy.spill.enabled = TRUE; /* buffers written at allocation, as a spilling run's */
	d.state = gs_backend_open(d.ops, w, error);
	if (d.state == NULL)
		return FALSE;
	f.lane_threads = MIN(4 * g_get_num_processors(), LANE_THREADS_MAX);
	ok = alloc_latency(&d, &f.alloc_s, &f.free_s, error) &&
	     fit_first_write(&d, f.alloc_s, &f.fresh_from, &f.first_write_bandwidth, error) &&
	     fit_link(&d, GS_TIER_GPU, GS_TIER_HOST, f.first_write_bandwidth, f.fresh_from,
		      &f.gpu_host, error) &&
	     fit_link(&d, GS_TIER_HOST, GS_TIER_DISK, f.first_write_bandwidth, f.fresh_from,
		      &f.host_disk, error) &&
	     fit_lanes(&d, f.lane_threads, &f.lane_ratio, error);
	gs_backend_close(d.ops, d.state);
	if (ok)
		append_yaml(yaml, disk_path, &f);
	return ok;
}
