#!/bin/sh
# gpusim explore: a scenario that deadlocks under block only where two
# allocations at one instant land in the other order. Its default order
# completes; explore finds the deadlock, shrinks it to one forced choice and
# writes a replay that deadlocks under gpusim run, with the same event log;
# under retry nothing is found. The same budget gives the same JSON whatever
# --jobs is; a replayed schedule that does not fit the run, and bad usage,
# exit 2 with nothing written. Besides, scenarios that break a property only
# where a free wakes the other of two equal waiters, where a deadlock is
# busted while a thread could still make progress (--needless-busts), or
# where an allocation attempt is a little slower (--jitter). And the orders
# of events that commute, run once by default and all with --every-order.
set -u
gpusim="$top_builddir/gpusim"
scenario="$top_srcdir/tests/data/explore-order-deadlock.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
outcome() { sed -n 's/^  "outcome": "\([a-z]*\)",$/\1/p' "$1"; }

# The simulator's own order completes.
[ "$(status "$gpusim" run -q "$scenario")" = 0 ] || fail "the default order does not complete"

# Explore finds the deadlock, exhausting the schedules.
[ "$(status "$gpusim" explore -q --out="$tmp/found" --json="$tmp/found.json" "$scenario")" = 1 ] ||
	fail "explore did not exit 1: $(cat "$tmp/err")"
grep -q '"exhausted": true' "$tmp/found.json" || fail "the search was not exhaustive"
grep -q '"kind": "deadlock"' "$tmp/found.json" || fail "no deadlock found: $(cat "$tmp/found.json")"
grep -q '"forced": 1, "schedule": \[[0, ]*1\]' "$tmp/found.json" ||
	fail "the deadlock's schedule is not shrunk to one choice: $(cat "$tmp/found.json")"
[ "$(grep -c '"kind"' "$tmp/found.json")" = 1 ] || fail "more than the deadlock found"
for f in deadlock.yaml deadlock.events deadlock.trace.json; do
	[ -s "$tmp/found/$f" ] || fail "no $f written"
done

# Its replay deadlocks under run, with the event log explore wrote.
"$gpusim" run -q --json="$tmp/replay.json" --events="$tmp/replay.events" \
	"$tmp/found/deadlock.yaml" 2>/dev/null
[ "$(outcome "$tmp/replay.json")" = deadlock ] || fail "the replay does not deadlock"
cmp -s "$tmp/replay.events" "$tmp/found/deadlock.events" ||
	fail "the replay's event log differs from the one explore wrote"

# Under retry the watchdog busts every deadlock: nothing is found, no folder made.
sed 's/oom: block/oom: retry/' "$scenario" >"$tmp/retry.yaml"
[ "$(status "$gpusim" explore -q --out="$tmp/none" --json="$tmp/none.json" "$tmp/retry.yaml")" = 0 ] ||
	fail "explore found something under retry: $(cat "$tmp/none.json")"
grep -q '"violations": \[\]' "$tmp/none.json" || fail "violations under retry"
[ ! -e "$tmp/none" ] || fail "a folder of replays was made with nothing to replay"

# Wake order: where H's free wakes x before y (two threads of one task, ranked
# alike), the run deadlocks under block; the engine's own order completes.
wake="$top_srcdir/tests/data/explore-wake-deadlock.yaml"
[ "$(status "$gpusim" run -q "$wake")" = 0 ] || fail "the wake scenario's default order does not complete"
[ "$(status "$gpusim" explore -q --budget=4000 --out="$tmp/wake" --json="$tmp/wake.json" "$wake")" = 1 ] ||
	fail "explore did not find the wake-order deadlock: $(cat "$tmp/err")"
grep -q '"exhausted": true' "$tmp/wake.json" || fail "the wake search was not exhaustive"
grep -q '"kind": "deadlock", .*"forced": 1,' "$tmp/wake.json" ||
	fail "the wake-order deadlock is not shrunk to one choice: $(cat "$tmp/wake.json")"
