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
