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
	"context"
	"errors"
	"sync"
	"time"
)

// Group holds the processes of one cluster so they can be stopped together,
// in the reverse of the order they started.
type Group struct {
	// Detached processes outlive the harness; see Start.
	Detached bool
	// OnChange, if set, is called with the records of the running processes
	// whenever one starts or stops, so a state file can follow them.
	OnChange func([]Record)

	mu    sync.Mutex
	procs []*Process
}

// Start starts spec as a member of the group.
func (g *Group) Start(ctx context.Context, spec Spec) (*Process, error) {
	p, err := Start(ctx, spec, g.Detached)
	if err != nil {
		return nil, err
	}
	// A member started again by itself (Spec.RestartWhen) has a new PID
	// for the records.
	p.mu.Lock()
	p.onRestart = g.changed
	p.mu.Unlock()
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.mu.Unlock()
	g.changed()
	return p, nil
}

// Records lists the members.
func (g *Group) Records() []Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Record, 0, len(g.procs))
	for _, p := range g.procs {
		out = append(out, p.Record())
	}
	return out
}

// Stop stops one member and forgets it.
func (g *Group) Stop(name string, grace time.Duration) {
	g.mu.Lock()
	var target *Process
	kept := g.procs[:0]
	for _, p := range g.procs {
		if p.Name() == name && target == nil {
			target = p
			continue
		}
		kept = append(kept, p)
	}
	g.procs = kept
	g.mu.Unlock()
	if target != nil {
		_ = target.Stop(grace)
		g.changed()
	}
}

// StopAll stops every member, last started first.
func (g *Group) StopAll(grace time.Duration) {
	g.mu.Lock()
	procs := g.procs
	g.procs = nil
	g.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		_ = procs[i].Stop(grace)
	}
	g.changed()
}

func (g *Group) changed() {
	if g.OnChange != nil {
		g.OnChange(g.Records())
	}
}

// Restart restarts a member with its spec and waits until it is ready.
func (g *Group) Restart(ctx context.Context, p *Process, grace time.Duration) error {
	err := p.Restart(ctx, grace)
	g.changed()
	return err
}

// Dead reports members that exited although nobody stopped them, quoting
// their logs: a crashed CCM explains many failures better than a timeout.
func (g *Group) Dead() error {
	g.mu.Lock()
	procs := append([]*Process(nil), g.procs...)
	g.mu.Unlock()
	var errs []error
	for _, p := range procs {
		if err := p.died(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
