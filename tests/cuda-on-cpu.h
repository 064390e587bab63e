/*
 * gpusim tests: what the CPU stand-in for the CUDA runtime (cuda-on-cpu.c)
 * offers tests beyond the runtime's own calls.
 */
#ifndef GPUSIM_CUDA_ON_CPU_H
#define GPUSIM_CUDA_ON_CPU_H

/*
 * The next @n copies between the device and pinned memory (a buffer's bytes,
 * not a counter read back) are "done" without moving a byte.
 */
void gs_cuda_on_cpu_drop_copies(unsigned n);

/* After @after more copies are queued, the next one is refused with cudaErrorInvalidValue. */
void gs_cuda_on_cpu_refuse_copy(unsigned after);

/* The device faults now, for good: every later call fails with cudaErrorIllegalAddress. */
void gs_cuda_on_cpu_fault(void);

#endif /* GPUSIM_CUDA_ON_CPU_H */
