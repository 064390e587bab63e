/*
 * gpusim: the three kernels the CUDA backend launches, behind C calls.
 *
 * busy keeps one small block of the GPU spinning on the device's global
 * timer for a compute's duration and reads the buffers it uses all the while
 * (reads only, so the buffers keep their pattern); fill writes a buffer's
 * pattern (pattern.h's words, the same function on both sides); check counts
 * the words that differ from it into a device counter. All are ordered on the
 * given stream and return at once; errors surface at the next synchronise.
 */
#ifndef GPUSIM_CUDA_KERNEL_H
#define GPUSIM_CUDA_KERNEL_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_CUDA_MAX_USES 8

typedef struct {
	const unsigned long long *ptr[GS_CUDA_MAX_USES];
	unsigned long long words[GS_CUDA_MAX_USES];
	unsigned n;
} GsCudaUses;

cudaError_t gs_cuda_busy(long long ns, GsCudaUses uses, cudaStream_t stream);
cudaError_t gs_cuda_fill(unsigned long long *words, unsigned long long n, unsigned long long seed,
			 cudaStream_t stream);
cudaError_t gs_cuda_check(const unsigned long long *words, unsigned long long n,
			  unsigned long long seed, unsigned long long *mismatches,
			  cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GPUSIM_CUDA_KERNEL_H */
