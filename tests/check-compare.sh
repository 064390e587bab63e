#!/bin/sh
# gpusim compare: the table, summary.csv, one result per variant, traces,
# determinism across --jobs, plots skipped plainly without gnuplot, and bad
# usage (exit 2, nothing written). Plot files: check-plots.sh.
set -u
gpusim="$top_builddir/gpusim"
scenarios="$top_srcdir/scenarios"
small="$top_srcdir/tests/data/compare-small.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
# The row of variant $2 in summary.csv $1.
row() { grep "^$2," "$1"; }
# Field $2 (a column name) of row $3 of CSV file $1.
field() {
	awk -F, -v name="$2" -v key="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == key { print $col[name] }' "$1"
}
export GPUSIM_GNUPLOT=no

# No variants in the scenario: fail, block and retry, in that order.
[ "$(status "$gpusim" compare --out="$tmp/q" "$scenarios/quickstart.yaml")" = 0 ] ||
	fail "compare quickstart: $(cat "$tmp/err")"
header=$(head -1 "$tmp/q/summary.csv")
[ "$header" = "variant,outcome,makespan_ns,tasks,tasks_completed,tasks_failed,task_attempts,retries,splits,blocked_ns,lost_ns,spill_block_ns,semaphore_wait_ns,deadlocks_busted,deadlocks_unresolved,spilled_gpu_to_host,spilled_host_to_disk,unspilled_host_to_gpu,unspilled_disk_to_host,peak_gpu_used,peak_host_used,peak_disk_used,mean_gpu_used,gpu_capacity" ] ||
	fail "summary.csv header: $header"
[ "$(cut -d, -f1 "$tmp/q/summary.csv" | tr '\n' ' ')" = "variant fail block retry " ] ||
	fail "variants and their order: $(cut -d, -f1 "$tmp/q/summary.csv" | tr '\n' ' ')"
s="$tmp/q/summary.csv"
[ "$(field "$s" outcome fail),$(field "$s" tasks_failed fail)" = "failed,2" ] || fail "fail row: $(row "$s" fail)"
[ "$(field "$s" outcome block),$(field "$s" deadlocks_unresolved block)" = "deadlock,1" ] ||
	fail "block row: $(row "$s" block)"
[ "$(field "$s" outcome retry),$(field "$s" retries retry),$(field "$s" splits retry),$(field "$s" makespan_ns retry)" = \
	"completed,3,1,10009000" ] || fail "retry row: $(row "$s" retry)"
[ "$(field "$s" spilled_gpu_to_host retry),$(field "$s" gpu_capacity retry)" = "0,10485760" ] ||
	fail "retry spill and capacity: $(row "$s" retry)"
for v in fail block retry; do
	grep -q '"schema": "gpusim-result/1"' "$tmp/q/$v.json" || fail "$v.json is not a result"
	head -1 "$tmp/q/$v.timeline.csv" | grep -q '^time_ns,gpu_used' || fail "$v.timeline.csv header"
done
grep -q '"oom": "block"' "$tmp/q/block.json" || fail "the block variant did not run with oom block"
# The table: a column per variant, a row per metric.
grep -q '^ *fail *block *retry$' "$tmp/out" || fail "table heading: $(head -3 "$tmp/out")"
grep -q '^outcome *failed *deadlock *completed$' "$tmp/out" || fail "table outcome row"
# Without gnuplot: said once, plainly, and the data is there anyway.
[ "$(grep -c 'plots skipped' "$tmp/err")" = 1 ] || fail "the skipped plots must be said once: $(cat "$tmp/err")"
grep -q 'install gnuplot' "$tmp/err" || fail "the message does not say how to get the plots"
[ ! -e "$tmp/q/memory.png" ] || fail "a plot without gnuplot"

# The scenario's own variants, as --variants orders them, with --set and --trace.
[ "$(status "$gpusim" compare -q --variants=tight,roomy --trace --out="$tmp/s" "$small")" = 0 ] ||
	fail "compare small: $(cat "$tmp/err")"
s="$tmp/s/summary.csv"
[ "$(cut -d, -f1 "$s" | tr '\n' ' ')" = "variant tight roomy " ] || fail "--variants order"
[ "$(row "$s" roomy)" = "roomy,completed,1001000,1,1,0,1,0,0,0,0,0,0,0,0,0,0,0,0,6291456,0,0,$(field "$s" mean_gpu_used roomy),8388608" ] ||
	fail "roomy row: $(row "$s" roomy)"
[ "$(field "$s" outcome tight),$(field "$s" tasks_failed tight),$(field "$s" gpu_capacity tight)" = "failed,1,4194304" ] ||
	fail "tight row: $(row "$s" tight)"
