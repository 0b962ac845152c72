package binaries

import (
	"os/exec"
	"strings"
	"testing"
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
