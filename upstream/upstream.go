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

// Package upstream judges a run of Kubernetes' own e2e suite (the e2e.test
// of a release) against a cluster the harness made: every spec the focus
// selects passes, or its provider's list says why it cannot pass here. The
// list is strict both ways: a listed spec that passes, or a listed name
// that matches no spec, fails the verdict too, so the list cannot go stale.
package upstream

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"sigs.k8s.io/ccm-harness/reports"
)

// Focus is the upstream specs make e2e-upstream runs: Kubernetes' own
// load-balancer e2e (test/e2e/network/loadbalancer.go).
const Focus = `\[Feature:LoadBalancer\]`

// Expectations are what a provider says of upstream's specs: those that
// cannot pass against its clusters here, each with why.
type Expectations struct {
	// Unsupported, if set, says why upstream's suite cannot judge the
	// provider here at all: the run is refused before any bring-up.
	Unsupported string `json:"unsupported,omitempty"`
	// CannotPass are upstream specs that fail or skip here, each named
	// by a part of its name.
	CannotPass []Exception `json:"cannotPass"`
}

// Exception is one upstream spec that cannot pass here.
type Exception struct {
	// Spec is a part of the spec's full name, which matches it alone.
	Spec string `json:"spec"`
	// Reason says why, with the evidence: what the spec needs that the
	// cluster, the cloud or the CCM does not have.
	Reason string `json:"reason"`
	// Race, when set, says the spec catches the CCM's fault only by
	// chance, and on what the chance turns (where the scheduler puts its
	// pods): it fails or passes, and neither is judged; a skip still is.
	// Such an entry must name the harness spec that catches the same
	// fault every run (DecidedBy), so the fault is never left unjudged.
	Race string `json:"race,omitempty"`
	// DecidedBy is that spec: one of the provider's known differences
	// (providers.Difference), a strict expected failure.
	DecidedBy string `json:"decidedBy,omitempty"`
}

// Read reads a provider's expectations (its folder's upstream.yaml).
func Read(path string) (*Expectations, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the upstream expectations: %w (each provider's folder has an upstream.yaml; an empty list says every spec passes)", err)
	}
	var e Expectations
	if err := yaml.UnmarshalStrict(data, &e); err != nil {
		return nil, fmt.Errorf("%s: %w (want cannotPass: a list of spec and reason)", path, err)
	}
	if e.Unsupported != "" && len(e.CannotPass) > 0 {
		return nil, fmt.Errorf("%s: unsupported and cannotPass: a provider upstream's suite cannot judge lists no specs", path)
	}
	for i, x := range e.CannotPass {
		if strings.TrimSpace(x.Spec) == "" || strings.TrimSpace(x.Reason) == "" {
			return nil, fmt.Errorf("%s: cannotPass entry %d has no spec or no reason: each names a spec and says why it cannot pass", path, i+1)
		}
		if (x.Race == "") != (x.DecidedBy == "") {
			return nil, fmt.Errorf("%s: cannotPass entry %d (%q) has race or decidedBy without the other: a spec that fails by chance names the harness spec that fails every run (a known difference of the provider)", path, i+1, x.Spec)
		}
	}
	return &e, nil
}

// Decided says which entry that fails by chance names as its DecidedBy a
// spec that is none of known, the provider's known differences: the fault
// it catches by chance would then be judged nowhere.
func (e *Expectations) Decided(known []string) error {
	list := "it has none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	for _, x := range e.CannotPass {
		if x.DecidedBy != "" && !slices.Contains(known, x.DecidedBy) {
			return fmt.Errorf("%q fails by chance and names %q as the spec that fails every run, which is none of the provider's known differences (%s): name one, or list the spec as one that cannot pass", x.Spec, x.DecidedBy, list)
		}
	}
	return nil
}

// Skip is a --ginkgo.skip that leaves out every listed spec: a run that
// checks only that the rest pass, without waiting out the listed ones'
// timeouts (ten minutes and more each); "" for an empty list.
func (e *Expectations) Skip() string {
	var parts []string
	for _, x := range e.CannotPass {
		parts = append(parts, regexp.QuoteMeta(x.Spec))
	}
	return strings.Join(parts, "|")
}

// Result is one selected upstream spec and what its run and the
// expectations make of it.
type Result struct {
	Spec    string
	Outcome reports.Outcome
	// Message is the failure message or skip reason.
	Message string
	// Reason is the expectations' reason, if the spec is listed.
	Reason string
	// Race is the entry's race, if it is listed as failing by chance: its
	// pass or failure is reported, not judged.
	Race string
	// Wrong says what is wrong with the spec's outcome; empty when it is
	// as expected.
	Wrong string
}

// Verdict is a run judged.
type Verdict struct {
	Results []Result
	// Stale are listed names that match no spec of the suite, run or
	// left out.
	Stale []string
	// Ambiguous say which listed names match more than one spec.
	Ambiguous []string
	// LeftOut are the listed specs the run left out (--skip-listed, or
	// the focus): neither run nor judged, but counted, so that a summary
	// does not read as if nothing were listed.
	LeftOut []string
}

