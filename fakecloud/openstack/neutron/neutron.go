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

// Package neutron is fakecloud's Neutron, the networking API v2.0: each
// live instance's port, the private and public networks on the cloud's
// pools, floating IPs, the one security group, and the one router whose
// extra routes are the cloud's routes (router.go). It is a front over
// package model; what it shares with the other OpenStack services is in
// openstackjson.
package neutron

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// Front is Neutron, the networking API v2.0, over the cloud.
type Front struct{ *model.Cloud }

// New is Neutron over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }

var networkError openstackjson.Dialect = func(status int, msg string) any {
	return map[string]any{"NeutronError": map[string]any{"type": openstackjson.StatusName(neutronErrors, status, "HTTPInternalServerError"), "message": msg, "detail": ""}}
}

// neutronErrors names an error status as Neutron does.
var neutronErrors = map[int]string{
	http.StatusBadRequest: "HTTPBadRequest", http.StatusNotFound: "HTTPNotFound",
	http.StatusConflict: "HTTPConflict", http.StatusTooManyRequests: "HTTPTooManyRequests",
	http.StatusNotImplemented: "HTTPNotImplemented",
}

// Register adds Neutron's routes.
func (s *Front) Register(r openstackjson.Router) {
	r.Open("GET "+openstackjson.Network+"/{$}", "", openstackjson.Versions("v2.0", "", openstackjson.Network+"/v2.0/"))
	r.Handle("GET "+openstackjson.Network+"/v2.0/ports", networkError, api.OpListInstances, s.neutronListPorts)
	r.Handle("GET "+openstackjson.Network+"/v2.0/ports/{id}", networkError, api.OpGetInstance, s.neutronGetPort)
	r.Handle("GET "+openstackjson.Network+"/v2.0/networks", networkError, "", s.neutronListNetworks)
	r.Handle("GET "+openstackjson.Network+"/v2.0/networks/{id}", networkError, "", s.neutronGetNetwork)
	r.Handle("GET "+openstackjson.Network+"/v2.0/subnets", networkError, "", s.neutronListSubnets)
	r.Handle("GET "+openstackjson.Network+"/v2.0/subnets/{id}", networkError, "", s.neutronGetSubnet)
	r.Handle("GET "+openstackjson.Network+"/v2.0/floatingips", networkError, "", s.neutronListFloatingIPs)
	r.Handle("GET "+openstackjson.Network+"/v2.0/extensions", networkError, "", s.neutronExtensions)
	r.Handle("GET "+openstackjson.Network+"/v2.0/security-groups", networkError, "", s.neutronListSecurityGroups)
	r.Handle("PUT "+openstackjson.Network+"/v2.0/ports/{id}", networkError, "", s.neutronUpdatePort)
	r.Handle("GET "+openstackjson.Network+"/v2.0/routers", networkError, api.OpListRoutes, s.neutronListRouters)
	r.Handle("GET "+openstackjson.Network+"/v2.0/routers/{id}", networkError, api.OpListRoutes, s.neutronGetRouter)
	r.Handle("PUT "+openstackjson.Network+"/v2.0/routers/{id}", networkError, api.OpCreateRoute, s.neutronUpdateRouter)
	r.Handle("PUT "+openstackjson.Network+"/v2.0/routers/{id}/add_extraroutes", networkError, api.OpCreateRoute, s.neutronExtraRoutes(true))
	r.Handle("PUT "+openstackjson.Network+"/v2.0/routers/{id}/remove_extraroutes", networkError, api.OpDeleteRoute, s.neutronExtraRoutes(false))
	r.Handle(openstackjson.Network+"/", networkError, "", openstackjson.NotFound(networkError))
}

// Neutron, networking API v2.0: a tenant network "private" on fakecloud's
// internal pool, where each live instance has one port holding its
// InternalIPs, and an external network "public" on the external pool,
// whose floating IPs are the instances' ExternalIPs.

// osSecGroupID is the one security group, default.
const osSecGroupID = "sg-default"

func osPortID(instanceID string) string { return "port-" + instanceID }

type osFixedIP struct {
	SubnetID  string `json:"subnet_id"`
	IPAddress string `json:"ip_address"`
}

