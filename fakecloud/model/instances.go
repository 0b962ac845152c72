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
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// DefaultInstanceType is the type of an instance created without one.
const DefaultInstanceType = "fake.medium"

// instanceByIDLocked is the instance with that ID, terminated or not, or
// nil.
func (s *Cloud) instanceByIDLocked(id string) *api.Instance {
	for _, inst := range s.st.Instances {
		if inst.ID == id {
			return inst
		}
	}
	return nil
}

// instanceByRefLocked resolves an admin reference: an ID, else a name, which
// means the newest live instance of that name, else the newest of any state.
func (s *Cloud) instanceByRefLocked(ref string) *api.Instance {
	if inst := s.instanceByIDLocked(ref); inst != nil {
		return inst
	}
	var newest *api.Instance
	for i := len(s.st.Instances) - 1; i >= 0; i-- {
		inst := s.st.Instances[i]
		if inst.Name != ref {
			continue
		}
		if inst.State != api.StateTerminated {
			return inst
		}
		if newest == nil {
			newest = inst
		}
	}
	return newest
}

// CopyInstance is a deep copy of inst, to hand out without sharing the state.
func CopyInstance(inst *api.Instance) api.Instance {
	c := *inst
	c.Addresses = slices.Clone(inst.Addresses)
	if c.Addresses == nil {
		c.Addresses = []api.Address{}
	}
	return c
}

// Kubernetes' node address types, the only ones a CCM can pass on.
var addressTypes = []string{
	api.AddressInternalIP, api.AddressExternalIP, api.AddressHostname,
	api.AddressInternalDNS, api.AddressExternalDNS,
}

// ValidateCreate checks an admin create request before it changes anything.
func ValidateCreate(req api.CreateInstanceRequest) error {
	if req.Name == "" {
		return fmt.Errorf("name is required")
	}
	for i, a := range req.Addresses {
		if !slices.Contains(addressTypes, a.Type) {
			return fmt.Errorf("addresses[%d].type %q is not one of %v", i, a.Type, addressTypes)
		}
		if a.Type == api.AddressInternalIP || a.Type == api.AddressExternalIP {
			if _, err := netip.ParseAddr(a.Address); err != nil {
				return fmt.Errorf("addresses[%d].address: %v", i, err)
			}
		} else if a.Address == "" {
			return fmt.Errorf("addresses[%d].address is empty", i)
		}
	}
	return nil
}

// newInstanceIDLocked is a new instance ID no instance has.
func (s *Cloud) newInstanceIDLocked() string {
	for {
		b := make([]byte, 6)
		rand.Read(b) // never fails, per crypto/rand
		id := "i-" + hex.EncodeToString(b)
		if s.instanceByIDLocked(id) == nil {
			return id
		}
	}
}

// allocateAddressesLocked hands out two internal addresses and one external
// one, and in a dual-stack cloud an IPv6 internal one after the IPv4 ones
// (a load balancer sends to the first InternalIP). The allocators only
// advance once all are found, so an exhausted pool does not leak
// positions.
func (s *Cloud) allocateAddressesLocked(hostname string) ([]api.Address, error) {
	in1, err := nextAddress(s.internal, s.st.LastInternalIP)
	if err != nil {
		return nil, err
	}
	in2, err := nextAddress(s.internal, in1.String())
	if err != nil {
		return nil, err
	}
	ex, err := nextAddress(s.external, s.st.LastExternalIP)
	if err != nil {
		return nil, err
	}
	out := []api.Address{
		{Type: api.AddressInternalIP, Address: in1.String()},
		{Type: api.AddressInternalIP, Address: in2.String()},
	}
	var in6 netip.Addr
	if s.internal6.IsValid() {
		if in6, err = nextAddress(s.internal6, s.st.LastInternalIPv6); err != nil {
			return nil, err
		}
		out = append(out, api.Address{Type: api.AddressInternalIP, Address: in6.String()})
		s.st.LastInternalIPv6 = in6.String()
	}
	s.st.LastInternalIP, s.st.LastExternalIP = in2.String(), ex.String()
	return append(out,
		api.Address{Type: api.AddressExternalIP, Address: ex.String()},
		api.Address{Type: api.AddressHostname, Address: hostname},
	), nil
}

