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

import "sigs.k8s.io/ccm-harness/fakecloud/api"

// Nova's servers, and Neutron's ports, are the cloud's live instances:
// what OpenStack's fronts ask of them, each under the lock and answered
// with copies.

// LiveInstances are the instances that are not terminated, copied.
func (s *Cloud) LiveInstances() []api.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveInstancesLocked()
}

// AboutServer is the fault matcher of an OpenStack call about the instance
// id: a fault's Instance may give its ID or name, once an instance has that
// ID (unlike AboutInstance, not a pattern of the ID asked for alone). It
// runs under the lock, as ApplyFault asks it.
func (s *Cloud) AboutServer(id string) func(ref string) bool {
	return func(ref string) bool {
		inst := s.instanceByIDLocked(id)
		return inst != nil && RefersTo(ref, inst)
	}
}

// SetServerState moves the live instance id to state to (a stop, a start,
// a delete): KindNotFound for an instance terminated or never had,
// KindConflict for one already in state to.
func (s *Cloud) SetServerState(id string, to api.InstanceState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst := s.instanceByIDLocked(id)
	if inst == nil || inst.State == api.StateTerminated {
		return Errorf(KindNotFound, "instance %s not found", id)
	}
	if inst.State == to {
		return Errorf(KindConflict, "instance %s is already %s", id, to)
	}
	return saveFailed(s.setStateLocked(inst, to))
}
