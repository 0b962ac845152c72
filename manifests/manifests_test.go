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

package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpstreamIsUpstreams checks that the embedded RBAC starts with the
// files of k8s.io/kubernetes at the pinned release, unchanged.
func TestUpstreamIsUpstreams(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Skipf("module k8s.io/kubernetes not at hand: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "cluster/addons/cloud-controller-manager")
	for _, f := range []string{"cloud-node-controller-role.yaml", "cloud-node-controller-binding.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(Upstream), string(data)) {
			t.Errorf("upstream-rbac.yaml does not hold %s as the module has it", f)
		}
	}
	objs, err := Parse(Upstream)
	if err != nil {
		t.Fatal(err)
	}
	ns, name, err := ServiceAccount(objs)
	if err != nil || ns != ServiceAccountNamespace || name != ServiceAccountName {
		t.Errorf("service account %s/%s, %v", ns, name, err)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sa := "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ccm\n  namespace: kube-system\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ccm-config\n  namespace: kube-system\ndata:\n  a: b\n"
	write("folder/1-sa.yaml", sa)
	write("folder/2-cm.yaml", cm)
	write("folder/README.md", "not a manifest")
	write("kust/kustomization.yaml", "namespace: ccm-system\nresources: [sa.yaml]\n")
	write("kust/sa.yaml", sa)
	write("bad/x.yaml", "apiVersion: v1\nkind: [\n")
	write("noname.yaml", "apiVersion: v1\nkind: ConfigMap\n")
	write("twosa.yaml", sa+"---\n"+strings.Replace(sa, "name: ccm", "name: other", 1))
	for _, tt := range []struct {
		path, want, ns string
		n              int
	}{
		{"folder", "ccm", "kube-system", 2},
		{"folder/2-cm.yaml", "cloud-controller-manager", "kube-system", 1},
		{"kust", "ccm", "ccm-system", 1},
	} {
		data, err := Read(filepath.Join(dir, tt.path))
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		objs, err := Parse(data)
		if err != nil || len(objs) != tt.n {
			t.Fatalf("%s: %d objects, %v; want %d", tt.path, len(objs), err, tt.n)
		}
		ns, name, err := ServiceAccount(objs)
		if err != nil || name != tt.want || ns != tt.ns {
			t.Errorf("%s: service account %s/%s, %v; want %s/%s", tt.path, ns, name, err, tt.ns, tt.want)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{"bad", "bad: x.yaml: document 1 does not parse"},
		{"noname.yaml", "document 1 has no apiVersion, kind or metadata.name"},
		{"missing", "no such file"},
	} {
		_, err := Read(filepath.Join(dir, tt.path))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line containing %q", tt.path, err, tt.want)
		}
	}
	data, _ := Read(filepath.Join(dir, "twosa.yaml"))
	objs, _ := Parse(data)
	if _, _, err := ServiceAccount(objs); err == nil || !strings.Contains(err.Error(), "2 ServiceAccounts") {
		t.Errorf("two service accounts: %v", err)
	}
}