type osPort struct {
	ID                  string              `json:"id"`
	Name                string              `json:"name"`
	Description         string              `json:"description"`
	NetworkID           string              `json:"network_id"`
	TenantID            string              `json:"tenant_id"`
	ProjectID           string              `json:"project_id"`
	MACAddress          string              `json:"mac_address"`
	AdminStateUp        bool                `json:"admin_state_up"`
	Status              string              `json:"status"`
	DeviceID            string              `json:"device_id"`
	DeviceOwner         string              `json:"device_owner"`
	FixedIPs            []osFixedIP         `json:"fixed_ips"`
	AllowedAddressPairs []map[string]string `json:"allowed_address_pairs"`
	SecurityGroups      []string            `json:"security_groups"`
	PortSecurityEnabled bool                `json:"port_security_enabled"`
	Tags                []string            `json:"tags"`
	RevisionNumber      int                 `json:"revision_number"`
	CreatedAt           string              `json:"created_at"`
	UpdatedAt           string              `json:"updated_at"`
}

// neutronPort is the port of inst, with the allowed address pairs set on
// it. A stopped server's port is DOWN, as its virtual interface is
// unplugged.
func neutronPort(inst api.Instance, pairs []string) osPort {
	status := "ACTIVE"
	if inst.State != api.StateRunning {
		status = "DOWN"
	}
	p := osPort{
		ID: osPortID(inst.ID), NetworkID: openstackjson.PrivateNetID, TenantID: openstackjson.ProjectID, ProjectID: openstackjson.ProjectID,
		MACAddress: model.MAC(inst.ID), AdminStateUp: true, Status: status,
		DeviceID: inst.ID, DeviceOwner: "compute:" + inst.Zone,
		FixedIPs: []osFixedIP{}, AllowedAddressPairs: []map[string]string{},
		SecurityGroups: []string{osSecGroupID}, PortSecurityEnabled: true, Tags: []string{},
		RevisionNumber: 1,
		CreatedAt:      inst.CreatedAt.UTC().Format(time.RFC3339),
		UpdatedAt:      inst.CreatedAt.UTC().Format(time.RFC3339),
	}
	for _, a := range inst.Addresses {
		if a.Type == api.AddressInternalIP {
			p.FixedIPs = append(p.FixedIPs, osFixedIP{SubnetID: openstackjson.PrivateSubnetID, IPAddress: a.Address})
		}
	}
	for _, pair := range pairs {
		p.AllowedAddressPairs = append(p.AllowedAddressPairs, map[string]string{"ip_address": pair, "mac_address": p.MACAddress})
	}
	return p
}

// hasFixedIP reports whether p has the fixed IP a fixed_ips filter
// ("ip_address=10.0.0.5") names.
func hasFixedIP(p osPort, filter string) bool {
	ip, ok := strings.CutPrefix(filter, "ip_address=")
	return ok && slices.ContainsFunc(p.FixedIPs, func(f osFixedIP) bool { return f.IPAddress == ip })
}

func (s *Front) neutronListPorts(w http.ResponseWriter, r *http.Request, c *model.Call) {
	q, ok := neutronQuery(w, r, "device_id", "network_id", "id", "fixed_ips")
	if !ok {
		return
	}
	matchPort := func(p osPort) bool {
		return (q["device_id"] == "" || q["device_id"] == p.DeviceID) &&
			(q["network_id"] == "" || q["network_id"] == p.NetworkID) &&
			(q["id"] == "" || q["id"] == p.ID) &&
			(q["fixed_ips"] == "" || hasFixedIP(p, q["fixed_ips"]))
	}
	if q["device_id"] == osRouterID {
		ports := []osPort{}
		if rp := s.routerPort(); matchPort(rp) {
			ports = append(ports, rp)
		}
		writeNeutron(w, r, map[string]any{"ports": ports})
		return
	}
	c.Instance = q["device_id"]
	pairs := s.AddressPairs()
	match := func(inst api.Instance) bool { return matchPort(neutronPort(inst, pairs[inst.ID])) }
	// A port carries its instance's addresses: the instance faults apply.
	insts, f, ok := s.ListLiveInstances(w, r, c, match)
	if !ok {
		return
	}
	out := []osPort{}
	for _, inst := range insts {
		model.CorruptInstance(f, &inst)
		out = append(out, neutronPort(inst, pairs[inst.ID]))
	}
	writeNeutron(w, r, map[string]any{"ports": out})
}

