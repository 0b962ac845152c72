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
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
	e2eservice "k8s.io/kubernetes/test/e2e/framework/service"

	"sigs.k8s.io/ccm-harness/providers"
)

// proxyProtocol is the ip-mode spec: a Service asks, in the annotations
// its profile names, for a load balancer that speaks the PROXY protocol
// to its backends. The cloud's load balancer must speak it, and the
// ingress must say ipMode Proxy: with VIP, kube-proxy sends in-cluster
// clients of the ingress IP straight to the backends, which then get
// connections without the header they were set up to expect (the
// hcloud CCM's users, issue 727). This spec checks what the CCM writes
// against what the cloud says it made; ipModeDatapath checks what the
// data path does with it.
func proxyProtocol(ctx context.Context, f *framework.Framework) {
	asks := proxyProtocolAsks()
	s := newService(f.Namespace.Name, tcp(80))
	askProxyProtocol(s, asks)
	s = create(ctx, f.ClientSet, s)
	step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
		got, err := WaitForService(ctx, f.ClientSet, s.Namespace, s.Name, env().Timeouts.LoadBalancer, "an ingress IP", HasIngress)
		if err != nil {
			return err
		}
		if err := cloudLoadBalancerMatches(ctx, f.ClientSet, got); err != nil {
			return err
		}
		insp, _ := lbInspector() // there, or cloudLoadBalancerMatches skipped
		return WaitForCloud(ctx, env().Timeouts.LoadBalancer, "ingress ipMode Proxy and a load balancer speaking the PROXY protocol for Service "+s.Namespace+"/"+s.Name,
			func(ctx context.Context) error {
				cur, err := f.ClientSet.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				lbs, err := insp.LoadBalancers(ctx)
				if err != nil {
					return err
				}
				lb, err := LoadBalancerOf(lbs, cur)
				if err != nil {
					return err
				}
				// Both, when both are wrong: a cloud that dropped the
				// protocol and a CCM that says VIP are different fixes.
				var wrong []string
				if lb.ProxyProtocol == 0 {
					wrong = append(wrong, fmt.Sprintf("Service %s/%s: expected its cloud load balancer %s to speak the PROXY protocol to its backends, as annotations %s ask, actual: it speaks none",
						cur.Namespace, cur.Name, lb.Name, describeAnnotations(asks)))
				}
				if err := IngressProxied(cur); err != nil {
					wrong = append(wrong, err.Error())
				}
				if len(wrong) > 0 {
					return errors.New(strings.Join(wrong, "; "))
				}
				return nil
			})
	})
}

// proxyProtocolAsks are the annotations that ask the provider's CCM for a
// load balancer speaking the PROXY protocol.
func proxyProtocolAsks() map[string]string {
	asks := env().Cluster.Profile.ProxyProtocolAnnotations
	if len(asks) == 0 {
		framework.Failf("provider %s claims the PROXY protocol but names no proxyProtocolAnnotations, the annotations that ask its CCM for it", env().Cluster.Profile.Name)
	}
	return asks
}

func askProxyProtocol(s *v1.Service, asks map[string]string) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	maps.Copy(s.Annotations, asks)
}

// headerEcho is a backend that answers each HTTP request with what came
// before its request line: the PROXY protocol header a load balancer
// sent, or nothing. Only the agnhost image's own tools (socat and bash,
// cluster/kind/nodeimage's agnhostTools, as upstream's image has): the
// function is exported so that the shell socat starts for each
// connection has it. Bytes that are not printable (a version 2 header's)
// are dots; the header's lines are joined by spaces. A version 2 header
// has no line end of its own: the request line follows its last byte.
const headerEcho = `header_echo() {
	export LC_ALL=C
	local before="" line
	while IFS= read -r line; do
		case "$line" in
		"GET "* | "HEAD "*) break ;;
		*"GET /"* | *"HEAD /"*)
			before+="${line%%GET /*}"
			break
			;;
		esac
		before+="$line "
	done
	while IFS= read -r line && [ -n "${line%$'\r'}" ]; do :; done
	before=${before//[^[:print:]]/.}
	printf 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "${#before}" "$before"
}
export -f header_echo
exec socat -T 30 TCP-LISTEN:80,fork,reuseaddr EXEC:"/bin/bash -c header_echo"`

// proxyHeaderIn reports whether what a backend saw before a request is a
// PROXY protocol header: version 1's text line, or version 2's signature
// (its printable part).
func proxyHeaderIn(before string) bool {
	return strings.HasPrefix(before, "PROXY ") || strings.Contains(before, "QUIT")
}

