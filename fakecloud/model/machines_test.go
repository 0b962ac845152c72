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
	"reflect"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// TestMachinesApart: a machine slow to follow holds back its own later
// changes, in order, but not another machine's.
func TestMachinesApart(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	told := map[string][]api.InstanceState{}
	fastDone := make(chan struct{})
	first := true
	m := newMachines(func(name string, state api.InstanceState) {
		if name == "slow" && first {
			first = false // only this machine's goroutine reads it
			<-release     // a container whose stop is retried for minutes
		}
		mu.Lock()
		told[name] = append(told[name], state)
		mu.Unlock()
		if name == "fast" {
			close(fastDone)
		}
	})
	m.send("slow", api.StateStopped)
	m.send("slow", api.StateRunning)
	m.send("fast", api.StateTerminated)
	select {
	case <-fastDone:
	case <-time.After(5 * time.Second):
		t.Fatal("machine fast was not told of its change while machine slow was still following its own")
	}
	close(release)
	m.close()
	m.send("slow", api.StateTerminated) // after close: dropped
	want := map[string][]api.InstanceState{"slow": {api.StateStopped, api.StateRunning}, "fast": {api.StateTerminated}}
	if !reflect.DeepEqual(told, want) {
		t.Errorf("told %v, want %v", told, want)
	}
}

// TestMachinesOneAtATime: changes sent while a machine is being told are
// told after, in order, never two at once.
func TestMachinesOneAtATime(t *testing.T) {
	var mu sync.Mutex
	var told []api.InstanceState
	busy, overlapped := 0, false
	m := newMachines(func(name string, state api.InstanceState) {
		mu.Lock()
		busy++
		overlapped = overlapped || busy > 1
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
		busy--
		told = append(told, state)
		mu.Unlock()
	})
	var sent []api.InstanceState
	for i := 0; i < 500; i++ {
		state := []api.InstanceState{api.StateStopped, api.StateRunning}[i%2]
		sent = append(sent, state)
		m.send("a", state)
		if i%7 == 0 {
			time.Sleep(time.Duration(i%5) * 20 * time.Microsecond)
		}
	}
	m.close()
	if overlapped {
		t.Error("machine a was told two changes at once")
	}
	if !reflect.DeepEqual(told, sent) {
		t.Errorf("told %d changes, not in the order of the %d sent", len(told), len(sent))
	}
}
