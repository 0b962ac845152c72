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

package local

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLostLease reads a manager's last run alone: a lease lost in an
// earlier run, before a start again, does not make a crash a yield; and
// v1.37's lines after the loss (the controllers it stops) do not hide it.
func TestLostLease(t *testing.T) {
	const (
		header = "=== 2026-11-29T05:43:58Z /bin/kube-controller-manager --v=1\n"
		lost   = `E1129 05:44:08.179211   21364 controllermanager.go:413] "leaderelection lost/stopped"` + "\n"
		after  = `I1129 05:44:08.187208   21364 controllermanager.go:771] "Controller terminated" controller="cronjob-controller"` + "\n"
		panic  = "panic: runtime error: index out of range\n"
	)
	for _, tc := range []struct {
		name, log string
		want      bool
	}{
		{"lost, then its controllers stopped", header + lost + after + after, true},
		{"a crash", header + panic, false},
		{"lost in the run before, a crash now", header + lost + header + panic, false},
		{"the migration lease, release N's wording", header + `E1129 05:44:08.179211   1 controllermanager.go:322] "migration leaderelection lost"` + "\n", true},
		{"a CCM's wording", header + `E1129 05:44:08.179211   1 controllermanager.go:300] "leaderelection lost"` + "\n", true},
	} {
		path := filepath.Join(t.TempDir(), "kcm.log")
		if err := os.WriteFile(path, []byte(tc.log), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := lostLease(path); got != tc.want {
			t.Errorf("%s: lostLease %v, want %v", tc.name, got, tc.want)
		}
	}
}
