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
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// The OpenStack fronts' operations answer with copies and refuse in kinds
// the fronts turn into their statuses; the fronts' own tests check the
// rest through the API.

func newTestCloud(t *testing.T) *Cloud {
	t.Helper()
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestRouterRoutes(t *testing.T) {
	c := newTestCloud(t)
	c.st.Instances = append(c.st.Instances, &api.Instance{ID: "i-1", Name: "node-a", State: api.StateRunning,
		Addresses: []api.Address{{Type: api.AddressInternalIP, Address: "127.1.0.5"}}})
	toNode := ExtraRoute{Destination: "10.244.1.0/24", NextHop: "127.1.0.5"}
	nowhere := ExtraRoute{Destination: "10.244.2.0/24", NextHop: "192.0.2.1"}
	got, err := c.SetRouterRoutes([]ExtraRoute{toNode, nowhere})
	if err != nil || len(got) != 2 || got[0] != toNode || got[1] != nowhere {
		t.Fatalf("SetRouterRoutes = %v, %v; want both routes", got, err)
	}
	if c.st.Routes[0].TargetInstance != "i-1" || c.st.Routes[1].TargetInstance != "192.0.2.1" {
		t.Errorf("routes target %q and %q, want the instance and the bare next hop", c.st.Routes[0].TargetInstance, c.st.Routes[1].TargetInstance)
	}
	if got, err := c.SetRouterRoutes([]ExtraRoute{nowhere}); err != nil || len(got) != 1 || got[0] != nowhere {
		t.Errorf("replacing the routes = %v, %v; want the one left", got, err)
	}
	if got, err := c.RemoveRouterRoutes([]ExtraRoute{nowhere}); err != nil || got == nil || len(got) != 0 {
		t.Errorf("removing the last route = %#v, %v; want an empty list", got, err)
	}
}

func TestOctaviaAnswersCopies(t *testing.T) {
	c := newTestCloud(t)
	shown, err := c.CreateOctaviaLoadBalancer("lb1", nil, &OctaviaLB{Description: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if shown.Octavia.Pending != OctaviaPendingCreate {
		t.Errorf("a new load balancer is %s, want %s", shown.Octavia.Pending, OctaviaPendingCreate)
	}
	shown.Octavia.Description = "changed by the caller"
	view, ok := c.OctaviaLB(shown.ID)
	if !ok || view.Octavia.Description != "first" {
		t.Fatalf("OctaviaLB = %+v, %v; the caller's change reached the state", view.Octavia, ok)
	}
	name, err := c.OctaviaLBName(OctaviaRef{LB: shown.ID})
	if err != nil || name != "lb1" {
		t.Fatalf("OctaviaLBName = %q, %v", name, err)
	}
	// Busy right after its creation, as Octavia's are.
	_, err = c.UpdateOctaviaLoadBalancer(OctaviaChange{Name: name, LBID: shown.ID}, func(o *OctaviaLB) { o.Description = "second" })
	if KindOf(err) != KindConflict {
		t.Errorf("a change while PENDING_CREATE: %v, want a conflict", err)
	}
	if err := c.DeleteOctaviaLoadBalancer(shown.ID, true); KindOf(err) != KindConflict {
		t.Errorf("a delete while PENDING_CREATE: %v, want a conflict", err)
	}
	if _, err := c.OctaviaLBName(OctaviaRef{LB: "lb-none"}); KindOf(err) != KindNotFound || err.Error() != "Load Balancer lb-none not found." {
		t.Errorf("OctaviaLBName of no load balancer: %v, want Octavia's not found", err)
	}
}
