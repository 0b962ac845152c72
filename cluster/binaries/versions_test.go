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

func TestAt(t *testing.T) {
	def, err := VSphereCCM.At("")
	if err != nil || def.version() != OwnModuleVersions[VSphereCCM.Module][0] {
		t.Errorf(`At(""): version %q, err %v; want the first pinned`, def.version(), err)
	}
	other := OwnModuleVersions[VSphereCCM.Module][1]
	if c, err := VSphereCCM.At(other); err != nil || c.version() != other || c.String() != c.Name+" "+other {
		t.Errorf("At(%s): %v, err %v", other, c, err)
	}
	msg := "v0.0.1 of k8s.io/cloud-provider-vsphere is not pinned (pinned: " + strings.Join(OwnModuleVersions[VSphereCCM.Module], ", ") + "; add it to cluster/binaries/versions.go)"
	if _, err := VSphereCCM.At("v0.0.1"); err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("At(v0.0.1): %v, want an error naming the pinned versions", err)
	}
	if _, err := FakeCloudCCM.At("v1.0.0"); err == nil || !strings.Contains(err.Error(), "built from this repository") {
		t.Errorf("fakecloud-ccm At(v1.0.0): %v, want an error", err)
	}
	for module := range OwnModuleVersions {
		if _, inGoMod := Versions[module]; inGoMod {
			t.Errorf("module %s is pinned both in go.mod and as its own module", module)
		}
	}
}

func TestReleaseBuilds(t *testing.T) {
	c := KubeControllerManagerFakecloud
	if !c.ownModule() || c.version() != ReleaseVersions["k8s.io/kubernetes"][0] {
		t.Errorf("%s: own module %t, version %q; want its own module at the first release version", c.Name, c.ownModule(), c.version())
	}
	if _, err := c.At("v1.36.3"); err == nil || !strings.Contains(err.Error(), "is not pinned (pinned: "+strings.Join(ReleaseVersions["k8s.io/kubernetes"], ", ")) {
		t.Errorf("At(v1.36.3): %v, want the release versions named", err)
	}
	if got := stagingVersion("v1.30.14"); got != "v0.30.14" {
		t.Errorf("stagingVersion(v1.30.14) = %s", got)
	}
}

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
	if err := copySources(src, dir, "ccm-harness.local/build/x", KubeControllerManagerFakecloud.Sources, f); err != nil {
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
	h1, err := sourcesHash(src, KubeControllerManagerFakecloud.Sources)
	if err != nil || len(h1) != 12 {
		t.Fatalf("sourcesHash: %q, %v", h1, err)
	}
	if h2, _ := sourcesHash(src, FakeCloudCCMOlder.Sources); h2 == h1 {
		t.Errorf("different sources hash alike: %s", h1)
	}
}
