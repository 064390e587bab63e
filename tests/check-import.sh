#!/bin/sh
# gpusim import-rmm-log: a hand-made log with known content becomes a
# scenario that run accepts and replays as logged; rows it cannot use are
# reported with line and column; a file that is not a log is exit 2.
set -u
gpusim="$top_builddir/gpusim"
data="$top_srcdir/tests/data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

# rmm-small.csv: thread 140001 allocates 1 MiB at 0, 1000 B at 500 us, frees
# them at 2 ms and 3 ms; thread 140002 allocates 2 MiB at 100 us, fails to get
# 8 MiB at 1 ms, frees at 2.1 ms.
[ "$(status "$gpusim" import-rmm-log "$data/rmm-small.csv" --out="$tmp/small.yaml")" = 0 ] ||
	fail "import rmm-small: $(cat "$tmp/err")"
grep -q 'threads 2, allocations 3, frees 3 (0 by another thread), failed allocations 1, rows left out 0' "$tmp/err" ||
	fail "summary line: $(cat "$tmp/err")"
cat >"$tmp/expected" <<'YAML'
memory:
  gpu: {capacity: 4MiB}
tasks:
  # logged thread 140001
  - id: t0
    start: 0us
    threads:
      - ops:
          - alloc: {buf: p1, size: 1048576}
          - compute: 500us
          - alloc: {buf: p2, size: 1000}
          - compute: 1500us
          - free: p1
          - compute: 1000us
          - free: p2
  # logged thread 140002
  - id: t1
    start: 100us
    threads:
      - ops:
          - alloc: {buf: p1, size: 2097152}
          - compute: 900us
          # line 5: allocate failure, 8388608 bytes
          - compute: 1100us
          - free: p1
YAML
sed -n '/^memory:/,$p' "$tmp/small.yaml" >"$tmp/got"
diff "$tmp/expected" "$tmp/got" >"$tmp/diff" || fail "the scenario differs: $(cat "$tmp/diff")"
head -2 "$tmp/small.yaml" | tr '\n' ' ' | grep -q '^gpusim: 1 name: rmm-small ' || fail "scenario head"
# run accepts it and replays the log's timing: t0's last free at 3 ms, plus
# its two allocations' latency (1 us each); the peak is the log's, aligned.
"$gpusim" run -q --json="$tmp/r.json" "$tmp/small.yaml" || fail "run rejects the imported scenario"
grep -q '"makespan_ns": 3002000,' "$tmp/r.json" || fail "makespan: $(grep makespan "$tmp/r.json")"
grep -q '"gpu": {"capacity": 4194304, "peak_used": 3146752,' "$tmp/r.json" ||
	fail "gpu peak: $(grep '"gpu"' "$tmp/r.json")"
grep -q '"outcome": "completed"' "$tmp/r.json" || fail "the replay did not complete"
# Standard output when no --out is given.
"$gpusim" import-rmm-log "$data/rmm-small.csv" 2>/dev/null | cmp -s - "$tmp/small.yaml" ||
	fail "stdout and --out differ"

# rmm-bad.csv: two usable allocations, and a free on another thread, among
# rows it cannot use.
[ "$(status "$gpusim" import-rmm-log "$data/rmm-bad.csv" -o "$tmp/bad.yaml")" = 0 ] ||
	fail "import rmm-bad: $(cat "$tmp/err")"
for at in 3:1: 4:19: 5:3: 7:24: 8:28: 9:35:; do
	grep -q "rmm-bad.csv:$at .*; the row is left out$" "$tmp/err" || fail "row $at not reported: $(cat "$tmp/err")"
done
[ "$(grep -c 'left out$' "$tmp/err")" = 6 ] || fail "exactly 6 rows are left out"
grep -q 'frees 1 (1 by another thread)' "$tmp/err" || fail "bad summary: $(cat "$tmp/err")"
grep -q 'free: {buf: p1, thread: t0.0}' "$tmp/bad.yaml" ||
	fail "thread 8's free of thread 7's buffer: $(cat "$tmp/bad.yaml")"
"$gpusim" validate "$tmp/bad.yaml" >/dev/null || fail "the partial scenario is invalid"
grep -q 'compute: 70us' "$tmp/bad.yaml" || fail "gaps across left-out rows are one compute"

