/*
 * gpusim fuzzing: a main() for a harness without libFuzzer. Runs each file
 * named on the command line through LLVMFuzzerTestOneInput() once, in order;
 * make check replays fuzz/regressions/ and the seeds with it.
 */
#include "config.h"

#include <stdio.h>

#include "harness.h"

int
main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		g_autofree char *contents = NULL;
		gsize len;
		g_autoptr(GError) error = NULL;

		if (!g_file_get_contents(argv[i], &contents, &len, &error)) {
			fprintf(stderr, "%s\n", error->message);
			return 2;
		}
		LLVMFuzzerTestOneInput((const uint8_t *) contents, len);
	}
	printf("replayed %d input(s)\n", argc - 1);
	return 0;
}
