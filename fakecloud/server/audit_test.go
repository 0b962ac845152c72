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
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestAudit(t *testing.T) {
	var log bytes.Buffer
	f := servertest.New(t, server.Config{AuditLog: &log})
	inst := f.Create("n1")
	fault := f.AddFault(api.Fault{Operation: api.OpGetInstance, Kind: api.FaultThrottle, Count: 1})
	f.Do("GET", api.PathInstance+inst.ID, servertest.CloudToken, nil)
	f.Do("GET", api.PathInstances+"?name=n1", servertest.CloudToken, nil)
	f.Do("GET", api.PathInstances, "wrong", nil)
	f.Do("GET", api.PathHealthz, "", nil)
	f.Do("POST", api.AdminPathInstance+"n1/stop", servertest.AdminToken, nil)

	var all api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &all)
	want := []api.AuditEntry{
		{Seq: 1, Caller: "admin", Method: "POST", Path: api.AdminPathInstances, Instance: "n1", Status: 201},
		{Seq: 2, Caller: "admin", Method: "POST", Path: api.AdminPathFaults, Status: 201},
		{Seq: 3, Caller: "cloud", Method: "GET", Path: api.PathInstance + inst.ID, Operation: api.OpGetInstance, Instance: inst.ID, Status: 429, Fault: fault.ID},
		{Seq: 4, Caller: "cloud", Method: "GET", Path: api.PathInstances, Operation: api.OpListInstances, Instance: "n1", Status: 200},
		{Seq: 5, Caller: "anonymous", Method: "GET", Path: api.PathInstances, Operation: api.OpListInstances, Status: 401},
		{Seq: 6, Caller: "anonymous", Method: "GET", Path: api.PathHealthz, Status: 200},
		{Seq: 7, Caller: "admin", Method: "POST", Path: api.AdminPathInstance + "n1/stop", Instance: "n1", Status: 200},
	}
	if len(all.Entries) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(all.Entries), len(want), all.Entries)
	}
	for i, w := range want {
		got := all.Entries[i]
		if got.Time.IsZero() {
			t.Errorf("entry %d has no time", i)
		}
		got.Time, got.Duration = w.Time, w.Duration
		if got != w {
			t.Errorf("entry %d\n got %+v\nwant %+v", i, got, w)
		}
	}

	var since api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit+"?since=5", servertest.AdminToken, nil, &since)
	if len(since.Entries) != 3 || since.Entries[0].Seq != 6 || since.Entries[2].Path != api.AdminPathAudit {
		t.Errorf("since=5 gave %+v, want seqs 6, 7 and the first audit read", since.Entries)
	}
	f.Must(http.StatusBadRequest, "GET", api.AdminPathAudit+"?since=-1", servertest.AdminToken, nil, nil)

	// The log writer gets the same entries, one JSON object per line.
	sc := bufio.NewScanner(strings.NewReader(log.String()))
	var n int64
	for sc.Scan() {
		var e api.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		n++
		if e.Seq != n {
			t.Errorf("audit log line %d has seq %d", n, e.Seq)
		}
	}
	if n < int64(len(want)) {
		t.Errorf("audit log has %d lines, want at least %d", n, len(want))
	}
}

func TestAuditIsBounded(t *testing.T) {
	f := servertest.New(t, server.Config{})
	f.Srv.SetAuditKeep(3)
	for i := 0; i < 5; i++ {
		f.Do("GET", api.PathHealthz, "", nil)
	}
	var all api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &all)
	if len(all.Entries) != 3 || all.Entries[0].Seq != 3 || all.Entries[2].Seq != 5 {
		t.Errorf("entries %+v, want the newest three, seqs 3 to 5", all.Entries)
	}
}

func TestAuditLBAndRoutes(t *testing.T) {
	f := servertest.New(t, netConfig())
	inst := f.Create("n1")
	var before api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &before)
	since := before.Entries[len(before.Entries)-1].Seq

	f.Ensure("lb1", api.LoadBalancerSpec{}, http.StatusCreated)
	f.Do("GET", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil)
	f.Do("GET", api.PathLoadBalancers, servertest.CloudToken, nil)
	f.Do("DELETE", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil)
	f.Do("DELETE", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil)
	createRoute(f, "r1", api.RouteSpec{Cluster: "c", DestinationCIDR: "10.0.0.0/24", TargetInstance: inst.ID}, http.StatusCreated)
	f.Do("GET", api.PathRoutes+"?cluster=c", servertest.CloudToken, nil)
	f.Do("DELETE", api.PathRoute+"r1", servertest.CloudToken, nil)
	f.Do("GET", api.AdminPathLoadBalancer+"lb1", servertest.AdminToken, nil)
	f.Do("DELETE", api.AdminPathRoute+"r1", servertest.AdminToken, nil)
	f.Do("PUT", api.PathLoadBalancer+"lb2", servertest.AdminToken, api.LoadBalancerSpec{})

	var log api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit+"?since="+strconv.FormatInt(since, 10), servertest.AdminToken, nil, &log)
	want := []api.AuditEntry{
		{Caller: "cloud", Method: "PUT", Path: api.PathLoadBalancer + "lb1", Operation: api.OpEnsureLoadBalancer, Instance: "lb1", Status: 201},
		{Caller: "cloud", Method: "GET", Path: api.PathLoadBalancer + "lb1", Operation: api.OpGetLoadBalancer, Instance: "lb1", Status: 200},
		{Caller: "cloud", Method: "GET", Path: api.PathLoadBalancers, Operation: api.OpListLoadBalancers, Status: 200},
		{Caller: "cloud", Method: "DELETE", Path: api.PathLoadBalancer + "lb1", Operation: api.OpDeleteLoadBalancer, Instance: "lb1", Status: 204},
		{Caller: "cloud", Method: "DELETE", Path: api.PathLoadBalancer + "lb1", Operation: api.OpDeleteLoadBalancer, Instance: "lb1", Status: 404},
		{Caller: "cloud", Method: "PUT", Path: api.PathRoute + "r1", Operation: api.OpCreateRoute, Instance: "r1", Status: 201},
		{Caller: "cloud", Method: "GET", Path: api.PathRoutes, Operation: api.OpListRoutes, Status: 200},
		{Caller: "cloud", Method: "DELETE", Path: api.PathRoute + "r1", Operation: api.OpDeleteRoute, Instance: "r1", Status: 204},
		{Caller: "admin", Method: "GET", Path: api.AdminPathLoadBalancer + "lb1", Instance: "lb1", Status: 404},
		{Caller: "admin", Method: "DELETE", Path: api.AdminPathRoute + "r1", Instance: "r1", Status: 404},
		{Caller: "anonymous", Method: "PUT", Path: api.PathLoadBalancer + "lb2", Operation: api.OpEnsureLoadBalancer, Status: 401},
	}
	// The first entry after since is the audit read above.
	got := log.Entries[1:]
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		g.Seq, g.Time, g.Duration = 0, w.Time, w.Duration
		if g != w {
			t.Errorf("entry %d\n got %+v\nwant %+v", i, g, w)
		}
	}
}
