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

package conformance

import (
	"fmt"
	"slices"

	"sigs.k8s.io/ccm-harness/specs"
)

// A CCM's specs may run in more than one run of the same cluster: make
// test runs the vSphere and OpenStack CCMs' suites without their
// leader-migration spec, an HA control plane of its own, and make
// e2e-vsphere-upgrade runs that spec alone. Combined puts such runs
// together; Narrowed says what of a report a run that left specs out can
// check.

// sameSubject says how a and b differ in what they judged, if they do: the
// CCM, its release, the cluster's kind and release.
func sameSubject(a, b *Report) error {
	ai, bi := a.Implementation, b.Implementation
	switch {
	case ai.Provider != bi.Provider || ai.CCM != bi.CCM || ai.Version != bi.Version:
		return fmt.Errorf("implementation %s %s %s, against %s %s %s", ai.Provider, ai.CCM, ai.Version, bi.Provider, bi.CCM, bi.Version)
	case a.KubernetesVersion != b.KubernetesVersion || a.Cluster != b.Cluster:
		return fmt.Errorf("Kubernetes %s on a %s cluster, against %s on a %s cluster", a.KubernetesVersion, a.Cluster, b.KubernetesVersion, b.Cluster)
	}
	return nil
}

// Combined is main's report with each spec main's run did not select
// taking its result from extra, a run of the same CCM on a cluster of the
// same kind and release, and the verdicts given again.
func Combined(main, extra *Report) (*Report, error) {
	if err := sameSubject(main, extra); err != nil {
		return nil, fmt.Errorf("the runs judged different things: %w", err)
	}
	r := withSpecs(main, func(s Spec) Spec {
		if s.Result != SpecNotSelected {
			return s
		}
		if e, ok := extra.spec(s.ID); ok && e.Result != SpecNotSelected {
			return e
		}
		return s
	})
	return r, nil
}

// Narrowed is want as a run that selected only the specs run selected
// would have reported it: each spec run left out is not selected in it
// either, and the verdicts are given again. It returns those specs too.
func Narrowed(want, run *Report) (*Report, []specs.ID) {
	var left []specs.ID
	r := withSpecs(want, func(s Spec) Spec {
		if got, ok := run.spec(s.ID); ok && got.Result == SpecNotSelected && s.Result != SpecNotSelected {
			left = append(left, s.ID)
			return Spec{ID: s.ID, Text: s.Text, Level: s.Level, Feature: s.Feature, Result: SpecNotSelected}
		}
		return s
	})
	return r, left
}

// withSpecs is a copy of r with each spec replaced by f's, judged again.
func withSpecs(r *Report, f func(Spec) Spec) *Report {
	c := *r
	c.Capabilities = slices.Clone(r.Capabilities)
	for i := range c.Capabilities {
		specs := slices.Clone(c.Capabilities[i].Specs)
		for j := range specs {
			specs[j] = f(specs[j])
		}
		c.Capabilities[i].Specs = specs
	}
	c.judge()
	return &c
}

// spec is the result of the spec id in r.
func (r *Report) spec(id specs.ID) (Spec, bool) {
	for _, c := range r.Capabilities {
		for _, s := range c.Specs {
			if s.ID == id {
				return s, true
			}
		}
	}
	return Spec{}, false
}

// Group is the name of the capability id's spec counts for in a report
// (leader-migration for the specs of none).
func Group(id specs.ID) string { return groupOf(specs.Get(id)) }
