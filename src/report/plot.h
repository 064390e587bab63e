/*
 * gpusim: drawing comparisons with gnuplot, when it is there (SPEC §2).
 *
 * This module decides where gnuplot and the plot scripts are found, which
 * terminals draw the pictures, how a script gets its inputs and, for the
 * CDF plot (plots/cdf.gp), which points of an empirical CDF its curves go
 * through; what a plot shows is the business of its script in plots/.
 * gnuplot is looked up at run time: $GPUSIM_GNUPLOT (a path, or "no" to
 * draw nothing), else the gnuplot found by configure if it is still there,
 * else the first on $PATH. Scripts come from $GPUSIM_PLOTS_DIR, else the
 * installed $(pkgdatadir)/plots, else the source tree's plots/ (for a
 * program run from its build directory).
 *
 * Each plot is drawn twice, as PNG (the pngcairo terminal where gnuplot has
 * it, else png) and as SVG. A script reads the variables the caller sets
 * (always term, out, plotsdir) and loads plots/common.gp for the terminal.
 * gnuplot draws into the temporary of an output of the command's set
 * (output.h), so a failed plot leaves no picture, half or whole.
 */
#ifndef GPUSIM_PLOT_H
#define GPUSIM_PLOT_H

#include <glib.h>

#include "report/output.h"

G_BEGIN_DECLS

typedef struct GsPlotter GsPlotter;

/** Looks for gnuplot and the scripts; never fails (see gs_plotter_missing()). */
GsPlotter *gs_plotter_new(void);
void gs_plotter_free(GsPlotter *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GsPlotter, gs_plotter_free)

/** NULL when plots can be drawn, else why not, as a phrase ("gnuplot was not found"). */
const char *gs_plotter_missing(const GsPlotter *p);

/* Script inputs: gnuplot assignments, built up in a GString. */

/** Appends `name='value';` with @value quoted for gnuplot. */
void gs_plot_set_string(GString *vars, const char *name, const char *value);
/** Appends `name=value;` with @value written with a decimal point. */
void gs_plot_set_number(GString *vars, const char *name, double value);

/**
 * The unit (ns, us, ms or s) in which @max_ns reads as at least 1 (ns when
 * it is below 1 us), with its size in nanoseconds in *@ns_per_unit.
 */
const char *gs_plot_time_unit(double max_ns, double *ns_per_unit);
/** Likewise for bytes: B, KiB, MiB, GiB or TiB. */
const char *gs_plot_byte_unit(double max_bytes, double *bytes_per_unit);

/**
 * Appends tdiv and tunit: the time unit (ns, us, ms or s) in which @max_ns
 * reads as at least 1, and how many nanoseconds it holds.
 */
void gs_plot_set_time_unit(GString *vars, gint64 max_ns);
/** Appends bdiv and bunit likewise for bytes (B, KiB, MiB, GiB, TiB). */
void gs_plot_set_byte_unit(GString *vars, gint64 max_bytes);

/* ---- cumulative distributions: plots/cdf.gp ---- */

/** A point of an empirical CDF: @p is the fraction of the values at most @x. */
typedef struct {
	double x, p;
} GsCdfPoint;

/**
 * The empirical CDF of the @n values at @values (sorted in place), as the
 * points (GArray of GsCdfPoint) a step plot draws: (smallest, 0), then
 * (v, fraction of the values at most v) for each distinct value v, rising,
 * so the last is (largest, 1). With @max_points > 0 only the points where
 * the fraction reaches the next multiple of 1/@max_points are kept, and the
 * last: at most @max_points + 1 points, each one on the CDF, and the curve
 * drawn through them never more than 1/@max_points below it. Empty when @n
 * is 0.
 */
GArray *gs_plot_cdf(double *values, gsize n, guint max_points);

/**
 * The inputs of cdf.gp for one metric, a curve per sample: @samples holds
 * GArrays of double (sorted in place), the i-th drawn as gs_plot_cdf() with
 * @max_points and titled @labels[i]. Appends to @csv the data file: a
 * comment line, then per curve a comment with its label and its points,
 * one "x,p" row each, curves apart by two blank lines (gnuplot's index).
 * Appends to @vars n, title1..titleN, xlabel, which is @what, with the
 * time unit in parentheses when @is_time (the values are nanoseconds, and x
 * is written in the unit in which the largest value of all reads as at
 * least 1: "task time (ms)"), and counts (1 when not @is_time: the values
 * are counts, drawn with whole-number tics). The caller sets file and
 * heading.
 */
void gs_plot_cdf_inputs(GPtrArray *samples, const char *const *labels, const char *what,
			gboolean is_time, guint max_points, GString *csv, GString *vars);

/**
 * Runs plots/@script with @vars, drawing the outputs @png and @svg; returns
 * FALSE with @error set (holding gnuplot's own message) if either failed.
 * A script that reads another output reads its gs_output_staged_path().
 */
gboolean gs_plotter_draw(GsPlotter *p, const char *script, const GString *vars, GsOutput *png,
			 GsOutput *svg, GError **error);

G_END_DECLS

#endif /* GPUSIM_PLOT_H */
