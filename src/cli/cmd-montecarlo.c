/*
 * gpusim: the `montecarlo` command: spark-rapids-jni's RmmSparkMonteCarlo on
 * the simulator, --iter random situations and what they add up to.
 *
 * This file decides what a situation is, how its seed is drawn, when it
 * counts as failed, and what is reported over all of them. A situation is
 * one workload made in code (no scenario file) by the mapping of
 * scenario/montecarlo.h: memory.gpu.capacity from --gpuMiB, executor.slots
 * from --parallel, policy.task_attempts --taskRetry + 1, ASYNC's failure
 * handler as policy.failure_callback {enabled, retries: 1}, --baseline as
 * policy.oom fail, and generate {model: montecarlo, ...} from the rest.
 *
 * Situation i (from 0) has the seed SplitMix64 gives as its (i+1)-th output
 * from the state --seed: z = --seed + (i+1) x 0x9E3779B97F4A7C15, then
 * SplitMix64's mix of z. The same --seed gives the same situations, and the
 * situations run on batch.h's workers with their results kept by index, so
 * --jobs changes only the time. Without --seed the seed is the clock, as the
 * tool's System.nanoTime() is; it is printed either way.
 *
 * Counting, as the tool's SituationRunner counts: "Tasks" are task attempts
 * (a task that fails once and then succeeds is one failed and one successful
 * attempt); a situation fails when a task fails for good (its attempts are
 * spent), and here also when the run ends in a deadlock or a timeout, whose
 * unfinished attempts count as failed. The tool's times are wall times; here
 * they are simulated: the situations' makespans, the tasks' spans, and the
 * run time that rollbacks threw away ("lost task computation").
 *
 * Beyond the tool: for retries, splits, lost and blocked time per situation,
 * the mean, the sample standard deviation and a 95% confidence interval of
 * the mean by the normal approximation (mean +/- 1.96 sd / sqrt(n)); the five
 * worst situations (most failed attempts, then most lost time) with their
 * seeds; --out=DIR writes each of them as a scenario `gpusim run` replays;
 * --json=FILE all of it with a row per situation. JSON and scenarios are one
 * output set (output.h): on an error neither is written.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/batch.h"
#include "cli/commands.h"
#include "report/output.h"

/* Situations run per batch: their results are folded into rows and freed, so memory stays flat. */
#define CHUNK 1024u
#define N_WORST 5u
#define MIB (G_GINT64_CONSTANT(1) << 20)

typedef struct {
	gint iter, num_tasks, parallel, task_retry, max_task_allocs, max_task_sleep;
	gint shuffle_threads, jobs;
	gint64 gpu_mib, task_max_mib;
	double skew_amount, template_change;
	gboolean skewed, use_template, baseline, quiet, no_log, debug_ooms;
	char *seed_text, *alloc_mode, *json, *out;
	guint64 seed;
} McOptions;

/* What one situation did. */
typedef struct {
	guint64 seed;
	GsOutcome outcome;
	gboolean failed;
	guint attempts, attempts_ok;
	guint64 retries, splits;
	GsTime lost_ns, blocked_ns, makespan_ns, task_ns;
} Situation;

/* The metrics with statistics, by name and accessor. */
typedef struct {
	const char *name;
	const char *unit; /* "" for counts */
	double (*value)(const Situation *s);
} Metric;

static double
value_retries(const Situation *s)
{
	return (double) s->retries;
}

static double
value_splits(const Situation *s)
{
	return (double) s->splits;
}

static double
value_lost(const Situation *s)
{
	return (double) s->lost_ns;
}

static double
value_blocked(const Situation *s)
{
	return (double) s->blocked_ns;
}

static const Metric metrics[] = {
	{"retries", "", value_retries},
	{"splits", "", value_splits},
	{"lost_ns", "ms", value_lost},
	{"blocked_ns", "ms", value_blocked},
};

typedef struct {
	double mean, sd, lo, hi;
} Stat;

/* ---- options ---- */

