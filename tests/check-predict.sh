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

# --device puts a calibration's links over the scenario's, as --set would, in
# run, compare and sweep alike.
printf 'links:\n  gpu_host: {bandwidth: 1GB/s, latency: 50us}\n  alloc_latency: 20us\n' >"$tmp/slow.yaml"
makespan() { sed -n 's/^  "makespan_ns": \([0-9]*\),$/\1/p' "$1"; }
scenario="$scenarios/wide-gaps-spill.yaml"
"$gpusim" run -q --json="$tmp/plain.json" "$scenario" || fail "wide-gaps-spill"
"$gpusim" run -q --json="$tmp/device.json" --device="$tmp/slow.yaml" "$scenario" ||
	fail "wide-gaps-spill with --device"
"$gpusim" run -q --json="$tmp/set.json" --set links.gpu_host.bandwidth=1GB/s \
	--set links.gpu_host.latency=50us --set links.alloc_latency=20us "$scenario" ||
	fail "wide-gaps-spill with --set"
[ -n "$(makespan "$tmp/device.json")" ] || fail "no makespan in the result JSON"
[ "$(makespan "$tmp/device.json")" = "$(makespan "$tmp/set.json")" ] ||
	fail "--device and the same --set differ: $(makespan "$tmp/device.json") $(makespan "$tmp/set.json")"
[ "$(makespan "$tmp/device.json")" -gt "$(makespan "$tmp/plain.json")" ] ||
	fail "slower links did not lengthen the run: $(makespan "$tmp/device.json") $(makespan "$tmp/plain.json")"
"$gpusim" compare -q --device="$tmp/slow.yaml" --out="$tmp/compare" "$scenario" ||
	fail "compare --device"
"$gpusim" sweep -q --device="$tmp/slow.yaml" --param executor.slots=4 --out="$tmp/sweep" \
	"$scenario" || fail "sweep --device"
[ "$(status "$gpusim" sweep --device="$tmp/slow.yaml" --shard=1/2 --param executor.slots=2,4 \
	--out="$tmp/shard" "$scenario")" = 2 ] || fail "sweep --device --shard must exit 2"

# A device file holds memory: and links: alone; anything else, or a bad value,
# is the usual file:line:column error and exit 2, with nothing written.
printf 'links:\n  gpu_host: {bandwidth: 1GB/s}\ntasks: []\n' >"$tmp/tasks.yaml"
printf 'links:\n  gpu_host: {bandwidth: fast}\n' >"$tmp/value.yaml"
for bad in "tasks.yaml:3:1: a device file holds memory: and links: only, not tasks:" \
	"value.yaml:2:25: " "missing.yaml:1:1: cannot read"; do
	file=${bad%%:*}
	for command in run compare sweep; do
		out=--out; [ $command = run ] && out=--json
		param=; [ $command = sweep ] && param=--param=executor.slots=4
		[ "$(status "$gpusim" $command -q $param --device="$tmp/$file" $out="$tmp/bad-$command" \
			"$scenario")" = 2 ] || fail "$command with --device=$file must exit 2"
		grep -qF "$tmp/$bad" "$tmp/err" || fail "$command --device=$file said: $(cat "$tmp/err")"
		[ ! -e "$tmp/bad-$command" ] || fail "$command with --device=$file wrote its folder"
	done
done

echo "gpusim calibrate --backend=host, --device and predict behave"
