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

package neutron

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// Neutron's one router, whose extra routes are fakecloud's routes: a
// route {destination, nexthop} is a route to the instance whose InternalIP
// the next hop is, and it shows that instance's address as long as the
// instance record lasts. A next hop that is no instance's address is kept
// as given and is a blackhole, as the OpenStack CCM sees it too. Its
// routes are kept under the router's id as their cluster, so they never
// mix with routes made through the native API.

const (
	osRouterID     = api.OpenStackRouterID
	osRouterPortID = "port-router-ccm-harness"
)

// osRouteName names the native record of a Neutron route: Neutron routes
// have no names, and one destination may have several next hops.
func osRouteName(dest, nexthop string) string {
	return "neutron-" + strings.ReplaceAll(dest, "/", "_") + "-via-" + nexthop
}

// routerPort is the router's interface on the tenant network, at its
// subnet's gateway: how a client finds the networks the router serves.
func (s *Front) routerPort() osPort {
	return osPort{
		ID: osRouterPortID, NetworkID: openstackjson.PrivateNetID, TenantID: openstackjson.ProjectID, ProjectID: openstackjson.ProjectID,
		MACAddress: model.MAC(osRouterID), AdminStateUp: true, Status: "ACTIVE",
		DeviceID: osRouterID, DeviceOwner: "network:router_interface",
		FixedIPs:            []osFixedIP{{SubnetID: openstackjson.PrivateSubnetID, IPAddress: s.InternalPool().Addr().Next().String()}},
		AllowedAddressPairs: []map[string]string{}, SecurityGroups: []string{}, Tags: []string{}, RevisionNumber: 1,
		CreatedAt: "2026-01-01T00:00:00Z", UpdatedAt: "2026-01-01T00:00:00Z",
	}
}

type osRoute struct {
	Destination string `json:"destination"`
	NextHop     string `json:"nexthop"`
}

// routerRoutesLocked are the router's routes, in creation order.
func (s *Front) routerRoutesLocked() []osRoute {
	out := []osRoute{}
	for _, r := range s.St.Routes {
		if r.Cluster != osRouterID {
			continue
		}
		hop := r.TargetInstance
		if inst := s.InstanceByIDLocked(r.TargetInstance); inst != nil {
			if ip := model.FirstInternalIP(inst); ip.IsValid() {
				hop = ip.String()
			}
		}
		out = append(out, osRoute{Destination: r.DestinationCIDR, NextHop: hop})
	}
	return out
}

func (s *Front) routerWireLocked() map[string]any {
	return map[string]any{
		"id": osRouterID, "name": "router1", "description": "", "status": "ACTIVE", "admin_state_up": true,
		"tenant_id": openstackjson.ProjectID, "project_id": openstackjson.ProjectID, "distributed": false, "ha": false,
		"external_gateway_info": map[string]any{"network_id": openstackjson.PublicNetID, "enable_snat": true,
			"external_fixed_ips": []osFixedIP{{SubnetID: openstackjson.PublicSubnetID, IPAddress: s.ExternalPool().Addr().Next().String()}}},
		"routes": s.routerRoutesLocked(), "availability_zones": []string{}, "tags": []string{}, "revision_number": 1,
	}
}

func (s *Front) neutronListRouters(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.routerAnswer(w, r, c, func() map[string]any {
		q := r.URL.Query()
		if (q.Get("id") != "" && q.Get("id") != osRouterID) || (q.Get("name") != "" && q.Get("name") != "router1") {
			return map[string]any{"routers": []any{}}
		}
		return map[string]any{"routers": []any{s.routerWireLocked()}}
	})
}

func (s *Front) neutronGetRouter(w http.ResponseWriter, r *http.Request, c *model.Call) {
	if id := r.PathValue("id"); id != osRouterID {
		networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Router %s could not be found.", id))
		return
	}
	s.routerAnswer(w, r, c, func() map[string]any { return map[string]any{"router": s.routerWireLocked()} })
}

// routerAnswer answers a read of the router, which lists its routes:
// operation ListRoutes.
func (s *Front) routerAnswer(w http.ResponseWriter, r *http.Request, c *model.Call, answer func() map[string]any) {
	if _, ok := neutronQuery(w, r, "id", "name"); !ok {
		return
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpListRoutes, func(ref string) bool {
		return slices.ContainsFunc(s.St.Routes, func(rt *model.RouteRecord) bool { return rt.Cluster == osRouterID && rt.Name == ref })
	}); !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	writeNeutron(w, r, answer())
}

