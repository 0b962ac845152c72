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

package cluster

import (
	"sync"
	"time"
)

// Steps are a bring-up's steps as a runtime does them: each timed, said
// (one line: its name and seconds) and kept for Cluster.Steps. The
// runtimes share it so that their step lines and bringup.txt read alike.
type Steps struct {
	// Logf says each step done; may be nil.
	Logf func(format string, args ...any)
	done []Step
}

// Do runs fn as step name; a step that fails is not recorded.
func (s *Steps) Do(name string, fn func() error) error {
	start := time.Now()
	if err := fn(); err != nil {
		return err
	}
	d := time.Since(start)
	s.done = append(s.done, Step{Name: name, Duration: d})
	if s.Logf != nil {
		s.Logf("%-28s %6.2fs", name, d.Seconds())
	}
	return nil
}

// Total ends the bring-up: the steps done, and "total", from since to now.
func (s *Steps) Total(since time.Time) []Step {
	return append(s.done, Step{Name: "total", Duration: time.Since(since)})
}

// Running are the clusters a runtime brought up in this process, by name:
// Down tears such a cluster down itself, not from its state folder.
type Running[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// Add records the cluster name as up.
func (r *Running[T]) Add(name string, in T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]T{}
	}
	r.m[name] = in
}

// Take forgets the cluster name and returns it, if this process brought
// it up.
func (r *Running[T]) Take(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in, ok := r.m[name]
	delete(r.m, name)
	return in, ok
}
