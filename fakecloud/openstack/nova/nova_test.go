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

package nova_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The OpenStack dialect is tested with gophercloud, the client the
// OpenStack CCM is built on: what it parses here, the CCM parses. The
// tests drive the whole server (servertest), as the CCM does.

func TestNova(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a, b := f.Create("node-a"), f.Create("node-b")
	f.Create("node-a2")
	compute, _ := f.OSClients()
	ctx := context.Background()

	// The OpenStack CCM looks a node's server up by an anchored regular
	// expression of its name.
	page, err := servers.List(compute, servers.ListOpts{Name: "^node-a$"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := servers.ExtractServers(page)
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("list ^node-a$: %v %+v, want only %s", err, list, a.ID)
	}
	srv, err := servers.Get(ctx, compute, b.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if srv.Name != "node-b" || srv.Status != "ACTIVE" || srv.AvailabilityZone != b.Zone || srv.Metadata["hostname"] != b.Hostname {
		t.Errorf("server %+v does not show instance %+v", srv, b)
	}
	fl, err := flavors.Get(ctx, compute, srv.Flavor["id"].(string)).Extract()
	if err != nil || fl.Name != b.InstanceType || fl.ID == fl.Name {
		t.Errorf("flavor %+v (%v): want the name %s under another id", fl, err, b.InstanceType)
	}
	if _, err := flavors.Get(ctx, compute, "42").Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("unknown flavor: %v, want 404", err)
	}

	f.Must(http.StatusOK, "POST", api.AdminPathInstance+b.ID+"/stop", servertest.AdminToken, nil, nil)
	if srv, err := servers.Get(ctx, compute, b.ID).Extract(); err != nil || srv.Status != "SHUTOFF" {
		t.Errorf("stopped server: %v %+v, want SHUTOFF", err, srv)
	}
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+b.ID+"/terminate", servertest.AdminToken, nil, nil)
	if _, err := servers.Get(ctx, compute, b.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("terminated server: %v, want 404", err)
	}

	// A corrupt fault lies in Nova's answer as in the native API's.
	f.AddFault(api.Fault{Operation: api.OpGetInstance, Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "nowhere", Instance: "node-a"})
	if srv, err := servers.Get(ctx, compute, a.ID).Extract(); err != nil || srv.AvailabilityZone != "nowhere" {
		t.Errorf("corrupt zone: %v %q, want nowhere", err, srv.AvailabilityZone)
	}
	// An error fault answers in Nova's shape.
	f.AddFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultError, Status: 503, Message: "down"})
	_, err = servers.List(compute, servers.ListOpts{}).AllPages(ctx)
	if !gophercloud.ResponseCodeIs(err, http.StatusServiceUnavailable) || !strings.Contains(err.Error(), "serviceUnavailable") {
		t.Errorf("error fault: %v, want 503 with Nova's body", err)
	}

	// What fakecloud does not emulate is a 404, never a 200.
	resp, err := compute.Get(ctx, compute.ServiceURL("os-hypervisors"), nil, nil)
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("unemulated call: %v %v, want 404", resp, err)
	}
}

// TestNovaPowerActions: os-stop, os-start and DELETE of a server, as Nova
// answers them, each seen in the instance's state.
func TestNovaPowerActions(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	compute, _ := f.OSClients()
	ctx := context.Background()
	state := func() api.InstanceState {
		var inst api.Instance
		f.Must(http.StatusOK, "GET", api.AdminPathInstance+a.ID, servertest.AdminToken, nil, &inst)
		return inst.State
	}

	if err := servers.Stop(ctx, compute, a.ID).ExtractErr(); err != nil || state() != api.StateStopped {
		t.Fatalf("os-stop: %v, state %s, want stopped", err, state())
	}
	if err := servers.Stop(ctx, compute, a.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusConflict) || !strings.Contains(err.Error(), "conflictingRequest") ||
		!strings.Contains(err.Error(), "Cannot 'stop' instance "+a.ID+" while it is in vm_state stopped") {
		t.Errorf("os-stop of a stopped server: %v, want 409 conflictingRequest", err)
	}
	if err := servers.Start(ctx, compute, a.ID).ExtractErr(); err != nil || state() != api.StateRunning {
		t.Fatalf("os-start: %v, state %s, want running", err, state())
	}
	if err := servers.Start(ctx, compute, a.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Errorf("os-start of an active server: %v, want 409", err)
	}
	if err := servers.Reboot(ctx, compute, a.ID, servers.RebootOpts{Type: servers.SoftReboot}).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) ||
		!strings.Contains(err.Error(), "There is no such action: reboot") {
		t.Errorf("an action fakecloud does not emulate: %v, want 400", err)
	}
	if err := servers.Delete(ctx, compute, a.ID).ExtractErr(); err != nil || state() != api.StateTerminated {
		t.Fatalf("delete: %v, state %s, want terminated", err, state())
	}
	for name, err := range map[string]error{
		"delete": servers.Delete(ctx, compute, a.ID).ExtractErr(),
		"get":    servers.Get(ctx, compute, a.ID).Err,
		"stop":   servers.Stop(ctx, compute, a.ID).ExtractErr(),
	} {
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) || !strings.Contains(err.Error(), "itemNotFound") {
			t.Errorf("%s of a deleted server: %v, want 404 itemNotFound", name, err)
		}
	}
}
