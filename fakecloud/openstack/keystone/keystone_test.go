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

package keystone_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"

	"sigs.k8s.io/ccm-harness/fakecloud/openstack/keystone"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The OpenStack dialect is tested with gophercloud, the client the
// OpenStack CCM is built on: what it parses here, the CCM parses. The
// tests drive the whole server (servertest), as the CCM does.

func TestKeystone(t *testing.T) {
	f := servertest.New(t, server.Config{})
	if _, err := f.OSLogin(servertest.PasswordAuth(servertest.CloudToken)); err != nil {
		t.Errorf("password login: %v", err)
	}
	if _, err := f.OSLogin(gophercloud.AuthOptions{ApplicationCredentialID: keystone.AppCredID, ApplicationCredentialSecret: servertest.CloudToken}); err != nil {
		t.Errorf("application credential login: %v", err)
	}
	for name, opts := range map[string]gophercloud.AuthOptions{
		"wrong password":     servertest.PasswordAuth("wrong"),
		"admin token":        servertest.PasswordAuth(servertest.AdminToken),
		"wrong secret":       {ApplicationCredentialID: keystone.AppCredID, ApplicationCredentialSecret: "wrong"},
		"unknown user":       {Username: "admin", Password: servertest.CloudToken, DomainName: keystone.Domain},
		"unknown project":    {Username: keystone.UserName, Password: servertest.CloudToken, DomainName: keystone.Domain, Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainName: keystone.Domain}},
		"unknown credential": {ApplicationCredentialID: "ac-other", ApplicationCredentialSecret: servertest.CloudToken},
	} {
		if _, err := f.OSLogin(opts); !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
			t.Errorf("%s: got %v, want 401", name, err)
		}
	}
	// A service refuses a missing or made-up token in Keystone's shape.
	for _, tok := range []string{"", "gAAAAAmadeup"} {
		req, _ := http.NewRequest("GET", f.URL+openstackjson.Compute+"/v2.1/servers", nil)
		if tok != "" {
			req.Header.Set("X-Auth-Token", tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code int } }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || body.Error.Code != http.StatusUnauthorized {
			t.Errorf("token %q: got %d %+v, want 401 with an error body", tok, resp.StatusCode, body)
		}
	}
}
