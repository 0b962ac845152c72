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
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestFaultKinds(t *testing.T) {
	tests := []struct {
		name       string
		fault      api.Fault
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{"error defaults to 500", api.Fault{Operation: api.OpAny, Kind: api.FaultError}, 500, api.CodeInjected, "injected error (fault f-1)"},
		{"error with status and message", api.Fault{Operation: api.OpGetInstance, Kind: api.FaultError, Status: 503, Message: "maintenance"}, 503, api.CodeInjected, "maintenance"},
		{"throttle", api.Fault{Operation: api.OpGetInstance, Kind: api.FaultThrottle}, 429, api.CodeThrottled, "throttled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := servertest.New(t, server.Config{})
			inst := f.Create("n1")
			f.AddFault(tt.fault)
			r := f.Do("GET", api.PathInstance+inst.ID, servertest.CloudToken, nil)
			if r.Status != tt.wantStatus {
				t.Fatalf("status %d, want %d", r.Status, tt.wantStatus)
			}
			if e := r.ErrorBody(t); e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("error %+v, want code %s and message containing %q", e, tt.wantCode, tt.wantMsg)
			}
			if tt.fault.Kind == api.FaultThrottle && r.Header.Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q, want 1", r.Header.Get("Retry-After"))
			}
			// Faults never touch the admin API.
			f.Must(http.StatusOK, "GET", api.AdminPathInstance+inst.ID, servertest.AdminToken, nil, nil)
		})
	}
}

func TestFaultLatency(t *testing.T) {
	f := servertest.New(t, server.Config{})
	inst := f.Create("n1")
	f.AddFault(api.Fault{Operation: api.OpGetInstance, Kind: api.FaultLatency, Delay: api.Duration{Duration: 300 * time.Millisecond}})

	start := time.Now()
	f.Must(http.StatusOK, "GET", api.PathInstance+inst.ID, servertest.CloudToken, nil, nil)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("answered after %v, want at least the 300ms delay", d)
	}
	start = time.Now()
	f.Must(http.StatusOK, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("ListInstances took %v though the delay is only for GetInstance", d)
	}

	// A client that gives up is let go at once, not held for the delay.
	f.AddFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultLatency, Delay: api.Duration{Duration: time.Hour}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.URL+api.PathInstances, nil)
	req.Header.Set("Authorization", "Bearer "+servertest.CloudToken)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("request under an hour of latency succeeded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries := f.Srv.AuditSince(0)
		last := entries[len(entries)-1]
		if last.Operation == api.OpListInstances && last.Status == model.StatusClientClosed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned call was never finished; last audit entry %+v", last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFaultCount(t *testing.T) {
	f := servertest.New(t, server.Config{})
	f.Create("n1")
	added := f.AddFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultError, Count: 2})
	for i := 0; i < 2; i++ {
		f.Must(http.StatusInternalServerError, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
		var list api.FaultList
		f.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
		left := 2 - (i + 1)
		if left > 0 && (len(list.Faults) != 1 || list.Faults[0].Count != left) {
			t.Fatalf("after %d firings faults are %+v, want %s with count %d", i+1, list.Faults, added.ID, left)
		}
		if left == 0 && len(list.Faults) != 0 {
			t.Fatalf("spent fault still listed: %+v", list.Faults)
		}
	}
	f.Must(http.StatusOK, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
}

// TestFaultAfter checks a fault that lets its first calls pass, and that
// a call it lets pass is free for a later fault.
func TestFaultAfter(t *testing.T) {
	f := servertest.New(t, server.Config{})
	f.Create("n1")
	f.AddFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultError, Status: 502, After: 2})
	f.AddFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultError, Status: 503, Count: 1})
	f.Must(503, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	f.Must(http.StatusOK, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	var list api.FaultList
	f.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
	if len(list.Faults) != 1 || list.Faults[0].After != 0 {
		t.Fatalf("after two calls faults are %+v, want the first with after 0", list.Faults)
	}
	for range 2 {
		f.Must(502, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	}
}

func TestFaultOrderAndOperation(t *testing.T) {
	f := servertest.New(t, server.Config{})
	inst := f.Create("n1")
	f.AddFault(api.Fault{Operation: api.OpGetInstance, Kind: api.FaultError, Status: 502, Count: 1})
	f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultError, Status: 503})
	// The earliest matching fault fires, and only it.
	f.Must(502, "GET", api.PathInstance+inst.ID, servertest.CloudToken, nil, nil)
	f.Must(503, "GET", api.PathInstance+inst.ID, servertest.CloudToken, nil, nil)
	f.Must(503, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	f.Must(http.StatusOK, "GET", api.AdminPathInstances, servertest.AdminToken, nil, nil)
	f.Must(http.StatusOK, "GET", api.PathHealthz, "", nil, nil)
}

func TestFaultInstanceMatching(t *testing.T) {
	tests := []struct {
		name     string
		instance string // fault's Instance; "$n1" and "$n2" stand for IDs
		path     string // "$n1" and "$n2" stand for IDs
		fires    bool
	}{
		{"get by matching name", "n1", api.PathInstance + "$n1", true},
		{"get by matching ID", "$n1", api.PathInstance + "$n1", true},
		{"get of another instance", "n1", api.PathInstance + "$n2", false},
		{"get of an unknown ID named in the fault", "i-0123456789ab", api.PathInstance + "i-0123456789ab", true},
		{"list filtered by the name", "n1", api.PathInstances + "?name=n1", true},
		{"list filtered by another name", "n1", api.PathInstances + "?name=n2", false},
		{"list filtered by a name nobody has", "ghost", api.PathInstances + "?name=ghost", true},
		{"unfiltered list containing it by name", "n2", api.PathInstances, true},
		{"unfiltered list containing it by ID", "$n2", api.PathInstances, true},
		{"unfiltered list without it", "ghost", api.PathInstances, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := servertest.New(t, server.Config{})
			ids := strings.NewReplacer("$n1", f.Create("n1").ID, "$n2", f.Create("n2").ID)
			f.AddFault(api.Fault{Operation: api.OpAny, Instance: ids.Replace(tt.instance), Kind: api.FaultError, Status: 418})
			r := f.Do("GET", ids.Replace(tt.path), servertest.CloudToken, nil)
			if fired := r.Status == 418; fired != tt.fires {
				t.Errorf("status %d: fired=%v, want %v", r.Status, fired, tt.fires)
			}
		})
	}
}

