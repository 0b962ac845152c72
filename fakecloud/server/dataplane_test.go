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
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/lbroute"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestLBForwarding(t *testing.T) {
	tests := []struct {
		name     string
		proto    api.Protocol
		nodePort bool // false: the listener has nodePort 0
	}{
		{"TCP to the node port", api.ProtocolTCP, true},
		{"TCP to the listener's port", api.ProtocolTCP, false},
		{"UDP to the node port", api.ProtocolUDP, true},
		{"UDP to the listener's port", api.ProtocolUDP, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := netConfig()
			f := servertest.New(t, cfg)
			n1 := f.Create("n1")
			lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
			port := freePort(t, lbIP, backendIP)
			backendPort, nodePort := port, uint16(0)
			if tt.nodePort {
				nodePort = freePort(t, backendIP)
				backendPort = nodePort
			}
			backend := netip.AddrPortFrom(backendIP, backendPort)
			l := api.Listener{Port: int32(port), Protocol: tt.proto, NodePort: int32(nodePort)}
			f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{l}, Backends: []string{n1.ID}}, http.StatusCreated)

			frontend := netip.AddrPortFrom(lbIP, port)
			var e *echo
			var got string
			var err error
			if tt.proto == api.ProtocolTCP {
				e = tcpEcho(t, backend, "n1")
				got, err = tcpCall(netip.Addr{}, frontend, "hello")
			} else {
				e = udpEcho(t, backend, "n1")
				got, err = udpCall(netip.Addr{}, frontend, "hello", 3*time.Second)
			}
			if err != nil || got != "n1:hello" {
				t.Fatalf("through %s/%s: %q, %v; want n1:hello from %s", frontend, tt.proto, got, err, backend)
			}
			if e.hits.Load() != 1 {
				t.Errorf("backend got %d connections or datagrams, want 1", e.hits.Load())
			}
		})
	}
}

// TestLBTCPAndUDPSharePort checks both protocols on one port number, each
// reaching its own backend server, and a UDP session carrying several
// datagrams both ways.
func TestLBTCPAndUDPSharePort(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1 := f.Create("n1")
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port, nodePort := freePort(t, lbIP), freePort(t, backendIP)
	tcpEcho(t, netip.AddrPortFrom(backendIP, nodePort), "tcp")
	udpBackend := udpEcho(t, netip.AddrPortFrom(backendIP, nodePort), "udp")
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, nodePort), servertest.UDP(port, nodePort)}, Backends: []string{n1.ID}}, http.StatusCreated)

	frontend := netip.AddrPortFrom(lbIP, port)
	if got, err := tcpCall(netip.Addr{}, frontend, "a"); got != "tcp:a" {
		t.Errorf("TCP: %q, %v", got, err)
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(frontend))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, msg := range []string{"x", "y", "z"} {
		if got, err := udpRoundTrip(c, msg); got != "udp:"+msg {
			t.Errorf("UDP %s: %q, %v", msg, got, err)
		}
	}
	if n := udpBackend.hits.Load(); n != 3 {
		t.Errorf("UDP backend got %d datagrams, want 3", n)
	}
}

func TestLBSourceRanges(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1 := f.Create("n1")
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port := freePort(t, lbIP, backendIP)
	tcpBackend := tcpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	udpBackend := udpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	spec := api.LoadBalancerSpec{
		Listeners:    []api.Listener{servertest.TCP(port, 0), servertest.UDP(port, 0)},
		Backends:     []string{n1.ID},
		SourceRanges: []string{"127.0.0.1/32"},
	}
	f.Ensure("lb", spec, http.StatusCreated)
	frontend := netip.AddrPortFrom(lbIP, port)
	inside, outside := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.77")

	if got, _ := tcpCall(outside, frontend, "hi"); got != "" {
		t.Errorf("TCP client outside the ranges heard %q", got)
	}
	if got, err := udpCall(outside, frontend, "hi", 300*time.Millisecond); got != "" || !isTimeout(err) {
		t.Errorf("UDP client outside the ranges: %q, %v; want no answer", got, err)
	}
	if tcpBackend.hits.Load() != 0 || udpBackend.hits.Load() != 0 {
		t.Fatalf("refused clients reached the backends: %d TCP, %d UDP", tcpBackend.hits.Load(), udpBackend.hits.Load())
	}
	if got, err := tcpCall(inside, frontend, "hi"); got != "n1:hi" {
		t.Errorf("TCP client inside the ranges: %q, %v", got, err)
	}
	if got, err := udpCall(inside, frontend, "hi", 3*time.Second); got != "n1:hi" {
		t.Errorf("UDP client inside the ranges: %q, %v", got, err)
	}

	// Widening the ranges takes effect on the open listeners.
	spec.SourceRanges = []string{"127.0.0.64/26"}
	f.Ensure("lb", spec, http.StatusOK)
	if got, err := tcpCall(outside, frontend, "again"); got != "n1:again" {
		t.Errorf("after widening: %q, %v", got, err)
	}
	if got, _ := tcpCall(inside, frontend, "again"); got != "" {
		t.Errorf("127.0.0.1 is outside the new range but heard %q", got)
	}
}

