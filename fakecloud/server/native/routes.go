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

// Routes are bookkeeping only: nothing is routed. What a test checks is
// that the CCM keeps them in line with the nodes' pod CIDRs.

func routeNotFound(w http.ResponseWriter, name string) {
	model.WriteError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("route %q not found", name))
}

// Cloud API.

func (s *Front) listRoutes(w http.ResponseWriter, r *http.Request, c *model.Call) {
	cluster := r.URL.Query().Get("cluster")
	list := func() []api.Route {
		out := []api.Route{}
		for _, route := range s.St.Routes {
			if cluster == "" || route.Cluster == cluster {
				out = append(out, s.RouteViewLocked(route))
			}
		}
		return out
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpListRoutes, func(ref string) bool {
		return slices.ContainsFunc(list(), func(route api.Route) bool { return route.Name == ref })
	}); !ok {
		return
	}
	s.Mu.Lock()
	out := list()
	s.Mu.Unlock()
	model.WriteJSON(w, http.StatusOK, api.RouteList{Routes: out})
}

// createRoute is idempotent for an identical spec, so a CCM retrying a call
// whose answer it lost is not told off; a different spec under the name is a
// conflict the caller must resolve by deleting first.
func (s *Front) createRoute(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	var spec api.RouteSpec
	if !decodeBody(w, r, &spec) {
		return
	}
	// A fault may name the route, or the instance it leads to: a route's
	// name is the CCM's (a node's UID), the instance's the test's.
	f, ok := s.ApplyFault(w, r, c, api.OpCreateRoute, func(ref string) bool {
		if ref == name {
			return true
		}
		inst := s.InstanceByIDLocked(spec.TargetInstance)
		return inst != nil && model.RefersTo(ref, inst)
	})
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

	s.Mu.Lock()
	defer s.Mu.Unlock()
	if route := s.RouteByNameLocked(name); route != nil {
		if route.RouteSpec != spec {
			model.WriteError(w, http.StatusConflict, api.CodeConflict,
				fmt.Sprintf("route %q already exists with cluster %q, destinationCIDR %s, targetInstance %s; delete it first",
					name, route.Cluster, route.DestinationCIDR, route.TargetInstance))
			return
		}
		model.WriteJSON(w, http.StatusOK, s.RouteViewLocked(route))
		return
	}
	inst := s.InstanceByIDLocked(spec.TargetInstance)
	if inst == nil {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("targetInstance: instance %q not found", spec.TargetInstance))
		return
	}
	if inst.State == api.StateTerminated {
		model.WriteError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("targetInstance: instance %q (%s) is terminated", inst.ID, inst.Name))
		return
	}
	route := &model.RouteRecord{Name: name, RouteSpec: spec, CreatedAt: time.Now().UTC()}
	if f != nil && f.Kind == api.FaultIgnore {
		// Said to be made, never made.
		model.WriteJSON(w, http.StatusCreated, s.RouteViewLocked(route))
		return
	}
	s.St.Routes = append(s.St.Routes, route)
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	model.WriteJSON(w, http.StatusCreated, s.RouteViewLocked(route))
}

func (s *Front) deleteRoute(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	if _, ok := s.ApplyFault(w, r, c, api.OpDeleteRoute, func(ref string) bool { return ref == name }); !ok {
		return
	}
	s.removeRoute(w, name)
}

func (s *Front) removeRoute(w http.ResponseWriter, name string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	i := slices.IndexFunc(s.St.Routes, func(route *model.RouteRecord) bool { return route.Name == name })
	if i < 0 {
		routeNotFound(w, name)
		return
	}
	s.St.Routes = slices.Delete(s.St.Routes, i, i+1)
	if err := s.SaveLocked(); err != nil {
		model.SaveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Admin API.

func (s *Front) adminListRoutes(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.Mu.Lock()
	out := make([]api.Route, 0, len(s.St.Routes))
	for _, route := range s.St.Routes {
		out = append(out, s.RouteViewLocked(route))
	}
	s.Mu.Unlock()
	model.WriteJSON(w, http.StatusOK, api.RouteList{Routes: out})
}

// adminDeleteRoute removes a route behind the CCM's back, to test that it
// puts the route back.
func (s *Front) adminDeleteRoute(w http.ResponseWriter, r *http.Request, c *model.Call) {
	name := r.PathValue("name")
	c.Instance = name
	s.removeRoute(w, name)
}
