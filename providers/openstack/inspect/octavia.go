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

package inspect

import (
	"context"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/providers"
)

// LBNamePrefix begins the name the OpenStack CCM gives a Service's load
// balancer: kube_service_<cluster>_<namespace>_<name>.
const LBNamePrefix = "kube_service_"

// LoadBalancers are Octavia's load balancers: a listener per protocol and
// port, to its pool's members' port (the node port); the members' servers
// as backends; the members' monitor port under an HTTP health monitor;
// the listeners' allowed CIDRs but "everyone"; the VIP.
//
// A load balancer the CCM deletes or changes while it is read answers 404
// for a listener, pool or member listed a moment before, as Octavia does:
// the listing is then read again, whole, so that what it says is one
// moment's truth (a spec beside another's deletion failed on "Pool ... not
// found" otherwise).
func (c *Cloud) LoadBalancers(ctx context.Context) ([]providers.LoadBalancer, error) {
	const tries = 3
	for try := 1; ; try++ {
		out, err := c.loadBalancers(ctx)
		if err == nil || try == tries || !gophercloud.ResponseCodeIs(err, http.StatusNotFound) || ctx.Err() != nil {
			return out, err
		}
	}
}

func (c *Cloud) loadBalancers(ctx context.Context) ([]providers.LoadBalancer, error) {
	s, err := c.services(ctx)
	if err != nil {
		return nil, err
	}
	owners, err := c.owners(ctx, s)
	if err != nil {
		return nil, err
	}
	pages, err := loadbalancers.List(s.lb, loadbalancers.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, c.fail("Octavia", "list load balancers", err)
	}
	lbs, err := loadbalancers.ExtractLoadBalancers(pages)
	if err != nil {
		return nil, c.fail("Octavia", "list load balancers", err)
	}
	out := make([]providers.LoadBalancer, 0, len(lbs))
	for _, lb := range lbs {
		p, err := c.loadBalancer(ctx, s, lb, owners)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (c *Cloud) loadBalancer(ctx context.Context, s *services, lb loadbalancers.LoadBalancer, owners map[string]string) (providers.LoadBalancer, error) {
	out := providers.LoadBalancer{Name: lb.Name, Service: ServiceOf(lb.Name), IP: lb.VipAddress}
	lpages, err := listeners.List(s.lb, listeners.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
	if err != nil {
		return out, c.fail("Octavia", "list listeners of "+lb.Name, err)
	}
	ls, err := listeners.ExtractListeners(lpages)
	if err != nil {
		return out, c.fail("Octavia", "list listeners of "+lb.Name, err)
	}
	ppages, err := pools.List(s.lb, pools.ListOpts{LoadbalancerID: lb.ID}).AllPages(ctx)
	if err != nil {
		return out, c.fail("Octavia", "list pools of "+lb.Name, err)
	}
	ps, err := pools.ExtractPools(ppages)
	if err != nil {
		return out, c.fail("Octavia", "list pools of "+lb.Name, err)
	}
	for _, l := range ls {
		listener := providers.Listener{Port: int32(l.ProtocolPort), Protocol: v1.Protocol(l.Protocol)}
		if p := poolOf(ps, l.ID); p != nil {
			mpages, err := pools.ListMembers(s.lb, p.ID, pools.ListMembersOpts{}).AllPages(ctx)
			if err != nil {
				return out, c.fail("Octavia", "list members of pool "+p.ID, err)
			}
			members, err := pools.ExtractMembers(mpages)
			if err != nil {
				return out, c.fail("Octavia", "list members of pool "+p.ID, err)
			}
			// Source-IP persistence keeps a client on its member. Octavia
			// gives no timeout for it on a TCP pool (persistence_timeout
			// is UDP's and SCTP's), so the harness cannot check one.
			if p.Persistence.Type == sourceIPPersistence {
				out.ClientAffinity = &providers.ClientAffinity{}
			}
			// A pool of protocol PROXY or PROXYV2 starts each connection
			// to a member with the PROXY protocol's header.
			switch p.Protocol {
			case "PROXY":
				out.ProxyProtocol = 1
			case "PROXYV2":
				out.ProxyProtocol = 2
			}
			httpMonitor := false
			if p.MonitorID != "" {
				m, err := monitors.Get(ctx, s.lb, p.MonitorID).Extract()
				if err != nil {
					return out, c.fail("Octavia", "get health monitor "+p.MonitorID, err)
				}
				httpMonitor = m.Type == "HTTP"
			}
			for _, m := range members {
				listener.NodePort = int32(m.ProtocolPort)
				if name, _ := nodeAt(owners, m.Address); !slices.Contains(out.Backends, name) {
					out.Backends = append(out.Backends, name)
				}
				// Octavia's monitor has no port: each member says where
				// it is checked, the health check node port.
				if httpMonitor && m.MonitorPort != 0 {
					out.HealthCheckNodePort = int32(m.MonitorPort)
				}
			}
		}
		for _, cidr := range l.AllowedCIDRs {
			if !allowsAll(cidr) && !slices.Contains(out.SourceRanges, cidr) {
				out.SourceRanges = append(out.SourceRanges, cidr)
			}
		}
		out.Listeners = append(out.Listeners, listener)
	}
	return out, nil
}

// sourceIPPersistence is the Octavia session persistence that keeps a
// client, by its address, on one member.
const sourceIPPersistence = "SOURCE_IP"

// poolOf is the pool listener sends to, or nil.
func poolOf(ps []pools.Pool, listener string) *pools.Pool {
	for i, p := range ps {
		if slices.ContainsFunc(p.Listeners, func(l pools.ListenerID) bool { return l.ID == listener }) {
			return &ps[i]
		}
	}
	return nil
}

// ServiceOf is the namespace/name a load balancer's name carries where
// the OpenStack CCM made it, or "": namespaces and Service names have no
// underscores, so the last two fields are theirs whatever the cluster is
// called.
func ServiceOf(lbName string) string {
	rest, ok := strings.CutPrefix(lbName, LBNamePrefix)
	if !ok {
		return ""
	}
	f := strings.Split(rest, "_")
	if len(f) < 3 {
		return ""
	}
	return f[len(f)-2] + "/" + f[len(f)-1]
}

// allowsAll reports whether an allowed CIDR admits every client: what the
// CCM sends for a Service without source ranges.
func allowsAll(cidr string) bool {
	p, err := netip.ParsePrefix(cidr)
	return err == nil && p.Bits() == 0
}
