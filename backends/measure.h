/*
 * gpusim: what `calibrate` measures through a backend's own table of
 * operations (the calls the real-thread driver makes), so that the figures
 * hold every cost a run pays: an allocation as the backend makes it, and a
 * move with its copy, the checks of the bytes that land and the files of the
 * private directory. Both backends fit their links and lanes here
 * (host-calibrate.c, cuda/calibrate.c).
 *
 * A link is fitted from two sizes of move: the median time of many small
 * moves is its latency, and the median time of GS_MEASURE_LARGE_SAMPLES
 * larger ones (a millisecond each on the host), less that latency, gives its
 * bandwidth; the median of that many, so that a machine busy with other work
 * moves the figures as little as it can (of 7, the bandwidth moved by half
 * between calibrations a minute apart on an idle virtual machine). The
 * scenario format has one bandwidth per link, so the two directions' times
 * are averaged (a spill out and its unspill back cross the link once each).
 * The lanes are how many threads' byte work runs at full rate at once:
 * several threads allocating and copying at once against one alone, on the
 * machine as it is (other work included).
 */
#ifndef GPUSIM_MEASURE_H
#define GPUSIM_MEASURE_H

#include "backend.h"

G_BEGIN_DECLS

#define GS_MEASURE_SMALL_BYTES ((gint64) 4096)
#define GS_MEASURE_LINK_BYTES ((gint64) 8 << 20)
#define GS_MEASURE_LANE_BYTES ((gint64) 32 << 20)
#define GS_MEASURE_SMALL_SAMPLES 201
#define GS_MEASURE_LARGE_SAMPLES 31
#define GS_MEASURE_LANE_SAMPLES 5
#define GS_MEASURE_LANE_THREADS_MAX 16

/* An open backend, measured through its operations. */
typedef struct {
	const GsBackendOps *ops;
	gpointer state;
} GsMeasured;

/* A link's latency and bandwidth, both directions averaged, and each direction's rate. */
typedef struct {
	double latency_s, bandwidth, out_bandwidth, back_bandwidth;
} GsLinkFit;

/** CLOCK_MONOTONIC in nanoseconds: a small move takes less than a microsecond. */
gint64 gs_measure_now_ns(void);

/** Seconds since @t0 (gs_measure_now_ns()). */
double gs_measure_seconds_since(gint64 t0);

/** Median seconds of a GPU allocation of GS_MEASURE_SMALL_BYTES, and of its free. */
gboolean gs_measure_alloc_latency(const GsMeasured *d, double *alloc_s, double *free_s,
				  GError **error);

/**
 * The link between @from and @to, from moves of GS_MEASURE_LINK_BYTES. A
 * move landing in memory of GS_MEASURE_LINK_BYTES or more at
 * @fresh_from and above is taken to write fresh memory at @fresh_bandwidth,
 * whose time is left out (links.fresh_memory's own); @fresh_from 0: none.
 */
gboolean gs_measure_link(const GsMeasured *d, GsTier from, GsTier to, double fresh_bandwidth,
			 gint64 fresh_from, GsLinkFit *fit, GError **error);

/**
 * *@n_threads threads (4 per processor, at most GS_MEASURE_LANE_THREADS_MAX)
 * each allocating GS_MEASURE_LANE_BYTES on the GPU, moving it to the host
 * and freeing both, at once: *@ratio is the rounds per second they make
 * together over one thread's alone (the median of GS_MEASURE_LANE_SAMPLES
 * tries of each).
 */
gboolean gs_measure_lanes(const GsMeasured *d, guint *n_threads, double *ratio, GError **error);

G_END_DECLS

#endif /* GPUSIM_MEASURE_H */
