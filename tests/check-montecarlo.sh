#!/bin/sh
# gpusim montecarlo: the same bytes whatever --jobs is, the tool's three
# summary lines with counts that add up, options that reach the situations,
# a worst situation replayed by `gpusim run` as it ran, and bad usage (exit 2).
# With --policies: the same situations under each policy, each as it runs
# alone, side by side, the same bytes whatever --jobs is, a worst situation
# replayed under its policy; --plots' CDF data well formed (the pictures are
# check-plots.sh's); bad policy names refused (exit 2).
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

# ---- --policies and --plots ----
export GPUSIM_GNUPLOT=no
pol() { mc --policies=fail,block,retry "$@"; }
pol --jobs=1 --json="$tmp/p1.json" --out="$tmp/pw" --plots="$tmp/pp1" >"$tmp/po1" 2>"$tmp/pe1" ||
	fail "--policies, jobs=1: $(cat "$tmp/pe1")"
pol --jobs=2 --json="$tmp/p2.json" --out="$tmp/pw" --plots="$tmp/pp2" >"$tmp/po2" 2>"$tmp/pe2" ||
	fail "--policies, jobs=2: $(cat "$tmp/pe2")"
cmp -s "$tmp/po1" "$tmp/po2" || fail "--policies: stdout differs with --jobs=2"
cmp -s "$tmp/p1.json" "$tmp/p2.json" || fail "--policies: JSON differs with --jobs=2"
for what in task-time retries blocked; do
	cmp -s "$tmp/pp1/cdf-$what.csv" "$tmp/pp2/cdf-$what.csv" ||
		fail "cdf-$what.csv differs with --jobs=2"
done
# Without gnuplot: the data, no pictures, and a word why.
grep -q 'plots skipped: gnuplot was not found' "$tmp/pe1" || fail "no word on skipped plots"
[ ! -e "$tmp/pp1/cdf-retries.png" ] || fail "a picture without gnuplot"

# A policy's per_situation rows, unindented, as the top level's are in a run of one policy.
policy_rows() { sed -n "/^    \"$2\": {/,/^    }/p" "$1" | sed -n '/"per_situation"/,/^      \]/p' |
	sed 's/^ *//'; }
top_rows() { rows "$1" | sed -n 's/^ *//; 1,/^]$/p'; }
for p in fail block retry; do
	grep -q "^$p:\$" "$tmp/po1" || fail "no lines for $p"
	[ "$(policy_rows "$tmp/p1.json" $p | grep -c '"seed": ')" = 30 ] || fail "$p: not 30 rows"
done
grep -q '^  Situations: 30 total, ' "$tmp/po1" || fail "--policies: no Situations lines"
grep -q '^ *fail  *block  *retry$' "$tmp/po1" || fail "no table with a column per policy"
grep -q '^  failed situations  ' "$tmp/po1" || fail "no failed situations row"
# The same situations under each (their seeds), each as it runs alone: retry is
# the default, fail is --baseline.
seeds() { policy_rows "$tmp/p1.json" "$1" | grep -o '"seed": [0-9]*'; }
[ "$(seeds fail)" = "$(seeds block)" ] && [ "$(seeds block)" = "$(seeds retry)" ] ||
	fail "the policies ran different situations"
[ "$(policy_rows "$tmp/p1.json" retry)" = "$(top_rows "$tmp/j1.json")" ] ||
	fail "retry's rows differ from a run without --policies"
[ "$(policy_rows "$tmp/p1.json" fail)" = "$(top_rows "$tmp/base.json")" ] ||
	fail "fail's rows differ from --baseline's"
[ "$(policy_rows "$tmp/p1.json" fail)" != "$(policy_rows "$tmp/p1.json" block)" ] ||
	fail "fail and block ran alike"

# The worst situation under block, replayed, runs under block as it ran here.
first=$(sed -n '/^worst situations under block/,/^$/p' "$tmp/po1" | grep -m1 'replay: gpusim run' |
	sed 's/.*gpusim run //')
case "$first" in *-block.yaml) ;; *) fail "no scenario for the worst situation under block: '$first'" ;; esac
grep -q '^  oom: block$' "$first" || fail "$first is not under block"
index=$(echo "$first" | sed 's/.*situation-\([0-9]*\)-block\.yaml/\1/')
"$gpusim" run "$first" --json="$tmp/replay.json" >/dev/null
want=$(policy_rows "$tmp/p1.json" block | sed -n "$((index + 2))p" | grep -o '"outcome": "[a-z]*"')
grep -q "^  $want," "$tmp/replay.json" || fail "$first replayed otherwise than it ran ($want)"

# The CDF data: a block per policy, in order, labelled, x and p rising to 1.
for what in task-time retries blocked; do
	awk -v what="$what" '
		function bad(m) { print "cdf-" what ".csv: " m; failed = 1; exit 1 }
		/^# (fail|block|retry): / { if (n > 0 && lastp != 1) bad("a curve ends below 1")
			n++; label[n] = $2; lastx = ""; lastp = -1; next }
		/^#/ || /^$/ { next }
		{ split($0, f, ","); if (lastx != "" && (f[1] < lastx || f[2] <= lastp)) bad("falls at " $0)
			lastx = f[1]; lastp = f[2] + 0 }
		END { if (failed) exit 1
			if (n != 3 || label[1] != "fail:" || label[2] != "block:" || label[3] != "retry:")
				{ print "cdf-" what ".csv: curves " n; exit 1 }
			if (lastp != 1) { print "cdf-" what ".csv: the last curve ends below 1"; exit 1 } }
	' "$tmp/pp1/cdf-$what.csv" || fail "cdf-$what.csv is malformed"
done
grep -q '^# task time, first start to end (ms), ' "$tmp/pp1/cdf-task-time.csv" ||
	fail "cdf-task-time.csv: no unit"

# Bad policy names and combinations: exit 2, a message, nothing written.
for bad in --policies=retry,bogus --policies= --policies=fail,,retry --policies=block,block \
	"--policies=retry --baseline"; do
	mc $bad --json="$tmp/bad.json" --plots="$tmp/badplots" >"$tmp/out" 2>"$tmp/err"
	[ $? = 2 ] || fail "$bad: expected exit 2"
	grep -q 'gpusim montecarlo: ' "$tmp/err" || fail "$bad: no message"
	[ ! -e "$tmp/bad.json" ] && [ ! -e "$tmp/badplots" ] || fail "$bad: wrote something"
done
mc --policies=retry,bogus 2>&1 | grep -q "unknown policy 'bogus' (one of fail, block, retry)" ||
	fail "an unknown policy does not say which are known"
exit 0
