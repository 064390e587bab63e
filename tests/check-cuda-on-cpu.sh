#!/bin/sh
# The conformance scenarios with --backend=cuda, on the CPU stand-in for the
# CUDA runtime (tests/cuda-on-cpu.c): the CUDA backend's pools, streams,
# staging, files and checks carry out every run, and any device access
# outside a live allocation, or before the work it depends on, aborts it.
# First, a device that faults mid-run (an illegal address, which sticks to
# every later call) ends the run with exit status 4, its error, and no result.
GS_REAL_BACKEND=cuda
GS_REAL_GPUSIM="$top_builddir/tests/gpusim-cuda-on-cpu"
export GS_REAL_BACKEND GS_REAL_GPUSIM

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GS_CUDA_ON_CPU_FAULT_AFTER=3 "$GS_REAL_GPUSIM" run --backend=cuda --json="$tmp/fault.json" \
	"$top_srcdir/scenarios/quickstart.yaml" >"$tmp/out" 2>"$tmp/err"
status=$?
if [ $status -ne 4 ] || ! grep -q 'gpusim: CUDA: .*an illegal memory access' "$tmp/err" ||
	[ -e "$tmp/fault.json" ]; then
	echo "FAIL: a device fault: exit status $status (4 expected), result written:" \
		"$([ -e "$tmp/fault.json" ] && echo yes || echo no)"
	cat "$tmp/err"
	exit 1
fi
rm -rf "$tmp"
trap - EXIT
exec "$top_srcdir/tests/check-host-backend.sh"
