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
	"errors"
	"fmt"
	"net/http"
	"slices"
	"syscall"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func lbNotFound(w http.ResponseWriter, ref string) {
	model.WriteError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("load balancer %q not found", ref))
}

// Cloud API.

func (s *Front) listLoadBalancers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	f, ok := s.ApplyFault(w, r, c, api.OpListLoadBalancers, func(ref string) bool {
		return s.LBByRefLocked(ref) != nil
	})
	if !ok {
		return
	}
	s.Mu.Lock()
	out := make([]api.LoadBalancer, 0, len(s.St.LoadBalancers))
	for _, lb := range s.St.LoadBalancers {
		out = append(out, s.LBViewLocked(lb))
	}
	s.Mu.Unlock()
	for i := range out {
		model.CorruptLB(f, &out[i])
	}
	model.WriteJSON(w, http.StatusOK, api.LoadBalancerList{LoadBalancers: out})
}

func (s *Front) getLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	f, ok := s.ApplyFault(w, r, c, api.OpGetLoadBalancer, s.AboutLB(name))
	if !ok {
		return
	}
	s.Mu.Lock()
	lb := s.LBByNameLocked(name)
	var out api.LoadBalancer
	if lb != nil {
		out = s.LBViewLocked(lb)
	}
	s.Mu.Unlock()
	if lb == nil {
		lbNotFound(w, name)
		return
	}
	model.CorruptLB(f, &out)
	model.WriteJSON(w, http.StatusOK, out)
}

// ensureLoadBalancer creates the load balancer or replaces its spec,
// keeping its ID and IP. The sockets change first: if a listener cannot be
// opened, nothing changes and the caller hears why.
func (s *Front) ensureLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	var spec api.LoadBalancerSpec
	if !decodeBody(w, r, &spec) {
		return
	}
	// A replace of one that does not exist fails its precondition before
	// it is an operation: faults count, and act on, operations that
	// proceed (a fault "after the first" must not be spent on it).
	if r.Header.Get("If-Match") == "*" && !s.lbExists(name) {
		lbPreconditionFailed(w, name)
		return
	}
	f, ok := s.ApplyFault(w, r, c, api.OpEnsureLoadBalancer, s.AboutLB(name))
	if !ok {
		return
	}
	if err := model.ValidateName("load balancer", name); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	if err := model.ValidateLBSpec(spec); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}

	s.Mu.Lock()
	defer s.Mu.Unlock()
	for i, id := range spec.Backends {
		if s.InstanceByIDLocked(id) == nil {
			model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("backends[%d]: instance %q not found", i, id))
			return
		}
	}
	existing := s.LBByNameLocked(name)
	if existing == nil && r.Header.Get("If-Match") == "*" {
		// Deleted since the check above: the caller replaces only one
		// that exists, so that an update of the backends racing the load
		// balancer's deletion cannot bring it back.
		lbPreconditionFailed(w, name)
		return
	}
	if existing != nil && (existing.Octavia != nil || existing.ELB != nil || existing.NLB != nil) {
		// Its spec is derived from its Octavia or ELB objects, which a
		// native change would leave saying something else.
		model.WriteError(w, http.StatusConflict, api.CodeConflict, fmt.Sprintf("load balancer %q was made through another dialect's API (OpenStack's Octavia or AWS's Elastic Load Balancing): change it there", name))
		return
	}
	status := http.StatusOK
	var next model.LBRecord
	if existing != nil {
		next = *existing
	} else {
		ip, err := s.AllocateLBIPLocked()
		if err != nil {
			model.WriteError(w, http.StatusConflict, api.CodeConflict, err.Error())
			return
		}
		next = model.LBRecord{Name: name, ID: s.NewLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
		status = http.StatusCreated
	}
	before := model.CopySpec(next.LoadBalancerSpec)
	next.LoadBalancerSpec = model.CopySpec(spec)
	model.Ignore(f, &before, &next.LoadBalancerSpec)
	if err := s.OpenLocked(&next, existing == nil); err != nil {
		dataplaneFailed(w, err)
		return
	}
	rec := existing
	if rec == nil {
		rec = &next
		s.St.LoadBalancers = append(s.St.LoadBalancers, rec)
		s.St.LastLBIP = rec.IP
	} else {
		*rec = next
	}
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	out := s.LBViewLocked(rec)
	model.CorruptLB(f, &out)
	model.WriteJSON(w, status, out)
}

func (s *Front) lbExists(name string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.LBByNameLocked(name) != nil
}

// lbPreconditionFailed answers a replace (If-Match: *) of a load balancer
// that does not exist: RFC 9110's 412, with the code that says why.
func lbPreconditionFailed(w http.ResponseWriter, name string) {
	model.WriteError(w, http.StatusPreconditionFailed, api.CodeNotFound, fmt.Sprintf("load balancer %q not found (If-Match: * replaces only one that exists)", name))
}

// dataplaneFailed answers a change the sockets refused. A port taken by
// someone else is a conflict the caller can resolve; anything else is ours.
func dataplaneFailed(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		model.WriteError(w, http.StatusConflict, api.CodeConflict, err.Error())
	case errors.Is(err, model.ErrDataplaneClosed):
		model.WriteError(w, http.StatusServiceUnavailable, api.CodeInternal, err.Error())
	default:
		model.WriteError(w, http.StatusInternalServerError, api.CodeInternal, err.Error())
	}
}

func (s *Front) deleteLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	if _, ok := s.ApplyFault(w, r, c, api.OpDeleteLoadBalancer, s.AboutLB(name)); !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	i := slices.IndexFunc(s.St.LoadBalancers, func(lb *model.LBRecord) bool { return lb.Name == name })
	if i < 0 {
		lbNotFound(w, name)
		return
	}
	s.CloseLBLocked(s.St.LoadBalancers[i].ID)
	s.St.LoadBalancers = slices.Delete(s.St.LoadBalancers, i, i+1)
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Admin API.

func (s *Front) adminListLoadBalancers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.Mu.Lock()
	out := make([]api.LoadBalancer, 0, len(s.St.LoadBalancers))
	for _, lb := range s.St.LoadBalancers {
		out = append(out, s.LBViewLocked(lb))
	}
	s.Mu.Unlock()
	model.WriteJSON(w, http.StatusOK, api.LoadBalancerList{LoadBalancers: out})
}

func (s *Front) adminGetLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	ref := r.PathValue("ref")
	c.Instance = ref
	s.Mu.Lock()
	lb := s.LBByRefLocked(ref)
	var out api.LoadBalancer
	if lb != nil {
		out = s.LBViewLocked(lb)
	}
	s.Mu.Unlock()
	if lb == nil {
		lbNotFound(w, ref)
		return
	}
	model.WriteJSON(w, http.StatusOK, out)
}
