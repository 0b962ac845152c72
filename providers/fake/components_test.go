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

package fake

import (
	"testing"

	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers/emulated"
)

// The leader-migration specs' CCM roll starts from the CCM of the minor
// before the one under test, where one is built; from release N's (the
// in-tree era's) only below the oldest supported minor.
func TestOlderCCMIsThePreviousMinor(t *testing.T) {
	def := pins.ModuleVersion(pins.Kubernetes)
	for _, tc := range []struct{ ccm, older string }{
		{"", "v1.36.3"},
		{def, "v1.36.3"},
		{"v1.36.3", "v1.35.4"},
		{"v1.35.4", "v1.34.4"},
		{"v1.34.4", releaseN[0]},
	} {
		p, err := Profile().WithCCMVersion(tc.ccm)
		if err != nil {
			t.Fatalf("WithCCMVersion(%q): %v", tc.ccm, err)
		}
		if got := p.OlderCCM.Release(); got != tc.older {
			t.Errorf("CCM %q: expected the CCM to upgrade from at %s, actual %s (%s)", tc.ccm, tc.older, got, p.OlderCCM)
		}
		if p.OlderCCM.Name != OlderCCM.Name {
			t.Errorf("CCM %q: expected the older CCM called %s, actual %s", tc.ccm, OlderCCM.Name, p.OlderCCM.Name)
		}
	}
}

// Step lines and the timeline name each CCM with its release: the one
// built from this checkout too ("rolling the CCMs from fakecloud-ccm-older
// v1.36.3 to fakecloud-ccm v1.37.2"); fakecloud itself has none.
func TestCCMNamedWithItsRelease(t *testing.T) {
	def := pins.ModuleVersion(pins.Kubernetes)
	if got, want := CCM.String(), "fakecloud-ccm "+def; got != want {
		t.Errorf("expected the CCM built from this checkout named %q, actual %q", want, got)
	}
	if got := emulated.FakeCloud.String(); got != "fakecloud" {
		t.Errorf("expected fakecloud named without a release, actual %q", got)
	}
}
