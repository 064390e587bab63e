#!/bin/sh
# The CUDA backend's kernels carry machine code for the GPUs a user rents
# today (Ampere sm_80, Hopper sm_90, Blackwell sm_100) and PTX for the
# rest: without it an H100 compiles the kernels just in time, inside the
# first timed compute. Skips (77) in a build without CUDA.
kernel="$top_builddir/backends/cuda/.libs/kernel.o"
[ -f "$kernel" ] || exit 77
status=0
for arch in sm_80 sm_90 sm_100; do
	# Each cubin in the fat binary keeps the options it was built with.
	if ! strings "$kernel" | grep -q -- "-arch $arch "; then
		echo "FAIL: no $arch code in $kernel (NVCCFLAGS: see configure --help)"
		status=1
	fi
done
exit $status