// decodeRoutes reads {"router": {"routes": [...]}} sent to the router,
// each route checked as Neutron checks it.
func decodeRoutes(w http.ResponseWriter, r *http.Request) ([]osRoute, bool) {
	if id := r.PathValue("id"); id != osRouterID {
		networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Router %s could not be found.", id))
		return nil, false
	}
	var body struct {
		Router struct {
			Routes *[]osRoute `json:"routes"`
		} `json:"router"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Router.Routes == nil {
		networkError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Bad routes request: a body {\"router\": {\"routes\": [...]}} is required (%v)", err))
		return nil, false
	}
	out := *body.Router.Routes
	for i, rt := range out {
		p, err := netip.ParsePrefix(rt.Destination)
		if err != nil || p != p.Masked() {
			networkError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for routes. Reason: '%s' is not a valid IP subnet.", rt.Destination))
			return nil, false
		}
		if _, err := netip.ParseAddr(rt.NextHop); err != nil {
			networkError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for routes. Reason: '%s' is not a valid IP address.", rt.NextHop))
			return nil, false
		}
		out[i].Destination = p.String()
	}
	return out, true
}

// instanceAtLocked is the instance whose InternalIP addr is, or "".
func (s *Front) instanceAtLocked(addr string) string {
	for _, inst := range s.St.Instances {
		if inst.State != api.StateTerminated && model.FirstInternalIP(inst).String() == addr {
			return inst.ID
		}
	}
	return ""
}

// neutronExtraRoutes adds (add_extraroutes) or removes
// (remove_extraroutes) routes, leaving the others, and answers the router:
// operations CreateRoute and DeleteRoute. An ignore fault on CreateRoute
// answers as if the routes were added and adds none.
func (s *Front) neutronExtraRoutes(add bool) func(http.ResponseWriter, *http.Request, *model.Call) {
	return func(w http.ResponseWriter, r *http.Request, c *model.Call) {
		routes, ok := decodeRoutes(w, r)
		if !ok {
			return
		}
		op := api.OpDeleteRoute
		if add {
			op = api.OpCreateRoute
		}
		names := map[string]bool{}
		for _, rt := range routes {
			names[osRouteName(rt.Destination, rt.NextHop)] = true
		}
		f, ok := s.ApplyFault(w, r, c, op, func(ref string) bool { return names[ref] })
		if !ok {
			return
		}
		s.Mu.Lock()
		defer s.Mu.Unlock()
		if !add || f == nil || f.Kind != api.FaultIgnore {
			s.changeRoutesLocked(routes, add)
			if err := s.SaveLocked(); err != nil {
				model.SaveFailed(w, err)
				return
			}
		}
		answer := s.routerWireLocked()
		if add && f != nil && f.Kind == api.FaultIgnore {
			shown := s.routerRoutesLocked()
			for _, rt := range routes {
				if !slices.Contains(shown, rt) {
					shown = append(shown, rt)
				}
			}
			answer["routes"] = shown
		}
		model.WriteJSON(w, http.StatusOK, map[string]any{"router": answer})
	}
}

func (s *Front) changeRoutesLocked(routes []osRoute, add bool) {
	for _, rt := range routes {
		name := osRouteName(rt.Destination, rt.NextHop)
		i := slices.IndexFunc(s.St.Routes, func(r *model.RouteRecord) bool { return r.Name == name })
		switch {
		case add && i < 0:
			target := s.instanceAtLocked(rt.NextHop)
			if target == "" {
				target = rt.NextHop
			}
			s.St.Routes = append(s.St.Routes, &model.RouteRecord{Name: name, CreatedAt: time.Now().UTC(),
				RouteSpec: api.RouteSpec{Cluster: osRouterID, DestinationCIDR: rt.Destination, TargetInstance: target}})
		case !add && i >= 0:
			s.St.Routes = slices.Delete(s.St.Routes, i, i+1)
		}
	}
}

// neutronUpdateRouter replaces the router's routes (the extraroute
// extension's way, without -atomic): operation CreateRoute.
func (s *Front) neutronUpdateRouter(w http.ResponseWriter, r *http.Request, c *model.Call) {
	routes, ok := decodeRoutes(w, r)
	if !ok {
		return
	}
	f, ok := s.ApplyFault(w, r, c, api.OpCreateRoute, func(ref string) bool { return false })
	if !ok {
		return
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if f == nil || f.Kind != api.FaultIgnore {
		var gone []osRoute
		for _, rt := range s.routerRoutesLocked() {
			if !slices.Contains(routes, rt) {
				gone = append(gone, rt)
			}
		}
		s.changeRoutesLocked(gone, false)
		s.changeRoutesLocked(routes, true)
		if err := s.SaveLocked(); err != nil {
			model.SaveFailed(w, err)
			return
		}
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"router": s.routerWireLocked()})
}

// neutronUpdatePort sets a port's allowed address pairs, the one change
// to a port fakecloud emulates.
func (s *Front) neutronUpdatePort(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	var body struct {
		Port ports.UpdateOpts `json:"port"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		networkError.WriteError(w, http.StatusBadRequest, "Bad port request: "+err.Error())
		return
	}
	u := body.Port
	if u.Name != nil || u.Description != nil || u.AdminStateUp != nil || u.FixedIPs != nil || u.DeviceID != nil || u.DeviceOwner != nil || u.SecurityGroups != nil {
		networkError.WriteError(w, http.StatusBadRequest, "fakecloud emulates only allowed_address_pairs of a port update")
		return
	}
	instID := strings.TrimPrefix(id, "port-")
	s.Mu.Lock()
	defer s.Mu.Unlock()
	inst := s.InstanceByIDLocked(instID)
	if inst == nil || inst.State == api.StateTerminated || osPortID(inst.ID) != id {
		networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Port %s could not be found.", id))
		return
	}
	if u.AllowedAddressPairs != nil {
		var pairs []string
		for _, p := range *u.AllowedAddressPairs {
			pairs = append(pairs, p.IPAddress)
		}
		if s.St.AddressPairs == nil {
			s.St.AddressPairs = map[string][]string{}
		}
		s.St.AddressPairs[inst.ID] = pairs
		if len(pairs) == 0 {
			delete(s.St.AddressPairs, inst.ID)
		}
		if err := s.SaveLocked(); err != nil {
			model.SaveFailed(w, err)
			return
		}
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"port": neutronPort(model.CopyInstance(inst), s.St.AddressPairs[inst.ID])})
}
