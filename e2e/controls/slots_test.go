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

package controls

import (
	"flag"
	"sync"
	"testing"
)

// controlClusters is how many negative controls run at once, each on its
// cluster: on this 2-core machine, four keep the cores busy without a
// healthy CCM's step outlasting a control's shortened waits.
const controlClusters = 4

// slots hands out controlClusters places in the order they were asked
// for. go test's -parallel would bound the controls too, but it resumes
// paused tests in no set order, so that the longest control (a kind
// cluster's) could start last and run alone; make controls passes a
// -parallel above the number of controls, and this orders them.
//
// Below that (go test's default is the number of cores), go test resumes
// only some of the controls, and an ordered place could wait for ever on
// one it has not resumed: the places are then taken in go test's order.
type slots struct {
	mu      sync.Mutex
	free    int
	waiting []chan struct{}
	// unordered, when set, is the places, taken in any order.
	unordered chan struct{}
}

// newSlots is n places for controls controls.
func newSlots(n, controls int) *slots {
	if p := flag.Lookup("test.parallel"); p != nil && p.Value.(flag.Getter).Get().(int) <= controls {
		return &slots{unordered: make(chan struct{}, n)}
	}
	return &slots{free: n}
}

// ask queues a request, in the caller's order; the returned channel is
// closed when the slot is the caller's.
func (s *slots) ask() chan struct{} {
	if s.unordered != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	s.waiting = append(s.waiting, c)
	s.handOutLocked()
	return c
}

// take waits for the slot asked for with ask, and gives it back when t
// ends.
func (s *slots) take(t *testing.T, granted chan struct{}) {
	if s.unordered != nil {
		s.unordered <- struct{}{}
		t.Cleanup(func() { <-s.unordered })
		return
	}
	<-granted
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.free++
		s.handOutLocked()
	})
}

// drop gives back a place asked for by a control that does not run (one
// go test -run filters out), granted or still waiting: else the controls
// asked after it would wait for it for ever.
func (s *slots) drop(granted chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.waiting {
		if c == granted {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			return
		}
	}
	s.free++
	s.handOutLocked()
}

func (s *slots) handOutLocked() {
	for s.free > 0 && len(s.waiting) > 0 {
		close(s.waiting[0])
		s.waiting, s.free = s.waiting[1:], s.free-1
	}
}
