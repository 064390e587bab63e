/*
 * bench-explore: how many schedules per second `gpusim explore` runs, on a
 * small scenario (the explore-order study: two tasks, 16 schedules, searched
 * whole) and a medium one (scenarios/montecarlo.yaml: twelve generated
 * tasks, up to about 160 choice points a run, a budget of 1000 schedules,
 * half depth-first and half random), the random half on one worker and on
 * two. Every schedule is a fresh load and simulation with the engine's and
 * the memory's invariants checked after every instant; the shrinking runs of
 * what was found are counted with the rest. Then the reductions: the
 * schedules of a search to the end of the small scenarios in tests/data and
 * the studies, with every choice point and every order, without the
 * watchdog's choices that cannot change the run, and without them and the
 * orders of events that commute (the default), with the kinds of violation
 * each found and its wall time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/explore.h"
#include "scenario/input.h"

static void
bench(const char *label, const char *path, guint64 budget, guint jobs)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GsExploreResult) r = NULL;
	g_autofree char *text = NULL;
	GsExploreOptions o = {.name = path, .budget = budget, .jobs = jobs, .seed = 1};
	gint64 started;
	double seconds;
	guint found = 0;

	if (!gs_input_read(path, &text, &o.len, &error)) {
		printf("%-28s cannot read %s: %s\n", label, path, error->message);
		return;
	}
	o.text = text;
	started = g_get_monotonic_time();
	r = gs_explore(&o, &error);
	seconds = (double) (g_get_monotonic_time() - started) / 1e6;
	if (r == NULL) {
		printf("%-28s %s\n", label, error->message);
		return;
	}
	for (guint k = 0; k < GS_N_VIOLATIONS; k++)
		found += r->found[k] != NULL;
	printf("%-28s %7" G_GUINT64_FORMAT " + %4" G_GUINT64_FORMAT " shrink %7.2f s %9.0f /s"
	       "  %u points  %u found%s\n",
	       label, r->schedules, r->shrink_runs, seconds,
	       (double) (r->schedules + r->shrink_runs) / seconds, r->most_points, found,
	       r->exhausted ? "  (exhausted)" : "");
}

/* The names of the kinds @r found, comma-separated, or "none". */
static char *
kinds_found(const GsExploreResult *r)
{
	GString *s = g_string_new(NULL);

	for (guint k = 0; k < GS_N_VIOLATIONS; k++) {
		if (r->found[k] != NULL)
			g_string_append_printf(s, "%s%s", s->len > 0 ? "," : "", gs_violation_name(k));
	}
	if (s->len == 0)
		g_string_append(s, "none");
	return g_string_free(s, FALSE);
}

/* How far a search reduces: every choice, only the watchdog's left out, and orders too. */
typedef enum { EVERYTHING, NO_WATCHDOG, REDUCED, N_REDUCTIONS } Reduction;

/* A search of @path to the end as @how reduces it, and its wall time in @seconds. */
static GsExploreResult *
search_whole(const char *path, double jitter, Reduction how, double *seconds, GError **error)
{
	g_autofree char *text = NULL;
	GsExploreOptions o = {.name = path, .budget = 1000000, .jobs = 1, .seed = 1,
			      .needless_busts = TRUE, .every_choice = how == EVERYTHING,
			      .every_order = how != REDUCED, .jitter_given = jitter > 0,
			      .jitter = jitter};
	gint64 started = g_get_monotonic_time();
	GsExploreResult *r;

	if (!gs_input_read(path, &text, &o.len, error))
		return NULL;
	o.text = text;
	r = gs_explore(&o, error);
	*seconds = (double) (g_get_monotonic_time() - started) / 1e6;
	return r;
}

static void
bench_reduction(const char *top, const char *file, double jitter)
{
	g_autofree char *path = g_build_filename(top, file, NULL);
	g_autofree char *label = g_strdup_printf("%s%s", strrchr(file, '/') + 1,
						 jitter > 0 ? " --jitter=0.5" : "");
	GString *line = g_string_new(NULL);

	g_string_printf(line, "%-42s", label);
	for (Reduction how = 0; how < N_REDUCTIONS; how++) {
		g_autoptr(GError) error = NULL;
		double seconds = 0;
		g_autoptr(GsExploreResult) r = search_whole(path, jitter, how, &seconds, &error);
		g_autofree char *found = NULL;

		if (r == NULL) {
			g_string_append_printf(line, "  %s", error->message);
			break;
		}
		found = kinds_found(r);
		g_string_append_printf(line, " %8" G_GUINT64_FORMAT "%s %6.2f s %-15s", r->schedules,
				       r->exhausted ? " " : "+", seconds, found);
	}
	printf("%s\n", line->str);
	g_string_free(line, TRUE);
}

int
main(void)
{
	const char *top = g_getenv("top_srcdir") != NULL ? g_getenv("top_srcdir") : GS_TOP_SRCDIR;
	g_autofree char *small = g_build_filename(top, "scenarios/studies/explore-order.yaml", NULL);
	g_autofree char *medium = g_build_filename(top, "scenarios/montecarlo.yaml", NULL);

	printf("gpusim %s explore benchmark: schedules per second (wall clock)\n", gs_version());
	printf("%-28s %7s   %6s %9s %11s\n", "scenario", "runs", "", "wall", "schedules");
	bench("small (explore-order)", small, 1000, 1);
	bench("medium (montecarlo), 1 job", medium, 1000, 1);
	bench("medium (montecarlo), 2 jobs", medium, 1000, 2);

	printf("\nreduction: schedules of a whole search (+: not exhausted), its wall time and the "
	       "kinds it found\n(--needless-busts): with every choice point and order, without the "
	       "watchdog's choices that\ncannot matter (--every-order), and without those and the "
	       "orders of events that commute\n");
	printf("%-42s %-34s %-34s %s\n", "scenario", "every choice", "--every-order", "reduced");
	bench_reduction(top, "tests/data/explore-order-deadlock.yaml", 0);
	bench_reduction(top, "tests/data/explore-wake-deadlock.yaml", 0);
	bench_reduction(top, "tests/data/explore-needless-bust.yaml", 0);
	bench_reduction(top, "tests/data/explore-jitter-deadlock.yaml", 0);
	bench_reduction(top, "tests/data/explore-jitter-deadlock.yaml", 0.5);
	bench_reduction(top, "tests/data/explore-independent.yaml", 0);
	bench_reduction(top, "scenarios/studies/explore-order.yaml", 0);
	bench_reduction(top, "scenarios/studies/explore-commuting.yaml", 0);
	return EXIT_SUCCESS;
}
