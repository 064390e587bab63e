#!/bin/sh
# What the CUDA backend must show on a GPU, in one command:
#     bench/gpu-checks.sh BIN OUT
# BIN holds the programs, laid out as in a build directory (gpusim,
# tests/test-cuda, bench/bench-cuda, bench/bench-threads): a build with CUDA,
# or a folder made by scripts/gpu-kit, whose lib/ is then put on the library
# path. Scenarios come from the source tree this script is in. OUT gets
# report.md (every figure, as Markdown, for bench/RESULTS.md), device.yaml
# (calibrate's output), prediction.csv (predict's) and runs.tar.gz (every
# result JSON and log).
#
# In order: the CUDA tests (they must pass, not skip); every scenario in
# scenarios/ under the simulator and with --backend=cuda (outcome, retries,
# splits, makespan, expectations on the virtual and the real clock); the
# conformance scenarios' expectations with --backend=cuda; bench-cuda (the
# driver's and runtime's versions, each kernel's first launch against its
# second, allocation overhead, spill throughput and its CPU share);
# bench-threads --backend=cuda (1 to 16 threads, fast path against the global
# mutex); calibrate, then gpusim predict: the simulator with the calibration's
# links against the median of three real runs, on six scenarios; compare and
# sweep with --backend=cuda. Exit status: 0 when everything ran, whatever it measured; 1 when a step could
# not run or the CUDA tests failed, or skipped (no GPU: then nothing else
# runs).
set -u
if [ $# -ne 2 ]; then
	echo "usage: bench/gpu-checks.sh BIN OUT" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
[ -d "$bin/lib" ] && LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" &&
	export LD_LIBRARY_PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sim" "$work/cuda" "$work/virtual"
report="$out/report.md"
status=0

say() { printf '%s\n' "$*" >>"$report"; }
# A top-level string or number of a result JSON; a field of its totals.
field() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1" 2>/dev/null | head -1; }
total() { sed -n "s/^    \"$2\": \([0-9]*\),\{0,1\}\$/\1/p" "$1" 2>/dev/null | head -1; }
ms() { awk -v ns="${1:-0}" 'BEGIN { printf "%.1f", ns / 1e6 }'; }
# outcome, retries, splits, makespan (ms) of a result, as one table cell
summary() {
	if [ -s "$1" ]; then
		echo "$(field "$1" outcome), $(total "$1" retries), $(total "$1" splits), $(ms "$(field "$1" makespan_ns)")"
	else
		echo "no result"
	fi
}
fence() { say '```'"${2:-text}"; cat "$1" >>"$report"; say '```'; }
# The exit status of a scenario's run with --backend=cuda on the virtual clock,
# its output in $2; "-" for a scenario marked real-threads: skip.
on_the_virtual_clock() {
	if head -1 "$1" | grep -q '^# real-threads: skip'; then
		echo -
	else
		"$bin/gpusim" run --quiet --backend=cuda --clock=virtual --max-time=30s "$1" >"$2" 2>&1
		echo $?
	fi
}

device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
	head -1)
: >"$report"
say "# GPU checks: ${device:-no GPU found by nvidia-smi}"
say ""
say "$(date -u '+%Y-%m-%d %H:%M UTC'); $("$bin/gpusim" --version 2>&1 | head -1); $(nproc) CPUs"
say ""

say "## CUDA tests (tests/test-cuda)"
top_srcdir="$src" "$bin/tests/test-cuda" >"$work/test-cuda.log" 2>&1
code=$?
case $code in
0) say "PASS" ;;
77) say "SKIPPED (exit 77): no GPU was found here; nothing else was run." ;;
*) say "FAILED (exit $code)"; status=1 ;;
esac
fence "$work/test-cuda.log"
if [ $code -eq 77 ]; then
	echo "bench/gpu-checks.sh: no GPU here; wrote $report" >&2
	exit 1
fi

say ""
say "## Every scenario: the simulator against --backend=cuda"
say ""
say "Cells: outcome, retries, splits, makespan in ms, the cuda run on the real clock."
say "Expectations: the exit status of \`gpusim run\` (0 all held, 1 one failed), in the"
say "simulator, with --backend=cuda on the virtual clock (as make check runs the host"
say "backend: real threads, memory and copies, scenario time moving only when every"
say "thread waits; not run for a scenario marked real-threads: skip), and on the real"
say "clock, where a scenario's microsecond gaps cannot hold. Real runs are capped at 30 s."
say ""
say "| scenario | skip mark | simulator | cuda | expectations sim / cuda virtual / cuda real | spill-blocked sim / cuda (ms) | copies lost | device refusals | same outcome, retries, splits |"
say "|---|---|---|---|---|---|---|---|---|"
for scenario in "$src"/scenarios/*.yaml; do
	name=$(basename "$scenario" .yaml)
	mark=no
	head -1 "$scenario" | grep -q '^# real-threads: skip' && mark=yes
	"$bin/gpusim" run --quiet --json="$work/sim/$name.json" "$scenario" \
		>"$work/sim/$name.log" 2>&1
	sim_code=$?
	"$bin/gpusim" run --quiet --backend=cuda --max-time=30s --json="$work/cuda/$name.json" \
		"$scenario" >"$work/cuda/$name.log" 2>&1
	cuda_code=$?
	virtual=$(on_the_virtual_clock "$scenario" "$work/virtual/$name.log")
	s=$(summary "$work/sim/$name.json")
	c=$(summary "$work/cuda/$name.json")
	case $cuda_code in
	0 | 1) ;;
	# Valid, but more than this machine has (GPUs, free memory): said, not failed.
	3) c="not run here: $(sed -n 's/^gpusim: //p' "$work/cuda/$name.log" | head -1)" ;;
	*) status=1 ;;
	esac
	same=no
	[ "${s%, *}" = "${c%, *}" ] && same=yes
	[ $cuda_code -eq 3 ] && same=-
	refused=$(sed -n 's/.*the device refused \([0-9]*\) .*/\1/p' "$work/cuda/$name.log")
	say "| $name | $mark | $s | $c | $sim_code / $virtual / $cuda_code | $(ms "$(total "$work/sim/$name.json" spill_block_ns)") / $(ms "$(total "$work/cuda/$name.json" spill_block_ns)") | $(total "$work/cuda/$name.json" copies_lost) | ${refused:-0} | $same |"
