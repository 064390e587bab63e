#!/bin/sh
# gpusim sweep: the cross product, sweep.csv's columns and values, the same
# file whatever --jobs is, progress as plain lines off a terminal (and a bar on
# one), traces per run, and bad usage (exit 2, nothing written).
set -u
gpusim="$top_builddir/gpusim"
scenarios="$top_srcdir/scenarios"
small="$top_srcdir/tests/data/compare-small.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
# Field $2 (a column name) of the row whose run is $3 in CSV file $1.
field() {
	awk -F, -v name="$2" -v run="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == run { print $col[name] }' "$1"
}
export GPUSIM_GNUPLOT=no

# One parameter times the built-in policies: 2 x 3 runs, the first parameter slowest.
[ "$(status "$gpusim" sweep --param memory.gpu.capacity=8MiB,16MiB --out="$tmp/q" --jobs=2 \
	"$scenarios/quickstart.yaml")" = 0 ] || fail "sweep quickstart: $(cat "$tmp/err")"
s="$tmp/q/sweep.csv"
head -1 "$s" | grep -q '^run,memory.gpu.capacity,memory.gpu.capacity_text,variant,outcome,makespan_ns,tasks,' ||
	fail "sweep.csv header: $(head -1 "$s")"
[ "$(wc -l <"$s")" -eq 7 ] || fail "expected 6 runs, sweep.csv has $(($(wc -l <"$s") - 1))"
# A size in bytes, as a notebook reads numbers, and as written beside it.
[ "$(cut -d, -f1-4 "$s" | tail -6 | tr '\n' ' ')" = \
	"1,8388608,8MiB,fail 2,8388608,8MiB,block 3,8388608,8MiB,retry 4,16777216,16MiB,fail 5,16777216,16MiB,block 6,16777216,16MiB,retry " ] ||
	fail "run order: $(cut -d, -f1-4 "$s" | tr '\n' ' ')"
[ "$(field "$s" outcome 3),$(field "$s" retries 3),$(field "$s" splits 3)" = "completed,3,1" ] ||
	fail "8MiB retry: $(grep '^3,' "$s")"
[ "$(field "$s" gpu_capacity 3),$(field "$s" gpu_capacity 6)" = "8388608,16777216" ] ||
	fail "the swept capacity did not reach the runs"
[ "$(field "$s" outcome 2),$(field "$s" tasks_failed 4)" = "deadlock,1" ] || fail "8MiB block, 16MiB fail"
[ -s "$tmp/q/sweep-plot.csv" ] || fail "no sweep-plot.csv"
[ "$(grep -c 'plots skipped' "$tmp/err")" = 1 ] || fail "the skipped plot must be said once"

# Off a terminal: plain lines, never a carriage return.
grep -q '^gpusim sweep: 6 of 6 runs done$' "$tmp/err" || fail "no plain progress line: $(cat "$tmp/err")"
! grep -q "$(printf '\r')" "$tmp/err" || fail "a progress bar off a terminal"
# On a terminal (when script(1) can make one): a bar redrawn in place.
if script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "'$gpusim' sweep --param seed=1,2,3 --variants=roomy --out='$tmp/tty' '$small'" \
		"$tmp/typescript" >/dev/null 2>&1
	grep -q "$(printf '\r')sweep \[##*-*\] 3/3 runs" "$tmp/typescript" ||
		fail "no progress bar on a terminal: $(cat -v "$tmp/typescript")"
fi

# The same sweep.csv whatever --jobs is; --quiet prints nothing.
"$gpusim" sweep -q --param memory.gpu.capacity=8MiB,10MiB,16MiB --jobs=1 --out="$tmp/j1" \
	"$scenarios/quickstart.yaml" >"$tmp/out" 2>/dev/null
"$gpusim" sweep -q --param memory.gpu.capacity=8MiB,10MiB,16MiB --jobs=4 --out="$tmp/j4" \
	"$scenarios/quickstart.yaml" 2>/dev/null
