#!/bin/sh
# gpusim import-state-log: hand-written state logs of every format
# (tests/data/statelog/README.md) are summarised, checked and traced; an
# impossible transition is exit 1 with its line; a file that is not a state
# log is exit 2 with nothing written.
set -u
gpusim="$top_builddir/gpusim"
data="$top_srcdir/tests/data/statelog"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
has() { grep -qF -- "$1" "$tmp/out" || fail "$2: no '$1' in: $(cat "$tmp/out")"; }

# The current format, across midnight: every transition possible, the real span.
[ "$(status "$gpusim" import-state-log "$data/current.log" --trace="$tmp/t.json")" = 0 ] ||
	fail "current.log: $(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "current.log wrote to stderr: $(cat "$tmp/err")"
has "current.log: rows 43 (transitions 25, status 17, notes 1)" "current"
has "lines of other loggers skipped: 1 (the first at line 2)" "current"
has "span 24.0 ms; threads 3, tasks 3" "current"
has "deadlock checks that found all tasks blocked: 1, after which nothing moved: 0; all_bufn reached: 1" "current"
has "transitions checked against gpusim's table: 25; impossible: 0" "current"
# task 1: an injected and an organic RetryOOM, a block; task 2: rollback, RetryOOM, split
grep -Eq '^1 +9\.98 ms +3\.01 ms +5\.01 ms +990 us +100 us +4\.91 ms +0 ns +2 +0 +1 +0 +1 +0$' "$tmp/out" ||
	fail "task 1's row: $(cat "$tmp/out")"
grep -Eq '^2 +5\.90 ms +2\.00 ms +5\.02 ms +980 us +100 us +5\.10 ms +800 us +1 +1 +0 +1 +1 +0$' "$tmp/out" ||
	fail "task 2's row: $(cat "$tmp/out")"
grep -Eq '^pool +23\.8 ms( +0 ns){6}( +0){6}$' "$tmp/out" || fail "the pool's row: $(cat "$tmp/out")"
for mark in '"name":"GpuRetryOOM","cat":"throw"' '"name":"deadlock: rollback","cat":"deadlock"' \
	'"name":"deadlock: retry_once","cat":"deadlock"' '"name":"deadlock: split","cat":"deadlock"' \
	'"name":"RetryOOM","cat":"mark"' '"name":"SplitAndRetryOOM","cat":"mark"' \
	'"name":"deadlock check","cat":"mark"' '"name":"THREAD_BUFN","cat":"state","ph":"X"' \
	'"args":{"name":"state log: '; do
	grep -qF "$mark" "$tmp/t.json" || fail "trace lacks $mark"
done
[ "$(grep -c '"name":"thread_name"' "$tmp/t.json")" = 4 ] || fail "trace: not 4 tracks"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/t.json" ||
		fail "the trace is not JSON"
fi

# 2023 names: shuffle waits are outside the model and not checked.
[ "$(status "$gpusim" import-state-log "$data/old-2023.log")" = 0 ] || fail "old-2023: $(cat "$tmp/err")"
has "rows 15 (transitions 11, status 4, notes 0), 2023 state names" "2023"
has "transitions checked against gpusim's table: 9; impossible: 0; not checked (a 2023 state gpusim does not model): 2" "2023"
grep -Eq '^3 .* 1 +0 +1 +0 +1 +0$' "$tmp/out" || fail "2023: the injected RetryOOM: $(cat "$tmp/out")"

# A rotated 2025 file with a debug row: the retry-once wake.
[ "$(status "$gpusim" import-state-log "$data/debug-2025.log" --trace="$tmp/d.json")" = 0 ] ||
	fail "debug-2025: $(cat "$tmp/err")"
has "no header: a rotated file, read from its first row" "2025"
grep -qF '"name":"deadlock: retry_once"' "$tmp/d.json" || fail "2025: no retry-once decision"