static gboolean
fail_usage(const char *format, const char *value)
{
	fprintf(stderr, "gpusim montecarlo: ");
	fprintf(stderr, format, value);
	fprintf(stderr, "\nTry 'gpusim montecarlo --help'.\n");
	return FALSE;
}

/* Only ASYNC's failure handler is modelled (montecarlo.h); the pool allocators are not. */
static gboolean
check_alloc_mode(const char *mode)
{
	if (mode == NULL || g_ascii_strcasecmp(mode, "ASYNC") == 0)
		return TRUE;
	if (g_ascii_strcasecmp(mode, "POOL") == 0 || g_ascii_strcasecmp(mode, "ARENA") == 0 ||
	    g_ascii_strcasecmp(mode, "CUDA") == 0)
		return fail_usage("--allocMode=%s is not modelled: only ASYNC (the default) is, "
				  "as policy.failure_callback",
				  mode);
	return fail_usage("unknown RMM allocation mode '%s' (POOL, ASYNC, ARENA or CUDA; only "
			  "ASYNC is modelled)",
			  mode);
}

static gboolean
check_seed(McOptions *o)
{
	gint64 seed;

	if (o->seed_text == NULL) {
		o->seed = (guint64) g_get_real_time() * 1000u;
		return TRUE;
	}
	if (!g_ascii_string_to_signed(o->seed_text, 10, G_MININT64, G_MAXINT64, &seed, NULL))
		return fail_usage("--seed=%s: expected an integer", o->seed_text);
	o->seed = (guint64) seed;
	return TRUE;
}

/* The tool's rules for values (parsePosInt and the like), and the model's bounds. */
static gboolean
check_options(McOptions *o)
{
	const struct {
		const char *name;
		gint64 value, min;
	} bounds[] = {
		{"--iter", o->iter, 1},
		{"--numTasks", o->num_tasks, 1},
		{"--parallel", o->parallel, 1},
		{"--gpuMiB", o->gpu_mib, 1},
		{"--taskMaxMiB", o->task_max_mib, 1},
		{"--taskRetry", o->task_retry, 0},
		{"--maxTaskAllocs", o->max_task_allocs, 1},
		{"--shuffleThreads", o->shuffle_threads, 0},
		{"--jobs", o->jobs, 0},
	};

	for (guint i = 0; i < G_N_ELEMENTS(bounds); i++) {
		if (bounds[i].value < bounds[i].min) {
			g_autofree char *text = g_strdup_printf(
				"%s must be at least %" G_GINT64_FORMAT, bounds[i].name, bounds[i].min);

			return fail_usage("%s", text);
		}
	}
	if (o->gpu_mib > G_MAXINT64 / MIB || o->task_max_mib > G_MAXINT64 / MIB)
		return fail_usage("%s", "--gpuMiB and --taskMaxMiB must be below 2^43");
	if ((guint64) o->num_tasks * (guint64) o->max_task_allocs > GS_MAX_THREADS)
		return fail_usage("%s", "--numTasks x --maxTaskAllocs is more allocations than "
					"model montecarlo plans (10000000)");
	/* The tool takes the absolute value of both, and treats a negative sleep as none. */
	o->skew_amount = fabs(o->skew_amount);
	o->template_change = fabs(o->template_change);
	o->max_task_sleep = MAX(o->max_task_sleep, 0);
	if (o->skewed)
		o->use_template = TRUE;
	if (o->jobs == 0)
		o->jobs = (gint) g_get_num_processors();
	return check_alloc_mode(o->alloc_mode) && check_seed(o);
}

/* ---- situations ---- */

/* The (@i+1)-th output of SplitMix64 started at @seed. */
static guint64
situation_seed(guint64 seed, guint64 i)
{
	guint64 z = seed + (i + 1) * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15);

	z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static void
