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

package nodeimage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRemoveRootUnmounts: a root left with /proc mounted, as a debootstrap
// stopped mid-way leaves it, is removed whole.
func TestRemoveRootUnmounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting /proc needs root")
	}
	dir, err := os.MkdirTemp("", "ccm-harness-nodeimage-test-")
	if err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(dir, "rootfs", "proc")
	if err := os.MkdirAll(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("proc", proc, "proc", 0, ""); err != nil {
		os.RemoveAll(dir)
		t.Skipf("cannot mount proc here: %v", err)
	}
	removeRoot(dir)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		_ = syscall.Unmount(proc, syscall.MNT_DETACH)
		os.RemoveAll(dir)
		t.Fatalf("expected %s removed with its mounted /proc, actual: %v", dir, err)
	}
}