# A thread id is any bytes: a carriage return, control characters, invalid
# UTF-8 or a Unicode line separator must neither end its comment nor break
# the file; the comment says what it was, C-escaped. So must the file's name.
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	printf '7\rtasks: [],00:00:00.000500,allocate,0x10,8,0\n'
	printf '\001\377\342\200\250#,00:00:00.000600,allocate,0x20,8,0\n'
} >"$tmp/odd
name.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/odd
name.csv" -o "$tmp/odd.yaml")" = 0 ] || fail "import odd ids: $(cat "$tmp/err")"
"$gpusim" validate "$tmp/odd.yaml" >/dev/null 2>"$tmp/err" || fail "odd ids: $(cat "$tmp/err")"
grep -qxF '  # logged thread 7\rtasks: []' "$tmp/odd.yaml" || fail "escaped carriage return"
grep -qxF '  # logged thread \001\377\342\200\250#' "$tmp/odd.yaml" || fail "escaped bytes"
grep -qF 'RMM log odd\nname.csv' "$tmp/odd.yaml" || fail "escaped file name"
# Nor do the fields a problem quotes reach the terminal raw: an escape sequence
# in a field stays C-escaped text.
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	printf '1,00:00:00.000001,allocate,0x10,8,0\n'
	printf '2,00:00:00.000002,\033[31mfree,0x10,8,0\n'
	printf '3,00:00:0\033]0;x\a.1,allocate,0x20,8,0\n'
} >"$tmp/control.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/control.csv" -o "$tmp/control.yaml")" = 0 ] ||
	fail "import control: $(cat "$tmp/err")"
grep -qF "unknown action '\033[31mfree'" "$tmp/err" &&
	grep -qF "time '00:00:0\033]0;x\007.1' is not" "$tmp/err" || fail "escaped fields: $(cat -A "$tmp/err")"
if LC_ALL=C grep -q "$(printf '[\001-\010\016-\037\177]')" "$tmp/err"; then
	fail "a control character reached the messages: $(cat -A "$tmp/err")"
fi
# Starts count from the earliest thread's, which need not log the first row.
printf 'Thread,Time,Action,Pointer,Size,Stream\n1,00:00:00.000002,allocate,0x10,8,0\n' >"$tmp/early.csv"
printf '2,00:00:00.000001,allocate,0x20,8,0\n' >>"$tmp/early.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/early.csv" -o "$tmp/early.yaml")" = 0 ] ||
	fail "import early: $(cat "$tmp/err")"
"$gpusim" validate "$tmp/early.yaml" >/dev/null 2>"$tmp/err" || fail "early start: $(cat "$tmp/err")"
[ "$(grep -c 'start: ' "$tmp/early.yaml")" = 2 ] && grep -q 'start: 1us' "$tmp/early.yaml" &&
	grep -q 'start: 0us' "$tmp/early.yaml" || fail "starts: $(grep start: "$tmp/early.yaml")"
# The capacity written must stay in what a scenario may hold: past 1024 TiB
# (2^50 bytes) live a row is left out.
printf 'Thread,Time,Action,Pointer,Size,Stream\n1,00:00:00.000001,allocate,0x10,844424930131968,0\n' \
	>"$tmp/huge.csv"
printf '1,00:00:00.000002,allocate,0x20,844424930131968,0\n' >>"$tmp/huge.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/huge.csv" -o "$tmp/huge.yaml")" = 0 ] ||
	fail "import huge: $(cat "$tmp/err")"
grep -q 'huge.csv:3:33: allocating 844424930131968 bytes would make more than' "$tmp/err" ||
	fail "huge message: $(cat "$tmp/err")"
"$gpusim" validate "$tmp/huge.yaml" >/dev/null 2>"$tmp/err" || fail "huge: $(cat "$tmp/err")"
# A Spark-like log: four task threads each allocate A and B (1 MiB each) 100
# us apart and free A 100 us later; a cleaner thread frees every B at 1 ms.
# The replay frees B on the cleaner, as logged (B outlives its thread): nothing
# leaks, the GPU is the true peak (8 MiB, all four holding A and B from 130 to
# 200 us), and the replay at that capacity completes.
awk 'BEGIN { print "Thread,Time,Action,Pointer,Size,Stream";
	for (k = 0; k < 4; k++) {
		printf "%d,00:00:00.%06d,allocate,0x%x,1048576,0x0\n", 101 + k, 10 * k, 4096 * (2 * k + 1);
		printf "%d,00:00:00.%06d,allocate,0x%x,1048576,0x0\n", 101 + k, 10 * k + 100, 4096 * (2 * k + 2);
		printf "%d,00:00:00.%06d,free,0x%x,1048576,0x0\n", 101 + k, 10 * k + 200, 4096 * (2 * k + 1) }
	for (k = 0; k < 4; k++)
		printf "999,00:00:00.%06d,free,0x%x,1048576,0x0\n", 1000 + 10 * k, 4096 * (2 * k + 2) }' \
	>"$tmp/cleaner.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/cleaner.csv" -o "$tmp/cleaner.yaml")" = 0 ] ||
	fail "import cleaner: $(cat "$tmp/err")"
