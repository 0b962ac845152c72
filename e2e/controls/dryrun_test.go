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

package controls

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/scenarios"
	"sigs.k8s.io/ccm-harness/scenarios/labels"
	"sigs.k8s.io/ccm-harness/specs"
)

// TestDryRunMatchesRealRun compares each dry run (make e2e-dry-run, and the
// one make e2e-existing makes first) with the real run of the same
// provider and runtime: a spec the dry run says would run must have run,
// and one it says is skipped must have been skipped for the same reason.
func TestDryRunMatchesRealRun(t *testing.T) {
	dir := os.Getenv("ARTIFACTS")
	for _, pair := range []struct{ real, dry string }{
		{dir, filepath.Join(dir, "dry-run")},
		{filepath.Join(dir, "existing"), filepath.Join(dir, "existing", "dry-run")},
	} {
		t.Run(filepath.Base(pair.dry)+" of "+pair.real, func(t *testing.T) {
			if _, err := os.Stat(pair.dry); dir == "" || err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("no dry run in %s: make test runs make e2e-dry-run and e2e-existing before the controls", pair.dry)
				}
				t.Skipf("no dry run in %s", pair.dry)
			}
			real, err := reports.ReadRun(pair.real)
			if err != nil {
				t.Fatal(err)
			}
			dry, err := reports.ReadRun(pair.dry)
			if err != nil {
				t.Fatal(err)
			}
			planned := map[string]reports.Case{}
			for _, c := range dry.Cases {
				planned[c.Name] = c
			}
			compared := 0
			for _, c := range real.Cases {
				if c.NotSelected() {
					continue
				}
				p, ok := planned[c.Name]
				switch {
				case !ok:
					t.Errorf("%s: ran, but the dry run does not list it", c.Name)
				case c.Outcome == reports.Skipped && p.Message != c.Message:
					t.Errorf("%s: skipped with %q, the dry run said %q", c.Name, c.Message, p.Message)
				case c.Outcome != reports.Skipped && !strings.HasPrefix(p.Message, scenarios.DryRunWouldRun):
					t.Errorf("%s: %s, the dry run said %q", c.Name, c.Outcome, p.Message)
				}
				compared++
			}
			if compared == 0 {
				t.Errorf("no spec compared between %s and %s", pair.real, pair.dry)
			}
			t.Logf("%d specs: the dry run said what the real run did", compared)
		})
	}
}

