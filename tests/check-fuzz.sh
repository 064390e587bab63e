#!/bin/sh
# The fuzzing harnesses without libFuzzer (fuzz/README.md): every input of
# fuzz/regressions/HARNESS/, and the seeds make fuzz starts from, run once
# through the harness's own code. A harness aborts on a crash, a GLib warning,
# an error message without its position or an import that does not load.
set -u
fail() { echo "FAIL: $*"; exit 1; }

replay() {
	harness=$1
	shift
	"$top_builddir/fuzz/replay-$harness" "$@" || fail "replay-$harness (inputs: $*)"
}

regressions="$top_srcdir/fuzz/regressions"
replay scenario "$regressions"/scenario/* "$top_srcdir"/scenarios/*.yaml \
	"$top_srcdir"/scenarios/conformance/*.yaml "$top_srcdir"/scenarios/studies/*.yaml \
	"$top_srcdir"/tests/data/*.yaml
replay overrides "$regressions"/overrides/* "$top_srcdir"/scenarios/*.yaml \
	"$top_srcdir"/scenarios/conformance/*.yaml
replay rmmlog "$regressions"/rmmlog/* "$top_srcdir"/tests/data/*.csv
replay statelog "$regressions"/statelog/* "$top_srcdir"/tests/data/statelog/*.log
echo "PASS: the fuzzing harnesses replay their regressions and seeds"
