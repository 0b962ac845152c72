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

// Package matrix is the version matrix of a provider: its CCM's pinned
// versions against the Kubernetes releases the harness builds, every pair
// the version skew policy allows (and, when asked, the CCM one minor newer,
// outside the policy), each run as an ordinary run folder; and what the
// runs say together: a spec that passes in one cell and fails in another.
package matrix

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/skew"
)

// Cell is one combination: a cluster of a Kubernetes release and the CCM
// at one of its versions.
type Cell struct {
	// Cluster is the Kubernetes release (--kubernetes-version).
	Cluster string
	// CCM is the CCM's version (--ccm-version).
	CCM string
	// Skew is where the pair stands against the skew policy.
	Skew skew.Verdict
}

// Name names the cell's run folder: "k8s-v1.35.4_ccm-v1.34.4".
func (c Cell) Name() string { return "k8s-" + c.Cluster + "_ccm-" + c.CCM }

func (c Cell) String() string {
	s := c.Versions()
	if !c.Skew.Within() {
		s += " (" + c.Skew.String() + ")"
	}
	return s
}

// Versions names the cell by its two versions alone: "Kubernetes v1.35.4 /
// CCM v1.34.4".
func (c Cell) Versions() string { return "Kubernetes " + c.Cluster + " / CCM " + c.CCM }

// Cells are the combinations of clusters and CCM versions the policy
// allows, oldest cluster first, then newest CCM; with outside, also each
// CCM exactly one minor newer than the cluster, the disallowed neighbour.
func Cells(clusters, ccms []string, outside bool) ([]Cell, error) {
	var cells []Cell
	for _, k := range clusters {
		for _, v := range ccms {
			verdict, err := skew.Of(k, v)
			if err != nil {
				return nil, err
			}
			switch {
			case verdict == skew.Same || verdict == skew.OneOlder:
			case verdict == skew.Newer && outside && minorGap(v, k) == 1:
			default:
				continue
			}
			cells = append(cells, Cell{Cluster: k, CCM: v, Skew: verdict})
		}
	}
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if ka, kb := minor(a.Cluster), minor(b.Cluster); ka != kb {
			return ka < kb
		}
		return minor(a.CCM) > minor(b.CCM)
	})
	if len(cells) == 0 {
		return nil, fmt.Errorf("no CCM version (%s) is within the version skew policy of any cluster release (%s): %s; pin a CCM of one of those minors in the provider's folder",
			strings.Join(ccms, ", "), strings.Join(clusters, ", "), skew.Policy)
	}
	return cells, nil
}

func minor(release string) int {
	m, _ := skew.Minor(release)
	return m
}

func minorGap(newer, older string) int { return minor(newer) - minor(older) }

// Flip is a spec whose outcome differs between cells within the policy:
// it passed in Passed and failed in each of Failed, with the messages.
type Flip struct {
	Spec     string
	Passed   []string
	Failed   []string
	Messages []string
}

func (f Flip) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  passed in %s\n", f.Spec, strings.Join(f.Passed, ", "))
	for i, cell := range f.Failed {
		fmt.Fprintf(&b, "  failed in %s: %s\n", cell, firstLine(f.Messages[i]))
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Flips are the specs that passed in one cell and failed in another,
// among runs keyed by cell name; cells outside the policy say nothing
// here (their failures are not findings).
func Flips(cells []Cell, runs map[string]*reports.Run) []Flip {
	byName := map[string]*Flip{}
	var order []string
	for _, c := range cells {
		r := runs[c.Name()]
		if r == nil || !c.Skew.Within() {
			continue
		}
		for _, tc := range r.Cases {
			if tc.Outcome != reports.Passed && tc.Outcome != reports.Failed {
				continue
			}
			f := byName[tc.Name]
			if f == nil {
				f = &Flip{Spec: tc.Name}
				byName[tc.Name] = f
				order = append(order, tc.Name)
			}
			if tc.Outcome == reports.Passed {
				f.Passed = append(f.Passed, c.String())
			} else {
				f.Failed = append(f.Failed, c.String())
				f.Messages = append(f.Messages, tc.Message)
			}
		}
	}
	var out []Flip
	for _, name := range order {
		if f := byName[name]; len(f.Passed) > 0 && len(f.Failed) > 0 {
			out = append(out, *f)
		}
	}
	slices.SortFunc(out, func(a, b Flip) int { return strings.Compare(a.Spec, b.Spec) })
	return out
}
