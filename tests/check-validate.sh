#!/bin/sh
# gpusim validate: "FILE: ok (...)" on stdout for each valid file; for an
# invalid one (or one with an invalid variant) its errors, each as
# file:line:column: message on a line of stderr; exit 0 only if every file is
# valid, 2 otherwise and for bad usage.
set -u
gpusim="$top_builddir/gpusim"
data="$top_srcdir/tests/data"
fail() { echo "FAIL: $*"; exit 1; }

out=$("$gpusim" validate "$data/loader-full.yaml") || fail "a valid file must exit 0"
[ "$out" = "$data/loader-full.yaml: ok (2 tasks, 1 pool threads, 2 variants)" ] ||
	fail "unexpected output for a valid file: $out"

err=$("$gpusim" validate "$data/loader-bad.yaml" 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "an invalid file must exit 2"
case "$err" in
"$data/loader-bad.yaml:6:15: unknown unit \"MB/s\" in size \"6MB/s\""*) ;;
*) fail "unexpected message for an invalid file: $err" ;;
esac

# Every error of a file, in file order, not only the first.
err=$("$gpusim" validate "$data/loader-errors.yaml" 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "a file with several errors must exit 2"
expected_errors="$data/loader-errors.yaml:6:15: policy.oom must be fail, block or retry, not \"maybe\"
$data/loader-errors.yaml:6:33: policy.retry_cap must be a whole number >= 0, not \"-1\"
$data/loader-errors.yaml:11:24: task_done takes no value"
[ "$err" = "$expected_errors" ] || fail "unexpected message for a file with several errors: $err"

# A variant's errors each say which variant.
err=$("$gpusim" validate "$data/loader-bad-variant.yaml" 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "a file with an invalid variant must exit 2"
expected="$data/loader-bad-variant.yaml:7:26: policy.oom must be fail, block or retry, not \"sometimes\" (with variant broken)
$data/loader-bad-variant.yaml:7:48: policy.retry_cap must be a whole number >= 0, not \"-1\" (with variant broken)"
[ "$err" = "$expected" ] || fail "unexpected message for an invalid variant: $err"

# Every file is checked, even after a bad one.
out=$("$gpusim" validate "$data/loader-bad.yaml" "$data/loader-full.yaml" 2>/dev/null)
[ $? -eq 2 ] || fail "one invalid file among several must exit 2"
echo "$out" | grep -q 'loader-full.yaml: ok' || fail "the valid file after a bad one was not checked"

err=$("$gpusim" validate "$data/no-such-file.yaml" 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "a missing file must exit 2"
echo "$err" | grep -q 'no-such-file.yaml:1:1: cannot read: No such file' || fail "unclear message: $err"

# What is not a regular file is refused before it is read: a device would
# never end, a pipe would wait for a writer (timeout only stops a hang).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run reports the same errors, runs nothing and writes nothing.
"$gpusim" run -q --json="$tmp/r.json" "$data/loader-errors.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] || fail "run of a file with several errors must exit 2"
[ "$(cat "$tmp/err")" = "$expected_errors" ] ||
	fail "run printed other errors than validate: $(cat "$tmp/err")"
[ ! -e "$tmp/r.json" ] && [ ! -s "$tmp/out" ] || fail "run of an invalid file wrote output"
mkfifo "$tmp/fifo"
printf 'gpusim: 1\nname: t\ninclude: fifo\nmemory: {gpu: {capacity: 1MiB}}\n' >"$tmp/s.yaml"
for input in /dev/zero "$tmp/fifo" "$tmp/s.yaml"; do
	err=$(timeout 60 "$gpusim" validate "$input" 2>&1 </dev/null >/dev/null)
	[ $? -eq 2 ] || fail "$input must exit 2"
	case "$err" in
	"/dev/zero:1:1: cannot read: it is a character device, not a regular file") ;;
	"$tmp/fifo:1:1: cannot read: it is a pipe, not a regular file") ;;
	"$tmp/s.yaml:3:10: cannot include $tmp/fifo: it is a pipe, not a regular file") ;;
	*) fail "unclear message for $input: $err" ;;
	esac
done
# A file larger than gpusim reads whole (sparse: it takes no room).
truncate -s 1025M "$tmp/big.yaml"
err=$(timeout 60 "$gpusim" validate "$tmp/big.yaml" 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "a file over the limit must exit 2"
[ "$err" = "$tmp/big.yaml:1:1: cannot read: it is larger than 1024 MiB, the most gpusim reads" ] ||
	fail "unclear message for a file over the limit: $err"

err=$("$gpusim" validate 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "validate without a file must exit 2"
echo "$err" | grep -q 'no scenario file given' || fail "unclear message: $err"
"$gpusim" validate --no-such-option "$data/loader-full.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option of validate must exit 2"
out=$("$gpusim" validate --help) || fail "validate --help exited $?"
echo "$out" | grep -q 'Usage:' || fail "validate --help has no usage line"
"$gpusim" --help | grep -q '^  validate ' || fail "gpusim --help does not list validate"
echo "gpusim validate accepts valid scenarios and reports invalid ones"