"$gpusim" run -q --json="$tmp/wake-replay.json" "$tmp/wake/deadlock.yaml" 2>/dev/null
[ "$(outcome "$tmp/wake-replay.json")" = deadlock ] || fail "the wake-order replay does not deadlock"
sed 's/oom: block/oom: retry/' "$wake" >"$tmp/wake-retry.yaml"
[ "$(status "$gpusim" explore -q --budget=4000 --json="$tmp/wake-none.json" "$tmp/wake-retry.yaml")" = 0 ] ||
	fail "explore found something in the wake scenario under retry: $(cat "$tmp/wake-none.json")"
grep -q '"exhausted": true' "$tmp/wake-none.json" || fail "the wake search under retry was not exhaustive"

# Needless busting: where H's failed attempt comes before y's free at the same
# instant, the engine busts a deadlock while y could still make progress.
# Off unless asked for; asked for, found, shrunk and replayed with the bust.
needless="$top_srcdir/tests/data/explore-needless-bust.yaml"
"$gpusim" run -q --events="$tmp/needless-default.events" "$needless" ||
	fail "the needless-bust scenario's default order does not complete"
! grep -q '"ev":"deadlock"' "$tmp/needless-default.events" ||
	fail "the needless-bust scenario's default order busts a deadlock"
[ "$(status "$gpusim" explore -q --json="$tmp/needless-off.json" "$needless")" = 0 ] ||
	fail "explore checked needless busts unasked: $(cat "$tmp/needless-off.json")"
[ "$(status "$gpusim" explore -q --needless-busts --out="$tmp/needless" \
	--json="$tmp/needless.json" "$needless")" = 1 ] ||
	fail "explore --needless-busts did not exit 1: $(cat "$tmp/err")"
grep -q '"kind": "needless-bust", .*"forced": 1, .*while y could still make progress' \
	"$tmp/needless.json" || fail "the needless bust is not found as it is: $(cat "$tmp/needless.json")"
[ "$(grep -c '"kind"' "$tmp/needless.json")" = 1 ] || fail "more than the needless bust found"
"$gpusim" run -q --events="$tmp/needless-replay.events" "$tmp/needless/needless-bust.yaml" ||
	fail "the needless-bust replay does not complete"
grep -q '{"t_ns":100000,"ev":"deadlock","victim":"H.0"' "$tmp/needless-replay.events" ||
	fail "the needless-bust replay does not bust H.0 at 100 us"

# Latency jitter: only where A's second allocation attempt takes half as long
# again does B's land first and the run deadlock. Without jitter no order
# deadlocks; --jitter=0.5 (or the scenario's schedule_jitter) finds it, and
# the replay pins the jitter with the schedule.
jitter="$top_srcdir/tests/data/explore-jitter-deadlock.yaml"
[ "$(status "$gpusim" explore -q --json="$tmp/jitter-none.json" "$jitter")" = 0 ] ||
	fail "explore found something without jitter: $(cat "$tmp/jitter-none.json")"
grep -q '"exhausted": true' "$tmp/jitter-none.json" || fail "the search without jitter was not exhaustive"
[ "$(status "$gpusim" explore -q --budget=8000 --jitter=0.5 --out="$tmp/jitter" \
	--json="$tmp/jitter.json" "$jitter")" = 1 ] || fail "explore --jitter=0.5 found nothing: $(cat "$tmp/err")"
grep -q '"exhausted": true' "$tmp/jitter.json" || fail "the search with jitter was not exhaustive"
grep -q '"kind": "deadlock", .*"forced": 1,' "$tmp/jitter.json" ||
	fail "the jitter deadlock is not shrunk to one choice: $(cat "$tmp/jitter.json")"
grep -qx 'schedule_jitter: 0.5' "$tmp/jitter/deadlock.yaml" || fail "the replay does not pin the jitter"
"$gpusim" run -q --json="$tmp/jitter-replay.json" "$tmp/jitter/deadlock.yaml" 2>/dev/null
[ "$(outcome "$tmp/jitter-replay.json")" = deadlock ] || fail "the jitter replay does not deadlock"
{ cat "$jitter"; echo "schedule_jitter: 0.5"; } >"$tmp/jittered.yaml"
[ "$(status "$gpusim" explore -q --budget=8000 --out="$tmp/jittered" "$tmp/jittered.yaml")" = 1 ] ||
	fail "explore did not take the scenario's schedule_jitter"
