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
	"bytes"
	"encoding/json"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestAuth(t *testing.T) {
	f := servertest.New(t, server.Config{})
	inst := f.Create("n1")
	tests := []struct {
		name, method, path, header string
		want                       int
	}{
		{"healthz needs nothing", "GET", api.PathHealthz, "", http.StatusOK},
		{"cloud list with cloud token", "GET", api.PathInstances, "Bearer " + servertest.CloudToken, http.StatusOK},
		{"scheme is case-insensitive", "GET", api.PathInstances, "bearer " + servertest.CloudToken, http.StatusOK},
		{"cloud get with cloud token", "GET", api.PathInstance + inst.ID, "Bearer " + servertest.CloudToken, http.StatusOK},
		{"cloud API without token", "GET", api.PathInstances, "", http.StatusUnauthorized},
		{"cloud API with wrong token", "GET", api.PathInstances, "Bearer nope", http.StatusUnauthorized},
		{"cloud API with token prefix", "GET", api.PathInstances, "Bearer " + servertest.CloudToken[:4], http.StatusUnauthorized},
		{"cloud API with basic auth", "GET", api.PathInstances, "Basic " + servertest.CloudToken, http.StatusUnauthorized},
		{"cloud API with admin token", "GET", api.PathInstances, "Bearer " + servertest.AdminToken, http.StatusUnauthorized},
		{"admin API with cloud token", "GET", api.AdminPathInstances, "Bearer " + servertest.CloudToken, http.StatusUnauthorized},
		{"admin API with admin token", "GET", api.AdminPathInstances, "Bearer " + servertest.AdminToken, http.StatusOK},
		{"admin mutation with cloud token", "POST", api.AdminPathInstance + "n1/stop", "Bearer " + servertest.CloudToken, http.StatusUnauthorized},
		{"unknown cloud path hides behind auth", "GET", "/v1/volumes", "", http.StatusUnauthorized},
		{"unknown cloud path", "GET", "/v1/volumes", "Bearer " + servertest.CloudToken, http.StatusNotFound},
		{"unknown admin path", "GET", "/admin/v1/volumes", "Bearer " + servertest.AdminToken, http.StatusNotFound},
		{"wrong method", "DELETE", api.PathInstances, "Bearer " + servertest.CloudToken, http.StatusNotFound},
		{"unknown root path", "GET", "/nope", "", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, f.URL+tt.path, nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == http.StatusUnauthorized {
				var eb api.ErrorBody
				if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Error.Code != api.CodeUnauthorized {
					t.Errorf("body %+v (%v), want code %s", eb, err, api.CodeUnauthorized)
				}
			}
		})
	}
}

func TestCreateDefaults(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a, b, c, d := f.Create("n1"), f.Create("n2"), f.Create("n3"), f.Create("n4")

	if !regexp.MustCompile(`^i-[0-9a-f]{12}$`).MatchString(a.ID) {
		t.Errorf("ID %q is not i- and 12 hex digits", a.ID)
	}
	if a.ID == b.ID {
		t.Errorf("two instances share ID %s", a.ID)
	}
	want := []api.Address{
		{Type: api.AddressInternalIP, Address: "127.1.0.1"},
		{Type: api.AddressInternalIP, Address: "127.1.0.2"},
		{Type: api.AddressExternalIP, Address: "127.2.0.1"},
		{Type: api.AddressHostname, Address: "n1"},
	}
	if got := api.FormatAddresses(a.Addresses); got != api.FormatAddresses(want) {
		t.Errorf("first addresses %s, want %s", got, api.FormatAddresses(want))
	}
	if got, w := api.FormatAddresses(b.Addresses), "InternalIP=127.1.0.3,InternalIP=127.1.0.4,ExternalIP=127.2.0.2,Hostname=n2"; got != w {
		t.Errorf("second addresses %s, want %s", got, w)
	}
	var zones []string
	for _, i := range []api.Instance{a, b, c, d} {
		zones = append(zones, i.Zone)
	}
	if got := strings.Join(zones, ","); got != "fake-region-1a,fake-region-1b,fake-region-1c,fake-region-1a" {
		t.Errorf("zones %s, want round-robin over the default zones", got)
	}
	if a.Hostname != "n1" || a.InstanceType != "fake.medium" || a.Region != "fake-region-1" || a.State != api.StateRunning || a.CreatedAt.IsZero() {
		t.Errorf("defaults not applied: %+v", a)
	}
}

