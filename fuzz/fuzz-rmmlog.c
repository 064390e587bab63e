/*
 * gpusim fuzzing: import-rmm-log's reader, then the loader on what it writes.
 * The input is an RMM log. Every problem it reports must be positioned, and
 * the scenario it writes must load as it is: an import that writes a scenario
 * gpusim then rejects is a bug in the importer.
 */
#include "config.h"

#include <string.h>

#include "harness.h"
#include "scenario/loader.h"
#include "scenario/rmmlog.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsRmmImport) import =
		gs_rmm_import_text("fuzz.csv", (const char *) data, size, NULL, &error);
	g_autoptr(GsWorkload) w = NULL;

	if (import == NULL) {
		fuzz_check_message("import error", error->message);
		return 0;
	}
	for (guint i = 0; i < import->problems->len; i++)
		fuzz_check_message("import problem", import->problems->pdata[i]);
	if (import->yaml == NULL)
		return 0;
	w = gs_loader_load_text("import.yaml", import->yaml, strlen(import->yaml), NULL, NULL,
				&error);
	if (w == NULL)
		fuzz_fail("the imported scenario does not load", error->message);
	return 0;
}