[ "$(status "$gpusim" explore -q --budget=8000 --jitter=0 "$tmp/jittered.yaml")" = 0 ] ||
	fail "--jitter=0 did not replace the scenario's schedule_jitter"

# Orders that commute: three threads whose computes end together. The
# default search runs one order of each set that only reorders their steps,
# --every-order runs them all; both go to the end and find nothing.
independent="$top_srcdir/tests/data/explore-independent.yaml"
[ "$(status "$gpusim" explore -q --json="$tmp/reduced.json" "$independent")" = 0 ] ||
	fail "explore found something in independent threads: $(cat "$tmp/reduced.json")"
[ "$(status "$gpusim" explore -q --every-order --budget=16000 --json="$tmp/every.json" \
	"$independent")" = 0 ] || fail "explore --every-order found something: $(cat "$tmp/every.json")"
for f in reduced every; do
	grep -q '"exhausted": true' "$tmp/$f.json" || fail "the $f search was not exhaustive"
done
grep -q '"schedules": 36,' "$tmp/reduced.json" && grep -q '"orders_reduced": true' "$tmp/reduced.json" ||
	fail "the reduced search did not run 36 schedules: $(cat "$tmp/reduced.json")"
grep -q '"schedules": 7776,' "$tmp/every.json" && grep -q '"orders_reduced": false' "$tmp/every.json" ||
	fail "--every-order did not run 7776 schedules: $(cat "$tmp/every.json")"

# Deterministic: a budget that leaves random schedules gives the same JSON on 1 or 3 workers.
for jobs in 1 3; do
	"$gpusim" explore -q --budget=40 --jobs=$jobs --out="$tmp/j$jobs" \
		--json="$tmp/j$jobs.json" "$tmp/wake-retry.yaml" >/dev/null 2>&1
done
grep -q '"random": 20' "$tmp/j1.json" || fail "no random schedules in the budget: $(cat "$tmp/j1.json")"
sed "s|$tmp/j[13]|DIR|g" "$tmp/j1.json" >"$tmp/j1.norm"
sed "s|$tmp/j[13]|DIR|g" "$tmp/j3.json" >"$tmp/j3.norm"
cmp -s "$tmp/j1.norm" "$tmp/j3.norm" || fail "--jobs changed the result"

# A schedule that does not fit the run: exit 2, no output written.
[ "$(status "$gpusim" run -q --json="$tmp/bad.json" --set 'schedule=[0, 0, 0, 9]' "$scenario")" = 2 ] ||
	fail "a choice out of range did not exit 2"
grep -q "schedule: choice 4 is 9" "$tmp/err" || fail "no message for a choice out of range"
[ ! -e "$tmp/bad.json" ] || fail "a refused replay wrote its JSON"
[ "$(status "$gpusim" run -q --set 'schedule=[0, 0, 0, 0, 0, 0, 0, 0, 1]' "$scenario")" = 2 ] ||
	fail "choices left over did not exit 2"
[ "$(status "$gpusim" run -q --set 'schedule=[1, x]' "$scenario")" = 2 ] ||
	fail "a choice that is no number did not exit 2"
"$gpusim" validate --list-keys | grep -qx schedule || fail "--list-keys does not list schedule"

# Bad usage.
for args in "--jitter=1.5" "--jitter=-1" "--jitter=nan" "--jitter=x" "--budget=0" \
	"--budget=5 --time=1s" "--time=0" "--jobs=-1" "--seed=-1" "--max-time=x" "--bogus"; do
	# shellcheck disable=SC2086
	[ "$(status "$gpusim" explore -q --out="$tmp/bad" $args "$scenario")" = 2 ] ||
		fail "explore $args did not exit 2"
done
[ "$(status "$gpusim" explore -q --out="$tmp/bad" "$tmp/missing.yaml")" = 2 ] ||
	fail "a missing scenario did not exit 2"
[ "$(status "$gpusim" explore -q --out="$tmp/bad" "$scenario" "$scenario")" = 2 ] ||
	fail "two scenarios did not exit 2"
[ ! -e "$tmp/bad" ] || fail "bad usage left a folder"
echo "explore: deadlocks (orders, wake order, jitter) and a needless bust found and replayed, none under retry, orders that commute run once, same result on any --jobs"
