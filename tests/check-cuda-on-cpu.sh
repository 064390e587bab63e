#!/bin/sh
# The conformance scenarios with --backend=cuda, on the CPU stand-in for the
# CUDA runtime (tests/cuda-on-cpu.c): the CUDA backend's pools, streams,
# staging, files and checks carry out every run, and any device access
# outside a live allocation, or before the work it depends on, aborts it.
GS_REAL_BACKEND=cuda
GS_REAL_GPUSIM="$top_builddir/tests/gpusim-cuda-on-cpu"
export GS_REAL_BACKEND GS_REAL_GPUSIM
exec "$top_srcdir/tests/check-host-backend.sh"
