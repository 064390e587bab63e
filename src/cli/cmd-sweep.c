/*
 * gpusim: the `sweep` command: a scenario over a grid of parameter values.
 *
 * The grid, the order of its runs, its shards and the files it writes are
 * sweep.h's; this command makes the runs' jobs (the scenario, the run's
 * variant, every --set, then KEY=VALUE for each parameter), runs them in
 * parallel (batch.h), and writes the files of the whole sweep or, with
 * --shard=K/N, the manifest of its share (shard.h) for `gpusim merge`. These
 * files are one output set (output.h): on any error none of them is written.
 *
 * Progress: on a terminal, a bar redrawn in place on stderr; otherwise a
 * plain line at every tenth of the runs, so logs stay short.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "cli/shard.h"
#include "cli/sweep.h"
#include "report/output.h"
#include "report/plot.h"

typedef struct {
	char *backend;
	const GsDriver *driver; /* the backend's */
	char *variants;
	char *device;
	char *out;
	gboolean out_given;
	char *shard;
	char **params;
	char **sets;
	gint64 seed;
	gint jobs;
	gboolean trace;
	gboolean quiet;
} SweepOptions;

/* ---- the jobs ---- */

/* A job per run of @grid, in its order. */
static GPtrArray *
make_jobs(const GsSweepGrid *grid, const SweepOptions *o)
{
	GPtrArray *jobs = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);

	for (guint i = 0; i < grid->runs; i++) {
		g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);

		for (guint s = 0; o->sets != NULL && o->sets[s] != NULL; s++)
			g_ptr_array_add(sets, g_strdup(o->sets[s]));
		for (guint k = 0; k < grid->params->len; k++)
			g_ptr_array_add(sets, g_strconcat(((GsSweepParam *) grid->params->pdata[k])->key,
							  "=", gs_sweep_value(grid, i, k), NULL));
		g_ptr_array_add(sets, NULL);
		g_ptr_array_add(jobs, gs_batch_job_new(gs_sweep_variant(grid, i),
						       (const char *const *) sets->pdata));
	}
	return jobs;
}

/* The jobs @shard takes (not owned). */
static GPtrArray *
share_of(GPtrArray *jobs, const GsSweepShard *shard)
{
	GPtrArray *share = g_ptr_array_new();

	for (guint i = 0; i < jobs->len; i++) {
		if (gs_sweep_shard_takes(shard, i))
			g_ptr_array_add(share, jobs->pdata[i]);
	}
	return share;
}

/* ---- progress ---- */

typedef struct {
	gboolean tty;
	guint last_tenth;
} Progress;

static void
show_progress(const GsBatchJob *job, guint done, guint total, gpointer data)
{
	Progress *p = data;
	enum { BAR = 30 };

	if (p->tty) {
		char bar[BAR + 1];
		guint filled = done * BAR / total;

		for (guint i = 0; i < BAR; i++)
			bar[i] = i < filled ? '#' : '-';
		bar[BAR] = '\0';
		fprintf(stderr, "\rsweep [%s] %u/%u runs", bar, done, total);
		if (done == total)
			fputc('\n', stderr);
	} else if (done * 10 / total != p->last_tenth || done == total) {
		p->last_tenth = done * 10 / total;
		fprintf(stderr, "gpusim sweep: %u of %u runs done\n", done, total);
	}
	fflush(stderr);
}

/* ---- the command ---- */

/* Every file of the sweep, or of the shard, in the --out folder, made if need be. */
static gboolean
add_outputs(GsOutputSet *set, GPtrArray *jobs, const GsSweepGrid *grid,
	    const GsSweepShard *shard, gboolean plotting, const SweepOptions *o,
	    GsSweepOutputs *outs, GsOutput **manifest, GError **error)
{
	if (!gs_sweep_add_traces(set, o->out, grid, shard, o->trace, outs, error))
		return FALSE;
	for (guint i = 0; i < jobs->len; i++)
		((GsBatchJob *) jobs->pdata[i])->trace = outs->traces[i];
	if (o->shard == NULL)
		return gs_sweep_add_files(set, o->out, plotting, outs, error);
	*manifest = gs_output_set_add_in(set, o->out, GS_SHARD_MANIFEST, error);
	return *manifest != NULL;
}

