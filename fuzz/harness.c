/*
 * gpusim fuzzing: what the harnesses share (harness.h): the checks they make
 * and the bounded simulation.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/expect.h"
#include "scenario/generate.h"
#include "harness.h"
#include "report/report.h"
#include "sim/sim.h"

/*
 * What a bounded simulation may cost. A valid scenario can ask for years of
 * work (repeat: 4000000000): the harness looks for crashes, not for patience.
 */
#define MAX_STEPS 200000 /* interpreter steps, estimated from the ops */
#define MAX_EVENTS 20000 /* simulator events */
#define MAX_TIME (G_GINT64_CONSTANT(60) * 1000000000) /* simulated time: a minute */

/*
 * A warning or critical aborts. GLib ends a fatal message with a breakpoint
 * trap, which libFuzzer does not catch: abort() has it save the input.
 */
static void
abort_on_message(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
	g_log_default_handler(domain, level, message, data);
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
		abort();
}

/* GLib's warnings and criticals are fatal, so that a harness never passes one by. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	g_log_set_default_handler(abort_on_message, NULL);
	g_log_set_always_fatal(G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
	return 0;
}

G_GNUC_NORETURN void
fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, detail);
	abort();
}

/* A whole number from 1 at *@p, followed by @end; moves *@p past both. */
static gboolean
skip_position(const char **p, char end)
{
	const char *s = *p;

	if (*s < '1' || *s > '9')
		return FALSE;
	while (g_ascii_isdigit(*s))
		s++;
	if (*s != end)
		return FALSE;
	*p = s + 1;
	return TRUE;
}

/*
 * File names may hold colons ("--set KEY=VALUE" has none, a path may): the
 * position is the first ":LINE:COLUMN: " after a non-empty name.
 */
static gboolean
has_position(const char *line)
{
	for (const char *colon = strchr(line, ':'); colon != NULL; colon = strchr(colon + 1, ':')) {
		const char *p = colon + 1;

		if (colon > line && skip_position(&p, ':') && skip_position(&p, ':') && *p == ' ' &&
		    p[1] != '\0')
			return TRUE;
	}
	return FALSE;
}

/* Every line of @message (the loader's has one per error) has its position. */
void
fuzz_check_message(const char *what, const char *message)
{
	g_auto(GStrv) lines = g_strsplit(message, "\n", -1);

	for (guint i = 0; lines[i] != NULL; i++) {
		if (!has_position(lines[i]))
			fuzz_fail(what, message);
	}
}

static guint64
saturating_mul(guint64 a, guint64 b)
{
	return b != 0 && a > MAX_STEPS / b ? MAX_STEPS + 1 : MIN(a * b, MAX_STEPS + 1);
}

/* How many steps @ops take at most, up to MAX_STEPS + 1: nested blocks multiply. */
static guint64
ops_steps(const GArray *ops)
{
	guint64 steps = 0;

	for (guint i = 0; ops != NULL && i < ops->len && steps <= MAX_STEPS; i++) {
		const GsOp *op = &g_array_index(ops, GsOp, i);

		steps++;
		if (op->kind == GS_OP_REPEAT)
			steps += saturating_mul(op->repeat.times, ops_steps(op->repeat.ops));
		else if (op->kind == GS_OP_RETRY)
			steps += saturating_mul((guint64) op->retry.max_splits + 1,
						ops_steps(op->retry.ops));
	}
	return MIN(steps, MAX_STEPS + 1);
}

static guint64
threads_steps(const GPtrArray *threads)
{
	guint64 steps = 0;

	for (guint i = 0; i < threads->len && steps <= MAX_STEPS; i++)
		steps += ops_steps(((const GsThreadSpec *) threads->pdata[i])->ops);
	return steps;
}

/* Whether the steps @w asks for, a rough upper bound, stay within MAX_STEPS. */
static gboolean
small_enough(const GsWorkload *w)
{
	const GsGenerate *g = &w->generate;
	guint64 steps = threads_steps(w->pool_threads);

	for (guint i = 0; i < w->tasks->len && steps <= MAX_STEPS; i++) {
		const GsTaskSpec *t = w->tasks->pdata[i];

		steps += saturating_mul(MAX(t->repeat, 1), threads_steps(t->threads) + 1);
	}
	if (g->enabled)
		steps += saturating_mul(saturating_mul(g->tasks, g->threads_per_task + 1),
					(guint64) g->max_allocs * 4 + 4) +
			 g->shuffle_threads;
	return steps <= MAX_STEPS;
}

void
fuzz_simulate(GsWorkload *w)
{
	g_autoptr(GsEventLog) log = NULL;
	g_autoptr(GsResult) result = NULL;
	g_autoptr(GsExpectReport) report = NULL;
	g_autofree char *summary = NULL, *json = NULL, *events = NULL;
	GsRunOptions opts = {.max_time = MAX_TIME, .max_events = MAX_EVENTS};

	if (!small_enough(w))
		return;
	log = gs_event_log_new();
	opts.log = gs_event_log_add;
	opts.log_data = log;
	gs_generate_tasks(w);
	result = gs_sim_run(w, &opts);
	report = gs_expect_check(w, result, log);
	summary = gs_report_summary(w, result, report);
	json = gs_report_json(w, result, "sim", 0, report);
	events = gs_report_events(log);
}
