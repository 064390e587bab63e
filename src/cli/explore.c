/*
 * gpusim: the search behind `gpusim explore` (explore.h).
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "cli/explore.h"
#include "report/report.h"
#include "run/footprints.h"
#include "run/schedule.h"
#include "scenario/generate.h"
#include "scenario/loader.h"
#include "sim/sim.h"

static const char *const violation_names[GS_N_VIOLATIONS] = {
	[GS_VIOLATION_DEADLOCK] = "deadlock",
	[GS_VIOLATION_CUT_SHORT] = "cut-short",
	[GS_VIOLATION_UNEXPLAINED_FAILURE] = "unexplained-failure",
	[GS_VIOLATION_LEAK] = "leak",
	[GS_VIOLATION_COPY_LOST] = "copy-lost",
	[GS_VIOLATION_INVARIANT] = "invariant",
	[GS_VIOLATION_EXPECT] = "expect",
	[GS_VIOLATION_NEEDLESS_BUST] = "needless-bust",
};

const char *
gs_violation_name(GsViolationKind kind)
{
	return kind < GS_N_VIOLATIONS ? violation_names[kind] : "unknown";
}

/* Events one instant may take in a search before its run counts as a livelock. */
#define EVENTS_PER_INSTANT G_GUINT64_CONSTANT(1000000)

/* Shrinking one violation stops after this many runs. */
#define SHRINK_RUNS 500

/* Random schedules go to the workers this many a worker at a time. */
#define BATCH 32

/* One run of a search: the choices it took and what it broke. */
typedef struct {
	GArray *taken;                 /* GsChoice */
	GArray *races;                 /* GsRace; NULL: the orders were not reduced */
	gboolean mismatch;             /* a followed choice was out of range */
	guint broken;                  /* bit i: GsViolationKind i */
	char *detail[GS_N_VIOLATIONS]; /* a sentence for each kind broken */
	GError *error;                 /* the scenario did not load */
} Run;

static void
run_clear(Run *run)
{
	g_clear_pointer(&run->taken, g_array_unref);
	g_clear_pointer(&run->races, g_array_unref);
	for (guint i = 0; i < GS_N_VIOLATIONS; i++)
		g_clear_pointer(&run->detail[i], g_free);
	g_clear_error(&run->error);
}

/* ---- the properties ---- */

static void
note(Run *run, GsViolationKind kind, char *detail)
{
	if (run->broken & (1u << kind)) {
		g_free(detail);
		return;
	}
	run->broken |= 1u << kind;
	run->detail[kind] = detail;
}

static guint
threads_waiting(const GsResult *r)
{
	guint n = 0;

	for (guint i = 0; i < r->threads->len; i++)
		n += ((const GsThreadResult *) r->threads->pdata[i])->waiting_at_end;
	return n;
}

static void
check_tasks(const GsResult *r, Run *run)
{
	for (guint i = 0; i < r->tasks->len; i++) {
		const GsTaskResult *task = r->tasks->pdata[i];

		if (task->outcome == GS_OUTCOME_FAILED && task->failure == GS_EXC_NONE)
			note(run, GS_VIOLATION_UNEXPLAINED_FAILURE,
			     g_strdup_printf("task %s failed, and no exception says why", task->id));
	}
}

static void
check_expect(const GsWorkload *w, const GsResult *r, const GsEventLog *log, Run *run)
{
	g_autoptr(GsExpectReport) report = gs_expect_check(w, r, log);

	if (!gs_expect_report_passed(report))
		note(run, GS_VIOLATION_EXPECT,
		     g_strdup_printf("expectation failed: %s", (char *) report->failed->pdata[0]));
}

