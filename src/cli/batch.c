/*
 * gpusim: many replays of one scenario (see batch.h).
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "cli/batch.h"
#include "scenario/generate.h"
#include "scenario/loader.h"
#include "report/report.h"

/* ---- which variants ---- */

void
gs_batch_variant_free(GsBatchVariant *v)
{
	if (v == NULL)
		return;
	g_free(v->label);
	g_free(v->variant);
	g_free(v->set);
	g_free(v);
}

static GsBatchVariant *
variant_new(const char *label, const char *variant, const char *set)
{
	GsBatchVariant *v = g_new0(GsBatchVariant, 1);

	v->label = g_strdup(label);
	v->variant = g_strdup(variant);
	v->set = g_strdup(set);
	return v;
}

gboolean
gs_batch_builtin_policy(const char *name, GsOomPolicy *oom)
{
	for (guint i = 0; i < GS_N_OOM_POLICIES; i++) {
		if (strcmp(name, gs_oom_policy_names[i]) == 0) {
			*oom = (GsOomPolicy) i;
			return TRUE;
		}
	}
	return FALSE;
}

/*
 * A built-in variant, one per OOM policy: what is compared when a scenario
 * defines none (SPEC §3.6).
 */
static GsBatchVariant *
builtin_variant(const char *name)
{
	GsOomPolicy oom;
	g_autofree char *set = NULL;

	if (!gs_batch_builtin_policy(name, &oom))
		return NULL;
	set = g_strconcat("policy.oom=", gs_oom_policy_names[oom], NULL);
	return variant_new(name, NULL, set);
}

static gboolean
has_name(GPtrArray *names, const char *name)
{
	for (guint i = 0; i < names->len; i++)
		if (strcmp(names->pdata[i], name) == 0)
			return TRUE;
	return FALSE;
}

/* One requested name: the scenario's variant first, so a scenario may redefine "retry". */
static GsBatchVariant *
resolve_variant(GPtrArray *defined, const char *name, GError **error)
{
	GsBatchVariant *v;
	g_autofree char *known = NULL;

	if (has_name(defined, name))
		return variant_new(name, name, NULL);
	if (strcmp(name, "base") == 0)
		return variant_new(name, NULL, NULL);
	if ((v = builtin_variant(name)) != NULL)
		return v;
	g_ptr_array_add(defined, NULL);
	known = g_strjoinv(", ", (char **) defined->pdata);
	g_ptr_array_remove_index(defined, defined->len - 1);
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "unknown variant '%s' (the scenario defines %s; base, fail, block and "
		    "retry are always there)",
		    name, defined->len > 0 ? known : "none");
	return NULL;
}

GPtrArray *
gs_batch_variants(const char *path, const char *requested, GError **error)
{
	g_autoptr(GPtrArray) defined = gs_loader_variant_names(path, error);
	g_autoptr(GPtrArray) chosen = NULL;
	g_auto(GStrv) names = NULL;

	if (defined == NULL)
		return NULL;
	chosen = g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_variant_free);
	if (requested == NULL) {
		for (guint i = 0; i < defined->len; i++)
			g_ptr_array_add(chosen, variant_new(defined->pdata[i], defined->pdata[i],
							    NULL));
		for (guint i = 0; defined->len == 0 && i < GS_N_OOM_POLICIES; i++)
			g_ptr_array_add(chosen, builtin_variant(gs_oom_policy_names[i]));
		return g_steal_pointer(&chosen);
	}
	if ((names = gs_batch_split_names("--variants", requested, error)) == NULL)
		return NULL;
	for (guint i = 0; names[i] != NULL; i++) {
		GsBatchVariant *v = resolve_variant(defined, names[i], error);

		if (v == NULL)
			return NULL;
		g_ptr_array_add(chosen, v);
	}
	return g_steal_pointer(&chosen);
}

GStrv
gs_batch_split_names(const char *option, const char *list, GError **error)
{
	g_auto(GStrv) names = g_strsplit(list, ",", -1);

	if (names[0] == NULL) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: no name given",
			    option);
		return NULL;
	}
	for (guint i = 0; names[i] != NULL; i++) {
		g_strstrip(names[i]);
		if (*names[i] == '\0') {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s: an empty name in '%s'", option, list);
			return NULL;
		}
		for (guint k = 0; k < i; k++) {
			if (strcmp(names[k], names[i]) == 0) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					    "%s: '%s' is named twice", option, names[i]);
				return NULL;
			}
		}
	}
	return g_steal_pointer(&names);
}

/* ---- jobs ---- */

