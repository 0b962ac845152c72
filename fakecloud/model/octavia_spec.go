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

package model

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// The Octavia tree's meaning in the cloud: what Octavia refuses of it,
// what an ignore fault leaves of a change to it, and the native spec
// derived from it, which the inspector, the data plane and the faults
// work on as on a native load balancer's.

// serviceOfLBName is the namespace/name a load balancer's name carries
// when the OpenStack CCM made it: kube_service_<cluster>_<ns>_<name>.
// Namespaces and Service names have no underscores, so the last two
// fields are theirs whatever the cluster is called.
func serviceOfLBName(name string) string {
	rest, ok := strings.CutPrefix(name, "kube_service_")
	if !ok {
		return ""
	}
	f := strings.Split(rest, "_")
	if len(f) < 3 {
		return ""
	}
	return f[len(f)-2] + "/" + f[len(f)-1]
}

// octaviaSpecLocked derives the native spec from the Octavia view: a
// listener's node port is its pool's members' port, the backends are the
// instances whose InternalIP the members name, the health check node port
// is the members' monitor port under an HTTP monitor, the source ranges
// are the listeners' allowed_cidrs, and a PROXY or PROXYV2 pool is the
// PROXY protocol of version 1 or 2.
//
// Octavia keeps a member it cannot reach (its monitor marks it ERROR), and
// so does fakecloud: a member of a terminated instance stays that
// instance's backend, one of no instance's address is a backend named by
// the address, and both forward nothing (as a next hop no instance has
// is a blackhole route). Refusing them instead would refuse every later
// change of the load balancer, the one that removes them too.
func (s *Cloud) octaviaSpecLocked(name string, o *OctaviaLB) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{}, Backends: []string{}, Tags: map[string]string{api.TagService: serviceOfLBName(name)}}
	byAddr := map[string]string{}
	for _, inst := range s.st.Instances {
		ip := FirstInternalIP(inst)
		if !ip.IsValid() {
			continue
		}
		// A running instance's address is its own, whichever terminated
		// one had it before.
		if _, taken := byAddr[ip.String()]; !taken || inst.State != api.StateTerminated {
			byAddr[ip.String()] = inst.ID
		}
	}
	for _, l := range o.Listeners {
		out := api.Listener{Port: int32(l.ProtocolPort), Protocol: api.Protocol(l.Protocol)}
		if p := o.PoolOf(l.ID); p != nil {
			for _, m := range p.Members {
				addr, err := netip.ParseAddr(m.Address)
				if err != nil {
					return spec, fmt.Errorf("member %s address %q is not an IP address", m.ID, m.Address)
				}
				id, ok := byAddr[addr.Unmap().String()]
				if !ok {
					id = addr.Unmap().String()
				}
				out.NodePort = int32(m.ProtocolPort)
				if !slices.Contains(spec.Backends, id) {
					spec.Backends = append(spec.Backends, id)
				}
				if p.Monitor != nil && p.Monitor.Type == "HTTP" && m.MonitorPort != nil {
					spec.HealthCheckNodePort = int32(*m.MonitorPort)
				}
			}
			if p.Persistence != nil && p.Persistence.Type == OctaviaSourceIP {
				// An amphora's stick table has no expiry: a client keeps
				// its member until the table fills. The longest affinity
				// fakecloud has stands for that.
				spec.ClientAffinitySeconds = MaxClientAffinitySeconds
			}
			// The native spec has one PROXY protocol version for the
			// whole load balancer, where Octavia has one per pool; the
			// OpenStack CCM gives every pool the same, and the newer
			// version stands for a mix.
			switch {
			case p.Protocol == OctaviaProxyV2:
				spec.ProxyProtocol = 2
			case p.Protocol == OctaviaProxy && spec.ProxyProtocol == 0:
				spec.ProxyProtocol = 1
			}
		}
		for _, c := range l.AllowedCIDRs {
			if !AllowsAll(c) && !slices.Contains(spec.SourceRanges, c) {
				spec.SourceRanges = append(spec.SourceRanges, c)
			}
		}
		spec.Listeners = append(spec.Listeners, out)
	}
	return spec, ValidateLBSpec(spec)
}

