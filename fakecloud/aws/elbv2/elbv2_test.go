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

package elbv2_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The AWS dialect is tested with aws-sdk-go-v2, the SDK the AWS CCM is
// built on: what it parses here, the CCM parses, and what it signs, the
// CCM signs. The tests drive the whole server (servertest), as the CCM
// does.

// TestNetworkLoadBalancer makes a network load balancer as the AWS CCM
// does, and checks the native load balancer fakecloud derives from it.
func TestNetworkLoadBalancer(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	ctx := context.Background()
	cl := elbv2.New(elbv2.Options{Region: "fake-region-1", BaseEndpoint: aws.String(f.URL + api.AWSPath + "elbv2/"), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, servertest.CloudToken, "")})

	_, err := cl.DescribeLoadBalancers(ctx, &elbv2.DescribeLoadBalancersInput{Names: []string{"n1"}})
	var notFound *elbv2types.LoadBalancerNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("DescribeLoadBalancers of none: %v, want LoadBalancerNotFound", err)
	}
	lb, err := cl.CreateLoadBalancer(ctx, &elbv2.CreateLoadBalancerInput{Name: aws.String("n1"), Type: elbv2types.LoadBalancerTypeEnumNetwork,
		SubnetMappings: []elbv2types.SubnetMapping{{SubnetId: aws.String(api.AWSSubnetID(0))}}, SecurityGroups: []string{},
		Tags: []elbv2types.Tag{{Key: aws.String("kubernetes.io/service-name"), Value: aws.String("ns/udp")}}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	n := lb.LoadBalancers[0]
	if n.State.Code != elbv2types.LoadBalancerStateEnumActive || aws.ToString(n.VpcId) != api.AWSVPCID || len(n.AvailabilityZones) != 1 ||
		!strings.HasSuffix(aws.ToString(n.DNSName), ".elb.fake-region-1.amazonaws.com") {
		t.Errorf("created %+v", n)
	}
	tg, err := cl.CreateTargetGroup(ctx, &elbv2.CreateTargetGroupInput{Name: aws.String("k8s-ns-udp-0123456789"), Protocol: elbv2types.ProtocolEnumUdp,
		Port: aws.Int32(30053), VpcId: aws.String(api.AWSVPCID), TargetType: elbv2types.TargetTypeEnumInstance,
		HealthCheckProtocol: elbv2types.ProtocolEnumHttp, HealthCheckPort: aws.String("31000"), HealthCheckPath: aws.String("/healthz")})
	if err != nil {
		t.Fatalf("CreateTargetGroup: %v", err)
	}
	tgArn := tg.TargetGroups[0].TargetGroupArn
	if _, err := cl.RegisterTargets(ctx, &elbv2.RegisterTargetsInput{TargetGroupArn: tgArn, Targets: []elbv2types.TargetDescription{{Id: aws.String(a.ID), Port: aws.Int32(30053)}}}); err != nil {
		t.Fatalf("RegisterTargets: %v", err)
	}
	listener, err := cl.CreateListener(ctx, &elbv2.CreateListenerInput{LoadBalancerArn: n.LoadBalancerArn, Port: aws.Int32(53), Protocol: elbv2types.ProtocolEnumUdp,
		DefaultActions: []elbv2types.Action{{Type: elbv2types.ActionTypeEnumForward, TargetGroupArn: tgArn}}})
	if err != nil {
		t.Fatalf("CreateListener: %v", err)
	}
	rule := []ec2types.IpPermission{{IpProtocol: aws.String("udp"), FromPort: aws.Int32(30053), ToPort: aws.Int32(30053),
		IpRanges: []ec2types.IpRange{{CidrIp: aws.String("10.0.0.0/8"), Description: aws.String("kubernetes.io/rule/nlb/client=n1")}}}}
	if _, err := f.EC2(servertest.CloudToken).AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(api.AWSNodeSecurityGroup), IpPermissions: rule}); err != nil {
		t.Fatalf("AuthorizeSecurityGroupIngress: %v", err)
	}
	got := f.AdminLB("n1")
	if got.Hostname != aws.ToString(n.DNSName) || len(got.Listeners) != 1 || got.Listeners[0].Protocol != api.ProtocolUDP || got.Listeners[0].Port != 53 ||
		got.Listeners[0].NodePort != 30053 || !slices.Equal(got.Backends, []string{a.ID}) || got.HealthCheckNodePort != 31000 ||
		!slices.Equal(got.SourceRanges, []string{"10.0.0.0/8"}) || got.Tags[api.TagService] != "ns/udp" {
		t.Errorf("fakecloud's load balancer %+v, want UDP 53->30053 to %s, health check 31000, source range 10.0.0.0/8, Service ns/udp", got, a.ID)
	}
	health, err := cl.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: tgArn})
	if err != nil || len(health.TargetHealthDescriptions) != 1 || health.TargetHealthDescriptions[0].TargetHealth.State != elbv2types.TargetHealthStateEnumHealthy {
		t.Errorf("DescribeTargetHealth: %v %+v, want the one target healthy", err, health)
	}
	if _, err := cl.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: tgArn}); servertest.AWSCode(err) != "ResourceInUse" {
		t.Errorf("DeleteTargetGroup in use: %v, want ResourceInUse", err)
	}
	if _, err := cl.DeleteListener(ctx, &elbv2.DeleteListenerInput{ListenerArn: listener.Listeners[0].ListenerArn}); err != nil {
		t.Fatalf("DeleteListener: %v", err)
	}
	if _, err := cl.DeleteLoadBalancer(ctx, &elbv2.DeleteLoadBalancerInput{LoadBalancerArn: n.LoadBalancerArn}); err != nil {
		t.Fatalf("DeleteLoadBalancer: %v", err)
	}
	if _, err := cl.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: tgArn}); err != nil {
		t.Errorf("DeleteTargetGroup: %v", err)
	}
}
