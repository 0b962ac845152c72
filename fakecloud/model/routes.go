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
	"net/netip"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// RouteRecord is a route as stored; Blackhole is derived when answering,
// from the target instance as it is then.
type RouteRecord struct {
	Name string `json:"name"`
	api.RouteSpec
	CreatedAt time.Time `json:"createdAt"`
}

// routeByNameLocked is the route of that name, or nil.
func (s *Cloud) routeByNameLocked(name string) *RouteRecord {
	for _, route := range s.st.Routes {
		if route.Name == name {
			return route
		}
	}
	return nil
}

// routeViewLocked is route as the APIs show it, blackhole included.
func (s *Cloud) routeViewLocked(route *RouteRecord) api.Route {
	inst := s.instanceByIDLocked(route.TargetInstance)
	return api.Route{
		Name:      route.Name,
		RouteSpec: route.RouteSpec,
		Blackhole: inst == nil || inst.State == api.StateTerminated,
		CreatedAt: route.CreatedAt,
	}
}

// ValidateRoute checks spec and returns it with its CIDR in canonical form,
// so that two spellings of one destination compare equal.
func ValidateRoute(spec api.RouteSpec) (api.RouteSpec, error) {
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
func checkRoutes(routes []*RouteRecord) error {
	names := map[string]bool{}
	for i, route := range routes {
		if route == nil || route.Name == "" {
			return fmt.Errorf("route %d has no name", i+1)
		}
		if names[route.Name] {
			return fmt.Errorf("route %d repeats the name %q", i+1, route.Name)
		}
		names[route.Name] = true
		if _, err := ValidateRoute(route.RouteSpec); err != nil {
			return fmt.Errorf("route %q: %v", route.Name, err)
		}
	}
	return nil
}

// Routes are the APIs' views of the routes of cluster, or of every route
// when cluster is empty, in creation order.
func (s *Cloud) Routes(cluster string) []api.Route {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.routesLocked(cluster)
}

func (s *Cloud) routesLocked(cluster string) []api.Route {
	out := []api.Route{}
	for _, route := range s.st.Routes {
		if cluster == "" || route.Cluster == cluster {
			out = append(out, s.routeViewLocked(route))
		}
	}
	return out
}

// AboutRoutes is the fault matcher of a listing of the routes of cluster:
// a fault's Instance may name any of them.
func (s *Cloud) AboutRoutes(cluster string) func(ref string) bool {
	return func(ref string) bool {
		return slices.ContainsFunc(s.routesLocked(cluster), func(route api.Route) bool { return route.Name == ref })
	}
}

// AboutRoute is the fault matcher of a call about the route named name to
// the instance with ID target: a fault may name the route, or the instance
// it leads to (a route's name is the CCM's, a node's UID; the instance's is
// the test's).
func (s *Cloud) AboutRoute(name, target string) func(ref string) bool {
	return func(ref string) bool {
		if ref == name {
			return true
		}
		inst := s.instanceByIDLocked(target)
		return inst != nil && RefersTo(ref, inst)
	}
}

// CreateRoute adds the route name with spec (valid, see ValidateRoute).
// It is idempotent for an identical spec, so a CCM retrying a call whose
// answer it lost is not told off; a different spec under the name is a
// conflict the caller must resolve by deleting first. An ignore fault f
// makes it answer as made and make nothing.
func (s *Cloud) CreateRoute(name string, spec api.RouteSpec, f *api.Fault) (out api.Route, created bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if route := s.routeByNameLocked(name); route != nil {
		if route.RouteSpec != spec {
			return out, false, Errorf(KindConflict, "route %q already exists with cluster %q, destinationCIDR %s, targetInstance %s; delete it first",
				name, route.Cluster, route.DestinationCIDR, route.TargetInstance)
		}
		return s.routeViewLocked(route), false, nil
	}
	inst := s.instanceByIDLocked(spec.TargetInstance)
	if inst == nil {
		return out, false, Errorf(KindInvalid, "targetInstance: instance %q not found", spec.TargetInstance)
	}
	if inst.State == api.StateTerminated {
		return out, false, Errorf(KindInvalid, "targetInstance: instance %q (%s) is terminated", inst.ID, inst.Name)
	}
	route := &RouteRecord{Name: name, RouteSpec: spec, CreatedAt: time.Now().UTC()}
	if f != nil && f.Kind == api.FaultIgnore {
		// Said to be made, never made.
		return s.routeViewLocked(route), true, nil
	}
	s.st.Routes = append(s.st.Routes, route)
	if err := s.saveLocked(); err != nil {
		return out, false, saveFailed(err)
	}
	return s.routeViewLocked(route), true, nil
}

// DeleteRoute forgets the route named name.
func (s *Cloud) DeleteRoute(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.st.Routes, func(route *RouteRecord) bool { return route.Name == name })
	if i < 0 {
		return Errorf(KindNotFound, "route %q not found", name)
	}
	s.st.Routes = slices.Delete(s.st.Routes, i, i+1)
	return saveFailed(s.saveLocked())
}
