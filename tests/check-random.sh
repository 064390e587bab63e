#!/bin/sh
# Property test: runs the scenarios tests/random-scenarios writes for a fixed
# range of seeds and requires of every run what no scenario may break:
#   valid      gpusim validate accepts it (the generator writes only valid ones);
#   status     gpusim run exits 0 or 1: no crash, no signal, no 2;
#   messages   it prints no GLib CRITICAL or WARNING;
#   hang       with --max-time=10s it ends within $GS_RANDOM_HANG_S seconds of
#              real time (timeout only catches hangs: it is no timing assertion);
#   identical  a second run writes the same result (less wall_ns) and events;
#   copies     no copy is lost (totals.copies_lost is 0);
#   deadlock   under policy.oom retry with the watchdog on, an outcome
#              "deadlock" only where every waiting thread waits for an
#              allocation larger than its tier (one device's share of the GPU,
#              after alignment; whole host blocks), which no rollback could
#              ever make fit, or for a blocking reservation, which waits for
#              memory to be released and which the OOM state machine does not
#              roll back, or for another thread to allocate a buffer it is to
#              free (which no rollback makes happen), or (with no failed
#              allocation: for a GPU permit, say) behind a thread that waits so;
#              and any thread, when one waits for a reservation or for another
#              thread's allocation: what such a thread holds, no rollback of
#              the blocked ones gives back. Without the watchdog (watchdog: 0)
#              only a failed allocation checks for a deadlock, as in the
#              reference: one that forms as a task ends, with no allocation
#              failing after it, stays, and a thread that waits outside the
#              allocator (for a GPU permit or a reservation) keeps its task from
#              counting as blocked; the rule holds when nothing but state changes followed
#              the last failed allocation, whose check saw the end, and every
#              waiting thread waits for an allocation.
# Every $GS_RANDOM_HOST_EVERY-th seed also runs on real threads
# (--backend=host), where status, messages, hang and copies must hold; one
# with a free of another thread's buffer in a run with memory tiers may be
# refused (exit 3) instead.
#
# Seeds $GS_RANDOM_FIRST.. (default 1), $GS_RANDOM_RUNS of them (default 200);
# a long run: GS_RANDOM_RUNS=10000. A failure prints the seed, the property
# and the commands that reproduce it.
set -u
gpusim="$top_builddir/gpusim"
generator="$top_builddir/tests/random-scenarios"
first=${GS_RANDOM_FIRST:-1}
runs=${GS_RANDOM_RUNS:-200}
host_every=${GS_RANDOM_HOST_EVERY:-25}
hang_s=${GS_RANDOM_HANG_S:-60}
last=$((first + runs - 1))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
failures=0

"$generator" "$tmp" "$first" "$last" || { echo "FAIL: random-scenarios could not write"; exit 1; }
# A seed is its scenario: written alone or in a range, the same bytes.
"$generator" "$first" >"$tmp/alone.yaml"
cmp -s "$tmp/alone.yaml" "$tmp/random-$first.yaml" ||
	{ echo "FAIL: random-scenarios $first writes other bytes alone than in a range"; status=1; }

# $1 seed, $2 property, $3 what was seen, $4 the gpusim command that shows it.
violated() {
	echo "FAIL: seed $1: $2: $3"
	echo "  reproduce: $generator $1 >random-$1.yaml &&"
	echo "    $gpusim $4 random-$1.yaml"
	status=1
	failures=$((failures + 1))
}

# One scenario key under memory.gpu or memory.host, as the generator writes it.
memory_key() {
	sed -n "/^  $2:/,/^  [a-z]/s/^    $3: //p" "$1"
}

# Bytes of a size the generator wrote (B, KiB, MiB or none).
bytes_of() {
	case "$1" in
	*KiB) echo $((${1%KiB} * 1024)) ;;
	*MiB) echo $((${1%MiB} * 1048576)) ;;
	*) echo "$1" ;;
	esac
}

# Prints each thread that waits at the end of a retry run although a rollback
# could have let it on; nothing when the deadlock is the only possible end.
deadlock_waiters() {
	scenario=$1 json=$2 events=$3 unwatched=${4:-0}
	devices=$(memory_key "$scenario" gpu devices)
	alignment=$(bytes_of "$(memory_key "$scenario" gpu alignment)")
	block=$(bytes_of "$(memory_key "$scenario" host block_size)")
	pinned=$(bytes_of "$(memory_key "$scenario" host pinned)")
	awk -v unwatched="$unwatched" -v devices="${devices:-1}" -v alignment="${alignment:-256}" -v block="${block:-1048576}" -v pinned="${pinned:-0}" '
	function field(line, key,    m) {
		if (!match(line, "\"" key "\": *\"*[^\",]*"))
			return ""
		m = substr(line, RSTART, RLENGTH)
		sub("\"" key "\": *\"*", "", m)
		sub(/}$/, "", m)
		return m
	}
	function round_up(n, to) { return to > 1 ? int((n + to - 1) / to) * to : n }
	FNR == NR {
		if ($0 ~ /"waiting_at_end": true/)
			waiting[field($0, "name")] = 1
		else if ($0 ~ /^    "(gpu|host|disk)": \{"capacity"/)
			capacity[substr($1, 2, length($1) - 3)] = field($0, "capacity")
		next
	}
	{
		thread = field($0, "thread")
		if (!(thread in waiting))
			next
		if ($0 ~ /"ev":"alloc"/)
			need[thread] = $0 ~ /"ok":false/ ? field($0, "tier") " " field($0, "bytes") : ""
		else if ($0 ~ /"ev":"reserve"/)
			need[thread] = $0 ~ /"outcome":"wait"/ ? "reservation " field($0, "bytes") : ""
		else if ($0 ~ /"ev":"free_wait"/)
			need[thread] = "owner " field($0, "of")
	}
	# What no rollback can give: a blocking reservation, another thread allocating a
	# buffer to free, or more than the tier holds (the host: more than either of its
	# pools, where the result counts both in its capacity).
	function hopeless(need,    n) {
		split(need, n, " ")
		return n[1] == "reservation" || n[1] == "owner" ||
		       (n[1] == "gpu" && round_up(n[2], alignment) > capacity["gpu"] / devices) ||
		       (n[1] == "host" && round_up(n[2], block) > capacity["host"] - pinned &&
			n[2] > pinned)
	}
	END {
		for (thread in waiting) {
			stuck += hopeless(need[thread])
			outside += need[thread] == "" || need[thread] ~ /^(reservation|owner)/
			held += need[thread] ~ /^(reservation|owner)/
		}
		# Unwatched, a thread waiting outside the allocator hides its task from the check.
		if (unwatched && outside > 0)
			exit
		for (thread in waiting) {
			if (hopeless(need[thread]))
				continue
			# Waiting without a failed allocation (for a GPU permit, say) behind such a thread.
			if (need[thread] == "" && stuck > 0)
				continue
			# What a thread waiting outside the allocator holds, no rollback frees.
			if (held > 0)
				continue
			print thread " waits for " (need[thread] == "" ? "no failed allocation" : need[thread])
		}
	}' "$json" "$events" | sort
}

