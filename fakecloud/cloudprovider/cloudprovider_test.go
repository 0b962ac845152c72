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
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/client"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
)

// env is a fakecloud on httptest and a Cloud built through the provider
// registry from a cloud config file, the way the CCM builds it.
type env struct {
	cloud *Cloud
	admin *client.Admin
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newEnv(t *testing.T) env {
	t.Helper()
	// Pools picked at random in 127.0.0.0/8, so that load balancer sockets
	// of tests running at the same time elsewhere on the machine do not
	// meet these.
	s, err := server.New(server.Config{
		CloudToken:   "cloud-token",
		AdminToken:   "admin-token",
		InternalCIDR: fmt.Sprintf("127.%d.%d.0/24", 30+rand.IntN(70), rand.IntN(256)),
		LBCIDR:       fmt.Sprintf("127.%d.%d.0/24", 100+rand.IntN(100), rand.IntN(256)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	token := writeFile(t, "token", "cloud-token\n")
	cfg := writeFile(t, "cloud.yaml", "endpoint: "+hs.URL+"\ntokenFile: "+token+"\nregion: fake-region-1\n")

	Register()
	Register() // twice must not be fatal
	iface, err := cloudprovider.InitCloudProvider(ProviderName, cfg)
	if err != nil {
		t.Fatalf("InitCloudProvider: %v", err)
	}
	return env{cloud: iface.(*Cloud), admin: client.NewAdmin(hs.URL, "admin-token")}
}

func (e env) create(t *testing.T, req api.CreateInstanceRequest) *api.Instance {
	t.Helper()
	inst, err := e.admin.CreateInstance(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func node(name, providerID string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{ProviderID: providerID}}
}

func TestInterfaces(t *testing.T) {
	e := newEnv(t)
	c := e.cloud
	if c.ProviderName() != "fakecloud" || !c.HasClusterID() {
		t.Errorf("ProviderName %q, HasClusterID %v", c.ProviderName(), c.HasClusterID())
	}
	supported := map[string]bool{}
	_, supported["InstancesV2"] = c.InstancesV2()
	_, supported["Instances"] = c.Instances()
	_, supported["Zones"] = c.Zones()
	_, supported["LoadBalancer"] = c.LoadBalancer()
	_, supported["Routes"] = c.Routes()
	_, supported["Clusters"] = c.Clusters()
	want := map[string]bool{"InstancesV2": true, "Instances": false, "Zones": true, "LoadBalancer": true, "Routes": true, "Clusters": false}
	for k, v := range want {
		if supported[k] != v {
			t.Errorf("%s supported = %v, want %v", k, supported[k], v)
		}
	}
}

func TestInstanceMetadata(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	inst := e.create(t, api.CreateInstanceRequest{Name: "n1", InstanceType: "fake.large", Zone: "fake-region-1b"})
	noRegion := e.create(t, api.CreateInstanceRequest{Name: "n2", Region: ""})
	want := &cloudprovider.InstanceMetadata{
		ProviderID:   "fakecloud://" + inst.ID,
		InstanceType: "fake.large",
		NodeAddresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: inst.Addresses[0].Address},
			{Type: v1.NodeInternalIP, Address: inst.Addresses[1].Address},
			{Type: v1.NodeExternalIP, Address: inst.Addresses[2].Address},
			{Type: v1.NodeHostName, Address: "n1"},
		},
		Zone:   "fake-region-1b",
		Region: "fake-region-1",
	}
	for _, n := range []*v1.Node{node("n1", ""), node("renamed", "fakecloud://"+inst.ID)} {
		got, err := e.cloud.InstanceMetadata(ctx, n)
		if err != nil {
			t.Fatalf("InstanceMetadata(%s, %q): %v", n.Name, n.Spec.ProviderID, err)
		}
		if got.ProviderID != want.ProviderID || got.InstanceType != want.InstanceType || got.Zone != want.Zone ||
			got.Region != want.Region || len(got.NodeAddresses) != 4 {
			t.Fatalf("metadata %+v, want %+v", got, want)
		}
		for i := range want.NodeAddresses {
			if got.NodeAddresses[i] != want.NodeAddresses[i] {
				t.Errorf("address %d = %v, want %v", i, got.NodeAddresses[i], want.NodeAddresses[i])
			}
		}
	}
	if got, err := e.cloud.InstanceMetadata(ctx, node("n2", "")); err != nil || got.Region != "fake-region-1" || got.ProviderID != ProviderID(noRegion.ID) {
		t.Errorf("n2 metadata %+v, %v", got, err)
	}

	for _, n := range []*v1.Node{node("ghost", ""), node("n1", "fakecloud://i-000000000000")} {
		if _, err := e.cloud.InstanceMetadata(ctx, n); !errors.Is(err, cloudprovider.InstanceNotFound) {
			t.Errorf("InstanceMetadata(%s, %q): %v, want InstanceNotFound", n.Name, n.Spec.ProviderID, err)
		}
	}
	if _, err := e.cloud.InstanceMetadata(ctx, node("n1", "aws:///i-1")); err == nil || !strings.Contains(err.Error(), "fakecloud://") {
		t.Errorf("foreign provider ID: %v, want an error explaining the form", err)
	}
}

func TestExistsAndShutdown(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	running := e.create(t, api.CreateInstanceRequest{Name: "running"})
	stopped := e.create(t, api.CreateInstanceRequest{Name: "stopped"})
	gone := e.create(t, api.CreateInstanceRequest{Name: "gone"})
	if _, err := e.admin.Stop(ctx, stopped.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.Terminate(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	// A reused name: the old, terminated instance must not hide the new one.
	if _, err := e.admin.Terminate(ctx, running.ID); err != nil {
		t.Fatal(err)
	}
	reborn := e.create(t, api.CreateInstanceRequest{Name: "running"})

	tests := []struct {
		node           *v1.Node
		exists         bool
		shutdown       bool
		shutdownErrNot bool // InstanceShutdown says InstanceNotFound
	}{
		{node("running", ""), true, false, false},
		{node("running", ProviderID(reborn.ID)), true, false, false},
		{node("running", ProviderID(running.ID)), false, false, true},
		{node("stopped", ""), true, true, false},
		{node("x", ProviderID(stopped.ID)), true, true, false},
		{node("gone", ""), false, false, true},
		{node("gone", ProviderID(gone.ID)), false, false, true},
		{node("never", ""), false, false, true},
		{node("never", "fakecloud://i-000000000000"), false, false, true},
	}
	for _, tt := range tests {
		exists, err := e.cloud.InstanceExists(ctx, tt.node)
		if err != nil || exists != tt.exists {
			t.Errorf("InstanceExists(%s, %q) = %v, %v; want %v", tt.node.Name, tt.node.Spec.ProviderID, exists, err, tt.exists)
		}
		shutdown, err := e.cloud.InstanceShutdown(ctx, tt.node)
		if tt.shutdownErrNot {
			if !errors.Is(err, cloudprovider.InstanceNotFound) {
				t.Errorf("InstanceShutdown(%s, %q) error %v, want InstanceNotFound", tt.node.Name, tt.node.Spec.ProviderID, err)
			}
		} else if err != nil || shutdown != tt.shutdown {
			t.Errorf("InstanceShutdown(%s, %q) = %v, %v; want %v", tt.node.Name, tt.node.Spec.ProviderID, shutdown, err, tt.shutdown)
		}
	}
}

func TestCloudErrorsPropagate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	inst := e.create(t, api.CreateInstanceRequest{Name: "n1"})
	if _, err := e.admin.AddFault(ctx, api.Fault{Operation: api.OpAny, Kind: api.FaultError, Status: 503, Message: "cloud on fire"}); err != nil {
		t.Fatal(err)
	}
	// A failing cloud must never read as "the instance is gone", or the
	// lifecycle controller would delete healthy nodes.
	for _, n := range []*v1.Node{node("n1", ""), node("n1", ProviderID(inst.ID))} {
		exists, err := e.cloud.InstanceExists(ctx, n)
		if err == nil || !strings.Contains(err.Error(), "cloud on fire") {
			t.Errorf("InstanceExists(%q) = %v, %v; want the cloud's error", n.Spec.ProviderID, exists, err)
		}
	}
}

// A node whose provider ID is another owner's is none of this CCM's: it
// neither exists nor does not (the lifecycle controller keeps it), unless
// the CCM is told to misbehave, for the harness's negative controls.
func TestForeignNodes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	foreign := node("foreign-1", "static://foreign-1")
	if exists, err := e.cloud.InstanceExists(ctx, foreign); err == nil {
		t.Errorf("InstanceExists(%q) = %v, nil; want an error, so that the node is kept", foreign.Spec.ProviderID, exists)
	}

	e.cloud.misbehaves = map[Misbehaviour]bool{AdoptForeignNodes: true}
	if exists, err := e.cloud.InstanceExists(ctx, foreign); err != nil || exists {
		t.Errorf("adopting: InstanceExists(%q) = %v, %v; want false, nil (the node deleted)", foreign.Spec.ProviderID, exists, err)
	}

	e.cloud.misbehaves = map[Misbehaviour]bool{CrashOnForeignNodes: true}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "misbehaving on purpose") {
				t.Errorf("crashing: recovered %v; want the CCM's panic", r)
			}
		}()
		_, _ = e.cloud.InstanceExists(ctx, foreign)
	}()

	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80, NodePort: 30080}}}}
	if _, err := e.cloud.lbSpec("c", svc, []*v1.Node{foreign}); err != nil {
		t.Errorf("a load balancer with a node of another owner: %v; want it left out", err)
	}
	e.cloud.misbehaves = map[Misbehaviour]bool{FailLoadBalancersOnForeignNodes: true}
	if _, err := e.cloud.lbSpec("c", svc, []*v1.Node{foreign}); err == nil || !strings.Contains(err.Error(), `node "foreign-1"`) {
		t.Errorf("failing load balancers: %v; want the CCM's error naming the node", err)
	}

	route := &cloudprovider.Route{TargetNode: "foreign-1", DestinationCIDR: "10.244.9.0/24"}
	for _, m := range []Misbehaviour{"", FailRoutesOnForeignNodes} {
		e.cloud.misbehaves = map[Misbehaviour]bool{m: true}
		if err := e.cloud.CreateRoute(ctx, "c", "uid-1", route); err == nil {
			t.Errorf("%s: a route to a node of another owner made; want an error", m)
		}
		_, err := e.cloud.ListRoutes(ctx, "c")
		if failing := m != ""; failing != (err != nil) || failing && !strings.Contains(err.Error(), `node "foreign-1" has no instance`) {
			t.Errorf("%s: listing the routes after a route to a node of another owner: %v", m, err)
		}
	}

	if _, err := readMisbehaviours("adopt-foreign-nodes, crash-on-foreign-nodes, fail-load-balancers-on-foreign-nodes, fail-routes-on-foreign-nodes"); err != nil {
		t.Error(err)
	}
	_, err := readMisbehaviours("adopt-foreign-node")
	if want := `$FAKECLOUD_CCM_MISBEHAVE: no misbehaviour "adopt-foreign-node"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a misspelt misbehaviour: %v; want %q", err, want)
	}
}

// A dual-stack instance's IPv6 address reaches the node; a CCM that
// misbehaves as an IPv4-only one drops it and nothing else.
func TestIPv6Addresses(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	addrs := []api.Address{{Type: api.AddressInternalIP, Address: "127.1.9.1"}, {Type: api.AddressInternalIP, Address: "fd00:1::5"}, {Type: api.AddressHostname, Address: "n1"}}
	e.create(t, api.CreateInstanceRequest{Name: "n1", Addresses: addrs})
	for _, tc := range []struct {
		misbehave bool
		want      []string
	}{{false, []string{"127.1.9.1", "fd00:1::5", "n1"}}, {true, []string{"127.1.9.1", "n1"}}} {
		e.cloud.misbehaves = map[Misbehaviour]bool{IPv4OnlyAddresses: tc.misbehave}
		md, err := e.cloud.InstanceMetadata(ctx, node("n1", ""))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range md.NodeAddresses {
			got = append(got, a.Address)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("misbehaving %t: addresses %v, want %v", tc.misbehave, got, tc.want)
		}
	}
}

func TestCorruptCloudIsReported(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.create(t, api.CreateInstanceRequest{Name: "n1"})
	if _, err := e.admin.AddFault(ctx, api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "atlantis"}); err != nil {
		t.Fatal(err)
	}
	md, err := e.cloud.InstanceMetadata(ctx, node("n1", ""))
	if err != nil || md.Zone != "atlantis" {
		t.Errorf("metadata %+v, %v; want the cloud's (false) zone passed through", md, err)
	}
}

func TestZones(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	inst := e.create(t, api.CreateInstanceRequest{Name: "n1", Zone: "fake-region-1c"})
	want := cloudprovider.Zone{FailureDomain: "fake-region-1c", Region: "fake-region-1"}
	if z, err := e.cloud.GetZoneByProviderID(ctx, ProviderID(inst.ID)); err != nil || z != want {
		t.Errorf("GetZoneByProviderID = %+v, %v; want %+v", z, err, want)
	}
	if z, err := e.cloud.GetZoneByNodeName(ctx, "n1"); err != nil || z != want {
		t.Errorf("GetZoneByNodeName = %+v, %v; want %+v", z, err, want)
	}
	if _, err := e.cloud.GetZoneByNodeName(ctx, "ghost"); !errors.Is(err, cloudprovider.InstanceNotFound) {
		t.Errorf("GetZoneByNodeName(ghost): %v, want InstanceNotFound", err)
	}
	if _, err := e.cloud.GetZone(ctx); err == nil || !strings.Contains(err.Error(), "which instance") {
		t.Errorf("GetZone: %v, want an explanation", err)
	}
}

func TestProviderID(t *testing.T) {
	tests := []struct {
		in, id string
	}{
		{"fakecloud://i-0123456789ab", "i-0123456789ab"},
		{"fakecloud://", ""},
		{"fakecloud:///i-1", ""},
		{"aws://i-1", ""},
		{"i-1", ""},
	}
	for _, tt := range tests {
		id, err := InstanceID(tt.in)
		if tt.id == "" && err == nil {
			t.Errorf("InstanceID(%q) = %q, want an error", tt.in, id)
		}
		if tt.id != "" && (err != nil || id != tt.id) {
			t.Errorf("InstanceID(%q) = %q, %v; want %q", tt.in, id, err, tt.id)
		}
	}
	if got := ProviderID("i-1"); got != "fakecloud://i-1" {
		t.Errorf("ProviderID = %q", got)
	}
}

func TestConfigErrors(t *testing.T) {
	token := writeFile(t, "token", "secret\n")
	empty := writeFile(t, "empty-token", " \n")
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown field", "endpoint: http://127.0.0.1:1\ntokenFile: " + token + "\nregion: r\nzone: z\n", []string{`: unknown field "zone" (`, "the fields endpoint, tokenFile and region"}},
		{"missing endpoint", "tokenFile: " + token + "\nregion: r\n", []string{`"endpoint" is missing`, "http://127.0.0.1:8080"}},
		{"missing tokenFile", "endpoint: http://127.0.0.1:1\nregion: r\n", []string{`"tokenFile" is missing`}},
		{"missing region", "endpoint: http://127.0.0.1:1\ntokenFile: " + token + "\n", []string{`"region" is missing`}},
		{"empty file", "", []string{`"endpoint" is missing`}},
		{"not YAML", "endpoint: [\n", []string{"yaml: line 1", "must be YAML"}},
		{"no scheme", "endpoint: 127.0.0.1:8080\ntokenFile: " + token + "\nregion: r\n", []string{`"endpoint" "127.0.0.1:8080"`, "http://"}},
		{"with a path", "endpoint: http://127.0.0.1:8080/v1\ntokenFile: " + token + "\nregion: r\n", []string{`"endpoint"`, "no path"}},
		{"unreadable token", "endpoint: http://127.0.0.1:1\ntokenFile: /nonexistent/token\nregion: r\n", []string{`"tokenFile" /nonexistent/token`, "no such file"}},
		{"empty token", "endpoint: http://127.0.0.1:1\ntokenFile: " + empty + "\nregion: r\n", []string{`"tokenFile" ` + empty + " is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "cloud.yaml", tt.yaml)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = New(f)
			if err == nil {
				t.Fatal("New accepted a bad config")
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := New(nil); err == nil || !strings.Contains(err.Error(), "--cloud-config is required") {
		t.Errorf("New(nil): %v, want one asking for --cloud-config", err)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	l.Close()
	token := writeFile(t, "token", "secret")
	_, err = New(strings.NewReader("endpoint: " + endpoint + "\ntokenFile: " + token + "\nregion: r\n"))
	want := "fakecloud: cannot reach the fakecloud API at " + endpoint + ": dial tcp "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), `(is fakecloud running, and is "endpoint" in the cloud config right?)`) {
		t.Errorf("error %q, want %q...", err, want)
	}
}
