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
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

func TestLBValidation(t *testing.T) {
	f := servertest.New(t, netConfig())
	inst := f.Create("n1")
	tests := []struct {
		name string
		body any
		msg  string
	}{
		{"bad protocol", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: "SCTP"}}}, "listeners[0].protocol"},
		{"lowercase protocol", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: "tcp"}}}, "listeners[0].protocol"},
		{"port 0", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 0, Protocol: api.ProtocolTCP}}}, "listeners[0].port"},
		{"port too big", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 65536, Protocol: api.ProtocolTCP}}}, "listeners[0].port"},
		{"negative node port", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: -1}}}, "listeners[0].nodePort"},
		{"duplicate port and protocol", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(80, 1), servertest.UDP(80, 1), servertest.TCP(80, 2)}}, "listeners[2] repeats 80/TCP of listeners[0]"},
		{"unknown backend", api.LoadBalancerSpec{Backends: []string{inst.ID, "i-000000000000"}}, `backends[1]: instance "i-000000000000" not found`},
		{"backend by name", api.LoadBalancerSpec{Backends: []string{"n1"}}, `backends[0]`},
		{"duplicate backend", api.LoadBalancerSpec{Backends: []string{inst.ID, inst.ID}}, "backends[1] repeats"},
		{"bad health check port", api.LoadBalancerSpec{HealthCheckNodePort: 70000}, "healthCheckNodePort"},
		{"bad CIDR", api.LoadBalancerSpec{SourceRanges: []string{"127.0.0.1/32", "127.0.0.1"}}, "sourceRanges[1]"},
		{"affinity over a day", api.LoadBalancerSpec{ClientAffinitySeconds: 86401}, "clientAffinitySeconds 86401"},
		{"negative affinity", api.LoadBalancerSpec{ClientAffinitySeconds: -1}, "clientAffinitySeconds -1"},
		{"PROXY protocol version 3", api.LoadBalancerSpec{ProxyProtocol: 3}, "proxyProtocol 3 is not 0, 1 or 2"},
		{"negative PROXY protocol version", api.LoadBalancerSpec{ProxyProtocol: -1}, "proxyProtocol -1"},
		{"unknown field", `{"listeners":[],"backend":[]}`, `unknown field "backend"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Must(http.StatusBadRequest, "PUT", api.PathLoadBalancer+"lb1", servertest.CloudToken, tt.body, nil)
			if e := r.ErrorBody(t); e.Code != api.CodeInvalid || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error %+v, want Invalid naming %q", e, tt.msg)
			}
		})
	}
	var list api.LoadBalancerList
	f.Must(http.StatusOK, "GET", api.AdminPathLoadBalancers, servertest.AdminToken, nil, &list)
	if len(list.LoadBalancers) != 0 {
		t.Errorf("invalid specs created load balancers: %+v", list.LoadBalancers)
	}
}

func TestLBLifecycle(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1, n2 := f.Create("n1"), f.Create("n2")
	ip := firstLBIP(cfg)
	p1, p2, p3 := freePort(t, ip), freePort(t, ip), freePort(t, ip)
	addr := func(p uint16) netip.AddrPort { return netip.AddrPortFrom(ip, p) }

	spec := api.LoadBalancerSpec{
		Listeners: []api.Listener{servertest.TCP(p1, 30001), servertest.UDP(p1, 30001), servertest.TCP(p2, 30002)},
		Backends:  []string{n1.ID},
		Tags:      map[string]string{"cluster": "c1", "service": "default/web"},
	}
	created := f.Ensure("lb1", spec, http.StatusCreated)
	if !regexp.MustCompile(`^lb-[0-9a-f]{12}$`).MatchString(created.ID) {
		t.Errorf("ID %q is not lb- and 12 hex digits", created.ID)
	}
	if created.IP != ip.String() || created.Name != "lb1" || created.Tags["service"] != "default/web" || len(created.Listeners) != 3 {
		t.Errorf("created %+v, want lb1 on %s with the spec", created, ip)
	}
	if len(created.BackendStatus) != 1 || created.BackendStatus[0].Instance != n1.ID || !created.BackendStatus[0].Healthy ||
		created.BackendStatus[0].Address != internalIP(t, n1).String() {
		t.Errorf("backend status %+v, want n1 healthy at its first InternalIP", created.BackendStatus)
	}
	assertListening(t, addr(p1), api.ProtocolTCP, true)
	assertListening(t, addr(p1), api.ProtocolUDP, true)
	assertListening(t, addr(p2), api.ProtocolTCP, true)

	// An update replaces the spec in place: same ID and IP; the listener
	// that stays stays open, the removed one closes, the new one opens.
	spec.Listeners = []api.Listener{servertest.TCP(p1, 30011), servertest.UDP(p3, 0)}
	spec.Backends = []string{n2.ID, n1.ID}
	spec.Tags = nil
	updated := f.Ensure("lb1", spec, http.StatusOK)
	if updated.ID != created.ID || updated.IP != created.IP || !updated.CreatedAt.Equal(created.CreatedAt) {
		t.Errorf("update changed identity: %s %s, was %s %s", updated.ID, updated.IP, created.ID, created.IP)
	}
	if len(updated.Backends) != 2 || updated.Backends[0] != n2.ID || len(updated.Tags) != 0 || updated.Listeners[0].NodePort != 30011 {
		t.Errorf("update not applied: %+v", updated)
	}
	assertListening(t, addr(p1), api.ProtocolTCP, true)
	assertListening(t, addr(p1), api.ProtocolUDP, false)
	assertListening(t, addr(p2), api.ProtocolTCP, false)
	assertListening(t, addr(p3), api.ProtocolUDP, true)

	var got api.LoadBalancer
	f.Must(http.StatusOK, "GET", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil, &got)
	if got.ID != created.ID || len(got.Listeners) != 2 {
		t.Errorf("GetLoadBalancer = %+v", got)
	}
	if byID := f.AdminLB(created.ID); byID.Name != "lb1" {
		t.Errorf("admin lookup by ID gave %+v", byID)
	}
	second := f.Ensure("lb2", api.LoadBalancerSpec{}, http.StatusCreated)
	if second.IP == created.IP || second.ID == created.ID {
		t.Errorf("second load balancer shares %s/%s with the first", second.IP, second.ID)
	}
	var list api.LoadBalancerList
	f.Must(http.StatusOK, "GET", api.PathLoadBalancers, servertest.CloudToken, nil, &list)
	if len(list.LoadBalancers) != 2 || list.LoadBalancers[0].Name != "lb1" || list.LoadBalancers[1].Name != "lb2" {
		t.Errorf("list %+v, want lb1 and lb2 in creation order", list.LoadBalancers)
	}
	if !strings.Contains(string(f.Must(http.StatusOK, "GET", api.PathLoadBalancer+"lb2", servertest.CloudToken, nil, nil).Body), `"listeners":[],"backends":[]`) {
		t.Errorf("an empty spec should read as empty lists, not null")
	}

	// Deleting frees the ports at once; deleting again is 404.
	f.Must(http.StatusNoContent, "DELETE", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil, nil)
	assertListening(t, addr(p1), api.ProtocolTCP, false)
	assertListening(t, addr(p3), api.ProtocolUDP, false)
	r := f.Must(http.StatusNotFound, "DELETE", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil, nil)
	if e := r.ErrorBody(t); e.Code != api.CodeNotFound || !strings.Contains(e.Message, "lb1") {
		t.Errorf("second delete: %+v", e)
	}
	f.Must(http.StatusNotFound, "GET", api.PathLoadBalancer+"lb1", servertest.CloudToken, nil, nil)
	f.Must(http.StatusNotFound, "GET", api.AdminPathLoadBalancer+"lb1", servertest.AdminToken, nil, nil)
	// A freed IP is not handed out again while the pool has others.
	if third := f.Ensure("lb3", api.LoadBalancerSpec{}, http.StatusCreated); third.IP == created.IP || third.IP == second.IP {
		t.Errorf("third load balancer got %s, reusing a recent IP", third.IP)
	}
}

func TestLBAddressPool(t *testing.T) {
	// 127.x.y.0/30 holds .1 and .2: .0 is the network, .3 the broadcast.
	cfg := netConfig()
	cfg.LBCIDR = strings.Replace(cfg.LBCIDR, "/24", "/30", 1)
	f := servertest.New(t, cfg)
	a := f.Ensure("a", api.LoadBalancerSpec{}, http.StatusCreated)
	b := f.Ensure("b", api.LoadBalancerSpec{}, http.StatusCreated)
	r := f.Must(http.StatusConflict, "PUT", api.PathLoadBalancer+"c", servertest.CloudToken, api.LoadBalancerSpec{}, nil)
	if msg := r.ErrorBody(t).Message; !strings.Contains(msg, cfg.LBCIDR) || !strings.Contains(msg, "exhausted") {
		t.Errorf("message %q does not name the exhausted pool", msg)
	}
	f.Must(http.StatusNoContent, "DELETE", api.PathLoadBalancer+"a", servertest.CloudToken, nil, nil)
	// Released on delete: the allocator wraps around to it.
	if c := f.Ensure("c", api.LoadBalancerSpec{}, http.StatusCreated); c.IP != a.IP {
		t.Errorf("c got %s, want the released %s (b has %s)", c.IP, a.IP, b.IP)
	}
}

// TestCloseReleasesEverything holds a TCP connection and a UDP session open
// through health-checked load balancers, closes the server, and checks that
// every port is free and every goroutine it started has ended.
func TestCloseReleasesEverything(t *testing.T) {
	cfg := netConfig()
	cfg.CloudToken, cfg.AdminToken = servertest.CloudToken, servertest.AdminToken
	base := runtime.NumGoroutine()
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Straight to the handler: an HTTP server would add goroutines of its
	// own to the count.
	call := func(method, path, token string, body any, want int, out any) {
		t.Helper()
		serveDirect(t, s, method, path, token, body, want, out)
	}
	var n1 api.Instance
	call("POST", api.AdminPathInstances, servertest.AdminToken, api.CreateInstanceRequest{Name: "n1"}, http.StatusCreated, &n1)
	lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
	port := freePort(t, lbIP, backendIP)
	hcPort := freePort(t, backendIP)
	tcpBackend := tcpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	udpBackend := udpEcho(t, netip.AddrPortFrom(backendIP, port), "n1")
	hc := healthServer(t, netip.AddrPortFrom(backendIP, hcPort), http.StatusOK)
	call("PUT", api.PathLoadBalancer+"lb", servertest.CloudToken, api.LoadBalancerSpec{
		Listeners: []api.Listener{servertest.TCP(port, 0), servertest.UDP(port, 0)}, Backends: []string{n1.ID}, HealthCheckNodePort: int32(hcPort),
	}, http.StatusCreated, nil)
	frontend := netip.AddrPortFrom(lbIP, port)
	eventually(t, 5*time.Second, "backend healthy", func() (bool, string) {
		var lb api.LoadBalancer
		call("GET", api.AdminPathLoadBalancer+"lb", servertest.AdminToken, nil, http.StatusOK, &lb)
		return lb.BackendStatus[0].Healthy, statusOf(lb)
	})

	// A TCP connection left open mid-stream, and a live UDP session.
	held, err := netDialTCP(frontend)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if got, err := held.roundTrip("open", len("n1:open")); got != "n1:open" {
		t.Fatalf("held connection: %q, %v", got, err)
	}
	if got, err := udpCall(netip.Addr{}, frontend, "u", 3*time.Second); got != "n1:u" {
		t.Fatalf("UDP: %q, %v", got, err)
	}

	closed := make(chan struct{})
	go func() {
		s.Close()
		s.Close() // twice is harmless
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close has not returned after 10s: something it waits for never ends")
	}
	assertListening(t, frontend, api.ProtocolTCP, false)
	assertListening(t, frontend, api.ProtocolUDP, false)
	if _, err := held.roundTrip("more", len("more")); err == nil {
		t.Error("the held connection still works after Close")
	}
	held.Close()
	tcpBackend.close()
	udpBackend.close()
	hc.close()
	eventually(t, 5*time.Second, "goroutines back to the baseline", func() (bool, string) {
		n := runtime.NumGoroutine()
		if n <= base {
			return true, ""
		}
		buf := make([]byte, 1<<16)
		return false, string(buf[:runtime.Stack(buf, true)])
	})
}

// An ignore fault makes the cloud hold the wrong thing while answering
// success: the harness's negative controls rely on the stored (admin) view
// being wrong, not only the answer.
func TestLBIgnoreFault(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1, n2 := f.Create("n1"), f.Create("n2")
	ip := firstLBIP(cfg)
	p1, p2 := freePort(t, ip), freePort(t, ip)

	tests := []struct {
		field string
		check func(before, after api.LoadBalancer) string
	}{
		{api.IgnoreListeners, func(b, a api.LoadBalancer) string {
			if len(a.Listeners) != 1 || a.Listeners[0].Port != int32(p1) {
				return fmt.Sprintf("listeners %+v, want the old %+v", a.Listeners, b.Listeners)
			}
			return ""
		}},
		{api.IgnoreBackends, func(b, a api.LoadBalancer) string {
			if len(a.Backends) != 1 || a.Backends[0] != n1.ID {
				return fmt.Sprintf("backends %v, want the old %v", a.Backends, b.Backends)
			}
			return ""
		}},
		{api.IgnoreSourceRanges, func(b, a api.LoadBalancer) string {
			if len(a.SourceRanges) != 0 {
				return fmt.Sprintf("source ranges %v, want none as before", a.SourceRanges)
			}
			return ""
		}},
		{api.IgnoreHealthCheck, func(b, a api.LoadBalancer) string {
			if a.HealthCheckNodePort != 0 {
				return fmt.Sprintf("health check node port %d, want 0 as before", a.HealthCheckNodePort)
			}
			return ""
		}},
		{api.IgnoreClientAffinity, func(b, a api.LoadBalancer) string {
			if a.ClientAffinitySeconds != 0 {
				return fmt.Sprintf("client affinity %ds, want none as before", a.ClientAffinitySeconds)
			}
			return ""
		}},
		{api.IgnoreProxyProtocol, func(b, a api.LoadBalancer) string {
			if a.ProxyProtocol != 0 {
				return fmt.Sprintf("PROXY protocol %d, want none as before", a.ProxyProtocol)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			name := "lb-" + tt.field
			before := f.Ensure(name, api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(p1, 30001)}, Backends: []string{n1.ID}}, http.StatusCreated)
			fault := f.AddFault(api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: tt.field})
			f.Ensure(name, api.LoadBalancerSpec{
				Listeners:             []api.Listener{servertest.TCP(p2, 30002)},
				Backends:              []string{n1.ID, n2.ID},
				SourceRanges:          []string{"127.0.0.1/32"},
				HealthCheckNodePort:   31000,
				ClientAffinitySeconds: 60,
				ProxyProtocol:         2,
			}, http.StatusOK)
			f.Must(http.StatusNoContent, "DELETE", api.AdminPathFaults+"/"+fault.ID, servertest.AdminToken, nil, nil)
			if msg := tt.check(before, f.AdminLB(name)); msg != "" {
				t.Errorf("after an ignored %s: %s", tt.field, msg)
			}
			f.Must(http.StatusNoContent, "DELETE", api.PathLoadBalancer+name, servertest.CloudToken, nil, nil)
		})
	}
}

// TestLBIgnoreBackendRemovals: the cloud takes the backends a request adds
// and keeps those it leaves out.
func TestLBIgnoreBackendRemovals(t *testing.T) {
	cfg := netConfig()
	f := servertest.New(t, cfg)
	n1, n2 := f.Create("n1"), f.Create("n2")
	port := freePort(t, firstLBIP(cfg))
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, 30001)}, Backends: []string{n1.ID}}, http.StatusCreated)
	f.AddFault(api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreBackendRemovals})
	f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, 30001)}, Backends: []string{n2.ID}}, http.StatusOK)
	got := f.AdminLB("lb").Backends
	slices.Sort(got)
	want := []string{n1.ID, n2.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("backends %v after removing %s and adding %s, want both %v", got, n1.ID, n2.ID, want)
	}
}

// A new load balancer whose first address has its port taken by someone
// else on this machine (another fakecloud whose pool meets this one's)
// takes the next address rather than failing; an existing one keeps its
// address and hears the conflict.
func TestNewLoadBalancerSkipsATakenAddress(t *testing.T) {
	cfg := netConfig()
	taken := firstLBIP(cfg)
	l, err := net.Listen("tcp", net.JoinHostPort(taken.String(), "8080"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := servertest.New(t, cfg)
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 8080, Protocol: api.ProtocolTCP}}}
	lb := f.Ensure("web", spec, http.StatusCreated)
	if lb.IP == taken.String() || lb.IP != taken.Next().String() {
		t.Errorf("new load balancer got %s, want the next address after the taken %s", lb.IP, taken)
	}
	other := f.Ensure("db", api.LoadBalancerSpec{}, http.StatusCreated)
	l2, err := net.Listen("tcp", net.JoinHostPort(other.IP, "9090"))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	f.Ensure("db", api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 9090, Protocol: api.ProtocolTCP}}}, http.StatusConflict)
}

// TestLBKeepsTheClientAddress checks what address a backend sees: the
// client's own, through fakecloud's load balancers, and fakecloud's when it
// is told that they proxy. The client needs an address of this machine off
// loopback, since a loopback source cannot leave the machine and is
// proxied whatever the load balancer.
func TestLBKeepsTheClientAddress(t *testing.T) {
	client := offLoopbackAddr(t)
	for _, proxy := range []bool{false, true} {
		t.Run(fmt.Sprintf("proxy=%t", proxy), func(t *testing.T) {
			cfg := netConfig()
			cfg.ProxyLoadBalancers = proxy
			f := servertest.New(t, cfg)
			n1 := f.Create("n1")
			lbIP, backendIP := firstLBIP(cfg), internalIP(t, n1)
			port := freePort(t, lbIP, backendIP)
			l, err := net.Listen("tcp", netip.AddrPortFrom(backendIP, port).String())
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					io.WriteString(c, c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap().String())
					c.Close()
				}
			}()
			f.Ensure("lb", api.LoadBalancerSpec{Listeners: []api.Listener{servertest.TCP(port, 0)}, Backends: []string{n1.ID}}, http.StatusCreated)
			seen, err := tcpCall(client, netip.AddrPortFrom(lbIP, port), "")
			if err != nil {
				t.Fatalf("through the load balancer from %s: %v", client, err)
			}
			if keeps := seen == client.String(); keeps == proxy {
				t.Errorf("client %s, proxy=%t: the backend saw %s", client, proxy, seen)
			}
		})
	}
}

// offLoopbackAddr is an IPv4 address of this machine off loopback.
func offLoopbackAddr(t *testing.T) netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() && !p.Addr().IsLinkLocalUnicast() {
			return p.Addr()
		}
	}
	t.Skip("this machine has no IPv4 address off loopback for a client whose address can be kept")
	return netip.Addr{}
}
