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

package elb_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The AWS dialect is tested with aws-sdk-go-v2, the SDK the AWS CCM is
// built on: what it parses here, the CCM parses, and what it signs, the
// CCM signs. The tests drive the whole server (servertest), as the CCM
// does.

// TestClassicELB makes a classic load balancer as the AWS CCM does, and
// checks the native load balancer fakecloud derives from it.
func TestClassicELB(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	ctx := context.Background()
	cl, lb := f.EC2(servertest.CloudToken), f.ELB()

	sg, err := cl.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("k8s-elb-a1"), Description: aws.String("d"),
		VpcId: aws.String(api.AWSVPCID), TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/" + api.AWSClusterID), Value: aws.String("owned")}}}}})
	if err != nil {
		t.Fatalf("CreateSecurityGroup: %v", err)
	}
	rule := []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(80), ToPort: aws.Int32(80), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8")}}}}
	if _, err := cl.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: rule}); err != nil {
		t.Fatalf("AuthorizeSecurityGroupIngress: %v", err)
	}
	if _, err := cl.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: rule}); servertest.AWSCode(err) != "InvalidPermission.Duplicate" {
		t.Errorf("the same rule again: %v, want InvalidPermission.Duplicate", err)
	}
	nodeRule := []ec2types.IpPermission{{IpProtocol: aws.String("-1"), UserIdGroupPairs: []ec2types.UserIdGroupPair{{GroupId: sg.GroupId}}}}
	if _, err := cl.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(api.AWSNodeSecurityGroup), IpPermissions: nodeRule}); err != nil {
		t.Fatalf("AuthorizeSecurityGroupIngress of the nodes' group: %v", err)
	}
	groups, err := cl.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{{Name: aws.String("ip-permission.group-id"), Values: []string{aws.ToString(sg.GroupId)}}}})
	if err != nil || len(groups.SecurityGroups) != 1 || aws.ToString(groups.SecurityGroups[0].GroupId) != api.AWSNodeSecurityGroup ||
		groups.SecurityGroups[0].IpPermissions[0].FromPort != nil {
		t.Fatalf("groups referring to %s: %v %+v, want the nodes' group, its -1 rule without ports", aws.ToString(sg.GroupId), err, groups)
	}

	_, err = lb.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{"a1"}})
	if servertest.AWSCode(err) != "LoadBalancerNotFound" {
		t.Errorf("DescribeLoadBalancers of none: %v, want LoadBalancerNotFound", err)
	}
	subnet := []string{api.AWSSubnetID(0)}
	_, err = lb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("a1"), Listeners: []elbtypes.Listener{}, Subnets: subnet})
	if servertest.AWSCode(err) != "ValidationError" {
		t.Errorf("CreateLoadBalancer without listeners: %v, want ValidationError", err)
	}
	created, err := lb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("a1"), Subnets: subnet,
		SecurityGroups: []string{aws.ToString(sg.GroupId)},
		Listeners:      []elbtypes.Listener{{Protocol: aws.String("tcp"), LoadBalancerPort: 80, InstanceProtocol: aws.String("tcp"), InstancePort: aws.Int32(30080)}},
		Tags:           []elbtypes.Tag{{Key: aws.String("kubernetes.io/service-name"), Value: aws.String("ns/web")}}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	if _, err := lb.ConfigureHealthCheck(ctx, &elb.ConfigureHealthCheckInput{LoadBalancerName: aws.String("a1"), HealthCheck: &elbtypes.HealthCheck{
		Target: aws.String("HTTP:31000/healthz"), Interval: aws.Int32(10), Timeout: aws.Int32(5), HealthyThreshold: aws.Int32(2), UnhealthyThreshold: aws.Int32(6)}}); err != nil {
		t.Fatalf("ConfigureHealthCheck: %v", err)
	}
	if _, err := lb.RegisterInstancesWithLoadBalancer(ctx, &elb.RegisterInstancesWithLoadBalancerInput{LoadBalancerName: aws.String("a1"),
		Instances: []elbtypes.Instance{{InstanceId: aws.String(a.ID)}}}); err != nil {
		t.Fatalf("RegisterInstancesWithLoadBalancer: %v", err)
	}
	desc, err := lb.DescribeLoadBalancers(ctx, &elb.DescribeLoadBalancersInput{LoadBalancerNames: []string{"a1"}})
	if err != nil || len(desc.LoadBalancerDescriptions) != 1 {
		t.Fatalf("DescribeLoadBalancers: %v", err)
	}
	d := desc.LoadBalancerDescriptions[0]
	if aws.ToString(d.DNSName) != aws.ToString(created.DNSName) || !strings.HasSuffix(aws.ToString(d.DNSName), ".fake-region-1.elb.amazonaws.com") ||
		aws.ToString(d.HealthCheck.Target) != "HTTP:31000/healthz" || len(d.Instances) != 1 || len(d.ListenerDescriptions) != 1 {
		t.Errorf("described %+v", d)
	}

	got := f.AdminLB("a1")
	if got.Hostname != aws.ToString(created.DNSName) || len(got.Listeners) != 1 || got.Listeners[0].Port != 80 || got.Listeners[0].NodePort != 30080 ||
		!slices.Equal(got.Backends, []string{a.ID}) || got.HealthCheckNodePort != 31000 || !slices.Equal(got.SourceRanges, []string{"10.0.0.0/8"}) ||
		got.Tags[api.TagService] != "ns/web" {
		t.Errorf("fakecloud's load balancer %+v, want hostname %s, 80->30080, backend %s, health check 31000, source range 10.0.0.0/8, Service ns/web",
			got, aws.ToString(created.DNSName), a.ID)
	}
	if _, err := cl.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: rule}); err != nil {
		t.Fatalf("RevokeSecurityGroupIngress: %v", err)
	}
	if got := f.AdminLB("a1"); len(got.SourceRanges) != 0 {
		t.Errorf("source ranges %v after the rule was revoked, want none", got.SourceRanges)
	}
	if _, err := cl.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: sg.GroupId}); servertest.AWSCode(err) != "DependencyViolation" {
		t.Errorf("DeleteSecurityGroup in use: %v, want DependencyViolation", err)
	}
	if _, err := lb.DeleteLoadBalancer(ctx, &elb.DeleteLoadBalancerInput{LoadBalancerName: aws.String("a1")}); err != nil {
		t.Fatalf("DeleteLoadBalancer: %v", err)
	}
	if _, err := cl.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(api.AWSNodeSecurityGroup), IpPermissions: nodeRule}); err != nil {
		t.Fatalf("RevokeSecurityGroupIngress of the nodes' group: %v", err)
	}
	if _, err := cl.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: sg.GroupId}); err != nil {
		t.Errorf("DeleteSecurityGroup: %v", err)
	}
}

