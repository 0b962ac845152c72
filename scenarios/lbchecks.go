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
	"fmt"
	"net/netip"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/providers"
)

// LoadBalancerCleanupFinalizer is what the service controller puts on a
// Service it provisions for, and removes once the cloud's LB is gone.
const LoadBalancerCleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"

// HasIngress passes once the Service's status names an ingress: an IP,
// or a hostname, as AWS's load balancers have.
func HasIngress(s *v1.Service) error {
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP != "" || in.Hostname != "" {
			return nil
		}
	}
	return fmt.Errorf("Service %s/%s: expected status.loadBalancer.ingress, actual: none%s", s.Namespace, s.Name, writtenElsewhere(s))
}

// HasDualStackIngress passes when the Service's ingress has an IPv4 and an
// IPv6 IP, or a hostname (which stands for whatever the cloud's DNS
// answers; the cloud-side check then says which families its load
// balancer serves).
func HasDualStackIngress(s *v1.Service) error {
	if err := HasIngress(s); err != nil {
		return err
	}
	var v4, v6 bool
	var ips []string
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP == "" {
			return nil // a hostname
		}
		ips = append(ips, in.IP)
		if ip, err := netip.ParseAddr(in.IP); err == nil && ip.Is6() && !ip.Is4In6() {
			v6 = true
		} else {
			v4 = true
		}
	}
	if !v4 || !v6 {
		return fmt.Errorf("Service %s/%s: expected an ingress IP of each family (ipFamilies %v), actual [%s]", s.Namespace, s.Name, s.Spec.IPFamilies, strings.Join(ips, " "))
	}
	return nil
}