func TestCreateExplicit(t *testing.T) {
	f := servertest.New(t, server.Config{Region: "r", Zones: []string{"z1"}})
	req := api.CreateInstanceRequest{
		Name: "n1", Hostname: "h1", InstanceType: "big", Zone: "elsewhere", Region: "r2",
		Addresses: []api.Address{{Type: api.AddressInternalIP, Address: "127.9.0.1"}},
	}
	var got api.Instance
	f.Must(http.StatusCreated, "POST", api.AdminPathInstances, servertest.AdminToken, req, &got)
	if got.Hostname != "h1" || got.InstanceType != "big" || got.Zone != "elsewhere" || got.Region != "r2" ||
		api.FormatAddresses(got.Addresses) != "InternalIP=127.9.0.1" {
		t.Errorf("explicit fields not kept: %+v", got)
	}
	// An explicit zone does not use up a turn of the round-robin.
	if z := f.Create("n2").Zone; z != "z1" {
		t.Errorf("zone %q, want z1", z)
	}
}

func TestCreateRejects(t *testing.T) {
	f := servertest.New(t, server.Config{})
	f.Create("taken")
	tests := []struct {
		name string
		body any
		want int
		msg  string
	}{
		{"no name", api.CreateInstanceRequest{}, http.StatusBadRequest, "name"},
		{"unknown field", `{"name":"x","zonee":"a"}`, http.StatusBadRequest, "zonee"},
		{"not JSON", `{`, http.StatusBadRequest, "request body"},
		{"bad address type", api.CreateInstanceRequest{Name: "x", Addresses: []api.Address{{Type: "Public", Address: "127.0.0.9"}}}, http.StatusBadRequest, "addresses[0].type"},
		{"bad IP", api.CreateInstanceRequest{Name: "x", Addresses: []api.Address{{Type: api.AddressInternalIP, Address: "127.0.0"}}}, http.StatusBadRequest, "addresses[0].address"},
		{"name in use", api.CreateInstanceRequest{Name: "taken"}, http.StatusConflict, "already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Must(tt.want, "POST", api.AdminPathInstances, servertest.AdminToken, tt.body, nil)
			if msg := r.ErrorBody(t).Message; !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q does not mention %q", msg, tt.msg)
			}
		})
	}
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"taken/terminate", servertest.AdminToken, nil, nil)
	if inst := f.Create("taken"); inst.State != api.StateRunning {
		t.Errorf("recreated instance is %s", inst.State)
	}
}

func TestAddressPoolExhausted(t *testing.T) {
	// A /30 has two host addresses: one instance's worth.
	f := servertest.New(t, server.Config{InternalCIDR: "127.1.0.0/30"})
	f.Create("n1")
	r := f.Must(http.StatusConflict, "POST", api.AdminPathInstances, servertest.AdminToken, api.CreateInstanceRequest{Name: "n2"}, nil)
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, "127.1.0.0/30") {
		t.Errorf("message %q does not name the pool", msg)
	}
}

// A dual-stack cloud gives each instance an IPv6 InternalIP after its IPv4
// ones, in order (TestNewRejects refuses a bad IPv6 pool).
func TestDualStackAddresses(t *testing.T) {
	f := servertest.New(t, server.Config{InternalCIDRv6: "fd00:1::/120"})
	var v6 []string
	for _, name := range []string{"n1", "n2"} {
		inst := f.Create(name)
		var types []string
		for _, a := range inst.Addresses {
			types = append(types, a.Type)
			if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is6() {
				v6 = append(v6, a.Address)
			}
		}
		want := []string{api.AddressInternalIP, api.AddressInternalIP, api.AddressInternalIP, api.AddressExternalIP, api.AddressHostname}
		if !slices.Equal(types, want) {
			t.Errorf("instance %s: address types %v, want %v", name, types, want)
		}
	}
	if !slices.Equal(v6, []string{"fd00:1::1", "fd00:1::2"}) {
		t.Errorf("IPv6 InternalIPs %v, want [fd00:1::1 fd00:1::2]", v6)
	}
}

