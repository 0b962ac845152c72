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

package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/smithy-go"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// The AWS dialect is tested with aws-sdk-go-v2, the SDK the AWS CCM is
// built on: what it parses here, the CCM parses, and what it signs, the
// CCM signs.

func (f *fixture) ec2(secret string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       "fake-region-1",
		BaseEndpoint: aws.String(f.url + api.AWSPath + "ec2/"),
		Credentials:  credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, secret, ""),
		// One attempt: a test of an error wants the error, not retries.
		RetryMaxAttempts: 1,
	})
}

func awsCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestEC2DescribeInstances(t *testing.T) {
	f := newFixture(t, Config{})
	a, b := f.create("node-a"), f.create("node-b")
	ctx := context.Background()
	cl := f.ec2(cloudToken)

	out, err := cl.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("private-dns-name"), Values: []string{"node-b"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopped"}},
	}})
	if err != nil {
		t.Fatalf("DescribeInstances by private DNS name: %v", err)
	}
	if len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		t.Fatalf("DescribeInstances by private DNS name node-b: %d reservations, want one instance", len(out.Reservations))
	}
	inst := out.Reservations[0].Instances[0]
	if aws.ToString(inst.InstanceId) != b.ID || aws.ToString(inst.PrivateDnsName) != "node-b" ||
		string(inst.InstanceType) != b.InstanceType || aws.ToString(inst.Placement.AvailabilityZone) != b.Zone {
		t.Errorf("instance %s %s %s %s, want %s node-b %s %s", aws.ToString(inst.InstanceId), aws.ToString(inst.PrivateDnsName),
			inst.InstanceType, aws.ToString(inst.Placement.AvailabilityZone), b.ID, b.InstanceType, b.Zone)
	}
	var private []string
	for _, ip := range inst.NetworkInterfaces[0].PrivateIpAddresses {
		private = append(private, aws.ToString(ip.PrivateIpAddress))
	}
	var want []string
	for _, addr := range b.Addresses {
		if addr.Type == api.AddressInternalIP {
			want = append(want, addr.Address)
		}
	}
	if !slices.Equal(private, want) || inst.NetworkInterfaces[0].Status != ec2types.NetworkInterfaceStatusInUse {
		t.Errorf("private addresses %v (%s), want %v in use", private, inst.NetworkInterfaces[0].Status, want)
	}
	if aws.ToString(inst.PublicIpAddress) == "" || !slices.ContainsFunc(inst.Tags, func(tg ec2types.Tag) bool {
		return aws.ToString(tg.Key) == "kubernetes.io/cluster/"+api.AWSClusterID
	}) {
		t.Errorf("instance has public address %q and tags %v, want an address and the cluster tag", aws.ToString(inst.PublicIpAddress), inst.Tags)
	}

	// By ID; an unknown ID is EC2's InvalidInstanceID.NotFound.
	out, err = cl.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{a.ID}})
	if err != nil || len(out.Reservations) != 1 || aws.ToString(out.Reservations[0].Instances[0].InstanceId) != a.ID {
		t.Fatalf("DescribeInstances %s: %v", a.ID, err)
	}
	_, err = cl.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	if awsCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("DescribeInstances of an unknown ID: %v, want InvalidInstanceID.NotFound", err)
	}

	// A terminated instance is still listed, terminated, without network.
	f.must(http.StatusOK, http.MethodPost, api.AdminPathInstance+a.ID+"/terminate", adminToken, nil, nil)
	out, err = cl.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Reservations[0].Instances[0]; got.State.Name != ec2types.InstanceStateNameTerminated || aws.ToString(got.PrivateDnsName) != "" {
		t.Errorf("terminated instance: state %s, private DNS name %q; want terminated, none", got.State.Name, aws.ToString(got.PrivateDnsName))
	}

	// Pages, as the CCM asks for them.
	for i := range 6 {
		f.create("page-" + string(rune('a'+i)))
	}
	var seen int
	p := ec2.NewDescribeInstancesPaginator(cl, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen += len(page.Reservations)
	}
	if seen != 8 {
		t.Errorf("paged through %d instances, want 8", seen)
	}

	// A filter EC2 has not for instances is refused, not ignored.
	_, err = cl.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("colour"), Values: []string{"x"}}}})
	if awsCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: %v, want InvalidParameterValue", err)
	}
}

