/*
 * gpusim: the drivers' table (see drivers.h). The CUDA row is the only one
 * behind HAVE_CUDA.
 */
#include "config.h"

#include <string.h>

#include "backends/threads/threads.h"
#include "cli/drivers.h"
#include "sim/sim.h"

static const GsDriver drivers[] = {
	{.name = "sim", .batches = TRUE},
	{.name = "host", .backend = &gs_backend_host},
#ifdef HAVE_CUDA
	{.name = "cuda", .backend = &gs_backend_cuda},
#endif
};

const char *
gs_driver_names(void)
{
	static char *names;

	if (g_once_init_enter(&names)) {
		GString *s = g_string_new(NULL);

		for (guint i = 0; i < G_N_ELEMENTS(drivers); i++)
			g_string_append_printf(s, "%s%s", i > 0 ? ", " : "", drivers[i].name);
		g_once_init_leave(&names, g_string_free(s, FALSE));
	}
	return names;
}

const GsDriver *
gs_driver_lookup(const char *name, GError **error)
{
	if (name == NULL)
		return &drivers[0];
	for (guint i = 0; i < G_N_ELEMENTS(drivers); i++) {
		if (strcmp(drivers[i].name, name) == 0)
			return &drivers[i];
	}
	if (strcmp(name, "cuda") == 0) {
		g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNAVAILABLE,
			    "the cuda backend is not available: this build of gpusim %s was made "
			    "without the CUDA Toolkit", gs_version());
		return NULL;
	}
	g_set_error(error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_UNKNOWN,
		    "unknown backend '%s' (%s)", name, gs_driver_names());
	return NULL;
}

GsResult *
gs_driver_run(const GsDriver *driver, const GsWorkload *w, const GsRunOptions *options,
	      GsBackendStats *stats, GError **error)
{
	GsThreadsStats counted = {0};
	GsResult *result;

	if (driver->backend == NULL) {
		if (stats != NULL)
			memset(stats, 0, sizeof *stats);
		return gs_sim_run(w, options);
	}
	result = gs_threads_run(w, driver->backend, options, &counted, error);
	g_debug("%s backend: %" G_GUINT64_FORMAT " allocations without the engine lock, %"
		G_GUINT64_FORMAT " through it", driver->name, counted.fast_allocs,
		counted.locked_allocs);
	if (stats != NULL)
		*stats = counted.backend;
	return result;
}
