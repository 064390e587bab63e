/*
 * gpusim: what the CUDA backend's files share: finding a device, and the
 * calibration that measures one (calibrate.c). Only backends/cuda/ includes
 * CUDA headers; this one does not need them.
 */
#ifndef GPUSIM_CUDA_H
#define GPUSIM_CUDA_H

#include <glib.h>

G_BEGIN_DECLS

/** The number of CUDA devices; FALSE (GS_BACKEND_ERROR_UNAVAILABLE) when there are none. */
gboolean gs_cuda_device_count(int *count, GError **error);

/** Measures GPU 0 and the disk under @disk_path; appends scenario YAML to @yaml. */
gboolean gs_cuda_calibrate(const char *disk_path, GString *yaml, GError **error);

G_END_DECLS

#endif /* GPUSIM_CUDA_H */
