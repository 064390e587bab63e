/*
 * gpusim: many replays of one scenario, for `compare` and `sweep`, and
 * many workloads made in code, for `montecarlo`.
 *
 * This module decides which runs a comparison is made of and how they are
 * carried out. A run ("job") is the scenario file, at most one of its
 * variants, and --set overrides, or a workload the caller made in code; the variants a comparison uses are the
 * scenario's own, or, when it defines none, the three OOM policies fail,
 * block and retry (SPEC §3.6). Every job is loaded before any runs, so a bad
 * scenario or value stops the whole batch with nothing written. The jobs then
 * run on a pool of POSIX threads, each one wholly inside one worker (generate,
 * run on the driver, write its own outputs, which the caller's output set
 * puts in place once the whole command is done): a simulated run stays
 * single-threaded and gives the same bytes whatever the number of workers,
 * because the loader and the simulator keep no mutable global state and
 * results are kept by job index, never in order of completion. A real
 * backend's runs take one worker, one after another, since runs on one
 * device must not overlap.
 *
 * It also writes the metrics every comparison reports, as CSV columns, so
 * that summary.csv and sweep.csv agree, and reads those columns back (a
 * sweep's shards keep their runs' metrics so). It prints nothing; progress goes to a
 * callback, which is called under a lock, one job at a time.
 */
#ifndef GPUSIM_BATCH_H
#define GPUSIM_BATCH_H

#include <gpusim/gpusim.h>

#include "report/output.h"
#include "cli/drivers.h"
#include "sim/sim.h"

G_BEGIN_DECLS

/* One variant of a comparison, as the user names it. */
typedef struct {
	char *label;   /* the name shown in tables, files and legends */
	char *variant; /* the scenario's variant to apply, or NULL */
	char *set;     /* an extra KEY=VALUE (the built-in policies), or NULL */
} GsBatchVariant;

void gs_batch_variant_free(GsBatchVariant *v);

/**
 * The variants to compare: those named in @requested (comma-separated; may be
 * NULL for all), resolved against the scenario at @path. A name is one of the
 * scenario's variants, "base" (the scenario as written) or, when the scenario
 * defines no variant of that name, one of the policies fail, block and retry.
 * Returns a GPtrArray of GsBatchVariant, or NULL with @error set (an unknown
 * or repeated name, an unreadable scenario).
 */
GPtrArray *gs_batch_variants(const char *path, const char *requested, GError **error);

/**
 * The comma-separated names of @list, each stripped of blanks, as the option
 * @option takes them (compare's --variants, montecarlo's --policies): NULL
 * with @error set (G_OPTION_ERROR_BAD_VALUE, naming @option) when @list is
 * empty, or a name is empty or named twice.
 */
GStrv gs_batch_split_names(const char *option, const char *list, GError **error);

/**
 * The OOM policy of the built-in variant @name (fail, block or retry, as
 * gs_oom_policy_names spells them), into *@oom; FALSE when @name is none.
 */
gboolean gs_batch_builtin_policy(const char *name, GsOomPolicy *oom);

/* One run. The caller fills the first group; the batch the second. */
typedef struct {
	const GsBatchVariant *variant; /* not owned; NULL for a job of a workload made in code */
	char **sets;                   /* NULL-terminated KEY=VALUE overrides, owned */
	GsOutput *json;                /* outputs to write, or NULL (owned by the caller's set) */
	GsOutput *timeline;
	GsOutput *trace;

	GsWorkload *workload; /* after gs_batch_load(), or given to gs_batch_job_new_workload() */
	GsResult *result;     /* after gs_batch_run(); NULL when the backend failed */
	GError *run_error;    /* why the backend failed it, or NULL */
	gint64 wall_ns;
	char *write_error;    /* why an output could not be written, or NULL */
} GsBatchJob;

/** A job of @variant with a copy of @sets (may be NULL). */
GsBatchJob *gs_batch_job_new(const GsBatchVariant *variant, const char *const *sets);
void gs_batch_job_free(GsBatchJob *job);

/**
 * A job of @workload, made in code rather than loaded from a scenario (the
 * montecarlo command's situations): the job owns it, has no variant, and is
 * ready for gs_batch_run() without gs_batch_load().
 */
GsBatchJob *gs_batch_job_new_workload(GsWorkload *workload);

/*
 * --device=FILE, as run, compare, sweep and predict take it: a calibration
 * (what `gpusim calibrate` writes) whose memory: and links: replace the
 * scenario's (gs_loader_load_device()), into the char* at @device.
 */
#define GS_BATCH_DEVICE_OPTION(device)                                                          \
	{"device", 0, 0, G_OPTION_ARG_FILENAME, (device),                                        \
	 "Apply a calibration's memory: and links: (gpusim calibrate) over the scenario's",      \
	 "FILE"}

/**
 * The scenario at @path with @device's calibration over it (NULL: none),
 * then @variant (NULL: none) and @sets (may be NULL); NULL with @error set
 * to the loader's "file:line:column: ..." message.
 */
