#!/bin/sh
# make fuzz: runs each harness named after TOP_SRCDIR with libFuzzer, in the
# build folder: for FUZZ_TIME seconds (default 300) or FUZZ_RUNS inputs,
# whichever comes first, with FUZZ_FLAGS added (-jobs=N, say). What it
# learns stays in fuzz-corpus/HARNESS/ for the next run; what fails lands in
# fuzz-findings/HARNESS/. Seeds: the conformance scenarios and the test data,
# copied to fuzz-seeds/HARNESS/, and fuzz/regressions/HARNESS/.
# Usage: run.sh TOP_SRCDIR HARNESS...
set -u
top_srcdir=$1
shift
status=0

seed() {
	dir=fuzz-seeds/$1
	shift
	mkdir -p "$dir"
	for f in "$@"; do
		if [ -f "$f" ]; then cp "$f" "$dir/"; fi
	done
}

for h in "$@"; do
	dict=
	case $h in
	scenario | overrides)
		seed "$h" "$top_srcdir"/scenarios/*.yaml "$top_srcdir"/scenarios/conformance/*.yaml \
			"$top_srcdir"/scenarios/studies/*.yaml "$top_srcdir"/tests/data/*.yaml
		dict=-dict="$top_srcdir/fuzz/scenario.dict" ;;
	rmmlog)
		seed "$h" "$top_srcdir"/tests/data/*.csv ;;
	statelog)
		seed "$h" "$top_srcdir"/tests/data/statelog/*.log ;;
	esac
	mkdir -p "fuzz-corpus/$h" "fuzz-findings/$h"
	echo "== fuzz-$h: ${FUZZ_TIME:-300} s${FUZZ_RUNS:+ or $FUZZ_RUNS runs}"
	# shellcheck disable=SC2086 # FUZZ_FLAGS and the limits are lists of flags
	"./fuzz/fuzz-$h" -max_total_time="${FUZZ_TIME:-300}" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $dict \
		-artifact_prefix="fuzz-findings/$h/" ${FUZZ_FLAGS:-} \
		"fuzz-corpus/$h" "$top_srcdir/fuzz/regressions/$h" "fuzz-seeds/$h" || status=1
done
exit $status
