/*
 * gpusim: what code that measures or summarises samples shares.
 *
 * This module decides how a set of samples is put in order and which one
 * is its median: the middle one of an odd count, the upper of the two
 * middle ones of an even count.
 */
#ifndef GPUSIM_RUN_SAMPLES_H
#define GPUSIM_RUN_SAMPLES_H

#include <stdlib.h>

#include <glib.h>

static inline int
gs_samples_compare(gconstpointer a, gconstpointer b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

/** Sorts the @n samples @values in ascending order, in place. */
static inline void
gs_samples_sort(double *values, gsize n)
{
	qsort(values, n, sizeof *values, gs_samples_compare);
}

/** Sorts the @n >= 1 samples @values and returns their median. */
static inline double
gs_samples_median(double *values, gsize n)
{
	gs_samples_sort(values, n);
	return values[n / 2];
}

#endif /* GPUSIM_RUN_SAMPLES_H */