grep -q 'threads 5, allocations 8, frees 8 (4 by another thread), failed allocations 0, rows left out 0' \
	"$tmp/err" || fail "cleaner summary: $(cat "$tmp/err")"
grep -q 'gpu: {capacity: 8MiB}' "$tmp/cleaner.yaml" || fail "cleaner capacity: $(grep capacity "$tmp/cleaner.yaml")"
"$gpusim" run -q --json="$tmp/cleaner.json" "$tmp/cleaner.yaml" || fail "cleaner replay"
grep -q '"outcome": "completed"' "$tmp/cleaner.json" &&
	grep -q '^    "leaked_bytes": 0,' "$tmp/cleaner.json" &&
	grep -q '"gpu": {"capacity": 8388608, "peak_used": 8388608,' "$tmp/cleaner.json" ||
	fail "cleaner replay: $(grep -e outcome -e leaked_bytes -e '"gpu"' "$tmp/cleaner.json")"

# --groups: the four task threads as two tasks of two threads (the second of
# each sleeps until it first logged), the cleaner a task of its own; the
# replay is the same, nothing leaks.
printf '# task threads\n101,stage1\n102, stage1\n103,task-7\n104,task-7\n\n' >"$tmp/groups.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/cleaner.csv" --groups="$tmp/groups.csv" \
	-o "$tmp/grouped.yaml")" = 0 ] || fail "import grouped: $(cat "$tmp/err")"
grep -q 'threads 5, allocations 8, frees 8 (4 by another thread)' "$tmp/err" ||
	fail "grouped summary: $(cat "$tmp/err")"
[ "$(grep -c -- '- id: ' "$tmp/grouped.yaml")" = 3 ] && grep -q -- '- id: stage1' "$tmp/grouped.yaml" &&
	grep -q -- '- id: task-7' "$tmp/grouped.yaml" && grep -q -- '- id: t0' "$tmp/grouped.yaml" &&
	grep -q 'free: {buf: p2, thread: task-7.1}' "$tmp/grouped.yaml" &&
	grep -q 'sleep: 10us' "$tmp/grouped.yaml" || fail "grouped scenario: $(cat "$tmp/grouped.yaml")"
"$gpusim" run -q --json="$tmp/grouped.json" "$tmp/grouped.yaml" || fail "grouped replay"
grep -q '"outcome": "completed"' "$tmp/grouped.json" &&
	grep -q '^    "leaked_bytes": 0,' "$tmp/grouped.json" &&
	grep -q '"gpu": {"capacity": 8388608, "peak_used": 8388608,' "$tmp/grouped.json" &&
	grep -q '"makespan_ns": 1030000,' "$tmp/grouped.json" ||
	fail "grouped replay: $(grep -e outcome -e makespan -e leaked_bytes -e '"gpu"' "$tmp/grouped.json")"
# A groups file it cannot use: exit 2, its line and column, nothing written.
for bad in '101' '101,a b' ',t' '101,-' '101,x\n101,y'; do
	printf "$bad\n" >"$tmp/badgroups.csv"
	[ "$(status "$gpusim" import-rmm-log "$tmp/cleaner.csv" --groups="$tmp/badgroups.csv" \
		-o "$tmp/x7.yaml")" = 2 ] && grep -q '^.*badgroups.csv:[12]:[0-9]*: ' "$tmp/err" &&
		[ ! -e "$tmp/x7.yaml" ] || fail "bad groups '$bad': $(cat "$tmp/err")"
done
grep -q 'badgroups.csv:2:1: thread 101 is grouped twice' "$tmp/err" || fail "twice: $(cat "$tmp/err")"