// Judge judges the specs run selected against e; a suite-level failure
// (its setup) is judged under its own name.
func Judge(run *reports.Run, e *Expectations) Verdict {
	var v Verdict
	// How many of the suite's specs, run or left out, each entry names.
	used := make([]int, len(e.CannotPass))
	for _, c := range run.Cases {
		var listed []int
		for i, x := range e.CannotPass {
			if strings.Contains(c.Name, x.Spec) {
				listed = append(listed, i)
				used[i]++
			}
		}
		if c.NotSelected() {
			// Left out by the focus or --skip: not judged, but its name is
			// upstream's still, so an entry naming it is not stale.
			if len(listed) > 0 {
				v.LeftOut = append(v.LeftOut, c.Name)
			}
			continue
		}
		r := Result{Spec: c.Name, Outcome: c.Outcome, Message: firstLine(c.Message)}
		switch {
		case len(listed) > 1:
			r.Wrong = fmt.Sprintf("named by %d cannotPass entries: make each name one spec alone", len(listed))
		case len(listed) == 1 && e.CannotPass[listed[0]].Race != "":
			x := e.CannotPass[listed[0]]
			r.Reason, r.Race = x.Reason, x.Race
			if c.Outcome == reports.Skipped {
				r.Wrong = "skipped (" + r.Message + "), though listed as one that fails by chance: it must run"
			}
		case len(listed) == 1 && c.Outcome == reports.Passed:
			r.Reason = e.CannotPass[listed[0]].Reason
			r.Wrong = "passed, though listed as one that cannot: drop it from the list"
		case len(listed) == 1:
			r.Reason = e.CannotPass[listed[0]].Reason
		case c.Outcome == reports.Failed:
			r.Wrong = "failed: " + r.Message
		case c.Outcome == reports.Skipped:
			r.Wrong = "skipped (" + r.Message + "), and not listed as one that cannot pass here"
		}
		v.Results = append(v.Results, r)
	}
	for i, x := range e.CannotPass {
		switch {
		case used[i] == 0:
			v.Stale = append(v.Stale, x.Spec)
		case used[i] > 1:
			v.Ambiguous = append(v.Ambiguous, fmt.Sprintf("cannotPass names %q, which %d specs' names hold: make it name one alone", x.Spec, used[i]))
		}
	}
	return v
}

// Err is nil when every spec passed or is listed, no listed name is stale,
// and at least one spec ran: a run that selected nothing is no verdict.
func (v Verdict) Err() error {
	var wrong []string
	for _, r := range v.Results {
		if r.Wrong != "" {
			wrong = append(wrong, fmt.Sprintf("%q %s", r.Spec, r.Wrong))
		}
	}
	for _, s := range v.Stale {
		wrong = append(wrong, fmt.Sprintf("cannotPass names %q, which no upstream spec's name holds: drop it or correct it", s))
	}
	wrong = append(wrong, v.Ambiguous...)
	// A pass by chance is no verdict either.
	if !slices.ContainsFunc(v.Results, func(r Result) bool { return r.Outcome == reports.Passed && r.Race == "" }) {
		wrong = append(wrong, "no upstream spec passed: the focus selected none, or none can pass here, which is no verdict")
	}
	if len(wrong) > 0 {
		return fmt.Errorf("upstream e2e: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// Markdown is the verdict as a table people read: each spec, its outcome,
// and the reason of one that cannot pass.
func (v Verdict) Markdown(title string) string {
	var b strings.Builder
	passed, listed, chance := 0, 0, 0
	for _, r := range v.Results {
		switch {
		case r.Wrong != "":
		case r.Race != "":
			chance++
		case r.Reason != "":
			listed++
		default:
			passed++
		}
	}
	fmt.Fprintf(&b, "## %s\n\n%d upstream specs: %d passed, %d cannot pass here (listed, with why), ", title, len(v.Results), passed, listed)
	if chance > 0 {
		fmt.Fprintf(&b, "%d pass or fail by chance (listed, not judged: a spec of ours judges the same fault), ", chance)
	}
	fmt.Fprintf(&b, "%d wrong.", len(v.Results)-passed-listed-chance)
	if len(v.LeftOut) > 0 {
		fmt.Fprintf(&b, " Left out, not run: %d listed as unable to pass here.", len(v.LeftOut))
	}
	b.WriteString("\n\n")
	b.WriteString("| spec | outcome | why |\n|---|---|---|\n")
	for _, r := range v.Results {
		why := r.Reason
		if r.Race != "" {
			why = "by chance, not judged: " + r.Race + " " + r.Reason
		}
		if r.Wrong != "" {
			why = "**" + r.Wrong + "**"
		}
		outcome := string(r.Outcome)
		if r.Outcome == reports.Skipped && r.Message != "" {
			outcome += ": " + r.Message
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(r.Spec), cell(outcome), cell(why))
	}
	for _, s := range v.Stale {
		fmt.Fprintf(&b, "| %s | not run | **listed, but no upstream spec has this name** |\n", cell(s))
	}
	for _, a := range v.Ambiguous {
		fmt.Fprintf(&b, "| | | **%s** |\n", cell(a))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}
