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
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/keystone"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// The OpenStack dialect is tested with gophercloud, the client the
// OpenStack CCM is built on: what it parses here, the CCM parses.

func (f *fixture) osLogin(opts gophercloud.AuthOptions) (*gophercloud.ProviderClient, error) {
	f.t.Helper()
	opts.IdentityEndpoint = f.url + openstackjson.Identity + "/v3"
	pc, err := openstack.NewClient(opts.IdentityEndpoint)
	if err != nil {
		f.t.Fatal(err)
	}
	return pc, openstack.Authenticate(context.Background(), pc, opts)
}

func passwordAuth(password string) gophercloud.AuthOptions {
	return gophercloud.AuthOptions{Username: keystone.UserName, Password: password, DomainName: keystone.Domain,
		Scope: &gophercloud.AuthScope{ProjectName: keystone.Project, DomainName: keystone.Domain}}
}

func (f *fixture) osClients() (compute, network *gophercloud.ServiceClient) {
	f.t.Helper()
	pc, err := f.osLogin(passwordAuth(cloudToken))
	if err != nil {
		f.t.Fatalf("login: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: "fake-region-1"}
	if compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		f.t.Fatal(err)
	}
	if network, err = openstack.NewNetworkV2(pc, eo); err != nil {
		f.t.Fatal(err)
	}
	return compute, network
}

func TestKeystone(t *testing.T) {
	f := newFixture(t, Config{})
	if _, err := f.osLogin(passwordAuth(cloudToken)); err != nil {
		t.Errorf("password login: %v", err)
	}
	if _, err := f.osLogin(gophercloud.AuthOptions{ApplicationCredentialID: keystone.AppCredID, ApplicationCredentialSecret: cloudToken}); err != nil {
		t.Errorf("application credential login: %v", err)
	}
	for name, opts := range map[string]gophercloud.AuthOptions{
		"wrong password":     passwordAuth("wrong"),
		"admin token":        passwordAuth(adminToken),
		"wrong secret":       {ApplicationCredentialID: keystone.AppCredID, ApplicationCredentialSecret: "wrong"},
		"unknown user":       {Username: "admin", Password: cloudToken, DomainName: keystone.Domain},
		"unknown project":    {Username: keystone.UserName, Password: cloudToken, DomainName: keystone.Domain, Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainName: keystone.Domain}},
		"unknown credential": {ApplicationCredentialID: "ac-other", ApplicationCredentialSecret: cloudToken},
	} {
		if _, err := f.osLogin(opts); !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
			t.Errorf("%s: got %v, want 401", name, err)
		}
	}
	// A service refuses a missing or made-up token in Keystone's shape.
	for _, tok := range []string{"", "gAAAAAmadeup"} {
		req, _ := http.NewRequest("GET", f.url+openstackjson.Compute+"/v2.1/servers", nil)
		if tok != "" {
			req.Header.Set("X-Auth-Token", tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code int } }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || body.Error.Code != http.StatusUnauthorized {
			t.Errorf("token %q: got %d %+v, want 401 with an error body", tok, resp.StatusCode, body)
		}
	}
}