static void
check_properties(const GsExploreOptions *o, const GsWorkload *w, const GsResult *r,
		 const GsEventLog *log, Run *run)
{
	g_autofree char *end = gs_format_duration(r->makespan_ns);

	if (r->outcome == GS_OUTCOME_DEADLOCK) {
		guint waiting = threads_waiting(r);

		note(run, GS_VIOLATION_DEADLOCK,
		     g_strdup_printf("the run ended in a deadlock at %s, %u thread%s waiting", end,
				     waiting, waiting == 1 ? "" : "s"));
	}
	if (r->outcome == GS_OUTCOME_TIMEOUT)
		note(run, GS_VIOLATION_CUT_SHORT,
		     g_strdup_printf("the run was cut short at %s: %s", end,
				     r->stop_reason != NULL ? r->stop_reason
							    : "it reached --max-time"));
	check_tasks(r, run);
	if (r->totals.leaked_bytes > 0) {
		g_autofree char *bytes = gs_format_bytes(r->totals.leaked_bytes);

		note(run, GS_VIOLATION_LEAK,
		     g_strdup_printf("tasks that completed leaked %s", bytes));
	}
	if (r->totals.copies_lost > 0)
		note(run, GS_VIOLATION_COPY_LOST,
		     g_strdup_printf("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
				     " copies between tiers lost or duplicated their data",
				     r->totals.copies_lost, r->totals.copies_checked));
	if (r->invariant_broken != NULL)
		note(run, GS_VIOLATION_INVARIANT,
		     g_strdup_printf("the bookkeeping broke: %s", r->invariant_broken));
	if (r->needless_bust != NULL)
		note(run, GS_VIOLATION_NEEDLESS_BUST, g_strdup(r->needless_bust));
	if (o->expect)
		check_expect(w, r, log, run);
}

/* ---- one run ---- */

static GsWorkload *
load(const GsExploreOptions *o, GError **error)
{
	GsWorkload *w = gs_loader_load_text(o->name, o->text, o->len, NULL, NULL, error);

	if (w == NULL)
		return NULL;
	gs_generate_tasks(w);
	if (o->jitter_given)
		w->schedule_jitter = o->jitter;
	return w;
}

/* Whether a run's event log is checked: the scenario's expectations, checked, read it. */
static gboolean
log_checked(const GsExploreOptions *o, const GsWorkload *w)
{
	return o->expect && gs_expect_reads_log(w);
}

/*
 * Whether the orders of an instant may be reduced to those that can matter
 * (footprints.h): not when asked for every order, nor when the event log,
 * whose lines follow the order, is checked.
 */
static gboolean
reduces_orders(const GsExploreOptions *o, const GsWorkload *w)
{
	return !o->every_order && !log_checked(o, w);
}

/*
 * Runs the scenario once, following the @n choices of @follow and then
 * @rand (NULL: the default order). With @replay, what the run made is handed
 * over there, its event log with it. A run of the depth-first part records
 * the races it shows in run->races, where the orders may be reduced, and is
 * told to o->each_run.
 */
static void
execute(const GsExploreOptions *o, const guint *follow, guint n, GRand *rand, Run *run,
	GsExploreReplay *replay, gboolean depth_first)
{
	g_autoptr(GsWorkload) w = NULL;
	g_autoptr(GsEventLog) log = NULL;
	g_autoptr(GsResult) r = NULL;
	g_auto(GsSchedule) schedule = {0};
	g_auto(GsFootprintLog) footprints = {0};
	GsRunOptions opts = {.max_time = o->max_time, .max_events_per_instant = EVENTS_PER_INSTANT,
			     .choose = gs_schedule_choose, .check_invariants = TRUE,
			     .check_busts = o->needless_busts, .every_choice = o->every_choice};

	memset(run, 0, sizeof *run);
	w = load(o, &run->error);
	if (w == NULL)
		return;
	gs_schedule_init(&schedule, follow, n, rand);
	opts.choose_data = &schedule;
	if (depth_first && reduces_orders(o, w)) {
		gs_footprint_log_init(&footprints);
		opts.footprints = &gs_footprint_log_hooks;
		opts.footprints_data = &footprints;
	}
	opts.skip_timeline = replay == NULL && !(o->expect && w->expect.at->len > 0);
	if (replay != NULL || log_checked(o, w)) {
		log = gs_event_log_new();
		opts.log = gs_event_log_add;
		opts.log_data = log;
	}
	r = gs_sim_run(w, &opts);
	run->taken = g_steal_pointer(&schedule.taken);
	if (opts.footprints != NULL)
		run->races = gs_footprint_log_races(&footprints);
	run->mismatch = schedule.bad_at > 0;
	check_properties(o, w, r, log, run);
	if (depth_first && o->each_run != NULL)
		o->each_run(w, r, o->each_run_data);
	if (replay != NULL)
		*replay = (GsExploreReplay){.workload = g_steal_pointer(&w),
					    .result = g_steal_pointer(&r),
					    .log = g_steal_pointer(&log)};
}

