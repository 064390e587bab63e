#!/bin/sh
# The gpusim program: --version, --help, and bad usage exiting 2.
set -u
gpusim="$top_builddir/gpusim"
fail() { echo "FAIL: $*"; exit 1; }

out=$("$gpusim" --version) || fail "--version exited $?"
version=$(sed -n 's/^AC_INIT(\[gpusim\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
[ "$out" = "gpusim $version" ] || fail "--version printed '$out', expected 'gpusim $version'"

out=$("$gpusim" --help) || fail "--help exited $?"
echo "$out" | grep -q 'Usage:' || fail "--help has no usage line"
echo "$out" | grep -q -- '--version' || fail "--help does not list --version"

"$gpusim" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option must exit 2"
err=$("$gpusim" frobnicate 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "an unknown command must exit 2"
echo "$err" | grep -q "unknown command 'frobnicate'" || fail "unclear message: $err"
"$gpusim" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no command must exit 2"
echo "gpusim --version, --help and bad usage behave"
