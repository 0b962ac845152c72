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

package octavia_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The OpenStack dialect is tested with gophercloud, the client the
// OpenStack CCM is built on: what it parses here, the CCM parses. The
// tests drive the whole server (servertest), as the CCM does.

func TestOctavia(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a, b := f.Create("node-a"), f.Create("node-b")
	c := f.Octavia()
	ctx := context.Background()

	// The CCM decides what it may use by the last version listed.
	page, err := apiversions.List(c).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := apiversions.ExtractAPIVersions(page)
	if len(vs) == 0 || vs[len(vs)-1].ID != "v2.27" {
		t.Fatalf("versions %+v, want the last v2.27", vs)
	}

	// A fully populated create, as the CCM sends it.
	const name = "kube_service_kubernetes_shop_web"
	hc := 31000
	lb, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{
		Name: name, VipSubnetID: openstackjson.PrivateSubnetID, Tags: []string{name},
		Listeners: []listeners.CreateOpts{{
			Name: "listener_0", Protocol: listeners.ProtocolTCP, ProtocolPort: 80, AllowedCIDRs: []string{"0.0.0.0/0"},
			DefaultPool: &pools.CreateOpts{
				Name: "pool_0", Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin,
				Members: []pools.CreateMemberOpts{{Name: "node-a", Address: servertest.AddrOf(a), ProtocolPort: 30080, MonitorPort: &hc}},
				Monitor: &monitors.CreateOpts{Name: "monitor_0", Type: "HTTP", Delay: 5, Timeout: 3, MaxRetries: 1, URLPath: "/healthz"},
			},
		}},
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if lb.ProvisioningStatus != model.OctaviaPendingCreate || lb.VipAddress == "" || lb.VipPortID == "" {
		t.Errorf("created %+v, want PENDING_CREATE with a VIP and its port", lb)
	}
	// Octavia refuses a change while the load balancer is PENDING_*.
	_, err = listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolUDP, ProtocolPort: 53}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Errorf("change while PENDING_CREATE: %v, want 409", err)
	}
	servertest.WaitActive(t, c, lb.ID)

	native := f.AdminLB(name)
	if got := formatSpec(native); got != "[TCP:80->30080] backends ["+a.ID+"] hc 31000 ranges []" || native.Tags[api.TagService] != "shop/web" || native.IP != lb.VipAddress {
		t.Errorf("native view %s %v %s, want the Octavia load balancer's", got, native.Tags, native.IP)
	}

	// The CCM's update path: listeners by load balancer, pools by
	// listener, members by pool, then a batch update.
	ls, err := listeners.List(c, listeners.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lsl, _ := listeners.ExtractListeners(ls)
	ps, err := pools.List(c, pools.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	psl, _ := pools.ExtractPools(ps)
	if len(lsl) != 1 || len(psl) != 1 || psl[0].Listeners[0].ID != lsl[0].ID || psl[0].MonitorID == "" || lsl[0].AllowedCIDRs[0] != "0.0.0.0/0" {
		t.Fatalf("listeners %+v pools %+v, want one of each, bound, with the monitor and the CIDRs", lsl, psl)
	}
	mp, err := pools.ListMembers(c, psl[0].ID, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	members, err := pools.ExtractMembers(mp)
	if err != nil || len(members) != 1 || members[0].Name != "node-a" || members[0].MonitorPort != hc {
		t.Fatalf("members %+v (%v)", members, err)
	}
	names := []string{"node-a", "node-b"}
	err = pools.BatchUpdateMembers(ctx, c, psl[0].ID, []pools.BatchUpdateMemberOpts{
		{Name: &names[0], Address: servertest.AddrOf(a), ProtocolPort: 30081, MonitorPort: &hc},
		{Name: &names[1], Address: servertest.AddrOf(b), ProtocolPort: 30081, MonitorPort: &hc},
	}).ExtractErr()
	if err != nil {
		t.Fatalf("batch update: %v", err)
	}
	servertest.WaitActive(t, c, lb.ID)
	if got := formatSpec(f.AdminLB(name)); got != "[TCP:80->30081] backends ["+a.ID+" "+b.ID+"] hc 31000 ranges []" {
		t.Errorf("after batch update: %s", got)
	}

	// A member no instance answers at is kept, as Octavia keeps it, as a
	// backend named by its address (forwarding nothing).
	err = pools.BatchUpdateMembers(ctx, c, psl[0].ID, []pools.BatchUpdateMemberOpts{
		{Name: &names[0], Address: servertest.AddrOf(a), ProtocolPort: 30081, MonitorPort: &hc},
		{Address: "10.9.9.9", ProtocolPort: 30081},
	}).ExtractErr()
	if err != nil {
		t.Fatalf("batch update with a member no instance answers at: %v", err)
	}
	servertest.WaitActive(t, c, lb.ID)
	if got := formatSpec(f.AdminLB(name)); got != "[TCP:80->30081] backends ["+a.ID+" 10.9.9.9] hc 31000 ranges []" {
		t.Errorf("after a member no instance answers at: %s", got)
	}
	// Not an address at all is refused, as Octavia refuses it.
	err = pools.BatchUpdateMembers(ctx, c, psl[0].ID, []pools.BatchUpdateMemberOpts{{Address: "node-a", ProtocolPort: 30081}}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "is not an IP address") {
		t.Errorf("member address node-a: %v, want 400 naming it", err)
	}

	// An ignore fault: the change is acknowledged, the cloud keeps the
	// old listeners.
	f.AddFault(api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreListeners, Count: 1})
	if _, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 8080}).Extract(); err != nil {
		t.Fatalf("ignored create: %v", err)
	}
	servertest.WaitActive(t, c, lb.ID)
	if got := formatSpec(f.AdminLB(name)); !strings.HasPrefix(got, "[TCP:80->30081]") {
		t.Errorf("ignored listener shows: %s", got)
	}
	// Source ranges are the listeners' allowed_cidrs, but allow-all.
	cidrs := []string{"127.0.0.1/32"}
	if _, err := listeners.Update(ctx, c, lsl[0].ID, listeners.UpdateOpts{AllowedCIDRs: &cidrs}).Extract(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitActive(t, c, lb.ID)
	if got := formatSpec(f.AdminLB(name)); !strings.HasSuffix(got, "ranges [127.0.0.1/32]") {
		t.Errorf("allowed_cidrs: %s", got)
	}

	// An error fault answers in Octavia's shape, with the message.
	f.AddFault(api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultError, Status: 500, Message: "quota exceeded", Count: 1})
	_, err = listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 8080}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusInternalServerError) || !strings.Contains(err.Error(), `"faultstring":"quota exceeded"`) {
		t.Errorf("error fault: %v", err)
	}

	// Cascade delete: 204, then 404; the listeners close.
	if err := loadbalancers.Delete(ctx, c, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := loadbalancers.Get(ctx, c, lb.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("deleted: %v, want 404", err)
	}
	f.Must(http.StatusNotFound, "GET", api.AdminPathLoadBalancer+name, servertest.AdminToken, nil, nil)
}