// nextAddress returns the address after last in pool, never the network
// address nor an IPv4 broadcast address. A last outside pool (the pool was
// changed across a restart) starts over.
func nextAddress(pool netip.Prefix, last string) (netip.Addr, error) {
	a := pool.Addr()
	if l, err := netip.ParseAddr(last); err == nil && pool.Contains(l) {
		a = l
	}
	a = a.Next()
	exhausted := !a.IsValid() || !pool.Contains(a)
	if !exhausted && a.Is4() && pool.Bits() < 31 && !pool.Contains(a.Next()) {
		exhausted = true
	}
	if exhausted {
		return netip.Addr{}, fmt.Errorf("address pool %s is exhausted", pool)
	}
	return a, nil
}

// setStateLocked moves inst to state to, in every API alike (the admin
// API's actions, EC2's StopInstances and the rest).
func (s *Cloud) setStateLocked(inst *api.Instance, to api.InstanceState) error {
	if inst.State == to {
		return nil
	}
	inst.State = to
	// A stopped or terminated instance must stop getting traffic at
	// once, as it would in a real cloud.
	s.refreshBackendsLocked(inst.ID)
	if s.machines != nil {
		s.machines.send(inst.Name, to)
	}
	return s.saveLocked()
}

// liveInstancesLocked are the instances OpenStack shows: not terminated.
func (s *Cloud) liveInstancesLocked() []api.Instance {
	out := []api.Instance{}
	for _, inst := range s.st.Instances {
		if inst.State != api.StateTerminated {
			out = append(out, CopyInstance(inst))
		}
	}
	return out
}

// ListLiveInstances is what an OpenStack list of instances' resources
// shows: the live instances that match, read after any injected latency,
// with the corrupt fault that fired, if any, for the caller to apply to
// each. ok is false when a fault has answered.
func (s *Cloud) ListLiveInstances(w http.ResponseWriter, r *http.Request, c *Call, match func(api.Instance) bool) (insts []api.Instance, f *api.Fault, ok bool) {
	list := func() []api.Instance {
		out := []api.Instance{}
		for _, inst := range s.liveInstancesLocked() {
			if match(inst) {
				out = append(out, inst)
			}
		}
		return out
	}
	f, ok = s.ApplyFault(w, r, c, api.OpListInstances, func(ref string) bool {
		return slices.ContainsFunc(list(), func(inst api.Instance) bool { return RefersTo(ref, &inst) })
	})
	if !ok {
		return nil, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return list(), f, true
}

// LiveInstance is the live instance id, or nil.
func (s *Cloud) LiveInstance(id string) *api.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst := s.instanceByIDLocked(id)
	if inst == nil || inst.State == api.StateTerminated {
		return nil
	}
	out := CopyInstance(inst)
	return &out
}

// MAC is the MAC address of an instance's network interface, in
// OpenStack's fa:16:3e prefix: EC2 shows it on the network interface,
// Nova among the addresses, Neutron on the port.
func MAC(instanceID string) string {
	h := sha256.Sum256([]byte(instanceID))
	return fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", h[0], h[1], h[2])
}

// Instances are copies of the instances named name, or of all of them
// when name is empty, terminated ones included, in creation order.
func (s *Cloud) Instances(name string) []api.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instancesLocked(name)
}

func (s *Cloud) instancesLocked(name string) []api.Instance {
	out := []api.Instance{}
	for _, inst := range s.st.Instances {
		if name == "" || inst.Name == name {
			out = append(out, CopyInstance(inst))
		}
	}
	return out
}

