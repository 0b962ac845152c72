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

package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"sigs.k8s.io/ccm-harness/scenarios"
)

// freeVerdict is why a run that Ginkgo calls passed proves nothing, or
// "": no spec was selected (a mistyped label filter), or every selected
// spec skipped before checking anything (a provider that claims nothing
// the runtime can run, a filter that picks only what it does not claim).
// A spec skipped at its cloud-side part (scenarios.LateSkip) checked what
// Kubernetes shows first, and counts as checking something. A dry run
// skips every spec by design and is said to be one elsewhere.
func freeVerdict(r ginkgo.Report, dryRun bool) string {
	var passed, checked int
	skipped := map[string]int{}
	var labels []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		for _, l := range s.Labels() {
			if !scenarios.IsNeed(l) && !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
		switch {
		case s.State.Is(types.SpecStatePassed):
			passed++
		case s.State.Is(types.SpecStateSkipped) && strings.HasPrefix(s.Failure.Message, scenarios.LateSkip):
			checked++
		case s.State.Is(types.SpecStateSkipped) && s.Failure.Message != "":
			skipped[s.Failure.Message]++
		}
	}
	if r.PreRunStats.SpecsThatWillRun == 0 {
		sort.Strings(labels)
		return fmt.Sprintf("no spec selected: the label filter %q%s selects none of the suite's %d specs (their labels: %s); fix the filter",
			r.SuiteConfig.LabelFilter, focusOf(r.SuiteConfig), r.PreRunStats.TotalSpecs, strings.Join(labels, ", "))
	}
	if passed > 0 || checked > 0 || dryRun {
		return ""
	}
	reasons := make([]string, 0, len(skipped))
	for why, n := range skipped {
		reasons = append(reasons, fmt.Sprintf("%d: %s", n, why))
	}
	sort.Strings(reasons)
	return fmt.Sprintf("no spec passed: each of the %d selected specs skipped, which proves nothing about the CCM; select specs this provider and runtime can run (%s)",
		r.PreRunStats.SpecsThatWillRun, strings.Join(reasons, "; "))
}

func focusOf(c types.SuiteConfig) string {
	if len(c.FocusStrings) == 0 {
		return ""
	}
	return fmt.Sprintf(" with focus %q", c.FocusStrings)
}