func (s *Front) neutronGetPort(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	instID := id[min(len(id), len("port-")):]
	c.Instance = instID
	f, ok := s.ApplyFault(w, r, c, api.OpGetInstance, s.AboutServer(instID))
	if !ok {
		return
	}
	inst := s.LiveInstance(instID)
	if inst == nil || osPortID(inst.ID) != id {
		networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Port %s could not be found.", id))
		return
	}
	model.CorruptInstance(f, inst)
	writeNeutron(w, r, map[string]any{"port": neutronPort(*inst, s.AddressPairs()[inst.ID])})
}

func (s *Front) osNetworks() []map[string]any {
	net := func(id, name, subnet string, external bool) map[string]any {
		return map[string]any{
			"id": id, "name": name, "status": "ACTIVE", "admin_state_up": true, "shared": false,
			"subnets": []string{subnet}, "router:external": external, "mtu": 1500,
			"tenant_id": openstackjson.ProjectID, "project_id": openstackjson.ProjectID, "availability_zones": s.Zones(),
			"port_security_enabled": true, "tags": []string{}, "description": "",
		}
	}
	return []map[string]any{
		net(openstackjson.PrivateNetID, openstackjson.NetworkName, openstackjson.PrivateSubnetID, false),
		net(openstackjson.PublicNetID, "public", openstackjson.PublicSubnetID, true),
	}
}

func (s *Front) osSubnets() []map[string]any {
	subnet := func(id, name, network string, cidr netip.Prefix) map[string]any {
		version := 4
		if cidr.Addr().Is6() {
			version = 6
		}
		return map[string]any{
			"id": id, "name": name, "network_id": network, "cidr": cidr.String(), "ip_version": version,
			"gateway_ip": cidr.Addr().Next().String(), "enable_dhcp": true, "dns_nameservers": []string{},
			"allocation_pools": []map[string]string{}, "host_routes": []map[string]string{},
			"tenant_id": openstackjson.ProjectID, "project_id": openstackjson.ProjectID, "tags": []string{}, "description": "",
		}
	}
	return []map[string]any{
		subnet(openstackjson.PrivateSubnetID, openstackjson.NetworkName+"-subnet", openstackjson.PrivateNetID, s.InternalPool()),
		subnet(openstackjson.PublicSubnetID, "public-subnet", openstackjson.PublicNetID, s.ExternalPool()),
	}
}

// neutronList answers a list of objects filtered by the query's known
// fields, compared as strings.
func neutronList(w http.ResponseWriter, r *http.Request, key string, objs []map[string]any, filters ...string) {
	q, ok := neutronQuery(w, r, filters...)
	if !ok {
		return
	}
	out := []map[string]any{}
	for _, o := range objs {
		keep := true
		for k, v := range q {
			keep = keep && fmt.Sprint(o[k]) == v
		}
		if keep {
			out = append(out, o)
		}
	}
	writeNeutron(w, r, map[string]any{key: out})
}

func neutronGet(w http.ResponseWriter, r *http.Request, key, what string, objs []map[string]any) {
	id := r.PathValue("id")
	for _, o := range objs {
		if o["id"] == id {
			writeNeutron(w, r, map[string]any{key: o})
			return
		}
	}
	networkError.WriteError(w, http.StatusNotFound, fmt.Sprintf("%s %s could not be found.", what, id))
}

func (s *Front) neutronListNetworks(w http.ResponseWriter, r *http.Request, c *model.Call) {
	neutronList(w, r, "networks", s.osNetworks(), "id", "name", "router:external")
}

func (s *Front) neutronGetNetwork(w http.ResponseWriter, r *http.Request, c *model.Call) {
	neutronGet(w, r, "network", "Network", s.osNetworks())
}

func (s *Front) neutronListSubnets(w http.ResponseWriter, r *http.Request, c *model.Call) {
	neutronList(w, r, "subnets", s.osSubnets(), "id", "name", "network_id")
}

func (s *Front) neutronGetSubnet(w http.ResponseWriter, r *http.Request, c *model.Call) {
	neutronGet(w, r, "subnet", "Subnet", s.osSubnets())
}