// TestSerialMatchesParallel compares make e2e's run, whose specs ran in
// parallel processes, with make e2e-serial's of the same suite in one
// process: every spec must end alike, skipped for the same reason, with
// the same known differences; and the parallel run must really have been
// one. make e2e-serial leaves out the leader-migration specs alone: each
// brings up HA control planes of its own and shares nothing with the
// others, so one process would check nothing of them that make e2e's run
// has not, and they are the suite's most CPU.
func TestSerialMatchesParallel(t *testing.T) {
	parallel, serial := runAndSibling(t, "serial", "make e2e-serial")
	if n := parallel.Metadata[reports.KeyParallel]; n == "" {
		t.Errorf("%s: the run says no %s in its metadata: it ran in one process", parallel.Dir, reports.KeyParallel)
	}
	if n := serial.Metadata[reports.KeyParallel]; n != "" {
		t.Errorf("%s: the serial run says %s=%s", serial.Dir, reports.KeyParallel, n)
	}
	ended := map[string]reports.Case{}
	for _, c := range serial.Cases {
		ended[c.Name] = c
	}
	compared, migration := 0, 0
	for _, c := range parallel.Cases {
		s, ok := ended[c.Name]
		delete(ended, c.Name)
		switch {
		case ok && s.NotSelected() && !c.NotSelected() && slices.Contains(c.Tags, labels.LeaderMigration):
			migration++
			continue
		case !ok:
			t.Errorf("%s: in the parallel run, not in the serial one", c.Name)
		case c.Outcome != s.Outcome:
			t.Errorf("%s: %s in parallel (%s), %s in one process (%s)", c.Name, c.Outcome, firstLine(c.Message), s.Outcome, firstLine(s.Message))
		case c.Outcome == reports.Skipped && c.Message != s.Message:
			t.Errorf("%s: skipped in parallel with %q, in one process with %q", c.Name, c.Message, s.Message)
		case len(c.KnownDifferences) != len(s.KnownDifferences):
			t.Errorf("%s: %d known differences in parallel, %d in one process", c.Name, len(c.KnownDifferences), len(s.KnownDifferences))
		}
		compared++
	}
	for name := range ended {
		t.Errorf("%s: in the serial run, not in the parallel one", name)
	}
	if compared == 0 {
		t.Errorf("no spec compared between %s and %s", parallel.Dir, serial.Dir)
	}
	if !t.Failed() {
		t.Logf("%d specs: the parallel run (%s processes) ended as the serial one (%d leader-migration specs not compared)", compared, parallel.Metadata[reports.KeyParallel], migration)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// TestMigrationSelected checks labels.MigrationSelected, by which
// `ccm-harness binaries` decides to build release N's managers, against
// Ginkgo's own dry run of the suite: for each filter, it must say yes
// exactly when the suite would run a leader-migration spec.
func TestMigrationSelected(t *testing.T) {
	suite := e2eBinary(t)
	for _, filter := range []string{"", "zone", "leader-migration", "!leader-migration", "upgrade", "downgrade || zone",
		"needs-older-ccm", "loadbalancer && !datapath", "leader-migration && !upgrade && !downgrade"} {
		suiteSays := false
		for _, s := range dryRunSpecs(t, suite, filter) {
			all := s.LeafNodeLabels
			for _, l := range s.ContainerHierarchyLabels {
				all = append(all, l...)
			}
			if s.LeafNodeType == "It" && s.State == "passed" && slices.Contains(all, labels.LeaderMigration) {
				suiteSays = true
			}
		}
		if got, err := labels.MigrationSelected(filter); err != nil || got != suiteSays {
			t.Errorf("filter %q: MigrationSelected says %v (%v), the suite's dry run runs a leader-migration spec: %v", filter, got, err, suiteSays)
		}
	}
}

// uncontrolled are the specs no negative control fails yet, each with
// why: every other spec of the suite must be failed by a control of this
// package (a spec no control fails may pass against a broken CCM).
var uncontrolled = map[specs.ID]string{}

// onlyExhaustive are the specs only controls make test leaves to make
// controls-all fail, each with why: make test's controls fail every other
// spec the controls fail.
var onlyExhaustive = map[specs.ID]string{
	// One kind cluster of controls in make test (the one whose specs
	// users report broken: health checks, source IP, affinity, rolling
	// updates); the one that drops backends and routes is a second.
	specs.DatapathTCPUDP: "its control, a kind cluster, is the second of the data path's",
	specs.RoutesDatapath: "its control, a kind cluster, is the second of the data path's",
}

// TestEverySpecHasAControl lists the suite's specs (Ginkgo's dry run)
// and fails for each that no control fails and uncontrolled does not
// explain, and for each entry of uncontrolled that a control now covers.
// The suite declares every spec of specs.All, and nothing else.
func TestEverySpecHasAControl(t *testing.T) {
	suite := e2eBinary(t)
	controlled, inMakeTest := map[specs.ID]bool{}, map[specs.ID]bool{}
	for _, c := range append(controls, migrationControls...) {
		for id := range c.fail {
			controlled[id] = true
			inMakeTest[id] = inMakeTest[id] || !c.exhaustive
		}
	}
	for id := range controlled {
		_, listed := onlyExhaustive[id]
		switch {
		case !inMakeTest[id] && !listed:
			t.Errorf("%s: only controls make test leaves out (exhaustive) fail it; run one in make test, or say why in onlyExhaustive", id)
		case inMakeTest[id] && listed:
			t.Errorf("%s: a control of make test fails it now; remove it from onlyExhaustive", id)
		}
	}
	for id := range onlyExhaustive {
		if !controlled[id] {
			t.Errorf("%s: in onlyExhaustive, but no control fails it", id)
		}
	}
	declared := map[specs.ID]bool{}
	for _, s := range dryRunSpecs(t, suite, "") {
		if s.LeafNodeType != "It" {
			continue
		}
		spec, ok := specs.ByText(specs.Untagged(s.LeafNodeText))
		if !ok {
			t.Errorf("%q: the suite declares a spec specs.All does not have", s.LeafNodeText)
			continue
		}
		declared[spec.ID] = true
		_, explained := uncontrolled[spec.ID]
		switch {
		case controlled[spec.ID] && explained:
			t.Errorf("%s (%s): a control fails it now; remove it from uncontrolled", spec.Text, spec.ID)
		case !controlled[spec.ID] && !explained:
			t.Errorf("%s (%s): no negative control fails it; add one (a fault of the cloud, a broken CCM option) to controls", spec.Text, spec.ID)
		}
	}
	if len(declared) == 0 {
		t.Fatal("the dry run listed no spec")
	}
	for _, s := range specs.All {
		if !declared[s.ID] {
			t.Errorf("%s (%q): in specs.All, but the suite does not declare it", s.ID, s.Text)
		}
	}
}

// dryRunSpec is what Ginkgo's JSON report says of one spec.
type dryRunSpec struct {
	State                    string
	LeafNodeType             string
	LeafNodeText             string
	ContainerHierarchyLabels [][]string
	LeafNodeLabels           []string
}

// dryRunSpecs are the suite's specs as Ginkgo's own dry run of filter
// reports them, the selected ones passed. A filter that selects nothing
// fails the run, saying so; its report still lists every spec.
func dryRunSpecs(t *testing.T, suite, filter string) []dryRunSpec {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(suite, "--ginkgo.dry-run", "--ginkgo.label-filter="+filter, "--ginkgo.json-report="+report,
		"--provider=fake", "--artifacts="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "FAILED: no spec selected: the label filter") {
		t.Fatalf("dry run of %q: %v\n%s", filter, err, out)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var reports []struct{ SpecReports []dryRunSpec }
	if err := json.Unmarshal(data, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("report of %q: %v", filter, err)
	}
	return reports[0].SpecReports
}