fill_generate(GsGenerate *g, const McOptions *o)
{
	g->enabled = TRUE;
	g->model = GS_GENERATE_MONTECARLO;
	g->tasks = (guint) o->num_tasks;
	g->threads_per_task = 1;
	g->task_max = o->task_max_mib * MIB;
	g->max_allocs = (guint) o->max_task_allocs;
	g->max_compute = (GsTime) o->max_task_sleep * 1000000;
	g->retry_blocks = TRUE;
	g->skew_tasks = o->skewed ? 1 : 0;
	g->skew_factor = o->skew_amount;
	g->shuffle_threads = (guint) o->shuffle_threads;
	g->use_template = o->use_template;
	g->template_change = o->template_change;
	g->template_arithmetic = GS_TEMPLATE_INTENDED;
}

/* What situation_yaml() writes, made directly: the loader would give the same workload. */
static GsWorkload *
situation_workload(const McOptions *o, guint64 seed)
{
	GsWorkload *w = gs_workload_new();

	w->name = g_strdup("montecarlo");
	w->seed = seed;
	w->gpu.capacity = o->gpu_mib * MIB;
	w->executor_slots = (guint) o->parallel;
	w->policy.task_attempts = (guint) o->task_retry + 1;
	w->policy.failure_callback.enabled = TRUE;
	w->policy.failure_callback.retries = 1;
	if (o->baseline)
		w->policy.oom = GS_OOM_FAIL;
	fill_generate(&w->generate, o);
	return w;
}

/* @value in the fewest digits that read back as it (0.05, not 0.050000000000000003). */
static const char *
number_text(char *buf, gsize size, double value)
{
	for (int digits = 6; digits < 17; digits++) {
		g_autofree char *format = g_strdup_printf("%%.%dg", digits);

		g_ascii_formatd(buf, size, format, value);
		if (g_ascii_strtod(buf, NULL) == value)
			return buf;
	}
	return g_ascii_formatd(buf, size, "%.17g", value);
}

/* The options that make the situations, as the tool's command line. */
static char *
tool_options(const McOptions *o)
{
	char skew[G_ASCII_DTOSTR_BUF_SIZE], change[G_ASCII_DTOSTR_BUF_SIZE];

	return g_strdup_printf(
		"--numTasks=%d --parallel=%d --gpuMiB=%" G_GINT64_FORMAT " --taskMaxMiB=%" G_GINT64_FORMAT
		" --taskRetry=%d --maxTaskAllocs=%d --maxTaskSleep=%d --shuffleThreads=%d%s%s"
		" --skewAmount=%s --templateChangeAmount=%s%s",
		o->num_tasks, o->parallel, o->gpu_mib, o->task_max_mib, o->task_retry,
		o->max_task_allocs, o->max_task_sleep, o->shuffle_threads,
		o->skewed ? " --skewed" : "", o->use_template && !o->skewed ? " --useTemplate" : "",
		number_text(skew, sizeof skew, o->skew_amount),
		number_text(change, sizeof change, o->template_change),
		o->baseline ? " --baseline" : "");
}

/* Situation @index as a scenario file: `gpusim run` replays it. */
static char *
situation_yaml(const McOptions *o, guint index, guint64 seed)
{
	char skew[G_ASCII_DTOSTR_BUF_SIZE], change[G_ASCII_DTOSTR_BUF_SIZE];
	g_autofree char *options = tool_options(o);

	return g_strdup_printf(
		"gpusim: 1\n"
		"name: montecarlo-situation-%u\n"
		"description: >\n"
		"  Situation %u of gpusim montecarlo --seed=%" G_GINT64_FORMAT " %s\n"
		"seed: %" G_GUINT64_FORMAT "\n"
		"memory:\n"
		"  gpu: {capacity: %" G_GINT64_FORMAT "MiB}\n"
		"executor: {slots: %d}\n"
		"policy:\n"
		"%s"
		"  task_attempts: %d\n"
		"  failure_callback: {enabled: true, retries: 1}\n"
		"generate:\n"
		"  model: montecarlo\n"
		"  tasks: %d\n"
		"  task_max: %" G_GINT64_FORMAT "MiB\n"
		"  max_allocs: %d\n"
		"  max_compute: %dms\n"
		"  shuffle_threads: %d\n"
		"  template: %s\n"
		"  template_change: %s\n"
		"  skew: {tasks: %d, factor: %s}\n",
		index, index, (gint64) o->seed, options, seed, o->gpu_mib, o->parallel,
		o->baseline ? "  oom: fail\n" : "", o->task_retry + 1, o->num_tasks,
		o->task_max_mib, o->max_task_allocs, o->max_task_sleep, o->shuffle_threads,
		o->use_template ? "true" : "false",
		number_text(change, sizeof change, o->template_change), o->skewed ? 1 : 0,
		number_text(skew, sizeof skew, o->skew_amount));
}

