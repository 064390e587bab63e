/*
 * gpusim: what a sweep is made of and what it writes, for `sweep` and `merge`.
 *
 * This module decides a sweep's grid and the files written from its runs.
 * The grid is the cross product of the values of every --param KEY=V1,V2,...
 * (a scenario key, as --set takes it), times the variants. Its runs are
 * numbered from 0 in one fixed order: the first parameter changing slowest
 * and the variant fastest. That order, never the order in which workers or
 * machines finish, is the order of sweep.csv, so the same sweep writes the
 * same files whatever --jobs is, and shards merged write what the whole
 * sweep does: both write through gs_sweep_write() from the runs' metrics.
 *
 * A shard K of N (1 <= K <= N) takes the runs whose number is K - 1 modulo
 * N: a share fixed by the grid alone, interleaved so that each shard gets
 * some runs of every value of the first parameter.
 *
 * The files, in the output folder: sweep.csv (run number from 1, one column
 * per parameter with the value as written, or for a size, duration or
 * bandwidth its base units and KEY_text beside with the value as written,
 * the variant, then the metrics of batch.h), sweep-plot.csv (the same metrics
 * grouped into one block per plot line, with the first parameter as a
 * number), and, with gnuplot, sweep.png and sweep.svg: each metric against
 * the first parameter, one line per variant and per value of the other
 * parameters. A first parameter whose values are all sizes or all durations
 * is drawn to scale in a readable unit; one with other values (policy names,
 * say) is drawn with one tick per value. With --trace each run also has
 * runNNN.trace.json.
 */
#ifndef GPUSIM_SWEEP_H
#define GPUSIM_SWEEP_H

#include "cli/batch.h"
#include "report/output.h"
#include "report/plot.h"

G_BEGIN_DECLS

typedef struct {
	char *key;
	GPtrArray *values; /* char*, as written */
} GsSweepParam;

typedef struct {
	GPtrArray *params;   /* GsSweepParam*, in the order given */
	GPtrArray *variants; /* GsBatchVariant* */
	guint runs;
} GsSweepGrid;

/* Far more runs than a sweep holds in memory: a grid of more is refused. */
#define GS_SWEEP_MAX_RUNS 1000000u

/**
 * The grid of the --param texts @params (NULL-terminated) over @variants
 * (GsBatchVariant*, taken). NULL with @error in G_OPTION_ERROR when a text
 * is not KEY=V1,V2,..., has an empty value or repeats a key, when none is
 * given, or when the grid has more than GS_SWEEP_MAX_RUNS runs.
 */
GsSweepGrid *gs_sweep_grid_new(const char *const *params, GPtrArray *variants, GError **error);
void gs_sweep_grid_free(GsSweepGrid *grid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsSweepGrid, gs_sweep_grid_free)

/** The value of parameter @k in run @run. */
const char *gs_sweep_value(const GsSweepGrid *grid, guint run, guint k);

/** The variant of run @run. */
const GsBatchVariant *gs_sweep_variant(const GsSweepGrid *grid, guint run);

/* ---- shards ---- */

typedef struct {
	guint k, n; /* shard K of N; the whole sweep is 1 of 1 */
} GsSweepShard;

/**
 * Reads --shard's @text, "K/N" with 1 <= K <= N <= @runs. FALSE with @error
 * in G_OPTION_ERROR otherwise.
 */
gboolean gs_sweep_shard_parse(const char *text, guint runs, GsSweepShard *shard, GError **error);

/** Whether @shard takes run @run. */
gboolean gs_sweep_shard_takes(const GsSweepShard *shard, guint run);

/* ---- the files ---- */

/** The file name of run @run's trace: "run001.trace.json", numbered as in sweep.csv. */
char *gs_sweep_trace_name(const GsSweepGrid *grid, guint run);

typedef struct {
	GsOutput **traces;   /* one per run; NULL for a run without one */
	GsOutput *csv;       /* sweep.csv */
	GsOutput *plot_data; /* sweep-plot.csv */
	GsOutput *png, *svg; /* NULL without gnuplot */
} GsSweepOutputs;

void gs_sweep_outputs_clear(GsSweepOutputs *outs);

/**
 * Makes the folder @dir in @set and adds the traces of the runs @shard takes
 * (with @traces) to @outs. FALSE with @error set when one is refused.
 */
gboolean gs_sweep_add_traces(GsOutputSet *set, const char *dir, const GsSweepGrid *grid,
			     const GsSweepShard *shard, gboolean traces, GsSweepOutputs *outs,
			     GError **error);

/**
 * Adds the sweep's own files in @dir (sweep.csv, sweep-plot.csv and, when
 * @plotting, the pictures) to @outs. FALSE with @error set when one is
 * refused.
 */
gboolean gs_sweep_add_files(GsOutputSet *set, const char *dir, gboolean plotting,
			    GsSweepOutputs *outs, GError **error);

/**
 * Writes sweep.csv, sweep-plot.csv and the plot (titled after @name, the
 * first run's workload) from @metrics, one per run of @grid; says on stderr,
 * after "gpusim @command: ", why the plot is skipped when gnuplot is missing.
 * Returns the exit status: GS_EXIT_OK, GS_EXIT_USAGE when an output cannot
 * be written, GS_EXIT_INTERNAL when the plot failed (said on stderr).
 */
int gs_sweep_write(const GsSweepGrid *grid, const GsBatchMetrics *metrics, const char *name,
		   GsPlotter *plotter, const GsSweepOutputs *outs, const char *command,
		   const char *dir);

/** What the sweep's files in @dir are, for its summary line: "wrote DIR/: sweep.csv, ...". */
char *gs_sweep_files_written(const char *dir, gboolean plotting, gboolean traces);

G_END_DECLS

#endif /* GPUSIM_SWEEP_H */
