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

package gomod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// ours is this repository: go test runs in the package's folder.
const (
	ours     = "../../.."
	oursPath = "sigs.k8s.io/ccm-harness"
)

// sources are those of a component of this repository built against an
// older release, as the fake provider's release-N managers are.
var sources = []string{"fakecloud/api", "fakecloud/client", "fakecloud/cloudprovider", "fakecloud/cmd/fakecloud-ccm"}

func TestStagingVersion(t *testing.T) {
	if got := StagingVersion("v1.30.14"); got != "v0.30.14" {
		t.Errorf("StagingVersion(v1.30.14) = %s", got)
	}
}

// TestCopySources copies the release build's sources as the build does and
// checks the result: imports rewritten, tests left out, the modules they
// import required at this repository's versions.
func TestCopySources(t *testing.T) {
	dir := t.TempDir()
	f := &modfile.File{}
	_ = f.AddModuleStmt("ccm-harness.local/build/x")
	_ = f.AddGoStmt("1.22.0")
	_ = f.AddReplace("k8s.io/cloud-provider", "", "k8s.io/cloud-provider", "v0.30.14")
	if err := copySources(ours, dir, oursPath, "ccm-harness.local/build/x", sources, f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "fakecloud/cloudprovider/cloud.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ccm-harness.local/build/x/fakecloud/client"`) || strings.Contains(string(data), `"`+oursPath+`/`) {
		t.Errorf("imports not rewritten in cloud.go")
	}
	if tests, _ := filepath.Glob(filepath.Join(dir, "fakecloud/cloudprovider/*_test.go")); len(tests) > 0 {
		t.Errorf("tests copied: %v", tests)
	}
	reqs := map[string]string{}
	for _, r := range f.Require {
		reqs[r.Mod.Path] = r.Mod.Version
	}
	if reqs["sigs.k8s.io/yaml"] == "" || reqs["k8s.io/cloud-provider"] != "" {
		t.Errorf("requires %v: want sigs.k8s.io/yaml at ours, and nothing for the replaced k8s.io/cloud-provider", reqs)
	}
	if f.Go.Version == "1.22.0" {
		t.Errorf("go %s: want this repository's newer go version", f.Go.Version)
	}
	h1, err := SourcesHash(ours, sources)
	if err != nil || len(h1) != 12 {
		t.Fatalf("SourcesHash: %q, %v", h1, err)
	}
	if h2, _ := SourcesHash(ours, sources[:3]); h2 == h1 {
		t.Errorf("different sources hash alike: %s", h1)
	}
}