/* Loads the shard's jobs, adds the outputs and runs the jobs; the exit status. */
static int
load_and_run(const char *path, GPtrArray *jobs, GPtrArray *share, const GsSweepGrid *grid,
	     const GsSweepShard *shard, GsOutputSet *set, gboolean plotting,
	     GsSweepOutputs *outs, GsOutput **manifest, const SweepOptions *o)
{
	g_autoptr(GError) error = NULL;
	Progress progress = {.tty = isatty(fileno(stderr)), .last_tenth = 0};

	if (!gs_batch_load(path, o->device, share, &error)) {
		fprintf(stderr, "%s\n", error->message);
		return GS_EXIT_USAGE;
	}
	for (guint i = 0; o->seed >= 0 && i < share->len; i++)
		((GsBatchJob *) share->pdata[i])->workload->seed = (guint64) o->seed;
	if (!add_outputs(set, jobs, grid, shard, plotting, o, outs, manifest, &error) ||
	    !gs_batch_run(share, o->driver, (guint) o->jobs, o->quiet ? NULL : show_progress,
			  &progress, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return gs_cmd_backend_status(error);
	}
	return GS_EXIT_OK;
}

/* The manifest of the shard's runs (their metrics in @metrics). */
static int
write_manifest(const char *path, const GsSweepGrid *grid, const GsSweepShard *shard,
	       GPtrArray *share, const GsBatchMetrics *metrics, GsOutput *manifest,
	       const SweepOptions *o)
{
	g_autoptr(GError) error = NULL;
	const GsShardSweep sweep = {.scenario = path,
				    .sets = (const char *const *) o->sets,
				    .seed = o->seed,
				    .backend = o->driver->name,
				    .trace = o->trace};
	const char *name = ((GsBatchJob *) share->pdata[0])->workload->name;
	g_autofree char *text = gs_shard_manifest(&sweep, grid, shard, name, metrics, &error);

	if (text == NULL || !gs_output_write(manifest, text, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	return GS_EXIT_OK;
}

static void
print_summary(const GsSweepGrid *grid, const GsSweepShard *shard, guint ran, gboolean plotting,
	      const SweepOptions *o)
{
	g_autofree char *written = gs_sweep_files_written(o->out, plotting, o->trace);

	if (o->quiet)
		return;
	if (o->shard != NULL)
		printf("%u of %u runs (shard %u of %u); wrote %s/: %s%s\n", ran, grid->runs,
		       shard->k, shard->n, o->out, GS_SHARD_MANIFEST,
		       o->trace ? ", runNNN.trace.json" : "");
	else
		printf("%u runs; %s\n", grid->runs, written);
}

/* Runs the share of @shard of @grid's runs and writes its files. */
static int
run_share(const char *path, const GsSweepGrid *grid, const GsSweepShard *shard,
	  const SweepOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) jobs = make_jobs(grid, o);
	g_autoptr(GPtrArray) share = share_of(jobs, shard);
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GsPlotter) plotter = gs_plotter_new();
	gboolean plotting = o->shard == NULL && gs_plotter_missing(plotter) == NULL;
	g_autofree GsBatchMetrics *metrics = g_new0(GsBatchMetrics, grid->runs);
	GsSweepOutputs outs = {0};
	GsOutput *manifest = NULL;
	int status;

	status = load_and_run(path, jobs, share, grid, shard, set, plotting, &outs, &manifest, o);
	for (guint i = 0; status == GS_EXIT_OK && i < jobs->len; i++) {
		const GsBatchJob *job = jobs->pdata[i];

		if (job->result != NULL)
			gs_batch_metrics(job->result, &metrics[i]);
	}
	if (status == GS_EXIT_OK)
		status = o->shard != NULL
				 ? write_manifest(path, grid, shard, share, metrics, manifest, o)
				 : gs_sweep_write(grid, metrics,
						  ((GsBatchJob *) jobs->pdata[0])->workload->name,
						  plotter, &outs, "sweep", o->out);
	gs_sweep_outputs_clear(&outs);
	if (status == GS_EXIT_OK && !gs_output_set_commit(set, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (status == GS_EXIT_OK)
		print_summary(grid, shard, share->len, plotting, o);
	return status;
}

/* The shard --shard names, the whole sweep without it; a shard's default folder. */
static gboolean
choose_shard(const GsSweepGrid *grid, SweepOptions *o, GsSweepShard *shard)
{
	g_autoptr(GError) error = NULL;

	*shard = (GsSweepShard) {.k = 1, .n = 1};
	if (o->shard == NULL)
		return TRUE;
	if (o->device != NULL) {
		/* merge checks that shards agree by their manifests, which hold no calibration. */
		fprintf(stderr, "gpusim sweep: --device and --shard cannot be used together\n");
		return FALSE;
	}
	if (!gs_sweep_shard_parse(o->shard, grid->runs, shard, &error)) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return FALSE;
	}
	if (!o->out_given) {
		char *out = g_strdup_printf("%s.shard-%u-of-%u", o->out, shard->k, shard->n);

		g_free(o->out);
		o->out = out;
	}
	return TRUE;
}

static int
sweep(const char *path, SweepOptions *o)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsSweepGrid) grid = NULL;
	GPtrArray *variants = gs_batch_variants(path, o->variants, &error);
	GsSweepShard shard;

	if (variants == NULL) {
		fprintf(stderr, "%s%s\n", error->domain == G_OPTION_ERROR ? "gpusim sweep: " : "",
			error->message);
		return GS_EXIT_USAGE;
	}
	grid = gs_sweep_grid_new((const char *const *) o->params, variants, &error);
	if (grid == NULL) {
		fprintf(stderr, "gpusim sweep: %s\n", error->message);
		return GS_EXIT_USAGE;
	}
	if (!choose_shard(grid, o, &shard))
		return GS_EXIT_USAGE;
	return run_share(path, grid, &shard, o);
}