# Whether the run ended as the check after its last failed allocation saw it:
# nothing but state changes came after that allocation.
checked_at_end() {
	awk '/"ev":"alloc".*"ok":false/ { after = 0; failed = 1; next }
		!/"ev":"state"/ { after = 1 }
		END { exit !(failed && !after) }' "$1"
}

# $1 seed, $2 run name, $3.. options; exits with gpusim's status (124: the hang bound).
run() {
	seed=$1 name=$2
	shift 2
	timeout "$hang_s" "$gpusim" run --quiet --max-time=10s "$@" "$tmp/random-$seed.yaml" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
}

# The properties of one run, whose status is $code; $1 seed, $2 run name, $3 its options.
check_run() {
	seed=$1 name=$2 options=$3
	case $code in
	0 | 1) ;;
	124 | 137) violated "$seed" hang "no end within ${hang_s}s" "$options" ;;
	*) violated "$seed" status "exit status $code: $(tail -1 "$tmp/$name.err")" "$options" ;;
	esac
	if grep -q -E 'CRITICAL|WARNING' "$tmp/$name.err"; then
		violated "$seed" messages "$(grep -m1 -E 'CRITICAL|WARNING' "$tmp/$name.err")" \
			"$options"
	fi
	if [ -s "$tmp/$name.json" ] && ! grep -q '"copies_lost": 0,' "$tmp/$name.json"; then
		violated "$seed" copies "$(grep -m1 copies_lost "$tmp/$name.json")" "$options"
	fi
}

check_sim() {
	seed=$1
	rm -f "$tmp"/a.* "$tmp"/b.*
	# Both runs at once: two cores halve the time.
	run "$seed" b --json="$tmp/b.json" --events="$tmp/b.events" &
	run "$seed" a --json="$tmp/a.json" --events="$tmp/a.events"
	code=$?
	wait $!
	check_run "$seed" a "run --max-time=10s --json=a.json --events=a.events"
	[ $code -le 1 ] || return
	grep -v '"wall_ns"' "$tmp/a.json" >"$tmp/a.stable"
	grep -v '"wall_ns"' "$tmp/b.json" >"$tmp/b.stable" 2>/dev/null
	if ! cmp -s "$tmp/a.stable" "$tmp/b.stable" || ! cmp -s "$tmp/a.events" "$tmp/b.events"; then
		violated "$seed" identical "a second run wrote other bytes (status $code)" \
			"run --max-time=10s --json=a.json --events=a.events (twice)"
	fi
	unwatched=0
	grep -q '"watchdog_ns": 0,' "$tmp/a.json" && unwatched=1
	if grep -q '"oom": "retry"' "$tmp/a.json" && grep -q '^  "outcome": "deadlock"' "$tmp/a.json" &&
		{ [ $unwatched = 0 ] || checked_at_end "$tmp/a.events"; }; then
		waiters=$(deadlock_waiters "$tmp/random-$seed.yaml" "$tmp/a.json" "$tmp/a.events" \
			$unwatched)
		[ -z "$waiters" ] ||
			violated "$seed" deadlock "$(echo "$waiters" | tr '\n' ';')" \
				"run --max-time=10s --json=a.json --events=a.events"
	fi
}

check_host() {
	seed=$1
	rm -f "$tmp"/h.*
	run "$seed" h --backend=host --json="$tmp/h.json"
	code=$?
	# A free of another thread's buffer in a run with memory tiers: the simulator's alone for now (exit 3).
	[ $code -eq 3 ] && grep -q '^gpusim: .*real threads do not yet' "$tmp/h.err" && return
	check_run "$seed" h "run --max-time=10s --backend=host --json=h.json"
}

if ! "$gpusim" validate "$tmp"/random-*.yaml >/dev/null 2>"$tmp/validate.err"; then
	for seed in $(seq "$first" "$last"); do
		"$gpusim" validate "$tmp/random-$seed.yaml" >/dev/null 2>"$tmp/v.err" ||
			violated "$seed" valid "$(head -1 "$tmp/v.err")" validate
	done
fi
for seed in $(seq "$first" "$last"); do
	check_sim "$seed"
	[ $((seed % host_every)) -ne 0 ] || check_host "$seed"
done
echo "$runs seeds from $first: $failures violations"
exit $status
