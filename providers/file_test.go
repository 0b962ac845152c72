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

package providers_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/manifests"
	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/aws"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	"sigs.k8s.io/ccm-harness/providers/openstack"
	"sigs.k8s.io/ccm-harness/providers/vsphere"
	"sigs.k8s.io/ccm-harness/specs"
)

// TestBuiltinProfilesAsFiles loads the built-in profiles written as
// profile files (each provider's folder has one): they must describe the
// same provider.
func TestBuiltinProfilesAsFiles(t *testing.T) {
	if len(providers.Names()) < 4 {
		t.Fatalf("providers registered: %v", providers.Names())
	}
	for _, name := range providers.Names() {
		data, err := os.ReadFile(name + "/profile.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got, cfg, err := providers.Resolve(providers.External, data, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := providers.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || got.CloudProvider != want.CloudProvider || got.ProviderIDScheme != want.ProviderIDScheme ||
			got.Capabilities.String() != want.Capabilities.String() || got.Features.String() != want.Features.String() || got.CCM.String() != want.CCM.String() ||
			got.InTreeKCM.String() != want.InTreeKCM.String() || strings.Join(got.CCMArgs, " ") != strings.Join(want.CCMArgs, " ") ||
			!maps.Equal(got.ProxyProtocolAnnotations, want.ProxyProtocolAnnotations) {
			t.Errorf("%s as a file: %+v\nbuilt in: %+v", name, got, want)
		}
		if _, err := got.NewCloud(cfg); err != nil {
			t.Errorf("%s: its cloud config: %v", name, err)
		}
	}
}

// TestManifestsAreUpstreams checks that the manifests a provider of a
// third-party CCM ships are that CCM's own, as its default release has
// them: its RBAC, and its workload, which the harness runs with the image
// and cloud config substituted.
func TestManifestsAreUpstreams(t *testing.T) {
	for _, tt := range []struct {
		profile  providers.Profile
		files    []string
		workload string
	}{
		{vsphere.Profile(), []string{"cloud-controller-manager-roles.yaml", "cloud-controller-manager-role-bindings.yaml", "vsphere-cloud-controller-manager-ds.yaml"},
			"DaemonSet kube-system/vsphere-cloud-controller-manager"},
		{openstack.Profile(), []string{"cloud-controller-manager-roles.yaml", "cloud-controller-manager-role-bindings.yaml", "openstack-cloud-controller-manager-ds.yaml"},
			"DaemonSet kube-system/openstack-cloud-controller-manager"},
	} {
		ccm := tt.profile.CCM
		out, err := exec.Command("go", "mod", "download", "-json", ccm.Module+"@"+ccm.Versions[0]).Output()
		if err != nil {
			t.Skipf("module not at hand: %v", err)
		}
		var m struct{ Dir string }
		if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
			t.Fatalf("go mod download: %v %s", err, out)
		}
		for _, f := range tt.files {
			want, err := os.ReadFile(filepath.Join(m.Dir, "manifests/controller-manager", f))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(tt.profile.Name, "manifests", f)); err != nil || string(got) != string(want) {
				t.Errorf("%s/manifests/%s differs from the release's (%v)", tt.profile.Name, f, err)
			}
		}
		objs, err := manifests.Parse(tt.profile.Manifests)
		if err != nil {
			t.Fatalf("%s: %v", tt.profile.Name, err)
		}
		w, _, err := manifests.SplitWorkload(objs)
		if err != nil || w.String() != tt.workload || w.ServiceAccount() != "cloud-controller-manager" {
			t.Errorf("%s: workload %v as %s, %v", tt.profile.Name, w, w.ServiceAccount(), err)
		}
	}
}

