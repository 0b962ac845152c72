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
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestStateSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, server.Config{StateFile: path})
	n1 := f.Create("n1")
	n2 := f.Create("n2")
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n2/stop", servertest.AdminToken, nil, nil)
	fault := f.AddFault(api.Fault{Operation: api.OpGetInstance, Instance: "n2", Kind: api.FaultError, Count: 3})
	f.Must(http.StatusInternalServerError, "GET", api.PathInstance+n2.ID, servertest.CloudToken, nil, nil)
	f.Create("n3")
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"n3/terminate", servertest.AdminToken, nil, nil)
	var before api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &before)
	lastSeq := before.Entries[len(before.Entries)-1].Seq

	g := servertest.New(t, server.Config{StateFile: path})
	var list api.InstanceList
	g.Must(http.StatusOK, "GET", api.AdminPathInstances, servertest.AdminToken, nil, &list)
	var states []string
	for _, i := range list.Instances {
		states = append(states, i.Name+"="+string(i.State))
	}
	if got := strings.Join(states, ","); got != "n1=running,n2=stopped,n3=terminated" {
		t.Errorf("instances after restart %s", got)
	}
	if list.Instances[0].ID != n1.ID || api.FormatAddresses(list.Instances[0].Addresses) != api.FormatAddresses(n1.Addresses) {
		t.Errorf("n1 changed across the restart: %+v, was %+v", list.Instances[0], n1)
	}
	var faults api.FaultList
	g.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &faults)
	if len(faults.Faults) != 1 || faults.Faults[0].ID != fault.ID || faults.Faults[0].Count != 2 {
		t.Errorf("faults after restart %+v, want %s with count 2 left", faults.Faults, fault.ID)
	}
	// Allocators carry on where they were: nothing is handed out twice.
	n4 := g.Create("n4")
	if got := api.FormatAddresses(n4.Addresses); got != "InternalIP=127.1.0.7,InternalIP=127.1.0.8,ExternalIP=127.2.0.4,Hostname=n4" {
		t.Errorf("n4 addresses %s reuse or skip the pools' positions", got)
	}
	if n4.Zone != "fake-region-1a" {
		t.Errorf("n4 zone %s, want the round-robin to continue at fake-region-1a", n4.Zone)
	}
	if id := g.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultThrottle}).ID; id != "f-2" {
		t.Errorf("fault ID %s after restart, want f-2", id)
	}
	var after api.AuditLog
	g.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &after)
	if first := after.Entries[0].Seq; first <= lastSeq {
		t.Errorf("audit restarted at seq %d, not above the %d handed out before", first, lastSeq)
	}
}

func TestStateWriteLeavesOnlyTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	f := servertest.New(t, server.Config{StateFile: path})
	for _, n := range []string{"a", "b", "c"} {
		f.Create(n)
		f.Must(http.StatusOK, "POST", api.AdminPathInstance+n+"/stop", servertest.AdminToken, nil, nil)
	}
	f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultError, Count: 1})
	f.Must(http.StatusInternalServerError, "GET", api.PathInstances, servertest.CloudToken, nil, nil)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "state.json" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only state.json", names)
	}
	st, err := loadState(path)
	if err != nil || st == nil || len(st.Instances) != 3 || len(st.Faults) != 0 {
		t.Errorf("state file does not hold the last change: %+v, %v", st, err)
	}
}

func TestCorruptStateFile(t *testing.T) {
	tests := []struct {
		name, content, msg string
	}{
		{"empty", "", "EOF"},
		{"not JSON", "{instances", "invalid character"},
		{"unknown field", `{"version":1,"instancez":[]}`, "instancez"},
		{"wrong version", `{"version":7}`, "version 7"},
		{"instance without ID", `{"version":1,"instances":[{"name":"n1"}]}`, "instance 1"},
		{"invalid fault", `{"version":1,"faults":[{"operation":"*","kind":"boom"}]}`, "fault 1"},
		{"trailing data", `{"version":1} {}`, "trailing"},
		{"load balancer without ID", `{"version":1,"loadBalancers":[{"name":"lb","ip":"127.20.0.1"}]}`, "load balancer 1 has no name or id"},
		{"load balancer with a bad IP", `{"version":1,"loadBalancers":[{"name":"lb","id":"lb-1","ip":"x"}]}`, `load balancer "lb": ip`},
		{"load balancer with a bad listener", `{"version":1,"loadBalancers":[{"name":"lb","id":"lb-1","ip":"127.20.0.1","listeners":[{"port":80,"protocol":"SCTP"}]}]}`, "listeners[0].protocol"},
		{"load balancers sharing a name", `{"version":1,"loadBalancers":[{"name":"lb","id":"lb-1","ip":"127.20.0.1"},{"name":"lb","id":"lb-2","ip":"127.20.0.2"}]}`, "load balancer 2 repeats"},
		{"route with a bad CIDR", `{"version":1,"routes":[{"name":"r","cluster":"c","destinationCIDR":"10.0.0.1/8","targetInstance":"i-1"}]}`, `route "r": destinationCIDR`},
		{"route without a name", `{"version":1,"routes":[{"cluster":"c"}]}`, "route 1 has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := server.New(server.Config{CloudToken: "c", AdminToken: "a", StateFile: path})
			if err == nil {
				t.Fatal("New accepted a corrupt state file")
			}
			for _, want := range []string{path, tt.msg, "delete it"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestInitialFaultsReplaceSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, server.Config{StateFile: path})
	f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultThrottle})

	kept := servertest.New(t, server.Config{StateFile: path})
	var list api.FaultList
	kept.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
	if len(list.Faults) != 1 || list.Faults[0].Kind != api.FaultThrottle {
		t.Fatalf("without initial faults the saved ones should stay: %+v", list.Faults)
	}

	g := servertest.New(t, server.Config{StateFile: path, Faults: []api.Fault{{Operation: api.OpGetInstance, Kind: api.FaultError}}})
	g.Must(http.StatusOK, "GET", api.AdminPathFaults, servertest.AdminToken, nil, &list)
	if len(list.Faults) != 1 || list.Faults[0].Kind != api.FaultError || list.Faults[0].ID != "f-2" {
		t.Errorf("faults %+v, want only the initial error fault, as f-2", list.Faults)
	}
}