func TestFaultCorrupt(t *testing.T) {
	tests := []struct {
		field, value string
		check        func(api.Instance) string
	}{
		{api.CorruptZone, "atlantis", func(i api.Instance) string { return i.Zone }},
		{api.CorruptRegion, "", func(i api.Instance) string { return i.Region }},
		{api.CorruptInstanceType, "huge", func(i api.Instance) string { return i.InstanceType }},
		{api.CorruptID, "i-bogus", func(i api.Instance) string { return i.ID }},
		{api.CorruptState, "stopped", func(i api.Instance) string { return string(i.State) }},
		{api.CorruptAddresses, "InternalIP=127.9.9.9,Hostname=liar", func(i api.Instance) string { return api.FormatAddresses(i.Addresses) }},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			f := servertest.New(t, server.Config{})
			n1, n2 := f.Create("n1"), f.Create("n2")
			f.AddFault(api.Fault{Operation: api.OpAny, Instance: "n1", Kind: api.FaultCorrupt, Field: tt.field, Value: tt.value})

			var got api.Instance
			f.Must(http.StatusOK, "GET", api.PathInstance+n1.ID, servertest.CloudToken, nil, &got)
			if v := tt.check(got); v != tt.value {
				t.Errorf("GetInstance reports %s %q, want the lie %q", tt.field, v, tt.value)
			}
			var list api.InstanceList
			f.Must(http.StatusOK, "GET", api.PathInstances, servertest.CloudToken, nil, &list)
			if len(list.Instances) != 2 {
				t.Fatalf("listed %d instances, want 2", len(list.Instances))
			}
			if v := tt.check(list.Instances[0]); v != tt.value {
				t.Errorf("ListInstances reports n1's %s %q, want the lie %q", tt.field, v, tt.value)
			}
			if v, truth := tt.check(list.Instances[1]), tt.check(n2); v != truth {
				t.Errorf("ListInstances reports n2's %s %q, want the truth %q", tt.field, v, truth)
			}
			var real api.Instance
			f.Must(http.StatusOK, "GET", api.AdminPathInstance+n1.ID, servertest.AdminToken, nil, &real)
			if v, truth := tt.check(real), tt.check(n1); v != truth {
				t.Errorf("admin API reports %s %q, want the truth %q", tt.field, v, truth)
			}
		})
	}
}

