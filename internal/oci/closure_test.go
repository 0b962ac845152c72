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

package oci

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestInRootStaysInRoot(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "usr/lib/x86_64-linux-gnu"), 0o755))
	must(os.WriteFile(filepath.Join(root, "usr/lib/x86_64-linux-gnu/libc.so.6"), []byte("libc"), 0o644))
	// Merged /usr, as Debian has it: absolute links that must resolve in
	// the root, not on the host.
	must(os.Symlink("usr/lib", filepath.Join(root, "lib")))
	must(os.Symlink("/usr/lib/x86_64-linux-gnu/libc.so.6", filepath.Join(root, "usr/lib/libc-link")))
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/libc-link", "/lib/libc-link"} {
		got, err := InRoot(root, p)
		if err != nil {
			t.Fatalf("InRoot(%s): %v", p, err)
		}
		if want := filepath.Join(root, "usr/lib/x86_64-linux-gnu/libc.so.6"); got != want {
			t.Errorf("InRoot(%s) = %s, want %s", p, got, want)
		}
	}
	if _, err := InRoot(root, "/etc/passwd"); err == nil {
		t.Error("inRoot found /etc/passwd in an empty root: it looked on the host")
	}
	must(os.Symlink("loop", filepath.Join(root, "loop")))
	if _, err := InRoot(root, "/loop"); err == nil || !strings.Contains(err.Error(), "too many") {
		t.Errorf("a link to itself: err %v, want too many links", err)
	}
}

// The host is a Debian of the same kind as the nodes' root file system, so
// its own libraries stand in for one: a dynamically linked host binary
// must bring its interpreter and libc.
func TestClosureOfADynamicBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF closure is for Linux nodes")
	}
	bin := "/bin/ls"
	if _, err := os.Stat(bin); err != nil {
		t.Skip("no /bin/ls")
	}
	files := map[string]string{"/bin/ls": bin}
	if err := Closure("/", files); err != nil {
		t.Fatal(err)
	}
	var haveLibc, haveInterp bool
	for p := range files {
		haveLibc = haveLibc || strings.HasSuffix(p, "/libc.so.6")
		haveInterp = haveInterp || strings.Contains(p, "ld-linux")
	}
	if !haveLibc || !haveInterp {
		t.Errorf("closure of /bin/ls = %v, want libc.so.6 and the ld-linux interpreter", files)
	}
}

func TestClosureNamesAMissingLibrary(t *testing.T) {
	root := t.TempDir()
	err := Closure(root, map[string]string{"/bin/ls": "/bin/ls"})
	if err == nil || !strings.Contains(err.Error(), "lacks") && !strings.Contains(err.Error(), "interpreter") {
		t.Errorf("closure against an empty root: err %v, want one naming what is missing", err)
	}
}