func TestListAndGet(t *testing.T) {
	f := servertest.New(t, server.Config{})
	n1 := f.Create("n1")
	f.Create("n2")
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n1/terminate", servertest.AdminToken, nil, nil)
	n1again := f.Create("n1")

	var all, named api.InstanceList
	f.Must(http.StatusOK, "GET", api.PathInstances, servertest.CloudToken, nil, &all)
	if len(all.Instances) != 3 {
		t.Errorf("listed %d instances, want 3 (terminated included)", len(all.Instances))
	}
	f.Must(http.StatusOK, "GET", api.PathInstances+"?name=n1", servertest.CloudToken, nil, &named)
	if len(named.Instances) != 2 || named.Instances[0].ID != n1.ID || named.Instances[1].ID != n1again.ID {
		t.Errorf("?name=n1 gave %+v, want both n1s oldest first", named.Instances)
	}
	var none api.InstanceList
	r := f.Must(http.StatusOK, "GET", api.PathInstances+"?name=nobody", servertest.CloudToken, nil, &none)
	if len(none.Instances) != 0 || !bytes.Contains(r.Body, []byte(`"instances":[]`)) {
		t.Errorf("empty list body %s, want an empty array", r.Body)
	}

	var got api.Instance
	f.Must(http.StatusOK, "GET", api.PathInstance+n1.ID, servertest.CloudToken, nil, &got)
	if got.ID != n1.ID || got.State != api.StateTerminated {
		t.Errorf("got %+v, want terminated %s", got, n1.ID)
	}
	r = f.Must(http.StatusNotFound, "GET", api.PathInstance+"i-000000000000", servertest.CloudToken, nil, nil)
	if e := r.ErrorBody(t); e.Code != api.CodeNotFound || !strings.Contains(e.Message, "i-000000000000") {
		t.Errorf("error %+v, want NotFound naming the ID", e)
	}
	// The cloud API looks up by ID only; names are an admin convenience.
	f.Must(http.StatusNotFound, "GET", api.PathInstance+"n2", servertest.CloudToken, nil, nil)
}

func TestStateTransitions(t *testing.T) {
	f := servertest.New(t, server.Config{})
	f.Create("n1")
	steps := []struct {
		action string
		want   int
		state  api.InstanceState
	}{
		{"stop", http.StatusOK, api.StateStopped},
		{"stop", http.StatusOK, api.StateStopped},
		{"start", http.StatusOK, api.StateRunning},
		{"start", http.StatusOK, api.StateRunning},
		{"terminate", http.StatusOK, api.StateTerminated},
		{"terminate", http.StatusOK, api.StateTerminated},
		{"start", http.StatusConflict, api.StateTerminated},
		{"stop", http.StatusConflict, api.StateTerminated},
		{"reboot", http.StatusNotFound, api.StateTerminated},
	}
	for i, st := range steps {
		f.Must(st.want, "POST", api.AdminPathInstance+"n1/"+st.action, servertest.AdminToken, nil, nil)
		var got api.Instance
		f.Must(http.StatusOK, "GET", api.AdminPathInstance+"n1", servertest.AdminToken, nil, &got)
		if got.State != st.state {
			t.Fatalf("step %d (%s): state %s, want %s", i, st.action, got.State, st.state)
		}
	}
	f.Must(http.StatusNotFound, "POST", api.AdminPathInstance+"ghost/stop", servertest.AdminToken, nil, nil)
}

