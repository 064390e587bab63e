#!/bin/sh
# The plots of compare, sweep and montecarlo are drawn and are valid PNG and
# SVG files.
# Needs gnuplot: skipped (77) without it.
set -u
gpusim="$top_builddir/gpusim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v gnuplot >/dev/null 2>&1 || { echo "SKIP: gnuplot is not installed"; exit 77; }
unset GPUSIM_GNUPLOT

is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_svg() { head -c 200 "$1" | grep -q '^<?xml' && grep -q '<svg' "$1" && tail -c 20 "$1" | grep -q '</svg>'; }

"$gpusim" compare -q --out="$tmp/c" "$top_srcdir/scenarios/quickstart.yaml" 2>"$tmp/err" ||
	fail "compare: $(cat "$tmp/err")"
! grep -q 'skipped' "$tmp/err" || fail "plots skipped with gnuplot present: $(cat "$tmp/err")"
for plot in memory threads metrics; do
	is_png "$tmp/c/$plot.png" || fail "$plot.png is not a PNG file"
	is_svg "$tmp/c/$plot.svg" || fail "$plot.svg is not an SVG file"
	# Each names what it shows.
	grep -q 'quickstart' "$tmp/c/$plot.svg" || fail "$plot.svg has no title"
done
grep -q 'simulated time (ms)' "$tmp/c/memory.svg" || fail "memory.svg: no time axis label with its unit"
grep -q 'retry' "$tmp/c/memory.svg" || fail "memory.svg: no legend"
ls -A "$tmp/c" | grep -q '^\.' && fail "a temporary file was left: $(ls -A "$tmp/c")"

"$gpusim" sweep -q --param memory.gpu.capacity=8MiB,16MiB --out="$tmp/s" \
	"$top_srcdir/scenarios/quickstart.yaml" 2>"$tmp/err" || fail "sweep: $(cat "$tmp/err")"
is_png "$tmp/s/sweep.png" || fail "sweep.png is not a PNG file"
is_svg "$tmp/s/sweep.svg" || fail "sweep.svg is not an SVG file"
grep -q 'memory.gpu.capacity (MiB)' "$tmp/s/sweep.svg" || fail "sweep.svg: no x axis label with its unit"
# Words as values: one tick per value.
"$gpusim" sweep -q --param policy.oom=fail,block,retry --variants=base --out="$tmp/w" \
	"$top_srcdir/scenarios/quickstart.yaml" 2>"$tmp/err" || fail "sweep of words: $(cat "$tmp/err")"
is_png "$tmp/w/sweep.png" || fail "sweep of words: no PNG"
grep -q '>block<' "$tmp/w/sweep.svg" || fail "sweep of words: no tick named block"
# montecarlo's CDFs: one picture per metric, a labelled curve per policy.
"$gpusim" montecarlo -q --seed=3 --iter=10 --numTasks=6 --policies=retry,block --plots="$tmp/m" \
	>/dev/null 2>"$tmp/err" || fail "montecarlo: $(cat "$tmp/err")"
! grep -q 'skipped' "$tmp/err" || fail "montecarlo: plots skipped with gnuplot present"
for what in task-time retries blocked; do
	is_png "$tmp/m/cdf-$what.png" || fail "cdf-$what.png is not a PNG file"
	is_svg "$tmp/m/cdf-$what.svg" || fail "cdf-$what.svg is not an SVG file"
	grep -q 'over the tasks of 10 situations (--seed=3)' "$tmp/m/cdf-$what.svg" ||
		fail "cdf-$what.svg has no title"
	grep -q '>retry: 60 tasks<' "$tmp/m/cdf-$what.svg" || fail "cdf-$what.svg: no curve for retry"
	grep -q '>block: [0-9]* ' "$tmp/m/cdf-$what.svg" || fail "cdf-$what.svg: no curve for block"
done
grep -q 'task time, first start to end (ms)' "$tmp/m/cdf-task-time.svg" ||
	fail "cdf-task-time.svg: no x axis label with its unit"
grep -q 'fraction at or below' "$tmp/m/cdf-blocked.svg" || fail "cdf-blocked.svg: no y axis label"
ls -A "$tmp/m" | grep -q '^\.' && fail "a temporary file was left: $(ls -A "$tmp/m")"
echo "compare, sweep and montecarlo draw valid PNG and SVG plots"
