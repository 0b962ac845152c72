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

package servertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	"github.com/aws/smithy-go"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/keystone"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// EC2 is an EC2 client of aws-sdk-go-v2, the SDK the AWS CCM is built
// on, signing with secret.
func (f *Fixture) EC2(secret string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region:       "fake-region-1",
		BaseEndpoint: aws.String(f.URL + api.AWSPath + "ec2/"),
		Credentials:  credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, secret, ""),
		// One attempt: a test of an error wants the error, not retries.
		RetryMaxAttempts: 1,
	})
}

// AWSCode is the AWS error code of err, if it has one.
func AWSCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// ELB is a classic Elastic Load Balancing client, signing as the CCM.
func (f *Fixture) ELB() *elb.Client {
	return elb.New(elb.Options{
		Region:           "fake-region-1",
		BaseEndpoint:     aws.String(f.URL + api.AWSPath + "elb/"),
		Credentials:      credentials.NewStaticCredentialsProvider(api.AWSAccessKeyID, CloudToken, ""),
		RetryMaxAttempts: 1,
	})
}

// OSLogin logs in to Keystone with gophercloud, the OpenStack CCM's SDK.
func (f *Fixture) OSLogin(opts gophercloud.AuthOptions) (*gophercloud.ProviderClient, error) {
	f.T.Helper()
	opts.IdentityEndpoint = f.URL + openstackjson.Identity + "/v3"
	pc, err := openstack.NewClient(opts.IdentityEndpoint)
	if err != nil {
		f.T.Fatal(err)
	}
	return pc, openstack.Authenticate(context.Background(), pc, opts)
}

// PasswordAuth is the one user's password login.
func PasswordAuth(password string) gophercloud.AuthOptions {
	return gophercloud.AuthOptions{Username: keystone.UserName, Password: password, DomainName: keystone.Domain,
		Scope: &gophercloud.AuthScope{ProjectName: keystone.Project, DomainName: keystone.Domain}}
}

// OSClients are Nova and Neutron clients, logged in as the CCM.
func (f *Fixture) OSClients() (compute, network *gophercloud.ServiceClient) {
	f.T.Helper()
	pc, err := f.OSLogin(PasswordAuth(CloudToken))
	if err != nil {
		f.T.Fatalf("login: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: "fake-region-1"}
	if compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		f.T.Fatal(err)
	}
	if network, err = openstack.NewNetworkV2(pc, eo); err != nil {
		f.T.Fatal(err)
	}
	return compute, network
}

// Octavia is an Octavia client, logged in as the CCM.
func (f *Fixture) Octavia() *gophercloud.ServiceClient {
	f.T.Helper()
	pc, err := f.OSLogin(PasswordAuth(CloudToken))
	if err != nil {
		f.T.Fatalf("login: %v", err)
	}
	lb, err := openstack.NewLoadBalancerV2(pc, gophercloud.EndpointOpts{Region: "fake-region-1"})
	if err != nil {
		f.T.Fatal(err)
	}
	return lb
}

// WaitActive polls as the OpenStack CCM does, until the load balancer is
// ACTIVE.
func WaitActive(t *testing.T, c *gophercloud.ServiceClient, id string) *loadbalancers.LoadBalancer {
	t.Helper()
	for range 50 {
		lb, err := loadbalancers.Get(context.Background(), c, id).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if lb.ProvisioningStatus == model.OctaviaActive {
			return lb
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("load balancer %s never ACTIVE", id)
	return nil
}

// AddrOf is an instance's first InternalIP.
func AddrOf(inst api.Instance) string {
	return model.FirstInternalIP(&inst).String()
}
