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

package pins

import (
	"os/exec"
	"strings"
	"testing"
)

func TestVersionsMatchGoMod(t *testing.T) {
	for module, pinned := range Versions {
		// go test runs in the package's folder; go list finds go.mod
		// above it, at the module's root.
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", module).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -m %s: %v: %s", module, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != pinned {
			t.Errorf("module %s: go.mod requires %s, Versions pins %s: change them together", module, got, pinned)
		}
	}
}
