#!/usr/bin/env bash
# Copyright 2026 The Kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# make test's runner (the Makefile's TEST_TARGETS says what it runs):
#   hack/make-test.sh ARTIFACTS CAPACITY TARGET...
# Each TARGET is a make target, run as MAKE (default make) TARGET, its
# output also in ARTIFACTS/make-test/TARGET.log and its time (wall, and
# its processes' CPU) in ARTIFACTS/test-times.txt:
#   t        runs alone, in order;
#   t@       starts in the background; "wait" waits for every one started;
#   a+b      run at once, their lines prefixed with their names;
#   t:W      (consecutive ones) form a pool: each takes W of CAPACITY
#            while it runs, and as one ends the next that fits starts, in
#            the order given, none passing one that waits for room unless
#            both fit. A target's weight is what it loads the machine with
#            (clusters, kind nodes, CPU-bound plugin runs).
# It stops starting targets at the first that fails, waits for those
# running, prints the times and each failed target's error lines, and
# exits non-zero if one failed.
set -uo pipefail

artifacts=$1 capacity=$2
shift 2
make=${MAKE:-make}
times=$artifacts/test-times.txt
mkdir -p "$artifacts/make-test"
: > "$times"

run() {
	local start status=0 cpu
	start=$(date +%s)
	$make --no-print-directory "$1" || status=$?
	# The CPU its processes used (user and system, of those waited for:
	# not kind's node containers, which Docker runs): with the wall time,
	# what to cut when make test is over its budget.
	# (times in this shell: in a command substitution's, it counts none.)
	times > "$artifacts/make-test/$1.times"
	cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$artifacts/make-test/$1.times")
	rm -f "$artifacts/make-test/$1.times"
	printf '%-22s %6ss  cpu %6ss%s\n' "$1" $(($(date +%s) - start)) "$cpu" "$([ $status -eq 0 ] || echo '  FAILED')" >> "$times"
}
logged() { run "$1" 2>&1 | tee "$artifacts/make-test/$1.log"; }
prefixed() { logged "$1" | sed -u "s/^/[$1] /"; }
failed() { grep -q FAILED "$times"; }

# pool runs "name:weight"s, at most capacity's worth at once; one heavier
# than capacity runs when nothing else does. The first that does not fit
# keeps its room: one listed after it starts only beside it (lighter ones
# taking each freed place would leave a heavy suite to the end, alone).
pool() {
	local queue=("$@") used=0 i t w done held
	local -A weight=()
	while :; do
		held=0
		for i in "${!queue[@]}"; do
			failed && break
			t=${queue[$i]%%:*} w=${queue[$i]##*:}
			if [ $((used + w + held)) -gt "$capacity" ] && [ "$used" -ne 0 ]; then
				[ "$held" -ne 0 ] || held=$w
				continue
			fi
			prefixed "$t" &
			weight[$!]=$w used=$((used + w))
			unset "queue[$i]"
		done
		[ ${#weight[@]} -eq 0 ] && break
		done=
		wait -n -p done "${!weight[@]}"
		# Interrupted (Ctrl-C reached the targets too): the final wait.
		[ -n "$done" ] || break
		used=$((used - ${weight[$done]})); unset "weight[$done]"
		failed && queue=()
	done
}

# The machine's load every 30 s, for the budget: the time, the 1-minute
# load average, and /proc/stat's busy and idle CPU ticks (the CPU used
# between two lines is the difference of their busy ticks).
(
	trap 'kill $nap 2>/dev/null; exit 0' TERM
	while :; do
		echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg) $(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $5 + $6}' /proc/stat)"
		sleep 30 & nap=$!
		wait $nap
	done > "$artifacts/make-test/load.txt"
) &
sampler=$!

bgs=() pooled=()
for group in "$@" end; do
	if [[ $group == *:* ]]; then
		pooled+=("$group")
		continue
	fi
	if [ ${#pooled[@]} -gt 0 ]; then
		pool "${pooled[@]}"
		pooled=()
		failed && break
	fi
	case $group in
	end) ;;
	*@) prefixed "${group%@}" & bgs+=($!) ;;
	wait) wait "${bgs[@]}"; bgs=() ;;
	*+*)
		pids=()
		for t in ${group//+/ }; do prefixed "$t" & pids+=($!); done
		wait "${pids[@]}" ;;
	*) logged "$group" ;;
	esac
	failed && break
done
kill "$sampler"
wait

echo
echo "make test: each target's time ($times)"
cat "$times"
# A failed target's error lines, last, where a CI system that keeps only
# the end of the output still shows why: with them the lines an error
# quotes from a command (kind's kubeadm), indented under "its last output
# lines:", the message indented under each FAILED spec of the summary,
# whatever its words, what a cluster's teardown says of causes a spec
# cannot see (a machine that did not follow its instance, a manager that
# restarted), and the CLI's one-line error, whatever its words
# (e2e-upstream's verdict).
for t in $(awk '/FAILED/ {print $1}' "$times"); do
	echo
	echo "$t FAILED; its error lines (all of its output: $artifacts/make-test/$t.log):"
	awk '/its last output lines:|^FAILED / { print; quoted = 1; next } quoted && /^[[:space:]]/ { print; next } { quoted = 0 }
		/FAIL|[Ee]rror|failed|refused|timed out|cannot|panic|did not follow|gave up|restarted|\*\*\*|^ccm-harness: / && !/^ok / { print }' \
		"$artifacts/make-test/$t.log" | tail -24 | cut -c1-400
done
! failed