GsBatchJob *
gs_batch_job_new(const GsBatchVariant *variant, const char *const *sets)
{
	GsBatchJob *job = g_new0(GsBatchJob, 1);
	GPtrArray *all = g_ptr_array_new();

	job->variant = variant;
	for (guint i = 0; sets != NULL && sets[i] != NULL; i++)
		g_ptr_array_add(all, g_strdup(sets[i]));
	/* The policy of a built-in variant comes last so that it wins. */
	if (variant->set != NULL)
		g_ptr_array_add(all, g_strdup(variant->set));
	g_ptr_array_add(all, NULL);
	job->sets = (char **) g_ptr_array_free(all, FALSE);
	return job;
}

GsBatchJob *
gs_batch_job_new_workload(GsWorkload *workload)
{
	GsBatchJob *job = g_new0(GsBatchJob, 1);

	job->sets = g_new0(char *, 1);
	job->workload = workload;
	return job;
}

void
gs_batch_job_free(GsBatchJob *job)
{
	if (job == NULL)
		return;
	g_strfreev(job->sets);
	g_clear_pointer(&job->workload, gs_workload_free);
	g_clear_pointer(&job->result, gs_result_free);
	g_free(job->write_error);
	g_clear_error(&job->run_error);
	g_free(job);
}

GsWorkload *
gs_batch_load_workload(const char *path, const char *device, const char *variant,
		       const char *const *sets, GError **error)
{
	if (device != NULL)
		return gs_loader_load_device(path, device, variant, sets, error);
	return gs_loader_load(path, variant, sets, error);
}

gboolean
gs_batch_load(const char *path, const char *device, GPtrArray *jobs, GError **error)
{
	for (guint i = 0; i < jobs->len; i++) {
		GsBatchJob *job = jobs->pdata[i];

		g_clear_pointer(&job->workload, gs_workload_free);
		job->workload = gs_batch_load_workload(path, device, job->variant->variant,
						       (const char *const *) job->sets, error);
		if (job->workload == NULL) {
			/* Suffixed as validate does: each line still opens with a position. */
			if (job->variant->variant != NULL && error != NULL && *error != NULL)
				gs_loader_error_in_variant(*error, job->variant->variant);
			return FALSE;
		}
	}
	return TRUE;
}

/* ---- running ---- */

/*
 * The workers are POSIX threads with a POSIX mutex, not a GThreadPool and a
 * GMutex: GLib is not built with ThreadSanitizer, which then cannot see its
 * locks, and the CI's ThreadSanitizer build runs compare and sweep.
 */
typedef struct {
	GPtrArray *jobs;
	pthread_mutex_t lock; /* guards next, done and the progress calls */
	guint next;           /* the next job to hand out */
	guint done;
	GsBatchProgress progress;
	gpointer progress_data;
	const GsDriver *driver;
} Batch;

static gboolean
write_one(GsOutput *out, char *contents, GsBatchJob *job)
{
	g_autofree char *owned = contents;
	g_autoptr(GError) error = NULL;

	if (out == NULL || job->write_error != NULL)
		return job->write_error == NULL;
	if (!gs_output_write(out, owned, &error))
		job->write_error = g_strdup(error->message);
	return job->write_error == NULL;
}

/* The run's result, written as it is made: a long run's is never whole in memory. */
static void
write_json(GsBatchJob *job, const GsWorkload *w, const char *backend)
{
	g_autoptr(GError) error = NULL;

	if (!gs_report_json_write(job->json, w, job->result, backend, job->wall_ns, NULL, &error))
		job->write_error = g_strdup(error->message);
}

/* One job, start to finish, on whichever worker picked it up. */
static void
run_job(GsBatchJob *job, const GsDriver *driver)
{
	g_autoptr(GsEventLog) log = job->trace != NULL ? gs_event_log_new() : NULL;
	GsRunOptions options = {.log = log != NULL ? gs_event_log_add : NULL, .log_data = log,
				.skip_timeline = job->timeline == NULL && log == NULL};
	gint64 started = g_get_monotonic_time();
	GsWorkload *w = job->workload;

	gs_generate_tasks(w);
	job->result = gs_driver_run(driver, w, &options, NULL, &job->run_error);
	job->wall_ns = (g_get_monotonic_time() - started) * 1000;
	if (job->result == NULL)
		return;
	if (job->json != NULL)
		write_json(job, w, driver->name);
	if (job->timeline != NULL)
		write_one(job->timeline, gs_report_timeline_csv(job->result), job);
	if (job->trace != NULL)
		write_one(job->trace, gs_report_trace(w, job->result, log), job);
}