// Instance is a copy of the instance with that ID, terminated or not.
func (s *Cloud) Instance(id string) (api.Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyOf(s.instanceByIDLocked(id))
}

// InstanceByRef is a copy of the instance an admin reference names (see
// instanceByRefLocked).
func (s *Cloud) InstanceByRef(ref string) (api.Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copyOf(s.instanceByRefLocked(ref))
}

func copyOf(inst *api.Instance) (api.Instance, bool) {
	if inst == nil {
		return api.Instance{}, false
	}
	return CopyInstance(inst), true
}

// AboutInstance is the fault matcher of a call about the instance with
// that ID: a fault's Instance may give the ID or anything the instance is
// known by.
func (s *Cloud) AboutInstance(id string) func(ref string) bool {
	return func(ref string) bool {
		if api.RefMatches(ref, id) {
			return true
		}
		inst := s.instanceByIDLocked(id)
		return inst != nil && RefersTo(ref, inst)
	}
}

// AboutInstancesNamed is the fault matcher of a listing of the instances
// named name (all of them when it is empty).
func (s *Cloud) AboutInstancesNamed(name string) func(ref string) bool {
	return func(ref string) bool {
		if api.RefMatches(ref, name) {
			return true
		}
		return slices.ContainsFunc(s.instancesLocked(name), func(i api.Instance) bool { return RefersTo(ref, &i) })
	}
}

// CreateInstance adds a running instance as req asks (req is valid, see
// ValidateCreate), giving it what req leaves out: an ID, addresses from
// the pools, the next zone in turn, the default type and the region.
// A live instance of the name is a conflict.
func (s *Cloud) CreateInstance(req api.CreateInstanceRequest) (api.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, inst := range s.st.Instances {
		if inst.Name == req.Name && inst.State != api.StateTerminated {
			return api.Instance{}, Errorf(KindConflict, "instance %q already exists as %s (%s); terminate it first", req.Name, inst.ID, inst.State)
		}
	}
	inst := &api.Instance{
		ID:           s.newInstanceIDLocked(),
		Name:         req.Name,
		Hostname:     req.Hostname,
		InstanceType: req.InstanceType,
		Zone:         req.Zone,
		Region:       req.Region,
		State:        api.StateRunning,
		Addresses:    slices.Clone(req.Addresses),
		CreatedAt:    time.Now().UTC(),
	}
	if inst.Hostname == "" {
		inst.Hostname = inst.Name
	}
	if inst.InstanceType == "" {
		inst.InstanceType = DefaultInstanceType
	}
	if inst.Region == "" {
		inst.Region = s.region
	}
	if len(inst.Addresses) == 0 {
		addrs, err := s.allocateAddressesLocked(inst.Hostname)
		if err != nil {
			return api.Instance{}, &Error{Kind: KindConflict, Err: err}
		}
		inst.Addresses = addrs
	}
	if inst.Zone == "" {
		inst.Zone = s.zones[s.st.NextZone%len(s.zones)]
		s.st.NextZone = (s.st.NextZone + 1) % len(s.zones)
	}
	s.st.Instances = append(s.st.Instances, inst)
	return CopyInstance(inst), saveFailed(s.saveLocked())
}

// SetInstanceState moves the instance ref names (see instanceByRefLocked)
// to state to, as the action verb ("stop", "start", "terminate") asks.
// Terminating is idempotent, so cleanup can always ask for it; nothing
// comes back from terminated.
func (s *Cloud) SetInstanceState(ref string, to api.InstanceState, verb string) (api.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst := s.instanceByRefLocked(ref)
	if inst == nil {
		return api.Instance{}, Errorf(KindNotFound, "instance %q not found", ref)
	}
	if inst.State == api.StateTerminated && to != api.StateTerminated {
		return api.Instance{}, Errorf(KindConflict, "instance %q (%s) is terminated and cannot %s", inst.Name, inst.ID, verb)
	}
	err := s.setStateLocked(inst, to)
	return CopyInstance(inst), saveFailed(err)
}