gboolean
gs_explore_replay(const GsExploreOptions *o, const GArray *choices, GsExploreReplay *replay,
		  GError **error)
{
	Run run;

	memset(replay, 0, sizeof *replay);
	execute(o, (const guint *) choices->data, choices->len, NULL, &run, replay, FALSE);
	if (run.error != NULL) {
		g_propagate_error(error, g_steal_pointer(&run.error));
		run_clear(&run);
		return FALSE;
	}
	run_clear(&run);
	return TRUE;
}

void
gs_explore_replay_clear(GsExploreReplay *replay)
{
	g_clear_pointer(&replay->workload, gs_workload_free);
	g_clear_pointer(&replay->result, gs_result_free);
	g_clear_pointer(&replay->log, gs_event_log_free);
}

/* ---- the search ---- */

typedef struct {
	const GsExploreOptions *o;
	GsExploreResult *result;
	gint64 started; /* monotonic us */
	GError *error;
} Search;

static void
tell_progress(Search *x)
{
	GsExploreProgress p = {.schedules = x->result->schedules, .budget = x->o->budget};

	if (x->o->progress == NULL)
		return;
	for (guint k = 0; k < GS_N_VIOLATIONS; k++)
		p.violations += x->result->found[k] != NULL;
	x->o->progress(&p, x->o->progress_data);
}

/* Run @index of the search: the first run to break a property stands for it. */
static gboolean
record(Search *x, guint64 index, Run *run)
{
	GsExploreResult *result = x->result;

	if (run->error != NULL) {
		if (x->error == NULL)
			x->error = g_steal_pointer(&run->error);
		return FALSE;
	}
	result->most_points = MAX(result->most_points, run->taken->len);
	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		GsViolation *v;

		if (!(run->broken & (1u << k)) || result->found[k] != NULL)
			continue;
		v = g_new0(GsViolation, 1);
		v->kind = k;
		v->found_at = index;
		v->schedule = gs_schedule_choices(run->taken);
		v->detail = g_steal_pointer(&run->detail[k]);
		result->found[k] = v;
	}
	return TRUE;
}

static gboolean
time_left(const Search *x, gint64 part)
{
	return g_get_monotonic_time() - x->started < part;
}

/* The depth-first part gets half the budget, or half the time. */
static gboolean
depth_first_may_go_on(const Search *x)
{
	if (x->o->budget > 0)
		return x->result->schedules < (x->o->budget + 1) / 2;
	return time_left(x, x->o->time_us / 2);
}

/*
 * A point of the depth-first path: which of its alternatives have run, and
 * which must. Every alternative must, but at an order point of a reduced
 * run, where only the one taken first and those a run shows racing must.
 */
typedef struct {
	guint n, chosen;
	guint8 *must; /* n flags */
	guint8 *ran;  /* n flags: run, or running now */
} Node;

static void
node_clear(gpointer data)
{
	Node *node = data;

	g_free(node->must);
	g_free(node->ran);
}

/* The points @run reached past the path's end join it, each with its first alternative run. */
static void
extend_path(GArray *path, const Run *run)
{
	for (guint i = path->len; i < run->taken->len; i++) {
		const GsChoice *c = &g_array_index(run->taken, GsChoice, i);
		gboolean reduced = run->races != NULL && c->kind == GS_CHOICE_ORDER;
		Node node = {.n = c->n, .chosen = c->chosen, .must = g_malloc(c->n),
			     .ran = g_malloc0(c->n)};

		memset(node.must, !reduced, c->n);
		node.must[c->chosen] = node.ran[c->chosen] = 1;
		g_array_append_val(path, node);
	}
}

