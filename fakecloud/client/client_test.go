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

package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
)

func newClients(t *testing.T) (*Cloud, *Admin, string) {
	t.Helper()
	s, err := server.New(server.Config{CloudToken: "c", AdminToken: "a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	// A trailing slash is a common way to write an endpoint; it must not
	// produce "//v1/...".
	return New(hs.URL+"/", "c"), NewAdmin(hs.URL, "a"), hs.URL
}

func TestInstances(t *testing.T) {
	ctx := context.Background()
	cloud, admin, _ := newClients(t)
	if err := cloud.Healthz(ctx); err != nil {
		t.Fatalf("Healthz: %v", err)
	}
	created, err := admin.CreateInstance(ctx, api.CreateInstanceRequest{Name: "n1", Zone: "z"})
	if err != nil {
		t.Fatalf("CreateInstance: %v", err)
	}
	if _, err := admin.CreateInstance(ctx, api.CreateInstanceRequest{Name: "n2 with/slash"}); err != nil {
		t.Fatalf("CreateInstance: %v", err)
	}

	got, err := cloud.GetInstance(ctx, created.ID)
	if err != nil || got.Name != "n1" || got.Zone != "z" {
		t.Fatalf("GetInstance = %+v, %v", got, err)
	}
	list, err := cloud.ListInstances(ctx, "")
	if err != nil || len(list) != 2 {
		t.Fatalf("ListInstances = %+v, %v; want 2", list, err)
	}
	list, err = cloud.ListInstances(ctx, "n2 with/slash")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListInstances(name) = %+v, %v; want 1", list, err)
	}

	steps := []struct {
		do   func(context.Context, string) (*api.Instance, error)
		ref  string
		want api.InstanceState
	}{
		{admin.Stop, "n1", api.StateStopped},
		{admin.Instance, created.ID, api.StateStopped},
		{admin.Start, created.ID, api.StateRunning},
		{admin.Stop, "n2 with/slash", api.StateStopped},
		{admin.Terminate, "n1", api.StateTerminated},
		{admin.Terminate, "n1", api.StateTerminated},
	}
	for i, st := range steps {
		inst, err := st.do(ctx, st.ref)
		if err != nil || inst.State != st.want {
			t.Fatalf("step %d on %q = %+v, %v; want %s", i, st.ref, inst, err, st.want)
		}
	}
	all, err := admin.Instances(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("Instances = %+v, %v", all, err)
	}

	_, err = admin.Start(ctx, "n1")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Code != api.CodeConflict {
		t.Errorf("starting a terminated instance: %v, want a Conflict APIError", err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	cloud, admin, url := newClients(t)

	_, err := cloud.GetInstance(ctx, "i-123")
	if !IsNotFound(err) || IsThrottled(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	want := `fakecloud: GET /v1/instances/i-123: 404 NotFound: instance "i-123" not found`
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	if _, err := admin.AddFault(ctx, api.Fault{Operation: api.OpListInstances, Kind: api.FaultThrottle, Count: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = cloud.ListInstances(ctx, "")
	if !IsThrottled(err) || IsNotFound(err) {
		t.Errorf("IsThrottled(%v) = false", err)
	}

	_, err = New(url, "wrong").ListInstances(ctx, "")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Code != api.CodeUnauthorized {
		t.Errorf("wrong token: %v, want a 401 APIError", err)
	}

	_, err = admin.AddFault(ctx, api.Fault{Operation: api.OpAny, Kind: "boom"})
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || !strings.Contains(apiErr.Message, "kind") {
		t.Errorf("invalid fault: %v, want a 400 naming kind", err)
	}
}

func TestUnreachable(t *testing.T) {
	// A port that was just free: connection refused, at once and locally.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close()
	err = NewAdmin(endpoint, "a").Healthz(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach "+endpoint) || strings.Contains(err.Error(), `Get "`) {
		t.Errorf("error %q, want one naming %s once", err, endpoint)
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		t.Errorf("a connection error is not an APIError: %v", err)
	}
}

func TestNotFakecloud(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream is down", http.StatusBadGateway)
	}))
	defer hs.Close()
	_, err := New(hs.URL, "c").ListInstances(context.Background(), "")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadGateway || apiErr.Message != "upstream is down" {
		t.Errorf("error %v, want the foreign 502 reported with its text", err)
	}
}

func TestFaultsAndAudit(t *testing.T) {
	ctx := context.Background()
	cloud, admin, _ := newClients(t)
	f1, err := admin.AddFault(ctx, api.Fault{Operation: api.OpAny, Kind: api.FaultLatency, Delay: api.Duration{Duration: time.Millisecond}})
	if err != nil || f1.ID == "" || f1.Delay.Duration != time.Millisecond {
		t.Fatalf("AddFault = %+v, %v", f1, err)
	}
	f2, err := admin.AddFault(ctx, api.Fault{Operation: api.OpGetInstance, Kind: api.FaultError})
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteFault(ctx, f1.ID); err != nil {
		t.Fatalf("DeleteFault: %v", err)
	}
	if err := admin.DeleteFault(ctx, f1.ID); !IsNotFound(err) {
		t.Errorf("deleting twice: %v, want NotFound", err)
	}
	faults, err := admin.Faults(ctx)
	if err != nil || len(faults) != 1 || faults[0].ID != f2.ID {
		t.Fatalf("Faults = %+v, %v; want only %s", faults, err, f2.ID)
	}
	if err := admin.ClearFaults(ctx); err != nil {
		t.Fatalf("ClearFaults: %v", err)
	}
	if faults, _ := admin.Faults(ctx); len(faults) != 0 {
		t.Fatalf("faults left after ClearFaults: %+v", faults)
	}

	cloud.ListInstances(ctx, "n9")
	entries, err := admin.Audit(ctx, 0)
	if err != nil || len(entries) == 0 {
		t.Fatalf("Audit = %+v, %v", entries, err)
	}
	last := entries[len(entries)-1]
	if last.Operation != api.OpListInstances || last.Instance != "n9" || last.Caller != "cloud" {
		t.Errorf("last entry %+v, want the cloud's ListInstances of n9", last)
	}
	later, err := admin.Audit(ctx, last.Seq-1)
	if err != nil || len(later) != 2 || later[0].Seq != last.Seq {
		t.Errorf("Audit(since %d) = %+v, %v; want the list call and the first audit read", last.Seq-1, later, err)
	}
}

// TestLoadBalancers uses listener-less load balancers: the client's part is
// the HTTP calls, and those need no sockets on load balancer IPs.
func TestLoadBalancers(t *testing.T) {
	ctx := context.Background()
	cloud, admin, _ := newClients(t)
	inst, err := admin.CreateInstance(ctx, api.CreateInstanceRequest{Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	spec := api.LoadBalancerSpec{Backends: []string{inst.ID}, Tags: map[string]string{"service": "default/web"}}
	created, err := cloud.EnsureLoadBalancer(ctx, "lb 1", spec)
	if err != nil || created.Name != "lb 1" || created.ID == "" || created.IP == "" || created.Tags["service"] != "default/web" {
		t.Fatalf("EnsureLoadBalancer = %+v, %v", created, err)
	}
	if _, err := cloud.UpdateLoadBalancer(ctx, "lb 2", spec); !IsNotFound(err) {
		t.Errorf("UpdateLoadBalancer of none: %v, want NotFound", err)
	}
	if _, err := cloud.GetLoadBalancer(ctx, "lb 2"); !IsNotFound(err) {
		t.Errorf("UpdateLoadBalancer of none made one: %v", err)
	}
	spec.Backends = nil
	updated, err := cloud.UpdateLoadBalancer(ctx, "lb 1", spec)
	if err != nil || updated.ID != created.ID || updated.IP != created.IP || len(updated.Backends) != 0 {
		t.Fatalf("update = %+v, %v; want same ID and IP, no backends", updated, err)
	}
	if got, err := cloud.GetLoadBalancer(ctx, "lb 1"); err != nil || got.ID != created.ID {
		t.Errorf("GetLoadBalancer = %+v, %v", got, err)
	}
	if list, err := cloud.ListLoadBalancers(ctx); err != nil || len(list) != 1 {
		t.Errorf("ListLoadBalancers = %+v, %v", list, err)
	}
	if list, err := admin.LoadBalancers(ctx); err != nil || len(list) != 1 {
		t.Errorf("admin LoadBalancers = %+v, %v", list, err)
	}
	if got, err := admin.LoadBalancer(ctx, created.ID); err != nil || got.Name != "lb 1" {
		t.Errorf("admin LoadBalancer(ID) = %+v, %v", got, err)
	}
	if _, err := cloud.EnsureLoadBalancer(ctx, "lb2", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: "SCTP"}}}); err == nil || !strings.Contains(err.Error(), "listeners[0].protocol") {
		t.Errorf("invalid spec: %v, want a 400 naming the field", err)
	}
	if err := cloud.DeleteLoadBalancer(ctx, "lb 1"); err != nil {
		t.Fatalf("DeleteLoadBalancer: %v", err)
	}
	if err := cloud.DeleteLoadBalancer(ctx, "lb 1"); !IsNotFound(err) {
		t.Errorf("deleting twice: %v, want NotFound", err)
	}
	if _, err := cloud.GetLoadBalancer(ctx, "lb 1"); !IsNotFound(err) {
		t.Errorf("GetLoadBalancer after delete: %v, want NotFound", err)
	}
	if _, err := admin.LoadBalancer(ctx, "lb 1"); !IsNotFound(err) {
		t.Errorf("admin LoadBalancer after delete: %v, want NotFound", err)
	}
}

// A replace of a load balancer that does not exist fails its precondition
// before it is an operation: a fault to fire after the first call is not
// spent on it (the service controller's node sync can update a Service's
// load balancer before its creation).
func TestUpdateOfNoneIsNoOperation(t *testing.T) {
	ctx := context.Background()
	cloud, admin, _ := newClients(t)
	if _, err := admin.AddFault(ctx, api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultError, Status: 500, Message: "second call", After: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := cloud.UpdateLoadBalancer(ctx, "lb", api.LoadBalancerSpec{}); !IsNotFound(err) {
		t.Fatalf("UpdateLoadBalancer of none: %v, want NotFound", err)
	}
	if _, err := cloud.EnsureLoadBalancer(ctx, "lb", api.LoadBalancerSpec{}); err != nil {
		t.Fatalf("the first operation: %v, want it let pass", err)
	}
	if _, err := cloud.UpdateLoadBalancer(ctx, "lb", api.LoadBalancerSpec{}); err == nil || !strings.Contains(err.Error(), "second call") {
		t.Errorf("the second operation: %v, want the fault", err)
	}
}

func TestRoutes(t *testing.T) {
	ctx := context.Background()
	cloud, admin, _ := newClients(t)
	inst, err := admin.CreateInstance(ctx, api.CreateInstanceRequest{Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	spec := api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.1.0/24", TargetInstance: inst.ID}
	for range 2 { // the second time is the idempotent retry
		if rt, err := cloud.CreateRoute(ctx, "c1-n1", spec); err != nil || rt.Name != "c1-n1" || rt.Blackhole {
			t.Fatalf("CreateRoute = %+v, %v", rt, err)
		}
	}
	other := spec
	other.DestinationCIDR = "10.244.2.0/24"
	if _, err := cloud.CreateRoute(ctx, "c1-n1", other); !IsConflict(err) || IsNotFound(err) {
		t.Errorf("conflicting CreateRoute: %v, want a Conflict", err)
	}
	other.Cluster = "c2"
	if _, err := cloud.CreateRoute(ctx, "c2-n1", other); err != nil {
		t.Fatal(err)
	}
	if list, err := cloud.ListRoutes(ctx, "c1"); err != nil || len(list) != 1 || list[0].Name != "c1-n1" {
		t.Errorf("ListRoutes(c1) = %+v, %v", list, err)
	}
	if list, err := cloud.ListRoutes(ctx, ""); err != nil || len(list) != 2 {
		t.Errorf("ListRoutes() = %+v, %v", list, err)
	}
	if err := admin.DeleteRoute(ctx, "c2-n1"); err != nil {
		t.Errorf("admin DeleteRoute: %v", err)
	}
	if err := cloud.DeleteRoute(ctx, "c1-n1"); err != nil {
		t.Errorf("DeleteRoute: %v", err)
	}
	if err := cloud.DeleteRoute(ctx, "c1-n1"); !IsNotFound(err) {
		t.Errorf("deleting twice: %v, want NotFound", err)
	}
	if list, err := admin.Routes(ctx); err != nil || len(list) != 0 {
		t.Errorf("admin Routes = %+v, %v; want none", list, err)
	}
}
