#!/bin/sh
# Runs the conformance scenarios on real threads (gpusim run --backend=host)
# and requires their expectations; GS_THREADS_BACKEND and GS_THREADS_GPUSIM name
# another backend and the gpusim to run it (check-cuda-on-cpu.sh does).
#
# Expectations are checked on the virtual clock (--clock=virtual): the
# threads, locks, memory and copies are real, but scenario time moves only
# when every thread waits, so the order of instants, and so what a
# scenario's gaps decide, does not hang on the machine's speed. A scenario
# whose expectations cannot mean the same on real threads says so in its
# first line, with the reason:
#     # real-threads: skip: <why>
# and is run without them (a mark without a reason is an error).
#
# Every scenario also runs on the real clock, where what happens depends on
# the machine's speed: there it must end as a run does (status 0 or 1, never
# a crash or an error) with no copy lost, whatever its expectations say; a
# marked one may instead be refused as not yet run on real threads (exit 3).
set -u
# A valid scenario never reaches a refused precondition: a GLib CRITICAL aborts the run.
G_DEBUG=fatal-criticals
export G_DEBUG
backend="${GS_THREADS_BACKEND:-host}"
gpusim="${GS_THREADS_GPUSIM:-$top_builddir/gpusim}"
# A sanitized build makes every memory access several times slower, and real
# copies and pattern writes with it: its real-clock runs are slowed down to
# match (scenario time is real time divided by the scale).
scale=1
case "${GPUSIM_SANITIZERS:-no}" in no) ;; *) scale=10 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
ran=0
skipped=0

# The real clock: the run ends as a run does, and its copies arrive whole. A
# scenario marked real-threads: skip may be one real threads cannot run yet
# (exit 3, said in one sentence).
run_real_clock() { # scenario name
	"$gpusim" run --quiet --backend=$backend --time-scale=$scale --max-time=1s \
		--json="$tmp/$2.real.json" "$1" >"$tmp/$2.real.out" 2>&1
	code=$?
	if [ $code -eq 3 ] && head -1 "$1" | grep -q '^# real-threads: skip' &&
		grep -q '^gpusim: .*real threads do not yet' "$tmp/$2.real.out"; then
		return
	fi
	if [ $code -gt 1 ]; then
		echo "FAIL: $2 on the real clock ended with status $code:"
		tail -30 "$tmp/$2.real.out"
		status=1
	elif ! grep -q '"copies_lost": 0' "$tmp/$2.real.json"; then
		echo "FAIL: $2 on the real clock lost copies:"
		grep '"copies_' "$tmp/$2.real.json"
		status=1
	fi
}

for scenario in "$top_srcdir"/scenarios/*.yaml "$top_srcdir"/scenarios/conformance/*.yaml; do
	name=$(basename "$scenario" .yaml)
	run_real_clock "$scenario" "$name"
	if head -1 "$scenario" | grep -q '^# real-threads: skip'; then
		if [ -z "$(sed -n '1s/^# real-threads: skip: *//p' "$scenario")" ]; then
			echo "FAIL: $name: a real-threads skip mark needs a reason"
			status=1
		fi
		skipped=$((skipped + 1))
		continue
	fi
	ran=$((ran + 1))
	if ! "$gpusim" run --quiet --backend=$backend --clock=virtual "$scenario" \
		>"$tmp/$name.out" 2>&1; then
		echo "FAIL: $name under real threads on the virtual clock:"
		cat "$tmp/$name.out"
		status=1
	fi
done
# A real backend is the same command: bad options still exit 2.
"$gpusim" run --backend=$backend --time-scale=0 "$top_srcdir/scenarios/quickstart.yaml" \
	>/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --time-scale=0 must exit 2"; status=1; }
"$gpusim" run --backend=$backend --locking=sometimes "$top_srcdir/scenarios/quickstart.yaml" \
	>/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --locking=sometimes must exit 2"; status=1; }
"$gpusim" run --backend=$backend --clock=wall "$top_srcdir/scenarios/quickstart.yaml" \
	>/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --clock=wall must exit 2"; status=1; }
# The JSON names the backend.
"$gpusim" run --quiet --backend=$backend --locking=global --json=- \
	"$top_srcdir/scenarios/wide-gaps-rollback.yaml" >"$tmp/r.json" 2>/dev/null ||
	{ echo "FAIL: wide-gaps-rollback with --locking=global"; status=1; }
grep -q "\"backend\": \"$backend\"" "$tmp/r.json" ||
	{ echo "FAIL: the result does not name the $backend backend"; status=1; }
# A run killed while a buffer is on disk removes its disk tier: x lies there
# from 100 to 300 ms of scenario time, 2 to 6 s of real time at scale 20.
mkdir "$tmp/disk"
"$gpusim" run --quiet --backend=$backend --time-scale=20 --set memory.disk.path="$tmp/disk" \
	"$top_srcdir/scenarios/wide-gaps-host-full.yaml" >"$tmp/killed.out" 2>&1 &
pid=$!
waited=0
while [ $waited -lt 200 ] && [ -z "$(find "$tmp/disk" -type f | head -1)" ]; do
	sleep 0.1
	waited=$((waited + 1))
done
[ -n "$(find "$tmp/disk" -type f | head -1)" ] ||
	{ echo "FAIL: wide-gaps-host-full put nothing on disk in 20 s"; status=1; }
kill -TERM $pid
wait $pid
code=$?
[ $code -eq 143 ] || { echo "FAIL: a run killed by SIGTERM ended with status $code"; status=1; }
[ -z "$(ls -A "$tmp/disk")" ] ||
	{ echo "FAIL: a killed run left its disk tier behind:"; find "$tmp/disk"; status=1; }
[ $status -eq 0 ] && echo "$ran scenarios met their expectations under real threads on the virtual clock; $skipped marked to skip; all ran on the real clock"
exit $status