func TestProfileFileBadInput(t *testing.T) {
	dir := t.TempDir()
	workloads := map[string]string{
		"nocontainer.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ccm, namespace: kube-system}\n",
		"twocontainers.yaml": "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ccm, namespace: kube-system}\n" +
			"spec: {template: {spec: {containers: [{name: a, image: img-a}, {name: b, image: img-b}]}}}\n",
		"hostpath.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: ccm, namespace: kube-system}\n" +
			"spec: {containers: [{name: ccm, image: x, args: [--cloud-config=/etc/kubernetes/cloud.conf], volumeMounts: [{name: k8s, mountPath: /etc/kubernetes}]}], volumes: [{name: k8s, hostPath: {path: /etc/kubernetes}}]}\n",
		"unmounted.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: ccm, namespace: kube-system}\n" +
			"spec: {containers: [{name: ccm, image: x, env: [{name: CFG, value: /etc/config/cloud.conf}], args: [--cloud-config=$(CFG)]}]}\n",
	}
	for f, data := range workloads {
		if err := os.WriteFile(dir+"/"+f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(dir+"/bad.yaml", []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\nkind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, want string }{
		{"", "provider external: no profile file given"},
		{"name: ../mine\ncloud: fake\nccm: {builtin: true}\ncapabilities: [instances]\n", `name "../mine" is not valid: a lowercase RFC 1123 label`},
		{"cloud: fake\nccm: {builtin: true}\ncapabilities: [instances]\nextra: 1\n", `unknown field "extra"`},
		{"ccm: {builtin: true}\n", "cloud: not set (name a built-in cloud: " + strings.Join(providers.Names(), ", ") + ", or none)"},
		{"cloud: gce\nccm: {builtin: true}\n", `cloud: unknown provider "gce"`},
		{"cloud: fake\nccm: {builtin: true, image: x}\n", "ccm: give exactly one of image, binary and builtin"},
		{"cloud: fake\nccm: {args: [--v=2]}\ncapabilities: [instances]\n", "ccm: give one of image, binary and builtin with the rest, or no ccm at all"},
		{"cloud: fake\nccm: {binary: /nonexistent}\n", "ccm: binary /nonexistent is not an executable file"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar', version: latest}\ncapabilities: [zones]\n", `ccm: version "latest" is not a release (give the image's or binary's as vMAJOR.MINOR.PATCH)`},
		{"cloud: none\nccm: {image: 'docker-archive:x.tar'}\n", "ccm: cloudProvider: not set"},
		{"cloud: fake\nccm: {builtin: true}\ncapabilities: [teleport]\n", `capabilities: "teleport" is none of`},
		{"cloud: none\nccm: {image: 'docker-archive:x.tar', cloudProvider: x}\ncapabilities: [instances]\n", "providerIDScheme: not set"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: []\n", "capabilities: none claimed; claim what the CCM does"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\n", "capabilities: none claimed; claim what the CCM does"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancer-source-ip]\n", "capabilities: load-balancer-source-ip is an extended feature of load-balancers: claim it under features"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [instances]\nproviderIDScheme: x\nfeatures: [load-balancer-udp]\n", "features: load-balancer-udp without load-balancers, the capability it extends"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nfeatures: [udp]\n", `features: "udp" is none of [load-balancer-dual-stack load-balancer-health-checks load-balancer-mixed-protocol`},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\ndifferences: [{spec: loadbalancer/udp, step: provision}]\n", "differences: difference of spec \"loadbalancer/udp\": shows is empty"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\ndifferences: [{spec: serves UDP, step: provision, shows: x, evidence: y}]\n", "spec \"serves UDP\" is none of the suite's (node-init/taint-removed, "},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\ndifferences: [{spec: loadbalancer/udp, step: teleport, shows: x, evidence: y}]\n", "step \"teleport\" is none of"},
		{"cloud: none\nccm: {image: 'docker-archive:x.tar', cloudProvider: x}\ncapabilities: [instances]\nproviderIDScheme: x\n", "instances with cloud: none"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nmanifests: bad.yaml\n", "manifests " + dir + "/bad.yaml: document 2 does not parse"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nmanifests: missing\n", "manifests " + dir + "/missing: stat"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nmanifests: nocontainer.yaml\n", "manifests " + dir + "/nocontainer.yaml: Deployment kube-system/ccm has no container to run the CCM's image in"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nmanifests: twocontainers.yaml\n", "DaemonSet kube-system/ccm has containers a, b and not one alone named *cloud-controller-manager*"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nmanifests: hostpath.yaml\n", "reads --cloud-config=/etc/kubernetes/cloud.conf from volume k8s, which is neither a ConfigMap nor a Secret"},
		{"cloud: fake\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\nmanifests: unmounted.yaml\n", "its container ccm reads --cloud-config=/etc/config/cloud.conf from none of its volumes"},
	} {
		_, _, err := providers.Resolve(providers.External, []byte(tt.file), dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "provider external: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want an error containing %q", tt.file, err, tt.want)
		}
	}
	// An image CCM against fakecloud: the cloud's provider name and scheme.
	// Its relative archive path is taken from the file's folder.
	p, _, err := providers.Resolve(providers.External, []byte("name: mine\ncloud: fake\nccm: {image: 'docker-archive:ccm.tar', args: [--v=4]}\ncapabilities: [instances]\n"), "/profiles")
	if err != nil || p.Name != "mine" || p.CCM.Image != "docker-archive:/profiles/ccm.tar" || p.CloudProvider != "fakecloud" || p.InTreeKCM.Name != "" || p.CCMArgs[len(p.CCMArgs)-1] != "--v=4" {
		t.Errorf("image profile: %+v, %v", p, err)
	}
}

// TestProfileFileRelativePaths: a profile file's relative paths are its
// folder's, wherever the harness runs from; absolute paths and registry
// references are kept.
func TestProfileFileRelativePaths(t *testing.T) {
	for _, tt := range []struct{ image, want string }{
		{"oci:layout", "oci:/p/layout"},
		{"docker-archive:/abs/ccm.tar", "docker-archive:/abs/ccm.tar"},
		{"registry.example/ccm:v1", "registry.example/ccm:v1"},
	} {
		p, _, err := providers.Resolve(providers.External, []byte("cloud: fake\nccm: {image: '"+tt.image+"', cloudConfig: cloud.conf}\ncapabilities: [load-balancers]\n"), "/p")
		if err != nil || p.CCM.Image != tt.want || p.CCMConfigFile != "/p/cloud.conf" {
			t.Errorf("image %s: %q, cloud config %q, %v; want %q and /p/cloud.conf", tt.image, p.CCM.Image, p.CCMConfigFile, err, tt.want)
		}
	}
}

// A difference belongs to a CCM: a profile file whose CCM is its own
// inherits none of the built-in CCM of its cloud (which would be free
// expected failures for a CCM that never showed them), and states its own.
func TestProfileFileDifferencesAreItsOwn(t *testing.T) {
	builtin, _, err := providers.Resolve(providers.External, []byte("cloud: openstack\nccm: {builtin: true}\ncapabilities: [load-balancers]\n"), "/p")
	if err != nil || len(builtin.Differences) == 0 {
		t.Fatalf("builtin OpenStack CCM: differences %v, %v; want the OpenStack CCM's", builtin.Differences, err)
	}
	own, _, err := providers.Resolve(providers.External, []byte("cloud: openstack\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\n"), "/p")
	if err != nil || len(own.Differences) != 0 {
		t.Errorf("an image against OpenStack: differences %v, %v; want none", own.Differences, err)
	}
	theirs, _, err := providers.Resolve(providers.External, []byte("cloud: openstack\ncapabilities: [load-balancers]\n"), "/p")
	if err != nil || len(theirs.Differences) != len(builtin.Differences) {
		t.Errorf("no ccm against OpenStack (an existing cluster's, taken to be the cloud's own): differences %v, %v; want the OpenStack CCM's", theirs.Differences, err)
	}
	stated, _, err := providers.Resolve(providers.External, []byte("cloud: openstack\nccm: {image: 'docker-archive:x.tar'}\ncapabilities: [load-balancers]\n"+
		"differences: [{spec: loadbalancer/udp, step: provision, shows: no UDP, evidence: its cloud has none}]\n"), "/p")
	want := []providers.Difference{{Spec: specs.LBUDP, Step: providers.StepProvision, Shows: "no UDP", Evidence: "its cloud has none"}}
	if err != nil || !slices.Equal(stated.Differences, want) {
		t.Errorf("stated differences: %v, %v; want %v", stated.Differences, err, want)
	}
}
