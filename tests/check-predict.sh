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
	'^  host_disk: {bandwidth: [0-9.]*GB/s, latency: [0-9]*ns}$' '^  alloc_latency: [0-9]*ns$' \
	'^  fresh_memory: {bandwidth: [0-9.]*GB/s, from: [0-9]*MiB}$' '^  lanes: [0-9]*\.[0-9][0-9]$'; do
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

# predict: the simulator with the calibration against two real runs of each
# variant. The simulated figures are exact; the measured ones are the
# machine's, so only their presence and the arithmetic of the error are
# checked. compare-small's roomy variant computes 1 ms, which its real run
# cannot take less than.
[ "$(status "$gpusim" predict --device="$tmp/device.yaml" --runs=2 --out="$tmp/predict" \
	"$top_srcdir/tests/data/compare-small.yaml" "$scenario")" = 0 ] ||
	fail "predict: $(cat "$tmp/err")"
csv="$tmp/predict/prediction.csv"
head -1 "$csv" | grep -q '^scenario,variant,predicted_makespan_ns,measured_makespan_ns,predicted_blocked_ns,measured_blocked_ns,predicted_spill_block_ns,measured_spill_block_ns,predicted_moved_bytes,measured_moved_bytes,makespan_error$' ||
	fail "prediction.csv header: $(head -1 "$csv")"
[ "$(sed 1d "$csv" | cut -d, -f1,2 | tr '\n' ' ')" = "compare-small,base compare-small,roomy compare-small,tight wide-gaps-spill,base " ] ||
	fail "prediction.csv rows: $(cut -d, -f1,2 "$csv")"
# The prediction is the simulator's run with the same calibration, exactly
# (its allocation latency is this machine's, so no fixed figure).
"$gpusim" run -q --device="$tmp/device.yaml" --variant=roomy --json="$tmp/roomy.json" \
	"$top_srcdir/tests/data/compare-small.yaml" >/dev/null 2>&1 || fail "run --variant=roomy"
roomy=$(sed -n 's/^  "makespan_ns": \([0-9]*\),$/\1/p' "$tmp/roomy.json")
[ -n "$roomy" ] && [ "$roomy" -ge 1000000 ] || fail "roomy's simulated makespan: '$roomy'"
grep -q "^compare-small,roomy,$roomy," "$csv" || fail "roomy's prediction: $(grep roomy "$csv") (run: $roomy)"
awk -F, 'NR > 1 {
	if ($4 <= 0) { print "no measured makespan: " $0; exit 1 }
	e = ($3 - $4) / $4; d = e - $11; if (d < 0) d = -d
	if (d > 0.0001) { print "error column wrong: " $0; exit 1 }
	if ($1 == "compare-small" && $2 == "roomy" && $4 < 1000000) { print "roomy ran faster than its compute: " $0; exit 1 }
}' "$csv" || fail "prediction.csv figures"
grep -q '^makespan error over 4 rows: median [0-9.]*%, worst [0-9.]*%$' "$tmp/out" ||
	fail "predict printed no overall error: $(cat "$tmp/out")"
if command -v gnuplot >/dev/null 2>&1; then
	[ "$(head -c 4 "$tmp/predict/prediction.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
		fail "prediction.png is not a PNG file"
	grep -q 'predicted makespan' "$tmp/predict/prediction.svg" || fail "prediction.svg has no axis"
fi
[ "$(status "$gpusim" predict --runs=1 "$scenario")" = 2 ] || fail "predict without --device must exit 2"
[ "$(status "$gpusim" predict --device="$tmp/device.yaml" --backend=sim "$scenario")" = 2 ] ||
	fail "predict --backend=sim must exit 2"
[ "$(status "$gpusim" predict --device="$tmp/device.yaml" --runs=0 "$scenario")" = 2 ] ||
	fail "predict --runs=0 must exit 2"
[ "$(status "$gpusim" predict --device="$tmp/tasks.yaml" --out="$tmp/p-bad" "$scenario")" = 2 ] ||
	fail "predict with a bad device file must exit 2"
grep -qF "$tmp/tasks.yaml:3:1: " "$tmp/err" || fail "predict's device error: $(cat "$tmp/err")"
[ ! -e "$tmp/p-bad" ] || fail "predict with a bad device file wrote its folder"

echo "gpusim calibrate --backend=host, --device and predict behave"
