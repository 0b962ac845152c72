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
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// StatusClientClosed is recorded in the audit log when the client gave up
// during an injected delay (nginx's convention; no standard code exists).
const StatusClientClosed = 499

// RefersTo reports whether a fault's Instance names inst.
func RefersTo(ref string, inst *api.Instance) bool {
	return api.RefMatches(ref, inst.ID) || api.RefMatches(ref, inst.Name)
}

// ApplyFault fires the first fault, in the order they were added, that
// matches op and is about the call (about is asked, under the lock, whether
// a fault's Instance concerns it). One fault per call keeps the audit log's
// single Fault field truthful. Error, throttle and latency faults are acted
// on here; a corrupt fault is returned for the handler to apply to what it
// serves. ok is false when the response has already been written.
func (s *Cloud) ApplyFault(w http.ResponseWriter, r *http.Request, c *Call, op string, about func(ref string) bool) (corrupting *api.Fault, ok bool) {
	if c.Caller == CallerInspector {
		// Faults are the CCM's view of the cloud; the inspector sees it as it is.
		return nil, true
	}
	s.mu.Lock()
	f, err := s.fireLocked(op, about)
	s.mu.Unlock()
	if err != nil {
		SaveFailed(w, err)
		return nil, false
	}
	if f == nil {
		return nil, true
	}
	c.Fault = f.ID
	switch f.Kind {
	case api.FaultError:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		c.Fail(w, status, api.CodeInjected, faultMessage(f, "injected error"))
		return nil, false
	case api.FaultThrottle:
		w.Header().Set("Retry-After", "1")
		c.Fail(w, http.StatusTooManyRequests, api.CodeThrottled, faultMessage(f, "request throttled"))
		return nil, false
	case api.FaultLatency:
		t := time.NewTimer(f.Delay.Duration)
		defer t.Stop()
		select {
		case <-t.C:
			return nil, true
		case <-r.Context().Done():
			c.Fail(w, StatusClientClosed, api.CodeInternal, "client went away during injected latency "+f.ID)
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
func (s *Cloud) fireLocked(op string, about func(ref string) bool) (*api.Fault, error) {
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

// CorruptInstance falsifies inst as f says, if f is a corrupt fault about inst.
func CorruptInstance(f *api.Fault, inst *api.Instance) {
	if f == nil || f.Kind != api.FaultCorrupt || (f.Instance != "" && !RefersTo(f.Instance, inst)) {
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

// CorruptLB falsifies lb as f says, if f is a corrupt fault about lb.
func CorruptLB(f *api.Fault, lb *api.LoadBalancer) {
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

// Ignore keeps field of the spec as it was before the request, if f is an
// Ignore fault: the request succeeds, the cloud holds the old value.
func Ignore(f *api.Fault, before, next *api.LoadBalancerSpec) {
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
	case api.IgnoreClientAffinity:
		next.ClientAffinitySeconds = before.ClientAffinitySeconds
	case api.IgnoreProxyProtocol:
		next.ProxyProtocol = before.ProxyProtocol
	case api.IgnoreIPFamilies:
		next.IPFamilies = before.IPFamilies
	case api.IgnoreBackendRemovals:
		for _, b := range before.Backends {
			if !slices.Contains(next.Backends, b) {
				next.Backends = append(next.Backends, b)
			}
		}
	}
}

// addFaultLocked adds f with the next fault ID and returns it as added.
func (s *Cloud) addFaultLocked(f api.Fault) api.Fault {
	f.ID = "f-" + strconv.FormatInt(s.st.NextFaultID, 10)
	s.st.NextFaultID++
	s.st.Faults = append(s.st.Faults, f)
	return f
}

// Faults are the faults armed, in the order they were added.
func (s *Cloud) Faults() []api.Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Faults)
}

// AddFault arms f (valid, see api.Fault.Validate) and returns it with its ID.
func (s *Cloud) AddFault(f api.Fault) (api.Fault, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f = s.addFaultLocked(f)
	return f, saveFailed(s.saveLocked())
}

// ClearFaults disarms every fault.
func (s *Cloud) ClearFaults() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Faults = []api.Fault{}
	return saveFailed(s.saveLocked())
}

// DeleteFault disarms the fault with that ID.
func (s *Cloud) DeleteFault(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.Faults, func(f api.Fault) bool { return f.ID == id })
	if i < 0 {
		return Errorf(KindNotFound, "fault %q not found", id)
	}
	s.st.Faults = slices.Delete(s.st.Faults, i, i+1)
	return saveFailed(s.saveLocked())
}
