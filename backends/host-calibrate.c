/*
 * gpusim: `gpusim calibrate --backend=host`: measures the host backend as it
 * really moves bytes, through its own table of operations (the calls the
 * real-thread driver makes), so that every cost a run pays is in the figures:
 * the pattern written at allocation in a run that spills, the copy and the
 * check of every byte that lands, the files of the private directory.
 *
 * A link is fitted from two sizes of move: the median time of many small
 * moves is its latency, and the median time of a few large ones, less that
 * latency, gives its bandwidth; the median, so that a machine busy with other
 * work moves the figures as little as it can. The scenario format has one
 * bandwidth per link, so the two directions' times are averaged (a spill out
 * and its unspill back cross the link once each); both are in comments. An
 * allocation is timed with its free: the median of many allocations of the
 * small size, pattern written. A thread's wake-up has no key of its own in
 * the model, so it is not measured. Everything takes well under a second on
 * an idle machine.
 */
#include "config.h"

#include <time.h>

#include "backend.h"
#include "run/samples.h"

#define SMALL_BYTES ((gint64) 4096)
#define LARGE_BYTES ((gint64) 32 << 20)
#define SMALL_SAMPLES 201
#define LARGE_SAMPLES 7

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

static gboolean
fit_link(Device *d, GsTier from, GsTier to, LinkFit *fit, GError **error)
{
	double small_out, small_back, large_out, large_back;

	if (!move_times(d, from, to, SMALL_BYTES, SMALL_SAMPLES, &small_out, &small_back, error) ||
	    !move_times(d, from, to, LARGE_BYTES, LARGE_SAMPLES, &large_out, &large_back, error))
		return FALSE;
	fit->latency_s = (small_out + small_back) / 2;
	/* The large moves' time beyond the latency; at least a microsecond each. */
	fit->out_bandwidth = (double) LARGE_BYTES / MAX(large_out - small_out, 1e-6);
	fit->back_bandwidth = (double) LARGE_BYTES / MAX(large_back - small_back, 1e-6);
	fit->bandwidth = 2.0 * (double) LARGE_BYTES /
			 MAX(large_out + large_back - small_out - small_back, 2e-6);
	return TRUE;
}

static void
append_yaml(GString *yaml, const char *disk_path, double alloc_s, double free_s,
	    const LinkFit *gpu_host, const LinkFit *host_disk)
{
	g_string_append_printf(yaml,
		"# gpusim calibrate --backend=host on %s, %u processors\n"
		"# allocation %.1f us, free %.1f us (median of %d of %" G_GINT64_FORMAT
		" bytes, pattern written as a run that spills writes it)\n"
		"# gpu->host %.2f GB/s, host->gpu %.2f GB/s (copy and pattern check; median of %d"
		" moves of %" G_GINT64_FORMAT " MiB), latency %.1f us (median of %d moves of %"
		G_GINT64_FORMAT " bytes)\n"
		"# host->disk %.2f GB/s (written into %s), disk->host %.2f GB/s (read back and"
		" checked), latency %.1f us\n"
		"# each link's bandwidth is the two directions' mean\n"
		"links:\n"
		"  gpu_host: {bandwidth: %.3fGB/s, latency: %.0fns}\n"
		"  host_disk: {bandwidth: %.3fGB/s, latency: %.0fns}\n"
		"  alloc_latency: %.0fns\n",
		g_get_host_name(), g_get_num_processors(), alloc_s * 1e6, free_s * 1e6,
		SMALL_SAMPLES, SMALL_BYTES, gpu_host->out_bandwidth / 1e9,
		gpu_host->back_bandwidth / 1e9, LARGE_SAMPLES, LARGE_BYTES >> 20,
		gpu_host->latency_s * 1e6, SMALL_SAMPLES, SMALL_BYTES,
		host_disk->out_bandwidth / 1e9, disk_path, host_disk->back_bandwidth / 1e9,
		host_disk->latency_s * 1e6, gpu_host->bandwidth / 1e9,
		MAX(gpu_host->latency_s * 1e9, 1.0), host_disk->bandwidth / 1e9,
		MAX(host_disk->latency_s * 1e9, 1.0), MAX(alloc_s * 1e9, 1.0));
}

gboolean
gs_host_calibrate(const char *disk_path, GString *yaml, GError **error)
{
	g_autoptr(GsWorkload) w = gs_workload_new();
	Device d = {&gs_backend_host, NULL};
	double alloc_s = 0, free_s = 0;
	LinkFit gpu_host = {0}, host_disk = {0};
	gboolean ok;

	g_free(w->disk.path);
	w->disk.path = g_strdup(disk_path);
	w->policy.spill.enabled = TRUE; /* buffers written at allocation, as a spilling run's */
	d.state = gs_backend_open(d.ops, w, error);
	if (d.state == NULL)
		return FALSE;
	ok = alloc_latency(&d, &alloc_s, &free_s, error) &&
	     fit_link(&d, GS_TIER_GPU, GS_TIER_HOST, &gpu_host, error) &&
	     fit_link(&d, GS_TIER_HOST, GS_TIER_DISK, &host_disk, error);
	gs_backend_close(d.ops, d.state);
	if (ok)
		append_yaml(yaml, disk_path, alloc_s, free_s, &gpu_host, &host_disk);
	return ok;
}