# RMM's older formats (rapidsai/rmm, include/rmm/mr/device/
# logging_resource_adaptor.hpp): tags v0.13.0 and v0.14.0 write no thread
# column and the time as %H:%M:%S:%f, v0.15.0 to v0.19.0 the thread column
# with that time, v21.06.00 on %H:%M:%S.%f; each imports as the same replay.
{
	echo 'Time,Action,Pointer,Size,Stream'
	echo '10:00:00:000100,allocate,0x7f0010,1048576,0'
	echo '10:00:00:000600,free,0x7f0010,1048576,0'
} >"$tmp/rmm-0.13.csv"
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	echo '140001,10:00:00:000100,allocate,0x7f0010,1048576,0x0'
	echo '140001,10:00:00:000600,free,0x7f0010,1048576,0x0'
} >"$tmp/rmm-0.19.csv"
for v in 0.13 0.19; do
	[ "$(status "$gpusim" import-rmm-log "$tmp/rmm-$v.csv" -o "$tmp/rmm-$v.yaml")" = 0 ] ||
		fail "import RMM $v: $(cat "$tmp/err")"
	grep -q 'threads 1, allocations 1, frees 1 (0 by another thread), failed allocations 0, rows left out 0' \
		"$tmp/err" || fail "RMM $v summary: $(cat "$tmp/err")"
	grep -q 'compute: 500us' "$tmp/rmm-$v.yaml" || fail "RMM $v time: $(cat "$tmp/rmm-$v.yaml")"
	"$gpusim" validate "$tmp/rmm-$v.yaml" >/dev/null 2>"$tmp/err" || fail "RMM $v: $(cat "$tmp/err")"
done
grep -qxF '  # logged thread (no thread column)' "$tmp/rmm-0.13.yaml" || fail "0.13 thread comment"
# Across midnight, rows a few microseconds out of order keep the log's real
# duration: thread 1 allocates at 23:59:59.999990 and frees at .999998, logged
# after thread 2's allocation at 00:00:00.000005; thread 2 frees at .000010.
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	echo '1,23:59:59.999990,allocate,0x10,256,0'
	echo '2,00:00:00.000005,allocate,0x20,256,0'
	echo '1,23:59:59.999998,free,0x10,256,0'
	echo '2,00:00:00.000010,free,0x20,256,0'
} >"$tmp/midnight.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/midnight.csv" -o "$tmp/midnight.yaml")" = 0 ] ||
	fail "import midnight: $(cat "$tmp/err")"
grep -q 'compute: 8us' "$tmp/midnight.yaml" && grep -q 'start: 15us' "$tmp/midnight.yaml" &&
	grep -q 'compute: 5us' "$tmp/midnight.yaml" || fail "midnight: $(cat "$tmp/midnight.yaml")"
"$gpusim" run -q --json="$tmp/midnight.json" "$tmp/midnight.yaml" || fail "midnight replay"
grep -q '"makespan_ns": 21000,' "$tmp/midnight.json" ||
	fail "midnight makespan: $(grep makespan "$tmp/midnight.json")"
# A 0-byte allocation and its free are reported once each and left out; a
# thread whose rows are all left out is no task (it would stretch the run to
# 9 s): the replay ends with thread 1's allocation, 2 us after its start and
# 1 us of allocation latency.
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	echo '1,00:00:00.000001,allocate,0x10,0,0'
	echo '1,00:00:00.000002,free,0x10,0,0'
	echo '1,00:00:00.000003,allocate,0x20,100,0'
	echo '2,00:00:09.000000,allocate,(nil),5,0'
} >"$tmp/zero.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/zero.csv" -o "$tmp/zero.yaml")" = 0 ] ||
	fail "import zero: $(cat "$tmp/err")"
grep -q 'zero.csv:2:33: an allocation of 0 bytes holds no memory; the row is left out' "$tmp/err" &&
	grep -q 'zero.csv:3:24: free of 0x10, the allocation of 0 bytes on line 2; the row is left out' \
		"$tmp/err" && [ "$(grep -c 'left out$' "$tmp/err")" = 3 ] || fail "zero rows: $(cat "$tmp/err")"
grep -q 'threads 1, allocations 1, frees 0 (0 by another thread)' "$tmp/err" ||
	fail "zero summary: $(cat "$tmp/err")"
[ "$(grep -c -- '- id: ' "$tmp/zero.yaml")" = 1 ] || fail "a thread without ops became a task"
"$gpusim" run -q --json="$tmp/zero.json" "$tmp/zero.yaml" || fail "zero replay"
grep -q '"makespan_ns": 3000,' "$tmp/zero.json" ||
	fail "zero makespan: $(grep makespan "$tmp/zero.json")"