// TestAlign checks that a generated module takes this repository's
// versions, but for the modules the component keeps its own of.
func TestAlign(t *testing.T) {
	f, err := modfile.Parse("go.mod", []byte("module gen\nrequire up v1.0.0\nreplace k8s.io/kube-proxy => k8s.io/kube-proxy v0.35.0\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := align(ours, f, []string{"github.com/vmware/govmomi", "github.com/aws/"}); err != nil {
		t.Fatal(err)
	}
	mod, err := readGoMod(ours)
	if err != nil {
		t.Fatal(err)
	}
	var kube string
	for _, r := range mod.Require {
		if r.Mod.Path == "k8s.io/kubernetes" {
			kube = r.Mod.Version
		}
	}
	staging := StagingVersion(kube)
	want := map[string]string{"k8s.io/cloud-provider": staging, "k8s.io/kubernetes": kube, "up": "v1.0.0"}
	for _, r := range f.Require {
		if r.Mod.Path == "github.com/vmware/govmomi" || strings.HasPrefix(r.Mod.Path, "github.com/aws/") {
			t.Errorf("require %s %s: this repository's version of a module the component keeps its own of", r.Mod.Path, r.Mod.Version)
		}
		if w, ok := want[r.Mod.Path]; ok && r.Mod.Version != w {
			t.Errorf("require %s %s, want %s", r.Mod.Path, r.Mod.Version, w)
		}
		delete(want, r.Mod.Path)
	}
	if len(want) > 0 {
		t.Errorf("not required: %v", want)
	}
	for _, r := range f.Replace {
		if r.Old.Path == "k8s.io/kube-proxy" && r.New.Version != staging {
			t.Errorf("replace %s => %s, want this repository's %s", r.Old.Path, r.New.Version, staging)
		}
	}
}

// TestStagingRequiredAtTheRelease checks that a release's staging modules
// are required at its version, so that its control plane's build and a
// CCM's built on it key their packages alike in the Go build cache, and
// that an aligned build leaves them to this repository's versions.
func TestStagingRequiredAtTheRelease(t *testing.T) {
	up, err := modfile.Parse("go.mod", []byte("module k8s.io/kubernetes\nrequire k8s.io/api v0.0.0\nreplace k8s.io/api => ./staging/src/k8s.io/api\n"+
		"replace k8s.io/sample-cli-plugin => ./staging/src/k8s.io/sample-cli-plugin\nreplace example.com/fork => example.com/fork v1.2.3\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, align := range []bool{false, true} {
		f := &modfile.File{}
		_ = f.AddModuleStmt("ccm-harness.local/build/x")
		repeatReplaces(f, up, Spec{Module: "k8s.io/kubernetes", Version: "v1.34.4", Align: align})
		reqs := map[string]string{}
		for _, r := range f.Require {
			reqs[r.Mod.Path] = r.Mod.Version
		}
		replaces := map[string]string{}
		for _, r := range f.Replace {
			replaces[r.Old.Path] = r.New.Path + "@" + r.New.Version
		}
		if replaces["k8s.io/api"] != "k8s.io/api@v0.34.4" || replaces["example.com/fork"] != "example.com/fork@v1.2.3" {
			t.Errorf("align %t: replaces %v, want k8s.io/api by v0.34.4 and the fork repeated", align, replaces)
		}
		want := "v0.34.4"
		if align {
			want = ""
		}
		if reqs["k8s.io/api"] != want {
			t.Errorf("align %t: require k8s.io/api %q, want %q", align, reqs["k8s.io/api"], want)
		}
		if v, ok := reqs["k8s.io/sample-cli-plugin"]; ok {
			t.Errorf("align %t: require k8s.io/sample-cli-plugin %s: a sample no component links", align, v)
		}
	}
}

// TestRaise checks that a floor lifts a lower requirement and adds a
// missing one, and leaves a higher one, a replaced one (v0.0.0) and the
// component's own modules alone.
func TestRaise(t *testing.T) {
	f, err := modfile.Parse("go.mod", []byte("module gen\nrequire (\n\tlow v1.0.0\n\thigh v1.9.0\n\tk8s.io/api v0.0.0\n\tgithub.com/aws/sdk v1.0.0\n)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	floor := []string{"low v1.2.0", "high v1.5.0", "absent v0.3.0", "k8s.io/api v0.36.3", "github.com/aws/sdk v1.4.0"}
	if err := raise(f, floor, []string{"github.com/aws/"}); err != nil {
		t.Fatal(err)
	}
	reqs := map[string]string{}
	for _, r := range f.Require {
		reqs[r.Mod.Path] = r.Mod.Version
	}
	want := map[string]string{"low": "v1.2.0", "high": "v1.9.0", "absent": "v0.3.0", "k8s.io/api": "v0.0.0", "github.com/aws/sdk": "v1.0.0"}
	for path, v := range want {
		if reqs[path] != v {
			t.Errorf("require %s %q, expected %s (floor %v)", path, reqs[path], v, floor)
		}
	}
	if err := raise(f, []string{"no-version"}, nil); err == nil || !strings.Contains(err.Error(), "no-version") {
		t.Errorf("a floor line without a version: expected an error naming it, actual %v", err)
	}
}
