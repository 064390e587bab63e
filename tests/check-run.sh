#!/bin/sh
# gpusim run as a user drives it: exit statuses, outputs, overrides, limits.
set -u
gpusim="$top_builddir/gpusim"
scenarios="$top_srcdir/scenarios"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

# The quickstart meets its expectations and writes every output.
[ "$(status "$gpusim" run --quiet --json="$tmp/r.json" --events="$tmp/e.jsonl" \
	--trace="$tmp/t.json" --timeline="$tmp/t.csv" "$scenarios/quickstart.yaml")" = 0 ] ||
	fail "quickstart: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "--quiet still printed a summary"
grep -q '"schema": "gpusim-result/1"' "$tmp/r.json" || fail "result JSON has no schema"
grep -q '"outcome": "completed"' "$tmp/r.json" || fail "result JSON outcome"
head -1 "$tmp/t.csv" | grep -q '^time_ns,gpu_used' || fail "timeline CSV header"
grep -q '"traceEvents"' "$tmp/t.json" || fail "trace has no traceEvents"
[ "$(head -c 8 "$tmp/e.jsonl")" = '{"t_ns":' ] || fail "event lines start with t_ns"

# Each task's figures also under Spark-RAPIDS' metric names: H allocates 8 MiB at
# once, the most the adaptor holds whenever it allocates.
"$gpusim" run -q --json="$tmp/h.json" "$scenarios/alloc-free-retry.yaml" || fail "alloc-free-retry"
grep '"id": "H"' "$tmp/h.json" | grep -q '"spark_rapids": {"gpuRetryCount": 0, "gpuSplitAndRetryCount": 0, "gpuRetryBlockTime": 0, "gpuRetryComputationTime": 0, "gpuMaxDeviceMemoryBytes": 8388608, "gpuMaxTaskFootprint": 8388608}' ||
	fail "task H's Spark-RAPIDS metrics: $(grep '"id": "H"' "$tmp/h.json")"