func formatSpec(lb api.LoadBalancer) string {
	var ls []string
	for _, l := range lb.Listeners {
		ls = append(ls, string(l.Protocol)+":"+itoa(int(l.Port))+"->"+itoa(int(l.NodePort)))
	}
	return "[" + strings.Join(ls, " ") + "] backends [" + strings.Join(lb.Backends, " ") + "] hc " + itoa(int(lb.HealthCheckNodePort)) + " ranges [" + strings.Join(lb.SourceRanges, " ") + "]"
}

func itoa(i int) string { return strconv.Itoa(i) }

// A load balancer made through Octavia is changed through Octavia only:
// its native spec is derived from its Octavia objects.
func TestOctaviaOwnsItsLoadBalancers(t *testing.T) {
	f := servertest.New(t, server.Config{})
	c := f.Octavia()
	lb, err := loadbalancers.Create(context.Background(), c, loadbalancers.CreateOpts{Name: "kube_service_k_ns_web", VipSubnetID: openstackjson.PrivateSubnetID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	r := f.Do("PUT", api.PathLoadBalancer+lb.Name, servertest.CloudToken, api.LoadBalancerSpec{})
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "change it there") {
		t.Errorf("native change: %d %s, want 409", r.Status, r.Body)
	}
}

// TestOctaviaSessionPersistence: a pool's source-IP persistence, as the
// OpenStack CCM asks it for sessionAffinity ClientIP, is the load
// balancer's client affinity; other types are kept and are not; a type
// Octavia does not know is refused.
func TestOctaviaSessionPersistence(t *testing.T) {
	f := servertest.New(t, server.Config{})
	c := f.Octavia()
	ctx := context.Background()
	const name = "kube_service_kubernetes_shop_sticky"
	lb := oneListener(t, f, name, pools.CreateOpts{Protocol: pools.ProtocolTCP, Persistence: &pools.SessionPersistence{Type: model.OctaviaSourceIP}})
	ps := poolsOf(t, c, lb.ID)
	if len(ps) != 1 || ps[0].Persistence.Type != model.OctaviaSourceIP {
		t.Fatalf("pools %+v, want one with SOURCE_IP persistence", ps)
	}
	if got := f.AdminLB(name).ClientAffinitySeconds; got != model.MaxClientAffinitySeconds {
		t.Errorf("native client affinity %ds, want %d for source-IP persistence", got, model.MaxClientAffinitySeconds)
	}

	if _, err := pools.Update(ctx, c, ps[0].ID, pools.UpdateOpts{Persistence: &pools.SessionPersistence{Type: "HTTP_COOKIE"}}).Extract(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitActive(t, c, lb.ID)
	if got := f.AdminLB(name).ClientAffinitySeconds; got != 0 {
		t.Errorf("native client affinity %ds with cookie persistence, want none", got)
	}
	_, err := pools.Update(ctx, c, ps[0].ID, pools.UpdateOpts{Persistence: &pools.SessionPersistence{Type: "STICKY"}}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "Value should be one of: SOURCE_IP, HTTP_COOKIE, APP_COOKIE") {
		t.Errorf("an unknown persistence type: %v, want 400 naming the types", err)
	}
}

// TestOctaviaProxyProtocol: a PROXY or PROXYV2 pool, as the OpenStack CCM
// makes one for a Service that asks for the PROXY protocol, is kept and
// shown as such, and its load balancer sends the header of that version
// (the data plane's own test, package server's TestLBProxyProtocol,
// reads it); a pool protocol Octavia does not know, or one it does not
// put behind its listener's protocol, is refused in Octavia's words.
func TestOctaviaProxyProtocol(t *testing.T) {
	f := servertest.New(t, server.Config{})
	c := f.Octavia()
	ctx := context.Background()
	const name = "kube_service_kubernetes_shop_proxied"
	lb := oneListener(t, f, name, pools.CreateOpts{Protocol: pools.ProtocolPROXY})
	ps := poolsOf(t, c, lb.ID)
	if len(ps) != 1 || ps[0].Protocol != model.OctaviaProxy {
		t.Fatalf("pools %+v, want one of protocol PROXY", ps)
	}
	if got := f.AdminLB(name).ProxyProtocol; got != 1 {
		t.Errorf("native PROXY protocol %d for a PROXY pool, want 1", got)
	}

	l, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 443}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	servertest.WaitActive(t, c, lb.ID)
	p, err := pools.Create(ctx, c, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolPROXYV2, LBMethod: pools.LBMethodRoundRobin}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	servertest.WaitActive(t, c, lb.ID)
	ps = poolsOf(t, c, lb.ID)
	if len(ps) != 2 || ps[1].ID != p.ID || ps[1].Protocol != model.OctaviaProxyV2 {
		t.Errorf("pools %+v, want the second of protocol PROXYV2, as stored", ps)
	}
	if got := f.AdminLB(name).ProxyProtocol; got != 2 {
		t.Errorf("native PROXY protocol %d with a PROXYV2 pool, want 2", got)
	}

	u, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolUDP, ProtocolPort: 53}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	servertest.WaitActive(t, c, lb.ID)
	_, err = pools.Create(ctx, c, pools.CreateOpts{ListenerID: u.ID, Protocol: pools.ProtocolPROXY, LBMethod: pools.LBMethodRoundRobin}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "The pool protocol 'PROXY' is invalid while the listener protocol is 'UDP'") {
		t.Errorf("a PROXY pool behind a UDP listener: %v, want 400 as Octavia's", err)
	}
	_, err = pools.Create(ctx, c, pools.CreateOpts{ListenerID: u.ID, Protocol: "PROXYV3", LBMethod: pools.LBMethodRoundRobin}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "Value should be one of: HTTP, HTTPS, PROXY, PROXYV2, SCTP, TCP, UDP") {
		t.Errorf("an unknown pool protocol: %v, want 400 naming the protocols", err)
	}
}

