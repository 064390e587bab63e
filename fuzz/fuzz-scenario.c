/*
 * gpusim fuzzing: the scenario loader, then a bounded simulation of what it
 * accepts. The input is a scenario file; a rejected one must say
 * "file:line:column: what is wrong".
 */
#include "config.h"

#include "harness.h"
#include "scenario/loader.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w =
		gs_loader_load_text("fuzz.yaml", (const char *) data, size, NULL, NULL, &error);

	if (w == NULL)
		fuzz_check_message("scenario error", error->message);
	else
		fuzz_simulate(w);
	return 0;
}
