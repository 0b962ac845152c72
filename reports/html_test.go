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
	if err := WriteMetadata(dir, map[string]string{KeyProvider: provider, KeyJobVersion: "fakecloud-ccm@v1.36.3"}); err != nil {
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
	for _, want := range []string{`class="failed">failed`, "expected label topology.kubernetes.io/zone", "needs real nodes", `href="logs/ccm.log"`, "fakecloud-ccm@v1.36.3", `<span id="failed">1 failed</span>`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("the report must fetch nothing")
	}
	grid := filepath.Join(t.TempDir(), "grid.html")
	if err := WriteGrid(grid, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	g, _ := os.ReadFile(grid)
	if n := strings.Count(string(g), `<td class="failed">failed</td>`); n != 2 {
		t.Errorf("grid has %d failed cells, want one per run", n)
	}
	if !strings.Contains(string(g), "vsphere") {
		t.Error("grid lacks the second run's column")
	}
}