// neutronListFloatingIPs lists a floating IP for each ExternalIP of a
// live instance, bound to its port.
func (s *Front) neutronListFloatingIPs(w http.ResponseWriter, r *http.Request, c *model.Call) {
	insts := s.LiveInstances()
	var fips []map[string]any
	for _, inst := range insts {
		fixed := ""
		for _, a := range inst.Addresses {
			if a.Type == api.AddressInternalIP && fixed == "" {
				fixed = a.Address
			}
		}
		n := 0
		for _, a := range inst.Addresses {
			if a.Type != api.AddressExternalIP {
				continue
			}
			n++
			fips = append(fips, map[string]any{
				"id": fmt.Sprintf("fip-%s-%d", inst.ID, n), "floating_ip_address": a.Address,
				"fixed_ip_address": fixed, "port_id": osPortID(inst.ID), "floating_network_id": openstackjson.PublicNetID,
				"router_id": nil, "status": "ACTIVE", "tenant_id": openstackjson.ProjectID, "project_id": openstackjson.ProjectID,
				"description": "", "tags": []string{},
			})
		}
	}
	neutronList(w, r, "floatingips", fips, "port_id", "floating_ip_address", "floating_network_id")
}

// neutronExtensions lists the extensions fakecloud emulates: a client
// that checks for one before using it (the OpenStack CCM checks
// extraroute before claiming routes) sees what it can rely on.
func (s *Front) neutronExtensions(w http.ResponseWriter, r *http.Request, c *model.Call) {
	out := []map[string]any{}
	for _, e := range [][2]string{
		{"external-net", "Neutron external network"},
		{"port-security", "Port Security"},
		{"security-group", "security-group"},
		{"allowed-address-pairs", "Allowed Address Pairs"},
		{"router", "Neutron L3 Router"},
		{"extraroute", "Neutron Extra Route"},
		{"extraroute-atomic", "Atomically add/remove extra routes"},
	} {
		out = append(out, map[string]any{"alias": e[0], "name": e[1], "description": e[1], "updated": "2013-01-01T00:00:00-00:00", "links": []string{}})
	}
	writeNeutron(w, r, map[string]any{"extensions": out})
}

// neutronListSecurityGroups lists the one security group fakecloud has,
// "default"; a lookup by any other name finds none, as the OpenStack CCM
// expects when it cleans up a group it never made.
func (s *Front) neutronListSecurityGroups(w http.ResponseWriter, r *http.Request, c *model.Call) {
	neutronList(w, r, "security_groups", []map[string]any{{
		"id": osSecGroupID, "name": "default", "description": "Default security group", "stateful": true,
		"tenant_id": openstackjson.ProjectID, "project_id": openstackjson.ProjectID, "security_group_rules": []any{}, "tags": []string{},
	}}, "id", "name")
}

// neutronQuery is openstackjson.Query in Neutron's shape: every resource also takes
// fields=, repeatable, which picks the attributes shown of each object
// (the openstack CLI asks for its columns so); the rest are filters.
func neutronQuery(w http.ResponseWriter, r *http.Request, known ...string) (map[string]string, bool) {
	q, ok := openstackjson.Query(w, r, networkError, append(known, "fields")...)
	delete(q, "fields")
	return q, ok
}

// writeNeutron answers body with each object in it cut to the fields the
// query asks for, as Neutron does; whole without fields=.
func writeNeutron(w http.ResponseWriter, r *http.Request, body map[string]any) {
	fields := r.URL.Query()["fields"]
	if len(fields) == 0 {
		model.WriteJSON(w, http.StatusOK, body)
		return
	}
	data, err := json.Marshal(body)
	if err != nil {
		networkError.WriteError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var generic map[string]any
	if err := json.Unmarshal(data, &generic); err != nil {
		networkError.WriteError(w, http.StatusInternalServerError, err.Error())
		return
	}
	cut := func(o any) any {
		m, ok := o.(map[string]any)
		if !ok {
			return o
		}
		out := map[string]any{}
		for _, f := range fields {
			if v, ok := m[f]; ok {
				out[f] = v
			}
		}
		return out
	}
	for k, v := range generic {
		switch v := v.(type) {
		case []any:
			for i := range v {
				v[i] = cut(v[i])
			}
		case map[string]any:
			generic[k] = cut(v)
		}
	}
	model.WriteJSON(w, http.StatusOK, generic)
}