// oneListener makes load balancer name as the OpenStack CCM makes one
// for a Service of one TCP port: a listener on 80 whose default pool is
// pool (its name, method and a member on node-a's node port filled in),
// and waits until it is active.
func oneListener(t *testing.T, f *servertest.Fixture, name string, pool pools.CreateOpts) *loadbalancers.LoadBalancer {
	t.Helper()
	a := f.Create("node-a")
	c := f.Octavia()
	pool.Name, pool.LBMethod = "pool_0", pools.LBMethodRoundRobin
	pool.Members = []pools.CreateMemberOpts{{Name: "node-a", Address: servertest.AddrOf(a), ProtocolPort: 30080}}
	lb, err := loadbalancers.Create(context.Background(), c, loadbalancers.CreateOpts{
		Name: name, VipSubnetID: openstackjson.PrivateSubnetID,
		Listeners: []listeners.CreateOpts{{Name: "listener_0", Protocol: listeners.ProtocolTCP, ProtocolPort: 80, DefaultPool: &pool}},
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	servertest.WaitActive(t, c, lb.ID)
	return lb
}

// poolsOf lists the load balancer's pools, as Octavia answers.
func poolsOf(t *testing.T, c *gophercloud.ServiceClient, lbID string) []pools.Pool {
	t.Helper()
	page, err := pools.List(c, pools.ListOpts{LoadbalancerID: lbID}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ps, err := pools.ExtractPools(page)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}