/* The alternatives @run shows racing must run too, at the order points they belong to. */
static void
mark_races(GArray *path, const Run *run)
{
	g_autoptr(GArray) orders = g_array_new(FALSE, FALSE, sizeof(guint)); /* their path indices */

	if (run->races == NULL)
		return;
	for (guint i = 0; i < run->taken->len && i < path->len; i++) {
		if (g_array_index(run->taken, GsChoice, i).kind == GS_CHOICE_ORDER)
			g_array_append_val(orders, i);
	}
	for (guint i = 0; i < run->races->len; i++) {
		const GsRace *race = &g_array_index(run->races, GsRace, i);
		Node *node;

		if (race->order >= orders->len)
			continue;
		node = &g_array_index(path, Node, g_array_index(orders, guint, race->order));
		if (race->alternative < node->n)
			node->must[race->alternative] = 1;
	}
}

/* The first alternative of @node that must run and has not; -1 if none. */
static gint
next_alternative(const Node *node)
{
	for (guint i = 0; i < node->n; i++) {
		if (node->must[i] && !node->ran[i])
			return (gint) i;
	}
	return -1;
}

/*
 * The deepest point of @path with an alternative left takes it, the points
 * below it are dropped, and @prefix is the path's choices; FALSE when no
 * point has one left.
 */
static gboolean
next_prefix(GArray *path, GArray *prefix)
{
	guint last = path->len;
	gint next = -1;

	while (last > 0 && (next = next_alternative(&g_array_index(path, Node, last - 1))) < 0)
		last--;
	if (last == 0)
		return FALSE;
	g_array_set_size(path, last);
	g_array_index(path, Node, last - 1).chosen = (guint) next;
	g_array_index(path, Node, last - 1).ran[next] = 1;
	g_array_set_size(prefix, 0);
	for (guint i = 0; i < last; i++)
		g_array_append_val(prefix, g_array_index(path, Node, i).chosen);
	return TRUE;
}

static gboolean
depth_first(Search *x)
{
	g_autoptr(GArray) prefix = g_array_new(FALSE, FALSE, sizeof(guint));
	g_autoptr(GArray) path = g_array_new(FALSE, FALSE, sizeof(Node));

	g_array_set_clear_func(path, node_clear);
	while (depth_first_may_go_on(x)) {
		Run run;
		gboolean more;

		execute(x->o, (const guint *) prefix->data, prefix->len, NULL, &run, NULL, TRUE);
		if (!record(x, x->result->schedules, &run)) {
			run_clear(&run);
			return FALSE;
		}
		x->result->schedules++;
		x->result->depth_first++;
		x->result->reduced = run.races != NULL;
		tell_progress(x);
		extend_path(path, &run);
		mark_races(path, &run);
		more = next_prefix(path, prefix);
		run_clear(&run);
		if (!more) {
			x->result->exhausted = TRUE;
			break;
		}
	}
	return TRUE;
}

/* The generator of random run @index: a function of the seed and the index alone. */
static GRand *
rand_for(guint64 seed, guint64 index)
{
	guint32 words[] = {(guint32) seed, (guint32) (seed >> 32), (guint32) index,
			   (guint32) (index >> 32)};

	return g_rand_new_with_seed_array(words, G_N_ELEMENTS(words));
}

/* A batch of random runs, first .. first + n - 1, that the workers share out. */
typedef struct {
	const GsExploreOptions *o;
	guint64 first;
	guint n;
	Run *runs;   /* by index in the batch */
	gint next;   /* the next to hand out, taken atomically */
} Batch;

static void *
batch_worker(void *data)
{
	Batch *b = data;
	gint k;

	while ((k = g_atomic_int_add(&b->next, 1)) < (gint) b->n) {
		GRand *rand = rand_for(b->o->seed, b->first + (guint) k);

		execute(b->o, NULL, 0, rand, &b->runs[k], NULL, FALSE);
		g_rand_free(rand);
	}
	return NULL;
}

