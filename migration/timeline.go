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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Timeline is what a Recorder saw; times are milliseconds from Start.
type Timeline struct {
	Start      time.Time `json:"start"`
	EveryMs    int64     `json:"everyMs"`
	LeaderName string    `json:"leaderName"`
	// Migrated are the controllers the configuration moves.
	Migrated  []string  `json:"migrated"`
	Processes []Process `json:"processes"`
	Samples   []Sample  `json:"samples"`
	Events    []Event   `json:"events"`
	// Runs are when each process started and stopped each controller.
	Runs []Run `json:"runs"`
	// EndMs is when the recording ended.
	EndMs int64 `json:"endMs"`
}

// Process is a manager the recorder watched.
type Process struct {
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	Binary        string `json:"binary"`
	CloudProvider string `json:"cloudProvider,omitempty"`
	Migration     bool   `json:"leaderMigration"`
}

// Sample is one look at every watched manager and the leases.
type Sample struct {
	AtMs int64 `json:"atMs"`
	// Running maps each process that answered to the controllers it ran.
	Running map[string][]string `json:"running"`
	// Unreachable processes did not answer within the interval.
	Unreachable []string         `json:"unreachable,omitempty"`
	Leases      map[string]Lease `json:"leases"`
}

// Lease is a lease's holder, and whether it renewed within its duration.
type Lease struct {
	Holder string `json:"holder"`
	Live   bool   `json:"live"`
}

// Event is a step of the scenario, such as a member being replaced.
type Event struct {
	AtMs int64  `json:"atMs"`
	Text string `json:"text"`
}

func (s Sample) owners(controller string) []string {
	var out []string
	for p, ctrls := range s.Running {
		if slices.Contains(ctrls, controller) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Bounds are what the invariants allow.
type Bounds struct {
	// Unowned is how long a migrated controller may run nowhere: a dead
	// leader's lease must expire and a standby take it and start the
	// controller.
	Unowned time.Duration
	// Tolerance is how long lease holders may disagree, since the main and
	// migration leases are renewed at different instants.
	Tolerance time.Duration
}

// BoundsFor derives the bounds from the managers' leader-election
// settings: a standby waits out the lease, retries, then takes the
// migration lease after the main one (a retry more), and needs startup
// time to run the controllers.
func BoundsFor(lease, retry, startup time.Duration) Bounds {
	return Bounds{Unowned: lease + 2*retry + startup, Tolerance: 2 * retry}
}

// Violation is a broken invariant over a window of the timeline.
type Violation struct {
	Kind       string   `json:"kind"` // conflict, unowned, lease
	Controller string   `json:"controller,omitempty"`
	Processes  []string `json:"processes,omitempty"`
	FromMs     int64    `json:"fromMs"`
	ToMs       int64    `json:"toMs"`
	Detail     string   `json:"detail"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s from %s to %s: %s", v.Kind, ms(v.FromMs), ms(v.ToMs), v.Detail)
}

func ms(n int64) string {
	return (time.Duration(n) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// Check returns every broken invariant:
//   - conflict: a controller ran in two processes at once, for any time:
//     their runs overlap (a handover cannot overlap: the new holder waits
//     for the old lease to expire, and a holder that fails to renew exits);
//   - unrecorded: a process ran a migrated controller whose start its log
//     does not say, so the runs cannot judge it;
//   - unowned: a migrated controller, once running, ran nowhere for longer
//     than b.Unowned;
//   - lease: the live migration lease was held, for longer than
//     b.Tolerance, by a process holding neither component's live main lease.
func (t *Timeline) Check(b Bounds) []Violation {
	var out []Violation
	out = append(out, t.conflicts()...)
	out = append(out, t.unrecorded()...)
	out = append(out, t.unowned(b.Unowned)...)
	out = append(out, t.leaseMismatch(b.Tolerance)...)
	return out
}

func (t *Timeline) describeConflict(v Violation) Violation {
	var who []string
	for _, p := range v.Processes {
		who = append(who, t.describe(p))
	}
	v.Detail = fmt.Sprintf("%s ran in %s at once, from %s to %s", v.Controller, strings.Join(who, " and "), ms(v.FromMs), ms(v.ToMs))
	return v
}

// describe names a process with what it is.
func (t *Timeline) describe(name string) string {
	for _, p := range t.Processes {
		if p.Name == name {
			return fmt.Sprintf("%s (%s)", name, p.Binary)
		}
	}
	return name
}

func (t *Timeline) unowned(bound time.Duration) []Violation {
	var out []Violation
	for _, c := range t.Migrated {
		owned := false
		var gapFrom int64 = -1
		end := func(to int64) {
			if gapFrom >= 0 && time.Duration(to-gapFrom)*time.Millisecond > bound {
				out = append(out, Violation{Kind: "unowned", Controller: c, FromMs: gapFrom, ToMs: to,
					Detail: fmt.Sprintf("%s ran in no process for %s, from %s to %s (bound %s)", c, ms(to-gapFrom), ms(gapFrom), ms(to), bound)})
			}
			gapFrom = -1
		}
		for _, s := range t.Samples {
			has := len(s.owners(c)) > 0
			switch {
			case has:
				owned = true
				end(s.AtMs)
			case owned && gapFrom < 0:
				gapFrom = s.AtMs
			}
		}
		if n := len(t.Samples); n > 0 {
			end(t.Samples[n-1].AtMs)
		}
		if !owned && len(t.Samples) > 0 {
			out = append(out, Violation{Kind: "unowned", Controller: c, FromMs: 0, ToMs: t.Samples[len(t.Samples)-1].AtMs,
				Detail: fmt.Sprintf("%s never ran in any process", c)})
		}
	}
	return out
}

func (t *Timeline) leaseMismatch(tolerance time.Duration) []Violation {
	var out []Violation
	var v *Violation
	flush := func() {
		if v != nil && time.Duration(v.ToMs-v.FromMs)*time.Millisecond > tolerance {
			out = append(out, *v)
		}
		v = nil
	}
	for _, s := range t.Samples {
		mig, ok := s.Leases[t.LeaderName]
		bad := ok && mig.Live && mig.Holder != ""
		for _, main := range []string{KCMLease, CCMLease} {
			if l, ok := s.Leases[main]; ok && l.Live && l.Holder == mig.Holder {
				bad = false
			}
		}
		if !bad {
			flush()
			continue
		}
		if v == nil {
			v = &Violation{Kind: "lease", FromMs: s.AtMs}
		}
		v.ToMs = s.AtMs
		v.Detail = fmt.Sprintf("migration lease %s held by %s, which holds neither main lease (%s: %s, %s: %s)",
			t.LeaderName, mig.Holder, KCMLease, s.Leases[KCMLease].Holder, CCMLease, s.Leases[CCMLease].Holder)
	}
	flush()
	return out
}

// controllers are every controller seen in any sample, sorted.
func (t *Timeline) controllers() []string {
	set := map[string]bool{}
	for _, s := range t.Samples {
		for _, ctrls := range s.Running {
			for _, c := range ctrls {
				set[c] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Write saves the timeline as timeline.json and timeline.svg in dir.
func (t *Timeline) Write(dir string, b Bounds) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(struct {
		*Timeline
		Bounds     map[string]string `json:"bounds"`
		Violations []Violation       `json:"violations"`
	}{t, map[string]string{"unowned": b.Unowned.String(), "tolerance": b.Tolerance.String()}, t.Check(b)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "timeline.json"), data, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "timeline.svg"))
	if err != nil {
		return err
	}
	if err := t.WriteSVG(f, b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
