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
	"fmt"
	"net/netip"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	servicehelpers "k8s.io/cloud-provider/service/helpers"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/client"
)

// Tags the provider puts on every load balancer, so that one left behind
// can be traced to the cluster and Service that made it.
const (
	TagCluster = "kubernetes-cluster"
	// TagService is the Service's namespace/name.
	TagService    = api.TagService
	TagServiceUID = "kubernetes-service-uid"
)

// GetLoadBalancerName is the upstream default: "a" and the Service's UID,
// which stays the same for the Service's life and differs between clusters.
func (c *Cloud) GetLoadBalancerName(_ context.Context, _ string, service *v1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(service)
}

// GetLoadBalancer reports whether the Service's load balancer exists, and
// its status if it does.
func (c *Cloud) GetLoadBalancer(ctx context.Context, clusterName string, service *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	name := c.GetLoadBalancerName(ctx, clusterName, service)
	lb, err := c.api.GetLoadBalancer(ctx, name)
	if client.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, lbError(name, service, err)
	}
	status, err := c.lbStatus(lb)
	return status, true, err
}

// EnsureLoadBalancer creates or updates the Service's load balancer so that
// it forwards the Service's ports to nodes.
func (c *Cloud) EnsureLoadBalancer(ctx context.Context, clusterName string, service *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	name := c.GetLoadBalancerName(ctx, clusterName, service)
	spec, err := c.lbSpec(clusterName, service, nodes)
	if err != nil {
		return nil, lbError(name, service, err)
	}
	lb, err := c.api.EnsureLoadBalancer(ctx, name, spec)
	if err != nil {
		return nil, lbError(name, service, err)
	}
	return c.lbStatus(lb)
}

// UpdateLoadBalancer points the Service's load balancer at nodes. The spec
// is rebuilt from the Service rather than patched from what the cloud
// answers, so that a cloud lying in its answers cannot get its lie written
// back. It never creates: the service controller syncs nodes beside, not
// in turn with, a Service's deletion, so an update that looked first and
// wrote after could bring back a load balancer deleted in between (a leak
// no Service owns). The cloud's conditional replace does both in one step.
func (c *Cloud) UpdateLoadBalancer(ctx context.Context, clusterName string, service *v1.Service, nodes []*v1.Node) error {
	name := c.GetLoadBalancerName(ctx, clusterName, service)
	spec, err := c.lbSpec(clusterName, service, nodes)
	if err != nil {
		return lbError(name, service, err)
	}
	if _, err := c.api.UpdateLoadBalancer(ctx, name, spec); err != nil {
		if client.IsNotFound(err) {
			return lbError(name, service, fmt.Errorf("it does not exist, so there are no backends to update (EnsureLoadBalancer creates it)"))
		}
		return lbError(name, service, err)
	}
	return nil
}

// EnsureLoadBalancerDeleted deletes the Service's load balancer; one that
// is already gone is deleted.
func (c *Cloud) EnsureLoadBalancerDeleted(ctx context.Context, clusterName string, service *v1.Service) error {
	name := c.GetLoadBalancerName(ctx, clusterName, service)
	if err := c.api.DeleteLoadBalancer(ctx, name); err != nil && !client.IsNotFound(err) {
		return lbError(name, service, err)
	}
	return nil
}

func lbError(name string, service *v1.Service, err error) error {
	return fmt.Errorf("load balancer %s of service %s/%s: %w", name, service.Namespace, service.Name, err)
}

// lbSpec turns a Service and the nodes it should reach into a load
// balancer spec, as the CCM asks for it.
func (c *Cloud) lbSpec(clusterName string, service *v1.Service, nodes []*v1.Node) (api.LoadBalancerSpec, error) {
	if c.misbehaves[FailLoadBalancersOnForeignNodes] {
		for _, n := range nodes {
			if _, err := InstanceID(n.Spec.ProviderID); n.Spec.ProviderID != "" && err != nil {
				return api.LoadBalancerSpec{}, fmt.Errorf("fakecloud (misbehaving on purpose, %s=%s): node %q: %w", MisbehaveEnv, FailLoadBalancersOnForeignNodes, n.Name, err)
			}
		}
	}
	return lbSpec(clusterName, service, nodes)
}