// octaviaIgnore undoes, in next, the part of a change an ignore fault
// drops: the request succeeds, the cloud keeps what it had.
func octaviaIgnore(f *api.Fault, before, next *OctaviaLB) {
	if f == nil || f.Kind != api.FaultIgnore {
		return
	}
	prevPool := func(id string) *OctaviaPool {
		if before == nil {
			return nil
		}
		return before.Pool(id)
	}
	switch f.Field {
	case api.IgnoreListeners:
		next.Listeners = nil
		if before != nil {
			next.Listeners = before.Clone().Listeners
		}
		next.Pools = slices.DeleteFunc(next.Pools, func(p *OctaviaPool) bool { return next.Listener(p.ListenerID) == nil })
	case api.IgnoreBackends:
		for _, p := range next.Pools {
			p.Members = nil
			if old := prevPool(p.ID); old != nil {
				p.Members = old.Members
			}
		}
	case api.IgnoreSourceRanges:
		for _, l := range next.Listeners {
			l.AllowedCIDRs = nil
			if before != nil && before.Listener(l.ID) != nil {
				l.AllowedCIDRs = before.Listener(l.ID).AllowedCIDRs
			}
		}
	case api.IgnoreHealthCheck:
		for _, p := range next.Pools {
			old := prevPool(p.ID)
			p.Monitor = nil
			if old != nil {
				p.Monitor = old.Monitor
			}
			for i := range p.Members {
				p.Members[i].MonitorPort = nil
				if old != nil {
					if j := slices.IndexFunc(old.Members, func(m OctaviaMember) bool { return m.ID == p.Members[i].ID }); j >= 0 {
						p.Members[i].MonitorPort = old.Members[j].MonitorPort
					}
				}
			}
		}
	}
}

// validateOctavia checks what Octavia checks of the objects themselves,
// in its words: they are what an Octavia client is answered.
func validateOctavia(o *OctaviaLB) error {
	seen := map[string]bool{}
	for _, l := range o.Listeners {
		if l.ProtocolPort < 1 || l.ProtocolPort > 65535 {
			return Errorf(KindInvalid, "Invalid input for field/attribute protocol_port. Value: '%d'. Value must be between 1 and 65535.", l.ProtocolPort)
		}
		k := fmt.Sprintf("%s/%d", l.Protocol, l.ProtocolPort)
		if seen[k] {
			return Errorf(KindInvalid, "Another Listener on this Load Balancer is already using protocol %s and protocol_port %d", l.Protocol, l.ProtocolPort)
		}
		seen[k] = true
	}
	for _, p := range o.Pools {
		if !slices.Contains(octaviaPoolProtocols, p.Protocol) {
			return Errorf(KindInvalid, "Invalid input for field/attribute protocol. Value: '%s'. Value should be one of: %s", p.Protocol, strings.Join(octaviaPoolProtocols, ", "))
		}
		if l := o.Listener(p.ListenerID); l != nil && !slices.Contains(octaviaListenerPools[l.Protocol], p.Protocol) {
			return Errorf(KindInvalid, "Validation failure: The pool protocol '%s' is invalid while the listener protocol is '%s'.", p.Protocol, l.Protocol)
		}
		if ps := p.Persistence; ps != nil {
			if !slices.Contains(octaviaPersistenceTypes, ps.Type) {
				return Errorf(KindInvalid, "Invalid input for field/attribute type. Value: '%s'. Value should be one of: %s", ps.Type, strings.Join(octaviaPersistenceTypes, ", "))
			}
			if ps.Type == "APP_COOKIE" && ps.CookieName == "" {
				return Errorf(KindInvalid, "Validation failure: Field cookie_name must be specified for session persistence type APP_COOKIE.")
			}
		}
		for _, m := range p.Members {
			if m.ProtocolPort < 1 || m.ProtocolPort > 65535 {
				return Errorf(KindInvalid, "Invalid input for field/attribute protocol_port. Value: '%d'. Value must be between 1 and 65535.", m.ProtocolPort)
			}
			if m.MonitorPort != nil && (*m.MonitorPort < 1 || *m.MonitorPort > 65535) {
				return Errorf(KindInvalid, "Invalid input for field/attribute monitor_port. Value: '%d'. Value must be between 1 and 65535.", *m.MonitorPort)
			}
		}
		if m := p.Monitor; m != nil && m.Timeout > m.Delay {
			return Errorf(KindInvalid, "Validation failure: The request timeout value must be less than or equal to the delay value.")
		}
	}
	return nil
}
