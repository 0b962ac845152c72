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
