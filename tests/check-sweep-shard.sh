#!/bin/sh
# gpusim sweep --shard=K/N and gpusim merge: three shards run as separate
# processes (by GNU parallel where it is installed) and merged write the same
# files, byte for byte, as the sweep run whole (sweep.csv, sweep-plot.csv, the
# traces, and with gnuplot the pictures; none of them holds a wall-clock
# time); each shard runs only its share; bad --shard values, and merges of
# missing, repeated or mismatched shards, exit 2 with nothing written.
set -u
# Listings below are compared as the C locale sorts them.
LC_ALL=C
export LC_ALL
gpusim="$top_builddir/gpusim"
quickstart="$top_srcdir/scenarios/quickstart.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
# Two parameters and two variants: 20 runs, which three shards split 7, 7, 6.
grid="--param memory.gpu.capacity=8MiB,12MiB,16MiB,24MiB,32MiB --param seed=1,2 --variants=retry,block"

# The whole sweep, with a trace per run.
# shellcheck disable=SC2086 # $grid is a list of options
"$gpusim" sweep -q $grid --trace --out="$tmp/whole" "$quickstart" 2>"$tmp/err" ||
	fail "the whole sweep: $(cat "$tmp/err")"
[ "$(grep -c . "$tmp/whole/sweep.csv")" = 21 ] || fail "expected 20 runs in sweep.csv"
if [ -e "$tmp/whole/sweep.png" ]; then
	echo "gnuplot draws: the pictures are compared too"
else
	echo "no gnuplot: the pictures are not drawn, so not compared"
fi

# Three shards, each a process of its own, each with its own --jobs.
shard_cmd() {
	echo "'$gpusim' sweep -q $grid --trace --jobs=$1 --shard=$1/3 --out='$tmp/shard$1' '$quickstart'"
}
if parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
	echo "running the shards with GNU parallel"
	PARALLEL_HOME="$tmp/parallel-home" parallel --will-cite --halt now,fail=1 -j3 \
		"$(shard_cmd '{}')" ::: 1 2 3 2>"$tmp/err" || fail "GNU parallel's shards: $(cat "$tmp/err")"
else
	echo "GNU parallel is not installed: the shards run as background processes instead"
	for k in 1 2 3; do
		sh -c "$(shard_cmd $k)" 2>"$tmp/err$k" &
		eval "pid$k=\$!"
	done
	# shellcheck disable=SC2154 # set by the eval above
	for k in 1 2 3; do
		eval "wait \$pid$k" || fail "shard $k: $(cat "$tmp/err$k")"
	done
fi

# Each shard ran its share: run i (from 1) where i - 1 = K - 1 modulo 3.
[ "$(cd "$tmp/shard1" && echo *.trace.json)" = \
	"run001.trace.json run004.trace.json run007.trace.json run010.trace.json run013.trace.json run016.trace.json run019.trace.json" ] ||
	fail "shard 1's runs: $(ls "$tmp/shard1")"
[ "$(ls "$tmp/shard3" | tr '\n' ' ')" = \
	"run003.trace.json run006.trace.json run009.trace.json run012.trace.json run015.trace.json run018.trace.json sweep-shard.ini " ] ||
	fail "shard 3's files: $(ls "$tmp/shard3")"
grep -q '^shard=2$' "$tmp/shard2/sweep-shard.ini" && grep -q '^shards=3$' "$tmp/shard2/sweep-shard.ini" ||
	fail "shard 2's manifest: $(cat "$tmp/shard2/sweep-shard.ini")"

# Merged, in any order: the whole sweep's files, byte for byte, and no other.
[ "$(status "$gpusim" merge "$tmp/shard3" "$tmp/shard1" "$tmp/shard2" --out="$tmp/merged")" = 0 ] ||
	fail "merge: $(cat "$tmp/err")"
grep -q '^20 runs from 3 shards; wrote ' "$tmp/out" || fail "merge's summary: $(cat "$tmp/out")"
[ "$(ls "$tmp/whole")" = "$(ls "$tmp/merged")" ] ||
	fail "merged files: $(ls "$tmp/merged" | tr '\n' ' '), whole: $(ls "$tmp/whole" | tr '\n' ' ')"
