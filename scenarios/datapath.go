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

package scenarios

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	e2enode "k8s.io/kubernetes/test/e2e/framework/node"
	e2eservice "k8s.io/kubernetes/test/e2e/framework/service"
	admissionapi "k8s.io/pod-security-admission/api"

	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/specs"
)

// The [datapath] specs send real packets through the cloud's load balancer
// to pods, so they need nodes that run pods: they skip on runtimes whose
// nodes are simulated. Backends are the e2e framework's agnhost netexec
// pods (HTTP and UDP on port 80), made by its service test jig.
var _ = framework.Describe("LoadBalancer data path", Needs(Claims(providers.LoadBalancers), NeedDataPlane), func() {
	f := framework.NewDefaultFramework("datapath")
	// The jig's backends are not written for the restricted level.
	f.NamespacePodSecurityLevel = admissionapi.LevelBaseline

	ginkgo.BeforeEach(func(ctx context.Context) {
		deferLeakCheck(f.ClientSet)
	})

	it(specs.DatapathTCPUDP, func(ctx context.Context) {
		jig := e2eservice.NewTestJig(f.ClientSet, f.Namespace.Name, "datapath")
		_, err := jig.Run(ctx, nil)
		framework.ExpectNoError(err, "start the backend pods")
		var s *v1.Service
		if !step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
			var err error
			s, err = jig.CreateLoadBalancerService(ctx, env().Timeouts.LoadBalancer, func(s *v1.Service) {
				annotate(s)
				s.Spec.Ports = []v1.ServicePort{
					{Name: "http", Port: 80, Protocol: v1.ProtocolTCP},
					{Name: "udp", Port: 80, Protocol: v1.ProtocolUDP},
				}
			})
			return err
		}) {
			return
		}
		ip := ingressIP(ctx, s)
		e2eservice.TestReachableHTTP(ctx, ip, 80, env().Timeouts.LoadBalancer)
		framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "a UDP answer from a backend pod through "+ip,
			func(ctx context.Context) error { _, err := udpHostname(ip, 80); return err }))
	})

	it(specs.DatapathSourceIP, func(ctx context.Context) {
		jig := e2eservice.NewTestJig(f.ClientSet, f.Namespace.Name, "datapath-source")
		s, err := jig.CreateOnlyLocalLoadBalancerService(ctx, env().Timeouts.LoadBalancer, true, annotate)
		framework.ExpectNoError(err, "create the Service and its backend")
		ip := ingressIP(ctx, s)
		nodes, err := f.ClientSet.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		var nodeIPs []netip.Addr
		for _, n := range nodes.Items {
			if a, err := netip.ParseAddr(nodeInternalIP(&n)); err == nil {
				nodeIPs = append(nodeIPs, a)
			}
		}
		// A poll asks a few times: a load balancer that also sends to
		// nodes without the endpoint must not hide, behind a reset, what
		// the backend saw when it was reached.
		framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the backend to see the client's own address", func(ctx context.Context) error {
			var unreached error
			for range len(nodeIPs) + 1 {
				local, seen, err := clientIP(ctx, ip, 80, nodeIPs)
				if err != nil {
					unreached = err
					continue
				}
				if seen != local {
					return fmt.Errorf("Service %s/%s: expected the backend to see client address %s, actual %s", s.Namespace, s.Name, local, seen)
				}
				return nil
			}
			return unreached
		}))
	})

	it(specs.DatapathHealthChecks, func(ctx context.Context) {
		jig := e2eservice.NewTestJig(f.ClientSet, f.Namespace.Name, "datapath-local")
		s, err := jig.CreateOnlyLocalLoadBalancerService(ctx, env().Timeouts.LoadBalancer, true, annotate)
		framework.ExpectNoError(err, "create the Service and its backend")
		ip := ingressIP(ctx, s)

		ginkgo.By("reaching the backend through " + ip)
		e2eservice.TestReachableHTTP(ctx, ip, 80, env().Timeouts.LoadBalancer)

		// kube-proxy answers the health check node port: 200 where the
		// Service has an endpoint, 503 elsewhere. This is what the load
		// balancer must be told to ask.
		ginkgo.By("probing the health check node port on every node")
		withEndpoint, err := jig.GetEndpointNodeNames(ctx)
		framework.ExpectNoError(err)
		nodes, err := f.ClientSet.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		without := 0
		for _, n := range nodes.Items {
			addr := nodeInternalIP(&n)
			if addr == "" {
				continue
			}
			want := http.StatusServiceUnavailable
			if withEndpoint.Has(n.Name) {
				want = http.StatusOK
			} else {
				without++
			}
			framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "the health check of node "+n.Name, func(ctx context.Context) error {
				got, err := httpStatus(ctx, "http://"+net.JoinHostPort(addr, strconv.Itoa(int(s.Spec.HealthCheckNodePort)))+"/healthz")
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("node %s: expected health check status %d (endpoints here: %t), actual %d", n.Name, want, withEndpoint.Has(n.Name), got)
				}
				return nil
			}))
		}
		if without == 0 {
			framework.Failf("Service %s/%s: every node has an endpoint, so where the load balancer sends traffic proves nothing: expected a node without one", s.Namespace, s.Name)
		}

		// A node without an endpoint drops what reaches its node port
		// (externalTrafficPolicy=Local), so a load balancer that sends
		// there, having not been told the health check or not asking it,
		// fails a share of requests: each a connection of its own.
		n := spreadRequests * len(nodes.Items)
		ginkgo.By(fmt.Sprintf("sending %d requests through %s, each to be answered through a node with an endpoint (%s)", n, ip, strings.Join(withEndpoint.List(), ", ")))
		framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, fmt.Sprintf("every one of %d requests through %s answered", n, ip), func(ctx context.Context) error {
			answered, failed, first := spread(ctx, ip, 80, n)
			if failed > 0 {
				return fmt.Errorf("Service %s/%s: expected the load balancer to send all %d requests to nodes with an endpoint (%s), actual: %d answered (by %v), %d failed, as at a node without one (first: %v)",
					s.Namespace, s.Name, n, strings.Join(withEndpoint.List(), ", "), n-failed, answered, failed, first)
			}
			return nil
		}))
	})

	// Upstream's "should be able to switch session affinity for
	// LoadBalancer service with ESIPP on", made to fail without the
	// load balancer: one backend pod per node and externalTrafficPolicy
	// Local, so that which pod answers is which node the load balancer
	// chose (kube-proxy's own affinity is per node), and the requests are
	// first seen spread without affinity, so that a load balancer that
	// sends everything to one node cannot pass.
	it(specs.DatapathAffinity, func(ctx context.Context) {
		nodes := twoNodesOrMore(ctx, f, func(ctx context.Context) []string {
			nodes, err := e2enode.GetReadySchedulableNodes(ctx, f.ClientSet)
			if err != nil {
				return nil
			}
			var names []string
			for _, n := range nodes.Items {
				names = append(names, n.Name)
			}
			return names
		})
		n := min(len(nodes), 3)
		if n < 2 {
			framework.Failf("%d node runs pods after %v: one backend pod answering every request would prove nothing: expected two at least", n, f.Timeouts.PodStart)
		}
		jig := e2eservice.NewTestJig(f.ClientSet, f.Namespace.Name, "datapath-affinity")
		_, err := jig.Run(ctx, func(d *appsv1.Deployment) {
			d.Spec.Replicas = new(int32(n))
			d.Spec.Template.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: jig.Labels}, TopologyKey: v1.LabelHostname,
				}},
			}}
		})
		framework.ExpectNoError(err, "start %d backend pods, one per node", n)
		s, err := jig.CreateOnlyLocalLoadBalancerService(ctx, env().Timeouts.LoadBalancer, false, annotate)
		framework.ExpectNoError(err, "create the Service")
		ip := ingressIP(ctx, s)
		requests := spreadRequests * n

		ginkgo.By(fmt.Sprintf("seeing %d requests in a row through %s answered by more than one pod, without affinity", requests, ip))
		framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "requests through "+ip+" answered by more than one backend pod", func(ctx context.Context) error {
			hosts, err := inTurn(ctx, ip, 80, requests)
			if err != nil {
				return err
			}
			if distinct := slices.Compact(slices.Sorted(slices.Values(hosts))); len(distinct) < 2 {
				return fmt.Errorf("Service %s/%s: expected %d requests without session affinity answered by more than one of %d pods on as many nodes, actual: all by %s", s.Namespace, s.Name, requests, n, hosts[0])
			}
			return nil
		}))

		ginkgo.By("switching session affinity to ClientIP")
		s = updateService(ctx, f.ClientSet, s, func(s *v1.Service) {
			s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: new(int32(affinitySeconds))}}
		})
		ginkgo.By(fmt.Sprintf("seeing %d requests in a row through %s answered by one pod", affinityRequests, ip))
		step(ctx, f, providers.StepSwitch, func(ctx context.Context) error {
			return WaitForCloud(ctx, env().Timeouts.LoadBalancer, fmt.Sprintf("%d requests in a row through %s answered by one backend pod", affinityRequests, ip), func(ctx context.Context) error {
				hosts, err := inTurn(ctx, ip, 80, affinityRequests)
				if err != nil {
					return err
				}
				if i := slices.IndexFunc(hosts, func(h string) bool { return h != hosts[0] }); i >= 0 {
					return fmt.Errorf("Service %s/%s: expected %d requests from one client with sessionAffinity ClientIP answered by one backend pod, actual: request 1 by %s, request %d by %s", s.Namespace, s.Name, affinityRequests, hosts[0], i+1, hosts[i])
				}
				return nil
			})
		})
	})

	it(specs.DatapathRollingUpdate, func(ctx context.Context) { rollingUpdate(ctx, f) })

	it(specs.DatapathIPMode, func(ctx context.Context) { ipModeDatapath(ctx, f) })

	// A cloud's API can give a load balancer an IPv6 address whose
	// frontend carries nothing; only a request through it shows that.
	it(specs.DatapathDualStack, Needs(NeedDualStackServices), func(ctx context.Context) {
		jig := e2eservice.NewTestJig(f.ClientSet, f.Namespace.Name, "datapath-dual")
		_, err := jig.Run(ctx, nil)
		framework.ExpectNoError(err, "start the backend pods")
		var s *v1.Service
		if !step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
			if _, err := jig.CreateLoadBalancerService(ctx, env().Timeouts.LoadBalancer, func(s *v1.Service) {
				annotate(s)
				s.Spec.IPFamilyPolicy = new(v1.IPFamilyPolicyRequireDualStack)
			}); err != nil {
				return err
			}
			var err error
			s, err = WaitForService(ctx, f.ClientSet, f.Namespace.Name, jig.Name, env().Timeouts.LoadBalancer, "an ingress IP of each family", HasDualStackIngress)
			return err
		}) {
			return
		}
		for _, ip := range ingressIPs(ctx, s) {
			family := "IPv4"
			if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
				family = "IPv6"
			}
			framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "an answer from a backend pod through the "+family+" ingress "+ip,
				func(ctx context.Context) error { _, err := inTurn(ctx, ip, 80, 1); return err }))
		}
	})
})

