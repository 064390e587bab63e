/*
 * gpusim: the `calibrate` command: measure a real device and write the
 * `memory:` / `links:` keys a scenario can `include:` (SPEC §2).
 *
 * Only a backend with a device can be measured (host, cuda). Exit statuses: 2 for
 * usage (an unknown backend, one with nothing to measure, an unwritable
 * output), 3 when the backend is not in this build or there is no device,
 * 4 when the device fails while it is measured.
 */
#include "config.h"

#include <stdio.h>

#include "backends/pattern.h"
#include "cli/commands.h"
#include "cli/drivers.h"
#include "report/output.h"

int
gs_cmd_calibrate(int argc, char **argv)
{
	g_autofree char *backend = NULL, *out = NULL, *disk = NULL;
	GOptionEntry entries[] = {
		{"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "The device to measure (host or cuda)",
		 "NAME"},
		{"out", 0, 0, G_OPTION_ARG_FILENAME, &out, "Write the YAML here (default: stdout)",
		 "DEVICE.yaml"},
		{"disk", 0, 0, G_OPTION_ARG_FILENAME, &disk,
		 "Directory whose disk is measured (default /var/tmp)", "DIR"},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) yaml = g_string_new(NULL);
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	GsOutput *result;
	const GsDriver *driver;

	g_option_context_set_summary(context, "Measure a real device and write the memory: and "
					      "links: values a scenario can include.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim calibrate: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (argc != 1 || backend == NULL) {
		fprintf(stderr, "gpusim calibrate: give --backend=host or cuda and no other argument\n");
		return GS_EXIT_USAGE;
	}
	/* Refused before the device is measured, which takes a while. */
	result = gs_output_set_add(set, out != NULL ? out : "-", &error);
	if (result == NULL) {
		fprintf(stderr, "gpusim calibrate: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	gs_private_dirs_guard(); /* before CUDA starts its threads: see pattern.h */
	driver = gs_driver_lookup(backend, &error);
	if (driver != NULL && driver->backend == NULL)
		g_set_error(&error, GS_BACKEND_ERROR, GS_BACKEND_ERROR_INVALID,
			    "the %s backend has no device to calibrate (calibrate --backend=host or cuda)",
			    driver->name);
	if (error != NULL ||
	    !gs_backend_calibrate(driver->backend, disk != NULL ? disk : "/var/tmp", yaml, &error)) {
		fprintf(stderr, "gpusim calibrate: %s\n", error->message);
		return gs_cmd_backend_status(error);
	}
	if (!gs_output_write(result, yaml->str, &error) || !gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim calibrate: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	return GS_EXIT_OK;
}
