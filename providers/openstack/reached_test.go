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

package openstack

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/providers"
)

// reachable is a fakecloud run by someone else, and clouds.yaml with an
// entry for an inspector of its own, chosen by OS_CLOUD: what a
// provider's CI holds for a real cloud.
func reachable(t *testing.T, password string) {
	t.Helper()
	srv, err := server.New(server.Config{CloudToken: "cloud", AdminToken: "admin", InspectorToken: "inspector"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	clouds := filepath.Join(t.TempDir(), "clouds.yaml")
	yaml := "clouds:\n  inspector:\n    auth:\n      auth_url: " + hs.URL + "/identity/v3\n      username: " + api.OpenStackInspectorUser +
		"\n      password: " + password + "\n      project_name: ccm-harness\n      user_domain_name: Default\n      project_domain_name: Default\n" +
		"    region_name: fake-region-1\n"
	if err := os.WriteFile(clouds, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_PROJECT_NAME", "OS_REGION_NAME", "OS_APPLICATION_CREDENTIAL_ID"} {
		t.Setenv(k, "")
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", clouds)
	t.Setenv("OS_CLOUD", "inspector")
}

func reach(config string) (providers.Cloud, error) {
	c, err := Profile().NewCloud([]byte(config))
	if err != nil {
		return nil, err
	}
	return c, c.Start(context.Background(), providers.CloudEnv{})
}

// TestReached asks a reached OpenStack, logged in to as clouds.yaml says,
// and keeps the inspector's password out of the artifacts.
func TestReached(t *testing.T) {
	reachable(t, "inspector")
	c, err := reach("reach: {routerID: " + api.OpenStackRouterID + ", subnetID: " + api.OpenStackSubnetID + "}")
	if err != nil {
		t.Fatal(err)
	}
	if r := providers.ReachedOf(c); r == nil || !strings.Contains(r.Where(), "region fake-region-1, as "+api.OpenStackInspectorUser) {
		t.Fatalf("reached: %v", r)
	}
	if _, err := c.Inspector().Instance(context.Background(), "no-such-node"); err == nil {
		t.Error("Instance of a node with no server: no error")
	}
	if s := c.(providers.SecretKeeper).Secrets(); len(s) != 1 || s[0] != "inspector" {
		t.Errorf("secrets %q, want the inspector's password", s)
	}
	if c.Instances() != nil {
		t.Error("a reached cloud offers to make and change machines that are not the harness's")
	}
}

// TestReachedBadInput: every mistake is one line naming the fix.
func TestReachedBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, config, password string
		env                    map[string]string
		want                   string
	}{
		{"reach and fakecloud's settings", "reach: {}\nzones: [a]", "inspector", nil, "with reach, give only reach"},
		{"wrong password", "reach: {}", "wrong", nil, "logging in to Keystone at "},
		{"no such cloud", "reach: {cloud: nosuch}", "inspector", nil, "cloud nosuch does not exist in clouds.yaml"},
		{"nothing set", "reach: {}", "inspector", map[string]string{"OS_CLOUD": ""}, "Missing input for argument [auth_url] (set OS_CLOUD to an entry of clouds.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reachable(t, tc.password)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := reach(tc.config)
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
