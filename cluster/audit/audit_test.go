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

package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRefusals(t *testing.T) {
	user := Username("kube-system", "cloud-controller-manager")
	line := func(at, u, verb, group, res, sub, ns string, code int) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"` + verb +
			`","user":{"username":"` + u + `"},"objectRef":{"resource":"` + res + `","subresource":"` + sub + `","namespace":"` + ns + `","apiGroup":"` + group +
			`"},"responseStatus":{"metadata":{},"code":` + map[int]string{200: "200", 403: "403"}[code] + `},"stageTimestamp":"` + at +
			`","annotations":{"authorization.k8s.io/decision":"` + map[int]string{200: "allow", 403: "forbid"}[code] + `"}}`
	}
	log := strings.Join([]string{
		line("2026-11-24T10:00:00.000000Z", user, "patch", "", "nodes", "status", "", 403), // before since
		line("2026-11-24T10:00:02.000000Z", user, "patch", "", "nodes", "status", "", 403),
		line("2026-11-24T10:00:03.000000Z", user, "patch", "", "nodes", "status", "", 403),
		line("2026-11-24T10:00:04.000000Z", user, "get", "coordination.k8s.io", "leases", "", "kube-system", 403),
		line("2026-11-24T10:00:05.000000Z", user, "patch", "", "nodes", "", "", 200),
		line("2026-11-24T10:00:06.000000Z", "system:serviceaccount:kube-system:other", "list", "", "pods", "", "", 403),
		// Refused by admission, not by RBAC: the namespace was going.
		strings.Replace(line("2026-11-24T10:00:07.000000Z", user, "create", "", "events", "", "gone", 403), `"forbid"`, `"allow"`, 1),
		`{"truncated`,
	}, "\n")
	path := filepath.Join(t.TempDir(), LogName)
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	since, _ := time.Parse(time.RFC3339, "2026-11-24T10:00:01Z")
	rs, err := Refusals(path, user, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].ResourceName() != "nodes/status" || rs[0].Count != 2 || rs[1].Namespace != "kube-system" {
		t.Fatalf("refusals %+v", rs)
	}
	if got, want := rs[0].String(), `patch nodes/status refused 2× (rule that allows it: {apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"]})`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if e := Explain(user, rs); !strings.Contains(e, user) || !strings.Contains(e, `get leases in namespace kube-system`) {
		t.Errorf("explain: %s", e)
	}
	if _, err := Refusals(filepath.Join(t.TempDir(), "none"), user, since); err == nil {
		t.Error("a missing log: no error")
	}
}

// The lines of testdata/api-uses.log are a real kube-apiserver v1.36.3's,
// answering the CCM's user: a list of v1 Endpoints (deprecated in v1.33),
// of discovery.k8s.io/v1beta1 EndpointSlices (removed in v1.25: 404), of
// policy/v1beta1 PodSecurityPolicies (refused by RBAC before any handler:
// no use to tell) and of Leases (neither).
func TestAPIUses(t *testing.T) {
	since, _ := time.Parse(time.RFC3339, "2026-11-25T00:00:00Z")
	us, err := APIUses("testdata/api-uses.log", CCMUser, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 {
		t.Fatalf("uses %+v; want the deprecated Endpoints and the unserved EndpointSlices", us)
	}
	want := []string{
		"list endpoints (v1): deprecated; 1 requests",
		"list endpointslices (discovery.k8s.io/v1beta1): not served (404): removed from this release, or never in it; 1 requests",
	}
	for i, w := range want {
		if !strings.HasPrefix(us[i].String(), w) {
			t.Errorf("use %d: %q, want it to begin %q", i, us[i], w)
		}
	}
	if other, err := APIUses("testdata/api-uses.log", "system:serviceaccount:kube-system:other", since); err != nil || len(other) != 0 {
		t.Errorf("another user's uses: %+v, %v", other, err)
	}
	if text := ExplainAPIUses(CCMUser, us); !strings.HasPrefix(text, "APIs: the CCM (system:cloud-controller-manager) called 2 deprecated or unserved API(s):\n  list endpoints") {
		t.Errorf("explained:\n%s", text)
	}
}
