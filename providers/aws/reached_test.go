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

package aws

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/providers"
)

// reachable is a fakecloud run by someone else, and the environment an
// inspector of its own has for it: what a provider's CI sets for a real
// account, with the endpoints of an AWS-compatible cloud.
func reachable(t *testing.T) (url string) {
	t.Helper()
	srv, err := server.New(server.Config{CloudToken: "cloud", AdminToken: "admin", InspectorToken: "inspector"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":                          api.AWSInspectorAccessKeyID,
		"AWS_SECRET_ACCESS_KEY":                      "inspector",
		"AWS_REGION":                                 "fake-region-1",
		"AWS_ENDPOINT_URL_EC2":                       hs.URL + api.AWSPath + "ec2/",
		"AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING":    hs.URL + api.AWSPath + "elb/",
		"AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2": hs.URL + api.AWSPath + "elbv2/",
		"AWS_CONFIG_FILE":                            "/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE":                "/dev/null",
		"AWS_PROFILE":                                "",
		"AWS_EC2_METADATA_DISABLED":                  "true",
	} {
		t.Setenv(k, v)
	}
	return hs.URL
}

func reach(t *testing.T, config string) (providers.Cloud, error) {
	t.Helper()
	c, err := Profile().NewCloud([]byte(config))
	if err != nil {
		return nil, err
	}
	return c, c.Start(context.Background(), providers.CloudEnv{})
}

// TestReached asks a reached AWS, configured by the environment alone, and
// keeps the inspector's secret out of the artifacts.
func TestReached(t *testing.T) {
	reachable(t)
	c, err := reach(t, "reach: {clusterID: ccm-harness}")
	if err != nil {
		t.Fatal(err)
	}
	if providers.ReachedOf(c) == nil {
		t.Fatal("a cloud with reach is not Reached")
	}
	if _, err := c.Inspector().Instance(context.Background(), "no-such-node"); err == nil || !strings.Contains(err.Error(), "no live instance with private DNS name no-such-node") {
		t.Errorf("Instance of a node with no instance: %v", err)
	}
	if _, ok := c.Inspector().(providers.LoadBalancerInspector); !ok {
		t.Error("the reached cloud's inspector lists no load balancers")
	}
	if c.Instances() != nil {
		t.Error("a reached cloud offers to make and change machines that are not the harness's")
	}
	if s := c.(providers.SecretKeeper).Secrets(); len(s) != 1 || s[0] != "inspector" {
		t.Errorf("secrets %q, want the inspector's secret key", s)
	}
	if _, err := c.CCMConfig(); err == nil || !strings.Contains(err.Error(), "--cluster=existing") {
		t.Errorf("CCMConfig of a reached cloud: %v, want the way to judge its cluster", err)
	}
}

// TestReachedBadInput: every mistake is one line naming the fix.
func TestReachedBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		env          map[string]string
		want         string
	}{
		{"no cluster ID", "reach: {}", nil, "reach.clusterID is not set"},
		{"reach and fakecloud's settings", "reach: {clusterID: x}\nzones: [a]", nil, "with reach, give only reach and loadBalancerType"},
		{"another cluster's ID", "reach: {clusterID: other}", nil, `no subnet tagged kubernetes.io/cluster/other: is "other" the cluster's ID`},
		{"wrong secret key", "reach: {clusterID: ccm-harness}", map[string]string{"AWS_SECRET_ACCESS_KEY": "wrong"}, "refuses the credentials (AuthFailure"},
		{"no credentials", "reach: {clusterID: ccm-harness}", map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}, "no credentials for the harness's inspector in the environment"},
		{"no region", "reach: {clusterID: ccm-harness}", map[string]string{"AWS_REGION": ""}, "no region for the reached cloud"},
		{"unreachable endpoint", "reach: {clusterID: ccm-harness}", map[string]string{"AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:1/"}, "is the endpoint EC2's (AWS_ENDPOINT_URL_EC2"},
		{"bad nameserver", "reach: {clusterID: ccm-harness, nameserver: nowhere}", nil, `reach.nameserver "nowhere" is not host:port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reachable(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := reach(t, tc.config)
			switch {
			case err == nil:
				t.Fatalf("reached")
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q, want %q", err, tc.want)
			case strings.Contains(err.Error(), "\n"):
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
}