// A classic load balancer in a VPC listens on any port from 1 to 65535
// (the API reference's Listener: the list of 25, 80, 443, 465, 587 and
// 1024-65535 was EC2-Classic's, retired in 2022). Kubernetes' own
// load-balancer e2e changes a Service's port from 80 to 81, which the AWS
// CCM makes a listener of.
func TestClassicELBListenerPorts(t *testing.T) {
	f := servertest.New(t, server.Config{})
	ctx := context.Background()
	lb := f.ELB()
	listener := func(port int32) []elbtypes.Listener {
		return []elbtypes.Listener{{Protocol: aws.String("tcp"), LoadBalancerPort: port, InstanceProtocol: aws.String("tcp"), InstancePort: aws.Int32(30080)}}
	}
	if _, err := lb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("a1"), Subnets: []string{api.AWSSubnetID(0)}, Listeners: listener(80)}); err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	for _, port := range []int32{81, 22, 1, 65535} {
		if _, err := lb.CreateLoadBalancerListeners(ctx, &elb.CreateLoadBalancerListenersInput{LoadBalancerName: aws.String("a1"), Listeners: listener(port)}); err != nil {
			t.Errorf("CreateLoadBalancerListeners on port %d: %v, want it made (a VPC's load balancer listens on 1 to 65535)", port, err)
		}
	}
	for _, port := range []int32{0, 65536} {
		if _, err := lb.CreateLoadBalancerListeners(ctx, &elb.CreateLoadBalancerListenersInput{LoadBalancerName: aws.String("a1"), Listeners: listener(port)}); servertest.AWSCode(err) != "ValidationError" {
			t.Errorf("CreateLoadBalancerListeners on port %d: %v, want ValidationError", port, err)
		}
	}
}