/* The tool's "failed": a task failed for good, or the run was cut short. */
static gboolean
result_failed(const GsResult *r)
{
	return r->outcome != GS_OUTCOME_COMPLETED || r->totals.tasks_failed > 0;
}

static Situation
situation_of(const GsResult *r, guint64 seed)
{
	Situation s = {
		.seed = seed,
		.outcome = r->outcome,
		.failed = result_failed(r),
		.attempts = r->totals.task_attempts,
		.attempts_ok = r->totals.tasks_completed,
		.retries = r->totals.retries,
		.splits = r->totals.splits,
		.lost_ns = r->totals.lost_ns,
		.blocked_ns = r->totals.blocked_ns,
		.makespan_ns = r->makespan_ns,
	};

	for (guint i = 0; i < r->tasks->len; i++) {
		const GsTaskResult *t = r->tasks->pdata[i];

		s.task_ns += MAX(t->end_ns - t->start_ns, 0);
	}
	return s;
}

/* ---- progress: the tool's dots, on a terminal only ---- */

typedef struct {
	guint done, total;
} Progress;

static void
show_progress(const GsBatchJob *job, guint done, guint total, gpointer data)
{
	Progress *p = data;

	(void) done;
	(void) total;
	fputc(result_failed(job->result) ? 'f' : '.', stderr);
	if (++p->done % 100 == 0 || p->done == p->total)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Every situation, CHUNK at a time, into @rows (Situation, by index). */
static gboolean
run_situations(const McOptions *o, GArray *rows)
{
	Progress progress = {.total = (guint) o->iter};
	gboolean dots = !o->quiet && isatty(fileno(stderr));

	for (guint first = 0; first < (guint) o->iter; first += CHUNK) {
		guint n = MIN(CHUNK, (guint) o->iter - first);
		g_autoptr(GPtrArray) jobs =
			g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);
		g_autoptr(GError) error = NULL;

		for (guint i = 0; i < n; i++)
			g_ptr_array_add(jobs, gs_batch_job_new_workload(situation_workload(
						      o, situation_seed(o->seed, first + i))));
		if (!gs_batch_run(jobs, NULL, (guint) o->jobs, dots ? show_progress : NULL, &progress,
				  &error)) {
			fprintf(stderr, "gpusim montecarlo: %s\n", error->message);
			return FALSE;
		}
		for (guint i = 0; i < n; i++) {
			const GsBatchJob *job = jobs->pdata[i];
			Situation s = situation_of(job->result, job->workload->seed);

			g_array_append_val(rows, s);
		}
	}
	return TRUE;
}

/* ---- what they add up to ---- */

typedef struct {
	guint situations, failed;
	guint64 attempts, attempts_ok, retries, splits;
	GsTime lost_ns, blocked_ns, makespan_ns, task_ns;
} Totals;

static Totals
totals_of(GArray *rows)
{
	Totals t = {.situations = rows->len};

	for (guint i = 0; i < rows->len; i++) {
		const Situation *s = &g_array_index(rows, Situation, i);

		t.failed += s->failed;
		t.attempts += s->attempts;
		t.attempts_ok += s->attempts_ok;
		t.retries += s->retries;
		t.splits += s->splits;
		t.lost_ns += s->lost_ns;
		t.blocked_ns += s->blocked_ns;
		t.makespan_ns += s->makespan_ns;
		t.task_ns += s->task_ns;
	}
	return t;
}

