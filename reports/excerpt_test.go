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
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

func appendLines(t *testing.T, path, prefix string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i <= to; i++ {
		fmt.Fprintf(f, "%s line %d\n", prefix, i)
	}
}

func TestLogMarksExcerpt(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	dir := filepath.Join(logs, "e2e-abc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ccm, audit, etcd := filepath.Join(dir, "cloud-controller-manager.log"), filepath.Join(dir, "fakecloud-audit.jsonl"), filepath.Join(dir, "etcd.log")
	appendLines(t, ccm, "ccm", 1, 10)
	appendLines(t, audit, "audit", 1, 3)
	appendLines(t, etcd, "etcd", 1, 3)
	marks := MarkLogs(logs, func(name string) bool { return name != "etcd.log" })

	appendLines(t, ccm, "ccm", 11, 60)
	appendLines(t, etcd, "etcd", 4, 9)
	appendLines(t, filepath.Join(dir, "vcsim.log"), "vcsim", 1, 2)
	if err := os.WriteFile(filepath.Join(dir, "long.log"), []byte(strings.Repeat("x", 5000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cluster the spec brought up for itself.
	other := filepath.Join(logs, "e2e-def")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	appendLines(t, filepath.Join(other, "cloud-controller-manager.log"), "other ccm", 1, 2)
	appendLines(t, filepath.Join(other, "etcd.log"), "other etcd", 1, 2)

	got := marks.Excerpt(30)
	for _, want := range []string{
		"under logs",
		"--- e2e-abc/cloud-controller-manager.log\nccm line 31\n",
		"ccm line 60",
		"--- e2e-abc/fakecloud-audit.jsonl: nothing",
		"--- e2e-abc/vcsim.log\nvcsim line 1\nvcsim line 2",
		"--- e2e-def/cloud-controller-manager.log\nother ccm line 1\nother ccm line 2\n",
		strings.Repeat("x", maxExcerptLine) + " [...]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"ccm line 30\n", "ccm line 10\n", "audit line", "etcd", strings.Repeat("x", maxExcerptLine+1)} {
		if strings.Contains(got, unwanted) {
			t.Errorf("excerpt holds %q, written before the mark, beyond the last lines, or from a file left out:\n%s", unwanted, got)
		}
	}
}

// A log longer than the window is read from its end only, and the line the
// window cuts in two is left out.
func TestExcerptOfAHugeLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ccm.log")
	marks := MarkLogs(dir, nil)
	appendLines(t, path, strings.Repeat("y", 90), 1, 2*tailWindow/100)
	got := marks.Excerpt(3)
	n := 2 * tailWindow / 100
	if !strings.Contains(got, fmt.Sprintf("line %d\n", n)) || strings.Count(got, " line ") != 3 {
		t.Errorf("excerpt of a huge log:\n%s", got)
	}
}

// goldenReport is what the suite's JUnit holds for a failed spec with its
// excerpt, a skipped and a passed spec, written by Ginkgo with the e2e
// framework's settings (k8s.io/kubernetes/test/e2e/framework/internal/junit).
func goldenReport() types.Report {
	at := time.Date(2026, 11, 21, 8, 54, 28, 0, time.UTC)
	spec := func(text string, state types.SpecState) types.SpecReport {
		return types.SpecReport{
			ContainerHierarchyTexts: []string{"Nodes"},
			LeafNodeType:            types.NodeTypeIt,
			LeafNodeText:            text,
			State:                   state,
			StartTime:               at,
			EndTime:                 at.Add(1250 * time.Millisecond),
			RunTime:                 1250 * time.Millisecond,
		}
	}
	failed := spec("labels the zone and region the cloud reports [zone]", types.SpecStateFailed)
	failed.Failure = types.Failure{
		Message:         `node node-1: expected label topology.kubernetes.io/zone="fake-region-1a" (the cloud's zone), actual "fake-region-9z"`,
		Location:        types.CodeLocation{FileName: "/src/scenarios/nodes.go", LineNumber: 130},
		FailureNodeType: types.NodeTypeIt,
		TimelineLocation: types.TimelineLocation{
			Time: at.Add(time.Second),
		},
	}
	failed.ReportEntries = types.ReportEntries{
		{Name: "latency", Value: types.WrapEntryValue("1.2s"), Time: at},
		{Name: ExcerptEntry, Value: types.WrapEntryValue(Excerpt("Logs written while the spec ran (last 30 lines of each, under logs):\n--- e2e-abc/cloud-controller-manager.log\nI1121 08:54:29 node_controller.go:1] Successfully initialized node node-1 with cloud provider\n--- e2e-abc/fakecloud-audit.jsonl: nothing\n")), Time: at},
	}
	skipped := spec("carries TCP and UDP from the ingress IP to a backend pod [datapath]", types.SpecStateSkipped)
	skipped.Failure = types.Failure{Message: "needs real nodes"}
	passed := spec("removes the uninitialized taint from every node [node-init]", types.SpecStatePassed)
	passed.ReportEntries = types.ReportEntries{{Name: "latency", Value: types.WrapEntryValue("3.1s"), Time: at}}
	return types.Report{
		SuiteDescription: "CCM conformance",
		SuitePath:        "/src",
		StartTime:        at,
		RunTime:          4 * time.Second,
		SpecReports:      types.SpecReports{failed, skipped, passed},
	}
}

// frameworkJUnitConfig is the e2e framework's, which the suite uses.
var frameworkJUnitConfig = reporters.JunitReportConfig{
	OmitTimelinesForSpecState: types.SpecStatePassed | types.SpecStateSkipped,
	OmitFailureMessageAttr:    true,
	OmitSpecLabels:            true,
}

// The folded file is also checked with testgrid's own JUnit parser
// (jobs/testgridjunit), from testdata/junit_folded.xml, which this test
// keeps equal to what FoldExcerpts writes: UPDATE_GOLDEN=1 rewrites it.
func TestFoldExcerpts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit_fake-local_01.xml")
	if err := reporters.GenerateJUnitReportWithConfig(goldenReport(), path, frameworkJUnitConfig); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if !strings.Contains(string(before), "(in the JUnit failure body)") {
		t.Errorf("the excerpt's timeline entry is not the short note:\n%s", before)
	}
	n, err := FoldExcerpts(dir)
	if err != nil || n != 1 {
		t.Fatalf("FoldExcerpts = %d, %v; want 1 testcase changed", n, err)
	}
	after, _ := os.ReadFile(path)

	var doc reporters.JUnitTestSuites
	if err := xml.Unmarshal(after, &doc); err != nil {
		t.Fatal(err)
	}
	cases := doc.TestSuites[0].TestCases
	if len(cases) != 3 || doc.Tests != 3 || doc.TestSuites[0].Failures != 1 || doc.TestSuites[0].Skipped != 1 {
		t.Fatalf("counts changed: %+v", doc)
	}
	for _, tc := range cases {
		switch {
		case tc.Failure != nil:
			body := tc.Failure.Description
			for _, want := range []string{`[FAILED] node node-1: expected label topology.kubernetes.io/zone="fake-region-1a"`, "/src/scenarios/nodes.go:130", "\n--- e2e-abc/cloud-controller-manager.log\nI1121 08:54:29 node_controller.go:1] Successfully initialized node node-1", "--- e2e-abc/fakecloud-audit.jsonl: nothing"} {
				if !strings.Contains(body, want) {
					t.Errorf("failure body lacks %q:\n%s", want, body)
				}
			}
			if strings.Index(body, "[FAILED]") > strings.Index(body, "Logs written") {
				t.Errorf("the excerpt must follow the failure:\n%s", body)
			}
			if tc.Properties == nil || len(tc.Properties.Properties) != 1 || tc.Properties.Properties[0].Name != "latency" {
				t.Errorf("the excerpt must leave the properties, the other entries stay: %+v", tc.Properties)
			}
		case tc.Skipped != nil:
			if tc.Skipped.Message != "skipped - needs real nodes" {
				t.Errorf("skip message %q", tc.Skipped.Message)
			}
		default:
			if tc.Properties == nil || tc.Properties.Properties[0].Value != `"3.1s"` {
				t.Errorf("passed spec's entries changed: %+v", tc.Properties)
			}
		}
	}

	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Cases {
		if c.Outcome == Failed && (c.Message != `node node-1: expected label topology.kubernetes.io/zone="fake-region-1a" (the cloud's zone), actual "fake-region-9z"` || !strings.Contains(c.Detail, "Successfully initialized")) {
			t.Errorf("ReadRun of a folded file: message %q, detail %q", c.Message, c.Detail)
		}
	}

	if n, err := FoldExcerpts(dir); err != nil || n != 0 {
		t.Errorf("a second fold changed %d testcases (%v); folding must be done once", n, err)
	}

	golden := filepath.Join("testdata", "junit_folded.xml")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, after, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != string(after) {
		t.Errorf("%s differs from what FoldExcerpts writes (%v); rerun with UPDATE_GOLDEN=1 and check the diff", golden, err)
	}
}

func TestFoldExcerptsBadFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "junit_x_01.xml"), []byte("<testsuites><testsuite"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FoldExcerpts(dir); err == nil || !strings.Contains(err.Error(), "junit_x_01.xml") {
		t.Errorf("a broken JUnit file must be named, got %v", err)
	}
}
