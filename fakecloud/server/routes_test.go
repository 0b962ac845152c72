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

package server_test

import (
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func createRoute(f *servertest.Fixture, name string, spec api.RouteSpec, want int) api.Route {
	f.T.Helper()
	var rt api.Route
	f.Must(want, "PUT", api.PathRoute+name, servertest.CloudToken, spec, &rt)
	return rt
}

func TestRoutes(t *testing.T) {
	f := servertest.New(t, server.Config{})
	n1, n2 := f.Create("n1"), f.Create("n2")

	created := createRoute(f, "c1-a", api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID}, http.StatusCreated)
	if created.Name != "c1-a" || created.Cluster != "c1" || created.TargetInstance != n1.ID || created.Blackhole || created.CreatedAt.IsZero() {
		t.Errorf("created %+v", created)
	}
	// The same spec again is success, so a retry after a lost answer works;
	// an IPv6 spelling of the same prefix is the same spec.
	createRoute(f, "c1-a", api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID}, http.StatusOK)
	createRoute(f, "c1-b", api.RouteSpec{Cluster: "c1", DestinationCIDR: "fd00:0::/64", TargetInstance: n2.ID}, http.StatusCreated)
	if again := createRoute(f, "c1-b", api.RouteSpec{Cluster: "c1", DestinationCIDR: "fd00::/64", TargetInstance: n2.ID}, http.StatusOK); again.DestinationCIDR != "fd00::/64" {
		t.Errorf("destination kept as %q, want the canonical fd00::/64", again.DestinationCIDR)
	}
	createRoute(f, "c2-a", api.RouteSpec{Cluster: "c2", DestinationCIDR: "10.244.1.0/24", TargetInstance: n2.ID}, http.StatusCreated)

	conflicts := []api.RouteSpec{
		{Cluster: "c1", DestinationCIDR: "10.244.2.0/24", TargetInstance: n1.ID},
		{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n2.ID},
		{Cluster: "c2", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID},
	}
	for _, spec := range conflicts {
		r := f.Must(http.StatusConflict, "PUT", api.PathRoute+"c1-a", servertest.CloudToken, spec, nil)
		if e := r.ErrorBody(t); e.Code != api.CodeConflict || !strings.Contains(e.Message, "delete it first") {
			t.Errorf("conflicting %+v: %+v", spec, e)
		}
	}

	var c1 api.RouteList
	f.Must(http.StatusOK, "GET", api.PathRoutes+"?cluster=c1", servertest.CloudToken, nil, &c1)
	if len(c1.Routes) != 2 || c1.Routes[0].Name != "c1-a" || c1.Routes[1].Name != "c1-b" {
		t.Errorf("cluster c1 routes %+v, want c1-a and c1-b", c1.Routes)
	}
	var all api.RouteList
	f.Must(http.StatusOK, "GET", api.PathRoutes, servertest.CloudToken, nil, &all)
	if len(all.Routes) != 3 {
		t.Errorf("all routes %+v, want 3", all.Routes)
	}
	var none api.RouteList
	if r := f.Must(http.StatusOK, "GET", api.PathRoutes+"?cluster=nobody", servertest.CloudToken, nil, &none); !strings.Contains(string(r.Body), `"routes":[]`) {
		t.Errorf("empty list body %s, want an empty array", r.Body)
	}

	// A terminated target makes a blackhole, stopped does not.
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n2/stop", servertest.AdminToken, nil, nil)
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n1/terminate", servertest.AdminToken, nil, nil)
	f.Must(http.StatusOK, "GET", api.AdminPathRoutes, servertest.AdminToken, nil, &all)
	holes := map[string]bool{}
	for _, rt := range all.Routes {
		holes[rt.Name] = rt.Blackhole
	}
	if !holes["c1-a"] || holes["c1-b"] || holes["c2-a"] {
		t.Errorf("blackholes %v, want only c1-a (its target is terminated)", holes)
	}

	f.Must(http.StatusNoContent, "DELETE", api.PathRoute+"c1-a", servertest.CloudToken, nil, nil)
	f.Must(http.StatusNotFound, "DELETE", api.PathRoute+"c1-a", servertest.CloudToken, nil, nil)
	// Behind the CCM's back.
	f.Must(http.StatusNoContent, "DELETE", api.AdminPathRoute+"c1-b", servertest.AdminToken, nil, nil)
	f.Must(http.StatusNotFound, "DELETE", api.AdminPathRoute+"c1-b", servertest.AdminToken, nil, nil)
	f.Must(http.StatusOK, "GET", api.PathRoutes+"?cluster=c1", servertest.CloudToken, nil, &c1)
	if len(c1.Routes) != 0 {
		t.Errorf("cluster c1 routes after deletes: %+v", c1.Routes)
	}
}

func TestRouteRejects(t *testing.T) {
	f := servertest.New(t, server.Config{})
	live := f.Create("live")
	gone := f.Create("gone")
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"gone/terminate", servertest.AdminToken, nil, nil)
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
			r := f.Must(http.StatusBadRequest, "PUT", api.PathRoute+"r", servertest.CloudToken, tt.body, nil)
			if e := r.ErrorBody(t); e.Code != api.CodeInvalid || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want Invalid naming %q", e, tt.msg)
			}
		})
	}
	var all api.RouteList
	f.Must(http.StatusOK, "GET", api.AdminPathRoutes, servertest.AdminToken, nil, &all)
	if len(all.Routes) != 0 {
		t.Errorf("rejected routes were created: %+v", all.Routes)
	}
}

// An ignore fault on CreateRoute: the call succeeds and the table does not
// change, a cloud whose route silently never carries traffic.
func TestCreateRouteIgnored(t *testing.T) {
	f := servertest.New(t, server.Config{})
	n1 := f.Create("n1")
	f.AddFault(api.Fault{Operation: api.OpCreateRoute, Kind: api.FaultIgnore, Field: api.IgnoreRoute})
	got := createRoute(f, "c1-a", api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: n1.ID}, http.StatusCreated)
	if got.Name != "c1-a" || got.DestinationCIDR != "10.244.1.0/24" {
		t.Errorf("answer %+v, want the route as asked", got)
	}
	var all api.RouteList
	f.Must(http.StatusOK, "GET", api.PathRoutes, servertest.CloudToken, nil, &all)
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