/* Takes jobs in order until none is left; each worker (and the caller) runs this. */
static void *
worker(void *data)
{
	Batch *batch = data;

	for (;;) {
		GsBatchJob *job;

		pthread_mutex_lock(&batch->lock);
		if (batch->next == batch->jobs->len) {
			pthread_mutex_unlock(&batch->lock);
			return NULL;
		}
		job = batch->jobs->pdata[batch->next++];
		pthread_mutex_unlock(&batch->lock);
		run_job(job, batch->driver);
		pthread_mutex_lock(&batch->lock);
		batch->done++;
		if (batch->progress != NULL)
			batch->progress(job, batch->done, batch->jobs->len, batch->progress_data);
		pthread_mutex_unlock(&batch->lock);
	}
}

gboolean
gs_batch_run(GPtrArray *jobs, const GsDriver *driver, guint workers, GsBatchProgress progress,
	     gpointer progress_data, GError **error)
{
	Batch batch = {.jobs = jobs, .progress = progress, .progress_data = progress_data,
		       .driver = driver != NULL ? driver : gs_driver_lookup(NULL, NULL)};
	pthread_t *threads;
	guint started = 0;

	pthread_mutex_init(&batch.lock, NULL);
	/* Runs on one device must not overlap. */
	workers = batch.driver->batches ? MIN(MAX(workers, 1), MAX(jobs->len, 1)) : 1;
	/* The calling thread is one of the workers: one worker starts no thread. */
	threads = g_new(pthread_t, workers);
	for (guint i = 1; i < workers; i++) {
		if (pthread_create(&threads[started], NULL, worker, &batch) == 0)
			started++;
	}
	worker(&batch);
	for (guint i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	g_free(threads);
	pthread_mutex_destroy(&batch.lock);
	for (guint i = 0; i < jobs->len; i++) {
		const GsBatchJob *job = jobs->pdata[i];

		if (job->run_error != NULL) {
			g_propagate_error(error, g_error_copy(job->run_error));
			return FALSE;
		}
		if (job->write_error != NULL) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s",
				    job->write_error);
			return FALSE;
		}
	}
	return TRUE;
}

/* ---- CSV ---- */

const char *
gs_batch_csv_header(void)
{
	return "outcome,makespan_ns,tasks,tasks_completed,tasks_failed,task_attempts,"
	       "retries,splits,blocked_ns,lost_ns,spill_block_ns,semaphore_wait_ns,"
	       "deadlocks_busted,deadlocks_unresolved,spilled_gpu_to_host,"
	       "spilled_host_to_disk,unspilled_host_to_gpu,unspilled_disk_to_host,"
	       "peak_gpu_used,peak_host_used,peak_disk_used,mean_gpu_used,gpu_capacity";
}

void
gs_batch_metrics(const GsResult *r, GsBatchMetrics *m)
{
	const gint64 values[] = {
		[GS_METRIC_MAKESPAN_NS] = r->makespan_ns,
		[GS_METRIC_TASKS] = r->totals.tasks,
		[GS_METRIC_TASKS_COMPLETED] = r->totals.tasks_completed,
		[GS_METRIC_TASKS_FAILED] = r->totals.tasks_failed,
		[GS_METRIC_TASK_ATTEMPTS] = r->totals.task_attempts,
		[GS_METRIC_RETRIES] = (gint64) r->totals.retries,
		[GS_METRIC_SPLITS] = (gint64) r->totals.splits,
		[GS_METRIC_BLOCKED_NS] = r->totals.blocked_ns,
		[GS_METRIC_LOST_NS] = r->totals.lost_ns,
		[GS_METRIC_SPILL_BLOCK_NS] = r->totals.spill_block_ns,
		[GS_METRIC_SEMAPHORE_WAIT_NS] = r->totals.semaphore_wait_ns,
		[GS_METRIC_DEADLOCKS_BUSTED] = (gint64) r->totals.deadlocks_busted,
		[GS_METRIC_DEADLOCKS_UNRESOLVED] = (gint64) r->totals.deadlocks_unresolved,
		[GS_METRIC_SPILLED_GPU_TO_HOST] = r->totals.spilled_gpu_to_host,
		[GS_METRIC_SPILLED_HOST_TO_DISK] = r->totals.spilled_host_to_disk,
		[GS_METRIC_UNSPILLED_HOST_TO_GPU] = r->totals.unspilled_host_to_gpu,
		[GS_METRIC_UNSPILLED_DISK_TO_HOST] = r->totals.unspilled_disk_to_host,
		[GS_METRIC_PEAK_GPU_USED] = r->tiers[GS_TIER_GPU].peak_used,
		[GS_METRIC_PEAK_HOST_USED] = r->tiers[GS_TIER_HOST].peak_used,
		[GS_METRIC_PEAK_DISK_USED] = r->tiers[GS_TIER_DISK].peak_used,
		[GS_METRIC_MEAN_GPU_USED] = r->tiers[GS_TIER_GPU].mean_used,
		[GS_METRIC_GPU_CAPACITY] = r->tiers[GS_TIER_GPU].capacity,
	};

	G_STATIC_ASSERT(G_N_ELEMENTS(values) == GS_N_METRICS);
	m->outcome = r->outcome;
	memcpy(m->value, values, sizeof values);
}