// lbSpec turns a Service and the nodes it should reach into a load
// balancer spec.
func lbSpec(clusterName string, service *v1.Service, nodes []*v1.Node) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{
		Listeners: []api.Listener{},
		Backends:  []string{},
		Tags: map[string]string{
			TagCluster:    clusterName,
			TagService:    service.Namespace + "/" + service.Name,
			TagServiceUID: string(service.UID),
		},
	}
	for _, p := range service.Spec.Ports {
		var proto api.Protocol
		switch p.Protocol {
		case v1.ProtocolTCP, "": // "" is what the API server defaults to TCP
			proto = api.ProtocolTCP
		case v1.ProtocolUDP:
			proto = api.ProtocolUDP
		default:
			return spec, fmt.Errorf("port %q: protocol %s is not supported; fakecloud load balancers carry TCP and UDP only", p.Name, p.Protocol)
		}
		// NodePort is 0 with allocateLoadBalancerNodePorts=false; the
		// cloud then sends traffic to the backends on Port.
		spec.Listeners = append(spec.Listeners, api.Listener{Port: p.Port, Protocol: proto, NodePort: p.NodePort})
	}
	for _, n := range nodes {
		// A node without a fakecloud provider ID has not been initialized
		// by this CCM yet: there is no instance to send traffic to.
		id, err := InstanceID(n.Spec.ProviderID)
		if err != nil {
			continue
		}
		spec.Backends = append(spec.Backends, id)
	}
	// Sorted, so that the same nodes in another order are no change.
	slices.Sort(spec.Backends)
	spec.Backends = slices.Compact(spec.Backends)
	_, spec.HealthCheckNodePort = servicehelpers.GetServiceHealthCheckPathPort(service)
	// The helper answers 0.0.0.0/0 when nothing is set; sending nothing
	// instead says "all", IPv6 clients included.
	if len(service.Spec.LoadBalancerSourceRanges) > 0 || strings.TrimSpace(service.Annotations[v1.AnnotationLoadBalancerSourceRangesKey]) != "" {
		ranges, err := servicehelpers.GetLoadBalancerSourceRanges(service)
		if err != nil {
			return spec, err
		}
		spec.SourceRanges = ranges.StringSlice()
		slices.Sort(spec.SourceRanges)
	}
	spec.ClientAffinitySeconds = clientAffinity(service)
	pp, err := proxyProtocol(service)
	if err != nil {
		return spec, err
	}
	spec.ProxyProtocol = pp
	// A dual-stack Service's families, in its order; an IPv4 one's are
	// the cloud's default.
	if slices.Contains(service.Spec.IPFamilies, v1.IPv6Protocol) {
		for _, f := range service.Spec.IPFamilies {
			spec.IPFamilies = append(spec.IPFamilies, string(f))
		}
	}
	return spec, nil
}

// AnnotationProxyProtocol asks for a load balancer that opens each TCP
// connection to a backend with a PROXY protocol header, of version "v1"
// (text) or "v2" (binary), so backends learn their clients' addresses
// through a proxying load balancer; absent or empty, none.
const AnnotationProxyProtocol = "fakecloud.ccm-harness.sigs.k8s.io/proxy-protocol"

// proxyProtocol is the PROXY protocol version the Service asks for. A value
// it cannot read is an error rather than none: a backend that expects the
// header would otherwise fail on every connection, far from the typo.
func proxyProtocol(service *v1.Service) (int32, error) {
	switch v := service.Annotations[AnnotationProxyProtocol]; v {
	case "":
		return 0, nil
	case "v1":
		return 1, nil
	case "v2":
		return 2, nil
	default:
		return 0, fmt.Errorf("annotation %s is %q, not v1 or v2 (the PROXY protocol version; leave it out for none)", AnnotationProxyProtocol, v)
	}
}

// clientAffinity is how long the load balancer keeps a client on its
// backend: the Service's ClientIP timeout (the API server defaults it to
// three hours), or 0 for a Service without session affinity.
func clientAffinity(service *v1.Service) int32 {
	if service.Spec.SessionAffinity != v1.ServiceAffinityClientIP {
		return 0
	}
	if c := service.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
		return *c.ClientIP.TimeoutSeconds
	}
	return v1.DefaultClientIPServiceAffinitySeconds
}

// lbStatus is what the service controller writes into the Service. A
// well-formed IP is passed on as the cloud gives it, even a false one: the
// harness must see what the CCM was told.
//
// The ingress's ipMode (KEP-1860) is Proxy for a load balancer that
// speaks the PROXY protocol to its backends: kube-proxy must then send
// in-cluster clients of the ingress IP through the load balancer, or they
// would reach backends without the header those expect. It follows the
// cloud's answer, not the Service, so a cloud that dropped the PROXY
// protocol shows as VIP, as it behaves.
//
// A dual-stack load balancer has an ingress of each address, in the order
// of its families; one the cloud made IPv4 alone has one, whatever the
// Service asked.
func (c *Cloud) lbStatus(lb *api.LoadBalancer) (*v1.LoadBalancerStatus, error) {
	mode := v1.LoadBalancerIPModeVIP
	if lb.ProxyProtocol > 0 && !c.misbehaves[VIPForProxyProtocol] {
		mode = v1.LoadBalancerIPModeProxy
	}
	families := lb.IPFamilies
	if lb.IPv6 == "" {
		families = []string{api.FamilyIPv4}
	}
	status := &v1.LoadBalancerStatus{}
	for _, f := range families {
		ip, what := lb.IP, "IP"
		if f == api.FamilyIPv6 {
			ip, what = lb.IPv6, "IPv6 address"
		}
		if _, err := netip.ParseAddr(ip); err != nil {
			return nil, fmt.Errorf("fakecloud: load balancer %s (%s) has %s %q, which is not an IP address", lb.Name, lb.ID, what, ip)
		}
		status.Ingress = append(status.Ingress, v1.LoadBalancerIngress{IP: ip, IPMode: &mode})
	}
	return status, nil
}