cmp -s "$tmp/j1/sweep.csv" "$tmp/j4/sweep.csv" || fail "sweep.csv differs between --jobs=1 and 4"
[ ! -s "$tmp/out" ] || fail "--quiet printed"

# Two parameters and a chosen variant: the cross product; --trace per run.
"$gpusim" sweep -q --param policy.oom=fail,retry --param memory.gpu.capacity=4MiB,8MiB \
	--variants=roomy --trace --out="$tmp/two" "$small" 2>/dev/null || fail "two parameters"
s="$tmp/two/sweep.csv"
head -1 "$s" | grep -q '^run,policy.oom,memory.gpu.capacity,memory.gpu.capacity_text,variant,outcome,' ||
	fail "two-parameter header"
[ "$(cut -d, -f2,4 "$s" | tail -4 | tr '\n' ' ')" = "fail,4MiB fail,8MiB retry,4MiB retry,8MiB " ] ||
	fail "cross product: $(cut -d, -f2,4 "$s" | tr '\n' ' ')"
[ "$(field "$s" outcome 1),$(field "$s" outcome 2)" = "failed,completed" ] || fail "fail at 4 and 8 MiB"
for n in 001 002 003 004; do
	grep -q '"traceEvents"' "$tmp/two/run$n.trace.json" || fail "no trace for run $n"
done

# On real threads: the same grid, one run after another.
"$gpusim" sweep -q --backend=host --jobs=4 --param memory.gpu.capacity=4MiB,8MiB \
	--variants=roomy --out="$tmp/host" "$small" 2>"$tmp/err" || fail "sweep --backend=host: $(cat "$tmp/err")"
[ "$(grep -c . "$tmp/host/sweep.csv")" = 3 ] || fail "host sweep.csv: $(cat "$tmp/host/sweep.csv")"
[ "$(field "$tmp/host/sweep.csv" outcome 2)" = completed ] || fail "8 MiB on host: $(cat "$tmp/host/sweep.csv")"

# Bad usage: exit 2, one clear message, nothing written.
[ "$(status "$gpusim" sweep --out="$tmp/x1" "$small")" = 2 ] || fail "no --param"
grep -q 'at least one --param' "$tmp/err" || fail "no --param message: $(cat "$tmp/err")"
[ "$(status "$gpusim" sweep --out="$tmp/x2" --param memory.gpu.capacity "$small")" = 2 ] || fail "--param without ="
[ "$(status "$gpusim" sweep --out="$tmp/x3" --param seed=1,,2 "$small")" = 2 ] || fail "an empty value"
[ "$(status "$gpusim" sweep --out="$tmp/x4" --param seed=1 --param seed=2 "$small")" = 2 ] ||
	fail "a parameter twice"
[ "$(status "$gpusim" sweep --out="$tmp/x5" --param policy.oom=fail,sometimes "$small")" = 2 ] ||
	fail "a bad value"
grep -q '^--set policy.oom=sometimes:1:[0-9]*: .*(with variant roomy)$' "$tmp/err" ||
	fail "bad value message: $(cat "$tmp/err")"
[ "$(status "$gpusim" sweep --out="$tmp/x6" --param no.such.key=1 "$small")" = 2 ] || fail "an unknown key"
[ "$(status "$gpusim" sweep --out="$tmp/x7" --param seed=1 --variants=nope "$small")" = 2 ] ||
	fail "an unknown variant"
[ "$(status "$gpusim" sweep --out="$tmp/x8" --param seed="$(seq -s, 1 1000)" \
	--param executor.slots="$(seq -s, 1 1001)" "$small")" = 2 ] || fail "a grid of over a million runs"
grep -q '^gpusim sweep: the grid has more than 1000000 runs$' "$tmp/err" ||
	fail "too large a grid: $(cat "$tmp/err")"
for d in x1 x2 x3 x4 x5 x6 x7 x8; do [ ! -e "$tmp/$d" ] || fail "a failed sweep wrote $d"; done
echo "gpusim sweep: grid, sweep.csv, determinism, progress and errors behave"
