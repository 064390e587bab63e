/*
 * gpusim: the `merge` command: the shards of a sweep put together.
 *
 * Reads the folders that `sweep --shard=K/N` wrote (shard.h), copies each
 * run's trace from the shard that ran it, and writes the sweep's files
 * through the sweep's own writers (sweep.h), from the runs' metrics: the
 * same files, byte for byte, as the sweep without --shard writes. They are
 * one output set (output.h): on any error none of them is written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/shard.h"
#include "cli/sweep.h"
#include "report/output.h"
#include "report/plot.h"

typedef struct {
	char *out;
	gboolean quiet;
} MergeOptions;

/* The trace of run @run, copied byte for byte from the folder @dir. */
static gboolean
copy_trace(const GsSweepGrid *grid, guint run, const char *dir, GsOutput *out, GError **error)
{
	g_autofree char *name = gs_sweep_trace_name(grid, run);
	g_autofree char *path = g_build_filename(dir, name, NULL);
	int fd = open(path, O_RDONLY);
	g_autoptr(GMappedFile) file = NULL;
	GsOutputWriter *writer;

	if (fd < 0) {
		int saved = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "cannot read %s: %s",
			    path, g_strerror(saved));
		return FALSE;
	}
	file = g_mapped_file_new_from_fd(fd, FALSE, error);
	close(fd);
	if (file == NULL || (writer = gs_output_writer_new(out, error)) == NULL)
		return FALSE;
	gs_output_writer_add(g_mapped_file_get_contents(file), g_mapped_file_get_length(file),
			     writer);
	return gs_output_writer_close(writer, error);
}

static int
write_merge(const GsShardMerge *merge, const MergeOptions *o, guint shards)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GsPlotter) plotter = gs_plotter_new();
	gboolean plotting = gs_plotter_missing(plotter) == NULL;
	const GsSweepShard whole = {.k = 1, .n = 1};
	GsSweepOutputs outs = {0};
	gboolean ok = gs_sweep_add_traces(set, o->out, merge->grid, &whole, merge->trace, &outs,
					  &error) &&
		      gs_sweep_add_files(set, o->out, plotting, &outs, &error);
	int status = GS_EXIT_USAGE;

	for (guint i = 0; ok && merge->trace && i < merge->grid->runs; i++)
		ok = copy_trace(merge->grid, i, merge->dirs[i], outs.traces[i], &error);
	if (!ok)
		fprintf(stderr, "gpusim merge: %s\n", error->message);
	else
		status = gs_sweep_write(merge->grid, merge->metrics, merge->name, plotter, &outs,
					"merge", o->out);
	gs_sweep_outputs_clear(&outs);
	if (status == GS_EXIT_OK && !gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim merge: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (status == GS_EXIT_OK && !o->quiet) {
		g_autofree char *written = gs_sweep_files_written(o->out, plotting, merge->trace);

		printf("%u runs from %u shards; %s\n", merge->grid->runs, shards, written);
	}
	return status;
}

static int
merge_dirs(int count, char **args, const MergeOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autofree const char **dirs = g_new0(const char *, count + 1);
	g_autoptr(GsShardMerge) merge = NULL;

	memcpy(dirs, args, (gsize) count * sizeof *dirs);
	if ((merge = gs_shard_merge_read(dirs, &error)) == NULL) {
		fprintf(stderr, "gpusim merge: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	return write_merge(merge, o, (guint) count);
}

int
gs_cmd_merge(int argc, char **argv)
{
	MergeOptions o = {0};
	GOptionEntry entries[] = {
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out, "Folder for the sweep's files", "DIR"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no summary", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SHARD-DIR…");
	g_autoptr(GError) error = NULL;
	int status = GS_EXIT_USAGE;

	g_option_context_set_summary(
		context, "Put the shards of a sweep (sweep --shard=K/N, one folder each) together: "
			 "write the\nsweep's files, the same as the sweep run whole writes.");
	g_option_context_set_description(
		context, "Example:\n  for k in 1 2 3; do gpusim sweep study.yaml --param seed=1,2,3,4 "
			 "--shard=$k/3 --out=shards/$k; done\n  gpusim merge shards/1 shards/2 "
			 "shards/3 --out=study.sweep\n\nExit status: 0 merged; 2 bad usage, or shards "
			 "missing, given twice or of\ndifferent sweeps; 4 the plot failed.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error))
		fprintf(stderr, "gpusim merge: %s\nTry 'gpusim merge --help'.\n", error->message);
	else if (o.out == NULL)
		fprintf(stderr, "gpusim merge: give the folder to write: --out=DIR\n"
				"Try 'gpusim merge --help'.\n");
	else if (argc < 2)
		fprintf(stderr, "gpusim merge: give the folders of the shards\n"
				"Try 'gpusim merge --help'.\n");
	else
		status = merge_dirs(argc - 1, argv + 1, &o);
	g_free(o.out);
	return status;
}
