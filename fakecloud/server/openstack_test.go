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
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/server"
	"sigs.k8s.io/ccm-harness/fakecloud/server/servertest"
)

// The OpenStack dialect is tested with gophercloud, the client the
// OpenStack CCM is built on: what it parses here, the CCM parses.

func TestOpenStackAudited(t *testing.T) {
	f := servertest.New(t, server.Config{})
	a := f.Create("node-a")
	compute, _ := f.OSClients()
	if _, err := servers.Get(context.Background(), compute, a.ID).Extract(); err != nil {
		t.Fatal(err)
	}
	var log api.AuditLog
	f.Must(http.StatusOK, "GET", api.AdminPathAudit, servertest.AdminToken, nil, &log)
	var ops []string
	for _, e := range log.Entries {
		ops = append(ops, e.Operation+":"+e.Caller)
	}
	got := strings.Join(ops, " ")
	if !strings.Contains(got, api.OpAuthenticate+":cloud") || !strings.Contains(got, api.OpGetInstance+":cloud") {
		t.Errorf("audit %s: want the login, as the CCM once it succeeded, and the server's GET", got)
	}
}
