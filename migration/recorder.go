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
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"sigs.k8s.io/ccm-harness/cluster"
)

// Main leases of the two components, in kube-system.
const (
	KCMLease = "kube-controller-manager"
	CCMLease = "cloud-controller-manager"
)

// Recorder records when each watched manager starts each controller (its
// log's lines, at their own instants) and stops it (the process stopped),
// and samples which controllers each runs and who holds the leases, until
// stopped.
type Recorder struct {
	client kubernetes.Interface
	every  time.Duration
	leases []string

	mu       sync.Mutex
	managers map[string]cluster.Manager
	logs     map[string]*logFollower
	timeline Timeline
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewRecorder samples every interval; migrated are the controllers under
// the migration lease called leaderName.
func NewRecorder(client kubernetes.Interface, every time.Duration, leaderName string, migrated []string) *Recorder {
	return &Recorder{
		client:   client,
		every:    every,
		leases:   []string{KCMLease, CCMLease, leaderName},
		managers: map[string]cluster.Manager{},
		logs:     map[string]*logFollower{},
		timeline: Timeline{LeaderName: leaderName, Migrated: migrated, EveryMs: every.Milliseconds()},
	}
}

// Watch adds a manager to the samples.
func (r *Recorder) Watch(m cluster.Manager) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.managers[m.Name()] = m
	r.logs[m.Name()] = &logFollower{path: m.Log()}
	spec := m.Spec()
	r.timeline.Processes = append(r.timeline.Processes, Process{Name: m.Name(), Kind: spec.Kind, Binary: spec.Binary.String(), CloudProvider: spec.CloudProvider, Migration: spec.Migrating()})
}

// Forget stops sampling a manager that was stopped, and ends its runs
// now: it has exited, having written all it will.
func (r *Recorder) Forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.readLogLocked(name)
	r.endRunsLocked(name, "", r.sinceStart())
	delete(r.managers, name)
	delete(r.logs, name)
}

// endRunsLocked ends the process's open runs of controller (every one,
// if "") at ms.
func (r *Recorder) endRunsLocked(name, controller string, ms int64) {
	for i := range r.timeline.Runs {
		if run := &r.timeline.Runs[i]; run.Process == name && run.ToMs < 0 && (controller == "" || run.Controller == controller) {
			run.ToMs = max(ms, run.FromMs)
		}
	}
}

// readLogLocked records the controllers the manager's log says it started
// since the last read. A controller it starts again (a restart) while a
// run of it is open is the same run.
func (r *Recorder) readLogLocked(name string) {
	f := r.logs[name]
	if f == nil {
		return
	}
	lines, err := f.lines()
	if err != nil {
		return // not written yet: the next read has it
	}
	for _, l := range lines {
		ev, ok := parseLine(l, time.Now())
		if !ok {
			continue
		}
		// klog's microseconds against a start in nanoseconds: rounded,
		// not cut, so a line is not put a millisecond early.
		at := ev.at.Sub(r.timeline.Start).Round(time.Millisecond).Milliseconds()
		if ev.stop {
			r.endRunsLocked(name, ev.controller, at)
			continue
		}
		if slices.ContainsFunc(r.timeline.Runs, func(run Run) bool {
			return run.Process == name && run.Controller == ev.controller && run.ToMs < 0
		}) {
			continue
		}
		r.timeline.Runs = append(r.timeline.Runs, Run{Process: name, Controller: ev.controller, FromMs: at, ToMs: -1})
	}
}

// Mark notes an event on the timeline, such as a member being replaced.
func (r *Recorder) Mark(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timeline.Events = append(r.timeline.Events, Event{AtMs: r.sinceStart(), Text: fmt.Sprintf(format, args...)})
}

func (r *Recorder) sinceStart() int64 {
	if r.timeline.Start.IsZero() {
		return 0
	}
	return time.Since(r.timeline.Start).Milliseconds()
}

// Start samples in the background until Stop.
func (r *Recorder) Start(ctx context.Context) {
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	r.mu.Lock()
	r.timeline.Start = time.Now()
	r.mu.Unlock()
	go func() {
		defer close(r.done)
		tick := time.NewTicker(r.every)
		defer tick.Stop()
		for {
			r.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// Stop ends sampling and returns the timeline.
func (r *Recorder) Stop() *Timeline {
	if r.cancel != nil {
		r.cancel()
		<-r.done
	}
	r.mu.Lock()
	for name := range r.logs {
		r.readLogLocked(name)
	}
	r.timeline.EndMs = r.sinceStart()
	r.mu.Unlock()
	return r.Timeline()
}

// Timeline is a copy of what was recorded so far.
func (r *Recorder) Timeline() *Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.timeline
	t.Samples = append([]Sample(nil), t.Samples...)
	t.Events = append([]Event(nil), t.Events...)
	t.Processes = append([]Process(nil), t.Processes...)
	t.Runs = append([]Run(nil), t.Runs...)
	if t.EndMs == 0 {
		t.EndMs = r.sinceStart()
	}
	return &t
}

// Owners are the processes that ran controller at the latest sample.
func (r *Recorder) Owners(controller string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.timeline.Samples) == 0 {
		return nil
	}
	return r.timeline.Samples[len(r.timeline.Samples)-1].owners(controller)
}

// sample asks every manager at once, each within the interval, so a hung
// one does not stretch the others' sampling.
func (r *Recorder) sample(ctx context.Context) {
	r.mu.Lock()
	managers := make([]cluster.Manager, 0, len(r.managers))
	for _, m := range r.managers {
		managers = append(managers, m)
	}
	r.mu.Unlock()
	at := time.Since(r.timeline.Start)
	s := Sample{AtMs: at.Milliseconds(), Running: map[string][]string{}, Leases: map[string]Lease{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	qctx, cancel := context.WithTimeout(ctx, r.every)
	defer cancel()
	for _, m := range managers {
		wg.Go(func() {
			ctrls, err := m.Controllers(qctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				s.Unreachable = append(s.Unreachable, m.Name())
				return
			}
			sort.Strings(ctrls)
			s.Running[m.Name()] = append([]string{}, ctrls...) // [] rather than null in the JSON
		})
	}
	wg.Go(func() {
		for _, name := range r.leases {
			l, err := r.client.CoordinationV1().Leases("kube-system").Get(qctx, name, metav1.GetOptions{})
			if err != nil {
				continue // not taken yet, or the API was slow: no claim either way
			}
			lease := leaseOf(l, time.Now())
			mu.Lock()
			s.Leases[name] = lease
			mu.Unlock()
		}
	})
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	sort.Strings(s.Unreachable)
	r.mu.Lock()
	r.timeline.Samples = append(r.timeline.Samples, s)
	for name := range r.logs {
		r.readLogLocked(name)
	}
	r.mu.Unlock()
}

// leaseOf is who holds l and whether the hold is live: renewed within its
// duration. A dead holder's lease names it until another takes over.
func leaseOf(l *coordinationv1.Lease, now time.Time) Lease {
	out := Lease{}
	if l.Spec.HolderIdentity != nil {
		out.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
		out.Live = now.Sub(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
	}
	return out
}
