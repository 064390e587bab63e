/*
 * gpusim: the drivers a run can take, one table: the simulator (`sim`) and
 * real threads on each backend of this build (`host`, and `cuda` where the
 * CUDA Toolkit was found). `gpusim run --backend`, `calibrate --backend`,
 * `compare` and `sweep` find them here, and every driver runs a workload
 * the same way: gs_driver_run() with the one options struct (run/options.h).
 */
#ifndef GPUSIM_CLI_DRIVERS_H
#define GPUSIM_CLI_DRIVERS_H

#include <gpusim/gpusim.h>

#include "backends/backend.h"
#include "run/options.h"

G_BEGIN_DECLS

typedef struct {
	const char *name;
	const GsBackendOps *backend;  /* NULL: the simulator, which has no device */
	gboolean batches;             /* compare and sweep may run it many times at once */
} GsDriver;

/**
 * The driver called @name (NULL: the simulator); NULL with
 * GS_BACKEND_ERROR_UNKNOWN (no such driver) or _UNAVAILABLE (not in this
 * build) otherwise.
 */
const GsDriver *gs_driver_lookup(const char *name, GError **error);

/** The names of the drivers built in, comma-separated (for messages). */
const char *gs_driver_names(void);

/**
 * Runs @w on @driver. NULL with @error set when a real backend cannot open
 * or its device failed (GS_BACKEND_ERROR_*); the simulator always gives a
 * result. What a backend counted is in *@stats when not NULL (zeros for the
 * simulator).
 */
GsResult *gs_driver_run(const GsDriver *driver, const GsWorkload *w, const GsRunOptions *options,
			GsBackendStats *stats, GError **error);

G_END_DECLS

#endif /* GPUSIM_CLI_DRIVERS_H */
