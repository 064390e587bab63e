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
for command in run compare sweep merge explore validate import-rmm-log import-state-log calibrate predict; do
	echo "$out" | grep -q "^  $command " || fail "--help does not list $command"
	"$gpusim" "$command" --help >/dev/null || fail "$command --help exited $?"
done
# The manual page and the bash completion are well formed.
grep -q '^\.TH GPUSIM 1' "$top_srcdir/doc/gpusim.1" || fail "doc/gpusim.1 is not a manual page"
if command -v bash >/dev/null 2>&1; then
	bash -n "$top_srcdir/completion/gpusim" || fail "completion/gpusim has a syntax error"
fi

# Every key --set takes is listed from the loader's tables, and the loader knows
# each (a sequence is refused as a value, not as a key; schedule, a sequence
# itself, refuses the item).
keys=$("$gpusim" validate --list-keys) || fail "validate --list-keys exited $?"
[ "$(echo "$keys" | wc -l)" -gt 50 ] || fail "validate --list-keys: $(echo "$keys" | wc -l) keys"
echo "$keys" | grep -q "^policy.oom	fail block retry$" || fail "policy.oom's words are not listed"
for key in $(echo "$keys" | cut -f1); do
	err=$("$gpusim" run -q "$top_srcdir/scenarios/quickstart.yaml" --json=/dev/null \
		--set "$key=[x]" 2>&1 >/dev/null)
	case $key:$err in *"must be a single value"* | schedule:*"a choice of schedule"*) ;;
	*) fail "--set $key: $err" ;; esac
done

# The completion offers those keys and their words, as bash breaks the line.
if command -v bash >/dev/null 2>&1 && [ -f /usr/share/bash-completion/bash_completion ]; then
	complete() { bash "$top_srcdir/tests/completion-words.bash" \
		"$top_srcdir/completion/gpusim" "$gpusim" "$1" | tr '\n' ' '; }
	[ "$(complete 'run --set policy.o')" = "policy.oom= " ] || fail "key: $(complete 'run --set policy.o')"
	[ "$(complete 'run --set policy.oom=re')" = "retry " ] || fail "word: $(complete 'run --set policy.oom=re')"
	[ "$(complete 'sweep --param generate.sk')" = "generate.skew.tasks= generate.skew.factor= " ] ||
		fail "a nested key: $(complete 'sweep --param generate.sk')"
	[ "$(complete 'run --set memory.gpu.allocator=')" = "exact pool " ] ||
		fail "an enum's words: $(complete 'run --set memory.gpu.allocator=')"
	[ "$(complete 'montecarlo --policies=retry,b')" = "retry,block " ] ||
		fail "a policy after another: $(complete 'montecarlo --policies=retry,b')"
	[ "$(complete 'sweep --sh')" = "--shard= " ] || fail "sweep --shard: $(complete 'sweep --sh')"
	[ "$(complete 'mer')" = "merge " ] || fail "the merge command: $(complete 'mer')"
	[ "$(complete 'merge --')" = "--out= --quiet --help " ] || fail "merge's options: $(complete 'merge --')"
	[ "$(complete 'validate --list')" = "--list-keys --list-all-keys " ] ||
		fail "validate's options: $(complete 'validate --list')"
else
	echo "bash-completion is not installed: the completion itself was not tried"
fi

"$gpusim" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option must exit 2"
err=$("$gpusim" frobnicate 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "an unknown command must exit 2"
echo "$err" | grep -q "unknown command 'frobnicate'" || fail "unclear message: $err"
"$gpusim" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no command must exit 2"
echo "gpusim --version, --help and bad usage behave"
