// Package depcheck checks, in tests, what a package is built from: the
// inspectors of real clouds must not be built on the simulator, whatever
// a later change imports.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t if pkg depends, directly or through others, on a package
// whose path starts with prefix.
func Forbid(t testing.TB, pkg, prefix string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, prefix) {
			t.Errorf("%s depends on %s", pkg, dep)
		}
	}
}