func TestLBHealthChecks(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	a, b := f.Create("a"), f.Create("b")
	lbIP, ipA, ipB := firstLBIP(cfg), internalIP(t, a), internalIP(t, b)
	port, nodePort, hcPort := freePort(t, lbIP), freePort(t, ipA, ipB), freePort(t, ipA, ipB)
	echoA := tcpEcho(t, netip.AddrPortFrom(ipA, nodePort), "a")
	echoB := tcpEcho(t, netip.AddrPortFrom(ipB, nodePort), "b")
	healthServer(t, netip.AddrPortFrom(ipA, hcPort), http.StatusOK)
	hcB := healthServer(t, netip.AddrPortFrom(ipB, hcPort), http.StatusServiceUnavailable)
	f.Ensure("lb", api.LoadBalancerSpec{
		Listeners:           []api.Listener{servertest.TCP(port, nodePort)},
		Backends:            []string{a.ID, b.ID},
		HealthCheckNodePort: int32(hcPort),
	}, http.StatusCreated)

	eventually(t, 5*time.Second, "a healthy, b not", func() (bool, string) {
		lb := f.AdminLB("lb")
		st := lb.BackendStatus
		return len(st) == 2 && st[0].Healthy && !st[1].Healthy && strings.Contains(st[1].LastError, "503"), statusOf(lb)
	})
	frontend := netip.AddrPortFrom(lbIP, port)
	for i := range 6 {
		if got, err := tcpCall(netip.Addr{}, frontend, "x"); got != "a:x" {
			t.Fatalf("connection %d: %q, %v; want the healthy backend a", i, got, err)
		}
	}
	if echoB.hits.Load() != 0 {
		t.Errorf("unhealthy backend b got %d connections", echoB.hits.Load())
	}

	// b recovers: round-robin uses both.
	hcB.status.Store(http.StatusOK)
	eventually(t, 5*time.Second, "b healthy", func() (bool, string) {
		lb := f.AdminLB("lb")
		return len(lb.BackendStatus) == 2 && lb.BackendStatus[1].Healthy && lb.BackendStatus[1].LastError == "", statusOf(lb)
	})
	seen := map[string]int{}
	for range 4 {
		got, _ := tcpCall(netip.Addr{}, frontend, "x")
		seen[got]++
	}
	if seen["a:x"] != 2 || seen["b:x"] != 2 {
		t.Errorf("four connections went %v, want two each", seen)
	}

	// A stopped instance serves nothing, whatever its health check says.
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"a/stop", servertest.AdminToken, nil, nil)
	lb := f.AdminLB("lb")
	if st := lb.BackendStatus[0]; st.Healthy || !strings.Contains(st.LastError, "stopped") {
		t.Errorf("stopped a: %+v", st)
	}
	hitsA := echoA.hits.Load()
	for range 3 {
		if got, err := tcpCall(netip.Addr{}, frontend, "y"); got != "b:y" {
			t.Errorf("with a stopped: %q, %v", got, err)
		}
	}
	if echoA.hits.Load() != hitsA {
		t.Errorf("stopped backend a got connections")
	}
}