func TestFaultValidation(t *testing.T) {
	tests := []struct {
		name  string
		fault any
		field string
	}{
		{"unknown kind", api.Fault{Operation: api.OpAny, Kind: "explode"}, "kind"},
		{"no kind", api.Fault{Operation: api.OpAny}, "kind"},
		{"unknown operation", api.Fault{Operation: "CreateInstance", Kind: api.FaultError}, "operation"},
		{"no operation", api.Fault{Kind: api.FaultError}, "operation"},
		{"negative count", api.Fault{Operation: api.OpAny, Kind: api.FaultError, Count: -1}, "count"},
		{"unknown field", api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: "color"}, "field"},
		{"corrupt without field", api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt}, "field"},
		{"bad state value", api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptState, Value: "asleep"}, "value"},
		{"bad addresses value", api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptAddresses, Value: "127.0.0.1"}, "value"},
		{"latency without delay", api.Fault{Operation: api.OpAny, Kind: api.FaultLatency}, "delay"},
		{"delay on an error", api.Fault{Operation: api.OpAny, Kind: api.FaultError, Delay: api.Duration{Duration: time.Second}}, "delay"},
		{"status out of range", api.Fault{Operation: api.OpAny, Kind: api.FaultError, Status: 200}, "status"},
		{"status on a throttle", api.Fault{Operation: api.OpAny, Kind: api.FaultThrottle, Status: 500}, "status"},
		{"unparsable delay", `{"operation":"*","kind":"latency","delay":"soon"}`, `duration "soon"`},
		{"unknown JSON field", `{"operation":"*","kind":"error","instanse":"n1"}`, "instanse"},
		{"load balancer field on an instance op", api.Fault{Operation: api.OpGetInstance, Kind: api.FaultCorrupt, Field: api.CorruptIP}, `field "ip" is a field of load balancers`},
		{"instance field on a load balancer op", api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultCorrupt, Field: api.CorruptZone}, `field "zone" is a field of instances`},
		{"corrupting a route op", api.Fault{Operation: api.OpListRoutes, Kind: api.FaultCorrupt, Field: api.CorruptListeners}, "ListRoutes"},
		{"listeners with a value", api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptListeners, Value: "80/TCP"}, "value must be empty"},
		{"unknown operation near a real one", api.Fault{Operation: "EnsureLoadBalancers", Kind: api.FaultError}, "EnsureLoadBalancer, DeleteLoadBalancer"},
	}
	f := servertest.New(t, server.Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Must(http.StatusBadRequest, "POST", api.AdminPathFaults, servertest.AdminToken, tt.fault, nil)
			if e := r.ErrorBody(t); e.Code != api.CodeInvalid || !strings.Contains(e.Message, tt.field) {
				t.Errorf("error %+v, want Invalid naming %q", e, tt.field)
			}
		})
	}
	var list api.FaultList
	f.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
	if len(list.Faults) != 0 {
		t.Errorf("invalid faults were added: %+v", list.Faults)
	}
}

func TestFaultAdmin(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.AddFault(api.Fault{ID: "mine", Operation: api.OpAny, Kind: api.FaultThrottle})
	b := f.AddFault(api.Fault{Operation: api.OpGetInstance, Kind: api.FaultError})
	c := f.AddFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultError})
	if a.ID != "f-1" || b.ID != "f-2" || c.ID != "f-3" {
		t.Errorf("IDs %s %s %s, want f-1 f-2 f-3 assigned by the server", a.ID, b.ID, c.ID)
	}
	f.Must(http.StatusNoContent, "DELETE", api.AdminPathFaults+"/"+b.ID, servertest.AdminToken, nil, nil)
	f.Must(http.StatusNotFound, "DELETE", api.AdminPathFaults+"/"+b.ID, servertest.AdminToken, nil, nil)
	var list api.FaultList
	f.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
	if len(list.Faults) != 2 || list.Faults[0].ID != a.ID || list.Faults[1].ID != c.ID {
		t.Errorf("faults %+v, want f-1 and f-3", list.Faults)
	}
	f.Must(http.StatusNoContent, "DELETE", api.AdminPathFaults, servertest.AdminToken, nil, nil)
	f.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
	if len(list.Faults) != 0 {
		t.Errorf("faults %+v after clearing", list.Faults)
	}
	f.Must(http.StatusOK, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	if d := f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultThrottle}); d.ID != "f-4" {
		t.Errorf("ID %s after clearing, want f-4: IDs are never reused", d.ID)
	}
}