/* Mean, sample sd and the normal approximation's 95% interval of the mean. */
static Stat
stat_of(GArray *rows, const Metric *m)
{
	double n = rows->len, sum = 0, squares = 0;
	Stat st;

	for (guint i = 0; i < rows->len; i++)
		sum += m->value(&g_array_index(rows, Situation, i));
	st.mean = sum / n;
	for (guint i = 0; i < rows->len; i++) {
		double d = m->value(&g_array_index(rows, Situation, i)) - st.mean;

		squares += d * d;
	}
	st.sd = rows->len > 1 ? sqrt(squares / (n - 1)) : 0;
	st.lo = st.mean - 1.96 * st.sd / sqrt(n);
	st.hi = st.mean + 1.96 * st.sd / sqrt(n);
	return st;
}

/* Most failed attempts first, then most lost time, then the lower index. */
static gint
compare_worst(gconstpointer a, gconstpointer b, gpointer data)
{
	GArray *rows = data;
	guint i = *(const guint *) a, j = *(const guint *) b;
	const Situation *x = &g_array_index(rows, Situation, i);
	const Situation *y = &g_array_index(rows, Situation, j);
	guint fx = x->attempts - x->attempts_ok, fy = y->attempts - y->attempts_ok;

	if (fx != fy)
		return fx > fy ? -1 : 1;
	if (x->lost_ns != y->lost_ns)
		return x->lost_ns > y->lost_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The indices of the (at most) N_WORST worst situations. */
static GArray *
worst_of(GArray *rows)
{
	GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(guint), rows->len);

	for (guint i = 0; i < rows->len; i++)
		g_array_append_val(order, i);
	g_array_sort_with_data(order, compare_worst, rows);
	g_array_set_size(order, MIN(order->len, N_WORST));
	return order;
}

/* ---- output ---- */

/* The tool's asTimeStr(): "HH:MM:SS.nnnnnnnnn or N ms". */
static char *
time_text(GsTime ns)
{
	gint64 s = ns / 1000000000;

	return g_strdup_printf("%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT
			       ".%09" G_GINT64_FORMAT " or %" G_GINT64_FORMAT " ms",
			       s / 3600, s / 60 % 60, s % 60, ns % 1000000000, ns / 1000000);
}

static void
print_summary(const Totals *t)
{
	g_autofree char *sit_time = time_text(t->makespan_ns);
	g_autofree char *task_time = time_text(t->task_ns);
	g_autofree char *lost_time = time_text(t->lost_ns);

	printf("Situations: %u total, %u successful, %u failed. %s\n", t->situations,
	       t->situations - t->failed, t->failed, sit_time);
	printf("Tasks: %" G_GUINT64_FORMAT " total, %" G_GUINT64_FORMAT " successful, %" G_GUINT64_FORMAT
	       " failed. %s taskTime %s lost task computation\n",
	       t->attempts, t->attempts_ok, t->attempts - t->attempts_ok, task_time, lost_time);
	printf("Exceptions: %" G_GUINT64_FORMAT " splits, %" G_GUINT64_FORMAT " retries.\n",
	       t->splits, t->retries);
}

static void
print_stats(GArray *rows)
{
	printf("\nper situation     %14s %14s   95%% CI of the mean (normal approx.)\n", "mean",
	       "sd");
	for (guint k = 0; k < G_N_ELEMENTS(metrics); k++) {
		const Metric *m = &metrics[k];
		Stat st = stat_of(rows, m);
		double div = *m->unit != '\0' ? 1e6 : 1;
		g_autofree char *label = *m->unit != '\0'
						 ? g_strdup_printf("%.*s (%s)",
								   (int) (strlen(m->name) - 3),
								   m->name, m->unit)
						 : g_strdup(m->name);

		printf("  %-15s %14.3f %14.3f   [%.3f, %.3f]\n", label, st.mean / div, st.sd / div,
		       st.lo / div, st.hi / div);
	}
}