GsWorkload *gs_batch_load_workload(const char *path, const char *device, const char *variant,
				   const char *const *sets, GError **error);

/**
 * Loads the scenario at @path, with @device's calibration (may be NULL), for
 * every job of @jobs (GsBatchJob*). On the first job that fails returns
 * FALSE with @error set to the loader's message, a "file:line:column: ..."
 * line per error, each ended by " (with variant NAME)" when a variant was
 * applied.
 */
gboolean gs_batch_load(const char *path, const char *device, GPtrArray *jobs, GError **error);

/** Called once per finished job, under the batch's lock, with the count done so far. */
typedef void (*GsBatchProgress)(const GsBatchJob *job, guint done, guint total, gpointer data);

/**
 * Runs every loaded job on @driver (NULL: the simulator), on @workers
 * threads (at least one; a driver that does not batch takes one), and
 * writes each job's outputs. Returns FALSE with @error set to the first (by
 * job index) run the backend failed (GS_BACKEND_ERROR) or output that could
 * not be written; every job has run either way.
 */
gboolean gs_batch_run(GPtrArray *jobs, const GsDriver *driver, guint workers,
		      GsBatchProgress progress, gpointer progress_data, GError **error);

/* ---- the metrics of a comparison, as CSV ---- */

/* The metrics of a run after its outcome, in the order of their columns. */
typedef enum {
	GS_METRIC_MAKESPAN_NS,
	GS_METRIC_TASKS,
	GS_METRIC_TASKS_COMPLETED,
	GS_METRIC_TASKS_FAILED,
	GS_METRIC_TASK_ATTEMPTS,
	GS_METRIC_RETRIES,
	GS_METRIC_SPLITS,
	GS_METRIC_BLOCKED_NS,
	GS_METRIC_LOST_NS,
	GS_METRIC_SPILL_BLOCK_NS,
	GS_METRIC_SEMAPHORE_WAIT_NS,
	GS_METRIC_DEADLOCKS_BUSTED,
	GS_METRIC_DEADLOCKS_UNRESOLVED,
	GS_METRIC_SPILLED_GPU_TO_HOST,
	GS_METRIC_SPILLED_HOST_TO_DISK,
	GS_METRIC_UNSPILLED_HOST_TO_GPU,
	GS_METRIC_UNSPILLED_DISK_TO_HOST,
	GS_METRIC_PEAK_GPU_USED,
	GS_METRIC_PEAK_HOST_USED,
	GS_METRIC_PEAK_DISK_USED,
	GS_METRIC_MEAN_GPU_USED,
	GS_METRIC_GPU_CAPACITY,
	GS_N_METRICS
} GsBatchMetric;

/*
 * What a comparison reports of a run: all of it is in its CSV columns, so a
 * run's row read back (a shard of a sweep, merged) gives the same record.
 */
typedef struct {
	GsOutcome outcome;
	gint64 value[GS_N_METRICS];
} GsBatchMetrics;

/** The metrics of @r. */
void gs_batch_metrics(const GsResult *r, GsBatchMetrics *m);

/**
 * The metric columns, comma-separated, no newline:
 *   outcome,makespan_ns,tasks,tasks_completed,tasks_failed,task_attempts,
 *   retries,splits,blocked_ns,lost_ns,spill_block_ns,semaphore_wait_ns,
 *   deadlocks_busted,deadlocks_unresolved,spilled_gpu_to_host,
 *   spilled_host_to_disk,unspilled_host_to_gpu,unspilled_disk_to_host,
 *   peak_gpu_used,peak_host_used,peak_disk_used,mean_gpu_used,gpu_capacity
 */
const char *gs_batch_csv_header(void);

/** Appends the metric columns of @m, in the header's order, without a newline. */
void gs_batch_csv_metrics(GString *s, const GsBatchMetrics *m);

/**
 * Reads back what gs_batch_csv_metrics() appended: @text, the metric columns
 * alone, into *@m. FALSE when it is not that (an unknown outcome, a column
 * too many or too few, a value that is not a whole number).
 */
gboolean gs_batch_csv_parse_metrics(const char *text, GsBatchMetrics *m);

/** Appends @text as one CSV field, quoted when it holds a comma, quote or newline. */
void gs_batch_csv_field(GString *s, const char *text);

/**
 * Appends a table that reads across, as comparisons print theirs: a line of
 * the @n_cols headings @heads, then a line per row, each opening with
 * @indent and the row's label of @labels (blanks on the headings' line)
 * padded to @label_width or to the longest label, then the row's cells, two
 * spaces apart, each padded to the widest of its column, heading included,
 * but the last. @cells holds @n_rows cells per column, column by column.
 */
void gs_batch_table(GString *s, const char *indent, guint label_width, const char *const *labels,
		    guint n_rows, const char *const *heads, guint n_cols, const char *const *cells);

/**
 * @label made safe as part of a file name: letters, digits and ". _ + -"
 * are kept, anything else becomes '_'; an empty label becomes "_".
 */
char *gs_batch_file_stem(const char *label);

G_END_DECLS

#endif /* GPUSIM_BATCH_H */