func TestFaultsOnLBAndRouteOperations(t *testing.T) {
	spec := api.LoadBalancerSpec{}
	route := func(id string) api.RouteSpec {
		return api.RouteSpec{Cluster: "c1", DestinationCIDR: "10.244.0.0/24", TargetInstance: id}
	}
	tests := []struct {
		name     string
		op       string
		instance string // the fault's; "$lb1" stands for lb1's ID
		method   string
		path     string
		body     func(instanceID string) any
		fires    bool
	}{
		{"list with lb1 in it", api.OpListLoadBalancers, "lb1", "GET", api.PathLoadBalancers, nil, true},
		{"list by ID", api.OpListLoadBalancers, "$lb1", "GET", api.PathLoadBalancers, nil, true},
		{"list without it", api.OpListLoadBalancers, "ghost", "GET", api.PathLoadBalancers, nil, false},
		{"get by name", api.OpGetLoadBalancer, "lb1", "GET", api.PathLoadBalancer + "lb1", nil, true},
		{"get by ID", api.OpGetLoadBalancer, "$lb1", "GET", api.PathLoadBalancer + "lb1", nil, true},
		{"get of another", api.OpGetLoadBalancer, "lb1", "GET", api.PathLoadBalancer + "lb2", nil, false},
		{"ensure", api.OpEnsureLoadBalancer, "lb1", "PUT", api.PathLoadBalancer + "lb1", func(string) any { return spec }, true},
		{"ensure of a new one by name", api.OpEnsureLoadBalancer, "lb9", "PUT", api.PathLoadBalancer + "lb9", func(string) any { return spec }, true},
		{"ensure of another", api.OpEnsureLoadBalancer, "lb1", "PUT", api.PathLoadBalancer + "lb9", func(string) any { return spec }, false},
		{"delete", api.OpDeleteLoadBalancer, "$lb1", "DELETE", api.PathLoadBalancer + "lb1", nil, true},
		{"any op, no instance", api.OpAny, "", "DELETE", api.PathLoadBalancer + "lb1", nil, true},
		{"list routes with r1 in it", api.OpListRoutes, "r1", "GET", api.PathRoutes + "?cluster=c1", nil, true},
		{"list routes of another cluster", api.OpListRoutes, "r1", "GET", api.PathRoutes + "?cluster=c2", nil, false},
		{"create route", api.OpCreateRoute, "r2", "PUT", api.PathRoute + "r2", func(id string) any { return route(id) }, true},
		{"create another route", api.OpCreateRoute, "r1", "PUT", api.PathRoute + "r2", func(id string) any { return route(id) }, false},
		{"create a route to the instance named", api.OpCreateRoute, "n1", "PUT", api.PathRoute + "r2", func(id string) any { return route(id) }, true},
		{"create a route to an instance the pattern names", api.OpCreateRoute, "n*", "PUT", api.PathRoute + "r2", func(id string) any { return route(id) }, true},
		{"create a route to another instance", api.OpCreateRoute, "m*", "PUT", api.PathRoute + "r2", func(id string) any { return route(id) }, false},
		{"delete route", api.OpDeleteRoute, "r1", "DELETE", api.PathRoute + "r1", nil, true},
		{"a route op is not an instance op", api.OpGetInstance, "", "DELETE", api.PathRoute + "r1", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := servertest.New(t, netConfig())
			inst := f.Create("n1")
			lb1 := f.Ensure("lb1", spec, http.StatusCreated)
			createRoute(f, "r1", route(inst.ID), http.StatusCreated)
			fault := f.AddFault(api.Fault{Operation: tt.op, Instance: strings.ReplaceAll(tt.instance, "$lb1", lb1.ID), Kind: api.FaultError, Status: 418})
			var body any
			if tt.body != nil {
				body = tt.body(inst.ID)
			}
			r := f.Do(tt.method, tt.path, servertest.CloudToken, body)
			if fired := r.Status == 418; fired != tt.fires {
				t.Fatalf("status %d %s: fired=%v, want %v", r.Status, r.Body, fired, tt.fires)
			}
			var audit api.AuditLog
			f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &audit)
			// The audit read itself is recorded after it answers.
			call := audit.Entries[len(audit.Entries)-1]
			if (call.Fault == fault.ID) != tt.fires {
				t.Errorf("audit entry %+v, want fault %s recorded: %v", call, fault.ID, tt.fires)
			}
			if !tt.fires {
				return
			}
			// A failed call changed nothing.
			var lbs api.LoadBalancerList
			f.Must(http.StatusOK, "GET", api.AdminPathLoadBalancers, servertest.AdminToken, nil, &lbs)
			var routes api.RouteList
			f.Must(http.StatusOK, "GET", api.AdminPathRoutes, servertest.AdminToken, nil, &routes)
			if len(lbs.LoadBalancers) != 1 || len(routes.Routes) != 1 {
				t.Errorf("a faulted call changed the cloud: %d load balancers, %d routes", len(lbs.LoadBalancers), len(routes.Routes))
			}
		})
	}
}

