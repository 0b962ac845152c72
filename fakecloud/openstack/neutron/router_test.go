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

package neutron_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/extraroutes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestNeutronRouter(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	_, network := f.OSClients()
	ctx := context.Background()

	// The CCM finds the router's networks by its ports, then a node's port
	// by its fixed IP on them.
	rp, err := ports.List(network, ports.ListOpts{DeviceID: api.OpenStackRouterID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rports, _ := ports.ExtractPorts(rp)
	if len(rports) != 1 || rports[0].NetworkID != openstackjson.PrivateNetID {
		t.Fatalf("router ports %+v, want one on %s", rports, openstackjson.PrivateNetID)
	}
	pp, err := ports.List(network, ports.ListOpts{NetworkID: openstackjson.PrivateNetID, FixedIPs: []ports.FixedIPOpts{{IPAddress: servertest.AddrOf(a)}}}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nports, _ := ports.ExtractPorts(pp)
	if len(nports) != 1 || nports[0].DeviceID != a.ID {
		t.Fatalf("ports by fixed IP %+v, want node-a's", nports)
	}

	route := []routers.Route{{DestinationCIDR: "10.244.1.0/24", NextHop: servertest.AddrOf(a)}}
	if _, err := extraroutes.Add(ctx, network, api.OpenStackRouterID, extraroutes.Opts{Routes: &route}).Extract(); err != nil {
		t.Fatal(err)
	}
	router, err := routers.Get(ctx, network, api.OpenStackRouterID).Extract()
	if err != nil || len(router.Routes) != 1 || router.Routes[0] != route[0] {
		t.Fatalf("router %+v (%v), want the route", router, err)
	}
	var native api.RouteList
	f.Must(http.StatusOK, "GET", api.AdminPathRoutes, servertest.AdminToken, nil, &native)
	if len(native.Routes) != 1 || native.Routes[0].TargetInstance != a.ID || native.Routes[0].DestinationCIDR != "10.244.1.0/24" || native.Routes[0].Blackhole {
		t.Errorf("native routes %+v, want one to node-a", native.Routes)
	}

	pairs := []ports.AddressPair{{IPAddress: "10.244.1.0/24"}}
	p, err := ports.Update(ctx, network, nports[0].ID, ports.UpdateOpts{AllowedAddressPairs: &pairs}).Extract()
	if err != nil || len(p.AllowedAddressPairs) != 1 || p.AllowedAddressPairs[0].IPAddress != "10.244.1.0/24" {
		t.Errorf("port update: %+v %v", p, err)
	}

	// An ignore fault: the router answers with the route, and has none.
	f.AddFault(api.Fault{Operation: api.OpCreateRoute, Kind: api.FaultIgnore, Field: api.IgnoreRoute, Count: 1})
	route2 := []routers.Route{{DestinationCIDR: "10.244.2.0/24", NextHop: servertest.AddrOf(a)}}
	if r, err := extraroutes.Add(ctx, network, api.OpenStackRouterID, extraroutes.Opts{Routes: &route2}).Extract(); err != nil || len(r.Routes) != 2 {
		t.Fatalf("ignored add: %+v %v, want both routes shown", r, err)
	}
	if router, _ := routers.Get(ctx, network, api.OpenStackRouterID).Extract(); len(router.Routes) != 1 {
		t.Errorf("after an ignored add: %+v, want one route", router.Routes)
	}
	if _, err := extraroutes.Remove(ctx, network, api.OpenStackRouterID, extraroutes.Opts{Routes: &route}).Extract(); err != nil {
		t.Fatal(err)
	}
	if router, _ := routers.Get(ctx, network, api.OpenStackRouterID).Extract(); len(router.Routes) != 0 {
		t.Errorf("after remove: %+v", router.Routes)
	}
	bad := []routers.Route{{DestinationCIDR: "10.244.1.1/24", NextHop: servertest.AddrOf(a)}}
	if _, err := extraroutes.Add(ctx, network, api.OpenStackRouterID, extraroutes.Opts{Routes: &bad}).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Errorf("host bits: %v, want 400", err)
	}
}
