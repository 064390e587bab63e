/*
 * Tests of the CPU stand-in for the CUDA runtime (cuda-on-cpu.c) itself:
 * the strictness that the CUDA backend's tests rely on must hold, or they
 * could pass where a GPU would fail.
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <cuda_runtime_api.h>

#include "backends/cuda/kernel.h"
#include "cuda-on-cpu.h"
#include "backends/pattern.h"
#include "test-cuda-on-cpu.h"

#define WORDS 1024
#define MIB ((size_t) 1 << 20)

static cudaMemPool_t
make_pool(size_t granule, size_t max_size)
{
	struct cudaMemPoolProps props = {0};
	cudaMemPool_t pool;

	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.maxSize = max_size;
	gs_cuda_on_cpu_set_pool_granule(granule);
	ck_assert_int_eq(cudaMemPoolCreate(&pool, &props), cudaSuccess);
	return pool;
}

/* A fill queued on one stream has not happened for another that did not wait for it. */
START_TEST(test_unsynchronised_work_has_not_happened)
{
	unsigned long long *dev, host[WORDS];
	cudaStream_t filler, reader;

	ck_assert_int_eq(cudaStreamCreate(&filler), cudaSuccess);
	ck_assert_int_eq(cudaStreamCreate(&reader), cudaSuccess);
	ck_assert_int_eq(cudaMalloc((void **) &dev, sizeof host), cudaSuccess);
	ck_assert_int_eq(gs_cuda_fill(dev, WORDS, 7, filler), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(host, dev, sizeof host, cudaMemcpyDeviceToHost, reader),
			 cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(reader), cudaSuccess);
	ck_assert(!gs_pattern_check((const guint64 *) host, WORDS, 7));
	ck_assert_int_eq(cudaStreamSynchronize(filler), cudaSuccess);
	ck_assert_int_eq(cudaMemcpyAsync(host, dev, sizeof host, cudaMemcpyDeviceToHost, reader),
			 cudaSuccess);
	ck_assert(gs_pattern_check((const guint64 *) host, WORDS, 7));
	ck_assert_int_eq(cudaFree(dev), cudaSuccess);
	ck_assert_int_eq(cudaStreamDestroy(filler), cudaSuccess);
	ck_assert_int_eq(cudaStreamDestroy(reader), cudaSuccess);
}
END_TEST

/* Work queued after a buffer's cudaFreeAsync, on another stream, ends the process. */
START_TEST(test_a_use_after_a_queued_free_aborts)
{
	void *dev;
	cudaStream_t a, b;

	cudaStreamCreate(&a);
	cudaStreamCreate(&b);
	cudaMallocAsync(&dev, 4096, a);
	cudaFreeAsync(dev, a);
	cudaMemsetAsync(dev, 0, 4096, b);
}
END_TEST

/* And a stream-ordered allocation used on another stream before its own has run past it. */
START_TEST(test_an_allocation_used_before_its_stream_got_there_aborts)
{
	void *dev;
	cudaStream_t a, b;

	cudaStreamCreate(&a);
	cudaStreamCreate(&b);
	cudaMallocAsync(&dev, 4096, a);
	cudaMemsetAsync(dev, 0, 4096, b);
}
END_TEST

/* And a pool's memory given to cudaFree with work still queued on it: cudaFree does not wait. */
START_TEST(test_a_pool_free_with_queued_work_aborts)
{
	void *dev;
	cudaStream_t a;

	cudaStreamCreate(&a);
	cudaMallocAsync(&dev, 4096, a);
	cudaStreamSynchronize(a);
	cudaMemsetAsync(dev, 0, 4096, a);
	cudaFree(dev);
}
END_TEST

/* So does a copy that reaches past the end of its allocation. */
START_TEST(test_an_access_past_the_end_aborts)
{
	void *dev;
	static char host[8192];

	cudaMalloc(&dev, 4096);
	cudaMemcpyAsync(host, dev, sizeof host, cudaMemcpyDeviceToHost, NULL);
}
END_TEST

