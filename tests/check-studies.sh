#!/bin/sh
# The studies in scenarios/studies/ are valid, each has variants and runs under
# compare, and every picture the README shows exists.
set -u
gpusim="$top_builddir/gpusim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export GPUSIM_GNUPLOT=no
n=0
for study in "$top_srcdir"/scenarios/studies/*.yaml; do
	name=$(basename "$study" .yaml)
	n=$((n + 1))
	"$gpusim" validate "$study" >"$tmp/out" 2>&1 || fail "$name: $(cat "$tmp/out")"
	grep -q ', [1-9][0-9]* variants)$' "$tmp/out" || fail "$name has no variants"
	"$gpusim" compare -q --out="$tmp/$name" "$study" 2>"$tmp/err" || fail "$name: $(cat "$tmp/err")"
done
[ $n -ge 4 ] || fail "expected at least four studies, found $n"
for readme in "$top_srcdir/scenarios/README.md" "$top_srcdir/README.md"; do
	for img in $(sed -n 's/.*](\([^)]*\.\(png\|svg\)\)).*/\1/p' "$readme"); do
		[ -f "$(dirname "$readme")/$img" ] || fail "$readme shows $img, which is missing"
	done
done
echo "$n studies are valid and run under compare"