void
gs_batch_csv_metrics(GString *s, const GsBatchMetrics *m)
{
	g_string_append(s, gs_outcome_name(m->outcome));
	for (guint i = 0; i < GS_N_METRICS; i++)
		g_string_append_printf(s, ",%" G_GINT64_FORMAT, m->value[i]);
}

gboolean
gs_batch_csv_parse_metrics(const char *text, GsBatchMetrics *m)
{
	g_auto(GStrv) cells = g_strsplit(text, ",", -1);
	gboolean known = FALSE;

	if (g_strv_length(cells) != 1 + GS_N_METRICS)
		return FALSE;
	for (GsOutcome o = GS_OUTCOME_COMPLETED; o <= GS_OUTCOME_TIMEOUT && !known; o++) {
		known = strcmp(cells[0], gs_outcome_name(o)) == 0;
		m->outcome = o;
	}
	for (guint i = 0; known && i < GS_N_METRICS; i++)
		known = g_ascii_string_to_signed(cells[1 + i], 10, G_MININT64, G_MAXINT64,
						 &m->value[i], NULL);
	return known;
}

void
gs_batch_csv_field(GString *s, const char *text)
{
	if (strpbrk(text, ",\"\r\n") == NULL) {
		g_string_append(s, text);
		return;
	}
	g_string_append_c(s, '"');
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '"')
			g_string_append_c(s, '"');
		g_string_append_c(s, *p);
	}
	g_string_append_c(s, '"');
}

static void
pad_right(GString *s, const char *text, guint width)
{
	glong len = g_utf8_strlen(text, -1);

	g_string_append(s, text);
	for (glong i = len; i < (glong) width; i++)
		g_string_append_c(s, ' ');
}

/* One line of a table: @label, then @row's cell of each column (row -1: the headings). */
static void
table_line(GString *s, const char *indent, const char *label, guint label_width,
	   const char *const *heads, const char *const *cells, gint row, guint n_rows,
	   guint n_cols, const guint *widths)
{
	g_string_append(s, indent);
	pad_right(s, label, label_width);
	for (guint c = 0; c < n_cols; c++) {
		const char *text = row < 0 ? heads[c] : cells[c * n_rows + (guint) row];

		g_string_append(s, "  ");
		pad_right(s, text, c + 1 < n_cols ? widths[c] : 0);
	}
	g_string_append_c(s, '\n');
}

void
gs_batch_table(GString *s, const char *indent, guint label_width, const char *const *labels,
	       guint n_rows, const char *const *heads, guint n_cols, const char *const *cells)
{
	g_autofree guint *widths = g_new0(guint, n_cols);

	for (guint r = 0; r < n_rows; r++)
		label_width = MAX(label_width, (guint) g_utf8_strlen(labels[r], -1));
	for (guint c = 0; c < n_cols; c++) {
		widths[c] = (guint) g_utf8_strlen(heads[c], -1);
		for (guint r = 0; r < n_rows; r++)
			widths[c] = MAX(widths[c],
					(guint) g_utf8_strlen(cells[c * n_rows + r], -1));
	}
	table_line(s, indent, "", label_width, heads, cells, -1, n_rows, n_cols, widths);
	for (guint r = 0; r < n_rows; r++)
		table_line(s, indent, labels[r], label_width, heads, cells, (gint) r, n_rows,
			   n_cols, widths);
}

char *
gs_batch_file_stem(const char *label)
{
	GString *s = g_string_new(NULL);

	for (const char *p = label; *p != '\0'; p++)
		g_string_append_c(s, g_ascii_isalnum(*p) || strchr("._+-", *p) != NULL ? *p : '_');
	if (s->len == 0 || s->str[0] == '.')
		g_string_prepend_c(s, '_');
	return g_string_free(s, FALSE);
}
