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

package ec2_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The AWS dialect is tested with aws-sdk-go-v2, the SDK the AWS CCM is
// built on: what it parses here, the CCM parses, and what it signs, the
// CCM signs. The tests drive the whole server (servertest), as the CCM
// does.

func TestEC2DescribeInstances(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a, b := f.Create("node-a"), f.Create("node-b")
	ctx := context.Background()
	cl := f.EC2(servertest.CloudToken)

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
	if servertest.AWSCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("DescribeInstances of an unknown ID: %v, want InvalidInstanceID.NotFound", err)
	}

	// A terminated instance is still listed, terminated, without network.
	f.Must(http.StatusOK, http.MethodPost, api.AdminPathInstance+a.ID+"/terminate", servertest.AdminToken, nil, nil)
	out, err = cl.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Reservations[0].Instances[0]; got.State.Name != ec2types.InstanceStateNameTerminated || aws.ToString(got.PrivateDnsName) != "" {
		t.Errorf("terminated instance: state %s, private DNS name %q; want terminated, none", got.State.Name, aws.ToString(got.PrivateDnsName))
	}

	// Pages, as the CCM asks for them.
	for i := range 6 {
		f.Create("page-" + string(rune('a'+i)))
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
	if servertest.AWSCode(err) != "InvalidParameterValue" {
		t.Errorf("unknown filter: %v, want InvalidParameterValue", err)
	}
}

func TestEC2Signature(t *testing.T) {
	f := servertest.New(t, server.Config{})
	_, err := f.EC2("not-"+servertest.CloudToken).DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	if servertest.AWSCode(err) != "AuthFailure" {
		t.Errorf("wrong secret key: %v, want AuthFailure", err)
	}
	cl := ec2.New(ec2.Options{Region: "fake-region-1", BaseEndpoint: aws.String(f.URL + api.AWSPath + "ec2/"), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIAOTHERKEY00000000", servertest.CloudToken, "")})
	if _, err = cl.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{}); servertest.AWSCode(err) != "AuthFailure" {
		t.Errorf("unknown access key: %v, want AuthFailure", err)
	}
	zones, err := f.EC2(servertest.CloudToken).DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(zones.AvailabilityZones) != 3 || aws.ToString(zones.AvailabilityZones[0].ZoneId) != "fr1-az1" {
		t.Errorf("zones %+v, want fake-region-1's three, the first fr1-az1", zones.AvailabilityZones)
	}
	_, err = f.EC2(servertest.CloudToken).DescribeInstanceTopology(context.Background(), &ec2.DescribeInstanceTopologyInput{})
	if servertest.AWSCode(err) != "UnsupportedOperation" {
		t.Errorf("DescribeInstanceTopology: %v, want UnsupportedOperation", err)
	}
}

// TestEC2SignedAsBotocore sends a query as the AWS CLI (botocore) signs
// it: content-type, host and x-amz-date, not content-length as the Go SDK
// does. AWS takes any set of signed headers that holds host.
func TestEC2SignedAsBotocore(t *testing.T) {
	f := servertest.New(t, server.Config{})
	send := func(secret string, tamper func(*http.Request)) *http.Response {
		t.Helper()
		body := "Action=DescribeAvailabilityZones&Version=2016-11-15"
		req, err := http.NewRequest(http.MethodPost, f.URL+api.AWSPath+"ec2/", nil)
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
	if resp := send(servertest.CloudToken, nil); resp.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(resp.Body)
		t.Errorf("signed as botocore signs: %s\n%s", resp.Status, out)
	}
	for name, r := range map[string]*http.Response{
		"wrong secret key":      send("not-"+servertest.CloudToken, nil),
		"signed header changed": send(servertest.CloudToken, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }),
	} {
		out, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusUnauthorized || !strings.Contains(string(out), "<Code>AuthFailure</Code>") {
			t.Errorf("%s: %s\n%s, want 401 AuthFailure", name, r.Status, out)
		}
	}
}

func TestEC2Routes(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	ctx := context.Background()
	cl := f.EC2(servertest.CloudToken)
	table := aws.String(api.AWSRouteTable)
	if _, err := cl.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(a.ID),
		SourceDestCheck: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Fatalf("ModifyInstanceAttribute: %v", err)
	}
	if _, err := cl.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: table, DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(a.ID)}); err != nil {
		t.Fatalf("CreateRoute: %v", err)
	}
	_, err := cl.CreateRoute(ctx, &ec2.CreateRouteInput{RouteTableId: table, DestinationCidrBlock: aws.String("10.244.1.0/24"), InstanceId: aws.String(a.ID)})
	if servertest.AWSCode(err) != "RouteAlreadyExists" {
		t.Errorf("CreateRoute again: %v, want RouteAlreadyExists", err)
	}
	var routes []api.Route
	f.Must(http.StatusOK, http.MethodGet, api.AdminPathRoutes, servertest.AdminToken, nil, &struct {
		Routes *[]api.Route `json:"routes"`
	}{&routes})
	if len(routes) != 1 || routes[0].TargetInstance != a.ID || routes[0].DestinationCIDR != "10.244.1.0/24" {
		t.Errorf("fakecloud's routes %+v, want 10.244.1.0/24 to %s", routes, a.ID)
	}
	f.Must(http.StatusOK, http.MethodPost, api.AdminPathInstance+a.ID+"/terminate", servertest.AdminToken, nil, nil)
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
	if servertest.AWSCode(err) != "InvalidRoute.NotFound" || !strings.Contains(err.Error(), "10.244.1.0/24") {
		t.Errorf("DeleteRoute again: %v, want InvalidRoute.NotFound", err)
	}
}

// TestEC2FaultTargetsItsInstance: a fault about one instance fires on the
// calls that answer it, not on a lookup of another by private DNS name.
func TestEC2FaultTargetsItsInstance(t *testing.T) {
	f := servertest.New(t, server.Config{})
	f.Create("node-a")
	f.Create("node-b")
	f.AddFault(api.Fault{Operation: api.OpListInstances, Instance: "node-a", Kind: api.FaultError, Status: 503})
	cl := f.EC2(servertest.CloudToken)
	byName := func(name string) error {
		_, err := cl.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			{Name: aws.String("private-dns-name"), Values: []string{name}}}})
		return err
	}
	if err := byName("node-b"); err != nil {
		t.Errorf("looking up node-b with a fault about node-a: %v, want no error", err)
	}
	if err := byName("node-a"); servertest.AWSCode(err) != "ServiceUnavailable" {
		t.Errorf("looking up node-a: %v, want the injected ServiceUnavailable", err)
	}
}