// TestLBClientAffinity checks that a load balancer with client affinity
// keeps each client address on its backend while it comes back in time,
// balances new clients and lapsed ones afresh, and gives way when the
// backend stops.
func TestLBClientAffinity(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	a, b := f.Create("a"), f.Create("b")
	lbIP, ipA, ipB := firstLBIP(cfg), internalIP(t, a), internalIP(t, b)
	port, nodePort := freePort(t, lbIP), freePort(t, ipA, ipB)
	tcpEcho(t, netip.AddrPortFrom(ipA, nodePort), "a")
	tcpEcho(t, netip.AddrPortFrom(ipB, nodePort), "b")
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, nodePort)}, Backends: []string{a.ID, b.ID}, ClientAffinitySeconds: 1}
	f.Ensure("lb", spec, http.StatusCreated)
	frontend := netip.AddrPortFrom(lbIP, port)
	one, two := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	calls := func(src netip.Addr, n int) []string {
		var out []string
		for range n {
			got, err := tcpCall(src, frontend, "x")
			if err != nil {
				t.Fatalf("from %s: %v", src, err)
			}
			out = append(out, got)
		}
		return out
	}
	if got := calls(one, 5); !slices.Equal(got, []string{"a:x", "a:x", "a:x", "a:x", "a:x"}) {
		t.Fatalf("client %s, 5 connections within a second: %v, want backend a every time", one, got)
	}
	if got := calls(two, 3); !slices.Equal(got, []string{"b:x", "b:x", "b:x"}) {
		t.Fatalf("client %s, 3 connections: %v, want the next backend, b, every time", two, got)
	}
	time.Sleep(1100 * time.Millisecond)
	if got := calls(two, 2); !slices.Equal(got, []string{"a:x", "a:x"}) {
		t.Errorf("client %s, back after its affinity lapsed: %v, want the next backend round-robin, a, then a again", two, got)
	}

	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"a/stop", servertest.AdminToken, nil, nil)
	if got := calls(two, 2); !slices.Equal(got, []string{"b:x", "b:x"}) {
		t.Errorf("client %s, its backend stopped: %v, want b, the one left", two, got)
	}

	// Without affinity, one client's connections go round-robin.
	f.Must(http.StatusOK, "POST", api.AdminPathInstance+"a/start", servertest.AdminToken, nil, nil)
	spec.ClientAffinitySeconds = 0
	f.Ensure("lb", spec, http.StatusOK)
	if got := calls(one, 4); got[0] == got[1] || got[1] == got[2] || got[2] == got[3] {
		t.Errorf("client %s, no affinity: %v, want the backends in turn", one, got)
	}
}

// TestLBIgnoreClientAffinity checks the negative controls' cloud: its
// load balancers report the affinity they were given and balance every
// connection afresh.
func TestLBIgnoreClientAffinity(t *testing.T) {
	cfg := netConfig()
	cfg.IgnoreClientAffinity = true
	f := servertest.New(t, cfg)
	a, b := f.Create("a"), f.Create("b")
	lbIP, ipA, ipB := firstLBIP(cfg), internalIP(t, a), internalIP(t, b)
	port, nodePort := freePort(t, lbIP), freePort(t, ipA, ipB)
	tcpEcho(t, netip.AddrPortFrom(ipA, nodePort), "a")
	tcpEcho(t, netip.AddrPortFrom(ipB, nodePort), "b")
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, nodePort)}, Backends: []string{a.ID, b.ID}, ClientAffinitySeconds: 60}, http.StatusCreated)
	if got := f.AdminLB("lb").ClientAffinitySeconds; got != 60 {
		t.Errorf("clientAffinitySeconds reported %d, want 60 as given", got)
	}
	var got []string
	for range 4 {
		s, err := tcpCall(netip.MustParseAddr("127.0.0.1"), netip.AddrPortFrom(lbIP, port), "x")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if !slices.Equal(got, []string{"a:x", "b:x", "a:x", "b:x"}) {
		t.Errorf("one client's connections: %v, want the backends in turn", got)
	}
}

