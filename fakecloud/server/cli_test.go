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
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/keystone"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// TestOfficialCLIs runs the clouds' own command lines against fakecloud,
// as a user or a cloud plugin would: the AWS CLI (botocore, which signs
// other headers than the Go SDK) and the OpenStack client with Octavia's
// plugin (openstacksdk, which asks Neutron for columns with fields=, and
// needs an image service in the catalog to list servers). Each read
// command must succeed and show what the cloud holds.
func TestOfficialCLIs(t *testing.T) {
	f := servertest.New(t, server.Config{})
	inst := f.Create("node-a")
	run := func(t *testing.T, env []string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		// Only what the test gives: no profile or cloud of the user's.
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	need := func(t *testing.T, tool, pkg string) {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found: install Debian's %s (.ci/run does)", tool, pkg)
			}
			t.Skipf("%s not found: install Debian's %s to run this test", tool, pkg)
		}
	}

	t.Run("aws", func(t *testing.T) {
		t.Parallel()
		need(t, "aws", "awscli")
		env := []string{"AWS_ACCESS_KEY_ID=" + api.AWSAccessKeyID, "AWS_SECRET_ACCESS_KEY=" + servertest.CloudToken,
			"AWS_DEFAULT_REGION=fake-region-1", "AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER="}
		for _, c := range []struct {
			service, command string
			shows            []string
		}{
			{"ec2", "describe-instances", []string{inst.ID, "running"}},
			{"ec2", "describe-availability-zones", []string{"fake-region-1a", "fake-region-1c"}},
			{"ec2", "describe-subnets", []string{api.AWSSubnetID(0), api.AWSVPCID}},
			{"ec2", "describe-route-tables", []string{api.AWSRouteTable}},
			{"ec2", "describe-security-groups", []string{api.AWSVPCID}},
			{"elb", "describe-load-balancers", []string{"LoadBalancerDescriptions"}},
			{"elbv2", "describe-load-balancers", []string{"LoadBalancers"}},
			{"elbv2", "describe-target-groups", []string{"TargetGroups"}},
		} {
			out := run(t, env, "aws", "--endpoint-url", f.URL+api.AWSPath+c.service+"/", "--output", "json", c.service, c.command)
			for _, s := range c.shows {
				if !strings.Contains(out, s) {
					t.Errorf("aws %s %s shows no %s:\n%s", c.service, c.command, s, out)
				}
			}
		}
		// A wrong secret is refused as EC2 refuses it.
		cmd := exec.Command("aws", "--endpoint-url", f.URL+api.AWSPath+"ec2/", "ec2", "describe-instances")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AWS_ACCESS_KEY_ID=" + api.AWSAccessKeyID,
			"AWS_SECRET_ACCESS_KEY=not-" + servertest.CloudToken, "AWS_DEFAULT_REGION=fake-region-1", "AWS_EC2_METADATA_DISABLED=true"}
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "AuthFailure") {
			t.Errorf("aws ec2 describe-instances with a wrong secret: %v, want AuthFailure:\n%s", err, out)
		}
	})

	t.Run("openstack", func(t *testing.T) {
		t.Parallel()
		need(t, "openstack", "python3-openstackclient and python3-octaviaclient")
		env := []string{"OS_AUTH_URL=" + f.URL + openstackjson.Identity + "/v3", "OS_USERNAME=" + keystone.UserName, "OS_PASSWORD=" + servertest.CloudToken,
			"OS_PROJECT_NAME=" + keystone.Project, "OS_USER_DOMAIN_NAME=" + keystone.Domain, "OS_PROJECT_DOMAIN_NAME=" + keystone.Domain,
			"OS_REGION_NAME=fake-region-1", "OS_IDENTITY_API_VERSION=3"}
		for _, c := range []struct {
			args  []string
			shows []string
		}{
			{[]string{"server", "list"}, []string{inst.ID, "node-a", "ACTIVE", "fake.medium"}},
			{[]string{"server", "show", "node-a"}, []string{inst.ID, "fake-region-1a"}},
			{[]string{"flavor", "list"}, []string{"fake.medium"}},
			{[]string{"port", "list"}, []string{"port-" + inst.ID}},
			{[]string{"security", "group", "list"}, []string{"default"}},
			{[]string{"availability", "zone", "list"}, []string{"fake-region-1a", "available"}},
			{[]string{"network", "list"}, []string{openstackjson.PrivateNetID}},
			{[]string{"subnet", "list"}, []string{openstackjson.PrivateSubnetID}},
			{[]string{"router", "show", api.OpenStackRouterID}, []string{api.OpenStackRouterID}},
			{[]string{"loadbalancer", "list", "-f", "json"}, []string{"[]"}},
		} {
			out := run(t, env, "openstack", c.args...)
			for _, s := range c.shows {
				if !strings.Contains(out, s) {
					t.Errorf("openstack %s shows no %s:\n%s", strings.Join(c.args, " "), s, out)
				}
			}
		}
	})
}
