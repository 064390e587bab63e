/*
 * gpusim: the manifest of a sweep's shard, and how `merge` puts shards together.
 *
 * This module decides what a shard leaves for merge and which shards merge
 * accepts. `sweep --shard=K/N` writes, beside the traces of its runs, the
 * file sweep-shard.ini (a GLib key file): in [sweep], what makes the sweep
 * the one it is (the scenario file's SHA-256, the parameters with their
 * values, the variants, every --set, --seed, the backend, whether runs are
 * traced, the number of runs); in [shard], K and N, the scenario file as it
 * was named and the workload name of the shard's first run (shard 1's is the
 * plot's title); in [runs], each of its runs' metrics, as sweep.csv's metric
 * columns, keyed by the run's number in sweep.csv.
 *
 * Merge takes one folder per shard and accepts them only together: every
 * shard K of one N once, all of one sweep (their [sweep] groups equal), each
 * with exactly the runs shard K takes. The scenario's digest covers the file
 * named on the command line, not the files it includes.
 */
#ifndef GPUSIM_SHARD_H
#define GPUSIM_SHARD_H

#include "cli/sweep.h"

G_BEGIN_DECLS

/* The manifest's name, in a shard's folder. */
#define GS_SHARD_MANIFEST "sweep-shard.ini"

/* What a sweep was run with, besides its grid. */
typedef struct {
	const char *scenario;     /* the file, as named on the command line */
	const char *const *sets;  /* --set texts, NULL-terminated; may be NULL */
	gint64 seed;              /* -1: the scenario's own */
	const char *backend;      /* the driver's name */
	gboolean trace;
} GsShardSweep;

/**
 * The manifest of @shard of the sweep of @grid run as @sweep: @name is the
 * workload name of the shard's first run, @metrics one per run of @grid, of
 * which those @shard takes are read. NULL with @error set when the scenario
 * cannot be read for its digest.
 */
char *gs_shard_manifest(const GsShardSweep *sweep, const GsSweepGrid *grid,
			const GsSweepShard *shard, const char *name,
			const GsBatchMetrics *metrics, GError **error);

/* A whole sweep, put together from its shards. */
typedef struct {
	GsSweepGrid *grid;       /* its variants have labels only */
	GsBatchMetrics *metrics; /* one per run */
	char *name;              /* the first run's workload name */
	gboolean trace;
	char **dirs;             /* per run: the folder of the shard that ran it */
} GsShardMerge;

/**
 * Reads the shards in @dirs (NULL-terminated). NULL with @error in
 * G_OPTION_ERROR when a folder holds no manifest or a malformed one, when
 * the shards are of different sweeps or splits, or when a shard is missing,
 * given twice or lacks one of its runs.
 */
GsShardMerge *gs_shard_merge_read(const char *const *dirs, GError **error);
void gs_shard_merge_free(GsShardMerge *merge);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsShardMerge, gs_shard_merge_free)

G_END_DECLS

#endif /* GPUSIM_SHARD_H */