static void
print_worst(GArray *rows, GArray *worst, const McOptions *o)
{
	printf("\nworst situations (by failed task attempts, then lost time):\n");
	for (guint k = 0; k < worst->len; k++) {
		guint i = g_array_index(worst, guint, k);
		const Situation *s = &g_array_index(rows, Situation, i);

		printf("  situation %u  seed %" G_GUINT64_FORMAT "  %s  %u failed attempts  lost "
		       "%.3f ms  %" G_GUINT64_FORMAT " retries  %" G_GUINT64_FORMAT " splits\n",
		       i, s->seed, gs_outcome_name(s->outcome), s->attempts - s->attempts_ok,
		       (double) s->lost_ns / 1e6, s->retries, s->splits);
		if (o->out != NULL)
			printf("    replay: gpusim run %s/situation-%u.yaml\n", o->out, i);
	}
	if (o->out == NULL)
		printf("  (--out=DIR writes each as a scenario for 'gpusim run')\n");
}

static void
json_double(GString *s, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.9g", value));
}

static void
json_number(GString *s, const char *key, double value)
{
	g_string_append_printf(s, "\"%s\": ", key);
	json_double(s, value);
}

static void
json_stats(GString *s, GArray *rows)
{
	g_string_append(s, "  \"stats\": {\n");
	for (guint k = 0; k < G_N_ELEMENTS(metrics); k++) {
		Stat st = stat_of(rows, &metrics[k]);

		g_string_append_printf(s, "    \"%s\": {", metrics[k].name);
		json_number(s, "mean", st.mean);
		g_string_append(s, ", ");
		json_number(s, "sd", st.sd);
		g_string_append(s, ", \"ci95\": [");
		json_double(s, st.lo);
		g_string_append(s, ", ");
		json_double(s, st.hi);
		g_string_append_printf(s, "]}%s\n", k + 1 < G_N_ELEMENTS(metrics) ? "," : "");
	}
	g_string_append(s, "  },\n");
}

static char *
json_text(GArray *rows, const Totals *t, const McOptions *o)
{
	GString *s = g_string_new("{\n");
	g_autofree char *options = tool_options(o);

	g_string_append_printf(s, "  \"seed\": %" G_GINT64_FORMAT ",\n  \"options\": \"%s\",\n",
			       (gint64) o->seed, options);
	g_string_append_printf(
		s,
		"  \"situations\": %u,\n  \"situations_failed\": %u,\n  \"tasks\": %" G_GUINT64_FORMAT
		",\n  \"tasks_failed\": %" G_GUINT64_FORMAT ",\n  \"retries\": %" G_GUINT64_FORMAT
		",\n  \"splits\": %" G_GUINT64_FORMAT ",\n  \"lost_ns\": %" G_GINT64_FORMAT
		",\n  \"blocked_ns\": %" G_GINT64_FORMAT ",\n",
		t->situations, t->failed, t->attempts, t->attempts - t->attempts_ok, t->retries,
		t->splits, t->lost_ns, t->blocked_ns);
	json_stats(s, rows);
	g_string_append(s, "  \"per_situation\": [\n");
	for (guint i = 0; i < rows->len; i++) {
		const Situation *r = &g_array_index(rows, Situation, i);

		g_string_append_printf(
			s,
			"    {\"seed\": %" G_GUINT64_FORMAT ", \"outcome\": \"%s\", \"failed\": %s, "
			"\"tasks\": %u, \"tasks_failed\": %u, \"retries\": %" G_GUINT64_FORMAT
			", \"splits\": %" G_GUINT64_FORMAT ", \"lost_ns\": %" G_GINT64_FORMAT
			", \"blocked_ns\": %" G_GINT64_FORMAT "}%s\n",
			r->seed, gs_outcome_name(r->outcome), r->failed ? "true" : "false",
			r->attempts, r->attempts - r->attempts_ok, r->retries, r->splits, r->lost_ns,
			r->blocked_ns, i + 1 < rows->len ? "," : "");
	}
	g_string_append(s, "  ]\n}\n");
	return g_string_free(s, FALSE);
}

