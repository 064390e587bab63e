#!/bin/sh
# Where gpusim's outputs go (src/report/output.h), through every command that writes
# them: a link stays a link and its file gets the content; a FIFO and
# /dev/null are written in place and stay what they are; a directory, or a
# path in a folder that is not there, is refused with exit 2 and nothing
# written; any error (a refused output, a bad scenario, a failed plot) leaves
# none of the new files and the old ones as they were.
set -u
gpusim="$top_builddir/gpusim"
scenarios="$top_srcdir/scenarios"
small="$top_srcdir/tests/data/compare-small.yaml"
quick="$scenarios/quickstart.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
status() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
# What is in folder $1, names sorted on one line.
listing() { (cd "$1" && ls -A | tr '\n' ' '); }
# A guard against a hang, not a measure of time: a blocked FIFO fails the check.
guard() { timeout 120 "$@"; }
export GPUSIM_GNUPLOT=no

# The reference outputs, written to plain new files.
[ "$(status "$gpusim" run -q --json="$tmp/ref.json" --events="$tmp/ref.jsonl" "$quick")" = 0 ] ||
	fail "reference run: $(cat "$tmp/err")"
# Only wall_ns differs between two runs of one scenario.
same_result() { grep -v '"wall_ns"' "$1" >"$tmp/a"; grep -v '"wall_ns"' "$2" >"$tmp/b"; cmp -s "$tmp/a" "$tmp/b"; }

# A link stays a link; the file it names (through a chain, or not there yet) gets the content.
mkdir "$tmp/l"
echo old >"$tmp/l/target.json"
ln -s target.json "$tmp/l/link.json"
ln -s events.jsonl "$tmp/l/middle"
ln -s "$tmp/l/middle" "$tmp/l/chain.jsonl"
ln -s missing.csv "$tmp/l/dangling.csv"
[ "$(status "$gpusim" run -q --json="$tmp/l/link.json" --events="$tmp/l/chain.jsonl" \
	--timeline="$tmp/l/dangling.csv" "$quick")" = 0 ] || fail "run through links: $(cat "$tmp/err")"
for f in link.json middle chain.jsonl dangling.csv; do
	[ -L "$tmp/l/$f" ] || fail "$f is no longer a link"
done
[ "$(readlink "$tmp/l/link.json")" = target.json ] || fail "link.json points elsewhere now"
cmp -s "$tmp/l/events.jsonl" "$tmp/ref.jsonl" || fail "the chain's file has not the events"
same_result "$tmp/l/target.json" "$tmp/ref.json" || fail "the link's file has not the result"
head -1 "$tmp/l/missing.csv" | grep -q '^time_ns,' || fail "a dangling link's file was not made"
[ "$(listing "$tmp/l")" = "chain.jsonl dangling.csv events.jsonl link.json middle missing.csv target.json " ] ||
	fail "files beside the links: $(listing "$tmp/l")"

# A FIFO receives the output and is still a FIFO.
mkfifo "$tmp/events.fifo"
guard cat "$tmp/events.fifo" >"$tmp/from-fifo" &
reader=$!
[ "$(status guard "$gpusim" run -q --events="$tmp/events.fifo" "$quick")" = 0 ] ||
	fail "run to a FIFO: $(cat "$tmp/err")"
wait "$reader" || fail "the FIFO's reader did not end well"
[ -p "$tmp/events.fifo" ] || fail "the FIFO was replaced"
cmp -s "$tmp/from-fifo" "$tmp/ref.jsonl" || fail "the FIFO did not get the event lines"

# /dev/null takes output and stays the device it is; so does /dev/stdout.
[ "$(status "$gpusim" run -q --events=/dev/null --json=/dev/stdout "$quick")" = 0 ] ||
	fail "run to devices: $(cat "$tmp/err")"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
[ ! -s /dev/null ] || fail "/dev/null holds data"
grep -v '"wall_ns"' "$tmp/out" >"$tmp/a"; grep -v '"wall_ns"' "$tmp/ref.json" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "--json=/dev/stdout did not print the result"

# /dev/stdout and /dev/fd/1 stand for the descriptor: into a file, after the summary
# (not over it), and into a pipe.
"$gpusim" run --json=/dev/stdout "$quick" >"$tmp/both" 2>"$tmp/err" || fail "--json=/dev/stdout: $(cat "$tmp/err")"
[ "$(head -1 "$tmp/both")" = "scenario      quickstart" ] || fail "the summary was overwritten: $(head -2 "$tmp/both")"
sed -n '/^{$/,$p' "$tmp/both" | grep -v '"wall_ns"' >"$tmp/a"
cmp -s "$tmp/a" "$tmp/b" || fail "--json=/dev/stdout after the summary is not the result"
"$gpusim" run -q --json=/dev/fd/1 "$quick" 2>"$tmp/err" | grep -v '"wall_ns"' >"$tmp/a"
cmp -s "$tmp/a" "$tmp/b" || fail "--json=/dev/fd/1 into a pipe: $(cat "$tmp/err")"