func TestEC2Signature(t *testing.T) {
	f := newFixture(t, Config{})
	_, err := f.ec2("not-"+cloudToken).DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	if awsCode(err) != "AuthFailure" {
		t.Errorf("wrong secret key: %v, want AuthFailure", err)
	}
	cl := ec2.New(ec2.Options{Region: "fake-region-1", BaseEndpoint: aws.String(f.url + api.AWSPath + "ec2/"), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIAOTHERKEY00000000", cloudToken, "")})
	if _, err = cl.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{}); awsCode(err) != "AuthFailure" {
		t.Errorf("unknown access key: %v, want AuthFailure", err)
	}
	zones, err := f.ec2(cloudToken).DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(zones.AvailabilityZones) != 3 || aws.ToString(zones.AvailabilityZones[0].ZoneId) != "fr1-az1" {
		t.Errorf("zones %+v, want fake-region-1's three, the first fr1-az1", zones.AvailabilityZones)
	}
	_, err = f.ec2(cloudToken).DescribeInstanceTopology(context.Background(), &ec2.DescribeInstanceTopologyInput{})
	if awsCode(err) != "UnsupportedOperation" {
		t.Errorf("DescribeInstanceTopology: %v, want UnsupportedOperation", err)
	}
}

// TestEC2SignedAsBotocore sends a query as the AWS CLI (botocore) signs
// it: content-type, host and x-amz-date, not content-length as the Go SDK
// does. AWS takes any set of signed headers that holds host.
func TestEC2SignedAsBotocore(t *testing.T) {
	f := newFixture(t, Config{})
	send := func(secret string, tamper func(*http.Request)) *http.Response {
		t.Helper()
		body := "Action=DescribeAvailabilityZones&Version=2016-11-15"
		req, err := http.NewRequest(http.MethodPost, f.url+api.AWSPath+"ec2/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		sum := sha256.Sum256([]byte(body))
		creds := aws.Credentials{AccessKeyID: api.AWSAccessKeyID, SecretAccessKey: secret}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "ec2", "fake-region-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		if auth := req.Header.Get("Authorization"); !strings.Contains(auth, "SignedHeaders=content-type;host;x-amz-date,") {
			t.Fatalf("signed as %q, want botocore's headers", auth)
		}
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		if tamper != nil {
			tamper(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := send(cloudToken, nil); resp.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(resp.Body)
		t.Errorf("signed as botocore signs: %s\n%s", resp.Status, out)
	}
	for name, r := range map[string]*http.Response{
		"wrong secret key":      send("not-"+cloudToken, nil),
		"signed header changed": send(cloudToken, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }),
	} {
		out, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(string(out), "<Code>AuthFailure</Code>") {
			t.Errorf("%s: %s\n%s, want 401 AuthFailure", name, r.Status, out)
		}
	}
}

func TestEC2Routes(t *testing.T) {
	f := newFixture(t, Config{})
	a := f.create("node-a")
	ctx := context.Background()
	cl := f.ec2(cloudToken)
	table := aws.String(api.AWSRouteTable)
	if _, err := cl.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a.ID),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Fatalf("ModifyInstanceAttribute: %v", err)
	}
	if _, err := cl.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: table, DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(a.ID)}); err != nil {
		t.Fatalf("CreateRoute: %v", err)
	}
	_, err := cl.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: table, DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(a.ID)})
	if awsCode(err) != "RouteAlreadyExists" {
		t.Errorf("CreateRoute again: %v, want RouteAlreadyExists", err)
	}
	var routes []api.Route
	f.must(http.StatusOK, http.MethodGet, api.AdminPathRoutes, adminToken, nil, &struct {
		Routes *[]api.Route `json:"routes"`
	}{&routes})
	if len(routes) != 1 || routes[0].TargetInstance != a.ID || routes[0].DestinationCIDR != "10.244.1.0/24" {
		t.Errorf("fakecloud's routes %+v, want 10.244.1.0/24 to %s", routes, a.ID)
	}
	f.must(http.StatusOK, http.MethodPost, api.AdminPathInstance+a.ID+"/terminate", adminToken, nil, nil)
	tables, err := cl.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/" + api.AWSClusterID}}}})
	if err != nil {
		t.Fatalf("DescribeRouteTables: %v", err)
	}
	if len(tables.RouteTables) != 1 {
		t.Fatalf("DescribeRouteTables: %d tables, want the cluster's one", len(tables.RouteTables))
	}
	rts := tables.RouteTables[0].Routes
	if len(rts) != 3 || aws.ToString(rts[0].GatewayId) != "local" || !strings.HasPrefix(aws.ToString(rts[1].GatewayId), "igw-") ||
		rts[2].State != ec2types.RouteStateBlackhole || aws.ToString(rts[2].InstanceId) != a.ID {
		t.Errorf("routes %+v, want the local route, the internet gateway's and a blackhole to %s", rts, a.ID)
	}
	if _, err := cl.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: table, DestinationCidrBlock: aws.String("10.244.1.0/24")}); err != nil {
		t.Fatalf("DeleteRoute: %v", err)
	}
	_, err = cl.DeleteRoute(ctx, &ec2.DeleteRouteInput{RouteTableId: table, DestinationCidrBlock: aws.String("10.244.1.0/24")})
	if awsCode(err) != "InvalidRoute.NotFound" || !strings.Contains(err.Error(), "10.244.1.0/24") {
		t.Errorf("DeleteRoute again: %v, want InvalidRoute.NotFound", err)
	}
}

func (f *fixture) elb() *elb.Client {
	return elb.New(elb.Options{
		Region:           "fake-region-1",
		BaseEndpoint:     aws.String(f.url + api.AWSPath + "elb/"),
		Credentials:      credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, cloudToken, ""),
		RetryMaxAttempts: 1,
	})
}