// writtenElsewhere says where a Service without ingress shows an address
// all the same: a CCM that leaves status.loadBalancer to another component
// (kube-vip's writes spec.loadBalancerIP and an annotation, and its
// DaemonSet the status) did assign one, and the failure should say so.
func writtenElsewhere(s *v1.Service) string {
	var shown []string
	if s.Spec.LoadBalancerIP != "" {
		shown = append(shown, "spec.loadBalancerIP="+s.Spec.LoadBalancerIP)
	}
	if len(s.Spec.ExternalIPs) > 0 {
		shown = append(shown, "spec.externalIPs="+strings.Join(s.Spec.ExternalIPs, ","))
	}
	keys := make([]string, 0, len(s.Annotations))
	ours := serviceAnnotations() // the specs' own, not the CCM's
	for k, v := range s.Annotations {
		if w, ok := ours[k]; !ok || w != v {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		shown = append(shown, "annotation "+k+"="+s.Annotations[k])
	}
	if len(shown) == 0 {
		return ""
	}
	return fmt.Sprintf(" (the Service shows %s: if the CCM assigned an address there, it left status.loadBalancer, which the service controller writes from what EnsureLoadBalancer returns, unwritten)", strings.Join(shown, "; "))
}

// NoIngress passes once the Service's status names no ingress.
func NoIngress(s *v1.Service) error {
	if len(s.Status.LoadBalancer.Ingress) > 0 {
		return fmt.Errorf("Service %s/%s: expected no status.loadBalancer.ingress, actual %v", s.Namespace, s.Name, s.Status.LoadBalancer.Ingress)
	}
	return nil
}

// HasFinalizer passes when the cleanup finalizer is present (want) or not.
func HasFinalizer(want bool) ServiceCheck {
	return func(s *v1.Service) error {
		got := false
		for _, f := range s.Finalizers {
			got = got || f == LoadBalancerCleanupFinalizer
		}
		if got != want {
			return fmt.Errorf("Service %s/%s: expected finalizer %s %s, actual finalizers %v", s.Namespace, s.Name,
				LoadBalancerCleanupFinalizer, map[bool]string{true: "present", false: "absent"}[want], s.Finalizers)
		}
		return nil
	}
}

// ServiceChecks passes when every check passes.
func ServiceChecks(checks ...ServiceCheck) ServiceCheck {
	return func(s *v1.Service) error {
		for _, c := range checks {
			if err := c(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// IngressProxied checks that every ingress of s sends in-cluster clients
// through its load balancer, which speaks the PROXY protocol: ipMode Proxy
// on an IP (KEP-1860), or a hostname alone, which kube-proxy never
// short-circuits.
func IngressProxied(s *v1.Service) error {
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP == "" {
			continue // a hostname alone: kube-proxy has no address to short-circuit
		}
		if in.IPMode == nil || *in.IPMode != v1.LoadBalancerIPModeProxy {
			mode := "unset (VIP)"
			if in.IPMode != nil {
				mode = string(*in.IPMode)
			}
			return fmt.Errorf("Service %s/%s: expected ingress %s of ipMode Proxy, its load balancer speaking the PROXY protocol (with VIP, kube-proxy sends in-cluster clients of %s straight to the backends, without the header), actual ipMode %s",
				s.Namespace, s.Name, in.IP, in.IP, mode)
		}
	}
	return HasIngress(s)
}

// LoadBalancerOf finds the Service's load balancer among the cloud's.
func LoadBalancerOf(lbs []providers.LoadBalancer, s *v1.Service) (*providers.LoadBalancer, error) {
	key := s.Namespace + "/" + s.Name
	var names []string
	for i := range lbs {
		lb := &lbs[i]
		if lb.Service == key && (lb.ServiceUID == "" || lb.ServiceUID == string(s.UID)) {
			return lb, nil
		}
		names = append(names, lb.Name+"("+lb.Service+")")
	}
	return nil, fmt.Errorf("Service %s: expected a load balancer in the cloud, actual: none (the cloud has %v)", key, names)
}

// LoadBalancerMatches compares the cloud's load balancer with what the
// Service asks for: ports, protocols and node ports, the eligible nodes as
// backends, the health check node port and the source ranges, and the
// ingress IP in the Service's status.
func LoadBalancerMatches(s *v1.Service, eligible []string, lb *providers.LoadBalancer) error {
	key := s.Namespace + "/" + s.Name
	var want []providers.Listener
	for _, p := range s.Spec.Ports {
		want = append(want, providers.Listener{Port: p.Port, Protocol: p.Protocol, NodePort: p.NodePort})
	}
	if got, exp := formatListeners(lb.Listeners), formatListeners(want); got != exp {
		return fmt.Errorf("Service %s: expected cloud load balancer %s listeners %s, actual %s", key, lb.Name, exp, got)
	}
	if got, exp := sortedJoin(lb.Backends), sortedJoin(eligible); got != exp {
		return fmt.Errorf("Service %s: expected cloud load balancer %s backends [%s] (every eligible node), actual [%s]", key, lb.Name, exp, got)
	}
	wantHC := int32(0)
	if s.Spec.ExternalTrafficPolicy == v1.ServiceExternalTrafficPolicyLocal {
		wantHC = s.Spec.HealthCheckNodePort
	}
	if lb.HealthCheckNodePort != wantHC {
		return fmt.Errorf("Service %s: expected cloud load balancer %s health check on node port %d, actual %d", key, lb.Name, wantHC, lb.HealthCheckNodePort)
	}
	if got, exp := sortedJoin(lb.SourceRanges), sortedJoin(s.Spec.LoadBalancerSourceRanges); got != exp {
		return fmt.Errorf("Service %s: expected cloud load balancer %s source ranges [%s], actual [%s]", key, lb.Name, exp, got)
	}
	if want := affinityOf(s); !affinityMatches(want, lb.ClientAffinity) {
		return fmt.Errorf("Service %s: expected cloud load balancer %s session affinity %s, actual %s", key, lb.Name, formatAffinity(want), formatAffinity(lb.ClientAffinity))
	}
	if got, exp := lbFamilies(lb), serviceFamilies(s); got != exp {
		return fmt.Errorf("Service %s: expected cloud load balancer %s of %s (the Service's ipFamilies), actual %s (addresses %s)", key, lb.Name, exp, got, formatLBAddresses(lb))
	}
	if len(s.Status.LoadBalancer.Ingress) > 0 {
		in := s.Status.LoadBalancer.Ingress[0]
		switch {
		case in.IP != "" && in.IP != lb.IP && in.IP != lb.IPv6:
			return fmt.Errorf("Service %s: expected status ingress IP to be the cloud load balancer's %s, actual %s", key, formatLBAddresses(lb), in.IP)
		case in.IP == "" && in.Hostname != lb.Hostname:
			return fmt.Errorf("Service %s: expected status ingress hostname to be the cloud load balancer's %q, actual %q", key, lb.Hostname, in.Hostname)
		}
	}
	if lb.IPv6 != "" {
		// A dual-stack load balancer: an ingress IP of each of its
		// addresses, and none else.
		var got []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			got = append(got, in.IP)
		}
		if exp := []string{lb.IP, lb.IPv6}; sortedJoin(got) != sortedJoin(exp) {
			return fmt.Errorf("Service %s: expected status ingress IPs [%s] (the cloud load balancer's), actual [%s]", key, sortedJoin(exp), sortedJoin(got))
		}
	}
	return nil
}

// serviceFamilies is the address families a Service asks of its load
// balancer, as lbFamilies says them: both where it is dual-stack (the
// API server gave it an IP of each family), else its one.
func serviceFamilies(s *v1.Service) string {
	switch {
	case len(s.Spec.IPFamilies) > 1:
		return "IPv4 and IPv6"
	case len(s.Spec.IPFamilies) == 1:
		return string(s.Spec.IPFamilies[0]) + " alone"
	}
	return "IPv4 alone"
}

// lbFamilies is the address families a cloud load balancer serves. One
// whose cloud names only a hostname counts as IPv4: the inspectors that
// name no IPv6 address serve no dual-stack Service.
func lbFamilies(lb *providers.LoadBalancer) string {
	if lb.IPv6 != "" {
		return "IPv4 and IPv6"
	}
	if ip, err := netip.ParseAddr(lb.IP); err == nil && ip.Is6() && !ip.Is4In6() {
		return "IPv6 alone"
	}
	return "IPv4 alone"
}

// formatLBAddresses is a load balancer's addresses, for messages.
func formatLBAddresses(lb *providers.LoadBalancer) string {
	if lb.IPv6 != "" {
		return lb.IP + " and " + lb.IPv6
	}
	return lb.IP
}

// affinityOf is the session affinity a Service asks of its load balancer:
// with sessionAffinity ClientIP, its timeout (the API server defaults it);
// nil without.
func affinityOf(s *v1.Service) *providers.ClientAffinity {
	if s.Spec.SessionAffinity != v1.ServiceAffinityClientIP {
		return nil
	}
	timeout := v1.DefaultClientIPServiceAffinitySeconds
	if c := s.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		timeout = *c.ClientIP.TimeoutSeconds
	}
	return &providers.ClientAffinity{TimeoutSeconds: timeout}
}

// affinityMatches says whether the cloud's affinity is the one wanted:
// both none, or both by client address with the same timeout where the
// cloud says one.
func affinityMatches(want, got *providers.ClientAffinity) bool {
	if want == nil || got == nil {
		return want == got
	}
	return got.TimeoutSeconds == 0 || got.TimeoutSeconds == want.TimeoutSeconds
}

func formatAffinity(a *providers.ClientAffinity) string {
	switch {
	case a == nil:
		return "none"
	case a.TimeoutSeconds == 0:
		return "ClientIP (the cloud does not say for how long)"
	}
	return fmt.Sprintf("ClientIP for %ds", a.TimeoutSeconds)
}

// ingressOf is the Service's first ingress, IP or hostname, as a
// provider gives it.
func ingressOf(s *v1.Service) string {
	if len(s.Status.LoadBalancer.Ingress) == 0 {
		return ""
	}
	if in := s.Status.LoadBalancer.Ingress[0]; in.IP != "" {
		return in.IP
	}
	return s.Status.LoadBalancer.Ingress[0].Hostname
}

// EligibleNodes are the nodes the service controller hands the CCM: not
// being deleted, not labelled node.kubernetes.io/exclude-from-external-load-
// balancers, not tainted for deletion by the cluster autoscaler; of those,
// the initialized ones, since a CCM can only name a node by its provider ID,
// and, where the provider ID scheme is known, the CCM's own: a node of
// another owner (bare metal, another cloud) is no machine of its cloud.
func EligibleNodes(nodes []v1.Node, scheme string) []string {
	var out []string
	for _, n := range nodes {
		if !n.DeletionTimestamp.IsZero() || n.Spec.ProviderID == "" {
			continue
		}
		if got, _, ok := strings.Cut(n.Spec.ProviderID, "://"); scheme != "" && (!ok || got != scheme) {
			continue
		}
		if v, ok := n.Labels[v1.LabelNodeExcludeBalancers]; ok && v != "false" {
			continue
		}
		if hasTaint(&n, "ToBeDeletedByClusterAutoscaler") {
			continue
		}
		out = append(out, n.Name)
	}
	return out
}

func formatListeners(ls []providers.Listener) string {
	s := make([]string, 0, len(ls))
	for _, l := range ls {
		s = append(s, fmt.Sprintf("%s:%d->%d", l.Protocol, l.Port, l.NodePort))
	}
	sort.Strings(s)
	return "[" + strings.Join(s, " ") + "]"
}

func sortedJoin(s []string) string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, " ")
}