/* Writes the JSON and the worst situations' scenarios, all or nothing. */
static gboolean
write_outputs(GArray *rows, GArray *worst, const Totals *t, const McOptions *o)
{
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GError) error = NULL;
	GsOutput *out;

	if (o->json != NULL) {
		g_autofree char *text = json_text(rows, t, o);

		if ((out = gs_output_set_add(set, o->json, &error)) == NULL ||
		    !gs_output_write(out, text, &error))
			goto failed;
	}
	if (o->out != NULL && !gs_output_set_make_dir(set, o->out, &error))
		goto failed;
	for (guint k = 0; o->out != NULL && k < worst->len; k++) {
		guint i = g_array_index(worst, guint, k);
		g_autofree char *name = g_strdup_printf("situation-%u.yaml", i);
		g_autofree char *text =
			situation_yaml(o, i, g_array_index(rows, Situation, i).seed);

		if ((out = gs_output_set_add_in(set, o->out, name, &error)) == NULL ||
		    !gs_output_write(out, text, &error))
			goto failed;
	}
	if (gs_output_set_commit(set, &error))
		return TRUE;
failed:
	fprintf(stderr, "gpusim montecarlo: %s\n", error->message);
	return FALSE;
}

static int
montecarlo(const McOptions *o)
{
	g_autoptr(GArray) rows = g_array_sized_new(FALSE, FALSE, sizeof(Situation), (guint) o->iter);
	g_autoptr(GArray) worst = NULL;
	Totals t;

	if (!run_situations(o, rows))
		return GS_EXIT_USAGE;
	t = totals_of(rows);
	worst = worst_of(rows);
	if (!write_outputs(rows, worst, &t, o))
		return GS_EXIT_USAGE;
	printf("Monte Carlo: %d situations, --seed=%" G_GINT64_FORMAT " (simulated times)\n",
	       o->iter, (gint64) o->seed);
	print_summary(&t);
	print_stats(rows);
	print_worst(rows, worst, o);
	return GS_EXIT_OK;
}

static const char description[] =
	"Each situation is one generated workload (generate.model montecarlo, as\n"
	"src/scenario/montecarlo.h maps the options): situation i (from 0) has the seed\n"
	"SplitMix64 gives as its (i+1)-th output from --seed, so the same --seed gives\n"
	"the same situations, whatever --jobs is. Without --seed the clock is the seed.\n"
	"\n"
	"Counting, as the tool's: Tasks are task attempts; a situation fails when a task\n"
	"fails for good (after --taskRetry retries), or, here, when the run ends in a\n"
	"deadlock or timeout (its unfinished attempts count as failed). Times are\n"
	"simulated. For retries, splits, lost and blocked time per situation: mean,\n"
	"sample sd and a 95% confidence interval of the mean by the normal\n"
	"approximation, mean +/- 1.96 sd / sqrt(n). Then the 5 worst situations (most\n"
	"failed attempts, then most lost time) with their seeds.\n"
	"\n"
	"Not as the tool: --allocMode POOL, ARENA and CUDA are refused (exit 2): only\n"
	"ASYNC's failure handler is modelled. --taskRetry=0 and --shuffleThreads=0 are\n"
	"taken. --noLog and --debugOOMs are taken and do nothing.\n"
	"\n"
	"Exit status: 0 every situation ran (whatever its outcome); 2 bad usage or an\n"
	"output that could not be written.";

