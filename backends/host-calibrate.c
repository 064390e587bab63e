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
 * below it. The links are fitted from moves below that size (measure.h says
 * how), and both directions' rates are in comments. An allocation's latency
 * is timed with its free: the median of many allocations of the small size,
 * pattern written. The lanes are measured on this machine as it is. A
 * thread's wake-up has no key of its own in the model, so it is not
 * measured. Everything takes a few seconds.
 */
#include "config.h"

#include <string.h>

#include "measure.h"
#include "run/samples.h"

#define FRESH_FIRST_BYTES ((gint64) 1 << 20)
#define FRESH_SIZES 8 /* to 128 MiB */
#define FRESH_SURE 3  /* the largest sizes: 32 MiB and more, fresh whatever the C library reuses */
#define FRESH_SAMPLES 5

/* Median seconds of @n allocations of @bytes, pattern written, each freed, after one more. */
static gboolean
alloc_time(const GsMeasured *d, gint64 bytes, double *out_s, GError **error)
{
	double a[FRESH_SAMPLES + 1];

	for (guint i = 0; i <= FRESH_SAMPLES; i++) {
		guint64 handle;
		gint64 t0 = gs_measure_now_ns();

		if (!gs_backend_alloc(d->ops, d->state, NULL, GS_TIER_GPU, 0, bytes, &handle)) {
			g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_FAILED,
				    "no memory for a %" G_GINT64_FORMAT "-byte allocation", bytes);
			return FALSE;
		}
		a[i] = gs_measure_seconds_since(t0);
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
fit_first_write(const GsMeasured *d, double small_s, gint64 *fresh_from, double *bandwidth,
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

/* What calibrate measures, in seconds and bytes per second. */
typedef struct {
	double alloc_s, free_s; /* a small allocation (pattern written) and its free */
	double first_write_bandwidth; /* an allocation of fresh memory */
	gint64 fresh_from;
	double lane_ratio; /* the lanes, before they are made at least 1 */
	guint lane_threads;
	GsLinkFit gpu_host, host_disk;
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
		GS_MEASURE_SMALL_SAMPLES, GS_MEASURE_SMALL_BYTES, f->first_write_bandwidth / 1e9,
		f->fresh_from >> 20, FRESH_SAMPLES,
		(int) ((FRESH_FIRST_BYTES << (FRESH_SIZES - 1)) >> 20),
		f->gpu_host.out_bandwidth / 1e9, f->gpu_host.back_bandwidth / 1e9,
		GS_MEASURE_LARGE_SAMPLES, GS_MEASURE_LINK_BYTES >> 20, f->gpu_host.latency_s * 1e6,
		GS_MEASURE_SMALL_SAMPLES, GS_MEASURE_SMALL_BYTES, f->host_disk.out_bandwidth / 1e9,
		disk_path, f->host_disk.back_bandwidth / 1e9, f->host_disk.latency_s * 1e6,
		f->lane_ratio, f->lane_threads, GS_MEASURE_LANE_BYTES >> 20, GS_MEASURE_LANE_SAMPLES,
		f->gpu_host.bandwidth / 1e9, MAX(f->gpu_host.latency_s * 1e9, 1.0),
		f->host_disk.bandwidth / 1e9, MAX(f->host_disk.latency_s * 1e9, 1.0),
		MAX(f->alloc_s * 1e9, 1.0), f->first_write_bandwidth / 1e9, f->fresh_from >> 20,
		MAX(f->lane_ratio, 1.0));
}

gboolean
gs_host_calibrate(const char *disk_path, GString *yaml, GError **error)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	GsMeasured d = {&gs_backend_host, NULL};
	Fit f = {0};
	gboolean ok;

	g_free(w->disk.path);
	w->disk.path = g_strdup(disk_path);
	w->policy.spill.enabled = TRUE; /* buffers written at allocation, as a spilling run's */
	d.state = gs_backend_open(d.ops, w, error);
	if (d.state == NULL)
		return FALSE;
	ok = gs_measure_alloc_latency(&d, &f.alloc_s, &f.free_s, error) &&
	     fit_first_write(&d, f.alloc_s, &f.fresh_from, &f.first_write_bandwidth, error) &&
	     gs_measure_link(&d, GS_TIER_GPU, GS_TIER_HOST, f.first_write_bandwidth, f.fresh_from,
			     &f.gpu_host, error) &&
	     gs_measure_link(&d, GS_TIER_HOST, GS_TIER_DISK, f.first_write_bandwidth, f.fresh_from,
			     &f.host_disk, error) &&
	     gs_measure_lanes(&d, &f.lane_threads, &f.lane_ratio, error);
	gs_backend_close(d.ops, d.state);
	if (ok)
		append_yaml(yaml, disk_path, &f);
	return ok;
}