// A start that fails leaves the state file as it was: the next start,
// with the mistake fixed, finds the cloud the last one left.
func TestFailedStartKeepsStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, server.Config{StateFile: path})
	f.AddFault(api.Fault{Operation: api.OpAny, Kind: api.FaultThrottle})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(server.Config{CloudToken: "c", AdminToken: "a", StateFile: path,
		Faults:       []api.Fault{{Operation: api.OpGetInstance, Kind: api.FaultError}},
		BackendCIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}})
	if err == nil {
		t.Fatal("a backend CIDR wider than a /8 started")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the failed start rewrote the state file:\n%s\nwas:\n%s", after, before)
	}
}

func TestStateKeepsRoutes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, server.Config{StateFile: path})
	inst := f.Create("n1")
	createRoute(f, "c-n1", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.244.1.0/24", TargetInstance: inst.ID}, http.StatusCreated)

	g := servertest.New(t, server.Config{StateFile: path})
	var list api.RouteList
	g.Must(http.StatusOK, "GET", api.PathRoutes+"?cluster=c", servertest.CloudToken, nil, &list)
	if len(list.Routes) != 1 || list.Routes[0].Name != "c-n1" || list.Routes[0].TargetInstance != inst.ID || list.Routes[0].Blackhole {
		t.Errorf("routes after restart %+v", list.Routes)
	}
}

// A state file written before load balancers and routes existed still
// loads: the new fields are optional.
func TestStateFromBeforeLoadBalancers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	old := `{"version":1,"instances":[],"faults":[],"nextFaultID":1,"nextZone":0,"auditSeqFloor":0}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	f := servertest.New(t, server.Config{StateFile: path})
	var lbs api.LoadBalancerList
	if r := f.Must(http.StatusOK, "GET", api.AdminPathLoadBalancers, servertest.AdminToken, nil, &lbs); !strings.Contains(string(r.Body), `"loadBalancers":[]`) {
		t.Errorf("load balancers of an old state file: %s", r.Body)
	}
	var routes api.RouteList
	if r := f.Must(http.StatusOK, "GET", api.AdminPathRoutes, servertest.AdminToken, nil, &routes); !strings.Contains(string(r.Body), `"routes":[]`) {
		t.Errorf("routes of an old state file: %s", r.Body)
	}
}

// A NoSync cloud puts its state write off and shares it among the changes
// meanwhile; the file catches up within the delay, and Close writes what
// is pending.
func TestNoSyncStateWriteIsPutOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, server.Config{StateFile: path, NoSync: true})
	names := func() string {
		st, err := loadState(path)
		if err != nil || st == nil {
			t.Fatalf("load %s: %v", path, err)
		}
		var n []string
		for _, i := range st.Instances {
			n = append(n, i.Name)
		}
		return strings.Join(n, ",")
	}
	var want []string
	for i := 1; i <= 20; i++ {
		want = append(want, fmt.Sprintf("n%d", i))
		f.Create(want[i-1])
	}
	deadline := time.Now().Add(5 * model.SaveDelay)
	for names() != strings.Join(want, ",") {
		if time.Now().After(deadline) {
			t.Fatalf("state file holds %s %s after the changes, want n1..n20", names(), 5*model.SaveDelay)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.Create("last")
	f.Srv.Close()
	if got := names(); !strings.HasSuffix(got, ",last") {
		t.Errorf("after Close the state file holds %s, want the last change written", got)
	}
}

// loadState reads the state file as a restarted cloud would find it; only
// what these tests look at is decoded.
func loadState(path string) (*struct {
	Instances []api.Instance `json:"instances"`
	Faults    []api.Fault    `json:"faults"`
}, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st struct {
		Instances []api.Instance `json:"instances"`
		Faults    []api.Fault    `json:"faults"`
	}
	return &st, json.Unmarshal(b, &st)
}
