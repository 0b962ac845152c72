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

package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const junitFixture = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4"><testsuite name="CCM conformance" tests="4">
<testcase name="[BeforeSuite]" time="3.5"></testcase>
<testcase name="[It] Nodes labels the zone and region the cloud reports [zone]" time="1.25">
<failure message="node node-1: expected label topology.kubernetes.io/zone=&quot;a&quot;, actual &quot;b&quot;" type="failed">stack and logs</failure></testcase>
<testcase name="[It] Nodes removes the uninitialized taint from every node [node-init]" time="0.1"></testcase>
<testcase name="[It] LoadBalancer data path carries TCP and UDP [datapath]" time="0"><skipped message="skipped - needs real nodes"></skipped></testcase>
</testsuite></testsuites>`

func writeRun(t *testing.T, dir, provider string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"junit_fake-local_01.xml": junitFixture,
		"logs/ccm.log":            "log",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteMetadata(dir, map[string]string{KeyProvider: provider, KeyJobVersion: "fakecloud-ccm@v1.37.2"}); err != nil {
		t.Fatal(err)
	}
}

func TestReadRun(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "fake")
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p, f, s := r.Counts(); p != 1 || f != 1 || s != 1 {
		t.Fatalf("counts %d/%d/%d, want 1 passed, 1 failed, 1 skipped (suite nodes that pass are not specs)", p, f, s)
	}
	for _, c := range r.Cases {
		switch c.Outcome {
		case Failed:
			if !strings.Contains(c.Message, `actual "b"`) || c.Detail != "stack and logs" || len(c.Tags) != 1 || c.Tags[0] != "zone" {
				t.Errorf("failed case %+v", c)
			}
		case Skipped:
			if c.Message != "needs real nodes" {
				t.Errorf("skip reason %q, want it without Ginkgo's prefix", c.Message)
			}
		}
	}
	if _, err := ReadRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no junit") {
		t.Errorf("an empty folder must be refused, got %v", err)
	}
}

func TestRunReportAndGrid(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeRun(t, a, "fake")
	writeRun(t, b, "vsphere")
	page, err := WriteRunReport(a)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(page)
	for _, want := range []string{`class="failed">failed`, "expected label topology.kubernetes.io/zone", "needs real nodes", `href="logs/ccm.log"`, "fakecloud-ccm@v1.37.2", `<span id="failed">1 failed</span>`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("the report must fetch nothing")
	}
	if strings.Contains(string(html), `id="conformance"`) {
		t.Error("a conformance section without a conformance report")
	}
	// With the run's conformance report (package conformance writes it),
	// a row per capability.
	report := "apiVersion: ccm-harness.sigs.k8s.io/v1alpha1\nkind: ConformanceReport\nresult: failure\ncapabilities:\n" +
		"- name: zones\n  claimed: true\n  result: failure\n  statistics: {passed: 0, failed: 1, skipped: 0, notSelected: 0, notClaimed: 0, knownDifferences: 0}\n" +
		"- name: load-balancers\n  claimed: true\n  result: success\n  claimedFeatures: [load-balancer-udp, load-balancer-source-ranges]\n  unclaimedFeatures: [load-balancer-source-ip]\n" +
		"  statistics: {passed: 9, failed: 0, skipped: 0, notSelected: 0, notClaimed: 1, knownDifferences: 0}\n" +
		"- name: routes\n  claimed: false\n  result: not-claimed\n  statistics: {passed: 0, failed: 0, skipped: 0, notSelected: 0, notClaimed: 3, knownDifferences: 0}\n"
	if err := os.WriteFile(filepath.Join(a, "conformance-report.yaml"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRunReport(a); err != nil {
		t.Fatal(err)
	}
	html, _ = os.ReadFile(page)
	for _, want := range []string{
		`Result: <span class="failure">failure</span>`,
		`<tr><td>zones</td><td>true</td><td class="failure">failure</td><td>0</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td></td><td></td></tr>`,
		`<tr><td>load-balancers</td><td>true</td><td class="success">success</td><td>9</td><td>0</td><td>0</td><td>0</td><td>1</td><td>0</td><td>load-balancer-udp, load-balancer-source-ranges</td><td>load-balancer-source-ip</td></tr>`,
		`<tr><td>routes</td><td>false</td><td class="not-claimed">not-claimed</td><td>0</td><td>0</td><td>0</td><td>0</td><td>3</td><td>0</td><td></td><td></td></tr>`,
	} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Each run's latency in its cell, so a regression shows along the row.
	for dir, secs := range map[string]float64{a: 0.128, b: 2.5} {
		if err := WriteMeasurements(dir, []Measurement{{Spec: "Nodes removes the uninitialized taint from every node [node-init]", Name: "initial nodes initialized after registration", Seconds: secs}}); err != nil {
			t.Fatal(err)
		}
	}
	grid := filepath.Join(t.TempDir(), "grid.html")
	if err := WriteGrid(grid, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	g, _ := os.ReadFile(grid)
	if n := strings.Count(string(g), `<td class="failed">failed</td>`); n != 2 {
		t.Errorf("grid has %d failed cells, want one per run", n)
	}
	// A row per capability, from the runs' reports: a's has one, b none.
	if !strings.Contains(string(g), `<tr><td>load-balancers</td><td class="success">success</td><td class=""></td></tr>`) {
		t.Errorf("grid lacks the capabilities' row of the run with a report")
	}
	if !strings.Contains(string(g), "vsphere") {
		t.Error("grid lacks the second run's column")
	}
	for _, want := range []string{`initial nodes initialized after registration: 128ms</div>`, `initial nodes initialized after registration: 2.5s</div>`} {
		if !strings.Contains(string(g), want) {
			t.Errorf("grid lacks %q", want)
		}
	}
}

// The leader-migration scenario leaves leader-migration/timeline.svg (and
// the timeline.json it is drawn from); the report shows them inline in a
// section of their own, linked with their data, and says so where there is
// none.
func TestRunReportLinksLeaderMigrationTimeline(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "fake")
	page, err := WriteRunReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(page)
	if !strings.Contains(string(html), `<p id="timelines">No timeline in this run`) {
		t.Errorf("a run without a timeline must say so in the timeline section:\n%s", html)
	}

	for _, f := range []string{"leader-migration/timeline.svg", "leader-migration/timeline.json", "leader-migration/v1.30-to-v1.31/timeline.svg", "other/timeline.svg"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`<svg id="`+strings.ReplaceAll(f, "/", "-")+`"/>`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := WriteRunReport(dir); err != nil {
		t.Fatal(err)
	}
	html, _ = os.ReadFile(page)
	_, section, _ := strings.Cut(string(html), `<div id="timelines">`)
	section, _, _ = strings.Cut(section, "<h2>")
	for _, want := range []string{
		`<a href="leader-migration/timeline.svg">leader-migration/timeline.svg</a> (<a href="leader-migration/timeline.json">data</a>)`,
		`<a href="leader-migration/v1.30-to-v1.31/timeline.svg">`,
		`<div class="timeline"><svg id="leader-migration-timeline.svg"/></div>`,
		`<div class="timeline"><svg id="leader-migration-v1.30-to-v1.31-timeline.svg"/></div>`,
	} {
		if !strings.Contains(section, want) {
			t.Errorf("timeline section lacks %q:\n%s", want, section)
		}
	}
	if strings.Contains(section, "other/timeline.svg") || strings.Contains(section, "v1.30-to-v1.31/timeline.json") {
		t.Errorf("timeline section links what is not a leader-migration timeline:\n%s", section)
	}
}

// Ginkgo's bare "skipped" marks a spec the filters left out; only a Skip in
// the spec gives a reason. The report counts the specs left out but does
// not list them, so that a filtered run's few results are at the top.
func TestReadRunNotSelected(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junit_01.xml"), []byte(`<testsuites><testsuite>
<testcase name="[It] a route spec [route]"><skipped message="skipped"></skipped></testcase>
<testcase name="[It] b [datapath] needs nodes [datapath]"><skipped message="skipped - needs real nodes"></skipped></testcase>
</testsuite></testsuites>`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cases) != 2 || !r.Cases[0].NotSelected() || r.Cases[1].NotSelected() || r.Cases[1].Message != "needs real nodes" {
		t.Errorf("cases %+v, want the first left out by the filters, the second skipped with its reason", r.Cases)
	}
	if len(r.Cases[1].Tags) != 1 || r.Cases[1].Tags[0] != "datapath" {
		t.Errorf("tags %q, want a label the text repeats once", r.Cases[1].Tags)
	}
	page, err := WriteRunReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(page)
	if strings.Contains(string(html), "a route spec") || !strings.Contains(string(html), `<span id="skipped">1 skipped</span><span id="notselected">1 not selected</span>`) || !strings.Contains(string(html), "needs real nodes") {
		t.Errorf("report of a filtered run:\n%s", html)
	}
}