for f in "$tmp/whole"/*; do
	cmp "$f" "$tmp/merged/${f##*/}" || fail "merged ${f##*/} differs from the whole sweep's"
done

# Without gnuplot, as the whole sweep without it (one shard of one, too).
GPUSIM_GNUPLOT=no "$gpusim" sweep -q $grid --out="$tmp/whole-np" "$quickstart" 2>/dev/null ||
	fail "the whole sweep without gnuplot"
GPUSIM_GNUPLOT=no "$gpusim" sweep -q $grid --shard=1/1 --out="$tmp/one" "$quickstart" 2>/dev/null ||
	fail "shard 1 of 1"
[ "$(GPUSIM_GNUPLOT=no status "$gpusim" merge -q "$tmp/one" --out="$tmp/merged-np")" = 0 ] ||
	fail "merge of one shard: $(cat "$tmp/err")"
grep -q 'plots skipped' "$tmp/err" || fail "merge did not say the plots were skipped"
[ "$(ls "$tmp/merged-np" | tr '\n' ' ')" = "sweep-plot.csv sweep.csv " ] ||
	fail "merged without gnuplot: $(ls "$tmp/merged-np")"
for f in sweep.csv sweep-plot.csv; do
	cmp "$tmp/whole-np/$f" "$tmp/merged-np/$f" || fail "$f of one shard differs"
done

# Bad --shard: exit 2, a gpusim message, nothing written.
for bad in 0/3 4/3 3 a/3 1/0 1/-3 1/3/3 21/21; do
	# shellcheck disable=SC2086
	[ "$(status "$gpusim" sweep $grid --shard="$bad" --out="$tmp/bad" "$quickstart")" = 2 ] ||
		fail "--shard=$bad was taken"
	grep -q "^gpusim sweep: --shard=$bad: " "$tmp/err" || fail "--shard=$bad: $(cat "$tmp/err")"
	[ ! -e "$tmp/bad" ] || fail "--shard=$bad wrote $tmp/bad"
done
grep -q 'the sweep has 20 runs, so at most 20 shards' "$tmp/err" || fail "N over the runs: $(cat "$tmp/err")"

# Merges that must be refused: exit 2, one clear message, nothing written
# (an older merge's files stay as they were).
mkdir "$tmp/kept" && echo old >"$tmp/kept/sweep.csv"
refused() { # MESSAGE SHARD-DIR...
	message=$1
	shift
	[ "$(status "$gpusim" merge "$@" --out="$tmp/kept")" = 2 ] || fail "merge $* was taken"
	grep -q "^gpusim merge: .*$message" "$tmp/err" || fail "merge $*: $(cat "$tmp/err")"
	[ "$(ls "$tmp/kept")" = sweep.csv ] && [ "$(cat "$tmp/kept/sweep.csv")" = old ] ||
		fail "a refused merge ($*) wrote $(ls "$tmp/kept")"
}
refused 'shard 2 of 3 is missing: merge needs all 3' "$tmp/shard1" "$tmp/shard3"
refused 'shards 2, 3 of 3 are missing' "$tmp/shard1"
refused "shard 1 of 3 is given twice: $tmp/shard1 and $tmp/shard1" "$tmp/shard1" "$tmp/shard2" \
	"$tmp/shard3" "$tmp/shard1"
refused "$tmp/whole: not a shard of a sweep" "$tmp/whole"
# Shards of other sweeps: another grid, another --set, another scenario, another split.
"$gpusim" sweep -q --param memory.gpu.capacity=8MiB,12MiB,16MiB,24MiB,64MiB --param seed=1,2 \
	--variants=retry,block --trace --shard=2/3 --out="$tmp/grid2" "$quickstart" 2>/dev/null
refused "$tmp/shard1 and $tmp/grid2 are shards of different sweeps (their params differ)" \
	"$tmp/shard1" "$tmp/grid2" "$tmp/shard3"
# shellcheck disable=SC2086
"$gpusim" sweep -q $grid --trace --set policy.retry_cap=1 --shard=2/3 --out="$tmp/set2" \
	"$quickstart" 2>/dev/null
refused "(their sets differ)" "$tmp/shard1" "$tmp/set2" "$tmp/shard3"
sed 's/^name: .*/& copy/' "$quickstart" >"$tmp/other.yaml"
# shellcheck disable=SC2086
"$gpusim" sweep -q $grid --trace --shard=2/3 --out="$tmp/other2" "$tmp/other.yaml" 2>/dev/null
refused "(their scenario_sha256 differ)" "$tmp/shard1" "$tmp/other2" "$tmp/shard3"
# shellcheck disable=SC2086
"$gpusim" sweep -q $grid --trace --shard=2/4 --out="$tmp/four2" "$quickstart" 2>/dev/null
refused "$tmp/shard1 is shard 1 of 3, $tmp/four2 shard 2 of 4" "$tmp/shard1" "$tmp/four2" \
	"$tmp/shard3"
# A shard that lost a trace, or whose manifest was changed.
cp -r "$tmp/shard2" "$tmp/lost2" && rm "$tmp/lost2/run005.trace.json"
refused "cannot read $tmp/lost2/run005.trace.json: " "$tmp/shard1" "$tmp/lost2" "$tmp/shard3"
cp -r "$tmp/shard2" "$tmp/bent2" && sed -i 's/^5=[a-z]*,/5=finished,/' "$tmp/bent2/sweep-shard.ini"
refused "sweep-shard.ini: run 5: not the metrics of a run" "$tmp/shard1" "$tmp/bent2" "$tmp/shard3"
cp -r "$tmp/shard2" "$tmp/more2" && echo "6=completed,1,1,1,0,1,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,1,1" \
	>>"$tmp/more2/sweep-shard.ini"
refused "it has runs its shard does not take" "$tmp/shard1" "$tmp/more2" "$tmp/shard3"
# Usage.
[ "$(status "$gpusim" merge "$tmp/shard1")" = 2 ] && grep -q -- '--out=DIR' "$tmp/err" ||
	fail "merge without --out: $(cat "$tmp/err")"
[ "$(status "$gpusim" merge --out="$tmp/none")" = 2 ] && [ ! -e "$tmp/none" ] ||
	fail "merge without shards: $(cat "$tmp/err")"
echo "gpusim sweep --shard and merge: the whole sweep's files, byte for byte; errors refused"
