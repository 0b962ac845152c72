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

package testgridjunit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/GoogleCloudPlatform/testgrid/metadata/junit"
)

// reports/testdata/junit_folded.xml is what the suite's JUnit looks like
// after reports.FoldExcerpts moved a failed spec's log excerpt into its
// failure body; reports' tests keep it equal to what FoldExcerpts writes.
var folded = filepath.Join("..", "..", "reports", "testdata", "junit_folded.xml")

func TestTestgridParsesFoldedJUnit(t *testing.T) {
	data, err := os.ReadFile(folded)
	if err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Parse(data)
	if err != nil {
		t.Fatalf("testgrid cannot parse %s: %v", folded, err)
	}
	if len(suites.Suites) != 1 || len(suites.Suites[0].Results) != 3 {
		t.Fatalf("testgrid sees %+v, want one suite of three testcases", suites)
	}
	byTag := map[string]junit.Result{}
	for _, r := range suites.Suites[0].Results {
		for _, tag := range []string{"[zone]", "[datapath]", "[node-init]"} {
			if strings.HasSuffix(r.Name, tag) {
				byTag[tag] = r
			}
		}
	}

	failed := byTag["[zone]"]
	if failed.Failure == nil || failed.Skipped != nil {
		t.Fatalf("testgrid does not see [zone] as failed: %+v", failed)
	}
	// What testgrid shows as the cell's message: the failure, then the logs.
	msg := failed.Message(0)
	for _, want := range []string{
		`[FAILED] node node-1: expected label topology.kubernetes.io/zone="fake-region-1a" (the cloud's zone), actual "fake-region-9z"`,
		"\n--- e2e-abc/cloud-controller-manager.log\nI1121 08:54:29 node_controller.go:1] Successfully initialized node node-1",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("testgrid's message for the failure lacks %q:\n%s", want, msg)
		}
	}
	if strings.Index(msg, "[FAILED]") != 0 {
		t.Errorf("testgrid's message must begin with the failure, so its first line is the cell's summary:\n%s", msg)
	}

	skipped := byTag["[datapath]"]
	if skipped.Skipped == nil || skipped.Failure != nil || skipped.Message(0) != "skipped - needs real nodes" {
		t.Errorf("testgrid sees the skipped spec as %+v (message %q), want skipped with its reason", skipped, skipped.Message(0))
	}
	passed := byTag["[node-init]"]
	if passed.Failure != nil || passed.Skipped != nil || passed.Errored != nil {
		t.Errorf("testgrid does not see [node-init] as passed: %+v", passed)
	}
}
