/*
 * gpusim: drawing comparisons with gnuplot, when it is there (SPEC §2).
 *
 * This module decides where gnuplot and the plot scripts are found, which
 * terminals draw the pictures, and how a script gets its inputs; what a plot
 * shows is the business of its script in plots/. gnuplot is looked up at run
 * time: $GPUSIM_GNUPLOT (a path, or "no" to draw nothing), else the gnuplot
 * found by configure if it is still there, else the first on $PATH. Scripts
 * come from $GPUSIM_PLOTS_DIR, else the installed $(pkgdatadir)/plots, else
 * the source tree's plots/ (for a program run from its build directory).
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

/**
 * Runs plots/@script with @vars, drawing the outputs @png and @svg; returns
 * FALSE with @error set (holding gnuplot's own message) if either failed.
 * A script that reads another output reads its gs_output_staged_path().
 */
gboolean gs_plotter_draw(GsPlotter *p, const char *script, const GString *vars, GsOutput *png,
			 GsOutput *svg, GError **error);

G_END_DECLS

#endif /* GPUSIM_PLOT_H */