int
gs_cmd_montecarlo(int argc, char **argv)
{
	McOptions o = {.iter = 500, .num_tasks = 12, .parallel = 4, .gpu_mib = 1024,
		       .task_max_mib = 300, .task_retry = 3, .max_task_allocs = 50,
		       .max_task_sleep = 100, .skew_amount = 2.0, .template_change = 0.05};
	GOptionEntry entries[] = {
		{"iter", 0, 0, G_OPTION_ARG_INT, &o.iter, "Situations to run (default 500)", "N"},
		{"numTasks", 0, 0, G_OPTION_ARG_INT, &o.num_tasks, "Tasks per situation (default 12)",
		 "N"},
		{"parallel", 0, 0, G_OPTION_ARG_INT, &o.parallel,
		 "Tasks at once on the GPU: executor.slots (default 4)", "N"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &o.seed_text,
		 "The seed the situations' seeds come from (default: the clock)", "N"},
		{"gpuMiB", 0, 0, G_OPTION_ARG_INT64, &o.gpu_mib, "GPU memory in MiB (default 1024)",
		 "N"},
		{"taskMaxMiB", 0, 0, G_OPTION_ARG_INT64, &o.task_max_mib,
		 "Most a task holds at once, in MiB (default 300)", "N"},
		{"taskRetry", 0, 0, G_OPTION_ARG_INT, &o.task_retry,
		 "Re-attempts of a failed task (default 3)", "N"},
		{"maxTaskAllocs", 0, 0, G_OPTION_ARG_INT, &o.max_task_allocs,
		 "Most allocations of a task (default 50)", "N"},
		{"maxTaskSleep", 0, 0, G_OPTION_ARG_INT, &o.max_task_sleep,
		 "Most compute time of a task, in ms (default 100)", "MS"},
		{"shuffleThreads", 0, 0, G_OPTION_ARG_INT, &o.shuffle_threads,
		 "Shuffle threads making tasks' first allocations (default 0)", "N"},
		{"allocMode", 0, 0, G_OPTION_ARG_STRING, &o.alloc_mode,
		 "RMM allocation mode: only ASYNC (the default) is modelled", "MODE"},
		{"skewed", 0, 0, G_OPTION_ARG_NONE, &o.skewed,
		 "Templated tasks, one of them skewed by --skewAmount", NULL},
		{"skewAmount", 0, 0, G_OPTION_ARG_DOUBLE, &o.skew_amount,
		 "Factor of the skewed task's allocations (default 2.0)", "X"},
		{"useTemplate", 0, 0, G_OPTION_ARG_NONE, &o.use_template,
		 "Every task varies one template by --templateChangeAmount", NULL},
		{"templateChangeAmount", 0, 0, G_OPTION_ARG_DOUBLE, &o.template_change,
		 "How much a task varies the template (default 0.05)", "X"},
		{"baseline", 0, 0, G_OPTION_ARG_NONE, &o.baseline,
		 "Without the retry state machine: policy.oom fail", NULL},
		{"noLog", 0, 0, G_OPTION_ARG_NONE, &o.no_log, "Taken, for the tool's sake; no effect",
		 NULL},
		{"debugOOMs", 0, 0, G_OPTION_ARG_NONE, &o.debug_ooms,
		 "Taken, for the tool's sake; no effect", NULL},
		{"jobs", 'j', 0, G_OPTION_ARG_INT, &o.jobs,
		 "Situations at once (default: one per processor)", "N"},
		{"json", 0, 0, G_OPTION_ARG_FILENAME, &o.json,
		 "Write totals, statistics and a row per situation as JSON (- for stdout)", "FILE"},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out,
		 "Write the worst situations as scenarios in DIR", "DIR"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet, "Print no progress dots", NULL},
		G_OPTION_ENTRY_NULL,
	};
	g_autoptr(GOptionContext) context = g_option_context_new(NULL);
	g_autoptr(GError) error = NULL;
	int status = GS_EXIT_USAGE;

	g_option_context_set_summary(
		context, "Run spark-rapids-jni's RmmSparkMonteCarlo on the simulator: --iter random "
			 "situations,\ntheir tasks, splits and retries, with the tool's options.");
	g_option_context_set_description(context, description);
	g_option_context_add_main_entries(context, entries, NULL);
	if (!g_option_context_parse(context, &argc, &argv, &error))
		fprintf(stderr, "gpusim montecarlo: %s\nTry 'gpusim montecarlo --help'.\n",
			error->message);
	else if (argc > 1)
		fail_usage("unexpected argument '%s'", argv[1]);
	else if (check_options(&o))
		status = montecarlo(&o);
	g_free(o.seed_text);
	g_free(o.alloc_mode);
	g_free(o.json);
	g_free(o.out);
	return status;
}
