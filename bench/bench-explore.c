/*
 * bench-explore: how many schedules per second `gpusim explore` runs, on a
 * small scenario (the explore-order study: two tasks, 64 schedules, searched
 * whole) and a medium one (scenarios/montecarlo.yaml: twelve generated
 * tasks, up to about 160 choice points a run, a budget of 1000 schedules,
 * half depth-first and half random), the random half on one worker and on
 * two. Every schedule is a fresh load and simulation with the engine's and
 * the memory's invariants checked after every instant; the shrinking runs of
 * what was found are counted with the rest.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

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
	return EXIT_SUCCESS;
}
