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

// Package bench measures the harness: bring-up against kwokctl's, the
// default suite's wall time, and how long a CCM takes to initialize
// hundreds of nodes joining at once, with each process's CPU and memory
// beside it. `make bench` runs it; the figures are Go benchmark lines, for
// benchstat.
package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/ccm-harness/internal/process"
)

// usage is what /proc says a process used: CPU seconds so far and its
// peak resident memory.
type usage struct {
	cpu    float64 // seconds, user and system
	peakMB float64
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// usageOf reads /proc/<pid>; 0 is this process.
func usageOf(pid int) (usage, error) {
	dir := "/proc/self"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return usage{}, err
	}
	// The command name may hold spaces; fields start after its ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return usage{}, fmt.Errorf("%s/stat: short", dir)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	u := usage{cpu: (utime + stime) / clockTicks}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return usage{}, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			u.peakMB = kb / 1024
		}
	}
	return u, nil
}

// machineCPU is the machine's CPU time so far, from /proc/stat's
// aggregate line, in clock ticks summed over all cores.
type machineCPU struct{ busy, total float64 }

func readMachineCPU() (machineCPU, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, err
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	return parseMachineCPU(line)
}

// parseMachineCPU reads /proc/stat's aggregate line: cpu user nice system
// idle iowait irq softirq steal [guest guest_nice]. Guest time is already
// counted in user, so it is left out.
func parseMachineCPU(line string) (machineCPU, error) {
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return machineCPU{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var m machineCPU
	for i, f := range fields[1:9] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("/proc/stat: %v", err)
		}
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	return m, nil
}

// busyPercent is the share of all cores' time that was busy between two
// readings.
func busyPercent(before, after machineCPU) float64 {
	if after.total <= before.total {
		return 0
	}
	return 100 * (after.busy - before.busy) / (after.total - before.total)
}

// rssMB is a process's resident memory now.
func rssMB(pid int) float64 {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// descendants are pid and every process below it now.
func descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		parent, _ := strconv.Atoi(fields[1])
		children[parent] = append(children[parent], child)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// clusterProcesses are the processes of the local clusters under a state
// root, from the state files the local runtime keeps for `down`.
func clusterProcesses(stateRoot string) []process.Record {
	files, _ := filepath.Glob(filepath.Join(stateRoot, "*", "state.json"))
	var out []process.Record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var st struct {
			Processes []process.Record `json:"processes"`
		}
		if json.Unmarshal(data, &st) == nil {
			out = append(out, st.Processes...)
		}
	}
	return out
}
