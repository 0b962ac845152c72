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
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// The AWS dialects' records are the cloud's (State), and so is what ties
// them together: a classic or network load balancer's spec is derived
// from its records, its target groups and the security groups it uses,
// and changes again when EC2 changes one of those groups. The fronts
// (EC2, ELB, ELBv2) call these rather than each other.

// ClusterTag marks what belongs to the cluster, as the AWS CCM expects of
// every instance, subnet, route table and security group it uses.
const ClusterTag = "kubernetes.io/cluster/" + api.AWSClusterID

// classicSpecLocked derives the native spec from the classic view.
func (s *Cloud) classicSpecLocked(e *ClassicLB) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{}, Backends: []string{}, Tags: map[string]string{}}
	for _, t := range e.Tags {
		if t.Key == "kubernetes.io/service-name" {
			spec.Tags[api.TagService] = t.Value
		}
	}
	// A classic load balancer carries every listener protocol over TCP.
	for _, l := range e.Listeners {
		spec.Listeners = append(spec.Listeners, api.Listener{Port: l.LoadBalancerPort, Protocol: api.ProtocolTCP, NodePort: l.InstancePort})
	}
	for _, id := range e.Instances {
		if s.instanceByIDLocked(id) != nil {
			spec.Backends = append(spec.Backends, id)
		}
	}
	if proto, rest, ok := strings.Cut(e.HealthCheck.Target, ":"); ok && (proto == "HTTP" || proto == "HTTPS") {
		port, _, _ := strings.Cut(rest, "/")
		if n, err := strconv.ParseInt(port, 10, 32); err == nil {
			spec.HealthCheckNodePort = int32(n)
		}
	}
	for _, id := range e.SecurityGroups {
		g := s.securityGroupLocked(id)
		if g == nil {
			continue
		}
		for _, p := range g.Ingress {
			if p.Protocol != "tcp" && p.Protocol != "6" && p.Protocol != "-1" {
				continue
			}
			for _, r := range p.Ranges {
				if !AllowsAll(r.CIDR) && !slices.Contains(spec.SourceRanges, r.CIDR) {
					spec.SourceRanges = append(spec.SourceRanges, r.CIDR)
				}
			}
		}
	}
	return spec, ValidateLBSpec(spec)
}

// classicRederiveLocked derives again the specs of the classic load balancers
// in security group id, whose rules changed.
func (s *Cloud) classicRederiveLocked(id string) error {
	return s.rederiveLocked(func(rec *LBRecord) (bool, api.LoadBalancerSpec, error) {
		if rec.ELB == nil || !slices.Contains(rec.ELB.SecurityGroups, id) {
			return false, api.LoadBalancerSpec{}, nil
		}
		spec, err := s.classicSpecLocked(rec.ELB)
		return true, spec, err
	})
}

// rederiveLocked gives each load balancer that derive takes a new spec,
// and opens its listeners to match, stopping at the first that fails.
func (s *Cloud) rederiveLocked(derive func(rec *LBRecord) (bool, api.LoadBalancerSpec, error)) error {
	for _, rec := range s.st.LoadBalancers {
		ok, spec, err := derive(rec)
		if !ok {
			continue
		}
		if err != nil {
			return err
		}
		upd := *rec
		upd.LoadBalancerSpec = spec
		if err := s.openLocked(&upd, false); err != nil {
			return err
		}
		*rec = upd
	}
	return nil
}

// targetGroupLocked is the target group of that ARN, or nil.
func (s *Cloud) targetGroupLocked(arn string) *TargetGroup {
	for _, tg := range s.st.TargetGroups {
		if tg.ARN == arn {
			return tg
		}
	}
	return nil
}

// networkClientRule is how the AWS CCM describes the nodes' group rules that
// admit a network load balancer's clients.
func networkClientRule(name string) string { return "kubernetes.io/rule/nlb/client=" + name }

// networkSpecLocked derives the native spec from the ELBv2 view.
func (s *Cloud) networkSpecLocked(name string, n *NetworkLB) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{}, Backends: []string{}, Tags: map[string]string{}}
	for _, t := range n.Tags {
		if t.Key == "kubernetes.io/service-name" {
			spec.Tags[api.TagService] = t.Value
		}
	}
	for _, l := range n.Listeners {
		tg := s.targetGroupLocked(l.TargetGroup)
		nodePort := int32(0)
		if tg != nil {
			nodePort = tg.Port
			for _, t := range tg.Targets {
				nodePort = t.Port
				if s.instanceByIDLocked(t.ID) != nil && !slices.Contains(spec.Backends, t.ID) {
					spec.Backends = append(spec.Backends, t.ID)
				}
			}
			if tg.HealthCheck.Protocol == "HTTP" || tg.HealthCheck.Protocol == "HTTPS" {
				if p, err := strconv.ParseInt(tg.HealthCheck.Port, 10, 32); err == nil {
					spec.HealthCheckNodePort = int32(p)
				}
			}
		}
		protocols := []string{l.Protocol}
		if l.Protocol == "TCP_UDP" {
			protocols = []string{"TCP", "UDP"}
		}
		for _, p := range protocols {
			proto := api.ProtocolTCP
			if p == "UDP" {
				proto = api.ProtocolUDP
			}
			spec.Listeners = append(spec.Listeners, api.Listener{Port: l.Port, Protocol: proto, NodePort: nodePort})
		}
	}
	if g := s.securityGroupLocked(api.AWSNodeSecurityGroup); g != nil {
		for _, p := range g.Ingress {
			for _, r := range p.Ranges {
				if r.Description == networkClientRule(name) && !AllowsAll(r.CIDR) && !slices.Contains(spec.SourceRanges, r.CIDR) {
					spec.SourceRanges = append(spec.SourceRanges, r.CIDR)
				}
			}
		}
	}
	return spec, ValidateLBSpec(spec)
}

// networkRederiveLocked derives again the specs of the network load
// balancers, after a change to a target group or the nodes' group.
func (s *Cloud) networkRederiveLocked() error {
	return s.rederiveLocked(func(rec *LBRecord) (bool, api.LoadBalancerSpec, error) {
		if rec.NLB == nil {
			return false, api.LoadBalancerSpec{}, nil
		}
		spec, err := s.networkSpecLocked(rec.Name, rec.NLB)
		return true, spec, err
	})
}

// NodeGroupName is the nodes' group's name.
const NodeGroupName = "ccm-harness-nodes"

// securityGroupsLocked are the security groups, the nodes' first, made on
// first use.
func (s *Cloud) securityGroupsLocked() []*SecurityGroup {
	if !slices.ContainsFunc(s.st.SecurityGroups, func(g *SecurityGroup) bool { return g.ID == api.AWSNodeSecurityGroup }) {
		s.st.SecurityGroups = append([]*SecurityGroup{{
			ID: api.AWSNodeSecurityGroup, Name: NodeGroupName, Description: "the cluster's nodes",
			Tags: []Tag{{Key: "Name", Value: NodeGroupName}, {Key: ClusterTag, Value: "owned"}},
		}}, s.st.SecurityGroups...)
	}
	return s.st.SecurityGroups
}

// securityGroupLocked is the security group of that ID, or nil.
func (s *Cloud) securityGroupLocked(id string) *SecurityGroup {
	for _, g := range s.securityGroupsLocked() {
		if g.ID == id {
			return g
		}
	}
	return nil
}
