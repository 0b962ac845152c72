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

// Package layers holds the test of the direction between the harness's
// layers: the specs and the clouds' descriptions below, the runtimes that
// make clusters of them above, the scenarios above those, the doors on top.
// An import that points up is a cycle in the making, and a provider that
// imports a runtime is no longer "one folder".
package layers

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "sigs.k8s.io/ccm-harness/"

// below are, for each layer (a package or a folder of them, by path
// inside the module), the layers it must not import. A layer's path
// covers the packages under it.
var below = []struct {
	layer  string
	not    []string
	reason string
}{
	{"specs", []string{""}, "a leaf: the CLI and the providers read it without anything else of the harness"},
	{"manifests", []string{"cluster", "providers", "scenarios", "options"}, "the providers' manifests, read by providers and runtimes alike"},
	{"internal", []string{"cluster", "providers", "scenarios", "options", "e2e", "cmd"}, "machinery under every layer"},
	{"fakecloud", []string{"cluster", "providers", "scenarios", "options", "e2e", "cmd"}, "the simulator serves any caller"},
	{"fakecloud/model", []string{"fakecloud/server", "fakecloud/aws", "fakecloud/openstack", "fakecloud/client", "fakecloud/cloudprovider", "fakecloud/machines", "fakecloud/cmd"}, "the cloud itself, under every API that fronts it"},
	{"fakecloud/server/native", []string{"fakecloud/server", "fakecloud/aws", "fakecloud/openstack"}, "a front reaches the cloud through the model, not through the server or another dialect"},
	{"fakecloud/aws", []string{"fakecloud/server", "fakecloud/openstack"}, "a front reaches the cloud through the model, not through the server or another dialect"},
	{"fakecloud/openstack", []string{"fakecloud/server", "fakecloud/aws"}, "a front reaches the cloud through the model, not through the server or another dialect"},
	{"fakecloud/aws/awsquery", []string{"fakecloud/aws/ec2", "fakecloud/aws/elb", "fakecloud/aws/elbv2"}, "the protocol the AWS fronts share, under them"},
	{"fakecloud/aws/ec2", []string{"fakecloud/aws/elb", "fakecloud/aws/elbv2"}, "Elastic Load Balancing takes EC2's subnets; EC2 knows nothing of it"},
	{"fakecloud/aws/elb", []string{"fakecloud/aws/elbv2"}, "v2 shares the classic API's errors and reads, not the reverse"},
	{"fakecloud/openstack/openstackjson", []string{"fakecloud/openstack/keystone", "fakecloud/openstack/nova", "fakecloud/openstack/neutron", "fakecloud/openstack/octavia"}, "the protocol the OpenStack fronts share, under them"},
	{"fakecloud/openstack/keystone", []string{"fakecloud/openstack/nova", "fakecloud/openstack/neutron", "fakecloud/openstack/octavia"}, "OpenStack's services share through openstackjson and the model, not through each other"},
	{"fakecloud/openstack/nova", []string{"fakecloud/openstack/keystone", "fakecloud/openstack/neutron", "fakecloud/openstack/octavia"}, "OpenStack's services share through openstackjson and the model, not through each other"},
	{"fakecloud/openstack/neutron", []string{"fakecloud/openstack/keystone", "fakecloud/openstack/nova", "fakecloud/openstack/octavia"}, "OpenStack's services share through openstackjson and the model, not through each other"},
	{"fakecloud/openstack/octavia", []string{"fakecloud/openstack/keystone", "fakecloud/openstack/nova", "fakecloud/openstack/neutron"}, "OpenStack's services share through openstackjson and the model, not through each other"},
	{"upstream", []string{"cluster", "providers", "scenarios", "options", "e2e", "cmd"}, "judges a run of Kubernetes' own suite from its results alone"},
	{"providers", []string{"cluster", "scenarios", "options", "e2e", "cmd"}, "providers describe clouds and CCMs; runtimes import them, never the reverse"},
	{"cluster", []string{"scenarios", "options", "e2e", "cmd"}, "the runtimes make clusters; the scenarios and doors use them"},
	{"cluster/local", []string{"cluster/kind", "cluster/existing"}, "runtimes share through package cluster, not through each other"},
	{"cluster/kind", []string{"cluster/local", "cluster/existing"}, "runtimes share through package cluster, not through each other"},
	{"cluster/existing", []string{"cluster/local", "cluster/kind"}, "runtimes share through package cluster, not through each other"},
	{"scenarios", []string{"options", "e2e", "cmd"}, "the specs run on any door"},
	{"options", []string{"scenarios", "e2e", "cmd"}, "the one path every door takes"},
}

// under reports whether pkg (a path inside the module) is layer or a
// package under it; "" is every package of the module.
func under(pkg, layer string) bool {
	return layer == "" || pkg == layer || strings.HasPrefix(pkg, layer+"/")
}

// TestLayers walks every package's imports (go list) and fails on each
// that points up, naming it and why the layers go one way.
func TestLayers(t *testing.T) {
	// go test runs a test in its package's folder.
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		pkg := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			for _, rule := range below {
				if !under(pkg, rule.layer) {
					continue
				}
				for _, not := range rule.not {
					// A layer's own packages may import each other.
					if under(dep, not) && !under(dep, rule.layer) {
						t.Errorf("%s imports %s: %s must not import %s (%s)", pkg, dep, rule.layer, orModule(not), rule.reason)
					}
				}
			}
			if a, b := providerOf(pkg), providerOf(dep); a != "" && b != "" && a != b {
				t.Errorf("%s imports %s: provider %s is built on provider %s; a provider is one folder, and what two share lives in providers or %s", pkg, dep, a, b, shared[0])
			}
		}
	}
	if n < 40 {
		t.Errorf("go list gave %d packages; the module has more", n)
	}
}

// shared are the folders under providers that are no provider's: what
// providers are built on.
var shared = []string{"providers/emulated"}

// providerOf is the provider whose folder holds pkg (a path inside the
// module), or "".
func providerOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, "providers/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	for _, s := range shared {
		if under(pkg, s) {
			return ""
		}
	}
	return name
}

func orModule(layer string) string {
	if layer == "" {
		return "any package of the harness"
	}
	return layer
}
