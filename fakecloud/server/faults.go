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
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// statusClientClosed is recorded in the audit log when the client gave up
// during an injected delay (nginx's convention; no standard code exists).
const statusClientClosed = 499

// refersTo reports whether a fault's Instance names inst.
func refersTo(ref string, inst *api.Instance) bool {
	return api.RefMatches(ref, inst.ID) || api.RefMatches(ref, inst.Name)
}

// applyFault fires the first fault, in the order they were added, that
// matches op and is about the call (about is asked, under the lock, whether
// a fault's Instance concerns it). One fault per call keeps the audit log's
// single Fault field truthful. Error, throttle and latency faults are acted
// on here; a corrupt fault is returned for the handler to apply to what it
// serves. ok is false when the response has already been written.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, c *call, op string, about func(ref string) bool) (corrupting *api.Fault, ok bool) {
	if c.caller == callerInspector {
		// Faults are the CCM's view of the cloud; the inspector sees it as it is.
		return nil, true
	}
	s.mu.Lock()
	f, err := s.fireLocked(op, about)
	s.mu.Unlock()
	if err != nil {
		saveFailed(w, err)
		return nil, false
	}
	if f == nil {
		return nil, true
	}
	c.fault = f.ID
	switch f.Kind {
	case api.FaultError:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		c.fail(w, status, api.CodeInjected, faultMessage(f, "injected error"))
		return nil, false
	case api.FaultThrottle:
		w.Header().Set("Retry-After", "1")
		c.fail(w, http.StatusTooManyRequests, api.CodeThrottled, faultMessage(f, "request throttled"))
		return nil, false
	case api.FaultLatency:
		t := time.NewTimer(f.Delay.Duration)
		defer t.Stop()
		select {
		case <-t.C:
			return nil, true
		case <-r.Context().Done():
			c.fail(w, statusClientClosed, api.CodeInternal, "client went away during injected latency "+f.ID)
			return nil, false
		}
	case api.FaultCorrupt, api.FaultIgnore:
		return f, true
	}
	return nil, true
}

func faultMessage(f *api.Fault, def string) string {
	if f.Message != "" {
		return f.Message
	}
	return fmt.Sprintf("%s (fault %s)", def, f.ID)
}

// fireLocked returns a copy of the fault that fires, having used up one of
// its Count and removed it when none is left.
func (s *Server) fireLocked(op string, about func(ref string) bool) (*api.Fault, error) {
	for i := range s.st.Faults {
		f := &s.st.Faults[i]
		if f.Operation != op && f.Operation != api.OpAny {
			continue
		}
		if f.Instance != "" && !about(f.Instance) {
			continue
		}
		// A lie about a field op does not answer with could not be told;
		// firing would spend the fault's count on nothing.
		if f.Kind == api.FaultCorrupt && !api.CorruptsOperation(f.Field, op) {
			continue
		}
		if f.After > 0 {
			f.After--
			if err := s.saveLocked(); err != nil {
				return nil, err
			}
			continue
		}
		fired := *f
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				s.st.Faults = slices.Delete(s.st.Faults, i, i+1)
			}
			// Only a counted fault changes state; an unlimited one would
			// cost a state write per call for nothing.
			if err := s.saveLocked(); err != nil {
				return nil, err
			}
		}
		return &fired, nil
	}
	return nil, nil
}

// corrupt falsifies inst as f says, if f is a corrupt fault about inst.
func corrupt(f *api.Fault, inst *api.Instance) {
	if f == nil || f.Kind != api.FaultCorrupt || (f.Instance != "" && !refersTo(f.Instance, inst)) {
		return
	}
	switch f.Field {
	case api.CorruptZone:
		inst.Zone = f.Value
	case api.CorruptRegion:
		inst.Region = f.Value
	case api.CorruptInstanceType:
		inst.InstanceType = f.Value
	case api.CorruptID:
		inst.ID = f.Value
	case api.CorruptState:
		inst.State = api.InstanceState(f.Value)
	case api.CorruptAddresses:
		// Validated when the fault was added.
		inst.Addresses, _ = api.ParseAddresses(f.Value)
	}
}

// corruptLB falsifies lb as f says, if f is a corrupt fault about lb.
func corruptLB(f *api.Fault, lb *api.LoadBalancer) {
	if f == nil || f.Kind != api.FaultCorrupt || (f.Instance != "" && f.Instance != lb.Name && f.Instance != lb.ID) {
		return
	}
	switch f.Field {
	case api.CorruptIP:
		lb.IP = f.Value
	case api.CorruptListeners:
		lb.Listeners = []api.Listener{}
	}
}

// ignore keeps field of the spec as it was before the request, if f is an
// ignore fault: the request succeeds, the cloud holds the old value.
func ignore(f *api.Fault, before, next *api.LoadBalancerSpec) {
	if f == nil || f.Kind != api.FaultIgnore {
		return
	}
	switch f.Field {
	case api.IgnoreListeners:
		next.Listeners = before.Listeners
	case api.IgnoreBackends:
		next.Backends = before.Backends
	case api.IgnoreSourceRanges:
		next.SourceRanges = before.SourceRanges
	case api.IgnoreHealthCheck:
		next.HealthCheckNodePort = before.HealthCheckNodePort
	case api.IgnoreBackendRemovals:
		for _, b := range before.Backends {
			if !slices.Contains(next.Backends, b) {
				next.Backends = append(next.Backends, b)
			}
		}
	}
}

func (s *Server) addFaultLocked(f api.Fault) api.Fault {
	f.ID = "f-" + strconv.FormatInt(s.st.NextFaultID, 10)
	s.st.NextFaultID++
	s.st.Faults = append(s.st.Faults, f)
	return f
}

func (s *Server) adminListFaults(w http.ResponseWriter, r *http.Request, c *call) {
	s.mu.Lock()
	out := api.FaultList{Faults: slices.Clone(s.st.Faults)}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) adminAddFault(w http.ResponseWriter, r *http.Request, c *call) {
	var f api.Fault
	if !decodeBody(w, r, &f) {
		return
	}
	if err := f.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, "fault: "+err.Error())
		return
	}
	c.instance = f.Instance
	s.mu.Lock()
	defer s.mu.Unlock()
	f = s.addFaultLocked(f)
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, f)
}

func (s *Server) adminClearFaults(w http.ResponseWriter, r *http.Request, c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Faults = []api.Fault{}
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminDeleteFault(w http.ResponseWriter, r *http.Request, c *call) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.Faults, func(f api.Fault) bool { return f.ID == id })
	if i < 0 {
		writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("fault %q not found", id))
		return
	}
	s.st.Faults = slices.Delete(s.st.Faults, i, i+1)
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
