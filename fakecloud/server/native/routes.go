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

// Routes are bookkeeping only: nothing is routed. What a test checks is
// that the CCM keeps them in line with the nodes' pod CIDRs.

// Cloud API.

func (s *Front) listRoutes(w http.ResponseWriter, r *http.Request, c *model.Call) {
	cluster := r.URL.Query().Get("cluster")
	if _, ok := s.cloud.ApplyFault(w, r, c, api.OpListRoutes, s.cloud.AboutRoutes(cluster)); !ok {
		return
	}
	model.WriteJSON(w, http.StatusOK, api.RouteList{Routes: s.cloud.Routes(cluster)})
}

func (s *Front) createRoute(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	var spec api.RouteSpec
	if !decodeBody(w, r, &spec) {
		return
	}
	f, ok := s.cloud.ApplyFault(w, r, c, api.OpCreateRoute, s.cloud.AboutRoute(name, spec.TargetInstance))
	if !ok {
		return
	}
	if err := model.ValidateName("route", name); err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	spec, err := model.ValidateRoute(spec)
	if err != nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	route, created, err := s.cloud.CreateRoute(name, spec, f)
	if err != nil {
		fail(w, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	model.WriteJSON(w, status, route)
}

func (s *Front) deleteRoute(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	if _, ok := s.cloud.ApplyFault(w, r, c, api.OpDeleteRoute, func(ref string) bool { return ref == name }); !ok {
		return
	}
	s.removeRoute(w, name)
}

func (s *Front) removeRoute(w http.ResponseWriter, name string) {
	if err := s.cloud.DeleteRoute(name); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Admin API.

func (s *Front) adminListRoutes(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, api.RouteList{Routes: s.cloud.Routes("")})
}

// adminDeleteRoute removes a route behind the CCM's back, to test that it
// puts the route back.
func (s *Front) adminDeleteRoute(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	s.removeRoute(w, name)
}