// affinityRequests is how many requests in a row from one client must be
// answered by one pod: upstream's AffinityConfirmCount.
const affinityRequests = 15

// inTurn sends n requests for netexec's /hostname to ip:port one after
// another, each on a connection of its own, and returns which pod answered
// each; it stops at the first that fails.
func inTurn(ctx context.Context, ip string, port, n int) ([]string, error) {
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/hostname"
	hosts := make([]string, 0, n)
	for i := range n {
		host, err := get(ctx, client, url)
		if err != nil {
			return nil, fmt.Errorf("request %d of %d: %w", i+1, n, err)
		}
		hosts = append(hosts, host)
	}
	return hosts, nil
}

// spreadRequests is how many requests per node the health-check spec
// sends: enough that a load balancer sending to every node, by turns or
// by hash, sends some to each.
const spreadRequests = 8

// spread sends n requests for netexec's /hostname to ip:port, each on a
// connection of its own, a few at a time, and counts the answers by the
// pod that gave them and the failures.
func spread(ctx context.Context, ip string, port, n int) (answered map[string]int, failed int, first error) {
	answered = map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/hostname"
	for range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			host, err := get(ctx, client, url)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if first == nil {
					first = err
				}
				return
			}
			answered[host]++
		})
	}
	wg.Wait()
	return answered, failed, first
}