// TestClassicELB makes a classic load balancer as the AWS CCM does, and
// checks the native load balancer fakecloud derives from it.
func TestClassicELB(t *testing.T) {
	f := newFixture(t, Config{})
	a := f.create("node-a")
	ctx := context.Background()
	cl, lb := f.ec2(cloudToken), f.elb()

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
	if _, err := cl.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: rule}); awsCode(err) != "InvalidPermission.Duplicate" {
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
	if awsCode(err) != "LoadBalancerNotFound" {
		t.Errorf("DescribeLoadBalancers of none: %v, want LoadBalancerNotFound", err)
	}
	subnet := []string{api.AWSSubnetID(0)}
	_, err = lb.CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("a1"), Listeners: []elbtypes.Listener{}, Subnets: subnet})
	if awsCode(err) != "ValidationError" {
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

	got := f.adminLB("a1")
	if got.Hostname != aws.ToString(created.DNSName) || len(got.Listeners) != 1 || got.Listeners[0].Port != 80 || got.Listeners[0].NodePort != 30080 ||
		!slices.Equal(got.Backends, []string{a.ID}) || got.HealthCheckNodePort != 31000 || !slices.Equal(got.SourceRanges, []string{"10.0.0.0/8"}) ||
		got.Tags[api.TagService] != "ns/web" {
		t.Errorf("fakecloud's load balancer %+v, want hostname %s, 80->30080, backend %s, health check 31000, source range 10.0.0.0/8, Service ns/web",
			got, aws.ToString(created.DNSName), a.ID)
	}
	if _, err := cl.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: sg.GroupId, IpPermissions: rule}); err != nil {
		t.Fatalf("RevokeSecurityGroupIngress: %v", err)
	}
	if got := f.adminLB("a1"); len(got.SourceRanges) != 0 {
		t.Errorf("source ranges %v after the rule was revoked, want none", got.SourceRanges)
	}
	if _, err := cl.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: sg.GroupId}); awsCode(err) != "DependencyViolation" {
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

// TestNetworkLoadBalancer makes a network load balancer as the AWS CCM
// does, and checks the native load balancer fakecloud derives from it.
func TestNetworkLoadBalancer(t *testing.T) {
	f := newFixture(t, Config{})
	a := f.create("node-a")
	ctx := context.Background()
	cl := elbv2.New(elbv2.Options{Region: "fake-region-1", BaseEndpoint: aws.String(f.url + api.AWSPath + "elbv2/"), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, cloudToken, "")})

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
	if _, err := f.ec2(cloudToken).AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(api.AWSNodeSecurityGroup), IpPermissions: rule}); err != nil {
		t.Fatalf("AuthorizeSecurityGroupIngress: %v", err)
	}
	got := f.adminLB("n1")
	if got.Hostname != aws.ToString(n.DNSName) || len(got.Listeners) != 1 || got.Listeners[0].Protocol != api.ProtocolUDP || got.Listeners[0].Port != 53 ||
		got.Listeners[0].NodePort != 30053 || !slices.Equal(got.Backends, []string{a.ID}) || got.HealthCheckNodePort != 31000 ||
		!slices.Equal(got.SourceRanges, []string{"10.0.0.0/8"}) || got.Tags[api.TagService] != "ns/udp" {
		t.Errorf("fakecloud's load balancer %+v, want UDP 53->30053 to %s, health check 31000, source range 10.0.0.0/8, Service ns/udp", got, a.ID)
	}
	health, err := cl.DescribeTargetHealth(ctx, &elbv2.DescribeTargetHealthInput{TargetGroupArn: tgArn})
	if err != nil || len(health.TargetHealthDescriptions) != 1 || health.TargetHealthDescriptions[0].TargetHealth.State != elbv2types.TargetHealthStateEnumHealthy {
		t.Errorf("DescribeTargetHealth: %v %+v, want the one target healthy", err, health)
	}
	if _, err := cl.DeleteTargetGroup(ctx, &elbv2.DeleteTargetGroupInput{TargetGroupArn: tgArn}); awsCode(err) != "ResourceInUse" {
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

// TestEC2FaultTargetsItsInstance: a fault about one instance fires on the
// calls that answer it, not on a lookup of another by private DNS name.
func TestEC2FaultTargetsItsInstance(t *testing.T) {
	f := newFixture(t, Config{})
	f.create("node-a")
	f.create("node-b")
	f.addFault(api.Fault{Operation: api.OpListInstances, Instance: "node-a", Kind: api.FaultError, Status: 503})
	cl := f.ec2(cloudToken)
	byName := func(name string) error {
		_, err := cl.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			{Name: aws.String("private-dns-name"), Values: []string{name}}}})
		return err
	}
	if err := byName("node-b"); err != nil {
		t.Errorf("looking up node-b with a fault about node-a: %v, want no error", err)
	}
	if err := byName("node-a"); awsCode(err) != "ServiceUnavailable" {
		t.Errorf("looking up node-a: %v, want the injected ServiceUnavailable", err)
	}
}