func TestLBBackendsFollowInstanceState(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1 := f.Create("n1")
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port := freePort(t, lbIP, backendIP)
	tcpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, 0)}, Backends: []string{n1.ID}}, http.StatusCreated)
	frontend := netip.AddrPortFrom(lbIP, port)

	steps := []struct {
		action  string
		healthy bool
		reply   string
		lastErr string
	}{
		{"", true, "n1:m", ""},
		{"stop", false, "", "instance is stopped"},
		{"start", true, "n1:m", ""},
		{"terminate", false, "", "instance is terminated"},
	}
	for _, st := range steps {
		if st.action != "" {
			f.Must(http.StatusOK, "POST", api.AdminPathInstance+n1.ID+"/"+st.action, servertest.AdminToken, nil, nil)
		}
		bs := f.AdminLB("lb").BackendStatus[0]
		if bs.Healthy != st.healthy || bs.LastError != st.lastErr {
			t.Errorf("after %q: backend %+v, want healthy=%v %q", st.action, bs, st.healthy, st.lastErr)
		}
		if got, _ := tcpCall(netip.Addr{}, frontend, "m"); got != st.reply {
			t.Errorf("after %q: heard %q, want %q", st.action, got, st.reply)
		}
	}
}

func TestLBNonLoopbackBackendIsNeverDialed(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	var inst api.Instance
	// A documentation address (TEST-NET-1): it must not even be tried.
	f.Must(http.StatusCreated, "POST", api.AdminPathInstances, servertest.AdminToken,
		api.CreateInstanceRequest{Name: "far", Addresses: []api.Address{{Type: api.AddressInternalIP, Address: "192.0.2.10"}}}, &inst)
	lb := f.Ensure("lb", api.LoadBalancerSpec{Backends: []string{inst.ID}, HealthCheckNodePort: 31000}, http.StatusCreated)
	if st := lb.BackendStatus[0]; st.Healthy || !strings.Contains(st.LastError, "not a loopback address") {
		t.Errorf("backend %+v, want it unhealthy for not being loopback", st)
	}
}

// A kind cluster's nodes are off loopback: --backend-cidr admits their
// network, and only it.
func TestLBBackendCIDRAdmitsItsNetworkOnly(t *testing.T) {
	cfg := netConfig()
	cfg.BackendCIDRs = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	f := servertest.New(t, cfg)
	var in, out api.Instance
	f.Must(http.StatusCreated, "POST", api.AdminPathInstances, servertest.AdminToken,
		api.CreateInstanceRequest{Name: "node", Addresses: []api.Address{{Type: api.AddressInternalIP, Address: "192.0.2.10"}}}, &in)
	f.Must(http.StatusCreated, "POST", api.AdminPathInstances, servertest.AdminToken,
		api.CreateInstanceRequest{Name: "far", Addresses: []api.Address{{Type: api.AddressInternalIP, Address: "198.51.100.10"}}}, &out)
	lb := f.Ensure("lb", api.LoadBalancerSpec{Backends: []string{in.ID, out.ID}}, http.StatusCreated)
	if st := lb.BackendStatus[0]; strings.Contains(st.LastError, "not a loopback address") {
		t.Errorf("backend in --backend-cidr: %+v, want it admitted", st)
	}
	if st := lb.BackendStatus[1]; st.Healthy || !strings.Contains(st.LastError, "not a loopback address") {
		t.Errorf("backend outside --backend-cidr: %+v, want it refused", st)
	}
	if _, err := server.New(server.Config{CloudToken: "a", AdminToken: "b", BackendCIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}); err == nil {
		t.Error("a backend CIDR of the whole Internet was accepted")
	}
}

func TestLBRestart(t *testing.T) {
	cfg := netConfig()
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, cfg)
	n1 := f.Create("n1")
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port := freePort(t, lbIP, backendIP)
	tcpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	udpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	before := f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, 0), servertest.UDP(port, 0)}, Backends: []string{n1.ID}}, http.StatusCreated)
	frontend := netip.AddrPortFrom(lbIP, port)

	f.Srv.Close()
	assertListening(t, frontend, api.ProtocolTCP, false)
	assertListening(t, frontend, api.ProtocolUDP, false)
	// A closed server still answers, but cannot change load balancers.
	f.Must(http.StatusServiceUnavailable, "PUT", api.PathLoadBalancer+"lb", servertest.CloudToken, api.LoadBalancerSpec{}, nil)

	g := servertest.New(t, cfg)
	after := g.AdminLB("lb")
	if after.ID != before.ID || after.IP != before.IP || len(after.Listeners) != 2 {
		t.Errorf("after restart %+v, was %+v", after, before)
	}
	if got, err := tcpCall(netip.Addr{}, frontend, "back"); got != "n1:back" {
		t.Errorf("TCP after restart: %q, %v", got, err)
	}
	if got, err := udpCall(netip.Addr{}, frontend, "back", 3*time.Second); got != "n1:back" {
		t.Errorf("UDP after restart: %q, %v", got, err)
	}
	if next := g.Ensure("lb2", api.LoadBalancerSpec{}, http.StatusCreated); next.IP == before.IP {
		t.Errorf("restarted allocator handed out %s again", next.IP)
	}
}

