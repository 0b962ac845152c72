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

package process

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Record is what a detached cluster's state file keeps of each process, so
// that `down` in a later harness process can stop it.
type Record struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// StartTicks is the process's start time in clock ticks since boot, so a
	// recycled PID is never mistaken for ours.
	StartTicks uint64 `json:"startTicks"`
	Log        string `json:"log"`
	// Cleanup is Spec.Cleanup, run by Stop whether the process is alive
	// or not.
	Cleanup []string `json:"cleanup,omitempty"`
}

// Alive reports whether the recorded process is still the one running.
func (r Record) Alive() bool {
	return r.PID > 0 && startTicks(r.PID) == r.StartTicks && r.StartTicks != 0
}

// Stop ends the recorded process group if it is still ours.
func (r Record) Stop(grace time.Duration) {
	if r.Alive() {
		stopGroup(r.PID, nil, grace)
	}
	runCleanup(r.Cleanup)
}

// startTicks reads field 22 of /proc/<pid>/stat; 0 if the process is gone
// or a zombie.
func startTicks(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields after it start
	// after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return 0 // exited, not yet reaped: not running
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}
