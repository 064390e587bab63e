/*
 * gpusim tests: the CPU stand-in's own tests, which tests/test-cuda-on-cpu
 * runs beside the CUDA backend's.
 */
#ifndef GPUSIM_TEST_CUDA_ON_CPU_H
#define GPUSIM_TEST_CUDA_ON_CPU_H

#include <check.h>

#include "cuda-on-cpu.h"

TCase *gs_test_cuda_stand_in(void);

#endif /* GPUSIM_TEST_CUDA_ON_CPU_H */