static void
run_batch(Batch *b, guint jobs)
{
	pthread_t *workers = g_new(pthread_t, jobs);
	guint started = 0;

	for (guint i = 1; i < jobs && pthread_create(&workers[i], NULL, batch_worker, b) == 0; i++)
		started = i;
	batch_worker(b);
	for (guint i = 1; i <= started; i++)
		pthread_join(workers[i], NULL);
	g_free(workers);
}

static guint
batch_size(const Search *x)
{
	guint most = BATCH * MAX(x->o->jobs, 1);

	if (x->o->budget > 0)
		return (guint) MIN((guint64) most, x->o->budget - MIN(x->o->budget,
								      x->result->schedules));
	return time_left(x, x->o->time_us) ? most : 0;
}

static gboolean
at_random(Search *x)
{
	guint n;

	while (!x->result->exhausted && (n = batch_size(x)) > 0) {
		Batch b = {.o = x->o, .first = x->result->schedules, .n = n,
			   .runs = g_new0(Run, n)};
		gboolean ok = TRUE;

		run_batch(&b, MAX(x->o->jobs, 1));
		for (guint k = 0; k < n; k++) {
			ok = ok && record(x, b.first + k, &b.runs[k]);
			run_clear(&b.runs[k]);
		}
		g_free(b.runs);
		if (!ok)
			return FALSE;
		x->result->schedules += n;
		tell_progress(x);
	}
	return TRUE;
}

/* ---- shrinking ---- */

/* Fewer choices other than 0, then fewer choices. */
static gboolean
simpler(const GArray *a, const GArray *b)
{
	guint fa = gs_schedule_forced(a), fb = gs_schedule_forced(b);

	return fa < fb || (fa == fb && a->len < b->len);
}

/*
 * Candidate @c of @choices: for c below its length, its first c choices;
 * then each choice other than 0 set to 0. NULL: that candidate is no change.
 */
static GArray *
candidate(const GArray *choices, guint c)
{
	GArray *next;

	if (c >= choices->len && g_array_index(choices, guint, c - choices->len) == 0)
		return NULL;
	next = g_array_copy((GArray *) choices);
	if (c < choices->len)
		g_array_set_size(next, c);
	else
		g_array_index(next, guint, c - choices->len) = 0;
	return next;
}

static void
shrink(Search *x, GsViolation *v)
{
	guint runs = 0;
	gboolean improved = TRUE;

	while (improved && runs < SHRINK_RUNS) {
		improved = FALSE;
		for (guint c = 0; !improved && c < 2 * v->schedule->len && runs < SHRINK_RUNS; c++) {
			g_autoptr(GArray) next = candidate(v->schedule, c);
			g_autoptr(GArray) taken = NULL;
			Run run;

			if (next == NULL)
				continue;
			execute(x->o, (const guint *) next->data, next->len, NULL, &run, NULL, FALSE);
			runs++;
			x->result->shrink_runs++;
			if (run.error == NULL && !run.mismatch && (run.broken & (1u << v->kind)) &&
			    simpler(taken = gs_schedule_choices(run.taken), v->schedule)) {
				g_array_unref(v->schedule);
				v->schedule = g_steal_pointer(&taken);
				g_free(v->detail);
				v->detail = g_steal_pointer(&run.detail[v->kind]);
				improved = TRUE;
			}
			run_clear(&run);
		}
	}
}

GsExploreResult *
gs_explore(const GsExploreOptions *o, GError **error)
{
	g_autoptr(GsWorkload) w = load(o, error);
	Search x = {.o = o, .started = g_get_monotonic_time()};

	if (w == NULL)
		return NULL;
	x.result = g_new0(GsExploreResult, 1);
	if (!depth_first(&x) || !at_random(&x)) {
		g_propagate_error(error, x.error);
		gs_explore_result_free(x.result);
		return NULL;
	}
	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		if (x.result->found[k] != NULL)
			shrink(&x, x.result->found[k]);
	}
	return x.result;
}

void
gs_explore_result_free(GsExploreResult *result)
{
	if (result == NULL)
		return;
	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		GsViolation *v = result->found[k];

		if (v == NULL)
			continue;
		g_array_unref(v->schedule);
		g_free(v->detail);
		g_free(v);
	}
	g_free(result);
}
