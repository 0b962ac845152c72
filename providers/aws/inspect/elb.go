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
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	v1 "k8s.io/api/core/v1"

	"sigs.k8s.io/ccm-harness/providers"
)

// classic are the classic load balancers (Elastic Load Balancing): a
// listener per port, over TCP whatever its protocol says, to the instance
// port (the node port); the registered instances; the health check's
// port where it is HTTP; the source ranges of its security groups.
func (c *Cloud) classic(ctx context.Context, names map[string]string) ([]providers.LoadBalancer, error) {
	var descs []elbtypes.LoadBalancerDescription
	p := elb.NewDescribeLoadBalancersPaginator(c.elb, &elb.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.fail("Elastic Load Balancing", "DescribeLoadBalancers", err)
		}
		descs = append(descs, page.LoadBalancerDescriptions...)
	}
	tags := map[string][]elbtypes.Tag{}
	for batch := range slices.Chunk(descs, 20) {
		var lbNames []string
		for _, d := range batch {
			lbNames = append(lbNames, aws.ToString(d.LoadBalancerName))
		}
		out, err := c.elb.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: lbNames})
		if err != nil {
			return nil, c.fail("Elastic Load Balancing", "DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			tags[aws.ToString(td.LoadBalancerName)] = td.Tags
		}
	}
	groups := map[string]ec2types.SecurityGroup{}
	if len(descs) > 0 {
		var err error
		if groups, err = c.groups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
			return nil, err
		}
	}
	var out []providers.LoadBalancer
	for _, d := range descs {
		name := aws.ToString(d.LoadBalancerName)
		lb := providers.LoadBalancer{Name: name, Hostname: aws.ToString(d.DNSName), IP: c.resolve(ctx, aws.ToString(d.DNSName))}
		for _, t := range tags[name] {
			if aws.ToString(t.Key) == TagServiceName {
				lb.Service = aws.ToString(t.Value)
			}
		}
		for _, l := range d.ListenerDescriptions {
			if l.Listener == nil {
				continue
			}
			lb.Listeners = append(lb.Listeners, providers.Listener{Port: l.Listener.LoadBalancerPort, Protocol: v1.ProtocolTCP, NodePort: aws.ToInt32(l.Listener.InstancePort)})
		}
		for _, inst := range d.Instances {
			lb.Backends = append(lb.Backends, nameOf(names, aws.ToString(inst.InstanceId)))
		}
		if d.HealthCheck != nil {
			if proto, rest, ok := strings.Cut(aws.ToString(d.HealthCheck.Target), ":"); ok {
				port, _, _ := strings.Cut(rest, "/")
				lb.HealthCheckNodePort = httpPort(proto, port)
			}
		}
		var own []ec2types.SecurityGroup
		for _, id := range d.SecurityGroups {
			if g, ok := groups[id]; ok {
				own = append(own, g)
			}
		}
		// A classic load balancer's clients come over TCP, whatever its
		// listeners' protocols say.
		lb.SourceRanges = sourceRanges(own, func(proto string, _ ec2types.IpRange) bool {
			return proto == "tcp" || proto == "6" || proto == "-1"
		})
		out = append(out, lb)
	}
	return out, nil
}

// groups are the security groups of the region, by ID: read whole, so
// that a group deleted with its load balancer meanwhile is missing from
// the answer rather than an error.
func (c *Cloud) groups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput) (map[string]ec2types.SecurityGroup, error) {
	out := map[string]ec2types.SecurityGroup{}
	p := ec2.NewDescribeSecurityGroupsPaginator(c.ec2, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.fail("EC2", "DescribeSecurityGroups", err)
		}
		for _, g := range page.SecurityGroups {
			out[aws.ToString(g.GroupId)] = g
		}
	}
	return out, nil
}

// sourceRanges are the CIDRs the groups' rules admit that keep is about
// (by the rule's protocol and the range), but "everyone".
func sourceRanges(groups []ec2types.SecurityGroup, keep func(proto string, r ec2types.IpRange) bool) []string {
	var ranges []string
	for _, g := range groups {
		for _, perm := range g.IpPermissions {
			for _, r := range perm.IpRanges {
				cidr := aws.ToString(r.CidrIp)
				if keep(aws.ToString(perm.IpProtocol), r) && !allowsAll(cidr) && !slices.Contains(ranges, cidr) {
					ranges = append(ranges, cidr)
				}
			}
		}
	}
	return ranges
}

