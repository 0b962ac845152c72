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

package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

const defaultInstanceType = "fake.medium"

// Instances are kept in a slice and found by scanning: a test cloud holds
// tens of instances, and the slice order is the creation order that "newest"
// relies on.

func (s *Server) instanceByIDLocked(id string) *api.Instance {
	for _, inst := range s.st.Instances {
		if inst.ID == id {
			return inst
		}
	}
	return nil
}

// instanceByRefLocked resolves an admin reference: an ID, else a name, which
// means the newest live instance of that name, else the newest of any state.
func (s *Server) instanceByRefLocked(ref string) *api.Instance {
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

func copyInstance(inst *api.Instance) api.Instance {
	c := *inst
	c.Addresses = slices.Clone(inst.Addresses)
	if c.Addresses == nil {
		c.Addresses = []api.Address{}
	}
	return c
}

func instanceNotFound(w http.ResponseWriter, ref string) {
	writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("instance %q not found", ref))
}

// Cloud API.

func (s *Server) listInstances(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.URL.Query().Get("name")
	c.instance = name
	// The listing is taken after any injected latency: a slow cloud answers
	// with the state of when it answers.
	list := func() []api.Instance {
		out := []api.Instance{}
		for _, inst := range s.st.Instances {
			if name == "" || inst.Name == name {
				out = append(out, copyInstance(inst))
			}
		}
		return out
	}
	f, ok := s.applyFault(w, r, c, api.OpListInstances, func(ref string) bool {
		if api.RefMatches(ref, name) {
			return true
		}
		return slices.ContainsFunc(list(), func(i api.Instance) bool { return refersTo(ref, &i) })
	})
	if !ok {
		return
	}
	s.mu.Lock()
	out := list()
	s.mu.Unlock()
	for i := range out {
		corrupt(f, &out[i])
	}
	writeJSON(w, http.StatusOK, api.InstanceList{Instances: out})
}

func (s *Server) getInstance(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	c.instance = id
	f, ok := s.applyFault(w, r, c, api.OpGetInstance, func(ref string) bool {
		if api.RefMatches(ref, id) {
			return true
		}
		inst := s.instanceByIDLocked(id)
		return inst != nil && refersTo(ref, inst)
	})
	if !ok {
		return
	}
	s.mu.Lock()
	inst := s.instanceByIDLocked(id)
	var out api.Instance
	if inst != nil {
		out = copyInstance(inst)
	}
	s.mu.Unlock()
	if inst == nil {
		instanceNotFound(w, id)
		return
	}
	corrupt(f, &out)
	writeJSON(w, http.StatusOK, out)
}

// Admin API.

func (s *Server) adminListInstances(w http.ResponseWriter, r *http.Request, c *call) {
	s.mu.Lock()
	out := make([]api.Instance, 0, len(s.st.Instances))
	for _, inst := range s.st.Instances {
		out = append(out, copyInstance(inst))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, api.InstanceList{Instances: out})
}

func (s *Server) adminGetInstance(w http.ResponseWriter, r *http.Request, c *call) {
	ref := r.PathValue("ref")
	c.instance = ref
	s.mu.Lock()
	inst := s.instanceByRefLocked(ref)
	var out api.Instance
	if inst != nil {
		out = copyInstance(inst)
	}
	s.mu.Unlock()
	if inst == nil {
		instanceNotFound(w, ref)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// Kubernetes' node address types, the only ones a CCM can pass on.
var addressTypes = []string{
	api.AddressInternalIP, api.AddressExternalIP, api.AddressHostname,
	api.AddressInternalDNS, api.AddressExternalDNS,
}

func validateCreate(req api.CreateInstanceRequest) error {
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

func (s *Server) adminCreateInstance(w http.ResponseWriter, r *http.Request, c *call) {
	var req api.CreateInstanceRequest
	if !decodeBody(w, r, &req) {
		return
	}
	c.instance = req.Name
	if err := validateCreate(req); err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, inst := range s.st.Instances {
		if inst.Name == req.Name && inst.State != api.StateTerminated {
			writeError(w, http.StatusConflict, api.CodeConflict,
				fmt.Sprintf("instance %q already exists as %s (%s); terminate it first", req.Name, inst.ID, inst.State))
			return
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
		inst.InstanceType = defaultInstanceType
	}
	if inst.Region == "" {
		inst.Region = s.region
	}
	if len(inst.Addresses) == 0 {
		addrs, err := s.allocateAddressesLocked(inst.Hostname)
		if err != nil {
			writeError(w, http.StatusConflict, api.CodeConflict, err.Error())
			return
		}
		inst.Addresses = addrs
	}
	if inst.Zone == "" {
		inst.Zone = s.zones[s.st.NextZone%len(s.zones)]
		s.st.NextZone = (s.st.NextZone + 1) % len(s.zones)
	}
	s.st.Instances = append(s.st.Instances, inst)
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, copyInstance(inst))
}

func (s *Server) newInstanceIDLocked() string {
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
// one. The allocators only advance once all three are found, so an
// exhausted pool does not leak positions.
func (s *Server) allocateAddressesLocked(hostname string) ([]api.Address, error) {
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
	s.st.LastInternalIP, s.st.LastExternalIP = in2.String(), ex.String()
	return []api.Address{
		{Type: api.AddressInternalIP, Address: in1.String()},
		{Type: api.AddressInternalIP, Address: in2.String()},
		{Type: api.AddressExternalIP, Address: ex.String()},
		{Type: api.AddressHostname, Address: hostname},
	}, nil
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

func (s *Server) adminInstanceAction(w http.ResponseWriter, r *http.Request, c *call) {
	ref, action := r.PathValue("ref"), r.PathValue("action")
	c.instance = ref
	s.mu.Lock()
	defer s.mu.Unlock()
	inst := s.instanceByRefLocked(ref)
	if inst == nil {
		instanceNotFound(w, ref)
		return
	}
	var to api.InstanceState
	switch action {
	case "stop":
		to = api.StateStopped
	case "start":
		to = api.StateRunning
	case "terminate":
		to = api.StateTerminated
	default:
		notFound(w, r, c)
		return
	}
	// Terminate is idempotent so cleanup can always call it; nothing comes
	// back from terminated.
	if inst.State == api.StateTerminated && to != api.StateTerminated {
		writeError(w, http.StatusConflict, api.CodeConflict,
			fmt.Sprintf("instance %q (%s) is terminated and cannot %s", inst.Name, inst.ID, action))
		return
	}
	if err := s.setStateLocked(inst, to); err != nil {
		saveFailed(w, err)
		return
	}
	writeJSON(w, http.StatusOK, copyInstance(inst))
}

// setStateLocked moves inst to state to, in every API alike (the admin
// API's actions, EC2's StopInstances and the rest).
func (s *Server) setStateLocked(inst *api.Instance, to api.InstanceState) error {
	if inst.State == to {
		return nil
	}
	inst.State = to
	// A stopped or terminated instance must stop getting traffic at
	// once, as it would in a real cloud.
	s.refreshBackendsLocked(inst.ID)
	if s.machines != nil {
		s.machines <- machineChange{name: inst.Name, state: to}
	}
	return s.saveLocked()
}