/* And destroying a pool that still has allocations out. */
START_TEST(test_a_pool_destroyed_with_allocations_aborts)
{
	cudaMemPool_t pool = make_pool(256, MIB);
	void *dev;

	cudaMallocFromPoolAsync(&dev, 4096, pool, NULL);
	cudaMemPoolDestroy(pool);
}
END_TEST

/* A capped pool refuses past its cap, after waiting for frees queued on other streams. */
START_TEST(test_a_capped_pool_refuses_and_waits_for_frees)
{
	cudaMemPool_t pool = make_pool(256, MIB);
	cudaStream_t a, b;
	void *first, *second;

	cudaStreamCreate(&a);
	cudaStreamCreate(&b);
	ck_assert_int_eq(cudaMallocFromPoolAsync(&first, 768 << 10, pool, a), cudaSuccess);
	ck_assert_int_eq(cudaMallocFromPoolAsync(&second, 512 << 10, pool, b),
			 cudaErrorMemoryAllocation);
	ck_assert_int_eq(cudaGetLastError(), cudaErrorMemoryAllocation);
	ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
	ck_assert_int_eq(cudaFreeAsync(first, a), cudaSuccess);
	ck_assert_int_eq(cudaMallocFromPoolAsync(&second, 512 << 10, pool, b), cudaSuccess);
	ck_assert_int_eq(cudaFreeAsync(second, b), cudaSuccess);
	ck_assert_int_eq(cudaMemPoolDestroy(pool), cudaSuccess);
	cudaStreamDestroy(a);
	cudaStreamDestroy(b);
}
END_TEST

/* A child forked after the runtime started gets an initialisation error, as from CUDA. */
START_TEST(test_a_child_forked_after_the_start_cannot_use_it)
{
	cudaStream_t stream;
	int count, status;
	pid_t child;

	ck_assert_int_eq(cudaGetDeviceCount(&count), cudaSuccess);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		_exit(cudaStreamCreate(&stream) == cudaErrorInitializationError &&
		      cudaGetDeviceCount(&count) == cudaErrorInitializationError ? 0 : 1);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(cudaStreamCreate(&stream), cudaSuccess);
	ck_assert_int_eq(cudaStreamDestroy(stream), cudaSuccess);
}
END_TEST

