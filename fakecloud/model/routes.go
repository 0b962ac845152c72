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

// RouteByNameLocked is the route of that name, or nil.
func (s *Cloud) RouteByNameLocked(name string) *RouteRecord {
	for _, route := range s.St.Routes {
		if route.Name == name {
			return route
		}
	}
	return nil
}

// RouteViewLocked is route as the APIs show it, blackhole included.
func (s *Cloud) RouteViewLocked(route *RouteRecord) api.Route {
	inst := s.InstanceByIDLocked(route.TargetInstance)
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
