/*
 * gpusim: the command-line program.
 *
 * Parses the command line with GOption (one option table per surface) and
 * dispatches to the commands. Exit status (SPEC §2): 0 success, 1 a failed
 * expectation, 2 bad usage or input, 3 backend unavailable, 4 internal error.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpusim/gpusim.h>

enum {
	EXIT_USAGE = 2,
};

static gboolean show_version;

static const GOptionEntry main_entries[] = {
	{"version", 'V', 0, G_OPTION_ARG_NONE, &show_version, "Print the version and exit", NULL},
	G_OPTION_ENTRY_NULL,
};

static const char summary[] =
	"gpusim decides how many tasks share one GPU's memory: who allocates, who\n"
	"waits, who rolls back and retries, who splits its input, what is spilled.";

static const char description[] =
	"This version provides the policy engine, libgpusim (the Spark-RAPIDS OOM\n"
	"state machine: thread states, priorities, deadlock busting, injection and\n"
	"metrics), for programs to embed: see `pkg-config --cflags --libs gpusim`.\n"
	"It has no commands yet; the simulator brings `run`, `validate`, `compare`\n"
	"and `sweep`.\n"
	"\n"
	"Exit status: 0 success; 2 bad usage.";

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = g_option_context_new("COMMAND [ARGS…]");
	g_autoptr(GError) error = NULL;

	g_option_context_set_summary(context, summary);
	g_option_context_set_description(context, description);
	g_option_context_add_main_entries(context, main_entries, NULL);
	/* Options after the command word belong to the command. */
	g_option_context_set_strict_posix(context, TRUE);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim: %s\nTry 'gpusim --help'.\n", error->message);
		return EXIT_USAGE;
	}
	if (show_version) {
		printf("gpusim %s\n", gs_version());
		return EXIT_SUCCESS;
	}
	if (argc < 2) {
		fprintf(stderr, "gpusim: no command given\nTry 'gpusim --help'.\n");
		return EXIT_USAGE;
	}
	fprintf(stderr, "gpusim: unknown command '%s'\nTry 'gpusim --help'.\n", argv[1]);
	return EXIT_USAGE;
}
