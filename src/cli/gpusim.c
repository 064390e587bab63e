/*
 * gpusim: the command-line program.
 *
 * Parses the command line with GOption (one option table per surface) and
 * dispatches to the commands. Exit status (SPEC §2): 0 success, 1 a failed
 * expectation, 2 bad usage or input, 3 backend unavailable, 4 internal error.
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpusim/gpusim.h>

#include "cli/commands.h"
#include "scenario/loader.h"

static gboolean show_version;

static const GOptionEntry main_entries[] = {
	{"version", 'V', 0, G_OPTION_ARG_NONE, &show_version, "Print the version and exit", NULL},
	G_OPTION_ENTRY_NULL,
};

static const char summary[] =
	"gpusim decides how many tasks share one GPU's memory: who allocates, who\n"
	"waits, who rolls back and retries, who splits its input, what is spilled.";

static const char description_intro[] =
	"The policy engine, libgpusim (the Spark-RAPIDS OOM state machine: thread\n"
	"states, priorities, deadlock busting, injection and metrics), is also there\n"
	"for programs to embed: see `pkg-config --cflags --libs gpusim`.\n";

static const char description_outro[] =
	"\n"
	"Run 'gpusim COMMAND --help' for a command's options.\n"
	"\n"
	"Exit status: 0 ran and every expectation held; 1 an expectation failed;\n"
	"2 bad usage or an invalid scenario; 3 the backend is unavailable; 4 internal error.";

/* ---- validate ---- */

/* The file, then each of its variants: the errors of the first that has any are printed. */
static gboolean
validate_file(const char *path)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsWorkload) w = gs_loader_load(path, NULL, NULL, &error);

	if (w == NULL) {
		fprintf(stderr, "%s\n", error->message);
		return FALSE;
	}
	for (guint i = 0; i < w->variant_names->len; i++) {
		const char *variant = w->variant_names->pdata[i];
		g_autoptr(GsWorkload) v = gs_loader_load(path, variant, NULL, &error);

		if (v == NULL) {
			gs_loader_error_in_variant(error, variant);
			fprintf(stderr, "%s\n", error->message);
			return FALSE;
		}
	}
	if (w->generate.enabled)
		printf("%s: ok (%u tasks and %u generated, %u pool threads, %u variants)\n", path,
		       w->tasks->len, w->generate.tasks, w->pool_threads->len, w->variant_names->len);
	else
		printf("%s: ok (%u tasks, %u pool threads, %u variants)\n", path, w->tasks->len,
		       w->pool_threads->len, w->variant_names->len);
	return TRUE;
}

static int
cmd_validate(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml…");
	g_autoptr(GError) error = NULL;
	gboolean all_ok = TRUE, list_keys = FALSE, list_all_keys = FALSE;
	const GOptionEntry entries[] = {
		{"list-keys", 0, 0, G_OPTION_ARG_NONE, &list_keys,
		 "List the keys --set takes, each with the words it takes (after a tab), and exit",
		 NULL},
		{"list-all-keys", 0, 0, G_OPTION_ARG_NONE, &list_all_keys,
		 "List every key a scenario may hold, in sequences (tasks[].id) and ops (alloc.size) "
		 "too, and exit",
		 NULL},
		G_OPTION_ENTRY_NULL,
	};

	g_option_context_set_summary(context, "Checks scenario files, and every variant in each, "
					      "without running them.");
	g_option_context_set_description(context,
					 "Exit status: 0 every file is valid; 2 bad usage or an "
					 "invalid file (its errors, each as file:line:column on "
					 "a line of stderr).");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim validate: %s\nTry 'gpusim validate --help'.\n",
			error->message);
		return GS_EXIT_USAGE;
	}
	if (list_keys || list_all_keys) {
		g_auto(GStrv) keys = list_all_keys ? gs_loader_format_keys() : gs_loader_set_keys();

		for (guint i = 0; keys[i] != NULL; i++)
			puts(keys[i]);
		return EXIT_SUCCESS;
	}
	if (argc < 2) {
		fprintf(stderr, "gpusim validate: no scenario file given\n"
				"Try 'gpusim validate --help'.\n");
		return GS_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++)
		all_ok &= validate_file(argv[i]);
	return all_ok ? EXIT_SUCCESS : GS_EXIT_USAGE;
}

/* ---- the commands ---- */

typedef struct {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the command word */
	const char *help;
} Command;

static const Command commands[] = {
	{"run", gs_cmd_run, "Replay a scenario on the simulator and report what happened"},
	{"compare", gs_cmd_compare, "Run every variant of a scenario and compare them, with plots"},
	{"sweep", gs_cmd_sweep, "Run a scenario over a grid of parameter values, in parallel"},
	{"merge", gs_cmd_merge, "Put the shards of a sweep (sweep --shard=K/N) together"},
	{"explore", gs_cmd_explore,
	 "Search the orders an executor could take for one that breaks a property"},
	{"montecarlo", gs_cmd_montecarlo,
	 "Run RmmSparkMonteCarlo's random situations, with statistics"},
	{"validate", cmd_validate, "Check scenario files and their variants without running them"},
	{"import-rmm-log", gs_cmd_import_rmm_log, "Turn an RMM logging-adaptor CSV into a scenario"},
	{"import-state-log", gs_cmd_import_state_log,
	 "Summarise and check a Spark-RAPIDS state log, and trace it"},
	{"calibrate", gs_cmd_calibrate, "Measure a real device (--backend=host or cuda) for a scenario to include"},
	{"predict", gs_cmd_predict, "Predict real runs with a calibration (--device) and measure the error"},
};

static char *
description_text(void)
{
	GString *s = g_string_new(description_intro);

	g_string_append(s, "\nCommands:\n");
	for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
		g_string_append_printf(s, "  %-15s %s\n", commands[i].name, commands[i].help);
	g_string_append(s, description_outro);
	return g_string_free(s, FALSE);
}

int
main(int argc, char **argv)
{
	g_autoptr(GOptionContext) context = g_option_context_new("COMMAND [ARGS…]");
	g_autoptr(GError) error = NULL;
	g_autofree char *description = description_text();

	/*
	 * Messages and help follow the user's locale (GOption prints "…" in UTF-8
	 * ones), but numbers never do: results and JSON use a decimal point.
	 */
	setlocale(LC_ALL, "");
	setlocale(LC_NUMERIC, "C");

	g_option_context_set_summary(context, summary);
	g_option_context_set_description(context, description);
	g_option_context_add_main_entries(context, main_entries, NULL);
	/* Options after the command word belong to the command. */
	g_option_context_set_strict_posix(context, TRUE);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim: %s\nTry 'gpusim --help'.\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (show_version) {
		printf("gpusim %s\n", gs_version());
		return EXIT_SUCCESS;
	}
	if (argc < 2) {
		fprintf(stderr, "gpusim: no command given\nTry 'gpusim --help'.\n");
		return GS_EXIT_USAGE;
	}
	for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "gpusim: unknown command '%s'\nTry 'gpusim --help'.\n", argv[1]);
	return GS_EXIT_USAGE;
}
