#!/bin/sh
# gpusim montecarlo: the same bytes whatever --jobs is, the tool's three
# summary lines with counts that add up, options that reach the situations,
# a worst situation replayed by `gpusim run` as it ran, and bad usage (exit 2).
set -u
gpusim="$top_builddir/gpusim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mc() { "$gpusim" montecarlo --seed=7 --iter=30 --numTasks=6 --maxTaskAllocs=20 "$@"; }
# The per_situation array of a JSON file, one row a line.
rows() { sed -n '/"per_situation"/,$p' "$1"; }

mc --jobs=1 --json="$tmp/j1.json" --out="$tmp/w1" >"$tmp/o1" 2>"$tmp/e1" ||
	fail "jobs=1: $(cat "$tmp/e1")"
mc --jobs=3 --json="$tmp/j3.json" --out="$tmp/w1" >"$tmp/o3" 2>"$tmp/e3" ||
	fail "jobs=3: $(cat "$tmp/e3")"
cmp -s "$tmp/o1" "$tmp/o3" || fail "stdout differs with --jobs=3"
cmp -s "$tmp/j1.json" "$tmp/j3.json" || fail "JSON differs with --jobs=3"
# No progress off a terminal.
[ ! -s "$tmp/e1" ] || fail "output on stderr off a terminal: $(cat "$tmp/e1")"

# The tool's lines, and total = successful + failed.
for what in Situations Tasks; do
	line=$(grep "^$what: " "$tmp/o1") || fail "no $what line: $(cat "$tmp/o1")"
	set -- $(echo "$line" |
		sed 's/^[A-Za-z]*: \([0-9]*\) total, \([0-9]*\) successful, \([0-9]*\) failed\..*/\1 \2 \3/')
	[ $# = 3 ] && [ "$1" = $(($2 + $3)) ] || fail "$what does not add up: $line"
done
grep -q '^Situations: 30 total, ' "$tmp/o1" || fail "not 30 situations"
grep -q '^Exceptions: [0-9]* splits, [0-9]* retries\.$' "$tmp/o1" || fail "no Exceptions line"
grep -q '^  retries  *[0-9.]*  *[0-9.]*   \[' "$tmp/o1" || fail "no statistics of retries"
for key in situations situations_failed tasks tasks_failed retries splits lost_ns blocked_ns \
	stats per_situation; do
	grep -q "^  \"$key\": " "$tmp/j1.json" || fail "JSON has no $key"
done
[ "$(rows "$tmp/j1.json" | grep -c '"seed": ')" = 30 ] || fail "not 30 rows in per_situation"

# A worst situation, replayed from its scenario, does what it did here.
first=$(grep -m1 'replay: gpusim run' "$tmp/o1" | sed 's/.*gpusim run //')
[ -f "$first" ] || fail "no scenario for the worst situation: $first"
index=$(echo "$first" | sed 's/.*situation-\([0-9]*\)\.yaml/\1/')
"$gpusim" run "$first" --json="$tmp/replay.json" >/dev/null || fail "gpusim run $first"
want=$(rows "$tmp/j1.json" | sed -n "$((index + 2))p" |
	sed 's/.*"retries": \([0-9]*\), "splits": \([0-9]*\), "lost_ns": \([0-9]*\).*/\1 \2 \3/')
got=$(for k in retries splits lost_ns; do
	sed -n '/"totals": {/,/}/p' "$tmp/replay.json" | grep -o "\"$k\": [0-9]*" | sed 's/.*: //'
done | tr '\n' ' ' | sed 's/ $//')
[ -n "$want" ] && [ "$want" = "$got" ] || fail "situation $index replayed as '$got', ran as '$want'"

# Options reach the situations: the rows change for the same seed. --taskRetry
# can only matter where attempts fail, which the retry state machine avoids
# here, so it is compared under --baseline (policy.oom fail).
for opt in --skewed --shuffleThreads=2; do
	mc --jobs=2 "$opt" --json="$tmp/opt.json" >/dev/null || fail "$opt"
	[ "$(rows "$tmp/opt.json")" != "$(rows "$tmp/j1.json")" ] || fail "$opt changed nothing"
done
mc --jobs=2 --baseline --json="$tmp/base.json" >/dev/null || fail "--baseline"
mc --jobs=2 --baseline --taskRetry=0 --json="$tmp/opt.json" >/dev/null || fail "--taskRetry=0"
[ "$(rows "$tmp/opt.json")" != "$(rows "$tmp/base.json")" ] || fail "--taskRetry=0 changed nothing"

# Bad usage: exit 2, a message, nothing written.
for bad in --allocMode=POOL --allocMode=FOO --iter=0 --numTasks=-1 --seed=x --bogus extra; do
	mc --json="$tmp/bad.json" "$bad" >"$tmp/out" 2>"$tmp/err"
	[ $? = 2 ] || fail "$bad: expected exit 2"
	grep -q 'gpusim montecarlo: ' "$tmp/err" || fail "$bad: no message"
	[ ! -e "$tmp/bad.json" ] || fail "$bad: wrote JSON"
done
grep -q 'only ASYNC' "$tmp/err" 2>/dev/null || mc --allocMode=POOL 2>&1 | grep -q 'only ASYNC' ||
	fail "--allocMode=POOL does not say why"
"$gpusim" montecarlo --help | grep -q 'allocMode' || fail "--help does not list --allocMode"
exit 0
