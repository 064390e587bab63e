#!/bin/sh
# doc/gpusim-scenario.5 documents exactly the keys the loader accepts: each
# key `gpusim validate --list-all-keys` prints (from the loader's tables) is a
# tag of the page, with every word it takes in its text; the page names no
# other key; its examples are valid scenarios; and it renders without warnings.
set -u
gpusim="$top_builddir/gpusim"
page="$top_srcdir/doc/gpusim-scenario.5"
loader="$top_srcdir/src/scenario/loader.c"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$gpusim" validate --list-all-keys >"$tmp/listed" || fail "validate --list-all-keys exited $?"
cut -f1 "$tmp/listed" | sort >"$tmp/keys"

# Every key name of the loader's tables is listed (a table the listing does
# not reach would leave its keys undocumented unnoticed).
sed -n 's/.*\(FIELD\|OTHER\|CUSTOM\|SUBMAP\)("\([a-z_]*\)".*/\2/p; s/^\t{"\([a-z_.]*\)", VK_.*/\1/p' \
	"$loader" | sort -u >"$tmp/names"
[ -s "$tmp/names" ] || fail "no key names found in $loader"
while read -r name; do
	grep -q "\(^\|\.\|\]\.\)$name$" "$tmp/keys" ||
		fail "key \"$name\" of $loader is not listed by validate --list-all-keys"
done <"$tmp/names"

# The page's keys: a .TP line followed by a .B line.
awk 'prev == ".TP" && /^\.B / { print $2 } { prev = $0 }' "$page" | sort >"$tmp/tags"
dups=$(uniq -d "$tmp/tags")
[ -z "$dups" ] || fail "documented more than once in $page:" $dups
missing=$(comm -23 "$tmp/keys" "$tmp/tags")
extra=$(comm -13 "$tmp/keys" "$tmp/tags")
[ -z "$missing" ] || fail "keys the loader accepts that $page does not document:" $missing
[ -z "$extra" ] || fail "keys $page documents that the loader does not accept:" $extra

# An enumeration's text names each of its words.
body() {
	awk -v tag=".B $1" 'found && /^\.(TP|SH|SS|RE|IP|PP)/ { exit } found { print }
		prev == ".TP" && $0 == tag { found = 1 } { prev = $0 }' "$page"
}
grep '	' "$tmp/listed" | grep -v '	true false$' | while IFS='	' read -r key words; do
	text=$(body "$key")
	for word in $words; do
		echo "$text" | grep -qw -- "$word" || fail "$page: $key does not say what $word means"
	done
done || exit 1

# Every example is valid: a whole scenario, top-level keys, or ops.
awk -v dir="$tmp" '/^\.EE/ { inside = 0; close(file) } inside { print > file }
	/^\.EX/ { inside = 1; file = sprintf("%s/example-%02d", dir, ++n) }' "$page"
count=0
for example in "$tmp"/example-*; do
	sed 's/\\-/-/g; s/\\e/\\/g; s/\\&//g' "$example" >"$example.text"
	yaml="$example.yaml"
	if head -n 1 "$example.text" | grep -q '^gpusim: 1$'; then
		cp "$example.text" "$yaml"
	elif head -n 1 "$example.text" | grep -q '^- '; then
		printf '%s\n' 'gpusim: 1' 'name: man-example' 'memory: {gpu: {capacity: 1GiB}}' \
			'tasks:' '  - id: T' '    threads:' '      - consumers: {c: on_heap}' \
			'        values: {v: 0}' '        ops:' >"$yaml"
		sed 's/^/          /' "$example.text" >>"$yaml"
	else
		printf '%s\n' 'gpusim: 1' 'name: man-example' >"$yaml"
		grep -q '^memory:' "$example.text" || echo 'memory: {gpu: {capacity: 1GiB}}' >>"$yaml"
		cat "$example.text" >>"$yaml"
	fi
	err=$("$gpusim" validate "$yaml" 2>&1 >/dev/null) ||
		fail "an example of $page is not valid: $err
$(cat "$yaml")"
	count=$((count + 1))
done
[ "$count" -ge 10 ] || fail "$page has $count examples"

# The manual pages name each other, and no file outside them.
grep -q '^\.BR gpusim (1)' "$page" || fail "$page does not refer to gpusim(1)"
grep -q '^\.BR gpusim\\-scenario (5)' "$top_srcdir/doc/gpusim.1" ||
	fail "doc/gpusim.1 does not refer to gpusim-scenario(5)"
if grep -n 'SPEC\|\.md\b' "$page" "$top_srcdir/doc/gpusim.1"; then
	fail "a manual page refers to a file outside the manual pages"
fi

# It renders without warnings.
if command -v groff >/dev/null 2>&1; then
	warnings=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$warnings" ] || fail "groff warns about $page: $warnings"
else
	echo "groff is not installed: the page was not rendered"
fi
echo "$(wc -l <"$tmp/keys") keys documented, $count examples valid"
