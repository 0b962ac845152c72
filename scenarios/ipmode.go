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
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"sigs.k8s.io/ccm-harness/providers"
)

// proxyProtocol is the ip-mode spec: a Service asks, in the annotations
// its profile names, for a load balancer that speaks the PROXY protocol
// to its backends. The cloud's load balancer must speak it, and the
// ingress must say ipMode Proxy: with VIP, kube-proxy sends in-cluster
// clients of the ingress IP straight to the backends, which then get
// connections without the header they were set up to expect (the
// hcloud CCM's users, issue 727). What the data path does with either
// mode is kube-proxy's: the spec checks what the CCM writes against what
// the cloud says it made. (A kind cluster's pods can reach fakecloud's
// load balancers, through the node's egress rule, so a data-path check of
// the two modes is possible there; it is not written yet.)
func proxyProtocol(ctx context.Context, f *framework.Framework) {
	asks := env().Cluster.Profile.ProxyProtocolAnnotations
	if len(asks) == 0 {
		framework.Failf("provider %s claims the PROXY protocol but names no proxyProtocolAnnotations, the annotations that ask its CCM for it", env().Cluster.Profile.Name)
	}
	s := newService(f.Namespace.Name, tcp(80))
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	maps.Copy(s.Annotations, asks)
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

// describeAnnotations is a map of annotations in a stable order.
func describeAnnotations(a map[string]string) string {
	var kv []string
	for k, v := range a {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ", ")
}