func TestAdminLookup(t *testing.T) {
	f := servertest.New(t, server.Config{})
	old := f.Create("n1")
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n1/terminate", servertest.AdminToken, nil, nil)
	live := f.Create("n1")
	other := f.Create("n2")

	tests := []struct{ ref, wantID string }{
		{"n1", live.ID},
		{old.ID, old.ID},
		{other.ID, other.ID},
		{"n2", other.ID},
	}
	for _, tt := range tests {
		var got api.Instance
		f.Must(http.StatusOK, "GET", api.AdminPathInstance+tt.ref, servertest.AdminToken, nil, &got)
		if got.ID != tt.wantID {
			t.Errorf("lookup %q gave %s, want %s", tt.ref, got.ID, tt.wantID)
		}
	}
	// With every n1 terminated, the name means the newest one.
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n1/terminate", servertest.AdminToken, nil, nil)
	var got api.Instance
	f.Must(http.StatusOK, "GET", api.AdminPathInstance+"n1", servertest.AdminToken, nil, &got)
	if got.ID != live.ID {
		t.Errorf("all terminated: lookup gave %s, want newest %s", got.ID, live.ID)
	}
	var list api.InstanceList
	f.Must(http.StatusOK, "GET", api.AdminPathInstances, servertest.AdminToken, nil, &list)
	if len(list.Instances) != 3 {
		t.Errorf("admin list has %d instances, want 3", len(list.Instances))
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  server.Config
		msg  string
	}{
		{"no cloud token", server.Config{AdminToken: "a"}, "token"},
		{"no admin token", server.Config{CloudToken: "c"}, "token"},
		{"same tokens", server.Config{CloudToken: "x", AdminToken: "x"}, "must differ"},
		{"bad internal CIDR", server.Config{CloudToken: "c", AdminToken: "a", InternalCIDR: "127.1.0.0"}, "internal CIDR"},
		{"bad external CIDR", server.Config{CloudToken: "c", AdminToken: "a", ExternalCIDR: "x/8"}, "external CIDR"},
		{"bad LB CIDR", server.Config{CloudToken: "c", AdminToken: "a", LBCIDR: "127.20.0.1"}, "load balancer CIDR"},
		// 10.20.0.0/16 is no interface's here; --lb-route would route it.
		{"private LB CIDR not routed here", server.Config{CloudToken: "c", AdminToken: "a", LBCIDR: "10.20.0.0/16"}, "cannot assign requested address): fakecloud really listens on load balancer IPs; give a range of 127.0.0.0/8, or route this one here (fakecloud --lb-route)"},
		{"LB CIDR wider than loopback", server.Config{CloudToken: "c", AdminToken: "a", LBCIDR: "127.0.0.0/7"}, "neither loopback nor a private range"},
		{"public LB CIDR", server.Config{CloudToken: "c", AdminToken: "a", LBCIDR: "192.0.2.0/24"}, "neither loopback nor a private range"},
		{"IPv6 LB CIDR off loopback", server.Config{CloudToken: "c", AdminToken: "a", LBCIDR: "2001:db8::/64"}, "neither loopback nor a private range"},
		{"public IPv6 LB range", server.Config{CloudToken: "c", AdminToken: "a", LBCIDRv6: "2001:db8::/64"}, "load balancer IPv6 CIDR 2001:db8::/64 is not this machine's to route (neither loopback nor a private range)"},
		{"IPv6 LB range not routed here", server.Config{CloudToken: "c", AdminToken: "a", LBCIDRv6: "fd00:2:fe::/64"}, "load balancer IPv6 CIDR fd00:2:fe::/64 is not routed to this machine ("},
		{"IPv4 range as the IPv6 LB range", server.Config{CloudToken: "c", AdminToken: "a", LBCIDRv6: "127.9.0.0/16"}, "load balancer IPv6 CIDR 127.9.0.0/16: give an IPv6 range"},
		{"IPv4 range as the IPv6 pool", server.Config{CloudToken: "c", AdminToken: "a", InternalCIDRv6: "10.0.0.0/8"}, "internal IPv6 CIDR 10.0.0.0/8: give an IPv6 range of at least 256 addresses"},
		{"IPv6 pool too small", server.Config{CloudToken: "c", AdminToken: "a", InternalCIDRv6: "fd00:1::/124"}, "internal IPv6 CIDR fd00:1::/124: give"},
		{"IPv6 pool not a CIDR", server.Config{CloudToken: "c", AdminToken: "a", InternalCIDRv6: "fd00:1::"}, `internal IPv6 CIDR "fd00:1::"`},
		{"empty zone", server.Config{CloudToken: "c", AdminToken: "a", Zones: []string{"a", ""}}, "zone 2"},
		{"bad fault", server.Config{CloudToken: "c", AdminToken: "a", Faults: []api.Fault{{Operation: "*", Kind: "explode"}}}, "initial fault 1: kind"},
		{"unwritable state dir", server.Config{CloudToken: "c", AdminToken: "a", StateFile: "/nonexistent/dir/state.json"}, "/nonexistent/dir/state.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("New: %v, want an error mentioning %q", err, tt.msg)
			}
		})
	}
}

// TestMachinesFollowState: every change of an instance's state reaches
// Config.Machines once, in order, and a call that changes nothing does not.
func TestMachinesFollowState(t *testing.T) {
	var mu sync.Mutex
	var got []string
	f := servertest.New(t, server.Config{Machines: func(name string, state api.InstanceState) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, name+" "+string(state))
	}})
	f.Create("n1")
	for _, action := range []string{"stop", "stop", "start", "terminate", "terminate"} {
		f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n1/"+action, servertest.AdminToken, nil, nil)
	}
	f.Srv.Close() // delivers what is queued
	want := []string{"n1 stopped", "n1 running", "n1 terminated"}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("expected the machine to be told %q, actual %q", want, got)
	}
}
