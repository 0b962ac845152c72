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

package deployer

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kubetest2/pkg/app"

	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// common is kubetest2's common options as a test sets them.
type common struct {
	build, up, down bool
	runID, runDir   string
}

func (o common) HelpRequested() bool       { return false }
func (o common) ShouldBuild() bool         { return o.build }
func (o common) ShouldUp() bool            { return o.up }
func (o common) ShouldDown() bool          { return o.down }
func (o common) ShouldTest() bool          { return false }
func (o common) SkipTestJUnitReport() bool { return false }
func (o common) RunID() string             { return o.runID }
func (o common) RunDir() string            { return o.runDir }
func (o common) RundirInArtifacts() bool   { return false }

// kubetest2 panics when a deployer flag repeats one of its own; --help
// goes through that check and no further.
func TestFlagsLeaveKubetest2sAlone(t *testing.T) {
	cmd := app.NewCommand(Name, New)
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("kubetest2 ccm-harness --help: %v\n%s", err, out.String())
	}
	for _, f := range []string{"--provider", "--cluster", "--ccm-version", "--ccm-image", "--nodes", "--provider-config", "--bin-dir", "--cluster-name", "--wait"} {
		if !strings.Contains(out.String(), f+" ") {
			t.Errorf("usage lacks %s:\n%s", f, out.String())
		}
	}
	// It offers the runtimes it has: local alone.
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "--cluster ") && (!strings.Contains(line, "local (") || strings.Contains(line, "kind (") || strings.Contains(line, "existing (")) {
			t.Errorf("--cluster's help offers other runtimes than local: %s", line)
		}
	}
}

var clusterName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$`)

func TestNameFor(t *testing.T) {
	long := strings.Repeat("Prow_Job.", 8)
	for _, tt := range []struct{ runID, want string }{
		{"0b9e5f7c-4a33-4c38-9a4e-3a6b2b1d9f10", "kt2-0b9e5f7c-4a33-4c38-9a4e-3a6b2b1d9f10"},
		{"Smoke_1", "kt2-smoke-1"},
		{"--", "kt2"},
		{long + "a", ""},
		{long + "b", ""},
	} {
		got := nameFor(tt.runID)
		if !clusterName.MatchString(got) {
			t.Errorf("nameFor(%q) = %q, not a valid cluster name", tt.runID, got)
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("nameFor(%q) = %q, want %q", tt.runID, got, tt.want)
		}
	}
	if a, b := nameFor(long+"a"), nameFor(long+"b"); a == b {
		t.Errorf("run IDs differing past 42 characters share the cluster name %q", a)
	}
}

func TestInitRefusesBadInput(t *testing.T) {
	t.Setenv("ARTIFACTS", t.TempDir())
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown provider", []string{"--provider=nosuch"}, []string{`--provider "nosuch" is not a provider (known: aws, fake, openstack, vsphere, external; external takes a profile file as --provider-config)`}},
		{"unknown cluster", []string{"--cluster=kind"}, []string{`--cluster "kind" is not a runtime this deployer has (known: local)`}},
		{"unpinned CCM", []string{"--provider=vsphere", "--ccm-version=v0.0.1"}, []string{"version v0.0.1 of k8s.io/cloud-provider-vsphere is not pinned", "pin another in providers/vsphere/"}},
		{"missing binary directory", []string{"--bin-dir=/nonexistent"}, []string{"etcd not found in the binary directory /nonexistent", "or leave --bin-dir and BIN_DIR unset to build them"}},
		{"unreadable provider config", []string{"--provider-config=/nonexistent.yaml"}, []string{"--provider-config: open /nonexistent.yaml", "name a readable provider config file"}},
		{"negative nodes", []string{"--nodes=-1"}, []string{"--nodes -1: the node specs need nodes to check (give 1 or more)"}},
		{"no nodes", []string{"--nodes=0"}, []string{"--nodes 0: the node specs need nodes to check (give 1 or more)"}},
		{"profile file missing", []string{"--provider=external"}, []string{"provider external: no profile file given"}},
		{"image and a version that is no release", []string{"--ccm-image=docker-archive:/x.tar", "--provider=vsphere", "--ccm-version=latest"}, []string{`--ccm-version "latest" beside --ccm-image names the image's release: give it as vMAJOR.MINOR.PATCH`}},
		{"bad name", []string{"--cluster-name=a_b"}, []string{`--cluster-name: cluster name "a_b" is not valid`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, fs := New(common{up: true, down: true, runID: "x", runDir: t.TempDir()})
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := d.(*Deployer).Init()
			if err == nil {
				t.Fatal("Init accepted it")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// Build stamps kubectl with the harness's Kubernetes release; this
// module must build it from that release.
func TestKubectlIsTheHarnesssRelease(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes: %v", err)
	}
	if got, want := strings.TrimSpace(string(out)), pins.ModuleVersion(pins.Kubernetes); got != want {
		t.Errorf("this module builds kubectl from k8s.io/kubernetes %s, the harness runs %s (align the require in go.mod)", got, want)
	}
}

func TestVersionIsTheCCMUnderTest(t *testing.T) {
	for _, tt := range []struct{ args []string }{{[]string{"--provider=fake"}}, {[]string{"--provider=vsphere", "--ccm-version=v1.30.1"}}} {
		d, fs := New(common{})
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"fake": "fakecloud-ccm@" + pins.ModuleVersion(pins.Kubernetes), "vsphere": "vsphere-cloud-controller-manager@v1.30.1"}[d.(*Deployer).opts.Provider]
		if got := d.(*Deployer).Version(); got != want {
			t.Errorf("Version() with %v = %q, want %q", tt.args, got, want)
		}
	}
}