/* A pool hands back what was just freed to it, bytes and all, as a real pool reuses addresses. */
START_TEST(test_a_pool_reuses_freed_memory_with_its_bytes)
{
	unsigned long long *first, *second;
	cudaStream_t stream;

	ck_assert_int_eq(cudaStreamCreate(&stream), cudaSuccess);
	ck_assert_int_eq(cudaMallocAsync((void **) &first, WORDS * 8, stream), cudaSuccess);
	ck_assert_int_eq(gs_cuda_fill(first, WORDS, 7, stream), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
	ck_assert_int_eq(cudaFreeAsync(first, stream), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
	ck_assert_int_eq(cudaMallocAsync((void **) &second, WORDS * 8, stream), cudaSuccess);
	ck_assert_ptr_eq(second, first);
	ck_assert_int_eq(cudaStreamSynchronize(stream), cudaSuccess);
	ck_assert(gs_pattern_check((const guint64 *) second, WORDS, 7));
	ck_assert_int_eq(cudaFreeAsync(second, stream), cudaSuccess);
	ck_assert_int_eq(cudaStreamDestroy(stream), cudaSuccess);
}
END_TEST

/*
 * A pool reserves whole granules: allocations of a granule or more take
 * their own, smaller ones share. A cap (maxSize) holds what it reserves, so
 * three 3 MiB buffers do not fit a pool capped at 10 MiB with 2 MiB granules.
 */
static const struct {
	size_t granule, cap, bytes[4];
	int refused; /* the first allocation refused; -1: none */
} granule_rows[] = {
	{2 * MIB, 10 * MIB, {3 * MIB, 3 * MIB, 3 * MIB}, 2},
	{256, 10 * MIB, {3 * MIB, 3 * MIB, 3 * MIB}, -1},
	{2 * MIB, 8 * MIB, {7 * MIB, 1024}, 1},
	{2 * MIB, 4 * MIB, {1024, 1024, 1024, MIB}, -1},
	{2 * MIB, 4 * MIB, {3 * MIB, 1024, 1024}, 1},
};

START_TEST(test_a_pool_reserves_whole_granules)
{
	cudaMemPool_t pool = make_pool(granule_rows[_i].granule, granule_rows[_i].cap);
	void *dev[G_N_ELEMENTS(granule_rows[_i].bytes)];
	int refused = -1;

	for (int i = 0; i < (int) G_N_ELEMENTS(dev) && granule_rows[_i].bytes[i] > 0; i++) {
		dev[i] = NULL;
		if (cudaMallocFromPoolAsync(&dev[i], granule_rows[_i].bytes[i], pool, NULL) !=
		    cudaSuccess) {
			refused = i;
			break;
		}
	}
	ck_assert_int_eq(refused, granule_rows[_i].refused);
	for (int i = 0; i < (refused < 0 ? (int) G_N_ELEMENTS(dev) : refused) &&
			granule_rows[_i].bytes[i] > 0; i++)
		ck_assert_int_eq(cudaFreeAsync(dev[i], NULL), cudaSuccess);
	ck_assert_int_eq(cudaMemPoolDestroy(pool), cudaSuccess);
}
END_TEST

/*
 * What a pool reserved and no longer needs goes back to the device at a
 * synchronisation, down to its release threshold: all of it at the default
 * threshold of 0, none of it at the largest.
 */
START_TEST(test_a_pool_keeps_memory_up_to_its_release_threshold)
{
	static const guint64 thresholds[] = {0, 4 * MIB, G_MAXUINT64};
	static const size_t kept[] = {0, 4 * MIB, 6 * MIB};
	cudaMemPool_t pool = make_pool(2 * MIB, 0);
	size_t before, after, total;
	void *dev;

	ck_assert_int_eq(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
						 (void *) &thresholds[_i]), cudaSuccess);
	ck_assert_int_eq(cudaMemGetInfo(&before, &total), cudaSuccess);
	ck_assert_int_eq(cudaMallocFromPoolAsync(&dev, 5 * MIB, pool, NULL), cudaSuccess);
	ck_assert_int_eq(cudaMemGetInfo(&after, &total), cudaSuccess);
	ck_assert_uint_eq(before - after, 6 * MIB);
	ck_assert_int_eq(cudaFreeAsync(dev, NULL), cudaSuccess);
	ck_assert_int_eq(cudaStreamSynchronize(NULL), cudaSuccess);
	ck_assert_int_eq(cudaMemGetInfo(&after, &total), cudaSuccess);
	ck_assert_uint_eq(before - after, kept[_i]);
	ck_assert_int_eq(cudaMemPoolDestroy(pool), cudaSuccess);
	ck_assert_int_eq(cudaMemGetInfo(&after, &total), cudaSuccess);
	ck_assert_uint_eq(after, before);
}
END_TEST

TCase *
gs_test_cuda_stand_in(void)
{
	TCase *tc = tcase_create("stand-in");

	tcase_add_test(tc, test_unsynchronised_work_has_not_happened);
	tcase_add_test_raise_signal(tc, test_a_use_after_a_queued_free_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_an_allocation_used_before_its_stream_got_there_aborts,
				    SIGABRT);
	tcase_add_test_raise_signal(tc, test_a_pool_free_with_queued_work_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_an_access_past_the_end_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_a_pool_destroyed_with_allocations_aborts, SIGABRT);
	tcase_add_test(tc, test_a_capped_pool_refuses_and_waits_for_frees);
	tcase_add_test(tc, test_a_child_forked_after_the_start_cannot_use_it);
	tcase_add_test(tc, test_a_pool_reuses_freed_memory_with_its_bytes);
	tcase_add_loop_test(tc, test_a_pool_reserves_whole_granules, 0, G_N_ELEMENTS(granule_rows));
	tcase_add_loop_test(tc, test_a_pool_keeps_memory_up_to_its_release_threshold, 0, 3);
	return tc;
}