func get(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(body)), nil
}

// ingressIP is the address packets to the Service's ingress go to: its
// IP, or for an ingress hostname (AWS's load balancers have one), the
// address the cloud says the hostname stands for: no DNS here resolves a
// cloud's names.
func ingressIP(ctx context.Context, s *v1.Service) string {
	if err := HasIngress(s); err != nil {
		framework.Fail(err.Error())
	}
	in := s.Status.LoadBalancer.Ingress[0]
	if in.IP != "" {
		return in.IP
	}
	return cloudLBOf(ctx, s, in.Hostname).IP
}

// ingressIPs are the addresses of every family the Service's ingress
// stands for: its IPs, or those of the cloud's load balancer a hostname
// names.
func ingressIPs(ctx context.Context, s *v1.Service) []string {
	if err := HasIngress(s); err != nil {
		framework.Fail(err.Error())
	}
	var ips []string
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP == "" {
			lb := cloudLBOf(ctx, s, in.Hostname)
			return slices.DeleteFunc([]string{lb.IP, lb.IPv6}, func(ip string) bool { return ip == "" })
		}
		ips = append(ips, in.IP)
	}
	return ips
}

// cloudLBOf is the cloud's load balancer whose name hostname is, the
// ingress of Service s.
func cloudLBOf(ctx context.Context, s *v1.Service, hostname string) providers.LoadBalancer {
	lbi, ok := lbInspector()
	if !ok {
		framework.Failf("Service %s/%s: ingress hostname %s, and no inspector to ask which address it stands for", s.Namespace, s.Name, hostname)
	}
	lbs, err := lbi.LoadBalancers(ctx)
	framework.ExpectNoError(err, "listing the cloud's load balancers")
	var names []string
	for _, lb := range lbs {
		if lb.Hostname == hostname {
			return lb
		}
		names = append(names, lb.Hostname)
	}
	framework.Failf("Service %s/%s: expected ingress hostname %s to be a cloud load balancer's, actual: the cloud's are %v", s.Namespace, s.Name, hostname, names)
	return providers.LoadBalancer{}
}