# A refused allocation's event says why, the same on the simulator and on real threads
# (on the virtual clock, which orders them as the simulator does); the summary counts them.
for pair in fair-share:fair_share host-pinned-never-fits:never_fits \
	over-reservation-fail:reservation host-page-table:page_table alloc-free-retry:no_room; do
	name=${pair%%:*} reason=${pair#*:}
	for backend in sim host; do
		"$gpusim" run -q --backend=$backend --clock=virtual --events="$tmp/r.jsonl" \
			"$scenarios/$name.yaml" >/dev/null 2>&1
		grep -q "\"ok\":false,\"reason\":\"$reason\"" "$tmp/r.jsonl" ||
			fail "$name on $backend: no refusal for $reason"
	done
done
"$gpusim" run "$scenarios/fair-share.yaml" >"$tmp/out" 2>&1
grep -q '^refused       1 allocation: fair share 1$' "$tmp/out" || fail "the summary's refusals: $(grep refused "$tmp/out")"

# A summary names the scenario and the outcome.
"$gpusim" run "$scenarios/quickstart.yaml" >"$tmp/out" 2>&1 || fail "summary run"
grep -q '^outcome *completed' "$tmp/out" || fail "summary has no outcome line"

# Past 20 tasks the summary gives their distribution and the five slowest
# (--tasks lists every one); a run long enough to show progress on a
# terminal (over half a second) shows none on a pipe.
many() {
	cat >"$tmp/many.yaml" <<EOF
gpusim: 1
name: many
memory: {gpu: {capacity: 16GiB}}
executor: {slots: 32}
generate: {tasks: $1, task_max: 300MiB, max_allocs: 20, retry_blocks: true}
EOF
}
many 20000
"$gpusim" run "$tmp/many.yaml" >"$tmp/out" 2>"$tmp/err" || fail "a run of 20000 tasks"
[ ! -s "$tmp/err" ] || fail "progress on a pipe: $(head -c 200 "$tmp/err")"
grep -q '^20000 tasks  *p50  *p90  *p99  *max$' "$tmp/out" || fail "no distribution of the tasks"
grep -q '^the 5 slowest' "$tmp/out" || fail "no slowest tasks"
[ "$(grep -c '^g[0-9]' "$tmp/out")" = 5 ] || fail "not five rows of slowest tasks"
many 21
"$gpusim" run --tasks "$tmp/many.yaml" >"$tmp/out" 2>&1 || fail "run --tasks"
[ "$(grep -c '^g[0-9]' "$tmp/out")" = 21 ] || fail "--tasks did not list every task"
! grep -q 'p50' "$tmp/out" || fail "--tasks still gave the distribution"

# A failed expectation exits 1 and says which.
[ "$(status "$gpusim" run --set memory.gpu.capacity=64MiB "$scenarios/quickstart.yaml")" = 1 ] ||
	fail "a failed expectation must exit 1"
grep -q 'expectation failed' "$tmp/out" || fail "no 'expectation failed' line"

# --set and --seed reach the run; --json=- writes to stdout.
"$gpusim" run --quiet --json=- --seed=9 --set policy.oom=block "$scenarios/quickstart.yaml" \
	>"$tmp/out" 2>/dev/null
grep -q '"oom": "block"' "$tmp/out" || fail "--set policy.oom did not reach the result"
grep -q '"seed": 9' "$tmp/out" || fail "--seed did not reach the result"

# --max-time stops the clock: outcome timeout.
"$gpusim" run --quiet --json=- --max-time=50ms "$scenarios/watchdog-sleep.yaml" >"$tmp/out" 2>/dev/null
grep -q '"outcome": "timeout"' "$tmp/out" || fail "--max-time did not end in a timeout"
grep -q '"makespan_ns": 50000000' "$tmp/out" || fail "a timeout ends at --max-time"
# A run cut short while tasks hold Spark execution memory and pages frees
# them (the sanitizer builds would report a leak on stderr).
for clock in "--backend=sim" "--backend=host --clock=virtual"; do
	# shellcheck disable=SC2086 # the backend and its clock are two words
	"$gpusim" run --quiet --json=- --max-time=500us $clock "$scenarios/spark-pages.yaml" \
		>"$tmp/out" 2>"$tmp/err" || true
	grep -q '"outcome": "timeout"' "$tmp/out" || fail "spark-pages ($clock) did not time out"
	! grep -q 'Sanitizer' "$tmp/err" || fail "spark-pages cut short ($clock): $(cat "$tmp/err")"
done

# Usage errors exit 2 with one clear message, and write nothing.
[ "$(status "$gpusim" run)" = 2 ] || fail "no scenario must exit 2"
[ "$(status "$gpusim" run "$tmp/missing.yaml")" = 2 ] || fail "a missing file must exit 2"
grep -q 'missing.yaml' "$tmp/err" || fail "the missing file is not named"
[ "$(status "$gpusim" run --max-time=soon "$scenarios/quickstart.yaml")" = 2 ] ||
	fail "a bad --max-time must exit 2"
# --max-time reads a duration as scenarios write it: exact, and no more than
# 64-bit nanoseconds hold; the message points at the value.
for bad in nan inf 1e30s 99999999999s -1s 0.5ns 10; do
	[ "$(status "$gpusim" run --json="$tmp/bad.json" --max-time=$bad \
		"$scenarios/quickstart.yaml")" = 2 ] || fail "--max-time=$bad must exit 2"
	grep -q "^gpusim run: --max-time=$bad:1:12: " "$tmp/err" ||
		fail "--max-time=$bad: no positioned message: $(cat "$tmp/err")"
	[ ! -e "$tmp/bad.json" ] || fail "--max-time=$bad wrote a result"
done
[ "$(status "$gpusim" run --quiet --json=- --max-time=9223372036854775807ns \
	"$scenarios/watchdog-sleep.yaml")" = 0 ] || fail "the largest --max-time must be accepted"
[ "$(status "$gpusim" run --variant=nope "$scenarios/quickstart.yaml")" = 2 ] ||
	fail "an unknown variant must exit 2"
[ "$(status "$gpusim" run --set policy.oom=sometimes "$scenarios/quickstart.yaml")" = 2 ] ||
	fail "a bad --set value must exit 2"
[ "$(status "$gpusim" run --json="$tmp/no/such/dir/r.json" "$scenarios/quickstart.yaml")" = 2 ] ||
	fail "an unwritable output must exit 2"
[ ! -e "$tmp/no" ] || fail "a failed write left something behind"
[ "$(status "$gpusim" run --backend=warp "$scenarios/quickstart.yaml")" = 2 ] ||
	fail "an unknown backend must exit 2"

# Without a GPU (or without CUDA in the build) the cuda backend is unavailable:
# exit 3 and one sentence. With a GPU the quickstart runs and meets its
# expectations (0).
code=$(status "$gpusim" run --quiet --backend=cuda "$scenarios/quickstart.yaml")
case $code in
3) [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--backend=cuda must say one line" ;;
0) ;;
*) fail "--backend=cuda exited $code: $(cat "$tmp/err")" ;;
esac
code=$(status "$gpusim" calibrate --backend=cuda --out="$tmp/device.yaml")
case $code in
3) [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "calibrate --backend=cuda must say one line" ;;
0) grep -q '^links:' "$tmp/device.yaml" || fail "calibrate wrote no links:" ;;
*) fail "calibrate --backend=cuda exited $code: $(cat "$tmp/err")" ;;
esac
[ "$(status "$gpusim" calibrate --backend=sim)" = 2 ] || fail "calibrate --backend=sim must exit 2"
[ "$(status "$gpusim" calibrate)" = 2 ] || fail "calibrate without --backend must exit 2"
echo "gpusim run: outputs, overrides, limits and exit statuses behave"
