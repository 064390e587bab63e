/*
 * gpusim: the public interface of libgpusim, the policy engine that decides how
 * many tasks share one GPU's memory. Include this header; link with
 * `pkg-config --libs gpusim`.
 */
#ifndef GPUSIM_GPUSIM_H
#define GPUSIM_GPUSIM_H

#include <gpusim/types.h>
#include <gpusim/thread-state.h>
#include <gpusim/priority.h>
#include <gpusim/metrics.h>
#include <gpusim/deadlock.h>
#include <gpusim/engine.h>
#include <gpusim/workload.h>
#include <gpusim/interp.h>
#include <gpusim/space.h>
#include <gpusim/pages.h>
#include <gpusim/storage.h>
#include <gpusim/spill.h>
#include <gpusim/gate.h>

#endif /* GPUSIM_GPUSIM_H */
