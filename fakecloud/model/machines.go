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

package model

import (
	"sync"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// machines carries instances' state changes to Config.Machines: in order
// for each machine, and apart for different ones, so that a machine slow
// to follow (a container whose stop is retried for minutes) holds back
// only its own changes, not another machine's stop that a spec is waiting
// on, as one queue for all did.
type machines struct {
	tell func(name string, state api.InstanceState)

	mu sync.Mutex
	// pending are the changes not yet told, by machine; a machine with
	// changes pending has a goroutine telling them.
	pending map[string][]api.InstanceState
	closed  bool
	telling sync.WaitGroup
}

func newMachines(tell func(name string, state api.InstanceState)) *machines {
	return &machines{tell: tell, pending: map[string][]api.InstanceState{}}
}

// send queues machine name's change to state; it never waits for the
// machine. Nothing is sent after close.
func (m *machines) send(name string, state api.InstanceState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	queued := len(m.pending[name]) > 0
	m.pending[name] = append(m.pending[name], state)
	if !queued {
		m.telling.Add(1)
		go m.drain(name)
	}
}

// drain tells machine name its changes, one at a time, until none is left.
// A change is taken off the queue only once told, and the queue's end is
// seen in the same hold of the lock: send, meanwhile, sees the machine busy
// and only queues, so one goroutine at a time tells a machine.
func (m *machines) drain(name string) {
	defer m.telling.Done()
	for {
		m.mu.Lock()
		state := m.pending[name][0]
		m.mu.Unlock()
		m.tell(name, state)
		m.mu.Lock()
		m.pending[name] = m.pending[name][1:]
		done := len(m.pending[name]) == 0
		if done {
			delete(m.pending, name)
		}
		m.mu.Unlock()
		if done {
			return
		}
	}
}

// close waits until every change sent has been told.
func (m *machines) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.telling.Wait()
}
