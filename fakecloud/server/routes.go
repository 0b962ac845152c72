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
	"net/netip"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Routes are bookkeeping only: nothing is routed. What a test checks is
// that the CCM keeps them in line with the nodes' pod CIDRs.

// routeRecord is a route as stored; Blackhole is derived when answering,
// from the target instance as it is then.
type routeRecord struct {
	Name string `json:"name"`
	api.RouteSpec
	CreatedAt time.Time `json:"createdAt"`
}

func (s *Server) routeByNameLocked(name string) *routeRecord {
	for _, route := range s.st.Routes {
		if route.Name == name {
			return route
		}
	}
	return nil
}

func (s *Server) routeViewLocked(route *routeRecord) api.Route {
	inst := s.instanceByIDLocked(route.TargetInstance)
	return api.Route{
		Name:      route.Name,
		RouteSpec: route.RouteSpec,
		Blackhole: inst == nil || inst.State == api.StateTerminated,
		CreatedAt: route.CreatedAt,
	}
}

func routeNotFound(w http.ResponseWriter, name string) {
	writeError(w, http.StatusNotFound, api.CodeNotFound, fmt.Sprintf("route %q not found", name))
}

// validateRoute checks spec and returns it with its CIDR in canonical form,
// so that two spellings of one destination compare equal.
func validateRoute(spec api.RouteSpec) (api.RouteSpec, error) {
	if spec.Cluster == "" {
		return spec, fmt.Errorf("cluster is required")
	}
	if spec.TargetInstance == "" {
		return spec, fmt.Errorf("targetInstance is required (an instance ID)")
	}
	p, err := netip.ParsePrefix(spec.DestinationCIDR)
	if err != nil {
		return spec, fmt.Errorf("destinationCIDR %q is not a CIDR such as 10.244.1.0/24", spec.DestinationCIDR)
	}
	if p != p.Masked() {
		return spec, fmt.Errorf("destinationCIDR %q has host bits set (did you mean %s?)", spec.DestinationCIDR, p.Masked())
	}
	spec.DestinationCIDR = p.String()
	return spec, nil
}

// checkRoutes vets the routes of a state file.
func checkRoutes(routes []*routeRecord) error {
	names := map[string]bool{}
	for i, route := range routes {
		if route == nil || route.Name == "" {
			return fmt.Errorf("route %d has no name", i+1)
		}
		if names[route.Name] {
			return fmt.Errorf("route %d repeats the name %q", i+1, route.Name)
		}
		names[route.Name] = true
		if _, err := validateRoute(route.RouteSpec); err != nil {
			return fmt.Errorf("route %q: %v", route.Name, err)
		}
	}
	return nil
}

// Cloud API.

func (s *Server) listRoutes(w http.ResponseWriter, r *http.Request, c *call) {
	cluster := r.URL.Query().Get("cluster")
	list := func() []api.Route {
		out := []api.Route{}
		for _, route := range s.st.Routes {
			if cluster == "" || route.Cluster == cluster {
				out = append(out, s.routeViewLocked(route))
			}
		}
		return out
	}
	if _, ok := s.applyFault(w, r, c, api.OpListRoutes, func(ref string) bool {
		return slices.ContainsFunc(list(), func(route api.Route) bool { return route.Name == ref })
	}); !ok {
		return
	}
	s.mu.Lock()
	out := list()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, api.RouteList{Routes: out})
}

// createRoute is idempotent for an identical spec, so a CCM retrying a call
// whose answer it lost is not told off; a different spec under the name is a
// conflict the caller must resolve by deleting first.
func (s *Server) createRoute(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.PathValue("name")
	c.instance = name
	var spec api.RouteSpec
	if !decodeBody(w, r, &spec) {
		return
	}
	// A fault may name the route, or the instance it leads to: a route's
	// name is the CCM's (a node's UID), the instance's the test's.
	f, ok := s.applyFault(w, r, c, api.OpCreateRoute, func(ref string) bool {
		if ref == name {
			return true
		}
		inst := s.instanceByIDLocked(spec.TargetInstance)
		return inst != nil && refersTo(ref, inst)
	})
	if !ok {
		return
	}
	if err := validateName("route", name); err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	spec, err := validateRoute(spec)
	if err != nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if route := s.routeByNameLocked(name); route != nil {
		if route.RouteSpec != spec {
			writeError(w, http.StatusConflict, api.CodeConflict,
				fmt.Sprintf("route %q already exists with cluster %q, destinationCIDR %s, targetInstance %s; delete it first",
					name, route.Cluster, route.DestinationCIDR, route.TargetInstance))
			return
		}
		writeJSON(w, http.StatusOK, s.routeViewLocked(route))
		return
	}
	inst := s.instanceByIDLocked(spec.TargetInstance)
	if inst == nil {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("targetInstance: instance %q not found", spec.TargetInstance))
		return
	}
	if inst.State == api.StateTerminated {
		writeError(w, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf("targetInstance: instance %q (%s) is terminated", inst.ID, inst.Name))
		return
	}
	route := &routeRecord{Name: name, RouteSpec: spec, CreatedAt: time.Now().UTC()}
	if f != nil && f.Kind == api.FaultIgnore {
		// Said to be made, never made.
		writeJSON(w, http.StatusCreated, s.routeViewLocked(route))
		return
	}
	s.st.Routes = append(s.st.Routes, route)
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.routeViewLocked(route))
}

func (s *Server) deleteRoute(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.PathValue("name")
	c.instance = name
	if _, ok := s.applyFault(w, r, c, api.OpDeleteRoute, func(ref string) bool { return ref == name }); !ok {
		return
	}
	s.removeRoute(w, name)
}

func (s *Server) removeRoute(w http.ResponseWriter, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.Routes, func(route *routeRecord) bool { return route.Name == name })
	if i < 0 {
		routeNotFound(w, name)
		return
	}
	s.st.Routes = slices.Delete(s.st.Routes, i, i+1)
	if err := s.saveLocked(); err != nil {
		saveFailed(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Admin API.

func (s *Server) adminListRoutes(w http.ResponseWriter, r *http.Request, c *call) {
	s.mu.Lock()
	out := make([]api.Route, 0, len(s.st.Routes))
	for _, route := range s.st.Routes {
		out = append(out, s.routeViewLocked(route))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, api.RouteList{Routes: out})
}

// adminDeleteRoute removes a route behind the CCM's back, to test that it
// puts the route back.
func (s *Server) adminDeleteRoute(w http.ResponseWriter, r *http.Request, c *call) {
	name := r.PathValue("name")
	c.instance = name
	s.removeRoute(w, name)
}
