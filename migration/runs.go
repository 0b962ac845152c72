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

package migration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Run is one process running one controller: from the instant its log
// says it started the controller to the instant the process was stopped
// (ToMs -1: it still ran when the recording ended). Runs, not samples,
// decide whether two processes ran a controller at once: an overlap of
// any length is a conflict.
type Run struct {
	Process    string `json:"process"`
	Controller string `json:"controller"`
	FromMs     int64  `json:"fromMs"`
	ToMs       int64  `json:"toMs"`
}

// klogLine is a klog header (severity, month and day, time to the
// microsecond, thread, file:line) and the message after it.
var klogLine = regexp.MustCompile(`^[IWEF](\d{2})(\d{2}) (\d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^\]]*\] (.*)$`)

// started are the messages with which the managers say they started a
// controller: k8s.io/cloud-provider's app (every CCM: `Started
// "service-lb-controller"`), kube-controller-manager up to v1.35
// (`"Started controller" controller="service-lb-controller"`) and from
// v1.36 (`"Controller starting..." controller="garbage-collector-
// controller"`, at --v=1 and up, as the harness runs it).
var started = []*regexp.Regexp{
	regexp.MustCompile(`^Started "([^"]+)"$`),
	regexp.MustCompile(`^"Started controller" controller="([^"]+)"`),
	regexp.MustCompile(`^"Controller starting\.\.\." controller="([^"]+)"`),
}

// terminated is how kube-controller-manager from v1.36 says one controller
// stopped.
var terminated = regexp.MustCompile(`^"Controller terminated" controller="([^"]+)"`)

// lost is how a manager says it lost a lease, just before it exits
// (k8s.io/cloud-provider's app: "leaderelection lost"; kube-controller-
// manager v1.37: "leaderelection lost/stopped", then up to klog's flush
// timeout before the process is gone): every controller it ran stops
// there. Missing v1.37's wording, a manager that lost its lease under an
// overloaded API server was taken to run its controllers until its exit,
// beside the next leader: a conflict that was not.
var lost = regexp.MustCompile(`^"(migration )?leaderelection lost(/stopped)?"`)

// logEvent is what a manager's log line says of its controllers: that it
// started one, stopped one, or stops them all.
type logEvent struct {
	at         time.Time
	controller string // "" for a stop of all
	stop       bool
}

// parseLine reads a controller start or a lost lease from a manager's log
// line, at the instant the line's header gives (klog writes local time and
// no year: the year is near's, the instant the nearest to near).
func parseLine(line string, near time.Time) (logEvent, bool) {
	m := klogLine.FindStringSubmatch(line)
	if m == nil {
		return logEvent{}, false
	}
	var ev logEvent
	for _, re := range started {
		if c := re.FindStringSubmatch(m[4]); c != nil {
			ev.controller = c[1]
			break
		}
	}
	if c := terminated.FindStringSubmatch(m[4]); c != nil {
		ev.controller, ev.stop = c[1], true
	}
	if ev.controller == "" {
		if !lost.MatchString(m[4]) {
			return logEvent{}, false
		}
		ev.stop = true
	}
	at, err := time.ParseInLocation("2006 0102 15:04:05.000000", fmt.Sprintf("%d %s%s %s", near.Year(), m[1], m[2], m[3]), near.Location())
	if err != nil {
		return logEvent{}, false
	}
	// Across New Year the line's year is another than near's.
	if d := at.Sub(near); d > 180*24*time.Hour {
		at = at.AddDate(-1, 0, 0)
	} else if d < -180*24*time.Hour {
		at = at.AddDate(1, 0, 0)
	}
	ev.at = at
	return ev, true
}

// logFollower reads a log's new whole lines each time it is asked.
type logFollower struct {
	path string
	off  int64
}

// lines returns the whole lines written since the last call; a line still
// being written waits for the next.
func (f *logFollower) lines() ([]string, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if _, err := file.Seek(f.off, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	f.off += int64(end + 1)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data[:end+1]))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

// conflicts are the overlaps of two processes' runs of one controller.
func (t *Timeline) conflicts() []Violation {
	end := t.EndMs
	to := func(r Run) int64 {
		if r.ToMs < 0 {
			return end
		}
		return r.ToMs
	}
	var out []Violation
	for i, a := range t.Runs {
		for _, b := range t.Runs[i+1:] {
			if a.Controller != b.Controller || a.Process == b.Process {
				continue
			}
			from, until := max(a.FromMs, b.FromMs), min(to(a), to(b))
			if from >= until {
				continue
			}
			procs := []string{a.Process, b.Process}
			sort.Strings(procs)
			out = append(out, t.describeConflict(Violation{Kind: "conflict", Controller: a.Controller, Processes: procs, FromMs: from, ToMs: until}))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FromMs < out[j].FromMs })
	return out
}

// unrecorded are the controllers a process ran, as its /healthz showed,
// whose start its log never said: the runs, which decide conflicts, would
// miss them, so the verdict on them cannot be had.
func (t *Timeline) unrecorded() []Violation {
	var out []Violation
	seen := map[string]bool{}
	for _, s := range t.Samples {
		for p, ctrls := range s.Running {
			for _, c := range ctrls {
				if !slices.Contains(t.Migrated, c) || seen[p+"\x00"+c] {
					continue
				}
				seen[p+"\x00"+c] = true
				if slices.ContainsFunc(t.Runs, func(r Run) bool { return r.Process == p && r.Controller == c }) {
					continue
				}
				out = append(out, Violation{Kind: "unrecorded", Controller: c, Processes: []string{p}, FromMs: s.AtMs, ToMs: s.AtMs,
					Detail: fmt.Sprintf("%s ran %s (its /healthz says so at %s), and its log says nowhere that it started it (no line %s): "+
						"whether it ran alongside another cannot be judged; run it with klog's text format", t.describe(p), c, ms(s.AtMs), startedForms())})
			}
		}
	}
	return out
}

func startedForms() string {
	var forms []string
	for _, re := range started {
		form := strings.TrimSuffix(strings.TrimPrefix(re.String(), "^"), "$")
		forms = append(forms, "`"+strings.ReplaceAll(form, `([^"]+)`, "<controller>")+"`")
	}
	return strings.Join(forms, " or ")
}
