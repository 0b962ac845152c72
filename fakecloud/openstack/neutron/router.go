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

// osRouteName names the native record of a Neutron route, which is how a
// fault names it.
func osRouteName(rt osRoute) string { return model.NeutronRouteName(rt.Destination, rt.NextHop) }

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

// wireRoutes are the router's routes as Neutron shows them.
func wireRoutes(routes []model.ExtraRoute) []osRoute {
	out := make([]osRoute, 0, len(routes))
	for _, rt := range routes {
		out = append(out, osRoute(rt))
	}
	return out
}

// modelRoutes are routes as the model takes them.
func modelRoutes(routes []osRoute) []model.ExtraRoute {
	out := make([]model.ExtraRoute, 0, len(routes))
	for _, rt := range routes {
		out = append(out, model.ExtraRoute(rt))
	}
	return out
}

// routerWire is the router with its routes.
func (s *Front) routerWire(routes []osRoute) map[string]any {
	return map[string]any{
		"id": osRouterID, "name": "router1", "description": "", "status": "ACTIVE", "admin_state_up": true,
		"tenant_id": openstackjson.ProjectID, "project_id": openstackjson.ProjectID, "distributed": false, "ha": false,
		"external_gateway_info": map[string]any{"network_id": openstackjson.PublicNetID, "enable_snat": true,
			"external_fixed_ips": []osFixedIP{{SubnetID: openstackjson.PublicSubnetID, IPAddress: s.ExternalPool().Addr().Next().String()}}},
		"routes": routes, "availability_zones": []string{}, "tags": []string{}, "revision_number": 1,
	}
}

func (s *Front) neutronListRouters(w http.ResponseWriter, r *http.Request, c *model.Call) {
	s.routerAnswer(w, r, c, func(routes []osRoute) map[string]any {
		q := r.URL.Query()
		if (q.Get("id") != "" && q.Get("id") != osRouterID) || (q.Get("name") != "" && q.Get("name") != "router1") {
			return map[string]any{"routers": []any{}}
		}
		return map[string]any{"routers": []any{s.routerWire(routes)}}
	})
}

func (s *Front) neutronGetRouter(w http.ResponseWriter, r *http.Request, c *model.Call) {
	if id := r.PathValue("id"); id != osRouterID {
		networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Router %s could not be found.", id))
		return
	}
	s.routerAnswer(w, r, c, func(routes []osRoute) map[string]any { return map[string]any{"router": s.routerWire(routes)} })
}

// routerAnswer answers a read of the router, which lists its routes:
// operation ListRoutes.
func (s *Front) routerAnswer(w http.ResponseWriter, r *http.Request, c *model.Call, answer func(routes []osRoute) map[string]any) {
	if _, ok := neutronQuery(w, r, "id", "name"); !ok {
		return
	}
	if _, ok := s.ApplyFault(w, r, c, api.OpListRoutes, s.AboutRouterRoute()); !ok {
		return
	}
	writeNeutron(w, r, answer(wireRoutes(s.RouterRoutes())))
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
			names[osRouteName(rt)] = true
		}
		f, ok := s.ApplyFault(w, r, c, op, func(ref string) bool { return names[ref] })
		if !ok {
			return
		}
		if add && f != nil && f.Kind == api.FaultIgnore {
			s.answerIgnoredRoutes(w, routes)
			return
		}
		change := s.RemoveRouterRoutes
		if add {
			change = s.AddRouterRoutes
		}
		shown, err := change(modelRoutes(routes))
		if err != nil {
			model.SaveFailed(w, err)
			return
		}
		model.WriteJSON(w, http.StatusOK, map[string]any{"router": s.routerWire(wireRoutes(shown))})
	}
}

// answerIgnoredRoutes answers an add of routes that an ignore fault
// drops: the router as if they were added, which it is not.
func (s *Front) answerIgnoredRoutes(w http.ResponseWriter, routes []osRoute) {
	shown := wireRoutes(s.RouterRoutes())
	for _, rt := range routes {
		if !slices.Contains(shown, rt) {
			shown = append(shown, rt)
		}
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"router": s.routerWire(shown)})
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
	if f != nil && f.Kind == api.FaultIgnore {
		// The router keeps its routes, and its answer shows them.
		model.WriteJSON(w, http.StatusOK, map[string]any{"router": s.routerWire(wireRoutes(s.RouterRoutes()))})
		return
	}
	shown, err := s.SetRouterRoutes(modelRoutes(routes))
	if err != nil {
		model.SaveFailed(w, err)
		return
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"router": s.routerWire(wireRoutes(shown))})
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
	instID, ok := strings.CutPrefix(id, "port-")
	if !ok {
		networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Port %s could not be found.", id))
		return
	}
	var inst api.Instance
	var pairs []string
	var err error
	if u.AllowedAddressPairs != nil {
		var set []string
		for _, p := range *u.AllowedAddressPairs {
			set = append(set, p.IPAddress)
		}
		inst, pairs, err = s.SetAddressPairs(instID, set)
	} else {
		inst, pairs, err = s.LivePort(instID)
	}
	if err != nil {
		if model.KindOf(err) == model.KindNotFound {
			networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Port %s could not be found.", id))
		} else {
			model.SaveFailed(w, err)
		}
		return
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"port": neutronPort(inst, pairs)})
}