grep -q '"traceEvents"' "$tmp/s/roomy.trace.json" || fail "--trace wrote no trace"
[ ! -s "$tmp/out" ] || fail "--quiet printed a table"
# base and the built-in policies are there beside the scenario's variants.
"$gpusim" compare -q --variants=base,block --out="$tmp/b" "$small" 2>/dev/null || fail "base,block"
[ "$(field "$tmp/b/summary.csv" gpu_capacity base)" = 8388608 ] || fail "base is the scenario as written"
"$gpusim" compare -q --set memory.gpu.capacity=7MiB --variants=roomy --out="$tmp/set" "$small" 2>/dev/null ||
	fail "--set"
[ "$(field "$tmp/set/summary.csv" gpu_capacity roomy)" = 7340032 ] || fail "--set did not reach the run"

# The same results whatever the number of workers (wall_ns aside).
"$gpusim" compare -q --jobs=1 --out="$tmp/j1" "$scenarios/quickstart.yaml" 2>/dev/null
"$gpusim" compare -q --jobs=3 --out="$tmp/j3" "$scenarios/quickstart.yaml" 2>/dev/null
cmp -s "$tmp/j1/summary.csv" "$tmp/j3/summary.csv" || fail "summary.csv differs between --jobs=1 and 3"
for v in fail block retry; do
	grep -v wall_ns "$tmp/j1/$v.json" >"$tmp/a.json"
	grep -v wall_ns "$tmp/j3/$v.json" >"$tmp/b.json"
	cmp -s "$tmp/a.json" "$tmp/b.json" || fail "$v.json differs between --jobs=1 and 3"
done

# Bad usage: exit 2, one clear message, nothing written.
[ "$(status "$gpusim" compare --out="$tmp/x1" --variants=nope "$small")" = 2 ] || fail "unknown variant"
grep -q "unknown variant 'nope'" "$tmp/err" || fail "unknown variant message: $(cat "$tmp/err")"
[ "$(status "$gpusim" compare --out="$tmp/x2" --variants=roomy,roomy "$small")" = 2 ] || fail "a variant twice"
[ "$(status "$gpusim" compare --out="$tmp/x2" --variants= "$small")" = 2 ] || fail "no variant"
grep -q -- '--variants: no name given' "$tmp/err" || fail "no variant message: $(cat "$tmp/err")"
[ "$(status "$gpusim" compare --out="$tmp/x3" --set policy.oom=sometimes "$small")" = 2 ] || fail "bad --set"
grep -q '^--set policy.oom=sometimes:1:[0-9]*: ' "$tmp/err" || fail "bad --set message: $(cat "$tmp/err")"
printf 'gpusim: 1\nname: x\nmemory: {gpu: {capacity: -1MiB}}\n' >"$tmp/bad.yaml"
[ "$(status "$gpusim" compare --out="$tmp/x4" "$tmp/bad.yaml")" = 2 ] || fail "invalid scenario"
grep -q "bad.yaml:3:[0-9]*: " "$tmp/err" || fail "invalid scenario message: $(cat "$tmp/err")"
[ "$(status "$gpusim" compare --out="$tmp/x5" "$tmp/missing.yaml")" = 2 ] || fail "missing scenario"
[ "$(status "$gpusim" compare --out="$tmp/x6" --jobs=-2 "$small")" = 2 ] || fail "--jobs=-2"
[ "$(status "$gpusim" compare "$small" "$small")" = 2 ] || fail "two scenarios"
for d in x1 x2 x3 x4 x5 x6; do [ ! -e "$tmp/$d" ] || fail "a failed compare wrote $d"; done
[ "$(status "$gpusim" compare --out="$tmp/x7" --backend=cuda "$small")" = 3 ] || fail "--backend=cuda must exit 3"
[ ! -e "$tmp/x7" ] || fail "a compare whose backend could not run wrote x7"

# On real threads: the same variants, one run after another whatever --jobs says,
# the same outcomes, each result naming its backend.
[ "$(status "$gpusim" compare -q --out="$tmp/h" --backend=host --jobs=4 "$small")" = 0 ] ||
	fail "compare --backend=host: $(cat "$tmp/err")"
[ "$(grep -c . "$tmp/h/summary.csv")" = 3 ] || fail "host summary.csv: $(cat "$tmp/h/summary.csv")"
grep -q '"backend": "host"' "$tmp/h/roomy.json" || fail "the host result does not name its backend"
grep -q '"outcome": "completed"' "$tmp/h/roomy.json" || fail "roomy on host did not complete"
grep -q '"outcome": "failed"' "$tmp/h/tight.json" || fail "tight on host did not fail"
echo "gpusim compare: table, summary.csv, results, traces, determinism and errors behave"