// network are the network load balancers (Elastic Load Balancing v2): a
// listener per port and protocol (TCP_UDP is both), to its target group's
// port on the targets (the node port); the targets; the target group's
// health check port where it is HTTP; the source ranges the CCM admits in
// the nodes' security groups, in rules it describes as this load
// balancer's clients.
func (c *Cloud) network(ctx context.Context, names map[string]string) ([]providers.LoadBalancer, error) {
	var lbs []elbv2types.LoadBalancer
	p := elbv2.NewDescribeLoadBalancersPaginator(c.elbv2, &elbv2.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.fail("Elastic Load Balancing v2", "DescribeLoadBalancers", err)
		}
		for _, lb := range page.LoadBalancers {
			if lb.Type == elbv2types.LoadBalancerTypeEnumNetwork {
				lbs = append(lbs, lb)
			}
		}
	}
	if len(lbs) == 0 {
		return nil, nil
	}
	tags := map[string][]elbv2types.Tag{}
	for batch := range slices.Chunk(lbs, 20) {
		var arns []string
		for _, lb := range batch {
			arns = append(arns, aws.ToString(lb.LoadBalancerArn))
		}
		out, err := c.elbv2.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
		if err != nil {
			return nil, c.fail("Elastic Load Balancing v2", "DescribeTags", err)
		}
		for _, td := range out.TagDescriptions {
			tags[aws.ToString(td.ResourceArn)] = td.Tags
		}
	}
	var out []providers.LoadBalancer
	for _, l := range lbs {
		arn, name := aws.ToString(l.LoadBalancerArn), aws.ToString(l.LoadBalancerName)
		lb := providers.LoadBalancer{Name: name, Hostname: aws.ToString(l.DNSName), IP: c.resolve(ctx, aws.ToString(l.DNSName))}
		lb.Service, _ = tagged(tags[arn], TagServiceName)
		listeners, err := c.elbv2.DescribeListeners(ctx, &elbv2.DescribeListenersInput{LoadBalancerArn: l.LoadBalancerArn})
		if err != nil {
			return nil, c.fail("Elastic Load Balancing v2", "DescribeListeners", err)
		}
		for _, ls := range listeners.Listeners {
			nodePort := int32(0)
			if tg := forwardsTo(ls); tg != "" {
				groups, err := c.elbv2.DescribeTargetGroups(ctx, &elbv2.DescribeTargetGroupsInput{TargetGroupArns: []string{tg}})
				if err != nil {
					return nil, c.fail("Elastic Load Balancing v2", "DescribeTargetGroups", err)
				}
				for _, g := range groups.TargetGroups {
					nodePort = aws.ToInt32(g.Port)
					if hc := httpPort(string(g.HealthCheckProtocol), aws.ToString(g.HealthCheckPort)); hc != 0 {
						lb.HealthCheckNodePort = hc
					}
				}
				health, err := c.elbv2.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: aws.String(tg)})
				if err != nil {
					return nil, c.fail("Elastic Load Balancing v2", "DescribeTargetHealth", err)
				}
				for _, h := range health.TargetHealthDescriptions {
					if h.Target == nil {
						continue
					}
					nodePort = aws.ToInt32(h.Target.Port)
					if n := nameOf(names, aws.ToString(h.Target.Id)); !slices.Contains(lb.Backends, n) {
						lb.Backends = append(lb.Backends, n)
					}
				}
			}
			protocols := []v1.Protocol{v1.Protocol(ls.Protocol)}
			if ls.Protocol == elbv2types.ProtocolEnumTcpUdp {
				protocols = []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP}
			}
			for _, proto := range protocols {
				lb.Listeners = append(lb.Listeners, providers.Listener{Port: aws.ToInt32(ls.Port), Protocol: proto, NodePort: nodePort})
			}
		}
		ranges, err := c.clientRanges(ctx, l.VpcId, name)
		if err != nil {
			return nil, err
		}
		lb.SourceRanges = ranges
		out = append(out, lb)
	}
	return out, nil
}

// forwardsTo is the target group a listener forwards to, or "".
func forwardsTo(l elbv2types.Listener) string {
	for _, a := range l.DefaultActions {
		if a.Type == elbv2types.ActionTypeEnumForward && a.TargetGroupArn != nil {
			return aws.ToString(a.TargetGroupArn)
		}
	}
	return ""
}

// clientRanges are the CIDRs the security groups of the load balancer's
// VPC admit in rules the CCM describes as the load balancer's clients: a
// network load balancer has no security group of its own (as the CCM
// makes it), its clients reach the nodes directly.
func (c *Cloud) clientRanges(ctx context.Context, vpc *string, lbName string) ([]string, error) {
	in := &ec2.DescribeSecurityGroupsInput{}
	if vpc != nil {
		in.Filters = []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{aws.ToString(vpc)}}}
	}
	groups, err := c.groups(ctx, in)
	if err != nil {
		return nil, err
	}
	all := make([]ec2types.SecurityGroup, 0, len(groups))
	for _, g := range groups {
		all = append(all, g)
	}
	return sourceRanges(all, func(_ string, r ec2types.IpRange) bool {
		return aws.ToString(r.Description) == nlbClientRulePrefix+lbName
	}), nil
}
