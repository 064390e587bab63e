// gpusim: the CUDA backend's kernels (see kernel.h). Compiled by nvcc.
#include "kernel.h"

// The same word as gs_pattern_word() in backends/pattern.h.
__device__ static unsigned long long
pattern_word(unsigned long long seed, unsigned long long index)
{
	unsigned long long x = seed * 0x9e3779b97f4a7c15ull ^ index * 0xbf58476d1ce4e5b9ull;

	return x ^ (x >> 31);
}

__device__ static unsigned long long
global_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ static void
busy_kernel(long long ns, GsCudaUses uses, unsigned long long *sink)
{
	unsigned long long start = global_ns(), acc = 0, i = threadIdx.x;

	while ((long long) (global_ns() - start) < ns) {
		for (unsigned u = 0; u < uses.n; u++) {
			if (uses.words[u] > 0)
				acc += uses.ptr[u][i % uses.words[u]];
		}
		i += blockDim.x * 512; // stride through the buffers, a few pages at a time
	}
	if (acc == 42) // never true in practice; keeps the reads alive
		*sink = acc;
}

__global__ static void
fill_kernel(unsigned long long *words, unsigned long long n, unsigned long long seed)
{
	for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long) gridDim.x * blockDim.x)
		words[i] = pattern_word(seed, i);
}

__global__ static void
check_kernel(const unsigned long long *words, unsigned long long n, unsigned long long seed,
	     unsigned long long *mismatches)
{
	for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long) gridDim.x * blockDim.x) {
		if (words[i] != pattern_word(seed, i))
			atomicAdd(mismatches, 1ull);
	}
}

__device__ static unsigned long long sink;

extern "C" cudaError_t
gs_cuda_busy(long long ns, GsCudaUses uses, cudaStream_t stream)
{
	unsigned long long *sink_ptr;
	cudaError_t err = cudaGetSymbolAddress((void **) &sink_ptr, sink);

	if (err != cudaSuccess)
		return err;
	busy_kernel<<<1, 32, 0, stream>>>(ns, uses, sink_ptr);
	return cudaGetLastError();
}

extern "C" cudaError_t
gs_cuda_fill(unsigned long long *words, unsigned long long n, unsigned long long seed,
	     cudaStream_t stream)
{
	fill_kernel<<<128, 256, 0, stream>>>(words, n, seed);
	return cudaGetLastError();
}

extern "C" cudaError_t
gs_cuda_check(const unsigned long long *words, unsigned long long n, unsigned long long seed,
	      unsigned long long *mismatches, cudaStream_t stream)
{
	check_kernel<<<128, 256, 0, stream>>>(words, n, seed, mismatches);
	return cudaGetLastError();
}
