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
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

const cluster = "test-cluster"

func service(uid string, mutate ...func(*v1.Service)) *v1.Service {
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: types.UID(uid)},
		Spec: v1.ServiceSpec{
			Type:  v1.ServiceTypeLoadBalancer,
			Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}},
		},
	}
	for _, m := range mutate {
		m(svc)
	}
	return svc
}

func TestLBSpec(t *testing.T) {
	nodes := []*v1.Node{
		node("n2", "fakecloud://i-2"),
		node("n1", "fakecloud://i-1"),
		node("fresh", ""),           // not initialized yet
		node("alien", "aws:///i-9"), // not ours
		node("n1-again", "fakecloud://i-1"),
	}
	tests := []struct {
		name    string
		svc     *v1.Service
		want    api.LoadBalancerSpec
		wantErr string
	}{
		{
			name: "defaults",
			svc:  service("u-1"),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}},
		},
		{
			name: "dual-stack, IPv6 first",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.IPFamilies = []v1.IPFamily{v1.IPv6Protocol, v1.IPv4Protocol}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, IPFamilies: []string{"IPv6", "IPv4"}},
		},
		{
			name: "IPv4 alone is the cloud's default",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}},
		},
		{
			name: "TCP and UDP on one port, one without a node port",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.Ports = []v1.ServicePort{
					{Name: "dns-tcp", Port: 53, Protocol: v1.ProtocolTCP, NodePort: 30053},
					{Name: "dns-udp", Port: 53, Protocol: v1.ProtocolUDP},
					{Name: "unset", Port: 8080},
				}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{
				{Port: 53, Protocol: api.ProtocolTCP, NodePort: 30053},
				{Port: 53, Protocol: api.ProtocolUDP},
				{Port: 8080, Protocol: api.ProtocolTCP},
			}},
		},
		{
			name: "local traffic policy gets a health check",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
				s.Spec.HealthCheckNodePort = 32000
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, HealthCheckNodePort: 32000},
		},
		{
			name: "cluster traffic policy gets none",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyCluster
				s.Spec.HealthCheckNodePort = 32000
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}},
		},
		{
			name: "source ranges from the spec win over the annotation",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"127.0.0.64/26", "127.0.0.1/32"}
				s.Annotations = map[string]string{v1.AnnotationLoadBalancerSourceRangesKey: "127.9.0.0/16"}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, SourceRanges: []string{"127.0.0.1/32", "127.0.0.64/26"}},
		},
		{
			name: "source ranges from the annotation",
			svc: service("u-1", func(s *v1.Service) {
				s.Annotations = map[string]string{v1.AnnotationLoadBalancerSourceRangesKey: " 127.9.0.0/16,127.0.0.1/32 "}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, SourceRanges: []string{"127.0.0.1/32", "127.9.0.0/16"}},
		},
		{
			name: "client IP affinity with its timeout",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
				s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](30)}}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, ClientAffinitySeconds: 30},
		},
		{
			name: "client IP affinity without a timeout: the API server's default",
			svc:  service("u-1", func(s *v1.Service) { s.Spec.SessionAffinity = v1.ServiceAffinityClientIP }),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, ClientAffinitySeconds: 10800},
		},
		{
			name: "no affinity, whatever its config says",
			svc: service("u-1", func(s *v1.Service) {
				s.Spec.SessionAffinity = v1.ServiceAffinityNone
				s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](30)}}
			}),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}},
		},
		{
			name: "PROXY protocol v1",
			svc:  service("u-1", func(s *v1.Service) { s.Annotations = map[string]string{AnnotationProxyProtocol: "v1"} }),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, ProxyProtocol: 1},
		},
		{
			name: "PROXY protocol v2",
			svc:  service("u-1", func(s *v1.Service) { s.Annotations = map[string]string{AnnotationProxyProtocol: "v2"} }),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}, ProxyProtocol: 2},
		},
		{
			name: "PROXY protocol annotation empty: none",
			svc:  service("u-1", func(s *v1.Service) { s.Annotations = map[string]string{AnnotationProxyProtocol: ""} }),
			want: api.LoadBalancerSpec{Listeners: []api.Listener{{Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}}},
		},
		{
			name:    "PROXY protocol of no version",
			svc:     service("u-1", func(s *v1.Service) { s.Annotations = map[string]string{AnnotationProxyProtocol: "true"} }),
			wantErr: `annotation fakecloud.ccm-harness.sigs.k8s.io/proxy-protocol is "true", not v1 or v2`,
		},
		{
			name:    "SCTP",
			svc:     service("u-1", func(s *v1.Service) { s.Spec.Ports[0].Protocol = v1.ProtocolSCTP }),
			wantErr: `port "http": protocol SCTP is not supported`,
		},
		{
			name:    "bad source range",
			svc:     service("u-1", func(s *v1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"everywhere"} }),
			wantErr: "LoadBalancerSourceRanges",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lbSpec(cluster, tt.svc, nodes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Backends = []string{"i-1", "i-2"}
			tt.want.Tags = map[string]string{TagCluster: cluster, TagService: "shop/web", TagServiceUID: "u-1"}
			if !slices.Equal(got.Listeners, tt.want.Listeners) || !slices.Equal(got.Backends, tt.want.Backends) ||
				got.HealthCheckNodePort != tt.want.HealthCheckNodePort || !slices.Equal(got.SourceRanges, tt.want.SourceRanges) ||
				got.ClientAffinitySeconds != tt.want.ClientAffinitySeconds || got.ProxyProtocol != tt.want.ProxyProtocol ||
				len(got.Tags) != 3 || got.Tags[TagService] != "shop/web" || got.Tags[TagServiceUID] != "u-1" || got.Tags[TagCluster] != cluster {
				t.Errorf("spec\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// freePort returns a port free for TCP on every one of ips.
func freePort(t *testing.T, ips ...netip.Addr) uint16 {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", netip.AddrPortFrom(ips[0], 0).String())
		if err != nil {
			t.Fatal(err)
		}
		port := uint16(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		free := true
		for _, ip := range ips[1:] {
			if l, err := net.Listen("tcp", netip.AddrPortFrom(ip, port).String()); err != nil {
				free = false
			} else {
				l.Close()
			}
		}
		if free {
			return port
		}
	}
	t.Fatalf("no port free on all of %v", ips)
	return 0
}

// echoBackend answers each TCP connection on addr with tag and what it got.
func echoBackend(t *testing.T, addr netip.AddrPort, tag string) {
	t.Helper()
	l, err := net.Listen("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, tag+":")
				io.Copy(c, c)
			}()
		}
	}()
}

func call(addr netip.AddrPort, msg string) (string, error) {
	c, err := net.DialTimeout("tcp", addr.String(), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, msg)
	c.(*net.TCPConn).CloseWrite()
	b, err := io.ReadAll(c)
	return string(b), err
}

func internalIP(inst *api.Instance) netip.Addr {
	for _, a := range inst.Addresses {
		if a.Type == api.AddressInternalIP {
			return netip.MustParseAddr(a.Address)
		}
	}
	return netip.Addr{}
}

func TestLoadBalancerLifecycle(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	n1 := e.create(t, api.CreateInstanceRequest{Name: "n1"})
	n2 := e.create(t, api.CreateInstanceRequest{Name: "n2"})
	ip1, ip2 := internalIP(n1), internalIP(n2)
	port := freePort(t, ip1, ip2)
	echoBackend(t, netip.AddrPortFrom(ip1, port), "n1")
	echoBackend(t, netip.AddrPortFrom(ip2, port), "n2")
	// No node port: the cloud sends traffic to the backends on port itself.
	svc := service("8c3bd1d2-5e2f-4d4b-a0f3-0123456789ab", func(s *v1.Service) {
		s.Spec.Ports = []v1.ServicePort{{Name: "http", Port: int32(port), Protocol: v1.ProtocolTCP}}
	})
	lbName := e.cloud.GetLoadBalancerName(ctx, cluster, svc)
	if lbName != "a8c3bd1d25e2f4d4ba0f30123456789a" {
		t.Errorf("GetLoadBalancerName = %q, want the upstream default", lbName)
	}

	if st, exists, err := e.cloud.GetLoadBalancer(ctx, cluster, svc); st != nil || exists || err != nil {
		t.Errorf("GetLoadBalancer before creation = %v, %v, %v", st, exists, err)
	}
	if err := e.cloud.UpdateLoadBalancer(ctx, cluster, svc, []*v1.Node{node("n1", ProviderID(n1.ID))}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("UpdateLoadBalancer before creation: %v, want an error saying it does not exist", err)
	}
	if lbs, _ := e.admin.LoadBalancers(ctx); len(lbs) != 0 {
		t.Fatalf("UpdateLoadBalancer created %+v", lbs)
	}

	status, err := e.cloud.EnsureLoadBalancer(ctx, cluster, svc, []*v1.Node{node("n1", ProviderID(n1.ID))})
	if err != nil {
		t.Fatalf("EnsureLoadBalancer: %v", err)
	}
	truth, err := e.admin.LoadBalancer(ctx, lbName)
	if err != nil {
		t.Fatal(err)
	}
	if len(status.Ingress) != 1 || status.Ingress[0].IP != truth.IP {
		t.Errorf("status %+v, want the one IP %s", status, truth.IP)
	}
	if truth.Tags[TagService] != "shop/web" || truth.Tags[TagServiceUID] != string(svc.UID) || truth.Tags[TagCluster] != cluster {
		t.Errorf("tags %v do not trace back to the service", truth.Tags)
	}
	frontend := netip.AddrPortFrom(netip.MustParseAddr(truth.IP), port)
	if got, err := call(frontend, "hi"); got != "n1:hi" {
		t.Errorf("through the load balancer: %q, %v", got, err)
	}

	got, exists, err := e.cloud.GetLoadBalancer(ctx, cluster, svc)
	if err != nil || !exists || got.Ingress[0].IP != truth.IP {
		t.Errorf("GetLoadBalancer = %+v, %v, %v", got, exists, err)
	}

	// The node set moves to n2: same IP, traffic follows.
	if err := e.cloud.UpdateLoadBalancer(ctx, cluster, svc, []*v1.Node{node("n2", ProviderID(n2.ID))}); err != nil {
		t.Fatalf("UpdateLoadBalancer: %v", err)
	}
	after, _ := e.admin.LoadBalancer(ctx, lbName)
	if after.IP != truth.IP || !slices.Equal(after.Backends, []string{n2.ID}) {
		t.Errorf("after update %+v, want IP %s and backend %s", after, truth.IP, n2.ID)
	}
	if got, err := call(frontend, "hi"); got != "n2:hi" {
		t.Errorf("after update: %q, %v", got, err)
	}

	if err := e.cloud.EnsureLoadBalancerDeleted(ctx, cluster, svc); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	if err := e.cloud.EnsureLoadBalancerDeleted(ctx, cluster, svc); err != nil {
		t.Errorf("EnsureLoadBalancerDeleted again: %v, want nil (gone is deleted)", err)
	}
	if _, exists, err := e.cloud.GetLoadBalancer(ctx, cluster, svc); exists || err != nil {
		t.Errorf("GetLoadBalancer after delete: exists=%v, %v", exists, err)
	}
	if got, err := call(frontend, "hi"); err == nil {
		t.Errorf("the deleted load balancer still answers %q", got)
	}
}

func TestLoadBalancerRejectsSCTP(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	svc := service("u-sctp", func(s *v1.Service) { s.Spec.Ports[0].Protocol = v1.ProtocolSCTP })
	_, err := e.cloud.EnsureLoadBalancer(ctx, cluster, svc, nil)
	if err == nil || !strings.Contains(err.Error(), "SCTP is not supported") || !strings.Contains(err.Error(), "shop/web") {
		t.Errorf("EnsureLoadBalancer with SCTP: %v, want a clear error naming the service", err)
	}
	if lbs, _ := e.admin.LoadBalancers(ctx); len(lbs) != 0 {
		t.Errorf("an SCTP service got a load balancer: %+v", lbs)
	}
}

func TestLoadBalancerCloudTrouble(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		fault api.Fault
		call  func(e env, svc *v1.Service) (string, error) // returns the status IP, if any
		ip    string
		err   string
	}{
		{
			name:  "ensure fails",
			fault: api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultError, Status: 503, Message: "lb api down"},
			call:  ensure, err: "lb api down",
		},
		{
			name:  "delete fails",
			fault: api.Fault{Operation: api.OpDeleteLoadBalancer, Kind: api.FaultError, Message: "cannot delete"},
			call: func(e env, svc *v1.Service) (string, error) {
				return "", e.cloud.EnsureLoadBalancerDeleted(ctx, cluster, svc)
			},
			err: "cannot delete",
		},
		{
			name:  "get fails",
			fault: api.Fault{Operation: api.OpGetLoadBalancer, Kind: api.FaultThrottle},
			call: func(e env, svc *v1.Service) (string, error) {
				_, _, err := e.cloud.GetLoadBalancer(ctx, cluster, svc)
				return "", err
			},
			err: "429",
		},
		{
			name:  "a false but well-formed IP is passed on",
			fault: api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultCorrupt, Field: api.CorruptIP, Value: "127.99.99.99"},
			call:  ensure, ip: "127.99.99.99",
		},
		{
			name:  "a malformed IP is an error",
			fault: api.Fault{Operation: api.OpAny, Kind: api.FaultCorrupt, Field: api.CorruptIP, Value: "not-an-ip"},
			call:  ensure, err: `IP "not-an-ip"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			svc := service("u-trouble", func(s *v1.Service) { s.Spec.Ports = nil })
			if _, err := e.cloud.EnsureLoadBalancer(ctx, cluster, svc, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := e.admin.AddFault(ctx, tt.fault); err != nil {
				t.Fatal(err)
			}
			ip, err := tt.call(e, svc)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || ip != tt.ip {
				t.Errorf("IP %q, %v; want %q", ip, err, tt.ip)
			}
		})
	}
}

func ensure(e env, svc *v1.Service) (string, error) {
	st, err := e.cloud.EnsureLoadBalancer(context.Background(), cluster, svc, nil)
	if err != nil {
		return "", err
	}
	return st.Ingress[0].IP, nil
}

// TestLoadBalancerIPMode: the ingress is ipMode Proxy when the cloud's
// answer speaks the PROXY protocol and VIP otherwise, the answer and not
// the Service deciding: a cloud that dropped the PROXY protocol (an
// ignore fault) shows as VIP. The misbehaving CCM writes VIP regardless.
func TestLoadBalancerIPMode(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	mode := func(st *v1.LoadBalancerStatus) v1.LoadBalancerIPMode {
		if st == nil || len(st.Ingress) != 1 || st.Ingress[0].IPMode == nil {
			t.Fatalf("status %+v, want one ingress with an ipMode", st)
		}
		return *st.Ingress[0].IPMode
	}
	proxied := func(uid, version string) *v1.Service {
		return service(uid, func(s *v1.Service) {
			s.Spec.Ports = nil
			if version != "" {
				s.Annotations = map[string]string{AnnotationProxyProtocol: version}
			}
		})
	}

	plain := proxied("u-plain", "")
	st, err := e.cloud.EnsureLoadBalancer(ctx, cluster, plain, nil)
	if err != nil || mode(st) != v1.LoadBalancerIPModeVIP {
		t.Errorf("no PROXY protocol: %+v, %v; want ipMode VIP", st, err)
	}
	v2 := proxied("u-v2", "v2")
	if st, err := e.cloud.EnsureLoadBalancer(ctx, cluster, v2, nil); err != nil || mode(st) != v1.LoadBalancerIPModeProxy {
		t.Errorf("PROXY protocol v2: %+v, %v; want ipMode Proxy", st, err)
	}
	if truth, err := e.admin.LoadBalancer(ctx, e.cloud.GetLoadBalancerName(ctx, cluster, v2)); err != nil || truth.ProxyProtocol != 2 {
		t.Errorf("the cloud holds %+v, %v; want proxyProtocol 2", truth, err)
	}
	if st, exists, err := e.cloud.GetLoadBalancer(ctx, cluster, v2); err != nil || !exists || mode(st) != v1.LoadBalancerIPModeProxy {
		t.Errorf("GetLoadBalancer of the v2 one: %+v, %v, %v; want ipMode Proxy", st, exists, err)
	}

	fault, err := e.admin.AddFault(ctx, api.Fault{Operation: api.OpEnsureLoadBalancer, Kind: api.FaultIgnore, Field: api.IgnoreProxyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := e.cloud.EnsureLoadBalancer(ctx, cluster, proxied("u-dropped", "v1"), nil); err != nil || mode(st) != v1.LoadBalancerIPModeVIP {
		t.Errorf("a cloud that dropped the PROXY protocol: %+v, %v; want ipMode VIP, as it behaves", st, err)
	}
	if err := e.admin.DeleteFault(ctx, fault.ID); err != nil {
		t.Fatal(err)
	}

	_, err = e.cloud.EnsureLoadBalancer(ctx, cluster, proxied("u-bad", "v3"), nil)
	if err == nil || !strings.Contains(err.Error(), `proxy-protocol is "v3", not v1 or v2`) || !strings.Contains(err.Error(), "shop/web") {
		t.Errorf("a PROXY protocol of no version: %v, want an error naming the annotation, the value and the service", err)
	}

	e.cloud.misbehaves = map[Misbehaviour]bool{VIPForProxyProtocol: true}
	if st, err := e.cloud.EnsureLoadBalancer(ctx, cluster, v2, nil); err != nil || mode(st) != v1.LoadBalancerIPModeVIP {
		t.Errorf("misbehaving, PROXY protocol v2: %+v, %v; want ipMode VIP", st, err)
	}
	if _, err := readMisbehaviours(string(VIPForProxyProtocol)); err != nil {
		t.Error(err)
	}
}

// TestLBStatusFamilies: a dual-stack load balancer's ingress has an IP of
// each family, in the order of its families; one the cloud made IPv4
// alone has its IPv4 one, whatever was asked.
func TestLBStatusFamilies(t *testing.T) {
	c := &Cloud{}
	for _, tc := range []struct {
		name string
		lb   api.LoadBalancer
		want []string
	}{
		{"IPv4", api.LoadBalancer{IP: "127.20.0.5"}, []string{"127.20.0.5"}},
		{"dual-stack, IPv6 first", api.LoadBalancer{IP: "127.20.0.5", IPv6: "fd00:2::5", LoadBalancerSpec: api.LoadBalancerSpec{IPFamilies: []string{"IPv6", "IPv4"}}}, []string{"fd00:2::5", "127.20.0.5"}},
		{"asked dual-stack, made IPv4", api.LoadBalancer{IP: "127.20.0.5", LoadBalancerSpec: api.LoadBalancerSpec{IPFamilies: []string{"IPv4", "IPv6"}}}, []string{"127.20.0.5"}},
	} {
		st, err := c.lbStatus(&tc.lb)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, in := range st.Ingress {
			got = append(got, in.IP)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: ingress %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := c.lbStatus(&api.LoadBalancer{Name: "lb", IP: "127.20.0.5", IPv6: "bogus", LoadBalancerSpec: api.LoadBalancerSpec{IPFamilies: []string{"IPv4", "IPv6"}}}); err == nil || !strings.Contains(err.Error(), `IPv6 address "bogus"`) {
		t.Errorf("a malformed IPv6 address: %v", err)
	}
}
