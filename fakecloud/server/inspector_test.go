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

package server_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	"github.com/gophercloud/gophercloud/v2"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

const inspectorToken = "inspector-secret"

func ec2As(f *servertest.Fixture, keyID, secret string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:           "fake-region-1",
		BaseEndpoint:     aws.String(f.URL + api.AWSPath + "ec2/"),
		Credentials:      credentials.NewStaticCredentialsProvider(keyID, secret, ""),
		RetryMaxAttempts: 1,
	})
}

// TestInspectorSeesNoFault: the inspector's own credentials work in every
// dialect, only with its own secret, and no fault aimed at the CCM's view
// of the cloud reaches its calls.
func TestInspectorSeesNoFault(t *testing.T) {
	f := servertest.New(t, server.Config{InspectorToken: inspectorToken})
	f.Create("node-a")
	ctx := context.Background()
	for _, op := range []string{api.OpListInstances, api.OpAuthenticate} {
		f.AddFault(api.Fault{Operation: op, Kind: api.FaultError, Status: 500, Message: "broken for the CCM"})
	}

	if got := f.Do("GET", api.PathInstances, servertest.CloudToken, nil).Status; got != http.StatusInternalServerError {
		t.Errorf("the CCM's list of instances under a fault: %d, want 500", got)
	}
	if got := f.Do("GET", api.PathInstances, inspectorToken, nil).Status; got != http.StatusOK {
		t.Errorf("the inspector's list of instances under the CCM's fault: %d, want 200", got)
	}
	if got := f.Do("GET", api.AdminPathInstances, inspectorToken, nil).Status; got != http.StatusUnauthorized {
		t.Errorf("the admin API with the inspector's token: %d, want 401", got)
	}

	in := &ec2.DescribeInstancesInput{}
	if _, err := ec2As(f, api.AWSAccessKeyID, servertest.CloudToken).DescribeInstances(ctx, in); err == nil {
		t.Error("the CCM's DescribeInstances under a fault succeeded")
	}
	out, err := ec2As(f, api.AWSInspectorAccessKeyID, inspectorToken).DescribeInstances(ctx, in)
	if err != nil || len(out.Reservations) != 1 {
		t.Errorf("the inspector's DescribeInstances under the CCM's fault: %v, %d reservations; want node-a", err, len(out.Reservations))
	}
	for _, bad := range []struct{ key, secret string }{
		{api.AWSInspectorAccessKeyID, servertest.CloudToken},
		{api.AWSAccessKeyID, inspectorToken},
	} {
		if _, err := ec2As(f, bad.key, bad.secret).DescribeInstances(ctx, in); servertest.AWSCode(err) != "AuthFailure" {
			t.Errorf("access key %s with another's secret: %v, want AuthFailure", bad.key, err)
		}
	}

	inspector := func(password string) gophercloud.AuthOptions {
		o := servertest.PasswordAuth(password)
		o.Username = api.OpenStackInspectorUser
		return o
	}
	if _, err := f.OSLogin(servertest.PasswordAuth(servertest.CloudToken)); err == nil {
		t.Error("the CCM's Keystone login under a fault succeeded")
	}
	if _, err := f.OSLogin(inspector(inspectorToken)); err != nil {
		t.Errorf("the inspector's Keystone login under the CCM's fault: %v", err)
	}
	if _, err := f.OSLogin(inspector(servertest.CloudToken)); err == nil {
		t.Error("the inspector's Keystone user logged in with the CCM's password")
	}
}

// TestInspectorTokenMustDiffer: a shared secret would let a fault reach
// the inspector, or the inspector reshape the cloud.
func TestInspectorTokenMustDiffer(t *testing.T) {
	for _, tok := range []string{servertest.CloudToken, servertest.AdminToken} {
		if _, err := server.New(server.Config{CloudToken: servertest.CloudToken, AdminToken: servertest.AdminToken, InspectorToken: tok}); err == nil {
			t.Errorf("an inspector token equal to %q was taken", tok)
		}
	}
}

// TestEC2StopStartTerminate changes instances' states as EC2 does, and
// refuses what EC2 refuses.
func TestEC2StopStartTerminate(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	ctx := context.Background()
	cl := f.EC2(servertest.CloudToken)
	state := func() string {
		var inst api.Instance
		f.Must(http.StatusOK, "GET", api.AdminPathInstance+a.ID, servertest.AdminToken, nil, &inst)
		return string(inst.State)
	}
	stop, err := cl.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{a.ID}})
	if err != nil || len(stop.StoppingInstances) != 1 || stop.StoppingInstances[0].PreviousState.Name != ec2types.InstanceStateNameRunning {
		t.Fatalf("StopInstances: %v %+v", err, stop)
	}
	if got := state(); got != string(api.StateStopped) {
		t.Errorf("after StopInstances: %s, want %s", got, api.StateStopped)
	}
	if _, err := cl.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{a.ID}}); err != nil {
		t.Fatalf("StartInstances: %v", err)
	}
	if got := state(); got != string(api.StateRunning) {
		t.Errorf("after StartInstances: %s, want %s", got, api.StateRunning)
	}
	if _, err := cl.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}}); servertest.AWSCode(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("StopInstances of no instance: %v, want InvalidInstanceID.NotFound", err)
	}
	for i := 0; i < 2; i++ { // terminating twice is no error
		term, err := cl.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{a.ID}})
		if err != nil || len(term.TerminatingInstances) != 1 || term.TerminatingInstances[0].CurrentState.Name != ec2types.InstanceStateNameTerminated {
			t.Fatalf("TerminateInstances (%d): %v %+v", i+1, err, term)
		}
	}
	if _, err := cl.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{a.ID}}); servertest.AWSCode(err) != "IncorrectInstanceState" {
		t.Errorf("StartInstances of a terminated instance: %v, want IncorrectInstanceState", err)
	}
}

// TestDNS resolves a classic load balancer's DNS name through fakecloud's
// DNS with Go's own resolver, as a client of the real cloud would.
func TestDNS(t *testing.T) {
	f := servertest.New(t, server.Config{})
	ctx := context.Background()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go f.Srv.ServeDNS(pc)
	t.Cleanup(func() { pc.Close() })
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}

	created, err := f.ELB().CreateLoadBalancer(ctx, &elb.CreateLoadBalancerInput{LoadBalancerName: aws.String("a1"), Subnets: []string{api.AWSSubnetID(0)},
		Listeners: []elbtypes.Listener{{Protocol: aws.String("tcp"), LoadBalancerPort: 8080, InstanceProtocol: aws.String("tcp"), InstancePort: aws.Int32(30080)}}})
	if err != nil {
		t.Fatalf("CreateLoadBalancer: %v", err)
	}
	var lb api.LoadBalancer
	f.Must(http.StatusOK, "GET", api.AdminPathLoadBalancer+"a1", servertest.AdminToken, nil, &lb)
	addrs, err := r.LookupHost(ctx, aws.ToString(created.DNSName))
	if err != nil || len(addrs) != 1 || addrs[0] != lb.IP {
		t.Errorf("%s resolved to %v (%v), want [%s]", aws.ToString(created.DNSName), addrs, err, lb.IP)
	}
	_, err = r.LookupHost(ctx, "nothing.elb.amazonaws.com")
	if dnsErr, ok := err.(*net.DNSError); !ok || !dnsErr.IsNotFound {
		t.Errorf("an unknown name: %v, want not found", err)
	}
}