# The deadlock check firing with nothing moving (spark-rapids #12883).
[ "$(status "$gpusim" import-state-log "$data/livelock.log")" = 0 ] || fail "livelock: $(cat "$tmp/err")"
has "deadlock checks that found all tasks blocked: 6, after which nothing moved: 5; all_bufn reached: 5" "livelock"

# Impossible transitions: each with its line and column, exit 1; the trace is still written.
[ "$(status "$gpusim" import-state-log "$data/impossible.log" --trace="$tmp/i.json")" = 1 ] ||
	fail "impossible.log must exit 1"
cat >"$tmp/expected" <<EOT
$data/impossible.log:2:34: thread 5: THREAD_RUNNING -> THREAD_BLOCKED cannot happen: no event of the model moves a thread so
$data/impossible.log:3:34: thread 5 is in THREAD_ALLOC here, but line 2 left it in THREAD_BLOCKED: a transition is missing
$data/impossible.log:5:31: thread 6 is in THREAD_BLOCKED here, but line 4 left it in THREAD_BUFN: a transition is missing
EOT
diff "$tmp/expected" "$tmp/err" || fail "impossible.log's report"
has "impossible: 3" "impossible"
[ -s "$tmp/i.json" ] || fail "impossible.log: no trace"

# Rows that cannot be read are reported and left out; the rest is read.
[ "$(status "$gpusim" import-state-log "$data/bad.log")" = 0 ] || fail "bad.log: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 3 ] || fail "bad.log: not 3 problems: $(cat "$tmp/err")"
grep -qF "bad.log:3:49: unknown state 'THREAD_SLEEPING'; the row is left out" "$tmp/err" ||
	fail "bad.log: $(cat "$tmp/err")"
has "rows that could not be read: 3" "bad"

# With the RMM log of the same run: its threads in the tasks the state log
# registers them for (thread 111 ran task 1, then task 3), the pool thread a
# task of its own whose free of task 2's buffer the replay honours; the
# replay completes every task with nothing leaked.
[ "$(status "$gpusim" import-state-log "$data/run-state.log" --rmm-log="$data/run-rmm.csv" \
	--out="$tmp/run.yaml" --trace="$tmp/run.json")" = 0 ] || fail "--rmm-log: $(cat "$tmp/err")"
grep -qF "run-rmm.csv: threads 4, allocations 4, frees 4 (1 by another thread), failed allocations 0, rows left out 0; wrote $tmp/run.yaml" "$tmp/err" ||
	fail "--rmm-log's summary line: $(cat "$tmp/err")"
[ -s "$tmp/run.json" ] || fail "--rmm-log: no trace"
for line in '  # logged thread 111' '  - id: task1' '  # logged thread 222' '  - id: task2' \
	'  # logged thread 333' '  - id: pool1' '          - free: {buf: p1, thread: task2.0}' \
	'  # logged thread 111, stretch 2 of the state log' '  - id: task3' '    start: 6000us' \
	'  gpu: {capacity: 4MiB}'; do
	grep -qxF -- "$line" "$tmp/run.yaml" || fail "the scenario lacks '$line': $(cat "$tmp/run.yaml")"
done
[ "$(status "$gpusim" run --json="$tmp/run-result.json" "$tmp/run.yaml")" = 0 ] ||
	fail "the grouped scenario does not run: $(cat "$tmp/err")"
grep -qF '"tasks_completed": 4,' "$tmp/run-result.json" || fail "not every task completed"
grep -qF '"leaked_bytes": 0,' "$tmp/run-result.json" || fail "the replay leaks"
# import-rmm-log --state-log groups the same way.
[ "$(status "$gpusim" import-rmm-log "$data/run-rmm.csv" --state-log="$data/run-state.log" \
	--out="$tmp/run2.yaml")" = 0 ] || fail "--state-log: $(cat "$tmp/err")"
cmp -s "$tmp/run.yaml" "$tmp/run2.yaml" || fail "import-rmm-log --state-log differs from import-state-log --rmm-log"
[ "$(status "$gpusim" import-rmm-log "$data/run-rmm.csv" --state-log="$data/run-state.log" \
	--groups="$data/run-state.log")" = 2 ] || fail "--groups with --state-log must exit 2"
