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

package native

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

// Instances are kept in a slice and found by scanning: a test cloud holds
// tens of instances, and the slice order is the creation order that "newest"
// relies on.

func instanceNotFound(w http.ResponseWriter, ref string) {
	model.WriteError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("instance %q not found", ref))
}

// Cloud API.

func (s *Front) listInstances(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.URL.Query().Get("name")
	c.Instance = name
	// The listing is taken after any injected latency: a slow cloud answers
	// with the state of when it answers.
	list := func() []api.Instance {
		out := []api.Instance{}
		for _, inst := range s.St.Instances {
			if name == "" || inst.Name == name {
				out = append(out, model.CopyInstance(inst))
			}
		}
		return out
	}
	f, ok := s.ApplyFault(w, r, c, api.OpListInstances, func(ref string) bool {
		if api.RefMatches(ref, name) {
			return true
		}
		return slices.ContainsFunc(list(), func(i api.Instance) bool { return model.RefersTo(ref, &i) })
	})
	if !ok {
		return
	}
	s.Mu.Lock()
	out := list()
	s.Mu.Unlock()
	for i := range out {
		model.CorruptInstance(f, &out[i])
	}
	model.WriteJSON(w, http.StatusOK, api.InstanceList{Instances: out})
}

func (s *Front) getInstance(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	f, ok := s.ApplyFault(w, r, c, api.OpGetInstance, func(ref string) bool {
		if api.RefMatches(ref, id) {
			return true
		}
		inst := s.InstanceByIDLocked(id)
		return inst != nil && model.RefersTo(ref, inst)
	})
	if !ok {
		return
	}
	s.Mu.Lock()
	inst := s.InstanceByIDLocked(id)
	var out api.Instance
	if inst != nil {
		out = model.CopyInstance(inst)
	}
	s.Mu.Unlock()
	if inst == nil {
		instanceNotFound(w, id)
		return
	}
	model.CorruptInstance(f, &out)
	model.WriteJSON(w, http.StatusOK, out)
}

// Admin API.

func (s *Front) adminListInstances(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.Mu.Lock()
	out := make([]api.Instance, 0, len(s.St.Instances))
	for _, inst := range s.St.Instances {
		out = append(out, model.CopyInstance(inst))
	}
	s.Mu.Unlock()
	model.WriteJSON(w, http.StatusOK, api.InstanceList{Instances: out})
}

func (s *Front) adminGetInstance(w http.ResponseWriter, r *http.Request, c *model.Call) {
	ref := r.PathValue("ref")
	c.Instance = ref
	s.Mu.Lock()
	inst := s.InstanceByRefLocked(ref)
	var out api.Instance
	if inst != nil {
		out = model.CopyInstance(inst)
	}
	s.Mu.Unlock()
	if inst == nil {
		instanceNotFound(w, ref)
		return
	}
	model.WriteJSON(w, http.StatusOK, out)
}

func (s *Front) adminCreateInstance(w http.ResponseWriter, r *http.Request, c *model.Call) {
	var req api.CreateInstanceRequest
	if !decodeBody(w, r, &req) {
		return
	}
	c.Instance = req.Name
	if err := model.ValidateCreate(req); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}

	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, inst := range s.St.Instances {
		if inst.Name == req.Name && inst.State != api.StateTerminated {
			model.WriteError(w, http.StatusConflict, api.CodeConflict,
				fmt.Sprintf("instance %q already exists as %s (%s); terminate it first", req.Name, inst.ID, inst.State))
			return
		}
	}
	inst := &api.Instance{
		ID:           s.NewInstanceIDLocked(),
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
		inst.InstanceType = model.DefaultInstanceType
	}
	if inst.Region == "" {
		inst.Region = s.Region()
	}
	if len(inst.Addresses) == 0 {
		addrs, err := s.AllocateAddressesLocked(inst.Hostname)
		if err != nil {
			model.WriteError(w, http.StatusConflict, api.CodeConflict, err.Error())
			return
		}
		inst.Addresses = addrs
	}
	if inst.Zone == "" {
		inst.Zone = s.Zones()[s.St.NextZone%len(s.Zones())]
		s.St.NextZone = (s.St.NextZone + 1) % len(s.Zones())
	}
	s.St.Instances = append(s.St.Instances, inst)
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	model.WriteJSON(w, http.StatusCreated, model.CopyInstance(inst))
}

func (s *Front) adminInstanceAction(w http.ResponseWriter, r *http.Request, c *model.Call) {
	ref, action := r.PathValue("ref"), r.PathValue("action")
	c.Instance = ref
	s.Mu.Lock()
	defer s.Mu.Unlock()
	inst := s.InstanceByRefLocked(ref)
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
		NotFound(w, r, c)
		return
	}
	// Terminate is idempotent so cleanup can always call it; nothing comes
	// back from terminated.
	if inst.State == api.StateTerminated && to != api.StateTerminated {
		model.WriteError(w, http.StatusConflict, api.CodeConflict,
			fmt.Sprintf("instance %q (%s) is terminated and cannot %s", inst.Name, inst.ID, action))
		return
	}
	if err := s.SetStateLocked(inst, to); err != nil {
		model.SaveFailed(w, err)
		return
	}
	model.WriteJSON(w, http.StatusOK, model.CopyInstance(inst))
}
