package binaries

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func TestVersionsMatchGoMod(t *testing.T) {
	for module, pinned := range Versions {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", module).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -m %s: %v: %s", module, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != pinned {
			t.Errorf("module %s: go.mod requires %s, Versions pins %s: change them together", module, got, pinned)
		}
	}
}

// own is a component built in a module of its own, pinned where it is
// defined, as a provider pins its CCM.
var own = Component{Name: "own-ccm", Module: "example.com/own", Package: "example.com/own/cmd/ccm", Versions: []string{"v1.2.0", "v1.1.0"}}

func TestAt(t *testing.T) {
	def, err := own.At("")
	if err != nil || def.version() != "v1.2.0" {
		t.Errorf(`At(""): version %q, err %v; want the first pinned`, def.version(), err)
	}
	if c, err := own.At("v1.1.0"); err != nil || c.version() != "v1.1.0" || c.String() != c.Name+" v1.1.0" {
		t.Errorf("At(v1.1.0): %v, err %v", c, err)
	}
	msg := "version v0.0.1 of example.com/own is not pinned (pinned: v1.2.0, v1.1.0)"
	if _, err := own.At("v0.0.1"); err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("At(v0.0.1): %v, want an error naming the pinned versions", err)
	}
	if !own.ownModule() || KubeAPIServer.ownModule() {
		t.Errorf("ownModule: %t for a component with Versions, %t for one of go.mod's", own.ownModule(), KubeAPIServer.ownModule())
	}
	if _, err := KubeAPIServer.At("v1.0.0"); err == nil || !strings.Contains(err.Error(), "(pinned: "+Versions["k8s.io/kubernetes"]+", ") {
		t.Errorf("kube-apiserver At(v1.0.0): %v, want go.mod's version named first", err)
	}
	// Another supported release is built in a module of its own; go.mod's
	// is not.
	for _, v := range KubernetesReleases {
		c, err := KubeAPIServer.At(v)
		if err != nil {
			t.Fatalf("kube-apiserver At(%s): %v", v, err)
		}
		if want := v != Versions["k8s.io/kubernetes"]; c.ownModule() != want || c.Release() != v {
			t.Errorf("kube-apiserver At(%s): ownModule %t (want %t), release %s", v, c.ownModule(), want, c.Release())
		}
	}
	// A component of this repository on another release it lists.
	ccm := Component{Name: "ours-ccm", Module: ModulePath, Package: ModulePath + "/cmd/ccm", Sources: []string{"cmd/ccm"}, Releases: []string{"v1.34.4"}}
	if c, err := ccm.At("v1.34.4"); err != nil || !c.ownModule() || c.Release() != "v1.34.4" || c.Module != "k8s.io/kubernetes" || len(c.Sources) != 1 {
		t.Errorf("ours-ccm At(v1.34.4): %+v, err %v; want a release build with its sources", c, err)
	}
	if c, err := ccm.At(Versions["k8s.io/kubernetes"]); err != nil || c.ownModule() || c.Release() != Versions["k8s.io/kubernetes"] {
		t.Errorf("ours-ccm At(go.mod's release): %+v, err %v; want the build from the source tree", c, err)
	}
	if _, err := ccm.At("v1.35.4"); err == nil || !strings.Contains(err.Error(), "built on: "+Versions["k8s.io/kubernetes"]+", v1.34.4") {
		t.Errorf("ours-ccm At(v1.35.4): %v, want the releases it is built on named", err)
	}
	ours := Component{Name: "ours", Module: ModulePath, Package: ModulePath + "/cmd/x"}
	if _, err := ours.At("v1.0.0"); err == nil || !strings.Contains(err.Error(), "built from this repository") {
		t.Errorf("ours At(v1.0.0): %v, want an error", err)
	}
	if got := stagingVersion("v1.30.14"); got != "v0.30.14" {
		t.Errorf("stagingVersion(v1.30.14) = %s", got)
	}
}

// release is a component of this repository built against an older
// release, as the fake provider's release-N managers are.
var release = Component{Name: "rel", Module: "k8s.io/kubernetes", Package: ModulePath + "/fakecloud/cmd/fakecloud-ccm",
	Versions: []string{"v1.30.14"}, Sources: []string{"fakecloud/api", "fakecloud/client", "fakecloud/cloudprovider", "fakecloud/cmd/fakecloud-ccm"}}

// TestCopySources copies the release build's sources as the build does and
// checks the result: imports rewritten, tests left out, the modules they
// import required at this repository's versions.
func TestCopySources(t *testing.T) {
	src, err := (&Source{}).sourceDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &modfile.File{}
	_ = f.AddModuleStmt("ccm-harness.local/build/x")
	_ = f.AddGoStmt("1.22.0")
	_ = f.AddReplace("k8s.io/cloud-provider", "", "k8s.io/cloud-provider", "v0.30.14")
	if err := copySources(src, dir, "ccm-harness.local/build/x", release.Sources, f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "fakecloud/cloudprovider/cloud.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ccm-harness.local/build/x/fakecloud/client"`) || strings.Contains(string(data), `"`+ModulePath+`/`) {
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
	h1, err := sourcesHash(src, release.Sources)
	if err != nil || len(h1) != 12 {
		t.Fatalf("sourcesHash: %q, %v", h1, err)
	}
	if h2, _ := sourcesHash(src, release.Sources[:3]); h2 == h1 {
		t.Errorf("different sources hash alike: %s", h1)
	}
}

// TestAlign checks that a generated module takes this repository's
// versions.
func TestAlign(t *testing.T) {
	f, err := modfile.Parse("go.mod", []byte("module gen\nrequire up v1.0.0\nreplace k8s.io/kube-proxy => k8s.io/kube-proxy v0.35.0\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := align("../..", f); err != nil {
		t.Fatal(err)
	}
	staging := stagingVersion(ModuleVersion("k8s.io/kubernetes"))
	want := map[string]string{"k8s.io/cloud-provider": staging, "k8s.io/kubernetes": ModuleVersion("k8s.io/kubernetes"), "up": "v1.0.0"}
	for _, r := range f.Require {
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
