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

package inspect_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/extraroutes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/client"
	"sigs.k8s.io/ccm-harness/fakecloud/cloudprovider"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/internal/depcheck"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/openstack/inspect"
)

// The inspector against a real fakecloud: what a test makes through
// gophercloud as the OpenStack CCM does (as the CCM's Keystone user), the
// inspector must read back through OpenStack's APIs alone as fakecloud's
// own truth (its admin API, which the inspector never uses) says it is.

const (
	cloudToken, adminToken, inspectorToken = "cloud", "admin", "inspector"
	region                                 = "fake-region-1"
	project, domain                        = "ccm-harness", "Default"
)

type cloud struct {
	t     *testing.T
	url   string
	admin *client.Admin
	insp  *inspect.Cloud
}

func newCloud(t *testing.T) *cloud {
	// Load balancers really listen: a range no other test or cluster
	// draws from keeps them off those running at the same time.
	srv, err := server.New(server.Config{CloudToken: cloudToken, AdminToken: adminToken, InspectorToken: inspectorToken,
		LBCIDR: fmt.Sprintf("127.21.%d.0/24", rand.IntN(256))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &cloud{t: t, url: hs.URL, admin: client.NewAdmin(hs.URL, adminToken), insp: inspect.New(inspectorConfig(hs.URL, inspectorToken))}
}

func inspectorConfig(url, password string) inspect.Config {
	return inspect.Config{AuthURL: url + "/identity/v3", Region: region,
		Username: api.OpenStackInspectorUser, Password: password, ProjectName: project, DomainName: domain,
		RouterID: api.OpenStackRouterID, SubnetID: api.OpenStackSubnetID}
}

// ccm logs in as the OpenStack CCM does, with the CCM's user.
func (c *cloud) ccm() (compute, network, lb *gophercloud.ServiceClient) {
	c.t.Helper()
	pc, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: c.url + "/identity/v3", Username: "ccm-harness", Password: cloudToken, DomainName: domain,
		Scope: &gophercloud.AuthScope{ProjectName: project, DomainName: domain}})
	if err != nil {
		c.t.Fatalf("the CCM's login: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: region}
	if compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		c.t.Fatal(err)
	}
	if network, err = openstack.NewNetworkV2(pc, eo); err != nil {
		c.t.Fatal(err)
	}
	if lb, err = openstack.NewLoadBalancerV2(pc, eo); err != nil {
		c.t.Fatal(err)
	}
	return compute, network, lb
}

func (c *cloud) create(req api.CreateInstanceRequest) *api.Instance {
	c.t.Helper()
	inst, err := c.admin.CreateInstance(context.Background(), req)
	if err != nil {
		c.t.Fatal(err)
	}
	return inst
}

// truth is fakecloud's own record of an instance.
func (c *cloud) truth(id string) *api.Instance {
	c.t.Helper()
	inst, err := c.admin.Instance(context.Background(), id)
	if err != nil {
		c.t.Fatal(err)
	}
	return inst
}

// fault makes the CCM's calls of op fail from here on.
func (c *cloud) fault(f api.Fault) {
	c.t.Helper()
	if _, err := c.admin.AddFault(context.Background(), f); err != nil {
		c.t.Fatal(err)
	}
}

func TestInstance(t *testing.T) {
	c := newCloud(t)
	ctx := context.Background()
	a := c.create(api.CreateInstanceRequest{Name: "node-a", InstanceType: "m1.large", Addresses: []api.Address{
		{Type: api.AddressInternalIP, Address: "10.0.0.5"}, {Type: api.AddressInternalIP, Address: "fd00::5"},
		{Type: api.AddressExternalIP, Address: "203.0.113.5"}, {Type: api.AddressInternalIP, Address: "10.0.0.6"},
		{Type: api.AddressHostname, Address: "node-a.example"}, {Type: api.AddressInternalDNS, Address: "node-a.internal"}}})
	c.create(api.CreateInstanceRequest{Name: "node-a2"})

	// The CCM's view lies from here on, and its logins fail: the
	// inspector's must not.
	for _, f := range []api.Fault{
		{Operation: api.OpGetInstance, Kind: api.FaultCorrupt, Field: api.CorruptZone, Value: "nowhere"},
		{Operation: api.OpListInstances, Kind: api.FaultCorrupt, Field: api.CorruptInstanceType, Value: "lie"},
		{Operation: api.OpAuthenticate, Kind: api.FaultError, Status: 500},
	} {
		c.fault(f)
	}

	got, err := c.insp.Instance(ctx, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	// In the CCM's order (nodeAddresses): the port's fixed IPs, the
	// hostname, then Nova's addresses, of which the floating one is new.
	want := providers.Instance{Name: "node-a", ProviderID: "openstack:///" + a.ID, InstanceType: "m1.large", Zone: a.Zone, Region: region, Running: true,
		Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeInternalIP, Address: "fd00::5"},
			{Type: v1.NodeInternalIP, Address: "10.0.0.6"}, {Type: v1.NodeHostName, Address: "node-a.example"},
			{Type: v1.NodeExternalIP, Address: "203.0.113.5"}}}
	if !equalInstance(got, want) {
		t.Errorf("instance\n%+v, want\n%+v", got, want)
	}
	// The addresses the OpenStack CCM can express of fakecloud's truth.
	var truth []v1.NodeAddress
	for _, ad := range c.truth(a.ID).Addresses {
		if t := v1.NodeAddressType(ad.Type); t == v1.NodeInternalIP || t == v1.NodeExternalIP || t == v1.NodeHostName {
			truth = append(truth, v1.NodeAddress{Type: t, Address: ad.Address})
		}
	}
	if !sameAddresses(got.Addresses, truth) {
		t.Errorf("addresses %v, fakecloud's truth as the CCM sees it %v", got.Addresses, truth)
	}

	if err := c.insp.Stop(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	stopped, err := c.insp.Instance(ctx, "node-a")
	if st := c.truth(a.ID).State; err != nil || st != api.StateStopped || stopped.Running || !sameAddresses(stopped.Addresses, truth) {
		t.Errorf("stopped: %+v (%v), fakecloud says %s; want not running, with the same addresses", stopped, err, st)
	}
	if err := c.insp.Stop(ctx, "node-a"); err != nil {
		t.Errorf("stopping a stopped server: %v, want none", err)
	}
	if err := c.insp.Start(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	if st := c.truth(a.ID).State; st != api.StateRunning {
		t.Errorf("started: fakecloud says %s", st)
	}
	if err := c.insp.Terminate(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	if st := c.truth(a.ID).State; st != api.StateTerminated {
		t.Errorf("terminated: fakecloud says %s", st)
	}
	if _, err := c.insp.Instance(ctx, "node-a"); err == nil || !strings.Contains(err.Error(), "no server named node-a") {
		t.Errorf("a deleted server: %v, want an error naming node-a", err)
	}
	if err := c.insp.Stop(ctx, "node-a"); err == nil || !strings.Contains(err.Error(), "no server named node-a") {
		t.Errorf("stopping a deleted server: %v, want an error naming node-a", err)
	}
	if err := c.insp.Terminate(ctx, "node-a"); err != nil {
		t.Errorf("terminating again: %v, want none (cleanup calls it)", err)
	}
	if other, err := c.insp.Instance(ctx, "node-a2"); err != nil || other.Name != "node-a2" || !other.Running {
		t.Errorf("node-a2, whose name node-a's is a prefix of: %+v (%v)", other, err)
	}
}

func TestLogin(t *testing.T) {
	c := newCloud(t)
	c.create(api.CreateInstanceRequest{Name: "node-a"})
	ctx := context.Background()
	for name, password := range map[string]string{"the CCM's password": cloudToken, "a wrong password": "wrong"} {
		_, err := inspect.New(inspectorConfig(c.url, password)).Instance(ctx, "node-a")
		if err == nil || !strings.Contains(err.Error(), "logging in to Keystone at "+c.url+"/identity/v3 as "+api.OpenStackInspectorUser) ||
			!strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "\n") {
			t.Errorf("the inspector's user with %s: %v, want one line saying Keystone refused it", name, err)
		}
	}
	// A proxy's page in front of Keystone spans lines; the error does not.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "<html>\n<body>401 Authorization Required</body>\n</html>\n")
	}))
	defer html.Close()
	if _, err := inspect.New(inspectorConfig(html.URL, inspectorToken)).Instance(ctx, "node-a"); err == nil ||
		!strings.Contains(err.Error(), "401 Authorization Required") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a login refused in HTML: %q, want one line with the page's text", err)
	}
	// A failed login is tried again, not kept.
	insp := inspect.New(inspectorConfig(c.url+"/nothing", inspectorToken))
	if _, err := insp.Instance(ctx, "node-a"); err == nil {
		t.Error("a login at no Keystone succeeded")
	}
	// The inspector's own calls, and its login, are audited as its.
	entries, err := c.admin.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	since := entries[len(entries)-1].Seq
	if _, err := c.insp.Instance(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	entries, err = c.admin.Audit(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	var callers []string
	for _, e := range entries {
		// The test's own reads of the audit log are in it too.
		if e.Path != api.AdminPathAudit && e.Caller != "anonymous" && !slices.Contains(callers, e.Caller) {
			callers = append(callers, e.Caller)
		}
	}
	if !slices.Equal(callers, []string{"inspector"}) {
		t.Errorf("callers of the inspector's calls: %v, want the inspector alone", callers)
	}
}

func equalInstance(a, b providers.Instance) bool {
	return a.Name == b.Name && a.ProviderID == b.ProviderID && a.InstanceType == b.InstanceType && a.Zone == b.Zone &&
		a.Region == b.Region && a.Running == b.Running && slices.Equal(a.Addresses, b.Addresses)
}

func sameAddresses(a, b []v1.NodeAddress) bool {
	key := func(x v1.NodeAddress) string { return string(x.Type) + "=" + x.Address }
	var ka, kb []string
	for _, x := range a {
		ka = append(ka, key(x))
	}
	for _, x := range b {
		kb = append(kb, key(x))
	}
	return sameSet(ka, kb)
}

// waitActive polls as the OpenStack CCM does: Octavia refuses a change
// while a load balancer is PENDING_*.
func waitActive(t *testing.T, lb *gophercloud.ServiceClient, id string) {
	t.Helper()
	for range 100 {
		got, err := loadbalancers.Get(context.Background(), lb, id).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if got.ProvisioningStatus == "ACTIVE" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("load balancer %s never ACTIVE", id)
}

func internalIP(inst *api.Instance) string {
	for _, a := range inst.Addresses {
		if a.Type == api.AddressInternalIP {
			return a.Address
		}
	}
	return ""
}

// TestLoadBalancersAndRoutes makes two load balancers as the OpenStack
// CCM does (one fully populated in one call, one object by object) and
// extra routes, breaks the CCM's view with faults, and compares the
// inspector's answer with fakecloud's truth, named as the fake provider's
// inspector names it (providers/emulated/network.go).
func TestLoadBalancersAndRoutes(t *testing.T) {
	c := newCloud(t)
	ctx := context.Background()
	a, b, d := c.create(api.CreateInstanceRequest{Name: "node-a"}), c.create(api.CreateInstanceRequest{Name: "node-b"}), c.create(api.CreateInstanceRequest{Name: "node-d"})
	_, network, octavia := c.ccm()

	hc, other := 31000, 31001
	web, err := loadbalancers.Create(ctx, octavia, loadbalancers.CreateOpts{
		Name: "kube_service_kubernetes_shop_web", Description: "Kubernetes external service shop/web from cluster kubernetes",
		VipSubnetID: api.OpenStackSubnetID, Tags: []string{"kube_service_kubernetes_shop_web"},
		Listeners: []listeners.CreateOpts{{
			Name: "listener_0", Protocol: listeners.ProtocolTCP, ProtocolPort: 80, AllowedCIDRs: []string{"192.0.2.0/24", "198.51.100.0/24"},
			DefaultPool: &pools.CreateOpts{
				Name: "pool_0", Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin,
				Members: []pools.CreateMemberOpts{
					{Name: "node-a", Address: internalIP(a), ProtocolPort: 30080, MonitorPort: &hc, SubnetID: api.OpenStackSubnetID},
					{Name: "node-b", Address: internalIP(b), ProtocolPort: 30080, MonitorPort: &hc, SubnetID: api.OpenStackSubnetID},
				},
				Monitor: &monitors.CreateOpts{Name: "monitor_0", Type: "HTTP", Delay: 5, Timeout: 3, MaxRetries: 1, URLPath: "/healthz"},
			},
		}, {
			Name: "listener_1", Protocol: listeners.ProtocolUDP, ProtocolPort: 53, AllowedCIDRs: []string{"192.0.2.0/24", "198.51.100.0/24"},
			DefaultPool: &pools.CreateOpts{
				Name: "pool_1", Protocol: pools.ProtocolUDP, LBMethod: pools.LBMethodRoundRobin,
				Members: []pools.CreateMemberOpts{
					{Name: "node-a", Address: internalIP(a), ProtocolPort: 30053},
					// A member no server has: Octavia keeps it.
					{Address: "10.9.9.9", ProtocolPort: 30053},
				},
			},
		}},
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitActive(t, octavia, web.ID)

	// The CCM's other way: the load balancer, then each object, waiting
	// for ACTIVE in between; a TCP monitor, whose members' monitor port is
	// no HTTP health check node port.
	dns, err := loadbalancers.Create(ctx, octavia, loadbalancers.CreateOpts{Name: "kube_service_kubernetes_ns_dns", VipSubnetID: api.OpenStackSubnetID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitActive(t, octavia, dns.ID)
	l, err := listeners.Create(ctx, octavia, listeners.CreateOpts{LoadbalancerID: dns.ID, Name: "listener_0", Protocol: listeners.ProtocolTCP, ProtocolPort: 8053, AllowedCIDRs: []string{"0.0.0.0/0"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitActive(t, octavia, dns.ID)
	p, err := pools.Create(ctx, octavia, pools.CreateOpts{ListenerID: l.ID, Name: "pool_0", Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin,
		Persistence: &pools.SessionPersistence{Type: "SOURCE_IP"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitActive(t, octavia, dns.ID)
	bName, dName := "node-b", "node-d"
	if err := pools.BatchUpdateMembers(ctx, octavia, p.ID, []pools.BatchUpdateMemberOpts{
		{Name: &bName, Address: internalIP(b), ProtocolPort: 30054, MonitorPort: &other},
		{Name: &dName, Address: internalIP(d), ProtocolPort: 30054, MonitorPort: &other},
	}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitActive(t, octavia, dns.ID)
	if _, err := monitors.Create(ctx, octavia, monitors.CreateOpts{PoolID: p.ID, Type: "TCP", Delay: 5, Timeout: 3, MaxRetries: 1}).Extract(); err != nil {
		t.Fatal(err)
	}
	waitActive(t, octavia, dns.ID)

	routes := []routers.Route{{DestinationCIDR: "10.244.1.0/24", NextHop: internalIP(a)}, {DestinationCIDR: "10.244.2.0/24", NextHop: internalIP(d)}}
	if _, err := extraroutes.Add(ctx, network, api.OpenStackRouterID, extraroutes.Opts{Routes: &routes}).Extract(); err != nil {
		t.Fatal(err)
	}

	// The CCM's view lies from here on: the inspector's must not.
	for _, op := range []string{api.OpListInstances, api.OpGetInstance, api.OpListLoadBalancers, api.OpGetLoadBalancer, api.OpListRoutes, api.OpAuthenticate} {
		c.fault(api.Fault{Operation: op, Kind: api.FaultError, Status: 500})
	}
	if _, err := ports.List(network, ports.ListOpts{}).AllPages(ctx); err == nil {
		t.Fatal("the CCM's list of ports succeeds under the faults")
	}

	compare := func(when string) []providers.LoadBalancer {
		t.Helper()
		truth, err := c.admin.LoadBalancers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		insts, err := c.admin.Instances(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]string{}
		for _, inst := range insts {
			names[inst.ID] = inst.Name
		}
		got, err := c.insp.LoadBalancers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(truth) {
			t.Fatalf("%s: the inspector sees %d load balancers, fakecloud has %d", when, len(got), len(truth))
		}
		for _, want := range truth {
			i := slices.IndexFunc(got, func(lb providers.LoadBalancer) bool { return lb.Name == want.Name })
			if i < 0 {
				t.Errorf("%s: load balancer %s: the inspector does not see it", when, want.Name)
				continue
			}
			// As the fake provider's inspector names them: a backend no
			// instance has is itself.
			fake := providers.LoadBalancer{Name: want.Name, Service: want.Tags[cloudprovider.TagService], ServiceUID: want.Tags[cloudprovider.TagServiceUID],
				IP: want.IP, Hostname: want.Hostname, HealthCheckNodePort: want.HealthCheckNodePort, SourceRanges: want.SourceRanges}
			if want.ClientAffinitySeconds > 0 {
				// Octavia says there is affinity, not for how long.
				fake.ClientAffinity = &providers.ClientAffinity{}
			}
			for _, l := range want.Listeners {
				fake.Listeners = append(fake.Listeners, providers.Listener{Port: l.Port, Protocol: v1.Protocol(l.Protocol), NodePort: l.NodePort})
			}
			for _, id := range want.Backends {
				n := names[id]
				if n == "" {
					n = id
				}
				fake.Backends = append(fake.Backends, n)
			}
			if lb := got[i]; !equalLB(lb, fake) {
				t.Errorf("%s: load balancer %s:\n inspector %+v\n fakecloud %+v", when, want.Name, lb, fake)
			}
		}
		return got
	}
	got := compare("under the CCM's faults")
	byName := func(name string) providers.LoadBalancer {
		i := slices.IndexFunc(got, func(lb providers.LoadBalancer) bool { return lb.Name == name })
		if i < 0 {
			t.Fatalf("no load balancer %s in %+v", name, got)
		}
		return got[i]
	}
	wantWeb := providers.LoadBalancer{Name: "kube_service_kubernetes_shop_web", Service: "shop/web", IP: web.VipAddress,
		Listeners: []providers.Listener{{Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}, {Port: 53, Protocol: v1.ProtocolUDP, NodePort: 30053}},
		Backends:  []string{"node-a", "node-b", "10.9.9.9"}, HealthCheckNodePort: 31000, SourceRanges: []string{"192.0.2.0/24", "198.51.100.0/24"}}
	wantDNS := providers.LoadBalancer{Name: "kube_service_kubernetes_ns_dns", Service: "ns/dns", IP: dns.VipAddress,
		Listeners: []providers.Listener{{Port: 8053, Protocol: v1.ProtocolTCP, NodePort: 30054}}, Backends: []string{"node-b", "node-d"},
		ClientAffinity: &providers.ClientAffinity{}}
	for _, want := range []providers.LoadBalancer{wantWeb, wantDNS} {
		if lb := byName(want.Name); !equalLB(lb, want) {
			t.Errorf("load balancer %s:\n inspector %+v\n want      %+v", want.Name, lb, want)
		}
	}

	rs, err := c.insp.Routes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantRoutes := []providers.Route{
		{Name: api.OpenStackRouterID + "/10.244.1.0/24/" + internalIP(a), DestinationCIDR: "10.244.1.0/24", TargetNode: "node-a"},
		{Name: api.OpenStackRouterID + "/10.244.2.0/24/" + internalIP(d), DestinationCIDR: "10.244.2.0/24", TargetNode: "node-d"},
	}
	if !slices.Equal(rs, wantRoutes) {
		t.Fatalf("routes\n%+v, want\n%+v", rs, wantRoutes)
	}

	// A deleted server's member and route: its address, a blackhole. (The
	// fake provider's inspector names the terminated instance still: its
	// record outlives it, Nova's server does not.)
	if err := c.insp.Terminate(ctx, "node-d"); err != nil {
		t.Fatal(err)
	}
	got, err = c.insp.LoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lb := byName("kube_service_kubernetes_ns_dns"); !slices.Equal(lb.Backends, []string{"node-b", internalIP(d)}) {
		t.Errorf("backends with node-d's server deleted: %v, want node-b and its address", lb.Backends)
	}
	rs, err = c.insp.Routes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[1].TargetNode != internalIP(d) || !rs[1].Blackhole || rs[0].Blackhole {
		t.Errorf("routes with node-d's server deleted: %+v, want its route a blackhole to its address", rs)
	}
	truthRoutes, err := c.admin.Routes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range truthRoutes {
		if r.Blackhole != (r.TargetInstance == d.ID) {
			t.Errorf("fakecloud's route %+v: blackhole %v", r, r.Blackhole)
		}
	}

	if err := c.insp.DeleteRoute(ctx, rs[0].Name); err != nil {
		t.Fatal(err)
	}
	truthRoutes, err = c.admin.Routes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(truthRoutes) != 1 || truthRoutes[0].DestinationCIDR != "10.244.2.0/24" {
		t.Errorf("after DeleteRoute %s: fakecloud has %+v, want only the other route", rs[0].Name, truthRoutes)
	}
	for _, name := range []string{"10.244.2.0/24", "/10.244.2.0/24/" + internalIP(d), api.OpenStackRouterID + "/10.244.2.0/" + internalIP(d)} {
		if err := c.insp.DeleteRoute(ctx, name); err == nil || !strings.Contains(err.Error(), "is not <router>/<destination CIDR>/<next hop>") {
			t.Errorf("DeleteRoute of the malformed name %q: %v", name, err)
		}
	}
}

func equalLB(a, b providers.LoadBalancer) bool {
	return a.Name == b.Name && a.Service == b.Service && a.ServiceUID == b.ServiceUID && a.IP == b.IP && a.Hostname == b.Hostname &&
		a.HealthCheckNodePort == b.HealthCheckNodePort && slices.Equal(a.Listeners, b.Listeners) &&
		slices.Equal(a.Backends, b.Backends) && slices.Equal(a.SourceRanges, b.SourceRanges) &&
		(a.ClientAffinity == nil) == (b.ClientAffinity == nil) && (a.ClientAffinity == nil || *a.ClientAffinity == *b.ClientAffinity)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestAddresses: what the CCM adds beyond fakecloud's servers, the access
// IPs, and what it leaves out, a DOWN port's fixed IPs.
func TestAddresses(t *testing.T) {
	srv := servers.Server{ID: "s1", Name: "node-a", AccessIPv4: "198.51.100.7", Metadata: map[string]string{"hostname": "node-a"},
		Addresses: map[string]any{
			"public":  []any{map[string]any{"addr": "203.0.113.9", "OS-EXT-IPS:type": "floating"}},
			"private": []any{map[string]any{"addr": "10.0.0.5", "OS-EXT-IPS:type": "fixed"}, map[string]any{"addr": "10.0.0.7", "OS-EXT-IPS:type": "fixed"}},
		}}
	attached := []ports.Port{
		{Status: "DOWN", FixedIPs: []ports.IP{{IPAddress: "10.0.0.7"}}},
		{Status: "ACTIVE", FixedIPs: []ports.IP{{IPAddress: "10.0.0.6"}}},
	}
	got, err := inspect.Addresses(srv, attached)
	if err != nil {
		t.Fatal(err)
	}
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.6"}, {Type: v1.NodeExternalIP, Address: "198.51.100.7"},
		{Type: v1.NodeHostName, Address: "node-a"}, {Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeInternalIP, Address: "10.0.0.7"},
		{Type: v1.NodeExternalIP, Address: "203.0.113.9"}}
	if !slices.Equal(got, want) {
		t.Errorf("addresses\n%v, want\n%v", got, want)
	}
}

// TestImportsNoFakecloud: the inspector asks OpenStack as anyone would;
// nothing of the simulator may be built into it.
func TestImportsNoFakecloud(t *testing.T) {
	depcheck.Forbid(t, "sigs.k8s.io/ccm-harness/providers/openstack/inspect", "sigs.k8s.io/ccm-harness/fakecloud")
}