func TestLBRestartWithPortTaken(t *testing.T) {
	cfg := netConfig()
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")
	f := servertest.New(t, cfg)
	port := freePort(t, firstLBIP(cfg))
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, 0)}}, http.StatusCreated)
	f.Srv.Close()
	squatter := tcpEcho(t, netip.AddrPortFrom(firstLBIP(cfg), port), "squatter")
	defer squatter.close()

	cfg.CloudToken, cfg.AdminToken = servertest.CloudToken, servertest.AdminToken
	_, err := server.New(cfg)
	if err == nil || !strings.Contains(err.Error(), `load balancer "lb"`) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("New with a listener's port taken: %v, want an error naming the load balancer and the cause", err)
	}
}

func TestLBEnsureWithPortTaken(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	ip := firstLBIP(cfg)
	free, taken := freePort(t, ip), freePort(t, ip)
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(free, 0)}}, http.StatusCreated)
	squatter := tcpEcho(t, netip.AddrPortFrom(ip, taken), "squatter")
	defer squatter.close()
	r := f.Must(http.StatusConflict, "PUT", api.PathLoadBalancer+"lb", servertest.CloudToken,
		api.LoadBalancerSpec{Listeners: []api.Listener{servertest.UDP(free, 0), servertest.TCP(taken, 0)}}, nil)
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, "address already in use") {
		t.Errorf("message %q", msg)
	}
	// Nothing changed: the old listener is open, the UDP one never opened.
	if lb := f.AdminLB("lb"); len(lb.Listeners) != 1 || lb.Listeners[0].Protocol != api.ProtocolTCP {
		t.Errorf("failed update changed the spec: %+v", lb.Listeners)
	}
	assertListening(t, netip.AddrPortFrom(ip, free), api.ProtocolTCP, true)
	assertListening(t, netip.AddrPortFrom(ip, free), api.ProtocolUDP, false)
}

func TestLBUDPSessionIdles(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	f.Srv.SetUDPIdle(200 * time.Millisecond)
	n1 := f.Create("n1")
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port := freePort(t, lbIP, backendIP)
	udpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	lb := f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.UDP(port, 0)}, Backends: []string{n1.ID}}, http.StatusCreated)
	sessions := func() int { return f.Srv.UDPSessions(lb.ID, int32(port)) }
	frontend := netip.AddrPortFrom(lbIP, port)
	if got, err := udpCall(netip.Addr{}, frontend, "1", 3*time.Second); got != "n1:1" {
		t.Fatalf("%q, %v", got, err)
	}
	if n := sessions(); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	eventually(t, 3*time.Second, "idle session ends", func() (bool, string) {
		n := sessions()
		return n == 0, strings.Repeat("session ", n)
	})
	if got, err := udpCall(netip.Addr{}, frontend, "2", 3*time.Second); got != "n1:2" {
		t.Errorf("after the session ended: %q, %v", got, err)
	}
}