# "-" is standard output, and the output's alone: the summary goes to stderr, and a
# second "-" is refused.
"$gpusim" run --json=- "$quick" 2>"$tmp/err" | grep -v '"wall_ns"' >"$tmp/a"
cmp -s "$tmp/a" "$tmp/b" || fail "--json=- into a pipe is not the result alone"
grep -q '^scenario      quickstart$' "$tmp/err" || fail "--json=-: the summary is not on stderr"
[ "$(status "$gpusim" run -q --json=- --events=- "$quick")" = 2 ] ||
	fail "two outputs to standard output were not refused"
grep -q 'only one output can be standard output' "$tmp/err" || fail "two -: $(cat "$tmp/err")"

# An output that cannot be written: exit 2, its path and why; the first output is not
# written and the file already at its path stays as it was.
mkdir "$tmp/u"
echo old >"$tmp/u/kept.json"
[ "$(status "$gpusim" run -q --json="$tmp/u/new.json" --events="$tmp/u/no/such/e.jsonl" "$quick")" = 2 ] ||
	fail "an output in a missing folder must exit 2"
grep -q "cannot write $tmp/u/no/such/e.jsonl: No such file or directory" "$tmp/err" ||
	fail "the message must name the path and why: $(cat "$tmp/err")"
[ "$(listing "$tmp/u")" = "kept.json " ] || fail "an output was written: $(listing "$tmp/u")"
[ "$(status "$gpusim" run -q --json="$tmp/u/kept.json" --trace="$tmp/u" "$quick")" = 2 ] ||
	fail "a directory as an output must exit 2"
grep -q "cannot write $tmp/u: Is a directory" "$tmp/err" || fail "directory: $(cat "$tmp/err")"
[ "$(cat "$tmp/u/kept.json")" = old ] || fail "the file at the first output was changed"
[ "$(listing "$tmp/u")" = "kept.json " ] || fail "files left: $(listing "$tmp/u")"

# A bad scenario writes no output, and a reader on a FIFO output sees its end.
bad="$top_srcdir/tests/data/loader-bad.yaml"
mkfifo "$tmp/u/bad.fifo"
guard cat "$tmp/u/bad.fifo" >"$tmp/from-bad" &
reader=$!
[ "$(status guard "$gpusim" run -q --json="$tmp/u/kept.json" --timeline="$tmp/u/t.csv" \
	--events="$tmp/u/bad.fifo" "$bad")" = 2 ] || fail "a bad scenario must exit 2"
wait "$reader"
[ ! -s "$tmp/from-bad" ] || fail "a bad scenario wrote to the FIFO"
[ "$(cat "$tmp/u/kept.json")" = old ] || fail "a bad scenario changed an existing output"
[ "$(listing "$tmp/u")" = "bad.fifo kept.json " ] || fail "a bad scenario left: $(listing "$tmp/u")"

# import-rmm-log: a link stays a link; a refused output writes nothing.
ln -s imported.yaml "$tmp/u/scenario.yaml"
[ "$(status "$gpusim" import-rmm-log -q --out="$tmp/u/scenario.yaml" "$top_srcdir/tests/data/rmm-small.csv")" = 0 ] ||
	fail "import through a link: $(cat "$tmp/err")"
[ -L "$tmp/u/scenario.yaml" ] && grep -q '^tasks:' "$tmp/u/imported.yaml" || fail "import through a link"
[ "$(status "$gpusim" import-rmm-log --out="$tmp/u" "$top_srcdir/tests/data/rmm-small.csv")" = 2 ] ||
	fail "import onto a directory must exit 2"

# compare: a plot that fails leaves neither the folder it made nor any file in one
# that was there; sweep likewise for an output that is refused.
[ "$(status env GPUSIM_GNUPLOT=false "$gpusim" compare -q --out="$tmp/c/new" "$small")" = 4 ] ||
	fail "compare with a failing gnuplot must exit 4: $(cat "$tmp/err")"
[ ! -e "$tmp/c" ] || fail "a failed compare left $(find "$tmp/c")"
mkdir -p "$tmp/c"
echo old >"$tmp/c/summary.csv"
[ "$(status env GPUSIM_GNUPLOT=false "$gpusim" compare -q --out="$tmp/c" "$small")" = 4 ] ||
	fail "compare into a folder with a failing gnuplot must exit 4"
[ "$(listing "$tmp/c")" = "summary.csv " ] || fail "a failed compare left: $(listing "$tmp/c")"
[ "$(cat "$tmp/c/summary.csv")" = old ] || fail "a failed compare changed summary.csv"
mkdir "$tmp/s" "$tmp/s/sweep.csv"
[ "$(status "$gpusim" sweep -q --trace --param memory.gpu.capacity=4MiB,8MiB --out="$tmp/s" "$small")" = 2 ] ||
	fail "sweep onto a directory must exit 2"
[ "$(listing "$tmp/s")" = "sweep.csv " ] || fail "a refused sweep left: $(listing "$tmp/s")"
[ "$(status "$gpusim" sweep -q --param memory.gpu.capacity=4MiB,8MiB --out="$tmp/s2" "$small")" = 0 ] ||
	fail "sweep: $(cat "$tmp/err")"
[ "$(listing "$tmp/s2")" = "sweep-plot.csv sweep.csv " ] || fail "sweep wrote: $(listing "$tmp/s2")"
exit 0