[ "$(status "$gpusim" import-rmm-log "$data/run-rmm.csv" --state-log="$tmp/missing.log")" = 2 ] ||
	fail "a missing --state-log must exit 2"
[ "$(status "$gpusim" import-state-log "$data/run-state.log" --rmm-log="$data/run-rmm.csv")" = 2 ] ||
	fail "--rmm-log without --out must exit 2"
[ "$(status "$gpusim" import-state-log "$data/run-state.log" --rmm-log="$data/run-rmm.csv" --out=-)" = 2 ] ||
	fail "--out=- must exit 2"
# The state log began before midnight, the RMM log after it: one machine's
# clock a day apart. Thread 7's rows after midnight belong to task 2, which
# it registered for at 23:59:59.99, not to task 1 before it.
{
	echo '23:59:59.900000,TRANSITION,7,7,1,UNKNOWN,THREAD_RUNNING,'
	echo '23:59:59.950000,TRANSITION,7,7,1,THREAD_RUNNING,UNKNOWN,'
	echo '23:59:59.990000,TRANSITION,7,7,2,UNKNOWN,THREAD_RUNNING,'
} >"$tmp/midnight-state.log"
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	echo '7,00:00:00.000100,allocate,0x7f0000000000,4096,0x0'
	echo '7,00:00:00.000200,free,0x7f0000000000,4096,0x0'
} >"$tmp/midnight-rmm.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/midnight-rmm.csv" --state-log="$tmp/midnight-state.log" \
	--out="$tmp/midnight.yaml")" = 0 ] || fail "midnight: $(cat "$tmp/err")"
grep -qxF '  - id: task2' "$tmp/midnight.yaml" || fail "midnight: not task 2: $(cat "$tmp/midnight.yaml")"

# A bad RMM log writes neither the scenario nor the trace.
[ "$(status "$gpusim" import-state-log "$data/run-state.log" --rmm-log="$data/run-state.log" \
	--out="$tmp/y.yaml" --trace="$tmp/y.json")" = 2 ] || fail "a bad --rmm-log must exit 2"
[ ! -e "$tmp/y.yaml" ] && [ ! -e "$tmp/y.json" ] || fail "a bad --rmm-log left outputs"

# Not a state log: exit 2, nothing written, a position in the message.
printf 'Thread,Time,Action,Pointer,Size,Stream\n1,10:00:00.000000,allocate,0x1,8,0x0\n' >"$tmp/rmm.csv"
[ "$(status "$gpusim" import-state-log "$tmp/rmm.csv" --trace="$tmp/x.json")" = 2 ] ||
	fail "an RMM log must exit 2"
grep -qF "rmm.csv:1:1: no row of a Spark-RAPIDS state log" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ ! -e "$tmp/x.json" ] || fail "a trace was written for a log that is not one"
[ "$(status "$gpusim" import-state-log "$tmp/missing.log")" = 2 ] || fail "a missing log must exit 2"
grep -qF "missing.log:1:1: cannot read" "$tmp/err" || fail "message: $(cat "$tmp/err")"
printf '%s\n10:00:00.0\000,x\n' 'time,op,current thread,op thread,op task,from state,to state,notes' >"$tmp/nul.log"
[ "$(status "$gpusim" import-state-log "$tmp/nul.log")" = 2 ] || fail "a NUL byte must exit 2"
grep -qF "nul.log:2:11: a NUL byte" "$tmp/err" || fail "NUL message: $(cat "$tmp/err")"
[ "$(status "$gpusim" import-state-log "$data/current.log" --trace="$tmp")" = 2 ] ||
	fail "a directory as the trace must exit 2"
[ "$(status "$gpusim" import-state-log)" = 2 ] || fail "no log must exit 2"
[ "$(status "$gpusim" import-state-log "$data/current.log" "$data/bad.log")" = 2 ] || fail "two logs must exit 2"
echo "import-state-log reads, checks and traces every format"
