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
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/specs"
)

// runDir writes a run's artifacts: metadata claiming capabilities, and
// after a "|" extended features, and a JUnit file of the given test cases.
func runDir(t *testing.T, claims string, cases ...string) string {
	t.Helper()
	dir := t.TempDir()
	md := map[string]string{
		reports.KeyProvider: "aws", reports.KeyCCM: "aws-cloud-controller-manager", reports.KeyCCMVersion: "v1.37.1",
		reports.KeyJobVersion: "aws-cloud-controller-manager@v1.37.1", reports.KeyKubernetesVersion: "v1.37.2",
		reports.KeyCluster: "local", reports.KeySkew: "same minor",
	}
	md[reports.KeyCapabilities], md[reports.KeyFeatures], _ = strings.Cut(claims, "|")
	if err := reports.WriteMetadata(dir, md); err != nil {
		t.Fatal(err)
	}
	junit := `<?xml version="1.0"?><testsuites><testsuite name="ccm">` + strings.Join(cases, "") + `</testsuite></testsuites>`
	if err := os.WriteFile(filepath.Join(dir, "junit_aws-local_01.xml"), []byte(junit), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func passed(id specs.ID) string {
	return `<testcase name="[It] C ` + id.Text() + ` [` + specs.Get(id).Tag + `]" time="1"></testcase>`
}

func failed(id specs.ID, msg string) string {
	return `<testcase name="[It] C ` + id.Text() + `" time="1"><failure message="` + msg + `" type="failed">[FAILED] ` + msg + "\nIn [It] at: x.go:1</failure></testcase>"
}

func skipped(id specs.ID, why string) string {
	return `<testcase name="[It] C ` + id.Text() + `" time="0"><skipped message="skipped - ` + html.EscapeString(why) + `"></skipped></testcase>`
}

func withDifference(id specs.ID, d string) string {
	v, _ := json.Marshal(d)
	return `<testcase name="[It] C ` + id.Text() + `" time="1"><properties><property name="known difference" value="` +
		html.EscapeString(string(v)) + `"></property></properties></testcase>`
}

// TestOf: each capability's verdict follows from its specs, against what
// the profile claims, and the run's from the claimed capabilities'.
func TestOf(t *testing.T) {
	dir := runDir(t, "instances,load-balancers,routes,zones|load-balancer-source-ranges",
		passed(specs.InitTaintRemoved), failed(specs.InstanceTypeLabel, "node node-1: expected m5.large, actual m5.xlarge"),
		passed(specs.ZoneRegionLabels),
		passed(specs.LBProvision), withDifference(specs.LBSourceRanges, "step provision: no ranges (evidence: classic)"),
		skipped(specs.LBUDP, `not claimed: provider aws does not claim the extended feature "load-balancer-udp" of load-balancers`),
		skipped(specs.LBFailedCreation, "provider aws cannot inject cloud faults"),
		skipped(specs.RoutesCreated, ""),
		skipped(specs.LifecycleShutdown, `provider aws does not claim "node-lifecycle"`),
		`<testcase name="[SynchronizedBeforeSuite]" time="1"><failure message="bring-up" type="failed">x</failure></testcase>`,
	)
	if _, err := Write(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Read(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, c := range r.Capabilities {
		got[c.Name] = c.Result
	}
	want := map[string]Result{
		"instances": Failure, "zones": Success, "load-balancers": Partial, "routes": NotRun,
		"node-lifecycle": NotClaimed, "leader-migration": NotRun,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
	if r.Result != Failure || r.Statistics != (Statistics{Passed: 4, Failed: 1, Skipped: 1, NotSelected: 34, NotClaimed: 2, KnownDifferences: 1}) {
		t.Errorf("run: %s %+v", r.Result, r.Statistics)
	}
	lb := r.Capabilities[slices.IndexFunc(r.Capabilities, func(c Capability) bool { return c.Name == "load-balancers" })]
	spec := func(id specs.ID) Spec {
		return lb.Specs[slices.IndexFunc(lb.Specs, func(s Spec) bool { return s.ID == id })]
	}
	if sr := spec(specs.LBSourceRanges); sr.Result != SpecPassed || len(sr.KnownDifferences) != 1 || !strings.Contains(sr.KnownDifferences[0], "evidence: classic") {
		t.Errorf("a spec passed with a known difference: %+v", sr)
	}
	// An extended feature the profile does not claim: not claimed, not
	// a skip, and no gap in the load balancers' result.
	if udp := spec(specs.LBUDP); udp.Result != SpecNotClaimed || udp.Level != specs.Extended || udp.Feature != specs.LoadBalancerUDP {
		t.Errorf("a spec of an unclaimed feature: %+v", udp)
	}
	if p := spec(specs.LBProvision); p.Level != specs.Core || p.Feature != "" {
		t.Errorf("a core spec: %+v", p)
	}
	lbFeatures := 0
	for _, c := range specs.Features {
		if c == specs.LoadBalancers {
			lbFeatures++
		}
	}
	if !slices.Equal(lb.ClaimedFeatures, []specs.Feature{specs.LoadBalancerSourceRanges}) || len(lb.UnclaimedFeatures) != lbFeatures-1 {
		t.Errorf("load balancers' features: claimed %v, not %v", lb.ClaimedFeatures, lb.UnclaimedFeatures)
	}
	if r.Implementation.Version != "v1.37.1" || r.KubernetesVersion != "v1.37.2" || r.Cluster != "local" {
		t.Errorf("implementation and cluster: %+v %s %s", r.Implementation, r.KubernetesVersion, r.Cluster)
	}
	if line := Line(r, "x.yaml"); line != "conformance: failure (instances failure, zones success, load-balancers partial, routes not-run): x.yaml" {
		t.Errorf("line: %s", line)
	}
	path := filepath.Join(dir, File)
	if err := validate(t, path); err != nil {
		t.Errorf("%s does not validate against schema.json: %v", path, err)
	}
	if err := Check(dir); err != nil {
		t.Errorf("the report as written: %v", err)
	}
	// The schema can fail: a verdict it does not know.
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(data, []byte("result: failure"), []byte("result: great"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, path); err == nil || !strings.Contains(err.Error(), "/result': value must be one of") {
		t.Errorf("a report with result: great validated (%v)", err)
	}
	// A report edited by hand is caught against its run's JUnit.
	if err := os.WriteFile(path, bytes.Replace(data, []byte("failed: 1"), []byte("failed: 0"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), `says "failed: 0", the run "failed: 1"`) {
		t.Errorf("a report edited by hand: %v", err)
	}

	// Every claimed capability's specs ran and passed.
	dir = runDir(t, "zones", passed(specs.ZoneRegionLabels), skipped(specs.LBUDP, `provider p does not claim "load-balancers"`))
	if r, err := Write(dir); err != nil || r.Result != Success {
		t.Errorf("a run of every spec of its one claim: %v %v", r.Result, err)
	}
	// A claimed feature's spec that skipped is a gap; one of an
	// unclaimed feature is not.
	dir = runDir(t, "load-balancers|load-balancer-udp", passed(specs.LBProvision),
		skipped(specs.LBUDP, "no inspector"), skipped(specs.LBMixedProtocol, "not claimed"))
	if r, err := Write(dir); err != nil || r.Capabilities[slices.IndexFunc(r.Capabilities, func(c Capability) bool { return c.Name == "load-balancers" })].Result != Partial {
		t.Errorf("a claimed feature's spec skipped: %v %v", r.Capabilities, err)
	}
	dir = runDir(t, "load-balancers|load-balancer-udp", passed(specs.LBProvision), passed(specs.LBUDP),
		skipped(specs.LBMixedProtocol, "not claimed"))
	if r, err := Write(dir); err != nil || r.Result != Partial || r.Capabilities[slices.IndexFunc(r.Capabilities, func(c Capability) bool { return c.Name == "load-balancers" })].Statistics.NotClaimed != 1 {
		t.Errorf("an unclaimed feature's spec: %s %+v %v", r.Result, r.Statistics, err)
	}
	// Nothing passed: no verdict, whatever failed not.
	dir = runDir(t, "zones", skipped(specs.ZoneRegionLabels, "no inspector"))
	if r, err := Write(dir); err != nil || r.Result != NotRun {
		t.Errorf("a run where nothing passed: %v %v", r.Result, err)
	}
}

// validate checks a written report against schema.json.
func validate(t *testing.T, path string) error {
	t.Helper()
	return Validate(path)
}

// TestSchemaNames: the schema's capability names are the suite's, so
// that it cannot drift from specs.
func TestSchemaNames(t *testing.T) {
	data, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs struct {
			Capability struct {
				Properties struct {
					Name struct{ Enum []string }
				}
			}
			Feature struct{ Enum []string }
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range specs.Capabilities {
		want = append(want, string(c))
	}
	want = append(want, leaderMigration)
	if got := s.Defs.Capability.Properties.Name.Enum; !slices.Equal(got, want) {
		t.Errorf("schema.json's capability names %v, want %v", got, want)
	}
	var features []string
	for _, f := range specs.FeatureList() {
		features = append(features, string(f))
	}
	if got := s.Defs.Feature.Enum; !slices.Equal(got, features) {
		t.Errorf("schema.json's features %v, want %v", got, features)
	}
}

// TestSameResults: two runs of one CCM agree when their verdicts and each
// spec's result do, whatever their dates and messages; a spec that ended
// otherwise is named.
func TestSameResults(t *testing.T) {
	run := func(zone string) *Report {
		dir := runDir(t, "zones,instances", passed(specs.InitTaintRemoved), zone)
		r, err := Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(passed(specs.ZoneRegionLabels)), run(passed(specs.ZoneRegionLabels))
	b.Date, b.HarnessVersion, b.Implementation.Source = "2027-01-01T00:00:00Z", "other", "elsewhere"
	if err := SameResults(a, b); err != nil {
		t.Errorf("two runs alike: %v", err)
	}
	c := run(failed(specs.ZoneRegionLabels, "node node-1: expected a, actual b"))
	if err := SameResults(a, c); err == nil || !strings.Contains(err.Error(), "result partial, against failure") {
		t.Errorf("a run whose zone spec failed: %v", err)
	}
	c.Result = a.Result
	if err := SameResults(a, c); err == nil || !strings.Contains(err.Error(), `zone/labels: "passed, 0 known differences", against "failed, 0 known differences"`) && !strings.Contains(err.Error(), "zones: ") {
		t.Errorf("a spec that ended otherwise: %v", err)
	}
}

// TestCombinedAndNarrowed: a run that left the CCM upgrade out, completed
// by the upgrade's own run, reports what one run of both would; a
// published report narrowed to what that run selected agrees with it, and
// names the spec left out; runs of different CCMs do not combine.
func TestCombinedAndNarrowed(t *testing.T) {
	run := func(cases ...string) *Report {
		r, err := Write(runDir(t, "zones,instances", cases...))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	main := run(passed(specs.InitTaintRemoved), passed(specs.ZoneRegionLabels))
	full := run(passed(specs.InitTaintRemoved), passed(specs.ZoneRegionLabels), passed(specs.UpgradeCCM))
	if err := SameResults(full, main); err == nil {
		t.Fatal("a run without the upgrade agrees with one with it")
	}
	both, err := Combined(main, run(passed(specs.UpgradeCCM)))
	if err != nil {
		t.Fatal(err)
	}
	if err := SameResults(full, both); err != nil {
		t.Errorf("combined with the upgrade's run: %v", err)
	}
	broken, err := Combined(main, run(failed(specs.UpgradeCCM, "expected service-lb-controller run by x, actual: not")))
	if err != nil {
		t.Fatal(err)
	}
	if err := SameResults(full, broken); err == nil || broken.Result != Failure {
		t.Errorf("combined with a failed upgrade: %s, %v", broken.Result, err)
	}
	narrowed, left := Narrowed(full, main)
	if err := SameResults(narrowed, main); err != nil || !slices.Equal(left, []specs.ID{specs.UpgradeCCM}) {
		t.Errorf("narrowed to the run's specs: %v, left %v", err, left)
	}
	if _, left := Narrowed(full, full); len(left) != 0 {
		t.Errorf("narrowed to a run of every spec: left %v", left)
	}
	other := run(passed(specs.UpgradeCCM))
	other.KubernetesVersion = "v1.36.3"
	if _, err := Combined(main, other); err == nil || !strings.Contains(err.Error(), "Kubernetes v1.37.2 on a local cluster, against v1.36.3") {
		t.Errorf("runs on other releases combined: %v", err)
	}
}
