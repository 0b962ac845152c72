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
	"net/http"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
)

func lbNotFound(ref string) error {
	return model.Errorf(model.KindNotFound, "load balancer %q not found", ref)
}

// Cloud API.

func (s *Front) listLoadBalancers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	f, ok := s.cloud.ApplyFault(w, r, c, api.OpListLoadBalancers, s.cloud.AboutAnyLB())
	if !ok {
		return
	}
	out := s.cloud.LoadBalancers()
	for i := range out {
		model.CorruptLB(f, &out[i])
	}
	model.WriteJSON(w, http.StatusOK, api.LoadBalancerList{LoadBalancers: out})
}

func (s *Front) getLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	f, ok := s.cloud.ApplyFault(w, r, c, api.OpGetLoadBalancer, s.cloud.AboutLB(name))
	if !ok {
		return
	}
	out, found := s.cloud.LoadBalancer(name)
	if !found {
		fail(w, lbNotFound(name))
		return
	}
	model.CorruptLB(f, &out)
	model.WriteJSON(w, http.StatusOK, out)
}

// ensureLoadBalancer creates the load balancer or replaces its spec
// (model.Cloud.EnsureLoadBalancer); If-Match: * asks to replace only.
func (s *Front) ensureLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	var spec api.LoadBalancerSpec
	if !decodeBody(w, r, &spec) {
		return
	}
	mustExist := r.Header.Get("If-Match") == "*"
	// A replace of one that does not exist fails its precondition before
	// it is an operation: faults count, and act on, operations that
	// proceed (a fault "after the first" must not be spent on it).
	if mustExist && !s.cloud.HasLoadBalancer(name) {
		fail(w, model.Errorf(model.KindPrecondition, "load balancer %q not found (If-Match: * replaces only one that exists)", name))
		return
	}
	f, ok := s.cloud.ApplyFault(w, r, c, api.OpEnsureLoadBalancer, s.cloud.AboutLB(name))
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
	out, created, err := s.cloud.EnsureLoadBalancer(name, spec, mustExist, f)
	if err != nil {
		fail(w, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	model.CorruptLB(f, &out)
	model.WriteJSON(w, status, out)
}

func (s *Front) deleteLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	if _, ok := s.cloud.ApplyFault(w, r, c, api.OpDeleteLoadBalancer, s.cloud.AboutLB(name)); !ok {
		return
	}
	if err := s.cloud.DeleteLoadBalancer(name); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Admin API.

func (s *Front) adminListLoadBalancers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, api.LoadBalancerList{LoadBalancers: s.cloud.LoadBalancers()})
}

func (s *Front) adminGetLoadBalancer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	ref := r.PathValue("ref")
	c.Instance = ref
	out, found := s.cloud.LoadBalancerByRef(ref)
	if !found {
		fail(w, lbNotFound(ref))
		return
	}
	model.WriteJSON(w, http.StatusOK, out)
}
