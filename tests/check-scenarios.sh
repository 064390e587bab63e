#!/bin/sh
# Runs every scenario in scenarios/ and requires its expectations (exit 0), and
# compares the event logs of the scenarios that have a golden log in
# tests/golden/ byte for byte. Set GS_UPDATE_GOLDEN=1 to rewrite those logs.
set -u
gpusim="$top_builddir/gpusim"
# A valid scenario never reaches a refused precondition: a GLib CRITICAL aborts the run.
G_DEBUG=fatal-criticals
export G_DEBUG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
n=0
for scenario in "$top_srcdir"/scenarios/*.yaml "$top_srcdir"/scenarios/conformance/*.yaml; do
	name=$(basename "$scenario" .yaml)
	n=$((n + 1))
	if ! "$gpusim" run --quiet --events="$tmp/$name.events" "$scenario" >"$tmp/$name.out" 2>&1; then
		echo "FAIL: $name"
		cat "$tmp/$name.out"
		"$gpusim" run "$scenario" 2>&1 | tail -30
		status=1
		continue
	fi
	golden="$top_srcdir/tests/golden/$name.events"
	if [ -n "${GS_UPDATE_GOLDEN:-}" ] && [ -f "$golden" ]; then
		cp "$tmp/$name.events" "$golden"
	elif [ -f "$golden" ] && ! cmp -s "$golden" "$tmp/$name.events"; then
		echo "FAIL: $name: the event log differs from tests/golden/$name.events"
		diff "$golden" "$tmp/$name.events" | head -20
		status=1
	fi
	# The same input gives the same bytes.
	"$gpusim" run --quiet --events="$tmp/$name.again" "$scenario" >/dev/null 2>&1
	if ! cmp -s "$tmp/$name.events" "$tmp/$name.again"; then
		echo "FAIL: $name: two runs wrote different event logs"
		status=1
	fi
done
[ $status -eq 0 ] && echo "$n scenarios ran and met their expectations"
exit $status
