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
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/internal/process"
)

func newCloud(t *testing.T, config string) *Cloud {
	t.Helper()
	c, err := Profile().NewCloud([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return c.(*Cloud)
}

func TestCCMConfig(t *testing.T) {
	for config, want := range map[string][]string{
		"": {"[Global]\n", "auth-url = /identity/v3\n", "region = fake-region-1\n", "username = ccm-harness\n",
			"tenant-name = ccm-harness\n", "domain-name = Default\n",
			"[LoadBalancer]\nsubnet-id = subnet-private\ninternal-lb = true\ncreate-monitor = true\n", "[Route]\nrouter-id = router-ccm-harness\n"},
		"subnetID: subnet-other":                   {"subnet-id = subnet-other\n"},
		"ipv6SupportDisabled: true":                {"[Networking]\nipv6-support-disabled = true\n"},
		"auth: application-credential\nregion: r1": {"application-credential-id = ac-ccm-harness\n", "region = r1\n"},
	} {
		got, err := newCloud(t, config).CCMConfig()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(got), w) {
				t.Errorf("config %q: cloud.conf\n%s\nlacks %q", config, got, w)
			}
		}
	}
	if _, err := Profile().NewCloud([]byte("auth: token")); err == nil || !strings.Contains(err.Error(), `auth "token" is neither`) {
		t.Errorf("auth: token: %v", err)
	}
}

// TestDiagnose checks the one-line causes the bring-up reports for a CCM
// that cannot log in, against fakecloud's Keystone.
func TestDiagnose(t *testing.T) {
	srv, err := server.New(server.Config{CloudToken: "cloud-token", AdminToken: "admin-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	port, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for config, want := range map[string]string{
		"wrongPassword: true\nauthURL: " + hs.URL + "/identity/v3":                               "refuses the CCM's password credentials (401): fix them in [Global]",
		"auth: application-credential\nwrongPassword: true\nauthURL: " + hs.URL + "/identity/v3": "refuses the CCM's application-credential credentials (401)",
		"wrongPassword: true\nauthURL: http://127.0.0.1:" + strconv.Itoa(port) + "/v3":           "cannot reach Keystone at http://127.0.0.1:",
		"wrongPassword: true\nauthURL: " + hs.URL + "/nothing/v3":                                "answers the CCM's login with 404",
	} {
		err := newCloud(t, config).Diagnose(context.Background())
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line containing %q", config, err, want)
		}
	}
}