int
gs_cmd_sweep(int argc, char **argv)
{
	SweepOptions o = {.seed = -1};
	GOptionEntry entries[] = {
		{"param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.params,
		 "A scenario key and the values to sweep (repeat for a grid)", "KEY=V1,V2,..."},
		{"variants", 0, 0, G_OPTION_ARG_STRING, &o.variants,
		 "Variants, comma-separated (default: all, or fail,block,retry)", "A,B,..."},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
		 "Folder for the results (default: SCENARIO.sweep, or for a shard "
		 "SCENARIO.sweep.shard-K-of-N)",
		 "DIR"},
		{"shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
		 "Run only shard K of N of the runs and write its share for gpusim merge", "K/N"},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
		 "Runs at once (default: one per processor)", "N"},
		{"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
		 "Override a scenario key in every run", "KEY=VALUE"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Seed for generators and jitter", "N"},
		GS_BATCH_DEVICE_OPTION(&o.device),
		{"trace", 0, 0, G_OPTION_ARG_NONE, &o.trace,
		 "Also write a Chrome/Perfetto trace per run", NULL},
		{"backend", 0, 0, G_OPTION_ARG_STRING, &o.backend,
		 "sim (default), host, or cuda on a GPU; a real backend runs one run at a time",
		 "NAME"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress or summary", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new("SCENARIO.yaml");
	g_autoptr(GError) error = NULL;
	int status = GS_EXIT_OK;

	g_option_context_set_summary(context,
				     "Run a scenario over the cross product of parameter values "
				     "(times its variants),\nin parallel; write sweep.csv and plot "
				     "each metric against the first parameter.");
	g_option_context_set_description(
		context, "Example:\n  gpusim sweep study.yaml --param memory.gpu.capacity=4GiB,"
			 "6GiB,8GiB --jobs=4\n  gpusim sweep study.yaml --param ... --shard=2/8 "
			 "--out=shards/2   (then: gpusim merge shards/* --out=DIR)"
			 "\n\nExit status: 0 every run ran (whatever its "
			 "outcome); 2 bad usage or an invalid\nscenario; 3 the backend is "
			 "unavailable; 4 the plot failed.");
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "gpusim sweep: %s\nTry 'gpusim sweep --help'.\n", error->message);
		status = GS_EXIT_USAGE;
	} else {
		o.out_given = o.out != NULL;
		if (gs_cmd_check_batch("sweep", argc, argv, &o.jobs, o.backend, &o.driver, &o.out,
				       &status))
			status = sweep(argv[1], &o);
	}
	g_free(o.backend);
	g_free(o.shard);
	g_free(o.variants);
	g_free(o.device);
	g_free(o.out);
	g_strfreev(o.params);
	g_strfreev(o.sets);
	return status;
}
