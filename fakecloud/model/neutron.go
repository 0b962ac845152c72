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
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Neutron's part of the cloud: the allowed address pairs of each live
// instance's port, and the extra routes of its one router, which are
// cloud routes kept under the router's ID as their cluster (so they never
// mix with routes made through the native API). Each operation takes the
// lock and answers with copies.

// AddressPairs are the allowed address pairs set on each instance's port,
// by instance ID.
func (s *Cloud) AddressPairs() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for id, pairs := range s.st.AddressPairs {
		out[id] = slices.Clone(pairs)
	}
	return out
}

// LivePort is the live instance id and the address pairs of its port;
// KindNotFound for an instance terminated or never had.
func (s *Cloud) LivePort(id string) (api.Instance, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.portInstanceLocked(id)
	if err != nil {
		return api.Instance{}, nil, err
	}
	return CopyInstance(inst), slices.Clone(s.st.AddressPairs[id]), nil
}

// SetAddressPairs replaces the allowed address pairs of the port of the
// live instance id (none: it has none) and returns the instance and its
// pairs as set.
func (s *Cloud) SetAddressPairs(id string, pairs []string) (api.Instance, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, err := s.portInstanceLocked(id)
	if err != nil {
		return api.Instance{}, nil, err
	}
	if s.st.AddressPairs == nil {
		s.st.AddressPairs = map[string][]string{}
	}
	s.st.AddressPairs[id] = slices.Clone(pairs)
	if len(pairs) == 0 {
		delete(s.st.AddressPairs, id)
	}
	if err := s.saveLocked(); err != nil {
		return api.Instance{}, nil, saveFailed(err)
	}
	return CopyInstance(inst), slices.Clone(s.st.AddressPairs[id]), nil
}

func (s *Cloud) portInstanceLocked(id string) (*api.Instance, error) {
	inst := s.instanceByIDLocked(id)
	if inst == nil || inst.State == api.StateTerminated {
		return nil, Errorf(KindNotFound, "instance %s not found", id)
	}
	return inst, nil
}

// ExtraRoute is a route of Neutron's router: a destination CIDR, in
// canonical form, and the address of its next hop.
type ExtraRoute struct {
	Destination string
	NextHop     string
}

// NeutronRouteName names the record of a router's route: Neutron routes
// have no names, and one destination may have several next hops. Faults
// name a route by it.
func NeutronRouteName(dest, nexthop string) string {
	return "neutron-" + strings.ReplaceAll(dest, "/", "_") + "-via-" + nexthop
}

// RouterRoutes are the router's routes, in creation order. A route shows
// its target instance's address as long as the instance record lasts;
// one whose next hop was no instance's shows it as given.
func (s *Cloud) RouterRoutes() []ExtraRoute {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.routerRoutesLocked()
}

// AboutRouterRoute is the fault matcher of a read of the router: a
// fault's Instance names one of its routes. It runs under the lock, as
// ApplyFault asks it.
func (s *Cloud) AboutRouterRoute() func(ref string) bool {
	return func(ref string) bool {
		return slices.ContainsFunc(s.st.Routes, func(rt *RouteRecord) bool { return rt.Cluster == api.OpenStackRouterID && rt.Name == ref })
	}
}

// AddRouterRoutes adds the routes the router does not have yet and
// returns its routes as they are then.
func (s *Cloud) AddRouterRoutes(routes []ExtraRoute) ([]ExtraRoute, error) {
	return s.changeRouterRoutes(func() { s.addRouterRoutesLocked(routes) })
}

// RemoveRouterRoutes removes those of the routes the router has, and
// returns its routes as they are then.
func (s *Cloud) RemoveRouterRoutes(routes []ExtraRoute) ([]ExtraRoute, error) {
	return s.changeRouterRoutes(func() { s.removeRouterRoutesLocked(routes) })
}

// SetRouterRoutes replaces the router's routes with routes, keeping the
// records of those it had already, and returns them as they are then.
func (s *Cloud) SetRouterRoutes(routes []ExtraRoute) ([]ExtraRoute, error) {
	return s.changeRouterRoutes(func() {
		var gone []ExtraRoute
		for _, rt := range s.routerRoutesLocked() {
			if !slices.Contains(routes, rt) {
				gone = append(gone, rt)
			}
		}
		s.removeRouterRoutesLocked(gone)
		s.addRouterRoutesLocked(routes)
	})
}

// changeRouterRoutes makes change under the lock and saves the state.
func (s *Cloud) changeRouterRoutes(change func()) ([]ExtraRoute, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change()
	if err := s.saveLocked(); err != nil {
		return nil, saveFailed(err)
	}
	return s.routerRoutesLocked(), nil
}

func (s *Cloud) routerRoutesLocked() []ExtraRoute {
	out := []ExtraRoute{}
	for _, r := range s.st.Routes {
		if r.Cluster != api.OpenStackRouterID {
			continue
		}
		hop := r.TargetInstance
		if inst := s.instanceByIDLocked(r.TargetInstance); inst != nil {
			if ip := FirstInternalIP(inst); ip.IsValid() {
				hop = ip.String()
			}
		}
		out = append(out, ExtraRoute{Destination: r.DestinationCIDR, NextHop: hop})
	}
	return out
}

// addRouterRoutesLocked records each new route as a route to the live
// instance whose InternalIP its next hop is, else to the next hop as
// given: a blackhole, as the OpenStack CCM sees it too.
func (s *Cloud) addRouterRoutesLocked(routes []ExtraRoute) {
	for _, rt := range routes {
		name := NeutronRouteName(rt.Destination, rt.NextHop)
		if s.routeByNameLocked(name) != nil {
			continue
		}
		target := s.nextHopInstanceLocked(rt.NextHop)
		if target == "" {
			target = rt.NextHop
		}
		s.st.Routes = append(s.st.Routes, &RouteRecord{Name: name, CreatedAt: time.Now().UTC(),
			RouteSpec: api.RouteSpec{Cluster: api.OpenStackRouterID, DestinationCIDR: rt.Destination, TargetInstance: target}})
	}
}

func (s *Cloud) removeRouterRoutesLocked(routes []ExtraRoute) {
	for _, rt := range routes {
		name := NeutronRouteName(rt.Destination, rt.NextHop)
		if i := slices.IndexFunc(s.st.Routes, func(r *RouteRecord) bool { return r.Name == name }); i >= 0 {
			s.st.Routes = slices.Delete(s.st.Routes, i, i+1)
		}
	}
}

// nextHopInstanceLocked is the live instance whose InternalIP addr is, or "".
func (s *Cloud) nextHopInstanceLocked(addr string) string {
	for _, inst := range s.st.Instances {
		if inst.State != api.StateTerminated && FirstInternalIP(inst).String() == addr {
			return inst.ID
		}
	}
	return ""
}
