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

package cloudprovider

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

func TestRoutes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	n1 := e.create(t, api.CreateInstanceRequest{Name: "n1"})
	e.create(t, api.CreateInstanceRequest{Name: "n2"})
	routes, _ := e.cloud.Routes()

	create := func(hint, node, cidr string) error {
		return routes.CreateRoute(ctx, cluster, hint, &cloudprovider.Route{Name: "ignored", TargetNode: types.NodeName(node), DestinationCIDR: cidr})
	}
	if err := create("uid-1", "n1", "10.244.1.0/24"); err != nil {
		t.Fatalf("CreateRoute: %v", err)
	}
	if err := create("uid-1", "n1", "10.244.1.0/24"); err != nil {
		t.Errorf("CreateRoute again: %v, want success for the same route", err)
	}
	if err := create("uid-2", "n2", "10.244.2.0/24"); err != nil {
		t.Fatal(err)
	}
	// A dual-stack node's second pod CIDR: the same name hint, its own
	// route.
	if err := create("uid-2", "n2", "fd00:10:244:2::/64"); err != nil {
		t.Errorf("CreateRoute of a node's IPv6 pod CIDR beside its IPv4 one: %v", err)
	}
	if err := create("uid-9", "ghost", "10.244.9.0/24"); err == nil || !strings.Contains(err.Error(), `node "ghost"`) {
		t.Errorf("CreateRoute to a node with no instance: %v", err)
	}
	if err := create("uid-1", "n2", "10.244.1.0/24"); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("CreateRoute with a taken name: %v, want the cloud's conflict", err)
	}
	// Another cluster's route under the same cloud is not this cluster's.
	if _, err := e.cloud.api.CreateRoute(ctx, "other-uid-1", api.RouteSpec{Cluster: "other", DestinationCIDR: "10.9.0.0/24", TargetInstance: n1.ID}); err != nil {
		t.Fatal(err)
	}
	truth, _ := e.admin.Routes(ctx)
	if len(truth) != 4 || truth[0].Name != RouteName(cluster, "uid-1", "10.244.1.0/24") || truth[0].TargetInstance != n1.ID || truth[0].Cluster != cluster {
		t.Fatalf("routes in the cloud: %+v", truth)
	}

	list := func() map[string]cloudprovider.Route {
		t.Helper()
		got, err := routes.ListRoutes(ctx, cluster)
		if err != nil {
			t.Fatalf("ListRoutes: %v", err)
		}
		m := map[string]cloudprovider.Route{}
		for _, r := range got {
			m[r.Name] = *r
		}
		return m
	}
	got := list()
	want := map[string]cloudprovider.Route{
		"test-cluster-uid-1":      {Name: "test-cluster-uid-1", TargetNode: "n1", DestinationCIDR: "10.244.1.0/24"},
		"test-cluster-uid-2":      {Name: "test-cluster-uid-2", TargetNode: "n2", DestinationCIDR: "10.244.2.0/24"},
		"test-cluster-uid-2-ipv6": {Name: "test-cluster-uid-2-ipv6", TargetNode: "n2", DestinationCIDR: "fd00:10:244:2::/64"},
	}
	if len(got) != len(want) || got["test-cluster-uid-1"].TargetNode != "n1" || got["test-cluster-uid-2"].DestinationCIDR != "10.244.2.0/24" {
		t.Errorf("ListRoutes = %+v, want %+v", got, want)
	}
	for name, r := range got {
		if w := want[name]; r.Name != w.Name || r.TargetNode != w.TargetNode || r.DestinationCIDR != w.DestinationCIDR || r.Blackhole {
			t.Errorf("route %s = %+v, want %+v", name, r, w)
		}
	}

	// n1 goes away: its route is a blackhole, still naming n1.
	if _, err := e.admin.Terminate(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if r := list()["test-cluster-uid-1"]; !r.Blackhole || r.TargetNode != "n1" {
		t.Errorf("route to a terminated node %+v, want a blackhole naming n1", r)
	}

	r := got["test-cluster-uid-1"]
	if err := routes.DeleteRoute(ctx, cluster, &r); err != nil {
		t.Fatalf("DeleteRoute: %v", err)
	}
	if err := routes.DeleteRoute(ctx, cluster, &r); err != nil {
		t.Errorf("DeleteRoute again: %v, want nil (gone is deleted)", err)
	}
	if _, ok := list()["test-cluster-uid-1"]; ok {
		t.Error("deleted route still listed")
	}

	if _, err := e.admin.AddFault(ctx, api.Fault{Operation: api.OpListRoutes, Kind: api.FaultError, Message: "routes down"}); err != nil {
		t.Fatal(err)
	}
	if _, err := routes.ListRoutes(ctx, cluster); err == nil || !strings.Contains(err.Error(), "routes down") {
		t.Errorf("ListRoutes under a fault: %v", err)
	}
}
