/*
 * gpusim tests: what the CPU stand-in for the CUDA runtime (cuda-on-cpu.c)
 * offers tests beyond the runtime's own calls.
 */
#ifndef GPUSIM_CUDA_ON_CPU_H
#define GPUSIM_CUDA_ON_CPU_H

#include <stddef.h>

/*
 * The next @n copies between the device and pinned memory (a buffer's bytes,
 * not a counter read back) are "done" without moving a byte.
 */
void gs_cuda_on_cpu_drop_copies(unsigned n);

/* After @after more copies are queued, the next one is refused with cudaErrorInvalidValue. */
void gs_cuda_on_cpu_refuse_copy(unsigned after);

/* The device faults now, for good: every later call fails with cudaErrorIllegalAddress. */
void gs_cuda_on_cpu_fault(void);

/* How many times a pool has reserved more device memory so far (trips to the driver). */
unsigned long gs_cuda_on_cpu_pool_grows(void);

/*
 * The next cudaStreamSynchronize that would run a pattern check waits, with
 * the stand-in free for every other thread, until
 * gs_cuda_on_cpu_release_check(); gs_cuda_on_cpu_check_held() waits up to
 * @seconds for it to be held and says whether it is.
 */
void gs_cuda_on_cpu_hold_next_check(void);
int gs_cuda_on_cpu_check_held(double seconds);
void gs_cuda_on_cpu_release_check(void);

/*
 * Pools made from now on reserve device memory @bytes at a time (0: 2 MiB,
 * as the runtime's pools; GS_CUDA_ON_CPU_POOL_GRANULE sets the first value).
 */
void gs_cuda_on_cpu_set_pool_granule(size_t bytes);

#endif /* GPUSIM_CUDA_ON_CPU_H */
