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

package bench

import (
	"testing"
	"time"
)

// One core kept spinning shows up in the machine's busy share, and the
// share stays a share.
func TestBusyPercent(t *testing.T) {
	before, err := readMachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := readMachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	if got := busyPercent(before, after); got <= 0 || got > 100 {
		t.Fatalf("busy %.1f%% while a core spun for 300 ms: want within (0, 100]", got)
	}
	if got := busyPercent(after, after); got != 0 {
		t.Fatalf("busy %.1f%% over no time: want 0", got)
	}
}

// Idle and iowait are the only time not busy; guest time, already in
// user, is not counted twice.
func TestParseMachineCPU(t *testing.T) {
	before, err := parseMachineCPU("cpu  100 10 50 700 40 20 30 50 90 5")
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseMachineCPU("cpu  400 10 150 800 40 20 30 50 290 5")
	if err != nil {
		t.Fatal(err)
	}
	if got := busyPercent(before, after); got != 80 {
		t.Fatalf("busy %.1f%% for 400 busy ticks of 500: want 80", got)
	}
	if _, err := parseMachineCPU("intr 1 2 3"); err == nil {
		t.Fatal("a line that is not the aggregate cpu line was read without error")
	}
}
