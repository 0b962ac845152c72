/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package maketest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeMake stands for make: it logs "start T" and "end T" to $LOG, sleeps
// the tenths of a second the target's name ends in (slow3: 0.3 s), and
// fails a target named bad, saying so as the CLI would.
const fakeMake = `#!/bin/bash
t=${@: -1}
echo "start $t" >> "$LOG"
n=${t##*[a-z]}
sleep "0.${n:-1}"
echo "end $t" >> "$LOG"
if [ "$t" = bad ]; then echo "ccm-harness: bad broke"; exit 2; fi
`

// run runs the runner with the fake make on targets; it returns the log
// of starts and ends, the runner's output and its error.
func run(t *testing.T, capacity int, targets ...string) (events []string, out string, err error) {
	t.Helper()
	dir := t.TempDir()
	mk := filepath.Join(dir, "make")
	if err := os.WriteFile(mk, []byte(fakeMake), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "log")
	cmd := exec.Command("bash", append([]string{"../make-test.sh", filepath.Join(dir, "artifacts"), strconv.Itoa(capacity)}, targets...)...)
	cmd.Env = append(os.Environ(), "MAKE="+mk, "LOG="+log)
	b, err := cmd.CombinedOutput()
	f, ferr := os.Open(log)
	if ferr != nil {
		t.Fatalf("no target ran: %v; output:\n%s", ferr, b)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		events = append(events, sc.Text())
	}
	return events, string(b), err
}

func TestPoolKeepsWithinCapacity(t *testing.T) {
	weights := map[string]int{"big5": 3, "mid4": 2, "a2": 1, "b2": 2, "c1": 1, "d1": 1}
	targets := []string{"first1"}
	for _, n := range []string{"big5", "mid4", "a2", "b2", "c1", "d1"} {
		targets = append(targets, n+":"+strconv.Itoa(weights[n]))
	}
	targets = append(targets, "last1")
	events, out, err := run(t, 4, targets...)
	if err != nil {
		t.Fatalf("the runner failed: %v\n%s", err, out)
	}
	used, most := 0, 0
	started := map[string]bool{}
	for _, e := range events {
		what, name, _ := strings.Cut(e, " ")
		switch {
		case name == "first1" || name == "last1":
			if used != 0 {
				t.Errorf("%s while %d of the pool ran: %v", e, used, events)
			}
		case what == "start":
			used += weights[name]
			started[name] = true
		default:
			used -= weights[name]
		}
		most = max(most, used)
		if used > 4 {
			t.Errorf("after %q the pool ran %d, over its capacity 4: %v", e, used, events)
		}
	}
	if most < 3 {
		t.Errorf("the pool never ran more than %d of its capacity 4 at once: %v", most, events)
	}
	for n := range weights {
		if !started[n] {
			t.Errorf("%s never ran: %v", n, events)
		}
	}
	if events[0] != "start first1" || events[len(events)-1] != "end last1" {
		t.Errorf("first1 must run first and last1 last: %v", events)
	}
	// big5 and mid4 do not fit together; a2, listed after mid4, fits
	// beside big5 but not beside both: big5 runs alone until it ends.
	var first []string
	for _, e := range events[2:] {
		if strings.HasPrefix(e, "end ") {
			break
		}
		first = append(first, strings.TrimPrefix(e, "start "))
	}
	if !slices.Equal(first, []string{"big5"}) {
		t.Errorf("the pool started %v at first, want big5 alone (mid4 waits for room, and a2 may not pass it): %v", first, events)
	}
	if i, j := slices.Index(events, "start mid4"), slices.Index(events, "start a2"); i < 0 || j < 0 || j < slices.Index(events, "end big5") {
		t.Errorf("mid4 and a2 start once big5 has ended: %v", events)
	}
}

// TestPoolKeepsRoomForTheWaiting: light targets listed after a heavy one
// do not take every place that frees, leaving the heavy one to the end.
func TestPoolKeepsRoomForTheWaiting(t *testing.T) {
	events, out, err := run(t, 4, "long6:2", "heavy1:3", "l3:1", "m3:1", "n3:1", "o3:1")
	if err != nil {
		t.Fatalf("the runner failed: %v\n%s", err, out)
	}
	// While long6 runs, heavy1 waits for room, and none listed after it
	// takes that room (each would fit beside long6 alone).
	ended := slices.Index(events, "end long6")
	for _, l := range []string{"l3", "m3", "n3", "o3"} {
		if i := slices.Index(events, "start "+l); i < ended {
			t.Errorf("%s started beside long6, while heavy1, listed before it, waited for room: %v", l, events)
		}
	}
}

func TestPoolStopsAtFirstFailure(t *testing.T) {
	events, out, err := run(t, 2, "bad:1", "slow3:1", "later1:2", "after1")
	if err == nil {
		t.Fatalf("the runner passed with a failed target:\n%s", out)
	}
	for _, e := range events {
		if strings.HasSuffix(e, "later1") || strings.HasSuffix(e, "after1") {
			t.Errorf("%q: nothing starts once a target has failed: %v", e, events)
		}
	}
	if !strings.Contains(strings.Join(events, ","), "end slow3") {
		t.Errorf("a running target is waited for, not abandoned: %v", events)
	}
	if !strings.Contains(out, "bad FAILED; its error lines") || !strings.Contains(out, "ccm-harness: bad broke") {
		t.Errorf("the output does not name the failed target and its CLI error:\n%s", out)
	}
}