# A NUL byte would hide the rows after it.
printf 'Thread,Time,Action,Pointer,Size,Stream\n1,00:00:00.0\000,allocate,0x10,8,0\n' >"$tmp/nul.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/nul.csv" -o "$tmp/x5.yaml")" = 2 ] || fail "NUL byte"
grep -q 'nul.csv:2:13: a NUL byte' "$tmp/err" || fail "NUL message: $(cat "$tmp/err")"

# A long real run, 200000 rows on one thread, imports into a scenario that
# loads (its nodes are many more than aliases may copy).
awk 'BEGIN { print "Thread,Time,Action,Pointer,Size,Stream";
	for (i = 0; i < 100000; i++) {
		printf "1,00:00:00.%06d,allocate,0x%x,4096,0\n", 2 * i, 4096 * (i + 1);
		printf "1,00:00:00.%06d,free,0x%x,4096,0\n", 2 * i + 1, 4096 * (i + 1) } }' >"$tmp/long.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/long.csv" -o "$tmp/long.yaml")" = 0 ] ||
	fail "import long: $(cat "$tmp/err")"
grep -q 'allocations 100000, frees 100000 (0 by another thread)' "$tmp/err" ||
	fail "long summary: $(cat "$tmp/err")"
"$gpusim" validate "$tmp/long.yaml" >/dev/null 2>"$tmp/err" || fail "long log: $(cat "$tmp/err")"

# Not a log, no log, nothing usable, nowhere to write: exit 2, nothing written.
# Streams: an allocation on a stream other than the default names it; the
# default stream, 0x0 or (nil) as RMM 24.12 prints it, is not named.
{
	echo 'Thread,Time,Action,Pointer,Size,Stream'
	echo '7,10:00:00.000000,allocate,0x7f0000000000,4096,0x55aa00'
	echo '7,10:00:00.000010,allocate,0x7f0000010000,4096,(nil)'
	echo '7,10:00:00.000020,allocate,0x7f0000020000,4096,0x0'
	echo '7,10:00:00.000030,free,0x7f0000000000,4096,0x55aa00'
	echo '7,10:00:00.000040,free,0x7f0000010000,4096,(nil)'
	echo '7,10:00:00.000050,free,0x7f0000020000,4096,0x0'
} >"$tmp/streams.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/streams.csv" -o "$tmp/streams.yaml")" = 0 ] ||
	fail "streams: $(cat "$tmp/err")"
grep -qxF '          - alloc: {buf: p1, size: 4096}  # stream 0x55aa00' "$tmp/streams.yaml" ||
	fail "the stream is not kept: $(cat "$tmp/streams.yaml")"
[ "$(grep -c '# stream' "$tmp/streams.yaml")" = 1 ] || fail "the default stream is named"

printf 'a,b,c\n1,2,3\n' >"$tmp/notlog.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/notlog.csv" -o "$tmp/x1.yaml")" = 2 ] || fail "not a log"
grep -q 'notlog.csv:1:1: not an RMM log' "$tmp/err" || fail "not-a-log message: $(cat "$tmp/err")"
[ "$(status "$gpusim" import-rmm-log "$tmp/missing.csv" -o "$tmp/x2.yaml")" = 2 ] || fail "missing log"
printf 'Thread,Time,Action,Pointer,Size,Stream\r\n1,00:00:00.000001,free,0x10,8,0\r\n' >"$tmp/empty.csv"
[ "$(status "$gpusim" import-rmm-log "$tmp/empty.csv" -o "$tmp/x3.yaml")" = 2 ] || fail "no allocation"
grep -q 'empty.csv:2:24: free of 0x10' "$tmp/err" || fail "CRLF row not reported: $(cat "$tmp/err")"
[ "$(status "$gpusim" import-rmm-log "$data/rmm-small.csv" -o "$tmp/no/dir/x4.yaml")" = 2 ] ||
	fail "unwritable output"
[ "$(status "$gpusim" import-rmm-log)" = 2 ] || fail "no log given"
[ "$(status "$gpusim" import-rmm-log /dev/zero -o "$tmp/x6.yaml")" = 2 ] || fail "a device"
grep -q '^/dev/zero:1:1: cannot read: it is a character device' "$tmp/err" ||
	fail "device message: $(cat "$tmp/err")"
for f in x1.yaml x2.yaml x3.yaml x5.yaml x6.yaml no; do [ ! -e "$tmp/$f" ] || fail "a failed import wrote $f"; done
echo "gpusim import-rmm-log: scenario, replay, reported rows and errors behave"
