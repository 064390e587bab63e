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

/* A built-in variant, one per OOM policy: what is compared when a scenario defines none (SPEC §3.6). */
static GsBatchVariant *
builtin_variant(const char *name)
{
	for (guint i = 0; i < GS_N_OOM_POLICIES; i++) {
		if (strcmp(name, gs_oom_policy_names[i]) == 0) {
			g_autofree char *set = g_strconcat("policy.oom=", name, NULL);

			return variant_new(name, NULL, set);
		}
	}
	return NULL;
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
	names = g_strsplit(requested, ",", -1);
	for (guint i = 0; names[i] != NULL; i++) {
		const char *name = g_strstrip(names[i]);
		GsBatchVariant *v;

		if (*name == '\0') {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "--variants: an empty name in '%s'", requested);
			return NULL;
		}
		for (guint k = 0; k < chosen->len; k++) {
			if (strcmp(((GsBatchVariant *) chosen->pdata[k])->label, name) == 0) {
				g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
					    "--variants: '%s' is named twice", name);
				return NULL;
			}
		}
		if ((v = resolve_variant(defined, name, error)) == NULL)
			return NULL;
		g_ptr_array_add(chosen, v);
	}
	return g_steal_pointer(&chosen);
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

gboolean
gs_batch_load(const char *path, GPtrArray *jobs, GError **error)
{
	for (guint i = 0; i < jobs->len; i++) {
		GsBatchJob *job = jobs->pdata[i];

		g_clear_pointer(&job->workload, gs_workload_free);
		job->workload = gs_loader_load(path, job->variant->variant,
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
gs_batch_csv_metrics(GString *s, const GsResult *r)
{
	const gint64 values[] = {
		r->makespan_ns,
		r->totals.tasks,
		r->totals.tasks_completed,
		r->totals.tasks_failed,
		r->totals.task_attempts,
		(gint64) r->totals.retries,
		(gint64) r->totals.splits,
		r->totals.blocked_ns,
		r->totals.lost_ns,
		r->totals.spill_block_ns,
		r->totals.semaphore_wait_ns,
		(gint64) r->totals.deadlocks_busted,
		(gint64) r->totals.deadlocks_unresolved,
		r->totals.spilled_gpu_to_host,
		r->totals.spilled_host_to_disk,
		r->totals.unspilled_host_to_gpu,
		r->totals.unspilled_disk_to_host,
		r->tiers[GS_TIER_GPU].peak_used,
		r->tiers[GS_TIER_HOST].peak_used,
		r->tiers[GS_TIER_DISK].peak_used,
		r->tiers[GS_TIER_GPU].mean_used,
		r->tiers[GS_TIER_GPU].capacity,
	};

	g_string_append(s, gs_outcome_name(r->outcome));
	for (guint i = 0; i < G_N_ELEMENTS(values); i++)
		g_string_append_printf(s, ",%" G_GINT64_FORMAT, values[i]);
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