// TestLBDualStack: a load balancer asked for IPv4 and IPv6 gets an address
// of each, really served on both, and loses the IPv6 one when asked for
// IPv4 alone; a cloud without an IPv6 range refuses the ask.
func TestLBDualStack(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1 := f.Create("n1")
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP}}, Backends: []string{n1.ID}, IPFamilies: []string{api.FamilyIPv4, api.FamilyIPv6}}
	r := f.Must(http.StatusBadRequest, "PUT", api.PathLoadBalancer+"lb", servertest.CloudToken, spec, nil)
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, "no IPv6 load balancer range (fakecloud --lb-cidr-v6)") {
		t.Errorf("IPv6 from a cloud without an IPv6 range: %q", msg)
	}
	spec.IPFamilies = []string{api.FamilyIPv6}
	r = f.Must(http.StatusBadRequest, "PUT", api.PathLoadBalancer+"lb", servertest.CloudToken, spec, nil)
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, "serve IPv4, or IPv4 and IPv6") {
		t.Errorf("IPv6 alone: %q", msg)
	}
	// A cloud that ignores the families makes it IPv4 alone, and says so.
	fault := f.AddFault(api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreIPFamilies})
	spec.IPFamilies = []string{api.FamilyIPv4, api.FamilyIPv6}
	if lb := f.Ensure("lb", spec, http.StatusCreated); lb.IPv6 != "" || len(lb.IPFamilies) != 0 {
		t.Errorf("families ignored: IPv6 %q, families %v; want IPv4 alone", lb.IPv6, lb.IPFamilies)
	}
	f.Must(http.StatusNoContent, "DELETE", api.AdminPathFaults+"/"+fault.ID, servertest.AdminToken, nil, nil)
	f.Must(http.StatusNoContent, "DELETE", api.PathLoadBalancer+"lb", servertest.CloudToken, nil, nil)

	if os.Geteuid() != 0 {
		t.Skip("routing an IPv6 range here needs root")
	}
	pool := netip.MustParsePrefix(fmt.Sprintf("fd00:2:%x::/64", 0xf000+rand.IntN(0xfff)))
	remove, err := lbroute.Add(pool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove() })
	cfg = netConfig()
	cfg.LBCIDRv6 = pool.String()
	f = servertest.New(t, cfg)
	n1 = f.Create("n1")
	backendIP := internalIP(t, n1)
	port := freePort(t, backendIP, firstLBIP(cfg))
	tcpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	spec = api.LoadBalancerSpec{Listeners: []api.Listener{{Port: int32(port), Protocol: api.ProtocolTCP}}, Backends: []string{n1.ID}, IPFamilies: []string{api.FamilyIPv6, api.FamilyIPv4}}
	lb := f.Ensure("lb", spec, http.StatusCreated)
	v6, err := netip.ParseAddr(lb.IPv6)
	if err != nil || !pool.Contains(v6) {
		t.Fatalf("IPv6 address %q, want one of %s", lb.IPv6, pool)
	}
	for _, ip := range []string{lb.IP, lb.IPv6} {
		frontend := netip.AddrPortFrom(netip.MustParseAddr(ip), port)
		if got, err := tcpCall(netip.Addr{}, frontend, "hello"); err != nil || got != "n1:hello" {
			t.Errorf("through %s: %q, %v; want n1:hello", frontend, got, err)
		}
	}
	spec.IPFamilies = nil
	if lb = f.Ensure("lb", spec, http.StatusOK); lb.IPv6 != "" {
		t.Errorf("IPv4 alone: IPv6 address %q kept", lb.IPv6)
	}
	if _, err := tcpCall(netip.Addr{}, netip.AddrPortFrom(v6, port), "hello"); err == nil {
		t.Errorf("%s still served once the load balancer is IPv4 alone", v6)
	}

	// The negative controls' cloud: it gives and reports the IPv6
	// address, and serves nothing there.
	cfg.UnservedIPv6 = true
	f = servertest.New(t, cfg)
	n1 = f.Create("n1")
	backendIP = internalIP(t, n1)
	port = freePort(t, backendIP, firstLBIP(cfg))
	tcpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	spec.Listeners = []api.Listener{{Port: int32(port), Protocol: api.ProtocolTCP}}
	spec.Backends = []string{n1.ID}
	spec.IPFamilies = []string{api.FamilyIPv4, api.FamilyIPv6}
	lb = f.Ensure("lb", spec, http.StatusCreated)
	if lb.IPv6 == "" {
		t.Fatalf("unserved IPv6: no IPv6 address reported, want one")
	}
	if got, err := tcpCall(netip.Addr{}, netip.AddrPortFrom(netip.MustParseAddr(lb.IP), port), "hello"); err != nil || got != "n1:hello" {
		t.Errorf("unserved IPv6: through the IPv4 address %q, %v; want n1:hello", got, err)
	}
	if _, err := tcpCall(netip.Addr{}, netip.AddrPortFrom(netip.MustParseAddr(lb.IPv6), port), "hello"); err == nil {
		t.Errorf("unserved IPv6: %s served", lb.IPv6)
	}
}