func nodeInternalIP(n *v1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// udpHostname asks netexec's UDP server for its hostname.
func udpHostname(ip string, port int) (string, error) {
	conn, err := net.DialTimeout("udp", net.JoinHostPort(ip, strconv.Itoa(port)), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("hostname")); err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil {
		return "", fmt.Errorf("no UDP answer from %s:%d: %w", ip, port, err)
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// clientIP returns the local address of a connection to ip:port and the
// address netexec's /clientip says the connection came from.
func clientIP(ctx context.Context, ip string, port int, nodes []netip.Addr) (local, seen string, err error) {
	var localAddr string
	d := &net.Dialer{Timeout: 2 * time.Second}
	if from, err := clientAddr(ip, nodes); err != nil {
		return "", "", err
	} else if from.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			localAddr, _, _ = net.SplitHostPort(c.LocalAddr().String())
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(ip, strconv.Itoa(port))+"/clientip", nil)
	if err != nil {
		return "", "", err
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", err
	}
	host, _, err := net.SplitHostPort(strings.TrimSpace(string(body)))
	if err != nil {
		return "", "", fmt.Errorf("netexec /clientip answered %q: %w", body, err)
	}
	return localAddr, host, nil
}

// clientAddr is the address the source-IP spec's client connects from: the
// kernel's choice (invalid), but for a load balancer on this machine (a
// loopback ingress IP: fakecloud's) an address of this machine off
// loopback, since a loopback source can never reach a node, whatever the
// load balancer keeps; and off the nodes' network (nodes), whose address
// of this machine a proxying load balancer would connect from itself.
func clientAddr(ingress string, nodes []netip.Addr) (netip.Addr, error) {
	ip, err := netip.ParseAddr(ingress)
	if err != nil || !ip.IsLoopback() {
		return netip.Addr{}, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err != nil || p.Addr().Is4() != ip.Is4() || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() ||
			slices.ContainsFunc(nodes, p.Contains) {
			continue
		}
		return p.Addr(), nil
	}
	return netip.Addr{}, fmt.Errorf("the load balancer %s is on this machine, which has no address off loopback and off the nodes' network for a client whose address it could keep", ingress)
}

func httpStatus(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