// describeBefore is what a backend saw before a request, for a message.
func describeBefore(before string) string {
	if before == "" {
		return "nothing before it"
	}
	return fmt.Sprintf("%q before it", before)
}

// ipModeDatapath is the data-path half of ip-mode: a backend that shows
// what came before each request, behind a load balancer that speaks the
// PROXY protocol. A request from outside the cluster must come with the
// header (the load balancer speaks it); one from a pod to the ingress IP
// too, which it does only if kube-proxy sends it through the load
// balancer, as ipMode Proxy tells it to. With VIP it goes straight to the
// backend, and the header is missing: what broke the hcloud CCM's users.
func ipModeDatapath(ctx context.Context, f *framework.Framework) {
	asks := proxyProtocolAsks()
	jig := e2eservice.NewTestJig(f.ClientSet, f.Namespace.Name, "datapath-ipmode")
	_, err := jig.Run(ctx, func(d *appsv1.Deployment) {
		c := &d.Spec.Template.Spec.Containers[0]
		c.Command, c.Args = []string{"/bin/bash", "-c", headerEcho}, nil
	})
	framework.ExpectNoError(err, "start the backend pod that shows what comes before each request")
	var s *v1.Service
	if !step(ctx, f, providers.StepProvision, func(ctx context.Context) error {
		var err error
		s, err = jig.CreateLoadBalancerService(ctx, env().Timeouts.LoadBalancer, func(s *v1.Service) {
			annotate(s)
			askProxyProtocol(s, asks)
			s.Spec.Ports = []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}}
		})
		return err
	}) {
		return
	}
	ip := ingressIP(ctx, s)
	url := "http://" + net.JoinHostPort(ip, "80") + "/"

	ginkgo.By("seeing a request from outside the cluster through " + ip + " reach the backend behind a PROXY protocol header")
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "a request through "+ip+" to reach the backend behind a PROXY protocol header", func(ctx context.Context) error {
		before, err := get(ctx, client, url)
		if err != nil {
			return err
		}
		if !proxyHeaderIn(before) {
			return fmt.Errorf("Service %s/%s: expected a request through %s to reach the backend behind the PROXY protocol header its load balancer sends, as annotations %s ask, actual: the backend got the request with %s",
				s.Namespace, s.Name, ip, describeAnnotations(asks), describeBefore(before))
		}
		return nil
	}))

	ginkgo.By("seeing a request from a pod to " + ip + " go through the load balancer too")
	pod := netexecPod(ctx, f, "ipmode-client", "")
	framework.ExpectNoError(WaitForCloud(ctx, env().Timeouts.LoadBalancer, "a request from pod "+pod.Name+" to "+ip+" to reach the backend through the load balancer", func(ctx context.Context) error {
		cur, err := f.ClientSet.CoreV1().Services(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		stdout, stderr, err := e2epod.ExecCommandInContainerWithFullOutput(f, pod.Name, "netexec", "/usr/bin/curl", "-sS", "--max-time", "5", url)
		if err != nil {
			return fmt.Errorf("pod %s on node %s: curl %s: %v (%s)", pod.Name, pod.Spec.NodeName, url, err, strings.TrimSpace(stdout+" "+stderr))
		}
		before := strings.TrimSpace(stdout)
		framework.Logf("pod %s on node %s: its request for %s reached the backend with %s", pod.Name, pod.Spec.NodeName, url, describeBefore(before))
		if !proxyHeaderIn(before) {
			return fmt.Errorf("Service %s/%s: expected a request from pod %s to ingress IP %s (ipMode %s) to reach the backend through the load balancer, behind the PROXY protocol header it sends, actual: the backend got the request with %s",
				s.Namespace, s.Name, pod.Name, ip, ingressIPMode(cur, ip), describeBefore(before))
		}
		return nil
	}))
}

// ingressIPMode is the ipMode of the Service's ingress ip, for a message.
func ingressIPMode(s *v1.Service, ip string) string {
	for _, in := range s.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != ip:
		case in.IPMode == nil:
			return "unset"
		default:
			return string(*in.IPMode)
		}
	}
	return "of no ingress: a hostname's"
}

// describeAnnotations is a map of annotations in a stable order.
func describeAnnotations(a map[string]string) string {
	var kv []string
	for k, v := range a {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ", ")
}
