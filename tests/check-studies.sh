#!/bin/sh
# The studies in scenarios/studies/ are valid, each has variants and runs under
# compare, the Monte Carlo study's situation is the one it says it is, and every
# picture the README shows exists.
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
[ $n -ge 5 ] || fail "expected at least five studies, found $n"
# montecarlo-policies.yaml is situation 9 of gpusim montecarlo --seed=1.
study="$top_srcdir/scenarios/studies/montecarlo-policies.yaml"
grep -q -- '--seed=1 --policies=fail,block,retry' "$study" || fail "montecarlo-policies: no command"
"$gpusim" montecarlo -q --seed=1 --iter=10 --json="$tmp/mc.json" >/dev/null || fail "montecarlo --seed=1"
want=$(sed -n '/"per_situation"/,$p' "$tmp/mc.json" | sed -n 11p | sed 's/.*"seed": \([0-9]*\),.*/\1/')
grep -q "^seed: $want\$" "$study" || fail "montecarlo-policies.yaml is not situation 9 (seed $want)"
for readme in "$top_srcdir/scenarios/README.md" "$top_srcdir/README.md"; do
	for img in $(sed -n 's/.*](\([^)]*\.\(png\|svg\)\)).*/\1/p' "$readme"); do
		[ -f "$(dirname "$readme")/$img" ] || fail "$readme shows $img, which is missing"
	done
done
echo "$n studies are valid and run under compare"
