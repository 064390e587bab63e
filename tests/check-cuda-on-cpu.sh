#!/bin/sh
# The conformance scenarios with --backend=cuda, on the CPU stand-in for the
# CUDA runtime (tests/cuda-on-cpu.c): the CUDA backend's pools, streams,
# staging, files and checks carry out every run, and any device access
# outside a live allocation, or before the work it depends on, aborts it.
# First, a device that faults mid-run (an illegal address, which sticks to
# every later call) ends the run with exit status 4, its error, and no result;
# odd alignments and host block sizes run clean; compare and sweep run on it.
GS_THREADS_BACKEND=cuda
GS_THREADS_GPUSIM="$top_builddir/tests/gpusim-cuda-on-cpu"
export GS_THREADS_BACKEND GS_THREADS_GPUSIM

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GS_CUDA_ON_CPU_FAULT_AFTER=3 "$GS_THREADS_GPUSIM" run --backend=cuda --json="$tmp/fault.json" \
	"$top_srcdir/scenarios/quickstart.yaml" >"$tmp/out" 2>"$tmp/err"
status=$?
if [ $status -ne 4 ] || ! grep -q 'gpusim: CUDA: .*an illegal memory access' "$tmp/err" ||
	[ -e "$tmp/fault.json" ]; then
	echo "FAIL: a device fault: exit status $status (4 expected), result written:" \
		"$([ -e "$tmp/fault.json" ] && echo yes || echo no)"
	cat "$tmp/err"
	exit 1
fi
# Odd alignments and host blocks (not multiples of the kernels' 8-byte words)
# run clean: no stand-in breach, no copy lost (expectations pin other sizes).
for scenario in quickstart wide-gaps-spill spill-lru spill-largest; do
	"$GS_THREADS_GPUSIM" run --quiet --backend=cuda --clock=virtual --set memory.gpu.alignment=12 \
		--set memory.host.block_size=4100 --json="$tmp/odd.json" \
		"$top_srcdir/scenarios/$scenario.yaml" >"$tmp/out" 2>"$tmp/err"
	status=$?
	if [ $status -gt 1 ] || ! grep -q '"copies_lost": 0,' "$tmp/odd.json"; then
		echo "FAIL: $scenario with alignment 12 and 4,100-byte host blocks: exit status $status"
		cat "$tmp/err"
		exit 1
	fi
done
# compare and sweep on the device: every variant and point runs, one after another,
# and each result names its backend.
if ! "$GS_THREADS_GPUSIM" compare --quiet --backend=cuda --jobs=4 --out="$tmp/compare" \
	"$top_srcdir/scenarios/quickstart.yaml" >"$tmp/out" 2>"$tmp/err" ||
	[ "$(grep -l '"backend": "cuda"' "$tmp/compare"/*.json | wc -l)" -ne 3 ]; then
	echo "FAIL: compare --backend=cuda: $(ls "$tmp/compare" 2>&1)"
	cat "$tmp/err"
	exit 1
fi
if ! "$GS_THREADS_GPUSIM" sweep --quiet --backend=cuda --jobs=4 \
	--param memory.gpu.capacity=4MiB,8MiB --out="$tmp/sweep" \
	"$top_srcdir/scenarios/quickstart.yaml" >"$tmp/out" 2>"$tmp/err" ||
	[ "$(grep -c '^[0-9]' "$tmp/sweep/sweep.csv")" -ne 6 ]; then
	echo "FAIL: sweep --backend=cuda: $(cat "$tmp/sweep/sweep.csv" 2>&1)"
	cat "$tmp/err"
	exit 1
fi
rm -rf "$tmp"
trap - EXIT
exec "$top_srcdir/tests/check-host-backend.sh"