func TestFaultCorruptLB(t *testing.T) {
	tests := []struct {
		field, value string
		check        func(api.LoadBalancer) string
		want         string
	}{
		{api.CorruptIP, "127.99.99.99", func(lb api.LoadBalancer) string { return lb.IP }, "127.99.99.99"},
		{api.CorruptIP, "", func(lb api.LoadBalancer) string { return lb.IP }, ""},
		{api.CorruptListeners, "", func(lb api.LoadBalancer) string { return fmt.Sprint(len(lb.Listeners)) }, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			cfg := netConfig()
			f := servertest.New(t, cfg)
			ip := firstLBIP(cfg)
			spec := api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(freePort(t, ip), 0)}}
			f.Ensure("lb1", spec, http.StatusCreated)
			lb2 := f.Ensure("lb2", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(freePort(t, ip.Next()), 0)}}, http.StatusCreated)
			f.AddFault(api.Fault{Operation: api.OpAny, Instance: "lb1", Kind: api.FaultCorrupt, Field: tt.field, Value: tt.value})

			var got api.LoadBalancer
			f.Must(http.StatusOK, "GET", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil, &got)
			if v := tt.check(got); v != tt.want {
				t.Errorf("GetLoadBalancer reports %s %q, want the lie %q", tt.field, v, tt.want)
			}
			if v := tt.check(f.Ensure("lb1", spec, http.StatusOK)); v != tt.want {
				t.Errorf("EnsureLoadBalancer reports %s %q, want the lie %q", tt.field, v, tt.want)
			}
			var list api.LoadBalancerList
			f.Must(http.StatusOK, "GET", api.PathLoadBalancers, servertest.CloudToken, nil, &list)
			if v := tt.check(list.LoadBalancers[0]); v != tt.want {
				t.Errorf("ListLoadBalancers reports lb1's %s %q, want the lie %q", tt.field, v, tt.want)
			}
			if v, truth := tt.check(list.LoadBalancers[1]), tt.check(lb2); v != truth {
				t.Errorf("ListLoadBalancers reports lb2's %s %q, want the truth %q", tt.field, v, truth)
			}
			if v := tt.check(f.AdminLB("lb1")); v == tt.want {
				t.Errorf("admin API reports the lie %q", v)
			}
		})
	}
}

// TestCorruptFaultSkipsOtherResources: a lie about a field an operation
// does not answer with is not told there, and not spent there either.
func TestCorruptFaultSkipsOtherResources(t *testing.T) {
	f := servertest.New(t, netConfig())
	inst := f.Create("n1")
	f.Ensure("lb1", api.LoadBalancerSpec{}, http.StatusCreated)
	zone := f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "atlantis", Count: 1})
	ip := f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptIP, Value: "127.9.9.9", Count: 1})

	var lb api.LoadBalancer
	r := f.Must(http.StatusOK, "GET", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil, &lb)
	if lb.IP != "127.9.9.9" {
		t.Errorf("the ip lie was not told: %s", r.Body)
	}
	var got api.Instance
	f.Must(http.StatusOK, "GET", api.PathInstance+inst.ID, servertest.CloudToken, nil, &got)
	if got.Zone != "atlantis" {
		t.Errorf("the zone lie was spent elsewhere: zone %q", got.Zone)
	}
	var audit api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &audit)
	n := len(audit.Entries)
	if audit.Entries[n-2].Fault != ip.ID || audit.Entries[n-1].Fault != zone.ID {
		t.Errorf("audit %+v %+v, want %s then %s", audit.Entries[n-2], audit.Entries[n-1], ip.ID, zone.ID)
	}
}
