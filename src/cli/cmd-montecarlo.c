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
 * --json=FILE all of it with a row per situation.
 *
 * Policies side by side: --policies names OOM policies as compare's built-in
 * variants are named (batch.h decides the names), and every situation, made
 * once from its seed, runs under each, as its own job, so a policy's
 * figures are what a run under that policy alone gives. Without it the
 * policy is retry, or fail under --baseline, and the output is the tool's.
 * --plots=DIR draws, per distribution over tasks (task time, retries, time
 * blocked), the empirical CDF of every task of every situation that ended,
 * a curve per policy, with plot.h's CDF and plots/cdf.gp. JSON, scenarios and
 * plots are one output set (output.h): on an error none is written.
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
#include "report/plot.h"

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
	char *seed_text, *alloc_mode, *json, *out, *policies_text, *plots;
	guint64 seed;
	GsOomPolicy policies[GS_N_OOM_POLICIES]; /* what each situation runs under, in order */
	guint n_policies;
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

/*
 * --policies: compare's built-in variants, by batch.h's rule; without it the
 * one policy the tool's flags give (retry, or fail with --baseline).
 */
static gboolean
check_policies(McOptions *o)
{
	g_auto(GStrv) names = NULL;
	g_autoptr(GError) error = NULL;

	if (o->policies_text == NULL) {
		o->policies[o->n_policies++] = o->baseline ? GS_OOM_FAIL : GS_OOM_RETRY;
		return TRUE;
	}
	if (o->baseline)
		return fail_usage("%s", "--baseline is the policy fail: name it in --policies");
	if ((names = gs_batch_split_names("--policies", o->policies_text, &error)) == NULL)
		return fail_usage("%s", error->message);
	for (guint i = 0; names[i] != NULL; i++) {
		GsOomPolicy oom;

		if (!gs_batch_builtin_policy(names[i], &oom)) {
			g_autofree char *known = g_strjoinv(", ", (char **) gs_oom_policy_names);
			g_autofree char *text = g_strdup_printf(
				"--policies: unknown policy '%s' (one of %s)", names[i], known);

			return fail_usage("%s", text);
		}
		/* Distinct names, so at most one of each policy. */
		o->policies[o->n_policies++] = oom;
	}
	return TRUE;
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
	return check_alloc_mode(o->alloc_mode) && check_policies(o) && check_seed(o);
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
situation_workload(const McOptions *o, guint64 seed, GsOomPolicy oom)
{
	GsWorkload *w = gs_workload_new();

	w->name = g_strdup("montecarlo");
	w->seed = seed;
	w->gpu.capacity = o->gpu_mib * MIB;
	w->executor_slots = (guint) o->parallel;
	w->policy.task_attempts = (guint) o->task_retry + 1;
	w->policy.failure_callback.enabled = TRUE;
	w->policy.failure_callback.retries = 1;
	w->policy.oom = oom;
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

/* Situation @index under @oom as a scenario file: `gpusim run` replays it. */
static char *
situation_yaml(const McOptions *o, guint index, guint64 seed, GsOomPolicy oom)
{
	char skew[G_ASCII_DTOSTR_BUF_SIZE], change[G_ASCII_DTOSTR_BUF_SIZE];
	g_autofree char *options = tool_options(o);
	g_autofree char *under = o->policies_text != NULL
					 ? g_strdup_printf(", under policy.oom %s",
							   gs_oom_policy_names[oom])
					 : g_strdup("");
	/* retry is the default: written out only when it is not the policy. */
	g_autofree char *oom_line = oom != GS_OOM_RETRY ? g_strdup_printf(
							    "  oom: %s\n", gs_oom_policy_names[oom])
						      : g_strdup("");

	return g_strdup_printf(
		"gpusim: 1\n"
		"name: montecarlo-situation-%u\n"
		"description: >\n"
		"  Situation %u of gpusim montecarlo --seed=%" G_GINT64_FORMAT " %s%s\n"
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
		index, index, (gint64) o->seed, options, under, seed, o->gpu_mib, o->parallel,
		oom_line, o->task_retry + 1, o->num_tasks,
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

/* ---- the situations under each policy ---- */

/* The distributions over tasks that --plots draws, a CDF each. */
typedef struct {
	const char *stem; /* the files cdf-STEM.csv, .png and .svg */
	const char *what; /* the x axis */
	gboolean is_time; /* in nanoseconds */
	double (*value)(const GsTaskResult *t);
} Distribution;

static double
task_time(const GsTaskResult *t)
{
	return (double) MAX(t->end_ns - t->start_ns, 0);
}

static double
task_retries(const GsTaskResult *t)
{
	return (double) t->retries;
}

static double
task_blocked(const GsTaskResult *t)
{
	return (double) t->blocked_ns;
}

static const Distribution distributions[] = {
	{"task-time", "task time, first start to end", TRUE, task_time},
	{"retries", "retries per task", FALSE, task_retries},
	{"blocked", "time blocked per task", TRUE, task_blocked},
};

/* What the situations did under one policy. */
typedef struct {
	GsOomPolicy oom;
	GArray *rows; /* Situation, by situation index */
	/*
	 * With --plots, per distribution, a double per task that ended (completed
	 * or failed): unlike the rows, these grow with the tasks of all situations.
	 */
	GArray *per_task[G_N_ELEMENTS(distributions)];
	guint64 tasks, tasks_ended;
} PolicyRuns;

static void
policy_runs_init(PolicyRuns *runs, GsOomPolicy oom, const McOptions *o)
{
	*runs = (PolicyRuns){.oom = oom};
	runs->rows = g_array_sized_new(FALSE, FALSE, sizeof(Situation), (guint) o->iter);
	for (guint k = 0; o->plots != NULL && k < G_N_ELEMENTS(distributions); k++)
		runs->per_task[k] = g_array_new(FALSE, FALSE, sizeof(double));
}

static void
policy_runs_clear(PolicyRuns *runs)
{
	g_array_unref(runs->rows);
	for (guint k = 0; k < G_N_ELEMENTS(distributions); k++)
		g_clear_pointer(&runs->per_task[k], g_array_unref);
}

/*
 * A task cut short by a deadlock or timeout has no time of its own to
 * show (one never started spans the whole run), so the distributions
 * count only the tasks that ended; the curves' titles say how many.
 */
static void
add_tasks(PolicyRuns *runs, const GsResult *r)
{
	for (guint i = 0; i < r->tasks->len; i++) {
		const GsTaskResult *t = r->tasks->pdata[i];

		runs->tasks++;
		if (t->outcome != GS_OUTCOME_COMPLETED && t->outcome != GS_OUTCOME_FAILED)
			continue;
		runs->tasks_ended++;
		for (guint k = 0; k < G_N_ELEMENTS(distributions) && runs->per_task[k] != NULL;
		     k++) {
			double v = distributions[k].value(t);

			g_array_append_val(runs->per_task[k], v);
		}
	}
}

/*
 * Every situation under every policy, CHUNK situations at a time: job
 * i x n_policies + p is situation i under policy p, and its row goes to
 * runs[p] at index i, whichever worker ran it.
 */
static gboolean
run_situations(const McOptions *o, PolicyRuns *runs)
{
	Progress progress = {.total = (guint) o->iter * o->n_policies};
	gboolean dots = !o->quiet && isatty(fileno(stderr));

	for (guint first = 0; first < (guint) o->iter; first += CHUNK) {
		guint n = MIN(CHUNK, (guint) o->iter - first);
		g_autoptr(GPtrArray) jobs =
			g_ptr_array_new_with_free_func((GDestroyNotify) gs_batch_job_free);
		g_autoptr(GError) error = NULL;

		for (guint i = 0; i < n; i++) {
			guint64 seed = situation_seed(o->seed, first + i);

			for (guint p = 0; p < o->n_policies; p++)
				g_ptr_array_add(jobs, gs_batch_job_new_workload(situation_workload(
							      o, seed, o->policies[p])));
		}
		if (!gs_batch_run(jobs, NULL, (guint) o->jobs, dots ? show_progress : NULL, &progress,
				  &error)) {
			fprintf(stderr, "gpusim montecarlo: %s\n", error->message);
			return FALSE;
		}
		for (guint j = 0; j < jobs->len; j++) {
			const GsBatchJob *job = jobs->pdata[j];
			PolicyRuns *under = &runs[j % o->n_policies];
			Situation s = situation_of(job->result, job->workload->seed);

			g_array_append_val(under->rows, s);
			add_tasks(under, job->result);
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

/* The tool's three lines, each after @indent. */
static void
print_summary(const Totals *t, const char *indent)
{
	g_autofree char *sit_time = time_text(t->makespan_ns);
	g_autofree char *task_time = time_text(t->task_ns);
	g_autofree char *lost_time = time_text(t->lost_ns);

	printf("%sSituations: %u total, %u successful, %u failed. %s\n", indent, t->situations,
	       t->situations - t->failed, t->failed, sit_time);
	printf("%sTasks: %" G_GUINT64_FORMAT " total, %" G_GUINT64_FORMAT " successful, %" G_GUINT64_FORMAT
	       " failed. %s taskTime %s lost task computation\n",
	       indent, t->attempts, t->attempts_ok, t->attempts - t->attempts_ok, task_time,
	       lost_time);
	printf("%sExceptions: %" G_GUINT64_FORMAT " splits, %" G_GUINT64_FORMAT " retries.\n", indent,
	       t->splits, t->retries);
}

/* "retries", or "lost (ms)" for lost_ns: the name and the unit its figures are in. */
static char *
metric_label(const Metric *m)
{
	if (*m->unit == '\0')
		return g_strdup(m->name);
	return g_strdup_printf("%.*s (%s)", (int) (strlen(m->name) - 3), m->name, m->unit);
}

/* What a metric's figures are divided by to be in its unit. */
static double
metric_div(const Metric *m)
{
	return *m->unit != '\0' ? 1e6 : 1;
}

static void
print_stats(GArray *rows)
{
	printf("\nper situation     %14s %14s   95%% CI of the mean (normal approx.)\n", "mean",
	       "sd");
	for (guint k = 0; k < G_N_ELEMENTS(metrics); k++) {
		const Metric *m = &metrics[k];
		Stat st = stat_of(rows, m);
		double div = metric_div(m);
		g_autofree char *label = metric_label(m);

		printf("  %-15s %14.3f %14.3f   [%.3f, %.3f]\n", label, st.mean / div, st.sd / div,
		       st.lo / div, st.hi / div);
	}
}

/*
 * With --policies: a row per figure and a column per policy, each metric
 * as its mean and the 95% interval of the mean, so a comparison reads
 * across.
 */
static void
print_side_by_side(const PolicyRuns *runs, const McOptions *o)
{
	guint n_rows = 2 + G_N_ELEMENTS(metrics);
	g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) cells = g_ptr_array_new_with_free_func(g_free); /* by column */
	g_autofree const char **heads = g_new(const char *, o->n_policies);
	g_autoptr(GString) s =
		g_string_new("\nper situation: mean [95% CI of the mean, normal approx.]\n");

	g_ptr_array_add(labels, g_strdup("failed situations"));
	g_ptr_array_add(labels, g_strdup("failed attempts"));
	for (guint k = 0; k < G_N_ELEMENTS(metrics); k++)
		g_ptr_array_add(labels, metric_label(&metrics[k]));
	for (guint c = 0; c < o->n_policies; c++) {
		Totals t = totals_of(runs[c].rows);

		heads[c] = gs_oom_policy_names[runs[c].oom];
		g_ptr_array_add(cells, g_strdup_printf("%u of %u", t.failed, t.situations));
		g_ptr_array_add(cells, g_strdup_printf("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT,
						       t.attempts - t.attempts_ok, t.attempts));
		for (guint k = 0; k < G_N_ELEMENTS(metrics); k++) {
			Stat st = stat_of(runs[c].rows, &metrics[k]);
			double div = metric_div(&metrics[k]);

			g_ptr_array_add(cells, g_strdup_printf("%.3f [%.3f, %.3f]", st.mean / div,
							       st.lo / div, st.hi / div));
		}
	}
	gs_batch_table(s, "  ", 0, (const char *const *) labels->pdata, n_rows, heads,
		       o->n_policies, (const char *const *) cells->pdata);
	fputs(s->str, stdout);
}

/* The scenario file --out writes for situation @index under @oom. */
static char *
situation_file(const McOptions *o, guint index, GsOomPolicy oom)
{
	if (o->policies_text == NULL)
		return g_strdup_printf("situation-%u.yaml", index);
	return g_strdup_printf("situation-%u-%s.yaml", index, gs_oom_policy_names[oom]);
}

static void
print_worst(const PolicyRuns *runs, GArray *worst, const McOptions *o)
{
	if (o->policies_text == NULL)
		printf("\nworst situations (by failed task attempts, then lost time):\n");
	else
		printf("\nworst situations under %s (by failed task attempts, then lost time):\n",
		       gs_oom_policy_names[runs->oom]);
	for (guint k = 0; k < worst->len; k++) {
		guint i = g_array_index(worst, guint, k);
		const Situation *s = &g_array_index(runs->rows, Situation, i);

		printf("  situation %u  seed %" G_GUINT64_FORMAT "  %s  %u failed attempts  lost "
		       "%.3f ms  %" G_GUINT64_FORMAT " retries  %" G_GUINT64_FORMAT " splits\n",
		       i, s->seed, gs_outcome_name(s->outcome), s->attempts - s->attempts_ok,
		       (double) s->lost_ns / 1e6, s->retries, s->splits);
		if (o->out != NULL) {
			g_autofree char *file = situation_file(o, i, runs->oom);

			printf("    replay: gpusim run %s/%s\n", o->out, file);
		}
	}
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
json_stats(GString *s, GArray *rows, const char *indent)
{
	g_string_append_printf(s, "%s\"stats\": {\n", indent);
	for (guint k = 0; k < G_N_ELEMENTS(metrics); k++) {
		Stat st = stat_of(rows, &metrics[k]);

		g_string_append_printf(s, "%s  \"%s\": {", indent, metrics[k].name);
		json_number(s, "mean", st.mean);
		g_string_append(s, ", ");
		json_number(s, "sd", st.sd);
		g_string_append(s, ", \"ci95\": [");
		json_double(s, st.lo);
		g_string_append(s, ", ");
		json_double(s, st.hi);
		g_string_append_printf(s, "]}%s\n", k + 1 < G_N_ELEMENTS(metrics) ? "," : "");
	}
	g_string_append_printf(s, "%s},\n", indent);
}

/* The figures of one policy's runs, as members of an object, each line after @indent. */
static void
json_results(GString *s, GArray *rows, const char *indent)
{
	Totals t = totals_of(rows);
	const struct {
		const char *key;
		gint64 value;
	} totals[] = {
		{"situations_failed", t.failed},
		{"tasks", (gint64) t.attempts},
		{"tasks_failed", (gint64) (t.attempts - t.attempts_ok)},
		{"retries", (gint64) t.retries},
		{"splits", (gint64) t.splits},
		{"lost_ns", t.lost_ns},
		{"blocked_ns", t.blocked_ns},
	};

	for (guint k = 0; k < G_N_ELEMENTS(totals); k++)
		g_string_append_printf(s, "%s\"%s\": %" G_GINT64_FORMAT ",\n", indent, totals[k].key,
				       totals[k].value);
	json_stats(s, rows, indent);
	g_string_append_printf(s, "%s\"per_situation\": [\n", indent);
	for (guint i = 0; i < rows->len; i++) {
		const Situation *r = &g_array_index(rows, Situation, i);

		g_string_append_printf(
			s,
			"%s  {\"seed\": %" G_GUINT64_FORMAT ", \"outcome\": \"%s\", \"failed\": %s, "
			"\"tasks\": %u, \"tasks_failed\": %u, \"retries\": %" G_GUINT64_FORMAT
			", \"splits\": %" G_GUINT64_FORMAT ", \"lost_ns\": %" G_GINT64_FORMAT
			", \"blocked_ns\": %" G_GINT64_FORMAT "}%s\n",
			indent, r->seed, gs_outcome_name(r->outcome), r->failed ? "true" : "false",
			r->attempts, r->attempts - r->attempts_ok, r->retries, r->splits, r->lost_ns,
			r->blocked_ns, i + 1 < rows->len ? "," : "");
	}
	g_string_append_printf(s, "%s]\n", indent);
}

/*
 * One policy: its figures at the top level. With --policies: "policies",
 * an object with each policy's figures under its name, in the order given.
 */
static char *
json_text(const PolicyRuns *runs, const McOptions *o)
{
	GString *s = g_string_new("{\n");
	g_autofree char *options = tool_options(o);

	g_string_append_printf(s,
			       "  \"seed\": %" G_GINT64_FORMAT ",\n  \"options\": \"%s\",\n"
			       "  \"situations\": %d,\n",
			       (gint64) o->seed, options, o->iter);
	if (o->policies_text == NULL) {
		json_results(s, runs[0].rows, "  ");
		g_string_append(s, "}\n");
		return g_string_free(s, FALSE);
	}
	g_string_append(s, "  \"policies\": {\n");
	for (guint p = 0; p < o->n_policies; p++) {
		g_string_append_printf(s, "    \"%s\": {\n", gs_oom_policy_names[runs[p].oom]);
		json_results(s, runs[p].rows, "      ");
		g_string_append_printf(s, "    }%s\n", p + 1 < o->n_policies ? "," : "");
	}
	g_string_append(s, "  }\n}\n");
	return g_string_free(s, FALSE);
}

/* ---- plots ---- */

/* Points per CDF curve at most: finer than a picture shows, and a small file. */
#define CDF_POINTS 400u

/* A curve's title: its policy, and how many tasks it counts. */
static char *
curve_title(const PolicyRuns *runs)
{
	const char *name = gs_oom_policy_names[runs->oom];

	if (runs->tasks_ended == runs->tasks)
		return g_strdup_printf("%s: %" G_GUINT64_FORMAT " tasks", name, runs->tasks);
	return g_strdup_printf("%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
			       " tasks ended (the rest cut short)",
			       name, runs->tasks_ended, runs->tasks);
}

/* Writes cdf-STEM.csv of distribution @k and sets cdf.gp's variables; FALSE with @error set. */
static gboolean
write_cdf_data(const PolicyRuns *runs, guint k, GsOutput *data, GString *vars,
	       const McOptions *o, GError **error)
{
	g_autoptr(GPtrArray) samples = g_ptr_array_new();
	g_autoptr(GPtrArray) titles = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) csv = g_string_new(NULL);
	g_autofree char *heading = g_strdup_printf(
		"%s, over the tasks of %d situations (--seed=%" G_GINT64_FORMAT ")",
		distributions[k].what, o->iter, (gint64) o->seed);

	for (guint p = 0; p < o->n_policies; p++) {
		g_ptr_array_add(samples, runs[p].per_task[k]);
		g_ptr_array_add(titles, curve_title(&runs[p]));
	}
	gs_plot_cdf_inputs(samples, (const char *const *) titles->pdata, distributions[k].what,
			   distributions[k].is_time, CDF_POINTS, csv, vars);
	gs_plot_set_string(vars, "heading", heading);
	gs_plot_set_string(vars, "file", gs_output_staged_path(data, NULL));
	return gs_output_write(data, csv->str, error);
}

/*
 * --plots: per distribution, cdf-STEM.csv and, when gnuplot is there, its
 * CDF as PNG and SVG. Returns the exit status: GS_EXIT_USAGE when an
 * output was refused, GS_EXIT_INTERNAL when a plot failed.
 */
static int
write_plots(GsOutputSet *set, const PolicyRuns *runs, const McOptions *o)
{
	g_autoptr(GsPlotter) plotter = gs_plotter_new();
	gboolean plotting = gs_plotter_missing(plotter) == NULL;
	g_autoptr(GError) error = NULL;

	if (!gs_output_set_make_dir(set, o->plots, &error))
		goto refused;
	for (guint k = 0; k < G_N_ELEMENTS(distributions); k++) {
		g_autofree char *stem = g_strconcat("cdf-", distributions[k].stem, NULL);
		g_autofree char *csv_name = g_strconcat(stem, ".csv", NULL);
		g_autofree char *png_name = g_strconcat(stem, ".png", NULL);
		g_autofree char *svg_name = g_strconcat(stem, ".svg", NULL);
		g_autoptr(GString) vars = g_string_new(NULL);
		GsOutput *data, *png = NULL, *svg = NULL;

		if ((data = gs_output_set_add_in(set, o->plots, csv_name, &error)) == NULL ||
		    (plotting &&
		     ((png = gs_output_set_add_in(set, o->plots, png_name, &error)) == NULL ||
		      (svg = gs_output_set_add_in(set, o->plots, svg_name, &error)) == NULL)) ||
		    !write_cdf_data(runs, k, data, vars, o, &error))
			goto refused;
		if (plotting && !gs_plotter_draw(plotter, "cdf.gp", vars, png, svg, &error)) {
			fprintf(stderr, "gpusim montecarlo: the %s plot failed: %s\n", stem,
				error->message);
			return GS_EXIT_INTERNAL;
		}
	}
	if (!plotting)
		fprintf(stderr, "gpusim montecarlo: plots skipped: %s. The data is in %s "
				"(cdf-*.csv); install gnuplot (e.g. apt-get install gnuplot-nox) "
				"and run the command again to draw them.\n",
			gs_plotter_missing(plotter), o->plots);
	return GS_EXIT_OK;
refused:
	fprintf(stderr, "gpusim montecarlo: %s\n", error->message);
	return GS_EXIT_USAGE;
}

/* ---- the command ---- */

/* The worst situations' scenarios, under each policy, into --out. */
static gboolean
write_scenarios(GsOutputSet *set, const PolicyRuns *runs, GArray *const *worst,
		const McOptions *o, GError **error)
{
	GsOutput *out;

	if (!gs_output_set_make_dir(set, o->out, error))
		return FALSE;
	for (guint p = 0; p < o->n_policies; p++) {
		for (guint k = 0; k < worst[p]->len; k++) {
			guint i = g_array_index(worst[p], guint, k);
			g_autofree char *name = situation_file(o, i, runs[p].oom);
			g_autofree char *text = situation_yaml(
				o, i, g_array_index(runs[p].rows, Situation, i).seed, runs[p].oom);

			if ((out = gs_output_set_add_in(set, o->out, name, error)) == NULL ||
			    !gs_output_write(out, text, error))
				return FALSE;
		}
	}
	return TRUE;
}

/* Writes the JSON, the worst situations' scenarios and the plots, all or nothing. */
static int
write_outputs(const PolicyRuns *runs, GArray *const *worst, const McOptions *o)
{
	g_autoptr(GsOutputSet) set = gs_output_set_new();
	g_autoptr(GError) error = NULL;
	GsOutput *out;
	int status;

	if (o->json != NULL) {
		g_autofree char *text = json_text(runs, o);

		if ((out = gs_output_set_add(set, o->json, &error)) == NULL ||
		    !gs_output_write(out, text, &error))
			goto failed;
	}
	if (o->out != NULL && !write_scenarios(set, runs, worst, o, &error))
		goto failed;
	if (o->plots != NULL && (status = write_plots(set, runs, o)) != GS_EXIT_OK)
		return status;
	if (gs_output_set_commit(set, &error))
		return GS_EXIT_OK;
failed:
	fprintf(stderr, "gpusim montecarlo: %s\n", error->message);
	return GS_EXIT_USAGE;
}

/* With --policies: the tool's lines per policy, the figures side by side, the worst under each. */
static void
print_policies(const PolicyRuns *runs, GArray *const *worst, const McOptions *o)
{
	printf(", each under");
	for (guint p = 0; p < o->n_policies; p++)
		printf("%s %s", p > 0 ? "," : "", gs_oom_policy_names[runs[p].oom]);
	printf("\n");
	for (guint p = 0; p < o->n_policies; p++) {
		Totals t = totals_of(runs[p].rows);

		printf("%s:\n", gs_oom_policy_names[runs[p].oom]);
		print_summary(&t, "  ");
	}
	print_side_by_side(runs, o);
	for (guint p = 0; p < o->n_policies; p++)
		print_worst(&runs[p], worst[p], o);
}

static void
print_results(const PolicyRuns *runs, GArray *const *worst, const McOptions *o)
{
	printf("Monte Carlo: %d situations, --seed=%" G_GINT64_FORMAT " (simulated times)", o->iter,
	       (gint64) o->seed);
	if (o->policies_text == NULL) {
		Totals t = totals_of(runs[0].rows);

		printf("\n");
		print_summary(&t, "");
		print_stats(runs[0].rows);
		print_worst(&runs[0], worst[0], o);
	} else {
		print_policies(runs, worst, o);
	}
	if (o->out == NULL)
		printf("  (--out=DIR writes each as a scenario for 'gpusim run')\n");
}

static int
montecarlo(const McOptions *o)
{
	PolicyRuns runs[GS_N_OOM_POLICIES];
	GArray *worst[GS_N_OOM_POLICIES] = {NULL};
	int status = GS_EXIT_USAGE;

	for (guint p = 0; p < o->n_policies; p++)
		policy_runs_init(&runs[p], o->policies[p], o);
	if (run_situations(o, runs)) {
		for (guint p = 0; p < o->n_policies; p++)
			worst[p] = worst_of(runs[p].rows);
		status = write_outputs(runs, worst, o);
	}
	if (status == GS_EXIT_OK)
		print_results(runs, worst, o);
	for (guint p = 0; p < o->n_policies; p++) {
		policy_runs_clear(&runs[p]);
		if (worst[p] != NULL)
			g_array_unref(worst[p]);
	}
	return status;
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
	"--policies=A,B,... runs every situation under each policy named (fail, block,\n"
	"retry: the policies compare knows), the same situations for each: the tool's\n"
	"lines per policy, then the figures side by side, the worst situations under\n"
	"each (--out writes situation-I-POLICY.yaml), and in --json an object per\n"
	"policy under \"policies\". --baseline is the policy fail, and is refused with it.\n"
	"\n"
	"--plots=DIR writes, for task time (first start to end), retries and time\n"
	"blocked per task, the empirical CDF over the tasks of every situation, a\n"
	"curve per policy: cdf-task-time, cdf-retries and cdf-blocked, as .csv and,\n"
	"with gnuplot, .png and .svg. Tasks cut short by a deadlock or timeout are not\n"
	"counted; a curve's title says how many tasks it counts.\n"
	"\n"
	"Exit status: 0 every situation ran (whatever its outcome); 2 bad usage or an\n"
	"output that could not be written; 4 a plot failed.";

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
		{"policies", 0, 0, G_OPTION_ARG_STRING, &o.policies_text,
		 "Run every situation under each of these OOM policies (fail, block, retry), "
		 "side by side",
		 "A,B,..."},
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
		{"plots", 0, 0, G_OPTION_ARG_FILENAME, &o.plots,
		 "Write CDFs of task time, retries and blocked time per task in DIR (with gnuplot, "
		 "as PNG and SVG)",
		 "DIR"},
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
	g_free(o.policies_text);
	g_free(o.plots);
	return status;
}
