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
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

func (f *fixture) createRoute(name string, spec api.RouteSpec, want int) api.Route {
	f.t.Helper()
	var rt api.Route
	f.must(want, "PUT", api.PathRoute+name, cloudToken, spec, &rt)
	return rt
}

func TestRoutes(t *testing.T) {
	f := newFixture(t, Config{})
	n1, n2 := f.create("n1"), f.create("n2")

	created := f.createRoute("c1-a", api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID}, http.StatusCreated)
	if created.Name != "c1-a" || created.Cluster != "c1" || created.TargetInstance != n1.ID || created.Blackhole || created.CreatedAt.IsZero() {
		t.Errorf("created %+v", created)
	}
	// The same spec again is success, so a retry after a lost answer works;
	// an IPv6 spelling of the same prefix is the same spec.
	f.createRoute("c1-a", api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID}, http.StatusOK)
	f.createRoute("c1-b", api.RouteSpec{Cluster: "c1", DestinationCIDR: "fd00:0::/64", TargetInstance: n2.ID}, http.StatusCreated)
	if again := f.createRoute("c1-b", api.RouteSpec{Cluster: "c1", DestinationCIDR: "fd00::/64", TargetInstance: n2.ID}, http.StatusOK); again.DestinationCIDR != "fd00::/64" {
		t.Errorf("destination kept as %q, want the canonical fd00::/64", again.DestinationCIDR)
	}
	f.createRoute("c2-a", api.RouteSpec{Cluster: "c2", DestinationCIDR: "10.244.1.0/24", TargetInstance: n2.ID}, http.StatusCreated)

	conflicts := []api.RouteSpec{
		{Cluster: "c1", DestinationCIDR: "10.244.2.0/24", TargetInstance: n1.ID},
		{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n2.ID},
		{Cluster: "c2", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID},
	}
	for _, spec := range conflicts {
		r := f.must(http.StatusConflict, "PUT", api.PathRoute+"c1-a", cloudToken, spec, nil)
		if e := r.errorBody(t); e.Code != api.CodeConflict || !strings.Contains(e.Message, "delete it first") {
			t.Errorf("conflicting %+v: %+v", spec, e)
		}
	}

	var c1 api.RouteList
	f.must(http.StatusOK, "GET", api.PathRoutes+"?cluster=c1", cloudToken, nil, &c1)
	if len(c1.Routes) != 2 || c1.Routes[0].Name != "c1-a" || c1.Routes[1].Name != "c1-b" {
		t.Errorf("cluster c1 routes %+v, want c1-a and c1-b", c1.Routes)
	}
	var all api.RouteList
	f.must(http.StatusOK, "GET", api.PathRoutes, cloudToken, nil, &all)
	if len(all.Routes) != 3 {
		t.Errorf("all routes %+v, want 3", all.Routes)
	}
	var none api.RouteList
	if r := f.must(http.StatusOK, "GET", api.PathRoutes+"?cluster=nobody", cloudToken, nil, &none); !strings.Contains(string(r.body), `"routes":[]`) {
		t.Errorf("empty list body %s, want an empty array", r.body)
	}

	// A terminated target makes a blackhole, stopped does not.
	f.must(http.StatusOK, "POST", api.AdminPathInstance+"n2/stop", adminToken, nil, nil)
	f.must(http.StatusOK, "POST", api.AdminPathInstance+"n1/terminate", adminToken, nil, nil)
	f.must(http.StatusOK, "GET", api.AdminPathRoutes, adminToken, nil, &all)
	holes := map[string]bool{}
	for _, rt := range all.Routes {
		holes[rt.Name] = rt.Blackhole
	}
	if !holes["c1-a"] || holes["c1-b"] || holes["c2-a"] {
		t.Errorf("blackholes %v, want only c1-a (its target is terminated)", holes)
	}

	f.must(http.StatusNoContent, "DELETE", api.PathRoute+"c1-a", cloudToken, nil, nil)
	f.must(http.StatusNotFound, "DELETE", api.PathRoute+"c1-a", cloudToken, nil, nil)
	// Behind the CCM's back.
	f.must(http.StatusNoContent, "DELETE", api.AdminPathRoute+"c1-b", adminToken, nil, nil)
	f.must(http.StatusNotFound, "DELETE", api.AdminPathRoute+"c1-b", adminToken, nil, nil)
	f.must(http.StatusOK, "GET", api.PathRoutes+"?cluster=c1", cloudToken, nil, &c1)
	if len(c1.Routes) != 0 {
		t.Errorf("cluster c1 routes after deletes: %+v", c1.Routes)
	}
}

func TestRouteRejects(t *testing.T) {
	f := newFixture(t, Config{})
	live := f.create("live")
	gone := f.create("gone")
	f.must(http.StatusOK, "POST", api.AdminPathInstance+"gone/terminate", adminToken, nil, nil)
	tests := []struct {
		name string
		body any
		msg  string
	}{
		{"no cluster", api.RouteSpec{DestinationCIDR: "10.0.0.0/24", TargetInstance: live.ID}, "cluster"},
		{"no target", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.0/24"}, "targetInstance"},
		{"bad CIDR", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.0", TargetInstance: live.ID}, "destinationCIDR"},
		{"host bits", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.1/24", TargetInstance: live.ID}, "did you mean 10.0.0.0/24"},
		{"unknown instance", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.0/24", TargetInstance: "i-000000000000"}, `instance "i-000000000000" not found`},
		{"instance by name", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.0/24", TargetInstance: "live"}, "not found"},
		{"terminated instance", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.0/24", TargetInstance: gone.ID}, "terminated"},
		{"unknown field", `{"cluster":"c","destination":"10.0.0.0/24"}`, `unknown field "destination"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.must(http.StatusBadRequest, "PUT", api.PathRoute+"r", cloudToken, tt.body, nil)
			if e := r.errorBody(t); e.Code != api.CodeInvalid || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want Invalid naming %q", e, tt.msg)
			}
		})
	}
	var all api.RouteList
	f.must(http.StatusOK, "GET", api.AdminPathRoutes, adminToken, nil, &all)
	if len(all.Routes) != 0 {
		t.Errorf("rejected routes were created: %+v", all.Routes)
	}
}

// An ignore fault on CreateRoute: the call succeeds and the table does not
// change, a cloud whose route silently never carries traffic.
func TestCreateRouteIgnored(t *testing.T) {
	f := newFixture(t, Config{})
	n1 := f.create("n1")
	f.addFault(api.Fault{Operation: api.OpCreateRoute, Kind: api.FaultIgnore, Field: api.IgnoreRoute})
	got := f.createRoute("c1-a", api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID}, http.StatusCreated)
	if got.Name != "c1-a" || got.DestinationCIDR != "10.244.1.0/24" {
		t.Errorf("answer %+v, want the route as asked", got)
	}
	var all api.RouteList
	f.must(http.StatusOK, "GET", api.PathRoutes, cloudToken, nil, &all)
	if len(all.Routes) != 0 {
		t.Errorf("routes %+v, want none stored", all.Routes)
	}
	for _, bad := range []api.Fault{
		{Operation: api.OpCreateRoute, Kind: api.FaultIgnore, Field: api.IgnoreBackends},
		{Operation: api.OpDeleteRoute, Kind: api.FaultIgnore, Field: api.IgnoreRoute},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("fault %+v validated", bad)
		}
	}
}