done

say ""
say "## The conformance scenarios with --backend=cuda on the virtual clock"
say ""
held=0
skipped=0
: >"$work/conformance-failed"
for scenario in "$src"/scenarios/conformance/*.yaml; do
	name=$(basename "$scenario" .yaml)
	code=$(on_the_virtual_clock "$scenario" "$work/virtual/conformance-$name.log")
	case $code in
	-) skipped=$((skipped + 1)) ;;
	0) held=$((held + 1)) ;;
	*)
		{
			echo "$name (exit $code):"
			head -5 "$work/virtual/conformance-$name.log"
		} >>"$work/conformance-failed"
		;;
	esac
done
failed=$(grep -c ' (exit [0-9]*):$' "$work/conformance-failed")
say "$held held their expectations, $failed did not, $skipped are marked real-threads: skip."
[ "$failed" -eq 0 ] || fence "$work/conformance-failed"

say ""
say "## Driver, first launches, allocation overhead and spill throughput (bench-cuda)"
"$bin/bench/bench-cuda" >"$work/bench-cuda.log" 2>&1 || status=1
fence "$work/bench-cuda.log"

say ""
say "## Contention (bench-threads --backend=cuda, then the host backend for scale)"
"$bin/bench/bench-threads" --backend=cuda >"$work/bench-threads-cuda.log" 2>&1 || status=1
fence "$work/bench-threads-cuda.log"
"$bin/bench/bench-threads" >"$work/bench-threads-host.log" 2>&1 || status=1
fence "$work/bench-threads-host.log"

say ""
say "## Calibration (gpusim calibrate --backend=cuda)"
if "$bin/gpusim" calibrate --backend=cuda --out="$out/device.yaml" >"$work/calibrate.log" 2>&1; then
	fence "$out/device.yaml" yaml
	say ""
	say "## Prediction: the simulator with the calibration against the real runs"
	say ""
	say "gpusim predict --backend=cuda --device=links.yaml --runs=3 (measured: the median of 3"
	say "runs), links.yaml being the calibration's links: alone, so that each scenario keeps"
	say "its own capacity: the whole GPU's would leave nothing to spill."
	sed '/^memory:/,/^links:/{/^links:/!d}' "$out/device.yaml" >"$work/links.yaml"
	if "$bin/gpusim" predict --backend=cuda --device="$work/links.yaml" --runs=3 \
		--out="$work/prediction" "$src/scenarios/wide-gaps-spill.yaml" \
		"$src/scenarios/wide-gaps-host-full.yaml" "$src/scenarios/wide-gaps-rollback.yaml" \
		"$src/scenarios/generated-spill.yaml" "$src/scenarios/host-full-disk.yaml" \
		"$src/scenarios/host-pools-pinning.yaml" >"$work/predict.log" 2>&1; then
		fence "$work/predict.log"
		fence "$work/prediction/prediction.csv" csv
		cp "$work/prediction/prediction.csv" "$out/" 2>/dev/null || true
	else
		say "predict failed:"
		fence "$work/predict.log"
		status=1
	fi
else
	say "calibrate failed:"
	fence "$work/calibrate.log"
	status=1
fi

say ""
say "## compare and sweep on the device (one run at a time, whatever --jobs says)"
if "$bin/gpusim" compare --quiet --backend=cuda --jobs=4 --out="$work/compare" \
	"$src/scenarios/studies/oom-policies.yaml" >"$work/compare.log" 2>&1 &&
	"$bin/gpusim" sweep --quiet --backend=cuda --jobs=4 --out="$work/sweep" \
		--param memory.gpu.capacity=512MiB,1GiB "$src/scenarios/studies/oom-policies.yaml" \
		>"$work/sweep.log" 2>&1; then
	fence "$work/compare/summary.csv" csv
	fence "$work/sweep/sweep.csv" csv
else
	say "compare or sweep with --backend=cuda failed:"
	fence "$work/compare.log"
	fence "$work/sweep.log"
	status=1
fi

tar czf "$out/runs.tar.gz" -C "$work" .
echo "bench/gpu-checks.sh: wrote $report (exit $status)"
exit $status
