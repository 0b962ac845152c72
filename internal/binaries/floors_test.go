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

package binaries_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/semver"

	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers"
	_ "sigs.k8s.io/ccm-harness/providers/aws"
	_ "sigs.k8s.io/ccm-harness/providers/fake"
	_ "sigs.k8s.io/ccm-harness/providers/openstack"
	_ "sigs.k8s.io/ccm-harness/providers/vsphere"
)

// TestFloorsResolveOneVersionSet: the CCMs built on a Kubernetes minor
// with a floor (pins.Floors) link every module they share at one version,
// so that the second build finds the first's packages in the Go build
// cache. It generates each one's module and lists what its build links;
// on a difference it prints the floor that resolves it (a floor may need
// a second round: what it lifts can lift more).
func TestFloorsResolveOneVersionSet(t *testing.T) {
	if len(pins.Floors) == 0 {
		t.Skip("no floors pinned")
	}
	byMinor := map[string][]binaries.Component{}
	for _, name := range providers.Names() {
		p, err := providers.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range p.CCM.Choices() {
			c, err := p.CCM.At(v)
			if err != nil {
				t.Fatal(err)
			}
			if binaries.OnFloor(c) {
				byMinor[pins.Minor(v)] = append(byMinor[pins.Minor(v)], c)
			}
		}
	}
	s := &binaries.Source{CacheDir: t.TempDir()}
	for minor := range pins.Floors {
		comps := byMinor[minor]
		if len(comps) < 2 {
			t.Errorf("floor %s: %d CCMs are built on it (%v); a floor is for two or more: remove it", minor, len(comps), comps)
			continue
		}
		t.Run(minor, func(t *testing.T) {
			lists := make([]map[string]string, len(comps))
			for i, c := range comps {
				l, err := s.BuildList(context.Background(), c, filepath.Join(t.TempDir(), c.Name))
				if err != nil {
					t.Fatalf("%s: %v", c, err)
				}
				lists[i] = l
			}
			differ := map[string]string{}
			var diffs []string
			for i := range comps {
				for j := i + 1; j < len(comps); j++ {
					for path, a := range lists[i] {
						b, ok := lists[j][path]
						if !ok || a == b {
							continue
						}
						diffs = append(diffs, fmt.Sprintf("%s: %s links %s, %s links %s", path, comps[i], a, comps[j], b))
						for _, v := range []string{a, b} {
							v, _, _ = strings.Cut(v, " ")
							if differ[path] == "" || semver.Compare(v, differ[path]) > 0 {
								differ[path] = v
							}
						}
					}
				}
			}
			if len(diffs) > 0 {
				var floor []string
				for path, v := range differ {
					floor = append(floor, fmt.Sprintf("%q,", path+" "+v))
				}
				slices.Sort(diffs)
				slices.Sort(floor)
				t.Errorf("the CCMs on Kubernetes %s link %d shared modules at different versions, so each compiles them itself:\n%s\nexpected pins.Floors[%q] to lift them (add, then run again):\n%s",
					minor, len(diffs), strings.Join(diffs, "\n"), minor, strings.Join(floor, "\n"))
			}
		})
	}
}