func TestNova(t *testing.T) {
	f := newFixture(t, Config{})
	a, b := f.create("node-a"), f.create("node-b")
	f.create("node-a2")
	compute, _ := f.osClients()
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

	f.must(http.StatusOK, "POST", api.AdminPathInstance+b.ID+"/stop", adminToken, nil, nil)
	if srv, err := servers.Get(ctx, compute, b.ID).Extract(); err != nil || srv.Status != "SHUTOFF" {
		t.Errorf("stopped server: %v %+v, want SHUTOFF", err, srv)
	}
	f.must(http.StatusOK, "POST", api.AdminPathInstance+b.ID+"/terminate", adminToken, nil, nil)
	if _, err := servers.Get(ctx, compute, b.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("terminated server: %v, want 404", err)
	}

	// A corrupt fault lies in Nova's answer as in the native API's.
	f.addFault(api.Fault{Operation: api.OpGetInstance, Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "nowhere", Instance: "node-a"})
	if srv, err := servers.Get(ctx, compute, a.ID).Extract(); err != nil || srv.AvailabilityZone != "nowhere" {
		t.Errorf("corrupt zone: %v %q, want nowhere", err, srv.AvailabilityZone)
	}
	// An error fault answers in Nova's shape.
	f.addFault(api.Fault{Operation: api.OpListInstances, Kind: api.FaultError, Status: 503, Message: "down"})
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

func TestNeutron(t *testing.T) {
	f := newFixture(t, Config{})
	a := f.create("node-a")
	f.create("node-b")
	_, network := f.osClients()
	ctx := context.Background()

	page, err := ports.List(network, ports.ListOpts{DeviceID: a.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ports.ExtractPorts(page)
	if err != nil || len(ps) != 1 {
		t.Fatalf("ports of %s: %v %+v", a.ID, err, ps)
	}
	var fixed []string
	for _, ip := range ps[0].FixedIPs {
		fixed = append(fixed, ip.IPAddress)
	}
	var internal, external []string
	for _, ad := range a.Addresses {
		switch ad.Type {
		case api.AddressInternalIP:
			internal = append(internal, ad.Address)
		case api.AddressExternalIP:
			external = append(external, ad.Address)
		}
	}
	if strings.Join(fixed, ",") != strings.Join(internal, ",") || ps[0].Status != "ACTIVE" {
		t.Errorf("port %+v: want fixed IPs %v, ACTIVE", ps[0], internal)
	}
	net, err := networks.Get(ctx, network, ps[0].NetworkID).Extract()
	if err != nil || net.Name != openstackjson.NetworkName {
		t.Errorf("port's network: %v %+v", err, net)
	}
	sn, err := subnets.Get(ctx, network, ps[0].FixedIPs[0].SubnetID).Extract()
	if err != nil || sn.NetworkID != ps[0].NetworkID {
		t.Errorf("port's subnet: %v %+v", err, sn)
	}
	page, err = floatingips.List(network, floatingips.ListOpts{PortID: ps[0].ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fips, err := floatingips.ExtractFloatingIPs(page)
	if err != nil || len(fips) != len(external) || fips[0].FloatingIP != external[0] {
		t.Errorf("floating IPs of %s: %v %+v, want %v", ps[0].ID, err, fips, external)
	}
	if _, err := networks.Get(ctx, network, "net-none").Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("unknown network: %v, want 404", err)
	}
	page, err = extensions.List(network).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exts, err := extensions.ExtractExtensions(page)
	if err != nil || len(exts) == 0 {
		t.Errorf("extensions: %v %+v", err, exts)
	}
	// A filter fakecloud does not know is refused, not ignored.
	if _, err := ports.List(network, ports.ListOpts{MACAddress: "fa:16:3e:00:00:01"}).AllPages(ctx); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Errorf("unknown filter: %v, want 400", err)
	}
}

func TestOpenStackAudited(t *testing.T) {
	f := newFixture(t, Config{})
	a := f.create("node-a")
	compute, _ := f.osClients()
	if _, err := servers.Get(context.Background(), compute, a.ID).Extract(); err != nil {
		t.Fatal(err)
	}
	var log api.AuditLog
	f.must(http.StatusOK, "GET", api.AdminPathAudit, adminToken, nil, &log)
	var ops []string
	for _, e := range log.Entries {
		ops = append(ops, e.Operation+":"+e.Caller)
	}
	got := strings.Join(ops, " ")
	if !strings.Contains(got, api.OpAuthenticate+":cloud") || !strings.Contains(got, api.OpGetInstance+":cloud") {
		t.Errorf("audit %s: want the login, as the CCM once it succeeded, and the server's GET", got)
	}
}

// TestNovaPowerActions: os-stop, os-start and DELETE of a server, as Nova
// answers them, each seen in the instance's state.
func TestNovaPowerActions(t *testing.T) {
	f := newFixture(t, Config{})
	a := f.create("node-a")
	compute, _ := f.osClients()
	ctx := context.Background()
	state := func() api.InstanceState {
		var inst api.Instance
		f.must(http.StatusOK, "GET", api.AdminPathInstance+a.ID, adminToken, nil, &inst)
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
